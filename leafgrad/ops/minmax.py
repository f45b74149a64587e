"""Selecting reductions: max, min, amax, amin, aminmax, argmax, argmin, median, nanmedian,
kthvalue, mode, sort, argsort, msort, topk, cummax, cummin and unique, each declared once
(``_op.Op``), every function with PyTorch's out= (where PyTorch's has one) and no method with it.

Two gradient rules, as PyTorch:
- a reduction over all elements (``x.max()``, ``amax``, ``median()``) splits the gradient
  evenly among the elements equal to the result (ties share it);
- a reduction along a dim that returns indices (``x.max(1)``, ``median(x, 1)``) sends the whole
  gradient to the chosen index (the first one, for ties).
"""
import builtins
import math

from .. import return_types
from .._arg_parser import Overloads
from ..autograd.graph import on_samples, slice_reduction_jvp
from ._op import CAST, Op, check_out, exact_dtype, out_rule, same_dtype, write_out, write_outs
from ._util import (SCALAR_NAMES, accumulate, c_order, laid_out_like, not_a_tensor, ops, record, record_many, refused,
                    saved_output, wrap, wrap_dim, wrap_dims, xp)
from ..tensor import Tensor


# ---- moving gradients to the chosen indices ----------------------------------------------------

def _embed(src, index, dim, shape, unique=True):
    """zeros(shape) with ``src`` written at ``index`` (an array) along ``dim``, as PyTorch's
    derivatives of the selecting ops do it: scatter (ScatterBackward0), or scatter_add where an
    index may repeat within a slice (``unique=False``: cummax, cummin)."""
    zeros = wrap(xp.zeros(shape, dtype=src._data.dtype, like=src._data))
    if unique:
        return ops.scatter(zeros, dim, wrap(index), src)
    return ops.scatter_add(zeros, dim, wrap(index), src)


class _SelectAlongDim(Op):
    """values, indices = op(x, dim): the values' gradient goes to the chosen indices."""
    saved_state = ('index',)
    saved = ('dim=given_dim:int64', 'indices=saved_indices', 'keepdim=keepdim', 'self_sym_sizes=shape')
    # no __slots__: record_many sets num_outputs and output_meta on multi-output nodes

    @property
    def saved_indices(self):  # (the indices output, as PyTorch's node keeps it)
        index = self.index
        return wrap(index if self.keepdim or not self.shape else xp.squeeze(index, self.dim))

    def jvp(self, tangents, output):
        if not self.shape:
            return tangents[0]
        return slice_reduction_jvp(self, tangents, output, (self.dim,), self.keepdim)

    def apply(self, grad, grad_indices=None):
        if not self.shape:  # a 0-d input is its own max
            return grad,
        if not self.keepdim:
            grad = ops.unsqueeze(grad, self.dim)
        return _embed(grad, self.index, self.dim, self.shape),


class MaxBackward0(_SelectAlongDim):
    """max along a dim."""
    node = 'MaxBackward0'


class MinBackward0(_SelectAlongDim):
    """min along a dim."""
    node = 'MinBackward0'


def _select_along_dim(input, dim, keepdim, name, pick, node_cls, return_type):
    data = input._data
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        values, idx = data.copy(), xp.zeros_like(data, dtype=xp.int64)  # (on data's device)
    else:
        if data.shape[d] == 0:
            raise IndexError(f'{name}(): Expected reduction dim {d} to have non-zero size.')
        idx = xp.expand_dims(pick(data, d), d).astype(xp.int64)
        values = xp.take_along_axis(data, idx, axis=d)
        if not keepdim:
            values, idx = xp.squeeze(values, d), xp.squeeze(idx, d)
        values, idx = c_order(values), c_order(idx)
    (out, indices), node = record_many([values, idx], node_cls, (input,), differentiable=(True, False))
    if node is not None:
        node.dim, node.keepdim, node.shape, node.given_dim = d, keepdim, data.shape, dim
        node.index = idx if keepdim or data.ndim == 0 else xp.expand_dims(idx, d)
    return return_type(out, indices)


def _argmax_nan_first(data, d):
    # NumPy's argmax already returns the first NaN (NaN is the max, as in PyTorch)
    return xp.argmax(data, axis=d)


def _argmin_nan_first(data, d):
    return xp.argmin(data, axis=d)


# ---- full reductions: the gradient split among ties ------------------------------------------

class _EvenlyDistribute(Op):
    """A reduction over all elements: the gradient split evenly among the elements equal to the
    result (the input and the result saved, as PyTorch's grad_fn._saved_self/_saved_result)."""
    saved = ('self', 'result')
    __slots__ = ()

    def jvp(self, tangents, output):
        return slice_reduction_jvp(self, tangents, output, tuple(range(len(tangents[0].shape))), False)

    def apply(self, grad):
        x, result = self.saved_tensors
        r = result._data
        mask = xp.isnan(x._data) if xp.isnan(r) else x._data == r
        share = wrap((mask / builtins.max(int(mask.sum()), 1)).astype(x._data.dtype))
        return grad * share,


def _refuse_complex(data, name):
    if data.dtype.kind == 'c':
        raise refused(name, data)


