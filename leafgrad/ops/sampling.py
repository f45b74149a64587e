"""Filling a tensor with random samples in place, from a ``generator`` (the default one when
None): ``random_``, ``bernoulli_``, ``exponential_``, ``geometric_``, ``log_normal_``,
``cauchy_``; and the methods ``Tensor.bernoulli`` and ``Tensor.multinomial``.

As in PyTorch, an overwritten tensor gets no gradient from its old value (each op records a
node, named as PyTorch names it, that passes zeros), a leaf that requires grad is refused, and
each distribution refuses the dtypes and parameters PyTorch refuses. The numbers are PyTorch's
for the same generator state: its kernels (``_random_kernels.py``) on its stream, written in the
order PyTorch writes them (memory order, for a transposed tensor too). Each op is declared
once (``_op.Op``); all are Tensor methods only but ``bernoulli`` (also ``torch.bernoulli``,
with ``out=``).
"""
import warnings

from .. import _random_kernels as kernels, backend
from ..generator import generator_of
from ._inplace import inplace
from ._op import Op, check_out
from ._util import SCALAR_NAMES, ops, record, wrap, xp
from ..tensor import Tensor
from .._arg_parser import Overloads


class _Overwritten(Op):
    """The node of a tensor overwritten with samples: no gradient reaches the old value
    (zeros_like(grad), as PyTorch)."""
    __slots__ = ()

    def apply(self, grad):
        return wrap(xp.zeros_like(grad._data)),


def _g(number):
    """A number as PyTorch's C++ prints it in messages (``-1``, not ``-1.0``)."""
    return f'{number:g}' if isinstance(number, float) else number


def _fill_(self, node_cls, sample, others=(), on_gpu=None):
    """Overwrite ``self`` with ``sample(n)`` (its n elements in the order PyTorch's kernel
    writes them: memory order), cast to self's dtype, recorded as ``node_cls``. A GPU's tensor:
    ``on_gpu(random_state, shape)`` draws there with CuPy's generator when given (else the host's
    draws are copied to it)."""
    target = self._data  # (inplace hands op a contiguous copy when it records: read the layout here)
    d = target.dtype

    def op(s):
        if on_gpu is not None and backend.on_gpu(target):
            with target.device:
                values = on_gpu(backend.array_module(target).random.get_random_state(), target.shape)
            return record(values.astype(d), node_cls, (s,) + others)[0]
        values = kernels.fill_in_memory_order(target, kernels.cast(sample(target.size), d))
        return record(xp.asarray(values, like=target), node_cls, (s,) + others)[0]
    return inplace(self, op, others)


def _gpu_bernoulli(probs):
    """Draws of 1 with probability ``probs`` (a number, or an array on the GPU) by CuPy's
    generator: a uniform below ``probs``."""
    return lambda random_state, shape: random_state.random_sample(shape, dtype=xp.float64) < probs


# ---- random_: integers, uniformly ------------------------------------------------------------

_C_NAMES = {'uint8': 'unsigned char', 'int8': 'signed char', 'int16': 'short', 'int32': 'int', 'int64': 'long int',
            'bool': 'bool', 'float16': 'c10::Half', 'bfloat16': 'c10::BFloat16', 'float32': 'float',
            'float64': 'double'}
_MANTISSA = {'float16': 11, 'bfloat16': 8, 'float32': 24, 'float64': 53}
_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _round_to_digits(value, digits):
    """The integer ``value`` rounded to ``digits`` significant bits, ties to even (as a cast of
    an int64 to a floating type rounds it)."""
    shift = abs(value).bit_length() - digits
    if shift <= 0:
        return value
    q, r = divmod(abs(value), 1 << shift)
    if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
        q += 1
    return (q << shift) * (1 if value > 0 else -1)


def _dtype_bounds(d):
    """[lowest, max] of dtype ``d``, and its mantissa width for floating types (else None)."""
    digits = _MANTISSA.get(d.name)
    if digits is not None:
        info = backend.numpy.finfo(d)
        return float(info.min), float(info.max), digits
    if d.kind == 'b':
        return 0, 1, None
    info = backend.numpy.iinfo(d)
    return int(info.min), int(info.max), None


def _check_in_range(d, start, last):
    """PyTorch's check_from_to_in_range: an error outside the dtype, a warning outside the
    integers a floating type holds exactly."""
    lowest, highest, digits = _dtype_bounds(d)
    for value, name in ((start, 'from'), (last, 'to - 1')):
        if not lowest <= value <= highest:
            raise RuntimeError(f'{name} is out of bounds for {_C_NAMES[d.name]}')
    if digits is not None:
        for value, name in ((start, 'from'), (last, 'to - 1')):
            if not -2 ** digits <= value <= 2 ** digits:
                warnings.warn(f'{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations '
                              f'{_C_NAMES[d.name]} can support discrete uniform distribution only within this range. '
                              'This warning will become an error in version 1.7 release, please fix the code in '
                              'advance', UserWarning, stacklevel=4)


def random_values(d, bounds, g):
    """``random_(*bounds)`` for a tensor of NumPy dtype ``d``: checks PyTorch's bounds (errors and
    warnings as it gives them) and returns the sampler n -> n values in kernel order. ``bounds``
    is (), (to,), (from, to) or (from, None)."""
    if not bounds:
        return lambda n: kernels.random_bits(g, n, d)
    start, stop = (0, bounds[0]) if len(bounds) == 1 else bounds
    digits = _MANTISSA.get(d.name)
    if stop is not None:
        if start >= stop:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={start} >= to={stop}")
        if digits is not None:  # the bounds as the floating type holds them
            lifted = _round_to_digits(start + 1, digits)
            if lifted < start:
                start = lifted + (1 << ((abs(start + 1).bit_length() - 1) - digits + 1))
            lowered = _round_to_digits(stop - 1, digits)
            if lowered >= stop:
                stop = lowered - (1 << ((abs(stop - 1).bit_length() - 1) - digits + 1))
            if start >= stop:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
                                   f'got from={start} >= to={stop}')
        _check_in_range(d, start, stop - 1)
        return lambda n: kernels.random_from_to(g, n, d, stop - start, start)
    if start == _INT64_MIN:  # [-2**63, 2**63): every 64-bit value
        if d.name not in ('int64', 'float64', 'float32', 'bfloat16'):
            raise RuntimeError('random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16')
        return lambda n: kernels.random_full_range(g, n, d)
    if digits is not None:
        last = min(2 ** digits, _INT64_MAX)
        lifted = _round_to_digits(start + 1, digits)
        if lifted < start:
            start = lifted + (1 << ((abs(start + 1).bit_length() - 1) - digits + 1))
        if start >= last:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
                               f'dtype, but got from={start} > to_inc={last}')
    else:
        last = _dtype_bounds(d)[1]
    _check_in_range(d, start, last)
    return lambda n: kernels.random_from_to(g, n, d, last - start + 1, start)


class Random(_Overwritten):
    """Tensor.random_(from=0, to=None, *, generator=None): integers drawn uniformly:
    ``random_(from, to)`` from [from, to) (RandomBackward0), ``random_(to)`` from [0, to)
    (RandomBackward1), ``random_()`` from [0, the largest integer the dtype holds exactly]
    (RandomBackward2), ``random_(from, None)`` from [from, that largest integer]. ``from``
    being a Python keyword, it may also be passed by name (``**{'from': 2}``)."""
    op, node, function = 'random_', 'RandomBackward2', False
    overloads = Overloads('random_', '(Tensor input, *, leafgrad.Generator? generator = None)',
                          '(Tensor input, int from, int? to, *, leafgrad.Generator? generator = None)',
                          '(Tensor input, int to, *, leafgrad.Generator? generator = None)')
    __slots__ = ()

    def forward(self, *bounds, generator=None, **named):
        if len(bounds) > 2:
            raise TypeError(f'random_() takes at most 2 positional arguments ({len(bounds)} given)')
        if 'from' in named:
            bounds = (named.pop('from'),) + bounds
        if 'to' in named:
            bounds = bounds + (named.pop('to'),)
        if named:
            raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(named))}'")
        g = generator_of(generator, 'random_')
        bounds = tuple(None if b is None else int(b) for b in bounds)
        node_cls = (Random, RandomBackward1, RandomBackward0)[len(bounds)]
        sample = random_values(self._data.dtype, bounds, g)
        return _fill_(self, node_cls, sample)


