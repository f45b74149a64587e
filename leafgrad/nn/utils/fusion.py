"""Folding an eval-mode batch norm into the convolution or linear layer before it: the layer's
weight scaled by ``bn.weight / sqrt(running_var + eps)`` per output channel, its bias moved by the
running mean and shifted by ``bn.bias``, so that one layer computes what the two did."""
import copy

from ...creation import ones_like, zeros_like
from ..parameter import Parameter

__all__ = ['fuse_conv_bn_eval', 'fuse_conv_bn_weights', 'fuse_linear_bn_eval', 'fuse_linear_bn_weights']


def _running_stats(bn):
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError('bn.running_mean and bn.running_var must not be None')
    return bn.running_mean, bn.running_var


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A new convolution computing ``bn(conv(x))`` of the two modules in eval mode (``transpose``:
    the convolution's weight holds output channels in its second dim)."""
    if conv.training or bn.training:
        raise AssertionError('Fusion only for eval!')
    fused = copy.deepcopy(conv)
    mean, var = _running_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, mean, var, bn.eps, bn.weight, bn.bias,
                                                    transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused convolution's (weight, bias) as Parameters, in the convolution's dtypes."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = (bn_rv + bn_eps).rsqrt()
    channels = [1, -1] if transpose else [-1, 1]
    scale = (bn_w * inv_std).reshape(channels + [1] * (conv_w.dim() - 2))
    weight = (conv_w * scale).to(dtype=weight_dtype)
    bias = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A new linear layer computing ``bn(linear(x))`` of the two modules in eval mode (the batch
    norm's features: the linear layer's outputs, or one)."""
    if linear.training or bn.training:
        raise AssertionError('Fusion only for eval!')
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError('To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got '
                             f'linear.out_features={linear.out_features} and bn.num_features={bn.num_features}')
    mean, var = _running_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, mean, var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused linear layer's (weight, bias) as Parameters, in the layer's dtypes."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    weight = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)
