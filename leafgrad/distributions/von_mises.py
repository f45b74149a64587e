"""VonMises(loc, concentration): the circular normal distribution of an angle."""
import math

from .. import backend, creation, ops
from ..autograd.grad_mode import no_grad
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ['VonMises']


def _eval_poly(y, coef):
    """coef[0] + y (coef[1] + y (...)), by Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


# log I0 and log I1 by the polynomial approximations of Abramowitz & Stegun 9.8.1-9.8.4 (x < 3.75
# in (x / 3.75)^2, else x^-1/2 e^x times a polynomial in 3.75 / x): the values torch computes
_COEF_SMALL = [[1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]]
_COEF_LARGE = [[0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                -0.1647633e-1, 0.392377e-2],
               [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
                0.1787654e-1, -0.420059e-2]]


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0 and order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f'order must be 0 or 1, got {order}')
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return ops.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best & Fisher's (1979) rejection sampler, each round drawing three uniforms per element
    (as rand((3,) + shape)) until every element is accepted; the angle is wrapped into
    [-pi, pi)."""
    done = creation.zeros(x.shape, dtype=backend.bool_, device=loc.device)
    while not done.all():
        u1, u2, u3 = creation.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = ops.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = ops.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """An angle (radians, taken modulo 2 pi) concentrated around ``loc``; ``concentration`` plays
    the part of an inverse variance. Samples are drawn in float64 (a float32 rejection loop can
    stall for small concentrations) and returned in the parameters' dtype.

    >>> VonMises(leafgrad.tensor(1.0), leafgrad.tensor(1.0)).mean
    tensor(1.)
    """
    arg_constraints = {'loc': constraints.real, 'concentration': constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ops.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.to(backend.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(backend.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        return ops.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)  # (the Taylor expansion for tiny kappa)

    def sample(self, sample_shape=Size()):
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = creation.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        validate_args = self.__dict__.get('_validate_args')
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(kappa) / I0(kappa)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
