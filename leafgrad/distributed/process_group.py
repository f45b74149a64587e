"""Process groups on MPI: the default group, sub-groups, the progress thread and work handles.

Design note. Every process group wraps an MPI communicator (a duplicate of ``COMM_WORLD`` or
a split of it). One *progress thread* per process issues all MPI calls, in the order the
program made them (MPI requires collectives to be started in the same order on every rank):
it starts each queued operation as a non-blocking MPI request and polls all outstanding
ones, sleeping briefly (50 µs, doubling up to 1 ms) when none advanced, so that a rank
waiting on a collective leaves its core to the computation it may overlap (DDP's backward).
The caller gets a ``Work``; waiting on it is waiting on an event, with the group's timeout.

Faults never hang a job:

- a rank that dies is reaped by ``mpiexec``, which then ends the others;
- a rank that raises: ``init_process_group`` installs an excepthook that prints the
  traceback (each line prefixed ``[rankN]:`` as PyTorch does) and calls ``MPI_Abort``;
- a rank that never joins a collective (it hangs, or took another branch): the others'
  ``wait`` raises ``DistBackendError`` when the timeout runs out, and the group is then
  unusable (an MPI collective cannot be cancelled); at exit such a process aborts the job
  instead of waiting in ``MPI_Finalize``.
"""
import atexit
import collections
import os
import sys
import threading
import time
import warnings
from datetime import timedelta

from .. import backend as _backend

DEFAULT_TIMEOUT = timedelta(minutes=30)  # PyTorch's default for every backend but NCCL


class DistError(RuntimeError):
    """Raised when an error occurs in the distributed library."""


class DistBackendError(DistError):
    """Raised when a collective fails or times out in the backend."""


class DistNetworkError(DistError):
    """Raised when a network error occurs."""


class DistStoreError(DistError):
    """Raised when an error occurs in the distributed store."""


class Backend(str):
    """The backend names PyTorch knows, as lower-case strings: ``Backend('GLOO') == 'gloo'``."""
    UNDEFINED = 'undefined'
    GLOO = 'gloo'
    NCCL = 'nccl'
    UCC = 'ucc'
    MPI = 'mpi'
    XCCL = 'xccl'
    FAKE = 'fake'
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError('Backend constructor parameter must be string-ish')
        return getattr(Backend, name.upper(), name.lower())


class _WorldMeta(type):
    @property
    def WORLD(cls):
        return _state.world


class group(metaclass=_WorldMeta):
    """``group.WORLD``: the default process group (None before ``init_process_group``)."""


class GroupMember(metaclass=_WorldMeta):
    NON_GROUP_MEMBER = -100  # what new_group returns on a rank outside the group


class _State:
    world = None          # the default ProcessGroup
    groups = []           # every live ProcessGroup, the default first
    progress = None       # the _Progress thread
    mpi = None            # the mpi4py.MPI module once initialised
    broken = None         # the first timeout's error: the job must abort at exit
    excepthook = None     # the hook init_process_group replaced
    atexit_registered = False


_state = _State()

NOT_INITIALIZED = 'Default process group has not been initialized, please make sure to call init_process_group.'


for _cls in (DistError, DistBackendError, DistNetworkError, DistStoreError, Backend, group, GroupMember):
    _cls.__module__ = 'leafgrad.distributed'


def default_group():
    if _state.world is None:
        raise ValueError(NOT_INITIALIZED)
    return _state.world


