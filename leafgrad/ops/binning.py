"""Counting and searching: bincount, histc, histogram, searchsorted, bucketize, isin and
unravel_index, each declared once (``_op.Op``). None of them is differentiable (counts and
positions are piecewise constant), so each computes on arrays and wraps the result; histogram
records PyTorch's NotImplemented node for an input that requires grad, as PyTorch does.
"""
import math

from .. import backend, return_types
from .._arg_parser import Overloads, is_number
from ._op import Op, exact_dtype, out_rule, same_dtype
from ._util import SCALAR_NAMES, NotImplementedNode, on_gpu, ops, record_many, wrap, xp
from ..tensor import Tensor


def _label(arr):
    return SCALAR_NAMES.get(arr.dtype.name, arr.dtype.name) if arr.dtype.kind != 'V' else 'BFloat16'


def _array(x, overloads=None, args=()):
    """A tensor's array, or a number's; anything else refused by PyTorch's parser (``overloads``
    bound to ``args``), checked only where ``x`` is no tensor."""
    if isinstance(x, Tensor):
        return x._data
    if overloads is not None and not is_number(x):
        overloads.bind(args, {})
    like = next((a._data for a in args if isinstance(a, Tensor)), None)
    return xp.asarray(x, like=like) if on_gpu(like) else xp.asarray(x)  # (beside a GPU's tensor: on its device)


# PyTorch's signatures of the ops that take a number for one tensor: anything else is refused with
# the parser's listing of them
_SEARCHSORTED = Overloads(
    'searchsorted', '(Tensor sorted_sequence, Tensor input, *, bool out_int32 = False, bool right = False, '
    'str side = None, Tensor sorter = None, Tensor out = None)',
    '(Tensor sorted_sequence, Number self, *, bool out_int32 = False, bool right = False, str side = None, '
    'Tensor sorter = None, Tensor out = None)')
_BUCKETIZE = Overloads(
    'bucketize', '(Tensor input, Tensor boundaries, *, bool out_int32 = False, bool right = False, Tensor out = None)',
    '(Number self, Tensor boundaries, *, bool out_int32 = False, bool right = False)')
_ISIN = Overloads(
    'isin', '(Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = False, '
    'Tensor out = None)',
    '(Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = False, Tensor out = None)',
    '(Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = False, Tensor out = None)')


# out='s dtype rules, PyTorch's messages
_HIST_OUT = same_dtype('torch.histogram: input tensor and hist tensor should have the same dtype, but got input '
                       '{result_cpp} and hist {out_cpp}')
_BIN_EDGES_OUT = same_dtype('torch.histogram: input tensor and bin_edges tensor should have the same dtype, but got '
                            'input {result_cpp} and bin_edges {out_cpp} for dimension 0')


def _SEARCHSORTED_OUT(rd, od):
    if od != rd:
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                           f"{SCALAR_NAMES[od.name]} and out_int32 flag is {rd.name == 'int32'}")


# ---- bincount ---------------------------------------------------------------------------------

class Bincount(Op):
    """Not differentiable; PyTorch's function takes no out=."""
    op = 'bincount'
    parameter_types = {'weights': 'Tensor?', 'minlength': 'int'}
    __slots__ = ()

    def forward(input, weights=None, minlength=0):
        """bincount(input, weights=None, minlength=0) -> Tensor

        Occurrences of each value 0..max of a 1-D non-negative integer tensor; with ``weights``,
        their sums (float64 unless the weights are float32, as PyTorch's kernel)."""
        x = input._data
        if x.dtype.kind not in 'iu':
            raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_label(x)}\'')
        if minlength < 0:
            raise RuntimeError('minlength should be >= 0')
        if x.ndim != 1 or (x.size and x.min() < 0):
            raise RuntimeError('bincount only supports 1-d non-negative integral inputs.')
        if weights is None:
            return wrap(xp.bincount(x, minlength=minlength).astype(xp.int64))
        w = weights._data
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise RuntimeError('weights should be 1-d and have the same length as input')
        dt = xp.float32 if w.dtype == xp.float32 else xp.float64
        return wrap(xp.bincount(x, weights=w.astype(xp.float64), minlength=minlength).astype(dt))


