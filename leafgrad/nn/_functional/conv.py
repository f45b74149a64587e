"""Convolution on strided views: no Python loop over pixels.

A convolution reads its input through a strided view (windows of the padded input: im2col
without a loop) and does one matmul. Its derivatives are two more ops of the same kind:

* ``fwd(x, w)``  the convolution,
* ``gi(g, w)``   the input gradient (a transposed convolution; col2im is a loop over the kernel
  offsets, kh * kw slice-adds of the whole batch),
* ``gw(x, g)``   the weight gradient (the windows times the gradient, one matmul).

All three are bilinear, and the derivative of each is made of the others, so convolutions
differentiate any number of times. ``conv_transpose`` is ``gi`` with a bias.
"""
import math

from ...autograd.graph import each_sample, fold_samples, self_recording
from ...backend import MetaArray
from ...ops._util import Node, as_strided_array, autocast, opmath, record, xp
from ...ops import shape as _shape
from ...ops.reduction import sum as _sum
from .common import ntuple, dtype_name
from ..._arg_parser import Overloads, refuse_arguments



def as_strided(a, shape, strides, writeable=True):
    """A strided view of ``a`` (read-only where NumPy can say so; CuPy's views are writable)."""
    return as_strided_array(a, shape, strides, writeable)


class ConvParams:
    __slots__ = ('stride', 'lo', 'hi', 'dilation', 'groups')

    def __init__(self, stride, lo, hi, dilation, groups):
        self.stride, self.lo, self.hi, self.dilation, self.groups = stride, lo, hi, dilation, groups


def _pad(x, lo, hi, value=0.0):
    """Pad the spatial dims; a negative high padding (output_padding's adjoint) crops instead."""
    if any(h < 0 for h in hi):
        x = x[(slice(None), slice(None)) + tuple(slice(0, x.shape[2 + i] + min(h, 0)) for i, h in enumerate(hi))]
        hi = tuple(max(h, 0) for h in hi)
    if not any(lo) and not any(hi):
        return x
    return xp.pad(x, [(0, 0), (0, 0)] + list(zip(lo, hi)), constant_values=value)


def _windows(xpad, k, s, d, out):
    """The (N, C, *out, *k) strided view: element [n, c, o.., i..] = xpad[n, c, o*s + i*d ..]."""
    st = xpad.strides
    nsp = len(k)
    shape = xpad.shape[:2] + tuple(out) + tuple(k)
    strides = st[:2] + tuple(st[2 + i] * s[i] for i in range(nsp)) + tuple(st[2 + i] * d[i] for i in range(nsp))
    return as_strided(xpad, shape, strides, writeable=False)


def _out_size(size, k, p, lo, hi):
    return tuple((size[i] + lo[i] + hi[i] - p.dilation[i] * (k[i] - 1) - 1) // p.stride[i] + 1
                 for i in range(len(k)))


