"""The name a pickle gives a class or function: ``module.qualname``, as PyTorch names it.

A checkpoint names every class and function it holds by reference (``__main__.RNNModel``,
``torch.nn.modules.rnn.LSTM``), and ``add_safe_globals`` keys its allowlist by the same names, so
that a file, the error refusing one of its globals and the allowlist that admits it all say the
same thing. leafgrad's own objects are named as PyTorch names the same object: ``leafgrad.`` reads
``torch.``, and where leafgrad keeps an object in another module than PyTorch does (BatchNorm in
``normalization``, AdamW in ``adam`` ...), the table below gives PyTorch's module. Under
``python -m leafgrad`` those names are leafgrad's objects again (``torch.nn.modules.rnn.LSTM`` is
leafgrad's LSTM), and PyTorch reads the classes of a file leafgrad wrote as its own.
"""
import pickle
import sys

# leafgrad's module.qualname -> PyTorch's, where they differ by more than the package name
# (tests/test_checkpoint_objects.py checks every entry, and every public class and function of
# leafgrad.nn, nn.functional, optim and lr_scheduler, against torch)
_TORCH_NAMES = {
    'leafgrad.nn.modules.attention.MultiheadAttention': 'torch.nn.modules.activation.MultiheadAttention',
    **{f'leafgrad.nn.modules.normalization.{c}{d}': f'torch.nn.modules.{m}.{c}{d}'
       for c, m in (('BatchNorm', 'batchnorm'), ('InstanceNorm', 'instancenorm')) for d in ('1d', '2d', '3d')},
    'leafgrad.nn.modules.sync_batchnorm.SyncBatchNorm': 'torch.nn.modules.batchnorm.SyncBatchNorm',
    'leafgrad.nn.modules.upsampling.Fold': 'torch.nn.modules.fold.Fold',
    'leafgrad.nn.modules.pixelshuffle.ChannelShuffle': 'torch.nn.modules.channelshuffle.ChannelShuffle',
    'leafgrad.nn.modules.lazy.LazyLinear': 'torch.nn.modules.linear.LazyLinear',
    **{f'leafgrad.nn.modules.lazy.Lazy{c}{d}': f'torch.nn.modules.{m}.Lazy{c}{d}'
       for c, m in (('Conv', 'conv'), ('ConvTranspose', 'conv'), ('BatchNorm', 'batchnorm'),
                    ('InstanceNorm', 'instancenorm')) for d in ('1d', '2d', '3d')},
    'leafgrad.optim.rprop.ASGD': 'torch.optim.asgd.ASGD',
    'leafgrad.optim.adafactor.Adafactor': 'torch.optim.Adafactor',
    'leafgrad.optim.muon.Muon': 'torch.optim.Muon',
    'leafgrad.ops.linalg_eig.eig': 'torch._linalg_utils.eig',
    **{f'leafgrad.ops.linalg_eig.{f}': f'torch._linalg_utils.{f}' for f in ('lstsq', 'solve', 'matrix_rank')},
    'leafgrad.ops.linalg_eig.symeig': 'torch._linalg_utils._symeig',
    'leafgrad.nn.modules.upsampling.Unfold': 'torch.nn.modules.fold.Unfold',
    **{f'leafgrad.optim.adam.{c}': f'torch.optim.{c.lower()}.{c}' for c in ('AdamW', 'Adamax', 'NAdam', 'RAdam')},
    **{f'leafgrad.optim.rmsprop.{c}': f'torch.optim.{c.lower()}.{c}' for c in ('Adadelta', 'Adagrad')},
    'leafgrad.generator.Generator': 'torch._C.Generator',
    **{f'leafgrad._linalg_ldl.linalg_ldl_{f}': f'torch._C._linalg.linalg_ldl_{f}' for f in ('factor', 'factor_ex', 'solve')},
    **{f'leafgrad.generator.{f}': f'torch.random.{f}'
       for f in ('get_rng_state', 'initial_seed', 'manual_seed', 'seed', 'set_rng_state')},
    'leafgrad.backend.set_default_dtype': 'torch.set_default_dtype',
    **{f'leafgrad._symbolic.{f}': f'torch.{f}' for f in ('sym_float', 'sym_int', 'sym_max', 'sym_min', 'sym_not',
                                                         'sym_ite', 'sym_sum', 'sym_sqrt', 'sym_fresh_size')},
    'leafgrad._storage.is_storage': 'torch.is_storage',
    'leafgrad.autograd.anomaly.detect_anomaly': 'torch.autograd.anomaly_mode.detect_anomaly',
    'leafgrad.autograd.anomaly.set_detect_anomaly': 'torch.autograd.anomaly_mode.set_detect_anomaly',
    'leafgrad.nn.utils.clip_grad.clip_grads_with_norm_': 'torch.nn.utils.clip_grad._clip_grads_with_norm_',
    'leafgrad.nn.utils.clip_grad.get_total_norm': 'torch.nn.utils.clip_grad._get_total_norm',
    'leafgrad._memory_format.memory_format': 'torch.memory_format',
    'leafgrad._memory_format.layout': 'torch.layout',
    'leafgrad.utils.data._collate.default_collate': 'torch.utils.data._utils.collate.default_collate',
    'leafgrad.utils.data._collate.default_convert': 'torch.utils.data._utils.collate.default_convert',
    'leafgrad.utils.data._worker_info.get_worker_info': 'torch.utils.data._utils.worker.get_worker_info',
    # nn.functional: leafgrad defines these in private modules, PyTorch in torch.nn.functional
    **{f'leafgrad.nn._functional.{m}.{f}': f'torch.nn.functional.{f}' for m, fs in (
        ('basic', 'alpha_dropout dropout dropout1d dropout2d dropout3d embedding embedding_bag feature_alpha_dropout '
                  'gumbel_softmax normalize'),
        ('extra', 'fold glu rrelu unfold'), ('grid', 'affine_grid grid_sample'), ('attention', 'multi_head_attention_forward'),
        ('ctc', 'ctc_loss'),
        ('fractional', 'fractional_max_pool2d fractional_max_pool2d_with_indices fractional_max_pool3d '
                       'fractional_max_pool3d_with_indices'),
        ('loss', 'binary_cross_entropy binary_cross_entropy_with_logits cosine_embedding_loss cross_entropy '
                 'gaussian_nll_loss hinge_embedding_loss huber_loss kl_div l1_loss margin_ranking_loss mse_loss '
                 'multi_margin_loss multilabel_margin_loss multilabel_soft_margin_loss nll_loss poisson_nll_loss '
                 'smooth_l1_loss soft_margin_loss triplet_margin_loss triplet_margin_with_distance_loss'),
        ('norm', 'batch_norm group_norm instance_norm layer_norm local_response_norm rms_norm'),
        ('pooling', 'adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d_with_indices '
                    'adaptive_max_pool2d_with_indices lp_pool1d lp_pool2d max_pool1d_with_indices '
                    'max_pool2d_with_indices max_pool3d_with_indices max_unpool1d max_unpool2d '
                    'adaptive_max_pool3d_with_indices lp_pool3d max_unpool3d'),
        ('sampling', 'interpolate upsample upsample_bilinear upsample_nearest')) for f in fs.split()},
    **{f'leafgrad.ops.activation.{f}': f'torch.nn.functional.{f}'
       for f in 'celu elu hardsigmoid hardswish hardtanh leaky_relu mish relu6 selu silu softmin softsign tanhshrink'.split()},
    'leafgrad.ops.activation.threshold': 'torch.nn.functional._threshold',
    'leafgrad.ops.elementwise.sigmoid': 'torch.nn.functional.sigmoid',
    'leafgrad.ops.elementwise.tanh': 'torch.nn.functional.tanh',
    'leafgrad.ops.rearrange.pad': 'torch.nn.functional.pad',
    **{f'leafgrad.ops.{m}.{f}': f'torch.functional.{f}' for m, fs in (
        ('linalg', 'einsum tensordot'), ('linalg_extra', 'cdist chain_matmul'),
        ('rearrange', 'atleast_1d atleast_2d atleast_3d meshgrid'), ('reduction', 'norm'),
        ('shape', 'split broadcast_shapes broadcast_tensors'), ('linalg_products', 'block_diag cartesian_prod'),
        ('binning', 'unravel_index'))
       for f in fs.split()},
}