# ---- histc and histogram ---------------------------------------------------------------------

def _check_float_input(x, kernel):
    if x.dtype.kind not in 'f':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_label(x)}\'')


def _data_range(x, lo, hi):
    """PyTorch's range of a histogram: the given one, else the data's; an empty range widened
    by 1 on each side."""
    if lo == hi and x.size:
        finite = x[xp.isfinite(x)]
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    return lo, hi


class Histc(Op):
    """Not differentiable (an ``out`` that requires grad is no error)."""
    op, out = 'histc', out_rule('histc', _HIST_OUT, differentiable=False)
    parameter_types = {'bins': 'int', 'min': 'Number', 'max': 'Number'}
    __slots__ = ()

    def forward(input, bins=100, min=0, max=0):
        """histc(input, bins=100, min=0, max=0, *, out=None) -> Tensor

        Counts of the elements in ``bins`` equal-width bins over [min, max] (the data's range
        when both are 0); elements outside are ignored, max falls in the last bin."""
        x = input._data
        if x.dtype.kind == 'b':  # (PyTorch's bool input fails in its bin edges first)
            raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
        if x.dtype.kind != 'V':  # (bfloat16 is counted as the other floats: in float64, the counts rounded)
            _check_float_input(x, 'histogram_cpu')
        if bins <= 0:
            raise RuntimeError(f'torch.histogram(): bins must be > 0, but got {bins} for dimension 0')
        if min > max:
            raise RuntimeError('torch.histc: max must be larger than min')
        lo, hi = _data_range(x, float(min), float(max))
        if not (xp.isfinite(lo) and xp.isfinite(hi)):
            raise RuntimeError(f'torch.histc: range of [{lo:g}, {hi:g}] is not finite')
        flat = x.reshape(-1).astype(xp.float64)
        inside = flat[(flat >= lo) & (flat <= hi)]
        # PyTorch's linear bin position, the last edge belonging to the last bin
        pos = ((inside - lo) * bins / (hi - lo)).astype(xp.int64)
        pos[pos == bins] = bins - 1
        return wrap(xp.bincount(pos, minlength=bins).astype(x.dtype))


