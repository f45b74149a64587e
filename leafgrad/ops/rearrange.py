"""Ops that rearrange or join data into a new tensor (copies, not views).

cat/stack and their variants, repeat/tile/repeat_interleave, flip/roll, tril/triu, diag and
diag_embed, and ``pad`` (``nn.functional.pad``). Each derivative is written with leafgrad ops:
cat's is a narrow per input, repeat's a reshape and a sum, flip's a flip, and so on, so that a
second derivative records too.

Each op is declared once (``_op.Op``); the joins (cat, stack, hstack ...), pad, meshgrid and the
index factories are functions only, as in PyTorch.
"""
import itertools
import numbers
import sys
import warnings

from .. import _memory_format as memory_formats, backend
from .._arg_parser import METHOD_CODES, Overloads, int_list, refuse_arguments
from ..autograd.graph import on_samples, self_recording
from ._op import Op, write_out
from ._util import (SCALAR_NAMES, Node, autocast, diagonal_array, histories_first, ops, record, wrap, wrap_dim,
                    xp)
from ..tensor import Tensor, _index


def _tensor_list(tensors, fname):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f'not {type(tensors).__name__}')
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f'expected Tensor as element {i} in argument 0, but got {type(t).__name__}')
    return tensors


def _to_dtype(t, np_dtype):
    if t._data.dtype == np_dtype:
        return t
    return t.to(backend.from_np(np_dtype))


# ---- cat / stack -----------------------------------------------------------------------------

def _cat_out_dtype(result, out):
    if result.category > out.category:
        raise TypeError(f"leafgrad.cat(): input types can't be cast to the desired output type {SCALAR_NAMES[out.name]}")


def _cat_memory_format(tensors):
    """PyTorch's compute_output_memory_format for cat: the format every input suggests
    (channels_last ones stay so), else contiguous, whatever the inputs' strides (seed 7002030:
    cat of transposed tensors, then view: NumPy's concatenate kept their order)."""
    formats = {memory_formats.suggested(t._data) for t in tensors}
    return formats.pop() if len(formats) == 1 else memory_formats.contiguous_format


