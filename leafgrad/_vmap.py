"""``func.vmap``: a function of one sample run on a batch, the batch dimension carried through
each op by its batching rule.

Design note. A batched tensor is an ordinary tensor whose class is switched to
``BatchedTensor``: its array holds the batch dimensions of the vmap levels it belongs to in
front (``_levels``, outermost first), then the sample's dimensions; ``shape``, ``dim()``,
``size()`` and ``numel()`` report the sample's (logical) ones. While vmap runs, every public op
is wrapped (the profiler's replacement mechanism, ``autograd._instrument``): an op none of
whose arguments is batched runs as it is; otherwise its family's batching rule turns the call
into one call on the physical arrays (arguments switched to plain ``Tensor`` for the call, so
that the op sees and records the physical tensors, and the result switched to batched):

* elementwise ops: each operand's batch dimensions aligned to the union of levels (size 1 where
  an operand lacks one) and its sample dimensions right-aligned, then broadcast;
* reductions and other ops with a ``dim``: the dims shifted past the batch dimensions (a full
  reduction reduces the sample dimensions only);
* matrix products: folded into one broadcasting ``matmul``;
* shape ops and indexing: the batch dimensions kept in front of the new shape or index;
* ``cat``/``stack``: unbatched operands expanded along the batch, dims shifted;
* losses: the unreduced loss per element, reduced per sample;
* the matrix functions (inv, det, cholesky, solve ...): the batch dims are more leading dims.

An op declared as an ``Op`` class may give its rule in its declaration's ``vmap`` slot
(``'elementwise'``, or a function of this module, the op and its arguments: tril, repeat, pad,
addmm, outer, scatter, the special functions). An op without a rule runs once per sample and the results are stacked (PyTorch's fallback),
with PyTorch's performance warning. ``grad`` inside ``vmap`` (per-sample gradients) runs the
backward on the physical graph (what the forward recorded is the whole batch's computation,
samples independent), its differentiated inputs expanded along the batch first, so that
each sample gets its own gradient. Forward mode under vmap (a jvp inside vmap): vmap's wrappers
go over forward AD's, as in jacfwd, so that a batched op's rule calls the op on the physical
arrays through forward AD, whose tangents are then physical too; ``_Plain`` gives a tangent
the physical shape of its primal, ``_batched`` batches it with its primal. A tangent batched at
levels its primal is not (a weight's tangent under the vmap over the NTK's basis) stays batched
at those through the physical call (while a dual level is open the levels stay open inside
``_Plain``), its sample the primal's physical layout; ``_batched`` adds the primal's levels to
it (``_levels_added``). jacfwd under vmap
carries the batch too: its primals are ``spread`` along every open level, the basis level
included, so that each tangent is batched within its primal's levels and one pass computes
every sample's Jacobian (also of a function closing over a batched tensor).
"""
import functools
import math
import sys as _sys
import warnings

from . import backend
from .autograd import _instrument, forward_ad, grad as autograd_grad
from .autograd.grad_mode import enable_grad
from .autograd.graph import elementwise_jvp as _elementwise_jvp
from .tensor import Tensor, Size
from .ops.rearrange import cat, stack
from .creation import zeros, zeros_like, ones
from .ops.shape import squeeze, unsqueeze, expand
from .ops import _op, linalg as _linalg
from .ops.elementwise import where
from ._pytree import _flatten, _treespec, _unflatten

__all__ = ['vmap']


class _State:
    depth = 0          # open vmap levels
    sizes = []         # batch size of each level
    randomness = []    # randomness mode of each level
    # Levels below the floor are lowered: a tensor batched at those levels only is, for the ops
    # and its shape, the plain tensor of its physical array (a backward through a graph that
    # was recorded at those levels, see grad_through)
    floor = 0
    installed = False  # whether its wrappers are in place (from level 0's start to its end)


_state = _State()
_warned = set()


class BatchedTensor(Tensor):
    """A tensor carrying the batch dimensions of one or more vmap levels (see the design note)."""
    __slots__ = ()

    @property
    def shape(self):
        s = self._data.shape
        return backend_size(s if self._levels[-1] < _state.floor else s[len(self._levels):])

    def size(self, dim=None):
        shape = self.shape
        if dim is None:
            return shape
        return shape[dim if dim >= 0 else dim + len(shape)]

    def dim(self):
        return len(self.shape)

    ndimension = dim

    @property
    def ndim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError('len() of a 0-d tensor')
        return shape[0]

    def item(self):
        if self._levels[-1] < _state.floor:
            return Tensor.item(self)
        if self.numel() != 1:  # (a sample of several elements: the error of any tensor's .item())
            raise RuntimeError(f'a Tensor with {self.numel()} elements cannot be converted to Scalar')
        if forward_ad._state.level is not None:
            # (a dual of a jvp or jacfwd under vmap: PyTorch's message for a wrapped batched tensor)
            raise RuntimeError(
                "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to use a Tensor "
                'in some data-dependent control flow or (3) encountering this error in PyTorch internals. For (1): '
                "we don't support vmap over calling .item() on a Tensor, please try to rewrite what you're doing "
                "with other operations. For (2): we don't support data-dependent control flow in vmap yet, please "
                'file an issue at https://github.com/pytorch/pytorch/issues . For (3): please file an issue.')
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
                           ".item() on a Tensor, please try to rewrite what you're doing with other operations. If "
                           'error is occurring somewhere inside PyTorch internals, please file a bug report.')

    def numpy(self, *, force=False):
        if self._levels[-1] < _state.floor:
            return Tensor.numpy(self, force=force)
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def _python_scalar(self):  # float(), int(), bool() of a sample: .item()'s error, as PyTorch
        if self._levels[-1] < _state.floor:
            return Tensor._python_scalar(self)
        if self.numel() != 1:
            raise ValueError('only one element tensors can be converted to Python scalars')
        return self.item()

    def __repr__(self):
        return f'BatchedTensor(lvl={self._levels[-1]}, bdim=0, value=\n{Tensor.__repr__(_plain_copy(self))}\n)'


def backend_size(shape):
    return Size(shape)


def _levels_added(g, levels):
    """The batched ``g`` (at levels E) whose leading logical dims are batch dims of ``levels``,
    batched at E and ``levels`` together; a level in both is the diagonal of its two dims (g
    computed for every pair of a primal's sample and a tangent's sample along it)."""
    tags = list(g._levels) + list(levels)
    with _Plain([g]):
        p = g
        for level in set(g._levels) & set(levels):
            i, j = tags.index(level), len(tags) - 1 - tags[::-1].index(level)
            p = p.diagonal(0, i, j).movedim(-1, 0)
            tags = [level] + [tag for k, tag in enumerate(tags) if k not in (i, j)]
        order = sorted(range(len(tags)), key=tags.__getitem__)
        if order != list(range(len(tags))):
            p = p.permute(order + list(range(len(tags), p._data.ndim)))
    return _batched(p, tuple(sorted(tags)))


def _plain_copy(t):
    out = Tensor._wrap(t._data)
    return out


def _batched(t, levels):
    """Make the plain tensor ``t`` (physical array: one batch dim per level in front) batched."""
    if levels:
        t.__class__ = BatchedTensor
        t._levels = tuple(levels)
        tangent = t._fw_grad
        if type(tangent) is BatchedTensor and tuple(tangent.shape) == t._data.shape:
            # a tangent batched where its primal is not (a weight's tangent under another level),
            # computed against the physical primal: its leading dims are the primal's levels
            t._fw_grad = _levels_added(tangent, levels)
        elif tangent is not None and type(tangent) is Tensor and tangent._data.shape == t._data.shape:
            # the tangent forward AD computed on the physical arrays (a jvp under vmap): batched too
            if tangent._requires_grad:  # (computed with grad on: an input truly requires grad, as a
                with enable_grad():   # tensor f closes over; an alias keeps the tangent's history)
                    alias = tangent.view_as(tangent)
            else:
                alias = Tensor._wrap(tangent._data)
            t._fw_grad = _batched(alias, levels)
    return t


