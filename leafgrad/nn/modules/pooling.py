"""Pooling modules: max, average, adaptive average and adaptive max pooling, max unpooling in 1, 2
and 3 dimensions, power-average pooling (PyTorch's options and reprs)."""
from .. import functional as F
from .module import Module


class MaxPool2d(Module):
    _fn = 'max_pool2d'

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, '
                f'dilation={self.dilation}, ceil_mode={self.ceil_mode}')


class AvgPool2d(Module):
    _fn = 'avg_pool2d'

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}'


class AdaptiveAvgPool2d(Module):
    _fn = 'adaptive_avg_pool2d'

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size)

    def extra_repr(self):
        return f'output_size={self.output_size}'


class MaxPool1d(MaxPool2d):
    _fn = 'max_pool1d'


class MaxPool3d(MaxPool2d):
    _fn = 'max_pool3d'


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        single = lambda x: tuple(x) if isinstance(x, (tuple, list)) else (x,)  # noqa: E731
        self.kernel_size = single(kernel_size)
        self.stride = single(stride if stride is not None else kernel_size)
        self.padding = single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}'


class AvgPool3d(AvgPool2d):
    _fn = 'avg_pool3d'


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    _fn = 'adaptive_avg_pool1d'


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    _fn = 'adaptive_avg_pool3d'


class AdaptiveMaxPool2d(Module):
    _fn = 'adaptive_max_pool2d'

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f'output_size={self.output_size}'


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    _fn = 'adaptive_max_pool1d'


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    _fn = 'adaptive_max_pool3d'


def _ntuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class MaxUnpool2d(Module):
    """The inverse of MaxPool2d: values back at the indices it returned, zeros elsewhere."""
    _n = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def forward(self, input, indices, output_size=None):
        return getattr(F, f'max_unpool{self._n}d')(input, indices, self.kernel_size, self.stride, self.padding,
                                                    output_size)

    def extra_repr(self):
        return f'kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}'


class MaxUnpool1d(MaxUnpool2d):
    _n = 1


class MaxUnpool3d(MaxUnpool2d):
    _n = 3


class LPPool2d(Module):
    _fn = 'lp_pool2d'

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f'norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, '
                f'ceil_mode={self.ceil_mode}')


class LPPool1d(LPPool2d):
    _fn = 'lp_pool1d'


class LPPool3d(LPPool2d):
    _fn = 'lp_pool3d'


class _FractionalMaxPoolNd(Module):
    """Fractional max pooling over windows of ``kernel_size`` to ``output_size`` (or
    ``output_ratio`` of the input's size); ``_random_samples`` (a buffer, when given) fixes the
    windows' placement, else each call draws it."""
    _n = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        name = type(self).__name__
        if self._n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f'kernel_size must be greater than 0, but got {kernel_size}')  # (3-D's check only)
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.return_indices = return_indices
        self.register_buffer('_random_samples', _random_samples)
        self.output_size = _ntuple(output_size, self._n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, self._n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f'{name} requires specifying either an output size, or a pooling ratio')
        if output_size is not None and output_ratio is not None:
            raise ValueError('only one of output_size and output_ratio may be specified')
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f'output_ratio must be between 0 and 1 (got {output_ratio})')

    def forward(self, input):
        pool = F.fractional_max_pool2d if self._n == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _n = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _n = 3


__all__ = ['FractionalMaxPool2d', 'FractionalMaxPool3d', 'AdaptiveMaxPool1d', 'AdaptiveMaxPool2d', 'AdaptiveMaxPool3d', 'MaxUnpool1d', 'MaxUnpool2d', 'MaxUnpool3d',
           'LPPool1d', 'LPPool2d', 'LPPool3d',
           'MaxPool1d', 'MaxPool2d', 'MaxPool3d', 'AvgPool1d', 'AvgPool2d', 'AvgPool3d', 'AdaptiveAvgPool1d',
           'AdaptiveAvgPool2d', 'AdaptiveAvgPool3d']
