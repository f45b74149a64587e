"""dropout, normalize, cosine_similarity, one_hot, embedding, gumbel_softmax (softmax,
log_softmax and softmin are ops: ``ops/activation.py``)."""
import math
import warnings

from ...autograd.graph import _Empty, each_sample, on_samples, self_recording
from ... import backend
from ...ops._util import Node, autocast, record, state, wrap, wrap_dim, xp
from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...ops.activation import nn_softmax as softmax
from ...ops.indexing import index_select, getitem
from ...ops.linalg import addmm, linear_matrix, matmul, mm
from ...ops.reduction import pairwise_norm as _pairwise_norm, sum as _sum, vector_norm as _vector_norm_op
from ...ops.shape import reshape as _reshape, t as _t, view as _view
from ...tensor import Tensor, legacy_type_name
from .common import const, dtype_name, not_tensor as _not_tensor
from ... import _memory_format, _random_kernels as kernels, sparse as _sparse
from ...generator import default_generator
from ..._arg_parser import refuse_arguments


# ---- dropout ------------------------------------------------------------------------------

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f'dropout probability has to be between 0 and 1, but got {p}')


def _dropout_noise(input, p, feature):
    """PyTorch's dropout noise: 1 with probability 1 - p, else 0, in input's dtype: a Bernoulli
    draw per element of a tensor laid out as the input (``empty_like``), in its memory order; for
    feature dropout one per (sample, channel) of a contiguous (N, C, 1, ...) tensor."""
    data = input._data
    if feature and data.ndim < 2:
        raise RuntimeError('Feature dropout requires at least 2 dimensions in the input')
    if backend.on_gpu(data):  # drawn there by CuPy's generator (which manual_seed seeds), as the random factories
        shape = data.shape[:2] + (1,) * (data.ndim - 2) if feature else data.shape
        with data.device:
            u = backend.array_module(data).random.get_random_state().random_sample(shape, dtype=xp.float32)
        return (u < xp.float32(1 - p)).astype(data.dtype)
    if feature:
        template = xp.empty(data.shape[:2] + (1,) * (data.ndim - 2), dtype=data.dtype)
    else:
        template = data if kernels.is_dense(data) else _memory_format.preserved(xp.empty(data.shape, data.dtype), data)
    keep = kernels.bernoulli_number(default_generator, template.size, 1 - p)
    return xp.asarray(kernels.fill_in_memory_order(template, keep)).astype(data.dtype)


