"""Elementwise ops: arithmetic, the core unary functions, where and the comparisons, each
declared once (``_op.Op``) with its derivative beside its forward.

Derivatives are written with leafgrad ops on tensors, so that ``create_graph=True`` records
them; under a plain ``backward()`` grad mode is off and those ops take their fast path.
A derivative reaches another op through ``ops`` (late-bound); the ops of this family it
reaches by their module names.
"""
import cmath
import math
import sys

from .. import backend
from .._arg_parser import Overloads, is_number
from ._inplace import inplace as _run_inplace, inplace_binary
from ._op import CAST, SAME, Op, check_out, fill_out, scalar_name, warn_once
from ._op import __file__ as _op_file
from ._util import (OPERANDS, _one, _unrounded, binary_operands, broadcast_error, c_order, divided, float_dtype_for,
                    fused_alpha, is_operand, iterated, number_operand, operator_refusal, opmath, ops, record, refused,
                    saved_output, sigmoid_array, state, sum_to, times, unary, wrap, xp)
from ..autograd.graph import SavedOutput, _Empty, elementwise_jvp, self_recording, unshared
from ..tensor import Tensor, fitted_scalar
from .._arg_parser import METHOD_CODES, refuse_arguments


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _tangent_sum(ta, tb, a_shape, b_shape):
    """The tangent of a sum of two broadcast operands (either tangent may be None)."""
    shape = xp.broadcast_shapes(a_shape, b_shape)
    out = ta if tb is None else tb if ta is None else ta + tb
    return out if out._data.shape == shape else out.expand(shape)


class _BinaryNode(Op):
    """Binary ops remember their operands' shapes to undo broadcasting."""
    __slots__ = ('self_shape', 'other_shape', 'other_scalar', 'alpha')
    saved_alpha = property(lambda self: getattr(self, 'alpha', 1))  # (add's and sub's _saved_alpha)


def _release_even_a_scalar(node):
    """Node.release for mul and div, whose Python scalar operand PyTorch saves as a tensor: the
    node is released even when it saved no tensor, and its derivative then raises."""
    node._saved = None


def _release_mul(node):
    """Node.release for mul: as ``_release_even_a_scalar``, except for an inert node (no input
    has an edge: an op on a view made under no_grad), which saved nothing, as PyTorch guards both
    of mul's saves, and stays usable for a second backward."""
    if not node._inert:
        node._saved = None


def _alpha(name, x, y, alpha):
    """add's or sub's ``alpha`` (one given, other than 1) as a Python number, so that a NumPy
    number or a 0-dim tensor does not promote the result as NumPy would; PyTorch's errors for
    what is no number or does not suit the operands' dtype."""
    if type(alpha) not in (int, float, bool, complex):
        if not is_number(alpha):
            raise TypeError(f"{name}(): argument 'alpha' must be Number, not {backend.type_name(alpha)}")
        alpha = alpha.item()
    kind = xp.asarray(x).dtype.kind
    if isinstance(alpha, bool) and kind != 'b':
        raise RuntimeError('Boolean alpha only supported for Boolean results.')
    if isinstance(alpha, float) and kind in 'biu':
        raise RuntimeError('For integral input tensors, argument alpha must not be a floating point number.')
    if isinstance(alpha, complex) and kind != 'c' and xp.asarray(y).dtype.kind != 'c':
        raise RuntimeError('For non-complex input tensors, argument alpha must not be a complex number.')
    return alpha


def _is_bool(x):
    return x.__class__ is bool or (isinstance(x, Tensor) and x._data.dtype.kind == 'b')


def _refuse_bool_subtraction(a, b):
    """PyTorch's errors for ``-`` with a bool operand (checked only where the dtypes differ:
    NumPy itself refuses two bool arrays)."""
    if _is_bool(a) or _is_bool(b):
        if _is_bool(a) and _is_bool(b):  # (a Python bool beside a bool tensor counts as one)
            raise RuntimeError('Subtraction, the `-` operator, with two bool tensors is not supported. '
                               'Use the `^` or `logical_xor()` operator instead.')
        raise RuntimeError('Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying '
                           'to invert a mask, use the `~` or `logical_not()` operator instead.')


def _alpha_first(alpha, rest, keyword_alpha, code):
    """PyTorch's deprecated overload of add and sub, alpha first (``x.add_(-lr, g)``, old
    optimizers' and tutorials' form): ``(other, alpha)`` with PyTorch's warning, once a process as
    its parser's; for any other extra positional argument, the TypeError PyTorch's parser raises
    (positions counted after self for a method)."""
    name = code.co_name
    caller = sys._getframe(2).f_code  # (the function is out='s wrapper around the forward; the method, the forward)
    method = name.endswith('_') or id(code) in METHOD_CODES or caller.co_filename != _op_file
    if not method:
        name = caller.co_name  # (an alias's wrapper: the alias, which has no such overload)
    if name in ('add', 'sub', 'add_', 'sub_') and len(rest) == 1 and keyword_alpha == 1 and is_number(alpha) and \
            (isinstance(rest[0], Tensor) or is_number(rest[0])):
        if method:
            old, new = f'{name}(Number alpha, Tensor other)', f'{name}(Tensor other, *, Number alpha = 1)'
        else:
            old = f'{name}(Tensor input, Number alpha, Tensor other, *, Tensor out = None)'
            new = f'{name}(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)'
        warn_once(f'This overload of {name} is deprecated:\n\t{old}\nConsider using one of the following '
                  f'signatures instead:\n\t{new}', key='deprecated overload')
        return rest[0], alpha
    taken = 1 if method else 2
    raise TypeError(f"{name}() takes {taken} positional argument{'s' * (taken > 1)} but {taken + len(rest)} were "
                    'given')


# ---- add, sub ----------------------------------------------------------------------------

class Add(_BinaryNode):
    """add(input, other, *, alpha=1, out=None): ``input + alpha * other``."""
    op, node = 'add', 'AddBackward0'
    saved = ('alpha=saved_alpha',)
    operators = ('__add__', '__radd__')  # (addition commutes exactly: number + t is t + number)
    inplace_operators = ('__iadd__',)
    out = CAST
    # (PyTorch's parser takes a number for add's, sub's, mul's and div's Tensor operands, where it
    # lists the overloads of their aliases)
    operands = (Overloads('add', '(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)', numbers=True),)
    __slots__ = ()

    def forward(input, other, *alpha_first, alpha=1):
        if alpha_first:
            other, alpha = _alpha_first(other, alpha_first, alpha, sys._getframe().f_code)
        try:
            x, y = binary_operands(input, other)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            if not isinstance(input, Tensor):  # (a number: PyTorch's 0-dim tensor; else its TypeError)
                return ops.add(number_operand('add', input, other), other, alpha=alpha)
            return operator_refusal()
        if type(alpha) is not int or alpha != 1:
            alpha = _alpha('add', x, y, alpha)
        try:
            data = fused_alpha(x, y, alpha, 1) if alpha != 1 else None
            if data is None:
                data = x + y if alpha == 1 else x + y * alpha
        except ValueError:
            raise broadcast_error(input, other) from None
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Add, (input, other))
        if node is not None:
            node.self_shape, node.other_shape, node.alpha = _shape(input), _shape(other), alpha
        return result

    def inplace(self, other, *alpha_first, alpha=1):
        if alpha_first:
            other, alpha = _alpha_first(other, alpha_first, alpha, sys._getframe().f_code)
        if type(alpha) is not float and type(alpha) is not int:  # (an optimizer's float: nothing to check)
            alpha = _alpha('add_', self._data, other._data if isinstance(other, Tensor) else other, alpha)
        return inplace_binary(self, other, xp.add, ops.add, alpha)

    def jvp(self, tangents):
        ta, tb = tangents
        if tb is not None and self.alpha != 1:
            tb = tb * self.alpha
        return _tangent_sum(ta, tb, self.self_shape, self.other_shape)

    def apply(self, grad):
        a = sum_to(grad, self.self_shape) if self.next_functions[0][0] is not None else None
        b = None
        if self.next_functions[1][0] is not None:
            b = sum_to(grad if self.alpha == 1 else grad * self.alpha, self.other_shape)
        return a, b