def _cols(x, k, p, out):
    """im2col, kernel-major: (G, Cg*K, N*P), P the output positions, K the kernel offsets.

    One copy out of the strided window view, in an order that reads the input row by row."""
    n, c = x.shape[:2]
    g = p.groups
    nsp = len(k)
    win = _windows(_pad(x, p.lo, p.hi), k, p.stride, p.dilation, out)  # (N, C, *out, *k)
    # -> (C, *k, N, *out)
    order = (1,) + tuple(range(2 + nsp, 2 + 2 * nsp)) + (0,) + tuple(range(2, 2 + nsp))
    return xp.ascontiguousarray(xp.transpose(win, order)).reshape(g, (c // g) * math.prod(k), n * math.prod(out))


def _gy_rows(gy, g):
    """The output gradient as (G, Og, N*P)."""
    n, o = gy.shape[:2]
    p = math.prod(gy.shape[2:])
    return xp.ascontiguousarray(xp.transpose(gy.reshape(n, g, o // g, p), (1, 2, 0, 3))).reshape(g, o // g, n * p)


# ---- 2-d, stride 1: im2col in padded rows -------------------------------------------------
# A window view copies rows ow long: on small images NumPy's per-row loop call dominates the
# copy. With stride 1 the rows of a kernel offset, read in the padded input plane (hp x wp),
# are one run: output (i, j) reads plane position (i*wp + j) + (a*dh*wp + b*dw). So each
# (channel, offset, sample) row of the columns is one slice of the plane, L = (oh-1)*wp + ow
# long, holding the outputs at i*wp + j and, between them, wp - ow positions that wrap into
# the next row: computed, then dropped (the matmul does wp/ow times the work, one copy is
# several times cheaper). Their gradient rows are zero, so the weight gradient does not see
# them, unless the input holds inf or NaN (0 * inf): then the window path recomputes it.

ROWS_BELOW = 17  # output widths this short take the padded rows (measured: 11 gains, 26 not)


def _rows_ok(x, k, p):
    if len(k) != 2 or tuple(p.stride) != (1, 1) or not x.shape[0]:
        return False
    return x.shape[3] + p.lo[1] + p.hi[1] - p.dilation[1] * (k[1] - 1) < ROWS_BELOW


def _row_geometry(x, k, p):
    """(padded input, contiguous; oh, ow, wp, L)."""
    xpad = xp.ascontiguousarray(_pad(x, p.lo, p.hi))
    hp, wp = xpad.shape[2:]
    oh, ow = hp - p.dilation[0] * (k[0] - 1), wp - p.dilation[1] * (k[1] - 1)
    return xpad, oh, ow, wp, (oh - 1) * wp + ow


def _cols_rows(x, k, p):
    """im2col in padded rows: (G, Cg*K, N*L), rows (channel, offset) as _cols."""
    xpad, oh, ow, wp, run = _row_geometry(x, k, p)
    n, c, hp = xpad.shape[:3]
    isz = xpad.itemsize
    plane = hp * wp * isz
    view = as_strided(xpad, (c, k[0], k[1], n, run),
                      (plane, p.dilation[0] * wp * isz, p.dilation[1] * isz, c * plane, isz), writeable=False)
    g = p.groups
    return xp.ascontiguousarray(view).reshape(g, (c // g) * k[0] * k[1], n * run), (oh, ow, wp, run)


def _row_outputs(a, n, geometry):
    """The outputs of a (..., N*L) row-layout array: a (..., N, oh, ow) view."""
    oh, ow, wp, run = geometry
    isz = a.itemsize
    return as_strided(a, a.shape[:-1] + (n, oh, ow), a.strides[:-1] + (run * isz, wp * isz, isz))


def _fwd_rows(x, w, p, k, keep):
    n, o, g = x.shape[0], w.shape[0], p.groups
    cols, geo = _cols_rows(x, k, p)
    if keep is not None:
        keep.append(('rows', cols, geo))
    y = _row_outputs(xp.matmul(w.reshape(g, o // g, -1), cols), n, geo)  # (G, Og, N, oh, ow)
    return xp.ascontiguousarray(xp.moveaxis(y, 2, 0)).reshape((n, o) + geo[:2])


def _gw_rows(x, gy, p, wshape, kept):
    n, o, g = x.shape[0], wshape[0], p.groups
    cols, geo = kept[1:] if kept is not None and kept[0] == 'rows' else _cols_rows(x, wshape[2:], p)
    if geo[:2] != gy.shape[2:]:
        return None
    rows = xp.zeros((g, o // g, n * geo[3]), dtype=gy.dtype, like=gy)
    _row_outputs(rows, n, geo)[...] = xp.moveaxis(gy.reshape((n, g, o // g) + gy.shape[2:]), 0, 2)
    gwt = xp.matmul(cols, xp.swapaxes(rows, 1, 2))               # (G, CgK, Og), as conv_gw
    if gwt.dtype.kind in 'fV' and not xp.isfinite(gwt).all():
        return None  # maybe 0 * inf from a dropped position: the window path decides
    return xp.ascontiguousarray(xp.swapaxes(gwt, 1, 2)).reshape(wshape)


def conv_fwd(x, w, p, keep=None):
    """The convolution of x by w; ``keep``: a list that receives the im2col columns, which
    ``conv_gw(..., kept=)`` of the same x then uses instead of making them again."""
    n = x.shape[0]
    o, k = w.shape[0], w.shape[2:]
    g = p.groups
    if _rows_ok(x, k, p):
        return _fwd_rows(x, w, p, k, keep)
    out = _out_size(x.shape[2:], k, p, p.lo, p.hi)
    if g == 1 and keep is None and math.prod(out) >= PER_SAMPLE_FROM and x.dtype.kind == 'f':
        return _fwd_per_sample(x, w, p, k, out)
    cols = _cols(x, k, p, out)                                   # (G, CgK, N*P)
    if keep is not None:
        keep.append(('windows', cols))
    y = xp.matmul(w.reshape(g, o // g, -1), cols)                # one (batched over groups) GEMM
    y = y.reshape(g, o // g, n, math.prod(out))
    return xp.ascontiguousarray(xp.transpose(y, (2, 0, 1, 3))).reshape((n, o) + out)


# Without groups, on many output positions, the forward's product is taken per sample: the
# columns as (N, C*K, P) and w (O, C*K) times them, one GEMM a sample, give the output in its
# own (N, O, P) layout, where one GEMM over (C*K, N*P) columns gives (O, N*P) and a transposing
# copy of the whole output follows (a (64, 1, 28, 28) input by 8 3x3 kernels, caches cold:
# ~670 us against ~860 us). The weight gradient likewise reads the output gradient in its own
# layout, where its per-sample products (N, O, C*K) are small beside it (C*K <= P/4: ~800
# against ~900 us there; at C*K ~ P they cost more than the copy saves). On few positions a
# GEMM a sample costs more than the copy.
PER_SAMPLE_FROM = 256


def _sample_cols(x, k, p, out):
    """im2col a sample at a time: (N, C*K, P), rows (channel, offset) as _cols."""
    n, c = x.shape[:2]
    nsp = len(k)
    win = _windows(_pad(x, p.lo, p.hi), k, p.stride, p.dilation, out)  # (N, C, *out, *k)
    order = (0, 1) + tuple(range(2 + nsp, 2 + 2 * nsp)) + tuple(range(2, 2 + nsp))
    return xp.ascontiguousarray(xp.transpose(win, order)).reshape(n, c * math.prod(k), math.prod(out))


def _fwd_per_sample(x, w, p, k, out):
    cols = _sample_cols(x, k, p, out)
    return xp.matmul(w.reshape(w.shape[0], -1), cols).reshape((x.shape[0], w.shape[0]) + tuple(out))


def _gw_per_sample(x, gy, p, wshape):
    """The weight gradient as the sum over samples of gy_n (O, P) times cols_n^T: gy is read in
    its own layout (one GEMM over all samples needs it as (O, N*P), a transposing copy)."""
    n, o = gy.shape[:2]
    cols = _sample_cols(x, wshape[2:], p, gy.shape[2:])
    per = xp.matmul(gy.reshape(n, o, -1), xp.swapaxes(cols, 1, 2))  # (N, O, C*K)
    return xp.add.reduce(per, axis=0).reshape(wshape)


def conv_gw(x, gy, p, wshape, kept=None):
    k = wshape[2:]
    g = p.groups
    if _rows_ok(x, k, p):
        gw = _gw_rows(x, gy, p, wshape, kept)
        if gw is not None:
            return gw
    if kept is not None and kept[0] == 'windows':
        cols = kept[1]
    elif (g == 1 and math.prod(gy.shape[2:]) >= PER_SAMPLE_FROM and x.dtype.kind == 'f'
          and 4 * x.shape[1] * math.prod(k) <= math.prod(gy.shape[2:])):
        return _gw_per_sample(x, gy, p, wshape)
    else:
        cols = _cols(x, k, p, gy.shape[2:])                      # (G, CgK, N*P)
    # gw^T = cols @ gy^T: (G, CgK, N*P) @ (G, N*P, Og). OpenBLAS is several times faster with
    # the long N*P dimension contiguous on both sides than with gy @ cols^T.
    gwt = xp.matmul(cols, xp.swapaxes(_gy_rows(gy, g), 1, 2))    # (G, CgK, Og)
    return xp.ascontiguousarray(xp.swapaxes(gwt, 1, 2)).reshape(wshape)


def conv_gi(gy, w, p, xshape):
    n, c = xshape[:2]
    o, k = w.shape[0], w.shape[2:]
    g = p.groups
    cg, og = c // g, o // g
    nsp = len(k)
    out = gy.shape[2:]
    # weight as (G, K*Cg, Og), kernel-major, so that each kernel offset's block is contiguous
    wk = xp.transpose(w.reshape((g, og, cg) + tuple(k)), (0,) + tuple(range(3, 3 + nsp)) + (2, 1))
    wk = wk.reshape(g, -1, og)
    if nsp == 2 and tuple(p.stride) == (1, 1) and xp.isfinite(w).all():
        return _gi_planes(gy, wk, p, xshape, k)
    dcols = xp.matmul(wk, _gy_rows(gy, g))                       # (G, K*Cg, N*P)
    dcols = dcols.reshape((g,) + tuple(k) + (cg, n) + tuple(out))
    padded = tuple(xshape[2 + i] + p.lo[i] + max(p.hi[i], 0) for i in range(nsp))
    acc = xp.zeros((g, cg, n) + padded, dtype=gy.dtype, like=gy)
    # col2im: one slice-add of a contiguous (G, Cg, N, *out) block per kernel offset
    for offs in xp.ndindex(*k):
        sl = tuple(slice(offs[i] * p.dilation[i], offs[i] * p.dilation[i] + p.stride[i] * (out[i] - 1) + 1,
                         p.stride[i]) for i in range(nsp))
        acc[(slice(None),) * 3 + sl] += dcols[(slice(None),) + tuple(offs)]
    crop = tuple(slice(p.lo[i], p.lo[i] + xshape[2 + i]) for i in range(nsp))
    acc = acc[(slice(None),) * 3 + crop]
    # (G, Cg, N, *S) -> (N, C, *S)
    return xp.ascontiguousarray(xp.moveaxis(acc.reshape((c, n) + acc.shape[3:]), 1, 0))


def _gi_planes(gy, wk, p, xshape, k):
    """conv_gi in 2-d with stride 1, its col2im one slab per (channel, sample) plane.

    The gradient's rows are zero-padded to the padded input's width wp, so that the position
    a kernel offset (a, b) adds an output (i, j) to is i*wp + j + (a*dh*wp + b*dw) in the
    padded plane: each offset's add is then one run oh*wp long instead of oh runs ow long
    (NumPy pays a loop call per run). The padding columns hold zeros (w is finite here) and
    add zeros where they land; valid columns never run past their row."""
    n, c = xshape[:2]
    g, _, og = wk.shape
    cg = c // g
    (oh, ow), (dh, dw) = gy.shape[2:], p.dilation
    hp, wp = (xshape[2 + i] + p.lo[i] + max(p.hi[i], 0) for i in range(2))
    rows = xp.zeros((g, og, n, oh, wp), dtype=gy.dtype, like=gy)
    rows[..., :ow] = xp.moveaxis(gy.reshape((n, g, og, oh, ow)), 0, 2)
    dcols = xp.matmul(wk, rows.reshape(g, og, -1))               # (G, K*Cg, N*oh*wp)
    dcols = dcols.reshape(g, k[0] * k[1], cg, n, oh * wp)
    acc = xp.zeros((g, cg, n, hp * wp + wp), dtype=gy.dtype, like=gy)     # + wp: the last offsets' overhang
    for j, (a, b) in enumerate(xp.ndindex(*k)):
        s = a * dh * wp + b * dw
        acc[..., s:s + oh * wp] += dcols[:, j]
    acc = acc[..., :hp * wp].reshape(c, n, hp, wp)
    acc = acc[:, :, p.lo[0]:p.lo[0] + xshape[2], p.lo[1]:p.lo[1] + xshape[3]]
    return xp.ascontiguousarray(xp.moveaxis(acc, 1, 0))


# ---- the three recorded ops -------------------------------------------------------------

class ConvolutionBackward0(Node):
    """fwd(x, w) + b (a convolution), or gi(x, w) + b (a transposed convolution)."""
    __slots__ = ('params', 'transposed', 'x_shape', 'w_shape', 'bias_sizes')
    saved_names = ('input', 'weight', 'bias_sym_sizes_opt=bias_sizes', 'dilation=saved_dilation',
                   'groups=saved_groups', 'output_padding=saved_output_padding', 'padding=saved_padding',
                   'stride=saved_stride', 'transposed=transposed')
    # (PyTorch's convolution's arguments: a transposed one's output_padding is what its low and high
    # paddings differ by)
    saved_dilation = property(lambda self: tuple(self.params.dilation))
    saved_groups = property(lambda self: self.params.groups)
    saved_padding = property(lambda self: tuple(self.params.lo))
    saved_stride = property(lambda self: tuple(self.params.stride))
    saved_output_padding = property(lambda self: tuple(lo - hi if self.transposed else 0
                                                       for lo, hi in zip(self.params.lo, self.params.hi)))

    def jvp(self, tangents, output):  # bilinear: conv(tx, w) + conv(x, tw) + tb
        tx, tw, tb = tangents
        x, w = self.saved_tensors
        p = self.params
        kind, shape = ('gi', tuple(output.shape)) if self.transposed else ('fwd', None)
        out = None
        if tx is not None:  # (a batch of tangents, jacfwd's, folded into the convolution's batch)
            out = fold_samples(lambda t: _conv_op(kind, t, w, p, shape and (t._data.shape[0],) + shape[1:]), tx, 1)
        if tw is not None:
            term = each_sample(lambda t: _conv_op(kind, x, t, p, shape), tw)
            out = term if out is None else out + term
        if tb is not None:
            term = _shape.reshape(tb, (-1,) + (1,) * (len(output.shape) - 2))
            out = term if out is None else out + term
        return out

    def apply(self, grad):
        x, w = self.saved_tensors
        p = self.params
        need = [f[0] is not None for f in self.next_functions]
        gx = gw = gb = None
        if self.transposed:  # y = gi(x, w): d/dx = fwd(g, w), d/dw = gw(g, x)
            if need[0]:
                gx = _conv_op('fwd', grad, w, p, None)
            if need[1]:
                gw = _conv_op('gw', grad, x, p, self.w_shape)
        else:
            if need[0]:
                gx = _conv_op('gi', grad, w, p, self.x_shape)
            if need[1]:
                gw = _conv_op('gw', x, grad, p, self.w_shape)
        if need[2]:
            gb = _sum(grad, (0,) + tuple(range(2, grad._data.ndim)))
        return gx, gw, gb


class ConvolutionBackwardBackward0(Node):
    """gi(g, w) or gw(x, g) recorded inside a convolution's derivative."""
    __slots__ = ('params', 'kind')

    def apply(self, grad):
        a, b = self.saved_tensors
        p = self.params
        need = [f[0] is not None for f in self.next_functions]
        ga = gb = None
        if self.kind == 'gi':   # gi(g, w): d/dg = fwd(h, w), d/dw = gw(h, g)
            if need[0]:
                ga = _conv_op('fwd', grad, b, p, None)
            if need[1]:
                gb = _conv_op('gw', grad, a, p, b._data.shape)
        else:                   # gw(x, g): d/dx = gi(g, h), d/dg = fwd(x, h)
            if need[0]:
                ga = _conv_op('gi', b, grad, p, a._data.shape)
            if need[1]:
                gb = _conv_op('fwd', a, grad, p, None)
        return ga, gb

    def jvp(self, tangents, output):  # bilinear: op(ta, b) + op(a, tb)
        ta, tb = tangents
        a, b = self.saved_tensors
        p, shape = self.params, tuple(output.shape)
        out = None
        if ta is not None:
            out = each_sample(lambda t: _conv_op(self.kind, t, b, p, shape), ta)
        if tb is not None:
            term = each_sample(lambda t: _conv_op(self.kind, a, t, p, shape), tb)
            out = term if out is None else out + term
        return out


def _in_float32(kernel, a, b, *args):
    """A convolution kernel on two arrays; bfloat16 ones are computed in float32 and the result
    rounded once, as PyTorch's (oneDNN) bfloat16 convolutions accumulate."""
    if a.dtype.kind != 'V':
        return kernel(a, b, *args)
    return kernel(opmath(a), opmath(b), *args).astype(a.dtype)


def _conv_op(kind, a, b, p, shape):
    if kind == 'fwd':
        out, node = record(_in_float32(conv_fwd, a._data, b._data, p), ConvolutionBackward0, (a, b, None))
        if node is not None:
            node.params, node.transposed, node.x_shape, node.w_shape = p, False, a._data.shape, b._data.shape
            node.bias_sizes = (0,)
            node.save(a, b)
        return out
    data = _in_float32(conv_gi if kind == 'gi' else conv_gw, a._data, b._data, p, shape)
    out, node = record(data, ConvolutionBackwardBackward0, (a, b))
    if node is not None:
        node.params, node.kind = p, kind
        node.save(a, b)
    return out


self_recording.append(_conv_op)  # (the derivatives' op: forward over reverse carries tangents through it)


# ---- the public convolutions ------------------------------------------------------------

def _check_conv(input, weight, bias, nsp, groups, transposed, stride, padding, dilation):
    x, w = input._data, weight._data
    if w.ndim < 3:
        raise RuntimeError('weight should have at least three dimensions')
    if w.ndim != nsp + 2:
        # PyTorch infers the dims from the weight, then finds the stride of the wrong length
        raise RuntimeError(f'expected stride to be a single integer value or a list of {w.ndim - 2} values to match '
                           f'the convolution dimensions, but got stride={list(ntuple(stride, nsp))}')
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f'Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to conv{nsp}d, but got '
                           f'input of size: {list(x.shape)}')
    for name, v in (('stride', stride), ('padding', padding), ('dilation', dilation)):
        if isinstance(v, (tuple, list)) and len(v) not in (1, nsp):
            raise RuntimeError(f'expected {name} to be a single integer value or a list of {nsp} values to match '
                               f'the convolution dimensions, but got {name}={list(v)}')
    if any(s <= 0 for s in ntuple(stride, nsp)):
        raise RuntimeError('non-positive stride is not supported')
    if any(d <= 0 for d in ntuple(dilation, nsp)):
        raise RuntimeError(f'dilation should be greater than zero, but got {list(ntuple(dilation, nsp))}')
    if groups <= 0:
        raise RuntimeError('non-positive groups is not supported')
    if x.dtype != w.dtype:
        raise RuntimeError(f'expected scalar type {dtype_name(input)} but found {dtype_name(weight)}')
    c = x.shape[-nsp - 1]
    if w.shape[0] < groups:  # (PyTorch's doubled brackets in the second message are its own)
        raise RuntimeError(f'Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got '
                           f'weight of size {list(w.shape)} instead')
    if w.shape[0] % groups:
        raise RuntimeError(f'Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, '
                           f'but got weight of size [{list(w.shape)}] instead')
    if not transposed:
        if c != w.shape[1] * groups:
            raise RuntimeError(f'Given groups={groups}, weight of size {list(w.shape)}, expected input'
                               f'{list(x.shape)} to have {w.shape[1] * groups} channels, but got {c} channels instead')
        out_ch = w.shape[0]
    else:
        if c != w.shape[0]:
            raise RuntimeError(f'Given transposed=1, weight of size {list(w.shape)}, expected input{list(x.shape)} to '
                               f'have {w.shape[0]} channels, but got {c} channels instead')
        out_ch = w.shape[1] * groups
    if bias is not None and (bias._data.ndim != 1 or bias._data.shape[0] != out_ch):
        raise RuntimeError(f'Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with {out_ch} '
                           f'elements, but got bias of size {list(bias._data.shape)} instead')


def _conv_padding(padding, nsp, k, dilation, stride):
    if isinstance(padding, str):
        if padding == 'valid':
            return (0,) * nsp, (0,) * nsp
        if padding == 'same':
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [dilation[i] * (k[i] - 1) for i in range(nsp)]
            lo = tuple(t // 2 for t in total)
            return lo, tuple(t - l for t, l in zip(total, lo))
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    pad = ntuple(padding, nsp)
    if any(v < 0 for v in pad):
        raise RuntimeError('negative padding is not supported')
    return pad, pad


def _convnd(input, weight, bias, stride, padding, dilation, groups, nsp):
    if autocast.state.on:
        input, weight, bias = autocast.lower_precision(input, weight, bias)
    _check_conv(input, weight, bias, nsp, groups, False, stride, padding, dilation)
    if input._data.ndim == nsp + 1:  # one sample: as a batch of one (through the wrapped op: forward AD sees it)
        conv = (conv1d, conv2d, conv3d)[nsp - 1]
        return _shape.squeeze(conv(_shape.unsqueeze(input, 0), weight, bias, stride, padding, dilation, groups), 0)
    stride, dilation = ntuple(stride, nsp), ntuple(dilation, nsp)
    k = weight._data.shape[2:]
    lo, hi = _conv_padding(padding, nsp, k, dilation, stride)
    size = input._data.shape[2:]
    padded = tuple(size[i] + lo[i] + hi[i] for i in range(nsp))
    eff = tuple(dilation[i] * (k[i] - 1) + 1 for i in range(nsp))
    if any(eff[i] > padded[i] for i in range(nsp)):
        raise RuntimeError(f'Calculated padded input size per channel: ({" x ".join(map(str, padded))}). Kernel '
                           f"size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    p = ConvParams(stride, lo, hi, dilation, groups)
    x = input._data
    if type(x) is MetaArray:  # the 'meta' device: the output's shape, no windows to read
        y = MetaArray(x.shape[:1] + weight._data.shape[:1] + _out_size(size, k, p, lo, hi), x.dtype)
    else:
        y = conv_fwd(opmath(x), opmath(weight._data), p)  # (bfloat16 in float32, bias included, rounded once)
        if bias is not None:
            y += opmath(bias._data).reshape((1, -1) + (1,) * nsp)
        if y.dtype != x.dtype:
            y = y.astype(x.dtype)
    out, node = record(y, ConvolutionBackward0, (input, weight, bias))
    if node is not None:
        node.params, node.transposed = p, False
        node.x_shape, node.w_shape = input._data.shape, weight._data.shape
        node.bias_sizes = (0,) if bias is None else bias._data.shape
        node.save(input, weight)
    return out


# PyTorch's signatures: an argument that is no tensor is refused with the parser's listing of them
_CONV1D, _CONV2D, _CONV3D = (Overloads(
    f'conv{n}d', '(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, '
    'tuple of ints padding = 0, tuple of ints dilation = 1, int groups = 1)',
    '(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = "valid", '
    'tuple of ints dilation = 1, int groups = 1)') for n in (1, 2, 3))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    try:
        return _convnd(input, weight, bias, stride, padding, dilation, groups, 1)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments(overloads=_CONV1D)
        raise


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    try:
        return _convnd(input, weight, bias, stride, padding, dilation, groups, 2)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments(overloads=_CONV2D)
        raise


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    try:
        return _convnd(input, weight, bias, stride, padding, dilation, groups, 3)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments(overloads=_CONV3D)
        raise


def _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, nsp):
    if autocast.state.on:
        input, weight, bias = autocast.lower_precision(input, weight, bias)
    _check_conv(input, weight, bias, nsp, groups, True, stride, padding, dilation)
    if input._data.ndim == nsp + 1:  # one sample: as a batch of one (through the wrapped op: forward AD sees it)
        conv = (conv_transpose1d, conv_transpose2d, conv_transpose3d)[nsp - 1]
        return _shape.squeeze(conv(_shape.unsqueeze(input, 0), weight, bias, stride, padding, output_padding, groups,
                                   dilation), 0)
    stride, dilation = ntuple(stride, nsp), ntuple(dilation, nsp)
    pad, opad = ntuple(padding, nsp), ntuple(output_padding, nsp)
    for i in range(nsp):
        if opad[i] >= stride[i] and opad[i] >= dilation[i]:
            raise RuntimeError('output padding must be smaller than either stride or dilation, but got '
                               f'output_padding_height: {opad[0]} output_padding_width: {opad[-1]} stride_height: '
                               f'{stride[0]} stride_width: {stride[-1]} dilation_height: {dilation[0]} '
                               f'dilation_width: {dilation[-1]}')
    k = weight._data.shape[2:]
    n = input._data.shape[0]
    size = input._data.shape[2:]
    out = tuple((size[i] - 1) * stride[i] - 2 * pad[i] + dilation[i] * (k[i] - 1) + opad[i] + 1 for i in range(nsp))
    # output_padding: extra rows at the high end, which no window of the adjoint conv reaches
    p = ConvParams(stride, pad, tuple(pad[i] - opad[i] for i in range(nsp)), dilation, groups)
    xshape = (n, weight._data.shape[1] * groups) + out
    x = input._data
    y = conv_gi(opmath(x), opmath(weight._data), p, xshape)
    if bias is not None:
        y += opmath(bias._data).reshape((1, -1) + (1,) * nsp)
    if y.dtype != x.dtype:
        y = y.astype(x.dtype)
    out_t, node = record(y, ConvolutionBackward0, (input, weight, bias))
    if node is not None:
        node.params, node.transposed = p, True
        node.x_shape, node.w_shape = input._data.shape, weight._data.shape
        node.bias_sizes = (0,) if bias is None else bias._data.shape
        node.save(input, weight)
    return out_t


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    try:
        return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)
