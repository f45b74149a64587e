"""Bernoulli(probs or logits): 1 with probability probs, else 0."""
from math import nan

from .. import creation, ops
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _check_probs_or_logits, _is_number, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['Bernoulli']


def _bce_with_logits(logits, target):
    return F.binary_cross_entropy_with_logits(logits, target, reduction='none')


class Bernoulli(ExponentialFamily):
    """Parametrised by ``probs`` (the probability of a 1) or ``logits`` (its log-odds), not
    both; the other is computed on first use."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        _check_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if _is_number(given) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        return self._expanded(Bernoulli, new, batch_shape, **self._expanded_probs_or_logits(batch_shape))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = nan
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

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
            return ops.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = creation.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values

    @property
    def _natural_params(self):
        return (ops.logit(self.probs),)

    def _log_normalizer(self, x):
        return ops.log1p(ops.exp(x))
