"""matrix_exp, lstsq, the LU family, solve_ex, householder_product, vander, tensorinv,
tensorsolve, cond, linalg.diagonal, cholesky_solve, cholesky_inverse, triangular_solve against
torch: values, dtypes, node names, first and second derivatives, float64 gradcheck, errors."""
import warnings

import numpy as np
import pytest

import leafgrad as lg
from optable import check_case, needs_torch, torch
from oracle import raises_like, same_message

R = np.random.default_rng(5)


def r(*shape):
    return R.standard_normal(shape)


def wc(n, batch=()):
    """A well-conditioned square matrix."""
    return R.standard_normal(batch + (n, n)) + 3 * np.eye(n)


def lower(n):
    return np.tril(R.standard_normal((n, n))) + 3 * np.eye(n)


def row(name, fn, arrays, grad=True, names=True, fd=True):
    return pytest.param(fn, arrays, grad, names, fd, id=name)


def lu_solve_fn(left=True, adjoint=False):
    def fn(T, A, B):
        LU, piv = T.linalg.lu_factor(A)
        return T.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint)
    return fn


def _qr_geqrf(a):
    """(reflectors, tau) of a matrix as geqrf returns them (through torch)."""
    h, tau = torch.geqrf(torch.tensor(a))
    return h.numpy(), tau.numpy()


_H, _TAU = _qr_geqrf(r(5, 3))
_H4, _TAU4 = _qr_geqrf(r(2, 4, 4))

ROWS = [
    row('matrix_exp', lambda T, a: T.linalg.matrix_exp(a), [r(3, 3)]),
    row('matrix_exp_large_norm', lambda T, a: T.matrix_exp(a), [r(3, 3) * 3]),
    row('matrix_exp_batch_method', lambda T, a: a.matrix_exp(), [r(2, 2, 2)]),
    row('lstsq_tall', lambda T, a, b: T.linalg.lstsq(a, b).solution, [r(5, 3), r(5, 2)]),
    row('lstsq_wide', lambda T, a, b: T.linalg.lstsq(a, b)[0], [r(2, 4), r(2, 3)]),
    row('lstsq_vector_batch', lambda T, a, b: T.linalg.lstsq(a, b).solution, [r(2, 4, 3), r(2, 4)]),
    # (singular_values has no derivative, in torch too: gradcheck of the tuple is left out)
    row('lstsq_gelsd', lambda T, a, b: tuple(T.linalg.lstsq(a, b, driver='gelsd')), [r(5, 3), r(5, 2)], fd=False),
    row('lstsq_gelss_wide', lambda T, a, b: tuple(T.linalg.lstsq(a, b, driver='gelss')), [r(3, 5), r(3, 2)],
        fd=False),
    row('lstsq_residuals', lambda T, a, b: T.linalg.lstsq(a, b, driver='gelsd')[:2], [r(5, 3), r(5, 2)]),
    row('lstsq_residuals_vector', lambda T, a, b: T.linalg.lstsq(a, b, driver='gelss')[:2], [r(5, 3), r(5)]),
    row('lstsq_gels', lambda T, a, b: tuple(T.linalg.lstsq(a, b, driver='gels')), [r(4, 3), r(4, 1)]),
    row('lstsq_gelsy', lambda T, a, b: tuple(T.linalg.lstsq(a, b)), [r(4, 3), r(4, 1)]),
    row('lu_factor', lambda T, a: T.linalg.lu_factor(a).LU, [r(4, 4)]),
    row('lu_factor_pivots', lambda T, a: tuple(T.linalg.lu_factor(a)), [r(2, 4, 4)]),
    row('lu_factor_ex', lambda T, a: tuple(T.linalg.lu_factor_ex(a)), [r(3, 3)]),
    row('lu_factor_tall', lambda T, a: T.linalg.lu_factor(a)[0], [r(5, 3)]),
    row('lu_factor_wide', lambda T, a: T.linalg.lu_factor(a)[0], [r(3, 5)]),
    row('lu', lambda T, a: tuple(T.linalg.lu(a)), [r(4, 4)]),
    row('lu_tall', lambda T, a: tuple(T.linalg.lu(a)), [r(5, 3)]),
    row('lu_wide_batch', lambda T, a: tuple(T.linalg.lu(a)), [r(2, 3, 4)]),
    row('lu_unpack', lambda T, a: tuple(T.lu_unpack(*T.linalg.lu_factor(a))), [r(4, 4)]),
    row('lu_unpack_tall', lambda T, a: tuple(T.lu_unpack(*T.linalg.lu_factor(a))), [r(4, 2)]),
    row('lu_solve', lu_solve_fn(), [wc(3), r(3, 2)]),
    row('lu_solve_adjoint', lu_solve_fn(adjoint=True), [wc(3), r(3, 2)]),
    row('lu_solve_right', lu_solve_fn(left=False), [wc(3), r(2, 3)]),
    row('lu_solve_right_adjoint', lu_solve_fn(left=False, adjoint=True), [wc(3), r(2, 3)]),
    row('lu_solve_batch', lu_solve_fn(), [wc(3, (2,)), r(2, 3, 1)]),
    row('solve_ex', lambda T, a, b: tuple(T.linalg.solve_ex(a, b)), [wc(3), r(3, 2)]),
    row('householder_product', lambda T, h, t: T.linalg.householder_product(h, t), [_H, _TAU]),
    row('householder_product_batch', lambda T, h, t: T.linalg.householder_product(h, t), [_H4, _TAU4]),
    row('householder_product_fewer_tau', lambda T, h, t: T.orgqr(h, t[:2]), [_H, _TAU]),
    row('geqrf', lambda T, a: tuple(T.geqrf(a)), [r(2, 4, 3)], grad=False),
    row('geqrf_method_wide', lambda T, a: tuple(a.geqrf()), [r(3, 5)], grad=False),
    row('householder_of_geqrf', lambda T, a: T.linalg.householder_product(*T.geqrf(a.detach())), [r(4, 3)],
        grad=False),
    row('linalg_vander', lambda T, x: T.linalg.vander(x), [r(4)]),
    row('linalg_vander_batch_N', lambda T, x: T.linalg.vander(x, N=5), [r(2, 3)]),
    row('linalg_vander_int', lambda T, x: T.linalg.vander(x), [np.array([1, 2, 3])], grad=False),
    row('vander', lambda T, x: T.vander(x), [r(4)], grad=False),
    row('vander_increasing_N', lambda T, x: T.vander(x, 3, increasing=True), [r(4)], grad=False),
    row('vander_int32', lambda T, x: T.vander(x.int()), [np.array([1, 2, 3])], grad=False),
    row('tensorinv', lambda T, a: T.linalg.tensorinv(a, 1), [wc(4).reshape(4, 2, 2)], names=False),
    row('tensorinv_ind2', lambda T, a: T.linalg.tensorinv(a), [wc(6).reshape(2, 3, 6)], names=False),
    row('tensorsolve', lambda T, a, b: T.linalg.tensorsolve(a, b), [wc(6).reshape(2, 3, 6), r(2, 3)]),
    row('tensorsolve_dims', lambda T, a, b: T.linalg.tensorsolve(a, b, dims=(0,)),
        [wc(6).reshape(6, 2, 3), r(2, 3)], names=False),
    row('cond', lambda T, a: T.linalg.cond(a), [wc(3)], names=False),
    row('cond_fro', lambda T, a: T.linalg.cond(a, 'fro'), [wc(3, (2,))], grad=False),
    row('cond_1', lambda T, a: T.linalg.cond(a, 1), [wc(3)], grad=False),
    row('cond_minus2', lambda T, a: T.linalg.cond(a, -2), [wc(3)], names=False),
    row('linalg_diagonal', lambda T, a: T.linalg.diagonal(a, offset=1), [r(2, 3, 4)]),
    row('cholesky_solve', lambda T, b, l: T.cholesky_solve(b, l.tril()), [r(3, 2), lower(3)]),
    row('cholesky_solve_upper', lambda T, b, u: T.cholesky_solve(b, u.triu(), upper=True), [r(3, 2), lower(3).T.copy()]),
    row('cholesky_inverse', lambda T, l: T.cholesky_inverse(l.tril()), [lower(3)]),
    row('cholesky_inverse_upper', lambda T, u: u.triu().cholesky_inverse(upper=True), [lower(3).T.copy()]),
    row('triangular_solve', lambda T, b, a: tuple(T.triangular_solve(b, a)), [r(3, 2), lower(3).T.copy()]),
    row('triangular_solve_lower_transpose', lambda T, b, a: T.triangular_solve(b, a, upper=False,
                                                                               transpose=True).solution,
        [r(3, 2), lower(3)]),
    row('triangular_solve_unit', lambda T, b, a: b.triangular_solve(a, unitriangular=True)[0],
        [r(3, 2), lower(3).T.copy()]),
    row('torch_lu', lambda T, a: tuple(T.lu(a)), [r(3, 3)]),
    row('torch_lu_infos', lambda T, a: tuple(a.lu(get_infos=True)), [r(3, 3)]),
    row('torch_lu_solve', lambda T, a, b: T.lu_solve(b, *T.linalg.lu_factor(a)), [wc(3), r(3, 2)]),
]


