"""Shape, view and rearranging ops against torch: values, dtypes, node names, gradients,
second derivatives, finite differences; views share memory and version counters; errors."""
import numpy as np
import pytest

torch = pytest.importorskip('torch')

import leafgrad as lg  # noqa: E402
from oracle import raises_like, same_message  # noqa: E402
from optable import check_case  # noqa: E402


def R(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape)


def F(m):
    """nn.functional.pad: torch's, or leafgrad's (defined in ops/rearrange.py)."""
    if m is torch:
        return torch.nn.functional.pad
    from leafgrad.ops.rearrange import pad
    return pad


A, B, C = R(2, 3, 4), R(3, 4), R(5)

CASES = [
    ('reshape', lambda m, x: x.reshape(4, 6), [A]),
    ('reshape_copy', lambda m, x: x.transpose(0, 2).reshape(-1), [A]),
    ('view', lambda m, x: x.view(6, -1), [A]),
    ('view_as', lambda m, x, y: x.view_as(y), [R(12), B]),
    ('flatten', lambda m, x: x.flatten(), [A]),
    ('flatten_12', lambda m, x: m.flatten(x, 1, 2), [A]),
    ('flatten_0d', lambda m, x: x.sum().flatten(), [A]),
    ('ravel', lambda m, x: x.ravel(), [A]),
    ('unflatten', lambda m, x: x.unflatten(2, (2, 2)), [A]),
    ('unflatten_neg', lambda m, x: x.unflatten(-1, (-1, 2)), [A]),
    ('squeeze_all', lambda m, x: x.squeeze(), [R(1, 3, 1)]),
    ('squeeze_dim', lambda m, x: x.squeeze(0), [R(1, 3, 1)]),
    ('squeeze_dim_noop', lambda m, x: x.squeeze(1), [R(1, 3, 1)]),
    ('squeeze_dims', lambda m, x: x.squeeze((0, 2)), [R(1, 3, 1)]),
    ('unsqueeze', lambda m, x: x.unsqueeze(-1), [B]),
    ('transpose', lambda m, x: x.transpose(0, 2), [A]),
    ('swapaxes', lambda m, x: m.swapaxes(x, 0, 1), [A]),
    ('t', lambda m, x: x.t(), [B]),
    ('T', lambda m, x: x.T, [B]),
    ('mT', lambda m, x: x.mT, [A]),
    ('H', lambda m, x: x.H, [B]),
    ('mH', lambda m, x: x.mH, [A]),
    ('adjoint', lambda m, x: m.adjoint(x), [A]),
    ('permute', lambda m, x: x.permute(2, 0, 1), [A]),
    ('movedim', lambda m, x: x.movedim(0, 2), [A]),
    ('movedim_multi', lambda m, x: m.movedim(x, (0, 1), (2, 0)), [A]),
    ('moveaxis', lambda m, x: m.moveaxis(x, -1, 0), [A]),
    ('expand', lambda m, x: x.expand(2, 3, 4), [R(3, 1)]),
    ('expand_neg', lambda m, x: x.expand(2, -1, 4), [R(3, 1)]),
    ('expand_as', lambda m, x, y: x.expand_as(y), [R(1, 4), B]),
    ('broadcast_to', lambda m, x: m.broadcast_to(x, (3, 5)), [C]),
    ('repeat', lambda m, x: x.repeat(2, 1, 3), [B]),
    ('repeat_same', lambda m, x: x.repeat(2, 2), [B]),
    ('tile', lambda m, x: x.tile((2,)), [B]),
    ('tile_more', lambda m, x: m.tile(x, (2, 1, 2)), [B]),
    ('repeat_interleave', lambda m, x: x.repeat_interleave(2), [B]),
    ('repeat_interleave_dim', lambda m, x: x.repeat_interleave(3, dim=1), [B]),
    ('repeat_interleave_t', lambda m, x: x.repeat_interleave(m.tensor([1, 0, 2]), dim=0), [B]),
    ('flip', lambda m, x: x.flip(0, 2), [A]),
    ('flip_kw', lambda m, x: m.flip(x, dims=[1]), [A]),
    ('fliplr', lambda m, x: m.fliplr(x), [B]),
    ('roll', lambda m, x: x.roll(1, 0), [A]),
    ('roll_multi', lambda m, x: m.roll(x, (1, -2), (0, 2)), [A]),
    ('roll_flat', lambda m, x: x.roll(5), [A]),
    ('narrow', lambda m, x: x.narrow(1, 1, 2), [A]),
    ('narrow_neg', lambda m, x: m.narrow(x, -1, -3, 2), [A]),
    ('unbind', lambda m, x: x.unbind(1), [A]),
    ('iterate', lambda m, x: tuple(x), [B]),
    ('iterate_unpack', lambda m, x: (lambda a, b, c: a * c)(*x), [B]),
    ('unbind_one_used', lambda m, x: x.unbind(0)[1] * 3, [B]),
    ('split', lambda m, x: x.split(2, 1), [R(2, 5)]),
    ('split_list', lambda m, x: m.split(x, [1, 3, 1], 1), [R(2, 5)]),
    ('split_one_used', lambda m, x: x.split(2)[1].exp(), [R(5, 2)]),
    ('split_with_sizes', lambda m, x: x.split_with_sizes([2, 2], -1), [A]),
    ('chunk', lambda m, x: x.chunk(3, 0), [R(5, 2)]),
    ('chunk_uneven', lambda m, x: m.chunk(x, 4, 1), [R(2, 7)]),
    ('chunk_empty', lambda m, x: m.chunk(x[:, :0], 3, 1), [R(2, 3)]),
    ('repeat_interleave_t1', lambda m, x: x.repeat_interleave(m.tensor([2]), dim=1), [B]),
    ('unfold', lambda m, x: x.unfold(0, 2, 1), [B]),
    ('unfold_step', lambda m, x: x.unfold(-1, 2, 2) ** 2, [R(2, 5)]),
    ('unfold_full', lambda m, x: x.unfold(1, 3, 1), [B]),
    ('tensor_split', lambda m, x: x.tensor_split(3), [R(7, 2)]),
    ('tensor_split_idx', lambda m, x: x.tensor_split([1, 4], dim=1), [R(2, 6)]),
    ('hsplit', lambda m, x: m.hsplit(x, 3), [R(2, 6)]),
    ('hsplit_indices_method', lambda m, x: x.hsplit([1, 4]), [R(2, 6)]),
    ('hsplit_1d', lambda m, x: m.hsplit(x, 2), [R(6)]),
    ('vsplit', lambda m, x: x.vsplit(2), [R(4, 3)]),
    ('dsplit', lambda m, x: m.dsplit(x, [1]), [R(2, 2, 3)]),
    ('cat', lambda m, x, y: m.cat([x, y, x], 0), [B, R(2, 4)]),
    ('cat_dim', lambda m, x, y: m.cat((x, y), dim=-1), [B, R(3, 2)]),
    ('concat', lambda m, x: m.concat([x, x * 2], 1), [B]),
    ('concatenate', lambda m, x: m.concatenate([x, x]), [C]),
    ('cat_legacy_empty', lambda m, x, y: m.cat([x, y]), [B, np.zeros(0)]),
    ('cat_dtype', lambda m, x: m.cat([x.float(), x]), [B], {'fd': False}),  # float32 spoils differences
    ('stack', lambda m, x, y: m.stack([x, y]), [B, R(3, 4, seed=1)]),
    ('stack_dim', lambda m, x, y: m.stack((x, y), dim=-1), [B, R(3, 4, seed=1)]),
    ('hstack', lambda m, x, y: m.hstack([x, y]), [B, R(3, 2)]),
    ('hstack_1d', lambda m, x: m.hstack([x, x]), [C]),
    ('vstack', lambda m, x, y: m.vstack([x, y]), [C, C * 2]),
    ('dstack', lambda m, x: m.dstack([x, x]), [B]),
    ('column_stack', lambda m, x: m.column_stack([x, x]), [C]),
    ('atleast_2d', lambda m, x: m.atleast_2d(x), [C]),
    ('atleast_3d', lambda m, x: m.atleast_3d(x), [B]),
    ('atleast_3d_1d', lambda m, x: m.atleast_3d(x), [C]),
    ('atleast_1d_0d', lambda m, x: m.atleast_1d(x.sum()), [C]),
    ('contiguous', lambda m, x: x.t().contiguous(), [B]),
    ('clone', lambda m, x: x.clone(), [B]),
    ('diag_vec', lambda m, x: m.diag(x), [C]),
    ('diag_vec_k', lambda m, x: x.diag(-2), [C]),
    ('diag_mat', lambda m, x: x.diag(), [B]),
    ('diag_mat_k', lambda m, x: m.diag(x, 1), [B]),
    ('diagonal', lambda m, x: x.diagonal(), [B]),
    ('diagonal_off', lambda m, x: m.diagonal(x, -1, 2, 0), [A]),
    ('diagonal_empty', lambda m, x: x.diagonal(5), [B]),
    ('diag_embed', lambda m, x: m.diag_embed(x), [B]),
    ('diag_embed_off', lambda m, x: m.diag_embed(x, 1, 0, 2), [B]),
    ('tril', lambda m, x: x.tril(), [B]),
    ('tril_k', lambda m, x: m.tril(x, -1), [A]),
    ('triu', lambda m, x: x.triu(1), [A]),
    ('rot90', lambda m, x: m.rot90(x, 1, (0, 1)), [B]),
    ('rot90_3', lambda m, x: x.rot90(3, (2, 0)), [A]),
    ('pad_constant', lambda m, x: F(m)(x, (1, 2)), [A]),
    ('pad_constant_value', lambda m, x: F(m)(x, (1, 0, 0, 2), value=3.5), [A]),
    ('pad_constant_neg', lambda m, x: F(m)(x, (-1, 1, 2, -1)), [A]),
    ('pad_constant_all', lambda m, x: F(m)(x, (1, 1, 1, 1, 1, 1)), [A]),
    ('pad_reflect', lambda m, x: F(m)(x, (2, 1), mode='reflect'), [A]),
    ('pad_reflect_2d', lambda m, x: F(m)(x, (1, 2, 2, 1), mode='reflect'), [A]),
    ('pad_replicate', lambda m, x: F(m)(x, (2, 3), mode='replicate'), [A]),
    ('pad_replicate_2d', lambda m, x: F(m)(x, (0, 2, 3, 1), mode='replicate'), [A]),
    ('pad_circular', lambda m, x: F(m)(x, (1, 2), mode='circular'), [A]),
    ('pad_circular_2d', lambda m, x: F(m)(x, (1, 2, 2, 1), mode='circular'), [A]),
    ('pad_circular_neg', lambda m, x: F(m)(x, (-1, 2), mode='circular'), [A]),
    ('pad_circular_neg_right', lambda m, x: F(m)(x, (2, -1, -1, 1), mode='circular'), [A]),
    ('meshgrid_ij', lambda m, x, y: m.meshgrid(x, y, indexing='ij'), [R(3), R(2)]),
    ('meshgrid_xy', lambda m, x, y, z: m.meshgrid([x, y, z], indexing='xy'), [R(3), R(2), R(2, seed=4)]),
    ('meshgrid_product', lambda m, x, y: (lambda a, b: a * b)(*m.meshgrid(x, y, indexing='xy')), [R(3), R(2)]),
    ('unsqueeze_', lambda m, x: (x * 1).unsqueeze_(1), [B]),
    ('squeeze_all_', lambda m, x: (x * 1).squeeze_(), [R(1, 3, 1)]),
    ('squeeze_dim_', lambda m, x: (x * 1).squeeze_(-1), [R(1, 3, 1)]),
    ('squeeze_dims_', lambda m, x: (x * 1).squeeze_((0, 2)), [R(1, 3, 1)]),
    ('t_', lambda m, x: (x * 1).t_(), [B]),
    ('transpose_', lambda m, x: (x * 1).transpose_(0, 2), [A]),
    ('swapaxes_', lambda m, x: (x * 1).swapaxes_(0, 1), [A]),
    ('unsqueeze_view_then_write', lambda m, x: (lambda y, v: [v.unsqueeze_(0), v.pow_(2), y][2])(
        *(lambda y: (y, y[1]))(x * 1)), [B]),
    ('t_view_then_write', lambda m, x, w: (lambda y, v: [v.t_(), v.mul_(w), y][2])(
        *(lambda y: (y, y[1:]))(x * 1)), [B, R(4, 2)]),
    ('select_scatter', lambda m, x, s: m.select_scatter(x, s, 1, -1), [B, R(3)]),
    ('slice_scatter', lambda m, x, s: m.slice_scatter(x, s, 1, 0, 4, 2), [B, R(3, 2)]),
    ('slice_scatter_default', lambda m, x, s: x.slice_scatter(s, start=1), [B, R(2, 4)]),
    ('diagonal_scatter', lambda m, x, s: m.diagonal_scatter(x, s, 1), [B, R(3)]),
    ('diagonal_scatter_square', lambda m, x, s: m.diagonal_scatter(x, s) ** 2, [B, R(3)]),
    # nonlinear compositions: second derivatives with respect to the inputs are nonzero
    ('flip_times', lambda m, x: x.flip(0) * x, [B]),
    ('cat_square', lambda m, x, y: m.cat([x, y]) ** 2, [B, R(1, 4)]),
    ('split_product', lambda m, x: (lambda a, b: a * b)(*x.split(2)), [R(4, 3)]),
    ('unbind_product', lambda m, x: (lambda a, b, c: a * b * c)(*x.unbind(1)), [R(2, 3)]),
    ('view_chain', lambda m, x: x.t()[1:].unsqueeze(0).expand(2, 3, 3) * x.sum(), [B]),
    ('diagonal_square', lambda m, x: x.diagonal(1).pow(2), [B]),
    ('pad_reflect_square', lambda m, x: F(m)(x, (1, 1), mode='reflect') ** 3, [A]),
]


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_against_torch(case):
    check_case(case[1], case[2], **(case[3] if len(case) > 3 else {}))


