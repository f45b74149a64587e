"""leafgrad._logging.set_logs and TORCH_LOGS, against torch._logging: the same parameters and
errors, and what leafgrad.compile logs (graph breaks, recompiles, guards, generated code, the
report's sentences) in PyTorch's line format."""
import inspect
import logging
import os
import re
import subprocess
import sys

import pytest

import leafgrad as lg
from leafgrad import _logging
from torch_facts import ask_torch

# (in a separate process: torch.compile's frame hook stays installed in the process that runs it)
_TORCH_FACTS = r"""
import inspect, json, torch
sig = inspect.signature(torch._logging.set_logs)
facts = {'parameters': [[n, p.default, p.kind.name] for n, p in sig.parameters.items()]}
errors = []
for args, kwargs in (((1,), {}), ((), {'dynamo': 'info'}), ((), {'dynamo': True}), ((), {'graph_breaks': 3}),
                     ((), {'modules': {'bogus': 10}}), ((), {'modules': {'guards': 1}}), ((), {'nope': True})):
    try:
        torch._logging.set_logs(*args, **kwargs)
        errors.append(None)
    except Exception as e:
        errors.append([type(e).__name__, str(e)])
facts['errors'] = errors
print(json.dumps(facts))
"""


@pytest.fixture(scope='module')
def torch_facts():
    return ask_torch(_TORCH_FACTS)


@pytest.fixture(autouse=True)
def logs_off():
    _logging.set_logs()
    yield
    _logging.set_logs()


def test_set_logs_takes_torchs_parameters_and_refuses_as_it_does(torch_facts):
    sig = inspect.signature(_logging.set_logs)
    assert [[n, p.default, p.kind.name] for n, p in sig.parameters.items()] == torch_facts['parameters']
    got = []
    for args, kwargs in (((1,), {}), ((), {'dynamo': 'info'}), ((), {'dynamo': True}), ((), {'graph_breaks': 3}),
                         ((), {'modules': {'bogus': 10}}), ((), {'modules': {'guards': 1}}), ((), {'nope': True})):
        try:
            _logging.set_logs(*args, **kwargs)
            got.append(None)
        except Exception as e:
            got.append([type(e).__name__, str(e)])
    assert got == torch_facts['errors']
    assert lg._logging is _logging  # (torch._logging under `import leafgrad as torch`)


def _branchy(x):
    y = x * 2
    if y.sum() > 0:  # (a graph break)
        return y + 1
    return y - 1


_BREAK_LINE = _branchy.__code__.co_firstlineno + 2


def _lines(text, artifact=None):
    """The log lines of ``text`` (stderr), PyTorch's format checked; with ``artifact``, only its."""
    pattern = re.compile(r'^([VIWDE])\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ leafgrad/\S+\.py:\d+\] (?:\[\d+/\d+\] )?(.*)$')
    out = []
    for line in text.splitlines():
        m = pattern.match(line)
        assert m, line
        if artifact is None or m.group(2).startswith(f'[__{artifact}] '):
            out.append(m.group(2)[len(f'[__{artifact}] '):] if artifact else m.group(2))
    return out


def test_graph_breaks_and_recompiles_are_logged_with_the_users_line(capsys):
    _logging.set_logs(graph_breaks=True, recompiles=True)
    f = lg.compile(_branchy)
    f(lg.ones(3))
    f(lg.ones(3))  # (the same signature: nothing new to say)
    f(lg.ones(4))
    err = capsys.readouterr().err
    breaks = _lines(err, 'graph_breaks')
    assert breaks[0] == f'Graph break in user code at {__file__}:{_BREAK_LINE}'
    assert breaks[1].startswith('Graph Break Reason: data-dependent branching')
    assert len(breaks) == 4  # (each signature's break)
    recompiles = _lines(err, 'recompiles')
    assert recompiles[0].startswith('Recompiling function _branchy in ') and len(recompiles) == 3
    assert recompiles[2].endswith(': a new signature: tensors [4] float32')


