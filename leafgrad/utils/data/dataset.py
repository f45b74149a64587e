"""Datasets: map-style Dataset, TensorDataset, Subset, ConcatDataset, StackDataset, IterableDataset,
ChainDataset, random_split."""
import bisect
import math
import warnings

import numpy as np

from ... import creation
from ...autograd.grad_mode import is_grad_enabled
from ...tensor import Tensor


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and (usually) ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError('Subclasses of Dataset should implement __getitem__.')

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset given by ``__iter__`` (a stream); each DataLoader worker iterates its own copy."""

    def __iter__(self):
        raise NotImplementedError('Subclasses of IterableDataset should implement __iter__.')

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other."""

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError('ChainDataset only supports IterableDataset')
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError('ChainDataset only supports IterableDataset')
            total += len(d)
        return total


class StackDataset(Dataset):
    """Datasets of one length side by side: item i is the tuple (or, given by keyword, the dict)
    of their items i."""

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError('Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like '
                                 'input/output, but both types are given.')
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError('Size mismatch between datasets')
            self.datasets = args
        elif kwargs:
            datasets = list(kwargs.values())
            self._length = len(datasets[0])
            if any(self._length != len(dataset) for dataset in datasets):
                raise ValueError('Size mismatch between datasets')
            self.datasets = kwargs
        else:
            raise ValueError('At least one dataset should be passed')

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __len__(self):
        return self._length


class TensorDataset(Dataset):
    """Samples are the rows of each tensor, indexed along their first dimension."""

    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError('Size mismatch between tensors')
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        """A batch of samples (the DataLoader's fetcher calls this), batched through the parent
        dataset's own ``__getitems__`` when it has one, as in PyTorch."""
        getitems = getattr(self.dataset, '__getitems__', None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def gathered_rows(dataset, indices):
    """What ``default_collate([dataset[i] for i in indices])`` gives when ``dataset`` is a
    TensorDataset, or a Subset of one (``random_split``): a list with, per tensor, its rows at
    ``indices``. One gather per tensor instead of a view per sample and a stack of them.
    None for any other dataset, for an index that is not an in-range integer, when the stack
    would be recorded (a tensor requires grad) or for tensors on the GPU: the per-sample path
    then runs (and raises its errors)."""
    while type(dataset) is Subset:
        try:
            indices = [dataset.indices[i] for i in indices]
        except (IndexError, TypeError):
            return None
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or (is_grad_enabled() and any(t.requires_grad for t in dataset.tensors)):
        return None
    if any(type(t._data) is not np.ndarray for t in dataset.tensors):
        return None  # (GPU arrays: the per-sample path)
    rows = np.asarray(indices)
    n = len(dataset)
    if rows.ndim != 1 or rows.dtype.kind not in 'iu' or not rows.size or rows.min() < -n or rows.max() >= n:
        return None
    # (contiguous, as a stack of the rows is)
    return [Tensor._wrap(np.ascontiguousarray(t._data[rows])) for t in dataset.tensors]


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError('datasets should not be an empty iterable')
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError('ConcatDataset does not support IterableDataset')
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError('absolute value of index should not exceed dataset length')
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if d == 0 else self.cumulative_sizes[d - 1]
        return self.datasets[d][idx - start]


def random_split(dataset, lengths, generator=None):
    """Split into non-overlapping Subsets of the given lengths (or fractions summing to 1), from a
    random permutation drawn from ``generator``."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        n = len(dataset)
        subset_lengths = [int(math.floor(n * frac)) for frac in lengths]
        remainder = n - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f'Length of split at index {i} is 0. This might result in an empty dataset.',
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError('Sum of input lengths does not equal the length of the input dataset!')
    indices = creation.randperm(sum(lengths), generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out
