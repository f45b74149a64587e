"""Argument and value validation of leafgrad.distributions against torch's: on by default, the
same exception types and messages for parameters outside their constraints, values outside the
support or of the wrong shape, missing or doubled parameters; validate_args=False and
Distribution.set_default_validate_args turn it off."""
import numpy as np
import pytest

from oracle import same_message

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
import leafgrad.distributions as D  # noqa: E402


def _both(fn):
    """fn(lib, module of distributions) in leafgrad and torch: the two exceptions, which must be
    of one type with one message."""
    with pytest.raises(Exception) as t_info:
        fn(torch, torch.distributions)
    with pytest.raises(type(t_info.value)) as l_info:
        fn(lg, D)
    assert same_message(str(l_info.value), str(t_info.value)), (str(l_info.value), str(t_info.value))


BAD_PARAMETERS = {
    'normal-scale': lambda t, d: d.Normal(t.zeros(3), t.tensor([1.0, -1.0, 2.0])),
    'normal-nan-loc': lambda t, d: d.Normal(t.tensor([float('nan')]), t.ones(1)),
    'normal-scalar-scale': lambda t, d: d.Normal(0.0, 0.0),
    'lognormal-scale': lambda t, d: d.LogNormal(t.zeros(2), -t.ones(2)),
    'uniform-order': lambda t, d: d.Uniform(t.tensor([0.0, 2.0]), t.tensor([1.0, 1.0])),
    'bernoulli-probs': lambda t, d: d.Bernoulli(probs=t.tensor([0.2, 1.5])),
    'bernoulli-both': lambda t, d: d.Bernoulli(probs=t.tensor(0.2), logits=t.tensor(0.0)),
    'bernoulli-neither': lambda t, d: d.Bernoulli(),
    'categorical-probs': lambda t, d: d.Categorical(probs=t.tensor([0.2, -0.1, 0.9])),
    'categorical-0d': lambda t, d: d.Categorical(probs=t.tensor(1.0)),
    'categorical-0d-logits': lambda t, d: d.Categorical(logits=t.tensor(1.0)),
    'categorical-nan-logits': lambda t, d: d.Categorical(logits=t.tensor([0.0, float('nan')])),
    'onehot-both': lambda t, d: d.OneHotCategorical(t.ones(2), t.ones(2)),
    'binomial-count': lambda t, d: d.Binomial(t.tensor([2.0, -1.0]), t.tensor([0.5, 0.5])),
    'binomial-count-fraction': lambda t, d: d.Binomial(t.tensor([2.5]), t.tensor([0.5])),
    'multinomial-count': lambda t, d: d.Multinomial(t.tensor(3), t.ones(3)),
    'poisson-rate': lambda t, d: d.Poisson(t.tensor([-1.0])),
    'exponential-rate': lambda t, d: d.Exponential(t.tensor([0.0])),
    'gamma-concentration': lambda t, d: d.Gamma(t.tensor([-1.0]), t.tensor([1.0])),
    'beta-concentration': lambda t, d: d.Beta(t.tensor([1.0]), t.tensor([0.0])),
    'dirichlet-concentration': lambda t, d: d.Dirichlet(t.tensor([1.0, -2.0])),
    'dirichlet-0d': lambda t, d: d.Dirichlet(t.tensor(1.0)),
    'studentt-df': lambda t, d: d.StudentT(t.tensor([-1.0])),
    'geometric-probs': lambda t, d: d.Geometric(t.tensor([0.0])),
    'laplace-scale': lambda t, d: d.Laplace(t.tensor([0.0]), t.tensor([-1.0])),
    'cauchy-scale': lambda t, d: d.Cauchy(t.tensor([0.0]), t.tensor([-1.0])),
    'gumbel-scale': lambda t, d: d.Gumbel(t.tensor([0.0]), t.tensor([-1.0])),
    'vonmises-concentration': lambda t, d: d.VonMises(t.tensor([0.0]), t.tensor([-1.0])),
    'chi2-df': lambda t, d: d.Chi2(t.tensor([-1.0])),
    'mvn-not-pd': lambda t, d: d.MultivariateNormal(t.zeros(2), t.tensor([[1.0, 2.0], [2.0, 1.0]])),
    'mvn-not-symmetric': lambda t, d: d.MultivariateNormal(t.zeros(2), t.tensor([[1.0, 0.5], [0.0, 1.0]])),
    'mvn-tril-not-cholesky': lambda t, d: d.MultivariateNormal(t.zeros(2), scale_tril=t.tensor([[1.0, 0.5],
                                                                                                [0.0, -1.0]])),
    'mvn-two-matrices': lambda t, d: d.MultivariateNormal(t.zeros(2), t.eye(2), scale_tril=t.eye(2)),
    'mvn-0d-loc': lambda t, d: d.MultivariateNormal(t.tensor(0.0), t.eye(2)),
    'mvn-1d-matrix': lambda t, d: d.MultivariateNormal(t.zeros(2), t.ones(2)),
    'mvn-1d-precision': lambda t, d: d.MultivariateNormal(t.zeros(2), precision_matrix=t.ones(2)),
    'mvn-1d-tril': lambda t, d: d.MultivariateNormal(t.zeros(2), scale_tril=t.ones(2)),
    'lowrank-diag': lambda t, d: d.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.tensor([1.0, 0.0])),
    'lowrank-factor-shape': lambda t, d: d.LowRankMultivariateNormal(t.zeros(2), t.ones(3, 1), t.ones(2)),
    'lowrank-factor-1d': lambda t, d: d.LowRankMultivariateNormal(t.zeros(2), t.ones(2), t.ones(2)),
    'lowrank-diag-shape': lambda t, d: d.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.ones(3)),
    'lowrank-batch': lambda t, d: d.LowRankMultivariateNormal(t.zeros(3, 2), t.ones(2, 2, 1), t.ones(2)),
    'mixture-not-categorical': lambda t, d: d.MixtureSameFamily(d.Normal(t.zeros(2), t.ones(2)),
                                                                d.Normal(t.zeros(2), t.ones(2))),
    'mixture-components': lambda t, d: d.MixtureSameFamily(d.Categorical(t.ones(3)), d.Normal(t.zeros(2), t.ones(2))),
    'mixture-batch': lambda t, d: d.MixtureSameFamily(d.Categorical(t.ones(3, 2)),
                                                      d.Normal(t.zeros(4, 2), t.ones(4, 2))),
    'mixture-not-distribution': lambda t, d: d.MixtureSameFamily(d.Categorical(t.ones(2)), 3),
    'independent-ndims': lambda t, d: d.Independent(d.Normal(t.zeros(2), t.ones(2)), 2),
    'transformed-not-transform': lambda t, d: d.TransformedDistribution(d.Normal(0.0, 1.0), [3]),
    'transformed-not-list': lambda t, d: d.TransformedDistribution(d.Normal(0.0, 1.0), 3),
    'relaxed-probs': lambda t, d: d.RelaxedBernoulli(t.tensor(1.0), probs=t.tensor([2.0])),
    'relaxed-onehot-probs': lambda t, d: d.RelaxedOneHotCategorical(t.tensor(1.0), probs=t.tensor([-2.0, 1.0])),
    'halfnormal-scale': lambda t, d: d.HalfNormal(t.tensor([-1.0])),
    'halfcauchy-scale': lambda t, d: d.HalfCauchy(t.tensor([0.0])),
    'pareto-alpha': lambda t, d: d.Pareto(t.tensor([1.0]), t.tensor([-1.0])),
    'weibull-concentration': lambda t, d: d.Weibull(t.tensor([1.0]), t.tensor([0.0])),
    'negbinomial-probs': lambda t, d: d.NegativeBinomial(t.tensor([2.0]), t.tensor([1.0])),
    'negbinomial-count': lambda t, d: d.NegativeBinomial(t.tensor([-2.0]), t.tensor([0.5])),
    'inversegamma-rate': lambda t, d: d.InverseGamma(t.tensor([1.0]), t.tensor([-1.0])),
    'kumaraswamy-concentration': lambda t, d: d.Kumaraswamy(t.tensor([1.0]), t.tensor([0.0])),
    'logisticnormal-scale': lambda t, d: d.LogisticNormal(t.zeros(2), -t.ones(2)),
    'fishersnedecor-df': lambda t, d: d.FisherSnedecor(t.tensor([1.0]), t.tensor([-1.0])),
    'genpareto-scale': lambda t, d: d.GeneralizedPareto(t.tensor([0.0]), t.tensor([-1.0]), t.tensor([0.5])),
    'contbernoulli-probs-checked': lambda t, d: d.ContinuousBernoulli(t.tensor([1.5]), validate_args=True),
    'contbernoulli-both': lambda t, d: d.ContinuousBernoulli(t.tensor([0.5]), t.tensor([0.5])),
    'broadcast-non-tensor': lambda t, d: d.Normal('a', 1.0),
}