def _stack_memory_format(tensors, d):
    """stack's layout, for inputs of up to 3 dims: PyTorch's cat of the inputs unsqueezed at
    ``d`` (their strides as PyTorch's unsqueeze makes them); PyTorch lays out a stack of larger
    ones by other rules (of channels_last ones with a batch of one, for one), which NumPy's
    order is left to approximate."""
    formats = set()
    for t in tensors:
        a = t._data
        strides = [st // a.itemsize for st in a.strides]
        shape = a.shape[:d] + (1,) + a.shape[d:]
        strides = strides[:d] + [a.shape[d] * strides[d] if d < a.ndim else 1] + strides[d:]
        formats.add(memory_formats.suggested(a, shape, strides))
    return formats.pop() if len(formats) == 1 else memory_formats.contiguous_format


class Cat(Op):
    """cat(tensors, dim=0, *, out=None) (also concat, concatenate): the tensors joined along
    ``dim`` (of their promoted dtype)."""
    op, node, aliases, method = 'cat', 'CatBackward0', ('concat', 'concatenate'), False
    parameter_types = {'dim': 'int'}
    saved = ('dim=given_dim:int64',)
    __slots__ = ('dim', 'sizes', 'shapes', 'dtypes', 'given_dim')

    def forward(tensors, dim=0, *, out=None):
        if out is not None:
            return write_out('cat', out, cat(tensors, dim), _cat_out_dtype)
        tensors = _tensor_list(tensors, 'cat')
        if autocast.state.on:
            tensors = autocast.promote(tensors)
        if not tensors:
            raise ValueError('leafgrad.cat(): expected a non-empty list of Tensors')
        for i, t in enumerate(tensors):
            if not t._data.ndim:
                raise RuntimeError(f'zero-dimensional tensor (at position {i}) cannot be concatenated')
        # PyTorch still accepts (and skips) 1-D empty tensors of any other shape (legacy behaviour).
        used = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
        dtype = tensors[0]._data.dtype
        for t in tensors[1:]:
            dtype = backend.promote_types(backend.from_np(dtype), backend.from_np(t._data.dtype)).np
        if not used:  # (every input a skipped empty 1-D one: each gets its own empty gradient)
            result, node = record(xp.zeros((0,), dtype=dtype, like=tensors[0]._data), Cat, tuple(tensors))
            if node is not None:
                node.dim, node.sizes = 0, [None] * len(tensors)
                node.shapes, node.dtypes = [t._data.shape for t in tensors], [t._data.dtype for t in tensors]
            return result
        ref = used[0]._data.shape
        d = wrap_dim(dim, len(ref))
        for i, t in enumerate(tensors):
            s = t._data.shape
            if t._data.ndim == 1 and s[0] == 0:
                continue
            if len(s) != len(ref):
                histories_first(*tensors)  # (PyTorch's no_grad-view error comes first)
                raise RuntimeError(f'Tensors must have same number of dimensions: got {len(ref)} and {len(s)}')
            for k in range(len(ref)):
                if k != d and s[k] != ref[k]:
                    histories_first(*tensors)
                    raise RuntimeError(f'Sizes of tensors must match except in dimension {d}. Expected size '
                                       f'{ref[k]} but got size {s[k]} for tensor number {i} in the list.')
        data = xp.concatenate([t._data for t in used], axis=d).astype(dtype, copy=False)
        if type(data) is xp.ndarray:
            data = memory_formats.lay_out(data, _cat_memory_format(tensors))
        result, node = record(data, Cat, tuple(tensors))
        if node is not None:
            node.dim, node.given_dim = d, dim
            node.shapes = [t._data.shape for t in tensors]
            node.dtypes = [t._data.dtype for t in tensors]
            node.sizes = [None if (t._data.ndim == 1 and t._data.shape[0] == 0) else t._data.shape[d] for t in tensors]
        return result

    def jvp(self, tangents, output):
        parts = [t if t is not None else wrap(xp.zeros(shape, dtype=output._data.dtype, like=output._data))
                 for t, shape, size in zip(tangents, self.shapes, self.sizes) if size is not None]
        return cat(parts, self.dim)

    def apply(self, grad):
        grads = []
        offset = 0
        for shape, size, dtype, (fn, _) in zip(self.shapes, self.sizes, self.dtypes, self.next_functions):
            if size is None:  # a skipped legacy empty 1-D input
                grads.append(wrap(xp.zeros(shape, dtype=dtype, like=grad._data)) if fn is not None else None)
                continue
            g = ops.narrow(grad, self.dim, offset, size) if fn is not None else None
            offset += size
            grads.append(_to_dtype(g, dtype) if g is not None else None)
        return tuple(grads)


class Stack(Op):
    """stack(tensors, dim=0, *, out=None): the tensors joined along a new dim ``dim``."""
    op, node, method = 'stack', 'StackBackward0', False
    parameter_types = {'dim': 'int'}
    saved = ('dim=given_dim:int64',)
    __slots__ = ('dim', 'dtypes', 'given_dim')

    def forward(tensors, dim=0, *, out=None):
        if out is not None:
            return write_out('stack', out, stack(tensors, dim), _cat_out_dtype)
        tensors = _tensor_list(tensors, 'stack')
        if autocast.state.on:
            tensors = autocast.promote(tensors)
        if not tensors:
            raise RuntimeError('stack expects a non-empty TensorList')
        ref = tensors[0]._data.shape
        for i, t in enumerate(tensors[1:], 1):
            if t._data.shape != ref:
                histories_first(*tensors)  # (PyTorch's no_grad-view error comes first)
                raise RuntimeError(f'stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and '
                                   f'{list(t._data.shape)} at entry {i}')
        d = wrap_dim(dim, len(ref) + 1)
        dtype = tensors[0]._data.dtype
        for t in tensors[1:]:
            dtype = backend.promote_types(backend.from_np(dtype), backend.from_np(t._data.dtype)).np
        data = xp.stack([t._data for t in tensors], axis=d).astype(dtype, copy=False)
        if type(data) is xp.ndarray and data.ndim <= 4:
            data = memory_formats.lay_out(data, _stack_memory_format(tensors, d))
        result, node = record(data, Stack, tuple(tensors))
        if node is not None:
            node.dim, node.dtypes, node.given_dim = d, [t._data.dtype for t in tensors], dim
        return result

    def jvp(self, tangents, output):
        shape = output._data.shape[:self.dim] + output._data.shape[self.dim + 1:]
        return stack([t if t is not None else wrap(xp.zeros(shape, dtype=output._data.dtype, like=output._data))
                      for t in tangents],
                     self.dim)

    def apply(self, grad):
        return tuple(_to_dtype(ops.select(grad, self.dim, i), dt) if fn is not None else None
                     for i, ((fn, _), dt) in enumerate(zip(self.next_functions, self.dtypes)))


# PyTorch's signatures: an argument that is no tensor is refused with the parser's listing of them
_ATLEAST_1D, _ATLEAST_2D, _ATLEAST_3D = (Overloads(f'atleast_{n}d', '(Tensor input)', '(tuple of Tensors tensors)')
                                         for n in (1, 2, 3))


class Atleast1d(Op):
    """atleast_1d(*tensors): each tensor viewed with at least 1 dims."""
    op, method = 'atleast_1d', False

    def forward(*tensors):
        try:
            return _atleast(tensors, 1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_ATLEAST_1D)
            raise


class Atleast2d(Op):
    """atleast_2d(*tensors): each tensor viewed with at least 2 dims."""
    op, method = 'atleast_2d', False

    def forward(*tensors):
        try:
            return _atleast(tensors, 2)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_ATLEAST_2D)
            raise


class Atleast3d(Op):
    """atleast_3d(*tensors): each tensor viewed with at least 3 dims."""
    op, method = 'atleast_3d', False

    def forward(*tensors):
        try:
            return _atleast(tensors, 3)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_ATLEAST_3D)
            raise


def _atleast(tensors, n):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and not single:
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        nd = t._data.ndim
        if nd >= n:
            out.append(t)
        elif nd == 0:
            out.append(ops.reshape(t, (1,) * n))
        elif nd == 1 and n == 2:
            out.append(ops.unsqueeze(t, 0))
        elif nd == 1:
            out.append(ops.unsqueeze(ops.unsqueeze(t, 0), -1))
        else:
            out.append(ops.unsqueeze(t, -1))
    return out[0] if single else tuple(out)


class Hstack(Op):
    """hstack(tensors): cat along the columns (dim 0 of vectors)."""
    op, method = 'hstack', False

    def forward(tensors):
        tensors = _atleast(tuple(_tensor_list(tensors, 'hstack')), 1)
        return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