class ProcessGroup:
    """A set of ranks and the MPI communicator that connects them."""

    def __init__(self, comm, ranks, timeout, name):
        self._comm = comm
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._ranks = list(ranks)  # global rank of each group rank
        self._group_rank = {g: i for i, g in enumerate(self._ranks)}
        self._timeout = timeout
        self.group_name = name
        self._seq = 0

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return Backend.MPI

    def __repr__(self):
        return f'<leafgrad.distributed.ProcessGroup {self.group_name} ranks={self._ranks}>'

    # -- operations ------------------------------------------------------------------------
    def submit(self, optype, start, finish=None, result=(), numel=0, status=None):
        """Queue an operation; ``start()`` posts its MPI requests on the progress thread and
        returns them, ``finish()`` runs there once they have completed."""
        if _state.broken is not None:
            raise DistBackendError(f'[Rank {_state.world._rank}] this process group cannot run {optype}: an '
                                   f'earlier collective timed out ({_state.broken})')
        if _state.progress is None:
            raise ValueError('Invalid process group specified')  # destroyed
        self._seq += 1
        work = Work(self, self._seq, optype, numel, result)
        _state.progress.submit(_Op(work, start, finish, status))
        return work

    def run(self, optype, start, finish=None, result=(), numel=0, async_op=False):
        work = self.submit(optype, start, finish, result, numel)
        if async_op:
            return work
        work.wait()
        return None


class Work:
    """The handle of an operation that may still be running (``async_op=True``)."""
    __slots__ = ('_group', '_seq', '_optype', '_numel', '_result', '_event', '_error', '_source', '_started')

    def __init__(self, group, seq, optype, numel, result):
        self._group = group
        self._seq = seq
        self._optype = optype
        self._numel = numel
        self._result = result
        self._event = threading.Event()
        self._error = None
        self._source = -1
        self._started = time.monotonic()

    def is_completed(self):
        return self._event.is_set()

    def is_success(self):
        if not self._event.is_set():
            raise RuntimeError('Invalid call to AsyncWork::isSuccess before work has completed')
        return self._error is None

    def exception(self):
        return self._error

    def result(self):
        return list(self._result)

    def source_rank(self):
        return self._source

    _source_rank = source_rank

    def wait(self, timeout=None):
        """Block until the operation has completed (True), or raise its error; past the
        timeout (the group's unless given) raise ``DistBackendError``."""
        if timeout is None:
            timeout = self._group._timeout
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
        if not self._event.wait(max(seconds - (time.monotonic() - self._started), 0.0)):
            raise self._timed_out(seconds)
        if self._error is not None:
            raise self._error
        return True

    def _timed_out(self, seconds):
        ran = int((time.monotonic() - self._started) * 1000)
        err = DistBackendError(
            f'[Rank {self._group._ranks[self._group._rank]}] Watchdog caught collective operation timeout: '
            f'WorkMPI(SeqNum={self._seq}, OpType={self._optype}, NumelIn={self._numel}, '
            f'Timeout(ms)={int(seconds * 1000)}) ran for {ran} milliseconds before timing out. '
            'Another rank did not join this operation (it stopped, failed or called a different '
            'collective); the process group cannot be used any further.')
        if _state.broken is None:
            _state.broken = str(err).split(' ran for')[0]
        return err


ProcessGroup.__module__ = Work.__module__ = 'leafgrad.distributed'


class _Op:
    __slots__ = ('work', 'start', 'finish', 'requests', 'statuses')

    def __init__(self, work, start, finish, status):
        self.work = work
        self.start = start
        self.finish = finish
        self.requests = None
        self.statuses = None if status is None else [status]


_SPIN_SECONDS = 2e-4  # how long the progress thread polls without sleeping after the last progress


