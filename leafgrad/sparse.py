"""Sparse COO tensors (``torch.sparse_coo_tensor``, ``Tensor.to_sparse``) and ``leafgrad.sparse``.

Design note
-----------
A sparse tensor is a ``Tensor`` whose elements are listed, not stored: ``_idx``, an int64 array
of shape (sparse_dim, nnz) giving each listed element's position in the leading sparse dims, and
``_vals``, an array of shape (nnz, *dense dims) giving its value. Positions not listed are zero;
a position listed twice holds the sum (the tensor is then *uncoalesced*; ``coalesce()`` sorts the
positions and sums the repeats, as PyTorch does). Where a dense tensor holds its array, a sparse
one holds a ``_Listed`` stand-in that knows the shape and dtype, so that Tensor's own accessors
(``shape``, ``size()``, ``dim()``, ``dtype``, ``device``, ``requires_grad_``) work unchanged, and that
raises PyTorch's NotImplementedError for the SparseCPU backend when a dense op reaches for the
elements: the ops PyTorch runs on sparse tensors are the methods below, and every other one is
refused.

Autograd: a sparse tensor takes part as any tensor does (a leaf that requires grad, or the output
of a recorded node). A gradient reaching a sparse tensor is sparse or dense as PyTorch's is:
``leafgrad.sparse.mm`` gives the sparse operand a sparse gradient on its own pattern, ``mm``,
``matmul`` and ``@`` a dense one. The derivatives here compute on arrays: no second derivative.
"""
import math
import os
import sys

import numpy as np

from . import _memory_format, backend
from ._tensor_str import sparse_repr
from .autograd.graph import Node, gradient_edge
from .autograd.grad_mode import no_grad, state
from .ops._op import warn_once
from .ops._util import SCALAR_NAMES
from .tensor import Tensor

__all__ = ['mm', 'sum', 'addmm', 'softmax', 'log_softmax']

_PACKAGE = os.path.dirname(__file__)
_wrap = Tensor._wrap


def _unsupported(name):
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        f"https://fburl.com/ptmfixes for possible resolutions. 'aten::{name}' is only available for these "
        "backends: [CPU, Meta, BackendSelect, Python, AutogradCPU].")


# PyTorch's names for the kernels some leafgrad functions reach
_ATEN = {'log_softmax': '_log_softmax', 'softmax': '_softmax', 'mean': 'mean.dim', 'getitem': 'index.Tensor'}


def _entered_op():
    """The aten name of the leafgrad function that the user's call entered: the outermost
    leafgrad frame."""
    frame, name = sys._getframe(2), 'unknown'
    while frame is not None:
        if frame.f_code.co_filename.startswith(_PACKAGE):
            name = frame.f_code.co_name
        elif name != 'unknown':
            break
        frame = frame.f_back
    return _ATEN.get(name, name)


class _Listed:
    """A sparse tensor's stand-in for a dense tensor's array (see the module's note)."""
    __slots__ = ('shape', 'dtype')

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __array__(self, *args, **kwargs):
        raise _unsupported(_entered_op())

    def __getattr__(self, name):
        raise _unsupported(_entered_op())

    def _refuse(self, *args, **kwargs):
        raise _unsupported(_entered_op())

    # (Python looks operators up on the type, past __getattr__)
    __getitem__ = __setitem__ = __iter__ = __len__ = __bool__ = __index__ = __float__ = __int__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __matmul__ = __rmatmul__ = __neg__ = __abs__ = __pow__ = __eq__ = __ne__ = __lt__ = __gt__ = _refuse
    __le__ = __ge__ = __and__ = __or__ = __xor__ = __invert__ = _refuse
    __hash__ = None