class Vstack(Op):
    """vstack(tensors) (also row_stack): cat along the rows of the tensors seen as matrices."""
    op, aliases, method = 'vstack', ('row_stack',), False

    def forward(tensors):
        return cat(_atleast(tuple(_tensor_list(tensors, 'vstack')), 2), 0)


class Dstack(Op):
    """dstack(tensors): cat along dim 2 of the tensors seen with 3 dims."""
    op, method = 'dstack', False

    def forward(tensors):
        return cat(_atleast(tuple(_tensor_list(tensors, 'dstack')), 3), 2)


class ColumnStack(Op):
    """column_stack(tensors): the tensors (vectors as columns) joined along dim 1."""
    op, method = 'column_stack', False

    def forward(tensors):
        tensors = [ops.reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t
                   for t in _tensor_list(tensors, 'column_stack')]
        return cat(tensors, 1)


# ---- repeat / tile / repeat_interleave ----------------------------------------------------------

class Repeat(Op):
    """repeat(input, *sizes): the input tiled ``sizes`` times along each dim (a copy)."""
    op, node = 'repeat', 'RepeatBackward0'
    public = False  # (a method only: PyTorch has no torch.repeat)
    saved = ('repeats=repeats', 'self_sym_sizes=self_shape')
    __slots__ = ('self_shape', 'repeats')

    def vmap(V, fn, args, kwargs):  # the batch dims repeated once, in front of the sample's
        x = args[0]
        reps = int_list(args[1:], 'repeat', 'repeats') if not kwargs else None
        nb, ndim = len(V._levels_of(x)), V._logical_ndim(x)
        if reps is None or not V.is_batched(x) or len(reps) < ndim:
            return None
        lead = x._data.shape[:nb]
        return V.on_batched(lambda p: fn(p.reshape(lead + (1,) * (len(reps) - ndim) + p._data.shape[nb:]),
                                         (1,) * nb + tuple(reps)), x, (), {})

    def forward(input, *sizes):
        reps = int_list(sizes, 'repeat', 'repeats')
        shape = input._data.shape
        if len(reps) < len(shape):
            raise RuntimeError('Number of dimensions of repeat dims can not be smaller than number of dimensions of '
                               'tensor')
        padded = (1,) * (len(reps) - len(shape)) + shape
        target = [r * s for r, s in zip(reps, padded)]
        if any(r < 0 for r in reps):
            raise RuntimeError(f'Trying to create tensor with negative dimension {min(target)}: {target}')
        if all(r == 1 for r in reps):  # (NumPy's tile copies in the input's order; PyTorch's repeat is contiguous)
            data = input._data.reshape(padded).copy(order='C')
        else:
            data = xp.tile(input._data.reshape(padded), reps)
        result, node = record(data, Repeat, (input,))
        if node is not None:
            node.self_shape, node.repeats = shape, tuple(reps)
        return result

    def jvp(self, tangents):  # linear: the tangent repeated
        return repeat(tangents[0], self.repeats)

    def apply(self, grad):
        reps = self.repeats
        padded = (1,) * (len(reps) - len(self.self_shape)) + tuple(self.self_shape)
        # Each output dim of size r*s is r copies of the input dim: split it as (r, s), sum r.
        split_shape = []
        for r, s in zip(reps, padded):
            split_shape += [r, s]
        g = ops.reshape(grad, tuple(split_shape))
        g = ops.sum(g, tuple(range(0, 2 * len(reps), 2)))
        return ops.reshape(g, self.self_shape),


class Tile(Op):
    """tile(input, dims): repeat, ``dims`` padded with leading 1s."""
    op = 'tile'

    def forward(input, dims):
        try:
            dims = int_list((dims,), 'tile', 'dims')
            nd = input._data.ndim
            if len(dims) < nd:
                dims = (1,) * (nd - len(dims)) + dims
            return repeat(input, dims)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _repeated_positions(counts):
    """0 .. len(counts)-1, each position i repeated counts[i] times (int64)."""
    if type(counts) is not xp.ndarray and backend.device_of(counts).type == 'cuda':
        # (CuPy's repeat takes no array of counts: output position j comes from the first i whose
        # running total of counts passes j)
        ends = xp.cumsum(counts)
        total = int(ends[-1]) if counts.shape[0] else 0
        return xp.searchsorted(ends, xp.arange(total, like=counts), side='right').astype(xp.int64)
    return xp.repeat(xp.arange(counts.shape[0], dtype=xp.int64), counts)


def _check_output_size(counts, output_size):
    if output_size is not None and output_size != int(counts.sum()):
        raise RuntimeError('allocated size does not match required size')


_REPEAT_INTERLEAVE = Overloads('repeat_interleave', '(Tensor input, Tensor repeats, int dim = None, *, '
                               'int output_size = None)', '(Tensor repeats, *, int output_size = None)',
                               '(Tensor input, int repeats, int dim = None, *, int output_size = None)',
                               function_only=(1,))