@pytest.mark.parametrize('name', list(BAD_PARAMETERS))
def test_invalid_parameters(name):
    _both(BAD_PARAMETERS[name])


BAD_VALUES = {
    'normal-not-tensor': lambda t, d: d.Normal(t.zeros(2), t.ones(2)).log_prob(1.0),
    'normal-nan': lambda t, d: d.Normal(t.zeros(2), t.ones(2)).log_prob(t.tensor([0.0, float('nan')])),
    'normal-shape': lambda t, d: d.Normal(t.zeros(3), t.ones(3)).log_prob(t.zeros(2)),
    'normal-cdf': lambda t, d: d.Normal(t.zeros(2), t.ones(2)).cdf(t.tensor([0.0, float('nan')])),
    'bernoulli': lambda t, d: d.Bernoulli(t.tensor([0.3])).log_prob(t.tensor([0.5])),
    'bernoulli-2': lambda t, d: d.Bernoulli(t.tensor([0.3])).log_prob(t.tensor([2.0])),
    'categorical': lambda t, d: d.Categorical(t.ones(3)).log_prob(t.tensor([3])),
    'categorical-negative': lambda t, d: d.Categorical(t.ones(3)).log_prob(t.tensor(-1)),
    'categorical-fraction': lambda t, d: d.Categorical(t.ones(3)).log_prob(t.tensor(1.5)),
    'onehot': lambda t, d: d.OneHotCategorical(t.ones(3)).log_prob(t.tensor([1.0, 1.0, 0.0])),
    'onehot-event-shape': lambda t, d: d.OneHotCategorical(t.ones(3)).log_prob(t.tensor([1.0, 0.0])),
    'uniform': lambda t, d: d.Uniform(t.zeros(2), t.ones(2)).log_prob(t.tensor([0.5, 1.5])),
    'exponential': lambda t, d: d.Exponential(t.ones(2)).log_prob(t.tensor([-1.0, 1.0])),
    'gamma': lambda t, d: d.Gamma(t.ones(2), t.ones(2)).log_prob(t.tensor([-1.0, 1.0])),
    'poisson': lambda t, d: d.Poisson(t.ones(2)).log_prob(t.tensor([0.5, 1.0])),
    'binomial': lambda t, d: d.Binomial(3, t.tensor([0.5])).log_prob(t.tensor([4.0])),
    'multinomial': lambda t, d: d.Multinomial(3, t.ones(2)).log_prob(t.tensor([4.0, 0.0])),
    'beta': lambda t, d: d.Beta(t.ones(1), t.ones(1)).log_prob(t.tensor([1.5])),
    'dirichlet': lambda t, d: d.Dirichlet(t.ones(2)).log_prob(t.tensor([0.5, 0.6])),
    'geometric': lambda t, d: d.Geometric(t.tensor([0.5])).log_prob(t.tensor([-1.0])),
    'mvn-event': lambda t, d: d.MultivariateNormal(t.zeros(2), t.eye(2)).log_prob(t.zeros(3)),
    'mvn-batch': lambda t, d: d.MultivariateNormal(t.zeros(3, 2), t.eye(2)).log_prob(t.zeros(4, 2)),
    'lognormal': lambda t, d: d.LogNormal(t.zeros(1), t.ones(1)).log_prob(t.tensor([-1.0])),
    'relaxed-bernoulli': lambda t, d: d.RelaxedBernoulli(t.tensor(0.5), t.tensor([0.3])).log_prob(t.tensor([1.5])),
    'independent': lambda t, d: d.Independent(d.Normal(t.zeros(2), t.ones(2)), 1).log_prob(t.zeros(3)),
    'halfnormal': lambda t, d: d.HalfNormal(t.ones(1)).log_prob(t.tensor([-1.0])),
    'pareto': lambda t, d: d.Pareto(t.tensor([2.0]), t.ones(1)).log_prob(t.tensor([1.0])),
    'weibull': lambda t, d: d.Weibull(t.ones(1), t.ones(1)).log_prob(t.tensor([0.0])),
    'negbinomial': lambda t, d: d.NegativeBinomial(t.ones(1), t.tensor([0.5])).log_prob(t.tensor([0.5])),
    'inversegamma': lambda t, d: d.InverseGamma(t.ones(1), t.ones(1)).log_prob(t.tensor([-1.0])),
    'kumaraswamy': lambda t, d: d.Kumaraswamy(t.ones(1), t.ones(1)).log_prob(t.tensor([1.5])),
    'logisticnormal': lambda t, d: d.LogisticNormal(t.zeros(2), t.ones(2)).log_prob(t.tensor([0.5, 0.5, 0.5])),
    'fishersnedecor': lambda t, d: d.FisherSnedecor(t.ones(1), t.ones(1)).log_prob(t.tensor([-1.0])),
    'genpareto': lambda t, d: d.GeneralizedPareto(t.zeros(1), t.ones(1), t.tensor([-0.5])).log_prob(t.tensor([3.0])),
    'contbernoulli': lambda t, d: d.ContinuousBernoulli(t.tensor([0.3])).log_prob(t.tensor([1.5])),
    'mixture': lambda t, d: d.MixtureSameFamily(d.Categorical(t.ones(2)),
                                                d.Exponential(t.ones(2))).log_prob(t.tensor(-1.0)),
}


