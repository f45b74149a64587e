"""Loss functions. Fused single nodes where PyTorch has one (MseLossBackward0, NllLossBackward0,
BinaryCrossEntropyBackward0 …), compositions of leafgrad ops where PyTorch composes (l1_loss,
kl_div, cross_entropy). Every derivative is written with leafgrad ops, so losses differentiate
twice."""
import warnings

from ... import backend
from ...autograd.graph import _Empty, slice_reduction_jvp
from ...autograd.grad_mode import no_grad
from ...ops._util import Node, NotImplementedNode, autocast, binary_operands, ops, record, state, wrap, xp
from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...ops.reduction import _sum_in_float32, any as _any, mean_array, sum as _sum
from ...creation import ones_like
from ...ops.activation import _composed, logsigmoid, nn_log_softmax as log_softmax
from .common import check_reduction, const, legacy_reduction, reduce_loss, size_str, dtype_name
from .basic import pairwise_distance
from ..._arg_parser import refuse_arguments
from ...tensor import Tensor


def _reduce_array(a, reduction):
    if reduction == 'mean':
        return xp.asarray(mean_array(a))
    if reduction == 'sum':
        return xp.asarray(a.sum() if a.dtype.kind != 'V' else _sum_in_float32(a, None, False))
    return a


def _scale_grad(grad, reduction, count):
    """The incoming gradient of a reduced loss, as a tensor broadcasting over the elements."""
    if reduction == 'mean':
        return grad / max(count, 1) if count else grad * float('nan')
    return grad


def _broadcast_pair(input, target, stacklevel=3):
    """PyTorch warns when a pointwise loss's target has another shape, then broadcasts."""
    try:
        if input._data.shape == target._data.shape:
            return input, target
    except AttributeError:  # (PyTorch's Python reads target.size(), then input.size(): its error for a non-tensor)
        target.size(), input.size()
        raise
    warnings.warn(f'Using a target size ({size_str(target._data.shape)}) that is different to the input size '
                  f'({size_str(input._data.shape)}). This will likely lead to incorrect results due to '
                  'broadcasting. Please ensure they have the same size.', UserWarning, stacklevel=stacklevel)
    try:
        shape = xp.broadcast_shapes(input._data.shape, target._data.shape)
    except ValueError:
        input + target  # PyTorch's broadcasting error
        raise
    return _shape.expand(input, shape), _shape.expand(target, shape)


# ---- pointwise regression losses --------------------------------------------------------

def pointwise_loss_jvp(node, tangents, output):
    """The forward rule of a loss computed element by element, then reduced: the derivative
    seeded with ones gives each element's gradient (scaled for 'mean'), dotted with the
    tangents, summed unless unreduced."""
    dims = () if node.reduction == 'none' else tuple(range(max(len(t.shape) for t in tangents if t is not None)))
    return slice_reduction_jvp(node, tangents, output, dims, False)


_REDUCTION_ENUM = {'none': 0, 'mean': 1, 'sum': 2}  # (PyTorch's at::Reduction, as its nodes save it)
# grad_fn._saved_reduction of the losses' nodes: the reduction as PyTorch's enum
_saved_reduction = property(lambda self: _REDUCTION_ENUM[self.reduction])


class _PointwiseLossBackward(Node):
    """A pointwise loss's node (mse_loss, smooth_l1_loss, huber_loss): its gradient of self is
    ``gradient(grad, self, target)``, of target minus that; where a graph of them is being made
    (create_graph), each is PyTorch's one node of the loss's backward function, the target's of
    (grad, target, self) (``_LossGradient``). ``params``: the loss's own parameters."""
    __slots__ = ('reduction', 'count')
    saved_names = ('self', 'target', 'reduction=saved_reduction')
    params = ()
    jvp = pointwise_loss_jvp
    saved_reduction = _saved_reduction

    def apply(self, grad):
        x, y = self.saved_tensors
        self.check(x, y)
        needs_x, needs_y = self.next_functions[0][0] is not None, self.next_functions[1][0] is not None
        if state.grad_enabled and not _composed():
            return (loss_gradient(self, grad, x, y) if needs_x else None,
                    loss_gradient(self, grad, y, x) if needs_y else None)
        g = self.gradient(grad, x, y)
        return g if needs_x else None, -g if needs_y else None

    def check(self, x, y):
        pass


class _LossGradient(Node):
    """A pointwise loss's gradient as one op, PyTorch's <loss>_backward (recorded under
    create_graph), of the incoming gradient, of ``a`` and of ``b`` (self and target, or target
    and self for target's gradient): its derivative by the incoming gradient is this op again
    (summed against it for a reduced loss), by ``a`` and ``b`` the loss's ``second`` derivative
    times both incoming gradients (PyTorch's <loss>_double_backward), over the count for a mean."""
    __slots__ = ('reduction', 'count')
    params = ()

    saved_reduction = _saved_reduction

    def apply(self, gg):
        grad, a, b = self.saved_tensors
        needs_grad, needs_a, needs_b = (edge[0] is not None for edge in self.next_functions)
        g_grad = d = None
        if needs_grad:  # PyTorch's <loss>_double_backward_grad_output
            if self.reduction == 'none':
                g_grad = loss_gradient(self, gg, a, b)
            else:
                g_grad = _sum(loss_gradient(self, ones_like(grad), a, b) * gg)
        if needs_a or needs_b:
            d = self.second(gg * grad, a, b)
            if self.reduction == 'mean':
                d = d / self.count
        return g_grad, d if needs_a else None, -d if needs_b else None


