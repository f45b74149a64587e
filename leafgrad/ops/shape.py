"""Shape ops and views.

A view shares its base's storage *and version counter*, so an in-place change through either
is seen by nodes that saved the other. Every view remembers how it was made from its parent
(``make(parent) -> view``, ``autograd.views.link``), which lets an in-place op on a view
rewrite the base's history (see ``inplace.py``) and a view's history be regenerated after its
base changed (``autograd/views.py``). Ops with several view outputs (unbind, split, chunk)
record one node for all of them (``make_views``); its derivative gets None for an output that
received no gradient and treats it as zeros (``grads_or_zeros``).

Each op is declared once (``_op.Op``): the class is the op's node, its ``forward`` the op. The
ops PyTorch composes of others (reshape, flatten, narrow, chunk ...) declare no node of their
own. A derivative reaches a sibling family through ``ops`` (``ops.stack``, ``ops.index_add``).
"""
import math
import operator

from .. import _memory_format, backend
from .._arg_parser import Overloads, _is_index, int_list, is_dtype, refuse_arguments
from ._op import Op, warn_once
from ..autograd.graph import each_sample, self_recording
from ._util import (SCALAR_NAMES, _wrap, as_strided_array, broadcast_error, diagonal_array, make_view, make_views, ops,
                    record, state, storage_owner, sum_to, wrap, wrap_dim, xp)
from ..tensor import Size, Tensor, legacy_type_name


def grads_or_zeros(node, grads):
    """A multi-output node's gradients, with zeros where an output received none."""
    out = []
    for g, (shape, dtype) in zip(grads, node.output_meta):
        if g is None:  # (zeros on the device of the gradients received)
            g = wrap(xp.zeros(shape, dtype=dtype, like=next((h._data for h in grads if h is not None), None)))
        out.append(g)
    return out


def _infer_shape(shape, numel):
    """``shape`` (a tuple) with its -1 inferred from ``numel``, or PyTorch's error."""
    holes = shape.count(-1)
    if holes > 1:
        raise RuntimeError('only one dimension can be inferred')
    if shape and min(shape) < -1:
        i = next(i for i, s in enumerate(shape) if s < -1)
        raise RuntimeError(f'invalid shape dimension {shape[i]} at index {i} of shape {list(shape)}')
    known = math.prod(shape) * (-1 if holes else 1)  # the product of the given sizes
    if not holes:
        if known != numel:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape
    if known == 0 and numel == 0:
        raise RuntimeError(f'cannot reshape tensor of 0 elements into shape {list(shape)} because the unspecified '
                           'dimension size -1 can be any value and is ambiguous')
    if known == 0 or numel % known:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    i = shape.index(-1)
    return shape[:i] + (numel // known,) + shape[i + 1:]


# ---- PyTorch's strides for dims of size 1 ------------------------------------------------
# A dim of size 1 may have any stride. NumPy recomputes those of a reshaped array and gives a
# broadcast one 0, where PyTorch's views keep them or derive them by fixed rules. They are seen
# (stride(), and matmul folds a batch into one mm or not by them), so the views that make dims
# of size 1 (unsqueeze, expand, view, reshape) restride the array, only where the two differ.

def _restrided(data, strides):
    """``data`` viewed with ``strides`` (in bytes): itself where NumPy's are those already. A
    NumPy array is made on the buffer of the array owning the memory, which stays its base (the
    storage, storage_offset() and untyped_storage() see through it)."""
    if data.strides == strides or type(data) is backend.MetaArray:  # (a meta array's are always contiguous)
        return data
    if type(data) is xp.ndarray:
        owner = data
        while type(owner.base) is xp.ndarray:
            owner = owner.base
        if owner.flags.c_contiguous:
            offset = data.__array_interface__['data'][0] - owner.__array_interface__['data'][0]
            out = xp.ndarray(data.shape, data.dtype, owner, offset, strides)
            if not backend.writeable(data):
                out.flags.writeable = False
            return out
    return as_strided_array(data, data.shape, strides, backend.writeable(data))


def _unsqueezed_strides(a, d):
    """PyTorch's unsqueeze: the other dims keep their strides; the new one's is the size times
    the stride of the dim it goes before (1 at the end)."""
    strides = a.strides
    return strides[:d] + (a.shape[d] * strides[d] if d < a.ndim else a.itemsize,) + strides[d:]


def _expanded_strides(a, target):
    """PyTorch's expand (inferExpandGeometry): a dim that keeps its size keeps its stride, an
    expanded one gets 0, and a new dim of size 1 the size times the stride of the dim after it."""
    shape, strides = a.shape, a.strides
    lead = len(target) - len(shape)
    out = [0] * len(target)
    for i in range(len(target) - 1, -1, -1):
        if i >= lead:
            size, stride = shape[i - lead], strides[i - lead]
        else:
            size, stride = 1, target[i + 1] * out[i + 1] if i + 1 < len(target) else 0
        out[i] = stride if size == target[i] else 0
    return tuple(out)


def _viewed(data, src):
    """``data``, a view of ``src`` in another shape, with PyTorch's strides (computeStride) for
    its dims of size 1: those it ends with take the stride of ``src``'s last dim, each other one
    the size times the stride of the dim after it. NumPy's agree but where ``src``'s last dim
    has size 1 (NumPy gives the trailing ones the stride of the last dim of another size) and
    where the shape is ``src``'s (NumPy keeps ``src``'s strides)."""
    shape = data.shape
    if not (shape == src.shape or (shape and shape[-1] == 1 and src.ndim and src.shape[-1] == 1)) \
            or 1 not in shape or not data.size:
        return data
    strides = list(data.strides)
    i = len(shape) - 1
    while i >= 0 and shape[i] == 1:
        strides[i] = src.strides[-1]
        i -= 1
    for d in range(i - 1, -1, -1):
        if shape[d] == 1:
            strides[d] = strides[d + 1] * shape[d + 1]
    return _restrided(data, tuple(strides))


# ---- view / reshape ----------------------------------------------------------------------

class View(Op):
    """view(input, *shape) (also leafgrad.view): the same data seen in another shape, or
    ``view(dtype)``: the data read as another dtype of the same size."""
    op, node = 'view', 'ViewBackward0'
    public = False  # (a method only: PyTorch has no torch.view)
    saved = ('self_sym_sizes=self_shape',)
    __slots__ = ('self_shape',)

    def forward(input, *shape):
        if shape and not isinstance(shape[0], (int, tuple, list)):
            if len(shape) == 1 and is_dtype(shape[0]):
                return _view_as_dtype(input, shape[0])
            if not _is_index(shape[0]):  # neither a dtype nor sizes (a string, None, 3.0): PyTorch's listing
                _VIEW_OVERLOADS.bind(shape, {}, method=True)
        shape = _infer_shape(int_list(shape, 'view'), input._data.size)
        data = input._data.view()
        try:
            data.shape = shape
        except AttributeError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               'dimension spans across two contiguous subspaces). Use .reshape(...) instead.') from None
        out, node = make_view(input, _viewed(data, input._data), View, lambda t: view(t, shape))
        if node is not None:
            node.self_shape = input._data.shape
        return out

    def jvp(self, tangents, output):  # (a reshape that copied: views take the generic rule)
        return reshape(tangents[0], output.shape)

    def apply(self, grad):
        return reshape(grad, self.self_shape),


_VIEW_OVERLOADS = Overloads('view', '(Tensor input, leafgrad.dtype dtype)', '(Tensor input, tuple of ints size)')