class Sub(_BinaryNode):
    """sub(input, other, *, alpha=1, out=None): ``input - alpha * other``."""
    op, node = 'sub', 'SubBackward0'
    saved = ('alpha=saved_alpha',)
    aliases = ('subtract',)
    operators, reflected_operators, inplace_operators = ('__sub__',), ('__rsub__',), ('__isub__',)
    out = CAST
    operands = (Overloads('sub', '(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)', numbers=True),
                Overloads('subtract', '(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)',
                          '(Tensor input, Number other, Number alpha = 1)'))
    __slots__ = ()

    def forward(input, other, *alpha_first, alpha=1):
        if alpha_first:
            other, alpha = _alpha_first(other, alpha_first, alpha, sys._getframe().f_code)
        try:
            x, y = binary_operands(input, other, _refuse_bool_subtraction)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            if not isinstance(input, Tensor):  # (a number: PyTorch's 0-dim tensor; else its TypeError)
                return ops.sub(number_operand('sub', input, other), other, alpha=alpha)
            return operator_refusal()
        if type(alpha) is not int or alpha != 1:
            alpha = _alpha('sub', x, y, alpha)
        try:
            data = fused_alpha(x, y, alpha, -1) if alpha != 1 else None
            if data is None:
                data = x - y if alpha == 1 else x - y * alpha
        except ValueError:
            raise broadcast_error(input, other) from None
        except TypeError:  # (NumPy refuses two bool arrays)
            _refuse_bool_subtraction(input, other)
            raise
        if not isinstance(input, Tensor):  # scalar - tensor
            result, node = record(data, RsubBackward1, (other,))
            if node is not None:
                node.alpha = alpha
            return result
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Sub, (input, other))
        if node is not None:
            node.self_shape, node.other_shape, node.alpha = input._data.shape, _shape(other), alpha
        return result

    def inplace(self, other, *alpha_first, alpha=1):
        if alpha_first:
            other, alpha = _alpha_first(other, alpha_first, alpha, sys._getframe().f_code)
        if type(alpha) is not float and type(alpha) is not int:  # (an optimizer's float: nothing to check)
            alpha = _alpha('sub_', self._data, other._data if isinstance(other, Tensor) else other, alpha)
        return inplace_binary(self, other, xp.subtract, ops.sub, alpha, _refuse_bool_subtraction)

    def jvp(self, tangents):
        ta, tb = tangents
        if tb is not None:
            tb = -tb if self.alpha == 1 else tb * -self.alpha
        return _tangent_sum(ta, tb, self.self_shape, self.other_shape)

    def apply(self, grad):
        a = sum_to(grad, self.self_shape) if self.next_functions[0][0] is not None else None
        b = None
        if self.next_functions[1][0] is not None:
            b = sum_to(-grad if self.alpha == 1 else grad * -self.alpha, self.other_shape)
        return a, b


class RsubBackward1(Op):
    """``scalar - tensor``."""
    node = 'RsubBackward1'
    saved = ('alpha=alpha',)
    __slots__ = ('alpha',)

    def jvp(self, tangents):
        return -tangents[0] if self.alpha == 1 else tangents[0] * -self.alpha

    def apply(self, grad):
        return (-grad if self.alpha == 1 else grad * -self.alpha),


class Rsub(Op):
    """rsub(input, other, *, alpha=1): ``other - alpha * input`` (a function only)."""
    op = 'rsub'
    method = False
    refusals = Overloads('rsub', '(Tensor input, Tensor other, *, Number alpha = 1)',
                         '(Tensor input, Number other, Number alpha = 1)')
    __slots__ = ()

    def forward(input, other, *, alpha=1):
        if not isinstance(input, Tensor):  # (PyTorch's rsub has no number first: refusals lists its overloads)
            raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return sub(other, input, alpha=alpha)


# ---- mul, div ----------------------------------------------------------------------------

class DivBackward1(Op):
    """``tensor / number`` as PyTorch's derivative formulas divide (its div.Scalar: mean's
    gradient under create_graph): one edge; the number is ``_saved_other``."""
    node = 'DivBackward1'
    saved = ('other=other',)
    __slots__ = ('other',)

    jvp = elementwise_jvp  # (a batched tangent, jacfwd's, divided as its physical array)

    def apply(self, grad):
        return div_by_number(grad, self.other),


def div_by_number(input, number):
    """``input / number``, recorded as DivBackward1 (a bfloat16 quotient computed in float32 and
    rounded once, as PyTorch's)."""
    data = input._data
    quotient = data / number if data.dtype.kind != 'V' else (data.astype(xp.float32) / number).astype(data.dtype)
    result, node = record(quotient, DivBackward1, (input,))
    if node is not None:
        node.other = number
    return result


ops.div_by_number = div_by_number  # (the reductions' derivatives reach it through ops)


class MulBackward1(Op):
    """``tensor * number`` as the ops PyTorch composes in C++ multiply (its mul.Scalar): one
    edge; the number is ``_saved_other``."""
    node, saved = 'MulBackward1', ('other=other',)
    __slots__ = ('other',)
    jvp = elementwise_jvp

    def apply(self, grad):
        return grad * self.other,


def mul_by_number(input, number):
    """``input * number``, recorded as MulBackward1."""
    data = input._data
    result, node = record(data * data.dtype.type(number), MulBackward1, (input,))
    if node is not None:
        node.other = number
    return result


ops.mul_by_number = mul_by_number  # (special functions, attention and double backwards reach it through ops)
self_recording.append(div_by_number)  # (a derivative's op: forward over reverse carries tangents through it)


def _16_BITS(dtype):
    return dtype.kind == 'V' or dtype.char == 'e'  # (bfloat16, float16)


def _bf16_by_scalar(ufunc, a, b, data):
    """``ufunc(a, b)`` (multiply or divide) with a bfloat16 or float16 result ``data`` as NumPy
    computed it: PyTorch takes a scalar operand (a Python number or a 0-dim tensor of another
    dtype) unrounded, computes in float32 and rounds once; NumPy rounded the scalar to the 16-bit
    dtype first."""
    sa, sb = _unrounded(a), _unrounded(b)
    if sa is None and sb is None:
        return data
    x = sa if sa is not None else a._data.astype(xp.float32)
    y = sb if sb is not None else b._data.astype(xp.float32)
    return xp.asarray(ufunc(x, y)).astype(data.dtype)


