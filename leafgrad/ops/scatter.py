"""Writing at indices: scatter, scatter_add, index_add, index_fill, masked_fill, index_put,
each out of place and in place (``x.scatter_(...)``: recorded by ``inplace.inplace``, so
in-place writes into views and the version counter work as for every in-place op).

The derivatives pair up: gather's is a scatter_add into zeros and scatter_add's (for src) is a
gather; index_select's is an index_add and index_add's (for source) an index_select.

Each op is declared once (``_op.Op``), its in-place variant written beside it (``inplace``: the
tensor operands that the in-place machinery checks are the written ones only, not the index).
"""
import warnings

from .. import backend
from ..autograd.graph import each_sample
from .._arg_parser import Overloads
from ._op import EXACT, Op, warn_once
from ._index import (_broadcast_message, _check_index_bounds, _normalize, _to_numpy_index, index_array,
                     on_device_of, scalar_type_name, scatter_coords)
from ._util import SCALAR_NAMES, Node, autocast, c_order, ops, record, saved_output, sum_to, wrap, wrap_dim, xp
from ..tensor import Tensor, fitted_scalar
from ._inplace import inplace


def _scalar_array(value, like):
    if isinstance(value, Tensor):
        return value._data.astype(like.dtype)
    # (PyTorch's overflow error; like=: a 0-d array where ``like`` lives, which CuPy's where takes)
    return xp.asarray(fitted_scalar(value, like.dtype, half_checked=True), like=like)


# ---- scatter / scatter_add -------------------------------------------------------------------

def _zeros_of(t):
    """The zero tangent of an input without one (of the output's shape and dtype)."""
    return wrap(xp.zeros(t._data.shape, dtype=t._data.dtype, like=t._data))


class ScatterBackward1(Op):
    """scatter of a number."""
    node = 'ScatterBackward1'
    __slots__ = ('dim', 'index')
    saved_state = ('index',)

    def jvp(self, tangents):  # the input's tangent, zero where the value was written
        return each_sample(lambda t: scatter(t, self.dim, self.index, 0), tangents[0])

    def apply(self, grad):
        return scatter(grad, self.dim, self.index, 0),


class NotImplemented_(Node):
    """Recorded where PyTorch has no derivative (scatter with ``reduce=``); fails if reached."""
    __slots__ = ('what',)

    def apply(self, *grads):
        raise RuntimeError(f'derivative for {self.what} is not implemented')

    def name(self):
        return 'leafgrad::autograd::NotImplemented'


def _scatter_check(fname, input, d, idx, src):
    shape = input._data.shape
    if idx.size == 0:  # PyTorch checks only the source's dtype against an empty index
        if isinstance(src, Tensor) and src._data.dtype != input._data.dtype:
            raise RuntimeError('scatter(): Expected self.dtype to be equal to src.dtype')  # (PyTorch's word)
        return
    if idx.ndim != len(shape) and not (idx.ndim <= 1 and len(shape) <= 1):
        raise RuntimeError('Index tensor must have the same number of dimensions as self tensor')
    if src is not None:
        if src._data.dtype != input._data.dtype:
            raise RuntimeError('scatter(): Expected self.dtype to be equal to src.dtype')  # (PyTorch's word)
        sshape = src._data.shape
        if src._data.ndim != idx.ndim:
            raise RuntimeError('Index tensor must have the same number of dimensions as src tensor')
        for k in range(idx.ndim):
            if (k != d and idx.shape[k] > shape[k]) or idx.shape[k] > sshape[k]:
                raise RuntimeError(f'Expected index {list(idx.shape)} to be no larger than self {list(shape)} apart '
                                   f'from dimension {d} and to be no larger size than src {list(sshape)}')
    else:
        for k in range(idx.ndim):
            if k != d and idx.shape[k] > shape[k]:
                raise RuntimeError(f'Expected index {list(idx.shape)} to be no larger than self {list(shape)} apart '
                                   f'from dimension {d}')
    _check_index_bounds(idx, shape[d] if shape else 1, d)


def _scatter_data(input, d, idx, values, reduce):
    data = input._data.copy()
    if idx.size == 0:
        return data
    target = data if data.ndim else data.reshape(1)
    i = idx if idx.ndim else idx.reshape(1)
    coords = scatter_coords(i, d)
    if values.ndim:
        values = values[tuple(slice(0, n) for n in i.shape)]
    if reduce is None:
        target[coords] = values
    elif reduce == 'add':
        xp.add.at(target, coords, values)
    elif reduce == 'multiply':
        _ufunc_at('multiply', target, coords, values)
    else:
        raise RuntimeError('reduce argument must be either add or multiply.')
    return data


