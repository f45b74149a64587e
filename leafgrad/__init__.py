"""leafgrad: define-by-run reverse-mode autodiff on NumPy, with PyTorch's semantics.

``import leafgrad as torch`` runs PyTorch programs: the same printed output, the same
gradients, the same errors, on a small engine that anyone can read.
"""
import importlib as _importlib
import sys as _sys

from . import backend
from .backend import (bool_ as bool, complex64, complex128, device, dtype, float16, float32, float64,
                      get_default_dtype, int8, int16, int32, int64, result_type as _result_type,
                      set_default_dtype, uint8)
from .tensor import Size, Tensor
from ._memory_format import (channels_last, channels_last_3d, contiguous_format, memory_format,  # noqa: F401
                             preserve_format)
from ._memory_format import (_mkldnn, jagged, layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc,  # noqa: F401
                             sparse_csr, strided)
from . import autograd
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                                 no_grad, set_grad_enabled)
from . import ops
# the op library's functions (``from .ops import *`` without the deferred families', which
# would import them: __getattr__ below binds those on first use)
globals().update((_name, getattr(ops, _name)) for _name in ops.__all__ if _name not in ops.deferred_names)
from .ops._util import not_a_tensor as _not_a_tensor
from .creation import (Generator, arange, as_tensor, asarray, default_generator, empty, empty_like, empty_permuted,
                       eye, frombuffer, from_numpy, full, full_like, get_rng_state, initial_seed, linspace, logspace,
                       manual_seed, normal, multinomial, ones, ones_like, rand, rand_like, randint, randint_like, randn,
                       randn_like, randperm, scalar_tensor, seed, set_rng_state, tensor, zeros, zeros_like)
from .creation import range_ as range  # (torch.range; this module calls no builtin range)
from ._tensor_str import set_printoptions, get_printoptions
from . import sparse  # (installs Tensor.to_sparse)
from .sparse import sparse_coo_tensor, spmm
from . import torch_version  # noqa: F401  (torch.torch_version: TorchVersion)
from math import e, inf, nan, pi

half = float16
float = float32
double = float64
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128
newaxis = None
__version__ = torch_version.__version__


def is_tensor(obj, /):
    return isinstance(obj, Tensor)


def _check_argument(fname, name, position, value, kind):
    """PyTorch's TypeError for an argument that is not a Tensor (ops' not_a_tensor) or a dtype."""
    if kind is Tensor and not isinstance(value, Tensor):
        raise _not_a_tensor(fname, name, value, position)
    if kind is dtype and not isinstance(value, dtype):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be leafgrad.dtype, not "
                        f'{type(value).__name__}')


def numel(input):
    _check_argument('numel', 'input', 1, input, Tensor)
    return input.numel()


def result_type(tensor1, tensor2):
    return _result_type(tensor1, tensor2)


def is_floating_point(input):
    _check_argument('is_floating_point', 'input', 1, input, Tensor)
    return input.is_floating_point()


def is_nonzero(input):
    """Whether the one element of ``input`` is not zero (PyTorch's errors for more or fewer)."""
    _check_argument('is_nonzero', 'input', 1, input, Tensor)
    return not not input  # (Python's bool: this module's `bool` is the dtype)


def is_same_size(input, other):
    """Whether ``input`` and ``other`` have the same shape."""
    _check_argument('is_same_size', 'input', 1, input, Tensor)
    _check_argument('is_same_size', 'other', 2, other, Tensor)
    return input.is_same_size(other)


def is_signed(input):
    _check_argument('is_signed', 'input', 1, input, Tensor)
    return input.is_signed()


def is_inference(input):
    _check_argument('is_inference', 'input', 1, input, Tensor)
    return input.is_inference()


def detach(input):
    """``input.detach()``: the same data, cut from the graph."""
    _check_argument('detach', 'input', 1, input, Tensor)
    return input.detach()


def detach_(input):
    """``input.detach_()``: ``input`` itself, cut from the graph."""
    _check_argument('detach_', 'input', 1, input, Tensor)
    return input.detach_()