def on_physical(fn, t):
    """``fn`` of the batched ``t``'s physical array (a plain tensor, batch dims in front), its
    result batched as ``t``: for computations that broadcast sample by sample."""
    levels = t._levels
    with _Plain([t]):
        out = fn(t)
    return _batched(out, levels) if out is not None else None


def folded(fn, t, sample_dims):
    """``fn`` of the batched ``t``'s physical array with its batch dims folded into its first
    sample dimension, the result unfolded (its first ``sample_dims`` dims being ``t``'s) and
    batched as ``t``."""
    levels = t._levels
    lead = t._data.shape[:len(levels)]
    with _Plain([t]):
        out = fn(t.reshape((-1,) + t._data.shape[len(levels) + 1:]))
        out = out.reshape(lead + t._data.shape[len(levels):len(levels) + sample_dims] + out._data.shape[sample_dims:])
    return _batched(out, levels)


def each_sample(fn, tensors):
    """``fn(*tensors)`` once per sample of the batched ones (innermost level first, recursively),
    the results stacked and batched."""
    levels = _union(tensors)
    level = levels[-1]
    results = []
    for i in range(_state.sizes[level]):
        picked = [_select_level(a, level, i) if is_batched(a) and level in a._levels else a for a in tensors]
        if any(is_batched(a) for a in picked):
            results.append(each_sample(fn, picked))
        else:
            results.append(fn(*picked))
    return _restack(results, level)


def _levels_of(t):
    return t._levels if type(t) is BatchedTensor and t._levels[-1] >= _state.floor else ()


def is_batched(t):
    """Whether ``t`` is batched at a level that is not lowered (see ``_State.floor``)."""
    return type(t) is BatchedTensor and t._levels[-1] >= _state.floor


class _Plain:
    """Within: the given batched tensors are plain tensors of their physical arrays."""

    def __init__(self, tensors):
        self.tensors = [t for t in tensors if type(t) is BatchedTensor and t._levels[-1] >= _state.floor]
        # their tangents (a jvp under vmap), physical within too: forward AD's rules run there on
        # the physical arrays; a tangent batched as its primal is switched, another one is
        # aligned and expanded to the primal's physical shape for the duration
        self.tangents = []
        for t in list(self.tensors):
            g = t._fw_grad
            if g is None:
                continue
            if type(g) is BatchedTensor and g._levels == t._levels:
                self.tensors.append(g)
            else:
                self.tangents.append((t, g))

    def __enter__(self):
        self.levels = [t._levels for t in self.tensors]
        for t, g in self.tangents:
            t._fw_grad = _physical_like(g, t)
        for t in self.tensors:
            t.__class__ = Tensor
        self.prev = _state.depth
        if forward_ad._state.level is None:
            _state.depth = 0  # (the wrapped ops inside pass straight through)
        # (else the levels stay open: a forward rule inside may meet a tangent batched at levels
        # its primal is not, whose ops go through their batching rules, the physical primals'
        # batch dims taken as the sample's)

    def __exit__(self, *exc):
        _state.depth = self.prev
        for t, levels in zip(self.tensors, self.levels):
            t.__class__ = BatchedTensor
            t._levels = levels
        for t, g in self.tangents:
            t._fw_grad = g


def _physical_like(g, t):
    """The tangent ``g`` (unbatched, or batched at some of ``t``'s levels) as a plain tensor of
    the batched ``t``'s physical shape: aligned to its levels, expanded along the others. A
    tangent batched at other levels too stays batched at those, its sample ``t``'s physical
    shape."""
    have, levels = _levels_of(g), t._levels
    extra = [k for k, level in enumerate(have) if level not in levels]
    if extra:
        shared = [k for k in range(len(have)) if k not in extra]
        with _Plain([g]):  # (by the ops: a tangent that requires grad keeps its history)
            p = g.permute(extra + shared + list(range(len(have), g._data.ndim)))
            lead, shape, pos = p._data.shape[:len(extra)], [], len(extra)
            for level in levels:
                if pos - len(extra) < len(shared) and have[shared[pos - len(extra)]] == level:
                    shape.append(p._data.shape[pos])
                    pos += 1
                else:
                    shape.append(1)
            p = p.reshape(lead + tuple(shape) + p._data.shape[pos:]).expand(lead + t._data.shape)
        return _batched(p, tuple(have[k] for k in extra))
    data = g._data
    shape, pos = [], 0
    for level in levels:
        if pos < len(have) and have[pos] == level:
            shape.append(data.shape[pos])
            pos += 1
        else:
            shape.append(1)
    data = data.reshape(tuple(shape) + data.shape[len(have):])
    return Tensor._wrap(backend.numpy.broadcast_to(data, t._data.shape))


def _tensors_in(args, kwargs):
    out = []
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (tuple, list)):
            out.extend(x for x in a if isinstance(x, Tensor))
    return out


# ---- aligning operands ------------------------------------------------------------------------

def _union(tensors):
    levels = set()
    for t in tensors:
        levels.update(_levels_of(t))
    return tuple(sorted(levels))


def _logical_ndim(t):
    return t._data.ndim - len(_levels_of(t))


def _sizes(levels):
    return [_state.sizes[level] for level in levels]


# ---- the rules --------------------------------------------------------------------------------

def _elementwise(fn, args, kwargs, expand=False):
    """``expand``: operands broadcast to one shape first (ops that insist on equal shapes)."""
    tensors = _tensors_in(args, kwargs)
    levels = _union(tensors)
    n = max(_logical_ndim(t) for t in tensors)
    with _Plain(tensors):
        def aligned(a):
            return _align_plain(a, tensors, levels, n) if isinstance(a, Tensor) else a
        new_args = [aligned(a) for a in args]
        new_kwargs = {k: aligned(v) for k, v in kwargs.items()}
        if expand:
            shape = backend.numpy.broadcast_shapes(*[a._data.shape for a in new_args if isinstance(a, Tensor)])
            new_args = [a.expand(shape) if isinstance(a, Tensor) and a._data.shape != shape else a for a in new_args]
        out = fn(*new_args, **new_kwargs)
    return _wrap_out(out, levels)


def _align_plain(t, tensors, levels, n):
    """As _align, for a tensor whose class _Plain has switched (its levels kept aside)."""
    have = _saved_levels.get(id(t), ())
    data = t._data
    own = data.ndim - len(have)
    shape = []
    pos = 0
    for level in levels:
        if pos < len(have) and have[pos] == level:
            shape.append(data.shape[pos])
            pos += 1
        else:
            shape.append(1)
    shape += [1] * (n - own) + list(data.shape[len(have):])
    if tuple(shape) == data.shape:
        return t
    return t.reshape(shape)


_saved_levels = {}


def _wrap_out(out, levels):
    if isinstance(out, Tensor):
        return _batched(out, levels)
    if isinstance(out, tuple) and hasattr(out, '_fields'):  # a named tuple (values, indices)
        return type(out)(*[_wrap_out(o, levels) for o in out])
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap_out(o, levels) for o in out)
    return out


def _wrap_dim(d, ndim):
    if d < -ndim - 1 or d > ndim:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], '
                         f'but got {d})')
    return d + ndim if d < 0 else d


def _shift(dim, ndim, nb):
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return type(dim)(_wrap_dim(d, max(ndim, 1)) % max(ndim, 1) + nb for d in dim) if ndim else dim
    if ndim == 0:
        return dim
    return _wrap_dim(dim, ndim) % ndim + nb