class Mul(_BinaryNode):
    """mul(input, other, *, out=None): the elementwise product."""
    op, node = 'mul', 'MulBackward0'
    aliases = ('multiply',)
    operators = ('__mul__', '__rmul__')  # (multiplication commutes exactly)
    inplace_operators = ('__imul__',)
    saved = ('self', 'other')
    out = CAST
    operands = (Overloads('mul', '(Tensor input, Tensor other, *, Tensor out = None)', numbers=True),
                Overloads('multiply', '(Tensor input, Tensor other, *, Tensor out = None)',
                          '(Tensor input, Number other)'))
    __slots__ = ()
    pack_order = (1, 0)  # other first, as PyTorch
    release = _release_mul

    def forward(input, other):
        try:
            x, y = binary_operands(input, other)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            if not isinstance(input, Tensor):  # (a number: PyTorch's 0-dim tensor; else its TypeError)
                return ops.mul(number_operand('mul', input, other), other)
            return operator_refusal()
        if not isinstance(input, Tensor):
            input, other = other, input  # scalar * tensor: the tensor is "self"
        try:
            data = x * y
        except ValueError:
            raise broadcast_error(input, other) from None
        if (type(other) is not Tensor or y is not other._data or x is not input._data) and _16_BITS(data.dtype):
            data = _bf16_by_scalar(xp.multiply, input, other, data)  # (only where a scalar operand was cast)
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Mul, (input, other))
        if node is not None:
            node.self_shape = input._data.shape
            if isinstance(other, Tensor):
                node.other_shape, node.other_scalar = other._data.shape, None
            else:
                node.other_shape, node.other_scalar = (), other
            # node.save_crosswise(input, other) written out, mul being the commonest recorded op.
            # A Python scalar operand saves nothing (release() still counts it as saved).
            if node.other_scalar is None:
                if node.next_functions[1][0] is None:
                    if node.next_functions[0][0] is not None:  # (neither: an inert node keeps nothing)
                        node.save(_Empty, other)  # self is needed only for other's gradient
                elif node.next_functions[0][0] is None:
                    node.save(input, _Empty)  # and other only for self's
                else:
                    node.save(input, other)
        return result

    def inplace(self, other):
        return inplace_binary(self, other, xp.multiply, ops.mul)

    def jvp(self, tangents):
        ta, tb = tangents
        saved = self.saved_tensors
        out = None
        if ta is not None:
            out = ta * (saved[1] if self.other_scalar is None else self.other_scalar)
        if tb is not None:
            out = tb * saved[0] if out is None else out + tb * saved[0]
        return out

    def apply(self, grad):
        saved = self.saved_tensors
        ga = gb = None
        if self.next_functions[0][0] is not None:
            other = saved[1] if self.other_scalar is None else self.other_scalar
            ga = sum_to(times(grad, other), self.self_shape)
        if self.next_functions[1][0] is not None:
            gb = sum_to(times(grad, saved[0]), self.other_shape)
        return ga, gb

    def complex_apply(self, grad):
        """PyTorch's mul_tensor_backward: ``grad * other.conj()`` (a real factor or number is not
        conjugated)."""
        saved = self.saved_tensors
        ga = gb = None
        if self.next_functions[0][0] is not None:
            other = saved[1] if self.other_scalar is None else self.other_scalar
            ga = sum_to(grad * _conj(other), self.self_shape)
        if self.next_functions[1][0] is not None:
            gb = sum_to(grad * _conj(saved[0]), self.other_shape)
        return ga, gb


def _conj(v):
    """A complex tensor's or number's conjugate; a real one as it is (PyTorch's conj() of a real
    tensor is itself)."""
    if isinstance(v, Tensor):
        return ops.conj(v) if v._data.dtype.kind == 'c' else v
    return v.conjugate() if isinstance(v, complex) else v


def _refuse_rounding_mode(input, other, rounding_mode, code):
    """PyTorch's parser's listing of div's overloads (or an alias's, or the in-place variant's)
    for a ``rounding_mode`` that is no str (None is none given). ``code``: the forward's or the
    in-place variant's, whose name is the one called; the function's is its out= wrapper's."""
    caller = sys._getframe(2).f_code
    name = code.co_name
    method = name.endswith('_') or id(code) in METHOD_CODES or caller.co_filename != _op_file
    if not method:
        name = caller.co_name  # (an alias's wrapper: the alias)
    overloads = OPERANDS[name.rstrip('_')]
    if name.endswith('_'):
        overloads = overloads.named(name)
    args, kwargs = ((other,) if method else (input, other)), {'rounding_mode': rounding_mode}
    out = None if method else sys._getframe(2).f_locals.get('out')  # (the wrapper's out=)
    if out is not None:
        kwargs['out'] = out
    overloads.bind(args, kwargs, method)
    raise overloads.invalid(args, kwargs, method)


