"""RMSprop, Adagrad and Adadelta: PyTorch's single-tensor updates."""
import numpy as np

from .optimizer import Optimizer, _check, _check_lr, _increment, _lerp_, _scaled_square, _step_tensor, _t


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes), optionally centered and with momentum.

    With smoothing α, momentum μ and weight decay λ, each step, for each parameter θ with
    gradient g (v, the average g̅ and the buffer b start at 0):

    ```text
    if maximize: g = -g
    if λ != 0:   g = g + λ θ
    v = α v + (1 - α) g²
    ṽ = v
    if centered: g̅ = α g̅ + (1 - α) g;  ṽ = v - g̅²
    if μ > 0:    b = μ b + g / (√ṽ + ε);  θ = θ - γ b
    else:        θ = θ - γ g / (√ṽ + ε)
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        Learning rate γ.
    alpha
        Smoothing constant α of the squared-gradient average.
    eps
        ε, added to the denominator.
    weight_decay
        L2 penalty λ, added to the gradient.
    momentum
        Momentum factor μ.
    centered
        Normalise by the estimated variance of the gradient instead of its second moment.
    maximize
        Ascend the objective instead of descending.
    foreach, capturable
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        ``True`` is refused (NotImplementedError): this step runs on arrays, outside autograd.
    """
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, f'Invalid epsilon value: {eps}')
        _check(0.0 <= momentum, f'Invalid momentum value: {momentum}')
        _check(0.0 <= weight_decay, f'Invalid weight_decay value: {weight_decay}')
        _check(0.0 <= alpha, f'Invalid alpha value: {alpha}')
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _update(self, p, g, state, group):
        lr, alpha, eps, wd, momentum = group['lr'], group['alpha'], group['eps'], group['weight_decay'], \
            group['momentum']
        if not state:
            state['step'] = _step_tensor()
            state['square_avg'] = _t(np.zeros_like(p._data))
            if momentum > 0:
                state['momentum_buffer'] = _t(np.zeros_like(p._data))
            if group['centered']:
                state['grad_avg'] = _t(np.zeros_like(p._data))
        _increment(state)
        if wd != 0:
            g = g + wd * p._data
        sq = state['square_avg']._data
        sq *= alpha
        sq += _scaled_square(g, 1 - alpha)
        if group['centered']:
            ga = state['grad_avg']._data
            _lerp_(ga, g, 1 - alpha)
            avg = np.sqrt(sq + (-1 * ga) * ga)
        else:
            avg = np.sqrt(sq)
        avg += eps
        if momentum > 0:
            buf = state['momentum_buffer']._data
            buf *= momentum
            buf += g / avg
            p._data += -lr * buf
        else:
            change = g * -lr
            change /= avg
            p._data += change


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011).

    With learning rate γ, learning-rate decay η and weight decay λ, step t, for each parameter
    θ with gradient g (the sum s starts at ``initial_accumulator_value``):

    ```text
    if maximize: g = -g
    γ̃ = γ / (1 + (t - 1) η)
    if λ != 0:   g = g + λ θ
    s = s + g²
    θ = θ - γ̃ g / (√s + ε)
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        Learning rate γ.
    lr_decay
        η, the learning rate's decay per step.
    weight_decay
        L2 penalty λ, added to the gradient.
    initial_accumulator_value
        The starting value of the sum of squared gradients.
    eps
        ε, added to the denominator.
    maximize
        Ascend the objective instead of descending.
    foreach, fused
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        ``True`` is refused (NotImplementedError): this step runs on arrays, outside autograd.
    """
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check(0.0 <= lr_decay, f'Invalid lr_decay value: {lr_decay}')
        _check(0.0 <= weight_decay, f'Invalid weight_decay value: {weight_decay}')
        _check(0.0 <= initial_accumulator_value,
               f'Invalid initial_accumulator_value value: {initial_accumulator_value}')
        _check(0.0 <= eps, f'Invalid epsilon value: {eps}')
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))

    def _init_group_state(self, group):
        # PyTorch creates Adagrad's accumulators when the group is added, not on the first step
        for p in group['params']:
            state = self.state[p]
            state['step'] = _step_tensor()
            state['sum'] = _t(np.full_like(p._data, group['initial_accumulator_value']))

    def _sparse_grad(self, grad, group):
        # (the dense update moves only the listed rows, as PyTorch's sparse one does)
        if group['weight_decay'] != 0:
            raise RuntimeError('weight_decay option is not compatible with sparse gradients')
        return grad.to_dense()._data

    def _update(self, p, g, state, group):
        lr, lr_decay, eps, wd = group['lr'], group['lr_decay'], group['eps'], group['weight_decay']
        step = _increment(state)
        if wd != 0:
            g = g + wd * p._data
        clr = lr / (1 + (step - 1) * lr_decay)
        s = state['sum']._data
        s += g * g
        std = np.sqrt(s) + eps
        p._data += (-clr * g) / std


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012).

    With coefficient ρ and weight decay λ, each step, for each parameter θ with gradient g
    (v and u start at 0):

    ```text
    if maximize: g = -g
    if λ != 0:   g = g + λ θ
    v = ρ v + (1 - ρ) g²
    Δ = √(u + ε) / √(v + ε) · g
    u = ρ u + (1 - ρ) Δ²
    θ = θ - γ Δ
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        γ, the factor on Δ before it is applied.
    rho
        ρ, the decay of the running averages.
    eps
        ε, added inside both square roots.
    weight_decay
        L2 penalty λ, added to the gradient.
    maximize
        Ascend the objective instead of descending.
    foreach, capturable
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        ``True`` is refused (NotImplementedError): this step runs on arrays, outside autograd.
    """
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= rho <= 1.0, f'Invalid rho value: {rho}')
        _check(0.0 <= eps, f'Invalid epsilon value: {eps}')
        _check(0.0 <= weight_decay, f'Invalid weight_decay value: {weight_decay}')
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update(self, p, g, state, group):
        lr, rho, eps, wd = group['lr'], group['rho'], group['eps'], group['weight_decay']
        if not state:
            state['step'] = _step_tensor()
            state['square_avg'] = _t(np.zeros_like(p._data))
            state['acc_delta'] = _t(np.zeros_like(p._data))
        _increment(state)
        if wd != 0:
            g = g + wd * p._data
        sq, acc = state['square_avg']._data, state['acc_delta']._data
        sq *= rho
        sq += _scaled_square(g, 1 - rho)
        std = np.sqrt(sq + eps)
        delta = np.sqrt(acc + eps) / std * g
        acc *= rho
        acc += _scaled_square(delta, 1 - rho)
        p._data += -lr * delta