class RandomBackward1(_Overwritten):
    """``random_(to)``."""
    node = 'RandomBackward1'
    __slots__ = ()


class RandomBackward0(_Overwritten):
    """``random_(from, to)``."""
    node = 'RandomBackward0'
    __slots__ = ()


# ---- Bernoulli -------------------------------------------------------------------------------

def _check_probabilities(probs):
    if probs.size and not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError('Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error '
                           'message be improved?  If so, please report an enhancement request to PyTorch.)')


class Bernoulli(_Overwritten):
    """bernoulli(input, *, generator=None, out=None): samples 0 or 1 with the probabilities in
    ``input`` (bernoulli(input, p, *, generator=None): ``p`` for every element, no ``out=``),
    BernoulliBackward0 (no gradient to the probabilities); ``Tensor.bernoulli_(p=0.5, *,
    generator=None)`` in place."""
    op, node = 'bernoulli', 'BernoulliBackward0'
    __slots__ = ()

    def forward(input, p=None, *, generator=None):
        g = generator_of(generator, 'bernoulli')
        d = input._data.dtype
        if p is not None:
            if not 0 <= p <= 1:
                raise RuntimeError(f'bernoulli_ expects p to be in [0, 1], but got p={_g(p)}')
            if generator is None and backend.on_gpu(input._data):
                with input._data.device:
                    values = _gpu_bernoulli(p)(backend.array_module(input._data).random.get_random_state(),
                                               input._data.shape)
                return record(values.astype(d), Bernoulli, ())[0]
            values = kernels.bernoulli_number(g, input._data.size, p).reshape(input._data.shape)
            return record(xp.asarray(values, like=input._data).astype(d), Bernoulli, ())[0]
        if d.kind not in 'fV':
            raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for '
                                      f'\'{SCALAR_NAMES[d.name]}\'')
        _check_probabilities(input._data)
        if generator is None and backend.on_gpu(input._data):
            with input._data.device:
                values = _gpu_bernoulli(input._data)(backend.array_module(input._data).random.get_random_state(),
                                                     input._data.shape)
            return record(values.astype(d), Bernoulli, (input,))[0]
        probs = backend.to_numpy(input._data)
        values = kernels.bernoulli_probabilities(g, probs.reshape(-1)).reshape(probs.shape)  # a contiguous result
        return record(xp.asarray(values, like=input._data).astype(d), Bernoulli, (input,))[0]

    def function(input, p=None, *, generator=None, out=None):
        if out is None:
            return Bernoulli.forward(input, p, generator=generator)
        if p is not None:
            raise TypeError(f'bernoulli() received an invalid combination of arguments - got (Tensor, '
                            f'{type(p).__name__}, out=Tensor), but expected one of:\n'
                            ' * (Tensor input, *, torch.Generator generator = None, Tensor out = None)\n'
                            ' * (Tensor input, float p, *, torch.Generator generator = None)\n')
        # PyTorch's bernoulli_out: out resized to input's shape (silently), then out.bernoulli_(input);
        # autograd refused before anything is drawn
        check_out('bernoulli', out, input)
        if out._data.shape != input._data.shape:
            out._data = xp.empty(input._data.shape, dtype=out._data.dtype)
        return _bernoulli_(out, input, generator=generator)

    def inplace(self, p=0.5, *, generator=None):
        """Each element becomes 1 with probability ``p`` (a number: BernoulliBackward2, or a
        tensor that broadcasts to this one's shape: BernoulliBackward1), else 0: a float64
        uniform < p (a float32 one for float32 or float16 probability tensors), element after
        element in memory order."""
        if not isinstance(p, (Tensor, int, float)):
            _BERNOULLI_.bind((p,), {} if generator is None else {'generator': generator}, method=True)
        return _bernoulli_(self, p, generator=generator)


_BERNOULLI_ = Overloads('bernoulli_', '(Tensor input, Tensor p, *, leafgrad.Generator? generator = None)',
                        '(Tensor input, float p = 0.5, *, leafgrad.Generator? generator = None)')