def _scatter_vmap(V, fn, args, kwargs):
    """scatter / scatter_add under vmap: the input, index and (a tensor) src aligned and expanded
    to one batch, the dim shifted past the batch dims; None (per sample) for reduce=."""
    if len(args) < 3 or set(kwargs) - {'src', 'value'}:
        return None
    input, dim, index = args[:3]
    src = args[3] if len(args) > 3 else kwargs.get('src', kwargs.get('value'))
    ndim = V._logical_ndim(input)
    tensors = [t for t in (input, index, src) if isinstance(t, Tensor)]
    if ndim == 0 or any(V._logical_ndim(t) != ndim for t in tensors):
        return None
    d = wrap_dim(dim, ndim) + len(V._union(tensors))

    def call(x, idx, *rest):
        return fn(x, d, idx, rest[0] if rest else src)
    return V.with_operands(fn, tensors, call)


class Scatter(Op):
    """scatter(input, dim, index, src=None, *, value=None, reduce=None): ``input`` with ``src``'s
    elements (or a number) written at ``index`` along ``dim``; ``reduce=`` adds or multiplies
    (no derivative)."""
    op, node = 'scatter', 'ScatterBackward0'
    out = EXACT  # (out= of the result's dtype only, as PyTorch's)
    __slots__ = ('dim', 'index')
    saved_state = ('index',)

    def vmap(V, fn, args, kwargs):  # input, index and src expanded to one batch, dim shifted
        return _scatter_vmap(V, fn, args, kwargs)

    def inplace(self, dim, index, src=None, *, value=None, reduce=None):
        return inplace(self, lambda s: scatter(s, dim, index, src, value=value, reduce=reduce), _others(src))

    def forward(input, dim, index, src=None, *, value=None, reduce=None):
        if src is None:
            src = value
        idx = index_array(index, 'scatter')
        d = wrap_dim(dim, max(input._data.ndim, 1))
        is_tensor = isinstance(src, Tensor)
        if reduce is not None and is_tensor:  # (before any check, as PyTorch's)
            warn_once('The reduce argument of leafgrad.scatter with Tensor src is deprecated and will be removed in '
                      'a future PyTorch release. Use leafgrad.scatter_reduce instead for more reduction options.')
        _scatter_check('scatter', input, d, idx, src if is_tensor else None)
        values = src._data if is_tensor else _scalar_array(src, input._data)
        data = _scatter_data(input, d, idx, values, reduce)
        if reduce is not None:
            out, node = record(data, NotImplemented_, (input, src) if is_tensor else (input,))
            if node is not None:
                node.what = 'aten::scatter'
            return out
        if is_tensor:
            out, node = record(data, Scatter, (input, src))
        else:
            out, node = record(data, ScatterBackward1, (input,))
        if node is not None:
            node.dim, node.index = d, index
        return out

    def jvp(self, tangents, output):  # the input's tangent with the source's written at the index
        ts, tsrc = tangents
        if ts is None:
            ts = _zeros_of(output)
        if tsrc is None:
            return each_sample(lambda t: scatter(t, self.dim, self.index, 0), ts)
        return each_sample(lambda t, u: scatter(t, self.dim, self.index, u), ts, tsrc)

    def apply(self, grad):
        gs = scatter(grad, self.dim, self.index, 0) if self.needs_input_grad(0) else None
        gsrc = ops.gather(grad, self.dim, self.index) if self.needs_input_grad(1) else None
        return gs, gsrc


class ScatterAdd(Op):
    """scatter_add(input, dim, index, src): ``src``'s elements added at ``index`` along ``dim``."""
    op, node = 'scatter_add', 'ScatterAddBackward0'
    out = EXACT  # (out= of the result's dtype only, as PyTorch's)
    __slots__ = ('dim', 'index', 'given_dim')
    saved_state = ('index',)
    saved = ('dim=given_dim:int64', 'index=index')

    def vmap(V, fn, args, kwargs):  # input, index and src expanded to one batch, dim shifted
        return _scatter_vmap(V, fn, args, kwargs)

    def inplace(self, dim, index, src):
        return inplace(self, lambda s: scatter_add(s, dim, index, src), (src,))

    def forward(input, dim, index, src):
        idx = index_array(index, 'scatter_add')
        d = wrap_dim(dim, max(input._data.ndim, 1))
        _scatter_check('scatter_add', input, d, idx, src)
        data = _scatter_data(input, d, idx, src._data, 'add')
        out, node = record(data, ScatterAdd, (input, src))
        if node is not None:
            node.dim, node.index = d, index if node.needs_input_grad(1) else None  # as index_add
            node.given_dim = dim
        return out

    def jvp(self, tangents, output):  # linear in both
        ts, tsrc = tangents
        if tsrc is None:
            return ts
        if ts is None:
            ts = _zeros_of(output)
        return each_sample(lambda t, u: scatter_add(t, self.dim, self.index, u), ts, tsrc)

    def apply(self, grad):
        return grad, (ops.gather(grad, self.dim, self.index) if self.needs_input_grad(1) else None)