def _view_as_dtype(input, dtype):
    """view(dtype): the same bytes read as ``dtype``, as PyTorch's; a dtype of another element
    size scales the last dimension, which must then be contiguous. The result shares the
    storage and version counter but not the history (PyTorch's view.dtype is not differentiable)."""
    dtype = backend.to_dtype(dtype)
    data, target = input._data, dtype.np
    if target.itemsize != data.itemsize:  # (PyTorch's checks, in its order)
        old, new = data.itemsize, target.itemsize
        says = (f'to view {SCALAR_NAMES[data.dtype.name]} as {SCALAR_NAMES[target.name]} (different element '
                'sizes), but got')
        if data.ndim == 0:
            raise RuntimeError(says.replace('to view', 'self.dim() cannot be 0 to view').replace(', but got', ''))
        last_stride = data.strides[-1] // old if data.shape[-1] > 1 and data.size else 1  # (NumPy's of size <= 1: any)
        if last_stride != 1:
            raise RuntimeError(f'self.stride(-1) must be 1 {says} {last_stride}')
        if new > old:  # (elements merge: the last size, the offset and every stride whole multiples of the ratio)
            ratio = new // old
            if data.shape[-1] % ratio:
                raise RuntimeError(f'self.size(-1) must be divisible by {ratio} {says} {data.shape[-1]}')
            offset = 0 if type(data) is backend.MetaArray else ops.storage_offset(input)  # (meta: offsets untracked)
            if offset % ratio:
                raise RuntimeError(f'self.storage_offset() must be divisible by {ratio} {says} {offset}')
            for i, stride in enumerate(input.stride()[:-1]):
                if stride % ratio:
                    raise RuntimeError(f'self.stride({i}) must be divisible by {ratio} {says} {stride}')
        if data.strides[-1] != old:
            data = xp.lib.stride_tricks.as_strided(data, strides=data.strides[:-1] + (old,))
    out = Tensor._wrap(data.view(target))
    out._version_counter = input._version_counter
    return out


class UnsafeViewBackward0(View):
    """reshape of non-contiguous data that must copy (PyTorch's clone + _unsafe_view)."""
    node = 'UnsafeViewBackward0'
    __slots__ = ()


def unsafe_view(t, shape):
    """PyTorch's _unsafe_view: ``t``'s data reshaped, recorded as UnsafeViewBackward0 but no view
    (matmul's and kron's results, reshaped from a product no one else holds)."""
    out, node = record(t._data.reshape(shape), UnsafeViewBackward0, (t,))
    if node is not None:
        node.self_shape = t._data.shape
    return out


class ReshapeAliasBackward0(View):
    """reshape of non-contiguous data that needs no copy (PyTorch's _reshape_alias)."""
    node = 'ReshapeAliasBackward0'
    __slots__ = ()


class Reshape(Op):
    """reshape(input, *shape): a view where the data allows one, else a copy (recorded as
    PyTorch records each: ViewBackward0, ReshapeAliasBackward0, UnsafeViewBackward0)."""
    op = 'reshape'

    def forward(input, *shape):
        shape = _infer_shape(int_list(shape, 'reshape', 'shape'), input._data.size)
        src = input._data
        data = src.reshape(shape)
        if src.flags.c_contiguous:  # (contiguous data: always a view)
            out, node = make_view(input, _viewed(data, src), View, lambda t: reshape(t, shape))
        elif xp.may_share_memory(data, src):
            out, node = make_view(input, _viewed(data, src), ReshapeAliasBackward0, lambda t: reshape(t, shape))
        else:  # a copy, as PyTorch's reshape of non-contiguous data: _reshape_alias/clone + view
            out, node = record(data, UnsafeViewBackward0, (input,))
        if node is not None:
            node.self_shape = src.shape
        return out


class ViewAs(Op):
    """view_as(input, other)."""
    op = 'view_as'
    tensors = ('input', 'other')
    public = False  # (a method only: PyTorch has no torch.view_as)

    def forward(input, other):
        return view(input, other._data.shape)


class ReshapeAs(Op):
    """reshape_as(input, other)."""
    op = 'reshape_as'
    tensors = ('input', 'other')
    public = False  # (a method only: PyTorch has no torch.reshape_as)

    def forward(input, other):
        return reshape(input, other._data.shape)


_FLATTEN = Overloads('flatten', '(Tensor input, int start_dim = 0, int end_dim = -1)')


class Flatten(Op):
    """flatten(input, start_dim=0, end_dim=-1): the dims from start_dim to end_dim as one."""
    op = 'flatten'

    def forward(input, start_dim=0, end_dim=-1):
        try:
            shape = input._data.shape
            if len(shape) == 0:
                return reshape(input, (1,))
            try:
                s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
            except TypeError:  # (a dim that is no int: PyTorch's parser's error, in the method's words)
                _FLATTEN.bind((start_dim, end_dim), {}, method=True)
                raise
            if s > e:
                raise RuntimeError('flatten() has invalid args: start_dim cannot come after end_dim')
            if s == e:
                return input
            n = 1
            for d in shape[s:e + 1]:
                n *= d
            return reshape(input, shape[:s] + (n,) + shape[e + 1:])
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Contiguous(Op):
    """contiguous(input, *, memory_format=contiguous_format): the input itself where it is laid
    out so already, else a copy (CloneBackward0)."""
    op = 'contiguous'
    public = False  # (a method only: PyTorch has no torch.contiguous)

    def forward(input, *, memory_format=_memory_format.contiguous_format):
        if memory_format is _memory_format.contiguous_format:
            if input._data.flags.c_contiguous:
                return input
            return record(input._data.copy(order='C'), Clone, (input,))[0]
        _memory_format.check(memory_format, 'contiguous')
        data = _memory_format.lay_out(input._data, memory_format)
        return input if data is input._data else record(data, Clone, (input,))[0]


class Clone(Op):
    """clone(input, *, memory_format=None): a copy, laid out as the input when that is dense
    (``preserve_format``, as PyTorch keeps a transposed tensor's strides) or in the memory
    format asked for."""
    op, node = 'clone', 'CloneBackward0'
    __slots__ = ()

    def forward(input, *, memory_format=None):
        try:
            if memory_format is not None:
                _memory_format.check(memory_format, 'clone')
            return record(_memory_format.copy_in(input._data, memory_format or _memory_format.preserve_format),
                          Clone, (input,))[0]
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def jvp(self, tangents):
        return tangents[0].clone()

    def apply(self, grad):
        return grad,


# ---- transpose / permute ------------------------------------------------------------------

class Transpose(Op):
    """transpose(input, dim0, dim1) (also swapaxes, swapdims): the view with two dims swapped."""
    op, node, aliases = 'transpose', 'TransposeBackward0', ('swapaxes', 'swapdims')
    saved = ('dim0=given_dim0:int64', 'dim1=given_dim1:int64')
    __slots__ = ('dim0', 'dim1', 'given_dim0', 'given_dim1')

    def forward(input, dim0, dim1):
        nd = input._data.ndim
        d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
        out, node = make_view(input, xp.swapaxes(input._data, d0, d1), Transpose, lambda t: transpose(t, d0, d1))
        if node is not None:
            node.dim0, node.dim1, node.given_dim0, node.given_dim1 = d0, d1, dim0, dim1
        return out

    def apply(self, grad):
        return transpose(grad, self.dim0, self.dim1),


