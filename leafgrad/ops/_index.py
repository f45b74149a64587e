"""Index arguments, as the ops that read at indices (indexing.py) and those that write at them
(scatter.py) take them: ``t[...]``'s index normalized and checked against a shape with PyTorch's
errors, index tensors' arrays and bounds, scatter/gather's coordinates, and the names PyTorch's
messages about them print.
"""
import warnings

import numpy as np

from .. import backend
from ._util import xp
from .._warn import user_stacklevel
from ..tensor import _C_NAMES, Tensor


def _is_basic(c):
    return c is None or c is Ellipsis or isinstance(c, slice) or (isinstance(c, int) and not isinstance(c, bool))


_SEQUENCE_AS_TUPLE = ('Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in '
                      'pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as '
                      'tensor index, x[leafgrad.tensor(seq)], which will result either in an error or a different '
                      'result')


def _normalize(index):
    if isinstance(index, (list, str)) and len(index) < 32 and any(  # (a string is a sequence of strings)
            isinstance(c, (list, tuple, slice, Tensor, str)) or c is None or c is Ellipsis for c in index):
        # PyTorch (like old NumPy) still reads such a list as a tuple of indices, with a warning.
        warnings.warn(_SEQUENCE_AS_TUPLE, UserWarning, stacklevel=3)
        index = tuple(index)
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for c in index:
        if isinstance(c, Tensor):
            if c._data.ndim == 0 and c._data.dtype.kind in 'iu':
                c = int(c._data)
            else:
                c = c._data
                if c.dtype.kind in 'iu' and c.dtype.itemsize < 4 and c.dtype != np.uint8:  # (int8, int16)
                    raise IndexError('tensors used as indices must be long, int, byte or bool tensors')
        elif not (c is None or c is Ellipsis or isinstance(c, (int, slice, list, tuple, range, xp.ndarray, xp.integer))):
            raise _invalid_index(c)
        out.append(c)
    return tuple(out)


def _byte_mask(c):
    """A uint8 index is a mask to PyTorch (with its deprecation warning)."""
    if c.dtype == np.uint8 and c.ndim:
        warnings.warn('indexing with dtype leafgrad.uint8 is now deprecated, please use a dtype leafgrad.bool instead.',
                      UserWarning, stacklevel=user_stacklevel())
        return c.astype(bool)
    return c


def _invalid_index(c):
    kind = type(c)
    if kind in (str, bytes):  # PyTorch tries to make a tensor of it
        return TypeError(f"new(): invalid data type '{kind.__name__}'")
    name = kind.__qualname__ if kind.__module__ == 'builtins' else f'{kind.__module__}.{kind.__qualname__}'
    return IndexError('only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid '
                      f'indices (got {name})')


def _to_numpy_index(index, shape):
    """Advanced index components as arrays, checked against the shape with PyTorch's errors."""
    out = []
    dim = 0
    position = 0  # PyTorch's errors count index tensors (a k-dim mask is k of them), not dims
    consumed = sum((c.ndim if hasattr(c, 'dtype') and c.dtype.kind == 'b' else 1)
                   for c in index if c is not None and c is not Ellipsis)
    n_ellipsis_dims = len(shape) - consumed
    for c in index:
        if c is Ellipsis:
            out.append(c)
            dim += max(n_ellipsis_dims, 0)
            continue
        if c is None:
            out.append(c)
            continue
        if isinstance(c, (list, tuple)):
            c = xp.asarray(c) if len(c) else xp.zeros(0, xp.int64)  # (an empty list: an empty long index)
            if c.dtype.kind in 'fV':
                raise IndexError('tensors used as indices must be long, int, byte or bool tensors')
        if hasattr(c, 'dtype'):
            c = _byte_mask(c)
            if c.dtype.kind == 'b':
                for j in range(c.ndim):
                    if dim + j < len(shape) and c.shape[j] != shape[dim + j]:
                        raise IndexError(f'The shape of the mask {list(c.shape)} at index {j} does not match the '
                                         f'shape of the indexed tensor {list(shape)} at index {dim + j}')
                dim += c.ndim
                position += c.ndim
            elif c.dtype.kind in 'iu':
                if dim < len(shape) and c.size:
                    size = shape[dim]
                    bad = c[(c >= size) | (c < -size)]
                    if bad.size:
                        if not size:  # (PyTorch's check for an empty dim words it without the numbers)
                            raise IndexError('index is out of bounds for dimension with size 0')
                        raise IndexError(f'index {int(bad.reshape(-1)[0])} is out of bounds for dimension {position} '
                                         f'with size {size}')
                dim += 1
                position += 1
            else:
                raise IndexError('tensors used as indices must be long, int, byte or bool tensors')
        else:
            dim += 1
        out.append(c)
    if dim > len(shape):
        raise IndexError(f'too many indices for tensor of dimension {len(shape)}')
    _check_broadcast(out)
    return tuple(out)