def loss_gradient(node, grad, a, b):
    """``node.gradient(grad, a, b)``, a pointwise loss's gradient of ``a``, recorded as PyTorch's
    one node (the value as the plain backward computes it); ``node``: the loss's node or such a
    gradient's, whose reduction, count and parameters it takes."""
    with no_grad():
        value = node.gradient(grad, a, b)
    out, fused = record(value._data, node.gradient_node, (grad, a, b))
    if fused is not None:
        fused.reduction, fused.count = node.reduction, node.count
        for name in node.params:
            setattr(fused, name, getattr(node, name))
        fused.save(grad, a, b)
    return out


class MseLossBackward0(_PointwiseLossBackward):
    __slots__ = ()

    def gradient(self, grad, x, y):
        return (x - y) * (_scale_grad(grad, self.reduction, self.count) * 2.0)


class MseLossBackwardBackward0(_LossGradient):
    __slots__ = ()
    saved_names = ('grad_output', 'self', 'target', 'reduction=saved_reduction')
    gradient = MseLossBackward0.gradient

    @staticmethod
    def second(g, a, b):  # PyTorch's mse_loss_double_backward
        return g * 2


MseLossBackward0.gradient_node = MseLossBackwardBackward0.gradient_node = MseLossBackwardBackward0


def _weighted(elementwise_loss, input, weight, reduction, mean_over_weights):
    """A pointwise loss weighted per element, as PyTorch composes it of tensor operations (its
    graph: Mul, then Sum, Div or Mean): 'mean' divides by the weights' sum (l1, mse) or by the
    number of elements (huber)."""
    if weight.shape != input.shape:
        raise ValueError('Weights and input must have the same size.')
    weighted = elementwise_loss() * weight
    if reduction == 'none':
        return weighted
    if reduction == 'sum':
        return weighted.sum()
    if reduction == 'mean':
        return weighted.sum() / weight.sum() if mean_over_weights else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None):
    if autocast.state.on:
        input, target = autocast.fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        expanded_input, expanded_target = _broadcast_pair(input, target)
        return _weighted(lambda: (expanded_input - expanded_target) ** 2, input, weight, reduction, True)
    check_reduction(reduction)
    input, target = _broadcast_pair(input, target)
    x, y = binary_operands(input, target)  # PyTorch's result dtype (float32 with an int target)
    if x.dtype.kind not in 'fV':
        raise NotImplementedError(f'"mse_cpu" not implemented for \'{dtype_name(wrap(x))}\'')
    diff = x - y
    out, node = record(_reduce_array(diff * diff, reduction), MseLossBackward0, (input, target))
    if node is not None:
        node.reduction, node.count = reduction, diff.size
        node.save(input, target)
    return out


def l1_loss(input, target, size_average=None, reduce=None, reduction='mean', weight=None):
    if autocast.state.on:
        input, target = autocast.fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        expanded_input, expanded_target = _broadcast_pair(input, target)
        return _weighted(lambda: _ew.abs(expanded_input - expanded_target), input, weight, reduction, True)
    check_reduction(reduction)
    input, target = _broadcast_pair(input, target)
    return reduce_loss(_ew.abs(input - target), reduction)


class SmoothL1LossBackward0(_PointwiseLossBackward):
    __slots__ = ('beta',)
    saved_names = ('self', 'target', 'beta=beta', 'reduction=saved_reduction')
    params = ('beta',)

    def gradient(self, grad, x, y):
        d = x - y
        inner = wrap(~(xp.abs(d._data) >= self.beta))  # (a NaN difference inside: its gradient NaN, as PyTorch's)
        return _ew.where(inner, d / self.beta, _ew.sign(d)) * _scale_grad(grad, self.reduction, self.count)


class SmoothL1LossBackwardBackward0(_LossGradient):
    __slots__ = ('beta',)
    saved_names = ('grad_output', 'self', 'target', 'reduction=saved_reduction', 'beta=beta')
    params = ('beta',)
    gradient = SmoothL1LossBackward0.gradient

    def second(self, g, a, b):  # PyTorch's smooth_l1_loss_double_backward: 1 / beta inside
        return g * const(xp.abs(a._data - b._data) < self.beta, g) / self.beta


SmoothL1LossBackward0.gradient_node = SmoothL1LossBackwardBackward0.gradient_node = SmoothL1LossBackwardBackward0


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction='mean', beta=1.0):
    if autocast.state.on:
        input, target = autocast.fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if beta < 0:
        raise RuntimeError('smooth_l1_loss does not support negative values for beta.')
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    input, target = _broadcast_pair(input, target)
    x, y = binary_operands(input, target)
    d = x - y
    ad = xp.abs(d)
    loss = xp.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
    out, node = record(_reduce_array(loss, reduction), SmoothL1LossBackward0, (input, target))
    if node is not None:
        node.reduction, node.count, node.beta = reduction, d.size, beta
        node.save(input, target)
    return out


def _check_backward_dtypes(x, y):
    """PyTorch's fused backward kernels of some losses need one dtype; it fails only then."""
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f'Found dtype {dtype_name(y)} but expected {dtype_name(x)}')


class HuberLossBackward0(_PointwiseLossBackward):
    __slots__ = ('delta',)
    saved_names = ('self', 'target', 'delta=delta', 'reduction=saved_reduction')
    params = ('delta',)

    def check(self, x, y):
        _check_backward_dtypes(x, y)

    def gradient(self, grad, x, y):
        d = x - y
        inner = wrap(~(xp.abs(d._data) >= self.delta))  # (a NaN difference inside: its gradient NaN, as PyTorch's)
        return _ew.where(inner, d, _ew.sign(d) * self.delta) * _scale_grad(grad, self.reduction, self.count)


class HuberLossBackwardBackward0(_LossGradient):
    __slots__ = ('delta',)
    saved_names = ('grad_output', 'self', 'target', 'reduction=saved_reduction', 'delta=delta')
    params = ('delta',)
    gradient = HuberLossBackward0.gradient

    def second(self, g, a, b):  # PyTorch's huber_loss_double_backward: 1 inside
        return g * const(xp.abs(a._data - b._data) < self.delta, g)


