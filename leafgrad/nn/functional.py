"""nn.functional: the neural-network ops (the op library grows this module)."""
from .. import backend
from ..ops import elementwise as _ew
from ..ops import inplace as _inplace
from ..ops._util import Node, record, xp
from ..ops.linalg import mm
from ..ops.shape import reshape, t


def relu(input, inplace=False):
    if inplace:
        return _inplace.inplace(input, _ew.relu)
    return _ew.relu(input)


sigmoid = _ew.sigmoid
tanh = _ew.tanh


class AddmmBackward0(Node):
    def apply(self, grad):
        mat1, mat2 = self.saved_tensors
        gb = None
        if self.next_functions[0][0] is not None:
            from ..ops._util import sum_to
            gb = sum_to(grad, self.bias_shape)
        g1 = mm(grad, t(mat2)) if self.next_functions[1][0] is not None else None
        g2 = mm(t(mat1), grad) if self.next_functions[2][0] is not None else None
        return gb, g1, g2


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        return _ew.add(_ew.mul(input, beta), _ew.mul(mm(mat1, mat2), alpha))
    a, b = mat1._data, mat2._data
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[-1]} and '
                           f'{b.shape[0]}x{b.shape[-1]})')
    data = a @ b
    data += input._data
    out, node = record(data, AddmmBackward0, (input, mat1, mat2))
    if node is not None:
        node.bias_shape = input._data.shape
        node.save(mat1, mat2)
    return out


def linear(input, weight, bias=None):
    """input @ weight.T + bias, recorded as PyTorch records it (AddmmBackward0 on 2-D input)."""
    if input._data.shape[-1] != weight._data.shape[-1]:
        a = input._data.shape
        rows = 1
        for s in a[:-1]:
            rows *= s
        raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({rows}x{a[-1]} and '
                           f'{weight._data.shape[1]}x{weight._data.shape[0]})')
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f'mat1 and mat2 must have the same dtype, but got {input.dtype.name.capitalize()} '
                           f'and {weight.dtype.name.capitalize()}')
    wt = t(weight)
    if input._data.ndim == 2:
        return mm(input, wt) if bias is None else addmm(bias, input, wt)
    from ..ops.linalg import matmul
    out = matmul(input, wt)
    return out if bias is None else _ew.add(out, bias)


class MseLossBackward0(Node):
    def apply(self, grad):
        x, y = self.saved_tensors
        diff = x - y
        if self.reduction == 'mean':
            g = diff * (grad * (2.0 / max(self.count, 1)))
        else:
            g = diff * (grad * 2.0)
        gx = g if self.next_functions[0][0] is not None else None
        gy = -g if self.next_functions[1][0] is not None else None
        return gx, gy


def mse_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    if input._data.shape != target._data.shape:
        import warnings
        warnings.warn(f'Using a target size ({target.shape}) that is different to the input size ({input.shape}). '
                      'This will likely lead to incorrect results due to broadcasting. Please ensure they have the '
                      'same size.', UserWarning, stacklevel=2)
        shape = xp.broadcast_shapes(input._data.shape, target._data.shape)
        from ..ops.shape import expand
        input, target = expand(input, shape), expand(target, shape)
    diff = input._data - target._data
    sq = diff * diff
    if reduction == 'mean':
        data = xp.asarray(sq.mean())
    elif reduction == 'sum':
        data = xp.asarray(sq.sum())
    elif reduction == 'none':
        data = sq
    else:
        raise ValueError(f'{reduction} is not a valid value for reduction')
    out, node = record(data, MseLossBackward0, (input, target))
    if node is not None:
        node.reduction, node.count = reduction, sq.size
        node.save(input, target)
    return out
