"""Laplace(loc, scale)."""
from .. import ops
from .._type_info import finfo
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _batch_shape, broadcast_all

__all__ = ['Laplace']


class Laplace(Distribution):
    """The Laplace (double exponential) distribution."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape((self.loc,), (loc, scale)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        return self._expanded(Laplace, new, batch_shape, loc=self.loc.expand(batch_shape),
                              scale=self.scale.expand(batch_shape))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        info = finfo(self.loc.dtype)
        u = self.loc.new(shape).uniform_(info.eps - 1, 1)  # in (-1, 1): |u| < 1 keeps log1p(-|u|) finite
        return self.loc - self.scale * u.sign() * ops.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ops.log(2 * self.scale) - ops.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * ops.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ops.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + ops.log(2 * self.scale)
