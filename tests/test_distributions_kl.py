"""kl_divergence against torch's: every registered pair of the distributions leafgrad has, its
values (inf where q cannot cover p) and gradients with respect to both distributions'
parameters; the registry's dispatch, its errors and register_kl."""
import numpy as np
import pytest

from oracle import same_message
from dist_cases import Nested, _n, _simplex, _spd, _tril, _u
from test_distributions import build, compare

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
import leafgrad.distributions as D  # noqa: E402

P = {
    'Bernoulli': {'probs': _u(3, low=0.05, high=0.95)},
    'Beta': {'concentration1': _u(3, low=0.5, high=3.0), 'concentration0': _u(3, low=0.5, high=3.0)},
    'Binomial': {'total_count': np.array([5.0, 5.0, 5.0]), 'probs': _u(3, low=0.1, high=0.9)},
    'Categorical': {'logits': _n(3, 4)},
    'Cauchy': {'loc': _n(3), 'scale': _u(3)},
    'Dirichlet': {'concentration': _u(3, 4, low=0.5, high=3.0)},
    'Exponential': {'rate': _u(3)},
    'Gamma': {'concentration': _u(3, low=0.5, high=4.0), 'rate': _u(3)},
    'Geometric': {'probs': _u(3, low=0.1, high=0.9)},
    'Gumbel': {'loc': _n(3), 'scale': _u(3)},
    'Laplace': {'loc': _n(3), 'scale': _u(3)},
    'LogNormal': {'loc': _n(3), 'scale': _u(3)},
    'Normal': {'loc': _n(3), 'scale': _u(3)},
    'OneHotCategorical': {'probs': _simplex(3, 4)},
    'Poisson': {'rate': _u(3, low=0.5, high=5.0)},
    'Uniform': {'low': _u(3, low=0.05, high=0.3), 'high': _u(3, low=0.6, high=0.95)},
    'MultivariateNormal': {'loc': _n(3, 4), 'scale_tril': _tril(4)},
    'LowRankMultivariateNormal': {'loc': _n(3, 4), 'cov_factor': _n(4, 2), 'cov_diag': _u(4)},
    'Independent': {'base_distribution': Nested('Normal', {'loc': _n(3, 2), 'scale': _u(3, 2)}),
                    'reinterpreted_batch_ndims': 1},
    'Chi2': {'df': _u(3, low=1.0, high=5.0)},
    'HalfNormal': {'scale': _u(3)},
    'ContinuousBernoulli': {'probs': np.array([0.2, 0.4999, 0.8])},
    'Pareto': {'scale': np.array([0.5, 1.0, 2.0]), 'alpha': np.array([0.8, 1.5, 3.0])},  # alpha <= 1, 2: inf
}
Q = {name: {k: (v if isinstance(v, Nested) or k in ('total_count', 'reinterpreted_batch_ndims') else
                (_u(*v.shape, low=0.5, high=3.0) if v.min() > 0 else _n(*v.shape)))
            for k, v in params.items()} for name, params in P.items()}
Q['Bernoulli'] = {'logits': _n(3)}
Q['Geometric'] = {'probs': _u(3, low=0.1, high=0.9)}
Q['Categorical'] = {'probs': _simplex(3, 4)}
Q['OneHotCategorical'] = {'logits': _n(3, 4)}
Q['Binomial'] = {'total_count': np.array([5.0, 3.0, 5.0]), 'logits': _n(3)}  # 5 > 3: inf
Q['Uniform'] = {'low': np.array([0.0, 0.1, -1.0]), 'high': np.array([1.0, 0.7, 2.0])}  # one does not cover p
Q['Independent'] = {'base_distribution': Nested('Normal', {'loc': _n(3, 2), 'scale': _u(3, 2)}),
                    'reinterpreted_batch_ndims': 1}
Q['MultivariateNormal'] = {'loc': _n(4), 'covariance_matrix': _spd(3, 4)}
Q['ContinuousBernoulli'] = {'logits': _n(3)}
Q['Pareto'] = {'scale': np.array([0.4, 1.5, 1.0]), 'alpha': _u(3)}
Q['LowRankMultivariateNormal'] = {'loc': _n(4), 'cov_factor': _n(3, 4, 1), 'cov_diag': _u(3, 4)}

PAIRS = [(p, p) for p in P] + [
    ('Bernoulli', 'Poisson'), ('Beta', 'Exponential'), ('Beta', 'Gamma'), ('Beta', 'Normal'), ('Beta', 'Uniform'),
    ('Exponential', 'Beta'), ('Exponential', 'Uniform'), ('Exponential', 'Gamma'), ('Exponential', 'Gumbel'),
    ('Exponential', 'Normal'), ('Gamma', 'Beta'), ('Gamma', 'Uniform'), ('Gamma', 'Exponential'),
    ('Gamma', 'Gumbel'), ('Gamma', 'Normal'), ('Gumbel', 'Beta'), ('Gumbel', 'Exponential'), ('Gumbel', 'Gamma'),
    ('Gumbel', 'Uniform'), ('Gumbel', 'Normal'), ('Laplace', 'Beta'), ('Laplace', 'Exponential'),
    ('Laplace', 'Gamma'), ('Laplace', 'Uniform'), ('Laplace', 'Normal'), ('Normal', 'Beta'),
    ('Normal', 'Exponential'), ('Normal', 'Gamma'), ('Normal', 'Uniform'), ('Normal', 'Gumbel'),
    ('Normal', 'Laplace'), ('Poisson', 'Bernoulli'), ('Poisson', 'Binomial'), ('Uniform', 'Beta'),
    ('Uniform', 'Exponential'), ('Uniform', 'Gamma'), ('Uniform', 'Gumbel'), ('Uniform', 'Normal'),
    ('MultivariateNormal', 'LowRankMultivariateNormal'), ('LowRankMultivariateNormal', 'MultivariateNormal'),
    ('Chi2', 'Gamma'), ('Gamma', 'Chi2'), ('Chi2', 'Exponential'),
    ('Beta', 'Pareto'), ('Exponential', 'Pareto'), ('Gamma', 'Pareto'), ('Gumbel', 'Pareto'), ('Laplace', 'Pareto'),
    ('Normal', 'Pareto'), ('Pareto', 'Beta'), ('Pareto', 'Uniform'), ('Pareto', 'Exponential'), ('Pareto', 'Gamma'),
    ('Pareto', 'Normal'), ('Uniform', 'Pareto'),
    ('Beta', 'ContinuousBernoulli'), ('ContinuousBernoulli', 'Pareto'), ('ContinuousBernoulli', 'Exponential'),
    ('ContinuousBernoulli', 'Normal'), ('ContinuousBernoulli', 'Uniform'), ('Exponential', 'ContinuousBernoulli'),
    ('Gamma', 'ContinuousBernoulli'), ('Gumbel', 'ContinuousBernoulli'), ('Laplace', 'ContinuousBernoulli'),
    ('Normal', 'ContinuousBernoulli'), ('Pareto', 'ContinuousBernoulli'), ('Uniform', 'ContinuousBernoulli'),
]


