"""Creating tensors: from data, filled, ranges, and random (PyTorch's streams: generator.py)."""
import builtins
import functools
import math
import warnings
from collections import abc as _abc

from . import _memory_format, _random_kernels as kernels, _sequence, backend
from ._arg_parser import Overloads, check_dtype, int_list, missing_message
from .autograd.grad_mode import InferenceCounter, state
from .autograd.origins import note as _note_origin
from .ops._inplace import _type_name
from .ops._op import check_out, fill_out, warn_once
from .ops._util import SCALAR_NAMES, broadcast_error
from .ops.complex_numbers import refused
from .ops.sampling import random_values
from .tensor import Tensor, fitted_scalar

_np = backend.numpy
_wrap = Tensor._wrap


def _finish(data, requires_grad, dtype=None):
    t = _wrap(data)
    if requires_grad:
        t.requires_grad_(True) if data.dtype.kind in 'fVc' else _raise_int_grad()
    if state.inference:
        t._version_counter = InferenceCounter((0,))
    return t


def _raise_int_grad():
    raise RuntimeError('Only Tensors of floating point and complex dtype can require gradients')


def _to_array(data, dtype, device):
    xp = backend.module_for(device)
    if isinstance(data, Tensor):
        arr = data._data
        if dtype is not None:
            arr = arr.astype(backend.to_dtype(dtype).np)
        return xp.array(backend.to_numpy(arr) if xp is _np else arr, copy=True)
    if type(data) is _np.ndarray or (hasattr(data, 'dtype') and hasattr(data, 'shape')):
        _check_numpy_dtype(_np.dtype(data.dtype))
        np_dtype = backend.to_dtype(dtype).np if dtype is not None else backend.from_np(_np.dtype(data.dtype)).np
        return xp.array(data, dtype=np_dtype, copy=True)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, (list, tuple, range)) and isinstance(data, _abc.Sequence):
        data = list(data)  # a deque, a UserList...: PyTorch reads any sequence (PySequence_Check)
    shape = _sequence.shape_of(data)
    np_dtype = backend.to_dtype(dtype).np if dtype is not None else _sequence.infer_dtype(data).np
    if shape:
        arr = _sequence.to_array(data, np_dtype)
    else:
        arr = _sequence.to_array([data], np_dtype).reshape(())
    return arr if xp is _np else xp.asarray(arr)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf holding a copy of ``data``."""
    _options('tensor', None, pin_memory, dtype, requires_grad)
    if isinstance(data, Tensor):
        warnings.warn('To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() '
                      'or sourceTensor.detach().clone().requires_grad_(True), rather than leafgrad.tensor(sourceTensor).',
                      UserWarning, stacklevel=2)
        out = _finish(_to_array(data, dtype, device), requires_grad)
        if data._requires_grad:
            _note_origin(out, 'tensor', data)  # a re-wrapped copy: leafgrad.explain reports it
        return out
    return _finish(_to_array(data, dtype, device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    check_dtype('as_tensor', dtype)
    if isinstance(data, Tensor):
        if (dtype is None or backend.to_dtype(dtype) is data.dtype) and device is None:
            return data
        return data.to(device=device, dtype=dtype)
    if (type(data) is _np.ndarray and device is None and backend._default_device is None
            and (dtype is None or backend.to_dtype(dtype).np == data.dtype)):
        _check_numpy_dtype(data.dtype)
        return _wrap(data)
    return _finish(_to_array(data, dtype, device), False)


asarray = as_tensor


def _check_numpy_dtype(np_dtype):
    """Refuse an array whose dtype PyTorch cannot take from NumPy: also ml_dtypes' bfloat16 (a
    bfloat16 tensor is made with dtype=bfloat16, and has no NumPy view)."""
    if backend.is_bfloat16(np_dtype):
        raise TypeError("can't convert np.ndarray of type ml_dtypes.bfloat16. The only supported types are: "
                        'float64, float32, float16, int64, int32, int16, int8, uint8, and bool.')
    backend.from_np(np_dtype)


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, _np.ndarray):
        raise TypeError(f'expected np.ndarray (got {type(ndarray).__name__})')
    _check_numpy_dtype(ndarray.dtype)
    return _wrap(ndarray)


def _size_by_keyword(factory):
    """``factory(*size, ...)`` that also takes its size by keyword, as PyTorch's do
    (``torch.empty(size=(2, 3))``)."""
    name = factory.__name__

    @functools.wraps(factory)
    def made(*args, **kwargs):
        if 'size' in kwargs:
            if args:
                raise TypeError(f"{name}() got multiple values for argument 'size'")
            args = (kwargs.pop('size'),)
        return factory(*args, **kwargs)
    return made


def _size(size, fname):
    """The shape in ``*size`` (ints, or one sequence of ints), with the TypeError of PyTorch's
    argument parser for anything else and its RuntimeError for a negative size."""
    shape = int_list(size, fname)
    for s in shape:
        if s < 0:
            if fname == 'zeros':
                raise RuntimeError('zeros: Dimension size must be non-negative.')
            raise RuntimeError(f'Trying to create tensor with negative dimension {s}: {list(shape)}')
    return shape


def _is_int(s):
    if isinstance(s, Tensor):
        return s._data.ndim == 0 and s._data.dtype.kind in 'iu'
    return (isinstance(s, int) and not isinstance(s, bool)) or isinstance(s, _np.integer)


def _allocate(make, shape, np_dtype, *args):
    """``make(shape, *args, dtype=np_dtype)``, with PyTorch's errors for a size whose byte count
    overflows and for memory that cannot be had."""
    nbytes = _np.dtype(np_dtype).itemsize
    for s in shape:
        nbytes *= s
    if nbytes >= 2 ** 63:
        raise RuntimeError(f'Storage size calculation overflowed with sizes={list(shape)}')
    try:
        return make(shape, *args, dtype=np_dtype)
    except MemoryError:
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
                           f'you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)') from None


def _dtype_np(dtype, default=None):
    if dtype is None:
        return (default or backend.get_default_dtype()).np
    return backend.to_dtype(dtype).np


def _options(fname, layout, pin_memory, dtype, requires_grad):
    """The options every factory takes: ``layout`` (torch.strided only: leafgrad's tensors are
    dense), ``pin_memory`` (page-locked host memory, which needs an accelerator), ``dtype`` (a
    dtype, not a string nor a NumPy dtype, which PyTorch refuses) and ``requires_grad`` (a bool,
    not 1)."""
    if dtype is not None and type(dtype) is not backend.dtype:
        check_dtype(fname, dtype)
    if type(requires_grad) is not bool:
        raise TypeError(f"{fname}(): argument 'requires_grad' must be bool, not {backend.type_name(requires_grad)}")
    if layout is not None:
        _memory_format.check_layout(layout, fname)
    if pin_memory:
        raise RuntimeError('pin_memory=True requires a CUDA or other accelerator backend; no pinned memory '
                           'allocator is available on this system.')


def _out_dtype(name, out, dtype):
    """The dtype a factory with ``out`` computes in: ``out``'s; one asked for must be it."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if dtype is not None and backend.to_dtype(dtype).np != out._data.dtype:
        raise RuntimeError(f'dtype {SCALAR_NAMES[backend.to_dtype(dtype).np.name]} does not match dtype of out '
                           f'parameter ({SCALAR_NAMES[out._data.dtype.name]})')
    return backend.from_np(out._data.dtype)


