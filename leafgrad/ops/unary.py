"""More elementwise math, each op declared once (``_op.Op``) with its derivative beside its
forward: the remaining unary functions (rsqrt, expm1, log1p, the inverse trigonometric and
hyperbolic functions, erf), atan2, clamp, maximum/minimum, lerp and nan_to_num.

Each derivative is written with leafgrad ops, so that it is itself differentiable
(``create_graph=True``); it reaches the ops of other families through ``ops`` (late-bound).
Integer and bool inputs to a float function give the default float dtype, as in PyTorch.
"""
import math

from .. import _special_kernels, backend
from .._arg_parser import Overloads, is_number, refuse_arguments
from ._op import CAST, CPP_NAMES, SAME, Op, check_out, fill_out, scalar_name
from ._util import (binary_operands, broadcast_error, float_dtype_for, fused_multiply_add, iterated, on_gpu, ops,
                    record, refused, sum_to, unary, wrap, xp)
from ..autograd.graph import _Empty, elementwise_jvp
from ..tensor import Tensor, fitted_scalar


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _quiet(np_fn):
    """``np_fn`` without NumPy's floating-point warnings (PyTorch gives inf and nan silently);
    bfloat16 computed in float32 and rounded once, as PyTorch (rsqrt is two NumPy calls)."""
    def array_forward(x):
        with xp.errstate(divide='ignore', invalid='ignore', over='ignore'):
            return np_fn(x) if x.dtype.kind != 'V' else np_fn(x.astype(xp.float32)).astype(x.dtype)
    return staticmethod(array_forward)


class _Unary(Op):
    """A float function of one tensor, declared by its array function: ``leafgrad.<op>`` with
    out=, ``Tensor.<op>`` and its in-place variants."""
    __slots__ = ()
    out = CAST
    inplace = inplace_function = True
    jvp = elementwise_jvp  # (a diagonal Jacobian)


class Rsqrt(_Unary):
    """rsqrt(input, *, out=None): ``1 / sqrt(input)``."""
    op, node, saved = 'rsqrt', 'RsqrtBackward0', ('result',)
    array_forward = _quiet(lambda x: 1 / xp.sqrt(x))

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * (result * result * result) * -0.5,  # d x^(-1/2) = -1/2 x^(-3/2)


class Expm1(_Unary):
    """expm1(input, *, out=None): ``exp(input) - 1``, exact near 0."""
    op, node, saved = 'expm1', 'Expm1Backward0', ('result',)
    array_forward = _quiet(xp.expm1)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * (result + 1),


class Log1p(_Unary):
    """log1p(input, *, out=None): ``log(1 + input)``, exact near 0."""
    op, node, saved = 'log1p', 'Log1PBackward0', ('self',)
    array_forward = _quiet(xp.log1p)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x + 1),


class Log2(_Unary):
    """log2(input, *, out=None)."""
    op, node, saved = 'log2', 'Log2Backward0', ('self',)
    array_forward = _quiet(xp.log2)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x * math.log(2.0)),


class Log10(_Unary):
    """log10(input, *, out=None)."""
    op, node, saved = 'log10', 'Log10Backward0', ('self',)
    array_forward = _quiet(xp.log10)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x * math.log(10.0)),


class Tan(_Unary):
    """tan(input, *, out=None)."""
    op, node, saved = 'tan', 'TanBackward0', ('result',)
    array_forward = _quiet(xp.tan)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * (result * result + 1),


class Asin(_Unary):
    """asin(input, *, out=None) (also arcsin)."""
    op, node, saved, aliases = 'asin', 'AsinBackward0', ('self',), ('arcsin',)
    array_forward = _quiet(xp.arcsin)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ops.pow(-x * x + 1, -0.5),


class Acos(_Unary):
    """acos(input, *, out=None) (also arccos)."""
    op, node, saved, aliases = 'acos', 'AcosBackward0', ('self',), ('arccos',)
    array_forward = _quiet(xp.arccos)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * -ops.pow(-x * x + 1, -0.5),


