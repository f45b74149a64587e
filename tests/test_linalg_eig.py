"""linalg.eig and linalg.eigvals against torch: complex values, dtypes, shapes, gradients
(PyTorch's formula, real and complex input), float64 gradcheck and gradgradcheck, the error of a
loss that depends on an eigenvector's phase, and the input errors."""
import numpy as np
import pytest

from oracle import lg, raises_like, same_message, torch

RNG = np.random.RandomState(7)
REAL = RNG.standard_normal((2, 4, 4))
CPLX = RNG.standard_normal((2, 4, 4)) + 1j * RNG.standard_normal((2, 4, 4))


def _phase_free(T, V):
    """Eigenvectors with each column's first component made real and positive: LAPACK builds
    may choose another sign for a real eigenvector (and PyTorch documents the phase as arbitrary)."""
    first = V[..., 0:1, :]
    return V * (first.abs() / first)


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'complex64', 'complex128'])
def test_eig_values_dtypes_shapes_as_torch(dtype):
    a = (CPLX if dtype.startswith('complex') else REAL).astype(dtype)
    results = []
    for T in (lg, torch):
        L, V = T.linalg.eig(T.tensor(a))
        w = T.linalg.eigvals(T.tensor(a))
        results.append((L, _phase_free(T, V), w, V))
    (Ll, Vl, wl, Vl_raw), (Lt, Vt, wt, Vt_raw) = results
    tol = 1e-4 if dtype in ('float32', 'complex64') else 1e-10
    for x, y in ((Ll, Lt), (Vl, Vt), (wl, wt)):
        assert str(x.dtype).split('.')[1] == str(y.dtype).split('.')[1]
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(_np(x), _np(y), rtol=tol, atol=tol)
    assert Vl_raw.stride() == Vt_raw.stride()  # the eigenvectors column by column, as LAPACK writes them
    # A V = V diag(L)
    np.testing.assert_allclose(_np(lg.tensor(a).to(Vl_raw.dtype) @ Vl_raw), _np(Vl_raw * Ll.unsqueeze(-2)),
                               rtol=tol, atol=tol)


def test_eig_of_empty_and_one_by_one_matrices_as_torch():
    for shape in ((0, 0), (3, 0, 0), (1, 1)):
        a = np.full(shape, 2.0, dtype=np.float32)
        (Ll, Vl), (Lt, Vt) = lg.linalg.eig(lg.tensor(a)), torch.linalg.eig(torch.tensor(a))
        assert tuple(Ll.shape) == tuple(Lt.shape) and tuple(Vl.shape) == tuple(Vt.shape)
        assert str(Ll.dtype) == 'leafgrad.complex64' and str(Vl.dtype) == 'leafgrad.complex64'
        np.testing.assert_allclose(_np(Ll), _np(Lt))


def _loss(T, X):
    L, V = T.linalg.eig(X)
    W = _phase_free(T, V)
    return (L * L).real.sum() + 2 * L.imag.sum() + (W * W.conj().flip(-2)).real.sum() + W.imag.pow(2).sum()