def _bernoulli_(self, p=0.5, *, generator=None):
    g = generator_of(generator, 'bernoulli_')
    on_gpu = generator is None and backend.on_gpu(self._data)
    if isinstance(p, Tensor):
        probs = ops.expand(p, self._data.shape)._data
        _check_probabilities(probs)
        if on_gpu:
            return _fill_(self, BernoulliBackward1, None, (p,), _gpu_bernoulli(probs))
        in_order = kernels.in_memory_order(self._data, backend.to_numpy(probs))
        return _fill_(self, BernoulliBackward1, lambda n: kernels.bernoulli_probabilities(g, in_order), (p,))
    if not 0 <= p <= 1:
        raise RuntimeError(f'bernoulli_ expects p to be in [0, 1], but got p={_g(p)}')
    return _fill_(self, BernoulliBackward2, lambda n: kernels.bernoulli_number(g, n, p),
                  on_gpu=_gpu_bernoulli(p) if on_gpu else None)


class BernoulliBackward1(Op):
    """``bernoulli_(p tensor)``: no gradient to the old value or to ``p``."""
    node = 'BernoulliBackward1'
    __slots__ = ()

    def apply(self, grad):
        return wrap(xp.zeros_like(grad._data)), None  # (zeros_like, as PyTorch: not grad * 0, NaN at inf)


class BernoulliBackward2(_Overwritten):
    """``bernoulli_(p number)``."""
    node = 'BernoulliBackward2'
    __slots__ = ()


# ---- continuous distributions ----------------------------------------------------------------

def _continuous(self, what, ctype=False):
    d = self._data.dtype
    if d.kind not in 'fV':
        name = _C_NAMES[d.name] if ctype else SCALAR_NAMES[d.name]
        raise RuntimeError(f'{what} distribution is a continuous probability distribution. dtype must be a floating '
                           f'point but you specified {name}')


class Exponential(_Overwritten):
    """Tensor.exponential_(lambd=1, *, generator=None): samples of the exponential distribution
    with rate ``lambd``: -log1p(-u) / lambd."""
    op, node, function = 'exponential_', 'ExponentialBackward0', False
    parameter_types = {'lambd': 'float'}
    __slots__ = ()

    def forward(self, lambd=1.0, *, generator=None):
        g = generator_of(generator, 'exponential_')
        _continuous(self, 'Exponential')
        if not lambd > 0:
            raise RuntimeError(f'exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}')
        return _fill_(self, Exponential, lambda n: kernels.exponential(g, n, lambd))


class Geometric(_Overwritten):
    """Tensor.geometric_(p, *, generator=None): the number of Bernoulli(p) trials up to the first
    success (1, 2, …)."""
    op, node, function = 'geometric_', 'GeometricBackward0', False
    parameter_types = {'p': 'float'}
    __slots__ = ()

    def forward(self, p, *, generator=None):
        g = generator_of(generator, 'geometric_')
        if self._data.dtype.kind == 'b':
            raise NotImplementedError('"geometric_cpu" not implemented for \'Bool\'')
        if not 0 < p < 1:
            raise RuntimeError(f'geometric_ expects p to be in (0, 1), but got p={_g(p)}')
        return _fill_(self, Geometric, lambda n: kernels.geometric(g, n, p))


class LogNormal(_Overwritten):
    """Tensor.log_normal_(mean=1, std=2, *, generator=None): exp of N(mean, std^2) samples (the
    scalar normal sampler, its cached sample included)."""
    op, node, function = 'log_normal_', 'LogNormalBackward0', False
    parameter_types = {'mean': 'float', 'std': 'float'}
    __slots__ = ()

    def forward(self, mean=1.0, std=2.0, *, generator=None):
        g = generator_of(generator, 'log_normal_')
        d = self._data.dtype
        if d.kind not in 'fV':
            raise NotImplementedError(f'"log_normal_cpu" not implemented for \'{SCALAR_NAMES[d.name]}\'')
        if not std > 0:
            raise RuntimeError(f'log_normal_ expects std > 0.0, but found std={_g(std)}')
        return _fill_(self, LogNormal, lambda n: kernels.log_normal(g, n, mean, std))