# name -> position of the dim argument
_DIM_OPS = {'sum': 1, 'mean': 1, 'var': 1, 'std': 1, 'amax': 1, 'amin': 1, 'logsumexp': 1, 'softmax': 1,
            'log_softmax': 1, 'cumsum': 1, 'cumprod': 1, 'prod': 1, 'argmax': 1, 'argmin': 1, 'max': 1, 'min': 1,
            'norm': 2, 'all': 1, 'any': 1, 'nansum': 1, 'median': 1, 'count_nonzero': 1, 'unsqueeze': 1,
            'squeeze': 1, 'select': 1, 'narrow': 1, 'flip': 1, 'unbind': 1, 'chunk': 2, 'split': 2,
            'roll': 2, 'cummax': 1, 'cummin': 1, 'topk': 2, 'sort': 1, 'argsort': 1, 'var_mean': 1, 'std_mean': 1}
_LAST_DIM_BY_DEFAULT = {'sort', 'argsort', 'topk'}  # (dim=-1 when not given)
_FULL_WHEN_NONE = {'sum', 'mean', 'var', 'std', 'amax', 'amin', 'logsumexp', 'prod', 'norm', 'all', 'any',
                   'nansum', 'count_nonzero', 'var_mean', 'std_mean', 'max', 'min', 'argmax', 'argmin', 'median'}