HuberLossBackward0.gradient_node = HuberLossBackwardBackward0.gradient_node = HuberLossBackwardBackward0


def huber_loss(input, target, reduction='mean', delta=1.0, weight=None):
    if autocast.state.on:
        input, target = autocast.fp32(input, target)
    if weight is not None:
        return _weighted(lambda: huber_loss(input, target, 'none', delta), input, weight, reduction, False)
    check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError('huber_loss does not support non-positive values for delta.')
    input, target = _broadcast_pair(input, target)
    x, y = binary_operands(input, target)
    d = x - y
    ad = xp.abs(d)
    loss = xp.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    out, node = record(_reduce_array(loss, reduction), HuberLossBackward0, (input, target))
    if node is not None:
        node.reduction, node.count, node.delta = reduction, d.size, delta
        node.save(input, target)
    return out


# ---- binary cross-entropy ---------------------------------------------------------------

class BinaryCrossEntropyBackward0(Node):
    __slots__ = ('reduction', 'count')
    saved_names = ('self', 'target', 'weight', 'reduction=saved_reduction')  # (no weight: _Empty, read as None)
    saved_reduction = _saved_reduction

    jvp = pointwise_loss_jvp

    def apply(self, grad):
        x, t, w = self.saved_tensors
        _check_backward_dtypes(x, t)
        g = _scale_grad(grad, self.reduction, self.count)
        if w is not _Empty:
            g = g * w
        gx = gt = None
        if self.next_functions[0][0] is not None:
            denom = (1 - x) * x
            gx = g * (x - t) / _ew.where(denom > 1e-12, denom, 1e-12)
        if self.next_functions[1][0] is not None:
            gt = g * (_ew.log(1 - x) - _ew.log(x))
        return gx, gt


def _refuse_grad(fname, name, t):
    """PyTorch's error for an argument its derivatives do not cover (a weight) that requires grad
    where autograd records."""
    if t is not None and t.requires_grad and state.grad_enabled:
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to argument '{name}'. "
                           'This input cannot have requires_grad True.')


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction='mean'):
    if autocast.state.on:
        input, target, weight = autocast.fp32(input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    try:
        mismatch = input._data.shape != target._data.shape
    except AttributeError:  # (PyTorch's Python reads target.size(), then input.size(): its error for a non-tensor)
        target.size(), input.size()
        raise
    if mismatch:
        raise ValueError(f'Using a target size ({size_str(target._data.shape)}) that is different to the input size '
                         f'({size_str(input._data.shape)}) is deprecated. Please ensure they have the same size.')
    if weight is not None:
        weight = _shape.expand(weight, tuple(_shape.broadcast_shapes(target.shape, weight.shape)))  # (its error)
        _refuse_grad('binary_cross_entropy', 'weight', weight)
    x, t = input._data, target._data
    if t.dtype != x.dtype:
        raise RuntimeError(f'Found dtype {dtype_name(target)} but expected {dtype_name(input)}')
    for name, values in (('input', x), ('target', t)):
        if values.size and not (values.min() >= 0 and values.max() <= 1):  # NaN fails too, as in PyTorch
            raise RuntimeError(f'all elements of {name} should be between 0 and 1')
    with xp.errstate(divide='ignore'):
        loss = -(t * xp.maximum(xp.log(x), -100) + (1 - t) * xp.maximum(xp.log1p(-x), -100))
    if weight is not None:
        loss = loss * weight._data
    out, node = record(_reduce_array(loss.astype(x.dtype, copy=False), reduction), BinaryCrossEntropyBackward0,
                       (input, target))
    if node is not None:
        node.reduction, node.count = reduction, x.size
        node.save(input, target, _Empty if weight is None else weight)
    return out


class BinaryCrossEntropyWithLogitsBackward0(Node):
    __slots__ = ('reduction', 'count')
    # (a weight or pos_weight not given: _Empty, read as None)
    saved_names = ('self', 'target', 'weight', 'pos_weight', 'reduction=saved_reduction')
    saved_reduction = _saved_reduction

    jvp = pointwise_loss_jvp

    def apply(self, grad):
        x, t, w, pw = (None if s is _Empty else s for s in self.saved_tensors)
        g = _scale_grad(grad, self.reduction, self.count)
        if w is not None:
            g = g * w
        gx = gt = None
        if self.next_functions[0][0] is not None:
            s = _ew.sigmoid(x)
            gx = g * (s - t) if pw is None else g * ((pw * t + 1 - t) * s - pw * t)
        if self.next_functions[1][0] is not None:
            # d/dt of (1 - t) x + (1 + (pw - 1) t) softplus(-x); softplus(-x) = -log(sigmoid(x))
            gt = g * -x if pw is None else g * ((pw - 1) * -_ew.log(_ew.sigmoid(x)) - x)
        return gx, gt


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction='mean',
                                     pos_weight=None):
    if autocast.state.on:
        input, target, weight, pos_weight = autocast.fp32(input, target, weight, pos_weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    try:
        mismatch = input._data.shape != target._data.shape
    except AttributeError:  # (PyTorch's Python reads target.size(), then input.size(): its error for a non-tensor)
        target.size(), input.size()
        raise
    if mismatch:
        raise ValueError(f'Target size ({size_str(target._data.shape)}) must be the same as input size '
                         f'({size_str(input._data.shape)})')
    _refuse_grad('binary_cross_entropy_with_logits', 'weight', weight)
    _refuse_grad('binary_cross_entropy_with_logits', 'pos_weight', pos_weight)
    if target._data.dtype.kind not in 'fV':
        raise RuntimeError(f"result type {dtype_name(input)} can't be cast to the desired output type "
                           f'{dtype_name(target)}')
    x, t = binary_operands(input, target)
    # (1 - t) x + l (log(1 + e^-|x|) + max(-x, 0)) with l = 1 + (pw - 1) t: no overflow for any x
    softplus_neg = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)
    if pos_weight is not None:
        lw = 1 + (pos_weight._data - 1) * t
        loss = (1 - t) * x + lw * softplus_neg
    else:
        loss = (1 - t) * x + softplus_neg
    if weight is not None:
        loss = loss * weight._data
    out, node = record(_reduce_array(loss.astype(x.dtype, copy=False), reduction), BinaryCrossEntropyWithLogitsBackward0,
                       (input, target))
    if node is not None:
        node.reduction, node.count = reduction, loss.size
        node.save(input, target, _Empty if weight is None else weight, _Empty if pos_weight is None else pos_weight)
    return out


