"""Rounding, integer division and remainders: floor, ceil, round, trunc, frac, div with a
rounding mode, fmod, remainder, floor_divide.

These functions are piecewise constant (or piecewise identity), so their derivatives are
zeros (or the gradient itself) almost everywhere, as PyTorch defines them. Each op is declared
once (``_op.Op``); the step functions keep their input's dtype (out= of that dtype, SAME), the
divisions and remainders promote (CAST).
"""
from .. import backend
from .._arg_parser import Overloads, is_number
from ._op import CAST, NO_GRAD_CAST, SAME, Op
from ._util import (NotImplementedNode, _unrounded, binary_operands, broadcast_error, not_a_tensor, on_gpu,
                    operator_refusal, ops, record, refused, sum_to, wrap, xp)
from ..autograd.graph import _wrapped_number, elementwise_jvp
from ..tensor import Tensor


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _type_label(arr):
    return {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'int64': 'Long', 'int32': 'Int',
            'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool', 'complex64': 'ComplexFloat',
            'complex128': 'ComplexDouble'}[arr.dtype.name]


class _ZeroGrad(Op):
    """The derivative of a step function: zeros shaped like the input (zeros_like(grad), as
    PyTorch: not grad * 0, which is NaN where grad is infinite)."""
    __slots__ = ()

    def apply(self, grad):
        return wrap(xp.zeros_like(grad._data)),

    jvp = elementwise_jvp  # (zero tangents, shaped as the tangent)


def _step(input, np_fn, node_cls, kernel):
    data = input._data
    if data.dtype.kind == 'b':
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if data.dtype.kind in 'iu':  # integers are already whole: PyTorch returns a copy
        return record(data.copy(), node_cls, (input,))[0]
    if data.dtype.kind == 'c':
        raise refused(kernel.split('_')[0], data)
    return record(np_fn(data), node_cls, (input,))[0]


class _Step(_ZeroGrad):
    """A step function of one tensor: ``leafgrad.<op>`` (out= of the input's dtype), the method
    and the in-place variants."""
    __slots__ = ()
    out = SAME
    inplace = inplace_function = True


class Floor(_Step):
    """floor(input, *, out=None)."""
    op, node = 'floor', 'FloorBackward0'

    def forward(input):
        return _step(input, xp.floor, Floor, 'floor_vml_cpu')


class Ceil(_Step):
    """ceil(input, *, out=None)."""
    op, node = 'ceil', 'CeilBackward0'

    def forward(input):
        return _step(input, xp.ceil, Ceil, 'ceil_vml_cpu')


class Trunc(_Step):
    """trunc(input, *, out=None) (also fix)."""
    op, node, aliases = 'trunc', 'TruncBackward0', ('fix',)

    def forward(input):
        return _step(input, xp.trunc, Trunc, 'trunc_vml_cpu')


class RoundBackward1(_ZeroGrad):
    """round(decimals=d)."""
    node = 'RoundBackward1'
    __slots__ = ()


class Round(_Step):
    """round(input, *, decimals=0, out=None): half to even, as PyTorch."""
    op, node = 'round', 'RoundBackward0'

    def forward(input, *, decimals=0):
        data = input._data
        if decimals == 0:
            if data.dtype.kind in 'bc':
                raise NotImplementedError(f'"round_vml_cpu" not implemented for \'{_type_label(data)}\'')
            out = data.copy() if data.dtype.kind in 'iu' else xp.round(data)  # half to even, as PyTorch
            return record(out, Round, (input,))[0]
        if data.dtype.kind not in 'fV':
            raise NotImplementedError(f'"round_cpu" not implemented for \'{_type_label(data)}\'')
        return record(xp.round(data, decimals).astype(data.dtype, copy=False), RoundBackward1, (input,))[0]


class Frac(_Step):
    """frac(input, *, out=None): ``input - trunc(input)``, whose derivative is 1."""
    op, node = 'frac', 'FracBackward0'

    def forward(input):
        data = input._data
        if data.dtype.kind not in 'fV':
            raise NotImplementedError(f'"frac_cpu" not implemented for \'{_type_label(data)}\'')
        return record(data - xp.trunc(data), Frac, (input,))[0]

    def apply(self, grad):
        return grad,

    jvp = elementwise_jvp


# ---- division with a rounding mode -----------------------------------------------------------

