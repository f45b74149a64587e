"""More elementwise math: the remaining unary functions (rsqrt, expm1, log1p, the inverse
trigonometric and hyperbolic functions, erf), atan2, clamp, maximum/minimum, lerp and
nan_to_num, and the in-place variants of the elementwise family.

Each derivative is written with leafgrad ops, so that it is itself differentiable
(``create_graph=True``). Integer and bool inputs to a float function give the default float
dtype, as in PyTorch.
"""
import math

from ..autograd.graph import elementwise_jvp
from .. import backend
from . import elementwise as ew
from ._util import Node, binary_operands, broadcast_error, float_dtype_for, opmath, record, saved_output, sum_to, unary, \
    xp
from .inplace import inplace
from ..autograd.graph import _Empty
from ..tensor import Tensor


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _unary(np_fn, node_cls, save_output=False):
    """A float function of one tensor; the node saves the input (or the output)."""
    def op(input):
        x = float_dtype_for(input._data)
        with xp.errstate(divide='ignore', invalid='ignore', over='ignore'):
            # bfloat16: computed in float32 and rounded once, as PyTorch (rsqrt is two NumPy calls)
            data = np_fn(x) if x.dtype.kind != 'V' else np_fn(x.astype(xp.float32)).astype(x.dtype)
        result, node = record(data, node_cls, (input,))
        if node is not None:
            node.save(saved_output(result) if save_output else input)
        return result
    op.__name__ = np_fn.__name__
    return op


class RsqrtBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * (result * result * result) * -0.5,  # d x^(-1/2) = -1/2 x^(-3/2)


class Expm1Backward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * (result + 1),


class Log1PBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x + 1),


class Log2Backward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x * math.log(2.0)),


class Log10Backward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x * math.log(10.0)),


class TanBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * (result * result + 1),


class AsinBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ew.pow(-x * x + 1, -0.5),


class AcosBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * -ew.pow(-x * x + 1, -0.5),


class AtanBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (x * x + 1),


class SinhBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * cosh(x),


class CoshBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * sinh(x),


class AsinhBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ew.pow(x * x + 1, -0.5),


class AcoshBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ew.pow(x * x - 1, -0.5),


class AtanhBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad / (-x * x + 1),


def _erf_array(x):
    # NumPy has no erf; math.erf is exact to the last bit, elementwise (computed in float64).
    if x.dtype.kind == 'c':
        from .complex_numbers import refused
        raise refused('erf_vml_cpu', x)
    out = _ERF(x.astype(xp.float64, copy=False)) if x.size else x.astype(xp.float64)
    return xp.asarray(out, dtype=xp.float64).astype(x.dtype, copy=False)


_ERF = xp.frompyfunc(math.erf, 1, 1)
_ERFC = xp.frompyfunc(math.erfc, 1, 1)


def _erfc_array(x):
    out = _ERFC(x.astype(xp.float64, copy=False)) if x.size else x.astype(xp.float64)
    return xp.asarray(out, dtype=xp.float64).astype(x.dtype, copy=False)


class ErfBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * (ew.exp(-x * x) * (2.0 / math.sqrt(math.pi))),


class ErfcBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * (ew.exp(-x * x) * (-2.0 / math.sqrt(math.pi))),


def _erfinv_array(y):
    """erfinv: Winitzki's closed-form estimate (relative error ~2e-3), then Halley steps, each
    of which roughly triples the correct digits (in float64). For |y| >= 0.5 the steps solve
    erfc(x) = 1 - |y| instead, which keeps its digits as |y| approaches 1."""
    y64 = y.astype(xp.float64, copy=False)
    a = xp.abs(y64)
    inner = a < 1
    with xp.errstate(divide='ignore', invalid='ignore', over='ignore'):
        ln = xp.log((1 - a) * (1 + a))
        t = 2 / (math.pi * 0.147) + ln / 2
        x = xp.where(inner, xp.sqrt(xp.sqrt(t * t - ln / 0.147) - t), 0.0)
        tail = a >= 0.5
        for _ in range(4):
            # f(x) = erf(x) - a, or erfc(x) - (1 - a) = -(erf(x) - a) computed without cancellation
            f = xp.where(tail, (1 - a) - _erfc_array(x), _erf_array(x) - a)
            d = 2 / math.sqrt(math.pi) * xp.exp(-x * x)
            x = xp.where(inner, x - f / (d + x * f), x)
        x = xp.copysign(xp.where(a == 1, xp.inf, xp.where((a > 1) | xp.isnan(a), xp.nan, x)), y64)
    return x.astype(y.dtype, copy=False)


class ErfinvBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * (ew.exp(result * result) * (math.sqrt(math.pi) / 2)),


rsqrt = _unary(lambda x: 1 / xp.sqrt(x), RsqrtBackward0, save_output=True)
rsqrt.__name__ = 'rsqrt'
expm1 = _unary(xp.expm1, Expm1Backward0, save_output=True)
log1p = _unary(xp.log1p, Log1PBackward0)
log2 = _unary(xp.log2, Log2Backward0)
log10 = _unary(xp.log10, Log10Backward0)
tan = _unary(xp.tan, TanBackward0, save_output=True)
asin = _unary(xp.arcsin, AsinBackward0)
acos = _unary(xp.arccos, AcosBackward0)
atan = _unary(xp.arctan, AtanBackward0)
sinh = _unary(xp.sinh, SinhBackward0)
cosh = _unary(xp.cosh, CoshBackward0)
asinh = _unary(xp.arcsinh, AsinhBackward0)
acosh = _unary(xp.arccosh, AcoshBackward0)
atanh = _unary(xp.arctanh, AtanhBackward0)
erf = _unary(_erf_array, ErfBackward0)
erfc = _unary(_erfc_array, ErfcBackward0)
erfinv = _unary(_erfinv_array, ErfinvBackward0, save_output=True)
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


# ---- atan2 ---------------------------------------------------------------------------------

def _weighted_tangents(*pairs):
    """The sum of ``tangent * weight`` over the pairs whose tangent is not None (None if none)."""
    out = None
    for tangent, weight in pairs:
        if tangent is not None:
            term = tangent * weight
            out = term if out is None else out + term
    return out


class Atan2Backward0(Node):
    __slots__ = ('self_shape', 'other_shape')

    def jvp(self, tangents):  # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2), 0 at the origin
        y, x = self.saved_tensors
        denom = y * y + x * x
        at_origin = denom._data == 0
        if at_origin.any():
            denom = denom + ew.wrap(at_origin.astype(denom._data.dtype))
        return _weighted_tangents((tangents[0], x / denom), (tangents[1], -y / denom))

    def apply(self, grad):
        y, x = self.saved_tensors
        denom = y * y + x * x
        # at (0, 0) PyTorch's gradient is 0 (and -0), not 0/0: the numerators are 0 there
        at_origin = denom._data == 0
        if at_origin.any():
            denom = denom + ew.wrap(at_origin.astype(denom._data.dtype))
        gy = sum_to(grad * x / denom, self.self_shape) if self.next_functions[0][0] is not None else None
        gx = sum_to(grad * -y / denom, self.other_shape) if self.next_functions[1][0] is not None else None
        return gy, gx


