"""The view ops' copying forms: ``view_copy``, ``permute_copy`` ... (PyTorch's functionalization
ops), ``narrow_copy``, and the unsafe splits (``unsafe_split``, ``unsafe_chunk``,
``unsafe_split_with_sizes``).

Each runs its view op as it is (``ops.view``, ``ops.split`` ...) and hands back the result as a
tensor of its own: not a view of the input (its own version counter, no base), the data copied
into a new C-ordered array (the unsafe splits keep the memory, as PyTorch's do, but are no views
either). The derivative is the view op's: the node it recorded, renamed as PyTorch names it
(``ViewBackward0_copy``, ``UnsafeSplitBackward0``, ``NarrowCopyBackward0``), an instance of a
subclass of the view's node with nothing added.
"""
from .._arg_parser import Overloads
from ._op import Op, exact_dtype, out_rule, write_out
from ._util import NotImplementedNode, ops, record, state, wrap, wrap_dim, xp
from ..tensor import Tensor

_RENAMED = {}  # (view node class, PyTorch's name) -> the subclass of that name


def _renamed_node(cls, name):
    sub = _RENAMED.get((cls, name))
    if sub is None:
        sub = _RENAMED[cls, name] = type(name, (cls,), {'__slots__': (), '__module__': __name__})
    return sub


def copied(result, name=None, copy=True):
    """``result`` (a view, or a tuple of views, of one op) as tensors of their own: each array
    copied (``copy``) or not, each history the view's node, renamed ``name`` (default: its own
    name and ``_copy``)."""
    views = result if isinstance(result, tuple) else (result,)
    outs = []
    for v in views:
        out = wrap(xp.array(v._data, order='C', copy=True) if copy else v._data)
        node = v._grad_fn
        if node is not None:
            out._grad_fn, out._requires_grad, out._output_nr = node, True, v._output_nr
        outs.append(out)
    node = views[0]._grad_fn if views else None
    if node is not None:
        node.__class__ = _renamed_node(type(node), name or type(node).__name__ + '_copy')
    return tuple(outs) if isinstance(result, tuple) else outs[0]


def _many_out(name):
    """out= of a copy op with several results: as many tensors, each written."""
    def rule(_op, out, result, _differentiable=True):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            n = len(out) if isinstance(out, (tuple, list)) else 1
            raise RuntimeError(f'{name}_Tensor_out() expected an out= argument of size {len(result)}, got size {n}')
        for o, r in zip(out, result):
            write_out(name, o, r, exact_dtype)
    return rule


class ViewCopy(Op):
    """view_copy(input, size, *, out=None): ``input.view(size)`` (or ``input.view(dtype)``) as a
    tensor of its own."""
    op, method, out = 'view_copy', False, out_rule('view_copy')

    def forward(input, size):
        return copied(ops.view(input, size))


class PermuteCopy(Op):
    """permute_copy(input, dims, *, out=None): ``permute`` as a tensor of its own."""
    op, method, out = 'permute_copy', False, out_rule('permute_copy')

    def forward(input, dims):
        return copied(ops.permute(input, dims))


class TransposeCopy(Op):
    """transpose_copy(input, dim0, dim1, *, out=None): ``transpose`` as a tensor of its own."""
    op, method, out = 'transpose_copy', False, out_rule('transpose_copy')

    def forward(input, dim0, dim1):
        return copied(ops.transpose(input, dim0, dim1))


class TCopy(Op):
    """t_copy(input, *, out=None): ``t`` as a tensor of its own."""
    op, method, out = 't_copy', False, out_rule('t_copy')
    tensors = ('input',)  # (refused first, in this op's name)

    def forward(input):
        return copied(ops.t(input))