class RepeatInterleave(Op):
    """repeat_interleave(input, repeats=None, dim=None, *, output_size=None): each element
    repeated ``repeats`` times along ``dim``."""
    op = 'repeat_interleave'
    parameter_types = {'repeats': 'Tensor or int?', 'dim': 'int?', 'output_size': 'int?'}
    listed = _REPEAT_INTERLEAVE

    def forward(input, repeats=None, dim=None, *, output_size=None):
        try:
            if repeats is None:  # repeat_interleave(repeats): the indices, each repeated
                if id(sys._getframe().f_code) in METHOD_CODES:  # (the function's overload only)
                    _REPEAT_INTERLEAVE.bind((), {} if output_size is None else {'output_size': output_size},
                                            method=True)
                counts = input._data
                _check_output_size(counts, output_size)
                return wrap(_repeated_positions(counts))
            if dim is None:
                input = ops.flatten(input)
                dim = 0
            d = wrap_dim(dim, input._data.ndim)
            size = input._data.shape[d]
            if isinstance(repeats, Tensor):  # a tensor of counts (even of one) reads through index_select
                counts = repeats._data
                if counts.size == 1:
                    counts = xp.full(size, counts.reshape(()), dtype=counts.dtype)
                if counts.ndim != 1 or counts.shape[0] != size:
                    n = counts.shape[0] if counts.ndim else 1
                    raise RuntimeError(f'repeats must have the same size as input along dim, but got '
                                       f'repeats.size(0) = {n} and input.size({d}) = {size}')
                if (counts < 0).any():
                    raise RuntimeError('repeats can not be negative')
                _check_output_size(counts, output_size)
                return ops.index_select(input, d, wrap(_repeated_positions(counts)))
            n = int(repeats)
            if n < 0:
                raise RuntimeError('Repeats must be non-negative')
            if output_size is not None and output_size != n * size:  # (output_size is PyTorch's hint: checked, not trusted)
                raise RuntimeError(f'repeat_interleave: Invalid output_size, expected {n * size} but got {output_size}')
            shape = input._data.shape
            # Each element followed by its n - 1 copies: a new axis after dim, expanded, then merged.
            expanded = ops.expand(ops.unsqueeze(input, d + 1), shape[:d + 1] + (n,) + shape[d + 1:])
            return ops.view(ops.clone(expanded, memory_format=memory_formats.contiguous_format),
                            shape[:d] + (size * n,) + shape[d + 1:])
        except (AttributeError, TypeError):  # (an input that is no tensor: PyTorch's parser's listing)
            refuse_arguments(overloads=_REPEAT_INTERLEAVE)
            raise


# ---- flip / roll -------------------------------------------------------------------------------

def _dims_list(dims, nd, what='dims'):
    dims = [wrap_dim(d, nd) for d in dims]
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f'dim {d} appears multiple times in the list of dims')
        seen.add(d)
    return tuple(dims)


class Flip(Op):
    """flip(input, dims): the order of the dims ``dims`` reversed (a copy)."""
    op, node = 'flip', 'FlipBackward0'
    saved = ('dims=given_dims:int64',)
    __slots__ = ('dims', 'given_dims')

    def forward(input, *args, dims=None):
        if dims is None:
            dims = int_list(args, 'flip', 'dims')
        elif isinstance(dims, int):
            dims = (dims,)
        given, dims = tuple(dims), _dims_list(dims, input._data.ndim)
        data = xp.flip(input._data, dims).copy() if dims else input._data.copy()
        if data.strides != input._data.strides:  # (PyTorch's flip is laid out as empty_like(input))
            data = memory_formats.preserved(data, input._data)
        result, node = record(data, Flip, (input,))
        if node is not None:
            node.dims, node.given_dims = dims, given
        return result

    def jvp(self, tangents):  # linear: the tangent flipped
        return flip(tangents[0], self.dims)

    def apply(self, grad):
        return flip(grad, self.dims),


class Fliplr(Op):
    """fliplr(input): flip along dim 1."""
    op = 'fliplr'

    def forward(input):
        try:
            if input._data.ndim < 2:
                raise RuntimeError('Input must be >= 2-d.')
            return flip(input, (1,))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Flipud(Op):
    """flipud(input): flip along dim 0."""
    op = 'flipud'

    def forward(input):
        try:
            if input._data.ndim < 1:
                raise RuntimeError('Input must be >= 1-d.')
            return flip(input, (0,))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


_ROLL = Overloads('roll', '(Tensor input, tuple of ints shifts, tuple of ints dims = [])')


def _roll_index(value, shifts, dims):
    """A shift or dim given as no int nor sequence: the int it stands for (a 0-dim integer tensor),
    or PyTorch's TypeError (in the method's words)."""
    try:
        return _index(value)
    except TypeError:
        _ROLL.bind((shifts, dims), {}, method=True)
        raise


