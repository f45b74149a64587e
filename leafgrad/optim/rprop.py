"""Rprop and ASGD: PyTorch's single-tensor updates."""
import numpy as np

from .optimizer import Optimizer, _check, _check_lr, _increment, _step_tensor, _t


class Rprop(Optimizer):
    """Resilient backpropagation: each element keeps its own step size, multiplied by etaplus
    while its gradient keeps its sign and by etaminus when the sign flips (that step then skips
    the element and forgets its gradient); parameters move by -sign(grad) * step size."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 < etas[0] < 1.0 < etas[1], f'Invalid eta values: {etas[0]}, {etas[1]}')
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, g, state, group):
        etaminus, etaplus = group['etas']
        step_min, step_max = group['step_sizes']
        if not state:
            state['step'] = _step_tensor()
            state['prev'] = _t(np.zeros_like(p._data))
            state['step_size'] = _t(np.full_like(g, group['lr']))
        _increment(state)
        prev = state['prev']._data
        step_size = state['step_size']._data
        product = g * prev
        factor = np.where(product > 0, etaplus, np.where(product < 0, etaminus, 1)).astype(step_size.dtype)
        step_size *= factor
        np.clip(step_size, step_min, step_max, out=step_size)
        g = np.where(product < 0, 0, g).astype(g.dtype)
        p._data -= np.sign(g) * step_size
        prev[...] = g


class ASGD(Optimizer):
    """Averaged SGD: SGD with a decaying step eta = lr / (1 + lambd lr t)^alpha and weight decay
    lambd, keeping in state['ax'] the average of the iterates from step t0 on."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= weight_decay, f'Invalid weight_decay value: {weight_decay}')
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, g, state, group):
        lr, lambd, alpha, t0, wd = group['lr'], group['lambd'], group['alpha'], group['t0'], group['weight_decay']
        if not state:
            state['step'] = _step_tensor()
            state['eta'] = _t(np.asarray(lr, dtype=np.float32))
            state['mu'] = _t(np.ones((), dtype=np.float32))
            state['ax'] = _t(np.zeros_like(p._data))
        step = _increment(state)
        if wd != 0:
            g = g + wd * p._data
        eta = float(state['eta']._data)
        x = p._data
        x *= 1 - lambd * eta
        x -= eta * g
        ax = state['ax']._data
        mu = state['mu']._data
        if float(mu) != 1:
            ax += (x - ax) * mu.astype(x.dtype)
        else:
            ax[...] = x
        state['eta']._data = np.asarray(lr / ((1 + lambd * lr * step) ** alpha), dtype=np.float32)
        state['mu']._data = np.asarray(1 / max(1, step - t0), dtype=np.float32)
