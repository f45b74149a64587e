"""Lazy modules: the input size is read from the first input. Until then the parameters are
UninitializedParameters (no data, no random draws); the first forward materialises them with the
shapes it infers, runs reset_parameters (drawing as the regular module would at construction),
and the module becomes its regular class (LazyLinear -> Linear)."""
import itertools

from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from ... import backend, creation
from ...autograd.grad_mode import no_grad
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                            _BatchNorm)


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f'initialize_parameters is not implemented for {self.__class__.__name__}')

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f'module {self._get_name()} has not been fully initialized')
        module._initialize_hook.remove()
        delattr(module, '_initialize_hook')
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           'forward pass to correctly initialize the modules')


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    _num_spatial_dims = None

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError('in_channels must be divisible by groups')
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._num_spatial_dims + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f'Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to '
                               f'{self.__class__.__name__}, but got input of size: {input.shape}')
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


def _lazy_conv(name, base, n, transposed):
    # the regular constructor with in_channels = out_channels = 0 and no bias, then the
    # uninitialised parameters (PyTorch's signatures: a transposed convolution takes
    # output_padding and orders its options otherwise)
    def lazy_init(self, out_channels, kernel_size, stride, padding, bias, device, dtype, options):
        base.__init__(self, 0, 0, kernel_size, stride, padding, bias=False, device=device, dtype=dtype, **options)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode='zeros', device=None, dtype=None):
            lazy_init(self, out_channels, kernel_size, stride, padding, bias, device, dtype,
                      dict(output_padding=output_padding, groups=groups, dilation=dilation, padding_mode=padding_mode))
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode='zeros', device=None, dtype=None):
            lazy_init(self, out_channels, kernel_size, stride, padding, bias, device, dtype,
                      dict(dilation=dilation, groups=groups, padding_mode=padding_mode))
    cls = type(name, (_LazyConvXdMixin, base), {'__init__': __init__, 'cls_to_become': base,
                                                '_num_spatial_dims': n, '__module__': __name__})
    return cls


LazyConv1d = _lazy_conv('LazyConv1d', Conv1d, 1, False)
LazyConv2d = _lazy_conv('LazyConv2d', Conv2d, 2, False)
LazyConv3d = _lazy_conv('LazyConv3d', Conv3d, 3, False)
LazyConvTranspose1d = _lazy_conv('LazyConvTranspose1d', ConvTranspose1d, 1, True)
LazyConvTranspose2d = _lazy_conv('LazyConvTranspose2d', ConvTranspose2d, 2, True)
LazyConvTranspose3d = _lazy_conv('LazyConvTranspose3d', ConvTranspose3d, 3, True)


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        _BatchNorm.__init__(self, 0, eps, momentum, False, False, device, dtype, bias=False)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = creation.tensor(0, dtype=backend.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(name, base):
    return type(name, (_LazyNormBase, base), {'cls_to_become': base, '__module__': __name__})


LazyBatchNorm1d = _lazy_norm('LazyBatchNorm1d', BatchNorm1d)
LazyBatchNorm2d = _lazy_norm('LazyBatchNorm2d', BatchNorm2d)
LazyBatchNorm3d = _lazy_norm('LazyBatchNorm3d', BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm('LazyInstanceNorm1d', InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm('LazyInstanceNorm2d', InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm('LazyInstanceNorm3d', InstanceNorm3d)

__all__ = ['LazyModuleMixin', 'LazyLinear', 'LazyConv1d', 'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d',
           'LazyConvTranspose2d', 'LazyConvTranspose3d', 'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d',
           'LazyInstanceNorm1d', 'LazyInstanceNorm2d', 'LazyInstanceNorm3d']
