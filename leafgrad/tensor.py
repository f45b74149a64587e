"""Tensor: an array plus what autograd needs to know about it.

A tensor is a *leaf* when no recorded op produced it (``grad_fn is None``). Only leaves with
``requires_grad=True`` keep ``.grad`` after ``backward()``; a non-leaf's gradient passes
through the walk and is freed, unless ``retain_grad()`` asked to keep it.

Ops live in ``leafgrad.ops``; ``ops/__init__.py`` installs them here as methods and operators,
so that this file holds only the tensor's own state and the autograd entry points.
"""
from __future__ import annotations  # (annotations stay strings: nothing to evaluate at import or per call)

import operator as _operator
import sys
import warnings
import weakref
from typing import Any, Callable, Sequence

from . import _memory_format, backend
from .backend import device as Device, dtype as DType
from .autograd import grad_mode
from .autograd import graph as _graph
_graph._tensor = sys.modules[__name__]  # (the graph below reaches this module late-bound)
from .autograd.graph import AccumulateGrad, Node, add_hook, gradient_edge, grad_accumulator, registration_lock as _registration_lock
from .autograd.engine import backward as _backward
from .autograd.origins import note as _note_origin
from .autograd.views import bump as _bump, check_inplace as _check_view_inplace, detached as _detached, \
    fresh as _fresh, views_require_grad as _views_require_grad, views_stop_requiring_grad as _views_stop_requiring_grad
from ._tensor_str import tensor_repr

_state = grad_mode.state
_np = backend.numpy
_ndarray = _np.ndarray

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information.")

_LEGACY_NAMES = {'float32': 'FloatTensor', 'float64': 'DoubleTensor', 'float16': 'HalfTensor',
                 'int64': 'LongTensor', 'int32': 'IntTensor', 'int16': 'ShortTensor',
                 'int8': 'CharTensor', 'uint8': 'ByteTensor', 'bool': 'BoolTensor', 'bfloat16': 'BFloat16Tensor',
                 'complex64': 'ComplexFloatTensor', 'complex128': 'ComplexDoubleTensor'}


# the C++ names PyTorch's messages print for some dtypes
_C_NAMES = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'int64': 'long int', 'int32': 'int',
            'int16': 'short int', 'int8': 'signed char', 'uint8': 'unsigned char', 'bool': 'bool',
            'complex64': 'c10::complex<float>', 'complex128': 'c10::complex<double>'}
# and those its overflow messages print ('value cannot be converted to type int64_t without overflow')
_C_TYPES = {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'int64': 'int64_t', 'int32': 'int32_t',
            'int16': 'int16_t', 'int8': 'int8_t', 'uint8': 'uint8_t', 'bool': 'bool', 'bfloat16': 'c10::BFloat16'}


def fitted_scalar(value, np_dtype, half_checked=False):
    """The Python number ``value`` as a NumPy scalar of ``np_dtype``, converted as PyTorch
    converts a number it writes (full, fill_, setitem), or its refusal (c10's ``overflows``): an
    integer dtype takes a float in [min, max] (truncated) and an int down to -max for an unsigned
    one (two's complement: -1 is 255); float32 takes a finite value up to its max; float64,
    bool and complex any; float16 and bfloat16 any (beyond their range: infinity), except where
    PyTorch's kernel checks them too (``half_checked``: masked_fill, clamp)."""
    kind = np_dtype.kind
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 64:  # (PyTorch's Scalar holds 64 bits)
        raise OverflowError('int too big to convert')
    if isinstance(value, (complex, _np.complexfloating)) and kind not in 'bc':
        if value.imag != 0:  # (a complex number fits a real dtype only with no imaginary part, as c10's)
            raise RuntimeError(f'value cannot be converted to type {_C_TYPES[np_dtype.name]} without overflow')
        value = value.real
    if isinstance(value, (bool, _np.bool_, complex, _np.complexfloating)) or kind in 'bc':
        return _np.array(value).astype(np_dtype)[()]
    if kind in 'iu':
        info = _np.iinfo(np_dtype)
        if isinstance(value, (float, _np.floating)):
            fits = info.min <= value <= info.max  # (NaN and infinities do not)
        else:
            fits = (-info.max if kind == 'u' else info.min) <= value <= info.max
        if fits:
            return _np.array(value, dtype=_np.float64 if isinstance(value, (float, _np.floating))
                             else _np.int64).astype(np_dtype)[()]
    elif (np_dtype.itemsize > 4 or np_dtype.itemsize == 2 and not half_checked
          or not abs(value) > float(_finfo(np_dtype).max) or value in (_INF, -_INF)):
        with _np.errstate(over='ignore'):  # (float16, bfloat16: infinity beyond their range, as PyTorch)
            return _np.array(float(value)).astype(np_dtype)[()]
    raise RuntimeError(f'value cannot be converted to type {_C_TYPES[np_dtype.name]} without overflow')


