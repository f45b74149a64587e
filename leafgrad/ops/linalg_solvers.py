"""More of ``torch.linalg``: matrix_exp, lstsq, the LU family (lu_factor, lu_factor_ex, lu,
lu_solve, torch.lu_unpack), solve_ex, householder_product, vander, tensorinv, tensorsolve, cond,
diagonal; and torch's cholesky_solve, cholesky_inverse, triangular_solve, geqrf.

Each op is declared once (``_op.Op``); torch.linalg's functions as ``linalg_<name>`` (PyTorch's
names, bound by ``leafgrad.linalg``), torch's own (torch.lu, lu_solve, vander, orgqr, matrix_exp)
as declarations of their own. Forward on NumPy arrays (LU with partial pivoting written here:
NumPy has none); derivatives as PyTorch defines them (FunctionsManual), written with leafgrad ops
(siblings through ``ops``) so that they differentiate again. Matrices are real: every ``^H`` is a
transpose.
"""
import math

import warnings

from .. import return_types
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ._op import Op, out_rule, safely_castable, user_stacklevel, write_outs
from ._util import SCALAR_NAMES, autocast, ops, record, record_many, saved_output, wrap, wrap_dim, xp
from ._matrix import (LinAlgError, _check_matrix, _mT, _sum_to_batch, _tril, _triu, pinv_backward, pinv_jvp,
                      refuse_complex)
from .._arg_parser import refuse_arguments


def _needs(node, i):
    return node.next_functions[i][0] is not None


# ---- matrix_exp -----------------------------------------------------------------------------------

def _expm(a):
    """exp of each square matrix in ``a`` by scaling and squaring: Taylor to degree 18 of
    A / 2^s with ||A / 2^s||_1 <= 1/2, then s squarings (accurate to a few ulp in float64)."""
    work = a.astype(xp.complex128 if a.dtype.kind == 'c' else xp.float64)
    flat = work.reshape((-1,) + a.shape[-2:])
    out = xp.empty_like(flat)
    n = a.shape[-1]
    eye = xp.eye(n, like=flat)
    for b in range(flat.shape[0]):
        m = flat[b]
        norm = xp.abs(m).sum(0).max() if n else 0.0
        s = max(0, int(math.ceil(math.log2(norm / 0.5)))) if norm > 0.5 and xp.isfinite(norm) else 0
        m = m / (2.0 ** s)
        result = eye.copy()
        for k in range(18, 0, -1):  # Horner: I + M/1 (I + M/2 (I + ...))
            result = eye + (m @ result) / k
        for _ in range(s):
            result = result @ result
        out[b] = result
    return out.reshape(a.shape).astype(a.dtype)


def _frechet_exp(A, E):
    """The Frechet derivative of exp at A applied to E: the top-right block of exp([[A, E], [0, A]]),
    written with matrix_exp itself so that it differentiates again."""
    big = ops.cat([ops.cat([A, E], -1), ops.cat([E * 0, A], -1)], -2)
    n = A._data.shape[-1]
    return ops.narrow(ops.narrow(ops.linalg_matrix_exp(big), -2, 0, n), -1, n, n)


class LinalgMatrixExp(Op):
    """linalg.matrix_exp(A): the matrix exponential sum_k A^k / k! of each square matrix."""
    op, node, method, public = 'linalg_matrix_exp', 'LinalgMatrixExpBackward0', False, False
    saved = ('self',)
    __slots__ = ()

    def forward(A):
        """The matrix exponential sum_k A^k / k! of each square matrix."""
        a = A._data
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            raise RuntimeError(f'linalg.matrix_exp: A must be batches of square matrices, but they are '
                               f'{a.shape[-2] if a.ndim >= 2 else 1} by {a.shape[-1] if a.ndim else 1} matrices'
                               if a.ndim >= 2 else
                               'linalg.matrix_exp: The input tensor A must have at least 2 dimensions.')
        if a.dtype.kind not in 'fVc':
            raise RuntimeError(f'linalg.matrix_exp: Expected a floating point or complex tensor as input. Got '
                               f'{SCALAR_NAMES[a.dtype.name]}')
        out, node = record(_expm(a), LinalgMatrixExp, (A,))
        if node is not None:
            node.save(A)
        return out

    def jvp(self, tangents):  # d exp(A) = the Frechet derivative at A applied to dA
        (A,) = self.saved_tensors
        return _frechet_exp(A, tangents[0])

    def apply(self, grad):  # the Frechet derivative at A^T applied to grad
        (A,) = self.saved_tensors
        return _frechet_exp(_mT(A), grad),


class MatrixExp(Op):
    """matrix_exp(input): linalg.matrix_exp's (its node)."""
    op = 'matrix_exp'

    def forward(input):
        """The matrix exponential sum_k A^k / k! of each square matrix."""
        try:
            return ops.linalg_matrix_exp(input)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


# ---- lstsq ------------------------------------------------------------------------------------------

_LSTSQ_DRIVERS = ('gels', 'gelsy', 'gelsd', 'gelss')


def _lstsq_out(name, out, result, differentiable=True):
    """linalg.lstsq's out=: four tensors; solution and residuals checked as PyTorch checks them (both
    under the name 'solution'), singular_values too, rank of any dtype."""
    solution = safely_castable('torch.linalg.lstsq', 'solution')
    return write_outs('linalg_lstsq', out, result,
                      (solution, solution, None, safely_castable('torch.linalg.lstsq', 'singular_values')),
                      (True, True, False, False))


class LinalgLstsq(Op):
    """linalg.lstsq(A, B, rcond=None, *, driver=None, out=None): (solution, residuals, rank,
    singular_values) of min ||A X - B||, as PyTorch's CPU computes them."""
    op, node, method, public = 'linalg_lstsq', 'LinalgLstsqBackward0', False, False
    out = _lstsq_out
    saved = ('self', 'b')
    __slots__ = ('vector', 'a_shape', 'b_shape', 'residuals')

    def forward(A, B, rcond=None, *, driver=None):
        """(solution, residuals, rank, singular_values) of min ||A X - B||: the minimum-norm
        solution; residuals (squared, per column) when A is tall and of full rank and the driver is
        not gelsy; rank for gelsy, gelsd, gelss; singular values for gelsd, gelss (as PyTorch's CPU)."""
        return _lstsq(A, B, rcond, driver)

    def jvp(self, tangents):
        """PyTorch's linalg_lstsq_jvp: X = pinv(A) B, dX = dpinv(A) B + pinv(A) dB; the residuals
        ||A X - B||^2 (at the optimum A^T (A X - B) = 0) change by 2 (A X - B) . (dA X - dB)."""
        tA, tB = tangents
        A, B = self.saved_tensors
        b = ops.unsqueeze(B, -1) if self.vector else B
        P = ops.linalg_pinv(A)
        dX = None
        if tA is not None:
            dX = ops.matmul(pinv_jvp(A, P, tA), b)
        if tB is not None:
            part = ops.matmul(P, ops.unsqueeze(tB, -1) if self.vector else tB)
            dX = part if dX is None else dX + part
        X = ops.matmul(P, b)
        dr = None
        if self.residuals:  # (computed for a tall A of full rank, driver not gelsy)
            r = ops.matmul(A, X) - b
            dr = (ops.matmul(tA, X) if tA is not None else 0) - (
                (ops.unsqueeze(tB, -1) if self.vector else tB) if tB is not None else 0)
            dr = ops.sum(r * dr, -2) * 2
        return (ops.squeeze(dX, -1) if self.vector else dX), dr, None, None

    def apply(self, grad, grad_residuals=None, *unused):
        # solution = pinv(A) B: the derivative through pinv's; residuals = ||A X - B||^2 at the
        # optimum X, whose derivatives are 2 (A X - B) X^T and -2 (A X - B)
        A, B = self.saved_tensors
        if grad_residuals is not None and grad_residuals._data.size == 0:
            grad_residuals = None
        b = ops.unsqueeze(B, -1) if self.vector else B
        P = ops.linalg_pinv(A)
        gA = gB = None
        if grad is not None:
            g = ops.unsqueeze(grad, -1) if self.vector else grad
            if _needs(self, 0):
                gP = _sum_to_batch(ops.matmul(g, _mT(b)), P._data.shape)
                gA = pinv_backward(gP, P, A)
            if _needs(self, 1):
                gB = ops.matmul(_mT(P), g)
        if grad_residuals is not None:
            X = ops.matmul(P, b)
            r = ops.matmul(A, X) - b
            gr = ops.unsqueeze(grad_residuals, -2)
            if _needs(self, 0):
                part = ops.matmul(r * gr * 2, _mT(X))
                gA = part if gA is None else gA + part
            if _needs(self, 1):
                part = -2 * r * gr
                gB = part if gB is None else gB + part
        if gA is not None:
            gA = _sum_to_batch(gA, self.a_shape)
        if gB is not None:
            gB = _sum_to_batch(ops.squeeze(gB, -1) if self.vector else gB, self.b_shape)
        return gA, gB


