"""``GradScaler``: loss scaling for mixed-precision training, as ``torch.amp.GradScaler``.

A float16 gradient underflows to zero where its float32 counterpart would not. The scaler
multiplies the loss by a large factor (``scale``) before backward, divides the gradients by it
(``unscale_``, which also looks for inf and NaN) and lets the optimizer step only when they are
all finite. ``update`` then adjusts the factor: times ``backoff_factor`` after a step skipped for
an inf or NaN, times ``growth_factor`` after ``growth_interval`` finite steps in a row.

>>> import leafgrad as torch
>>> w = torch.nn.Parameter(torch.ones(2))
>>> opt = torch.optim.SGD([w], lr=0.1)
>>> scaler = torch.amp.GradScaler('cpu', init_scale=4.0, growth_interval=1)
>>> scaler.scale((w * 3).sum()).backward()    # w.grad is 4 * 3
>>> scaler.step(opt)                           # unscales to 3, then steps
>>> scaler.update()                            # finite: the scale grows to 8
>>> w.grad, scaler.get_scale()
(tensor([3., 3.]), 8.0)
"""
import enum
import warnings
from collections import defaultdict

from .. import backend
from ..autograd.grad_mode import no_grad
from ..creation import full
from ..tensor import Tensor

__all__ = ['OptState', 'GradScaler']

_np = backend.numpy


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {'stage': OptState.READY, 'found_inf_per_device': {}}


def _float32_scalar(value, device):
    return full((), value, dtype=backend.float32, device=device)