class SqueezeCopy(Op):
    """squeeze_copy(input, dim=None, *, out=None): ``squeeze`` as a tensor of its own."""
    op, method, out = 'squeeze_copy', False, out_rule('squeeze_copy')
    parameter_types = {'dim': 'tuple of ints'}  # (no None, as squeeze's)
    listed = Overloads('squeeze_copy', '(Tensor input, *, Tensor out = None)',
                       '(Tensor input, int dim, *, Tensor out = None)',
                       '(Tensor input, tuple of ints dim, *, Tensor out = None)')

    def forward(input, dim=None):
        return copied(ops.squeeze(input) if dim is None else ops.squeeze(input, dim))


class UnsqueezeCopy(Op):
    """unsqueeze_copy(input, dim, *, out=None): ``unsqueeze`` as a tensor of its own."""
    op, method, out = 'unsqueeze_copy', False, out_rule('unsqueeze_copy')

    def forward(input, dim):
        return copied(ops.unsqueeze(input, dim))


class ExpandCopy(Op):
    """expand_copy(input, size, *, implicit=False, out=None): ``expand`` as a tensor of its
    own, its expanded dims written out."""
    op, method, out = 'expand_copy', False, out_rule('expand_copy')

    def forward(input, size, *, implicit=False):
        return copied(ops.expand(input, size))


class DiagonalCopy(Op):
    """diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None): ``diagonal`` as a tensor of
    its own."""
    op, method, out = 'diagonal_copy', False, out_rule('diagonal_copy')

    def forward(input, offset=0, dim1=0, dim2=1):
        return copied(ops.diagonal(input, offset, dim1, dim2))


class SelectCopy(Op):
    """select_copy(input, dim, index, *, out=None): ``select`` as a tensor of its own."""
    op, method, out = 'select_copy', False, out_rule('select_copy')

    def forward(input, dim, index):
        return copied(ops.select(input, dim, index))


class SliceCopy(Op):
    """slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None): ``input[start:end:step]``
    along ``dim`` as a tensor of its own."""
    op, method, out = 'slice_copy', False, out_rule('slice_copy')

    def forward(input, dim=0, start=None, end=None, step=1):
        if step <= 0:
            raise RuntimeError('slice step must be positive')
        return copied(ops.slice_dim(input, dim, start, end, step))


class SplitCopy(Op):
    """split_copy(input, split_size, dim=0, *, out=None): ``split`` as tensors of their own."""
    op, method, out = 'split_copy', False, _many_out('split_copy')
    tensors = ('input',)  # (refused first, in this op's name)
    parameter_types = {'split_size': 'int', 'dim': 'int'}

    def forward(input, split_size, dim=0):
        return copied(ops.split(input, split_size, dim))


class SplitWithSizesCopy(Op):
    """split_with_sizes_copy(input, split_sizes, dim=0, *, out=None): ``split_with_sizes`` as
    tensors of their own."""
    op, method, out = 'split_with_sizes_copy', False, _many_out('split_with_sizes_copy')
    tensors = ('input',)  # (refused first, in this op's name)

    def forward(input, split_sizes, dim=0):
        return copied(ops.split_with_sizes(input, split_sizes, dim))


class UnbindCopy(Op):
    """unbind_copy(input, dim=0, *, out=None): ``unbind`` as tensors of their own."""
    op, method, out = 'unbind_copy', False, _many_out('unbind_copy')

    def forward(input, dim=0):
        return copied(ops.unbind(input, dim))


class UnfoldCopy(Op):
    """unfold_copy(input, dimension, size, step, *, out=None): ``Tensor.unfold`` as a tensor of
    its own."""
    op, method, out = 'unfold_copy', False, out_rule('unfold_copy')

    def forward(input, dimension, size, step):
        return copied(ops.unfold(input, dimension, size, step))


class AliasCopy(Op):
    """alias_copy(input, *, out=None): the same values, a tensor of its own."""
    op, method, out = 'alias_copy', False, out_rule('alias_copy')

    def forward(input):
        return copied(ops.alias(input))