class Div(_BinaryNode):
    """div(input, other, *, rounding_mode=None, out=None): true division, or rounded
    (``'trunc'``, ``'floor'``: DivBackward2, in the rounding family)."""
    op, node = 'div', 'DivBackward0'
    aliases = ('divide', 'true_divide')
    operators, reflected_operators, inplace_operators = ('__truediv__',), ('__rtruediv__',), ('__itruediv__',)
    saved = ('self', 'other')
    out = CAST
    operands = (Overloads('div', '(Tensor input, Tensor other, *, Tensor out = None)',
                          '(Tensor input, Tensor other, *, str? rounding_mode, Tensor out = None)',
                          '(Tensor input, Number other, *, str? rounding_mode)', numbers=True),
                Overloads('divide', '(Tensor input, Tensor other, *, Tensor out = None)',
                          '(Tensor input, Tensor other, *, str? rounding_mode, Tensor out = None)',
                          '(Tensor input, Number other)', '(Tensor input, Number other, *, str? rounding_mode)'),
                Overloads('true_divide', '(Tensor input, Tensor other, *, Tensor out = None)',
                          '(Tensor input, Number other)'))
    __slots__ = ()
    pack_order = (1, 0)  # other first, as PyTorch
    release = _release_even_a_scalar

    def forward(input, other, *, rounding_mode=None):
        if rounding_mode is not None:
            if not isinstance(rounding_mode, str):
                _refuse_rounding_mode(input, other, rounding_mode, sys._getframe().f_code)
            if isinstance(input, Tensor) and not is_operand(other):  # (a string, a list: the parser's listing)
                return operator_refusal()
            return ops.div_rounded(input, other, rounding_mode)  # a step function: DivBackward2
        if not isinstance(input, Tensor):
            if not isinstance(other, Tensor):
                return ops.div(number_operand('div', input, other), other)
            return mul(reciprocal(other), input)
        try:
            x, y = binary_operands(input, other)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            return operator_refusal()
        if x.dtype.kind in 'biu' and (not hasattr(y, 'dtype') or y.dtype.kind in 'biu') and not isinstance(y, float):
            # true division of integers gives the default float dtype
            fdt = backend.get_default_dtype().np
            x = x.astype(fdt)
            y = y.astype(fdt) if hasattr(y, 'astype') else y
        try:
            data = x / y
        except ValueError:
            raise broadcast_error(input, other) from None
        if (type(other) is not Tensor or y is not other._data or x is not input._data) and _16_BITS(data.dtype):
            data = _bf16_by_scalar(xp.true_divide, input, other, data)  # (only where a scalar operand was cast)
        result, node = record(iterated(data, x, y) if data.ndim > 1 else data, Div, (input, other))
        if node is not None:
            node.self_shape = input._data.shape
            if isinstance(other, Tensor):
                node.other_shape, node.other_scalar = other._data.shape, None
            else:
                node.other_shape, node.other_scalar = (), other
            if node.other_scalar is not None:
                node.save()
            elif node.next_functions[1][0] is None:
                node.save(_Empty, other)
            else:
                node.save(input, other)
        return result

    def inplace(self, other, *, rounding_mode=None):
        if rounding_mode is not None:
            if not isinstance(rounding_mode, str):
                _refuse_rounding_mode(self, other, rounding_mode, sys._getframe().f_code)
            return _run_inplace(self, lambda s: ops.div(s, other, rounding_mode=rounding_mode), (other,))
        return inplace_binary(self, other, xp.true_divide, ops.div)

    def jvp(self, tangents):
        ta, tb = tangents
        if self.other_scalar is not None:
            return ta / self.other_scalar
        saved = self.saved_tensors
        other = saved[1]
        out = ta / other if ta is not None else None
        if tb is not None:
            d = -tb * saved[0] / (other * other)
            out = d if out is None else out + d
        return out

    def apply(self, grad):
        saved = self.saved_tensors
        ga = gb = None
        if self.other_scalar is not None:
            return sum_to(divided(grad, self.other_scalar), self.self_shape), None
        other = saved[1]
        if self.next_functions[0][0] is not None:
            ga = sum_to(divided(grad, other), self.self_shape)
        if self.next_functions[1][0] is not None:
            gb = sum_to(-grad * (saved[0] / other / other), self.other_shape)  # (PyTorch's formula, op for op)
        return ga, gb

    def complex_apply(self, grad):
        """PyTorch's div_tensor_self_backward and div_tensor_other_backward: ``grad / other.conj()``,
        ``-grad * ((self / other) / other).conj()``."""
        saved = self.saved_tensors
        if self.other_scalar is not None:
            return sum_to(grad / _conj(self.other_scalar), self.self_shape), None
        ga = gb = None
        other = saved[1]
        if self.next_functions[0][0] is not None:
            ga = sum_to(grad / _conj(other), self.self_shape)
        if self.next_functions[1][0] is not None:
            gb = sum_to(-grad * _conj(saved[0] / other / other), self.other_shape)
        return ga, gb