class GradScaler:
    """Scale a loss, unscale and check the gradients, skip the steps they make non-finite.

    Parameters
    ----------
    device : str
        'cuda' (the default, as in PyTorch: without CUDA the scaler warns and is disabled) or 'cpu'.
    init_scale, growth_factor, backoff_factor, growth_interval : float, float, float, int
        The first scale; its factor after ``growth_interval`` finite steps in a row; its factor after
        a step skipped for inf or NaN gradients.
    enabled : bool
        False makes every method a pass-through (``scale`` returns its input, ``step`` steps).
    """

    def __init__(self, device='cuda', init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == 'cuda' and enabled and not backend.cuda_available():
            warnings.warn('leafgrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.',
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError('The growth factor must be > 1.0.')
            if backoff_factor >= 1.0:
                raise AssertionError('The backoff factor must be < 1.0.')
            self._init_scale = init_scale
            self._scale = None            # a float32 0-d tensor, made at the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None   # an int32 0-d tensor: finite steps in a row
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = 'This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration.'
        if self._scale is None:
            raise AssertionError(f'Attempted {funcname} but _scale is None.  ' + fix)
        if self._growth_tracker is None:
            raise AssertionError(f'Attempted {funcname} but _growth_tracker is None.  ' + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = _float32_scalar(self._init_scale, dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=backend.int32, device=dev)

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)):
                return type(val)(map(apply_scale, val))
            if hasattr(val, '__iter__'):
                return map(apply_scale, val)
            raise ValueError('outputs must be a Tensor or an iterable of Tensors')
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Each gradient times ``inv_scale``, in place; ``found_inf`` becomes 1 where one holds inf
        or NaN (PyTorch's _amp_foreach_non_finite_check_and_unscale_, computed in float32)."""
        found = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group['params']:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f'expected param to be torch.Tensor, got {type(param).__name__}')
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is backend.float16:
                        raise ValueError('Attempting to unscale FP16 gradients.')
                    dev = grad.device
                    flag = found.get(dev)
                    if flag is None:
                        flag = found[dev] = found_inf.to(device=dev, copy=True)
                    g = grad._data
                    if not bool(_np.isfinite(g).all()):
                        flag._data[...] = 1.0
                    scale = inv_scale._data
                    if scale != 1.0:
                        g32 = g.astype(_np.float32) if g.dtype != _np.float32 and g.dtype != _np.float64 else g
                        g[...] = (g32 * scale).astype(g.dtype, copy=False)
                        grad._bump_version()
        return found

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale, in place (once per step), noting infs."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker('unscale_')
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state['stage'] is OptState.UNSCALED:
            raise RuntimeError('unscale_() has already been called on this optimizer since the last update().')
        if optimizer_state['stage'] is OptState.STEPPED:
            raise RuntimeError('unscale_() is being called after step().')
        # 1 / scale in double, rounded to float32, as PyTorch computes it
        inv_scale = _float32_scalar(1.0 / float(self._scale._data), self._scale.device)
        found_inf = _float32_scalar(0.0, self._scale.device)
        optimizer_state['found_inf_per_device'] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        optimizer_state['stage'] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state['found_inf_per_device'].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless ``unscale_`` did), then ``optimizer.step(*args, **kwargs)`` if every
        gradient is finite; returns what step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if 'closure' in kwargs:
            raise RuntimeError('Closure use is not currently supported if GradScaler is enabled.')
        self._check_scale_growth_tracker('step')
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state['stage'] is OptState.STEPPED:
            raise RuntimeError('step() has already been called since the last update().')
        if optimizer_state['stage'] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state['found_inf_per_device']) == 0:
            raise AssertionError('No inf checks were recorded for this optimizer.')
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state['stage'] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Adjust the scale for the next iteration (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker('update')
        if new_scale is not None:
            if isinstance(new_scale, float):
                _scale._data[...] = new_scale
            else:
                reason = ('new_scale should be a float or a 1-element leafgrad.cuda.FloatTensor or '
                          'leafgrad.FloatTensor with requires_grad=False.')
                if not isinstance(new_scale, Tensor) or new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                _scale._data[...] = new_scale._data.reshape(())
            _scale._bump_version()
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state['found_inf_per_device'].values()]
            if len(found_infs) == 0:
                raise AssertionError('No inf checks were recorded prior to update.')
            found = sum(float(f.item()) for f in found_infs)
            self._update_scale(_scale, _growth_tracker, found)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, scale, tracker, found_inf):
        """PyTorch's _amp_update_scale_: back off after an inf, grow after growth_interval finite
        steps (products in double, stored in float32; a growth to inf is not taken)."""
        current = float(scale._data)
        if found_inf:
            scale._data[...] = _np.float32(current * self._backoff_factor)
            tracker._data[...] = 0
        else:
            successful = int(tracker._data) + 1
            if successful == self._growth_interval:
                grown = _np.float32(current * self._growth_factor)
                if _np.isfinite(grown):
                    scale._data[...] = grown
                tracker._data[...] = 0
            else:
                tracker._data[...] = successful
        scale._bump_version()
        tracker._bump_version()

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker (empty when disabled)."""
        if self._enabled:
            return {'scale': self.get_scale(), 'growth_factor': self._growth_factor,
                    'backoff_factor': self._backoff_factor, 'growth_interval': self._growth_interval,
                    '_growth_tracker': self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError('The source state dict is empty, possibly because it was saved from a disabled '
                               'instance of GradScaler.')
        self._init_scale = state_dict['scale']
        if self._scale is not None:
            self._scale._data[...] = state_dict['scale']
        self._growth_factor = state_dict['growth_factor']
        self._backoff_factor = state_dict['backoff_factor']
        self._growth_interval = state_dict['growth_interval']
        self._init_growth_tracker = state_dict['_growth_tracker']
        if self._growth_tracker is not None:
            self._growth_tracker._data[...] = state_dict['_growth_tracker']

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError('A GradScaler instance may only be pickled at the beginning of an iteration, '
                                     'or at the end after scaler.update().')
            state['_init_scale'] = self.get_scale()
            state['_init_growth_tracker'] = self._get_growth_tracker()
            state['_scale'] = None
            state['_growth_tracker'] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker('_check_inf_per_device')
        dummy_inv_scale = _float32_scalar(1.0, _scale.device)
        found_inf = _float32_scalar(0.0, _scale.device)
        self._per_optimizer_states[id(optimizer)]['found_inf_per_device'] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]['found_inf_per_device']

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]['found_inf_per_device']
