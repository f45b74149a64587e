"""Tensors in shared memory, and how they travel between processes.

Design note. A leafgrad tensor's memory is a NumPy array, which cannot be moved; so
``share_memory_()`` copies it into a new shared mapping (an anonymous ``memfd`` file, mapped
MAP_SHARED) and points the tensor, and every live view of it, at the copy, at the same offsets
and strides. A forked child inherits the mapping; a spawned one, or any process a tensor
reaches through multiprocessing's pickler (``Process`` arguments, ``Queue``, ``Pipe``), gets a
duplicate of the file descriptor and maps the same memory (``rebuild_shared``); a tensor sent that way is moved into shared memory first, as
PyTorch moves it. The file is
freed by the kernel when the last mapping and descriptor are gone, so no process has to clean
up after another (PyTorch's ``file_descriptor`` strategy).

An alias that is no registered view (``t.data``, ``t.detach()``) taken before the call keeps
the old memory: PyTorch's storage moves under it, leafgrad's array cannot.
"""
import mmap
import os
import weakref
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .. import backend
from ..tensor import Tensor

# the mapping of each shared array -> its file (kept open while the mapping lives, for the
# descriptors that pickling hands to other processes)
_files = weakref.WeakKeyDictionary()


class _File:
    __slots__ = ('fd', 'size', '__weakref__')

    def __init__(self, fd, size):
        self.fd, self.size = fd, size

    def __del__(self):
        os.close(self.fd)


def _map(fd, size):
    mapping = mmap.mmap(fd, size)  # MAP_SHARED: writes reach every process that maps the file
    _files[mapping] = _File(fd, size)
    return mapping


def _mapping_of(array):
    while isinstance(array, np.ndarray):
        array = array.base
    return array if isinstance(array, mmap.mmap) and array in _files else None


def is_shared(array):
    return type(array) is np.ndarray and _mapping_of(array) is not None


def _address(array):
    return array.__array_interface__['data'][0]


def share(tensor):
    """Move ``tensor``'s memory into a new shared mapping; the tensor it is a view of, and that
    tensor's live views, move with it, as in PyTorch, where they share a storage."""
    root = tensor._base if tensor._base is not None else tensor
    old = root._data
    low, high = np.lib.array_utils.byte_bounds(old)
    size = max(high - low, 1)
    fd = os.memfd_create('leafgrad-shared', os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, size)
        mapping = _map(fd, size)
    except BaseException:
        os.close(fd)
        raise

    def moved(array):
        return np.ndarray(array.shape, array.dtype, buffer=mapping, offset=_address(array) - low,
                          strides=array.strides)
    new = moved(old)
    new[...] = old
    views = [v for v in root._views.alive()] if getattr(root, '_views', None) is not None else []
    root._data = new
    for view in views:
        if type(view._data) is np.ndarray and np.shares_memory(view._data, old):
            view._data = moved(view._data)
    if tensor is not root and not is_shared(tensor._data):
        tensor._data = moved(tensor._data)


def rebuild_shared(cls, dupfd, size, shape, dtype, offset, strides, requires_grad):
    """In the receiving process: the same memory, mapped from a duplicate of the file descriptor."""
    mapping = _map(dupfd.detach(), size)
    array = np.ndarray(shape, backend.to_dtype(dtype).np, buffer=mapping, offset=offset, strides=strides)
    tensor = Tensor._wrap(array)
    if cls is not Tensor:
        return cls(tensor, requires_grad=requires_grad)
    return tensor.requires_grad_(requires_grad) if requires_grad else tensor


def reduce_tensor(tensor):
    """How multiprocessing's pickler sends a CPU tensor: by its memory, moved into shared memory
    first if it is not there yet (as PyTorch's reductions move it), so that sender and receiver
    share it."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError('Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does '
                           'not support crossing process boundaries.  If you just want to transfer the data, call '
                           'detach() on the tensor before serializing (e.g., putting it on the queue).')
    if type(tensor._data) is not np.ndarray:
        return tensor.__reduce_ex__(4)  # (a GPU or meta tensor: refused, as leafgrad pickles no tensor)
    tensor.share_memory_()
    mapping = _mapping_of(tensor._data)
    file = _files[mapping]
    offset = _address(tensor._data) - _address(np.frombuffer(mapping, np.uint8, 1))
    return (rebuild_shared, (type(tensor), DupFd(file.fd), file.size, tuple(tensor._data.shape), tensor.dtype.name,
                             offset, tuple(tensor._data.strides), tensor.requires_grad))


def init_reductions():
    from ..nn.parameter import Parameter
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
