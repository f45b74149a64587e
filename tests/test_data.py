"""leafgrad.utils.data against torch.utils.data: datasets, samplers, collation, DataLoader
(in the main process and with worker processes), random_split."""
import collections
import itertools

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
from leafgrad.utils import data as ld  # noqa: E402
from torch.utils import data as td  # noqa: E402
from fresh import fresh_python_output  # noqa: E402
from oracle import assert_same, raises_like, same_message  # noqa: E402


def _datasets():
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10)
    return ld.TensorDataset(lg.tensor(x), lg.tensor(y)), td.TensorDataset(torch.tensor(x), torch.tensor(y))


def _same_batches(lbs, tbs):
    assert len(lbs) == len(tbs)
    for lb, tb in zip(lbs, tbs):
        assert type(lb) is type(tb) or (isinstance(lb, lg.Tensor) and isinstance(tb, torch.Tensor))
        if isinstance(tb, (list, tuple)):
            assert len(lb) == len(tb)
            for a, b in zip(lb, tb):
                assert_same(a, b)
        else:
            assert_same(lb, tb)


def test_tensor_dataset_and_subset():
    lds, tds = _datasets()
    assert len(lds) == len(tds) == 10
    for i in (0, 3, -1):
        for a, b in zip(lds[i], tds[i]):
            assert_same(a, b)
    lm, tm = raises_like(lambda: ld.TensorDataset(lg.zeros(3), lg.zeros(4)),
                         lambda: td.TensorDataset(torch.zeros(3), torch.zeros(4)))
    assert lm == tm
    ls, ts = ld.Subset(lds, [4, 1]), td.Subset(tds, [4, 1])
    assert len(ls) == 2 and assert_same(ls[0][0], ts[0][0]) is None
    cat_l, cat_t = lds + ls, tds + ts
    assert len(cat_l) == len(cat_t) == 12
    assert_same(cat_l[11][0], cat_t[11][0])
    assert_same(cat_l[-2][1], cat_t[-2][1])


@pytest.mark.parametrize('batch_size,drop_last', [(1, False), (3, False), (3, True), (10, False), (4, True)])
def test_sequential_batches_like_torch(batch_size, drop_last):
    lds, tds = _datasets()
    ll = ld.DataLoader(lds, batch_size=batch_size, drop_last=drop_last)
    tl = td.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(ll) == len(tl)
    _same_batches(list(ll), list(tl))


def test_no_auto_batching():
    lds, tds = _datasets()
    _same_batches(list(ld.DataLoader(lds, batch_size=None)), list(td.DataLoader(tds, batch_size=None)))


def _order(loader):
    return [int(v) for _, y in loader for v in y.tolist()]


def test_shuffle_with_generator_is_reproducible():
    lds, _ = _datasets()
    a = _order(ld.DataLoader(lds, batch_size=3, shuffle=True, generator=lg.Generator().manual_seed(1)))
    b = _order(ld.DataLoader(lds, batch_size=3, shuffle=True, generator=lg.Generator().manual_seed(1)))
    c = _order(ld.DataLoader(lds, batch_size=3, shuffle=True, generator=lg.Generator().manual_seed(2)))
    assert a == b and a != c and sorted(a) == list(range(10))
    # successive epochs of one loader draw new permutations from its generator
    loader = ld.DataLoader(lds, batch_size=3, shuffle=True, generator=lg.Generator().manual_seed(1))
    assert _order(loader) == a and _order(loader) != a
    # without a generator the global seed decides
    lg.manual_seed(5)
    d = _order(ld.DataLoader(lds, batch_size=4, shuffle=True))
    lg.manual_seed(5)
    assert d == _order(ld.DataLoader(lds, batch_size=4, shuffle=True))


Point = collections.namedtuple('Point', 'x y')


