"""The special functions (ops/special_functions.py) and the random variates behind the
distributions (ops/random_variates.py) against PyTorch.

Values: float64 on dense grids (relative 1e-12 where PyTorch is itself that accurate) and at
the edges (0, -0, poles, +-inf, NaN); dtypes; node names, first and second derivatives and
finite differences through the op-table harness; float64 gradcheck/gradgradcheck; errors.
Samplers: moments and two-sample Kolmogorov-Smirnov distances against PyTorch's samplers,
seeded; the reparametrised derivatives of gamma and Dirichlet samples against PyTorch's
approximations and against the exact implicit derivative by finite differences.
"""
import math

import numpy as np
import pytest

import leafgrad as lg

torch = pytest.importorskip('torch')

from optable import Case, check_derivatives, check_finite_differences, check_forward, params  # noqa: E402
from oracle import raises_like, same_message  # noqa: E402


def _run(fn, x, lib):
    return fn(lib, lib.tensor(x)).detach().numpy() if lib is torch else np.asarray(fn(lib, lib.tensor(x))._data)


def _relative_error(mine, theirs, floor=1e-300):
    both_nan = np.isnan(mine) & np.isnan(theirs)
    same = mine == theirs  # equal infinities
    with np.errstate(invalid="ignore"):
        err = np.abs(mine - theirs) / np.maximum(np.abs(theirs), floor)
    return np.where(both_nan | same, 0.0, err)


GRID = np.concatenate([np.linspace(-30.3, 50.1, 4001), np.random.default_rng(0).uniform(-5, 5, 500),
                       np.logspace(-300, 300, 121), -np.logspace(-300, 5, 61), 1 + np.logspace(-10, -1, 10),
                       2 - np.logspace(-10, -1, 10)])
GRID = GRID[GRID != np.round(GRID)]
POSITIVE = GRID[GRID > 0]
PROBABILITIES = np.concatenate([np.logspace(-300, -0.01, 300), 1 - np.logspace(-16, -0.01, 100),
                                np.linspace(0.001, 0.999, 999)])


def _near_a_zero(fn, x):
    """Points near a zero of the function, where relative error means nothing (lgamma at 1, 2
    and between the negative poles; digamma at its roots)."""
    y = fn(torch, torch.tensor(x)).numpy()
    return np.abs(y) < 1e-3


UNARY_VALUES = [
    ('lgamma', lambda T, x: T.lgamma(x), GRID),
    ('digamma', lambda T, x: T.digamma(x), GRID),
    ('trigamma', lambda T, x: T.polygamma(1, x), GRID),
    ('polygamma2', lambda T, x: T.polygamma(2, x), GRID[np.abs(GRID) < 1e5]),
    ('polygamma3', lambda T, x: T.polygamma(3, x), GRID[np.abs(GRID) < 1e5]),
    ('polygamma6', lambda T, x: T.special.polygamma(6, x), POSITIVE[POSITIVE < 1e50]),
    ('mvlgamma3', lambda T, x: T.mvlgamma(x, 3), POSITIVE + 1),
    ('i0', lambda T, x: T.i0(x), GRID),
    ('i0e', lambda T, x: T.special.i0e(x), GRID),
    ('i1', lambda T, x: T.special.i1(x), GRID),
    ('i1e', lambda T, x: T.special.i1e(x), GRID),
    ('erfcx', lambda T, x: T.special.erfcx(x), GRID),
    ('ndtr', lambda T, x: T.special.ndtr(x), GRID[GRID > -8]),
    ('log_ndtr', lambda T, x: T.special.log_ndtr(x), GRID),
    ('ndtri', lambda T, x: T.special.ndtri(x), PROBABILITIES),
    ('erfinv', lambda T, x: T.erfinv(x), np.concatenate([2 * PROBABILITIES - 1, -PROBABILITIES])),
    ('entr', lambda T, x: T.special.entr(x), GRID),
    ('gammaln', lambda T, x: T.special.gammaln(x), GRID),
    ('psi', lambda T, x: T.special.psi(x), GRID),
    ('multigammaln', lambda T, x: T.special.multigammaln(x, 2), POSITIVE + 0.5),
]


@pytest.mark.parametrize('name,fn,x', UNARY_VALUES, ids=[row[0] for row in UNARY_VALUES])
def test_float64_values_on_a_dense_grid(name, fn, x):
    with np.errstate(all='ignore'):
        mine, theirs = _run(fn, x, lg), _run(fn, x, torch)
        err = _relative_error(mine, theirs)
        err[_near_a_zero(fn, x)] = 0
    worst = int(np.argmax(err))
    assert err[worst] < 1e-12, (x[worst], mine[worst], theirs[worst])


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, 1.0, 2.0, 10.0, 1e-320, -1e-320, 1e17, 1e18, 709.0,
                  714.0, -714.0, 800.0])


@pytest.mark.parametrize('name,fn,x', UNARY_VALUES, ids=[row[0] for row in UNARY_VALUES])
def test_values_at_the_edges(name, fn, x):
    x = np.concatenate([EDGES, [0.5, 1 - 1e-17, 1.5, -0.5]])
    with np.errstate(all='ignore'):
        mine, theirs = _run(fn, x, lg), _run(fn, x, torch)
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=0, equal_nan=True)
    assert np.array_equal(np.signbit(mine[mine == 0]), np.signbit(theirs[mine == 0])) or name == 'entr'


