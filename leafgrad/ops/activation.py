"""Activation functions: leaky_relu, elu/selu/celu, gelu, silu, softplus, hardtanh/relu6,
logsigmoid, mish, hardswish, hardsigmoid, threshold, hardshrink/softshrink, softsign,
tanhshrink, and the softmaxes (softmax, log_softmax, softmin).

Each op is declared once (``_op.Op``), its derivative beside its forward. Most are
``torch.nn.functional`` functions only (``public = False``: bound here for ``nn.functional`` to
import, not ``leafgrad.<name>``); selu, celu, threshold, hardshrink, softmax and log_softmax are
also ``torch.<name>``. ``nn.functional``'s softmax and log_softmax take ``dim`` optionally (with
PyTorch's deprecation warning) and a ``_stacklevel``: ``nn_softmax`` and ``nn_log_softmax``
below, which run the declared ops. Derivatives are written with leafgrad ops (reached through
``ops``), so that second derivatives work; where PyTorch's derivative at a kink takes one side,
the masks below use the same strict or non-strict comparison as PyTorch's kernels.
"""
import math
import sys
import warnings

from .. import backend
from .._arg_parser import _is_int, check_dtype, check_number, refuse_arguments
from ..autograd.graph import elementwise_jvp
from ..autograd.grad_mode import no_grad
from ._op import Op, _name_function
from ._util import (SCALAR_NAMES, NotImplementedNode, _zero, in_float32, opmath, ops, record, saved_output,
                    sigmoid_array, state, unary, wrap, wrap_dim, xp)
from ._inplace import inplace as _run_inplace
from ..tensor import Tensor


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


class _Activation(Op):
    """An nn.functional activation: no method, no ``leafgrad.<name>``; its derivative is
    diagonal (forward mode: ``elementwise_jvp``)."""
    __slots__ = ()
    public = method = False
    jvp = elementwise_jvp  # (a diagonal Jacobian)


class _GradientOp(Op):
    """An op's gradient as one recorded op of the incoming gradient and the op's input, as PyTorch
    records the op's backward function when a gradient is made with create_graph
    (GeluBackwardBackward0, EluBackwardBackward0 ...): its value is the op's own ``formula``,
    its derivative by the incoming gradient this same op again (a gradient is linear in the
    incoming one), by the input ``of_input``, PyTorch's double backward. Subclasses give the
    parameters they take from the op's node and its input (``take``) and the names of what they save, the
    incoming gradient and the input."""
    __slots__ = ()

    def apply(self, gg):
        grad, x = self.saved_tensors
        return (gradient_as_one_op(self, gg, x, type(self)) if self.next_functions[0][0] is not None else None,
                self.of_input(gg, grad, x) if self.next_functions[1][0] is not None else None)


def gradient_as_one_op(node, grad, x, cls):
    """``node.formula(grad, x)``, the gradient of node's op given the incoming ``grad``: where a
    graph of it is being made, one op of ``cls`` (PyTorch's node for the op's backward function),
    of ``grad`` and ``x``, which takes node's parameters; otherwise the ops it is composed of run,
    and so they do for bfloat16 (they compute in float32 and round once, as PyTorch's kernel),
    under vmap (they batch) and in a forward-mode level (they carry tangents)."""
    if not state.grad_enabled or grad._data.dtype.kind == 'V' or _composed():
        return in_float32(node.formula, grad, x)
    with no_grad():  # (the value: the composed ops, not recorded)
        value = node.formula(grad, x)
    out, fused = record(value._data, cls, (grad, x))
    if fused is not None:
        fused.take(node, x)
        fused.save(grad, x)
    return out


# ---- leaky_relu ----------------------------------------------------------------------------

def _leaky_relu(input, negative_slope, node_cls):
    if type(negative_slope) is not float:
        check_number('leaky_relu' if node_cls is LeakyRelu else 'leaky_relu_', 'negative_slope', 2, negative_slope)
    x = _float(input, 'leaky_relu_cpu')
    result, node = record(_rounded(xp.where(x > 0, x, x * x.dtype.type(negative_slope)), input), node_cls, (input,))
    if node is not None:
        node.negative_slope = negative_slope
        node.save(saved_output(result) if node_cls is LeakyReluBackward1 else input)
    return result


class LeakyRelu(_Activation):
    """leaky_relu(input, negative_slope=0.01, inplace=False), and leaky_relu_."""
    op, node = 'leaky_relu', 'LeakyReluBackward0'
    saved = ('self', 'negative_slope=negative_slope')
    inplace_function = True
    __slots__ = ('negative_slope',)

    def forward(input, negative_slope=0.01, inplace=False):
        try:
            if inplace:
                return _run_inplace(input, lambda s: _leaky_relu(s, negative_slope, LeakyReluBackward1))
            return _leaky_relu(input, negative_slope, LeakyRelu)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def inplace(input, negative_slope=0.01):
        try:
            return _run_inplace(input, lambda s: _leaky_relu(s, negative_slope, LeakyReluBackward1))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        (x,) = self.saved_tensors
        return self.derivative(grad, x)

    def derivative(self, grad, x):
        slope = xp.where(x._data > 0, 1.0, self.negative_slope)
        return ops.masked_grad(grad, slope, x, 'LeakyReluBackwardBackward0'),


class LeakyReluBackward1(LeakyRelu):
    """The in-place variant's node: as PyTorch's, it saves the result (the input is gone), and
    its derivative reads the result's sign, which is the input's only for a slope >= 0."""
    node = 'LeakyReluBackward1'
    saved = ('result', 'negative_slope=negative_slope')
    __slots__ = ()

    def apply(self, grad):
        (result,) = self.saved_tensors  # (unpacked first: a version error comes before this one)
        if self.negative_slope < 0:
            raise RuntimeError(LEAKY_RELU_INPLACE_NEGATIVE_SLOPE)
        return self.derivative(grad, result)