# ---- negative log-likelihood and cross-entropy --------------------------------------------

def _class_layout(input, target):
    """Check nll_loss's shapes; returns (number of classes, class dim)."""
    x, t = input._data, target._data
    if x.ndim == 0:
        raise ValueError(f'Expected 1 or more dimensions (got {x.ndim})')
    if x.ndim == 1:
        if t.ndim > 1:
            raise RuntimeError('0D or 1D target tensor expected, multi-target not supported')
        _check_target_dtype(target)
        return x.shape[0], 0
    if t.shape[:1] != x.shape[:1]:  # (PyTorch's nll_loss_nd compares the batch sizes first)
        raise ValueError(f'Expected input batch_size ({x.shape[0]}) to match target batch_size ({t.shape[0] if t.ndim else 1}).')
    if x.ndim == 2 and t.ndim != 1:
        raise RuntimeError('0D or 1D target tensor expected, multi-target not supported')
    if x.ndim > 2 and t.shape[1:] != x.shape[2:]:
        raise RuntimeError(f'Expected target size {list(x.shape[:1] + x.shape[2:])}, got {list(t.shape)}')
    _check_target_dtype(target)
    return x.shape[1], 1


def _check_target_dtype(target):
    if target._data.dtype.type is not xp.int64 and target._data.dtype.type is not xp.uint8:
        raise RuntimeError(f'expected target dtype to be Long or Byte, but got {dtype_name(target)}')


class NllLossBackward0(Node):
    """The gradient is ``-weight[t] / total_weight`` at each row's target class ``t`` and 0
    elsewhere, and in the ignored rows. The input, target and weight are saved, as PyTorch saves
    them (so that changing them in place is caught); the forward keeps the rows that count, their
    classes, their weights (None: all 1) and the total weight (None: no mean) for the derivative."""
    __slots__ = ('class_dim', 'reduction', 'input_shape', 'n_rows', 'counted', 'classes', 'weights', 'total',
                 'dtype', 'ignore_index')
    saved_names = ('self', 'target', 'weight', 'total_weight', 'reduction=saved_reduction',
                   'ignore_index=ignore_index:int64')
    saved_outputs = ('total_weight',)  # (nll_loss_forward's second output, kept as a tensor)
    saved_reduction = _saved_reduction

    def jvp(self, tangents, output):
        # linear in the input: each output's gradient (seeded with ones) dotted with the tangent
        dims = tuple(range(len(self.input_shape))) if self.reduction != 'none' else (self.class_dim,)
        if self.reduction == 'none' and len(self.input_shape) == 1:
            dims = (0,)
        return slice_reduction_jvp(self, tangents[:1], output, dims, False)

    def apply(self, grad):
        self.saved_tensors  # the version check of input, target and weight
        w, total, g = self.weights, self.total, grad._data
        if not state.grad_enabled and g.ndim == 0 and g.dtype == self.dtype and total != 0:
            # A reduced loss in a plain backward: its gradient is folded into the coefficients
            # before they are scattered, as PyTorch computes them: -(grad / total) * weight.
            scale = -g if total is None else g / -total  # (the same number as -(grad / total))
            return wrap(self._scattered(scale if w is None else w * scale)), None, None
        if total is None:
            coefs = -1 if w is None else -w
        else:
            with xp.errstate(divide='ignore', invalid='ignore'):  # no weight at all: -w / 0, as PyTorch
                coefs = (xp.ones((), self.dtype, like=self.classes) if w is None else w) / -total
        if state.grad_enabled and not _composed():
            # the graph of a gradient: PyTorch's one node, of the incoming gradient and the input
            with no_grad():
                value = self._times_coefficients(grad, coefs)
            x, target, weight, _ = self.saved_tensors
            fused = NllLoss2DBackwardBackward0 if type(self) is NllLoss2DBackward0 else NllLossBackwardBackward0
            # (contiguous, as PyTorch's kernel writes it: the next node takes it as it is)
            out, node = record(xp.ascontiguousarray(value._data), fused, (grad, x))
            if node is not None:
                node.reduction, node.ignore_index = self.reduction, self.ignore_index
                node.save(target, weight)  # (a missing weight: _Empty, as nll_loss's node saved it)
            return out, None, None
        return self._times_coefficients(grad, coefs), None, None

    def _times_coefficients(self, grad, coefs):
        if self.reduction == 'none' and len(self.input_shape) > 1:
            grad = _shape.unsqueeze(grad, self.class_dim)
        return grad * wrap(self._scattered(coefs))

    def _scattered(self, values):
        """``values`` at each counted row's target class, 0 elsewhere, in the input's layout."""
        shape, cdim = self.input_shape, self.class_dim
        C = shape[cdim]
        coef = xp.zeros((self.n_rows, C), dtype=self.dtype, like=self.classes)
        coef[self.counted, self.classes] = values
        if len(shape) != 2:  # rows back to the input's layout, the classes along class_dim
            coef = xp.moveaxis(coef.reshape(shape[:cdim] + shape[cdim + 1:] + (C,)), -1, cdim)
        return coef


