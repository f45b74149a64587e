"""Activation functions: leaky_relu, elu/selu/celu, gelu, silu, softplus, hardtanh/relu6,
logsigmoid, mish, hardswish, hardsigmoid, threshold, hardshrink/softshrink, softsign,
tanhshrink.

Most are ``torch.nn.functional`` functions only; ``FUNCTIONAL`` lists what ``nn.functional``
re-exports from here, and ``FUNCTIONS`` only those PyTorch also has as ``torch.<name>``.
Derivatives are written with leafgrad ops, so that second derivatives work; where PyTorch's
derivative at a kink takes one side, the masks below use the same strict or non-strict
comparison as PyTorch's kernels.
"""
import math

from .. import backend
from ..autograd.graph import elementwise_jvp
from . import elementwise as ew
from ._util import SCALAR_NAMES, Node, in_float32, opmath, record, unary, wrap, xp
from ._inplace import inplace as _run_inplace
from .unary import erf


def _maybe_inplace(fn, input, inplace, *args):
    if inplace:
        return _run_inplace(input, lambda s: fn(s, *args))
    return fn(input, *args)


def _mask(cond, like):
    """A constant 0/1 tensor of ``like``'s dtype (a derivative's piecewise factor)."""
    return wrap(cond.astype(like._data.dtype))


_DTYPE_LABEL = SCALAR_NAMES  # (the name other modules import)


def _float(input, kernel):
    """The array an activation computes on: float32 for bfloat16 (PyTorch's kernels compute in
    float32 and round once: ``_rounded`` casts the result back)."""
    data = input._data
    if data.dtype.kind not in 'fV':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_DTYPE_LABEL[data.dtype.name]}\'')
    return opmath(data)


def _rounded(data, input):
    """An activation's result in its input's dtype (a bfloat16 input was computed in float32)."""
    dtype = input._data.dtype
    return data if data.dtype == dtype else data.astype(dtype)


# ---- leaky_relu ----------------------------------------------------------------------------

class LeakyReluBackward0(Node):
    __slots__ = ('negative_slope',)

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        slope = xp.where(x._data > 0, 1.0, self.negative_slope)
        return ew.masked_grad(grad, slope, x, 'LeakyReluBackwardBackward0'),


class LeakyReluBackward1(LeakyReluBackward0):
    """The in-place variant's node (PyTorch names it apart)."""
    __slots__ = ()


def _leaky_relu(input, negative_slope=0.01, node_cls=LeakyReluBackward0):
    x = _float(input, 'leaky_relu_cpu')
    result, node = record(_rounded(xp.where(x > 0, x, x * x.dtype.type(negative_slope)), input), node_cls, (input,))
    if node is not None:
        node.negative_slope = negative_slope
        node.save(input)
    return result


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _run_inplace(input, lambda s: _leaky_relu(s, negative_slope, LeakyReluBackward1))
    return _leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


# ---- elu, selu, celu -----------------------------------------------------------------------

class EluBackward0(Node):
    """scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))."""
    __slots__ = ('alpha', 'scale', 'input_scale')

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    def formula(self, grad, x):
        # selected, as PyTorch's kernel (x <= 0 ? negative side : positive side): a NaN or an
        # infinity takes the positive side's slope, never exp(inf) * 0
        neg = grad * (ew.exp(x * self.input_scale) * (self.alpha * self.input_scale * self.scale))
        return ew.where(wrap(x._data <= 0), neg, grad * self.scale)


class CeluBackward0(EluBackward0):
    __slots__ = ()


class EluBackward1(EluBackward0):
    """The in-place variants' nodes (PyTorch names them apart)."""
    __slots__ = ()


class CeluBackward1(EluBackward0):
    __slots__ = ()


