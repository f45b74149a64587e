"""Pooling on strided windows, vectorised over the batch, channels and positions.

max pooling takes the argmax of each window (returned as PyTorch's flat input indices); its
derivative scatters the gradient to those indices and the derivative of that gathers, so max
pooling differentiates twice. Non-overlapping windows (the common stride == kernel) find and
scatter to their max without index arithmetic (max_windows.py). Average pooling's derivative
spreads the gradient back with one slice-add per kernel offset; its derivative is average
pooling again.
"""
import math

from ...autograd.graph import on_samples, self_recording
from ...ops._util import Node, autocast, record, wrap, xp
from ...ops import shape as _shape, elementwise as _ew
from ...tensor import Tensor
from .common import ntuple
from .conv import MetaArray, _pad, _windows
from .max_windows import window_flat, window_max, window_scatter
from ...ops.reduction import mean
from ..._arg_parser import refuse_arguments

_NAMES = {1: '1D', 2: '2D', 3: '3D'}


def _pool_out(size, k, s, p, d, ceil_mode):
    """Output length along one dim, as PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _refuse_empty_planes(shape, nsp, name):
    """PyTorch's pooling shape checks: every dimension but a batch one non-empty (a 1-d pooling's
    as its own, before it pools in 2-d; the 3-d ones' messages name their kernels)."""
    planes = shape[1:] if len(shape) == nsp + 2 else shape
    if all(planes):
        return
    sizes = list(shape)
    if nsp == 1:
        raise RuntimeError(f'{name}_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size '
                           f'for input, but got:{sizes}')
    if nsp == 2:
        raise RuntimeError(f'Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but '
                           f'got:{sizes}')
    kernel = 'max_pool3d_with_indices_out_cpu_template' if name == 'max' else f'{name}_pool3d'
    raise RuntimeError(f"{kernel}(): Expected input's non-batch dimensions to have positive length, but input has "
                       f'a shape of {sizes} and non-batch dimension 0 has length zero!')  # (sic: always 0)


def _refuse_empty_adaptive(shape, dims, name, what='input'):
    """The adaptive poolings' shape check: the ``dims`` given (PyTorch's max pooling checks every
    dim but the first, its average pooling the spatial ones) non-empty."""
    for i in dims:
        if shape[i] == 0:
            raise RuntimeError(f'{name}(): Expected {what} to have non-zero size for non-batch dimensions, but {what} '
                               f'has sizes {list(shape)} with dimension {i} being empty')


