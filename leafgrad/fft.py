"""``torch.fft``: discrete Fourier transforms with PyTorch's signatures, dtypes and gradients.

Every transform is one of three recorded ops, named as PyTorch names their nodes:
``FftC2CBackward0`` (complex to complex), ``FftR2CBackward0`` (real to complex, the whole
spectrum or its one-sided half) and ``FftC2RBackward0`` (a one-sided Hermitian spectrum to a
real signal). ``n``/``s`` pad (``ConstantPadNdBackward0``) or trim (``SliceBackward0``) the
input first, as PyTorch does. ``hfft`` and ``ihfft`` are C2R/R2C of the conjugate.

``norm`` scales the forward transform by 1 (``'backward'``, the default), 1/sqrt(n)
(``'ortho'``) or 1/n (``'forward'``), and the inverse by the complement. The derivative of a
transform is the adjoint of its matrix: the opposite direction with the dual normalisation
(``'backward'`` <-> ``'forward'``), in PyTorch's complex convention (ops/complex_numbers.py).
The C2R derivative is a one-sided R2C whose entries that stand for two conjugate bins are
doubled; a real input's derivative is the real part of the C2C one.

Real input of float32/float64 gives complex64/complex128; integer and bool inputs are taken
as the default float dtype; float16 and bfloat16 are refused, as PyTorch refuses them on CPU.
"""
import numpy as _np

from . import backend
from .creation import _finish, _place
from .ops._util import Node, record, state, wrap, xp
from .ops.complex_numbers import conj, real_part
from .ops.rearrange import _constant_pad, roll
from .ops.shape import narrow
from .tensor import Tensor

__all__ = ['fft', 'ifft', 'rfft', 'irfft', 'hfft', 'ihfft', 'fft2', 'ifft2', 'rfft2', 'irfft2', 'hfft2', 'ihfft2',
           'fftn', 'ifftn', 'rfftn', 'irfftn', 'hfftn', 'ihfftn', 'fftfreq', 'rfftfreq', 'fftshift', 'ifftshift']

_DUAL = {'backward': 'forward', 'forward': 'backward', 'ortho': 'ortho'}
_TYPE_NAMES = {'float16': 'Half', 'bfloat16': 'BFloat16', 'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble'}


# ---- the three transforms and their derivatives -------------------------------------------------

class FftC2CBackward0(Node):
    __slots__ = ('dims', 'norm', 'forward')
    complex_rule = True

    def apply(self, grad):
        return _c2c(grad, self.dims, _DUAL[self.norm], not self.forward),


def _c2c(x, dims, norm, forward):
    data = x._data
    transform = xp.fft.fftn if forward else xp.fft.ifftn
    out = transform(data, axes=dims, norm=norm).astype(data.dtype, copy=False) if dims else data.copy()
    result, node = record(out, FftC2CBackward0, (x,))
    if node is not None:
        node.dims, node.norm, node.forward = dims, norm, forward
    return result


class FftR2CBackward0(Node):
    __slots__ = ('dims', 'norm', 'forward', 'onesided', 'last_size')
    complex_rule = True

    def apply(self, grad):
        if self.onesided:  # the bins the one-sided spectrum left out receive no gradient
            missing = self.last_size - grad._data.shape[self.dims[-1]]
            if missing:
                grad = _pad_dim(grad, self.dims[-1], missing)
        return real_part(_c2c(grad, self.dims, _DUAL[self.norm], not self.forward)),


def _r2c(x, dims, norm, forward, onesided):
    data = x._data
    complex_np = backend.from_np(data.dtype).to_complex().np
    if onesided:  # (an inverse one: the conjugate of the forward transform with the dual scaling)
        out = xp.fft.rfftn(data, axes=dims, norm=norm if forward else _DUAL[norm])
        if not forward:
            out = xp.conj(out)
    else:
        out = (xp.fft.fftn if forward else xp.fft.ifftn)(data, axes=dims, norm=norm)
    result, node = record(out.astype(complex_np, copy=False), FftR2CBackward0, (x,))
    if node is not None:
        node.dims, node.norm, node.forward, node.onesided = dims, norm, forward, onesided
        node.last_size = data.shape[dims[-1]]
    return result


