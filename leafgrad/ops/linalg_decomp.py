"""Decompositions and solvers of ``leafgrad.linalg``: inv, det, slogdet, solve, cholesky, qr,
eigh, svd and their kin, each declared once (``_op.Op``). Forward with NumPy's LAPACK; derivatives
and forward-mode rules as PyTorch defines them (FunctionsManual), written with leafgrad ops
(matmul, solve, masks, siblings through ``ops``), so they differentiate again.

PyTorch's torch.linalg functions are named ``linalg_<name>`` (``linalg_inv() got an unexpected
keyword argument``): each is declared under that name, with no method and out of ``__all__``,
and ``leafgrad.linalg`` binds it as ``linalg.<name>``. Where torch has a function of its own
beside the linalg one (``torch.inverse``, ``torch.det`` without out=, ``torch.slogdet``,
``torch.matrix_power``), that is a declaration of its own calling the linalg op.

Complex matrices: inv, det, solve and solve_triangular are holomorphic, and their rules, written
with transposes, give PyTorch's complex gradients under the conjugate convention
(``conj(rule(conj(grad)))``, ops/complex_numbers.py). The rules of slogdet, cholesky, qr, eigh and
svd are PyTorch's complex formulas (conjugate transposes, real parts, the phase checks); their
nodes say so with ``complex_rule``. The functions not named in ``_matrix._COMPLEX_READY`` refuse
complex matrices (``refuse_complex``).
"""
from .. import backend, return_types
from ..tensor import Tensor
from ._op import Op, exact_dtype, out_rule, safely_castable, same_dtype, write_out
from ._util import (SCALAR_NAMES, _as_output, autocast, ops, record, record_many, saved_output, state, sum_to, wrap,
                    wrap_dim, xp)
from ._matrix import (_MULTI_DOT_OUT, LinAlgError, _check_matrix, _mH, _mT, _sum_to_batch, _tril, _triu,
                      cholesky_backward, pinv_backward, pinv_jvp, refuse_complex)
from .._arg_parser import refuse_arguments


# ---- helpers: checks, transposes, masks -----------------------------------------------------

def _sname(t):
    """PyTorch's scalar type name (Float, Double …) as its error messages print it."""
    return SCALAR_NAMES.get(t._data.dtype.name, t._data.dtype.name)


def _check_phase(d, message):
    """PyTorch's test that a loss does not depend on the phase of complex singular vectors or
    eigenvectors: ``allclose(d, 0, rtol=1e-2, atol=1e-2)`` for the array ``d``."""
    if not (xp.abs(d) <= 1e-2).all():
        raise RuntimeError(message)


def _real_diagonal_embed(t):
    """diag(Re diag t) as a matrix."""
    return _diag_embed(ops.real(ops.diagonal(t, 0, -2, -1))) if t._data.dtype.kind == 'c' else t * _eye_like(t)


def _eye_like(t):
    n = t._data.shape[-1]
    return wrap(xp.eye(n, dtype=t._data.dtype, like=t._data))


def _diag_embed(v):
    """Batched diagonal matrices from vectors (last dim)."""
    return ops.unsqueeze(v, -1) * _eye_like(v)


def _zero_pivot(a):
    """1-based index of the first zero pivot of LU with partial pivoting (PyTorch's message)."""
    a = a.astype(xp.float64).copy()
    n = a.shape[0]
    for j in range(n):
        p = j + int(xp.argmax(xp.abs(a[j:, j])))
        if a[p, j] == 0:
            return j + 1
        a[[j, p]] = a[[p, j]]
        a[j + 1:] -= xp.outer(a[j + 1:, j] / a[j, j], a[j])
    return n


def _batch_prefix(a, index):
    return f'(Batch element {index}): ' if a.ndim > 2 else ''


def _singular_index(a):
    """(flat batch index, zero pivot) of the first singular matrix in a batch, or None."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for b in range(flat.shape[0]):
        with xp.errstate(all='ignore'):
            if xp.linalg.matrix_rank(flat[b]) < flat.shape[-1] or not xp.isfinite(xp.linalg.cond(flat[b])):
                return b, _zero_pivot(flat[b])
    return None


# ---- inv --------------------------------------------------------------------------------------

class LinalgInv(Op):
    """linalg.inv(A, *, out=None): the inverse of a square matrix."""
    op, node, method, public = 'linalg_inv', 'LinalgInvExBackward0', False, False
    out = out_rule('linalg_inv_ex', label='linalg_inv')
    saved = ('inverse',)
    __slots__ = ()

    def forward(A):
        if autocast.state.on:
            A, = autocast.fp32(A)
        _check_matrix(A, 'linalg.inv')
        a = A._data
        try:
            data = xp.linalg.inv(a)
        except xp.linalg.LinAlgError:
            b, k = _singular_index(a) or (0, a.shape[-1])
            raise LinAlgError(f'linalg.inv: {_batch_prefix(a, b)}The diagonal element {k} is zero, the inversion '
                              'could not be completed because the input matrix is singular.') from None
        result, node = record(data, LinalgInv, (A,))
        if node is not None:
            node.save(saved_output(result))
        return result

    def jvp(self, tangents):  # d(A^-1) = -A^-1 dA A^-1
        (inv_a,) = self.saved_tensors
        return -ops.matmul(inv_a, ops.matmul(tangents[0], inv_a))

    def apply(self, grad):
        (inv_a,) = self.saved_tensors
        inv_t = _mT(inv_a)
        return -ops.matmul(inv_t, ops.matmul(grad, inv_t)),


class Inverse(Op):
    """inverse(input, *, out=None): linalg.inv's inverse (its node, LinalgInvExBackward0)."""
    op, out = 'inverse', out_rule('linalg_inv_ex', label='inverse')

    def forward(input):
        return ops.linalg_inv(input)


# ---- det, slogdet, logdet -----------------------------------------------------------------------

class LinalgDet(Op):
    """linalg.det(A, *, out=None): the determinant of a square matrix."""
    op, node, method, public = 'linalg_det', 'LinalgDetBackward0', False, False
    out = out_rule('_linalg_det', label='linalg_det')
    __slots__ = ()

    def forward(A):
        _check_matrix(A, 'linalg.det')
        result, node = record(xp.asarray(xp.linalg.det(A._data)), LinalgDet, (A,))
        if node is not None:
            node.save(A, saved_output(result))
        return result

    def jvp(self, tangents):  # d det A = det A * tr(A^-1 dA)
        A, det_a = self.saved_tensors
        return det_a * ops.sum(_mT(ops.linalg_inv(A)) * tangents[0], (-2, -1))

    def apply(self, grad):
        A, det_a = self.saved_tensors
        singular = det_a._data == 0
        if singular.any():
            if state.grad_enabled:  # create_graph: PyTorch takes the cofactors from an SVD
                return _det_backward_svd(grad, A),
            # a plain backward: PyTorch's det * A^{-T} is 0 for an exactly singular A
            a = xp.where(singular[..., None, None], xp.eye(A._data.shape[-1], dtype=A._data.dtype, like=A._data), A._data)
            g = (grad._data * det_a._data)[..., None, None]
            return wrap(g * xp.swapaxes(xp.linalg.inv(a), -1, -2)),
        # d det / dA = det * A^{-T} (the cofactor matrix)
        g = ops.unsqueeze(ops.unsqueeze(grad * det_a, -1), -1)
        return g * _mT(ops.linalg_inv(A)),


class Det(Op):
    """det(input): linalg.det's determinant, without out= (as PyTorch's torch.det)."""
    op = 'det'

    def forward(input):
        try:
            return ops.linalg_det(input)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _det_backward_svd(grad, A):
    """The cofactor matrix of a singular A, as PyTorch computes it: with A = U S V^H,
    cof(A) = det(U) det(V^H) (V diag(prod_{j != i} S_j) U^H)^T, finite when A has no inverse."""
    U, S, Vh = ops.linalg_svd(A)
    alpha = xp.linalg.det(U._data) * xp.linalg.det(Vh._data)
    n = S._data.shape[-1]
    eye = xp.eye(n, dtype=S._data.dtype, like=S._data)
    # M[..., i, j] = S_j off the diagonal, 1 on it: the product over j excludes S_i
    M = ops.unsqueeze(S, -2) * wrap(1 - eye) + wrap(eye)
    D = ops.select(M, -1, 0)
    for j in range(1, n):
        D = D * ops.select(M, -1, j)
    g = ops.unsqueeze(ops.unsqueeze(grad * wrap(xp.asarray(alpha, dtype=U._data.dtype)), -1), -1)
    return _mT(ops.matmul(_mH(Vh) * ops.unsqueeze(D, -2), _mH(U))) * g


class LinalgSlogdet(Op):
    """linalg.slogdet(A, *, out=None): (sign, log |det A|) of a square matrix."""
    op, node, method, public = 'linalg_slogdet', 'LinalgSlogdetBackward0', False, False
    out = out_rule('_linalg_slogdet', label='linalg_slogdet')
    saved = ('A', 'sign')
    __slots__ = ()
    complex_rule = True  # (PyTorch's complex gradient, written out: ops/complex_numbers.py)

    def forward(A):
        _check_matrix(A, 'linalg.slogdet')
        sign, logabs = xp.linalg.slogdet(A._data)
        complex_sign = A._data.dtype.kind == 'c'  # (a real matrix's sign has no derivative)
        (s, l), node = record_many([xp.asarray(sign), xp.asarray(logabs)], LinalgSlogdet, (A,),
                                   differentiable=[complex_sign, True])
        if node is not None:
            node.save(A, saved_output(s))
        return return_types.linalg_slogdet(s, l)

    def jvp(self, tangents):  # d log|det A| = Re tr(A^-1 dA), d sign = i Im tr(A^-1 dA) sign (a real A's: none)
        A, sign = self.saved_tensors
        trace = ops.sum(ops.diagonal(ops.linalg_solve(A, tangents[0]), 0, -2, -1), -1)
        if not trace.is_complex():
            return None, trace
        return sign * ops.imag(trace) * 1j, ops.real(trace)

    def apply(self, grad_sign, grad_logabs):
        A, sign = self.saved_tensors
        g = grad_logabs
        if A._data.dtype.kind == 'c' and grad_sign is not None:
            # the sign's gradient reaches A through the phase of det A: g = gl - i Im(gs conj(sign))
            phase = ops.imag(grad_sign * sign.conj()) * -1j
            g = phase if g is None else g + phase
        if g is None:
            return None,
        g = ops.unsqueeze(ops.unsqueeze(g.conj(), -1), -1)
        return g * _mH(ops.linalg_inv(A)),


class Slogdet(Op):
    """slogdet(input, *, out=None): linalg.slogdet's (sign, log |det A|)."""
    op, out = 'slogdet', out_rule('_linalg_slogdet', label='slogdet')

    def forward(input):
        return return_types.slogdet(*ops.linalg_slogdet(input))


class Logdet(Op):
    """logdet(input): log det A, NaN for a negative determinant, as PyTorch's logdet."""
    op = 'logdet'

    def forward(input):
        """log det A: NaN for a negative determinant, as PyTorch's logdet."""
        try:
            s, l = ops.linalg_slogdet(input)
            if s._data.dtype.kind == 'c':  # log |det A| + i arg det A
                return l + s.log()
            return ops.where(s < 0, float('nan'), ops.where(s == 0, float('-inf'), l))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


# ---- solve ------------------------------------------------------------------------------------

