"""Counting and searching (bincount, histc, histogram, searchsorted, bucketize, isin,
unravel_index), products and assembled matrices (trace, vdot, inner, addr, kron, block_diag,
diagflat, cartesian_prod, combinations) and statistics (quantile, nanquantile, nanmedian, cov,
corrcoef, diff, trapezoid, cumulative_trapezoid, dist, renorm) against torch: values, dtypes,
node names, first and second derivatives, float64 gradcheck, errors."""
import numpy as np
import pytest

import leafgrad as lg
from optable import check_case, method_refusal_messages, needs_torch, torch
from oracle import raises_like, same_message

R = np.random.default_rng(0)


def r(*shape):
    return R.standard_normal(shape)


def ints(*shape, lo=0, hi=6):
    return R.integers(lo, hi, shape)


def row(name, fn, arrays, grad=True, names=True, fd=True):
    return pytest.param(fn, arrays, grad, names, fd, id=name)


NAN = float('nan')
_with_nan = r(3, 5)
_with_nan[0, 1] = _with_nan[2, 0] = _with_nan[2, 3] = NAN
_all_nan_row = r(2, 4)
_all_nan_row[1] = NAN

ROWS = [
    # counting and searching: forward only
    row('bincount', lambda T, x: T.bincount(x), [ints(10)], grad=False),
    row('bincount_minlength', lambda T, x: x.bincount(minlength=9), [ints(10)], grad=False),
    row('bincount_weights_f32', lambda T, x, w: T.bincount(x, w.float()), [ints(10), r(10)], grad=False),
    row('bincount_weights_f64', lambda T, x, w: T.bincount(x, w), [ints(10), r(10)], grad=False),
    row('bincount_weights_int', lambda T, x, w: T.bincount(x, w), [ints(10), ints(10)], grad=False),
    row('bincount_empty', lambda T, x: T.bincount(x), [np.zeros(0, np.int64)], grad=False),
    row('histc', lambda T, x: T.histc(x, bins=7), [r(50)], grad=False),
    row('histc_range', lambda T, x: x.float().histc(4, min=-1, max=1), [r(6, 5)], grad=False),
    row('histc_constant', lambda T, x: T.histc(x, 3), [np.ones(4)], grad=False),
    row('histc_edges', lambda T, x: T.histc(x, 4, 0, 3), [np.array([0., 0.75, 1.5, 3, 3.5, -1])], grad=False),
    row('histogram_bins', lambda T, x: T.histogram(x, 5), [r(40)], grad=False),
    row('histogram_range_weight', lambda T, x, w: T.histogram(x, 3, range=(-1., 1.), weight=w), [r(20), r(20)],
        grad=False),
    row('histogram_edges_density', lambda T, x, e: x.histogram(e, density=True),
        [r(30), np.array([-2., -0.5, 0, 0.3, 2])], grad=False),
    row('histogram_constant', lambda T, x: T.histogram(x, 4), [np.full(3, 2.0)], grad=False),
    row('searchsorted', lambda T, s, v: T.searchsorted(s, v), [np.array([1, 3, 5, 7]), ints(3, 4, hi=9)],
        grad=False),
    row('searchsorted_right_int32', lambda T, s, v: T.searchsorted(s, v, right=True, out_int32=True),
        [np.array([1., 3, 3, 7]), np.array([3., 0, 8])], grad=False),
    row('searchsorted_side_sorter', lambda T, s, v, o: T.searchsorted(s, v, side='right', sorter=o),
        [np.array([7, 3, 5, 1]), np.array([3, 6]), np.array([3, 1, 2, 0])], grad=False),
    row('searchsorted_batched', lambda T, s, v: T.searchsorted(s, v),
        [np.sort(r(2, 3, 5), -1), r(2, 3, 4)], grad=False),
    row('searchsorted_scalar', lambda T, s: T.searchsorted(s, 4), [np.array([1, 3, 5, 7])], grad=False),
    row('bucketize', lambda T, v, b: T.bucketize(v, b), [r(3, 4), np.array([-1., 0, 0.5])], grad=False),
    row('bucketize_right', lambda T, v, b: T.bucketize(v, b, right=True), [ints(5), np.array([1, 3])],
        grad=False),
    row('isin', lambda T, a, b: T.isin(a, b), [ints(3, 4), np.array([1, 4])], grad=False),
    row('isin_invert', lambda T, a, b: T.isin(a, b, invert=True), [ints(6), ints(2, 2)], grad=False),
    row('isin_scalar', lambda T, a: T.isin(a, 3), [ints(6)], grad=False),
    row('unravel_index', lambda T, i: T.unravel_index(i, (3, 4)), [ints(2, 5, hi=12)], grad=False),
    row('unravel_index_wraps', lambda T, i: T.unravel_index(i, (2, 3)), [np.array([-1, 7, 0])], grad=False),
    # products and assembled matrices
    row('trace', lambda T, x: T.trace(x), [r(3, 4)]),
    row('trace_method_int', lambda T, x: x.trace(), [ints(3, 3)], grad=False),
    row('vdot', lambda T, a, b: T.vdot(a, b), [r(5), r(5)]),
    row('inner_matrices', lambda T, a, b: T.inner(a, b), [r(2, 3), r(4, 3)]),
    row('inner_vectors', lambda T, a, b: a.inner(b), [r(3), r(3)], names=False),
    row('inner_scalar', lambda T, a, b: T.inner(a, b), [r(2, 3), np.array(2.0)]),
    row('addr', lambda T, c, a, b: T.addr(c, a, b), [r(3, 4), r(3), r(4)]),
    row('addr_scaled_broadcast', lambda T, c, a, b: c.addr(a, b, beta=0.5, alpha=-2), [r(4), r(3), r(4)]),
    row('kron_matrices', lambda T, a, b: T.kron(a, b), [r(2, 3), r(3, 2)]),
    row('kron_mixed_ndim', lambda T, a, b: a.kron(b), [r(2, 2, 2), r(3)]),
    row('block_diag', lambda T, a, b, c: T.block_diag(a, b, c), [r(2, 3), r(4), np.array(1.5)]),
    row('block_diag_int_promotes', lambda T, a, b: T.block_diag(a, b), [ints(2, 2), r(1, 3)]),
    row('diagflat', lambda T, x: T.diagflat(x), [r(2, 2)]),
    row('diagflat_offset', lambda T, x: x.diagflat(-1), [r(3)]),
    row('cartesian_prod', lambda T, a, b: T.cartesian_prod(a, b), [r(3), r(2)]),
    row('cartesian_prod_three', lambda T, a, b, c: T.cartesian_prod(a, b, c), [r(2), r(2), r(3)]),
    row('combinations', lambda T, x: T.combinations(x), [r(4)]),
    row('combinations_r3_replacement', lambda T, x: T.combinations(x, 3, with_replacement=True), [r(3)]),
    row('combinations_r0', lambda T, x: T.combinations(x, 0), [r(3)], grad=False),
    # statistics
    row('quantile_scalar', lambda T, x: T.quantile(x, 0.3), [r(3, 4)]),
    row('quantile_tensor_q_dim', lambda T, x, q: T.quantile(x, q, dim=1, keepdim=True), [r(3, 5),
                                                                                          np.array([0.1, 0.45, 0.9])]),
    row('quantile_0d_q', lambda T, x, q: x.quantile(q, 0), [r(4, 3), np.array(0.75)]),
    row('quantile_lower', lambda T, x: T.quantile(x, 0.4, 1, interpolation='lower'), [r(2, 6)]),
    row('quantile_higher', lambda T, x: T.quantile(x, 0.4, 1, interpolation='higher'), [r(2, 6)]),
    row('quantile_midpoint', lambda T, x: T.quantile(x, 0.4, 1, interpolation='midpoint'), [r(2, 6)]),
    row('quantile_nearest', lambda T, x: T.quantile(x, 0.5, 1, interpolation='nearest'), [r(2, 5)]),
    row('quantile_nan', lambda T, x: T.quantile(x, 0.5, 1), [_with_nan], fd=False),
    row('nanquantile', lambda T, x: T.nanquantile(x, 0.5, 1), [_with_nan], fd=False),
    row('nanquantile_all_nan_row', lambda T, x: x.nanquantile(0.2, dim=1), [_all_nan_row], fd=False),
    row('nanmedian', lambda T, x: T.nanmedian(x), [_with_nan], fd=False),
    row('nanmedian_dim', lambda T, x: T.nanmedian(x, 1), [_with_nan], fd=False),
    row('nanmedian_dim_keepdim', lambda T, x: x.nanmedian(0, keepdim=True), [r(4, 3)]),
    # (the index of a row of NaN only is where std::nth_element leaves it: the values are compared)
    row('nanmedian_all_nan', lambda T, x: T.nanmedian(x, 1).values, [_all_nan_row], grad=False),
    row('cov', lambda T, x: T.cov(x), [r(3, 5)]),
    row('cov_vector', lambda T, x: T.cov(x, correction=0), [r(5)]),
    row('cov_weights', lambda T, x, f, a: T.cov(x, fweights=f, aweights=a), [r(2, 4), np.array([1, 2, 1, 3]),
                                                                          R.uniform(0.5, 2, 4)]),
    row('corrcoef', lambda T, x: T.corrcoef(x), [r(3, 6)]),
    row('corrcoef_vector', lambda T, x: x.corrcoef(), [r(6)]),
    row('diff', lambda T, x: T.diff(x), [r(3, 5)]),
    row('diff_n2_dim0', lambda T, x: x.diff(2, 0), [r(4, 3)]),
    row('diff_prepend_append', lambda T, x, p, a: T.diff(x, 1, 1, p, a), [r(2, 3), r(2, 1), r(2, 2)]),
    row('diff_bool', lambda T, x: T.diff(x > 0), [r(6)], grad=False),
    row('diff_too_many', lambda T, x: T.diff(x, 5), [r(2, 3)]),
    row('trapezoid', lambda T, y: T.trapezoid(y), [r(3, 5)], names=False),
    row('trapezoid_dx', lambda T, y: T.trapezoid(y, dx=0.5, dim=0), [r(3, 5)], names=False),
    row('trapezoid_x', lambda T, y, x: T.trapezoid(y, x), [r(3, 5), np.sort(r(5))], names=False),
    row('trapezoid_x_dim', lambda T, y, x: T.trapezoid(y, x, dim=0), [r(4, 2), np.sort(r(4, 2), 0)], names=False),
    row('trapz', lambda T, y, x: T.trapz(y, x), [r(4), np.sort(r(4))], names=False),
    row('cumulative_trapezoid', lambda T, y: T.cumulative_trapezoid(y), [r(3, 5)]),
    row('cumulative_trapezoid_x', lambda T, y, x: T.cumulative_trapezoid(y, x), [r(2, 4), np.sort(r(4))],
        names=False),
    row('gradient', lambda T, y: T.gradient(y), [r(3, 5)]),
    row('gradient_spacing', lambda T, y: T.gradient(y, spacing=0.5, dim=1), [r(3, 5)]),
    row('gradient_spacings', lambda T, y: T.gradient(y, spacing=[2., -1.], edge_order=2), [r(3, 5)]),
    row('gradient_coordinates', lambda T, y, a, b: T.gradient(y, spacing=(a, b)), [r(3, 4), np.sort(r(3)), np.sort(r(4))]),
    row('gradient_coordinates_edge2', lambda T, y, a: T.gradient(y, spacing=[a], dim=-1, edge_order=2),
        [r(2, 5), np.sort(r(5))]),
    row('gradient_dims', lambda T, y: T.gradient(y, dim=(2, 0), spacing=[3, 0.5]), [r(3, 2, 4)]),
    row('dist', lambda T, a, b: T.dist(a, b), [r(3, 4), r(4)]),
    row('dist_p1', lambda T, a, b: a.dist(b, 1), [r(3, 4), r(3, 4)]),
    row('dist_p3', lambda T, a, b: T.dist(a, b, 3), [r(3), r(3)]),
    row('dist_inf', lambda T, a, b: T.dist(a, b, float('inf')), [r(5), r(5)]),
    row('renorm', lambda T, x: T.renorm(x, 2, 0, 1.0), [r(3, 4) * 0.6]),
    row('renorm_p1_dim1', lambda T, x: x.renorm(1, 1, 1.5), [r(3, 4, 2)]),
    row('renorm_p3', lambda T, x: T.renorm(x, 3, -1, 0.8), [r(4, 3)]),
]