class Histogram(Op):
    """PyTorch gives histogram no derivative: its NotImplemented node, recorded when an input
    requires grad."""
    op, out = 'histogram', out_rule('aten::histogram', (_HIST_OUT, _BIN_EDGES_OUT), label='histogram')
    listed = Overloads('histogram', '(Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, '
                       'tuple of Tensors out = None)', '(Tensor input, int bins = 100, *, tuple of floats range = None, '
                       'Tensor weight = None, bool density = False, tuple of Tensors out = None)')
    __slots__ = ()

    def forward(input, bins, *, range=None, weight=None, density=False):
        """histogram(input, bins, *, range=None, weight=None, density=False, out=None)

        (hist, bin_edges): ``bins`` an int (equal widths over ``range`` or the data's) or a 1-D tensor of increasing
        edges; a value lies in [edge_i, edge_i+1), the last bin closed."""
        x = input._data
        _check_float_input(x, 'histogramdd')
        if isinstance(bins, Tensor):
            edges = bins._data
            if edges.ndim != 1:
                raise RuntimeError(f'torch.histogram(): bins tensor should have one dimension, but got {edges.ndim} '
                                   'dimensions in the bins tensor for dimension 0')
            if edges.dtype != x.dtype:
                raise RuntimeError(f'torch.histogram: input tensor and bins tensors should have the same dtype, '
                                   f'but got input {_label(x).lower()} and bins {_label(edges).lower()}')
            if edges.shape[0] < 1:
                raise RuntimeError('torch.histogram(): bins tensor should have at least 1 element, but got 0 elements '
                                   'for dimension 0')
        else:
            if bins <= 0:
                raise RuntimeError(f'torch.histogram(): bins must be > 0, but got {bins} for dimension 0')
            if range is not None:
                lo, hi = float(range[0]), float(range[1])
                if lo > hi:
                    raise RuntimeError(f'torch.histogram(): max must be larger than min for dimension 0, but got '
                                       f'min {lo:g} and max {hi:g}')
            else:
                lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges = backend.array_module(x).linspace(lo, hi, bins + 1).astype(x.dtype)  # (NumPy's has no like=)
        w = None
        if weight is not None:
            w = weight._data
            if w.shape != x.shape:
                raise RuntimeError('torch.histogramdd(): if weight tensor is provided it should have the same shape '
                                   'as the input tensor excluding its innermost dimension')
            w = w.reshape(-1)
        flat = x.reshape(-1)
        n = edges.shape[0] - 1
        keep = (flat >= edges[0]) & (flat <= edges[-1])
        pos = xp.searchsorted(edges, flat[keep], side='right') - 1
        pos[pos == n] = n - 1
        hist = xp.bincount(pos, weights=None if w is None else w[keep].astype(xp.float64), minlength=n)
        hist = hist.astype(xp.float64)
        if density:
            total = hist.sum()
            with xp.errstate(all='ignore'):
                hist = hist / (total * xp.diff(edges.astype(xp.float64)))
        # PyTorch gives histogram no derivative: its NotImplemented node when an input requires grad
        inputs = tuple(t for t in (input, bins, weight) if isinstance(t, Tensor))
        outs, node = record_many([hist.astype(x.dtype), edges.copy()], NotImplementedNode, inputs)
        if node is not None:
            node.op_name = 'histogram'
        return return_types.histogram(*outs)


