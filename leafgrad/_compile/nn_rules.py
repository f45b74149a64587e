"""Array rules for nn.functional's losses, softmaxes, convolutions and pooling.

As in ``rules.py``, each rule mirrors the eager op and the plain backward of its node: the
forward calls the same array functions the op calls (``_log_softmax_array``, ``nll_arrays``,
``conv_fwd``, ``window_max`` ...) and the backward those its node calls, in the same order,
so compiled values and gradients are eager's bit for bit. The difference is what is not done:
no tensors, no nodes, no engine walk inside the op. Data-dependent choices the eager op makes
(which targets are ignored, whether a pooling window holds NaN, whether a gradient is finite)
are made again on every call, by the same code. A rule declines what it does not mirror
(other dtypes, unbatched inputs, arguments it does not know); the call then replays through
the op itself.

A rule whose backward needs more than arrays keeps a *state* (``v<slot>s``): the forward
returns it beside the output, and the generated forward saves it only where the backward
reads it.
"""
import inspect

import numpy

from .rules import Spec, _FLOATS, _relu_derivative, _v
from ..ops._util import xp
from .. import backend
from ..backend import to_device
from .trace import Ref
from ..tensor import Tensor
from ..nn._functional.conv import ConvParams, _conv_padding
from ..nn._functional.common import ntuple
from ..autograd import grad_mode
from ..nn._functional.pooling import _pool_args
from ..nn._functional import basic, conv, loss, pooling, max_windows
from ..ops import activation

_INT64 = numpy.dtype(numpy.int64)


def _bind(call):
    """The call's arguments by parameter name, defaults filled in (None: they do not bind)."""
    try:
        bound = inspect.signature(call.fn).bind(*call.args, **call.kwargs)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    return bound.arguments


def _state(out):
    return f'v{out}s'


def _float_ref(meta, value, ndim=None):
    return type(value) is Ref and meta[value.slot][1] in _FLOATS and (ndim is None or len(meta[value.slot][0]) == ndim)


# ---- cross_entropy: log_softmax then nll_loss, as eager composes them ---------------------

def _ce_forward(x, t, weight, ignore_index, reduction):
    """F.cross_entropy of a (N, C) float array and (N,) int64 classes: the arrays its
    log_softmax and nll_loss compute, and the state their nodes keep."""
    logp = _log_softmax_array(x, 1)
    data, counted, classes, w, total = _nll_arrays(logp, t, x.shape[1], weight, ignore_index, reduction)
    return data, (logp, counted, classes, w, total, t.size, reduction)


def _ce_backward(g, state):
    """NllLossBackward0 then LogSoftmaxBackward0 of a plain backward, on arrays."""
    logp, counted, classes, w, total, n_rows, reduction = state
    dtype = logp.dtype
    if g.ndim == 0 and g.dtype == dtype and total != 0:
        scale = -g if total is None else g / -total  # (NllLossBackward0's folded coefficient)
        if w is None and counted.size == n_rows and type(logp) is not numpy.ndarray and (
                kernel := backend.fused_kernel('cross_entropy_backward', 'T logp, int64 t, T scale, int64 C', 'T out',
                                               'T e = exp(logp) * scale; out = i % C == t ? scale - e : (T)0 - e')):
            # On a GPU: the lines below in one kernel (their two scattered indexings cost CuPy
            # ~0.1 ms each), without asking the GPU about `scale` first: at 0, inf or NaN it gives
            # the general lines' numbers too.
            return kernel(logp, classes[:, None], scale, logp.shape[1])
        if w is None and counted.size == n_rows and scale != 0 and xp.isfinite(scale):
            # every row holds `scale` at its class and +0 elsewhere, so each row's sum is
            # `scale` exactly: coef - exp(y) * scale without making coef or summing it
            e = xp.exp(logp)
            e *= scale
            picked = e[counted, classes]
            xp.subtract(dtype.type(0), e, out=e)
            e[counted, classes] = scale - picked
            return e
        coef = _scattered(scale if w is None else w * scale, logp, counted, classes)
    else:
        if total is None:
            coefs = -1 if w is None else -w
        else:
            one = numpy.ones((), dtype) if type(logp) is numpy.ndarray else dtype.type(1)  # (a GPU's: a number)
            with numpy.errstate(divide='ignore', invalid='ignore'):  # (NumPy's warnings; CuPy gives none)
                coefs = (one if w is None else w) / -total
        if reduction == 'none':
            g = g[:, None]
        coef = g * _scattered(coefs, logp, counted, classes)
    return coef - xp.exp(logp) * xp.add.reduce(coef, axis=1, keepdims=True)


