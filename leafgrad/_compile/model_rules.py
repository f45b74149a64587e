"""Array rules for the ops transformers and vision models add: F.layer_norm, bmm and baddbmm,
F.avg_pool2d, F.adaptive_avg_pool2d and F.embedding.

As in ``nn_rules.py``, each forward calls the array functions the eager op calls
(``layer_norm_array``, ``avg_pool_array``, ``separable_array`` ...) and each derivative those its
node calls, in the same order, so that compiled values and gradients are eager's bit for bit.
layer_norm's derivative is the eager node's own (``norm.layer_norm_gradient_arrays``), from the
mean and 1/std its forward keeps. What an eager op checks in the data (embedding's index range) is checked
again on every call, with eager's error. A rule declines what it does not mirror (other dtypes,
bfloat16's float32 computation, options it does not know); the call then replays through the
op itself.
"""
import numpy

from .nn_rules import _bind, _float_ref, _Shaped
from .rules import Spec, _FLOATS, _sum_to, _v
from ..ops._util import xp
from .trace import Ref
from ..tensor import Tensor
from ..nn._functional import basic, norm, pooling
from ..ops import linalg


def _need_of(call, need):
    """{slot: whether its gradient is needed} (a tensor passed twice: either use)."""
    out = {}
    for s, n in zip(call.ins, need):
        out[s] = out.get(s, False) or n
    return out


def _same_float(meta, *refs):
    """Every ref a float32/float64 tensor, all of one dtype."""
    dts = {meta[r.slot][1] for r in refs}
    return all(_float_ref(meta, r) for r in refs) and len(dts) == 1


def _number(value):
    return type(value) in (int, float)


# ---- layer_norm -----------------------------------------------------------------------------

def _layer_norm_forward(x, w, b, dims, eps):
    """layer_norm_array's result, and its mean and 1/std as the state its derivative reads."""
    y, mu, rstd = _layer_norm_array(x, w, b, dims, eps)
    return y, (mu, rstd)


def _layer_norm(call, meta):
    """F.layer_norm of a float32/float64 tensor with an optional weight and bias of its dtype."""
    a = _bind(call)
    if a is None:
        return None
    x, w, b, eps = a['input'], a['weight'], a['bias'], a['eps']
    shape = a['normalized_shape']
    shape = (shape,) if type(shape) is int else shape
    if not isinstance(shape, (tuple, list)) or not all(type(n) is int for n in shape) or not _number(eps):
        return None
    refs = [r for r in (x, w, b) if r is not None]
    if not all(type(r) is Ref for r in refs) or not _same_float(meta, *refs):
        return None
    xs = meta[x.slot][0]
    k = len(shape)
    if k == 0 or len(xs) < k or xs[len(xs) - k:] != tuple(shape) or any(meta[r.slot][0] != tuple(shape)
                                                                           for r in refs[1:]):
        return None
    dims = tuple(range(len(xs) - k, len(xs)))
    o = call.outs[0]

    def fwd(spec, gen):
        f = gen.const(_layer_norm_forward, 'layer_norm')
        vw = _v(w.slot) if w is not None else 'None'
        vb = _v(b.slot) if b is not None else 'None'
        reads = [_v(r.slot) for r in refs]
        gen.emit(f'{_v(o)}, {_v(o)}s = {f}({_v(x.slot)}, {vw}, {vb}, {dims!r}, {eps!r})', reads)

    def bwd(spec, gen, gouts, need):
        n = _need_of(call, need)
        flags = (n[x.slot], w is not None and n[w.slot], b is not None and n[b.slot])
        if not any(flags):
            return []
        f = gen.const(_layer_norm_gradient_arrays, 'layer_norm_backward')
        r = f'rln{o}'  # (an 'r' name: deleted after its last read)
        vw = _v(w.slot) if w is not None else 'None'
        st = f'{_v(o)}s'  # (the forward's mean and 1/std)
        reads = [gouts[0], _v(x.slot), st] + ([vw] if w is not None else [])
        gen.emit(f'{r} = {f}({gouts[0]}, {_v(x.slot)}, {vw}, {st}[0], {st}[1], {dims!r}, {flags!r})', reads)
        # NativeLayerNormBackward0's order: input, weight, bias
        return [(ref.slot, f'{r}[{i}]', [r]) for i, ref in enumerate((x, w, b)) if flags[i]]
    return Spec(call, meta, fwd, bwd)


# ---- bmm, baddbmm ---------------------------------------------------------------------------

