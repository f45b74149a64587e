"""SparseAdam: Adam for sparse gradients, as PyTorch's (in a module of its own, as
torch.optim.sparse_adam: a class is named by its module)."""
import math

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .adam import _zeros
from .optimizer import Optimizer, _check


class SparseAdam(Optimizer):
    """SparseAdam: Adam for sparse gradients (``nn.Embedding(sparse=True)``'s), which moves
    only the rows a gradient lists: their moments and their parameters, as PyTorch's does,
    operation by operation. With indices I of the (coalesced) gradient g at step t:

    ```text
    m[I] += (1 - β1) (g - m[I]);  v[I] += (1 - β2) (g² - v[I])
    θ[I] -= γ √(1 - β2^t) / (1 - β1^t) · m[I] / (√v[I] + ε)
    ```

    A dense gradient is refused (use Adam), and so are sparse or complex parameters.
    """
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError('Tensor lr must be 1-element')
        _check(0.0 < lr, f'Invalid learning rate: {lr}')
        _check(0.0 < eps, f'Invalid epsilon value: {eps}')
        _check(0.0 <= betas[0] < 1.0, f'Invalid beta parameter at index 0: {betas[0]}')
        _check(0.0 <= betas[1] < 1.0, f'Invalid beta parameter at index 1: {betas[1]}')
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        where = [(kind, [[g, i] for g, group in enumerate(self.param_groups) for i, p in enumerate(group['params'])
                         if test(p)]) for kind, test in (('sparse', lambda p: p.is_sparse),
                                                         ('complex', lambda p: p.is_complex()))]
        for kind, found in where:
            if found:
                raise ValueError(f'Sparse params at indices {found}: SparseAdam requires dense parameter tensors'
                                 if kind == 'sparse' else
                                 f'Complex params at indices {found}: SparseAdam does not support complex parameters')

    def _step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = float(group['lr'])
                (beta1, beta2), eps = group['betas'], group['eps']
                for p in group['params']:
                    grad = p._grad
                    if grad is None:
                        continue
                    if not grad.is_sparse:
                        raise RuntimeError('SparseAdam does not support dense gradients, please consider Adam instead')
                    state = self.state[p]
                    if not state:
                        state['step'] = 0
                        state['exp_avg'], state['exp_avg_sq'] = _zeros(p), _zeros(p)
                    state['step'] += 1
                    self._update_rows(p, -grad if group.get('maximize', False) else grad, state, lr, beta1, beta2,
                                      eps)
        return loss

    @staticmethod
    def _update_rows(p, grad, state, lr, beta1, beta2, eps):
        grad = grad.coalesce()  # (the update is not linear: each index once)
        values = grad._vals
        if values.size == 0:
            return
        rows = tuple(grad._idx)
        m, v = state['exp_avg']._data, state['exp_avg_sq']._data
        old_m = m[rows]
        m_update = (values - old_m) * (1 - beta1)
        m[rows] += m_update
        old_v = v[rows]
        v_update = (values ** 2 - old_v) * (1 - beta2)
        v[rows] += v_update
        numer = m_update + old_m
        v_update += old_v
        denom = np.sqrt(v_update) + eps
        step = state['step']
        step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        p._data[rows] += -step_size * (numer / denom)
        p._bump_version()