_INF = float('inf')
_finfo = backend.np_finfo


def legacy_type_name(array):
    """'leafgrad.FloatTensor' for a float32 NumPy array, as PyTorch names types in errors."""
    prefix = 'leafgrad.' if type(array) is _ndarray else 'leafgrad.cuda.'
    return prefix + _LEGACY_NAMES[array.dtype.name]


def _dim_type_error(name, dim):
    """PyTorch's TypeError for a dim that is no int (as given by position: the commoner way)."""
    return TypeError(f"{name}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")


def no_arguments(name, args):
    """PyTorch's TypeError for arguments given to a method that takes none."""
    if args:
        raise TypeError(f'TensorBase.{name}() takes no arguments ({len(args)} given)')
    raise TypeError(f'TensorBase.{name}() takes no keyword arguments')


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``leafgrad.Size([2, 3])``."""
    __module__ = 'leafgrad'  # the public name, as type() prints it: <class 'leafgrad.Size'>
    __slots__ = ()

    def __repr__(self):
        return f'leafgrad.Size({list(self)})'

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class _Meta:
    """The rarely used parts of a tensor, kept out of the hot path of creating one."""
    __slots__ = ('hooks', 'post_acc_hooks', 'retains_grad', 'name')

    def __init__(self):
        self.hooks = None            # {id: hook} of a leaf (a non-leaf's live on its grad_fn)
        self.post_acc_hooks = None   # {id: hook(tensor)} after .grad is written
        self.retains_grad = False
        self.name = None


class Tensor:
    """A multi-dimensional array that records the ops applied to it, PyTorch's ``torch.Tensor``.

    A tensor holds its data (a NumPy array, or a CuPy array on a GPU), whether it
    ``requires_grad``, the node of the op that produced it (``grad_fn``; ``None`` for a leaf),
    its ``.grad`` once ``backward()`` has filled it, and a version counter that in-place ops
    bump, so that a tensor saved for backward and changed since is detected. Make tensors with
    ``leafgrad.tensor``, ``zeros``, ``randn`` and the other factories; the ops (``add``,
    ``matmul``, ``sum``, indexing, ...) are its methods and operators, installed from
    ``leafgrad/ops/`` with PyTorch's signatures.
    """
    __module__ = 'leafgrad'  # the public name, as type() prints it: <class 'leafgrad.Tensor'>
    # The fields every tensor sets are slots; the rest are class-level defaults that an
    # instance overrides (in its __dict__) only when it needs them, keeping creation cheap.
    __slots__ = ('_data', '_requires_grad', '_grad_fn', '_version_counter', '__dict__', '__weakref__')
    __array_priority__ = 1000  # ndarray <op> Tensor defers to Tensor's reflected operator
    _grad = None
    _output_nr = 0
    _base = None         # the tensor whose storage this view shares
    _meta = None         # a _Meta once hooks, retain_grad or view information are attached
    _accumulator = None  # weakref to this leaf's AccumulateGrad
    # Views (autograd/views.py): a view's history is regenerated, when next read, after its
    # base or another of its views changed in place (every read of a view's grad_fn calls
    # _fresh first).
    _view_of = None      # a view's (parent, make: parent -> view[, op name if one of several outputs])
    _views = None        # a base's live views (views.LiveViews)
    _attr_version = 0    # a view's version counter when its history was made
    _creation = None     # a view made without recording: 'no_grad', 'inference'; or 'multi'
    _chain = None        # a view's chain of view derivatives, once regenerated
    _view_node = None    # the node a view op recorded for the view (its derivative)
    _makes = None        # a view's chain of view ops from its base, once needed
    _fw_grad = None      # the tangent of a dual tensor (autograd.forward_ad)
    _detached_from = None  # ((since, until) ...): the spans, in node sequence numbers, of the histories detach_() cut
    _history_since = -1  # when an in-place op gave it a history it lacked (else: from its making)
    _own_requires_grad = False  # a view's own requires_grad_(True), beside what its base asks (its accumulator)
    _hooks_made = False  # register_hook has run on it (PyTorch's _backward_hooks is not None: no grad_fn read)

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self._requires_grad = False
        self._grad_fn = None
        self._version_counter = [0]
        return self

    # __init__ (PyTorch's legacy constructor: leafgrad.Tensor(2, 3), leafgrad.Tensor([1, 2])) and new()
    # make tensors as the factories do: creation.py defines them and installs them here.

    @classmethod
    def _wrap(cls, data, requires_grad=False):
        """Fast construction around an existing array (no copy, no checks)."""
        self = object.__new__(cls)
        self._data = data
        self._requires_grad = requires_grad
        self._grad_fn = None
        self._version_counter = [0]
        return self

    @classmethod
    def _from_saved_output(cls, saved, node):
        """An op's saved output, re-wrapped and connected to the node that produced it."""
        self = object.__new__(cls)  # (as _wrap, without a second call: once per saved output in backward)
        self._data = saved.data
        self._requires_grad = requires_grad = saved.requires_grad
        self._grad_fn = node if requires_grad else None
        self._version_counter = saved._version_counter
        if saved.output_nr:
            self._output_nr = saved.output_nr
        return self

    def _get_meta(self):
        meta = self._meta
        if meta is None:  # (setdefault: two threads attaching a hook at once get one _Meta)
            meta = self.__dict__.setdefault('_meta', _Meta())
        return meta

    # ---- what a tensor is ------------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's storage but not its history, nor its version counter, as
        PyTorch's: a change made through it is hidden from autograd (prefer ``detach()``, which
        shares the counter, so that backward refuses a saved tensor changed that way)."""
        out = Tensor._wrap(self._data)
        if self._requires_grad:
            _note_origin(out, 'data', self)  # for leafgrad.explain
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data if isinstance(value, Tensor) else _np.asarray(value)

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self._data.shape)
        try:
            return self._data.shape[_wrap_dim(dim, self._data.ndim)]
        except TypeError:
            raise _dim_type_error('size', dim) from None

    def dim(self) -> int:
        return self._data.ndim

    ndim = property(dim)

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    @property
    def dtype(self) -> DType:
        return backend.from_np(self._data.dtype)

    @property
    def device(self) -> Device:
        return backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == 'cuda'

    @property
    def is_cpu(self) -> bool:
        return self.device.type == 'cpu'

    # Devices, layouts and kinds of tensor that leafgrad has none of (dense, strided, on CPU or
    # CUDA): PyTorch programs read these flags, e.g. `if input.is_xpu and self.ngpu > 1`.
    is_xpu = is_mps = is_ipu = is_maia = is_mtia = is_vulkan = is_xla = property(lambda self: False)
    is_meta = property(lambda self: type(self._data).__name__ == 'MetaArray')
    is_sparse = is_sparse_csr = is_quantized = is_mkldnn = is_nested = property(lambda self: False)

    @property
    def layout(self) -> _memory_format.layout:
        return _memory_format.strided

    def is_pinned(self, device: Any = None) -> bool:
        """Whether this tensor lies in page-locked host memory (``pin_memory()``'s copy). ``device``
        is deprecated, as in PyTorch: it is checked and warned about, and changes nothing."""
        if device is not None:
            _deprecated_pinning_device('is_pinned', device)
        return backend.is_pinned(self._data)

    def share_memory_(self) -> Tensor:
        """Move this tensor's memory into shared memory (with the tensor it views and that
        tensor's views), so that other processes it is sent to share it
        (``leafgrad.multiprocessing``); nothing to do if it is already there or on a GPU."""
        if self.device.type == 'cpu' and not self.is_shared():
            from . import _shared_memory  # (loads mmap: not at `import leafgrad`)
            _shared_memory.share(self)
        return self

    def is_shared(self) -> bool:
        """Whether this tensor's memory is shared memory (``share_memory_()``)."""
        shared = sys.modules.get('leafgrad._shared_memory')  # (none is, before share_memory_ loads it)
        return shared is not None and shared.is_shared(self._data)

    def pin_memory(self, device: Any = None) -> Tensor:
        """A copy in page-locked host memory, which a GPU reads faster (this tensor itself if it is
        already there). Needs a GPU, as PyTorch's; the copy passes gradients through (recorded as
        a clone: PyTorch names its node PinMemoryBackward0). ``device`` is deprecated, as in PyTorch;
        only an accelerator's is accepted."""
        if device is not None and _deprecated_pinning_device('pin_memory', device).type == 'cpu':
            self.is_pinned(device)  # (PyTorch asks it, warning again, before it refuses)
            raise RuntimeError('CPU device type not an accelerator.')
        if not backend.cuda_available():
            raise RuntimeError('Cannot access accelerator device when none is available.')
        if self.device.type != 'cpu':
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        if backend.is_pinned(self._data):
            return self
        copy = self.clone()
        copy._data = backend.pinned_copy(self._data)
        return copy

    @property
    def volatile(self) -> bool:
        warnings.warn('volatile was removed (Variable.volatile is always False)', UserWarning, stacklevel=2)
        return False

    @property
    def is_leaf(self) -> bool:
        if self._base is not None:
            _fresh(self)
        return self._grad_fn is None

    @property
    def grad_fn(self) -> Node | None:
        if self._base is not None:
            _fresh(self)
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self):
        if type(self._version_counter) is grad_mode.InferenceCounter:
            raise RuntimeError('Inference tensors do not track version counter.')
        return self._version_counter[0]

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in 'fV'  # 'V': bfloat16 (see backend._make_bfloat16)

    def is_complex(self) -> bool:
        return self._data.dtype.kind == 'c'

    def is_inference(self) -> bool:
        return type(self._version_counter) is grad_mode.InferenceCounter

    def element_size(self) -> int:
        return self._data.itemsize

    itemsize = property(element_size)

    @property
    def nbytes(self) -> int:
        """The bytes of the tensor's elements (numel times the element size; a view's own, not
        its storage's)."""
        return self._data.size * self._data.itemsize

    def is_signed(self) -> bool:
        return self._data.dtype.kind not in 'ub'  # (unsigned integers and bool; 'V', bfloat16, is signed)

    def get_device(self) -> int:
        """The index of the GPU the tensor is on; -1 for a tensor on the CPU."""
        device = self.device
        return -1 if device.type != 'cuda' else device.index or 0

    def dim_order(self, *, ambiguity_check: bool | list = False) -> tuple[int, ...]:
        """The dims in the order they are laid out in memory, outermost first (``(0, 2, 3, 1)``
        for a channels_last batch); ``ambiguity_check``: True, or a list of memory formats,
        raises where the order is not unique (a dim of size 1, two equal strides) and the tensor
        is laid out in none or several of those formats."""
        return _memory_format.dim_order(self, ambiguity_check)

    def is_contiguous(self, *, memory_format: Any = _memory_format.contiguous_format) -> bool:
        if memory_format is _memory_format.contiguous_format:
            return bool(self._data.flags.c_contiguous)
        _memory_format.check(memory_format, 'is_contiguous')
        return _memory_format.is_laid_out(self._data, memory_format)

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        if not self._data.size and strides and not any(strides):
            # NumPy gives an empty array zero strides; PyTorch's empty tensor has the contiguous
            # strides of its sizes (each taken as at least 1). (A view of an empty tensor, whose NumPy
            # strides are zeros too, is reported so as well: PyTorch's transpose or unsqueeze of one
            # has strides of its own, (1, 3) for zeros(0, 3).t().)
            strides, step = [], 1
            for n in reversed(self._data.shape):
                strides.append(step)
                step *= max(n, 1)
            strides = tuple(reversed(strides))
        if dim is None:
            return strides
        try:
            return strides[_wrap_dim(dim, self._data.ndim)]
        except TypeError:
            raise _dim_type_error('stride', dim) from None

    def data_ptr(self) -> int:
        return self._data.__array_interface__['data'][0] if type(self._data) is _ndarray else self._data.data.ptr

    def const_data_ptr(self) -> int:
        """``data_ptr()``, for a reader that will not write through it."""
        return self.data_ptr()

    def is_set_to(self, tensor) -> bool:
        """Whether ``self`` and ``tensor`` are the same elements of the same memory: one storage,
        one first element, one shape and one stride."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
        a, b = self._data, tensor._data
        while getattr(a, 'base', None) is not None:
            a = a.base
        while getattr(b, 'base', None) is not None:
            b = b.base
        return a is b and self.data_ptr() == tensor.data_ptr() and self._data.shape == tensor._data.shape \
            and self.stride() == tensor.stride()

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """A dense tensor: ``self`` itself (leafgrad's tensors are dense), or ``self.to(dtype)``."""
        if dtype is not None and not isinstance(dtype, DType):
            raise TypeError(f"to_dense(): argument 'dtype' (position 1) must be leafgrad.dtype, not "
                            f'{type(dtype).__name__}')
        return self if dtype is None else self.to(dtype)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError('len() of a 0-d tensor')
        return self._data.shape[0]

    def __hash__(self):
        return id(self)

    # ---- requires_grad and the leaf rules --------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._set_requires_grad(flag, 'only Tensors of floating point and complex dtype can require gradients')

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if type(requires_grad) is not bool:  # (PyTorch's parser takes no 1 nor 'yes' for a bool)
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f'{backend.type_name(requires_grad)}')
        self._set_requires_grad(requires_grad, 'only Tensors of floating point dtype can require gradients')
        return self

    def _set_requires_grad(self, flag, dtype_message):
        flag = bool(flag)
        if self._grad_fn is not None:
            if flag:
                return  # a non-leaf that requires grad: nothing to change
            raise RuntimeError(
                'you can only change requires_grad flags of leaf variables. If you want to use a '
                "computed variable in a subgraph that doesn't require differentiation use "
                'var_no_grad = var.detach().')
        if not flag and self._base is not None and self._base._requires_grad:
            self._own_requires_grad = False
            return  # a view without a history asks its base, as PyTorch's does: it still requires grad
        if flag and self._data.dtype.kind not in 'fVc':
            raise RuntimeError(dtype_message)
        if flag and type(self._version_counter) is grad_mode.InferenceCounter and not _state.inference:
            raise RuntimeError('Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.')
        if self._base is not None and (flag or self._own_requires_grad):
            self._own_requires_grad = flag
        if self._requires_grad and not flag:
            _note_origin(self, 'frozen', None)  # for leafgrad.explain
            if self._views is not None:
                _views_stop_requiring_grad(self)
        elif flag and not self._requires_grad and self._views is not None:
            _views_require_grad(self)
        self._requires_grad = flag

    @property
    def grad(self) -> Tensor | None:
        # (the history as it stands, not regenerated: PyTorch's C++ is_leaf reads it so; a view
        # made under no_grad whose base changed in place has none, and reads without an error)
        if self._grad_fn is not None and not (self._meta is not None and self._meta.retains_grad):
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f'assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}')
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of "
                    f"size '{list(self._data.shape)}'. Please ensure that the gradient and the tensor "
                    'are the same size')
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_C_NAMES[value._data.dtype.name]}' to a tensor "
                    f"with grad_dtype '{_LEGACY_NAMES[self._data.dtype.name][:-len('Tensor')]}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's "
                    'grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with '
                    'caution. Diverging the dtypes of a tensor and its gradient may break downstream systems that '
                    'assume they match.')
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._meta is not None and self._meta.retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` at the next backward (a no-op on leaves)."""
        if self._grad_fn is None:  # (the history as it stands: as PyTorch's C++ is_leaf, nothing regenerated)
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._base is not None:
            _fresh(self)
        meta = self._get_meta()
        with _registration_lock:
            if meta.retains_grad:
                return
            meta.retains_grad = True
            _attach_retain(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any:
        """hook(grad) runs when this tensor's gradient is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._base is not None and not self._hooks_made:
            self._hooks_made = True  # (set first: a first registration that raises counts, as PyTorch's
            _fresh(self)  # _backward_hooks dict is made before it reads grad_fn, at the first one only)
        self._hooks_made = True
        with _registration_lock:
            if self._grad_fn is None:
                meta = self._get_meta()
                if meta.hooks is None:
                    meta.hooks = {}
                return add_hook(meta.hooks, hook)
            node = self._grad_fn
            if node._tensor_pre_hooks is None:
                node._tensor_pre_hooks = {}
                node._hooked = True
            hooks = node._tensor_pre_hooks.setdefault(self._output_nr, {})
            return add_hook(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> Any:
        """hook(tensor) runs after a backward has accumulated into this leaf's ``.grad``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError('post accumulate grad hooks cannot be registered on non-leaf tensors')
        meta = self._get_meta()
        with _registration_lock:
            if meta.post_acc_hooks is None:
                meta.post_acc_hooks = {}
            return add_hook(meta.post_acc_hooks, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Tensor | Sequence[Tensor] | None = None) -> None:
        _backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """The same data (shared storage and version counter) with no history."""
        out = Tensor._wrap(self._data)
        out._version_counter = self._version_counter
        if self._base is not None or self._views is not None:
            _detached(self)
        if self._requires_grad:
            _note_origin(out, 'detach', self)  # for leafgrad.explain
        return out

    def detach_(self) -> Tensor:
        if self._base is not None:  # (any view, as in PyTorch)
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               'DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as '
                               'True, gradients are views of DDP buckets, and hence detach_() cannot be called on '
                               'these gradients. To fix this error, please refer to the Optimizer.zero_grad() '
                               'function in torch/optim/optimizer.py as the solution.')
        if self._requires_grad:
            _note_origin(self, 'detach_', self)  # for leafgrad.explain (source: itself, as it was)
        if self._grad_fn is not None:  # a node that saved it while it had this history now refuses to use it
            span = (self.__dict__.pop('_history_since', -1), next(_graph._sequence))
            self._detached_from = (self._detached_from or ()) + (span,)
        if self._requires_grad and self._views is not None:
            self._requires_grad = False
            _views_stop_requiring_grad(self)
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    # ---- in-place bookkeeping (used by every in-place op) ----------------------------------
    def _check_inplace(self):
        """Raise before an in-place op that would corrupt the graph; change nothing. (The
        checks of PyTorch's check_inplace, in its order, for a tensor that requires grad.)"""
        if type(self._version_counter) is grad_mode.InferenceCounter and not _state.inference:
            raise RuntimeError(grad_mode.INPLACE_ERROR)
        if not (self._requires_grad and _state.grad_enabled):
            return
        base = self._base
        if base is None:
            if self._grad_fn is None:
                raise RuntimeError('a leaf Variable that requires grad is being used in an in-place operation.')
            return
        _check_view_inplace(self)
        if base._grad_fn is None:
            raise RuntimeError('a view of a leaf Variable that requires grad is being used in an '
                               'in-place operation.')
        if self._grad_fn is None:  # (a view made before its base required grad, its history not yet
            # regenerated: PyTorch's is_leaf reads the history as it stands, seed 15028846)
            raise RuntimeError('a leaf Variable that requires grad is being used in an in-place operation.')

    def _bump_version(self):
        _bump(self)

    def _accumulate_(self, other):
        """``self += other`` on the arrays: the engine's in-place gradient accumulation."""
        self._data += other._data
        self._version_counter[0] += 1

    def _owned_copy(self):
        return Tensor._wrap(self._data.copy())

    # ---- conversion ------------------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> Any:
        if self._data.dtype.kind == 'V':
            raise TypeError('Got unsupported ScalarType BFloat16')  # NumPy has no bfloat16, as in PyTorch
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if type(self._data) is not _ndarray:
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                                'copy the tensor to host memory first.')
            return backend.to_numpy(self._data)
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._data.dtype.kind == 'V':
            raise TypeError('Got unsupported ScalarType BFloat16')
        arr = backend.to_numpy(self._data)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def item(self, *args: Any, **kwargs: Any) -> int | float | bool:
        if args or kwargs:
            no_arguments('item', args)
        if self._data.size != 1:
            raise RuntimeError(f'a Tensor with {self._data.size} elements cannot be converted to Scalar')
        return self._data.reshape(()).item()

    def tolist(self, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            no_arguments('tolist', args)
        return self._data.tolist()

    def _python_scalar(self):
        if self._data.size != 1:
            raise ValueError('only one element tensors can be converted to Python scalars')
        return self._data.reshape(()).item()

    def __float__(self):
        value = self._python_scalar()
        if type(value) is complex:
            raise RuntimeError('value cannot be converted to type double without overflow')
        return float(value)

    def __int__(self):
        value = self._python_scalar()
        if type(value) is complex:
            raise RuntimeError('value cannot be converted to type int64_t without overflow')
        return int(value)

    def __complex__(self):
        return complex(self._python_scalar())

    def __index__(self):
        if self._data.dtype.kind not in 'iub' or self._data.size != 1:
            raise TypeError('only integer tensors of a single element can be converted to an index')
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError('Boolean value of Tensor with ' + ('no values' if self._data.size == 0 else
                                                                  'more than one value') + ' is ambiguous')
        return bool(self._data.reshape(()).item())

    def __contains__(self, element):
        if isinstance(element, (Tensor, int, float)):
            return bool((element == self).any().item())
        raise RuntimeError(f'Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.')

    def __reversed__(self):
        """The tensor flipped along its first dim (a 0-dim tensor: itself), as PyTorch's."""
        if self._data.ndim == 0:
            return self
        return self.flip(0)

    def is_nonzero(self) -> bool:
        """Whether the one element is not zero (PyTorch's errors for more or fewer)."""
        return not not self

    def is_same_size(self, other=None) -> bool:
        if other is None:  # (PyTorch's parser's words)
            raise TypeError('is_same_size() missing 1 required positional arguments: "other"')
        if not isinstance(other, Tensor):
            raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
                            f'{type(other).__name__}')
        return self._data.shape == other._data.shape

    def is_neg(self) -> bool:
        """False: leafgrad has no lazy negation bit (PyTorch's is set only by conj of complex views)."""
        return False

    def resolve_neg(self) -> Tensor:
        return self

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError('iteration over a 0-d tensor')
        return (self[i] for i in range(self._data.shape[0]))

    def __repr__(self, *, tensor_contents=None):
        fn = fn_name = None
        try:
            if self._base is not None:
                _fresh(self)
            fn = self._grad_fn
        except RuntimeError:  # (a view made under no_grad whose base changed in place: PyTorch's repr says so)
            fn_name = 'Invalid'
        if fn is not None:
            fn_name = fn.name().rsplit('::', 1)[-1]
        return tensor_repr(self._data if self.is_meta else backend.to_numpy(self._data),
                           device=None if type(self._data) is _ndarray else str(self.device),
                           requires_grad=self._requires_grad and fn_name is None,
                           grad_fn_name=fn_name,
                           default_float=backend.get_default_dtype().np,
                           tangent=None if self._fw_grad is None else f'{self._fw_grad}')

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol):
        raise TypeError('leafgrad tensors are not pickled; use leafgrad.save')

    def __deepcopy__(self, memo):
        if self._base is not None:
            _fresh(self)
        if self._grad_fn is not None:
            raise RuntimeError('Only Tensors created explicitly by the user (graph leaves) support '
                               'the deepcopy protocol at the moment.')
        out = type(self)._wrap(self._data.copy(), self._requires_grad)
        if type(self) is not Tensor:
            out = type(self).__new__(type(self))
            out._data = self._data.copy()
            out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out


def _deprecated_pinning_device(method, device):
    """The device PyTorch's pin_memory/is_pinned still take (parsed as PyTorch does, an int
    naming the accelerator's), and their deprecation warning."""
    device = backend.device(device)
    warnings.warn(f"The argument 'device' of Tensor.{method}() is deprecated. Please do not pass this argument.",
                  DeprecationWarning, stacklevel=3)
    return device


def _attach_retain(tensor):
    """Register ``tensor`` (weakly) on its grad_fn, which writes its gradient to ``.grad``."""
    node = tensor._grad_fn
    if node._retained is None:
        node._retained = {}
        node._hooked = True
    node._retained[tensor._output_nr] = weakref.ref(tensor)


def _wrap_dim(dim, ndim):
    if type(dim) is not int:  # (a NumPy integer, a 0-dim integer tensor: the int PyTorch's parser reads;
        dim = _index(dim)     # anything else a TypeError, which an op with overloads turns into their listing)
    lo, hi = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    if not lo <= dim <= hi:
        raise IndexError(f'Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})')
    return dim + ndim if dim < 0 else dim


def _index(dim):
    return dim if isinstance(dim, int) else _operator.index(dim)


__all__ = ['Tensor', 'Size', 'legacy_type_name', 'gradient_edge', 'grad_accumulator', 'AccumulateGrad']
