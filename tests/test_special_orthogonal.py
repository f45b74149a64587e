"""torch.special's orthogonal polynomials (chebyshev_polynomial_t/u/v/w, their shifted forms,
hermite_polynomial_h/he, laguerre_polynomial_l, legendre_polynomial_p) against PyTorch.

Values in float32 and float64 to a few units in the last place over a grid of x (0, +-1, the
endpoints of the shifted ones, inside and outside [-1, 1], large, +-inf, NaN) and n (negative,
0, 1, the degrees where PyTorch switches to the trigonometric forms and the Hermite limits,
fractional, NaN, infinite), n as a tensor, a number or broadcast; x as a number; the dtypes
of results; no autograd (PyTorch records no node); out=; PyTorch's errors; no NumPy warnings.
"""
import warnings

import numpy as np
import pytest

import leafgrad as lg

torch = pytest.importorskip('torch')

from oracle import raises_like  # noqa: E402

POLYNOMIALS = ['chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
               'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
               'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h',
               'hermite_polynomial_he', 'laguerre_polynomial_l', 'legendre_polynomial_p']

XS = np.array([0.0, -0.0, 0.5, -0.5, 1, -1, 0.25, 0.75, 0.999, -0.999, 1.5, -1.5, 2, -3, 10, -10, 1e3, -1e3,
               1e20, np.inf, -np.inf, 1 / 3, 0.1, 0.9, 1e-3, -1e-7, np.nan])
NS = np.array([-5, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 30, 100, 128, 129, 200, 512, 513, 1000])


def _close(ours, theirs, dtype):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=8 * np.finfo(dtype).eps, atol=0, equal_nan=True)


def _same_error(fn_lg, fn_torch):
    ours, theirs = raises_like(fn_lg, fn_torch)
    assert ours == theirs


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('name', POLYNOMIALS)
def test_values_over_a_grid(name, dtype):
    x, n = (a.ravel() for a in np.meshgrid(XS, NS))
    # (PyTorch leaves its result unset for a NaN x that reaches its recurrence: not compared)
    keep = ~np.isnan(x) | (n < 2) | name.startswith('hermite')
    x, n = x[keep].astype(dtype), n[keep].astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ours = getattr(lg.special, name)(lg.tensor(x), lg.tensor(n))
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    _close(ours.numpy(), theirs.numpy(), dtype)


@pytest.mark.parametrize('name', POLYNOMIALS)
def test_numbers_fractions_and_nonfinite_degrees(name):
    x = np.array([0.3, -0.7, 1.0, 0.0, 2.5, -1.0], np.float32)
    f_ours, f_theirs = getattr(lg.special, name), getattr(torch.special, name)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for n in [3, 9, 2.7, -0.5, True, float('nan'), float('inf'), -float('inf'), 1e30]:  # n a number
            _close(f_ours(lg.tensor(x), n).numpy(), f_theirs(torch.tensor(x), n).numpy(), np.float32)
        n = np.array([2.9, 7.5, np.nan, np.inf, -np.inf, 1e25], np.float32)  # fractional degrees truncate
        _close(f_ours(lg.tensor(x), lg.tensor(n)).numpy(), f_theirs(torch.tensor(x), torch.tensor(n)).numpy(),
               np.float32)
        for value in [0.4, 2, -1, True]:  # x a number
            _close(f_ours(value, lg.tensor([0, 1, 2, 5, 11])).numpy(),
                   f_theirs(value, torch.tensor([0, 1, 2, 5, 11])).numpy(), np.float32)
        # broadcast: x (3, 1) against n (4,)
        xb, nb = np.array([[0.2], [-1.5], [0.8]]), np.array([0, 3, 7, 12])
        _close(f_ours(lg.tensor(xb), lg.tensor(nb)).numpy(), f_theirs(torch.tensor(xb), torch.tensor(nb)).numpy(),
               np.float64)


