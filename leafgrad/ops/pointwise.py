"""The rest of PyTorch's pointwise family: addcmul, addcdiv, xlogy, logaddexp, hypot, copysign,
fmax/fmin, float_power, exp2, logit, sinc, sgn, positive, deg2rad/rad2deg.

Each op is declared once (``_op.Op``), its derivative beside its forward. Derivatives are
leafgrad ops (differentiable again); binary ones undo broadcasting with ``sum_to``.
"""
import math
import sys

from .. import backend
from ._inplace import inplace as _run_inplace
from ._op import CAST, SAME, Op, check_out, scalar_name, warn_once
from ._op import __file__ as _op_file
from ._util import (SCALAR_NAMES, binary_operands, broadcast_error, float_dtype_for, fused_multiply_add, iterated,
                    on_gpu, operator_refusal, ops, record, saved_output, sgn_backward, sum_to, unary, wrap, xp)
from ..autograd.graph import _Empty, each_sample, elementwise_jvp
from ..tensor import Tensor
from .._arg_parser import METHOD_CODES, Overloads, is_number, refuse_arguments, type_name


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _needs(node, i):
    return node.next_functions[i][0] is not None


# ---- addcmul, addcdiv ----------------------------------------------------------------------

def _as_torch_computes(out, input, tensor1, tensor2, value, formula):
    """addcmul's or addcdiv's result ``out`` (of NumPy's operations) as PyTorch's CPU kernel
    computes it where they differ, from the operands cast to the result's dtype: a float32 or
    float64 result by ``formula``, a 16-bit float one by ``formula`` in float32 (the value not
    rounded to the 16-bit dtype), rounded once at the end."""
    dtype = out.dtype
    if type(out) is not xp.ndarray or dtype.kind not in 'fV' or dtype.itemsize not in (2, 4, 8):
        return out
    wide = xp.float32 if dtype.itemsize <= 4 else xp.float64
    s, a, b = (t._data.astype(dtype, copy=False).astype(wide, copy=False) for t in (input, tensor1, tensor2))
    with xp.errstate(all='ignore'):
        return formula(s, a, b, wide(value)).astype(dtype, copy=False)


def _fused_product(s, a, b, value):
    """PyTorch's addcmul: ``(value * a) * b + s`` with one rounding for the product and the sum."""
    return fused_multiply_add(value * a, b, s)


def _quotient_sum(s, a, b, value):
    """PyTorch's addcdiv: ``s + (value * a) / b``, each operation rounded."""
    return s + value * a / b


def _tangent_terms(*terms):
    """The sum of the terms that are not None (None when all are)."""
    out = None
    for term in terms:
        if term is not None:
            out = term if out is None else out + term
    return out


def _number_value(name, value):
    """addcmul's and addcdiv's ``value`` as a number (a 0-dim tensor's, as PyTorch's parser reads
    it), or PyTorch's parser's TypeError for anything else."""
    if type(value) is int or type(value) is float:
        return value
    if not is_number(value):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type_name(value)}")
    return value.item() if isinstance(value, Tensor) else value


