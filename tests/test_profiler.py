"""The profiler against torch's: the same program profiled by both gives the same op names, call
counts, nesting, table layout and errors; times are real (positive, self <= total); the trace is
JSON; and outside a profile every op is the function it always was."""
import json
import re
import threading
import warnings
from collections import Counter

import numpy as np
import pytest

import leafgrad as lg
import leafgrad.profiler as lgp
from leafgrad.autograd import profiler as lg_autograd_profiler
from leafgrad.ops import elementwise, indexing, linalg, shape
from oracle import raises_like, same_message

torch = pytest.importorskip('torch')
import torch.profiler as tp  # noqa: E402


def _program(T, record_function):
    """A linear layer, relu, scalar ops and backward: ops nested in ops and backward nodes."""
    w = T.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4) / 10, requires_grad=True)
    b = T.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    x = T.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4), requires_grad=True)
    with record_function('my_block'):
        y = T.nn.functional.linear(x, w, b).relu()
        z = (y * 2 + 1).sum()
    z.backward()


def _profile(T, profiler_module, **options):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with profiler_module.profile(activities=[profiler_module.ProfilerActivity.CPU], **options) as prof:
            _program(T, profiler_module.record_function)
    return prof


def _normal(name):
    return name.replace('leafgrad', 'torch')


def _forward_counts(events):
    """Counts of the events outside the backward pass's nodes, by name."""
    def in_backward(e):
        while e is not None:
            if e.name.startswith('autograd::engine::evaluate_function: '):
                return True
            e = e.cpu_parent
        return False
    return Counter(_normal(e.name) for e in events if not in_backward(e))


def _node_counts(events):
    return Counter(_normal(e.name) for e in events if e.name.startswith('autograd::engine::evaluate_function: '))


@pytest.fixture(scope='module')
def both():
    return _profile(lg, lgp), _profile(torch, tp)


def test_forward_ops_named_and_counted_as_torch(both):
    lg_prof, torch_prof = both
    ours, theirs = _forward_counts(lg_prof.events()), _forward_counts(torch_prof.events())
    common = ours.keys() & theirs.keys()
    assert {'my_block', 'aten::linear', 'aten::t', 'aten::addmm', 'aten::relu', 'aten::mul', 'aten::add',
            'aten::sum'} <= common
    assert {name: ours[name] for name in common} == {name: theirs[name] for name in common}


def test_backward_nodes_recorded_as_torch(both):
    lg_prof, torch_prof = both
    assert _node_counts(lg_prof.events()) == _node_counts(torch_prof.events())
    for prof in both:
        for e in prof.events():
            if e.name.startswith('autograd::engine::evaluate_function: '):
                assert e.cpu_children[0].name == e.name.split(': ', 1)[1]


def test_nesting_as_torch(both):
    for prof in both:
        events = prof.events()
        linear = next(e for e in events if e.name == 'aten::linear')
        assert [c.name for c in linear.cpu_children] == ['aten::t', 'aten::addmm']
        assert linear.cpu_parent.name == 'my_block'
        block = next(e for e in events if e.name == 'my_block')
        assert [c.name for c in block.cpu_children] == ['aten::linear', 'aten::relu', 'aten::mul', 'aten::add',
                                                        'aten::sum']
        assert block.is_user_annotation and block.cpu_parent is None
        accumulate = [e for e in events if _normal(e.name) == 'torch::autograd::AccumulateGrad']
        assert len(accumulate) == 3


def test_times_are_real(both):
    events = both[0].events()
    assert events and all(e.cpu_time_total > 0 for e in events)
    assert all(e.self_cpu_time_total <= e.cpu_time_total for e in events)
    assert all(c.time_range.start >= e.time_range.start and c.time_range.end <= e.time_range.end
               for e in events for c in e.cpu_children)
    averages = both[0].key_averages()
    total = averages.total_average()
    assert total.key == 'Total' and total.count == len(events)
    assert total.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))
    assert averages.self_cpu_time_total == pytest.approx(events.self_cpu_time_total)


def _is_wrapper(fn):
    return fn.__code__.co_name == 'profiled'


def _lines(table):
    return table.split('\n')


