"""DistributedSampler: each rank's share of a dataset, the same index lists as PyTorch's.

With ``shuffle`` the permutation is PyTorch's: ``randperm(n)`` on a generator seeded with
``seed + epoch``, so that a job sees the same examples in the same order as under PyTorch.
"""
import math

from ... import creation
from .sampler import Sampler


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` visits: every
    ``num_replicas``-th of a (shuffled) index list, padded by repeating its start so that
    every rank gets as many (or, with ``drop_last``, trimmed to a multiple). Call
    ``set_epoch(e)`` before each epoch for a new shuffle."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist  # (loaded when first used: only for the default replicas and rank)
            if not dist.is_available():
                raise RuntimeError('Requires distributed package to be available')
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f'Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]')
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = creation.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = creation.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f'Number of indices ({len(indices)}) does not match total_size ({self.total_size})')
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f'Number of subsampled indices ({len(indices)}) does not match num_samples '
                                 f'({self.num_samples})')
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
