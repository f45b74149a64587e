"""LKJCholesky(dim, concentration): lower Cholesky factors of random correlation matrices."""
import math

from .. import creation, ops
from .._type_info import finfo
from ..tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ['LKJCholesky']


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of correlation matrices: the
    correlation matrix ``L L^T`` has density proportional to ``det(L L^T) ** (concentration - 1)``,
    uniform when ``concentration`` is 1. Samples come from the onion method (Lewandowski,
    Kurowicka and Joe 2009, section 3), drawn as PyTorch draws them: a Beta sample per row, then
    standard normals for the directions, so a seeded generator gives PyTorch's samples.

    >>> LKJCholesky(2).sample().shape
    leafgrad.Size([2, 2])
    """
    arg_constraints = {'concentration': constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f'Expected dim to be an integer greater than or equal to 2. Found dim={dim}.')
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # row i's squared off-diagonal norm is Beta(i / 2, concentration + (dim - 2 - i) / 2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = creation.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = ops.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        return self._expanded(LKJCholesky, new, batch_shape, dim=self.dim,
                              concentration=self.concentration.expand(batch_shape),
                              _beta=self._beta.expand(batch_shape + (self.dim,)))

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = creation.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        # (the first row's 0/0 directions are NaN: it is the unit vector e_1)
        u_hypersphere[..., 0, :].fill_(0.0)
        w = ops.sqrt(y) * u_hypersphere
        eps = finfo(w.dtype).tiny
        diag_elems = ops.clamp(1 - ops.sum(w ** 2, dim=-1), min=eps).sqrt()
        w += ops.diag_embed(diag_elems)
        return w

    def log_prob(self, value):
        # (Lewandowski et al.'s density of the correlation matrix, carried to its Cholesky factor
        # by the Jacobian prod_i L_ii^(dim - i))
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = creation.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = ops.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ops.lgamma(alpha) * dm1
        numerator = ops.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