def _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, nsp, name):
    x = input._data
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f'non-empty {nsp + 1}D or {nsp + 2}D (batch mode) tensor expected for input')
    k = ntuple(kernel_size, nsp)
    s = ntuple(stride, nsp) if stride not in (None, ()) and stride != [] else k
    if 0 in s:
        raise RuntimeError('stride should not be zero')
    _refuse_empty_planes(x.shape, nsp, name)
    p = ntuple(padding, nsp)
    d = ntuple(dilation, nsp)
    for i in range(nsp):
        if p[i] * 2 > d[i] * (k[i] - 1) + 1:
            raise RuntimeError(f'pad should be at most half of effective kernel size, but got pad={p[i]}, '
                               f'kernel_size={k[i]} and dilation={d[i]}')
    size = x.shape[-nsp:]
    out = tuple(_pool_out(size[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nsp))
    if any(o <= 0 for o in out):
        c = x.shape[-nsp - 1]
        raise RuntimeError(f'Given input size: ({c}x{"x".join(map(str, size))}). Calculated output size: '
                           f'({c}x{"x".join(map(str, out))}). Output size is too small')
    # high padding so that every window (ceil_mode's last one included) lies in the array
    hi = tuple(max((out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - size[i] - p[i], 0) for i in range(nsp))
    return k, s, p, d, out, hi


# ---- max pooling --------------------------------------------------------------------------

class _MaxPoolBackward(Node):
    """Scatters the gradient to each window's max: through the saved flat indices, or, for
    non-overlapping windows, through ``win`` (max_windows.Windows) without index arithmetic."""
    __slots__ = ('nsp', 'win', 'given')
    saved_names = ('self', 'result1=saved_indices')

    @property
    def saved_indices(self):  # (the indices output; non-overlapping windows keep none until asked)
        saved = self.saved_tensors
        if len(saved) > 1:
            return saved[1]
        flat = window_flat(self.win)
        return wrap(flat[0] if saved[0]._data.ndim == self.nsp + 1 else flat)

    def jvp(self, tangents):  # each output is one input element: the tangent gathered at the maxima
        saved = self.saved_tensors
        if self.win is not None:
            flat = window_flat(self.win)
            idx = flat[0] if saved[0]._data.ndim == self.nsp + 1 else flat
        else:
            idx = saved[1]._data
        return on_samples(lambda t: _gather_flat(t, wrap(xp.broadcast_to(idx, t._data.shape[:-self.nsp] + idx.shape[-self.nsp:])),
                                                 self.nsp), tangents[0])

    def apply(self, grad):
        saved = self.saved_tensors
        x = saved[0]
        if self.win is not None:
            return _scatter_windows(grad, self.win, x, type(self)),
        return _scatter_flat(grad, saved[1], x._data.shape, self.nsp, x, type(self)),


class _MaxPoolWithIndicesBackward(_MaxPoolBackward):
    """max_pool's node: beside the input and the indices, its arguments as PyTorch's node keeps
    them (sizes for every dim; no stride given: ())."""
    __slots__ = ()
    saved_names = ('self', 'result1=saved_indices', 'ceil_mode=saved_ceil_mode', 'dilation=saved_dilation',
                   'kernel_size=saved_kernel_size', 'padding=saved_padding', 'stride=saved_stride')
    saved_kernel_size = property(lambda self: self.given[0])
    saved_stride = property(lambda self: self.given[1])
    saved_padding = property(lambda self: self.given[2])
    saved_dilation = property(lambda self: self.given[3])
    saved_ceil_mode = property(lambda self: self.given[4])


class MaxPool1DWithIndicesBackward0(_MaxPoolWithIndicesBackward):
    __slots__ = ()


class MaxPool2DWithIndicesBackward0(_MaxPoolWithIndicesBackward):
    __slots__ = ()


class MaxPool3DWithIndicesBackward0(_MaxPoolWithIndicesBackward):
    __slots__ = ()


_MAX_POOL_NODES = {1: MaxPool1DWithIndicesBackward0, 2: MaxPool2DWithIndicesBackward0,
                   3: MaxPool3DWithIndicesBackward0}


class MaxPoolWithIndicesBackwardBackward0(Node):
    """The scatter in max pooling's derivative; its own derivative gathers. Like PyTorch's, it
    also takes the pooled input, whose gradient is zero. Named after the forward's node, as
    PyTorch names it (MaxPool2DWithIndicesBackwardBackward0)."""
    __slots__ = ('nsp', 'forward_cls')

    def apply(self, grad):
        (idx,) = self.saved_tensors
        gx = wrap(xp.zeros_like(grad._data)) if self.next_functions[1][0] is not None else None
        return _gather_flat(grad, idx, self.nsp), gx

    def jvp(self, tangents, output):  # linear in the gradient: its tangent scattered the same way
        t = tangents[0]
        if t is None:  # (the pooled input's tangent contributes nothing)
            return None
        (idx,) = self.saved_tensors
        nsp, spatial = self.nsp, tuple(output.shape)[-self.nsp:]
        return on_samples(lambda p: _scatter_flat(p, _lead_like(idx, p, nsp), p._data.shape[:-nsp] + spatial, nsp,
                                                  forward_cls=self.forward_cls), t)

    def name(self):
        return self.forward_cls.__name__.replace('Backward0', 'BackwardBackward0')


class GatherFlatBackward(Node):
    __slots__ = ('x_shape', 'nsp')

    def apply(self, grad):
        (idx,) = self.saved_tensors
        return _scatter_flat(grad, idx, self.x_shape, self.nsp),

    def jvp(self, tangents):  # linear: the tangent gathered the same way
        (idx,) = self.saved_tensors
        return on_samples(lambda p: _gather_flat(p, _lead_like(idx, p, self.nsp), self.nsp), tangents[0])


def _lead_like(idx, t, nsp):
    """The spatial indices ``idx`` broadcast to the leading dims of ``t`` (a batch of tangents'
    physical array)."""
    return wrap(xp.broadcast_to(idx._data, t._data.shape[:-nsp] + idx._data.shape[-nsp:]))

    def name(self):
        return 'MaxPool2DWithIndicesBackwardBackward0'


def _flat_index(idx, x_shape, nsp):
    """Indices into the flattened array: per-(n, c) spatial indices offset by their plane."""
    nc = math.prod(x_shape[:-nsp])
    plane = math.prod(x_shape[-nsp:])
    per = math.prod(idx.shape[-nsp:])
    return (idx.reshape(nc, per) + (xp.arange(nc, like=idx) * plane)[:, None]).reshape(-1)


def _scatter_flat(grad, idx, x_shape, nsp, x=None, forward_cls=MaxPool2DWithIndicesBackward0):
    """Zeros of x_shape with grad added at the spatial indices idx (repeats sum): one bincount."""
    flat = _flat_index(idx._data, x_shape, nsp)
    g = grad._data.reshape(-1)
    data = xp.bincount(flat, weights=g, minlength=math.prod(x_shape)).astype(g.dtype).reshape(x_shape)
    out, node = record(data, MaxPoolWithIndicesBackwardBackward0, (grad, x))
    if node is not None:
        node.nsp, node.forward_cls = nsp, forward_cls
        node.save(idx)
    return out


def _gather_flat(t, idx, nsp):
    flat = _flat_index(idx._data, t._data.shape, nsp)
    data = t._data.reshape(-1)[flat].reshape(idx._data.shape)
    out, node = record(data, GatherFlatBackward, (t,))
    if node is not None:
        node.x_shape, node.nsp = t._data.shape, nsp
        node.save(idx)
    return out


def _scatter_windows(grad, win, x, forward_cls):
    """max pooling's derivative for non-overlapping windows (win: max_windows.Windows)."""
    g = grad._data
    unbatched = g.ndim == len(win.x_shape) - 1

    def indices():
        flat = window_flat(win)
        return wrap(flat[0] if unbatched else flat)
    if g.dtype.kind in 'fV' and not xp.isfinite(g.sum()):
        # inf or NaN must not leak into the other window positions (as 0 * inf): the
        # bincount (an overflowing sum of finite values lands here too, and is still right)
        return _scatter_flat(grad, indices(), x._data.shape, len(win.k), x, forward_cls)
    data = window_scatter(g[None] if unbatched else g, win)
    out, node = record(data[0] if unbatched else data, MaxPoolWithIndicesBackwardBackward0, (grad, x))
    if node is not None:  # differentiated again: the gather needs the flat indices
        node.nsp, node.forward_cls = len(win.k), forward_cls
        node.save(indices())
    return out


# the derivatives' ops, recording their own nodes: forward over reverse carries tangents through them
self_recording.extend((_scatter_flat, _gather_flat, _scatter_windows))


def _given(kernel_size, stride, padding, dilation, ceil_mode, nsp):
    """A pooling's arguments as PyTorch's node keeps them."""
    given_stride = () if stride is None or stride == () or stride == [] else ntuple(stride, nsp)
    return ntuple(kernel_size, nsp), given_stride, ntuple(padding, nsp), ntuple(dilation, nsp), ceil_mode


def _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nsp):
    k, s, p, d, out, hi = _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, nsp, 'max')
    given = _given(kernel_size, stride, padding, dilation, ceil_mode, nsp)
    unbatched = input._data.ndim == nsp + 1
    if type(input._data) is MetaArray:  # the 'meta' device: the output's shape, no windows to read
        shape = input._data.shape[:-nsp] + tuple(out)
        result, node = record(MetaArray(shape, input._data.dtype), _MAX_POOL_NODES[nsp], (input,))
        indices = wrap(MetaArray(shape, xp.int64))
        if node is not None:
            node.nsp, node.win, node.given = nsp, None, given
            node.save(input, indices)
        return (result, indices) if return_indices else result
    x = input._data[None] if unbatched else input._data
    n, c = x.shape[:2]
    size = x.shape[2:]
    fast = None
    windows = s == k and not any(p) and all(v == 1 for v in d) and not any(hi)  # non-overlapping
    if windows and x.size and x.dtype.kind in 'fiu':
        fast = window_max(x, k, out)
    if fast is not None:
        values, win = fast
        cls = _MAX_POOL_NODES[nsp]
        result, node = record(values[0] if unbatched else values, cls, (input,))
        indices = None
        if return_indices:
            flat = window_flat(win)
            indices = wrap(flat[0] if unbatched else flat)
        if node is not None:
            node.nsp, node.win, node.given = nsp, win, given
            if return_indices:  # saved for its version check: PyTorch saves the indices
                node.save(input, indices)
            else:
                node.save(input)
        return (result, indices) if return_indices else result
    fill = -xp.inf if x.dtype.kind in 'fV' else xp.iinfo(x.dtype).min
    xpad = _pad(x, p, hi, fill)
    # a running max over the kernel offsets (k slices of the whole batch); as PyTorch, a later
    # element wins only if greater, or NaN
    values = arg = None
    for j, offs in enumerate(xp.ndindex(*k)):
        sl = tuple(slice(offs[i] * d[i], offs[i] * d[i] + s[i] * (out[i] - 1) + 1, s[i]) for i in range(nsp))
        v = xpad[(slice(None), slice(None)) + sl]
        if values is None:
            values, arg = v.copy(), xp.zeros(v.shape, dtype=xp.int64, like=v)
            continue
        upd = v > values
        if x.dtype.kind in 'fV':
            upd |= xp.isnan(v)
        values = xp.maximum(values, v)  # NaN propagates, as the rule above keeps it
        arg[upd] = j
    # window position -> input position -> flat spatial index
    koff = xp.unravel_index(arg, k)
    flat = xp.zeros(arg.shape, dtype=xp.int64, like=arg)
    for i in range(nsp):
        o = xp.arange(out[i], like=arg).reshape((-1,) + (1,) * (nsp - 1 - i)) * s[i] - p[i]
        flat = flat * size[i] + (o + koff[i] * d[i])
    cls = _MAX_POOL_NODES[nsp]
    if unbatched:
        values, flat = values[0], flat[0]
    result, node = record(xp.ascontiguousarray(values), cls, (input,))
    indices = wrap(flat)
    if node is not None:
        node.nsp, node.win, node.given = nsp, None, given
        node.save(input, indices)
    return (result, indices) if return_indices else result