def test_table_layout_as_torch(both):
    lg_prof, torch_prof = both
    for kwargs in ({'sort_by': 'self_cpu_time_total'}, {'sort_by': 'cpu_time_total', 'row_limit': 5},
                   {'sort_by': 'count'}):
        ours, theirs = (_lines(p.key_averages().table(**kwargs)) for p in both)
        assert ours[:3] == theirs[:3]  # separator, header, separator: the same columns and widths
        assert ours[-3] == theirs[-3] and ours[-1] == theirs[-1] == ''
        assert re.fullmatch(r'Self CPU time total: [0-9.]+(us|ms|s)', ours[-2])
        if 'row_limit' in kwargs:
            assert len(ours) == len(theirs) == 3 + 5 + 3
    ours = lg_prof.key_averages().table(sort_by='count')
    row = next(line for line in _lines(ours) if line.strip().startswith('aten::mul '))
    assert row.split()[-1] == '2'
    count_column = [int(line.split()[-1]) for line in _lines(ours)[3:-3]]
    assert count_column == sorted(count_column, reverse=True)


def test_table_shapes_and_memory_columns_as_torch():
    profiles = [_profile(lg, lgp, record_shapes=True, profile_memory=True),
                _profile(torch, tp, record_shapes=True, profile_memory=True)]
    headers = [_lines(p.key_averages(group_by_input_shape=True).table(sort_by='count'))[1].split('  ')
               for p in profiles]
    ours, theirs = ([h.strip() for h in header if h.strip()] for header in headers)
    assert ours == theirs == ['Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg',
                              'CPU Mem', 'Self CPU Mem', '# of Calls', 'Input Shapes']
    shapes = [{(e.key, str(e.input_shapes)) for e in p.key_averages(group_by_input_shape=True)} for p in profiles]
    for key in [('aten::linear', '[[2, 4], [3, 4], [3]]'), ('aten::t', '[[3, 4]]'), ('aten::relu', '[[2, 3]]'),
                ('aten::mul', '[[2, 3], []]')]:
        assert key in shapes[0] and key in shapes[1]
    # the memory an op's outputs took, inclusive of its children, as torch counts it
    for name in ('aten::linear', 'aten::addmm', 'aten::relu', 'aten::add'):
        ours, theirs = (next(e for e in p.events() if e.name == name) for p in profiles)
        assert ours.cpu_memory_usage == theirs.cpu_memory_usage == 24, name
    linear = next(e for e in profiles[0].events() if e.name == 'aten::linear')
    assert linear.self_cpu_memory_usage == 0


def test_without_options_no_shapes_or_memory(both):
    lg_prof, torch_prof = both
    for prof in both:
        assert all(e.input_shapes == [] and e.cpu_memory_usage == 0 for e in prof.events())
        assert 'Input Shapes' not in prof.key_averages().table() and 'CPU Mem' not in prof.key_averages().table()


def test_chrome_trace_is_json(both, tmp_path):
    path = tmp_path / 'trace.json'
    both[0].export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    ops = [e for e in trace['traceEvents'] if e.get('ph') == 'X']
    assert len(ops) == len(both[0].events())
    assert {'aten::linear', 'my_block', 'autograd::engine::evaluate_function: MulBackward0'} <= {e['name'] for e in ops}
    assert all(e['dur'] > 0 and isinstance(e['ts'], float) for e in ops)
    gz = tmp_path / 'trace.json.gz'
    both[0].export_chrome_trace(str(gz))
    import gzip
    assert json.loads(gzip.open(gz, 'rt').read())['traceEvents'] == trace['traceEvents']


def test_ops_are_restored_after_profiling():
    originals = (lg.Tensor.__add__, lg.Tensor.__getitem__, lg.mul, lg.nn.functional.linear, lg.randn, shape.t,
                 lg.Tensor.sum)
    assert originals[1:4] == (indexing.getitem, elementwise.mul, lg.nn.functional.linear)
    assert originals[0].__code__.co_code == elementwise.Add.forward.__code__.co_code  # (the forward, named __add__)
    with pytest.raises(ValueError):
        with lgp.profile():
            assert _is_wrapper(lg.mul) and _is_wrapper(elementwise.mul) and _is_wrapper(linalg.addmm)
            assert _is_wrapper(lg.Tensor.__add__) and lg.mul.__wrapped__ is originals[2]
            import leafgrad.nn._functional.basic as F_inside  # a name bound while profiling is restored too
            raise ValueError
    assert (lg.Tensor.__add__, lg.Tensor.__getitem__, lg.mul, lg.nn.functional.linear, lg.randn, shape.t,
            lg.Tensor.sum) == originals
    assert F_inside.addmm is linalg.addmm and not _is_wrapper(linalg.addmm)