class LinalgSolve(Op):
    """linalg.solve(A, B, *, left=True, out=None): X with A X = B (left) or X A = B."""
    op, node, method, public = 'linalg_solve', 'LinalgSolveExBackward0', False, False
    out = out_rule('_linalg_solve_ex', label='linalg_solve')
    __slots__ = ('vector', 'left', 'b_shape')

    def forward(A, B, *, left=True):
        if autocast.state.on:
            A, B = autocast.fp32(A, B)
        _check_matrix(A, 'linalg.solve')
        a, b = A._data, B._data
        n = a.shape[-1]
        # B is a batch of vectors when it has one dimension less than A (or is 1-D)
        vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
        if not left:
            if vector:
                raise RuntimeError('linalg.solve: Vector broadcasting of the left hand side is not supported for '
                                   'left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)')
            x = xp.swapaxes(_solve_array(xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), A, B, n), -1, -2)
        else:
            if vector:
                if b.shape[-1] != n:
                    raise RuntimeError(f'linalg.solve: Incompatible shapes of A and B for the equation AX = B '
                                       f'({a.shape[-2]}x{n} and {b.shape[-1]}x1)')
                x = _solve_array(a, b[..., None], A, B, n)[..., 0]
            else:
                x = _solve_array(a, b, A, B, n)
        result, node = record(x, LinalgSolve, (A, B))
        if node is not None:
            node.vector, node.left, node.b_shape = vector, left, b.shape
            node.save(A, saved_output(result))
        return result

    def jvp(self, tangents):  # A dX + dA X = dB (left), dX A + X dA = dB (right)
        tA, rhs = tangents
        A, X = self.saved_tensors
        if tA is not None:
            if self.vector:
                product = ops.squeeze(ops.matmul(tA, ops.unsqueeze(X, -1)), -1)
            else:
                product = ops.matmul(tA, X) if self.left else ops.matmul(X, tA)
            rhs = -product if rhs is None else rhs - product
        return ops.linalg_solve(A, rhs, left=self.left)

    def apply(self, grad):
        A, X = self.saved_tensors
        # left: A X = B  =>  gB = A^{-T} g,  gA = -gB X^T
        gB = ops.linalg_solve(_mT(A), grad, left=self.left)
        gA = None
        if self.next_functions[0][0] is not None:
            if self.vector:
                gA = -ops.unsqueeze(gB, -1) * ops.unsqueeze(X, -2)
            else:
                gA = -ops.matmul(gB, _mT(X)) if self.left else -ops.matmul(_mT(X), gB)
            gA = _sum_to_batch(gA, A._data.shape)
        gB_out = None
        if self.next_functions[1][0] is not None:
            gB_out = _sum_to_batch(gB, self.b_shape)
        return gA, gB_out


def _solve_array(a, b, A, B, n):
    if b.ndim < 2 or b.shape[-2] != n:
        raise RuntimeError(f'linalg.solve: Incompatible shapes of A and B for the equation AX = B ({a.shape[-2]}x{n} '
                           f'and {b.shape[-2]}x{b.shape[-1]})')
    if a.dtype != b.dtype:
        raise RuntimeError(f'linalg.solve: Expected A and B to have the same dtype, but found A of type '
                           f'{_sname(A)} and B of type {_sname(B)} instead')
    try:
        return xp.linalg.solve(a, b)
    except xp.linalg.LinAlgError:
        raise LinAlgError('leafgrad.linalg.solve: The solver failed because the input matrix is singular.') from None
    except ValueError:
        batch = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))


# ---- cholesky ---------------------------------------------------------------------------------

class LinalgCholesky(Op):
    """linalg.cholesky(A, *, upper=False, out=None): L with A = L L^H (or U = L^H)."""
    op, node, method, public = 'linalg_cholesky', 'LinalgCholeskyExBackward0', False, False
    out = out_rule('linalg_cholesky_ex', label='linalg_cholesky')
    saved = ('L', 'upper=upper')
    __slots__ = ('upper',)
    complex_rule = True

    def forward(A, *, upper=False):
        if autocast.state.on:
            A, = autocast.fp32(A)
        _check_matrix(A, 'linalg.cholesky')
        a = A._data
        try:
            low = xp.linalg.cholesky(a)
        except xp.linalg.LinAlgError:
            flat = a.reshape((-1,) + a.shape[-2:])
            for bi in range(flat.shape[0]):
                for k in range(1, a.shape[-1] + 1):
                    try:
                        xp.linalg.cholesky(flat[bi, :k, :k])
                    except xp.linalg.LinAlgError:
                        raise LinAlgError(f'linalg.cholesky: {_batch_prefix(a, bi)}The factorization could not be '
                                          'completed because the input is not positive-definite (the leading minor '
                                          f'of order {k} is not positive-definite).') from None
            raise
        data = xp.ascontiguousarray(xp.swapaxes(low, -1, -2).conj()) if upper else low
        result, node = record(data, LinalgCholesky, (A,))
        if node is not None:
            node.upper = upper
            node.save(saved_output(result))
        return result

    def jvp(self, tangents):  # dL = L Phi(L^-1 dA L^-T), Phi: the lower triangle, its diagonal halved
        (L,) = self.saved_tensors
        if self.upper:
            L = _mH(L)
        m = _mH(ops.linalg_solve(L, _mH(ops.linalg_solve(L, tangents[0]))))  # (L^-1 dA L^-H)
        n = L._data.shape[-1]
        phi = _tril(m, -1) + m * wrap(xp.eye(n, dtype=L._data.real.dtype, like=L._data) * 0.5)
        dL = ops.matmul(L, phi)
        return _mH(dL) if self.upper else dL

    def apply(self, grad):
        (L,) = self.saved_tensors
        return cholesky_backward(grad, self.upper, L),


def _real_rule_only(name, output, tangent):
    """The forward rules of qr and svd are written for real matrices: a complex one is refused
    rather than given a wrong tangent."""
    if output.is_complex() or tangent.is_complex():
        raise NotImplementedError(f"leafgrad's forward rule of {name} takes real matrices only, not complex ones")


# ---- qr ---------------------------------------------------------------------------------------

