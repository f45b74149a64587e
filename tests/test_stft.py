"""stft, istft and the window functions against torch: values, dtypes, gradients, warnings,
errors; a float64 gradcheck of both; they load on first use."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

from oracle import raises_like, same_message, torch

import leafgrad as lg
from leafgrad.autograd import gradcheck, gradgradcheck

X = np.random.default_rng(0).standard_normal((2, 40))


def _hann(T, n):
    return T.hann_window(n, dtype=T.float64)


CASES = {
    'stft': lambda T, x: T.stft(x, 16, hop_length=4, window=_hann(T, 16), return_complex=True),
    'stft_1d_rectangular': lambda T, x: T.stft(x[0], 16, window=T.ones(16, dtype=T.float64), return_complex=True),
    'stft_short_window': lambda T, x: T.stft(x, 16, win_length=8, window=_hann(T, 8), return_complex=True,
                                             center=False, normalized=True),
    'stft_two_sided_constant_pad': lambda T, x: T.stft(x, 16, window=_hann(T, 16), return_complex=True,
                                                       pad_mode='constant', onesided=False),
    'stft_of_complex': lambda T, x: T.stft(x * (1 + 2j), 8, window=_hann(T, 8), return_complex=True),
    'istft': lambda T, x: T.istft(T.stft(x, 16, hop_length=4, window=_hann(T, 16), return_complex=True), 16,
                                  hop_length=4, window=_hann(T, 16), length=40),
    'istft_without_length': lambda T, x: T.istft(
        T.stft(x, 16, hop_length=4, window=T.hamming_window(16, dtype=T.float64), return_complex=True), 16,
        hop_length=4, window=T.hamming_window(16, dtype=T.float64)),
    'istft_normalized_short_window': lambda T, x: T.istft(
        T.stft(x, 16, hop_length=2, win_length=10, window=_hann(T, 10), return_complex=True, normalized=True), 16,
        hop_length=2, win_length=10, window=_hann(T, 10), normalized=True, length=44),
    'istft_return_complex': lambda T, x: T.istft(
        T.stft(x * 1j, 8, window=_hann(T, 8), return_complex=True), 8, window=_hann(T, 8), return_complex=True),
    'methods': lambda T, x: x.stft(8, return_complex=True, window=T.blackman_window(8, dtype=T.float64)),
}


def _run(T, case):
    x = T.tensor(X, requires_grad=True)
    y = CASES[case](T, x)
    r = T.view_as_real(y) if y.is_complex() else y
    w = T.tensor(np.random.default_rng(3).standard_normal(tuple(r.shape)))
    (r * w).sum().backward()
    return r.detach().numpy(), x.grad.numpy(), str(y.dtype).split('.')[-1]


@pytest.mark.parametrize('case', list(CASES))
def test_values_and_gradients_as_torch(case):
    got, expected = _run(lg, case), _run(torch, case)
    assert got[0].shape == expected[0].shape and got[2] == expected[2]
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize('name', ['hann_window', 'hamming_window', 'blackman_window', 'bartlett_window'])
@pytest.mark.parametrize('n', [0, 1, 5, 6, 17])
@pytest.mark.parametrize('periodic', [True, False])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_windows_as_torch(name, n, periodic, dtype):
    got = getattr(lg, name)(n, periodic=periodic, dtype=getattr(lg, dtype))
    expected = getattr(torch, name)(n, periodic=periodic, dtype=getattr(torch, dtype))
    assert str(got).replace('leafgrad', 'torch') == str(expected)
    # float64 bit for bit; float32 to the last bit of PyTorch's vectorised cosine (NumPy's may round otherwise)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=0, atol=0 if dtype == 'float64' else 2e-7)


def test_gradcheck_and_gradgradcheck():
    window = lg.hann_window(8, dtype=lg.float64)

    def round_trip(x):
        spec = lg.stft(x, 8, hop_length=2, window=window, return_complex=True)
        return lg.istft(spec * spec.abs(), 8, hop_length=2, window=window, length=12)
    x = lg.tensor(np.random.default_rng(1).standard_normal(12), requires_grad=True)
    assert gradcheck(round_trip, (x,))
    assert gradgradcheck(lambda x: lg.stft(x, 8, hop_length=3, window=window, return_complex=True), (x,))


_WARNING_PROGRAM = '''
import sys, warnings
T = __import__(sys.argv[1])
calls = [lambda: T.stft(T.ones(40), 16, return_complex=True),
         lambda: T.stft(T.ones(40), 16, window=T.ones(16), return_complex=False),
         lambda: T.istft(T.stft(T.ones(40), 16, window=T.ones(16), return_complex=True), 16)]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    for call in calls + calls:  # (each warning once a process, as PyTorch's TORCH_WARN_ONCE)
        call()
for w in caught:
    print(repr(str(w.message).split(' (Triggered internally')[0].replace('leafgrad', 'torch')))
'''


def test_warnings_as_torch_once_a_process():
    def run(name):  # (a fresh process each: PyTorch warns once a process)
        out = subprocess.run([sys.executable, '-c', _WARNING_PROGRAM, name], capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout
    assert run('leafgrad') == run('torch')


ERRORS = [
    lambda T: T.stft(T.ones(40), 16, window=T.ones(16)),
    lambda T: T.stft(T.ones(40), 0, window=T.ones(0), return_complex=True),
    lambda T: T.stft(T.ones(40), 16, hop_length=0, window=T.ones(16), return_complex=True),
    lambda T: T.stft(T.ones(40), 16, win_length=20, return_complex=True),
    lambda T: T.stft(T.ones(40), 16, window=T.ones(10), return_complex=True),
    lambda T: T.stft(T.ones(10), 16, window=T.ones(16), return_complex=True, center=False),
    lambda T: T.stft(T.ones(2, 3, 40), 16, window=T.ones(16), return_complex=True),
    lambda T: T.istft(T.ones(9, 11), 16, window=T.ones(16)),
    lambda T: T.hann_window(-1),
]


@pytest.mark.parametrize('case', range(len(ERRORS)))
def test_errors_as_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        msg, tmsg = raises_like(lambda: ERRORS[case](lg), lambda: ERRORS[case](torch))
    assert same_message(msg, tmsg), (msg, tmsg)


def test_loaded_on_first_use():
    code = ('import sys, leafgrad; assert "leafgrad._spectral" not in sys.modules; '
            'leafgrad.hann_window(4); print("leafgrad._spectral" in sys.modules)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == 'True', out.stderr


@pytest.mark.parametrize('n', [0, 1, 2, 5, 6, 17])
@pytest.mark.parametrize('periodic', [True, False])
@pytest.mark.parametrize('beta', [12.0, 5.0, 0.0])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_kaiser_window_as_torch(n, periodic, beta, dtype):
    got = lg.kaiser_window(n, periodic, beta, dtype=getattr(lg, dtype))
    expected = torch.kaiser_window(n, periodic, beta, dtype=getattr(torch, dtype))
    assert str(got.dtype).split('.')[-1] == str(expected.dtype).split('.')[-1] and got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12 if dtype == 'float64' else 2e-6, atol=0)


def test_kaiser_window_defaults_and_errors():
    got, expected = lg.kaiser_window(8, requires_grad=True), torch.kaiser_window(8, requires_grad=True)
    assert got.requires_grad and str(got.dtype) == 'leafgrad.float32'
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=2e-6)
    msg = raises_like(lambda: lg.kaiser_window(-1), lambda: torch.kaiser_window(-1))
    assert same_message(*msg)