def test_indexing_named_as_torch():
    def run(T, P):
        x = T.tensor(np.arange(12.0).reshape(3, 4))
        with P.profile() as prof:
            x[1]
            x[0:2]
            x[T.tensor([0, 2])]
            x[x > 5]
            x[1] = 7.0
            x[T.tensor([0, 1])] = 1.0
        return [e.name for e in prof.events() if e.cpu_parent is None]
    ours, theirs = run(lg, lgp), run(torch, tp)
    for name in ('aten::select', 'aten::slice', 'aten::index', 'aten::fill_', 'aten::index_put_'):
        assert name in ours and name in theirs


def test_only_the_profiling_thread_is_recorded():
    def run(T, P):
        x = T.ones(3)
        worker = threading.Thread(target=lambda: [T.exp(x) for _ in range(3)])
        with P.profile() as prof:
            worker.start()
            worker.join()
            T.sin(x)
        return [e.name for e in prof.events()]
    assert run(lg, lgp) == run(torch, tp) == ['aten::sin']


def test_record_function_as_decorator_and_outside_a_profile():
    def run(T, P):
        @P.record_function('step')
        def step(a):
            return a * 2
        x = T.ones(2)
        step(x)  # no profile: nothing recorded, the function runs
        with P.profile() as prof:
            step(x)
            step(x)
        return [(e.name, e.is_user_annotation) for e in prof.events() if e.cpu_parent is None]
    assert run(lg, lgp) == run(torch, tp) == [('step', True), ('step', True)]
    lg_msg, torch_msg = raises_like(lambda: lgp.record_function(3).__enter__(),
                                    lambda: tp.record_function(3).__enter__())
    assert torch_msg.startswith(lg_msg)


def test_schedule_steps_and_trace_ready_as_torch():
    def run(T, P):
        ready = []
        x = T.ones(3)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            schedule = P.schedule(wait=1, warmup=1, active=2, repeat=2)
            with P.profile(schedule=schedule,
                           on_trace_ready=lambda p: ready.append(sorted(e.name for e in p.events()))) as prof:
                for i in range(12):
                    T.exp(x * i)
                    prof.step()
        return ready, prof.step_num, [schedule(i) for i in range(10)]
    ours, theirs = run(lg, lgp), run(torch, tp)
    assert len(ours[0]) == len(theirs[0]) == 2
    for names in ours[0] + theirs[0]:
        counts = Counter(names)
        assert (counts['ProfilerStep*'], counts['aten::exp'], counts['aten::mul']) == (2, 2, 2)
    assert ours[1] == theirs[1] and [a.name for a in ours[2]] == [a.name for a in theirs[2]]


def test_schedule_errors_and_warnings_as_torch():
    lg_msg, torch_msg = raises_like(lambda: lgp.schedule(wait=1, warmup=1, active=0),
                                    lambda: tp.schedule(wait=1, warmup=1, active=0))
    assert lg_msg == torch_msg
    for P in (lgp, tp):
        with pytest.warns(UserWarning, match="Profiler won't be using warmup"):
            P.schedule(wait=1, warmup=0, active=1)


def test_refusals_as_torch():
    for make in (lambda P: P.profile(activities=[]), lambda P: P.profile(activities=['cpu'])):
        lg_msg, torch_msg = raises_like(lambda: make(lgp), lambda: make(tp))
        assert lg_msg == torch_msg
    for method in ('events', 'key_averages'):
        lg_msg, torch_msg = raises_like(lambda: getattr(lgp.profile(), method)(),
                                        lambda: getattr(tp.profile(), method)())
        assert lg_msg == torch_msg
    lg_msg, torch_msg = raises_like(
        lambda: lgp.profile(activities=[lgp.ProfilerActivity.CPU, lgp.ProfilerActivity.CPU]),
        lambda: tp.profile(activities=[tp.ProfilerActivity.CPU, tp.ProfilerActivity.CPU]))
    assert lg_msg == torch_msg
    with pytest.raises(NotImplementedError):
        lgp.profile(with_flops=True).start()


