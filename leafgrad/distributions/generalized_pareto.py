"""GeneralizedPareto(loc, scale, concentration): the limit distribution of threshold
exceedances."""
import math
from math import inf, nan
from numbers import Number, Real

from .. import creation, ops
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['GeneralizedPareto']


class GeneralizedPareto(Distribution):
    """Support [loc, inf) for concentration >= 0, [loc, loc - scale / concentration] below;
    concentration 0 is the exponential distribution shifted to loc. Samples by inversion of
    the cdf (reparametrised).

    >>> GeneralizedPareto(0.0, 1.0, 0.0).mean
    tensor(1.)
    """
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive, 'concentration': constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        return self._expanded(GeneralizedPareto, new, batch_shape, loc=self.loc.expand(batch_shape),
                              scale=self.scale.expand(batch_shape), concentration=self.concentration.expand(batch_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(creation.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe_concentration(self):
        """(concentration close to 0, concentration with those set to 1): the closed forms
        divide by it."""
        eq_zero = ops.isclose(self.concentration, creation.tensor(0.0))
        return eq_zero, ops.where(eq_zero, creation.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + creation.ones_like(z)
        where_nonzero = ops.where(y == 0, y, y * ops.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - ops.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return ops.where(eq_zero, -z, -ops.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value):
        return ops.log1p(-ops.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ops.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero = ops.isclose(self.concentration, creation.zeros_like(self.concentration))
        safe_conc = ops.where(eq_zero, creation.ones_like(self.concentration), self.concentration)
        logu = ops.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * ops.expm1(-safe_conc * logu)
        return ops.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1  # (infinite from 1 on)
        safe_conc = ops.where(valid, self.concentration, 0.5)
        return ops.where(valid, self.loc + self.scale / (1 - safe_conc), nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = ops.where(valid, self.concentration, 0.25)
        return ops.where(valid, self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)), nan)

    def entropy(self):
        return ops.broadcast_to(ops.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ops.where(self.concentration < 0, lower - self.scale / self.concentration, inf)
        return constraints.interval(lower, upper)