# ---- scatter_reduce -------------------------------------------------------------------------------

_REDUCE_INIT = {'sum': 0, 'prod': 1, 'mean': 0, 'amax': -xp.inf, 'amin': xp.inf}
_REDUCE_UFUNC = {'sum': 'add', 'prod': 'multiply', 'mean': 'add', 'amax': 'maximum', 'amin': 'minimum'}  # (xp's, looked up
# at the call: xp is CuPy's dispatcher once a GPU is in use)


def _ufunc_at(name, target, index, values):
    """``xp.<name>.at(target, index, values)``: the unbuffered in-place update (repeated indices
    all applied). On a GPU only add.at is CuPy's: multiply.at it lacks, and its maximum.at and
    minimum.at gave NaN where NumPy gives the extremes (on the H200), so those run in rounds
    (``_at_in_rounds``)."""
    if name != 'add' and backend.device_of(target).type == 'cuda':
        _at_in_rounds(getattr(xp, name), target, index, values)
    else:
        getattr(xp, name).at(target, index, values)


def _at_in_rounds(ufunc, target, index, values):
    """``ufunc.at`` on a GPU: the written elements' positions sorted stably, so that the k-th
    value of each position is applied in the k-th round (one fancy-indexed ufunc per round, no
    position twice in one), in the order NumPy's ``ufunc.at`` applies them (the same rounding,
    the same NaN). Rounds: the most values of one position."""
    ids = xp.arange(target.size, like=target).reshape(target.shape)[index]
    operands = xp.broadcast_to(values, ids.shape).reshape(-1)
    ids = ids.reshape(-1)
    if not ids.size:
        return
    order = xp.argsort(ids, kind='stable')
    ids, operands = ids[order], operands[order]
    rank = xp.arange(ids.size, like=ids) - xp.searchsorted(ids, ids, side='left')  # (k-th value of its position)
    for k in range(int(rank.max()) + 1):
        this = rank == k
        at = xp.unravel_index(ids[this], target.shape)
        target[at] = ufunc(target[at], operands[this])


def _divide_by_counts(target, count):
    """A mean's last step, in place: the sums divided by how many values each has (at least
    one), in their dtype (integers floored), as PyTorch's scatter_reduce and index_reduce."""
    count = xp.maximum(count, 1).astype(target.dtype)
    if target.dtype.kind in 'fVc':
        target /= count
    else:
        target //= count


class ScatterReduce(Op):
    """scatter_reduce(input, dim, index, src, reduce, *, include_self=True): ``src``'s elements
    reduced (sum, prod, mean, amax, amin) into ``input`` at ``index`` along ``dim``."""
    op, node = 'scatter_reduce', 'ScatterReduceBackward0'
    out = EXACT  # (out= of the result's dtype only, as PyTorch's)
    __slots__ = ('dim', 'index', 'reduce', 'include_self')

    def inplace(self, dim, index, src, reduce, *, include_self=True):
        return inplace(self, lambda s: scatter_reduce(s, dim, index, src, reduce, include_self=include_self), (src,))

    def forward(input, dim, index, src, reduce, *, include_self=True):
        if reduce not in _REDUCE_INIT:
            raise RuntimeError(f'reduce argument must be either sum, prod, mean, amax or amin, got {reduce}')
        idx = index_array(index, 'scatter_reduce')
        d = wrap_dim(dim, max(input._data.ndim, 1))
        _scatter_check('scatter_reduce', input, d, idx, src)
        data = input._data.copy()
        target = data if data.ndim else data.reshape(1)
        i = idx if idx.ndim else idx.reshape(1)
        if idx.size == 0:  # (nothing written, whatever the shapes)
            i = xp.zeros((0,) * max(target.ndim, 1), dtype=xp.int64, like=target)
        coords = scatter_coords(i, d)
        if idx.size == 0:
            values = xp.zeros(i.shape, dtype=target.dtype, like=target)
        else:
            values = src._data[tuple(slice(0, n) for n in i.shape)] if src._data.ndim else src._data.reshape(1)
        if not include_self:
            target[coords] = _REDUCE_INIT[reduce]
        _ufunc_at(_REDUCE_UFUNC[reduce], target, coords, values)
        if reduce == 'mean':
            count = xp.full(target.shape, 1 if include_self else 0, dtype=xp.int64, like=target)
            xp.add.at(count, coords, 1)
            _divide_by_counts(target, count)
        out, node = record(data, ScatterReduce, (input, src))
        if node is not None:
            node.dim, node.index, node.reduce, node.include_self = d, index, reduce, include_self
            node.save(input, src, saved_output(out))
        return out

    def apply(self, grad):
        d, index = self.dim, self.index
        return _reduce_backward(
            self, grad,
            again=lambda s, src: scatter_reduce(s, d, index, src, self.reduce, include_self=self.include_self),
            add_at=lambda t, src: scatter_add(t, d, index, src), take=lambda t: ops.gather(t, d, index),
            zero_at=lambda t: scatter(t, d, index, 0))


