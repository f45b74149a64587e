"""The rest of PyTorch's pointwise family: addcmul, addcdiv, xlogy, logaddexp, hypot, copysign,
fmax/fmin, float_power, exp2, logit, sinc, sgn, positive, deg2rad/rad2deg.

Derivatives are leafgrad ops (differentiable again); binary ones undo broadcasting with
``sum_to``.
"""
import math

from ..autograd.graph import elementwise_jvp
from .. import backend
from . import elementwise as ew
from ._util import Node, binary_operands, broadcast_error, float_dtype_for, record, saved_output, sum_to, unary, wrap, xp
from ._inplace import inplace
from ..autograd.graph import _Empty
from ..tensor import Tensor


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _needs(node, i):
    return node.next_functions[i][0] is not None


# ---- addcmul, addcdiv ----------------------------------------------------------------------

def _in_float32(dtype, *tensors):
    """The operands of an op with a bfloat16 result as PyTorch computes it: each cast to bfloat16,
    then to float32, for one rounding of the whole expression at the end."""
    return [t._data.astype(dtype, copy=False).astype(xp.float32) for t in tensors]


def _tangent_terms(*terms):
    """The sum of the terms that are not None (None when all are)."""
    out = None
    for term in terms:
        if term is not None:
            out = term if out is None else out + term
    return out


class AddcmulBackward0(Node):
    __slots__ = ('value', 'shapes')

    def jvp(self, tangents):  # d(input + v t1 t2) = d input + v (d t1 t2 + t1 d t2)
        t_in, t1, t2 = tangents
        if t1 is None and t2 is None:
            return t_in
        a, b = self.saved_tensors
        return _tangent_terms(t_in, None if t1 is None else t1 * b * self.value,
                              None if t2 is None else t2 * a * self.value)

    def apply(self, grad):
        g0 = sum_to(grad, self.shapes[0]) if _needs(self, 0) else None
        g1 = g2 = None
        if _needs(self, 1) or _needs(self, 2):
            t1, t2 = self.saved_tensors
            g1 = sum_to(grad * t2 * self.value, self.shapes[1]) if _needs(self, 1) else None
            g2 = sum_to(grad * t1 * self.value, self.shapes[2]) if _needs(self, 2) else None
        return g0, g1, g2


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    prod = binary_operands(tensor1, tensor2)
    try:
        product = prod[0] * prod[1]
        data = binary_operands(input, wrap(xp.asarray(product)))
        out = data[0] + data[1] * value if value != 1 else data[0] + data[1]
    except ValueError:
        raise broadcast_error(input, tensor1, tensor2) from None
    if out.dtype.kind == 'V':
        s, a, b = _in_float32(out.dtype, input, tensor1, tensor2)
        out = (s + xp.float32(value) * a * b).astype(out.dtype)
    result, node = record(xp.asarray(out), AddcmulBackward0, (input, tensor1, tensor2))
    if node is not None:
        node.value, node.shapes = value, (_shape(input), _shape(tensor1), _shape(tensor2))
        node.save_crosswise(tensor1, tensor2, first=1)  # input's gradient needs neither
    return result


