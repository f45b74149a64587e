"""leafgrad.utils.benchmark against torch.utils.benchmark: measurements built from the same
times print, summarise and compare exactly as torch's do; Timer runs the statement as torch's
does (warm-up, block sizes, callbacks, thread count) and refuses what torch refuses."""
import random
import re

import numpy as np
import pytest

import leafgrad as lg
import leafgrad.utils.benchmark as lgb
from fresh import fresh_python_output
from oracle import raises_like

torch = pytest.importorskip('torch')
import torch.utils.benchmark as tb  # noqa: E402


def _measurement(B, n, scale, spread=0.05, seed=0, number=100, **spec):
    """A Measurement of ``n`` runs of ``number`` executions, ~``scale`` seconds each."""
    rnd = random.Random(seed)
    spec = {'stmt': 'x * 2', 'setup': 'pass', **spec}
    times = [scale * number * (1 + spread * rnd.random()) for _ in range(n)]
    return B.Measurement(number_per_run=number, raw_times=times, task_spec=B.TaskSpec(**spec))


CASES = [
    dict(n=20, scale=9.6e-6, label='mul', sub_label='100', description='float32'),
    dict(n=20, scale=3.1e-6, spread=0.5, label='mul', sub_label='100', description='float64'),  # a warning
    dict(n=20, scale=3.1e-6, spread=0.15, label='mul', sub_label='1000', description='float64'),  # a milder one
    dict(n=7, scale=2.3e-5, label='mul', sub_label='1000', description='float32'),
    dict(n=1, scale=4.4e-5, label='mul', sub_label='1000', description='float16'),
    dict(n=3, scale=1.2e-3, stmt='x + 1', setup='y = 1\nz = 2', label='add', description='a'),
    dict(n=5, scale=7e-9, stmt='pass'),
    dict(n=2, scale=2.0, stmt='a = 1\nb = 2', sub_label='sub', description='d', num_threads=4),
    dict(n=6, scale=1e-6, label='env', sub_label='r', description='c', env='A'),
]


def _repr_body(m):
    first, rest = repr(m).split('\n', 1)
    assert re.fullmatch(r'<(torch|leafgrad)\.utils\.benchmark\.utils\.common\.Measurement object at 0x[0-9a-f]+>',
                        first)
    return rest


@pytest.mark.parametrize('case', CASES, ids=[str(i) for i in range(len(CASES))])
def test_measurement_prints_and_summarises_as_torch(case):
    ours, theirs = _measurement(lgb, **case), _measurement(tb, **case)
    assert _repr_body(ours) == _repr_body(theirs)
    for attr in ('median', 'mean', 'iqr', 'times'):
        assert getattr(ours, attr) == pytest.approx(getattr(theirs, attr), rel=1e-12), attr
    for attr in ('significant_figures', 'has_warnings', 'title', 'env', 'as_row_name', 'number_per_run', 'label',
                 'stmt', 'num_threads', 'description'):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert ours.meets_confidence(0.2) == theirs.meets_confidence(0.2)


def test_units_and_significant_figures_as_torch():
    rng = np.random.default_rng(1)
    times = list(10.0 ** rng.uniform(-10, 2, 500)) + [1e-9, 1e-6, 1e-3, 1.0, 1e-7, 0.1, 100.0]
    assert [lgb.select_unit(t) for t in times] == [tb.select_unit(t) for t in times]
    assert [lgb.trim_sigfig(t, 2) for t in times] == [tb.trim_sigfig(t, 2) for t in times]
    for i in range(100):
        case = dict(n=int(rng.integers(1, 40)), scale=float(10.0 ** rng.uniform(-7, -2)),
                    spread=float(rng.uniform(0, 0.4)), seed=i)
        assert _measurement(lgb, **case).significant_figures == _measurement(tb, **case).significant_figures
    assert lgb.unit_to_english('us') == 'microsecond' and lgb.ordered_unique([3, 1, 3, 2]) == [3, 1, 2]


def _compare_text(B, cases, *, trim=False, highlight=False, colorize=None):
    compare = B.Compare([_measurement(B, **case) for case in cases])
    if trim:
        compare.trim_significant_figures()
    if highlight:
        compare.highlight_warnings()
    if colorize is not None:
        compare.colorize(rowwise=colorize == 'rows')
    return str(compare)


TABLE_CASES = CASES[:6] + [dict(n=20, scale=5e-6, label='mul', sub_label='100', description='float32', num_threads=4),
                           dict(n=6, scale=1.5e-6, label='env', sub_label='r', description='c', env='B'),
                           dict(n=6, scale=1.1e-6, label='env', sub_label='r', description='c', env='A', seed=3)]


