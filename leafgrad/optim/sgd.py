from .optimizer import Optimizer, required


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov and weight decay,
    following PyTorch's update order."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f'Invalid learning rate: {lr}')
        if momentum < 0.0:
            raise ValueError(f'Invalid momentum value: {momentum}')
        if weight_decay < 0.0:
            raise ValueError(f'Invalid weight_decay value: {weight_decay}')
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError('Nesterov momentum requires a momentum and zero dampening')
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update_group(self, group):
        lr, momentum, dampening = group['lr'], group['momentum'], group['dampening']
        wd, nesterov, maximize = group['weight_decay'], group['nesterov'], group['maximize']
        for p in group['params']:
            if p._grad is None:
                continue
            g = p._grad._data
            if maximize:
                g = -g
            if wd != 0:
                g = g + wd * p._data
            if momentum != 0:
                state = self.state.setdefault(p, {})
                buf = state.get('momentum_buffer')
                if buf is None:
                    buf = state['momentum_buffer'] = p._grad.__class__._wrap(g.copy())
                else:
                    b = buf._data
                    b *= momentum
                    b += (1 - dampening) * g if dampening else g
                g = g + momentum * buf._data if nesterov else buf._data
            p._data -= lr * g if lr != 1 else g
            p._version_counter[0] += 1
