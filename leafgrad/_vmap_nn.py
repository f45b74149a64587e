"""Batching rules of the neural-network ops (``func.vmap``): convolutions, pooling,
normalizations, embedding, gather and index_select.

Each rule turns a call with batched arguments into one call on the physical arrays (see the
design note of ``_vmap.py``), or returns None when the arguments are batched in a way it does
not handle, and the op then runs once per sample:

* convolutions and pooling: the batch dimensions folded into the op's own batch dimension N
  (a sample without N gets them as N), unfolded afterwards; a batched weight or bias: per sample;
* ``layer_norm`` / ``group_norm``: normalized on the physical array (folded into N for
  group_norm), the affine part applied afterwards by the batched elementwise ops, so that a
  batched weight or bias (an ensemble) works too;
* ``batch_norm``: in eval mode (running statistics) folded into N; with batch statistics and no
  running ones, each sample's batch moved beside the channels (``(N, B*C, ...)``) so that its
  statistics are its own; with running statistics to update: per sample;
* ``embedding``: the indices' physical array looked up in the unbatched weight;
* ``gather`` / ``index_select``: the dim shifted past the batch dimensions (gather's operands
  expanded along each other's batch dimensions);
* ``interpolate`` (and the ``upsample`` forms): the batch dimensions folded into N.

The ops declared as ``Op`` classes give their rule in the declaration's ``vmap`` slot instead
(``_vmap._declared_rule``).
"""
import math
import re

from . import _vmap as V
from . import backend
from .tensor import Tensor


def _arg(args, kwargs, pos, name, default=None):
    if len(args) > pos:
        return args[pos]
    return kwargs.get(name, default)


def _batched_any(*values):
    return any(V.is_batched(v) for v in values)


def _fold_into_batch(fn, x, call, sample_dims):
    """``call(folded)`` where ``folded`` is ``x``'s physical array with its batch dims folded into
    the op's batch dim (or made it, when a sample has none: ``sample_dims`` is then the sample's
    ndim without N); the result (or each result) unfolded and batched as ``x``."""
    levels = x._levels
    nb = len(levels)
    lead = x._data.shape[:nb]
    has_n = x._data.ndim - nb > sample_dims
    with V._Plain([x]):
        folded = x.reshape((-1,) + x._data.shape[nb + 1 if has_n else nb:])
        out = call(folded)
        keep = lead + ((x._data.shape[nb],) if has_n else ())

        def unfold(o):
            return V._batched(o.reshape(keep + o._data.shape[1:]), levels) if isinstance(o, Tensor) else o
        return type(out)(unfold(o) for o in out) if isinstance(out, tuple) else unfold(out)


def _spatial(name):
    return int(re.search(r'(\d)d', name).group(1))


def conv_or_pool(fn, name, args, kwargs):
    """Convolutions and pooling: a batched input alone folded into N; a batched weight (an
    ensemble) by the convolution's groups."""
    if not args:
        return None
    x = args[0]
    if _batched_any(*args[1:], *kwargs.values()):
        return _conv_batched_weight(fn, name, args, kwargs) if name.startswith('conv') else None
    if not V.is_batched(x):
        return None
    return _fold_into_batch(fn, x, lambda folded: fn(folded, *args[1:], **kwargs), _spatial(name) + 1)


