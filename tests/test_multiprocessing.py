"""torch.multiprocessing: tensors in shared memory shared with child processes (Hogwild), under
each start method, sent through queues, moved with their views; spawn's errors. Each program
(tests/mp_cases.py) runs under leafgrad and under torch and must observe the same."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip('torch')

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _run(library, case, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get('PYTHONPATH', '')]))
    done = subprocess.run([sys.executable, os.path.join(HERE, 'mp_cases.py'), library, case, *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=HERE)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.replace('leafgrad', 'torch').splitlines()


@pytest.mark.parametrize('case,args', [
    ('hogwild', ['spawn']), ('hogwild', ['fork']),
    ('through_a_queue', ['spawn']), ('through_a_queue', ['fork']),
    ('views_move_with_their_base', []),
    ('spawning', []),
])
def test_as_torch(case, args):
    mine = _run('leafgrad', case, *args)
    assert mine == _run('torch', case, *args)
    assert mine  # (the program printed what it saw)


def test_a_worker_changes_the_parents_model():
    """The comparison above could pass with two libraries that share nothing: the numbers the
    parent sees after its workers trained are not the initial ones."""
    lines = _run('leafgrad', 'hogwild', 'spawn')
    assert lines[1] == 'shared True True'
    from leafgrad import manual_seed, nn
    manual_seed(0)
    initial = nn.Linear(2, 1)
    weight = [round(float(v), 4) for v in initial.weight.detach().reshape(-1).tolist()]
    assert f'weight {weight}' not in lines[-1]