class T(Op):
    """t(input): the transpose of a matrix (a tensor of at most 2 dims, as it is otherwise)."""
    op, node = 't', 'TBackward0'
    __slots__ = ()

    def forward(input):
        try:
            nd = input._data.ndim
            if nd > 2:
                raise RuntimeError(f't() expects a tensor with <= 2 dimensions, but self is {nd}D')
            return make_view(input, input._data.T, T, t)[0]
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        if not state.grad_enabled:
            base = _transposed_buffer(grad._data)
            if base is not None:
                # t() of a transposed buffer is the buffer itself: handing it on as a plain
                # array (not a view of a view) lets AccumulateGrad keep a Linear weight's
                # gradient without copying it. Nothing is recorded in a plain backward.
                return _wrap(base),
        return t(grad),


def _transposed_buffer(array):
    """The contiguous buffer whose transpose ``array`` is, or None."""
    base = getattr(array, 'base', None)
    # (a base that is no array, as NumPy's as_strided and broadcast_to leave behind, is none;
    # a GPU's array has a GPU's array as its base)
    # (array 2-D and base of its shape reversed: base 2-D too)
    if (type(base) is not type(array) or base.base is not None or array.ndim != 2
            or array.shape[::-1] != base.shape or array.strides[::-1] != base.strides
            or not base.flags.c_contiguous):
        return None
    # Same extent as the whole buffer, so the view starts where the buffer does.
    return base


class Permute(Op):
    """permute(input, *dims): the view with the dims in the given order."""
    op, node = 'permute', 'PermuteBackward0'
    saved = ('dims=given_dims:int64',)
    __slots__ = ('dims', 'given_dims')

    def forward(input, *dims):
        dims = int_list(dims, 'permute', 'dims')
        nd = input._data.ndim
        if len(dims) != nd:
            raise RuntimeError(f'permute(sparse_coo): number of dimensions in the tensor input does not match the '
                               f'length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal '
                               f'to len(dims) = {len(dims)}')
        given, dims = dims, tuple(wrap_dim(d, nd) for d in dims)
        if len(set(dims)) != nd:
            raise RuntimeError('permute(): duplicate dims are not allowed.')
        out, node = make_view(input, xp.transpose(input._data, dims), Permute, lambda t: permute(t, dims))
        if node is not None:
            node.dims, node.given_dims = dims, tuple(given)
        return out

    def apply(self, grad):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return permute(grad, inverse),


# PyTorch's deprecations of the transposes of tensors that are not matrices, each given once a
# process (TORCH_WARN_ONCE)
_T_NOT_2D = ('The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will '
             'throw an error in a future release. Consider `x.mT` to transpose batches of matrices or '
             '`x.permute(*leafgrad.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.')
_ON_0D = {'T': 'Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.',
          'mT': 'Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.',
          'mH': 'Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().',
          'adjoint': 'adjoint() is deprecated on 0-D tensors. Consider using x.conj().'}


class Reversed(Op):
    """Tensor.T: the dims reversed (a permute, as PyTorch records it even for a matrix; an
    alias of a tensor of fewer than 2 dims). Deprecated, with PyTorch's warning, on a tensor
    that is no matrix."""
    op, function = 'T', False

    def forward(input):
        nd = input._data.ndim
        if nd != 2:
            warn_once(_ON_0D['T'] if nd == 0 else _T_NOT_2D)
        if nd < 2:
            return ops.alias(input)
        return permute(input, tuple(range(nd - 1, -1, -1)))

    method = property(forward)


def _conj_if_complex(t):
    """The conjugate of a complex (conjugate-transposed) tensor; a real one is its own conjugate."""
    if t._data.dtype.kind != 'c':
        return t
    return ops.conj(t)


class ConjugateTransposed(Op):
    """Tensor.H: the conjugate transpose of a matrix."""
    op, function = 'H', False

    def forward(input):
        nd = input._data.ndim
        if nd != 2:
            hint = ' For batches of matrices, consider using tensor.mH' if nd > 2 else ''
            raise RuntimeError(f'tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor.{hint}')
        return _conj_if_complex(transpose(input, 0, 1))

    method = property(forward)


def _batch_transposed(input, name, conjugate):
    """mT, mH, adjoint(): the last two dims swapped (and conjugated); a 0-D tensor is kept (and
    conjugated), deprecated, with PyTorch's warning."""
    nd = input._data.ndim
    if nd == 0:
        warn_once(_ON_0D[name])
        out = ops.alias(input)
    elif nd < 2:
        label = f'tensor.{name}' if name != 'adjoint' else 'tensor.adjoint()'
        raise RuntimeError(f'{label} is only supported on matrices or batches of matrices. Got {nd}-D tensor.')
    else:
        out = transpose(input, -2, -1)
    return _conj_if_complex(out) if conjugate else out


class MatricesConjugateTransposed(Op):
    """Tensor.mH: the conjugate transpose of each matrix of a batch (adjoint)."""
    op, function = 'mH', False

    def forward(input):
        return _batch_transposed(input, 'mH', True)

    method = property(forward)


class Adjoint(Op):
    """adjoint(input): the conjugate transpose of each matrix of a batch."""
    op = 'adjoint'

    def forward(input):
        try:
            return _batch_transposed(input, 'adjoint', True)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class MatricesTransposed(Op):
    """Tensor.mT: the transpose of each matrix of a batch."""
    op, function = 'mT', False

    def forward(input):
        return _batch_transposed(input, 'mT', False)

    method = property(forward)


# ---- unsqueeze / squeeze / expand ---------------------------------------------------------

class Unsqueeze(Op):
    """unsqueeze(input, dim): the view with a dim of size 1 inserted at ``dim``."""
    op, node = 'unsqueeze', 'UnsqueezeBackward0'
    parameter_types = {'dim': 'int'}
    saved = ('dim=given_dim:int64',)
    __slots__ = ('dim', 'given_dim')

    def forward(input, dim):
        nd = input._data.ndim
        d = wrap_dim(dim, nd + 1)
        shape = input._data.shape
        data = input._data.reshape(shape[:d] + (1,) + shape[d:])  # (what expand_dims does, without its wrapper)
        if 1 in shape or (d == nd and nd and data.strides[-1] != data.itemsize):  # (NumPy's strides differ)
            data = _restrided(data, _unsqueezed_strides(input._data, d))
        out, node = make_view(input, data, Unsqueeze, lambda t: unsqueeze(t, d))
        if node is not None:
            node.dim, node.given_dim = d, operator.index(dim)
        return out

    def apply(self, grad):
        return squeeze(grad, self.given_dim),  # (the dim as given, as PyTorch's grad.squeeze(dim))