def _value_first(tensor1, tensor2, rest, value, code):
    """(tensor1, tensor2, value) of PyTorch's deprecated overload of addcmul and addcdiv, value
    first (``addcmul(input, value, tensor1, tensor2)``, ``x.addcmul_(value, tensor1, tensor2)``),
    with PyTorch's warning, once a process as its parser's (add's alpha first is the same
    warning); for any other extra positional argument, the TypeError PyTorch's parser raises
    (positions counted after self for a method). ``code``: the forward's (its name the op's)."""
    name = code.co_name
    # (the in-place variant runs the forward through the in-place machinery: its frame is a caller)
    frame = sys._getframe(2)
    inplace = False
    for _ in range(4):
        if frame is None:
            break
        if frame.f_code.co_name == name + '_' and frame.f_code.co_filename == _op_file:
            inplace = True
            break
        frame = frame.f_back
    del frame
    method = inplace or id(code) in METHOD_CODES
    name = name + '_' if inplace else name
    if len(rest) == 1 and type(value) is int and value == 1 and is_number(tensor1) and \
            isinstance(tensor2, Tensor) and isinstance(rest[0], Tensor):
        if method:
            old = f'{name}(Number value, Tensor tensor1, Tensor tensor2)'
            new = f'{name}(Tensor tensor1, Tensor tensor2, *, Number value = 1)'
        else:
            old = f'{name}(Tensor input, Number value, Tensor tensor1, Tensor tensor2, *, Tensor out = None)'
            new = f'{name}(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, Tensor out = None)'
        warn_once(f'This overload of {name} is deprecated:\n\t{old}\nConsider using one of the following '
                  f'signatures instead:\n\t{new}', key='deprecated overload')
        return tensor2, rest[0], tensor1
    if method and not (type(value) is int and value == 1):  # (PyTorch's parser's words for the method)
        raise TypeError(f'{name}() received an invalid combination of arguments - got unrecognized keyword '
                        'arguments: value')
    taken = 2 if method else 3
    raise TypeError(f'{name}() takes {taken} positional arguments but {taken + len(rest)} were given')


class Addcmul(Op):
    """addcmul(input, tensor1, tensor2, *, value=1, out=None): ``input + value * tensor1 * tensor2``."""
    op, node = 'addcmul', 'AddcmulBackward0'
    saved = ('tensor1', 'tensor2', 'value=value')
    out = CAST
    operands = (Overloads('addcmul', '(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, '
                          'Tensor out = None)'),)
    inplace = True
    __slots__ = ('value', 'shapes')

    def forward(input, tensor1, tensor2, *value_first, value=1):
        if value_first:
            tensor1, tensor2, value = _value_first(tensor1, tensor2, value_first, value, sys._getframe().f_code)
        if not (isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor) and isinstance(input, Tensor)):
            refuse_arguments()  # (an int, a str: PyTorch's parser's TypeError, naming the argument)
        value = _number_value('addcmul', value)
        if isinstance(value, float) and backend.result_type(input, tensor1, tensor2).np.kind in 'iu':
            value = int(value)  # (PyTorch's value is a Scalar of the tensors' dtype: 2.5 is 2 for integers)
        try:
            prod = binary_operands(tensor1, tensor2)
            product = prod[0] * prod[1]
            data = binary_operands(input, wrap(xp.asarray(product)))
            out = data[0] + data[1] * value if value != 1 else data[0] + data[1]
        except ValueError:
            raise broadcast_error(input, tensor1, tensor2) from None
        except TypeError:  # (a string, a list: PyTorch's parser's TypeError)
            return operator_refusal()
        out = _as_torch_computes(out, input, tensor1, tensor2, value, _fused_product)
        out = xp.asarray(out)
        if out.ndim > 1:
            out = iterated(out, input._data, tensor1._data, tensor2._data)
        result, node = record(out, Addcmul, (input, tensor1, tensor2))
        if node is not None:
            node.value, node.shapes = value, (_shape(input), _shape(tensor1), _shape(tensor2))
            node.save_crosswise(tensor1, tensor2, first=1)  # input's gradient needs neither
        return result

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