def test_cuda_activity_without_cuda_warns_as_torch():
    for P, T in ((lgp, lg), (tp, torch)):
        with pytest.warns(UserWarning, match='CUDA is not available, disabling CUDA profiling'):
            with P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA]) as prof:
                T.ones(2).exp()
        assert [e.name for e in prof.events()][-1] == 'aten::exp'


def test_autograd_profiler_as_torch():
    for T, AP in ((lg, lg_autograd_profiler), (torch, torch.autograd.profiler)):
        with AP.profile(enabled=False) as prof:
            T.ones(2).exp()
        assert prof is None
        prof = AP.profile(record_shapes=True)
        assert str(prof).replace('leafgrad', 'torch') == '<unfinished torch.autograd.profile>'
        with prof:
            T.ones(2, 3).exp()
        events = prof.function_events
        assert [(e.name, e.input_shapes) for e in events if e.name == 'aten::exp'] == [('aten::exp', [[2, 3]])]
        assert prof.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))
        assert prof.total_average().count == len(events)
        with pytest.warns(FutureWarning, match='use_cuda'):
            AP.profile(use_cuda=True)
    lg_msg, torch_msg = raises_like(lambda: _reenter(lg_autograd_profiler), lambda: _reenter(torch.autograd.profiler))
    assert lg_msg == torch_msg


def _reenter(AP):
    prof = AP.profile()
    with prof:
        with prof:
            pass


def test_emit_nvtx_refused_as_on_a_cpu_build():
    lg_msg, torch_msg = raises_like(lambda: lg_autograd_profiler.emit_nvtx().__enter__(),
                                    lambda: torch.autograd.profiler.emit_nvtx().__enter__())
    assert same_message(lg_msg, torch_msg)
    with pytest.raises(NotImplementedError, match='ITT'):
        with lg_autograd_profiler.emit_itt():
            pass


def test_nested_profilers_each_keep_their_window():
    x = lg.ones(2)
    with lgp.profile() as outer:
        x.tan()
        with lgp.profile() as inner:
            x.cos()
        x.sin()
    assert [e.name for e in outer.events()] == ['aten::tan', 'aten::cos', 'aten::sin']
    assert [e.name for e in inner.events()] == ['aten::cos']
    assert not _is_wrapper(lg.cos) and not _is_wrapper(lg.Tensor.tan)


def test_with_stack_and_export_stacks(tmp_path):
    with lg_autograd_profiler.profile(with_stack=True) as prof:
        lg.ones(2).exp()
    exp = next(e for e in prof.function_events if e.name == 'aten::exp')
    assert exp.stack and 'test_profiler.py' in exp.stack[0] and 'test_with_stack_and_export_stacks' in exp.stack[0]
    table = prof.key_averages(group_by_stack_n=1).table()
    assert 'Source Location' in table.split('\n')[1] and 'test_profiler.py' in table
    path = tmp_path / 'stacks.txt'
    prof.export_stacks(str(path))
    assert all(line.rsplit(' ', 1)[1].isdigit() for line in path.read_text().splitlines())
    with pytest.raises(AssertionError, match='with_stack=True'):
        with lg_autograd_profiler.profile() as plain:
            pass
        plain.export_stacks(str(path))


def test_anomaly_detection_and_profiler_together():
    a = lg.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with lg.autograd.detect_anomaly(), lgp.profile() as prof:
            (a * 2).sum().backward()
    assert 'autograd::engine::evaluate_function: MulBackward0' in [e.name for e in prof.events()]
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def test_tensorboard_trace_handler_writes_a_trace(tmp_path):
    handler = lgp.tensorboard_trace_handler(str(tmp_path / 'logs'), worker_name='w0')
    with lgp.profile(schedule=lgp.schedule(wait=0, warmup=1, active=1), on_trace_ready=handler) as prof:
        for _ in range(2):
            lg.ones(2).exp()
            prof.step()
    files = list((tmp_path / 'logs').iterdir())
    assert len(files) == 1 and files[0].name.startswith('w0.') and files[0].name.endswith('.pt.trace.json')
    assert 'aten::exp' in {e['name'] for e in json.loads(files[0].read_text())['traceEvents']}


