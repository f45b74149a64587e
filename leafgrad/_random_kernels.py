"""PyTorch's CPU sampling kernels on NumPy arrays: what PyTorch makes of its generator's draws.

Every function takes a ``Generator`` and returns the samples PyTorch's kernel writes, in the order
it writes them (one element after another in memory order, ``memory_order`` says how that maps to
an array's logical order). Per element (``at::uniform_real_distribution`` and kin):

- a float32 uniform (also for float16 and bfloat16, then rounded) is one 32-bit draw masked to
  24 bits times 2**-24; a float64 uniform is one 64-bit draw (two 32-bit ones, the first high)
  masked to 53 bits times 2**-53; ``uniform_(a, b)`` maps x to x * (b - a) + a (fused) in float,
  or double for float64, and a result that rounds to b to a;
- ``random_(from, to)`` is draw % (to - from) + from, on 32-bit draws, or 64-bit ones when the
  range is 2**28 or more; ``random_()`` takes [0, 2**mantissa] for floats, [0, max] for integers;
- the exponential, geometric, Cauchy, log-normal and Bernoulli(p number) samplers and the scalar
  normal sampler draw float64 uniforms whatever the dtype and compute in double; the scalar
  normal sampler makes a Box-Muller pair from two uniforms and keeps its second sample in the
  generator for the next call;
- ``normal_`` of a contiguous tensor of 16 or more elements instead fills it with uniforms and
  transforms them 16 at a time (a Box-Muller pair from elements j and j + 8 of each block; the
  last 16 elements refilled and transformed again when 16 does not divide the size; float16 and
  bfloat16 run the float32 sampler on the size rounded up to 16 and keep its last block last).
"""
import math

import numpy as np

from . import _kernel_math as km

f32 = np.float32
f64 = np.float64
_MANTISSA = {'float16': 11, 'bfloat16': 8, 'float32': 24, 'float64': 53}
_TWO_PI = 2.0 * math.pi
_CHUNK = 16384  # elements per float64 temporary of a vectorised transform: 128 KiB stay in cache and
#                come from the allocator's pool (larger ones are fresh pages each time, ~10x slower)


def cast(values, dtype):
    """float64 samples in dtype, as a C++ cast converts them: float16 and bfloat16 (c10::Half,
    c10::BFloat16) are made from a float, so a double is rounded to float first."""
    if dtype.itemsize == 2 and dtype.kind != 'i' and dtype.kind != 'u':
        values = values.astype(f32)
    return values.astype(dtype, copy=False)


def memory_order(array):
    """The axes of ``array`` from the largest stride to the smallest: the order in which PyTorch's
    element-wise kernels walk a tensor's memory (``array.transpose(order)`` is contiguous when
    the array is dense)."""
    strides = array.strides
    return sorted(range(array.ndim), key=lambda axis: -abs(strides[axis]))


def fill_in_memory_order(array, values):
    """``values`` (in drawing order) laid out as ``array``'s logical order, when the kernel walks
    ``array`` in memory order."""
    order = memory_order(array)
    if order == list(range(array.ndim)):
        return values.reshape(array.shape)
    shape = tuple(array.shape[axis] for axis in order)
    return values.reshape(shape).transpose(np.argsort(order))


def in_memory_order(array, values):
    """``values``, shaped as ``array``, read in the order the kernel walks ``array``'s memory."""
    order = memory_order(array)
    return values.transpose(order).reshape(-1)


# ---- uniform ---------------------------------------------------------------------------------

def _in_chunks(n, dtype, make):
    """An array of n elements of dtype filled ``_CHUNK`` at a time by make(m) (the next m values):
    the draws and temporaries of a large tensor stay small."""
    out = np.empty(n, dtype=dtype)
    for start in range(0, n, _CHUNK):
        out[start:start + _CHUNK] = make(min(_CHUNK, n - start))
    return out


def _unit_float(g, m):
    return np.multiply(g._u32(m) & 0xFFFFFF, f32(2.0 ** -24), dtype=f32, casting='unsafe')  # (exact)


