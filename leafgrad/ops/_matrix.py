"""What the linear-algebra families share (linalg_decomp, linalg_solvers, linalg_extra):
LinAlgError, the checks of matrix arguments with PyTorch's messages, transposes and triangles
written with leafgrad ops, out='s rule of the matrix chain products, and the derivative formulas
one family's op borrows from another's, under PyTorch's FunctionsManual names (pinv_jvp,
pinv_backward: lstsq's; cholesky_backward: torch.cholesky's).
"""
from ._op import same_dtype
from ._util import SCALAR_NAMES, _as_output, ops, sum_to, wrap, xp


class LinAlgError(RuntimeError):
    """Raised for singular or non-positive-definite input (``torch.linalg.LinAlgError``, whose class
    PyTorch names ``_LinAlgError``: the name a traceback and ``type(e).__name__`` print)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = '_LinAlgError'
_LinAlgError = LinAlgError  # (the name pickle looks the class up by)


# ---- checks, transposes, masks -------------------------------------------------------------------

# PyTorch's LAPACK kernels have no float16/bfloat16 version: the kernel each function names
_LOW_PRECISION_KERNELS = {'linalg.det': 'lu_cpu', 'linalg.solve': 'lu_cpu', 'linalg.cholesky': 'cholesky_cpu',
                          'linalg.qr': 'geqrf_cpu', 'linalg.eigh': 'linalg_eigh_cpu', 'linalg.svd': 'linalg_svd_cpu',
                          'linalg.solve_triangular': 'triangular_solve_cpu'}


# the functions that take complex matrices (the others refuse them)
_COMPLEX_READY = {'linalg.inv', 'linalg.det', 'linalg.solve', 'linalg.solve_triangular', 'linalg.matrix_power',
                  'linalg.slogdet', 'linalg.cholesky', 'linalg.qr', 'linalg.eigh', 'linalg.svd'}


def refuse_complex(a, name):
    """The functions whose complex matrices leafgrad does not handle yet say so."""
    if a.dtype.kind == 'c':
        raise NotImplementedError(f"{name}: leafgrad's linear algebra takes real matrices only, not complex ones")


def _check_matrix(A, name, square=True):
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f'{name}: The input tensor A must have at least 2 dimensions.')
    if name not in _COMPLEX_READY:
        refuse_complex(a, name)
    if a.dtype.kind not in 'fVc':
        raise RuntimeError(f'{name}: Expected a floating point or complex tensor as input. Got '
                           f'{SCALAR_NAMES.get(a.dtype.name, a.dtype.name)}')
    if a.dtype.itemsize == 2 and name != 'linalg.matrix_power':  # float16 or bfloat16
        label = SCALAR_NAMES[a.dtype.name]
        if name in _LOW_PRECISION_KERNELS:
            raise NotImplementedError(f'"{_LOW_PRECISION_KERNELS[name]}" not implemented for \'{label}\'')
        if name == 'linalg.matrix_rank':
            raise RuntimeError("This function doesn't handle types other than float and double")
        raise RuntimeError(f'{name}: Low precision dtypes not supported. Got {label}')
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f'{name}: A must be batches of square matrices, but they are {a.shape[-2]} by '
                           f'{a.shape[-1]} matrices')


def _mT(t):
    return ops.transpose(t, -2, -1)


def _mH(t):
    """The conjugate transpose (a transpose for a real matrix)."""
    t = ops.transpose(t, -2, -1)
    return t.conj() if t._data.dtype.kind == 'c' else t


def _mask(n, m, k, dtype, lower, like):
    """The constant 0/1 matrix of tril(., k) (or triu) as a tensor (on ``like``'s device)."""
    ones = xp.ones((n, m), dtype=dtype, like=like)
    return wrap(xp.tril(ones, k) if lower else xp.triu(ones, k))


def _tril(t, k=0):
    n, m = t._data.shape[-2:]
    return t * _mask(n, m, k, t._data.dtype, True, t._data)


def _triu(t, k=0):
    n, m = t._data.shape[-2:]
    return t * _mask(n, m, k, t._data.dtype, False, t._data)


def _sum_to_batch(t, shape):
    return sum_to(t, shape) if t._data.shape != shape else t


# ---- out= of multi_dot and chain_matmul ----------------------------------------------------------

_MULTI_DOT_OUT = same_dtype('multi_dot(): expected out tensor to have dtype {result_cpp} but got {out_cpp}')


# ---- derivative formulas -------------------------------------------------------------------------

def pinv_jvp(A, P, dA):
    """PyTorch's pinv_jvp (P = pinv(A)), arranged to multiply the smallest matrices."""
    m, n = A._data.shape[-2:]
    dAh, Ph = _mT(dA), _mT(P)
    if m <= n:
        K = ops.matmul(Ph, dAh)
        return ops.matmul(P, K - _mT(K) - ops.matmul(K, ops.matmul(A, P))) + \
            ops.matmul(dAh - ops.matmul(P, ops.matmul(A, dAh)), ops.matmul(Ph, P))
    K = ops.matmul(P, dA)
    Kh = _mT(K)
    return ops.matmul(Kh - K - ops.matmul(ops.matmul(P, A), Kh), P) + \
        ops.matmul(ops.matmul(P, Ph), dAh - ops.matmul(ops.matmul(dAh, A), P))


def pinv_backward(grad, P, A):
    """PyTorch's pinv_backward (P = pinv(A)): the gradient of A."""
    m, n = A._data.shape[-2:]
    Ph, gh = _mT(P), _mT(grad)
    # (arranged to multiply the smallest matrices)
    if m <= n:
        K = ops.matmul(gh, P)
        KPh = ops.matmul(K, Ph)
        return (-_mT(ops.matmul(P, K)) + KPh - ops.matmul(ops.matmul(A, P), KPh)
                + ops.matmul(ops.matmul(Ph, P), gh - ops.matmul(K, A)))
    K = ops.matmul(P, gh)
    PhK = ops.matmul(Ph, K)
    return (-_mT(ops.matmul(K, P)) + ops.matmul(ops.matmul(gh - ops.matmul(A, K), P), Ph) + PhK
            - ops.matmul(ops.matmul(PhK, P), A))


def cholesky_backward(grad, upper, L):
    """PyTorch's cholesky_backward: the gradient of A = L L^H (of U^H U when ``upper``)."""
    grad = _as_output(grad, L)
    if upper:
        L, grad = _mH(L), _mH(grad)
    # gA = L^{-H} Phi L^{-1}, Phi = 0.5 (tril(L^H gL) + tril(L^H gL, -1)^H)
    phi = _tril(ops.matmul(_mH(L), grad))
    phi = (phi + _mH(_tril(phi, -1))) * 0.5
    left = ops.linalg_solve(_mH(L), phi)                     # L^{-H} Phi
    return _mH(ops.linalg_solve(_mH(L), _mH(left)))         # Y L^{-1} = (L^{-H} Y^H)^H