def _reduce_backward(node, grad, again, add_at, take, zero_at):
    """The derivatives of scatter_reduce and index_reduce (PyTorch's formulas), given how the op
    reaches its positions: ``again(self, src)`` the op itself, ``add_at(t, src)`` src added at
    the positions of t, ``take(t)`` t's values at them, ``zero_at(t)`` t with zeros there."""
    input, src, result = node.saved_tensors
    reduce = node.reduce
    if reduce == 'sum':
        gs, gsrc = grad, take(grad)
    elif reduce == 'prod':
        # The product of the others, computed with each zero taken out (dividing the product by
        # a zero factor would give NaN): the input's zeros replaced by ones, and a source's only
        # zero at its position replaced by one.
        self_zero = ops.eq(input, 0)
        masked_self = masked_fill(input, self_zero, 1)
        gs = grad * again(masked_self, src) / masked_self
        src_zero = ops.eq(src, 0)
        zeros = add_at(wrap(xp.zeros(input._data.shape, dtype=input._data.dtype, like=input._data)),
                       src_zero.to(input.dtype))
        single_zero = ops.logical_and(src_zero, ops.eq(take(zeros), 1))
        others = again(input, masked_fill(src, single_zero, 1))
        gsrc = ops.where(single_zero, take(grad * others), take(grad * result) / masked_fill(src, src_zero, 1))
    elif reduce == 'mean':
        base = xp.ones if node.include_self else xp.zeros
        n = add_at(wrap(base(grad._data.shape, dtype=grad._data.dtype, like=grad._data)),
                   wrap(xp.ones(src._data.shape, dtype=grad._data.dtype, like=grad._data)))
        n = wrap(xp.where(n._data == 0, 1, n._data))
        gs = grad / n
        gsrc = take(gs)
    else:  # amax / amin: the gradient is shared evenly by every element equal to the result
        value = take(result)
        self_is = ops.eq(input, result).to(result.dtype)
        src_is = ops.eq(src, value).to(result.dtype)
        share = grad / add_at(self_is, src_is)
        gs = self_is * share
        gsrc = src_is * take(share)
    if not node.include_self:
        gs = zero_at(gs)
    return (gs if node.needs_input_grad(0) else None), (gsrc if node.needs_input_grad(1) else None)


# ---- index_add / index_fill ---------------------------------------------------------------------

class IndexAdd(Op):
    """index_add(input, dim, index, source, *, alpha=1): ``alpha * source``'s slices added at
    ``index`` along ``dim``."""
    op, node = 'index_add', 'IndexAddBackward0'
    out = EXACT  # (out= of the result's dtype only, as PyTorch's)
    parameter_types = {'dim': 'int', 'index': 'Tensor', 'source': 'Tensor', 'alpha': 'Number'}
    __slots__ = ('dim', 'index', 'alpha', 'source_shape', 'given_dim')
    saved_state = ('index',)
    saved = ('source', 'alpha=alpha', 'dim=given_dim:int64', 'index=index', 'source_dim=source_dim')
    source_dim = property(lambda self: len(self.source_shape))

    def inplace(self, dim, index, source, *, alpha=1):
        return inplace(self, lambda s: index_add(s, dim, index, source, alpha=alpha), (source,))

    def forward(input, dim, index, source, *, alpha=1):
        idx = index._data
        if idx.dtype.kind not in 'iu':
            raise RuntimeError('index_add_(): Expected dtype int32/int64 for index')
        if idx.ndim > 1:
            raise IndexError('index_add_(): Index is supposed to be a vector')
        shape = input._data.shape
        d = wrap_dim(dim, max(len(shape), 1))
        flat = idx.reshape(-1)
        sshape = source._data.shape
        n_src = sshape[d] if sshape else 1
        if flat.size != n_src:
            raise RuntimeError(f'index_add_(): Number of indices ({flat.size}) should be equal to source.size(dim): '
                               f'({n_src}), for dim: {d}')
        if len(sshape) != len(shape) or any(a != b for k, (a, b) in enumerate(zip(shape, sshape)) if k != d):
            if sshape or shape:
                raise RuntimeError('source tensor shape must match self tensor shape, excluding the specified '
                                   f'dimension. Got self.shape = {list(shape)} source.shape = {list(sshape)}')
        if source._data.dtype != input._data.dtype:
            raise RuntimeError(f'index_add_(): self ({SCALAR_NAMES[input._data.dtype.name]}) and source '
                               f'({SCALAR_NAMES[source._data.dtype.name]}) must have the same scalar type')
        _check_index_bounds(flat, shape[d] if shape else 1, d)
        data = input._data.copy()
        src = source._data * alpha if alpha != 1 else source._data
        if shape:
            xp.add.at(xp.moveaxis(data, d, 0), flat, xp.moveaxis(src, d, 0))
        else:
            data += src.reshape(())
        out, node = record(data, IndexAdd, (input, source))
        if node is not None:
            node.dim, node.alpha, node.source_shape, node.index, node.given_dim = d, alpha, sshape, None, dim
            # Only source's gradient reads the index and source: PyTorch saves them only then (and
            # so catches an in-place change of source).
            if node.needs_input_grad(1):
                node.index = index
                node.save(source)
        return out

    def jvp(self, tangents, output):  # linear in both
        ti, tsrc = tangents
        if tsrc is None:
            return ti
        if ti is None:
            ti = _zeros_of(output)
        return each_sample(lambda t, u: index_add(t, self.dim, self.index, u, alpha=self.alpha), ti, tsrc)

    def apply(self, grad):
        gsrc = None
        if self.needs_input_grad(1):
            gsrc = ops.index_select(grad, self.dim, self.index) if grad._data.ndim else grad
            if self.alpha != 1:
                gsrc = gsrc * self.alpha
            if gsrc._data.shape != self.source_shape:
                gsrc = ops.reshape(gsrc, self.source_shape)
        return (grad if self.needs_input_grad(0) else None), gsrc


