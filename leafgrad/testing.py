"""``leafgrad.testing``: ``assert_close``, PyTorch's comparison, its default tolerances per dtype and
its mismatch messages, for leafgrad tensors, NumPy arrays, Python numbers and (nested)
sequences and mappings of them.

Values match when ``|actual - expected| <= atol + rtol * |expected|`` (NaN only with
``equal_nan``). Without explicit tolerances the loosest of the two dtypes' defaults is used:
float16 (1e-3, 1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7), anything else exact.
``assert_allclose`` (PyTorch's deprecated one) compares with its own defaults, whatever the
dtypes; ``make_tensor`` draws a test tensor from the global generator as PyTorch's does, so that
a seeded program gets PyTorch's numbers.
"""
import collections.abc
import math
import warnings

import numpy as np

from . import backend
from .tensor import Size, Tensor

__all__ = ['assert_allclose', 'assert_close', 'make_tensor']

_DTYPE_PRECISIONS = {np.dtype(np.float16): (0.001, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
                     np.dtype(np.float64): (1e-7, 1e-7), np.dtype(np.complex64): (1.3e-6, 1e-5),
                     np.dtype(np.complex128): (1e-7, 1e-7)}


class _Fail(Exception):
    def __init__(self, exc_type, message):
        super().__init__(message)
        self.exc_type, self.message = exc_type, message


def _tolerances(*dtypes):
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(np.dtype(d), (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _as_array(x):
    """(array, kind) for a tensor-like, or None. Python numbers become 0-dim arrays of the
    dtype PyTorch gives them (float64, int64, bool)."""
    if isinstance(x, Tensor):
        return backend.to_numpy(x._data), 'tensor'
    if isinstance(x, np.ndarray):
        return x, 'tensor'
    if isinstance(x, bool):
        return np.asarray(x, dtype=np.bool_), 'scalar'
    if isinstance(x, int):
        return np.asarray(x, dtype=np.int64), 'scalar'
    if isinstance(x, float):
        return np.asarray(x, dtype=np.float64), 'scalar'
    return None


def _kind(x):
    """Which comparison handles x: both sides must be of the same kind (as in PyTorch, a
    tensor and a NumPy array, or a tensor and a number, are not compared)."""
    if isinstance(x, Tensor):
        return 'tensor'
    if isinstance(x, np.ndarray):
        return 'ndarray'
    if isinstance(x, (bool, int, float)):
        return 'scalar'
    return None


def _dtype_name(dtype):
    return repr(backend.from_np(dtype))


def _item(a):
    return a.reshape(()).item()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float('inf') if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg('Scalars', f'Expected {expected} but got {actual}.', abs_diff, None, atol, rel_diff, None,
                         rtol)


def _tensor_msg(actual, expected, matches, rtol, atol):
    n = matches.size
    mismatches = n - int(matches.sum())
    extra = f'Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})'
    a, e = actual.reshape(-1), expected.reshape(-1)
    m = matches.reshape(-1)
    if a.dtype.kind not in 'fc':
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all='ignore'):
        abs_diff = np.abs(a - e)
        abs_diff[m] = 0
        # PyTorch divides in the float dtype (integers: the default float32)
        rel_diff = (abs_diff / np.abs(e)).astype(a.real.dtype if a.dtype.kind in 'fc' else np.float32)
    rel_diff[m] = 0

    def argmax(d):  # torch.max propagates NaN, and reports its index
        nan = np.isnan(d) if d.dtype.kind in 'fV' else None
        i = int(np.argmax(nan)) if nan is not None and nan.any() else int(np.argmax(d))
        return d[i].item(), tuple(int(k) for k in np.unravel_index(i, matches.shape)) if matches.shape else ()
    abs_v, abs_i = argmax(abs_diff)
    rel_v, rel_i = argmax(rel_diff)
    return _mismatch_msg('Tensor-likes', extra, abs_v, abs_i, atol, rel_v, rel_i, rtol)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        if idx is None:
            msg = f'{kind.title()} difference: {diff}'
        else:
            msg = f'Greatest {kind} difference: {diff} at index {idx}'
        if not equality:
            msg += f' (up to {tol} allowed)'
        return msg + '\n'
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f'{extra.strip()}\n'
    msg += diff_msg('absolute', abs_diff, abs_idx, atol)
    msg += diff_msg('relative', rel_diff, rel_idx, rtol)
    return msg.strip()


def _compare_leaf(actual, expected, rtol, atol, equal_nan, check_dtype):
    (a, kind), (e, _) = _as_array(actual), _as_array(expected)
    if a.shape != e.shape:
        raise _Fail(AssertionError, f"The values for attribute 'shape' do not match: {Size(a.shape)!r} != "
                                    f'{Size(e.shape)!r}.')
    if check_dtype and a.dtype != e.dtype:
        raise _Fail(AssertionError, f"The values for attribute 'dtype' do not match: {_dtype_name(a.dtype)} != "
                                    f'{_dtype_name(e.dtype)}.')
    if rtol is None:
        rtol, atol = _tolerances(a.dtype, e.dtype)
    if a.dtype != e.dtype:
        common = np.promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    if a.dtype.kind == 'b':
        matches = a == e
    else:
        with np.errstate(all='ignore'):
            matches = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan) if a.dtype.kind in 'fc' \
                else np.abs(a.astype(np.float64) - e.astype(np.float64)) <= atol + rtol * np.abs(e.astype(np.float64))
    if matches.all():
        return
    if a.shape == () and kind == 'scalar':
        raise _Fail(AssertionError, _scalar_msg(_item(a), _item(e), rtol, atol))
    if a.shape == ():
        raise _Fail(AssertionError, _scalar_msg(_item(a), _item(e), rtol, atol))
    raise _Fail(AssertionError, _tensor_msg(a, e, matches, rtol, atol))


def _compare(actual, expected, path, rtol, atol, equal_nan, check_dtype):
    kind = _kind(actual)
    if kind is not None and kind == _kind(expected):
        try:
            _compare_leaf(actual, expected, rtol, atol, equal_nan, check_dtype)
        except _Fail as f:
            if path:
                f.message += '\n\nThe failure occurred for item ' + ''.join(f'[{k!r}]' for k in path)
            raise
        return
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(actual, str) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Fail(AssertionError, f'The length of the sequences mismatch: {len(actual)} != {len(expected)}')
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, path + [i], rtol, atol, equal_nan, check_dtype)
        return
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys_a, keys_e = set(actual), set(expected)
        if keys_a != keys_e:
            missing, extra = keys_e - keys_a, keys_a - keys_e
            raise _Fail(AssertionError, 'The keys of the mappings do not match:\n'
                                        f'Missing keys in the actual mapping: {sorted(missing)}\n'
                                        f'Additional keys in the actual mapping: {sorted(extra)}')
        for key in expected:
            _compare(actual[key], expected[key], path + [key], rtol, atol, equal_nan, check_dtype)
        return
    if actual is None and expected is None:
        return
    raise _Fail(TypeError, f'No comparison pair was able to handle inputs of type {_type_repr(actual)} and '
                           f'{_type_repr(expected)}.')


