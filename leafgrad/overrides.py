"""``__torch_function__``: objects that stand in for tensors in leafgrad's functions.

An object whose type defines ``__torch_function__`` (``torch.fx.Proxy``, or a class of yours)
may be passed to ``leafgrad.cat``, ``leafgrad.nn.functional.relu`` and the other public
functions; instead of computing, the function calls ``type(obj).__torch_function__(func, types,
args, kwargs)`` and returns what that returns, as PyTorch does.

Design note
-----------
PyTorch checks every argument of every call for an override. leafgrad's functions do not: the
check would cost every op a scan of its arguments, for the few programs that use overrides. The
check is switched on instead, once per process, by the first use of a type that needs it
(``enable()``, called by ``leafgrad.fx`` when it loads and by ``has_torch_function`` when it first
sees such a type): from then on the public functions of ``leafgrad``, ``leafgrad.nn.functional``,
``leafgrad.linalg``, ``leafgrad.special`` and ``leafgrad.fft`` are wrappers that scan their
arguments (one level into lists and tuples, where PyTorch looks for tensors too) and pass the
call on. A name bound before that (``from leafgrad import cat``) keeps the function without the
check.

PyTorch's functions written in Python (``torch.nn.functional``'s) hand their override the
arguments in a form of their own: the tensors positionally, the rest by keyword with defaults
filled in (``relu(x, inplace=False)``). A function's override sees the same here: its first
parameter positionally, the others as keywords, defaults included (``_python_level_call``).
"""
import functools
import inspect
import sys
from types import ModuleType

import leafgrad  # (the namespace whose public functions enable() wraps: this module sits above it)
from .tensor import Tensor

__all__ = ['has_torch_function', 'handle_torch_function', 'is_tensor_like', 'enable']

_enabled = False

# PyTorch implements these in C++: an override sees the arguments as the caller passed them.
# The rest of torch.nn.functional is Python, whose overrides see keywords (module docstring).
_NN_BUILTINS = frozenset({'linear', 'bilinear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d',
                          'conv_transpose2d', 'conv_transpose3d', 'avg_pool1d', 'avg_pool2d', 'avg_pool3d',
                          'pad', 'pixel_shuffle', 'pixel_unshuffle', 'logsigmoid', 'hardtanh_', 'elu_',
                          'leaky_relu_', 'rrelu_', 'softplus', 'relu_', 'gelu', 'hardshrink', 'tanhshrink',
                          'softshrink', 'cosine_similarity', 'pdist', 'one_hot', 'channel_shuffle',
                          'native_channel_shuffle', 'scaled_dot_product_attention', 'adaptive_avg_pool1d',
                          'silu', 'mish', 'hardswish', 'sigmoid', 'tanh'})


def _overriding_type(obj):
    """``type(obj)`` if it overrides leafgrad's functions, else None."""
    cls = type(obj)
    return cls if getattr(cls, '__torch_function__', None) is not None and not _is_tensor_class(cls) else None


def _is_tensor_class(cls):
    return issubclass(cls, Tensor) and cls.__dict__.get('__torch_function__') is None and \
        getattr(cls, '__torch_function__', None) is getattr(Tensor, '__torch_function__', None)


def _overriding_types(args, kwargs):
    """The types among the arguments that override, in the order met (one level into lists
    and tuples), each once."""
    found = []
    for value in (*args, *kwargs.values()):
        for item in (value if isinstance(value, (list, tuple)) else (value,)):
            cls = _overriding_type(item)
            if cls is not None and cls not in found:
                found.append(cls)
    return found


def has_torch_function(relevant_args):
    """Whether any of ``relevant_args`` (one level into lists and tuples) overrides leafgrad's
    functions; the first such answer switches on the check in every public function."""
    found = bool(_overriding_types(tuple(relevant_args), {}))
    if found:
        enable()
    return found


def is_tensor_like(obj):
    """A tensor, or an object that overrides leafgrad's functions."""
    return isinstance(obj, Tensor) or _overriding_type(obj) is not None


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``public_api``'s overrides, most derived type first, until one does not return
    ``NotImplemented``; PyTorch's TypeError if all do."""
    types = _overriding_types(tuple(relevant_args) + args, kwargs)
    # a subclass is asked before its base class, as PyTorch does
    types.sort(key=lambda cls: -sum(issubclass(cls, other) for other in types))
    for cls in types:
        result = cls.__torch_function__(public_api, tuple(types), args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, '__module__', 'torch') + '.' + getattr(public_api, '__name__', repr(public_api))
    raise TypeError(f'no implementation found for {name!r} on types that implement __torch_function__: '
                    f'{[cls for cls in types]}')


def _python_level_call(function, args, kwargs):
    """``args, kwargs`` as a Python-level torch.nn.functional function hands them to an override:
    the first parameter positionally, every other one by keyword, defaults filled in."""
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs
    bound.apply_defaults()
    items = list(bound.arguments.items())
    if not items:
        return args, kwargs
    positional, keywords = (items[0][1],), {}
    for name, value in items[1:]:
        keywords[name] = value
    return positional, keywords


# The functions behind the wrappers, in a module of their own: the profiler, forward-mode AD and
# vmap replace an op wherever a module's globals hold it while they run, here too, so that a call
# made through a wrapper meets their replacement as any other call does.
_undispatched = ModuleType(__name__ + '._undispatched')
sys.modules[_undispatched.__name__] = _undispatched


def _dispatching(function, key, python_level):
    """``function`` (kept in ``_undispatched`` under ``key``) with the override check in front."""
    originals = vars(_undispatched)
    originals[key] = function

    @functools.wraps(function)
    def dispatching(*args, **kwargs):
        for value in args:
            if _overriding_type(value) is not None or isinstance(value, (list, tuple)) and \
                    any(_overriding_type(item) is not None for item in value):
                break
        else:
            if not kwargs or not _overriding_types((), kwargs):
                return originals[key](*args, **kwargs)
        call_args, call_kwargs = _python_level_call(function, args, kwargs) if python_level else (args, kwargs)
        return handle_torch_function(dispatching, (), *call_args, **call_kwargs)
    dispatching._dispatches = function
    return dispatching


def _namespaces():
    # (loaded when enable() first runs: the profiler, which imports this module, loads none of them)
    from .nn import functional
    from . import fft, linalg, special
    return ((leafgrad, False), (functional, True), (linalg, False), (special, False), (fft, False))


def enable():
    """Switch on the override check in every public function (once per process)."""
    global _enabled
    if _enabled:
        return
    _enabled = True
    leafgrad.ops.load()  # (the op families imported on first use: their functions bound, to be wrapped)
    for namespace, python_level in _namespaces():
        for name, function in list(vars(namespace).items()):
            if name.startswith('_') or not inspect.isfunction(function) or function is Tensor or \
                    not (function.__module__ or '').startswith('leafgrad') or hasattr(function, '_dispatches'):
                continue
            level = python_level and name not in _NN_BUILTINS
            dispatching = _dispatching(function, f'{namespace.__name__}.{name}', level)
            # an alias is its own function, as in PyTorch: torch.arctan is named 'arctan', not 'atan'
            dispatching.__name__ = dispatching.__qualname__ = name
            setattr(namespace, name, dispatching)
