"""In-place ops: how they are recorded, and how writing through a view rewrites its base.

An in-place op ``x.op_(...)`` is recorded as the out-of-place op applied to x's old value
(a snapshot, since the derivative may need it), whose result is then written into x's
storage; x takes the new node as its ``grad_fn`` and its version counter is bumped, so that
any node that saved x's old value refuses to use it.

When x is a view, its base's history changes too: the base's new ``grad_fn`` is a
``CopySlices`` node, which routes the part of the base's gradient that falls inside the view
through the in-place op and the rest straight through; x's own ``grad_fn`` becomes a view of
the base's new history (``AsStridedBackward0``, as PyTorch names it). Every *other* view of
the base sees the new values too: it is given such a history when it is next used
(``autograd/views.py``), so that an in-place op costs the same however many views are alive.

Writing is refused where PyTorch refuses it: into an expanded (read-only, self-overlapping)
view, into one output of unbind/split/chunk while recording, and into a view made without
recording while recording.

This module is the machinery every family's in-place variants share (``inplace``,
``inplace_binary``); the in-place ops that are no other op's variant (fill_, zero_, copy_, the
samplers, unsqueeze_ ...) are the family ``inplace``.
"""
import sys as _sys
import weakref as _weakref

from .. import backend
from .._memory_format import dense as _dense
from ._util import SCALAR_NAMES, Node, as_strided_array, broadcast_error, fused_alpha, is_operand, needs_grad, not_a_tensor, ops, state, wrap, xp
from ..autograd.graph import _FREED, SavedOutput, gradient_edge
from ..autograd.views import bump as _bump, check_inplace as _check_view_inplace, fresh as _fresh, \
    apply_makes as _apply_makes, makes_of as _makes_of, regenerate as _regenerate, reroot as _reroot, \
    set_history as _rebase
from ..autograd.grad_mode import INPLACE_ERROR, InferenceCounter, check_not_inference
from ..tensor import Tensor


class CopySlices(Node):
    """The base's history after an in-place op on one of its views: the base's gradient
    passes unchanged outside the view; inside it, it goes through the in-place op's
    derivative ``fn`` (whose gradients for the op's other inputs are routed as they are).

    The view's region of the gradient is found, in a plain backward, from the view's place
    in its base's memory (``geometry``, when the base is a C-contiguous NumPy array: one
    strided view, however deep the chain of views), else by making the view again from the
    gradient with each of its view ops (``makes``; recorded, under create_graph)."""

    def __init__(self, next_functions, fn, view, base):
        super().__init__(next_functions)
        self.fn, self.makes = fn, _makes_of(view)
        self.geometry = _geometry(view._data, base._data)
        # (a view that repeats memory, fill_ of an expanded one: PyTorch's backward writes the
        # view's gradient into its region of the base's, and that copy_ refuses it; an empty view
        # repeats nothing, whatever strides NumPy gives it)
        self.overlapping = view._data.size > 0 and any(n > 1 and st == 0 for n, st in
                                                       zip(view._data.shape, view._data.strides))

    def apply(self, grad):
        if self.fn is None:
            raise RuntimeError(_FREED)
        if self.overlapping:
            raise RuntimeError(INTERNAL_OVERLAP_ERROR)
        geometry = self.geometry
        if geometry is not None and not state.grad_enabled:
            shape, strides, offset, base_shape, dtype = geometry
            if grad._data.shape == base_shape and grad._data.dtype == dtype and type(grad._data) is xp.ndarray:
                result = xp.array(grad._data, order='C')  # (a copy)
                region = as_strided_array(result.reshape(-1)[offset:], shape, strides, True)
                res = self.fn.apply(wrap(region.copy()))
                region[...] = 0 if res[0] is None else res[0]._data
                return (wrap(result),) + tuple(res[1:])
        if state.grad_enabled:  # create_graph: PyTorch's copy_ of grad into a new tensor (CopyBackwards)
            result = grad.new_empty(grad.shape)
            result.copy_(grad)
        else:
            result = grad.clone()
        region = _apply_makes(self.makes, result)
        res = self.fn.apply(region.clone())
        if res[0] is None:
            res = (wrap(xp.zeros_like(region._data)),) + tuple(res[1:])
        if state.grad_enabled:
            ops.copy_(region, res[0])  # create_graph: the write itself must be recorded
        else:
            region._data[...] = res[0]._data
        return (result,) + tuple(res[1:])

    def release(self):
        # PyTorch's drops its fn, so that a second backward through it fails even where fn kept
        # nothing (an add_ of a number)
        if self.fn is not None:
            self.fn.release()
            self.fn = None

    def name(self):
        return 'leafgrad::autograd::CopySlices'