def _full(input, name, np_fn, node_cls):
    data = input._data
    _refuse_complex(data, f'{name}_all')
    if data.size == 0:
        raise RuntimeError(f'{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify '
                           "the reduction dim with the 'dim' argument.")
    result, node = record(xp.asarray(np_fn(data)), node_cls, (input,))
    if node is not None:
        node.save(input, saved_output(result))
    return result


def _can_cast(rd, od):
    if rd.category > od.category:
        raise RuntimeError('Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) '
                           'to be true, but got false.  (Could this error message be improved?  If so, please report '
                           'an enhancement request to PyTorch.)')


def _max_min_out(name, out, result):
    """out= of max/min: along a dim, (values, indices) of exactly the result's dtypes; of all
    elements, any dtype the value casts to; of two tensors (maximum, minimum), CAST."""
    if isinstance(result, tuple):
        return write_outs(name, out, result, exact_dtype, (True, False))
    return write_out(name, out, result, _can_cast)


def _extremum(name, node_name, word, of_two, reduce, pick, along_dim, named):
    """The declaration of max or min, one definition for the two ops: of all elements
    ``node_name`` (MaxBackward1), along a dim ``along_dim`` (MaxBackward0), of two tensors the op
    ``of_two`` (maximum)."""
    class Extremum(_EvenlyDistribute):
        __doc__ = f'{name} of all elements ({node_name}); along a dim, {along_dim.__name__}; of two tensors, {of_two}.'
        op, node = name, node_name
        __slots__ = ()
        # (dim: another tensor, max(a, b), or a dim; None given is refused, as by PyTorch's parser)
        parameter_types = {'dim': 'Tensor or int'}
        listed = Overloads(name, '(Tensor input, *, Tensor out = None)', '(Tensor input, Tensor other, *, Tensor out = None)',
                           '(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)')

        def forward(input, dim=None, keepdim=False):
            if isinstance(dim, Tensor):  # max(a, b) is maximum
                return getattr(ops, of_two)(input, dim)
            if dim is None:
                return _full(input, name, reduce, Extremum)
            _refuse_complex(input._data, name)
            return _select_along_dim(input, dim, keepdim, name, pick, along_dim, named)
        forward.__doc__ = f'Tensor.{name}(dim=None, keepdim=False): the function without out=.'

        def function(input, dim=None, keepdim=False, *, out=None):
            result = Extremum.forward(input, dim, keepdim)
            if out is None:
                return result
            if isinstance(dim, Tensor):
                return CAST(of_two, out, result)
            return _max_min_out(name, out, result)
        function.__doc__ = (
            f'{name}(input, dim=None, keepdim=False, *, out=None) -> Tensor or (Tensor values, Tensor indices)\n\n'
            f'The {word} element; along ``dim``, the {word} of each slice and its index (the first one, for\n'
            f'ties; NaN is the {word}); ``{name}(input, other)`` is ``{of_two}``.')
    return Extremum


Max = _extremum('max', 'MaxBackward1', 'largest', 'maximum', xp.max, _argmax_nan_first, MaxBackward0, return_types.max)
Min = _extremum('min', 'MinBackward1', 'smallest', 'minimum', xp.min, _argmin_nan_first, MinBackward0,
                return_types.min)


# ---- amax, amin, aminmax -------------------------------------------------------------------

def _split_among_ties(grad, x, result, dims, keepdim):
    r = result._data if keepdim else xp.expand_dims(result._data, dims)
    if not keepdim:
        for d in sorted(dims):
            grad = ops.unsqueeze(grad, d)
    mask = x._data == r
    share = mask / mask.sum(axis=dims, keepdims=True)
    return grad * wrap(share.astype(x._data.dtype))


def _amax_dims(input, dim, name):
    data = input._data
    if dim is not None and not isinstance(dim, (tuple, list)):  # (an int, a NumPy int or a 0-dim int tensor:
        dim = (int(dim),)                                         # the parser checked it; no tensor is falsy)
    if not dim and data.size == 0:  # (all dims, none given)
        raise RuntimeError(f'{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the '
                           "reduction dim with the 'dim' argument.")
    dims = wrap_dims(dim, data.ndim) if dim else tuple(range(data.ndim))
    for d, given in zip(dims, dim if dim else dims):
        if data.ndim and data.shape[d] == 0:  # (PyTorch names the dim as given; aminmax, itself unbracketed)
            raise IndexError(f'{name if name == "aminmax" else name + "()"}: Expected reduction dim {given} to have '
                             'non-zero size.')
    if data.size == 0 and not data.ndim:
        raise IndexError(f'{name}(): Expected reduction dim to be specified for input.numel() == 0.')
    return dims


def _amax_like(input, dim, keepdim, name, np_fn, node_cls):
    _refuse_complex(input._data, f'{name[1:]}_values_cpu')
    dims = _amax_dims(input, dim, name)
    result, node = record(c_order(xp.asarray(np_fn(input._data, axis=dims, keepdims=keepdim))), node_cls, (input,))
    if node is not None:
        node.dims, node.keepdim = dims, keepdim
        node.given_dims = None if dim is None else tuple(dim) if isinstance(dim, (tuple, list)) else (int(dim),)
        node.save(input, saved_output(result))
    return result


