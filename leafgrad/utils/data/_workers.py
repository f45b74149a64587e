"""DataLoader's worker processes (``num_workers > 0``), loaded only by loaders that use them.

Each worker is a separate process (``multiprocessing``; ``fork`` where available, so the dataset
need not be picklable). The main process hands out lists of indices round-robin, keeps
``prefetch_factor`` batches in flight per worker and yields results in sampler order. Tensors
cross the process boundary as NumPy arrays (large ones through shared memory; leafgrad never
pickles tensors) and are re-wrapped in the main process. An exception in a worker is re-raised
in the main process with its type and the worker's traceback. A loader with
``persistent_workers`` keeps its workers (a ``WorkerPool``) from its first epoch until it is
collected; each later epoch begins by resuming them (``_Resume``).
"""
import itertools
import multiprocessing
import queue
import random
import signal
import time
import traceback
import weakref
from multiprocessing import connection as mp_connection, shared_memory, resource_tracker

import numpy as np

from ... import creation
from ...tensor import Tensor
from ._worker_info import WorkerInfo, _set_worker_info, fetch


_SHM_MIN_BYTES = 1 << 16


class _PackedTensor:
    """A tensor on its way between processes: its array (large ones in a shared-memory block,
    which the main process copies out and unlinks) and its requires_grad flag."""
    __slots__ = ('data', 'shm', 'shape', 'dtype', 'requires_grad')

    def __init__(self, array, requires_grad):
        self.requires_grad = requires_grad
        self.shm = None
        self.data = array
        if array.nbytes >= _SHM_MIN_BYTES:
            try:
                block = shared_memory.SharedMemory(create=True, size=array.nbytes)
            except OSError:  # no /dev/shm: fall back to the pipe
                return
            np.ndarray(array.shape, array.dtype, buffer=block.buf)[...] = array
            self.shm, self.shape, self.dtype, self.data = block.name, array.shape, array.dtype.str, None
            block.close()

    def unpack(self):
        if self.shm is None:
            return self.data
        block = shared_memory.SharedMemory(name=self.shm)
        try:
            return np.ndarray(self.shape, np.dtype(self.dtype), buffer=block.buf).copy()
        finally:
            block.close()
            block.unlink()