class SparseTensor(Tensor):
    """A sparse COO tensor: ``torch.sparse_coo_tensor``'s result (see the module's note)."""
    __slots__ = ()

    @classmethod
    def _make(cls, idx, vals, shape, coalesced, requires_grad=False):
        self = cls._wrap(_Listed(shape, vals.dtype), requires_grad)
        d = self.__dict__
        d['_idx'], d['_vals'], d['_coalesced'] = idx, vals, coalesced
        return self

    # ---- what it is ---------------------------------------------------------------------------
    is_sparse = property(lambda self: True)
    layout = property(lambda self: _memory_format.sparse_coo)

    def sparse_dim(self):
        return self._idx.shape[0]

    def dense_dim(self):
        return self._vals.ndim - 1

    def _nnz(self):
        return self._idx.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return _wrap(self._idx)

    def _values(self):
        return _wrap(self._vals)

    def indices(self):
        if not self._coalesced:
            raise RuntimeError('Cannot get indices on an uncoalesced tensor, please call .coalesce() first')
        return _wrap(self._idx)

    def values(self):
        if not self._coalesced:
            raise RuntimeError('Cannot get values on an uncoalesced tensor, please call .coalesce() first')
        return _recorded(_wrap(self._vals), ValuesBackward0, (self,), pattern=self)

    def __repr__(self, *, tensor_contents=None):
        fn = self._grad_fn
        return sparse_repr(self._idx, self._vals, self.shape, default_float=backend.get_default_dtype().np,
                           requires_grad=self._requires_grad and fn is None,
                           grad_fn_name=None if fn is None else fn.name())

    __str__ = __repr__

    # ---- conversions --------------------------------------------------------------------------
    def coalesce(self):
        if self._coalesced:
            return self
        idx, vals = _coalesced(self._idx, self._vals, self.shape)
        return _recorded(SparseTensor._make(idx, vals, self.shape, True), CoalesceBackward0, (self,))

    def to_dense(self, dtype=None, *, masked_grad=None):
        dense = _dense(self._idx, self._vals, self.shape)
        out = _recorded(_wrap(dense), ToDenseBackward0, (self,), input=self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        return self

    to_sparse_coo = to_sparse

    def to(self, *args, **kwargs):
        # (the dtype and device a dense tensor's to() would go to: PyTorch's parsing of its arguments)
        target = _wrap(np.empty(0, self._vals.dtype)).to(*args, **kwargs)
        if target.device.type != 'cpu':
            raise _unsupported('_to_copy')
        if target._data.dtype == self._vals.dtype:
            return self
        return self._make(self._idx, self._vals.astype(target._data.dtype), self.shape, self._coalesced)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return 'torch.sparse.' + Tensor.type(_wrap(np.empty(0, self._vals.dtype))).split('.')[-1]
        return self.to(dtype)

    def float(self, memory_format=None):
        return self.to(backend.float32)

    def double(self, memory_format=None):
        return self.to(backend.float64)

    def long(self, memory_format=None):
        return self.to(backend.int64)

    def cpu(self, memory_format=None):
        return self

    def detach(self):
        return self._make(self._idx, self._vals, self.shape, self._coalesced)

    def clone(self, *, memory_format=None):
        return _recorded(self._make(self._idx.copy(), self._vals.copy(), self.shape, self._coalesced),
                         CloneBackward0, (self,))

    def _owned_copy(self):
        return self._make(self._idx.copy(), self._vals.copy(), self.shape, self._coalesced)

    def _accumulate_(self, grad):
        """``self += grad`` in place (AccumulateGrad's update of a sparse ``.grad``)."""
        if not grad.is_sparse:
            raise RuntimeError('add(sparse, dense) is not supported. Use add(dense, sparse) instead.')
        idx, vals, coalesced = _merged(self, grad)
        self.__dict__.update(_idx=idx, _vals=vals.astype(self._vals.dtype, copy=False), _coalesced=coalesced)
        return self

    def zero_(self):
        self.__dict__.update(_idx=self._idx[:, :0], _vals=self._vals[:0], _coalesced=True)
        self._bump_version()
        return self

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def reshape(self, *shape):
        raise RuntimeError('reshape is not implemented for sparse tensors')

    # ---- arithmetic ---------------------------------------------------------------------------
    def __add__(self, other):
        if isinstance(other, SparseTensor):
            return _add(self, other)
        if isinstance(other, Tensor):
            raise RuntimeError('add(sparse, dense) is not supported. Use add(dense, sparse) instead.')
        return NotImplemented

    add = __add__

    def __radd__(self, other):  # dense + sparse: dense (Python asks this subclass first)
        if not isinstance(other, Tensor):
            return NotImplemented
        if other.shape != self.shape:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f'{list(other.shape)} while other has size {list(self.shape)} (FYI: dense-sparse '
                               'addition does not currently support broadcasting)')
        with no_grad():  # (the sum, promoted as a dense sum is; both operands get the whole gradient)
            out = other + _wrap(_dense(self._idx, self._vals, self.shape))
        return _recorded(out, AddBackward0, (other, self))

    def __sub__(self, other):
        if isinstance(other, SparseTensor):
            return _add(self, other * -1)
        return self.__add__(other)

    def __rsub__(self, other):  # dense - sparse: dense
        return (self * -1).__radd__(other)

    def __neg__(self):
        return self * -1

    def __mul__(self, other):
        if isinstance(other, (bool, int, float)):
            vals = self._vals * np.asarray(other).astype(self._vals.dtype)
            out = self._make(self._idx, vals, self.shape, self._coalesced)
            return _recorded(out, MulBackward0, (self,), other=other)
        if isinstance(other, Tensor):
            raise _unsupported('mul.Tensor')
        return NotImplemented

    __rmul__ = mul = __mul__

    def __truediv__(self, other):
        if isinstance(other, (bool, int, float)):
            return self * (1 / other)
        return NotImplemented

    div = __truediv__

    def mm(self, mat2):
        return _mm(self, mat2)

    def matmul(self, other):
        if isinstance(other, Tensor) and other.dim() == 1:  # (a matrix times a vector)
            return _mm(self, other.unsqueeze(1)).squeeze(1)
        return _mm(self, other)

    __matmul__ = smm = matmul

    def __rmatmul__(self, other):  # dense @ sparse (Python asks this subclass first)
        if not isinstance(other, Tensor):
            return NotImplemented
        if other.dim() == 1:
            return _mm(other.unsqueeze(0), self).squeeze(0)
        return _mm(other, self)

    def t(self):
        if self.dense_dim() or self.sparse_dim() > 2:
            raise RuntimeError(f't() expects a tensor with <= 2 sparse and 0 dense dimensions, but got '
                               f'{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions')
        return _recorded(_transposed(self), TBackward0, (self,)) if self.sparse_dim() == 2 else self

    def sum(self, dim=None, keepdim=False, dtype=None):
        return sum(self, dim, dtype)


