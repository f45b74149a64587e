"""The 'meta' device: tensors with a shape and a dtype and no data.

A meta tensor's ``_data`` is a ``MetaArray``: an array that has ``shape``, ``dtype`` and
``strides`` and no memory. It takes part in NumPy's dispatch (``__array_ufunc__``,
``__array_function__``), so that leafgrad's ops, written on NumPy arrays, run on it unchanged
and compute only their results' shapes and dtypes:

* a ufunc's result has its operands' broadcast shape and the dtype NumPy's type resolution
  gives (found by calling the ufunc on one-element arrays of the operands' dtypes), ``matmul``
  the matrix product's shape; reductions drop or keep their axes; a ufunc writing into a meta
  ``out`` (an in-place op) writes nothing;
* functions that only view their input (transpose, expand_dims, broadcast_to, squeeze, basic
  indexing, sliding windows...) are run on a zero-strided NumPy array of the same shape, which
  has no memory either; reshape, concatenate, stack, where, pad and the ``*_like`` factories
  have their own shape rules;
* anything else raises ``NotImplementedError`` naming the NumPy function, as PyTorch raises
  for an op without a meta kernel. Reading values (``item()``, ``numpy()``, ``.cpu()``) raises
  PyTorch's errors.

Ops that do not go through NumPy's dispatch (convolution's strided windows, pooling) ask
``is_meta`` first and compute their output's shape themselves.
"""
import math
import sys

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

NO_DATA = 'Cannot copy out of meta tensor; no data!'


def _op_name():
    """The op that asked a meta array for data: the function two frames up, or above it while
    that is a ``check_*`` helper (a range check shared by an op and its compiled form reports as
    the op: embedding, not check_embedding_indices)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_code.co_name.startswith('check_'):
        frame = frame.f_back
    return frame.f_code.co_name


class MetaArray(NDArrayOperatorsMixin):
    """An array of ``shape`` and ``dtype`` without data (see the module docstring)."""
    __slots__ = ('shape', 'dtype')

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    # ---- what an array says about itself -----------------------------------------------------
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    T = property(lambda self: MetaArray(self.shape[::-1], self.dtype))
    base = None

    @property
    def strides(self):
        strides, step = [], self.dtype.itemsize
        for s in reversed(self.shape):
            strides.append(step)
            step *= max(s, 1)
        return tuple(reversed(strides))

    @property
    def flags(self):
        return _Flags()

    def __repr__(self):
        return f'MetaArray(shape={self.shape}, dtype={self.dtype})'

    def __len__(self):
        if not self.shape:
            raise TypeError('len() of unsized object')
        return self.shape[0]

    # ---- no data to read ------------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        # NumPy asks for the data (numpy.asarray, an array of arrays): the op calling it has no
        # shape rule here. (A meta tensor's own __array__ raises PyTorch's NO_DATA first.)
        raise NotImplementedError(f"leafgrad's meta device cannot run {_op_name()}: it reads an array's data")

    def item(self, *args):
        raise RuntimeError('Tensor.item() cannot be called on meta tensors')  # (Tensor.item and its users)

    def _no_value(self, *args):
        # an op branching on an array's values (a range check, a fast path): it has no meta rule
        raise NotImplementedError(f"leafgrad's meta device cannot run {_op_name()}: it reads an array's values")

    __float__ = __int__ = __bool__ = __index__ = __complex__ = _no_value

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # ---- writes write nothing -------------------------------------------------------------------
    def __setitem__(self, index, value):
        np.broadcast_shapes(np.shape(value) if not isinstance(value, MetaArray) else value.shape,
                            carrier(self)[index].shape)

    def fill(self, value):
        pass

    # ---- methods that NumPy arrays have ---------------------------------------------------------
    def __getitem__(self, index):
        if isinstance(index, MetaArray) or (isinstance(index, tuple) and any(isinstance(i, MetaArray) for i in index)):
            raise NotImplementedError("leafgrad's meta device cannot index by a meta tensor (its values decide the "
                                      'shape)')
        return _like(carrier(self)[index], self.dtype)

    def reshape(self, *shape, order='C'):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return MetaArray(_reshaped(self.shape, shape), self.dtype)

    def astype(self, dtype, order='K', casting='unsafe', subok=True, copy=True):
        return MetaArray(self.shape, dtype)

    def view(self, dtype=None, type=None):
        if dtype is None or np.dtype(dtype).itemsize == self.dtype.itemsize:
            return MetaArray(self.shape, self.dtype if dtype is None else dtype)
        dtype = np.dtype(dtype)  # (another size scales the last dimension, as NumPy's; Tensor.view checked it)
        return MetaArray(self.shape[:-1] + (self.shape[-1] * self.dtype.itemsize // dtype.itemsize,), dtype)

    def copy(self, order='C'):
        return MetaArray(self.shape, self.dtype)

    def ravel(self, order='C'):
        return MetaArray((self.size,), self.dtype)

    flatten = ravel

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes or None)

    def swapaxes(self, a, b):
        return np.swapaxes(self, a, b)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def __getattr__(self, name):  # sum, mean, max, ...: the NumPy function of that name
        fn = _METHODS.get(name)
        if fn is None:
            raise AttributeError(f"'MetaArray' object has no attribute '{name}'")
        return lambda *args, **kwargs: fn(self, *args, **kwargs)

    # ---- NumPy's dispatch -----------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop('out', None)
        _check_devices(inputs)
        if method == '__call__':
            result = _ufunc_call(ufunc, inputs, kwargs)
        elif method in ('reduce', 'accumulate'):
            result = _ufunc_reduce(ufunc, method, inputs[0], kwargs)
        elif method == 'outer':
            dt = _probe(ufunc, inputs, kwargs)
            result = MetaArray(_shape_of(inputs[0]) + _shape_of(inputs[1]), dt)
        elif method == 'at':
            return None  # an unbuffered in-place update: nothing to write
        else:
            return NotImplemented
        if out is not None:  # written in place: the output is the meta array given
            outs = out if isinstance(out, tuple) else (out,)
            return outs[0] if len(outs) == 1 else outs
        return result

    def __array_function__(self, func, types, args, kwargs):
        rule = _FUNCTIONS.get(func)
        if rule is not None:
            return rule(*args, **kwargs)
        if func in _VIEWS:
            result = func(*[carrier(a) if isinstance(a, MetaArray) else a for a in args], **kwargs)
            dtype = next(a.dtype for a in args if isinstance(a, MetaArray))
            if isinstance(result, (tuple, list)):
                return type(result)(_like(r, dtype) for r in result)
            return _like(result, dtype)
        raise NotImplementedError(f"leafgrad's meta device has no shape rule for numpy.{func.__name__}: the op "
                                  'that uses it cannot run on meta tensors')


class _Flags:
    c_contiguous = contiguous = True
    writeable = True  # (a write writes nothing)
    f_contiguous = False
    owndata = True


def is_meta(array):
    return type(array) is MetaArray


def carrier(array):
    """A NumPy array of the meta array's shape and dtype whose strides are all 0: no memory."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, array.dtype), array.shape, (0,) * array.ndim,
                                           writeable=False)