def _via_2d(fn, input, *args):
    """PyTorch's 1-d pooling: unsqueeze, 2-d pooling with a 1-high kernel, squeeze."""
    x = _shape.unsqueeze(input, -2)
    out = fn(x, *args)
    if isinstance(out, tuple):
        return _shape.squeeze(out[0], -2), _shape.squeeze(out[1], -2)
    return _shape.squeeze(out, -2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    try:
        if input._data.ndim not in (2, 3):
            raise RuntimeError(f'max_pool1d() Expected 2D or 3D input tensor, but got {list(input._data.shape)}')
        _refuse_empty_planes(input._data.shape, 1, 'max')
        k = (1,) + ntuple(kernel_size, 1)
        s = k if stride is None or stride == [] else (1,) + ntuple(stride, 1)
        # (through max_pool2d as bound here: forward AD and vmap see the 2-d pooling as an op)
        return _via_2d(max_pool2d, input, k, s, (0,) + ntuple(padding, 1), (1,) + ntuple(dilation, 1), ceil_mode,
                       return_indices)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    try:
        return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if autocast.state.on:
        input, = autocast.fp32(input)
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)




# ---- average pooling --------------------------------------------------------------------

class _AvgPoolBackward(Node):
    __slots__ = ('args',)
    saved_names = ('self', 'ceil_mode=saved_ceil_mode', 'count_include_pad=saved_count_include_pad',
                   'divisor_override=saved_divisor_override', 'kernel_size=saved_kernel_size',
                   'padding=saved_padding', 'stride=saved_stride')
    # (the pooling's arguments as PyTorch's node keeps them)
    saved_kernel_size = property(lambda self: self.args.given[0])
    saved_stride = property(lambda self: self.args.given[1])
    saved_padding = property(lambda self: self.args.given[2])
    saved_ceil_mode = property(lambda self: self.args.given[4])
    saved_count_include_pad = property(lambda self: self.args.given[5])
    saved_divisor_override = property(lambda self: self.args.given[6])

    def jvp(self, tangents):  # linear: the tangent pooled
        a, t = self.args, tangents[0]
        if type(t) is Tensor:
            return _avg_pool_op(t, a)
        return on_samples(lambda p: _on_planes(lambda x: _avg_pool_op(x, a.batched()), p, a.nsp), t)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return _avg_spread(grad, self.args, x),


