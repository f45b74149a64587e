"""leafgrad.fft against torch.fft: values, dtypes, node names, gradients (every norm, n/s/dim,
real and complex inputs), float64 gradcheck and gradgradcheck, errors; fft loads lazily."""
import subprocess
import sys

import numpy as np
import pytest

from oracle import raises_like, same_message, torch

import leafgrad as lg
from leafgrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6))
Z = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))

NORMS = [None, 'ortho', 'forward', 'backward']
BOTH = {  # name: transform of a real or complex input
    'fft': lambda T, x, norm: T.fft.fft(x, norm=norm),
    'ifft_n_dim': lambda T, x, norm: T.fft.ifft(x, n=8, dim=0, norm=norm),
    'fft_trimmed': lambda T, x, norm: T.fft.fft(x, n=3, norm=norm),
    'fft2_s': lambda T, x, norm: T.fft.fft2(x, s=(5, 4), norm=norm),
    'ifft2': lambda T, x, norm: T.fft.ifft2(x, norm=norm),
    'fftn_dim': lambda T, x, norm: T.fft.fftn(x, dim=(1,), norm=norm),
    'ifftn': lambda T, x, norm: T.fft.ifftn(x, norm=norm),
    'irfft': lambda T, x, norm: T.fft.irfft(x, norm=norm),
    'irfft_odd': lambda T, x, norm: T.fft.irfft(x, n=7, norm=norm),
    'irfft_long': lambda T, x, norm: T.fft.irfft(x, n=14, norm=norm),
    'irfft2': lambda T, x, norm: T.fft.irfft2(x, norm=norm),
    'irfftn_s': lambda T, x, norm: T.fft.irfftn(x, s=(3, 5), norm=norm),
    'hfft': lambda T, x, norm: T.fft.hfft(x, norm=norm),
    'hfft_n_dim': lambda T, x, norm: T.fft.hfft(x, n=9, dim=0, norm=norm),
    'hfft2_s': lambda T, x, norm: T.fft.hfft2(x, s=(3, 7), norm=norm),
    'hfftn': lambda T, x, norm: T.fft.hfftn(x, norm=norm),
}
REAL_ONLY = {
    'rfft': lambda T, x, norm: T.fft.rfft(x, norm=norm),
    'rfft_n_dim': lambda T, x, norm: T.fft.rfft(x, n=9, dim=0, norm=norm),
    'rfft2': lambda T, x, norm: T.fft.rfft2(x, norm=norm),
    'rfftn_s': lambda T, x, norm: T.fft.rfftn(x, s=(3, 7), norm=norm),
    'ihfft': lambda T, x, norm: T.fft.ihfft(x, norm=norm),
    'ihfft_n': lambda T, x, norm: T.fft.ihfft(x, n=5, norm=norm),
    'ihfft2_s': lambda T, x, norm: T.fft.ihfft2(x, s=(5, 3), norm=norm),
    'ihfftn': lambda T, x, norm: T.fft.ihfftn(x, norm=norm),
    'fftshift': lambda T, x, norm: T.fft.fftshift(x) * 2,
    'ifftshift_dim': lambda T, x, norm: T.fft.ifftshift(x, dim=1) * 2,
}
CASES = [(name, norm, real) for name in BOTH for norm in NORMS for real in (True, False)] + \
        [(name, norm, True) for name in REAL_ONLY for norm in NORMS]


def _run(T, name, norm, real, dtype):
    f = BOTH.get(name) or REAL_ONLY[name]
    x = T.tensor((X if real else Z).astype(dtype if real else np.result_type(dtype, np.complex64)),
                 requires_grad=True)
    y = f(T, x, norm)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(tuple(y.shape)) + (1j * rng.standard_normal(tuple(y.shape)) if y.is_complex() else 0)
    w = T.tensor(w.astype(np.result_type(dtype, w.dtype)))
    loss = (T.view_as_real(y * w) if y.is_complex() else y * w).sum()
    loss.backward()
    return (y.detach().resolve_conj().numpy(), x.grad.resolve_conj().numpy(), str(y.dtype).split('.')[-1],
            type(y.grad_fn).__name__)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('name,norm,real', CASES)
def test_values_dtypes_nodes_and_gradients_as_torch(name, norm, real, dtype):
    got, expected = _run(lg, name, norm, real, dtype), _run(torch, name, norm, real, dtype)
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[0], expected[0], **tol)
    np.testing.assert_allclose(got[1], expected[1], **tol)
    assert got[2] == expected[2]
    if name not in ('ihfft2_s', 'ihfftn'):  # (PyTorch's ihfftn ends in a C2C of a conjugate: other nodes)
        assert got[3] == expected[3]
    assert got[0].dtype == expected[0].dtype


def _c(*shape):
    return lg.tensor(RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape), requires_grad=True)


def _r(*shape):
    return lg.tensor(RNG.standard_normal(shape), requires_grad=True)


