"""nn.utils' conversions of the convolutions' weights to a memory format (channels_last), the
rest of the model left as it is."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ['convert_conv2d_weight_memory_format', 'convert_conv3d_weight_memory_format']


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weights of every Conv2d and ConvTranspose2d in ``module`` (itself included) laid out
    in ``memory_format``; returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """As convert_conv2d_weight_memory_format, for Conv3d and ConvTranspose3d."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