def test_binary_values_zeta_xlog1py():
    rng = np.random.default_rng(1)
    s = np.concatenate([rng.uniform(1.01, 30, 400), np.arange(2, 12.0), [1.0, 0.5, np.inf, 2, 2, 3, 1.5]])
    q = np.concatenate([rng.uniform(-20, 40, 400), rng.uniform(0.01, 3, 10), [1, 1, 1, -3, -2.5, -np.inf, -2.5]])
    mine = lg.special.zeta(lg.tensor(s), lg.tensor(q)).numpy()
    theirs = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    assert _relative_error(mine, theirs).max() < 1e-12
    x = np.concatenate([rng.standard_normal(300), [0, 0, 0, 1, -1]])
    y = np.concatenate([rng.uniform(-0.99, 5, 300), [np.nan, -1, -2, -1, np.inf]])
    with np.errstate(all='ignore'):
        mine = lg.special.xlog1py(lg.tensor(x), lg.tensor(y)).numpy()
    theirs = torch.special.xlog1py(torch.tensor(x), torch.tensor(y)).numpy()
    np.testing.assert_allclose(mine, theirs, rtol=1e-14, atol=0, equal_nan=True)


def test_incomplete_gamma_values():
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.uniform(0.01, 20, 3000), [0, 0, 1, 1, -1, np.inf, np.inf, 2, np.nan, 1, 0.5, 1e-3]])
    x = np.concatenate([rng.uniform(0, 40, 3000), [0, 1, 0, np.inf, 1, 1, np.inf, -1, 1, np.nan, 1e-5, 3]])
    for lower, (mine_fn, torch_fn) in enumerate([(lg.special.gammaincc, torch.special.gammaincc),
                                                 (lg.special.gammainc, torch.special.gammainc)]):
        mine = mine_fn(lg.tensor(a), lg.tensor(x)).numpy()
        theirs = torch_fn(torch.tensor(a), torch.tensor(x)).numpy()
        err = _relative_error(mine, theirs)
        assert err[theirs > 1e-250].max() < 1e-12, lower
        np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))


def test_incomplete_gamma_for_large_a_is_accurate():
    """Above a = 20 PyTorch's uniform asymptotic expansion is accurate to about 2e-9; leafgrad's
    series and continued fraction to about 1e-13 (mpmath's values, 40 digits)."""
    cases = [(204.30935948148206, 140.70592494311836, 2.9378886166265053e-07), (50.0, 45.0, 0.24680203440017026),
             (30.0, 30.0, 0.52428301389368)]
    for a, x, exact in cases:
        value = lg.special.gammainc(lg.tensor([a], dtype=lg.float64), lg.tensor([x], dtype=lg.float64)).item()
        assert abs(value - exact) < 1e-13 * exact
        theirs = torch.special.gammainc(torch.tensor([a], dtype=torch.float64), torch.tensor([x], dtype=torch.float64))
        assert abs(theirs.item() - exact) < 3e-9 * exact


# ---- dtypes, methods, in-place, errors ----------------------------------------------------------

DTYPE_CASES = [
    ('lgamma', lambda T, x: T.lgamma(x)), ('digamma', lambda T, x: T.digamma(x)),
    ('polygamma', lambda T, x: T.polygamma(1, x)), ('mvlgamma', lambda T, x: T.mvlgamma(x + 3, 2)),
    ('i0', lambda T, x: T.i0(x)), ('i0e', lambda T, x: T.special.i0e(x)), ('i1', lambda T, x: T.special.i1(x)),
    ('i1e', lambda T, x: T.special.i1e(x)), ('erfcx', lambda T, x: T.special.erfcx(x)),
    ('ndtr', lambda T, x: T.special.ndtr(x)), ('log_ndtr', lambda T, x: T.special.log_ndtr(x)),
    ('ndtri', lambda T, x: T.special.ndtri(x)), ('entr', lambda T, x: T.special.entr(x)),
    ('xlog1py', lambda T, x: T.special.xlog1py(x, x)), ('xlog1py_number', lambda T, x: T.special.xlog1py(2, x)),
    ('zeta', lambda T, x: T.special.zeta(x + 2, x)), ('zeta_number', lambda T, x: T.special.zeta(x + 2, 2.0)),
]


@pytest.mark.parametrize('name,fn', DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
@pytest.mark.parametrize('dtype', ['int64', 'bool', 'float32', 'float64', 'float16'])
def test_dtypes(name, fn, dtype):
    data = np.array([1, 2, 0]) if dtype != 'bool' else np.array([True, False, True])
    try:
        theirs = fn(torch, torch.tensor(data.astype(dtype)))
    except NotImplementedError:  # no half-precision kernel
        lg_msg, torch_msg = raises_like(lambda: fn(lg, lg.tensor(data.astype(dtype))),
                                        lambda: fn(torch, torch.tensor(data.astype(dtype))))
        assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)
        return
    mine = fn(lg, lg.tensor(data.astype(dtype)))
    assert str(mine.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    rtol = 1e-3 if dtype == 'float16' else 1e-6
    np.testing.assert_allclose(mine.numpy().astype(np.float64), theirs.numpy().astype(np.float64), rtol=rtol,
                               equal_nan=True)


def test_methods_and_in_place_variants():
    for T in (lg, torch):
        x = T.tensor([0.5, 1.5, 3.0], dtype=T.float64)
        y = T.tensor([1.0, 2.0, 0.5], dtype=T.float64)
        got = [x.lgamma(), x.digamma(), x.polygamma(2), x.mvlgamma(1), x.i0(), x.igamma(y), x.igammac(y)]
        for name, args in [('lgamma_', ()), ('digamma_', ()), ('polygamma_', (2,)), ('mvlgamma_', (1,)), ('i0_', ()),
                           ('igamma_', (y,)), ('igammac_', (y,))]:
            z = x.clone()
            assert getattr(z, name)(*args) is z
            got.append(z)
        z = x.clone()
        T.i0_(z)
        got.append(z)
        if T is lg:
            mine = [t.numpy() for t in got]
        else:
            theirs = [t.numpy() for t in got]
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-13)


