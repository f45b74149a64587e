"""Dirichlet(concentration): distributions over the simplex."""
from .. import ops
from ..nn import functional as F
from ..tensor import Size
from leafgrad.autograd.function import Function, once_differentiable
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ['Dirichlet']


class _Dirichlet(Function):
    """A Dirichlet sample, differentiable in the concentration: each coordinate x_i moves as its
    Beta(alpha_i, total - alpha_i) marginal's implicit reparametrisation gradient says, and the
    coordinates together stay on the simplex."""

    @staticmethod
    def forward(ctx, concentration):
        x = ops._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        grad = ops._dirichlet_grad(x, concentration, total)
        return grad * (grad_output - (x * grad_output).sum(-1, True))


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with concentrations along the last dimension of
    ``concentration``."""
    arg_constraints = {'concentration': constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError('`concentration` parameter must be at least one-dimensional.')
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        return self._expanded(Dirichlet, new, batch_shape,
                              concentration=self.concentration.expand(Size(batch_shape) + self.event_shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (ops.xlogy(self.concentration - 1.0, value).sum(-1) + ops.lgamma(self.concentration.sum(-1))
                - ops.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentration_m1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentration_m1 / concentration_m1.sum(-1, True)
        # all concentrations below 1: the density peaks at a vertex
        below_one = (self.concentration < 1).all(dim=-1)
        mode[below_one] = F.one_hot(mode[below_one].argmax(dim=-1), concentration_m1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (ops.lgamma(self.concentration).sum(-1) - ops.lgamma(a0) - (k - a0) * ops.digamma(a0)
                - ((self.concentration - 1.0) * ops.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ops.lgamma(x.sum(-1))