def _with_dim(fn, name, args, kwargs):
    x = args[0]
    if name == 'flip' and len(args) > 2:  # x.flip(0, 1): the dims as separate arguments
        args = (x, tuple(args[1:]))
    levels = _levels_of(x)
    nb = len(levels)
    ndim = _logical_ndim(x)
    pos = _DIM_OPS[name]
    args = list(args)
    key = 'dim' if 'dim' in kwargs else ('dims' if name == 'flip' and 'dims' in kwargs else None)
    if key is not None:
        dim = kwargs[key]
    elif len(args) > pos:
        dim = args[pos]
    else:
        dim = None
    if name in _LAST_DIM_BY_DEFAULT and dim is None:
        dim = -1
    if name == 'squeeze' and dim is None:
        dim = tuple(i for i, s in enumerate(x._data.shape[nb:]) if s == 1)
    if name in _FULL_WHEN_NONE and (dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)):
        if name in ('max', 'min', 'argmax', 'argmin', 'median', 'prod') and ndim:
            # the whole sample: flatten it, reduce along it (these take one dim)
            with _Plain([x]):
                flat = x.reshape(tuple(x._data.shape[:nb]) + (-1,))
                out = fn(flat, nb, *args[2:], **{k: v for k, v in kwargs.items() if k != 'dim'})
            if name in ('max', 'min', 'median'):
                out = out[0]
            return _wrap_out(out, levels)
        if not ndim:  # a 0-d sample: reduced over a dim of 1 made for it (no dims means all)
            rest = {k: v for k, v in kwargs.items() if k not in ('dim', 'keepdim')}
            with _Plain([x]):
                out = fn(x.unsqueeze(nb), nb, *args[2:], **rest)
            return _wrap_out(out[0] if name in ('max', 'min', 'median') else out, levels)
        dim = tuple(range(ndim))
    if name == 'unsqueeze':
        new = (dim + ndim + 1 if dim < 0 else dim) + nb
    elif name == 'flip':
        new = tuple(_wrap_dim(d, ndim) % ndim + nb for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
    else:
        new = _shift(dim, ndim, nb)
    if key is not None:
        kwargs = dict(kwargs, **{key: new})
    elif len(args) > pos:
        args[pos] = new
    else:
        kwargs = dict(kwargs, dim=new)
    with _Plain([x]):
        out = fn(*args, **kwargs)
    return _wrap_out(out, levels)


def _matmul(fn, name, args, kwargs):
    a, b = args[0], args[1]
    if name == '__rmatmul__':
        a, b = b, a
    if name == 'linear':
        bias = args[2] if len(args) > 2 else kwargs.get('bias')
        if not is_batched(b) and not is_batched(bias) and _logical_ndim(a) >= 1:
            # the weight shared by every sample: the batch dims are more leading dims of the input
            levels = _levels_of(a)
            with _Plain([a]):
                out = fn(a, b, bias)
            return _batched(out, levels)
        out = _vm_call('matmul', a, _vm_call('transpose', b, -1, -2))
        bias = args[2] if len(args) > 2 else kwargs.get('bias')
        return out if bias is None else _vm_call('add', out, bias)
    if isinstance(b, Tensor) and not isinstance(a, Tensor):
        a, b = b, a
    tensors = [t for t in (a, b) if isinstance(t, Tensor)]
    levels = _union(tensors)
    na, nb_ = _logical_ndim(a), _logical_ndim(b)
    n = max(na, nb_, 2)
    with _Plain(tensors):
        pa, pb = a, b
        if na == 1:
            pa = unsqueeze(pa, -2)
        if nb_ == 1:
            pb = unsqueeze(pb, -1)
        # the sample's batch dims right-aligned after the levels' (padded with 1s)
        la, lb = _saved_levels.get(id(a), ()), _saved_levels.get(id(b), ())
        ua, ub = pa, pb
        _saved_levels[id(ua)], _saved_levels[id(ub)] = la, lb
        try:
            pa, pb = _align_plain(ua, tensors, levels, n), _align_plain(ub, tensors, levels, n)
        finally:  # (ids are reused once their objects die: no entry may outlive the call)
            for temp, original, levels_of in ((ua, a, la), (ub, b, lb)):
                if temp is not original:
                    _saved_levels.pop(id(temp), None)
                elif levels_of:
                    _saved_levels[id(temp)] = levels_of
        out = _linalg.matmul(pa, pb)  # (looked up when called, as ops' functions may be replaced)
        if nb_ == 1:
            out = squeeze(out, -1)
        if na == 1:
            out = squeeze(out, -1 if nb_ == 1 else -2)
    return _batched(out, levels)


def _vm_call(name, *args, **kwargs):
    """An op by name, through the wrappers (so that its rule applies)."""
    return getattr(Tensor, name)(*args, **kwargs)


def _reshape(fn, name, args, kwargs):
    x = args[0]
    levels = _levels_of(x)
    lead = tuple(x._data.shape[:len(levels)])
    rest = args[1:]
    if name in ('view', 'reshape', 'expand', 'broadcast_to'):
        shape = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
        if not shape and 'size' in kwargs:
            shape = kwargs['size']
        if 'shape' in kwargs:
            shape = kwargs['shape']
        shape = tuple(shape)
        if name in ('expand', 'broadcast_to'):
            ndim = _logical_ndim(x)
            with _Plain([x]):
                y = x.reshape(lead + (1,) * (len(shape) - ndim) + tuple(x._data.shape[len(levels):]))
                out = fn(y, lead + shape)
        else:
            with _Plain([x]):
                out = fn(x, lead + shape)
        return _batched(out, levels)
    nb = len(levels)
    ndim = _logical_ndim(x)
    if name in ('transpose', 'swapaxes', 'swapdims', 'movedim', 'moveaxis'):
        d0 = rest[0] if rest else kwargs.get('dim0', kwargs.get('source'))
        d1 = rest[1] if len(rest) > 1 else kwargs.get('dim1', kwargs.get('destination'))
        with _Plain([x]):
            out = fn(x, _shift(d0, ndim, nb), _shift(d1, ndim, nb))
        return _batched(out, levels)
    if name in ('t', 'T', 'mT'):
        if ndim < 2:
            with _Plain([x]):
                return _batched(x.view_as(x), levels)
        with _Plain([x]):
            out = x.transpose(-1, -2)
        return _batched(out, levels)
    if name == 'permute':
        dims = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
        dims = kwargs.get('dims', dims)
        with _Plain([x]):
            out = fn(x, tuple(range(nb)) + tuple(_wrap_dim(d, ndim) % ndim + nb for d in dims))
        return _batched(out, levels)
    if name == 'flatten':
        start = rest[0] if rest else kwargs.get('start_dim', 0)
        end = rest[1] if len(rest) > 1 else kwargs.get('end_dim', -1)
        if ndim == 0:
            with _Plain([x]):
                return _batched(x.reshape(lead + (1,)), levels)
        with _Plain([x]):
            out = fn(x, _shift(start, ndim, nb), _shift(end, ndim, nb))
        return _batched(out, levels)
    if name in ('contiguous', 'clone', 'detach', 'float', 'double', 'half', 'to', 'type_as', 'requires_grad_',
                'view_as', 'reshape_as', 'expand_as'):
        return None  # (elementwise)
    return None


def _getitem(fn, args, kwargs):
    x, index = args[0], args[1]
    levels = _levels_of(x)
    parts = index if isinstance(index, tuple) else (index,)
    advanced = [isinstance(p, (Tensor, list)) or (hasattr(p, 'dtype') and hasattr(p, 'shape')) for p in parts]
    if any(advanced):
        # unbatched index tensors in one run (no None between them, no batched one): the batch
        # dims, as leading slices, stay in front, as the advanced dims stay in their place
        where = [i for i, a in enumerate(advanced) if a]
        if (not is_batched(x) or any(is_batched(p) for p in parts if isinstance(p, Tensor))
                or where != list(range(where[0], where[-1] + 1))):
            return _loop(fn, '__getitem__', args, kwargs)
    with _Plain([x]):
        out = fn(x, (slice(None),) * len(levels) + parts)
    return _batched(out, levels)


def _setitem(fn, args, kwargs):
    """``self[index] = value``: a basic index (ints, slices, None, Ellipsis) on the physical
    array behind the batch dims, the value aligned to ``self``'s levels and to the indexed
    region's dims; an advanced index once per sample. A value batched where ``self`` is not
    cannot be written into it (PyTorch's error)."""
    self, index, value = args
    parts = index if isinstance(index, tuple) else (index,)
    advanced = any(isinstance(p, (Tensor, list, bool)) or (hasattr(p, 'dtype') and hasattr(p, 'shape'))
                   for p in parts)
    own = _levels_of(self)
    have = _levels_of(value) if isinstance(value, Tensor) else ()
    if any(level not in own for level in have):
        what = 'index_put_' if advanced else 'inplace arithmetic'
        raise RuntimeError(f'vmap: {what}(self, *extra_args) is not possible because there exists a Tensor `other` in '
                           'extra_args that has more elements than `self`. This happened due to `other` being vmapped '
                           'over but `self` not being vmapped over in a vmap. Please try to use out-of-place operators '
                           f'instead of {what}. If said operator is being called inside the PyTorch framework, please '
                           'file a bug report instead.')
    if advanced or (isinstance(value, Tensor) and _logical_ndim(value) > _region_ndim(self, parts, len(own))):
        return _loop(fn, '__setitem__', args, kwargs)
    index = (slice(None),) * len(own) + parts
    with _Plain([self, value] if isinstance(value, Tensor) else [self]):
        if isinstance(value, Tensor):
            value = _align_plain(value, [value], own, _region_ndim(self, parts, len(own)))
        fn(self, index, value)


def _region_ndim(t, parts, nb):
    """The number of sample dims of ``t[parts]`` (a basic index) for ``t`` batched at ``nb``
    levels."""
    return t._data[(slice(None),) * nb + parts].ndim - nb


def _cat_stack(fn, name, args, kwargs):
    tensors = list(args[0])
    dim = args[1] if len(args) > 1 else kwargs.get('dim', 0)
    levels = _union(tensors)
    nb = len(levels)
    ndim = max(_logical_ndim(t) for t in tensors)
    with _Plain(tensors):
        full = [_align_plain(t, tensors, levels, _saved_ndim(t)) for t in tensors]
        lead = [max(p._data.shape[i] for p in full) for i in range(nb)]
        full = [p.expand(tuple(lead) + tuple(p._data.shape[nb:])) if tuple(p._data.shape[:nb]) != tuple(lead) else p
                for p in full]
        new_dim = _wrap_dim(dim, ndim + (name == 'stack')) % (ndim + (name == 'stack')) + nb
        out = fn(full, new_dim)
    return _batched(out, levels)


def _saved_ndim(t):
    return t._data.ndim - len(_saved_levels.get(id(t), ()))


_REDUCTIONS = {'mean': 'mean', 'sum': 'sum', 'none': None}


def _loss(fn, name, args, kwargs):
    """The loss per element (unreduced) on the physical batch, reduced per sample."""
    x, target = args[0], args[1]
    reduction = kwargs.get('reduction', 'mean')
    if name in ('cross_entropy', 'nll_loss'):
        return _class_loss(fn, name, args, kwargs, reduction)
    # elementwise losses: unreduced, then reduced over the sample dims
    per = _elementwise(fn, args[:2], dict(kwargs, reduction='none'), expand=True)
    if reduction == 'none':
        return per
    dims = tuple(range(per.dim()))
    return per.sum(dims) if reduction == 'sum' else per.mean(dims)


def _class_loss(fn, name, args, kwargs, reduction):
    """cross_entropy / nll_loss of a sample (C) or (N, C) with class indices or (cross_entropy)
    probabilities: unreduced on the flattened physical batch, then reduced per sample as
    PyTorch reduces (a weighted mean divides by the weights of the counted targets)."""
    x, target = args[0], args[1]
    extra = {k: v for k, v in kwargs.items() if k != 'reduction'}
    weight = extra.get('weight')
    ndim = _logical_ndim(x)
    probabilities = target._data.dtype.kind == 'f'
    if ndim not in (1, 2) or len(args) > 2 or is_batched(weight) or (
            weight is not None and extra.get('label_smoothing', 0.0) and not probabilities) or (
            probabilities and (name != 'cross_entropy' or _logical_ndim(target) != ndim)):
        return _loop(fn, name, args, kwargs)
    levels = _union([x, target])
    nb = len(levels)
    with _Plain([x, target]):
        px = _align_plain(x, [x, target], levels, ndim)
        pt = _align_plain(target, [x, target], levels, ndim if probabilities else ndim - 1)
        lead = tuple(max(a, b) for a, b in zip(px._data.shape[:nb], pt._data.shape[:nb]))
        px = px.expand(lead + tuple(px._data.shape[nb:]))
        pt = pt.expand(lead + tuple(pt._data.shape[nb:]))
        classes = px._data.shape[-1]
        flat_target = pt.reshape(-1, classes) if probabilities else pt.reshape(-1)
        per = fn(px.reshape(-1, classes), flat_target, reduction='none', **extra)
        per = per.reshape(lead + ((px._data.shape[-2],) if ndim == 2 else ()))
        if reduction == 'none':
            out = per
        elif reduction == 'sum':
            out = per.sum(-1) if ndim == 2 else per
        elif probabilities:  # the mean over the samples' N
            out = per.mean(-1) if ndim == 2 else per
        else:
            counted = (pt != extra.get('ignore_index', -100)).to(per.dtype)
            if weight is not None:
                counted = counted * weight.index_select(0, pt.clamp(0).reshape(-1)).reshape(pt._data.shape)
            out = per.sum(-1) / counted.sum(-1) if ndim == 2 else per / counted
    return _batched(out, levels)


def _loop(fn, name, args, kwargs):
    """PyTorch's fallback: the op once per sample, the results stacked."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f'There is a performance drop because we have not yet implemented the batching rule for '
                      f'aten::{name}. Please file us an issue on GitHub so that we can prioritize its '
                      'implementation.', UserWarning, stacklevel=4)
    tensors = _tensors_in(args, kwargs)
    levels = _union(tensors)
    level = levels[-1]
    size = _state.sizes[level]
    results = []
    for i in range(size):
        def pick(a):
            if isinstance(a, Tensor) and level in _levels_of(a):
                return _select_level(a, level, i)
            if isinstance(a, (tuple, list)) and not isinstance(a, Tensor):
                return type(a)(pick(x) for x in a)
            return a
        picked_args, picked_kwargs = [pick(a) for a in args], {k: pick(v) for k, v in kwargs.items()}
        if any(is_batched(t) for t in _tensors_in(picked_args, picked_kwargs)):
            # batched at outer levels too (nested vmap): once per sample of those as well
            results.append(_loop(fn, name, picked_args, picked_kwargs))
        else:
            results.append(fn(*picked_args, **picked_kwargs))
    return _restack(results, level)


def _select_level(t, level, i):
    levels = _levels_of(t)
    pos = levels.index(level)
    with _Plain([t]):
        out = t.select(pos, i)
    rest = tuple(lv for lv in levels if lv != level)
    return _batched(out, rest)


def _restack(results, level):
    first = results[0]
    if isinstance(first, Tensor):
        inner = _levels_of(first)
        with _Plain(results):
            out = stack(results, len([lv for lv in inner if lv < level]))
        return _batched(out, tuple(sorted(inner + (level,))))
    if isinstance(first, (tuple, list)):
        # (a list: the named tuples of return_types take one, not a generator)
        return type(first)([_restack([r[i] for r in results], level) for i in range(len(first))])
    return first


# ---- rules the declarations name (their ``vmap`` slot) and the matrix functions -----------------

def physical(fn, args, kwargs, min_ndim=0):
    """``fn`` of the batched first argument's physical array, for an op acting on its trailing
    ``min_ndim`` dims (tril, triu, inv, det ...): the batch dims are more leading dims. None
    (the per-sample fallback) if another argument is batched or the sample has too few dims."""
    x = args[0]
    if not is_batched(x) or _logical_ndim(x) < min_ndim or any(
            is_batched(t) for t in _tensors_in(args[1:], kwargs)):
        return None
    with _Plain([x]):
        out = fn(*args, **kwargs)
    return _wrap_out(out, _levels_of(x))


def on_batched(fn, x, args, kwargs):
    """``fn(x, *args, **kwargs)`` on the batched ``x``'s physical array (the caller has shifted
    any dim argument past the batch dims), the result batched as ``x``."""
    levels = _levels_of(x)
    with _Plain([x]):
        out = fn(x, *args, **kwargs)
    return _wrap_out(out, levels)


def _expand_all(tensors, levels, ndims):
    """Inside ``_Plain``: the physical arrays aligned to ``levels`` and expanded to one batch."""
    nb = len(levels)
    full = [_align_plain(t, tensors, levels, n) for t, n in zip(tensors, ndims)]
    lead = tuple(max(f._data.shape[i] for f in full) for i in range(nb))
    return [f.expand(lead + tuple(f._data.shape[nb:])) if tuple(f._data.shape[:nb]) != lead else f for f in full]


def with_operands(fn, tensors, call):
    """``call(*physical)``: the batched and unbatched ``tensors`` aligned to the union of their
    levels and expanded to one batch; the result batched at those levels."""
    levels = _union(tensors)
    ndims = [_logical_ndim(t) for t in tensors]
    with _Plain(tensors):
        out = call(*_expand_all(tensors, levels, ndims))
    return _wrap_out(out, levels)


def _solve(fn, args, kwargs):
    """linalg.solve(A, B, *, left=True): A and B expanded to one batch; a vector B as a column
    (a row for left=False), as PyTorch reads a 1-D B."""
    if len(args) != 2 or set(kwargs) - {'left'}:
        return None
    a, b = args
    left = kwargs.get('left', True)
    vector = _logical_ndim(b) == 1

    def call(pa, pb):
        if vector:
            pb = pb.unsqueeze(-1 if left else -2)
        out = fn(pa, pb, left=left)
        return out.squeeze(-1 if left else -2) if vector else out
    if _logical_ndim(a) != 2 or _logical_ndim(b) not in (1, 2):
        return None
    return with_operands(fn, [a, b], call)


def _matrix(fn, args, kwargs):
    return physical(fn, args, kwargs, min_ndim=2)


# the matrix functions that broadcast over leading dims (their families declare no rule)
_MATRIX_OPS = {name: _matrix for name in (
    'inverse', 'linalg_inv', 'linalg_det', 'det', 'logdet', 'linalg_slogdet', 'slogdet', 'linalg_cholesky',
    'cholesky', 'matrix_exp', 'linalg_matrix_exp', 'linalg_eigvalsh', 'linalg_pinv', 'pinverse')}
_MATRIX_OPS['linalg_solve'] = _solve


def slice_dim(fn, args, kwargs):
    x = args[0]
    if not is_batched(x) or kwargs or len(args) != 5:
        return None
    return on_batched(fn, x, (_shift(args[1], _logical_ndim(x), len(_levels_of(x))),) + tuple(args[2:]), {})


_MATRIX_OPS['slice_dim'] = slice_dim


# ---- dispatch -------------------------------------------------------------------------------------

_ELEMENTWISE = set('''add sub mul div true_divide divide multiply subtract pow neg negative exp log sqrt rsqrt abs sin
cos tan tanh sigmoid relu relu6 gelu silu elu selu celu leaky_relu softplus mish hardtanh hardswish hardsigmoid
logsigmoid where maximum minimum clamp clip clamp_min clamp_max reciprocal square expm1 log1p log2 log10 exp2 erf erfc sign floor ceil
round trunc frac lerp addcmul addcdiv masked_fill eq ne lt le gt ge logical_and logical_or logical_not logical_xor
float double half bfloat16 long int bool to type_as clone contiguous detach zeros_like ones_like empty_like full_like
isnan isinf isfinite nan_to_num atan2 hypot logaddexp xlogy sinh cosh asin acos atan asinh acosh atanh softsign
tanhshrink hardshrink softshrink threshold logit sinc sgn fmod remainder floor_divide bitwise_and bitwise_or
bitwise_xor bitwise_not rsub view_as reshape_as expand_as requires_grad_ positive deg2rad rad2deg copysign'''.split())
_MATMUL = {'matmul', 'linalg_matmul', 'mm', 'mv', 'bmm', 'dot', '__matmul__', '__rmatmul__', 'linear', 'inner'}
_SHAPE = {'view', 'reshape', 'expand', 'broadcast_to', 'transpose', 'swapaxes', 'swapdims', 't', 'permute',
          'flatten', 'movedim', 'moveaxis'}
_LOSSES = {'cross_entropy', 'nll_loss', 'mse_loss', 'l1_loss', 'smooth_l1_loss', 'huber_loss',
           'binary_cross_entropy_with_logits', 'binary_cross_entropy'}
_RANDOM = {'rand_like', 'randn_like', 'randint_like', 'dropout', 'bernoulli', 'normal_', 'uniform_', 'bernoulli_',
           'rand', 'randn', 'randint', 'randperm', 'multinomial', 'feature_alpha_dropout', 'alpha_dropout',
           'dropout1d', 'dropout2d', 'dropout3d'}


def _plain_name(name):
    if name.startswith('__r') and name.endswith('__') and name not in ('__rmatmul__',):
        return name[3:-2]  # __radd__ -> add (operands reversed below)
    if name.startswith('__') and name.endswith('__'):
        return name[2:-2]
    return name


_declared = None  # PyTorch's name -> the batching rule in its declaration's ``vmap`` slot


def _declared_rule(plain):
    """The rule a declared op gives in its ``vmap`` slot: ``'elementwise'`` (the operands
    aligned and broadcast, as the elementwise ops), or ``rule(V, fn, args, kwargs)`` of this
    module ``V``, the result or None (then the op runs once per sample)."""
    global _declared
    if _declared is None:
        rules = {}
        for cls in _op.every_declaration():
            rule = cls.vmap
            if rule is not None:
                for n in (cls.op,) + tuple(cls.aliases):
                    rules[n] = rule
        _declared = rules
    return _declared.get(plain)


def _apply_rule(fn, name, args, kwargs):
    plain = _plain_name(name)
    if plain in ('iadd', 'isub', 'imul', 'itruediv') or (plain.endswith('_') and (
            plain[:-1] in _ELEMENTWISE or _declared_rule(plain[:-1]) == 'elementwise')):
        return _loop(fn, name, args, kwargs) if _levels_of(args[0]) != _union(_tensors_in(args, kwargs)) \
            else _elementwise(fn, args, kwargs)
    if plain == 'masked_fill' and len(args) > 2 and isinstance(args[2], Tensor):
        # a 0-d value tensor (batched: one per sample): where() broadcasts it; masked_fill takes a
        # 0-d value only, which the alignment of the operands would not leave it
        x, mask, value = args[:3]
        return where(mask, value.to(x.dtype), x)
    if plain in _ELEMENTWISE or plain in ('truediv', 'and', 'or', 'xor', 'invert', 'mod', 'floordiv', 'abs'):
        return _elementwise(fn, args, kwargs)
    rule = _declared_rule(plain)
    if rule is not None:
        if rule == 'elementwise':
            return _elementwise(fn, args, kwargs)
        out = rule(_sys.modules[__name__], fn, args, kwargs)
        if out is not None:
            return out
    if plain in _MATRIX_OPS:
        out = _MATRIX_OPS[plain](fn, args, kwargs)
        if out is not None:
            return out
    if plain in _MATMUL:
        return _matmul(fn, name, args, kwargs)
    if plain in _DIM_OPS:
        return _with_dim(fn, plain, args, kwargs)
    if plain in _SHAPE:
        out = _reshape(fn, plain, args, kwargs)
        if out is not None:
            return out
    if plain == 'setitem':
        return _setitem(fn, args, kwargs)
    if plain == 'getitem':
        return _getitem(fn, args, kwargs)
    if plain in ('cat', 'stack', 'concat', 'concatenate'):
        return _cat_stack(fn, 'stack' if plain == 'stack' else 'cat', args, kwargs)
    if plain in _LOSSES:
        return _loss(fn, plain, args, kwargs)
    if plain == 'item':
        return args[0].item()
    rule = _vmap_nn.rule_for(plain)
    if rule is not None:
        out = rule(fn, plain, args, kwargs)
        if out is not None:
            return out
    return _loop(fn, name, args, kwargs)


def _make_wrapper(fn, name):
    plain = _plain_name(name)
    if plain in _RANDOM:
        def vmapped(*args, **kwargs):
            if _state.depth <= _state.floor:
                return fn(*args, **kwargs)
            return _random(fn, plain, args, kwargs)
    else:
        def vmapped(*args, **kwargs):
            if _state.depth <= _state.floor:
                return fn(*args, **kwargs)
            for a in args:
                if type(a) is BatchedTensor or (type(a) in (tuple, list) and any(type(x) is BatchedTensor for x in a)):
                    break
            else:
                if not any(type(v) is BatchedTensor for v in kwargs.values()):
                    return fn(*args, **kwargs)
            if _state.floor and not any(is_batched(t) for t in _tensors_in(args, kwargs)):
                return fn(*args, **kwargs)  # (batched at lowered levels only)
            return _with_levels_saved(fn, name, args, kwargs)
    _instrument._copy_identity(vmapped, fn)
    return vmapped


def _with_levels_saved(fn, name, args, kwargs):
    tensors = _tensors_in(args, kwargs)
    # (a call inside another's _Plain, a forward rule's: a tensor the outer call made plain is
    # plain here, its levels the outer call's again afterwards)
    outer = {id(t): _saved_levels[id(t)] for t in tensors if id(t) in _saved_levels}
    for t in tensors:
        if type(t) is BatchedTensor and t._levels[-1] >= _state.floor:
            _saved_levels[id(t)] = t._levels
        else:
            _saved_levels.pop(id(t), None)
    try:
        return _apply_rule(fn, name, args, kwargs)
    finally:
        for t in tensors:
            _saved_levels.pop(id(t), None)
        _saved_levels.update(outer)


def _random(fn, name, args, kwargs):
    mode = _state.randomness[-1]
    if mode == 'error':
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           'of vmap')
    tensors = _tensors_in(args, kwargs)
    batched = [t for t in tensors if is_batched(t)]
    level = _state.depth - 1
    if mode == 'same':
        if not batched:
            return fn(*args, **kwargs)
        if name in ('dropout', 'dropout1d', 'dropout2d', 'dropout3d', 'alpha_dropout', 'feature_alpha_dropout'):
            x = args[0]
            mask = fn(ones(x.shape, dtype=x.dtype), *args[1:], **kwargs)  # one mask for every sample
            return _vm_call('mul', x, mask)
        return _loop(fn, name, args, kwargs)
    # different: draws for the physical batch
    if not batched:
        out = fn(*args, **kwargs)
        sizes = _state.sizes[:_state.depth]
        return _batched(fn(*((tuple(sizes) + tuple(args[0]),) if args and isinstance(args[0], (tuple, list))
                             else tuple(sizes) + tuple(args)), **kwargs), tuple(range(_state.depth))) \
            if name in ('rand', 'randn') else out
    levels = _union(batched)
    with _Plain(batched):
        out = fn(*args, **kwargs)
    return _batched(out, levels)


def _install():
    """Wrap the ops: vmap's layer (``autograd._instrument``), over forward AD's when a dual level
    is open (``jacfwd``: vmap over the basis of tangents; an op on a batched tensor, a tangent,
    goes through its batching rule, an op on duals through forward AD, whose forward rule then
    computes the tangents with the batched ops) and under the profiler's."""
    _instrument.enable('vmap')
    _state.installed = True


def _ops():
    table = _instrument._build_ops(imported=True)
    fn = Tensor.__dict__['item']
    table[id(fn)] = (fn, 'item')
    return table


def _uninstall():
    _state.installed = False
    _instrument.disable('vmap')


_instrument.register_layer('vmap', _make_wrapper, _ops)


# ---- vmap -------------------------------------------------------------------------------------

def _fname(func):
    return getattr(func, '__name__', repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None):
    """``vmap(f)(*inputs)``: ``f`` applied to each slice of the inputs along ``in_dims``, the
    results stacked along ``out_dims``, computed in one pass: each op's batching rule carries
    the batch dimension (see the design note)."""
    if randomness not in ('error', 'different', 'same'):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f'{randomness}')
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f'vmap: chunk_size should be None or greater than 0. (got {chunk_size})')

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        name = _fname(func)
        if not args:
            raise ValueError(f'vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are '
                             'trying to vmap over a function with no inputs. The latter is unsupported.')
        if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
            raise ValueError(f'vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): expected `in_dims` to be int or a '
                             '(potentially nested) tuple matching the structure of inputs, got: '
                             f'{type(in_dims)}.')
        dims = _broadcast_in_dims(name, in_dims, args)
        flat_args, spec = _flatten(args)
        size = None
        sizes = []
        for a, d in zip(flat_args, dims):
            if d is None:
                continue
            if not isinstance(a, Tensor):
                raise ValueError(f'vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for an input but '
                                 f'the input is of type {type(a)}. We cannot vmap over non-Tensor arguments, please '
                                 'use None as the respective in_dim')
            nd = a.dim()
            if not -nd <= d < nd:
                raise ValueError(f'vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for some input, '
                                 f'but that input is a Tensor of dimensionality {nd} so expected in_dim to satisfy '
                                 f'-{nd} <= in_dim < {nd}.')
            sizes.append(a.shape[d])
        if not sizes:
            raise ValueError(f'vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got all in_dims=None. At least one '
                             'input must be batched.' if False else
                             f'vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): at least one input must be '
                             'batched (have an in_dim other than None)')
        if len(set(sizes)) > 1:
            raise ValueError(f'vmap: Expected all tensors to have the same size in the mapped dimension, got sizes '
                             f'{sizes} for the mapped dimension')
        size = sizes[0]
        if chunk_size is not None and chunk_size < size:
            return _chunked(func, flat_args, dims, spec, kwargs, size, name, chunk_size, out_dims, randomness)
        return _run(func, flat_args, dims, spec, kwargs, size, name, out_dims, randomness)
    return wrapped


