"""Filling a tensor with random samples in place, from a ``generator`` (the default one when
None): ``random_``, ``bernoulli_``, ``exponential_``, ``geometric_``, ``log_normal_``,
``cauchy_``; and the methods ``Tensor.bernoulli`` and ``Tensor.multinomial``.

As in PyTorch, an overwritten tensor gets no gradient from its old value (each op records a
node, named as PyTorch names it, that passes zeros), a leaf that requires grad is refused, and
each distribution refuses the dtypes and parameters PyTorch refuses. The numbers come from
leafgrad's own stream (they differ from PyTorch's for the same seed).
"""
import math
import warnings

from .. import backend
from ._util import record, xp
from .inplace import FillBackward2, _type_name, inplace
from .shape import expand
from ..tensor import Tensor


class RandomBackward0(FillBackward2):
    """``random_(from, to)``: no gradient reaches the old value."""


class RandomBackward1(FillBackward2):
    """``random_(to)``."""


class RandomBackward2(FillBackward2):
    """``random_()``."""


class BernoulliBackward0(FillBackward2):
    """``bernoulli(input)``: the samples carry no gradient to the probabilities."""


class BernoulliBackward1(FillBackward2):
    """``bernoulli_(p tensor)``: no gradient to the old value or to ``p``."""

    def apply(self, grad):
        return grad * 0, None


class BernoulliBackward2(FillBackward2):
    """``bernoulli_(p number)``."""


class ExponentialBackward0(FillBackward2):
    pass


class GeometricBackward0(FillBackward2):
    pass


class LogNormalBackward0(FillBackward2):
    pass


class CauchyBackward0(FillBackward2):
    pass


def _g(number):
    """A number as PyTorch's C++ prints it in messages (``-1``, not ``-1.0``)."""
    return f'{number:g}' if isinstance(number, float) else number


def _rng(generator, op):
    from ..creation import _rng as stream
    return stream(generator, op)


def _fill_(self, node_cls, draw, others=()):
    """Overwrite ``self`` with ``draw(shape)`` (cast to self's dtype), recorded as ``node_cls``."""
    d = self._data.dtype
    return inplace(self, lambda s: record(xp.asarray(draw(s._data.shape)).astype(d, copy=False), node_cls,
                                          (s,) + others)[0], others)


# ---- random_: integers, uniformly ------------------------------------------------------------

_C_NAMES = {'uint8': 'unsigned char', 'int8': 'signed char', 'int16': 'short', 'int32': 'int', 'int64': 'long int',
            'bool': 'bool'}
_MANTISSA = {'float16': 11, 'float32': 24, 'float64': 53}


def _dtype_range(d):
    """The [low, high] random_() may draw for dtype ``d``: a float's exactly representable
    integers, an integer type's bounds."""
    if d.kind == 'f':
        digits = _MANTISSA.get(d.name, 8)
        return -2 ** digits, 2 ** digits
    if d.kind == 'b':
        return 0, 1
    info = xp.iinfo(d)
    return int(info.min), int(info.max)


def random_(self, *bounds, generator=None, **named):
    """Integers drawn uniformly: ``random_(from, to)`` from [from, to), ``random_(to)`` from
    [0, to), ``random_()`` from [0, the largest integer the dtype holds exactly]. ``from``
    being a Python keyword, it may also be passed by name (``**{'from': 2}``)."""
    if len(bounds) > 2:
        raise TypeError(f'random_() takes at most 2 positional arguments ({len(bounds)} given)')
    if 'from' in named:
        bounds = (named.pop('from'),) + bounds
    if 'to' in named:
        bounds = bounds + (named.pop('to'),)
    if named:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(named))}'")
    rng = _rng(generator, 'random_')
    d = self._data.dtype
    low, high = _dtype_range(d)
    if len(bounds) == 2 and bounds[1] is not None:
        start, stop, node_cls = int(bounds[0]), int(bounds[1]), RandomBackward0
    elif len(bounds) == 2:
        start, stop, node_cls = int(bounds[0]), high + 1, RandomBackward0
    elif len(bounds) == 1:
        start, stop, node_cls = 0, int(bounds[0]), RandomBackward1
    else:
        start, stop, node_cls = 0, high + 1, RandomBackward2
    if start >= stop:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={start} >= to={stop}")
    if d.kind == 'f':
        if not low <= stop - 1 <= high and len(bounds):
            name = {'float16': 'c10::Half', 'float32': 'float', 'float64': 'double'}.get(d.name, d.name)
            exp = _MANTISSA.get(d.name, 8)
            warnings.warn(f'to - 1 is out of bounds [-(2^{exp}), 2^{exp}]. Due to precision limitations {name} can '
                          'support discrete uniform distribution only within this range. This warning will become an '
                          'error in version 1.7 release, please fix the code in advance', UserWarning, stacklevel=2)
    else:
        if not low <= start <= high:
            raise RuntimeError(f'from is out of bounds for {_C_NAMES[d.name]}')
        if not low <= stop - 1 <= high:
            raise RuntimeError(f'to - 1 is out of bounds for {_C_NAMES[d.name]}')
    return _fill_(self, node_cls, lambda shape: rng.integers(start, stop - 1, shape, dtype=xp.int64, endpoint=True)
                  if stop - 1 < 2 ** 63 else rng.integers(start, stop - 1, shape, dtype=xp.uint64, endpoint=True))


