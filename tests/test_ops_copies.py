"""The view ops' copying forms (view_copy, permute_copy ...), narrow_copy and the unsafe splits,
against torch: values, node names, first and second derivatives, finite differences; results
that are no views; out=; errors."""
import numpy as np
import pytest

from oracle import lg, raises_like, same_message, torch
from optable import check_case


def R(*shape, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape)


A, B = R(2, 3, 4), R(3, 4)

CASES = [
    ('view_copy', lambda m, x: m.view_copy(x, (6, 4)) ** 2, [A]),
    ('view_copy_infer', lambda m, x: m.view_copy(x, [-1]), [A]),
    ('permute_copy', lambda m, x: m.permute_copy(x, (2, 0, 1)) ** 2, [A]),
    ('transpose_copy', lambda m, x: m.transpose_copy(x, 0, -1), [A]),
    ('t_copy', lambda m, x: m.t_copy(x) ** 2, [B]),
    ('squeeze_copy', lambda m, x: m.squeeze_copy(x), [R(1, 3, 1)]),
    ('squeeze_copy_dim', lambda m, x: m.squeeze_copy(x, 0), [R(1, 3, 1)]),
    ('squeeze_copy_dims', lambda m, x: m.squeeze_copy(x, (0, 2)), [R(1, 3, 1)]),
    ('unsqueeze_copy', lambda m, x: m.unsqueeze_copy(x, 1), [B]),
    ('expand_copy', lambda m, x: m.expand_copy(x, (2, 3, 4)) ** 2, [R(3, 1)]),
    ('diagonal_copy', lambda m, x: m.diagonal_copy(x, 1, 1, 2), [A]),
    ('diagonal_copy_default', lambda m, x: m.diagonal_copy(x), [B]),
    ('select_copy', lambda m, x: m.select_copy(x, 1, -1), [A]),
    ('slice_copy', lambda m, x: m.slice_copy(x, 2, 1, None, 2), [A]),
    ('slice_copy_default', lambda m, x: m.slice_copy(x), [A]),
    ('split_copy', lambda m, x: m.split_copy(x, 3, 2), [A]),
    ('split_with_sizes_copy', lambda m, x: m.split_with_sizes_copy(x, [1, 3], -1), [A]),
    ('unbind_copy', lambda m, x: m.unbind_copy(x, 1), [A]),
    ('unfold_copy', lambda m, x: m.unfold_copy(x, 2, 2, 1) ** 2, [A]),
    ('alias_copy', lambda m, x: m.alias_copy(x), [B]),
    ('as_strided_copy', lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2), 1), [B]),
    ('narrow_copy', lambda m, x: m.narrow_copy(x, 2, 1, 2) ** 2, [A]),
    ('narrow_copy_method', lambda m, x: x.narrow_copy(0, 1, 1), [A]),
    ('unsafe_split', lambda m, x: m.unsafe_split(x, 2, 2), [A]),
    ('unsafe_split_method', lambda m, x: x.unsafe_split(2, 1), [A]),
    ('unsafe_split_with_sizes', lambda m, x: m.unsafe_split_with_sizes(x, [2, 1], 1), [A]),
    ('unsafe_split_with_sizes_method', lambda m, x: x.unsafe_split_with_sizes([1, 1], 0), [A]),
    ('unsafe_chunk', lambda m, x: m.unsafe_chunk(x, 3, -1), [A]),
    ('unsafe_chunk_method', lambda m, x: x.unsafe_chunk(2), [A]),
    ('split_product', lambda m, x: (lambda a, b: a * b)(*m.unsafe_split(x, 2)), [R(4, 3)]),
]


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_against_torch(case):
    check_case(case[1], case[2])


COPIES = [
    ('view_copy', lambda m, x: m.view_copy(x, (12, 2))),
    ('permute_copy', lambda m, x: m.permute_copy(x, (2, 0, 1))),
    ('expand_copy', lambda m, x: m.expand_copy(x[:, :1], (2, 5, 4))),
    ('split_copy', lambda m, x: m.split_copy(x, 2, 2)[1]),
    ('unbind_copy', lambda m, x: m.unbind_copy(x)[0]),
    ('narrow_copy', lambda m, x: m.narrow_copy(x, 1, 1, 1)),
    ('alias_copy', lambda m, x: m.alias_copy(x)),
    ('view_as_real_copy', lambda m, x: m.view_as_real_copy(x.to(m.complex64))),
]


@pytest.mark.parametrize('name,fn', COPIES, ids=[c[0] for c in COPIES])
def test_results_are_tensors_of_their_own(name, fn):
    """No view of the input: contiguous, no base, writing it leaves the input and its version
    as they were."""
    for m in (lg, torch):
        x = m.tensor(A)
        y = fn(m, x)
        assert y._base is None and y.is_contiguous(), m
        y.add_(1)
        assert x._version == 0 and np.array_equal(x.numpy(), A), m