def test_in_place_on_integers_refused():
    for op in ('lgamma_', 'digamma_', 'i0_'):
        lg_msg, torch_msg = raises_like(lambda: getattr(lg.tensor([1, 2]), op)(),
                                        lambda: getattr(torch.tensor([1, 2]), op)())
        assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


ERRORS = [
    lambda T: T.polygamma(-1, T.tensor([0.5])),
    lambda T: T.polygamma(1.5, T.tensor([0.5])),
    lambda T: T.mvlgamma(T.tensor([2.5]), 0),
    lambda T: T.mvlgamma(T.tensor([2.5]), 1.5),
    lambda T: T.lgamma(2.0),
    lambda T: T.digamma([1.0]),
    lambda T: T.special.gammainc(T.tensor([1, 2]), T.tensor([1, 2])),
    lambda T: T.igamma(T.tensor([1.0]), 2.0),
    lambda T: T.special.zeta(2.0, 3.0),
    lambda T: T.special.xlog1py(2.0, 3.0),
    lambda T: T.special.ndtri(1.0),
]


@pytest.mark.parametrize('k', range(len(ERRORS)))
def test_errors(k):
    lg_msg, torch_msg = raises_like(lambda: ERRORS[k](lg), lambda: ERRORS[k](torch))
    assert same_message(lg_msg.replace('special_ndtri', 'special_ndtri'), torch_msg), (lg_msg, torch_msg)


NO_DERIVATIVE = [
    lambda T, x: T.special.gammainc(x, x.detach() + 1),
    lambda T, x: T.special.gammaincc(x, x.detach() + 1),
    lambda T, x: T.special.zeta(x + 1, x.detach()),
    lambda T, x: T.special.zeta(x + 1, 2.0),
    lambda T, x: T._standard_gamma_grad(x, x.detach()),
    lambda T, x: T.binomial(x * 10, x.detach() * 0.5),
    lambda T, x: T._sample_dirichlet(x),
    lambda T, x: T._dirichlet_grad(x * 0.5, x, x + 1),
]


@pytest.mark.parametrize('k', range(len(NO_DERIVATIVE)))
def test_derivatives_pytorch_does_not_have(k):
    def run(T):
        x = T.tensor([0.7, 1.3], dtype=T.float64, requires_grad=True)
        NO_DERIVATIVE[k](T, x).sum().backward()
    lg_msg, torch_msg = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


# ---- derivatives: the op-table harness --------------------------------------------------------

U = [((3, 4),), ((),), ((0, 3),), ((2, 1, 3),)]
B = [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3))]

CASES = [
    Case('lgamma', lambda T, x: T.lgamma(x), 'p', U, ints=True),
    Case('lgamma_negative', lambda T, x: T.lgamma(-x - 0.25), 'p', U[:2]),
    Case('digamma', lambda T, x: T.digamma(x), 'p', U, ints=True),
    Case('polygamma1', lambda T, x: T.polygamma(1, x), 'p', U),
    Case('polygamma3', lambda T, x: T.polygamma(3, x), 'p', U),
    Case('mvlgamma', lambda T, x: T.mvlgamma(x + 1.5, 3), 'p', U),
    Case('i0', lambda T, x: T.i0(x), 'r', U, ints=True),
    Case('i0e', lambda T, x: T.special.i0e(x), 'z', U),
    Case('i1', lambda T, x: T.special.i1(x), 'o', U),
    Case('i1e', lambda T, x: T.special.i1e(x), 'o', U),
    Case('erfcx', lambda T, x: T.special.erfcx(x), 'r', U),
    Case('ndtr', lambda T, x: T.special.ndtr(x), 'r', U, ints=True),
    Case('log_ndtr', lambda T, x: T.special.log_ndtr(x * 3), 'r', U),
    Case('ndtri', lambda T, x: T.special.ndtri(x / 2.5), 'p', U),
    Case('entr', lambda T, x: T.special.entr(x), 'p', U),
    Case('xlog1py', lambda T, x, y: T.special.xlog1py(x, y), 'rp', B),
    Case('xlog1py_zero', lambda T, x, y: T.special.xlog1py(x, y), 'op', B[:1]),
    Case('xlog1py_number_x', lambda T, y: T.special.xlog1py(2.5, y), 'p', U),
    Case('xlog1py_number_y', lambda T, x: T.special.xlog1py(x, 1.5), 'o', U),
    Case('xlog1py_number_y_below', lambda T, x: T.special.xlog1py(x, -2.0), 'o', U[:1], grad=False),
    Case('zeta_q', lambda T, x: T.special.zeta(3.5, x), 'p', U),
    Case('zeta_q_tensor', lambda T, q: T.special.zeta(T.tensor([[2.5], [4.0], [7.0]], dtype=q.dtype), q), 'p', [((3, 4),), ((3, 1),), ((1, 5),)]),
    Case('igamma_x', lambda T, x: T.igamma(T.tensor([[0.5], [2.0], [9.0]], dtype=x.dtype), x), 'p', [((3, 4),), ((3, 1),), ((1, 5),)]),
    Case('igammac_x', lambda T, x: T.igammac(T.tensor([[0.5], [2.0], [9.0]], dtype=x.dtype), x), 'p', [((3, 4),), ((3, 1),), ((1, 5),)]),
]