def _lstsq(A, B, rcond, driver):
    a, b = A._data, B._data
    refuse_complex(a, 'linalg.lstsq')
    if a.ndim < 2:
        raise RuntimeError('torch.linalg.lstsq: input must have at least 2 dimensions.')
    if b.ndim < 1:
        raise RuntimeError('torch.linalg.lstsq: other must have at least 1 dimension.')
    if a.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {SCALAR_NAMES[a.dtype.name]} and other's dtype {SCALAR_NAMES[b.dtype.name]}")
    if a.dtype.kind != 'f' or a.dtype.itemsize < 4:
        raise RuntimeError(f'torch.linalg.lstsq: Expected a floating point or complex tensor as input. Got '
                           f'{SCALAR_NAMES[a.dtype.name]}')
    vector = b.ndim == a.ndim - 1
    if not (a.ndim >= b.ndim and a.ndim - b.ndim <= 1):
        raise RuntimeError('torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and '
                           '(input.dim() - other.dim()) <= 1')
    bm = b[..., None] if vector else b
    if a.shape[-2] != bm.shape[-2]:
        raise RuntimeError('torch.linalg.lstsq: input.size(-2) should match other.size(-2)' if not vector else
                           'torch.linalg.lstsq: input.size(-2) should match other.size(-1)')
    if driver is None:
        driver = 'gelsy'
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError('torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)')
    m, n = a.shape[-2:]
    if rcond is None:
        rcond = xp.finfo(a.dtype).eps * max(m, n)
    batch = xp.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    af = xp.broadcast_to(a, batch + a.shape[-2:]).reshape((-1, m, n)).astype(xp.float64)
    bf = xp.broadcast_to(bm, batch + bm.shape[-2:]).reshape((-1, m, bm.shape[-1])).astype(xp.float64)
    k = bm.shape[-1]
    sol = xp.empty((af.shape[0], n, k), like=af)
    ranks = xp.empty(af.shape[0], dtype=xp.int64, like=af)
    svals = xp.empty((af.shape[0], min(m, n)), like=af)
    for i in range(af.shape[0]):
        sol[i], _, ranks[i], svals[i] = xp.linalg.lstsq(af[i], bf[i], rcond=rcond)
    solution = sol.reshape(batch + (n, k))
    if vector:
        solution = solution[..., 0]
    full_rank = bool((ranks == min(m, n)).all())
    if m > n and full_rank and driver != 'gelsy':
        resid = ((xp.matmul(af, sol) - bf) ** 2).sum(-2).reshape(batch + (k,))
        residuals = resid  # (a vector B too keeps its column: shape (..., 1), as PyTorch)
    else:
        residuals = xp.zeros((0,), like=af)
    rank = ranks.reshape(batch) if driver != 'gels' else xp.zeros((0,), dtype=xp.int64, like=af)
    singular = svals.reshape(batch + (min(m, n),)) if driver in ('gelsd', 'gelss') else xp.zeros((0,), like=af)
    outs, node = record_many([solution.astype(a.dtype), residuals.astype(a.dtype), rank, singular.astype(a.dtype)],
                             LinalgLstsq, (A, B), differentiable=(True, True, False, False))
    if node is not None:
        node.vector, node.a_shape, node.b_shape = vector, a.shape, b.shape
        node.residuals = residuals.size > 0
        node.save(A, B)
    return return_types.linalg_lstsq(*outs)


# ---- LU: factor, unpack, solve --------------------------------------------------------------------

