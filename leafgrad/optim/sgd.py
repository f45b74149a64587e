import numpy as _np

from .. import backend
from .optimizer import Optimizer, _check, _check_lr, _t

_ndarray = _np.ndarray


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum (optionally Nesterov's), dampening and weight
    decay, in PyTorch's order: decay, then the momentum buffer, then the step.

    With learning rate γ, momentum μ, dampening τ and weight decay λ, each step does, for each
    parameter θ with gradient g:

    ```text
    if maximize: g = -g
    if λ != 0:   g = g + λ θ
    if μ != 0:
        b = g                       (first step)
        b = μ b + (1 - τ) g         (later steps)
        g = g + μ b  if nesterov  else  b
    θ = θ - γ g
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts with ``'params'`` and any
        of the options below, which override the defaults for that group).
    lr
        Learning rate γ.
    momentum
        Momentum factor μ (0: none).
    dampening
        Dampening τ of the momentum.
    weight_decay
        L2 penalty λ, added to the gradient.
    nesterov
        Nesterov momentum (needs momentum > 0 and dampening 0).
    maximize
        Ascend the objective instead of descending.
    foreach, fused
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        Record the step in the autograd graph (grad mode on), so that gradients flow through it;
        non-leaf parameters are then accepted.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        _check(momentum >= 0.0, f'Invalid momentum value: {momentum}')
        _check(weight_decay >= 0.0, f'Invalid weight_decay value: {weight_decay}')
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError('Nesterov momentum requires a momentum and zero dampening')
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _sparse_grad(self, grad, group):
        if group['weight_decay'] != 0:  # (PyTorch's grad.add(param) of a sparse grad)
            raise RuntimeError('add(sparse, dense) is not supported. Use add(dense, sparse) instead.')
        return grad.to_dense()._data

    def _update(self, p, g, state, group):
        lr, momentum, dampening, wd = group['lr'], group['momentum'], group['dampening'], group['weight_decay']
        if wd != 0:
            g = g + wd * p._data
        if momentum != 0:
            buf = state.get('momentum_buffer')
            if buf is None:
                buf = state['momentum_buffer'] = _t(g.copy())
            else:
                b = buf._data
                b *= momentum
                b += (1 - dampening) * g if dampening else g
            g = g + momentum * buf._data if group['nesterov'] else buf._data
        data = p._data
        if type(data) is not _ndarray and (descend := backend.fused_kernel(
                'sgd_descend', 'T g, T lr', 'T p', 'p = p - lr * g')) is not None:
            descend(g, data.dtype.type(lr), data)  # (on a GPU: one kernel, where the line below launches two)
        else:
            data -= lr * g

    def _update_differentiable(self, p, g, state, group):
        lr, momentum, dampening, wd = group['lr'], group['momentum'], group['dampening'], group['weight_decay']
        if wd != 0:
            g = g.add(p, alpha=wd)
        if momentum != 0:
            buf = state.get('momentum_buffer')
            if buf is None:
                buf = state['momentum_buffer'] = g.detach().clone()
            else:
                buf.mul_(momentum).add_(g, alpha=1 - dampening)
            g = g.add(buf, alpha=momentum) if group['nesterov'] else buf
        p.add_(g, alpha=-lr)
