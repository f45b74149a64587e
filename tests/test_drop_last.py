"""drop_last in the samplers and the loader, checked directly: BatchSampler's batches and len()
(over a sampler, a list, an iterator without len), DataLoader's batches and len(), for every
dataset size 0-11 and batch size 1-5; against the rule (the last, short batch is dropped iff
drop_last) and, where installed, against torch."""
import itertools

import pytest

import leafgrad as lg
from leafgrad.utils import data as ld

try:
    import torch
    from torch.utils import data as td
except ImportError:
    torch = td = None

needs_torch = pytest.mark.skipif(torch is None, reason='needs the torch oracle')
SIZES = list(itertools.product(range(12), range(1, 6)))


def _expected(n, batch_size, drop_last):
    batches = [list(range(i, min(i + batch_size, n))) for i in range(0, n, batch_size)]
    if drop_last and batches and len(batches[-1]) < batch_size:
        batches.pop()
    return batches


def _batch_sampler_runs(D, n, batch_size, drop_last):
    over_sampler = D.BatchSampler(D.SequentialSampler(range(n)), batch_size, drop_last)
    over_list = D.BatchSampler(list(range(n)), batch_size, drop_last)
    over_iterator = D.BatchSampler(iter(range(n)), batch_size, drop_last)  # (an iterator has no len)
    return (list(over_sampler), len(over_sampler), list(over_sampler),  # (a second pass: the same)
            list(over_list), len(over_list), list(over_iterator))


@pytest.mark.parametrize('drop_last', [False, True])
def test_batch_sampler_drop_last(drop_last):
    for n, batch_size in SIZES:
        batches = _expected(n, batch_size, drop_last)
        assert _batch_sampler_runs(ld, n, batch_size, drop_last) == \
            (batches, len(batches), batches, batches, len(batches), batches), (n, batch_size)


@needs_torch
@pytest.mark.parametrize('drop_last', [False, True])
def test_batch_sampler_drop_last_like_torch(drop_last):
    for n, batch_size in SIZES:
        assert _batch_sampler_runs(ld, n, batch_size, drop_last) == _batch_sampler_runs(td, n, batch_size, drop_last), \
            (n, batch_size)


def _loader_runs(T, D, n, batch_size, drop_last):
    dataset = D.TensorDataset(T.arange(n))
    loader = D.DataLoader(dataset, batch_size=batch_size, drop_last=drop_last)
    if n == 0:  # (a RandomSampler refuses an empty dataset)
        return [b[0].tolist() for b in loader], len(loader), [], 0
    shuffled = D.DataLoader(dataset, batch_size=batch_size, drop_last=drop_last, shuffle=True)
    return ([b[0].tolist() for b in loader], len(loader),
            sorted(len(b[0]) for b in shuffled), len(shuffled))


@pytest.mark.parametrize('drop_last', [False, True])
def test_loader_drop_last(drop_last):
    for n, batch_size in SIZES:
        batches = _expected(n, batch_size, drop_last)
        assert _loader_runs(lg, ld, n, batch_size, drop_last) == \
            (batches, len(batches), sorted(len(b) for b in batches), len(batches)), (n, batch_size)


@needs_torch
@pytest.mark.parametrize('drop_last', [False, True])
def test_loader_drop_last_like_torch(drop_last):
    for n, batch_size in SIZES:
        assert _loader_runs(lg, ld, n, batch_size, drop_last) == _loader_runs(torch, td, n, batch_size, drop_last), \
            (n, batch_size)
