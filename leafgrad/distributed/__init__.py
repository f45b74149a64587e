"""leafgrad.distributed: ``torch.distributed`` on MPI (mpi4py).

Start a program on N processes with ``mpiexec -n N python train.py``; in it,
``init_process_group()`` takes the rank and world size from MPI and sets ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` as ``torchrun`` does. Importing this
module loads no MPI: mpi4py (``pip install 'leafgrad[distributed]'``, which brings Open MPI
and ``mpiexec``) is imported by ``init_process_group``.

Backends: ``'mpi'``, ``'gloo'`` (PyTorch's CPU backend: served by MPI, so that a CPU program
written for gloo runs unchanged) and None all run on MPI, and ``get_backend()`` says
``'mpi'``. ``'nccl'`` raises PyTorch's error for a build without NCCL: leafgrad's tensors
live in host memory, where NCCL cannot reach. How operations are run, and how a failed
rank ends the job instead of hanging it: ``process_group``'s design note.
"""
import os

from . import process_group as _pg
from .process_group import (Backend, DistBackendError, DistError, DistNetworkError, DistStoreError, GroupMember,
                            ProcessGroup, Work, group)
from .collectives import (ReduceOp, all_gather, all_gather_into_tensor, all_gather_single, all_reduce,
                          all_to_all_single, barrier, broadcast, gather, get_global_rank, get_group_rank,
                          get_process_group_ranks, irecv, isend, recv, reduce, reduce_scatter_single,
                          reduce_scatter_tensor, scatter, send)
from .objects import (all_gather_object, broadcast_object_list, gather_object, recv_object_list,
                      scatter_object_list, send_object_list)

_pg.launcher_environment()

__all__ = ['Backend', 'DistBackendError', 'DistError', 'DistNetworkError', 'DistStoreError', 'GroupMember',
           'ProcessGroup', 'ReduceOp', 'Work', 'all_gather', 'all_gather_into_tensor', 'all_gather_object',
           'all_gather_single', 'all_reduce', 'all_to_all_single', 'barrier', 'broadcast', 'broadcast_object_list',
           'destroy_process_group', 'gather', 'gather_object', 'get_backend', 'get_global_rank', 'get_group_rank',
           'get_node_local_rank', 'get_process_group_ranks', 'get_rank', 'get_world_size', 'group',
           'init_process_group', 'irecv', 'is_available', 'is_gloo_available', 'is_initialized',
           'is_mpi_available', 'is_nccl_available', 'is_torchelastic_launched', 'isend', 'new_group', 'recv',
           'recv_object_list', 'reduce', 'reduce_scatter_single', 'reduce_scatter_tensor', 'scatter',
           'scatter_object_list', 'send', 'send_object_list']


def is_available():
    """True when mpi4py can be imported (MPI itself starts only in ``init_process_group``)."""
    try:
        import mpi4py  # noqa: F401  (the package only: MPI_Init waits for mpi4py.MPI)
    except ImportError:
        return False
    return True


def is_mpi_available():
    return is_available()


def is_gloo_available():
    # 'gloo' is served by MPI
    return is_available()


def is_nccl_available():
    return False


def is_torchelastic_launched():
    return os.getenv('TORCHELASTIC_RUN_ID') is not None


def is_initialized():
    return _pg._state.world is not None


