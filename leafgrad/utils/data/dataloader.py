"""DataLoader: batches from a dataset, in the main process or, with ``num_workers > 0``, in
worker processes (``_workers.py``)."""
import itertools
import warnings
import weakref
from collections.abc import Mapping

from ... import backend, creation
from ...tensor import Tensor
from ._collate import default_collate, default_convert
from ._worker_info import WorkerInfo, fetch, get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def _can_pin():
    """Can batches be pinned? Not without a GPU: then PyTorch's warning, and they are not."""
    if backend.cuda_available():
        return True
    warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                  "won't be used.", UserWarning, stacklevel=3)
    return False


def pin_memory(batch):
    """A batch with each tensor in it copied to page-locked memory (``Tensor.pin_memory``), through
    lists, tuples, named tuples and mappings, and objects with their own ``pin_memory()``."""
    if isinstance(batch, Tensor) or (callable(getattr(batch, 'pin_memory', None)) and not isinstance(batch, type)):
        return batch.pin_memory()
    if isinstance(batch, str | bytes):
        return batch
    if isinstance(batch, Mapping):
        return type(batch)({k: pin_memory(v) for k, v in batch.items()}) if type(batch) is not dict else \
            {k: pin_memory(v) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, '_fields'):
        return type(batch)(*(pin_memory(v) for v in batch))
    if isinstance(batch, tuple | list):
        return type(batch)(pin_memory(v) for v in batch)
    return batch


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
        if num_workers > 0 and prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError('prefetch_factor option should be non-negative')
        if persistent_workers and num_workers == 0:
            raise ValueError('persistent_workers option needs num_workers > 0')
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self._worker_pool = None  # (persistent_workers: the workers, from the first epoch on)
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
        # (in single-process mode too), so the shuffling order does not depend on num_workers;
        # persistent workers draw it once, when they start.
        pin = self.pin_memory and _can_pin()
        if self.num_workers == 0:
            self._draw_base_seed()
            batches = self._single_process()
        else:
            # (the worker machinery, and multiprocessing with it, loads only for loaders that use it:
            # ~30 ms of importing that a single-process loader does not pay)
            from ._workers import WorkerPool, iterate_with_workers  # (loaded when first used: see above)
            if not self.persistent_workers:
                batches = iterate_with_workers(self, self._draw_base_seed())
            else:
                if self._worker_pool is None or self._worker_pool.closed:  # (closed: a worker died)
                    self._worker_pool = WorkerPool(self, self._draw_base_seed())
                    # stopped when the loader is collected, or at exit
                    weakref.finalize(self, self._worker_pool.shutdown)
                batches = self._worker_pool.epoch(self)
        return map(pin_memory, batches) if pin else batches

    def _draw_base_seed(self):
        return int(creation.empty((), dtype=backend.int64).random_(generator=self.generator).item())

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
                yield fetch(self.dataset, indices, self.collate_fn)
            else:
                yield self.collate_fn(self.dataset[indices])


__all__ = ['DataLoader', 'get_worker_info', 'WorkerInfo']