# ---- the arrays ---------------------------------------------------------------------------------
def _linear(idx, shape):
    """Each listed element's position as one number (row-major over the sparse dims)."""
    return np.ravel_multi_index(tuple(idx), tuple(shape[:len(idx)])) if len(idx) else np.zeros(idx.shape[1], np.int64)


def _coalesced(idx, vals, shape):
    """Positions sorted, each once; the values of repeated positions summed."""
    lin = _linear(idx, shape)
    unique, inverse = np.unique(lin, return_inverse=True)
    summed = np.zeros((len(unique),) + vals.shape[1:], vals.dtype)
    np.add.at(summed, inverse, vals)
    new_idx = np.stack(np.unravel_index(unique, tuple(shape[:len(idx)]))) if len(idx) else idx[:, :len(unique)]
    return new_idx.astype(np.int64).reshape(len(idx), len(unique)), summed


def _dense(idx, vals, shape):
    out = np.zeros(shape, vals.dtype)
    np.add.at(out, tuple(idx), vals)
    return out


def _masked(dense, like):
    """``dense`` at the positions ``like`` (coalesced) lists: a sparse tensor of its pattern."""
    like = like.coalesce() if not like._coalesced else like
    return SparseTensor._make(like._idx, dense[tuple(like._idx)], like.shape, True)


