"""Stochastic weight averaging (torch.optim.swa_utils): AveragedModel keeps a running average
(or an exponential moving average) of a model's parameters, SWALR anneals each group's learning
rate to a constant swa_lr, and update_bn recomputes batch-norm statistics for averaged weights."""
import itertools
import math
import warnings
from copy import deepcopy

from .lr_scheduler import LRScheduler, _format_param
from .. import backend, creation
from ..autograd.grad_mode import no_grad
from ..nn.modules.normalization import _BatchNorm, _InstanceNorm

__all__ = ['AveragedModel', 'update_bn', 'SWALR', 'get_ema_multi_avg_fn', 'get_swa_multi_avg_fn', 'get_ema_avg_fn',
           'get_swa_avg_fn']


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f'Invalid decay value {decay} provided. Please provide a value in [0,1] range.')


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place exponential moving average of lists of tensors: ema.lerp_(current, 1 - decay)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                if p_ema.is_floating_point() or p_ema.is_complex():
                    p_ema.lerp_(p_model, 1 - decay)
                else:
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running mean of lists of tensors: avg.lerp_(current, 1 / (n + 1))."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                if p_avg.is_floating_point() or p_avg.is_complex():
                    p_avg.lerp_(p_model, float(1 / (num_averaged + 1)))
                else:
                    p_avg.add_((p_model - p_avg) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """avg + (current - avg) / (n + 1)."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


from ..nn import Module  # noqa: E402  (swa_utils itself is loaded on first use, with nn)


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers with ``use_buffers``) are averaged over
    the models passed to update_parameters: a running mean unless avg_fn/multi_avg_fn say otherwise."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError('Only one of avg_fn and multi_avg_fn should be provided')
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer('n_averaged', creation.tensor(0, dtype=backend.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        with no_grad():
            self._update_parameters(model)

    def _update_parameters(self, model):
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                      else self.parameters())
        model_param = itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None:
                # PyTorch groups the tensors by device and dtype; one group per dtype here
                groups = {}
                for a, c in zip(averaged, current):
                    groups.setdefault(a.dtype, ([], []))
                    groups[a.dtype][0].append(a)
                    groups[a.dtype][1].append(c)
                for a_list, c_list in groups.values():
                    self.multi_avg_fn(a_list, c_list, self.n_averaged)
            else:
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for p_averaged, p_model in zip(averaged, current):
                    p_averaged.detach().copy_(avg_fn(p_averaged.detach(), p_model, self.n_averaged))
        if not self.use_buffers:
            # the averaged model's buffers follow the model's (running statistics are not averaged)
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


def update_bn(loader, model, device=None):
    """One pass over ``loader`` in training mode with cumulative averages (momentum None), so each
    batch-norm layer's running statistics become those of the whole data for the current weights."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for module in momenta:
            module.momentum = momenta[module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its value to swa_lr over anneal_epochs (cosine or
    linear), then keeps it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos', last_epoch=-1):
        swa_lrs = _format_param('swa_lr', optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group['swa_lr'] = lr
        if anneal_strategy not in ['cos', 'linear']:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f'anneal_epochs must be equal or greater than 0, got {anneal_epochs}')
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn('To get the last learning rate computed by the scheduler, please use `get_last_lr()`.',
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # the rate before annealing, recovered from the current one, then annealed one step further
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group['lr'], group['swa_lr'], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group['swa_lr'] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == 'cos' else self._linear_anneal

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key not in ('optimizer', 'anneal_func')}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
