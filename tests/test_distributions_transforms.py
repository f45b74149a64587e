"""Transforms, constraints, biject_to/transform_to and TransformedDistribution against torch:
forward and inverse values, log|det J| and their gradients, shapes, caching, equality, the
constraints' checks, and distributions built by pushing a base through transforms."""
import numpy as np
import pytest

from oracle import assert_same, to_np
from test_distributions import compare

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
import leafgrad.distributions as D  # noqa: E402

RNG = np.random.default_rng(5)
X = RNG.normal(size=(2, 4))
POS = RNG.uniform(0.2, 2.0, size=(2, 4))
UNIT = RNG.uniform(0.05, 0.95, size=(2, 4))


def _lib_transforms(lib):
    return D.transforms if lib is lg else torch.distributions.transforms


TRANSFORMS = {  # name -> (make(lib, T), input)
    'exp': (lambda t, T: T.ExpTransform(), X),
    'exp-inv': (lambda t, T: T.ExpTransform().inv, POS),
    'power': (lambda t, T: T.PowerTransform(t.tensor(2.5, dtype=t.float64)), POS),
    'power-batched': (lambda t, T: T.PowerTransform(t.tensor([0.5, 1.5, 2.0, 3.0], dtype=t.float64)), POS),
    'sigmoid': (lambda t, T: T.SigmoidTransform(), X),
    'sigmoid-inv': (lambda t, T: T.SigmoidTransform().inv, UNIT),
    'softplus': (lambda t, T: T.SoftplusTransform(), X),
    'tanh': (lambda t, T: T.TanhTransform(), X),
    'abs': (lambda t, T: T.AbsTransform(), X),
    'affine': (lambda t, T: T.AffineTransform(t.tensor(0.5, dtype=t.float64), t.tensor(-2.0, dtype=t.float64)), X),
    'affine-number': (lambda t, T: T.AffineTransform(1.0, 3.0), X),
    'affine-event': (lambda t, T: T.AffineTransform(t.zeros(4, dtype=t.float64),
                                                    t.tensor([1.0, 2.0, -3.0, 0.5], dtype=t.float64), event_dim=1), X),
    'softmax': (lambda t, T: T.SoftmaxTransform(), X),
    'stick-breaking': (lambda t, T: T.StickBreakingTransform(), X),
    'stick-breaking-inv': (lambda t, T: T.StickBreakingTransform().inv,
                           np.concatenate([UNIT, np.ones((2, 1))], -1) / (UNIT.sum(-1, keepdims=True) + 1)),
    'lower-cholesky': (lambda t, T: T.LowerCholeskyTransform(), RNG.normal(size=(2, 3, 3))),
    'positive-definite': (lambda t, T: T.PositiveDefiniteTransform(), RNG.normal(size=(2, 3, 3))),
    'corr-cholesky': (lambda t, T: T.CorrCholeskyTransform(), RNG.normal(size=(2, 6))),
    'compose': (lambda t, T: T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform()]), X),
    'compose-event': (lambda t, T: T.ComposeTransform([T.ExpTransform(), T.StickBreakingTransform()]), X),
    'independent': (lambda t, T: T.IndependentTransform(T.ExpTransform(), 1), X),
    'reshape': (lambda t, T: T.ReshapeTransform((4,), (2, 2)), X),
    'cat': (lambda t, T: T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=1, lengths=[1, 3]), X),
    'stack': (lambda t, T: T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0), X),
    'cdf': (lambda t, T: T.CumulativeDistributionTransform((D if t is lg else torch.distributions).Normal(
        t.tensor(0.5, dtype=t.float64), t.tensor(2.0, dtype=t.float64))), X),
}


def _make(name, lib):
    make, x = TRANSFORMS[name]
    return make(lib, _lib_transforms(lib)), x


@pytest.mark.parametrize('name', list(TRANSFORMS))
def test_transform(name):
    t_lg, x = _make(name, lg)
    t_t, _ = _make(name, torch)
    x_lg = lg.tensor(x, requires_grad=True)
    x_t = torch.tensor(x, requires_grad=True)
    y_lg, y_t = t_lg(x_lg), t_t(x_t)
    compare(y_lg, y_t, [x_lg], [x_t], atol=1e-10, rtol=1e-8)
    for attr in ('bijective', 'sign', 'event_dim'):
        try:
            expected = getattr(t_t, attr)
        except (NotImplementedError, ValueError) as e:
            with pytest.raises(type(e), match=str(e) or None):
                getattr(t_lg, attr)
            continue
        if isinstance(expected, torch.Tensor):
            assert_same(getattr(t_lg, attr), expected)
        else:
            assert getattr(t_lg, attr) == expected, attr
    assert t_lg.domain.event_dim == t_t.domain.event_dim and t_lg.codomain.event_dim == t_t.codomain.event_dim
    assert type(t_lg.domain).__name__ == type(t_t.domain).__name__
    assert type(t_lg.codomain).__name__ == type(t_t.codomain).__name__
    assert tuple(t_lg.forward_shape(lg.Size(x.shape))) == tuple(t_t.forward_shape(torch.Size(x.shape)))
    assert tuple(t_lg.inverse_shape(lg.Size(y_t.shape))) == tuple(t_t.inverse_shape(y_t.shape))
    assert repr(t_lg).replace('leafgrad', 'torch') == repr(t_t)
    if t_t.bijective:  # the inverse of a fresh output (no cache)
        y0 = to_np(y_t).copy()
        yl, yt = lg.tensor(y0, requires_grad=True), torch.tensor(y0, requires_grad=True)
        compare(t_lg.inv(yl), t_t.inv(yt), [yl], [yt], atol=1e-8, rtol=1e-7)
    try:
        ladj_t = t_t.log_abs_det_jacobian(x_t, y_t)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            t_lg.log_abs_det_jacobian(x_lg, y_lg)
        return
    compare(t_lg.log_abs_det_jacobian(x_lg, y_lg), ladj_t, [x_lg], [x_t], atol=1e-9, rtol=1e-7)