def _into_out(name, out, shape, dtype, fill):
    """A factory's out=: out resized to shape (silently, as PyTorch's factories resize) and filled;
    its dtype is the result's, and a dtype asked for must be it. ``fill``: a value, an array of
    the values (the factories that compute theirs), or None (``empty``)."""
    _out_dtype(name, out, dtype)
    if state.grad_enabled and out._requires_grad:
        if fill is not None:
            raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support automatic "
                               'differentiation, but one of the arguments requires grad.')
        if out._data.shape != shape:
            raise RuntimeError('cannot resize variables that require grad')
    if out._data.shape != shape:
        out._data = _allocate(_np.empty, shape, out._data.dtype)
    if fill is not None:
        out._data[...] = fill
    out._version_counter[0] += 1
    return out


def _made_in(out, requires_grad):
    """A factory's ``out`` after it was filled: ``requires_grad=True`` makes it a leaf that
    requires grad, as PyTorch does (refused for an integer ``out``, which keeps its values)."""
    if requires_grad:
        out.requires_grad_(True) if out._data.dtype.kind in 'fVc' else _raise_int_grad()
    return out


def _computed_into(name, out, result):
    """out= of a factory that computes its values (``full``, ``linspace``, ``eye`` ...): ``result``,
    computed in ``out``'s dtype, written into ``out`` (resized silently, as PyTorch does)."""
    return _into_out(name, out, result._data.shape, None, result._data)


def _range_into(name, out, result):
    """``arange``'s out=: ``out`` keeps its shape and strides when it holds as many elements as
    the range (PyTorch fills it in place), else it is resized to the range, with PyTorch's
    warning when it was not empty."""
    n, have = result._data.size, out._data.size
    if have == n and not (state.grad_enabled and out._requires_grad):
        out._data[...] = result._data.reshape(out._data.shape)
        out._version_counter[0] += 1
        return out
    if have != n and have:
        warnings.warn(f'The number of elements in the out tensor of shape {list(out._data.shape)} is {have} which '
                      f'does not match the computed number of elements {n}. Note that this may occur as a result '
                      f'of rounding error. The out tensor will be resized to a tensor of shape ({n},).',
                      UserWarning, stacklevel=3)
    return _into_out(name, out, (n,), None, result._data)


@_size_by_keyword
def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, out=None):
    _options('zeros', layout, pin_memory, dtype, requires_grad)
    shape = _size(size, 'zeros')
    if out is not None:
        return _made_in(_into_out('zeros', out, shape, dtype, 0), requires_grad)
    return _finish(_allocate(backend.module_for(device).zeros, shape, _dtype_np(dtype)), requires_grad)


@_size_by_keyword
def ones(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, out=None):
    _options('ones', layout, pin_memory, dtype, requires_grad)
    shape = _size(size, 'ones')
    if out is not None:
        return _made_in(_into_out('ones', out, shape, dtype, 1), requires_grad)
    return _finish(_allocate(backend.module_for(device).ones, shape, _dtype_np(dtype)), requires_grad)


