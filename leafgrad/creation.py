"""Creating tensors: from data, filled, ranges, and random (leafgrad's own RNG stream)."""
import math
import warnings

from . import backend
from .autograd.grad_mode import state
from .tensor import Tensor

_np = backend.numpy
_wrap = Tensor._wrap


def _finish(data, requires_grad, dtype=None):
    t = _wrap(data)
    if requires_grad:
        t.requires_grad_(True) if data.dtype.kind == 'f' else _raise_int_grad()
    if state.inference:
        t._get_meta().is_inference = True
    return t


def _raise_int_grad():
    raise RuntimeError('Only Tensors of floating point and complex dtype can require gradients')


def _infer_np_dtype(data):
    """PyTorch's inference: Python floats -> default float, ints -> int64, bools -> bool."""
    kinds = set()

    def walk(x):
        if isinstance(x, Tensor):
            kinds.add(('t', x._data.dtype))
        elif isinstance(x, bool):
            kinds.add('b')
        elif isinstance(x, int):
            kinds.add('i')
        elif isinstance(x, float):
            kinds.add('f')
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif hasattr(x, 'dtype'):
            kinds.add(('t', _np.dtype(x.dtype)))
        else:
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")

    walk(data)
    dt = None
    for k in kinds:
        if isinstance(k, tuple):
            d = backend.from_np(k[1])
        else:
            d = {'b': backend.bool_, 'i': backend.int64, 'f': backend.get_default_dtype()}[k]
        dt = d if dt is None else backend.promote_types(dt, d)
    return (dt or backend.get_default_dtype()).np


def _to_array(data, dtype, device):
    xp = backend.module_for(device)
    if isinstance(data, Tensor):
        arr = data._data
        if dtype is not None:
            arr = arr.astype(backend.to_dtype(dtype).np)
        return xp.array(backend.to_numpy(arr) if xp is _np else arr, copy=True)
    if type(data) is _np.ndarray or (hasattr(data, 'dtype') and hasattr(data, 'shape')):
        np_dtype = backend.to_dtype(dtype).np if dtype is not None else backend.from_np(_np.dtype(data.dtype)).np
        return xp.array(data, dtype=np_dtype, copy=True)
    np_dtype = backend.to_dtype(dtype).np if dtype is not None else _infer_np_dtype(data)
    if isinstance(data, (list, tuple)):
        data = _unwrap_nested(data)
    try:
        return xp.array(data, dtype=np_dtype)
    except ValueError as e:
        raise ValueError(f'expected sequence of equal-length lists: {e}') from None


