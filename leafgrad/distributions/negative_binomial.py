"""NegativeBinomial(total_count, probs or logits): the number of successes before total_count
failures."""
from .. import ops
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _check_probs_or_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['NegativeBinomial']


class NegativeBinomial(Distribution):
    """Successes (each with probability ``probs``, or log-odds ``logits``) in Bernoulli trials
    until ``total_count`` failures; sampled as a Poisson with a Gamma-distributed rate.

    >>> NegativeBinomial(2.0, probs=leafgrad.tensor(0.5)).mean
    tensor(2.)
    """
    arg_constraints = {'total_count': constraints.greater_than_eq(0),
                       'probs': constraints.half_open_interval(0.0, 1.0), 'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _check_probs_or_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        return self._expanded(NegativeBinomial, new, batch_shape, total_count=self.total_count.expand(batch_shape),
                              **self._expanded_probs_or_logits(batch_shape))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.total_count * ops.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ops.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=ops.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return ops.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = F.logsigmoid
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = (-ops.lgamma(self.total_count + value) + ops.lgamma(1.0 + value)
                             + ops.lgamma(self.total_count))
        # total_count + value = 0 (no trials at all) has probability 1
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
