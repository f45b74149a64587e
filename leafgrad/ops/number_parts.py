"""Numbers taken apart: the parts of a float (frexp, ldexp, signbit), integer divisors (gcd,
lcm), the step function (heaviside) and logaddexp2, each declared once (``_op.Op``).

frexp's mantissa, ldexp and logaddexp2 are differentiable with PyTorch's nodes (FrexpBackward0,
LdexpBackward0, Logaddexp2Backward0); heaviside records PyTorch's NotImplemented node; the rest
give integers or booleans. Every function takes PyTorch's out= (its rule below), no method does.
"""
import math

from .. import backend, return_types
from ._inplace import inplace as _run_inplace
from ._op import CPP_NAMES, NO_GRAD_CAST, Op, castable_dtype, out_rule, same_dtype
from ._util import (SCALAR_NAMES, NotImplementedNode, binary_operands, broadcast_error, ops, record, record_many, sum_to,
                    wrap, xp)
from .._arg_parser import refuse_arguments


def _label(dt):
    return SCALAR_NAMES.get(dt.name, dt.name)


def _needs(node, i):
    return node.next_functions[i][0] is not None


def _shape(t):
    return t._data.shape if hasattr(t, '_data') else ()


# ---- out='s dtype rules of these ops, PyTorch's messages -----------------------------------------

def _SIGNBIT_OUT(rd, od):
    if od.name != 'bool':
        raise RuntimeError('signbit does not support non-boolean outputs.')


def _HEAVISIDE_OUT(rd, od):
    if od.is_complex:
        raise RuntimeError('heaviside is not yet implemented for complex tensors.')
    if od != rd:
        raise RuntimeError('heaviside is not yet implemented for tensors with different dtypes.')


def _LDEXP_OUT(rd, od):
    # (PyTorch: "can't be cast" for a lower kind; for another float dtype an internal assert of its
    # mul kernel, which cannot cast: refused here with the same exception type)
    if rd.category > od.category:
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_label(od)}")
    if rd != od:
        raise RuntimeError(f'ldexp: expected out of dtype {_label(rd)}, but got {_label(od)}')


def _ldexp_cast(rd, od):
    """ldexp_'s check: a float result (the default dtype for integer operands) into self."""
    if (rd if rd.is_floating_point else backend.get_default_dtype()).category > od.category:
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_label(od)}")


def _frexp_exponent_out(rd, od):
    if od.name != 'int32':
        raise RuntimeError(f'torch.frexp() expects exponent to have int dtype but got {CPP_NAMES[od.name]}')


_FREXP_OUT = (same_dtype('torch.frexp() expects mantissa to have dtype {result_cpp} but got {out_cpp}'),
              _frexp_exponent_out)


def _cast_first(check, op):
    """An in-place variant that refuses a result of a dtype ``self`` cannot hold before computing
    it (``check(result dtype, self's dtype)``, as PyTorch's in-place kernels check first), then
    runs ``op`` (a function of self and the other operand) through the in-place machinery."""
    def inplace(self, other):
        try:
            check(backend.result_type(self, other), backend.from_np(self._data.dtype))
            return _run_inplace(self, lambda s: op(s, other), (other,) if hasattr(other, '_data') else ())
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise
    return inplace


# ---- gcd, lcm --------------------------------------------------------------------------------------

def _integer_pair(input, other, kernel):
    dt = backend.result_type(input, other)
    if dt.is_floating_point or dt.name == 'bool':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_label(dt)}\'')
    try:
        return binary_operands(input, other)
    except ValueError:
        raise broadcast_error(input, other) from None


class Gcd(Op):
    """Not differentiable (PyTorch gives gcd no derivative)."""
    op, out = 'gcd', NO_GRAD_CAST
    tensors = ('input', 'other')
    inplace_function = True  # (Tensor.gcd_ and leafgrad.gcd_)
    inplace = _cast_first(castable_dtype, lambda s, other: ops.gcd(s, other))
    __slots__ = ()

    def forward(input, other):
        """gcd(input, other, *, out=None) -> Tensor

        The greatest common divisor, elementwise (non-negative; gcd(0, 0) = 0)."""
        a, b = _integer_pair(input, other, 'gcd_cpu')
        try:
            return wrap(xp.asarray(xp.gcd(a, b)))
        except ValueError:
            raise broadcast_error(input, other) from None


class Lcm(Op):
    """Not differentiable (PyTorch gives lcm no derivative)."""
    op, out = 'lcm', NO_GRAD_CAST
    tensors = ('input', 'other')
    inplace_function = True
    inplace = _cast_first(castable_dtype, lambda s, other: ops.lcm(s, other))
    __slots__ = ()

    def forward(input, other):
        """lcm(input, other, *, out=None) -> Tensor

        The least common multiple, elementwise (non-negative; 0 when either is 0)."""
        a, b = _integer_pair(input, other, 'lcm_cpu')
        try:
            return wrap(xp.asarray(xp.lcm(a, b)))
        except ValueError:
            raise broadcast_error(input, other) from None


# ---- heaviside, signbit --------------------------------------------------------------------------

class Heaviside(Op):
    """PyTorch gives heaviside no derivative: its NotImplemented node, recorded for an input
    that requires grad."""
    op, out = 'heaviside', out_rule('aten::heaviside', _HEAVISIDE_OUT, label='heaviside')
    tensors = ('input', 'values')
    __slots__ = ()

    def forward(input, values):
        """heaviside(input, values, *, out=None) -> Tensor

        0 where input < 0, 1 where input > 0, ``values`` where input is 0 (both of one dtype)."""
        return _heaviside(input, values, 'heaviside')

    def inplace(self, values):  # (its node names aten::heaviside_, as PyTorch's)
        return _run_inplace(self, lambda s: _heaviside(s, values, 'heaviside_'), (values,))


