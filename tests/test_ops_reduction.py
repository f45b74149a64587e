"""Reductions against PyTorch, driven by one table (CASES); the generic checks are in
tests/optable.py (forward values/dtype/shape, node names, first and second derivatives vs torch,
float64 finite differences). Rows with ties (kind 't') compare the tie-splitting rule with torch
but skip finite differences, which are meaningless where the function has a kink."""
import numpy as np
import pytest

import leafgrad as lg

from optable import (Case, check_derivatives, check_finite_differences, check_forward,  # noqa: E402
                     method_refusal_messages, needs_torch, params, torch)

M = [((3, 4),), ((2, 3, 4),)]                 # matrices and a batch
ALL = M + [((),)]                             # ... and 0-d
EMPTY = ALL + [((0, 3),)]                     # ... and empty, where the reduction has an identity
VEC = [((5,),), ((3, 4),)]
INF = float('inf')


def LN(T):
    """torch.linalg or leafgrad.linalg."""
    return T.linalg


def C(name, fn, kinds='r', shapes=ALL, **kw):
    return Case(name, fn, kinds, shapes, **kw)


CASES = [
    # sum, mean
    C('sum', lambda T, x: T.sum(x), shapes=EMPTY, ints=True),
    C('sum_dim', lambda T, x: x.sum(-1), shapes=EMPTY, ints=True),
    C('sum_dims_keepdim', lambda T, x: x.sum((0, -1), keepdim=True), shapes=M),
    C('sum_dtype', lambda T, x: x.sum(dtype=T.float64), shapes=M, ints=True),
    C('sum_dim_dtype', lambda T, x: T.sum(x, 0, dtype=T.float64), shapes=M),
    C('sum_empty_dims_means_all', lambda T, x: x.sum(()), shapes=M),
    C('mean_empty_dims_means_all', lambda T, x: T.mean(x, []), shapes=M),
    C('mean', lambda T, x: T.mean(x), shapes=ALL),
    C('mean_dim', lambda T, x: x.mean(-2, keepdim=True), shapes=M),
    C('mean_dims', lambda T, x: x.mean((0, 1)), shapes=M),
    # prod (with zeros)
    C('prod', lambda T, x: T.prod(x), shapes=EMPTY, ints=True),
    C('prod_one_zero', lambda T, x: x.prod(), 'o', shapes=M),
    C('prod_two_zeros', lambda T, x: x.prod(), 'w', shapes=M),
    C('prod_dim', lambda T, x: x.prod(1), shapes=M + [((0, 3),)], ints=True),
    C('prod_dim_keepdim', lambda T, x: x.prod(-1, keepdim=True), shapes=M),
    C('prod_dim_zeros', lambda T, x: x.prod(0), 'w', shapes=M),
    C('prod_dim_one_zero', lambda T, x: x.prod(-1), 'o', shapes=M),
    C('prod_0d_dim', lambda T, x: x.prod(0), shapes=[((),)]),
    C('prod_dtype', lambda T, x: x.prod(dtype=T.float64), shapes=M),
    # max / min / amax / amin / argmax / median
    C('max', lambda T, x: T.max(x), shapes=ALL),
    C('max_ties', lambda T, x: x.max(), 't', shapes=M, fd=False),
    C('min', lambda T, x: x.min(), shapes=ALL),
    C('min_ties', lambda T, x: T.min(x), 't', shapes=M, fd=False),
    C('max_dim', lambda T, x: T.max(x, 1), shapes=M),
    C('max_dim_keepdim', lambda T, x: x.max(dim=-1, keepdim=True), shapes=M),
    C('max_dim_ties', lambda T, x: x.max(0), 't', shapes=M, fd=False),
    C('max_dim_0d', lambda T, x: x.max(0), shapes=[((),)]),
    C('max_dim_empty_other', lambda T, x: x.max(1), shapes=[((0, 3),)]),
    C('min_dim', lambda T, x: T.min(x, -1), shapes=M),
    C('min_dim_keepdim_ties', lambda T, x: x.min(0, True), 't', shapes=M, fd=False),
    C('max_values_indices', lambda T, x: T.max(x, 1).values * 2 + T.max(x, 1).indices, shapes=M),
    C('amax', lambda T, x: T.amax(x, 1), shapes=M),
    C('amax_all', lambda T, x: x.amax(), shapes=ALL),
    C('amax_dims_keepdim', lambda T, x: x.amax((0, -1), keepdim=True), shapes=M),
    C('amax_ties', lambda T, x: x.amax(-1), 't', shapes=M, fd=False),
    C('amin_ties', lambda T, x: T.amin(x, (0, 1)), 't', shapes=M, fd=False),
    C('amin', lambda T, x: x.amin(0), shapes=M),
    C('aminmax', lambda T, x: T.aminmax(x), shapes=ALL),
    C('aminmax_dim', lambda T, x: T.aminmax(x, dim=1, keepdim=True), shapes=M),
    C('aminmax_ties', lambda T, x: T.aminmax(x, dim=0), 't', shapes=M, fd=False),
    C('argmax', lambda T, x: T.argmax(x), 't', shapes=ALL, grad=False, ints=True),
    C('argmax_dim', lambda T, x: x.argmax(-1), 't', shapes=M, grad=False, ints=True),
    C('argmax_keepdim', lambda T, x: x.argmax(1, keepdim=True), shapes=M, grad=False),
    C('argmin_dim', lambda T, x: T.argmin(x, 0), 't', shapes=M, grad=False),
    C('argmin', lambda T, x: x.argmin(), shapes=ALL, grad=False),
    C('median', lambda T, x: T.median(x), shapes=ALL + [((4,),)]),
    C('median_ties', lambda T, x: x.median(), 't', shapes=M, fd=False),
    C('median_dim', lambda T, x: T.median(x, 1), shapes=M),
    C('median_dim_keepdim', lambda T, x: x.median(-1, keepdim=True), shapes=M),
    C('kthvalue', lambda T, x: T.kthvalue(x, 2, 1), shapes=M),
    C('kthvalue_keepdim', lambda T, x: x.kthvalue(3, dim=0, keepdim=True), shapes=[((4, 3),), ((3, 4, 2),)]),
    C('kthvalue_0d', lambda T, x: x.kthvalue(1), shapes=[((),)]),
    C('mode', lambda T, x: T.mode(x), 't', shapes=M, fd=False),
    C('mode_dim_keepdim', lambda T, x: x.mode(0, keepdim=True), 't', shapes=M, fd=False),
    C('mode_distinct', lambda T, x: T.mode(x, 1), shapes=M),
    C('sort', lambda T, x: T.sort(x), shapes=ALL),
    C('sort_dim_descending', lambda T, x: x.sort(0, descending=True), shapes=M),
    C('sort_stable_ties', lambda T, x: T.sort(x, dim=1, stable=True), 't', shapes=M, fd=False),
    C('sort_stable_descending_ties', lambda T, x: x.sort(dim=-1, descending=True, stable=True), 't', shapes=M,
      fd=False),
    C('sort_nan', lambda T, x: T.sort(T.log(x), dim=1, descending=True, stable=True), shapes=M, grad=False),
    C('sort_nan_ascending', lambda T, x: T.log(x).sort(0), shapes=M, grad=False),
    C('sort_int', lambda T, x: x.sort(stable=True), 't', shapes=M, grad=False, ints=True),
    C('argsort', lambda T, x: T.argsort(x, 1, descending=True), shapes=M, grad=False, ints=False),
    C('argsort_stable_ties', lambda T, x: x.argsort(stable=True), 't', shapes=M + [((),)], grad=False),
    C('msort', lambda T, x: T.msort(x), shapes=M),
    C('topk', lambda T, x: T.topk(x, 2), shapes=M),
    C('topk_smallest_dim', lambda T, x: x.topk(2, dim=0, largest=False), shapes=M),
    C('topk_0d', lambda T, x: x.topk(1), shapes=[((),)]),
    # var / std
    C('var', lambda T, x: T.var(x), shapes=M),
    C('var_dim', lambda T, x: x.var(1), shapes=M),
    C('var_unbiased_false', lambda T, x: T.var(x, 0, unbiased=False, keepdim=True), shapes=M),
    C('var_positional_unbiased', lambda T, x: x.var(False), shapes=M),
    C('var_correction', lambda T, x: T.var(x, (0, -1), correction=2), shapes=M),
    # torch's backward of var(()) counts no reduced elements (inf gradient): only the forward is matched
    C('var_empty_dims', lambda T, x: x.var(()), shapes=M, grad=False),
    C('std', lambda T, x: x.std(), shapes=M),
    C('std_dim_keepdim', lambda T, x: T.std(x, -1, keepdim=True), shapes=M),
    C('std_correction0', lambda T, x: x.std(dim=0, correction=0), shapes=M),
    C('var_mean', lambda T, x: T.var_mean(x), shapes=M),
    C('var_mean_dim', lambda T, x: T.var_mean(x, 1, keepdim=True), shapes=M),
    C('std_mean', lambda T, x: T.std_mean(x, -1), shapes=M),
    C('std_mean_correction', lambda T, x: T.std_mean(x, (0, 1), correction=0), shapes=M),
    # norms
    C('norm', lambda T, x: x.norm(), shapes=EMPTY),
    C('norm_p1', lambda T, x: T.norm(x, p=1), shapes=ALL),
    C('norm_pinf', lambda T, x: x.norm(p=INF), shapes=ALL),
    C('norm_pinf_ties', lambda T, x: x.norm(p=INF), 't', shapes=M, fd=False),
    C('norm_p3', lambda T, x: x.norm(p=3), shapes=M),
    C('norm_fro', lambda T, x: x.norm(p='fro'), shapes=M),
    C('norm_dim', lambda T, x: T.norm(x, dim=1), shapes=M),
    C('norm_dim_keepdim_p1', lambda T, x: x.norm(1, -1, True), shapes=M),
    C('vector_norm', lambda T, x: LN(T).vector_norm(x), shapes=EMPTY),
    C('vector_norm_ord', lambda T, x: LN(T).vector_norm(x, 0.5, dim=-1), 'z', shapes=M),
    C('vector_norm_neg_inf', lambda T, x: LN(T).vector_norm(x, -INF, dim=(0, 1)), shapes=M),
    # torch's second derivatives at a zero norm (and of the 0-"norm") are NaN from 0/0: not matched
    C('vector_norm_0', lambda T, x: LN(T).vector_norm(x, 0), shapes=M, gradgrad=False),
    C('vector_norm_dtype', lambda T, x: LN(T).vector_norm(x, dtype=T.float64), shapes=M),
    C('matrix_norm_fro', lambda T, x: LN(T).matrix_norm(x), shapes=M),
    C('matrix_norm_1', lambda T, x: LN(T).matrix_norm(x, 1), shapes=M),
    C('matrix_norm_neg1_keepdim', lambda T, x: LN(T).matrix_norm(x, -1, keepdim=True), shapes=M),
    C('matrix_norm_inf', lambda T, x: LN(T).matrix_norm(x, INF, dim=(0, -1)), shapes=M),
    C('matrix_norm_neg_inf', lambda T, x: LN(T).matrix_norm(x, -INF), shapes=M),
    C('linalg_norm', lambda T, x: LN(T).norm(x), shapes=EMPTY),
    C('linalg_norm_ord_matrix', lambda T, x: LN(T).norm(x, 1), shapes=[((3, 4),)]),
    C('linalg_norm_vector_dim', lambda T, x: LN(T).norm(x, 3, dim=-1), shapes=M),
    C('zero_norm', lambda T, x: (x * 0).norm(), shapes=M, gradgrad=False),
    # logsumexp
    C('logsumexp', lambda T, x: T.logsumexp(x, 1), shapes=M),
    C('logsumexp_keepdim', lambda T, x: x.logsumexp(-1, keepdim=True), shapes=M),
    C('logsumexp_dims', lambda T, x: x.logsumexp((0, 1)), shapes=M),
    C('logsumexp_large', lambda T, x: T.logsumexp(x * 1000, 0), shapes=M),
    C('logsumexp_empty', lambda T, x: x.logsumexp(0), shapes=[((0, 3),)]),
    C('logsumexp_int', lambda T, x: T.logsumexp(x, 0), shapes=M, ints=True, grad=False),
    # cumulative
    C('cumsum', lambda T, x: T.cumsum(x, 1), shapes=M, ints=True),
    C('cumsum_neg_dim', lambda T, x: x.cumsum(-1), shapes=ALL + [((0, 3),)]),
    C('cumsum_dtype', lambda T, x: x.cumsum(0, dtype=T.float64), shapes=M),
    C('cumprod', lambda T, x: T.cumprod(x, 1), shapes=M, ints=True),
    C('cumprod_one_zero', lambda T, x: x.cumprod(-1), 'o', shapes=M),
    C('cumprod_two_zeros', lambda T, x: x.cumprod(0), 'w', shapes=M),
    C('cumprod_0d', lambda T, x: x.cumprod(0), shapes=[((),)]),
    C('cummax', lambda T, x: T.cummax(x, 1), shapes=M),
    C('cummax_ties', lambda T, x: x.cummax(-1), 't', shapes=M, fd=False),
    C('cummin_ties', lambda T, x: T.cummin(x, 0), 't', shapes=M + [((),)], fd=False),
    C('cummin_empty', lambda T, x: T.cummin(x, 0), shapes=[((0, 3),)], grad=False),
    C('cummax_nan', lambda T, x: T.cummax(T.log(x), 1), shapes=M, grad=False),
    C('logcumsumexp', lambda T, x: T.logcumsumexp(x, 1), shapes=M),
    C('logcumsumexp_wide', lambda T, x: (x * 300).logcumsumexp(-1), shapes=M),
    C('logcumsumexp_0d_empty', lambda T, x: x.logcumsumexp(0), shapes=[((),), ((0, 3),)], grad=False),
    # nansum, nanmean
    # (no finite differences: the gradient at a NaN is NaN, as torch's, where differences see 0)
    C('nansum', lambda T, x: T.nansum(T.sqrt(x)), shapes=EMPTY, fd=False),
    C('nansum_dim', lambda T, x: T.sqrt(x).nansum(1, keepdim=True), shapes=M, fd=False),
    C('nansum_no_nan', lambda T, x: x.nansum((0, 1)), shapes=M),
    C('nansum_int', lambda T, x: T.nansum(x), shapes=M, grad=False, ints=True),
    C('nanmean', lambda T, x: T.nanmean(T.sqrt(x)), shapes=M, fd=False),
    C('nanmean_dim', lambda T, x: T.sqrt(x).nanmean(-1), shapes=M, fd=False),
    C('nanmean_no_nan', lambda T, x: x.nanmean(0), shapes=M),
    # logical reductions (no gradient)
    C('all', lambda T, x: T.all(x > 0), shapes=EMPTY, grad=False),
    C('all_dim', lambda T, x: (x > -1).all(1), shapes=M, grad=False),
    C('any_dim_keepdim', lambda T, x: T.any(x > 1, -1, keepdim=True), shapes=M, grad=False),
    C('all_float', lambda T, x: x.all(), 't', shapes=ALL, grad=False),
    C('any_int', lambda T, x: x.any(0), shapes=M, grad=False, ints=True),
    C('all_empty_dims_reduces_nothing', lambda T, x: x.all(()), shapes=M, grad=False),
    C('count_nonzero', lambda T, x: T.count_nonzero(x), 't', shapes=EMPTY, grad=False),
    C('count_nonzero_dims', lambda T, x: x.count_nonzero((0, -1)), 't', shapes=M, grad=False),
]


