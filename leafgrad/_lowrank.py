"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: randomized low-rank SVD and PCA (Halko,
Martinsson and Tropp, 2009, Algorithms 4.4 and 5.1), step for step as PyTorch's
``torch/_lowrank.py``: the same random draw (``randn(n, q)`` from the global generator), the
same subspace iterations and QR and SVD calls, so that after the same ``manual_seed`` the results
are PyTorch's up to rounding. Differentiable wherever ``linalg.qr`` and ``linalg.svd`` are.
Loaded on first use (``leafgrad.__getattr__``).
"""
from . import creation, linalg
from .backend import float16, float32, float64
from .tensor import Tensor

__all__ = ['get_approximate_basis', 'svd_lowrank', 'pca_lowrank']


def _floating_dtype(A):
    """A's dtype if it is float16, 32 or 64, else float32 (PyTorch's _linalg_utils)."""
    return A.dtype if A.dtype in (float16, float32, float64) else float32


def get_approximate_basis(A, q, niter=2, M=None):
    """Q with ``q`` orthonormal columns such that Q Q^H A approximates A (or A - M, without forming
    it): a random start refined by ``niter`` subspace iterations."""
    niter = 2 if niter is None else niter
    dtype = _floating_dtype(A) if not A.is_complex() else A.dtype
    R = creation.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A.matmul(R)
    if M is not None:
        X = X - M.matmul(R)
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH.matmul(Q)
        if M is not None:
            X = X - M.mH.matmul(Q)
        Q = linalg.qr(X).Q
        X = A.matmul(Q)
        if M is not None:
            X = X - M.matmul(Q)
        Q = linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, of rank ``q`` (a slight overestimate of A's rank).

    >>> import leafgrad
    >>> _ = leafgrad.manual_seed(0)
    >>> A = leafgrad.randn(8, 2, dtype=leafgrad.float64) @ leafgrad.randn(2, 5, dtype=leafgrad.float64)
    >>> U, S, V = leafgrad.svd_lowrank(A, q=3)
    >>> bool(leafgrad.allclose(U @ leafgrad.diag(S) @ V.mT, A))
    True
    """
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # (the algorithm assumes a tall matrix)
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the low-rank SVD of A centred (its column means taken away, ``center``), V's
    columns the principal directions, S ** 2 / (m - 1) the eigenvalues of A^T A / (m - 1)."""
    if not isinstance(A, Tensor):
        raise AttributeError(f"'{type(A).__name__}' object has no attribute 'shape'")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f'q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}')
    if not (niter >= 0):
        raise ValueError(f'niter(={niter}) must be non-negative integer')
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A - C, q, niter=niter, M=None)