@pytest.mark.parametrize('case,shapes', params(CASES))
def test_forward(case, shapes):
    check_forward(case, shapes)


@pytest.mark.parametrize('case,shapes', params(CASES, 'grad'))
def test_derivatives(case, shapes):
    check_derivatives(case, shapes)


@pytest.mark.parametrize('case,shapes', params(CASES, 'fd'))
def test_finite_differences(case, shapes):
    check_finite_differences(case, shapes)


GRADCHECK = [
    ('lgamma', lg.lgamma, [0.3, 2.7, -1.5]), ('digamma', lg.digamma, [0.3, 2.7, -1.5]),
    ('polygamma2', lambda x: lg.polygamma(2, x), [0.3, 2.7, 13.0]), ('mvlgamma', lambda x: lg.mvlgamma(x, 4), [3.1, 5.0]),
    ('i0', lg.i0, [-1.0, 0.0, 31.0]), ('i0e', lg.special.i0e, [-1.0, 0.5, 31.0]),
    ('i1', lg.special.i1, [-1.0, 0.0, 31.0]), ('i1e', lg.special.i1e, [-1.0, 0.0, 31.0]),
    ('erfcx', lg.special.erfcx, [-1.0, 0.5, 30.0]), ('log_ndtr', lg.special.log_ndtr, [-40.0, -2.0, 3.0]),
    ('ndtri', lg.special.ndtri, [1e-3, 0.3, 0.9]), ('entr', lg.special.entr, [0.1, 2.0]),
    ('ndtr', lg.special.ndtr, [-1.0, 2.0]),
    ('xlog1py', lambda x: lg.special.xlog1py(x, x * 0.5), [0.3, 2.0]),
    ('zeta', lambda q: lg.special.zeta(lg.tensor([2.5, 4.0], dtype=lg.float64), q), [0.3, 2.0]),
    ('igamma', lambda x: lg.igamma(lg.tensor([0.5, 3.0], dtype=lg.float64), x), [0.3, 2.0]),
    ('igammac', lambda x: lg.igammac(lg.tensor([0.5, 3.0], dtype=lg.float64), x), [0.3, 2.0]),
]


@pytest.mark.parametrize('name,fn,x', GRADCHECK, ids=[g[0] for g in GRADCHECK])
def test_gradcheck_and_gradgradcheck(name, fn, x):
    t = lg.tensor(x, dtype=lg.float64, requires_grad=True)
    assert lg.autograd.gradcheck(fn, (t,))
    assert lg.autograd.gradgradcheck(fn, (t,))


# ---- samplers ----------------------------------------------------------------------------------