def _dropout(input, p, training, inplace, feature=False, alpha=False):
    """at::dropout and its feature and alpha variants, as PyTorch computes them: the noise
    divided by 1 - p in input's dtype, one multiply (MulBackward0); alpha dropout maps the kept
    values through a * x and the dropped ones to a constant b, multiply then add."""
    _check_p(p)
    if not training or p == 0 or input._data.size == 0:
        return input
    if p == 1:
        zero = const(xp.zeros((), dtype=input._data.dtype, like=input._data))
        return Tensor.mul_(input, zero) if inplace else input * zero
    noise = _dropout_noise(input, p, feature)
    d = noise.dtype
    if d.kind not in 'fV':
        raise RuntimeError(f"result type Float can't be cast to the desired output type {dtype_name(input)}")
    # a tensor op with a Python number computes in float for float16 (the number unrounded)
    opmath = xp.float32 if d.itemsize == 2 else d.type
    if not alpha:
        noise = (noise.astype(opmath) / opmath(1 - p)).astype(d)
        return Tensor.mul_(input, const(noise)) if inplace else input * const(noise)
    selu_alpha = 1.7580993408473766  # SELU's scale * alpha: where SELU saturates, negated
    a = 1. / math.sqrt((selu_alpha * selu_alpha * p + 1) * (1 - p))
    b = ((noise - d.type(1)).astype(opmath) * opmath(selu_alpha * a)).astype(d)
    b = (b.astype(opmath) + opmath(selu_alpha * a * p)).astype(d)
    noise = (noise.astype(opmath) * opmath(a)).astype(d)
    out = Tensor.mul_(input, const(noise)) if inplace else input * const(noise)
    return Tensor.add_(out, const(b))


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p): one multiply by a
    noise tensor drawn as PyTorch draws it (its numbers for the same seed)."""
    return _dropout(input, p, training, inplace)


def _unsqueezed(input, inplace):
    return input.unsqueeze_(0) if inplace else input.unsqueeze(0)


def _squeezed(result, inplace):
    return result.squeeze_(0) if inplace else result.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input._data.ndim
    if ndim not in (2, 3):
        raise RuntimeError(f'dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note '
                           'that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial '
                           'dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).')
    if ndim == 3:
        return _dropout(input, p, training, inplace, feature=True)
    return _squeezed(_dropout(_unsqueezed(input, inplace), p, training, inplace, feature=True), inplace)


def _warn_feature_dims(name, ndim, expected, spatial):
    if ndim not in expected:
        warnings.warn(f'{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in an '
                      f'error in a future release. To retain the behavior and silence this warning, please use '
                      f'dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with '
                      f'{spatial} spatial dimensions, a channel dimension, and an optional batch dimension '
                      f'(i.e. {expected[0]}D or {expected[1]}D inputs).', stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, H, W) input. As in PyTorch, a 3-D input is taken as (N, C, L)
    (with a warning), not as an unbatched (C, H, W)."""
    _check_p(p)
    ndim = input._data.ndim
    _warn_feature_dims('dropout2d', ndim, (3, 4), 2)
    if ndim == 3:
        warnings.warn('dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout '
                      'behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. '
                      'This behavior will change in a future release to interpret the input as one without a '
                      'batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, '
                      'please switch to using dropout1d instead.', stacklevel=2)
    return _dropout(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input._data.ndim
    _warn_feature_dims('dropout3d', ndim, (4, 5), 3)
    if ndim == 5:
        return _dropout(input, p, training, inplace, feature=True)
    return _squeezed(_dropout(_unsqueezed(input, inplace), p, training, inplace, feature=True), inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's mean and variance: dropped values become -alpha*scale, then an
    affine map a * x + b restores the statistics (PyTorch's formula and draws)."""
    return _dropout(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    return _dropout(input, p, training, inplace, feature=True, alpha=True)


# ---- norms of vectors ---------------------------------------------------------------------

def _vector_norm(x, p, dim):
    """|x|_p over ``dim`` (keepdim), the piece normalize and cosine_similarity need:
    linalg.vector_norm (LinalgVectorNormBackward0, as PyTorch records it)."""
    return _vector_norm_op(x, p, dim, keepdim=True)


def _clamp_min(t, lo):
    # clamp_min's: a nan stays nan; the gradient passes where t is not below lo
    return _ew.where(t < lo, const(xp.asarray(lo, like=t._data), t), t)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if input._data.dtype.kind not in 'fV':
        raise RuntimeError('linalg.vector_norm: Expected a floating point or complex tensor as input. Got '
                           f'{dtype_name(input)}')
    try:
        d = wrap_dim(dim, input._data.ndim)
    except TypeError:  # (a dim that is no int: vector_norm's TypeError, PyTorch's, which it gives first)
        _vector_norm(input, p, dim)
        raise
    denom = _shape.expand_as(_clamp_min(_vector_norm(input, p, d), eps), input)
    if out is not None:  # torch.div(input, denom, out=out)
        out.copy_(input / denom)
        return out
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    try:
        try:
            shape = xp.broadcast_shapes(x1._data.shape, x2._data.shape)
        except ValueError:
            x1 + x2  # raises PyTorch's broadcasting message
            raise
        d = wrap_dim(dim, len(shape))
        if x1._data.shape != shape:
            x1 = _shape.expand(x1, shape)
        if x2._data.shape != shape:
            x2 = _shape.expand(x2, shape)
        n1 = _vector_norm(x1, 2, d)
        n2 = _vector_norm(x2, 2, d)
        # PyTorch clamps the norms in place under no_grad: the value changes, the gradient does not
        # (a shift only below eps: an infinite norm stays infinite, not inf - inf)
        n1 = n1 + const(xp.where(n1._data < eps, eps - n1._data, 0).astype(n1._data.dtype, copy=False))
        n2 = n2 + const(xp.where(n2._data < eps, eps - n2._data, 0).astype(n2._data.dtype, copy=False))
        return _sum((x1 / n1) * (x2 / n2), d)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    if not isinstance(x1, Tensor) or not isinstance(x2, Tensor):  # (a number would subtract: PyTorch's parser
        refuse_arguments()                                          # refuses it)
    diff = x1 - x2 + eps
    nd = diff._data.ndim
    # (ATen's norm over the last dim: NormBackward1, as PyTorch records it)
    return _pairwise_norm(diff, p, nd - 1 if nd else (), keepdim)


# ---- one_hot, embedding -------------------------------------------------------------------

def one_hot(tensor, num_classes=-1):
    data = tensor._data
    if data.dtype != xp.int64:
        raise RuntimeError('one_hot is only applicable to index tensor of type LongTensor.')
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError('Can not infer total number of classes from empty tensor.')
        num_classes = int(data.max()) + 1
    if data.size:
        if data.min() < 0:
            raise RuntimeError('Class values must be non-negative.')
        if data.max() >= num_classes:
            raise RuntimeError('Class values must be smaller than num_classes.')
    return wrap((data[..., None] == xp.arange(num_classes, like=data)).astype(xp.int64))


class EmbeddingBackward0(Node):
    __slots__ = ('num_weights', 'padding_idx', 'scale_grad_by_freq', 'sparse')
    saved_names = ('indices', 'padding_idx=saved_padding_idx:int64', 'scale_grad_by_freq=scale_grad_by_freq',
                   'sparse=sparse', 'weight_sym_argsize_0=num_weights')
    saved_padding_idx = property(lambda self: -1 if self.padding_idx is None else self.padding_idx)  # (None: -1)

    def jvp(self, tangents):  # linear in the weight: its tangent's rows, read at the indices
        (indices,) = self.saved_tensors
        idx = indices._data

        def rows(t):
            picked = index_select(t, -2, indices if idx.ndim == 1 else wrap(idx.reshape(-1)))
            return _shape.reshape(picked, t._data.shape[:-2] + idx.shape + t._data.shape[-1:])
        return on_samples(rows, tangents[1])

    def apply(self, grad):
        (indices,) = self.saved_tensors
        if self.scale_grad_by_freq:
            # each row's gradient divided by how often its index occurs in the batch
            idx = indices._data
            counts = xp.bincount(idx.reshape(-1), minlength=self.num_weights)[idx]
            grad = grad / const(counts[..., None], grad)
        if self.sparse:
            return None, _sparse.embedding_gradient(grad, indices, self.num_weights, self.padding_idx)
        return None, _embedding_backward(grad, indices, self.num_weights, self.padding_idx)


class EmbeddingDenseBackwardBackward0(Node):
    __slots__ = ('padding_idx', 'num_weights')

    def apply(self, grad):
        (indices,) = self.saved_tensors
        return embedding(indices, grad, self.padding_idx, _backward=True),

    def jvp(self, tangents):  # linear: the tangent's rows summed the same way
        (indices,) = self.saved_tensors
        return each_sample(lambda t: _embedding_backward(t, indices, self.num_weights, self.padding_idx),
                           tangents[0])


def _embedding_backward(grad, indices, num_weights, padding_idx):
    """Rows of the gradient summed into the rows they were read from (padding_idx's row stays 0)."""
    out = embedding_grad_array(grad._data, indices._data, num_weights, padding_idx)
    result, node = record(out, EmbeddingDenseBackwardBackward0, (grad,))
    if node is not None:
        node.padding_idx, node.num_weights = padding_idx, num_weights
        node.save(indices)
    return result


self_recording.append(_embedding_backward)  # (a derivative's op: forward over reverse carries tangents through it)


def embedding_grad_array(grad, indices, num_weights, padding_idx):
    """_embedding_backward on arrays."""
    idx = indices.reshape(-1)
    g = grad.reshape(idx.size, -1)
    out = xp.zeros((num_weights, g.shape[1]), dtype=g.dtype, like=g)
    xp.add.at(out, idx, g)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def check_embedding_indices(idx, n):
    """embedding's range check of the index array ``idx`` into ``n`` rows."""
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError('index out of range in self')


def _refuse_sparse_gradient(sparse, weight, name):
    """sparse=True asks for a sparse gradient of the weight, which leafgrad's embedding_bag does
    not make: refused where a gradient would be recorded (a lookup without one runs as usual)."""
    if sparse and state.grad_enabled and weight.requires_grad:
        raise NotImplementedError(f'{name}: sparse=True needs sparse gradients, which leafgrad\'s {name} does not '
                                  'make; sparse=False gives the same rows of gradient as a dense tensor')


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False, _backward=False):
    try:
        idx = input._data
        if idx.dtype.kind not in 'iu':
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                               f"Long, Int; but got {legacy_type_name(idx)} instead (while checking arguments for "
                               "embedding)")
        n = weight._data.shape[0]
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= n:
                    raise AssertionError('Padding_idx must be within num_embeddings')
            elif padding_idx < 0:
                if padding_idx < -n:
                    raise AssertionError('Padding_idx must be within num_embeddings')
                padding_idx = n + padding_idx
        check_embedding_indices(idx, n)
        if max_norm is not None:
            _renorm_rows(weight, idx, max_norm, norm_type)
        if _backward:  # reading rows of a gradient: the padding row reads as zero
            data = weight._data[idx]
            if padding_idx is not None:
                data = data * (idx != padding_idx)[..., None]
            out, node = record(data, EmbeddingBackward0, (input, weight))
        else:
            out, node = record(weight._data[idx], EmbeddingBackward0, (input, weight))
        if node is not None:
            node.num_weights, node.padding_idx = n, padding_idx
            node.scale_grad_by_freq = scale_grad_by_freq and not _backward
            node.sparse = sparse
            node.save(input)
        return out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('embedding', ('weight', 'indices=input'))
        raise


class EmbeddingBagMaxBackward0(Node):
    """Each bag's gradient goes to the row that gave the maximum, per column."""
    __slots__ = ('num_weights', 'max_indices')

    def apply(self, grad):
        g = grad._data
        arg = self.max_indices
        out = xp.zeros((self.num_weights, g.shape[1]), dtype=g.dtype, like=g)
        hit = arg >= 0
        cols = xp.broadcast_to(xp.arange(g.shape[1], like=g), arg.shape)
        xp.add.at(out, (arg[hit], cols[hit]), g[hit])
        return None, wrap(out)

    def name(self):
        return 'EmbeddingBagBackward0'


def _embedding_bag_max(flat, weight, bag, num_bags, padding_idx):
    """Per bag and column the largest value of its rows (padding rows left out; an empty bag gives 0)."""
    ids = flat._data
    w = weight._data
    out = xp.zeros((num_bags, w.shape[1]), dtype=w.dtype, like=w)
    max_indices = xp.full((num_bags, w.shape[1]), -1, dtype=xp.int64, like=w)
    if ids.size:
        rows = w[ids]
        if padding_idx is not None:
            rows = xp.where((ids == padding_idx)[:, None], -xp.inf, rows)
        bags, starts, inverse = xp.unique(bag, return_index=True, return_inverse=True)
        position = xp.arange(ids.size, like=ids)[:, None]
        if type(rows) is xp.ndarray:
            mx = xp.maximum.reduceat(rows, starts, axis=0)
            first = xp.minimum.reduceat(xp.where(rows == mx[inverse], position, ids.size), starts, axis=0)
        else:
            # (CuPy has no reduceat, and its maximum.at/minimum.at are not to be trusted: each bag's
            # rows, contiguous, laid out in a (bags, longest bag, D) block padded with -inf, reduced)
            at = position[:, 0] - starts[inverse]  # each row's place in its bag
            block = xp.full((bags.size, int(at.max()) + 1, rows.shape[1]), -xp.inf, dtype=rows.dtype, like=rows)
            block[inverse, at] = rows
            mx = block.max(axis=1)
            where = xp.full(block.shape, ids.size, dtype=position.dtype, like=rows)
            where[inverse, at] = xp.where(rows == mx[inverse], position, ids.size)
            first = where.min(axis=1)
        found = xp.isfinite(mx) | (mx == xp.inf)
        out[bags] = xp.where(found, mx, 0)
        max_indices[bags] = xp.where(found, ids[xp.minimum(first, ids.size - 1)], -1)
    result, node = record(out, EmbeddingBagMaxBackward0, (flat, weight))
    if node is not None:
        node.num_weights, node.max_indices = w.shape[0], max_indices
    return result


def _renorm_rows(weight, idx, max_norm, norm_type):
    """max_norm: the rows looked up are rescaled in place to norm <= max_norm (no gradient)."""
    rows = xp.unique(idx.reshape(-1))
    w = weight._data
    norms = (xp.abs(w[rows]) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    w[rows] *= scale[:, None].astype(w.dtype)
    weight._bump_version()


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau); ``hard`` returns one-hot values whose gradient is
    the soft sample's (the straight-through estimator)."""
    try:
        d = logits._data.dtype
        if backend.on_gpu(logits._data):  # drawn there by CuPy's generator, as the random factories
            with logits._data.device:
                u = backend.array_module(logits._data).random.get_random_state().random_sample(
                    logits._data.shape, dtype=xp.float64)
            e = (-xp.log1p(-u)).astype(d)  # Exp(1) samples
        else:
            # -log of Exp(1) samples of logits' dtype (a contiguous tensor's exponential_), as PyTorch draws them
            e = kernels.cast(kernels.exponential(default_generator, logits._data.size, 1.0), d).reshape(
                logits._data.shape)
        g = -xp.log(xp.asarray(e))
        y = softmax((logits + const(g, logits)) / tau, dim)
        if not hard:
            return y
        d = wrap_dim(dim, y._data.ndim)
        idx = y._data.argmax(axis=d)
        onehot = xp.zeros_like(y._data)
        xp.put_along_axis(onehot, xp.expand_dims(idx, d), 1.0, axis=d)
        return const(onehot, y) - y.detach() + y
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('empty_like', ('input=logits',))
        raise


# ---- embedding_bag ---------------------------------------------------------------------------

class EmbeddingBagBackward0(Node):
    __slots__ = ('num_weights', 'padding_idx', 'bag', 'scale', 'num_bags')

    def apply(self, grad):
        indices, weight, *psw = self.saved_tensors
        g_rows = getitem(grad, wrap(self.bag))                      # each element's bag gradient
        gw = gp = None
        if self.next_functions[1][0] is not None:
            scale = const(self.scale[:, None], grad)
            rows_grad = g_rows * (scale if not psw else scale * _shape.unsqueeze(psw[0], 1))
            gw = _embedding_backward(rows_grad, indices, self.num_weights, self.padding_idx)
        if psw and self.next_functions[2][0] is not None:
            rows = embedding(indices, weight, self.padding_idx)
            gp = _sum(g_rows * rows, 1) * const(self.scale, grad)
        return None, gw, gp


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode='mean',
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings, one node (no per-bag Python loop): each
    looked-up row is added into its bag's output with np.add.at (sum, mean) or reduced with
    np.maximum.reduceat (max). ``max_norm`` renormalises the rows looked up in place first;
    ``scale_grad_by_freq`` divides each row's gradient by how often its index occurs."""
    if mode not in ('sum', 'mean', 'max'):
        raise ValueError('mode has to be one of sum, mean or max')
    if per_sample_weights is not None and mode != 'sum':
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    idx = input._data
    n = weight._data.shape[0]
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError('if input is 2D, then offsets has to be None, as input is treated is a mini-batch of '
                             'fixed length sequences. However, found offsets of type Tensor')
        num_bags, length = idx.shape
        bag = xp.repeat(xp.arange(num_bags, like=idx), length)
        flat = input.reshape(-1)
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError('offsets has to be a 1D Tensor but got None')
        off = offsets._data.astype(xp.int64)
        if include_last_offset:
            off = off[:-1]
        num_bags = off.shape[0]
        bag = xp.searchsorted(off, xp.arange(idx.shape[0], like=idx), side='right') - 1
        flat = input
    else:
        raise ValueError(f'input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}')
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    ids = flat._data
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise IndexError('index out of range in self')
    _refuse_sparse_gradient(sparse, weight, 'embedding_bag')
    if max_norm is not None:
        _renorm_rows(weight, ids, max_norm, norm_type)
    if mode == 'max':
        return _embedding_bag_max(flat, weight, bag, num_bags, padding_idx)
    keep = xp.ones(ids.shape, dtype=weight._data.dtype, like=ids) if padding_idx is None else \
        (ids != padding_idx).astype(weight._data.dtype)
    if mode == 'mean':
        counts = xp.bincount(bag, weights=keep, minlength=num_bags)
        scale = keep / xp.maximum(counts, 1)[bag]
    else:
        scale = keep
    rows = weight._data[ids] * scale[:, None]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights._data.reshape(-1)[:, None]
    out = xp.zeros((num_bags, weight._data.shape[1]), dtype=weight._data.dtype, like=ids)
    xp.add.at(out, bag, rows)
    psw = [per_sample_weights.reshape(-1)] if per_sample_weights is not None else []
    result, node = record(out, EmbeddingBagBackward0, (flat, weight, *psw))
    if node is not None:
        node.num_weights, node.padding_idx = n, padding_idx
        grad_scale = scale
        if scale_grad_by_freq:
            grad_scale = scale / xp.bincount(ids, minlength=n)[ids]
        node.bag, node.scale, node.num_bags = bag, grad_scale.astype(weight._data.dtype), num_bags
        weight_needed = bool(psw) and node.next_functions[2][0] is not None  # by the weights' gradient only
        node.save(flat, weight if weight_needed else _Empty, *psw)
    return result


# the ops linear records, as defined: where a layer (the profiler, vmap, forward AD) has bound its
# wrappers in their place, linear calls those (linear_matrix does not)
_plain_ops = (_t, addmm, mm)


def linear(input, weight, bias=None):
    """input @ weight.T + bias, recorded as PyTorch records it: one AddmmBackward0 for 2-D input,
    a flattened addmm and a view for other contiguous input with a bias, else matmul (+ add)."""
    try:
        if not isinstance(input, Tensor):
            raise _not_tensor('linear', input)
        if autocast.state.on:
            input, weight, bias = autocast.lower_precision(input, weight, bias)
        x = input._data
        if not x.ndim:
            raise RuntimeError(f'both arguments to linear need to be at least 1D, but they are 0D and '
                               f'{weight._data.ndim}D')
        if x.shape[-1:] != weight._data.shape[-1:]:
            rows = 1
            for s in x.shape[:-1]:
                rows *= s
            raise RuntimeError(f'mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1]} and '
                               f'{weight._data.shape[-1]}x{weight._data.shape[0]})')
        if x.ndim == 2 and (_t, addmm, mm) == _plain_ops:
            out = linear_matrix(input, weight, bias)
            if out is not None:
                return out
        wt = _t(weight)
        if bias is not None:
            if x.ndim == 2:
                return addmm(bias, input, wt)
            if x.flags.c_contiguous:
                out = addmm(bias, _reshape(input, (-1, x.shape[-1])), wt)
                return _view(out, x.shape[:-1] + (weight._data.shape[0],))
            return _ew.add(matmul(input, wt), bias)
        return mm(input, wt) if x.ndim == 2 else matmul(input, wt)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise
