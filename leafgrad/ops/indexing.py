"""Indexing: ``t[idx]`` for reading and ``t[idx] = v`` for writing.

Basic indexing (ints, slices, None, ...) is a chain of views (select, slice, unsqueeze), named
as PyTorch names them. Any tensor, list or boolean index makes it advanced indexing: a copy,
recorded as one IndexBackward0 whose derivative scatters the gradient back (summing repeats).

Each op is declared once (``_op.Op``), ``t[idx]`` and ``t[idx] = v`` too (the declarations of
the operators ``__getitem__`` and ``__setitem__``).
"""
from .. import backend
from ..autograd.graph import each_sample, on_samples, self_recording
from ._inplace import check_no_overlap, inplace, refuse_partial_overlap
from ._op import _GRAD_ERROR, Op, check_out_type, fill_out, write_out
from ._index import (_broadcast_message, _check_index_bounds, _is_basic, _normalize, _to_numpy_index, index_array,
                     on_device_of, scatter_coords)
from ._util import SCALAR_NAMES, make_view, ops, record, state, sum_to, wrap, wrap_dim, xp
from ..tensor import _C_TYPES, Tensor, fitted_scalar, legacy_type_name


class AliasBackward0(Op):
    """The node of ``alias``: a view of the whole tensor (``t[...]``, ``t.T`` of a vector)."""
    node = 'AliasBackward0'
    __slots__ = ()

    def apply(self, grad):
        return grad,


def alias(input):
    return make_view(input, input._data.view(), AliasBackward0, _alias_of)[0]


def _alias_of(t):
    """The view ``alias`` makes, of another tensor (a view's tangent is the same view of its
    parent's): by indexing, so that a tangent batched by vmap stays batched."""
    return t[...]


def _index_ndim(c):
    """How many of the indexed tensor's dims an index component consumes."""
    if c is None or c is Ellipsis:
        return 0
    if hasattr(c, 'dtype') and c.dtype.kind == 'b':
        return c.ndim
    return 1


def _full_slice(c, size):
    """PyTorch's test, on the slice as written: start 0, stop at or past the end, step 1
    (so ``-4:`` on a dim of 4 is still recorded as a slice)."""
    for bound in (c.start, c.stop, c.step):
        if bound is not None and not hasattr(type(bound), '__index__'):
            raise TypeError('slice indices must be integers or None or have an __index__ method')
    start = 0 if c.start is None else c.start
    return start == 0 and (c.stop is None or c.stop >= size) and c.step in (None, 1)


def _apply_basic(input, index):
    """PyTorch's first stage of indexing: ints, slices, None and ... applied as views (select,
    slice, unsqueeze), in order. Returns the view and the advanced components left over, each
    with the view's dim where it applies (ints never count as advanced, unlike NumPy).

    Slices spanning a whole dim are skipped, as PyTorch skips them (``t[a:b]`` alone is not
    read here: getitem records it as a slice)."""
    nd = input._data.ndim
    consumed = 0
    for c in index:
        if isinstance(c, (list, tuple)):
            c = _list_index(c)
        consumed += _index_ndim(c)
    if consumed > nd:
        raise IndexError(f'too many indices for tensor of dimension {nd}')
    if sum(1 for c in index if c is Ellipsis) > 1:
        raise IndexError('an index can only have a single ellipsis')
    out = input
    dim = 0
    advanced = []
    for position, c in enumerate(index):
        if c is Ellipsis:
            dim += nd - consumed
        elif c is None:
            out = ops.unsqueeze(out, dim)
            dim += 1
        elif isinstance(c, int) and not isinstance(c, bool):
            try:
                out = ops.select(out, dim, c)
            except IndexError:  # PyTorch names the index's position in the tuple
                raise IndexError(f'index {c} is out of bounds for dimension {position} with size '
                                 f'{out._data.shape[dim]}') from None
        elif isinstance(c, slice):
            if not _full_slice(c, out._data.shape[dim]):
                out = ops.slice_dim(out, dim, c.start, c.stop, c.step)
            dim += 1
        else:
            if isinstance(c, (list, tuple)):
                c = _list_index(c)
            advanced.append((dim, c))
            dim += _index_ndim(c) if hasattr(c, 'dtype') else 1
    return out, advanced


