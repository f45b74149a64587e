"""How recorded calls replay on arrays: per op, its forward and derivative as NumPy source.

Each rule looks at one recorded call (its arguments, the meta of its slots) and either
declines (the call then replays through the op itself: ``program.Island``) or returns a spec
whose ``forward(gen)`` emits the op's NumPy expression and whose ``backward(gen, gouts,
need)`` returns, per input that needs a gradient, ``(slot, expression, names read)``.

Array calls go through ``xp`` (NumPy itself on the CPU; ``backend.DeviceDispatch`` once a GPU is
in use), in the helpers here and in the generated source, whose ``xp`` is its program's (see
``program.py``); arrays the source binds as constants are put on the program's device by
``Gen.const``.

The expressions are those the eager op and its node compute (the same NumPy calls in the same
order, often the same helper functions), so compiled values and gradients are bit-identical
to eager's. A rule declines whatever it does not mirror exactly (mixed dtypes, integer
tensors, arguments it does not know).
"""
import sys

import numpy

from ..ops._util import xp
from ..tensor import Tensor
from .trace import Ref
from ..ops.shape import _transposed_buffer
from ..ops import _op, _util, elementwise as ew, indexing, reduction, shape
from ..nn import functional as F

_FLOATS = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


def _sum_to(g, shape):
    """ops._util.sum_to on arrays, as a plain backward runs it (float gradients)."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if gshape[lead:] == shape:
        return xp.add.reduce(g, axis=0 if lead == 1 else tuple(range(lead)))
    kept = tuple([i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1])
    summed = xp.add.reduce(g, axis=tuple(range(lead)) + kept, keepdims=bool(kept))
    return summed.reshape(shape) if kept else summed


def _expanded(shape, value):
    """``value`` (a 0-d gradient) expanded to ``shape`` as eager's SumBackward0/MeanBackward0
    expand it: a read-only view with zero strides. (Not a filled array: its layout decides the
    memory order NumPy gives a product with a transposed operand, and so the order in which a
    later reduction sums it; a filled one made such a sum differ from eager's by an ulp.) Made
    by the ndarray constructor: a third of broadcast_to's Python-level cost. (A GPU's gradient:
    broadcast_to's view, the same zero strides.)"""
    if type(value) is not numpy.ndarray and not isinstance(value, numpy.generic):
        return xp.broadcast_to(value, shape)
    v = numpy.asarray(value)
    out = numpy.ndarray(shape, v.dtype, v, 0, (0,) * len(shape))
    out.flags.writeable = False
    return out


def _select_backward(g, shape, index):
    out = numpy.zeros(shape, dtype=g.dtype) if type(g) is numpy.ndarray else xp.zeros_like(g, shape=shape)
    out[index] = g
    return out


class Spec:
    """A call replayed on arrays: ``fwd`` and ``bwd`` emit its code (see the module docstring)."""

    kind = None  # what a fusion (nn_rules.fuse) looks for: 'relu', 'max_pool_windows'

    def __init__(self, call, meta, fwd, bwd):
        self.call, self.meta = call, meta
        self._fwd, self._bwd = fwd, bwd

    def forward(self, gen):
        self._fwd(self, gen)

    def backward(self, gen, gouts, need):
        return self._bwd(self, gen, gouts, need)


def _v(s):
    return f'v{s}'


def _float_tensor(meta, ref):
    return type(ref) is Ref and meta[ref.slot][1] in _FLOATS


def _operand(gen, meta, value, dtype):
    """Source for a binary op's operand: a slot's array, or a Python number as eager passes it."""
    if type(value) is Ref:
        return _v(value.slot), [_v(value.slot)]
    return _number(gen, value, dtype), []


def _number(gen, value, dtype=None):
    """A Python number in generated source. Beside an array of a float ``dtype``: a 0-d array
    of that dtype holding the number, where that is the value NumPy's weak-scalar rule converts
    it to (a finite float or an int below 2**53 that stays finite in the dtype: one rounding
    either way), so the op's numbers are eager's; NumPy resolves an array operand in about
    half the time it takes for a Python number (a (16,) add: ~0.5 against ~0.9 us). Otherwise
    its literal when that reads back exactly."""
    if dtype in _FLOATS and (type(value) is float and value == value and abs(value) != float('inf')
                             or type(value) is int and abs(value) < 2 ** 53):
        with numpy.errstate(over='ignore'):
            c = numpy.array(value, dtype=dtype)
        if numpy.isfinite(c):
            c.flags.writeable = False
            return gen.const(c, 'n')
    if type(value) is float and value == value and abs(value) != float('inf'):
        return repr(value)
    if type(value) is int:
        return repr(value)
    return gen.const(value)


def _binary(op):
    """add, sub, mul, div of two float tensors of one dtype, or of a float tensor and a Python
    number, with ``alpha``/``rounding_mode`` absent."""
    symbol = {'add': '+', 'sub': '-', 'mul': '*', 'div': '/'}[op]

    def rule(call, meta):
        if call.kwargs and any(v is not None for v in call.kwargs.values()) and \
                not (op in ('add', 'sub') and call.kwargs.get('alpha', 1) == 1 and len(call.kwargs) == 1):
            return None
        if len(call.args) != 2:
            return None
        a, b = call.args
        if not _float_tensor(meta, a):
            return None
        dt = meta[a.slot][1]
        if type(b) is Ref:
            if meta[b.slot][1] != dt:
                return None
        elif type(b) not in (float, int) or isinstance(b, bool):
            return None
        out = call.outs[0]

        def fwd(spec, gen):
            x, rx = _operand(gen, meta, a, dt)
            y, ry = _operand(gen, meta, b, dt)
            vo = _v(out)
            consuming = None
            if meta[a.slot][0] == meta[out][0] and meta[out][1] == dt:
                # x made by an earlier line and read by this one only: the op in x's buffer
                # (the same ufunc on the same operands; one new array fewer)
                consuming = [(x, f'{x} {symbol}= {y}; {vo} = {x}', True)]
            gen.emit(f'{vo} = {x} {symbol} {y}', rx + ry, consuming)
            if meta[out][0]:
                gen.mark_fresh(vo)

        def bwd(spec, gen, gouts, need):
            g = gouts[0]
            res = []
            sa, sha = a.slot, meta[a.slot][0]
            shb = meta[b.slot][0] if type(b) is Ref else ()
            oshape = meta[out][0]
            st = gen.const(_sum_to, 'sum_to')

            def reduce(expr, shape, reads):
                if shape == oshape:
                    return expr, reads
                return f'{st}({expr}, {shape!r})', reads

            if op in ('add', 'sub'):
                if need[0]:
                    res.append((sa,) + reduce(g, sha, [g]))
                if type(b) is Ref and need[1]:
                    res.append((b.slot,) + reduce(g if op == 'add' else f'(-{g})', shb, [g]))
            elif op == 'mul':
                if type(b) is Ref:
                    if need[0]:
                        res.append((sa,) + reduce(f'{g} * {_v(b.slot)}', sha, [g, _v(b.slot)]))
                    if need[1]:
                        res.append((b.slot,) + reduce(f'{g} * {_v(sa)}', shb, [g, _v(sa)]))
                elif need[0]:
                    res.append((sa,) + reduce(f'{g} * {_number(gen, b, meta[out][1])}',
                                              sha, [g]))
            else:  # div
                if type(b) is Ref:
                    vb = _v(b.slot)
                    if need[0]:
                        res.append((sa,) + reduce(f'{g} / {vb}', sha, [g, vb]))
                    if need[1]:
                        # DivBackward0: -grad * ((self / other) / other), as leafgrad ops (float arrays)
                        res.append((b.slot,) + reduce(f'(-{g}) * ({_v(sa)} / {vb} / {vb})', shb, [g, _v(sa), vb]))
                elif need[0]:
                    res.append((sa,) + reduce(f'{g} / {_number(gen, b, meta[out][1])}',
                                              sha, [g]))
            return res
        return Spec(call, meta, fwd, bwd)
    return rule


def _consuming(ufunc_call):
    """The forward ``ufunc_call(x, out)`` writing into x's own buffer when the generated forward
    reads x for the last time here and nothing else holds it (not a tensor's array, not a view's
    base): the same numbers without a new buffer, as a hand-written forward would."""
    def forward(x):
        if (_COUNTS_PROVE_UNSHARED and type(x) is numpy.ndarray and x.base is None and sys.getrefcount(x) <= 3
                and x.flags.writeable and x.dtype in _FLOATS):
            return ufunc_call(x, x)
        return ufunc_call(x, None)
    return forward


def _unary(forward_fn, derivative, saves, in_place=None, consuming_forward=None):
    """A one-input float op: ``out = forward_fn(x)``; the derivative ``derivative(g, saved)``
    where saved is the input or the output (``saves``), as the eager node computes it."""
    def rule(call, meta):
        if len(call.args) != 1 or call.kwargs:
            # (F.relu(x, inplace=True) on an intermediate: replayed out of place, trace.Call.mutated)
            if not (len(call.kwargs) == 1 and call.kwargs.get('inplace', 0) in (False, bool(call.mutated))
                    and len(call.args) == 1):
                return None
        a = call.args[0]
        if not _float_tensor(meta, a):
            return None
        out = call.outs[0]

        def fwd(spec, gen):
            consuming = None
            vx, vo = _v(a.slot), _v(out)
            if consuming_forward is not None:
                c = gen.const(consuming_forward, 'consuming')
                consuming = [(vx, f'{vo} = {c}({vx})')]
                inline = _IN_PLACE.get(forward_fn) if meta[a.slot][1] in _FLOATS else None  # (the consuming's dtypes)
                if inline is not None:  # x fresh (made and read by this line only): no check at run time
                    consuming.insert(0, (vx, f'{vo} = ' + inline(gen, vx, meta[a.slot][1]), True))
            shape = meta[a.slot][0]
            if isinstance(forward_fn, numpy.ufunc):  # (the program's xp: NumPy's or the GPU's)
                gen.emit(f'{vo} = xp.{forward_fn.__name__}({vx})', [vx], consuming)
            elif forward_fn is _sigmoid_array and shape and 0 not in shape and gen.device is None:
                # _sigmoid_array written out (no call, its dtype's bound a constant)
                dt = meta[a.slot][1]
                one = gen.const(_ONES[dt], 'one')
                stable = gen.const(_stable_sigmoid, 'sigmoid')
                gen.emit(f'if {vx}.item({vx}.argmin()) >= {_SIGMOID_FAST_MIN[dt]!r}:\n'
                         f'        {vo} = xp.exp(-{vx})\n'
                         f'        {vo} += {one}\n'
                         f'        xp.reciprocal({vo}, out={vo})\n'
                         f'    else:\n'
                         f'        {vo} = {stable}({vx})', [vx])
            else:
                f = gen.const(forward_fn, getattr(forward_fn, '__name__', 'f').strip('_'))
                gen.emit(f'{vo} = {f}({vx})', [vx], consuming)
            if meta[out][0]:
                gen.mark_fresh(vo)

        def bwd(spec, gen, gouts, need):
            s = _v(out) if saves == 'output' else _v(a.slot)
            if isinstance(derivative, str):  # source, with {g}, {s} and {one}: a 0-d one of the dtype
                one = gen.const(numpy.ones((), meta[a.slot][1]), 'one')
                return [(a.slot, derivative.format(g=gouts[0], s=s, one=one), [gouts[0], s])]
            d = gen.const(derivative, 'd')
            if in_place is None:
                return [(a.slot, f'{d}({gouts[0]}, {s})', [gouts[0], s])]
            ip = gen.const(in_place, 'd')
            return [(a.slot, f'{d}({gouts[0]}, {s})', [gouts[0], s], (gouts[0], f'{ip}({gouts[0]}, {s})'))]
        spec = Spec(call, meta, fwd, bwd)
        if forward_fn is _relu_array:
            spec.kind = 'relu'
        return spec
    return rule


def _relu_array(x):
    """As eager's relu (ew.Relu): -0.0 stays -0.0, as PyTorch's (NumPy's maximum returns its
    second argument on a tie, of float32 and float64; other dtypes compare)."""
    zero = x.dtype.type(0)
    if x.dtype.kind == 'f' and x.dtype.itemsize >= 4:
        return xp.maximum(zero, x)
    return xp.where(x < zero, zero, x)


def _relu_derivative(g, r):
    """ReluBackward0 (PyTorch's threshold_backward): zero where the result is <= 0, the
    gradient elsewhere, at a NaN result too."""
    if type(r) is not numpy.ndarray and (on_gpu := ew.gpu_threshold_backward(g, r)) is not None:
        return on_gpu
    if g.shape == r.shape:
        return _relu_gradient_in_place(g.copy(), r)
    return xp.where(r <= 0, g.dtype.type(0), g)


_COUNTS_PROVE_UNSHARED = sys.implementation.name == 'cpython' and sys.version_info < (3, 14)


def _relu_derivative_consuming(g, r):
    """_relu_derivative in g's own buffer when nothing else can see it (the generated
    backward's last read of that gradient, no other name or view holding it), as eager's
    ReluBackward0 zeroes a gradient only its walk holds."""
    # the caller's local, this parameter and getrefcount's argument
    if (_COUNTS_PROVE_UNSHARED and type(g) is numpy.ndarray and g.base is None and sys.getrefcount(g) <= 3
            and g.shape == r.shape and g.flags.writeable and g.flags.c_contiguous):
        return _relu_gradient_in_place(g, r)
    return _relu_derivative(g, r)


def _linear(call, meta):
    """F.linear(x, w, b): addmm(b, x, w.t()) for 2-D input (and for contiguous input of more
    dimensions, flattened to 2-D and viewed back), mm(x, w.t()) for 2-D input without a bias."""
    args = list(call.args) + [None] * (3 - len(call.args))
    x, w, b = args[:3]
    if call.kwargs:
        if set(call.kwargs) - {'bias'}:
            return None
        b = call.kwargs.get('bias', b)
    if not (_float_tensor(meta, x) and _float_tensor(meta, w)) or (b is not None and not _float_tensor(meta, b)):
        return None
    xs, ws = meta[x.slot][0], meta[w.slot][0]
    dt = meta[x.slot][1]
    if meta[w.slot][1] != dt or (b is not None and meta[b.slot][1] != dt) or len(ws) != 2 or xs[-1:] != ws[-1:]:
        return None
    if len(xs) < 2 or (len(xs) > 2 and b is None):
        return None
    out = call.outs[0]
    oshape = meta[out][0]
    rows = (-1, xs[-1])

    def fwd(spec, gen):
        vx, vw, vo = _v(x.slot), _v(w.slot), _v(out)
        src = vx if len(xs) == 2 else f'{vx}.reshape({rows!r})'
        reads = [vx, vw]
        gen.emit(f'{vo} = {src} @ {vw}.T', reads)
        if b is not None:
            gen.emit(f'{vo} += {_v(b.slot)}', [vo, _v(b.slot)])
        if len(xs) > 2:
            if b is not None:
                gen.emit(f'{vo} = {vo}.reshape({oshape!r})', [vo])
        else:
            gen.mark_fresh(vo)  # the product's new array

    def bwd(spec, gen, gouts, need):
        g = gouts[0]
        g2 = g if len(xs) == 2 else f'{g}.reshape({(-1, ws[0])!r})'
        res = []
        x2 = _v(x.slot) if len(xs) == 2 else f'{_v(x.slot)}.reshape({rows!r})'
        if b is not None and need[2 if len(call.ins) == 3 else -1]:
            bs = meta[b.slot][0]
            st = gen.const(_sum_to, 'sum_to')
            res.append((b.slot, f'{st}({g2}, {bs!r})', [g]))
        if need[0]:
            e = f'{g2} @ {_v(w.slot)}'
            if len(xs) > 2:
                e = f'({e}).reshape({xs!r})'
            res.append((x.slot, e, [g, _v(w.slot)]))
        if need[1]:
            res.append((w.slot, f'{g2}.T @ {x2}', [g, _v(x.slot)]))
        # eager's node order: addmm(bias, x, w.t()) delivers bias, x, then w
        return res
    return Spec(call, meta, fwd, bwd)


def _sum_or_mean(mean):
    def rule(call, meta):
        if len(call.args) != 1 or call.kwargs:
            return None
        a = call.args[0]
        if not _float_tensor(meta, a):
            return None
        out = call.outs[0]
        shape = meta[a.slot][0]
        count = 1
        for n in shape:
            count *= n

        def fwd(spec, gen):
            if mean:
                # reduction.mean_array for float32/float64 NumPy arrays
                gen.emit(f'{_v(out)} = xp.asarray(xp.add.reduce({_v(a.slot)}, axis=None) / {count})',
                         [_v(a.slot)])
            else:
                gen.emit(f'{_v(out)} = xp.asarray(xp.add.reduce({_v(a.slot)}, axis=None))', [_v(a.slot)])

        def bwd(spec, gen, gouts, need):
            g = gouts[0]
            e = f'({g} / {count})' if mean else g
            f = gen.const(_expanded, 'expanded')
            return [(a.slot, f'{f}({shape!r}, {e})', [g])]
        return Spec(call, meta, fwd, bwd)
    return rule


def _getitem(call, meta):
    """t[i] with an int i on a float tensor: a select view; its derivative scatters into zeros."""
    if len(call.args) != 2 or call.kwargs:
        return None
    a, i = call.args
    if not _float_tensor(meta, a) or type(i) is not int:
        return None
    shape = meta[a.slot][0]
    if not shape or not -shape[0] <= i < shape[0]:
        return None
    i = i + shape[0] if i < 0 else i
    out = call.outs[0]

    def fwd(spec, gen):
        # (a[i] of an array of two or more dimensions is the same view; of one dimension a
        # scalar, where a[i, ...] is a 0-d view)
        index = f'{i}' if len(shape) > 1 else f'{i}, ...'
        gen.emit(f'{_v(out)} = {_v(a.slot)}[{index}]', [_v(a.slot)])

    def bwd(spec, gen, gouts, need):
        f = gen.const(_select_backward, 'select_backward')
        return [(a.slot, f'{f}({gouts[0]}, {shape!r}, {i})', [gouts[0]])]
    return Spec(call, meta, fwd, bwd)


def _reshape(call, meta):
    """reshape/view of a contiguous float tensor to a shape (ints or a tuple)."""
    if call.kwargs or not call.args or type(call.args[0]) is not Ref:
        return None
    a = call.args[0]
    if not _float_tensor(meta, a):
        return None
    for s in call.args[1:]:
        if not (type(s) is int or (isinstance(s, (tuple, list)) and all(type(n) is int for n in s))):
            return None
    out = call.outs[0]
    src, dst = meta[a.slot][0], meta[out][0]

    def fwd(spec, gen):
        gen.emit(f'{_v(out)} = {_v(a.slot)}.reshape({dst!r})', [_v(a.slot)])

    def bwd(spec, gen, gouts, need):
        return [(a.slot, f'{gouts[0]}.reshape({src!r})', [gouts[0]])]
    return Spec(call, meta, fwd, bwd)


def _view_rule(call, meta):
    """transpose(d0, d1), t(), permute(dims) of a float tensor: NumPy's views of the same
    axes; the derivative puts the gradient's axes back (the inverse permutation)."""
    if call.kwargs or not call.args or type(call.args[0]) is not Ref:
        return None
    a = call.args[0]
    if not _float_tensor(meta, a):
        return None
    nd = len(meta[a.slot][0])
    rest = call.args[1:]
    name = call.fn.__name__
    if name == 't':
        if rest or nd != 2:
            return None
        dims = (1, 0)
    elif name in ('transpose', 'swapaxes', 'swapdims'):
        if len(rest) != 2 or not all(type(d) is int and -nd <= d < nd for d in rest) or nd == 0:
            return None
        d0, d1 = rest[0] % nd, rest[1] % nd
        dims = list(range(nd))
        dims[d0], dims[d1] = d1, d0
        dims = tuple(dims)
    elif name == 'permute':
        ds = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
        if len(ds) != nd or not all(type(d) is int and -nd <= d < nd for d in ds) or nd == 0:
            return None
        dims = tuple(d % nd for d in ds)
        if len(set(dims)) != nd:
            return None
    else:
        return None
    inverse = [0] * nd
    for i, d in enumerate(dims):
        inverse[d] = i
    inverse = tuple(inverse)
    out = call.outs[0]

    def fwd(spec, gen):
        gen.emit(f'{_v(out)} = xp.transpose({_v(a.slot)}, {dims!r})', [_v(a.slot)])

    def bwd(spec, gen, gouts, need):
        if name == 't':  # TBackward0: the contiguous buffer a transposed gradient views, if it is one
            f = gen.const(_t_backward, 't_backward')
            return [(a.slot, f'{f}({gouts[0]})', [gouts[0]])]
        return [(a.slot, f'xp.transpose({gouts[0]}, {inverse!r})', [gouts[0]])]
    return Spec(call, meta, fwd, bwd)


def _t_backward(g):
    base = _transposed_buffer(g)
    return base if base is not None else g.T


def _alias(call, meta):
    """detach() and .data: the same array, no gradient."""
    if len(call.args) != 1 or call.kwargs or type(call.args[0]) is not Ref:
        return None
    a, out = call.args[0], call.outs[0]

    def fwd(spec, gen):
        gen.emit(f'{_v(out)} = {_v(a.slot)}', [_v(a.slot)])

    def bwd(spec, gen, gouts, need):
        return []
    return Spec(call, meta, fwd, bwd)


_SIGMOID_FAST_MIN = {numpy.dtype(numpy.float32): -87.0, numpy.dtype(numpy.float64): -708.0}
_ONES = {dt: numpy.ones((), dt) for dt in _FLOATS}


def _sigmoid_array(x):
    """ops._util.sigmoid_array's numbers for a float32/float64 array, its common case written out:
    1 / (1 + exp(-x)) in one buffer where no element is below exp's overflow bound (NaN
    included: the comparison fails), the stable form otherwise. (A GPU's array: the eager
    function's own path.)"""
    if type(x) is numpy.ndarray and x.ndim and x.size and x.item(x.argmin()) >= _SIGMOID_FAST_MIN[x.dtype]:
        e = numpy.exp(-x)
        e += _ONES[x.dtype]
        return numpy.reciprocal(e, out=e)
    return _eager_sigmoid_array(x)


# A one-input op written into its fresh input's buffer, as _consuming writes it after its check.
_IN_PLACE = {
    numpy.tanh: lambda gen, x, dt: f'xp.tanh({x}, out={x})',
    numpy.exp: lambda gen, x, dt: f'xp.exp({x}, out={x})',
    _relu_array: lambda gen, x, dt: f'xp.maximum({gen.const(dt.type(0), "zero")}, {x}, out={x})',  # (_relu_array's order)
}
def _stable_sigmoid(x):
    return _eager_sigmoid_array(x)


_tanh_consuming = _consuming(lambda x, out: xp.tanh(x, out=out))
_exp_consuming = _consuming(lambda x, out: xp.exp(x, out=out))
_relu_consuming = _consuming(lambda x, out: xp.maximum(x.dtype.type(0), x, out=out))  # (_relu_array's order)


def table():
    """{op function: rule}, the functions as leafgrad's modules define them."""
    global _eager_sigmoid_array, _relu_gradient_in_place
    _eager_sigmoid_array, _relu_gradient_in_place = _util.sigmoid_array, ew.relu_gradient_in_place
    data_getter = Tensor.__dict__['data'].fget
    from . import nn_rules, model_rules  # (cycle: nn_rules and model_rules import this module)
    # the derivatives as ew._tanh_derivative and ew._sigmoid_derivative compute them
    tanh = _unary(numpy.tanh, '{g} * ({one} - {s} * {s})', 'output', consuming_forward=_tanh_consuming)
    sigmoid = _unary(_sigmoid_array, '{g} * ({s} * ({one} - {s}))', 'output')
    return _every_form(nn_rules.table() | model_rules.table() | {
        ew.add: _binary('add'), ew.sub: _binary('sub'), ew.mul: _binary('mul'), ew.div: _binary('div'),
        ew.tanh: tanh, ew.sigmoid: sigmoid,
        F.tanh: tanh, F.sigmoid: sigmoid,  # (nn.functional's, without out=: nn.Tanh and nn.Sigmoid call them)
        ew.exp: _unary(numpy.exp, '{g} * {s}', 'output', consuming_forward=_exp_consuming),
        ew.relu: _unary(_relu_array, _relu_derivative, 'output', _relu_derivative_consuming, _relu_consuming),
        F.relu: _unary(_relu_array, _relu_derivative, 'output', _relu_derivative_consuming, _relu_consuming),
        F.linear: _linear,
        reduction.sum: _sum_or_mean(False), reduction.mean: _sum_or_mean(True),
        indexing.getitem: _getitem,
        shape.reshape: _reshape, shape.view: _reshape,
        shape.transpose: _view_rule, shape.t: _view_rule, shape.permute: _view_rule,
        Tensor.__dict__['detach']: _alias, data_getter: _alias,
    })


def _every_form(rules):
    """``rules`` with each declared op's rule also under its other forms (``ops/_op.py``): its
    forward (the method and operators: ``x.add(y)``, ``x + y``) and its function with out=
    are different functions of one op; and its in-place forms (``x.add_(y)``, ``x += y``), for
    the calls that may be replayed out of place."""
    for declaration in _op.every_declaration():
        forms = [getattr(holder, key) for name, holder, key in declaration.provided if name == declaration.op]
        rule = next((rules[fn] for fn in forms if fn in rules), None)
        if rule is not None:
            for fn in forms:
                rules.setdefault(fn, rule)
            out_of_place = _out_of_place(rule)
            for name, holder, key in declaration.provided:
                if name == declaration.op + '_':
                    rules.setdefault(getattr(holder, key), out_of_place)
    return rules


def _out_of_place(rule):
    """The rule of an op's in-place form: the op's own, where the tracer found that the changed
    tensor is an intermediate no other tensor shows (``trace.Call.mutated``): its value after
    the call is the op's result, computed into the output's slot."""
    def in_place_rule(call, meta):
        return rule(call, meta) if call.mutated else None
    return in_place_rule


__all__ = ['table', 'Tensor']
