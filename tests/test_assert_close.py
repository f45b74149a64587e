"""leafgrad.testing.assert_close against torch.testing.assert_close: same verdicts, same
exception types, same messages (with 'leafgrad' for 'torch')."""
import numpy as np
import pytest

from oracle import torch
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