def _zero_strides(input, index):
    """Whether PyTorch's view of ``input`` at the basic ``index`` (ints, slices, None, ...) has
    strides 0 only: its unsqueeze gives the new dim the size times stride of the dim it is put
    before, 1 at the end; a slice multiplies the stride by its step."""
    sizes, strides = list(input._data.shape), list(input.stride())
    skipped = len(sizes) - sum(_index_ndim(c) for c in index)
    dim = 0
    for c in index:
        if c is Ellipsis:
            dim += skipped
        elif c is None:
            strides.insert(dim, sizes[dim] * strides[dim] if dim < len(sizes) else 1)
            sizes.insert(dim, 1)
            dim += 1
        elif isinstance(c, slice):
            strides[dim] *= c.step or 1
            dim += 1
        else:  # (an int: only basic components reach here)
            del sizes[dim], strides[dim]
    return not any(strides)


def _one_mask(advanced):
    """Whether the advanced index is one boolean (or uint8) mask: PyTorch's index_put_ then fills
    through it a value of one element (masked_fill), without index_put_'s checks."""
    if len(advanced) != 1:
        return False
    c = advanced[0][1]
    data = c._data if isinstance(c, Tensor) else c
    dtype = getattr(data, 'dtype', None)
    return dtype is not None and (dtype.kind == 'b' or dtype == xp.uint8)


def _data_of(c):
    return c._data if isinstance(c, Tensor) else c


def _list_index(c):
    """A list or tuple in an index as the array PyTorch makes of it: an empty one is an empty long
    index (NumPy would make it float)."""
    return xp.asarray(c) if len(c) else xp.zeros(0, xp.int64)


def _advanced_index(view, advanced):
    """The NumPy index (checked, with PyTorch's errors) applying ``advanced`` to ``view``."""
    parts = []
    dim = 0
    for d, c in advanced:
        parts.extend([slice(None)] * (d - dim))
        parts.append(c)
        dim = d + (_index_ndim(c) if hasattr(c, 'dtype') else 1)
    return on_device_of(_to_numpy_index(tuple(parts), view._data.shape), view._data)


def _basic_getitem(input, index):
    out, _ = _apply_basic(input, index)
    return alias(input) if out is input else out


_INDEX_0DIM = ('invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to '
               'convert a 0-dim tensor to a number')


class Index(Op):
    """``t[index]`` (``Tensor.__getitem__``): basic indexing a chain of views, advanced
    indexing a copy recorded as IndexBackward0 (``getitem``: the module's name for it)."""
    op, node, function, method = 'getitem', 'IndexBackward0', False, False
    operators = ('__getitem__',)
    saved_state = ('index',)
    saved = ('self_sym_sizes=self_shape',)

    def forward(input, index):
        if type(index) is int:  # t[i], the commonest index: one select view
            if not input._data.ndim:
                raise IndexError(_INDEX_0DIM if index == 0 else
                                 f'index {index} is out of bounds for dimension 0 with size 0')
            try:
                return ops.select(input, 0, index)
            except IndexError:  # (select words it its own way)
                raise IndexError(f'index {index} is out of bounds for dimension 0 with size '
                                 f'{input._data.shape[0]}') from None
        if isinstance(index, slice):  # t[a:b]: one slice view, recorded even when it spans the dim
            if not input._data.ndim:
                raise IndexError('slice() cannot be applied to a 0-dim tensor.')
            return ops.slice_dim(input, 0, index.start, index.stop, index.step)
        index = _normalize(index)
        # (inside a tuple, a slice spanning its whole dim is skipped, as PyTorch skips it)
        view, advanced = _apply_basic(input, index)
        if not advanced:
            return alias(input) if view is input else view
        np_index = _advanced_index(view, advanced)
        out, node = record(view._data[np_index], Index, (view,))
        if node is not None:
            node.self_shape, node.index = view._data.shape, np_index
        return out

    def jvp(self, tangents):  # linear: the tangent read at the index
        return each_sample(lambda t: index_read(t, self.index), tangents[0])

    def apply(self, grad):
        return index_put_embed(grad, self.self_shape, self.index),


getitem = Index.forward


class IndexPutImplBackward0(Op):
    """The derivative of an advanced index: the gradient added into zeros at the index
    (PyTorch's ``zeros.index_put_(indices, grad, accumulate=True)``: an edge for the zeros, none
    needed, and one for the values). Its own derivative reads the values back."""
    node = 'IndexPutImplBackward0'

    def apply(self, grad):
        return None, index_read(grad, self.index)

    def jvp(self, tangents):  # linear in the values: their tangent embedded the same way
        return each_sample(lambda t: index_put_embed(t, self.shape, self.index, self.of), tangents[-1])