@needs_torch
@pytest.mark.parametrize('fn,arrays,grad,names,fd', ROWS)
def test_against_torch(fn, arrays, grad, names, fd):
    with np.errstate(all='ignore'):
        check_case(fn, arrays, grad=grad, names=names, fd=fd)


def _t(*a, **k):
    return lambda T: T.tensor(*a, **k)


ERRORS = [
    ('bincount_negative', lambda T: T.bincount(T.tensor([-1, 2]))),
    ('bincount_float', lambda T: T.bincount(T.tensor([1., 2]))),
    ('bincount_2d', lambda T: T.bincount(T.tensor([[1, 2]]))),
    ('bincount_weights_length', lambda T: T.bincount(T.tensor([0, 1, 1]), T.tensor([1., 2]))),
    ('bincount_minlength', lambda T: T.bincount(T.tensor([0, 1]), minlength=-1)),
    ('histc_int', lambda T: T.histc(T.tensor([1, 2]), 4)),
    ('histc_bins', lambda T: T.histc(T.tensor([1., 2]), bins=-1)),
    ('histc_min_max', lambda T: T.histc(T.tensor([1., 2]), 3, min=3, max=1)),
    ('histogram_int', lambda T: T.histogram(T.tensor([1, 2]), 3)),
    ('searchsorted_shapes', lambda T: T.searchsorted(T.tensor([[1, 3], [2, 4]]), T.tensor([3, 6]))),
    ('searchsorted_side', lambda T: T.searchsorted(T.tensor([1, 3]), T.tensor([3]), side='bad')),
    ('searchsorted_opposite', lambda T: T.searchsorted(T.tensor([1, 3]), T.tensor([3]), side='left', right=True)),
    ('bucketize_2d', lambda T: T.bucketize(T.tensor([3]), T.tensor([[1, 3]]))),
    ('unravel_float', lambda T: T.unravel_index(T.tensor([1.]), (2, 3))),
    ('trace_vector', lambda T: T.trace(T.ones(3))),
    ('vdot_2d', lambda T: T.vdot(T.ones(2, 2), T.ones(2, 2))),
    ('vdot_dtypes', lambda T: T.vdot(T.ones(2), T.ones(2, dtype=T.float64))),
    ('vdot_sizes', lambda T: T.vdot(T.ones(2), T.ones(3))),
    ('inner_sizes', lambda T: T.inner(T.ones(2, 3), T.ones(2))),
    ('addr_2d_vec', lambda T: T.addr(T.ones(2, 2), T.ones(2, 1), T.ones(2))),
    ('block_diag_3d', lambda T: T.block_diag(T.ones(2), T.ones(1, 2, 2))),
    ('cartesian_2d', lambda T: T.cartesian_prod(T.ones(2), T.ones(2, 2))),
    ('combinations_2d', lambda T: T.combinations(T.ones(2, 2))),
    ('combinations_negative', lambda T: T.combinations(T.ones(3), -1)),
    ('quantile_int', lambda T: T.quantile(T.tensor([1, 2]), 0.5)),
    ('quantile_q_2d', lambda T: T.quantile(T.ones(3), T.tensor([[0.5]]))),
    ('quantile_q_range', lambda T: T.quantile(T.ones(3), 1.5)),
    ('quantile_q_tensor_range', lambda T: T.quantile(T.ones(3), T.tensor([0.5, -0.1]))),
    ('quantile_interpolation', lambda T: T.quantile(T.ones(3), 0.5, interpolation='bad')),
    ('quantile_empty', lambda T: T.quantile(T.ones(0), 0.5)),
    ('quantile_q_dtype', lambda T: T.quantile(T.ones(3), T.tensor([0.5], dtype=T.float64))),
    ('nanquantile_int', lambda T: T.nanquantile(T.tensor([1, 2]), 0.5)),
    ('cov_3d', lambda T: T.cov(T.ones(2, 2, 2))),
    ('cov_fweights_float', lambda T: T.cov(T.ones(2, 3), fweights=T.ones(3))),
    ('cov_fweights_negative', lambda T: T.cov(T.ones(2, 3), fweights=T.tensor([1, -1, 1]))),
    ('cov_aweights_size', lambda T: T.cov(T.ones(2, 3), aweights=T.ones(2))),
    ('cov_fweights_2d', lambda T: T.cov(T.ones(2, 3), fweights=T.ones(1, 3, dtype=T.int64))),
    ('cov_fweights_size', lambda T: T.cov(T.ones(2, 3), fweights=T.ones(2, dtype=T.int64))),
    ('cov_aweights_2d', lambda T: T.cov(T.ones(2, 3), aweights=T.ones(1, 3))),
    ('cov_aweights_long', lambda T: T.cov(T.ones(2, 3), aweights=T.ones(3, dtype=T.int64))),
    ('cov_aweights_negative', lambda T: T.cov(T.ones(2, 3), aweights=-T.ones(3))),
    ('diff_0d', lambda T: T.diff(T.tensor(1.))),
    ('diff_negative', lambda T: T.diff(T.ones(3), -1)),
    ('diff_prepend_dims', lambda T: T.diff(T.ones(2, 3), prepend=T.ones(3))),
    ('gradient_edge_order', lambda T: T.gradient(T.ones(3), edge_order=3)),
    ('gradient_short', lambda T: T.gradient(T.ones(2, 4), edge_order=2)),
    ('gradient_spacings_length', lambda T: T.gradient(T.ones(2, 4), spacing=[1., 2., 3.])),
    ('gradient_spacings_dims', lambda T: T.gradient(T.ones(2, 4), spacing=[1.], dim=(0, 1))),
    ('gradient_coordinates_2d', lambda T: T.gradient(T.ones(2, 4), spacing=[T.ones(1, 2)], dim=0)),
    ('gradient_dim_range', lambda T: T.gradient(T.ones(2, 4), dim=2)),
    ('gradient_dim_twice', lambda T: T.gradient(T.ones(2, 4), dim=(1, -1))),
    ('gradient_tensor_spacing', lambda T: T.gradient(T.ones(3), spacing=T.ones(3))),
    ('gradient_mixed_spacing', lambda T: T.gradient(T.ones(2, 4), spacing=[T.ones(2), 3.])),
    ('gradient_string_spacing', lambda T: T.gradient(T.ones(3), spacing='a')),
    ('gradient_list_input', lambda T: T.gradient([1., 2.])),
    ('atleast_1d_mixed_list', lambda T: T.atleast_1d([T.ones(2), 1.])),
    ('stack_mixed_list', lambda T: T.stack((T.ones(2), 'a'))),
    ('dist_broadcast', lambda T: T.dist(T.ones(3, 4), T.ones(4, 3))),
    ('dist_int', lambda T: T.dist(T.tensor([1, 2]), T.tensor([1, 2]))),
    ('renorm_1d', lambda T: T.renorm(T.ones(3), 2, 0, 1.)),
    ('renorm_p', lambda T: T.renorm(T.ones(2, 3), -1, 0, 1.)),
    ('renorm_maxnorm', lambda T: T.renorm(T.ones(2, 3), 2, 0, -1.)),
    ('renorm_int', lambda T: T.renorm(T.ones(2, 3, dtype=T.int64), 2, 0, 1.)),
]