def _chunked(func, flat_args, dims, spec, kwargs, size, name, chunk_size, out_dims, randomness):
    """``chunk_size`` samples at a time, the chunks' results concatenated along out_dims."""
    pieces = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        args = [a.narrow(d, start, n) if d is not None else a for a, d in zip(flat_args, dims)]
        pieces.append(_run(func, args, dims, spec, kwargs, n, name, out_dims, randomness))
    leaves = [_flatten(p)[0] for p in pieces]
    out_spec = _flatten(pieces[0])[1]
    od = _out_dims_list(out_dims, len(leaves[0]), name)
    return _unflatten([cat([lv[i] for lv in leaves], od[i]) if od[i] is not None else leaves[0][i]
                       for i in range(len(leaves[0]))], out_spec)


def _out_dims_list(out_dims, n, name):
    if isinstance(out_dims, int) or out_dims is None:
        return [out_dims] * n
    if len(out_dims) != n:
        raise ValueError(f'vmap({name}, ..., out_dims={out_dims!r})(<inputs>): out_dims is not compatible with the '
                         'structure of `outputs`.')
    return list(out_dims)


def _broadcast_in_dims(name, in_dims, args):
    """One in_dim per flattened input (None: not batched)."""
    flat_args, spec = _flatten(args)
    if isinstance(in_dims, int):
        return [in_dims if isinstance(a, Tensor) else None for a in flat_args]
    if len(in_dims) != len(args):
        raise ValueError(f'vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the '
                         f'structure of `inputs`. in_dims has structure {_treespec(in_dims)} but inputs has '
                         f'structure {_treespec(args)}.')
    out = []
    for a, d in zip(args, in_dims):
        leaves = _flatten(a)[0]
        if d is None or isinstance(d, int):
            out.extend([d if isinstance(x, Tensor) or d is not None else None for x in leaves])
        else:
            sub = _flatten(d)[0]
            if len(sub) != len(leaves):
                raise ValueError(f'vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with '
                                 f'the structure of `inputs`. in_dims has structure {_treespec(in_dims)} but inputs '
                                 f'has structure {_treespec(args)}.')
            out.extend(sub)
    return out