def _geometry(view, base):
    """(shape, strides, offset in items, base shape, dtype) of array ``view`` inside array ``base``,
    when ``base`` is a C-contiguous NumPy array (its gradient, copied C-contiguous, has the
    same layout); else None."""
    if type(base) is not xp.ndarray or type(view) is not xp.ndarray or not base.flags.c_contiguous:
        return None
    offset, rest = divmod(view.__array_interface__['data'][0] - base.__array_interface__['data'][0], base.itemsize)
    if rest or view.dtype != base.dtype:
        return None
    return view.shape, view.strides, offset, base.shape, base.dtype


INTERNAL_OVERLAP_ERROR = ('unsupported operation: more than one element of the written-to tensor refers to a single '
                          'memory location. Please clone() the tensor before performing the operation.')


def _check_writable(self, overlapping=False):
    """Refuse writing into a tensor more than one of whose elements is one memory location, as
    PyTorch's assert_no_internal_overlap: a dim of size > 1 and stride 0 (an expanded one).
    NumPy marks every array derived from a broadcast read-only, also those PyTorch writes into:
    a row of an expanded tensor, an empty slice of one, and with ``overlapping`` (fill_ and
    zero_ by a number, masked_fill_, which PyTorch does not check) the expanded tensor itself;
    those get a writable view of the same memory. Returns whether ``self._data`` was replaced."""
    check_not_inference(self)
    data = self._data
    if backend.writeable(data):
        return False
    if (overlapping or data.size == 0 or not any(n > 1 and st == 0 for n, st in zip(data.shape, data.strides))) \
            and type(data) is xp.ndarray:
        owner = data
        while True:
            base = owner.base
            if type(base) is not xp.ndarray:
                base = getattr(base, 'base', None)  # (as_strided's DummyArray holds the array it views)
                if type(base) is not xp.ndarray:
                    break
            owner = base
        if backend.writeable(owner) and owner.flags.c_contiguous:
            offset = data.__array_interface__['data'][0] - owner.__array_interface__['data'][0]
            self._data = xp.ndarray(data.shape, data.dtype, owner, offset, data.strides)
            return True
    raise RuntimeError(INTERNAL_OVERLAP_ERROR)


PARTIAL_OVERLAP_ERROR = ('unsupported operation: some elements of the input tensor and the written-to tensor refer to '
                         'a single memory location. Please clone() the tensor before performing the operation.')


def refuse_partial_overlap(self, other):
    """Refuse writing ``other`` into ``self`` as a partial overlap where PyTorch's strides tell one
    that leafgrad's NumPy strides do not (indexing._setitem's value of ones), after the checks
    that come first in an in-place op (inplace's order)."""
    self._check_inplace()
    if self._base is not None and needs_grad(self, other):
        _check_view_inplace(self)
    _check_writable(self)
    raise RuntimeError(PARTIAL_OVERLAP_ERROR)


def _check_no_partial_overlap(self, others):
    """PyTorch's assert_no_partial_overlap (TensorIterator's first check): an operand that shares
    some, not all, of the memory an in-place op writes is refused; one that shares all of it with
    the same strides (x.add_(x)) is not, nor one laid out otherwise than densely (a broadcast
    view: PyTorch finds that too hard to tell and lets it through)."""
    a = self._data
    for other in others:
        if not isinstance(other, Tensor) or other is self:
            continue
        b = other._data
        if type(a) is not xp.ndarray or type(b) is not xp.ndarray or not xp.may_share_memory(a, b):
            continue  # (the common case: one bounds comparison)
        if a.size == 0 or b.size == 0 or not (_dense(a) and _dense(b)):
            continue
        a0, b0 = a.__array_interface__['data'][0], b.__array_interface__['data'][0]
        a1, b1 = a0 + a.nbytes, b0 + b.nbytes
        if (a0 == b0 and a1 == b1 and not _same_layout(a, b)) or (a0 != b0 or a1 != b1) and a0 < b1 and b0 < a1:
            raise RuntimeError(PARTIAL_OVERLAP_ERROR)