@pytest.mark.parametrize('kind', ['tuple', 'list', 'dict', 'namedtuple', 'numbers', 'numpy', 'nested', 'str'])
def test_default_collate_like_torch(kind):
    rng = np.random.default_rng(0)

    def sample(lib, i):
        t = lib.tensor(rng_arrays[i])
        if kind == 'tuple':
            return (t, i)
        if kind == 'list':
            return [t, float(i)]
        if kind == 'dict':
            return {'a': t, 'b': i, 'c': {'d': float(i) / 2}}
        if kind == 'namedtuple':
            return Point(t, i)
        if kind == 'numbers':
            return i * 1.5
        if kind == 'numpy':
            return rng_arrays[i].astype(np.float32)
        if kind == 'str':
            return (f's{i}', i)
        return ((t, [i, i + 1]), {'k': t})
    rng_arrays = [rng.standard_normal(3) for _ in range(4)]
    lb = ld.default_collate([sample(lg, i) for i in range(4)])
    tb = td.default_collate([sample(torch, i) for i in range(4)])
    _compare_tree(lb, tb)


def _compare_tree(a, b):
    if isinstance(b, torch.Tensor):
        assert_same(a, b)
    elif isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in b:
            _compare_tree(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _compare_tree(x, y)
    else:
        assert a == b


def test_collate_errors():
    lm, tm = raises_like(lambda: ld.default_collate([[1, 2], [3]]), lambda: td.default_collate([[1, 2], [3]]))
    assert lm == tm


class _Squares(ld.Dataset):
    def __len__(self):
        return 23

    def __getitem__(self, i):
        if i == 17 and getattr(self, 'fail', False):
            raise ValueError('bad sample 17')
        info = ld.get_worker_info()
        return {'x': lg.tensor([float(i * i)]), 'i': i, 'worker': -1 if info is None else info.id}


@pytest.mark.parametrize('num_workers', [1, 3])
def test_workers_give_the_same_batches_in_order(num_workers):
    ds = _Squares()
    g = lambda: lg.Generator().manual_seed(3)  # noqa: E731
    single = list(ld.DataLoader(ds, batch_size=4, shuffle=True, generator=g()))
    multi = list(ld.DataLoader(ds, batch_size=4, shuffle=True, generator=g(), num_workers=num_workers,
                               prefetch_factor=1))
    assert len(single) == len(multi) == 6
    for a, b in zip(single, multi):
        assert a['i'].tolist() == b['i'].tolist()
        np.testing.assert_array_equal(a['x'].numpy(), b['x'].numpy())
        assert b['x'].dtype == lg.float32
    assert set(v for b in multi for v in b['worker'].tolist()) == set(range(num_workers))
    assert all(v == -1 for b in single for v in b['worker'].tolist())


def test_worker_error_propagates_with_its_type():
    ds = _Squares()
    ds.fail = True
    with pytest.raises(ValueError, match='Caught ValueError in DataLoader worker process') as info:
        list(ld.DataLoader(ds, batch_size=4, num_workers=2))
    assert 'bad sample 17' in str(info.value)


def test_worker_init_fn_and_seeds():
    class Rand(ld.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return lg.rand(1)

    def init(worker_id):
        assert ld.get_worker_info().id == worker_id
    a = [b.tolist() for b in ld.DataLoader(Rand(), batch_size=1, num_workers=2, worker_init_fn=init,
                                            generator=lg.Generator().manual_seed(0))]
    b = [b.tolist() for b in ld.DataLoader(Rand(), batch_size=1, num_workers=2,
                                            generator=lg.Generator().manual_seed(0))]
    assert a == b  # workers' seeds come from the loader's generator
    assert a[0] != a[1]  # the two workers have different streams


class _Stream:
    def __iter__(self):
        info = self._info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, 11, step))


class LStream(_Stream, ld.IterableDataset):
    _info = staticmethod(ld.get_worker_info)

    def __len__(self):
        return 11


class TStream(_Stream, td.IterableDataset):
    _info = staticmethod(td.get_worker_info)


@pytest.mark.parametrize('num_workers,drop_last', [(0, False), (0, True), (2, False), (2, True)])
def test_iterable_dataset_like_torch(num_workers, drop_last):
    lb = [b.tolist() for b in ld.DataLoader(LStream(), batch_size=3, num_workers=num_workers, drop_last=drop_last)]
    tb = [b.tolist() for b in td.DataLoader(TStream(), batch_size=3, num_workers=num_workers, drop_last=drop_last)]
    assert lb == tb