LEAKY_RELU_INPLACE_NEGATIVE_SLOPE = (
    'In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. This is '
    'caused by calling in-place forward function with a negative slope, please call out-of-place version instead. '
    'File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu backward '
    'calculation with negative slope')


# ---- elu, selu, celu -----------------------------------------------------------------------

def _elu_forward(input, alpha, scale, input_scale, node_cls):
    x = _float(input, 'elu_cpu')
    positive = x > 0
    z = xp.where(positive, x.dtype.type(0), x)  # (where, not minimum: -0.0 stays -0.0, as in PyTorch's kernel)
    if input_scale != 1.0:  # (a factor of 1 changes no bit: the multiplications are skipped)
        z = z * input_scale
    if input_scale < 0:  # (only a negative scale can make exp overflow, z being <= 0)
        with xp.errstate(over='ignore'):
            neg = xp.expm1(z)
    else:
        neg = xp.expm1(z)
    if alpha != 1.0:
        neg = neg * alpha
    data = xp.where(positive, x, neg)
    if scale != 1.0:
        data = data * scale
    data = data.astype(input._data.dtype, copy=False)
    result, node = record(data, node_cls, (input,))
    if node is not None:
        node.alpha, node.scale, node.input_scale = alpha, scale, input_scale
        node.save(saved_output(result) if node_cls.is_result else input)
    return result


def _elu_like(input, inplace, alpha, scale, input_scale, node_cls, inplace_node_cls):
    if type(alpha) is not float:
        check_number(node_cls.op + '_' * bool(inplace), 'alpha', 2, alpha)
    if inplace:
        return _run_inplace(input, lambda s: _elu_forward(s, alpha, scale, input_scale, inplace_node_cls))
    return _elu_forward(input, alpha, scale, input_scale, node_cls)