@needs_torch
@pytest.mark.parametrize('fn', [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn):
    lg_msg, t_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
    assert same_message(lg_msg, t_msg), (lg_msg, t_msg)


@needs_torch
def test_histogram_and_nanmedian_are_return_types_like_torch():
    x = np.array([1., 2, 1, 4])
    h = lg.histogram(lg.tensor(x), 4)
    th = torch.histogram(torch.tensor(x), 4)
    assert repr(h).replace('leafgrad', 'torch') == repr(th)
    assert h.hist is h[0] and h.bin_edges is h[1]
    m = lg.nanmedian(lg.tensor([[1., NAN, 3]]), 1)
    tm = torch.nanmedian(torch.tensor([[1., NAN, 3]]), 1)
    assert repr(m).replace('leafgrad', 'torch') == repr(tm)


@pytest.mark.parametrize('name', ['bincount', 'histc', 'histogram', 'searchsorted', 'bucketize', 'isin',
                                  'unravel_index'])
def test_functions_say_their_signature(name):
    """Each declared function's docstring opens with PyTorch's signature (out= where it has one)."""
    first = getattr(lg, name).__doc__.splitlines()[0]
    assert first.startswith(f'{name}(') and first.rstrip(')').endswith(('out=None', 'out=None) -> Tensor')) == (
        name not in ('bincount', 'unravel_index'))


@pytest.mark.parametrize('name', ['quantile', 'nanquantile', 'nanmedian', 'cov', 'corrcoef', 'diff', 'trapezoid', 'trapz',
                                  'cumulative_trapezoid', 'dist', 'renorm'])
def test_statistics_functions_say_their_signature(name):
    """Each declared function's docstring opens with PyTorch's signature (out= where it has one)."""
    first = getattr(lg, name).__doc__.splitlines()[0]
    assert first.startswith(f'{name}(') and ('out=None' in first) == (
        name in ('quantile', 'nanquantile', 'nanmedian', 'diff', 'renorm'))


@needs_torch
@pytest.mark.parametrize('make,attrs', [
    (lambda T, x: T.dist(x, x * 2, 3), ['_saved_other', '_saved_result', '_saved_self']),
    (lambda T, x: T.renorm(x, 2, 0, 1.0), ['_saved_self']),
    (lambda T, x: x.nanmedian(), ['_saved_result', '_saved_self']),
], ids=['dist', 'renorm', 'nanmedian'])
def test_statistics_saved_tensors_as_torch(make, attrs):
    """grad_fn._saved_<name> of the tensors PyTorch's node saves, the same values."""
    x = np.array([[1.5, -8., 0.25], [3., 3., -1.]])
    lo, to = make(lg, lg.tensor(x, requires_grad=True)), make(torch, torch.tensor(x, requires_grad=True))
    assert [a for a in dir(to.grad_fn) if a.startswith('_saved_') and a in attrs] == attrs
    for a in attrs:
        np.testing.assert_array_equal(getattr(lo.grad_fn, a).detach().numpy(), getattr(to.grad_fn, a).detach().numpy())


@needs_torch
@pytest.mark.parametrize('call,same', [
    ('x.quantile(0.5, out=x)', False), ('x.nanquantile(0.5, out=x)', False), ('x.nanmedian(0, out=x)', True),
    ('x.diff(out=x)', True), ('x.renorm(2, 0, 1.0, out=x)', True), ('x.histc(out=x)', True),
])
def test_statistics_methods_take_no_out(call, same):
    """PyTorch's methods take no out= (Tensor.quantile and nanmedian accepted it): Python's
    TypeError, with PyTorch's message where PyTorch's is Python's own (not an overload list)."""
    msgs = method_refusal_messages(call)
    assert msgs[0] == msgs[1] or not same


@needs_torch
@pytest.mark.parametrize('code', ['(x * 1).renorm_(2, 0, 1.0)', 'x.detach().clone().renorm_(1, 1, 0.5)',
                                  'i.clone().renorm_(2, 0, 1.)', 'x[0].clone().renorm_(2, 0, 1.)', 'x.renorm_(2, 0, 1.)',
                                  'x.detach()[:, 0].renorm_(2, 0, 1.)', '(x * 1)[:, 1:].renorm_(3, 1, 0.5)'])
def test_renorm_inplace_as_torch(code):
    """Tensor.renorm_ as PyTorch's (it was missing): values, version, RenormBackward0, gradients
    (float64), errors."""
    got = []
    for T in (lg, torch):
        try:
            x = T.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=T.float64, requires_grad=True)
            r = eval(code, {'x': x, 'i': T.tensor([[4, 6], [9, 0]])})
            row = [r.tolist(), r._version, type(r.grad_fn).__name__ if r.grad_fn is not None else None]
            if r.requires_grad:
                r.sum().backward()
                row.append(np.round(x.grad.numpy(), 12).tolist())
            got.append(row)
        except Exception as e:
            got.append((type(e).__name__, str(e).replace('leafgrad', 'torch')))
    assert got[0] == got[1]


