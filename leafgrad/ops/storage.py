"""A tensor's storage: ``Tensor.untyped_storage``, ``storage``, ``storage_offset``, ``resize_``,
``resize_as_``, ``as_subclass`` and ``leafgrad.empty_strided``.

A tensor's storage here is the NumPy buffer its array is a view of (the array that owns the
memory, found through ``ndarray.base``): the storage offset is where the tensor's first element
lies in that buffer, and ``resize_`` reuses the buffer as PyTorch reuses a storage: shrinking
keeps it whole, so that growing again within it brings the old elements back.

Each op is declared once (``_op.Op``): untyped_storage, storage, storage_offset, resize_ and
as_subclass are Tensor methods only, resize_as_ also a torch function, empty_strided a function
only, as PyTorch's.
"""
import numpy as _np

from .. import _memory_format, backend
from .._arg_parser import int_list
from ..tensor import Tensor, no_arguments
from ._op import Op, warn_once
from ._util import ops, storage_owner, xp
from .._arg_parser import refuse_arguments


_owner = storage_owner


def _address(array):
    interface = getattr(array, '__array_interface__', None)
    if interface is None:  # a CuPy array: its memory pointer (at its first element)
        return array.data.ptr
    return interface['data'][0]


class StorageOffset(Op):
    """Tensor.storage_offset(): the index in the storage of the tensor's first element (0 for a
    tensor that owns it)."""
    op, function = 'storage_offset', False

    def forward(self):
        data = self._data
        return (_address(data) - _address(_owner(data))) // data.itemsize

    def method(self, *args, **kwargs):  # (PyTorch's words for arguments to a method that takes none)
        if args or kwargs:
            no_arguments('storage_offset', args)
        return StorageOffset.forward(self)


class UntypedStorageOf(Op):
    """Tensor.untyped_storage(): the bytes of the tensor's storage (of the array that owns its
    memory: a view's is its base's), shared with the tensor: ``nbytes()``, ``data_ptr()``,
    ``size()``, and its bytes read and written one at a time."""
    op, function = 'untyped_storage', False

    def forward(self):
        owner = _owner(self._data)
        if not owner.flags.c_contiguous:  # (a view of memory that no array owns: as_strided's)
            owner = self._data if self._data.flags.c_contiguous else owner.copy()
        from .._storage import UntypedStorage  # (loaded when first used: ~0.8 ms of `import leafgrad` otherwise)
        return UntypedStorage(owner.reshape(-1).view(_np.uint8))


_STORAGE_WARNING = (
    'TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage '
    'class. This should only matter to you if you are using storages directly.  To access UntypedStorage '
    'directly, use tensor.untyped_storage() instead of tensor.storage()')


class StorageOf(Op):
    """Tensor.storage(): the tensor's storage read as elements of its dtype (a TypedStorage,
    PyTorch's deprecated API: its warning once a process), shared with the tensor."""
    op, function = 'storage', False

    def forward(self):
        warn_once(_STORAGE_WARNING)
        from .._storage import TypedStorage  # (loaded when first used)
        return TypedStorage(ops.untyped_storage(self), self.dtype, self._data.dtype, Tensor._wrap)

    def method(self, *args, **kwargs):  # (Python's words for arguments to a method that takes none)
        if args or kwargs:
            raise TypeError(f'Tensor.storage() takes 1 positional argument but {len(args) + 1} were given')
        return StorageOf.forward(self)