def _run(func, flat_args, dims, spec, kwargs, size, name, out_dims=0, randomness='error'):
    level = _state.depth
    if level == 0:
        _install()
    try:  # (the ops are put back however the call ends)
        func = _instrument.bound(func)  # vmap(leafgrad.dot): the op itself, taken before the ops were wrapped
        _state.sizes = _state.sizes[:level] + [size]
        _state.randomness = _state.randomness[:level] + [randomness]
        batched_args = [a if d is None else _enter(a, d, level) for a, d in zip(flat_args, dims)]
        _state.depth = level + 1
        try:
            result = func(*_unflatten(batched_args, spec), **kwargs)
        finally:
            _state.depth = level
        return _exit(result, level, name, out_dims)
    finally:
        if level == 0:
            _uninstall()


def _enter(a, d, level):
    """``a`` batched at ``level`` along its logical dim ``d``."""
    levels = _levels_of(a)
    nb = len(levels)
    ndim = a._data.ndim - nb
    d = d % ndim
    with _Plain([a]):
        # the new level's dim goes after the outer levels' dims
        moved = a.movedim(nb + d, nb)
    return _batched(moved, levels + (level,))


def _exit(result, level, name, out_dims=0):
    leaves, spec = _flatten(result)
    od = _out_dims_list(out_dims, len(leaves), name)
    outs = []
    for leaf, d in zip(leaves, od):
        if d is None:
            if isinstance(leaf, Tensor) and level in _levels_of(leaf):
                raise ValueError(f'vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None')
            outs.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f'vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. Did you '
                             'mean to set out_dims= to None for output?')
        outs.append(None)
    # Each tensor unbatched once per out_dim it is returned with (a tensor returned twice alike is
    # one result, as in PyTorch); out_dim 0 last, where t itself can become the result.
    done = {}
    for i in sorted((i for i, d in enumerate(od) if d is not None), key=lambda i: od[i] == 0):
        leaf, d = leaves[i], od[i]
        key = (id(leaf), d)
        if key not in done:
            others = any(x is leaf and e is not None and e != d and (id(x), e) not in done for x, e in zip(leaves, od))
            done[key] = _unbatch(leaf, level, d, alone=not others)
        outs[i] = done[key]
    return _unflatten(outs, spec)


def _unbatch(t, level, out_dim=0, alone=False):
    """``t`` without ``level``: its batch dim moved to ``out_dim`` of the sample's dims.
    ``alone``: nothing else will unbatch t (it is this level's result, once), so where no dim
    moves, the level can be taken off t itself."""
    levels = _levels_of(t)
    nb = len(levels)
    ndim = t._data.ndim - nb
    size = _state.sizes[level]
    if not -(ndim + 1) <= out_dim <= ndim:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-(ndim + 1)}, {ndim}], but got '
                         f'{out_dim})')
    out_dim %= ndim + 1
    rest = tuple(lv for lv in levels if lv != level)
    if alone and level in levels and levels.index(level) == len(rest) + out_dim and t._fw_grad is None:
        # the batch dim is where it goes: t itself is the result, the level taken off in place
        # (t was made at this level, which ends now), and the op that made it stays its grad_fn,
        # as PyTorch's unwrapped result is the op's own output (no permute recorded)
        if rest:
            t._levels = rest
        else:
            t.__class__ = Tensor
        return t
    with _Plain([t]):
        if level not in levels:  # the same for every sample: expanded along the batch
            out = t.unsqueeze(nb + out_dim)
            shape = list(out._data.shape)
            shape[nb + out_dim] = size
            out = out.expand(tuple(shape))
        else:
            pos = levels.index(level)
            out = t.movedim(pos, len(rest) + out_dim)
    return _batched(out, rest) if rest else out


# ---- backward under vmap: per-sample gradients, vmap over a vjp -----------------------------------

def active():
    return _state.depth > _state.floor


def depth():
    """The number of open vmap levels: a graph recorded now holds physical arrays with the batch
    dims of these levels in front (see ``grad_through``)."""
    return _state.depth


def per_sample_leaf(x):
    """A differentiated input inside vmap: a leaf batched along every open level (an unbatched
    one expanded), so that each sample's gradient is its own."""
    levels = _levels_of(x)
    want = tuple(range(_state.depth))
    with _Plain([x]):
        tangent = x._fw_grad  # (a jvp of a grad under vmap: the leaf keeps the input's tangent)
        if tangent is not None and type(tangent) is not Tensor:
            tangent = None
        if levels != want:
            data = x
            # insert a dim for each missing level, then expand to its size
            for i, level in enumerate(want):
                if level not in levels:
                    data = data.unsqueeze(i)
                    tangent = None if tangent is None else tangent.unsqueeze(i)
            full = tuple(_state.sizes[lv] for lv in want) + tuple(data._data.shape[len(want):])
            data = data.expand(full)
            tangent = None if tangent is None else tangent.expand(full)
        else:
            data = x
        leaf = data.detach().contiguous().requires_grad_(True) if data is x else data.detach().requires_grad_(True)
        if tangent is not None:
            leaf = forward_ad.make_dual(leaf, tangent.detach() if tangent._requires_grad else tangent)
    return _batched(leaf, want)


