"""Process groups on MPI: the default group, sub-groups, the progress thread and work handles.

Design note. Every process group wraps an MPI communicator (a duplicate of ``COMM_WORLD`` or
a split of it). An operation is started at once, as non-blocking MPI requests, by the thread
that calls it (MPI requires collectives to be started in the same order on every rank: here,
program order; every MPI call is made under one lock). Then someone must poll the requests:
the caller itself when it waits right away (a synchronous call: no hand-over between threads,
which costs milliseconds on a loaded machine), otherwise the *progress thread*, so that the
operation advances while the program computes (DDP's buckets during backward). Whoever waits
on a Work takes it back from the progress thread and polls it. A waiting caller tests in a
tight loop for 0.2 ms (a small all-reduce completes within microseconds of the peer's call),
the progress thread yields the GIL between tests for as long; then both sleep 50 µs, doubling
up to 1 ms, so that a rank waiting on a collective leaves its core to the computation it may
overlap.

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
import io
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
    def submit(self, optype, start, finish=None, result=(), numel=0, status=None, poll_in_background=True):
        """Start an operation now, in this thread: ``start()`` posts its MPI requests and
        returns them; ``finish()`` runs once they have completed. The progress thread polls
        them (``poll_in_background``), or whoever waits on the Work."""
        if _state.broken is not None:
            raise DistBackendError(f'[Rank {_state.world._rank}] this process group cannot run {optype}: an '
                                   f'earlier collective timed out ({_state.broken})')
        progress = _state.progress
        if progress is None:
            raise ValueError('Invalid process group specified')  # destroyed
        self._seq += 1
        work = Work(self, self._seq, optype, numel, result)
        op = work._op = _Op(work, finish, status)
        with progress.mpi_lock:  # (starts in program order, whichever thread submits)
            op.requests = start() or []
        if poll_in_background:
            progress.adopt(op)
        return work

    def run(self, optype, start, finish=None, result=(), numel=0, async_op=False):
        work = self.submit(optype, start, finish, result, numel, poll_in_background=async_op)
        if async_op:
            return work
        work.wait()
        return None


class Work:
    """The handle of an operation that may still be running (``async_op=True``)."""
    __slots__ = ('_group', '_seq', '_optype', '_numel', '_result', '_event', '_error', '_source', '_started', '_op')

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
        self._op = None

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
        timeout (the group's unless given) raise ``DistBackendError``. The waiting thread
        polls the operation itself (taking it from the progress thread): no hand-over
        between threads on the way back."""
        if timeout is None:
            timeout = self._group._timeout
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
        deadline = self._started + seconds
        op = self._op
        progress = _state.progress
        if not self._event.is_set() and op is not None and progress is not None and \
                (not op.in_background or progress.release(op)):
            if not op.poll_until(deadline, progress.mpi_lock):
                raise self._timed_out(seconds)
        elif not self._event.wait(max(deadline - time.monotonic(), 0.0)):
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

_SPIN_SECONDS = 2e-4  # how long a poller tests without sleeping after the last progress


class _Op:
    """An operation's MPI requests, polled by one thread at a time (the progress thread, or
    the thread waiting for it), and what to do once they have completed."""
    __slots__ = ('work', 'finish', 'requests', 'statuses', 'in_background')

    def __init__(self, work, finish, status):
        self.work = work
        self.finish = finish
        self.in_background = False  # polled by the progress thread
        self.requests = None
        self.statuses = None if status is None else [status]

    def test(self, mpi_lock):
        """True once complete (finished, or failed: the error is kept for the waiter)."""
        try:
            if self.requests:
                with mpi_lock:
                    if not _state.mpi.Request.Testall(self.requests, self.statuses):
                        return False
            if self.finish is not None:
                self.finish()
        except BaseException as e:  # noqa: BLE001  (delivered to the waiter)
            if not isinstance(e, RuntimeError):
                e = DistBackendError(f'{type(e).__name__}: {e}')
            self.work._error = e
        self.work._event.set()
        return True

    def poll_until(self, deadline, mpi_lock):
        """Test until complete (True) or past ``deadline`` (False): in a tight loop for a
        moment, then sleeping 50 µs, doubling up to 1 ms, so that a long wait leaves the core
        to the other threads."""
        spin_until = time.perf_counter() + _SPIN_SECONDS
        delay = 5e-5
        while not self.test(mpi_lock):
            if time.monotonic() > deadline:
                return False
            if time.perf_counter() < spin_until:
                pass  # (a small operation completes within microseconds of the peer's call)
            else:
                time.sleep(delay)
                delay = min(delay * 2, 1e-3)
        return True


class _Progress(threading.Thread):
    """Polls the requests of operations nobody waits for yet (``async_op=True``, DDP's
    buckets), so that they progress while the program computes. Every MPI call is made under
    ``mpi_lock`` (MPI_THREAD_SERIALIZED suffices)."""

    def __init__(self, mpi):
        super().__init__(name='leafgrad-mpi-progress', daemon=True)
        self.mpi_lock = threading.Lock()
        self._ops = []
        self._cond = threading.Condition()
        self._stopping = False

    @property
    def active(self):
        return len(self._ops)

    def adopt(self, op):
        with self._cond:
            op.in_background = True
            self._ops.append(op)
            self._cond.notify()

    def release(self, op):
        """Take ``op`` back (True), unless it has completed or is completing."""
        with self._cond:
            if op in self._ops:
                self._ops.remove(op)
                op.in_background = False
                return True
        return False

    def stop(self, timeout):
        """Finish what is being polled (for at most ``timeout`` seconds), then end; False if an
        operation is still unfinished."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self.join(timeout)
        return not self.is_alive()

    def run(self):
        delay = 0.0
        idle_since = None
        while True:
            with self._cond:
                if not self._ops:
                    while not self._ops and not self._stopping:
                        self._cond.wait()
                    if not self._ops:
                        return
                elif delay:
                    self._cond.wait(delay)  # a new operation wakes us early
                # tested under the condition, so that release() never hands over an op mid-test
                done = [op for op in self._ops if op.test(self.mpi_lock)]
                for op in done:
                    self._ops.remove(op)
                busy = bool(self._ops)
            if done or not busy:
                delay, idle_since = 0.0, None
            elif idle_since is None:
                idle_since = time.perf_counter()
            elif time.perf_counter() - idle_since < _SPIN_SECONDS:
                time.sleep(0)
            else:
                delay = min(max(delay * 2, 5e-5), 1e-3)


# ---- initialisation ----------------------------------------------------------------------
def import_mpi():
    try:
        from mpi4py import MPI  # (optional; importing it starts MPI: loaded when first used)
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
    """A tensor MPI can send: on the CPU, or on a GPU (staged through the host, as gloo stages
    CUDA tensors: collectives._store); not a meta tensor, which has no data."""
    data = tensor._data
    if type(data) is not _backend.numpy.ndarray and not _backend.on_gpu(data):
        raise RuntimeError("CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support")


def warn(message, category=UserWarning):
    warnings.warn(message, category, stacklevel=3)
