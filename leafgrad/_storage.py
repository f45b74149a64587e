"""``UntypedStorage``: the bytes under a tensor, on a device (PyTorch's ``torch.UntypedStorage``):
what ``Tensor.untyped_storage()`` returns and what a ``map_location`` callable receives and
returns when a checkpoint loads; ``TypedStorage``, the same bytes read as elements of one dtype
(what the deprecated ``Tensor.storage()`` returns). Public as ``leafgrad.storage``."""
from . import backend


class UntypedStorage:
    """Bytes on a device: what a ``map_location`` callable receives and returns (PyTorch's
    ``torch.UntypedStorage``). Tensors loaded from one storage share its memory."""
    __slots__ = ('_array',)

    def __init__(self, array):
        self._array = array  # one-dimensional uint8, NumPy or CuPy

    @property
    def device(self):
        return backend.device_of(self._array)

    @property
    def is_cuda(self):
        return self.device.type == 'cuda'

    def nbytes(self):
        return int(self._array.nbytes)

    def size(self):
        return self.nbytes()

    __len__ = size

    def element_size(self):
        return 1

    def data_ptr(self):
        a = self._array
        return a.__array_interface__['data'][0] if type(a) is backend.np.ndarray else a.data.ptr

    def __getitem__(self, index):
        """A byte (an int), or the storage of a slice of the bytes (sharing them)."""
        if isinstance(index, slice):
            return UntypedStorage(self._array[index])
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"can't index a leafgrad.UntypedStorage with {type(index).__name__}")
        size = self._array.size
        if not -size <= index < size:
            raise IndexError(f'index {index} out of range for storage of size {size}')
        return int(self._array[index])

    def __setitem__(self, index, value):
        self[index]  # (its checks)
        self._array[index] = int(value) & 0xFF

    def fill_(self, value):
        self._array[...] = int(value) & 0xFF
        return self

    def to(self, *, device, non_blocking=False):
        return UntypedStorage(backend.to_device(self._array, _as_device(device)))

    def cpu(self):
        return self.to(device='cpu')

    def cuda(self, device=None, non_blocking=False):
        if isinstance(device, int):
            device = backend.device('cuda', device)
        return self.to(device=device if device is not None else 'cuda')

    def clone(self):
        return UntypedStorage(self._array.copy())

    def tolist(self):
        return self._array.tolist()

    def type(self):
        return 'leafgrad.storage.UntypedStorage'

    def is_shared(self):
        return False

    def is_pinned(self, device='cuda'):
        return False

    def untyped(self):
        return self

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        return _listing(self.tolist(), f'[leafgrad.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]')

    __str__ = __repr__


def _listing(values, title):
    """PyTorch's printout of a storage: each element on its own line after a space, then the title."""
    return ' ' + '\n '.join(map(str, values)) + '\n' + title


class TypedStorage:
    """A tensor's storage read as elements of its dtype (PyTorch's deprecated
    ``torch.TypedStorage``, which ``Tensor.storage()`` returns): the whole storage, also of a
    view; its elements read and written as Python numbers, sharing the tensor's memory."""
    __slots__ = ('_untyped_storage', 'dtype', '_np_dtype', '_as_tensor')

    def __init__(self, untyped, dtype, np_dtype, as_tensor):
        # (as_tensor: an array as a tensor sharing it, from the layer that makes tensors)
        self._untyped_storage, self.dtype, self._np_dtype, self._as_tensor = untyped, dtype, np_dtype, as_tensor

    def _elements(self):
        return self._untyped_storage._array.view(self._np_dtype)

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == 'cuda'

    def untyped(self):
        return self._untyped_storage

    def size(self):
        return self._untyped_storage.nbytes() // self._np_dtype.itemsize

    __len__ = size

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self._np_dtype.itemsize

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def _index(self, index):
        if isinstance(index, slice):
            raise RuntimeError('slices are only supported in UntypedStorage.__getitem__')
        if not isinstance(index, int) or isinstance(index, bool):
            raise RuntimeError(f"can't index a <class 'leafgrad.storage.TypedStorage'> with {type(index)}")
        size = self.size()
        if not -size <= index < size:
            raise IndexError(f'index {index} out of range for storage of size {size}')
        return index % size

    def __getitem__(self, index):
        return _number(self._elements()[self._index(index)])

    def __setitem__(self, index, value):
        """As PyTorch's: the elements as a tensor, written by its indexing (a slice too)."""
        if not isinstance(index, (int, slice)):
            raise RuntimeError(f"can't index a <class 'leafgrad.storage.TypedStorage'> with {type(index)}")
        if isinstance(value, (TypedStorage, UntypedStorage)):
            raise RuntimeError(f'cannot set item with value type {type(value)}')
        self._as_tensor(self._elements())[index] = value

    def tolist(self):
        return [_number(v) for v in self._elements()]

    def __iter__(self):
        return iter(self.tolist())

    def fill_(self, value):
        self._elements()[...] = value
        return self

    def clone(self):
        return TypedStorage(self._untyped_storage.clone(), self.dtype, self._np_dtype, self._as_tensor)

    def cpu(self):
        return self if self.device.type == 'cpu' else TypedStorage(self._untyped_storage.cpu(), self.dtype,
                                                                   self._np_dtype, self._as_tensor)

    def is_shared(self):
        return False

    def is_pinned(self, device='cuda'):
        return False

    def type(self):
        prefix = 'leafgrad.' if self.device.type == 'cpu' else 'leafgrad.cuda.'
        return prefix + _LEGACY_NAMES[self._np_dtype.name]

    def pickle_storage_type(self):
        return self.type().rsplit('.', 1)[-1]

    def __repr__(self):
        return _listing(self.tolist(), f'[leafgrad.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of '
                                       f'size {self.size()}]')

    __str__ = __repr__


# PyTorch's legacy names of the storages of each dtype (by NumPy's name of it)
_LEGACY_NAMES = {'float32': 'FloatStorage', 'float64': 'DoubleStorage', 'float16': 'HalfStorage',
                 'bfloat16': 'BFloat16Storage', 'int64': 'LongStorage', 'int32': 'IntStorage', 'int16': 'ShortStorage',
                 'int8': 'CharStorage', 'uint8': 'ByteStorage', 'bool': 'BoolStorage',
                 'complex64': 'ComplexFloatStorage', 'complex128': 'ComplexDoubleStorage'}


def _number(value):
    """An element as PyTorch's storage gives it: a Python bool, int, float or complex."""
    kind = value.dtype.kind
    if kind == 'V':  # (bfloat16)
        return float(value)
    return value.item()


UntypedStorage.__module__ = TypedStorage.__module__ = 'leafgrad.storage'


def _as_device(device):
    return device if isinstance(device, backend.device) else backend.device(str(device))


def is_storage(obj, /):
    """Whether ``obj`` is a storage (untyped or typed), not a tensor."""
    return type(obj) in (UntypedStorage, TypedStorage)