def _ks_distance(a, b):
    """The two-sample Kolmogorov-Smirnov statistic."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return np.max(np.abs(np.searchsorted(a, grid, side='right') / a.size - np.searchsorted(b, grid, side='right') / b.size))


def _ks_bound(n, m, alpha=1e-6):
    """The KS distance two samples of the same distribution exceed with probability alpha."""
    return math.sqrt(-math.log(alpha / 2) * 0.5) * math.sqrt((n + m) / (n * m))


N = 20000


@pytest.mark.parametrize('alpha', [0.05, 0.5, 1.0, 2.5, 40.0])
def test_standard_gamma_samples(alpha):
    lg.manual_seed(1)
    mine = lg._standard_gamma(lg.full((N,), alpha, dtype=lg.float64)).numpy()
    theirs = torch._standard_gamma(torch.full((N,), alpha, dtype=torch.float64)).numpy()
    assert _ks_distance(mine, theirs) < _ks_bound(N, N)
    assert abs(mine.mean() - alpha) < 6 * math.sqrt(alpha / N)


@pytest.mark.parametrize('rate', [0.3, 4.0, 9.99, 10.0, 37.0, 2000.0])
def test_poisson_samples(rate):
    lg.manual_seed(2)
    mine = lg.poisson(lg.full((N,), rate)).numpy()
    theirs = torch.poisson(torch.full((N,), rate)).numpy()
    assert mine.dtype == np.float32 and np.all(mine == np.round(mine))
    assert _ks_distance(mine, theirs) < _ks_bound(N, N)


@pytest.mark.parametrize('count,prob', [(5, 0.3), (40, 0.2), (100, 0.5), (1000, 0.93), (30, 0.99), (7, 1.0), (0, 0.5)])
def test_binomial_samples(count, prob):
    lg.manual_seed(3)
    mine = lg.binomial(lg.full((N,), float(count)), lg.full((N,), prob)).numpy()
    theirs = torch.binomial(torch.full((N,), float(count)), torch.full((N,), prob)).numpy()
    assert mine.min() >= 0 and mine.max() <= count
    assert _ks_distance(mine, theirs) < _ks_bound(N, N)


def test_dirichlet_samples():
    lg.manual_seed(4)
    conc = [0.3, 1.0, 4.0]
    mine = lg._sample_dirichlet(lg.tensor([conc] * N, dtype=lg.float64)).numpy()
    theirs = torch._sample_dirichlet(torch.tensor([conc] * N, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(mine.sum(-1), 1, rtol=1e-12)
    for k in range(3):
        assert _ks_distance(mine[:, k], theirs[:, k]) < _ks_bound(N, N)
    # all-zero concentrations: tiny gammas, equal shares (as PyTorch)
    np.testing.assert_array_equal(lg._sample_dirichlet(lg.zeros(2, 2)).numpy(), np.full((2, 2), 0.5, np.float32))


def test_sampler_edges_and_errors():
    np.testing.assert_array_equal(lg._standard_gamma(lg.tensor([-1.0, 0.0, float('nan'), float('inf')])).numpy(),
                                  torch._standard_gamma(torch.tensor([-1.0, 0.0, float('nan'), float('inf')])).numpy())
    np.testing.assert_array_equal(lg.binomial(lg.tensor([-1.0, 5.0, 3.0]), lg.tensor([0.5, 1.5, 0.0])).numpy(),
                                  [0.0, 5.0, 0.0])
    for fn in [lambda T: T.poisson(T.tensor([-1.0])), lambda T: T.poisson(T.tensor([float('nan')])),
               lambda T: T.poisson(T.tensor([1, 2])), lambda T: T._standard_gamma(T.tensor([1, 2])),
               lambda T: T.binomial(T.tensor([1, 2]), T.tensor([0.5, 0.5])),
               lambda T: T.binomial(T.tensor([1.0]), T.tensor([1])),
               lambda T: T.binomial(T.tensor([1.0]), T.tensor([0.5], dtype=T.float64)),
               lambda T: T._sample_dirichlet(T.tensor([1, 2])),
               lambda T: T.poisson(T.tensor([1.0]), generator=5)]:
        lg_msg, torch_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
        assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


def test_samplers_follow_the_generator():
    g1, g2 = lg.Generator().manual_seed(7), lg.Generator().manual_seed(7)
    alpha = lg.tensor([0.5, 2.0, 30.0])
    assert np.array_equal(lg._standard_gamma(alpha, generator=g1).numpy(), lg._standard_gamma(alpha, generator=g2).numpy())
    assert np.array_equal(lg.poisson(alpha * 5, generator=g1).numpy(), lg.poisson(alpha * 5, generator=g2).numpy())
    lg.manual_seed(5)
    a = lg.poisson(alpha * 5).numpy()
    lg.manual_seed(5)
    assert np.array_equal(a, lg.poisson(alpha * 5).numpy())


def test_poisson_records_a_zero_gradient():
    for T in (lg, torch):
        rate = T.tensor([1.0, 20.0], requires_grad=True)
        out = T.poisson(rate)
        assert type(out.grad_fn).__name__ == 'PoissonBackward0'
        out.sum().backward()
        assert rate.grad.tolist() == [0.0, 0.0]


# ---- reparametrised derivatives ----------------------------------------------------------------

def _exact_gamma_grad(alpha, x, h=1e-5):
    """-(dP(alpha, x)/dalpha) / density, dP by central differences of leafgrad's igamma."""
    a = lg.tensor([alpha - h, alpha + h], dtype=lg.float64)
    p = lg.igamma(a, lg.tensor([x, x], dtype=lg.float64)).numpy()
    density = math.exp((alpha - 1) * math.log(x) - x - math.lgamma(alpha))
    return -(p[1] - p[0]) / (2 * h) / density


def test_standard_gamma_grad():
    rng = np.random.default_rng(5)
    for alpha in [0.05, 0.3, 1.0, 2.0, 7.9, 8.5, 30.0, 200.0]:
        x = np.concatenate([rng.gamma(alpha, size=20), [alpha, alpha + 1]])
        a = np.full_like(x, alpha)
        mine = lg._standard_gamma_grad(lg.tensor(a), lg.tensor(x)).numpy()
        theirs = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
        np.testing.assert_allclose(mine, theirs, rtol=2e-3)  # PyTorch's approximation error
        for k in range(0, x.size, 5):
            assert abs(mine[k] - _exact_gamma_grad(alpha, x[k])) < 1e-6 * abs(mine[k]), (alpha, x[k])


def test_standard_gamma_rsample_gradient():
    for T in (lg, torch):
        T.manual_seed(0)
        alpha = T.tensor([0.4, 2.0, 9.0], dtype=T.float64, requires_grad=True)
        sample = T._standard_gamma(alpha)
        assert type(sample.grad_fn).__name__ == 'StandardGammaBackward0'
        (sample * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
        expected = T._standard_gamma_grad(alpha.detach(), sample.detach()) * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
        np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=1e-15)


def _exact_beta_grad(x, a, b, h=1e-5):
    """-(dI_x(a, b)/da) / density / (1 - x), by central differences of the beta cdf integrated
    with mpmath."""
    mp = pytest.importorskip('mpmath')
    mp.mp.dps = 30
    d = mp.diff(lambda s: mp.betainc(s, b, 0, x, regularized=True), a)
    density = mp.mpf(x) ** (a - 1) * (1 - mp.mpf(x)) ** (b - 1) / mp.beta(a, b)
    return float(-d / density / (1 - x))


