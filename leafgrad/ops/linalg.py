"""Matrix products. ``matmul`` dispatches on dimensions as PyTorch does, so the recorded
nodes (DotBackward0, MvBackward0, MmBackward0, BmmBackward0 …) carry PyTorch's names.

Each op is declared once (``_op.Op``); ``@`` is matmul's operator."""
from ._op import CPP_NAMES, Op, copy_out, same_dtype, write_out as _write_out
from ._util import SCALAR_NAMES, _wrap, autocast, histories_first, ops, opmath, record, state, sum_to, wrap, xp
from ..autograd.graph import _Empty
from ..tensor import Tensor
from .._arg_parser import refuse_arguments


_SCALAR = {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'int64': 'Long', 'int32': 'Int',
           'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool', 'bfloat16': 'BFloat16',
           'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble'}


def _wide_product(a, b):
    """``a @ b`` of two arrays; bfloat16 factors multiplied in float32, unrounded (PyTorch
    accumulates bfloat16 products in float32 and rounds the result once)."""
    if a.dtype.kind == 'V':
        return xp.matmul(a.astype(xp.float32), b.astype(xp.float32))
    return xp.matmul(a, b)


def _product(a, b):
    """``a @ b`` of two arrays, in their dtype (bfloat16: rounded once from float32)."""
    if a.dtype.kind == 'V':
        return _wide_product(a, b).astype(a.dtype)
    return a @ b


def _sname(t):
    """PyTorch's scalar type name (Float, Double …) as its error messages print it."""
    return _SCALAR.get(t._data.dtype.name, t._data.dtype.name)


def _tname(t):
    return CPP_NAMES[t._data.dtype.name]


def bilinear_jvp(node, tangents, product):
    """The forward rule of a product ``product(a, b)`` linear in each factor: ``product(ta, b) +
    product(a, tb)``; the node saved each factor where the other needs one (``save_crosswise``)."""
    ta, tb = tangents[0], tangents[1]
    a, b = node.saved_tensors[-2:]
    out = product(ta, b) if ta is not None else None
    if tb is not None:
        out = product(a, tb) if out is None else out + product(a, tb)
    return out


def mat1_grad(grad, mat2, transposed=False):
    """``grad @ mat2.T``, the gradient of a matrix product's first factor, laid out like mat1
    (PyTorch's mm_mat1_backward: computed transposed when mat1 was laid out by columns)."""
    if not state.grad_enabled:  # a plain backward records nothing: the product of the arrays
        g, b = grad._data, mat2._data
        return wrap(_product(b, g.T).T if transposed else _product(g, b.T))
    if transposed:
        return ops.t(mm(mat2, ops.t(grad)))
    return mm(grad, ops.t(mat2))


def is_transposed(mat):
    """Whether a matrix is laid out column by column (a Linear's ``weight.t()``), by PyTorch's
    test on its strides: stride 1 along rows, one column apart along columns."""
    a = mat._data
    return a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize


def mat2_grad(grad, mat1, transposed):
    """``mat1.T @ grad``, laid out like mat2 (PyTorch's mm_mat2_backward): when mat2 was a
    transposed view (``is_transposed``) the product is computed transposed, so that the
    weight's gradient arrives contiguous and AccumulateGrad can keep it without a copy."""
    if not state.grad_enabled:  # as in mat1_grad
        g, a = grad._data, mat1._data
        return wrap(_product(g.T, a).T if transposed else _product(a.T, g))
    if transposed:
        return ops.t(mm(ops.t(grad), mat1))
    return mm(ops.t(mat1), grad)


def plain_factor_grads(g, a, b, need_a, need_b, a_transposed, b_transposed):
    """The gradients of both factors of ``a @ b`` in a plain backward, from the arrays (the
    output's gradient ``g``, the saved factors): ``mat1_grad`` and ``mat2_grad`` on arrays, laid
    out as they lay them out, in one call (a matrix product's node runs once per product)."""
    ga = gb = None
    if need_a:
        m = b._data
        ga = _wrap((m @ g.T).T if a_transposed else g @ m.T)
    if need_b:
        m = a._data
        gb = _wrap((g.T @ m).T if b_transposed else m.T @ g)
    return ga, gb


class Mm(Op):
    """mm(input, mat2): the product of two matrices."""
    op, node = 'mm', 'MmBackward0'
    __slots__ = ('mat1_transposed', 'mat2_transposed')
    saved = ('self', 'mat2')
    pack_order = (1, 0)  # mat2 first, as PyTorch

    def forward(input, mat2):
        try:
            if input.is_sparse or mat2.is_sparse:  # (leafgrad/sparse.py's products)
                return input.mm(mat2) if input.is_sparse else mat2.__rmatmul__(input)
            if autocast.state.on:
                input, mat2 = autocast.lower_precision(input, mat2)
            # torch.mm words its rank errors differently from addmm
            _check_mm(input, mat2, rank_errors=('self must be a matrix', 'mat2 must be a matrix'))
            a, b = input._data, mat2._data
            out, node = record(_product(a, b), Mm, (input, mat2))
            if node is not None:
                node.mat1_transposed, node.mat2_transposed = is_transposed(input), is_transposed(mat2)
                node.save_crosswise(input, mat2)
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def jvp(self, tangents):
        return bilinear_jvp(self, tangents, mm)

    def apply(self, grad):
        a, b = self.saved_tensors  # (each only where the other factor needs grad)
        if not state.grad_enabled and grad._data.dtype.kind != 'V':  # (bfloat16: _product's rounding)
            nf = self.next_functions
            return plain_factor_grads(grad._data, a, b, nf[0][0] is not None, nf[1][0] is not None,
                                      self.mat1_transposed, self.mat2_transposed)
        ga = mat1_grad(grad, b, self.mat1_transposed) if self.next_functions[0][0] is not None else None
        gb = mat2_grad(grad, a, self.mat2_transposed) if self.next_functions[1][0] is not None else None
        return ga, gb