class _Progress(threading.Thread):
    """Starts queued operations in order and polls their MPI requests to completion."""

    def __init__(self, mpi):
        super().__init__(name='leafgrad-mpi-progress', daemon=True)
        self._mpi = mpi
        self._queue = collections.deque()
        self._cond = threading.Condition()
        self._stopping = False
        self.active = 0

    def submit(self, op):
        with self._cond:
            self._queue.append(op)
            self._cond.notify()

    def stop(self, timeout):
        """Finish what was queued (for at most ``timeout`` seconds), then end; False if an
        operation is still unfinished."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self.join(timeout)
        return not self.is_alive()

    def run(self):
        testall = self._mpi.Request.Testall
        active = []
        delay = 0.0
        idle_since = None
        while True:
            with self._cond:
                if not active:
                    while not self._queue and not self._stopping:
                        self._cond.wait()
                elif not self._queue and delay:
                    self._cond.wait(delay)  # a new operation wakes us early
                if self._stopping and not self._queue and not active:
                    return
                new = list(self._queue)
                self._queue.clear()
            progressed = bool(new)
            for op in new:
                try:
                    op.requests = op.start() or []
                except BaseException as e:  # noqa: BLE001  (delivered to the waiter)
                    _fail(op, e)
                    continue
                active.append(op)
            still = []
            for op in active:
                try:
                    done = testall(op.requests, op.statuses) if op.requests else True
                    if done and op.finish is not None:
                        op.finish()
                except BaseException as e:  # noqa: BLE001
                    _fail(op, e)
                    progressed = True
                    continue
                if done:
                    op.work._event.set()
                    progressed = True
                else:
                    still.append(op)
            active = still
            self.active = len(active)
            if progressed or not active:
                delay, idle_since = 0.0, None
            elif idle_since is None:
                idle_since = time.perf_counter()
            elif time.perf_counter() - idle_since < _SPIN_SECONDS:
                time.sleep(0)  # yield the GIL, poll again soon: a small operation completes in microseconds
            else:
                delay = min(max(delay * 2, 5e-5), 1e-3)


def _fail(op, error):
    if not isinstance(error, RuntimeError):
        error = DistBackendError(f'{type(error).__name__}: {error}')
    op.work._error = error
    op.work._event.set()


# ---- initialisation ----------------------------------------------------------------------
def import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("Distributed package doesn't have MPI built in: leafgrad.distributed runs on mpi4py "
                           "(pip install 'leafgrad[distributed]' installs it with Open MPI)") from e
    return MPI


def check_timeout(timeout):
    if not isinstance(timeout, timedelta):
        raise TypeError(f'Expected timeout argument to be of type datetime.timedelta, got {timeout}')


def start(backend, timeout, world_size, rank):
    """Initialise MPI (once per process) and make the default group."""
    MPI = import_mpi()
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
    provided = MPI.Query_thread()
    if provided < MPI.THREAD_SERIALIZED:
        raise RuntimeError("Used MPI implementation doesn't have the minimum level of threading support: "
                           'MPI_THREAD_SERIALIZED. This is required by c10d package')
    world = MPI.COMM_WORLD
    for given, actual, what in ((world_size, world.Get_size(), 'world_size'), (rank, world.Get_rank(), 'rank')):
        if given != -1 and given != actual:
            raise ValueError(
                f'init_process_group: {what}={given} was given, but MPI started this process with '
                f'{what} {actual}. leafgrad.distributed takes the rank and world size from the MPI '
                'launcher: start the program with mpiexec -n N (or give no rank and world_size).')
    comm = world.Dup()
    _state.mpi = MPI
    _state.broken = None
    _state.progress = _Progress(MPI)
    _state.progress.start()
    _state.world = ProcessGroup(comm, range(comm.Get_size()), timeout, '0')
    _state.groups = [_state.world]
    _export_environment(comm, MPI)
    _install_excepthook(_state.world.rank())
    if not _state.atexit_registered:
        atexit.register(_at_exit)  # runs before mpi4py's MPI_Finalize
        _state.atexit_registered = True


def _export_environment(comm, MPI):
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, as torchrun sets them."""
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    os.environ['RANK'] = str(comm.Get_rank())
    os.environ['WORLD_SIZE'] = str(comm.Get_size())
    os.environ['LOCAL_RANK'] = str(local.Get_rank())
    os.environ['LOCAL_WORLD_SIZE'] = str(local.Get_size())
    local.Free()