def _merged(a, b):
    """PyTorch's sum of two sparse tensors: one pass over both lists, as if each were sorted,
    merging equal positions that meet (so the sum is coalesced when both are)."""
    dtype = np.result_type(a._vals.dtype, b._vals.dtype)
    if a._coalesced and b._coalesced:
        idx, vals = _coalesced(np.concatenate([a._idx, b._idx], 1),
                               np.concatenate([a._vals.astype(dtype), b._vals.astype(dtype)]), a.shape)
        return idx, vals, True
    ai, bi, av, bv = a._idx.T.tolist(), b._idx.T.tolist(), a._vals, b._vals
    idx, vals, i, j = [], [], 0, 0
    while i < len(ai) or j < len(bi):
        cmp = -1 if i >= len(ai) else 1 if j >= len(bi) else (ai[i] < bi[j]) - (ai[i] > bi[j])
        v = np.zeros(av.shape[1:], dtype)
        if cmp >= 0:
            idx.append(ai[i]); v = v + av[i]; i += 1  # noqa: E702
        if cmp <= 0:
            if cmp < 0:
                idx.append(bi[j])
            v = v + bv[j]; j += 1  # noqa: E702
        vals.append(v)
    idx = np.array(idx, np.int64).T.reshape(a._idx.shape[0], len(vals))
    return idx, np.array(vals, dtype).reshape((len(vals),) + av.shape[1:]), False


def _add(a, b):
    if a.shape != b.shape:
        raise RuntimeError(f'add: expected \'self\' and \'other\' to have same size, but self has size '
                           f'{list(a.shape)} while other has size {list(b.shape)} (FYI: dense-sparse addition '
                           'does not currently support broadcasting)')
    idx, vals, coalesced = _merged(a, b)
    return _recorded(SparseTensor._make(idx, vals, a.shape, coalesced), AddBackward0, (a, b))


# ---- recording ----------------------------------------------------------------------------------
def _recorded(out, node_cls, inputs, **state_):
    """``out``, made the output of a ``node_cls`` node when an input requires grad."""
    if not state.grad_enabled or not any(isinstance(t, Tensor) and t._requires_grad for t in inputs):
        return out
    node = node_cls(tuple(gradient_edge(t) if isinstance(t, Tensor) else (None, 0) for t in inputs))
    for name, value in state_.items():
        setattr(node, name, value)
    if out._vals.dtype.kind not in 'fc' if out.is_sparse else out._data.dtype.kind not in 'fc':
        raise RuntimeError('Only Tensors of floating point and complex dtype can require gradients')
    out._grad_fn, out._requires_grad = node, True
    return out


def _as_dense_array(grad):
    return _dense(grad._idx, grad._vals, grad.shape) if grad.is_sparse else grad._data


class ToDenseBackward0(Node):
    """to_dense(): the gradient at the sparse input's own positions."""
    def apply(self, grad):
        return (_masked(grad._data, self.input),)


class ToSparseBackward0(Node):
    """to_sparse(sparse_dim): the gradient, dense."""
    def apply(self, grad):
        return (_wrap(_as_dense_array(grad)),)


class ToSparseBackward1(ToSparseBackward0):
    """to_sparse()."""


class SparseCooTensorWithDimsAndTensorsBackward0(Node):
    """sparse_coo_tensor(indices, values): the gradient at each listed position, for its value."""
    def apply(self, grad):
        return (_wrap(_as_dense_array(grad)[tuple(self.idx)]),)


class ValuesBackward0(Node):
    """values(): the gradient of each listed value, at its position."""
    def apply(self, grad):
        p = self.pattern
        return (SparseTensor._make(p._idx, grad._data, p.shape, True),)


class CoalesceBackward0(Node):
    def apply(self, grad):
        return (grad,)


class CloneBackward0(CoalesceBackward0):
    pass


class TBackward0(Node):
    def apply(self, grad):
        return (_transposed(grad) if grad.is_sparse else _wrap(grad._data.T),)


class AddBackward0(Node):
    def apply(self, grad):
        return grad, grad


class MulBackward0(Node):
    def apply(self, grad):
        return (grad * self.other,)


class SumBackward0(Node):
    """sum() of a sparse tensor: the gradient, the same at every position."""
    def apply(self, grad):
        return (_wrap(np.broadcast_to(grad._data, self.shape).copy()),)


