"""Rearranging channels: PixelShuffle / PixelUnshuffle (channels to and from space, as in
sub-pixel convolution) and ChannelShuffle (interleaving channel groups)."""
from .. import functional as F
from .module import Module


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f'upscale_factor={self.upscale_factor}'


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f'downscale_factor={self.downscale_factor}'


class ChannelShuffle(Module):
    """(N, g * c, *) -> the channels regrouped: channel i of group j moves to position i * g + j."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f'groups={self.groups}'


__all__ = ['PixelShuffle', 'PixelUnshuffle', 'ChannelShuffle']