def get_device(input):
    """``input.get_device()``: -1, the CPU's index."""
    _check_argument('get_device', 'input', 1, input, Tensor)
    return input.get_device()


def is_neg(input):
    _check_argument('is_neg', 'input', 1, input, Tensor)
    return input.is_neg()


def resolve_neg(input):
    _check_argument('resolve_neg', 'input', 1, input, Tensor)
    return input.resolve_neg()


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` convert to without loss (PyTorch's lattice)."""
    _check_argument('promote_types', 'type1', 1, type1, dtype)
    _check_argument('promote_types', 'type2', 2, type2, dtype)
    return backend.promote_types(type1, type2)


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` -> ``to`` in an op's output: not complex to
    real, floating to integral, nor anything but bool to bool."""
    _check_argument('can_cast', 'from_', 1, from_, dtype)
    _check_argument('can_cast', 'to', 2, to, dtype)
    return not (from_.is_complex and not to.is_complex or from_.is_floating_point and not to.is_floating_point
                and not to.is_complex or from_ is not bool and to is bool)


def typename(obj, /):
    """The type of ``obj`` as PyTorch names it: a tensor's type() ('leafgrad.FloatTensor'), else
    the module and qualified name of the object (or of its class)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module, qualname = getattr(obj, '__module__', '') or '', getattr(obj, '__qualname__', None)
    if qualname is None:
        qualname = getattr(obj, '__name__', None)
    if qualname is None:
        module, qualname = obj.__class__.__module__ or '', obj.__class__.__qualname__
    return qualname if module in ('', 'builtins') else f'{module}.{qualname}'


def _tensor_explain(self, params=None):
    """A few plain sentences on this tensor's gradient: see ``leafgrad.explain``."""
    from .explain import explain  # (loaded when first used)
    return explain(self, params)


Tensor.explain = _tensor_explain  # leafgrad.explain loads only when first used


def _tensor_stft(self, *args, **kwargs):
    from ._spectral import stft  # (loaded when first used)
    return stft(self, *args, **kwargs)


def _tensor_istft(self, *args, **kwargs):
    from ._spectral import istft  # (loaded when first used)
    return istft(self, *args, **kwargs)


Tensor.stft, Tensor.istft = _tensor_stft, _tensor_istft  # (leafgrad._spectral loads when first used)


def _tensor_dlpack(self, *, stream=-1, max_version=None, dl_device=None, copy=None):
    from .utils.dlpack import tensor_dlpack  # (loaded when first used)
    return tensor_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def _tensor_dlpack_device(self):
    from .utils.dlpack import tensor_dlpack_device  # (loaded when first used)
    return tensor_dlpack_device(self)


Tensor.__dlpack__, Tensor.__dlpack_device__ = _tensor_dlpack, _tensor_dlpack_device


def resize(self, *sizes):
    """A view of ``self``'s elements in the shape ``sizes`` (deprecated by PyTorch, with its warning)."""
    import warnings
    from .autograd._functions import Resize  # (loaded when first used)
    warnings.warn('non-inplace resize is deprecated', stacklevel=2)
    return Resize.apply(self, sizes)


def resize_as(self, tensor):
    """``self.resize(*tensor.size())`` (deprecated by PyTorch, with its warning)."""
    import warnings
    from .autograd._functions import Resize  # (loaded when first used)
    warnings.warn('non-inplace resize_as is deprecated', stacklevel=2)
    return Resize.apply(self, tensor.size())


Tensor.resize, Tensor.resize_as = resize, resize_as
del resize, resize_as


def _tensor_prelu(self, *args, **kwargs):
    """prelu(weight) -> Tensor: ``nn.functional.prelu(self, weight)``."""
    from .nn.functional import prelu
    if len(args) + len(kwargs) != 1 or kwargs and 'weight' not in kwargs:  # (PyTorch's parser's words)
        from ._arg_parser import missing_message
        if len(args) > 1:
            raise TypeError(f'prelu() takes 1 positional argument but {len(args)} were given')
        if not args and 'weight' not in kwargs:
            raise TypeError(missing_message('prelu', ['weight']))
        raise TypeError(f"prelu() got an unexpected keyword argument '{next(k for k in kwargs if k != 'weight')}'")
    weight = args[0] if args else kwargs['weight']
    if not isinstance(weight, Tensor):
        raise _not_a_tensor('prelu', 'weight', weight, 1)
    return prelu(self, weight)