class Mv(Op):
    """mv(input, vec): the product of a matrix and a vector."""
    op, node = 'mv', 'MvBackward0'
    __slots__ = ()
    saved = ('self', 'vec')

    def forward(input, vec):
        try:
            a, v = input._data, vec._data
            if a.ndim != 2 or v.ndim != 1:
                # (addmv's, with its 1-D self)
                raise RuntimeError(f'vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}')
            if a.shape[1] != v.shape[0]:
                histories_first(input, vec)  # (PyTorch's no_grad-view error comes first)
                raise RuntimeError(f'size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec '
                                   f'({v.shape[0]})')
            if a.dtype != v.dtype:
                raise RuntimeError(f'addmv input tensors must have the same dtype, but got {_sname(vec)}, '
                                   f'{_sname(input)}, and '
                                   f'{_sname(vec)}')
            if a.dtype.kind == 'b' and a.size:  # (an empty product returns before the kernel's dispatch)
                _refuse_bool('addmv_impl_cpu')
            out, node = record(_product(a, v), Mv, (input, vec))
            if node is not None:
                node.save_crosswise(input, vec)
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def jvp(self, tangents):
        return bilinear_jvp(self, tangents, mv)

    def apply(self, grad):
        a, v = self.saved_tensors
        grad = _of_factors_dtype(grad, a, v)
        ga = outer(grad, v) if self.next_functions[0][0] is not None else None
        gv = mv(ops.t(a), grad) if self.next_functions[1][0] is not None else None
        return ga, gv


def _of_factors_dtype(grad, *factors):
    """The gradient of a product of its factors' dtype (the first saved one's; a factor no
    derivative needs is not saved): it arrives in another where a later op promoted (a float64
    operand beside the float32 product), and the products of the derivative (mv, outer, bmm)
    take one dtype. PyTorch's engine casts each gradient to its input's dtype as it leaves a
    node; leafgrad's casts when it is accumulated, so these nodes cast it here."""
    dtype = next(f.dtype for f in factors if isinstance(f, Tensor))
    return grad if grad.dtype == dtype else grad.to(dtype)


def _dot_operands(input, other):
    """The arrays of dot's (and vdot's) operands, checked as PyTorch checks them."""
    a, b = input._data, other._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f'1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors')
    if a.dtype != b.dtype:
        raise RuntimeError(f'dot : expected both vectors to have same dtype, but found {_sname(input)} and {_sname(other)}')
    if a.shape != b.shape:
        raise RuntimeError(f'inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have '
                           'the same number of elements, but got {} and {} elements respectively'.format(a.shape[0], b.shape[0]))
    if a.dtype.kind == 'b':
        _refuse_bool('dot')
    return a, b


def _vdot_out(name, out, result, differentiable=True):
    """dot's and vdot's out= (and matmul's of two vectors, which PyTorch writes by dot's): the
    inputs' dtype only, in their words."""
    return _write_out(name, out, result, same_dtype('result dtype {out} does not match input dtype {result}'),
                      differentiable)


class Dot(Op):
    """dot(input, tensor, *, out=None): the inner product of two vectors."""
    op, node, out = 'dot', 'DotBackward0', _vdot_out
    tensors = ('input', 'tensor')  # (the method's too)
    __slots__ = ()
    saved = ('self', 'tensor')

    def forward(input, tensor):  # (PyTorch's names: its keywords, its errors)
        a, b = _dot_operands(input, tensor)
        out, node = record(xp.asarray(_product(a, b)), Dot, (input, tensor))
        if node is not None:
            node.save_crosswise(input, tensor)
        return out

    def jvp(self, tangents):
        return bilinear_jvp(self, tangents, dot)

    def apply(self, grad):
        a, b = self.saved_tensors
        ga = grad * b if self.next_functions[0][0] is not None else None
        gb = grad * a if self.next_functions[1][0] is not None else None
        return ga, gb


class Vdot(Op):
    """vdot(input, other, *, out=None): ``sum(conj(input) * other)`` of two vectors of one dtype."""
    op, node = 'vdot', 'VdotBackward0'
    tensors = ('input', 'other')
    saved = ('self', 'other')
    out = _vdot_out
    complex_rule = True  # (the derivative below is PyTorch's, conjugates included)
    __slots__ = ()

    def forward(input, other):
        a, b = _dot_operands(input, other)
        result, node = record(xp.asarray(_product(xp.conj(a) if a.dtype.kind == 'c' else a, b)), Vdot, (input, other))
        if node is not None:
            node.save_crosswise(input, other)
        return result

    def apply(self, grad):  # self: conj(grad) other; other: grad self
        a, b = self.saved_tensors
        ga = grad.conj() * b if self.next_functions[0][0] is not None else None
        gb = grad * a if self.next_functions[1][0] is not None else None
        return ga, gb


class OuterBackward(Op):
    """outer(input, vec2) (also ger): the outer product of two vectors."""
    op, aliases = 'outer', ('ger',)  # (no node name: name() below, as PyTorch records outer)
    tensors = ('input', 'vec2')
    __slots__ = ()

    def vmap(V, fn, args, kwargs):  # input[:, None] * vec2, by the batched elementwise ops
        if len(args) != 2 or kwargs or V._logical_ndim(args[0]) != 1 or V._logical_ndim(args[1]) != 1:
            return None
        return V._vm_call('mul', V._vm_call('unsqueeze', args[0], -1), args[1])

    def forward(input, vec2):
        for name, t in (('self', input), ('vec2', vec2)):
            if t._data.ndim != 1:
                raise RuntimeError(f'outer: Expected 1-D argument {name}, but got {t._data.ndim}-D')
        out, node = record(xp.multiply.outer(input._data, vec2._data), OuterBackward, (input, vec2))
        if node is not None:
            node.save_crosswise(input, vec2)
        return out

    def jvp(self, tangents):
        return bilinear_jvp(self, tangents, outer)

    def apply(self, grad):
        a, b = self.saved_tensors
        grad = _of_factors_dtype(grad, a, b)
        ga = mv(grad, b) if self.next_functions[0][0] is not None else None
        gb = mv(ops.t(grad), a) if self.next_functions[1][0] is not None else None
        return ga, gb

    def name(self):
        return 'MulBackward0'  # PyTorch records outer as a broadcast multiply