class AvgPool1DBackward0(_AvgPoolBackward):
    __slots__ = ()


class AvgPool2DBackward0(_AvgPoolBackward):
    __slots__ = ()


class AvgPool3DBackward0(_AvgPoolBackward):
    __slots__ = ()


class AvgPoolBackwardBackward0(Node):
    """Average pooling's derivative spreads; its derivative pools. Like PyTorch's, it also takes
    the pooled input, whose gradient is zero."""
    __slots__ = ('args',)

    def apply(self, grad):
        gx = wrap(xp.zeros_like(grad._data)) if self.next_functions[1][0] is not None else None
        return _avg_pool_op(grad, self.args), gx

    def jvp(self, tangents):  # linear in the gradient: its tangent spread the same way
        a, t = self.args, tangents[0]
        if t is None:  # (the pooled input's tangent contributes nothing)
            return None
        if type(t) is Tensor:
            return _avg_spread(t, a)
        return on_samples(lambda p: _on_planes(lambda g: _avg_spread(g, a.batched()), p, a.nsp), t)


class _AvgArgs:
    __slots__ = ('k', 's', 'p', 'hi', 'out', 'x_shape', 'divisor', 'nsp', 'unbatched', 'given')

    def batched(self):
        """The same pooling of a batch (N, C, *spatial)."""
        a = _AvgArgs()
        for name in self.__slots__:
            setattr(a, name, getattr(self, name))
        a.unbatched = False
        return a


def _on_planes(fn, t, nsp):
    """``fn`` of a batch (N, C, *spatial) applied to ``t`` of any number of leading dims (a
    batch of tangents' physical array): those folded into N, then unfolded."""
    lead = t._data.shape[:-(nsp + 1)]
    out = fn(_shape.reshape(t, (-1,) + t._data.shape[-(nsp + 1):]))
    return _shape.reshape(out, lead + out._data.shape[1:])


def _divisor(size, k, s, p, out, count_include_pad, divisor_override, dtype, like):
    if divisor_override:
        return dtype.type(divisor_override)
    div = None
    for i in range(len(k)):
        start = xp.arange(out[i], like=like) * s[i] - p[i]
        end = xp.minimum(start + k[i], size[i] + p[i])
        count = end - start if count_include_pad else xp.minimum(end, size[i]) - xp.maximum(start, 0)
        count = count.reshape((-1,) + (1,) * (len(k) - 1 - i))
        div = count if div is None else div * count
    return div.astype(dtype)


def _avg_pool_op(t, a):
    """Sum of each window divided by its divisor (the forward, also the spread's derivative)."""
    data = avg_pool_array(t._data, a)
    cls = {1: AvgPool1DBackward0, 2: AvgPool2DBackward0, 3: AvgPool3DBackward0}[a.nsp]
    out, node = record(data, cls, (t,))
    if node is not None:
        node.args = a
        node.save(t)
    return out


def avg_pool_array(x, a):
    """Average pooling of the array ``x`` as ``a`` (_AvgArgs) describes it."""
    x = x[None] if a.unbatched else x
    win = _windows(_pad(x, a.p, a.hi), a.k, a.s, (1,) * a.nsp, a.out)
    data = win.sum(axis=tuple(range(-a.nsp, 0))) / a.divisor
    return data[0] if a.unbatched else data


def avg_spread_array(grad, a):
    """Average pooling's derivative on arrays: each output's gradient / divisor added back over
    its window, one slice-add per kernel offset."""
    g = (grad[None] if a.unbatched else grad) / a.divisor
    n, c = g.shape[:2]  # (a batch of tangents folded into n: more than x's)
    padded = tuple(a.x_shape[-a.nsp + i] + a.p[i] + a.hi[i] for i in range(a.nsp))
    acc = xp.zeros((n, c) + padded, dtype=grad.dtype, like=grad)
    for offs in xp.ndindex(*a.k):
        sl = tuple(slice(offs[i], offs[i] + a.s[i] * (a.out[i] - 1) + 1, a.s[i]) for i in range(a.nsp))
        acc[(slice(None), slice(None)) + sl] += g
    crop = tuple(slice(a.p[i], a.p[i] + a.x_shape[-a.nsp + i]) for i in range(a.nsp))
    data = xp.ascontiguousarray(acc[(slice(None), slice(None)) + crop])
    return data[0] if a.unbatched else data


def _avg_spread(grad, a, x=None):
    """Each output's gradient / divisor added back over its window (``avg_spread_array``)."""
    out, node = record(avg_spread_array(grad._data, a), AvgPoolBackwardBackward0, (grad, x))
    if node is not None:
        node.args = a
    return out


self_recording.append(_avg_spread)  # (a derivative's op: forward over reverse carries tangents through it)


def avg_args(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nsp):
    """The _AvgArgs of an average pooling of ``input`` (what it reads: ``input._data``'s shape
    and dtype), with PyTorch's errors."""
    k, s, p, d, out, hi = _pool_args(input, kernel_size, stride, padding, 1, ceil_mode, nsp, 'avg')
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError('divisor must be not zero')
    a = _AvgArgs()
    a.k, a.s, a.p, a.hi, a.out, a.x_shape, a.nsp = k, s, p, hi, out, input._data.shape, nsp
    a.given = _given(kernel_size, stride, padding, 1, ceil_mode, nsp) + (count_include_pad, divisor_override)
    a.unbatched = input._data.ndim == nsp + 1
    a.divisor = _divisor(input._data.shape[-nsp:], k, s, p, out, count_include_pad, divisor_override,
                         input._data.dtype, input._data)
    return a


def _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nsp):
    return _avg_pool_op(input, avg_args(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                        divisor_override, nsp))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    try:
        if input._data.ndim not in (2, 3):
            raise RuntimeError(f'avg_pool1d() Expected 2D or 3D input tensor, but got {list(input._data.shape)}')
        k = (1,) + ntuple(kernel_size, 1)
        s = k if stride is None or stride == [] else (1,) + ntuple(stride, 1)
        return _via_2d(avg_pool2d, input, k, s, (0,) + ntuple(padding, 1), ceil_mode, count_include_pad, None)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    try:
        return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if autocast.state.on:
        input, = autocast.fp32(input)
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


# ---- separable linear resampling: adaptive average pooling, interpolation ----------------

class _SeparableBackward(Node):
    """y = A_1 · x · A_2^T along the spatial dims, A constant: dx = A_1^T · dy · A_2."""
    __slots__ = ('mats',)

    def jvp(self, tangents):  # linear along the trailing spatial dims: the tangent resampled
        return on_samples(lambda t: _separable(t, self.mats, type(self)), tangents[0])

    def apply(self, grad):
        (x,) = self.saved_tensors
        return _separable(grad, [m.T for m in self.mats], SeparableBackwardBackward0, x, type(self)),


class SeparableBackwardBackward0(Node):
    """The derivative of a resampling (linear in the gradient; like PyTorch's, it also takes
    the resampled input, whose gradient is zero)."""
    __slots__ = ('mats', 'forward_cls')

    def jvp(self, tangents):  # linear in the gradient (the input's tangent contributes nothing)
        if tangents[0] is None:
            return None
        return on_samples(lambda t: _separable(t, self.mats, self.forward_cls), tangents[0])

    def apply(self, grad):
        gx = wrap(xp.zeros_like(grad._data)) if self.next_functions[1][0] is not None else None
        return _separable(grad, [m.T for m in self.mats], self.forward_cls), gx

    def name(self):
        return self.forward_cls.__name__.replace('Backward0', 'BackwardBackward0')


def _separable(input, mats, cls, x=None, forward_cls=None):
    """Apply mats[i] (out_i x in_i) along spatial dim i: one matmul per spatial dim."""
    data = input._data
    out, node = record(separable_array(data, mats), cls, (input,) if x is None else (input, x))
    if node is not None:
        node.mats = [m.astype(data.dtype) for m in mats]
        if x is None:
            node.save(input)
        else:
            node.forward_cls = forward_cls
    return out


self_recording.append(_separable)  # (a derivative's op: forward over reverse carries tangents through it)


def separable_array(data, mats):
    """``_separable`` on arrays: mats[i] applied along spatial dim i, one matmul per dim."""
    nsp = len(mats)
    y = data
    for i, m in enumerate(mats):
        y = xp.moveaxis(xp.moveaxis(y, data.ndim - nsp + i, -1) @ m.T, -1, data.ndim - nsp + i)
    return xp.ascontiguousarray(y)


class AdaptiveAvgPool1DBackward0(_SeparableBackward):
    __slots__ = ()


class AdaptiveAvgPool2DBackward0(_SeparableBackward):
    __slots__ = ()

    def apply(self, grad):  # (PyTorch's backward checks every dim of the gradient but the first)
        _refuse_empty_adaptive(grad._data.shape, range(1, grad._data.ndim), 'adaptive_avg_pool2d_backward',
                               'grad_output')
        return super().apply(grad)


class AdaptiveAvgPool3DBackward0(_SeparableBackward):
    __slots__ = ()


def _adaptive_matrix(size, out, like=None):
    """Row i averages input[floor(i*size/out) : ceil((i+1)*size/out)], as PyTorch's windows
    (made where ``like`` lives)."""
    i = xp.arange(out, like=like)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    j = xp.arange(size, like=like)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return inside / (end - start)[:, None]


def _adaptive_avg_poolnd(input, output_size, nsp):
    try:
        x = input._data
    except AttributeError:  # (PyTorch's Python reads input.size() first: its error for a non-tensor)
        input.size()
        raise
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f'adaptive_avg_pool{nsp}d(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got '
                           f'{list(x.shape)}')
    size = x.shape[-nsp:]
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nsp
    out = tuple(size[i] if o is None else int(o) for i, o in enumerate(output_size))
    if nsp > 1 and out == (1,) * nsp:  # PyTorch takes the mean for a global pool (of an empty plane: NaN)
        return mean(input, tuple(range(-nsp, 0)), keepdim=True)
    # (PyTorch's 2-d one checks the spatial dims, its 3-d one every dim but the first)
    _refuse_empty_adaptive(x.shape, range(x.ndim - nsp, x.ndim) if nsp < 3 else range(1, x.ndim),
                           f'adaptive_avg_pool{nsp}d')
    cls = {1: AdaptiveAvgPool1DBackward0, 2: AdaptiveAvgPool2DBackward0, 3: AdaptiveAvgPool3DBackward0}[nsp]
    return _separable(input, [_adaptive_matrix(size[i], out[i], x).astype(x.dtype) for i in range(nsp)], cls)