@needs_torch
@pytest.mark.parametrize('case,shapes', params(CASES))
def test_against_torch(case, shapes):
    check_forward(case, shapes)
    if case.grad:
        check_derivatives(case, shapes)


@pytest.mark.parametrize('case,shapes', params(CASES, 'fd'))
def test_finite_differences(case, shapes):
    check_finite_differences(case, shapes)


# ---- errors: the same exception type and message as torch ---------------------------------------

def _x(T):
    return T.tensor([[0.5, -1.5, 2.0], [1.0, -0.25, 3.0]])


ERRORS = [
    ('max_bad_dim', lambda T: _x(T).max(2)),
    ('amax_bad_dim', lambda T: _x(T).amax(-3)),
    ('amax_repeated_dim', lambda T: _x(T).amax((0, 0))),
    ('argmax_bad_dim', lambda T: _x(T).argmax(5)),
    ('cumsum_bad_dim', lambda T: _x(T).cumsum(2)),
    ('logsumexp_bad_dim', lambda T: _x(T).logsumexp(3)),
    ('sum_bad_dim_0d', lambda T: T.tensor(1.0).sum(1)),
    ('var_int', lambda T: T.tensor([1, 2]).var()),
    ('std_int', lambda T: T.tensor([1, 2]).std()),
    ('norm_int', lambda T: T.tensor([1, 2]).norm()),
    ('vector_norm_int', lambda T: T.linalg.vector_norm(T.tensor([1, 2]))),
    ('matrix_norm_1d', lambda T: T.linalg.matrix_norm(T.ones(3))),
    ('matrix_norm_order', lambda T: T.linalg.matrix_norm(_x(T), 3)),
    ('mean_int', lambda T: T.tensor([1, 2]).mean()),
    ('max_empty', lambda T: T.tensor([]).max()),
    ('max_empty_dim', lambda T: T.zeros(0, 3).max(0)),
    ('amax_empty_dim', lambda T: T.zeros(0, 3).amax(0)),
    ('median_empty_dim', lambda T: T.zeros(0, 3).median(0)),
    ('argmax_empty', lambda T: T.zeros(0).argmax()),
    ('inf_norm_empty', lambda T: T.linalg.vector_norm(T.zeros(0), float('inf'))),
    ('aminmax_empty', lambda T: T.aminmax(T.zeros(0))),
    ('nanmean_int', lambda T: T.tensor([1, 2]).nanmean()),
    ('cummax_bad_dim', lambda T: _x(T).cummax(2)),
    ('kthvalue_k_too_large', lambda T: _x(T).kthvalue(4, 1)),
    ('logcumsumexp_int', lambda T: T.tensor([1, 2]).logcumsumexp(0)),
    ('argmax_bool', lambda T: T.tensor([True, False]).argmax()),
    ('topk_k_too_large', lambda T: _x(T).topk(4)),
    ('sort_bad_dim', lambda T: _x(T).sort(2)),
]