class Bmm(Op):
    """bmm(input, mat2): the products of two batches of matrices."""
    op, node = 'bmm', 'BmmBackward0'
    __slots__ = ()
    saved = ('self', 'mat2')
    pack_order = (1, 0)  # mat2 first, as PyTorch

    def forward(input, mat2):
        try:
            if autocast.state.on:
                input, mat2 = autocast.lower_precision(input, mat2)
            a, b = input._data, mat2._data
            if a.ndim != 3:
                raise RuntimeError(f'batch1 must be a 3D tensor')
            if b.ndim != 3:
                raise RuntimeError(f'batch2 must be a 3D tensor')
            if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
                raise RuntimeError(f'Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, '
                                   f'{a.shape[2]}] '
                                   f'but got: [{b.shape[0]}, {b.shape[1]}].')
            if _bmm_reads_operands(a, b):
                _check_bmm_dtypes(input, mat2, 'bmm')
                data = _product(a, b)
            else:
                data = _bmm_unread(input, mat2)
            out, node = record(data, Bmm, (input, mat2))
            if node is not None:
                node.save_crosswise(input, mat2)
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def jvp(self, tangents):
        return bilinear_jvp(self, tangents, bmm)

    def apply(self, grad):
        a, b = self.saved_tensors
        factor = a if isinstance(a, Tensor) else b  # (each saved only where the other needs grad)
        if grad._data.dtype != factor._data.dtype:
            # a gradient widened downstream (the product times a float64 tensor): PyTorch's engine
            # casts it to the product's dtype before this node, which bmm's dtype check needs
            grad = grad.to(factor.dtype)
        ga = bmm(grad, ops.transpose(b, 1, 2)) if self.next_functions[0][0] is not None else None
        gb = bmm(ops.transpose(a, 1, 2), grad) if self.next_functions[1][0] is not None else None
        return ga, gb


def _bmm_reads_operands(a, b):
    """Whether PyTorch's bmm kernel reads its operands: an empty result, or an empty contraction
    (a result of zeros), returns before it does, and so before it compares their dtypes."""
    return a.shape[0] * a.shape[1] * b.shape[2] != 0 and a.shape[2] != 0


def _check_bmm_dtypes(batch1, batch2, kernel):
    """The checks of PyTorch's bmm kernel, which dispatches on batch1's dtype (no Bool) and reads
    batch2 as that dtype."""
    if batch1._data.dtype.kind == 'b':
        _refuse_bool(kernel)
    if batch1._data.dtype != batch2._data.dtype:
        raise RuntimeError(f'expected scalar type {_sname(batch1)} but found {_sname(batch2)}')


def _bmm_unread(batch1, batch2):
    """The zeros of a batched product whose operands are not read, in batch2's dtype (PyTorch
    allocates the result like batch2), refused as PyTorch's autograd refuses an integral result
    of inputs that require grad."""
    a, b = batch1._data, batch2._data
    if b.dtype.kind not in 'fcV' and state.grad_enabled and (batch1._requires_grad or batch2._requires_grad):
        raise RuntimeError(f'Autograd not support dtype: {_sname(batch2)}')
    return xp.zeros((a.shape[0], a.shape[1], b.shape[2]), b.dtype, like=b)


def _matmul_operator(self, other):
    """``self @ other``."""
    if not isinstance(other, Tensor):
        return NotImplemented  # (Python's TypeError for `t @ [1, 2]`, as for torch's tensors)
    return matmul(self, other)


def _rmatmul_operator(self, other):
    """``other @ self``."""
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def check_operands(name, input, other):
    """PyTorch's TypeError for an operand of matmul (linalg_matmul) that is no tensor."""
    for position, (param, value) in enumerate((('input', input), ('other', other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{param}' (position {position}) must be Tensor, not "
                            f'{type(value).__name__}')


class Matmul(Op):
    """matmul(input, other, *, out=None) (also ``@``): PyTorch's matmul: dot, mv, mm, or a batched
    product with broadcast batch dims."""
    op = 'matmul'
    operators = {'__matmul__': _matmul_operator, '__rmatmul__': _rmatmul_operator}

    def forward(input, other, *, out=None):
        """PyTorch's matmul: dot, mv, mm, or a batched product with broadcast batch dims."""
        if not isinstance(input, Tensor) or not isinstance(other, Tensor):
            check_operands('matmul', input, other)
        if out is not None:
            if input._data.ndim == 1 and other._data.ndim == 1:
                return _vdot_out('matmul', out, _matmul(input, other))
            return _write_out('matmul', out, _matmul(input, other))
        return _matmul(input, other)


def _matmul(input, other, requires_grad=None):
    """matmul's product (``requires_grad``: the operands' flags when a batch of one was squeezed
    away, which under no_grad would not carry them)."""
    if autocast.state.on:
        input, other = autocast.lower_precision(input, other)
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f'both arguments to matmul need to be at least 1D, but they are {da}D and {db}D')
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        # PyTorch squeezes the product in place: its result is no view, and at version 1
        return ops.squeeze_result_(mm(ops.unsqueeze(input, 0), other))
    if da == 2 and db == 2:
        return mm(input, other)
    if _should_fold(input, other, requires_grad or (input._requires_grad, other._requires_grad)):
        # fold the batch of the larger operand into the rows of one mm (or mv), as PyTorch does
        transpose = db > da
        t1 = ops.transpose(other, -1, -2) if transpose else input
        t2 = (ops.t(input) if da == 2 else input) if transpose else other
        sizes = t1._data.shape
        folded = 1
        for size in sizes[:-1]:
            folded *= size
        rows = ops.reshape(t1, (folded, sizes[-1]))
        if t2._data.ndim == 1:
            return ops.unsafe_view(mv(rows, t2), sizes[:-1])
        if rows._data.shape[1] != t2._data.shape[0]:
            raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({rows._data.shape[0]}x{rows._data.shape[1]} '
                               f'and {t2._data.shape[0]}x{t2._data.shape[1]})')
        out = ops.unsafe_view(mm(rows, t2), sizes[:-1] + (t2._data.shape[1],))
        return ops.transpose(out, -1, -2).contiguous() if transpose else out
    # broadcast the batch dims, then one bmm (a vector operand expanded as a row or a column)
    sa, sb = input._data.shape, other._data.shape
    if da == 3 and db == 3 and sa[0] != sb[0]:
        # a batch of one that requires grad is taken as a matrix (a smaller gradient), as PyTorch does
        flags = (input._requires_grad, other._requires_grad)
        if sa[0] == 1 and input._requires_grad:
            return _matmul(ops.squeeze(input, 0), other, flags)
        if sb[0] == 1 and other._requires_grad:
            return _matmul(input, ops.squeeze(other, 0), flags)
    n, k = (sa[-2] if da > 1 else 1), sa[-1]
    k2, m = (sb[-2], sb[-1]) if db > 1 else (sb[0], 1)
    batch = _broadcast_batch(sa[:-2], sb[:-2])
    count = 1
    for size in batch:
        count *= size
    if k != k2:
        raise RuntimeError(f'Expected size for first two dimensions of batch2 tensor to be: [{count}, {k}] but got: '
                           f'[{count}, {k2}].')
    a3 = ops.reshape(ops.expand(input, batch + (n, k)), (count, n, k))
    b = ops.expand(other, batch + ((k2, m) if db > 1 else (k2,)))
    b3 = ops.reshape(b, (count, k2, m)) if db > 1 else ops.unsqueeze(ops.reshape(b, (count, k2)), 2)
    product = bmm(a3, b3)
    out_shape = batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())
    return ops.unsafe_view(product if db > 1 else ops.squeeze(product, -1), out_shape)