def _elu_forward(input, alpha, scale, input_scale, node_cls):
    x = _float(input, 'elu_cpu')
    with xp.errstate(over='ignore'):
        # (where, not minimum: -0.0 stays -0.0, as in PyTorch's kernel)
        neg = xp.expm1(xp.where(x > 0, x.dtype.type(0), x) * input_scale) * alpha
    data = (xp.where(x > 0, x, neg) * scale).astype(input._data.dtype, copy=False)
    result, node = record(data, node_cls, (input,))
    if node is not None:
        node.alpha, node.scale, node.input_scale = alpha, scale, input_scale
        node.save(input)
    return result


def _elu_like(input, inplace, alpha, scale, input_scale, node_cls, inplace_node_cls):
    if inplace:
        return _run_inplace(input, lambda s: _elu_forward(s, alpha, scale, input_scale, inplace_node_cls))
    return _elu_forward(input, alpha, scale, input_scale, node_cls)


def elu(input, alpha=1.0, inplace=False):
    return _elu_like(input, inplace, alpha, 1.0, 1.0, EluBackward0, EluBackward1)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _elu_like(input, inplace, _SELU_ALPHA, _SELU_SCALE, 1.0, EluBackward0, EluBackward1)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError('ZeroDivisionError: alpha cannot be 0 for CELU')
    return _elu_like(input, inplace, alpha, 1.0, 1.0 / alpha, CeluBackward0, CeluBackward1)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


# ---- gelu ----------------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class GeluBackward0(Node):
    __slots__ = ('approximate',)

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    def formula(self, grad, x):
        if self.approximate == 'tanh':
            inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
            t = ew.tanh(inner)
            d_inner = (x * x * (3 * 0.044715) + 1) * _SQRT_2_OVER_PI
            return grad * ((t + 1) * 0.5 + x * 0.5 * (-t * t + 1) * d_inner)
        cdf = (erf(x * _INV_SQRT_2) + 1) * 0.5
        pdf = ew.exp(x * x * -0.5) * _INV_SQRT_2PI
        return grad * (cdf + x * pdf)


def gelu(input, approximate='none'):
    if approximate not in ('none', 'tanh'):
        raise RuntimeError(f'approximate argument must be either none or tanh.')
    x = _float(input, 'GeluKernelImpl')
    if approximate == 'tanh':
        inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
        data = x * 0.5 * (1 + xp.tanh(inner))
    else:
        data = x * 0.5 * (1 + erf(wrap(x * x.dtype.type(_INV_SQRT_2)))._data)
        raw = input._data
        if (raw.dtype == xp.float32 or raw.dtype.kind == 'V') and raw.size > 1 and raw.flags.c_contiguous:
            # PyTorch's vectorized float32/bfloat16 kernel (a contiguous tensor of more than one
            # element) gives NaN at +inf; its scalar path, as float64's and float16's, inf
            at_inf = x == xp.inf
            if at_inf.any():
                data = xp.where(at_inf, x.dtype.type('nan'), data)
    result, node = record(data.astype(input._data.dtype, copy=False), GeluBackward0, (input,))
    if node is not None:
        node.approximate = approximate
        node.save(input)
    return result


# ---- silu, mish ----------------------------------------------------------------------------

class SiluBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    @staticmethod
    def formula(grad, x):
        s = ew.sigmoid(x)
        return grad * (s * (x * (1 - s) + 1))


def _silu(input):
    x = _float(input, 'silu_cpu')
    return unary(SiluBackward0, input, _rounded(x * ew._sigmoid_array(x), input), save='input')


def silu(input, inplace=False):
    return _maybe_inplace(_silu, input, inplace)


def _softplus_array(x):
    # log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|)
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


class MishBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    @staticmethod
    def formula(grad, x):
        t = ew.tanh(softplus(x))
        return grad * (t + x * ew.sigmoid(x) * (-t * t + 1))


def _mish(input):
    x = _float(input, 'mish_cpu')
    return unary(MishBackward0, input, _rounded(x * xp.tanh(_softplus_array(x)), input), save='input')


def mish(input, inplace=False):
    return _maybe_inplace(_mish, input, inplace)


# ---- softplus, logsigmoid ------------------------------------------------------------------

