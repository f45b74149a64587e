"""The op library, one family per module. This file installs the ops on Tensor as methods
and operators; each family lists which of its functions are methods in ``METHODS``."""
from ..tensor import Tensor, _wrap_dim
from . import conversion, elementwise, indexing, inplace, linalg, reduction, shape
from .conversion import to
from .elementwise import (abs, absolute, add, cos, div, divide, eq, exp, ge, gt, le, log, lt, mul, multiply, ne,
                          neg, negative, pow, reciprocal, relu, rsub, sigmoid, sign, sin, sqrt, square, sub,
                          subtract, tanh, true_divide, where, greater, greater_equal, less, less_equal, not_equal)
from .indexing import nonzero
from .linalg import bmm, dot, matmul, mm, mv, outer, ger
from .reduction import mean, sum
from .shape import (broadcast_to, clone, contiguous, expand, flatten, narrow, permute, reshape, select, squeeze,
                    swapaxes, swapdims, t, transpose, unsqueeze)

FUNCTIONS = ['abs', 'absolute', 'add', 'cos', 'div', 'divide', 'eq', 'exp', 'ge', 'gt', 'le', 'log', 'lt', 'mul',
             'multiply', 'ne', 'neg', 'negative', 'pow', 'reciprocal', 'relu', 'rsub', 'sigmoid', 'sign', 'sin',
             'sqrt', 'square', 'sub', 'subtract', 'tanh', 'true_divide', 'where', 'greater', 'greater_equal',
             'less', 'less_equal', 'not_equal', 'nonzero', 'bmm', 'dot', 'matmul', 'mm', 'mv', 'outer', 'ger',
             'mean', 'sum', 'broadcast_to', 'clone', 'expand', 'flatten', 'narrow', 'permute', 'reshape', 'select',
             'squeeze', 'swapaxes', 'swapdims', 't', 'transpose', 'unsqueeze']


def _reflected(fn):
    def reflected(self, other):
        return fn(other, self)
    reflected.__name__ = '__r' + fn.__name__ + '__'
    return reflected


def _matmul_reflected(self, other):
    from ..creation import as_tensor
    return matmul(as_tensor(other), self)


def _inplace_dunder(fn):
    def dunder(self, other):
        return fn(self, other)
    return dunder


METHODS = {
    # arithmetic operators
    '__add__': add, '__radd__': _reflected(add), '__iadd__': _inplace_dunder(inplace.add_),
    '__sub__': sub, '__rsub__': _reflected(sub), '__isub__': _inplace_dunder(inplace.sub_),
    '__mul__': mul, '__rmul__': _reflected(mul), '__imul__': _inplace_dunder(inplace.mul_),
    '__truediv__': div, '__rtruediv__': _reflected(div), '__itruediv__': _inplace_dunder(inplace.div_),
    '__pow__': pow, '__rpow__': _reflected(pow), '__ipow__': _inplace_dunder(inplace.pow_),
    '__matmul__': matmul, '__rmatmul__': _matmul_reflected,
    '__neg__': neg, '__abs__': abs,
    '__eq__': eq, '__ne__': ne, '__lt__': lt, '__le__': le, '__gt__': gt, '__ge__': ge,
    '__getitem__': indexing.getitem, '__setitem__': indexing.setitem,
    # in-place
    'add_': inplace.add_, 'sub_': inplace.sub_, 'mul_': inplace.mul_, 'div_': inplace.div_,
    'pow_': inplace.pow_, 'zero_': inplace.zero_, 'fill_': inplace.fill_, 'copy_': inplace.copy_,
    # views and shapes
    'view': shape.view, 'view_as': shape.view_as, 'reshape_as': shape.reshape_as,
    'T': property(shape._T), 'mT': property(shape._mT),
    'contiguous': contiguous,
    # conversion
    'to': to, 'float': conversion.float_, 'double': conversion.double, 'half': conversion.half,
    'long': conversion.long, 'int': conversion.int_, 'short': conversion.short, 'bool': conversion.bool_,
    'byte': conversion.byte, 'char': conversion.char, 'type_as': conversion.type_as, 'cpu': conversion.cpu,
    'cuda': conversion.cuda, 'type': conversion.type_,
    'div': div, 'true_divide': true_divide, 'rsub': rsub,
}
METHODS['where'] = lambda self, condition, other: where(condition, self, other)
for _name in FUNCTIONS:
    METHODS.setdefault(_name, globals()[_name])


def install(methods):
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


install(METHODS)
Tensor.__hash__ = lambda self: id(self)  # __eq__ is elementwise; tensors hash by identity