def check_no_overlap(self, other):
    """PyTorch's assert_no_overlap (index_put_'s check of its value, before the value's shape):
    a value that shares any of the memory written, all of it or some, is refused, unless either is
    laid out otherwise than densely (too hard to tell, as for ``_check_no_partial_overlap``)."""
    a, b = self._data, other._data
    if type(a) is not xp.ndarray or type(b) is not xp.ndarray or not xp.may_share_memory(a, b):
        return
    if a.size == 0 or b.size == 0 or not (_dense(a) and _dense(b)):
        return
    a0, b0 = a.__array_interface__['data'][0], b.__array_interface__['data'][0]
    if a0 < b0 + b.nbytes and b0 < a0 + a.nbytes:
        raise RuntimeError(PARTIAL_OVERLAP_ERROR)


def _same_layout(a, b):
    """PyTorch compares the two strides as they are, not the shapes: operands of other dims differ
    (x[None].add_(x) is refused), those of the same strides do (x.add_(x.t()) of a column is
    let through to its shape error: seeds 11005386, 11009889), and setitem expands its value to
    the view's shape first (x[None] = x is not refused: seed 5018909), where a dim of size 1 has
    PyTorch's stride, not always NumPy's: NumPy gives a new axis (None, expand) stride 0, so a
    dim of size 1 in either is compared only where both strides are NumPy's own, nonzero (a step
    slice's: v[::2].div_(v) of one element is refused, seed 6012568)."""
    return a.ndim == b.ndim and all(sa == sb for na, nb, sa, sb in zip(a.shape, b.shape, a.strides, b.strides)
                                    if (na != 1 and nb != 1) or (sa and sb))


def _check_result(self, result):
    if result._data.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f'{list(result._data.shape)}')
    sd, rd = backend.from_np(self._data.dtype), backend.from_np(result._data.dtype)
    if rd.category > sd.category:
        raise RuntimeError(f"result type {_type_name(rd)} can't be cast to the desired output type {_type_name(sd)}")


def _type_name(d):
    return SCALAR_NAMES[d.name]


def inplace(self, op, others=(), overlap=True, overlapping=False):
    """Run ``op`` (an out-of-place function of self) and write its result into ``self``
    (``overlap``: refuse an operand sharing part of self's memory, as TensorIterator does; fill_
    reads its value first; ``overlapping``: self may be expanded, see _check_writable)."""
    self._check_inplace()
    if not needs_grad(self, *others):
        _check_writable(self, overlapping)
        if overlap:
            _check_no_partial_overlap(self, others)
        result = op(self)
        _check_result(self, result)
        self._data[...] = result._data
        _bump(self)
        return self
    base = self._base
    if base is not None:
        _check_view_inplace(self)  # (before the memory check, as PyTorch's check_inplace)
        _fresh(self)
    _check_writable(self, overlapping)
    if overlap:
        _check_no_partial_overlap(self, others)
    snapshot = Tensor._wrap(self._data.copy(), self._requires_grad)
    snapshot._grad_fn, snapshot._output_nr = self._grad_fn, self._output_nr
    result = op(snapshot)
    _check_result(self, result)
    node = result._grad_fn
    self._data[...] = result._data
    _bump(self)
    if base is None:
        _rebase(self, node)
        _save_self(node, result, self)
        return self
    copy_slices = CopySlices((gradient_edge(base),) + node.next_functions[1:], node, self, base)
    _rebase(base, copy_slices)
    _regenerate(self)
    _save_self(node, result, self)
    return self


def _save_self(node, result, self):
    """Where the op's derivative reads its result (exp_, relu_, sigmoid_, pow_), PyTorch's
    in-place op saves ``self`` as it is after the op, not a copy: the saved output becomes
    self's memory at self's version now, so that changing self again before backward is
    refused as PyTorch refuses it (and the result's own array is freed). Of a view, the error
    names the view's history (AsStridedBackward0) while that lives, as PyTorch's weak
    reference to it does."""
    saved, versions = node._saved, node._saved_versions
    if not saved or versions is None:  # (nothing saved, or packed by saved-tensor hooks)
        return
    for i, t in enumerate(saved):
        if type(t) is SavedOutput and t.data is result._data and self._data.dtype == t.data.dtype:
            mine = SavedOutput(self)
            mine.output_nr = t.output_nr
            if self._base is not None:
                mine.view_fn = _weakref.ref(self._grad_fn)
            node._saved = saved[:i] + (mine,) + saved[i + 1:]
            node._saved_versions = versions[:i] + (self._version_counter[0],) + versions[i + 1:]
            return


