"""layer_norm, batch_norm, group_norm: single nodes named as PyTorch's native kernels.

Forward on arrays; the derivatives recompute mean and 1/std from the saved input with leafgrad
ops, so that a second derivative also sees how the statistics depend on the input.
"""
import math

from ... import backend
from ...ops._util import Node, c_order, opmath, record, state, wrap, xp
from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...ops.linalg import _F32, _F64, _sname
from ...ops.reduction import mean as _mean, mean_array as _mean_array, sum as _sum
from .common import const, size_str
from ...ops.rearrange import pad
from .pooling import avg_pool2d, avg_pool3d
from ..._arg_parser import refuse_arguments


def _stats(x, dims, eps):
    """Mean and 1/sqrt(var + eps) of a leafgrad tensor over dims (kept), with leafgrad ops."""
    mu = _mean(x, dims, keepdim=True)
    c = x - mu
    var = _mean(c * c, dims, keepdim=True)
    return c * _ew.pow(var + eps, -0.5), _ew.pow(var + eps, -0.5)


def _normalized_grad(gxhat, xhat, rstd, dims):
    """d loss / d x for xhat = (x - mean) * rstd, given d loss / d xhat."""
    return rstd * (gxhat - _mean(gxhat, dims, keepdim=True) - xhat * _mean(gxhat * xhat, dims, keepdim=True))


def _in_float32(node, grad, saved, gradients):
    """``gradients(grad, saved)`` as PyTorch's norm kernels compute bfloat16: on float32 (the casts
    recorded, for create_graph), each input's gradient rounded once to that input's dtype
    (``node.dtypes``: input, weight, bias)."""
    if grad._data.dtype.kind != 'V' and not any(t is not None and t._data.dtype.kind == 'V' for t in saved):
        return gradients(grad, saved)
    wide = [t if t is None or t._data.dtype.kind != 'V' else t.float() for t in saved]
    out = gradients(grad.float() if grad._data.dtype.kind == 'V' else grad, wide)
    return tuple(g if g is None or g._data.dtype == dt else g.to(backend.from_np(dt))
                 for g, dt in zip(out, node.dtypes))


def _dtypes(*tensors):
    return tuple(None if t is None else t._data.dtype for t in tensors)


def _array_stats(x, dims, eps):
    mu = _mean_array(x, dims, keepdims=True)
    c = x - mu
    var = _mean_array(c * c, dims, keepdims=True)
    return mu, var, 1.0 / xp.sqrt(var + eps)


# ---- layer_norm ---------------------------------------------------------------------------

def _affine_jvp(dxhat, tw, tb, xhat, w, chan=None):
    """The tangent of ``xhat * w + b`` given the tangent ``dxhat`` of the normalized input (for
    xhat normalized over dims, ``rstd (tx - mean tx - xhat mean(tx xhat))``: the same map as its
    reverse derivative, ``_normalized_grad``); ``chan``: the shape w and b take to broadcast."""
    def channels(p):
        return p if chan is None else _shape.reshape(p, chan)
    out = dxhat
    if out is not None and w is not None:
        out = out * channels(w)
    for term in (None if tw is None else xhat * channels(tw), None if tb is None else channels(tb)):
        if term is not None:
            out = term if out is None else out + term
    return out


