"""``autocast``: a context manager and decorator that enables autocasting in a region.

>>> import leafgrad as torch
>>> a, b = torch.ones(2, 3), torch.ones(3, 4)
>>> with torch.autocast('cpu'):
...     c = a @ b               # a lower-precision op: computed in bfloat16
...     s = c.sum()             # not listed: runs in the dtype it is given
>>> c.dtype, s.dtype, (a @ b).dtype
(leafgrad.bfloat16, leafgrad.bfloat16, leafgrad.float32)

Entering saves the device type's state (enabled, dtype, cache) and sets it; exiting restores it
and, when the outermost region ends, clears the cast cache. Regions nest: ``autocast(...,
enabled=False)`` inside a region turns autocasting off for a sub-region.
"""
import functools
import warnings

from .. import backend
from . import policy
from ..tensor import Tensor

__all__ = ['autocast_decorator', 'autocast', 'is_autocast_available', 'custom_fwd', 'custom_bwd']


def is_autocast_available(device_type):
    """Whether autocast can run on ``device_type`` (leafgrad's device types: 'cpu' and 'cuda')."""
    return backend.device(device_type).type in ('cpu', 'cuda')


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    """Run the region's ops in ``dtype`` where PyTorch's autocast does (see ``amp/policy.py``).

    Parameters
    ----------
    device_type : str
        'cpu' or 'cuda': the device whose tensors are autocast.
    dtype : leafgrad.dtype, optional
        bfloat16 (the CPU's default) or float16 (CUDA's default).
    enabled : bool
        False makes a region without autocasting (also inside an enabled one).
    cache_enabled : bool, optional
        Whether a float32 weight's cast is reused within the region (default: the current setting).
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f'Expected `device_type` of type `str`, got: `{type(device_type)}`')
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{self.device}'")
        self._cache_enabled = policy.state.cache_enabled if cache_enabled is None else cache_enabled
        if enabled:
            if self.device == 'cuda':
                if not backend.cuda_available():
                    warnings.warn('CUDA is not available or torch_xla is imported. Disabling autocast.', stacklevel=2)
                    enabled = False
                elif self.fast_dtype is backend._make_bfloat16():  # CuPy's arrays have no bfloat16
                    raise RuntimeError('Current CUDA Device does not support bfloat16. Please switch dtype to '
                                       'float16.')
            elif self.fast_dtype not in (backend._make_bfloat16(), backend.float16):
                name = self.device.upper()
                warnings.warn(f'In {name} autocast, but the target dtype is not supported. Disabling autocast.\n'
                              f'{name} Autocast only supports dtypes of leafgrad.bfloat16, leafgrad.float16 '
                              'currently.', stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        state = policy.state
        self.prev_cache_enabled = state.cache_enabled
        self.prev = policy.is_enabled(self.device)
        self.prev_fastdtype = policy.get_dtype(self.device)
        policy.set_enabled(self.device, self._enabled)
        policy.set_dtype(self.device, self.fast_dtype)
        state.nesting += 1
        state.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        state = policy.state
        state.nesting -= 1
        if state.nesting == 0:
            policy.clear_cache()
        policy.set_enabled(self.device, self.prev)
        policy.set_dtype(self.device, self.prev_fastdtype)
        state.cache_enabled = self.prev_cache_enabled
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f'autocast()(func) requires a callable, but got {type(func).__name__}. Did you mean to '
                            'use autocast as a context manager? For example:\n'
                            '    with torch.autocast(device_type=...):\n'
                            '        output = model(input)')
        return autocast_decorator(self, func)


# ---- the state, as torch.* functions ---------------------------------------------------------

def _device_type_arg(device_type):
    if not isinstance(device_type, str):
        raise TypeError(f'is_autocast_enabled(): argument \'device_type\' (position 1) must be str, not '
                        f'{type(device_type).__name__}')
    return backend.device(device_type).type


def is_autocast_enabled(device_type=None):
    """Whether autocast is enabled for ``device_type`` (no argument: CUDA, as in PyTorch)."""
    return policy.is_enabled('cuda' if device_type is None else _device_type_arg(device_type))


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # set_autocast_enabled(enabled): CUDA's, as in PyTorch
        device_type, enabled = 'cuda', device_type
    policy.set_enabled(_device_type_arg(device_type), enabled)


def get_autocast_dtype(device_type):
    return policy.get_dtype(_device_type_arg(device_type))


def set_autocast_dtype(device_type, dtype):
    policy.set_dtype(_device_type_arg(device_type), dtype)


def is_autocast_cache_enabled():
    return policy.state.cache_enabled


def set_autocast_cache_enabled(enabled):
    policy.state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    policy.clear_cache()


def autocast_increment_nesting():
    policy.state.nesting += 1
    return policy.state.nesting


def autocast_decrement_nesting():
    policy.state.nesting -= 1
    return policy.state.nesting


def _deprecated(old, new):
    warnings.warn(f'leafgrad.{old}() is deprecated. Please use leafgrad.{new} instead.', DeprecationWarning,
                  stacklevel=3)


def is_autocast_cpu_enabled():
    _deprecated('is_autocast_cpu_enabled', "is_autocast_enabled('cpu')")
    return policy.is_enabled('cpu')


def get_autocast_cpu_dtype():
    _deprecated('get_autocast_cpu_dtype', "get_autocast_dtype('cpu')")
    return policy.get_dtype('cpu')


def get_autocast_gpu_dtype():
    _deprecated('get_autocast_gpu_dtype', "get_autocast_dtype('cuda')")
    return policy.get_dtype('cuda')


# what leafgrad/__init__.py exports as leafgrad.<name>
STATE_FUNCTIONS = ['is_autocast_enabled', 'set_autocast_enabled', 'get_autocast_dtype', 'set_autocast_dtype',
                   'is_autocast_cache_enabled', 'set_autocast_cache_enabled', 'clear_autocast_cache',
                   'autocast_increment_nesting', 'autocast_decrement_nesting', 'is_autocast_cpu_enabled',
                   'get_autocast_cpu_dtype', 'get_autocast_gpu_dtype']


# ---- custom autograd functions ----------------------------------------------------------------

def _cast(value, device_type, dtype):
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not backend.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or isinstance(value, backend.numpy.ndarray):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's ``forward``: with ``cast_inputs``, inside an autocast region its
    floating inputs are cast to that dtype and it runs with autocast off; without, it runs under
    the current autocast state, which ``custom_bwd`` restores for ``backward``."""
    if not isinstance(device_type, str):
        raise ValueError(f'Expected `device_type` of type `str`, got: `{type(device_type)}`')
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's ``backward``: it runs under the autocast state of forward."""
    if not isinstance(device_type, str):
        raise ValueError(f'Expected `device_type` of type `str`, got: `{type(device_type)}`')
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