class PutBackward0(IndexPutImplBackward0):
    """take's derivative (PyTorch's ``zeros.put_(index, grad, accumulate=True)``)."""
    node = 'PutBackward0'


class MaskedScatterBackward0(IndexPutImplBackward0):
    """masked_select's derivative (PyTorch's ``zeros.masked_scatter_(mask, grad)``)."""
    node = 'MaskedScatterBackward0'


class SelectBackwardBackward0(Op):
    """select's derivative (PyTorch's select_backward: one node, whose only edge is the
    gradient's)."""
    node = 'SelectBackwardBackward0'

    def apply(self, grad):
        return index_read(grad, self.index),

    jvp = IndexPutImplBackward0.jvp


class SliceBackwardBackward0(SelectBackwardBackward0):
    """slice's derivative (narrow's, split's, basic indexing's ``t[a:b]``)."""
    node = 'SliceBackwardBackward0'


# the node that records the derivative of each op whose gradient is written into zeros: PyTorch's
_EMBED_NODES = {'index': IndexPutImplBackward0, 'take': PutBackward0, 'masked_select': MaskedScatterBackward0,
                'select': SelectBackwardBackward0, 'slice': SliceBackwardBackward0}


def index_read(t, index):
    out, node = record(t._data[index], Index, (t,))
    if node is not None:
        node.self_shape, node.index = t._data.shape, index
    return out


def index_put_embed(values, shape, index, of='index'):
    """Zeros of ``shape`` with ``values`` added at ``index`` (repeated indices sum): the
    derivative of the op ``of`` (the node recorded is PyTorch's for that op, ``_EMBED_NODES``)."""
    data = xp.zeros(shape, dtype=values._data.dtype, like=values._data)  # (like=: on the values' device)
    if all(_is_basic(c) for c in index):
        data[index] = values._data
    else:
        xp.add.at(data, on_device_of(index, data), values._data)
    node_cls = _EMBED_NODES[of]
    inputs = (values,) if issubclass(node_cls, SelectBackwardBackward0) else (None, values)
    out, node = record(data, node_cls, inputs)
    if node is not None:
        node.index, node.shape, node.of = index, shape, of
    return out


# derivatives of the indexing ops, recording their own nodes: forward over reverse (a hessian by
# jacfwd of jacrev) carries tangents through them
self_recording.extend((index_read, index_put_embed))


# ---- writing: t[idx] = v ---------------------------------------------------------------

class IndexPutBackward0(Op):
    """The node of ``t[advanced index] = v`` (an in-place index_put on the basic part's view)."""
    node = 'IndexPutBackward0'
    saved_state = ('index',)

    def apply(self, grad):
        gs = gv = None
        if self.next_functions[0][0] is not None:
            keep = xp.ones(self.self_shape, dtype=bool, like=grad._data)
            keep[self.index] = False
            gs = grad * wrap(keep)
        if self.next_functions[1][0] is not None:
            gv = sum_to(index_read(grad, self.index), self.values_shape)
        return gs, gv

    def jvp(self, tangents, output):  # the input's tangent with the values' written at the index
        ti, tv = tangents
        if ti is None:
            ti = wrap(xp.zeros(output._data.shape, dtype=output._data.dtype, like=output._data))
        if tv is None:
            return each_sample(lambda t: index_write(t, self.index, 0), ti)
        return each_sample(lambda t, v: index_write(t, self.index, v), ti, tv)


def index_write(input, index, values):
    """Out of place: ``input`` with ``values`` written at an advanced ``index``."""
    data = input._data.copy()
    v = values._data if isinstance(values, Tensor) else values
    data[index] = v
    out, node = record(data, IndexPutBackward0, (input, values))
    if node is not None:
        # (a mask is kept as PyTorch keeps it, as the positions it selects now: writing to the
        # mask afterwards does not move the gradient)
        node.self_shape = input._data.shape
        node.index = tuple(c.copy() if getattr(c, 'dtype', None) == bool else c for c in index) \
            if isinstance(index, tuple) else index
        node.values_shape = values._data.shape if isinstance(values, Tensor) else ()
    return out