def _heaviside(input, values, name):
    if input._data.dtype != values._data.dtype:
        raise RuntimeError('heaviside is not yet implemented for tensors with different dtypes.')
    a, b = input._data, values._data
    try:
        data = xp.asarray(xp.where(a == 0, b, (a > 0).astype(a.dtype))).astype(a.dtype, copy=False)
    except ValueError:
        raise broadcast_error(input, values) from None
    out, node = record(data, NotImplementedNode, (input, values))
    if node is not None:
        node.op_name = name
    return out


class Signbit(Op):
    """A bool result, no derivative (an ``out`` that requires grad is no error)."""
    op, out = 'signbit', out_rule('signbit', _SIGNBIT_OUT, differentiable=False)
    __slots__ = ()

    def forward(input):
        """signbit(input, *, out=None) -> Tensor

        Whether the sign bit is set: True for negative numbers, -0.0 and negative NaN."""
        return wrap(xp.asarray(xp.signbit(input._data)))


# ---- frexp, ldexp ---------------------------------------------------------------------------------

class Frexp(Op):
    """mantissa = input / 2**exponent, the exponent piecewise constant: the mantissa's gradient
    divided by 2**exponent."""
    op, node, saved = 'frexp', 'FrexpBackward0', ('exponent',)
    out = out_rule('frexp', _FREXP_OUT, differentiable=(True, False))
    # no __slots__: a multi-output node

    def forward(input):
        """frexp(input, *, out=None) -> (Tensor mantissa, Tensor exponent)

        input = mantissa * 2**exponent, |mantissa| in [0.5, 1), exponent int32."""
        a = input._data
        if a.dtype.kind not in 'fV':
            raise RuntimeError('torch.frexp() only supports floating-point dtypes')
        mantissa, exponent = xp.frexp(a)
        outs, node = record_many([mantissa.astype(a.dtype), exponent.astype(xp.int32)], Frexp, (input,),
                                 differentiable=(True, False))
        if node is not None:
            node.save(outs[1])
        return return_types.frexp(*outs)

    def apply(self, grad_mantissa, grad_exponent=None):
        (exponent,) = self.saved_tensors
        return grad_mantissa / wrap(xp.exp2(exponent._data.astype(grad_mantissa._data.dtype))),


class Ldexp(Op):
    """d/d input = 2**other, d/d other = input * 2**other * log 2."""
    op, node, out = 'ldexp', 'LdexpBackward0', out_rule('ldexp', _LDEXP_OUT)
    tensors = ('input', 'other')
    inplace_function = True
    inplace = _cast_first(_ldexp_cast, lambda s, other: ops.ldexp(s, other))
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        """ldexp(input, other, *, out=None) -> Tensor

        input * 2**other."""
        dt = backend.result_type(input, other)
        if not dt.is_floating_point:
            dt = backend.get_default_dtype()
        a = input._data.astype(dt.np, copy=False)
        scale = xp.exp2(other._data.astype(dt.np))
        try:
            data = a * scale
        except ValueError:
            raise broadcast_error(input, other) from None
        out, node = record(xp.asarray(data), Ldexp, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.save(input, other)
        return out

    def apply(self, grad):
        input, other = self.saved_tensors
        g_in = g_other = None
        if _needs(self, 0):
            # PyTorch's formula grad * 2**other, the power taken in other's dtype: an integer
            # exponent below 0 gives 0 there (integer pow), and so does the derivative
            o = other._data
            if o.dtype.kind in 'iub':
                scale = wrap(xp.where(o < 0, 0, xp.left_shift(1, xp.maximum(o, 0))).astype(grad._data.dtype))
            else:
                scale = ops.exp2(other)
            g_in = sum_to(grad * scale, self.self_shape)
        if _needs(self, 1):
            g_other = sum_to(grad * input * ops.exp2(other) * math.log(2), self.other_shape)
        return g_in, g_other


# ---- logaddexp2 --------------------------------------------------------------------------------------

class Logaddexp2(Op):
    """d/da = sigmoid((a - b) log 2), d/db = sigmoid((b - a) log 2)."""
    op, node, saved = 'logaddexp2', 'Logaddexp2Backward0', ('self', 'other')
    tensors = ('input', 'other')
    out = out_rule('logaddexp2', castable_dtype)
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        """logaddexp2(input, other, *, out=None) -> Tensor

        log2(2**input + 2**other), computed without overflow."""
        dt = backend.result_type(input, other)
        if not dt.is_floating_point:
            raise NotImplementedError(f'"logaddexp2_cpu" not implemented for \'{_label(dt)}\'')
        x, y = binary_operands(input, other)
        try:
            with xp.errstate(invalid='ignore'):
                data = xp.logaddexp2(x, y)
        except ValueError:
            raise broadcast_error(input, other) from None
        out, node = record(xp.asarray(data), Logaddexp2, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.save(input, other)
        return out

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = sum_to(grad * ops.sigmoid((a - b) * math.log(2)), self.self_shape) if _needs(self, 0) else None
        gb = sum_to(grad * ops.sigmoid((b - a) * math.log(2)), self.other_shape) if _needs(self, 1) else None
        return ga, gb
