"""The eigendecomposition of a general square matrix: ``linalg.eig`` and ``linalg.eigvals``
(declared as ``linalg_eig`` and ``linalg_eigvals``, PyTorch's names, bound by ``leafgrad.linalg``),
and torch.eig, removed from PyTorch, which raises its message.

The eigenvalues and eigenvectors are complex whatever the input (complex64 for float32 and
complex64 input, complex128 for float64 and complex128), as PyTorch's. The forward is LAPACK's
``geev`` through NumPy, the routine PyTorch calls: each eigenvector has norm 1 and its largest
component real. Eigenvectors of real eigenvalues are fixed only up to sign (PyTorch's documentation
says so); NumPy's LAPACK and PyTorch's MKL may choose different signs.

The derivative is PyTorch's (``linalg_eig_backward``): with ``E_ij = conj(L_j - L_i)``,

    gA = V^{-H} (diag(gL) + offdiag((V^H gV - V^H V Re diag(V^H gV)) / E)) V^H,

the real part of it for a real input. A loss that depends on the phase of an eigenvector
(``Im diag(V^H gV)`` not 0) is ill-defined, and its backward raises PyTorch's error.
"""
from .. import backend, return_types
from ..tensor import Tensor
from ._op import Op, safely_castable, write_out, write_outs
from ._util import NotImplementedNode, _as_output, ops, real_part, record, record_many, state, wrap, xp

_SCALAR_NAMES = {'int64': 'Long', 'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool'}
_COMPLEX_OF = {'float32': xp.complex64, 'complex64': xp.complex64, 'float64': xp.complex128,
               'complex128': xp.complex128}


def _check_eig_input(A, name, op, vectors=True):
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}")
    a = A._data
    if a.dtype.name in _SCALAR_NAMES:
        raise RuntimeError(f'Unknown Complex ScalarType for {_SCALAR_NAMES[a.dtype.name]}')
    if a.ndim < 2:
        raise RuntimeError(f'{name}: The input tensor A must have at least 2 dimensions.')
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f'{name}: A must be batches of square matrices, but they are {a.shape[-2]} by '
                           f'{a.shape[-1]} matrices')
    if a.dtype.name not in _COMPLEX_OF:  # float16, bfloat16: LAPACK has no kernel for them
        label = 'Half' if a.dtype.name == 'float16' else 'BFloat16'
        raise NotImplementedError(f'"linalg_eig_out_cpu" not implemented for \'{label}\'')
    if vectors and not xp.isfinite(a).all():
        raise RuntimeError('torch.linalg.eig: input tensor should not contain infs or NaNs.')


def _eig_arrays(a, vectors=True):
    """(eigenvalues, eigenvectors or None) of a batch of square arrays, complex, the
    eigenvectors laid out column by column (strides (1, n)) as LAPACK returns them."""
    dtype = _COMPLEX_OF[a.dtype.name]
    n = a.shape[-1]
    if a.size == 0:
        w, v = xp.zeros(a.shape[:-1], dtype, like=a), xp.zeros(a.shape, dtype, like=a)
    elif vectors:
        w, v = xp.linalg.eig(a)
    else:  # eigvals (no derivative): PyTorch does not check for NaN and infinity; NaN where they are
        finite = xp.isfinite(a).all(axis=(-2, -1))
        w = xp.full(a.shape[:-1], xp.nan, dtype=dtype, like=a) * (1 + 1j)
        if finite.any():
            w[finite] = xp.linalg.eigvals(a[finite])
        v = None
    w = xp.ascontiguousarray(w, dtype=dtype)
    if v is not None:
        v = xp.swapaxes(xp.ascontiguousarray(xp.swapaxes(v.astype(dtype, copy=False), -1, -2)), -1, -2)
    return w, (v if vectors or n == 0 else None)


def _mH(t):
    return ops.transpose(t, -2, -1).conj()


