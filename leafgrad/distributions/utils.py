"""Helpers the distributions share: broadcasting parameters, probabilities and logits,
``lazy_property``, and the packing of lower-triangular matrices into vectors."""
import math
from functools import update_wrapper
from numbers import Number

from .. import backend, creation, ops
from .._type_info import finfo
from ..autograd.grad_mode import enable_grad
from ..nn import functional as F
from ..tensor import Size, Tensor

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant

__all__ = ['broadcast_all', 'logits_to_probs', 'clamp_probs', 'probs_to_logits', 'lazy_property',
           'tril_matrix_to_vec', 'vec_to_tril_matrix']


def _is_number(value):
    return isinstance(value, Number) and not isinstance(value, Tensor)


def broadcast_all(*values):
    """The values broadcast to one shape, numbers made tensors of the first tensor's dtype (of the
    default dtype if there is none).

    >>> loc, scale = broadcast_all(leafgrad.zeros(2, 1), 1.0)
    >>> scale.shape
    leafgrad.Size([2, 1])
    """
    if not all(isinstance(v, Tensor) or _is_number(v) for v in values):
        raise ValueError('Input arguments must all be instances of Number, leafgrad.Tensor or objects implementing '
                         '__torch_function__.')
    if not all(isinstance(v, Tensor) for v in values):
        like = next((v for v in values if isinstance(v, Tensor)), None)
        dtype = like.dtype if like is not None else backend.get_default_dtype()
        values = [v if isinstance(v, Tensor) else creation.tensor(v, dtype=dtype) for v in values]
    return ops.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    """N(0, 1) noise of ``shape``, drawn as PyTorch draws it (``empty(shape).normal_()``)."""
    return creation.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid of log-odds (``is_binary``), else softmax over the last
    dimension."""
    if is_binary:
        return ops.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities clamped into [eps, 1 - eps], eps the dtype's machine epsilon."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped first): log-odds (``is_binary``), else log
    probabilities."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ops.log(clamped) - ops.log1p(-clamped)
    return ops.log(clamped)


class lazy_property:
    """A property computed (with grad mode on) on first access and then stored on the instance,
    replacing itself: a distribution's probs made from its logits, its Cholesky factor made from
    its covariance, computed once."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class itself holds: a lazy_property (argument validation skips those not yet
    computed) that documentation tools take for a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag):
    rows = creation.arange(n).view(-1, 1)
    return creation.arange(n) < rows + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries on and below diagonal ``diag`` of (a batch of) square matrices, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f'diag ({diag}) provided is outside [{-n}, {n - 1}].')
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: (a batch of) lower-triangular matrices."""
    # the n with n(n+1)/2 + diag terms = the vector's length
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f'The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower '
                         'triangular part of a square D x D matrix.')
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + Size((n, n)))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


_LOG_2 = math.log(2)


def _batch_shape(params, given):
    """The batch shape of a distribution built from ``given`` (the arguments as passed) once
    broadcast into ``params``: () when every argument was a number."""
    if all(_is_number(g) for g in given):
        return Size()
    return params[0].size()


def _check_probs_or_logits(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError('Either `probs` or `logits` must be specified, but not both.')