class Squeeze(Op):
    """squeeze(input, dim=None): the view without dims of size 1 (all of them, the one given,
    or those of the dims given: SqueezeBackward0, 1, 2)."""
    op, node = 'squeeze', 'SqueezeBackward0'
    parameter_types = {'dim': 'tuple of ints'}  # (no None: PyTorch's overloads list none that takes it)
    listed = Overloads('squeeze', '(Tensor input)', '(Tensor input, int dim)', '(Tensor input, tuple of ints dim)')
    saved = ('self_sym_sizes=self_shape',)
    __slots__ = ('self_shape', 'axes', 'given_dim')

    def forward(input, dim=None):
        shape = input._data.shape
        if dim is None:
            axes = tuple(i for i, s in enumerate(shape) if s == 1)
            cls = Squeeze
        elif isinstance(dim, int) or not isinstance(dim, (tuple, list)):  # (or a 0-dim integer tensor)
            axes = (wrap_dim(dim, len(shape)),)
            if not shape:
                axes = ()
            cls = SqueezeBackward1
            if axes and shape[axes[0]] != 1:
                axes = ()
        else:
            wrapped = [wrap_dim(d, max(len(shape), 1)) for d in dim]
            for i, d in enumerate(wrapped):  # (PyTorch's dim_list_to_bitset)
                if d in wrapped[:i]:
                    raise RuntimeError(f'dim {d} appears multiple times in the list of dims')
            axes = tuple(d for d in wrapped if shape and shape[d] == 1)
            cls = SqueezeBackward2
        out, node = make_view(input, xp.squeeze(input._data, axes) if axes else input._data.view(), cls,
                              (lambda t: squeeze(t)) if dim is None else (lambda t: squeeze(t, dim)))
        if node is not None:
            node.self_shape, node.axes = shape, axes
            if dim is not None:
                node.given_dim = operator.index(dim) if cls is SqueezeBackward1 else tuple(map(operator.index, dim))
        return out

    def jvp(self, tangents, output):
        return reshape(tangents[0], output.shape)

    def apply(self, grad):
        if tuple(grad.shape) == self.self_shape:  # (nothing was squeezed: PyTorch's unsqueeze_to passes grad)
            return grad,
        if state.grad_enabled:  # create_graph: recorded as PyTorch's unsqueeze_to, one unsqueeze a dim
            for axis in sorted(self.axes):
                grad = ops.unsqueeze(grad, axis)
            return grad,
        return reshape(grad, self.self_shape),


class SqueezeBackward1(Squeeze):  # squeeze(dim)
    node = 'SqueezeBackward1'
    saved = ('dim=given_dim:int64', 'self_sym_sizes=self_shape')
    __slots__ = ()


class SqueezeBackward2(Squeeze):  # squeeze(dims)
    node = 'SqueezeBackward2'
    saved = ('dim=given_dim:int64', 'self_sym_sizes=self_shape')
    __slots__ = ()


class SqueezeBackward4(Squeeze):  # the squeeze inside matmul of a 1-D by a 2-D tensor
    node = 'SqueezeBackward4'
    saved = ('dim=given_dim:int64', 'self_sym_sizes=self_shape')
    __slots__ = ()


def squeeze_result_(t):
    """``t.squeeze_(0)`` of a result no one else holds (matmul's product of a 1-D by a 2-D
    tensor, which PyTorch squeezes in place): no view, SqueezeBackward4, at version 1."""
    out, node = record(t._data[0], SqueezeBackward4, (t,))
    if node is not None:
        node.self_shape, node.axes, node.given_dim = t._data.shape, (0,), 0
    out._version_counter[0] += 1
    return out


class Expand(Op):
    """expand(input, *sizes): the view broadcast to ``sizes`` (-1 keeps a dim's size)."""
    op, node = 'expand', 'ExpandBackward0'
    public = False  # (a method only: PyTorch has no torch.expand)
    saved = ('self_sym_sizes=self_shape',)
    __slots__ = ('self_shape',)

    def forward(input, *sizes):
        sizes = int_list(sizes, 'expand')
        shape = input._data.shape
        if len(sizes) < len(shape):
            raise RuntimeError(f'expand({legacy_type_name(input._data)}{{{list(shape)}}}, size={list(sizes)}): the '
                               f'number of sizes provided ({len(sizes)}) must be greater or equal to the number of '
                               f'dimensions in the tensor ({len(shape)})')
        lead = len(sizes) - len(shape)
        target = [0] * len(sizes)
        for i in range(len(sizes) - 1, -1, -1):  # from the last dim, as PyTorch checks
            s = sizes[i]
            if i < lead:
                if s < 0:
                    raise RuntimeError(f'The expanded size of the tensor ({s}) isn\'t allowed in a leading, '
                                       f'non-existing dimension {i}')
                target[i] = s
                continue
            cur = shape[i - lead]
            if s == -1:
                s = cur
            elif cur != 1 and s != cur:
                raise RuntimeError(f'The expanded size of the tensor ({s}) must match the existing size ({cur}) at '
                                   f'non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: '
                                   f'{list(shape)}')
            target[i] = s
        target = tuple(target)
        if target == shape:
            data = input._data.view()
        else:
            if target[lead:] == shape and target[:lead] == (1,) * lead:  # (new dims of size 1 only: no element
                data = input._data.reshape(target)                       # repeats, a writable view as PyTorch's)
            else:
                data = xp.broadcast_to(input._data, target)
            if 1 in target:  # (NumPy's strides of dims of size 1 are not PyTorch's: 0 when broadcast)
                data = _restrided(data, _expanded_strides(input._data, target))
            if 0 in target and not backend.writeable(data) and backend.writeable(input._data):
                # (nothing to hold, so no element repeats: writable, as PyTorch finds no overlap)
                data = as_strided_array(input._data, target, data.strides, True)
        out, node = make_view(input, data, Expand, lambda t: expand(t, target))
        if node is not None:
            node.self_shape = shape
        return out

    def jvp(self, tangents, output):
        return expand(tangents[0], output.shape)

    def apply(self, grad):
        return sum_to(grad, self.self_shape),


class ExpandAs(Op):
    """expand_as(input, other)."""
    op = 'expand_as'
    tensors = ('input', 'other')
    public = False  # (a method only: PyTorch has no torch.expand_as)

    def forward(input, other):
        return expand(input, other._data.shape)


class BroadcastTo(Op):
    """broadcast_to(input, size)."""
    op = 'broadcast_to'

    def forward(input, size):
        return expand(input, size)


# ---- select / slice (the pieces of basic indexing) ----------------------------------------

class Select(Op):
    """select(input, dim, index): the view of one index along ``dim``, without that dim."""
    op, node = 'select', 'SelectBackward0'
    parameter_types = {'dim': 'int', 'index': 'int'}
    saved = ('dim=given_dim:int64', 'index=given_index:int64', 'self_sym_sizes=self_shape')
    __slots__ = ('self_shape', 'dim', 'index', 'given_dim', 'given_index')

    def forward(input, dim, index):
        shape = input._data.shape
        if not shape:
            raise IndexError('select() cannot be applied to a 0-dim tensor.')
        d = dim if type(dim) is int and 0 <= dim < len(shape) else wrap_dim(dim, len(shape))  # (t[i]: no call)
        size = shape[d]
        if not -size <= index < size:
            raise IndexError(f'select(): index {index} out of range for tensor of size {list(shape)} at dimension {d}')
        i = index + size if index < 0 else index
        # The trailing ... keeps a 0-d result a view (a bare int index would copy it to a scalar;
        # of more than one dim it gives the view itself, sooner).
        if d == 0:
            data = input._data[i] if len(shape) > 1 else input._data[i, ...]
        else:
            data = input._data[(slice(None),) * d + (i, Ellipsis)]
        out, node = make_view(input, data, Select, lambda t: select(t, d, i))
        if node is not None:
            node.self_shape, node.dim, node.index, node.given_dim, node.given_index = shape, d, i, dim, index
        return out

    def apply(self, grad):
        return ops.index_put_embed(grad, self.self_shape, (slice(None),) * self.dim + (self.index,), of='select'),


