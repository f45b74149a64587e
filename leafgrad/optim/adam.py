"""Adam, AdamW (decoupled weight decay), Adamax, NAdam and RAdam: PyTorch's single-tensor
updates, operation by operation."""
import math

import numpy as np

from .optimizer import Optimizer, _check, _check_lr, _increment, _lerp_, _scaled_square, _step_tensor, _t


def _check_common(lr, eps, betas, weight_decay, foreach=None, capturable=False):
    _check_lr(lr, foreach, capturable)
    _check(0.0 <= eps, f'Invalid epsilon value: {eps}')
    _check(0.0 <= betas[0] < 1.0, f'Invalid beta parameter at index 0: {betas[0]}')
    _check(0.0 <= betas[1] < 1.0, f'Invalid beta parameter at index 1: {betas[1]}')
    _check(0.0 <= weight_decay, f'Invalid weight_decay value: {weight_decay}')


def _zeros(p):
    return _t(np.zeros_like(p._data))


def _start_state(state, p, amsgrad):
    """Adam's state at its first step: the step count and the moments at zero."""
    state['step'] = _step_tensor()
    state['exp_avg'] = _zeros(p)
    state['exp_avg_sq'] = _zeros(p)
    if amsgrad:
        state['max_exp_avg_sq'] = _zeros(p)


def _weight_decay(p, g, group):
    """L2 penalty added to the gradient, or (decoupled, as AdamW) the parameter shrunk in place."""
    lr, wd = group['lr'], group['weight_decay']
    if wd == 0:
        return g
    if group['decoupled_weight_decay']:
        p._data *= 1 - lr * wd
        return g
    return g + wd * p._data