def test_dirichlet_grad():
    rng = np.random.default_rng(6)
    for a, b in [(0.3, 0.5), (1.0, 2.0), (2.0, 1.0), (5.0, 3.0), (10.0, 12.0), (0.9, 30.0), (40.0, 2.0)]:
        x = np.clip(rng.beta(a, b, size=10), 1e-9, 1 - 1e-9)
        mine = lg._dirichlet_grad(lg.tensor(x), lg.tensor(np.full_like(x, a)), lg.tensor(np.full_like(x, a + b))).numpy()
        theirs = torch._dirichlet_grad(torch.tensor(x), torch.tensor(np.full_like(x, a)),
                                       torch.tensor(np.full_like(x, a + b))).numpy()
        np.testing.assert_allclose(mine, theirs, rtol=2e-3, atol=1e-12)
        for k in range(0, 10, 4):
            exact = _exact_beta_grad(x[k], a, b)
            assert abs(mine[k] - exact) < 1e-10 * abs(exact), (a, b, x[k])


# ---- forward mode: func.jvp, forward_ad, gradcheck(check_forward_ad=True) ---------------------

def _x(*values):
    return np.array(values, dtype=np.float64)


# name -> (function of (M, *tensors), inputs): every differentiable function of torch.special
# (and torch's names for them), passed to jvp as the op itself where it takes one tensor
FORWARD = {
    'lgamma': (lambda M, x: M.lgamma(x), [_x(0.3, 2.7, -1.5)]),
    'special.gammaln': (lambda M, x: M.special.gammaln(x), [_x(0.3, 2.7, -1.5)]),
    'digamma': (lambda M, x: M.digamma(x), [_x(0.3, 2.7, -1.5)]),
    'special.psi': (lambda M, x: M.special.psi(x), [_x(0.3, 2.7, -1.5)]),
    'polygamma': (lambda M, x: M.polygamma(2, x), [_x(0.3, 2.7, 13.0)]),
    'Tensor.polygamma': (lambda M, x: x.polygamma(1), [_x(0.3, 2.7, 13.0)]),
    'mvlgamma': (lambda M, x: M.mvlgamma(x, 3), [_x(3.1, 5.0)]),
    'special.multigammaln': (lambda M, x: M.special.multigammaln(x, 2), [_x(3.1, 5.0)]),
    'i0': (lambda M, x: M.i0(x), [_x(-1.0, 0.0, 31.0)]),
    'special.i0': (lambda M, x: M.special.i0(x), [_x(-1.0, 0.5)]),
    'special.i0e': (lambda M, x: M.special.i0e(x), [_x(-1.0, 0.5, 31.0)]),
    'special.i1': (lambda M, x: M.special.i1(x), [_x(-1.0, 0.0, 31.0)]),
    'special.i1e': (lambda M, x: M.special.i1e(x), [_x(-1.0, 0.0, 31.0)]),
    'special.erfcx': (lambda M, x: M.special.erfcx(x), [_x(-1.0, 0.5, 30.0)]),
    'special.ndtr': (lambda M, x: M.special.ndtr(x), [_x(-1.0, 0.3, 2.0)]),
    'special.log_ndtr': (lambda M, x: M.special.log_ndtr(x), [_x(-40.0, -2.0, 3.0)]),
    'special.ndtri': (lambda M, x: M.special.ndtri(x), [_x(1e-3, 0.3, 0.9)]),
    'special.entr': (lambda M, x: M.special.entr(x), [_x(0.1, 2.0, 0.7)]),
    'special.xlog1py': (lambda M, x, y: M.special.xlog1py(x, y), [_x(0.3, 2.0, 0.0), _x(0.5, 1.5, -0.5)]),
    'special.xlog1py broadcast': (lambda M, x, y: M.special.xlog1py(x, y), [_x(0.3, 2.0), _x(0.5)]),
    'special.xlog1py number x': (lambda M, y: M.special.xlog1py(2.5, y), [_x(0.5, 1.5)]),
    'special.xlog1py number y': (lambda M, x: M.special.xlog1py(x, 1.5), [_x(0.5, 0.0, -2.0)]),
    'special.xlog1py number y below': (lambda M, x: M.special.xlog1py(x, -2.0), [_x(0.5, 0.0, -2.0)]),
}


def _jvp(M, name, direct):
    fn, values = FORWARD[name]
    xs = [M.tensor(v) for v in values]
    ts = [M.tensor(np.linspace(0.5, 1.5, v.size).reshape(v.shape)) for v in values]
    op = {'lgamma': M.lgamma, 'digamma': M.digamma, 'i0': M.i0, 'special.gammaln': M.special.gammaln,
          'special.psi': M.special.psi, 'special.i0': M.special.i0, 'special.i0e': M.special.i0e,
          'special.i1': M.special.i1, 'special.i1e': M.special.i1e, 'special.erfcx': M.special.erfcx,
          'special.ndtr': M.special.ndtr, 'special.log_ndtr': M.special.log_ndtr, 'special.ndtri': M.special.ndtri,
          'special.entr': M.special.entr}.get(name) if direct else None
    return M.func.jvp(op or (lambda *a: fn(M, *a)), tuple(xs), tuple(ts))


