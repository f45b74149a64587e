"""leafgrad.compile's dynamic shapes against torch.compile's: which calls count as a new
signature (torch: a recompile) toward the recompile limit, with the calls' results eager's."""
import numpy as np
import pytest

import leafgrad as lg
from leafgrad import _dynamo
from leafgrad._compile import _SIZES_KEPT
from torch_facts import ask_torch

# torch.compile with a backend that counts the graphs it is given (a recompile each), in a
# process of its own (its frame hook stays for the rest of a process)
_TORCH_FACTS = r"""
import json, torch
from torch._dynamo.testing import CompileCounter
facts = {}
G = 0
def scale_by_global(x):
    return x * G
def run(name, fn, calls, **kw):
    torch._dynamo.reset()
    cnt = CompileCounter()
    c = torch.compile(fn, backend=cnt, **kw)
    for call in calls:
        if callable(call):
            args = call()
        else:
            args = call
        c(*args)
    facts[name] = cnt.frame_count
double = lambda x: (x * 2).sum()
run('sizes', double, [(torch.ones(n),) for n in range(1, 13)])
run('sizes_from_2', double, [(torch.ones(n),) for n in range(2, 14)])
run('sizes_static', double, [(torch.ones(n),) for n in range(1, 13)], dynamic=False)
run('sizes_dynamic', double, [(torch.ones(n),) for n in range(1, 13)], dynamic=True)
run('rows_then_cols', double, [(torch.ones(3, n),) for n in range(1, 5)] + [(torch.ones(n, 3),) for n in range(1, 5)])
run('ints', lambda x, k: (x * k).sum(), [(torch.ones(3), k) for k in range(0, 12)])
run('floats', lambda x, k: (x * k).sum(), [(torch.ones(3), k + 0.5) for k in range(0, 12)])
def set_g(k):
    global G
    G = k
    return (torch.ones(3),)
run('global_int', scale_by_global, [lambda k=k: set_g(k) for k in range(12)])
def marked(n):
    x = torch.ones(n)
    torch._dynamo.mark_dynamic(x, 0)
    return (x,)
run('marked', double, [lambda n=n: marked(n) for n in range(2, 12)])
lin = torch.nn.Linear(4, 3)
run('module_batches', lambda x: lin(x).sum(), [(torch.ones(n, 4),) for n in range(1, 12)])
with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
    run('automatic_off', double, [(torch.ones(n),) for n in range(1, 13)])
with torch._dynamo.config.patch(specialize_float=True):
    run('floats_specialized', lambda x, k: (x * k).sum(), [(torch.ones(3), k + 0.5) for k in range(0, 12)])
run('dtype_then_sizes', double, [(torch.ones(n, dtype=d),) for d in (torch.float32, torch.float64) for n in range(2, 6)])
def static(n):
    x = torch.ones(n)
    torch._dynamo.mark_static(x, 0)
    return (x,)
run('static_marked', double, [lambda n=n: static(n) for n in range(2, 12)])
run('compiled_module', lin, [(torch.ones(n, 4),) for n in range(1, 12)])
print(json.dumps(facts))
"""


@pytest.fixture(scope='module')
def torch_counts():
    return ask_torch(_TORCH_FACTS)


G = 0


def scale_by_global(x):
    return (x * G).sum()


def double(x):
    return (x * 2).sum()


def times(x, k):
    return (x * k).sum()


def set_g(k):
    global G
    G = k
    return (lg.ones(3),)


def marked(n):
    x = lg.ones(n)
    _dynamo.mark_dynamic(x, 0)
    return (x,)


lin = lg.nn.Linear(4, 3)


def static(n):
    x = lg.ones(n)
    _dynamo.mark_static(x, 0)
    return (x,)

SCENARIOS = {
    'sizes': (double, lambda: [(lg.ones(n),) for n in range(1, 13)], {}),
    'sizes_from_2': (double, lambda: [(lg.ones(n),) for n in range(2, 14)], {}),
    'sizes_static': (double, lambda: [(lg.ones(n),) for n in range(1, 13)], {'dynamic': False}),
    'sizes_dynamic': (double, lambda: [(lg.ones(n),) for n in range(1, 13)], {'dynamic': True}),
    'rows_then_cols': (double, lambda: [(lg.ones(3, n),) for n in range(1, 5)] + [(lg.ones(n, 3),) for n in range(1, 5)],
                       {}),
    'ints': (times, lambda: [(lg.ones(3), k) for k in range(0, 12)], {}),
    'floats': (times, lambda: [(lg.ones(3), k + 0.5) for k in range(0, 12)], {}),
    'global_int': (scale_by_global, lambda: [lambda k=k: set_g(k) for k in range(12)], {}),
    'marked': (double, lambda: [lambda n=n: marked(n) for n in range(2, 12)], {}),
    'module_batches': (lambda x: lin(x).sum(), lambda: [(lg.ones(n, 4),) for n in range(1, 12)], {}),
    'static_marked': (double, lambda: [lambda n=n: static(n) for n in range(2, 12)], {}),
    'compiled_module': (lin, lambda: [(lg.ones(n, 4),) for n in range(1, 12)], {}),
    'dtype_then_sizes': (double, lambda: [(lg.ones(n, dtype=d),) for d in (lg.float32, lg.float64) for n in range(2, 6)],
                         {}),
}
CONFIGURED = {'automatic_off': ('sizes', {'automatic_dynamic_shapes': False}),
              'floats_specialized': ('floats', {'specialize_float': True})}