def _update_moments(state, g, beta1, beta2):
    """The running first and second moments, updated in place: m <- lerp(m, g), v <- b2 v + (1-b2) g^2."""
    m, v = state['exp_avg']._data, state['exp_avg_sq']._data
    _lerp_(m, g, 1 - beta1)
    v *= beta2
    v += _scaled_square(g, 1 - beta2)
    return m, v


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2014), with AMSGrad as an option.

    With learning rate γ, betas (β1, β2), eps ε and weight decay λ, step t does, for each
    parameter θ with gradient g (moments m, v start at 0):

    ```text
    if maximize: g = -g
    if λ != 0:
        θ = θ (1 - γ λ)              if decoupled_weight_decay (AdamW)
        g = g + λ θ                  otherwise
    m = β1 m + (1 - β1) g
    v = β2 v + (1 - β2) g²
    m̂ = m / (1 - β1^t)
    if amsgrad: v_max = max(v_max, v);  v̂ = v_max / (1 - β2^t)
    else:       v̂ = v / (1 - β2^t)
    θ = θ - γ m̂ / (√v̂ + ε)
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        Learning rate γ.
    betas
        Decay rates (β1, β2) of the first and second moment.
    eps
        ε, added to the denominator.
    weight_decay
        λ: an L2 penalty added to the gradient, or with ``decoupled_weight_decay`` the
        parameter shrunk by γλ before the step.
    amsgrad
        Use the running maximum of the second moment (AMSGrad).
    maximize
        Ascend the objective instead of descending.
    decoupled_weight_decay
        Decay the parameter itself, as AdamW does.
    foreach, fused, capturable
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        Record the step in the autograd graph (grad mode on), so that gradients flow through it;
        non-leaf parameters are then accepted.
    """
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_common(lr, eps, betas, weight_decay, foreach, capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _sparse_grad(self, grad, group):
        raise RuntimeError('Adam does not support sparse gradients, please consider SparseAdam instead')

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), eps = group['lr'], group['betas'], group['eps']
        if not state:
            _start_state(state, p, group['amsgrad'])
        step = _increment(state)
        g = _weight_decay(p, g, group)
        m, v = _update_moments(state, g, beta1, beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = math.sqrt(bias_correction2)
        if group['amsgrad']:
            vmax = state['max_exp_avg_sq']._data
            np.maximum(vmax, v, out=vmax)
            v = vmax
        # p += (-step_size * m) / (sqrt(v) / bias_correction2_sqrt + eps), in two buffers
        denom = np.sqrt(v)
        denom /= bias_correction2_sqrt
        denom += eps
        change = m * -step_size
        change /= denom
        p._data += change

    def _update_differentiable(self, p, g, state, group):
        # PyTorch's differentiable path: the bias corrections are float32 tensors of the step tensor
        lr, (beta1, beta2), eps, wd = group['lr'], group['betas'], group['eps'], group['weight_decay']
        if not state:
            _start_state(state, p, group['amsgrad'])
        step = state['step']
        step += 1
        if wd != 0:
            if group['decoupled_weight_decay']:
                p.mul_(1 - lr * wd)
            else:
                g = g.add(p, alpha=wd)
        m, v = state['exp_avg'], state['exp_avg_sq']
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size_neg = (lr / bias_correction1).neg()
        bias_correction2_sqrt = bias_correction2.sqrt()
        if group['amsgrad']:
            vmax = state['max_exp_avg_sq']
            vmax.copy_(vmax.clone().maximum(v))
            v = vmax
        denom = (v.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
        p.addcdiv_(m.clone(), denom)


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter, 2019): Adam with decoupled weight decay.

    Each step first shrinks the parameter, θ = θ (1 - γ λ), then takes Adam's step without an
    L2 term (see ``Adam`` for the rest of the algorithm). The default weight decay is 1e-2.

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        Learning rate γ.
    betas
        Decay rates (β1, β2) of the first and second moment.
    eps
        ε, added to the denominator.
    weight_decay
        λ, the decoupled decay.
    amsgrad
        Use the running maximum of the second moment (AMSGrad).
    maximize
        Ascend the objective instead of descending.
    foreach, fused, capturable
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        Record the step in the autograd graph (grad mode on), so that gradients flow through it;
        non-leaf parameters are then accepted.
    """
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    """Adamax (Kingma and Ba, 2014): Adam with the infinity norm in place of the second moment.

    Step t, for each parameter θ with gradient g (m and u start at 0):

    ```text
    if maximize: g = -g
    if λ != 0:   g = g + λ θ
    m = β1 m + (1 - β1) g
    u = max(β2 u, |g| + ε)
    θ = θ - γ m / ((1 - β1^t) u)
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        Learning rate γ.
    betas
        Decay rates (β1, β2) of the moment and of the infinity norm.
    eps
        ε, added inside the maximum.
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
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_common(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), eps, wd = group['lr'], group['betas'], group['eps'], group['weight_decay']
        if not state:
            state['step'] = _step_tensor()
            state['exp_avg'] = _zeros(p)
            state['exp_inf'] = _zeros(p)
        step = _increment(state)
        if wd != 0:
            g = g + wd * p._data
        m, u = state['exp_avg']._data, state['exp_inf']._data
        _lerp_(m, g, 1 - beta1)
        u *= beta2
        np.maximum(u, np.abs(g) + eps, out=u)
        clr = lr / (1 - beta1 ** step)
        p._data += (-clr * m) / u