class Addcdiv(Op):
    """addcdiv(input, tensor1, tensor2, *, value=1, out=None): ``input + value * tensor1 / tensor2``
    (floating tensors only, as PyTorch)."""
    op, node = 'addcdiv', 'AddcdivBackward0'
    saved = ('tensor1', 'tensor2', 'value=value')
    out = CAST
    operands = (Overloads('addcdiv', '(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, '
                          'Tensor out = None)'),)
    inplace = True
    __slots__ = ('value', 'shapes')

    def forward(input, tensor1, tensor2, *value_first, value=1):
        if value_first:
            tensor1, tensor2, value = _value_first(tensor1, tensor2, value_first, value, sys._getframe().f_code)
        if not (isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor) and isinstance(input, Tensor)):
            refuse_arguments()  # (an int, a str: PyTorch's parser's TypeError, naming the argument)
        value = _number_value('addcdiv', value)
        try:
            integral = tensor1._data.dtype.kind not in 'fV' and tensor2._data.dtype.kind not in 'fV'
        except AttributeError:  # (a string, a list: PyTorch's parser's TypeError)
            return operator_refusal()
        if integral:
            # (PyTorch's words, its double space too)
            raise RuntimeError('Integer division with addcdiv is no longer supported, and in a future  release '
                               'addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv '
                               'behavior can be implemented as (input + value * leafgrad.trunc(tensor1 / tensor2))'
                               '.to(input.dtype) '
                               'for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The '
                               'future addcdiv behavior is just the latter implementation: (input + value * tensor1 / '
                               'tensor2), for all dtypes.')
        try:
            a, b = binary_operands(tensor1, tensor2)
            with xp.errstate(divide='ignore', invalid='ignore'):
                quotient = xp.asarray(a / b)
            x, q = binary_operands(input, wrap(quotient))
            out = x + q * value if value != 1 else x + q
        except ValueError:
            raise broadcast_error(input, tensor1, tensor2) from None
        except TypeError:  # (a string, a list: PyTorch's parser's TypeError)
            return operator_refusal()
        out = _as_torch_computes(out, input, tensor1, tensor2, value, _quotient_sum)
        out = xp.asarray(out)
        if out.ndim > 1:
            out = iterated(out, input._data, tensor1._data, tensor2._data)
        result, node = record(out, Addcdiv, (input, tensor1, tensor2))
        if node is not None:
            node.value, node.shapes = value, (_shape(input), _shape(tensor1), _shape(tensor2))
            node.save(tensor1 if _needs(node, 2) else _Empty, tensor2)  # tensor1: for tensor2's gradient only
        return result

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


# ---- xlogy, logaddexp, hypot ---------------------------------------------------------------

class Xlogy(Op):
    """xlogy(input, other, *, out=None): ``input * log(other)``, 0 where input is 0 (unless other
    is NaN); a number for either operand (XlogyBackward1/2)."""
    op, node = 'xlogy', 'XlogyBackward0'
    saved = ('self', 'other')
    out = CAST
    operands = (Overloads('xlogy', '(Tensor input, Tensor other, *, Tensor out = None)',
                          '(Number self, Tensor other, *, Tensor out = None)',
                          '(Tensor input, Number other, *, Tensor out = None)'),)
    inplace = inplace_function = True
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        try:
            dt = backend.result_type(input, other)
            x, y = binary_operands(input, other)
        except TypeError:  # (a string, a list: PyTorch's parser's TypeError)
            return operator_refusal()
        dt = dt.np if dt.is_floating_point else backend.get_default_dtype().np
        like = y if isinstance(other, Tensor) else x
        if on_gpu(like):  # (a number operand on the tensor's GPU)
            x, y = xp.asarray(x, dtype=dt, like=like), xp.asarray(y, dtype=dt, like=like)
        else:
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
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Xlogy, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.save(input, other)
        return result

    def jvp(self, tangents):  # d(x log y) = dx log y (0 where x == 0 and y <= 0) + x dy / y
        tx, ty = tangents
        x, y = self.saved_tensors
        return _tangent_terms(
            None if tx is None else tx * y.log().masked_fill(wrap((x._data == 0) & (y._data <= 0)), 0.0),
            None if ty is None else ty * x / y)

    def apply(self, grad):
        x, y = self.saved_tensors
        gx = gy = None
        if _needs(self, 0):
            # d/dx x log y = log y, taken as 0 where x == 0 and y <= 0 (PyTorch's rule: NaN y keeps NaN)
            gx = sum_to(grad * y.log().masked_fill(wrap((x._data == 0) & (y._data <= 0)), 0.0), self.self_shape)
        if _needs(self, 1):
            gy = sum_to(grad * x / y, self.other_shape)
        return gx, gy


class XlogyBackward1(Op):
    """xlogy(number, tensor)."""
    node = 'XlogyBackward1'
    saved = ('other', 'self=scalar')
    __slots__ = ('scalar',)
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (y,) = self.saved_tensors
        return grad * self.scalar / y,