class SetItem(Op):
    """``input[index] = value`` (``Tensor.__setitem__``) as PyTorch does it: the basic part of
    the index gives a view; a Python number fills it (FillBackward3), a tensor is copied into
    it (CopyBackwards), and the advanced part is an in-place index_put on it
    (IndexPutBackward0). When the view is a proper part of ``input``, ``input``'s history
    becomes a CopySlices. (``setitem``: the module's name for it.)"""
    op, function, method, operators = 'setitem', False, False, ('__setitem__',)

    def forward(input, index, value):
        _setitem(input, index, value)


def _setitem(input, index, value):
    index = _normalize(index)
    if isinstance(value, complex) and input._data.dtype.kind != 'c':
        if value.imag != 0 and input._data.dtype.kind != 'b':  # (no imaginary part: its real part, as c10's;
            d = input._data.dtype                                 # 16-bit floats are checked as double)
            raise RuntimeError(f'value cannot be converted to type '
                               f'{"double" if d.kind == "V" or d.itemsize == 2 else _C_TYPES[d.name]} without overflow')
        value = bool(value) if input._data.dtype.kind == 'b' else value.real
    if not isinstance(value, (Tensor, int, float, complex, xp.generic)):
        kind = type(value)
        name = kind.__qualname__ if kind.__module__ == 'builtins' else f'{kind.__module__}.{kind.__qualname__}'
        raise TypeError(f"can't assign a {name} to a {legacy_type_name(input._data)}")
    view, advanced = _apply_basic(input, index)
    if not isinstance(value, Tensor):
        if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:  # (PyTorch reads the number as a long long)
            raise ValueError('Overflow when unpacking long long')
        value = wrap(xp.asarray(fitted_scalar(value, input._data.dtype), like=input._data))
        if not advanced:
            ops.fill_(view, value)
            return
    if not advanced:
        if value._data.ndim == 0 and view._data.ndim:  # a 0-d value fills the view, as PyTorch's copy_to
            ops.fill_(view, value)
            return
        if value._data.shape != view._data.shape:
            # PyTorch views the value without its leading 1s, then expands it to the view (its
            # error if it can't)
            vshape = value._data.shape
            ones = next((i for i, s in enumerate(vshape) if s != 1), len(vshape))
            ops.expand(wrap(value._data.reshape(vshape[ones:])), view._data.shape)
            if ones == len(vshape) and view._data.ndim and view._data.size == 1 and \
                    xp.may_share_memory(view._data, value._data) and not _zero_strides(input, index):
                # PyTorch expands the 0-d view of a value of ones with strides 0, which the
                # written view's size-1 dims do not have (theirs come from its base): its one
                # element shared in another layout (v[None] = v, v[:, -1] = v of one element:
                # seeds 8000233, 5043888; a 0-d view is written from the 0-d value as it is).
                # A view of an expanded tensor whose strides are all 0 has the value's layout
                # (the gradient of a sum over one element, v[None] = v: seed 22007581)
                refuse_partial_overlap(view, value)
            if ones:
                value = ops.view(value, vshape[ones:])
            # and copies from that expanded view: x[None] = x shares all of x's memory with the
            # same strides, no partial overlap (seed 5018909)
            value = ops.expand(value, view._data.shape)
        ops.copy_(view, value)
        return
    if value._data.size == 1 and _one_mask(advanced) and getattr(_data_of(advanced[0][1]), 'dtype', None) == xp.uint8:
        # (PyTorch fills through one mask with masked_fill_, which takes no byte mask)
        raise RuntimeError('masked_fill_ only supports boolean masks, but got mask with dtype unsigned char')
    np_index = _advanced_index(view, advanced)
    ones = 0  # (PyTorch views the value without its leading dims of size 1 first: slicePrefix1sSize)
    while ones < value._data.ndim and value._data.shape[ones] == 1:
        ones += 1
    if ones:
        value = ops.view(value, value._data.shape[ones:])
    # (one mask and a value of one element: PyTorch's index_put_ runs masked_fill_ with the value
    # read first, without index_put_'s checks nor TensorIterator's: x[x > 5] = x[0, 0] is taken)
    mask_fill = value._data.size == 1 and _one_mask(advanced)
    if not mask_fill:
        check_no_overlap(view, value)
    target_shape = view._data[np_index].shape
    try:
        xp.broadcast_shapes(value._data.shape, target_shape)
    except ValueError:
        raise RuntimeError(f'shape mismatch: value tensor of shape {list(value._data.shape)} cannot be '
                           f'broadcast to indexing result of shape {list(target_shape)}') from None
    if value._data.dtype != input._data.dtype:
        value = value.to(backend.from_np(input._data.dtype))
    inplace(view, lambda s: index_write(s, np_index, value), (value,), overlap=not mask_fill)