class NllLoss2DBackward0(NllLossBackward0):
    __slots__ = ()


class NllLossBackwardBackward0(Node):
    """nll_loss's gradient as one op, PyTorch's nll_loss_backward (recorded under create_graph):
    of the incoming gradient, and of the input, by which its derivative is zero (the gradient
    requires grad as the input does, as in PyTorch)."""
    __slots__ = ('reduction', 'ignore_index')
    saved_names = ('target', 'weight', 'reduction=saved_reduction', 'ignore_index=ignore_index:int64')
    saved_reduction = _saved_reduction

    def apply(self, gg):
        target, weight = self.saved_tensors
        # by the incoming gradient: nll_loss of gg itself; by the input: zeros
        g_grad = None
        if self.next_functions[0][0] is not None:
            g_grad = nll_loss(gg, target, None if weight is _Empty else weight, ignore_index=self.ignore_index,
                              reduction=self.reduction)
        return g_grad, wrap(xp.zeros_like(gg._data)) if self.next_functions[1][0] is not None else None


class NllLoss2DBackwardBackward0(NllLossBackwardBackward0):
    __slots__ = ()


def _every_row_counts(t, C, ignore_index):
    """Whether every target is a class in range and none is ``ignore_index``: two reductions
    spare the masks that the general case needs."""
    if not t.size:
        return False
    low, high = t.min(), t.max()  # (CuPy has no minimum.reduce; the same speed on NumPy)
    if type(t) is not xp.ndarray and type(t) is not backend.MetaArray:
        # (from a GPU: both in one transfer, where each comparison below would wait for one)
        low, high = backend.to_numpy(xp.stack([low, high])).tolist()
    return 0 <= low and high < C and not low <= ignore_index <= high


def _cascade_sums(t, picked, w, ignore_index):
    """PyTorch's float16/bfloat16 nll_loss sums, reproduced: the rows' losses (and weights) added
    into eight partial sums in that dtype, each step rounded, level j + 1 taking level j's sum at
    every 16**j-th row; then the levels added in order. Returns (loss sum, total weight or None)."""
    dt = picked.dtype.type
    losses, weights = [dt(0)] * 8, [dt(0)] * 8
    terms = (picked if w is None else picked * w).tolist()
    ws = None if w is None else w.tolist()
    for b, (cls, term) in enumerate(zip(t.tolist(), terms)):
        if cls == ignore_index:
            continue
        losses[0] = dt(losses[0] - dt(term))
        if ws is not None:
            weights[0] = dt(weights[0] + dt(ws[b]))
        for j in range(7):
            if b & (15 << (4 * j)):
                break
            losses[j + 1], losses[j] = dt(losses[j + 1] + losses[j]), dt(0)
            weights[j + 1], weights[j] = dt(weights[j + 1] + weights[j]), dt(0)
    loss = total = dt(0)
    for j in range(8):
        loss, total = dt(loss + losses[j]), dt(total + weights[j])
    return loss, (None if ws is None else total)