def _rolled(a, shifts, dims):
    """NumPy's roll laid out as PyTorch's: a roll along one dim is the cat of two narrows of
    the input (in the memory format both suggest), one along several dims a roll of the roll
    along the first; an empty input's is its clone. (NumPy's keeps the input's order.)"""
    if not a.size:
        return memory_formats.copy_in(a, memory_formats.preserve_format)
    for shift, d in zip(shifts, dims):
        rolled = xp.roll(a, shift, d)
        fmt = memory_formats.contiguous_format
        if a.ndim in (4, 5):
            strides = [st // a.itemsize for st in a.strides]
            start = (a.shape[d] - shift) % a.shape[d]
            fmt = _cat_memory_format_of([a.shape[:d] + (n,) + a.shape[d + 1:] for n in (a.shape[d] - start, start)],
                                        strides, a)
        a = memory_formats.lay_out(rolled, fmt)
    return a


def _cat_memory_format_of(shapes, strides, a):
    formats = {memory_formats.suggested(a, shape, strides) for shape in shapes}
    return formats.pop() if len(formats) == 1 else memory_formats.contiguous_format


class Roll(Op):
    """roll(input, shifts, dims=None): the elements shifted cyclically along ``dims`` (of the
    flattened input without dims)."""
    op, node = 'roll', 'RollBackward0'
    saved = ('dims=given_dims:int64', 'shifts=shifts:int64')
    __slots__ = ('shifts', 'dims', 'given_dims')

    def forward(input, shifts, dims=None):
        try:
            shifts = (shifts,) if isinstance(shifts, int) else int_list((shifts,), 'roll', 'shifts', 1) \
                if isinstance(shifts, (tuple, list)) else (_roll_index(shifts, shifts, dims),)
            if dims is None or isinstance(dims, (tuple, list)) and not dims:  # (no dims: the flattened input)
                if len(shifts) != 1:
                    raise RuntimeError(f'shifts and dimensions must align. shifts: {len(shifts)}, dims:0')
                data = xp.roll(input._data.reshape(-1), shifts[0]).reshape(input._data.shape)
                node_dims = None
            else:
                dims = (dims,) if isinstance(dims, int) else int_list((dims,), 'roll', 'dims', 2) \
                    if isinstance(dims, (tuple, list)) else (_roll_index(dims, shifts, dims),)
                if len(shifts) != len(dims):
                    raise RuntimeError(f'shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}')
                given, dims = tuple(dims), tuple(wrap_dim(d, input._data.ndim) for d in dims)
                data = _rolled(input._data, shifts, dims)
                node_dims = dims
            result, node = record(data, Roll, (input,))
            if node is not None:
                node.shifts, node.dims = tuple(shifts), node_dims
                node.given_dims = () if node_dims is None else given
            return result
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def jvp(self, tangents):  # linear: the tangent rolled
        return roll(tangents[0], self.shifts, self.dims)

    def apply(self, grad):
        return roll(grad, tuple(-s for s in self.shifts), self.dims),


# ---- tril / triu / diag -------------------------------------------------------------------------

def _triangle(input, diagonal, fn, node_cls, name):
    if input._data.ndim < 2:
        raise RuntimeError(f'{name}: input tensor must have at least 2 dimensions')
    result, node = record(fn(input._data, diagonal), node_cls, (input,))
    if node is not None:
        node.diagonal = diagonal
    return result


class Tril(Op):
    """tril(input, diagonal=0): the lower triangle of each matrix, zeros above."""
    op, node, inplace = 'tril', 'TrilBackward0', True
    saved = ('diagonal=diagonal:int64',)
    __slots__ = ('diagonal',)

    def vmap(V, fn, args, kwargs):  # (of the last two dims: the batch dims lead)
        return V.physical(fn, args, kwargs, min_ndim=2)

    def forward(input, diagonal=0):
        return _triangle(input, diagonal, xp.tril, Tril, 'tril')

    def jvp(self, tangents):  # linear (also tril's derivative)
        return self.apply(tangents[0])[0]

    def apply(self, grad):
        return tril(grad, self.diagonal),


class Triu(Op):
    """triu(input, diagonal=0): the upper triangle of each matrix, zeros below."""
    op, node, inplace = 'triu', 'TriuBackward0', True
    saved = ('diagonal=diagonal:int64',)
    __slots__ = ('diagonal',)

    def vmap(V, fn, args, kwargs):  # (of the last two dims: the batch dims lead)
        return V.physical(fn, args, kwargs, min_ndim=2)

    def forward(input, diagonal=0):
        return _triangle(input, diagonal, xp.triu, Triu, 'triu')

    def jvp(self, tangents):  # linear (also triu's derivative)
        return self.apply(tangents[0])[0]

    def apply(self, grad):
        return triu(grad, self.diagonal),


class DiagEmbed(Op):
    """diag_embed(input, offset=0, dim1=-2, dim2=-1): matrices with the last dim of ``input`` on a
    diagonal, zeros elsewhere."""
    op, node = 'diag_embed', 'DiagEmbedBackward0'
    saved = ('dim1=given_dim1:int64', 'dim2=given_dim2:int64', 'offset=offset:int64')
    __slots__ = ('offset', 'dim1', 'dim2', 'given_dim1', 'given_dim2')

    def forward(input, offset=0, dim1=-2, dim2=-1):
        nd = input._data.ndim + 1
        d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f'diagonal dimensions cannot be identical {dim1}, {dim2}')
        n = input._data.shape[-1] + abs(offset) if input._data.ndim else 1 + abs(offset)
        rest = list(input._data.shape[:-1])
        shape = []
        for k in range(nd):
            shape.append(n if k in (d1, d2) else rest.pop(0))
        data = xp.zeros(shape, dtype=input._data.dtype, like=input._data)
        diagonal_array(data, offset, d1, d2)[...] = input._data
        result, node = record(data, DiagEmbed, (input,))
        if node is not None:
            node.offset, node.dim1, node.dim2 = offset, d1, d2
            node.given_dim1, node.given_dim2 = dim1, dim2
        return result

    def apply(self, grad):
        return ops.diagonal(grad, self.offset, self.dim1, self.dim2),


class Diag(Op):
    """diag(input, diagonal=0): the matrix with a vector on a diagonal, or a matrix's diagonal
    (a copy)."""
    op, node = 'diag', 'DiagonalBackward0_copy'  # (PyTorch's name for diag of a matrix)
    __slots__ = ('self_shape', 'offset')

    def forward(input, diagonal=0):
        nd = input._data.ndim
        if nd == 1:
            return diag_embed(input, diagonal)  # (its dims as PyTorch passes them: -2, -1)
        if nd != 2:
            raise RuntimeError(f'diag(): Supports 1D or 2D tensors. Got {nd}D')
        data = diagonal_array(input._data, diagonal, 0, 1).copy()
        result, node = record(data, Diag, (input,))
        if node is not None:
            node.self_shape, node.offset = input._data.shape, diagonal
        return result

    def apply(self, grad):
        return ops.diagonal_embed_into(grad, self.self_shape, self.offset, 0, 1),