_tensor_prelu.__name__ = _tensor_prelu.__qualname__ = 'prelu'
Tensor.prelu = _tensor_prelu
_SPECTRAL = ('stft', 'istft', 'hann_window', 'hamming_window', 'blackman_window', 'bartlett_window', 'kaiser_window')


_SETTINGS = ('get_num_threads', 'set_num_threads', 'get_num_interop_threads', 'set_num_interop_threads',
             'set_default_device', 'get_default_device', 'set_float32_matmul_precision',
             'get_float32_matmul_precision', 'use_deterministic_algorithms', 'are_deterministic_algorithms_enabled',
             'is_deterministic_algorithms_warn_only_enabled', 'set_deterministic_debug_mode',
             'get_deterministic_debug_mode', 'set_flush_denormal', 'set_warn_always',
             'is_warn_always_enabled')  # in _settings.py, loaded on first use
_LEGACY_TYPES = ('FloatTensor', 'DoubleTensor', 'HalfTensor', 'LongTensor', 'IntTensor', 'ShortTensor', 'CharTensor',
                 'ByteTensor', 'BoolTensor', 'set_default_tensor_type')  # in _tensor_types.py, likewise

# torch.autocast and autocast's state functions (leafgrad/amp/autocast_mode.py, loaded on first use)
_AUTOCAST_NAMES = ('autocast', 'is_autocast_enabled', 'set_autocast_enabled', 'get_autocast_dtype',
                   'set_autocast_dtype', 'is_autocast_cache_enabled', 'set_autocast_cache_enabled',
                   'clear_autocast_cache', 'autocast_increment_nesting', 'autocast_decrement_nesting',
                   'is_autocast_cpu_enabled', 'get_autocast_cpu_dtype', 'get_autocast_gpu_dtype')

# torch.sym_int, sym_max ... (leafgrad/_symbolic.py, loaded on first use)
_SYMBOLIC = ('sym_float', 'sym_int', 'sym_max', 'sym_min', 'sym_not', 'sym_ite', 'sym_sum', 'sym_sqrt', 'sym_fresh_size')

# torch.<name> forms of nn.functional's ops (leafgrad/_nn_forms.py, loaded on first use)
_NN_FORMS = ('conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'avg_pool1d',
             'adaptive_avg_pool1d', 'cosine_similarity', 'pairwise_distance', 'pixel_shuffle', 'pixel_unshuffle',
             'prelu', 'bilinear', 'channel_shuffle', 'dropout', 'alpha_dropout', 'feature_alpha_dropout', 'embedding',
             'layer_norm', 'batch_norm', 'group_norm', 'instance_norm', 'rms_norm', 'max_pool1d', 'max_pool2d',
             'max_pool3d', 'adaptive_max_pool1d', 'constant_pad_nd', 'kl_div', 'binary_cross_entropy_with_logits',
             'hinge_embedding_loss', 'margin_ranking_loss', 'cosine_embedding_loss', 'triplet_margin_loss',
             'poisson_nll_loss', 'rrelu', 'rrelu_', 'native_channel_shuffle', 'rnn_tanh_cell', 'rnn_relu_cell',
             'lstm_cell', 'gru_cell', 'dropout_', 'alpha_dropout_', 'feature_dropout', 'feature_dropout_',
             'feature_alpha_dropout_', 'max_pool1d_with_indices')