def _scattered(values, like, counted, classes):
    """Zeros of ``like``'s shape and dtype, on its device, holding ``values`` at the rows'
    classes."""
    coef = numpy.zeros(like.shape, like.dtype) if type(like) is numpy.ndarray else xp.zeros_like(like)
    coef[counted, classes] = values
    return coef


def _cross_entropy(call, meta):
    """F.cross_entropy of a 2-D float input and int64 class indices (optional class weights,
    any ignore_index and reduction; no label smoothing, no legacy size_average/reduce)."""
    a = _bind(call)
    if a is None or a['size_average'] is not None or a['reduce'] is not None or a['label_smoothing'] != 0.0:
        return None
    x, t, w, reduction, ignore_index = a['input'], a['target'], a['weight'], a['reduction'], a['ignore_index']
    if reduction not in ('mean', 'sum', 'none') or type(ignore_index) is not int or not _float_ref(meta, x, 2):
        return None
    xs, dt = meta[x.slot][0], meta[x.slot][1]
    if type(t) is not Ref or meta[t.slot][1] != _INT64 or meta[t.slot][0] != xs[:1]:
        return None
    if w is not None and not (type(w) is Ref and meta[w.slot][1] == dt and meta[w.slot][0] == xs[1:]):
        return None
    out = call.outs[0]

    def fwd(spec, gen):
        f = gen.const(_ce_forward, 'cross_entropy')
        vw = _v(w.slot) if w is not None else 'None'
        reads = [_v(x.slot), _v(t.slot)] + ([vw] if w is not None else [])
        gen.emit(f'{_v(out)}, {_state(out)} = {f}({_v(x.slot)}, {_v(t.slot)}, {vw}, {ignore_index}, {reduction!r})',
                 reads)

    def bwd(spec, gen, gouts, need):
        if not need[0]:
            return []
        f = gen.const(_ce_backward, 'cross_entropy_backward')
        return [(x.slot, f'{f}({gouts[0]}, {_state(out)})', [gouts[0], _state(out)])]
    return Spec(call, meta, fwd, bwd)


# ---- log_softmax and softmax --------------------------------------------------------------

def _softmax_rule(log):
    """F.log_softmax / F.softmax of a float32/float64 tensor along an int dim (no dtype)."""
    def rule(call, meta):
        a = _bind(call)
        if a is None or a['dtype'] is not None or type(a['dim']) is not int or not _float_ref(meta, a['input']):
            return None
        x = a['input']
        nd = len(meta[x.slot][0])
        if nd == 0 or not -nd <= a['dim'] < nd:
            return None
        d = a['dim'] % nd
        out = call.outs[0]

        def fwd(spec, gen):
            f = gen.const(_log_softmax_array if log else _softmax_array, 'log_softmax' if log else 'softmax')
            gen.emit(f'{_v(out)} = {f}({_v(x.slot)}, {d})', [_v(x.slot)])

        def bwd(spec, gen, gouts, need):
            g, y = gouts[0], _v(out)
            if log:  # LogSoftmaxBackward0.on_arrays
                return [(x.slot, f'{g} - xp.exp({y}) * xp.add.reduce({g}, axis={d}, keepdims=True)', [g, y])]
            # SoftmaxBackward0: y * (grad - sum(grad * y, dim, keepdim=True)), as leafgrad ops compute it
            return [(x.slot, f'{y} * ({g} - xp.asarray(xp.add.reduce({g} * {y}, axis=({d},), keepdims=True)))',
                     [g, y])]
        return Spec(call, meta, fwd, bwd)
    return rule


def _softmax_array(data, d):
    """F.softmax's forward for a float32/float64 array."""
    shifted = data - data.max(axis=d, keepdims=True) if data.size else data
    e = xp.exp(shifted)
    return e / e.sum(axis=d, keepdims=True)


# ---- dropout -------------------------------------------------------------------------------

