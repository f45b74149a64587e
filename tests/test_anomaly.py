"""Anomaly detection against torch: the NaN error, the forward-traceback warning, the modes."""
import warnings

import numpy as np
import pytest

from fresh import fresh_python_output
from oracle import torch
import leafgrad as lg


def _nan_backward(mod, anomaly_in_forward=True):
    """x / x at 0: the derivative for the divisor is NaN. Returns (error message, warnings)."""
    x = mod.zeros(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        with np.errstate(all='ignore'):
            if anomaly_in_forward:
                with mod.autograd.detect_anomaly():
                    y = x / x  # the forward line the warning must point at
                    with pytest.raises(RuntimeError) as e:
                        y.sum().backward()
            else:
                y = x / x
                with mod.autograd.detect_anomaly():
                    with pytest.raises(RuntimeError) as e:
                        y.sum().backward()
    return str(e.value), [str(m.message) for m in w if m.category is UserWarning]


def test_nan_error_and_forward_traceback_warning_match_torch():
    lmsg, lwarn = _nan_backward(lg)
    tmsg, twarn = _nan_backward(torch)
    assert lmsg == tmsg == "Function 'DivBackward0' returned nan values in its 1th output."
    assert lwarn[0] == twarn[0] == ('Anomaly Detection has been enabled. This mode will increase the runtime '
                                    'and should only be enabled for debugging.')
    head = 'Error detected in DivBackward0. Traceback of forward call that caused the error:\n'
    assert lwarn[1].startswith(head) and twarn[1].startswith(head)
    # both tracebacks end at the same forward line of this file
    assert 'y = x / x  # the forward line the warning must point at' in lwarn[1]
    assert 'y = x / x  # the forward line the warning must point at' in twarn[1]
    assert 'leafgrad/' not in lwarn[1].replace('tests/', '')  # the library's own frames are left out


def test_no_forward_information_when_enabled_only_for_backward():
    lmsg, lwarn = _nan_backward(lg, anomaly_in_forward=False)
    tmsg, twarn = _nan_backward(torch, anomaly_in_forward=False)
    assert lmsg == tmsg
    assert lwarn[1] == twarn[1].split(' (Triggered internally')[0] == (
        'Error detected in DivBackward0. No forward pass information available. Enable detect anomaly during '
        'forward pass for more information.')


def test_check_nan_false_and_disabled_do_not_raise():
    for mod in (lg, torch):
        x = mod.zeros(2, requires_grad=True)
        with np.errstate(all='ignore'):
            with mod.autograd.set_detect_anomaly(True, check_nan=False):
                assert mod.is_anomaly_enabled() if hasattr(mod, 'is_anomaly_enabled') else True
                (x / x).sum().backward()
            assert np.isnan(np.asarray(x.grad.detach())).all()
            x.grad = None
            (x / x).sum().backward()  # anomaly mode off: NaN passes silently


def test_set_detect_anomaly_modes():
    ag = lg.autograd
    assert not ag.is_anomaly_enabled()
    ag.set_detect_anomaly(True)
    try:
        assert ag.is_anomaly_enabled() and ag.is_anomaly_check_nan_enabled()
    finally:
        ag.set_detect_anomaly(False)
    assert not ag.is_anomaly_enabled()
    with ag.set_detect_anomaly(True, check_nan=False):
        assert ag.is_anomaly_enabled() and not ag.is_anomaly_check_nan_enabled()
    assert not ag.is_anomaly_enabled() and ag.is_anomaly_check_nan_enabled()

    with warnings.catch_warnings():
        warnings.simplefilter('ignore')

        @ag.detect_anomaly()
        def f():
            return ag.is_anomaly_enabled()
        assert f() and not ag.is_anomaly_enabled()


def test_error_inside_custom_backward_is_attributed_to_its_node():
    def make(mod):
        class Boom(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                raise ValueError('boom')
        return Boom
    for mod in (lg, torch):
        x = mod.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            with mod.autograd.detect_anomaly():
                y = make(mod).apply(x)
                with pytest.raises(ValueError, match='boom'):
                    y.sum().backward()
        msgs = [str(m.message) for m in w]
        assert any(m.startswith('Error detected in BoomBackward. Traceback of forward call') for m in msgs), msgs


def test_nan_in_forward_free_graph_is_found_in_the_right_node():
    """The NaN comes from log of a negative number's derivative path: sqrt(x) at x < 0."""
    res = []
    for mod in (lg, torch):
        x = mod.tensor([-1.0, 4.0], requires_grad=True)
        with np.errstate(all='ignore'), warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with mod.autograd.detect_anomaly():
                y = x.sqrt() * 0
                with pytest.raises(RuntimeError) as e:
                    y.sum().backward()
        res.append(str(e.value))
    assert res[0] == res[1] == "Function 'SqrtBackward0' returned nan values in its 0th output."


def test_traceback_module_loads_only_with_anomaly_mode():
    """`import leafgrad` does not import traceback (only anomaly mode's traces need it)."""
    code = ('import sys, leafgrad as lg\n'
            'print("traceback" in sys.modules, end=" ")\n'
            'with lg.autograd.detect_anomaly():\n'
            '    y = lg.ones(2, requires_grad=True) * 2\n'
            'print("traceback" in sys.modules, "<string>" in y.grad_fn._anomaly_trace)\n')
    assert fresh_python_output(code) == 'False True True'