def _lu_arrays(a, pivot=True):
    """(LU packed, 1-based LAPACK pivots as int32, info) of each matrix of ``a`` by Gaussian
    elimination with partial pivoting (the first largest |pivot| wins, as getrf)."""
    lu = a.astype(xp.float64, copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = lu.reshape((-1, m, n))
    piv = xp.empty((flat.shape[0], k), dtype=xp.int32, like=flat)
    info = xp.zeros(flat.shape[0], dtype=xp.int32, like=flat)
    rows = xp.arange(flat.shape[0], like=flat)
    for j in range(k):
        p = j + xp.argmax(xp.abs(flat[:, j:, j]), axis=1) if pivot else xp.full(flat.shape[0], j, like=flat)
        piv[:, j] = p + 1
        top = flat[rows, j].copy()
        flat[rows, j] = flat[rows, p]
        flat[rows, p] = top
        d = flat[:, j, j]
        zero = d == 0
        info[(info == 0) & zero] = j + 1
        with xp.errstate(all='ignore'):
            flat[:, j + 1:, j] = xp.where(zero[:, None], flat[:, j + 1:, j], flat[:, j + 1:, j] / d[:, None])
        flat[:, j + 1:, j + 1:] -= flat[:, j + 1:, j:j + 1] * flat[:, j:j + 1, j + 1:]
    return (flat.reshape(a.shape).astype(a.dtype), piv.reshape(a.shape[:-2] + (k,)),
            info.reshape(a.shape[:-2]))


def _permutation(piv, m, dtype):
    """The permutation matrices P (A = P L U) of LAPACK's sequential row swaps."""
    flat = piv.reshape((-1, piv.shape[-1]))
    perms = xp.tile(xp.arange(m, like=flat), (flat.shape[0], 1))
    batch = xp.arange(flat.shape[0], like=flat)
    if type(flat) is xp.ndarray:
        for b in range(flat.shape[0]):
            for j, p in enumerate(flat[b]):
                perms[b, [j, p - 1]] = perms[b, [p - 1, j]]
    else:  # (on a GPU: no element-by-element reads; swap j with p - 1 in every matrix at once)
        for j in range(flat.shape[-1]):
            p = flat[:, j].astype(xp.int64) - 1
            pj, pp = perms[:, j].copy(), perms[batch, p]
            perms[:, j], perms[batch, p] = pp, pj
    P = xp.zeros((flat.shape[0], m, m), dtype=dtype, like=flat)
    P[batch[:, None], perms, xp.arange(m, like=flat)[None, :]] = 1
    return P.reshape(piv.shape[:-1] + (m, m))


def _unpack(LU):
    """L (unit lower, m x k) and U (upper, k x n) of a packed LU tensor, as leafgrad ops."""
    m, n = LU._data.shape[-2:]
    k = min(m, n)
    L = _tril(ops.narrow(LU, -1, 0, k), -1) + wrap(xp.eye(m, k, dtype=LU._data.dtype, like=LU._data))
    U = _triu(ops.narrow(LU, -2, 0, k))
    return L, U


def _lu_backward(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward: the gradient of A = P L U from those of L and U."""
    cat = ops.cat
    m, n = L._data.shape[-2], U._data.shape[-1]
    k = min(m, n)
    if m == n:
        phi = _square_phi(gL, gU, L, U)
        inner = _square_solve(phi, L, U)
        return ops.matmul(P, inner)
    if m < n:  # wide: U = [U1 | U2], U2 = L^{-1} P^T A2
        U1, U2 = ops.narrow(U, -1, 0, k), ops.narrow(U, -1, k, n - k)
        gU1 = ops.narrow(gU, -1, 0, k) if gU is not None else None
        gU2 = ops.narrow(gU, -1, k, n - k) if gU is not None else None
        gA2 = None
        if gU2 is not None:
            gA2 = ops.linalg_solve_triangular(_mT(L), gU2, upper=True, unitriangular=True)   # L^{-T} gU2
            extra = -ops.matmul(gA2, _mT(U2))
            gL = extra if gL is None else gL + extra
        inner = _square_solve(_square_phi(gL, gU1, L, U1), L, U1)
        if gA2 is None:
            gA2 = wrap(xp.zeros(U2._data.shape, dtype=U._data.dtype, like=U._data))
        return ops.matmul(P, cat([inner, gA2], -1))
    # tall: L = [L1; L2], L2 = A2 U^{-1}
    L1, L2 = ops.narrow(L, -2, 0, k), ops.narrow(L, -2, k, m - k)
    gL1 = ops.narrow(gL, -2, 0, k) if gL is not None else None
    gL2 = ops.narrow(gL, -2, k, m - k) if gL is not None else None
    gA2 = None
    if gL2 is not None:
        gA2 = ops.linalg_solve_triangular(_mT(U), gL2, upper=False, left=False)              # gL2 U^{-T}
        extra = -ops.matmul(_mT(L2), gA2)
        gU = extra if gU is None else gU + extra
    inner = _square_solve(_square_phi(gL1, gU, L1, U), L1, U)
    if gA2 is None:
        gA2 = wrap(xp.zeros(L2._data.shape, dtype=L._data.dtype, like=L._data))
    return ops.matmul(P, cat([inner, gA2], -2))


def _square_phi(gL, gU, L, U):
    phi = None
    if gL is not None:
        phi = _tril(ops.matmul(_mT(L), gL), -1)
    if gU is not None:
        up = _triu(ops.matmul(gU, _mT(U)))
        phi = up if phi is None else phi + up
    if phi is None:
        n = L._data.shape[-1]
        phi = wrap(xp.zeros(L._data.shape[:-2] + (n, n), dtype=L._data.dtype, like=L._data))
    return phi


def _square_solve(phi, L, U):
    """L^{-T} phi U^{-T}."""
    x = ops.linalg_solve_triangular(_mT(U), phi, upper=False, left=False)
    return ops.linalg_solve_triangular(_mT(L), x, upper=True, unitriangular=True)


def _check_lu_input(A, name):
    a = A._data
    refuse_complex(a, name)
    if a.ndim < 2:
        raise RuntimeError(f'{name}: Expected tensor with 2 or more dimensions. Got size: {list(a.shape)} instead')
    if a.dtype.kind not in 'f' or a.dtype.itemsize < 4:
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{SCALAR_NAMES[a.dtype.name]}\'')


def _lu_factorization(A, pivot, name):
    """What linalg.lu_factor_ex and linalg.lu share: A (float32 under autocast) and LAPACK's
    P A = L U of it, (A, LU packed, 1-based int32 pivots, info), after PyTorch's checks (``name``:
    the function its messages name)."""
    if autocast.state.on:
        A, = autocast.fp32(A)
    _check_lu_input(A, name)
    if not pivot:
        raise RuntimeError('linalg.lu_factor: LU without pivoting is not implemented on the CPU')
    return (A,) + _lu_arrays(A._data)


def _zero_pivot_error(info, ndim, function):
    """PyTorch's error for the first matrix whose U has a zero pivot (``info``: its index, 1-based,
    per matrix; 0: none), from ``function`` (torch.linalg.lu_factor or _ex): a RuntimeError, not
    the LinAlgError of the other decompositions (PyTorch raises it with TORCH_CHECK)."""
    flat = info.reshape(-1)
    b = int(xp.argmax(flat != 0))
    prefix = f'(Batch element {b}): ' if ndim > 2 else ''
    return RuntimeError(f'{function}: {prefix}U[{flat[b]},{flat[b]}] is zero and using it on lu_solve would result in '
                       'a division by zero. If you still want to perform the factorization, consider calling '
                       'linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)')


class LinalgLuFactorEx(Op):
    """linalg.lu_factor_ex(A, *, pivot=True, check_errors=False, out=None): (LU, pivots, info),
    P A = L U packed in one matrix, LAPACK's 1-based int32 row swaps, and per matrix the first zero
    pivot's 1-based index (0: none)."""
    op, node, method, public = 'linalg_lu_factor_ex', 'LinalgLuFactorExBackward0', False, False
    out = out_rule('linalg_lu_factor_ex', differentiable=(True, False, False))
    # (no __slots__: a multi-output node)

    def forward(A, *, pivot=True, check_errors=False):
        """(LU, pivots, info): P A = L U packed in one matrix, LAPACK's 1-based int32 row swaps, and
        per matrix the first zero pivot's 1-based index (0: none)."""
        A, lu, piv, info = _lu_factorization(A, pivot, 'torch.lu_factor')
        a = A._data
        if check_errors and info.any():
            raise _zero_pivot_error(info, a.ndim, 'torch.linalg.lu_factor_ex')
        outs, node = record_many([lu, piv, info], LinalgLuFactorEx, (A,), differentiable=(True, False, False))
        if node is not None:
            node.save(saved_output(outs[0]), wrap(_permutation(piv, a.shape[-2], a.dtype)))
        return return_types.linalg_lu_factor_ex(*outs)

    def jvp(self, tangents):  # the packed tangent of L and U
        LU, P = self.saved_tensors
        L, U = _unpack(LU)
        dL, dU = _lu_jvp(tangents[0], P, L, U)
        k = min(LU._data.shape[-2:])
        m, n = LU._data.shape[-2:]
        if m == n:
            return _tril(dL, -1) + dU, None, None
        if m > n:  # LU = [L1 + U - I; L2]
            return ops.cat([_tril(ops.narrow(dL, -2, 0, k), -1) + dU, ops.narrow(dL, -2, k, m - k)], -2), None, \
                None
        return ops.cat([_tril(dL, -1) + ops.narrow(dU, -1, 0, k), ops.narrow(dU, -1, k, n - k)], -1), None, None

    def apply(self, grad, *unused):
        LU, P = self.saved_tensors
        L, U = _unpack(LU)
        k = min(LU._data.shape[-2:])
        gL = _tril(ops.narrow(grad, -1, 0, k), -1)
        gU = _triu(ops.narrow(grad, -2, 0, k))
        return _lu_backward(gL, gU, P, L, U),


def _lu_jvp(dA, P, L, U):
    """PyTorch's linalg_lu_jvp: the tangents of L and U of A = P L U, k = min(m, n)."""
    m, n = L._data.shape[-2], U._data.shape[-1]
    k = min(m, n)
    dA = ops.matmul(_mT(P), dA)
    if m == n:
        X = ops.linalg_solve_triangular(L, dA, upper=False, unitriangular=True)
        X = ops.linalg_solve_triangular(U, X, upper=True, left=False)          # L^-1 P^T dA U^-1
        return ops.matmul(L, _tril(X, -1)), ops.matmul(_triu(X), U)
    if m < n:  # wide: U = [U1 | U2]
        U1 = ops.narrow(U, -1, 0, k)
        dA1, dA2 = ops.narrow(dA, -1, 0, k), ops.narrow(dA, -1, k, n - k)
        X = ops.linalg_solve_triangular(L, dA1, upper=False, unitriangular=True)
        X = ops.linalg_solve_triangular(U1, X, upper=True, left=False)
        dL = ops.matmul(L, _tril(X, -1))
        dU1 = ops.matmul(_triu(X), U1)
        # U2 = L^-1 A2: dU2 = L^-1 (dA2 - dL U2)
        dU2 = ops.linalg_solve_triangular(L, dA2 - ops.matmul(dL, ops.narrow(U, -1, k, n - k)), upper=False,
                                          unitriangular=True)
        return dL, ops.cat([dU1, dU2], -1)
    # tall: L = [L1; L2]
    L1 = ops.narrow(L, -2, 0, k)
    dA1, dA2 = ops.narrow(dA, -2, 0, k), ops.narrow(dA, -2, k, m - k)
    X = ops.linalg_solve_triangular(L1, dA1, upper=False, unitriangular=True)
    X = ops.linalg_solve_triangular(U, X, upper=True, left=False)
    dL1 = ops.matmul(L1, _tril(X, -1))
    dU = ops.matmul(_triu(X), U)
    # L2 = A2 U^-1: dL2 = (dA2 - L2 dU) U^-1
    dL2 = ops.linalg_solve_triangular(U, dA2 - ops.matmul(ops.narrow(L, -2, k, m - k), dU), upper=True, left=False)
    return ops.cat([dL1, dL2], -2), dU


class LinalgLuFactor(Op):
    """linalg.lu_factor(A, *, pivot=True, out=None): (LU, pivots); a singular matrix raises
    RuntimeError, as PyTorch's."""
    op, method, public = 'linalg_lu_factor', False, False
    out = out_rule('linalg_lu_factor_ex', differentiable=(True, False), label='linalg_lu_factor')

    def forward(A, *, pivot=True):
        """(LU, pivots); a singular matrix raises RuntimeError, as PyTorch's."""
        LU, piv, info = ops.linalg_lu_factor_ex(A, pivot=pivot)
        if info._data.any():
            raise _zero_pivot_error(info._data, A._data.ndim, 'torch.linalg.lu_factor')
        return return_types.linalg_lu_factor(LU, piv)


class LinalgLu(Op):
    """linalg.lu(A, *, pivot=True, out=None): (P, L, U) with A = P L U, L unit lower (m x k), U
    upper (k x n), k = min(m, n)."""
    op, node, method, public = 'linalg_lu', 'LinalgLuBackward0', False, False
    out = out_rule('linalg_lu', differentiable=(False, True, True))
    saved = ('P', 'L', 'U')
    saved_outputs = ('P',)  # (an output, kept as a tensor: it carries no gradient)

    def forward(A, *, pivot=True):
        """(P, L, U) with A = P L U: L unit lower (m x k), U upper (k x n), k = min(m, n)."""
        A, lu_a, piv, _ = _lu_factorization(A, pivot, 'linalg.lu')
        a = A._data
        m, n = a.shape[-2:]
        k = min(m, n)
        L = xp.tril(lu_a[..., :, :k], -1) + xp.eye(m, k, dtype=a.dtype, like=lu_a)
        U = xp.triu(lu_a[..., :k, :])
        P = _permutation(piv, m, a.dtype)
        outs, node = record_many([P, L, U], LinalgLu, (A,), differentiable=(False, True, True))
        if node is not None:
            node.save(wrap(P), saved_output(outs[1]), saved_output(outs[2]))
        return return_types.linalg_lu(*outs)

    def jvp(self, tangents):
        P, L, U = self.saved_tensors
        dL, dU = _lu_jvp(tangents[0], P, L, U)
        return None, dL, dU

    def apply(self, gP, gL, gU):
        P, L, U = self.saved_tensors
        return _lu_backward(gL, gU, P, L, U),