@needs_torch
@pytest.mark.parametrize('fn,arrays,grad,names,fd', ROWS)
def test_against_torch(fn, arrays, grad, names, fd):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # torch's deprecation warnings of torch.lu and friends
        check_case(fn, arrays, grad=grad, names=names, fd=fd)


# torch 2.13's own backward of these fails (an in-place op on a saved tensor: cumprod's in vander,
# linalg.inv's output in cond with p = 1, inf, 'fro', 'nuc'); their forward is compared above and
# their derivatives are checked against finite differences, first and second
GRADCHECK_ONLY = [
    pytest.param(lambda a: lg.vander(a), [r(4)], id='vander'),
    pytest.param(lambda a: lg.vander(a, 3, increasing=True), [r(4)], id='vander_increasing_N'),
    pytest.param(lambda a: lg.linalg.cond(a, 'fro'), [wc(3, (2,))], id='cond_fro'),
    pytest.param(lambda a: lg.linalg.cond(a, 1), [wc(3)], id='cond_1'),
    pytest.param(lambda a: lg.linalg.cond(a, float('-inf')), [wc(3)], id='cond_minus_inf'),
]


@pytest.mark.parametrize('fn,arrays', GRADCHECK_ONLY)
def test_derivatives_by_finite_differences(fn, arrays):
    xs = [lg.tensor(a, requires_grad=True) for a in arrays]
    assert lg.autograd.gradcheck(fn, xs)
    assert lg.autograd.gradgradcheck(fn, xs)


@needs_torch
@pytest.mark.parametrize('call', ['lstsq', 'lu_factor', 'lu_factor_ex', 'lu', 'solve_ex'])
def test_results_are_return_types_like_torch(call):
    a = wc(3)
    b = r(3, 1)
    args = {'lstsq': (a, b), 'solve_ex': (a, b)}.get(call, (a,))
    lo = getattr(lg.linalg, call)(*[lg.tensor(x) for x in args])
    to = getattr(torch.linalg, call)(*[torch.tensor(x) for x in args])
    assert type(lo).__name__ == type(to).__name__ and lo._fields == to._fields if hasattr(to, '_fields') else True
    assert repr(lo).replace('leafgrad', 'torch') == repr(to)


@needs_torch
def test_lu_of_a_singular_matrix_like_torch():
    a = np.array([[1., 2, 3], [2, 4, 6], [1, 0, 1]])
    lo = lg.linalg.lu_factor_ex(lg.tensor(a))
    to = torch.linalg.lu_factor_ex(torch.tensor(a))
    for l, t in zip(lo, to):
        np.testing.assert_allclose(l.numpy(), t.numpy())
    msg = raises_like(lambda: lg.linalg.lu_factor(lg.tensor(np.zeros((2, 2)))),
                      lambda: torch.linalg.lu_factor(torch.zeros(2, 2, dtype=torch.float64)))
    assert same_message(*msg), msg


@needs_torch
@pytest.mark.parametrize('call', ['T.linalg.lu_factor(S)', 'T.linalg.lu_factor(T.stack([T.eye(2), S]))',
                                  'T.linalg.lu_factor_ex(S, check_errors=True)',
                                  'T.linalg.lu_factor_ex(T.stack([T.eye(2), S, S]), check_errors=True)'])
