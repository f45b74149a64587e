"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): random positive-definite matrices."""
import math
import warnings

from .. import creation, linalg, ops
from .._type_info import finfo
from ..tensor import Size, Tensor
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_of
from .utils import _is_number, lazy_property

__all__ = ['Wishart']

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum_i digamma(x - i / 2), i < p."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError('Wrong domain for multivariate digamma function.')
    return ops.digamma(x.unsqueeze(-1) - creation.arange(p, dtype=x.dtype, device=x.device).div(2)
                       .expand(x.shape + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=finfo(x.dtype).eps)


def _chi2_of(df, p, scale_tril, batch_shape):
    """The Chi2(df - i), i < p, whose square roots are the Bartlett factor's diagonal."""
    return Chi2(df=df.unsqueeze(-1) - creation.arange(p, dtype=scale_tril.dtype, device=scale_tril.device)
                .expand(batch_shape + (-1,)))


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom (> dim - 1) and a scale given as
    exactly one of ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril`` (its
    lower Cholesky factor). Samples come from the Bartlett decomposition, drawn as PyTorch draws
    them (chi-square diagonal, then normal entries below it), so a seeded generator gives
    PyTorch's samples.

    As in PyTorch, ``rsample`` checks its first sample with the support's test, which is true for
    a positive-definite sample, and treats true as singular: it warns 'Singular sample detected.'
    and draws the sample again. leafgrad does the same, so that its random stream and warnings stay
    PyTorch's.

    >>> Wishart(leafgrad.tensor(4.), covariance_matrix=leafgrad.eye(2)).mean
    tensor([[4., 0.],
            [0., 4.]])
    """
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {'covariance_matrix': constraints.positive_definite,
                'precision_matrix': constraints.positive_definite,
                'scale_tril': constraints.lower_cholesky,
                'df': constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError('Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.')
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError('scale_tril must be at least two-dimensional, with optional leading batch dimensions')
        if _is_number(df):
            batch_shape = Size(param.shape[:-2])
            self.df = creation.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ops.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f'Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.')
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn('Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < '
                          'ndim.', stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix, precision_matrix)
        self._dist_chi2 = _chi2_of(self.df, self._event_shape[-1], self._unbroadcasted_scale_tril, batch_shape)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ('covariance_matrix', 'scale_tril', 'precision_matrix'):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._dist_chi2 = _chi2_of(new.df, self.event_shape[-1], new._unbroadcasted_scale_tril, batch_shape)
        return self._expanded(Wishart, new, batch_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = creation.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return ops.cholesky_solve(identity, L).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + ops.einsum('...i,...j->...ij', diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=Size()):
        # L A with A lower triangular: sqrt(chi2(df - i)) on the diagonal, standard normals below
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = ops.tril_indices(p, p, offset=-1)
        noise[..., i, j] = creation.randn(Size(sample_shape) + self._batch_shape + (int(p * (p - 1) / 2),),
                                          dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """A reparametrised sample (see the class docstring on its redraw). ``max_try_correction``
        (default 10) bounds the redraws."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if is_singular.any():
            warnings.warn('Singular sample detected.', stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not is_singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - ops.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - ops.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + ops.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + ops.mvlgamma(y + (p + 1) / 2, p=p))
