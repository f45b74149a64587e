"""Complex matrices in the decompositions that are not holomorphic (slogdet, cholesky, qr, eigh,
eigvalsh, svd, svdvals; det of a singular matrix) against torch: values, dtypes, gradients under
PyTorch's convention, float64 gradcheck and gradgradcheck, and the error of a loss that depends on
the phase of singular vectors or eigenvectors. (inv, det, solve ...: tests/test_linalg_eig.py.)"""
import numpy as np
import pytest

from oracle import lg, same_message, torch

RNG = np.random.RandomState(3)
SQUARE = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))


def _herm(T, a):
    return a @ a.mH + 4 * T.eye(a.shape[-1], dtype=a.dtype)


def _phase_free(T, V):
    first = V[..., 0:1, :]
    return V * (first.abs() / first)


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


# each: a function of a complex matrix whose outputs do not depend on the phase of singular
# vectors or eigenvectors (PyTorch leaves them free)
FUNCTIONS = {
    'slogdet': lambda T, a: tuple(T.linalg.slogdet(a)),
    'slogdet_logabsdet': lambda T, a: T.linalg.slogdet(a)[1],
    'slogdet_sign': lambda T, a: T.linalg.slogdet(a)[0],
    'cholesky': lambda T, a: T.linalg.cholesky(_herm(T, a)),
    'cholesky_upper': lambda T, a: T.linalg.cholesky(_herm(T, a), upper=True),
    'qr': lambda T, a: tuple(T.linalg.qr(a)),
    'qr_tall': lambda T, a: tuple(T.linalg.qr(a[..., :2])),
    'qr_wide': lambda T, a: tuple(T.linalg.qr(a[..., :2, :])),
    'qr_complete': lambda T, a: tuple(T.linalg.qr(a, mode='complete')),
    'eigh': lambda T, a: (T.linalg.eigh(_herm(T, a))[0], _phase_free(T, T.linalg.eigh(_herm(T, a))[1])),
    'eigh_upper': lambda T, a: (T.linalg.eigh(_herm(T, a), UPLO='U')[0],
                                _phase_free(T, T.linalg.eigh(_herm(T, a), UPLO='U')[1])),
    'eigvalsh': lambda T, a: T.linalg.eigvalsh(_herm(T, a)),
    'svd': lambda T, a: (lambda r: (r.S, r.U @ r.Vh, _phase_free(T, r.U)))(T.linalg.svd(a)),
    'svd_tall': lambda T, a: (lambda r: (r.S, r.U @ r.Vh))(T.linalg.svd(a[..., :2], full_matrices=False)),
    'svd_wide': lambda T, a: (lambda r: (r.S, r.U @ r.Vh))(T.linalg.svd(a[..., :2, :], full_matrices=False)),
    'svdvals': lambda T, a: T.linalg.svdvals(a),
    'det_singular': lambda T, a: T.linalg.det(a[..., :1] @ a[..., :1, :]),
    'logdet': lambda T, a: T.logdet(a),
    'matrix_exp': lambda T, a: T.linalg.matrix_exp(a),
    'vecdot': lambda T, a: T.linalg.vecdot(a, a.flip(-1) * 2),
    'cond': lambda T, a: T.linalg.cond(a),
}


def _loss(T, outs):
    outs = outs if isinstance(outs, tuple) else (outs,)
    total = 0
    for k, o in enumerate(outs):
        weights = (T.arange(o.numel(), dtype=T.float64).reshape(o.shape) / 7 - 0.5).to(o.real.dtype)
        total = total + (o * o * weights).real.sum() + (k + 1) * (o * weights).imag.sum() if o.is_complex() else \
            total + (o * o * weights).sum()
    return total


