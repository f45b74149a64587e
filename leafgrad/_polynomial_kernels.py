"""The classical orthogonal polynomials of ``torch.special`` on NumPy arrays: Chebyshev's T, U,
V, W and their shifted forms (on [0, 1]), Hermite's H and He, Laguerre's L and Legendre's P.

Each kernel takes ``x`` (float32 or float64: the operands' common dtype) and ``n`` (int64: the
degree, truncated from that dtype as PyTorch's kernel casts it) and computes in ``x``'s dtype by
PyTorch's method (CPU), so that values agree to the last place or so: its special cases first
(n < 0 gives 0; the endpoints, where the polynomials have closed forms; the Chebyshev
polynomials of high degree inside (-1, 1) by their trigonometric forms; the Hermite polynomials
above degree 128 (float32) or 512 (float64) are NaN), then the three-term recurrence, which
stops at the first NaN. PyTorch's compiled kernels contract ``a * b - c`` into one fused
multiply-add (the product unrounded), which the recurrences amplify where they cancel; these
compute those steps as fused too (``fma``); the trigonometric forms call the C library's acos,
cos, sin (acosf ... in float32) as PyTorch's scalar kernels do, not NumPy's vectorised ones.
Where PyTorch's own result is undefined (a NaN ``x`` that reaches the recurrence leaves its result
unset) these give NaN. Called under ``errstate(all='ignore')``.
"""
import math

import numpy as np

from . import _kernel_math as km

_INT64_MIN = np.iinfo(np.int64).min


def _split(a):
    t = a * 134217729.0  # (2^27 + 1: Dekker's split of a float64 into two 26-bit halves)
    hi = t - (t - a)
    return hi, a - hi


def fma(a, b, c):
    """a * b + c rounded once (to the last place, but for a tie at most): float32 through float64,
    where the product is exact; float64 by error-free transformations (Dekker's product, Knuth's
    sum), and plainly where those overflow."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    se = (p - (s - bb)) + (c - bb)
    out = s + (pe + se)
    return np.where(np.isfinite(out), out, p + c)


def degrees(n):
    """The degree PyTorch's kernels take from ``n`` (of the common float dtype): C's truncation
    to int64, whose out-of-range results (NaN, infinities, |n| >= 2^63) are INT64_MIN on x86."""
    out = np.full(n.shape, _INT64_MIN, np.int64)
    ok = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    out[ok] = n[ok].astype(np.int64)
    return out


def _cases(x, n, rules, recurrence):
    """The first rule whose condition holds decides an element ((condition, value): functions of
    x and n, the value on the elements it decides); ``recurrence`` the others."""
    out = np.empty_like(x)
    todo = np.ones(x.shape, bool)
    for condition, value in rules:
        here = todo & condition(x, n)
        if here.any():
            out[here] = value(x[here], n[here])
        todo &= ~here
    if todo.any():
        out[todo] = recurrence(x[todo], n[todo])
    return out


def _recur(x, n, q, step, first, last, stop_at_nan=True):
    """p = 1, q given; r = step(k, x, p, q), p = q, q = r for k = first, first + 1, ... while
    k <= last(n) (and q is no NaN): the final q. The elements still running are stepped together
    between the degrees where one of them ends; a NaN q stays NaN through every step, so the
    stop at NaN only drops elements early (checked every 64 steps)."""
    T = x.dtype.type
    out = q.astype(x.dtype, copy=True)
    end = last(n)
    idx = np.flatnonzero((end >= first) & ~(stop_at_nan & np.isnan(out)))
    xa, pa, qa = x[idx], np.ones(idx.size, x.dtype), out[idx]
    k = first
    while idx.size:
        stop = end[idx].min()
        while k <= stop:
            pa, qa = qa, step(T, k, xa, pa, qa)
            k += 1
            if stop_at_nan and k % 64 == 0 and np.isnan(qa).any():
                break
        out[idx] = qa
        keep = end[idx] >= k
        if stop_at_nan:
            keep &= ~np.isnan(qa)
        idx, xa, pa, qa = idx[keep], xa[keep], pa[keep], qa[keep]
    return out


def _libm(double, single):
    """PyTorch's scalar kernels call the C library's acos, cos, sin (acosf ... in float32) one
    element at a time. NumPy's own vectorised arccos, cos, sin (SVML's on AVX-512 machines, its
    own float32 cos and sin everywhere) differ from them in the last place or two, which the
    trigonometric forms multiply by the degree: NumPy arrays take the C library's, element by
    element (device arrays their library's)."""
    vectorised = getattr(np, double.__name__.replace('acos', 'arccos'))

    def f(x):
        if type(x) is not np.ndarray:
            return vectorised(x)
        if x.dtype == np.float32:
            return km.libmf(single, x)
        return km.libm(double, x)
    return f


_acos, _cos, _sin = _libm(math.acos, 'acosf'), _libm(math.cos, 'cosf'), _libm(math.sin, 'sinf')


def _t(x):
    return x.dtype.type


def _const(value):
    return lambda x, n: np.full(x.shape, value, x.dtype)


def _signed(even_or_positive, value):
    """value (of n) where even_or_positive(x, n), else -value."""
    def f(x, n):
        v = value(x, n).astype(x.dtype)
        return np.where(even_or_positive(x, n), v, -v)
    return f


def _odd_even(x, n):
    return n % 2 == 0


def _x_positive_or_even(x, n):
    return (x > 0) | (n % 2 == 0)


def _n_plus_1(x, n):
    return n + 1


def _two_n_plus_1(x, n):
    return n + n + 1


def _ones_like(x, n):
    return np.ones(x.shape, np.int64)


def _chebyshev_step(T, k, x, p, q):
    return fma(x + x, q, -p)


def _until_n(n):
    return n


def chebyshev_t(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: np.abs(x) == 1, _signed(_x_positive_or_even, _ones_like)),
        (lambda x, n: (n > 6) & (np.abs(x) < 1), lambda x, n: _cos(n.astype(x.dtype) * _acos(x))),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: x),
    ], lambda x, n: _recur(x, n, x, _chebyshev_step, 2, _until_n))