def _check_broadcast(index):
    """PyTorch's error for index tensors whose shapes do not broadcast (a mask counts as its
    nonzero positions, one index tensor per dim), before NumPy would word its own."""
    shapes = []
    for c in index:
        if hasattr(c, 'dtype'):
            shapes += [(int(c.sum()),)] * c.ndim if c.dtype.kind == 'b' else [c.shape]
    if len(shapes) > 1:
        try:
            xp.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError('shape mismatch: indexing tensors could not be broadcast together with shapes '
                             + ', '.join(str(list(s)) for s in shapes)) from None


def on_device_of(index, data):
    """An index tuple whose NumPy arrays (lists made arrays, NumPy indices, positions made on the
    host) are moved to the GPU holding ``data``: CuPy's scatters (``add.at``) take device arrays
    only. On the CPU (and the meta device) the index itself."""
    if type(data) is np.ndarray or backend.device_of(data).type != 'cuda':
        return index
    if type(index) is not tuple:
        return xp.asarray(index, like=data) if type(index) is np.ndarray else index
    return tuple(xp.asarray(c, like=data) if type(c) is np.ndarray else c for c in index)


def index_array(index, fname, what='index'):
    """An index tensor's array, checked to be of an integer dtype."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{fname}(): argument '{what}' must be Tensor, not {type(index).__name__}")
    data = index._data
    if data.dtype.kind not in 'iu':
        if data.size == 0:  # (PyTorch looks at no dtype of an empty index)
            return data.astype(xp.int64)
        raise RuntimeError(f'{fname}(): Expected dtype int32/int64 for {what}')
    return data


def _check_index_bounds(idx, size, dim):
    if idx.size:
        bad = idx[(idx >= size) | (idx < 0)]
        if bad.size:
            raise RuntimeError(f'index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} with size {size}')


def scatter_coords(index, dim):
    """NumPy's fancy-index tuple addressing ``out[i][index[i][j]]...`` (scatter/gather's rule):
    ``index`` at ``dim``, elsewhere each dim's positions (``xp.indices(..., sparse=True)``'s),
    made where ``index`` lives (like=: on its GPU)."""
    nd = index.ndim
    return tuple(index if k == dim else xp.arange(n, like=index).reshape((1,) * k + (n,) + (1,) * (nd - k - 1))
                 for k, n in enumerate(index.shape))


def scalar_type_name(np_dtype):
    """The C++ name PyTorch prints for a dtype in some messages ('float', 'double', 'long')."""
    return _C_NAMES[np_dtype.name]


def _broadcast_message(a, b):
    """PyTorch's message for shapes that do not broadcast (the first mismatch from the right)."""
    for k in range(1, min(len(a), len(b)) + 1):
        if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
            return (f'The size of tensor a ({a[-k]}) must match the size of tensor b ({b[-k]}) at non-singleton '
                    f'dimension {max(len(a), len(b)) - k}')
    return 'shapes do not broadcast'
