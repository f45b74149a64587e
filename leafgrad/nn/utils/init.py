"""skip_init: a module made without initialising its parameters and buffers."""
import inspect

from ..modules.module import Module

__all__ = ['skip_init']


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialised: made on
    the 'meta' device (no memory, no initialisation), then given empty storage on ``device``
    (the CPU by default). The class must take a ``device`` argument."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f'Expected a Module; got {module_cls}')
    if 'device' not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop('device', 'cpu')
    kwargs['device'] = 'meta'
    return module_cls(*args, **kwargs).to_empty(device=final_device)