class IndexReduce(Op):
    """index_reduce(input, dim, index, source, reduce, *, include_self=True): ``source``'s
    slices reduced (prod, mean, amax, amin) into ``input``'s at ``index`` along ``dim``."""
    op, node = 'index_reduce', 'IndexReduceBackward0'
    out = EXACT  # (out= of the result's dtype only, as PyTorch's)
    __slots__ = ('dim', 'index', 'reduce', 'include_self')
    saved_state = ('index',)

    def inplace(self, dim, index, source, reduce, *, include_self=True):
        return inplace(self, lambda s: index_reduce(s, dim, index, source, reduce, include_self=include_self),
                       (source,))

    def forward(input, dim, index, source, reduce, *, include_self=True):
        warn_once('index_reduce() is in beta and the API may change at any time.')
        if reduce not in ('prod', 'mean', 'amax', 'amin'):
            raise RuntimeError(f'index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got '
                               f'{reduce}.')
        idx = index._data
        if idx.ndim > 1:
            raise IndexError(f'index_reduce_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: '
                             f'{SCALAR_NAMES[idx.dtype.name]} and size: {list(idx.shape)}')
        if idx.dtype.kind not in 'iu':
            raise RuntimeError(f'index_reduce_(): Expected dtype int32/int64 for index but got: '
                               f'{SCALAR_NAMES[idx.dtype.name]}')
        shape, sshape = input._data.shape, source._data.shape
        d = wrap_dim(dim, max(len(shape), 1))
        if source._data.dtype != input._data.dtype:
            raise RuntimeError(f'index_reduce_(): self ({SCALAR_NAMES[input._data.dtype.name]}) and source '
                               f'({SCALAR_NAMES[source._data.dtype.name]}) must have the same scalar type')
        flat = idx.reshape(-1)
        n_src = sshape[d] if sshape else 1
        if flat.size != n_src:
            raise RuntimeError(f'index_reduce_(): Number of indices ({flat.size}) should be equal to '
                               f'source.size(dim): ({n_src}), for dim: {d}')
        if len(sshape) != len(shape) or any(a != b for k, (a, b) in enumerate(zip(shape, sshape)) if k != d):
            raise RuntimeError('source tensor shape must match self tensor shape, excluding the specified '
                               f'dimension. Got self.shape = {list(shape)} source.shape = {list(sshape)}')
        size = shape[d] if shape else 1
        if flat.size and (flat.min() < 0 or flat.max() >= size):  # (no negative indices, as PyTorch)
            raise IndexError('index out of range in self')
        data = input._data.copy()
        target = xp.moveaxis(data, d, 0) if shape else data.reshape(1)
        values = xp.moveaxis(source._data, d, 0) if sshape else source._data.reshape(1)
        if not include_self:
            target[flat] = _REDUCE_INIT[reduce]
        _ufunc_at(_REDUCE_UFUNC[reduce], target, flat, values)
        if reduce == 'mean':
            count = xp.bincount(flat, minlength=size) + (1 if include_self else 0)
            _divide_by_counts(target, count.reshape((size,) + (1,) * (target.ndim - 1)))
        out, node = record(data, IndexReduce, (input, source))
        if node is not None:
            node.dim, node.index, node.reduce, node.include_self = d, index, reduce, include_self
            node.save(input, source, saved_output(out))
        return out

    def apply(self, grad):
        d, index = self.dim, self.index
        return _reduce_backward(
            self, grad,
            again=lambda s, src: index_reduce(s, d, index, src, self.reduce, include_self=self.include_self),
            add_at=lambda t, src: index_add(t, d, index, src), take=lambda t: ops.index_select(t, d, index),
            zero_at=lambda t: index_fill(t, d, index, 0))