def inplace_binary(self, other, ufunc, op, alpha=1, check_mixed=None):
    """``self op= other``: a single in-place ufunc call when nothing is recorded (``check_mixed``:
    as binary_operands's, where the operands are not both of self's float dtype)."""
    if state.grad_enabled:  # (under no_grad, as in an optimizer's step, nothing can be refused)
        self._check_inplace()
        if needs_grad(self, other):
            if alpha == 1:
                return inplace(self, lambda s: op(s, other), (other,))
            return inplace(self, lambda s: op(s, other, alpha=alpha), (other,))
    elif type(self._version_counter) is InferenceCounter and not state.inference:
        raise RuntimeError(INPLACE_ERROR)
    data = self._data
    y = other._data if isinstance(other, Tensor) else other
    d = data.dtype
    # (two distinct arrays that are nobody's views hold memory of their own: no overlap to look
    # for, as in an optimizer's b += p.grad; a third less time for that call)
    if type(other) is Tensor and (data.base is not None or y.base is not None or y is data) and backend.writeable(data):
        _check_no_partial_overlap(self, (other,))
    if d.kind == 'f' and alpha == 1 and (getattr(y, 'dtype', None) is d
                                         or (type(y) is float or type(y) is int) and d.char != 'e'):
        # The common case: a float tensor with a number or with its own dtype keeps its dtype,
        # nothing to check first (NumPy refuses a read-only output before writing).
        try:
            ufunc(data, y, data)
        except ValueError:
            if _check_writable(self):  # (NumPy's read-only flag on memory PyTorch writes: again, into it)
                return inplace_binary(self, other, ufunc, op, alpha, check_mixed)
            raise _broadcast_error(self, other, y) from None
    else:
        if not is_operand(other):  # (a string, a list: PyTorch's parser refuses it, NumPy would say why not)
            if _sys._getframe(1).f_code.co_name.startswith('__'):  # (x += 'a': Python's error follows)
                return NotImplemented
            raise not_a_tensor(op.__name__ + '_', 'other', other, 1)
        if check_mixed is not None:
            check_mixed(self, other)
        if _check_writable(self):
            data = self._data
        rt = backend.result_type(self, other)
        if ufunc is xp.true_divide and rt.category < 2:
            rt = backend.get_default_dtype()
        sd = backend.from_np(d)
        if rt.category > sd.category:
            raise RuntimeError(f"result type {_type_name(rt)} can't be cast to the desired output type "
                               f"{_type_name(sd)}")
        try:
            if d.kind == 'V' or d.char == 'e' and not hasattr(y, 'dtype'):
                # bfloat16, float16 with a number: the out-of-place op computes and rounds as PyTorch does
                out = op(Tensor._wrap(data), other) if alpha == 1 else op(Tensor._wrap(data), other, alpha=alpha)
                xp.copyto(data, out._data, casting='unsafe')
            else:
                if type(y) is int and d.kind in 'iu':  # (a number beyond the dtype wraps, as in PyTorch's
                    y, alpha = xp.asarray(y * alpha).astype(d)[()], 1  # out-of-place op: NumPy would refuse it;
                    # a NumPy number, which a GPU's array takes too)
                fused = None
                if alpha != 1 and (ufunc is xp.add or ufunc is xp.subtract) and type(y) is xp.ndarray:
                    wide = rt.np  # (as the out-of-place op: in the result's dtype, then cast to self's)
                    fused = fused_alpha(data.astype(wide, copy=False), y.astype(wide, copy=False), alpha,
                                        1 if ufunc is xp.add else -1)
                if fused is not None:
                    xp.copyto(data, fused, casting='unsafe')
                else:
                    ufunc(data, y * alpha if alpha != 1 else y, out=data, casting='unsafe')
        except ValueError:
            raise _broadcast_error(self, other, y) from None
    _bump(self)
    return self


def _broadcast_error(self, other, y):
    """PyTorch's error for an operand that does not broadcast to ``self``'s shape."""
    try:
        shape = xp.broadcast_shapes(self._data.shape, xp.shape(y))
    except ValueError:  # nor to any shape
        return broadcast_error(self, other)
    return RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                        f"{list(shape)}")


from . import _op  # noqa: E402  (the in-place variants that declarations make run this)
_op.inplace_runner[0] = inplace