def _dropout_noise_scaled(x, p):
    """F.dropout's multiplier for ``x`` (training, 0 < p < 1): the noise drawn as eager draws it
    (the same generator, the same order), divided by 1 - p as eager divides it."""
    noise = _dropout_noise(Tensor._wrap(x), p, False)
    d = noise.dtype
    return (noise.astype(d.type) / d.type(1 - p)).astype(d)


def _dropout(call, meta):
    """F.dropout of a float32/float64 tensor in training, 0 < p < 1, not in place: one multiply
    by the scaled noise (MulBackward0's derivative: the gradient times the noise)."""
    a = _bind(call)
    if a is None or a['inplace'] is not False or a['training'] is not True or not _float_ref(meta, a['input']):
        return None
    p = a['p']
    if type(p) not in (float, int) or not 0 < p < 1 or not all(meta[a['input'].slot][0]):
        return None
    x, o = a['input'], call.outs[0]

    def fwd(spec, gen):
        f = gen.const(_dropout_noise_scaled, 'dropout_noise')
        gen.emit(f'{_state(o)} = {f}({_v(x.slot)}, {p!r})', [_v(x.slot)])
        gen.emit(f'{_v(o)} = {_v(x.slot)} * {_state(o)}', [_v(x.slot), _state(o)])

    def bwd(spec, gen, gouts, need):
        return [(x.slot, f'{gouts[0]} * {_state(o)}', [gouts[0], _state(o)])]
    return Spec(call, meta, fwd, bwd)


# ---- conv2d -------------------------------------------------------------------------------

def _conv2d(call, meta):
    """F.conv2d of a batched (4-D) float input, a weight and an optional bias of its dtype."""
    a = _bind(call)
    if a is None:
        return None
    x, w, b = a['input'], a['weight'], a['bias']
    if not (_float_ref(meta, x, 4) and _float_ref(meta, w, 4)) or type(a['groups']) is not int:
        return None
    dt = meta[x.slot][1]
    if meta[w.slot][1] != dt or (b is not None and not (_float_ref(meta, b, 1) and meta[b.slot][1] == dt)):
        return None
    try:
        stride, dilation = ntuple(a['stride'], 2), ntuple(a['dilation'], 2)
        lo, hi = _conv_padding(a['padding'], 2, meta[w.slot][0][2:], dilation, stride)
    except (TypeError, ValueError, RuntimeError):
        return None
    p = ConvParams(stride, lo, hi, dilation, a['groups'])
    xshape, wshape = meta[x.slot][0], meta[w.slot][0]
    out = call.outs[0]

    def fwd(spec, gen):
        f, pp = gen.const(_conv_fwd, 'conv_fwd'), gen.const(p, 'conv_params')
        vx, vw, vo = _v(x.slot), _v(w.slot), _v(out)
        if spec.keeps_columns:  # (the forward without grad deletes them after this line)
            gen.emit(f'{_state(out)} = []')
            gen.emit(f'{vo} = {f}({vx}, {vw}, {pp}, {_state(out)})', [vx, vw, _state(out)])
        else:
            gen.emit(f'{vo} = {f}({vx}, {vw}, {pp})', [vx, vw])
        if b is not None:
            gen.emit(f'{vo} += {_v(b.slot)}.reshape((1, -1, 1, 1))', [vo, _v(b.slot)])

    def bwd(spec, gen, gouts, need):
        # ConvolutionBackward0: gi(g, w), gw(x, g), the bias's sum, in that order
        g, res = gouts[0], []
        pp = gen.const(p, 'conv_params')
        gi = None
        if need[0]:
            f = gen.const(_conv_gi, 'conv_gi')
            gi = (x.slot, f'{f}({g}, {_v(w.slot)}, {pp}, {xshape!r})', [g, _v(w.slot)])
            if x.slot == w.slot or not need[1]:  # (one slot: its two terms summed in eager's order)
                res.append(gi)
                gi = None
        if need[1]:
            f = gen.const(_conv_gw, 'conv_gw')
            if gi is not None:
                # the forward's im2col columns kept for the weight's gradient (the same array
                # conv_gw would make again from x), which runs first and frees them before the
                # input's gradient makes its own buffers: the step's peak does not grow. (Where
                # only the weight's gradient is needed, as in a first layer, the columns would
                # be held through the rest of the backward: made again there.)
                spec.keeps_columns = True
                res.append((w.slot, f'{f}({_v(x.slot)}, {g}, {pp}, {wshape!r}, {_state(out)}[0])',
                            [g, _v(x.slot), _state(out)]))
            else:
                res.append((w.slot, f'{f}({_v(x.slot)}, {g}, {pp}, {wshape!r})', [g, _v(x.slot)]))
        if gi is not None:  # after the weight's: the kept columns are freed before gi's own buffers are made
            res.append(gi)
        if b is not None and need[2]:
            res.append((b.slot, f'xp.asarray(xp.add.reduce({g}, axis=(0, 2, 3)))', [g]))
        return res
    spec = Spec(call, meta, fwd, bwd)
    spec.keeps_columns = False
    return spec


