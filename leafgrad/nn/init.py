"""Weight initialisation: PyTorch's formulas, drawing through the same tensor methods in the same
order (``tensor.uniform_``, ``tensor.normal_`` ...), so that a seeded model starts from PyTorch's
weights."""
import math
import warnings

import numpy as _np

from .. import linalg as _linalg
from ..autograd.grad_mode import no_grad
from ..creation import empty_like as _empty_like, randperm as _randperm
from ..ops import diag as _diag, where as _where


def calculate_gain(nonlinearity, param=None):
    linear = ('linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d')
    if nonlinearity in linear or nonlinearity == 'sigmoid':
        return 1
    if nonlinearity == 'tanh':
        return 5.0 / 3
    if nonlinearity == 'relu':
        return math.sqrt(2.0)
    if nonlinearity == 'leaky_relu':
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f'negative_slope {param} not a valid number')
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == 'selu':
        return 3.0 / 4
    raise ValueError(f'Unsupported nonlinearity {nonlinearity}')


def _calculate_fan_in_and_fan_out(tensor):
    dim = tensor.dim()
    if dim < 2:
        raise ValueError('Fan in and fan out can not be computed for tensor with fewer than 2 dimensions')
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fill(tensor, sample):
    """Write sample(shape) into the tensor's array in place (as PyTorch's init runs under no_grad)."""
    with no_grad():
        tensor._data[...] = sample(tensor._data.shape)
        tensor._bump_version()
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) restricted to [a, b], drawn as PyTorch draws it: when [a, b] holds more
    than 30% of the mass, normal samples with the rejected ones redrawn (a whole new tensor of
    samples per round); otherwise uniform candidates on [a, b] accepted where log(U) is below
    their log density relative to the mode's."""

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn('mean is more than 2 std from [a, b] in nn.init.trunc_normal_. '
                      'The distribution of values may be incorrect.', stacklevel=2)
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            lo = tensor.new_tensor(a, device='cpu').item()
            hi = tensor.new_tensor(b, device='cpu').item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = _where(mask, _empty_like(result).normal_(mean, std, generator=generator), result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = _empty_like(tensor)
        accept_buf = _empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = _where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                pending = _where(pending, accept_buf.uniform_(generator=generator).log_().gt(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    with no_grad():  # (PyTorch's _no_grad_fill_: fill_'s checks and errors)
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError('Only tensors with 2 dimensions are supported')
    return _fill(tensor, lambda s: _np.eye(*s))


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ['fan_in', 'fan_out']
    if mode not in valid_modes:
        raise ValueError(f'Mode {mode} not supported, please use one of {valid_modes}')
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == 'fan_in' else fan_out


_fan = _calculate_correct_fan


def _zero_element(tensor):
    if 0 in tuple(tensor.shape):
        warnings.warn('Initializing zero-element tensors is a no-op', stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    if _zero_element(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None):
    if _zero_element(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0, std, generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std  # (the bound as PyTorch rounds it)
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one, signs fixed by
    diag(R), as PyTorch builds it; extra dimensions are flattened into columns."""
    if tensor.dim() < 2:
        raise ValueError('Only tensors with 2 or more dimensions are supported')
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened.t_()
    q, r = _linalg.qr(flattened)
    q *= _diag(r, 0).sign()
    if rows < cols:
        q.t_()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std) with ceil(sparsity * rows) zeros in each column (the rows to zero drawn from the
    default generator, as PyTorch draws them)."""
    if tensor.dim() != 2:
        raise ValueError('Only tensors with 2 dimensions are supported')
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            row_indices = _randperm(rows)
            zero_indices = row_indices[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


def dirac_(tensor, groups=1):
    """The identity for convolutions: each output channel passes its input channel through."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError('Only tensors with 3, 4, or 5 dimensions are supported')
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError('dim 0 must be divisible by groups')
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])

    def sample(shape):
        out = _np.zeros(shape)
        centre = tuple(s // 2 for s in shape[2:])
        for g in range(groups):
            for d in range(min_dim):
                out[(g * out_per_group + d, d) + centre] = 1
        return out
    return _fill(tensor, sample)


def _deprecated(new):
    """PyTorch's old name of an initializer (``uniform`` for ``uniform_``): the same function,
    with its FutureWarning."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f'`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.', FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f'{old}(...): deprecated; ``{new.__name__}`` without the warning.'
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