class SliceBackward0(Op):
    """The slice of one dim (basic indexing's ``t[a:b:c]``, narrow, split): ``slice_dim``, a
    function of this module only (PyTorch's is ``aten::slice``, no ``torch.slice``)."""
    node = 'SliceBackward0'
    # (PyTorch's aten::slice keeps its arguments as given: no start 0, no end the largest int64)
    saved = ('dim=given_dim:int64', 'end=given_end:int64', 'self_sym_sizes=self_shape', 'start=given_start:int64',
             'step=step')
    __slots__ = ('self_shape', 'dim', 'start', 'end', 'step', 'given_dim', 'given_start', 'given_end')

    def apply(self, grad):
        index = (slice(None),) * self.dim + (slice(self.start, self.end, self.step),)
        return ops.index_put_embed(grad, self.self_shape, index, of='slice'),


def slice_dim(input, dim, start, end, step):
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    if step is not None and step <= 0:
        raise ValueError('slice step cannot be zero' if step == 0 else 'step must be greater than zero')
    s, e, st = slice(start, end, step).indices(shape[d])
    e = max(e, s)
    out, node = make_view(input, input._data[(slice(None),) * d + (slice(s, e, st),)], SliceBackward0,
                          lambda t: slice_dim(t, d, s, e, st))
    if node is not None:
        node.self_shape, node.dim, node.start, node.end, node.step = shape, d, s, e, st
        node.given_dim, node.given_start = dim, 0 if start is None else start
        node.given_end = _INT64_MAX if end is None else end
    return out


_INT64_MAX = (1 << 63) - 1


class Narrow(Op):
    """narrow(input, dim, start, length): the slice of ``length`` indices from ``start``."""
    op = 'narrow'
    refusals = Overloads('narrow', '(Tensor input, int dim, Tensor start, int length)',
                         '(Tensor input, int dim, int start, int length)')

    def forward(input, dim, start, length):
        d = wrap_dim(dim, input._data.ndim)
        size = input._data.shape[d]
        if length < 0:
            raise RuntimeError('narrow(): length must be non-negative.')
        if start < 0:
            start += size
        if not 0 <= start <= size or start + length > size:
            raise RuntimeError(f'start ({start}) + length ({length}) exceeds dimension size ({size}).')
        return slice_dim(input, dim, start, start + length, 1)  # (the dim as given: its node keeps it)


class Ravel(Op):
    """ravel(input): reshape(input, (-1,))."""
    op = 'ravel'

    def forward(input):
        try:
            return reshape(input, (-1,))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Unflatten(Op):
    """unflatten(input, dim, sizes): the dim ``dim`` as the dims ``sizes`` (a view)."""
    op = 'unflatten'
    parsed = 'function'  # (the method is Python in PyTorch: no NumPy names)

    def forward(input, dim, sizes):
        shape = input._data.shape
        d = wrap_dim(dim, len(shape))
        sizes = tuple(int(x) for x in sizes)
        n = 1
        for x in sizes:
            if x != -1:
                n *= x
        if (-1 not in sizes and n != shape[d]) or (-1 in sizes and (n == 0 or shape[d] % n)):
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                               f'({shape[d]}) in the input tensor')
        return view(input, shape[:d] + sizes + shape[d + 1:])


_MOVEDIM = Overloads('movedim', '(Tensor input, int source, int destination)',
                     '(Tensor input, tuple of ints source, tuple of ints destination)')


class Movedim(Op):
    """movedim(input, source, destination) (also moveaxis): a permute."""
    op, aliases = 'movedim', ('moveaxis',)

    def forward(input, source, destination):
        try:
            nd = input._data.ndim
            if isinstance(source, (tuple, list)) != isinstance(destination, (tuple, list)):  # (no overload mixes them)
                raise _MOVEDIM.invalid((source, destination), {}, True)
            src = (source,) if isinstance(source, int) or not isinstance(source, (tuple, list)) else tuple(source)
            dst = (destination,) if isinstance(destination, int) or not isinstance(destination, (tuple, list)) else \
                tuple(destination)
            if len(src) != len(dst):
                raise RuntimeError(f'movedim: Invalid source or destination dims: source ({list(src)} dims) should '
                                   f'contain the same number of dims as destination ({list(dst)} dims)')
            try:
                src = tuple(wrap_dim(d, nd) for d in src)
                dst = tuple(wrap_dim(d, nd) for d in dst)
            except TypeError:  # (a dim that is no int: PyTorch's listing of the overloads, in the method's words)
                _MOVEDIM.bind((source, destination), {}, method=True)
                raise
            for name, ds in (('source', src), ('destination', dst)):
                if len(set(ds)) != len(ds):
                    raise RuntimeError(f'movedim: repeated dim in `{name}` ({list(ds)})')
            order = [None] * nd
            for s_, d_ in zip(src, dst):
                order[d_] = s_
            rest = iter(d for d in range(nd) if d not in src)
            order = tuple(o if o is not None else next(rest) for o in order)
            return permute(input, order)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            if not isinstance(input, Tensor):  # (its listing; source and destination are ints, not Tensors)
                refuse_arguments(overloads=_MOVEDIM)
            raise


# ---- diagonal -----------------------------------------------------------------------------

class Diagonal(Op):
    """diagonal(input, offset=0, dim1=0, dim2=1): the view of a diagonal, as the last dim."""
    op, node = 'diagonal', 'DiagonalBackward0'
    saved = ('dim1=given_dim1:int64', 'dim2=given_dim2:int64', 'offset=offset:int64', 'self_sym_sizes=self_shape')
    __slots__ = ('self_shape', 'offset', 'dim1', 'dim2', 'given_dim1', 'given_dim2')

    def forward(input, offset=0, dim1=0, dim2=1):
        nd = input._data.ndim
        d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f'diagonal dimensions cannot be identical {dim1}, {dim2}')
        out, node = make_view(input, diagonal_array(input._data, offset, d1, d2), Diagonal,
                              lambda t: diagonal(t, offset, d1, d2))
        if node is not None:
            node.self_shape, node.offset, node.dim1, node.dim2 = input._data.shape, offset, d1, d2
            node.given_dim1, node.given_dim2 = dim1, dim2
        return out

    def apply(self, grad):
        return diagonal_embed_into(grad, self.self_shape, self.offset, self.dim1, self.dim2),


class DiagonalBackwardBackward0(Op):
    """diagonal's derivative (``diagonal_embed_into``), whose own derivative is a diagonal."""
    node = 'DiagonalBackwardBackward0'
    __slots__ = ('offset', 'dim1', 'dim2', 'shape')

    def apply(self, grad):
        return diagonal(grad, self.offset, self.dim1, self.dim2),

    def jvp(self, tangents):  # linear: the values' tangent embedded the same way
        return each_sample(lambda t: diagonal_embed_into(t, self.shape, self.offset, self.dim1, self.dim2),
                           tangents[0])


def diagonal_embed_into(values, shape, offset, d1, d2):
    """Zeros of ``shape`` with ``values`` on the given diagonal (diagonal's derivative)."""
    data = xp.zeros(shape, dtype=values._data.dtype, like=values._data)
    diagonal_array(data, offset, d1, d2)[...] = values._data
    out, node = record(data, DiagonalBackwardBackward0, (values,))
    if node is not None:
        node.offset, node.dim1, node.dim2, node.shape = offset, d1, d2, shape
    return out


# derivatives' ops recording their own nodes: forward over reverse carries tangents through them
self_recording.extend((unsafe_view, diagonal_embed_into))


# ---- unbind / split / chunk: several views at once ------------------------------------------

