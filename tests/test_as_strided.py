"""as_strided against torch: values, strides, node names, gradients (overlapping outputs add,
an input that reads a storage element twice shares its gradient), second derivatives, finite
differences, writes through the view, errors."""
import warnings

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


def _outcome(fn):
    """What ``fn()`` gives, comparable across the libraries: its type and message where it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return fn()
    except Exception as e:  # noqa: BLE001 (the type and message are compared)
        return type(e).__name__, str(e).replace('leafgrad', 'torch')


def _tensor_state(t):
    return (t.tolist(), tuple(t.shape), t.stride(), t.storage_offset(), t._version, t._base is None,
            None if t.grad_fn is None else t.grad_fn.name())


# ---- the storage offset's type (PyTorch's parser, positions counted as it counts them) -------------

@pytest.mark.parametrize('call', [
    lambda m: m.arange(12.).as_strided((2,), (1,), 'a'),
    lambda m: m.arange(12.).as_strided((2,), (1,), 2.0),
    lambda m: m.arange(12.).as_strided((2,), (1,), True),
    lambda m: m.as_strided(m.arange(12.), (2,), (1,), 'a'),
    lambda m: m.as_strided(m.arange(12.), (2,), 1),
])
def test_as_strided_argument_types_as_torch(call):
    assert _outcome(lambda: call(lg)) == _outcome(lambda: call(torch))


# ---- as_strided_: the tensor becomes its as_strided view (AsStridedBackward1) ----------------------

AS_STRIDED_ = [
    lambda m: (lambda x: (_tensor_state(x.as_strided_((2, 3), (3, 1), 1)), x.tolist()))(m.arange(12.)),
    lambda m: (lambda x: (lambda v: (_tensor_state(v.as_strided_((2, 2), (1, 2))), v._base is x, x._version))(
        x[2:]))(m.arange(12.)),
    lambda m: _tensor_state(m.as_strided_(m.arange(12.), (2, 2), (1, 2))),
    lambda m: (lambda x: (m.as_strided_(x, size=(2,), stride=(1,), storage_offset=3) is x, _tensor_state(x)))(
        m.arange(12.)),
    lambda m: (lambda x: (x.as_strided_((2,), (1,), 3).tolist(), x.as_strided_((4,), (1,), 0).tolist()))(
        m.arange(12.)),
    lambda m: (lambda x: (lambda y: (y.as_strided_((2,), (1,)) is y, y._base is x, tuple(y.shape)))(x.view(3, 4)))(
        m.arange(12.)),
    lambda m: _tensor_state(m.arange(12.).as_strided_((2, 2), (0, 1))),
    lambda m: m.arange(12.).as_strided_((2, 2), (0, 1)).add_(1),
    lambda m: m.arange(12.).requires_grad_().as_strided_((2, 2), (1, 2)),
    lambda m: m.arange(12.).as_strided_((20,), (1,)),
    lambda m: m.arange(12.).as_strided_(2, (1,)),
    lambda m: m.arange(12.).as_strided_((2,), (1,), 'a'),
    lambda m: m.as_strided_(m.arange(12.), (2,), 1),
    lambda m: m.as_strided_(m.arange(12.), (2,), (1,), 2.0),
    lambda m: m.arange(12.).as_strided_((2,), (-1,)),
    lambda m: m.as_strided_(1, (2,), (1,)),
    lambda m: m.as_strided_(m.arange(12.), (2,)),
]


@pytest.mark.parametrize('call', AS_STRIDED_)
def test_as_strided__as_torch(call):
    assert _outcome(lambda: call(lg)) == _outcome(lambda: call(torch))


@pytest.mark.parametrize('make', [
    lambda a: a * 2,
    lambda a: (a * 2)[1:],  # (a view: its recipe grows by the as_strided step)
])
def test_as_strided__gradients_as_torch(make):
    results = []
    for m in (lg, torch):
        a = m.tensor(R(12), requires_grad=True)
        b = make(a)
        b.as_strided_((2, 2), (1, 2), 1)
        (b * m.tensor([[1., 2.], [3., 4.]], dtype=m.float64)).sum().backward()
        results.append((b.grad_fn.name(), b.tolist(), a.grad.tolist()))
    assert results[0] == results[1]


def test_as_strided__then_written_gradients_as_torch():
    results = []
    for m in (lg, torch):
        a = m.tensor(R(6), requires_grad=True)
        b = a * 2
        b.as_strided_((3,), (2,), 1).mul_(3)
        (b * b).sum().backward()
        results.append((b.grad_fn.name(), b.tolist(), a.grad.tolist()))
    assert results[0] == results[1]


def test_as_strided__gradcheck_and_gradgradcheck():
    x = lg.tensor(R(8), requires_grad=True)
    f = lambda a: (a * 1).as_strided_((2, 2), (1, 2), 1) ** 2  # noqa: E731
    assert lg.autograd.gradcheck(f, (x,)) and lg.autograd.gradgradcheck(f, (x,))


# ---- as_strided_scatter: a new tensor of input's layout with src written into its as_strided view --

AS_STRIDED_SCATTER = [
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2, 2), (2, 2), (0, 1)),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(3), (2,), (1,)),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (2,), (1,), 5),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(4), m.ones(2, dtype=m.float64), (2,), (1,))),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(4).int(), m.tensor([1.5, 2.]), (2,), (1,))),
    lambda m: _tensor_state(m.as_strided_scatter(m.arange(12.).reshape(4, 3).t(), m.ones(2), (2,), (1,))),
    lambda m: m.as_strided_scatter(m.zeros(4, 3).t().requires_grad_(), m.ones(2), (2,), (1,)),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(6)[2:], m.ones(2), (2,), (1,))),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(6)[2:], m.ones(2), (2,), (1,), 3)),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(6)[2:], m.ones(2), (2,), (1,), 1)),
    lambda m: m.as_strided_scatter(m.zeros(6)[2:], m.ones(2), (2,), (1,), 5),
    lambda m: _tensor_state(m.zeros(4).as_strided_scatter(m.ones(2), (2,), (1,))),
    lambda m: m.as_strided_scatter(m.zeros(4), 1, (2,), (1,)),
    lambda m: m.as_strided_scatter(1, m.zeros(4), (2,), (1,)),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), 2, (1,)),
    lambda m: m.zeros(4).as_strided_scatter(m.ones(2), (2,), 1),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (2,), (1,), out=m.empty(4)),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (2,), (1,), 2.0),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (2.,), (1,)),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(4), m.ones(()), (), ())),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(4), m.ones(1).expand(2), (2,), (1,))),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (2,), (1, 2)),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (2,), (-1,)),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (-2,), (1,)),
    lambda m: m.as_strided_scatter(m.zeros(4), m.ones(2), (2,), (1,), -1),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(4), m.ones(0), (0,), (1,), 9)),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(4), m.ones(2), size=(2,), stride=(1,))),
    lambda m: _tensor_state(m.as_strided_scatter(m.arange(12.).reshape(3, 4)[:, ::2], -m.ones(2), (2,), (1,), 0)),
    lambda m: _tensor_state(m.as_strided_scatter(m.arange(12.).reshape(3, 4)[1:, 1:], -m.ones(2), (2,), (1,), 5)),
    lambda m: _tensor_state(m.as_strided_scatter(m.arange(4.).expand(3, 4), -m.ones(2), (2,), (1,))),
    lambda m: _tensor_state(m.as_strided_scatter(m.arange(6.).reshape(2, 3).t()[1:], -m.ones(2), (2,), (1,))),
    lambda m: _tensor_state(m.as_strided_scatter(m.tensor(5.), -m.ones(()), (), ())),
    lambda m: (lambda x: (_tensor_state(m.as_strided_scatter(x, m.ones(2), (2,), (1,))), x.tolist()))(m.zeros(4)),
    lambda m: _tensor_state(m.as_strided_scatter(m.zeros(0), m.ones(0), (0,), (1,))),
]


@pytest.mark.parametrize('call', AS_STRIDED_SCATTER)
def test_as_strided_scatter_as_torch(call):
    assert _outcome(lambda: call(lg)) == _outcome(lambda: call(torch))


def test_as_strided_scatter_values_and_src_gradient_as_torch():
    """The node and the gradient of src as PyTorch's; input's gradient is the gradient where the
    output reads an input element (PyTorch's as_strided_scatter_backward gives input the
    complement, the elements written, and fails its own gradcheck: the README's differences)."""
    results = []
    for m in (lg, torch):
        x = m.tensor(R(3, 3), requires_grad=True)
        s = m.tensor(R(2, 2, seed=1), requires_grad=True)
        y = m.as_strided_scatter(x * 1, s, (2, 2), (1, 3), 1)
        (y * m.arange(1., 10., dtype=m.float64).reshape(3, 3)).sum().backward()
        results.append((y.grad_fn.name(), y.tolist(), s.grad.tolist(), x.grad.tolist()))
    assert results[0][:3] == results[1][:3]
    assert results[0][3] == [[1., 0., 0.], [4., 0., 0.], [7., 8., 9.]]


@pytest.mark.parametrize('args', [((3, 3), (2, 2), (1, 3), 1), ((9,), (3,), (3,), 0), ((2, 4), (2, 2), (4, 1), 2)])
def test_as_strided_scatter_gradcheck_and_gradgradcheck(args):
    shape, size, stride, offset = args
    x = lg.tensor(R(*shape), requires_grad=True)
    s = lg.tensor(R(*size, seed=1), requires_grad=True)
    f = lambda a, b: lg.as_strided_scatter(a * 1, b ** 2, size, stride, offset)  # noqa: E731
    assert lg.autograd.gradcheck(f, (x, s)) and lg.autograd.gradgradcheck(f, (x, s))
    t = torch.tensor(R(*size, seed=1), requires_grad=True)  # (PyTorch's: src's passes too)
    assert torch.autograd.gradcheck(lambda b: torch.as_strided_scatter(torch.tensor(R(*shape)), b ** 2, size, stride,
                                                                       offset), (t,))