INDEX_HELPERS = [
    ('tril_indices', lambda m: m.tril_indices(3, 4, 1)),
    ('triu_indices', lambda m: m.triu_indices(4, 3, -1)),
    ('argwhere', lambda m: m.argwhere(m.tensor([[0, 1], [2, 0]]))),
]


@pytest.mark.parametrize('name,fn', INDEX_HELPERS, ids=[h[0] for h in INDEX_HELPERS])
def test_index_helpers(name, fn):
    lt, tt = fn(lg), fn(torch)
    assert str(lt.dtype).split('.')[-1] == str(tt.dtype).split('.')[-1]
    np.testing.assert_array_equal(lt.numpy(), tt.numpy())


def test_meshgrid_warns_without_indexing():
    for m in (lg, torch):
        with pytest.warns(UserWarning, match='meshgrid: in an upcoming release, it will be required to pass the '
                                              'indexing argument'):
            a, b = m.meshgrid(m.arange(3), m.arange(2))
        assert tuple(a.shape) == (3, 2)


# ---- views share storage and the version counter --------------------------------------------------

VIEWS = [
    ('view', lambda t: t.view(12)),
    ('reshape', lambda t: t.reshape(2, 6)),
    ('transpose', lambda t: t.transpose(0, 1)),
    ('permute', lambda t: t.permute(1, 0)),
    ('unsqueeze', lambda t: t.unsqueeze(0)),
    ('squeeze', lambda t: t.unsqueeze(1).squeeze(1)),
    ('select', lambda t: t[1]),
    ('select_0d', lambda t: t[1, 2]),
    ('unbind_0d', lambda t: t[0].unbind()[3]),
    ('slice', lambda t: t[:, 1:3]),
    ('narrow', lambda t: t.narrow(1, 1, 2)),
    ('diagonal', lambda t: t.diagonal()),
    ('movedim', lambda t: t.movedim(0, 1)),
    ('unflatten', lambda t: t.unflatten(1, (2, 2))),
    ('flatten', lambda t: t.flatten()),
    ('unbind', lambda t: t.unbind(1)[2]),
    ('split', lambda t: t.split(2, 1)[1]),
    ('chunk', lambda t: t.chunk(2)[0]),
    ('t', lambda t: t.t()),
    ('unfold', lambda t: t.unfold(1, 2, 2)),
    ('alias', lambda t: t[...]),
]