GRADCHECKED = {
    'fft': (lambda x: lg.fft.fft(x, n=5), _c(2, 4)),
    'fft_real': (lambda x: lg.fft.fft(x, norm='ortho'), _r(4)),
    'ifft_real': (lambda x: lg.fft.ifft(x, n=3), _r(4)),
    'fft2': (lambda x: lg.fft.fft2(x, norm='forward'), _c(3, 4)),
    'ifftn': (lambda x: lg.fft.ifftn(x, s=(2, 5)), _c(3, 4)),
    'rfft': (lambda x: lg.fft.rfft(x, n=6), _r(5)),
    'rfftn': (lambda x: lg.fft.rfftn(x, norm='ortho'), _r(3, 4)),
    'irfft': (lambda x: lg.fft.irfft(x), _c(4)),
    'irfft_odd': (lambda x: lg.fft.irfft(x, n=5, norm='forward'), _c(4)),
    'irfft2': (lambda x: lg.fft.irfft2(x, s=(3, 4)), _c(3, 3)),
    'hfft': (lambda x: lg.fft.hfft(x, norm='ortho'), _c(4)),
    'ihfft': (lambda x: lg.fft.ihfft(x), _r(5)),
    'hfft_odd': (lambda x: lg.fft.hfft(x, n=7), _c(4)),
    'hfftn': (lambda x: lg.fft.hfftn(x, s=(2, 5), norm='forward'), _c(3, 3)),
    'ihfft2': (lambda x: lg.fft.ihfft2(x, norm='ortho'), _r(3, 4)),
    'fftshift': (lambda x: lg.fft.fftshift(x), _c(3, 4)),
}


@pytest.mark.parametrize('case', list(GRADCHECKED))
def test_gradcheck_and_gradgradcheck(case):
    f, x = GRADCHECKED[case]
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


OTHERS = [
    lambda T: T.fft.fftfreq(5),
    lambda T: T.fft.fftfreq(4, dtype=T.float64),
    lambda T: T.fft.fftfreq(7, d=0.3),
    lambda T: T.fft.rfftfreq(5, 0.1),
    lambda T: T.fft.rfftfreq(8, d=2.0, dtype=T.float64),
    lambda T: T.fft.fftfreq(0),
    lambda T: T.fft.fftshift(T.arange(6).reshape(2, 3)),
    lambda T: T.fft.ifftshift(T.arange(5), dim=0),
    lambda T: T.fft.ifftshift(T.fft.fftshift(T.arange(7.))),
    lambda T: T.fft.fft(T.arange(4)),
    lambda T: T.fft.rfft(T.tensor([True, False, True])),
    lambda T: T.fft.irfft(T.tensor([1., 2., 3.])),
    lambda T: T.fft.fft(T.tensor([1., 2., 3.]), n=6),
]


@pytest.mark.parametrize('case', range(len(OTHERS)))
def test_frequencies_shifts_and_promotion(case):
    assert str(OTHERS[case](lg)).replace('leafgrad', 'torch') == str(OTHERS[case](torch))


ERRORS = [
    lambda T: T.fft.rfft(T.ones(4, dtype=T.cfloat)),
    lambda T: T.fft.rfftn(T.ones(4, dtype=T.cfloat)),
    lambda T: T.fft.rfft2(T.ones(2, 4, dtype=T.cdouble)),
    lambda T: T.fft.ihfft2(T.ones(2, 4, dtype=T.cdouble)),
    lambda T: T.fft.ihfftn(T.ones(4, dtype=T.cfloat)),
    lambda T: T.fft.ihfft(T.ones(4, dtype=T.cfloat)),
    lambda T: T.fft.fft(T.ones(4), n=0),
    lambda T: T.fft.fft(T.ones(4), n=-1),
    lambda T: T.fft.fft(T.ones(4), norm='foo'),
    lambda T: T.fft.fft(T.ones(4), dim=3),
    lambda T: T.fft.fftn(T.ones(4), s=(2, 3), dim=(0,)),
    lambda T: T.fft.fft(T.ones(4).half()),
    lambda T: T.fft.fft2(T.ones(4)),
    lambda T: T.fft.fft(T.tensor(1.)),
    lambda T: T.fft.fftn(T.ones(4), dim=(0, 0)),
    lambda T: T.fft.irfft(T.ones(1, dtype=T.cfloat)),
    lambda T: T.fft.hfft(T.ones(4, dtype=T.cfloat), n=0),
]


@pytest.mark.parametrize('case', range(len(ERRORS)))
def test_errors_as_torch(case):
    msg, tmsg = raises_like(lambda: ERRORS[case](lg), lambda: ERRORS[case](torch))
    assert same_message(msg, tmsg), (msg, tmsg)


def test_fft_is_imported_on_first_use():
    code = 'import sys, leafgrad; assert "leafgrad.fft" not in sys.modules; leafgrad.fft.fft; print("ok")'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == 'ok', out.stderr