class FftC2RBackward0(Node):
    __slots__ = ('dims', 'norm', 'forward')
    complex_rule = True

    def apply(self, grad):
        # the adjoint: a one-sided R2C the other way, with the dual scaling (irfftn's is rfftn's;
        # hfftn's, the conjugate of an inverse R2C)
        g = _r2c(grad, self.dims, _DUAL[self.norm], not self.forward, True)
        # each bin strictly between 0 and the Nyquist bin stands for itself and its conjugate twin
        last = self.dims[-1]
        n, half = grad._data.shape[last], g._data.shape[last]
        doubled = n - half
        if doubled > 0:
            weights = xp.ones(half, dtype=grad._data.dtype)
            weights[1:1 + doubled] = 2
            g = g * wrap(weights.reshape((half,) + (1,) * (g._data.ndim - 1 - last)))
        return g,


def _c2r(x, dims, norm, forward, last_size):
    data = x._data
    if not forward:
        out = xp.fft.irfftn(data, s=[data.shape[d] for d in dims[:-1]] + [last_size], axes=dims, norm=norm)
    else:  # (the forward C2R of hfft: the inverse of the conjugate, with the forward's scaling)
        out = xp.fft.irfftn(xp.conj(data), s=[data.shape[d] for d in dims[:-1]] + [last_size], axes=dims,
                            norm=_DUAL[norm])
    result, node = record(out.astype(data.real.dtype, copy=False), FftC2RBackward0, (x,))
    if node is not None:
        node.dims, node.norm, node.forward = dims, norm, forward
    return result


# ---- arguments: dtype, dims, sizes, norm --------------------------------------------------------

def _input(x, name, want=None):
    """``x`` as a float or complex tensor; ``want='real'`` refuses complex, as PyTorch's R2C."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    kind = x._data.dtype.kind
    if kind in 'biu':
        x = x.to(backend.get_default_dtype())
    elif kind == 'V' or x._data.dtype.itemsize == 2:
        raise RuntimeError(f'Unsupported dtype {_TYPE_NAMES[x._data.dtype.name]}')
    if want == 'real' and kind == 'c':
        label = _TYPE_NAMES[x._data.dtype.name]
        if name in ('ihfft2', 'ihfftn'):
            raise RuntimeError(f'Only supports floating-point dtypes, but found: {label}')
        if name in ('rfft2', 'rfftn'):
            raise RuntimeError(f'rfftn expects a real-valued input tensor, but got {label}')
        raise RuntimeError(f'{name} expects a real input tensor, but got {label}')
    return x


def _norm(norm):
    if norm is None:
        return 'backward'
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _no_out(out, name):
    if out is not None:
        raise TypeError(f'leafgrad.fft.{name} does not take out= (its result is a new tensor)')


def _dims(x, dim, s, n=None):
    """The transformed dims (wrapped, unique) and the sizes asked for them (None, or -1 in ``s``:
    as they are); ``n``, the one size of a one-dimensional transform, may not be -1."""
    if n is not None:
        if n < 1:
            raise RuntimeError(f'Invalid number of data points ({n}) specified')
        s = [n]
    ndim = x._data.ndim
    if dim is None:
        dims = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dim is not None and len(s) != len(dims):
            raise RuntimeError('When given, dim and shape arguments must have the same length')
        if len(s) > ndim:
            raise RuntimeError(f'Got shape with {len(s)} values but input tensor only has {ndim} dimensions.')
    wrapped = []
    for d in dims:
        if ndim == 0:
            raise IndexError(f'Dimension specified as {d} but tensor has no dimensions')
        if not -ndim <= d < ndim:
            raise IndexError(f'Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})')
        wrapped.append(d % ndim)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError('FFT dims must be unique')
    sizes = [None] * len(wrapped) if s is None else [int(n) for n in s]
    for n in sizes:
        if n is not None and n != -1 and n < 1:
            raise RuntimeError(f'Invalid number of data points ({n}) specified')
    return tuple(wrapped), [x._data.shape[d] if n is None or n == -1 else n for d, n in zip(wrapped, sizes)]


def _pad_dim(x, dim, count):
    pad = [0, 0] * (x._data.ndim - dim)
    pad[-1] = count  # (pad lists dims from the last: the right side of `dim` is its last entry)
    return _constant_pad(x, tuple(pad), 0)


def _resized(x, dims, sizes):
    """``x`` trimmed (a slice) or zero-padded (one pad) to ``sizes`` along ``dims``, as PyTorch."""
    pad = [0, 0] * x._data.ndim
    padded = False
    for d, n in zip(dims, sizes):
        size = x._data.shape[d]
        if n < size:
            x = narrow(x, d, 0, n)
        elif n > size:
            pad[2 * (x._data.ndim - 1 - d) + 1] = n - size
            padded = True
    if padded:
        while pad and pad[-1] == 0 and pad[-2] == 0:
            del pad[-2:]
        x = _constant_pad(x, tuple(pad), 0)
    return x


# ---- the public transforms ----------------------------------------------------------------------

def _complex_to_complex(input, s, dim, norm, forward, name, n=None):
    x = _input(input, name)
    dims, sizes = _dims(x, dim, s, n)
    norm = _norm(norm)
    x = _resized(x, dims, sizes)
    if x._data.dtype.kind != 'c':
        if name not in ('fft', 'ifft'):  # (the n-dimensional ones take a real input as complex)
            x = x.to(backend.from_np(x._data.dtype).to_complex())
        elif forward:
            return _r2c(x, dims, norm, True, False)
        else:  # the inverse of a real signal: the conjugate of its forward transform, as PyTorch
            return conj(_r2c(x, dims, _DUAL[norm], True, False))
    return _c2c(x, dims, norm, forward)


def _real_to_half(input, s, dim, norm, name, n=None):
    x = _input(input, name, want='real')
    dims, sizes = _dims(x, dim, s, n)
    norm = _norm(norm)
    return _r2c(_resized(x, dims, sizes), dims, norm, True, True)


def _half_to_real(input, s, dim, norm, forward, name, n=None):
    x = _input(input, name)
    dims, sizes = _dims(x, dim, s, n)
    norm = _norm(norm)
    if n is None and (s is None or list(s)[-1] == -1):  # the default length: 2 * (bins - 1)
        last = 2 * (x._data.shape[dims[-1]] - 1)
        if last < 1:
            raise RuntimeError(f'Invalid number of data points ({last}) specified')
        sizes[-1] = last
    last = sizes[-1]
    sizes[-1] = last // 2 + 1
    x = _resized(x, dims, sizes)
    if x._data.dtype.kind != 'c':
        x = x.to(backend.from_np(x._data.dtype).to_complex())
    return _c2r(x, dims, norm, forward, last)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform along ``dim`` (of length ``n`` if given)."""
    _no_out(out, 'fft')
    return _complex_to_complex(input, None, dim, norm, True, 'fft', n)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    _no_out(out, 'ifft')
    return _complex_to_complex(input, None, dim, norm, False, 'ifft', n)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _no_out(out, 'fft2')
    return _complex_to_complex(input, s, dim, norm, True, 'fft2')


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _no_out(out, 'ifft2')
    return _complex_to_complex(input, s, dim, norm, False, 'ifft2')


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    _no_out(out, 'fftn')
    return _complex_to_complex(input, s, dim, norm, True, 'fftn')


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    _no_out(out, 'ifftn')
    return _complex_to_complex(input, s, dim, norm, False, 'ifftn')


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-sided transform of a real signal: ``n // 2 + 1`` bins."""
    _no_out(out, 'rfft')
    return _real_to_half(input, None, dim, norm, 'rfft', n)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _no_out(out, 'rfft2')
    return _real_to_half(input, s, dim, norm, 'rfft2')


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    _no_out(out, 'rfftn')
    return _real_to_half(input, s, dim, norm, 'rfftn')


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (bins - 1)``)."""
    _no_out(out, 'irfft')
    return _half_to_real(input, None, dim, norm, False, 'irfft', n)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _no_out(out, 'irfft2')
    return _half_to_real(input, s, dim, norm, False, 'irfft2')


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    _no_out(out, 'irfftn')
    return _half_to_real(input, s, dim, norm, False, 'irfftn')


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its one-sided half: real output."""
    _no_out(out, 'hfft')
    return _half_to_real(input, None, dim, norm, True, 'hfft', n)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``hfft``: the one-sided half of the inverse transform of a real signal."""
    _no_out(out, 'ihfft')
    x = _input(input, 'ihfft', want='real')
    dims, sizes = _dims(x, dim, None, n)
    return conj(_r2c(_resized(x, dims, sizes), dims, _DUAL[_norm(norm)], True, True))


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """``hfftn`` over two dims: the real transform of a signal Hermitian-symmetric in them."""
    _no_out(out, 'hfft2')
    return _half_to_real(input, s, dim, norm, True, 'hfft2')


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional ``hfft``: its last dim holds the one-sided half."""
    _no_out(out, 'hfftn')
    return _half_to_real(input, s, dim, norm, True, 'hfftn')


def _inverse_hermitian(input, s, dim, norm, name):
    x = _input(input, name, want='real')
    dims, sizes = _dims(x, dim, s)
    return conj(_r2c(_resized(x, dims, sizes), dims, _DUAL[_norm(norm)], True, True))


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _no_out(out, 'ihfft2')
    return _inverse_hermitian(input, s, dim, norm, 'ihfft2')


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of ``hfftn``: the one-sided half (last dim) of the inverse transform of a real signal."""
    _no_out(out, 'ihfftn')
    return _inverse_hermitian(input, s, dim, norm, 'ihfftn')


# ---- frequencies and shifts ---------------------------------------------------------------------

def _frequencies(values, n, d, dtype, device, requires_grad, layout, pin_memory):
    if layout is not None and str(layout) != 'torch.strided' and str(layout) != 'leafgrad.strided':
        raise RuntimeError('leafgrad has only strided tensors')
    dtype = backend.get_default_dtype() if dtype is None else backend.to_dtype(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError('fftfreq requires a floating point or complex dtype')
    np_dtype = dtype.np if dtype.np.kind != 'V' else _np.dtype(_np.float32)
    data = values.astype(np_dtype)
    if n:
        data = data * np_dtype.type(1.0 / (n * d))  # (PyTorch: arange, then mul_)
    return _finish(_place(data.astype(dtype.np, copy=False), device), requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, out=None):
    """The sample frequencies of ``fft`` of length ``n``: ``[0, 1, ..., -(n // 2), ..., -1] / (d n)``."""
    _no_out(out, 'fftfreq')
    values = _np.concatenate([_np.arange((n - 1) // 2 + 1), _np.arange(-(n // 2), 0)]) if n > 0 else _np.arange(0)
    return _frequencies(values, n, d, dtype, device, requires_grad, layout, pin_memory)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, out=None):
    """The sample frequencies of ``rfft`` of length ``n``: ``[0, 1, ..., n // 2] / (d n)``."""
    _no_out(out, 'rfftfreq')
    return _frequencies(_np.arange(n // 2 + 1), n, d, dtype, device, requires_grad, layout, pin_memory)


def _shift(input, dim, sign):
    ndim = input._data.ndim
    dims = list(range(ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [d % ndim if ndim else d for d in dims]
    shifts = [input._data.shape[d] // 2 * sign for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """The zero frequency moved to the centre: a roll by ``size // 2`` along ``dim`` (all dims)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of ``fftshift``: a roll by ``-(size // 2)``."""
    return _shift(input, dim, -1)


del Node, state