def _should_fold(a, b, requires_grad):
    """PyTorch's choice for a product of a >= 3-D and a <= 2-D operand: fold the larger one's
    batch into one mm (its graph: MmBackward0 and views) when the smaller one requires grad (a
    smaller gradient), else when the fold needs no copy; otherwise expand both and use bmm."""
    da, db = a._data.ndim, b._data.ndim
    larger, smaller = (a, b) if da >= db else (b, a)
    if not (larger._data.ndim >= 3 and smaller._data.ndim <= 2):
        return False
    if requires_grad[1 if da >= db else 0]:  # the smaller one's
        return True
    if da == 2:
        return False
    t1 = a._data if da >= db else xp.swapaxes(b._data, -1, -2)
    if t1.size == 0:
        return True
    shape, strides = t1.shape, t1.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.ndim - 2))


def _broadcast_batch(sa, sb):
    """The broadcast batch shape, with PyTorch's message when the batch dims do not broadcast."""
    n = max(len(sa), len(sb))
    out = []
    for i in range(n):
        x = sa[i - n + len(sa)] if i - n + len(sa) >= 0 else 1
        y = sb[i - n + len(sb)] if i - n + len(sb) >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f'The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton '
                               f'dimension {i}')
        out.append(max(x, y) if x != 0 and y != 0 else 0)
    return tuple(out)


# ---- fused products with an added term: addmm, addmv, baddbmm, addbmm ---------------------

def _scaled(t, c):
    return t if c == 1 else t * c


def _broadcast_input(input, shape):
    """``input``'s array broadcast to the product's shape, with expand's error when it cannot be."""
    try:
        return xp.broadcast_to(input._data, shape)
    except ValueError:
        ops.expand(input, shape)  # raises PyTorch's message
        raise


def _fused_add(prod, input, beta, alpha, dtype):
    """alpha * prod + beta * input, where beta == 0 ignores input (even NaN), as in PyTorch.
    ``prod`` is the op's fresh product (``_wide_product``), so the sum is made in it, in place, and
    rounded once to ``dtype`` (bfloat16 is summed in float32)."""
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        _broadcast_input(input, prod.shape)  # only checked
    else:
        added = opmath(input._data)
        try:
            prod += added if beta == 1 else beta * added
        except ValueError:
            _broadcast_input(input, prod.shape)  # raises expand's message
            raise
    return prod if prod.dtype == dtype else prod.astype(dtype)


class _ScaledProductBackward(Op):
    """beta * input + alpha * product(a, b), in its four forms (addmm, addmv, baddbmm, addbmm):
    input's gradient undoes broadcasting; the factors' come from ``factor_grads`` and need the
    factors, saved only where the other factor needs grad (``_record_scaled_product``)."""
    __slots__ = ('self_shape', 'alpha', 'beta')

    def jvp(self, tangents):
        t_input, ta, tb = tangents
        out = None
        if ta is not None or tb is not None:
            out = _scaled(bilinear_jvp(self, (ta, tb), self.product), self.alpha)
        if t_input is not None:
            t_input = _scaled(t_input, self.beta)
            out = t_input if out is None else out + t_input
        return out

    def apply(self, grad):
        nf = self.next_functions
        gs = sum_to(_scaled(grad, self.beta), self.self_shape) if nf[0][0] is not None else None
        need_a, need_b = nf[1][0] is not None, nf[2][0] is not None
        if not (need_a or need_b):  # (nothing was saved)
            return gs, None, None
        a, b = self.saved_tensors
        return (gs,) + self.factor_grads(grad, a, b, need_a, need_b)


def _record_scaled_product(data, node_cls, input, a, b, beta, alpha):
    out, node = record(data, node_cls, (input, a, b))
    if node is not None:
        node.self_shape, node.alpha, node.beta = input._data.shape, alpha, beta
        node.save_crosswise(a, b, first=1)
    return out, node


def _check_mm(mat1, mat2, rank_errors=None):
    """PyTorch's checks for a matrix product: ranks, inner sizes, dtypes."""
    a, b = mat1._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError(rank_errors[0] if rank_errors else f'mat1 must be a matrix, got {a.ndim}-D tensor')
    if b.ndim != 2:
        raise RuntimeError(rank_errors[1] if rank_errors else f'mat2 must be a matrix, got {b.ndim}-D tensor')
    if a.shape[1] != b.shape[0]:
        histories_first(mat1, mat2)  # (PyTorch's no_grad-view error comes first)
        raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and '
                           f'{b.shape[0]}x{b.shape[1]})')
    if a.dtype != b.dtype:
        raise RuntimeError(f'expected m1 and m2 to have the same dtype, but got: {_tname(mat1)} != {_tname(mat2)}')
    if a.dtype.kind == 'b' and a.size and b.shape[1]:  # (an empty product returns before the kernel's dispatch)
        _refuse_bool('addmm_impl_cpu_')