class LuUnpack(Op):
    """lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None): (P, L, U)
    from lu_factor's packed LU and pivots."""
    op, node, method = 'lu_unpack', 'LuUnpackBackward0', False
    out = out_rule('lu_unpack', differentiable=(False, True, True))
    # (no __slots__: a multi-output node)

    def forward(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
        """(P, L, U) from lu_factor's packed LU and pivots."""
        lu_a, piv = LU_data._data, LU_pivots._data
        if piv.dtype != xp.int32:
            raise RuntimeError('torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. '
                               'Note: this function is intended to be used with the output produced by '
                               'torch.linalg.lu_factor')
        m, n = lu_a.shape[-2:]
        k = min(m, n)
        empty = xp.zeros((0,), dtype=lu_a.dtype, like=lu_a)
        L = xp.tril(lu_a[..., :, :k], -1) + xp.eye(m, k, dtype=lu_a.dtype, like=lu_a) if unpack_data else empty
        U = xp.triu(lu_a[..., :k, :]) if unpack_data else empty
        P = _permutation(piv, m, lu_a.dtype) if unpack_pivots else empty
        outs, node = record_many([P, L, U], LuUnpack, (LU_data, LU_pivots),
                                 differentiable=(False, unpack_data, unpack_data))
        if node is not None:
            node.lu_shape = lu_a.shape
        return return_types.lu_unpack(*outs)

    def jvp(self, tangents):  # L and U read their triangles of LU: their tangents are those triangles
        dLU = tangents[0]
        m, n = self.lu_shape[-2:]
        k = min(m, n)
        return None, _tril(ops.narrow(dLU, -1, 0, k), -1), _triu(ops.narrow(dLU, -2, 0, k))

    def apply(self, gP, gL, gU):
        m, n = self.lu_shape[-2:]
        k = min(m, n)
        lead = (slice(None),) * (len(self.lu_shape) - 2)
        total = None
        if gL is not None:
            total = ops.index_put_embed(_tril(gL, -1), self.lu_shape, lead + (slice(None), slice(0, k)))
        if gU is not None:
            part = ops.index_put_embed(_triu(gU), self.lu_shape, lead + (slice(0, k), slice(None)))
            total = part if total is None else total + part
        return total, None


class LinalgLuSolve(Op):
    """linalg.lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None): X with A X = B
    (left=False: X A = B; adjoint: A^T in place of A) from lu_factor's output."""
    op, node, method, public = 'linalg_lu_solve', 'LinalgLuSolveBackward0', False, False
    out = out_rule('linalg_lu_solve')
    __slots__ = ('left', 'adjoint')

    def forward(LU, pivots, B, *, left=True, adjoint=False):
        """X with A X = B (left=False: X A = B; adjoint: A^T in place of A) from lu_factor's output."""
        lu_a, b = LU._data, B._data
        if lu_a.ndim < 2:
            raise RuntimeError('linalg.lu_solve: The input tensor LU must have at least 2 dimensions.')
        if lu_a.shape[-1] != lu_a.shape[-2]:
            raise RuntimeError(f'linalg.lu_solve: A must be batches of square matrices, but they are '
                               f'{lu_a.shape[-2]} by {lu_a.shape[-1]} matrices')
        n = lu_a.shape[-1]
        if b.ndim < 2:
            raise RuntimeError('linalg.lu_solve: The input tensor B must have at least 2 dimensions.')
        if (b.shape[-2] if left else b.shape[-1]) != n:
            raise RuntimeError(f'linalg.lu_solve: Incompatible shapes of A and B for the equation '
                               f'{"AX = B" if left else "XA = B"} ({n}x{n} and {b.shape[-2] if b.ndim > 1 else 1}x'
                               f'{b.shape[-1]})')
        P = wrap(_permutation(pivots._data, n, lu_a.dtype))
        L, U = _unpack(wrap(lu_a))
        with no_grad():
            Bl = wrap(b) if left else _mT(wrap(b))
            X = _lu_solve_tensors(L, U, P, Bl, adjoint != (not left))
            X = X if left else _mT(X)
        out, node = record(xp.ascontiguousarray(X._data), LinalgLuSolve, (LU, pivots, B))
        if node is not None:
            node.left, node.adjoint = left, adjoint
            node.save(LU, P, saved_output(out))
        return out

    def jvp(self, tangents):
        """A = P L U packed in LU: dA = P (dL U + L dU), dL and dU LU's tangent's triangles; then
        op(A) dX = dB - op(dA) X (left; X op(A) = B - X op(dA) for left=False)."""
        dLU, _, dB = tangents
        LU, P, X = self.saved_tensors
        L, U = _unpack(LU)
        rhs = dB
        if dLU is not None:
            dA = ops.matmul(P, ops.matmul(_tril(dLU, -1), U) + ops.matmul(L, _triu(dLU)))
            if self.adjoint:
                dA = _mT(dA)
            product = ops.matmul(dA, X) if self.left else ops.matmul(X, dA)
            rhs = -product if rhs is None else rhs - product
        return ops.linalg_lu_solve(LU, _pivots_of(P), rhs, left=self.left, adjoint=self.adjoint)

    def apply(self, grad):
        LU, P, X = self.saved_tensors
        if not self.left:  # X A = B  <=>  A^T X^T = B^T: the left case on transposes
            grad, X = _mT(grad), _mT(X)
        adjoint = self.adjoint != (not self.left)
        L, U = _unpack(LU)
        gLU = gB = None
        # gB = A^{-T} grad (adjoint: A^{-1} grad)
        gBl = _lu_solve_tensors(L, U, P, grad, not adjoint)
        if _needs(self, 2):
            gB = gBl if self.left else _mT(gBl)
        if _needs(self, 0):
            if not adjoint:   # X = U^{-1} L^{-1} P^T B
                R = ops.linalg_solve_triangular(_mT(U), grad, upper=False)                    # U^{-T} g
                gU = -ops.matmul(R, _mT(X))
                gL = -ops.matmul(ops.linalg_solve_triangular(_mT(L), R, upper=True, unitriangular=True), _mT(ops.matmul(U, X)))
            else:             # X = P L^{-T} U^{-T} B
                gP = ops.matmul(_mT(P), grad)
                Y = ops.matmul(_mT(P), X)                                             # L^{-T} U^{-T} B
                Z = ops.matmul(_mT(L), Y)                                             # U^{-T} B
                W = ops.linalg_solve_triangular(L, gP, upper=False, unitriangular=True)       # L^{-1} gP
                gL = -ops.matmul(Y, _mT(W))
                gU = -ops.matmul(Z, _mT(ops.linalg_solve_triangular(U, W, upper=True)))
            gLU = _tril(gL, -1) + _triu(gU)
        return gLU, None, gB


def _lu_solve_tensors(L, U, P, B, adjoint):
    if not adjoint:
        y = ops.linalg_solve_triangular(L, ops.matmul(_mT(P), B), upper=False, unitriangular=True)
        return ops.linalg_solve_triangular(U, y, upper=True)
    y = ops.linalg_solve_triangular(_mT(U), B, upper=False)
    return ops.matmul(P, ops.linalg_solve_triangular(_mT(L), y, upper=True, unitriangular=True))


def _pivots_of(P):
    """LAPACK's 1-based sequential row swaps of permutation matrices P (A = P L U): the pivots
    lu_solve takes."""
    perm = xp.argmax(P._data, axis=-2)  # column j of P has its 1 in row perm[j]
    flat = perm.reshape((-1, perm.shape[-1]))
    piv = xp.empty(flat.shape, dtype=xp.int32, like=flat)
    if type(flat) is not xp.ndarray:  # (on a GPU: no element-by-element reads; every matrix at once)
        batch = xp.arange(flat.shape[0], like=flat)
        rows = xp.tile(xp.arange(flat.shape[-1], like=flat), (flat.shape[0], 1))  # rows[b, i]: the row at i
        where = rows.copy()                                                      # where[b, r]: row r's position
        for j in range(flat.shape[-1]):
            target = flat[:, j]
            i = where[batch, target]
            piv[:, j] = i + 1
            moved = rows[:, j].copy()  # (row j goes to position i, the target row to position j)
            rows[batch, i], rows[:, j] = moved, target
            where[batch, moved], where[batch, target] = i, j
        return wrap(piv.reshape(perm.shape))
    for b in range(flat.shape[0]):
        rows = list(range(flat.shape[-1]))           # rows[i]: the original row now at position i
        where = {r: i for i, r in enumerate(rows)}
        for j in range(flat.shape[-1]):
            target = int(flat[b, j])
            i = where[target]
            piv[b, j] = i + 1
            rows[i], rows[j] = rows[j], rows[i]
            where[rows[i]], where[rows[j]] = i, j
    return wrap(piv.reshape(perm.shape))


# ---- solve_ex, householder_product ---------------------------------------------------------------

class LinalgSolveEx(Op):
    """linalg.solve_ex(A, B, *, left=True, check_errors=False, out=None): (result, info), solve's
    result; info 0, or where a singular matrix has its zero pivot."""
    op, method, public = 'linalg_solve_ex', False, False
    out = out_rule('_linalg_solve_ex', differentiable=(True, False), label='linalg_solve_ex')

    def forward(A, B, *, left=True, check_errors=False):
        """(result, info): solve's result; info 0, or where a singular matrix has its zero pivot."""
        try:
            return return_types.linalg_solve_ex(ops.linalg_solve(A, B, left=left),
                                                wrap(xp.zeros(A._data.shape[:-2], xp.int32, like=A._data)))
        except LinAlgError:
            if check_errors:
                raise
            _, _, info = _lu_arrays(A._data)
            shape = xp.broadcast_shapes(A._data.shape[:-2], B._data.shape[:-2 if B._data.ndim >= 2 else 0])
            with xp.errstate(all='ignore'):
                nan = xp.full(shape + B._data.shape[-2:] if B._data.ndim >= 2 else B._data.shape, xp.nan,
                              dtype=A._data.dtype, like=A._data)
            return return_types.linalg_solve_ex(wrap(nan), wrap(info))


class LinalgHouseholderProduct(Op):
    """linalg.householder_product(A, tau, *, out=None): the first n columns of H_1 ... H_k,
    H_i = I - tau_i v_i v_i^T (v_i from A's columns below the diagonal): the Q of a QR
    factorisation in geqrf's form."""
    op, node, method, public = 'linalg_householder_product', 'LinalgHouseholderProductBackward0', False, False
    out = out_rule('linalg_householder_product', safely_castable('torch.linalg.householder_product'))
    saved = ('input', 'tau')
    __slots__ = ()

    def forward(A, tau):
        """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T (v_i from A's columns below
        the diagonal): the Q of a QR factorisation in geqrf's form."""
        return _householder_product(A, tau)

    def jvp(self, tangents):
        """Q_i = Q_{i-1} H_i, H_i = I - tau_i v_i v_i^T: dQ_i = dQ_{i-1} H_i + Q_{i-1} dH_i, with
        dH_i = -(dtau_i v_i v_i^T + tau_i (dv_i v_i^T + v_i dv_i^T)), dv_i the tangent's column i
        below the diagonal; the first n columns of dQ_k."""
        dA, dtau = tangents
        A, tau = self.saved_tensors
        m, n = A._data.shape[-2:]
        V = _householder_vectors(A)
        dV = _tril(dA, -1) if dA is not None else None
        Q = wrap(xp.broadcast_to(xp.eye(m, dtype=A._data.dtype, like=A._data), A._data.shape[:-2] + (m, m)).copy())
        dQ = None
        for i in range(tau._data.shape[-1]):
            v = ops.unsqueeze(ops.select(V, -1, i), -1)
            t = ops.unsqueeze(ops.unsqueeze(ops.select(tau, -1, i), -1), -1)
            dH = None
            if dtau is not None:
                dt = ops.unsqueeze(ops.unsqueeze(ops.select(dtau, -1, i), -1), -1)
                dH = -dt * ops.matmul(v, _mT(v))
            if dV is not None:
                dv = ops.unsqueeze(ops.select(dV, -1, i), -1)
                part = -t * (ops.matmul(dv, _mT(v)) + ops.matmul(v, _mT(dv)))
                dH = part if dH is None else dH + part
            step = ops.matmul(Q, dH)
            if dQ is not None:
                step = step + _reflect(dQ, ops.squeeze(v, -1), ops.squeeze(ops.squeeze(t, -1), -1))
            dQ = step
            Q = _reflect(Q, ops.squeeze(v, -1), ops.squeeze(ops.squeeze(t, -1), -1))
        return ops.narrow(dQ, -1, 0, n)

    def apply(self, grad):
        # Q_i = Q_{i-1} (I - tau_i v_i v_i^T): walk the product backwards
        A, tau = self.saved_tensors
        m, n = A._data.shape[-2:]
        k = tau._data.shape[-1]
        V = _householder_vectors(A)
        prefixes = [wrap(xp.broadcast_to(xp.eye(m, dtype=A._data.dtype, like=A._data), A._data.shape[:-2] + (m, m)).copy())]
        for i in range(k - 1):
            prefixes.append(_reflect(prefixes[-1], ops.select(V, -1, i), ops.select(tau, -1, i)))
        cat, stack = ops.cat, ops.stack
        G = grad
        if n < m:
            G = cat([G, wrap(xp.zeros(grad._data.shape[:-1] + (m - n,), dtype=grad._data.dtype, like=grad._data))], -1)
        g_v, g_tau = [None] * k, [None] * k
        for i in range(k - 1, -1, -1):
            v = ops.unsqueeze(ops.select(V, -1, i), -1)          # (m, 1)
            t = ops.unsqueeze(ops.unsqueeze(ops.select(tau, -1, i), -1), -1)
            Qp = prefixes[i]
            Gv = ops.matmul(G, v)                                            # G v
            Qv = ops.matmul(Qp, v)                                           # Q_{i-1} v
            g_tau[i] = -ops.squeeze(ops.squeeze(ops.matmul(_mT(Qv), Gv), -1), -1)
            g_v[i] = ops.squeeze(-t * (ops.matmul(_mT(Qp), Gv) + ops.matmul(_mT(G), Qv)), -1)
            G = G - t * ops.matmul(Gv, _mT(v))
        gA = gtau = None
        if _needs(self, 0):
            gV = stack(g_v, -1)                                          # (m, k)
            gA = _tril(gV, -1)
            if k < n:
                gA = cat([gA, wrap(xp.zeros(A._data.shape[:-1] + (n - k,), dtype=A._data.dtype, like=A._data))], -1)
        if _needs(self, 1):
            gtau = stack(g_tau, -1)
        return gA, gtau


class Geqrf(Op):
    """geqrf(input, *, out=None): (a, tau), LAPACK's QR in Householder form, R on and above the
    diagonal of ``a`` and the reflectors below it (householder_product(a, tau) is Q); no
    derivative, as PyTorch's."""
    op, node = 'geqrf', 'GeqrfBackward0'
    out = out_rule('geqrf', (safely_castable('torch.geqrf', 'a'), safely_castable('torch.geqrf', 'tau')))
    # (no __slots__: a multi-output node)

    def forward(input):
        """(a, tau): LAPACK's QR in Householder form, R on and above the diagonal of ``a`` and the
        reflectors below it (householder_product(a, tau) is Q)."""
        a = input._data
        refuse_complex(a, 'geqrf')
        if a.ndim < 2:
            raise RuntimeError('torch.geqrf: input must have at least 2 dimensions.')
        if a.dtype.kind != 'f' or a.dtype.itemsize < 4:
            raise NotImplementedError(f'"geqrf_cpu" not implemented for \'{SCALAR_NAMES[a.dtype.name]}\'')
        h, tau = xp.linalg.qr(a, mode='raw')     # (h is LAPACK's column-major array, transposed)
        outs, _ = record_many([xp.ascontiguousarray(xp.swapaxes(h, -1, -2)).astype(a.dtype), tau.astype(a.dtype)],
                              Geqrf, (input,))
        return return_types.geqrf(*outs)

    def apply(self, *grads):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _householder_vectors(A):
    """v_i = (0, ..., 0, 1, A[i+1:, i]) as the columns of an m x k matrix."""
    m, n = A._data.shape[-2:]
    return _tril(A, -1) + wrap(xp.eye(m, n, dtype=A._data.dtype, like=A._data))


def _reflect(Q, v, t):
    """Q (I - t v v^T)."""
    v = ops.unsqueeze(v, -1)
    t = ops.unsqueeze(ops.unsqueeze(t, -1), -1)
    return Q - t * ops.matmul(ops.matmul(Q, v), _mT(v))


def _householder_product(A, tau):
    a, t = A._data, tau._data
    refuse_complex(a, 'linalg.householder_product')
    if a.ndim < 2:
        raise RuntimeError('torch.linalg.householder_product: input must have at least 2 dimensions.')
    m, n = a.shape[-2:]
    if m < n:
        raise RuntimeError('torch.linalg.householder_product: input.shape[-2] must be greater than or equal to '
                           'input.shape[-1]')
    if t.ndim < 1 or t.shape[-1] > n:
        raise RuntimeError('torch.linalg.householder_product: input.shape[-1] must be greater than or equal to '
                           'tau.shape[-1]')
    if t.ndim != a.ndim - 1:
        raise RuntimeError('torch.linalg.householder_product: Expected tau to have one dimension less than input, '
                           f'but got tau.ndim equal to {t.ndim} and input.ndim is equal to {a.ndim}')
    if a.dtype != t.dtype:
        raise RuntimeError(f'torch.linalg.householder_product: tau dtype {SCALAR_NAMES[t.dtype.name]} does not '
                           f'match input dtype {SCALAR_NAMES[a.dtype.name]}')
    v = xp.tril(a, -1) + xp.eye(m, n, dtype=a.dtype, like=a)
    Q = xp.broadcast_to(xp.eye(m, dtype=a.dtype, like=a), a.shape[:-2] + (m, m)).copy()
    for i in range(t.shape[-1]):
        vi = v[..., :, i:i + 1]
        Q = Q - t[..., i, None, None] * ((Q @ vi) @ xp.swapaxes(vi, -1, -2))
    out, node = record(xp.ascontiguousarray(Q[..., :, :n]), LinalgHouseholderProduct, (A, tau))
    if node is not None:
        node.save(A, tau)
    return out


class Orgqr(Op):
    """orgqr(input, input2, *, out=None): linalg.householder_product's (its node; input2 is tau)."""
    op = 'orgqr'
    tensors = ('input', 'input2')  # (the method's too)
    out = out_rule('linalg_householder_product', safely_castable('torch.linalg.householder_product'), label='orgqr')

    def forward(input, input2):  # (PyTorch's names: its keywords, its errors)
        return _householder_product(input, input2)


# ---- vander, tensorinv, tensorsolve, cond, diagonal ---------------------------------------------------

class LinalgVander(Op):
    """linalg.vander(x, *, N=None): the powers x^0 ... x^(N-1) along a new last dimension (batched)."""
    op, method, public = 'linalg_vander', False, False

    def forward(x, *, N=None):
        """linalg.vander: the powers x^0 ... x^(N-1) along a new last dimension (batched)."""
        a = x._data
        if a.ndim < 1:
            raise RuntimeError('N must be greater than 1.') if N is None else None
        n = a.shape[-1] if N is None else N
        if n <= 1:
            raise RuntimeError('N must be greater than 1.')
        if a.dtype.kind == 'b':
            x = x.long()
        ones = wrap(xp.ones(a.shape + (1,), dtype=x._data.dtype, like=a))
        powers = ops.cumprod(ops.unsqueeze(x, -1).expand(*(a.shape + (n - 1,))), -1)
        return ops.cat([ones, powers], -1)


class Vander(Op):
    """vander(x, N=None, increasing=False): torch.vander, the columns x^(N-1) ... x^0 of a 1-D
    tensor (increasing: x^0 first)."""
    op, method = 'vander', False

    def forward(x, N=None, increasing=False):
        """torch.vander: the columns x^(N-1) ... x^0 of a 1-D tensor (increasing: x^0 first)."""
        try:
            a = x._data
            if a.ndim != 1:
                raise RuntimeError('x must be a one-dimensional tensor.')
            n = a.shape[0] if N is None else N
            if n < 0:
                raise RuntimeError('N must be non-negative.')
            if a.dtype.kind in 'biu':
                x = x.long()
            if n == 0:
                return wrap(xp.empty((a.shape[0], 0), dtype=x._data.dtype, like=a))
            ones = wrap(xp.ones((a.shape[0], 1), dtype=x._data.dtype, like=a))
            result = ones if n == 1 else ops.cat([ones, ops.cumprod(ops.unsqueeze(x, 1).expand(a.shape[0], n - 1), 1)],
                                                 1)
            return result if increasing else ops.flip(result, (1,))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class LinalgTensorinv(Op):
    """linalg.tensorinv(A, ind=2, *, out=None): the tensor X with tensordot(X, A, ind) the identity."""
    op, method, public = 'linalg_tensorinv', False, False
    out = out_rule('linalg_tensorinv', safely_castable('tensorinv'), copy=True)

    def forward(A, ind=2):
        """The tensor X with tensordot(X, A, ind) the identity: A as a matrix of
        prod(shape[:ind]) rows, inverted, shaped shape[ind:] + shape[:ind]."""
        shape = A._data.shape
        if ind <= 0:
            raise RuntimeError(f'Expected a strictly positive integer for \'ind\', but got {ind}')
        rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
        if rows != cols:
            raise RuntimeError(f'Expected self to satisfy the requirement prod(self.shape[ind:]) == '
                               f'prod(self.shape[:ind]), but got {cols} != {rows}')
        try:
            inverse = ops.linalg_inv(ops.reshape(A, (rows, cols)))
        except LinAlgError as e:  # (PyTorch's tensorinv calls ATen's inverse, whose errors say 'inv:')
            raise LinAlgError(str(e).replace('linalg.inv:', 'inv:', 1)) from None
        return ops.reshape(inverse, shape[ind:] + shape[:ind])


class LinalgTensorsolve(Op):
    """linalg.tensorsolve(A, B, dims=None, *, out=None): X with tensordot(A, X, X.ndim) = B."""
    op, method, public = 'linalg_tensorsolve', False, False
    out = out_rule('linalg_tensorsolve', safely_castable('tensorsolve'), copy=True)

    def forward(A, B, dims=None):
        """X with tensordot(A, X, X.ndim) = B."""
        if dims is not None:
            nd = A._data.ndim
            dims = [wrap_dim(d, nd) for d in dims]
            rest = [d for d in range(nd) if d not in dims]
            A = ops.permute(A, rest + dims)
        a_shape, b_shape = A._data.shape, B._data.shape
        rows = math.prod(b_shape)
        result_shape = a_shape[B._data.ndim:]
        cols = math.prod(result_shape)
        if math.prod(a_shape) != rows * cols or rows != cols:
            raise RuntimeError(f'Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == '
                               f'prod(self.shape[:other.ndim]), but got {cols} != '
                               f'{math.prod(a_shape[:B._data.ndim])}')
        x = ops.linalg_solve(ops.reshape(A, (rows, cols)), ops.reshape(B, (rows,)))
        return ops.reshape(x, result_shape)


class LinalgCond(Op):
    """linalg.cond(A, p=None, *, out=None): the condition number ||A||_p ||A^-1||_p (p None or
    ±2: the ratio of extreme singular values)."""
    op, method, public = 'linalg_cond', False, False
    out = out_rule('linalg_cond', safely_castable('linalg.cond'), copy=True)

    def forward(A, p=None):
        """The condition number ||A||_p ||A^-1||_p (p None or ±2: the ratio of extreme singular values)."""
        a = A._data
        if a.ndim < 2:
            raise RuntimeError('linalg.cond: The input tensor must have at least 2 dimensions.')
        if p in (None, 2, -2):
            s = ops.linalg_svdvals(A)
            hi, lo = ops.select(s, -1, 0), ops.select(s, -1, -1)
            return hi / lo if p != -2 else lo / hi
        if p not in ('fro', 'nuc', 1, -1, float('inf'), float('-inf')):
            raise RuntimeError(f'linalg.cond got an invalid norm type: {p}')
        _check_matrix(A, 'linalg.cond')
        return ops.linalg_matrix_norm(A, p) * ops.linalg_matrix_norm(ops.linalg_inv(A), p)


class LinalgDiagonal(Op):
    """linalg.diagonal(A, *, offset=0, dim1=-2, dim2=-1): torch.diagonal with the last two
    dimensions as defaults."""
    op, method, public = 'linalg_diagonal', False, False

    def forward(A, *, offset=0, dim1=-2, dim2=-1):
        """linalg.diagonal: torch.diagonal with the last two dimensions as defaults."""
        return ops.diagonal(A, offset, dim1, dim2)


# ---- torch.cholesky_solve, cholesky_inverse, triangular_solve -----------------------------------------------

class CholeskySolve(Op):
    """cholesky_solve(input, input2, upper=False, *, out=None): X with (L L^T) X = B (upper:
    U^T U), B the input, from a Cholesky factor L (input2)."""
    op, node = 'cholesky_solve', 'CholeskySolveBackward0'
    tensors = ('input', 'input2')  # (the method's too)
    parameter_types = {'upper': 'bool'}
    out = out_rule('cholesky_solve', safely_castable('cholesky_solve'))
    __slots__ = ('upper',)

    def forward(input, input2, upper=False):  # (PyTorch's names: its keywords, its errors)
        """X with (L L^T) X = B (upper: U^T U), from a Cholesky factor."""
        B, L = input, input2
        a, b = L._data, B._data
        refuse_complex(a, 'cholesky_solve')
        if b.ndim < 2 or a.ndim < 2:
            raise RuntimeError(f'b should have at least 2 dimensions, but has {b.ndim} dimensions instead'
                               if b.ndim < 2 else f'u should have at least 2 dimensions, but has {a.ndim} dimensions '
                               'instead')
        if a.dtype != b.dtype:
            raise RuntimeError(f'Expected b and A to have the same dtype, but found b of type '
                               f'{SCALAR_NAMES[b.dtype.name]} and A of type {SCALAR_NAMES[a.dtype.name]} instead.')
        low = xp.swapaxes(xp.triu(a), -1, -2) if upper else xp.tril(a)
        y = xp.linalg.solve(low, xp.broadcast_to(b, xp.broadcast_shapes(low.shape[:-2], b.shape[:-2]) +
                                                 b.shape[-2:])) \
            if low.shape[:-2] != b.shape[:-2] else xp.linalg.solve(low, b)
        x = xp.linalg.solve(xp.swapaxes(low, -1, -2), y)
        out, node = record(x.astype(a.dtype), CholeskySolve, (B, L))
        if node is not None:
            node.upper = upper
            node.save(L, saved_output(out))
        return out

    def jvp(self, tangents):
        """A = L L^T (upper: U^T U) from the factor's triangle: A dX = dB - dA X."""
        dB, dL = tangents
        L, X = self.saved_tensors
        rhs = dB
        if dL is not None:
            if self.upper:
                dU, U = _triu(dL), _triu(L)
                dA = ops.matmul(_mT(dU), U) + ops.matmul(_mT(U), dU)
            else:
                dLl, Ll = _tril(dL), _tril(L)
                dA = ops.matmul(dLl, _mT(Ll)) + ops.matmul(Ll, _mT(dLl))
            rhs = -ops.matmul(dA, X) if rhs is None else rhs - ops.matmul(dA, X)
        return ops.cholesky_solve(rhs, L, self.upper)

    def apply(self, grad):
        L, X = self.saved_tensors
        gB = ops.cholesky_solve(grad, L, self.upper)
        gL = None
        if _needs(self, 1):
            common = ops.matmul(gB, _mT(X))
            common = common + _mT(common)
            gL = -ops.matmul(L, common) if self.upper else -ops.matmul(common, L)
        return (gB if _needs(self, 0) else None), gL


class CholeskyInverse(Op):
    """cholesky_inverse(input, upper=False, *, out=None): (L L^T)^-1 (upper: (U^T U)^-1) from a
    Cholesky factor L (the input)."""
    op, node = 'cholesky_inverse', 'CholeskyInverseBackward0'
    parameter_types = {'upper': 'bool'}
    out = out_rule('cholesky_inverse', safely_castable('cholesky_inverse'))
    saved = ('self', 'result', 'upper=upper')
    __slots__ = ('upper',)

    def forward(input, upper=False):  # (PyTorch's name: its keyword, its errors)
        """(L L^T)^-1 (upper: (U^T U)^-1) from a Cholesky factor."""
        L = input
        a = L._data
        refuse_complex(a, 'cholesky_inverse')
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            raise RuntimeError('cholesky_inverse: The input tensor A must have at least 2 dimensions.' if a.ndim < 2
                               else f'cholesky_inverse: A must be batches of square matrices, but they are '
                               f'{a.shape[-2]} by {a.shape[-1]} matrices')
        low = xp.swapaxes(xp.triu(a), -1, -2) if upper else xp.tril(a)
        li = xp.linalg.inv(low)
        out, node = record(xp.swapaxes(li, -1, -2) @ li, CholeskyInverse, (L,))
        if node is not None:
            node.upper = upper
            node.save(L, saved_output(out))
        return out

    def jvp(self, tangents):  # d(A^-1) = -A^-1 dA A^-1, A = L L^T (upper: U^T U) from the triangle
        L, inverse = self.saved_tensors
        dL = tangents[0]
        if self.upper:
            dU, U = _triu(dL), _triu(L)
            dA = ops.matmul(_mT(dU), U) + ops.matmul(_mT(U), dU)
        else:
            dLl, Ll = _tril(dL), _tril(L)
            dA = ops.matmul(dLl, _mT(Ll)) + ops.matmul(Ll, _mT(dLl))
        return -ops.matmul(inverse, ops.matmul(dA, inverse))

    def apply(self, grad):
        L, inverse = self.saved_tensors
        common = ops.matmul(inverse, ops.matmul(grad + _mT(grad), inverse))
        return (-ops.matmul(L, common) if self.upper else -ops.matmul(common, L)),


class TriangularSolve(Op):
    """triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    (solution, cloned_coefficient), X with op(A) X = b for triangular A (op: transpose);
    deprecated for linalg.solve_triangular, with PyTorch's warning."""
    op, node = 'triangular_solve', 'TriangularSolveBackward0'
    tensors = ('input', 'A')  # (the method's too)
    parameter_types = {'upper': 'bool', 'transpose': 'bool', 'unitriangular': 'bool'}
    out = out_rule('triangular_solve')
    # (no __slots__: a multi-output node)

    def forward(input, A, upper=True, transpose=False, unitriangular=False):  # (PyTorch's names)
        """(solution, cloned_coefficient): X with op(A) X = b (the input) for triangular A (op: transpose)."""
        b = input
        _deprecated('triangular_solve')
        a = A._data
        if b._data.ndim < 2 or a.ndim < 2:
            raise RuntimeError(f'torch.triangular_solve: Expected b to have at least 2 dimensions, but it has '
                               f'{b._data.ndim} dimensions instead' if b._data.ndim < 2 else
                               f'torch.triangular_solve: Expected A to have at least 2 dimensions, but it has '
                               f'{a.ndim} dimensions instead')
        with no_grad():
            At = wrap(xp.swapaxes(a, -1, -2)) if transpose else wrap(a)
            x = ops.linalg_solve_triangular(At, wrap(b._data), upper=upper != transpose,
                                            unitriangular=unitriangular)._data
        outs, node = record_many([x, a.copy()], TriangularSolve, (b, A))
        if node is not None:
            node.upper, node.transpose, node.unitriangular = upper, transpose, unitriangular
            node.save(A, saved_output(outs[0]))
        return return_types.triangular_solve(*outs)

    def jvp(self, tangents):
        """op(A) dX = db - op(dA) X, dA restricted to A's triangle; the clone's tangent is dA."""
        db, dA = tangents
        A, X = self.saved_tensors
        rhs = db
        if dA is not None:
            k = 1 if self.unitriangular else 0
            dT = _triu(dA, k) if self.upper else _tril(dA, -k)
            product = ops.matmul(_mT(dT) if self.transpose else dT, X)
            rhs = -product if rhs is None else rhs - product
        At = _mT(A) if self.transpose else A
        dX = ops.linalg_solve_triangular(At, rhs, upper=self.upper != self.transpose, unitriangular=self.unitriangular)
        return dX, dA

    def apply(self, grad, grad_clone=None):
        A, X = self.saved_tensors
        gB = gA = None
        if grad is not None:
            gB = ops.triangular_solve(grad, A, self.upper, not self.transpose, self.unitriangular)[0]
            if _needs(self, 1):
                gA = -ops.matmul(X, _mT(gB)) if self.transpose else -ops.matmul(gB, _mT(X))
        if gA is not None:
            k = 1 if self.unitriangular else 0
            gA = _triu(gA, k) if self.upper else _tril(gA, -k)
        if grad_clone is not None and _needs(self, 1):  # the copy of A passes its gradient on whole
            gA = grad_clone if gA is None else gA + grad_clone
        return (gB if _needs(self, 0) else None), gA


# PyTorch's deprecation warnings of the older functions, each given once a process (as its TORCH_WARN_ONCE)
_DEPRECATED = {
    'triangular_solve': 'torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be '
                        'removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed '
                        'and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution'
                        '\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).',
    'lu': 'torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed '
          'in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n'
          'LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, '
          'compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, '
          'compute_pivots)',
    'lu_solve': 'torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch '
                'release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, '
                'pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)',
}
_warned = set()


def _deprecated(name):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(_DEPRECATED[name], UserWarning, stacklevel=user_stacklevel())


class Lu(Op):
    """lu(A, pivot=True, get_infos=False, out=None): torch.lu, (LU, pivots[, infos]) by
    linalg.lu_factor_ex, deprecated with PyTorch's warning. ``out``: as PyTorch's (written in
    Python), each resized to its result without a warning and copied into (of any dtype)."""
    op = 'lu'

    def forward(A, pivot=True, get_infos=False, out=None):
        """torch.lu: (LU, pivots[, infos]) by linalg.lu_factor_ex. ``out``: as PyTorch's (written in
        Python), each resized to its result without a warning and copied into (of any dtype)."""
        try:
            _deprecated('lu')
            LU, piv, info = ops.linalg_lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
            result = (LU, piv, info) if get_infos else (LU, piv)
            if out is None:
                return result
            if len(out) != len(result):
                raise TypeError(f'expected tuple of {len(result)} elements but got {len(out)}')
            if is_grad_enabled() and any(o.requires_grad for o in out):
                raise RuntimeError('cannot resize variables that require grad')
            for o, r in zip(out, result):
                o._data = xp.empty(r._data.shape, o._data.dtype, like=o._data) if o._data.shape != r._data.shape else o._data
                o.copy_(r)
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments('_lu_with_info', ('input=A',))
            raise

    def method(self, pivot=True, get_infos=False):
        return ops.lu(self, pivot, get_infos)


class LuSolve(Op):
    """lu_solve(b, LU_data, LU_pivots, *, out=None): torch.lu_solve, linalg.lu_solve with b first,
    deprecated with PyTorch's warning."""
    op = 'lu_solve'
    tensors = ('b', 'LU_data', 'LU_pivots')  # (the method's too)
    out = out_rule('linalg_lu_solve', label='lu_solve')

    def forward(b, LU_data, LU_pivots):
        """torch.lu_solve: linalg.lu_solve with b first."""
        _deprecated('lu_solve')
        return ops.linalg_lu_solve(LU_data, LU_pivots, b)