class Resize_(Op):
    """Tensor.resize_(*sizes, memory_format=None): give the tensor the shape ``size``, keeping
    its storage (the elements it holds, in order from its storage offset) where the storage is
    large enough, as PyTorch: the elements beyond it are uninitialised. A tensor that requires
    grad cannot be resized."""
    op, function = 'resize_', False

    def forward(self, *size, memory_format=None):
        if not size:
            raise TypeError('resize_() missing 1 required positional arguments: "size"')
        shape = int_list(size, 'resize_')
        if self._requires_grad:
            raise RuntimeError('cannot resize variables that require grad')
        if any(s < 0 for s in shape):
            raise RuntimeError('numel: integer multiplication overflow')
        order = None
        if memory_format is not None:
            _memory_format.check(memory_format, 'resize_')
            if memory_format is _memory_format.preserve_format:
                raise RuntimeError('Unsupported memory formatPreserve')
            if memory_format is not _memory_format.contiguous_format:
                rank, order = _memory_format._PERMUTED[memory_format]
                if len(shape) != rank:
                    raise RuntimeError(f'required rank {rank} tensor to use {memory_format.name} format')
        data = self._data
        if data.shape != shape or order is not None:
            n = 1
            for s in shape:
                n *= s
            owner = _owner(data)
            start = ops.storage_offset(self)
            if owner.flags.c_contiguous and backend.writeable(data) and start + n <= owner.size:
                flat = owner.reshape(-1)[start:start + n]  # within the storage: its elements, shared
            else:  # the storage grows: the elements it held first, then uninitialised ones (zeros here)
                flat = xp.zeros(n, dtype=data.dtype, like=data)
                held = owner.reshape(-1)[start:start + n] if owner.flags.c_contiguous else data.reshape(-1)[:n]
                flat[:held.size] = held
            if order is None:
                self._data = flat.reshape(shape)
            else:  # the storage's elements in the format's order of dims (channels last: N H W C)
                self._data = flat.reshape([shape[d] for d in order]).transpose(_np.argsort(order))
        self._version_counter[0] += 1
        return self


class ResizeAs_(Op):
    """resize_as_(input, the_template, *, memory_format=None) (Tensor.resize_as_): ``resize_`` to
    the shape of ``the_template``."""
    op = 'resize_as_'

    def forward(self, the_template, *, memory_format=None):
        try:
            return ops.resize_(self, tuple(the_template._data.shape), memory_format=memory_format)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class AsSubclass(Op):
    """Tensor.as_subclass(cls): the tensor as an instance of ``cls`` (a subclass of Tensor),
    sharing its memory and history: an alias (AliasBackward0 when it requires grad), as
    PyTorch's."""
    op, function = 'as_subclass', False

    def forward(self, cls):
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError('Creating a Tensor subclass from a class that does not inherit from Tensor is not '
                            'possible. Make sure your class inherits from Tensor.')
        out = ops.alias(self)
        out.__class__ = cls
        return out


class EmptyStrided(Op):
    """empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
    pin_memory=False): an uninitialised tensor of shape ``size`` whose elements lie ``stride``
    apart in its own storage (as large as the last element needs)."""
    op, method = 'empty_strided', False

    def forward(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
        for name, value in (('size', size), ('stride', stride)):
            if not isinstance(value, (tuple, list)):
                raise TypeError(f"empty_strided(): argument '{name}' (position {1 + (name == 'stride')}) must be "
                                f'tuple of ints, not {type(value).__name__}')
        size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
        if len(size) != len(stride):
            raise RuntimeError(f'dimensionality of sizes ({len(size)}) must match dimensionality of strides '
                               f'({len(stride)})')
        for s in size:
            if s < 0:
                raise RuntimeError(f'Trying to create tensor with negative dimension {s}: {list(size)}')
        if any(s < 0 for s in stride):
            raise RuntimeError(f'Storage size calculation overflowed with sizes={list(size)} and '
                               f'strides={list(stride)}')
        _memory_format.check_layout(layout, 'empty_strided')
        if pin_memory:
            raise RuntimeError('pin_memory=True requires a CUDA or other accelerator backend; no pinned memory '
                               'allocator is available on this system.')
        numel = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
        storage = ops.empty(numel, dtype=dtype, device=device)
        buffer = storage._data
        storage._data = _np.lib.stride_tricks.as_strided(buffer, size, tuple(st * buffer.itemsize for st in stride))
        if requires_grad:
            if buffer.dtype.kind not in 'fVc':
                raise RuntimeError('Only Tensors of floating point and complex dtype can require gradients')
            storage.requires_grad_(True)
        return storage