class LinalgQr(Op):
    """linalg.qr(A, mode='reduced', *, out=None): Q with orthonormal columns and upper-triangular
    R, A = Q R ('complete': Q square; 'r': R alone, Q empty)."""
    op, node, method, public = 'linalg_qr', 'LinalgQrBackward0', False, False
    out = out_rule('linalg_qr')
    saved = ('Q', 'R', 'mode=mode')
    __slots__ = ('mode',)
    complex_rule = True

    def forward(A, mode='reduced'):
        if autocast.state.on:
            A, = autocast.fp32(A)
        if mode not in ('reduced', 'complete', 'r'):
            raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                               "or 'complete'")
        _check_matrix(A, 'linalg.qr', square=False)
        q, r = xp.linalg.qr(A._data, mode='complete' if mode == 'complete' else 'reduced')
        if mode == 'r':
            q = xp.zeros((0,), dtype=r.dtype, like=r)
        (Q, R), node = record_many([q, r], LinalgQr, (A,))
        if node is not None:
            if mode == 'r':
                Q._grad_fn, Q._requires_grad = None, False
            node.mode = mode
            node.save(saved_output(Q), saved_output(R))
        return return_types.linalg_qr(Q, R)

    def _check_differentiable(self, Q, R):
        if self.mode == 'r':
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                               "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
        if self.mode == 'complete' and Q._data.shape[-2] > R._data.shape[-1]:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")

    def jvp(self, tangents):
        """A = Q R (m >= n): with C = Q^T dA R^-1 and Omega = tril(C, -1) - tril(C, -1)^T (skew),
        dR = (C - Omega) R and dQ = dA R^-1 - Q (C - Omega). A wide A = Q [X | Y]: the square
        rule for X, and dY = Q^T dA_Y - Omega Y."""
        Q, R = self.saved_tensors
        self._check_differentiable(Q, R)
        dA = tangents[0]
        _real_rule_only('linalg.qr', Q, dA)
        m, n = Q._data.shape[-2], R._data.shape[-1]
        X = R if m >= n else ops.narrow(R, -1, 0, m)
        dX = dA if m >= n else ops.narrow(dA, -1, 0, m)
        # dX R^-1: solve X^T Z^T = dX^T with the triangular X
        dXRinv = _mT(ops.linalg_solve_triangular(_mT(X), _mT(dX), upper=False))
        C = ops.matmul(_mH(Q), dXRinv)
        low = _tril(C, -1)
        omega = low - _mT(low)
        upper = C - omega
        dQ = dXRinv - ops.matmul(Q, upper) if m > n else ops.matmul(Q, omega)
        dR = ops.matmul(upper, X)
        if m < n:
            dY = ops.matmul(_mH(Q), ops.narrow(dA, -1, m, n - m)) - ops.matmul(omega, ops.narrow(R, -1, m, n - m))
            dR = ops.cat([dR, dY], -1)
        return dQ, dR

    def apply(self, gQ, gR):
        Q, R = self.saved_tensors
        self._check_differentiable(Q, R)
        gQ, gR = _as_output(gQ, Q), _as_output(gR, R)
        m, n = Q._data.shape[-2], R._data.shape[-1]
        if m >= n:
            return _qr_backward_tall(gQ, gR, Q, R),
        # A = Q [X | Y] with X square: Y = Q^H A2 gives gA2 = Q gY and adds Q Y gY^H to gQ
        X = ops.narrow(R, -1, 0, m)
        Y = ops.narrow(R, -1, m, n - m)
        gX = gY = None
        if gR is not None:
            gX, gY = ops.narrow(gR, -1, 0, m), ops.narrow(gR, -1, m, n - m)
        if gY is not None:
            extra = ops.matmul(Y, _mH(gY))
            gQ = ops.matmul(Q, extra) if gQ is None else gQ + ops.matmul(Q, extra)
        gA1 = _qr_backward_tall(gQ, gX, Q, X)
        gA2 = ops.matmul(Q, gY) if gY is not None else None
        shape = Q._data.shape[:-1] + (n,)
        lead = (slice(None),) * (len(shape) - 1)
        out = ops.index_put_embed(gA1, shape, lead + (slice(0, m),))
        if gA2 is not None:
            out = out + ops.index_put_embed(gA2, shape, lead + (slice(m, n),))
        return out,


def _qr_backward_tall(gQ, gR, Q, R):
    """gA = (gQ + Q syminvadj(triu(gR R^H - Q^H gQ))) R^{-H}   (m >= n), with
    syminvadj(M) = M + M^H - Re diag(M)."""
    M = None
    if gR is not None:
        M = ops.matmul(gR, _mH(R))
    if gQ is not None:
        qtg = ops.matmul(_mH(Q), gQ)
        M = -qtg if M is None else M - qtg
    M = _triu(M)
    S = M + _mH(M) - _real_diagonal_embed(M)  # the diagonal counted once
    gA = ops.matmul(Q, S)
    if gQ is not None:
        gA = gA + gQ
    # right-solve X R^H = gA  <=>  R X^H = gA^H
    return _mH(ops.linalg_solve(R, _mH(gA)))


# ---- eigh -------------------------------------------------------------------------------------

