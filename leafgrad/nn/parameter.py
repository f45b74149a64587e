"""nn.Parameter: a leaf that requires grad and registers itself on the Module it is set on."""
from ..tensor import Tensor


class Parameter(Tensor):
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .. import empty
            data = empty(0)
        self = Tensor.__new__(cls)
        self._data = data._data
        self._version_counter = data._version_counter
        if requires_grad:
            if self._data.dtype.kind not in 'fV':
                raise RuntimeError('Only Tensors of floating point and complex dtype can require gradients')
            self.requires_grad_(True)
        return self

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return 'Parameter containing:\n' + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        out = Parameter(Tensor._wrap(self._data.copy()), self._requires_grad)
        memo[id(self)] = out
        return out