def _unwrap_nested(data):
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(x) for x in data]
    if isinstance(data, Tensor):
        return backend.to_numpy(data._data)
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf holding a copy of ``data``."""
    if isinstance(data, Tensor):
        warnings.warn('To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() '
                      'or sourceTensor.detach().clone().requires_grad_(True), rather than leafgrad.tensor(sourceTensor).',
                      UserWarning, stacklevel=2)
        out = _finish(_to_array(data, dtype, device), requires_grad)
        if data._requires_grad:
            from .autograd.origins import note
            note(out, 'tensor', data)  # a re-wrapped copy: leafgrad.explain reports it
        return out
    return _finish(_to_array(data, dtype, device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        if (dtype is None or backend.to_dtype(dtype) is data.dtype) and device is None:
            return data
        return data.to(device=device, dtype=dtype)
    if (type(data) is _np.ndarray and device is None and backend._default_device is None
            and (dtype is None or backend.to_dtype(dtype).np == data.dtype)):
        return _wrap(data)
    return _finish(_to_array(data, dtype, device), False)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, _np.ndarray):
        raise TypeError(f'expected np.ndarray (got {type(ndarray).__name__})')
    backend.from_np(ndarray.dtype)
    return _wrap(ndarray)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(int(s) for s in size)
    for s in size:
        if s < 0:
            raise RuntimeError(f'Trying to create tensor with negative dimension {s}: {list(size)}')
    return size


def _dtype_np(dtype, default=None):
    if dtype is None:
        return (default or backend.get_default_dtype()).np
    return backend.to_dtype(dtype).np


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _finish(backend.module_for(device).zeros(_size(size), dtype=_dtype_np(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    return _finish(backend.module_for(device).ones(_size(size), dtype=_dtype_np(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None, out=None):
    data = backend.module_for(device).empty(_size(size), dtype=_dtype_np(dtype))
    if _fill_uninitialized:
        _fill_as_uninitialized(data)
    return _finish(data, requires_grad)


# Set by leafgrad.use_deterministic_algorithms (its home: _settings.py): PyTorch then fills the
# memory that empty() hands out, so that reading it before writing it gives the same every run.
_fill_uninitialized = False


def _fill_as_uninitialized(data):
    """NaN for floating types, the largest value for integers (True for bool), as PyTorch fills."""
    kind = data.dtype.kind
    data.fill(_np.nan if kind == 'f' else True if kind == 'b' else _np.iinfo(data.dtype).max)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = backend.scalar_dtype(fill_value)
    return _finish(backend.module_for(device).full(_size((size,)), fill_value, dtype=_dtype_np(dtype)), requires_grad)


def _like(fn, input, dtype, device, requires_grad, *args):
    dtype = dtype if dtype is not None else input.dtype
    device = device if device is not None else input.device
    return fn(*args, input._data.shape, dtype=dtype, device=device, requires_grad=requires_grad) if args == () \
        else fn(input._data.shape, *args, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(empty, input, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(full, input, dtype, device, requires_grad, fill_value)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError('step must be nonzero')
    if (end - start) / step < 0 and end != start:
        raise RuntimeError('upper bound and larger bound inconsistent with step sign')
    vals = [_scalar(v) for v in (start, end, step)]
    if dtype is None:
        dtype = backend.get_default_dtype() if any(isinstance(v, float) for v in vals) else backend.int64
    start, end, step = vals
    n = max(math.ceil((end - start) / step), 0)
    xp = backend.module_for(device)
    np_dtype = backend.to_dtype(dtype).np
    # computed in double then cast, as PyTorch computes start + i * step
    data = (start + xp.arange(n, dtype=_np.float64) * step).astype(np_dtype) if np_dtype.kind == 'f' \
        else xp.arange(start, start + n * step, step)[:n].astype(np_dtype)
    return _finish(data, requires_grad)


def _scalar(v):
    return v.item() if isinstance(v, Tensor) else v


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    start, end = _scalar(start), _scalar(end)
    if steps < 0:
        raise RuntimeError('linspace(): number of steps must be non-negative')
    np_dtype = _dtype_np(dtype)
    xp = backend.module_for(device)
    if steps == 1:
        data = xp.full((1,), start, dtype=np_dtype)
    else:
        # PyTorch fills the first half from start and the second half from end (symmetric rounding)
        step = (end - start) / (steps - 1)
        idx = xp.arange(steps, dtype=_np.float64)
        half = steps // 2
        data = xp.where(idx < half, start + step * idx, end - step * (steps - idx - 1)).astype(np_dtype)
    return _finish(data, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    lin = linspace(start, end, steps, dtype=backend.float64, device=device)
    return _finish((base ** lin._data).astype(_dtype_np(dtype)), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    return _finish(backend.module_for(device).eye(n, m if m is not None else n, dtype=_dtype_np(dtype)), requires_grad)


# ---- random ---------------------------------------------------------------------------

class Generator:
    """A random stream: NumPy's PCG64 started from the generator's seed. For a given seed
    leafgrad's numbers differ from PyTorch's; the same seed gives the same numbers run to run.

    >>> g = Generator().manual_seed(7)
    >>> a = rand(3, generator=g)
    >>> bool((rand(3, generator=g.manual_seed(7)) == a).all())
    True
    """

    def __init__(self, device='cpu'):
        self.device = _generator_device(device)
        self._seed = 67280421310721
        self._rng = None

    @property
    def rng(self):
        # Made on first use: numpy.random costs a noticeable part of `import leafgrad`.
        if self._rng is None:
            self._rng = _np.random.Generator(_np.random.PCG64(self._seed))
        return self._rng

    @rng.setter
    def rng(self, value):
        self._rng = value

    def manual_seed(self, seed):
        """Restart the stream from ``seed`` (an int in [-2**63, 2**64); negative seeds wrap
        around 2**64, as PyTorch's do). Returns the generator."""
        if type(seed) is bool or not isinstance(seed, int):
            raise RuntimeError(f'manual_seed expected a long, but got {type(seed).__name__}')
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError('Overflow when unpacking long long')
        self._seed = seed % 2 ** 64
        self._rng = None
        return self

    def seed(self):
        """Seed from the operating system's randomness; returns the seed."""
        import os
        return self.manual_seed(int.from_bytes(os.urandom(8), 'little'))._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor of ``_STATE_BYTES`` bytes: the seed, then PCG64's state,
        increment and buffered 32-bit half (``set_state`` takes it back)."""
        bits = self.rng.bit_generator.state
        packed = (self._seed.to_bytes(8, 'little') + bits['state']['state'].to_bytes(16, 'little')
                  + bits['state']['inc'].to_bytes(16, 'little') + bytes([bits['has_uint32']])
                  + bits['uinteger'].to_bytes(4, 'little'))
        return _wrap(_np.frombuffer(packed, dtype=_np.uint8).copy())

    def set_state(self, new_state):
        """Continue from a state ``get_state`` returned (of this or another generator)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f'expected a leafgrad.ByteTensor, but got {type(new_state).__name__}')
        if new_state._data.dtype != _np.uint8:
            raise TypeError('RNG state must be a leafgrad.ByteTensor')
        if new_state._data.size != _STATE_BYTES:
            raise RuntimeError(f'Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG '
                               f'state size to be {new_state._data.size}')
        packed = backend.to_numpy(new_state._data).reshape(-1).tobytes()
        seed = int.from_bytes(packed[:8], 'little')
        words = {'state': int.from_bytes(packed[8:24], 'little'), 'inc': int.from_bytes(packed[24:40], 'little')}
        bits = {'bit_generator': 'PCG64', 'state': words, 'has_uint32': packed[40],
                'uinteger': int.from_bytes(packed[41:45], 'little')}
        rng = _np.random.Generator(_np.random.PCG64())
        rng.bit_generator.state = bits
        self._seed, self._rng = seed, rng
        return self

    def clone_state(self):
        """A new generator in this one's state."""
        return Generator(self.device).set_state(self.get_state())