class LinalgEigh(Op):
    """linalg.eigh(A, UPLO='L', *, out=None): the eigenvalues (ascending) and orthonormal
    eigenvectors of a symmetric (Hermitian) matrix, of which the UPLO triangle is read."""
    op, node, method, public = 'linalg_eigh', 'LinalgEighBackward0', False, False
    out = out_rule('_linalg_eigh', label='linalg_eigh')
    saved = ('eigenvalues', 'eigenvectors')
    __slots__ = ()
    complex_rule = True

    def forward(A, UPLO='L'):
        if autocast.state.on:
            A, = autocast.fp32(A)
        _check_matrix(A, 'linalg.eigh')
        if UPLO not in ('L', 'U'):
            raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
        w, v = xp.linalg.eigh(A._data, UPLO=UPLO)
        (L, V), node = record_many([w, v], LinalgEigh, (A,))
        if node is not None:
            node.save(saved_output(L), saved_output(V))
        return return_types.linalg_eigh(L, V)

    def jvp(self, tangents):
        """PyTorch's linalg_eig_jvp for a symmetric A: with dP = V^T dA V, dL = diag(dP) and
        dV = V (dP / E), E_ij = L_j - L_i, its diagonal 0."""
        L, V = self.saved_tensors
        dP = ops.matmul(_mH(V), ops.matmul(tangents[0], V))
        E = ops.unsqueeze(L, -2) - ops.unsqueeze(L, -1)
        eye = _eye_like(E)
        dL = ops.diagonal(dP, 0, -2, -1)  # (a Hermitian A's eigenvalues are real: so are their tangents)
        return ops.real(dL) if dL.is_complex() else dL, ops.matmul(V, dP / (E + eye) * (1 - eye))

    def apply(self, gL, gV):
        L, V = self.saved_tensors
        gL, gV = _as_output(gL, L), _as_output(gV, V)
        gA = None
        if gV is not None:
            vtg = ops.matmul(_mH(V), gV)
            if vtg._data.dtype.kind == 'c':
                _check_phase(xp.diagonal(vtg._data, 0, -2, -1).imag,
                             'linalg_eigh_backward: The eigenvectors in the complex case are specified up to '
                             'multiplication by e^{i phi}. The specified loss function depends on this quantity, so '
                             'it is ill-defined.')
            vtg = (vtg - _mH(vtg)) * 0.5
            # E_ij = L_j - L_i, with 1 on the diagonal
            E = ops.unsqueeze(L, -2) - ops.unsqueeze(L, -1)
            eye = _eye_like(E)
            gA = vtg / (E + eye)
            if gL is not None:  # the diagonal is gL
                gA = gA * (1 - eye) if vtg._data.dtype.kind == 'c' else gA
        if gA is None:  # V diag(gL) V^H
            return ops.matmul(V * ops.unsqueeze(gL, -2), _mH(V)),
        if gL is not None:
            gA = gA + _diag_embed(gL)
        return ops.matmul(V, ops.matmul(gA, _mH(V))),


class LinalgEigvalsh(Op):
    """linalg.eigvalsh(A, UPLO='L', *, out=None): the eigenvalues of ``linalg.eigh`` (its node)."""
    op, method, public = 'linalg_eigvalsh', False, False
    out = out_rule('_linalg_eigh', label='linalg_eigvalsh')

    def forward(A, UPLO='L'):
        return ops.linalg_eigh(A, UPLO)[0]


# ---- svd --------------------------------------------------------------------------------------

class LinalgSvd(Op):
    """linalg.svd(A, full_matrices=True, *, driver=None, out=None): U, S, Vh with A = U diag(S) Vh,
    the singular values S descending."""
    op, node, method, public = 'linalg_svd', 'LinalgSvdBackward0', False, False
    out = out_rule('_linalg_svd', label='linalg_svd')
    saved = ('U', 'S', 'Vh', 'full_matrices=full_matrices')
    __slots__ = ('full_matrices',)
    complex_rule = True

    def forward(A, full_matrices=True, *, driver=None):
        if autocast.state.on:
            A, = autocast.fp32(A)
        _check_matrix(A, 'linalg.svd', square=False)
        if driver is not None:
            raise RuntimeError('leafgrad.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with '
                               'cuSOLVER backend.')
        u, s, vh = xp.linalg.svd(A._data, full_matrices=full_matrices)
        (U, S, Vh), node = record_many([u, s, vh], LinalgSvd, (A,))
        if node is not None:
            node.full_matrices = full_matrices
            node.save(saved_output(U), saved_output(S), saved_output(Vh))
        return return_types.linalg_svd(U, S, Vh)

    def jvp(self, tangents):
        """PyTorch's svd_jvp (real matrices): with dP = U^T dA V, dS = diag(dP),
        dU = U (sym(dP S) / E) (+ (I - U U^T) dA V S^-1 when tall) and
        dVh = -(sym(S dP) / E) Vh (+ S^-1 U^T dA (I - V V^T) when wide), E_ij = S_j^2 - S_i^2
        off the diagonal; the extra columns of full_matrices get zero tangents."""
        U, S, Vh = self.saved_tensors
        dA = tangents[0]
        _real_rule_only('linalg.svd', U, dA)
        m, n = U._data.shape[-2], Vh._data.shape[-1]
        k = S._data.shape[-1]
        if self.full_matrices and m != n:
            U, Vh = ops.narrow(U, -1, 0, k), ops.narrow(Vh, -2, 0, k)
        V = _mT(Vh)
        dP = ops.matmul(_mT(U), ops.matmul(dA, V)) if m >= n else ops.matmul(ops.matmul(_mT(U), dA), V)
        dS = ops.diagonal(dP, 0, -2, -1)
        S2 = S * S
        E = ops.unsqueeze(S2, -2) - ops.unsqueeze(S2, -1)
        eye = _eye_like(E)
        E = E + eye
        off = 1 - eye
        sym = lambda X: X + _mT(X)  # noqa: E731
        dU = ops.matmul(U, sym(dP * ops.unsqueeze(S, -2)) / E * off)
        dVh = ops.matmul(sym(dP * ops.unsqueeze(-S, -1)) / E * off, Vh)
        if m > n:
            dAVSinv = ops.matmul(dA, V / ops.unsqueeze(S, -2))
            dU = dU + dAVSinv - ops.matmul(U, ops.matmul(_mT(U), dAVSinv))
            if self.full_matrices:
                dU = ops.pad(dU, (0, m - n))
        if m < n:
            UtdASinv = ops.matmul(_mT(U) / ops.unsqueeze(S, -1), dA)
            dVh = dVh + UtdASinv - ops.matmul(ops.matmul(UtdASinv, V), Vh)
            if self.full_matrices:
                dVh = ops.pad(dVh, (0, 0, 0, n - m))
        return dU, dS, dVh

    def apply(self, gU, gS, gVh):
        U, S, Vh = self.saved_tensors
        gU, gS, gVh = _as_output(gU, U), _as_output(gS, S), _as_output(gVh, Vh)
        m, n = U._data.shape[-2], Vh._data.shape[-1]
        k = S._data.shape[-1]
        if self.full_matrices and m != n:
            # only the first k singular vectors enter A; the rest are arbitrary
            U = ops.narrow(U, -1, 0, k)
            Vh = ops.narrow(Vh, -2, 0, k)
            gU = ops.narrow(gU, -1, 0, k) if gU is not None else None
            gVh = ops.narrow(gVh, -2, 0, k) if gVh is not None else None
        if gU is None and gVh is None:
            if gS is None:
                return None,
            return ops.matmul(U * ops.unsqueeze(gS, -2), Vh),
        V = _mH(Vh)
        gV = _mH(gVh) if gVh is not None else None
        skew = lambda X: X - _mH(X)  # noqa: E731
        UhgU = skew(ops.matmul(_mH(U), gU)) if gU is not None else None
        VhgV = skew(ops.matmul(Vh, gV)) if gV is not None else None
        complex_input = U._data.dtype.kind == 'c'
        if complex_input:  # the loss may not depend on the phase of the singular vectors
            im_u = xp.diagonal(UhgU._data, 0, -2, -1).imag if UhgU is not None else 0
            im_v = xp.diagonal(VhgV._data, 0, -2, -1).imag if VhgV is not None else 0
            if not (xp.abs(im_u + im_v) <= 1e-2 + 1e-2 * xp.abs(im_v)).all():  # allclose(im_u, -im_v), PyTorch's
                raise RuntimeError('svd_backward: The singular vectors in the complex case are specified up to '
                                   'multiplication by e^{i phi}. The specified loss function depends on this phase '
                                   'term, making it ill-defined.')
        S2 = S * S
        E = ops.unsqueeze(S2, -2) - ops.unsqueeze(S2, -1)
        E = E + _eye_like(E)
        Srow, Scol = ops.unsqueeze(S, -2), ops.unsqueeze(S, -1)
        if gU is not None and gV is not None:
            gA = (UhgU * Srow + Scol * VhgV) / E
        elif gU is not None:
            gA = UhgU / E * Srow
        else:
            gA = Scol * (VhgV / E)
        if gS is not None:
            gA = gA + _diag_embed(gS)
        if complex_input and gU is not None:  # i Im diag(U^H gU) / S on the diagonal
            gA = gA + _diag_embed(ops.diagonal(UhgU, 0, -2, -1) / (2 * S))
        if m > n and gU is not None:
            gA = ops.matmul(U, gA)
            gUSinv = gU / Srow
            gA = gA + gUSinv - ops.matmul(U, ops.matmul(_mH(U), gUSinv))
            return ops.matmul(gA, Vh),
        if m < n and gV is not None:
            gA = ops.matmul(gA, Vh)
            gVSinv = gV / Srow
            gA = gA + _mH(gVSinv) - ops.matmul(ops.matmul(_mH(gVSinv), V), Vh)
            return ops.matmul(U, gA),
        return ops.matmul(U, ops.matmul(gA, Vh)),