# out= of amax/amin: PyTorch's message for an out of another dtype
_AMAX_OUT = same_dtype("Expected the dtype for input and out to match, but got {result} for input's dtype and {out} "
                       "for out's dtype.")


class Amax(Op):
    """The gradient split evenly among the elements equal to the result, per reduced slice."""
    op, node, saved = 'amax', 'AmaxBackward0', ('self', 'result', 'dim=given_dims:int64', 'keepdim=keepdim')
    out = out_rule('amax', _AMAX_OUT)
    parameter_types = {'dim': 'tuple of ints?'}  # (amin's too)
    __slots__ = ('dims', 'keepdim', 'given_dims')

    def forward(input, dim=(), keepdim=False):
        """amax(input, dim=(), keepdim=False, *, out=None) -> Tensor

        The largest value of each slice along ``dim`` (all dims when empty); NaN propagates."""
        return _amax_like(input, dim, keepdim, 'amax', xp.max, Amax)

    def jvp(self, tangents, output):
        return slice_reduction_jvp(self, tangents, output, self.dims, self.keepdim)

    def apply(self, grad):
        x, result = self.saved_tensors
        return _split_among_ties(grad, x, result, self.dims, self.keepdim),


class Amin(Amax):
    """As amax's."""
    op, node = 'amin', 'AminBackward0'
    out = out_rule('amin', _AMAX_OUT)
    __slots__ = ()

    def forward(input, dim=(), keepdim=False):
        """amin(input, dim=(), keepdim=False, *, out=None) -> Tensor

        The smallest value of each slice along ``dim`` (all dims when empty); NaN propagates."""
        return _amax_like(input, dim, keepdim, 'amin', xp.min, Amin)


class Aminmax(Op):
    """Each result's gradient split among its ties, the two summed."""
    op, node, saved = 'aminmax', 'AminmaxBackward0', ('self', 'min', 'max', 'dim=given_dim:int64', 'keepdim=keepdim')
    out = out_rule('aminmax')
    parameter_types = {'dim': 'int?'}
    # no __slots__: a multi-output node (see _SelectAlongDim)

    def forward(input, *, dim=None, keepdim=False):
        """aminmax(input, *, dim=None, keepdim=False, out=None) -> (Tensor min, Tensor max)

        amin and amax in one pass, over ``dim`` (all elements when None)."""
        dims = _amax_dims(input, dim, 'aminmax') if dim is not None else tuple(range(input._data.ndim))
        if dim is None and input._data.size == 0:
            raise RuntimeError('aminmax(): cannot compute aminmax over an empty dimension as the operation has '
                               'no identity.')
        data = input._data
        lo = c_order(xp.asarray(data.min(axis=dims, keepdims=keepdim)))
        hi = c_order(xp.asarray(data.max(axis=dims, keepdims=keepdim)))
        (out_lo, out_hi), node = record_many([lo, hi], Aminmax, (input,))
        if node is not None:
            node.dims, node.keepdim, node.given_dim = dims, keepdim, dim
            node.save(input, saved_output(out_lo), saved_output(out_hi))
        return return_types.aminmax(out_lo, out_hi)

    def apply(self, grad_min, grad_max):
        x, lo, hi = self.saved_tensors
        total = None
        for g, r in ((grad_min, lo), (grad_max, hi)):
            if g is not None:
                part = _split_among_ties(g, x, r, self.dims, self.keepdim)
                total = part if total is None else total + part
        return total,


# ---- argmax, argmin ------------------------------------------------------------------------

def _arg(input, dim, keepdim, name, np_fn):
    data = input._data
    if data.dtype.kind in 'bc':
        _refuse_complex(data, name)
        raise RuntimeError(f'{name}(): does not support bool input')
    if dim is None:
        if data.size == 0:
            raise IndexError(f'{name}(): Expected reduction dim to be specified for input.numel() == 0.')
        out = xp.asarray(np_fn(data.reshape(-1)), dtype=xp.int64)
        return wrap(out.reshape((1,) * data.ndim) if keepdim else out)
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        return wrap(xp.zeros_like(data, dtype=xp.int64))
    if data.shape[d] == 0:
        raise IndexError(f'{name}(): Expected reduction dim {d} to have non-zero size.')
    out = np_fn(data, axis=d).astype(xp.int64)
    return wrap(xp.expand_dims(out, d) if keepdim else out)


class Argmax(Op):
    """Not differentiable (an int64 result)."""
    op, out = 'argmax', out_rule('argmax', differentiable=False)
    parameter_types = {'dim': 'int?'}
    __slots__ = ()

    def forward(input, dim=None, keepdim=False):
        """argmax(input, dim=None, keepdim=False, *, out=None) -> Tensor

        The index of the largest element (of the flattened input when ``dim`` is None); the first
        one for ties."""
        return _arg(input, dim, keepdim, 'argmax', xp.argmax)