def adaptive_avg_pool1d(input, output_size):
    try:
        if input._data.ndim not in (2, 3):
            raise RuntimeError(f'adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(input._data.shape)}')
        out = ntuple(output_size, 1)
        return _via_2d(adaptive_avg_pool2d, input, (1,) + out)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg_poolnd(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    if autocast.state.on:
        input, = autocast.fp32(input)
    return _adaptive_avg_poolnd(input, output_size, 3)


# ---- adaptive max pooling ------------------------------------------------------------------

class AdaptiveMaxPool2DBackward0(_MaxPoolBackward):
    __slots__ = ()


class AdaptiveMaxPool3DBackward0(_MaxPoolBackward):
    __slots__ = ()


def _adaptive_index(size, out, like=None):
    """Per output cell, the input positions of its window, padded by repeating the last one
    (a repeat never changes the max nor, coming later, the first argmax); made where ``like``
    lives."""
    i = xp.arange(out, like=like)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    span = int((end - start).max())
    return xp.minimum(start[:, None] + xp.arange(span, like=like), end[:, None] - 1)


def _adaptive_max_poolnd(input, output_size, return_indices, nsp, node_cls):
    try:
        x = input._data
    except AttributeError:  # (PyTorch's Python reads input.size() first: its error for a non-tensor)
        input.size()
        raise
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f'adaptive_max_pool{nsp}d(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: '
                           f'{list(x.shape)}')
    _refuse_empty_adaptive(x.shape, range(1, x.ndim), f'adaptive_max_pool{nsp}d')
    sizes = x.shape[-nsp:]
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nsp
    outs = tuple(sizes[i] if output_size[i] is None else int(output_size[i]) for i in range(nsp))
    windows = [_adaptive_index(sizes[i], outs[i], x) for i in range(nsp)]  # per dim (out, L)
    # index arrays broadcasting to (o1, L1, o2, L2, ...): every window's elements at once
    index = []
    for i, w in enumerate(windows):
        shape = [1] * (2 * nsp)
        shape[2 * i:2 * i + 2] = w.shape
        index.append(w.reshape(shape))
    win = x[(Ellipsis,) + tuple(index)]
    lead = x.ndim - nsp
    order = tuple(range(lead)) + tuple(lead + 2 * i for i in range(nsp)) + tuple(lead + 2 * i + 1 for i in range(nsp))
    win = win.transpose(order).reshape(x.shape[:-nsp] + outs + (math.prod(w.shape[1] for w in windows),))
    # (..., o1, o2, .., L1*L2*..)
    key = xp.where(xp.isnan(win), xp.inf, win) if x.dtype.kind in 'fV' else win
    arg = xp.argmax(key, axis=-1)
    values = xp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    # window position -> input position along each dim, then the flat spatial index
    local = xp.unravel_index(arg, tuple(w.shape[1] for w in windows))
    flat = xp.zeros(arg.shape, dtype=xp.int64, like=arg)
    for i, w in enumerate(windows):
        o = xp.arange(outs[i], like=arg).reshape((outs[i],) + (1,) * (nsp - 1 - i))
        flat = flat * sizes[i] + w[o, local[i]]
    result, node = record(xp.ascontiguousarray(values), node_cls, (input,))
    indices = wrap(flat)
    if node is not None:
        node.nsp, node.win = nsp, None
        node.save(input, indices)
    return (result, indices) if return_indices else result


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max_poolnd(input, output_size, return_indices, 2, AdaptiveMaxPool2DBackward0)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max_poolnd(input, output_size, return_indices, 3, AdaptiveMaxPool3DBackward0)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    try:
        if input._data.ndim not in (2, 3):
            raise RuntimeError(f'adaptive_max_pool1d(): Expected 2D or 3D tensor, but got: {list(input._data.shape)}')
        _refuse_empty_adaptive(input._data.shape, range(1, input._data.ndim), 'adaptive_max_pool1d')
        return _via_2d(adaptive_max_pool2d, input, (1,) + ntuple(output_size, 1), return_indices)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    try:
        return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    try:
        return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    try:
        return adaptive_max_pool1d(input, output_size, True)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError, which
        refuse_arguments('adaptive_max_pool1d')  # names the op it calls)
        raise


