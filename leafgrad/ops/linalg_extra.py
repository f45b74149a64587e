"""torch.* linear algebra outside torch.linalg: the older decomposition API (svd, qr, cholesky),
cross, chain_matmul, cdist and pdist, each declared once (``_op.Op``); svd, qr, cholesky, cross and
chain_matmul are linalg's ops (``ops.linalg_<name>``) with torch's older arguments."""
import warnings

from .. import backend, return_types
from ..autograd.grad_mode import no_grad
from ._op import Op, out_rule, safely_castable, user_stacklevel
from ._util import SCALAR_NAMES, autocast, ops, record, saved_output, xp
from ._matrix import _MULTI_DOT_OUT, cholesky_backward
from .._arg_parser import refuse_arguments


class Svd(Op):
    """svd(input, some=True, compute_uv=True, *, out=None): torch.svd, V rather than Vh, and
    ``some`` for the reduced factorisation (linalg.svd's node)."""
    op, out = 'svd', out_rule('_linalg_svd', label='svd')

    def forward(input, some=True, compute_uv=True):
        """torch.svd: V rather than Vh, and ``some`` for the reduced factorisation."""
        if autocast.state.on:
            input, = autocast.fp32(input)
        U, S, Vh = ops.linalg_svd(input, full_matrices=not some)
        if not compute_uv:
            return return_types.svd(U * 0, S, Vh * 0)
        return return_types.svd(U, S, ops.transpose(Vh, -2, -1))


class Qr(Op):
    """qr(input, some=True, *, out=None): torch.qr, deprecated for linalg.qr (its node), with
    PyTorch's warning."""
    op, out = 'qr', out_rule('linalg_qr', label='qr')

    def forward(input, some=True):
        if autocast.state.on:
            input, = autocast.fp32(input)
        warnings.warn('torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch '
                      "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
                      'Q, R = torch.qr(A, some)\nshould be replaced with\n'
                      "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning,
                      stacklevel=user_stacklevel())
        Q, R = ops.linalg_qr(input, 'reduced' if some else 'complete')
        return return_types.qr(Q, R)


class Cholesky(Op):
    """cholesky(input, upper=False, *, out=None): torch.cholesky, deprecated for linalg.cholesky,
    with PyTorch's warning; its node is CholeskyBackward0, the derivatives linalg.cholesky's."""
    op, node = 'cholesky', 'CholeskyBackward0'
    parameter_types = {'upper': 'bool'}
    out = out_rule('cholesky', safely_castable('cholesky'))
    saved = ('result', 'upper=upper')
    __slots__ = ('upper',)

    def forward(input, upper=False):
        if autocast.state.on:
            input, = autocast.fp32(input)
        warnings.warn('torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future '
                      'PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)'
                      '\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = '
                      'torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for all valid '
                      '(symmetric positive definite) inputs.', UserWarning, stacklevel=user_stacklevel())
        with no_grad():
            L = ops.linalg_cholesky(input, upper=upper)
        out, node = record(L._data, Cholesky, (input,))
        if node is not None:
            node.upper = upper
            node.save(saved_output(out))
        return out

    def apply(self, grad):  # (linalg.cholesky's; no forward-mode rule: PyTorch's torch.cholesky has none)
        (L,) = self.saved_tensors
        return cholesky_backward(grad, self.upper, L),


# PyTorch's deprecation warning, given once a process (as its TORCH_WARN_ONCE)
_CHAIN_MATMUL_DEPRECATED = ('torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use '
                            'torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than '
                            'multiple parameters.')
_chain_matmul_warned = False


class ChainMatmul(Op):
    """chain_matmul(*matrices, out=None): deprecated for linalg.multi_dot, with PyTorch's warning."""
    op, method = 'chain_matmul', False
    out = out_rule('mm', _MULTI_DOT_OUT, label='chain_matmul')

    def forward(*matrices):
        global _chain_matmul_warned
        if not _chain_matmul_warned:
            _chain_matmul_warned = True
            warnings.warn(_CHAIN_MATMUL_DEPRECATED, UserWarning, stacklevel=user_stacklevel())
        if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
            matrices = matrices[0]
        if len(matrices) == 1:
            return ops.clone(matrices[0])
        return ops.linalg_multi_dot(matrices)


# ---- cdist, pdist -------------------------------------------------------------------------

def _cdist_weights(x1, x2, dist, grad, p):
    """d dist[i, j] / d x1[i] times grad[i, j], as (..., P, R, M) (minus that for x2[j])."""
    diff = ops.unsqueeze(x1, -2) - ops.unsqueeze(x2, -3)       # (..., P, R, M)
    g = ops.unsqueeze(grad, -1)
    d = ops.unsqueeze(dist, -1)
    if p == 0:
        return None
    if p == 1:
        return ops.sign(diff) * g
    if p == float('inf'):
        return ops.sign(diff) * (ops.abs(diff) == d) * g
    if p == 2:
        return diff * (g / ops.where(d == 0, 1.0, d)) * (d != 0)
    a = ops.abs(diff)
    return ops.sign(diff) * ops.pow(a, p - 1) * (g / ops.where(d == 0, 1.0, ops.pow(d, p - 1))) * (d != 0)