class Atan(_Unary):
    """atan(input, *, out=None) (also arctan)."""
    op, node, saved, aliases = 'atan', 'AtanBackward0', ('self',), ('arctan',)
    array_forward = _quiet(xp.arctan)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x * x + 1),


class Sinh(_Unary):
    """sinh(input, *, out=None)."""
    op, node, saved = 'sinh', 'SinhBackward0', ('self',)
    array_forward = _quiet(xp.sinh)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * cosh(x),


class Cosh(_Unary):
    """cosh(input, *, out=None)."""
    op, node, saved = 'cosh', 'CoshBackward0', ('self',)
    array_forward = _quiet(xp.cosh)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * sinh(x),


class Asinh(_Unary):
    """asinh(input, *, out=None) (also arcsinh)."""
    op, node, saved, aliases = 'asinh', 'AsinhBackward0', ('self',), ('arcsinh',)
    array_forward = _quiet(xp.arcsinh)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ops.pow(x * x + 1, -0.5),


class Acosh(_Unary):
    """acosh(input, *, out=None) (also arccosh)."""
    op, node, saved, aliases = 'acosh', 'AcoshBackward0', ('self',), ('arccosh',)
    array_forward = _quiet(xp.arccosh)

    def apply(self, grad):
        (x,) = self.saved_tensors
        if x._data.dtype.kind == 'c':  # (1 / sqrt(z^2 - 1) takes the other branch off the real line)
            return grad / (ops.sqrt(x - 1) * ops.sqrt(x + 1)),
        return grad * ops.pow(x * x - 1, -0.5),


class Atanh(_Unary):
    """atanh(input, *, out=None) (also arctanh)."""
    op, node, saved, aliases = 'atanh', 'AtanhBackward0', ('self',), ('arctanh',)
    array_forward = _quiet(xp.arctanh)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (-x * x + 1),


def _erf_array(x):
    # NumPy has no erf: the C library's method on arrays, in float64 (_special_kernels.erf).
    if x.dtype.kind == 'c':
        raise refused('erf_vml_cpu', x)
    if type(x) is not xp.ndarray and on_gpu(x):  # (CuPy's erf, in float32 or float64 as PyTorch's CUDA kernel)
        return _special_kernels.gpu_special('erf', _gpu_float(x)).astype(x.dtype, copy=False)
    return _special_kernels.erf(x.astype(xp.float64, copy=False)).astype(x.dtype, copy=False)


def _gpu_float(x):
    """A GPU's array as cupyx.scipy.special computes it: float32 or float64 (16-bit floats in float32)."""
    return x if x.dtype.char in 'fd' else x.astype(xp.float32)


def _erfc_array(x):
    if type(x) is not xp.ndarray and on_gpu(x):  # (as _erf_array)
        return _special_kernels.gpu_special('erfc', _gpu_float(x)).astype(x.dtype, copy=False)
    return _special_kernels.erfc(x.astype(xp.float64, copy=False)).astype(x.dtype, copy=False)


class Erf(_Unary):
    """erf(input, *, out=None): the error function."""
    op, node, saved = 'erf', 'ErfBackward0', ('self',)
    array_forward = _quiet(_erf_array)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * (ops.exp(-x * x) * (2.0 / math.sqrt(math.pi))),


class Erfc(_Unary):
    """erfc(input, *, out=None): ``1 - erf(input)``, exact for large input."""
    op, node, saved = 'erfc', 'ErfcBackward0', ('self',)
    array_forward = _quiet(_erfc_array)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * (ops.exp(-x * x) * (-2.0 / math.sqrt(math.pi))),


class Erfinv(_Unary):
    """erfinv(input, *, out=None): the inverse of erf (PyTorch has no torch.erfinv_)."""
    op, node, saved = 'erfinv', 'ErfinvBackward0', ('self',)
    inplace_function = False
    array_forward = _quiet(_special_kernels.erfinv)

    def apply(self, grad):
        (x,) = self.saved_tensors  # (PyTorch saves the input and computes erfinv again)
        result = erfinv(x)
        return grad * (ops.exp(result * result) * (math.sqrt(math.pi) / 2)),


