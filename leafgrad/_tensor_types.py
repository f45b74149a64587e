"""The legacy tensor types (``leafgrad.FloatTensor``, ``LongTensor`` … and ``leafgrad.cuda.*Tensor``),
their constructors, ``set_default_tensor_type`` and ``Tensor.type``, as PyTorch keeps them.

A legacy type is not a subclass of ``Tensor``: it is a constructor whose ``isinstance`` asks a
tensor's dtype and device, as PyTorch's ``torch.tensortype`` does:

>>> import leafgrad
>>> leafgrad.LongTensor([1.7, 2])
tensor([1, 2])
>>> isinstance(leafgrad.ones(2), leafgrad.FloatTensor), isinstance(leafgrad.ones(2), leafgrad.DoubleTensor)
(True, False)

Called with sizes (ints or a ``Size``) it returns uninitialised memory; with a list or tuple, a
copy of the data converted to its dtype (truncating, wrapping); with a tensor of its dtype, an
alias of it (sharing memory, version counter and history); with a NumPy array, a tensor on the
array's memory when the dtypes agree. ``device=`` must name the type's own device.
"""
import operator
import warnings

from . import _sequence, _settings, backend
from .ops._util import ops
from .ops.indexing import alias
from .tensor import Size, Tensor, legacy_type_name

_np = backend.numpy

# name -> dtype, in PyTorch's names; the C++ names appear in PyTorch's TensorOptions messages
_TYPES = {'FloatTensor': backend.float32, 'DoubleTensor': backend.float64, 'HalfTensor': backend.float16,
          'LongTensor': backend.int64, 'IntTensor': backend.int32, 'ShortTensor': backend.int16,
          'CharTensor': backend.int8, 'ByteTensor': backend.uint8, 'BoolTensor': backend.bool_}
_CPP_NAMES = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'int64': 'long int', 'int32': 'int',
              'int16': 'short int', 'int8': 'signed char', 'uint8': 'unsigned char', 'bool': 'bool'}


class tensortype(type):
    """The type of ``leafgrad.FloatTensor`` and kin (PyTorch's ``torch.tensortype``)."""
    __module__ = 'leafgrad'

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np
                and (type(obj._data) is not _np.ndarray) == cls.is_cuda)

    def __subclasscheck__(cls, other):
        return type.__subclasscheck__(cls, other)

    def __call__(cls, *args, **kwargs):
        if cls.is_cuda and not backend.cuda_available():
            raise TypeError(f'type {_full_name(cls)} not available. Torch not compiled with CUDA enabled.')
        return legacy_new(cls.dtype, 'cuda' if cls.is_cuda else 'cpu', args, kwargs)


def _full_name(cls):
    return f'{cls.__module__}.{cls.__name__}'


def _make_types(module_name, is_cuda):
    return {name: tensortype(name, (), {'__module__': module_name, '__qualname__': name, 'dtype': dtype,
                                        'is_cuda': is_cuda, 'is_sparse': False,
                                        '__doc__': f'Legacy constructor of {dtype} tensors'
                                                   f'{" on CUDA" if is_cuda else ""}.'})
            for name, dtype in _TYPES.items()}


CPU_TYPES = _make_types('leafgrad', False)
CUDA_TYPES = _make_types('leafgrad.cuda', True)
globals().update(CPU_TYPES)


# ---- the legacy constructor --------------------------------------------------------------------

_SIGNATURES = ('\n * (*, leafgrad.device device = None)\n * (leafgrad.Storage storage)\n * (Tensor other)\n'
               ' * (tuple of ints size, *, leafgrad.device device = None)\n'
               ' * (object data, *, leafgrad.device device = None)\n')


def _arg_name(value):
    if isinstance(value, Tensor):
        return 'Tensor'
    if type(value) in (backend.dtype, backend.device):
        return f'leafgrad.{type(value).__name__}'
    t = type(value)
    return t.__name__ if t.__module__ == 'builtins' else f'{t.__module__}.{t.__qualname__}'


def _invalid(args, kwargs):
    got = ', '.join([_arg_name(a) for a in args] + [f'{k}={_arg_name(v)}' for k, v in kwargs.items()])
    return TypeError(f'new() received an invalid combination of arguments - got ({got}), but expected one of:'
                     + _SIGNATURES)


def _options(dtype, device_type):
    return (f'TensorOptions(dtype={_CPP_NAMES[dtype.name]}, device={device_type}, layout=Strided, '
            'requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))')