class Histogramdd(Op):
    """histogramdd(input, bins, *, range=None, weight=None, density=False): (hist, bin_edges), the
    histogram of the points in ``input``'s rows (its innermost dim the N coordinates); ``bins``
    an int, N ints or N 1-D tensors of edges; ``range`` 2N floats, (min, max) of each dim. No
    derivative, as in PyTorch."""
    op, method = 'histogramdd', False
    overloads = Overloads(
        'histogramdd',
        '(Tensor input, int bins, tuple of floats range = None, Tensor weight = None, bool density = False)',
        '(Tensor input, tuple of ints bins, tuple of floats range = None, Tensor weight = None, bool density = False)',
        '(Tensor input, tuple of Tensors bins, tuple of floats range = None, Tensor weight = None, '
        'bool density = False)')

    def forward(input, bins, *, range=None, weight=None, density=False):
        x = input._data
        _check_float_input(x, 'histogramdd')
        if x.ndim < 2:
            raise RuntimeError('torch.histogramdd: input tensor should have at least 2 dimensions')
        n = x.shape[-1]
        bins = [bins] * n if isinstance(bins, int) else list(bins)
        if len(bins) != n:
            raise RuntimeError('histogramdd: The size of bins must be equal to the innermost dimension of the input.')
        if range is not None and len(range) != 2 * n:
            raise RuntimeError(f'torch.histogramdd: for a {n}-dimensional histogram range should have {2 * n} '
                               f'elements, but got {len(range)}')
        points = x.reshape(-1, n)
        edges = []
        for d, b in enumerate(bins):
            if isinstance(b, Tensor):
                edges.append(b._data.astype(x.dtype, copy=True))
                continue
            if b <= 0:
                raise RuntimeError(f'torch.histogram(): bins must be > 0, but got {b} for dimension {d}')
            if range is not None:
                lo, hi = float(range[2 * d]), float(range[2 * d + 1])
                if lo > hi:
                    raise RuntimeError(f'torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} '
                                       f'for dimension {d}')
            else:
                column = points[:, d]
                lo, hi = (float(column.min()), float(column.max())) if column.size else (0.0, 0.0)
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges.append(backend.array_module(x).linspace(lo, hi, b + 1).astype(x.dtype))  # (NumPy's: no like=)
        w = None
        if weight is not None:
            w = weight._data
            if w.shape != x.shape[:-1]:
                raise RuntimeError('torch.histogramdd: if weight tensor is provided it should have the same shape as '
                                   'the input tensor excluding its innermost dimension, but got input with shape '
                                   f'{list(x.shape)} and weight with shape {list(w.shape)}')
            w = w.reshape(-1).astype(xp.float64)
        keep = xp.ones(points.shape[0], dtype=bool, like=points)
        positions = []
        for d, e in enumerate(edges):  # [edge_i, edge_i+1), the last bin closed; a point outside any is dropped
            column = points[:, d]
            keep &= (column >= e[0]) & (column <= e[-1])
            pos = xp.searchsorted(e, column, side='right') - 1
            positions.append(xp.clip(pos, 0, e.shape[0] - 2))
        shape = tuple(e.shape[0] - 1 for e in edges)
        flat = xp.ravel_multi_index(tuple(p[keep] for p in positions), shape) if keep.any() else \
            xp.zeros(0, xp.intp, like=points)
        hist = xp.bincount(flat, weights=None if w is None else w[keep], minlength=math.prod(shape)).astype(xp.float64)
        hist = hist.reshape(shape)
        if density:
            total = hist.sum()
            widths = xp.ones(shape, like=points)
            for d, e in enumerate(edges):
                widths = widths * xp.diff(e.astype(xp.float64)).reshape((-1,) + (1,) * (n - d - 1))
            with xp.errstate(all='ignore'):
                hist = hist / (total * widths)
        inputs = tuple(t for t in (input, weight, *bins) if isinstance(t, Tensor))
        outs, node = record_many([hist.astype(x.dtype)] + edges, NotImplementedNode, inputs)
        if node is not None:
            node.op_name = 'histogramdd'
        return return_types.histogramdd(outs[0], tuple(outs[1:]))


# ---- searchsorted and bucketize -----------------------------------------------------------------

def _side(side, right):
    if side is not None:
        if side not in ('left', 'right'):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == 'left':
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               'while right was True')
        return side
    return 'right' if right else 'left'