class NAdam(Optimizer):
    """NAdam (Dozat, 2016): Adam with Nesterov momentum and a momentum schedule.

    With momentum_decay ψ, step t, for each parameter θ with gradient g:

    ```text
    if maximize: g = -g
    if λ != 0:
        θ = θ (1 - γ λ)              if decoupled_weight_decay
        g = g + λ θ                  otherwise
    μ_t     = β1 (1 - 0.5 · 0.96^(t ψ))
    μ_(t+1) = β1 (1 - 0.5 · 0.96^((t+1) ψ))
    m = β1 m + (1 - β1) g
    v = β2 v + (1 - β2) g²
    m̂ = μ_(t+1) m / (1 - μ_1 ··· μ_(t+1)) + (1 - μ_t) g / (1 - μ_1 ··· μ_t)
    v̂ = v / (1 - β2^t)
    θ = θ - γ m̂ / (√v̂ + ε)
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        Learning rate γ.
    betas
        Decay rates (β1, β2) of the first and second moment.
    eps
        ε, added to the denominator.
    weight_decay
        λ: an L2 penalty added to the gradient, or with ``decoupled_weight_decay`` the
        parameter shrunk by γλ before the step.
    momentum_decay
        ψ, the momentum schedule's decay.
    decoupled_weight_decay
        Decay the parameter itself, as AdamW does.
    maximize
        Ascend the objective instead of descending.
    foreach, capturable
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        ``True`` is refused (NotImplementedError): this step runs on arrays, outside autograd.
    """
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_common(lr, eps, betas, weight_decay)
        _check(0.0 <= momentum_decay, f'Invalid momentum_decay value: {momentum_decay}')
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), eps = group['lr'], group['betas'], group['eps']
        psi = group['momentum_decay']
        if not state:
            state['step'] = _step_tensor()
            state['mu_product'] = _t(np.ones((), dtype=np.float32))
            state['exp_avg'] = _zeros(p)
            state['exp_avg_sq'] = _zeros(p)
        step = _increment(state)
        bias_correction2 = 1 - beta2 ** step
        g = _weight_decay(p, g, group)
        mu = beta1 * (1. - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1. - 0.5 * (0.96 ** ((step + 1) * psi)))
        # the running product is a float32 tensor in PyTorch: keep its rounding
        prod = state['mu_product']
        prod._data = np.asarray(prod._data * np.float32(mu), dtype=np.float32)
        mu_product = float(prod._data)
        m, v = _update_moments(state, g, beta1, beta2)
        denom = np.sqrt(v / bias_correction2) + eps
        mu_product_next = mu_product * mu_next
        p._data += (-lr * (1. - mu) / (1. - mu_product)) * g / denom
        p._data += ((-lr * mu_next) / (1. - mu_product_next)) * m / denom


class RAdam(Optimizer):
    """RAdam (Liu et al., 2019): Adam with the variance of its adaptive learning rate rectified.

    Step t, for each parameter θ with gradient g:

    ```text
    if maximize: g = -g
    if λ != 0:
        θ = θ (1 - γ λ)              if decoupled_weight_decay
        g = g + λ θ                  otherwise
    m = β1 m + (1 - β1) g
    v = β2 v + (1 - β2) g²
    m̂ = m / (1 - β1^t)
    ρ_∞ = 2 / (1 - β2) - 1
    ρ_t = ρ_∞ - 2 t β2^t / (1 - β2^t)
    if ρ_t > 5:
        l = √(1 - β2^t) / (√v + ε)
        r = √((ρ_t - 4)(ρ_t - 2) ρ_∞ / ((ρ_∞ - 4)(ρ_∞ - 2) ρ_t))
        θ = θ - γ m̂ r l
    else:
        θ = θ - γ m̂
    ```

    Parameters
    ----------
    params
        The tensors to optimize, or a list of parameter groups (dicts).
    lr
        Learning rate γ.
    betas
        Decay rates (β1, β2) of the first and second moment.
    eps
        ε, added to the denominator.
    weight_decay
        λ: an L2 penalty added to the gradient, or with ``decoupled_weight_decay`` the
        parameter shrunk by γλ before the step.
    decoupled_weight_decay
        Decay the parameter itself, as AdamW does.
    maximize
        Ascend the objective instead of descending.
    foreach, capturable
        Kept in the parameter groups as PyTorch keeps them; leafgrad has one implementation, the
        single-tensor algorithm above.
    differentiable
        ``True`` is refused (NotImplementedError): this step runs on arrays, outside autograd.
    """
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_common(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _update(self, p, g, state, group):
        lr, (beta1, beta2), eps = group['lr'], group['betas'], group['eps']
        if not state:
            state['step'] = _step_tensor()
            state['exp_avg'] = _zeros(p)
            state['exp_avg_sq'] = _zeros(p)
        step = _increment(state)
        g = _weight_decay(p, g, group)
        m, v = _update_moments(state, g, beta1, beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = m / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(bias_correction2) / (np.sqrt(v) + eps)
            p._data -= corrected * lr * adaptive * rect
        else:
            p._data -= corrected * lr