_F32, _F64 = xp.dtype('float32'), xp.dtype('float64')


def linear_matrix(input, weight, bias):
    """``F.linear`` of a matrix ``input``, float32 or float64 throughout: ``addmm(bias, input,
    weight.t())`` (``mm`` without a bias), recorded and computed as those ops record and compute
    it, without their checks, which hold here (F.linear has checked the inner sizes; the dtypes
    are one; the bias has one entry per row of the weight). None for anything else, which the
    ops themselves check and word."""
    x, w = input._data, weight._data
    dt = x.dtype
    if w.ndim != 2 or w.dtype is not dt or (dt is not _F32 and dt is not _F64):
        return None
    if bias is not None and (not isinstance(bias, Tensor) or bias._data.dtype is not dt
                             or bias._data.shape != w.shape[:1]):
        return None
    wt = ops.t(weight)
    data = x @ wt._data
    if bias is None:
        out, node = record(data, Mm, (input, wt))
        if node is None:
            return out
        first = 0
    else:
        data += bias._data  # (addmm's sum, made in the product as _fused_add makes it)
        out, node = record(data, Addmm, (bias, input, wt))
        if node is None:
            return out
        node.self_shape, node.alpha, node.beta = bias._data.shape, 1, 1
        first = 1
    # save_crosswise, and the layout of each factor that needs grad (False for the others: their
    # flag is never read), written out
    nf = node.next_functions
    need_x, need_w = nf[first][0] is not None, nf[first + 1][0] is not None
    node.mat1_transposed = need_x and is_transposed(input)
    node.mat2_transposed = need_w and is_transposed(wt)
    if need_x or need_w:
        node.save(input if need_w else _Empty, wt if need_x else _Empty)
    return out


def _refuse_bool(kernel):
    raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


class Addmm(_ScaledProductBackward):
    """addmm(input, mat1, mat2, *, beta=1, alpha=1): ``beta * input + alpha * (mat1 @ mat2)``
    as one node (nn.Linear records it on 2-D input)."""
    op, node, inplace = 'addmm', 'AddmmBackward0', True
    __slots__ = ('mat1_transposed', 'mat2_transposed')
    saved = ('mat1', 'mat2', 'alpha=alpha', 'beta=beta')

    def vmap(V, fn, args, kwargs):  # beta * input + alpha * (mat1 @ mat2), by the batched ops
        if len(args) != 3 or set(kwargs) - {'beta', 'alpha'}:
            return None
        input, mat1, mat2 = args
        beta, alpha = kwargs.get('beta', 1), kwargs.get('alpha', 1)
        out = V._vm_call('matmul', mat1, mat2)
        if alpha != 1:
            out = V._vm_call('mul', out, alpha)
        if beta == 0:  # (input ignored, NaN included, as PyTorch)
            return out
        return V._vm_call('add', out, input if beta == 1 else V._vm_call('mul', input, beta))

    def forward(input, mat1, mat2, *, beta=1, alpha=1):
        """beta * input + alpha * (mat1 @ mat2) as one node (nn.Linear records it on 2-D input)."""
        try:
            if autocast.state.on:
                input, mat1, mat2 = autocast.lower_precision(input, mat1, mat2)
            if input._data.dtype != mat2._data.dtype:
                raise RuntimeError(f'self and mat2 must have the same dtype, but got {_sname(input)} and '
                                   f'{_sname(mat2)}')
            if mat1._data.dtype != mat2._data.dtype:
                raise RuntimeError(f'mat1 and mat2 must have the same dtype, but got {_sname(mat1)} and {_sname(mat2)}')
            _check_mm(mat1, mat2)
            data = _fused_add(_wide_product(mat1._data, mat2._data), input, beta, alpha, mat1._data.dtype)
            out, node = _record_scaled_product(data, Addmm, input, mat1, mat2, beta, alpha)
            if node is not None:
                node.mat1_transposed, node.mat2_transposed = is_transposed(mat1), is_transposed(mat2)
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        if state.grad_enabled or self.alpha != 1 or self.beta != 1 or grad._data.dtype.kind == 'V':
            return _ScaledProductBackward.apply(self, grad)
        # a plain backward, unscaled (nn.Linear's): the products of the arrays, as Mm's
        nf = self.next_functions
        gs = sum_to(grad, self.self_shape) if nf[0][0] is not None else None
        need_a, need_b = nf[1][0] is not None, nf[2][0] is not None
        if not (need_a or need_b):  # (nothing was saved)
            return gs, None, None
        a, b = self.saved_tensors
        return (gs,) + plain_factor_grads(grad._data, a, b, need_a, need_b, self.mat1_transposed,
                                          self.mat2_transposed)

    def factor_grads(self, grad, mat1, mat2, need_mat1, need_mat2):
        return (_scaled(mat1_grad(grad, mat2, self.mat1_transposed), self.alpha) if need_mat1 else None,
                _scaled(mat2_grad(grad, mat1, self.mat2_transposed), self.alpha) if need_mat2 else None)

    product = staticmethod(lambda a, b: mm(a, b))