def _map_leaves(obj, leaf_type, fn):
    """``obj`` with every ``leaf_type`` inside it (through dicts, named tuples, lists and
    tuples, the containers a batch is collated into) replaced by ``fn(leaf)``."""
    if isinstance(obj, leaf_type):
        return fn(obj)
    if isinstance(obj, dict):
        return type(obj)((k, _map_leaves(v, leaf_type, fn)) for k, v in obj.items())
    if isinstance(obj, tuple) and hasattr(obj, '_fields'):
        return type(obj)(*(_map_leaves(v, leaf_type, fn) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_leaves(v, leaf_type, fn) for v in obj)
    return obj


def _pack(obj):
    return _map_leaves(obj, Tensor, lambda t: _PackedTensor(np.asarray(t._data), t._requires_grad))


def _unpack(obj):
    return _map_leaves(obj, _PackedTensor, lambda p: Tensor._wrap(p.unpack(), p.requires_grad))


def _discard(obj):
    """Free the shared memory held by a packed batch that will not be used."""
    _map_leaves(obj, _PackedTensor, _free_block)


def _free_block(packed):
    if packed.shm is not None:
        try:
            packed.unpack()  # (copies out, then unlinks the block)
        except FileNotFoundError:
            pass


class _KeyErrorMessage(str):
    """A KeyError's message: KeyError prints the repr of its argument, which would show the
    worker's traceback as one quoted line."""
    __slots__ = ()

    def __repr__(self):
        return self


class _WorkerError:
    """An exception raised in a worker, re-raised in the main process as PyTorch re-raises it:
    the same type, with "Caught X in DataLoader worker process N." and the worker's traceback."""

    def __init__(self, exc, worker_id):
        self.exc_type = type(exc)
        self.message = (f'Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\n'
                        f'Original {"".join(traceback.format_exception(exc))}')

    def reraise(self):
        message = self.message
        if self.exc_type is KeyError:
            message = _KeyErrorMessage(message)
        elif getattr(self.exc_type, 'message', None):  # an exception that takes message= (as PyTorch handles)
            raise self.exc_type(message=message)
        try:
            err = self.exc_type(message)
        except Exception:
            raise RuntimeError(message) from None
        raise err


def _numpy_seed(base_seed, worker_id):
    """The four 32-bit words PyTorch's workers seed ``numpy.random`` with (its _generate_state: a
    SeedSequence-style hash of the worker id and the base seed)."""
    mask = 0xFFFFFFFF
    shift = 16
    multiplier_a = [0x43B0D7E5]

    def hashed(value):
        value = (value ^ multiplier_a[0]) & mask
        multiplier_a[0] = (multiplier_a[0] * 0x931E8875) & mask
        value = (value * multiplier_a[0]) & mask
        return (value ^ (value >> shift)) & mask

    def mix(x, y):
        result = (((0xCA01F9DD * x) & mask) - ((0x4973F715 * y) & mask)) & mask
        return (result ^ (result >> shift)) & mask

    pool = [hashed(v) for v in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashed(pool[src]))
    multiplier_b = 0x8B51F9DD
    state = []
    for value in pool:
        value = (value ^ multiplier_b) & mask
        multiplier_b = (multiplier_b * 0x58F38DED) & mask
        value = (value * multiplier_b) & mask
        state.append((value ^ (value >> shift)) & mask)
    return state


def _worker_loop(*args):
    try:
        _work(*args)
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group: the main process reports it, once


def _work(dataset, index_queue, result_queue, collate_fn, auto_collation, seed, worker_id, num_workers,
          init_fn, iterable, batch_size, drop_last):
    # seeded as PyTorch seeds its workers: base seed + worker id for random and leafgrad,
    # _generate_state's four words for numpy.random
    random.seed(seed)
    creation.manual_seed(seed)
    np.random.seed(_numpy_seed(seed - worker_id, worker_id))
    _set_worker_info(WorkerInfo(worker_id, num_workers, seed, dataset))
    init_error = stream = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        stream = iter(dataset) if iterable else None
    except Exception as e:
        init_error = _WorkerError(e, worker_id)  # the answer to the first task, as in PyTorch
    while True:
        task = index_queue.get()
        if task is None:
            break
        if isinstance(task, _Resume):  # a new epoch of persistent workers: the dataset's stream anew
            if iterable:
                try:
                    stream = iter(dataset)
                except Exception as e:
                    init_error = _WorkerError(e, worker_id)
            result_queue.put((task, None))
            continue
        idx, indices = task
        if init_error is not None:
            result_queue.put((idx, init_error))
            init_error = None
            continue
        try:
            if iterable:
                items = list(itertools.islice(stream, batch_size if auto_collation else 1))
                if not items or (auto_collation and drop_last and len(items) < batch_size):
                    result_queue.put((idx, _Exhausted(worker_id)))
                    continue
                data = collate_fn(items) if auto_collation else collate_fn(items[0])
            elif auto_collation:
                data = fetch(dataset, indices, collate_fn)
            else:
                data = collate_fn(dataset[indices])
            result_queue.put((idx, _pack(data)))
        except Exception as e:
            result_queue.put((idx, _WorkerError(e, worker_id)))


class _Resume:
    """PyTorch's _ResumeIteration: sent to each persistent worker at the start of every epoch after
    the first, and echoed back after the results of every task of the epoch before, so that the
    main process can drop those (an epoch left early) before the new epoch's tasks go out."""
    __slots__ = ()


class _Exhausted:
    def __init__(self, worker_id):
        self.worker_id = worker_id


def _context(loader):
    ctx = loader.multiprocessing_context
    if isinstance(ctx, str):
        return multiprocessing.get_context(ctx)
    if ctx is not None:
        return ctx
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context('fork' if 'fork' in methods else methods[0])

def iterate_with_workers(loader, base_seed):
    """The batches of one epoch of ``loader``, made by ``loader.num_workers`` worker processes
    started for it and stopped at its end."""
    pool = WorkerPool(loader, base_seed)
    try:
        yield from pool.epoch(loader)
    finally:
        pool.shutdown()


class WorkerPool:
    """A loader's worker processes and their queues. A loader with ``persistent_workers`` keeps one
    for all its epochs (PyTorch keeps its _MultiProcessingDataLoaderIter): worker_init_fn runs once
    per worker, and each worker keeps its random state from epoch to epoch."""

    def __init__(self, loader, base_seed):
        ctx = _context(loader)
        # One resource tracker for the main process and its workers: a worker registers the
        # shared-memory blocks it creates, the main process unregisters them when it unlinks.
        resource_tracker.ensure_running()
        self.persistent = loader.persistent_workers
        self.result_queue = ctx.Queue()
        self.index_queues, self.workers = [], []
        self._epochs = 0  # epochs begun: every one after the first starts by resuming the workers
        self._current = None  # the epoch being iterated
        for wid in range(loader.num_workers):
            iq = ctx.Queue()
            w = ctx.Process(target=_worker_loop, daemon=True,
                            args=(loader.dataset, iq, self.result_queue, loader.collate_fn, loader._auto_collation,
                                  base_seed + wid, wid, loader.num_workers, loader.worker_init_fn, loader._iterable,
                                  loader.batch_size, loader.drop_last))
            w.start()
            self.index_queues.append(iq)
            self.workers.append(w)

    @property
    def closed(self):
        return not self.index_queues

    def epoch(self, loader):
        """The batches of a new epoch. An epoch still under way ends here (as PyTorch resets its one
        iterator: a loop over the loader inside a loop over it ends the outer one)."""
        current = self._current and self._current()
        if current is not None:
            current.close()
        batches = self._epoch(loader)
        self._current = weakref.ref(batches)  # (not the epoch itself: it holds the loader, which holds this)
        return batches

    def _epoch(self, loader):
        try:
            if self._epochs:
                self._resume(loader.timeout)
            self._epochs += 1
            error = yield from _drive(loader, self.index_queues, self.result_queue, self.workers)
        except Exception:
            # A dead worker, a timeout: the others are stopped, not awaited, so that the error
            # reaches the caller at once; a persistent loader starts new workers next epoch.
            self.shutdown(patience=0)
            raise
        if error is not None:
            # An exception in a worker: persistent workers live on, as PyTorch's (the next epoch's
            # resume drops what this one left in flight).
            if not self.persistent:
                self.shutdown(patience=0)
            error.reraise()

    def _resume(self, timeout):
        for iq in self.index_queues:
            iq.put(_Resume())
        acknowledged = 0
        while acknowledged < len(self.workers):
            idx, data = _receive(self.result_queue, self.workers, timeout)
            if isinstance(idx, _Resume):
                acknowledged += 1
            else:
                _discard(data)  # a batch of an epoch left early

    def shutdown(self, patience=10):
        _shutdown(self.index_queues, self.result_queue, self.workers, patience)


def _shutdown(index_queues, result_queue, workers, patience=10):
    if not index_queues:
        return  # (already shut down)
    for iq in index_queues:
        iq.put(None)
    if not patience:
        for w in workers:
            if w.is_alive():
                w.terminate()
        for w in workers:
            w.join(timeout=1)
    # Drain what the workers still send (an early `break`), so that they can exit, and free
    # the shared memory of batches nobody will read.
    deadline = time.monotonic() + patience
    while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
        try:
            _, data = result_queue.get(timeout=0.05)
        except queue.Empty:
            continue
        _discard(data)
    while True:
        try:
            _, data = result_queue.get_nowait()
        except (queue.Empty, OSError, ValueError):
            break
        _discard(data)
    for w in workers:
        w.join(timeout=1)
        if w.is_alive():
            w.terminate()
    for q in index_queues + [result_queue]:
        q.cancel_join_thread()
        q.close()
    index_queues.clear()


def _drive(loader, index_queues, result_queue, workers):
    """Yields the epoch's batches in order; returns the first exception a worker sent, if any."""
    n = loader.num_workers
    if loader._iterable:
        tasks = ((i, None) for i in itertools.count())
    else:
        tasks = enumerate(loader._index_sampler())
    active = set(range(n))
    cycle = itertools.cycle(range(n))
    pending = {}
    next_send, next_yield = 0, 0

    def send():
        nonlocal next_send
        if not active:
            return False
        for _ in range(n):
            wid = next(cycle)
            if wid in active:
                break
        else:
            return False
        try:
            idx, indices = next(tasks)
        except StopIteration:
            return False
        index_queues[wid].put((idx, indices))
        next_send = idx + 1
        return True

    for _ in range(loader.prefetch_factor * n):
        if not send():
            break
    try:
        while next_yield < next_send:
            while next_yield not in pending:
                idx, data = _receive(result_queue, workers, loader.timeout)
                if isinstance(data, _WorkerError):
                    return data
                pending[idx] = data
            if mp_connection.wait([w.sentinel for w in workers], 0):  # a batch at hand: still, a death first
                _receive(result_queue, workers, 0)
            data = pending.pop(next_yield)
            next_yield += 1
            if isinstance(data, _Exhausted):
                active.discard(data.worker_id)
            send()  # keep the pipeline full (skips exhausted workers)
            if not isinstance(data, _Exhausted):
                yield _unpack(data)
    finally:
        for data in pending.values():  # received out of order, never yielded
            _discard(data)


def _receive(result_queue, workers, timeout):
    """The next (index, data) a worker sent. Waits on the queue and on the workers' sentinels
    at once, so that a worker that dies (killed, or exiting with an error) is reported at once,
    as PyTorch's SIGCHLD handler reports it; ``timeout`` (seconds, 0: none) as PyTorch's."""
    reader = getattr(result_queue, '_reader', None)  # (the queue's end of its pipe)
    deadline = time.monotonic() + timeout if timeout > 0 else None
    while True:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        if reader is None:  # not CPython's Queue: poll, ten times a second
            try:
                return result_queue.get(timeout=0.1 if left is None else min(left, 0.1))
            except queue.Empty:
                ready = []
        else:
            ready = mp_connection.wait([reader] + [w.sentinel for w in workers], left)
            if ready == [reader]:
                return result_queue.get()
        dead = [w for w in workers if not w.is_alive()]  # (a worker ends only when told to)
        if dead:
            raise _died(dead)
        if deadline is not None and time.monotonic() >= deadline:
            raise RuntimeError(f'DataLoader timed out after {timeout} seconds')


def _died(dead):
    """PyTorch's error for workers that ended while the loader still needed them; its cause
    says how the first one ended."""
    error = RuntimeError(f'DataLoader worker (pid(s) {", ".join(str(w.pid) for w in dead)}) exited unexpectedly')
    code = dead[0].exitcode
    if code is not None and code < 0:
        error.__cause__ = RuntimeError(f'DataLoader worker (pid {dead[0].pid}) is killed by signal: '
                                       f'{signal.strsignal(-code)}. ')
    elif code:
        error.__cause__ = RuntimeError(f'DataLoader worker (pid {dead[0].pid}) exited unexpectedly with exit code '
                                       f'{code}. Details are lost due to multiprocessing. Rerunning with '
                                       'num_workers=0 may give better error trace.')
    return error
