"""Flatten parameters into one vector and back."""
from ...tensor import Tensor
from ... import ops
from ..modules.module import _typename


def _check_same_device(param, old):
    dev = param.device
    if old is not None and dev != old:
        raise TypeError('Found two parameters on different devices, this is currently not supported.')
    return dev


def parameters_to_vector(parameters):
    """One 1-D tensor of every parameter, flattened and concatenated (recorded by autograd)."""
    device = None
    vec = []
    for param in parameters:
        device = _check_same_device(param, device)
        vec.append(param.reshape(-1))
    return ops.cat(vec)


def vector_to_parameters(vec, parameters):
    """Copy slices of ``vec`` into the parameters' data (no autograd history)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f'expected torch.Tensor, but got: {_typename(vec)}')
    device = None
    pointer = 0
    flat = vec._data.reshape(-1)
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param._data = flat[pointer:pointer + n].reshape(param._data.shape)
        pointer += n