def test_lu_factor_of_a_singular_matrix_raises_runtime_error_as_torch(call):
    """PyTorch's zero-pivot error is a plain RuntimeError (leafgrad raised its LinAlgError
    subclass): the same type, not only one that the same except clause catches."""
    raised = []
    for T in (lg, torch):
        with pytest.raises(RuntimeError) as info:
            eval(call, {'T': T, 'S': T.tensor([[1., 2.], [2., 4.]])})
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[0] == raised[1]


ERRORS = [
    ('matrix_exp_rect', lambda T: T.linalg.matrix_exp(T.ones(2, 3))),
    ('matrix_exp_1d', lambda T: T.linalg.matrix_exp(T.ones(3))),
    ('matrix_exp_int', lambda T: T.linalg.matrix_exp(T.ones(2, 2, dtype=T.int64))),
    ('lstsq_rows', lambda T: T.linalg.lstsq(T.ones(5, 3), T.ones(4, 2))),
    ('lstsq_driver', lambda T: T.linalg.lstsq(T.ones(5, 3), T.ones(5, 2), driver='bad')),
    ('lstsq_1d', lambda T: T.linalg.lstsq(T.ones(5), T.ones(5, 2))),
    ('lstsq_dtype', lambda T: T.linalg.lstsq(T.ones(5, 3), T.ones(5, 2, dtype=T.float64))),
    ('lu_factor_1d', lambda T: T.linalg.lu_factor(T.ones(3))),
    ('lu_factor_int', lambda T: T.linalg.lu_factor(T.ones(3, 3, dtype=T.int64))),
    ('lu_solve_shapes', lambda T: T.linalg.lu_solve(*T.linalg.lu_factor(T.eye(3)), T.ones(2, 2))),
    ('geqrf_1d', lambda T: T.geqrf(T.ones(3))),
    ('geqrf_int', lambda T: T.geqrf(T.ones(3, 3, dtype=T.int64))),
    ('geqrf_backward', lambda T: T.geqrf(T.ones(3, 3, requires_grad=True))[0].sum().backward()),
    ('householder_wide', lambda T: T.linalg.householder_product(T.ones(2, 3), T.ones(2))),
    ('householder_tau_long', lambda T: T.linalg.householder_product(T.ones(4, 2), T.ones(3))),
    ('householder_dtype', lambda T: T.linalg.householder_product(T.ones(4, 2), T.ones(2, dtype=T.float64))),
    ('vander_N', lambda T: T.linalg.vander(T.ones(3), N=1)),
    ('vander_2d', lambda T: T.vander(T.ones(2, 2))),
    ('tensorinv_shape', lambda T: T.linalg.tensorinv(T.ones(2, 3), 1)),
    ('tensorinv_ind', lambda T: T.linalg.tensorinv(T.ones(2, 2), 0)),
    ('tensorsolve_shape', lambda T: T.linalg.tensorsolve(T.ones(2, 3, 4), T.ones(2, 3))),
    ('cond_p', lambda T: T.linalg.cond(T.eye(2), 3)),
    ('cond_1d', lambda T: T.linalg.cond(T.ones(3))),
    ('cholesky_solve_1d', lambda T: T.cholesky_solve(T.ones(3), T.eye(3))),
    ('cholesky_solve_dtype', lambda T: T.cholesky_solve(T.ones(3, 1), T.eye(3, dtype=T.float64))),
    ('cholesky_inverse_rect', lambda T: T.cholesky_inverse(T.ones(2, 3))),
    ('triangular_solve_1d', lambda T: T.triangular_solve(T.ones(3), T.eye(3))),
]


@needs_torch
@pytest.mark.parametrize('fn', [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        lg_msg, t_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
    assert same_message(lg_msg, t_msg), (lg_msg, t_msg)


def test_older_functions_warn_once_as_torch():
    from fresh import fresh_python_output
    code = ("import warnings; import {m} as T\n"
            "A = T.eye(3)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    for _ in range(2):\n"
            "        T.triangular_solve(A, A); LU, p = T.lu(A); T.lu_solve(A, LU, p)\n"
            "print([(x.category.__name__, str(x.message).split(' (Triggered')[0]) for x in w])")
    assert fresh_python_output(code.format(m='leafgrad')) == fresh_python_output(code.format(m='torch'))