class DivBackward2(Op):
    """div(rounding_mode='trunc'|'floor'): a step function of both operands."""
    node = 'DivBackward2'
    __slots__ = ('self_shape', 'other_shape', 'operands', 'rounding_mode')
    saved_state = ('operands',)  # unused by the zero derivative, but PyTorch saves them
    saved = ('other=saved_other', 'rounding_mode=rounding_mode', 'self=saved_self')

    @property
    def saved_other(self):  # (a number divisor: the 0-dim tensor PyTorch wraps it in)
        other = self.operands[-1]
        return other if isinstance(other, Tensor) else _wrapped_number(other)

    @property
    def saved_self(self):  # (not kept beside a number divisor, as PyTorch's)
        return self.operands[0] if isinstance(self.operands[-1], Tensor) and len(self.operands) > 1 else None

    def apply(self, grad):
        # (zeros, as PyTorch: not grad * 0, which is NaN where the gradient is not finite)
        zeros = lambda shape: wrap(xp.zeros(shape, dtype=grad._data.dtype, like=grad._data))  # noqa: E731
        ga = zeros(self.self_shape) if self.next_functions[0][0] is not None else None
        gb = None
        if len(self.next_functions) > 1 and self.next_functions[1][0] is not None:
            gb = zeros(self.other_shape)
        return ga, gb

    def jvp(self, tangents, output):  # a step function: a zero tangent, as PyTorch's
        return wrap(xp.zeros(output._data.shape, dtype=output._data.dtype, like=output._data))


def _divides_something(x, y):
    """An integer division by zero is refused only where PyTorch's kernel runs: not on an empty
    result, nor on shapes that do not broadcast (their error comes first)."""
    try:
        return 0 not in xp.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False


def _int_operands(x, y, kernel):
    x, y = xp.asarray(x), xp.asarray(y)
    if x.dtype.kind == 'c' or y.dtype.kind == 'c':
        raise refused(kernel, x if x.dtype.kind == 'c' else y)
    if x.dtype.kind == 'b' and y.dtype.kind == 'b':  # (no kernel of PyTorch's divides bools)
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if x.dtype.kind in 'biu' and y.dtype.kind in 'biu':
        if (y == 0).any() and _divides_something(x, y):
            raise RuntimeError('ZeroDivisionError')
        return True
    return False


def _result_dtype(input, other):
    return backend.result_type(input, other).np


def _arrays(input, other):
    """Both operands as arrays of PyTorch's result dtype (so integer division stays integral)."""
    x, y = binary_operands(input, other)
    dt = _result_dtype(input, other)
    like = (input if isinstance(input, Tensor) else other)._data
    if type(like) is not xp.ndarray and on_gpu(like):  # (a number operand on the tensor's GPU)
        return xp.asarray(x, like=like).astype(dt, copy=False), xp.asarray(y, like=like).astype(dt, copy=False)
    return xp.asarray(x).astype(dt, copy=False), xp.asarray(y).astype(dt, copy=False)


def _trunc_divide(x, y):
    if x.dtype.kind in 'biu':
        q = xp.floor_divide(x, y)
        # floor and trunc differ where the remainder is non-zero and the signs differ
        return q + ((xp.remainder(x, y) != 0) & ((x < 0) != (y < 0)))
    with xp.errstate(divide='ignore', invalid='ignore'):
        return xp.trunc(x / y)


def _floor_divide(x, y):
    with xp.errstate(divide='ignore', invalid='ignore'):
        if x.dtype.kind == 'b':
            x, y = x.astype(xp.int64), y.astype(xp.int64)
        return xp.floor_divide(x, y)


def _division_operands(input, other, kernel='div_floor_cpu'):
    x, y = _arrays(input, other)
    _int_operands(x, y, kernel)
    if x.dtype.kind == 'V' or x.dtype.char == 'e':  # bfloat16, float16: in float32, a scalar operand
        # unrounded (as div), rounded once
        sx, sy = _unrounded(input), _unrounded(other)
        x = x.astype(xp.float32) if sx is None else sx
        y = y.astype(xp.float32) if sy is None else sy
    return x, y


def div_rounded(input, other, rounding_mode):
    if rounding_mode not in ('trunc', 'floor'):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    x, y = _division_operands(input, other, f'div_{rounding_mode}_cpu')
    try:
        data = _trunc_divide(x, y) if rounding_mode == 'trunc' else _floor_divide(x, y)
    except ValueError:
        raise broadcast_error(input, other) from None
    data = xp.asarray(data).astype(_result_dtype(input, other), copy=False)
    inputs = (input, other) if isinstance(input, Tensor) else (other,)
    result, node = record(data, DivBackward2, inputs)
    if node is not None:
        node.self_shape, node.other_shape, node.operands = _shape(inputs[0]), _shape(inputs[-1]), inputs
        node.rounding_mode = rounding_mode
    return result


ops.div_rounded = div_rounded  # (div with a rounding_mode, which reaches it through ops)


class FloorDivide(Op):
    """floor_divide(input, other, *, out=None): PyTorch gives it no derivative."""
    op, out = 'floor_divide', NO_GRAD_CAST  # (PyTorch gives it no derivative)
    operators, reflected_operators, inplace_operators = ('__floordiv__',), ('__rfloordiv__',), ('__ifloordiv__',)
    inplace = True
    operands = (Overloads('floor_divide', '(Tensor input, Tensor other, *, Tensor out = None)',
                          '(Tensor input, Number other)'),)
    __slots__ = ()

    def forward(input, other):
        try:
            x, y = _division_operands(input, other)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            return operator_refusal()
        try:
            data = xp.asarray(_floor_divide(x, y)).astype(_result_dtype(input, other), copy=False)
        except ValueError:
            raise broadcast_error(input, other) from None
        result, node = record(data, NotImplementedNode, (input, other))
        if node is not None:
            node.op_name = 'floor_divide'
        return result


