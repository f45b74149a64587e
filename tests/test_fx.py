"""torch.fx against PyTorch: tests/fx_cases.py run once with each library, case by case (generated
code, printed graphs, values, errors)."""
import json
import os
import subprocess
import sys

import pytest

from oracle import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _outcomes(*launch):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get('PYTHONPATH')])))
    done = subprocess.run([sys.executable, *launch, os.path.join(HERE, 'fx_cases.py')], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope='module')
def outcomes():
    if torch is None:
        pytest.skip('needs PyTorch, the oracle')
    return _outcomes('-m', 'leafgrad'), _outcomes()


def _case_names():
    import ast
    with open(os.path.join(HERE, 'fx_cases.py')) as f:
        tree = ast.parse(f.read())
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and any(getattr(d, 'id', None) == 'case' for d in node.decorator_list)]


@pytest.mark.parametrize('name', _case_names())
def test_case_as_pytorch(outcomes, name):
    ours, theirs = outcomes
    assert ours[name].replace('leafgrad', 'torch') == theirs[name]


def test_fx_cases_exist():
    assert len(_case_names()) >= 12


def test_print_readable_refuses_the_annotations_it_does_not_print():
    """leafgrad.fx in this process: run in a subprocess, as the cases are (fx switches on
    overrides for the rest of the process)."""
    code = ('import leafgrad as lg, leafgrad.fx as fx\n'
            'gm = fx.symbolic_trace(lambda x: lg.relu(x) + 1)\n'
            'assert gm.print_readable(print_output=False).startswith("class ")\n'
            'for flag in ("include_stride", "include_device", "colored"):\n'
            '    try:\n'
            '        gm.print_readable(print_output=False, **{flag: True})\n'
            '    except NotImplementedError as e:\n'
            '        assert flag in str(e)\n'
            '    else:\n'
            '        raise AssertionError(flag)\n'
            'print("ok")\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get('PYTHONPATH')])))
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, timeout=300)
    assert done.stdout.strip() == 'ok', done.stderr[-2000:]