# ---- atan2 ---------------------------------------------------------------------------------

def _weighted_tangents(*pairs):
    """The sum of ``tangent * weight`` over the pairs whose tangent is not None (None if none)."""
    out = None
    for tangent, weight in pairs:
        if tangent is not None:
            term = tangent * weight
            out = term if out is None else out + term
    return out


class Atan2(Op):
    """atan2(input, other, *, out=None) (also arctan2): the angle of (other, input)."""
    op, node, aliases = 'atan2', 'Atan2Backward0', ('arctan2',)
    tensors = ('input', 'other')
    saved = ('self', 'other')
    out = CAST
    inplace = True
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        y, x = binary_operands(input, other)
        y = float_dtype_for(xp.asarray(y))
        if y.dtype.kind == 'c':
            raise refused('atan2_cpu', y)
        try:
            data = xp.arctan2(y, xp.asarray(x).astype(y.dtype, copy=False))
        except ValueError:
            raise broadcast_error(input, other) from None
        result, node = record(iterated(data, y, x) if data.ndim > 1 else data, Atan2, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = _shape(input), _shape(other)
            node.save(input, other)
        return result

    def jvp(self, tangents):  # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2), 0 at the origin
        y, x = self.saved_tensors
        denom = y * y + x * x
        at_origin = denom._data == 0
        if at_origin.any():
            denom = denom + wrap(at_origin.astype(denom._data.dtype))
        return _weighted_tangents((tangents[0], x / denom), (tangents[1], -y / denom))

    def apply(self, grad):
        y, x = self.saved_tensors
        denom = y * y + x * x
        # PyTorch's atan2_backward: grad * other * recip, grad * -self * recip, with recip the
        # reciprocal of the denominator, set to 0 where that is 0 (at the origin: a gradient of
        # 0 and -0, whose own derivative there is NaN; a denominator that is only tiny gives inf)
        recip = ops.reciprocal(denom)
        at_origin = denom._data == 0
        if at_origin.any():
            recip = ops.masked_fill(recip, wrap(at_origin), 0)
        gy = sum_to(grad * x * recip, self.self_shape) if self.next_functions[0][0] is not None else None
        gx = sum_to(grad * -y * recip, self.other_shape) if self.next_functions[1][0] is not None else None
        return gy, gx


# ---- clamp ---------------------------------------------------------------------------------

class ClampBackward1(Op):
    """clamp with number bounds: the gradient passes where min <= x <= max."""
    node = 'ClampBackward1'
    saved = ('self', 'min=min', 'max=max')
    __slots__ = ('min', 'max')

    def apply(self, grad):
        (x,) = self.saved_tensors
        mask = x._data == x._data  # all True except NaN, as PyTorch (NaN compares false)
        if self.min is not None:
            mask = mask & (x._data >= self.min)
        if self.max is not None:
            mask = mask & (x._data <= self.max)
        # (PyTorch's where(mask, grad, 0), not grad * mask: a NaN or inf gradient where a bound was
        # taken gives 0, seed 10004743)
        return ops.where(wrap(mask), grad, wrap(xp.zeros((), dtype=grad._data.dtype, like=grad._data))),

    jvp = elementwise_jvp  # (the input's tangent where it was kept, zero where a bound was taken)


def _clamp_choices(x, lo, hi):
    """Where clamp with tensor bounds took the input, ``lo`` and ``hi`` (None for an absent bound),
    by PyTorch's clamp_backward masks: each pair compared in its own promoted dtype, as PyTorch's
    ``self >= min``, ``min < max`` (a 0-d float64 bound beside a float32 input is compared in
    float32)."""
    keep = x._data == x._data  # all True except NaN, as PyTorch (NaN compares false)
    take_lo = take_hi = None
    if lo is not None:
        xd, bd = binary_operands(x, lo)
        keep = keep & (xd >= bd)
        take_lo = xd < bd
    if hi is not None:
        xd, bd = binary_operands(x, hi)
        keep = keep & (xd <= bd)
        take_hi = xd > bd
    if lo is not None and hi is not None:
        lod, hid = binary_operands(lo, hi)
        take_lo = take_lo & (lod < hid)
        take_hi = take_hi | (hid < lod)
    return keep, take_lo, take_hi


class ClampBackward0(Op):
    """clamp with tensor bounds; a bound gets the gradient where it was the one chosen."""
    node = 'ClampBackward0'
    saved = ('self', 'min', 'max')
    tie_to_input = False  # (the forward derivative's choice at a tie with the one bound given)
    __slots__ = ('shapes',)

    def apply(self, grad):
        # an absent bound was saved as the placeholder ``_Empty``
        x, lo, hi = [None if t is _Empty else t for t in self.saved_tensors]
        # (a 0 where the mask is off, not grad * 0: NaN at inf)
        zero = wrap(xp.zeros((), dtype=grad._data.dtype, like=grad._data))
        outs = [ops.where(wrap(mask), grad, zero) if mask is not None else None
                for mask in _clamp_choices(x, lo, hi)]
        outs = [outs[0]] + [g for g in outs[1:] if g is not None]  # (the bounds given, in order)
        return tuple(None if (g is None or fn is None) else sum_to(g, shape)
                     for g, (fn, _), shape in zip(outs, self.next_functions, self.shapes))

    def jvp(self, tangents, output):
        """PyTorch's clamp_jvp: the tangent of the operand each element was taken from, where a
        tie goes to the bound (where the reverse derivative gives it to the input; clamp_min and
        clamp_max's own rules give it to the input), and min > max to max; an absent tangent is
        zero."""
        x, lo, hi = [None if t is _Empty else t for t in self.saved_tensors]
        rest = list(tangents[1:])
        t_lo = rest.pop(0) if lo is not None else None
        t_hi = rest.pop(0) if hi is not None else None
        zero = wrap(xp.zeros_like(output._data))
        t_x, t_lo, t_hi = [zero if t is None else t for t in (tangents[0], t_lo, t_hi)]
        shape = output._data.shape

        def where(mask, a, b):
            return ops.where(wrap(xp.broadcast_to(mask, shape)), a, b)
        if lo is not None and hi is not None:
            lo_over_hi = xp.greater(*binary_operands(lo, hi))
            below, above = xp.less(*binary_operands(x, lo)), xp.greater(*binary_operands(x, hi))
            return where(lo_over_hi, t_hi, where(below, t_lo, where(above, t_hi, t_x)))
        if lo is not None:
            xd, lod = binary_operands(x, lo)
            return where((xd >= lod) if self.tie_to_input else (xd > lod), t_x, t_lo)
        xd, hid = binary_operands(x, hi)
        return where((xd <= hid) if self.tie_to_input else (xd < hid), t_x, t_hi)


class ClampMinBackward0(ClampBackward1):
    node = 'ClampMinBackward0'
    saved = ('self', 'min=min')
    __slots__ = ()


class ClampMaxBackward0(ClampBackward1):
    node = 'ClampMaxBackward0'
    saved = ('self', 'max=max')
    __slots__ = ()


class ClampMinBackward1(ClampBackward0):
    node = 'ClampMinBackward1'
    tie_to_input = True
    saved = ('self', 'min')
    __slots__ = ()


class ClampMaxBackward1(ClampBackward0):
    node = 'ClampMaxBackward1'
    tie_to_input = True
    saved = ('self', 'max')
    __slots__ = ()


def _clamp(input, min, max, _nodes):
    """clamp; _nodes: the node classes for number and tensor bounds (clamp_min/clamp_max name
    theirs apart)."""
    if min is None and max is None:
        raise RuntimeError("leafgrad.clamp: At least one of 'min' or 'max' must not be None")
    if input._data.dtype.kind == 'c':
        raise refused('clamp', input._data)
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        # a number beside a tensor bound: PyTorch's overloads take both as numbers, the tensor
        # read as its number where it is 0-d and requires no grad, else none of them binds
        # them (Clamp.refusals' TypeError)
        bound = min if isinstance(min, Tensor) else max
        if not is_number(bound):
            raise TypeError('clamp: a number beside a tensor bound')
        min, max = (bound.item(), max) if bound is min else (min, bound.item())
    bounds = [b for b in (min, max) if b is not None]
    if any(isinstance(b, Tensor) for b in bounds):
        dt = backend.result_type(input, *bounds).np
        data = input._data.astype(dt, copy=False)
        lo = min._data.astype(dt, copy=False) if min is not None else None
        hi = max._data.astype(dt, copy=False) if max is not None else None
        try:
            if lo is not None:
                data = xp.maximum(data, lo)  # NaN bounds and NaN inputs propagate, as PyTorch
            if hi is not None:
                data = xp.minimum(data, hi)
        except ValueError:
            raise broadcast_error(input, *bounds) from None
        inputs = (input,) + tuple(bounds)
        result, node = record(xp.array(data, dtype=dt), _nodes[1], inputs)
        if node is not None:
            node.shapes = tuple(t._data.shape for t in inputs)
            node.save(input, _Empty if min is None else min, _Empty if max is None else max)
        return result
    dt = backend.result_type(input, *bounds).np
    data = input._data.astype(dt, copy=True)
    if min is not None:  # (the bound as the dtype holds it: -1 is 255 for uint8, as PyTorch converts it)
        lo = fitted_scalar(min, dt, half_checked=True)
        data = xp.where((data < lo) | (lo != lo), lo, data)  # (a NaN input stays NaN, a NaN bound is taken)
    if max is not None:
        hi = fitted_scalar(max, dt, half_checked=True)
        data = xp.where((data > hi) | (hi != hi), hi, data)
    result, node = record(data, _nodes[0], (input,))
    if node is not None:
        node.min, node.max = min, max
        node.save(input)
    return result


def _out_rule(*operands):
    """out='s rule for clamp and lerp: with number operands the result keeps input's dtype and
    ``out`` must be of it; with a tensor operand the result is promoted (TensorIterator's rule)."""
    return CAST if any(isinstance(t, Tensor) for t in operands) else SAME


class Clamp(Op):
    """clamp(input, min=None, max=None, *, out=None) (also clip): number or tensor bounds."""
    op, aliases = 'clamp', ('clip',)
    refusals = Overloads('clamp', '(Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)',
                         '(Tensor input, Number min = None, Number max = None, *, Tensor out = None)')
    inplace = inplace_function = True
    __slots__ = ()

    def forward(input, min=None, max=None):
        return _clamp(input, min, max, (ClampBackward1, ClampBackward0))

    def function(input, min=None, max=None, *, out=None):
        result = _clamp(input, min, max, (ClampBackward1, ClampBackward0))
        return result if out is None else _out_rule(min, max)('clamp', out, result)


# PyTorch's signatures: an argument that is no tensor is refused with the parser's listing of them
_CLAMP_MIN = Overloads('clamp_min', '(Tensor input, Tensor min, *, Tensor out = None)',
                       '(Tensor input, Number min, *, Tensor out = None)')
_CLAMP_MAX = Overloads('clamp_max', '(Tensor input, Tensor max, *, Tensor out = None)',
                       '(Tensor input, Number max, *, Tensor out = None)')


class ClampMin(Op):
    """clamp_min(input, min, *, out=None)."""
    op = 'clamp_min'
    refusals = _CLAMP_MIN  # (the method's and the in-place variant's errors: the parser's listing)
    inplace = inplace_function = True
    __slots__ = ()

    def forward(input, min):
        return _clamp(input, min, None, (ClampMinBackward0, ClampMinBackward1))

    def function(input, min, *, out=None):
        try:
            result = _clamp(input, min, None, (ClampMinBackward0, ClampMinBackward1))
            return result if out is None else _out_rule(min)('clamp_min', out, result)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_CLAMP_MIN)
            _CLAMP_MIN.bind((input, min), {} if out is None else {'out': out})  # (a min neither tensor nor number)
            raise