def _unit_double(g, m):
    return np.multiply(g._u64(m) & (2 ** 53 - 1), 2.0 ** -53, dtype=f64, casting='unsafe')  # (exact)


def _unit(g, n, dtype):
    """n uniforms on [0, 1): float64 ones for float64, float32 ones (24 bits) for the others."""
    if dtype == f64:
        return unit_double(g, n)
    return _in_chunks(n, f32, lambda m: _unit_float(g, m))


def unit_double(g, n):
    """n float64 uniforms on [0, 1) (53 bits of a 64-bit draw each)."""
    return _in_chunks(n, f64, lambda m: _unit_double(g, m))


def uniform(g, n, dtype, low=0.0, high=1.0):
    """``uniform_(low, high)``: n samples of dtype (a NumPy floating dtype), computed in float64
    for float64 and float32 otherwise; a sample that rounds to ``high`` becomes ``low``."""
    if dtype == f64:
        span, lo = float(high) - float(low), float(low)
        out = _in_chunks(n, f64, lambda m: km.fma64(_unit_double(g, m), span, lo))
    elif low == 0 and high == 1:
        out = _in_chunks(n, dtype, lambda m: _unit_float(g, m))
    else:
        span, lo = f32(high) - f32(low), f32(low)
        out = _in_chunks(n, dtype, lambda m: km.fma(_unit_float(g, m), span, lo))
    if dtype != f32 or not (low == 0 and high == 1):  # (a float32 x never reaches 1)
        out[out == dtype.type(high)] = dtype.type(low)
    return out


# ---- normal ----------------------------------------------------------------------------------

