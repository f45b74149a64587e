"""``functorch``, the package PyTorch ships beside ``torch``: its transforms, each a deprecated
alias of ``torch.func``'s (a FutureWarning names the replacement, as PyTorch's does), and the
module-to-function helpers ``make_functional``, ``make_functional_with_buffers`` and
``combine_state_for_ensemble``.

``python -m leafgrad`` and ``leafgrad.install_as_torch()`` answer ``import functorch`` with this
module, as ``import torch`` with leafgrad. Its sub-packages (``functorch.dim``,
``functorch.compile``, ``functorch.experimental``) and ``make_fx`` are not here.
"""
import copy
import warnings

from . import func as _func, ops
from .nn.modules.module import Module
from .nn.parameter import Parameter
from .nn.utils.stateless import _swap

__all__ = ['vmap', 'grad', 'grad_and_value', 'vjp', 'jvp', 'jacrev', 'jacfwd', 'hessian', 'make_functional',
           'make_functional_with_buffers', 'combine_state_for_ensemble', 'FunctionalModule',
           'FunctionalModuleWithBuffers']


def _warn_deprecated(api, new_api=None):
    new_api = new_api or f'torch.func.{api}'
    warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the integration, `functorch.{api}` "
                  'is deprecated as of PyTorch 2.0 and will be deleted in a future version of PyTorch >= 2.3. Please '
                  f'use `{new_api}` instead; see the PyTorch 2.0 release notes and/or the `torch.func` migration guide '
                  'for more details https://pytorch.org/docs/main/func.migrating.html', FutureWarning, stacklevel=3)


def vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None):
    _warn_deprecated('vmap', 'torch.vmap')
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func, argnums=0, has_aux=False):
    _warn_deprecated('grad')
    return _func.grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    _warn_deprecated('grad_and_value')
    return _func.grad_and_value(func, argnums, has_aux)


def vjp(func, *primals, has_aux=False):
    _warn_deprecated('vjp')
    return _func.vjp(func, *primals, has_aux=has_aux)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    _warn_deprecated('jvp')
    return _func.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    _warn_deprecated('jacrev')
    return _func.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size,
                        _preallocate_and_copy=_preallocate_and_copy)


def jacfwd(func, argnums=0, has_aux=False, *, randomness='error'):
    _warn_deprecated('jacfwd')
    return _func.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func, argnums=0):
    _warn_deprecated('hessian')
    return _func.hessian(func, argnums=argnums)


# ---- modules as functions of their parameters and buffers ------------------------------------

def _extract(model, named_members, make):
    """Replace each of model's members (parameters or buffers) by a meta tensor; returns the
    originals, their names (shared members once) and, per name, every name it is bound to."""
    unique = tuple(named_members(remove_duplicate=True))
    names_map, first_name = {}, {}
    for name, t in named_members(remove_duplicate=False):
        key = first_name.setdefault(id(t), name)
        names_map.setdefault(key, []).append(name)
    stand_ins = {}
    for name, t in named_members(remove_duplicate=False):
        if id(t) not in stand_ins:
            stand_ins[id(t)] = make(t.detach().to('meta'))
        _swap(model, name, stand_ins[id(t)])
    return tuple(t for _, t in unique), tuple(n for n, _ in unique), names_map


class FunctionalModule(Module):
    """The function ``make_functional`` returns: ``func(params, *args, **kwargs)`` runs the
    model with ``params`` in place of its parameters."""

    def __init__(self, stateless_model, param_names, names_map):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    def _state(self, tensors, names):
        return {alias: t for name, t in zip(names, tuple(tensors)) for alias in self.names_map[name]}

    def forward(self, params, *args, **kwargs):
        return _func.functional_call(self.stateless_model, self._state(params, self.param_names), args, kwargs)


class FunctionalModuleWithBuffers(FunctionalModule):
    """The function ``make_functional_with_buffers`` returns: ``func(params, buffers, *args,
    **kwargs)``."""

    def __init__(self, stateless_model, param_names, buffer_names, param_names_map, buffer_names_map):
        super().__init__(stateless_model, param_names, {**param_names_map, **buffer_names_map})
        self.buffer_names = buffer_names

    def forward(self, params, buffers, *args, **kwargs):
        state = self._state(tuple(params) + tuple(buffers), self.param_names + self.buffer_names)
        return _func.functional_call(self.stateless_model, state, args, kwargs)


def _stateless_copy(model, disable_autograd_tracking, with_buffers):
    model_copy = copy.deepcopy(model)
    params, param_names, param_map = _extract(model_copy, model_copy.named_parameters, Parameter)
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    if not with_buffers:
        return model_copy, params, param_names, param_map
    buffers, buffer_names, buffer_map = _extract(model_copy, model_copy.named_buffers, lambda t: t)
    return model_copy, params, param_names, param_map, buffers, buffer_names, buffer_map


def make_functional(model, disable_autograd_tracking=False):
    """``(func, params)``: a copy of ``model`` without parameters, as a function of them, and
    the parameters (``model``'s own, copied). A model with buffers needs
    ``make_functional_with_buffers``."""
    _warn_deprecated('make_functional', 'torch.func.functional_call')
    if list(model.buffers()):
        raise RuntimeError('make_functional(model): `model` has buffers. Please use '
                           'make_functional_with_buffers(model) instead.')
    model_copy, params, names, names_map = _stateless_copy(model, disable_autograd_tracking, False)
    return FunctionalModule(model_copy, names, names_map), params


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(func, params, buffers)``: as ``make_functional``, the buffers a second argument."""
    _warn_deprecated('make_functional_with_buffers', 'torch.func.functional_call')
    model_copy, params, names, pmap, buffers, bnames, bmap = _stateless_copy(model, disable_autograd_tracking, True)
    return FunctionalModuleWithBuffers(model_copy, names, bnames, pmap, bmap), params, buffers


def combine_state_for_ensemble(models):
    """``(func, params, buffers)`` of models of one class: each parameter and buffer stacked
    along a new first dimension, ``func`` that of the first model (for ``vmap``)."""
    _warn_deprecated('combine_state_for_ensemble', 'torch.func.stack_module_state')
    if not models:
        raise RuntimeError('combine_state_for_ensemble: Expected at least one model, got 0.')
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError('combine_state_for_ensemble: Expected all models to have the same training/eval mode.')
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError('combine_state_for_ensemble: Expected all models to be of the same class.')
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    params = tuple(ops.stack(ps).detach() for ps in zip(*params))
    buffers = tuple(ops.stack(bs).detach() for bs in zip(*buffers))
    return funcs[0], params, buffers
