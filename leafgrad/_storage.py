"""``UntypedStorage``: the bytes under a tensor, on a device (PyTorch's ``torch.UntypedStorage``):
what ``Tensor.untyped_storage()`` returns and what a ``map_location`` callable receives and
returns when a checkpoint loads."""
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

    def __repr__(self):
        return f'[leafgrad.serialization.UntypedStorage(device={self.device}) of size {self.nbytes()}]'


def _as_device(device):
    return device if isinstance(device, backend.device) else backend.device(str(device))