def _count(fn, calls, **kw):
    """The signatures a compiled fn counts toward the recompile limit over ``calls`` (each
    call's result checked against eager's), and the compiled callable's state."""
    compiled = lg.compile(fn, **kw)
    for call in calls:
        args = call() if callable(call) else call
        got = compiled(*args)
        assert lg.equal(got, fn(*args))
    state = compiled._compiled if isinstance(compiled, lg.nn.Module) else compiled._leafgrad_compiled
    return state.traces, state


@pytest.mark.parametrize('name', sorted(SCENARIOS) + sorted(CONFIGURED))
def test_the_calls_that_count_as_a_new_signature_are_torchs_recompiles(name, torch_counts, capsys):
    """A size or number that changes becomes dynamic and its later values count as no new
    signature, as in PyTorch (dynamic=None, dynamic=True, mark_dynamic, sizes 0 and 1
    specialised, a dtype change still new); dynamic=False, a global's value, and the config's
    switches (automatic_dynamic_shapes, specialize_float) keep each value a signature, up to
    the limit."""
    scenario, settings = CONFIGURED.get(name, (name, {}))
    fn, calls, kw = SCENARIOS[scenario]
    with _dynamo.config.patch(**settings):
        count, _ = _count(fn, calls(), **kw)
    assert count == torch_counts[name]
    # (past the limit: PyTorch's warning, once, as a log line on stderr, not a Python warning)
    assert capsys.readouterr().err.count('hit config.recompile_limit (8)') == (count == 8)


def _sizes(state):
    return [key[1][0] for key in state.cache]  # (key[0]: the arguments' tuple, key[1]: the tensor's)


def test_a_new_size_runs_eagerly_then_is_traced_on_its_second_call():
    """leafgrad has no symbolic shapes: a new size of a dynamic dim runs eagerly the first time
    (a generation loop, each length once, pays no trace) and is traced the second time (a
    training loop's repeated batch shapes replay)."""
    compiled = lg.compile(double)
    state = compiled._leafgrad_compiled

    def call(n):
        x = lg.ones(n, requires_grad=True)
        y = compiled(x)
        y.backward()
        assert lg.equal(x.grad, lg.full((n,), 2.0))
        return type(y.grad_fn).__name__

    call(2)
    call(3)  # (the second size: dim 0 becomes dynamic; traced, as PyTorch recompiles)
    assert _sizes(state) == [(2,), (3,)]
    assert call(4) == 'SumBackward0' and _sizes(state) == [(2,), (3,)]  # (eagerly)
    assert call(4) == 'SumBackward0' and _sizes(state) == [(2,), (3,), (4,)]  # (traced: eager's run)
    assert call(4) == 'CompiledFunctionBackward' and state.traces == 2  # (replayed; still two signatures)
    assert 'the size of dim 0 changed, which makes it dynamic' in compiled.report()


def test_the_traces_of_one_dynamic_signature_are_capped():
    compiled = lg.compile(double)
    state = compiled._leafgrad_compiled
    for n in range(2, _SIZES_KEPT + 10):
        for _ in range(2):
            assert compiled(lg.ones(n)).item() == 2.0 * n
    assert len(state.cache) <= _SIZES_KEPT + 1 and state.traces == 2
    assert (_SIZES_KEPT + 9,) in _sizes(state) and (4,) not in _sizes(state)  # (the oldest forgotten)


def test_a_loop_over_more_sizes_than_are_kept_stops_tracing_new_sizes():
    """Sizes that come round again after their traces were forgotten (a loop over 100 lengths,
    repeated) would be traced each time round: once a dynamic signature has forgotten as many
    traces as it keeps, its new sizes run eagerly (the traces kept still replay), and the
    report says so."""
    compiled = lg.compile(double)
    state = compiled._leafgrad_compiled
    for _ in range(4):
        for n in range(2, 2 * _SIZES_KEPT + 20):
            assert compiled(lg.ones(n)).item() == 2.0 * n
    traced = len(state.compile_seconds)
    for n in range(2, 2 * _SIZES_KEPT + 20):
        compiled(lg.ones(n))
    assert len(state.compile_seconds) == traced and len(state.cache) <= _SIZES_KEPT + 1
    assert 'its new sizes run eagerly from now on' in compiled.report()


def test_fail_on_recompile_allows_a_new_size_of_a_dynamic_dim():
    """A new size of a dynamic dim is no recompile in PyTorch: the fail_on_recompile stance lets
    it run; a new dtype is one, and raises."""
    compiled = lg.compile(double)
    compiled(lg.ones(2))
    compiled(lg.ones(3))
    with lg.compiler.set_stance('fail_on_recompile'):
        for n in (4, 5, 4, 5):
            assert compiled(lg.ones(n)).item() == 2.0 * n
        with pytest.raises(RuntimeError, match='fail_on_recompile'):
            compiled(lg.ones(3, dtype=lg.float64))


def test_the_recompile_limit_warning_is_a_log_line_in_torchs_format(capsys):
    import warnings
    compiled = lg.compile(double, dynamic=False)
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # (no Python warning: a program run with -W error goes on)
        for n in range(1, 12):
            compiled(lg.ones(n))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4 and all(line.startswith('W') and '/8] ' in line for line in lines), lines
    text = [line.split('] ', 2)[-1] for line in lines]
    assert text[0] == 'leafgrad._dynamo hit config.recompile_limit (8)'
    assert text[1].startswith("   function: 'double' (") and text[1].endswith(f"{__file__}:{double.__code__.co_firstlineno})")
    assert text[2] == '   last reason: tensors [9] float32'
    assert text[3] == 'To log all recompilation reasons, use TORCH_LOGS="recompiles".'
