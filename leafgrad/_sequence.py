"""Nested Python data (lists, tuples, scalars, one-element tensors) to an array, as
``torch.tensor`` reads it: the shape from the first element at each depth, the dtype from every
element, and PyTorch's error for data that does not fit (a ragged list, ``None``, a string, an
integer out of range).

NumPy builds the array in the common case; only when NumPy refuses the data, or builds a shape
other than PyTorch's, does the element-by-element walk below run to find PyTorch's answer.
"""
import math

from . import backend
from ._warn import warn_once
from .tensor import Tensor

_np = backend.numpy
_MAX_DIMS = 128  # PyTorch's limit; a string is a sequence of strings, so it hits this
_SEQUENCES = (list, tuple, range, str, bytes, _np.ndarray)


def shape_of(data):
    """PyTorch's ``compute_sizes``: follow the first element down while it is a sequence (a
    tensor is not one: it stands for a scalar)."""
    sizes = []
    while _is_sequence(data):
        if sizes and type(data) is _np.ndarray:
            _warn_ndarrays()
        n = len(data)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(data).__name__}'")
        if n == 0:
            break
        data = data[0]
        if type(data) is _np.ndarray and data.ndim == 0:  # (PyTorch asks a NumPy array its length)
            raise TypeError('len() of unsized object')
    return tuple(sizes)


def _warn_ndarrays():
    warn_once('Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting the '
              'list to a single numpy.ndarray with numpy.array() before converting to a tensor.')


def _is_sequence(x):
    return isinstance(x, _SEQUENCES) and not (type(x) is _np.ndarray and x.ndim == 0)


def infer_dtype(data):
    """PyTorch's dtype for nested data: Python floats -> default float, ints -> int64, bools ->
    bool, a tensor or NumPy value its own dtype, promoted across all elements."""
    found = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            d = x.dtype
        elif isinstance(x, (_np.ndarray, _np.generic)):
            d = backend.from_np(_np.dtype(x.dtype))
        elif isinstance(x, float):
            d = backend.get_default_dtype()
        elif isinstance(x, bool):
            d = backend.bool_
        elif isinstance(x, int):
            d = backend.int64
        elif isinstance(x, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        elif isinstance(x, (list, tuple, range)):
            if len(x) == 0:
                d = backend.get_default_dtype()
            else:
                stack.extend(reversed(x))
                continue
        elif isinstance(x, complex):
            d = backend.default_complex_dtype()
        else:
            raise RuntimeError(f'Could not infer dtype of {type(x).__name__}')
        found = d if found is None else backend.promote_types(found, d)
    return found or backend.get_default_dtype()


def to_array(data, np_dtype):
    """The array of nested ``data`` (a list or tuple) in ``np_dtype``, or PyTorch's error."""
    sizes = shape_of(data)
    if 0 in sizes:  # nothing to store: PyTorch looks no further than the first elements
        return _np.zeros(sizes, dtype=np_dtype)
    try:
        arr = _np.array(_unwrap(data, 0, len(sizes)), dtype=np_dtype)
    except (ValueError, TypeError, OverflowError):
        arr = None
    if arr is None or arr.shape != sizes:
        arr = _walk(data, sizes, _np.dtype(np_dtype))
    return arr


def _unwrap(data, depth, ndim):
    """``data`` with its tensors replaced by arrays (above the scalar depth, where PyTorch reads
    a tensor as a sequence) or by their one element (at it)."""
    if isinstance(data, (list, tuple)):
        return [_unwrap(x, depth + 1, ndim) for x in data]
    if type(data) is _np.ndarray and depth:  # (an array inside the list: PyTorch reads it slowly)
        _warn_ndarrays()
    if isinstance(data, Tensor):
        if depth < ndim:
            return backend.to_numpy(data._data)
        if data._data.size != 1:
            raise ValueError('only one element tensors can be converted to Python scalars')
        return data._data.reshape(()).item()
    if not isinstance(data, (int, float, complex, _np.generic, _np.ndarray)):
        raise TypeError  # None, a string...: NumPy would take some (None as NaN); the walk decides
    return data


def _walk(data, sizes, np_dtype):
    """PyTorch's ``recursive_store``, element by element: each sequence must have the length of
    its depth, each scalar must convert to the dtype."""
    convert = _SCALAR[np_dtype.kind]
    flat = []

    def store(obj, dim):
        if dim == len(sizes):
            flat.append(convert(obj, np_dtype))
            return
        if isinstance(obj, Tensor):
            obj = list(obj)
        elif not _is_sequence(obj):
            raise TypeError('not a sequence')
        if len(obj) != sizes[dim]:
            raise ValueError(f'expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})')
        for x in obj:
            store(x, dim + 1)

    store(data, 0)
    return _np.array(flat, dtype=np_dtype).reshape(sizes)


def _as_float(obj, np_dtype):
    if isinstance(obj, Tensor):
        return float(obj)
    try:
        return float(obj) if not isinstance(obj, (str, bytes)) else _not_real(obj)
    except TypeError:
        _not_real(obj)


def _not_real(obj):
    raise TypeError(f'must be real number, not {type(obj).__name__}')


def _as_int(obj, np_dtype):
    """A Python int within ``np_dtype``'s range, as PyTorch's checked conversion: a float is
    truncated, a negative int wraps for an unsigned dtype, anything else out of range raises."""
    info = _np.iinfo(np_dtype)
    if isinstance(obj, float) or (isinstance(obj, _np.generic) and obj.dtype.kind == 'f'):
        obj = float(obj)
        if math.isnan(obj) or obj < info.min or obj > info.max:
            raise RuntimeError(f'value cannot be converted to type {np_dtype.name} without overflow')
        return int(obj)
    value = obj.__index__() if hasattr(obj, '__index__') else None
    if value is None:
        raise TypeError(f"'{type(obj).__name__}' object cannot be interpreted as an integer")
    if not -2 ** 63 <= value < 2 ** 63:
        raise ValueError('Overflow when unpacking long long')
    if info.min == 0 and -info.max <= value < 0:
        return value % (info.max + 1)  # two's complement, as PyTorch lets it wrap
    if not info.min <= value <= info.max:
        raise RuntimeError(f'value cannot be converted to type {np_dtype.name} without overflow')
    return value


def _as_bool(obj, np_dtype):
    if isinstance(obj, (bool, int, float, _np.generic, Tensor)):
        return bool(obj)
    raise TypeError(f"'{type(obj).__name__}' object cannot be interpreted as an integer")


def _as_complex(obj, np_dtype):
    if isinstance(obj, (str, bytes)):
        raise TypeError(f'must be real number, not {type(obj).__name__}')
    return complex(obj)


_SCALAR = {'c': _as_complex, 'f': _as_float, 'i': _as_int, 'u': _as_int, 'b': _as_bool}
