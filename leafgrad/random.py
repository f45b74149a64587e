"""``torch.random``: the default generator's seed and state, and ``fork_rng``, which runs a block
of code and puts the random state back afterwards.

    >>> import leafgrad as torch
    >>> with torch.random.fork_rng():
    ...     _ = torch.rand(3)   # draws from the stream ...
    >>> # ... and the stream continues here as if the block had drawn nothing
"""
import contextlib

from . import backend
from .creation import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,
                       set_rng_state)

__all__ = ['Generator', 'default_generator', 'fork_rng', 'get_rng_state', 'initial_seed', 'manual_seed', 'seed',
           'set_rng_state']


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller='fork_rng', _devices_kw='devices', device_type=None):
    """Fork the random state; on leaving, it is put back. ``enabled=False`` forks nothing.

    leafgrad draws the numbers of GPU tensors too from the one CPU stream (then copies them to
    the device), so forking that stream forks every device's: ``devices`` (all GPUs when None)
    must exist, as in PyTorch, and need nothing more."""
    if device_type == 'meta':
        yield
        return
    device_type = device_type or 'cuda'
    backend.device(device_type)  # PyTorch's error for an unknown device type
    if not enabled:
        yield
        return
    if device_type == 'cuda':
        devices = list(range(backend.cuda_device_count())) if devices is None else list(devices)
        if devices and not backend.cuda_available():
            raise AssertionError('Torch not compiled with CUDA enabled')
    cpu_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_state)