class Unbind(Op):
    """unbind(input, dim=0): the views of each index along ``dim``."""
    op, node = 'unbind', 'UnbindBackward0'
    parameter_types = {'dim': 'int'}
    saved = ('dim=given_dim:int64',)
    __slots__ = ('dim', 'num_outputs', 'output_meta', 'given_dim')

    def forward(input, dim=0):
        shape = input._data.shape
        if not shape:
            raise IndexError(f'Dimension specified as {dim} but tensor has no dimensions')
        d = wrap_dim(dim, len(shape))
        datas = [input._data[(slice(None),) * d + (i, Ellipsis)] for i in range(shape[d])]
        makes = [(lambda t, i=i: select(t, d, i)) for i in range(shape[d])]
        outs, node = make_views(input, datas, Unbind, makes, 'Unbind')
        if node is not None:
            node.dim, node.given_dim = d, dim
        return tuple(outs)

    def apply(self, *grads):
        return ops.stack(grads_or_zeros(self, grads), self.dim),


class Iterate(Op):
    """``for row in t``: PyTorch iterates over ``t.unbind(0)`` (so the rows are UnbindBackward0
    views, which may not be modified in place while recording)."""
    op, function = '__iter__', False

    def forward(input):
        if input._data.ndim == 0:
            raise TypeError('iteration over a 0-d tensor')
        return iter(unbind(input, 0))


def _split_views(input, d, sizes, node_cls, op_name, given_dim, split_size=None):
    datas, makes = [], []
    start = 0
    for n in sizes:
        datas.append(input._data[(slice(None),) * d + (slice(start, start + n),)])
        makes.append(lambda t, s=start, e=start + n: slice_dim(t, d, s, e, 1))
        start += n
    outs, node = make_views(input, datas, node_cls, makes, op_name)
    if node is not None:
        node.dim, node.given_dim, node.self_shape = d, given_dim, input._data.shape
        node.split_size = tuple(sizes) if split_size is None else split_size
    return tuple(outs)


_SPLIT = Overloads('split', '(Tensor input, int split_size, int dim = 0)', '(Tensor input, tuple of ints split_size, int dim = 0)')


class Split(Op):
    """split(tensor, split_size_or_sections, dim=0): views of ``split_size`` indices along
    ``dim`` (the last one shorter), or of the sizes given (split_with_sizes)."""
    op, node = 'split', 'SplitBackward0'
    parsed = False  # (Python in PyTorch: no NumPy names)
    saved = ('dim=given_dim:int64', 'self_sym_sizes=self_shape', 'split_size=split_size')
    __slots__ = ('dim', 'num_outputs', 'output_meta', 'given_dim', 'self_shape', 'split_size')

    def forward(tensor, split_size_or_sections, dim=0):
        try:
            shape = tensor._data.shape
            try:
                d = wrap_dim(dim, len(shape))
            except TypeError:  # (PyTorch's Tensor.split, Python, passes its arguments on by position)
                if isinstance(split_size_or_sections, int):
                    _SPLIT.bind((tensor, split_size_or_sections, dim), {})
                raise
            size = shape[d]
            if isinstance(split_size_or_sections, int):
                n = split_size_or_sections
                if n < 0:
                    raise RuntimeError(f'split expects split_size be non-negative, but got split_size={n}')
                if n == 0 and size != 0:
                    raise RuntimeError(f'split_size can only be 0 if dimension size is 0, but got dimension size of '
                                       f'{size}')
                # Full pieces of n, then the remainder; an empty dim still gives one (empty) piece.
                sizes = ([n] * (size // n) + ([size % n] if size % n else [])) if n else []
                sizes = sizes or [0]
                return _split_views(tensor, d, sizes, Split, 'Split', dim, n)
            return split_with_sizes(tensor, split_size_or_sections, dim)
        except (AttributeError, TypeError):  # (torch.split is Python: its error is the argument's own)
            if not isinstance(tensor, Tensor):
                return tensor.split(split_size_or_sections, dim)
            raise

    def method(self, split_size, dim=0):  # (PyTorch's Tensor.split names its parameter so)
        return Split.forward(self, split_size, dim)

    def apply(self, *grads):
        return ops.cat(grads_or_zeros(self, grads), self.dim),


class SplitWithSizes(Split):
    """split_with_sizes(input, split_sizes, dim=0)."""
    op, node = 'split_with_sizes', 'SplitWithSizesBackward0'
    method = True  # (its own forward, not split's method: x.split_with_sizes(2) is refused)
    saved = ('dim=given_dim:int64', 'self_sym_sizes=self_shape', 'split_sizes=split_size')
    __slots__ = ()

    def forward(input, split_sizes, dim=0):
        try:
            shape = input._data.shape
            d = wrap_dim(dim, len(shape))
            if not isinstance(split_sizes, (tuple, list)):  # (one int is no list of sizes here: PyTorch refuses it)
                raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not "
                                f'{backend.type_name(split_sizes)}')
            sizes = list(int_list((split_sizes,), 'split_with_sizes', 'split_sizes', 2))
            if sum(sizes) != shape[d] or any(n < 0 for n in sizes):
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {shape[d]} (input tensor's "
                                   f'size at dimension {d}), but got split_sizes={sizes}')
            return _split_views(input, d, sizes, SplitWithSizes, 'SplitWithSizes', dim)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Chunk(Op):
    """chunk(input, chunks, dim=0): a split into ``chunks`` pieces of equal size (the last
    one shorter)."""
    op = 'chunk'
    parameter_types = {'dim': 'int'}

    def forward(input, chunks, dim=0):
        if chunks <= 0:
            raise RuntimeError(f'chunk expects `chunks` to be greater than 0, got: {chunks}')
        shape = input._data.shape
        d = wrap_dim(dim, len(shape))
        size = shape[d]
        if size == 0:  # PyTorch gives `chunks` empty pieces
            return _split_views(input, d, [0] * chunks, SplitWithSizes, 'SplitWithSizes', dim)
        return split(input, -(-size // chunks), dim)


class TensorSplit(Op):
    """tensor_split(input, indices_or_sections, dim=0): slices of nearly equal sizes, or
    between the indices given."""
    op = 'tensor_split'
    parameter_types = {'dim': 'int', 'indices_or_sections': 'Tensor or tuple of ints'}
    listed = Overloads('tensor_split', '(Tensor input, tuple of ints indices, int dim = 0)',
                       '(Tensor input, Tensor tensor_indices_or_sections, int dim = 0)',
                       '(Tensor input, int sections, int dim = 0)')

    def forward(input, indices_or_sections, dim=0):
        if isinstance(indices_or_sections, Tensor):  # (PyTorch's checks: long, at most 1-D; a 0-d one is sections)
            t = indices_or_sections._data
            if t.dtype != xp.int64:
                raise RuntimeError('tensor_split expected tensor_indices_or_sections to have dtype of long, but got '
                                   f'{SCALAR_NAMES[t.dtype.name]}')
            if t.ndim > 1:
                raise RuntimeError('tensor_split expected tensor_indices_or_sections to be a zero-dimensional or '
                                   f'one-dimensional tensor, but got a tensor with {t.ndim} dims')
            indices_or_sections = int(t) if t.ndim == 0 else t.tolist()
        d = wrap_dim(dim, input._data.ndim)
        size = input._data.shape[d]
        if isinstance(indices_or_sections, int):
            n = indices_or_sections
            if n <= 0:
                raise RuntimeError(f'number of sections must be larger than 0, got {n}')
            q, r = divmod(size, n)
            bounds = [0]
            for i in range(n):
                bounds.append(bounds[-1] + q + (1 if i < r else 0))
        else:
            idx = [int(i) for i in indices_or_sections]
            bounds = [0] + idx + [size]
        return tuple(slice_dim(input, d, min(max(bounds[i], 0), size), min(max(bounds[i + 1], bounds[i], 0), size), 1)
                     for i in range(len(bounds) - 1))


def _split_along(input, sections, dim, name, min_dims):
    """hsplit/vsplit/dsplit: tensor_split along ``dim``, an int number of sections dividing it."""
    ndim = input._data.ndim
    if ndim < min_dims:
        raise RuntimeError(f'torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with '
                           f'{ndim} dimensions!')
    if isinstance(sections, int):
        size = input._data.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f'torch.{name} attempted to split along dimension {dim}, but the size of the dimension '
                               f'{size} is not divisible by the split_size {sections}!')
    return tensor_split(input, sections, dim)


# PyTorch's signatures: an argument that is no tensor is refused with the parser's listing of them
_HSPLIT, _VSPLIT, _DSPLIT = (Overloads(name, '(Tensor input, int sections)', '(Tensor input, tuple of ints indices)')
                             for name in ('hsplit', 'vsplit', 'dsplit'))


class Hsplit(Op):
    """hsplit(input, indices_or_sections): split along the columns, dimension 1 (0 for a 1-D
    tensor)."""
    op = 'hsplit'
    parameter_types = {'indices_or_sections': 'Tensor or tuple of ints'}
    listed = _HSPLIT

    def forward(input, indices_or_sections):
        try:
            return _split_along(input, indices_or_sections, 1 if input._data.ndim > 1 else 0, 'hsplit', 1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_HSPLIT)
            raise


class Vsplit(Op):
    """vsplit(input, indices_or_sections): split along the rows, dimension 0 of a tensor of at
    least 2 dimensions."""
    op = 'vsplit'
    parameter_types = {'indices_or_sections': 'Tensor or tuple of ints'}
    listed = _VSPLIT

    def forward(input, indices_or_sections):
        try:
            return _split_along(input, indices_or_sections, 0, 'vsplit', 2)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_VSPLIT)
            raise


class Dsplit(Op):
    """dsplit(input, indices_or_sections): split along the depth, dimension 2 of a tensor of at
    least 3 dimensions."""
    op = 'dsplit'
    parameter_types = {'indices_or_sections': 'Tensor or tuple of ints'}
    listed = _DSPLIT

    def forward(input, indices_or_sections):
        try:
            return _split_along(input, indices_or_sections, 2, 'dsplit', 3)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_DSPLIT)
            raise