def _like(result, dtype):
    return MetaArray(np.shape(result), dtype)


def _shape_of(x):
    return x.shape if isinstance(x, (MetaArray, np.ndarray)) else np.shape(x)


def _check_devices(inputs):
    """A NumPy array of more than one element (a CPU tensor's data) cannot meet a meta array:
    PyTorch's error. Scalars, 0-d arrays included, mix with anything."""
    for x in inputs:
        if isinstance(x, np.ndarray) and x.ndim:
            raise RuntimeError('Tensor on device cpu is not on the expected device meta!')


def _probe_array(x):
    if isinstance(x, MetaArray):
        return np.zeros((1,) * x.ndim, x.dtype)
    return x


def _probe(ufunc, inputs, kwargs, method='__call__'):
    """The dtype(s) of ufunc's result on one-element arrays of the inputs' dtypes."""
    with np.errstate(all='ignore'):
        result = getattr(ufunc, method) if method != '__call__' else ufunc
        r = result(*[_probe_array(x) for x in inputs], **kwargs)
    return tuple(np.asarray(v).dtype for v in r) if isinstance(r, tuple) else np.asarray(r).dtype


def _matmul_shape(a, b):
    if not a or not b:
        raise ValueError('matmul: Input operand does not have enough dimensions')
    a2, b2 = (1,) + a if len(a) == 1 else a, b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f'matmul: Input operand 1 has a mismatch in its core dimension 0 ({a2[-1]} != {b2[-2]})')
    shape = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    return shape


def _ufunc_call(ufunc, inputs, kwargs):
    kwargs.pop('where', None)
    dtypes = _probe(ufunc, inputs, kwargs)
    if ufunc is np.matmul:
        shape = _matmul_shape(_shape_of(inputs[0]), _shape_of(inputs[1]))
    elif ufunc.signature is not None:
        raise NotImplementedError(f"leafgrad's meta device has no shape rule for numpy.{ufunc.__name__}")
    else:
        shape = np.broadcast_shapes(*[_shape_of(x) for x in inputs])
    if isinstance(dtypes, tuple):
        return tuple(MetaArray(shape, d) for d in dtypes)
    return MetaArray(shape, dtypes)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    for a in axes:
        if not -max(ndim, 1) <= a < max(ndim, 1):
            raise np.exceptions.AxisError(a, ndim)
    return tuple(a % max(ndim, 1) for a in axes)


