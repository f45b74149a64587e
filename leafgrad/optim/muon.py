"""Muon: momentum orthogonalized by Newton-Schulz, PyTorch's single-tensor update
(``torch.optim.Muon``), for the 2-D parameters of hidden layers."""
import math

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer

# Keller Jordan's quintic Newton-Schulz coefficients and stabilizer, PyTorch's defaults
_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
_EPS = 1e-7


class Muon(Optimizer):
    """Muon: ``B = mu*B + g`` (as ``B.lerp_(g, 1 - mu)`` does it), the update ``g.lerp(B, mu)``
    with Nesterov or ``B`` without, made nearly orthogonal by ``ns_steps`` Newton-Schulz
    iterations in bfloat16, then decoupled weight decay and the step scaled by ``adjust_lr_fn``
    (``'original'``: sqrt(max(1, rows/cols)); ``'match_rms_adamw'``: 0.2*sqrt(max(rows, cols)))."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=_NS_COEFFICIENTS, eps=_EPS, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError('Tensor lr must be 1-element')
        if not 0.0 <= lr:
            raise ValueError(f'Learning rate should be >= 0 but is: {lr}')
        if not 0.0 <= momentum:
            raise ValueError(f'momentum should be >= 0 but is: {momentum}')
        if not 0.0 <= weight_decay:
            raise ValueError(f'weight decay should be >= 0 but is: {weight_decay}')
        if adjust_lr_fn is not None and adjust_lr_fn not in ('original', 'match_rms_adamw'):
            raise ValueError(f'Adjust learning rate function {adjust_lr_fn} is not supported')
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group['params']:
                if p.ndim != 2:
                    raise ValueError(f'Muon only supports 2D parameters whereas we found a parameter with size: '
                                     f'{p.size()}')

    def _step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = group['lr']
                lr = lr.item() if isinstance(lr, Tensor) else lr
                with_grad = []
                for p in group['params']:  # (every check first, as PyTorch's _init_group, then the updates)
                    if p._grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError('Muon does not support complex parameters')
                    state = self.state[p]
                    if 'momentum_buffer' not in state:
                        state['momentum_buffer'] = p._grad.new_zeros(p._grad.shape)
                    with_grad.append(p)
                for p in with_grad:
                    self._update_one(p, p._grad, self.state[p]['momentum_buffer'], lr, group)
        return loss

    def _update_one(self, p, grad, buf, lr, group):
        if grad.ndim != 2:
            raise ValueError('Param gradient must be a 2D matrix')
        momentum = group['momentum']
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group['nesterov'] else buf
        update = _orthogonalized(update, group['ns_coefficients'], group['ns_steps'], group['eps'])
        rows, cols = p.shape[:2]
        adjust = group['adjust_lr_fn']
        if adjust is None or adjust == 'original':
            ratio = math.sqrt(max(1, rows / cols))
        elif adjust == 'match_rms_adamw':
            ratio = 0.2 * math.sqrt(max(rows, cols))
        else:
            ratio = 1.0
        p.mul_(1 - lr * group['weight_decay'])
        p.add_(update, alpha=-lr * ratio)


def _orthogonalized(grad, coefficients, steps, eps):
    """The quintic Newton-Schulz iteration toward ``U V^T`` of ``grad = U S V^T`` (to singular
    values spread around 1 rather than exactly 1: the coefficients favour a steep start), in
    bfloat16, on the wide orientation of the matrix."""
    if steps >= 100:
        raise ValueError('Number of steps must be less than 100 for computational efficiency')
    if grad.ndim != 2:
        raise ValueError('Input tensor gradient must be a 2D matrix')
    if len(coefficients) != 3:
        raise ValueError('Coefficients must be a tuple of exactly 3 values')
    a, b, c = coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))  # a spectral norm of at most 1
    for _ in range(steps):
        gram = x @ x.T
        x = x.addmm(gram.addmm(gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x