# ---- unfold: sliding windows as a view ----------------------------------------------------------

_UNFOLD = Overloads('unfold', '(Tensor input, int dimension, int size, int step)')


class Unfold(Op):
    """unfold(input, dimension, size, step): the windows of ``size`` every ``step`` along
    ``dimension``, as a new last dim (a view). (``leafgrad.unfold`` too, though
    ``torch.unfold`` does not exist: nn.functional.unfold is im2col.)"""
    op, node = 'unfold', 'UnfoldBackward0'
    public = False  # (a method only: PyTorch has no torch.unfold)
    saved = ('dimension=given_dim:int64', 'self_sym_sizes=self_shape', 'size=size', 'step=step')
    __slots__ = ('self_shape', 'dim', 'size', 'step', 'given_dim')

    def forward(input, dimension, size, step):
        a = input._data
        shape = a.shape
        try:
            d = wrap_dim(dimension, max(len(shape), 1))
            length = shape[d] if shape else 1
            if size < 0:
                raise RuntimeError(f'size is {size} but must be >= 0')
            if size > length:
                raise RuntimeError(f'maximum size for tensor at dimension {d} is {length} but size is {size}')
            if step <= 0:
                raise RuntimeError(f'step is {step} but must be > 0')
            n = (length - size) // step + 1
            if shape:
                new_shape = shape[:d] + (n,) + shape[d + 1:] + (size,)
                strides = a.strides[:d] + (a.strides[d] * step,) + a.strides[d + 1:] + (a.strides[d],)
            else:
                new_shape, strides = (size,), (a.itemsize,)
            # Overlapping windows alias one element several times: such a view is read-only.
            data = as_strided_array(a, new_shape, strides, backend.writeable(a) and step >= size)
        except TypeError:  # (a dim, size or step that is no int: PyTorch's parser's error)
            _UNFOLD.bind((dimension, size, step), {}, method=True)
            raise
        out, node = make_view(input, data, Unfold, lambda t: unfold(t, d, size, step))
        if node is not None:
            node.self_shape, node.dim, node.size, node.step, node.given_dim = shape, d, size, step, dimension
        return out

    def apply(self, grad):
        """Each window element adds back into its source position: one index_add per offset."""
        n = grad._data.shape[self.dim] if self.self_shape else 1
        out = wrap(xp.zeros(self.self_shape, dtype=grad._data.dtype, like=grad._data))
        if not self.self_shape:
            return reshape(select(grad, -1, 0), ()),
        for k in range(self.size):
            index = wrap(xp.arange(n, dtype=xp.int64, like=grad._data) * self.step + k)
            out = ops.index_add(out, self.dim, index, select(grad, -1, k))
        return out,


# ---- broadcasting ---------------------------------------------------------------------------------

class BroadcastShapes(Op):
    """broadcast_shapes(*shapes): the shape that tensors of the given shapes (tuples or ints)
    broadcast to, as a Size."""
    op, method = 'broadcast_shapes', False

    def forward(*shapes):
        result = []
        for k, shape in enumerate(shapes):
            dims = (shape,) if isinstance(shape, int) else tuple(shape)
            for i in range(1, len(dims) + 1):
                d = dims[-i]
                if i > len(result):
                    result.insert(0, d)
                elif result[-i] == 1:
                    result[-i] = d
                elif d != 1 and d != result[-i]:
                    raise RuntimeError(f'Attempting to broadcast a dimension of length {d} at {-i}! Mismatching '
                                       f'argument at index {k} had {shape}; but expected shape should be broadcastable '
                                       f'to {result}')
        return Size(result)


class BroadcastTensors(Op):
    """broadcast_tensors(*tensors): the tensors expanded (views) to their common shape."""
    op, method = 'broadcast_tensors', False

    def forward(*tensors):
        for k, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f'expected Tensor as element {k} in argument 0, but got {type(t).__name__}')
        shape = tensors[0]._data.shape if tensors else ()
        for t in tensors[1:]:
            try:
                shape = xp.broadcast_shapes(shape, t._data.shape)
            except ValueError:
                raise broadcast_error(wrap(xp.empty(shape)), t) from None
        return tuple(expand(t, shape) for t in tensors)


# helpers that record this family's nodes but are no ops, reached by sibling families through ops:
# unsafe_view and squeeze_result_ (matmul, kron), slice_dim (indexing, slice_scatter),
# diagonal_embed_into (diag's derivative)
ops.unsafe_view, ops.squeeze_result_ = unsafe_view, squeeze_result_
ops.slice_dim, ops.diagonal_embed_into = slice_dim, diagonal_embed_into


# ---- as_strided ------------------------------------------------------------------------------------

def _storage_indices(shape, strides, offset, like):
    """The storage index of each element of a strided geometry (an int64 array of ``shape``, on
    ``like``'s device)."""
    index = xp.full(shape, offset, dtype=xp.int64, like=like)
    for d, (n, s) in enumerate(zip(shape, strides)):
        index += (xp.arange(n, dtype=xp.int64, like=like) * s).reshape((n,) + (1,) * (len(shape) - d - 1))
    return index


