"""Products and matrices assembled from other tensors: trace, inner, addr, kron,
block_diag, diagflat, cartesian_prod, combinations.

Where PyTorch records a node of its own (Trace, Addr, BlockDiag) the
op records one, its derivative written with leafgrad ops; where PyTorch composes other ops (kron,
inner, diagflat, cartesian_prod, combinations) so does leafgrad, and the graph ends in the same
node. Each op is declared once (``_op.Op``).
"""
import itertools

from .. import backend
from ._op import CAST, Op, castable_dtype, check_out_type, write_out
from ._util import ops, record, sum_to, wrap, xp
from .._arg_parser import refuse_arguments
from ..tensor import Tensor


def _needs(node, i):
    return node.next_functions[i][0] is not None


# ---- trace --------------------------------------------------------------------------------------

class Trace(Op):
    """trace(input): the sum of the main diagonal of a matrix (integers sum to int64, as sum
    does)."""
    op, node = 'trace', 'TraceBackward0'
    saved = ('self_sym_sizes=self_shape',)
    __slots__ = ('self_shape', 'dtype')

    def forward(input):
        """The sum of the main diagonal of a matrix (integers sum to int64, as sum does)."""
        try:
            a = input._data
            if a.ndim != 2:
                raise RuntimeError(f'trace: expected a matrix, but got tensor with dim {a.ndim}')
            if a.dtype.kind == 'b':
                raise NotImplementedError('"trace" not implemented for \'Bool\'')
            dt = xp.int64 if a.dtype.kind in 'biu' else a.dtype
            out, node = record(xp.asarray(xp.trace(a, dtype=dt)).astype(dt, copy=False), Trace, (input,))
            if node is not None:
                node.self_shape, node.dtype = a.shape, a.dtype
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        n, m = self.self_shape
        return grad * wrap(xp.eye(n, m, dtype=self.dtype, like=grad._data)),


# ---- inner, addr ----------------------------------------------------------------------------

class Inner(Op):
    """inner(input, other, *, out=None): sums of products over the last dimension of both (a
    product when either is 0-d; out= mul's then, else tensordot's)."""
    op = 'inner'
    tensors = ('input', 'other')

    def forward(input, other, *, out=None):
        """Sums of products over the last dimension of both (a product when either is 0-d)."""
        if out is not None:
            check_out_type('inner', out)
        a, b = input._data, other._data
        if a.ndim == 0 or b.ndim == 0:  # (out=: mul's)
            return input * other if out is None else CAST('mul', out, input * other)
        if a.shape[-1] != b.shape[-1]:
            raise RuntimeError(f'inner() the last dimension must match on both input tensors but got shapes '
                               f'{list(a.shape)} and {list(b.shape)}')
        return ops.tensordot(input, other, dims=([-1], [-1]), out=out)


class Addr(Op):
    """addr(input, vec1, vec2, *, beta=1, alpha=1, out=None): ``beta * input + alpha *
    outer(vec1, vec2)``; beta = 0 ignores input (NaN included)."""
    op, node, out, inplace = 'addr', 'AddrBackward0', CAST, True
    __slots__ = ('beta', 'alpha', 'self_shape')

    def forward(input, vec1, vec2, *, beta=1, alpha=1):
        """beta * input + alpha * outer(vec1, vec2); beta = 0 ignores input (NaN included)."""
        if not (isinstance(vec1, Tensor) and isinstance(vec2, Tensor) and isinstance(input, Tensor)):
            refuse_arguments()  # (an int, a str: PyTorch's parser's TypeError, naming the argument)
        for name, t in (('vec1', vec1), ('vec2', vec2)):
            if t._data.ndim != 1:
                raise RuntimeError(f'addr: Expected 1-D argument {name}, but got {t._data.ndim}-D')
        prod = xp.multiply.outer(vec1._data, vec2._data)
        try:
            target = xp.broadcast_shapes(input._data.shape, prod.shape)
        except ValueError:
            target = None
        if target != prod.shape:
            raise RuntimeError(f'The expanded size of the tensor ({prod.shape[-1]}) must match the existing size '
                               f'({input._data.shape[-1]}) at non-singleton dimension 1.  Target sizes: '
                               f'{list(prod.shape)}.  Tensor sizes: {list(input._data.shape)}')
        dt = backend.result_type(input, vec1, vec2).np
        if dt.kind == 'b':
            data = (bool(beta) & input._data) | (bool(alpha) & prod) if beta else bool(alpha) & prod
        else:
            data = alpha * prod.astype(dt) if alpha != 1 else prod.astype(dt)
            if beta != 0:
                data = data + (beta * input._data.astype(dt) if beta != 1 else input._data.astype(dt))
        out, node = record(xp.broadcast_to(data, prod.shape).astype(dt, copy=False), Addr, (input, vec1, vec2))
        if node is not None:
            node.beta, node.alpha, node.self_shape = beta, alpha, input._data.shape
            node.save(vec1, vec2)
        return out

    def apply(self, grad):
        v1, v2 = self.saved_tensors
        g_in = None
        if _needs(self, 0):
            g_in = sum_to(grad if self.beta == 1 else grad * self.beta, self.self_shape)
        g1 = ops.mv(grad, v2) * self.alpha if _needs(self, 1) else None
        g2 = ops.mv(ops.t(grad), v1) * self.alpha if _needs(self, 2) else None
        return g_in, g1, g2


# ---- kron, block_diag, diagflat ---------------------------------------------------------------------

