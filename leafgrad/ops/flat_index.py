"""Ops on a tensor read as one flat row: put/put_ (write at flat indices), sum_to_size (the
reduction that undoes an expand), and the CPU-only Python-callable methods apply_ and map_,
each declared once (``_op.Op``)."""
from ._inplace import inplace
from ._op import Op
from ._util import SCALAR_NAMES, ops, record, wrap, xp
from .._arg_parser import int_list


def _needs(node, i):
    return node.next_functions[i][0] is not None


# ---- put / put_ -------------------------------------------------------------------------------

def _put_checks(input, index, source):
    idx, src = index._data, source._data
    if idx.dtype != xp.int64:
        raise RuntimeError(f'put_(): Expected a long tensor for index, but got {SCALAR_NAMES.get(idx.dtype.name)}')
    if input._data.dtype != src.dtype:
        raise RuntimeError(f'put_(): self and source expected to have the same dtype, but got self.dtype = '
                           f'{SCALAR_NAMES.get(input._data.dtype.name)} and source.dtype = '
                           f'{SCALAR_NAMES.get(src.dtype.name)}')
    if idx.size != src.size:
        raise IndexError(f'put_(): Expected source and index to have the same number of elements, but got '
                         f'source.numel() = {src.size}, index.numel() = {idx.size}')
    n = input._data.size
    flat = idx.reshape(-1)
    bad = (flat >= n) | (flat < -n)
    if bad.any():
        raise IndexError(f'out of range: tried to access index {int(flat[bad][0])} on a tensor of {n} elements.')
    return flat, src.reshape(-1)


class Put(Op):
    """put(input, index, source, accumulate=False): a copy of ``input`` with source's elements
    written (or added: ``accumulate``) at the flat indices ``index`` (negative ones counted
    from the end); ``Tensor.put_`` in place."""
    op, node = 'put', 'PutBackward0'
    tensors = ('input', 'index', 'source')
    __slots__ = ('accumulate', 'source_shape')

    def forward(input, index, source, accumulate=False):
        flat, values = _put_checks(input, index, source)
        out = input._data.copy()
        view = out.reshape(-1)
        if accumulate:
            xp.add.at(view, flat, values)
        else:
            view[flat] = values
        result, node = record(out, Put, (input, index, source))
        if node is not None:
            node.accumulate, node.source_shape = accumulate, source._data.shape
            node.save(wrap(xp.where(flat < 0, flat + input._data.size, flat).reshape(index._data.shape)))
        return result

    def inplace(self, index, source, accumulate=False):
        _put_checks(self, index, source)  # (before the in-place machinery, which would name put)
        return inplace(self, lambda s: put(s, index, source, accumulate), (source,))

    def apply(self, grad):
        (index,) = self.saved_tensors
        g_self = g_source = None
        if _needs(self, 0):
            if self.accumulate:
                g_self = grad
            else:  # the overwritten places pass nothing back
                keep = xp.ones(grad._data.size, dtype=grad._data.dtype, like=grad._data)
                keep[index._data.reshape(-1)] = 0
                g_self = grad * wrap(keep.reshape(grad._data.shape))
        if _needs(self, 2):
            g_source = ops.take(grad, index).reshape(self.source_shape)
        return g_self, None, g_source


# ---- sum_to_size -------------------------------------------------------------------------------------

class SumToSize(Op):
    """Tensor.sum_to_size(*size): the sum of ``self`` down to ``size``, a shape that expands to
    self's (a method only, as in PyTorch)."""
    op, function = 'sum_to_size', False

    def forward(self, *size):
        size = int_list(size, 'sum_to_size')
        shape = self._data.shape
        if len(size) > len(shape) or any(s != 1 and s != t for s, t in zip(reversed(size), reversed(shape))):
            raise RuntimeError(f'size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.')
        # PyTorch's sum_to: sum the leading and the broadcast dims keeping them, then view away the leading ones
        lead = len(shape) - len(size)
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
        if not dims:
            return self
        out = ops.sum(self, dims, keepdim=True)
        return out.view(tuple(size)) if lead else out


# ---- apply_, map_ -------------------------------------------------------------------------------------

def _refuse_grad(self, name):
    if self._requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")


class Apply(Op):
    """Tensor.apply_(callable): each element replaced by callable(element) (a Python number),
    in place (a method only)."""
    op, function = 'apply_', False

    def forward(self, callable):
        _refuse_grad(self, 'apply_')
        out = self._data.copy()
        flat = out.reshape(-1)
        for i in range(flat.size):
            flat[i] = callable(flat[i].item())
        self._data[...] = out   # (as PyTorch's: the version counter is not bumped)
        return self


class Map(Op):
    """Tensor.map_(tensor, callable): self[i] = callable(self[i], tensor[i]) in place,
    ``tensor`` broadcast to self's shape (a method only)."""
    op, function = 'map_', False

    def forward(self, tensor, callable):
        _refuse_grad(self, 'map_')
        try:
            other = xp.broadcast_to(tensor._data, self._data.shape)
        except ValueError:
            raise RuntimeError(f'The expanded size of the tensor ({self._data.shape[-1] if self._data.ndim else 1}) '
                               f'must match the existing size ({tensor._data.shape[-1]}) at non-singleton dimension '
                               f'{tensor._data.ndim - 1}.  Target sizes: {list(self._data.shape)}.  Tensor sizes: '
                               f'{list(tensor._data.shape)}') from None
        out = self._data.copy()
        a, b = out.reshape(-1), other.reshape(-1)
        for i in range(a.size):
            a[i] = callable(a[i].item(), b[i].item())
        self._data[...] = out
        return self
