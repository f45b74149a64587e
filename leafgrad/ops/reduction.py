"""Reductions: sum, mean, prod, var/std (and var_mean/std_mean), logsumexp, the vector norms,
cumsum/cumprod, all/any/count_nonzero. (max, min, argmax, median: ``minmax.py``.)

Each op is declared once (``_op.Op``), its derivative beside its forward; none takes ``out=``
yet (PyTorch's TypeError refuses it). Backward of a reduction broadcasts the output's gradient
back over the reduced dims (``_expand_back``); derivatives are written with leafgrad ops
(siblings reached through ``ops``) so they can be differentiated again.
"""
import builtins
import contextlib
import math
import warnings

import numpy as np

from .. import _kernel_math as km
from .. import backend
from ..autograd.graph import on_samples, slice_reduction_jvp
from ._inplace import inplace as _run_inplace
from .._arg_parser import Overloads, _is_int, check_dtype, is_number
from ._op import Op, same_dtype, user_stacklevel, warn_once, writes_out
from ._util import (SCALAR_NAMES, accumulate, autocast, c_order, histories_first, ops, record, record_many,
                    saved_output, state, wrap, wrap_dim, wrap_dims, xp)


# dtype names as PyTorch's messages spell them
_LABELS = {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'int64': 'Long', 'int32': 'Int',
           'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool', 'bfloat16': 'BFloat16',
           'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble'}


def _reduced_shape_for_grad(shape, dims):
    """The input shape with the reduced dims set to 1, to broadcast a gradient back."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(grad, shape, dims, keepdim):
    if not keepdim and dims:
        grad = ops.reshape(grad, _reduced_shape_for_grad(shape, dims))
    return ops.expand(grad, shape)


class _InFloat32:
    """_sum_dtype's answer for a bfloat16 result: PyTorch accumulates bfloat16 sums (and cumulative
    sums) in float32 and rounds once; NumPy would round after every addition."""


def _sum_dtype(data, dtype):
    if dtype is not None:
        dtype = backend.to_dtype(dtype).np
        return _InFloat32 if dtype.kind == 'V' else dtype
    kind = data.dtype.kind
    if kind in 'biu':
        return xp.int64
    return _InFloat32 if kind == 'V' else None


def _sum_in_float32(data, axis, keepdims):
    bf16 = backend.bfloat16.np
    return xp.add.reduce(data.astype(bf16, copy=False), axis=axis, keepdims=keepdims, dtype=xp.float32).astype(bf16)


# sum's and mean's signatures, as PyTorch's parser lists them where a dim is no int
_DIMS_OR_ALL = ('(Tensor input, *, leafgrad.dtype dtype = None)',
                '(Tensor input, tuple of ints dim, bool keepdim = False, *, leafgrad.dtype dtype = None, Tensor out = None)')
_SUM_OVERLOADS = Overloads('sum', *_DIMS_OR_ALL)
_MEAN_OVERLOADS = Overloads('mean', _DIMS_OR_ALL[0][:-1] + ', Tensor out = None)', _DIMS_OR_ALL[1])  # (its first takes out=)


class Sum(Op):
    """sum(input, dim=None, keepdim=False, *, dtype=None): integers and bool sum to int64."""
    op, node = 'sum', 'SumBackward0'
    listed = _SUM_OVERLOADS
    saved = ('self_sym_sizes=self_shape',)
    __slots__ = ('self_shape',)

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        given = dim
        data = input._data
        out_dtype = _sum_dtype(data, dtype)
        if dim is None and keepdim:  # (every dim, kept: PyTorch's SumBackward1 of dim None)
            dim = tuple(range(data.ndim))
        if dim is None:
            # ufunc.reduce directly: ndarray.sum adds a Python-level wrapper around the same call
            out = xp.add.reduce(data, axis=None, dtype=out_dtype) if out_dtype is not _InFloat32 \
                else _sum_in_float32(data, None, False)
            result, node = record(out, Sum, (input,))
            if node is not None:
                node.self_shape = data.shape
            return result
        try:
            dims = wrap_dims(dim, data.ndim)
            out = xp.add.reduce(data, axis=dims, keepdims=keepdim, dtype=out_dtype) if out_dtype is not _InFloat32 \
                else _sum_in_float32(data, dims, keepdim)
        except TypeError:  # (a float dim: PyTorch's listing of sum's overloads, in the method's words; checked
            # here, not by a wrapper around every call; with keepdim only the dims overload is left)
            _SUM_OVERLOADS.bind((dim,), {'keepdim': keepdim} if keepdim else {}, method=True)
            raise
        result, node = record(c_order(out), SumBackward1, (input,))
        if node is not None:
            node.self_shape, node.dims, node.keepdim, node.given_dims = data.shape, dims, keepdim, _as_given(given)
        return result

    def jvp(self, tangents):
        return sum(tangents[0])

    def apply(self, grad):
        return ops.expand(grad, self.self_shape),


class SumBackward1(Op):
    """sum along dims."""
    node = 'SumBackward1'
    saved = ('dim=given_dims:int64', 'keepdim=keepdim', 'self_sym_sizes=self_shape')
    __slots__ = ('self_shape', 'dims', 'keepdim', 'given_dims')

    def jvp(self, tangents):
        return sum(tangents[0], self.dims, self.keepdim)

    def apply(self, grad):
        return _expand_back(grad, self.self_shape, self.dims, self.keepdim),


def _as_given(dim):
    """The dims of a reduction as PyTorch's node keeps them: a tuple of the ints given."""
    if dim is None:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


def _count(shape, dims):
    """How many elements a reduction over ``dims`` takes for each of its results."""
    count = 1
    for d in dims:
        count *= shape[d]
    return count


def mean_array(data, axis=None, keepdims=False):
    """The mean over ``axis`` (None: every element). For float32/float64 NumPy's own mean is this
    sum and division (the same pairwise sum, the same rounding) behind a Python-level wrapper,
    which also warns on an empty slice where PyTorch gives NaN silently (0 / 0 here, whose
    floating-point warning leafgrad silences); half precision keeps NumPy's float32 accumulation, and
    bfloat16 is summed and divided in float32, then rounded once, as PyTorch does."""
    if type(data) is xp.ndarray and (data.dtype == xp.float32 or data.dtype == xp.float64):
        count = data.size if axis is None else _count(data.shape, axis)
        return xp.add.reduce(data, axis=axis, keepdims=keepdims) / count
    if type(data) is xp.ndarray and data.dtype == xp.float16:  # (NumPy's own mean warns from its module)
        count = data.size if axis is None else _count(data.shape, axis)
        return (xp.add.reduce(data, axis=axis, dtype=xp.float32, keepdims=keepdims) / count).astype(xp.float16)
    if data.dtype.kind == 'V':
        count = data.size if axis is None else _count(data.shape, axis)
        return (xp.add.reduce(data, axis=axis, keepdims=keepdims, dtype=xp.float32) / count).astype(data.dtype)
    return data.mean(axis=axis, keepdims=keepdims)