def _bmm(call, meta):
    """bmm(input, mat2) of two 3-D float tensors of one dtype (BmmBackward0's derivative)."""
    if call.kwargs or len(call.args) != 2:
        return None
    a, b = call.args
    if type(a) is not Ref or type(b) is not Ref or not _same_float(meta, a, b):
        return None
    sa, sb = meta[a.slot][0], meta[b.slot][0]
    if len(sa) != 3 or len(sb) != 3 or sa[0] != sb[0] or sa[2] != sb[1]:
        return None
    o = call.outs[0]

    def fwd(spec, gen):
        gen.emit(f'{_v(o)} = {_v(a.slot)} @ {_v(b.slot)}', [_v(a.slot), _v(b.slot)])

    def bwd(spec, gen, gouts, need):
        n, g, res = _need_of(call, need), gouts[0], []
        if n[a.slot]:
            res.append((a.slot, f'{g} @ xp.swapaxes({_v(b.slot)}, 1, 2)', [g, _v(b.slot)]))
        if n[b.slot]:
            res.append((b.slot, f'xp.swapaxes({_v(a.slot)}, 1, 2) @ {g}', [g, _v(a.slot)]))
        return res
    return Spec(call, meta, fwd, bwd)


def _baddbmm_forward(x, b1, b2, beta, alpha):
    return _fused_add(b1 @ b2, Tensor._wrap(x), beta, alpha, b1.dtype)


def _baddbmm(call, meta):
    """baddbmm(input, batch1, batch2, beta=, alpha=) of float tensors of one dtype, beta and alpha
    Python numbers (BaddbmmBackward0's derivative: _ScaledProductBackward's)."""
    a = _bind(call)
    if a is None:
        return None
    x, b1, b2, beta, alpha = a['input'], a['batch1'], a['batch2'], a['beta'], a['alpha']
    if not all(type(r) is Ref for r in (x, b1, b2)) or not _same_float(meta, x, b1, b2):
        return None
    if not (_number(beta) and _number(alpha)):
        return None
    s1, s2, xs = meta[b1.slot][0], meta[b2.slot][0], meta[x.slot][0]
    if len(s1) != 3 or len(s2) != 3 or s1[0] != s2[0] or s1[2] != s2[1]:
        return None
    oshape = (s1[0], s1[1], s2[2])
    try:
        if numpy.broadcast_shapes(xs, oshape) != oshape:
            return None
    except ValueError:
        return None
    o = call.outs[0]

    def fwd(spec, gen):
        f = gen.const(_baddbmm_forward, 'baddbmm')
        gen.emit(f'{_v(o)} = {f}({_v(x.slot)}, {_v(b1.slot)}, {_v(b2.slot)}, {beta!r}, {alpha!r})',
                 [_v(x.slot), _v(b1.slot), _v(b2.slot)])

    def bwd(spec, gen, gouts, need):
        n, g, res = _need_of(call, need), gouts[0], []

        def scaled(e, c):
            return e if c == 1 else f'({e}) * {c!r}'
        if n[x.slot]:
            e = scaled(g, beta)
            if xs != oshape:
                e = f'{gen.const(_sum_to, "sum_to")}({e}, {xs!r})'
            res.append((x.slot, e, [g]))
        if n[b1.slot]:
            res.append((b1.slot, scaled(f'{g} @ xp.swapaxes({_v(b2.slot)}, 1, 2)', alpha), [g, _v(b2.slot)]))
        if n[b2.slot]:
            res.append((b2.slot, scaled(f'xp.swapaxes({_v(b1.slot)}, 1, 2) @ {g}', alpha), [g, _v(b1.slot)]))
        return res
    return Spec(call, meta, fwd, bwd)


# ---- avg_pool2d, adaptive_avg_pool2d ----------------------------------------------------------

def _avg_pool2d(call, meta):
    """F.avg_pool2d of a 3-D or 4-D float tensor (AvgPool2DBackward0's spread)."""
    a = _bind(call)
    if a is None or not _float_ref(meta, a['input']):
        return None
    x = a['input']
    shape, dtype = meta[x.slot][0], meta[x.slot][1]
    if len(shape) not in (3, 4) or not all(shape):
        return None
    options = (a['kernel_size'], a['stride'], a['padding'], a['ceil_mode'], a['count_include_pad'],
               a['divisor_override'], 2)
    try:
        args = _avg_args(_Shaped(shape, dtype), *options)
    except (TypeError, ValueError, RuntimeError):
        return None
    o = call.outs[0]
    on_device = {}

    def args_for(gen):
        """The pooling's arguments, their divisor array on the program's device."""
        if gen.device is None:
            return args
        if gen.device not in on_device:
            on_device[gen.device] = _avg_args(_Shaped(shape, dtype, gen.device), *options)
        return on_device[gen.device]

    def fwd(spec, gen):
        f, pa = gen.const(_avg_pool_array, 'avg_pool2d'), gen.const(args_for(gen), 'avg_args')
        gen.emit(f'{_v(o)} = {f}({_v(x.slot)}, {pa})', [_v(x.slot)])

    def bwd(spec, gen, gouts, need):
        f, pa = gen.const(_avg_spread_array, 'avg_pool2d_backward'), gen.const(args_for(gen), 'avg_args')
        return [(x.slot, f'{f}({gouts[0]}, {pa})', [gouts[0]])]
    return Spec(call, meta, fwd, bwd)


