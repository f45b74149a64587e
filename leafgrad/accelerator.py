"""``leafgrad.accelerator``: the device-neutral way programs ask for a GPU.

leafgrad's one accelerator is CUDA through CuPy. Without CuPy there is none, and leafgrad
answers as a CPU-only PyTorch: ``current_accelerator()`` is None, ``is_available()`` False,
``device_count()`` 0, and what needs a device raises PyTorch's ``RuntimeError: Cannot access
accelerator device when none is available.`` With CuPy the calls go to ``leafgrad.cuda``.

>>> import leafgrad
>>> device = leafgrad.accelerator.current_accelerator() if leafgrad.accelerator.is_available() else 'cpu'
"""
import warnings

from . import backend, cuda

__all__ = ['current_accelerator', 'current_device_idx', 'current_device_index', 'device_count', 'device_index',
           'empty_cache', 'is_available', 'max_memory_allocated', 'max_memory_reserved', 'memory_allocated',
           'memory_reserved', 'memory_stats', 'reset_peak_memory_stats', 'set_device_idx', 'set_device_index',
           'synchronize']


def current_accelerator(check_available=False):
    """``device(type='cuda')`` where leafgrad has CuPy (and, with ``check_available``, a GPU); else None."""
    if backend._cupy is None or (check_available and not is_available()):
        return None
    return backend.device('cuda')


def is_available():
    return cuda.is_available()


def device_count():
    return cuda.device_count()


def _check():
    if not is_available():
        raise RuntimeError('Cannot access accelerator device when none is available.')


def current_device_index():
    _check()
    return cuda.current_device()


def current_device_idx():
    warnings.warn('Use `current_device_index` instead.', FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    _check()
    cuda.set_device(device)


def set_device_idx(device, /):
    warnings.warn('Use `set_device_index` instead.', FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:
    """Context manager: the accelerator's current device is ``device`` inside the block (None: unchanged)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev_idx)
        return False


def synchronize(device=None, /):
    _check()
    cuda.synchronize(device)


def empty_cache():
    _check()
    cuda.empty_cache()


def memory_allocated(device_index=None, /):
    _check()
    return cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None, /):
    _check()
    return cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None, /):
    _check()
    return cuda.memory_reserved(device_index)


def max_memory_reserved(device_index=None, /):
    _check()
    return cuda.max_memory_reserved(device_index)


def memory_stats(device_index=None, /):
    _check()
    return cuda.memory_stats(device_index)


def reset_peak_memory_stats(device_index=None, /):
    _check()
    cuda.reset_peak_memory_stats(device_index)