def _u_trig(a, n, y):
    """U_n from the angle a = acos(y): sin((n+1) a) / sin(a), or its limit where sin(a) is 0."""
    m = (n + 1).astype(a.dtype)
    s = _sin(a)
    return np.where(s != 0, _sin(m * a) / s, m * _cos(m * a) / y)


def chebyshev_u(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: np.abs(x) == 1, _signed(_x_positive_or_even, _n_plus_1)),
        (lambda x, n: (n > 8) & (np.abs(x) < 1), lambda x, n: _u_trig(_acos(x), n, x)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: x + x),
    ], lambda x, n: _recur(x, n, x + x, _chebyshev_step, 2, _until_n))


def _v_trig(a, n):
    """V_n from a = acos(y): cos((n + 1/2) a) / cos(a / 2), or +-(2n + 1) where sin(a/2) is 1."""
    T = a.dtype.type
    half = a / T(2)
    limit = np.where(n % 2 == 0, 1, -1) * (n + n + 1)
    return np.where(_sin(half) != 1, _cos((n.astype(a.dtype) + T(0.5)) * a) / _cos(half),
                    limit.astype(a.dtype))


def _v_endpoint(x, n):
    """V_n(1) = 1, V_n(-1) = (-1)^n (2n + 1)."""
    return np.where(x > 0, 1, np.where(n % 2 == 0, 1, -1) * (n + n + 1)).astype(x.dtype)


def chebyshev_v(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: np.abs(x) == 1, _v_endpoint),
        (lambda x, n: (n > 8) & (np.abs(x) < 1), lambda x, n: _v_trig(_acos(x), n)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: x + x - _t(x)(1)),
    ], lambda x, n: _recur(x, n, x + x - _t(x)(1), _chebyshev_step, 2, _until_n))


def _w_limit(positive, n):
    """W_n(1) = 2n + 1, W_n(-1) = (-1)^n."""
    return np.where(positive, n + n + 1, np.where(n % 2 == 0, 1, -1))


def _w_trig(a, n, positive):
    T = a.dtype.type
    half = a / T(2)
    return np.where(_cos(half) != 1, _sin((n.astype(a.dtype) + T(0.5)) * a) / _sin(half),
                    _w_limit(positive, n).astype(a.dtype))


