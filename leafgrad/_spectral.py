"""``torch.stft``/``istft`` and the window functions (``hann_window`` ...), loaded on first use.

The short-time Fourier transform frames the (centre-padded) signal with ``unfold``, multiplies
each frame by the window and transforms it with ``leafgrad.fft``; the inverse transforms back,
windows again, and overlap-adds the frames (``index_add``), dividing by the overlap-added
squared window. Both are written with leafgrad's differentiable ops, so their gradients (and
second derivatives) follow from those ops'.
"""
import math
import warnings

import numpy as _np

from . import backend, fft
from .creation import _finish, _place, zeros
from .nn.functional import pad
from .ops.complex_numbers import view_as_real
from .tensor import Tensor
from ._arg_parser import Overloads

_RECTANGULAR = ('A window was not provided. A rectangular window will be applied,which is known to cause spectral '
                'leakage. Other windows such as leafgrad.hann_window or leafgrad.hamming_window are recommended to '
                'reduce spectral leakage.To suppress this warning and use a rectangular window, explicitly set '
                '`window=leafgrad.ones(n_fft, device=<device>)`.')
_RECTANGULAR_INVERSE = ('A window was not provided. A rectangular window will be applied.Please provide the same '
                        'window used by stft to make the inversion lossless.To suppress this warning and use a '
                        'rectangular window, explicitly set `window=leafgrad.ones(n_fft, device=<device>)`.')


_warned = set()


