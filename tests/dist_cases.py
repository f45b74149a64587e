"""Distributions and parameter sets that tests/test_distributions*.py run in leafgrad and torch.

A case is (id, class name, parameters, options). Parameters are NumPy arrays (made tensors that
require grad when floating), plain numbers, or ``Nested(class name, parameters)`` for a
distribution passed as an argument. Options:

``exact``  samples (and rsample's gradients) equal torch's bit for bit under the same seed
           ('ulp': within 64 units in the last place, as after a cancellation);
``rsample_grad_rtol``  tolerance of rsample's gradients (torch approximates those of gamma draws);
``float32_only``  torch's log_prob fails in float64 (no gradcheck);
``value``  a function (lib, torch distribution) -> the values to score, else torch's samples;
``atol``   tolerance of the value comparisons.
"""
import numpy as np

RNG = np.random.default_rng(20260)


def _u(*shape, low=0.2, high=2.0, dtype=np.float64):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def _n(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


def _simplex(*shape, dtype=np.float64):
    p = RNG.uniform(0.1, 1.0, size=shape)
    return (p / p.sum(-1, keepdims=True)).astype(dtype)


def _spd(*shape):
    a = RNG.normal(size=shape[:-1] + (shape[-1], shape[-1]))
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _tril(*shape):
    return np.linalg.cholesky(_spd(*shape))


class Nested:
    def __init__(self, name, params, **options):
        self.name, self.params, self.options = name, params, options


CASES = [
    ('normal-scalar', 'Normal', {'loc': 0.5, 'scale': 2.0}, {'exact': True}),
    ('normal-f64', 'Normal', {'loc': _n(3), 'scale': _u(3)}, {'exact': True}),
    ('normal-bcast', 'Normal', {'loc': _n(2, 1, dtype=np.float32), 'scale': _u(3, dtype=np.float32)}, {'exact': True}),
    ('normal-16', 'Normal', {'loc': _n(4, 5), 'scale': _u(4, 5)}, {'exact': True}),
    ('lognormal', 'LogNormal', {'loc': _n(3), 'scale': _u(3, high=1.0)}, {'exact': 'ulp'}),  # torch's exp is SLEEF's
    ('lognormal-f32', 'LogNormal', {'loc': _n(2, 3, dtype=np.float32), 'scale': _u(3, dtype=np.float32)},
     {'exact': 'ulp'}),
    ('uniform', 'Uniform', {'low': _n(3), 'high': _n(3) + 3.0}, {'exact': True}),
    ('uniform-f32', 'Uniform', {'low': _n(2, 3, dtype=np.float32), 'high': 4.0}, {'exact': True}),
    ('bernoulli-probs', 'Bernoulli', {'probs': _u(4, low=0.05, high=0.95)}, {'exact': True}),
    ('bernoulli-logits', 'Bernoulli', {'logits': _n(2, 3, dtype=np.float32)}, {'exact': True}),
    ('bernoulli-scalar', 'Bernoulli', {'probs': 0.3}, {'exact': True}),
    ('categorical-probs', 'Categorical', {'probs': _simplex(4)}, {'exact': True}),
    ('categorical-logits', 'Categorical', {'logits': _n(2, 3, 5, dtype=np.float32)}, {'exact': True}),
    ('categorical-logits64', 'Categorical', {'logits': _n(3, 4)}, {'exact': True}),
    ('onehot-probs', 'OneHotCategorical', {'probs': _simplex(3, 4)}, {'exact': True}),
    ('onehot-logits', 'OneHotCategorical', {'logits': _n(5, dtype=np.float32)}, {'exact': True}),
    ('onehot-straight-through', 'OneHotCategoricalStraightThrough', {'logits': _n(2, 4)}, {'exact': True}),
    ('binomial-probs', 'Binomial', {'total_count': 10, 'probs': _u(3, low=0.1, high=0.9)}, {}),
    ('binomial-logits', 'Binomial', {'total_count': np.array([3.0, 7.0, 20.0]), 'logits': _n(2, 3)}, {}),
    ('multinomial', 'Multinomial', {'total_count': 6, 'probs': _simplex(2, 4)}, {'exact': True}),
    ('multinomial-logits', 'Multinomial', {'total_count': 3, 'logits': _n(5, dtype=np.float32)}, {'exact': True}),
    ('poisson', 'Poisson', {'rate': _u(4, low=0.5, high=30.0)}, {}),
    ('exponential', 'Exponential', {'rate': _u(3)}, {'exact': True}),
    ('exponential-f32', 'Exponential', {'rate': _u(2, 2, dtype=np.float32)}, {'exact': True}),
    ('gamma', 'Gamma', {'concentration': _u(3, low=0.3, high=5.0), 'rate': _u(3)}, {'exact': True, 'rsample_grad_rtol': 5e-3}),
    ('chi2', 'Chi2', {'df': _u(3, low=1.0, high=6.0)}, {'exact': True, 'rsample_grad_rtol': 5e-3}),
    ('beta', 'Beta', {'concentration1': _u(3, low=0.5, high=4.0), 'concentration0': _u(3, low=0.5, high=4.0)},
     {'exact': True, 'rsample_grad_rtol': 5e-3}),
    ('gamma-f32', 'Gamma', {'concentration': np.array([0.2, 0.6, 1.0, 40.0], dtype=np.float32), 'rate': 2.0},
     {'exact': True, 'rsample_grad_rtol': 5e-3}),
    ('dirichlet', 'Dirichlet', {'concentration': _u(2, 4, low=0.5, high=4.0)}, {'exact': True, 'rsample_grad_rtol': 5e-3}),
    ('laplace', 'Laplace', {'loc': _n(3), 'scale': _u(3)}, {'exact': 'ulp'}),  # torch's log1p is SLEEF's
    ('cauchy', 'Cauchy', {'loc': _n(3), 'scale': _u(3)}, {'exact': True}),
    ('studentt', 'StudentT', {'df': _u(3, low=1.5, high=8.0), 'loc': _n(3), 'scale': _u(3)}, {'exact': True, 'rsample_grad_rtol': 5e-3}),
    ('geometric-probs', 'Geometric', {'probs': _u(3, low=0.1, high=0.9)}, {'exact': True}),
    ('geometric-logits', 'Geometric', {'logits': _n(3)}, {'exact': True}),
    ('gumbel', 'Gumbel', {'loc': _n(3), 'scale': _u(3)}, {'exact': 'ulp'}),
    ('halfnormal', 'HalfNormal', {'scale': _u(3)}, {'exact': True}),
    ('halfcauchy', 'HalfCauchy', {'scale': _u(2, 3, dtype=np.float32)}, {'exact': 'ulp'}),
    ('pareto', 'Pareto', {'scale': _u(3), 'alpha': _u(3, low=0.5, high=4.0)}, {'exact': 'ulp'}),
    ('weibull', 'Weibull', {'scale': _u(3), 'concentration': _u(3, low=0.5, high=4.0)}, {'exact': 'ulp'}),
    ('negbinomial', 'NegativeBinomial', {'total_count': np.array([2.0, 5.0, 0.5]), 'probs': _u(3, low=0.1, high=0.8)},
     {}),
    ('negbinomial-logits', 'NegativeBinomial', {'total_count': 3.0, 'logits': _n(3)}, {}),
    ('inversegamma', 'InverseGamma', {'concentration': _u(3, low=0.5, high=4.0), 'rate': _u(3)},
     {'exact': 'ulp', 'rsample_grad_rtol': 5e-3}),
    ('kumaraswamy', 'Kumaraswamy', {'concentration1': _u(3, low=0.5, high=3.0), 'concentration0': _u(3, low=0.5, high=3.0)},
     {'exact': 'ulp'}),
    ('logisticnormal', 'LogisticNormal', {'loc': _n(2, 3), 'scale': _u(2, 3)}, {'exact': 'ulp'}),
    ('fishersnedecor', 'FisherSnedecor', {'df1': _u(3, low=1.0, high=8.0), 'df2': _u(3, low=3.0, high=9.0)},
     {'exact': 'ulp', 'rsample_grad_rtol': 5e-3}),
    # (float32: torch's log_prob compares the concentration with a float32 zero, which fails for float64)
    ('genpareto', 'GeneralizedPareto', {'loc': _n(3, dtype=np.float32), 'scale': _u(3, dtype=np.float32),
                                        'concentration': np.array([0.3, 0.0, -0.4], dtype=np.float32)},
     {'exact': 'ulp', 'float32_only': True}),
    ('genpareto-scalar', 'GeneralizedPareto', {'loc': 0.5, 'scale': 2.0, 'concentration': 0.7},
     {'exact': 'ulp', 'atol': 1e-6}),
    ('contbernoulli', 'ContinuousBernoulli', {'probs': np.array([0.1, 0.4995, 0.7, 0.5])}, {'exact': 'ulp'}),
    # (float32 variance: its two terms cancel, the gradient keeps ~3 digits)
    ('contbernoulli-logits', 'ContinuousBernoulli', {'logits': _n(2, 3, dtype=np.float32)},
     {'exact': 'ulp', 'atol': 2e-4}),
    ('vonmises', 'VonMises', {'loc': _n(3), 'concentration': _u(3, low=0.5, high=8.0)}, {'exact': True}),
    ('vonmises-f32', 'VonMises', {'loc': _n(2, 3, dtype=np.float32), 'concentration': 0.01}, {'exact': True}),
    # (matrix products: NumPy's summation order is not torch's)
    ('mvn-cov', 'MultivariateNormal', {'loc': _n(2, 3), 'covariance_matrix': _spd(3)}, {'exact': 'ulp'}),
    ('mvn-prec', 'MultivariateNormal', {'loc': _n(3), 'precision_matrix': _spd(2, 3)}, {'exact': 'ulp'}),
    ('mvn-tril', 'MultivariateNormal', {'loc': _n(4), 'scale_tril': _tril(4)}, {'exact': 'ulp'}),
    ('lowrank-mvn', 'LowRankMultivariateNormal', {'loc': _n(2, 3), 'cov_factor': _n(3, 2), 'cov_diag': _u(3)},
     {'exact': 'ulp'}),
    ('independent', 'Independent', {'base_distribution': Nested('Normal', {'loc': _n(2, 3), 'scale': _u(2, 3)}),
                                    'reinterpreted_batch_ndims': 1}, {'exact': True}),
    ('mixture', 'MixtureSameFamily', {'mixture_distribution': Nested('Categorical', {'logits': _n(2, 3)}),
                                      'component_distribution': Nested('Normal', {'loc': _n(2, 3), 'scale': _u(2, 3)})},
     {'exact': True}),
    ('relaxed-bernoulli', 'RelaxedBernoulli', {'temperature': np.array(0.7), 'probs': _u(3, low=0.1, high=0.9)},
     {'exact': 'ulp'}),
    ('relaxed-onehot', 'RelaxedOneHotCategorical', {'temperature': np.array(1.3), 'logits': _n(2, 4)}, {'exact': 'ulp'}),
]