def _mean_dtype(fname, dtype):
    """The NumPy dtype of mean's ``dtype=``, which must be floating or complex."""
    np_dtype = backend.to_dtype(dtype).np
    if np_dtype.kind not in 'fVc':
        raise RuntimeError(f'{fname}(): could not infer output dtype. Optional dtype must be either a floating point '
                           f'or complex dtype. Got: {_LABELS[np_dtype.name]}')
    return np_dtype


class Mean(Op):
    """mean(input, dim=None, keepdim=False, *, dtype=None): floating and complex input only."""
    op, node = 'mean', 'MeanBackward0'
    listed = _MEAN_OVERLOADS
    saved = ('self_sym_numel=count', 'self_sym_sizes=self_shape')
    __slots__ = ('self_shape', 'count')

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        given = dim
        data = input._data
        if dtype is not None:
            data = data.astype(_mean_dtype('mean', dtype))
        elif data.dtype.kind not in 'fVc':
            raise RuntimeError('mean(): could not infer output dtype. Input dtype must be either a floating '
                               f'point or complex dtype. Got: {_LABELS[data.dtype.name]}')
        if dim is None and keepdim:  # (every dim, kept: PyTorch's MeanBackward1 of dim None)
            dim = tuple(range(data.ndim))
        if dim is None:
            result, node = record(mean_array(data), Mean, (input,))
            if node is not None:
                node.self_shape, node.count = data.shape, data.size
            return result
        try:
            dims = wrap_dims(dim, data.ndim)
            out = mean_array(data, dims, keepdim)
        except TypeError:  # (a float dim: as sum's)
            _MEAN_OVERLOADS.bind((dim,), {'keepdim': keepdim} if keepdim else {}, method=True)
            raise
        result, node = record(c_order(out), MeanBackward1, (input,))
        if node is not None:
            node.self_shape, node.dims, node.keepdim, node.count = data.shape, dims, keepdim, _count(data.shape, dims)
            node.given_dims, node.numel = _as_given(given), data.size
        return result

    def jvp(self, tangents):
        return sum(tangents[0]) / self.count

    def apply(self, grad):  # (expanded, then divided: PyTorch's gradient is no view)
        return ops.div_by_number(ops.expand(grad, self.self_shape), self.count),


class MeanBackward1(Op):
    """mean along dims."""
    node = 'MeanBackward1'
    saved = ('dim=given_dims:int64', 'keepdim=keepdim', 'self_sym_numel=numel', 'self_sym_sizes=self_shape')
    __slots__ = ('self_shape', 'dims', 'keepdim', 'count', 'given_dims', 'numel')

    def jvp(self, tangents):
        return sum(tangents[0], self.dims, self.keepdim) / self.count

    def apply(self, grad):
        return ops.div_by_number(_expand_back(grad, self.self_shape, self.dims, self.keepdim), self.count),


def _times_no_dof_factor(grad, x):
    """PyTorch's derivative of a variance over all elements with no degrees of freedom left: grad
    times the constant where(x == mean, NaN, inf) (inf * 0 and inf * c), not a function of x, of
    the default dtype (a where of two numbers), the product cast to x's dtype as PyTorch's engine
    casts a gradient (a ToCopyBackward0 where it records: seeds 10006796, 10016988)."""
    xd = x._data
    out = grad * wrap(xp.where(xd == mean_array(xd), xp.nan, xp.inf).astype(backend.get_default_dtype().np))
    return out if out._data.dtype == xd.dtype else out.to(backend.from_np(xd.dtype))


# PyTorch's signatures of var and std (and without out=, var_mean and std_mean): unbiased and
# correction are in different overloads, so that both together are refused
_VARIANCE_SIGNATURES = ('(Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None)',
                        '(Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, '
                        'Tensor out = None)',
                        '(Tensor input, bool unbiased = True)')


def _variance_overloads(name, out=True):
    signatures = _VARIANCE_SIGNATURES if out else [s.replace(', Tensor out = None', '').replace(', *)', ')')
                                                   for s in _VARIANCE_SIGNATURES]
    return Overloads(name, *signatures)


def _real_product(g, t):
    """Re(conj(g) t): the tangent of a real-valued function of a complex input whose reverse
    derivative (PyTorch's convention) is ``g``; ``g * t`` for real ones."""
    return (g.conj() * t).real if g.is_complex() else g * t


