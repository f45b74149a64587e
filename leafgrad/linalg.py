"""leafgrad.linalg: linear algebra as ``torch.linalg``."""
from .ops.linalg_decomp import inv, det, slogdet, solve, cholesky, qr, eigh, svd
from .ops.linalg_decomp import LinAlgError, eigvalsh, svdvals  # noqa: F401
from .ops.linalg import matmul  # noqa: F401