class ClampMax(Op):
    """clamp_max(input, max, *, out=None)."""
    op = 'clamp_max'
    refusals = _CLAMP_MAX
    inplace = inplace_function = True
    __slots__ = ()

    def forward(input, max):
        return _clamp(input, None, max, (ClampMaxBackward0, ClampMaxBackward1))

    def function(input, max, *, out=None):
        try:
            result = _clamp(input, None, max, (ClampMaxBackward0, ClampMaxBackward1))
            return result if out is None else _out_rule(max)('clamp_max', out, result)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_CLAMP_MAX)
            _CLAMP_MAX.bind((input, max), {} if out is None else {'out': out})  # (a max neither tensor nor number)
            raise


# ---- maximum, minimum ----------------------------------------------------------------------

class MaximumBackward0(Op):
    """Where the operands tie, each gets half of the gradient (as PyTorch)."""
    node = 'MaximumBackward0'
    saved = ('self', 'other')
    __slots__ = ('self_shape', 'other_shape', 'sign')

    def jvp(self, tangents):  # the winner's tangent; at a tie the mean of both (PyTorch's rule)
        ad, bd = binary_operands(*self.saved_tensors)  # (compared as PyTorch does: in their promoted dtype)
        wins = (ad > bd) if self.sign > 0 else (ad < bd)
        share = xp.where(ad == bd, 0.5, wins).astype(ad.dtype)
        return _weighted_tangents((tangents[0], wrap(share)), (tangents[1], wrap(1 - share)))

    def apply(self, grad):
        # the operands compared in their promoted dtype, as PyTorch's ``self == other``: a 0-d
        # float64 1.1 ties a float32 tensor's 1.1 (it is compared in float32)
        ad, bd = binary_operands(*self.saved_tensors)
        # PyTorch's rule: half to each at a tie, nothing to the loser, all to both where a NaN
        # makes neither lose (``sign`` flips the comparisons for minimum)
        # (selected, not multiplied, as PyTorch's where(self == other, grad / 2, grad)
        # .masked_fill_(loses, 0): an infinite or NaN gradient gives the loser 0, not NaN; the same
        # ops, so that create_graph records PyTorch's nodes. The where, which changes nothing without
        # a tie, is skipped there unless it is recorded.)
        a_loses, b_loses = (ad < bd, ad > bd) if self.sign > 0 else (ad > bd, ad < bd)
        tie = ad == bd
        shared = ops.where(wrap(tie), grad / 2, grad) if grad._requires_grad or tie.any() else grad
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = sum_to(ops.masked_fill(shared, wrap(a_loses), 0), self.self_shape)
        if self.next_functions[1][0] is not None:
            gb = sum_to(ops.masked_fill(shared, wrap(b_loses), 0), self.other_shape)
        return ga, gb