def _kron_out(name, out, result, differentiable=True):
    """kron's out=: mul's (PyTorch's kron ends in a mul), errors naming kron."""
    return write_out('mul', out, result, castable_dtype, differentiable, 'kron')


class Kron(Op):
    """kron(input, other, *, out=None): the Kronecker product, block (i, j) of the result
    ``input[i, j] * other``."""
    op, out = 'kron', _kron_out
    tensors = ('input', 'other')

    def forward(input, other):
        """The Kronecker product: block (i, j) of the result is input[i, j] * other."""
        a, b = input._data, other._data
        n = max(a.ndim, b.ndim)
        sa = (1,) * (n - a.ndim) + a.shape
        sb = (1,) * (n - b.ndim) + b.shape
        # interleave the dims: input's (s0, 1, s1, 1, ...) times other's (1, t0, 1, t1, ...)
        left = ops.reshape(input, tuple(itertools.chain.from_iterable((s, 1) for s in sa)))
        right = ops.reshape(other, tuple(itertools.chain.from_iterable((1, t) for t in sb)))
        return ops.unsafe_view(left * right, tuple(s * t for s, t in zip(sa, sb)))


class BlockDiag(Op):
    """block_diag(*tensors): the tensors (0-, 1- or 2-D, a 1-D one a row) along the diagonal of
    one matrix."""
    op, node, method = 'block_diag', 'BlockDiagBackward0', False
    __slots__ = ('shapes',)

    def forward(*tensors):
        """The tensors (0-, 1- or 2-D, a 1-D one a row) along the diagonal of one matrix."""
        try:
            arrays = []
            for i, t in enumerate(tensors):
                a = t._data
                if a.ndim > 2:
                    raise RuntimeError(f'torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} '
                                       'has '
                                       f'{a.ndim} dimensions')
                arrays.append(a.reshape(1, -1) if a.ndim == 1 else (a.reshape(1, 1) if a.ndim == 0 else a))
            dt = backend.result_type(*tensors).np if tensors else backend.get_default_dtype().np
            rows, cols = sum(a.shape[0] for a in arrays), sum(a.shape[1] for a in arrays)
            data = xp.zeros((rows if arrays else 1, cols), dtype=dt,  # (none: PyTorch's 1 x 0)
                            like=arrays[0] if arrays else None)
            r = c = 0
            for a in arrays:
                data[r:r + a.shape[0], c:c + a.shape[1]] = a
                r, c = r + a.shape[0], c + a.shape[1]
            out, node = record(data, BlockDiag, tensors)
            if node is not None:
                node.shapes = [t._data.shape for t in tensors]
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            for i, t in enumerate(tensors):  # (one list is no list of tensors here: PyTorch's element 0)
                if not isinstance(t, Tensor):
                    raise TypeError(f'expected Tensor as element {i} in argument 0, but got {type(t).__name__}') \
                        from None
            raise

    def apply(self, grad):
        grads, r, c = [], 0, 0
        for i, shape in enumerate(self.shapes):
            rows, cols = (1, shape[0]) if len(shape) == 1 else ((1, 1) if not shape else shape)
            if _needs(self, i):
                piece = grad[r:r + rows, c:c + cols]
                grads.append(ops.reshape(piece, shape) if len(shape) != 2 else piece)
            else:
                grads.append(None)
            r, c = r + rows, c + cols
        return tuple(grads)


class Diagflat(Op):
    """diagflat(input, offset=0): the flattened input on the ``offset``-th diagonal of a square
    matrix."""
    op = 'diagflat'

    def forward(input, offset=0):
        """The flattened input on the ``offset``-th diagonal of a square matrix."""
        return ops.diag_embed(ops.reshape(input, (-1,)), offset)


# ---- cartesian_prod, combinations ---------------------------------------------------------------------

def _check_1d(tensors, name):
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f'Expect a 1D vector, but got shape {list(t._data.shape)}')


class CartesianProd(Op):
    """cartesian_prod(*tensors): all tuples (a, b, ...) drawn one from each 1-D tensor, as the
    rows of a matrix (the first tensor varying slowest)."""
    op, method = 'cartesian_prod', False

    def forward(*tensors):
        """All tuples (a, b, ...) drawn one from each 1-D tensor, as the rows of a matrix (the
        first tensor varying slowest)."""
        try:
            _check_1d(tensors, 'cartesian_prod')
            if len(tensors) == 1:
                return tensors[0]
            grids = ops.meshgrid(*tensors, indexing='ij')
            return ops.stack([ops.flatten(g) for g in grids], 1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Combinations(Op):
    """combinations(input, r=2, with_replacement=False): the length-``r`` combinations of a 1-D
    tensor's elements, in itertools' order, as rows."""
    op, method = 'combinations', False

    def forward(input, r=2, with_replacement=False):
        """The length-``r`` combinations of a 1-D tensor's elements, in itertools' order, as rows."""
        try:
            if input._data.ndim != 1:
                raise RuntimeError(f'Expect a 1D vector, but got shape {list(input._data.shape)}')
            if r < 0:
                raise RuntimeError(f'Expect a non-negative number, but got {r}')
            if r == 0:
                return wrap(xp.empty_like(input._data, shape=(0,)))
            n = input._data.shape[0]
            pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
            idx = xp.asarray(list(pick(range(n), r)), dtype=xp.int64).reshape(-1, r)
            if type(input._data) is not xp.ndarray and backend.device_of(input._data).type == 'cuda':
                idx = backend.to_device(idx, backend.device_of(input._data))  # (made on the host, as CuPy would)
            return ops.stack([input[wrap(idx[:, k].copy())] for k in range(r)], 1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise
