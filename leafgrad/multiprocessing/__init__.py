"""torch.multiprocessing: Python's multiprocessing, with tensors in shared memory passed between
processes by reference (Hogwild training, A3C, a model shared by worker processes).

A tensor moved into shared memory (``Tensor.share_memory_()``, ``Module.share_memory()``)
travels to another process (an argument of ``Process`` under any start method, through a
``Queue`` or a ``Pipe``) as a handle to that memory, so that the processes read and write the
same numbers; any other tensor travels as a copy, as pickle copies it. The memory is an
anonymous file passed as a file descriptor: PyTorch's ``file_descriptor`` strategy, its default
on Linux (reductions.py). ``spawn`` starts ``nprocs`` processes running ``fn(i, *args)`` and
reports the first that fails, as PyTorch's (spawn.py).
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403  (PyTorch's module re-exports the whole of it)

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext,  # noqa: F401
                    spawn, start_processes)

__all__ = ['set_sharing_strategy', 'get_sharing_strategy', 'get_all_sharing_strategies'] + multiprocessing.__all__

_all_sharing_strategies = {'file_descriptor'}  # ('file_system', named files in /dev/shm: not written)
_sharing_strategy = 'file_descriptor'


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors; one of ``get_all_sharing_strategies()``."""
    global _sharing_strategy
    assert new_strategy in _all_sharing_strategies
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The sharing strategies this system supports."""
    return _all_sharing_strategies


init_reductions()
