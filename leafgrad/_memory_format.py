"""Memory formats (``torch.contiguous_format``, ``channels_last``, ``channels_last_3d``,
``preserve_format``) and layouts (``torch.strided``, ``sparse_coo``, ...).

A tensor's memory format is the order of its elements in memory, not its shape: a channels_last
4-d tensor keeps its (N, C, H, W) shape while its elements lie in (N, H, W, C) order, strides
(H*W*C, 1, W*C, C). A leafgrad tensor is a NumPy (or CuPy) array, so a format is the layout of
that array: made by copying the array in the permuted order and viewing it back in the logical
order, and kept by copies in NumPy's order 'K' (as PyTorch's ``preserve_format`` keeps the
strides of a dense tensor). The values never depend on the format, only ``stride()``,
``is_contiguous(memory_format=...)`` and the speed of some kernels do.
"""
import numpy as np


class memory_format:
    """One of PyTorch's four memory formats (singletons, compared by identity)."""
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f'leafgrad.{self.name}'  # (names print as leafgrad's: README, differences)

    def __reduce__(self):  # copies and pickles are the singleton itself
        return self.name


contiguous_format = memory_format('contiguous_format')
channels_last = memory_format('channels_last')
channels_last_3d = memory_format('channels_last_3d')
preserve_format = memory_format('preserve_format')

class layout:
    """One of PyTorch's tensor layouts (singletons, compared by identity). Every leafgrad tensor
    is dense and strided: the others exist for programs to name and compare, and the factories
    refuse them (``check_layout``)."""
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f'leafgrad.{self.name}'  # (names print as leafgrad's: README, differences)

    def __reduce__(self):
        return self.name


strided = layout('strided')
sparse_coo = layout('sparse_coo')
sparse_csr = layout('sparse_csr')
sparse_csc = layout('sparse_csc')
sparse_bsr = layout('sparse_bsr')
sparse_bsc = layout('sparse_bsc')
jagged = layout('jagged')
_mkldnn = layout('_mkldnn')


def check_layout(value, fname):
    """A factory's ``layout=``: None or torch.strided; PyTorch's TypeError for what is no layout,
    and NotImplementedError for a layout leafgrad has no tensors of."""
    if value is None or value is strided:
        return
    if not isinstance(value, layout):
        raise TypeError(f"{fname}(): argument 'layout' must be leafgrad.layout, not {type(value).__name__}")
    raise NotImplementedError(f'{fname}(): leafgrad has no tensors of layout {value!r} (only leafgrad.strided)')


# a channels-last format: (the rank it needs, the order of the dims in memory, outermost first)
_PERMUTED = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def check(fmt, fname):
    """PyTorch's TypeError for a memory_format argument of fname() that is not one."""
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be leafgrad.memory_format, not "
                        f'{type(fmt).__name__}')


def _check_rank(array, fmt):
    rank = _PERMUTED[fmt][0]
    if array.ndim != rank:
        raise RuntimeError(f'required rank {rank} tensor to use {fmt.name} format')


def is_laid_out(array, fmt):
    """``Tensor.is_contiguous(memory_format=fmt)``: are the array's strides those of fmt? (A dim
    of size 1 may have any stride, as in PyTorch.)"""
    if fmt not in _PERMUTED:
        return bool(array.flags.c_contiguous)
    rank, order = _PERMUTED[fmt]
    if array.ndim != rank:
        return False
    expected = array.itemsize
    for d in reversed(order):
        if array.shape[d] != 1:
            if array.strides[d] != expected:
                return False
            expected *= array.shape[d]
    return True


