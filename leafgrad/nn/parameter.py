"""nn.Parameter: a leaf that requires grad and registers itself on the Module it is set on."""
from ..tensor import Tensor
from ..creation import empty


class Parameter(Tensor):
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        self = Tensor.__new__(cls)
        self._data = data._data
        self._version_counter = data._version_counter
        if requires_grad:
            if self._data.dtype.kind not in 'fVc':
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



class _BufferMeta(type):
    # a Buffer is a plain Tensor marked as one: isinstance(t, Buffer) reads the mark
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, '_is_buffer', False)


class Buffer(metaclass=_BufferMeta):
    """nn.Buffer(data=None, *, persistent=True): a tensor that a Module registers as a buffer
    when it is assigned as an attribute (``persistent=False`` keeps it out of the state dict).
    What it returns is the tensor itself (detached), marked, as PyTorch's."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

class _UninitializedMixin:
    """A parameter or buffer whose shape is not known yet (lazy modules): no data until
    ``materialize(shape)``, which turns it into a Parameter (or a plain tensor)."""
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        data = empty(tuple(shape), dtype=dtype if dtype is not None else self._lazy_dtype)
        self._data = data._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           'happens in `load_state_dict` when trying to load an uninitialized parameter into an '
                           'initialized one. Call `forward` to initialize the parameters before accessing their '
                           'attributes.')

    def __repr__(self):
        return f'<{type(self).__name__}>'

    __str__ = __repr__


class UninitializedParameter(_UninitializedMixin, Parameter):
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        self = Parameter.__new__(cls, empty(0, dtype=dtype), requires_grad)
        return self

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    @property
    def _lazy_dtype(self):
        return self.dtype


class UninitializedBuffer(_UninitializedMixin, Tensor):
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        data = empty(0, dtype=dtype)
        self = Tensor.__new__(cls)
        self._data = data._data
        self._version_counter = data._version_counter
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass

    @property
    def _lazy_dtype(self):
        return self.dtype


def is_lazy(param):
    return isinstance(param, _UninitializedMixin)
