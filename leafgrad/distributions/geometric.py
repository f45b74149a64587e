"""Geometric(probs or logits): the number of failures before the first success."""
from .. import creation
from .._type_info import finfo
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _check_probs_or_logits, _is_number, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['Geometric']


class Geometric(Distribution):
    """The number of Bernoulli(probs) failures before the first success (0, 1, 2, ...)."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _check_probs_or_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        super().__init__(Size() if _is_number(given) else given.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probs = 0 lies in the unit interval, but no success ever comes
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(f'Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) of '
                                 f'distribution {self!r} to be positive but found invalid values:\n'
                                 f'{value.detach()[~valid]}')

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        expanded = self._expanded_probs_or_logits(batch_shape)
        expanded.pop('_param', None)
        return self._expanded(Geometric, new, batch_shape, **expanded)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return creation.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = self.probs.new(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0  # 0 * log(0) is 0 here
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction='none')
        return bce / self.probs
