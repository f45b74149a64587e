"""``Generator``: PyTorch's CPU random stream, so that a seeded program draws PyTorch's numbers.

PyTorch's CPU generator (``CPUGeneratorImpl``) is a 32-bit Mersenne Twister (mt19937) started
by the classic ``init_genrand`` from the low 32 bits of the seed; ``random()`` is one 32-bit
output, ``random64()`` two of them, the first in the high half. Besides the twister it keeps
the second sample of the last Box-Muller pair drawn by its scalar normal sampler (and a float
one that the CPU kernels never fill). NumPy's ``MT19937`` bit generator is the same twister
(its legacy seeding is ``init_genrand``), so the draws themselves run at C speed; what PyTorch
makes of them (uniforms, normals, integers ...) is in ``_random_kernels.py``.

The state travels as PyTorch's: ``get_state()`` is a 5056-byte uint8 tensor laid out as
PyTorch's ``CPUGeneratorImplState`` (seed, ``left``, ``seeded``, ``next``, the 624 state words
as 64-bit integers, the legacy normal fields with the cached double sample, the float sample),
so a state saved by ``torch.get_rng_state()`` restores into leafgrad and continues with
PyTorch's next numbers, and the other way round.

The default generator starts, as PyTorch's, from 64 bits of the operating system's randomness:
an unseeded program draws other numbers each run. A new ``Generator()`` starts from PyTorch's
default seed 67280421310721.

>>> g = Generator().manual_seed(0)
>>> g.initial_seed()
0
"""
import os
import struct

import numpy as np

from . import backend
from .tensor import Tensor

DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val
_N = 624  # the twister's state words

# CPUGeneratorImplState: the legacy THGeneratorState (seed, left, seeded, next, 624 words as
# uint64, normal_x, normal_y, normal_rho, normal_is_valid, padding), then the float sample, its
# flag and padding: 5056 bytes with the compiler's alignment.
_HEAD = struct.Struct('<QiiQ')
_WORDS_AT = _HEAD.size
_NORMAL = struct.Struct('<dddi4x')
_NORMAL_AT = _WORDS_AT + 8 * _N
_FLOAT = struct.Struct('<f?3x')
_FLOAT_AT = _NORMAL_AT + _NORMAL.size
STATE_BYTES = _FLOAT_AT + _FLOAT.size  # 5056


def _temper(words):
    """mt19937's output function on state words (uint64 arrays holding 32-bit values)."""
    y = words ^ (words >> 11)
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & 0xFFFFFFFF