def _reduced(x, axis, keepdims, fn, kwargs):
    axes = _axes(axis, x.ndim)
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape)) if keepdims else \
        tuple(s for i, s in enumerate(x.shape) if i not in axes)
    with np.errstate(all='ignore'):
        dt = np.asarray(fn(_probe_array(x), axis=axis, keepdims=keepdims, **kwargs)).dtype
    return MetaArray(shape, dt)


def _ufunc_reduce(ufunc, method, x, kwargs):
    if method == 'accumulate':
        dt = _probe(ufunc, (x,), kwargs, 'accumulate')
        return MetaArray(x.shape, dt)
    axis = kwargs.pop('axis', 0)
    keepdims = kwargs.pop('keepdims', False)
    kwargs.pop('where', None), kwargs.pop('initial', None)
    return _reduced(x, axis, keepdims, ufunc.reduce, kwargs)


def _reduction(fn):
    def rule(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if dtype is not None:
            kwargs['dtype'] = dtype
        kwargs.pop('where', None)
        result = _reduced(a, axis, keepdims, fn, kwargs)
        return out if out is not None else result
    return rule


def _arg_reduction(fn):
    def rule(a, axis=None, out=None, keepdims=False):
        if axis is None:
            return MetaArray((1,) * a.ndim if keepdims else (), np.intp)
        return _reduced(a, axis, keepdims, fn, {})
    return rule


def _reshaped(shape, new):
    new = tuple(int(s) for s in new)
    size = math.prod(shape)
    if new.count(-1) == 1:
        rest = math.prod(s for s in new if s != -1)
        if rest == 0 or size % rest:
            raise ValueError(f'cannot reshape array of size {size} into shape {new}')
        new = tuple(size // rest if s == -1 else s for s in new)
    if math.prod(new) != size:
        raise ValueError(f'cannot reshape array of size {size} into shape {new}')
    return new


def _reshape(a, shape=None, order='C', *, newshape=None, copy=None):
    return a.reshape(shape if shape is not None else newshape)


def _same_shape(a, *args, **kwargs):
    return MetaArray(a.shape, a.dtype)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting='same_kind'):
    arrays = list(arrays)
    _check_devices(arrays)
    shapes = [_shape_of(a) for a in arrays]
    if axis is None:
        shape = (sum(math.prod(s) for s in shapes),)
    else:
        axis = axis % len(shapes[0])
        shape = list(shapes[0])
        shape[axis] = sum(s[axis] for s in shapes)
    dt = dtype or np.result_type(*[a.dtype for a in arrays])
    return out if out is not None else MetaArray(shape, dt)


def _stack(arrays, axis=0, out=None, dtype=None, casting='same_kind'):
    arrays = list(arrays)
    _check_devices(arrays)
    shape = _shape_of(arrays[0])
    axis = axis % (len(shape) + 1)
    dt = dtype or np.result_type(*[a.dtype for a in arrays])
    return out if out is not None else MetaArray(shape[:axis] + (len(arrays),) + shape[axis:], dt)


def _where(condition, x=None, y=None):
    if x is None:
        raise NotImplementedError("leafgrad's meta device cannot find nonzero elements (their number is data)")
    _check_devices((condition, x, y))
    dt = np.result_type(*[a.dtype if isinstance(a, (MetaArray, np.ndarray)) else a for a in (x, y)])
    return MetaArray(np.broadcast_shapes(_shape_of(condition), _shape_of(x), _shape_of(y)), dt)


def _pad(array, pad_width, mode='constant', **kwargs):
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (array.ndim, 2))
    return MetaArray(tuple(s + int(lo) + int(hi) for s, (lo, hi) in zip(array.shape, widths)), array.dtype)


def _tile(a, reps):
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    n = max(a.ndim, len(reps))
    shape, reps = (1,) * (n - a.ndim) + a.shape, (1,) * (n - len(reps)) + reps
    return MetaArray(tuple(s * r for s, r in zip(shape, reps)), a.dtype)