@pytest.mark.parametrize('direct', [False, True], ids=['lambda', 'the op itself'])
@pytest.mark.parametrize('name', sorted(FORWARD))
def test_func_jvp_against_torch(name, direct):
    """func.jvp(f, primals, tangents), with f the op itself (taken before jvp wrapped the ops)
    or a function calling it: the output and its tangent as torch.func.jvp's."""
    ours, theirs = _jvp(lg, name, direct), _jvp(torch, name, direct)
    for o, t in zip(ours, theirs):
        assert str(o.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def _dual_tangent(M, name, dtype):
    fn, values = FORWARD[name]
    fw = M.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(M.tensor(v, dtype=dtype), M.tensor(np.cos(v), dtype=dtype)) for v in values]
        tangent = fw.unpack_dual(fn(M, *duals)).tangent
    return tangent


@pytest.mark.parametrize('dtype', ['float64', 'float32'])
@pytest.mark.parametrize('name', sorted(FORWARD))
def test_dual_tangents_against_torch(name, dtype):
    """forward_ad: the tangent of the op of dual tensors, its dtype, and no graph behind it."""
    ours, theirs = (_dual_tangent(M, name, getattr(M, dtype)) for M in (lg, torch))
    assert str(ours.dtype) == str(theirs.dtype).replace('torch', 'leafgrad')
    assert ours.requires_grad is theirs.requires_grad is False
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == 'float64' else dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tol)


@pytest.mark.parametrize('name', sorted(FORWARD))
def test_forward_mode_gradcheck(name):
    fn, values = FORWARD[name]
    if name == 'special.xlog1py number y below':
        return  # (at x = 0 the derivative is 0 by PyTorch's rule, not the finite differences' log(-1))
    xs = [lg.tensor(v, requires_grad=True) for v in values]
    assert lg.autograd.gradcheck(lambda *a: fn(lg, *a), xs, check_forward_ad=True, check_batched_forward_grad=True)


def test_jacfwd_of_the_ops_themselves():
    x = np.array([-0.5, 0.3, 1.7])
    for name in ('i0e', 'i1', 'i1e', 'erfcx', 'ndtr', 'log_ndtr', 'entr'):
        arg = np.abs(x) if name == 'entr' else x
        ours = lg.func.jacfwd(getattr(lg.special, name))(lg.tensor(arg))
        theirs = torch.func.jacfwd(getattr(torch.special, name))(torch.tensor(arg))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    ours = lg.func.jacfwd(lg.sin)(lg.tensor(x))
    np.testing.assert_allclose(ours.numpy(), torch.func.jacfwd(torch.sin)(torch.tensor(x)).numpy(), rtol=1e-12)


# PyTorch has no forward rule for igamma, igammac and zeta; leafgrad's is the reverse derivative's
# (with respect to other / q), checked against torch's Jacobian by reverse mode
NO_TORCH_RULE = [
    ('igamma', lambda M, x: M.igamma(M.tensor([0.5, 3.0], dtype=x.dtype), x)),
    ('igammac', lambda M, x: M.igammac(M.tensor([0.5, 3.0], dtype=x.dtype), x)),
    ('special.gammainc', lambda M, x: M.special.gammainc(M.tensor([0.5, 3.0], dtype=x.dtype), x)),
    ('special.zeta', lambda M, x: M.special.zeta(M.tensor([2.5, 4.0], dtype=x.dtype), x)),
    ('special.zeta number', lambda M, x: M.special.zeta(3.5, x)),
]


@pytest.mark.parametrize('name,fn', NO_TORCH_RULE, ids=[n for n, _ in NO_TORCH_RULE])
def test_forward_rules_pytorch_does_not_have(name, fn):
    x = np.array([0.3, 2.0])
    t = np.array([1.5, -0.5])
    ours = lg.func.jvp(lambda a: fn(lg, a), (lg.tensor(x),), (lg.tensor(t),))[1]
    with pytest.raises(NotImplementedError):
        torch.func.jvp(lambda a: fn(torch, a), (torch.tensor(x),), (torch.tensor(t),))
    jacobian = torch.func.jacrev(lambda a: fn(torch, a))(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), (jacobian @ torch.tensor(t)).numpy(), rtol=1e-10)
    assert lg.autograd.gradcheck(lambda a: fn(lg, a), (lg.tensor(x, requires_grad=True),), check_forward_ad=True)


NO_RULE_AT_ALL = [
    lambda M, x: M.igamma(x, M.tensor([0.5, 3.0], dtype=x.dtype)),
    lambda M, x: M.special.gammaincc(x, M.tensor([0.5, 3.0], dtype=x.dtype)),
    lambda M, x: M.special.zeta(x + 2, M.tensor([0.5, 3.0], dtype=x.dtype)),
    lambda M, x: M.special.zeta(x + 2, 3.0),
]


@pytest.mark.parametrize('k', range(len(NO_RULE_AT_ALL)))
def test_no_forward_rule_for_the_first_argument(k):
    """igamma's and zeta's first argument has no derivative: PyTorch's NotImplementedError."""
    def run(M):
        x = M.tensor([0.3, 2.0], dtype=M.float64)
        return M.func.jvp(lambda a: NO_RULE_AT_ALL[k](M, a), (x,), (M.ones_like(x),))
    lg_msg, torch_msg = raises_like(lambda: run(lg), lambda: run(torch))
    assert torch_msg.startswith(lg_msg), (lg_msg, torch_msg)


