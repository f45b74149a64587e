"""Padding modules: constant (zero), reflection, replication and circular, as F.pad calls."""
from .. import functional as F
from .module import Module


def _ntuple(n, x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * (2 * n)


class _PadNd(Module):
    _mode = 'constant'
    _n = 1

    def __init__(self, padding, value=None):
        super().__init__()
        self.padding = _ntuple(self._n, padding)
        if value is not None:
            self.value = value

    def forward(self, input):
        if self._mode == 'constant':
            return F.pad(input, self.padding, 'constant', self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f'{self.padding}'


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding, value)

    def extra_repr(self):
        return f'padding={self.padding}, value={self.value}'


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f'{self.padding}'


def _mode_pad(mode, n, name):
    return type(name, (_PadNd,), {'_mode': mode, '_n': n, '__init__': lambda self, padding: _PadNd.__init__(
        self, padding), '__module__': __name__, '__qualname__': name})


ReflectionPad1d = _mode_pad('reflect', 1, 'ReflectionPad1d')
ReflectionPad2d = _mode_pad('reflect', 2, 'ReflectionPad2d')
ReflectionPad3d = _mode_pad('reflect', 3, 'ReflectionPad3d')
ReplicationPad1d = _mode_pad('replicate', 1, 'ReplicationPad1d')
ReplicationPad2d = _mode_pad('replicate', 2, 'ReplicationPad2d')
ReplicationPad3d = _mode_pad('replicate', 3, 'ReplicationPad3d')
CircularPad1d = _mode_pad('circular', 1, 'CircularPad1d')
CircularPad2d = _mode_pad('circular', 2, 'CircularPad2d')
CircularPad3d = _mode_pad('circular', 3, 'CircularPad3d')

__all__ = ['ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d',
           'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d', 'ReplicationPad1d', 'ReplicationPad2d',
           'ReplicationPad3d', 'CircularPad1d', 'CircularPad2d', 'CircularPad3d']