class Reciprocal(Op):
    """reciprocal(input, *, out=None): ``1 / input``."""
    op, node = 'reciprocal', 'ReciprocalBackward0'
    saved = ('result',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def array_forward(x):
        return 1 / x

    def apply(self, grad):
        (result,) = self.saved_tensors
        return -grad * (result * result),  # (PyTorch's formula, op for op: a MulBackward0 of the negated grad)

    def complex_apply(self, grad):
        (result,) = self.saved_tensors
        return -grad * _conj(result * result),


# ---- pow ---------------------------------------------------------------------------------

class PowBackward0(Op):
    """``tensor ** scalar``."""
    node = 'PowBackward0'
    saved = ('self', 'exponent=exponent')
    __slots__ = ('exponent',)
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (base,) = self.saved_tensors
        p = self.exponent
        if p == 0:  # zeros_like(self), as PyTorch's pow_backward (not grad * 0: NaN for an infinite grad)
            return wrap(xp.zeros(base._data.shape, dtype=base._data.dtype, like=base._data)),
        if p == 2:
            return grad * (base * 2),
        return grad * (pow(base, p - 1) * p),


class PowBackward1(Op):
    """``tensor ** tensor``."""
    node = 'PowBackward1'
    saved = ('self', 'exponent', 'result')
    pack_order = (1, 0, 2)  # exponent, self, result, as PyTorch
    __slots__ = ('self_shape', 'other_shape')

    def jvp(self, tangents):
        ta, tb = tangents
        base, exponent, result = self.saved_tensors
        out = None
        if ta is not None:
            out = where(exponent == 0, 0.0, ta * exponent * pow(base, exponent - 1))
        if tb is not None:
            d = tb * result * log(base)
            d = where(base == 0, where(_real_nonnegative(exponent), 0.0, d), d)
            out = d if out is None else out + d
        return out

    def apply(self, grad):
        base, exponent, result = self.saved_tensors
        ga = gb = None
        if self.next_functions[0][0] is not None:
            # where the exponent is 0 the gradient is 0 (also at base 0)
            g = grad * exponent * pow(base, exponent - 1)
            ga = sum_to(where(exponent == 0, 0.0, g), self.self_shape)
        if self.next_functions[1][0] is not None:
            g = grad * result * log(base)
            gb = sum_to(where(base == 0, where(_real_nonnegative(exponent), 0.0, g), g), self.other_shape)
        return ga, gb


class PowBackward2(Op):
    """``scalar ** tensor``."""
    node = 'PowBackward2'
    saved = ('exponent', 'result', 'self=base')
    __slots__ = ('base',)
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        exponent, result = self.saved_tensors
        if self.base == 0:
            # PyTorch's pow_backward_exponent at base 0: 0 where the exponent is >= 0 (a real one),
            # else result * log(0) (-inf where result is inf)
            e = exponent._data
            finite = ((e.imag == 0) & (e.real >= 0)) if e.dtype.kind == 'c' else (e >= 0)
            return grad * where(wrap(finite), 0.0, result * -math.inf),
        base = self.base
        if isinstance(base, complex) or exponent._data.dtype.kind == 'c':
            return grad * result * cmath.log(base),
        return grad * result * (math.log(base) if base >= 0 else math.nan),  # (a negative base: NaN, as PyTorch's)


def _real_nonnegative(exponent):
    """Where the exponent is a real number >= 0 (pow's gradient is 0 there at base 0)."""
    if exponent._data.dtype.kind == 'c':
        e = exponent._data
        return wrap((e.imag == 0) & (e.real >= 0))
    return exponent >= 0


def _int_power(x, y):
    """Integer powers with integer exponents, negative ones as PyTorch: 1 and -1 keep their
    magnitude, every other base gives 0 (NumPy refuses negative integer exponents)."""
    negative = y < 0
    if not negative.any():
        return xp.power(x, y)
    base = xp.broadcast_to(x, xp.broadcast_shapes(x.shape, y.shape))
    small = xp.where(base == 1, 1, xp.where(base == -1, xp.where(y % 2 == 0, 1, -1), 0)).astype(x.dtype)
    return xp.where(negative, small, xp.power(x, xp.abs(y)))


def _refuse_bool_power(x, y):
    """PyTorch has no pow kernel for bool (a bool tensor to a bool tensor's power, or True to one)."""
    if xp.asarray(x).dtype.kind == 'b' and xp.asarray(y).dtype.kind == 'b':
        raise NotImplementedError('"pow" not implemented for \'Bool\'')


class Pow(Op):
    """pow(input, exponent, *, out=None): a tensor to a number's or a tensor's power
    (PowBackward0/1), or a number to a tensor's (PowBackward2)."""
    op = 'pow'
    operators, reflected_operators, inplace_operators = ('__pow__',), ('__rpow__',), ('__ipow__',)
    out = CAST
    operands = (Overloads('pow', '(Tensor input, Tensor exponent, *, Tensor out = None)',
                          '(Number self, Tensor exponent, *, Tensor out = None)',
                          '(Tensor input, Number exponent, *, Tensor out = None)'),)
    __slots__ = ()

    def forward(input, exponent):
        if not isinstance(input, Tensor):
            x, y = binary_operands(input, exponent)
            _refuse_bool_power(x, y)
            if y.dtype.kind not in 'fV' and isinstance(input, float):
                y = float_dtype_for(y)
            data = _int_power(xp.asarray(x), y) if y.dtype.kind in 'iu' else xp.power(x, y)
            result, node = record(c_order(data), PowBackward2, (exponent,))
            if node is not None:
                node.base = input
                node.save(exponent, saved_output(result))
            return result
        if isinstance(exponent, Tensor):
            x, y = binary_operands(input, exponent)
            _refuse_bool_power(x, y)
            try:
                data = _int_power(x, y) if x.dtype.kind in 'iu' else xp.power(x, y)
            except ValueError:
                raise broadcast_error(input, exponent) from None
            result, node = record(iterated(data, x, y) if data.ndim > 1 else data, PowBackward1, (input, exponent))
            if node is not None:
                node.self_shape, node.other_shape = input._data.shape, exponent._data.shape
                node.save(input, exponent, saved_output(result))
            return result
        try:
            x, y = binary_operands(input, exponent)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            return operator_refusal()
        if x.dtype.kind in 'iu' and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError('Integers to negative integer powers are not allowed.')
        # PyTorch's kernel computes these exponents as products, roots and reciprocals (their
        # rounding, and 1 / sqrt(-0.0) = -inf where pow(-0.0, -0.5) = inf); bfloat16 rounds each step
        # (its -0.5 through ml_dtypes' power: within one rounding of PyTorch's)
        if y == 2:
            data = x * x
        elif y == 1:
            data = x.copy()
        elif y == 0.5:
            data = xp.sqrt(x)
        elif y == 3:
            data = x * x * x
        elif y == -0.5 or y == -1 or y == -2:
            root = xp.sqrt(x) if y == -0.5 else x if y == -1 else x * x
            exact = x.dtype.kind == 'f' or (x.dtype.kind == 'V' and y != -0.5)
            data = xp.true_divide(root.dtype.type(1), root) if exact else xp.power(x, y)
        else:
            data = xp.power(x, y)
        result, node = record(data, PowBackward0, (input,))
        if node is not None:
            node.exponent = exponent
            node.save(input)
        return result

    def inplace(self, exponent):
        return _run_inplace(self, lambda s: ops.pow(s, exponent), (exponent,))


class Square(Op):
    """square(input, *, out=None): ``input ** 2``, recorded as pow (PowBackward0), as PyTorch."""
    op = 'square'
    out, out_name = CAST, 'pow'  # (PyTorch's square is pow)
    inplace = inplace_function = True
    __slots__ = ()

    def forward(input):
        try:
            return ops.pow(input, 2)
        except TypeError:  # (no tensor: PyTorch's parser's TypeError)
            if not isinstance(input, Tensor):
                raise TypeError(f"square(): argument 'input' (position 1) must be Tensor, not {backend.type_name(input)}")
            raise


# ---- unary functions ---------------------------------------------------------------------

class Neg(Op):
    """neg(input, *, out=None): ``-input``."""
    op, node = 'neg', 'NegBackward0'
    aliases = ('negative',)
    operators = ('__neg__',)
    out = SAME
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input):
        if input._data.dtype.kind == 'b':
            raise RuntimeError('Negation, the `-` operator, on a bool tensor is not supported. If you are '
                               'trying to invert a mask, use the `~` or `logical_not()` operator instead.')
        return record(-input._data, Neg, (input,))[0]

    def apply(self, grad):
        return -grad,


class _OutputDerivative(Op):
    """A one-input op whose derivative is a function of the gradient and of the op's own
    output: ``on_arrays(grad, result)`` in a plain backward (nothing is recorded, so no tensor
    is needed), ``recorded(grad, result)``, written with leafgrad ops, under create_graph."""
    __slots__ = ()

    def apply(self, grad):
        if not state.grad_enabled:
            # saved_arrays() written out for the one saved tensor, checked as it checks it
            # (versions None: packed by saved-tensor hooks; saved None: released, and it raises)
            versions, saved = self._saved_versions, self._saved
            if versions is not None and saved:
                r = saved[0]
                if r._version_counter[0] == versions[0] and r._detached_from is None:
                    return wrap(self.on_arrays(grad._data, r.data if type(r) is SavedOutput else r._data)),
            (r,) = self.saved_arrays()
            return wrap(self.on_arrays(grad._data, r)),
        (result,) = self.saved_tensors
        return self.recorded(grad, result),


class Exp(_OutputDerivative):
    """exp(input, *, out=None)."""
    op, node = 'exp', 'ExpBackward0'
    saved = ('result',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)
    array_forward = staticmethod(xp.exp)
    on_arrays, recorded = staticmethod(xp.multiply), staticmethod(times)


def _log_array(x):
    with xp.errstate(divide='ignore', invalid='ignore'):
        return xp.log(x)


class Log(Op):
    """log(input, *, out=None): the natural logarithm."""
    op, node = 'log', 'LogBackward0'
    saved = ('self',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)
    array_forward = staticmethod(_log_array)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / x,


def _sqrt_array(x):
    with xp.errstate(invalid='ignore'):
        return xp.sqrt(x)


class Sqrt(Op):
    """sqrt(input, *, out=None)."""
    op, node = 'sqrt', 'SqrtBackward0'
    saved = ('result',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)
    array_forward = staticmethod(_sqrt_array)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad / (result * 2),


class Abs(Op):
    """abs(input, *, out=None)."""
    op, node = 'abs', 'AbsBackward0'
    aliases = ('absolute',)
    operators = ('__abs__',)
    saved = ('self',)
    out = SAME
    inplace = True
    inplace_function = ('abs_',)  # (torch.abs_, but no torch.absolute_)
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input):
        if input._data.dtype.kind == 'b':
            raise NotImplementedError('"abs_cpu" not implemented for \'Bool\'')
        return unary(Abs, input, xp.abs(input._data), save='input')

    def apply(self, grad):
        (x,) = self.saved_tensors
        if x._data.dtype.kind == 'c':
            return grad * ops.sgn(x),  # z / |z|, whose own derivative is not zero
        return grad * sign(x),


