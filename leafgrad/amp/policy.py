"""Autocast's state and its three cast policies, as PyTorch's ``aten/src/ATen/autocast_mode.cpp``
defines them for the CPU.

The ops read one flag, ``state.on`` (a thread-local attribute: whether autocast is enabled for
any device type), and only when it is set call the policy their PyTorch namesake follows:

* ``lower_precision``: matrix products and convolutions (mm, bmm, matmul, addmm, baddbmm,
  addbmm, linear, conv*, conv_transpose*, prelu, scaled_dot_product_attention) run in the
  autocast dtype (bfloat16 by default on the CPU);
* ``fp32``: the losses, prod, cdist, 3-d pooling, reflection/replication padding, grid_sample
  and the linear-algebra decompositions run in float32;
* ``promote``: cat, stack and index_copy run in the widest floating dtype among their inputs.

A tensor is cast when it is floating point, not float64, and on the device whose autocast is
enabled; the cast is an ordinary recorded ``to`` (ToCopyBackward0), so that the gradient of a
float32 leaf arrives in float32. A float32 leaf that requires grad (a weight) is cast once per
autocast region and the cast is reused (PyTorch's cast cache, cleared when the outermost region
exits), so that the weight's uses share one ToCopyBackward0 node, as in PyTorch.
"""
import _thread  # (threading.local is _thread._local: importing threading costs ~0.8 ms)
import weakref

from .. import backend
from ..tensor import Tensor as _Tensor


class _State(_thread._local):
    # Class attributes are the defaults every new thread starts from (PyTorch's state is per thread).
    on = False            # autocast enabled for some device type: the flag the ops test
    cpu = False
    cuda = False
    cpu_dtype = None      # None: bfloat16, made on first use (ml_dtypes is imported lazily)
    cuda_dtype = None     # None: float16
    cache_enabled = True
    nesting = 0


state = _State()

# id(float32 leaf) -> (weakref to it, its cast): PyTorch's cache is one for all threads, as here.
_cache = {}


def is_enabled(device_type):
    return state.cpu if device_type == 'cpu' else state.cuda


def set_enabled(device_type, enabled):
    enabled = bool(enabled)
    if device_type == 'cpu':
        state.cpu = enabled
    else:
        state.cuda = enabled
    state.on = state.cpu or state.cuda


def get_dtype(device_type):
    if device_type == 'cpu':
        return state.cpu_dtype or backend._make_bfloat16()
    return state.cuda_dtype or backend.float16


def set_dtype(device_type, dtype):
    if device_type == 'cpu':
        state.cpu_dtype = dtype
    else:
        state.cuda_dtype = dtype


def clear_cache():
    _cache.clear()


class suspended:
    """No autocasting inside (for an op that computes its bfloat16 case in float32 itself)."""

    def __enter__(self):
        self.prev, state.on = state.on, False

    def __exit__(self, *exc):
        state.on = self.prev


def _device_type(args):
    for a in args:
        if isinstance(a, _Tensor):
            return 'cpu' if type(a._data) is backend.numpy.ndarray else 'cuda'
    return None


def _eligible(t, device_type):
    kind = t._data.dtype.kind
    return (kind == 'V' or (kind == 'f' and t._data.dtype.itemsize != 8)) and \
        ('cpu' if type(t._data) is backend.numpy.ndarray else 'cuda') == device_type


def _cast(t, dtype, device_type, cacheable):
    if not isinstance(t, _Tensor) or t._data.dtype == dtype.np or not _eligible(t, device_type):
        return t
    if cacheable and state.cache_enabled and t._requires_grad and t._grad_fn is None and t._base is None \
            and t._data.dtype == backend.numpy.float32:
        hit = _cache.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        cast = t.to(dtype)
        _cache[id(t)] = (weakref.ref(t), cast)
        return cast
    return t.to(dtype)


def lower_precision(*args):
    """``args`` for an op that autocast runs in its lower-precision dtype (None and non-tensors
    pass through)."""
    device_type = _device_type(args)
    if device_type is None or not is_enabled(device_type):
        return args
    dtype = get_dtype(device_type)
    return tuple([_cast(a, dtype, device_type, True) for a in args])


def fp32(*args):
    """``args`` for an op that autocast runs in float32."""
    device_type = _device_type(args)
    if device_type is None or not is_enabled(device_type):
        return args
    return tuple([_cast(a, backend.float32, device_type, False) for a in args])


def promote(tensors):
    """A sequence of tensors for cat/stack/index_copy: eligible ones cast to the widest floating
    dtype among them (float32 wins over the autocast dtype; float64 ones are left alone)."""
    device_type = _device_type(tensors)
    if device_type is None or not is_enabled(device_type):
        return tensors
    widest = get_dtype(device_type)
    for t in tensors:
        if isinstance(t, _Tensor) and _eligible(t, device_type) and t._data.dtype != widest.np:
            if t._data.dtype != backend.numpy.float32 and widest is not backend.float32:
                raise RuntimeError('Unexpected floating ScalarType in at::autocast::prioritize')
            widest = backend.float32
    return type(tensors)([_cast(t, widest, device_type, False) for t in tensors])