class Generator:
    """A random stream that draws PyTorch's numbers for PyTorch's seeds.

    >>> import leafgrad as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> torch.rand(2, generator=g)
    tensor([0.4963, 0.7682])
    """

    def __init__(self, device='cpu'):
        self.device = _generator_device(device)
        self._start(DEFAULT_SEED)

    def _start(self, seed):
        self._seed = seed
        self._bits = None  # NumPy's MT19937, made on first draw (numpy.random costs import time)
        # (next, left) as PyTorch reports them while they differ from the twister's position:
        # just after seeding (next 0, left 1), or a state set with words still to be read
        # before the next twist. None once the twister's position says it all.
        self._pending = (0, 1)
        self._normal_double = None  # the cached second sample of a Box-Muller pair
        self._normal_float = None

    # ---- seeds -----------------------------------------------------------------------------------
    def manual_seed(self, seed):
        """Restart the stream from ``seed`` (an int in [-2**63, 2**64); negative seeds wrap
        around 2**64, as PyTorch's do; the twister takes the low 32 bits). Returns the generator."""
        if type(seed) is bool or not isinstance(seed, int):
            raise RuntimeError(f'manual_seed expected a long, but got {type(seed).__name__}')
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError('Overflow when unpacking long long')
        self._start(seed % 2 ** 64)
        return self

    def seed(self):
        """Seed from 64 bits of the operating system's randomness; returns the seed."""
        return self.manual_seed(int.from_bytes(os.urandom(8), 'little'))._seed

    def initial_seed(self):
        return self._seed

    # ---- draws -----------------------------------------------------------------------------------
    def _twister(self):
        bits = self._bits
        if bits is None:
            bits = self._bits = np.random.MT19937()
            bits._legacy_seeding(self._seed & 0xFFFFFFFF)  # init_genrand, as PyTorch's mt19937
        return bits

    def _u32(self, n):
        """The next ``n`` 32-bit outputs (``random()``), as a uint64 array."""
        if self._pending is not None:
            return self._u32_pending(n)
        return self._twister().random_raw(n)

    def _u32_pending(self, n):
        bits = self._twister()
        start, left = self._pending
        take = min(n, left - 1)  # words PyTorch reads before its next twist
        head = _temper(bits.state['state']['key'][start:start + take].astype(np.uint64))
        if take == n:
            self._pending = (start + take, left - take)
            return head
        self._pending = None  # the twister's position says it all from here on
        rest = bits.random_raw(n - take)
        return rest if take == 0 else np.concatenate([head, rest])

    def _u64(self, n):
        """The next ``n`` ``random64()`` values: two 32-bit outputs each, the first one high."""
        raw = self._u32(2 * n)
        return (raw[0::2] << 32) | raw[1::2]

    # ---- state -----------------------------------------------------------------------------------
    def get_state(self):
        """The state as PyTorch's 5056-byte uint8 tensor (``set_state`` of either library takes it)."""
        words = self._twister().state['state']['key']
        if self._pending is not None:
            nxt, left = self._pending
        else:
            nxt = int(self._bits.state['state']['pos'])
            left = _N + 1 - nxt
        buf = bytearray(STATE_BYTES)
        _HEAD.pack_into(buf, 0, self._seed, left, 1, nxt)
        buf[_WORDS_AT:_NORMAL_AT] = words.astype('<u8').tobytes()
        cached = self._normal_double
        _NORMAL.pack_into(buf, _NORMAL_AT, 0.0, 0.0 if cached is None else cached, 0.0, cached is not None)
        fcached = self._normal_float
        _FLOAT.pack_into(buf, _FLOAT_AT, 0.0 if fcached is None else fcached, fcached is not None)
        return Tensor._wrap(np.frombuffer(bytes(buf), dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Continue from a state that ``get_state`` (or PyTorch's) returned."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f'expected a leafgrad.ByteTensor, but got {type(new_state).__name__}')
        if new_state._data.dtype != np.uint8:
            raise TypeError('RNG state must be a leafgrad.ByteTensor')
        if new_state._data.size != STATE_BYTES:
            raise RuntimeError(f'Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG '
                               f'state size to be {new_state._data.size}')
        buf = backend.to_numpy(new_state._data).reshape(-1).tobytes()
        seed, left, seeded, nxt = _HEAD.unpack_from(buf, 0)
        nxt &= 0xFFFFFFFF  # PyTorch keeps next as 32 bits
        # PyTorch's validity check; a state that would read past the words before its next twist
        # (undefined behaviour in PyTorch) is refused as well
        if not seeded or not 0 < left <= _N or nxt > _N or (left > 1 and nxt + left - 1 > _N):
            raise RuntimeError('Invalid mt19937 state')
        words = np.frombuffer(buf, dtype='<u8', count=_N, offset=_WORDS_AT) & 0xFFFFFFFF
        _, normal_y, _, normal_valid = _NORMAL.unpack_from(buf, _NORMAL_AT)
        float_sample, float_valid = _FLOAT.unpack_from(buf, _FLOAT_AT)
        bits = np.random.MT19937()
        steady = left + nxt == _N + 1
        bits.state = {'bit_generator': 'MT19937',
                      'state': {'key': words.astype(np.uint32), 'pos': nxt if steady else _N}}
        self._seed, self._bits = seed, bits
        self._pending = None if steady else (nxt, left)
        self._normal_double = normal_y if normal_valid else None
        self._normal_float = np.float32(float_sample) if float_valid else None
        return self

    def clone_state(self):
        """A new generator in this one's state."""
        return Generator(self.device).set_state(self.get_state())


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
default_generator._start(int.from_bytes(os.urandom(8), 'little'))  # as PyTorch's, seeded at start-up


def manual_seed(seed):
    """Seed the default generator (and CuPy's, when there is a GPU); returns the default generator."""
    seed = int(seed)
    default_generator.manual_seed(seed)
    try:
        backend.cuda_manual_seed(seed)
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


def generator_of(generator, op='generator'):
    """``generator``, or the default one when None; PyTorch's TypeError for anything else."""
    if generator is None:
        return default_generator
    if type(generator) is not Generator:
        raise TypeError(f"{op}(): argument 'generator' must be leafgrad.Generator, not {type(generator).__name__}")
    return generator
