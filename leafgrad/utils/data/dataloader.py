"""DataLoader: batches from a dataset, in the main process or in worker processes.

With ``num_workers > 0`` each worker is a separate process (``multiprocessing``; ``fork`` where
available, so the dataset need not be picklable). The main process hands out lists of indices
round-robin, keeps ``prefetch_factor`` batches in flight per worker and yields results in
sampler order. Tensors cross the process boundary as NumPy arrays (leafgrad never pickles
tensors) and are re-wrapped in the main process. An exception in a worker is re-raised in the
main process with its type and the worker's traceback.
"""
import itertools
import multiprocessing
import queue
import random
import time
import traceback
from multiprocessing import shared_memory

import numpy as np

from ... import creation
from ...tensor import Tensor
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, gathered_rows
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def _fetch(dataset, indices, collate_fn):
    """One batch of a map-style dataset, as PyTorch's fetcher makes it: the samples from
    ``dataset.__getitems__(indices)`` where the dataset has it, else one ``dataset[i]`` per
    index, then collated. A TensorDataset with the default collation is gathered at once."""
    if collate_fn is default_collate:
        batch = gathered_rows(dataset, indices)
        if batch is not None:
            return batch
    getitems = getattr(dataset, '__getitems__', None)
    return collate_fn(getitems(indices) if getitems else [dataset[i] for i in indices])


class WorkerInfo:
    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return (f'WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, '
                f'dataset={self.dataset!r})')


_worker_info = None


def get_worker_info():
    """In a worker process, its WorkerInfo; None in the main process."""
    return _worker_info


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


