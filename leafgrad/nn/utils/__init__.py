"""nn.utils: gradient clipping, flattening parameters to one vector, variable-length sequences (rnn),
parametrizations and weight/spectral normalisation, folding batch norms (fusion), skipping a
module's initialisation (skip_init), the convolutions' weights in a memory format."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grad_norm, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import fusion, parametrizations, parametrize, rnn, stateless
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ['clip_grad_norm_', 'clip_grad_norm', 'clip_grad_value_', 'get_total_norm', 'clip_grads_with_norm_',
           'parameters_to_vector', 'vector_to_parameters', 'weight_norm', 'remove_weight_norm', 'spectral_norm',
           'remove_spectral_norm', 'fuse_conv_bn_eval', 'fuse_conv_bn_weights', 'fuse_linear_bn_eval',
           'fuse_linear_bn_weights', 'skip_init', 'convert_conv2d_weight_memory_format',
           'convert_conv3d_weight_memory_format']