class SparseSumBackward0(Node):
    """leafgrad.sparse.sum over some sparse dims: the gradient at the input's own positions."""
    def apply(self, grad):
        shape = [1 if d in self.dims else n for d, n in enumerate(self.input.shape)]
        g = np.broadcast_to(_as_dense_array(grad).reshape(shape), self.input.shape)
        return (_masked(g, self.input),)


class MmBackward0(Node):
    """mm(a, b) with a sparse factor: dense gradients, as PyTorch's mm gives."""
    def apply(self, grad):
        return self._grads(grad, *self.next_functions)

    def _grads(self, grad, a_edge, b_edge):
        a, b, g = self.a, self.b, grad._data
        ga = _wrap(_times(g, _transposed(b))) if a_edge[0] is not None else None
        gb = _wrap(_times(_transposed(a), g)) if b_edge[0] is not None else None
        return ga, gb


class SparseAddmmBackward0(MmBackward0):
    """leafgrad.sparse.mm(sparse, dense): the sparse factor's gradient on its own positions."""
    def apply(self, grad):
        ga, gb = self._grads(grad, *self.next_functions[1:])
        return None, (None if ga is None else _masked(ga._data, self.a)), gb


def _operand(t):
    return t if t.is_sparse else t._data


def _transposed(x):
    if isinstance(x, SparseTensor):
        return SparseTensor._make(x._idx[[1, 0]], x._vals, x.shape[::-1], False)
    return x.T


def _times(x, y):
    """``x @ y`` for matrices, each an array or a sparse tensor (not both sparse), as an array."""
    if isinstance(x, SparseTensor):
        return _product(x._idx, x._vals, x.shape, y)
    if isinstance(y, SparseTensor):
        return _product(y._idx[[1, 0]], y._vals, y.shape[::-1], x.T).T
    return x @ y


def _product(idx, vals, shape, dense):
    """The (sparse idx, vals of ``shape``) @ ``dense`` product, as an array."""
    dtype = np.result_type(vals.dtype, dense.dtype)
    out = np.zeros((shape[0],) + dense.shape[1:], dtype)
    rows, cols = idx
    if not len(rows):
        return out
    if not (rows[1:] >= rows[:-1]).all():  # (in row order, each row's terms in their listed order)
        order = np.argsort(rows, kind='stable')
        rows, cols, vals = rows[order], cols[order], vals[order]
    # PyTorch's kernel adds each row's terms in order, each with a fused multiply-add (the exact
    # product added, rounded once): for float32, the float64 product is exact and so is the sum
    # rounded to float32; the j-th terms of all rows are added at once.
    exact = np.float64 if dtype == np.float32 else dtype
    terms = vals.astype(exact).reshape((-1,) + (1,) * (dense.ndim - 1)) * dense[cols].astype(exact)
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    counts = np.diff(np.append(starts, len(rows)))
    if counts.max() > 4096:  # (a very long row: one pass, np.add.at's sums)
        np.add.at(out, rows, terms.astype(dtype))
        return out
    run_rows = rows[starts]
    for j in range(counts.max()):
        live = counts > j
        r = run_rows if live.all() else run_rows[live]
        out[r] = out[r] + terms[(starts if live.all() else starts[live]) + j]
    return out


