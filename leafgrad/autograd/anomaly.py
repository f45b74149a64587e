"""Anomaly detection: name the node whose derivative produced NaN, and where it was created.

While enabled, every recorded node keeps the traceback of the forward call that created it,
and the engine checks each derivative's outputs for NaN. The mode is one for the whole
process, as PyTorch's is (unlike grad mode, which is per thread): turned on in one thread,
it is on in all.
"""
import warnings

from .grad_mode import _DecoratorContextManager


class _AnomalyState:
    enabled = False
    check_nan = True


anomaly_state = _AnomalyState()


def is_anomaly_enabled():
    return anomaly_state.enabled


def is_anomaly_check_nan_enabled():
    return anomaly_state.check_nan


_REQUIRED = type('required', (), {'__repr__': lambda self: '<required>'})()


def set_anomaly_enabled(enabled=_REQUIRED, check_nan=True):
    """Turn anomaly detection on or off for the process (``torch.set_anomaly_enabled``)."""
    if enabled is _REQUIRED:
        raise TypeError('set_anomaly_enabled() missing 1 required positional arguments: "enabled"')
    if not isinstance(enabled, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'enabled' (position 1) must be bool, not "
                        f'{type(enabled).__name__}')
    if not isinstance(check_nan, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'check_nan' (position 2) must be bool, not "
                        f'{type(check_nan).__name__}')
    anomaly_state.enabled, anomaly_state.check_nan = enabled, check_nan


def forward_trace():
    """The stack of the op call being recorded, minus leafgrad's own frames."""
    import traceback  # (loaded when first used: only anomaly mode needs it, ~0.6 ms of `import leafgrad` otherwise)
    frames = [f for f in traceback.extract_stack()[:-1] if '/leafgrad/' not in f.filename.replace('\\', '/')]
    return ''.join(traceback.format_list(frames))


def check_nan(node, grads):
    if not anomaly_state.check_nan:
        return
    for i, g in enumerate(grads):
        if g is not None and g._data.dtype.kind in 'fVc' and bool(g._data.__ne__(g._data).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def warn_forward_trace(node):
    """As PyTorch does when a derivative fails under anomaly mode: a warning naming the node,
    with the traceback of the forward call that created it."""
    if node._anomaly_trace:
        message = (f'Error detected in {node.name()}. Traceback of forward call that caused the error:\n'
                   + node._anomaly_trace)
    else:
        message = (f'Error detected in {node.name()}. No forward pass information available. Enable detect '
                   'anomaly during forward pass for more information.')
    warnings.warn(message, UserWarning, stacklevel=4)


class detect_anomaly(_DecoratorContextManager):
    """Context manager (and decorator) turning anomaly detection on: nodes keep the traceback
    of their forward call, and a derivative returning NaN raises naming its node."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = None
        warnings.warn('Anomaly Detection has been enabled. This mode will increase the runtime and should only '
                      'be enabled for debugging.', UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (anomaly_state.enabled, anomaly_state.check_nan)
        anomaly_state.enabled = True
        anomaly_state.check_nan = self.check_nan

    def __exit__(self, *exc):
        anomaly_state.enabled, anomaly_state.check_nan = self.prev

    def clone(self):
        return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on or off (as a call, or as a context manager restoring it)."""

    def __init__(self, mode, check_nan=True):
        self.prev = (anomaly_state.enabled, anomaly_state.check_nan)
        self.mode, self.check_nan = mode, check_nan
        anomaly_state.enabled = bool(mode)
        anomaly_state.check_nan = check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        anomaly_state.enabled, anomaly_state.check_nan = self.prev

    def clone(self):
        return self.__class__(self.mode, self.check_nan)