setitem = SetItem.forward


class Nonzero(Op):
    """nonzero(input, *, as_tuple=False): the indices of the non-zero elements, one row each
    (or one tensor per dim)."""
    op = 'nonzero'

    def forward(input, *, as_tuple=False):
        data = input._data
        if data.ndim == 0:  # (NumPy refuses a 0-d array's nonzero: one index of no dims, or none)
            n = int(bool(data))
            if as_tuple:
                return wrap(xp.arange(n, dtype=xp.int64, like=data)),
            return wrap(xp.zeros((n, 0), xp.int64, like=data))
        idx = xp.nonzero(data)
        if as_tuple:
            return tuple(wrap(i.astype(xp.int64)) for i in idx)
        return wrap(xp.stack(idx).astype(xp.int64).T)  # (PyTorch's layout: the indices of each dim in a row, transposed)


class NonzeroStatic(Op):
    """nonzero_static(input, *, size, fill_value=-1, out=None): ``nonzero``'s rows, exactly
    ``size`` of them: the first ones, or all and rows of ``fill_value`` after them."""
    op = 'nonzero_static'

    def forward(input, *, size, fill_value=-1, out=None):
        if not isinstance(size, int) or size < 0:
            raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
        data = input._data
        found = xp.stack(xp.nonzero(data)).T.astype(xp.int64) if data.ndim else xp.zeros((0, 0), xp.int64, like=data)
        result = xp.full((size, data.ndim), fill_value, dtype=xp.int64, like=data)
        n = min(size, found.shape[0])
        result[:n] = found[:n]
        if out is not None:
            return write_out('nonzero_static', out, wrap(result), None, False)
        return wrap(result)


# ---- index_select / gather / take / masked_select (reading) -------------------------------------

def _index_select_out(input, dim, index, out):
    """index_select(..., out=out): PyTorch's out kernel's checks in its order (autograd first,
    then the dim and the index, then ``out``: of input's dtype, no element written twice, sharing
    no memory with input or index), then the values written into ``out``, resized."""
    check_out_type('index_select', out)
    if state.grad_enabled and (out._requires_grad or isinstance(input, Tensor) and input._requires_grad):
        raise RuntimeError(_GRAD_ERROR.format('index_select'))
    if isinstance(input, Tensor) and isinstance(index, Tensor):
        wrap_dim(dim, input._data.ndim)
        idx = index._data
        if idx.ndim <= 1 and idx.dtype.kind in 'iu':
            if input._data.dtype != out._data.dtype:
                raise RuntimeError('index_select(): self and result must have the same scalar type')
            if not backend.writeable(out._data):
                raise RuntimeError('unsupported operation: more than one element of the written-to tensor refers '
                                   'to a single memory location. Please clone() the tensor before performing the '
                                   'operation.')
            check_no_overlap(out, input)
            check_no_overlap(out, index)
    return fill_out(out, ops.index_select(input, dim, index)._data)