@pytest.mark.parametrize('options', [{}, {'trim': True}, {'trim': True, 'highlight': True},
                                     {'highlight': True, 'colorize': 'columns'}, {'colorize': 'rows'}],
                         ids=['plain', 'trim', 'highlight', 'colorize', 'rowwise'])
def test_compare_as_torch(options):
    ours, theirs = _compare_text(lgb, TABLE_CASES, **options), _compare_text(tb, TABLE_CASES, **options)
    assert ours == theirs
    assert '1 threads: ' in ours and '4 threads: ' in ours and '(A)' in ours and 'Times are in' in ours


def test_compare_refuses_what_is_not_a_measurement_as_torch():
    lg_msg, torch_msg = raises_like(lambda: lgb.Compare([1]), lambda: tb.Compare([1]))
    assert lg_msg == torch_msg


def test_merge_pools_replicates_as_torch():
    for B in (lgb, tb):
        a = _measurement(B, n=3, scale=1e-6, seed=1, label='x')
        b = _measurement(B, n=2, scale=1e-6, seed=2, label='x')
        c = _measurement(B, n=2, scale=1e-6, label='y')
        merged = B.Measurement.merge([a, b, c])
        assert [m.label for m in merged] == ['x', 'y']
        assert merged[0].number_per_run == 1 and merged[0].times == a.times + b.times


# ---- Timer ---------------------------------------------------------------------------------

def test_timeit_runs_the_statement_as_torch():
    for B in (lgb, tb):
        calls = []
        m = B.Timer('calls.append(1)', setup='calls.clear()', globals={'calls': calls}, label='append',
                    sub_label='list', description='one').timeit(50)
        assert len(calls) == 50  # (setup runs again before the timed run, after the warm-up of 2)
        assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.raw_times[0] > 0
        assert m.title == 'append: list' and m.description == 'one' and m.num_threads == 1
        assert re.search(r'\n  [0-9.]+ (ns|us|ms|s)\n  1 measurement, 50 runs , 1 thread$', repr(m))


def test_torch_in_a_statement_is_leafgrad():
    seen = []
    lgb.Timer('seen.append(torch)', globals={'seen': seen}).timeit(2)
    assert seen[0] is lg
    lgb.Timer('seen.append(torch)', globals={'seen': seen, 'torch': 'mine'}).timeit(2)
    assert seen[-1] == 'mine'


def test_blocked_autorange():
    x = lg.randn(100)
    calls = []
    m = lgb.Timer('x * 2', globals={'x': x}).blocked_autorange(callback=lambda n, t: calls.append((n, t)),
                                                               min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05 and len(m.raw_times) == len(calls)
    assert all(n == m.number_per_run for n, _ in calls) and [t for _, t in calls] == m.raw_times
    assert str(m.number_per_run).strip('0') == '1'  # a power of ten
    assert 0 < m.median < 1e-3
    assert (' runs per measurement, 1 thread' if len(m.raw_times) > 1 else ' runs , 1 thread') in repr(m)


def test_adaptive_autorange_stops_at_max_run_time_or_a_small_spread():
    m = lgb.Timer('sum(range(50))').adaptive_autorange(threshold=0.5, max_run_time=0.5)
    assert len(m.raw_times) >= 1 and sum(m.raw_times) <= 0.5 + max(m.raw_times)
    assert len(m.raw_times) <= 4 or m.meets_confidence(0.5) or sum(m.raw_times) > 0.5


def test_num_threads_is_set_and_restored():
    before = lg.get_num_threads()
    seen = []
    lgb.Timer('seen.append(torch.get_num_threads())', globals={'seen': seen}, num_threads=1).timeit(3)
    assert set(seen) == {1} and lg.get_num_threads() == before


@pytest.mark.parametrize('make', [lambda B: B.Timer(3), lambda B: B.Timer('x', language='rust'),
                                  lambda B: B.Timer('x', global_setup='int x;'), lambda B: B.Timer().repeat(),
                                  lambda B: B.Timer().autorange()],
                         ids=['stmt not str', 'language', 'global_setup', 'repeat', 'autorange'])
def test_refusals_as_torch(make):
    lg_msg, torch_msg = raises_like(lambda: make(lgb), lambda: make(tb))
    assert lg_msg == torch_msg


def test_cpp_and_callgrind_refused():
    with pytest.raises(NotImplementedError):
        lgb.Timer('x', language='c++')
    with pytest.raises(NotImplementedError):
        lgb.Timer('pass').collect_callgrind()


def test_benchmark_loads_lazily():
    out = fresh_python_output('import sys, leafgrad; print("leafgrad.utils.benchmark" in sys.modules); '
                              'import leafgrad.utils; print(type(leafgrad.utils.benchmark.Timer).__name__)')
    assert out.split() == ['False', 'type']
