"""utils.data ChainDataset, StackDataset and IterableDataset + IterableDataset, alone and through
the DataLoader (with workers sharding an iterable dataset by get_worker_info), against torch."""
import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg


def _stream(lib, start, stop):
    class Stream(lib.utils.data.IterableDataset):
        def __init__(self):
            self.start, self.stop = start, stop

        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            lo, step = (self.start, 1) if info is None else (self.start + info.id, info.num_workers)
            return iter(lib.tensor([float(i)]) for i in range(lo, self.stop, step))

        def __len__(self):
            return self.stop - self.start
    return Stream()


def _batches(loader):
    return [b.numpy().tolist() for b in loader]


@pytest.mark.parametrize('workers', [0, 2])
def test_chain_dataset(workers):
    out = []
    for lib in (torch, lg):
        chained = _stream(lib, 0, 5) + _stream(lib, 10, 13)
        assert type(chained).__name__ == 'ChainDataset' and len(chained) == 8
        items = [t.item() for t in chained]
        loader = lib.utils.data.DataLoader(lib.utils.data.ChainDataset([_stream(lib, 0, 5), _stream(lib, 7, 9)]),
                                           batch_size=3, num_workers=workers)
        out.append((items, _batches(loader)))
    assert out[0] == out[1]


def test_stack_dataset():
    a, b = np.arange(12.0).reshape(6, 2), np.arange(6)
    out = []
    for lib in (torch, lg):
        D = lib.utils.data
        s = D.StackDataset(D.TensorDataset(lib.tensor(a)), lib.tensor(b))
        k = D.StackDataset(x=lib.tensor(a), y=lib.tensor(b))
        first = s[2]
        batch = next(iter(D.DataLoader(k, batch_size=4)))
        out.append((len(s), first[0][0].tolist(), first[1].item(), sorted(batch), batch['x'].tolist(),
                    batch['y'].tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize('case', ['both', 'none', 'size', 'chain_map', 'chain_len'])
def test_errors(case):
    def run(lib):
        D = lib.utils.data
        t = lib.zeros(3)
        if case == 'both':
            return D.StackDataset(t, y=t)
        if case == 'none':
            return D.StackDataset()
        if case == 'size':
            return D.StackDataset(t, lib.zeros(4))
        if case == 'chain_map':
            return list(D.ChainDataset([D.TensorDataset(t)]))
        return len(D.ChainDataset([D.TensorDataset(t)]))
    a, b = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(a, b), (a, b)
