"""ContinuousBernoulli(probs or logits): the continuous relaxation of a Bernoulli on [0, 1]
(Loaiza-Ganem and Cunningham, 2019)."""
import math
from numbers import Number

import leafgrad as lg
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _check_probs_or_logits, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['ContinuousBernoulli']


class ContinuousBernoulli(ExponentialFamily):
    """The density proportional to probs^x (1 - probs)^(1 - x) on [0, 1]. Its normalizer and
    moments are singular at probs = 1/2: inside ``lims`` they are taken from Taylor
    expansions around 1/2.

    >>> ContinuousBernoulli(leafgrad.tensor(0.5)).mean
    tensor(0.5000)
    """
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _check_probs_or_logits(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # (checked here, before the clamp hides an invalid value)
            if validate_args is not None and not self.arg_constraints['probs'].check(self.probs).all():
                raise ValueError('The parameter probs has invalid values')
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(lg.Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        return self._expanded(ContinuousBernoulli, new, batch_shape, _lims=self._lims,
                              **self._expanded_probs_or_logits(lg.Size(batch_shape)))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return lg.max(lg.le(self.probs, self._lims[0]), lg.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return lg.where(self._outside_unstable_region(), self.probs, self._lims[0] * lg.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(probs), C = 2 artanh(1 - 2 p) / (1 - 2 p)."""
        cut_probs = self._cut_probs()
        below_half = lg.where(lg.le(cut_probs, 0.5), cut_probs, lg.zeros_like(cut_probs))
        above_half = lg.where(lg.ge(cut_probs, 0.5), cut_probs, lg.ones_like(cut_probs))
        log_norm = lg.log(lg.abs(lg.log1p(-cut_probs) - lg.log(cut_probs))) - lg.where(
            lg.le(cut_probs, 0.5), lg.log1p(-2.0 * below_half), lg.log(2.0 * above_half - 1.0))
        x = lg.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return lg.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (lg.log1p(-cut_probs) - lg.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * lg.pow(x, 2)) * x
        return lg.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return lg.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / lg.pow(1.0 - 2.0 * cut_probs, 2)
                     + 1.0 / lg.pow(lg.log1p(-cut_probs) - lg.log(cut_probs), 2))
        x = lg.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return lg.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=lg.Size()):
        shape = self._extended_shape(sample_shape)
        u = lg.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with lg.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=lg.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(lg.rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = lg.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction='none')
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((lg.pow(cut_probs, value) * lg.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = lg.where(self._outside_unstable_region(), cdfs, value)
        return lg.where(lg.le(value, 0.0), lg.zeros_like(value),
                        lg.where(lg.ge(value, 1.0), lg.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        inverse = ((lg.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - lg.log1p(-cut_probs))
                   / (lg.log(cut_probs) - lg.log1p(-cut_probs)))
        return lg.where(self._outside_unstable_region(), inverse, value)

    def entropy(self):
        log_probs0 = lg.log1p(-self.probs)
        log_probs1 = lg.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        out_unst_reg = lg.max(lg.le(x, self._lims[0] - 0.5), lg.gt(x, self._lims[1] - 0.5))
        cut_nat_params = lg.where(out_unst_reg, x, (self._lims[0] - 0.5) * lg.ones_like(x))
        log_norm = lg.log(lg.abs(lg.special.expm1(cut_nat_params))) - lg.log(lg.abs(cut_nat_params))
        taylor = 0.5 * x + lg.pow(x, 2) / 24.0 - lg.pow(x, 4) / 2880.0
        return lg.where(out_unst_reg, log_norm, taylor)
