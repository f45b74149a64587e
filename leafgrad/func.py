"""``leafgrad.func``: function transforms for pure functions (``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``linearize``, ``vmap``), and
``functional_call`` and ``stack_module_state``, which run a module with other tensors, and
``replace_all_batch_norm_modules_``, as ``torch.func`` offers them. The transforms are built on
the ops (``_transforms.py``, ``_vmap.py``); this namespace adds the three that are about ``nn``.
"""
import sys as _sys

from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from . import _vmap
from .ops.rearrange import stack

__all__ = ['grad', 'grad_and_value', 'vjp', 'jvp', 'jacrev', 'jacfwd', 'hessian', 'linearize', 'functional_call',
           'stack_module_state', 'vmap', 'replace_all_batch_norm_modules_']


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (a dict of
    name -> tensor, or a sequence of such dicts) in place of the module's own parameters and
    buffers, put back afterwards."""
    from .nn.utils.stateless import _functional_call  # (loaded when first used: func does not load nn)
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError('Expected all elements of parameter_and_buffer_dicts to be dictionaries')
        counts = {}
        for d in parameter_and_buffer_dicts:
            for key in d:
                counts[key] = counts.get(key, 0) + 1
        repeated = [key for key, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f'{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous')
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError('Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got '
                         f'{type(parameter_and_buffer_dicts)}')
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """(params, buffers): each parameter and buffer of ``models`` (modules of one class, in one
    mode) stacked along a new first dimension, as vmap over an ensemble takes them."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError('stack_module_state: Expected at least one model, got 0.')
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError('stack_module_state: Expected all models to have the same training/eval mode.')
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError('stack_module_state: Expected all models to be of the same class.')

    def stacked(tensors, name):
        if not (all(t.requires_grad for t in tensors) or not any(t.requires_grad for t in tensors)):
            raise RuntimeError(f'Expected {name} from each model to have the same .requires_grad')
        result = stack(tensors)
        return result.detach().requires_grad_() if tensors[0].requires_grad else result

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: stacked(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    buffers = {k: stacked(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None):
    """``vmap(f)(*inputs)``: f over a batch, the batch dimension carried through each op by its
    batching rule (``_vmap.py``)."""
    return _vmap.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def replace_all_batch_norm_modules_(root):
    """Every batch norm in ``root`` (itself included) made to keep no running statistics (its
    running_mean, running_var and num_batches_tracked None, track_running_stats False): under
    vmap each sample's statistics are its own. Returns ``root``."""
    # (no batch norm exists before nn's normalization module is loaded: func does not load nn)
    normalization = _sys.modules.get('leafgrad.nn.modules.normalization')
    for module in root.modules():
        if normalization is not None and isinstance(module, normalization._BatchNorm) and module.track_running_stats:
            module.running_mean = module.running_var = module.num_batches_tracked = None
            module.track_running_stats = False
    return root