class XlogyBackward2(Op):
    """xlogy(tensor, number)."""
    node = 'XlogyBackward2'
    saved = ('self', 'other=scalar')
    __slots__ = ('scalar',)
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        with xp.errstate(divide='ignore', invalid='ignore'):
            # log(number), taken as 0 where x == 0 unless the number is positive (PyTorch's rule)
            log_scalar = math.log(self.scalar) if self.scalar > 0 else (-math.inf if self.scalar == 0 else math.nan)
            d = xp.where((x._data == 0) & (not self.scalar > 0), 0, log_scalar).astype(x._data.dtype)
        return grad * wrap(d),


class Logaddexp(Op):
    """logaddexp(input, other, *, out=None): ``log(exp(input) + exp(other))`` without overflow."""
    op, node = 'logaddexp', 'LogaddexpBackward0'
    saved = ('self', 'other')
    tensors = ('input', 'other')
    out = CAST
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        _float_only('logaddexp_cpu', input, other)
        x, y = binary_operands(input, other)
        x, y = float_dtype_for(xp.asarray(x)), float_dtype_for(xp.asarray(y))
        try:
            with xp.errstate(invalid='ignore'):
                data = xp.logaddexp(x, y)
        except ValueError:
            raise broadcast_error(input, other) from None
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Logaddexp, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.save(input, other)
        return result

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = sum_to(grad * ops.sigmoid(a - b), self.self_shape) if _needs(self, 0) else None
        gb = sum_to(grad * ops.sigmoid(b - a), self.other_shape) if _needs(self, 1) else None
        return ga, gb


def _float_only(kernel, *operands):
    dt = backend.result_type(*operands)
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_NAMES[dt.name]}\'')


class Hypot(Op):
    """hypot(input, other, *, out=None): ``sqrt(input**2 + other**2)``."""
    op, node = 'hypot', 'HypotBackward0'
    saved = ('self', 'other', 'result')
    tensors = ('input', 'other')
    out = CAST
    inplace = True
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        x, y = binary_operands(input, other)
        try:
            data = xp.hypot(x, y)
        except ValueError:
            raise broadcast_error(input, other) from None
        _float_only('hypot_cpu', input, other)  # (after the shapes, as PyTorch's TensorIterator)
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Hypot, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.save(input if _needs(node, 0) else _Empty, other if _needs(node, 1) else _Empty,
                      saved_output(result))
        return result

    def apply(self, grad):
        a, b, result = self.saved_tensors
        ga = sum_to(grad * a / result, self.self_shape) if _needs(self, 0) else None
        gb = sum_to(grad * b / result, self.other_shape) if _needs(self, 1) else None
        return ga, gb


# ---- copysign, fmax, fmin ------------------------------------------------------------------

