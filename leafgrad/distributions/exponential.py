"""Exponential(rate)."""
from .. import creation, ops
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _batch_shape, broadcast_all

__all__ = ['Exponential']


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean 1 / rate)."""
    arg_constraints = {'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape((self.rate,), (rate,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        return self._expanded(Exponential, new, batch_shape, rate=self.rate.expand(batch_shape))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return creation.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.rate.new(shape).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ops.exp(-self.rate * value)

    def icdf(self, value):
        return -ops.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - ops.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -ops.log(-x)