class MinimumBackward0(MaximumBackward0):
    node = 'MinimumBackward0'
    __slots__ = ()


def _extremum(input, other, np_fn, node_cls, sign):
    x, y = binary_operands(input, other)
    if x.dtype.kind == 'c':
        raise refused(np_fn.__name__, x)
    try:
        data = np_fn(x, y)
    except ValueError:
        raise broadcast_error(input, other) from None
    result, node = record(iterated(data, x, y) if data.ndim > 1 else data, node_cls, (input, other))
    if node is not None:
        node.self_shape, node.other_shape, node.sign = _shape(input), _shape(other), sign
        node.save(input, other)
    return result


class Maximum(Op):
    """maximum(input, other, *, out=None): the elementwise larger (NaN propagates)."""
    op, out = 'maximum', CAST
    tensors = ('input', 'other')
    __slots__ = ()

    def forward(input, other):
        return _extremum(input, other, xp.maximum, MaximumBackward0, 1)


class Minimum(Op):
    """minimum(input, other, *, out=None): the elementwise smaller (NaN propagates)."""
    op, out = 'minimum', CAST
    tensors = ('input', 'other')
    __slots__ = ()

    def forward(input, other):
        return _extremum(input, other, xp.minimum, MinimumBackward0, -1)


# ---- lerp ----------------------------------------------------------------------------------