def suggested(array, shape=None, strides=None):
    """PyTorch's ``suggest_memory_format``: channels_last (channels_last_3d) for a 4-d (5-d) array
    whose strides are like that format's (dense or not), else contiguous_format. PyTorch's
    is_channels_last_strides: the strides in elements, taken channels first, then the spatial
    dims innermost-first, then the batch, must not decrease; ambiguous cases are contiguous.
    (``shape`` and ``strides``, in elements: those of a view of the array PyTorch would make.)"""
    if shape is None:
        shape, strides = array.shape, [st // array.itemsize for st in array.strides]
    fmt = {4: channels_last, 5: channels_last_3d}.get(len(shape))
    if fmt is None:
        return contiguous_format
    if strides[1] == 0:
        return contiguous_format
    least = 0
    for d in (1,) + tuple(range(len(shape) - 1, 1, -1)) + (0,):
        if shape[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return contiguous_format
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return fmt


def dim_order(tensor, ambiguity_check):
    """``Tensor.dim_order()``: PyTorch's order of the dims in memory (the permutation its
    elementwise results take: an insertion sort by stride, a dim of stride 0 left where it is)."""
    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list) and all(isinstance(f, memory_format) for f in ambiguity_check)):
        raise TypeError('The ambiguity_check argument must be a bool or a list of memory formats.')
    shape, strides = tensor.shape, tensor.stride()
    ndim = len(shape)
    if ambiguity_check is not False:
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        ambiguous = any(a == b for a, b in zip(strides, strides[1:])) or 1 in shape
        if ambiguous and sum(tensor.is_contiguous(memory_format=f) for f in formats) != 1:
            raise RuntimeError('The tensor does not have unique dim order, or cannot map to exact one of the given '
                               'memory formats.')
    if ndim < 2:
        return tuple(range(ndim))
    contiguous = tensor.is_contiguous()
    last = ndim == 4 and tensor.is_contiguous(memory_format=channels_last)
    if contiguous != last:
        return tuple(range(ndim)) if contiguous else (0, 2, 3, 1)

    def should_swap(a, b):  # (PyTorch's, for one tensor)
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if _at_least(shape[b], shape[a]) else 1
        if _at_least(sb, sa):
            return -1
        return 1 if _at_least(sa, sb) else 0

    perm = _insertion_sorted(ndim, should_swap)  # sorted back to front, then reversed
    if ambiguity_check and any(should_swap(a, b) != -1 for a, b in zip(perm, perm[1:])):
        raise RuntimeError('The tensor does not have unique dim order.')
    return tuple(reversed(perm))


def _insertion_sorted(ndim, should_swap):
    """The dims, last first, insertion-sorted as PyTorch sorts them by strides (``should_swap(a,
    b)``: 1 swaps the two, -1 stops the insertion, 0 goes on past b)."""
    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):
        d1 = i
        for d0 in reversed(range(i)):
            comparison = should_swap(perm[d0], perm[d1])
            if comparison > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif comparison < 0:
                break
    return perm


def _at_least(a, b):
    return b == 0 or (a != 0 and (a >= b or a % b == 0))


def dense_order(array):
    """The order of the array's dims in memory, outermost first, when its elements fill one
    block without gaps or overlaps in some order of dims (the tensors ``preserve_format`` keeps
    as they are); None for a C-contiguous array or one that is not dense."""
    if array.flags.c_contiguous or array.ndim < 2:
        return None
    order = tuple(sorted(range(array.ndim), key=lambda d: -array.strides[d]))
    return order if array.transpose(order).flags.c_contiguous else None


def _order_of(array, fmt):
    """The order of dims (outermost first) that a result laid out in ``fmt`` like ``array`` has;
    None for C order."""
    if fmt is preserve_format:
        return dense_order(array)
    if fmt is contiguous_format:
        return None
    _check_rank(array, fmt)
    return _PERMUTED[fmt][1]


def _inverse(order):
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    return tuple(inverse)


def copy_in(array, fmt):
    """A copy of the array laid out in fmt (``clone(memory_format=fmt)``)."""
    if fmt is preserve_format:
        out = array.copy(order='K')
        if out.strides == array.strides or not array.size:  # (the common case: the same layout)
            return out
        return preserved(out, array)
    order = _order_of(array, fmt)
    if order is None:
        return array.copy(order='C')
    return array.transpose(order).copy(order='C').transpose(_inverse(order))


