"""``leafgrad.utils.deterministic.fill_uninitialized_memory``: whether, under
``leafgrad.use_deterministic_algorithms(True)``, ``empty`` fills the memory it returns (NaN for
floating types, the largest value for integers), as in PyTorch. On by default."""
import sys
import types

from .. import _settings


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        return _settings._fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        if type(mode) is not bool:
            raise RuntimeError(f'expected a bool, but got {type(mode).__name__}')
        _settings._fill_uninitialized_memory = mode
        _settings._sync_fill()


sys.modules[__name__].__class__ = _Deterministic