@pytest.mark.parametrize('name,make', VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_storage_and_version(name, make):
    results = []
    for m in (lg, torch):
        base = m.arange(12.).reshape(3, 4)
        v = make(base)
        v.mul_(10)          # writes through the view show in the base
        base.add_(1)        # and writes to the base show in the view
        results.append((base.numpy().copy(), v.numpy().copy(), base._version, v._version, v._base is base))
    (lb, lv, lbv, lvv, lbase), (tb, tv, tbv, tvv, tbase) = results
    np.testing.assert_array_equal(lb, tb)
    np.testing.assert_array_equal(lv, tv)
    assert (lbv, lvv) == (tbv, tvv)
    assert lbase == tbase


def test_inplace_shape_ops_bump_version_and_keep_storage():
    for m in (lg, torch):
        base = m.arange(6.).reshape(2, 3).clone()
        v = base[1]
        v.unsqueeze_(0)
        v.mul_(10)
        assert tuple(v.shape) == (1, 3) and v._version == 2 and v._base is base
        np.testing.assert_array_equal(base.numpy(), [[0, 1, 2], [30, 40, 50]])
        with pytest.raises(RuntimeError, match='a leaf Variable that requires grad is being used in an in-place'):
            m.ones(2, requires_grad=True).unsqueeze_(0)


def test_reshape_copy_is_not_a_view():
    for m in (lg, torch):
        base = m.arange(6.).reshape(2, 3)
        r = base.t().reshape(6)
        r.mul_(0)
        assert base.sum().item() == 15
        assert r._base is None


def test_expanded_view_refuses_inplace():
    for m in (lg, torch):
        x = m.ones(3, 1)
        e = x.expand(3, 4)
        with pytest.raises(RuntimeError, match='more than one element of the written-to tensor'):
            e.mul_(2)


@pytest.mark.parametrize('op', ['unbind', 'split', 'chunk', 'split_with_sizes', 'view_of_unbind', 'iterate'])
def test_multi_output_views_refuse_inplace(op):
    msgs = []
    for m in (lg, torch):
        x = m.randn(4, 2, requires_grad=True).clone()
        outs = {'unbind': lambda: x.unbind(0), 'split': lambda: x.split(2), 'chunk': lambda: x.chunk(2),
                'split_with_sizes': lambda: x.split([1, 3]), 'view_of_unbind': lambda: [v[1:] for v in x.unbind(0)],
                'iterate': lambda: list(x)}[op]()
        with pytest.raises(RuntimeError) as info:
            outs[1].mul_(2)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    with lg.no_grad():  # without recording nothing can go wrong, so it is allowed
        lg.ones(4, 2).unbind(0)[1].mul_(2)


# ---- bad input: torch's exception type and message ------------------------------------------------

X = np.arange(24.).reshape(4, 3, 2)


ERRORS = [
    ('squeeze_none', lambda m, x: x.squeeze(None)),  # (no overload of PyTorch's takes None for dim)
    ('squeeze_function_none', lambda m, x: m.squeeze(x, None)),
    ('squeeze_keyword_none', lambda m, x: x.squeeze(dim=None)),
    ('squeeze__none', lambda m, x: x.clone().squeeze_(None)),
    ('squeeze_copy_none', lambda m, x: m.squeeze_copy(x, None)),
    ('movedim_len', lambda m, x: x.movedim((0, 1), (1,))),
    ('movedim_repeat', lambda m, x: x.movedim((0, 0), (1, 2))),
    ('movedim_repeat_dst', lambda m, x: x.movedim((0, 1), (1, 1))),
    ('unflatten', lambda m, x: x.unflatten(1, (2, 2))),
    ('split_sizes', lambda m, x: x.split([1, 2])),
    ('split_zero', lambda m, x: x.split(0)),
    ('split_negative', lambda m, x: x.split(-1)),
    ('chunk_zero', lambda m, x: x.chunk(0)),
    ('cat_empty', lambda m, x: m.cat([])),
    ('cat_size', lambda m, x: m.cat([x, m.zeros(4, 2, 2, dtype=m.float64)])),
    ('cat_ndim', lambda m, x: m.cat([x, m.zeros(4, 3, dtype=m.float64)])),
    ('cat_dim', lambda m, x: m.cat([x, x], 3)),
    ('cat_tensor', lambda m, x: m.cat(x)),
    ('cat_0d', lambda m, x: m.cat([x.sum(), x.sum()])),
    ('cat_0d_later', lambda m, x: m.cat([x, x[0], x.sum()], dim=5)),  # named before the bad dim
    ('cat_0d_after_empty', lambda m, x: m.cat([m.zeros(0, dtype=m.float64), x.sum()])),
    ('stack_size', lambda m, x: m.stack([x, x[:2]])),
    ('stack_empty', lambda m, x: m.stack([])),
    ('stack_dim', lambda m, x: m.stack([x, x], 5)),
    ('repeat_few', lambda m, x: x.repeat(2, 2)),
    ('repeat_negative', lambda m, x: x.repeat(2, 2, -1)),
    ('flip_duplicate', lambda m, x: x.flip(0, 0)),
    ('flip_range', lambda m, x: x.flip(3)),
    ('roll_mismatch', lambda m, x: x.roll((1, 2), (0,))),
    ('roll_no_dims', lambda m, x: x.roll((1, 2))),
    ('narrow_past_end', lambda m, x: x.narrow(0, 3, 2)),
    ('narrow_negative_length', lambda m, x: x.narrow(0, 1, -1)),
    ('tril_1d', lambda m, x: x[0, 0].tril()),
    ('diag_3d', lambda m, x: x.diag()),
    ('diagonal_same_dims', lambda m, x: x.diagonal(0, 1, 1)),
    ('squeeze_range', lambda m, x: x.squeeze(3)),
    ('unsqueeze_range', lambda m, x: x.unsqueeze(4)),
    ('transpose_range', lambda m, x: x.transpose(0, 3)),
    ('permute_length', lambda m, x: x.permute(0, 1)),
    ('permute_duplicate', lambda m, x: x.permute(0, 1, 1)),
    ('view_bad', lambda m, x: x.view(5, -1)),
    ('view_noncontiguous', lambda m, x: x.transpose(0, 1).view(-1)),
    ('expand_bad', lambda m, x: x.expand(4, 4, 2)),
    ('unbind_0d', lambda m, x: x.sum().unbind()),
    ('repeat_interleave_size', lambda m, x: x.repeat_interleave(m.tensor([1, 2]), dim=0)),
    ('repeat_interleave_negative', lambda m, x: x.repeat_interleave(-1)),
    ('unfold_too_big', lambda m, x: x.unfold(1, 4, 1)),
    ('unfold_step_zero', lambda m, x: x.unfold(1, 2, 0)),
    ('unfold_negative', lambda m, x: x.unfold(1, -1, 1)),
    ('meshgrid_dtype', lambda m, x: m.meshgrid(x[0, 0], x[0, 0].float(), indexing='ij')),
    ('meshgrid_empty', lambda m, x: m.meshgrid([], indexing='ij')),
    ('select_scatter_size', lambda m, x: m.select_scatter(x, m.zeros(3, dtype=m.float64), 0, 1)),
    ('select_scatter_index', lambda m, x: m.select_scatter(x, m.zeros(3, 2, dtype=m.float64), 0, 5)),
    ('slice_scatter_size', lambda m, x: m.slice_scatter(x, m.zeros(2, 3, 2, dtype=m.float64), 0, 0, 1)),
    ('flatten_order', lambda m, x: x.flatten(2, 1)),
    ('reshape_negative', lambda m, x: x.reshape(-2, 12)),
    ('reshape_two_inferred', lambda m, x: x.reshape(-1, -1)),
    ('tensor_split_zero', lambda m, x: x.tensor_split(0)),
    ('hsplit_indivisible', lambda m, x: m.hsplit(x, 4)),
    ('hsplit_zero', lambda m, x: x.hsplit(0)),
    ('hsplit_0d', lambda m, x: m.hsplit(x.sum(), 2)),
    ('vsplit_indivisible', lambda m, x: m.vsplit(x, 3)),
    ('vsplit_1d', lambda m, x: m.vsplit(x[0, 0], 2)),
    ('dsplit_2d', lambda m, x: m.dsplit(x[0], 2)),
    ('dsplit_indivisible', lambda m, x: x.dsplit(3)),
    ('diag_embed_same_dims', lambda m, x: m.diag_embed(x, 0, 1, 1)),
    ('chunk_negative', lambda m, x: x.chunk(-1)),
    ('rot90_same_dims', lambda m, x: x.rot90(1, (0, 0))),
    ('tile_negative', lambda m, x: x.tile((-1,))),
    ('H_3d', lambda m, x: x.H),
    ('mH_1d', lambda m, x: x[0, 0].mH),
    ('adjoint_1d', lambda m, x: x[0, 0].adjoint()),
    ('pad_odd', lambda m, x: F(m)(x, (1,))),
    ('pad_too_long', lambda m, x: F(m)(x, (1, 1) * 4)),
    ('pad_reflect_too_big', lambda m, x: F(m)(x, (2, 2), mode='reflect')),
    ('pad_reflect_4d', lambda m, x: F(m)(x[None], (1, 1), mode='reflect')),
    ('pad_reflect_1d', lambda m, x: F(m)(x[0, 0], (1, 1), mode='reflect')),
    ('pad_circular_wrap', lambda m, x: F(m)(x, (3, 3), mode='circular')),
    ('pad_mode', lambda m, x: F(m)(x, (1, 1), mode='foo')),
    ('pad_negative_size', lambda m, x: F(m)(x, (-2, -1))),
    ('pad_reflect_value', lambda m, x: F(m)(x, (1, 1), mode='reflect', value=1.)),
]


@pytest.mark.parametrize('name,fn', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_like_torch(name, fn):
    assert same_message(*raises_like(lambda: fn(lg, lg.tensor(X)), lambda: fn(torch, torch.tensor(X))))


@pytest.mark.parametrize('numel,shape', [
    (12, (3, 4)), (12, (-1,)), (12, (2, -1, 3)), (12, (12, 1, -1)), (0, (3, 0)), (0, (-1,)), (0, (2, -1)), (1, ()),
    (12, (0, -1)), (0, (0, -1)), (0, (-1, 0, 3)), (12, (-1, -1)), (12, (5, -1)), (12, (-2, -6)), (12, (3, 5)),
    (12, (-3, -4)), (12, (-2, 3, -1)),
])
def test_view_and_reshape_shapes_like_torch(numel, shape):
    """The inferred size, or torch's error, for every kind of target shape (the common ones
    take a shorter path than the ones that fail)."""
    for op in ('view', 'reshape'):
        results = []
        for T in (lg, torch):
            x = T.arange(float(numel), requires_grad=True) * 1
            try:
                y = getattr(x, op)(*shape) if shape else getattr(x, op)(())
                results.append((tuple(y.shape), y.grad_fn.name()))
            except RuntimeError as e:
                results.append(str(e))
        assert results[0] == results[1], (op, results)


def test_broadcast_tensors_and_shapes():
    for shapes in [((2,), (2, 1)), ((3, 1, 4), (5, 1), ()), ((0, 1), (3,))]:
        data = [np.random.default_rng(0).standard_normal(s) for s in shapes]
        mine = lg.broadcast_tensors(*[lg.tensor(d, requires_grad=True) for d in data])
        theirs = torch.broadcast_tensors(*[torch.tensor(d, requires_grad=True) for d in data])
        for m, t in zip(mine, theirs):
            assert m.shape == t.shape and m.grad_fn.name() == t.grad_fn.name()
            np.testing.assert_array_equal(m.detach().numpy(), t.detach().numpy())
        assert tuple(lg.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    assert type(lg.broadcast_shapes(2, (3, 1))) is lg.Size and lg.broadcast_shapes(2, (3, 1)) == (3, 2)
    for fn in [lambda T: T.broadcast_tensors(T.ones(2), T.ones(3)), lambda T: T.broadcast_shapes((2,), (3,)),
               lambda T: T.broadcast_tensors(T.ones(2), 1.0)]:
        lg_msg, torch_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
        assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


@pytest.mark.parametrize('name', ['tril_indices', 'triu_indices'])
@pytest.mark.parametrize('args,kwargs', [((3, 3), {}), ((3, 4, 1), {}), ((4, 3, -1), dict(dtype='int32')),
                                         ((3, 3), dict(dtype='float32')), ((3, 3), dict(dtype='bool')),
                                         ((-1, 3), {}), ((3, -2), {}), ((0, 0), {}), ((3, 3), dict(device='cpu'))])
def test_triangle_indices_dtype_and_errors_as_torch(name, args, kwargs):
    """dtype= is honoured (int32/int64; others refused with torch's error), sizes checked."""
    results = []
    for lib in (lg, torch):
        kw = {k: getattr(lib, v) if k == 'dtype' else v for k, v in kwargs.items()}
        try:
            r = getattr(lib, name)(*args, **kw)
            results.append((str(r.dtype).split('.')[-1], r.tolist()))
        except Exception as e:
            results.append((type(e).__name__, str(e).replace('leafgrad', 'torch')))
    assert results[0] == results[1]


@pytest.mark.parametrize('call', [
    lambda m, x: m.repeat_interleave(x, 2, output_size=5), lambda m, x: m.repeat_interleave(x, 2, output_size=8),
    lambda m, x: m.repeat_interleave(x, 2, dim=0, output_size=5),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=1, output_size=4),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=1, output_size=3),
    lambda m, x: m.repeat_interleave(m.tensor([1, 2]), output_size=4),
    lambda m, x: m.repeat_interleave(m.tensor([1, 2]), output_size=3),
    lambda m, x: x.repeat_interleave(m.tensor([2]), dim=0, output_size=3)])
def test_repeat_interleave_output_size_is_checked_as_torch(call):
    results = []
    for m in (lg, torch):
        try:
            results.append(call(m, m.tensor([[1, 2], [3, 4]])).tolist())
        except RuntimeError as e:
            results.append(str(e))
    assert results[0] == results[1]
