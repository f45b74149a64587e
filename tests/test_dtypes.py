"""Type promotion and dtypes as PyTorch defines them (tensors with Python scalars too)."""
import itertools

import numpy as np
import pytest

from oracle import lg, torch

DTYPES = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64']
SCALARS = [True, 2, 2.5]


def make(T, name, dim):
    shape = (2,) if dim else ()
    return T.ones(shape, dtype=getattr(T, name))


@pytest.mark.parametrize('a,b', list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize('dims', [(1, 1), (1, 0), (0, 1)])
def test_tensor_tensor_promotion(a, b, dims):
    out_lg = make(lg, a, dims[0]) * make(lg, b, dims[1])
    out_t = make(torch, a, dims[0]) * make(torch, b, dims[1])
    assert out_lg.dtype.name == str(out_t.dtype).split('.')[-1]


@pytest.mark.parametrize('a', DTYPES)
@pytest.mark.parametrize('s', SCALARS)
@pytest.mark.parametrize('op', ['add', 'mul', 'radd', 'rmul'])
def test_tensor_scalar_promotion(a, s, op):
    def run(T):
        t = make(T, a, 1)
        return {'add': lambda: t + s, 'mul': lambda: t * s, 'radd': lambda: s + t, 'rmul': lambda: s * t}[op]()
    assert run(lg).dtype.name == str(run(torch).dtype).split('.')[-1]


def test_default_dtypes_and_creation():
    for data in ([1, 2], [1., 2.], [True, False], 3, 2.5, [[1, 2], [3, 4]]):
        assert lg.tensor(data).dtype.name == str(torch.tensor(data).dtype).split('.')[-1]
    assert lg.tensor(np.array([1., 2.])).dtype is lg.float64
    assert lg.arange(5).dtype is lg.int64 and lg.arange(0., 1., 0.25).dtype is lg.float32
    np.testing.assert_allclose(lg.linspace(-3, 7, 17).numpy(), torch.linspace(-3, 7, 17).numpy(), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(lg.arange(1, 10, 3).numpy(), torch.arange(1, 10, 3).numpy())
    assert lg.eye(3).tolist() == torch.eye(3).tolist()
    assert lg.full((2,), 7).dtype is lg.int64 and lg.full((2,), 7.).dtype is lg.float32
    assert lg.zeros_like(lg.ones(2, dtype=lg.float64)).dtype is lg.float64
    r = lg.randint(0, 5, (100,))
    assert r.dtype is lg.int64 and 0 <= r.min().item() and r.max().item() < 5


def test_int_division_and_float_ops():
    for T in (lg, torch):
        t = T.tensor([1, 2, 3])
        assert str((t / 2).dtype).endswith('float32')
        assert str(T.exp(t).dtype).endswith('float32')
        assert str(t.float().dtype).endswith('float32')


def test_manual_seed_reproducible():
    lg.manual_seed(3)
    a = lg.randn(5)
    lg.manual_seed(3)
    b = lg.randn(5)
    assert a.tolist() == b.tolist() and a.dtype is lg.float32


def test_gradient_takes_the_dtype_of_its_tensor():
    def prog(T):
        x = T.ones(3, requires_grad=True)
        w = T.ones(3, dtype=T.float64)
        h = x * 1
        h.retain_grad()
        (h * w).sum().backward()
        g, = T.autograd.grad((x * w).sum(), x)
        return [str(t.dtype).split('.')[-1] for t in (x.grad, h.grad, g)]
    assert prog(lg) == prog(torch) == ['float32'] * 3


def _complex_to_bool(T):
    import warnings
    z = T.tensor([1 + 0j, 0j, 1j, -0.0 - 0.0j, complex('nan')])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        said = [z.bool().tolist(), z.to(T.bool).tolist(), T.zeros(5, dtype=T.bool).copy_(z).tolist(),
                z.to(T.complex128).bool().tolist()]
    return said, [str(w.message) for w in caught]


def test_complex_to_bool_is_nonzero_as_pytorch():
    """(A complex number's imaginary part had been dropped first, with the warning for it: 1j was
    False.)"""
    assert _complex_to_bool(lg) == _complex_to_bool(torch)