def _take_along_axis(arr, indices, axis=-1):
    if isinstance(indices, np.ndarray) and indices.ndim:
        raise RuntimeError('Tensor on device cpu is not on the expected device meta!')
    if axis is None:
        return MetaArray(indices.shape, arr.dtype)
    axis %= arr.ndim
    shape = list(np.broadcast_shapes(tuple(1 if i == axis else s for i, s in enumerate(arr.shape)),
                                     tuple(1 if i == axis else s for i, s in enumerate(indices.shape))))
    shape[axis] = indices.shape[axis]
    return MetaArray(shape, arr.dtype)


def _new_like(a, *args, dtype=None, shape=None, **kwargs):
    return MetaArray(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def _as_array(a, dtype=None, *args, **kwargs):
    return a if dtype is None else a.astype(dtype)


_FUNCTIONS = {
    np.reshape: _reshape, np.concatenate: _concatenate, np.stack: _stack, np.where: _where, np.pad: _pad,
    np.zeros_like: _new_like, np.ones_like: _new_like, np.empty_like: _new_like,
    np.full_like: lambda a, fill_value, *args, **kwargs: _new_like(a, *args, **kwargs),
    np.copy: _same_shape, np.ascontiguousarray: _as_array, np.asarray: _as_array, np.asanyarray: _as_array,
    np.cumsum: _same_shape, np.cumprod: _same_shape, np.tril: _same_shape, np.triu: _same_shape,
    np.roll: _same_shape, np.sort: _same_shape, np.argsort: lambda a, *args, **kwargs: MetaArray(a.shape, np.intp),
    np.tile: _tile, np.take_along_axis: _take_along_axis,
    np.clip: lambda a, a_min=None, a_max=None, out=None, **kwargs: out if out is not None else MetaArray(
        np.broadcast_shapes(*[_shape_of(v) for v in (a, a_min, a_max) if v is not None]),
        np.clip(_probe_array(a), a_min if np.ndim(a_min) == 0 else None, a_max if np.ndim(a_max) == 0 else None,
                **kwargs).dtype),
    np.sum: _reduction(np.sum), np.mean: _reduction(np.mean), np.prod: _reduction(np.prod),
    np.amax: _reduction(np.amax), np.amin: _reduction(np.amin), np.max: _reduction(np.max),
    np.min: _reduction(np.min), np.any: _reduction(np.any), np.all: _reduction(np.all),
    np.std: _reduction(np.std), np.var: _reduction(np.var),
    np.argmax: _arg_reduction(np.argmax), np.argmin: _arg_reduction(np.argmin),
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.size: lambda a, axis=None: a.size,
    np.result_type: lambda *arrays: np.result_type(*[a.dtype if isinstance(a, MetaArray) else a for a in arrays]),
    np.broadcast_shapes: np.broadcast_shapes,
}
_VIEWS = {np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze, np.broadcast_to, np.flip,
          np.diagonal, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.lib.stride_tricks.sliding_window_view,
          np.split, np.array_split, np.broadcast_arrays, np.ravel}
_METHODS = {'sum': np.sum, 'mean': np.mean, 'prod': np.prod, 'max': np.max, 'min': np.min, 'any': np.any,
            'all': np.all, 'std': np.std, 'var': np.var, 'argmax': np.argmax, 'argmin': np.argmin,
            'cumsum': np.cumsum, 'cumprod': np.cumprod, 'clip': np.clip, 'argsort': np.argsort, 'sort': np.sort}


class _MetaModule:
    """The array module of the meta device (``backend.module_for('meta')``): factories that make
    meta arrays."""
    ndarray = MetaArray

    @staticmethod
    def _shape(shape):
        return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)

    def empty(self, shape, dtype=float, **kwargs):
        return MetaArray(self._shape(shape), dtype)

    zeros = ones = empty

    def full(self, shape, fill_value, dtype=None, **kwargs):
        return MetaArray(self._shape(shape), dtype if dtype is not None else np.asarray(fill_value).dtype)

    def eye(self, n, m=None, dtype=float, **kwargs):
        return MetaArray((n, n if m is None else m), dtype)

    def arange(self, *args, dtype=None, **kwargs):
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
        return MetaArray((max(math.ceil((stop - start) / step), 0),), dtype or np.result_type(start, stop, step))

    def linspace(self, start, stop, num=50, dtype=None, **kwargs):
        return MetaArray((num,), dtype or np.float64)

    def array(self, data, dtype=None, copy=True, **kwargs):
        if isinstance(data, MetaArray):
            return MetaArray(data.shape, dtype or data.dtype)
        data = np.asarray(data)
        return MetaArray(data.shape, dtype or data.dtype)

    asarray = array

    def __getattr__(self, name):
        raise NotImplementedError(f"leafgrad's meta device cannot make an array with numpy.{name}")


META_MODULE = _MetaModule()