def test_transform_cache_and_equality():
    T = D.transforms
    t = T.ExpTransform(cache_size=1)
    x = lg.tensor([0.5])
    y = t(x)
    assert t.inv(y) is x  # the cached input
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.identity_transform(x) is x
    for bad in (2, -1):
        with pytest.raises(ValueError) as l_info:
            T.ExpTransform(cache_size=bad)
        with pytest.raises(ValueError) as t_info:
            torch.distributions.transforms.ExpTransform(cache_size=bad)
        assert str(l_info.value) == str(t_info.value)


CONSTRAINTS = ['real', 'positive', 'nonnegative', 'unit_interval', 'simplex', 'boolean', 'nonnegative_integer',
               'positive_integer', 'real_vector', 'lower_triangular', 'lower_cholesky', 'corr_cholesky',
               'positive_definite', 'positive_semidefinite', 'symmetric', 'square', 'one_hot']
VALUES = [np.array([0.0, 1.0, 2.0, -1.0, 0.5, np.inf, np.nan]), np.array([[0.25, 0.75], [0.5, 0.6]]),
          np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 0.0], [1.0, 3.0]]), np.array([[1.0, 2.0], [2.0, 1.0]]),
          np.array([[[1.0, 0.0], [0.6, 0.8]]]), np.array([[0.0, 1.0], [1.0, 1.0]]), np.array([[4.0, 2.0], [2.0, 1.0]])]


@pytest.mark.parametrize('name', CONSTRAINTS)
def test_constraint_check(name):
    c_lg, c_t = getattr(D.constraints, name), getattr(torch.distributions.constraints, name)
    assert repr(c_lg) == repr(c_t)
    assert c_lg.is_discrete == c_t.is_discrete and c_lg.event_dim == c_t.event_dim
    for v in VALUES:
        if v.ndim < c_t.event_dim:
            continue
        assert_same(c_lg.check(lg.tensor(v)), c_t.check(torch.tensor(v)))


PARAMETRIC = {
    'greater_than': lambda c, t: c.greater_than(t.tensor(0.5, dtype=t.float64)),
    'greater_than_eq': lambda c, t: c.greater_than_eq(0.5),
    'less_than': lambda c, t: c.less_than(1.5),
    'interval': lambda c, t: c.interval(0.0, 2.0),
    'half_open_interval': lambda c, t: c.half_open_interval(0.0, 2.0),
    'integer_interval': lambda c, t: c.integer_interval(0, 2),
    'independent': lambda c, t: c.independent(c.positive, 1),
    'multinomial': lambda c, t: c.multinomial(3),
    'cat': lambda c, t: c.cat([c.positive, c.real], dim=-1, lengths=[1, 1]),
    'stack': lambda c, t: c.stack([c.positive, c.unit_interval], dim=-1),
}


@pytest.mark.parametrize('name', list(PARAMETRIC))
def test_parametrised_constraint_check(name):
    c_lg = PARAMETRIC[name](D.constraints, lg)
    c_t = PARAMETRIC[name](torch.distributions.constraints, torch)
    assert repr(c_lg).replace('leafgrad', 'torch') == repr(c_t)
    assert c_lg.is_discrete == c_t.is_discrete and c_lg.event_dim == c_t.event_dim
    for v in VALUES:
        if v.ndim < max(c_t.event_dim, 1) or (name in ('cat', 'stack') and v.shape[-1] != 2):
            continue
        assert_same(c_lg.check(lg.tensor(v)), c_t.check(torch.tensor(v)))


