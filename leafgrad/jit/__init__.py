"""``leafgrad.jit``: TorchScript's entry points, as PyTorch runs them with ``PYTORCH_JIT=0``.

leafgrad has no TorchScript compiler: it runs every function and module eagerly, which is what
PyTorch itself does when TorchScript is switched off (``PYTORCH_JIT=0``), and that is what these
names do here. ``script(fn_or_module)`` and ``trace(fn_or_module, example_inputs)`` return their
argument itself (``trace`` does not run it, nor check it against its example inputs: PyTorch
with the JIT off does neither); ``script_method``, ``ignore``, ``unused``, ``export`` and
``script_if_tracing`` return the function they decorate; ``is_scripting()`` and
``is_tracing()`` are False; ``ScriptModule`` is an ``nn.Module``; ``annotate`` returns its
value, ``Attribute`` its value, ``Final`` is ``typing.Final`` and ``isinstance`` checks
parameterised containers (``List[int]``, ``Dict[str, Tensor]`` …) at run time. Like PyTorch 2.13,
``script``, ``trace``, ``trace_module`` and ``script_method`` give a DeprecationWarning.

There is no ``save`` or ``load`` (leafgrad writes no TorchScript archives), nor ``fork``,
``interface`` or ``freeze``.

>>> import leafgrad
>>> @leafgrad.jit.script
... def double(x):
...     return x * 2
>>> double(leafgrad.tensor([1.0, 2.0]))
tensor([2., 4.])
"""
import collections.abc
import importlib as _importlib
import types
import typing
import warnings
from typing import Final

__all__ = ['Attribute', 'Error', 'Final', 'ScriptFunction', 'ScriptModule', 'TracerWarning', 'annotate', 'export',
           'ignore', 'is_scripting', 'is_tracing', 'isinstance', 'script', 'script_if_tracing', 'script_method',
           'trace', 'trace_module', 'unused']

_builtin_isinstance = isinstance


def _deprecated(name):
    # attributed to this module (stacklevel 1), as PyTorch's are to its own files: shown only
    # where a program asks for DeprecationWarnings
    warnings.warn(f'`leafgrad.jit.{name}` is deprecated. Please switch to `leafgrad.compile` or `leafgrad.export`.',
                  DeprecationWarning)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The function, module or class itself, to run eagerly (see the module docstring)."""
    _deprecated('script')
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """``func`` itself, to run eagerly; it is not run on ``example_inputs`` (see the module docstring)."""
    _deprecated('trace')
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5, strict=True,
                 _force_outplace=False, _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """``mod`` itself, to run eagerly (see the module docstring)."""
    _deprecated('trace_method')  # (PyTorch's warning names trace_method)
    return mod


def script_method(fn):
    _deprecated('script_method')
    return fn


def script_if_tracing(fn):
    """``fn``: nothing is ever being traced."""
    return fn


def ignore(drop=False, **kwargs):
    """``@ignore`` and ``@ignore(drop=...)``: the function, left to Python (as everything is here)."""
    if callable(drop):
        return drop
    if not _builtin_isinstance(drop, bool):
        raise RuntimeError(f'Argument to @leafgrad.jit.ignore must be a bool or a function but got {drop}')
    drop_on_export = kwargs.pop('drop_on_export', None)
    if drop or drop_on_export:
        warnings.warn('ignore(True) has been deprecated. TorchScript will now drop the function call on '
                      'compilation. Use leafgrad.jit.unused now. {}', FutureWarning, stacklevel=2)
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


def Attribute(value, type):  # noqa: N802  (PyTorch's name; a namedtuple only when scripting)
    return value


def isinstance(obj, target_type):
    """``builtins.isinstance`` that also checks ``List[T]``, ``Dict[K, V]``, ``Tuple[...]`` and ``Optional[T]``
    element by element, as PyTorch's eager ``jit.isinstance`` does (an empty container matches any
    element type, with PyTorch's warning)."""
    if _builtin_isinstance(target_type, collections.abc.Container):
        if not _builtin_isinstance(target_type, tuple):
            raise RuntimeError('The second argument to `leafgrad.jit.isinstance` must be a type or a tuple of types')
        return any(isinstance(obj, t) for t in target_type)
    if typing.get_origin(target_type) is None:
        return _builtin_isinstance(obj, target_type)
    return _container_matches(obj, target_type)


def _container_matches(obj, target_type):
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is typing.Union or origin is types.UnionType:  # Optional[T] too: None always matches
        if obj is None:
            return True
        for t in args:
            if typing.get_origin(t) is not None:
                return _container_matches(obj, t)  # the first container type decides, as in PyTorch
            if _builtin_isinstance(obj, t):
                return True
        return False
    if origin not in (list, dict, tuple):
        return False
    if _builtin_isinstance(obj, (list, dict, tuple)) and len(obj) == 0:
        warnings.warn('The inner type of a container is lost when calling leafgrad.jit.isinstance in eager mode. For '
                      'example, List[int] would become list and therefore falsely return True for List[float] or '
                      'List[str].', UserWarning, stacklevel=3)
    if not _builtin_isinstance(obj, origin):
        return False
    if origin is list:
        return all(_matches(x, args[0]) for x in obj)
    if origin is dict:
        return all(_builtin_isinstance(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    return len(obj) == len(args) and all(_matches(x, t) for x, t in zip(obj, args))


def _matches(obj, t):
    return _container_matches(obj, t) if typing.get_origin(t) is not None else _builtin_isinstance(obj, t)


class Error(Exception):
    """TorchScript's runtime error (never raised by leafgrad, which runs no TorchScript)."""


class TracerWarning(Warning):
    """The category of PyTorch's tracer warnings, for warning filters (leafgrad traces nothing)."""


def _script_module_base():
    from ..nn import Module  # (loaded when first used: import leafgrad.jit does not load nn)

    class ScriptModule(Module):
        """An ``nn.Module``: what subclasses of PyTorch's ``ScriptModule`` are with the JIT off."""
        __module__ = 'leafgrad.jit'
        __qualname__ = 'ScriptModule'
    return ScriptModule


class ScriptFunction:
    """The type of a scripted function; leafgrad's ``script`` returns the function itself, so nothing is one."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'leafgrad.jit.ScriptFunction' instances")


def __getattr__(name):
    # nn (and so ScriptModule) loads only when a program asks for ScriptModule
    if name == 'ScriptModule':
        globals()['ScriptModule'] = cls = _script_module_base()
        return cls
    if name == 'annotations':
        return _importlib.import_module('.annotations', __name__)
    raise AttributeError(f"module 'leafgrad.jit' has no attribute '{name}'")