def _cpu_backend(backend):
    """The backend that serves CPU tensors, from a name or 'cpu:gloo,cuda:nccl'."""
    if backend is None:
        return Backend.UNDEFINED
    if not isinstance(backend, str):
        raise ValueError('Backend constructor parameter must be string-ish')
    if ':' in backend:
        pairs = dict(part.split(':', 1) for part in backend.lower().split(','))
        if 'cpu' not in pairs:
            raise ValueError(f'The custom backend string argument is invalid: {backend}. Custom backend string '
                             'is an experimental feature where the backend string must be in the format: '
                             '"<device_type1>:<backend1>,<device_type2>:<backend2>...". e.g. "cpu:gloo,cuda:nccl"')
        backend = pairs['cpu']
    return Backend(backend)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name='', pg_options=None, device_id=None):
    """Start MPI and make the default process group of all ranks ``mpiexec`` started.

    ``world_size`` and ``rank``, when given, must be MPI's; ``init_method`` (an address other
    backends meet at) is not needed, MPI's launcher already connected the ranks; ``timeout``
    bounds every wait on an operation of this group (30 minutes by default, as in PyTorch).
    """
    if _pg._state.world is not None:
        raise ValueError('trying to initialize the default process group twice!')
    if store is not None and init_method is not None:
        raise AssertionError('Cannot specify both init_method and store.')
    if store is not None:
        raise ValueError('leafgrad.distributed runs on MPI, whose launcher connects the ranks: a store is not used '
                         '(start the program with mpiexec and give no store)')
    if pg_options is not None:
        raise ValueError('pg_options configure a specific backend (e.g. NCCL); the MPI backend takes none')
    gpu = _pg._backend.cuda_available()  # (with a GPU, its tensors are staged through the host to MPI)
    if isinstance(device_id, int) and not gpu:
        raise ValueError('device_id is an int, but no accelerator support is found from the current compilation. '
                         'Please use a different compiled version that supports your accelerator.')
    if device_id is not None and not isinstance(device_id, int) and \
            getattr(device_id, 'type', None) not in (('cpu', 'cuda') if gpu else ('cpu',)):
        raise ValueError(f"device_id {device_id} does not match the current compilation's accelerator support: "
                         'None. Please use a different compiled version that supports your accelerator.')
    name = _cpu_backend(backend)
    if name == Backend.NCCL and gpu:  # (a GPU program's backend: served by MPI, as gloo is)
        name = Backend.MPI
    if name == Backend.NCCL:
        if timeout is None:
            _pg.warn('Attempted to get default timeout for nccl backend, but NCCL support is not compiled')
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name in (Backend.UCC, Backend.XCCL):
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in")
    if name not in (Backend.UNDEFINED, Backend.MPI, Backend.GLOO):
        raise AssertionError(f'Unknown backend type {name}')
    if timeout is None:
        timeout = _pg.DEFAULT_TIMEOUT
    _pg.check_timeout(timeout)
    if init_method is not None and not isinstance(init_method, str):
        raise TypeError(f'init_method must be a URL string, got {type(init_method).__name__}')
    _pg.start(name, timeout, world_size, rank)


def destroy_process_group(group=None):
    """Destroy ``group``; the default group (or None) takes every group with it."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = _pg._state.world if group is None else group
    if pg is None:
        raise AssertionError('Process group cannot be None')
    if pg not in _pg._state.groups:
        raise ValueError('Invalid process group specified')
    _pg.stop(pg)


def get_rank(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    world = _pg.default_group()
    if group is None or group is world:
        return world.rank()
    return get_group_rank(group, world.rank())


def get_world_size(group=None):
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    if group is None or group is _pg._state.world:
        return _pg.default_group().size()
    return group.size()


def get_backend(group=None):
    pg = group or _pg.default_group()
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError('Invalid process group specified')
    if pg not in _pg._state.groups:
        raise ValueError('Invalid process group specified')
    return Backend.MPI


def get_node_local_rank(fallback_rank=None):
    if 'LOCAL_RANK' in os.environ:
        return int(os.environ['LOCAL_RANK'])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError('LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow '
                       '`get_node_local_rank` to work, assuming you are not running in a multi-device context and '
                       'want the code to run locally instead.')


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None, sort_ranks=True):
    """A group of ``ranks`` (global ranks); every rank of the world must call it, in the same
    order. Ranks outside get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _pg.default_group()
    if backend is not None and _cpu_backend(backend) not in (Backend.UNDEFINED, Backend.MPI, Backend.GLOO):
        raise RuntimeError(f"Distributed package doesn't have {Backend(backend).upper()} built in")
    if timeout is None:
        timeout = world._timeout
    _pg.check_timeout(timeout)
    if use_local_synchronization:
        raise ValueError("MPI backend doesn't support use_local_synchronization=True")
    if pg_options is not None:
        raise ValueError('pg_options configure a specific backend (e.g. NCCL); the MPI backend takes none')
    size = world.size()
    if ranks is None:
        ranks = list(range(size))
    else:
        ranks = sorted(ranks) if sort_ranks else list(ranks)
        if len(set(ranks)) != len(ranks):
            raise ValueError(f'ranks list must not contain duplicate entries, got {ranks}')
        if len(ranks) > size:
            raise ValueError("the new group's world size should be less or equal to the world size set by "
                             'init_process_group')
        for r in ranks:
            if r < 0 or r >= size:
                raise ValueError(f'Rank {r} is out of range. Valid ranks are 0 to {size - 1} (world_size={size})')
    return _pg.split(ranks, timeout)