class Addmv(_ScaledProductBackward):
    """addmv(input, mat, vec, *, beta=1, alpha=1): ``beta * input + alpha * (mat @ vec)``."""
    op, node, inplace, inplace_function = 'addmv', 'AddmvBackward0', True, True
    tensors = ('input', 'mat', 'vec')  # (the method's too: no number for a matrix)
    __slots__ = ()

    def forward(input, mat, vec, *, beta=1, alpha=1):
        a, v = mat._data, vec._data
        if a.ndim != 2 or v.ndim != 1:
            raise RuntimeError(f'vector + matrix @ vector expected, got {input._data.ndim}, {a.ndim}, {v.ndim}')
        if a.shape[1] != v.shape[0] or (input._data.ndim == 1 and input._data.shape[0] not in (1, a.shape[0])):
            raise RuntimeError(f'size mismatch, got input ({input._data.shape[0] if input._data.ndim else 1}), '
                               f'mat ({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})')
        data = _fused_add(_wide_product(a, v), input, beta, alpha, a.dtype)
        return _record_scaled_product(data, Addmv, input, mat, vec, beta, alpha)[0]

    def factor_grads(self, grad, mat, vec, need_mat, need_vec):
        grad = _of_factors_dtype(grad, mat, vec)
        return (_scaled(outer(grad, vec), self.alpha) if need_mat else None,
                _scaled(mv(ops.t(mat), grad), self.alpha) if need_vec else None)

    product = staticmethod(lambda a, b: mv(a, b))


def _check_bmm(batch1, batch2):
    a, b = batch1._data, batch2._data
    if a.ndim != 3:
        raise RuntimeError('batch1 must be a 3D tensor')
    if b.ndim != 3:
        raise RuntimeError('batch2 must be a 3D tensor')
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f'Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, '
                           f'{a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].')


class Baddbmm(_ScaledProductBackward):
    """baddbmm(input, batch1, batch2, *, beta=1, alpha=1): ``beta * input + alpha *
    bmm(batch1, batch2)``."""
    op, node, inplace = 'baddbmm', 'BaddbmmBackward0', True
    __slots__ = ()

    def forward(input, batch1, batch2, *, beta=1, alpha=1):
        try:
            if autocast.state.on:
                input, batch1, batch2 = autocast.lower_precision(input, batch1, batch2)
            _check_bmm(batch1, batch2)
            if input._data.dtype != batch1._data.dtype:
                raise RuntimeError(f'Input dtypes must be the same, got: input {_tname(input)}, batch1: '
                                   f'{_tname(batch1)}, '
                                   f'batch2: {_tname(batch2)}')
            a, b = batch1._data, batch2._data
            if _bmm_reads_operands(a, b):
                _check_bmm_dtypes(batch1, batch2, 'baddbmm')
                data = _fused_add(_wide_product(a, b), input, beta, alpha, a.dtype)
            else:
                # PyTorch's result (batch2's dtype) starts as input, then is only scaled in place by beta
                data = _bmm_unread(batch1, batch2)
                if beta != 0 and data.size:
                    data = wrap(_broadcast_input(input, data.shape).astype(data.dtype)).mul_(beta)._data
            return _record_scaled_product(data, Baddbmm, input, batch1, batch2, beta, alpha)[0]
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def factor_grads(self, grad, b1, b2, need_b1, need_b2):
        grad = _of_factors_dtype(grad, b1, b2)
        return (_scaled(bmm(grad, ops.transpose(b2, 1, 2)), self.alpha) if need_b1 else None,
                _scaled(bmm(ops.transpose(b1, 1, 2), grad), self.alpha) if need_b2 else None)

    product = staticmethod(lambda a, b: bmm(a, b))


class Addbmm(_ScaledProductBackward):
    """addbmm(input, batch1, batch2, *, beta=1, alpha=1): ``beta * input + alpha * sum_b
    batch1[b] @ batch2[b]``, one matmul over the folded batch."""
    op, node, inplace = 'addbmm', 'AddbmmBackward0', True
    tensors = ('input', 'batch1', 'batch2')  # (the method's too: no number for a matrix)
    __slots__ = ('batch',)

    def forward(input, batch1, batch2, *, beta=1, alpha=1):
        """beta * input + alpha * sum_b batch1[b] @ batch2[b]: one matmul over the folded batch."""
        if autocast.state.on:
            input, batch1, batch2 = autocast.lower_precision(input, batch1, batch2)
        _check_bmm(batch1, batch2)
        a, b = batch1._data, batch2._data
        if a.dtype.kind == 'V':  # bfloat16: PyTorch adds one batch's product at a time, rounding each sum
            data = _fused_add(xp.zeros(a.shape[1:2] + b.shape[2:], xp.float32, like=a), input, beta, 1, a.dtype)
            for i in range(a.shape[0]):
                data = (opmath(data) + _wide_product(a[i], b[i]) * alpha).astype(a.dtype)
        else:
            prod = _wide_product(xp.transpose(a, (1, 0, 2)).reshape(a.shape[1], -1), b.reshape(-1, b.shape[2]))
            data = _fused_add(prod, input, beta, alpha, a.dtype)
        out, node = _record_scaled_product(data, Addbmm, input, batch1, batch2, beta, alpha)
        if node is not None:
            node.batch = a.shape[0]
        return out

    def factor_grads(self, grad, b1, b2, need_b1, need_b2):
        g = ops.expand(ops.unsqueeze(_scaled(grad, self.alpha), 0), (self.batch,) + tuple(grad.shape))
        return (bmm(g, ops.transpose(b2, 1, 2)) if need_b1 else None,
                bmm(ops.transpose(b1, 1, 2), g) if need_b2 else None)

    product = staticmethod(lambda a, b: ops.sum(bmm(a, b), 0))


# ---- tensordot ----------------------------------------------------------------------------

def _tensordot_out_dtype(result, out):
    if result != out:
        raise RuntimeError(f'tensordot: Expected the output tensor to have dtype {SCALAR_NAMES[result.name]}, but got an '
                           f'output tensor with dtype {SCALAR_NAMES[out.name]}')