class SoftplusBackward0(Node):
    __slots__ = ('beta', 'threshold')

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    def formula(self, grad, x):
        linear = _mask(x._data * self.beta > self.threshold, x)
        return grad * (linear + (1 - linear) * ew.sigmoid(x * self.beta))


def softplus(input, beta=1.0, threshold=20.0):
    x = _float(input, 'softplus_cpu')
    bx = x * x.dtype.type(beta)
    data = xp.where(bx > threshold, x, _softplus_array(bx) / x.dtype.type(beta)).astype(input._data.dtype, copy=False)
    result, node = record(data, SoftplusBackward0, (input,))
    if node is not None:
        node.beta, node.threshold = beta, threshold
        node.save(input)
    return result


class LogSigmoidBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    @staticmethod
    def formula(grad, x):
        return grad * ew.sigmoid(-x)  # d/dx log(sigmoid(x)) = 1 - sigmoid(x)


def logsigmoid(input):
    x = _float(input, 'log_sigmoid_cpu')
    return unary(LogSigmoidBackward0, input, _rounded(xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))), input),
                 save='input')


# ---- hardtanh, relu6, hardswish, hardsigmoid -----------------------------------------------

class HardtanhBackward0(Node):
    """The gradient passes strictly inside (min_val, max_val), as PyTorch's kernel."""
    __slots__ = ('min_val', 'max_val')

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        # (PyTorch's test: zero where x <= min_val or x >= max_val; at a NaN the gradient passes)
        return ew.masked_grad(grad, ~((d <= self.min_val) | (d >= self.max_val)), x, 'HardtanhBackwardBackward0'),


