"""ContinuousBernoulli(probs or logits): the continuous relaxation of a Bernoulli on [0, 1]
(Loaiza-Ganem and Cunningham, 2019)."""
import math
from numbers import Number

from .. import creation, ops, special
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..tensor import Size
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
        super().__init__(Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        return self._expanded(ContinuousBernoulli, new, batch_shape, _lims=self._lims,
                              **self._expanded_probs_or_logits(Size(batch_shape)))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return ops.max(ops.le(self.probs, self._lims[0]), ops.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return ops.where(self._outside_unstable_region(), self.probs, self._lims[0] * creation.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(probs), C = 2 artanh(1 - 2 p) / (1 - 2 p)."""
        cut_probs = self._cut_probs()
        below_half = ops.where(ops.le(cut_probs, 0.5), cut_probs, creation.zeros_like(cut_probs))
        above_half = ops.where(ops.ge(cut_probs, 0.5), cut_probs, creation.ones_like(cut_probs))
        log_norm = ops.log(ops.abs(ops.log1p(-cut_probs) - ops.log(cut_probs))) - ops.where(
            ops.le(cut_probs, 0.5), ops.log1p(-2.0 * below_half), ops.log(2.0 * above_half - 1.0))
        x = ops.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (ops.log1p(-cut_probs) - ops.log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * ops.pow(x, 2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return ops.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / ops.pow(1.0 - 2.0 * cut_probs, 2)
                     + 1.0 / ops.pow(ops.log1p(-cut_probs) - ops.log(cut_probs), 2))
        x = ops.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = creation.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(creation.rand(shape, dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = F.binary_cross_entropy_with_logits(logits, value, reduction='none')
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((ops.pow(cut_probs, value) * ops.pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = ops.where(self._outside_unstable_region(), cdfs, value)
        return ops.where(ops.le(value, 0.0), creation.zeros_like(value),
                        ops.where(ops.ge(value, 1.0), creation.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        inverse = ((ops.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - ops.log1p(-cut_probs))
                   / (ops.log(cut_probs) - ops.log1p(-cut_probs)))
        return ops.where(self._outside_unstable_region(), inverse, value)

    def entropy(self):
        log_probs0 = ops.log1p(-self.probs)
        log_probs1 = ops.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        out_unst_reg = ops.max(ops.le(x, self._lims[0] - 0.5), ops.gt(x, self._lims[1] - 0.5))
        cut_nat_params = ops.where(out_unst_reg, x, (self._lims[0] - 0.5) * creation.ones_like(x))
        log_norm = ops.log(ops.abs(special.expm1(cut_nat_params))) - ops.log(ops.abs(cut_nat_params))
        taylor = 0.5 * x + ops.pow(x, 2) / 24.0 - ops.pow(x, 4) / 2880.0
        return ops.where(out_unst_reg, log_norm, taylor)
