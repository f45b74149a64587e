"""Poisson(rate)."""
from .. import ops
from ..autograd.grad_mode import no_grad
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _batch_shape, broadcast_all

__all__ = ['Poisson']


class Poisson(ExponentialFamily):
    """The Poisson distribution with rate ``rate``."""
    arg_constraints = {'rate': constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch_shape((self.rate,), (rate,)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        return self._expanded(Poisson, new, batch_shape, rate=self.rate.expand(batch_shape))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return ops.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (ops.log(self.rate),)

    def _log_normalizer(self, x):
        return ops.exp(x)