class LerpBackward0(Op):
    """lerp with a number weight."""
    node = 'LerpBackward0'
    saved = ('weight=weight',)
    __slots__ = ('weight', 'self_shape', 'end_shape')

    def jvp(self, tangents):
        return _weighted_tangents((tangents[0], 1 - self.weight), (tangents[1], self.weight))

    def apply(self, grad):
        ga = sum_to(grad * (1 - self.weight), self.self_shape) if self.next_functions[0][0] is not None else None
        gb = sum_to(grad * self.weight, self.end_shape) if self.next_functions[1][0] is not None else None
        return ga, gb


class LerpBackward1(Op):
    """lerp with a tensor weight."""
    node = 'LerpBackward1'
    saved = ('self', 'end', 'weight')
    __slots__ = ('shapes',)

    def jvp(self, tangents):  # (a factor is computed only for a tangent it multiplies: it may not be saved)
        start, end, weight = self.saved_tensors
        ts, te, tw = tangents
        return _weighted_tangents((ts, None if ts is None else 1 - weight), (te, weight),
                                  (tw, None if tw is None else end - start))

    def apply(self, grad):
        start, end, weight = self.saved_tensors
        fns = self.next_functions
        ga = sum_to(grad * (1 - weight), self.shapes[0]) if fns[0][0] is not None else None
        gb = sum_to(grad * weight, self.shapes[1]) if fns[1][0] is not None else None
        gw = sum_to(grad * (end - start), self.shapes[2]) if fns[2][0] is not None else None
        return ga, gb, gw