class Argmin(Op):
    """Not differentiable (an int64 result)."""
    op, out = 'argmin', out_rule('argmin', differentiable=False)
    parameter_types = {'dim': 'int?'}
    __slots__ = ()

    def forward(input, dim=None, keepdim=False):
        """argmin(input, dim=None, keepdim=False, *, out=None) -> Tensor

        The index of the smallest element (of the flattened input when ``dim`` is None); the
        first one for ties."""
        return _arg(input, dim, keepdim, 'argmin', xp.argmin)


# ---- median, nanmedian ------------------------------------------------------------------------------

def _lower_median_index(data, d):
    """The index of the lower median along ``d`` (PyTorch's median of an even count); a slice
    holding NaN picks its first NaN."""
    n = data.shape[d]
    order = xp.argsort(data, axis=d, kind='stable')  # NaN sorts last
    idx = xp.take(order, (n - 1) // 2, axis=d)
    has_nan = xp.isnan(data).any(axis=d) if data.dtype.kind in 'fV' else None
    if has_nan is not None and has_nan.any():
        idx = xp.where(has_nan, xp.argmax(xp.isnan(data), axis=d), idx)
    return idx


def median_values_out(rd, od):
    """out= of median/nanmedian along a dim: the values of the input's dtype, PyTorch's message."""
    if od != rd:
        raise RuntimeError(f"Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but "
                           f'type leafgrad.{SCALAR_NAMES[od.name]}Tensor does not equal '
                           f'leafgrad.{SCALAR_NAMES[rd.name]}Tensor (while checking arguments for median)')


def median_indices_out(rd, od):
    """out= of median/nanmedian along a dim: int64 indices, PyTorch's message."""
    if od.name != 'int64':
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                           f'leafgrad.{SCALAR_NAMES[od.name]}Tensor instead (while checking arguments for median)')


def dim_function(forward, name, check):
    """The function of median/nanmedian: out= only along a dim (PyTorch's overload of all
    elements takes none: Python's TypeError for the missing dim), (values, indices) by ``check``."""
    def function(input, dim=None, keepdim=False, *, out=None):
        if out is None:
            return forward(input, dim, keepdim)
        if dim is None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        return write_outs(name, out, forward(input, dim, keepdim), check, (True, False))
    function.__doc__ = forward.__doc__
    return function


class MedianBackward1(_SelectAlongDim):
    """median along a dim."""
    node = 'MedianBackward1'


def _median(input, dim, keepdim, name, lower_index, whole, along_dim):
    """median's and nanmedian's forward: of all elements (the ``whole`` node, NaN of none), or
    along ``dim`` with the index ``lower_index`` picks (the ``along_dim`` node)."""
    data = input._data
    if data.dtype.kind == 'b':
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
    if dim is None:
        if data.size == 0:
            result, node = record(xp.asarray(xp.nan, dtype=data.dtype), whole, (input,))
            if node is not None:  # (its backward reads them as for any input: an empty gradient)
                node.save(input, saved_output(result))
            return result
        flat = data.reshape(-1)
        return _full(input, name, lambda a: flat[lower_index(flat, 0)], whole)
    # (nanmedian's errors are median's: one kernel in PyTorch)
    return _select_along_dim(input, dim, keepdim, 'median', lower_index, along_dim, getattr(return_types, name))


class Median(_EvenlyDistribute):
    """median of all elements (MedianBackward0): the gradient split among the ties; along a dim
    (MedianBackward1): to the index chosen."""
    op, node = 'median', 'MedianBackward0'
    parameter_types = {'dim': 'int'}  # (None given is refused; not given: every element)
    __slots__ = ()

    def forward(input, dim=None, keepdim=False):
        """median(input, dim=None, keepdim=False, *, out=None) -> Tensor or (Tensor values, Tensor indices)

        The lower median (of all elements, or along ``dim`` with its index); NaN where a slice
        holds NaN. out= only along a dim, as PyTorch's."""
        return _median(input, dim, keepdim, 'median', _lower_median_index, Median, MedianBackward1)

    function = dim_function(forward, 'median', (median_values_out, median_indices_out))


class NanmedianBackward1(_SelectAlongDim):
    """nanmedian along a dim."""
    node = 'NanmedianBackward1'