# ---- pad (nn.functional.pad) --------------------------------------------------------------------

class ConstantPadNdBackward0(Op):
    """pad(mode='constant') (``_constant_pad``)."""
    node = 'ConstantPadNdBackward0'
    saved = ('pad=pad:int64',)
    __slots__ = ('pad',)

    def jvp(self, tangents):  # linear: the tangent padded with zeros (the trailing dims: a batch too)
        return on_samples(lambda t: _constant_pad(t, self.pad, 0), tangents[0])

    def apply(self, grad):
        return _constant_pad(grad, tuple(-p for p in self.pad), 0),


def _constant_pad(input, pad, value):
    shape = list(input._data.shape)
    nd = len(shape)
    src, dst = [slice(None)] * nd, [slice(None)] * nd
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        size = shape[d] + left + right
        if size < 0:
            raise RuntimeError('narrow(): length must be non-negative.')
        keep = shape[d] - max(-left, 0) - max(-right, 0)
        src[d] = slice(max(-left, 0), max(-left, 0) + max(keep, 0))
        dst[d] = slice(max(left, 0), max(left, 0) + max(keep, 0))
        shape[d] = size
    data = xp.full(shape, value, dtype=input._data.dtype, like=input._data)
    data[tuple(dst)] = input._data[tuple(src)]
    result, node = record(data, ConstantPadNdBackward0, (input,))
    if node is not None:
        node.pad = tuple(pad)
    return result


self_recording.append(_constant_pad)  # (also a derivative's op: forward over reverse carries tangents through it)


class _IndexPadBackward(Node):
    """reflect/replicate padding gathers along each padded dim; the derivative sums back."""
    __slots__ = ('indices', 'shape', 'node_name')
    saved_state = ('indices',)

    def jvp(self, tangents):  # linear: the tangent gathered as the input was (dims from the end: a batch too)
        nd = len(self.shape)

        def gather(t):
            for d, idx in self.indices:
                t = ops.index_select(t, d - nd, wrap(idx))
            return t
        return on_samples(gather, tangents[0])

    def apply(self, grad):
        g = grad
        for d, idx in reversed(self.indices):
            shape = list(g._data.shape)
            shape[d] = self.shape[d]
            g = ops.index_add(wrap(xp.zeros(shape, dtype=g._data.dtype, like=g._data)), d, wrap(idx), g)
        return g,

    def name(self):
        return self.node_name


_NON_CONSTANT = ('Supported combinations for non-constant padding:\n'
                 '  - 2D or 3D input: padding size = 2 (pads last dimension)\n'
                 '  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n'
                 '  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)')


