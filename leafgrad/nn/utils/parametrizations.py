"""Parametrizations built on nn.utils.parametrize: weight_norm (a weight as magnitude g times
direction v / |v|) and spectral_norm (a weight divided by its largest singular value, estimated
by power iteration) and orthogonal (a matrix kept orthogonal through a map of an unconstrained one)."""
from ... import creation, linalg, ops  # (what its formulas use, PyTorch's torch.*: geqrf, linalg, matrix_exp ...)
from ..._type_info import finfo
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

__all__ = ['weight_norm', 'spectral_norm', 'orthogonal']


def _norm_except_dim(v, pow=2, dim=0):
    """The p-norm of v over every dimension but ``dim`` (kept with size 1); over all when dim is -1."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().reshape(v.shape[0], -1).norm(pow, 1).reshape((v.shape[0],) + (1,) * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().reshape(-1, v.shape[-1]).norm(pow, 0).reshape((1,) * dim + (v.shape[-1],))
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """g * v / |v|, the norm over every dimension but dim."""
    return v * (g / _norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name='weight', dim=0):
    """``module.<name>`` becomes g * v / |v| with original0 = g (the norms) and original1 = v."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f'Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})')
        if n_power_iterations <= 0:
            raise ValueError('Expected n_power_iterations to be positive, but got '
                             f'n_power_iterations={n_power_iterations}')
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer('_u', F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer('_v', F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place (PyTorch's out=), outside autograd
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """``module.<name>`` becomes W / sigma(W), sigma estimated by power iteration (one step per
    forward in training mode; u and v kept as buffers of the parametrization)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- orthogonal -------------------------------------------------------------------------------
_ORTHOGONAL_MAPS = ('matrix_exp', 'cayley', 'householder')


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = creation.eye(k, dtype=Q.dtype)
    return ops.allclose(Q.mH @ Q, eye, atol=10.0 * n * finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q of A = QR (A tall) with R's diagonal real and non-negative."""
    X, tau = ops.geqrf(A)
    Q = linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """Maps an unconstrained matrix (a batch of them) to an orthogonal one: the matrix exponential
    or the Cayley map of a skew-symmetric matrix made from its lower triangle, or a product of
    Householder reflectors; with the trivialization, times the stored orthogonal ``base``."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == 'householder':
            raise ValueError('The householder parametrization does not support complex tensors.')
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer('base', None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ('matrix_exp', 'cayley'):
            X = X.tril()
            if n != k:
                X = ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == 'matrix_exp':
                Q = ops.matrix_exp(A)
            else:
                eye = creation.eye(n, dtype=A.dtype)
                Q = linalg.solve(ops.add(eye, A, alpha=-0.5), ops.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, 'base'):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f'Expected a matrix or batch of matrices of shape {self.shape}. '
                                 f'Got a tensor of shape {Q.shape}.')
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, 'base'):
                if self.orthogonal_map in ('cayley', 'matrix_exp'):
                    raise NotImplementedError('It is not possible to assign to the matrix exponential or the Cayley '
                                              'parametrizations when use_trivialization=False.')
                A, tau = ops.geqrf(Q)
                A.diagonal(dim1=-2, dim2=-1).sign_()
                A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:  # completed to a square orthogonal matrix by random columns
                N = creation.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(ops.cat([Q, N], dim=-1))
            self.base = Q
            neg_id = creation.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name='weight', orthogonal_map=None, *, use_trivialization=True):
    """``module.<name>`` (a matrix or a batch of them) becomes orthogonal (unitary if complex):
    ``orthogonal_map`` 'matrix_exp' or 'cayley' of a skew-symmetric matrix, or 'householder'
    reflectors (default: 'matrix_exp' for square or complex, else 'householder'). With
    ``use_trivialization`` an orthogonal ``base`` is stored in the parametrization and the map
    starts at the identity; the initial value is the weight itself if orthogonal, else its Q."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f'Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.')
    if orthogonal_map is None:
        orthogonal_map = 'matrix_exp' if weight.size(-2) == weight.size(-1) or weight.is_complex() else 'householder'
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f'Got: {orthogonal_map}')
    parametrize.register_parametrization(module, name, _Orthogonal(weight, orthogonal_map,
                                                                   use_trivialization=use_trivialization), unsafe=True)
    return module
