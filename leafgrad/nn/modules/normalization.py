"""Normalisation modules: BatchNorm1d/2d (with running statistics as buffers), LayerNorm, GroupNorm."""
import warnings

from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from ... import backend, creation


def _add_affine(module, shape, affine, bias, device, dtype):
    """Register ``weight`` (and ``bias``) of ``shape``, or None for both when not affine."""
    if affine:
        module.weight = Parameter(creation.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(creation.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter('bias', None)
    else:
        module.register_parameter('weight', None)
        module.register_parameter('bias', None)


def _reset_affine(module, affine):
    """A norm starts as the identity: weight ones, bias zeros."""
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)



class _BatchNorm(Module):
    _version = 2  # version 1 checkpoints (PyTorch < 0.4.1) have no num_batches_tracked

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _add_affine(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer('running_mean', creation.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer('running_var', creation.ones(num_features, device=device, dtype=dtype))
            self.register_buffer('num_batches_tracked', creation.tensor(0, dtype=backend.int64, device=device))
        else:
            self.register_buffer('running_mean', None)
            self.register_buffer('running_var', None)
            self.register_buffer('num_batches_tracked', None)
        self.reset_parameters()

    def _absent_in_version(self, version):
        """The state_dict keys a checkpoint of this ``version`` (None: unrecorded) may lack; the
        module keeps its own values for them."""
        if (version is None or version < 2) and self.num_batches_tracked is not None:
            return ('num_batches_tracked',)
        return ()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self, self.affine)

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None means a cumulative moving average over the batches seen
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None, self.weight, self.bias, bn_training,
                            factor, self.eps)

    def extra_repr(self):
        return (f'{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, '
                f'bias={self.bias is not None}, track_running_stats={self.track_running_stats}')


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f'expected 2D or 3D input (got {input.dim()}D input)')


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f'expected 4D input (got {input.dim()}D input)')


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f'expected 5D input (got {input.dim()}D input)')


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _add_affine(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f'{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, '
                f'bias={self.bias is not None}')


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f'num_channels ({num_channels}) must be divisible by num_groups ({num_groups})')
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _add_affine(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self, self.affine)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f'{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, ' \
               f'bias={self.bias is not None}'


class _InstanceNorm(_BatchNorm):
    """Normalises each sample's channels over their spatial extent; no affine parameters and no
    running statistics unless asked for (PyTorch's defaults)."""
    _batch_dims = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in (self._batch_dims - 1, self._batch_dims):
            raise ValueError(f'expected {self._batch_dims - 1}D or {self._batch_dims}D input '
                             f'(got {input.dim()}D input)')

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - (self._batch_dims - 1)
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f'({self.num_features}), but got: {input.shape[feature_dim]}.')
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          'warning by not passing in num_features, which is not used because affine=False',
                          stacklevel=2)
        unbatched = input.dim() == self._batch_dims - 1
        if unbatched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _batch_dims = 3


class InstanceNorm2d(_InstanceNorm):
    _batch_dims = 4


class InstanceNorm3d(_InstanceNorm):
    _batch_dims = 5


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims (eps None: the
    dtype's machine epsilon)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter('weight', None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f'{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}'


class LocalResponseNorm(Module):
    """Each element divided by (k + alpha * mean of the squares over `size` neighbouring channels)^beta."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f'{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}'


__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'LayerNorm', 'GroupNorm', 'InstanceNorm1d', 'InstanceNorm2d',
           'InstanceNorm3d', 'RMSNorm', 'LocalResponseNorm']
