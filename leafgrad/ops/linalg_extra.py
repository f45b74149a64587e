"""torch.* linear algebra outside torch.linalg: the older decomposition API (svd, qr, cholesky),
cross, and cdist."""
import warnings

from .. import return_types
from ._op import safely_castable, user_stacklevel, writes_out
from ._util import Node, autocast, record, saved_output, xp
from . import elementwise as _ew
from . import shape as _shape
from .linalg_decomp import _MULTI_DOT_OUT, linalg_multi_dot as multi_dot
from .linalg_decomp import (linalg_cholesky as _cholesky, linalg_cross as _linalg_cross, linalg_qr as _qr,
                            linalg_svd as _svd)
from .reduction import sum as _sum


@writes_out('_linalg_svd', label='svd')
def svd(input, some=True, compute_uv=True):
    """torch.svd: V rather than Vh, and ``some`` for the reduced factorisation."""
    if autocast.state.on:
        input, = autocast.fp32(input)
    U, S, Vh = _svd(input, full_matrices=not some)
    if not compute_uv:
        return return_types.svd(U * 0, S, Vh * 0)
    return return_types.svd(U, S, _shape.transpose(Vh, -2, -1))


@writes_out('linalg_qr', label='qr')
def qr(input, some=True):
    if autocast.state.on:
        input, = autocast.fp32(input)
    warnings.warn('torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n'
                  "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
                  'Q, R = torch.qr(A, some)\nshould be replaced with\n'
                  "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning,
                  stacklevel=user_stacklevel())
    Q, R = _qr(input, 'reduced' if some else 'complete')
    return return_types.qr(Q, R)


class CholeskyBackward0(Node):
    """torch.cholesky's node; the derivative is linalg.cholesky's."""
    __slots__ = ('upper',)

    def jvp(self, tangents):
        from .linalg_decomp import LinalgCholesky as LinalgCholeskyExBackward0
        return LinalgCholeskyExBackward0.jvp(self, tangents)

    def apply(self, grad):
        from .linalg_decomp import LinalgCholesky as LinalgCholeskyExBackward0
        return LinalgCholeskyExBackward0.apply(self, grad)


@writes_out('cholesky', safely_castable('cholesky'))
def cholesky(input, upper=False):
    if autocast.state.on:
        input, = autocast.fp32(input)
    warnings.warn('torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future '
                  'PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\n'
                  'and\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n'
                  'This transform will produce equivalent results for all valid (symmetric positive definite) inputs.',
                  UserWarning, stacklevel=user_stacklevel())
    from .. import autograd
    with autograd.grad_mode.no_grad():
        L = _cholesky(input, upper=upper)
    out, node = record(L._data, CholeskyBackward0, (input,))
    if node is not None:
        node.upper = upper
        node.save(saved_output(out))
    return out


@writes_out('mm', _MULTI_DOT_OUT, label='chain_matmul')
def chain_matmul(*matrices):
    from .linalg_solvers import _deprecated
    _deprecated('chain_matmul')
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = matrices[0]
    if len(matrices) == 1:
        return _shape.clone(matrices[0])
    return multi_dot(matrices)


# ---- cdist -------------------------------------------------------------------------------

class CdistBackward0(Node):
    __slots__ = ('p',)

    def apply(self, grad):
        x1, x2, dist = self.saved_tensors
        w = _cdist_weights(x1, x2, dist, grad, self.p)
        if w is None:  # p = 0 counts: piecewise constant
            return None, None
        g1 = _sum(w, -2) if self.next_functions[0][0] is not None else None
        g2 = -_sum(w, -3) if self.next_functions[1][0] is not None else None
        return g1, g2


