"""leafgrad.amp: automatic mixed precision, as ``torch.amp``.

``autocast`` runs the ops of a region in a lower-precision dtype where PyTorch's autocast does
(bfloat16 by default on the CPU; ``policy.py`` says which ops and how); ``GradScaler`` scales a
loss so that float16 gradients do not underflow, unscales them before the optimizer's step and
skips the steps whose gradients hold inf or NaN. Both load on first use.
"""
import importlib

__all__ = ['autocast', 'custom_bwd', 'custom_fwd', 'is_autocast_available', 'GradScaler']

_HOMES = {'autocast': 'autocast_mode', 'custom_bwd': 'autocast_mode', 'custom_fwd': 'autocast_mode',
          'is_autocast_available': 'autocast_mode', 'GradScaler': 'grad_scaler'}


def __getattr__(name):
    if name in _HOMES:
        return getattr(importlib.import_module(f'.{_HOMES[name]}', __name__), name)
    if name in ('autocast_mode', 'grad_scaler'):
        return importlib.import_module(f'.{name}', __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
