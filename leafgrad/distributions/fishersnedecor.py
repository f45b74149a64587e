"""FisherSnedecor(df1, df2): the F distribution, a ratio of scaled chi-squared variables."""
from math import nan
from numbers import Number

from .. import ops
from .._type_info import finfo
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ['FisherSnedecor']


class FisherSnedecor(Distribution):
    """(X1 / df1) / (X2 / df2) with X1 ~ Chi2(df1), X2 ~ Chi2(df2), drawn as the ratio of
    Gamma(df1 / 2, df1) and Gamma(df2 / 2, df2) samples (reparametrised).

    >>> FisherSnedecor(leafgrad.tensor(2.0), leafgrad.tensor(6.0)).mean
    tensor(1.5000)
    """
    arg_constraints = {'df1': constraints.positive, 'df2': constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = Size() if isinstance(df1, Number) and isinstance(df2, Number) else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        return self._expanded(FisherSnedecor, new, batch_shape, df1=self.df1.expand(batch_shape),
                              df2=self.df2.expand(batch_shape), _gamma1=self._gamma1.expand(batch_shape),
                              _gamma2=self._gamma2.expand(batch_shape))

    @property
    def mean(self):
        df2 = self.df2.clone()
        df2[df2 <= 2] = nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = nan
        return mode

    @property
    def variance(self):
        df2 = self.df2.clone()
        df2[df2 <= 4] = nan
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size(())):
        shape = self._extended_shape(sample_shape)
        X1 = self._gamma1.rsample(sample_shape).view(shape)
        X2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(X2.dtype).tiny
        X2.clamp_(min=tiny)
        Y = X1 / X2
        Y.clamp_(min=tiny)
        return Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * ops.log(value)
        t3 = (ct1 + ct2) * ops.log1p(ct3 * value)
        return t1 + t2 - t3
