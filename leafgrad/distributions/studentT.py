"""StudentT(df, loc, scale)."""
import math
from math import inf, nan

from .. import ops
from ..tensor import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ['StudentT']


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``; drawn as
    loc + scale * X / sqrt(Z / df) with X ~ Normal(0, 1) and Z ~ Chi2(df), reparametrised
    through both.

    >>> StudentT(leafgrad.tensor(2.0)).mode
    tensor(0.)
    """
    arg_constraints = {'df': constraints.positive, 'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        return self._expanded(StudentT, new, batch_shape, df=self.df.expand(batch_shape),
                              loc=self.loc.expand(batch_shape), scale=self.scale.expand(batch_shape),
                              _chi2=self._chi2.expand(batch_shape))

    @property
    def mean(self):
        m = self.loc.clone()
        m[self.df <= 1] = nan
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # scale^2 df / (df - 2) for df > 2, infinite for 1 < df <= 2, undefined below
        m = self.df.clone()
        finite = self.df > 2
        m[finite] = self.scale[finite].pow(2) * self.df[finite] / (self.df[finite] - 2)
        m[(self.df <= 2) & (self.df > 1)] = inf
        m[self.df <= 1] = nan
        return m

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * ops.rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + ops.lgamma(0.5 * self.df)
                    - ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ops.log1p(y ** 2.0 / self.df) - log_norm

    def entropy(self):
        lbeta = ops.lgamma(0.5 * self.df) + math.lgamma(0.5) - ops.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (ops.digamma(0.5 * (self.df + 1)) - ops.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