def _pair(lib, p_name, q_name):
    p, p_leaves = build(lib, p_name, P[p_name])
    q, q_leaves = build(lib, q_name, Q[q_name])
    return p, q, p_leaves + q_leaves


@pytest.mark.parametrize('p_name,q_name', PAIRS, ids=[f'{p}-{q}' for p, q in PAIRS])
def test_kl_divergence(p_name, q_name):
    p_lg, q_lg, leaves_lg = _pair(lg, p_name, q_name)
    p_t, q_t, leaves_t = _pair(torch, p_name, q_name)
    compare(D.kl_divergence(p_lg, q_lg), torch.distributions.kl_divergence(p_t, q_t), leaves_lg, leaves_t,
            atol=1e-9, rtol=1e-7)


def _raises_like(fn_lg, fn_torch):
    with pytest.raises(Exception) as t_info:
        fn_torch()
    with pytest.raises(type(t_info.value)) as info:
        fn_lg()
    assert same_message(str(info.value), str(t_info.value)), (str(info.value), str(t_info.value))


@pytest.mark.parametrize('p_name,q_name', [('Normal', 'Poisson'), ('Categorical', 'Normal'), ('Cauchy', 'Normal'),
                                           ('Bernoulli', 'Gamma'), ('Poisson', 'Exponential'),
                                           ('Binomial', 'Binomial-more')])
def test_kl_not_implemented(p_name, q_name):
    """No registered pair; exponential families of different types; q with more trials."""
    if q_name == 'Binomial-more':
        _raises_like(lambda: D.kl_divergence(D.Binomial(2, lg.tensor(0.5)), D.Binomial(3, lg.tensor(0.5))),
                     lambda: torch.distributions.kl_divergence(torch.distributions.Binomial(2, torch.tensor(0.5)),
                                                               torch.distributions.Binomial(3, torch.tensor(0.5))))
        return
    p_lg, q_lg, _ = _pair(lg, p_name, q_name)
    p_t, q_t, _ = _pair(torch, p_name, q_name)
    _raises_like(lambda: D.kl_divergence(p_lg, q_lg), lambda: torch.distributions.kl_divergence(p_t, q_t))


def test_kl_event_shape_mismatch():
    _raises_like(lambda: D.kl_divergence(D.MultivariateNormal(lg.zeros(2), lg.eye(2)),
                                         D.MultivariateNormal(lg.zeros(3), lg.eye(3))),
                 lambda: torch.distributions.kl_divergence(torch.distributions.MultivariateNormal(torch.zeros(2),
                                                                                                  torch.eye(2)),
                                                           torch.distributions.MultivariateNormal(torch.zeros(3),
                                                                                                  torch.eye(3))))


def test_register_kl_most_specific_and_ambiguous():
    class MyNormal(D.Normal):
        pass

    class MyLaplace(D.Laplace):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return lg.tensor(123.0)
    try:
        assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 123.0
        assert D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 123.0
        assert D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(0.0, 1.0)).item() == 0.0  # Normal, Normal
        D.register_kl(D.Normal, MyLaplace)(lambda p, q: lg.tensor(7.0))
        with pytest.warns(RuntimeWarning, match=r'Ambiguous kl_divergence\(MyNormal, MyLaplace\). Please '
                                                r'register_kl\(MyNormal, MyLaplace\)'):
            D.register_kl(MyNormal, D.Laplace)(lambda p, q: lg.tensor(8.0))
            D.kl_divergence(MyNormal(0.0, 1.0), MyLaplace(0.0, 1.0))
    finally:
        for key in [k for k in D.kl._KL_REGISTRY if MyNormal in k or MyLaplace in k]:
            del D.kl._KL_REGISTRY[key]
        D.kl._KL_MEMOIZE.clear()


def test_kl_docstring_lists_pairs():
    assert '* :class:`~leafgrad.distributions.Normal` and :class:`~leafgrad.distributions.Normal`' in \
        D.kl_divergence.__doc__
    assert len(D.kl._KL_REGISTRY) == len(torch.distributions.kl._KL_REGISTRY) == 87


def test_kl_lazy_import():
    """leafgrad.distributions is not imported by `import leafgrad`."""
    import subprocess
    import sys
    code = 'import sys, leafgrad; print("leafgrad.distributions" in sys.modules); leafgrad.distributions; ' \
           'print("leafgrad.distributions" in sys.modules)'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ['False', 'True']
