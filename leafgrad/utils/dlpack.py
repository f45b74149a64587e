"""``torch.utils.dlpack``: tensors exchanged with other libraries through DLPack, without a copy.

leafgrad's tensors are NumPy arrays underneath, and NumPy speaks DLPack: ``from_dlpack`` takes
anything with ``__dlpack__`` (a NumPy array, a PyTorch or leafgrad tensor ...) or a DLPack capsule
and gives a tensor on the same memory; ``to_dlpack`` and ``Tensor.__dlpack__`` give NumPy's
capsule of a tensor's array.

>>> import numpy as np, leafgrad
>>> a = np.zeros(3)
>>> t = leafgrad.from_dlpack(a)
>>> a[0] = 5.0
>>> t
tensor([5., 0., 0.], dtype=leafgrad.float64)
"""
import enum

from .. import backend
from ..ops._util import wrap
from ..tensor import Tensor

__all__ = ['DLDeviceType', 'from_dlpack']

_INVALID = ('from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you '
            'might have already constructed a tensor from it once.')


class DLDeviceType(enum.IntEnum):
    """The DLPack device types, as DLPack numbers them."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


class _Capsule:
    """A bare DLPack capsule as NumPy's ``from_dlpack`` takes a producer: one on the CPU."""
    __slots__ = ('capsule',)

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return (DLDeviceType.kDLCPU, 0)


_ON_GPU = (2, 13)  # kDLCUDA, kDLCUDAManaged


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor on the memory of ``ext_tensor`` (an object with ``__dlpack__``, or a DLPack
    capsule, which can be read once); ``copy=True``: on a copy of it."""
    xp = backend.numpy
    if isinstance(ext_tensor, Tensor):
        ext_tensor.__dlpack__()  # (a tensor that requires grad is refused, as PyTorch refuses it)
        data = ext_tensor._data
        if copy:
            data = data.copy()
    elif hasattr(ext_tensor, '__dlpack__'):
        where = getattr(ext_tensor, '__dlpack_device__', None)
        if where is not None and where()[0] in _ON_GPU:  # (a CUDA array: CuPy takes it, on the same memory)
            xp = backend.module_for(backend.device('cuda', where()[1]))
        try:
            data = xp.from_dlpack(ext_tensor, copy=copy)
        except TypeError:  # (a producer that takes no copy=)
            data = xp.from_dlpack(ext_tensor)
            if copy:
                data = data.copy()
    else:
        if device is not None or copy is not None:
            raise AssertionError('device and copy kwargs not supported when ext_tensor is already a DLPack capsule.')
        if type(ext_tensor).__name__ != 'PyCapsule':
            raise RuntimeError(_INVALID)
        try:
            data = xp.from_dlpack(_Capsule(ext_tensor))
        except (RuntimeError, ValueError, TypeError, BufferError):
            if not backend.cuda_available():
                raise RuntimeError(_INVALID) from None
            try:  # (a capsule of GPU memory, which only CuPy reads)
                data = backend.module_for('cuda').from_dlpack(ext_tensor)
            except Exception:
                raise RuntimeError(_INVALID) from None
    out = wrap(data)  # (the tensor on the array itself)
    if device is not None and backend.device(device).type != 'cpu':
        return out.to(device)
    return out


def to_dlpack(tensor):
    """to_dlpack(tensor) -> PyCapsule: NumPy's DLPack capsule of ``tensor``'s array (read once).
    As in PyTorch, a tensor that requires grad is no error here (``__dlpack__`` refuses it)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_to_dlpack(): argument 'data' (position 1) must be Tensor, not {type(tensor).__name__}")
    return tensor._data.__dlpack__()


def tensor_dlpack(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: NumPy's capsule of the tensor's array; refused for a tensor that
    requires grad, as PyTorch refuses it."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    kwargs = {} if max_version is None else {'max_version': max_version}
    if copy is not None:
        kwargs['copy'] = copy
    if stream not in (-1, None) and backend.on_gpu(self._data):  # (the consumer's stream, which CuPy orders with its own)
        kwargs['stream'] = stream
    return self._data.__dlpack__(**kwargs)


def tensor_dlpack_device(self):
    """``Tensor.__dlpack_device__``: (kDLCPU, 0), or (kDLCUDA, index) for a tensor on a GPU."""
    device = self.device
    if device.type == 'cuda':
        return (DLDeviceType.kDLCUDA, device.index or 0)
    return (DLDeviceType.kDLCPU, 0)
