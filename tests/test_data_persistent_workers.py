"""DataLoader(persistent_workers=True) against torch: the workers start at the first epoch and
serve every later one (worker_init_fn once per worker, the same processes, their random state
carried on); an epoch left early leaves nothing behind for the next; errors still come back."""
import os
import signal
import textwrap

import pytest

torch = pytest.importorskip('torch')

import leafgrad as lg  # noqa: E402
import leafgrad.utils.data as ld  # noqa: E402
from fresh import run_python  # noqa: E402


def _loader(T, dataset, **kw):
    return T.utils.data.DataLoader(dataset, num_workers=2, **kw)


def _items(T):
    """Six items: (index, the worker's pid, a draw from the worker's random stream)."""
    class Items(T.utils.data.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return T.tensor([i, os.getpid(), int(T.randint(0, 1000, ()))])
    return Items()


def _stream(T):
    class Stream(T.utils.data.IterableDataset):
        def __iter__(self):
            info = T.utils.data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(start, 11, step))
    return Stream()


def _epochs(loader, n=3):
    return [[b.tolist() for b in loader] for _ in range(n)]


@pytest.mark.parametrize('persistent', [False, True])
def test_worker_init_fn_runs_once_per_worker_like_torch(persistent, tmp_path):
    def counts(T):
        log = tmp_path / f'{T.__name__}.log'

        def init(worker_id):
            with open(log, 'a') as f:
                f.write(f'{worker_id}\n')
        _epochs(_loader(T, list(range(4)), batch_size=2, worker_init_fn=init, persistent_workers=persistent))
        return sorted(log.read_text().split())
    mine = counts(lg)
    assert mine == counts(torch) == (['0', '1'] if persistent else ['0', '0', '0', '1', '1', '1'])


@pytest.mark.parametrize('persistent', [False, True])
def test_the_same_worker_processes_serve_every_epoch(persistent):
    def pids(T):
        return [{b[1] for b in epoch} for epoch in _epochs(_loader(T, _items(T), batch_size=None,
                                                                  persistent_workers=persistent))]
    for T in (lg, torch):
        epochs = pids(T)
        assert all(len(p) == 2 for p in epochs)
        assert (epochs[0] == epochs[1] == epochs[2]) is persistent
        assert (epochs[0].isdisjoint(epochs[1]) and epochs[1].isdisjoint(epochs[2])) is not persistent


def test_shuffle_order_and_worker_random_streams_like_torch():
    """The base seed is drawn once, when the workers start (the shuffling order then differs from a
    loader without persistent workers from the second epoch on), and each worker's random stream
    goes on from epoch to epoch."""
    def run(T, persistent):
        epochs = _epochs(_loader(T, _items(T), batch_size=2, shuffle=True, persistent_workers=persistent,
                                 generator=T.Generator().manual_seed(3)))
        column = lambda c: [[[row[c] for row in b] for b in e] for e in epochs]  # noqa: E731
        return column(0), column(2)  # the indices, the workers' draws
    mine, fresh_workers = run(lg, True), run(lg, False)
    assert mine == run(torch, True)
    assert mine[0][0] == fresh_workers[0][0] and mine[0][1:] != fresh_workers[0][1:]
    assert mine[1][0] != mine[1][1]  # draws go on: the second epoch is not the first again


def test_values_as_without_workers():
    map_style = [[b.tolist() for b in ld.DataLoader(list(range(7)), batch_size=2)]] * 3
    assert _epochs(_loader(lg, list(range(7)), batch_size=2, persistent_workers=True)) == map_style
    iterable = sorted(v for b in ld.DataLoader(_stream(lg), batch_size=2) for v in b.tolist())
    for drop_last in (False, True):
        mine = _epochs(_loader(lg, _stream(lg), batch_size=2, persistent_workers=True, drop_last=drop_last))
        assert mine == _epochs(_loader(torch, _stream(torch), batch_size=2, persistent_workers=True,
                                       drop_last=drop_last))
        if not drop_last:  # (the same values; in the workers' interleaving)
            assert sorted(v for b in mine[2] for v in b) == iterable
        assert mine[0] == mine[1] == mine[2]


@pytest.mark.parametrize('kind', ['map', 'iterable'])
def test_an_epoch_left_early_leaves_nothing_for_the_next(kind):
    def run(T):
        dataset = list(range(12)) if kind == 'map' else _stream(T)
        loader = _loader(T, dataset, batch_size=2, persistent_workers=True, prefetch_factor=3)
        first = iter(loader)
        early = next(first).tolist()
        del first
        loose = iter(loader)  # begun, then left unfinished while a new epoch starts
        next(loose)
        return early, [b.tolist() for b in loader], [b.tolist() for b in loader]
    mine = run(lg)
    assert mine == run(torch)
    assert mine[1] == mine[2]


def test_a_worker_error_comes_back_and_the_workers_serve_the_next_epoch():
    def run(T):
        class Failing(T.utils.data.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                if i == 2 and not getattr(self, 'failed', False):
                    self.failed = True  # (in this worker's copy: a worker started anew would fail again)
                    raise ValueError('bad sample 2')
                return os.getpid()
        loader = _loader(T, Failing(), batch_size=None, persistent_workers=True)
        with pytest.raises(ValueError, match='Caught ValueError in DataLoader worker process 0'):
            list(loader)
        return [int(p) for p in loader]
    for T in (lg, torch):
        pids = run(T)
        assert len(pids) == 4 and len(set(pids)) == 2


def test_workers_stop_when_the_loader_is_collected():
    loader = _loader(lg, _items(lg), batch_size=None, persistent_workers=True)
    pids = {b[1] for b in _epochs(loader, 1)[0]}
    workers = list(loader._worker_pool.workers)
    del loader
    assert all(not w.is_alive() for w in workers) and {w.pid for w in workers} == pids


def test_workers_stop_at_exit_with_batches_in_flight(tmp_path):
    """Left in the middle of an epoch, with batches in shared memory on their way: the program
    exits at once, and no shared-memory block is left behind (the resource tracker would warn)."""
    code = textwrap.dedent('''
        import leafgrad as lg
        import leafgrad.utils.data as ld
        loader = ld.DataLoader(ld.TensorDataset(lg.zeros(64, 8192)), batch_size=4, num_workers=2,
                               persistent_workers=True)
        for _ in loader:
            break
        print(next(iter(loader))[0].shape)
    ''')
    done = run_python('-c', code, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, 'leafgrad.Size([4, 8192])\n', '')


def test_a_worker_killed_between_epochs_is_reported_then_replaced():
    """PyTorch's SIGCHLD handler raises at once, wherever the main process is; here the next
    epoch reports the death, and the one after starts new workers."""
    loader = _loader(lg, _items(lg), batch_size=None, persistent_workers=True)
    pids = {b[1] for b in _epochs(loader, 1)[0]}
    killed = min(pids)
    os.kill(killed, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=rf'DataLoader worker \(pid\(s\) {killed}\) exited unexpectedly'):
        list(loader)
    again = _epochs(loader, 2)
    assert [[b[0] for b in e] for e in again] == [list(range(6))] * 2
    assert {b[1] for b in again[0]} == {b[1] for b in again[1]} and pids.isdisjoint(b[1] for b in again[0])