def nll_arrays(x, t, C, weight, ignore_index, reduction, check_weight=None):
    """nll_loss on arrays: ``x`` (rows, C) log-probabilities, ``t`` the rows' classes (flat),
    ``weight`` the class weights' array or None (``check_weight()`` runs once the targets are
    checked, PyTorch's order of errors). Returns (loss array: the rows' losses for
    'none', else 0-d; counted rows, their classes, their weights (None: all 1) and the total
    weight (None: no mean) for the derivative). Shared by the op and compile's replay."""
    rows = xp.arange(t.size, like=t)
    valid = None if _every_row_counts(t, C, ignore_index) else t != ignore_index
    classes = t if valid is None else xp.where(valid, t, 0)  # an ignored row picks class 0, weight 0
    if valid is not None:
        bad = (classes < 0) | (classes >= C)
        if bad.any():
            raise IndexError(f'Target {int(t[bad][0])} is out of bounds.')
    if check_weight is not None:
        check_weight()
    w = None  # the rows' weights; None: all 1
    if weight is not None:
        w = weight[classes] if valid is None else weight[classes] * valid
    elif valid is not None:
        w = valid.astype(x.dtype)
    picked = x[rows, classes]
    losses = -picked if w is None else -(w * picked)
    counted = rows if valid is None or valid.all() else rows[valid]
    total = None
    if reduction == 'none':
        if counted is not rows:
            losses[~valid] = 0  # +0, as PyTorch leaves an ignored row
        data = losses
    elif x.dtype.itemsize == 2 and x.dtype.kind in 'fV' and t.size:  # float16, bfloat16: summed as PyTorch sums
        weights = None if weight is None else weight[classes]
        data, total = _cascade_sums(t, picked, weights, ignore_index)
        if reduction == 'mean':
            total = x.dtype.type(int(counted.size)) if total is None else total  # (rounded to the dtype)
            data = x.dtype.type(data / total)
        else:
            total = None
        data = xp.asarray(data, dtype=x.dtype, like=x)
    else:
        data = xp.add.reduce(losses)
        if reduction == 'mean':
            total = t.size if w is None else xp.add.reduce(w)
            data = data / total if total else xp.asarray(xp.nan, dtype=x.dtype, like=x)  # no weight at all: 0/0
    if counted is not rows:  # (w is set: the rows' weights are 0 where they do not count)
        classes, w = classes[valid], w[valid]
    return data, counted, classes, w, total


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'):
    try:
        if autocast.state.on:
            input, target, weight = autocast.fp32(input, target, weight)
        reduction = legacy_reduction(size_average, reduce, reduction)
        check_reduction(reduction)
        C, cdim = _class_layout(input, target)
        x = input._data
        if x.ndim != 2:  # one row per target, the classes last
            x = xp.moveaxis(x, cdim, -1).reshape(-1, C)
        t = target._data.reshape(-1)
        for other in (target, weight):  # (CuPy would index a GPU's input with a CPU target: PyTorch refuses)
            if other is not None and type(other._data) is not type(input._data) \
                    and 'meta' not in (other.device.type, input.device.type):
                raise RuntimeError(f'Expected all tensors to be on the same device, but found at least two devices, '
                                   f'{input.device} and {other.device}!')

        def check_weight():
            if weight._data.dtype != input._data.dtype:
                raise RuntimeError(f'expected scalar type {dtype_name(input)} but found {dtype_name(weight)}')
            if weight._data.shape != (C,):
                raise RuntimeError(f'weight tensor should be defined either for all {C} classes or no classes but got '
                                   f'weight tensor of shape: {list(weight._data.shape)}')
        data, counted, classes, w, total = nll_arrays(x, t, C, None if weight is None else weight._data, ignore_index,
                                                      reduction, None if weight is None else check_weight)
        if reduction == 'none':
            data = data.reshape(target._data.shape)
        cls = NllLoss2DBackward0 if input._data.ndim >= 3 else NllLossBackward0
        out, node = record(data, cls, (input, target, weight))
        if node is not None:
            node.class_dim, node.reduction, node.input_shape, node.n_rows = cdim, reduction, input._data.shape, t.size
            node.counted, node.weights, node.total, node.dtype = counted, w, total, x.dtype
            node.classes, node.ignore_index = classes, ignore_index
            # total_weight saved as PyTorch saves it (0 unreduced), so that saved-tensor hooks see its four
            total_weight = 0 if reduction == 'none' else total if total is not None else (
                classes.size if w is None else xp.add.reduce(w))
            node.save(input, target, _Empty if weight is None else weight,
                      wrap(xp.asarray(total_weight, dtype=x.dtype, like=x)))
        return out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('nll_loss_nd')
        raise


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean',
                  label_smoothing=0.0):
    """log_softmax then nll_loss (class indices), or -sum(target * log_softmax) (probabilities),
    composed as PyTorch composes them, so the recorded nodes are PyTorch's."""
    try:
        if autocast.state.on:
            input, target, weight = autocast.fp32(input, target, weight)
        reduction = legacy_reduction(size_average, reduce, reduction)
        check_reduction(reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f'label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}')
        cdim = 0 if input._data.ndim == 1 else 1
        if input._data.ndim == 0:
            raise RuntimeError('cross_entropy: input must have at least one dimension')
        C = input._data.shape[cdim]
        logp = log_softmax(input, cdim)
        wshape = (C,) + (1,) * (input._data.ndim - cdim - 1)
        if input._data.shape == target._data.shape:  # class probabilities
            if target._data.dtype.kind not in 'fV':
                raise RuntimeError(f'Expected floating point type for target with class probabilities, got '
                                   f'{dtype_name(target)}')
            if label_smoothing > 0:
                target = target * (1 - label_smoothing) + label_smoothing / C
            prod = logp * target
            if weight is not None:
                prod = prod * _shape.reshape(weight, wshape)
            if reduction == 'mean':  # (over the rows, an int in PyTorch's C++: DivBackward1)
                n = input._data.size // C if C else 0
                return ops.div_by_number(-_sum(prod), n) if n else -_sum(prod).fill_(float('nan'))
            if reduction == 'sum':
                return -_sum(prod)
            return -_sum(prod, cdim)
        nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
        if label_smoothing <= 0:
            return nll
        keep = const(target._data != ignore_index, logp)
        if weight is not None:
            smooth = -_sum(logp * _shape.reshape(weight, wshape), cdim)
        else:
            smooth = -_sum(logp, cdim)
        smooth = smooth * keep
        if reduction == 'mean':
            if weight is not None:
                t = target._data[target._data != ignore_index]
                smooth = _sum(smooth) / float(weight._data[t].sum())
            else:
                smooth = _sum(smooth) / float((target._data != ignore_index).sum())
        elif reduction == 'sum':
            smooth = _sum(smooth)
        return nll * (1 - label_smoothing) + smooth * (label_smoothing / C)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('cross_entropy_loss')
        raise


# ---- divergence -------------------------------------------------------------------------

def _xlogy_self(t):
    """xlogy(t, t), as ATen's kl_div: 0 where t == 0, NaN where t < 0 (and its gradients)."""
    return ops.xlogy(t, t)


def kl_div(input, target, size_average=None, reduce=None, reduction='mean', log_target=False):
    try:
        if autocast.state.on:
            input, target = autocast.fp32(input, target)
        reduction = legacy_reduction(size_average, reduce, reduction)
        if reduction == 'mean':
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          UserWarning, stacklevel=2)
        elif reduction not in ('batchmean', 'sum', 'none'):
            raise ValueError(f'{reduction} is not a valid value for reduction')
        if input._data.dtype.kind not in 'fV' or target._data.dtype.kind not in 'fV':
            raise RuntimeError('kl_div: Integral inputs not supported.')
        if log_target:
            loss = _ew.exp(target) * (target - input)
        else:
            loss = _xlogy_self(target) - target * input
        if reduction == 'batchmean':
            total = _sum(loss)
            return total / input._data.shape[0] if input._data.ndim else total
        return reduce_loss(loss, reduction)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


# ---- composite losses (composed of leafgrad ops, as PyTorch composes them) ------------------