def _pack(obj):
    if isinstance(obj, Tensor):
        return _PackedTensor(np.asarray(obj._data), obj._requires_grad)
    if isinstance(obj, dict):
        return type(obj)((k, _pack(v)) for k, v in obj.items())
    if isinstance(obj, tuple) and hasattr(obj, '_fields'):
        return type(obj)(*(_pack(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_pack(v) for v in obj)
    return obj


def _unpack(obj):
    if isinstance(obj, _PackedTensor):
        return Tensor._wrap(obj.unpack(), obj.requires_grad)
    if isinstance(obj, dict):
        return type(obj)((k, _unpack(v)) for k, v in obj.items())
    if isinstance(obj, tuple) and hasattr(obj, '_fields'):
        return type(obj)(*(_unpack(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unpack(v) for v in obj)
    return obj


def _discard(obj):
    """Free the shared memory held by a packed batch that will not be used."""
    if isinstance(obj, _PackedTensor):
        if obj.shm is not None:
            try:
                obj.unpack()
            except FileNotFoundError:
                pass
    elif isinstance(obj, dict):
        for v in obj.values():
            _discard(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _discard(v)


class _WorkerError:
    def __init__(self, exc, worker_id):
        self.exc_type = type(exc)
        self.message = (f'Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\n'
                        f'Original {traceback.format_exc()}')

    def reraise(self):
        try:
            err = self.exc_type(self.message)
        except Exception:
            err = RuntimeError(self.message)
        raise err


def _worker_loop(dataset, index_queue, result_queue, collate_fn, auto_collation, seed, worker_id, num_workers,
                 init_fn, iterable, batch_size, drop_last):
    global _worker_info
    creation.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception as e:
        result_queue.put((None, _WorkerError(e, worker_id)))
        return
    stream = iter(dataset) if iterable else None
    while True:
        task = index_queue.get()
        if task is None:
            break
        idx, indices = task
        try:
            if iterable:
                items = list(itertools.islice(stream, batch_size if auto_collation else 1))
                if not items or (auto_collation and drop_last and len(items) < batch_size):
                    result_queue.put((idx, _Exhausted(worker_id)))
                    continue
                data = collate_fn(items) if auto_collation else collate_fn(items[0])
            elif auto_collation:
                data = _fetch(dataset, indices, collate_fn)
            else:
                data = collate_fn(dataset[indices])
            result_queue.put((idx, _pack(data)))
        except Exception as e:
            result_queue.put((idx, _WorkerError(e, worker_id)))


class _Exhausted:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device='', in_order=True):
        if num_workers < 0:
            raise ValueError('num_workers option should be non-negative; use num_workers=0 to disable '
                             'multiprocessing.')
        if timeout < 0:
            raise ValueError('timeout option should be non-negative')
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError('prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 '
                             'to enable multiprocessing, otherwise set prefetch_factor to None.')
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified shuffle option, but got '
                                 f'shuffle={shuffle}')
            if sampler is not None:
                raise ValueError(f'DataLoader with IterableDataset: expected unspecified sampler option, but got '
                                 f'sampler={sampler}')
            if batch_sampler is not None:
                raise ValueError('DataLoader with IterableDataset: expected unspecified batch_sampler option, but '
                                 f'got batch_sampler={batch_sampler}')
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError('sampler option is mutually exclusive with shuffle')
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError('batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and '
                                 'drop_last')
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError('batch_size=None option disables auto-batching and is mutually exclusive with '
                             'drop_last')
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler())

    def __iter__(self):
        # As in PyTorch, every epoch first draws the workers' base seed from the loader's generator
        # (in single-process mode too), so the shuffling order does not depend on num_workers.
        base_seed = int(creation.randint(0, 2 ** 62, (1,), generator=self.generator)._data[0])
        if self.num_workers == 0:
            return self._single_process()
        return self._multi_process(base_seed)

    # ---- in the main process -----------------------------------------------------------------
    def _single_process(self):
        if self._iterable:
            stream = iter(self.dataset)
            if not self._auto_collation:
                for item in stream:
                    yield self.collate_fn(item)
                return
            while True:
                items = list(itertools.islice(stream, self.batch_size))
                if not items or (self.drop_last and len(items) < self.batch_size):
                    return
                yield self.collate_fn(items)
        for indices in self._index_sampler():
            if self._auto_collation:
                yield _fetch(self.dataset, indices, self.collate_fn)
            else:
                yield self.collate_fn(self.dataset[indices])

    # ---- with worker processes -------------------------------------------------------------
    def _context(self):
        ctx = self.multiprocessing_context
        if isinstance(ctx, str):
            return multiprocessing.get_context(ctx)
        if ctx is not None:
            return ctx
        methods = multiprocessing.get_all_start_methods()
        return multiprocessing.get_context('fork' if 'fork' in methods else methods[0])

    def _multi_process(self, base_seed):
        ctx = self._context()
        # One resource tracker for the main process and its workers: a worker registers the
        # shared-memory blocks it creates, the main process unregisters them when it unlinks.
        from multiprocessing import resource_tracker
        resource_tracker.ensure_running()
        result_queue = ctx.Queue()
        index_queues, workers = [], []
        for wid in range(self.num_workers):
            iq = ctx.Queue()
            w = ctx.Process(target=_worker_loop, daemon=True,
                            args=(self.dataset, iq, result_queue, self.collate_fn, self._auto_collation,
                                  base_seed + wid, wid, self.num_workers, self.worker_init_fn, self._iterable,
                                  self.batch_size, self.drop_last))
            w.start()
            index_queues.append(iq)
            workers.append(w)
        try:
            yield from self._drive(index_queues, result_queue, workers)
        finally:
            self._shutdown(index_queues, result_queue, workers)

    @staticmethod
    def _shutdown(index_queues, result_queue, workers):
        for iq in index_queues:
            iq.put(None)
        # Drain what the workers still send (an early `break`), so that they can exit, and free
        # the shared memory of batches nobody will read.
        deadline = time.monotonic() + 10
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

    def _drive(self, index_queues, result_queue, workers):
        n = self.num_workers
        if self._iterable:
            tasks = ((i, None) for i in itertools.count())
        else:
            tasks = enumerate(self._index_sampler())
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

        for _ in range(self.prefetch_factor * n):
            if not send():
                break
        try:
            timeout = self.timeout if self.timeout > 0 else None
            while next_yield < next_send:
                while next_yield not in pending:
                    try:
                        idx, data = result_queue.get(timeout=timeout if timeout else 5.0)
                    except queue.Empty:
                        if timeout:
                            raise RuntimeError(f'DataLoader timed out after {self.timeout} seconds')
                        dead = [w.pid for w in workers if not w.is_alive()]
                        if dead:
                            raise RuntimeError(f'DataLoader worker (pid(s) {", ".join(map(str, dead))}) exited '
                                               'unexpectedly')
                        continue
                    if isinstance(data, _WorkerError):
                        data.reraise()
                    pending[idx] = data
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


__all__ = ['DataLoader', 'get_worker_info', 'WorkerInfo']
