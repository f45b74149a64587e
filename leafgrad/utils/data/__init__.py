"""leafgrad.utils.data: datasets, samplers and the DataLoader."""
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from ._collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .distributed import DistributedSampler

__all__ = ['Dataset', 'IterableDataset', 'TensorDataset', 'Subset', 'ConcatDataset', 'ChainDataset', 'StackDataset',
           'random_split', 'Sampler',
           'SequentialSampler', 'RandomSampler', 'SubsetRandomSampler', 'WeightedRandomSampler', 'BatchSampler',
           'DistributedSampler', 'DataLoader', 'default_collate', 'default_convert', 'get_worker_info']
