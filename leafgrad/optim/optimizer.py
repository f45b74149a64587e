"""Optimizer: parameter groups, per-parameter state, in-place updates under no_grad.

Updates run on the parameters' arrays (``p._data``) with vectorised NumPy, one array operation
per step and parameter, following PyTorch's single-tensor algorithms operation by operation so
that trajectories agree. State tensors are leafgrad tensors with PyTorch's keys (``step`` is a
float32 0-d tensor, as in PyTorch), so ``state_dict`` has PyTorch's layout.

``differentiable=True`` (meta-learning: a step through which gradients flow back to the
gradients, the state and, for non-leaf parameters, what made them) runs an optimizer's
``_update_differentiable`` instead: the same algorithm written in tensor operations, recorded
by autograd with grad mode on, as PyTorch runs it. An optimizer without one refuses the flag.
"""
from __future__ import annotations  # (annotations stay strings: nothing to evaluate at import or per call)

import copy
import warnings
from collections import defaultdict
from typing import Any, Callable, Iterable

import numpy as np

from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor import Tensor
from ..ops._util import broadcast_error
from ..autograd.graph import add_hook


class _RequiredParameter:
    def __repr__(self):
        return '<required parameter>'


required = _RequiredParameter()


def _t(array):
    return Tensor._wrap(array)


def _step_tensor():
    return _t(np.zeros((), dtype=np.float32))


def _increment(state):
    """state['step'] += 1 (a float32 tensor, as in PyTorch); returns the step as a float."""
    step = state['step']
    step._data = np.asarray(step._data + np.float32(1), dtype=np.float32)
    return float(step._data)


def _scaled_square(g, c):
    """``c * g * g``, multiplied in that order (as PyTorch's addcmul rounds it), in one fresh
    buffer instead of two."""
    out = g * c
    out *= g
    return out


def _lerp_(a, b, weight):
    """a.lerp_(b, weight) with PyTorch's formula (so rounding agrees)."""
    if weight < 0.5:
        a += weight * (b - a)
    else:
        a[...] = b - (b - a) * (1 - weight)


