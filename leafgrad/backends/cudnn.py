"""``leafgrad.backends.cudnn``: leafgrad uses no cuDNN; the flags are stored and read back.

``is_available()`` is False and ``version()`` None, as on a CPU-only PyTorch; ``benchmark``,
``deterministic``, ``enabled`` and ``allow_tf32`` take a bool (PyTorch's RuntimeError otherwise)
and, as on PyTorch's CPU, change nothing computed.
"""
import sys
import types
from contextlib import contextmanager

from . import bool_flag

_flags = {'enabled': True, 'benchmark': False, 'deterministic': False, 'allow_tf32': True}


def is_available():
    """Whether cuDNN is usable: never in leafgrad."""
    return False


def version():
    """cuDNN's version: None, as PyTorch says where cuDNN is not available."""
    return None


def is_acceptable(tensor):
    """Whether cuDNN could take ``tensor``: never in leafgrad."""
    return False


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None):
    """Set the flags given (not None); returns the previous ones, in this order."""
    module = sys.modules[__name__]
    orig = (module.enabled, module.benchmark, None, module.deterministic, module.allow_tf32)
    for name, value in (('enabled', _enabled), ('benchmark', _benchmark), ('deterministic', _deterministic),
                        ('allow_tf32', _allow_tf32)):
        if value is not None:
            setattr(module, name, value)
    return orig


@contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """The flags set for the ``with`` block, the previous ones back after it."""
    orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        yield
    finally:
        set_flags(*orig)


class _CudnnModule(types.ModuleType):
    enabled = bool_flag(_flags, 'enabled', 'set_enabled_cudnn')
    benchmark = bool_flag(_flags, 'benchmark', 'set_benchmark_cudnn')
    deterministic = bool_flag(_flags, 'deterministic', 'set_deterministic_cudnn')
    allow_tf32 = bool_flag(_flags, 'allow_tf32', 'set_allow_tf32_cublas')  # (PyTorch's message names cuBLAS)


benchmark_limit = None  # as PyTorch has it without cuDNN: a plain attribute
sys.modules[__name__].__class__ = _CudnnModule