def _cdist_weights(x1, x2, dist, grad, p):
    """d dist[i, j] / d x1[i] times grad[i, j], as (..., P, R, M) (minus that for x2[j])."""
    diff = _shape.unsqueeze(x1, -2) - _shape.unsqueeze(x2, -3)       # (..., P, R, M)
    g = _shape.unsqueeze(grad, -1)
    d = _shape.unsqueeze(dist, -1)
    if p == 0:
        return None
    if p == 1:
        return _ew.sign(diff) * g
    if p == float('inf'):
        return _ew.sign(diff) * (_ew.abs(diff) == d) * g
    if p == 2:
        return diff * (g / _ew.where(d == 0, 1.0, d)) * (d != 0)
    a = _ew.abs(diff)
    return _ew.sign(diff) * _ew.pow(a, p - 1) * (g / _ew.where(d == 0, 1.0, _ew.pow(d, p - 1))) * (d != 0)


def cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'):
    if autocast.state.on:
        x1, x2 = autocast.fp32(x1, x2)
    a, b = x1._data, x2._data
    if a.ndim < 2 or b.ndim < 2:
        raise RuntimeError(f'cdist only supports at least 2D tensors, X1 got: {a.ndim}D' if a.ndim < 2 else
                           f'cdist only supports at least 2D tensors, X2 got: {b.ndim}D')
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f'X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}')
    if p < 0:
        raise RuntimeError('cdist only supports non-negative p values')
    diff = xp.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        data = (diff != 0).sum(-1).astype(a.dtype)
    elif p == float('inf'):
        data = diff.max(-1) if diff.shape[-1] else diff.sum(-1)
    elif p == 1:
        data = diff.sum(-1)
    elif p == 2:
        data = xp.sqrt((diff * diff).sum(-1))
    else:
        data = (diff ** p).sum(-1) ** (1.0 / p)
    out, node = record(data.astype(a.dtype, copy=False), CdistBackward0, (x1, x2))
    if node is not None:
        node.p = p
        node.save(x1, x2, saved_output(out))
    return out


class PdistBackward0(Node):
    __slots__ = ('p',)

    def apply(self, grad):
        (x,) = self.saved_tensors
        n = x._data.shape[0]
        rows, cols = xp.triu_indices(n, 1)
        from .indexing import index_put_embed
        full = index_put_embed(grad, (n, n), (rows, cols))      # the pairs' gradients, upper triangle
        dist = cdist(x, x, self.p)
        w = _cdist_weights(x, x, dist, full, self.p)
        if w is None:
            return None,
        return _sum(w, -2) - _sum(w, -3),


def pdist(input, p=2):
    """The distances between the rows of an (N, M) matrix, pairs i < j in row-major order."""
    x = input._data
    if x.ndim != 2:
        raise RuntimeError(f'pdist only supports 2D tensors, got: {x.ndim}D')
    if p < 0:
        raise RuntimeError('pdist only supports non-negative p values')
    from .. import autograd
    with autograd.grad_mode.no_grad():
        full = cdist(input, input, p)._data
    rows, cols = xp.triu_indices(x.shape[0], 1)
    out, node = record(xp.ascontiguousarray(full[rows, cols]), PdistBackward0, (input,))
    if node is not None:
        node.p = p
        node.save(input)
    return out


_cross_dim_warned = False


@writes_out('linalg_cross', label='cross')
def cross(input, other, dim=None):
    """torch.cross: linalg.cross along ``dim``; without one, along input's first dimension of
    size 3, with PyTorch's deprecation warning (given once a process, as PyTorch's)."""
    global _cross_dim_warned
    if dim is None:
        if not _cross_dim_warned:
            _cross_dim_warned = True
            warnings.warn('Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the '
                          'dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to '
                          'agree with that of linalg.cross in a future release.', UserWarning, stacklevel=2)
        dim = next((i for i, n in enumerate(input._data.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError('no dimension of size 3 in input')
    return _linalg_cross(input, other, dim=dim)


FUNCTIONS = ['svd', 'qr', 'cholesky', 'chain_matmul', 'cdist', 'pdist', 'cross']
NOT_METHODS = ['chain_matmul', 'cdist', 'pdist']
