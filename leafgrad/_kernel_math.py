"""Floating-point arithmetic as PyTorch's CPU sampling kernels compute it, on NumPy arrays.

PyTorch's kernels are compiled with multiply-adds fused (``x * (to - from) + from`` and
``z * std + mean`` round once), so ``fma`` and ``fma64`` compute a * b + c with one rounding, in
single and double precision. Their transcendental functions come from two places:

- the vectorised float32 normal sampler (``torch.randn`` of 16 or more contiguous float32
  elements) uses the Cephes single-precision logarithm and sine/cosine, evaluated eight lanes
  at a time with fused multiply-adds; ``log`` and ``sincos`` here evaluate the same operations
  in the same order (checked against PyTorch on every lane of a few hundred thousand samples).
- the scalar kernels call the C library's double functions; ``libm`` calls them (Python's
  ``math`` module is the same C library), one element at a time, since NumPy's vectorised
  log1p, log, exp and tan differ from the C library's in the last bit for a few percent of
  inputs.
"""
import math

import numpy as np

f32 = np.float32
f64 = np.float64


def fma(a, b, c):
    """a * b + c rounded once to float32, on float32 arrays or scalars.

    The product of two float32 numbers is exact in float64; the sum is rounded to float64 and
    then to float32, which rounds twice. That differs from one rounding only when the float64 sum
    lands exactly halfway between two float32 numbers (its low 29 mantissa bits 1000...0) while
    the exact sum does not: there the error of the float64 sum (recovered exactly by Knuth's
    two-sum) says which way to go."""
    s = np.multiply(a, b, dtype=f64)
    s += c
    out = s.astype(f32)
    tie = (s.view(np.uint64) & 0x1FFFFFFF) == 0x10000000
    if tie.any():
        p = np.broadcast_to(np.multiply(a, b, dtype=f64), s.shape)[tie]
        cc = np.broadcast_to(np.asarray(c, dtype=f64), s.shape)[tie]
        st = s[tie]
        t = st - p
        err = (p - (st - t)) + (cc - t)
        out[tie] = np.nextafter(st, st + err).astype(f32)  # (err == 0: a true tie, rounded to even)
    return out


def mul_add(a, b, c):
    """a * b + c with the exact float64 product and sum, rounded to float32: ``fma`` without its
    check for the one case where the two differ (a float64 sum rounded onto a float32 tie)."""
    s = np.multiply(a, b, dtype=f64)
    s += c
    return s.astype(f32)


_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's split of a double into two 26-bit halves


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _two_sum(a, b):
    s = a + b
    t = s - a
    return s, (a - (s - t)) + (b - t)


def fma64(a, b, c):
    """a * b + c rounded once, on float64 arrays (broadcast together).

    Error-free transformations give a * b + c = r + e2 + d exactly (Dekker's product, Knuth's
    sums); r is the correctly rounded result unless e2 + d sits at half a unit of r's last place,
    which the few elements near such a tie (or near a power of two, or out of the safe range)
    settle with exact rational arithmetic."""
    a, b, c = np.broadcast_arrays(np.asarray(a, f64), np.asarray(b, f64), np.asarray(c, f64))
    with np.errstate(all='ignore'):
        p = a * b
        a_hi, a_lo = _split(a)
        b_hi, b_lo = _split(b)
        pe = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
        s, e1 = _two_sum(p, c)
        t, d = _two_sum(e1, pe)
        r, e2 = _two_sum(s, t)
        half = np.spacing(np.abs(r)) / 2
        mant, _ = np.frexp(r)
        unsure = ((np.abs(np.abs(e2) - half) <= half * 2.0 ** -40) | (np.abs(mant) == 0.5)
                  | (np.abs(p) < 2.0 ** -900) | (np.abs(p) > 2.0 ** 900) | (np.abs(c) > 2.0 ** 900))
        finite = np.isfinite(a) & np.isfinite(b)
        # (a product that overflowed may have a finite sum: decided exactly too)
        unsure = (unsure & np.isfinite(p) | finite & ~np.isfinite(p)) & np.isfinite(c)
        # (not finite, or zero: p + c, whose zero has the right sign where the pairs' sums make +0;
        # an infinite c beside a finite product: c)
        r = np.where(np.isfinite(r) & (r != 0), r, p + c)
        r = np.where(finite & np.isinf(c), c, r)
    if unsure.any():
        from fractions import Fraction  # (here: fractions and decimal took ~2 ms of `import leafgrad`)
        r = np.array(r, dtype=f64)
        for i in map(tuple, np.argwhere(unsure)):  # (argwhere: a 0-d array's one element too)
            exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
            try:
                r[i] = float(exact) if exact else float(p[i] + c[i])
            except OverflowError:  # (beyond the largest double: rounded to infinity)
                r[i] = math.inf if exact > 0 else -math.inf
    return r


def libm(function, x):
    """``function`` (one of the ``math`` module's) on each element of a float64 array."""
    x = np.asarray(x, f64)
    return np.fromiter(map(function, x.ravel().tolist()), f64, count=x.size).reshape(x.shape)


_C_FLOAT = {}