class LinalgEig(Op):
    """linalg.eig(A, *, out=None): the eigenvalues L and eigenvectors V of a square matrix,
    ``A V = V diag(L)``."""
    op, node, method, public = 'linalg_eig', 'LinalgEigBackward0', False, False  # (linalg.eig: leafgrad.linalg's)
    saved = ('eigenvalues', 'eigenvectors')
    complex_rule = True         # the derivative is written for complex gradients (complex_numbers.py)
    __slots__ = ('real_input',)

    def forward(input, *, out=None):
        _check_eig_input(input, 'linalg.eig', 'linalg_eig')
        w, v = _eig_arrays(input._data)
        (L, V), node = record_many([w, v], LinalgEig, (input,))
        if node is not None:
            node.real_input = input._data.dtype.kind != 'c'
            node.save(L, V)  # (saved as they are: the eigenvalues and eigenvectors are outputs)
        result = return_types.linalg_eig(L, V)
        if out is not None:
            return write_outs('linalg_eig', out, result, (safely_castable('torch.linalg.eig', 'eigenvalues'),
                                                          safely_castable('torch.linalg.eig', 'eigenvectors')))
        return result

    def jvp(self, tangents):
        """PyTorch's linalg_eig_jvp: with dP = V^-1 dA V, dL = diag(dP) and
        dV = V (dP / E) (E_ij = L_j - L_i, diagonal 0), less V Re diag(V^H that), which keeps
        the columns of norm 1."""
        L, V = self.saved_tensors
        dA = tangents[0]
        if dA._data.dtype.kind != 'c':
            dA = dA.to(backend.from_np(V._data.dtype))
        dP = _solve(V, ops.matmul(dA, V))
        n = L._data.shape[-1]
        eye = wrap(xp.eye(n, dtype=L._data.real.dtype, like=L._data))
        E = ops.unsqueeze(L, -2) - ops.unsqueeze(L, -1)
        dV = ops.matmul(V, dP / (E + eye) * (1 - eye))
        dV = dV - V * ops.unsqueeze(ops.real(ops.diagonal(ops.matmul(_mH(V), dV), 0, -2, -1)), -2)
        return ops.diagonal(dP, 0, -2, -1), dV

    def apply(self, gL, gV):
        L, V = self.saved_tensors
        gL, gV = _as_output(gL, L), _as_output(gV, V)
        Vh = _mH(V)
        if gV is None:
            if gL is None:
                return None,
            gA = _solve(Vh, ops.unsqueeze(gL, -1) * Vh)
        else:
            VhgV = ops.matmul(Vh, gV)
            diagonal = ops.diagonal(VhgV, 0, -2, -1)
            phase = xp.abs(diagonal._data.imag)
            if not (phase <= 1e-2).all():  # allclose(Im diag, 0, rtol=1e-2, atol=1e-2), PyTorch's test
                raise RuntimeError('linalg_eig_backward: The eigenvectors in the complex case are specified up to '
                                   'multiplication by e^{i phi}. The specified loss function depends on this '
                                   'quantity, so it is ill-defined.')
            # project onto the tangent space of matrices with columns of norm 1
            VhgV = VhgV - ops.matmul(Vh, V * ops.unsqueeze(real_part(diagonal), -2))
            n = L._data.shape[-1]
            Lc = L.conj()
            E = ops.unsqueeze(Lc, -2) - ops.unsqueeze(Lc, -1)
            eye = wrap(xp.eye(n, dtype=L._data.real.dtype, like=L._data))
            gA = VhgV / (E + eye)  # (the diagonal divided by 1)
            if gL is not None:     # the diagonal is gL
                gA = gA * (1 - eye) + ops.unsqueeze(gL, -1) * eye
            gA = _solve(Vh, ops.matmul(gA, Vh))
        return (real_part(gA) if self.real_input else gA),


def _solve(A, B):
    return ops.linalg_solve(A, B)


class LinalgEigvals(Op):
    """linalg.eigvals(input, *, out=None): the eigenvalues of ``linalg.eig`` (recorded as its node
    when ``A`` requires grad, as PyTorch does: their derivative needs the eigenvectors)."""
    op, method, public = 'linalg_eigvals', False, False  # (linalg.eigvals: leafgrad.linalg's)

    def forward(input, *, out=None):
        if out is not None:  # (PyTorch's eigvals with out= has no derivative: its NotImplemented node)
            plain = ops.linalg_eigvals(input.detach() if isinstance(input, Tensor) else input)
            values, node = record(plain._data, NotImplementedNode, (input,))
            if node is not None:
                node.op_name = 'linalg_eigvals'
            return write_out('aten::linalg_eigvals', out, values,
                             safely_castable('torch.linalg.eigvals', 'eigenvalues'), label='linalg_eigvals')
        if isinstance(input, Tensor) and input._requires_grad and state.grad_enabled:
            return ops.linalg_eig(input)[0]
        _check_eig_input(input, 'linalg.eigvals', 'linalg_eigvals', vectors=False)
        return wrap(_eig_arrays(input._data, vectors=False)[0])


_REMOVED = ('This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` returns '
            'complex tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\n'
            'L, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\n'
            'L, V = torch.eig(A, eigenvectors=True) should be replaced with:\nL_complex, V_complex = '
            'torch.linalg.eig(A)')


class Eig(Op):
    """eig(self, eigenvectors=False): torch.eig and Tensor.eig, removed in PyTorch 1.9; they raise
    its message."""
    op = 'eig'

    def forward(self, eigenvectors=False):
        """torch.eig and Tensor.eig: removed in PyTorch 1.9; they raise its message."""
        raise RuntimeError(_REMOVED)


# the other linear-algebra functions PyTorch removed in 1.9 and still binds, each raising its
# message (torch._linalg_utils)
_REMOVED_LSTSQ = (
    'This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is deprecated in favor of '
    '`torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in '
    'the returned tuple (although it returns other information about the problem).\n\nTo get the QR decomposition '
    'consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the '
    'solution in the last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals '
    "are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\n"
    'X, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution')
_REMOVED_SOLVE = (
    'This function was deprecated since version 1.9 and is now removed. `torch.solve` is deprecated in favor of '
    '`torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the LU '
    'factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or '
    '`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)')
_REMOVED_SYMEIG = (
    'This function was deprecated since version 1.9 and is now removed. The default behavior has changed from '
    'using the upper triangular portion of the matrix by default to using the lower triangular portion.\n\n'
    "L, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper "
    "else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_REMOVED_MATRIX_RANK = (
    'This function was deprecated since version 1.9 and is now removed.\nPlease use the `torch.linalg.matrix_rank` '
    "function instead. The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


class Lstsq(Op):
    """lstsq(input, A, *, out=None): removed in PyTorch 1.9; raises its message (Tensor.lstsq too)."""
    op, parsed = 'lstsq', False

    def forward(input, A, *, out=None):
        raise RuntimeError(_REMOVED_LSTSQ)

    def method(self, other):
        raise RuntimeError(_REMOVED_LSTSQ)


class Solve(Op):
    """solve(input, A, *, out=None): removed in PyTorch 1.9; raises its message (Tensor.solve too)."""
    op, parsed = 'solve', False

    def forward(input, A, *, out=None):
        raise RuntimeError(_REMOVED_SOLVE)

    def method(self, other):
        raise RuntimeError(_REMOVED_SOLVE)


class Symeig(Op):
    """symeig(input, eigenvectors=False, upper=True, *, out=None): removed in PyTorch 1.9; raises
    its message (Tensor.symeig too)."""
    op, parsed = 'symeig', False

    def forward(input, eigenvectors=False, upper=True, *, out=None):
        raise RuntimeError(_REMOVED_SYMEIG)

    def method(self, eigenvectors=False):
        raise RuntimeError(_REMOVED_SYMEIG)


class MatrixRank(Op):
    """matrix_rank(input, tol=None, symmetric=False, *, out=None): removed in PyTorch 1.9; raises
    its message."""
    op, parsed, method = 'matrix_rank', False, False

    def forward(input, tol=None, symmetric=False, *, out=None):
        raise RuntimeError(_REMOVED_MATRIX_RANK)