def _may_overlap(shape, strides):
    """Whether two elements of the geometry may share a storage element (dims by stride, each
    stride past the extent of the smaller ones: no overlap)."""
    extent = 1
    for n, s in sorted((pair for pair in zip(shape, strides) if pair[0] > 1), key=lambda pair: pair[1]):
        if s < extent:
            return True
        extent += (n - 1) * s
    return False


def _geometry(size, stride, offset, storage_size, itemsize):
    """as_strided's size, stride and storage offset (ints) checked against a storage of
    ``storage_size`` elements, as PyTorch's setStorage checks them; and the elements it needs."""
    size, stride, offset = tuple(map(operator.index, size)), tuple(map(operator.index, stride)), int(offset)
    if len(size) != len(stride):
        raise RuntimeError('mismatch in length of strides and shape')
    if any(s < 0 for s in stride):
        raise RuntimeError(f'as_strided: Negative strides are not supported at the moment, got strides: '
                           f'{list(stride)}')
    if any(n < 0 for n in size):
        raise RuntimeError(f'Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}')
    if offset < 0:
        raise RuntimeError(f'Tensor: invalid storage offset {offset}')
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage_size:
        raise RuntimeError(f'setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and '
                           f'itemsize {itemsize} requiring a storage size of {needed * itemsize} are '
                           f'out of bounds for storage of size {storage_size * itemsize}')
    return size, stride, offset, needed


class AsStrided(Op):
    """as_strided(input, size, stride, storage_offset=None): a view of input's storage with the
    given sizes, strides (in elements) and offset (input's own by default). Its derivative adds
    the gradient of each output element into the storage element it reads, then hands each of
    input's elements its storage element's gradient, shared among input's elements that read it."""
    op, node = 'as_strided', 'AsStridedBackward0'
    parameter_types = {'size': 'sizes', 'stride': 'sizes', 'storage_offset': 'int?'}
    saved = ('size=saved_size', 'storage_offset=saved_storage_offset', 'stride=saved_stride')
    __slots__ = ('self_geometry', 'geometry', 'storage_size')
    saved_size = property(lambda self: tuple(self.geometry[0]))
    saved_stride = property(lambda self: tuple(self.geometry[1]))
    saved_storage_offset = property(lambda self: self.geometry[2])

    def forward(input, size, stride, storage_offset=None):
        data = input._data
        own_offset = ops.storage_offset(input)
        owner = storage_owner(data)
        size, stride, offset, needed = _geometry(size, stride, own_offset if storage_offset is None else storage_offset,
                                                 owner.size, data.itemsize)
        flat = owner.ravel(order='K')  # (the storage in memory order: a view of an owner in any order)
        view = as_strided_array(flat[offset:] if needed else flat, size,
                                tuple(s * data.itemsize for s in stride),
                                backend.writeable(data) and not _may_overlap(size, stride))
        out, node = make_view(input, view, AsStrided, lambda t: as_strided(t, size, stride, offset))
        if node is not None:
            node.self_geometry = (data.shape, tuple(s // data.itemsize for s in data.strides), own_offset)
            node.geometry, node.storage_size = (size, stride, offset), owner.size
        return out

    def apply(self, grad):
        size, stride, offset = self.geometry
        shape, strides, own_offset = self.self_geometry
        dtype = grad._data.dtype
        storage = wrap(xp.zeros(self.storage_size, dtype=dtype, like=grad._data))
        written = wrap(_storage_indices(size, stride, offset, grad._data).reshape(-1))
        storage = ops.index_put(storage, (written,), ops.reshape(grad, (-1,)), accumulate=True)
        read = _storage_indices(shape, strides, own_offset, grad._data)
        counts = xp.bincount(read.reshape(-1), minlength=self.storage_size)
        if counts.size and counts.max() > 1:  # (input reads a storage element more than once: shared)
            storage = storage / wrap(xp.maximum(counts, 1).astype(dtype))
        return ops.take(storage, wrap(read)),


_SCATTER_ASSERT = ('!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT FAILED at '
                   '"/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp":4754, please report a bug to '
                   'PyTorch. as_strided_scatter is currently only supported for contiguous inputs')


class AsStridedScatter(Op):
    """as_strided_scatter(input, src, size, stride, storage_offset=None): a new tensor of input's
    strides and storage offset, over a copy of input's storage (a contiguous copy where input
    reads an element twice, as PyTorch's clone_preserve_strides), with ``src`` written into its
    as_strided(size, stride, storage_offset) view. Derivatives: input's gradient is the output's
    where the output reads an element not written, src's the output's gradients of the elements
    written (PyTorch's formula gives input the complement: see the README's differences)."""
    op, node = 'as_strided_scatter', 'AsStridedScatterBackward0'
    tensors = ('input', 'src')
    parameter_types = {'size': 'sizes', 'stride': 'sizes', 'storage_offset': 'int?'}
    __slots__ = ('read', 'written', 'storage_size', 'src_dtype')

    def forward(input, src, size, stride, storage_offset=None):
        data = input._data
        if input._requires_grad and not input.is_contiguous():
            raise RuntimeError(_SCATTER_ASSERT)
        item = data.itemsize
        if any(n > 1 and s == 0 for n, s in zip(data.shape, data.strides)):  # (an element read twice: a clone)
            flat = xp.array(data, order='C').reshape(-1)
            own_strides, own_offset = _memory_format.contiguous_strides(data.shape), 0
        else:
            flat = storage_owner(data).ravel(order='K').copy()  # (the storage, in memory order)
            own_strides, own_offset = tuple(s // item for s in data.strides), ops.storage_offset(input)
        size, stride, offset, _ = _geometry(size, stride, own_offset if storage_offset is None else storage_offset,
                                            flat.size, item)
        if size != src._data.shape:
            raise RuntimeError(f'expected src to have a size equal to the slice of self. src size = '
                               f'{list(src._data.shape)}, slice size = {list(size)}')
        if 0 not in size and any(n > 1 and s == 0 for n, s in zip(size, stride)):  # (copy_ into it: an element
            # written twice; nothing is, in an empty slice)
            raise RuntimeError('unsupported operation: more than one element of the written-to tensor refers to a '
                               'single memory location. Please clone() the tensor before performing the operation.')
        written = _storage_indices(size, stride, offset, data)
        flat[written] = ops.to(src, backend.from_np(data.dtype))._data if src._data.dtype != data.dtype else src._data
        out = as_strided_array(flat[own_offset:] if flat.size else flat, data.shape,
                               tuple(s * item for s in own_strides), True)
        result, node = record(out, AsStridedScatter, (input, src))
        if node is not None:
            node.read, node.written = _storage_indices(data.shape, own_strides, own_offset, data), written
            node.storage_size, node.src_dtype = flat.size, src.dtype
        return result

    def apply(self, grad):
        gi = gs = None
        read, written = self.read, self.written
        if self.next_functions[0][0] is not None:  # (an element not written: input's own)
            zero = wrap(xp.zeros((), dtype=grad._data.dtype, like=grad._data))
            gi = ops.where(wrap(xp.isin(read, written)), zero, grad)
        if self.next_functions[1][0] is not None:  # (each element written: the gradients of those reading it)
            storage = wrap(xp.zeros(self.storage_size, dtype=grad._data.dtype, like=grad._data))
            storage = ops.index_put(storage, (wrap(read.reshape(-1)),), ops.reshape(grad, (-1,)), accumulate=True)
            gs = ops.take(storage, wrap(written))
            if gs.dtype != self.src_dtype:
                gs = ops.to(gs, self.src_dtype)
        return gi, gs

