"""PyTorch's deprecated overloads that old programs still call: add and sub with alpha first
(``p.data.add_(-lr, p.grad.data)``, as the char-RNN tutorials do), the result and gradient of
the current overload, PyTorch's deprecation warning (once a process), and its TypeError where
the extra argument does not fit the overload."""
import subprocess
import sys
import warnings

import pytest

from oracle import assert_same, lg, pair, torch

CALLS = [
    lambda m, x, y: x.add(2, y),
    lambda m, x, y: m.add(x, 2, y),
    lambda m, x, y: x.sub(2.5, y),
    lambda m, x, y: m.sub(x, 2, y),
    lambda m, x, y: x.clone().add_(-0.5, y),
    lambda m, x, y: x.clone().sub_(3, y),
    lambda m, x, y: x.add(2, 3),
    lambda m, x, y: x.add(m.tensor(2.), y),
    # addcmul and addcdiv with value first
    lambda m, x, y: x.addcmul(0.5, y, x),
    lambda m, x, y: m.addcmul(x, 2, y, y),
    lambda m, x, y: x.addcdiv(-1.5, y, x),
    lambda m, x, y: m.addcdiv(x, 0.5, x, y + 2),
    lambda m, x, y: x.clone().addcmul_(3, y, y),
    lambda m, x, y: x.clone().addcdiv_(0.25, y, x),
]


@pytest.mark.parametrize('call', range(len(CALLS)))
def test_alpha_first_values_and_gradients(call):
    (lx, tx), (ly, ty) = pair([1., 2., 3.], requires_grad=True), pair([0.5, -1., 4.], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        lo, to = CALLS[call](lg, lx, ly), CALLS[call](torch, tx, ty)
    assert_same(lo, to)
    lo.sum().backward()
    to.sum().backward()
    assert_same(lx.grad, tx.grad)
    assert_same(ly.grad, ty.grad)


def _errors(m):
    x, y = m.ones(3), m.arange(3.)
    longs = m.ones(3, dtype=m.long)
    out = []
    for call in (lambda: x.add(y, y), lambda: m.add(x, y, y), lambda: x.add_(y, y), lambda: x.sub(y, y),
                 lambda: m.sub(x, y, y), lambda: x.add(2, 'a'), lambda: m.add(x, 2, y, 3),
                 lambda: longs.add(2.5, longs), lambda: x.add(True, y),
                 lambda: x.addcmul(y, y, 2), lambda: m.addcmul(x, 'a', y, y), lambda: x.addcmul_(0.5, y, 2),
                 lambda: m.addcdiv(x, y, y, y), lambda: x.addcdiv(0.5, y, x, value=2), lambda: x.addcmul(y, y, y, value=2),
                 lambda: m.addcmul(x, 0.5, y, y, value=2)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                call()
            out.append(None)
        except Exception as e:  # noqa: BLE001 (the type and the message are compared)
            out.append((type(e).__name__, str(e).replace('leafgrad', 'torch')))
    return out


def test_errors_where_the_overload_does_not_fit():
    assert _errors(lg) == _errors(torch)


_SCRIPT = '''
import warnings, {m} as m
warnings.simplefilter('always')
x, y = m.ones(3), m.arange(3.)
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter('always')
    {call}
    x.add(2, y)
    m.sub(x, 2, y)
for w in seen:
    print(str(w.message).split(' (Triggered')[0])
'''


@pytest.mark.parametrize('call', ['x.clone().add_(-0.5, y)', 'm.add(x, 2, y)', 'x.sub(2, y)', 'm.addcmul(x, 0.5, y, y)',
                                  'x.addcdiv(2, y, x)', 'x.clone().addcmul_(2, y, x)'])
def test_the_warning_once_a_process(call):
    def warned(m):
        return subprocess.run([sys.executable, '-c', _SCRIPT.format(m=m, call=call)], capture_output=True, text=True,
                              check=True).stdout
    assert warned('leafgrad') == warned('torch')
    assert warned('leafgrad').startswith('This overload of ')