class NativeLayerNormBackward0(Node):
    """Saves bias, input, weight, mean and 1/std, as PyTorch packs them (the derivative reads
    the input and the weight)."""
    __slots__ = ('dims', 'eps', 'dtypes', 'has_w', 'has_b')

    def jvp(self, tangents):
        x, w = self.saved_tensors
        tx, tw, tb = tangents
        xhat, rstd = _stats(x, self.dims, self.eps)
        dxhat = None if tx is None else _normalized_grad(tx, xhat, rstd, self.dims)
        return _affine_jvp(dxhat, tw, tb, xhat, w)

    def apply(self, grad):
        g = grad._data
        if not state.grad_enabled and (g.dtype == _F32 or g.dtype == _F64):
            # a plain backward: on the arrays, from the forward's mean and 1/std (as PyTorch's
            # kernel reads them), not through a dozen recorded-op calls that compute them again
            saved = Node.saved_tensors.fget(self)  # (bias,) input, (weight,) mean, 1/std
            x, mu, rstd = saved[1 if self.has_b else 0], saved[-2], saved[-1]
            w = saved[-3]._data if self.has_w else None
            return tuple(None if a is None else wrap(a) for a in layer_norm_gradient_arrays(
                g, x._data, w, mu._data, rstd._data, self.dims, [f[0] is not None for f in self.next_functions]))
        return _in_float32(self, grad, self.saved_tensors, self.gradients)

    def gradients(self, grad, saved):
        x, w = saved
        return layer_norm_gradients(grad, x, w, self.dims, self.eps, [f[0] is not None for f in self.next_functions])

    @property
    def saved_tensors(self):  # (input, weight or None)
        s = Node.saved_tensors.fget(self)[1 if self.has_b else 0:]
        return [s[0], s[1] if self.has_w else None]


def layer_norm_gradients(grad, x, w, dims, eps, need):
    """The gradients (input, weight, bias) of layer_norm for those ``need`` asks (else None),
    with leafgrad ops (recorded under create_graph); ``w``: the weight or None."""
    xhat, rstd = _stats(x, dims, eps)
    lead = tuple(range(x._data.ndim - len(dims)))
    gx = gw = gb = None
    if need[0]:
        gx = _normalized_grad(grad if w is None else grad * w, xhat, rstd, dims)
    if need[1]:
        gw = _sum(grad * xhat, lead) if lead else grad * xhat
    if need[2]:
        gb = _sum(grad, lead) if lead else grad
    return gx, gw, gb


def layer_norm_gradient_arrays(g, x, w, mu, rstd, dims, need):
    """layer_norm_gradients on float32/float64 arrays, given the forward's mean ``mu`` and
    1/std ``rstd`` (kept dims): the same formula, for a backward that records nothing (eager's
    and compile's replay)."""
    xhat = x - mu
    xhat *= rstd
    lead = tuple(range(x.ndim - len(dims)))
    gx = gw = gb = None
    if need[0]:
        gxhat = g if w is None else g * w
        gx = gxhat - _mean_array(gxhat, dims, keepdims=True)
        gx -= xhat * _mean_array(gxhat * xhat, dims, keepdims=True)
        gx *= rstd
    if need[1]:
        gw = xp.add.reduce(g * xhat, axis=lead) if lead else g * xhat
    if need[2]:
        gb = xp.add.reduce(g, axis=lead) if lead else g
    return gx, gw, gb


def layer_norm_array(x, w, b, dims, eps):
    """layer_norm's forward on arrays (``w``, ``b``: arrays or None): the result in x's dtype,
    the mean and 1/std (bfloat16 computed in float32 and rounded once)."""
    xw = opmath(x)
    mu, var, rstd = _array_stats(xw, dims, eps)
    y = (xw - mu) * rstd
    if w is not None:
        y = y * opmath(w)
    if b is not None:
        y = y + opmath(b)
    return y.astype(x.dtype, copy=False), mu, rstd


