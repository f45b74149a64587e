import math

from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from ... import creation


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b, initialised as PyTorch does (kaiming_uniform_ with a=sqrt(5))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f'in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}'


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's class of MultiheadAttention's output projection (its reprs and checkpoints name it)."""


class Bilinear(Module):
    """y_k = x1^T A_k x2 + b_k; weight (out, in1, in2), initialised U(-1/sqrt(in1), 1/sqrt(in1))."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty((out_features, in1_features, in2_features), device=device,
                                               dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.in1_features <= 0:
            raise ValueError(f'in1_features must be > 0, but got (in1_features={self.in1_features})')
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        if hasattr(F, 'bilinear'):
            return F.bilinear(input1, input2, self.weight, self.bias)
        return _bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f'in1_features={self.in1_features}, in2_features={self.in2_features}, '
                f'out_features={self.out_features}, bias={self.bias is not None}')


def _bilinear(x1, x2, weight, bias):
    # x1 (.., in1) @ A viewed as (in1, out*in2) gives (.., out, in2); contract with x2 over in2.
    out_f, in1, in2 = weight.shape
    a = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    lead = tuple(x1.shape[:-1])
    y = (x1 @ a).reshape(lead + (out_f, in2))
    y = (y * x2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias
