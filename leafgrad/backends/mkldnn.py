"""``leafgrad.backends.mkldnn``: leafgrad uses no oneDNN; ``is_available()`` is False and the
``enabled`` and ``deterministic`` flags are stored and read back (a bool, as PyTorch checks)."""
import sys
import types
from contextlib import contextmanager

from . import bool_flag

_flags = {'enabled': True, 'deterministic': False}


def is_available():
    """Whether oneDNN (mkldnn) kernels are usable: never in leafgrad."""
    return False


def set_flags(_enabled=None, _deterministic=None):
    """Set the flags given (not None); returns the previous ones."""
    module = sys.modules[__name__]
    orig = (module.enabled, module.deterministic)
    if _enabled is not None:
        module.enabled = _enabled
    if _deterministic is not None:
        module.deterministic = _deterministic
    return orig


@contextmanager
def flags(enabled=False, deterministic=False):
    """The flags set for the ``with`` block, the previous ones back after it."""
    orig = set_flags(enabled, deterministic)
    try:
        yield
    finally:
        set_flags(*orig)


class _MkldnnModule(types.ModuleType):
    enabled = bool_flag(_flags, 'enabled', 'set_enabled_mkldnn')
    deterministic = bool_flag(_flags, 'deterministic', 'set_deterministic_mkldnn')


sys.modules[__name__].__class__ = _MkldnnModule