class AddcdivBackward0(Node):
    __slots__ = ('value', 'shapes')

    def jvp(self, tangents):  # d(input + v t1 / t2) = d input + v (d t1 / t2 - t1 d t2 / t2^2)
        t_in, t1, t2 = tangents
        if t1 is None and t2 is None:
            return t_in
        a, b = self.saved_tensors
        return _tangent_terms(t_in, None if t1 is None else t1 * self.value / b,
                              None if t2 is None else -t2 * self.value * a / (b * b))

    def apply(self, grad):
        t1, t2 = self.saved_tensors
        g0 = sum_to(grad, self.shapes[0]) if _needs(self, 0) else None
        g1 = sum_to(grad * self.value / t2, self.shapes[1]) if _needs(self, 1) else None
        g2 = sum_to(-grad * self.value * t1 / (t2 * t2), self.shapes[2]) if _needs(self, 2) else None
        return g0, g1, g2


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (floating tensors only, as PyTorch)."""
    if tensor1._data.dtype.kind not in 'fV' and tensor2._data.dtype.kind not in 'fV':
        raise RuntimeError('Integer division with addcdiv is no longer supported, and in a future release '
                           'addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv '
                           'behavior can be implemented as (input + value * tensor1 / tensor2).to(input.dtype) '
                           'for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The '
                           'future addcdiv behavior is just the latter implementation: (input + value * tensor1 / '
                           'tensor2), for all dtypes.')
    a, b = binary_operands(tensor1, tensor2)
    try:
        with xp.errstate(divide='ignore', invalid='ignore'):
            quotient = xp.asarray(a / b)
        x, q = binary_operands(input, wrap(quotient))
        out = x + q * value if value != 1 else x + q
    except ValueError:
        raise broadcast_error(input, tensor1, tensor2) from None
    if out.dtype.kind == 'V':
        s, a, b = _in_float32(out.dtype, input, tensor1, tensor2)
        with xp.errstate(divide='ignore', invalid='ignore'):
            out = (s + xp.float32(value) * a / b).astype(out.dtype)
    result, node = record(xp.asarray(out), AddcdivBackward0, (input, tensor1, tensor2))
    if node is not None:
        node.value, node.shapes = value, (_shape(input), _shape(tensor1), _shape(tensor2))
        node.save(tensor1 if _needs(node, 2) else _Empty, tensor2)  # tensor1: for tensor2's gradient only
    return result


# ---- xlogy, logaddexp, hypot ---------------------------------------------------------------

class XlogyBackward0(Node):
    __slots__ = ('self_shape', 'other_shape')

    def jvp(self, tangents):  # d(x log y) = dx log y (0 where x == 0 and y <= 0) + x dy / y
        tx, ty = tangents
        x, y = self.saved_tensors
        return _tangent_terms(
            None if tx is None else tx * y.log().masked_fill(ew.wrap((x._data == 0) & (y._data <= 0)), 0.0),
            None if ty is None else ty * x / y)

    def apply(self, grad):
        x, y = self.saved_tensors
        gx = gy = None
        if _needs(self, 0):
            # d/dx x log y = log y, taken as 0 where x == 0 and y <= 0 (PyTorch's rule: NaN y keeps NaN)
            gx = sum_to(grad * y.log().masked_fill(ew.wrap((x._data == 0) & (y._data <= 0)), 0.0), self.self_shape)
        if _needs(self, 1):
            gy = sum_to(grad * x / y, self.other_shape)
        return gx, gy


class XlogyBackward1(Node):
    """xlogy(number, tensor)."""
    __slots__ = ('scalar',)

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (y,) = self.saved_tensors
        return grad * self.scalar / y,


class XlogyBackward2(Node):
    """xlogy(tensor, number)."""
    __slots__ = ('scalar',)

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        with xp.errstate(divide='ignore', invalid='ignore'):
            # log(number), taken as 0 where x == 0 unless the number is positive (PyTorch's rule)
            log_scalar = math.log(self.scalar) if self.scalar > 0 else (-math.inf if self.scalar == 0 else math.nan)
            d = xp.where((x._data == 0) & (not self.scalar > 0), 0, log_scalar).astype(x._data.dtype)
        return grad * ew.wrap(d),


def xlogy(input, other):
    dt = backend.result_type(input, other)
    dt = dt.np if dt.is_floating_point else backend.get_default_dtype().np
    x, y = binary_operands(input, other)
    x, y = xp.asarray(x, dtype=dt), xp.asarray(y, dtype=dt)
    try:
        with xp.errstate(divide='ignore', invalid='ignore'):
            data = xp.where((x == 0) & ~xp.isnan(y), dt.type(0), x * xp.log(y))
    except ValueError:
        raise broadcast_error(input, other) from None
    if not isinstance(input, Tensor):  # number * log(tensor)
        result, node = record(data, XlogyBackward1, (other,))
        if node is not None:
            node.scalar = input
            node.save(other)
        return result
    if not isinstance(other, Tensor):  # tensor * log(number)
        result, node = record(data, XlogyBackward2, (input,))
        if node is not None:
            node.scalar = other
            node.save(input)
        return result
    result, node = record(data, XlogyBackward0, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = _shape(input), _shape(other)
        node.save(input, other)
    return result


class LogaddexpBackward0(Node):
    __slots__ = ('self_shape', 'other_shape')

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = sum_to(grad * ew.sigmoid(a - b), self.self_shape) if _needs(self, 0) else None
        gb = sum_to(grad * ew.sigmoid(b - a), self.other_shape) if _needs(self, 1) else None
        return ga, gb


def _float_only(kernel, *operands):
    from .activation import _DTYPE_LABEL
    dt = backend.result_type(*operands)
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_DTYPE_LABEL[dt.name]}\'')


def logaddexp(input, other):
    _float_only('logaddexp_cpu', input, other)
    x, y = binary_operands(input, other)
    x, y = float_dtype_for(xp.asarray(x)), float_dtype_for(xp.asarray(y))
    try:
        with xp.errstate(invalid='ignore'):
            data = xp.logaddexp(x, y)
    except ValueError:
        raise broadcast_error(input, other) from None
    result, node = record(data, LogaddexpBackward0, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = _shape(input), _shape(other)
        node.save(input, other)
    return result


class HypotBackward0(Node):
    __slots__ = ('self_shape', 'other_shape')

    def apply(self, grad):
        a, b, result = self.saved_tensors
        ga = sum_to(grad * a / result, self.self_shape) if _needs(self, 0) else None
        gb = sum_to(grad * b / result, self.other_shape) if _needs(self, 1) else None
        return ga, gb


def hypot(input, other):
    x, y = binary_operands(input, other)
    try:
        data = xp.hypot(x, y)
    except ValueError:
        raise broadcast_error(input, other) from None
    _float_only('hypot_cpu', input, other)  # (after the shapes, as PyTorch's TensorIterator)
    result, node = record(data, HypotBackward0, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = _shape(input), _shape(other)
        node.save(input if _needs(node, 0) else _Empty, other if _needs(node, 1) else _Empty,
                  saved_output(result))
    return result


# ---- copysign, fmax, fmin ------------------------------------------------------------------

class CopysignBackward0(Node):
    """self's derivative is the sign flip (0 where self is 0); other's is zero."""
    __slots__ = ('self_shape', 'other_shape', 'other_dtype')

    def apply(self, grad):
        x, result = self.saved_tensors  # (the result is saved even for other's zero gradient, as in PyTorch)
        gx = gy = None
        if _needs(self, 0):
            # grad * (result / self, 0 where self is 0): a function of both, recorded as PyTorch's
            # copysign_tensor_self_backward (a MulBackward0 under create_graph)
            zero = x._data == 0
            safe = x + ew.wrap(zero.astype(x._data.dtype))
            ratio = result / safe * ew.wrap((~zero).astype(x._data.dtype)) if zero.any() else result / x
            gx = sum_to(grad * ratio, self.self_shape)
        if _needs(self, 1):
            gy = ew.wrap(xp.zeros(self.other_shape, dtype=self.other_dtype))  # zeros_like(other)
        return gx, gy


def copysign(input, other):
    x, y = binary_operands(input, other)
    x = float_dtype_for(xp.asarray(x))
    try:
        data = xp.copysign(x, y).astype(x.dtype, copy=False)
    except ValueError:
        raise broadcast_error(input, other) from None
    result, node = record(data, CopysignBackward0, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = _shape(input), _shape(other)
        node.other_dtype = other._data.dtype if isinstance(other, Tensor) else data.dtype
        node.save(input if _needs(node, 0) else _Empty, saved_output(result))
    return result


class FmaxBackward0(Node):
    """The gradient goes to self where self wins or ties (or other is NaN), else to other."""
    __slots__ = ('self_shape', 'other_shape', 'sign')

    def apply(self, grad):
        a, b = self.saved_tensors
        ad, bd = a._data, b._data
        to_self = ((ad >= bd) if self.sign > 0 else (ad <= bd)) | xp.isnan(bd)
        m = ew.wrap(to_self.astype(grad._data.dtype))
        ga = sum_to(grad * m, self.self_shape) if _needs(self, 0) else None
        gb = sum_to(grad * (1 - m), self.other_shape) if _needs(self, 1) else None
        return ga, gb


class FminBackward0(FmaxBackward0):
    __slots__ = ()


def _fextremum(input, other, np_fn, node_cls, sign):
    x, y = binary_operands(input, other)
    try:
        data = np_fn(x, y)
    except ValueError:
        raise broadcast_error(input, other) from None
    result, node = record(data, node_cls, (input, other))
    if node is not None:
        node.self_shape, node.other_shape, node.sign = _shape(input), _shape(other), sign
        node.save(input, other)
    return result


def fmax(input, other):
    """Like maximum, but a NaN loses to a number."""
    return _fextremum(input, other, xp.fmax, FmaxBackward0, 1)


def fmin(input, other):
    return _fextremum(input, other, xp.fmin, FminBackward0, -1)


# ---- float_power, exp2, logit, sinc --------------------------------------------------------

def float_power(input, exponent):
    """pow computed in float64 (PyTorch's float_power)."""
    from .conversion import to
    base = to(input, backend.float64) if isinstance(input, Tensor) else float(input)
    exp = to(exponent, backend.float64) if isinstance(exponent, Tensor) else float(exponent)
    return ew.pow(base, exp)


class Exp2Backward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * result * math.log(2.0),


def exp2(input):
    return unary(Exp2Backward0, input, xp.exp2(float_dtype_for(input._data)), save='output')


class LogitBackward0(Node):
    __slots__ = ('eps',)

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        g = grad / (x * (1 - x))
        if self.eps is None:
            return g + ew.wrap(xp.where((d < 0) | (d > 1), xp.nan, 0).astype(d.dtype)),
        inside = (d >= self.eps) & (d <= 1 - self.eps)
        return ew.where(ew.wrap(inside), g, g * 0),


def logit(input, eps=None):
    x = float_dtype_for(input._data)
    z = x if eps is None else xp.clip(x, eps, 1 - eps)
    with xp.errstate(divide='ignore', invalid='ignore'):
        data = xp.log(z / (1 - z)).astype(x.dtype, copy=False)
    result, node = record(data, LogitBackward0, (input,))
    if node is not None:
        node.eps = eps
        node.save(input)
    return result


class SincBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        zero = xp.asarray(x._data == 0)
        # (cos(pi x) - sinc(x)) / x, written with a safe x so that x = 0 gives 0
        safe = x + ew.wrap(zero.astype(x._data.dtype))
        d = (ew.cos(safe * math.pi) - sinc(safe)) / safe
        return ew.where(ew.wrap(zero), grad * 0, grad * d),


def sinc(input):
    x = float_dtype_for(input._data)
    return unary(SincBackward0, input, xp.sinc(x).astype(x.dtype, copy=False), save='input')


# ---- sgn, positive, angle conversions ------------------------------------------------------

class SgnBackward0(Node):
    __slots__ = ()
    complex_rule = True  # (its complex rule, sgn_backward, is written in PyTorch's convention)

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        if not self._saved:
            return grad * 0,
        from .complex_numbers import sgn_backward  # (a complex input: sgn is z / |z|)
        return sgn_backward(self.saved_tensors[0], grad),


def sgn(input):
    data = input._data
    out, node = record(data.copy() if data.dtype.kind == 'b' else xp.sign(data), SgnBackward0, (input,))
    if node is not None and data.dtype.kind == 'c':
        node.save(input)
    return out


def positive(input):
    if input._data.dtype.kind == 'b':
        raise RuntimeError('The `+` operator, on a bool tensor is not supported.')
    return input


class Deg2RadBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return grad * (math.pi / 180),


class Rad2DegBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        return grad * (180 / math.pi),


def deg2rad(input):
    x = float_dtype_for(input._data)
    return record(x * x.dtype.type(math.pi / 180), Deg2RadBackward0, (input,))[0]


def rad2deg(input):
    x = float_dtype_for(input._data)
    return record(x * x.dtype.type(180 / math.pi), Rad2DegBackward0, (input,))[0]


def _inplace_of(fn):
    def op_(self, *args, **kwargs):
        others = tuple(a for a in args + tuple(kwargs.values()) if isinstance(a, Tensor))
        return inplace(self, lambda s: fn(s, *args, **kwargs), others)
    op_.__name__ = fn.__name__ + '_'
    return op_


FUNCTIONS = ['addcmul', 'addcdiv', 'xlogy', 'logaddexp', 'hypot', 'copysign', 'fmax', 'fmin', 'float_power',
             'exp2', 'logit', 'sinc', 'sgn', 'positive', 'deg2rad', 'rad2deg']
METHODS = {name + '_': _inplace_of(globals()[name]) for name in
           ['addcmul', 'addcdiv', 'xlogy', 'hypot', 'copysign', 'float_power', 'exp2', 'logit', 'sinc', 'sgn',
            'deg2rad', 'rad2deg']}
METHODS['__pos__'] = positive