# ---- max_pool2d ---------------------------------------------------------------------------

def _max_pool_forward(x, k, out, args):
    """F.max_pool2d's value and the state its node keeps: the window maxima's places for
    non-overlapping windows without NaN, else the flat indices of the general loop."""
    fast = _window_max(x, k, out) if k is not None and x.size else None
    if fast is not None:
        return fast[0], ('win', fast[1])
    with grad_mode.no_grad():
        values, indices = _max_poolnd(Tensor._wrap(x), *args, True, 2)
    return values._data, ('flat', indices._data)


def _max_pool_backward(g, state, x_shape):
    """_MaxPoolBackward's plain backward on arrays."""
    kind, where = state
    if kind == 'win':
        if g.dtype.kind in 'fV' and not xp.isfinite(g.sum()):
            return _scatter_flat_array(g, _window_flat(where), x_shape)
        return _window_scatter(g, where)
    return _scatter_flat_array(g, where, x_shape)


def _scatter_flat_array(g, idx, x_shape):
    flat = _flat_index(idx, x_shape, 2)
    size = 1
    for n in x_shape:
        size *= n
    return xp.bincount(flat, weights=g.reshape(-1), minlength=size).astype(g.dtype).reshape(x_shape)


def _max_pool2d(call, meta):
    """F.max_pool2d of a batched (4-D) float tensor, without return_indices."""
    a = _bind(call)
    if a is None or a['return_indices'] is not False or not _float_ref(meta, a['input'], 4):
        return None
    x = a['input']
    xshape = meta[x.slot][0]
    args = (a['kernel_size'], a['stride'], a['padding'], a['dilation'], a['ceil_mode'])
    try:
        k, s, p, d, out, hi = _pool_args(_Shaped(xshape), *args, 2, 'max')
    except (TypeError, ValueError, RuntimeError):
        return None
    windows = s == k and not any(p) and all(v == 1 for v in d) and not any(hi)
    o = call.outs[0]

    def fwd(spec, gen):
        f = gen.const(_max_pool_forward, 'max_pool2d')
        if windows:
            gen.emit(f'{_v(o)}, {_state(o)} = {f}({_v(x.slot)}, {k!r}, {out!r}, {args!r})', [_v(x.slot)])
        else:
            gen.emit(f'{_v(o)}, {_state(o)} = {f}({_v(x.slot)}, None, None, {args!r})', [_v(x.slot)])

    def bwd(spec, gen, gouts, need):
        f = gen.const(_max_pool_backward, 'max_pool2d_backward')
        return [(x.slot, f'{f}({gouts[0]}, {_state(o)}, {xshape!r})', [gouts[0], _state(o)])]
    spec = Spec(call, meta, fwd, bwd)
    if windows and all(n > 1 for n in k):
        spec.kind, spec.pool = 'max_pool_windows', (k, out, args, xshape)
    return spec


# ---- fusion: ReLU then max pooling -----------------------------------------------------------

def fuse(parts, out_slots):
    """Fuse, in the list of (call, spec) of a program, each ReLU whose output only a max
    pooling over non-overlapping windows reads into that pooling: the pooling then runs first
    and the ReLU on its (k0 * k1 times smaller) output, in the forward and in the derivative,
    and the ReLU's full-size output is neither made nor saved. max(relu(z)) is relu(max(z)),
    and the derivative routes each window's gradient to the same element, so values and
    gradients are eager's, as numbers: a zero may carry the other sign (eager's scatter leaves
    -0.0 beside a window's max where its gradient is negative, and the ReLU then writes +0.0
    over the elements <= 0; the fused derivative has no full-size ReLU mask), and an input of
    exactly -0.0 may come out as +0.0 or the other way round. Returns how many it fused."""
    readers = {}
    for call, _ in parts:
        for s in call.ins:
            readers[s] = readers.get(s, 0) + 1
    outputs = set(out_slots)
    producer = {}
    for i, (call, spec) in enumerate(parts):
        if spec is not None and spec.kind == 'relu':
            producer[call.outs[0]] = i
    n = 0
    for i, (call, spec) in enumerate(parts):
        if spec is None or spec.kind != 'max_pool_windows':
            continue
        r = call.ins[0]
        j = producer.get(r)
        if j is None or readers.get(r) != 1 or r in outputs or parts[j][0].grad_mode != call.grad_mode:
            continue
        relu_call = parts[j][0]
        parts[j] = (relu_call, _Nothing(relu_call, spec.meta))
        parts[i] = (call, _relu_pool_spec(call, spec.meta, relu_call.ins[0], spec.pool))
        n += 1
    return n


class _Nothing(Spec):
    """A call whose work a fused spec does: no code, no gradient."""

    def __init__(self, call, meta):
        super().__init__(call, meta, lambda spec, gen: None, lambda spec, gen, gouts, need: [])


def _relu_pool_spec(call, meta, z, pool):
    k, out, args, xshape = pool
    o = call.outs[0]

    def fwd(spec, gen):
        f = gen.const(_relu_pool_forward, 'relu_max_pool2d')
        gen.emit(f'{_v(o)}, {_state(o)} = {f}({_v(z)}, {k!r}, {out!r}, {args!r})', [_v(z)])

    def bwd(spec, gen, gouts, need):
        f = gen.const(_relu_pool_backward, 'relu_max_pool2d_backward')
        return [(z, f'{f}({gouts[0]}, {_state(o)}, {xshape!r})', [gouts[0], _state(o)])]
    return Spec(call, meta, fwd, bwd)


def _relu_pool_forward(z, k, out, args):
    """max_pool2d(relu(z)) over non-overlapping windows, pooled first; where a window holds
    NaN, as eager: ReLU, then the general pooling loop."""
    fast = _window_max(z, k, out) if z.size else None
    if fast is None:
        r = xp.maximum(z, z.dtype.type(0))
        value, state = _max_pool_forward(r, k, out, args)
        return value, ('unfused', state, r)
    m, win = fast
    xp.maximum(m, m.dtype.type(0), out=m)  # (m: a new array, window_max's result)
    return m, ('fused', win, m)


def _relu_pool_backward(g, state, x_shape):
    if state[0] == 'fused':  # ReLU's derivative on the pooled gradient, then the scatter
        _, win, p = state
        return _max_pool_backward(_relu_derivative(g, p), ('win', win), x_shape)
    _, pool_state, r = state
    return _relu_derivative(_max_pool_backward(g, pool_state, x_shape), r)


class _Shaped:
    """What _pool_args reads of a tensor: an array of its shape and dtype (a broadcast zero, no
    memory), on ``device`` (None: the CPU), where what is made like it is made."""

    def __init__(self, shape, dtype=numpy.float32, device=None):
        zero = numpy.zeros((), dtype)
        if device is None:
            self._data = numpy.broadcast_to(zero, shape)
        else:
            self._data = xp.broadcast_to(to_device(zero, device), shape)


def table():
    """{op function: rule} for nn.functional's ops (see ``rules.table``)."""
    global _log_softmax_array, _nll_arrays, _conv_fwd, _conv_gi, _conv_gw, _window_max, _window_scatter
    global _window_flat, _max_poolnd, _flat_index, _dropout_noise
    _log_softmax_array, _nll_arrays = activation._log_softmax_array, loss.nll_arrays
    _conv_fwd, _conv_gi, _conv_gw = conv.conv_fwd, conv.conv_gi, conv.conv_gw
    _window_max, _window_scatter, _window_flat = max_windows.window_max, max_windows.window_scatter, \
        max_windows.window_flat
    _max_poolnd, _flat_index = pooling._max_poolnd, pooling._flat_index
    _dropout_noise = basic._dropout_noise
    return {
        loss.cross_entropy: _cross_entropy,
        activation.nn_log_softmax: _softmax_rule(True), activation.nn_softmax: _softmax_rule(False),
        basic.dropout: _dropout,
        conv.conv2d: _conv2d,
        pooling.max_pool2d: _max_pool2d,
    }
