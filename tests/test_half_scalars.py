"""float16 with a scalar operand as PyTorch computes it: the scalar unrounded, in float32, the
result rounded once (as bfloat16 already was): mul, div and the rounded divisions. NumPy
rounded the scalar to float16 first (t * 0.001 off by a unit in the last place in one element
of four; t // 0.37 off by one where the quotient is near an integer)."""
import numpy as np
import pytest

from oracle import torch
import leafgrad as lg

PROGRAMS = {
    'mul': lambda m, t: t * 0.001,
    'rmul': lambda m, t: 1.7 * t,
    'mul_method': lambda m, t: t.mul(0.37),
    'mul_0d_float32': lambda m, t: t * m.tensor(0.001),
    'mul_0d_float64': lambda m, t: t * m.tensor(0.001, dtype=m.float64),
    'div': lambda m, t: t / 0.37,
    'rdiv': lambda m, t: 2.5 / t,
    'floor': lambda m, t: t.div(0.37, rounding_mode='floor'),
    'trunc': lambda m, t: t.div(0.37, rounding_mode='trunc'),
    'floordiv': lambda m, t: t // 0.37,
    'floor_divide': lambda m, t: m.floor_divide(t, 0.37),
    'floor_0d': lambda m, t: t.div(m.tensor(0.37), rounding_mode='floor'),
    'imul': lambda m, t: t.clone().mul_(0.001),
    'idiv': lambda m, t: t.clone().div_(0.37),
}


def _run(m, name, dtype):
    t = m.tensor(np.random.default_rng(0).standard_normal(3000) * 3).to(getattr(m, dtype))
    out = PROGRAMS[name](m, t)
    return str(out.dtype).split('.')[1], [repr(v) for v in out.float().tolist()]


@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
@pytest.mark.parametrize('name', PROGRAMS)
def test_as_torch(name, dtype):
    assert _run(lg, name, dtype) == _run(torch, name, dtype)