def _relu(t):
    return _ew.relu(t)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction='mean'):
    if autocast.state.on:
        input, target = autocast.fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if log_input:
        loss = _ew.exp(input) - target * input
    else:
        loss = input - target * _ew.log(input + eps)
    if full:
        # Stirling's term where target > 1 (a safe stand-in elsewhere keeps the gradient finite)
        big = target > 1
        t = _ew.where(big, target, 2.0)
        stirling = t * _ew.log(t) - t + _ew.log(t * (2 * float(xp.pi))) * 0.5
        loss = loss + _ew.where(big, stirling, 0.0)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean'):
    """PyTorch's function is Python: its steps, in its order, are what raise its errors for an
    argument that is no tensor (an int ``var``: ``any(False)``'s TypeError; an ``input``: "'int'
    object has no attribute 'size'"; a ``target``: the operator's)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError('var has negative entry/entries')
        var = var * ones_like(input)
    elif not isinstance(var, Tensor):
        if _any(var < 0):
            raise ValueError('var has negative entry/entries')
    elif (var._data < 0).any():
        raise ValueError('var has negative entry/entries')
    vs, xs = var.size(), input.size()
    if vs != xs:
        if xs[:-1] == vs:
            var = _shape.unsqueeze(var, -1)
        elif not (len(xs) == len(vs) and sum(y for x, y in zip(xs, vs) if x != y) == 1):
            raise ValueError('var is of incorrect size')
    if reduction != 'none' and reduction != 'mean' and reduction != 'sum':
        raise ValueError(reduction + ' is not valid')
    # clamped without gradient, as PyTorch clamps a clone under no_grad
    var = var + const(xp.maximum(var._data, eps) - var._data, var)
    d = input - target
    loss = (_ew.log(var) + d * d / var) * 0.5
    if full:
        loss = loss + 0.5 * float(xp.log(2 * xp.pi))
    return reduce_loss(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'):
    if autocast.state.on:
        input1, input2, target = autocast.fp32(input1, input2, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    try:
        mismatch = input1._data.ndim != input2._data.ndim or input1._data.ndim != target._data.ndim
    except AttributeError:  # (PyTorch's check is Python: an argument that is no tensor fails it with its own error)
        mismatch = input1.dim() != input2.dim() or input1.dim() != target.dim()
    if mismatch:
        raise RuntimeError('margin_ranking_loss : All input tensors should have same dimension but got sizes: '
                           f'input1: {size_str(input1.shape)}, input2: {size_str(input2.shape)}, '
                           f'target: {size_str(target.shape)} ')
    # (clamp_min, as ATen's: its gradient passes at 0, relu's does not)
    return reduce_loss((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction='mean'):
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):  # (a number would compute: PyTorch's
        refuse_arguments()                                              # parser refuses it)
    try:
        if autocast.state.on:
            input, target = autocast.fp32(input, target)
        reduction = legacy_reduction(size_average, reduce, reduction)
        check_reduction(reduction)
        zeros = const(xp.zeros((), dtype=input._data.dtype, like=input._data))  # (PyTorch's zeros_like: not input * 0, nan at an infinite input)
        m = margin - input
        # (margin - input).clamp_min(0), PyTorch's: its gradient passes at 0, where relu's does not
        out = _ew.where(target != 1, _ew.where(m < 0, zeros, m), zeros) + _ew.where(target != -1, input, zeros)
        return reduce_loss(out, reduction)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


class SoftMarginLossBackward0(Node):
    __slots__ = ('reduction', 'count')
    saved_names = ('self', 'target', 'reduction=saved_reduction')
    saved_reduction = _saved_reduction

    jvp = pointwise_loss_jvp

    def apply(self, grad):
        x, y = self.saved_tensors
        g = _scale_grad(grad, self.reduction, self.count)
        return -y * _ew.sigmoid(-(y * x)) * g, None


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """log(1 + exp(-y x)), one node as in PyTorch (which refuses a target that requires grad)."""
    try:
        if autocast.state.on:
            input, target = autocast.fp32(input, target)
        reduction = legacy_reduction(size_average, reduce, reduction)
        check_reduction(reduction)
        if target.requires_grad:
            raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument "
                               "'target'. This input cannot have requires_grad True.")
        input, target = _broadcast_pair(input, target)
        x, y = binary_operands(input, target)
        z = -(y * x)
        loss = xp.log1p(xp.exp(-xp.abs(z))) + xp.maximum(z, 0)
        out, node = record(_reduce_array(loss, reduction), SoftMarginLossBackward0, (input, target))
        if node is not None:
            node.reduction, node.count = reduction, loss.size
            node.save(input, target)
        return out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction='mean'):
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))  # (PyTorch's ops: its nodes, its errors)
    if weight is not None:
        loss = loss * weight
    loss = _sum(loss, input._data.ndim - 1) / input._data.shape[-1]
    return reduce_loss(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction='mean'):
    if autocast.state.on:
        input1, input2, target = autocast.fp32(input1, input2, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    eps = 1e-12
    d = input1._data.ndim - 1
    prod = _sum(input1 * input2, d)
    m1 = _sum(input1 * input1, d) + eps
    m2 = _sum(input2 * input2, d) + eps
    cos = prod / _ew.sqrt(m1 * m2)
    zeros = cos * 0
    out = _ew.where(target == 1, 1 - cos, zeros) + _ew.where(target == -1, _relu(cos - margin), zeros)
    return reduce_loss(out, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction='mean'):
    if not (isinstance(anchor, Tensor) and isinstance(positive, Tensor) and isinstance(negative, Tensor)):
        refuse_arguments()  # (a number would compute: PyTorch's parser refuses it)
    if autocast.state.on:
        anchor, positive, negative = autocast.fp32(anchor, positive, negative)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))  # (a tie: half to each, as ATen's min)
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction)


class _MarginLossBackward(Node):
    """A fused margin loss's node (PyTorch's multi_margin_loss / multilabel_margin_loss): the
    gradient is the incoming one, scaled by the reduction, times the per-sample loss's derivative
    (``derivative``), written in NumPy; PyTorch gives that backward no derivative of its own."""
    __slots__ = ('reduction', 'one_dim')

    def apply(self, grad):
        x, = self.saved_tensors
        d = self.derivative(x._data.reshape(1, -1) if self.one_dim else x._data)
        g = grad._data
        if self.reduction == 'mean':
            g = g / d.shape[0]
        elif self.reduction == 'none' and not self.one_dim:
            g = g[:, None]
        data = (g * d).astype(x._data.dtype).reshape(x._data.shape)
        out, node = record(data, NotImplementedNode, (grad, x))
        if node is not None:
            node.op_name = self.backward_name
        return out,


class MultiMarginLossBackward0(_MarginLossBackward):
    __slots__ = ('p', 'margin', 'target', 'weight')
    backward_name = 'multi_margin_loss_backward'

    def derivative(self, x):
        n, c = x.shape
        rows, t = xp.arange(n, like=x), self.target
        z = self.margin - x[rows, t][:, None] + x
        hit = z > 0
        hit[rows, t] = False
        d = xp.where(hit, 1 if self.p == 1 else 2 * z, 0).astype(x.dtype)
        if self.weight is not None:
            d = d * self.weight[t][:, None]
        d[rows, t] = -d.sum(1)
        return d / c


def _margin_loss(input, losses, reduction, node_class):
    """The per-sample ``losses`` (an array) reduced, recorded as one ``node_class``."""
    one_dim = input._data.ndim < 2
    loss = losses.reshape(()) if one_dim else losses
    out, node = record(_reduce_array(loss, reduction).astype(input._data.dtype), node_class, (input,))
    if node is not None:
        node.reduction, node.one_dim = reduction, one_dim
        node.save(input)
    return out, node


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction='mean'):
    """sum over j != y of max(0, margin - x[y] + x[j])^p (times weight[y]) / C: one node, as
    PyTorch's (MultiMarginLossBackward0; a weight that requires grad is refused)."""
    try:
        if autocast.state.on:
            input, target, weight = autocast.fp32(input, target, weight)
        reduction = legacy_reduction(size_average, reduce, reduction)
        check_reduction(reduction)
        if p not in (1, 2):
            raise ValueError('only p == 1 and p == 2 supported')
        x = input._data.reshape(1, -1) if input._data.ndim < 2 else input._data
        t = target._data.reshape(-1)
        n, c = x.shape
        if t.shape[0] != n:
            raise RuntimeError(f'inconsistent target size, expected {n} but got {list(target._data.shape)}')
        _refuse_grad('multi_margin_loss', 'weight', weight)
        if t.size and (t.min() < 0 or t.max() >= c):
            raise RuntimeError('target out of range')
        rows = xp.arange(n, like=x)
        z = margin - x[rows, t][:, None] + x
        h = xp.where(z > 0, z if p == 1 else z * z, 0)
        h[rows, t] = 0
        w = None if weight is None else weight._data.astype(x.dtype)
        if w is not None:
            h = h * w[t][:, None]
        out, node = _margin_loss(input, h.sum(1) / c, reduction, MultiMarginLossBackward0)
        if node is not None:
            node.p, node.margin, node.target, node.weight = p, margin, t, w
        return out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


