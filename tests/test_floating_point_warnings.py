"""NumPy's RuntimeWarnings for floating-point exceptions (1/0, inf - inf, an overflow) stay
inside leafgrad, as PyTorch gives none, whatever the user's warning filters: set after import,
inside catch_warnings blocks, under pytest's filters for each test, or a block that was open
while leafgrad was imported. The user's own NumPy code still warns."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import leafgrad as lg


FP_PROGRAMS = [
    'x = T.tensor([1.0, 0.0, -1.0], requires_grad=True); (x / x).sum().backward()',
    'x = T.tensor([0.0], requires_grad=True); (1 / x).sum().backward()',
    'T.tensor([1e30]) * T.tensor([1e30])',
    'T.tensor([[1.0, 2.0]])[:, :0].mean(0)',
    'T.tensor([]).mean()',
    'T.tensor([3e38]).sum()',
    'T.tensor([float("nan")]).to(T.int64)',
    'T.tensor([1e10], dtype=T.float16)',
    'T.softmax(T.tensor([float("inf"), 1.0]), 0)',
    'T.log(T.tensor([0.0, -1.0]))',
    # NumPy's var, std and mean are Python code in NumPy's own module
    'T.tensor([-0.6, float("inf"), 1.4], dtype=T.float64).std()',
    'T.tensor([[float("inf"), -float("inf")]]).var(1)',
    'T.nn.functional.layer_norm(T.tensor([[float("inf"), 1.0]]), (2,))',
    'T.tensor([], dtype=T.float16).mean()',
]


@pytest.mark.parametrize('program', FP_PROGRAMS)
def test_floating_point_warnings_do_not_leak_whatever_the_filters(program):
    """NumPy's RuntimeWarnings for 1/0, inf - inf, overflow stay inside leafgrad under the user's
    own filters set after import, inside catch_warnings blocks, and under pytest's filters for
    each test (PyTorch gives none); the user's own NumPy code still warns."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        exec(program, {'T': lg})
        with pytest.raises(RuntimeWarning, match='divide by zero'):
            np.array([1.0]) / 0


def test_floating_point_filter_survives_a_block_open_at_import():
    """A catch_warnings block open while leafgrad is imported (pytest collects modules inside
    one) takes the filter with it when it ends; the filter comes back at the next change."""
    source = '\n'.join([
        'import warnings',
        'with warnings.catch_warnings():',
        '    import leafgrad as T',
        'warnings.simplefilter("error")',
        'T.tensor([1.0]) / 0',
        'T.tensor([1e30]) * T.tensor([1e30])',
        "print('silent')",
    ])
    run = subprocess.run([sys.executable, '-c', source], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == 'silent\n', run.stderr[-2000:]