@_size_by_keyword
def empty(*size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, memory_format=None,
          out=None):
    _options('empty', layout, pin_memory, dtype, requires_grad)
    shape = _size(size, 'empty')
    if out is not None:
        return _made_in(_into_out('empty', out, shape, dtype, None), requires_grad)
    data = _allocate(backend.module_for(device).empty, shape, _dtype_np(dtype))
    if memory_format is not None and memory_format is not _memory_format.contiguous_format:
        _memory_format.check(memory_format, 'empty')
        if memory_format is _memory_format.preserve_format:
            raise RuntimeError('unsupported memory format Preserve')
        data = _memory_format.lay_out(data, memory_format)
    if backend.fill_uninitialized:
        _fill_as_uninitialized(data)
    return _finish(data, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialized tensor of ``size`` laid out in memory in the order ``physical_layout``
    (its dims, outermost first): ``empty_permuted((2, 3, 4), (0, 2, 1))`` has strides (12, 1, 3)."""
    _options('empty_permuted', layout, pin_memory, dtype, requires_grad)
    shape = _size((size,), 'empty_permuted')
    order = tuple(int_list((physical_layout,), 'empty_permuted', 'physical_layout', 2))
    n = len(shape)
    if len(order) != n:
        raise RuntimeError(f'Number of dimensions in size does not match the length of the physical_layout; i.e. '
                           f'len(size) = {n} is not equal to len(physical_layout) = {len(order)}')
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < n:
            raise RuntimeError(f'Dimension out of range (expected to be between 0 and {n - 1}, but got {d} at index '
                               f'{i}).  NB: negative dims not currently supported; file an issue if you want it.')
        if d in seen:
            raise RuntimeError('Duplicate dim not allowed')
        seen.add(d)
    data = _allocate(backend.module_for(device).empty, tuple(shape[d] for d in order), _dtype_np(dtype))
    data = data.transpose(tuple(order.index(d) for d in builtins.range(n)))
    if backend.fill_uninitialized:
        _fill_as_uninitialized(data)
    return _finish(data, requires_grad)


def _fill_as_uninitialized(data):
    """NaN for floating types, the largest value for integers (True for bool), as PyTorch fills."""
    kind = data.dtype.kind
    data.fill(_np.nan if kind in 'fV' else True if kind == 'b' else _np.iinfo(data.dtype).max)


def _check_full_size(fname, size):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")


def _check_fill(fname, fill_value):
    """PyTorch's TypeError for a ``fill_value`` that is no number (``fname``: the function called);
    a 0-dim tensor that requires grad is none either (its number would drop the gradient)."""
    if not isinstance(fill_value, (int, float, complex, _np.number, _np.bool_)) and not (
            isinstance(fill_value, Tensor) and fill_value._data.ndim == 0 and not fill_value._requires_grad):
        raise TypeError(f"{fname}(): argument 'fill_value' (position 2) must be Number, not "
                        f'{type(fill_value).__name__}')


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _options('full', layout, pin_memory, dtype, requires_grad)
    if out is not None:
        result = full(size, fill_value, dtype=_out_dtype('full', out, dtype), device=out.device)
        return _made_in(_computed_into('full', out, result), requires_grad)
    _check_full_size('full', size)
    _check_fill('full', fill_value)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = backend.scalar_dtype(fill_value)
    shape = _size((size,), 'full')
    np_dtype = _dtype_np(dtype)
    fill_value = fitted_scalar(fill_value, np_dtype)
    return _finish(_allocate(backend.module_for(device).full, shape, np_dtype, fill_value), requires_grad)


def _like(fn, input, dtype, device, requires_grad, memory_format, *args):
    """fn's new tensor of input's shape, dtype and device (unless given), laid out as input is
    when that is dense (preserve_format) or in the memory format asked for."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn.__name__}_like(): argument 'input' (position 1) must be Tensor, not "
                        f'{type(input).__name__}')
    dtype = dtype if dtype is not None else input.dtype
    device = device if device is not None else input.device
    out = fn(*args, input._data.shape, dtype=dtype, device=device, requires_grad=requires_grad) if args == () \
        else fn(input._data.shape, *args, dtype=dtype, device=device, requires_grad=requires_grad)
    if memory_format is None and out._data.strides == input._data.strides:
        return out
    out._data = _memory_format.relaid_like(out._data, input._data, _format(memory_format, fn.__name__ + '_like'))
    return out


def _format(memory_format, fname):
    if memory_format is None:
        return _memory_format.preserve_format
    _memory_format.check(memory_format, fname)
    return memory_format


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None):
    _options('zeros_like', layout, pin_memory, dtype, requires_grad)
    return _like(zeros, input, dtype, device, requires_grad, memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None):
    _options('ones_like', layout, pin_memory, dtype, requires_grad)
    return _like(ones, input, dtype, device, requires_grad, memory_format)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None):
    _options('empty_like', layout, pin_memory, dtype, requires_grad)
    return _like(empty, input, dtype, device, requires_grad, memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None):
    _options('full_like', layout, pin_memory, dtype, requires_grad)
    _check_fill('full_like', fill_value)
    return _like(full, input, dtype, device, requires_grad, memory_format, fill_value)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    _options('arange', layout, pin_memory, dtype, requires_grad)
    if out is not None:
        result = arange(start, end, step, dtype=_out_dtype('arange', out, dtype), device=out.device)
        return _made_in(_range_into('arange', out, result), requires_grad)
    given = (start,) if end is None else (start, end) if type(step) is int and step == 1 else (start, end, step)
    if end is None:
        start, end = 0, start
    vals = [_scalar(v) for v in (start, end, step)]
    try:
        if not (vals[2] > 0 or vals[2] < 0):  # (a NaN step too)
            raise RuntimeError('step must be nonzero')
        finite = math.isfinite(vals[0]) and math.isfinite(vals[1])
    except TypeError:  # (a string: PyTorch's parser refuses it)
        _ARANGE_OVERLOADS.bind(given, {})
        raise
    if not finite:
        raise RuntimeError(f'unsupported range: {vals[0]:g} -> {vals[1]:g}')
    if not (vals[2] > 0 and vals[1] >= vals[0] or vals[2] < 0 and vals[1] <= vals[0]):
        raise RuntimeError('upper bound and lower bound inconsistent with step sign')
    if dtype is None:
        dtype = backend.get_default_dtype() if any(isinstance(v, float) for v in vals) else backend.int64
    start, end, step = vals
    n = max(math.ceil((end - start) / step), 0)
    xp = backend.module_for(device)
    np_dtype = backend.to_dtype(dtype).np
    if np_dtype.kind == 'c':
        raise refused('arange_cpu', _np.empty(0, np_dtype))
    # computed in double then cast, as PyTorch computes start + i * step
    data = (start + xp.arange(n, dtype=_np.float64) * step).astype(np_dtype) if np_dtype.kind in 'fV' \
        else xp.arange(start, start + n * step, step)[:n].astype(np_dtype)
    return _finish(data, requires_grad)


