"""Adafactor: PyTorch's single-tensor update (``torch.optim.Adafactor``)."""
import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer, _increment, _lerp_, _step_tensor, _t


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern, 2018): Adam's second moment kept factored, for a matrix as a
    row and a column of mean squares (``state['row_var']``, ``state['col_var']``; a vector keeps
    ``state['variance']``), with a decay ``1 - t^beta2_decay``, the relative step size
    ``min(lr, 1/sqrt(t))`` scaled by the parameter's RMS (at least ``eps[1]``), and the update's
    RMS clipped to ``d``. No first moment."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError('Tensor lr must be 1-element')
        if not 0.0 <= lr:
            raise ValueError(f'Learning rate should be >= 0 but is: {lr}')
        if not 0.0 >= beta2_decay:
            raise ValueError(f'beta2_decay should be <= 0 but is: {beta2_decay}')
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f'epsilon1 should be >= 0 but is: {eps[0]}')
        if not 0.0 <= eps[1]:
            raise ValueError(f'epsilon2 should be >= 0 but is: {eps[1]}')
        if not 1.0 <= d:
            raise ValueError(f'Clipping threshold d should be >= 1 but is: {d}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'weight_decay should be >= 0 but is: {weight_decay}')
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def _step(self, closure=None):
        # (the base's loop checks that state has the gradient's shape: row_var and col_var do not)
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                eps1 = group['eps'][0]
                for p in group['params']:
                    if p._grad is None:
                        continue
                    if p._data.dtype.kind == 'c':
                        raise RuntimeError('Adafactor does not support complex parameters')
                    state = self.state[p]
                    if not state:
                        state['step'] = _step_tensor()
                        if p._grad._data.ndim > 1:
                            g = p._grad._data  # (the factors live where the gradient lives: like=)
                            state['row_var'] = _t(np.zeros_like(g, shape=g.shape[:-1] + (1,)))
                            state['col_var'] = _t(np.zeros_like(g, shape=g.shape[:-2] + (1,) + g.shape[-1:]))
                        else:
                            state['variance'] = _t(np.zeros_like(p._grad._data))
                    if eps1 is None:  # (as PyTorch: the first parameter's dtype decides for the group)
                        eps1 = float(np.finfo(p._data.dtype).eps)
                    grad = p._grad._data
                    self._update_one(p, -grad if group['maximize'] else grad, state, group, eps1)
                    p._bump_version()
        return loss

    def _update_one(self, p, g, state, group, eps1):
        lr = float(group['lr'])
        step = _increment(state)
        one_minus_beta2 = step ** group['beta2_decay']
        rho = min(lr, 1 / step ** 0.5)
        x = p._data
        alpha = max(group['eps'][1], float(np.sqrt(np.sum(x * x, dtype=x.dtype))) / x.size ** 0.5) * rho
        if group['weight_decay'] != 0:
            x *= x.dtype.type(1 - lr * group['weight_decay'])
        if g.ndim > 1:
            row_var, col_var = state['row_var']._data, state['col_var']._data
            _lerp_(row_var, np.sum(g * g, axis=-1, keepdims=True) / x.dtype.type(g.shape[-1]), one_minus_beta2)
            _lerp_(col_var, np.sum(g * g, axis=-2, keepdims=True) / x.dtype.type(g.shape[-2]), one_minus_beta2)
            estimate = row_var @ col_var
            estimate /= np.maximum(row_var.mean(axis=-2, keepdims=True), x.dtype.type(eps1))
        else:
            variance = state['variance']._data
            _lerp_(variance, g * g, one_minus_beta2)
            estimate = variance.copy()
        update = 1 / np.sqrt(np.maximum(estimate, x.dtype.type(eps1 * eps1)))
        update *= g
        denom = max(1.0, float(np.sqrt(np.sum(update * update, dtype=x.dtype))) / (update.size ** 0.5 * group['d']))
        x += update * x.dtype.type(-alpha / denom)
