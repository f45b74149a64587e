"""Python's operators on tensors that are no op's forward itself: the reflected ones
(``number - t``), the augmented assignments, matmul, indexing, the bitwise ones.
(``a + b``, ``a * b``, ``-a``, ``a == b`` ... are bound by the ops' declarations.)"""
from . import logical, rounding  # noqa: F401  (logical, rounding: their declarations bind the in-place methods read below)
from ._util import ops
from ..tensor import Tensor


def _reflected(name):
    def reflected(self, other):
        return getattr(ops, name)(other, self)
    reflected.__name__ = '__r' + name + '__'
    return reflected


def _hash(self):
    return id(self)  # __eq__ is elementwise, so tensors hash by identity


METHODS = {
    '__iadd__': Tensor.add_, '__rsub__': _reflected('sub'), '__isub__': Tensor.sub_, '__imul__': Tensor.mul_,
    '__rtruediv__': _reflected('div'), '__itruediv__': Tensor.div_,
    '__rpow__': _reflected('pow'), '__ipow__': Tensor.pow_,
    '__hash__': _hash,
    '__rand__': _reflected('bitwise_and'), '__iand__': Tensor.bitwise_and_,
    '__ror__': _reflected('bitwise_or'), '__ior__': Tensor.bitwise_or_,
    '__rxor__': _reflected('bitwise_xor'), '__ixor__': Tensor.bitwise_xor_,
    '__rmod__': _reflected('remainder'), '__imod__': Tensor.remainder_,
    '__rfloordiv__': _reflected('floor_divide'), '__ifloordiv__': Tensor.floor_divide_,
}