def chebyshev_w(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: np.abs(x) == 1, lambda x, n: _w_limit(x > 0, n).astype(x.dtype)),
        (lambda x, n: (n > 8) & (np.abs(x) < 1), lambda x, n: _w_trig(_acos(x), n, x > 0)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: x + x + _t(x)(1)),
    ], lambda x, n: _recur(x, n, x + x + _t(x)(1), _chebyshev_step, 2, _until_n))


# ---- the shifted Chebyshev polynomials: those of y = 2x - 1 ----------------------------------

def _y(x):
    return x + x - _t(x)(1)


def _shifted_step(T, k, x, p, q):
    y = x + x - T(1)
    return fma(y + y, q, -p)


def _inside(limit):
    return lambda x, n: (n > limit) & (np.abs(_y(x)) < 1)


def shifted_chebyshev_t(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: x == 1, _const(1)),
        (lambda x, n: x == 0, _signed(_odd_even, _ones_like)),
        (_inside(6), lambda x, n: _cos(n.astype(x.dtype) * _acos(_y(x)))),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: _y(x)),
    ], lambda x, n: _recur(x, n, _y(x), _shifted_step, 2, _until_n))


def shifted_chebyshev_u(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: x == 1, lambda x, n: (n + 1).astype(x.dtype)),
        (lambda x, n: x == 0, _signed(_odd_even, _n_plus_1)),
        (_inside(6), lambda x, n: _u_trig(_acos(_y(x)), n, _y(x))),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: _y(x) + _y(x)),
    ], lambda x, n: _recur(x, n, _y(x) + _y(x), _shifted_step, 2, _until_n))


def shifted_chebyshev_v(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: x == 1, _const(1)),
        (lambda x, n: x == 0, _signed(_odd_even, _two_n_plus_1)),
        (_inside(6), lambda x, n: _v_trig(_acos(_y(x)), n)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: _y(x) + _y(x) - _t(x)(1)),
    ], lambda x, n: _recur(x, n, _y(x) + _y(x) - _t(x)(1), _shifted_step, 2, _until_n))


def shifted_chebyshev_w(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: x == 1, lambda x, n: (n + n + 1).astype(x.dtype)),
        (lambda x, n: x == 0, _signed(_odd_even, _ones_like)),
        (_inside(4), lambda x, n: _w_trig(_acos(_y(x)), n, np.zeros(x.shape, bool))),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: _y(x) + _y(x) + _t(x)(1)),
    ], lambda x, n: _recur(x, n, _y(x) + _y(x) + _t(x)(1), _shifted_step, 2, _until_n))


# ---- Hermite, Laguerre, Legendre --------------------------------------------------------------

def _hermite_limit(x):
    return 128 if x.dtype == np.float32 else 512


def hermite_h(x, n):
    """H_{j+1} = 2x H_j - 2j H_{j-1} (no stop at NaN, as PyTorch's)."""
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: x + x),
        (lambda x, n: n > _hermite_limit(x), _const(np.nan)),
    ], lambda x, n: _recur(x, n, x + x, lambda T, j, x, p, q: fma(x + x, q, -(T(2 * j) * p)), 1, lambda n: n - 1,
                           stop_at_nan=False))


def hermite_he(x, n):
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: x),
        (lambda x, n: n > _hermite_limit(x), _const(np.nan)),
    ], lambda x, n: _recur(x, n, x, lambda T, k, x, p, q: fma(x, q, -(T(k) * p)), 1, lambda n: n - 1,
                           stop_at_nan=False))


def laguerre_l(x, n):
    def step(T, k, x, p, q):
        return fma(T(k + k) + (T(1) - x), q, -(T(k) * p)) / T(k + 1)
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: x == 0, _const(1)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: _t(x)(1) - x),
    ], lambda x, n: _recur(x, n, _t(x)(1) - x, step, 1, lambda n: n - 1))


def legendre_p(x, n):
    def step(T, k, x, p, q):
        return fma(T(k + k + 1) * x, q, -(T(k) * p)) / T(k + 1)
    return _cases(x, n, [
        (lambda x, n: n < 0, _const(0)),
        (lambda x, n: np.abs(x) == 1, _signed(_x_positive_or_even, _ones_like)),
        (lambda x, n: n == 0, _const(1)),
        (lambda x, n: n == 1, lambda x, n: x),
    ], lambda x, n: _recur(x, n, x, step, 1, lambda n: n - 1))