@needs_torch
@pytest.mark.parametrize('name,fn', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(type(t_info.value)) as l_info:
        fn(lg)
    assert str(l_info.value).replace('leafgrad', 'torch') == str(t_info.value)


@needs_torch
def test_logsumexp_requires_dim_and_prod_rejects_tuples():
    with pytest.raises(TypeError):
        lg.logsumexp(_x(lg))
    with pytest.raises(TypeError):
        _x(lg).prod((0, 1))


# ---- return types, ties, zeros -----------------------------------------------------------------

@needs_torch
def test_max_along_dim_returns_named_values_and_indices():
    x = [[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]
    r_lg, r_t = lg.tensor(x, requires_grad=True).max(1), torch.tensor(x, requires_grad=True).max(1)
    assert type(r_lg).__name__ == type(r_t).__name__ == 'max' and isinstance(r_lg, tuple)
    values, indices = r_lg
    assert values is r_lg.values and indices is r_lg.indices and len(r_lg) == 2
    assert repr(r_lg).replace('leafgrad', 'torch') == repr(r_t)
    assert r_lg.indices.tolist() == r_t.indices.tolist() == [1, 0]  # the first of tied maxima
    assert repr(lg.aminmax(lg.tensor([1.0, 2.0]))).replace('leafgrad', 'torch') == \
        repr(torch.aminmax(torch.tensor([1.0, 2.0])))


@needs_torch
def test_full_max_splits_gradient_among_ties_and_dim_max_picks_one():
    for T in (lg, torch):
        x = T.tensor([[1.0, 3.0, 3.0], [3.0, 0.0, 2.0]], dtype=T.float64, requires_grad=True)
        x.max().backward()
        assert x.grad.tolist() == [[0, 1 / 3, 1 / 3], [1 / 3, 0, 0]]
        x.grad = None
        x.max(1).values.sum().backward()
        assert x.grad.tolist() == [[0, 1, 0], [1, 0, 0]]


@needs_torch
def test_prod_gradient_with_zeros_is_exact():
    for data, expected in [([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]), ([0.0, 0.0, 3.0], [0.0, 0.0, 0.0]),
                           ([2.0, 4.0, 3.0], [12.0, 6.0, 8.0])]:
        for T in (lg, torch):
            x = T.tensor(data, requires_grad=True)
            x.prod().backward()
            assert x.grad.tolist() == expected


@needs_torch
def test_logsumexp_is_stable():
    x = [[1000.0, 1000.0], [-1000.0, -1000.0], [float('-inf'), float('-inf')]]
    np.testing.assert_allclose(lg.logsumexp(lg.tensor(x), 1).numpy(), torch.logsumexp(torch.tensor(x), 1).numpy())


@needs_torch
def test_linalg_module():
    assert {'vector_norm', 'matrix_norm', 'norm'} <= set(dir(lg.linalg))


@needs_torch
def test_cumulative_inplace():
    results = []
    for T in (lg, torch):
        leaf = T.tensor([[1.0, 2.0, 0.0], [3.0, -1.0, 2.0]], requires_grad=True)
        y = leaf * 1
        y.cumsum_(1).cumprod_(0)
        (y * T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        results.append((y.detach().numpy(), y.grad_fn.name(), leaf.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]
    np.testing.assert_allclose(results[0][2], results[1][2])


# ---- the minmax family's declarations: saved tensors, docstrings, methods without out= ----------

MINMAX = ['max', 'min', 'amax', 'amin', 'aminmax', 'argmax', 'argmin', 'median', 'kthvalue', 'mode', 'sort',
          'argsort', 'msort', 'topk', 'cummax', 'cummin', 'unique']


@pytest.mark.parametrize('name', MINMAX)
def test_minmax_functions_say_their_signature(name):
    """Each function's docstring opens with PyTorch's signature (out= where PyTorch has one)."""
    first = lg.__dict__[name].__doc__.splitlines()[0]
    assert first.startswith(f'{name}(input') and ('out=None' in first) == (name != 'unique')


@pytest.mark.parametrize('make,attrs', [
    (lambda T, x: x.max(), ['_saved_result', '_saved_self']),
    (lambda T, x: x.min(), ['_saved_result', '_saved_self']),
    (lambda T, x: x.median(), ['_saved_result', '_saved_self']),
    (lambda T, x: x.amax(1), ['_saved_result', '_saved_self']),
    (lambda T, x: x.amin(0, keepdim=True), ['_saved_result', '_saved_self']),
    (lambda T, x: T.aminmax(x).max, ['_saved_max', '_saved_min', '_saved_self']),
    (lambda T, x: x.cummax(1).values, ['_saved_self']),
    (lambda T, x: x.cummin(0).values, ['_saved_self']),
], ids=['max', 'min', 'median', 'amax', 'amin', 'aminmax', 'cummax', 'cummin'])
def test_minmax_saved_tensors_as_torch(make, attrs):
    """grad_fn._saved_<name> of the tensors PyTorch's node saves, the same values (the nodes'
    other saved attributes, dims and indices, are not exposed)."""
    x = np.array([[1.5, -8., 0.25], [3., 3., -1.]])
    lo, to = make(lg, lg.tensor(x, requires_grad=True)), make(torch, torch.tensor(x, requires_grad=True))
    assert [a for a in dir(to.grad_fn) if a.startswith('_saved_') and a in attrs] == attrs
    for a in attrs:
        np.testing.assert_array_equal(getattr(lo.grad_fn, a).detach().numpy(), getattr(to.grad_fn, a).detach().numpy())


@pytest.mark.parametrize('call,same', [
    ('x.max(out=x)', False), ('x.min(out=x)', False), ('x.max(0, out=x)', True), ('x.amax(out=x)', True),
    ('x.cummax(0, out=x)', True), ('x.sort(out=x)', False), ('x.topk(1, out=x)', True),
    ('x.median(0, out=x)', True), ('x.kthvalue(1, out=x)', True), ('x.argmax(out=x)', True),
])
def test_minmax_methods_take_no_out(call, same):
    """PyTorch's methods take no out= (Tensor.max accepted it and wrote into it): Python's
    TypeError, with PyTorch's message where PyTorch's is Python's own (not an overload list)."""
    msgs = method_refusal_messages(call)
    assert msgs[0] == msgs[1] or not same


ARGSORT_CALLS = [  # (x a 2x3 float tensor, o an empty int64 tensor)
    'T.argsort(x, out=o)', 'T.argsort(x, 0, out=o)', 'T.argsort(x, 0, True, out=o)', 'T.argsort(x, dim=0, out=o)',
    'T.argsort(x, out=None)', 'T.argsort(x, stable=None)', 'T.argsort(x, stable=None, out=o)',
    'T.argsort(x, stable=1)', 'T.argsort(x, 0, False, True)', 'T.argsort(x, 0, "a")', 'T.argsort(x, True)',
    'T.argsort(x, dim=1, descending=True, out=o)', 'T.argsort(x, stable=True, dim="a")', 'T.argsort(x, foo=1)',
    'T.argsort(x, dim=0, stable=True, input=x)', 'T.argsort(x, dim=None)',
    'x.argsort(out=o)', 'x.argsort(stable=True, out=o)', 'x.argsort(stable=None)', 'x.argsort(0, False, True)',
    'x.argsort(0, "a")', 'x.argsort(0, descending=True, stable=True)', 'x.argsort(descending=1)',
    'x.argsort(0, out=o)', 'x.argsort(True)',
    'T.argsort(x.requires_grad_(), stable=True, out=o.float())',   # autograd first, then the dtype
    'T.argsort(x, stable=True, out=o.float().requires_grad_())',    # the dtype first
]


@pytest.mark.parametrize('call', ARGSORT_CALLS)
def test_argsort_refuses_as_torch(call):
    """out= is in PyTorch's overload with a bool ``stable`` only; its argument parser refuses the
    rest (leafgrad took out= and stable=None either way): the same error type and message."""
    msgs = []
    for T in (lg, torch):
        env = {'T': T, 'x': T.tensor([[3., 1., 2.], [0., 5., 4.]]), 'o': T.empty(0, dtype=T.int64)}
        with pytest.raises((TypeError, RuntimeError)) as info:
            eval(call, env)
        msgs.append((type(info.value), str(info.value).replace('leafgrad', 'torch')))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize('call', [
    'T.argsort(x, stable=True, out=o)', 'T.argsort(x, stable=False, dim=0, descending=True, out=o)',
    'T.argsort(x, 0, True)', 'T.argsort(input=x, stable=True)', 'T.argsort(x, T.tensor(0))', 'T.argsort(x, stable=True)',
    'x.argsort(stable=True, dim=0)', 'x.argsort(0, True)', 'x.argsort(descending=True)', 'x.argsort()',
    'T.func.vmap(lambda r: r.argsort())(x)', 'T.func.vmap(lambda r: T.argsort(r, stable=True, descending=True))(x)',
])
def test_argsort_takes_what_torch_takes(call):
    results = []
    for T in (lg, torch):
        env = {'T': T, 'x': T.tensor([[3., 1., 2.], [0., 5., 4.]]), 'o': T.empty(0, dtype=T.int64)}
        results.append(eval(call, env))
    assert results[0].tolist() == results[1].tolist() and str(results[0].dtype)[-5:] == str(results[1].dtype)[-5:]