@pytest.mark.parametrize('lengths', [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.33, 0.33, 0.34]])
def test_random_split(lengths):
    lds, tds = _datasets()
    lparts = ld.random_split(lds, lengths, generator=lg.Generator().manual_seed(0))
    tparts = td.random_split(tds, lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in lparts] == [len(p) for p in tparts]
    idx = sorted(i for p in lparts for i in p.indices)
    assert idx == list(range(10))
    again = ld.random_split(lds, lengths, generator=lg.Generator().manual_seed(0))
    assert [p.indices for p in again] == [p.indices for p in lparts]


def test_random_split_errors_and_samplers():
    lds, tds = _datasets()
    lm, tm = raises_like(lambda: ld.random_split(lds, [3, 3]), lambda: td.random_split(tds, [3, 3]))
    assert lm == tm
    for bad in [dict(batch_size=0), dict(batch_size=2, drop_last=1)]:
        lm, tm = raises_like(lambda: ld.BatchSampler(range(5), **{'drop_last': False, **bad}),
                             lambda: td.BatchSampler(range(5), **{'drop_last': False, **bad}))
        assert lm == tm
    lm, tm = raises_like(lambda: ld.DataLoader(lds, sampler=[0, 1], shuffle=True),
                         lambda: td.DataLoader(tds, sampler=[0, 1], shuffle=True))
    assert lm == tm
    lm, tm = raises_like(lambda: ld.DataLoader(lds, batch_sampler=[[0]], batch_size=2),
                         lambda: td.DataLoader(tds, batch_sampler=[[0]], batch_size=2))
    assert lm == tm
    assert list(ld.BatchSampler(ld.SequentialSampler(range(7)), 3, False)) == \
        list(td.BatchSampler(td.SequentialSampler(range(7)), 3, False))
    rs = ld.RandomSampler(range(5), replacement=True, num_samples=40, generator=lg.Generator().manual_seed(0))
    draws = list(rs)
    assert len(draws) == len(rs) == 40 and set(draws) <= set(range(5))
    perm = list(ld.RandomSampler(range(5), num_samples=12, generator=lg.Generator().manual_seed(0)))
    assert len(perm) == 12 and sorted(perm[:5]) == list(range(5))
    custom = ld.DataLoader(lds, batch_sampler=[[9, 0], [4]])
    assert [b[1].tolist() for b in custom] == [[9, 0], [4]]
    # a custom collate_fn receives the list of samples
    assert list(ld.DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b))) == [1, 5, 4]


class _Big(ld.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return lg.full((50000,), float(i))  # 200 kB samples travel through shared memory


def test_large_batches_and_early_break_leave_nothing_behind():
    import os
    import time
    def blocks():  # (Python's shared-memory blocks; other programs' segments come and go meanwhile)
        return {f for f in os.listdir('/dev/shm') if f.startswith('psm_')} if os.path.isdir('/dev/shm') else set()
    shm = blocks()
    batches = list(ld.DataLoader(_Big(), batch_size=4, num_workers=2))
    assert len(batches) == 16
    assert [float(b[0, 0]) for b in batches] == [4.0 * i for i in range(16)]
    assert batches[3].numpy().flags.writeable
    start = time.monotonic()
    for i, b in enumerate(ld.DataLoader(_Big(), batch_size=4, num_workers=2)):
        if i == 1:
            break
    assert time.monotonic() - start < 8
    assert blocks() <= shm


# ---- fetching a batch: __getitems__ and the gathered TensorDataset ---------------------------

class _Batches:
    """A sampler of fixed index lists (as a batch_sampler)."""

    def __init__(self, batches):
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


def _wide_datasets():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 3, 2)).astype(np.float32)
    z = np.asfortranarray(rng.standard_normal((12, 4)))  # float64, not C-contiguous
    y = rng.integers(0, 5, 12)
    lds = ld.TensorDataset(lg.tensor(x), lg.tensor(z).t().t(), lg.tensor(y))
    tds = td.TensorDataset(torch.tensor(x), torch.tensor(z), torch.tensor(y))
    return lds, tds