_STATE_BYTES = 45


def _generator_device(device):
    dev = device if isinstance(device, backend.device) else None
    if dev is None:
        if isinstance(device, int) and not isinstance(device, bool):
            dev = backend.device('cuda', device)
        else:
            if isinstance(device, str) and device.split(':')[0] == 'meta':
                raise RuntimeError('META device type not an accelerator.')
            dev = backend.device(device)
    if dev.type == 'cuda' and not backend.cuda_available():
        if not isinstance(device, (str, backend.device)):
            raise RuntimeError('Cannot access accelerator device when none is available.')
        raise RuntimeError('Cannot get CUDA generator: CUDA is not available (leafgrad runs on a GPU through CuPy)')
    return dev


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator (and CuPy's, when there is a GPU); returns the default generator."""
    seed = int(seed)
    default_generator.manual_seed(seed)
    try:
        from . import cuda
        cuda.manual_seed_all(seed)
    except Exception:
        pass
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _rng(generator, op='generator'):
    """The NumPy stream of ``generator`` (the default one when None); PyTorch's TypeError for
    anything else."""
    if generator is None:
        return default_generator.rng
    if type(generator) is not Generator:
        raise TypeError(f"{op}(): argument 'generator' must be leafgrad.Generator, not {type(generator).__name__}")
    return generator.rng


def _random(sample, size, dtype, device, requires_grad):
    data = sample(_size(size)).astype(_dtype_np(dtype), copy=False)
    return _finish(_place(data, device), requires_grad)


def _place(data, device):
    """``data``, drawn on the CPU by leafgrad's generator, on ``device`` (None: the default device)."""
    if device is None:
        device = backend._default_device
        if device is None:
            return data
    if backend.device(device).type != 'cpu':
        data = backend.to_device(data, device)
    return data


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    rng = _rng(generator, 'rand')
    return _random(lambda s: rng.random(s, dtype=_np.float64), size, dtype, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    rng = _rng(generator, 'randn')
    return _random(lambda s: rng.standard_normal(s), size, dtype, device, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    if size is None and isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f'random_ expects \'from\' to be less than \'to\', but got from={low} >= to={high}')
    data = _rng(generator, 'randint').integers(low, high, size=_size((size,)), dtype=_np.int64)
    return _finish(_place(data.astype(_dtype_np(dtype, backend.int64)), device), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    data = _rng(generator, 'randperm').permutation(n).astype(_dtype_np(dtype, backend.int64))
    return _finish(_place(data, device), requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(input._data.shape, generator=generator, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(input._data.shape, generator=generator, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    return randint(low, high, input._data.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False):
    rng = _rng(generator, 'normal')
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        shape = _np.broadcast_shapes(_np.shape(m), _np.shape(s))
        like = mean if isinstance(mean, Tensor) else std
        return _wrap((m + s * rng.standard_normal(shape)).astype(like._data.dtype))
    return _random(lambda sh: mean + std * rng.standard_normal(sh), (size,), dtype, None, requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    rng = _rng(generator, 'multinomial')
    probs = backend.to_numpy(input._data).astype(_np.float64)
    rows = probs.reshape(-1, probs.shape[-1])
    out = []
    for row in rows:
        p = row / row.sum()
        out.append(rng.choice(len(p), size=num_samples, replace=replacement, p=p))
    arr = _np.array(out, dtype=_np.int64)
    return _wrap(arr.reshape(probs.shape[:-1] + (num_samples,)))


# ---- Tensor.new_*: a new tensor with this tensor's dtype and device unless told otherwise ------

def _new_like(self, dtype, device):
    return (self.dtype if dtype is None else dtype), (self.device if device is None else device)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    dtype, device = _new_like(self, dtype, device)
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    dtype, device = _new_like(self, dtype, device)
    return ones(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    dtype, device = _new_like(self, dtype, device)
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _new_like(self, dtype, device)
    return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _new_like(self, dtype, device)
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


for _method in (new_zeros, new_ones, new_empty, new_full, new_tensor):
    setattr(Tensor, _method.__name__, _method)
