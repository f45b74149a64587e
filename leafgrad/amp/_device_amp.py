"""``torch.cpu.amp`` and ``torch.cuda.amp``: the older, deprecated spellings of ``autocast`` and
``GradScaler`` with the device type built in. Each warns (FutureWarning) as PyTorch's does and
then behaves as ``leafgrad.amp``'s, which it subclasses."""
import functools
import warnings

from .. import backend
from . import autocast_mode, grad_scaler


def _warn(old, new):
    warnings.warn(f'`leafgrad.{old}(args...)` is deprecated. Please use `leafgrad.{new}` instead.', FutureWarning,
                  stacklevel=3)


class CpuAutocast(autocast_mode.autocast):
    """``leafgrad.cpu.amp.autocast(enabled=True, dtype=leafgrad.bfloat16, cache_enabled=True)``."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _warn('cpu.amp.autocast', "amp.autocast('cpu', args...)")
        super().__init__('cpu', enabled=enabled, dtype=backend._make_bfloat16() if dtype is None else dtype,
                         cache_enabled=cache_enabled)


class CudaAutocast(autocast_mode.autocast):
    """``leafgrad.cuda.amp.autocast(enabled=True, dtype=leafgrad.float16, cache_enabled=True)``."""

    def __init__(self, enabled=True, dtype=backend.float16, cache_enabled=True):
        _warn('cuda.amp.autocast', "amp.autocast('cuda', args...)")
        super().__init__('cuda', enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class CpuGradScaler(grad_scaler.GradScaler):
    """``leafgrad.cpu.amp.GradScaler(init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn('cpu.amp.GradScaler', "amp.GradScaler('cpu', args...)")
        super().__init__('cpu', init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


class CudaGradScaler(grad_scaler.GradScaler):
    """``leafgrad.cuda.amp.GradScaler(...)``: without CUDA it warns and is disabled, as PyTorch's."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _warn('cuda.amp.GradScaler', "amp.GradScaler('cuda', args...)")
        super().__init__('cuda', init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


for _cls, _module, _name in ((CpuAutocast, 'leafgrad.cpu.amp', 'autocast'),
                             (CudaAutocast, 'leafgrad.cuda.amp', 'autocast'),
                             (CpuGradScaler, 'leafgrad.cpu.amp', 'GradScaler'),
                             (CudaGradScaler, 'leafgrad.cuda.amp', 'GradScaler')):
    _cls.__module__, _cls.__name__, _cls.__qualname__ = _module, _name, _name


def cuda_custom_fwd(fwd=None, *, cast_inputs=None):
    """``leafgrad.cuda.amp.custom_fwd``: ``amp.custom_fwd`` with device_type='cuda' (deprecated)."""
    _warn('cuda.amp.custom_fwd', "amp.custom_fwd(args..., device_type='cuda')")
    if fwd is None:
        return functools.partial(autocast_mode.custom_fwd, device_type='cuda', cast_inputs=cast_inputs)
    return autocast_mode.custom_fwd(fwd, device_type='cuda', cast_inputs=cast_inputs)


def cuda_custom_bwd(bwd):
    """``leafgrad.cuda.amp.custom_bwd``: ``amp.custom_bwd`` with device_type='cuda' (deprecated)."""
    _warn('cuda.amp.custom_bwd', "amp.custom_bwd(args..., device_type='cuda')")
    return autocast_mode.custom_bwd(bwd, device_type='cuda')


def amp_definitely_not_available():
    return not backend.cuda_available()