@pytest.mark.parametrize('num_workers', [0, 1])
@pytest.mark.parametrize('subset', [False, True])
def test_tensor_dataset_batches_like_torch(subset, num_workers):
    """A TensorDataset (or a Subset of one, as random_split makes) is gathered a batch at a
    time: the batches equal torch's per-sample ones, negative indices included."""
    lds, tds = _wide_datasets()
    if subset:
        lds, tds = ld.Subset(ld.Subset(lds, list(range(11, -1, -1))), [0, 2, 4, 6, 8, 10, 1]), \
            td.Subset(td.Subset(tds, list(range(11, -1, -1))), [0, 2, 4, 6, 8, 10, 1])
    batches = [[0, 3, 1], [-1, 2], [4, 5, 6], [6]]
    assert all(ld.dataset.gathered_rows(lds, b) is not None for b in batches)  # the gathering path runs
    lb = list(ld.DataLoader(lds, batch_sampler=_Batches(batches), num_workers=num_workers))
    tb = list(td.DataLoader(tds, batch_sampler=_Batches(batches)))
    _same_batches(lb, tb)
    for batch in lb:
        assert all(t._data.flags.c_contiguous and not t.requires_grad for t in batch)
    # the same as collating the samples one by one
    for batch, indices in zip(lb, batches):
        for a, b in zip(batch, ld.default_collate([lds[i] for i in indices])):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_tensor_dataset_bad_indices_fail_as_per_sample():
    """Out-of-range or non-integer indices take the per-sample path and fail as it does."""
    lds, tds = _datasets()
    lm, tm = raises_like(lambda: list(ld.DataLoader(lds, batch_sampler=_Batches([[1, 10]]))),
                         lambda: list(td.DataLoader(tds, batch_sampler=_Batches([[1, 10]]))))
    assert lm == tm
    # booleans are not row numbers (x[True] is x with a new leading dim): as in torch
    lb = list(ld.DataLoader(lds, batch_sampler=_Batches([[True, True]])))
    tb = list(td.DataLoader(tds, batch_sampler=_Batches([[True, True]])))
    _same_batches(lb, tb)
    assert tuple(lb[0][0].shape) == (2, 1, 10, 3)
    lm, tm = raises_like(lambda: list(ld.DataLoader(lds, batch_sampler=_Batches([[True, False]]))),
                         lambda: list(td.DataLoader(tds, batch_sampler=_Batches([[True, False]]))))
    assert lm == tm


class _Batched:
    """A map-style dataset that fetches a whole batch at once."""

    def __init__(self, module):
        self.T, self.calls = module, []

    def __len__(self):
        return 8

    def __getitem__(self, i):
        self.calls.append(('item', i))
        return self.T.tensor([float(i)])

    def __getitems__(self, indices):
        self.calls.append(('items', list(indices)))
        return [self.T.tensor([10.0 * i]) for i in indices]


@pytest.mark.parametrize('subset', [False, True])
def test_getitems_is_used_like_torch(subset):
    """PyTorch's fetcher asks a dataset with ``__getitems__`` for the whole batch (a Subset
    forwards it with its own indices); without auto-collation it indexes one sample."""
    ldata, tdata = _Batched(lg), _Batched(torch)
    lds, tds = (ld.Subset(ldata, [7, 5, 3, 1, 0]), td.Subset(tdata, [7, 5, 3, 1, 0])) if subset else (ldata, tdata)
    for kwargs in (dict(batch_size=2), dict(batch_size=None)):
        del ldata.calls[:], tdata.calls[:]
        _same_batches(list(ld.DataLoader(lds, **kwargs)), list(td.DataLoader(tds, **kwargs)))
        assert ldata.calls == tdata.calls and ldata.calls
    # a custom collate_fn gets __getitems__'s samples as they are
    del ldata.calls[:], tdata.calls[:]
    lb = list(ld.DataLoader(lds, batch_size=3, collate_fn=len))
    assert lb == list(td.DataLoader(tds, batch_size=3, collate_fn=len))
    assert ldata.calls == tdata.calls