def _hardtanh(input, min_val=-1.0, max_val=1.0):
    if min_val > max_val:
        raise ValueError('min_val cannot be greater than max_val')
    x = input._data
    if x.dtype.kind == 'b':
        raise RuntimeError('Bool inputs not supported for hardtanh')
    data = xp.where(x < min_val, x.dtype.type(min_val), xp.where(x > max_val, x.dtype.type(max_val), x))
    result, node = record(data, HardtanhBackward0, (input,))
    if node is not None:
        node.min_val, node.max_val = min_val, max_val
        node.save(input)
    return result


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _maybe_inplace(_hardtanh, input, inplace, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


class HardswishBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    @staticmethod
    def formula(grad, x):
        # selected, as PyTorch's kernel: 0 where x <= -3, the slope inside, grad elsewhere (NaN too)
        d = x._data
        inside = ew.where(wrap(d < 3), grad * (x / 3 + 0.5), grad)
        return ew.where(wrap(d <= -3), wrap(xp.zeros_like(grad._data)), inside)


def _hardswish(input):
    x = _float(input, 'hardswish_cpu')
    return unary(HardswishBackward0, input, _rounded(x * xp.clip(x + 3, 0, 6) / 6, input), save='input')


def hardswish(input, inplace=False):
    return _maybe_inplace(_hardswish, input, inplace)


class HardsigmoidBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        # PyTorch has no second derivative here: differentiating this gradient raises
        from .rounding import NotImplementedNode
        # PyTorch's kernel multiplies by 1/6 rounded to float32, in every dtype
        g = grad._data
        # selected (a NaN or infinite gradient outside gives 0, as in PyTorch's kernel)
        out, node = record(xp.where((d > -3) & (d < 3), g * g.dtype.type(xp.float32(1.0) / xp.float32(6.0)),
                                    g.dtype.type(0)), NotImplementedNode, (grad, x))
        if node is not None:
            node.op_name = 'hardsigmoid_backward'
        return out,


def _hardsigmoid(input):
    x = _float(input, 'hardsigmoid_cpu')
    return unary(HardsigmoidBackward0, input, _rounded(xp.clip(x + 3, 0, 6) / 6, input), save='input')


def hardsigmoid(input, inplace=False):
    return _maybe_inplace(_hardsigmoid, input, inplace)


# ---- threshold, shrinks, softsign, tanhshrink ----------------------------------------------

class ThresholdBackward0(Node):
    __slots__ = ('threshold',)

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return ew.masked_grad(grad, ~(x._data <= self.threshold), x, 'ThresholdBackwardBackward0'),


class ThresholdBackward1(ThresholdBackward0):
    """The in-place variant's node."""
    __slots__ = ()


def _threshold(input, threshold, value, node_cls=ThresholdBackward0):
    x = input._data
    result, node = record(xp.where(x <= threshold, x.dtype.type(value), x), node_cls, (input,))  # (NaN stays)
    if node is not None:
        node.threshold = threshold
        node.save(input)
    return result


def threshold(input, threshold, value, inplace=False):
    if inplace:
        return _run_inplace(input, lambda s: _threshold(s, threshold, value, ThresholdBackward1))
    return _threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return globals()['threshold'](input, threshold, value, inplace=True)


class HardshrinkBackward0(Node):
    __slots__ = ('lambd',)
    double_backward_name = 'HardshrinkBackwardBackward0'

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        return ew.masked_grad(grad, ~((d >= -self.lambd) & (d <= self.lambd)), x, self.double_backward_name),


class SoftshrinkBackward0(HardshrinkBackward0):
    __slots__ = ()
    double_backward_name = 'SoftshrinkBackwardBackward0'


def hardshrink(input, lambd=0.5):
    x = _float(input, 'hardshrink_cpu')
    keep = ~((x >= -lambd) & (x <= lambd))  # (NaN stays)
    result, node = record(_rounded(xp.where(keep, x, x.dtype.type(0)), input), HardshrinkBackward0, (input,))
    if node is not None:
        node.lambd = lambd
        node.save(input)
    return result


def softshrink(input, lambd=0.5):
    x = _float(input, 'softshrink_check')
    if lambd < 0:
        dtype = input._data.dtype
        raise RuntimeError(f'lambda must be in range [0, {float(backend.np_finfo(dtype).max):g}] for input dtype '
                           f'{_DTYPE_LABEL[dtype.name]}, but found {lambd:g}')
    # (x * 0 in the middle, as PyTorch's kernel: -0.0 for a negative x, NaN for a NaN)
    data = xp.where(x > lambd, x - x.dtype.type(lambd), xp.where(x < -lambd, x + x.dtype.type(lambd), x * 0))
    result, node = record(data.astype(input._data.dtype, copy=False), SoftshrinkBackward0, (input,))
    if node is not None:
        node.lambd = lambd
        node.save(input)
    return result


def softsign(input):
    """x / (1 + |x|), recorded as its parts (as PyTorch: DivBackward0)."""
    return input / (ew.abs(input) + 1)


def tanhshrink(input):
    """x - tanh(x), recorded as its parts (as PyTorch: SubBackward0)."""
    return input - ew.tanh(input)


def softmax(input, dim, dtype=None):
    """``torch.softmax`` and ``Tensor.softmax``: nn.functional's, with ``dim`` required."""
    from ..nn.functional import softmax as _softmax  # (nn loads on first use)
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    from ..nn.functional import log_softmax as _log_softmax
    return _log_softmax(input, dim, dtype=dtype)


# what nn.functional re-exports from this module
FUNCTIONAL = ['leaky_relu', 'leaky_relu_', 'elu', 'elu_', 'selu', 'selu_', 'celu', 'celu_', 'gelu', 'silu', 'mish',
              'softplus', 'logsigmoid', 'hardtanh', 'hardtanh_', 'relu6', 'hardswish', 'hardsigmoid', 'threshold',
              'threshold_', 'hardshrink', 'softshrink', 'softsign', 'tanhshrink']
# what PyTorch also has as torch.<name>; hardshrink, softmax and log_softmax are also Tensor methods
FUNCTIONS = ['selu', 'selu_', 'celu', 'celu_', 'threshold', 'threshold_', 'hardshrink', 'softmax', 'log_softmax']
NOT_METHODS = ['selu', 'selu_', 'celu', 'celu_', 'threshold', 'threshold_']