def _check_layer_norm_dtypes(input, weight, bias):
    """PyTorch's dtype checks (its CPU kernel's is_mixed_type): the parameters are "mixed" when
    the first given one's dtype is not the input's; then they must all be float32 and the input
    float16/bfloat16 (which is computed in float32); otherwise each must be of the input's dtype."""
    params = [p for p in (weight, bias) if p is not None]
    if not params:
        return
    x = input._data.dtype
    if params[0]._data.dtype != x:
        if any(p._data.dtype != xp.float32 for p in params):
            raise RuntimeError('mixed dtype (CPU): expect parameter to have scalar type of Float')
        if not (x.itemsize == 2 and x.kind in 'fV'):
            raise RuntimeError('mixed dtype (CPU): all inputs must share same datatype.')
        return
    for p in params[1:]:
        if p._data.dtype != x:
            raise RuntimeError(f'expected scalar type {_sname(input)} but found {_sname(p)}')


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    try:
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        shape = tuple(int(s) for s in normalized_shape)
        x = input._data
        k = len(shape)
        if k == 0 or x.shape[x.ndim - k:] != shape or x.ndim < k:
            raise RuntimeError(f'Given normalized_shape={list(shape)}, expected input with shape [*, '
                               f'{", ".join(str(s) for s in shape)}], but got input of size{list(x.shape)}')
        for name, p in (('weight', weight), ('bias', bias)):
            if p is not None and p._data.shape != shape:
                raise RuntimeError(f'Expected {name} to be of same shape as normalized_shape, but got {name} of shape '
                                   f'{list(p._data.shape)} and normalized_shape = {list(shape)}')
        _check_layer_norm_dtypes(input, weight, bias)
        dims = tuple(range(x.ndim - k, x.ndim))
        # (bfloat16: computed in float32, rounded once, also with float32 weight and bias)
        y, mu, rstd = layer_norm_array(x, None if weight is None else weight._data,
                                       None if bias is None else bias._data, dims, eps)
        out, node = record(c_order(y), NativeLayerNormBackward0, (input, weight, bias))  # (contiguous, as PyTorch's)
        if node is not None:
            node.dims, node.eps, node.dtypes = dims, eps, _dtypes(input, weight, bias)
            node.has_w, node.has_b = weight is not None, bias is not None
            node.save(*([bias] if bias is not None else []), input, *([weight] if weight is not None else []),
                      wrap(mu), wrap(rstd))
        return out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


# ---- batch_norm ---------------------------------------------------------------------------

class NativeBatchNormBackward0(Node):
    __slots__ = ('dims', 'eps', 'training', 'has_w', 'chan_shape', 'dtypes')

    def jvp(self, tangents):
        saved = self.saved_tensors
        (tx, tw, tb), w = tangents, saved[1] if self.has_w else None
        if self.training:
            xhat, rstd = _stats(saved[0], self.dims, self.eps)
            dxhat = None if tx is None else _normalized_grad(tx, xhat, rstd, self.dims)
        else:  # the running statistics: constants
            rstd = saved[-1]
            xhat = (saved[0] - saved[-2]) * rstd
            dxhat = None if tx is None else tx * rstd
        return _affine_jvp(dxhat, tw, tb, xhat, w, self.chan_shape)

    def apply(self, grad):
        return _in_float32(self, grad, self.saved_tensors, self.gradients)

    def gradients(self, grad, saved):
        x = saved[0]
        w = _shape.reshape(saved[1], self.chan_shape) if self.has_w else None
        gx = gw = gb = None
        if self.training:
            xhat, rstd = _stats(x, self.dims, self.eps)
        else:
            rstd = saved[-1]  # constants: the running statistics do not depend on the input
            xhat = (x - saved[-2]) * rstd
        if self.next_functions[0][0] is not None:
            gxhat = grad if w is None else grad * w
            gx = _normalized_grad(gxhat, xhat, rstd, self.dims) if self.training else gxhat * rstd
        if self.next_functions[1][0] is not None:
            gw = _sum(grad * xhat, self.dims)
        if self.next_functions[2][0] is not None:
            gb = _sum(grad, self.dims)
        return gx, gw, gb