class DetachCopy(Op):
    """detach_copy(input, *, out=None): the values, copied. As in PyTorch, the result of an input
    that requires grad requires grad too, and has no derivative."""
    op, method, out = 'detach_copy', False, out_rule('detach_copy')

    def forward(input):
        out, node = record(xp.array(input._data, order='C', copy=True), NotImplementedNode, (input,))
        if node is not None:
            node.op_name = 'detach_copy'
        return out


class AsStridedCopy(Op):
    """as_strided_copy(input, size, stride, storage_offset=None, *, out=None): ``as_strided`` as
    a tensor of its own."""
    op, method, out = 'as_strided_copy', False, out_rule('as_strided_copy')

    def forward(input, size, stride, storage_offset=None):
        return copied(ops.as_strided(input, size, stride, storage_offset))


class ViewAsRealCopy(Op):
    """view_as_real_copy(input, *, out=None): ``view_as_real`` as a tensor of its own."""
    op, method, out = 'view_as_real_copy', False, out_rule('view_as_real_copy')

    def forward(input):
        return copied(ops.view_as_real(input))


class ViewAsComplexCopy(Op):
    """view_as_complex_copy(input, *, out=None): ``view_as_complex`` as a tensor of its own; as
    in PyTorch, not for an input that requires grad."""
    op, method, out = 'view_as_complex_copy', False, out_rule('view_as_complex_copy')

    def forward(input):
        if isinstance(input, Tensor) and input.requires_grad and state.grad_enabled:
            raise RuntimeError('view_as_complex_copy does not support automatic differentiation for outputs with '
                               'complex dtype.')
        return copied(ops.view_as_complex(input))


class NarrowCopy(Op):
    """narrow_copy(input, dim, start, length, *, out=None): ``narrow`` as a tensor of its own."""
    op, out = 'narrow_copy', out_rule('narrow_copy')

    def forward(input, dim, start, length):
        shape = input._data.shape
        if not shape:
            raise RuntimeError('narrow() cannot be applied to a 0-dim tensor.')
        if isinstance(dim, int) and dim >= len(shape):  # (its own kernel's check, before the dim is wrapped)
            raise RuntimeError('Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  '
                               '(Could this error message be improved?  If so, please report an enhancement '
                               'request to PyTorch.)')
        size = shape[wrap_dim(dim, len(shape))]
        if isinstance(start, int) and isinstance(length, int):
            if not -size <= start <= size:
                raise IndexError(f'start out of range (expected to be in range of [{-size}, {size}], but got {start})')
            start = start + size if start < 0 else start
            if length < 0 or start + length > size:
                raise RuntimeError(f'start ({start}) + length ({length}) exceeds dimension size ({size}).')
        return copied(ops.narrow(input, dim, start, length), 'NarrowCopyBackward0')


class UnsafeSplit(Op):
    """unsafe_split(input, split_size, dim=0): ``split`` into pieces of ``split_size``, no views
    of the input (they share its memory; an in-place change of one is no error, and autograd does
    not see it in the input)."""
    op = 'unsafe_split'
    tensors = ('input',)  # (refused first, in this op's name)
    parameter_types = {'split_size': 'int', 'dim': 'int'}

    def forward(input, split_size, dim=0):
        return copied(ops.split(input, split_size, dim), 'UnsafeSplitBackward0', False)


class UnsafeSplitWithSizes(Op):
    """unsafe_split_with_sizes(input, split_sizes, dim=0): ``split_with_sizes``, its pieces no
    views of the input."""
    op = 'unsafe_split_with_sizes'
    tensors = ('input',)  # (refused first, in this op's name)

    def forward(input, split_sizes, dim=0):
        return copied(ops.split_with_sizes(input, split_sizes, dim), 'UnsafeSplitWithSizesBackward0', False)


class UnsafeChunk(Op):
    """unsafe_chunk(input, chunks, dim=0): ``chunk``, its pieces no views of the input."""
    op = 'unsafe_chunk'

    def forward(input, chunks, dim=0):
        return copied(ops.chunk(input, chunks, dim), 'UnsafeSplitBackward0', False)