class Copysign(Op):
    """copysign(input, other, *, out=None): input's magnitude with other's sign. self's derivative
    is the sign flip (0 where self is 0); other's is zero."""
    op, node = 'copysign', 'CopysignBackward0'
    saved = ('self', 'result')
    out = CAST
    inplace = True
    refusals = Overloads('copysign', '(Tensor input, Tensor other, *, Tensor out = None)',
                         '(Tensor input, Number other, *, Tensor out = None)')
    __slots__ = ('self_shape', 'other_shape', 'other_dtype')

    def forward(input, other):
        if not isinstance(input, Tensor):  # (PyTorch's copysign has no number first: refusals lists its overloads)
            raise TypeError(f"copysign(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        x, y = binary_operands(input, other)
        x = float_dtype_for(xp.asarray(x))
        try:
            data = xp.copysign(x, y).astype(x.dtype, copy=False)
        except ValueError:
            raise broadcast_error(input, other) from None
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Copysign, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.other_dtype = other._data.dtype if isinstance(other, Tensor) else data.dtype
            node.save(input if _needs(node, 0) else _Empty, saved_output(result))
        return result

    def apply(self, grad):
        x, result = self.saved_tensors  # (the result is saved even for other's zero gradient, as in PyTorch)
        gx = gy = None
        if _needs(self, 0):
            # grad * (result / self, 0 where self is 0): a function of both, recorded as PyTorch's
            # copysign_tensor_self_backward (a MulBackward0 under create_graph)
            zero = x._data == 0
            safe = x + wrap(zero.astype(x._data.dtype))
            ratio = result / safe * wrap((~zero).astype(x._data.dtype)) if zero.any() else result / x
            gx = sum_to(grad * ratio, self.self_shape)
        if _needs(self, 1):
            gy = wrap(xp.zeros(self.other_shape, dtype=self.other_dtype, like=grad._data))  # zeros_like(other)
        return gx, gy


class Nextafter(Op):
    """nextafter(input, other, *, out=None): the next floating-point number after input towards
    other. Its derivative is PyTorch's: the gradient to input, zeros to other."""
    op, node = 'nextafter', 'NextafterBackward0'
    out = CAST
    inplace = True
    tensors = ('input', 'other')
    __slots__ = ('other_shape', 'other_dtype', 'self_shape')

    def forward(input, other):
        x, y = binary_operands(input, other)
        if x.dtype.kind not in 'fV':
            raise NotImplementedError(f'"nextafter_cpu" not implemented for \'{scalar_name(x)}\'')
        try:
            data = xp.nextafter(x, y)
        except ValueError:
            raise broadcast_error(input, other) from None
        result, node = record(data, Nextafter, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.other_dtype = other._data.dtype
        return result

    def apply(self, grad):
        gx = sum_to(grad, self.self_shape) if _needs(self, 0) else None
        gy = wrap(xp.zeros(self.other_shape, dtype=self.other_dtype, like=grad._data)) if _needs(self, 1) else None
        return gx, gy


class Fmax(Op):
    """fmax(input, other, *, out=None): like maximum, but a NaN loses to a number. The gradient
    goes to self where self wins or ties (or other is NaN), else to other."""
    op, node = 'fmax', 'FmaxBackward0'
    saved = ('self', 'other')
    tensors = ('input', 'other')
    out = CAST
    __slots__ = ('self_shape', 'other_shape', 'sign')

    def forward(input, other):
        return _fextremum(input, other, xp.fmax, Fmax, 1)

    def jvp(self, tangents):
        """The tangent of the operand taken, by PyTorch's forward rule: self's where it is the
        larger (fmin: where it is the smaller or ties; fmax's tie takes other's) or other is
        NaN, else other's."""
        ad, bd = binary_operands(*self.saved_tensors)
        m = wrap((((ad > bd) if self.sign > 0 else (ad <= bd)) | xp.isnan(bd)).astype(ad.dtype))
        ta, tb = tangents
        return _tangent_terms(None if ta is None else ta * m, None if tb is None else tb * (1 - m))

    def apply(self, grad):
        ad, bd = binary_operands(*self.saved_tensors)  # (compared in their promoted dtype, as PyTorch)
        to_self = ((ad >= bd) if self.sign > 0 else (ad <= bd)) | xp.isnan(bd)
        # selected, not multiplied (an infinite or NaN gradient gives the loser 0), as PyTorch's
        # grad.masked_fill(...): under create_graph a MaskedFillBackward0 as PyTorch's
        ga = sum_to(ops.masked_fill(grad, wrap(~to_self), 0), self.self_shape) if _needs(self, 0) else None
        gb = sum_to(ops.masked_fill(grad, wrap(to_self), 0), self.other_shape) if _needs(self, 1) else None
        return ga, gb


class Fmin(Fmax):
    """fmin(input, other, *, out=None): like minimum, but a NaN loses to a number."""
    op, node = 'fmin', 'FminBackward0'
    __slots__ = ()

    def forward(input, other):
        return _fextremum(input, other, xp.fmin, Fmin, -1)


def _fextremum(input, other, np_fn, node_cls, sign):
    x, y = binary_operands(input, other)
    try:
        data = np_fn(x, y)
    except ValueError:
        raise broadcast_error(input, other) from None
    result, node = record(iterated(data, x, y) if data.ndim > 1 else data, node_cls, (input, other))
    if node is not None:
        node.self_shape, node.other_shape, node.sign = _shape(input), _shape(other), sign
        node.save(input, other)
    return result


# ---- float_power, exp2, logit, sinc --------------------------------------------------------

def _float_power_out(name, out, result, differentiable):
    """float_power's out=: a float64 ``out`` only, then pow's rule (its errors name pow)."""
    if not isinstance(out, Tensor):
        check_out(name, out, result, differentiable)  # (its TypeError)
    if out._data.dtype != result._data.dtype:  # (float64, or complex128 for a complex operand)
        raise RuntimeError(f'the output given to float_power has dtype {scalar_name(out._data)} but the '
                           f"operation's result requires dtype {scalar_name(result._data)}")
    return CAST('pow', out, result, differentiable)


_FLOAT_POWER = Overloads('float_power', '(Tensor input, Tensor exponent, *, Tensor out = None)',
                         '(Number self, Tensor exponent, *, Tensor out = None)',
                         '(Tensor input, Number exponent, *, Tensor out = None)')


class FloatPower(Op):
    """float_power(input, exponent, *, out=None): pow computed in float64 (complex128 where
    either operand is complex)."""
    op, out = 'float_power', _float_power_out
    refusals = _FLOAT_POWER  # (the method's and the in-place variant's listing: their own signatures)
    __slots__ = ()

    def forward(input, exponent):
        if not (isinstance(input, Tensor) or is_number(input)) or \
                not (isinstance(exponent, Tensor) or is_number(exponent)):  # (a string, a list)
            _FLOAT_POWER.bind((input, exponent), {})
        dt = _float_power_dtype(input, exponent)
        base = ops.to(input, dt) if isinstance(input, Tensor) else dt.np.type(input).item()
        exp = ops.to(exponent, dt) if isinstance(exponent, Tensor) else dt.np.type(exponent).item()
        return ops.pow(base, exp)

    def inplace(self, exponent):
        """float_power_(exponent): self must already be of the result's dtype (PyTorch checks
        first, and never casts the result down)."""
        if not (isinstance(exponent, Tensor) or is_number(exponent)):
            _FLOAT_POWER.named('float_power_').bind((exponent,), {}, method=True)
        dt = _float_power_dtype(self, exponent)
        if self._data.dtype != dt.np:
            raise RuntimeError(f'the base given to float_power_ has dtype {scalar_name(self._data)} but the '
                               f"operation's result requires dtype {SCALAR_NAMES.get(dt.name, dt.name)}")
        return _run_inplace(self, lambda s: FloatPower.forward(s, exponent),
                            (exponent,) if isinstance(exponent, Tensor) else ())


def _float_power_dtype(input, exponent):
    complex_ = any(isinstance(v, complex) or isinstance(v, Tensor) and v._data.dtype.kind == 'c'
                   for v in (input, exponent))
    return backend.complex128 if complex_ else backend.float64


class Exp2(Op):
    """exp2(input, *, out=None): ``2 ** input``."""
    op, node, saved = 'exp2', 'Exp2Backward0', ('result',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input):
        return unary(Exp2, input, xp.exp2(float_dtype_for(input._data)), save='output')

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * result * math.log(2.0),


class Logit(Op):
    """logit(input, eps=None, *, out=None): ``log(input / (1 - input))``, input clamped to
    [eps, 1 - eps] when eps is given."""
    op, node, saved = 'logit', 'LogitBackward0', ('self', 'eps=eps')
    out = CAST
    parameter_types = {'eps': 'float?'}
    inplace = inplace_function = True
    __slots__ = ('eps',)
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input, eps=None):
        x = float_dtype_for(input._data)
        z = x if eps is None else xp.clip(x, eps, 1 - eps)
        with xp.errstate(divide='ignore', invalid='ignore'):
            data = xp.log(z / (1 - z)).astype(x.dtype, copy=False)
        result, node = record(data, Logit, (input,))
        if node is not None:
            node.eps = eps
            node.save(input)
        return result

    def apply(self, grad):
        (x,) = self.saved_tensors
        d = x._data
        g = grad / (x * (1 - x))
        if self.eps is None:
            return g + wrap(xp.where((d < 0) | (d > 1), xp.nan, 0).astype(d.dtype)),
        # 0 where the input was clamped (g there can be inf or nan: x at 0 or 1, or infinite), and at
        # nan, as PyTorch's vector kernel
        inside = (d >= self.eps) & (d <= 1 - self.eps)
        return ops.where(wrap(inside), g, 0.0),


class Sinc(Op):
    """sinc(input, *, out=None): ``sin(pi x) / (pi x)``, 1 at 0."""
    op, node, saved = 'sinc', 'SincBackward0', ('self',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input):
        x = float_dtype_for(input._data)
        with xp.errstate(invalid='ignore'):  # (sin of an infinity: NaN, silently as PyTorch's)
            data = xp.sinc(x).astype(x.dtype, copy=False)
        return unary(Sinc, input, data, save='input')

    def apply(self, grad):
        (x,) = self.saved_tensors
        zero = xp.asarray(x._data == 0)
        # (cos(pi x) - sinc(x)) / x, written with a safe x so that x = 0 gives 0
        safe = x + wrap(zero.astype(x._data.dtype))
        d = (ops.cos(safe * math.pi) - sinc(safe)) / safe
        zeros = wrap(xp.zeros((), dtype=grad._data.dtype, like=grad._data))
        return ops.where(wrap(zero), zeros, grad * d),  # (0 there, as PyTorch)


# ---- sgn, positive, angle conversions ------------------------------------------------------

class Sgn(Op):
    """sgn(input, *, out=None): the sign (of a real input, as sign); its gradient is zero."""
    op, node = 'sgn', 'SgnBackward0'
    out = SAME
    inplace = True
    __slots__ = ()
    complex_rule = True  # (its complex rule, sgn_backward, is written in PyTorch's convention)

    def jvp(self, tangents):
        t = tangents[0]
        if not self._saved or t._data.dtype.kind != 'c':
            return elementwise_jvp(self, tangents)  # (zero: a real sign)
        # of a complex z, the derivative (t - s Re(conj(s) t)) / |z| is self-adjoint: the reverse rule's
        return each_sample(lambda u: self.apply(u)[0], t)

    def forward(input):
        data = input._data
        # (NumPy's sign: NaN at NaN where PyTorch's gives 0; sign's exact formula costs sgn about 3 us a call)
        out, node = record(data.copy() if data.dtype.kind == 'b' else xp.sign(data), Sgn, (input,))
        if node is not None and data.dtype.kind == 'c':
            node.save(input)
        return out

    def apply(self, grad):
        if not self._saved:
            return wrap(xp.zeros_like(grad._data)),  # (PyTorch's zeros, not grad * 0: NaN at inf)
        return sgn_backward(self.saved_tensors[0], grad),  # (a complex input: sgn is z / |z|)


class Positive(Op):
    """positive(input): input itself (``+t``); refused for bool, as PyTorch."""
    op = 'positive'
    operators = ('__pos__',)
    __slots__ = ()

    def forward(input):
        try:
            if input._data.dtype.kind == 'b':
                raise RuntimeError('The `+` operator, on a bool tensor is not supported.')
            return input
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Deg2Rad(Op):
    """deg2rad(input, *, out=None): degrees to radians."""
    op, node = 'deg2rad', 'Deg2RadBackward0'
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input):
        x = float_dtype_for(input._data)
        return record(x * x.dtype.type(math.pi / 180), Deg2Rad, (input,))[0]

    def apply(self, grad):
        return grad * (math.pi / 180),


class Rad2Deg(Op):
    """rad2deg(input, *, out=None): radians to degrees."""
    op, node = 'rad2deg', 'Rad2DegBackward0'
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input):
        x = float_dtype_for(input._data)
        return record(x * x.dtype.type(180 / math.pi), Rad2Deg, (input,))[0]

    def apply(self, grad):
        return grad * (180 / math.pi),