class IndexFillBackward1(Op):
    """index_fill of a 0-d tensor value."""
    node = 'IndexFillBackward1'
    __slots__ = ('dim', 'index')
    saved_state = ('index',)

    def apply(self, grad):
        gs = index_fill(grad, self.dim, self.index, 0) if self.needs_input_grad(0) else None
        gv = None
        if self.needs_input_grad(1):
            unique = wrap(xp.unique(self.index._data.reshape(-1) % max(grad._data.shape[self.dim], 1)))
            gv = ops.sum(ops.index_select(grad, self.dim, unique))
        return gs, gv


class IndexFill(Op):
    """index_fill(input, dim, index, value): ``value`` (a number: IndexFillBackward0, or a 0-d
    tensor: IndexFillBackward1) written at ``index`` along ``dim``."""
    op, node = 'index_fill', 'IndexFillBackward0'
    __slots__ = ('dim', 'index')
    saved_state = ('index',)

    def inplace(self, dim, index, value):
        return inplace(self, lambda s: index_fill(s, dim, index, value), _others(value))

    def forward(input, dim, index, value):
        idx = index._data
        if idx.dtype.kind not in 'iu':
            raise RuntimeError('index_fill_(): Expected dtype int64 for index.')
        if isinstance(value, Tensor) and value._data.ndim != 0:
            raise RuntimeError(f'index_fill_ only supports a 0-dimensional value tensor, but got tensor with '
                               f'{value._data.ndim} dimension(s).')
        shape = input._data.shape
        d = wrap_dim(dim, max(len(shape), 1))
        size = shape[d] if shape else 1
        flat = idx.reshape(-1)
        if flat.size and (flat.min() < -size or flat.max() >= size):
            bad = flat[(flat < -size) | (flat >= size)][0]
            raise IndexError(f'index {int(bad)} is out of bounds for dimension {d} with size {size}')
        data = input._data.copy()
        target = xp.moveaxis(data, d, 0) if shape else data.reshape(1)
        target[flat] = _scalar_array(value, data)
        if isinstance(value, Tensor):
            out, node = record(data, IndexFillBackward1, (input, value))
        else:
            out, node = record(data, IndexFill, (input,))
        if node is not None:
            node.dim, node.index = d, index
        return out

    def apply(self, grad):
        return index_fill(grad, self.dim, self.index, 0),


# ---- masked_fill ----------------------------------------------------------------------------------

class MaskedFillBackward1(Op):
    """masked_fill of a 0-d tensor value."""
    node = 'MaskedFillBackward1'
    __slots__ = ('mask', 'self_shape')
    saved_state = ('mask',)
    saved = ('mask=mask',)

    def jvp(self, tangents, output):  # the input's tangent with the value's where it was written
        ts, tv = tangents
        if ts is None:
            ts = _zeros_of(output)
        if tv is None:  # (a value without a tangent writes zeros there)
            return masked_fill(ts, self.mask, 0)
        return ops.where(self.mask, tv, ts)

    def apply(self, grad):
        gs = sum_to(masked_fill(grad, self.mask, 0), self.self_shape) if self.needs_input_grad(0) else None
        gv = ops.sum(masked_fill(grad, wrap(~self.mask._data), 0)) if self.needs_input_grad(1) else None
        return gs, gv


