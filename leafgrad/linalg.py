"""leafgrad.linalg: linear algebra as ``torch.linalg``."""
from .ops.linalg_decomp import inv, det, slogdet, solve, cholesky, qr, eigh, svd
from .ops.linalg_decomp import (LinAlgError, cholesky_ex, cross, eigvalsh, inv_ex, matrix_power, matrix_rank,  # noqa
                                multi_dot, pinv, solve_triangular, svdvals, vecdot)
from .ops.linalg import matmul  # noqa: F401