class Sign(Op):
    """sign(input, *, out=None): piecewise constant, its gradient zero everywhere."""
    op, node = 'sign', 'SignBackward0'
    out = SAME
    inplace = True
    __slots__ = ()

    def forward(input):
        data = input._data
        if data.dtype.kind in 'fV':  # PyTorch's (0 < x) - (x < 0): 0 at NaN, where NumPy's sign gives NaN
            out = (data > 0).astype(data.dtype) - (data < 0).astype(data.dtype)
        elif data.dtype.kind == 'c':
            raise refused('sign', data)
        else:
            out = data.copy() if data.dtype.kind == 'b' else xp.sign(data)
        result, node = record(out, Sign, (input,))
        return result

    def apply(self, grad):
        return wrap(xp.zeros_like(grad._data)),  # (zeros_like(grad), as PyTorch: not grad * 0)

    jvp = elementwise_jvp  # (zero tangents)


class TanhBackwardBackward0(Op):
    """tanh_backward's own derivative (create_graph through tanh)."""
    node = 'TanhBackwardBackward0'
    __slots__ = ()

    def jvp(self, tangents):  # d[grad * (1 - r^2)] = t_grad * (1 - r^2) - grad * 2 r t_r
        grad, result = self.saved_tensors
        t_grad, t_result = tangents
        out = t_grad * (1 - result * result) if t_grad is not None else None
        if t_result is not None:
            d = grad * result * t_result * -2
            out = d if out is None else out + d
        return out

    def apply(self, gg):
        grad, result = self.saved_tensors
        g_grad = tanh_backward(gg, result) if self.next_functions[0][0] is not None else None
        g_result = gg * grad * result * -2 if self.next_functions[1][0] is not None else None
        return g_grad, g_result


def _one_minus(a):
    return _one(a) - a


def _tanh_derivative(g, r):
    if g.dtype.kind == 'V':  # bfloat16: in float32, rounded once (PyTorch's tanh_backward)
        return _tanh_derivative(opmath(g), opmath(r)).astype(g.dtype)
    return g * _one_minus(r * r)


def tanh_backward(grad, result):
    """``grad * (1 - result**2)`` as one op (PyTorch's tanh_backward), from tanh's own output."""
    out, node = record(_tanh_derivative(grad._data, result._data), TanhBackwardBackward0, (grad, result))
    if node is not None:
        node.save(grad, result)
    return out


class Tanh(_OutputDerivative):
    """tanh(input, *, out=None)."""
    op, node = 'tanh', 'TanhBackward0'
    saved = ('result',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)
    array_forward = staticmethod(xp.tanh)
    on_arrays = staticmethod(_tanh_derivative)
    recorded = staticmethod(lambda g, r: tanh_backward(g, r))  # (looked up when run: forward AD wraps it)


class SigmoidBackwardBackward0(Op):
    """sigmoid_backward's own derivative (create_graph through sigmoid)."""
    node = 'SigmoidBackwardBackward0'
    __slots__ = ()

    def jvp(self, tangents):  # d[grad * r (1 - r)] = t_grad * r (1 - r) + grad * (1 - 2 r) t_r
        grad, result = self.saved_tensors
        t_grad, t_result = tangents
        out = t_grad * (result * (1 - result)) if t_grad is not None else None
        if t_result is not None:
            d = grad * (1 - result * 2) * t_result
            out = d if out is None else out + d
        return out

    def apply(self, gg):
        grad, result = self.saved_tensors
        g_grad = sigmoid_backward(gg, result) if self.next_functions[0][0] is not None else None
        g_result = gg * grad * (1 - result * 2) if self.next_functions[1][0] is not None else None
        return g_grad, g_result


def _sigmoid_derivative(g, r):
    if g.dtype.kind == 'V':  # bfloat16: in float32, rounded once (PyTorch's sigmoid_backward)
        return _sigmoid_derivative(opmath(g), opmath(r)).astype(g.dtype)
    return g * (r * _one_minus(r))


def sigmoid_backward(grad, result):
    """``grad * result * (1 - result)`` as one op (PyTorch's sigmoid_backward)."""
    out, node = record(_sigmoid_derivative(grad._data, result._data), SigmoidBackwardBackward0, (grad, result))
    if node is not None:
        node.save(grad, result)
    return out


class Sigmoid(_OutputDerivative):
    """sigmoid(input, *, out=None): ``1 / (1 + exp(-input))``."""
    op, node = 'sigmoid', 'SigmoidBackward0'
    saved = ('result',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)
    array_forward = staticmethod(sigmoid_array)
    on_arrays = staticmethod(_sigmoid_derivative)
    recorded = staticmethod(lambda g, r: sigmoid_backward(g, r))  # (looked up when run: forward AD wraps it)


class MaskedGradBackward(Op):
    """The derivative of a piecewise-linear function, ``grad * mask(x)``, recorded with x as an
    input whose own derivative is zero (as PyTorch records ThresholdBackwardBackward0 and its
    kin), so that differentiating a relu's gradient again gives zeros rather than an error."""
    __slots__ = ('mask', 'label')

    def jvp(self, tangents):
        return self._masked(tangents[0]) if tangents[0] is not None else None

    def apply(self, grad):
        gg = self._masked(grad) if self.next_functions[0][0] is not None else None
        gx = wrap(xp.zeros_like(grad._data)) if self.next_functions[1][0] is not None else None  # (zeros_like)
        return gg, gx

    def name(self):
        return self.label

    def _masked(self, g):
        # a boolean mask selects (0 where it is false, even for a NaN or infinite g), as
        # PyTorch's threshold_backward; slopes multiply
        mask = self.mask
        return ops.where(mask, g, 0.0) if mask._data.dtype == bool else g * mask


def masked_grad(grad, mask, wrt, name):
    """``grad * mask`` (mask: an array of 0/1 or slopes, shaped like grad) as a function of
    ``grad`` and, with zero derivative, of ``wrt``."""
    g = grad._data
    # a boolean mask selects, as PyTorch's kernels do (0 where it is false, even for a NaN or
    # infinite gradient); slopes multiply
    result, node = record(xp.where(mask, g, g.dtype.type(0)) if mask.dtype == bool
                          else g * mask.astype(g.dtype, copy=False),
                          MaskedGradBackward, (grad, wrt))
    if node is not None:
        node.mask, node.label = wrap(mask if mask.dtype == bool else mask.astype(g.dtype, copy=False)), name
    return result