def _conv_batched_weight(fn, name, args, kwargs):
    """Each sample's weight its own group: the input (N, B*C, *), the weight (B*O, C/g, *k) (a
    transposed convolution's (B*C, O/g, *k)), groups B*g; the output (N, B*O, *) unfolded."""
    nsp = _spatial(name)
    x, weight = args[0], _arg(args, kwargs, 1, 'weight')
    bias, groups = _arg(args, kwargs, 2, 'bias'), _arg(args, kwargs, 6, 'groups', 1)
    if not V.is_batched(weight) or set(kwargs) - {'weight', 'bias', 'stride', 'padding', 'dilation', 'groups',
                                                     'output_padding'} or V._logical_ndim(weight) != nsp + 2:
        return None
    levels = weight._levels  # (several: a weight's tangent batched at two levels, the NTK's)
    if any(level not in levels for level in V._levels_of(x)):
        return None
    lead = tuple(V._sizes(levels))
    b, nb = math.prod(lead), len(levels)
    one = V._logical_ndim(x) == nsp + 1  # a sample without N
    x_levels = V._levels_of(x)
    with V._Plain([x, weight]):
        px = x
        for i, level in enumerate(levels):  # (x aligned to the weight's levels, expanded along the others)
            if level not in x_levels:
                px = px.unsqueeze(i)
        px = px.expand(lead + px._data.shape[nb:]).reshape((b,) + px._data.shape[nb:])
        if one:
            px = px.unsqueeze(1)
        n = px._data.shape[1]
        px = px.movedim(0, 1).reshape((n, -1) + px._data.shape[3:])       # (N, B*C, *)
        pw = weight.reshape((-1,) + weight._data.shape[nb + 1:])           # (B*O, C/g, *k)
        rest = list(args[3:])
        call_kwargs = {k: v for k, v in kwargs.items() if k not in ('weight', 'bias', 'groups')}
        if len(rest) >= 4:
            rest[3] = groups * b
        else:
            call_kwargs['groups'] = groups * b
        out = fn(px, pw, None, *rest, **call_kwargs)
        out = out.reshape((n, b, -1) + out._data.shape[2:]).movedim(1, 0)  # (B, N, O, *)
        out = out.reshape(lead + out._data.shape[1:])
        if one:
            out = out.squeeze(nb)
    out = V._batched(out, levels)
    return _affine(out, None, bias, (-1,) + (1,) * nsp)


def _affine(out, weight, bias, shape=None):
    """``out * weight + bias`` by the batched elementwise ops (weight and bias reshaped to
    ``shape`` first, to broadcast over a channel dim)."""
    for value, op in ((weight, 'mul'), (bias, 'add')):
        if value is not None:
            if shape is not None:
                value = V._vm_call('reshape', value, shape)
            out = V._vm_call(op, out, value)
    return out


def layer_norm(fn, name, args, kwargs):
    x, shape = args[0], _arg(args, kwargs, 1, 'normalized_shape')
    weight, bias = _arg(args, kwargs, 2, 'weight'), _arg(args, kwargs, 3, 'bias')
    eps = _arg(args, kwargs, 4, 'eps', 1e-5)
    if not V.is_batched(x):
        if not _batched_any(weight, bias):
            return None
        out = fn(x, shape, None, None, eps)
    else:
        with V._Plain([x]):
            out = V._batched(fn(x, shape, None, None, eps), x._levels)
    return _affine(out, weight, bias)


def group_norm(fn, name, args, kwargs):
    x, groups = args[0], _arg(args, kwargs, 1, 'num_groups')
    weight, bias = _arg(args, kwargs, 2, 'weight'), _arg(args, kwargs, 3, 'bias')
    eps = _arg(args, kwargs, 4, 'eps', 1e-5)
    if not V.is_batched(x) or V._logical_ndim(x) < 2:
        return None
    out = _fold_into_batch(fn, x, lambda folded: fn(folded, groups, None, None, eps), 0)
    return _affine(out, weight, bias, (-1,) + (1,) * (out.dim() - 2))


def batch_norm(fn, name, args, kwargs):
    x = args[0]
    running_mean, running_var = _arg(args, kwargs, 1, 'running_mean'), _arg(args, kwargs, 2, 'running_var')
    weight, bias = _arg(args, kwargs, 3, 'weight'), _arg(args, kwargs, 4, 'bias')
    training = _arg(args, kwargs, 5, 'training', False)
    momentum, eps = _arg(args, kwargs, 6, 'momentum', 0.1), _arg(args, kwargs, 7, 'eps', 1e-5)
    if not V.is_batched(x) or V._logical_ndim(x) < 2 or _batched_any(running_mean, running_var):
        return None
    batch_stats = training or running_mean is None or running_var is None
    if batch_stats and (running_mean is not None or running_var is not None):
        return None  # (running statistics to update: per sample)
    chan = (-1,) + (1,) * (V._logical_ndim(x) - 2)
    if not batch_stats:  # each element on its own: the batch folded into N
        out = _fold_into_batch(fn, x, lambda folded: fn(folded, running_mean, running_var, None, None, False,
                                                         momentum, eps), 0)
        return _affine(out, weight, bias, chan)
    levels = x._levels
    nb = len(levels)
    with V._Plain([x]):
        shape = x._data.shape
        n, c = shape[nb], shape[nb + 1]
        # (B..., N, C, *) -> (N, B..., C, *) -> (N, B*C, *): each sample's channels their own
        moved = x.movedim(nb, 0).reshape((n, -1) + shape[nb + 2:])
        out = fn(moved, None, None, None, None, True, momentum, eps)
        out = out.reshape((n,) + shape[:nb] + (c,) + shape[nb + 2:]).movedim(0, nb)
    return _affine(V._batched(out, levels), weight, bias, chan)