class Lerp(Op):
    """lerp(input, end, weight, *, out=None): ``input + weight * (end - input)``."""
    op = 'lerp'
    refusals = Overloads('lerp', '(Tensor input, Tensor end, Tensor weight, *, Tensor out = None)',
                         '(Tensor input, Tensor end, Number weight, *, Tensor out = None)')
    inplace = True
    __slots__ = ()

    def function(input, end, weight, *, out=None):
        result = Lerp.forward(input, end, weight)
        return result if out is None else (SAME if isinstance(weight, Tensor) else CAST)('lerp', out, result)

    def forward(input, end, weight):
        x, e = input._data, end._data
        if e.dtype != x.dtype:
            raise RuntimeError(f'expected dtype {_short(x)} for `end` but got dtype {_short(e)}')
        w = weight._data if isinstance(weight, Tensor) else weight
        if not isinstance(weight, Tensor) and not is_number(weight):  # (a list: the refusals' listing)
            raise TypeError(f'lerp(): weight {type(weight).__name__} is no number')
        if isinstance(weight, Tensor) and w.dtype != x.dtype and w.ndim:  # (before the kernel's dtype, as PyTorch)
            raise RuntimeError(f'expected dtype {_short(x)} for `weight` but got dtype {_short(w)}')
        if isinstance(weight, Tensor) and w.dtype != x.dtype:
            # (a 0-dim weight of another dtype joins the type promotion, as a 0-dim operand does:
            # a float32 input keeps float32 beside a float64 weight, a complex weight makes it complex)
            common = backend.result_type(input, end, weight).np
            x, e, w = x.astype(common, copy=False), e.astype(common, copy=False), w.astype(common, copy=False)
        if x.dtype.kind not in 'fVc':  # (the kernel's dtype: the promoted one)
            kernel = 'lerp_kernel_tensor' if isinstance(weight, Tensor) else 'lerp_kernel_scalar'
            raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(x)}\'')
        # PyTorch's formula, exact at both ends (weight 0 gives start, weight 1 gives end): one fused
        # multiply-add, weight * diff + start for a weight under 0.5 in size, (weight - 1) * diff
        # + end for the others; the 16-bit floats computed in float32 (with a number weight
        # rounded to float32, as for float32) and rounded once
        wide = x.dtype.type if x.dtype.kind == 'c' else xp.float32 if x.dtype.itemsize <= 4 else xp.float64
        xo, eo = x.astype(wide, copy=False), e.astype(wide, copy=False)
        wo = w.astype(wide, copy=False) if isinstance(weight, Tensor) else wide(w)
        try:
            with xp.errstate(all='ignore'):
                diff = eo - xo
                small = xp.abs(wo) < 0.5
                if type(xo) is xp.ndarray or isinstance(weight, Tensor):
                    factor = xp.where(small, wo, wo - wide(1))
                else:  # (a number weight beside a GPU's arrays: a NumPy number, which CuPy takes)
                    factor = wo if small else wo - wide(1)
                base = xp.where(small, xo, eo)
                # (complex: no fused multiply-add for it in NumPy; PyTorch's complex lerp rounds twice too)
                data = factor * diff + base if x.dtype.kind == 'c' else fused_multiply_add(factor, diff, base)
                data = data.astype(x.dtype, copy=False)
        except ValueError:
            raise broadcast_error(input, end, weight) from None
        if isinstance(weight, Tensor):
            result, node = record(data, LerpBackward1, (input, end, weight))
            if node is not None:
                node.shapes = (x.shape, e.shape, w.shape)
                fns, empty = node.next_functions, _Empty
                ends_needed = fns[2][0] is not None  # input and end: for the weight's gradient only
                weight_needed = fns[0][0] is not None or fns[1][0] is not None
                node.save(input if ends_needed else empty, end if ends_needed else empty,
                          weight if weight_needed else empty)
            return result
        result, node = record(data, LerpBackward0, (input, end))
        if node is not None:
            node.weight, node.self_shape, node.end_shape = weight, x.shape, e.shape
        return result