class Optimizer:
    """The base class of the optimizers, PyTorch's ``torch.optim.Optimizer``.

    An optimizer holds *parameter groups* (``param_groups``: dicts with ``'params'``, a list of
    leaf tensors, and the group's options, such as ``'lr'``) and per-parameter *state*
    (``state``: momentum buffers, moment estimates, step counts, keyed by the parameter).
    ``step()`` updates every parameter that has a ``.grad`` in place, without recording;
    ``zero_grad()`` clears the gradients; ``state_dict()``/``load_state_dict()`` save and restore
    groups and state in PyTorch's layout. A subclass gives ``__init__`` its defaults and the
    update of one parameter.

    Parameters
    ----------
    params
        An iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter groups,
        each with ``'params'`` and options overriding ``defaults``).
    defaults
        The options of a group that does not set them.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        if defaults.get('differentiable') and type(self)._update_differentiable is Optimizer._update_differentiable:
            raise NotImplementedError(f"leafgrad's {type(self).__name__} has no differentiable step "
                                      '(differentiable=True): its update runs on arrays, outside autograd; '
                                      'SGD, Adam and AdamW have one')
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError('params argument given to the optimizer should be an iterable of Tensors or dicts, '
                            f'but got {_typename(params)}')
        groups = list(params)
        if len(groups) == 0:
            raise ValueError('optimizer got an empty parameter list')
        if not isinstance(groups[0], dict):
            groups = [{'params': groups}]
        for g in groups:
            self.add_param_group(g)
        if defaults.get('fused'):  # (after the parameters, as PyTorch's SGD, Adam, AdamW and Adagrad check)
            if defaults.get('differentiable'):
                raise RuntimeError('`fused` does not support `differentiable`')
            if defaults.get('foreach'):
                raise RuntimeError('`fused` and `foreach` cannot be `True` together.')

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f'param_group must be a dict, but got {type(param_group).__name__}')
        params = param_group['params']
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError('optimizer parameters need to be organized in ordered collections, but the ordering '
                            'of tensors in sets will change between runs. Please use a list instead.')
        params = list(params)
        if params and isinstance(params[0], tuple):  # named parameters
            param_group['param_names'] = [n for n, _ in params]
            params = [p for _, p in params]
        param_group['params'] = params
        if len({id(p) for p in params}) != len(params):
            warnings.warn('optimizer contains a parameter group with duplicate parameters; in future, this will cause '
                          'an error; see github.com/pytorch/pytorch/issues/40967 for more information', stacklevel=3)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError('optimizer can only optimize Tensors, but one of the params is ' + _typename(p))
            if not (self.defaults.get('differentiable') or p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            param_group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g['params']}
        if any(id(p) in seen for p in params):
            raise ValueError('some parameters appear in more than one parameter group')
        self.param_groups.append(param_group)
        self._init_group_state(param_group)

    def _init_group_state(self, group):
        """Eager state (Adagrad's accumulators); most optimizers create state on the first step."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group['params']:
                if p._grad is not None:
                    if set_to_none:
                        p._grad = None
                    else:
                        if p._grad._grad_fn is not None:
                            p._grad.detach_()
                        else:
                            p._grad.requires_grad_(False)
                        p._grad.zero_()

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> Any:
        """hook(optimizer, args, kwargs) before each step; it may return new (args, kwargs)."""
        return add_hook(self.__dict__.setdefault('_step_pre_hooks', {}), hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> Any:
        """hook(optimizer, args, kwargs) after each step."""
        return add_hook(self.__dict__.setdefault('_step_post_hooks', {}), hook)

    def step(self, *args: Any, **kwargs: Any) -> Any:
        """One update of every parameter that has a ``.grad``: ``step(closure=None)``, where
        ``closure`` re-evaluates the model and returns the loss (which ``step`` returns); the
        step pre- and post-hooks run around it."""
        pre, post = self.__dict__.get('_step_pre_hooks'), self.__dict__.get('_step_post_hooks')
        if pre:
            for hook in tuple(pre.values()):
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f'{hook} must return None or a tuple of (new_args, new_kwargs), but '
                                           f'got {res}.')
                    args, kwargs = res
        out = self._step(*args, **kwargs)
        if post:
            for hook in tuple(post.values()):
                hook(self, args, kwargs)
        return out

    def _closure_loss(self, closure):
        """A step's start: the loss ``closure`` returns (evaluated with grad mode on), or None;
        the optimizer noted as stepped (lr schedulers warn when they step before it)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._opt_called = True
        return loss

    def _step(self, closure=None):
        loss = self._closure_loss(closure)
        if self.defaults.get('differentiable'):
            return self._step_differentiable(loss)
        with no_grad():
            for group in self.param_groups:
                if isinstance(group['lr'], Tensor):  # (a tensor lr, as PyTorch takes: the arrays get its number)
                    group = dict(group, lr=group['lr'].item())
                for p in group['params']:
                    if p._grad is None:
                        continue
                    grad = p._grad
                    grad = grad._data if type(grad) is Tensor or not grad.is_sparse else self._sparse_grad(grad, group)
                    if group.get('maximize', False):
                        grad = -grad
                    # state is stored only once an update writes some (SGD without momentum keeps none)
                    state = self.state[p] if p in self.state else {}
                    for value in state.values():  # (a 0-d entry is a counter: step, NAdam's mu_product)
                        if type(value) is Tensor and value._data.shape != grad.shape and value._data.ndim:
                            raise _state_shape_error(value, grad)
                    if grad.dtype.kind == 'c':
                        _update_as_real_pairs(self, p, grad, state, group)
                    else:
                        self._update(p, grad, state, group)
                    if state and p not in self.state:
                        self.state[p] = state
                    p._bump_version()
        return loss

    def _update(self, p, grad, state, group):
        """Update p._data in place from its gradient array (maximize already applied)."""
        raise NotImplementedError

    def _sparse_grad(self, grad, group):
        """The array of a sparse ``.grad`` (``nn.Embedding(sparse=True)``'s) for an optimizer that
        takes one, where the update is the dense one; PyTorch's refusal for the others."""
        raise RuntimeError(f'{type(self).__name__} does not support sparse gradients')

    def _step_differentiable(self, loss):
        with enable_grad():  # (as PyTorch: grad mode on for the step, whatever it was outside)
            for group in self.param_groups:
                for p in group['params']:
                    if p._grad is None:
                        continue
                    grad = -p._grad if group['maximize'] else p._grad
                    state = self.state[p] if p in self.state else {}
                    step = state.get('step')
                    if step is not None and step.requires_grad:
                        raise RuntimeError('`requires_grad` is not supported for `step` in differentiable mode')
                    self._update_differentiable(p, grad, state, group)
                    if state and p not in self.state:
                        self.state[p] = state
        return loss

    def _update_differentiable(self, p, grad, state, group):
        """Update the tensor p in place from the tensor grad with recorded tensor operations."""
        raise NotImplementedError

    def __repr__(self):
        s = self.__class__.__name__ + ' ('
        for i, group in enumerate(self.param_groups):
            s += '\n' if i == 0 else '\n\n'  # (PyTorch: a blank line between groups)
            s += 'Parameter Group {}'.format(i)
            for key in sorted(group.keys()):
                if key != 'params':
                    s += '\n    {}: {}'.format(key, group[key])
        return s + '\n)'

    def __getstate__(self):
        return {'defaults': self.defaults, 'state': self.state, 'param_groups': self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}, as PyTorch packs it."""
        index = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != 'params'}
            for i, p in enumerate(group['params'], start):
                index.setdefault(id(p), i)
            packed['params'] = [index[id(p)] for p in group['params']]
            start += len(packed['params'])
            return packed
        groups = [pack(g) for g in self.param_groups]
        state = {index[id(k)] if isinstance(k, Tensor) else k: v for k, v in self.state.items()}
        return {'state': state, 'param_groups': groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict['param_groups'])
        if len(groups) != len(saved_groups):
            raise ValueError('loaded state dict has a different number of parameter groups')
        if any(len(g['params']) != len(s['params']) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for i, p in zip(s['params'], g['params']):
                id_map[i] = p

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                # state follows the parameter's dtype, except the step counter (PyTorch's policy); like
                # PyTorch's .to(), a tensor already of that dtype is kept, not copied
                data = value._data
                if key != 'step' and data.dtype.kind in 'fV' and data.dtype != param._data.dtype:
                    return _t(data.astype(param._data.dtype))
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            return copy.deepcopy(value)

        state = defaultdict(dict)
        for k, v in state_dict['state'].items():
            key = int(k) if isinstance(k, str) and k.isdigit() else k
            if key in id_map:
                state[id_map[key]] = cast(id_map[key], v)
            else:
                state[key] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s['params'] = g['params']
            if 'param_names' in g and 'param_names' not in s:
                s['param_names'] = g['param_names']
            new_groups.append(s)
        self.state = state
        self.param_groups = new_groups


def _real_pairs(array):
    """A complex array's memory as real pairs, shape ``(*shape, 2)`` (a view, as view_as_real)."""
    return array[..., None].view(array.real.dtype)


def _update_as_real_pairs(optimizer, p, grad, state, group):
    """Update a complex parameter as PyTorch does: its real pairs, with its gradient's and its
    state's, as if they were real tensors (its state stays complex)."""
    pairs = {k: Tensor._wrap(_real_pairs(v._data)) if type(v) is Tensor and v._data.dtype.kind == 'c' else v
             for k, v in state.items()}
    optimizer._update(Tensor._wrap(_real_pairs(p._data)), _real_pairs(grad), pairs, group)
    for k, v in pairs.items():
        if type(v) is Tensor and v._data.ndim and v._data.shape == grad.shape + (2,) and v._data.dtype.kind == 'f':
            v = Tensor._wrap(np.ascontiguousarray(v._data).view(grad.dtype)[..., 0])
        state[k] = v


def _state_shape_error(value, grad):
    """PyTorch's error from the first in-place update of a (loaded) state tensor whose shape is
    not its parameter's; raised here before the step changes anything."""
    try:
        shape = np.broadcast_shapes(value._data.shape, grad.shape)
    except ValueError:
        return broadcast_error(value, _t(grad))
    return RuntimeError(f"output with shape {list(value._data.shape)} doesn't match the broadcast shape {list(shape)}")


def _typename(obj):
    from ..nn.modules.module import _typename as name  # (loaded when first used: import leafgrad.optim does not load nn)
    return name(obj)


def _check(cond, message):
    if not cond:
        raise ValueError(message)


def _check_lr(lr, foreach=None, capturable=False):
    """PyTorch's checks of a learning rate, first among an optimizer's: a tensor one has one
    element (and, for Adam's, is refused with foreach unless capturable), then none is negative."""
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError('lr as a Tensor is not supported for capturable=False and foreach=True')
        if lr.numel() != 1:
            raise ValueError('Tensor lr must be 1-element')
    _check(0.0 <= lr, f'Invalid learning rate: {lr}')