@pytest.mark.parametrize('name', POLYNOMIALS)
def test_dtypes_of_results(name):
    cases = [(lambda lib: lib.tensor([1, 2, 3]), lambda lib: lib.tensor([2, 3, 4])),
             (lambda lib: lib.tensor([True, False]), lambda lib: lib.tensor([2, 3])),
             (lambda lib: lib.tensor([0.5], dtype=lib.float64), lambda lib: 3),
             (lambda lib: lib.tensor([0.5]), lambda lib: lib.tensor(3.0, dtype=lib.float64)),
             (lambda lib: lib.tensor([0.5]), lambda lib: lib.tensor([3.0], dtype=lib.float64)),
             (lambda lib: lib.tensor([0.5]), lambda lib: lib.tensor([3], dtype=lib.uint8)),
             (lambda lib: 2, lambda lib: lib.tensor([1, 2])),
             (lambda lib: lib.tensor([1, 2]), lambda lib: 2.5)]
    for x, n in cases:
        ours = getattr(lg.special, name)(x(lg), n(lg))
        theirs = getattr(torch.special, name)(x(torch), n(torch))
        assert str(ours.dtype).split('.')[1] == str(theirs.dtype).split('.')[1]
        _close(ours.numpy(), theirs.numpy(), np.float64)


@pytest.mark.parametrize('name', POLYNOMIALS)
def test_no_autograd_and_out(name):
    for lib in (lg, torch):
        x = lib.tensor([0.25, 2.0], requires_grad=True)
        y = getattr(lib.special, name)(x, lib.tensor(3.0, requires_grad=True))
        assert not y.requires_grad and y.grad_fn is None
        out = lib.zeros(2, dtype=lib.float64, requires_grad=True)  # (no derivative: out= may require grad)
        assert getattr(lib.special, name)(x, 3, out=out) is out
        assert out.dtype == lib.float64
    ours, theirs = lg.zeros(2, dtype=lg.float64), torch.zeros(2, dtype=torch.float64)
    getattr(lg.special, name)(lg.tensor([0.25, 2.0]), 4, out=ours)
    getattr(torch.special, name)(torch.tensor([0.25, 2.0]), 4, out=theirs)
    _close(ours.numpy(), theirs.numpy(), np.float64)


@pytest.mark.parametrize('name', POLYNOMIALS)
def test_errors(name):
    f_ours, f_theirs = getattr(lg.special, name), getattr(torch.special, name)
    calls = [lambda lib: (2, 3), lambda lib: (lib.tensor([1.0]), 'a'), lambda lib: ('a', lib.tensor([1.0])),
             lambda lib: (lib.ones(2), lib.ones(3)),
             lambda lib: (lib.tensor([0.5], dtype=lib.float16), 2),
             lambda lib: (lib.tensor([0.5], dtype=lib.bfloat16), lib.tensor([2])),
             lambda lib: (lib.tensor([0.5]), 2 + 1j),
             lambda lib: (lib.tensor([0.5j]), 2)]
    for args in calls:
        _same_error(lambda: f_ours(*args(lg)), lambda: f_theirs(*args(torch)))
    _same_error(lambda: f_ours(lg.tensor([0.5]), 2, out=lg.zeros(1, dtype=lg.int64)),
                lambda: f_theirs(torch.tensor([0.5]), 2, out=torch.zeros(1, dtype=torch.int64)))


@pytest.mark.parametrize('name', ['chebyshev_polynomial_t', 'legendre_polynomial_p'])
def test_result_laid_out_as_tensor_iterator(name):
    """A transposed operand: the result's strides are PyTorch's (TensorIterator's order)."""
    base = np.array([[0.5, 2.0, -0.3], [3.0, -1.0, 0.9]])
    for make_n in [lambda lib, t: 3, lambda lib, t: t(lib.tensor([[1, 2, 3], [4, 5, 6]])).t(),
                   lambda lib, t: lib.tensor([2, 5])]:
        ours = getattr(lg.special, name)(lg.tensor(base).t(), make_n(lg, lambda v: v))
        theirs = getattr(torch.special, name)(torch.tensor(base).t(), make_n(torch, lambda v: v))
        assert ours.stride() == theirs.stride()
        _close(ours.numpy(), theirs.numpy(), np.float64)
