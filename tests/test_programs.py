"""Our own PyTorch programs (``tests/programs/*.py``, written for these tests in the style of real
training scripts) print the same with PyTorch and under ``python -m leafgrad``: stdout identical once
'leafgrad' reads 'torch' and memory addresses are masked, the same warnings, the same exit status.

PyTorch's side runs in one process that imports torch once and forks a child per program (a fresh
interpreter per program would pay torch's import, seconds, each time); leafgrad's side runs each
program as a user would, ``python -m leafgrad program.py``, in parallel with it.
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest

torch = pytest.importorskip('torch')

HERE = pathlib.Path(__file__).parent / 'programs'
ROOT = HERE.parent.parent
PROGRAMS = sorted(p.stem for p in HERE.glob('*.py'))
TIMEOUT = 300

_TORCH_DRIVER = r'''
import os, runpy, sys, traceback
import torch
torch.set_num_threads(1)
# what the first optimizer step imports (torch._dynamo and its kin, seconds of CPU) is imported
# once here, before the forks, instead of once in every program
_p = torch.nn.Parameter(torch.ones(1))
for _opt in (torch.optim.SGD([_p], lr=0.1), torch.optim.Adam([_p]), torch.optim.AdamW([_p]), torch.optim.RMSprop([_p])):
    _sched = torch.optim.lr_scheduler.StepLR(_opt, 1)
    _p.sum().backward()
    _opt.step()
    _sched.step()
out_dir = sys.argv[1]
for path in sys.argv[2:]:
    name = os.path.splitext(os.path.basename(path))[0]
    work = os.path.join(out_dir, name + '.cwd')
    os.makedirs(work)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, suffix in ((1, '.out'), (2, '.err')):
            os.dup2(os.open(os.path.join(out_dir, name + suffix), os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        os.chdir(work)
        sys.argv = [path]
        sys.path[0] = os.path.dirname(path)
        status = 0
        try:
            runpy.run_path(path, run_name='__main__')
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    _, wait_status = os.waitpid(pid, 0)
    with open(os.path.join(out_dir, name + '.status'), 'w') as f:
        f.write(str(os.waitstatus_to_exitcode(wait_status)))
'''


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED='0', OMP_NUM_THREADS='1', MPLBACKEND='Agg',
                PYTHONWARNINGS='default')


def _run_leafgrad(name, work):
    cwd = os.path.join(work, name)
    os.makedirs(cwd)
    done = subprocess.run([sys.executable, '-m', 'leafgrad', str(HERE / f'{name}.py')], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=TIMEOUT)
    return done.stdout, done.stderr, done.returncode


@pytest.fixture(scope='module')
def runs():
    """Every program, both ways: {name: ((stdout, stderr, status) with torch, the same with leafgrad)}."""
    with tempfile.TemporaryDirectory() as work:
        torch_dir = os.path.join(work, 'torch')
        os.makedirs(torch_dir)
        lg_dir = os.path.join(work, 'leafgrad')
        with ThreadPoolExecutor(max_workers=2) as pool:
            torch_job = pool.submit(subprocess.run, [sys.executable, '-c', _TORCH_DRIVER, torch_dir] +
                                    [str(HERE / f'{name}.py') for name in PROGRAMS], env=_env(),
                                    capture_output=True, text=True, timeout=TIMEOUT * 2)
            lg = {name: _run_leafgrad(name, lg_dir) for name in PROGRAMS}
            driver = torch_job.result()
        assert driver.returncode == 0, driver.stderr
        results = {}
        for name in PROGRAMS:
            base = os.path.join(torch_dir, name)
            with open(base + '.out') as out, open(base + '.err') as err, open(base + '.status') as status:
                results[name] = ((out.read(), err.read(), int(status.read())), lg[name])
        return results


def _stdout(text):
    return re.sub(r'0x[0-9a-f]+', '0x?', text.replace('leafgrad', 'torch'))


def _warnings(stderr):
    """(category, message) of each warning printed, not where it was raised from."""
    return re.findall(r'^\S.*?:\d+: (\w+Warning): (.*)$', stderr.replace('leafgrad', 'torch'), flags=re.M)


def _error(stderr):
    lines = [line for line in stderr.replace('leafgrad', 'torch').splitlines() if line and not line[0].isspace()]
    return lines[-1] if lines else ''


@pytest.mark.parametrize('name', PROGRAMS)
def test_program_prints_what_torch_prints(runs, name):
    (t_out, t_err, t_status), (g_out, g_err, g_status) = runs[name]
    assert t_status == 0, f'the program fails with PyTorch itself:\n{t_err}'
    assert (g_status, _error(g_err) if g_status else '') == (t_status, ''), g_err
    assert _stdout(g_out) == _stdout(t_out)
    assert _warnings(g_err) == _warnings(t_err)


def test_the_comparison_sees_a_difference():
    """The normalisation masks names and addresses, nothing else."""
    assert _stdout('leafgrad.float32 at 0x7f00ab') == _stdout('torch.float32 at 0x55aa01')
    assert _stdout('tensor([1.0000])') != _stdout('tensor([1.0001])')
    assert _warnings('a.py:3: UserWarning: x\n  code\n') == [('UserWarning', 'x')]