class MaskedFill(Op):
    """masked_fill(input, mask, value): ``value`` (a number: MaskedFillBackward0, or a 0-d tensor:
    MaskedFillBackward1) where the (broadcast) mask is True."""
    op, node = 'masked_fill', 'MaskedFillBackward0'
    refusals = Overloads('masked_fill', '(Tensor input, Tensor mask, Tensor value)', '(Tensor input, Tensor mask, Number value)')
    __slots__ = ('mask', 'self_shape')
    saved_state = ('mask',)
    saved = ('mask=mask',)

    def inplace(self, mask, value):
        data = self._data
        if data.size and any(n > 1 and st == 0 for n, st in zip(data.shape, data.strides)):  # (PyTorch warns, and
            # writes; an empty tensor's strides, which NumPy may make 0, expand nothing)
            warnings.warn('Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before '
                          'performing this operation. This also applies to advanced indexing e.g. tensor[mask] = '
                          'scalar', UserWarning, stacklevel=3)
        return inplace(self, lambda s: masked_fill(s, mask, value), _others(value), overlapping=True)

    def forward(input, mask, value):
        m = mask._data
        if m.dtype.kind != 'b':
            raise RuntimeError(f'masked_fill_ only supports boolean masks, but got mask with dtype '
                               f'{scalar_type_name(m.dtype)}')
        if isinstance(value, Tensor) and value._data.ndim != 0:
            raise RuntimeError(f'masked_fill_ only supports a 0-dimensional value tensor, but got tensor with '
                               f'{value._data.ndim} dimension(s).')
        try:
            shape = xp.broadcast_shapes(input._data.shape, m.shape)
        except ValueError:
            raise RuntimeError(_broadcast_message(m.shape, input._data.shape)) from None
        data = xp.where(m, _scalar_array(value, input._data), input._data)
        if data.shape != shape:
            data = xp.broadcast_to(data, shape).copy()
        data = c_order(data)  # (PyTorch's masked_fill fills a contiguous clone of the input)
        if isinstance(value, Tensor):
            out, node = record(data, MaskedFillBackward1, (input, value))
        else:
            out, node = record(data, MaskedFill, (input,))
        if node is not None:
            node.mask, node.self_shape = mask, input._data.shape
        return out

    def jvp(self, tangents):  # the tangent, zero where the number was written
        return masked_fill(tangents[0], self.mask, 0)

    def apply(self, grad):
        return sum_to(masked_fill(grad, self.mask, 0), self.self_shape),


# ---- index_put ------------------------------------------------------------------------------------

class IndexPutBackward0_accumulate(Node):  # noqa: N801
    __slots__ = ('index', 'values_shape')
    saved_state = ('index',)

    def apply(self, grad):
        gv = sum_to(ops.index_read(grad, self.index), self.values_shape) if self.needs_input_grad(1) else None
        return (grad if self.needs_input_grad(0) else None), gv

    def jvp(self, tangents, output):  # linear in both: the values' tangent added at the index
        ti, tv = tangents
        if tv is None:
            return ti
        shape = output._data.shape
        target = xp.zeros(shape, dtype=bool, like=output._data)[self.index].shape
        added = each_sample(lambda v: ops.index_put_embed(ops.expand(v, target), shape, self.index), tv)
        return added if ti is None else ti + added

    def name(self):
        return 'IndexPutBackward0'


class IndexPut(Op):
    """index_put(input, indices, values, accumulate=False): ``values`` written (or added) at the
    advanced index ``indices`` (IndexPutBackward0, either way)."""
    op = 'index_put'
    inplace_function = True  # (torch.index_put_ too)

    def inplace(self, indices, values, accumulate=False):
        return inplace(self, lambda s: index_put(s, indices, values, accumulate), _others(values))

    def forward(input, indices, values, accumulate=False):
        if not isinstance(indices, (tuple, list)):
            raise TypeError(f"index_put(): argument 'indices' (position 1) must be tuple of Tensors, not "
                            f'{type(indices).__name__}')
        np_index = on_device_of(_to_numpy_index(_normalize(tuple(indices)), input._data.shape), input._data)
        if not isinstance(values, Tensor):
            values = wrap(xp.asarray(values, dtype=input._data.dtype, like=input._data))
        if values._data.dtype != input._data.dtype:
            raise RuntimeError(f'Index put requires the source and destination dtypes match, got '
                               f'{SCALAR_NAMES[input._data.dtype.name]} for the destination and '
                               f'{SCALAR_NAMES[values._data.dtype.name]} for the source.')
        target_shape = input._data[np_index].shape
        try:
            xp.broadcast_shapes(values._data.shape, target_shape)
        except ValueError:
            raise RuntimeError(f'shape mismatch: value tensor of shape {list(values._data.shape)} cannot be '
                               f'broadcast to indexing result of shape {list(target_shape)}') from None
        if not accumulate:
            return ops.index_write(input, np_index, values)
        data = input._data.copy()
        xp.add.at(data, np_index, xp.broadcast_to(values._data, target_shape))
        out, node = record(data, IndexPutBackward0_accumulate, (input, values))
        if node is not None:
            node.index, node.values_shape = np_index, values._data.shape
        return out


# ---- index_copy / masked_scatter ------------------------------------------------------------------

