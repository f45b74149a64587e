"""``leafgrad.autograd.Variable``: PyTorch's deprecated wrapper, now a tensor constructor.

>>> import leafgrad
>>> from leafgrad.autograd import Variable
>>> v = Variable(leafgrad.ones(2), requires_grad=True)
>>> v, isinstance(v, Variable)
(tensor([1., 1.], requires_grad=True), True)
"""
import operator
import warnings

from .. import creation
from .._tensor_types import _arg_name
from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated in PyTorch: ``Variable(t)`` is a tensor sharing ``t``'s memory, without its history,
    that requires grad as asked. Every tensor is a Variable (``isinstance`` says so)."""
    __module__ = 'leafgrad.autograd'

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        if _grad_fn is not None:
            raise TypeError('_grad_fn has to be a Function object or None, but got '
                            f'{type(_grad_fn).__name__} (leafgrad makes no Variable with a given grad_fn)')
        if name is not None and not isinstance(name, str):
            raise TypeError(f'argument 5 must be str or None, not {type(name).__name__}')
        requires_grad = bool(operator.index(requires_grad))
        if volatile:
            warnings.warn('volatile was removed and now has no effect. Use `with leafgrad.no_grad():` instead.',
                          UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            data = creation.empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f'Variable data has to be a tensor, but got {_arg_name(data)}')
        if requires_grad and data._data.dtype.kind not in 'fVc':
            raise RuntimeError('Only Tensors of floating point and complex dtype can require gradients')
        out = data.detach()
        out._requires_grad = requires_grad
        return out