class Var(Op):
    """var(input, dim=None, unbiased=None, keepdim=False, *, correction=None)."""
    op, node = 'var', 'VarBackward0'
    saved = ('self', 'correction=given_correction', 'dim=given_dims:int64', 'keepdim=keepdim')
    overloads = _variance_overloads('var')
    __slots__ = ('dims', 'keepdim', 'correction', 'count', 'full', 'given_correction', 'given_dims')

    def forward(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        given = _as_given_variance(dim, unbiased, correction)
        dims, correction, count = _var_args(input, dim, unbiased, keepdim, correction, 'var')
        data = input._data
        with _quiet(count - correction):
            out = xp.asarray(_accumulated(data).var(axis=dims, ddof=correction, keepdims=keepdim))
        # (a complex input's variance is real: the mean of |x - mean|^2)
        result, node = record(c_order(out.astype(data.real.dtype, copy=False)), Var, (input,))
        if node is not None:
            node.dims, node.keepdim, node.correction, node.count = dims, keepdim, correction, count
            node.given_correction, node.given_dims = given
            node.full = dim is None or data.ndim == 0
            node.save(input)
        return result

    def jvp(self, tangents):
        (x,) = self.saved_tensors
        centered = x - mean(x, self.dims, keepdim=True)
        return sum(_real_product(centered, tangents[0]), self.dims, self.keepdim) * _per_dof(
            2.0, self.count - self.correction)

    def apply(self, grad):
        (x,) = self.saved_tensors
        if self.full and self.count - self.correction <= 0:
            return _times_no_dof_factor(grad, x),
        centered = x - mean(x, self.dims, keepdim=True)
        g = grad if self.keepdim else _unsqueeze_dims(grad, self.dims)
        return g * centered * (_per_dof(2.0, self.count - self.correction)),


class Std(Op):
    """std(input, dim=None, unbiased=None, keepdim=False, *, correction=None)."""
    op, node = 'std', 'StdBackward0'
    saved = ('self', 'result', 'correction=given_correction', 'dim=given_dims:int64', 'keepdim=keepdim')
    overloads = _variance_overloads('std')
    __slots__ = ('dims', 'keepdim', 'correction', 'count', 'full', 'given_correction', 'given_dims')

    def forward(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        given = _as_given_variance(dim, unbiased, correction)
        dims, correction, count = _var_args(input, dim, unbiased, keepdim, correction, 'std')
        data = input._data
        with _quiet(count - correction):
            out = xp.asarray(_accumulated(data).std(axis=dims, ddof=correction, keepdims=keepdim))
        result, node = record(c_order(out.astype(data.real.dtype, copy=False)), Std, (input,))
        if node is not None:
            node.dims, node.keepdim, node.correction, node.count = dims, keepdim, correction, count
            node.given_correction, node.given_dims = given
            node.full = dim is None or data.ndim == 0
            node.save(input, saved_output(result))
        return result

    def jvp(self, tangents):
        x, result = self.saved_tensors
        centered = x - mean(x, self.dims, keepdim=True)
        var_t = sum(_real_product(centered, tangents[0]), self.dims, self.keepdim) * _per_dof(
            1.0, self.count - self.correction)
        zero = result._data == 0
        return var_t / (result + wrap(zero.astype(result._data.dtype))) * wrap(~zero)

    def apply(self, grad):
        x, result = self.saved_tensors
        # where the std is 0 PyTorch gives a zero gradient rather than 0/0
        zero = result._data == 0
        g = grad / (result + wrap(zero.astype(result._data.dtype))) * wrap(~zero)
        if self.full and self.count - self.correction <= 0:
            return _times_no_dof_factor(g * 0.5, x),
        centered = x - mean(x, self.dims, keepdim=True)
        if not self.keepdim:
            g = _unsqueeze_dims(g, self.dims)
        return g * centered * (_per_dof(1.0, self.count - self.correction)),


def _accumulated(data):
    """``data`` as PyTorch's variances and norms accumulate it: float16 and bfloat16 in float32
    (the result rounded once: a float16 variance of 1e5 numbers of size 3 would overflow its
    sums of squares), other dtypes as they are."""
    return data.astype(xp.float32) if data.dtype.kind == 'V' or data.dtype == xp.float16 else data


def _quiet(dof):
    """No floating-point warnings (NumPy's var and std are Python code in NumPy's own module,
    which leafgrad's warning filter does not name: inf - inf there would warn), nor NumPy's
    warning for a variance with no degrees of freedom (PyTorch's was given by _var_args)."""
    if dof > 0:
        return xp.errstate(all='ignore')
    stack = contextlib.ExitStack()
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter('ignore', RuntimeWarning)
    stack.enter_context(xp.errstate(all='ignore'))
    return stack


def _per_dof(k, dof):
    """k / dof, inf when there are no degrees of freedom left (PyTorch's var of one element
    has gradient NaN, not an exception)."""
    return k / dof if dof > 0 else float('inf')


def _unsqueeze_dims(t, dims):
    for d in sorted(dims):
        t = ops.unsqueeze(t, d)
    return t


def _as_given_variance(dim, unbiased, correction):
    """var's and std's correction and dims as PyTorch's node keeps them: no correction where
    nothing but the input was given (its var.default), the dims as given."""
    if isinstance(dim, bool):  # var(input, unbiased)
        return (1 if dim else 0), None
    if dim is None and unbiased is None and correction is None:
        return None, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return correction, _as_given(dim)


def _var_args(input, dim, unbiased, keepdim, correction, name):
    if input._data.dtype.kind not in 'fVc':
        raise RuntimeError('std and var only support floating point and complex dtypes')
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = wrap_dims(dim, input._data.ndim)
    count = _count(input._data.shape, dims)
    # PyTorch's reduction factor: input numel / output numel (0 when the output is empty)
    out_numel = _count(input._data.shape, [d for d in range(input._data.ndim) if d not in dims])
    if (count if out_numel else 0) - correction <= 0:
        histories_first(input)  # (PyTorch's no_grad-view error comes before this warning)
        warnings.warn(f'{name}(): degrees of freedom is <= 0. Correction should be strictly less than the '
                      'reduction factor (input numel divided by output numel).', UserWarning,
                      stacklevel=user_stacklevel())
    return dims, correction, count


def _check_float(input, name):
    if input._data.dtype.kind == 'c' and name != 'linalg.vector_norm':
        raise NotImplementedError(f"{name}: leafgrad's linear algebra takes real matrices only, not complex ones")
    if input._data.dtype.kind not in 'fV':
        raise RuntimeError(f'{name}: Expected a floating point or complex tensor as input. Got '
                           f'{_LABELS[input._data.dtype.name]}')


# ---- var_mean, std_mean ----------------------------------------------------------------------

class VarMean(Op):
    """var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None): two outputs,
    the variance and the mean (a function only)."""
    op, node = 'var_mean', 'VarMeanBackward0'
    saved = ('self', 'correction=given_correction', 'dim=given_dims:int64', 'keepdim=keepdim')
    overloads = _variance_overloads('var_mean', out=False)
    method = False
    # no __slots__: record_many sets num_outputs and output_meta on multi-output nodes

    def forward(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _var_mean(input, dim, unbiased, keepdim, correction, False)

    def apply(self, grad_var, grad_mean):
        x, result = self.saved_tensors if self.is_std else (self.saved_tensors[0], None)
        g = None
        if grad_var is not None:
            centered = x - mean(x, self.dims, keepdim=True)
            if self.is_std:
                zero = result._data == 0
                gv = grad_var / (result + wrap(zero.astype(result._data.dtype))) * wrap(~zero)
                scale = _per_dof(1.0, self.count - self.correction)
            else:
                gv, scale = grad_var, _per_dof(2.0, self.count - self.correction)
            gv = gv if self.keepdim else _unsqueeze_dims(gv, self.dims)
            g = gv * centered * scale
        if grad_mean is not None:
            gm = _expand_back(grad_mean / self.count, x._data.shape, self.dims, self.keepdim)
            g = gm if g is None else g + gm
        return g,


class StdMean(VarMean):
    """std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None)."""
    op, node = 'std_mean', 'StdMeanBackward0'
    saved = ('self', 'result0', 'correction=given_correction', 'dim=given_dims:int64', 'keepdim=keepdim')
    overloads = _variance_overloads('std_mean', out=False)

    def forward(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _var_mean(input, dim, unbiased, keepdim, correction, True)


def _var_mean(input, dim, unbiased, keepdim, correction, is_std):
    given = _as_given_variance(dim, unbiased, correction)
    dims, correction, count = _var_args(input, dim, unbiased, keepdim, correction, 'std_mean' if is_std else 'var_mean')
    data = input._data
    work = _accumulated(data)
    with _quiet(count - correction):
        v = xp.asarray(work.std(axis=dims, ddof=correction, keepdims=keepdim) if is_std
                       else work.var(axis=dims, ddof=correction, keepdims=keepdim)).astype(data.dtype, copy=False)
        m = xp.asarray(work.mean(axis=dims, keepdims=keepdim)).astype(data.dtype, copy=False)
    (out_v, out_m), node = record_many([c_order(v), c_order(m)], StdMean if is_std else VarMean, (input,))
    if node is not None:
        node.dims, node.keepdim, node.correction, node.count, node.is_std = dims, keepdim, correction, count, is_std
        node.given_correction, node.given_dims = given
        if is_std:  # (std's derivative reads the result; var's does not, and PyTorch's keeps it only then)
            node.save(input, saved_output(out_v))
        else:
            node.save(input)
    return out_v, out_m


# ---- prod --------------------------------------------------------------------------------

def _prod_safe_zeros(grad, x, dim):
    """grad times the product of all but each element along ``dim``, exact with zeros: the
    exclusive cumulative products from either end, as PyTorch's prod_safe_zeros_backward (leafgrad
    ops, so that it can be differentiated again)."""
    shape = x._data.shape
    if x._data.size == 0:
        return ops.expand(grad, shape)
    n = shape[dim]
    if n == 1:
        return grad
    ones = wrap(xp.ones(shape[:dim] + (1,) + shape[dim + 1:], dtype=x._data.dtype, like=x._data))
    before = cumprod(ops.cat([ones, ops.narrow(x, dim, 0, n - 1)], dim), dim)
    after = ops.flip(cumprod(ops.cat([ones, ops.flip(ops.narrow(x, dim, 1, n - 1), [dim])], dim), dim), [dim])
    return ops.mul(grad, ops.mul(before, after))


class Prod(Op):
    """prod(input, dim=None, keepdim=False, *, dtype=None). Over all elements: grad * result / x
    without zeros, else the products of the others (PyTorch's prod_backward, node for node)."""
    op, node = 'prod', 'ProdBackward0'
    overloads = Overloads('prod', '(Tensor input, *, leafgrad.dtype dtype = None)',
                          '(Tensor input, int dim, bool keepdim = False, *, leafgrad.dtype dtype = None, Tensor out = None)')
    saved = ('self', 'result')
    __slots__ = ()

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        if autocast.state.on:
            input, = autocast.fp32(input)
        data = input._data
        out_dtype = _sum_dtype(data, dtype)
        if out_dtype is _InFloat32:  # PyTorch's bfloat16 product rounds after each step, as NumPy's does
            data, out_dtype = data.astype(backend.bfloat16.np, copy=False), None
        if dim is None:
            result, node = record(xp.asarray(xp.multiply.reduce(data, axis=None, dtype=out_dtype)), Prod, (input,))
            if node is not None:
                node.save(input, saved_output(result))
            return result
        if not isinstance(dim, int) and not _is_int(dim):  # (a 0-dim integer tensor is one)
            raise TypeError('prod(): argument \'dim\' must be int, not ' + type(dim).__name__)
        d = wrap_dims(dim, data.ndim)
        axis = d[0] if data.ndim else None
        out = xp.asarray(xp.multiply.reduce(data, axis=axis, keepdims=keepdim and data.ndim > 0, dtype=out_dtype))
        result, node = record(c_order(out), ProdBackward1, (input,))
        if node is not None:
            node.dim, node.keepdim, node.given_dim = axis if axis is not None else 0, keepdim, dim
            node.save(input, saved_output(result))
        return result

    def jvp(self, tangents, output):  # the gradient (zeros handled) dotted with the tangent
        return slice_reduction_jvp(self, tangents, output, tuple(range(len(self.saved_tensors[0].shape))), False)

    def apply(self, grad):
        x, result = self.saved_tensors
        if x._data.ndim == 0:
            return grad,
        zeros = x._data == 0
        if not zeros.any():
            return grad * (result / x),
        if not state.grad_enabled and zeros.sum() > 1:
            return wrap(xp.zeros_like(x._data)),
        return ops.view(_prod_safe_zeros(grad, ops.reshape(x, (-1,)), 0), x._data.shape),


class ProdBackward1(Op):
    """prod along a dim."""
    node = 'ProdBackward1'
    saved = ('self', 'result', 'dim=given_dim:int64', 'keepdim=keepdim')
    __slots__ = ('dim', 'keepdim', 'given_dim')

    def jvp(self, tangents, output):
        x = self.saved_tensors[0]
        return slice_reduction_jvp(self, tangents, output, (self.dim,) if x._data.ndim else (), self.keepdim)

    def apply(self, grad):
        x, result = self.saved_tensors
        if x._data.ndim == 0:
            return grad,
        if not self.keepdim:
            grad, result = ops.unsqueeze(grad, self.dim), ops.unsqueeze(result, self.dim)
        if not (x._data == 0).any():
            return grad * (result / x),
        return _prod_safe_zeros(grad, x, self.dim),


# ---- logsumexp ---------------------------------------------------------------------------

class Logsumexp(Op):
    """logsumexp(input, dim, keepdim=False): log(sum(exp(x))) without overflow (the largest
    shifted out); integer input in the default float dtype."""
    op, node = 'logsumexp', 'LogsumexpBackward0'
    parameter_types = {'dim': 'tuple of ints'}
    saved = ('self', 'result', 'dim=given_dims:int64', 'keepdim=keepdim')
    __slots__ = ('dims', 'keepdim', 'given_dims')

    def forward(input, dim, keepdim=False):
        data = input._data
        if data.dtype.kind == 'c':  # (no order to shift by the largest: PyTorch's formula, composed)
            return (input - input.real.amax(dim, keepdim=True).detach()).exp().sum(dim, keepdim).log() + \
                (input.real.amax(dim, keepdim=True).detach() if keepdim else input.real.amax(dim).detach())
        if data.dtype.kind not in 'fV':
            data = data.astype(backend.get_default_dtype().np)
        dims = wrap_dims(dim, data.ndim) if dim != () else tuple(range(data.ndim))
        with xp.errstate(divide='ignore', invalid='ignore', over='ignore'):
            if data.size:
                m = data.max(axis=dims, keepdims=True)
                m = xp.where(xp.isfinite(m), m, 0)  # all -inf (or inf) rows: shift by 0, not by inf
                out = xp.log(_sum_exp(data - m, dims)) + m
            else:
                out = xp.log(_sum_exp(data, dims))
        if not keepdim:
            out = out.reshape(tuple(s for i, s in enumerate(data.shape) if i not in dims))
        result, node = record(c_order(out.astype(data.dtype, copy=False)), Logsumexp, (input,))
        if node is not None:
            node.dims, node.keepdim, node.given_dims = dims, keepdim, _as_given(dim)
            node.save(input, saved_output(result))
        return result

    def jvp(self, tangents):
        x, result = self.saved_tensors
        r = result if self.keepdim else _unsqueeze_dims(result, self.dims)
        return sum(ops.exp(x - r) * tangents[0], self.dims, self.keepdim)

    def apply(self, grad):
        x, result = self.saved_tensors
        if not self.keepdim:
            grad, result = _unsqueeze_dims(grad, self.dims), _unsqueeze_dims(result, self.dims)
        return grad * ops.exp(x - result),


def _sum_exp(data, dims):
    if data.dtype.kind == 'V':  # bfloat16: the exponentials summed in float32 (PyTorch's steps)
        return _sum_in_float32(xp.exp(data), dims, True)
    return xp.exp(data).sum(axis=dims, keepdims=True)


# ---- vector norms ------------------------------------------------------------------------

class LinalgVectorNormBackward0(Op):
    """linalg.vector_norm's node (its function is leafgrad.linalg's: PyTorch has no
    torch.vector_norm nor a method)."""
    node = 'LinalgVectorNormBackward0'
    saved = ('self', 'result', 'dim=given_dims:int64', 'keepdim=keepdim', 'ord=given_ord')
    __slots__ = ('ord', 'dims', 'keepdim', 'given_dims', 'given_ord')

    def jvp(self, tangents):
        # the derivative's directional form: <d norm / dx, t> summed over the reduced dims
        result = self.saved_tensors[1]
        (g,) = self.apply(wrap(xp.ones(result._data.shape, dtype=result._data.dtype, like=result._data)))
        return sum(_real_product(g, tangents[0]), self.dims, self.keepdim)

    def apply(self, grad):
        x, result = self.saved_tensors
        # (z / |z| for complex numbers: the derivative of |z| in PyTorch's convention)
        sign = ops.sgn if x._data.dtype.kind == 'c' else ops.sign
        p = self.ord
        if not self.keepdim:
            grad, result = _unsqueeze_dims(grad, self.dims), _unsqueeze_dims(result, self.dims)
        if p == 0:  # (no gradient, as PyTorch's undefined one: an input's .grad stays None)
            return None,
        if p == 1:
            return grad * sign(x),
        zero = result._data == 0
        # where the norm is 0 the gradient is 0, as PyTorch masks it
        safe = result + wrap(zero.astype(result._data.dtype))
        keep = wrap(~zero)
        if p == 2:
            return grad * x / safe * keep,
        if p in (float('inf'), float('-inf')):
            hit = (xp.abs(x._data) == result._data).astype(x._data.dtype)
            # (no element hits a NaN norm: a gradient of 0 there, as PyTorch's, not 0 / 0)
            count = xp.maximum(hit.sum(axis=self.dims, keepdims=True), 1)
            return grad * sign(x) * wrap(hit) / wrap(count),
        # PyTorch's norm_backward, branch for branch (a 0 element's gradient is 0: below p = 1 its
        # |x|^(p-1) is masked, from 1 to 2 the sign makes it 0, and x * |x|^(p-2) would be 0 * inf)
        if p < 1:
            scaled = sign(x) * ops.masked_fill(ops.pow(ops.abs(x), p - 1), wrap(x._data == 0), 0)
            return scaled * grad * ops.pow(result, 1 - p),
        scale = ops.masked_fill(grad / ops.pow(result, p - 1), wrap(zero), 0)
        if p < 2:
            return sign(x) * ops.pow(ops.abs(x), p - 1) * scale,
        return x * ops.pow(ops.abs(x), p - 2) * scale,


class NormBackward1(LinalgVectorNormBackward0):
    """ATen's norm(input, p, dim, keepdim)'s node, which pairwise_distance records (torch.norm
    itself runs linalg.vector_norm): the same derivative."""
    node = 'NormBackward1'
    __slots__ = ()


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return _vector_norm(x, ord, dim, keepdim, dtype, LinalgVectorNormBackward0)


def _vector_norm(x, ord, dim, keepdim, dtype, recorded):
    if not is_number(ord):  # (before any other check, as PyTorch's parser)
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    if x._data.dtype.kind != 'c':
        _check_float(x, 'linalg.vector_norm')
    data = x._data
    if dtype is not None:
        check_dtype('linalg_vector_norm', dtype)
        data = data.astype(backend.to_dtype(dtype).np)
    if isinstance(dim, int):
        dim = (dim,)
    elif dim is not None and not isinstance(dim, (tuple, list)):
        if not _is_int(dim):  # (a 0-dim integer tensor is one dim)
            raise TypeError(f"linalg_vector_norm(): argument 'dim' (position 3) must be tuple of ints, not "
                            f'{type(dim).__name__}')
        dim = (int(dim),)
    dims = wrap_dims(dim, data.ndim) if dim is not None and len(dim) else tuple(range(data.ndim))
    a = xp.abs(_accumulated(data))
    p = float(ord)
    if p in (float('inf'), float('-inf')) and data.size == 0 and builtins.any(data.shape[d] == 0 for d in dims):
        raise RuntimeError(f'linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the '
                           'operation does not have an identity')
    with xp.errstate(divide='ignore', invalid='ignore', over='ignore'):
        if p == float('inf'):
            out = a.max(axis=dims, keepdims=keepdim)
        elif p == float('-inf'):
            out = a.min(axis=dims, keepdims=keepdim)
        elif p == 0:
            out = (a != 0).sum(axis=dims, keepdims=keepdim).astype(data.dtype)
        elif p == 1:
            out = a.sum(axis=dims, keepdims=keepdim)
        elif p == 2:
            if dims and builtins.all(data.shape[d] == 1 for d in dims):
                # over dims of size 1 PyTorch's is |x|: no square to overflow (1e30 in float32)
                out = a if keepdim else a.squeeze(dims)
            else:
                out = xp.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
        else:
            out = _root((a ** p).sum(axis=dims, keepdims=keepdim), 1.0 / p)
    # (the norm of complex numbers is real: of their magnitudes)
    result, node = record(c_order(xp.asarray(out).astype(data.real.dtype, copy=False)), recorded, (x,))
    if node is not None:
        node.ord, node.dims, node.keepdim, node.given_dims = p, dims, keepdim, None if dim is None else tuple(dim)
        node.given_ord = ord
        node.save(x, saved_output(result))
    return result


def _root(total, q):
    """total ** q, the p-norm's last step. PyTorch's CPU kernel takes it with C's pow, one norm at
    a time; NumPy's vectorised float64 power (SVML's on AVX-512 machines) differs from C's in the
    last place (35 ** (1/3): 3.2710663101885893 against 3.2710663101885897), so a NumPy array's
    float64 roots (finite, of positive totals) are C's (``math.pow``), one norm at a time."""
    out = total ** q
    if type(out) is np.ndarray and out.dtype == np.float64 and out.size:
        here = (total > 0) & np.isfinite(total) & np.isfinite(out) & (out != 0) & (np.abs(out) < 1e300)
        out[here] = km.libm(lambda v: math.pow(v, q), total[here])
    return out


ops.vector_norm = vector_norm  # (linalg.vector_norm: reached by the families through ops)


def pairwise_norm(x, p, dim, keepdim):
    """ATen's norm(x, p, dim, keepdim) as pairwise_distance calls it (NormBackward1)."""
    return _vector_norm(x, p, dim, keepdim, None, NormBackward1)


class Norm(Op):
    """norm(input, p='fro', dim=None, keepdim=False, dtype=None): a vector norm over ``dim`` (all
    dims by default); 'fro' is the 2-norm, 'nuc' the nuclear matrix norm (their nodes)."""
    op = 'norm'
    parsed = False  # (Python in PyTorch: no NumPy names)
    __slots__ = ()

    def forward(input, p='fro', dim=None, keepdim=False, dtype=None):
        # (PyTorch's torch.norm, step for step: 'fro' over at most 2 dims is the vector 2-norm; any
        # other order named by a string is linalg.matrix_norm's, over all dims unless given)
        input.layout  # (its first step reads it: its error for a non-tensor)
        dims = [dim] if isinstance(dim, int) else dim
        if isinstance(p, str) and not (p == 'fro' and (dim is None or isinstance(dim, int) or len(dim) <= 2)):
            return matrix_norm(input, p, dims if dims is not None else list(range(input._data.ndim)), keepdim,
                               dtype=dtype)
        if p == 'fro' or p is None:
            p = 2
        return vector_norm(input, p, dims, keepdim, dtype=dtype)


# ---- cumulative sums and products ------------------------------------------------------------

class Cumsum(Op):
    """cumsum(input, dim, *, dtype=None), and Tensor.cumsum_. The gradient of a cumulative sum
    is the reversed cumulative sum of the gradient."""
    op, node = 'cumsum', 'CumsumBackward0'
    saved = ('dim=given_dim:int64',)
    parameter_types = {'dim': 'int'}
    __slots__ = ('dim', 'reverse', 'given_dim')

    def inplace(self, dim, *, dtype=None):
        return _run_inplace(self, lambda s: cumsum(s, dim, dtype=dtype))

    def forward(input, dim, *, dtype=None):
        if input._data.ndim == 0:
            wrap_dims(dim, 0)
            return _cumsum(input, None, dtype=dtype)
        return _cumsum(input, dim, dtype=dtype)

    def jvp(self, tangents, output):
        dim = self.dim - output.dim() if output.dim() else self.dim  # (from the end: the same for a batch)
        return on_samples(lambda t: _cumsum(t, dim, self.reverse), tangents[0])

    def apply(self, grad):
        shape = grad.shape
        if grad.numel() <= 1 or shape[self.dim] == 1:
            return grad,  # PyTorch's cumsum_backward returns the gradient itself (its -0.0 too)
        return _cumsum(grad, self.dim, not self.reverse),


# PyTorch's CPU scans accumulate half in float and float in double, then round once
_SCAN_ACCUMULATOR = {xp.dtype(xp.float16): xp.float32, xp.dtype(xp.float32): xp.float64}


def _scan(ufunc, data, axis, out_dtype):
    """``ufunc.accumulate`` along ``axis`` as PyTorch computes it (called here, not through
    NumPy's cumsum, so that leafgrad's floating-point warning filter sees the call)."""
    dtype = xp.dtype(out_dtype or data.dtype)
    # (bfloat16 is scanned in float32: PyTorch's CPU accumulator type for it is float, not double)
    acc = _SCAN_ACCUMULATOR.get(dtype) if data.dtype.kind != 'V' else None
    # (laid out C-contiguously, as PyTorch's scans write a new tensor, whatever the input's strides:
    # a scan of a diagonal can be view()ed, seeds 11002403, 11008020)
    if acc is None:
        return xp.asarray(ufunc.accumulate(data, axis=axis, dtype=dtype), order='C')
    return ufunc.accumulate(data, axis=axis, dtype=acc).astype(dtype, order='C')


def _cumsum(input, dim, reverse=False, dtype=None):
    data = input._data
    d = wrap_dims(dim, data.ndim)[0] if data.ndim else None
    if reverse and d is not None and state.grad_enabled and input.requires_grad:
        # recorded as PyTorch's reversed_cumsum records it (a derivative under create_graph)
        return ops.flip(ops.cumsum(ops.flip(input, (d,)), d), (d,))
    out_dtype = _sum_dtype(data, dtype)
    if out_dtype is _InFloat32:
        data, out_dtype = data.astype(backend.bfloat16.np, copy=False), xp.float32
    if d is None:
        out = data.astype(out_dtype or data.dtype, copy=True)
    elif reverse:
        out = xp.flip(_scan(xp.add, xp.flip(data, d), d, out_dtype), d)
    else:
        out = _scan(xp.add, data, d, out_dtype)
    if d is not None and out.dtype.kind in 'fc':
        out += 0.0  # PyTorch's sum starts from +0: a leading -0.0 (or a run of them) gives +0.0
    if out_dtype is xp.float32 and data.dtype.kind == 'V':
        out = out.astype(data.dtype)
    result, node = record(out.copy() if reverse else out, Cumsum, (input,))  # flip made a view
    if node is not None:
        node.dim, node.reverse, node.given_dim = d if d is not None else 0, reverse, 0 if dim is None else dim
    return result


class Cumprod(Op):
    """cumprod(input, dim, *, dtype=None), and Tensor.cumprod_."""
    op, node = 'cumprod', 'CumprodBackward0'
    saved = ('self', 'result', 'dim=given_dim:int64')
    parameter_types = {'dim': 'int'}
    __slots__ = ('dim', 'given_dim')

    def inplace(self, dim, *, dtype=None):
        return _run_inplace(self, lambda s: cumprod(s, dim, dtype=dtype))

    def forward(input, dim, *, dtype=None):
        data = input._data
        d = wrap_dims(dim, data.ndim)[0] if data.ndim else (wrap_dims(dim, 0), None)[1]
        out_dtype = _sum_dtype(data, dtype)
        if out_dtype is _InFloat32:  # accumulated in float32, rounded once, as PyTorch's
            data, out_dtype = data.astype(backend.bfloat16.np, copy=False), xp.float32
        out = data.astype(out_dtype or data.dtype, copy=True) if d is None else _scan(xp.multiply, data, d, out_dtype)
        if out.dtype != data.dtype and data.dtype.kind == 'V':
            out = out.astype(data.dtype)
        result, node = record(out, Cumprod, (input,))
        if node is not None:
            node.dim, node.given_dim = d if d is not None else 0, dim
            node.save(input, saved_output(result))
        return result

    def jvp(self, tangents):
        x, result = self.saved_tensors
        t, d = tangents[0], self.dim
        if x._data.ndim == 0 or x._data.size == 0:
            return t * 1
        if not (x._data == 0).any():  # d out_j = out_j sum_{i<=j} t_i / x_i
            return result * cumsum(t / x, d)
        # with zeros: d out_j = sum_{i<=j} t_i prod_{k<=j, k!=i} x_k, rows as in apply
        n = x._data.shape[d]
        xm = ops.unsqueeze(ops.transpose(x, d, -1), -2)
        a = x._data
        eye = wrap(xp.eye(n, dtype=bool, like=a))
        rows = cumprod(ops.where(eye, wrap(xp.ones((), dtype=a.dtype, like=a)), xm), -1)   # (..., i, j)
        upper = wrap(xp.triu(xp.ones((n, n), dtype=a.dtype, like=a)))                   # j >= i
        ti = ops.unsqueeze(ops.transpose(t, d, -1), -1)                                 # (..., i, 1)
        return ops.transpose(sum(rows * upper * ti, -2), d, -1)

    def apply(self, grad):
        x, result = self.saved_tensors
        d = self.dim
        if x._data.size <= 1 or x._data.shape[d] == 1:
            return grad,  # (as PyTorch: the gradient itself, even where x is infinite)
        if not (x._data == 0).any():
            # sum_{j>=k} g_j * out_j / x_k
            return _cumsum(grad * result, d, reverse=True) / x,
        # with zeros, PyTorch's two methods (FunctionsManual's cumprod_backward), whose values differ
        # where the input has infinities: around the first zero of each slice, or (create_graph) by
        # the products with x_k left out, made as ops so that they can be differentiated again
        if state.grad_enabled:
            return _cumprod_grad_by_left_out_products(grad, x, d),
        return wrap(_cumprod_grad_around_zeros(grad._data, x._data, result._data, d)),


def _cumprod_grad_around_zeros(g, x, out, d):
    """grad_k = sum_{j>=k} g_j out_j / x_k before a slice's first zero z; at z, the products after
    it up to the next zero, times out_{z-1}; nothing after z."""
    if x.dtype.kind == 'c':  # (holomorphic: the conjugates)
        x, out = xp.conj(x), xp.conj(out)
    zeros_before = xp.cumsum(x == 0, axis=d)
    before = zeros_before == 0
    grad_input = xp.zeros(x.shape, g.dtype, like=g)
    with xp.errstate(all='ignore'):
        w = xp.where(before, out * g, 0)
        grad_input[before] = (xp.flip(xp.cumsum(xp.flip(w, d), axis=d), d) / x)[before]
        first_run = zeros_before == 1
        first = xp.argmax(first_run, axis=d, keepdims=True)
        positions = xp.arange(x.shape[d], like=x).reshape((-1,) + (1,) * (x.ndim - 1 - d))
        at_first = (positions == first) & first_run
        after_first = first_run & ~at_first
        products = xp.cumprod(xp.where(after_first, x, 1), axis=d) * xp.where(first_run, g, 0)
        out_before = xp.where(first == 0, 1, xp.take_along_axis(out, xp.maximum(first - 1, 0), axis=d))
        value = products.sum(axis=d, keepdims=True) * out_before
        grad_input[at_first] = xp.broadcast_to(value, x.shape)[at_first]
    return grad_input


def _cumprod_grad_by_left_out_products(grad, x, d):
    """grad_k = sum_{j>=k} g_j prod_{i<=j, i!=k} x_i, one k at a time: prod(x[:k]) times the
    cumulative products of x[k+1:], written into a slice of zeros (PyTorch's create_graph method)."""
    cat, narrow, expand = ops.cat, ops.narrow, ops.expand
    n = x._data.shape[d]
    grad_input = wrap(xp.zeros(x._data.shape, grad._data.dtype, like=grad._data))
    ones = expand(wrap(xp.ones(1, grad._data.dtype, like=grad._data)), x._data.shape[:d] + (1,) + x._data.shape[d + 1:])
    for k in range(n):
        if k == 0:
            left_out = cat([ones, cumprod(narrow(x, d, 1, n - 1), d)], d)
        else:
            until = prod(narrow(x, d, 0, k), d, True)
            if k == n - 1:
                left_out = until
            else:
                after = cumprod(narrow(x, d, k + 1, n - k - 1), d)
                left_out = cat([until, expand(until, after.shape) * after], d)
        grad_input.select(d, k).copy_(sum(narrow(grad, d, k, n - k) * left_out, d))
    return grad_input


class Logcumsumexp(Op):
    """logcumsumexp(input, dim). Its derivative: dx_k = sum_{j>=k} g_j exp(x_k - out_j),
    computed in log space for the positive and the negative parts of g (PyTorch's method), so
    that nothing overflows."""
    op, node = 'logcumsumexp', 'LogcumsumexpBackward0'
    parameter_types = {'dim': 'int'}
    saved = ('self', 'result', 'dim=given_dim:int64')
    __slots__ = ('dim', 'reverse', 'given_dim')

    def forward(input, dim):
        if input._data.ndim == 0:
            wrap_dims(dim, 0)
        return _logcumsumexp(input, dim)

    def apply(self, grad):
        where, log, exp = ops.where, ops.log, ops.exp
        x, result = self.saved_tensors
        if x._data.ndim == 0 or x._data.size == 0:
            return grad * 1,
        total = None
        for sign in (1, -1):
            g = grad * sign
            positive = wrap(g._data > 0)
            # log(g_j) - out_j where g_j > 0, else -inf: masked before subtracting, so that no
            # -inf - -inf makes a NaN that would swallow other gradients in double backward
            logs = where(positive, log(where(positive, g, 1.0)) - result, float('-inf'))
            part = exp(x + _logcumsumexp(logs, self.dim, not self.reverse))
            total = part if total is None else total - part
        return total,


def _logcumsumexp(input, dim, reverse=False):
    data = input._data
    d = wrap_dims(dim, data.ndim)[0] if data.ndim else None
    if data.dtype.kind not in 'fV':
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{_LABELS[data.dtype.name]}\'')
    if d is None or data.size == 0:
        out = data.copy()
    else:
        with xp.errstate(invalid='ignore'):
            src = xp.flip(data, d) if reverse else data
            out = accumulate(xp.logaddexp, src, d)  # log(e^a + e^b) without overflow, step by step
            out = xp.flip(out, d).copy(order='C') if reverse else xp.asarray(out, order='C')  # (as _scan's)
    result, node = record(out, Logcumsumexp, (input,))
    if node is not None:
        node.dim, node.reverse, node.given_dim = d if d is not None else 0, reverse, dim
        node.save(input, saved_output(result))
    return result


# ---- all, any, count_nonzero -------------------------------------------------------------

def _logical_reduce(np_fn, input, dim, keepdim):
    data = input._data
    # all(()) and any(()) reduce nothing, unlike sum(())
    dims = None if dim is None else () if isinstance(dim, (tuple, list)) and not dim else wrap_dims(dim, data.ndim)
    out = c_order(xp.asarray(np_fn(data, axis=dims, keepdims=keepdim)))
    # uint8 input gives uint8 output, as PyTorch keeps it for backward compatibility
    return wrap(out.astype(xp.uint8) if data.dtype == xp.uint8 else out)


def _logical_overloads(name):
    return Overloads(name, '(Tensor input, *, Tensor out = None)',
                     '(Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None)',
                     '(Tensor input, int dim, bool keepdim = False, *, Tensor out = None)')


class All(Op):
    """all(input, dim=None, keepdim=False): not differentiable."""
    op = 'all'
    parameter_types, listed = {'dim': 'tuple of ints?'}, _logical_overloads('all')
    __slots__ = ()

    def forward(input, dim=None, keepdim=False):
        return _logical_reduce(xp.all, input, dim, keepdim)


class Any(Op):
    """any(input, dim=None, keepdim=False): not differentiable."""
    op = 'any'
    parameter_types, listed = {'dim': 'tuple of ints?'}, _logical_overloads('any')
    __slots__ = ()

    def forward(input, dim=None, keepdim=False):
        return _logical_reduce(xp.any, input, dim, keepdim)


class CountNonzero(Op):
    """count_nonzero(input, dim=None): int64, not differentiable."""
    op = 'count_nonzero'
    parameter_types = {'dim': 'tuple of ints?'}
    listed = Overloads('count_nonzero', '(Tensor input, int dim = None)', '(Tensor input, tuple of ints dim)')
    __slots__ = ()

    def forward(input, dim=None):
        data = input._data
        dims = None if dim is None else wrap_dims(dim, data.ndim)
        return wrap(c_order(xp.asarray(xp.count_nonzero(data, axis=dims)).astype(xp.int64)))


# ---- nansum, nanmean -------------------------------------------------------------------------

class Nansum(Op):
    """nansum(input, dim=None, keepdim=False, *, dtype=None): NaN counted as 0; the gradient
    reaches the elements that are not NaN."""
    op, node = 'nansum', 'NansumBackward0'
    parameter_types = {'dim': 'tuple of ints?'}
    saved = ('self', 'dim=given_dims:int64', 'keepdim=keepdim')
    __slots__ = ('dims', 'keepdim', 'given_dims')

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        data = input._data
        dims = wrap_dims(dim, data.ndim)
        out_dtype = _sum_dtype(data, dtype)
        with xp.errstate(all='ignore'):  # (NumPy's nansum is Python code in NumPy's module)
            if out_dtype is _InFloat32:
                out = _sum_in_float32(xp.where(xp.isnan(data), 0, data).astype(data.dtype), dims, keepdim)
            else:
                out = xp.nansum(data, axis=dims, keepdims=keepdim, dtype=out_dtype)
        out = c_order(xp.asarray(out))
        result, node = record(out, Nansum, (input,))
        if node is not None:
            node.dims, node.keepdim, node.given_dims = dims, keepdim, _as_given(dim)
            node.save(input)
        return result

    def apply(self, grad):
        (x,) = self.saved_tensors
        g = _expand_back(grad, x._data.shape, self.dims, self.keepdim)
        return g * wrap(~xp.isnan(x._data)),


class Nanmean(Op):
    """nanmean(input, dim=None, keepdim=False, *, dtype=None): nansum / (number of non-NaN
    elements), recorded as its parts (as PyTorch)."""
    op = 'nanmean'
    parameter_types = {'dim': 'tuple of ints?'}
    __slots__ = ()

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        if input._data.dtype.kind not in 'fV':
            raise RuntimeError('nanmean(): expected input to have floating point or complex dtype but got '
                               f'{_LABELS[input._data.dtype.name]}')
        if dtype is not None:
            _mean_dtype('nanmean', dtype)
        count = sum(ops.logical_not(ops.isnan(input)), dim, keepdim)
        return nansum(input, dim, keepdim, dtype=dtype) / count


# ---- torch.linalg's norms, written here, below the families that use them (torch.norm's string
# orders, linalg.cond), and bound in leafgrad.linalg, their home (hence their __module__) ----------

# linalg.vector_norm: this family's vector_norm with PyTorch's out= (of the result's dtype), under
# PyTorch's name (the profiler records it as aten::linalg_vector_norm)
linalg_vector_norm = writes_out('linalg_vector_norm')(vector_norm)
linalg_vector_norm.__name__ = linalg_vector_norm.__qualname__ = 'linalg_vector_norm'
linalg_vector_norm.__module__ = 'leafgrad.linalg'


_MATRIX_ORDERS = ('fro', 'nuc', 2, -2, 1, -1, float('inf'), float('-inf'))


@writes_out('linalg_matrix_norm', same_dtype('linalg.matrix_norm expected out tensor dtype {result} but got: {out}'),
            copy=True)
def matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro' is the 2-norm of the entries; 1/-1 (inf/-inf) the max/min absolute column (row)
    sum; 2/-2 and 'nuc' need the singular values (``svdvals``)."""
    check_dtype('linalg_matrix_norm', dtype)  # (PyTorch's parser first: a string dtype is refused, its message
    if ord not in _MATRIX_ORDERS:              # lists the two overloads)  # (PyTorch's checks, in its order)
        raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')
    _check_float(A, 'linalg.matrix_norm')
    if A.ndim < 2:
        raise RuntimeError('linalg.matrix_norm: The input tensor A must have at least 2 dimensions.')
    if len(dim) != 2:
        raise RuntimeError(f'linalg.matrix_norm: dim must be a 2-tuple. Got {" ".join(map(str, dim))}')
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f'linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})')
    if ord == 'fro':
        return linalg_vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ('nuc', 2, -2):
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        s = ops.linalg_svdvals(ops.permute(A, rest + [d0, d1]))
        out = s.sum(-1) if ord == 'nuc' else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                out = out.unsqueeze(d)
        return out
    if ord in (1, -1, float('inf'), float('-inf')):
        # 1-norms sum over rows (dim0) then take the max over columns; inf-norms the reverse
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(sum_dim, keepdim=keepdim)
        if not keepdim and sum_dim < red_dim:
            red_dim -= 1
        return sums.amax(red_dim, keepdim=keepdim) if ord > 0 else sums.amin(red_dim, keepdim=keepdim)
    raise RuntimeError(f'linalg.matrix_norm: Order {ord} not supported.')


matrix_norm.__module__ = 'leafgrad.linalg'
ops.linalg_matrix_norm = matrix_norm  # (for linalg.cond)


class NuclearNorm(Op):
    """nuclear_norm(input, dim=(-2, -1), keepdim=False): deprecated by PyTorch (its warning, once)
    for ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``, which it is."""
    op, method = 'nuclear_norm', False

    def forward(input, dim=(-2, -1), keepdim=False):
        if isinstance(dim, bool):  # (nuclear_norm(input, keepdim): PyTorch's other overload)
            dim, keepdim = (-2, -1), dim
        warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
                  "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
        return ops.linalg_matrix_norm(input, 'nuc', dim, keepdim)


class FrobeniusNorm(Op):
    """frobenius_norm(input, dim, keepdim=False): deprecated by PyTorch (its warning, once) for
    ``linalg.vector_norm(input, 2, dim, keepdim)``; ``norm(input, 2, dim, keepdim)`` here, as in
    PyTorch (NormBackward1)."""
    op, method = 'frobenius_norm', False

    def forward(input, dim, keepdim=False):
        warn_once('at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in '
                  'a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead')
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) > 2:
            raise RuntimeError(f'Expected at most 2 dimensions, but got {len(dims)} dimensions instead.')
        if input._data.dtype.kind not in 'fVc':
            raise RuntimeError('norm(): input dtype should be either floating point or complex. Got '
                               f'{SCALAR_NAMES[backend.from_np(input._data.dtype).name]} instead.')
        out = vector_norm(input, 2, dims, keepdim)
        if out._grad_fn is not None:  # (ATen's norm: its node's name, the same derivative)
            cls = type(out._grad_fn)
            renamed = _NORM_NODES.get(cls)
            if renamed is None:
                renamed = _NORM_NODES[cls] = type('NormBackward1', (cls,), {'__slots__': (), '__module__': __name__})
            out._grad_fn.__class__ = renamed
        return out


_NORM_NODES = {}  # vector_norm's node class -> its subclass named NormBackward1