def test_guards_generated_code_and_the_report_are_logged_when_asked(capsys):
    w = lg.randn(3, requires_grad=True)
    f = lg.compile(lambda x: (x * w).tanh().sum())
    _logging.set_logs(guards=True)
    f(lg.randn(3))
    guards = _lines(capsys.readouterr().err, 'guards')
    assert guards[:2] == ['GUARDS:', '- input tensor 1: shape [3], float32, requires_grad=False']
    assert '- captured tensor 1: shape [3], float32, requires_grad=True, the same object' in guards
    _logging.set_logs(output_code=True, dynamo=logging.INFO)
    f(lg.randn(3, requires_grad=True))
    err = capsys.readouterr().err
    code = _lines(err, 'output_code')
    assert code[0] == 'Output code:' and any(line.startswith('def forward_grad(') for line in code)
    said = [line for line in _lines(err) if not line.startswith('[__')]
    assert said == [f._leafgrad_compiled.log[-1]]  # (the report's sentence, as it was written)


def test_nothing_is_logged_unless_asked(capsys):
    f = lg.compile(_branchy)
    f(lg.ones(3))
    f(lg.ones(5))
    _logging.set_logs(graph_breaks=True)
    _logging.set_logs(recompiles=True)  # (each call starts from the defaults: graph_breaks off again)
    f(lg.ones(6, dtype=lg.float64))  # (a new dtype: a recompile, where a new size of dim 0, dynamic now, is none)
    err = capsys.readouterr().err
    assert _lines(err, 'graph_breaks') == [] and len(_lines(err, 'recompiles')) == 3


def test_torch_logs_in_the_environment_decides():
    program = ('import leafgrad as lg, leafgrad._logging as L\n'
               'L.set_logs(recompiles=True)\n'
               'f = lg.compile(lambda x: x * 2 if x.sum() > 0 else x)\n'
               'f(lg.ones(2))\n')
    env = dict(os.environ, TORCH_LOGS='graph_breaks,+dynamo')
    out = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert _lines(out.stderr)[0] == 'Using TORCH_LOGS environment variable for log settings, ignoring call to set_logs'
    assert _lines(out.stderr, 'graph_breaks')[0].startswith('Graph break in user code at <string>:3')
    env['TORCH_LOGS'] = 'graph_breaks,bogus'
    out = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 1 and 'ValueError: \nInvalid log settings: graph_breaks,bogus, must be' in out.stderr


_TUTORIAL_HEADER = """import os
import {module} as torch
os.environ["TORCH_LOGS_FORMAT"] = {fmt!r}
torch._logging._internal.DEFAULT_FORMATTER = torch._logging._internal._default_formatter()
torch._logging._internal._init_logs()
torch._logging.set_logs(graph_breaks=True)
def f(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1
torch.compile(f)(torch.ones(3))
"""


@pytest.mark.parametrize('fmt', ['', 'short', '%(levelname)s| %(message)s'])
def test_the_log_format_a_program_sets_as_pytorchs_tutorials_do(fmt):
    """TORCH_LOGS_FORMAT and the formatter torch._logging._internal._default_formatter() makes of
    it, set as DEFAULT_FORMATTER and applied by _init_logs() (PyTorch's tutorials begin so, to
    print the messages alone): the first line of the graph break's log as PyTorch writes it."""
    pytest.importorskip('torch')
    first = {}
    for module in ('torch', 'leafgrad'):
        out = subprocess.run([sys.executable, '-c', _TUTORIAL_HEADER.format(module=module, fmt=fmt)],
                             capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONWARNINGS='ignore'))
        assert out.returncode == 0, out.stderr[-2000:]
        first[module] = out.stderr.splitlines()[0].replace('leafgrad', 'torch')
    assert first['leafgrad'] == first['torch']
    assert first['leafgrad'].endswith('Graph break in user code at <string>:9')