def embedding(fn, name, args, kwargs):
    """Batched indices looked up in the weight; a batched weight (B, V, D) read as one table of
    B*V rows, each sample's indices offset by its block."""
    indices, weight = args[0], _arg(args, kwargs, 1, 'weight')
    rest = dict(kwargs)
    rest.pop('weight', None)
    if _arg(args, kwargs, 3, 'max_norm') is not None:
        return None
    if not V.is_batched(weight):
        with V._Plain([indices]):
            out = fn(indices, weight, *args[2:], **rest)
        return V._batched(out, indices._levels)
    if _arg(args, kwargs, 2, 'padding_idx') is not None or V._logical_ndim(weight) != 2:
        return None
    tensors = [indices, weight]
    levels = V._union(tensors)
    nb = len(levels)
    with V._Plain(tensors):
        pi = V._align_plain(indices, tensors, levels, V._saved_ndim(indices))
        pw = V._align_plain(weight, tensors, levels, 2)
        lead = tuple(max(a, b) for a, b in zip(pi._data.shape[:nb], pw._data.shape[:nb]))
        pi = pi.expand(lead + pi._data.shape[nb:])
        pw = pw.expand(lead + pw._data.shape[nb:])
        rows = pw._data.shape[-2]
        blocks = math.prod(lead)
        offsets = Tensor._wrap((backend.numpy.arange(blocks) * rows).reshape(lead + (1,) * (pi._data.ndim - nb)))
        out = fn(pi + offsets, pw.reshape(blocks * rows, -1), *args[2:], **rest)
    return V._batched(out, levels)


def index_select(fn, name, args, kwargs):
    x, dim, index = args[0], _arg(args, kwargs, 1, 'dim'), _arg(args, kwargs, 2, 'index')
    if not V.is_batched(x) or _batched_any(index) or V._logical_ndim(x) == 0:
        return None
    with V._Plain([x]):
        out = fn(x, V._shift(dim, V._logical_ndim(x), len(x._levels)), index)
    return V._batched(out, x._levels)


def gather(fn, name, args, kwargs):
    x, dim, index = args[0], _arg(args, kwargs, 1, 'dim'), _arg(args, kwargs, 2, 'index')
    if set(kwargs) - {'dim', 'index'} or len(args) > 3 or not isinstance(index, Tensor):
        return None
    ndim = V._logical_ndim(x)
    if ndim == 0 or V._logical_ndim(index) != ndim:
        return None
    tensors = [x, index]
    levels = V._union(tensors)
    nb = len(levels)
    with V._Plain(tensors):
        px = V._align_plain(x, tensors, levels, ndim)
        pi = V._align_plain(index, tensors, levels, ndim)
        lead = tuple(max(a, b) for a, b in zip(px._data.shape[:nb], pi._data.shape[:nb]))
        px = px.expand(lead + px._data.shape[nb:])
        pi = pi.expand(lead + pi._data.shape[nb:])
        out = fn(px, V._shift(dim, ndim, nb), pi)
    return V._batched(out, levels)


def interpolate(fn, name, args, kwargs):
    """interpolate (every mode) and its upsample forms: the batch dims folded into N."""
    x = args[0] if args else kwargs.get('input')
    if not V.is_batched(x) or len(args) < 1 or _batched_any(*args[1:], *kwargs.values()) or V._logical_ndim(x) < 3:
        return None
    return _fold_into_batch(fn, x, lambda folded: fn(folded, *args[1:], **kwargs), V._logical_ndim(x) - 1)


_CONV_POOL = re.compile(r'^(conv\dd|conv_transpose\dd|(adaptive_)?(max|avg)_pool\dd(_with_indices)?|lp_pool\dd)$')
RULES = {'layer_norm': layer_norm, 'group_norm': group_norm, 'batch_norm': batch_norm, 'embedding': embedding,
         'index_select': index_select, 'gather': gather, 'interpolate': interpolate, 'upsample': interpolate,
         'upsample_nearest': interpolate, 'upsample_bilinear': interpolate}


def rule_for(name):
    """The rule of the op ``name``, or None."""
    rule = RULES.get(name)
    if rule is None and _CONV_POOL.match(name):
        return conv_or_pool
    return rule