def _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, nsp):
    """(sum of x^p over each window)^(1/p), composed as PyTorch composes it (a max of |x| for p = inf,
    minus the max of -|x| for p = -inf)."""
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[nsp - 1]
    avg_pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nsp - 1]
    try:
        if isinstance(norm_type, (int, float)):
            if norm_type == float('inf'):
                return max_pool(_ew.abs(input), kernel_size, stride, 0, 1, ceil_mode)
            if norm_type == -float('inf'):
                return -max_pool(-_ew.abs(input), kernel_size, stride, 0, 1, ceil_mode)
        out = avg_pool(_ew.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    except (AttributeError, TypeError):  # (PyTorch's is Python: input.abs() or input.pow(), the argument's own error)
        if not isinstance(input, Tensor):
            input.abs if isinstance(norm_type, (int, float)) and abs(norm_type) == float('inf') else input.pow
        raise
    return _ew.pow((_ew.sign(out) * _ew.relu(_ew.abs(out))) * math.prod(ntuple(kernel_size, nsp)), 1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 3)


# ---- max unpooling -------------------------------------------------------------------------

class _MaxUnpoolBackward(Node):
    __slots__ = ('nsp',)

    def apply(self, grad):
        (idx,) = self.saved_tensors
        return _gather_flat(grad, idx, self.nsp), None


class MaxUnpool2DBackward0(_MaxUnpoolBackward):
    __slots__ = ()


class MaxUnpool3DBackward0(_MaxUnpoolBackward):
    __slots__ = ()


def _unpool_size(input, kernel_size, stride, padding, output_size, nsp):
    k = ntuple(kernel_size, nsp)
    s = ntuple(stride, nsp) if stride is not None else k
    p = ntuple(padding, nsp)
    size = input._data.shape[-nsp:]
    default = tuple((size[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nsp))
    if output_size is None:
        return default
    out = tuple(int(o) for o in output_size)
    if len(out) == nsp + 2:
        out = out[2:]
    elif len(out) == nsp + 1:
        out = out[1:]
    if len(out) != nsp:
        raise ValueError(f'output_size should be a sequence containing {nsp} or {nsp + 2} elements, but it has a '
                         f'length of \'{len(output_size)}\'')
    for i in range(nsp):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < out[i] < hi:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {i} must be between {lo} and {hi})')
    return out


def _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, nsp, node_cls):
    """The values written back at max_pool's indices, zeros elsewhere."""
    if autocast.state.on:
        input, = autocast.fp32(input)
    from ... import _settings  # (loaded when first used) PyTorch has no deterministic max_unpool (indices may repeat)
    _settings.alert_not_deterministic(f'max_unpooling{nsp}d_forward_out')
    x, idx = input._data, indices._data
    if nsp == 3 and x.ndim not in (4, 5):
        raise RuntimeError(f'Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {x.ndim} '
                           'dimensions.')
    out_size = _unpool_size(input, kernel_size, stride, padding, output_size, nsp)
    lead = x.shape[:-nsp]
    plane = math.prod(out_size)
    bad = (idx < 0) | (idx >= plane)
    if bad.any():
        raise RuntimeError(f'Found an invalid max index: {int(idx[bad].reshape(-1)[0])} (output volumes are of size '
                           f'{"x".join(str(o) for o in out_size)})')
    data = xp.zeros(lead + (plane,), dtype=x.dtype, like=x)
    nc = math.prod(lead)
    flat = data.reshape(nc, plane)
    xp.put_along_axis(flat, idx.reshape(nc, -1), x.reshape(nc, -1), axis=1)
    out, node = record(data.reshape(lead + out_size), node_cls, (input, indices))
    if node is not None:
        node.nsp = nsp
        node.save(indices)
    return out


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The values written back at max_pool2d's indices, zeros elsewhere."""
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 2, MaxUnpool2DBackward0)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The values written back at max_pool3d's indices, zeros elsewhere."""
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 3, MaxUnpool3DBackward0)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = ntuple(kernel_size, 1)
    s = ntuple(stride, 1) if stride is not None else k
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    out = max_unpool2d(_shape.unsqueeze(input, -2), _shape.unsqueeze(indices, -2), (1,) + k, (1,) + s,
                       (0,) + ntuple(padding, 1), (1,) + size)
    return _shape.squeeze(out, -2)