@pytest.mark.parametrize('name', list(FUNCTIONS))
@pytest.mark.parametrize('dtype', ['complex64', 'complex128'])
def test_complex_decompositions_values_and_gradients_as_torch(name, dtype):
    results = []
    for T in (lg, torch):
        a = T.tensor(SQUARE.astype(dtype), requires_grad=True)
        outs = FUNCTIONS[name](T, a)
        if name == 'det_singular':  # PyTorch's cofactors from an SVD need create_graph
            (g,) = T.autograd.grad(_loss(T, outs), a, create_graph=True)
        else:
            _loss(T, outs).backward()
            g = a.grad
        results.append(((outs if isinstance(outs, tuple) else (outs,)), g))
    tol = 2e-4 if dtype == 'complex64' else 1e-9
    (outs_l, g_l), (outs_t, g_t) = results
    for x, y in zip(outs_l, outs_t):
        assert str(x.dtype).split('.')[1] == str(y.dtype).split('.')[1] and tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(_np(x), _np(y), rtol=tol, atol=tol)
    assert str(g_l.dtype).split('.')[1] == dtype
    np.testing.assert_allclose(_np(g_l), _np(g_t), rtol=tol, atol=tol)


@pytest.mark.parametrize('name', [n for n in FUNCTIONS if n != 'det_singular'])
def test_complex_decompositions_gradcheck_and_gradgradcheck(name):
    a = lg.tensor(SQUARE[0], requires_grad=True)
    assert lg.autograd.gradcheck(lambda a: FUNCTIONS[name](lg, a), (a,))
    assert lg.autograd.gradgradcheck(lambda a: FUNCTIONS[name](lg, a), (a,))


PHASE_DEPENDENT = {
    'qr_r': lambda T, a: T.linalg.qr(a, mode='r')[1].abs().sum(),  # (not a phase: Q is not computed)
    'eigh': lambda T, a: T.linalg.eigh(_herm(T, a))[1].real.sum(),
    'svd_U': lambda T, a: T.linalg.svd(a)[0].real.sum(),
    'svd_Vh': lambda T, a: T.linalg.svd(a)[2].imag.sum(),
}


@pytest.mark.parametrize('name', list(PHASE_DEPENDENT))
def test_backward_errors_as_torch(name):
    msgs = []
    for T in (lg, torch):
        a = T.tensor(SQUARE, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            PHASE_DEPENDENT[name](T, a).backward()
        msgs.append(str(info.value))
        assert a.grad is None
    assert same_message(*msgs), msgs


def test_complex_cholesky_of_a_matrix_that_is_not_positive_definite_raises_as_torch():
    msgs = []
    for T in (lg, torch):
        with pytest.raises(T.linalg.LinAlgError) as info:
            T.linalg.cholesky(-_herm(T, T.tensor(SQUARE)))
        msgs.append(str(info.value))
    assert same_message(*msgs)


REFUSED = {
    'pinv': lambda T, a: T.linalg.pinv(a), 'matrix_norm': lambda T, a: T.linalg.matrix_norm(a),
    'matrix_rank': lambda T, a: T.linalg.matrix_rank(a), 'cond_fro': lambda T, a: T.linalg.cond(a, 'fro'),
    'lstsq': lambda T, a: T.linalg.lstsq(a, a), 'lu_factor': lambda T, a: T.linalg.lu_factor(a),
    'lu': lambda T, a: T.linalg.lu(a), 'geqrf': lambda T, a: T.geqrf(a),
    'householder_product': lambda T, a: T.linalg.householder_product(a, a[..., 0]),
    'cholesky_solve': lambda T, a: T.cholesky_solve(a, a), 'cholesky_inverse': lambda T, a: T.cholesky_inverse(a),
}


@pytest.mark.parametrize('name', list(REFUSED))
def test_complex_matrices_still_refused_by_name(name):
    REFUSED[name](torch, torch.tensor(SQUARE))  # (torch takes them)
    with pytest.raises(NotImplementedError, match='real matrices only'):
        REFUSED[name](lg, lg.tensor(SQUARE))