class Pad(Op):
    """pad(input, pad, mode='constant', value=None): nn.functional.pad (also leafgrad.pad)."""
    op, method = 'pad', False
    public = False  # (nn.functional.pad's (PyTorch has no torch.pad))

    def vmap(V, fn, args, kwargs):
        """The trailing dims padded: a constant pad on the physical array; the other modes (which
        take a sample of k + 1 or k + 2 dims) with the batch folded into the sample's first dim."""
        x = args[0]
        if not V.is_batched(x) or any(V.is_batched(t) for t in V._tensors_in(args[1:], kwargs)):
            return None
        mode = args[2] if len(args) > 2 else kwargs.get('mode', 'constant')
        if mode == 'constant' or V._logical_ndim(x) < 2:
            return V.on_batched(fn, x, args[1:], kwargs)
        nb = len(V._levels_of(x))
        lead, first = x._data.shape[:nb], x._data.shape[nb]

        def folded(p):
            out = fn(p.reshape((-1,) + p._data.shape[nb + 1:]), *args[1:], **kwargs)
            return out.reshape(lead + (first,) + out._data.shape[1:])
        return V.on_batched(folded, x, (), {})

    def forward(input, pad, mode='constant', value=None):
        try:
            pad = int_list((pad,), 'pad', 'pad', position=2)
            if value is not None and not isinstance(value, (numbers.Real, Tensor)):
                raise TypeError(f"pad(): argument 'value' (position 4) must be float, not {type(value).__name__}")
            nd = input._data.ndim
            if len(pad) % 2:
                raise RuntimeError('Padding length must be divisible by 2')
            if len(pad) // 2 > nd:
                raise RuntimeError(f'Padding length should be less than or equal to two times the input dimension '
                                   'but got '
                                   f'padding length {len(pad)} and input of dimension {nd}')
            if mode == 'constant':
                return _constant_pad(input, pad, 0 if value is None else value)
            if mode not in ('reflect', 'replicate', 'circular'):
                raise NotImplementedError(f'Unrecognised padding mode {mode}')
            if value is not None and value != 0:
                raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
            k = len(pad) // 2
            if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
                raise NotImplementedError(f'Padding size {len(pad)} is not supported for {nd}D input tensor.\n'
                                          + _NON_CONSTANT)
            # (reflection_pad3d: not cast)
            if autocast.state.on and (mode == 'replicate' or (mode == 'reflect' and k < 3)):
                input, = autocast.fp32(input)
            shape = input._data.shape
            if mode == 'circular':
                return _circular_pad(input, pad)
            indices = []
            data = input._data
            for i in range(k):
                d = nd - 1 - i
                left, right, size = pad[2 * i], pad[2 * i + 1], shape[d]
                if mode == 'reflect' and (left >= size or right >= size):
                    raise RuntimeError(f'Argument #4: Padding size should be less than the corresponding input '
                                       'dimension, '
                                       f'but got: padding ({left}, {right}) at dimension {d} of input {list(shape)}')
                pos = xp.arange(-left, size + right, like=data)
                if mode == 'reflect':
                    pos = xp.abs(pos)
                    pos = xp.where(pos >= size, 2 * (size - 1) - pos, pos)
                else:
                    pos = xp.clip(pos, 0, size - 1)
                indices.append((d, pos))
                data = xp.take(data, pos, axis=d)
            result, node = record(data, _IndexPadBackward, (input,))
            if node is not None:
                name = 'Reflection' if mode == 'reflect' else 'Replication'
                node.indices, node.shape, node.node_name = indices, shape, f'{name}Pad{k}DBackward0'
                node.save(input)  # as PyTorch saves it (so that an in-place change of it is caught)
            return result
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _circular_pad(input, pad):
    """As PyTorch writes it: a new tensor whose regions are copied in place from blocks of the
    input (so the result's history is a CopySlices). Along each padded dim the output is the
    (cropped) input's positions -left .. size+right-1 taken modulo size: at most three blocks."""
    shape = list(input._data.shape)
    nd = len(shape)
    k = len(pad) // 2
    segments = [[(slice(None), slice(None))] for _ in range(nd - k)]
    out_shape = list(shape)
    for i in reversed(range(k)):
        d = nd - 1 - i
        left, right, size = pad[2 * i], pad[2 * i + 1], shape[d]
        if left > size or right > size:
            raise RuntimeError('Padding value causes wrapping around more than once.')
        if size + left + right < 0:
            raise RuntimeError('Negative padding value is resulting in an empty dimension.')
        out_shape[d] = size + left + right
        # Negative pads crop first; the wrapped borders come from the cropped input.
        lo, start = max(left, 0), max(-left, 0)
        c = size - start - max(-right, 0)
        segs = []
        if left > 0:
            segs.append((slice(0, left), slice(start + c - left, start + c)))
        segs.append((slice(lo, lo + c), slice(start, start + c)))
        if right > 0:
            segs.append((slice(lo + c, lo + c + right), slice(start, start + right)))
        segments.append(segs)
    out = ops.zeros(out_shape, dtype=input.dtype)
    for combo in itertools.product(*segments):
        out[tuple(dst for dst, _ in combo)] = input[tuple(src for _, src in combo)]
    return out


class Rot90(Op):
    """rot90(input, k=1, dims=(0, 1)): the input rotated by k quarter turns in the plane ``dims``."""
    op, node = 'rot90', 'Rot90Backward0'
    saved = ('dims=given_dims:int64', 'k=k')
    __slots__ = ('k', 'dims', 'given_dims')

    def vmap(V, fn, args, kwargs):  # the plane's dims shifted past the batch dims
        x = args[0]
        k = args[1] if len(args) > 1 else kwargs.get('k', 1)
        dims = args[2] if len(args) > 2 else kwargs.get('dims', (0, 1))
        ndim = V._logical_ndim(x)
        if not V.is_batched(x) or len(dims) != 2 or ndim < 2 or set(kwargs) - {'k', 'dims'}:
            return None
        nb = len(V._levels_of(x))
        return V.on_batched(fn, x, (k, tuple(wrap_dim(d, ndim) + nb for d in dims)), {})

    def forward(input, k=1, dims=(0, 1)):
        nd = input._data.ndim
        if len(dims) != 2:
            raise RuntimeError(f'expected total rotation dims == 2, but got dims = {len(dims)}')
        d0, d1 = wrap_dim(dims[0], nd), wrap_dim(dims[1], nd)
        if d0 == d1:
            raise RuntimeError(f'expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}')
        result, node = record(xp.rot90(input._data, k, (d0, d1)).copy(), Rot90, (input,))
        if node is not None:
            node.k, node.dims, node.given_dims = k, (d0, d1), tuple(dims)
        return result

    def jvp(self, tangents):  # linear: the tangent rotated
        return rot90(tangents[0], self.k, self.dims)

    def apply(self, grad):
        return rot90(grad, -self.k, self.dims),


# ---- select_scatter / slice_scatter / diagonal_scatter: the functional forms of writing a view ----

class _ViewScatterBackward(Op):
    """``input`` with ``src`` written into one of its views: the input's gradient is the
    gradient with that view zeroed, src's is the gradient's view."""
    __slots__ = ('region', 'view')

    def apply(self, grad):
        gi = gs = None
        if self.needs_input_grad(0):
            zeros = wrap(xp.zeros(self.region(grad._data).shape, dtype=grad._data.dtype, like=grad._data))
            gi = _view_scatter(grad, zeros, self.region, self.view, type(self))
        if self.needs_input_grad(1):
            gs = self.view(grad)
        return gi, gs


def _view_scatter(input, src, region, view, node_cls):
    """``region(array)`` is the NumPy view written; ``view(tensor)`` the same as a leafgrad op."""
    data = input._data.copy()
    target = region(data)
    if target.shape != src._data.shape:
        raise RuntimeError(f'expected src to have a size equal to the slice of self. src size = '
                           f'{list(src._data.shape)}, slice size = {list(target.shape)}')
    target[...] = src._data
    out, node = record(data, node_cls, (input, src))
    if node is not None:
        node.region, node.view = region, view
    return out


