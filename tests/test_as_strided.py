"""as_strided against torch: values, strides, node names, gradients (overlapping outputs add,
an input that reads a storage element twice shares its gradient), second derivatives, finite
differences, writes through the view, errors."""
import numpy as np
import pytest

from oracle import raises_like, same_message, torch
from optable import check_case
import leafgrad as lg


def R(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CASES = [
    ('windows', lambda m, x: m.as_strided(x * 1, (3, 3), (1, 1)), [R(6)]),
    ('overlapping_rows', lambda m, x: (x * 1).as_strided((3, 4), (2, 1), 1), [R(12)]),
    ('broadcast_stride_zero', lambda m, x: (x * 1).as_strided((2, 3), (0, 2)), [R(8)]),
    ('of_a_view_offset', lambda m, x: (x * 1)[2:].as_strided((2, 2), (3, 1)), [R(10)]),
    ('of_a_transpose', lambda m, x: (x * 1).t().as_strided((2, 3), (1, 4), 1), [R(4, 3)]),
    ('leaf', lambda m, x: x.as_strided((2, 2), (3, 1), 2), [R(9)]),
    ('then_inplace', lambda m, x: (lambda b: [b.as_strided((2,), (2,), 1).mul_(3), b][1])(x * 1), [R(5)]),
]


@pytest.mark.parametrize('fn,arrays', [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_against_torch(fn, arrays):
    check_case(fn, arrays)


def test_strides_and_sharing_as_torch():
    for m in (lg, torch):
        x = m.arange(12.)
        v = x.as_strided((2, 3), (4, 2), 1)
        assert v.stride() == (4, 2) and v.storage_offset() == 1 and v._base is x
        v.add_(1)  # (a write reaches the storage)
        assert tuple(x.as_strided((0, 3), (1, 1), 12).shape) == (0, 3)
    np.testing.assert_array_equal(lg.arange(12.).as_strided((2, 3), (4, 2), 1).numpy(),
                                  torch.arange(12.).as_strided((2, 3), (4, 2), 1).numpy())


ERRORS = [
    lambda m: m.arange(12.).as_strided((2, 3), (1,)),
    lambda m: m.arange(12.).as_strided((2, 3), (-1, 1)),
    lambda m: m.arange(12.).as_strided((4, 4), (3, 1)),
    lambda m: m.arange(12.).as_strided((2,), (1,), 20),
    lambda m: m.arange(12.).as_strided((2,), (1,), -1),
    lambda m: m.arange(12.).as_strided((-2,), (1,)),
    lambda m: m.arange(12.).as_strided(2, 1),
    lambda m: m.arange(12.).as_strided((2.,), (1,)),
    lambda m: m.zeros(6).as_strided((2, 2), (0, 1)).add_(1),
]


@pytest.mark.parametrize('call', ERRORS)
def test_errors_as_torch(call):
    assert same_message(*raises_like(lambda: call(lg), lambda: call(torch)))


def test_an_input_reading_a_storage_element_twice_shares_its_gradient():
    """(PyTorch's second derivative here is NaN where leafgrad's is 0: first order compared.)"""
    grads = []
    for m in (lg, torch):
        y = m.tensor(R(8), requires_grad=True)
        z = (y * 1)[:4].expand(2, 4).as_strided((3,), (2,))
        (z * m.tensor([1., 2., 3.], dtype=m.float64)).sum().backward()
        grads.append((z.grad_fn.name(), y.grad.tolist()))
    assert grads[0] == grads[1]