class LinalgSvdvals(Op):
    """linalg.svdvals(A, *, driver=None, out=None): the singular values of ``linalg.svd`` (its
    node), descending."""
    op, method, public = 'linalg_svdvals', False, False
    out = out_rule('_linalg_svd', label='linalg_svdvals')

    def forward(A, *, driver=None):
        return ops.linalg_svd(A, full_matrices=False, driver=driver)[1]


# ---- more of torch.linalg: _ex variants, triangular solve, pinv, powers, products ------------


def _info(batch_shape, like, value=0):
    return wrap(xp.full(batch_shape, value, dtype=xp.int32, like=like))


class LinalgInvEx(Op):
    """linalg.inv_ex(A, *, check_errors=False, out=None): (inverse, info), info the order of the
    first zero pivot of a singular matrix (its inverse NaN) unless check_errors."""
    op, method, public = 'linalg_inv_ex', False, False
    out = out_rule('linalg_inv_ex', differentiable=(True, False))

    def forward(A, *, check_errors=False):
        if autocast.state.on:
            A, = autocast.fp32(A)
        try:
            return return_types.linalg_inv_ex(ops.linalg_inv(A), _info(A._data.shape[:-2], A._data))
        except LinAlgError:
            if check_errors:
                raise
            b, k = _singular_index(A._data)
            info = xp.zeros(A._data.shape[:-2], dtype=xp.int32, like=A._data)
            info.reshape(-1)[b] = k
            with xp.errstate(all='ignore'):
                return return_types.linalg_inv_ex(wrap(xp.full(A._data.shape, xp.nan, dtype=A._data.dtype, like=A._data)),
                                                  wrap(info))


class LinalgCholeskyEx(Op):
    """linalg.cholesky_ex(A, *, upper=False, check_errors=False, out=None): (L, info), info the
    order of the first leading minor that is not positive-definite (L zeros) unless check_errors."""
    op, method, public = 'linalg_cholesky_ex', False, False
    out = out_rule('linalg_cholesky_ex', differentiable=(True, False))

    def forward(A, *, upper=False, check_errors=False):
        if autocast.state.on:
            A, = autocast.fp32(A)
        try:
            return return_types.linalg_cholesky_ex(ops.linalg_cholesky(A, upper=upper), _info(A._data.shape[:-2], A._data))
        except LinAlgError as e:
            if check_errors:
                raise
            order = int(str(e).split('order ')[1].split(' ')[0])
            return return_types.linalg_cholesky_ex(wrap(xp.zeros_like(A._data)), _info(A._data.shape[:-2], A._data, order))