class MultilabelMarginLossBackward0(_MarginLossBackward):
    __slots__ = ('counts', 'is_target')
    backward_name = 'multilabel_margin_loss_backward'

    def derivative(self, x):
        _, hit = _label_margins(x, self.is_target)            # [n, target j, other d]
        d = (self.counts[:, :, None] * hit).sum(1)           # +1 for each (target, other) pair in the margin
        d = d - self.counts * hit.sum(2)                      # -1 for the target of each
        return (d / x.shape[1]).astype(x.dtype)


def _label_margins(x, is_target):
    """1 - x[j] + x[d] of each row's pairs, and where it counts: d no target, the margin > 0."""
    z = 1 - x[:, :, None] + x[:, None, :]
    return z, ((z > 0) & ~is_target[:, None, :]).astype(x.dtype)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction='mean'):
    """Targets are class indices padded with -1 after the last one; each target listed (twice if
    listed twice, as PyTorch's loop) with each non-target i adds max(0, 1 - (x[target] - x[i])) / C.
    One node, as PyTorch's (MultilabelMarginLossBackward0)."""
    if autocast.state.on:
        input, target = autocast.fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    x = input._data.reshape(1, -1) if input._data.ndim < 2 else input._data
    t = target._data.reshape(x.shape)
    n, c = x.shape
    if t.size and (t.min() < -1 or t.max() >= max(c, 1)):
        raise RuntimeError("argument #2 'target' is out of range")
    # the targets of each row: the indices before the first -1, counted as often as listed
    listed = xp.cumprod(t >= 0, axis=1).astype(bool)
    counts = xp.zeros((n, c), dtype=x.dtype, like=x)
    xp.add.at(counts, (xp.nonzero(listed)[0], t[listed]), 1)
    is_target = counts > 0
    z, hit = _label_margins(x, is_target)
    losses = (counts[:, :, None] * z * hit).sum((1, 2)) / c
    out, node = _margin_loss(input, losses, reduction, MultilabelMarginLossBackward0)
    if node is not None:
        node.counts, node.is_target = counts, is_target
    return out


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction='mean'):
    """max(margin + d(a, p) - d(a, n), 0) for any distance d (pairwise_distance by default); with
    ``swap`` d(a, n) is replaced by min(d(a, n), d(p, n))."""
    if reduction not in ('mean', 'sum', 'none'):
        raise ValueError(f'{reduction} is not a valid value for reduction')
    if margin <= 0:
        raise ValueError(f'margin must be greater than 0, got {margin}')
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError('The anchor, positive, and negative tensors are expected to have the same number of '
                           f'dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs')
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(distance(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    if reduction == 'sum':
        return loss.sum()
    if reduction == 'mean':
        return loss.mean()
    return loss