class Tensordot(Op):
    """tensordot(a, b, dims=2, out=None): ``dims`` of a contracted with ``dims`` of b: permute,
    reshape, one mm, view (as PyTorch)."""
    op, method = 'tensordot', False

    def forward(a, b, dims=2, out=None):
        """Contract ``dims`` of a with ``dims`` of b: permute, reshape, one mm, view (as PyTorch)."""
        if out is not None:
            result = tensordot(a, b, dims)
            out_needs_grad = state.grad_enabled and getattr(out, '_requires_grad', False)
            if out_needs_grad and out._data.shape != result._data.shape:
                raise RuntimeError("tensordot(): the 'out' tensor was specified and requires gradients, and its shape does "
                                   "not match the expected result. Either remove the 'out' argument, ensure it does not "
                                   'require gradients, or make sure its shape matches the expected output.')
            return copy_out('tensordot', out, result, _tensordot_out_dtype)  # (PyTorch writes it by copy_)
        na, nb = a._data.ndim, b._data.ndim
        if isinstance(dims, int) or (hasattr(dims, 'ndim') and dims.ndim == 0):
            n = int(dims)
            if n < 0:
                raise RuntimeError(f'tensordot expects dims >= 0, but got dims={n}')
            if n > min(na, nb):
                raise RuntimeError(f'tensordot expects dims < ndim_a or ndim_b, but got dims={n}')
            da, db = list(range(-n, 0)), list(range(n))
        else:
            da, db = dims
            da = [int(d) for d in (da.tolist() if hasattr(da, 'tolist') else ([da] if isinstance(da, int) else da))]
            db = [int(d) for d in (db.tolist() if hasattr(db, 'tolist') else ([db] if isinstance(db, int) else db))]
            if len(da) != len(db):
                raise RuntimeError(f'both dimension lists should have same length, but got {len(da)} and {len(db)}')
        sa, sb = a._data.shape, b._data.shape
        shown_a, shown_b = list(da), list(db)
        da = [d % na if na else d for d in da]
        db = [d % nb if nb else d for d in db]
        for i, (x, y) in enumerate(zip(da, db)):
            if sa[x] != sb[y]:
                raise RuntimeError(f'contracted dimensions need to match, but first has size {sa[x]} in dim {shown_a[i]} '
                                   f'and second has size {sb[y]} in dim {shown_b[i]}')
        free_a = [d for d in range(na) if d not in da]
        free_b = [d for d in range(nb) if d not in db]
        k = 1
        for d in da:
            k *= sa[d]
        rows = 1
        for d in free_a:
            rows *= sa[d]
        cols = 1
        for d in free_b:
            cols *= sb[d]
        ma = ops.reshape(ops.permute(a, free_a + da), (rows, k))
        mb = ops.reshape(ops.permute(b, db + free_b), (k, cols))
        return ops.reshape(mm(ma, mb), tuple(sa[d] for d in free_a) + tuple(sb[d] for d in free_b))


# ---- einsum -------------------------------------------------------------------------------

def _diagonal(t, subs, out_subs):
    """``t`` with each repeated subscript taken once (``np.einsum('iij->ij')``): the diagonal
    of each pair of equal letters (DiagonalBackward0, a view, as PyTorch's einsum takes it),
    then the letters put in ``out_subs``'s order."""
    letters = list(subs)
    while len(set(letters)) != len(letters):
        seen = {}
        for second, c in enumerate(letters):
            if c in seen:
                break
            seen[c] = second
        first = seen[c]
        t = ops.diagonal(t, 0, first, second)  # (the diagonal becomes the last dim)
        letters = [x for k, x in enumerate(letters) if k not in (first, second)] + [c]
    order = [letters.index(c) for c in out_subs]
    return ops.permute(t, order) if order != list(range(len(order))) else t


def _parse_einsum(equation, operands):
    eq = equation.replace(' ', '')
    if '->' in eq:
        lhs, rhs = eq.split('->', 1)
    else:
        lhs, rhs = eq, None
    terms = lhs.split(',')
    if len(terms) > len(operands):
        raise RuntimeError('einsum(): fewer operands were provided than specified in the equation')
    if len(terms) < len(operands):
        raise RuntimeError('einsum(): more operands were provided than specified in the equation')
    # ellipsis dims get capital letters not used in the equation, aligned from the right
    spare = [c for c in 'ZYXWVUTSRQPONMLKJIHGFEDCBA' if c not in eq]
    ell_ndim = 0
    parsed = []
    for i, (term, op) in enumerate(zip(terms, operands)):
        nd = op._data.ndim
        if '...' in term:
            n = nd - (len(term) - 3)
            if n < 0:
                raise RuntimeError(f'einsum(): the number of subscripts in the equation ({len(term) - 3}) is more '
                                   f'than the number of dimensions ({nd}) for operand {i}')
            ell_ndim = max(ell_ndim, n)
            parsed.append((term, n))
        else:
            if len(term) != nd:
                raise RuntimeError(f'einsum(): the number of subscripts in the equation ({len(term)}) does not match '
                                   f'the number of dimensions ({nd}) for operand {i} and no ellipsis was given')
            parsed.append((term, 0))
        for c in term.replace('...', ''):
            if not c.isalpha():
                raise RuntimeError(f'einsum(): invalid subscript given at index {lhs.find(c)} in the equation string, '
                                   'subscripts must be in [a-zA-Z]')
    ell = ''.join(spare[:ell_ndim][::-1])
    subs = [term.replace('...', ell[ell_ndim - n:]) for term, n in parsed]
    if rhs is None:
        counts = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        rhs_letters = sorted(c for c in counts if counts[c] == 1 and c not in ell)
        out = ell + ''.join(rhs_letters)
    else:
        out = rhs.replace('...', ell)
        seen = set()
        for c in out:
            if c in seen:
                raise RuntimeError(f'einsum(): output subscript {c} appears more than once in the output')
            seen.add(c)
            if not any(c in s for s in subs):
                raise RuntimeError(f'einsum(): output subscript {c} does not appear in the equation for any input '
                                   'operand')
    return subs, out


def _sublist_subscripts(sublist):
    """One operand's subscripts in einsum's sublist format, as letters of an equation."""
    letters = []
    for n in sublist:
        if n is Ellipsis:
            letters.append('...')
        elif 0 <= n < 26:
            letters.append(chr(ord('A') + n))
        elif 26 <= n < 52:
            letters.append(chr(ord('a') + n - 26))
        else:
            raise ValueError('einsum(): subscript in subscript list is not within the valid range [0, 52)')
    return ''.join(letters)


class Einsum(Op):
    """einsum(equation, *operands): the Einstein summation ``equation`` of the operands."""
    op, method = 'einsum', False

    def forward(*args):
        """Einstein summation, composed of leafgrad ops as PyTorch composes it: diagonals, sums over
        letters only one operand has, then pairwise contractions as one batched matmul each.
        Takes ``(equation, *operands)`` or the sublist format ``(op1, sublist1, op2, sublist2, ...,
        [sublist_out])``, whose subscripts are integers in [0, 52) (A-Z, then a-z) and ``...``."""
        if len(args) < 2:
            raise ValueError('einsum(): must specify the equation string and at least one operand, '
                             'or at least one operand and its subscripts list')
        if isinstance(args[0], Tensor):
            equation = ','.join(_sublist_subscripts(s) for s in args[1::2])
            if len(args) % 2:
                equation += '->' + _sublist_subscripts(args[-1])
                operands = args[:-1:2]
            else:
                operands = args[::2]
        else:
            equation, operands = args[0], args[1:]
            if not isinstance(equation, str):
                raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        if not isinstance(args[0], Tensor):  # (PyTorch's parser reads the operands as one list of tensors)
            for i, op in enumerate(operands):
                if not isinstance(op, Tensor):
                    raise TypeError(f'expected Tensor as element {i} in argument 1, but got {type(op).__name__}')
        subs, out = _parse_einsum(equation, operands)
        for op in operands[1:]:
            if op._data.dtype != operands[0]._data.dtype:
                raise RuntimeError(f'expected scalar type {_sname(operands[0])} but found {_sname(op)}')
        sizes = {}
        for i, (s, op) in enumerate(zip(subs, operands)):
            for c, n in zip(s, op._data.shape):
                if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                    raise RuntimeError(f'einsum(): subscript {c} has size {n} for operand {i} which does not broadcast '
                                       f'with previously seen size {sizes[c]}')
                sizes[c] = max(sizes.get(c, 1), n) if c in sizes else n
        # layout: output letters, then contracted ones in order of appearance
        letters = list(out)
        for s in subs:
            for c in s:
                if c not in letters:
                    letters.append(c)
        pos = {c: i for i, c in enumerate(letters)}
        aligned = []
        for s, op in zip(subs, operands):
            if len(set(s)) != len(s):  # repeated subscripts: take the diagonal first
                uniq = ''.join(dict.fromkeys(s))
                op, s = _diagonal(op, s, uniq), uniq
            # move to layout order, with size-1 dims for the letters it lacks
            order = sorted(range(len(s)), key=lambda i: pos[s[i]])
            if order != list(range(len(s))):
                op = ops.permute(op, order)
            s = ''.join(s[i] for i in order)
            full_shape = tuple(op._data.shape[s.index(c)] if c in s else 1 for c in letters)
            if op._data.shape != full_shape:
                op = ops.reshape(op, full_shape)
            aligned.append(op)
        present = [set(c for c, n in zip(letters, op._data.shape) if c in s) for op, s in zip(aligned, subs)]
        # letters in one operand only and not in the output are summed out at once
        for i in range(len(aligned)):
            alone = [pos[c] for c in present[i] if c not in out and not any(c in present[j] for j in range(len(aligned)) if j != i)]
            if alone:
                # with one operand the sum is the result: drop the dims there, as PyTorch does
                aligned[i] = ops.sum(aligned[i], sorted(alone), keepdim=len(aligned) > 1)
                present[i] -= {letters[d] for d in alone}
        result, rpresent = aligned[0], present[0]
        for i in range(1, len(aligned)):
            later = set().union(*present[i + 1:]) if i + 1 < len(aligned) else set()
            contract = [c for c in letters if c in rpresent and c in present[i] and c not in out and c not in later]
            result = _sumproduct(result, aligned[i], [pos[c] for c in contract])
            rpresent = (rpresent | present[i]) - set(contract)
        # drop the contracted (now size-1, trailing) dims: always a view (ViewBackward0, as PyTorch)
        if result._data.ndim > len(out):
            result = ops.view(result, tuple(result._data.shape[:len(out)]))
        return result


def _sumproduct(a, b, sum_dims):
    """sum over ``sum_dims`` of a * b (both in the same layout): one bmm over the batch dims."""
    # a contracted letter of size 1 on one side is summed on the other side first
    keep = []
    for d in sum_dims:
        n_a, n_b = a._data.shape[d], b._data.shape[d]
        if n_a == 1 and n_b != 1:
            b = ops.sum(b, d, keepdim=True)
        elif n_b == 1 and n_a != 1:
            a = ops.sum(a, d, keepdim=True)
        elif n_a != 1:
            keep.append(d)
    sum_dims = keep
    if not sum_dims:
        return a * b
    sa, sb = a._data.shape, b._data.shape
    nd = len(sa)
    batch = [d for d in range(nd) if d not in sum_dims and sa[d] != 1 and sb[d] != 1]
    lo = [d for d in range(nd) if d not in sum_dims and d not in batch and sa[d] != 1]
    ro = [d for d in range(nd) if d not in sum_dims and d not in batch and d not in lo and sb[d] != 1]
    ones = [d for d in range(nd) if d not in sum_dims and d not in batch and d not in lo and d not in ro]
    size = lambda shape, dims: int(xp.prod([shape[d] for d in dims])) if dims else 1
    ma = ops.reshape(ops.permute(a, batch + lo + sum_dims + ro + ones),
                        (size(sa, batch), size(sa, lo), size(sa, sum_dims)))
    mb = ops.reshape(ops.permute(b, batch + lo + sum_dims + ro + ones),
                        (size(sb, batch), size(sb, sum_dims), size(sb, ro)))
    prod = bmm(ma, mb)
    perm = batch + lo + ro + sum_dims + ones
    shape = [sa[d] for d in batch] + [sa[d] for d in lo] + [sb[d] for d in ro] + [1] * (len(sum_dims) + len(ones))
    prod = ops.reshape(prod, tuple(shape))
    inverse = [0] * nd
    for i, d in enumerate(perm):
        inverse[d] = i
    return ops.permute(prod, inverse) if inverse != list(range(nd)) else prod