class Relu(Op):
    """relu(input): ``max(input, 0)`` (PyTorch's function takes no out=)."""
    op, node = 'relu', 'ReluBackward0'
    saved = ('result',)
    inplace = inplace_function = True
    __slots__ = ()

    def forward(input):
        try:
            data = input._data
            if data.dtype.kind in 'bc':
                if data.dtype.kind == 'c':
                    raise refused('relu', data)
                raise RuntimeError('Boolean inputs not supported for relu')
            # (-0.0 stays -0.0, as PyTorch's: NumPy's maximum returns its second argument on a tie,
            # of float32/float64; others are compared)
            zero = data.dtype.type(0)
            out = xp.maximum(zero, data) if data.dtype.kind == 'f' and data.dtype.itemsize >= 4 else \
                xp.where(data < zero, zero, data)
            return unary(Relu, input, out, save='output')
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def jvp(self, tangents):
        (result,) = self.saved_tensors
        return tangents[0] * wrap(result._data > 0)

    def apply(self, grad):
        # PyTorch's threshold_backward: zero where the result is <= 0, grad elsewhere (at a NaN too)
        if state.grad_enabled:  # create_graph: recorded, with the result as an input
            (result,) = self.saved_tensors
            return masked_grad(grad, ~(result._data <= 0), result, 'ThresholdBackwardBackward0'),
        (r,) = self.saved_arrays()
        if type(r) is not xp.ndarray and (on_gpu := gpu_threshold_backward(grad._data, r)) is not None:
            return wrap(on_gpu),
        # (no local name for grad's array before unshared has counted the references to it)
        if grad._data.shape == r.shape and unshared(grad, 3):
            # Only the walk sees this gradient (its buffer list, apply's arguments): zero it
            # where it lies, as a hand-written backward would, instead of allocating.
            return wrap(relu_gradient_in_place(grad._data, r)),
        if grad._data.shape == r.shape:
            return wrap(relu_gradient_in_place(grad._data.copy(), r)),
        return wrap(xp.where(r <= 0, grad._data.dtype.type(0), grad._data)),


def gpu_threshold_backward(g, r):
    """ReluBackward0's gradient (zero where the result ``r`` is <= 0, ``g`` elsewhere) of a GPU's
    arrays in one kernel, where the CPU's lines run three; None on the CPU (or where CuPy cannot
    make the kernel). Shared with compile's replay (_compile/rules.py)."""
    if type(r) is xp.ndarray or g.dtype != r.dtype:
        return None
    kernel = backend.fused_kernel('threshold_backward', 'T g, T r', 'T out', 'out = r <= (T)0 ? (T)0 : g')
    return None if kernel is None else kernel(g, r)


def relu_gradient_in_place(g, r):
    """ReluBackward0's gradient written in ``g`` (a gradient of ``r``'s shape that the caller
    owns): +0 where the ReLU's result ``r`` is <= 0, g elsewhere (at a NaN result too). A ReLU's
    result is <= 0 only where it is +-0, so g's bits are multiplied, as integers, by the bool
    ``r != 0``: the same bits as zero_where (NaN, inf and -0.0 kept where not dead) from one
    mask pass fewer (a (256, 512) float32 gradient out of cache: ~80 us against ~92)."""
    width = _INT_OF_WIDTH.get(g.dtype.itemsize) if g.dtype.kind == 'f' else None
    if width is None or type(r) is not xp.ndarray:
        return zero_where(g, r <= 0)
    bits = g.view(width)
    xp.multiply(bits, r != 0, out=bits)
    return g


_INT8_ONE = xp.ones((), xp.int8)  # (an array operand: NumPy resolves it faster than the number 1)
_INT_OF_WIDTH = {2: xp.dtype(xp.int16), 4: xp.dtype(xp.int32), 8: xp.dtype(xp.int64)}


def zero_where(g, dead):
    """``g`` with +0 where ``dead`` (a bool array of its shape that the caller made for this
    call: it is overwritten), written in g. Done as a bitwise AND of g's bits with all-zero or
    all-one words (g's own bits, NaN, inf and -0.0 included, where not dead): the same numbers
    as copyto(g, 0, where=dead), without the per-element branch that makes copyto on an
    irregular mask 10-15 times slower. The mask is made one byte an element in dead's own
    buffer (False/True become -1/0) and widened to g's width by the AND's casting buffer,
    rather than as a new integer array as wide as g's elements (a (256, 512) float32 gradient
    out of cache, CPU time with the comparison: ~120-135 us against ~175-195 us)."""
    d = g.dtype
    width = _INT_OF_WIDTH.get(d.itemsize) if d.kind in 'fV' else None
    if width is None:
        xp.copyto(g, 0, where=dead)
        return g
    bits = g.view(width)
    if type(dead) is not xp.ndarray:  # (a 0-d comparison gives a NumPy bool, not an array)
        xp.bitwise_and(bits, xp.subtract(dead, True, dtype=bits.dtype), out=bits)
        return g
    mask = dead.view(xp.int8)
    xp.subtract(mask, _INT8_ONE, out=mask)
    xp.bitwise_and(bits, mask, out=bits)
    return g


class Sin(Op):
    """sin(input, *, out=None)."""
    op, node = 'sin', 'SinBackward0'
    saved = ('self',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)
    array_forward = staticmethod(xp.sin)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * cos(x),


class Cos(Op):
    """cos(input, *, out=None)."""
    op, node = 'cos', 'CosBackward0'
    saved = ('self',)
    out = CAST
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)
    array_forward = staticmethod(xp.cos)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * -sin(x),


# ---- where (used by derivatives above) -----------------------------------------------------

def _where_out(name, out, result, differentiable):
    """where's out= rule: ``out`` of the result's dtype."""
    check_out(name, out, result, differentiable)
    if out._data.dtype != result._data.dtype:
        raise RuntimeError(f'Expected out type to be {scalar_name(result._data)} but got {scalar_name(out._data)}')
    return fill_out(out, result._data)


class Where(Op):
    """where(condition, input, other, *, out=None): ``input`` where ``condition``, else
    ``other``; ``where(condition)`` is ``nonzero(condition, as_tuple=True)``."""
    op, node = 'where', 'WhereBackward0'
    saved = ('condition',)
    out = _where_out
    refusals = Overloads('where', '(Tensor condition)', '(Tensor condition, Tensor input, Tensor other, *, Tensor out = None)',
                         '(Tensor condition, Number self, Tensor other)', '(Tensor condition, Tensor input, Number other)',
                         '(Tensor condition, Number self, Number other)')
    parsed = 'function'  # (the method, where(condition, other), is the function's call: its refusals)
    __slots__ = ('x_shape', 'y_shape')

    def jvp(self, tangents):
        (cond,) = self.saved_tensors
        tx, ty = tangents
        shape = xp.broadcast_shapes(cond._data.shape, self.x_shape, self.y_shape)
        t = (tx if tx is not None else ty)._data
        zero = wrap(xp.zeros(shape, dtype=t.dtype, like=t))
        return where(cond, zero if tx is None else tx, zero if ty is None else ty)

    def forward(condition, input=None, other=None):
        if input is None and other is None:
            return ops.nonzero(condition, as_tuple=True)
        if isinstance(input, Tensor) != isinstance(other, Tensor):  # a number must fit the result's dtype
            common = backend.result_type(input, other).np
            if isinstance(input, Tensor):
                other = fitted_scalar(other, common) if isinstance(other, (int, float)) else other
            else:
                input = fitted_scalar(input, common) if isinstance(input, (int, float)) else input
        if isinstance(input, Tensor) or isinstance(other, Tensor):
            x, y = binary_operands(input, other)
        else:  # two Python numbers: the dtype they take together (1 and 2.5: the default float dtype)
            common = backend.result_type(input, other).np
            x, y = xp.asarray(input, dtype=common), xp.asarray(other, dtype=common)
        cond = condition._data if isinstance(condition, Tensor) else xp.asarray(condition)
        if cond.dtype.kind != 'b':
            raise RuntimeError('where expected condition to be a boolean tensor, but got a tensor with dtype '
                               f'{scalar_name(cond)}')
        try:
            data = xp.where(cond, x, y)
        except ValueError:
            raise broadcast_error(condition if isinstance(condition, Tensor) else cond, input, other) from None
        if isinstance(input, Tensor) and isinstance(other, Tensor):
            pass
        elif isinstance(input, Tensor) or isinstance(other, Tensor):
            t = input if isinstance(input, Tensor) else other
            if data.dtype != t._data.dtype and t._data.dtype.kind in 'fV':
                data = data.astype(t._data.dtype)
        result, node = record(iterated(data, cond, x, y) if data.ndim > 1 else data, Where, (input, other))
        if node is not None:
            node.x_shape, node.y_shape = _shape(input), _shape(other)
            node.save(condition if isinstance(condition, Tensor) else wrap(cond))
        return result

    def method(self, condition, other):
        return ops.where(condition, self, other)

    def apply(self, grad):
        (cond,) = self.saved_tensors
        zero = wrap(xp.zeros((), dtype=grad._data.dtype, like=grad._data))  # (PyTorch's 0, not grad * 0: NaN at inf)
        gx = sum_to(where(cond, grad, zero), self.x_shape) if self.next_functions[0][0] is not None else None
        gy = sum_to(where(cond, zero, grad), self.y_shape) if self.next_functions[1][0] is not None else None
        return gx, gy