class Cdist(Op):
    """cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'): the p-norm
    distances between the rows of x1 and those of x2 (batched)."""
    op, node, method = 'cdist', 'CdistBackward0', False  # (no forward-mode rule, as PyTorch's)
    tensors = ('x1', 'x2')
    saved = ('x1', 'x2', 'result', 'p=p')
    __slots__ = ('p',)

    def forward(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'):
        if autocast.state.on:
            x1, x2 = autocast.fp32(x1, x2)
        a, b = x1._data, x2._data
        for name, d in (('X1', a.dtype), ('X2', b.dtype)):
            if d.kind not in 'fV':
                raise RuntimeError(f'cdist only supports floating-point dtypes, {name} got: {SCALAR_NAMES[d.name]}')
        if a.ndim < 2 or b.ndim < 2:
            raise RuntimeError(f'cdist only supports at least 2D tensors, X1 got: {a.ndim}D' if a.ndim < 2 else
                               f'cdist only supports at least 2D tensors, X2 got: {b.ndim}D')
        if a.shape[-1] != b.shape[-1]:
            raise RuntimeError(f'X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}')
        if p < 0:
            raise RuntimeError('cdist only supports non-negative p values')
        if a.dtype != b.dtype:  # (its kernel reads both as the first's type)
            raise RuntimeError(f'expected scalar type {SCALAR_NAMES[a.dtype.name]} but found {SCALAR_NAMES[b.dtype.name]}')
        if a.dtype.kind == 'V' or a.dtype.itemsize == 2:  # (no 16-bit kernel)
            raise NotImplementedError(f'"cdist" not implemented for \'{SCALAR_NAMES[a.dtype.name]}\'')
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
        out, node = record(data.astype(a.dtype, copy=False), Cdist, (x1, x2))
        if node is not None:
            node.p = float(p)  # (kept as PyTorch keeps it: _saved_p a float)
            node.save(x1, x2, saved_output(out))
        return out

    def apply(self, grad):
        x1, x2, dist = self.saved_tensors
        w = _cdist_weights(x1, x2, dist, grad, self.p)
        if w is None:  # p = 0 counts: piecewise constant
            return None, None
        g1 = ops.sum(w, -2) if self.next_functions[0][0] is not None else None
        g2 = -ops.sum(w, -3) if self.next_functions[1][0] is not None else None
        return g1, g2


def _pairs(n, like):
    """(rows, cols): the pairs i < j of n rows, row-major, on ``like``'s device (NumPy's
    triu_indices takes no like=: on a GPU, CuPy's)."""
    if type(like) is xp.ndarray or backend.device_of(like).type != 'cuda':
        return xp.triu_indices(n, 1)
    return backend.module_for(backend.device_of(like)).triu_indices(n, 1)


class Pdist(Op):
    """pdist(input, p=2): the distances between the rows of an (N, M) matrix, pairs i < j in
    row-major order."""
    op, node, method = 'pdist', 'PdistBackward0', False  # (no forward-mode rule, as PyTorch's)
    saved = ('self', 'p=p')
    __slots__ = ('p',)

    def forward(input, p=2):
        """The distances between the rows of an (N, M) matrix, pairs i < j in row-major order."""
        try:
            x = input._data
            if x.ndim != 2:
                raise RuntimeError(f'pdist only supports 2D tensors, got: {x.ndim}D')
            if p < 0:
                raise RuntimeError('pdist only supports non-negative p values')
            with no_grad():
                full = ops.cdist(input, input, p)._data
            rows, cols = _pairs(x.shape[0], x)
            out, node = record(xp.ascontiguousarray(full[rows, cols]), Pdist, (input,))
            if node is not None:
                node.p = float(p)  # (kept as PyTorch keeps it: _saved_p a float)
                node.save(input)
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        (x,) = self.saved_tensors
        n = x._data.shape[0]
        rows, cols = _pairs(n, x._data)
        full = ops.index_put_embed(grad, (n, n), (rows, cols))      # the pairs' gradients, upper triangle
        dist = ops.cdist(x, x, self.p)
        w = _cdist_weights(x, x, dist, full, self.p)
        if w is None:
            return None,
        return ops.sum(w, -2) - ops.sum(w, -3),


_cross_dim_warned = False


class Cross(Op):
    """cross(input, other, dim=None, *, out=None): torch.cross, linalg.cross along ``dim``; without
    one, along input's first dimension of size 3, with PyTorch's deprecation warning (given once
    a process, as PyTorch's)."""
    op, out = 'cross', out_rule('linalg_cross', label='cross')
    tensors = ('input', 'other')

    def forward(input, other, dim=None):
        """torch.cross: linalg.cross along ``dim``; without one, along input's first dimension of
        size 3, with PyTorch's deprecation warning (given once a process, as PyTorch's)."""
        global _cross_dim_warned
        if dim is None:
            if not _cross_dim_warned:
                _cross_dim_warned = True
                warnings.warn('Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the '
                              'dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change '
                              'to agree with that of linalg.cross in a future release.', UserWarning,
                              stacklevel=user_stacklevel())
            dim = next((i for i, n in enumerate(input._data.shape) if n == 3), None)
            if dim is None:
                raise RuntimeError('no dimension of size 3 in input')
        return ops.linalg_cross(input, other, dim=dim)