def _warn_once(message):
    """PyTorch's TORCH_WARN_ONCE: each of these warnings once a process."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def _describe(t):
    return f'{t.type()}{{[{", ".join(map(str, t.shape))}]}}' if t is not None else 'None'


def _stft_error(x, n_fft, hop, win_length, window, normalized, onesided, return_complex, align, problem):
    shape = ', '.join(map(str, x.shape))
    onesided = 'None' if onesided is None else int(onesided)
    return RuntimeError(f'stft({x.type()}[{shape}], n_fft={n_fft}, hop_length={hop}, win_length={win_length}, '
                        f'window={_describe(window)}, normalized={int(normalized)}, onesided={onesided}, '
                        f'return_complex={int(return_complex)}, align_to_window={align}) : {problem}')


def _padded_window(window, win_length, n_fft, like):
    """The window as a tensor of n_fft (a shorter one centred between zeros), or None."""
    if window is None:
        return None if win_length == n_fft else _centred(like.new_ones(win_length), n_fft)
    return window if win_length == n_fft else _centred(window, n_fft)


def _centred(window, n_fft):
    left = (n_fft - window.shape[0]) // 2
    return pad(window, (left, n_fft - window.shape[0] - left))


# PyTorch's stft is Python that pads the centred signal, then calls its parser with every argument
# but center and pad_mode, by position: its listing of these is the error for a wrong type
_STFT = Overloads('stft', '(Tensor input, int n_fft, int? hop_length = None, int? win_length = None, '
                  'Tensor? window = None, bool center = True, str pad_mode = "reflect", bool normalized = False, '
                  'bool? onesided = None, bool? return_complex = None, bool? align_to_window = None)',
                  '(Tensor input, int n_fft, int? hop_length = None, int? win_length = None, Tensor? window = None, '
                  'bool normalized = False, bool? onesided = None, bool? return_complex = None, '
                  'bool? align_to_window = None)')


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode='reflect',
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: ``(n_freq, n_frames)`` per signal, as PyTorch's."""
    if center:
        int(n_fft // 2)  # (PyTorch's Python reads it first: its TypeError for a str)
    _STFT.bind((input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window),
               {})
    if return_complex is None and not input.is_complex() and not (window is not None and window.is_complex()):
        raise RuntimeError('stft requires the return_complex parameter be given for real inputs, and will further '
                           'require that return_complex=True in a future PyTorch release.')
    if align_to_window is not None:
        raise TypeError('leafgrad.stft does not take align_to_window (PyTorch allows it only with center=False)')
    if window is None:
        _warn_once(_RECTANGULAR)
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    x = input
    if center and x.dim() in (1, 2, 3):
        shape = x.shape
        x = pad(x.reshape((1,) * (3 - x.dim()) + tuple(shape)), (n_fft // 2, n_fft // 2), mode=pad_mode)
        x = x.reshape(tuple(shape[:-1]) + (x.shape[-1],))

    def error(problem):
        return _stft_error(x, n_fft, hop, win_length, window, normalized, onesided, return_complex is not False,
                           align_to_window, problem)
    if x.dim() not in (1, 2):
        raise error('expected a 1D or 2D tensor')
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise error(f'expected 0 < n_fft < {length}, but got n_fft={n_fft}')
    if hop <= 0:
        raise error(f'expected hop_length > 0, but got hop_length={hop}')
    if not 0 < win_length <= n_fft:
        raise error(f'expected 0 < win_length <= n_fft, but got win_length={win_length}')
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise error(f'expected a 1D window tensor of size equal to win_length={win_length}, but got window with '
                    f'size {list(window.shape)}')
    if return_complex is False:
        _warn_once('stft with return_complex=False is deprecated. In a future pytorch release, stft will return '
                   'complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can '
                   'still call leafgrad.view_as_real on the complex output to recover the old return format.')
    frames = (x if x.dim() == 2 else x.unsqueeze(0)).unfold(-1, n_fft, hop)  # (batch, n_frames, n_fft)
    win = _padded_window(window, win_length, n_fft, x)
    if win is not None:
        frames = frames * win
    complex_input = frames.is_complex()
    onesided = not complex_input if onesided is None else onesided
    if onesided and complex_input:
        raise error('Cannot have onesided output if window or input is complex')
    norm = 'ortho' if normalized else 'backward'
    spectrum = (fft.rfft if onesided else fft.fft)(frames, dim=-1, norm=norm).transpose(1, 2)
    if x.dim() == 1:
        spectrum = spectrum.squeeze(0)
    return spectrum if return_complex is not False else _as_real(spectrum)


def _as_real(t):
    return view_as_real(t)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: overlap-added inverse transforms of the frames, divided by the
    overlap-added squared window."""
    if not input.is_complex():
        raise RuntimeError('istft requires a complex-valued input tensor matching the output from stft with '
                           'return_complex=True.')
    if window is None:
        _warn_once(_RECTANGULAR_INVERSE)
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if input.dim() not in (2, 3):
        raise RuntimeError(f'istft: expected a tensor with 2 or 3 dimensions of complex values, but got '
                           f'{input.dim()}')
    spec = input if input.dim() == 3 else input.unsqueeze(0)
    fft_size, n_frames = spec.shape[-2], spec.shape[-1]
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and fft_size != n_fft // 2 + 1:
        raise RuntimeError(f'istft: expected the frequency dimension (3rd to the last) of the input tensor to match '
                           f'n_fft / 2 + 1 when onesided=True, but got {fft_size}')
    if not onesided and fft_size != n_fft:
        raise RuntimeError(f'istft: expected the frequency dimension (3rd to the last) of the input tensor to match '
                           f'n_fft when onesided=False, but got {fft_size}')
    if not (0 < hop <= win_length and 0 < win_length <= n_fft):
        raise RuntimeError(f'istft: expected 0 < hop_length <= win_length <= n_fft, but got hop_length={hop}, '
                           f'win_length={win_length}, n_fft={n_fft}')
    norm = 'ortho' if normalized else 'backward'
    spec = spec.transpose(1, 2)  # (batch, n_frames, n_freq)
    if return_complex:
        if onesided:
            raise RuntimeError('cannot have onesided output if window or input is complex')
        frames = fft.ifft(spec, dim=-1, norm=norm)
    else:
        if not onesided:
            spec = spec.narrow(-1, 0, n_fft // 2 + 1)
        frames = fft.irfft(spec, n=n_fft, dim=-1, norm=norm)
    win = _padded_window(window, win_length, n_fft, frames.real if frames.is_complex() else frames)
    if win is None:
        win = (frames.real if frames.is_complex() else frames).new_ones(n_fft)
    frames = frames * win
    total = n_fft + hop * (n_frames - 1)
    positions = Tensor._wrap((_np.arange(n_frames)[:, None] * hop + _np.arange(n_fft)[None, :]).reshape(-1))
    batch = frames.shape[0]
    signal = zeros(batch, total, dtype=frames.dtype).index_add(1, positions, frames.reshape(batch, -1))
    envelope = zeros(total, dtype=win.dtype).index_add(0, positions, (win * win).repeat(n_frames))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else min(start + length, total)
    signal, envelope = signal[:, start:end], envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(f'istft(...) window overlap add min: {float(envelope.abs().min()):g}')
    signal = signal / envelope
    if length is not None and signal.shape[-1] < length:
        signal = pad(signal, (0, length - signal.shape[-1]))
    return signal if input.dim() == 3 else signal.squeeze(0)


# ---- windows -----------------------------------------------------------------------------------

def _window(name, n, periodic, dtype, device, requires_grad, layout, values):
    if layout is not None and 'strided' not in str(layout):
        raise RuntimeError(f'{name}: leafgrad has only strided (dense) tensors, not {layout}')
    if n < 0:
        raise RuntimeError(f'{name} requires non-negative window_length, got window_length={n}')
    dtype = backend.get_default_dtype() if dtype is None else backend.to_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f'{name} expects floating point dtypes, got: {dtype}')
    np_dtype = dtype.np if dtype.np.kind == 'f' else _np.dtype(_np.float32)
    if n <= 1:
        data = _np.ones(n, dtype=np_dtype)
    else:
        m = n + 1 if periodic else n
        data = values(_np.arange(m, dtype=np_dtype), m, np_dtype)[:n]
    return _finish(_place(data.astype(dtype.np, copy=False), device), requires_grad)


def _cosine_sum(alpha, beta):
    def values(k, m, np_dtype):
        # (PyTorch: arange, mul_(2 pi / (m - 1)), cos_, mul_(-beta), add_(alpha), in the window's dtype)
        return _np.cos(k * np_dtype.type(2 * math.pi / (m - 1))) * np_dtype.type(-beta) + np_dtype.type(alpha)
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    return _window('hann_window', window_length, periodic, dtype, device, requires_grad, layout, _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    return _window('hamming_window', window_length, periodic, dtype, device, requires_grad, layout,
                   _cosine_sum(alpha, beta))


def _blackman(k, m, np_dtype):
    step = np_dtype.type(math.pi / (m - 1))
    return (np_dtype.type(0.08) * _np.cos(k * (4 * step)) - np_dtype.type(0.5) * _np.cos(k * (2 * step))
            + np_dtype.type(0.42))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    return _window('blackman_window', window_length, periodic, dtype, device, requires_grad, layout, _blackman)


def _bartlett(k, m, np_dtype):
    k = k * np_dtype.type(2.0 / (m - 1))
    first = k <= 1
    return _np.where(first, k, np_dtype.type(2) - k)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    return _window('bartlett_window', window_length, periodic, dtype, device, requires_grad, layout, _bartlett)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """The Kaiser window: I0(beta sqrt(1 - ((k - a) / a) ** 2)) / I0(beta), a = (m - 1) / 2."""
    def values(k, m, np_dtype):
        alpha = (m - 1) / 2.0
        ratio = (k.astype(_np.float64) - alpha) / alpha
        return _np.i0(beta * _np.sqrt(_np.abs(1 - ratio * ratio))) / _np.i0(beta)
    return _window('kaiser_window', window_length, periodic, dtype, device, requires_grad, layout, values)


NAMES = ('stft', 'istft', 'hann_window', 'hamming_window', 'blackman_window', 'bartlett_window', 'kaiser_window')