# ---- remainders ----------------------------------------------------------------------------

class FmodBackward0(Op):
    """fmod(tensor, scalar): self's derivative is 1."""
    node = 'FmodBackward0'
    __slots__ = ()

    def apply(self, grad):
        return grad,


class FmodBackward1(Op):
    """fmod(a, b) = a - b * trunc(a / b)."""
    node, saved = 'FmodBackward1', ('self', 'other')
    __slots__ = ('self_shape', 'other_shape')

    def apply(self, grad):
        ga = sum_to(grad, self.self_shape) if self.next_functions[0][0] is not None else None
        gb = None
        if self.next_functions[1][0] is not None:
            a, b = self.saved_tensors
            gb = sum_to(-grad * div_rounded(a, b, 'trunc'), self.other_shape)
        return ga, gb


class RemainderBackward0(FmodBackward0):
    node = 'RemainderBackward0'
    __slots__ = ()


class RemainderBackward1(Op):
    """remainder(a, b) = a - b * floor(a / b)."""
    node, saved = 'RemainderBackward1', ('self', 'other')
    __slots__ = ('self_shape', 'other_shape')

    def apply(self, grad):
        ga = sum_to(grad, self.self_shape) if self.next_functions[0][0] is not None else None
        gb = None
        if self.next_functions[1][0] is not None:
            a, b = self.saved_tensors
            gb = sum_to(-grad * div_rounded(a, b, 'floor'), self.other_shape)
        return ga, gb


def _mod(input, other, np_fn, scalar_node, tensor_node, kernel, number_first=False):
    x, y = _arrays(input, other)
    try:  # (PyTorch's order: the shapes, the kernel's dtype, then a zero divisor)
        xp.broadcast_shapes(xp.shape(x), xp.shape(y))
    except ValueError:
        raise broadcast_error(input, other) from None
    if x.dtype == bool:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    _int_operands(x, y, kernel)
    try:
        with xp.errstate(divide='ignore', invalid='ignore'):
            data = xp.asarray(np_fn(x, y)).astype(_result_dtype(input, other), copy=False)
    except ValueError:
        raise broadcast_error(input, other) from None
    if not isinstance(other, Tensor):
        return record(data, scalar_node, (input,))[0]
    if number_first:  # (number % tensor: PyTorch's remainder.Scalar_Tensor has no derivative)
        result, node = record(data, NotImplementedNode, (other,))
        if node is not None:
            node.op_name = 'remainder'
        return result
    result, node = record(data, tensor_node, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = _shape(input), _shape(other)
        if node.next_functions[1][0] is not None:  # only other's gradient needs them
            node.save(input, other)
    return result


def _remainder(x, y):
    """PyTorch's remainder: fmod, moved by the divisor where the signs differ (so that a zero
    keeps fmod's sign, where NumPy's remainder gives the divisor's)."""
    if x.dtype.kind != 'f':
        return xp.remainder(x, y)
    mod = xp.fmod(x, y)
    return xp.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod)


class Fmod(Op):
    """fmod(input, other, *, out=None): the remainder of truncated division (C's fmod)."""
    op, out = 'fmod', CAST
    inplace = True
    refusals = Overloads('fmod', '(Tensor input, Tensor other, *, Tensor out = None)',
                         '(Tensor input, Number other, *, Tensor out = None)')
    __slots__ = ()

    def forward(input, other):
        if not isinstance(input, Tensor):  # (PyTorch's fmod has no number first: refusals lists its overloads)
            raise not_a_tensor('fmod', 'input', input, 1)
        return _mod(input, other, xp.fmod, FmodBackward0, FmodBackward1, 'fmod_cpu')


class Remainder(Op):
    """remainder(input, other, *, out=None): the remainder of floor division (Python's %)."""
    op, out = 'remainder', CAST
    operators, reflected_operators, inplace_operators = ('__mod__',), ('__rmod__',), ('__imod__',)
    inplace = True
    refusals = Overloads('remainder', '(Tensor input, Tensor other, *, Tensor out = None)',
                         '(Number self, Tensor other)', '(Tensor input, Number other, *, Tensor out = None)')
    __slots__ = ()

    def forward(input, other):
        number_first = not isinstance(input, Tensor)
        if number_first:  # scalar % tensor
            if not is_number(input) or not isinstance(other, Tensor):  # (a list, two numbers: refusals lists
                # PyTorch's overloads)
                raise not_a_tensor('remainder', 'input', input, 1)
            input = ops.tensor(input, dtype=backend.result_type(input, other))
        try:
            return _mod(input, other, _remainder, RemainderBackward0, RemainderBackward1, 'remainder_cpu',
                        number_first)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            return operator_refusal()