# ---- histogramdd: the histogram of N-dimensional points ------------------------------------------

_POINTS = [[0., 1.], [1., 0.], [2., 0.], [2., 2.], [0.5, 1.5], [3., -1.]]


@pytest.mark.parametrize('call', [
    'T.histogramdd(x, bins=[3, 3], weight=T.tensor([1., 2., 4., 8., 1., 1.]))',
    'T.histogramdd(x, bins=[2, 2], range=[0., 1., 0., 1.], density=True)',
    'T.histogramdd(x, bins=2)', 'T.histogramdd(x, (2, 4), density=True)',
    'T.histogramdd(x, bins=[T.tensor([0., 1, 2]), T.tensor([0., 1.5, 3])])',
    'T.histogramdd(x.double().reshape(2, 3, 2), bins=[2, 3])',
    'T.histogramdd(T.cat([x, x[:, :1]], 1), bins=[2, 2, 2])',
    'T.histogramdd(T.ones(3, 2), bins=2)', 'T.histogramdd(x.long(), 2)', 'T.histogramdd(x, [2])',
    'T.histogramdd(x, 2, range=[0., 1.])', 'T.histogramdd(T.ones(3), 2)', 'T.histogramdd(x, 0)',
    'T.histogramdd(x, 2, weight=T.ones(3))', 'T.histogramdd(x, 2, range=[1., 0., 0, 1])',
])
def test_histogramdd_as_torch(call):
    outcomes = []
    for T in (lg, torch):
        try:
            r = eval(call, {'T': T, 'x': T.tensor(_POINTS)})
            outcomes.append(('ok', type(r).__name__, repr(r).replace('leafgrad', 'torch')))
        except Exception as e:
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]


