"""Moving a tensor to another dtype or device (``to``, ``float``, ``cuda`` …)."""
from .. import backend
from ._util import Node, record
from ..tensor import Tensor


class ToCopyBackward0(Node):
    def jvp(self, tangents, output):
        return tangents[0].to(output.dtype)

    def apply(self, grad):
        return to(grad, dtype=self.self_dtype, device=self.self_device),


def _parse_to(args, kwargs):
    dtype = kwargs.pop('dtype', None)
    device = kwargs.pop('device', None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (backend.dtype,)) or a in (float, int, bool):
            dtype = a
        elif isinstance(a, (str, backend.device)):
            device = a
        elif a is None:
            continue
        else:
            raise TypeError(f'to() received an invalid combination of arguments: {a!r}')
    return dtype, device, kwargs.pop('copy', False)


def to(input, *args, **kwargs):
    dtype, device, copy = _parse_to(args, kwargs)
    data = input._data
    new = data
    if device is not None:
        dev = backend.device(device) if not isinstance(device, backend.device) else device
        if dev != backend.device_of(data) and not (dev.type == 'cuda' and dev.index is None and
                                                    backend.device_of(data).type == 'cuda'):
            new = backend.to_device(new, dev)
    if dtype is not None:
        new = new.astype(backend.to_dtype(dtype).np, copy=False)
    if new is data:
        if not copy:
            return input
        new = data.copy()
    out, node = record(new, ToCopyBackward0, (input,))
    if node is not None:
        if new.dtype.kind not in 'fV':
            out._grad_fn, out._requires_grad = None, False
        node.self_dtype, node.self_device = input.dtype, input.device
    return out


def _caster(name, dtype):
    def cast(input, memory_format=None):
        return to(input, dtype)
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
char = _caster('char', backend.int8)


def bfloat16(input, memory_format=None):
    return to(input, backend._make_bfloat16())  # (bfloat16 is made on first use)


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
           'short': short, 'bool': bool_, 'byte': byte, 'char': char, 'type_as': type_as, 'cpu': cpu, 'cuda': cuda,
           'type': type_}