def get_device_module(device=None):
    """``leafgrad.cpu`` or ``leafgrad.cuda``: the module of ``device`` (a device or its string;
    None: the current accelerator's, else the CPU's)."""
    if isinstance(device, backend.device):
        name = device.type
    elif isinstance(device, str):
        name = backend.device(device).type
    elif device is None:
        from .accelerator import current_accelerator  # (loaded when first used)
        accelerator = current_accelerator()
        name = 'cpu' if accelerator is None else accelerator.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect leafgrad.device, str, or None")
    module = getattr(_sys.modules[__name__], name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'leafgrad.{name}'.")
    return module


def install_as_torch():
    """Make every later ``import torch`` (``torch.nn``, ``torch.utils.data`` ...) in this process
    resolve to leafgrad's modules, as ``python -m leafgrad script.py`` does for a whole program.

    For a notebook or a program that cannot be started through ``python -m leafgrad``: call it
    before the first ``import torch``. Calling it again does nothing more. Raises RuntimeError if
    PyTorch itself is already imported.

    >>> import leafgrad
    >>> leafgrad.install_as_torch()
    >>> import torch.nn.functional as F
    >>> F is leafgrad.nn.functional
    True
    """
    from ._torch_alias import install  # (loaded when first used: python -m leafgrad's finder)
    install()


def __getattr__(name):
    # Any subpackage or module of leafgrad loads on first use (leafgrad.nn, leafgrad.linalg ...),
    # so that `import leafgrad` stays fast and a new one needs no entry here.
    if name in ops.deferred_names:  # a function of an op family imported on first use (ops/__init__.py)
        ops.load(ops.deferred_names[name])
        return globals()[name]
    if name == 'compile':
        from ._compile import compile  # (loaded when first used, as every entry below)
        return compile
    if name == 'vmap':  # torch.vmap is torch.func.vmap
        from .func import vmap  # (loaded when first used)
        return vmap
    if name in ('svd_lowrank', 'pca_lowrank'):
        from . import _lowrank  # (loaded when first used)
        return getattr(_lowrank, name)
    if name in ('TypedStorage', 'UntypedStorage'):
        from . import _storage  # (loaded when first used)
        return getattr(_storage, name)
    if name == 'from_dlpack':
        from .utils.dlpack import from_dlpack  # (loaded when first used)
        return from_dlpack
    if name in ('save', 'load'):
        from . import serialization  # (loaded when first used)
        return getattr(serialization, name)
    if name in ('finfo', 'iinfo'):
        from . import _type_info  # (loaded when first used)
        return getattr(_type_info, name)
    if name in _SETTINGS:
        from . import _settings  # (loaded when first used)
        return getattr(_settings, name)
    if name in _SPECTRAL:
        from . import _spectral  # (loaded when first used)
        return getattr(_spectral, name)
    if name in _LEGACY_TYPES:
        from . import _tensor_types  # (loaded when first used)
        return getattr(_tensor_types, name)
    if name == 'bfloat16':  # made on first use: ml_dtypes takes ~0.6 s to import
        return backend._make_bfloat16()
    if name in _NN_FORMS:
        from . import _nn_forms  # (loaded when first used: it loads nn.functional)
        return getattr(_nn_forms.F, name) if name in _nn_forms.SAME else getattr(_nn_forms, name)
    if name == '__all__':  # (``from leafgrad import *`` reads it first: every op is bound for it to find)
        ops.load()
    if name in _SYMBOLIC:
        from . import _symbolic  # (loaded when first used)
        return getattr(_symbolic, name)
    if name == 'GradScaler':  # torch.GradScaler is torch.amp.GradScaler
        from .amp import GradScaler  # (loaded when first used)
        return GradScaler
    if name == 'is_storage':
        from ._storage import is_storage  # (loaded when first used)
        return is_storage
    if name in _AUTOCAST_NAMES:
        from .amp import autocast_mode  # (loaded when first used)
        return getattr(autocast_mode, name)
    if not name.startswith('__'):
        try:
            return _importlib.import_module(f'{__name__}.{name}')
        except ModuleNotFoundError as e:
            if e.name != f'{__name__}.{name}':
                raise  # an existing submodule failed to import something: that is its error
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) - {'__dir__'} | set(ops.deferred_names))
