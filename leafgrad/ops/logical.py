"""Logical and bitwise ops, and the floating-point class tests (isnan, isinf, isfinite), each
declared once (``_op.Op``).

None of these is differentiable: their results are bool or integer tensors, recorded nowhere
(``differentiable = False``: an ``out`` that requires grad is no error, as in PyTorch).
"""
import warnings

from .. import backend
from .._arg_parser import Overloads
from ._op import (CAST, NO_GRAD_CAST, RESIZE_WARNING, SAME, Op, _name_function, castable_dtype, check_out, fill_out,
                  inplace_runner)
from ._util import (SCALAR_NAMES, binary_operands, broadcast_error, is_operand, iterated, on_gpu, operator_refusal,
                    state, wrap, xp)
from ..tensor import Tensor
from .._arg_parser import refuse_arguments


def _array(x):
    return x._data if isinstance(x, Tensor) else xp.asarray(x)


class _NotDifferentiable(Op):
    """An op of bool or integer results: out= by TensorIterator's rule, no autograd check."""
    differentiable = False
    out = CAST
    inplace = True


def _logical(ufunc, name):
    def forward(input, other):  # (the declaration's ``tensors`` refuses a number for other)
        try:
            return wrap(ufunc(_array(input), _array(other)))
        except ValueError:
            raise broadcast_error(input, other) from None
    return forward


class LogicalAnd(_NotDifferentiable):
    """logical_and(input, other, *, out=None)."""
    op, forward = 'logical_and', _logical(xp.logical_and, 'logical_and')
    tensors = ('input', 'other')


class LogicalOr(_NotDifferentiable):
    """logical_or(input, other, *, out=None)."""
    op, forward = 'logical_or', _logical(xp.logical_or, 'logical_or')
    tensors = ('input', 'other')


class LogicalXor(_NotDifferentiable):
    """logical_xor(input, other, *, out=None)."""
    op, forward = 'logical_xor', _logical(xp.logical_xor, 'logical_xor')
    tensors = ('input', 'other')


class LogicalNot(_NotDifferentiable):
    """logical_not(input, *, out=None)."""
    op = 'logical_not'

    def forward(input):
        return wrap(xp.logical_not(input._data))


def _bitwise(ufunc, kernel):
    def forward(input, other):
        try:
            x, y = binary_operands(input, other)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            return operator_refusal()
        x = xp.asarray(x)
        dt = backend.result_type(input, other).np
        if dt.kind in 'fVc':
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{SCALAR_NAMES[dt.name]}\'')
        try:
            x, y = x.astype(dt, copy=False), xp.asarray(y).astype(dt, copy=False)
            data = ufunc(x, y)
            return wrap(iterated(data, x, y) if data.ndim > 1 else data)
        except ValueError:
            raise broadcast_error(input, other) from None
    return forward


def _bitwise_out(name, out, result, differentiable):
    """NO_GRAD_CAST, with PyTorch's resize warning given twice where ``out`` is resized and of
    another dtype (its bitwise kernels resize a temporary of the result's dtype, then ``out``)."""
    if isinstance(out, Tensor) and not (out._requires_grad and state.grad_enabled) and out._data.size \
            and out._data.shape != result._data.shape and out._data.dtype != result._data.dtype \
            and backend.from_np(result._data.dtype).category <= backend.from_np(out._data.dtype).category:
        warnings.warn(RESIZE_WARNING.format(list(out._data.shape), list(result._data.shape)), UserWarning,
                      stacklevel=3)
    return NO_GRAD_CAST(name, out, result)


def _cast_checked(input, other, out):
    """TensorIterator's check that the result's dtype casts to ``out``'s (an in-place op's self),
    made before its kernel refuses a float or bool dtype."""
    if is_operand(other) and (isinstance(input, Tensor) or isinstance(other, Tensor)):
        castable_dtype(backend.result_type(input, other), backend.from_np(out._data.dtype))


def _bitwise_function(forward, name):
    """The function with out=: the cast to ``out``'s dtype checked before the kernel runs."""
    def function(input, other, *, out=None):
        if out is None:
            return forward(input, other)
        if isinstance(out, Tensor):
            _cast_checked(input, other, out)
        return _bitwise_out(name, out, forward(input, other), False)
    _name_function(function, name)  # (Python's TypeErrors name it)
    return function


