"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D)."""
import math

from .. import creation, linalg, ops
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ['LowRankMultivariateNormal']


def _plus_identity(K):
    return K + creation.eye(K.shape[-1], dtype=K.dtype, device=K.device)


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix C = I + W^T D^-1 W (m x m)."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return linalg.cholesky(_plus_identity(ops.matmul(Wt_Dinv, W)))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log|W W^T + D| = log|C| + log|D| (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by the Woodbury identity: x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, _batch_mv(Wt_Dinv, x))


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal whose covariance is ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``, with ``cov_factor`` of shape event x m: log_prob, entropy and samples cost
    O(event * m^2) instead of O(event^3).

    >>> m = LowRankMultivariateNormal(leafgrad.zeros(2), leafgrad.tensor([[1.0], [0.0]]), leafgrad.ones(2))
    >>> m.variance
    tensor([2., 1.])
    """
    arg_constraints = {'loc': constraints.real_vector, 'cov_factor': constraints.independent(constraints.real, 2),
                       'cov_diag': constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError('loc must be at least one-dimensional.')
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError('cov_factor must be at least two-dimensional, with optional leading batch dimensions')
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f'cov_factor must be a batch of matrices with shape {event_shape[0]} x m')
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f'cov_diag must be a batch of vectors with shape {Size(event_shape)}')
        try:
            loc_, self.cov_factor, cov_diag_ = ops.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                    cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f'Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, '
                             f'cov_diag {cov_diag.shape}') from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        loc_shape = Size(batch_shape) + self.event_shape
        return self._expanded(LowRankMultivariateNormal, new, batch_shape, loc=self.loc.expand(loc_shape),
                              cov_diag=self.cov_diag.expand(loc_shape),
                              cov_factor=self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:]),
                              _unbroadcasted_cov_factor=self._unbroadcasted_cov_factor,
                              _unbroadcasted_cov_diag=self._unbroadcasted_cov_diag,
                              _capacitance_tril=self._capacitance_tril)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        # D^1/2 chol(I + D^-1/2 W W^T D^-1/2): a Cholesky factor that stays accurate for small D
        cov_diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt
        scale_tril = cov_diag_sqrt * linalg.cholesky(_plus_identity(ops.matmul(Dinvsqrt_W, Dinvsqrt_W.mT)))
        return scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        covariance_matrix = ops.matmul(W, W.mT) + ops.diag_embed(self._unbroadcasted_cov_diag)
        return covariance_matrix.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision_matrix = ops.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision_matrix.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps_W = _standard_normal(shape[:-1] + self.cov_factor.shape[-1:], dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        M = _batch_lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _batch_lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                        self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