def _refuse_scalar(scalar, seq):
    """PyTorch's error for a number searched in boundaries of other than 1 dim."""
    if scalar:
        raise RuntimeError('torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension '
                           f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")


class Searchsorted(Op):
    """Not differentiable; a function only (PyTorch has no Tensor.searchsorted)."""
    op, method = 'searchsorted', False
    out = out_rule('searchsorted', _SEARCHSORTED_OUT, differentiable=False)
    __slots__ = ()

    def forward(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
        """searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None)

        For each value, the index at which it would be inserted into the innermost dimension of
        ``sorted_sequence`` (its leading dimensions matching ``input``'s) keeping it sorted."""
        try:
            seq = sorted_sequence._data
        except AttributeError:  # (a sequence that is no tensor: PyTorch's parser's listing)
            _SEARCHSORTED.bind((sorted_sequence, input), {})
            raise
        scalar = not isinstance(input, Tensor)
        values = _array(input, _SEARCHSORTED, (sorted_sequence, input)) if scalar else input._data
        how = _side(side, right)
        if seq.ndim == 0:
            _refuse_scalar(scalar, seq)
            raise RuntimeError('torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 '
                               'dimension')
        if seq.ndim > 1 and (scalar or seq.shape[:-1] != values.shape[:-1]):
            _refuse_scalar(scalar, seq)
            raise RuntimeError('torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 '
                               'dimensions of boundaries tensor and input value tensor must match, but we got '
                               f'boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}')
        if sorter is not None:
            order = sorter._data
            if order.dtype != xp.int64:
                raise RuntimeError(f'torch.searchsorted(): sorter must be a tensor of long dtype but got '
                                   f'{_label(order)}')
            if order.shape != seq.shape:
                raise RuntimeError(f'torch.searchsorted(): boundary and sorter must have the same size, but got '
                                   f'boundary tensor {list(seq.shape)}and got sorter tensor {list(order.shape)}')
            seq = xp.take_along_axis(seq, order, axis=-1)
        dt = xp.int32 if out_int32 else xp.int64
        if seq.ndim == 1:
            return wrap(xp.asarray(xp.searchsorted(seq, values, side=how)).astype(dt))
        flat_seq = seq.reshape(-1, seq.shape[-1])
        flat_val = values.reshape(flat_seq.shape[0], -1)
        res = xp.stack([xp.searchsorted(s, v, side=how) for s, v in zip(flat_seq, flat_val)]) if flat_seq.shape[0] \
            else xp.zeros(flat_val.shape, dtype=dt, like=flat_val)
        return wrap(res.reshape(values.shape).astype(dt))


class Bucketize(Op):
    """Not differentiable; a function only."""
    op, method = 'bucketize', False
    out = out_rule('bucketize', _SEARCHSORTED_OUT, differentiable=False)
    __slots__ = ()

    def forward(input, boundaries, *, out_int32=False, right=False):
        """bucketize(input, boundaries, *, out_int32=False, right=False, out=None) -> Tensor

        searchsorted with the boundaries first: the bucket of each value of ``input``."""
        try:
            if boundaries._data.ndim != 1:
                raise RuntimeError(f'boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})')
            return ops.searchsorted(boundaries, input, out_int32=out_int32, right=right)
        except (AttributeError, TypeError):  # (no tensor nor number: PyTorch's parser's listing, in its words)
            if not isinstance(boundaries, Tensor):
                _BUCKETIZE.bind((input, boundaries), {})
            _array(input, _BUCKETIZE, (input, boundaries))
            raise


# ---- isin and unravel_index -----------------------------------------------------------------------

class Isin(Op):
    """Not differentiable; a function only; out= of bool only (PyTorch's out kernel)."""
    op, method = 'isin', False
    out = out_rule('isin', exact_dtype, differentiable=False)
    __slots__ = ()

    def forward(elements, test_elements, *, assume_unique=False, invert=False):
        """isin(elements, test_elements, *, assume_unique=False, invert=False, out=None) -> Tensor

        Whether each element of ``elements`` occurs in ``test_elements`` (either may be a number)."""
        args = (elements, test_elements)
        a, b = _array(elements, _ISIN, args), _array(test_elements, _ISIN, args)
        return wrap(xp.asarray(xp.isin(a, b, invert=invert)))


class UnravelIndex(Op):
    """Not differentiable; a function only, without out= (PyTorch's is Python code)."""
    op, method = 'unravel_index', False
    __slots__ = ()

    def forward(indices, shape):
        """unravel_index(indices, shape) -> tuple of Tensors

        The coordinates of flat ``indices`` in a tensor of ``shape``: one int64 tensor per dimension."""
        if not isinstance(indices, Tensor):
            raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices)}")
        idx = indices._data
        if idx.dtype.kind not in 'iu':
            raise TypeError(f"expected 'indices' to be integer dtype, but got {backend.from_np(idx.dtype)}")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if any(s < 0 for s in shape):
            raise ValueError('Expected \'shape\' to have only nonnegative elements.')
        coords, rest = [], idx.astype(xp.int64)
        for size in reversed(shape):
            if size == 0:
                raise RuntimeError('Expected \'shape\' to have only nonnegative elements.')
            coords.append(rest % size)
            rest = rest // size
        return tuple(wrap(c) for c in reversed(coords))