def _short(arr):
    return CPP_NAMES[arr.dtype.name]


# ---- nan_to_num ----------------------------------------------------------------------------

def _nan_to_num_out(name, out, result, differentiable):
    check_out(name, out, result, differentiable)
    if out._data.dtype != result._data.dtype:
        raise RuntimeError(f'nan_to_num: dtype of out: {scalar_name(out._data)} should be same as input: '
                           f'{scalar_name(result._data)}')
    return fill_out(out, result._data)


class NanToNum(Op):
    """nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None): NaN and infinities
    replaced by numbers; the gradient passes where the input was finite."""
    op, node, saved = 'nan_to_num', 'NanToNumBackward0', ('self',)
    out = _nan_to_num_out
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def forward(input, nan=0.0, posinf=None, neginf=None):
        data = input._data
        if data.dtype.kind not in 'fV':
            return record(data.copy(), NanToNum, (input,))[0]
        if nan is None:  # (PyTorch's default: None is 0)
            nan = 0.0
        if data.dtype.kind == 'V':  # bfloat16: NumPy's nan_to_num knows only its own dtypes
            info = backend.np_finfo(data.dtype)
            fill = [info.max if posinf is None else posinf, info.min if neginf is None else neginf, nan]
            out = xp.where(data == xp.inf, fill[0], xp.where(data == -xp.inf, fill[1],
                                                             xp.where(xp.isnan(data), fill[2], data)))
            return unary(NanToNum, input, out.astype(data.dtype), save='input')
        info = xp.finfo(data.dtype)
        out = xp.nan_to_num(data, nan=nan, posinf=info.max if posinf is None else posinf,
                            neginf=info.min if neginf is None else neginf)
        return unary(NanToNum, input, out, save='input')

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * wrap(xp.isfinite(x._data)),