def _comparable(value):
    if isinstance(value, (lg.Tensor, torch.Tensor)):
        return str(value.dtype).split('.')[-1], np.round(value.detach().numpy(), 12).tolist()
    return value


def test_saved_tensors_named_as_pytorch():
    """grad_fn._saved_<name> of every special function's node, as PyTorch names them."""
    def saved(M):
        x = M.tensor([0.3, 1.7], dtype=M.float64, requires_grad=True)
        y = M.tensor([0.6, 1.1], dtype=M.float64, requires_grad=True)
        outs = [M.lgamma(x), x.digamma(), M.polygamma(2, x), M.mvlgamma(x + 2, 3), M.igamma(x, y), x.igammac(y),
                x.i0(), M.special.i0e(x), M.special.i1(x), M.special.i1e(x), M.special.erfcx(x), M.special.ndtr(x),
                M.special.log_ndtr(x), M.special.ndtri(x / 3), M.special.entr(x), M.special.xlog1py(x, y),
                M.special.xlog1py(2.0, y), M.special.xlog1py(x, 2.0), M.special.zeta(x + 1, y),
                M.special.zeta(3.0, y), M.special.zeta(x + 1, 2.0)]
        found = []
        for out in outs:
            node = out.grad_fn
            names = sorted(a for a in dir(node) if a.startswith('_saved_') and a not in ('_saved_slot',
                                                                                      '_saved_versions'))
            found.append((node.name(), [(a, _comparable(getattr(node, a))) for a in names]))
        return found
    assert saved(lg) == saved(torch)


def test_composite_tangents_carry_no_graph():
    """A composite op's intermediate rules run without recording (as PyTorch's): the tangent of
    F.normalize or ndtr of a dual tensor requires no grad."""
    for M in (lg, torch):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(M.tensor([[0.3, -1.2], [2.0, 0.5]]), M.ones(2, 2))
            for out in (M.nn.functional.normalize(d), M.nn.functional.cosine_similarity(d, d * 2), M.special.ndtr(d)):
                assert fw.unpack_dual(out).tangent.requires_grad is False


def test_xlog1py_number_below_minus_one_gradient():
    """xlog1py(x, y <= -1): the gradient is 0 where x is 0 (PyTorch's rule), NaN elsewhere."""
    grads = []
    for M in (lg, torch):
        x = M.tensor([0.5, 0.0, -2.0], requires_grad=True)
        M.special.xlog1py(x, -2.0).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_special_names_no_helpers():
    """leafgrad.special holds torch.special's names only (record, xp, writes_out, same_dtype and
    the node class RoundBackward1 were public attributes of it, which torch.special has not)."""
    ours = {n for n in dir(lg.special) if not n.startswith('_')}
    assert ours <= set(dir(torch.special)), sorted(ours - set(dir(torch.special)))


def _erf_points():
    """Every region of erf and erfc (|x| < 2^-28, < 0.84375, < 1.25, < 1/0.35, < 6, < 28 and
    beyond) with the boundaries, their neighbours, signed zeros, subnormals, infinities and NaN."""
    edges = [0.0, 2.0 ** -1015, 2.0 ** -56, 2.0 ** -28, 0.25, 0.84375, 1.25, float.fromhex('0x1.6db6dp+1'),
             float.fromhex('0x1.6db6ep+1'), 6.0, 28.0]
    near = [np.nextafter(e, d) for e in edges for d in (-np.inf, np.inf)] + edges
    rng = np.random.default_rng(7)
    points = np.concatenate([near, rng.standard_normal(20000) * 2, rng.uniform(-30, 30, 5000),
                             rng.standard_normal(2000) * 1e-9, [5e-324, 1e-310, np.inf, np.nan]])
    return np.concatenate([points, -points])


@pytest.mark.parametrize('name', ['erf', 'erfc'])
def test_erf_erfc_on_arrays_are_the_c_librarys(name):
    """erf and erfc run on whole arrays (not a Python loop over math.erf): against the C
    library's values (which math.erf gives) within 4 units in the last place in float64
    (NumPy's exp and the C library's differ in the last bit, and erfc's tail carries it), and
    equal to them once rounded to float32, as a float32 tensor computes it."""
    from leafgrad import _special_kernels
    x = _erf_points()
    mine = getattr(_special_kernels, name)(x)
    ref = np.array([getattr(math, name)(v) for v in x])
    assert mine.shape == x.shape and mine.dtype == np.float64
    assert np.array_equal(np.isnan(mine), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.array_equal(np.signbit(mine[ok & (ref == 0)]), np.signbit(ref[ok & (ref == 0)]))
    ulps = np.abs(mine[ok].view(np.int64) - ref[ok].view(np.int64))
    assert ulps.max() <= 4 and (ulps == 0).mean() > 0.95
    x32 = x.astype(np.float32)
    got = getattr(lg, name)(lg.tensor(x32)).numpy()
    want = np.array([getattr(math, name)(float(v)) for v in x32]).astype(np.float32)
    assert np.array_equal(got, want, equal_nan=True)
    assert getattr(lg, name)(lg.tensor(0.5, dtype=lg.float64)).item() == getattr(math, name)(0.5)  # 0-d