def test_batches_of_samples_that_require_grad_are_recorded_like_torch():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    lx, tx = lg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (lb,) = next(iter(ld.DataLoader(ld.TensorDataset(lx), batch_size=3)))
    (tb,) = next(iter(td.DataLoader(td.TensorDataset(tx), batch_size=3)))
    lrows = next(iter(ld.DataLoader([lx[i] for i in range(4)], batch_size=2)))
    trows = next(iter(td.DataLoader([tx[i] for i in range(4)], batch_size=2)))
    for a, b in ((lb, tb), (lrows, trows)):
        assert_same(a, b)
        assert a.grad_fn.name() == b.grad_fn.name() == 'StackBackward0'
    (lb.sum() + (lrows * 2).sum()).backward()
    (tb.sum() + (trows * 2).sum()).backward()
    assert_same(lx.grad, tx.grad)
    with lg.no_grad():  # nothing to record: gathered at once
        (lb,) = next(iter(ld.DataLoader(ld.TensorDataset(lx), batch_size=3)))
    assert lb.grad_fn is None and not lb.requires_grad
    # samples of different sizes: torch's error, not NumPy's
    lm, tm = raises_like(lambda: ld.default_collate([lg.zeros(2), lg.zeros(3)]),
                         lambda: td.default_collate([torch.zeros(2), torch.zeros(3)]))
    assert lm == tm


def test_worker_machinery_loads_only_for_loaders_with_workers():
    """A single-process loader does not import multiprocessing (~30 ms); one with workers does."""
    code = ('import sys\n'
            'from leafgrad.utils import data as ld\n'
            'import leafgrad as lg\n'
            'ds = ld.TensorDataset(lg.arange(8.))\n'
            'print("multiprocessing" in sys.modules, end=" ")\n'
            'list(ld.DataLoader(ds, batch_size=4))\n'
            'print("multiprocessing" in sys.modules, end=" ")\n'
            'print([b[0].tolist() for b in ld.DataLoader(ds, batch_size=4, num_workers=1)], end=" ")\n'
            'print("multiprocessing" in sys.modules)\n')
    assert fresh_python_output(code) == 'False False [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]] True'


def test_distributed_sampler_gives_torchs_index_lists():
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for n, replicas, shuffle, drop_last, seed, epoch in itertools.product(
            [0, 1, 5, 7, 10, 13, 1797], [1, 2, 3, 4], [True, False], [True, False], [0, 3], [0, 2]):
        dataset = list(range(n))
        for rank in range(replicas):
            theirs = TorchSampler(dataset, replicas, rank, shuffle, seed, drop_last)
            ours = lg.utils.data.DistributedSampler(dataset, replicas, rank, shuffle, seed, drop_last)
            theirs.set_epoch(epoch)
            ours.set_epoch(epoch)
            assert list(ours) == list(theirs) and len(ours) == len(theirs), (n, replicas, rank, shuffle, drop_last)


def test_distributed_sampler_permutation_for_large_seeds_and_errors():
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    dataset = list(range(5000))
    for seed in (2 ** 32 + 7, 2 ** 40 + 1, 123456789):
        assert list(lg.utils.data.DistributedSampler(dataset, 3, 1, seed=seed)) == \
            list(TorchSampler(dataset, 3, 1, seed=seed))
    for replicas, rank in ((2, 2), (2, -1)):
        lg_msg, torch_msg = raises_like(lambda: lg.utils.data.DistributedSampler(dataset, replicas, rank),
                                        lambda: TorchSampler(dataset, replicas, rank))
        assert lg_msg == torch_msg
    if lg.distributed.is_available():
        lg_msg, torch_msg = raises_like(lambda: lg.utils.data.DistributedSampler(dataset),
                                        lambda: TorchSampler(dataset))
        assert same_message(lg_msg, torch_msg)
    else:  # (no mpi4py, as with the README's extras: PyTorch's message for a build without distributed)
        with pytest.raises(RuntimeError, match='^Requires distributed package to be available$'):
            lg.utils.data.DistributedSampler(dataset)
    assert lg.utils.data.DistributedSampler is lg.utils.data.distributed.DistributedSampler