class IndexSelect(Op):
    """index_select(input, dim, index): the slices at ``index`` along ``dim``."""
    op, node = 'index_select', 'IndexSelectBackward0'
    parameter_types = {'dim': 'int'}
    __slots__ = ('self_shape', 'dim', 'index', 'given_dim')
    saved_state = ('index',)
    saved = ('dim=given_dim:int64', 'index=index', 'self_sym_sizes=self_shape')

    def function(input, dim, index, *, out=None):
        if out is None:
            return ops.index_select(input, dim, index)
        return _index_select_out(input, dim, index, out)

    def forward(input, dim, index):
        idx = index._data  # (an index that is no tensor: the parser's TypeError, by the AttributeError)
        if idx.dtype.kind not in 'iu':
            raise RuntimeError('index_select(): Expected dtype int32 or int64 for index')
        if idx.ndim > 1:
            raise IndexError('index_select(): Index is supposed to be a vector')
        shape = input._data.shape
        d = wrap_dim(dim, len(shape))
        size = shape[d] if shape else 1
        flat = idx.reshape(-1)
        if flat.size and (flat.min() < 0 or flat.max() >= size):
            empty = len(shape) > 1 and input._data.size == 0
            if empty and size == 0:
                raise RuntimeError('index_select(): self indexing axis dim should be positive')
            if (d == 0 and not empty) or len(shape) < 2:  # PyTorch's kernels word it differently
                raise IndexError('index out of range in self')
            bad = flat[(flat < 0) | (flat >= size)][0]
            raise RuntimeError(f'INDICES element is out of DATA bounds, id={int(bad)} axis_dim={size}')
        data = xp.take(input._data, flat, axis=d) if shape else input._data.reshape(-1)[flat].reshape(())
        out, node = record(data, IndexSelect, (input,))
        if node is not None:
            node.self_shape, node.dim, node.given_dim = shape, d, dim
            node.index = index
        return out

    def jvp(self, tangents, output):  # linear: the tangent's slices at the index (dim from the end: batches)
        dim = self.dim - output.dim() if output.dim() else self.dim
        return on_samples(lambda t: index_select(t, dim, self.index), tangents[0])

    def apply(self, grad):
        zeros = wrap(xp.zeros(self.self_shape, dtype=grad._data.dtype, like=grad._data))
        return ops.index_add(zeros, self.dim, self.index, grad),


def _gather_check(shape, idx, d, fname='gather'):
    if idx.ndim != len(shape) and not (idx.ndim <= 1 and len(shape) <= 1):
        raise RuntimeError('Index tensor must have the same number of dimensions as input tensor')
    for k in range(idx.ndim):
        if k != d and idx.shape[k] > (shape[k] if shape else 1):
            raise RuntimeError(f'Size does not match at dimension {k} expected index {list(idx.shape)} to be no '
                               f'larger than self {list(shape)} apart from dimension {d}')
    _check_index_bounds(idx, shape[d] if shape else 1, d)


class Gather(Op):
    """gather(input, dim, index, *, sparse_grad=False, out=None): ``out[i][j] =
    input[i][index[i][j]]`` (for dim 1), out= of the input's dtype."""
    op, node = 'gather', 'GatherBackward0'
    # (each refused in PyTorch's parser's order, with its position)
    parameter_types = {'input': 'Tensor', 'dim': 'int', 'index': 'Tensor', 'sparse_grad': 'bool'}
    __slots__ = ('self_shape', 'dim', 'index', 'given_dim', 'sparse_grad')
    saved_state = ('index',)
    saved = ('self', 'dim=given_dim:int64', 'index=index', 'sparse_grad=sparse_grad')

    def forward(input, dim, index, *, sparse_grad=False, out=None):
        if out is not None:
            return write_out('gather', out, gather(input, dim, index))
        shape = input._data.shape
        d = wrap_dim(dim, max(len(shape), 1))  # (before the index's dtype, as PyTorch)
        idx = index_array(index, 'gather')
        if idx.size == 0:  # PyTorch checks nothing more of an empty index: an empty result of its shape
            return _empty_gather(input, idx, d, index)
        _gather_check(shape, idx, d)
        src = input._data.reshape(idx.shape[:0] + (1,)) if not shape else input._data
        i = idx if idx.ndim else idx.reshape(1)
        data = src[scatter_coords(i, d)].reshape(idx.shape)
        result, node = record(data, Gather, (input,))
        if node is not None:
            node.self_shape, node.dim, node.index = shape, d, index
            node.given_dim, node.sparse_grad = dim, sparse_grad
            node.save(input)  # as PyTorch saves it (so that an in-place change of it is caught)
        return result

    def jvp(self, tangents):  # linear: the tangent gathered
        return each_sample(lambda t: gather(t, self.dim, self.index), tangents[0])

    def apply(self, grad):
        zeros = wrap(xp.zeros(self.self_shape, dtype=grad._data.dtype, like=grad._data))
        return ops.scatter_add(zeros, self.dim, self.index, grad),


def _empty_gather(input, idx, d, index):
    result, node = record(xp.zeros(idx.shape, dtype=input._data.dtype, like=input._data), Gather, (input,))
    if node is not None:
        node.self_shape, node.dim, node.index, node.given_dim, node.sparse_grad = input._data.shape, d, index, d, False
        node.save(input)
    return result