def _sparse_product(a, b):
    """``a @ b`` for two sparse matrices: sparse, coalesced. Each listed element of ``a`` meets
    the elements that ``b`` lists in the row its column names."""
    order = np.argsort(b._idx[0], kind='stable')
    rows_b, cols_b, vals_b = b._idx[0][order], b._idx[1][order], b._vals[order]
    starts = np.searchsorted(rows_b, np.arange(b.shape[0]))
    counts = np.bincount(rows_b, minlength=b.shape[0])[a._idx[1]]
    which = np.repeat(np.arange(a._nnz()), counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    j = starts[a._idx[1]][which] + within
    shape = (a.shape[0], b.shape[1])
    idx, vals = _coalesced(np.stack([a._idx[0][which], cols_b[j]]), a._vals[which] * vals_b[j], shape)
    return SparseTensor._make(idx, vals, shape, True)


def _mm(a, b, node_cls=MmBackward0):
    """``a @ b`` for matrices, one of them or both sparse (a sparse one with two sparse dims)."""
    for position, (param, t) in enumerate((('self', a), ('mat2', b)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"mm(): argument '{param}' (position {position}) must be Tensor, not {type(t).__name__}")
        if t.is_sparse and (t.sparse_dim() != 2 or t.dense_dim() != 0) or not t.is_sparse and t._data.ndim != 2:
            raise RuntimeError(f'addmm: matrices expected, got {t.dim()}D tensor')
    # (PyTorch computes dense @ sparse as (sparse.t() @ dense.t()).t(): its checks name them so)
    s, d = (a, _operand(b)) if a.is_sparse else (_transposed(b), _transposed(_operand(a)))
    d_dtype = d._vals.dtype if isinstance(d, SparseTensor) else d.dtype
    if s.shape[1] != d.shape[0]:
        raise RuntimeError(f'addmm: Argument #3 (dense): Expected dim 0 size {s.shape[1]}, got {d.shape[0]}')
    if s._vals.dtype != d_dtype:
        names = [SCALAR_NAMES[backend.from_np(x).name] for x in (s._vals.dtype, d_dtype)]
        raise RuntimeError(f'expected scalar type {names[0]} but found {names[1]}')
    if a.is_sparse and b.is_sparse:
        if state.grad_enabled and (a._requires_grad or b._requires_grad):
            raise NotImplementedError('mm of two sparse tensors that require grad: leafgrad has no derivative '
                                      'for it (make one of them dense, or detach them)')
        return _sparse_product(a, b)
    inputs = (None, a, b) if node_cls is SparseAddmmBackward0 else (a, b)
    return _recorded(_wrap(_times(_operand(a), _operand(b))), node_cls, inputs, a=_operand(a), b=_operand(b))


# ---- construction -------------------------------------------------------------------------------
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """A sparse tensor whose elements at ``indices`` (sparse_dim x nnz) are ``values`` (nnz x
    dense dims); ``size`` inferred from the largest index when not given."""
    from . import creation  # (the factory's conversion of lists, NumPy arrays and tensors)
    values_t = values if isinstance(values, Tensor) else creation.tensor(values)
    idx = (indices._data if isinstance(indices, Tensor) else np.asarray(indices)).astype(np.int64)
    vals = values_t._data if dtype is None else values_t._data.astype(dtype.np)
    if size is not None and idx.ndim and len(size) != idx.shape[0] + vals.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f'sparse_dim = {idx.shape[0]}, dense_dim = {vals.ndim - 1}')
    if idx.ndim != 2:
        raise RuntimeError(f'indices must be sparse_dim x nnz, but got: {list(idx.shape)}')
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(f'indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, '
                           f'nnz from values: {vals.shape[0]}')
    sparse_dim = idx.shape[0]
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(1)) if idx.shape[1] else (0,) * sparse_dim
        size += vals.shape[1:]
    size = tuple(int(n) for n in size)
    if check_invariants and idx.shape[1]:  # (unchecked by default, as PyTorch's)
        low, high = idx.min(1), idx.max(1)
        for d in range(sparse_dim):
            if low[d] < 0:
                raise RuntimeError(f'found negative index {low[d]} for dim {d}')
            if high[d] >= size[d]:
                raise RuntimeError(f'size is inconsistent with indices: for dim {d}, size is {size[d]} but found '
                                   f'index {high[d]}')
    out = SparseTensor._make(idx, vals, size, bool(is_coalesced) or idx.shape[1] <= 1)
    if requires_grad:
        if vals.dtype.kind not in 'fc':
            raise RuntimeError('Only Tensors of floating point and complex dtype can require gradients')
        out._requires_grad = True
        return out
    return _recorded(out, SparseCooTensorWithDimsAndTensorsBackward0, (values_t,), idx=idx)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse``: the nonzero elements of a dense tensor, listed (over its first
    ``sparse_dim`` dims, all by default)."""
    if layout not in (None, _memory_format.sparse_coo):
        raise _unsupported(f'to_sparse_{str(layout).split("_")[-1]}')
    a = self._data
    sd = a.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= a.ndim:
        raise RuntimeError(f'sparse_dim argument must be in [0,{a.ndim}] range, but {sd} is given')
    nonzero = a != 0
    if a.ndim > sd:
        nonzero = nonzero.reshape(a.shape[:sd] + (-1,)).any(-1)
    idx = np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(sd, -1) if sd else np.zeros((0, 1), np.int64)
    vals = a[tuple(idx)] if sd else a[None]
    node = ToSparseBackward1 if sparse_dim is None else ToSparseBackward0
    return _recorded(SparseTensor._make(idx, vals, a.shape, True), node, (self,))


def to_sparse_coo(self):
    return to_sparse(self)


Tensor.to_sparse = to_sparse
Tensor.to_sparse_coo = to_sparse_coo


def spmm(input, mat2):
    """``torch.spmm``: ``mm``, for a sparse or dense first factor."""
    _check_tensor('spmm', 'input', 1, input)
    return input.mm(mat2)


def _check_tensor(name, param, position, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{param}' (position {position}) must be Tensor, not {type(value).__name__}")


def embedding_gradient(grad, indices, num_weights, padding_idx):
    """``nn.Embedding(sparse=True)``'s weight gradient: each looked-up row's gradient listed at
    its index (repeats not summed), the padding index's left out."""
    idx = indices._data.reshape(-1)
    vals = grad._data.reshape(idx.shape[0], -1)
    if padding_idx is not None:
        keep = idx != padding_idx
        idx, vals = idx[keep], vals[keep]
    return SparseTensor._make(idx[None].astype(np.int64), vals, (num_weights, vals.shape[1]), idx.shape[0] <= 1)