def grad_through(outputs, inputs, cotangents, depth, **options):
    """``autograd.grad(outputs, inputs, cotangents, **options)`` through a graph recorded at vmap
    depth ``depth``, called at the current depth.

    The graph's nodes hold physical arrays (the batch dims of the levels below ``depth`` in
    front): those levels are lowered for the walk (a tensor batched at them only is its
    physical array, as the nodes saved it), so per-sample gradients are one backward over the
    whole batch. Levels opened since (vmap over the cotangents: ``vmap(vjp_fn)``, ``jacrev``)
    stay batched: each cotangent carries them in front of its output's physical layout, every
    node's derivative runs once on the batch of cotangents through the ops' batching rules
    (``apply_node``), and each gradient comes back batched as its input and at those levels.

    Only the levels the graph's ends are batched at are lowered: a level none of them carries
    (jacfwd's basis of tangents, when f calls vjp on unbatched primals) holds no physical dim
    in the graph, and the tangents batched at it stay batched through the walk."""
    carried = [lv for t in list(outputs) + list(inputs) for lv in _levels_below(t, depth)]
    depth = max(_state.floor, max(carried) + 1) if carried else min(depth, _state.floor)
    for cot, out in zip(cotangents, outputs):
        missing = [lv for lv in _levels_below(cot, depth) if lv not in _levels_below(out, depth)]
        if missing:  # a cotangent that varies along a level its output does not: per sample
            return _grad_through_each(outputs, inputs, cotangents, depth, missing[-1], options)
    lowered = [_lowered_cotangent(c, o, depth) for c, o in zip(cotangents, outputs)]
    prev = _state.floor
    _state.floor = depth
    try:
        grads = autograd_grad(outputs, inputs, lowered, **options)
    finally:
        _state.floor = prev
    return tuple(None if g is None else _raised_gradient(g, x, depth) for g, x in zip(grads, inputs))


def _levels_below(t, depth):
    return tuple(lv for lv in t._levels if lv < depth) if type(t) is BatchedTensor else ()


def _grad_through_each(outputs, inputs, cotangents, depth, level, options):
    results = []
    for i in range(_state.sizes[level]):
        picked = [_select_level(c, level, i) if type(c) is BatchedTensor and level in c._levels else c
                  for c in cotangents]
        last = i == _state.sizes[level] - 1
        results.append(grad_through(outputs, inputs, picked, depth,
                                    **(options if last else dict(options, retain_graph=True))))
    return tuple(_restack_or_none([r[k] for r in results], level) for k in range(len(inputs)))


def _restack_or_none(results, level):
    present = [r for r in results if r is not None]
    if not present:
        return None
    if len(present) < len(results):
        results = [zeros_like(present[0]) if r is None else r for r in results]
    return _restack(results, level)


def _lowered_cotangent(c, out, depth):
    """The cotangent ``c`` of ``out`` laid out for a walk with the levels below ``depth``
    lowered: its levels from ``depth`` on in front (batched), then ``out``'s lowered levels
    (``c`` expanded along those it lacks), then the sample's dims."""
    if not isinstance(c, Tensor):
        return c
    own = list(c._levels) if type(c) is BatchedTensor else []
    out_levels = list(_levels_below(out, depth))
    high = [lv for lv in own if lv >= depth]
    if not own and not out_levels:
        return c
    with _Plain([c]):
        p = c
        for lv in out_levels:
            if lv not in own:
                pos = sum(1 for x in own if x < lv)
                p = p.unsqueeze(pos)
                own.insert(pos, lv)
        if len(own) != (len(c._levels) if type(c) is BatchedTensor else 0):
            p = p.expand(tuple(_state.sizes[lv] for lv in own) + tuple(p._data.shape[len(own):]))
        order = [own.index(lv) for lv in high] + [own.index(lv) for lv in out_levels]
        if order != list(range(len(order))):
            p = p.permute(order + list(range(len(order), p._data.ndim)))
    return _batched(p, high) if high else p


def _raised_gradient(g, x, depth):
    """A gradient from a walk with the levels below ``depth`` lowered (batched at the levels
    from ``depth`` on, its logical layout ``x``'s physical one) batched as ``x`` and at those
    levels."""
    own = _levels_below(x, depth)
    high = tuple(lv for lv in g._levels if lv >= depth) if type(g) is BatchedTensor else ()
    if not high:
        if not own:
            return g
        if type(g) is BatchedTensor:
            with _Plain([g]):
                g = g.view_as(g)
        return _batched(g, own)
    if not own:
        return g
    with _Plain([g]):
        p = g.movedim(tuple(range(len(high))), tuple(range(len(own), len(own) + len(high))))
    return _batched(p, own + high)


def spread(x):
    """``x`` batched at every open level (expanded along those it lacks), its history kept: a
    primal of jacfwd under vmap, whose tangents (the basis) are batched at the innermost level."""
    levels, want = _levels_of(x), tuple(range(_state.floor, _state.depth))
    if levels == want:
        return x
    with _Plain([x]):
        data = x
        for i, level in enumerate(want):
            if level not in levels:
                data = data.unsqueeze(i)
        data = data.expand(tuple(_state.sizes[lv] for lv in want) + tuple(data._data.shape[len(want):]))
    return _batched(data, want)


def zeros_with_levels(t, like):
    """Zeros of ``t``'s (logical) shape batched at the levels of ``t`` and of ``like``: the tangent
    made for ``t`` when ``like``, a tangent batched maybe where ``t`` is not, is written into it in
    place (PyTorch's ``_new_zeros_with_same_feature_meta``)."""
    levels = _union([t, like])
    return _batched(zeros(tuple(_sizes(levels)) + tuple(t.shape), dtype=t.dtype), levels)


def first_of_innermost(tree):
    """The tensors of ``tree`` at index 0 of the innermost open level (along which they are all
    equal: computed from primals ``spread`` along it)."""
    level = _state.depth - 1
    leaves, spec = _flatten(tree)
    return _unflatten([_select_level(t, level, 0) if isinstance(t, Tensor) and level in _levels_of(t) else t
                       for t in leaves], spec)


def batched_in(tree):
    """Whether a tensor of ``tree`` is batched at an open vmap level."""
    return active() and any(is_batched(leaf) for leaf in _flatten(tree)[0])


def apply_node(node, grads, apply):
    """A node's derivative in a walk under vmap (``grad_through``) given batched gradients:
    run once on the batch, the derivative's ops going through their batching rules; a
    derivative that does not batch (one written on raw arrays: its result comes back unbatched,
    or it fails on the batch's shapes) runs once per sample instead and the results are
    stacked, as PyTorch falls back to a loop for an op without a batching rule."""
    if not any(is_batched(g) for g in grads):
        return apply(node, grads)
    if forward_ad._state.level is not None:
        return apply(node, grads)  # (a sample's slice would lose the gradients' tangents)
    if len(grads) == 1 and getattr(type(node), 'jvp', None) is _elementwise_jvp:
        # a diagonal Jacobian: the derivative is elementwise in the gradient, whose physical array
        # (batch dims in front) broadcasts against the saved operands sample by sample
        levels = grads[0]._levels
        with _Plain(grads):
            outs = apply(node, grads)
        return tuple(None if o is None else _batched(o, levels) for o in outs)
    if hasattr(type(node), '_forward_cls'):
        return apply(node, grads)  # a custom Function's backward: batched as written, as in PyTorch
    if type(node) not in _unbatched_nodes:
        try:
            outs = apply(node, grads)
        except Exception:
            pass  # (per sample: an error that is not the batch's is raised again there)
        else:
            if all(o is None or is_batched(o) for o in outs):
                return outs
            _unbatched_nodes.add(type(node))
    level = max(g._levels[-1] for g in grads if is_batched(g))
    results = []
    for i in range(_state.sizes[level]):
        picked = [_select_level(g, level, i) if is_batched(g) and level in g._levels else g for g in grads]
        results.append(apply_node(node, picked, apply))
    return tuple(_restack_or_none([r[k] for r in results], level) for k in range(len(results[0])))


# Node classes whose derivative gave an unbatched result or failed on a batch of gradients:
# later walks run them per sample at once.
_unbatched_nodes = set()


from . import _vmap_nn  # noqa: E402  (the neural-network ops' rules; they use this module's helpers)
