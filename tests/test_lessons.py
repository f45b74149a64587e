"""The lessons' programs run unchanged under ``import leafgrad as torch`` and print exactly what
the lesson shows (and what torch prints). Programs that draw random numbers get the same
fixed data in both runs (a preamble replaces randn and nn.Linear's initialisation)."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent / 'lessons'
ROOT = pathlib.Path(__file__).parent.parent
PROGRAMS = sorted(p.stem for p in HERE.glob('*.py'))

FIXED_DATA = '''
import numpy as _np
_rs = _np.random.RandomState(0)
def _fixed_randn(*size, **kw):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return torch.tensor(_rs.standard_normal(size).astype('float32'), **kw)
torch.randn = _fixed_randn
def _fixed_reset(self):
    bound = 1 / self.in_features ** 0.5
    with torch.no_grad():
        self.weight.copy_(torch.tensor(_rs.uniform(-bound, bound, tuple(self.weight.shape)).astype('float32')))
        self.bias.copy_(torch.tensor(_rs.uniform(-bound, bound, tuple(self.bias.shape)).astype('float32')))
import torch.nn as _nn
_nn.Linear.reset_parameters = _fixed_reset
'''


def as_leafgrad(source):
    """The lesson's program with its import lines switched to leafgrad, and nothing else."""
    source = re.sub(r'^import torch\.nn as nn$', 'import leafgrad.nn as nn', source, flags=re.M)
    source = re.sub(r'^import torch$', 'import leafgrad as torch', source, flags=re.M)
    return source


def with_fixed_data(source, lib):
    lines = source.split('\n')
    last_import = max(i for i, line in enumerate(lines) if line.startswith('import '))
    preamble = FIXED_DATA if lib == 'torch' else FIXED_DATA.replace('import torch.nn as _nn', 'import leafgrad.nn as _nn')
    return '\n'.join(lines[:last_import + 1] + [preamble] + lines[last_import + 1:])


def run(source):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1')
    proc = subprocess.run([sys.executable, '-c', source], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


@pytest.mark.parametrize('name', PROGRAMS)
def test_lesson_program(name):
    source = (HERE / f'{name}.py').read_text()
    uses_random = 'randn' in source or 'nn.Linear' in source
    lg_source = as_leafgrad(source)
    if uses_random:
        source, lg_source = with_fixed_data(source, 'torch'), with_fixed_data(lg_source, 'leafgrad')
    lg_out, lg_err = run(lg_source)
    expected = HERE / f'{name}.out'
    if expected.exists():
        assert lg_out == expected.read_text()
    pytest.importorskip('torch')
    torch_out, torch_err = run(source)
    assert lg_out == torch_out


def test_non_leaf_grad_warning_on_stderr():
    """The first lesson: reading h.grad warns, as PyTorch does."""
    _, err = run(as_leafgrad((HERE / 'leaves.py').read_text()))
    assert 'UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed' in err