class IndexCopy(Op):
    """index_copy(input, dim, index, source): ``source``'s slices written at ``index`` along
    ``dim``."""
    op, node = 'index_copy', 'IndexCopyBackward0'
    out = EXACT  # (out= of the result's dtype only, as PyTorch's)
    parameter_types = {'dim': 'int', 'index': 'Tensor', 'source': 'Tensor'}
    __slots__ = ('dim', 'index', 'source_shape')
    saved_state = ('index',)

    def inplace(self, dim, index, source):
        return inplace(self, lambda s: index_copy(s, dim, index, source), (source,))

    def forward(input, dim, index, source):
        if autocast.state.on:
            input, source = autocast.promote((input, source))
        idx = index._data
        if idx.dtype.kind not in 'iu':
            raise RuntimeError('index_copy_(): Expected a long tensor for index, but got '
                               + SCALAR_NAMES[idx.dtype.name])
        shape = input._data.shape
        d = wrap_dim(dim, max(len(shape), 1))
        flat = idx.reshape(-1)
        sshape = source._data.shape
        if flat.size != (sshape[d] if sshape else 1):
            raise IndexError(f'index_copy_(): Number of indices ({flat.size}) should be equal to source.size(dim) '
                               f'({sshape[d] if sshape else 1})')
        if source._data.dtype != input._data.dtype:
            raise RuntimeError(f'index_copy_(): self and source expected to have the same dtype, but got (self) '
                               f'{SCALAR_NAMES[input._data.dtype.name]} and (source) '
                               f'{SCALAR_NAMES[source._data.dtype.name]}')
        size = shape[d] if shape else 1
        bad = flat[(flat < 0) | (flat >= size)]
        if bad.size:
            raise IndexError(f'index_copy_(): index {int(bad[0])} is out of bounds for dimension {d} with size {size}')
        data = input._data.copy()
        if shape:
            xp.moveaxis(data, d, 0)[flat] = xp.moveaxis(source._data, d, 0)
        else:
            data[...] = source._data.reshape(())
        out, node = record(data, IndexCopy, (input, source))
        if node is not None:
            node.dim, node.index, node.source_shape = d, index, sshape
            if node.needs_input_grad(1):
                node.save(source)  # as in index_add
        return out

    def apply(self, grad):
        gs = index_fill(grad, self.dim, self.index, 0) if self.needs_input_grad(0) else None
        gsrc = None
        if self.needs_input_grad(1):
            gsrc = ops.index_select(grad, self.dim, self.index) if grad._data.ndim else grad
            if gsrc._data.shape != self.source_shape:
                gsrc = ops.reshape(gsrc, self.source_shape)
        return gs, gsrc


class MaskedScatter(Op):
    """masked_scatter(input, mask, source): ``source``'s first elements written, in order, where
    the (broadcast) mask is True."""
    op, node = 'masked_scatter', 'MaskedScatterBackward0'
    tensors = ('input', 'mask', 'source')
    __slots__ = ('mask', 'self_shape', 'source_shape')
    saved_state = ('mask',)

    def inplace(self, mask, source):
        return inplace(self, lambda s: masked_scatter(s, mask, source), (source,))

    def forward(input, mask, source):
        m = mask._data
        if m.dtype.kind != 'b':
            raise RuntimeError(f'masked_scatter_ only supports boolean masks, but got mask with dtype '
                               f'{SCALAR_NAMES[m.dtype.name]}')
        if source._data.dtype != input._data.dtype:
            raise RuntimeError(f'masked_scatter: expected self and source to have same dtypes but got'
                               f'{SCALAR_NAMES[input._data.dtype.name]} and {SCALAR_NAMES[source._data.dtype.name]}')
        try:
            shape = xp.broadcast_shapes(input._data.shape, m.shape)
        except ValueError:
            raise RuntimeError(_broadcast_message(m.shape, input._data.shape)) from None
        mb = xp.broadcast_to(m, shape)
        k = int(mb.sum())
        if k > source._data.size:
            raise RuntimeError('Number of elements of source < number of ones in mask')
        data = xp.broadcast_to(input._data, shape).copy()
        data[mb] = source._data.reshape(-1)[:k]
        out, node = record(data, MaskedScatter, (input, source))
        if node is not None:
            node.mask, node.self_shape, node.source_shape = mask, input._data.shape, source._data.shape
        return out

    def apply(self, grad):
        gs = sum_to(masked_fill(grad, self.mask, 0), self.self_shape) if self.needs_input_grad(0) else None
        gsrc = None
        if self.needs_input_grad(1):
            n = 1
            for s_ in self.source_shape:
                n *= s_
            taken = ops.masked_select(grad, self.mask)  # the first k source elements were used
            gsrc = ops.reshape(ops.pad(taken, (0, n - taken._data.shape[0])), self.source_shape)
        return gs, gsrc


def _others(*xs):
    return tuple(x for x in xs if isinstance(x, Tensor))
