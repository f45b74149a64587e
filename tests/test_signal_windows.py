"""``torch.signal.windows``: each window's values, dtype, gradient and argument errors against torch's."""
import numpy as np
import pytest

from both import same, torch, lg

NAMES = ['bartlett', 'blackman', 'cosine', 'exponential', 'gaussian', 'general_hamming', 'hamming', 'hann',
         'kaiser', 'nuttall']


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('M', [0, 1, 2, 5, 10, 17])
@pytest.mark.parametrize('sym', [True, False])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_values(name, M, sym, dtype):
    ours = getattr(lg.signal.windows, name)(M, sym=sym, dtype=getattr(lg, dtype))
    theirs = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype))
    assert str(ours.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    # (windows peak at 1: float32 cos/exp may differ from PyTorch's vectorised ones by an ulp of 1)
    # (and leafgrad.i0 in float32 is within 1e-6 of PyTorch's, not bit-equal)
    tol = dict(rtol=4e-7, atol=2.5e-7) if dtype == 'float32' else dict(rtol=1e-14, atol=1e-15)
    if name == 'kaiser' and dtype == 'float32':
        tol['rtol'] = 2e-6
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol)


@pytest.mark.parametrize('call', [
    lambda M: M.signal.windows.exponential(9, tau=0.5),
    lambda M: M.signal.windows.exponential(9, sym=False, center=2.5, tau=3.0),
    lambda M: M.signal.windows.gaussian(8, std=0.7, sym=False),
    lambda M: M.signal.windows.kaiser(8, beta=0.0),
    lambda M: M.signal.windows.kaiser(7, beta=3.5, sym=False),
    lambda M: M.signal.windows.general_cosine(6, a=[0.5, 0.3, 0.2]),
    lambda M: M.signal.windows.general_cosine(6, a=(1.0,), sym=False),
    lambda M: M.signal.windows.general_hamming(6, alpha=0.6),
    lambda M: M.signal.windows.hann(4),
])
def test_parameters(call):
    same(call)


@pytest.mark.parametrize('call', [
    lambda M: M.signal.windows.hann(-1),
    lambda M: M.signal.windows.hann(4, dtype=M.int64),
    lambda M: M.signal.windows.cosine(4, dtype=M.float16),
    lambda M: M.signal.windows.exponential(4, tau=0),
    lambda M: M.signal.windows.exponential(4, center=1.0),
    lambda M: M.signal.windows.gaussian(4, std=-1.0),
    lambda M: M.signal.windows.kaiser(4, beta=-1.0),
    lambda M: M.signal.windows.general_cosine(4, a=[]),
    lambda M: M.signal.windows.general_cosine(4, a=3),
    lambda M: M.signal.windows.blackman(-3, dtype=M.float64),
])
def test_errors(call):
    same(call)


def test_default_dtype_follows_setting():
    same(lambda M: (M.set_default_dtype(M.float64), M.signal.windows.nuttall(5), M.set_default_dtype(M.float32))[1])


@pytest.mark.parametrize('name', NAMES)
def test_requires_grad_and_backward(name):
    def program(M):
        w = getattr(M.signal.windows, name)(7, requires_grad=True, dtype=M.float64)
        leaf = w if w.is_leaf else None
        return w.requires_grad, w.is_leaf, type(w.grad_fn).__name__, leaf is not None
    same(program)


def test_general_cosine_gradient_reaches_no_leaf():
    # (the coefficients and positions are made inside with requires_grad: their sum's backward runs)
    def program(M):
        w = M.signal.windows.general_cosine(5, a=[0.5, 0.5], requires_grad=True, dtype=M.float64)
        w.sum().backward()
        return w.detach()
    same(program)


def test_import_forms():
    import leafgrad.signal
    import leafgrad.signal.windows as windows
    from leafgrad.signal.windows import hann
    assert leafgrad.signal.windows is windows and windows.hann is hann
    assert sorted(windows.__all__) == sorted(torch.signal.windows.__all__)
    assert leafgrad.signal.__all__ == torch.signal.__all__
