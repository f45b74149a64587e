"""Moving a tensor to another dtype or device: ``to`` and the methods that are ``to`` with one
argument fixed (``float``, ``double`` … ``cpu``, ``cuda``, ``type_as``), and ``Tensor.type``, each
declared once (``_op.Op``). Every conversion that changes something records ``ToCopyBackward0``
(a differentiable result only: a cast to an integer dtype has no history)."""

from .. import _memory_format, backend
from .._arg_parser import is_dtype
from ._op import Op, cast_array
from ._util import ops, record
from ..tensor import Tensor


_TO_KEYWORDS = ('dtype', 'device', 'copy', 'non_blocking', 'memory_format')


_TO_OVERLOADS = ('(leafgrad.device device = None, leafgrad.dtype dtype = None, bool non_blocking = False, '
                 'bool copy = False, *, leafgrad.memory_format memory_format = None)',
                 '(leafgrad.dtype dtype, bool non_blocking = False, bool copy = False, *, leafgrad.memory_format '
                 'memory_format = None)',
                 '(Tensor tensor, bool non_blocking = False, bool copy = False, *, leafgrad.memory_format '
                 'memory_format = None)')


def _invalid_to(args, kwargs):
    def name(value):
        return f'leafgrad.{type(value).__name__}' if isinstance(value, (backend.dtype, backend.device)) else \
            type(value).__name__
    got = ', '.join([name(a) for a in args] + [f'{k}={name(v)}' for k, v in kwargs.items()])
    return TypeError(f'to() received an invalid combination of arguments - got ({got}{", " if not args else ""}), '
                     'but expected one of:\n' + ''.join(f' * {o}\n' for o in _TO_OVERLOADS))


def _parse_to(args, kwargs):
    """to()'s arguments: (dtype, device, copy, memory_format): a tensor, or a device and a dtype,
    then ``non_blocking`` and ``copy`` (bools, by position or keyword); anything else is refused."""
    if any(k not in _TO_KEYWORDS for k in kwargs):
        raise _invalid_to(args, kwargs)
    memory_format = kwargs.get('memory_format') or _memory_format.preserve_format
    _memory_format.check(memory_format, 'to')
    dtype = kwargs.get('dtype', None)
    if dtype is not None and not is_dtype(dtype):  # (a string or NumPy's dtype: refused, as PyTorch)
        raise _invalid_to(args, kwargs)
    device = kwargs.get('device', None)
    flags = []  # non_blocking, copy given by position
    for a in args:
        if isinstance(a, bool) and (flags or dtype is not None or device is not None):
            flags.append(a)
        elif flags:
            raise _invalid_to(args, kwargs)
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif is_dtype(a):
            dtype = a
        elif isinstance(a, (str, backend.device)) and device is None:  # (a second one: refused)
            device = a
        elif type(a) is int and device is None and dtype is None:
            device = backend.device(a)  # (an index: the accelerator's device, as PyTorch's parser reads it)
        elif type(a) in (bool, float, complex) and device is None and dtype is None:
            # (a number for to(Tensor other): the parser's 0-dim tensor of it, whose dtype is taken)
            dtype = {bool: backend.bool_, float: backend.float64, complex: backend.complex128}[type(a)]
        elif a is None:
            continue
        else:
            raise _invalid_to(args, kwargs)
    named = dict(zip(('non_blocking', 'copy'), flags))
    if len(flags) > 2 or any(k in kwargs for k in named) or any(
            not isinstance(kwargs.get(k, False), bool) for k in ('non_blocking', 'copy')):
        raise _invalid_to(args, kwargs)
    return dtype, device, named.get('copy', kwargs.get('copy', False)), memory_format


class To(Op):
    """to(input, *args, **kwargs): the tensor in the dtype and on the device given (by a dtype,
    a device, both, or another tensor's), as ``Tensor.to``: the input itself when nothing
    changes and ``copy`` is False, else a new tensor (ToCopyBackward0); ``memory_format`` lays
    the result out. A complex tensor cast to a real dtype keeps its real part, with PyTorch's
    warning."""
    op, node = 'to', 'ToCopyBackward0'
    public = False  # (a method only: PyTorch has no torch.to)
    __slots__ = ('self_dtype', 'self_device')

    def forward(input, *args, **kwargs):
        dtype, device, copy, memory_format = _parse_to(args, kwargs)
        data = input._data
        new = data
        if device is not None:
            dev = backend.device(device) if not isinstance(device, backend.device) else device
            if dev != backend.device_of(data) and not (dev.type == 'cuda' and dev.index is None and
                                                        backend.device_of(data).type == 'cuda'):
                new = backend.to_device(new, dev)
        if dtype is not None:
            np_dtype = backend.to_dtype(dtype).np
            new = new.astype(np_dtype, copy=False) if new.dtype.kind != 'c' else cast_array(new, np_dtype)
        if memory_format is not _memory_format.preserve_format:
            new = _memory_format.lay_out(new, memory_format)
        elif new is not data and (not data.flags.c_contiguous or 1 in data.shape):  # (NumPy's order 'K' is not
            new = _memory_format.preserved(new, data)  # PyTorch's preserve_format for a broadcast tensor, or dims of 1)
        if new is data:
            if not copy:
                return input
            new = _memory_format.copy_in(data, _memory_format.preserve_format)
        out, node = record(new, To, (input,))
        if node is not None:
            if new.dtype.kind not in 'fVc':
                out._grad_fn, out._requires_grad = None, False
            node.self_dtype, node.self_device = input.dtype, input.device
        return out

    def jvp(self, tangents, output):
        return tangents[0].to(output.dtype)

    def apply(self, grad):
        if grad._data.dtype.kind == 'c' and not self.self_dtype.is_complex:
            grad = grad.real  # a real input's gradient is the real part, quietly (PyTorch's _to_copy_backward)
        return to(grad, dtype=self.self_dtype, device=self.self_device),


