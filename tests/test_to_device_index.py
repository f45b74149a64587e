"""Tensor.to, nn.Module.to and Tensor.cuda given a bare device index (``model.to(0)``, as the DDP
tutorial series' Trainer does) read it as PyTorch's parser does: the accelerator's device, so
that without one both raise PyTorch's RuntimeError; a Python number for to(Tensor other) is the
parser's 0-dim tensor of it, whose dtype is taken."""
import pytest

from oracle import lg, torch

CALLS = ['x.to(0)', 'x.to(1)', 'x.to(-1)', 'x.to(0, m.float64)', 'x.to(0, non_blocking=True)',
         'x.to(0, m.float64, True)', 'lin.to(0)', 'lin.to(-1)', 'x.cuda(0)', 'lin.cuda(0)',
         'x.to(True)', 'x.to(2.0)', 'x.to(1j)', 'lin.to(2.0).weight.dtype', 'x.to(m.float64, 0)']


def _outcome(m, call):
    m.manual_seed(0)
    x, lin = m.ones(2), m.nn.Linear(2, 2)
    try:
        out = eval(call)
    except Exception as e:  # noqa: BLE001 (the type and the message are compared)
        return type(e).__name__, str(e).replace('leafgrad', 'torch').split('\n')[0]
    return repr(out).replace('leafgrad', 'torch')


@pytest.mark.parametrize('call', CALLS)
def test_as_pytorch(call):
    assert _outcome(lg, call) == _outcome(torch, call)