def _is_size(value):
    return isinstance(value, (int, _np.integer)) and not isinstance(value, bool)


def legacy_new(dtype, device_type, args, kwargs, any_dtype=False):
    """``Tensor(*args, **kwargs)`` of a legacy type: sizes, data, another tensor, or nothing.

    ``any_dtype``: an existing tensor of any dtype is aliased (``leafgrad.Tensor(t)``), not only
    one of ``dtype`` (``leafgrad.FloatTensor(t)``).
    """
    device = kwargs.pop('device', None)
    if 'size' in kwargs and not args:
        args = tuple(kwargs.pop('size'))
    elif 'data' in kwargs and not args:
        args = (kwargs.pop('data'),)
    if kwargs:
        raise _invalid(args, dict(kwargs, device=device) if device is not None else kwargs)
    if device is not None:
        dev = backend.device(device) if not isinstance(device, (backend.device, int)) else device
        given = 'cuda' if isinstance(dev, int) else dev.type
        if given != device_type:
            raise RuntimeError(f'legacy constructor expects device type: {device_type} but device type: {given} '
                               'was passed')
    where = device if device is not None else device_type
    if not args:
        return ops.empty(0, dtype=dtype, device=where)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if device is not None:
            raise RuntimeError('Legacy tensor constructor of the form leafgrad.Tensor(tensor, device=device) is not '
                               'supported.  Use leafgrad.tensor(...) or leafgrad.as_tensor(...) instead.')
        first_device = 'cuda' if type(first._data) is not _np.ndarray else 'cpu'
        if not any_dtype and (first.dtype is not dtype or first_device != device_type):
            raise TypeError(f'expected {_options(dtype, device_type)} (got {_options(first.dtype, first_device)})')
        return alias(first)
    if len(args) == 1 and isinstance(first, Size) or all(_is_size(a) for a in args):
        sizes = tuple(first) if isinstance(first, Size) else tuple(operator.index(a) for a in args)
        return ops.empty(sizes, dtype=dtype, device=where)
    if len(args) > 1:
        if _is_size(first):
            bad = next(i for i, a in enumerate(args) if not _is_size(a))
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {bad + 1} with error "
                            f'"type must be tuple of ints,but got {_arg_name(args[bad])}"')
        raise _invalid(args, {})
    return _from_data(first, dtype, where)


def _from_data(data, dtype, device):
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if type(data) is _np.ndarray:
        backend.from_np(data.dtype)  # PyTorch's error for an unsupported NumPy dtype
        array = data if data.dtype == dtype.np else data.astype(dtype.np)
        return Tensor._wrap(backend.to_device(array, device) if device != 'cpu' else array)
    if not isinstance(data, (list, tuple, range)):
        raise TypeError(f'new(): data must be a sequence (got {_arg_name(data)})')
    shape = _sequence_shape(data)
    numbers = []
    _read_numbers(data, shape, 0, dtype, numbers)
    array = _np.array(numbers).reshape(shape)
    if dtype.np.kind in 'iu' and array.dtype.kind in 'fi' and _overflows(array, dtype.np):
        raise RuntimeError(f'value cannot be converted to type {dtype.name} without overflow')
    with warnings.catch_warnings():  # float16 overflows to inf, as in PyTorch
        warnings.simplefilter('ignore', RuntimeWarning)
        array = array.astype(dtype.np)
    return Tensor._wrap(backend.to_device(array, device) if device != 'cpu' else array)


_SEQUENCES = (list, tuple, range, _np.ndarray)


def _sequence_shape(data):
    """The shape nested sequences claim, read down their first elements as PyTorch reads it."""
    shape = []
    while isinstance(data, _SEQUENCES + (str,)):
        if isinstance(data, str):
            raise ValueError("too many dimensions 'str'")
        if shape and type(data) is _np.ndarray:
            _sequence._warn_ndarrays()
        shape.append(len(data))
        if not len(data):
            break
        data = data[0]
    return tuple(shape)


