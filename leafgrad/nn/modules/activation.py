"""Activation modules: each holds its options and calls the functional op of the same name.

The functional op is looked up when the module runs (``F.<op>``), so a module works as soon as
the op library provides it. MultiheadAttention lives in attention.py and is found here too, where
PyTorch has it (``torch.nn.modules.activation.MultiheadAttention``, as checkpoints name it).
"""
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from ... import creation


def _inplace_repr(inplace):
    return 'inplace=True' if inplace else ''


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class _Plain(Module):
    """An activation without options."""
    _fn = None

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return getattr(F, self._fn)(input)


class ReLU(_Inplace):
    _fn = 'relu'


class ReLU6(_Inplace):
    _fn = 'relu6'


class SELU(_Inplace):
    _fn = 'selu'


class SiLU(_Inplace):
    _fn = 'silu'


class Mish(_Inplace):
    _fn = 'mish'


class Hardsigmoid(_Inplace):
    _fn = 'hardsigmoid'


class Hardswish(_Inplace):
    _fn = 'hardswish'


class Sigmoid(_Plain):
    _fn = 'sigmoid'


class Tanh(_Plain):
    _fn = 'tanh'


class LogSigmoid(_Plain):
    _fn = 'logsigmoid'


class Softsign(_Plain):
    _fn = 'softsign'


class Tanhshrink(_Plain):
    _fn = 'tanhshrink'


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f'negative_slope={self.negative_slope}' + (', inplace=True' if self.inplace else '')



class RReLU(Module):
    """Randomized leaky ReLU (F.rrelu): random slopes in [lower, upper] in training, their mean in eval."""

    def __init__(self, lower=1. / 8, upper=1. / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f'lower={self.lower}, upper={self.upper}' + (', inplace=True' if self.inplace else '')

class ELU(Module):
    _fn = 'elu'

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f'alpha={self.alpha}' + (', inplace=True' if self.inplace else '')


class CELU(ELU):
    _fn = 'celu'


class GELU(Module):
    def __init__(self, approximate='none'):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f'approximate={self.approximate!r}'


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f'beta={self.beta}, threshold={self.threshold}'


class Softshrink(Module):
    _fn = 'softshrink'

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return getattr(F, self._fn)(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Softshrink):
    _fn = 'hardshrink'


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f'max_val ({self.max_val}) must be greater than min_val ({self.min_val})')

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f'min_val={self.min_val}, max_val={self.max_val}' + (', inplace=True' if self.inplace else '')


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f'threshold={self.threshold}, value={self.value}' + (', inplace=True' if self.inplace else '')


class _DimActivation(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return getattr(F, self._fn)(input, self.dim)

    def extra_repr(self):
        return f'dim={self.dim}'


class Softmax(_DimActivation):
    _fn = 'softmax'


class Softmin(_DimActivation):
    _fn = 'softmin'


class LogSoftmax(_DimActivation):
    _fn = 'log_softmax'


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f'Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead')
        return F.softmax(input, -3)


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f'dim={self.dim}'


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f'num_parameters={self.num_parameters}'


__all__ = ['ReLU', 'ReLU6', 'LeakyReLU', 'RReLU', 'ELU', 'CELU', 'SELU', 'GELU', 'SiLU', 'Mish', 'Softplus', 'Softsign',
           'Softshrink', 'Hardshrink', 'Hardtanh', 'Hardsigmoid', 'Hardswish', 'Sigmoid', 'LogSigmoid', 'Tanh',
           'Tanhshrink', 'Threshold', 'Softmax', 'Softmin', 'LogSoftmax', 'Softmax2d', 'GLU', 'PReLU']


from .attention import MultiheadAttention  # noqa: E402,F401  (after the classes: attention needs none of them)
