"""Categorical(probs or logits): one of K categories, given as an index."""
from math import nan

from .. import backend, creation, ops
from .._type_info import finfo
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _check_probs_or_logits, lazy_property, logits_to_probs, probs_to_logits

__all__ = ['Categorical']


class Categorical(Distribution):
    """A category index in 0..K-1, with the probabilities (normalized along the last dimension)
    ``probs``, or the unnormalized log probabilities ``logits``, not both.

    >>> Categorical(probs=leafgrad.tensor([1.0, 3.0])).probs
    tensor([0.2500, 0.7500])
    """
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _check_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError('`probs` parameter must be at least one-dimensional.')
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError('`logits` parameter must be at least one-dimensional.')
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)  # normalized
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        param_shape = Size(batch_shape) + Size((self._num_events,))
        return self._expanded(Categorical, new, batch_shape, _num_events=self._num_events,
                              **self._expanded_probs_or_logits(param_shape))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return creation.full(self._extended_shape(), nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return creation.full(self._extended_shape(), nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = creation.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ops.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = ops.clamp(self.logits, min=finfo(self.logits.dtype).min)  # -inf logits: 0 * -inf is 0 here
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = creation.arange(self._num_events, dtype=backend.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