def torch_name(module, qualname):
    """PyTorch's ``module.qualname`` for an object that leafgrad keeps at ``module.qualname``."""
    full = f'{module}.{qualname}'
    if module == 'leafgrad' or module.startswith('leafgrad.'):
        return _TORCH_NAMES.get(full) or 'torch' + full[len('leafgrad'):]
    return full


def allowlist_name(obj):
    """The name ``add_safe_globals`` files ``obj`` under (PyTorch: ``f'{obj.__module__}.{obj.__qualname__}'``)."""
    return torch_name(obj.__module__, obj.__qualname__)


def global_name(obj, name=None):
    """``(module, qualname)`` under which a pickle refers to the class or function ``obj``, checked
    as pickle checks it (the object must be found again under that name); PyTorch's names for
    leafgrad's objects."""
    if name is None:
        name = getattr(obj, '__qualname__', None) or obj.__name__
    module = _which_module(obj, name)
    if '<locals>' in name.split('.'):
        raise AttributeError(f"Can't pickle local object {name!r}")
    try:
        __import__(module, level=0)
        found = sys.modules[module]
        for part in name.split('.'):
            found = getattr(found, part)
    except (ImportError, KeyError, AttributeError):
        raise pickle.PicklingError(f"Can't pickle {obj!r}: attribute lookup {name} on {module} failed") from None
    if found is not obj:
        raise pickle.PicklingError(f"Can't pickle {obj!r}: it's not the same object as {module}.{name}")
    full = torch_name(module, name)
    if full == f'{module}.{name}':
        return module, name
    torch_module, _, torch_qualname = full.rpartition('.')
    return torch_module, torch_qualname


def _which_module(obj, name):
    module = getattr(obj, '__module__', None)
    if module is not None:
        return module
    for module_name, module in sys.modules.copy().items():  # (pickle's whichmodule)
        if module_name == '__main__' or module_name == '__mp_main__' or module is None:
            continue
        try:
            found = module
            for part in name.split('.'):
                found = getattr(found, part)
        except AttributeError:
            continue
        if found is obj:
            return module_name
    return '__main__'
