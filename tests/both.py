"""Run one program on leafgrad and on torch and compare what it returns, raises and warns.

A program is a function of the library module ``M``. Its result is compared structure by
structure: tensors by dtype, shape and values (within float tolerance), everything else by
equality; an exception by type and message ('leafgrad' read as 'torch'); warnings by message.
"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


class T:
    """A tensor's comparable form."""

    def __init__(self, t):
        self.dtype = str(t.dtype).split('.')[-1]
        self.shape = tuple(t.shape)
        self.values = np.array(t.detach().numpy(), copy=True)

    def __eq__(self, other):
        if not isinstance(other, T) or (self.dtype, self.shape) != (other.dtype, other.shape):
            return False
        tol = dict(rtol=1e-4, atol=1e-5) if self.dtype in ('float32', 'float16', 'bfloat16') else dict(rtol=1e-9, atol=1e-10)
        return bool(np.allclose(self.values, other.values, equal_nan=True, **tol))

    def __repr__(self):
        return f'T({self.dtype}, {self.shape}, {np.round(self.values, 5).tolist()})'


def plain(x):
    if isinstance(x, (lg.Tensor, torch.Tensor)):
        return T(x)
    if isinstance(x, (lg.Size, torch.Size)):
        return tuple(x)
    if isinstance(x, (tuple, list)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (lg.dtype, torch.dtype)):
        return str(x).split('.')[-1]
    return x


def outcome(program, M):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            result = ('ok', plain(program(M)))
        except Exception as e:  # noqa: BLE001 (the exception is the outcome)
            result = ('raised', type(e).__name__, str(e).replace('leafgrad', 'torch'))
    messages = [str(w.message).split(' (Triggered internally')[0].replace('leafgrad', 'torch') for w in caught]
    return result, messages


def same(program, warnings_too=True):
    ours, theirs = outcome(program, lg), outcome(program, torch)
    if warnings_too:
        assert ours == theirs
    else:
        assert ours[0] == theirs[0]
    return ours


EDGES = [[0., 1., -1., 2.], [float('inf'), 1., 0., -2.], [-float('inf')] * 4, [float('nan'), 0., 1., 2.],
         [1e30, -1e30, 1e-30, -0.0], [-float('inf'), 0., float('inf'), 3.]]


def on_edges(fn, dtype='float64', rows=EDGES):
    """A program: fn on a tensor of edge values (inf, -inf, nan, ±0, 1e30), its value and the gradient
    of its sum weighted by distinct weights (None when fn's result has no gradient)."""
    def program(M):
        x = M.tensor(rows, dtype=getattr(M, dtype), requires_grad=True)
        y = fn(M, x)
        if not y.requires_grad:
            return [y, None]
        w = M.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), dtype=y.dtype)
        (y * w).sum().backward()
        return [y, x.grad]
    return program