def _bitwise_inplace(forward):
    """The in-place variant: the cast to self's dtype checked before the kernel runs (an integer
    tensor with a float operand: PyTorch's cast error, not the kernel's)."""
    def inplace(self, other):
        try:
            if not is_operand(other):
                raise TypeError(f'unsupported operand type: {type(other).__name__}')
        except TypeError:  # (x <<= 'a': NotImplemented, then Python's error; else the parser's)
            return operator_refusal()
        _cast_checked(self, other, self)
        return inplace_runner[0](self, lambda s: forward(s, other), (other,) if isinstance(other, Tensor) else ())
    return inplace


def _bitwise_overloads(name):
    """PyTorch's signatures of a binary bitwise op, which its TypeErrors list."""
    return Overloads(name, '(Tensor input, Tensor other, *, Tensor out = None)', '(Number self, Tensor other)',
                     '(Tensor input, Number other, *, Tensor out = None)')


class _Bitwise(_NotDifferentiable):
    out = _bitwise_out


class BitwiseAnd(_Bitwise):
    """bitwise_and(input, other, *, out=None) (also ``&``)."""
    op, forward, operators = 'bitwise_and', _bitwise(xp.bitwise_and, 'bitwise_and'), ('__and__',)
    reflected_operators, inplace_operators = ('__rand__',), ('__iand__',)
    function, inplace, refusals = _bitwise_function(forward, op), _bitwise_inplace(forward), _bitwise_overloads(op)


class BitwiseOr(_Bitwise):
    """bitwise_or(input, other, *, out=None) (also ``|``)."""
    op, forward, operators = 'bitwise_or', _bitwise(xp.bitwise_or, 'bitwise_or'), ('__or__',)
    reflected_operators, inplace_operators = ('__ror__',), ('__ior__',)
    function, inplace, refusals = _bitwise_function(forward, op), _bitwise_inplace(forward), _bitwise_overloads(op)


class BitwiseXor(_Bitwise):
    """bitwise_xor(input, other, *, out=None) (also ``^``)."""
    op, forward, operators = 'bitwise_xor', _bitwise(xp.bitwise_xor, 'bitwise_xor'), ('__xor__',)
    reflected_operators, inplace_operators = ('__rxor__',), ('__ixor__',)
    function, inplace, refusals = _bitwise_function(forward, op), _bitwise_inplace(forward), _bitwise_overloads(op)


# ---- shifts ----------------------------------------------------------------------------------

def _shifted(x, y, left):
    """x shifted by y (arrays of one integer dtype) as PyTorch's CPU kernels shift: a left shift
    by a negative amount or by the dtype's width or more gives 0; a right shift by one of those
    gives the sign (-1 or 0) of a signed x, 0 of an unsigned one. A left shift is done on the
    unsigned bits, as theirs (its overflow wraps)."""
    bits = x.dtype.itemsize * 8
    outside = (y < 0) | (y >= bits)
    amount = xp.where(outside, 0, y)
    if left:
        unsigned = xp.dtype(f'u{x.dtype.itemsize}')
        shifted = xp.left_shift(x.astype(unsigned), amount.astype(unsigned)).astype(x.dtype)
        return xp.asarray(xp.where(outside, 0, shifted))
    shifted = xp.right_shift(x, amount)
    if x.dtype.kind == 'u':
        return xp.asarray(xp.where(outside, 0, shifted))
    return xp.asarray(xp.where(outside, xp.right_shift(x, bits - 1), shifted))


def _shift(left, kernel):
    def forward(input, other):
        try:
            x, y = binary_operands(input, other)
        except TypeError:  # (a string, a list: as an operator, NotImplemented)
            return operator_refusal()
        dt = backend.result_type(input, other).np
        if dt.kind in 'fVcb':
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{SCALAR_NAMES[dt.name]}\'')
        try:
            x, y = xp.broadcast_arrays(xp.asarray(x).astype(dt, copy=False), xp.asarray(y).astype(dt, copy=False))
        except ValueError:
            raise broadcast_error(input, other) from None
        return wrap(_shifted(x, y, left))
    return forward


class BitwiseLeftShift(_Bitwise):
    """bitwise_left_shift(input, other, *, out=None) (also ``<<``): integer dtypes only."""
    op, forward, operators = 'bitwise_left_shift', _shift(True, 'lshift'), ('__lshift__',)
    reflected_operators, inplace_operators = ('__rlshift__',), ('__ilshift__',)
    function, inplace, refusals = _bitwise_function(forward, op), _bitwise_inplace(forward), _bitwise_overloads(op)