REGISTRY_CASES = {
    'real': (lambda c, t: c.real, (2, 3)),
    'positive': (lambda c, t: c.positive, (2, 3)),
    'greater_than': (lambda c, t: c.greater_than(1.5), (3,)),
    'greater_than_eq': (lambda c, t: c.greater_than_eq(-1.0), (3,)),
    'less_than': (lambda c, t: c.less_than(2.0), (3,)),
    'unit_interval': (lambda c, t: c.unit_interval, (3,)),
    'interval': (lambda c, t: c.interval(-2.0, 3.0), (3,)),
    'half_open_interval': (lambda c, t: c.half_open_interval(-2.0, 3.0), (3,)),
    'simplex': (lambda c, t: c.simplex, (2, 4)),
    'lower_cholesky': (lambda c, t: c.lower_cholesky, (2, 3, 3)),
    'positive_definite': (lambda c, t: c.positive_definite, (3, 3)),
    'corr_cholesky': (lambda c, t: c.corr_cholesky, (2, 6)),
    'independent': (lambda c, t: c.independent(c.positive, 1), (2, 3)),
    'cat': (lambda c, t: c.cat([c.positive, c.real], dim=-1, lengths=[2, 1]), (2, 3)),
    'stack': (lambda c, t: c.stack([c.positive, c.unit_interval], dim=-1), (3, 2)),
}


@pytest.mark.parametrize('registry', ['biject_to', 'transform_to'])
@pytest.mark.parametrize('name', list(REGISTRY_CASES))
def test_constraint_registry(name, registry):
    make, shape = REGISTRY_CASES[name]
    c_lg, c_t = make(D.constraints, lg), make(torch.distributions.constraints, torch)
    try:
        t_t = getattr(torch.distributions, registry)(c_t)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            getattr(D, registry)(c_lg)
        return
    t_lg = getattr(D, registry)(c_lg)
    assert type(t_lg).__name__ == type(t_t).__name__
    x = RNG.normal(size=shape)
    x_lg, x_t = lg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y_lg = t_lg(x_lg)
    compare(y_lg, t_t(x_t), [x_lg], [x_t], atol=1e-9, rtol=1e-7)
    assert c_lg.check(y_lg.detach()).all()


def test_registry_errors():
    with pytest.raises(NotImplementedError) as info:
        D.biject_to(D.constraints.boolean)
    with pytest.raises(NotImplementedError) as t_info:
        torch.distributions.biject_to(torch.distributions.constraints.boolean)
    assert str(info.value).replace('leafgrad', 'torch') == str(t_info.value)


TRANSFORMED = {
    'affine-exp': (lambda d, t: d.TransformedDistribution(d.Normal(t.zeros(3, dtype=t.float64),
                                                                   t.ones(3, dtype=t.float64)),
                                                          [d.transforms.AffineTransform(1.0, 2.0),
                                                           d.transforms.ExpTransform()]), 'positive'),
    'logistic': (lambda d, t: d.TransformedDistribution(d.Uniform(t.zeros(2, dtype=t.float64),
                                                                  t.ones(2, dtype=t.float64)),
                                                        [d.transforms.SigmoidTransform().inv,
                                                         d.transforms.AffineTransform(0.5, 3.0)]), 'real'),
    'stick': (lambda d, t: d.TransformedDistribution(d.Normal(t.zeros(2, 3, dtype=t.float64),
                                                              t.ones(2, 3, dtype=t.float64)),
                                                     d.transforms.StickBreakingTransform()), 'simplex'),
    'power-batched': (lambda d, t: d.TransformedDistribution(d.Exponential(t.tensor(2.0, dtype=t.float64)),
                                                             d.transforms.PowerTransform(
                                                                 t.tensor([0.5, 2.0], dtype=t.float64))),
                      'positive'),
    'decreasing': (lambda d, t: d.TransformedDistribution(d.Normal(t.zeros(2, dtype=t.float64),
                                                                   t.ones(2, dtype=t.float64)),
                                                          d.transforms.AffineTransform(1.0, -2.0)), 'real'),
}


@pytest.mark.parametrize('name', list(TRANSFORMED))
def test_transformed_distribution(name):
    make, kind = TRANSFORMED[name]
    d_lg, d_t = make(D, lg), make(torch.distributions, torch)
    assert tuple(d_lg.batch_shape) == tuple(d_t.batch_shape) and tuple(d_lg.event_shape) == tuple(d_t.event_shape)
    assert repr(d_lg.support).replace('leafgrad', 'torch') == repr(d_t.support)
    torch.manual_seed(3)
    lg.manual_seed(3)
    s_t, s_lg = d_t.sample((4,)), d_lg.sample((4,))
    np.testing.assert_allclose(to_np(s_lg), to_np(s_t), rtol=1e-12, atol=1e-14)
    value = to_np(s_t).copy()
    assert_same(d_lg.log_prob(lg.tensor(value)), d_t.log_prob(torch.tensor(value)), rtol=1e-10, atol=1e-12)
    for method, arg in (('cdf', value), ('icdf', np.full(value.shape, 0.3))):
        try:
            expected = getattr(d_t, method)(torch.tensor(arg))
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(d_lg, method)(lg.tensor(arg))
            continue
        assert_same(getattr(d_lg, method)(lg.tensor(arg)), expected, rtol=1e-10, atol=1e-12)
    e_lg, e_t = d_lg.expand((5,) + tuple(d_t.batch_shape)), d_t.expand((5,) + tuple(d_t.batch_shape))
    assert tuple(e_lg.sample().shape) == tuple(e_t.sample().shape)
