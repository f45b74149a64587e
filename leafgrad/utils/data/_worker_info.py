"""What the main process and the worker processes (``_workers.py``) share: the fetch of one batch
and the worker's identity (``get_worker_info``). Apart from both, so that neither imports the
other: the loader imports the workers only when it starts them."""
from ._collate import default_collate
from .dataset import gathered_rows


def fetch(dataset, indices, collate_fn):
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


def _set_worker_info(info):
    global _worker_info
    _worker_info = info
