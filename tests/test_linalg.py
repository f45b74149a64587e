"""Matrix products, einsum, tensordot and the linalg decompositions against torch: values,
node names, gradients, second derivatives, float64 finite differences, errors."""
import warnings

import numpy as np
import pytest

import leafgrad as lg
from optable import check_fast, needs_torch, torch


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def spd(n, batch=()):
    """A well-conditioned symmetric positive-definite matrix (as a free parameter: A, used as A A^T + n I)."""
    return lambda rng: rng.standard_normal(batch + (n, n))


def well_conditioned(n, batch=()):
    return lambda rng: rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)


def sym(T, a):
    n = a.shape[-1]
    return a @ a.mT + n * T.eye(n, dtype=a.dtype)


def case(name, fn, gens, twice=True, node=True):
    return pytest.param(fn, gens, twice, node, id=name)


# decompositions are compared through functions that do not depend on the sign (or rotation) of
# singular vectors and eigenvectors, which LAPACK builds may choose differently
CASES = [
    case('mm', lambda T, a, b: T.mm(a, b), [normal(2, 3), normal(3, 4)]),
    case('mv', lambda T, a, b: T.mv(a, b), [normal(2, 3), normal(3)]),
    case('dot', lambda T, a, b: T.dot(a, b), [normal(4), normal(4)]),
    case('outer', lambda T, a, b: T.outer(a, b), [normal(3), normal(4)]),
    case('bmm', lambda T, a, b: T.bmm(a, b), [normal(2, 3, 4), normal(2, 4, 2)]),
    case('matmul_broadcast', lambda T, a, b: T.matmul(a, b), [normal(2, 1, 3, 4), normal(3, 4, 2)]),
    case('matmul_vec_batch', lambda T, a, b: T.matmul(a, b), [normal(4), normal(2, 4, 3)]),
    case('addmm', lambda T, c, a, b: T.addmm(c, a, b), [normal(2, 4), normal(2, 3), normal(3, 4)]),
    case('addmm_scaled_broadcast', lambda T, c, a, b: T.addmm(c, a, b, beta=0.5, alpha=2.0),
         [normal(4), normal(2, 3), normal(3, 4)]),
    case('addmv', lambda T, c, a, b: T.addmv(c, a, b, beta=2, alpha=-1), [normal(2), normal(2, 3), normal(3)]),
    case('baddbmm', lambda T, c, a, b: T.baddbmm(c, a, b, alpha=0.5), [normal(1, 3, 2), normal(2, 3, 4),
                                                                     normal(2, 4, 2)]),
    case('addbmm', lambda T, c, a, b: T.addbmm(c, a, b), [normal(3, 2), normal(2, 3, 4), normal(2, 4, 2)]),
    case('tensordot_int', lambda T, a, b: T.tensordot(a, b, 2), [normal(2, 3, 4), normal(3, 4, 5)]),
    case('tensordot_lists', lambda T, a, b: T.tensordot(a, b, ([0, 2], [2, 0])), [normal(2, 3, 4), normal(4, 5, 2)]),
    case('einsum_mm', lambda T, a, b: T.einsum('ij,jk->ik', a, b), [normal(2, 3), normal(3, 4)]),
    case('einsum_batch', lambda T, a, b: T.einsum('bij,bjk->bik', a, b), [normal(2, 3, 4), normal(2, 4, 2)]),
    case('einsum_trace', lambda T, a: T.einsum('ii', a), [normal(3, 3)], node=False),
    case('einsum_diag', lambda T, a: T.einsum('ii->i', a), [normal(3, 3)], node=False),
    case('einsum_sum', lambda T, a: T.einsum('ij->', a), [normal(2, 3)]),
    case('einsum_outer', lambda T, a, b: T.einsum('i,j->ij', a, b), [normal(3), normal(4)]),
    case('einsum_implicit', lambda T, a, b: T.einsum('ij,kj', a, b), [normal(2, 3), normal(4, 3)]),
    case('einsum_ellipsis', lambda T, a, b: T.einsum('...ij,...jk', a, b), [normal(2, 1, 3, 4), normal(5, 4, 2)]),
    case('einsum_three', lambda T, a, b, c: T.einsum('abc,cd,de->ae', a, b, c), [normal(2, 3, 4), normal(4, 5),
                                                                                normal(5, 2)]),
    case('einsum_attention', lambda T, q, k: T.einsum('bhqd,bhkd->bhqk', q, k), [normal(2, 3, 4, 5), normal(2, 3, 6, 5)]),
    case('einsum_repeated_contract', lambda T, a, b: T.einsum('iij,jk->ik', a, b), [normal(3, 3, 2), normal(2, 4)],
         node=False),
    case('einsum_broadcast_one', lambda T, a, b: T.einsum('ij,j->i', a, b), [normal(3, 1), normal(4)]),
    case('einsum_list_operands', lambda T, a, b: T.einsum('ij,ij->i', [a, b]), [normal(2, 3), normal(2, 3)]),
    case('einsum_sublists', lambda T, a, b: T.einsum(a, [0, 1], b, [1, 30], [30, 0]), [normal(2, 3), normal(3, 4)]),
    case('einsum_sublists_implicit', lambda T, a, b: T.einsum(a, [27, 0], b, [27, 3]), [normal(3, 2), normal(3, 4)]),
    case('einsum_sublists_ellipsis', lambda T, a, b: T.einsum(a, [..., 0, 1], b, [..., 1, 2], [..., 2]),
         [normal(2, 3, 4), normal(2, 4, 5)]),
    case('inv', lambda T, a: T.linalg.inv(a), [well_conditioned(3)]),
    case('inv_batch', lambda T, a: T.linalg.inv(a), [well_conditioned(3, (2,))]),
    case('inverse', lambda T, a: T.inverse(a), [well_conditioned(3)]),
    case('det', lambda T, a: T.linalg.det(a), [normal(2, 3, 3)]),
    case('det_method', lambda T, a: a.det(), [normal(3, 3)]),
    case('slogdet', lambda T, a: T.linalg.slogdet(a)[1], [normal(2, 3, 3)]),
    case('logdet', lambda T, a: T.logdet(sym(T, a)), [normal(3, 3)], node=False),
    case('solve', lambda T, a, b: T.linalg.solve(a, b), [well_conditioned(3), normal(3, 2)]),
    case('solve_vector', lambda T, a, b: T.linalg.solve(a, b), [well_conditioned(3), normal(3)]),
    case('solve_batch_broadcast', lambda T, a, b: T.linalg.solve(a, b), [well_conditioned(3, (2,)), normal(3, 2)]),
    case('solve_right', lambda T, a, b: T.linalg.solve(a, b, left=False), [well_conditioned(3), normal(2, 3)]),
    case('cholesky', lambda T, a: T.linalg.cholesky(sym(T, a)), [spd(3)]),
    case('cholesky_upper_batch', lambda T, a: T.linalg.cholesky(sym(T, a), upper=True), [spd(3, (2,))]),
    case('qr_r_squared', lambda T, a: T.linalg.qr(a)[1] ** 2, [normal(4, 3)], node=False),
    case('qr_product', lambda T, a: (lambda q, r: q @ r)(*T.linalg.qr(a)), [normal(4, 3)], node=False),
    case('qr_q_squared', lambda T, a: T.linalg.qr(a)[0] ** 2, [normal(4, 3)], node=False),
    case('qr_wide', lambda T, a: (lambda q, r: q ** 2 + r[:, :3] ** 2)(*T.linalg.qr(a)), [normal(3, 5)], node=False),
    case('eigh_values', lambda T, a: T.linalg.eigh(sym(T, a))[0], [normal(3, 3)]),
    case('eigh_vectors', lambda T, a: T.linalg.eigh(sym(T, a))[1] ** 2, [normal(3, 3)], node=False),
    case('svd_values', lambda T, a: T.linalg.svd(a, full_matrices=False)[1], [normal(4, 3)]),
    case('svd_u', lambda T, a: T.linalg.svd(a, full_matrices=False)[0] ** 2, [normal(4, 3)], node=False),
    case('svd_vh_wide', lambda T, a: T.linalg.svd(a, full_matrices=False)[2] ** 2, [normal(3, 5)], node=False),
    case('svd_full', lambda T, a: T.linalg.svd(a)[0][:, :3] ** 2, [normal(4, 3)], node=False),
    case('solve_triangular_lower', lambda T, a, b: T.linalg.solve_triangular(a, b, upper=False),
         [well_conditioned(3), normal(3, 2)]),
    case('solve_triangular_upper_right_unit', lambda T, a, b: T.linalg.solve_triangular(a, b, upper=True, left=False,
                                                                                         unitriangular=True),
         [well_conditioned(3), normal(2, 3)]),
    case('pinv_tall', lambda T, a: T.linalg.pinv(a), [normal(4, 3)]),
    case('pinv_wide_batch', lambda T, a: T.linalg.pinv(a), [normal(2, 2, 4)]),
    case('pinverse', lambda T, a: T.pinverse(a), [normal(3, 2)]),
    case('matrix_power_5', lambda T, a: T.linalg.matrix_power(a, 5), [normal(3, 3)]),
    case('matrix_power_neg', lambda T, a: T.linalg.matrix_power(a, -2), [well_conditioned(3)]),
    case('matrix_power_1', lambda T, a: a.matrix_power(1), [normal(3, 3)]),
    case('multi_dot', lambda T, a, b, c: T.linalg.multi_dot([a, b, c]), [normal(3), normal(3, 4), normal(4, 2)],
         node=False),
    case('vecdot', lambda T, a, b: T.linalg.vecdot(a, b), [normal(2, 3), normal(2, 3)]),
    case('cross', lambda T, a, b: T.linalg.cross(a, b), [normal(2, 3), normal(1, 3)]),
    case('torch_cross', lambda T, a, b: T.cross(a, b, dim=1), [normal(2, 3), normal(1, 3)]),
    case('torch_cross_method', lambda T, a, b: a.cross(b, 0), [normal(3, 2), normal(3, 2)]),
    case('torch_cross_first_3', lambda T, a, b: T.cross(a, b), [normal(2, 3, 3), normal(2, 3, 3)]),
    case('cdist', lambda T, a, b: T.cdist(a, b), [normal(4, 3), normal(5, 3)], twice=False),  # torch: no 2nd
    case('cdist_p1_batch', lambda T, a, b: T.cdist(a, b, p=1), [normal(2, 4, 3), normal(2, 2, 3)], twice=False),
    case('cdist_p3', lambda T, a, b: T.cdist(a, b, p=3), [normal(4, 3), normal(2, 3)], twice=False),
    case('cdist_inf', lambda T, a, b: T.cdist(a, b, p=float('inf')), [normal(4, 3), normal(2, 3)], twice=False),
    case('pdist', lambda T, a: T.nn.functional.pdist(a), [normal(4, 3)], twice=False),
    case('pdist_p1', lambda T, a: T.pdist(a, p=1), [normal(5, 2)], twice=False),
    case('torch_svd', lambda T, a: (lambda u, s, v: s.sum() + (v ** 2).sum(0) @ T.arange(3.0, dtype=a.dtype))(
        *T.svd(a)), [normal(4, 3)], node=False),
    case('torch_cholesky', lambda T, a: T.cholesky(sym(T, a)), [spd(3)]),
    case('torch_qr', lambda T, a: T.qr(a)[1] ** 2, [normal(4, 3)], node=False),
    case('chain_matmul', lambda T, a, b, c: T.chain_matmul(a, b, c), [normal(2, 3), normal(3, 4), normal(4, 2)],
         node=False),
    case('svd_low_rank_product', lambda T, a: (lambda u, s, vh: u[:, :2] * s[:2] @ vh[:2])(*T.linalg.svd(a)),
         [normal(3, 5)], node=False),
]