def _verify_batch_size(shape):
    n = shape[0]
    for s in shape[2:]:
        n *= s
    if n == 1:
        raise ValueError(f'Expected more than 1 value per channel when training, got input size {size_str(shape)}')


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    try:
        x = input._data
        if x.ndim < 2:
            raise ValueError(f'Expected 2D or more input (got {x.ndim}D input)')
        if training:
            _verify_batch_size(x.shape)
        C = x.shape[1]
        for name, t in (('running_mean', running_mean), ('running_var', running_var), ('weight', weight),
                        ('bias', bias)):
            if t is None and not training and name.startswith('running'):  # (evaluation normalizes by them)
                raise RuntimeError(f'{name} must be defined in evaluation mode')
            if t is not None and t._data.size != C:
                raise RuntimeError(f'{name} should contain {C} elements not {t._data.size}')
        dims = (0,) + tuple(range(2, x.ndim))
        chan = (1, C) + (1,) * (x.ndim - 2)
        use_batch = training
        x, dtype = opmath(x), x.dtype  # bfloat16: computed in float32, rounded once
        if use_batch:
            mu, var, rstd = _array_stats(x, dims, eps)
            if training and running_mean is not None:
                n = x.size // C
                with xp.errstate(divide='ignore', invalid='ignore'):
                    unbiased = var.reshape(C) * (n / (n - 1)) if n > 1 else var.reshape(C)
                _update_running(running_mean, mu.reshape(C), momentum)
                _update_running(running_var, unbiased, momentum)
        else:
            mu = opmath(running_mean._data).reshape(chan)
            rstd = 1.0 / xp.sqrt(opmath(running_var._data).reshape(chan) + eps)
        y = (x - mu) * rstd
        if weight is not None:
            y = y * opmath(weight._data).reshape(chan)
        if bias is not None:
            y = y + opmath(bias._data).reshape(chan)
        out, node = record(y.astype(dtype, copy=False), NativeBatchNormBackward0, (input, weight, bias))
        if node is not None:
            node.dims, node.eps, node.training, node.dtypes = dims, eps, use_batch, _dtypes(input, weight, bias)
            node.has_w, node.chan_shape = weight is not None, chan
            extra = [] if use_batch else [const(mu, input), const(rstd, input)]
            node.save(input, *([weight] if weight is not None else []), *extra)
        return out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('batch_norm', ('input', 'weight', 'bias', 'running_mean', 'running_var'))
        raise


def _update_running(t, value, momentum):
    """running = (1 - momentum) * running + momentum * value, in place (no graph)."""
    d = t._data
    d *= (1 - momentum)
    d += (momentum * value).astype(d.dtype, copy=False)
    t._bump_version()


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """batch_norm of the input seen as a batch of one with N*C channels (as PyTorch computes it)."""
    shape = input._data.shape
    n, c = shape[:2]
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    x = _shape.reshape(input, (1, n * c) + shape[2:])
    # running statistics, if given, are updated as PyTorch does: repeated per sample, updated by
    # batch_norm, then averaged over the samples
    rm = None if running_mean is None else wrap(xp.tile(running_mean._data, n))
    rv = None if running_var is None else wrap(xp.tile(running_var._data, n))
    out = batch_norm(x, rm, rv, None, None, True, momentum, eps)
    for running, repeated in ((running_mean, rm), (running_var, rv)):
        if running is not None:
            running._data[...] = repeated._data.reshape(n, c).mean(0)
            running._bump_version()
    out = _shape.reshape(out, shape)
    chan = (1, c) + (1,) * (len(shape) - 2)
    if weight is not None:
        out = out * _shape.reshape(weight, chan)
    if bias is not None:
        out = out + _shape.reshape(bias, chan)
    return out


# ---- group_norm ---------------------------------------------------------------------------

class NativeGroupNormBackward0(Node):
    __slots__ = ('groups', 'eps', 'has_w', 'dtypes')

    def jvp(self, tangents):
        saved = self.saved_tensors
        (tx, tw, tb), shape = tangents, saved[0]._data.shape
        grouped = _grouped(shape, self.groups)
        xhat, rstd = _stats(_shape.reshape(saved[0], grouped), (2,), self.eps)
        dxhat = None
        if tx is not None:
            dxhat = _shape.reshape(_normalized_grad(_shape.reshape(tx, grouped), xhat, rstd, (2,)), shape)
        return _affine_jvp(dxhat, tw, tb, _shape.reshape(xhat, shape), saved[1] if self.has_w else None,
                           (1, shape[1]) + (1,) * (len(shape) - 2))

    def apply(self, grad):
        return _in_float32(self, grad, self.saved_tensors, self.gradients)

    def gradients(self, grad, saved):
        x = saved[0]
        shape = x._data.shape
        n, c = shape[:2]
        chan = (1, c) + (1,) * (len(shape) - 2)
        xg = _shape.reshape(x, _grouped(x.shape, self.groups))
        xhat, rstd = _stats(xg, (2,), self.eps)
        gx = gw = gb = None
        dims = (0,) + tuple(range(2, len(shape)))
        if self.next_functions[0][0] is not None:
            gxhat = grad * _shape.reshape(saved[1], chan) if self.has_w else grad
            gx = _shape.reshape(_normalized_grad(_shape.reshape(gxhat, _grouped(gxhat.shape, self.groups)), xhat, rstd,
                                                 (2,)), shape)
        if self.next_functions[1][0] is not None:
            gw = _sum(grad * _shape.reshape(xhat, shape), dims)
        if self.next_functions[2][0] is not None:
            gb = _sum(grad, dims)
        return gx, gw, gb