def _adaptive_avg_pool2d(call, meta):
    """F.adaptive_avg_pool2d of a 3-D or 4-D float tensor: the mean over the plane for output
    (1, 1) (as eager, MeanBackward1's expansion), else the separable averaging matrices."""
    a = _bind(call)
    if a is None or not _float_ref(meta, a['input']):
        return None
    x = a['input']
    shape, dtype = meta[x.slot][0], meta[x.slot][1]
    if len(shape) not in (3, 4):
        return None
    size = shape[-2:]
    out = a['output_size']
    out = (out, out) if type(out) is int or out is None else out
    if not isinstance(out, (tuple, list)) or len(out) != 2 or not all(v is None or type(v) is int for v in out):
        return None
    out = tuple(size[i] if v is None else v for i, v in enumerate(out))
    if not all(v > 0 for v in out) or not all(size):
        return None
    o = call.outs[0]
    if out == (1, 1):
        dims = (len(shape) - 2, len(shape) - 1)
        count = size[0] * size[1]

        def fwd(spec, gen):  # reduction.mean_array
            gen.emit(f'{_v(o)} = xp.add.reduce({_v(x.slot)}, axis={dims!r}, keepdims=True) / {count}',
                     [_v(x.slot)])

        def bwd(spec, gen, gouts, need):  # expand(grad / count, shape): a broadcast view
            return [(x.slot, f'xp.broadcast_to({gouts[0]} / {count}, {shape!r})', [gouts[0]])]
        return Spec(call, meta, fwd, bwd)
    mats = [_adaptive_matrix(size[i], out[i]).astype(dtype) for i in range(2)]
    back = [m.T for m in mats]

    def fwd(spec, gen):
        f, m = gen.const(_separable_array, 'separable'), gen.const(mats, 'mats')
        gen.emit(f'{_v(o)} = {f}({_v(x.slot)}, {m})', [_v(x.slot)])

    def bwd(spec, gen, gouts, need):
        f, m = gen.const(_separable_array, 'separable'), gen.const(back, 'mats_t')
        return [(x.slot, f'{f}({gouts[0]}, {m})', [gouts[0]])]
    return Spec(call, meta, fwd, bwd)


# ---- embedding ------------------------------------------------------------------------------

def _embedding_forward(idx, weight, n):
    _check_embedding_indices(idx, n)
    return weight[idx]


def _embedding(call, meta):
    """F.embedding of integer indices into a float weight (padding_idx allowed; no max_norm,
    scale_grad_by_freq or sparse)."""
    a = _bind(call)
    if a is None or a['max_norm'] is not None or a['scale_grad_by_freq'] or a['sparse'] or a['_backward']:
        return None
    i, w, pad = a['input'], a['weight'], a['padding_idx']
    if type(i) is not Ref or meta[i.slot][1].kind not in 'iu' or not _float_ref(meta, w, 2):
        return None
    n = meta[w.slot][0][0]
    if pad is not None:
        if type(pad) is not int or not -n <= pad < n:
            return None
        pad = pad + n if pad < 0 else pad
    o = call.outs[0]

    def fwd(spec, gen):
        f = gen.const(_embedding_forward, 'embedding')
        gen.emit(f'{_v(o)} = {f}({_v(i.slot)}, {_v(w.slot)}, {n})', [_v(i.slot), _v(w.slot)])

    def bwd(spec, gen, gouts, need):
        if not _need_of(call, need)[w.slot]:
            return []
        f = gen.const(_embedding_grad_array, 'embedding_backward')
        return [(w.slot, f'{f}({gouts[0]}, {_v(i.slot)}, {n}, {pad!r})', [gouts[0], _v(i.slot)])]
    return Spec(call, meta, fwd, bwd)


def table():
    """{op function: rule} (see ``rules.table``)."""
    global _layer_norm_array, _layer_norm_gradient_arrays, _fused_add, _avg_args, _avg_pool_array, _avg_spread_array
    global _adaptive_matrix, _separable_array, _check_embedding_indices, _embedding_grad_array
    _layer_norm_array, _layer_norm_gradient_arrays = norm.layer_norm_array, norm.layer_norm_gradient_arrays
    _fused_add = linalg._fused_add
    _avg_args, _avg_pool_array, _avg_spread_array = pooling.avg_args, pooling.avg_pool_array, pooling.avg_spread_array
    _adaptive_matrix, _separable_array = pooling._adaptive_matrix, pooling.separable_array
    _check_embedding_indices, _embedding_grad_array = basic.check_embedding_indices, basic.embedding_grad_array
    return {
        norm.layer_norm: _layer_norm,
        linalg.bmm: _bmm, linalg.baddbmm: _baddbmm,
        pooling.avg_pool2d: _avg_pool2d, pooling.adaptive_avg_pool2d: _adaptive_avg_pool2d,
        basic.embedding: _embedding,
    }