class Cauchy(_Overwritten):
    """Tensor.cauchy_(median=0, sigma=1, *, generator=None): samples of the Cauchy distribution
    centred on ``median`` with scale ``sigma``."""
    op, node, function = 'cauchy_', 'CauchyBackward0', False
    parameter_types = {'median': 'float', 'sigma': 'float'}
    __slots__ = ()

    def forward(self, median=0.0, sigma=1.0, *, generator=None):
        g = generator_of(generator, 'cauchy_')
        _continuous(self, 'Cauchy', ctype=True)
        if not sigma > 0:
            raise RuntimeError(f'cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}')
        return _fill_(self, Cauchy, lambda n: kernels.cauchy(g, n, median, sigma))


# ---- multinomial -----------------------------------------------------------------------------

def _check_multinomial(probs, num_samples, replacement):
    if probs.ndim not in (1, 2):
        raise RuntimeError('prob_dist must be 1 or 2 dim')
    if probs.dtype.kind not in 'fV':
        raise RuntimeError('multinomial only supports floating-point dtypes for input, got: '
                           f'{SCALAR_NAMES[probs.dtype.name]}')
    if num_samples <= 0:
        raise RuntimeError('cannot sample n_sample <= 0 samples')
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError('cannot sample n_sample > prob_dist.size(-1) samples without replacement')
    rows = probs.reshape(-1, probs.shape[-1]).astype(xp.float64)
    if not replacement or num_samples == 1:
        if not (xp.isfinite(rows) & (rows >= 0)).all():
            raise RuntimeError('probability tensor contains either `inf`, `nan` or element < 0')
    elif not (rows >= 0).all():
        raise RuntimeError('invalid multinomial distribution (encountering probability entry < 0)')
    elif not xp.isfinite(rows).all():
        raise RuntimeError('invalid multinomial distribution (encountering probability entry = infinity or NaN)')
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError('invalid multinomial distribution (sum of probabilities <= 0)')


class Multinomial(Op):
    """multinomial(input, num_samples, replacement=False, *, generator=None, out=None): category
    indices drawn with the (unnormalised) probabilities in ``input``'s last dim. As PyTorch:
    without replacement (or for one sample) the ``num_samples`` largest of p / Exp(1) samples
    (exponential_ on a tensor like ``input``); with replacement a search of each float64
    uniform in the normalised running sum. ``out``: an int64 tensor, resized silently (no
    derivative: an input that requires grad is no error)."""
    op = 'multinomial'

    def forward(input, num_samples, replacement=False, *, generator=None):
        g = generator_of(generator, 'multinomial')
        if not isinstance(num_samples, int) or isinstance(num_samples, bool):
            raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                            f'{type(num_samples).__name__}')
        probs = backend.to_numpy(input._data)
        _check_multinomial(probs, num_samples, replacement)
        rows = probs.reshape(-1, probs.shape[-1])
        if not replacement or num_samples == 1:
            q = kernels.cast(kernels.exponential(g, rows.size, 1.0), rows.dtype).reshape(rows.shape)
            with xp.errstate(divide='ignore', invalid='ignore'):
                keys = (rows / q).astype(rows.dtype)
            # the largest first; among equal keys the lower index first (PyTorch's order there is
            # its partial sort's)
            picks = xp.argsort(-keys.astype(xp.float64), axis=1, kind='stable')[:, :num_samples]
        else:
            picks = kernels.multinomial_with_replacement(g, rows, num_samples)
        return wrap(picks.reshape(probs.shape[:-1] + (num_samples,)))

    def function(input, num_samples, replacement=False, *, generator=None, out=None):
        if out is None:
            return Multinomial.forward(input, num_samples, replacement, generator=generator)
        if not isinstance(out, Tensor):
            raise TypeError(f"multinomial(): argument 'out' must be Tensor, not {type(out).__name__}")
        if out._data.dtype != xp.int64:
            raise RuntimeError(f'multinomial expects Long tensor out, got: {SCALAR_NAMES[out._data.dtype.name]}')
        check_out('aten::multinomial', out, out, label='multinomial')
        values = Multinomial.forward(input, num_samples, replacement, generator=generator)._data
        if out._data.shape != values.shape:  # (resized silently, as PyTorch's)
            out._data = values
        else:
            out._data[...] = values
        out._version_counter[0] += 1
        return out