def _c_float_function(name):
    """The C library's single-precision function ``name`` (``'acosf'``, ``'cosf'``, ...) through
    ctypes, or None where no C library with it can be loaded."""
    if name not in _C_FLOAT:
        function = None
        try:
            import ctypes  # (here: not at `import leafgrad`)
            for library in ('libm.so.6', None):  # (glibc; else the process's own symbols)
                try:
                    function = getattr(ctypes.CDLL(library), name)
                    break
                except (OSError, AttributeError):
                    continue
            if function is not None:
                function.restype, function.argtypes = ctypes.c_float, [ctypes.c_float]
        except ImportError:
            pass
        _C_FLOAT[name] = function
    return _C_FLOAT[name]


def libmf(name, x):
    """The C library's float function ``name`` (``'acosf'``, ``'cosf'``, ``'sinf'``: what PyTorch's
    scalar kernels call for std::acos(float) ...) on each element of a float32 array. glibc's float
    functions are not correctly rounded: the double function of ``math`` rounded to float32 differs
    from them in the last place for a few percent of inputs, and is only the fallback where the C
    library cannot be loaded."""
    x = np.asarray(x, f32)
    function = _c_float_function(name)
    if function is None:
        double = getattr(math, name[:-1])
        return np.fromiter(map(double, x.ravel().tolist()), f64, count=x.size).astype(f32).reshape(x.shape)
    return np.fromiter(map(function, x.ravel().tolist()), f32, count=x.size).reshape(x.shape)


# Cephes logf: log(1 + x) on [sqrt(1/2) - 1, sqrt(2) - 1] as x - x^2/2 + x^3 P(x)
_LOG_P = tuple(f32(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                                1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                                3.3333331174e-1))
_LN2_HI, _LN2_LO = f32(0.693359375), f32(-2.12194440e-4)  # ln 2 = hi + lo, hi with few bits


def log(x, fused=mul_add):
    """Natural logarithm of positive normal float32 numbers, as PyTorch's kernel computes it.
    (e * ln2_hi and z * 0.5 are exact in float32: adding them rounds once, as the fused
    multiply-add does.) ``fused`` computes the fused multiply-adds: ``mul_add`` is exact on the
    sampler's arguments 1 - u (u any of the 2**24 float uniforms: checked for every one), ``fma``
    on any."""
    m, e = np.frexp(x)  # x = m * 2**e, m in [0.5, 1)
    m = m.astype(f32)
    e = e.astype(f32)
    low = m < f32(0.707106781186547524)
    e -= low  # take m in [sqrt(1/2), sqrt(2)) instead
    x = (m - f32(1)) + np.where(low, m, f32(0))
    z = x * x
    y = fused(_LOG_P[0], x, _LOG_P[1])
    for coefficient in _LOG_P[2:]:
        y = fused(y, x, coefficient)
    y = fused(y * x, z, e * _LN2_LO)
    y -= z * f32(0.5)
    y += x
    y += e * _LN2_HI
    return y


# Cephes sinf/cosf: x reduced by multiples of pi/4 (pi/4 split in three parts), then a polynomial
_FOUR_OVER_PI = f32(1.27323954473516)
_PI4_PARTS = (f32(-0.78515625), f32(-2.4187564849853515625e-4), f32(-3.77489497744594108e-8))
_COS_P = (f32(2.443315711809948e-5), f32(-1.388731625493765e-3), f32(4.166664568298827e-2))
_SIN_P = (f32(-1.9515295891e-4), f32(8.3321608736e-3), f32(-1.6666654611e-1))


def sincos(x, fused=mul_add):
    """(sin x, cos x) of float32 numbers with |x| < 2**15, as PyTorch's kernel computes them.
    (The first two parts of pi/4 have 8 and 11 significant bits: their products with the
    octant are exact in float32, so those reductions round once, as the fused ones do.)
    ``fused`` as for ``log``: ``mul_add`` is exact on the sampler's angles 2 pi u (checked for
    all 2**24 of them), ``fma`` on any."""
    sin_negative = np.signbit(x)
    x = np.abs(x)
    j = (x * _FOUR_OVER_PI).astype(np.int32)
    j = (j + 1) & ~1  # the even octant at or above
    y = j.astype(f32)
    x += y * _PI4_PARTS[0]
    x += y * _PI4_PARTS[1]
    x = fused(y, _PI4_PARTS[2], x)
    sin_negative ^= (j & 4) != 0
    cos_negative = ((j - 2) & 4) == 0
    use_cos_poly_for_cos = (j & 2) == 0
    z = x * x
    c = fused(fused(_COS_P[0], z, _COS_P[1]), z, _COS_P[2]) * z
    c = fused(c, z, -(z * f32(0.5))) + f32(1)
    s = fused(fused(_SIN_P[0], z, _SIN_P[1]), z, _SIN_P[2]) * z
    s = fused(s, x, x)
    sin = np.where(use_cos_poly_for_cos, s, c)
    cos = np.where(use_cos_poly_for_cos, c, s)
    np.negative(sin, out=sin, where=sin_negative)
    np.negative(cos, out=cos, where=cos_negative)
    return sin, cos