def _type_repr(x):
    # the tensor class as the public name spells it (leafgrad.Tensor, as torch.Tensor)
    return "<class 'leafgrad.Tensor'>" if type(x) is Tensor else repr(type(x))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError (with PyTorch's message) unless ``actual`` and ``expected`` are close."""
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    try:
        _compare(actual, expected, [], rtol, atol, equal_nan, check_dtype)
    except _Fail as f:
        message = f.message
        if msg is not None:
            message = msg(message) if callable(msg) else msg
        raise f.exc_type(message) from None


_ALLCLOSE_PRECISIONS = {np.dtype(np.float16): (1e-3, 1e-3), np.dtype(np.float32): (1e-4, 1e-5),
                        np.dtype(np.float64): (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=''):
    """PyTorch's deprecated comparison: ``expected`` in ``actual``'s dtype, looser default
    tolerances, NaN equal to NaN, dtypes and strides not compared."""
    from .creation import tensor as _tensor_fn
    warnings.warn('`leafgrad.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. '
                  'Please use `leafgrad.testing.assert_close()` instead. You can find detailed upgrade instructions in '
                  'https://github.com/pytorch/pytorch/issues/61844.', FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _tensor_fn(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor_fn(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtols, atols = zip(*[_ALLCLOSE_PRECISIONS.get(np.dtype(t._data.dtype), (0.0, 0.0)) for t in (actual, expected)])
        rtol, atol = max(rtols), max(atols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` drawn uniformly from ``[low, high)`` (defaults by dtype: bool [0, 2),
    unsigned [0, 10), signed [-9, 10), floating and complex [-9, 9)), by PyTorch's draws:
    ``randint`` for bool and integers, ``uniform_`` for the others (each part of a complex)."""
    from . import creation, ops
    from ._type_info import finfo, iinfo
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f'The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got '
                         f'noncontiguous={noncontiguous!r} and memory_format={memory_format!r}')
    kind = 'f' if dtype is backend.bfloat16 else np.dtype(dtype.np).kind
    exact = kind in 'biu'
    if requires_grad and exact:
        raise ValueError(f'`requires_grad=True` is not supported for boolean and integral dtypes, but got '
                         f'dtype={dtype}')
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = shape[:-1] + (2 * shape[-1],)
    if dtype is backend.bool_:
        lowest, highest, default = 0, 2, (0, 2)
    elif exact:
        info = iinfo(dtype)
        lowest, highest, default = info.min, info.max + (dtype is not backend.int64), (-9, 10)
    else:
        info = finfo(dtype)
        lowest, highest, default = info.min, info.max, (-9, 9)
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f'`low` and `high` cannot be NaN, but got low={low} and high={high}')
    if low == high and not exact:
        warnings.warn('Passing `low==high` to `leafgrad.testing.make_tensor` for floating or complex types is deprecated '
                      'since 2.1 and will be removed in 2.3. Use `leafgrad.full(...)` instead.', FutureWarning, stacklevel=2)
    elif low >= high:
        raise ValueError(f'`low` must be less than `high`, but got {low} >= {high}')
    elif high < lowest or low >= highest:
        raise ValueError(f'The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only '
                         f'supports [{lowest}, {highest})')
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if exact:
        result = creation.randint(math.ceil(low), math.ceil(high), shape, device=device, dtype=dtype)
    else:
        result = creation.empty(shape, device=device, dtype=dtype)
        target = ops.view_as_real(result) if kind == 'c' else result
        if high - low >= info.max:  # (the width would overflow: drawn halved, then doubled)
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if exact else info.tiny
    if not exact:
        result.requires_grad = requires_grad
    return result
