"""Gradient clipping, computed on the gradients' arrays and applied in place (as PyTorch does,
outside autograd)."""
import math
import warnings

from ...ops._util import xp  # (NumPy, or CuPy's dispatcher once a GPU is in use)
from ...tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def _norm(array, norm_type):
    a = xp.abs(array.reshape(-1))
    if norm_type == math.inf:
        return a.max() if a.size else xp.zeros((), a.dtype)
    if norm_type == -math.inf:
        return a.min() if a.size else xp.zeros((), a.dtype)
    if norm_type == 0:
        return xp.asarray((a != 0).sum(), dtype=a.dtype)
    if norm_type == 2:
        return xp.sqrt(xp.dot(a, a)).astype(a.dtype)
    return (a ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of ``tensors`` (a tensor of the first tensor's dtype)."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._wrap(xp.asarray(0.0, dtype=xp.float32))
    norms = xp.stack([_norm(t._data, norm_type) for t in tensors]).astype(tensors[0]._data.dtype)
    total = xp.asarray(_norm(norms, norm_type), dtype=norms.dtype)
    if error_if_nonfinite and not xp.isfinite(total):
        raise RuntimeError(f'The total norm of order {norm_type} for gradients from `parameters` is non-finite, so '
                           'it cannot be clipped. To disable this error and scale the gradients by the non-finite '
                           'norm anyway, set `error_if_nonfinite=False`')
    return Tensor._wrap(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if not grads:
        return
    coef = float(max_norm) / (total_norm._data + 1e-6)
    coef = xp.minimum(coef, 1.0).astype(total_norm._data.dtype)
    for g in grads:
        g._data *= coef.astype(g._data.dtype)
        g._version_counter[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients in place so that their total norm is at most ``max_norm``; returns the
    total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn('`torch.nn.utils.clip_grad_norm` is now deprecated in favor of '
                  '`torch.nn.utils.clip_grad_norm_`.', FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        xp.clip(g._data, -clip_value, clip_value, out=g._data)
        g._version_counter[0] += 1