# ---- the methods that are to() with its dtype or device fixed ------------------------------

class Float(Op):
    """Tensor.float(memory_format=torch.preserve_format): ``self.to(torch.float32)``."""
    op, function = 'float', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.float32, memory_format=memory_format)


class Double(Op):
    """Tensor.double(memory_format=torch.preserve_format): ``self.to(torch.float64)``."""
    op, function = 'double', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.float64, memory_format=memory_format)


class Half(Op):
    """Tensor.half(memory_format=torch.preserve_format): ``self.to(torch.float16)``."""
    op, function = 'half', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.float16, memory_format=memory_format)


class BFloat16(Op):
    """Tensor.bfloat16(memory_format=torch.preserve_format): ``self.to(torch.bfloat16)``."""
    op, function = 'bfloat16', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend._make_bfloat16(), memory_format=memory_format)  # (bfloat16 is made on first use)


class Long(Op):
    """Tensor.long(memory_format=torch.preserve_format): ``self.to(torch.int64)``."""
    op, function = 'long', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.int64, memory_format=memory_format)


class Int(Op):
    """Tensor.int(memory_format=torch.preserve_format): ``self.to(torch.int32)``."""
    op, function = 'int', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.int32, memory_format=memory_format)


class Short(Op):
    """Tensor.short(memory_format=torch.preserve_format): ``self.to(torch.int16)``."""
    op, function = 'short', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.int16, memory_format=memory_format)


class Char(Op):
    """Tensor.char(memory_format=torch.preserve_format): ``self.to(torch.int8)``."""
    op, function = 'char', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.int8, memory_format=memory_format)


class Byte(Op):
    """Tensor.byte(memory_format=torch.preserve_format): ``self.to(torch.uint8)``."""
    op, function = 'byte', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.uint8, memory_format=memory_format)


class Bool(Op):
    """Tensor.bool(memory_format=torch.preserve_format): ``self.to(torch.bool)``."""
    op, function = 'bool', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.bool_, memory_format=memory_format)


class CFloat(Op):
    """Tensor.cfloat(memory_format=torch.preserve_format): ``self.to(torch.complex64)``."""
    op, function = 'cfloat', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.complex64, memory_format=memory_format)


class CDouble(Op):
    """Tensor.cdouble(memory_format=torch.preserve_format): ``self.to(torch.complex128)``."""
    op, function = 'cdouble', False

    def forward(input, memory_format=_memory_format.preserve_format):
        return to(input, backend.complex128, memory_format=memory_format)


class TypeAs(Op):
    """Tensor.type_as(other): ``self.to(other.dtype)``."""
    op, function = 'type_as', False
    tensors = ('input', 'other')

    def forward(input, other):
        return to(input, other.dtype)


class Cpu(Op):
    """Tensor.cpu(*, memory_format=torch.preserve_format): the tensor in CPU memory (itself if it is there)."""
    op, function = 'cpu', False

    def forward(input, *, memory_format=_memory_format.preserve_format):
        return to(input, device='cpu', memory_format=memory_format)


class Cuda(Op):
    """Tensor.cuda(device=None, non_blocking=False, memory_format=torch.preserve_format): the
    tensor on a CUDA device (the current one, or ``device``: an index, a name or a device)."""
    op, function = 'cuda', False

    def forward(input, device=None, non_blocking=False, memory_format=_memory_format.preserve_format):
        if type(device) is int:  # (an index: the accelerator's device, as PyTorch's parser reads it)
            device = backend.device(device)
        return to(input, device='cuda' if device is None else device, memory_format=memory_format)


class Type(Op):
    """Tensor.type(dtype=None, non_blocking=False, **kwargs): the legacy type's name (``'torch.FloatTensor'``)
    without ``dtype``; else the tensor converted to ``dtype`` (a dtype, a legacy type or its name)."""
    op, function = 'type', False
    parsed = False  # (its dtype is also a legacy type or its name: 'torch.FloatTensor')

    def forward(input, dtype=None, non_blocking=False, **kwargs):
        return ops.tensor_type(input, dtype, non_blocking, **kwargs)  # (creation's: the legacy types are above)
