"""leafgrad.testing.assert_close against torch.testing.assert_close: same verdicts, same
exception types, same messages (with 'leafgrad' for 'torch')."""
import numpy as np
import pytest

from oracle import raises_like, same_message, torch
import leafgrad as lg
from leafgrad.testing import assert_close
from torch.testing import assert_close as t_assert_close

NAN = float('nan')
CASES = [
    (lambda m: (m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.1])), {}),
    (lambda m: (m.tensor([1., 2., 3.]), m.tensor([1., 2., 3.], dtype=m.float64)), {}),
    (lambda m: (m.tensor([1., 2., 3.]), m.tensor([1., 2.])), {}),
    (lambda m: (m.tensor([[1, 2], [3, 4]]), m.tensor([[1, 2], [3, 5]])), {}),
    (lambda m: (m.tensor(1.), m.tensor(1.5)), {}),
    (lambda m: (m.tensor([1., NAN]), m.tensor([1., NAN])), {}),
    (lambda m: (m.tensor([1., NAN]), m.tensor([1., NAN])), {'equal_nan': True}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.0000001])), {}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.1])), {'msg': 'custom'}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.1])), {'rtol': 0.1}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.1])), {'atol': 0.1}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.1])), {'rtol': 0.1, 'atol': 0}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.1])), {'rtol': 0.01, 'atol': 0}),
    (lambda m: (1.0, 1.0 + 1e-9), {}),
    (lambda m: (1, 2), {}),
    (lambda m: (1.0, 1.5), {}),
    (lambda m: ([1., 2.], [1., 2.5]), {}),
    (lambda m: ([m.tensor(1.)], [m.tensor(2.)]), {}),
    (lambda m: ([m.tensor(1.)], [m.tensor(1.), m.tensor(1.)]), {}),
    (lambda m: ({'a': m.tensor(1.)}, {'a': m.tensor(2.)}), {}),
    (lambda m: ({'a': [m.tensor(1.), m.tensor([1., 2.])]}, {'a': [m.tensor(1.), m.tensor([1., 3.])]}), {}),
    (lambda m: (m.tensor([True, False]), m.tensor([True, True])), {}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.]).requires_grad_()), {}),
    (lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64)), {'check_dtype': False}),
    (lambda m: (m.zeros(3, 3), m.eye(3)), {}),
    (lambda m: (m.tensor([0., 1.]), m.tensor([0., 0.])), {}),
    (lambda m: (m.tensor([1., 2.], dtype=m.float64), m.tensor([1., 2.0000001], dtype=m.float64)), {}),
    (lambda m: (m.tensor([1., 2.], dtype=m.float64), m.tensor([1., 2.000000001], dtype=m.float64)), {}),
    (lambda m: (m.tensor([1., 2.], dtype=m.float16), m.tensor([1., 2.001], dtype=m.float16)), {}),
    (lambda m: (m.tensor([1., 2.], dtype=m.float16), m.tensor([1., 2.01], dtype=m.float16)), {}),
    (lambda m: (m.tensor([1, 2]), m.tensor([1, 2])), {}),
    (lambda m: (np.array([1., 2.]), np.array([1., 3.])), {}),
    (lambda m: (m.tensor([1.]), np.array([1.])), {}),
    (lambda m: (np.array([1.]), m.tensor([1.])), {}),
    (lambda m: (m.tensor(1.), 1.0), {}),
    (lambda m: (np.float64(1.0), 1.0), {}),
    (lambda m: (np.array(1.0), 1.0), {}),
    (lambda m: (True, True), {}),
    (lambda m: (None, None), {}),
    (lambda m: ('a', 'a'), {}),
]


def _outcome(fn, m, args, kwargs):
    try:
        fn(*args(m), **kwargs)
    except Exception as e:  # noqa: BLE001  (the type is part of what is compared)
        return type(e), str(e).replace('leafgrad', 'torch')
    return None


@pytest.mark.parametrize('i', range(len(CASES)))
def test_same_verdict_and_message_as_torch(i):
    args, kwargs = CASES[i]
    assert _outcome(assert_close, lg, args, kwargs) == _outcome(t_assert_close, torch, args, kwargs)


def test_callable_msg():
    with pytest.raises(AssertionError, match='^wrapped: Tensor-likes are not close!'):
        assert_close(lg.tensor([1.0]), lg.tensor([2.0]), msg=lambda m: 'wrapped: ' + m)


# ---- make_tensor, assert_allclose, finfo of complex dtypes -------------------------------------------