def _make(gens, seed=0):
    rng = np.random.default_rng(seed)
    return [g(rng) for g in gens]


def _np(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t.detach().numpy()


def _run(T, fn, arrays, dtype):
    ts = [T.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return ts, fn(T, *ts)


@needs_torch
@pytest.mark.parametrize('fn,gens,twice,node', CASES)
def test_forward_and_grads_match_torch(fn, gens, twice, node):
    arrays = _make(gens)
    lts, lout = _run(lg, fn, arrays, lg.float32)
    tts, tout = _run(torch, fn, arrays, torch.float32)
    assert tuple(lout.shape) == tuple(tout.shape)
    assert lout.dtype.name == str(tout.dtype).split('.')[-1]
    np.testing.assert_allclose(_np(lout), _np(tout), rtol=1e-4, atol=1e-4)
    if node:
        assert lout.grad_fn.name() == tout.grad_fn.name()
    w = np.random.default_rng(1).standard_normal(tuple(tout.shape)).astype(np.float32)
    (lout * lg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for a, b in zip(lts, tts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-3, atol=1e-3)


def _second(T, fn, arrays):
    ts, out = _run(T, fn, arrays, T.float64)
    w = T.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grads = T.autograd.grad((out * w).sum(), ts, create_graph=True, allow_unused=True)
    terms = [(g * g).sum() for g in grads if g is not None and g.requires_grad]
    if not terms:
        return None
    second = T.autograd.grad(sum(terms[1:], terms[0]), ts, allow_unused=True)
    return [np.zeros(tuple(t.shape)) if s is None else _np(s) for t, s in zip(ts, second)]


@needs_torch
@pytest.mark.parametrize('fn,gens,twice,node', [c for c in CASES if c.values[2]],
                         ids=[c.id for c in CASES if c.values[2]])
def test_second_derivatives_match_torch(fn, gens, twice, node):
    arrays = _make(gens)
    lres, tres = _second(lg, fn, arrays), _second(torch, fn, arrays)
    if tres is None or lres is None:
        assert lres is None or all(not np.any(r) for r in lres)
        assert tres is None or all(not np.any(r) for r in tres)
        return
    for a, b in zip(lres, tres):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('fn,gens,twice,node', CASES)
def test_finite_differences_float64(fn, gens, twice, node):
    arrays = _make(gens)
    f = lambda *ts: fn(lg, *ts)  # noqa: E731
    check_fast(f, arrays, [True] * len(arrays), second=twice)


@needs_torch
def test_decompositions_reconstruct_and_return_types():
    a = np.random.default_rng(0).standard_normal((4, 3))
    A = lg.tensor(a)
    U, S, Vh = lg.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose((U * S @ Vh).numpy(), a, atol=1e-12)
    Q, R = lg.linalg.qr(A)
    np.testing.assert_allclose((Q @ R).numpy(), a, atol=1e-12)
    assert np.allclose(np.tril(R.numpy(), -1), 0)
    s = lg.tensor(a.T @ a)
    L, V = lg.linalg.eigh(s)
    np.testing.assert_allclose((V * L @ V.mT).numpy(), a.T @ a, atol=1e-12)
    C = lg.linalg.cholesky(s)
    np.testing.assert_allclose((C @ C.mT).numpy(), a.T @ a, atol=1e-12)
    sign, logabs = lg.linalg.slogdet(s)
    t_repr = repr(torch.linalg.slogdet(torch.tensor(a.T @ a)))
    assert repr(lg.linalg.slogdet(s)).replace('leafgrad', 'torch') == t_repr
    assert float(sign) == 1.0 and abs(float(logabs) - np.log(np.linalg.det(a.T @ a))) < 1e-12
    assert L.eigenvalues if False else lg.linalg.eigh(s).eigenvalues is not None
    assert issubclass(lg.linalg.LinAlgError, RuntimeError)


@needs_torch
def test_ex_variants_report_info_like_torch():
    good = np.array([[2.0, 1.0], [1.0, 2.0]])
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    for fn in ('inv_ex', 'cholesky_ex'):
        for a in (good, bad):
            lres = getattr(lg.linalg, fn)(lg.tensor(a))
            tres = getattr(torch.linalg, fn)(torch.tensor(a))
            assert int(lres.info) == int(tres.info) and lres.info.dtype.name == 'int32'
            if int(tres.info) == 0:
                np.testing.assert_allclose(lres[0].numpy(), tres[0].numpy(), rtol=1e-12)
    with pytest.raises(lg.linalg.LinAlgError):
        lg.linalg.cholesky_ex(lg.tensor(bad), check_errors=True)
    assert int(lg.linalg.matrix_rank(lg.tensor(np.outer([1.0, 2, 3], [1.0, 1, 2])))) == 1


@needs_torch
@pytest.mark.parametrize('create_graph', [False, True])
def test_det_gradient_of_singular_matrices_like_torch(create_graph):
    """PyTorch gives 0 for an exactly singular matrix in a plain backward, and the cofactor
    matrix (from an SVD) when recording the backward."""
    rng = np.random.default_rng(0)
    for a in (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]), np.array([[1.0, 2.0], [2.0, 4.0]]),
              np.stack([rng.standard_normal((3, 3)), np.zeros((3, 3))])):
        grads = []
        for T in (lg, torch):
            x = T.tensor(a, requires_grad=True)
            (g,) = T.autograd.grad(T.linalg.det(x).sum(), x, create_graph=create_graph)
            grads.append(_np(g))
        np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)
        assert np.isfinite(grads[0]).all()