# ---- Bernoulli -------------------------------------------------------------------------------

def bernoulli_(self, p=0.5, *, generator=None):
    """Each element becomes 1 with probability ``p`` (a number, or a tensor that broadcasts to
    this one's shape), else 0."""
    rng = _rng(generator, 'bernoulli_')
    if isinstance(p, Tensor):
        probs = expand(p, self._data.shape)._data
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError('Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error '
                               'message be improved?  If so, please report an enhancement request to PyTorch.)')
        return _fill_(self, BernoulliBackward1, lambda shape: rng.random(shape) < probs, (p,))
    if not 0 <= p <= 1:
        raise RuntimeError(f'bernoulli_ expects p to be in [0, 1], but got p={_g(p)}')
    return _fill_(self, BernoulliBackward2, lambda shape: rng.random(shape) < p)


def bernoulli(input, p=None, *, generator=None):
    """Samples 0 or 1 with the probabilities in ``input`` (or ``p`` for every element)."""
    rng = _rng(generator, 'bernoulli')
    d = input._data.dtype
    if p is not None:
        if not 0 <= p <= 1:
            raise RuntimeError(f'bernoulli_ expects p to be in [0, 1], but got p={_g(p)}')
        return record(xp.asarray(rng.random(input._data.shape) < p).astype(d), BernoulliBackward0, ())[0]
    if d.kind != 'f':
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_type_name(backend.from_np(d))}\'')
    probs = input._data
    if probs.size and not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError('Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message '
                           'be improved?  If so, please report an enhancement request to PyTorch.)')
    return record(xp.asarray(rng.random(probs.shape) < probs).astype(d), BernoulliBackward0, (input,))[0]


# ---- continuous distributions ----------------------------------------------------------------

def _continuous(self, what, ctype=False):
    d = self._data.dtype
    if d.kind != 'f':
        name = _C_NAMES[d.name] if ctype else _type_name(backend.from_np(d))
        raise RuntimeError(f'{what} distribution is a continuous probability distribution. dtype must be a floating '
                           f'point but you specified {name}')


def exponential_(self, lambd=1.0, *, generator=None):
    """Samples of the exponential distribution with rate ``lambd``."""
    rng = _rng(generator, 'exponential_')
    _continuous(self, 'Exponential')
    if not lambd > 0:
        raise RuntimeError(f'exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}')
    return _fill_(self, ExponentialBackward0, lambda shape: rng.exponential(1.0 / lambd, shape))


def geometric_(self, p, *, generator=None):
    """The number of Bernoulli(p) trials up to the first success (1, 2, …)."""
    rng = _rng(generator, 'geometric_')
    if self._data.dtype.kind == 'b':
        raise NotImplementedError('"geometric_cpu" not implemented for \'Bool\'')
    if not 0 < p < 1:
        raise RuntimeError(f'geometric_ expects p to be in (0, 1), but got p={_g(p)}')
    return _fill_(self, GeometricBackward0, lambda shape: rng.geometric(p, shape))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """exp of N(mean, std^2) samples."""
    rng = _rng(generator, 'log_normal_')
    d = self._data.dtype
    if d.kind != 'f':
        raise NotImplementedError(f'"log_normal_cpu" not implemented for \'{_type_name(backend.from_np(d))}\'')
    if not std > 0:
        raise RuntimeError(f'log_normal_ expects std > 0.0, but found std={_g(std)}')
    return _fill_(self, LogNormalBackward0, lambda shape: rng.lognormal(mean, std, shape))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Samples of the Cauchy distribution centred on ``median`` with scale ``sigma``."""
    rng = _rng(generator, 'cauchy_')
    _continuous(self, 'Cauchy', ctype=True)
    if not sigma > 0:
        raise RuntimeError(f'cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}')
    return _fill_(self, CauchyBackward0, lambda shape: median + sigma * xp.tan(math.pi * (rng.random(shape) - 0.5)))


def _multinomial(self, num_samples, replacement=False, *, generator=None):
    from ..creation import multinomial
    return multinomial(self, num_samples, replacement, generator=generator)


FUNCTIONS = ['bernoulli']
METHODS = {'random_': random_, 'bernoulli_': bernoulli_, 'exponential_': exponential_, 'geometric_': geometric_,
           'log_normal_': log_normal_, 'cauchy_': cauchy_, 'multinomial': _multinomial}
