"""``leafgrad.jit`` against torch with TorchScript switched off (``PYTORCH_JIT=0``, which leafgrad
always behaves as): what each entry point returns, whether it runs the function, its warnings
and errors. torch's side runs in a fresh process with that variable set."""
import json
import os
import subprocess
import sys

import pytest

from oracle import lg

PROGRAM = r'''
import json, typing, warnings
import {lib} as t

calls = []
def f(x):
    calls.append(x)
    return x * 2

class M(t.nn.Module):
    def forward(self, x):
        calls.append(x)
        return x + 1

class S(t.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.w = t.nn.Parameter(t.ones(2))
    @t.jit.script_method
    def forward(self, x):
        return x * self.w

m = M()
x = t.ones(2)
CASES = {{
    'script f': lambda: t.jit.script(f) is f,
    'script module': lambda: t.jit.script(m) is m,
    'script class': lambda: t.jit.script(M) is M,
    'script optimize': lambda: t.jit.script(f, optimize=True) is f,
    'script example_inputs': lambda: t.jit.script(f, example_inputs=[(x,)]) is f,
    'script bad keyword': lambda: t.jit.script(f, foo=1),
    'script no argument': lambda: t.jit.script(),
    'trace f': lambda: t.jit.trace(f, x) is f,
    'trace module': lambda: t.jit.trace(m, (x,)) is m,
    'trace keywords': lambda: t.jit.trace(f, (x,), check_trace=False, strict=False, check_inputs=[(x,)]) is f,
    'trace kwarg inputs': lambda: t.jit.trace(f, example_kwarg_inputs={{'x': x}}) is f,
    'trace no inputs': lambda: t.jit.trace(f) is f,
    'trace bad keyword': lambda: t.jit.trace(f, x, foo=1),
    'trace_module': lambda: t.jit.trace_module(m, {{'forward': x}}) is m,
    'trace_module no inputs': lambda: t.jit.trace_module(m),
    'ignore': lambda: t.jit.ignore(f) is f,
    'ignore()': lambda: t.jit.ignore()(f) is f,
    'ignore(drop=True)': lambda: t.jit.ignore(drop=True)(f) is f,
    'ignore(3)': lambda: t.jit.ignore(3),
    'unused': lambda: t.jit.unused(f) is f,
    'export': lambda: t.jit.export(f) is f,
    'script_method': lambda: t.jit.script_method(f) is f,
    'script_if_tracing': lambda: t.jit.script_if_tracing(f)(3),
    'is_scripting': lambda: t.jit.is_scripting(),
    'is_tracing': lambda: t.jit.is_tracing(),
    'annotate': lambda: t.jit.annotate(typing.List[int], [1]),
    'Attribute': lambda: t.jit.Attribute(3, int),
    'Final': lambda: t.jit.Final[int] == typing.Final[int],
    'isinstance List[int]': lambda: t.jit.isinstance([1, 2], typing.List[int]),
    'isinstance List[str]': lambda: t.jit.isinstance([1, 2], typing.List[str]),
    'isinstance empty list': lambda: t.jit.isinstance([], typing.List[str]),
    'isinstance Dict': lambda: t.jit.isinstance({{'a': x}}, typing.Dict[str, t.Tensor]),
    'isinstance Dict wrong': lambda: t.jit.isinstance({{'a': 1}}, typing.Dict[str, t.Tensor]),
    'isinstance Tuple': lambda: t.jit.isinstance((1, 'a'), typing.Tuple[int, str]),
    'isinstance Tuple length': lambda: t.jit.isinstance((1,), typing.Tuple[int, str]),
    'isinstance Optional None': lambda: t.jit.isinstance(None, typing.Optional[int]),
    'isinstance Optional': lambda: t.jit.isinstance(2.0, typing.Optional[int]),
    'isinstance tuple of types': lambda: t.jit.isinstance(1, (str, int)),
    'isinstance list of types': lambda: t.jit.isinstance(1, [str, int]),
    'isinstance tensor': lambda: t.jit.isinstance(x, t.Tensor),
    'isinstance nested': lambda: t.jit.isinstance([[1], [2, 'a']], typing.List[typing.List[int]]),
    'isinstance nested ok': lambda: t.jit.isinstance({{'a': [(1, 'b')]}}, typing.Dict[str, typing.List[typing.Tuple[int, str]]]),
    'isinstance Union first container decides': lambda: t.jit.isinstance('a', typing.Union[typing.List[int], str]),
    'isinstance Callable': lambda: t.jit.isinstance(f, typing.Callable[[int], int]),
    'ScriptModule is a Module': lambda: issubclass(t.jit.ScriptModule, t.nn.Module),
    'ScriptModule subclass runs': lambda: S()(x).tolist(),
    'ScriptModule parameters': lambda: [p.shape == (2,) for p in S().parameters()],
    'ScriptModule instance': lambda: isinstance(t.jit.script(S()), t.jit.ScriptModule),
    'ScriptFunction': lambda: isinstance(t.jit.script(f), t.jit.ScriptFunction),
    'annotations': lambda: (t.jit.annotations.BroadcastingList2[int], t.jit.annotations.Optional is typing.Optional),
    'TracerWarning': lambda: issubclass(t.jit.TracerWarning, Warning),
    'Error': lambda: issubclass(t.jit.Error, RuntimeError),
}}
out = {{}}
for name, case in CASES.items():
    calls.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            result = ['returned', case()]
        except Exception as e:
            result = ['raised', type(e).__name__, str(e).replace('{lib}', 'torch')]
    result.append([[w.category.__name__, str(w.message).replace('{lib}', 'torch')] for w in caught])
    result.append(len(calls))  # how often f or M.forward ran
    out[name] = result
print(json.dumps(out))
'''


def _run(lib):
    env = dict(os.environ, PYTORCH_JIT='0')
    proc = subprocess.run([sys.executable, '-c', PROGRAM.format(lib=lib)], capture_output=True, text=True, env=env,
                          check=True)
    return json.loads(proc.stdout)


@pytest.fixture(scope='module')
def outcomes():
    return _run('leafgrad'), _run('torch')


CASES = [line.split("'")[1] for line in PROGRAM.splitlines() if line.startswith("    '")]


@pytest.mark.parametrize('case', CASES)
def test_jit_entry_point_as_torch_without_the_jit(outcomes, case):
    ours, theirs = outcomes
    assert ours[case] == theirs[case]


def test_nothing_is_traced_or_scripted_in_process():
    assert lg.jit.is_scripting() is False and lg.jit.is_tracing() is False
    assert repr(lg.jit.ScriptModule) == "<class 'leafgrad.jit.ScriptModule'>"
