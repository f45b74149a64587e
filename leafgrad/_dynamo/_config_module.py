"""A configuration module as PyTorch's (``torch._dynamo.config``, ``torch._inductor.config``):
a fixed set of names, each read as its value (PyTorch's default until set), ``patch`` to set
some for a block or a function. A name it does not have raises PyTorch's AttributeError. A
setting leafgrad.compile does not read is kept, and setting it warns once that it has no
effect here (nothing is accepted silently)."""
import contextlib
import copy
import types
import warnings

from ._torch_configs import Alias


class ConfigModule(types.ModuleType):
    """The class of a config module (``install`` makes a module one)."""

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        if name in self._prefixes:
            return _Section(self, name + '.')
        return self._get(name)

    def __setattr__(self, name, value):
        if name.startswith('_') and name not in self._defaults or name in self.__dict__:
            super().__setattr__(name, value)
        else:
            self._set(name, value)

    def __delattr__(self, name):
        self._values.pop(self._name_of(name), None)

    def __dir__(self):
        return sorted(set(super().__dir__()) | {name.split('.')[0] for name in self._defaults})

    # -- the settings, by full name ('triton.cudagraphs') ---------------------------------------
    def _name_of(self, name):
        if name not in self._defaults:
            raise AttributeError(f'{self.__name__}.{name} does not exist')
        target = self._defaults[name]
        return str(target) if type(target) is Alias else name

    def _get(self, name):
        name = self._name_of(name)
        if name in self._values:
            return self._values[name]
        default = self._defaults[name]
        if isinstance(default, (list, set, dict)):  # (a mutable default: the module's own copy, kept)
            default = self._values[name] = copy.deepcopy(default)
        return default

    def _set(self, name, value):
        name = self._name_of(name)
        if name not in self._read and name not in self._warned:
            self._warned.add(name)
            warnings.warn(f'{self.__name__}.{name} is not read by leafgrad.compile: setting it has no effect',
                          UserWarning, stacklevel=3)
        self._values[name] = value

    def patch(self, arg1=None, arg2=None, **changes):
        """The settings ``changes`` (or ``patch(name, value)``, or ``patch({name: value})``)
        for the ``with`` block, or for each call of the function it decorates."""
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        for name in changes:
            self._name_of(name)
        return _Patch(self, changes)

    def get_config_copy(self):
        return {name: self._get(name) for name, default in self._defaults.items() if type(default) is not Alias}


class _Section:
    """A dotted part of a config (``torch._inductor.config.triton``)."""

    def __init__(self, config, prefix):
        object.__setattr__(self, '_config', config)
        object.__setattr__(self, '_prefix', prefix)

    def __getattr__(self, name):
        return self._config._get(self._prefix + name)

    def __setattr__(self, name, value):
        self._config._set(self._prefix + name, value)

    def __delattr__(self, name):
        delattr(self._config, self._prefix + name)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, config, changes):
        self.config, self.changes, self.saved = config, changes, []

    def __enter__(self):
        values = self.config._values
        missing = object()
        self.saved.append({self.config._name_of(n): values.get(self.config._name_of(n), missing)
                           for n in self.changes})
        for name, value in self.changes.items():
            self.config._set(name, value)
        self.missing = missing

    def __exit__(self, *exc):
        for name, value in self.saved.pop().items():
            if value is self.missing:
                self.config._values.pop(name, None)
            else:
                self.config._values[name] = value
        return False


def install(module, defaults, read=()):
    """Make ``module`` a ConfigModule of ``defaults`` ({name: default or Alias}); ``read``: the
    names leafgrad.compile reads."""
    module.__class__ = ConfigModule
    vars(module).update(_defaults=defaults, _values={}, _read=frozenset(read), _warned=set(),
                        _prefixes=frozenset(name.split('.')[0] for name in defaults if '.' in name))


__all__ = ['ConfigModule', 'install']
