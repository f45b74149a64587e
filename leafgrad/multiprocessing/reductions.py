"""How tensors in shared memory travel between processes.

Design note. ``share_memory_()`` (``leafgrad._shared_memory``) puts a tensor's memory in an
anonymous ``memfd`` file mapped MAP_SHARED. A forked child inherits the mapping; a spawned one,
or any process a tensor reaches through multiprocessing's pickler (``Process`` arguments,
``Queue``, ``Pipe``), gets a duplicate of the file descriptor and maps the same memory
(``rebuild_shared``); a tensor sent that way is moved into shared memory first, as PyTorch moves
it. The file is freed by the kernel when the last mapping and descriptor are gone, so no
process has to clean up after another (PyTorch's ``file_descriptor`` strategy).
"""
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .. import backend
from .._shared_memory import _address, _files, _map, _mapping_of
from ..nn.parameter import Parameter
from ..tensor import Tensor



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
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
