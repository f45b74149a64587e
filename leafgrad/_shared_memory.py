"""A tensor's memory moved into shared memory (``Tensor.share_memory_``), which other processes
map (``leafgrad.multiprocessing.reductions`` sends it).

Design note. A leafgrad tensor's memory is a NumPy array, which cannot be moved; so
``share_memory_()`` copies it into a new shared mapping (an anonymous ``memfd`` file, mapped
MAP_SHARED) and points the tensor, and every live view of it, at the copy, at the same offsets
and strides.

An alias that is no registered view (``t.data``, ``t.detach()``) taken before the call keeps
the old memory: PyTorch's storage moves under it, leafgrad's array cannot.
"""
import mmap
import os
import weakref

import numpy as np

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
