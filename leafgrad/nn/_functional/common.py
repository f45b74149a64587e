"""What the functional modules share: argument checks with PyTorch's messages, constants."""
import warnings

from ...ops._util import wrap, xp
from ...tensor import Tensor
from ...ops.reduction import mean, sum as _sum

REDUCTIONS = ('mean', 'sum', 'none')


def legacy_reduction(size_average, reduce, reduction):
    """The deprecated size_average/reduce arguments, mapped to ``reduction`` as PyTorch maps them."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' instead."
                  if (size_average is None or size_average) and (reduce is None or reduce) else
                  "size_average and reduce args will be deprecated, please use reduction='sum' instead."
                  if reduce is None or reduce else
                  "size_average and reduce args will be deprecated, please use reduction='none' instead.",
                  UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return 'none'
    return 'mean' if size_average else 'sum'


def check_reduction(reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f'{reduction} is not a valid value for reduction')


def const(array, like=None):
    """A constant (no grad) tensor around ``array``, in ``like``'s dtype when given."""
    a = xp.asarray(array)
    if like is not None and a.dtype != like._data.dtype:
        a = a.astype(like._data.dtype)
    return wrap(a)


def size_str(shape):
    return f'torch.Size({list(shape)})'.replace('torch', 'leafgrad')


_SCALAR_NAMES = {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'int64': 'Long', 'int32': 'Int',
                 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool', 'complex64': 'ComplexFloat',
                 'complex128': 'ComplexDouble'}


def dtype_name(t):
    """PyTorch's scalar type name (Float, Long …) of a tensor, as its error messages print it."""
    return _SCALAR_NAMES.get(t._data.dtype.name, t._data.dtype.name) if isinstance(t, Tensor) else type(t).__name__


def ntuple(x, n, name='kernel_size'):
    if isinstance(x, Tensor):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        if len(x) == 1:
            return tuple(int(v) for v in x) * n
        return tuple(int(v) for v in x)
    return (int(x),) * n


def reduce_loss(t, reduction):
    """Apply a loss's reduction with leafgrad ops (mean -> MeanBackward0, sum -> SumBackward0)."""
    if reduction == 'mean':
        return mean(t)
    if reduction == 'sum':
        return _sum(t)
    return t


def not_tensor(fname, value, name='input', position=1):
    """PyTorch's argument-parser TypeError for a non-tensor where a tensor is required."""
    return TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")
