"""add and sub with ``alpha``, lerp, addcmul and addcdiv give PyTorch's bits: its CPU kernels compute ``x + alpha * y`` as
one fused multiply-add (in float32 for the 16-bit floats, whose last elements after the
vectorized loop round the product first), and an in-place update of a float32 tensor by a
16-bit one computes in float32 (it rounded ``alpha * y`` to the 16-bit dtype: off by up to
2e-4)."""
import numpy as np
import pytest

from oracle import torch
import leafgrad as lg

DTYPES = ['float16', 'bfloat16', 'float32', 'float64']
PAIRS = [(d, d) for d in DTYPES] + [('float32', 'bfloat16'), ('float32', 'float16'), ('float64', 'float32'),
                                    ('float64', 'bfloat16'), ('float16', 'bfloat16')]
SHAPES = [(1,), (7,), (31,), (32,), (33,), (100,), (3, 5), (4, 16)]


def _results(m, self_dtype, other_dtype, shape, alpha, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(shape), rng.standard_normal(shape)
    a, b = m.tensor(x).to(getattr(m, self_dtype)), m.tensor(y).to(getattr(m, other_dtype))
    out = [m.add(a, b, alpha=alpha), m.sub(a, b, alpha=alpha), a.add(b, alpha=-alpha)]
    c = a.clone()
    c.add_(b, alpha=alpha)
    d = a.clone()
    d.sub_(b, alpha=alpha)
    return [(str(t.dtype).split('.')[-1], t.double().numpy().tolist()) for t in out + [c, d]]


@pytest.mark.parametrize('shape', SHAPES, ids=str)
@pytest.mark.parametrize('dtypes', PAIRS, ids='-'.join)
def test_add_sub_with_alpha_bit_for_bit(dtypes, shape):
    for seed, alpha in enumerate((-0.0123, 3.7, 1e-5, 0.999)):
        assert _results(lg, *dtypes, shape, alpha, seed) == _results(torch, *dtypes, shape, alpha, seed)


def test_broadcast_and_special_values():
    for m_args in [((4, 3), (3,)), ((5, 40), (40,)), ((40, 5), (5,)), ((3, 4), (1, 1)), ((40, 5), (1,))]:
        got, want = [], []
        for m, res in ((lg, got), (torch, want)):
            rng = np.random.default_rng(0)
            x, y = m.tensor(rng.standard_normal(m_args[0])), m.tensor(rng.standard_normal(m_args[1]))
            res.append(m.add(x, y, alpha=0.3).numpy().tolist())
            res.append(m.add(x.float(), y.float(), alpha=0.3).numpy().tolist())
    assert got == want
    specials = [float('inf'), -float('inf'), float('nan'), 1e308, -1e308, 1e-300, 0.0, -0.0, 2.5e-16, 1e-200, 3e-170]
    for dtype in ('float64', 'float32'):
        res = []
        for m in (lg, torch):
            x = m.tensor([s for s in specials for _ in specials], dtype=getattr(m, dtype))
            y = m.tensor(specials * len(specials), dtype=getattr(m, dtype))
            res.append([repr(v) for v in m.add(x, y, alpha=1.5).tolist() + m.sub(y, x, alpha=-2.0).tolist()])
        assert res[0] == res[1]


def test_the_gradient_is_unchanged():
    for m in (lg, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, 4.0], requires_grad=True)
        m.add(x, y, alpha=0.25).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [0.25, 0.25]


LERP_DTYPES = ['float16', 'bfloat16', 'float32', 'float64']


def _lerps(m, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = getattr(m, dtype)
    x, y = m.tensor(rng.standard_normal(shape)).to(dt), m.tensor(rng.standard_normal(shape)).to(dt)
    w = m.tensor(rng.uniform(-0.3, 1.3, shape)).to(dt)
    number = float(rng.uniform(-0.3, 1.3))
    inplace = x.clone()
    inplace.lerp_(y, number)
    out = [m.lerp(x, y, number), m.lerp(x, y, w), x.lerp(y, 0.75), inplace]
    return [t.double().numpy().tolist() for t in out]


@pytest.mark.parametrize('shape', [(1,), (7,), (33,), (100,), (4, 16)], ids=str)
@pytest.mark.parametrize('dtype', LERP_DTYPES)
def test_lerp_bit_for_bit(dtype, shape):
    """lerp is one fused multiply-add too: weight * (end - start) + start, or (weight - 1) *
    (end - start) + end for a weight of 0.5 or more (it rounded the product and the sum apart, and
    computed float16 in float16)."""
    for seed in range(6):
        assert _lerps(lg, dtype, shape, seed) == _lerps(torch, dtype, shape, seed)


def _pointwise(m, name, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    dt = getattr(m, dtype)
    s, a, b = (m.tensor(rng.standard_normal(shape)).to(dt) for _ in range(3))
    out = []
    for value in (0.37, 1, -2.5):
        out.append(getattr(m, name)(s, a, b, value=value))
        inplace = s.clone()
        getattr(inplace, name + '_')(a, b, value=value)
        out.append(inplace)
    wide = m.tensor(rng.standard_normal(shape))  # (float64 with the other two: computed in float64)
    out.append(getattr(m, name)(wide, a, b, value=0.3))
    return [t.double().numpy().tolist() for t in out]


@pytest.mark.parametrize('shape', [(1,), (7,), (40,), (3, 5)], ids=str)
@pytest.mark.parametrize('dtype', LERP_DTYPES)
@pytest.mark.parametrize('name', ['addcmul', 'addcdiv'])
def test_addcmul_addcdiv_bit_for_bit(name, dtype, shape):
    """addcmul is ``(value * t1) * t2 + input`` with one rounding for the product and the sum;
    addcdiv ``input + (value * t1) / t2``; the 16-bit floats both in float32 with the value
    unrounded (it computed value * (t1 * t2), and the 16-bit floats in float16)."""
    for seed in range(4):
        assert _pointwise(lg, name, dtype, shape, seed) == _pointwise(torch, name, dtype, shape, seed)


def _half_reductions(m, dtype, n):
    x = m.tensor(np.random.default_rng(0).standard_normal(n) * 3).to(getattr(m, dtype))
    plane = x[:4000].reshape(40, 100)
    out = [x.var(), x.std(), x.norm(), m.linalg.vector_norm(x, 3), m.var_mean(x)[0], m.std_mean(x)[0],
           m.dist(x, x * 0), m.linalg.norm(plane), plane.var(1), x.norm(p=float('inf'))]
    return [t.float().numpy().tolist() for t in out]


@pytest.mark.parametrize('n', [4000, 100000])
@pytest.mark.parametrize('dtype', ['float16', 'bfloat16'])
def test_half_variances_and_norms_accumulate_in_float32(dtype, n):
    """The 16-bit floats' variances and norms accumulate in float32 as PyTorch's: a float16
    variance of 1e5 numbers of size 3 is 9, not inf (its sums of squares overflowed)."""
    assert _half_reductions(lg, dtype, n) == _half_reductions(torch, dtype, n)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_zero_dim_operands(dtype):
    """0-dim tensors through the fused multiply-add (float64's raised a broadcast error)."""
    def results(m):
        dt = getattr(m, dtype)
        x, y, w = m.tensor(1.0, dtype=dt), m.tensor(0.1, dtype=dt), m.tensor(0.3, dtype=dt)
        return [t.item() for t in (m.lerp(x, y, w), m.lerp(x, y, 0.7), m.addcmul(x, y, w, value=0.7),
                                   m.addcdiv(x, y, w, value=0.7), m.add(x, y, alpha=0.3))]
    assert results(lg) == results(torch)