def test_histogramdd_has_no_derivative():
    for T in (lg, torch):
        hist, _ = T.histogramdd(T.tensor(_POINTS, requires_grad=True), 2)
        assert hist.requires_grad and type(hist.grad_fn).__name__ == 'NotImplemented'


_TRAPEZOIDS = ['T.trapezoid(y)', 'T.trapezoid(y, dx=2)', 'T.trapezoid(y, xs)', 'T.trapezoid(y, dx=0.5, dim=0)',
               'T.trapz(y, xs)', 'T.trapz(y, dx=3)', 'T.cumulative_trapezoid(y)', 'T.cumulative_trapezoid(y, xs)',
               'T.cumulative_trapezoid(y, dx=3)', 'T.trapezoid(y[:, :0])', 'T.cumulative_trapezoid(y[:, :0])',
               'T.trapezoid(y, T.tensor([0.5, 1.0, 3.0], dtype=T.float64) * 1)',
               'T.trapezoid(y, 0.5)', 'T.trapz(y, 0.5)', 'T.cumulative_trapezoid(y, 0.5)',
               'T.trapezoid(y, xs, dx=2)', 'T.trapezoid(y, x=0.5)']


@needs_torch
@pytest.mark.parametrize('expr', _TRAPEZOIDS)
def test_trapezoids_record_and_refuse_as_pytorch(expr):
    """trapezoid, trapz and cumulative_trapezoid record PyTorch's nodes, with their saved values
    (its products and quotients by numbers MulBackward1 and DivBackward1, its slices along the
    dim as given), give nothing to differentiate along an empty dim, and refuse a number for x
    with PyTorch's listing of their overloads (trapz's in its own order)."""
    def run(T):
        y = T.tensor([[1., 2., 4.], [0.5, -1., 3.]], dtype=T.float64, requires_grad=True)
        xs = T.tensor([0., 1., 3.], dtype=T.float64)
        try:
            r = eval(expr, {'T': T, 'y': y, 'xs': xs})
        except TypeError as e:
            return str(e)
        chain, fn = [], r.grad_fn
        while fn is not None and len(chain) < 7:
            chain.append((fn.name().replace('torch::', 'leafgrad::'),
                          {a: getattr(fn, a) for a in dir(fn) if a.startswith('_saved_')
                           and not isinstance(getattr(fn, a), T.Tensor)}))
            fn = next((n for n, _ in fn.next_functions if n is not None), None)
        grad = T.autograd.grad(r.sum(), y)[0].tolist() if r.requires_grad else None
        return r.tolist(), chain, grad
    assert run(lg) == run(torch)
