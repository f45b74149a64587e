"""Shape ops and views.

A view shares its base's storage *and version counter*, so an in-place change through either
is seen by nodes that saved the other. Every view remembers how it was made from its parent
(``meta.view_of = (parent, make)``, ``make(parent) -> view``), which lets an in-place op on a
view rewrite the base's history (see ``inplace.py``).
"""
from ._util import Node, record, sum_to, wrap_dim, xp
from ..tensor import Tensor


def make_view(input, data, node_cls, make):
    """Record a view op: ``data`` is a NumPy view of ``input._data`` made by ``make``."""
    out, node = record(data, node_cls, (input,))
    out._version_counter = input._version_counter
    out._base = input if input._base is None else input._base
    out._get_meta().view_of = (input, make)
    return out, node


def shape_args(args):
    """Accept f(2, 3), f((2, 3)) and f([2, 3]) as PyTorch does."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(a) for a in args)


def _infer_shape(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError('only one dimension can be inferred')
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f'invalid shape dimension {s}')
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# ---- view / reshape ----------------------------------------------------------------------

class ViewBackward0(Node):
    __slots__ = ('self_shape',)

    def apply(self, grad):
        return reshape(grad, self.self_shape),


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class CloneBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        return grad,


def view(input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        from .. import backend
        return input.to(backend.to_dtype(shape[0]))  # view(dtype): only same-size dtypes
    shape = _infer_shape(shape_args(shape), input._data.size)
    data = input._data.view()
    try:
        data.shape = shape
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           'dimension spans across two contiguous subspaces). Use .reshape(...) instead.') from None
    out, node = make_view(input, data, ViewBackward0, lambda t: view(t, shape))
    if node is not None:
        node.self_shape = input._data.shape
    return out


def reshape(input, *shape):
    shape = _infer_shape(shape_args(shape), input._data.size)
    src = input._data
    data = src.reshape(shape)
    if xp.may_share_memory(data, src):
        out, node = make_view(input, data, ViewBackward0, lambda t: reshape(t, shape))
    else:  # a copy, as PyTorch's reshape of non-contiguous data: _reshape_alias/clone + view
        out, node = record(data, UnsafeViewBackward0, (input,))
    if node is not None:
        node.self_shape = src.shape
    return out


def view_as(input, other):
    return view(input, other._data.shape)


def reshape_as(input, other):
    return reshape(input, other._data.shape)


def flatten(input, start_dim=0, end_dim=-1):
    shape = input._data.shape
    if len(shape) == 0:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError('flatten() has invalid args: start_dim cannot come after end_dim')
    if s == e:
        return input
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def contiguous(input, memory_format=None):
    if input._data.flags.c_contiguous:
        return input
    return clone(input)


def clone(input, *, memory_format=None):
    return record(input._data.copy(), CloneBackward0, (input,))[0]


# ---- transpose / permute ------------------------------------------------------------------

class TransposeBackward0(Node):
    __slots__ = ('dim0', 'dim1')

    def apply(self, grad):
        return transpose(grad, self.dim0, self.dim1),


class TBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        return t(grad),


class PermuteBackward0(Node):
    __slots__ = ('dims',)

    def apply(self, grad):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return permute(grad, inverse),


def transpose(input, dim0, dim1):
    nd = input._data.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    out, node = make_view(input, xp.swapaxes(input._data, d0, d1), TransposeBackward0,
                          lambda t: transpose(t, d0, d1))
    if node is not None:
        node.dim0, node.dim1 = d0, d1
    return out


swapaxes = swapdims = transpose


def t(input):
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f't() expects a tensor with <= 2 dimensions, but self is {nd}D')
    return make_view(input, input._data.T, TBackward0, t)[0]


def permute(input, *dims):
    dims = shape_args(dims)
    nd = input._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f'permute(sparse_coo): number of dimensions in the tensor input does not match the '
                           f'length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal '
                           f'to len(dims) = {len(dims)}')
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError('permute(): duplicate dims are not allowed.')
    out, node = make_view(input, xp.transpose(input._data, dims), PermuteBackward0, lambda t: permute(t, dims))
    if node is not None:
        node.dims = dims
    return out


def _T(input):
    nd = input._data.ndim
    if nd < 2:
        return alias_view(input)
    return permute(input, tuple(range(nd - 1, -1, -1)))


def alias_view(input):
    from .indexing import alias
    return alias(input)


def _mT(input):
    if input._data.ndim < 2:
        raise RuntimeError('tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.')
    return transpose(input, -2, -1)


# ---- unsqueeze / squeeze / expand ---------------------------------------------------------

class UnsqueezeBackward0(Node):
    __slots__ = ('dim',)

    def apply(self, grad):
        return squeeze(grad, self.dim),


class SqueezeBackward0(Node):
    __slots__ = ('self_shape',)

    def apply(self, grad):
        return reshape(grad, self.self_shape),


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ()


class SqueezeBackward4(SqueezeBackward0):
    __slots__ = ()


def unsqueeze(input, dim):
    nd = input._data.ndim
    d = wrap_dim(dim, nd + 1)
    out, node = make_view(input, xp.expand_dims(input._data, d), UnsqueezeBackward0, lambda t: unsqueeze(t, d))
    if node is not None:
        node.dim = d
    return out


def squeeze(input, dim=None):
    shape = input._data.shape
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
        cls = SqueezeBackward0
    elif isinstance(dim, int):
        axes = (wrap_dim(dim, len(shape)),) if shape else ()
        cls = SqueezeBackward1
        if axes and shape[axes[0]] != 1:
            axes = ()
    else:
        axes = tuple(d for d in (wrap_dim(d, len(shape)) for d in dim) if shape[d] == 1)
        cls = SqueezeBackward4
    out, node = make_view(input, xp.squeeze(input._data, axes) if axes else input._data.view(), cls,
                          lambda t: squeeze(t, dim))
    if node is not None:
        node.self_shape = shape
    return out


class ExpandBackward0(Node):
    __slots__ = ('self_shape',)

    def apply(self, grad):
        return sum_to(grad, self.self_shape),


def expand(input, *sizes):
    sizes = shape_args(sizes)
    shape = input._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f'expand(torch.FloatTensor{{{list(shape)}}}, size={list(sizes)}): the number of sizes '
                           f'provided ({len(sizes)}) must be greater or equal to the number of dimensions in '
                           f'the tensor ({len(shape)})')
    lead = len(sizes) - len(shape)
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f'The expanded size of the tensor ({s}) isn\'t allowed in a leading, '
                                   'non-existing dimension 0')
            target.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        elif cur != 1 and s != cur:
            raise RuntimeError(f'The expanded size of the tensor ({s}) must match the existing size ({cur}) at '
                               f'non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: '
                               f'{list(shape)}')
        target.append(s)
    target = tuple(target)
    if target == shape:
        data = input._data.view()
    else:
        data = xp.broadcast_to(input._data, target)
    out, node = make_view(input, data, ExpandBackward0, lambda t: expand(t, target))
    if node is not None:
        node.self_shape = shape
    return out


def expand_as(input, other):
    return expand(input, other._data.shape)


def broadcast_to(input, size):
    return expand(input, size)


# ---- select / slice (the pieces of basic indexing) ----------------------------------------

class SelectBackward0(Node):
    __slots__ = ('self_shape', 'dim', 'index')

    def apply(self, grad):
        from .indexing import index_put_embed
        return index_put_embed(grad, self.self_shape, (slice(None),) * self.dim + (self.index,)),


class SliceBackward0(Node):
    __slots__ = ('self_shape', 'dim', 'start', 'end', 'step')

    def apply(self, grad):
        from .indexing import index_put_embed
        index = (slice(None),) * self.dim + (slice(self.start, self.end, self.step),)
        return index_put_embed(grad, self.self_shape, index),


def select(input, dim, index):
    shape = input._data.shape
    if not shape:
        raise IndexError('select() cannot be applied to a 0-dim tensor.')
    d = wrap_dim(dim, len(shape))
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(f'index {index} is out of bounds for dimension {d} with size {size}')
    i = index + size if index < 0 else index
    out, node = make_view(input, input._data[(slice(None),) * d + (i,)], SelectBackward0,
                          lambda t: select(t, d, i))
    if node is not None:
        node.self_shape, node.dim, node.index = shape, d, i
    return out


def slice_dim(input, dim, start, end, step):
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    if step is not None and step <= 0:
        raise ValueError('step must be greater than zero')
    s, e, st = slice(start, end, step).indices(shape[d])
    e = max(e, s)
    out, node = make_view(input, input._data[(slice(None),) * d + (slice(s, e, st),)], SliceBackward0,
                          lambda t: slice_dim(t, d, s, e, st))
    if node is not None:
        node.self_shape, node.dim, node.start, node.end, node.step = shape, d, s, e, st
    return out


def narrow(input, dim, start, length):
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f'start ({start}) + length ({length}) exceeds dimension size ({size}).')
    return slice_dim(input, d, start, start + length, 1)


FUNCTIONS = ['view', 'reshape', 'view_as', 'reshape_as', 'flatten', 'contiguous', 'clone', 'transpose', 'swapaxes',
             'swapdims', 't', 'permute', 'unsqueeze', 'squeeze', 'expand', 'expand_as', 'broadcast_to', 'select',
             'narrow']
NOT_METHODS = ['view']
METHODS = {'view': view, 'T': property(_T), 'mT': property(_mT)}