# ---- comparison (no gradient) --------------------------------------------------------------

def _compare(ufunc, operator=False, kernel=None):
    """The comparison function, or (``operator``) its Python operator, which answers
    NotImplemented for an operand that is no number, array or tensor: Python then gives its
    own answer (``t == None`` is False, ``t < None`` a TypeError), as for torch's tensors.
    ``kernel`` names an ordering (lt ...), which complex numbers have none of."""
    def compare(input, other):
        if not operator and not isinstance(input, Tensor):  # (PyTorch's parser: input is a Tensor in each overload)
            raise TypeError(f'expected a Tensor, not {type(input).__name__}')
        try:
            x, y = binary_operands(input, other)
        except TypeError:
            if operator:
                return NotImplemented
            raise
        if kernel is not None and type(x) is xp.ndarray and x.dtype.kind == 'c':
            raise refused(kernel, x)
        try:
            data = ufunc(x, y)
            return wrap(iterated(data, x, y) if data.ndim > 1 else data)
        except ValueError:
            raise broadcast_error(input, other) from None
    return compare


class _ComparisonBackward(Op):
    """The node an in-place comparison records (``x.lt_(y)`` on a tensor with history): its
    gradients are zeros, as PyTorch's derivatives of lt_ and the others."""
    __slots__ = ('other_shape', 'other_dtype')

    def apply(self, grad):
        zeros = wrap(xp.zeros_like(grad._data))
        if len(self.next_functions) == 1:  # (the Scalar overload's node: self only)
            return zeros,
        return zeros, (wrap(xp.zeros(self.other_shape, self.other_dtype, like=grad._data))
                       if self.next_functions[1][0] is not None else None)


def _comparison_nodes(name):
    """The nodes of ``name``_ with a number (...Backward0) and with a tensor (...Backward1)."""
    return tuple(type(f'{name}Backward{i}', (_ComparisonBackward,),
                      {'node': f'{name}Backward{i}', '__slots__': (), '__module__': __name__}) for i in (0, 1))


def _compare_inplace(compare, nodes):
    """self.lt_(other): the comparison's 1s and 0s written in self's dtype, recorded as PyTorch
    records it (a node whose gradients are zeros)."""
    def inplace(self, other):
        def run(s):
            data = compare(s, other)._data.astype(s._data.dtype)
            if isinstance(other, Tensor):
                out, node = record(data, nodes[1], (s, other))
                if node is not None:
                    node.other_shape, node.other_dtype = other._data.shape, other._data.dtype
                return out
            return record(data, nodes[0], (s,))[0]
        return _run_inplace(self, run, (other,) if isinstance(other, Tensor) else ())
    return inplace


class _Comparison(Op):
    """A comparison: a bool result, no gradient (an out= that requires grad is no error); its
    in-place variant writes 1s and 0s in self's dtype."""
    differentiable = False
    out = CAST


def _comparison_overloads(name):
    return Overloads(name, '(Tensor input, Tensor other, *, Tensor out = None)',
                     '(Tensor input, Number other, *, Tensor out = None)')


class Eq(_Comparison):
    """eq(input, other, *, out=None)."""
    op, operators = 'eq', {'__eq__': _compare(xp.equal, operator=True)}
    forward = _compare(xp.equal)
    inplace, refusals = _compare_inplace(forward, _comparison_nodes('Eq')), _comparison_overloads(op)


class Ne(_Comparison):
    """ne(input, other, *, out=None)."""
    op, aliases, operators = 'ne', ('not_equal',), {'__ne__': _compare(xp.not_equal, operator=True)}
    forward = _compare(xp.not_equal)
    inplace, refusals = _compare_inplace(forward, _comparison_nodes('Ne')), _comparison_overloads(op)


class Lt(_Comparison):
    """lt(input, other, *, out=None)."""
    op, aliases, operators = 'lt', ('less',), {'__lt__': _compare(xp.less, True, 'lt_cpu')}
    forward = _compare(xp.less, kernel='lt_cpu')
    inplace, refusals = _compare_inplace(forward, _comparison_nodes('Lt')), _comparison_overloads(op)


class Le(_Comparison):
    """le(input, other, *, out=None)."""
    op, aliases, operators = 'le', ('less_equal',), {'__le__': _compare(xp.less_equal, True, 'le_cpu')}
    forward = _compare(xp.less_equal, kernel='le_cpu')
    inplace, refusals = _compare_inplace(forward, _comparison_nodes('Le')), _comparison_overloads(op)


class Gt(_Comparison):
    """gt(input, other, *, out=None)."""
    op, aliases, operators = 'gt', ('greater',), {'__gt__': _compare(xp.greater, True, 'gt_cpu')}
    forward = _compare(xp.greater, kernel='gt_cpu')
    inplace, refusals = _compare_inplace(forward, _comparison_nodes('Gt')), _comparison_overloads(op)


class Ge(_Comparison):
    """ge(input, other, *, out=None)."""
    op, aliases, operators = 'ge', ('greater_equal',), {'__ge__': _compare(xp.greater_equal, True, 'ge_cpu')}
    forward = _compare(xp.greater_equal, kernel='ge_cpu')
    inplace, refusals = _compare_inplace(forward, _comparison_nodes('Ge')), _comparison_overloads(op)


ops.masked_grad = masked_grad  # (activation's piecewise-linear derivatives reach it here)
ops.sigmoid_backward = sigmoid_backward  # (and softplus's double backward this)