def test_in_place_ops_named_as_torch():
    def run(T, P):
        x = T.zeros(3)
        with P.profile() as prof:
            x.add_(1)
            x.mul_(2)
            x.zero_()
            x.uniform_()
            x.random_(5)
            x += 1
        return [e.name for e in prof.events() if e.cpu_parent is None]
    assert run(lg, lgp) == run(torch, tp) == ['aten::add_', 'aten::mul_', 'aten::zero_', 'aten::uniform_',
                                              'aten::random_', 'aten::add_']


LINALG_CALLS = {  # (A a symmetric positive-definite 3x3, B a 3x2, v a vector of 3; float64)
    'cholesky': 'L.cholesky(A)', 'cholesky_ex': 'L.cholesky_ex(A)', 'cond': 'L.cond(A)', 'cross': 'L.cross(v, v)',
    'det': 'L.det(A)', 'diagonal': 'L.diagonal(A)', 'eig': 'L.eig(A)', 'eigh': 'L.eigh(A)', 'eigvals': 'L.eigvals(A)',
    'eigvalsh': 'L.eigvalsh(A)', 'householder_product': 'L.householder_product(A, v[:2])', 'inv': 'L.inv(A)',
    'inv_ex': 'L.inv_ex(A)', 'lstsq': 'L.lstsq(A, B)', 'lu': 'L.lu(A)', 'lu_factor': 'L.lu_factor(A)',
    'lu_factor_ex': 'L.lu_factor_ex(A)', 'lu_solve': 'L.lu_solve(*L.lu_factor(A), B)', 'matmul': 'L.matmul(A, B)',
    'matrix_exp': 'L.matrix_exp(A)', 'matrix_norm': 'L.matrix_norm(A)', 'matrix_power': 'L.matrix_power(A, 3)',
    'matrix_rank': 'L.matrix_rank(A)', 'multi_dot': 'L.multi_dot([A, A, B])', 'norm': 'L.norm(A)',
    'norm of a vector': 'L.norm(v)', 'pinv': 'L.pinv(A)', 'qr': 'L.qr(A)', 'slogdet': 'L.slogdet(A)',
    'solve': 'L.solve(A, B)', 'solve_ex': 'L.solve_ex(A, B)', 'solve_triangular': 'L.solve_triangular(A, B, upper=True)',
    'svd': 'L.svd(A)', 'svdvals': 'L.svdvals(A)', 'tensorinv': 'L.tensorinv(A, 1)', 'tensorsolve': 'L.tensorsolve(A, v)',
    'vander': 'L.vander(v)', 'vecdot': 'L.vecdot(v, v)', 'vector_norm': 'L.vector_norm(v)',
}


@pytest.mark.parametrize('name', LINALG_CALLS)
def test_linalg_functions_recorded_as_torch(name):
    """Each torch.linalg function's top-level events (aten::linalg_<name>; lu_solve's call
    also records lu_factor's), and linalg_vector_norm where matrix_norm and norm call it
    (linalg.matmul was recorded as aten::matmul, linalg.vector_norm not at all)."""
    names = []
    for T, P in ((lg, lgp), (torch, tp)):
        env = {'L': T.linalg, 'v': T.tensor([1., 2., 3.], dtype=T.float64),
               'A': T.tensor([[4., 1., .5], [1., 3., .2], [.5, .2, 2.]], dtype=T.float64),
               'B': T.tensor([[1., 2.], [0., 1.], [3., 1.]], dtype=T.float64)}
        with P.profile() as prof:
            eval(LINALG_CALLS[name], env)
        names.append(([e.name for e in prof.events() if e.cpu_parent is None],
                      [e.name for e in prof.events() if e.name == 'aten::linalg_vector_norm']))
    assert names[0] == names[1]
