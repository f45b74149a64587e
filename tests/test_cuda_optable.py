"""Every row of the op tables on device='cuda' against the same row on the CPU: outputs (values,
dtype, shape, node name) and first derivatives. The tables are the CPU suite's own (elementwise,
reductions, special functions, shapes, indexing, copies, number parts, statistics and products,
linear algebra, nn.functional); the CPU suite checks them against torch, so agreeing with the CPU
run is agreeing with torch. Without a GPU they run on the stand-in for CuPy (tests/cuda_standin.py);
benchmarks/gpu_check.sh runs them on one. The rows that do not run on CUDA yet are listed in
tests/cuda_known_failures.txt (strict xfails)."""
import os

import numpy as np
import pytest

from cuda_standin import REAL_GPU, cuda_device  # noqa: F401  (the autouse fixture: CuPy or its stand-in)

pytestmark = pytest.mark.cuda

from optable_rows import rows as _rows, run_row as _run  # noqa: E402


ROWS = _rows()
with open(os.path.join(os.path.dirname(__file__), 'cuda_known_failures.txt')) as _file:
    NOT_YET = {line.strip() for line in _file if line.strip() and not line.startswith('#')}
assert NOT_YET <= {r[0] for r in ROWS}, NOT_YET - {r[0] for r in ROWS}


def _host(t):
    return None if t is None else t.detach().cpu().numpy()


@pytest.mark.parametrize('fn,arrays,grads', [
    pytest.param(*r[1:], id=r[0], marks=[pytest.mark.xfail(strict=True, reason='not yet on CUDA')] if r[0] in NOT_YET
                 else []) for r in ROWS])
def test_row_on_cuda_gives_the_cpu_row(fn, arrays, grads):
    cpu_outs, cpu_gs = _run(fn, arrays, grads, 'cpu')
    gpu_outs, gpu_gs = _run(fn, arrays, grads, 'cuda')
    assert len(gpu_outs) == len(cpu_outs)
    for g, c in zip(gpu_outs, cpu_outs):
        assert g.is_cuda, 'an output left the GPU'
        assert (tuple(g.shape), g.dtype) == (tuple(c.shape), c.dtype)
        assert (g.grad_fn and g.grad_fn.name()) == (c.grad_fn and c.grad_fn.name())
        if g.dtype.is_floating_point or g.dtype.is_complex:
            np.testing.assert_allclose(_host(g), _host(c), rtol=1e-6, atol=1e-8, equal_nan=True)
        else:
            np.testing.assert_array_equal(_host(g), _host(c))
    for g, c in zip(gpu_gs, cpu_gs):
        assert (g is None) == (c is None)
        if g is not None:
            assert g.is_cuda, 'a gradient left the GPU'
            np.testing.assert_allclose(_host(g), _host(c), rtol=1e-6, atol=1e-8, equal_nan=True)
