"""Binomial(total_count, probs or logits): the number of successes in total_count trials."""
from .. import creation, ops
from ..autograd.grad_mode import no_grad
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _check_probs_or_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['Binomial']


def _clamp_by_zero(x):
    """max(x, 0) whose derivative at 0 is 1/2 (the mean of both sides)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """``total_count`` Bernoulli trials, each a success with probability ``probs`` (or log-odds
    ``logits``, not both); ``total_count`` may be a tensor broadcast with them.

    >>> Binomial(10, leafgrad.tensor([0.5])).mean
    tensor([5.])
    """
    arg_constraints = {'total_count': constraints.nonnegative_integer, 'probs': constraints.unit_interval,
                       'logits': constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        return self._expanded(Binomial, new, batch_shape, total_count=self.total_count.expand(batch_shape),
                              **self._expanded_probs_or_logits(batch_shape))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ops.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = ops.lgamma(self.total_count + 1)
        log_factorial_k = ops.lgamma(value + 1)
        log_factorial_nmk = ops.lgamma(self.total_count - value + 1)
        # k log p + (n - k) log(1 - p) = k logit - n max(logit, 0) - n log1p(exp(-|logit|)): stable
        # for logits of either sign
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * ops.log1p(ops.exp(-ops.abs(self.logits))) - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_total_count(self, what):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f'Inhomogeneous total count not supported by `{what}`.')
        return total_count

    def entropy(self):
        self._homogeneous_total_count('entropy')
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ops.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_total_count('enumerate_support')
        values = creation.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