def _lower_nanmedian_index(data, d):
    """The lower median's index among the non-NaN values along ``d`` (a slice of NaN only: its
    first NaN)."""
    order = xp.argsort(data, axis=d, kind='stable')            # NaN sorts last
    count = xp.sum(~xp.isnan(data), axis=d, keepdims=True) if data.dtype.kind in 'fV' else \
        xp.full(data.shape[:d] + (1,) + data.shape[d + 1:], data.shape[d], like=data)
    k = xp.maximum((count - 1) // 2, 0)
    return xp.squeeze(xp.take_along_axis(order, k, axis=d), d)


class Nanmedian(_EvenlyDistribute):
    """nanmedian of all elements (NanmedianBackward0): the gradient split among the ties; along a
    dim (NanmedianBackward1): to the index chosen."""
    op, node = 'nanmedian', 'NanmedianBackward0'
    parameter_types = {'dim': 'int'}  # (None given is refused; not given: every element)
    __slots__ = ()

    def forward(input, dim=None, keepdim=False):
        """nanmedian(input, dim=None, keepdim=False, *, out=None) -> Tensor or (Tensor values, Tensor indices)

        median ignoring NaN: the lower median of the non-NaN values. out= only along a dim, as
        PyTorch's."""
        return _median(input, dim, keepdim, 'nanmedian', _lower_nanmedian_index, Nanmedian, NanmedianBackward1)

    function = dim_function(forward, 'nanmedian', (median_values_out, median_indices_out))


# ---- kthvalue, mode ------------------------------------------------------------------------

def _values_indices_out(name, values=None, indices=None):
    """out= of the ops that return (values, indices): each of exactly the result's dtype, refused
    with PyTorch's messages for the op (``same_dtype``'s), else with exact_dtype's."""
    checks = (same_dtype(values), same_dtype(indices)) if values else exact_dtype
    return out_rule(name, checks, (True, False))


class Kthvalue(_SelectAlongDim):
    """The gradient goes to the index chosen."""
    op, node, out = 'kthvalue', 'KthvalueBackward0', _values_indices_out(
        'kthvalue', 'output values must be of same type as input', 'output indices must be of scalar type Long')
    parameter_types = {'dim': 'int'}

    def forward(input, k, dim=-1, keepdim=False):
        """kthvalue(input, k, dim=-1, keepdim=False, *, out=None) -> (Tensor values, Tensor indices)

        The k-th smallest along dim (among equal values PyTorch's index may differ: its kernel
        does not promise which one; this takes the first in a stable sort)."""
        data = input._data
        d = wrap_dim(dim, data.ndim)
        n = data.shape[d] if data.ndim else 1
        if n == 0:
            raise IndexError(f'kthvalue(): Expected reduction dim {d} to have non-zero size.')
        if data.dtype.kind == 'b':
            raise NotImplementedError('"kthvalue_cpu" not implemented for \'Bool\'')
        if not 1 <= k <= n:
            raise RuntimeError(f'kthvalue(): selected number k out of range for dimension {d}')

        def pick(a, axis):
            return xp.take(xp.argsort(a, axis=axis, kind='stable'), k - 1, axis=axis)
        return _select_along_dim(input, dim, keepdim, 'kthvalue', pick, Kthvalue, return_types.kthvalue)


def _mode_index(data, d):
    """The most frequent value along d (the smallest such), at its last occurrence."""
    moved = xp.moveaxis(data, d, -1)
    order = xp.argsort(moved, axis=-1, kind='stable')
    s = xp.take_along_axis(moved, order, axis=-1)
    n = s.shape[-1]
    # run lengths in the sorted slice: count[i] = length of the run that ends at i
    start = xp.concatenate([xp.ones(s.shape[:-1] + (1,), bool, like=s), s[..., 1:] != s[..., :-1]], axis=-1)
    positions = xp.arange(n, like=s)
    run_start = accumulate(xp.maximum, xp.where(start, positions, 0), -1)
    count = positions - run_start + 1
    end = xp.concatenate([start[..., 1:], xp.ones(s.shape[:-1] + (1,), bool, like=s)], axis=-1)
    count = xp.where(end, count, 0)
    best = xp.argmax(count, axis=-1)  # the first maximal run: the smallest value
    # last occurrence in the original order: the largest original index within that run
    run_end = xp.expand_dims(best, -1)
    run_first = xp.take_along_axis(run_start, run_end, axis=-1)
    in_run = (positions >= run_first) & (positions <= run_end)
    return xp.where(in_run, order, -1).max(axis=-1)


class Mode(_SelectAlongDim):
    """The gradient goes to the index chosen."""
    op, node, out = 'mode', 'ModeBackward0', _values_indices_out(
        'mode', "expected scalar type '{result}' but got '{out}' for values output",
        "expected scalar type '{result}' but got '{out}' for indices output")
    parameter_types = {'dim': 'int'}

    def forward(input, dim=-1, keepdim=False):
        """mode(input, dim=-1, keepdim=False, *, out=None) -> (Tensor values, Tensor indices)

        The most frequent value along ``dim`` (the smallest such) and its last index."""
        return _select_along_dim(input, dim, keepdim, 'mode', _mode_index, Mode, return_types.mode)


# ---- sort, argsort, msort, topk -----------------------------------------------------------------

class _Sorted(Op):
    """values, indices = sort(x): each value's gradient goes back to where it came from."""
    saved_state = ('index',)
    saved = ('dim=given_dim:int64', 'indices=saved_indices', 'self_sym_sizes=shape')
    saved_indices = property(lambda self: wrap(self.index))  # (the indices output, as PyTorch's node keeps it)
    # no __slots__: a multi-output node (see _SelectAlongDim)

    def jvp(self, tangents):  # the values' tangent: the input's, read in the sorted order
        t = tangents[0]
        if not self.shape:
            return t * 1, None
        idx, dim = self.index, self.dim - len(self.shape)  # (from the end: the same for a batch)
        return on_samples(lambda p: ops.gather(p, dim, wrap(xp.broadcast_to(
            idx, p._data.shape[:p._data.ndim - idx.ndim] + idx.shape).astype(xp.int64))), t), None

    def apply(self, grad, grad_indices=None):
        if not self.shape:
            return grad,
        return _embed(grad, self.index, self.dim, self.shape),


class SortBackward1(_Sorted):
    """sort(..., stable=...): PyTorch records its stable overload under this name."""
    node = 'SortBackward1'


def _order(data, d, descending):
    """A stable argsort along d; NaN counts as the largest value, as in PyTorch."""
    if data.dtype.kind == 'b' or data.dtype.kind == 'u':
        data = data.astype(xp.int64)
    if not descending:
        return xp.argsort(data, axis=d, kind='stable')
    order = xp.argsort(-data, axis=d, kind='stable')
    if data.dtype.kind in 'fV':
        # NaN first, before inf: -NaN sorts last, so each line's NaNs move from its end to its front
        nans = xp.isnan(data)
        if nans.any():
            shape = [1] * data.ndim
            shape[d] = data.shape[d]
            at = (xp.arange(data.shape[d], like=data).reshape(shape) - nans.sum(axis=d, keepdims=True)) % data.shape[d]
            order = xp.take_along_axis(order, at, axis=d)
    return order


def _sorted(input, dim, descending, k, node_cls, return_type):
    data = input._data
    _refuse_complex(data, 'Sort' if k is None else 'topk')
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        values, idx = data.copy(), xp.zeros_like(data, dtype=xp.int64)
    else:
        idx = _order(data, d, descending)
        if k is not None:
            idx = xp.take(idx, xp.arange(k, like=idx), axis=d)
        idx = idx.astype(xp.int64)
        values = xp.take_along_axis(data, idx, axis=d)
        if k is None:  # (sort's results are laid out as the input, topk's contiguous, as PyTorch's)
            values, idx = laid_out_like(values, data), laid_out_like(idx, data)
    (out, indices), node = record_many([values, idx], node_cls, (input,), differentiable=(True, False))
    if node is not None:
        node.dim, node.shape, node.index, node.given_dim = d, data.shape, idx, dim
    return return_type(out, indices)


class Sort(_Sorted):
    """SortBackward0; with ``stable`` given, SortBackward1 (PyTorch's stable overload)."""
    op, node, out = 'sort', 'SortBackward0', _values_indices_out('sort')
    overloads = Overloads('sort', '(Tensor input, *, bool? stable, int dim = -1, bool descending = False, '
                                  'tuple of Tensors out = None)',
                          '(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)')

    def forward(input, dim=-1, descending=False, *, stable=None):
        """sort(input, dim=-1, descending=False, *, stable=None, out=None) -> (Tensor values, Tensor indices)

        The values along ``dim`` in order and their indices (a stable sort either way:
        ``stable`` only chooses the node's name, as in PyTorch; NaN sorts as the largest)."""
        return _sorted(input, dim, descending, None, Sort if stable is None else SortBackward1, return_types.sort)


# PyTorch's argsort: out= only in the overload with ``stable`` (a bool, given by keyword)
_ARGSORT = Overloads('argsort', '(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)',
                     '(Tensor input, int dim = -1, bool descending = False)')


def _argsort(input, dim, descending):
    data = input._data
    _refuse_complex(data, 'Sort')
    if data.ndim == 0:
        wrap_dim(dim, 0)
        return wrap(xp.zeros_like(data, dtype=xp.int64))
    return wrap(laid_out_like(_order(data, wrap_dim(dim, data.ndim), descending).astype(xp.int64), data))


class Argsort(Op):
    """Not differentiable (int64 indices)."""
    op = 'argsort'
    __slots__ = ()

    def forward(self, *args, **kwargs):
        """Tensor.argsort(dim=-1, descending=False) or Tensor.argsort(*, stable, dim=-1, descending=False)"""
        a = _ARGSORT.bind(args, kwargs, method=True)
        return _argsort(self, a['dim'], a['descending'])

    def function(*args, **kwargs):
        """argsort(input, *, stable, dim=-1, descending=False, out=None) -> Tensor
        argsort(input, dim=-1, descending=False) -> Tensor

        The indices that sort ``input`` along ``dim`` (stably either way; ``stable`` chooses
        the overload, the one with out=)."""
        a = _ARGSORT.bind(args, kwargs)
        result = _argsort(a['input'], a['dim'], a['descending'])
        out = a.get('out')
        if out is None:
            return result
        # PyTorch writes it by sort's out kernel: an input that requires grad is refused there,
        # then an out of another dtype than int64 (also one that requires grad: never int64)
        if a['input']._requires_grad:
            check_out('sort', out, a['input'], True, 'argsort')
        return write_out('sort', out, result, exact_dtype, False, 'argsort')


class Msort(Op):
    """sort along dim 0, its values (recorded as sort's: SortBackward0)."""
    op, out = 'msort', out_rule('sort', label='msort')  # (PyTorch's msort is sort's values)
    __slots__ = ()

    def forward(input):
        """msort(input, *, out=None) -> Tensor

        ``input`` sorted along its first dim (sort's values)."""
        return ops.sort(input, 0).values


class Topk(_Sorted):
    """Each value's gradient goes back to its index."""
    op, node, out = 'topk', 'TopkBackward0', _values_indices_out('topk')
    parameter_types = {'dim': 'int'}

    def forward(input, k, dim=-1, largest=True, sorted=True):
        """topk(input, k, dim=-1, largest=True, sorted=True, *, out=None) -> (Tensor values, Tensor indices)

        The k largest (or smallest) along dim, in order (among equal values PyTorch's indices
        may differ: its kernel does not promise which)."""
        data = input._data
        _refuse_complex(data, 'topk')
        if data.dtype.kind == 'b':
            raise RuntimeError('topk does not support bool dtypes on CPU')
        n = data.shape[wrap_dim(dim, data.ndim)] if data.ndim else 1
        if not 0 <= k <= n:
            raise RuntimeError('selected index k out of range')
        return _sorted(input, dim, largest, k, Topk, return_types.topk)


# ---- cummax, cummin ------------------------------------------------------------------------

class _CumulativeExtremum(Op):
    """Each output's gradient goes to the index it was taken from (summed where repeated)."""
    saved_state = ('index',)
    saved = ('self', 'dim=given_dim:int64', 'indices=saved_indices')
    saved_indices = property(lambda self: wrap(self.index))  # (the indices output, as PyTorch's node keeps it)
    # no __slots__: a multi-output node (see _SelectAlongDim)

    def apply(self, grad, grad_indices=None):
        if not self.shape:
            return grad,
        return _embed(grad, self.index, self.dim, self.shape, unique=False),

    def jvp(self, tangents):  # each value's tangent is its source element's
        t = tangents[0]
        if not self.shape:
            return t, None
        return ops.gather(t, self.dim, wrap(self.index)), None


def _cumulative_extremum(input, dim, ufunc, better, node_cls, return_type):
    data = input._data
    d = wrap_dim(dim, data.ndim)
    if data.ndim == 0:
        values, idx = data.copy(), xp.zeros_like(data, dtype=xp.int64)
    else:
        # np.maximum/minimum: NaN propagates, as PyTorch; C-contiguous, as reduction._scan's
        values = xp.asarray(accumulate(ufunc, data, d), order='C')
        prev = xp.concatenate([xp.take(values, [0], axis=d), xp.delete(values, -1, axis=d)], axis=d) \
            if data.shape[d] else values
        # a new extremum (ties: the latest index), or a NaN (each NaN takes the index, as PyTorch)
        new = better(data, prev) | (xp.isnan(data) if data.dtype.kind in 'fV' else False)
        shape = [1] * data.ndim
        shape[d] = data.shape[d]
        positions = xp.arange(data.shape[d], like=data).reshape(shape)
        idx = accumulate(xp.maximum, xp.where(new, positions, 0), d) if data.size else \
            xp.zeros(data.shape, dtype=xp.int64, like=data)
    (out, indices), node = record_many([values, idx.astype(xp.int64)], node_cls, (input,),
                                       differentiable=(True, False))
    if node is not None:
        node.dim, node.shape, node.index, node.given_dim = d, data.shape, idx.astype(xp.int64), dim
        node.save(input)  # as PyTorch saves it (so that an in-place change of it is caught)
    return return_type(out, indices)


class Cummax(_CumulativeExtremum):
    """As cummin's: the gradient to the indices taken."""
    op, node, out = 'cummax', 'CummaxBackward0', _values_indices_out(
        'cummax', *['expected scalar_type {result} but found {out}'] * 2)
    parameter_types = {'dim': 'int'}

    def forward(input, dim):
        """cummax(input, dim, *, out=None) -> (Tensor values, Tensor indices)

        The running maximum along ``dim`` and where each was taken (the latest index for ties;
        NaN propagates)."""
        return _cumulative_extremum(input, dim, xp.maximum, xp.greater_equal, Cummax, return_types.cummax)


class Cummin(_CumulativeExtremum):
    """As cummax's."""
    op, node, out = 'cummin', 'CumminBackward0', _values_indices_out(
        'cummin', *['expected scalar_type {result} but found {out}'] * 2)
    parameter_types = {'dim': 'int'}

    def forward(input, dim):
        """cummin(input, dim, *, out=None) -> (Tensor values, Tensor indices)

        The running minimum along ``dim`` and where each was taken (the latest index for ties;
        NaN propagates)."""
        return _cumulative_extremum(input, dim, xp.minimum, xp.less_equal, Cummin, return_types.cummin)


# ---- unique ------------------------------------------------------------------------------

class Unique(Op):
    """unique's node: PyTorch gives unique no derivative, so a backward through it raises."""
    op, node = 'unique', 'Unique2Backward0'
    parsed = False  # (Python in PyTorch: no NumPy names)
    __slots__ = ()
    op_name = '_unique2'

    def forward(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None) -> Tensor or tuple

        The distinct values of ``input`` (or, with ``dim``, its distinct slices along dim), in
        ascending order as PyTorch's CPU kernel gives them whatever ``sorted`` says; NaNs are all
        distinct, -0.0 and 0.0 one value. With ``return_inverse`` each element's (slice's) index in
        the result, with ``return_counts`` how often each occurs."""
        data = input._data
        if dim is None:
            rows = data.reshape(-1, 1)
        else:
            dim = wrap_dim(dim, data.ndim)
            rest = data.shape[:dim] + data.shape[dim + 1:]
            rows = xp.moveaxis(data, dim, 0).reshape(data.shape[dim], math.prod(rest))
        n = rows.shape[0]
        order = xp.lexsort(rows.T[::-1]) if rows.shape[1] else xp.arange(n, like=rows)
        ordered = rows[order]
        new = xp.ones(n, dtype=bool, like=rows)
        new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)  # NaN != NaN: each NaN stands alone
        starts = xp.flatnonzero(new)
        if dim is None:
            values = ordered[starts, 0]
        else:
            kept = ordered[starts].reshape((len(starts),) + rest)
            values = xp.moveaxis(kept, 0, dim)
        result, _ = record(xp.ascontiguousarray(values), UniqueDimBackward0 if dim is not None else Unique, (input,))
        if not (return_inverse or return_counts):
            return result
        out = (result,)
        if return_inverse:
            inverse = xp.empty(n, dtype=xp.int64, like=rows)
            inverse[order] = xp.cumsum(new) - 1
            out += (wrap(inverse.reshape(data.shape) if dim is None else inverse),)
        if return_counts:
            out += (wrap(xp.diff(xp.append(starts, n)).astype(xp.int64)),)
        return out

    def method(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """Tensor.unique(sorted=True, return_inverse=False, return_counts=False, dim=None): torch.unique."""
        return ops.unique(self, sorted, return_inverse, return_counts, dim)

    def apply(self, grad):
        raise NotImplementedError(f"the derivative for '{self.op_name}' is not implemented.")


class UniqueDimBackward0(Unique):
    """unique along a dim."""
    node = 'UniqueDimBackward0'
    op = None
    __slots__ = ()
    op_name = 'unique_dim'


class UniqueConsecutive(Op):
    """unique_consecutive's node (along a dim too): PyTorch gives it no derivative."""
    op, node = 'unique_consecutive', 'UniqueConsecutiveBackward0'
    parsed = False  # (Python in PyTorch: no NumPy names)
    __slots__ = ()

    def forward(input, return_inverse=False, return_counts=False, dim=None):
        """unique_consecutive(input, return_inverse=False, return_counts=False, dim=None) -> Tensor or tuple

        ``input`` (flattened, or its slices along ``dim``) with each run of equal consecutive
        elements (slices) kept once; NaNs are all distinct. With ``return_inverse`` each
        element's (slice's) index in the result, with ``return_counts`` each run's length."""
        if not isinstance(input, Tensor):
            raise not_a_tensor('unique_consecutive', 'input', input, 1)
        for name, value in (('return_inverse', return_inverse), ('return_counts', return_counts)):
            if not isinstance(value, bool):
                raise TypeError(f"unique_consecutive(): argument '{name}' must be bool, not {type(value).__name__}")
        if isinstance(dim, Tensor) and dim._data.ndim == 0 and dim._data.dtype.kind in 'iu':
            dim = int(dim._data)  # (a 0-dim integer tensor is an int to PyTorch's parser)
        if dim is not None and (not isinstance(dim, (int, xp.integer)) or isinstance(dim, bool)):
            raise TypeError(f"unique_consecutive(): argument 'dim' must be int, not {type(dim).__name__}")
        data = input._data
        if dim is None:
            rows = data.reshape(-1, 1)
        else:
            if data.ndim == 0:
                raise IndexError(f'Dimension specified as {dim} but tensor has no dimensions')
            dim = wrap_dim(dim, data.ndim)
            rest = data.shape[:dim] + data.shape[dim + 1:]
            if 0 in rest:
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
            rows = xp.moveaxis(data, dim, 0).reshape(data.shape[dim], math.prod(rest))
        n = rows.shape[0]
        new = xp.ones(n, dtype=bool, like=rows)
        new[1:] = (rows[1:] != rows[:-1]).any(axis=1)  # NaN != NaN: each NaN stands alone
        if dim is None:
            values = rows[new, 0]
        else:
            values = xp.moveaxis(rows[new].reshape((int(new.sum()),) + rest), 0, dim)
        result, _ = record(xp.ascontiguousarray(values), UniqueConsecutive, (input,))
        if not (return_inverse or return_counts):
            return result
        out = (result,)
        if return_inverse:
            inverse = (xp.cumsum(new) - 1).astype(xp.int64)
            out += (wrap(inverse.reshape(data.shape) if dim is None else inverse),)
        if return_counts:
            out += (wrap(xp.diff(xp.append(xp.flatnonzero(new), n)).astype(xp.int64)),)
        return out

    def method(self, return_inverse=False, return_counts=False, dim=None):
        """Tensor.unique_consecutive(return_inverse=False, return_counts=False, dim=None): torch.unique_consecutive."""
        return ops.unique_consecutive(self, return_inverse, return_counts, dim)

    def apply(self, grad):
        raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")