def test_unsafe_splits_share_memory_but_are_no_views():
    for m in (lg, torch):
        x = m.tensor(A)
        for piece in (m.unsafe_split(x, 2, 2)[0], m.unsafe_chunk(x, 2, 1)[0], x.unsafe_split_with_sizes([1, 2], 1)[1]):
            assert piece._base is None and not piece.is_contiguous()
        m.unsafe_split(x, 2, 2)[0].zero_()  # (no error: not a view of several outputs)
        assert float(x[0, 0, 0]) == 0 and x._version == 0


def test_unsafe_split_in_place_with_grad():
    """An in-place change of one piece is no error (split's pieces refuse it)."""
    grads = []
    for m in (lg, torch):
        x = m.tensor(A, requires_grad=True)
        a, b = m.unsafe_split(x * 1, 2, 2)
        a.mul_(2)
        (a.sum() + (b * b).sum()).backward()
        grads.append(x.grad.numpy())
        assert type(a.grad_fn).__name__ == 'MulBackward0'
    np.testing.assert_allclose(grads[0], grads[1])


def test_detach_copy_has_no_derivative():
    for m in (lg, torch):
        x = m.tensor(B, requires_grad=True)
        y = m.detach_copy(x)
        assert y.requires_grad and type(y.grad_fn).__name__ == 'NotImplemented'
        assert np.array_equal(y.detach().numpy(), B)
    msg = raises_like(lambda: lg.detach_copy(lg.tensor(B, requires_grad=True)).sum().backward(),
                      lambda: torch.detach_copy(torch.tensor(B, requires_grad=True)).sum().backward())
    assert same_message(*msg)


def test_view_copy_dtype_and_view_as_complex_copy():
    for m in (lg, torch):
        y = m.view_copy(m.tensor(B, requires_grad=True), m.int64)
        assert y.dtype == m.int64 and y.grad_fn is None
        z = m.view_as_complex_copy(m.tensor(B[:, :2]))
        assert z.dtype == m.complex128 and z._base is None
    np.testing.assert_array_equal(lg.view_copy(lg.tensor(B), lg.int64).numpy(),
                                  torch.view_copy(torch.tensor(B), torch.int64).numpy())
    msg = raises_like(lambda: lg.view_as_complex_copy(lg.tensor(B[:, :2], requires_grad=True)),
                      lambda: torch.view_as_complex_copy(torch.tensor(B[:, :2], requires_grad=True)))
    assert same_message(*msg)


def test_narrow_copy_of_a_negative_start():
    """The values as torch's (its derivative for a negative start is wrong: leafgrad's is
    narrow's)."""
    for start in (-1, -3):
        np.testing.assert_array_equal(lg.narrow_copy(lg.tensor(A), 1, start, 1).numpy(),
                                      torch.narrow_copy(torch.tensor(A), 1, start, 1).numpy())


def test_out_is_written():
    for m in (lg, torch):
        out = m.empty(0)
        r = m.permute_copy(m.arange(6.0).reshape(2, 3), (1, 0), out=out)
        assert r is out and out.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
        outs = [m.empty(2), m.empty(2)]
        m.split_copy(m.arange(4.0), 2, out=outs)
        assert outs[1].tolist() == [2.0, 3.0]


ERRORS = [
    ('view_copy_size', lambda m: m.view_copy(m.ones(2, 3), (5,))),
    ('view_copy_out_dtype', lambda m: m.view_copy(m.ones(2, 3), (6,), out=m.empty(6, dtype=m.float64))),
    ('split_copy_out_count', lambda m: m.split_copy(m.ones(4), 2, out=[m.empty(0)])),
    ('narrow_copy_range', lambda m: m.narrow_copy(m.ones(4), 0, 3, 2)),
    ('select_copy_index', lambda m: m.select_copy(m.ones(2, 3), 1, 3)),
    ('unsafe_chunk_zero', lambda m: m.unsafe_chunk(m.ones(4), 0)),
    ('unsafe_split_sizes', lambda m: m.unsafe_split_with_sizes(m.ones(4), [1, 2])),
    ('unsafe_split_list', lambda m: m.unsafe_split(m.ones(4), [1, 3])),
    ('split_copy_list', lambda m: m.split_copy(m.ones(4), [1, 3])),
    ('narrow_copy_negative_length', lambda m: m.narrow_copy(m.ones(4), 0, -1, -1)),
    ('narrow_copy_start', lambda m: m.narrow_copy(m.ones(4), 0, 5, 0)),
    ('narrow_copy_dim', lambda m: m.narrow_copy(m.ones(4), 1, 0, 1)),
    ('narrow_copy_0d', lambda m: m.narrow_copy(m.tensor(1.0), 0, 0, 1)),
    ('transpose_copy_dim', lambda m: m.transpose_copy(m.ones(2, 3), 0, 2)),
]


@pytest.mark.parametrize('name,fn', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_like_torch(name, fn):
    ours, theirs = raises_like(lambda: fn(lg), lambda: fn(torch))
    assert same_message(ours, theirs), (ours, theirs)
