"""torch.special's Bessel functions (bessel_j0, j1, y0, y1, modified_bessel_i0, i1, k0, k1,
scaled_modified_bessel_k0, k1, spherical_bessel_j0) and airy_ai against PyTorch.

Values in float32 and float64 to a few units in the last place (PyTorch's Cephes
approximations, each branch and its boundaries: 0, the zeros, 2, 2.09, 5, 8, 103.892; negative,
large, +-inf, NaN); the dtypes of results (integers and bools to the default float dtype); no
autograd (PyTorch records no node); out=; PyTorch's errors; no NumPy warnings.
"""
import warnings

import numpy as np
import pytest

import leafgrad as lg

torch = pytest.importorskip('torch')

from oracle import raises_like  # noqa: E402

FUNCTIONS = ['airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_i0',
             'modified_bessel_i1', 'modified_bessel_k0', 'modified_bessel_k1', 'scaled_modified_bessel_k0',
             'scaled_modified_bessel_k1', 'spherical_bessel_j0']

GRID = np.concatenate([np.linspace(-30, 30, 3001), np.random.default_rng(0).uniform(-12, 12, 1000),
                       np.logspace(-10, 2.5, 200), -np.logspace(-10, 2.5, 200),
                       [0, -0.0, np.inf, -np.inf, np.nan, 2, 5, 8, -8, 2.09, -2.09, 8.3203353, 103.892, 104, 1e-6,
                        1e-5, 1e-4, 0.5, -0.5, 700, 1e10, -1e10, 2.404825557695773, 3.831705970207512,
                        0.8935769662791675, 2.197141326031017]])


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('name', FUNCTIONS)
def test_values_to_a_few_ulps(name, dtype):
    x = GRID.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ours = getattr(lg.special, name)(lg.tensor(x)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(x)).numpy()
    assert ours.dtype == theirs.dtype == dtype
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    finite = np.isfinite(theirs)
    assert np.array_equal(ours[~finite & ~np.isnan(theirs)], theirs[~finite & ~np.isnan(theirs)])
    ulps = np.abs(ours[finite] - theirs[finite]) / np.spacing(np.abs(theirs[finite]).astype(dtype))
    assert ulps.max() <= 3


@pytest.mark.parametrize('name', FUNCTIONS)
def test_dtypes_layout_and_no_autograd(name):
    f_ours, f_theirs = getattr(lg.special, name), getattr(torch.special, name)
    for values, dtype in [([0, 1, 3, -2], 'int64'), ([True, False], 'bool'), ([0.5, 4.0], 'float64'),
                          ([[0.5, 4.0], [9.0, -1.0]], 'float32')]:
        ours = f_ours(lg.tensor(values, dtype=getattr(lg, dtype)))
        theirs = f_theirs(torch.tensor(values, dtype=getattr(torch, dtype)))
        assert str(ours.dtype).split('.')[1] == str(theirs.dtype).split('.')[1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True)
    t = f_ours(lg.tensor([[0.5, 4.0], [9.0, 1.5]]).t())  # (a transposed input: its values in place)
    np.testing.assert_allclose(t.numpy(), f_theirs(torch.tensor([[0.5, 4.0], [9.0, 1.5]]).t()).numpy(), rtol=1e-6)
    for lib in (lg, torch):
        x = lib.tensor([0.25, 2.0], requires_grad=True)
        y = getattr(lib.special, name)(x)
        assert not y.requires_grad and y.grad_fn is None
        out = lib.zeros(2, dtype=lib.float64, requires_grad=True)  # (no derivative: out= may require grad)
        assert getattr(lib.special, name)(x, out=out) is out


def _same_error(fn_lg, fn_torch):
    ours, theirs = raises_like(fn_lg, fn_torch)
    assert ours == theirs


@pytest.mark.parametrize('name', FUNCTIONS)
def test_errors(name):
    f_ours, f_theirs = getattr(lg.special, name), getattr(torch.special, name)
    for make in [lambda lib: 2.0, lambda lib: [1.0], lambda lib: lib.tensor([0.5], dtype=lib.float16),
                 lambda lib: lib.tensor([0.5], dtype=lib.bfloat16), lambda lib: lib.tensor([0.5j])]:
        _same_error(lambda: f_ours(make(lg)), lambda: f_theirs(make(torch)))
    _same_error(lambda: f_ours(lg.tensor([0.5]), out=lg.zeros(1, dtype=lg.int64)),
                lambda: f_theirs(torch.tensor([0.5]), out=torch.zeros(1, dtype=torch.int64)))
