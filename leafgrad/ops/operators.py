"""Python's operators on tensors (``a + b``, ``a @ b``, ``a[i] = v`` …), delegating to ops."""
from . import conversion, elementwise as ew, indexing, inplace, logical, rounding
from .linalg import matmul
from ..tensor import Tensor


def _reflected(fn):
    def reflected(self, other):
        return fn(other, self)
    reflected.__name__ = '__r' + fn.__name__ + '__'
    return reflected


def _matmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented  # (Python's TypeError for `t @ [1, 2]`, as for torch's tensors)
    return matmul(self, other)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _hash(self):
    return id(self)  # __eq__ is elementwise, so tensors hash by identity


# Addition and multiplication commute exactly, so ``number + t`` is ``t + number`` (the tensor
# is the op's first input, as PyTorch records it).
METHODS = {
    '__add__': ew.add, '__radd__': ew.add, '__iadd__': inplace.add_,
    '__sub__': ew.sub, '__rsub__': _reflected(ew.sub), '__isub__': inplace.sub_,
    '__mul__': ew.mul, '__rmul__': ew.mul, '__imul__': inplace.mul_,
    '__truediv__': ew.div, '__rtruediv__': _reflected(ew.div), '__itruediv__': inplace.div_,
    '__pow__': ew.pow, '__rpow__': _reflected(ew.pow), '__ipow__': inplace.pow_,
    '__matmul__': _matmul, '__rmatmul__': _rmatmul,
    '__neg__': ew.neg, '__abs__': ew.abs,
    **ew.COMPARISON_OPERATORS,
    '__getitem__': indexing.getitem, '__setitem__': indexing.setitem,
    '__hash__': _hash,
    '__and__': logical.bitwise_and, '__rand__': _reflected(logical.bitwise_and), '__iand__': logical.METHODS['bitwise_and_'],
    '__or__': logical.bitwise_or, '__ror__': _reflected(logical.bitwise_or), '__ior__': logical.METHODS['bitwise_or_'],
    '__xor__': logical.bitwise_xor, '__rxor__': _reflected(logical.bitwise_xor), '__ixor__': logical.METHODS['bitwise_xor_'],
    '__invert__': logical.invert,
    '__mod__': rounding.remainder, '__rmod__': _reflected(rounding.remainder), '__imod__': rounding.remainder_,
    '__floordiv__': rounding.floor_divide, '__rfloordiv__': _reflected(rounding.floor_divide),
    '__ifloordiv__': rounding.floor_divide_,
}