class SelectScatter(_ViewScatterBackward):
    """select_scatter(input, src, dim, index): ``input`` with ``src`` written into its
    select(dim, index)."""
    op, node = 'select_scatter', 'SelectScatterBackward0'
    tensors = ('input', 'src')
    __slots__ = ()

    def forward(input, src, dim, index):
        shape = input._data.shape
        d = wrap_dim(dim, len(shape))
        if not -shape[d] <= index < shape[d]:
            raise IndexError(f'select(): index {index} out of range for tensor of size {list(shape)} at dimension {d}')
        i = index % shape[d]
        return _view_scatter(input, src, lambda a: a[(slice(None),) * d + (i, Ellipsis)],
                             lambda t: ops.select(t, d, i), SelectScatter)


class SliceScatter(_ViewScatterBackward):
    """slice_scatter(input, src, dim=0, start=None, end=None, step=1): ``input`` with ``src``
    written into the slice."""
    op, node = 'slice_scatter', 'SliceScatterBackward0'
    tensors = ('input', 'src')
    __slots__ = ()

    def forward(input, src, dim=0, start=None, end=None, step=1):
        d = wrap_dim(dim, input._data.ndim)
        s, e, st = slice(start, end, step).indices(input._data.shape[d])
        e = max(e, s)
        return _view_scatter(input, src, lambda a: a[(slice(None),) * d + (slice(s, e, st),)],
                             lambda t: ops.slice_dim(t, d, s, e, st), SliceScatter)


class DiagonalScatter(_ViewScatterBackward):
    """diagonal_scatter(input, src, offset=0, dim1=0, dim2=1): ``input`` with ``src``
    written into the diagonal."""
    op, node = 'diagonal_scatter', 'DiagonalScatterBackward0'
    tensors = ('input', 'src')
    __slots__ = ()

    def forward(input, src, offset=0, dim1=0, dim2=1):
        nd = input._data.ndim
        d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
        return _view_scatter(input, src, lambda a: diagonal_array(a, offset, d1, d2),
                             lambda t: ops.diagonal(t, offset, d1, d2), DiagonalScatter)


# ---- meshgrid and index helpers --------------------------------------------------------------------

_MESHGRID_WARNING = ('leafgrad.meshgrid: in an upcoming release, it will be required to pass the indexing argument.')


class Meshgrid(Op):
    """meshgrid(*tensors, indexing=None): the grids of the coordinates the vectors give (views)."""
    op, method = 'meshgrid', False

    def forward(*tensors, indexing=None):
        try:
            if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
                tensors = tuple(tensors[0])
            if indexing is None:
                warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
                indexing = 'ij'
            if indexing not in ('ij', 'xy'):
                raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
            if not tensors:
                raise RuntimeError('meshgrid expects a non-empty TensorList')
            for t in tensors:
                if t._data.dtype != tensors[0]._data.dtype:
                    raise RuntimeError('meshgrid expects all tensors to have the same dtype')
                if t._data.ndim > 1:
                    raise RuntimeError(f'torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}')
            swap = indexing == 'xy' and len(tensors) >= 2
            ts = list(tensors)
            if swap:  # 'xy' is 'ij' with the first two inputs (and outputs) swapped, as PyTorch does it
                ts[0], ts[1] = ts[1], ts[0]
            shape = tuple(t._data.size for t in ts)
            grids = []
            for i, t in enumerate(ts):
                view_shape = [1] * len(ts)
                view_shape[i] = -1
                grids.append(ops.expand(ops.view(t, view_shape), shape))
            if swap:
                grids[0], grids[1] = grids[1], grids[0]
            return tuple(grids)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Argwhere(Op):
    """argwhere(input): nonzero(input)."""
    op = 'argwhere'

    def forward(input):
        try:
            return ops.nonzero(input)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _triangle_indices(name, row, col, offset, lower, dtype, device, layout):
    if layout is not None and str(layout) != 'torch.strided':
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the '{layout}' layout: "
                                  'leafgrad has strided tensors only')
    dtype = backend.to_dtype(dtype) if dtype is not None else backend.to_dtype('int64')
    if dtype.np not in (xp.dtype(xp.int32), xp.dtype(xp.int64)):
        raise NotImplementedError(f'"{name}" not implemented for \'{SCALAR_NAMES[dtype.np.name]}\'')
    if row < 0:
        raise RuntimeError(f'row must be non-negative, got{row}')
    if col < 0:
        raise RuntimeError(f'col must be non-negative, got{col}')
    r, c = xp.indices((row, col))
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return wrap(backend.module_for(device).asarray(xp.stack([r[keep], c[keep]]).astype(dtype.np)))


class TrilIndices(Op):
    """tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None): the indices of
    the lower triangle of a row x col matrix."""
    op, method = 'tril_indices', False

    def forward(row, col, offset=0, *, dtype=None, device=None, layout=None):
        return _triangle_indices('tril_indices', row, col, offset, True, dtype, device, layout)


class TriuIndices(Op):
    """triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None): the indices of
    the upper triangle of a row x col matrix."""
    op, method = 'triu_indices', False

    def forward(row, col, offset=0, *, dtype=None, device=None, layout=None):
        return _triangle_indices('triu_indices', row, col, offset, False, dtype, device, layout)
