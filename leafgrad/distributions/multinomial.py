"""Multinomial(total_count, probs or logits): counts of total_count categorical draws."""
from math import inf

from .. import creation, ops
from ..tensor import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['Multinomial']


class Multinomial(Distribution):
    """How often each of K categories comes up in ``total_count`` (an int) draws from
    Categorical(``probs`` or ``logits``); the event is the vector of K counts.

    >>> Multinomial(4, leafgrad.tensor([1.0, 1.0])).mean
    tensor([2., 2.])
    """
    arg_constraints = {'probs': constraints.simplex, 'logits': constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError('inhomogeneous total_count is not supported')
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        return self._expanded(Multinomial, new, batch_shape, total_count=self.total_count,
                              _categorical=self._categorical.expand(Size(batch_shape)))

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        # (total_count,) + sample_shape + batch_shape category indices, counted along a new last dim
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        samples = samples.permute(*range(1, samples.dim()), 0)
        counts = samples.new(self._extended_shape(sample_shape)).zero_()
        counts.scatter_add_(-1, samples, creation.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        n = creation.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - ops.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = ops.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * ops.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone()
        log_factorial_n = ops.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ops.lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -inf)] = 0  # 0 * log 0 is 0
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