def _grouped(shape, groups):
    """(N, groups, the rest): group norm's view, its last size given (an empty batch would leave
    a -1 undecided)."""
    return (shape[0], groups, math.prod(shape[1:]) // groups)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    x = input._data
    if x.ndim < 2:
        raise RuntimeError(f'Expected at least 2 dimensions for input tensor but received {x.ndim}')
    n, c = x.shape[:2]
    if c % num_groups:
        raise RuntimeError(f'Expected number of channels in input to be divisible by num_groups, but got input of '
                           f'shape {list(x.shape)} and num_groups={num_groups}')
    for name, t in (('weight', weight), ('bias', bias)):
        if t is not None and (t._data.ndim != 1 or t._data.size != c):
            raise RuntimeError(f'Expected {name} to be a vector of size equal to the number of channels in input, but '
                               f'got {name} of shape {list(t._data.shape)} and input of shape {list(x.shape)}')
    chan = (1, c) + (1,) * (x.ndim - 2)
    xg = opmath(x).reshape(_grouped(x.shape, num_groups))  # bfloat16: computed in float32, rounded once
    mu, var, rstd = _array_stats(xg, (2,), eps)
    y = ((xg - mu) * rstd).reshape(x.shape)
    if weight is not None:
        y = y * opmath(weight._data).reshape(chan)
    if bias is not None:
        y = y + opmath(bias._data).reshape(chan)
    out, node = record(y.astype(x.dtype, copy=False), NativeGroupNormBackward0, (input, weight, bias))
    if node is not None:
        node.groups, node.eps, node.has_w = num_groups, eps, weight is not None
        node.dtypes = _dtypes(input, weight, bias)
        node.save(input, *([weight] if weight is not None else []))
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta, composed as PyTorch
    composes it (pad, average pooling over channels)."""
    try:
        x = input._data
    except AttributeError:  # (PyTorch's Python reads input.dim() first: its error for a non-tensor)
        input.dim()
        raise
    if x.ndim < 3:
        raise ValueError(f'Expected 3D or higher dimensionality input (got {x.ndim} dimensions)')
    if input.numel() == 0:
        return input
    div = input * input
    if x.ndim == 3:
        div = _shape.unsqueeze(div, 1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = _shape.squeeze(avg_pool2d(div, (size, 1), stride=1), 1)
    else:
        shape = x.shape
        div = _shape.reshape(div, (shape[0], 1, shape[1], shape[2], -1))
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = _shape.squeeze(avg_pool3d(div, (size, 1, 1), stride=1), 1)
        div = _shape.reshape(div, shape)
    div = _ew.pow(div * alpha + k, beta)
    return input / div


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims, composed as PyTorch composes it."""
    try:
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        shape = tuple(int(s) for s in normalized_shape)
        x = input._data
        k = len(shape)
        if x.shape[x.ndim - k:] != shape or x.ndim < k:
            raise RuntimeError(f'Given normalized_shape={list(shape)}, expected input with shape [*, '
                               f'{", ".join(str(s) for s in shape)}], but got input of size{list(x.shape)}')
        if eps is None:
            eps = float(xp.finfo(x.dtype).eps)
        dims = tuple(range(x.ndim - k, x.ndim))
        r = _ew.pow(_mean(input * input, dims, keepdim=True) + eps, -0.5)
        out = input * r
        return out * weight if weight is not None else out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise
