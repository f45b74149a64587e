"""The window functions of ``torch.signal.windows``.

Each window is computed as PyTorch computes it, from a ``linspace`` of sample positions in the
window's dtype followed by leafgrad's differentiable ops (exp, sin, cos, i0), so values agree with
PyTorch's to the last bit and ``requires_grad=True`` gives the same graph. These differ from the
``leafgrad.hann_window`` family (in ``leafgrad._spectral``), which follows ATen's own formulas,
takes ``periodic`` rather than ``sym`` and rounds differently.
"""
from collections.abc import Iterable
from math import pi, sqrt

from ... import backend, creation, ops
from ..._memory_format import strided
from ...tensor import Tensor

__all__ = ['bartlett', 'blackman', 'cosine', 'exponential', 'gaussian', 'general_cosine', 'general_hamming',
           'hamming', 'hann', 'kaiser', 'nuttall']


def _window_function_checks(function_name, M, dtype, layout):
    """PyTorch's checks shared by every window: length, layout and dtype."""
    if M < 0:
        raise ValueError(f'{function_name} requires non-negative window length, got M={M}')
    if layout is not strided:
        raise ValueError(f'{function_name} is implemented for strided tensors only, got: {layout}')
    if dtype not in [backend.float32, backend.float64]:
        raise ValueError(f'{function_name} expects float32 or float64 dtypes, got: {dtype}')


def _empty(dtype, layout, device, requires_grad):
    return creation.empty((0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def _ones(dtype, layout, device, requires_grad):
    return creation.ones((1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=strided, device=None, requires_grad: bool = False) -> Tensor:
    """The exponential (Poisson) window: ``exp(-|n - center| / tau)``."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    _window_function_checks('exponential', M, dtype, layout)
    if tau <= 0:
        raise ValueError(f'Tau must be positive, got: {tau} instead.')
    if sym and center is not None:
        raise ValueError('Center must be None for symmetric windows')
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = creation.linspace(start=-center * constant, end=(-center + (M - 1)) * constant, steps=M, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)
    return ops.exp(-ops.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """The cosine (sine) window, as SciPy's: ``sin(pi (n + 0.5) / M)``."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    _window_function_checks('cosine', M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    start = 0.5
    constant = pi / (M + 1 if not sym and M > 1 else M)
    k = creation.linspace(start=start * constant, end=(start + (M - 1)) * constant, steps=M, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)
    return ops.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The gaussian window: ``exp(-(n / (2 std)) ** 2)``, centred."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    _window_function_checks('gaussian', M, dtype, layout)
    if std <= 0:
        raise ValueError(f'Standard deviation must be positive, got: {std} instead.')
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * sqrt(2))
    k = creation.linspace(start=start * constant, end=(start + (M - 1)) * constant, steps=M, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)
    return ops.exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """The Kaiser window: ``I0(beta sqrt(1 - ((n - N/2) / (N/2)) ** 2)) / I0(beta)``, N = M - 1 if sym else M."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    _window_function_checks('kaiser', M, dtype, layout)
    if beta < 0:
        raise ValueError(f'beta must be non-negative, got: {beta} instead.')
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return _ones(dtype, layout, device, requires_grad)
    # (beta as a tensor of the window's dtype: sqrt(beta^2 - k^2) then sees no negative rounding)
    beta = creation.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = ops.minimum(beta, start + (M - 1) * constant)
    k = creation.linspace(start=start, end=end, steps=M, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
    return ops.i0(ops.sqrt(beta * beta - ops.pow(k, 2))) / ops.i0(beta)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """The Hamming window: ``general_hamming`` with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
         requires_grad: bool = False) -> Tensor:
    """The Hann window: ``general_hamming`` with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Blackman window: ``general_cosine`` with coefficients 0.42, 0.5, 0.08."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    _window_function_checks('blackman', M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window: ``1 - |2n / N - 1|``."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    _window_function_checks('bartlett', M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return _ones(dtype, layout, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = creation.linspace(start=start, end=start + (M - 1) * constant, steps=M, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
    return 1 - ops.abs(k)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=strided, device=None,
                   requires_grad: bool = False) -> Tensor:
    """A sum of cosines: ``sum_i (-1)^i a[i] cos(2 pi i n / N)``."""
    if dtype is None:
        dtype = backend.get_default_dtype()
    _window_function_checks('general_cosine', M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return _ones(dtype, layout, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError('Coefficients must be a list/tuple')
    if not a:
        raise ValueError('Coefficients cannot be empty')
    constant = 2 * pi / (M if not sym else M - 1)
    k = creation.linspace(start=0, end=(M - 1) * constant, steps=M, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
    a_i = creation.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                          requires_grad=requires_grad)
    i = creation.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * ops.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=strided, device=None,
                    requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window: ``alpha - (1 - alpha) cos(2 pi n / N)``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