class LinalgSolveTriangular(Op):
    """linalg.solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None): X with
    A X = B (left) or X A = B, A's upper or lower triangle read (its diagonal 1 if unitriangular)."""
    op, node, method, public = 'linalg_solve_triangular', 'LinalgSolveTriangularBackward0', False, False
    out = out_rule('linalg_solve_triangular', same_dtype('expected scalar type {result} but found {out}'))
    saved = ('self', 'result', 'upper=upper', 'left=left', 'unitriangular=unitriangular')
    __slots__ = ('upper', 'left', 'unitriangular')

    def forward(A, B, *, upper, left=True, unitriangular=False):
        _check_matrix(A, 'linalg.solve_triangular')
        if B._data.ndim < 2:
            raise RuntimeError('linalg.solve_triangular: The input tensor B must have at least 2 dimensions.')
        a = A._data
        n = a.shape[-1]
        tri = xp.triu(a) if upper else xp.tril(a)
        if unitriangular:
            eye = xp.eye(n, dtype=a.dtype, like=a)
            tri = tri - tri * eye + eye
        b = B._data
        with xp.errstate(all='ignore'):
            if left:
                x = _solve_array(tri, b, A, B, n)
            else:
                x = xp.swapaxes(_solve_array(xp.swapaxes(tri, -1, -2), xp.swapaxes(b, -1, -2), A, B, n), -1, -2)
        result, node = record(x, LinalgSolveTriangular, (A, B))
        if node is not None:
            node.upper, node.left, node.unitriangular = upper, left, unitriangular
            node.save(A, saved_output(result))
        return result

    def jvp(self, tangents):  # A dX = dB - dA X (left), dX A = dB - X dA, dA restricted to A's triangle
        tA, rhs = tangents
        A, X = self.saved_tensors
        if tA is not None:
            k = 1 if self.unitriangular else 0
            tA = _triu(tA, k) if self.upper else _tril(tA, -k)
            product = ops.matmul(tA, X) if self.left else ops.matmul(X, tA)
            rhs = -product if rhs is None else rhs - product
        return ops.linalg_solve_triangular(A, rhs, upper=self.upper, left=self.left, unitriangular=self.unitriangular)

    def apply(self, grad):
        A, X = self.saved_tensors
        gB = ops.linalg_solve_triangular(_mT(A), grad, upper=not self.upper, left=self.left,
                                         unitriangular=self.unitriangular)
        gA = None
        if self.next_functions[0][0] is not None:
            gA = -ops.matmul(gB, _mT(X)) if self.left else -ops.matmul(_mT(X), gB)
            k = 1 if self.unitriangular else 0
            gA = _triu(gA, k) if self.upper else _tril(gA, -k)
        return gA, (gB if self.next_functions[1][0] is not None else None)


class LinalgPinv(Op):
    """linalg.pinv(A, *, atol=None, rtol=None, hermitian=False, out=None): the pseudoinverse,
    singular values at most max(atol, rtol * the largest) counted as zero."""
    op, node, method, public = 'linalg_pinv', 'LinalgPinvBackward0', False, False
    out = out_rule('linalg_pinv', safely_castable('linalg.pinv'))
    saved = ('self', 'result')
    __slots__ = ()

    def forward(A, *, atol=None, rtol=None, hermitian=False):
        refuse_complex(A._data, 'linalg.pinv')
        if A._data.ndim < 2 or A._data.dtype.name not in ('float32', 'float64'):
            name = SCALAR_NAMES[A._data.dtype.name]
            raise RuntimeError(f'linalg.pinv({name}{{{list(A._data.shape)}}}): expected a tensor with 2 or more '
                               'dimensions of float, double, cfloat or cdouble types')
        a = A._data
        u, sv, vh = xp.linalg.svd(a, full_matrices=False)
        if rtol is None:
            rtol = 0.0 if atol is not None and atol > 0 else xp.finfo(a.dtype).eps * max(a.shape[-2:])
        smax = sv[..., :1] if sv.shape[-1] else xp.zeros(sv.shape[:-1] + (1,), dtype=a.dtype, like=sv)
        cutoff = xp.maximum(atol or 0.0, rtol * smax)
        with xp.errstate(divide='ignore'):
            sinv = xp.where(sv > cutoff, 1 / sv, 0).astype(a.dtype)
        data = xp.matmul(xp.swapaxes(vh, -1, -2) * sinv[..., None, :], xp.swapaxes(u, -1, -2))
        result, node = record(data, LinalgPinv, (A,))
        if node is not None:
            node.save(A, saved_output(result))
        return result

    def jvp(self, tangents):
        A, P = self.saved_tensors
        return pinv_jvp(A, P, tangents[0])

    def apply(self, grad):
        A, P = self.saved_tensors
        return pinv_backward(grad, P, A),


class Pinverse(Op):
    """pinverse(input, rcond=1e-15): linalg.pinv with rtol=rcond."""
    op = 'pinverse'
    parameter_types = {'rcond': 'float'}

    def forward(input, rcond=1e-15):
        try:
            if autocast.state.on:
                input, = autocast.fp32(input)
            return ops.linalg_pinv(input, rtol=rcond)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _matrix_power_out(rd, od):
    safely_castable('matrix_power')(rd, od)
    exact_dtype(rd, od)