class Take(Op):
    """take(input, index): the elements at the flat indices ``index``, in index's shape."""
    op, node = 'take', 'TakeBackward0'
    tensors = ('input', 'index')
    __slots__ = ('self_shape', 'index')
    saved_state = ('index',)

    def forward(input, index):
        idx = index._data if isinstance(index, Tensor) else xp.asarray(index)
        if idx.dtype.kind not in 'iu':
            raise RuntimeError(f'take(): Expected a long tensor for index, but got {SCALAR_NAMES[idx.dtype.name]}')
        n = input._data.size
        if idx.size:
            bad = idx[(idx >= n) | (idx < -n)]
            if bad.size:
                raise IndexError(f'out of range: tried to access index {int(bad.reshape(-1)[0])} on a tensor of {n} '
                                 'elements.')
        idx = xp.where(idx < 0, idx + n, idx)
        result, node = record(input._data.reshape(-1)[idx], Take, (input,))
        if node is not None:
            node.self_shape, node.index = input._data.shape, idx
            node.save(input)  # as in gather
        return result

    def apply(self, grad):
        shape = self.self_shape
        if shape:  # the gradient put at the index's places in input's shape (PutBackward0)
            return index_put_embed(grad, shape, xp.unravel_index(self.index, shape), of='take'),
        return ops.reshape(index_put_embed(grad, (1,), (self.index,), of='take'), shape),  # (a 0-d input)

    def jvp(self, tangents):  # linear: the tangent read at the flat indices
        return each_sample(lambda t: index_read(ops.reshape(t, (-1,)), (self.index,)), tangents[0])


class MaskedSelect(Op):
    """masked_select(input, mask): the elements where the (broadcast) mask is True, as a
    vector."""
    op, node = 'masked_select', 'MaskedSelectBackward0'
    tensors = ('input', 'mask')
    __slots__ = ('self_shape', 'shape', 'coords')
    saved_state = ('coords',)

    def forward(input, mask):
        m = mask._data
        if m.dtype.kind != 'b':
            raise RuntimeError('masked_select: expected BoolTensor for mask')
        try:
            shape = xp.broadcast_shapes(input._data.shape, m.shape)
        except ValueError:
            raise RuntimeError(_broadcast_message(m.shape, input._data.shape)) from None
        coords = xp.nonzero(xp.broadcast_to(m, shape))
        result, node = record(xp.broadcast_to(input._data, shape)[coords], MaskedSelect, (input,))
        if node is not None:
            node.self_shape, node.shape, node.coords = input._data.shape, shape, coords
            node.save(input)  # as in gather
        return result

    def apply(self, grad):
        return sum_to(index_put_embed(grad, self.shape, self.coords, of='masked_select'), self.self_shape),

    def jvp(self, tangents):  # linear: the (broadcast) tangent read where the mask is True
        return each_sample(lambda t: index_read(ops.expand(t, self.shape), self.coords), tangents[0])


class TakeAlongDim(Op):
    """take_along_dim(input, indices, dim=None): a gather along ``dim`` of the operands broadcast
    elsewhere (of the flattened ones without a dim)."""
    op = 'take_along_dim'
    tensors = ('input', 'indices')
    parameter_types = {'dim': 'int?'}

    def forward(input, indices, dim=None):
        if dim is None:
            return gather(ops.reshape(input, (-1,)), 0, ops.reshape(indices, (-1,)))
        nd = input._data.ndim
        d = wrap_dim(dim, nd)
        if indices._data.ndim != nd:
            raise RuntimeError(f'leafgrad.take_along_dim(): input and indices should have the same number of '
                               f'dimensions, but got {nd} dimensions for input, and {indices._data.ndim} dimensions '
                               'for indices')
        # Broadcast everything but ``dim``, then it is a gather.
        a = list(input._data.shape)
        b = list(indices._data.shape)
        a[d] = b[d] = 1
        shape = list(xp.broadcast_shapes(tuple(a), tuple(b)))
        in_shape, idx_shape = list(shape), list(shape)
        in_shape[d], idx_shape[d] = input._data.shape[d], indices._data.shape[d]
        if tuple(in_shape) != input._data.shape:
            input = ops.expand(input, in_shape)
        if tuple(idx_shape) != indices._data.shape:
            indices = ops.expand(indices, idx_shape)
        return gather(input, d, indices)


ops.alias, ops.index_put_embed = alias, index_put_embed  # (shape's derivatives reach them here)
ops.index_read, ops.index_write = index_read, index_write  # (scatter's index_put reaches them here)
