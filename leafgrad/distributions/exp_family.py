"""ExponentialFamily: distributions whose density is exp(<t(x), theta> - F(theta) + k(x)); the
entropy and the KL divergence between two members of one family follow from the log normalizer
F by automatic differentiation (Bregman divergences)."""
from .. import autograd
from .distribution import Distribution

__all__ = ['ExponentialFamily']


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params`` (theta), ``_log_normalizer(*theta)`` (F) and
    ``_mean_carrier_measure`` (E[k(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = autograd.grad(log_normalizer.sum(), params, create_graph=True)
        result = result + log_normalizer
        for p, g in zip(params, gradients):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
