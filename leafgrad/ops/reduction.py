"""Reductions: sum and mean (the op library adds the rest of the family here)."""
from .. import backend
from ._util import Node, record, wrap_dims, xp


def _reduced_shape_for_grad(shape, dims):
    """The input shape with the reduced dims set to 1, to broadcast a gradient back."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(grad, shape, dims, keepdim):
    from .shape import expand, reshape
    if not keepdim and dims:
        grad = reshape(grad, _reduced_shape_for_grad(shape, dims))
    return expand(grad, shape)


class SumBackward0(Node):
    __slots__ = ('self_shape',)

    def apply(self, grad):
        from .shape import expand
        return expand(grad, self.self_shape),


class SumBackward1(Node):
    __slots__ = ('self_shape', 'dims', 'keepdim')

    def apply(self, grad):
        return _expand_back(grad, self.self_shape, self.dims, self.keepdim),


def _sum_dtype(data, dtype):
    if dtype is not None:
        return backend.to_dtype(dtype).np
    if data.dtype.kind in 'biu':
        return xp.int64
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None):
    data = input._data
    out_dtype = _sum_dtype(data, dtype)
    if dim is None:
        result, node = record(xp.asarray(data.sum(dtype=out_dtype)), SumBackward0, (input,))
        if node is not None:
            node.self_shape = data.shape
        return result
    dims = wrap_dims(dim, data.ndim)
    result, node = record(xp.asarray(data.sum(axis=dims, keepdims=keepdim, dtype=out_dtype)),
                          SumBackward1, (input,))
    if node is not None:
        node.self_shape, node.dims, node.keepdim = data.shape, dims, keepdim
    return result


class MeanBackward0(Node):
    __slots__ = ('self_shape', 'count')

    def apply(self, grad):
        from .shape import expand
        return expand(grad / self.count, self.self_shape),


class MeanBackward1(Node):
    __slots__ = ('self_shape', 'dims', 'keepdim', 'count')

    def apply(self, grad):
        return _expand_back(grad / self.count, self.self_shape, self.dims, self.keepdim),


def mean(input, dim=None, keepdim=False, *, dtype=None):
    data = input._data
    if dtype is not None:
        data = data.astype(backend.to_dtype(dtype).np)
    if data.dtype.kind != 'f':
        raise RuntimeError('mean(): could not infer output dtype. Input dtype must be either a floating '
                           f'point or complex dtype. Got: {backend.from_np(data.dtype).name.capitalize()}')
    if dim is None:
        result, node = record(xp.asarray(data.mean()), MeanBackward0, (input,))
        if node is not None:
            node.self_shape, node.count = data.shape, max(data.size, 1) if data.size else 0
        return result
    dims = wrap_dims(dim, data.ndim)
    result, node = record(xp.asarray(data.mean(axis=dims, keepdims=keepdim)), MeanBackward1, (input,))
    if node is not None:
        count = 1
        for d in dims:
            count *= data.shape[d]
        node.self_shape, node.dims, node.keepdim, node.count = data.shape, dims, keepdim, count
    return result


class VarBackward0(Node):
    __slots__ = ('dims', 'keepdim', 'correction', 'count')

    def apply(self, grad):
        (x,) = self.saved_tensors
        centered = x - mean(x, self.dims, keepdim=True)
        g = grad if self.keepdim else _unsqueeze_dims(grad, self.dims)
        return g * centered * (2.0 / max(self.count - self.correction, 0)),


class StdBackward0(Node):
    __slots__ = ('dims', 'keepdim', 'correction', 'count')

    def apply(self, grad):
        x, result = self.saved_tensors
        centered = x - mean(x, self.dims, keepdim=True)
        g = grad / result
        if not self.keepdim:
            g = _unsqueeze_dims(g, self.dims)
        return g * centered * (1.0 / max(self.count - self.correction, 0)),


def _unsqueeze_dims(t, dims):
    from .shape import unsqueeze
    for d in sorted(dims):
        t = unsqueeze(t, d)
    return t


def _var_args(input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = wrap_dims(dim, input._data.ndim)
    count = 1
    for d in dims:
        count *= input._data.shape[d]
    return dims, correction, count


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dims, correction, count = _var_args(input, dim, unbiased, keepdim, correction)
    data = input._data
    with xp.errstate(divide='ignore', invalid='ignore'):
        out = xp.asarray(data.var(axis=dims, ddof=correction, keepdims=keepdim))
    result, node = record(out.astype(data.dtype, copy=False), VarBackward0, (input,))
    if node is not None:
        node.dims, node.keepdim, node.correction, node.count = dims, keepdim, correction, count
        node.save(input)
    return result


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dims, correction, count = _var_args(input, dim, unbiased, keepdim, correction)
    data = input._data
    with xp.errstate(divide='ignore', invalid='ignore'):
        out = xp.asarray(data.std(axis=dims, ddof=correction, keepdims=keepdim))
    result, node = record(out.astype(data.dtype, copy=False), StdBackward0, (input,))
    if node is not None:
        node.dims, node.keepdim, node.correction, node.count = dims, keepdim, correction, count
        from ._util import saved_output
        node.save(input, saved_output(result))
    return result


FUNCTIONS = ['sum', 'mean', 'var', 'std']
