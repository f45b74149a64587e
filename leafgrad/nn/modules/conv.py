"""Convolutions (1, 2, 3-d) and transposed convolutions, with PyTorch's parameters and initialisation."""
import math

from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from ... import creation


def _ntuple(n):
    def parse(x):
        if isinstance(x, (tuple, list)):
            return tuple(x)
        return (x,) * n
    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


class _ConvNd(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError('groups must be a positive integer')
        if in_channels % groups != 0:
            raise ValueError('in_channels must be divisible by groups')
        if out_channels % groups != 0:
            raise ValueError('out_channels must be divisible by groups')
        valid = {'same', 'valid'}
        if isinstance(padding, str):
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid}")
            if padding == 'same' and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_modes = {'zeros', 'reflect', 'replicate', 'circular'}  # (a set, printed as PyTorch prints its own)
        if padding_mode not in valid_modes:
            raise ValueError(f"padding_mode must be one of {valid_modes}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        self.weight = Parameter(creation.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a=sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as in PyTorch
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = '{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}'
        if self.padding != (0,) * (len(self.padding) if not isinstance(self.padding, str) else 0):
            s += ', padding={padding}'
        if self.dilation != (1,) * len(self.dilation):
            s += ', dilation={dilation}'
        if self.output_padding != (0,) * len(self.output_padding):
            s += ', output_padding={output_padding}'
        if self.groups != 1:
            s += ', groups={groups}'
        if self.bias is None:
            s += ', bias=False'
        if self.padding_mode != 'zeros':
            s += ', padding_mode={padding_mode}'
        return s.format(**self.__dict__)

    def _padded(self, input, n):
        """Input padded by padding_mode (non-zero modes pad explicitly, then convolve unpadded)."""
        pad = []
        for p in reversed(self.padding):
            pad += [p, p]
        mode = self.padding_mode
        return F.pad(input, pad, mode=mode)


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode='zeros', device=None, dtype=None):
        padding = padding if isinstance(padding, str) else _single(padding)
        super().__init__(in_channels, out_channels, _single(kernel_size), _single(stride), padding,
                         _single(dilation), False, _single(0), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        if self.padding_mode != 'zeros':
            return F.conv1d(self._padded(input, 1), self.weight, self.bias, self.stride, _single(0), self.dilation,
                            self.groups)
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode='zeros', device=None, dtype=None):
        padding = padding if isinstance(padding, str) else _pair(padding)
        super().__init__(in_channels, out_channels, _pair(kernel_size), _pair(stride), padding,
                         _pair(dilation), False, _pair(0), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        if self.padding_mode != 'zeros':
            return F.conv2d(self._padded(input, 2), self.weight, self.bias, self.stride, _pair(0), self.dilation,
                            self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode='zeros', device=None, dtype=None):
        padding = padding if isinstance(padding, str) else _triple(padding)
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride), padding,
                         _triple(dilation), False, _triple(0), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        if self.padding_mode != 'zeros':
            return F.conv3d(self._padded(input, 3), self.weight, self.bias, self.stride, _triple(0), self.dilation,
                            self.groups)
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    _n = 2
    _fn = 'conv_transpose2d'

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode='zeros', device=None, dtype=None):
        if padding_mode != 'zeros':
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        t = _ntuple(self._n)
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding), t(dilation), True,
                         t(output_padding), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = tuple(output_size)[-n:]
        pads = []
        for d in range(n):
            size = input.shape[d - n]
            min_size = ((size - 1) * self.stride[d] - 2 * self.padding[d] +
                        self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            extra = output_size[d] - min_size
            if not 0 <= extra < max(self.stride[d], self.dilation[d]):
                raise ValueError(f'requested an output size of {output_size}, but valid sizes range from '
                                 f'{min_size} to {min_size + self.stride[d] - 1} (for an input of {size})')
            pads.append(extra)
        return tuple(pads)

    def forward(self, input, output_size=None):
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, self.padding,
                                    self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1
    _fn = 'conv_transpose1d'


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2
    _fn = 'conv_transpose2d'


class ConvTranspose3d(_ConvTransposeNd):
    _n = 3
    _fn = 'conv_transpose3d'


__all__ = ['Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose1d', 'ConvTranspose2d', 'ConvTranspose3d']