def normal(g, n, dtype, mean=0.0, std=1.0, contiguous=True):
    """``normal_(mean, std)`` of n elements of dtype."""
    if n < 16 or not contiguous:
        return cast(normal_scalar(g, n, mean, std), dtype)
    if dtype == f64:
        return _normal_fill_double(g, n, mean, std)
    if dtype == f32:
        return _normal_fill_float(g, n, f32(mean), f32(std))
    # float16, bfloat16: the float32 kernel on the size rounded up to 16, the last block last
    padded = _normal_fill_float(g, -(-n // 16) * 16, f32(mean), f32(std))
    if n % 16:
        padded = np.concatenate([padded[:n - 16], padded[-16:]])
    return padded.astype(dtype)


def _normal_fill_float(g, n, mean, std):
    """float32: uniforms, then Box-Muller 16 at a time with PyTorch's vectorised log and sincos;
    when 16 does not divide n, the last 16 are refilled and transformed again."""
    out = _unit(g, n, f32)
    blocks = n - n % 16
    out[:blocks] = _box_muller_float(out[:blocks], mean, std)
    if n % 16:
        out[n - 16:] = _box_muller_float(_unit(g, 16, f32), mean, std)
    return out


def _box_muller_float(u, mean, std):
    out = np.empty_like(u)
    for start in range(0, u.size, 2 * _CHUNK):  # (each half of a block of 16 is a temporary)
        block = u[start:start + 2 * _CHUNK].reshape(-1, 16)
        radius = np.sqrt(f32(-2) * km.log(f32(1) - block[:, :8]))
        sin, cos = km.sincos(f32(_TWO_PI) * block[:, 8:])
        pairs = out[start:start + 2 * _CHUNK].reshape(-1, 16)
        np.multiply(radius, cos, out=pairs[:, :8])
        np.multiply(radius, sin, out=pairs[:, 8:])
    if mean == 0 and std == 1:
        return out + f32(0)
    return km.fma(out, std, mean)


def _normal_fill_double(g, n, mean, std):
    """float64: as ``_normal_fill_float``, in double with the C library's log, cos and sin."""
    out = unit_double(g, n)
    blocks = n - n % 16
    out[:blocks] = _box_muller_double(out[:blocks], mean, std)
    if n % 16:
        out[n - 16:] = _box_muller_double(unit_double(g, 16), mean, std)
    return out


def _box_muller_double(u, mean, std):
    u = u.reshape(-1, 16)
    radius = np.sqrt(-2.0 * km.libm(math.log, 1.0 - u[:, :8]))
    theta = _TWO_PI * u[:, 8:]
    pairs = np.concatenate([radius * km.libm(math.cos, theta), radius * km.libm(math.sin, theta)], axis=1)
    if mean == 0 and std == 1:
        return pairs.reshape(-1) + 0.0
    return km.fma64(pairs, float(std), float(mean)).reshape(-1)


def normal_scalar(g, n, mean=0.0, std=1.0):
    """n samples of ``at::normal_distribution<double>`` (float64): the generator's cached sample
    first, then Box-Muller pairs (r cos t, r sin t) from two float64 uniforms u1, u2 with
    r = sqrt(-2 log1p(-u2)), t = 2 pi u1; the second sample of a last, unfinished pair is cached."""
    if n == 0:
        return np.empty(0)
    cached = g._normal_double
    g._normal_double = None
    fresh = n - (cached is not None)
    pairs = (fresh + 1) // 2
    u = unit_double(g, 2 * pairs)
    radius = np.sqrt(-2.0 * km.libm(math.log1p, -u[1::2]))
    theta = _TWO_PI * u[0::2]
    both = np.empty(2 * pairs)
    both[0::2] = radius * km.libm(math.cos, theta)
    both[1::2] = radius * km.libm(math.sin, theta)
    if fresh % 2:
        g._normal_double = float(both[-1])
    z = both[:fresh] if cached is None else np.concatenate([[cached], both[:fresh]])
    if mean == 0 and std == 1:
        return z + 0.0
    return km.fma64(z, float(std), float(mean))


# ---- integers --------------------------------------------------------------------------------

def random_from_to(g, n, dtype, span, base):
    """``random_(base, base + span)``: (draw % span) + base as a 64-bit integer, in dtype."""
    draw = g._u64 if span >= 1 << 28 else g._u32
    span, base = np.uint64(span), np.uint64(base % 2 ** 64)
    return _in_chunks(n, dtype, lambda m: (draw(m) % span + base).view(np.int64))


def random_full_range(g, n, dtype):
    """``random_(-2**63, None)``: a 64-bit draw read as a signed integer."""
    return g._u64(n).view(np.int64).astype(dtype)


def random_bits(g, n, dtype):
    """``random_()``: [0, 2**mantissa] for floating types, [0, max] for integers, 0/1 for bool."""
    if dtype == np.bool_:
        return (g._u32(n) & 1).astype(np.bool_)
    digits = _MANTISSA.get(dtype.name)
    if digits is not None:
        draws = g._u64(n) if digits == 53 else g._u32(n)
        return (draws % np.uint64(2 ** digits + 1)).astype(dtype)
    if dtype == np.int64:
        return (g._u64(n) % np.uint64(2 ** 63)).astype(np.int64)
    return (g._u32(n) % np.uint64(int(np.iinfo(dtype).max) + 1)).astype(dtype)


def randperm(g, n):
    """``randperm(n)``: PyTorch's Fisher-Yates shuffle of 0 .. n-1, step i swapping positions i and
    t_i = i + draw % (n - i) (and for n of 2**32 / 20 or more, its 'inside-out' variant on 64-bit
    draws).

    The swaps run as array operations rather than one after another. Step i fixes position i to
    the value then at t_i; that value is the one the last earlier step aimed at t_i brought
    there, or t_i itself if none did. And the value step k brought (the one at k before step k)
    is likewise the one the last earlier step aimed at k brought, or k: following those links
    back to a step nobody aimed at gives it (by pointer jumping, a few rounds)."""
    if n >= 2 ** 32 // 20:
        return _randperm_inside_out(g, n)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    steps = np.arange(n - 1, dtype=np.int64)
    targets = steps + (g._u32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
    order = _stable_argsort(targets, n)  # the steps grouped by target, in step order
    grouped = targets[order]
    repeat = grouped[1:] == grouped[:-1]
    earlier = np.full(n - 1, -1, dtype=np.int64)  # the last earlier step with the same target
    earlier[order[1:][repeat]] = order[:-1][repeat]
    last = np.ones(n - 1, dtype=bool)
    last[:-1] = ~repeat
    brought_by = np.full(n, -1, dtype=np.int64)  # position k: the last step before k aimed at k
    brought_by[grouped[last]] = order[last]
    stays = np.nonzero(targets == steps)[0]  # (a step aimed at itself is not before itself)
    brought_by[stays] = earlier[stays]
    origin = np.where(brought_by < 0, np.arange(n), brought_by)
    while True:  # origin[k]: the value at k before step k
        further = origin[origin]
        if np.array_equal(further, origin):
            break
        origin = further
    perm = np.empty(n, dtype=np.int64)
    perm[:-1] = np.where(earlier >= 0, origin[np.maximum(earlier, 0)], targets)
    perm[-1] = origin[-1]
    return perm


def _stable_argsort(keys, n):
    """argsort(keys, stable) of integers in [0, n), n < 2**32, as radix passes on 16-bit digits."""
    if n <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind='stable')
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind='stable')
    return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind='stable')]


