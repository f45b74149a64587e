"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""
import math

from .. import creation, linalg, ops
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ['MultivariateNormal']


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dimensions."""
    return ops.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x = |L^-1 x|^2 for lower-triangular ``bL`` whose batch shape broadcasts to
    that of the vectors ``bx``."""
    n = bx.size(-1)
    L = bL.expand(bx.shape[:-1] + (n, n))
    return linalg.solve_triangular(L, bx.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _cholesky_inverse(L):
    """(L L^T)^-1 from its lower Cholesky factor."""
    eye = creation.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    L_inv = linalg.solve_triangular(L, eye.expand(L.shape), upper=False)
    return L_inv.mT @ L_inv


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 without inverting P: from the Cholesky factor of P with
    rows and columns reversed."""
    Lf = linalg.cholesky(ops.flip(P, (-2, -1)))
    L_inv = ops.transpose(ops.flip(Lf, (-2, -1)), -2, -1)
    eye = creation.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(L_inv, eye.expand(L_inv.shape), upper=False)


def _scale_tril_of(scale_tril, covariance_matrix, precision_matrix):
    """The lower Cholesky factor of the covariance, from whichever of the three was given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution with mean ``loc`` and a covariance given as exactly
    one of ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril`` (its lower
    Cholesky factor); batch dimensions of ``loc`` and the matrix broadcast.

    >>> m = MultivariateNormal(leafgrad.zeros(2), leafgrad.eye(2))
    >>> m.log_prob(leafgrad.zeros(2))  # -log(2 pi)
    tensor(-1.8379)
    """
    arg_constraints = {'loc': constraints.real_vector, 'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite, 'scale_tril': constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError('loc must be at least one-dimensional.')
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError('Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.')
        if scale_tril is not None:
            name, matrix = 'scale_tril', scale_tril
            message = 'scale_tril matrix must be at least two-dimensional, with optional leading batch dimensions'
        elif covariance_matrix is not None:
            name, matrix = 'covariance_matrix', covariance_matrix
            message = 'covariance_matrix must be at least two-dimensional, with optional leading batch dimensions'
        else:
            name, matrix = 'precision_matrix', precision_matrix
            message = 'precision_matrix must be at least two-dimensional, with optional leading batch dimensions'
        if matrix.dim() < 2:
            raise ValueError(message)
        batch_shape = ops.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix, precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape + self.event_shape
        matrices = {name: self.__dict__[name].expand(cov_shape)
                    for name in ('covariance_matrix', 'scale_tril', 'precision_matrix') if name in self.__dict__}
        return self._expanded(MultivariateNormal, new, batch_shape, loc=self.loc.expand(batch_shape + self.event_shape),
                              _unbroadcasted_scale_tril=self._unbroadcasted_scale_tril, **matrices)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ops.matmul(L, L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