def _read_numbers(data, shape, dim, dtype, out):
    """Append the numbers of ``data`` (which must have ``shape[dim:]``) to ``out``, refusing what
    PyTorch's legacy constructor refuses, with its errors."""
    if len(data) != shape[dim]:
        raise ValueError(f'expected sequence of length {shape[dim]} at dim {dim} (got {len(data)})')
    last = dim == len(shape) - 1
    for x in data:
        if not last:
            if not isinstance(x, _SEQUENCES):
                raise TypeError('not a sequence')
            _read_numbers(x, shape, dim + 1, dtype, out)
        elif isinstance(x, Tensor):
            if not dtype.is_floating_point and (x._data.size != 1 or x._data.dtype.kind not in 'iub'):
                raise TypeError('only integer tensors of a single element can be converted to an index')
            if x._data.size != 1:
                raise ValueError('only one element tensors can be converted to Python scalars')
            out.append(x.item())
        elif isinstance(x, (bool, int, float, _np.number, _np.bool_)):
            out.append(x)
        elif type(x) is _np.ndarray and x.ndim == 0:  # (a NumPy number in an array's clothes)
            _sequence._warn_ndarrays()
            out.append(x.item())
        elif dtype.is_floating_point:
            raise TypeError(f'must be real number, not {_arg_name(x)}')
        else:
            raise TypeError(f"'{_arg_name(x)}' object cannot be interpreted as an integer")


def _overflows(values, np_dtype):
    """PyTorch's range check (c10::overflows) of Python numbers going to an integer type: a float
    must lie within the type's range; a negative int may wrap into an unsigned type down to -max."""
    info = _np.iinfo(np_dtype)
    if values.dtype.kind == 'f':
        return not bool(((values >= info.min) & (values <= info.max)).all())
    if info.min == 0:
        return bool(((values > info.max) | (values < -int(info.max))).any())
    return bool(((values < info.min) | (values > info.max)).any())


# ---- set_default_tensor_type ----------------------------------------------------------------------

_warned_default_tensor_type = False


def set_default_tensor_type(t, /):
    """Deprecated in PyTorch 2.1: the default dtype (and, for a CUDA type, device) of a legacy type."""
    global _warned_default_tensor_type
    if not _warned_default_tensor_type:  # PyTorch warns once a process
        _warned_default_tensor_type = True
        warnings.warn('leafgrad.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use '
                      'leafgrad.set_default_dtype() and leafgrad.set_default_device() as alternatives.', UserWarning,
                      stacklevel=2)
    if isinstance(t, str):
        t = _type_by_name(t, error=AttributeError)
    if type(t) is not tensortype:
        raise TypeError('invalid type object: only floating-point types are supported as the default type')
    if not t.dtype.is_floating_point:
        raise TypeError('only floating-point types are supported as the default type')
    if t.is_cuda and not backend.cuda_available():
        raise TypeError(f'type {_full_name(t)} not available. Torch not compiled with CUDA enabled.')
    backend.set_default_dtype(t.dtype)
    _settings.set_default_device('cuda' if t.is_cuda else None)


def _type_by_name(name, error):
    """``'torch.FloatTensor'``, ``'leafgrad.cuda.LongTensor'`` … as the legacy type."""
    for prefix, types in (('torch.cuda.', CUDA_TYPES), ('leafgrad.cuda.', CUDA_TYPES), ('torch.', CPU_TYPES),
                          ('leafgrad.', CPU_TYPES)):
        if name.startswith(prefix):
            found = types.get(name[len(prefix):])
            if found is not None:
                return found
            if error is AttributeError:
                raise AttributeError(f"module '{prefix.rstrip('.').replace('torch', 'leafgrad')}' has no attribute "
                                     f"'{name[len(prefix):]}'")
            break
    raise ValueError(f'invalid type: {name!r}')


def tensor_type(input, dtype=None, non_blocking=False, **kwargs):
    """``Tensor.type()``: the legacy type's name; ``Tensor.type(t)``: the tensor as type or dtype ``t``."""
    if dtype is None and 'dtype' not in kwargs:
        return legacy_type_name(input._data)
    dtype = kwargs.pop('dtype', dtype)
    if isinstance(dtype, str):
        # bfloat16 has no legacy type here (one would load ml_dtypes with these types): its name converts
        dtype = backend._make_bfloat16() if dtype in ('torch.BFloat16Tensor', 'leafgrad.BFloat16Tensor') \
            else _type_by_name(dtype, error=ValueError)
    if type(dtype) is tensortype:
        if dtype.is_cuda and backend._cupy is None:
            raise RuntimeError('Torch not compiled with CUDA enabled')
        device = 'cuda' if dtype.is_cuda else 'cpu'
        return input.to(device=device if (type(input._data) is not _np.ndarray) != dtype.is_cuda else None,
                        dtype=dtype.dtype)
    if type(dtype) is backend.dtype:
        return input.to(dtype)
    if isinstance(dtype, type):
        raise ValueError(f'invalid type: {dtype.__name__!r}')
    raise TypeError('dtype must be a type, str, or dtype object')
