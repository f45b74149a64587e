"""Matrix products. ``matmul`` dispatches on dimensions as PyTorch does, so the recorded
nodes (DotBackward0, MvBackward0, MmBackward0, BmmBackward0 …) carry PyTorch's names."""
from ._util import Node, record, xp
from . import shape as _shape


def _tname(t):
    return {'float32': 'float', 'float64': 'double', 'float16': 'c10::Half', 'int64': 'long int',
            'int32': 'int'}.get(t._data.dtype.name, t._data.dtype.name)


class MmBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = mm(grad, _shape.t(b)) if self.next_functions[0][0] is not None else None
        gb = mm(_shape.t(a), grad) if self.next_functions[1][0] is not None else None
        return ga, gb


def mm(input, mat2):
    a, b = input._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError(f'self must be a matrix')
    if b.ndim != 2:
        raise RuntimeError(f'mat2 must be a matrix')
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and '
                           f'{b.shape[0]}x{b.shape[1]})')
    if a.dtype != b.dtype:
        raise RuntimeError(f'expected m1 and m2 to have the same dtype, but got: {_tname(input)} != {_tname(mat2)}')
    out, node = record(a @ b, MmBackward0, (input, mat2))
    if node is not None:
        node.save(input, mat2)
    return out


class MvBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        a, v = self.saved_tensors
        ga = outer(grad, v) if self.next_functions[0][0] is not None else None
        gv = mv(_shape.t(a), grad) if self.next_functions[1][0] is not None else None
        return ga, gv


def mv(input, vec):
    a, v = input._data, vec._data
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f'vector + matrix @ vector expected, got {a.ndim}, {v.ndim}')
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(f'size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})')
    if a.dtype != v.dtype:
        raise RuntimeError(f'expected m1 and m2 to have the same dtype, but got: {_tname(input)} != {_tname(vec)}')
    out, node = record(a @ v, MvBackward0, (input, vec))
    if node is not None:
        node.save(input, vec)
    return out


class DotBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = grad * b if self.next_functions[0][0] is not None else None
        gb = grad * a if self.next_functions[1][0] is not None else None
        return ga, gb


def dot(input, other):
    a, b = input._data, other._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f'1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors')
    if a.shape != b.shape:
        raise RuntimeError(f'inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have '
                           'the same number of elements, but got {} and {} elements respectively'.format(a.shape[0], b.shape[0]))
    if a.dtype != b.dtype:
        raise RuntimeError(f'dot : expected both vectors to have same dtype, but found {input.dtype.name.capitalize()} '
                           f'and {other.dtype.name.capitalize()}')
    out, node = record(xp.asarray(a @ b), DotBackward0, (input, other))
    if node is not None:
        node.save(input, other)
    return out


class OuterBackward(Node):
    def apply(self, grad):
        a, b = self.saved_tensors
        ga = mv(grad, b) if self.next_functions[0][0] is not None else None
        gb = mv(_shape.t(grad), a) if self.next_functions[1][0] is not None else None
        return ga, gb

    def name(self):
        return 'MulBackward0'  # PyTorch records outer as a broadcast multiply


def outer(input, vec2):
    out, node = record(xp.multiply.outer(input._data, vec2._data), OuterBackward, (input, vec2))
    if node is not None:
        node.save(input, vec2)
    return out


ger = outer


class BmmBackward0(Node):
    __slots__ = ()

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = bmm(grad, _shape.transpose(b, 1, 2)) if self.next_functions[0][0] is not None else None
        gb = bmm(_shape.transpose(a, 1, 2), grad) if self.next_functions[1][0] is not None else None
        return ga, gb


def bmm(input, mat2):
    a, b = input._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError(f'batch1 must be a 3D tensor')
    if b.ndim != 3:
        raise RuntimeError(f'batch2 must be a 3D tensor')
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f'Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] '
                           f'but got: [{b.shape[0]}, {b.shape[1]}].')
    out, node = record(xp.matmul(a, b), BmmBackward0, (input, mat2))
    if node is not None:
        node.save(input, mat2)
    return out


def matmul(input, other):
    """PyTorch's matmul: dot, mv, mm, or a batched product with broadcast batch dims."""
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f'both arguments to matmul need to be at least 1D, but they are {da}D and {db}D')
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        product = mm(_shape.unsqueeze(input, 0), other)
        out, node = _shape.make_view(product, product._data[0], _shape.SqueezeBackward4, lambda t: t[0])
        if node is not None:
            node.self_shape = product._data.shape
        return out
    if da == 2 and db == 2:
        return mm(input, other)
    a_shape, b_shape = input._data.shape, other._data.shape
    if db <= 2:
        # fold the batch into the rows: one mm, as PyTorch does
        a = input if da > 1 else _shape.unsqueeze(input, 0)
        rows = _shape.reshape(a, (-1, a._data.shape[-1]))
        b = other if db == 2 else _shape.unsqueeze(other, 1)
        if rows._data.shape[1] != b._data.shape[0]:
            raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({rows._data.shape[0]}x{rows._data.shape[1]} '
                               f'and {b._data.shape[0]}x{b._data.shape[1]})')
        out_shape = a_shape[:-1] + (b._data.shape[1],) if db == 2 else a_shape[:-1]
        return _unsafe_view(mm(rows, b), out_shape)
    # broadcast batch dims, then bmm
    a = input if da > 1 else _shape.unsqueeze(input, 0)
    b = other
    n, k = a._data.shape[-2:]
    k2, m = b._data.shape[-2:]
    if k != k2:
        raise RuntimeError(f'Expected size for first two dimensions of batch2 tensor to be: [{1}, {k}] but got: [{1}, {k2}].')
    batch = tuple(xp.broadcast_shapes(a._data.shape[:-2], b._data.shape[:-2]))
    a3 = _shape.reshape(_shape.expand(a, batch + (n, k)), (-1, n, k))
    b3 = _shape.reshape(_shape.expand(b, batch + (k, m)), (-1, k, m))
    out_shape = batch + ((n,) if da > 1 else ()) + (m,)
    return _unsafe_view(bmm(a3, b3), out_shape)


def _unsafe_view(t, shape):
    out, node = record(t._data.reshape(shape), _shape.UnsafeViewBackward0, (t,))
    if node is not None:
        node.self_shape = t._data.shape
    return out


FUNCTIONS = ['matmul', 'mm', 'mv', 'dot', 'outer', 'ger', 'bmm']
