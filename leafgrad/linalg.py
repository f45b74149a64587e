"""leafgrad.linalg: linear algebra as ``torch.linalg``.

The norms are written here; the decompositions and solvers are declared in ``ops/linalg_decomp.py``,
``ops/linalg_solvers.py`` and ``ops/linalg_eig.py`` as ``linalg_<name>`` (PyTorch's names) and bound
here as ``linalg.<name>``.
"""
# (the helpers under private names: torch.linalg holds its functions only)
from ._arg_parser import check_dtype as _check_dtype
from .ops import reduction as _reduction
from .ops._op import check_out_type as _check_out_type, same_dtype as _same_dtype, writes_out as _writes_out
from .ops._util import wrap_dim as _wrap_dim
from .ops.reduction import _check_float
from .ops.shape import permute as _permute
# (torch.linalg's functions, declared as linalg_<name> in their families)
from .ops.linalg_decomp import (LinAlgError, linalg_inv as inv, linalg_det as det, linalg_slogdet as slogdet,  # noqa
                                linalg_solve as solve, linalg_cholesky as cholesky, linalg_qr as qr,
                                linalg_eigh as eigh, linalg_svd as svd, linalg_cholesky_ex as cholesky_ex,
                                linalg_cross as cross, linalg_eigvalsh as eigvalsh, linalg_inv_ex as inv_ex,
                                linalg_matrix_power as matrix_power, linalg_matrix_rank as matrix_rank,
                                linalg_multi_dot as multi_dot, linalg_pinv as pinv,
                                linalg_solve_triangular as solve_triangular, linalg_svdvals as svdvals,
                                linalg_vecdot as vecdot)
from .ops.linalg import check_operands as _check_operands, matmul as _matmul
from .ops.linalg_eig import linalg_eig as eig, linalg_eigvals as eigvals  # noqa: F401
from .ops.linalg_solvers import (linalg_cond as cond, linalg_diagonal as diagonal,  # noqa: F401
                                 linalg_householder_product as householder_product, linalg_lstsq as lstsq,
                                 linalg_lu as lu, linalg_lu_factor as lu_factor, linalg_lu_factor_ex as lu_factor_ex,
                                 linalg_lu_solve as lu_solve, linalg_matrix_exp as matrix_exp,
                                 linalg_solve_ex as solve_ex, linalg_tensorinv as tensorinv,
                                 linalg_tensorsolve as tensorsolve, linalg_vander as vander)


# linalg.vector_norm: the reduction family's, with PyTorch's out= (of the result's dtype), made
# here under PyTorch's name (the profiler records it as aten::linalg_vector_norm)
vector_norm = _writes_out('linalg_vector_norm')(_reduction.vector_norm)
vector_norm.__name__ = vector_norm.__qualname__ = 'linalg_vector_norm'
vector_norm.__module__ = __name__


def matmul(input, other, *, out=None):
    """linalg.matmul(input, other, *, out=None) -> Tensor: torch.matmul under PyTorch's name
    linalg_matmul (its profiler event, around aten::matmul's; its TypeError for out=)."""
    _check_operands('linalg_matmul', input, other)
    if out is not None:
        _check_out_type('linalg_matmul', out)
    return _matmul(input, other, out=out)


matmul.__name__ = matmul.__qualname__ = 'linalg_matmul'


_MATRIX_ORDERS = ('fro', 'nuc', 2, -2, 1, -1, float('inf'), float('-inf'))


@_writes_out('linalg_matrix_norm', _same_dtype('linalg.matrix_norm expected out tensor dtype {result} but got: {out}'),
            copy=True)
def matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro' is the 2-norm of the entries; 1/-1 (inf/-inf) the max/min absolute column (row)
    sum; 2/-2 and 'nuc' need the singular values (``svdvals``)."""
    _check_dtype('linalg_matrix_norm', dtype)  # (PyTorch's parser first: a string dtype is refused, its message
    if ord not in _MATRIX_ORDERS:              # lists the two overloads)  # (PyTorch's checks, in its order)
        raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')
    _check_float(A, 'linalg.matrix_norm')
    if A.ndim < 2:
        raise RuntimeError('linalg.matrix_norm: The input tensor A must have at least 2 dimensions.')
    if len(dim) != 2:
        raise RuntimeError(f'linalg.matrix_norm: dim must be a 2-tuple. Got {" ".join(map(str, dim))}')
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f'linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})')
    if ord == 'fro':
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ('nuc', 2, -2):
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        s = svdvals(_permute(A, rest + [d0, d1]))
        out = s.sum(-1) if ord == 'nuc' else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                out = out.unsqueeze(d)
        return out
    if ord in (1, -1, float('inf'), float('-inf')):
        # 1-norms sum over rows (dim0) then take the max over columns; inf-norms the reverse
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(sum_dim, keepdim=keepdim)
        if not keepdim and sum_dim < red_dim:
            red_dim -= 1
        return sums.amax(red_dim, keepdim=keepdim) if ord > 0 else sums.amin(red_dim, keepdim=keepdim)
    raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')


@_writes_out('linalg_norm', _same_dtype('linalg.norm expected out tensor dtype {result} but got: {out}'), copy=True)
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm when ``dim`` is an int or ``A`` is 1-D (or ord is None); else a matrix norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        if dim is not None and len(dim) == 2 and A.ndim >= 2:
            return matrix_norm(A, 'fro', dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is not None and len(dim) == 2 or (dim is None and A.ndim == 2):
        return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    if dim is None and A.ndim != 1:
        raise RuntimeError(f'linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. '
                           f'Got {A.ndim}D.')
    if isinstance(ord, str):
        raise RuntimeError(f'linalg.vector_norm: Order {ord} not supported.')
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


__all__ = ['vector_norm', 'matrix_norm', 'norm', 'inv', 'det', 'slogdet', 'solve', 'cholesky', 'qr', 'eigh', 'svd',
           'LinAlgError', 'cholesky_ex', 'cross', 'eigvalsh', 'inv_ex', 'matrix_power', 'matrix_rank', 'multi_dot',
           'pinv', 'solve_triangular', 'svdvals', 'vecdot', 'matmul', 'cond', 'diagonal', 'householder_product',
           'lstsq', 'lu', 'lu_factor', 'lu_factor_ex', 'lu_solve', 'matrix_exp', 'solve_ex', 'tensorinv',
           'tensorsolve', 'vander', 'eig', 'eigvals']