def atan2(input, other):
    y, x = binary_operands(input, other)
    y = float_dtype_for(xp.asarray(y))
    if y.dtype.kind == 'c':
        from .complex_numbers import refused
        raise refused('atan2_cpu', y)
    try:
        data = xp.arctan2(y, xp.asarray(x).astype(y.dtype, copy=False))
    except ValueError:
        raise broadcast_error(input, other) from None
    result, node = record(data, Atan2Backward0, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = _shape(input), _shape(other)
        node.save(input, other)
    return result


arctan2 = atan2


# ---- clamp ---------------------------------------------------------------------------------

class ClampBackward1(Node):
    """clamp with number bounds: the gradient passes where min <= x <= max."""
    __slots__ = ('min', 'max')

    def apply(self, grad):
        (x,) = self.saved_tensors
        mask = x._data == x._data  # all True except NaN, as PyTorch (NaN compares false)
        if self.min is not None:
            mask = mask & (x._data >= self.min)
        if self.max is not None:
            mask = mask & (x._data <= self.max)
        return grad * ew.wrap(mask),


class ClampBackward0(Node):
    """clamp with tensor bounds; a bound gets the gradient where it was the one chosen."""
    __slots__ = ('shapes',)

    def apply(self, grad):
        # an absent bound was saved as the placeholder ``_Empty``
        x, lo, hi = [None if t is _Empty else t for t in self.saved_tensors]
        xd = x._data
        zero = grad * 0
        mask = xd == xd
        if lo is not None:
            mask = mask & (xd >= lo._data)
        if hi is not None:
            mask = mask & (xd <= hi._data)
        outs = [ew.where(ew.wrap(mask), grad, zero) if self.next_functions[0][0] is not None else None]
        if lo is not None:
            m = xd < lo._data
            if hi is not None:
                m = m & (lo._data < hi._data)
            outs.append(ew.where(ew.wrap(m), grad, zero))
        if hi is not None:
            m = xd > hi._data
            if lo is not None:
                m = m | (hi._data < lo._data)
            outs.append(ew.where(ew.wrap(m), grad, zero))
        return tuple(None if (g is None or fn is None) else sum_to(g, shape)
                     for g, (fn, _), shape in zip(outs, self.next_functions, self.shapes))


class ClampMinBackward0(ClampBackward1):
    __slots__ = ()


class ClampMaxBackward0(ClampBackward1):
    __slots__ = ()


class ClampMinBackward1(ClampBackward0):
    __slots__ = ()


class ClampMaxBackward1(ClampBackward0):
    __slots__ = ()


def clamp(input, min=None, max=None, *, _nodes=(ClampBackward1, ClampBackward0)):
    # _nodes: the node classes for number and tensor bounds (clamp_min/clamp_max name theirs apart)
    if min is None and max is None:
        raise RuntimeError("leafgrad.clamp: At least one of 'min' or 'max' must not be None")
    if input._data.dtype.kind == 'c':
        from .complex_numbers import refused
        raise refused('clamp', input._data)
    bounds = [b for b in (min, max) if b is not None]
    if any(isinstance(b, Tensor) for b in bounds):
        # a number beside a tensor bound acts as a 0-d tensor (no gradient)
        if min is not None and not isinstance(min, Tensor):
            min = ew.wrap(xp.asarray(min, dtype=backend.result_type(input, min).np))
        if max is not None and not isinstance(max, Tensor):
            max = ew.wrap(xp.asarray(max, dtype=backend.result_type(input, max).np))
        bounds = [b for b in (min, max) if b is not None]
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
    if min is not None:
        data = xp.where(data < min, dt.type(min), data)  # where, not maximum: NaN stays NaN
    if max is not None:
        data = xp.where(data > max, dt.type(max), data)
    result, node = record(data, _nodes[0], (input,))
    if node is not None:
        node.min, node.max = min, max
        node.save(input)
    return result


def clamp_min(input, min):
    return clamp(input, min=min, _nodes=(ClampMinBackward0, ClampMinBackward1))


def clamp_max(input, max):
    return clamp(input, max=max, _nodes=(ClampMaxBackward0, ClampMaxBackward1))


clip = clamp


# ---- maximum, minimum ----------------------------------------------------------------------

class MaximumBackward0(Node):
    """Where the operands tie, each gets half of the gradient (as PyTorch)."""
    __slots__ = ('self_shape', 'other_shape', 'sign')

    def jvp(self, tangents):  # the winner's tangent; at a tie the mean of both (PyTorch's rule)
        a, b = self.saved_tensors
        ad, bd = a._data, b._data
        wins = (ad > bd) if self.sign > 0 else (ad < bd)
        share = xp.where(ad == bd, 0.5, wins).astype(xp.result_type(ad, bd))
        return _weighted_tangents((tangents[0], ew.wrap(share)), (tangents[1], ew.wrap(1 - share)))

    def apply(self, grad):
        a, b = self.saved_tensors
        ad, bd = a._data, b._data
        # PyTorch's rule: half to each at a tie, nothing to the loser, all to both where a NaN
        # makes neither lose (``sign`` flips the comparisons for minimum)
        # (selected, not multiplied, as PyTorch's where/masked_fill: an infinite or NaN gradient
        # gives the loser 0, not NaN)
        a_loses, b_loses = (ad < bd, ad > bd) if self.sign > 0 else (ad > bd, ad < bd)
        tie = ad == bd
        shared = ew.where(ew.wrap(tie), grad / 2, grad) if tie.any() else grad
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = sum_to(ew.where(ew.wrap(a_loses), 0.0, shared), self.self_shape)
        if self.next_functions[1][0] is not None:
            gb = sum_to(ew.where(ew.wrap(b_loses), 0.0, shared), self.other_shape)
        return ga, gb


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()


def _extremum(input, other, np_fn, node_cls, sign):
    if not isinstance(other, Tensor):
        raise TypeError(f'{np_fn.__name__}(): argument \'other\' (position 2) must be Tensor, not '
                        f'{type(other).__name__}')
    x, y = binary_operands(input, other)
    if x.dtype.kind == 'c':
        from .complex_numbers import refused
        raise refused(np_fn.__name__, x)
    try:
        data = np_fn(x, y)
    except ValueError:
        raise broadcast_error(input, other) from None
    result, node = record(data, node_cls, (input, other))
    if node is not None:
        node.self_shape, node.other_shape, node.sign = _shape(input), _shape(other), sign
        node.save(input, other)
    return result


def _into(out, result):
    """``out=``: write the result into an existing tensor (as optimizers use it)."""
    if out is None:
        return result
    from .inplace import copy_
    return copy_(out, result)


def maximum(input, other, *, out=None):
    return _into(out, _extremum(input, other, xp.maximum, MaximumBackward0, 1))


def minimum(input, other, *, out=None):
    return _into(out, _extremum(input, other, xp.minimum, MinimumBackward0, -1))


# ---- lerp ----------------------------------------------------------------------------------

class LerpBackward0(Node):
    """lerp with a number weight."""
    __slots__ = ('weight', 'self_shape', 'end_shape')

    def jvp(self, tangents):
        return _weighted_tangents((tangents[0], 1 - self.weight), (tangents[1], self.weight))

    def apply(self, grad):
        ga = sum_to(grad * (1 - self.weight), self.self_shape) if self.next_functions[0][0] is not None else None
        gb = sum_to(grad * self.weight, self.end_shape) if self.next_functions[1][0] is not None else None
        return ga, gb


class LerpBackward1(Node):
    """lerp with a tensor weight."""
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


def lerp(input, end, weight):
    x, e = input._data, end._data
    if x.dtype.kind not in 'fV':
        from .activation import _DTYPE_LABEL
        raise NotImplementedError(f'"lerp_kernel_scalar" not implemented for \'{_DTYPE_LABEL[x.dtype.name]}\'')
    if e.dtype != x.dtype:
        raise RuntimeError(f'expected dtype {_short(x)} for `end` but got dtype {_short(e)}')
    w = weight._data if isinstance(weight, Tensor) else weight
    if isinstance(weight, Tensor) and w.dtype != x.dtype:
        raise RuntimeError(f'expected dtype {_short(x)} for `weight` but got dtype {_short(w)}')
    # PyTorch's formula: exact at both ends (weight 0 gives start, weight 1 gives end); bfloat16
    # computes in float32 (with a number weight unrounded) and rounds once
    xo, eo = opmath(x), opmath(e)
    wo = opmath(w) if isinstance(weight, Tensor) else (xp.float32(w) if xo is not x else w)
    try:
        diff = eo - xo
        data = xp.where(xp.abs(wo) < 0.5, xo + wo * diff, eo - diff * (1 - wo)).astype(x.dtype, copy=False)
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
    return {'float32': 'float', 'float64': 'double', 'float16': 'half'}.get(arr.dtype.name, arr.dtype.name)


# ---- nan_to_num ----------------------------------------------------------------------------

class NanToNumBackward0(Node):
    """The gradient passes where the input was finite."""
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ew.wrap(xp.isfinite(x._data)),


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    data = input._data
    if data.dtype.kind not in 'fV':
        return record(data.copy(), NanToNumBackward0, (input,))[0]
    if data.dtype.kind == 'V':  # bfloat16: NumPy's nan_to_num knows only its own dtypes
        info = backend.np_finfo(data.dtype)
        fill = [info.max if posinf is None else posinf, info.min if neginf is None else neginf, nan]
        out = xp.where(data == xp.inf, fill[0], xp.where(data == -xp.inf, fill[1],
                                                         xp.where(xp.isnan(data), fill[2], data)))
        return unary(NanToNumBackward0, input, out.astype(data.dtype), save='input')
    info = xp.finfo(data.dtype)
    out = xp.nan_to_num(data, nan=nan, posinf=info.max if posinf is None else posinf,
                        neginf=info.min if neginf is None else neginf)
    return unary(NanToNumBackward0, input, out, save='input')


# ---- in-place variants ---------------------------------------------------------------------

def _inplace_of(fn):
    def op_(self, *args, **kwargs):
        others = tuple(a for a in args + tuple(kwargs.values()) if isinstance(a, Tensor))
        return inplace(self, lambda s: fn(s, *args, **kwargs), others)
    op_.__name__ = fn.__name__ + '_'
    return op_


_INPLACE = {name: _inplace_of(fn) for name, fn in {
    'rsqrt': rsqrt, 'expm1': expm1, 'log1p': log1p, 'log2': log2, 'log10': log10, 'tan': tan, 'asin': asin,
    'acos': acos, 'atan': atan, 'sinh': sinh, 'cosh': cosh, 'asinh': asinh, 'acosh': acosh, 'atanh': atanh,
    'erf': erf, 'erfc': erfc, 'erfinv': erfinv, 'atan2': atan2, 'clamp': clamp, 'clip': clip, 'clamp_min': clamp_min,
    'clamp_max': clamp_max, 'lerp': lerp, 'nan_to_num': nan_to_num, 'exp': ew.exp, 'log': ew.log,
    'sqrt': ew.sqrt, 'abs': ew.abs, 'neg': ew.neg, 'sign': ew.sign, 'tanh': ew.tanh, 'sigmoid': ew.sigmoid,
    'relu': ew.relu, 'sin': ew.sin, 'cos': ew.cos, 'reciprocal': ew.reciprocal, 'square': ew.square,
    'arcsin': asin, 'arccos': acos, 'arctan': atan, 'absolute': ew.abs, 'negative': ew.neg,
    'arctan2': atan2,
}.items()}
globals().update({name + '_': fn for name, fn in _INPLACE.items()})

# in-place functions that PyTorch also exports at the top level (torch.exp_ ...); the others are
# Tensor methods only
_TOP_LEVEL_INPLACE = ['rsqrt_', 'expm1_', 'log1p_', 'log2_', 'log10_', 'tan_', 'asin_', 'acos_', 'atan_',
                      'sinh_', 'cosh_', 'asinh_', 'acosh_', 'atanh_', 'erf_', 'erfc_', 'clamp_', 'clip_',
                      'clamp_min_', 'clamp_max_', 'nan_to_num_', 'exp_', 'log_', 'sqrt_', 'abs_', 'neg_',
                      'tanh_', 'sigmoid_', 'relu_', 'sin_', 'cos_', 'reciprocal_', 'square_', 'arcsin_',
                      'arccos_', 'arctan_', 'negative_']

FUNCTIONS = ['rsqrt', 'expm1', 'log1p', 'log2', 'log10', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh',
             'acosh', 'atanh', 'arcsin', 'arccos', 'arctan', 'arcsinh', 'arccosh', 'arctanh', 'erf', 'erfc', 'erfinv',
             'atan2', 'arctan2', 'clamp', 'clip', 'clamp_min', 'clamp_max', 'maximum', 'minimum', 'lerp',
             'nan_to_num'] + _TOP_LEVEL_INPLACE
METHODS = {name + '_': fn for name, fn in _INPLACE.items() if name + '_' not in _TOP_LEVEL_INPLACE}
