"""Moving a tensor to another dtype or device (``to``, ``float``, ``cuda`` …)."""
import warnings

from .. import _memory_format, backend
from ._util import Node, record
from ..tensor import Tensor


class ToCopyBackward0(Node):
    def jvp(self, tangents, output):
        return tangents[0].to(output.dtype)

    def apply(self, grad):
        if grad._data.dtype.kind == 'c' and not self.self_dtype.is_complex:
            grad = grad.real  # a real input's gradient is the real part, quietly (PyTorch's _to_copy_backward)
        return to(grad, dtype=self.self_dtype, device=self.self_device),


_warned_complex_to_real = False


def cast_array(data, np_dtype):
    """``data.astype(np_dtype)``; complex to real keeps the real part with PyTorch's warning (once a
    process, as its TORCH_WARN_ONCE), where NumPy would warn its own ComplexWarning."""
    global _warned_complex_to_real
    if data.dtype.kind == 'c' and np_dtype.kind != 'c':
        if not _warned_complex_to_real:
            _warned_complex_to_real = True
            warnings.warn('Casting complex values to real discards the imaginary part', UserWarning, stacklevel=4)
        data = data.real
    return data.astype(np_dtype, copy=False)


_TO_KEYWORDS = ('dtype', 'device', 'copy', 'non_blocking', 'memory_format')


def _parse_to(args, kwargs):
    """to()'s arguments: (dtype, device, copy, memory_format); anything else is refused."""
    unknown = [k for k in kwargs if k not in _TO_KEYWORDS]
    if unknown:
        got = ', '.join(f'{k}={type(kwargs[k]).__name__}' for k in unknown)
        raise TypeError(f'to() received an invalid combination of arguments - got ({got}, ), but expected one of:\n'
                        ' * (leafgrad.device device = None, leafgrad.dtype dtype = None, bool non_blocking = False, '
                        'bool copy = False, *, leafgrad.memory_format memory_format = None)')
    memory_format = kwargs.get('memory_format') or _memory_format.preserve_format
    _memory_format.check(memory_format, 'to')
    dtype = kwargs.get('dtype', None)
    device = kwargs.get('device', None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (backend.dtype,)) or a in (float, int, bool, complex):
            dtype = a
        elif isinstance(a, (str, backend.device)):
            device = a
        elif a is None:
            continue
        else:
            raise TypeError(f'to() received an invalid combination of arguments: {a!r}')
    return dtype, device, kwargs.get('copy', False), memory_format


def to(input, *args, **kwargs):
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
    if new is data:
        if not copy:
            return input
        new = data.copy(order='K')
    out, node = record(new, ToCopyBackward0, (input,))
    if node is not None:
        if new.dtype.kind not in 'fVc':
            out._grad_fn, out._requires_grad = None, False
        node.self_dtype, node.self_device = input.dtype, input.device
    return out


def _caster(name, dtype):
    def cast(input, memory_format=_memory_format.preserve_format):
        return to(input, dtype, memory_format=memory_format)
    cast.__name__ = name
    return cast


float_ = _caster('float', backend.float32)
double = _caster('double', backend.float64)
half = _caster('half', backend.float16)
long = _caster('long', backend.int64)
int_ = _caster('int', backend.int32)
short = _caster('short', backend.int16)
bool_ = _caster('bool', backend.bool_)
byte = _caster('byte', backend.uint8)
cfloat = _caster('cfloat', backend.complex64)
cdouble = _caster('cdouble', backend.complex128)
char = _caster('char', backend.int8)


def bfloat16(input, memory_format=_memory_format.preserve_format):
    return to(input, backend._make_bfloat16(), memory_format=memory_format)  # (bfloat16 is made on first use)


def type_as(input, other):
    return to(input, other.dtype)


def cpu(input):
    return to(input, device='cpu')


def cuda(input, device=None, non_blocking=False):
    return to(input, device='cuda' if device is None else (f'cuda:{device}' if isinstance(device, int) else device))


def type_(input, dtype=None, non_blocking=False, **kwargs):
    from .._tensor_types import tensor_type  # the legacy types' home
    return tensor_type(input, dtype, non_blocking, **kwargs)


FUNCTIONS = ['to']
METHODS = {'float': float_, 'double': double, 'half': half, 'bfloat16': bfloat16, 'long': long, 'int': int_,
           'short': short, 'bool': bool_, 'cfloat': cfloat, 'cdouble': cdouble, 'byte': byte, 'char': char, 'type_as': type_as, 'cpu': cpu, 'cuda': cuda,
           'type': type_}