def _randperm_inside_out(g, n):
    perm = list(range(n))
    for i, draw in enumerate(g._u64(n).tolist()):
        z = draw % (i + 1)
        perm[i] = perm[z]
        perm[z] = i
    return np.array(perm, dtype=np.int64)


# ---- Bernoulli, exponential, geometric, Cauchy, log-normal ---------------------------------

def bernoulli_number(g, n, p):
    """``bernoulli_(p)`` with p a number: a float64 uniform < p."""
    return unit_double(g, n) < p


def bernoulli_probabilities(g, probs):
    """``bernoulli_(p)`` with p a tensor (in the kernel's order): a float64 uniform < p for
    float64 probabilities, a float32 one < float(p) for the others."""
    if probs.dtype == f64:
        return unit_double(g, probs.size) < probs
    return _unit(g, probs.size, np.dtype(f32)) < probs.astype(f32)


def exponential(g, n, lambd):
    """``exponential_(lambd)``: -1/lambd * log1p(-u), u a float64 uniform."""
    return (-1.0 / lambd) * km.libm(math.log1p, -unit_double(g, n))


def geometric(g, n, p):
    """``geometric_(p)``: ceil(log(u) / log1p(-p)), u a float64 uniform."""
    with np.errstate(divide='ignore'):
        return np.ceil(km.libm(_log0, unit_double(g, n)) / math.log1p(-p))


def _log0(x):
    return math.log(x) if x > 0 else -math.inf


def cauchy(g, n, median, sigma):
    """``cauchy_(median, sigma)``: median + sigma * tan(pi * (u - 1/2)), u a float64 uniform."""
    return km.fma64(float(sigma), km.libm(math.tan, math.pi * (unit_double(g, n) - 0.5)), float(median))


def log_normal(g, n, mean, std):
    """``log_normal_(mean, std)``: exp of the scalar normal sampler's samples."""
    return km.libm(_exp, normal_scalar(g, n, mean, std))


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


# ---- multinomial -----------------------------------------------------------------------------

def multinomial_with_replacement(g, rows, num_samples):
    """Each row of ``rows`` (2-D, non-negative, checked): ``num_samples`` categories, each the
    first whose normalised running sum reaches a float64 uniform. The running sum and the
    normalisation are computed in the rows' type (float for float16 and bfloat16)."""
    work = rows if rows.dtype in (f32, f64) else rows.astype(f32)
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for i, row in enumerate(work):
        cumulative = np.cumsum(row)  # one add after another, as PyTorch's loop
        cumulative /= cumulative[-1]
        cumulative[-1] = 1
        out[i] = np.searchsorted(cumulative.astype(f64), unit_double(g, num_samples), side='left')
    return out


def is_dense(array):
    """Whether ``array``'s elements fill its memory without gaps or overlaps, in some order of
    its axes (PyTorch's ``is_non_overlapping_and_dense``)."""
    return array.transpose(memory_order(array)).flags.c_contiguous