def _install_excepthook(rank):
    previous = sys.excepthook
    _state.excepthook = previous

    def excepthook(exc_type, exc, tb):
        import io
        buf = io.StringIO()
        saved, sys.stderr = sys.stderr, buf
        try:
            previous(exc_type, exc, tb)
        finally:
            sys.stderr = saved
        text = '\n'.join(f'[rank{rank}]: {line}' if line else '' for line in buf.getvalue().split('\n'))
        sys.stderr.write(text)
        if _state.world is not None and _state.world.size() > 1:
            sys.stderr.write(f'[rank{rank}]: leafgrad.distributed: an uncaught exception on rank {rank}; '
                             'calling MPI_Abort so that the other ranks stop instead of waiting for it\n')
            sys.stderr.flush()
            _state.mpi.COMM_WORLD.Abort(1)
        sys.stderr.flush()

    sys.excepthook = excepthook


def _at_exit():
    if _state.mpi is None:
        return
    if _state.progress is not None:
        _stop_progress()
    if _state.broken is not None:
        # MPI_Finalize would wait for the operation that never completed
        sys.stderr.write(f'leafgrad.distributed: exiting with an unfinished operation ({_state.broken}); '
                         'aborting the job\n')
        sys.stderr.flush()
        _state.mpi.COMM_WORLD.Abort(1)


def _stop_progress():
    progress, _state.progress = _state.progress, None
    timeout = _state.world._timeout.total_seconds() if _state.world is not None else DEFAULT_TIMEOUT.total_seconds()
    if _state.broken is None and not progress.stop(timeout):
        _state.broken = f'operations still pending after {int(timeout * 1000)} ms'


def stop(group):
    """destroy_process_group: the default group takes every group with it (what was queued
    completes first; communicators are left to MPI_Finalize, freeing one is collective)."""
    if group is None or group is _state.world:
        if _state.progress is not None:
            _stop_progress()
        for g in _state.groups:
            g._comm = None
        _state.world = None
        _state.groups = []
        if _state.excepthook is not None:
            sys.excepthook = _state.excepthook
            _state.excepthook = None
        return
    group._comm = None
    _state.groups.remove(group)


def split(ranks, timeout):
    """A new group of ``ranks`` (global, in order); every rank of the world must call it."""
    world = default_group()
    member = world.rank() in ranks
    MPI = _state.mpi
    holder = []

    def run():
        holder.append(world._comm.Split(0 if member else MPI.UNDEFINED, ranks.index(world.rank()) if member else 0))
        return []
    world.run('SPLIT', run)
    comm = holder[0]
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, timeout, str(len(_state.groups)))
    _state.groups.append(pg)
    return pg


def launcher_environment():
    """RANK and WORLD_SIZE from the MPI launcher's variables, for programs that read them
    before ``init_process_group`` (``int(os.environ.get('RANK', -1)) != -1``); nothing is set
    outside a launcher or where the variables are already set."""
    env = os.environ
    if 'RANK' in env:
        return
    for rank, size, local_rank, local_size in (
            ('OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_LOCAL_RANK',
             'OMPI_COMM_WORLD_LOCAL_SIZE'),
            ('PMI_RANK', 'PMI_SIZE', 'MPI_LOCALRANKID', 'MPI_LOCALNRANKS'),
            ('PMIX_RANK', 'PMIX_SIZE', 'PMIX_LOCAL_RANK', 'PMIX_LOCAL_SIZE')):
        if rank in env and size in env:
            env['RANK'] = env[rank]
            env['WORLD_SIZE'] = env[size]
            if local_rank in env and local_size in env:
                env.setdefault('LOCAL_RANK', env[local_rank])
                env.setdefault('LOCAL_WORLD_SIZE', env[local_size])
            return


def check_cpu(tensor):
    if type(tensor._data) is not _backend.numpy.ndarray:
        raise RuntimeError("CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support")


def warn(message, category=UserWarning):
    warnings.warn(message, category, stacklevel=3)