@pytest.mark.parametrize('name', list(BAD_VALUES))
def test_invalid_values(name):
    _both(BAD_VALUES[name])


def test_validation_is_on_by_default_and_can_be_turned_off():
    assert D.Distribution._validate_args is torch.distributions.Distribution._validate_args is True
    d = D.Normal(lg.zeros(1), lg.tensor([-1.0]), validate_args=False)
    assert np.isnan(d.log_prob(lg.zeros(1)).item())
    assert D.Bernoulli(lg.tensor([0.3]), validate_args=False).log_prob(lg.tensor([0.5])).shape == (1,)
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(lg.zeros(1), lg.tensor([-1.0]))
        assert not D.Normal(0.0, 1.0)._validate_args
        with pytest.raises(ValueError):
            D.Normal(lg.zeros(1), lg.tensor([-1.0]), validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args('yes')
    with pytest.raises(ValueError):
        D.Normal(lg.zeros(1), lg.tensor([-1.0]))


def _subclasses(d):
    class Shifted(d.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    class Bare(d.Distribution):
        def log_prob(self, value):
            return value
    return Shifted, Bare


def test_expand_of_a_subclass_with_its_own_init():
    _both(lambda t, d: _subclasses(d)[0](t.zeros(2)).expand((3, 2)))


def test_missing_arg_constraints_and_support_warn():
    with pytest.warns(UserWarning) as t_rec:
        _subclasses(torch.distributions)[1](validate_args=True)._validate_sample(torch.zeros(()))
    with pytest.warns(UserWarning) as l_rec:
        _subclasses(D)[1](validate_args=True)._validate_sample(lg.zeros(()))
    assert len(l_rec) == len(t_rec) == 2
    for a, b in zip(l_rec, t_rec):
        assert str(a.message).split('>', 1)[1] == str(b.message).split('>', 1)[1]


@pytest.mark.parametrize('method', ['mean', 'variance', 'entropy', 'cdf', 'icdf', 'rsample', 'enumerate_support',
                                    'mode'])
def test_base_class_raises_not_implemented(method):
    d_t = torch.distributions.Distribution(validate_args=False)
    d_l = D.Distribution(validate_args=False)

    def call(d, lib):
        attr = getattr(d, method) if method not in ('mean', 'variance', 'mode') else None
        if attr is None:
            return getattr(d, method)
        return attr(lib.zeros(1)) if method in ('cdf', 'icdf') else attr()
    _both(lambda t, d: call(d_l if t is lg else d_t, t))


def test_continuous_bernoulli_clamps_probs_unless_validation_was_asked_for():
    """Without an explicit validate_args, probs outside [0, 1] are clamped (no error), as
    PyTorch's constructor clamps them before the default validation sees them."""
    lg_probs = D.ContinuousBernoulli(lg.tensor([1.5, -0.5])).probs
    t_probs = torch.distributions.ContinuousBernoulli(torch.tensor([1.5, -0.5])).probs
    np.testing.assert_array_equal(lg_probs.numpy(), t_probs.numpy())