class BitwiseRightShift(_Bitwise):
    """bitwise_right_shift(input, other, *, out=None) (also ``>>``): integer dtypes only; a
    signed one shifts in its sign."""
    op, forward, operators = 'bitwise_right_shift', _shift(False, 'rshift'), ('__rshift__',)
    reflected_operators, inplace_operators = ('__rrshift__',), ('__irshift__',)
    function, inplace, refusals = _bitwise_function(forward, op), _bitwise_inplace(forward), _bitwise_overloads(op)


def _invert(self):
    """The ``~`` operator."""
    if self._data.dtype.kind in 'fVc':
        raise TypeError('~ (operator.invert) is only implemented on integer and Boolean-type tensors')
    return wrap(xp.invert(self._data))


class BitwiseNot(_NotDifferentiable):
    """bitwise_not(input, *, out=None) (``~`` refuses floats with its own TypeError); out= of
    the input's dtype."""
    op, out = 'bitwise_not', SAME
    operators = {'__invert__': _invert}

    def forward(input):
        if input._data.dtype.kind in 'fVc':
            raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{SCALAR_NAMES[input._data.dtype.name]}\'')
        return wrap(xp.invert(input._data))


# ---- the floating-point class tests ---------------------------------------------------------

class _Test(Op):
    """A test of each element's floating-point class: a function and a method, no out= (as
    torch.isnan)."""
    differentiable = False


class Isnan(_Test):
    """isnan(input)."""
    op = 'isnan'

    def forward(input):
        try:
            return wrap(xp.isnan(input._data))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Isinf(_Test):
    """isinf(input)."""
    op = 'isinf'

    def forward(input):
        try:
            return wrap(xp.isinf(input._data))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


def _bool_out(name, out, result, differentiable):
    """isposinf's and isneginf's out=: a bool ``out`` only."""
    check_out(name, out, result, differentiable)
    if out._data.dtype != xp.bool_:
        raise RuntimeError(f'{name} does not support non-boolean outputs.')
    return fill_out(out, result._data)


class Isposinf(_Test):
    """isposinf(input, *, out=None)."""
    op, out = 'isposinf', _bool_out

    def forward(input):
        return wrap(xp.isposinf(input._data))


class Isneginf(_Test):
    """isneginf(input, *, out=None)."""
    op, out = 'isneginf', _bool_out

    def forward(input):
        return wrap(xp.isneginf(input._data))


class Isfinite(_Test):
    """isfinite(input)."""
    op = 'isfinite'

    def forward(input):
        try:
            return wrap(xp.isfinite(input._data))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Isreal(_Test):
    """isreal(input): True everywhere (leafgrad's tensors are real)."""
    op = 'isreal'

    def forward(input):
        try:
            d = input._data
            return wrap(xp.ones(d.shape, dtype=bool, like=d) if on_gpu(d) else xp.ones(d.shape, dtype=bool))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


# ---- comparing whole tensors ----------------------------------------------------------------

def _close(name, input, other, rtol, atol, equal_nan):
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaNs
    only with ``equal_nan``), as an array; both tensors of one dtype, as PyTorch requires."""
    for label, tolerance in (('rtol', rtol), ('atol', atol)):
        if tolerance < 0:
            raise RuntimeError(f'{label} must be greater than or equal to zero, but got {tolerance}')
    a, b = input._data, other._data
    if a.dtype != b.dtype:
        raise RuntimeError(f'{SCALAR_NAMES[a.dtype.name]} did not match {SCALAR_NAMES[b.dtype.name]}')
    try:
        xp.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(input, other) from None
    return xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


class Isclose(_Test):
    """isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)."""
    op = 'isclose'
    tensors = ('input', 'other')

    def forward(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return wrap(_close('isclose', input, other, rtol, atol, equal_nan))


class Allclose(_Test):
    """allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False): whether every element is
    ``isclose``, a Python bool."""
    op = 'allclose'
    tensors = ('input', 'other')

    def forward(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(_close('allclose', input, other, rtol, atol, equal_nan).all())


class Equal(_Test):
    """equal(input, other): whether the two tensors have the same size and elements (compared
    after promotion; NaN equals nothing), a Python bool."""
    op = 'equal'
    tensors = ('input', 'other')

    def forward(input, other):
        return bool(xp.array_equal(input._data, other._data))
