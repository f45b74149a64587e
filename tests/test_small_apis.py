"""Small functions real programs call, against torch: nextafter (values, dtypes, gradient,
errors), Tensor.prelu, torch.set_anomaly_enabled / is_anomaly_enabled, torch.set_warn_always,
torch.autograd.anomaly_mode."""
import warnings

import numpy as np
import pytest

from oracle import raises_like, same_message, torch
import leafgrad as lg


def _value(t):
    a = (t.float() if t.dtype == torch.bfloat16 or t.dtype == lg.bfloat16 else t).detach().numpy()
    return str(t.dtype).replace('leafgrad', 'torch'), np.where(np.isnan(a), -0.125, a).tolist()  # (NaN comparable)


NEXTAFTER = [
    lambda m: m.nextafter(m.tensor([1., 0., -1., 3.]), m.tensor([2., 1., -2., 3.])),
    lambda m: m.nextafter(m.tensor([1., 0.]), m.tensor(2.)),
    lambda m: m.nextafter(m.tensor([1.]), m.tensor([2.], dtype=m.float64)),
    lambda m: m.nextafter(m.tensor([1.], dtype=m.float64), m.tensor([0.], dtype=m.float64)),
    lambda m: m.nextafter(m.tensor([1.], dtype=m.float16), m.tensor([2.], dtype=m.float16)),
    lambda m: m.nextafter(m.tensor([1.], dtype=m.bfloat16), m.tensor([2.], dtype=m.bfloat16)),
    lambda m: m.tensor([1., 2.]).nextafter(m.tensor([0., 3.])),
    lambda m: m.tensor([1., 2.]).nextafter_(m.tensor([2.], dtype=m.float64)),
    lambda m: m.nextafter(m.tensor([float('nan'), float('inf')]), m.tensor([1., 0.])),
]


@pytest.mark.parametrize('call', NEXTAFTER)
def test_nextafter_values(call):
    assert _value(call(lg)) == _value(call(torch))


def test_nextafter_gradient():
    grads = []
    for m in (lg, torch):
        x = m.tensor([1., 2.], requires_grad=True)
        o = m.tensor([3.], requires_grad=True)
        y = m.nextafter(x, o)
        (y * m.tensor([2., 5.])).sum().backward()
        grads.append((y.grad_fn.name(), x.grad.tolist(), o.grad.tolist()))
    assert grads[0] == grads[1]


ERRORS = [
    lambda m: m.nextafter(m.tensor([1]), m.tensor([2])),
    lambda m: m.nextafter(m.tensor([True]), m.tensor([False])),
    lambda m: m.nextafter(m.tensor([1j]), m.tensor([1j])),
    lambda m: m.nextafter(m.tensor([1.]), 2.),
    lambda m: m.nextafter(m.ones(2), m.ones(3)),
    lambda m: m.tensor([1., -2.]).prelu(0.25),
    lambda m: m.tensor([1., -2.]).prelu(),
    lambda m: m.tensor([1., -2.]).prelu(m.ones(1), m.ones(1)),
    lambda m: m.ones(2, 3).prelu(m.ones(2)),
    lambda m: m.set_anomaly_enabled('yes'),
    lambda m: m.set_anomaly_enabled(),
    lambda m: m.set_warn_always(1),
]


@pytest.mark.parametrize('call', ERRORS)
def test_errors_as_torch(call):
    assert same_message(*raises_like(lambda: call(lg), lambda: call(torch)))


def test_tensor_prelu():
    results = []
    for m in (lg, torch):
        x = m.tensor([[1., -2.], [-3., 4.]], requires_grad=True)
        w = m.tensor([0.25, 0.5], requires_grad=True)
        y = x.prelu(weight=w)
        y.sum().backward()
        results.append((y.tolist(), y.grad_fn.name(), x.grad.tolist(), w.grad.tolist()))
    assert results[0] == results[1]


def test_anomaly_switches():
    states = []
    for m in (lg, torch):
        try:
            out = [m.set_anomaly_enabled(True), m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
            m.set_anomaly_enabled(True, False)
            out += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        finally:
            m.set_anomaly_enabled(False)
        out.append(m.is_anomaly_enabled())
        out.append(m.autograd.anomaly_mode.detect_anomaly.__name__)
        states.append(out)
    assert states[0] == states[1]


def test_warn_always_repeats_a_warning_given_once():
    counts = []
    for m in (lg, torch):
        before = m.is_warn_always_enabled()
        m.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter('always')
                for _ in range(2):  # (a beta warning PyTorch gives once a process)
                    m.zeros(2).index_reduce(0, m.tensor([0]), m.ones(1), 'prod')
            counts.append((before, m.is_warn_always_enabled(), len(w)))
        finally:
            m.set_warn_always(False)
    assert counts[0] == counts[1] and counts[0][2] == 2
