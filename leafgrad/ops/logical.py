"""Logical and bitwise ops, and the floating-point class tests (isnan, isinf, isfinite).

None of these is differentiable: their results are bool or integer tensors, recorded nowhere.
"""
from .. import backend
from ._util import binary_operands, broadcast_error, wrap, xp
from ._inplace import inplace
from ..tensor import Tensor

_LABELS = {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'int64': 'Long', 'int32': 'Int',
           'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool', 'complex64': 'ComplexFloat',
           'complex128': 'ComplexDouble'}


def _array(x):
    return x._data if isinstance(x, Tensor) else xp.asarray(x)


def _logical(ufunc):
    def op(input, other):
        try:
            return wrap(ufunc(_array(input), _array(other)))
        except ValueError:
            raise broadcast_error(input, other) from None
    op.__name__ = ufunc.__name__
    return op


logical_and = _logical(xp.logical_and)
logical_or = _logical(xp.logical_or)
logical_xor = _logical(xp.logical_xor)


def logical_not(input):
    return wrap(xp.logical_not(input._data))


def _bitwise(ufunc, kernel):
    def op(input, other):
        x, y = binary_operands(input, other)
        x = xp.asarray(x)
        dt = backend.result_type(input, other).np
        if dt.kind in 'fV':
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{_LABELS[dt.name]}\'')
        try:
            return wrap(ufunc(x.astype(dt, copy=False), xp.asarray(y).astype(dt, copy=False)))
        except ValueError:
            raise broadcast_error(input, other) from None
    op.__name__ = ufunc.__name__
    return op


bitwise_and = _bitwise(xp.bitwise_and, 'bitwise_and')
bitwise_or = _bitwise(xp.bitwise_or, 'bitwise_or')
bitwise_xor = _bitwise(xp.bitwise_xor, 'bitwise_xor')


def bitwise_not(input):
    if input._data.dtype.kind in 'fV':
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_LABELS[input._data.dtype.name]}\'')
    return wrap(xp.invert(input._data))


def invert(self):
    """The ``~`` operator."""
    if self._data.dtype.kind in 'fV':
        raise TypeError('~ (operator.invert) is only implemented on integer and Boolean-type tensors')
    return wrap(xp.invert(self._data))


def isnan(input):
    return wrap(xp.isnan(input._data))


def isinf(input):
    return wrap(xp.isinf(input._data))


def isposinf(input):
    return wrap(xp.isposinf(input._data))


def isneginf(input):
    return wrap(xp.isneginf(input._data))


def isfinite(input):
    return wrap(xp.isfinite(input._data))


def isreal(input):
    return wrap(xp.ones(input._data.shape, dtype=bool))


def _inplace_of(fn):
    def op_(self, *args):
        return inplace(self, lambda s: fn(s, *args), tuple(a for a in args if isinstance(a, Tensor)))
    op_.__name__ = fn.__name__ + '_'
    return op_


# ---- comparing whole tensors ----------------------------------------------------------------

def _check_pair(name, input, other):
    for pos, (arg, t) in enumerate((('input', input), ('other', other)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not {type(t).__name__}")


def _close(name, input, other, rtol, atol, equal_nan):
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaNs
    only with ``equal_nan``), as an array; both tensors of one dtype, as PyTorch requires."""
    _check_pair(name, input, other)
    a, b = input._data, other._data
    if a.dtype != b.dtype:
        raise RuntimeError(f'{_LABELS[a.dtype.name]} did not match {_LABELS[b.dtype.name]}')
    try:
        xp.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(input, other) from None
    return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return wrap(_close('isclose', input, other, rtol, atol, equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is ``isclose``: a Python bool."""
    return bool(_close('allclose', input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """Whether the two tensors have the same size and elements (compared after promotion; NaN
    equals nothing): a Python bool."""
    _check_pair('equal', input, other)
    return bool(xp.array_equal(input._data, other._data))


FUNCTIONS = ['logical_and', 'logical_or', 'logical_xor', 'logical_not', 'bitwise_and', 'bitwise_or',
             'bitwise_xor', 'bitwise_not', 'isnan', 'isinf', 'isposinf', 'isneginf', 'isfinite', 'isreal',
             'isclose', 'allclose', 'equal']
METHODS = {name + '_': _inplace_of(globals()[name]) for name in
           ['logical_and', 'logical_or', 'logical_xor', 'logical_not', 'bitwise_and', 'bitwise_or',
            'bitwise_xor', 'bitwise_not']}