MAKE = [
    lambda m: m.testing.make_tensor((2, 3), dtype=m.float32, device='cpu'),
    lambda m: m.testing.make_tensor(2, 3, dtype=m.float64, device='cpu', low=-1, high=1, requires_grad=True),
    lambda m: m.testing.make_tensor([4], dtype=m.int64, device='cpu'),
    lambda m: m.testing.make_tensor((4,), dtype=m.uint8, device='cpu', low=3),
    lambda m: m.testing.make_tensor((5,), dtype=m.bool, device='cpu'),
    lambda m: m.testing.make_tensor((2,), dtype=m.complex64, device='cpu'),
    lambda m: m.testing.make_tensor((2, 3), dtype=m.float32, device='cpu', noncontiguous=True),
    lambda m: m.testing.make_tensor((3,), dtype=m.int32, device='cpu', low=0, high=2, exclude_zero=True),
    lambda m: m.testing.make_tensor((3,), dtype=m.float32, device='cpu', low=-float('inf'), high=float('inf')),
    lambda m: m.testing.make_tensor((3,), dtype=m.float16, device='cpu', low=0.5, high=0.75),
    lambda m: m.testing.make_tensor((3,), dtype=m.bfloat16, device='cpu'),
    lambda m: m.testing.make_tensor((1, 3), dtype=m.float32, device='cpu', low=0.5, high=1.5, noncontiguous=True),
]


@pytest.mark.parametrize('make', MAKE)
def test_make_tensor_draws_torchs_numbers(make):
    """Seeded alike, make_tensor gives torch's values, dtype, strides and requires_grad."""
    lg.manual_seed(0)
    torch.manual_seed(0)
    a, b = make(lg), make(torch)
    assert str(a.dtype).replace('leafgrad', 'torch') == str(b.dtype)
    assert a.stride() == b.stride() and a.requires_grad == b.requires_grad
    to_np = (lambda t: t.detach().float().numpy()) if b.dtype == torch.bfloat16 else (lambda t: t.detach().numpy())
    np.testing.assert_array_equal(to_np(a), to_np(b))


MAKE_ERRORS = [
    lambda m: m.testing.make_tensor((3,), dtype=m.int32, device='cpu', requires_grad=True),
    lambda m: m.testing.make_tensor((3,), dtype=m.float32, device='cpu', low=2, high=1),
    lambda m: m.testing.make_tensor((3,), dtype=m.float32, device='cpu', low=float('nan')),
    lambda m: m.testing.make_tensor((3,), dtype=m.uint8, device='cpu', low=300, high=400),
    lambda m: m.testing.make_tensor((3,), dtype=m.float32, device='cpu', noncontiguous=True,
                                    memory_format=m.channels_last),
    lambda m: m.iinfo(m.complex64),
]


@pytest.mark.parametrize('call', MAKE_ERRORS)
def test_make_tensor_errors_as_torch(call):
    assert same_message(*raises_like(lambda: call(lg), lambda: call(torch)))


def test_finfo_of_a_complex_dtype_is_its_parts():
    for name in ('complex64', 'complex128'):
        assert repr(lg.finfo(getattr(lg, name))) == repr(torch.finfo(getattr(torch, name)))
        assert lg.finfo(getattr(lg, name)).dtype == torch.finfo(getattr(torch, name)).dtype


ALLCLOSE = [
    lambda m: (m.tensor([1., 2.]), m.tensor([1.00005, 2.]), {}),
    lambda m: (m.tensor([1., 2.]), [1.001, 2.], {}),
    lambda m: ([1., NAN], [1., NAN], {}),
    lambda m: (m.tensor([1., 2.]), m.tensor([1.5, 2.]), {'msg': 'custom'}),
    lambda m: (m.tensor([1, 2]), m.tensor([1., 2.]), {}),
    lambda m: (m.tensor([1., 2.]), m.tensor([1.1, 2.]), {'rtol': 0.2, 'atol': 0}),
    lambda m: (m.tensor([1., 2.]), m.tensor([1.1, 2.]), {}),
]


@pytest.mark.parametrize('case', ALLCLOSE)
def test_assert_allclose_as_torch(case):
    """The deprecated comparison: torch's verdict and message, and its FutureWarning."""
    outcomes = []
    for m in (lg, torch):
        actual, expected, kwargs = case(m)
        with pytest.warns(FutureWarning, match='assert_allclose'):
            try:
                m.testing.assert_allclose(actual, expected, **kwargs)
                outcomes.append(None)
            except AssertionError as e:
                outcomes.append(str(e).replace('leafgrad', 'torch'))
    assert outcomes[0] == outcomes[1]