def _matrix_power(A, n):
    """Binary powering with matmuls, as PyTorch computes it (so the same nodes are recorded)."""
    _check_matrix(A, 'linalg.matrix_power')
    if n == 0:
        return wrap(xp.broadcast_to(xp.eye(A._data.shape[-1], dtype=A._data.dtype, like=A._data), A._data.shape).copy())
    if n < 0:
        A, n = ops.linalg_inv(A), -n
    if n == 1:
        return ops.clone(A)
    if n == 2:
        return ops.matmul(A, A)
    if n == 3:
        return ops.matmul(ops.matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else ops.matmul(z, z)
        if bit:
            result = z if result is None else ops.matmul(result, z)
    return result


class MatrixPower(Op):
    """matrix_power(input, n, *, out=None): the n-th power of a square matrix (the inverse's for
    n < 0), by binary powering with matmuls as PyTorch computes it (the same nodes)."""
    op, out = 'matrix_power', out_rule('matmul', _matrix_power_out, label='matrix_power')
    parameter_types = {'n': 'int'}

    def forward(input, n):
        return _matrix_power(input, n)


class LinalgMatrixPower(Op):
    """linalg.matrix_power(A, n, *, out=None): matrix_power's."""
    op, method, public = 'linalg_matrix_power', False, False
    out = out_rule('matmul', _matrix_power_out, label='linalg_matrix_power')

    def forward(A, n):
        return _matrix_power(A, n)


class LinalgMultiDot(Op):
    """linalg.multi_dot(tensors, *, out=None): the product of the matrices, left to right (the
    first and last may be vectors)."""
    op, method, public = 'linalg_multi_dot', False, False
    out = out_rule('mm', _MULTI_DOT_OUT, label='linalg_multi_dot')

    def forward(tensors):
        tensors = list(tensors)
        if len(tensors) < 2:
            raise RuntimeError(f'multi_dot(): expected at least 2 tensors but got {len(tensors)}')
        first_1d, last_1d = tensors[0]._data.ndim == 1, tensors[-1]._data.ndim == 1
        if first_1d:
            tensors[0] = ops.unsqueeze(tensors[0], 0)
        if last_1d:
            tensors[-1] = ops.unsqueeze(tensors[-1], -1)
        for i, t in enumerate(tensors):
            if t._data.ndim != 2:
                where = 'first' if i == 0 else 'last' if i == len(tensors) - 1 else None
                raise RuntimeError(f'multi_dot(): the {where} tensor must be 1D or 2D but got {t._data.ndim}D' if where
                                   else f'multi_dot(): tensor {i} must be 2D but got {t._data.ndim}D')
        out_t = tensors[0]
        for t in tensors[1:]:
            out_t = ops.mm(out_t, t)
        if first_1d or last_1d:
            shape = out_t._data.shape
            out_t = ops.reshape(out_t, tuple(s for i, s in enumerate(shape) if not (i == 0 and first_1d)
                                                and not (i == 1 and last_1d)))
        return out_t


_VECDOT_DTYPE = same_dtype('linalg.vecdot: Expected out of dtype{result} but found {out}')


class LinalgVecdot(Op):
    """linalg.vecdot(x, y, *, dim=-1, out=None): sum(conj(x) * y) over ``dim`` (out=: vdot's for
    vectors, else sum's)."""
    op, method, public = 'linalg_vecdot', False, False

    def forward(x, y, *, dim=-1, out=None):
        if autocast.state.on:
            x, y = autocast.lower_precision(x, y)
        result = ops.sum(x.conj() * y, dim)  # (conj: the inner product of complex vectors)
        if out is None:
            return result
        if isinstance(out, Tensor):  # (PyTorch checks the dtype, then writes by vdot or sum)
            _VECDOT_DTYPE(result.dtype, out.dtype)
        return write_out('vdot' if x._data.ndim == y._data.ndim == 1 else 'sum', out, result, None,
                         label='linalg_vecdot')


class LinalgCross(Op):
    """linalg.cross(input, other, *, dim=-1, out=None): the cross product of 3-vectors along
    ``dim`` (the other dims broadcast)."""
    op, node, method, public = 'linalg_cross', 'LinalgCrossBackward0', False, False
    out = out_rule('linalg_cross')
    saved = ('self', 'other', 'dim=dim')
    __slots__ = ('dim', 'a_shape', 'b_shape')

    def forward(input, other, *, dim=-1):
        x, y = input._data, other._data
        if x.ndim != y.ndim:
            raise RuntimeError('linalg.cross: inputs must have the same number of dimensions.')
        d = wrap_dim(dim, max(x.ndim, y.ndim))
        if x.shape[d - x.ndim] != 3 or y.shape[d - y.ndim] != 3:
            raise RuntimeError(f'linalg.cross: inputs dimension {dim} must have length 3. Got {x.shape[d - x.ndim]} '
                               f'and {y.shape[d - y.ndim]}')
        result, node = record(xp.cross(x, y, axis=d - max(x.ndim, y.ndim)), LinalgCross, (input, other))
        if node is not None:
            node.dim, node.a_shape, node.b_shape = dim, x.shape, y.shape
            node.save(input, other)
        return result

    def jvp(self, tangents):  # d(a x b) = da x b + a x db
        a, b = self.saved_tensors
        ta, tb = tangents
        out = ops.linalg_cross(ta, b, dim=self.dim) if ta is not None else None
        if tb is not None:
            db = ops.linalg_cross(a, tb, dim=self.dim)
            out = db if out is None else out + db
        return out

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = sum_to(ops.linalg_cross(b, grad, dim=self.dim), self.a_shape) if self.next_functions[0][0] is not None \
            else None
        gb = sum_to(ops.linalg_cross(grad, a, dim=self.dim), self.b_shape) if self.next_functions[1][0] is not None \
            else None
        return ga, gb


class LinalgMatrixRank(Op):
    """linalg.matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None): the number of
    singular values above max(atol, rtol * the largest), int64."""
    op, method, public = 'linalg_matrix_rank', False, False
    out = out_rule('linalg_matrix_rank', safely_castable('torch.linalg.matrix_rank'), differentiable=False)

    def forward(A, *, atol=None, rtol=None, hermitian=False):
        if autocast.state.on:
            A, = autocast.fp32(A)
        _check_matrix(A, 'linalg.matrix_rank', square=False)
        sv = xp.linalg.svd(A._data, compute_uv=False)
        if rtol is None:
            rtol = 0.0 if atol is not None and atol > 0 else xp.finfo(sv.dtype).eps * max(A._data.shape[-2:])
        cutoff = xp.maximum(atol or 0.0, rtol * (sv[..., :1] if sv.shape[-1] else 0))
        return wrap((sv > cutoff).sum(-1).astype(xp.int64))
