"""Gamma(concentration, rate)."""
from .. import creation, ops, special
from .._type_info import finfo
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _batch_shape, broadcast_all

__all__ = ['Gamma']


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.
    ``rsample`` differentiates through ``leafgrad._standard_gamma`` (the implicit
    reparametrisation gradient)."""
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch_shape((self.concentration,), (concentration, rate)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        return self._expanded(Gamma, new, batch_shape, concentration=self.concentration.expand(batch_shape),
                              rate=self.rate.expand(batch_shape))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = ops._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # not recorded: the gradient stays the division's
        return value

    def log_prob(self, value):
        value = creation.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (ops.xlogy(self.concentration, self.rate) + ops.xlogy(self.concentration - 1, value)
                - self.rate * value - ops.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - ops.log(self.rate) + ops.lgamma(self.concentration)
                + (1.0 - self.concentration) * ops.digamma(self.concentration))

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return ops.lgamma(x + 1) + (x + 1) * ops.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)