def _scalar(v):
    return v.item() if isinstance(v, Tensor) else v


def range_(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    """range(start, end, step=1, ...): ``end`` included, in the default float dtype unless
    ``dtype`` says otherwise (``leafgrad.range``; deprecated, as PyTorch's, for ``arange``)."""
    if end is None:
        raise TypeError(missing_message('range', ['end']))
    warnings.warn("leafgrad.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use leafgrad.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    _options('range', layout, pin_memory, dtype, requires_grad)
    for position, (name, value) in enumerate((('start', start), ('end', end), ('step', step)), 1):
        value = _scalar(value)
        if isinstance(value, str) or not isinstance(value, (int, float, bool, complex)) and \
                not hasattr(value, '__float__'):
            raise TypeError(f"range(): argument '{name}' (position {position}) must be Number, not "
                            f'{backend.type_name(value)}')
    if out is not None:
        result = _inclusive_range(start, end, step, _out_dtype('range', out, dtype), out.device, False)
        return _made_in(_range_into('range', out, result), requires_grad)
    return _inclusive_range(start, end, step, dtype, device, requires_grad)


def _inclusive_range(start, end, step, dtype, device, requires_grad):
    start, end, step = (float(_scalar(v)) for v in (start, end, step))
    if step == 0:
        raise RuntimeError('step must be nonzero')
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f'unsupported range: {start:g} -> {end:g}')
    if not (step > 0 and end >= start or step < 0 and end <= start):
        raise RuntimeError('upper bound and lower bound inconsistent with step sign')
    n = int((end - start) / step) + 1  # (PyTorch's size: the quotient truncated, in double, plus one)
    np_dtype = _dtype_np(dtype)
    if np_dtype.kind == 'c':
        raise refused('range_cpu', _np.empty(0, np_dtype))
    data = (start + backend.module_for(device).arange(n, dtype=_np.float64) * step).astype(np_dtype)
    return _finish(data, requires_grad)


range_.__name__ = range_.__qualname__ = 'range'
range_.__code__ = range_.__code__.replace(co_name='range', co_qualname='range')


def frombuffer(buffer, *, dtype=None, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor on the memory of ``buffer`` (an object with Python's buffer protocol): ``count``
    elements of ``dtype`` (-1: all) from ``offset`` bytes on. A buffer that is not writable is
    copied (with PyTorch's warning, once), where PyTorch writes into it anyway."""
    if dtype is None:
        raise TypeError(missing_message('frombuffer', ['dtype']))
    _options('frombuffer', None, False, dtype, requires_grad)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError('object does not implement Python buffer protocol.') from None
    length, size = view.nbytes, backend.to_dtype(dtype).np.itemsize
    if length == 0 or count == 0:
        raise ValueError(f'both buffer length ({length}) and count ({count}) must not be 0')
    if not 0 <= offset < length:
        raise ValueError(f'offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} '
                         'bytes) minus 1')
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f'buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a '
                             f'multiple of element size ({size})')
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f'requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not be '
                         f'greater than actual buffer length ({length} bytes)')
    data = _np.frombuffer(view.cast('B') if view.ndim != 1 or view.format != 'B' else view,
                          dtype=backend.to_dtype(dtype).np, count=count, offset=offset)
    if not backend.writeable(data):
        warn_once('The given buffer is not writable, and PyTorch does not support non-writable tensors. This means '
                  'you can write to the underlying (supposedly non-writable) buffer using the tensor. You may want '
                  'to copy the buffer to protect its data or make it writable before converting it to a tensor. '
                  'This type of warning will be suppressed for the rest of this program.')
        data = data.copy()
    return _finish(data, requires_grad)




def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    _options('linspace', layout, pin_memory, dtype, requires_grad)
    if out is not None:
        result = linspace(start, end, steps, dtype=_out_dtype('linspace', out, dtype), device=out.device)
        return _made_in(_computed_into('linspace', out, result), requires_grad)
    _check_steps(_LINSPACE_OVERLOADS, start, end, steps)
    start, end, steps = _scalar(start), _scalar(end), int(steps)
    np_dtype = _dtype_np(dtype)
    xp = backend.module_for(device)
    if steps == 1:
        data = xp.full((1,), start, dtype=np_dtype)
    else:
        # PyTorch fills the first half from start and the second half from end (symmetric rounding)
        idx = xp.arange(steps, dtype=_np.float64)
        half = steps // 2
        if np_dtype.kind == 'V':  # bfloat16: PyTorch's step and each product and sum are rounded to it
            idx, start, end = idx.astype(np_dtype), np_dtype.type(start), np_dtype.type(end)
        step = (end - start) / (steps - 1) if np_dtype.kind != 'V' else (end - start) / np_dtype.type(steps - 1)
        data = xp.where(idx < half, start + step * idx, end - step * (steps - idx - 1)).astype(np_dtype)
    return _finish(data, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    _options('logspace', layout, pin_memory, dtype, requires_grad)
    if out is not None:
        result = logspace(start, end, steps, base, dtype=_out_dtype('logspace', out, dtype), device=out.device)
        return _made_in(_computed_into('logspace', out, result), requires_grad)
    _check_steps(_LOGSPACE_OVERLOADS, start, end, steps)
    lin = linspace(start, end, steps, dtype=backend.float64, device=device)
    return _finish((base ** lin._data).astype(_dtype_np(dtype)), requires_grad)


def _check_steps(overloads, start, end, steps):
    """linspace's and logspace's ``steps``: an int (PyTorch's parser refuses a float or a bool,
    listing the four overloads), not negative."""
    if not _is_int(steps):
        overloads.bind((start, end, steps), {})
        raise overloads.invalid((start, end, steps), {})
    if steps < 0:
        raise RuntimeError('number of steps must be non-negative')


_FACTORY_OPTIONS = ('*, Tensor out = None, leafgrad.dtype dtype = None, leafgrad.layout layout = None, leafgrad.device '
                    'device = None, bool pin_memory = False, bool requires_grad = False')
_EYE_OVERLOADS = Overloads('eye', f'(int n, {_FACTORY_OPTIONS})', f'(int n, int m, {_FACTORY_OPTIONS})')
_ARANGE_OVERLOADS = Overloads('arange', f'(Number end, {_FACTORY_OPTIONS})',
                              f'(Number start, Number end, {_FACTORY_OPTIONS.replace("Tensor out = None, ", "")})',
                              f'(Number start, Number end, Number step = 1, {_FACTORY_OPTIONS})')
_BOUNDS = (('Tensor', 'Tensor'), ('Number', 'Tensor'), ('Tensor', 'Number'), ('Number', 'Number'))
_LINSPACE_OVERLOADS = Overloads('linspace', *(f'({a} start, {b} end, int steps, {_FACTORY_OPTIONS})'
                                              for a, b in _BOUNDS))
_LOGSPACE_OVERLOADS = Overloads('logspace', *(f'({a} start, {b} end, int steps, float base = 10.0, {_FACTORY_OPTIONS})'
                                              for a, b in _BOUNDS))
_RANDINT_OVERLOADS = Overloads('randint', *(f'({bounds}tuple of ints size, *, {generator}{_FACTORY_OPTIONS[3:]})'
                                            for bounds in ('int high, ', 'int low, int high, ')
                                            for generator in ('leafgrad.Generator generator, ', '')))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _options('eye', layout, pin_memory, dtype, requires_grad)
    if out is not None:
        result = eye(n, m, dtype=_out_dtype('eye', out, dtype), device=out.device)
        return _made_in(_computed_into('eye', out, result), requires_grad)
    for name, v in (('n', n), ('m', m)):
        if v is not None and not _is_int(v):
            _EYE_OVERLOADS.bind((n,) if m is None else (n, m), {})
        if v is not None and v < 0:
            raise RuntimeError(f'{name} must be greater or equal to 0, got {v}')
    return _finish(backend.module_for(device).eye(n, m if m is not None else n, dtype=_dtype_np(dtype)), requires_grad)


# ---- random: PyTorch's streams (generator.py) through PyTorch's kernels (_random_kernels.py) ----

from .generator import (Generator, default_generator, generator_of as _generator_of,  # noqa: E402
                        get_rng_state, initial_seed, manual_seed, seed, set_rng_state)


def _place(data, device):
    """``data``, drawn on the CPU by leafgrad's generator, on ``device`` (None: the default device)."""
    if device is None:
        device = backend._default_device
        if device is None:
            return data
    if backend.device(device).type != 'cpu':
        data = backend.to_device(data, device)
    return data


def _on_meta(device):
    device = backend._default_device if device is None else device
    return device is not None and backend.device(device).type == 'meta'


def _gpu_of(device, generator):
    """The GPU a factory's tensor lands on when it is drawn there: by the default generator, on a
    'cuda' device (given, or the default device). None: drawn on the CPU by leafgrad's generator."""
    if generator is not None:
        return None
    if device is None:
        device = backend._default_device
        if device is None:
            return None
    device = device if isinstance(device, backend.device) else backend.device(device)
    return device if device.type == 'cuda' else None


def _drawn_on_gpu(device, shape, np_dtype, requires_grad, draw_on_gpu):
    """A factory's tensor drawn on a GPU by CuPy's generator (seeded by ``manual_seed``): no host
    round trip. Its numbers are CuPy's, not those of the CPU's stream (PyTorch's CUDA generator
    gives other numbers than its CPU one too). float16 and bfloat16 are drawn in float32."""
    cp = backend.module_for(device)
    wide = np_dtype if np_dtype.kind != 'f' or np_dtype.itemsize >= 4 else _np.dtype(_np.float32)
    with cp.cuda.Device(device.index or 0):
        data = draw_on_gpu(cp.random.get_random_state(), tuple(shape), wide)
    return _finish(data.astype(np_dtype, copy=False), requires_grad)


def _sampled(shape, dtype, device, requires_grad, draw, like=None, gpu=None):
    """A new tensor of ``shape`` filled by ``draw(n, contiguous)`` (values in the order PyTorch's
    kernel writes them: memory order). A ``*_like`` result keeps ``like``'s layout when that is
    dense, as PyTorch's ``empty_like`` does, and is then filled in that memory order. ``gpu``:
    (the GPU, ``draw_on_gpu(random_state, shape, dtype)``) to draw there instead (real dtypes)."""
    np_dtype = _np.dtype(dtype.np)
    if _on_meta(device):  # shapes without data: PyTorch draws nothing for them
        return _finish(backend.MetaArray(shape, np_dtype), requires_grad)
    if gpu is not None and gpu[0] is not None and not dtype.is_complex:
        return _drawn_on_gpu(gpu[0], shape, np_dtype, requires_grad, gpu[1])
    out = _allocate(_np.empty, shape, np_dtype)
    if isinstance(like, _np.ndarray) and like.ndim > 1 and (not like.flags.c_contiguous or 1 in like.shape):
        out = _memory_format.preserved(out, like)  # (laid out as PyTorch's empty_like(like): the fill's order)
    out[...] = kernels.fill_in_memory_order(out, draw(out.size, out.flags.c_contiguous))
    return _finish(_place(out, device), requires_grad)


def _floating(dtype, op):
    dtype = backend.get_default_dtype() if dtype is None else backend.to_dtype(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise NotImplementedError(f'"{op}" not implemented for \'{_type_name(dtype)}\'')
    return dtype


def _sampled_into(out, sample, dtype, op):
    """A random factory's ``out=``: ``sample(dtype)`` (a new tensor of ``out``'s dtype) written
    into ``out``, resized without a warning as PyTorch's factories resize it, and returned."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if dtype is not None and backend.to_dtype(dtype) != out.dtype:
        raise RuntimeError(f'dtype {_type_name(backend.to_dtype(dtype))} does not match dtype of out parameter '
                           f'({_type_name(out.dtype)})')
    if out._requires_grad and state.grad_enabled:
        raise RuntimeError(f"aten::{op}(): functions with out=... arguments don't support automatic differentiation, "
                           'but one of the arguments requires grad.')
    values = sample(out.dtype)._data
    if out._data.shape == values.shape:
        out._data[...] = values
    else:
        out._data = values
    out._version_counter[0] += 1
    return out


@_size_by_keyword
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Uniform samples on [0, 1): PyTorch's for the same generator state."""
    _options('rand', layout, pin_memory, dtype, requires_grad)
    if out is not None:
        return _made_in(_sampled_into(out, lambda dt: rand(*size, generator=generator, dtype=dt, device=out.device),
                                      dtype, 'rand'), requires_grad)
    g = _generator_of(generator, 'rand')
    dtype = _floating(dtype, 'check_uniform_bounds')
    return _sampled(_size(size, 'rand'), dtype, device, requires_grad,
                    _as_complex_pairs(dtype, lambda n, contiguous: kernels.uniform(g, n, _np.dtype(dtype.to_real().np))),
                    gpu=(_gpu_of(device, generator), _UNIFORM))


@_size_by_keyword
def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Standard normal samples: PyTorch's for the same generator state."""
    _options('randn', layout, pin_memory, dtype, requires_grad)
    if out is not None:
        return _made_in(_sampled_into(out, lambda dt: randn(*size, generator=generator, dtype=dt, device=out.device),
                                      dtype, 'randn'), requires_grad)
    g = _generator_of(generator, 'randn')
    dtype = _floating(dtype, 'normal_kernel_cpu')
    std = 0.5 ** 0.5 if dtype.is_complex else 1.0  # (each part of a complex sample: variance 1/2)
    return _sampled(_size(size, 'randn'), dtype, device, requires_grad, _as_complex_pairs(
        dtype, lambda n, contiguous: kernels.normal(g, n, _np.dtype(dtype.to_real().np), 0.0, std, contiguous)),
        gpu=(_gpu_of(device, generator), _NORMAL))


def _UNIFORM(random_state, shape, dtype):
    return random_state.random_sample(shape, dtype=dtype)


def _NORMAL(random_state, shape, dtype):
    return random_state.standard_normal(shape, dtype=dtype)


def _integers(low, high):
    def draw(random_state, shape, dtype):
        drawn = _np.dtype(_np.int64) if dtype.kind not in 'iu' else dtype
        return random_state.randint(int(low), int(high), shape, dtype=drawn)
    return draw


def _as_complex_pairs(dtype, draw):
    """``draw`` for a complex dtype as PyTorch samples one: 2n real values, read as n (real, imag)
    pairs; ``draw`` itself for a real dtype."""
    if not dtype.is_complex:
        return draw
    return lambda n, contiguous: draw(2 * n, True).view(dtype.np)


_NO_LOW = object()  # randint's low not given (randint(high=9, size=...) draws from 0; randint(size=...) is refused)


def randint(low=_NO_LOW, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    """Integers drawn uniformly from [low, high): ``empty(size).random_(low, high)`` (``out``: of
    any dtype, resized silently)."""
    _options('randint', layout, pin_memory, dtype, requires_grad)
    if low is _NO_LOW:
        if high is None:
            raise _RANDINT_OVERLOADS.invalid((), {k: v for k, v in (('size', size),) if v is not None})
        low = 0
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
        if not _is_int(high):  # (a float bound is not truncated: PyTorch's parser refuses it)
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not {backend.type_name(high)}")
    elif high is None and size is not None:  # randint(high, size=size): PyTorch binds the one bound to high
        if not _is_int(low):
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not {backend.type_name(low)}")
        if not isinstance(size, (tuple, list)) or not all(_is_int(n) for n in size):
            raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
        low, high = 0, low
    elif size is None and high is not None:  # (PyTorch's parser binds randint(5, 2) to (high, size))
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {type(high).__name__}")
    if size is None or not isinstance(size, (tuple, list)) or not (_is_int(low) and _is_int(high)):
        given = (low,) if size is None else (low, high, size)
        _RANDINT_OVERLOADS.bind(given, {})  # (the error of the one overload they could be for, if one)
        raise _RANDINT_OVERLOADS.invalid(given, {})  # (randint(0, 5, 2): PyTorch takes no int as its size here)
    if high is None:
        low, high = 0, low
    if out is not None:
        return _sampled_into(out, lambda dt: randint(low, high, size, generator=generator, dtype=dt,
                                                     device=out.device), dtype, 'randint')
    g = _generator_of(generator, 'randint')
    dtype = backend.int64 if dtype is None else backend.to_dtype(dtype)
    draw = random_values(_np.dtype(dtype.np), (int(low), int(high)), g)
    return _sampled(_size((size,), 'randint'), dtype, device, requires_grad, lambda n, contiguous: draw(n),
                    gpu=(_gpu_of(device, generator), _integers(low, high)))


def randperm(n, *, generator=None, out=None, dtype=None, device=None, requires_grad=False):
    """randperm(n, *, generator=None, out=None, dtype=torch.int64, device=None, requires_grad=False):
    a random permutation of 0 .. n-1, PyTorch's Fisher-Yates shuffle on its stream (``out``: of
    any dtype, resized silently)."""
    if out is not None:
        return _sampled_into(out, lambda dt: randperm(n, generator=generator, dtype=dt, device=out.device), dtype,
                             'randperm')
    check_dtype('randperm', dtype)
    g = _generator_of(generator, 'randperm')
    n = int(n)
    _size((n,), 'randperm')
    dtype = backend.int64 if dtype is None else backend.to_dtype(dtype)
    if dtype.np.kind in 'iu' and n > 0 and n - 1 > _np.iinfo(dtype.np).max:
        raise RuntimeError(f'value cannot be converted to type {dtype.np.name}_t without overflow')
    gpu = _gpu_of(device, generator)
    if gpu is not None:  # (CuPy's shuffle, on the GPU)
        cp = backend.module_for(gpu)
        with cp.cuda.Device(gpu.index or 0):
            return _finish(cp.random.get_random_state().permutation(n).astype(dtype.np), requires_grad)
    return _finish(_place(kernels.randperm(g, n).astype(dtype.np), device), requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None):
    _options('rand_like', layout, pin_memory, dtype, requires_grad)
    g = _generator_of(generator, 'rand_like')
    dtype = _floating(dtype or input.dtype, 'check_uniform_bounds')
    return _sampled(input._data.shape, dtype, device or input.device, requires_grad,
                    lambda n, contiguous: kernels.uniform(g, n, _np.dtype(dtype.np)),
                    like=_memory_format.model_of(input._data, _format(memory_format, 'rand_like')),
                    gpu=(_gpu_of(device or input.device, generator), _UNIFORM))


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None):
    _options('randn_like', layout, pin_memory, dtype, requires_grad)
    g = _generator_of(generator, 'randn_like')
    dtype = _floating(dtype or input.dtype, 'normal_kernel_cpu')
    return _sampled(input._data.shape, dtype, device or input.device, requires_grad,
                    lambda n, contiguous: kernels.normal(g, n, _np.dtype(dtype.np), 0.0, 1.0, contiguous),
                    like=_memory_format.model_of(input._data, _format(memory_format, 'randn_like')),
                    gpu=(_gpu_of(device or input.device, generator), _NORMAL))


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, pin_memory=False,
                 memory_format=None):
    _options('randint_like', layout, pin_memory, dtype, requires_grad)
    if high is None:
        low, high = 0, low
    g = _generator_of(generator, 'randint_like')
    dtype = backend.to_dtype(dtype or input.dtype)
    draw = random_values(_np.dtype(dtype.np), (int(low), int(high)), g)
    return _sampled(input._data.shape, dtype, device or input.device, requires_grad,
                    lambda n, contiguous: draw(n),
                    like=_memory_format.model_of(input._data, _format(memory_format, 'randint_like')),
                    gpu=(_gpu_of(device or input.device, generator), _integers(low, high)))


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, requires_grad=False):
    """normal(mean, std, size=None, *, generator=None, out=None, dtype=None, requires_grad=False):
    normal samples. With tensors, PyTorch's order of operations: standard normals of the
    broadcast shape, times ``std``, plus ``mean``, each rounded in the result's type (``out``'s:
    the samples are drawn in its dtype). ``out`` of numbers and a size: as ``rand``'s."""
    check_dtype('normal', dtype)
    if out is not None and not (isinstance(mean, Tensor) or isinstance(std, Tensor)):
        return _sampled_into(out, lambda dt: normal(mean, std, size, generator=generator, dtype=dt), dtype, 'normal')
    g = _generator_of(generator, 'normal')
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        like = mean if isinstance(mean, Tensor) else std
        if out is not None:  # autograd refused first (mean or std may require grad), as PyTorch
            needing = [t for t in (mean, std) if isinstance(t, Tensor) and t._requires_grad]
            check_out('normal', out, needing[0] if needing else like)
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        if isinstance(std, Tensor):
            if s.size and not (s >= 0).all():
                raise RuntimeError('normal expects all elements of std >= 0.0')
        elif std < 0:
            raise RuntimeError(f'normal expects std >= 0.0, but found std {_g(std)}')
        try:
            shape = _np.broadcast_shapes(_np.shape(m), _np.shape(s))
        except ValueError:
            raise broadcast_error(m, s) from None
        d = _np.dtype(like._data.dtype if out is None else out._data.dtype)
        if out is not None and d.kind not in 'fV':
            raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{_type_name(out.dtype)}\'')
        gpu = _gpu_of(like.device, generator) if out is None else None
        if gpu is not None:  # (drawn on the GPU, scaled and shifted there)
            z = _drawn_on_gpu(gpu, shape, d, False, _NORMAL)._data
            values = z * (s if isinstance(std, Tensor) else d.type(std)) + (m if isinstance(mean, Tensor) else d.type(mean))
            return _finish(values.astype(d, copy=False), requires_grad)
        z = kernels.normal(g, int(_np.prod(shape)), d, 0.0, 1.0 if isinstance(std, Tensor) else std).reshape(shape)
        values = z if not isinstance(std, Tensor) else _in_place_op(z, backend.to_numpy(s), _np.multiply)
        values = _in_place_op(values, backend.to_numpy(m) if isinstance(mean, Tensor) else m, _np.add)
        if out is not None:  # (resized with PyTorch's warning where it held elements)
            return fill_out(out, _np.asarray(values, dtype=d))
        return _finish(_np.asarray(values, dtype=d), requires_grad)
    if std < 0:
        raise RuntimeError(f'normal expects std >= 0.0, but found std {_g(std)}')
    dtype = _floating(dtype, 'normal_kernel_cpu')
    return _sampled(_size((size,), 'normal'), dtype, None, requires_grad,
                    lambda n, contiguous: kernels.normal(g, n, _np.dtype(dtype.np), mean, std, contiguous),
                    gpu=(_gpu_of(None, generator), lambda rs, shape, dt: rs.normal(mean, std, shape, dtype=dt)))


def _in_place_op(out, other, ufunc):
    """``out.op_(other)`` as PyTorch computes it: in the promoted type of two tensors, with a
    number in out's type (float for float16, the number unrounded), the result in out's type."""
    d = out.dtype
    if isinstance(other, _np.ndarray):
        work = _np.promote_types(d, other.dtype)
        return ufunc(out.astype(work, copy=False), other.astype(work, copy=False)).astype(d, copy=False)
    work = _np.float32 if d.itemsize == 2 else d.type
    return ufunc(out.astype(work, copy=False), work(other)).astype(d, copy=False)


def _g(number):
    """A number as PyTorch's C++ prints it in messages (``-1``, not ``-1.0``)."""
    return f'{number:g}' if isinstance(number, float) else number


# ---- Tensor.new_*: a new tensor with this tensor's dtype and device unless told otherwise ------

def _new_like(self, dtype, device):
    return (self.dtype if dtype is None else dtype), (self.device if device is None else device)


def new_zeros(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _options('new_zeros', layout, pin_memory, dtype, requires_grad)
    dtype, device = _new_like(self, dtype, device)
    return zeros(_size(size, 'new_zeros'), dtype=dtype, device=device, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _options('new_ones', layout, pin_memory, dtype, requires_grad)
    dtype, device = _new_like(self, dtype, device)
    return ones(_size(size, 'new_ones'), dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _options('new_empty', layout, pin_memory, dtype, requires_grad)
    dtype, device = _new_like(self, dtype, device)
    return empty(_size(size, 'new_empty'), dtype=dtype, device=device, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _options('new_full', layout, pin_memory, dtype, requires_grad)
    _check_full_size('new_full', size)
    _check_fill('new_full', fill_value)
    dtype, device = _new_like(self, dtype, device)
    return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty_strided(self, size=None, stride=None, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    """An uninitialised tensor of ``size`` whose elements lie ``stride`` elements apart (in a
    storage of its own, as large as those strides need)."""
    missing = [name for name, value in (('size', size), ('stride', stride)) if value is None]
    if missing:
        raise TypeError(missing_message('new_empty_strided', missing))
    _options('new_empty_strided', layout, pin_memory, dtype, requires_grad)
    for position, (name, value) in enumerate((('size', size), ('stride', stride)), 1):
        if not isinstance(value, (tuple, list)) or not all(
                isinstance(v, (int, _np.integer)) and not isinstance(v, bool) for v in value):
            raise TypeError(f"new_empty_strided(): argument '{name}' (position {position}) must be tuple of ints, "
                            f'not {type(value).__name__}')
    dtype, device = _new_like(self, dtype, device)
    # (the sizes' checks and the storage are empty_strided's)
    return _ops.empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    a 0-dim tensor of the number ``s``, in the default float dtype unless ``dtype`` says."""
    _options('scalar_tensor', layout, pin_memory, dtype, requires_grad)
    if not isinstance(s, (int, float, complex, _np.number, _np.bool_)) and not (
            isinstance(s, Tensor) and s._data.ndim == 0 and not s._requires_grad):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    if dtype is None:
        dtype = backend.get_default_dtype()
    return full((), s, dtype=dtype, device=device, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    # (no layout= and no pin_memory=, whatever PyTorch's docstring says: its new_tensor refuses both)
    check_dtype('new_tensor', dtype)
    dtype, device = _new_like(self, dtype, device)
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def new(self, *args, **kwargs):
    """PyTorch's legacy constructor with this tensor's dtype and device (``new_empty``,
    ``new_tensor`` say what they make)."""
    from ._tensor_types import legacy_new  # (the legacy types: not loaded by `import leafgrad`)
    return legacy_new(self.dtype, self.device.type, args, kwargs)


def _legacy_init(self, *args, **kwargs):
    """``Tensor.__init__``: PyTorch's legacy constructor. leafgrad.Tensor(2, 3) is uninitialised
    memory and leafgrad.Tensor([1, 2]) a copy of the data, both of the default dtype;
    leafgrad.Tensor(t) shares t's memory and version counter (not its history, unlike PyTorch's
    alias)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
        self._data, self._version_counter = args[0]._data, args[0]._version_counter
        return
    from ._tensor_types import legacy_new  # (likewise)
    self._data = legacy_new(backend.get_default_dtype(), 'cpu', args, kwargs)._data


for _method in (new_zeros, new_ones, new_empty, new_empty_strided, new_full, new_tensor, new):
    setattr(Tensor, _method.__name__, _method)
Tensor.__init__ = _legacy_init


def _tensor_type(input, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type's forward (ops.conversion's Type reaches it as ops.tensor_type): the legacy
    types' names and conversions."""
    from ._tensor_types import tensor_type  # (likewise)
    return tensor_type(input, dtype, non_blocking, **kwargs)


# torch.multinomial is an op, declared in ops/sampling.py with Tensor.multinomial; bound here too,
# among the factories that draw from a generator (the profiler's table reads it here)
from .ops.sampling import multinomial  # noqa: E402,F401

# the factories the op families call (rearrange's zeros, storage's empty, rounding's tensor of a
# Python number; conversion's Tensor.type, the legacy types' empty), reached through the late-bound
# namespace ops: the families are below this module, the legacy types (_tensor_types.py) load after it
from .ops._util import ops as _ops  # noqa: E402
_ops.empty, _ops.zeros, _ops.tensor, _ops.tensor_type = empty, zeros, tensor, _tensor_type
