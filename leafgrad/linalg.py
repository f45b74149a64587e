"""leafgrad.linalg: linear algebra as ``torch.linalg``.

``norm`` is written here, the LDL family (``ldl_factor``, ``ldl_factor_ex``, ``ldl_solve``) in
``_linalg_ldl.py``; ``vector_norm`` and ``matrix_norm`` in ``ops/reduction.py`` (which torch.norm
and linalg.cond use), the decompositions and solvers are declared in ``ops/linalg_decomp.py``,
``ops/linalg_solvers.py`` and ``ops/linalg_eig.py`` as ``linalg_<name>`` (PyTorch's names), and all are
bound here as ``linalg.<name>``.
"""
# (the helpers under private names: torch.linalg holds its functions only)
from ._linalg_ldl import (linalg_ldl_factor as ldl_factor, linalg_ldl_factor_ex as ldl_factor_ex,  # noqa: F401
                          linalg_ldl_solve as ldl_solve)
from .ops._op import check_out_type as _check_out_type, same_dtype as _same_dtype, writes_out as _writes_out
from .ops.reduction import linalg_vector_norm as vector_norm, matrix_norm  # noqa: F401
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


def matmul(input, other, *, out=None):
    """linalg.matmul(input, other, *, out=None) -> Tensor: torch.matmul under PyTorch's name
    linalg_matmul (its profiler event, around aten::matmul's; its TypeError for out=)."""
    _check_operands('linalg_matmul', input, other)
    if out is not None:
        _check_out_type('linalg_matmul', out)
    return _matmul(input, other, out=out)


matmul.__name__ = matmul.__qualname__ = 'linalg_matmul'


@_writes_out('linalg_norm', _same_dtype('linalg.norm expected out tensor dtype {result} but got: {out}'), copy=True)
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm when ``dim`` is an int or ``A`` is 1-D (or ord is None); else a matrix norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f'linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}')
    if isinstance(ord, str):  # (PyTorch's overload of a string order: always a matrix norm)
        if dim is None and A.ndim not in (1, 2):
            raise RuntimeError(f'linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. '
                               f'Got {A.ndim}D.')
        return matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    if ord is None:
        if dim is not None and len(dim) == 2 and A.ndim >= 2:
            return matrix_norm(A, 'fro', dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is not None and len(dim) == 2 or (dim is None and A.ndim == 2):
        return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    if dim is None and A.ndim != 1:
        raise RuntimeError(f'linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. '
                           f'Got {A.ndim}D.')
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


__all__ = ['vector_norm', 'matrix_norm', 'norm', 'inv', 'det', 'slogdet', 'solve', 'cholesky', 'qr', 'eigh', 'svd',
           'LinAlgError', 'cholesky_ex', 'cross', 'eigvalsh', 'inv_ex', 'matrix_power', 'matrix_rank', 'multi_dot',
           'pinv', 'solve_triangular', 'svdvals', 'vecdot', 'matmul', 'cond', 'diagonal', 'householder_product',
           'lstsq', 'lu', 'lu_factor', 'lu_factor_ex', 'lu_solve', 'matrix_exp', 'solve_ex', 'tensorinv',
           'tensorsolve', 'vander', 'eig', 'eigvals', 'ldl_factor', 'ldl_factor_ex', 'ldl_solve']