@needs_torch
def test_addmm_beta_zero_ignores_nan_like_torch():
    c = np.full((2, 2), np.nan)
    a, b = np.eye(2), np.ones((2, 2))
    out = lg.addmm(lg.tensor(c), lg.tensor(a), lg.tensor(b), beta=0)
    ref = torch.addmm(torch.tensor(c), torch.tensor(a), torch.tensor(b), beta=0)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def _r(*shape):
    return np.random.default_rng(0).standard_normal(shape)


ERRORS = [
    ('mm_shapes', lambda T: T.mm(T.tensor(_r(2, 3)), T.tensor(_r(2, 3)))),
    ('mm_dtype', lambda T: T.mm(T.tensor(_r(2, 3)).float(), T.tensor(_r(3, 2)))),
    ('mv_size', lambda T: T.mv(T.tensor(_r(2, 3)), T.tensor(_r(2)))),
    ('bmm_dim', lambda T: T.bmm(T.tensor(_r(2, 3)), T.tensor(_r(2, 3)))),
    ('matmul_batch', lambda T: T.matmul(T.tensor(_r(2, 2, 3)), T.tensor(_r(2, 2, 3)))),
    ('dot_size', lambda T: T.dot(T.tensor(_r(2)), T.tensor(_r(3)))),
    ('outer_dim', lambda T: T.outer(T.tensor(_r(2, 3)), T.tensor(_r(3)))),
    ('addmm_shapes', lambda T: T.addmm(T.tensor(_r(2, 2)), T.tensor(_r(2, 3)), T.tensor(_r(2, 3)))),
    ('addmm_input', lambda T: T.addmm(T.tensor(_r(3, 2)), T.tensor(_r(2, 3)), T.tensor(_r(3, 2)))),
    ('baddbmm_shapes', lambda T: T.baddbmm(T.tensor(_r(2, 2, 2)), T.tensor(_r(2, 2, 3)), T.tensor(_r(3, 3, 2)))),
    ('addmv_size', lambda T: T.addmv(T.tensor(_r(2)), T.tensor(_r(2, 3)), T.tensor(_r(4)))),
    ('tensordot_size', lambda T: T.tensordot(T.tensor(_r(2, 3)), T.tensor(_r(2, 3)), 1)),
    ('tensordot_lists', lambda T: T.tensordot(T.tensor(_r(2, 3)), T.tensor(_r(2, 3)), ([0], [1]))),
    ('einsum_size', lambda T: T.einsum('ij,jk->ik', T.tensor(_r(2, 3)), T.tensor(_r(2, 3)))),
    ('einsum_operands', lambda T: T.einsum('ij,jk', T.tensor(_r(2, 3)))),
    ('einsum_output', lambda T: T.einsum('ij->k', T.tensor(_r(2, 3)))),
    ('einsum_dims', lambda T: T.einsum('ijk->ij', T.tensor(_r(2, 3)))),
    ('einsum_no_operand', lambda T: T.einsum('ij')),
    ('einsum_nothing', lambda T: T.einsum()),
    ('einsum_sublist_range', lambda T: T.einsum(T.tensor(_r(2, 3)), [0, 52])),
    ('einsum_sublist_negative', lambda T: T.einsum(T.tensor(_r(2, 3)), [-1, 0])),
    ('einsum_equation_type', lambda T: T.einsum([T.tensor(_r(2, 3))], [0, 1])),
    ('inv_singular', lambda T: T.linalg.inv(T.tensor([[1.0, 2.0], [2.0, 4.0]]))),
    ('inv_singular_batch', lambda T: T.linalg.inv(T.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]))),
    ('inv_square', lambda T: T.linalg.inv(T.tensor(_r(2, 3)))),
    ('inv_1d', lambda T: T.linalg.inv(T.tensor(_r(3)))),
    ('inv_int', lambda T: T.linalg.inv(T.zeros(3, 3, dtype=T.int64))),
    ('det_square', lambda T: T.linalg.det(T.tensor(_r(2, 3)))),
    ('solve_shapes', lambda T: T.linalg.solve(T.eye(3), T.zeros(4, 2))),
    ('cholesky_not_pd', lambda T: T.linalg.cholesky(T.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ('cholesky_not_pd_first', lambda T: T.linalg.cholesky(T.tensor([[-1.0, 2.0], [2.0, 1.0]]))),
    ('eigh_square', lambda T: T.linalg.eigh(T.tensor(_r(2, 3)))),
    ('qr_1d', lambda T: T.linalg.qr(T.tensor(_r(3)))),
    ('qr_mode', lambda T: T.linalg.qr(T.eye(3), mode='foo')),
    ('svd_1d', lambda T: T.linalg.svd(T.tensor(_r(3)))),
    ('bmm_dtype', lambda T: T.bmm(T.tensor(_r(2, 2, 3)), T.tensor(_r(2, 3, 2)).float())),
    ('mv_dtype', lambda T: T.mv(T.tensor(_r(2, 3)), T.tensor(_r(3)).float())),
    ('matmul_fold_vector', lambda T: T.matmul(T.tensor(_r(2, 5, 3)), T.tensor(_r(2)))),
    ('matmul_batch_broadcast', lambda T: T.matmul(T.tensor(_r(4, 3, 5, 3)), T.tensor(_r(2, 1, 3, 2)))),
    ('dot_dtype', lambda T: T.dot(T.tensor(_r(2)), T.tensor(_r(2)).float())),
    ('einsum_dtype', lambda T: T.einsum('ij,jk', T.tensor(_r(2, 3)).float(), T.tensor(_r(3, 2)))),
    ('addmm_self_dtype', lambda T: T.addmm(T.tensor(_r(2, 2)).float(), T.tensor(_r(2, 3)), T.tensor(_r(3, 2)))),
    ('addmm_mat1_dtype', lambda T: T.addmm(T.tensor(_r(2, 2)), T.tensor(_r(2, 3)).float(), T.tensor(_r(3, 2)))),
    ('solve_dtype', lambda T: T.linalg.solve(T.tensor(_r(3, 3)), T.tensor(_r(3, 2)).float())),
    ('solve_singular', lambda T: T.linalg.solve(T.zeros(3, 3), T.ones(3, 2))),
    ('cholesky_batch', lambda T: T.linalg.cholesky(T.tensor(np.stack([np.eye(2), -np.eye(2)])))),
    ('cross_length', lambda T: T.linalg.cross(T.tensor(_r(3, 3)), T.tensor(_r(3, 2)))),
    ('cross_ndim', lambda T: T.linalg.cross(T.tensor(_r(2, 3)), T.tensor(_r(3)))),
    ('torch_cross_no_3', lambda T: T.cross(T.tensor(_r(2, 2)), T.tensor(_r(2, 2)))),
    ('torch_cross_ndim', lambda T: T.cross(T.tensor(_r(2, 3)), T.tensor(_r(3)))),
    ('matrix_power_square', lambda T: T.linalg.matrix_power(T.tensor(_r(2, 3)), 2)),
    ('multi_dot_one', lambda T: T.linalg.multi_dot([T.tensor(_r(2, 2))])),
    ('pinv_1d', lambda T: T.linalg.pinv(T.tensor(_r(3)))),
    ('cdist_columns', lambda T: T.cdist(T.tensor(_r(3, 2)), T.tensor(_r(3, 4)))),
    ('cdist_1d', lambda T: T.cdist(T.tensor(_r(3)), T.tensor(_r(3, 4)))),
    ('qr_complete_backward', lambda T: T.linalg.qr(T.tensor(_r(4, 3), requires_grad=True),
                                                   mode='complete')[0].sum().backward()),
]


@needs_torch
@pytest.mark.parametrize('fn', [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn):
    with pytest.raises(Exception) as t_info:
        fn(torch)
    expected = type(t_info.value)
    if expected.__name__ == '_LinAlgError':
        expected = lg.linalg.LinAlgError
    with pytest.raises(expected) as l_info:
        fn(lg)
    assert str(l_info.value).replace('leafgrad', 'torch') == str(t_info.value)


@needs_torch
@pytest.mark.parametrize('call', ['linalg.svd', 'linalg.qr', 'linalg.eigh', 'linalg.slogdet', 'linalg.inv_ex',
                                  'linalg.cholesky_ex', 'svd', 'qr'])
def test_decomposition_results_are_return_types_like_torch(call):
    """Named results print, name their type and fields, and unpack as torch.return_types do."""
    a = np.array([[2.0, 1.0], [1.0, 3.0]])

    def run(mod):
        fn = mod
        for part in call.split('.'):
            fn = getattr(fn, part)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # torch.svd and torch.qr are deprecated
            return fn(mod.tensor(a))
    ours, theirs = run(lg), run(torch)
    assert repr(ours).replace('leafgrad', 'torch') == repr(theirs)
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours) is getattr(lg.return_types, type(theirs).__name__)
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for field in ('U', 'S', 'V', 'Vh', 'Q', 'R', 'eigenvalues', 'eigenvectors', 'sign', 'logabsdet', 'inverse',
                  'info', 'L'):
        assert hasattr(ours, field) == hasattr(theirs, field), field


def test_torch_cross_without_dim_warns_once_as_torch():
    from fresh import fresh_python_output
    code = ("import warnings; warnings.simplefilter('always'); import {m} as T\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    print(T.cross(T.tensor([0., 1., 0.]), T.tensor([1., 0., 0.])).tolist())\n"
            "    T.cross(T.ones(2, 3), T.ones(2, 3))\n"
            "print([(x.category.__name__, str(x.message).split(' (Triggered')[0]) for x in w])")
    assert fresh_python_output(code.format(m='leafgrad')) == fresh_python_output(code.format(m='torch'))


@needs_torch
@pytest.mark.parametrize('name', ['svd', 'svdvals'])
def test_svd_driver_is_refused_on_cpu_as_torch(name):
    """driver= selects a cuSOLVER routine: on CPU, torch refuses it (None is accepted)."""
    messages = []
    for lib in (lg, torch):
        getattr(lib.linalg, name)(lib.ones(2, 3), driver=None)
        with pytest.raises(RuntimeError) as info:
            getattr(lib.linalg, name)(lib.ones(2, 3), driver='gesvd')
        messages.append(str(info.value).replace('leafgrad', 'torch'))
    assert messages[0] == messages[1]


# ---- the functions' names, as PyTorch's: linalg_<name> in Python's errors, torch's own beside them
NAMED = ['linalg.inv', 'linalg.det', 'linalg.slogdet', 'linalg.cholesky', 'linalg.qr', 'linalg.eigh', 'linalg.svd',
         'linalg.svdvals', 'linalg.eigvalsh', 'linalg.inv_ex', 'linalg.cholesky_ex',
         'linalg.eig', 'linalg.eigvals', 'inverse', 'det', 'slogdet', 'logdet', 'pinverse', 'eig', 'linalg.lu',
         'linalg.lu_factor', 'linalg.lu_factor_ex', 'linalg.matrix_exp', 'linalg.diagonal', 'matrix_exp', 'geqrf',
         'cholesky_inverse']


@pytest.mark.parametrize('name', NAMED)
def test_unknown_keyword_names_the_function_as_torch(name):
    messages = []
    for T in (lg, torch):
        fn = T
        for part in name.split('.'):
            fn = getattr(fn, part)
        with pytest.raises(TypeError) as info:
            fn(T.eye(2), foo=1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_torch_slogdet_returns_its_own_named_tuple():
    for T in (lg, torch):
        r = T.slogdet(T.eye(2) * 2)
        assert type(r).__name__ == 'slogdet' and type(T.eye(2).slogdet()).__name__ == 'slogdet'
        assert type(T.linalg.slogdet(T.eye(2))).__name__ == 'linalg_slogdet'


SAVED = {
    'linalg.inv': lambda M, a, s, w: M.linalg.inv(a),
    'linalg.slogdet': lambda M, a, s, w: M.linalg.slogdet(a)[1],
    'linalg.cholesky': lambda M, a, s, w: M.linalg.cholesky(s, upper=True),
    'linalg.qr': lambda M, a, s, w: M.linalg.qr(w)[0],
    'linalg.eigh': lambda M, a, s, w: M.linalg.eigh(s)[0],
    'linalg.svd': lambda M, a, s, w: M.linalg.svd(w, full_matrices=False)[1],
    'linalg.solve_triangular': lambda M, a, s, w: M.linalg.solve_triangular(a, s, upper=False, left=False),
    'linalg.pinv': lambda M, a, s, w: M.linalg.pinv(w),
    'linalg.cross': lambda M, a, s, w: M.linalg.cross(a, s, dim=0),
    'linalg.matrix_exp': lambda M, a, s, w: M.linalg.matrix_exp(a),
    'linalg.lstsq': lambda M, a, s, w: M.linalg.lstsq(w, w[:, :2])[0],
    'linalg.lu': lambda M, a, s, w: M.linalg.lu(a)[1],
    'linalg.householder_product': lambda M, a, s, w: M.linalg.householder_product(w, w[0, :2]),
    'cholesky_inverse': lambda M, a, s, w: M.cholesky_inverse(s, upper=True),
    'cholesky': lambda M, a, s, w: M.cholesky(s),
    'cdist': lambda M, a, s, w: M.cdist(a, s, p=1.5),
    'pdist': lambda M, a, s, w: M.pdist(w, p=3),
}


@pytest.mark.parametrize('name', sorted(SAVED))
def test_saved_tensors_named_as_torch(name):
    """grad_fn._saved_<name> as PyTorch's (the tensors, in absolute value: LAPACK builds may choose
    other signs of singular vectors, and the numbers kept, as PyTorch keeps them)."""
    rng = np.random.default_rng(0)
    a, w = rng.standard_normal((3, 3)), rng.standard_normal((4, 3))
    s = a @ a.T + 3 * np.eye(3)
    found = []
    for M in (lg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # (torch.cholesky's deprecation)
            node = SAVED[name](M, *(M.tensor(x, requires_grad=True) for x in (a, s, w))).grad_fn
        found.append({n: getattr(node, n) for n in dir(node) if n.startswith('_saved_') and n != '_saved_versions'
                      and n != '_saved_slot'})
    ours, theirs = found
    assert ours and set(ours) <= set(theirs), (sorted(ours), sorted(theirs))
    for n, value in ours.items():
        if isinstance(value, lg.Tensor):
            np.testing.assert_allclose(np.abs(value.detach().numpy()), np.abs(theirs[n].detach().numpy()), atol=1e-10)
        else:
            assert value == theirs[n] and type(value) is type(theirs[n]), n


@needs_torch
def test_linalg_names_no_helpers():
    """leafgrad.linalg holds torch.linalg's names only (writes_out, same_dtype, wrap_dim, reduction,
    permute, check_out_type, check_operands were public attributes of it, which torch.linalg has not)."""
    ours = {n for n in dir(lg.linalg) if not n.startswith('_')}
    assert ours <= set(dir(torch.linalg)), sorted(ours - set(dir(torch.linalg)))


# ---- svd_lowrank, pca_lowrank: PyTorch's randomized algorithm, the same random draw --------------

def _lowrank_runs(call):
    """``call(T)`` after manual_seed(0) in leafgrad and torch: its (U, S, V) and the gradient of a
    quantity that no column's sign changes (the singular values, and U V^H), by A."""
    runs = []
    for T in (lg, torch):
        T.manual_seed(0)
        A = T.randn(9, 5, dtype=T.float64) @ T.randn(5, 7, dtype=T.float64) + T.randn(9, 7, dtype=T.float64) * 0.1
        A.requires_grad_(True)
        U, S, V = call(T, A)
        (S.sum() + (U @ V.mH).pow(2).sum() * 0.5).backward()
        runs.append([x.detach().numpy() for x in (U, S, V, A.grad)])
    return runs


def _same_up_to_column_signs(a, b):
    signs = np.sign(np.sum(a * b, axis=-2, keepdims=True))
    np.testing.assert_allclose(a * signs, b, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize('name,call', [
    ('svd_lowrank', lambda T, A: T.svd_lowrank(A)),
    ('svd_lowrank_q', lambda T, A: T.svd_lowrank(A, q=3, niter=1)),
    ('svd_lowrank_wide', lambda T, A: T.svd_lowrank(A.mT, q=4)),
    ('svd_lowrank_M', lambda T, A: T.svd_lowrank(A, q=4, M=T.ones(1, 7, dtype=T.float64))),
    ('pca_lowrank', lambda T, A: T.pca_lowrank(A)),
    ('pca_lowrank_q', lambda T, A: T.pca_lowrank(A, q=2, niter=3)),
    ('pca_lowrank_uncentred', lambda T, A: T.pca_lowrank(A, 4, center=False)),
    ('pca_lowrank_batch', lambda T, A: T.pca_lowrank(A.reshape(3, 3, 7), q=2)),
])
def test_lowrank_as_torch(name, call):
    """The same values after the same seed; U's and V's columns up to sign (leafgrad's LAPACK and
    PyTorch's pick different signs for some singular vectors), the same gradients."""
    (U, S, V, G), (tU, tS, tV, tG) = _lowrank_runs(call)
    np.testing.assert_allclose(S, tS, rtol=1e-7, atol=1e-9)
    _same_up_to_column_signs(U, tU)
    _same_up_to_column_signs(V, tV)
    np.testing.assert_allclose(G, tG, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize('call', ['T.pca_lowrank(T.ones(4, 3), q=4)', 'T.pca_lowrank(T.ones(4, 3), q=-1)',
                                  'T.pca_lowrank(T.ones(4, 3), niter=-1)'])
def test_lowrank_errors_as_torch(call):
    errors = []
    for T in (lg, torch):
        with pytest.raises(Exception) as info:
            eval(call, {'T': T})
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def _linalg_refusals(T):
    A, R, B = T.tensor([[1., 2.], [2., 4.]]), T.ones(2, 3), T.eye(2)
    said = []
    for f in (lambda: T.linalg.inv(A), lambda: T.linalg.solve(A, B), lambda: T.linalg.cholesky(-B),
              lambda: T.linalg.tensorinv(A, ind=1), lambda: T.inverse(A),
              lambda: T.linalg.solve_triangular(B, T.ones(2), upper=True),
              lambda: T.linalg.solve_triangular(T.ones(2), T.ones(2, 1), upper=True),
              lambda: T.linalg.norm(R, ord='fro', dim=0), lambda: T.linalg.norm(R, ord='nuc', dim=(1,)),
              lambda: T.linalg.norm(T.ones(2, 3, 4), ord='fro', dim=(0, 1, 2)), lambda: T.linalg.norm(T.ones(2, 3, 4), dim=()),
              lambda: T.linalg.norm(T.ones(2, 3, 4), ord='fro'), lambda: T.linalg.norm(R, ord='fro').item(),
              lambda: T.linalg.norm(T.ones(3), ord='fro')):
        try:
            r = f()
            said.append(r if isinstance(r, float) else r.tolist())
        except Exception as e:
            said.append((type(e).__name__, str(e).replace(T.__name__ + '.', 'torch.')))
    return said


def test_linalg_refusals_as_pytorch():
    """(Its error class had been named LinAlgError where PyTorch's is _LinAlgError; a 1-D B of
    solve_triangular had raised Python's IndexError; linalg.norm of a string order over one dim
    or three, and tensorinv's singular matrix, had PyTorch's errors worded otherwise.)"""
    if torch is None:
        pytest.skip('needs the torch oracle')
    assert _linalg_refusals(lg) == _linalg_refusals(torch)