class Elu(_Activation):
    """elu(input, alpha=1.0, inplace=False), and elu_: scale * (x if x > 0 else alpha *
    (exp(x * input_scale) - 1)), the node of selu too."""
    op, node = 'elu', 'EluBackward0'
    saved = ('self', 'alpha=alpha', 'scale=scale', 'input_scale=input_scale')
    inplace_function = True
    is_result = False  # the in-place variants' nodes save the result (EluBackward1)
    __slots__ = ('alpha', 'scale', 'input_scale')

    def forward(input, alpha=1.0, inplace=False):
        try:
            return _elu_like(input, inplace, alpha, 1, 1, Elu, EluBackward1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def inplace(input, alpha=1.0):
        try:
            return _elu_like(input, True, alpha, 1, 1, Elu, EluBackward1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return gradient_as_one_op(self, grad, *self.saved_tensors, EluBackwardBackward0),

    def formula(self, grad, x):
        # selected, as PyTorch's kernel (x <= 0 ? negative side : positive side): a NaN or an
        # infinity takes the positive side's slope, never exp(inf) * 0
        input_scale = self.backward_input_scale()
        neg = grad * (ops.exp(x * input_scale) * (self.alpha * input_scale * self.scale))
        return ops.where(wrap(x._data <= 0), neg, grad * self.scale)

    def backward_input_scale(self):
        return self.input_scale


class EluBackward1(Elu):
    """The in-place variants' node: as PyTorch's, it saves the result (the input is gone) and
    differentiates from it, input_scale * (result + alpha * scale) where the result is <= 0,
    which holds only for alpha >= 0 (PyTorch's error otherwise, at backward)."""
    node = 'EluBackward1'
    saved = ('result', 'alpha=alpha', 'scale=scale', 'input_scale=input_scale')
    is_result = True
    __slots__ = ()

    def formula(self, grad, result):
        if self.alpha < 0:
            raise RuntimeError('In-place elu backward calculation is triggered with a negative slope which is not '
                               'supported. This is caused by calling in-place forward function with a negative '
                               'slope, please call out-of-place version instead.')
        # (alpha * scale in the computing dtype, as PyTorch's kernel multiplies them: float32 of float32 input)
        kind = result._data.dtype.type
        shifted = result + float(kind(self.alpha) * kind(self.scale))
        input_scale = self.backward_input_scale()
        neg = (grad * input_scale if input_scale != 1 else grad) * shifted
        return ops.where(wrap(result._data <= 0), neg, grad * self.scale)


class EluBackwardBackward0(_GradientOp):
    """elu's gradient as one op (PyTorch's elu_backward, recorded under create_graph), selu's and
    celu's too, of the input or (after an in-place variant) of the result."""
    node = 'EluBackwardBackward0'
    saved = ('grad_output', 'self_or_result', 'alpha=alpha', 'scale=scale', 'input_scale=input_scale',
             'is_result=is_result')
    __slots__ = ('alpha', 'scale', 'input_scale', 'is_result')

    def take(self, node, x):
        self.alpha, self.scale = node.alpha, node.scale
        # (celu's: 1 / alpha rounded to float, which PyTorch's derivative is given)
        self.input_scale = node.backward_input_scale()
        self.is_result = node.is_result

    def backward_input_scale(self):
        return self.input_scale

    def formula(self, grad, x):
        return (EluBackward1.formula if self.is_result else Elu.formula)(self, grad, x)

    def of_input(self, gg, grad, x):  # PyTorch's elu_double_backward: the negative side's slope
        negative = _mask(x._data < 0, gg)
        scaled = gg * grad * self.input_scale
        if self.is_result:
            return scaled * negative
        return gradient_as_one_op(self, scaled, x, EluBackwardBackward0) * negative


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class Selu(_Activation):
    """selu(input, inplace=False), and selu_: elu with PyTorch's fixed alpha and scale (its nodes)."""
    op = 'selu'
    public = inplace_function = True
    __slots__ = ()

    def forward(input, inplace=False):
        try:
            return _elu_like(input, inplace, _SELU_ALPHA, _SELU_SCALE, 1, Elu, EluBackward1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def inplace(input):
        try:
            return _elu_like(input, True, _SELU_ALPHA, _SELU_SCALE, 1, Elu, EluBackward1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _celu(input, alpha, inplace):
    if type(alpha) is not float:
        check_number('celu_' if inplace else 'celu', 'alpha', 2, alpha)
    if alpha == 0:
        raise RuntimeError('ZeroDivisionError: alpha cannot be 0 for CELU')
    return _elu_like(input, inplace, alpha, 1, 1.0 / alpha, Celu, CeluBackward1)


class Celu(Elu):
    """celu(input, alpha=1.0, inplace=False), and celu_: elu with input_scale 1 / alpha."""
    op, node = 'celu', 'CeluBackward0'
    saved = ('self', 'alpha=alpha')
    public = inplace_function = True
    __slots__ = ()

    def backward_input_scale(self):
        # PyTorch's derivative divides by alpha rounded to float (1.0 / alpha.toFloat()), its
        # forward by alpha itself: a float64 gradient's last bits follow that rounding
        return 1.0 / float(xp.float32(self.alpha))

    def forward(input, alpha=1.0, inplace=False):
        try:
            return _celu(input, alpha, inplace)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def inplace(input, alpha=1.0):
        try:
            return _celu(input, alpha, True)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class CeluBackward1(EluBackward1):
    """celu_'s node: EluBackward1's, named apart (PyTorch saves only alpha beside the result)."""
    node = 'CeluBackward1'
    saved = ('result', 'alpha=alpha')
    __slots__ = ()
    backward_input_scale = Celu.backward_input_scale


# ---- gelu ----------------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _avx512():
    global _AVX512
    if _AVX512 is None:
        from ..backends.cpu import get_cpu_capability  # (on first use: not loaded by `import leafgrad`)
        _AVX512 = get_cpu_capability() == 'AVX512'
    return _AVX512


_AVX512 = None


class Gelu(_Activation):
    """gelu(input, approximate='none')."""
    op, node = 'gelu', 'GeluBackward0'
    saved = ('self', 'approximate=approximate')
    __slots__ = ('approximate',)

    def forward(input, approximate='none'):
        try:
            if approximate not in ('none', 'tanh'):
                raise RuntimeError(f'approximate argument must be either none or tanh.')
            x = _float(input, 'GeluKernelImpl')
            if approximate == 'tanh':
                inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
                data = x * 0.5 * (1 + xp.tanh(inner))
            else:
                data = x * 0.5 * (1 + ops.erf(wrap(x * x.dtype.type(_INV_SQRT_2)))._data)
                raw = input._data
                if (raw.dtype == xp.float32 or raw.dtype.kind == 'V') and raw.size > 1 and raw.flags.c_contiguous \
                        and _avx512():
                    # PyTorch's AVX512 float32/bfloat16 kernel (a contiguous tensor of more than one
                    # element) gives NaN at +inf; its AVX2 kernel and its scalar path, as float64's and
                    # float16's, inf
                    at_inf = x == xp.inf
                    if at_inf.any():
                        data = xp.where(at_inf, x.dtype.type('nan'), data)
            result, node = record(data.astype(input._data.dtype, copy=False), Gelu, (input,))
            if node is not None:
                node.approximate = approximate
                node.save(input)
            return result
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return gradient_as_one_op(self, grad, *self.saved_tensors, GeluBackwardBackward0),

    def formula(self, grad, x):
        if self.approximate == 'tanh':
            inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
            t = ops.tanh(inner)
            d_inner = (x * x * (3 * 0.044715) + 1) * _SQRT_2_OVER_PI
            return grad * ((t + 1) * 0.5 + x * 0.5 * (-t * t + 1) * d_inner)
        cdf = (ops.erf(x * _INV_SQRT_2) + 1) * 0.5
        pdf = ops.exp(x * x * -0.5) * _INV_SQRT_2PI
        return grad * (cdf + x * pdf)


class GeluBackwardBackward0(_GradientOp):
    """gelu's gradient as one op (PyTorch's gelu_backward, recorded under create_graph)."""
    node = 'GeluBackwardBackward0'
    saved = ('grad_output', 'self', 'approximate=approximate')
    __slots__ = ('approximate',)
    formula = Gelu.formula

    def take(self, node, x):
        self.approximate = node.approximate

    def of_input(self, gg, grad, x):  # PyTorch's gelu_double_backward, in its order
        if self.approximate == 'tanh':
            inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
            t = ops.tanh(inner)
            sech = 1 / ops.cosh(inner)
            f = x * 0.5
            g = 1 - t * t
            h = (x * x * (3 * 0.044715) + 1) * _SQRT_2_OVER_PI
            f_prime_gh = g * 0.5 * h
            g_prime_fh = f * h * (sech * 2 * (-sech * t) * h)
            h_prime_fg = f * g * (x * (6 * 0.044715) * _SQRT_2_OVER_PI)
            return gg * grad * (f_prime_gh * 2 + g_prime_fh + h_prime_fg)
        square = x * x
        pdf = ops.exp(square * -0.5) * _INV_SQRT_2PI
        return gg * grad * (pdf * 2 - square * pdf)


# ---- silu, mish ----------------------------------------------------------------------------

def _maybe_inplace(fn, input, inplace):
    if inplace:
        return _run_inplace(input, fn)
    return fn(input)


def _silu(input):
    x = _float(input, 'silu_cpu')
    return unary(Silu, input, _rounded(x * sigmoid_array(x), input), save='input')


class Silu(_Activation):
    """silu(input, inplace=False): x * sigmoid(x)."""
    op, node = 'silu', 'SiluBackward0'
    saved = ('self',)
    __slots__ = ()

    def forward(input, inplace=False):
        try:
            return _maybe_inplace(_silu, input, inplace)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    @staticmethod
    def formula(grad, x):
        s = ops.sigmoid(x)
        return grad * (s * (x * (1 - s) + 1))


def _softplus_array(x):
    # log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|)
    return xp.maximum(x, _zero(x)) + xp.log1p(xp.exp(-xp.abs(x)))


def _mish(input):
    x = _float(input, 'mish_cpu')
    return unary(Mish, input, _rounded(x * xp.tanh(_softplus_array(x)), input), save='input')


class Mish(_Activation):
    """mish(input, inplace=False): x * tanh(softplus(x))."""
    op, node = 'mish', 'MishBackward0'
    saved = ('self',)
    __slots__ = ()

    def forward(input, inplace=False):
        try:
            return _maybe_inplace(_mish, input, inplace)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return in_float32(self.formula, grad, *self.saved_tensors),

    @staticmethod
    def formula(grad, x):
        t = ops.tanh(softplus(x))
        return grad * (t + x * ops.sigmoid(x) * (-t * t + 1))


# ---- softplus, logsigmoid ------------------------------------------------------------------

class Softplus(_Activation):
    """softplus(input, beta=1.0, threshold=20.0): log(1 + exp(beta x)) / beta, x itself where
    beta x > threshold."""
    op, node = 'softplus', 'SoftplusBackward0'
    saved = ('self', 'beta=beta', 'threshold=threshold')
    __slots__ = ('beta', 'threshold')

    def forward(input, beta=1, threshold=20):  # (PyTorch's defaults: ints, as its node shows them)
        try:
            if type(beta) is not float or type(threshold) is not float:
                check_number('softplus', 'beta', 2, beta)
                check_number('softplus', 'threshold', 3, threshold)
            x = _float(input, 'softplus_cpu')
            if beta == 1:  # (the default: x * 1 and y / 1 give x and y bit for bit, two NumPy calls spared)
                bx, soft = x, _softplus_array(x)
            else:
                bx = x * x.dtype.type(beta)
                soft = _softplus_array(bx) / x.dtype.type(beta)
            data = xp.where(bx > threshold, x, soft).astype(input._data.dtype, copy=False)
            result, node = record(data, Softplus, (input,))
            if node is not None:
                node.beta, node.threshold = beta, threshold
                node.save(input)
            return result
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return gradient_as_one_op(self, grad, *self.saved_tensors, SoftplusBackwardBackward0),

    def formula(self, grad, x):
        linear = _mask(x._data * self.beta > self.threshold, x)
        return grad * (linear + (1 - linear) * ops.sigmoid(x * self.beta))


class SoftplusBackwardBackward0(_GradientOp):
    """softplus's gradient as one op (PyTorch's softplus_backward, recorded under create_graph)."""
    node = 'SoftplusBackwardBackward0'
    saved = ('grad_output', 'self', 'beta=beta', 'threshold=threshold')
    __slots__ = ('beta', 'threshold')
    formula = Softplus.formula

    def take(self, node, x):
        self.beta, self.threshold = node.beta, node.threshold

    def of_input(self, gg, grad, x):  # PyTorch's softplus_double_backward (its C++ product by a number)
        z = x * self.beta
        return ops.mul_by_number(ops.sigmoid_backward(gg * grad, ops.sigmoid(z)) * _mask(z._data < self.threshold, gg),
                                 self.beta)


class LogSigmoid(_Activation):
    """logsigmoid(input): log(sigmoid(x)), computed without overflow."""
    op, node = 'logsigmoid', 'LogSigmoidBackward0'
    saved = ('self', 'buffer=saved_buffer')
    __slots__ = ()
    # (log_sigmoid_forward's second output, which PyTorch's CPU kernel fills with exp(-|x|))
    saved_buffer = property(lambda self: wrap(xp.exp(-xp.abs(self.saved_tensors[0]._data))))

    def forward(input):
        try:
            x = _float(input, 'log_sigmoid_cpu')
            # (contiguous whatever the input's layout, as PyTorch's log_sigmoid_forward writes it)
            value = _rounded(xp.minimum(x, _zero(x)) - xp.log1p(xp.exp(-xp.abs(x))), input)
            return unary(LogSigmoid, input, value if value.flags.c_contiguous else value.copy(), save='input')
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments('log_sigmoid')
            raise

    def apply(self, grad):
        return gradient_as_one_op(self, grad, *self.saved_tensors, LogSigmoidBackwardBackward0),

    @staticmethod
    def formula(grad, x):
        return grad * ops.sigmoid(-x)  # d/dx log(sigmoid(x)) = 1 - sigmoid(x)


class LogSigmoidBackwardBackward0(_GradientOp):
    """logsigmoid's gradient as one op (PyTorch's log_sigmoid_backward, recorded under
    create_graph)."""
    node = 'LogSigmoidBackwardBackward0'
    saved = ('grad_output', 'self', 'buffer=buffer')
    __slots__ = ('buffer',)
    formula = staticmethod(LogSigmoid.formula)

    def take(self, node, x):
        self.buffer = LogSigmoid.saved_buffer.fget(node) if type(node) is LogSigmoid else node.buffer

    @staticmethod
    def of_input(gg, grad, x):  # PyTorch's log_sigmoid_double_backward
        z = ops.sigmoid(x)
        return gg * grad * (z - 1) * z


# ---- hardtanh, relu6, hardswish, hardsigmoid -----------------------------------------------

def _hardtanh(input, min_val=-1.0, max_val=1.0, name='hardtanh'):
    if min_val > max_val:  # (first, as in PyTorch's nn.functional: a string fails Python's comparison)
        raise ValueError('min_val cannot be greater than max_val')
    if type(min_val) is not float or type(max_val) is not float:
        check_number(name, 'min_val', 2, min_val)
        check_number(name, 'max_val', 3, max_val)
    x = input._data
    if x.dtype.kind == 'b':
        raise RuntimeError('Bool inputs not supported for hardtanh')
    data = xp.where(x < min_val, x.dtype.type(min_val), xp.where(x > max_val, x.dtype.type(max_val), x))
    result, node = record(data, Hardtanh, (input,))
    if node is not None:
        node.min_val, node.max_val = min_val, max_val
        node.save(input)
    return result


class Hardtanh(_Activation):
    """hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False), and hardtanh_. The gradient
    passes strictly inside (min_val, max_val), as PyTorch's kernel."""
    op, node = 'hardtanh', 'HardtanhBackward0'
    saved = ('self', 'max_val=max_val', 'min_val=min_val')
    inplace_function = True
    __slots__ = ('min_val', 'max_val')

    def forward(input, min_val=-1.0, max_val=1.0, inplace=False):
        try:
            if inplace:
                return _run_inplace(input, lambda s: _hardtanh(s, min_val, max_val, 'hardtanh_'))
            return _hardtanh(input, min_val, max_val)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def inplace(input, min_val=-1.0, max_val=1.0):
        try:
            return _run_inplace(input, lambda s: _hardtanh(s, min_val, max_val, 'hardtanh_'))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        # (PyTorch's test: zero where x <= min_val or x >= max_val; at a NaN the gradient passes)
        return ops.masked_grad(grad, ~((d <= self.min_val) | (d >= self.max_val)), x, 'HardtanhBackwardBackward0'),


class Relu6(_Activation):
    """relu6(input, inplace=False): hardtanh(input, 0, 6) (its node, as PyTorch)."""
    op = 'relu6'
    __slots__ = ()

    def forward(input, inplace=False):
        try:
            return hardtanh(input, 0.0, 6.0, inplace)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _hardswish(input):
    x = _float(input, 'hardswish_cpu')
    return unary(Hardswish, input, _rounded(x * xp.clip(x + 3, 0, 6) / 6, input), save='input')


class Hardswish(_Activation):
    """hardswish(input, inplace=False): x * relu6(x + 3) / 6."""
    op, node = 'hardswish', 'HardswishBackward0'
    saved = ('self',)
    __slots__ = ()

    def forward(input, inplace=False):
        try:
            return _maybe_inplace(_hardswish, input, inplace)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return gradient_as_one_op(self, grad, *self.saved_tensors, HardswishBackwardBackward0),

    @staticmethod
    def formula(grad, x):
        # selected, as PyTorch's kernel: 0 where x <= -3, the slope inside, grad elsewhere (NaN too)
        d = x._data
        inside = ops.where(wrap(d < 3), grad * (x / 3 + 0.5), grad)
        return ops.where(wrap(d <= -3), wrap(xp.zeros_like(grad._data)), inside)


class HardswishBackwardBackward0(_GradientOp):
    """hardswish's gradient as one op (PyTorch's hardswish_backward, recorded under create_graph)."""
    node = 'HardswishBackwardBackward0'
    saved = ('grad_output', 'self')
    __slots__ = ()
    formula = staticmethod(Hardswish.formula)

    def take(self, node, x):
        pass

    @staticmethod
    def of_input(gg, grad, x):  # PyTorch's: gg * grad / 3 strictly inside (-3, 3), 0 elsewhere
        d = x._data
        return ops.where(wrap((-3.0 < d) & (d < 3.0)), gg * grad / 3.0, wrap(xp.zeros((), gg._data.dtype)))


def _hardsigmoid(input):
    x = _float(input, 'hardsigmoid_cpu')
    return unary(Hardsigmoid, input, _rounded(xp.clip(x + 3, 0, 6) / 6, input), save='input')


class Hardsigmoid(_Activation):
    """hardsigmoid(input, inplace=False): relu6(x + 3) / 6."""
    op, node = 'hardsigmoid', 'HardsigmoidBackward0'
    saved = ('self',)
    __slots__ = ()

    def forward(input, inplace=False):
        try:
            return _maybe_inplace(_hardsigmoid, input, inplace)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        # PyTorch has no second derivative here: differentiating this gradient raises
        # PyTorch's kernel multiplies by 1/6 rounded to float32, in every dtype
        g = grad._data
        # selected (a NaN or infinite gradient outside gives 0, as in PyTorch's kernel)
        out, node = record(xp.where((d > -3) & (d < 3), g * g.dtype.type(xp.float32(1.0) / xp.float32(6.0)),
                                    g.dtype.type(0)), NotImplementedNode, (grad, x))
        if node is not None:
            node.op_name = 'hardsigmoid_backward'
        return out,


# ---- threshold, shrinks, softsign, tanhshrink ----------------------------------------------

def _threshold(input, threshold, value, node_cls):
    if type(threshold) is not float or type(value) is not float:
        name = 'threshold' if node_cls is Threshold else 'threshold_'
        check_number(name, 'threshold', 2, threshold)
        check_number(name, 'value', 3, value)
    x = input._data
    result, node = record(xp.where(x <= threshold, x.dtype.type(value), x), node_cls, (input,))  # (NaN stays)
    if node is not None:
        node.threshold = threshold
        node.save(input)
    return result


class Threshold(_Activation):
    """threshold(input, threshold, value, inplace=False), and threshold_: value where
    input <= threshold."""
    op, node = 'threshold', 'ThresholdBackward0'
    saved = ('self', 'threshold=threshold')
    public = inplace_function = True
    __slots__ = ('threshold',)

    def forward(input, threshold, value, inplace=False):
        try:
            if inplace:
                return _run_inplace(input, lambda s: _threshold(s, threshold, value, ThresholdBackward1))
            return _threshold(input, threshold, value, Threshold)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def inplace(input, threshold, value):
        try:
            return _run_inplace(input, lambda s: _threshold(s, threshold, value, ThresholdBackward1))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        (x,) = self.saved_tensors
        return ops.masked_grad(grad, ~(x._data <= self.threshold), x, 'ThresholdBackwardBackward0'),


class ThresholdBackward1(Threshold):
    """The in-place variant's node."""
    node = 'ThresholdBackward1'
    __slots__ = ()


class Hardshrink(_Activation):
    """hardshrink(input, lambd=0.5): 0 inside [-lambd, lambd] (also Tensor.hardshrink)."""
    op, node = 'hardshrink', 'HardshrinkBackward0'
    public = method = True
    saved = ('self', 'lambd=lambd')
    __slots__ = ('lambd',)
    double_backward_name = 'HardshrinkBackwardBackward0'

    def forward(input, lambd=0.5):
        try:
            if type(lambd) is not float:
                check_number('hardshrink', 'lambd', 2, lambd)
            x = _float(input, 'hardshrink_cpu')
            keep = ~((x >= -lambd) & (x <= lambd))  # (NaN stays)
            result, node = record(_rounded(xp.where(keep, x, x.dtype.type(0)), input), Hardshrink, (input,))
            if node is not None:
                node.lambd = lambd
                node.save(input)
            return result
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        return ops.masked_grad(grad, ~((d >= -self.lambd) & (d <= self.lambd)), x, self.double_backward_name),


class Softshrink(_Activation):
    """softshrink(input, lambd=0.5): x moved towards 0 by lambd, 0 inside [-lambd, lambd]."""
    op, node = 'softshrink', 'SoftshrinkBackward0'
    saved = ('self', 'lambd=lambd')
    __slots__ = ('lambd',)
    double_backward_name = 'SoftshrinkBackwardBackward0'
    apply = Hardshrink.apply

    def forward(input, lambd=0.5):
        try:
            if type(lambd) is not float:
                check_number('softshrink', 'lambd', 2, lambd)
            x = _float(input, 'softshrink_check')
            if lambd < 0:
                dtype = input._data.dtype
                raise RuntimeError(f'lambda must be in range [0, {float(backend.np_finfo(dtype).max):g}] for input '
                                   f'dtype {_DTYPE_LABEL[dtype.name]}, but found {lambd:g}')
            # (x * 0 in the middle, as PyTorch's kernel: -0.0 for a negative x, NaN for a NaN)
            data = xp.where(x > lambd, x - x.dtype.type(lambd), xp.where(x < -lambd, x + x.dtype.type(lambd), x * 0))
            result, node = record(data.astype(input._data.dtype, copy=False), Softshrink, (input,))
            if node is not None:
                node.lambd = lambd
                node.save(input)
            return result
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Softsign(_Activation):
    """softsign(input): x / (1 + |x|), recorded as its parts (as PyTorch: DivBackward0)."""
    op = 'softsign'
    __slots__ = ()

    def forward(input):
        return input / (input.abs() + 1)  # (PyTorch's Python, whose error for a non-tensor is input.abs's)


class Tanhshrink(_Activation):
    """tanhshrink(input): x - tanh(x), recorded as its parts (as PyTorch: SubBackward0)."""
    op = 'tanhshrink'
    __slots__ = ()

    def forward(input):
        try:
            return input - ops.tanh(input)
        except (AttributeError, TypeError):  # (PyTorch's is Python, input - input.tanh(): the argument's own error)
            if not isinstance(input, Tensor):
                input.tanh
            raise


# ---- softmax, log_softmax, softmin ---------------------------------------------------------
# Single nodes computed stably (the row's maximum subtracted first); their derivatives use only
# the saved output, written with leafgrad ops so that they differentiate again.

def _softmax_dim(name, ndim, stacklevel=3):
    warnings.warn(f'Implicit dimension choice for {name} has been deprecated. Change the call to include '
                  'dim=X as an argument.', UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(input, dim, dtype, name):
    if dim is not None and not isinstance(dim, int):
        if not _is_int(dim):  # (a 0-dim integer tensor is one)
            raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
        dim = int(dim)
    if dtype is not None:
        check_dtype(name, dtype)
        input = input.to(backend.to_dtype(dtype))
    data = input._data
    if dim is None:
        dim = _softmax_dim(name, data.ndim, 4)
    d = wrap_dim(dim, max(data.ndim, 1))
    if data.dtype.kind not in 'fV' and data.size:  # (PyTorch's kernel for the last dim has its own name)
        kernel = f'{name}_lastdim_kernel_impl' if d == max(data.ndim, 1) - 1 else f'{name}_kernel_impl'
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_DTYPE_LABEL[data.dtype.name]}\'')
    # (laid out contiguously, as PyTorch's kernels read their input: the result is contiguous
    # whatever the input's strides, seed 5034921)
    return input, data.reshape(1) if data.ndim == 0 else xp.ascontiguousarray(data), d


def _reduced(dtype):
    """float16 or bfloat16: PyTorch's softmax kernels compute them in float32."""
    return dtype.itemsize == 2 and dtype.kind in 'fV'


def _softmax_in_float32(formula, grad, y):
    """``formula(grad, y)`` for float16/bfloat16 as PyTorch's backward kernels compute it: in float32,
    rounded once (the casts are recorded under create_graph)."""
    dtype = grad.dtype
    return formula(grad.float(), y.float()).to(dtype)


class Softmax(Op):
    """softmax(input, dim, dtype=None): exp(x) / sum(exp(x)) along dim (torch.softmax and
    Tensor.softmax; ``nn_softmax`` is nn.functional's)."""
    op, node = 'softmax', 'SoftmaxBackward0'
    parameter_types = {'dim': 'int'}
    saved = ('result', 'dim=given_dim:int64')
    __slots__ = ('dim', 'given_dim')

    def forward(input, dim, dtype=None):
        input, data, d = _softmax_input(input, dim, dtype, 'softmax')
        work = data.astype(xp.float32) if _reduced(data.dtype) else data  # half computes in float, as PyTorch
        shifted = work - work.max(axis=d, keepdims=True) if work.size else work
        e = xp.exp(shifted)
        out = (e / e.sum(axis=d, keepdims=True)).astype(data.dtype, copy=False)
        result, node = record(out.reshape(input._data.shape), Softmax, (input,))
        if node is not None:
            node.dim, node.given_dim = (d if input._data.ndim else ()), dim
            node.save(saved_output(result))
        return result

    def jvp(self, tangents):
        (y,) = self.saved_tensors
        t = tangents[0]
        return y * (t - ops.sum(t * y, self.dim, keepdim=True))

    def apply(self, grad):
        (y,) = self.saved_tensors
        grad = grad.contiguous()  # (the gradient is contiguous, as PyTorch's backward kernel makes it)
        if _reduced(grad._data.dtype):
            return _softmax_in_float32(self.formula, grad, y),
        return softmax_backward_data(grad, y, self.dim),

    def formula(self, grad, y):
        return y * (grad - ops.sum(grad * y, self.dim, keepdim=True))


class SoftmaxBackwardDataBackward0(Op):
    """softmax's gradient as one op, PyTorch's _softmax_backward_data (recorded under
    create_graph as PyTorch's one node): of the incoming gradient and of softmax's output."""
    node = 'SoftmaxBackwardDataBackward0'
    saved = ('grad_output', 'output')
    __slots__ = ('dim',)

    def apply(self, gg):
        grad, y = self.saved_tensors
        g_grad = softmax_backward_data(gg, y, self.dim) if self.next_functions[0][0] is not None else None
        g_y = self._of_output(gg, grad, y) if self.next_functions[1][0] is not None else None
        return g_grad, g_y

    def _of_output(self, g, grad, y):  # PyTorch's softmax_double_backward, in its order
        d = self.dim
        return grad * g - ops.sum(y * grad, d, keepdim=True) * g - grad * ops.sum(y * g, d, keepdim=True)


def _composed():
    """Whether the gradients below must be computed by the ops they are composed of: under vmap
    (arrays carry its batch dims in front: a reduction along a dim is an op's to batch) and in a
    forward-mode level (the ops carry the tangents)."""
    vmap = sys.modules.get('leafgrad._vmap')  # (each active only once loaded)
    forward_ad = sys.modules.get('leafgrad.autograd.forward_ad')
    return vmap is not None and vmap.active() or forward_ad is not None and forward_ad._state.level is not None


def softmax_backward_data(grad, y, dim):
    """``y * (grad - sum(grad * y))`` along ``dim`` (y: softmax's output) as one recorded op."""
    if _composed():
        return y * (grad - ops.sum(grad * y, dim, keepdim=True))
    g, r = grad._data, y._data
    out, node = record(r * (g - xp.sum(g * r, axis=dim, keepdims=True)), SoftmaxBackwardDataBackward0, (grad, y))
    if node is not None:
        node.dim = dim
        node.save(grad, y)
    return out


class SafeSoftmax(Softmax):
    """_safe_softmax(input, dim, dtype=None): softmax, with 0 along a slice whose entries are all
    -inf (where softmax gives NaN): scaled_dot_product_attention's math path normalises with it,
    so that a query that its mask hides from every key attends to nothing."""
    op, node = '_safe_softmax', 'SafeSoftmaxBackward0'
    method = False
    __slots__ = ()

    def forward(input, dim, dtype=None):
        input, data, d = _softmax_input(input, dim, dtype, '_safe_softmax')
        work = data.astype(xp.float32) if _reduced(data.dtype) else data
        if work.size:
            top = work.max(axis=d, keepdims=True)
            hidden = top == -xp.inf  # (every entry -inf: the max is too)
            e = xp.exp(work - xp.where(hidden, 0, top))
            out = e / xp.where(hidden, 1, e.sum(axis=d, keepdims=True))  # (0 / 1 where hidden)
        else:
            out = work.copy()
        out = out.astype(data.dtype, copy=False)
        result, node = record(out.reshape(input._data.shape), SafeSoftmax, (input,))
        if node is not None:
            node.dim, node.given_dim = (d if input._data.ndim else ()), dim
            node.save(saved_output(result))
        return result


def _gpu_log_softmax(dtype):
    """CuPy's kernels of log_softmax for float32/float64: the sum of exp(x - max) in one
    reduction, then x - max - log(sum) in one elementwise kernel. None: no such kernels (not a
    GPU's CuPy, or another dtype)."""
    if dtype.kind != 'f' or dtype.itemsize < 4:
        return None
    sums = backend.fused_kernel('sum_exp_shifted', 'T x, T top', 'T sums', 'exp(x - top)', 'a + b', 'sums = a',
                                '0', kind='ReductionKernel')
    tail = backend.fused_kernel('log_softmax_tail', 'T x, T top, T sums', 'T out', 'out = x - top - log(sums)')
    return None if sums is None or tail is None else (sums, tail)


def _log_softmax_array(data, d, round_to=None):
    """log_softmax along ``d``. ``round_to`` (float16/bfloat16 along the last dim): PyTorch's
    last-dim kernel keeps the sum and its log in that dtype, rounding each once."""
    if not data.size:
        return data.copy()
    if round_to is None and type(data) is not xp.ndarray and (fused := _gpu_log_softmax(data.dtype)) is not None:
        top = data.max(d, keepdims=True)  # (on a GPU: three kernels, where the lines below run six)
        sums = fused[0](data, top, axis=d, keepdims=True)
        return fused[1](data, top, sums)
    # (the ufuncs' own reductions: the ndarray methods wrap them in Python)
    # (on a GPU the method: CuPy has no maximum.reduce)
    top = xp.maximum.reduce(data, axis=d, keepdims=True) if type(data) is xp.ndarray else data.max(d, keepdims=True)
    shifted = data - top
    sums = xp.add.reduce(xp.exp(shifted), axis=d, keepdims=True)
    if round_to is not None:
        sums = xp.log(sums.astype(round_to).astype(data.dtype)).astype(round_to).astype(data.dtype)
        shifted -= sums
        return shifted
    shifted -= xp.log(sums, out=sums)
    return shifted


class LogSoftmax(Op):
    """log_softmax(input, dim, dtype=None): x - log(sum(exp(x))) along dim (torch.log_softmax
    and Tensor.log_softmax; ``nn_log_softmax`` is nn.functional's)."""
    op, node = 'log_softmax', 'LogSoftmaxBackward0'
    parameter_types = {'dim': 'int'}
    saved = ('result', 'dim=given_dim:int64')
    __slots__ = ('dim', 'dtype', 'given_dim')

    def forward(input, dim, dtype=None):
        input, data, d = _softmax_input(input, dim, dtype, 'log_softmax')
        reduced = _reduced(data.dtype)
        work = data.astype(xp.float32) if reduced else data
        out = _log_softmax_array(work, d, data.dtype if reduced and d == data.ndim - 1 else None)
        out = out.astype(data.dtype, copy=False)
        result, node = record(out.reshape(input._data.shape) if input._data.ndim == 0 else out, LogSoftmax,
                              (input,))
        if node is not None:
            node.dim, node.dtype, node.given_dim = (d if input._data.ndim else ()), out.dtype, dim
            node.save(saved_output(result))
        return result

    def jvp(self, tangents):
        (y,) = self.saved_tensors
        t = tangents[0]
        return t - ops.sum(ops.exp(y) * t, self.dim, keepdim=True)

    def apply(self, grad):
        grad = grad.contiguous()  # (the gradient is contiguous, as PyTorch's backward kernel makes it)
        if not state.grad_enabled and grad._data.dtype == self.dtype:
            # a plain backward records nothing: the same formula on the arrays
            (y,) = self.saved_arrays()
            g = grad._data
            if _reduced(g.dtype):  # in float32, rounded once, as PyTorch's kernel
                return wrap(self.on_arrays(g.astype(xp.float32), y.astype(xp.float32)).astype(g.dtype)),
            return wrap(self.on_arrays(g, y)),
        (y,) = self.saved_tensors
        if _reduced(grad._data.dtype):
            return _softmax_in_float32(self.formula, grad, y),
        return log_softmax_backward_data(grad, y, self.dim),

    def on_arrays(self, g, y):
        sums = xp.add.reduce(g, axis=self.dim, keepdims=True)
        if type(g) is not xp.ndarray and (kernel := backend.fused_kernel(
                'log_softmax_backward', 'T g, T y, T sums', 'T out', 'out = g - exp(y) * sums')) is not None:
            return kernel(g, y, sums)  # (on a GPU: one kernel for the three of the line below)
        return g - xp.exp(y) * sums

    def formula(self, grad, y):
        return grad - ops.exp(y) * ops.sum(grad, self.dim, keepdim=True)


class LogSoftmaxBackwardDataBackward0(Op):
    """log_softmax's gradient as one op, PyTorch's _log_softmax_backward_data (recorded under
    create_graph as PyTorch's one node): of the incoming gradient and of log_softmax's output."""
    node = 'LogSoftmaxBackwardDataBackward0'
    saved = ('grad_output', 'output')
    __slots__ = ('dim',)

    def apply(self, gg):
        grad, y = self.saved_tensors
        # (the derivative by the incoming gradient is the transpose of log_softmax_backward_data's
        # map, which is not symmetric: PyTorch's grad - (grad * output.exp()).sum(dim, true))
        g_grad = gg - ops.sum(gg * ops.exp(y), self.dim, keepdim=True) if self.next_functions[0][0] is not None \
            else None
        g_y = self._of_output(gg, grad, y) if self.next_functions[1][0] is not None else None
        return g_grad, g_y

    def _of_output(self, g, grad, y):  # PyTorch's -grad_output.sum(dim, true) * output.exp() * grad
        return -ops.sum(grad, self.dim, keepdim=True) * ops.exp(y) * g


def log_softmax_backward_data(grad, y, dim):
    """``grad - exp(y) * sum(grad)`` along ``dim`` (y: log_softmax's output) as one recorded op."""
    if _composed():
        return grad - ops.exp(y) * ops.sum(grad, dim, keepdim=True)
    g, r = grad._data, y._data
    out, node = record(g - xp.exp(r) * xp.add.reduce(g, axis=dim, keepdims=True), LogSoftmaxBackwardDataBackward0,
                       (grad, y))
    if node is not None:
        node.dim = dim
        node.save(grad, y)
    return out


class Softmin(_Activation):
    """softmin(input, dim=None, _stacklevel=3, dtype=None): softmax(-input, dim)."""
    op = 'softmin'
    parsed = False  # (Python in PyTorch: no NumPy names)
    __slots__ = ()

    def forward(input, dim=None, _stacklevel=3, dtype=None):
        if dim is None:  # (PyTorch's Python reads input.dim(): its error for a non-tensor)
            dim = _softmax_dim('softmin', input.dim())
        if dtype is not None:
            check_dtype('softmax', dtype)  # (PyTorch's softmin is (-input).softmax(dim, dtype=dtype))
            input = input.to(backend.to_dtype(dtype))
        return nn_softmax(-input, dim)


# nn.functional's softmax and log_softmax run the declared forwards directly (not through the
# functions bound by the declarations, which profilers and transforms wrap): each is one op.

def nn_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """nn.functional's softmax: ``dim`` optional (PyTorch's deprecated implicit choice, warned)."""
    # (PyTorch's Python reads input.dim(), then calls input.softmax(): their errors for a non-tensor)
    if dim is None:
        dim = _softmax_dim('softmax', input.dim())
    try:
        return Softmax.forward(input, dim, dtype)
    except AttributeError:
        input.softmax
        raise


def nn_log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """nn.functional's log_softmax: ``dim`` optional (PyTorch's deprecated implicit choice, warned)."""
    # (PyTorch's Python reads input.dim(), then calls input.log_softmax(): their errors for a non-tensor)
    if dim is None:
        dim = _softmax_dim('log_softmax', input.dim())
    try:
        return LogSoftmax.forward(input, dim, dtype)
    except AttributeError:
        input.log_softmax
        raise


for _fn, _name in ((nn_softmax, 'softmax'), (nn_log_softmax, 'log_softmax')):
    # named as PyTorch's (softmax() got an unexpected keyword argument ...), and as the
    # nn.functional functions they are (a checkpoint names them torch.nn.functional.softmax)
    _name_function(_fn, _name)
    _fn.__module__ = 'leafgrad.nn.functional'