@pytest.mark.parametrize('kind', ['real', 'complex'])
def test_eig_gradient_as_torch(kind):
    a = REAL if kind == 'real' else CPLX
    grads = []
    for T in (lg, torch):
        X = T.tensor(a, requires_grad=True)
        loss = _loss(T, X)
        assert type(loss.grad_fn).__name__ == 'AddBackward0'
        loss.backward()
        assert str(X.grad.dtype).split('.')[1] == str(X.dtype).split('.')[1]
        grads.append(_np(X.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize('kind', ['real', 'complex'])
def test_eigvals_gradient_as_torch(kind):
    a = REAL if kind == 'real' else CPLX
    grads = []
    for T in (lg, torch):
        X = T.tensor(a, requires_grad=True)
        w = T.linalg.eigvals(X)
        assert type(w.grad_fn).__name__ == 'LinalgEigBackward0'
        (w.abs() * T.arange(4.0)).sum().backward()
        grads.append(_np(X.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize('kind', ['real', 'complex'])
def test_eig_gradcheck_and_gradgradcheck(kind):
    a = REAL[:, :3, :3] if kind == 'real' else CPLX[:, :3, :3]

    def eig_phase_free(X):
        L, V = lg.linalg.eig(X)
        return L, _phase_free(lg, V)
    X = lg.tensor(a, requires_grad=True)
    assert lg.autograd.gradcheck(eig_phase_free, (X,))
    assert lg.autograd.gradgradcheck(eig_phase_free, (X,))
    assert lg.autograd.gradcheck(lg.linalg.eigvals, (X,))


def test_eig_node_and_saved_tensors_as_torch():
    for T in (lg, torch):
        X = T.tensor(REAL, requires_grad=True)
        L, V = T.linalg.eig(X)
        assert type(L.grad_fn).__name__ == type(V.grad_fn).__name__ == 'LinalgEigBackward0'
        assert L.grad_fn is V.grad_fn
        np.testing.assert_array_equal(_np(L.grad_fn._saved_eigenvalues), _np(L))
        np.testing.assert_array_equal(_np(L.grad_fn._saved_eigenvectors), _np(V))
        assert T.linalg.eigvals(T.tensor(REAL)).grad_fn is None
        with T.no_grad():
            assert T.linalg.eigvals(X).grad_fn is None


def test_a_loss_that_depends_on_the_eigenvectors_phase_raises_as_torch():
    msgs = []
    for T in (lg, torch):
        X = T.tensor(CPLX, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            T.linalg.eig(X)[1].real.sum().backward()
        msgs.append(str(info.value))
        assert X.grad is None
    assert same_message(*msgs)


@pytest.mark.parametrize('name', ['eig', 'eigvals'])
@pytest.mark.parametrize('bad', ['int', 'bool', 'vector', 'int_vector', 'rect', 'half', 'bfloat16', 'half_rect', 'nan',
                                 'inf_batch', 'list'])
def test_eig_errors_as_torch(name, bad):
    def make(T):
        return {'int': lambda: T.ones(3, 3, dtype=T.int64), 'bool': lambda: T.ones(2, 2, dtype=T.bool),
                'vector': lambda: T.ones(3), 'int_vector': lambda: T.ones(3, dtype=T.int32),
                'rect': lambda: T.ones(3, 2), 'half': lambda: T.ones(2, 2, dtype=T.float16),
                'bfloat16': lambda: T.ones(2, 2, dtype=T.bfloat16), 'half_rect': lambda: T.ones(3, 2, dtype=T.float16),
                'nan': lambda: T.tensor([[float('nan'), 1.0], [0.0, 1.0]]),
                'inf_batch': lambda: T.tensor([[[1.0, 1.0], [0.0, 1.0]], [[float('inf'), 1.0], [0.0, 1.0]]]),
                'list': lambda: [[1.0, 0.0], [0.0, 1.0]]}[bad]()
    if name == 'eigvals' and bad in ('nan', 'inf_batch'):  # without a derivative: no check (LAPACK's NaN)
        out = lg.linalg.eigvals(make(lg))
        assert tuple(out.shape) == tuple(torch.linalg.eigvals(make(torch)).shape)
        rows = _np(out).reshape(-1, 2)  # the last matrix is not finite
        assert np.isnan(rows[-1]).any() and np.isfinite(rows[:-1]).all()
        name = 'eigvals_grad'
    if name == 'eigvals_grad':  # computed as eig when the input requires grad: its check
        msgs = raises_like(lambda: lg.linalg.eigvals(make(lg).requires_grad_()),
                           lambda: torch.linalg.eigvals(make(torch).requires_grad_()))
    else:
        msgs = raises_like(lambda: getattr(lg.linalg, name)(make(lg)), lambda: getattr(torch.linalg, name)(make(torch)))
    assert same_message(*msgs), msgs


def test_eig_keyword_errors_as_torch():
    msgs = raises_like(lambda: lg.linalg.eig(lg.eye(2), foo=1), lambda: torch.linalg.eig(torch.eye(2), foo=1))
    assert same_message(*msgs)
    (Ll, _), (Lt, _) = lg.linalg.eig(input=lg.eye(2)), torch.linalg.eig(input=torch.eye(2))
    np.testing.assert_array_equal(_np(Ll), _np(Lt))


def test_the_removed_eig_raises_as_torch():
    for fn in (lambda T: T.eig(T.eye(2)), lambda T: T.eye(2).eig()):
        msgs = raises_like(lambda: fn(lg), lambda: fn(torch))
        assert same_message(*msgs)


# ---- complex matrices in the holomorphic functions: inv, det, solve, solve_triangular, matrix_power

SQUARE = CPLX[0] + 3 * np.eye(4)
RHS = RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))
HOLOMORPHIC = {
    'inv': lambda T, a, b: T.linalg.inv(a),
    'det': lambda T, a, b: T.linalg.det(a),
    'solve': lambda T, a, b: T.linalg.solve(a, b),
    'solve_right': lambda T, a, b: T.linalg.solve(a, b.mT, left=False),
    'solve_vector': lambda T, a, b: T.linalg.solve(a, b[:, 0]),
    'solve_triangular': lambda T, a, b: T.linalg.solve_triangular(a, b, upper=True),
    'matrix_power': lambda T, a, b: T.linalg.matrix_power(a, 3),
    'matrix_power_negative': lambda T, a, b: T.linalg.matrix_power(a, -2),
}


@pytest.mark.parametrize('name', list(HOLOMORPHIC))
@pytest.mark.parametrize('dtype', ['complex64', 'complex128'])
def test_complex_inv_det_solve_as_torch(name, dtype):
    fn = HOLOMORPHIC[name]
    results = []
    for T in (lg, torch):
        a = T.tensor(SQUARE.astype(dtype), requires_grad=True)
        b = T.tensor(RHS.astype(dtype), requires_grad=True)
        out = fn(T, a, b)
        (out * out.conj() + out.real * 3).real.sum().backward()
        results.append((out, a.grad, b.grad))
    tol = 1e-4 if dtype == 'complex64' else 1e-10
    for x, y in zip(*results):
        if y is None:
            assert x is None
            continue
        assert str(x.dtype).split('.')[1] == str(y.dtype).split('.')[1] and tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(_np(x), _np(y), rtol=tol, atol=tol)


@pytest.mark.parametrize('name', list(HOLOMORPHIC))
def test_complex_inv_det_solve_gradcheck(name):
    fn = HOLOMORPHIC[name]
    a = lg.tensor(SQUARE[:3, :3], requires_grad=True)
    b = lg.tensor(RHS[:3], requires_grad=True)
    assert lg.autograd.gradcheck(lambda a, b: fn(lg, a, b), (a, b))
    assert lg.autograd.gradgradcheck(lambda a, b: fn(lg, a, b), (a, b))


def test_complex_solve_takes_one_dtype_as_torch():
    msgs = raises_like(lambda: lg.linalg.solve(lg.tensor(SQUARE), lg.tensor(RHS.real)),
                       lambda: torch.linalg.solve(torch.tensor(SQUARE), torch.tensor(RHS.real)))
    assert same_message(*msgs)


# ---- lstsq, solve, symeig, matrix_rank: removed in PyTorch 1.9, still bound, raising ------------

@pytest.mark.parametrize('call', ['T.lstsq(T.ones(2, 2), T.ones(2, 2))', 'T.solve(T.ones(2, 2), A=T.ones(2, 2))',
                                  'T.symeig(T.ones(2, 2), True, upper=False)', 'T.matrix_rank(T.ones(2, 2), 1e-3)',
                                  'T.ones(2, 2).lstsq(T.ones(2, 2))', 'T.ones(2, 2).symeig(True)',
                                  'T.ones(2, 2).solve(T.ones(2, 2))', 'T.lstsq(T.ones(2, 2))',
                                  'T.matrix_rank(T.ones(2, 2), out=T.ones(1))'])
def test_removed_functions_raise_as_torch(call):
    errors = []
    for T in (lg, torch):
        with pytest.raises(Exception) as info:
            eval(call, {'T': T})
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