def dense(array):
    """PyTorch's is_non_overlapping_and_dense: the strides, smallest first, are those of a
    contiguous array of the dims in that order (dims of size 1 aside)."""
    expected = array.itemsize
    for stride, size in sorted((st, n) for n, st in zip(array.shape, array.strides) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def preserved(array, like):
    """``array`` (of ``like``'s shape) laid out as PyTorch's preserve_format lays out a copy of
    ``like``: with ``like``'s very strides where it is dense (those of dims of size 1 included,
    which NumPy's order 'K' chooses otherwise), else dense in the order of ``like``'s strides
    (``_dense_strides``)."""
    if type(array) is not np.ndarray or type(like) is not np.ndarray or not like.size:
        return array
    strides = [st // like.itemsize for st in like.strides]
    if not dense(like):
        strides = _dense_strides(like.shape, strides)
    return _with_strides(array, tuple(st * array.itemsize for st in strides))


def _with_strides(array, strides):
    """``array`` itself if it has these (byte) strides, else a copy laid out with them (dense)."""
    if array.strides == strides:
        return array
    order = sorted(range(array.ndim), key=lambda d: -strides[d])  # (outermost first)
    out = np.empty(tuple(array.shape[d] for d in order), array.dtype).transpose(_inverse(order))
    if out.strides != strides:  # (a dim of size 1 with a stride of its own)
        out = np.ndarray(array.shape, array.dtype, out.base, 0, strides)
    out[...] = array
    return out


def iterated(result, operands):
    """An elementwise result (a NumPy array of the broadcast shape) laid out as PyTorch's
    TensorIterator lays out its output: the dims ordered by the operands' strides, innermost
    first, by an insertion sort in which the first operand whose strides differ for a pair of dims
    decides (a dim an operand is broadcast along is skipped for it; equal strides put the smaller
    dim inside), then dense in that order. NumPy orders its output otherwise when the operands
    disagree (C order wins); the callers come here only when the first operand is not C-contiguous
    (with a C-contiguous first operand NumPy's order already is PyTorch's). Operands that are
    numbers or 0-d arrays decide nothing; operands all of one shape and layout, dense, give the
    result their very strides (PyTorch's fast setup: those of dims of size 1 included)."""
    shape = result.shape
    ndim = len(shape)
    if ndim < 2 or not result.size or type(result) is not np.ndarray:
        return result
    arrays = [a for a in operands if type(a) is np.ndarray and a.ndim]
    if not arrays:
        return result
    first = arrays[0]
    if all(a.shape == shape and a.strides == first.strides and a.itemsize == first.itemsize for a in arrays):
        if not dense(first):
            return result
        return _with_strides(result, tuple(st // first.itemsize * result.itemsize for st in first.strides))
    strided = []
    for a in arrays:
        lead = ndim - a.ndim
        strided.append([0] * lead + [0 if n == 1 and shape[lead + i] != 1 else st
                                     for i, (n, st) in enumerate(zip(a.shape, a.strides))])

    def should_swap(d0, d1):
        for st in strided:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    strides, step = [0] * ndim, result.itemsize
    for d in _insertion_sorted(ndim, should_swap):  # innermost first
        strides[d] = step
        step *= shape[d]
    return _with_strides(result, tuple(strides))


def contiguous_strides(shape):
    """The strides (in elements) of a contiguous tensor of ``shape``, as PyTorch gives them (a
    dim of size 0 counts as 1)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _dense_strides(shape, strides):
    """PyTorch's infer_dense_strides: the strides (in elements) of a dense tensor whose dims lie
    in memory in the order of ``strides`` (TensorIterator's insertion sort: a dim of stride 0
    stays where it is, equal strides put the smaller dim inside)."""
    ndim = len(shape)
    if ndim < 2:
        return [1] * ndim

    def should_swap(a, b):
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa != sb:
            return -1 if sa < sb else 1
        return 1 if shape[a] > shape[b] else 0

    perm = _insertion_sorted(ndim, should_swap)  # innermost first
    out, step = [0] * ndim, 1
    for d in perm:
        out[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return out


def lay_out(array, fmt):
    """The array laid out in fmt: itself if it already is (``contiguous(memory_format=fmt)``)."""
    if fmt is preserve_format:
        if array.flags.c_contiguous:
            return array
        raise RuntimeError('preserve memory format is unsupported by the contiguous operator')
    return array if is_laid_out(array, fmt) else copy_in(array, fmt)


def relaid_like(array, like, fmt):
    """A new C-ordered array (a ``*_like`` result), laid out as ``like`` in fmt: itself when that
    is C order, else a copy in that order."""
    if fmt is preserve_format:
        return preserved(array, like)
    order = _order_of(like, fmt)
    if order is None:
        return array
    return array.transpose(order).copy(order='C').transpose(_inverse(order))


def model_of(like, fmt):
    """An array whose layout a ``*_like`` result filled in memory order (random draws) takes:
    ``like`` itself for preserve_format, an empty one laid out in fmt otherwise (None: C order)."""
    if fmt is preserve_format:
        return like
    order = _order_of(like, fmt)
    if order is None:
        return None
    return np.empty(tuple(like.shape[d] for d in order), like.dtype).transpose(_inverse(order))