# ---- leafgrad.sparse ----------------------------------------------------------------------------
def mm(mat1, mat2, reduce='sum'):
    """The product of a sparse matrix and a dense one, dense; the sparse factor's gradient is
    sparse, on its own positions."""
    _check_tensor('mm', 'mat1', 1, mat1)
    if not mat1.is_sparse:
        return mat1.mm(mat2)
    return _mm(mat1, mat2, SparseAddmmBackward0)


def addmm(mat, mat1, mat2, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1``."""
    return mat * beta + mm(mat1, mat2) * alpha


def sum(input, dim=None, dtype=None):
    """The sum over ``dim`` (all dims: a dense number; the sparse dims only: dense; else
    sparse over the dims left)."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        total = input._vals.sum(0)
        while total.ndim:
            total = total.sum(0)
        out = _wrap(np.asarray(total, input._vals.dtype if input._vals.dtype.kind in 'fc' else np.int64))
        return _recorded(out, SumBackward0, (input,), shape=input.shape)
    dims = sorted({d % input.dim() for d in ((dim,) if isinstance(dim, int) else dim)})
    return _dense_sum(input, dims) if any(d >= input.sparse_dim() for d in dims) or \
        len(dims) == input.sparse_dim() else _sparse_sum(input, dims)


def _sparse_sum(input, dims):
    keep = [d for d in range(input.sparse_dim()) if d not in dims]
    shape = tuple(n for d, n in enumerate(input.shape) if d not in dims)
    idx, vals = _coalesced(input._idx[keep], input._vals, shape)
    return _recorded(SparseTensor._make(idx, vals, shape, True), SparseSumBackward0, (input,), input=input, dims=dims)


def _dense_sum(input, dims):
    return input.to_dense().sum(dims)


def softmax(input, dim, *, dtype=None):
    """The softmax over ``dim`` of the listed elements only: an unlisted one counts as minus
    infinity, not zero (it stays unlisted)."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input, dim))`` over the listed elements only."""
    return _softmax(input, dim, dtype, log=True)


def _softmax(input, dim, dtype, log):
    if dtype is not None:
        input = input.to(dtype)
    s = input.coalesce()
    dim = dim % s.dim()
    group, vals = _softmax_groups(s, dim), s._vals
    axis = dim - s.sparse_dim() + 1 if dim >= s.sparse_dim() else 0
    if group is None:  # (over a dense dim: each listed element's own values)
        shifted = vals - vals.max(axis, keepdims=True)
        total = np.exp(shifted).sum(axis, keepdims=True)
    else:
        top = np.full((group.max() + 1,) + vals.shape[1:], -np.inf, vals.dtype)
        np.maximum.at(top, group, vals)
        shifted = vals - top[group]
        total = np.zeros_like(top)
        np.add.at(total, group, np.exp(shifted))
        total = total[group]
    out = shifted - np.log(total) if log else np.exp(shifted) / total
    node = SparseLogSoftmaxBackward0 if log else SparseSoftmaxBackward0
    return _recorded(SparseTensor._make(s._idx, out.astype(vals.dtype), s.shape, True), node, (input,),
                     pattern=s, result=out, group=group, axis=axis)


def _softmax_groups(s, dim):
    """Which group each listed element's softmax runs over (those alike in every sparse index
    but ``dim``'s), or None for a dense ``dim``."""
    if dim >= s.sparse_dim():
        return None
    others = [d for d in range(s.sparse_dim()) if d != dim]
    if not others:
        return np.zeros(s._nnz(), np.int64)
    return np.unique(_linear(s._idx[others], tuple(s.shape[d] for d in others)), return_inverse=True)[1].reshape(-1)


class SparseSoftmaxBackward0(Node):
    """softmax's derivative, group by group: ``y * (g - sum(g * y))``."""
    def apply(self, grad):
        g = self._listed(grad)
        y = self.result
        return (self._sparse(y * (g - self._summed(g * y))),)

    def _listed(self, grad):
        return grad._vals if grad.is_sparse and grad._coalesced and grad._idx is self.pattern._idx \
            else _as_dense_array(grad)[tuple(self.pattern._idx)]

    def _summed(self, x):
        if self.group is None:
            return x.sum(self.axis, keepdims=True)
        total = np.zeros((self.group.max() + 1,) + x.shape[1:], x.dtype)
        np.add.at(total, self.group, x)
        return total[self.group]

    def _sparse(self, vals):
        return SparseTensor._make(self.pattern._idx, vals.astype(self.pattern._vals.dtype), self.pattern.shape, True)


class SparseLogSoftmaxBackward0(SparseSoftmaxBackward0):
    """log_softmax's derivative, group by group: ``g - exp(y) * sum(g)``."""
    def apply(self, grad):
        g = self._listed(grad)
        return (self._sparse(g - np.exp(self.result) * self._summed(g)),)


class _LegacyConstructor(type):
    """The legacy ``torch.sparse.FloatTensor`` ... classes: called, they make a sparse tensor."""
    def __call__(cls, *args):
        if len(args) in (2, 3) and isinstance(args[0], Tensor):
            # (indices, values[, size]): the values' dtype, unconverted, as PyTorch's
            warn_once('torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated.  Please use '
                      'torch.sparse_coo_tensor(indices, values, shape, dtype=, device=). (Triggered internally at '
                      '/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:653.)')
            return sparse_coo_tensor(*args)
        warn_once('torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use '
                  'torch.sparse_coo_tensor(shape, dtype=, device=). (Triggered internally at '
                  '/__w/pytorch/pytorch/torch/csrc/utils/tensor_new.cpp:684.)')
        shape = tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else tuple(args)
        return SparseTensor._make(np.zeros((len(shape), 0), np.int64), np.zeros((0,), cls._dtype), shape, True)


def _legacy(name, dtype):
    return _LegacyConstructor(name, (), {'_dtype': np.dtype(dtype), '__module__': __name__,
                                         '__doc__': f'The legacy sparse {name}: sparse_coo_tensor.'})


FloatTensor, DoubleTensor, HalfTensor = _legacy('FloatTensor', 'float32'), _legacy('DoubleTensor', 'float64'), \
    _legacy('HalfTensor', 'float16')
LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (
    _legacy(n, d) for n, d in (('LongTensor', 'int64'), ('IntTensor', 'int32'), ('ShortTensor', 'int16'),
                               ('CharTensor', 'int8'), ('ByteTensor', 'uint8'), ('BoolTensor', 'bool')))
