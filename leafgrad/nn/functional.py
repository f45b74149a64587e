"""leafgrad.nn.functional: the neural-network ops, as ``torch.nn.functional``.

The implementations live in ``nn/_functional/`` by kind (basic, loss, norm, conv, pooling,
sampling); the activations come from ``ops/activation.py`` and ``pad`` from the shape ops.
"""
from ..ops import elementwise as _ew
from ..tensor import Tensor as _Tensor
from ._functional.common import not_tensor as _not_tensor
from ..ops import _inplace
from ..ops.linalg_extra import pdist
from ._functional.attention import multi_head_attention_forward, scaled_dot_product_attention
from ._functional.basic import (alpha_dropout, cosine_similarity, dropout, dropout1d, dropout2d, dropout3d, embedding,
                                embedding_bag, feature_alpha_dropout, gumbel_softmax, linear, normalize, one_hot,
                                pairwise_distance)
from ._functional.ctc import ctc_loss
from ._functional.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from ._functional.extra import (bilinear, channel_shuffle, fold, glu, native_channel_shuffle, pixel_shuffle,
                                pixel_unshuffle, prelu, rrelu, rrelu_, unfold)
from ._functional.grid import affine_grid, grid_sample
from ._functional.loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                               cross_entropy, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss,
                               margin_ranking_loss, mse_loss, multi_margin_loss, multilabel_margin_loss,
                               multilabel_soft_margin_loss, nll_loss, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
                               triplet_margin_loss, triplet_margin_with_distance_loss)
from ._functional.norm import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, rms_norm
from ._functional.fractional import (fractional_max_pool2d, fractional_max_pool2d_with_indices,  # noqa: F401
                                     fractional_max_pool3d, fractional_max_pool3d_with_indices)
from ._functional.pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
                                  adaptive_max_pool1d_with_indices, adaptive_max_pool2d,
                                  adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
                                  adaptive_max_pool3d_with_indices, avg_pool1d, avg_pool2d, avg_pool3d, lp_pool1d, lp_pool3d,
                                  lp_pool2d, max_pool1d, max_pool1d_with_indices, max_pool2d, max_pool2d_with_indices,
                                  max_pool3d, max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d)
from ._functional.sampling import (interpolate, upsample, upsample_bilinear,
                                   upsample_nearest)

# The activations and softmaxes live in ops/activation.py (a family of the op library), pad with
# the shape ops; softmax and log_softmax in nn.functional's signature (dim optional).
from ..ops.activation import (celu, celu_, elu, elu_, gelu, hardshrink, hardsigmoid, hardswish, hardtanh,
                              hardtanh_, leaky_relu, leaky_relu_, logsigmoid, mish, relu6, selu, selu_, silu,
                              softmin, softplus, softshrink, softsign, tanhshrink, threshold, threshold_)
from ..ops.activation import nn_log_softmax as log_softmax, nn_softmax as softmax
from ..ops.rearrange import pad


def relu(input, inplace=False):
    if not isinstance(input, _Tensor):
        raise _not_tensor('relu_' if inplace else 'relu', input)
    if inplace:
        return _inplace.inplace(input, _ew.relu)
    return _ew.relu(input)


def relu_(input):
    return relu(input, inplace=True)


def sigmoid(input):
    """The logistic function 1 / (1 + exp(-input)); as PyTorch's, without ``out=`` (torch.sigmoid has it)."""
    try:
        return _ew.sigmoid(input)
    except TypeError:  # (PyTorch's is Python, input.sigmoid(): its error for no tensor is the argument's own)
        if not isinstance(input, _Tensor):
            input.sigmoid
        raise


def tanh(input):
    """The hyperbolic tangent; as PyTorch's, without ``out=`` (torch.tanh has it)."""
    try:
        return _ew.tanh(input)
    except TypeError:  # (PyTorch's is Python, input.tanh(): its error for no tensor is the argument's own)
        if not isinstance(input, _Tensor):
            input.tanh
        raise


