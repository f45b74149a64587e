"""The special functions on float64 NumPy arrays: the forward computations behind
``ops/special_functions.py`` (its ops cast to and from the tensor's dtype around them), erfinv's
(``ops/unary.py``) and the random variates' (``ops/random_variates.py``).

Each follows the method whose results PyTorch (CPU) gives, so that values agree to a few units
in the last place:

- ``lgamma``: Stirling's series above 12, recurrences down to [1.5, 2.5), where the Taylor
  series of lgamma about 2 (coefficients (-1)^k (zeta(k) - 1) / k) keeps full relative accuracy
  around the zeros at 1 and 2; the reflection formula for negative arguments.
- ``digamma``: recurrence up to 10, then the asymptotic series in 1/x^2 (Bernoulli numbers);
  reflection below 0. ``trigamma``: six steps of the recurrence and four asymptotic terms, the
  formula PyTorch uses (its error, about 5e-10 relative, included).
- ``zeta``: the Hurwitz zeta function by Euler-Maclaurin summation (direct terms while the
  argument is below 9, then the tail integral and twelve Bernoulli corrections).
- ``gammainc``/``gammaincc``: the power series of P(a, x) below x = a + 1, the continued
  fraction of Q(a, x) above (modified Lentz).
- Bessel ``i0``/``i1`` (and their exponentially scaled forms): the power series, whose terms are
  all positive, up to |x| = 30; the asymptotic expansion in 1/x beyond.
- ``erfcx``: exp(x^2) erfc(x) with x^2 split into an exact head and a small tail; the asymptotic
  series where erfc underflows. ``ndtri``: the inverse of erfc by Halley's method from
  Winitzki's estimate, arranged so that every argument is exact.
"""
import functools
import math

import numpy as np

from . import backend

_EULER = 0.57721566490153286061
_LOG_SQRT_2PI = 0.91893853320467274178  # log(2 pi) / 2
_INV_SQRT_PI = 0.56418958354775628695
_MACHEP = 2.0 ** -53


@functools.cache
def _bernoulli(n):
    """B_0 .. B_n as Fractions (Akiyama-Tanigawa), with B_1 = +1/2."""
    from fractions import Fraction  # (here: fractions and decimal took ~2 ms of `import leafgrad`)
    out, row = [], []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    return out


def _module(*values):
    """The array module of the first GPU array among ``values`` (CuPy's), else NumPy: where a
    kernel makes an array from a number or a shape, it makes it on its operands' device."""
    for v in values:
        if type(v) is not np.ndarray:
            m = backend.array_module(v)
            if m is not np:
                return m
    return np


def gpu_special(name, x):
    """cupyx.scipy.special's ``name`` (erf, erfc) of a GPU's array: CuPy has no frompyfunc to run
    math's function elementwise, and its SciPy functions are one kernel each. (Not on the
    stand-in for CuPy of the tests, which has no cupyx.)"""
    import cupyx.scipy.special  # (on a GPU only: CuPy's import is not paid by CPU programs)
    return getattr(cupyx.scipy.special, name)(x)


def _polyval(coefs, z):
    """sum coefs[k] z^k (Horner, highest power first)."""
    acc = np.full_like(z, coefs[-1])
    for c in coefs[-2::-1]:
        acc = acc * z + c
    return acc


# ---- lgamma ---------------------------------------------------------------------------------

@functools.cache
def _lgamma_constants():
    b = _bernoulli(20)
    # Stirling: sum_k B_2k / (2k (2k-1) x^(2k-1)), as coefficients of 1/x^2 after one 1/x
    stirling = [float(b[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, 10)]
    # lgamma(2 + z) = (1 - euler) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k  (|z| <= 1/2)
    zeta_minus_1 = zeta(np.arange(2, 40, dtype=np.float64), np.full(38, 2.0))
    taylor = [0.0, 1 - _EULER] + [(-1) ** k * zeta_minus_1[k - 2] / k for k in range(2, 40)]
    return stirling, taylor


def _lgamma_near_2(z):
    """lgamma(2 + z) for |z| <= 1/2, with full relative accuracy at z = 0."""
    return _polyval(_lgamma_constants()[1], z)


def _lgamma_positive(x):
    """lgamma for x > 0 (finite)."""
    stirling = _lgamma_constants()[0]
    out = np.empty_like(x)
    small = x < 0.5                       # lgamma(x) = lgamma(2 + x) - log(1 + x) - log(x)
    xs = x[small]
    out[small] = _lgamma_near_2(xs) - np.log1p(xs) - np.log(xs)
    near1 = (x >= 0.5) & (x < 1.5)        # lgamma(x) = lgamma(2 + (x - 1)) - log(x)
    xs = x[near1]
    out[near1] = _lgamma_near_2(xs - 1) - np.log1p(xs - 1)
    mid = (x >= 1.5) & (x < 12)           # down to y in [1.5, 2.5): lgamma(x) = lgamma(y) + log(y (y+1) ...)
    xs = x[mid]
    steps = np.floor(xs - 1.5)
    y = xs - steps                        # exact: both have the exponent of a number below 16
    prod = np.ones_like(xs)
    for k in range(int(steps.max()) if xs.size else 0):
        prod = np.where(steps > k, prod * (y + k), prod)
    out[mid] = _lgamma_near_2(y - 2) + np.log(prod)
    big = x >= 12                         # Stirling's series
    xs = x[big]
    inv = 1 / xs
    out[big] = (xs - 0.5) * np.log(xs) - xs + _LOG_SQRT_2PI + inv * _polyval(stirling, inv * inv)
    return out


def _sinpi(x):
    """sin(pi x) with the argument reduced exactly first."""
    n = np.round(x)
    s = np.sin(np.pi * (x - n))
    return np.where(np.fmod(n, 2) == 0, s, -s)


def lgamma(x):
    with np.errstate(all='ignore'):
        out = np.full_like(x, np.inf)    # poles (0 and the negative integers) and +-inf
        pos = (x > 0) & np.isfinite(x)
        out[pos] = _lgamma_positive(x[pos])
        neg = (x < 0) & (x != np.floor(x)) & np.isfinite(x)
        xs = x[neg]
        # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x); between -1/2 and 0
        # lgamma(x) = lgamma(1 + x) - log(-x) keeps the digits of the small x
        near0 = xs > -0.5
        res = np.empty_like(xs)
        xn = xs[near0]
        res[near0] = _lgamma_near_2(xn) - np.log1p(xn) - np.log(-xn)
        xf = xs[~near0]
        res[~near0] = np.log(np.pi / np.abs(_sinpi(xf))) - _lgamma_positive(1 - xf)
        out[neg] = res
        out[np.isnan(x)] = np.nan
    return out


# ---- digamma, trigamma, polygamma, zeta -------------------------------------------------------

@functools.cache
def _digamma_constants():
    b = _bernoulli(16)
    # psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k), k = 1..7 (x >= 10)
    series = [float(b[2 * k] / (2 * k)) for k in range(1, 8)]
    psi_10 = 7129 / 2520 - _EULER  # H_9 - euler
    return series, psi_10


def _digamma_nonneg(x):
    """digamma for x > 0."""
    series, psi_10 = _digamma_constants()
    result = np.zeros_like(x)
    x = x.copy()
    for _ in range(10):  # push x up to 10
        low = x < 10
        if not low.any():
            break
        result[low] -= 1 / x[low]
        x[low] += 1
    z = 1 / (x * x)
    tail = np.where(x < 1e17, z * _polyval(series, z), 0.0)
    return np.where(x == 10, result + psi_10, result + np.log(x) - 0.5 / x - tail)


def digamma(x):
    with np.errstate(all='ignore'):
        out = np.empty_like(x)
        pos = ~(x < 0)  # x >= 0 and NaN
        out[pos] = _digamma_nonneg(x[pos])
        neg = x < 0
        xs = x[neg]
        frac = np.fmod(xs, 1.0)  # tan(pi r) of the fractional part r is exact where tan(pi x) is not
        res = _digamma_nonneg(1 - xs) - np.pi / np.tan(np.pi * frac)
        out[neg] = np.where(frac == 0, np.nan, res)
        zero = x == 0
        out[zero] = np.copysign(np.inf, -x[zero])
    return out


def trigamma(x):
    with np.errstate(all='ignore'):
        sign = np.where(x < 0.5, -1.0, 1.0)
        s = np.sin(np.pi * x)
        result = np.where(x < 0.5, -(np.pi * np.pi) / (s * s), 0.0)
        x = np.where(x < 0.5, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (x * x)
            x = x + 1
        ixx = 1 / (x * x)
        result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
        return sign * result


@functools.cache
def _zeta_constants():
    b = _bernoulli(24)
    return [float(math.factorial(2 * k) / b[2 * k]) for k in range(1, 13)]  # (2k)! / B_2k


def zeta(s, q):
    """The Hurwitz zeta function sum_{k>=0} (k + q)^-s (s > 1), elementwise, broadcast."""
    m = _module(s, q)  # (a number s or q made on the other's device)
    s, q = np.broadcast_arrays(m.asarray(s, dtype=np.float64), m.asarray(q, dtype=np.float64))
    out = m.empty(s.shape)
    with np.errstate(all='ignore'):
        # the direct terms (q + k)^-s, k = 0 .. n: at least nine of them, and until q + n > 9
        decided = ~np.isfinite(q) | ((q <= 0) & ((q == np.floor(q)) | (s != np.floor(s))))  # inf or NaN
        n = np.where(decided, 9, np.maximum(9, np.floor(9 - np.where(decided, 0, q)) + 1))
        # (a sum stops, as PyTorch's does, once a term falls below 2^-53 of it)
        total = np.power(q, -s)
        a = q.copy()
        b = m.zeros(s.shape)
        done = m.zeros(s.shape, dtype=bool)
        loop = n <= 64
        looped = n[loop]  # (CuPy's max has no initial=)
        for k in range(1, int(looped.max()) + 1 if looped.size else 1):
            go = loop & (n >= k) & ~done
            a = np.where(go, q + k, a)
            b = np.where(go, np.power(a, -s), b)
            total = np.where(go, total + b, total)
            done |= go & (np.abs(b) < _MACHEP * total)
        for i in zip(*np.nonzero(~loop)):  # many terms: sum them at once
            terms = np.power(q[i] + m.arange(1, int(n[i]) + 1), -s[i])
            total[i] += terms.sum()
            a[i], b[i] = q[i] + n[i], terms[-1]
        # Euler-Maclaurin tail from w = a: the integral, half the last term, Bernoulli terms
        w = a
        total = np.where(done, total, total + b * w / (s - 1) - 0.5 * b)
        fac = m.ones(s.shape)
        k = 0.0
        for denom in _zeta_constants():
            fac = fac * (s + k)
            b = b / w
            term = fac * b / denom
            total = np.where(done, total, total + term)
            done |= np.abs(term / total) < _MACHEP
            k += 1
            fac = fac * (s + k)
            b = b / w
            k += 1
        out[...] = total
        out[s == 1] = np.inf
        out[s < 1] = np.nan
        nonpos = q <= 0
        out[nonpos & (q == np.floor(q))] = np.inf
        out[nonpos & (q != np.floor(q)) & (s != np.floor(s))] = np.nan
        out[np.isnan(s) | np.isnan(q)] = np.nan
    return out


def polygamma(n, x):
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    with np.errstate(all='ignore'):
        return (1.0 if n % 2 else -1.0) * math.exp(lgamma(np.array([n + 1.0]))[0]) * zeta(n + 1.0, x)


# ---- regularized incomplete gamma functions ---------------------------------------------------

def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a))."""
    return a * np.log(x) - x - lgamma(a)


def _gammainc_series(a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1) ... (a+n))."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    ap = a.copy()
    for _ in range(2000):
        ap = ap + 1
        term = term * x / ap
        total = total + term
        if not (np.abs(term) > np.abs(total) * 1e-17).any():
            break
    return np.exp(_log_prefactor(a, x) - np.log(a)) * total


def _gammaincc_fraction(a, x):
    """Q(a, x) by the continued fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), Lentz."""
    tiny = 1e-300
    b = x + 1 - a
    c = np.full_like(x, 1 / tiny)
    d = 1 / np.where(b == 0, tiny, b)
    h = d.copy()
    for i in range(1, 2000):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        delta = d * c
        h = h * delta
        if not (np.abs(delta - 1) > 1e-16).any():
            break
    return np.exp(_log_prefactor(a, x)) * h


def gammainc(a, x, upper=False):
    """P(a, x) (``upper``: Q(a, x) = 1 - P(a, x)), with PyTorch's values at the edges."""
    m = _module(a, x)  # (a number a or x made on the other's device)
    a, x = np.broadcast_arrays(m.asarray(a, dtype=np.float64), m.asarray(x, dtype=np.float64))
    out = m.full(a.shape, np.nan)
    with np.errstate(all='ignore'):
        inside = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
        ai, xi = a[inside], x[inside]
        res = m.empty(ai.shape)
        series = xi < ai + 1
        p = _gammainc_series(ai[series], xi[series])
        res[series] = 1 - p if upper else p
        q = _gammaincc_fraction(ai[~series], xi[~series])
        res[~series] = q if upper else 1 - q
        out[inside] = res
        # the edges, as PyTorch: P(0, x > 0) = 1, P(a, 0) = 0, P(a, inf) = 1, P(inf, x) = 0
        lower_one = ((a == 0) & (x > 0)) | ((x == np.inf) & (a > 0) & (a < np.inf))
        lower_zero = ((x == 0) & (a > 0)) | ((a == np.inf) & (x >= 0) & (x < np.inf))
        out[lower_one] = 0.0 if upper else 1.0
        out[lower_zero] = 1.0 if upper else 0.0
    return out


# ---- modified Bessel functions of order 0 and 1 ----------------------------------------------

_BESSEL_SERIES_LIMIT = 30.0


def _bessel_series(x, order):
    """I_order(x) for |x| <= 30: sum_k (x/2)^(2k + order) / (k! (k + order)!), all terms positive."""
    q = x * x / 4
    term = np.ones_like(x) if order == 0 else x / 2
    total = term.copy()
    for k in range(1, 80):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _bessel_scaled_asymptotic(ax, order):
    """e^-x I_order(x) sqrt(2 pi x) for x > 30: sum_k prod_j (4 order^2 - (2j-1)^2) / (-8 j x)."""
    mu = 4.0 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for j in range(1, 60):
        term = term * (mu - (2 * j - 1) ** 2) / (-8.0 * j * ax)
        total = total + term
    return total / np.sqrt(2 * np.pi * ax)


def bessel_i(x, order, scaled):
    """I_0 or I_1 (``scaled``: times exp(-|x|))."""
    out = np.empty_like(x)
    with np.errstate(all='ignore'):
        ax = np.abs(x)
        small = ax <= _BESSEL_SERIES_LIMIT
        xs = x[small]
        series = _bessel_series(xs, order)
        out[small] = (series * np.exp(-np.abs(xs)) if scaled else series) + 0.0  # (at -0: 0, as PyTorch)
        big = ~small
        xb, axb = x[big], ax[big]
        res = _bessel_scaled_asymptotic(axb, order)
        if order == 1:
            res = np.copysign(res, xb)
        if not scaled:
            half = np.exp(axb / 2)  # e^|x| in two halves: I(x) is finite a little beyond e^x's overflow
            res = res * half * half
        res[np.isnan(xb)] = np.nan
        out[big] = res
    return out


# ---- erf and erfc: the C library's method, on whole arrays ------------------------------------
#
# Sun's fdlibm rational approximations (glibc's s_erf.c up to 2.40, whose erf and erfc
# math.erf and math.erfc call), evaluated in glibc's split order, one region of |x| at a time on
# the elements that lie there: [0, 0.84375) x + x R(x^2); [0.84375, 1.25) a constant plus a
# rational function of |x| - 1; beyond, exp(-x^2 - 0.5625 + R(1/x^2)) / |x| with x^2 split at a
# 21-bit head so that it is exact, on two approximations meeting at 1/0.35. Against the
# scalar loop it replaces (~70 ns an element), 5-10 times faster; the values are the C
# library's but where NumPy's exp and glibc's differ in the last bit (about 1 in 10^4 beyond
# 1.25, then by one unit in the last place).

_ERX = 8.45062911510467529297e-01  # erf(1) rounded to 24 bits
_EFX = 1.28379167095512586316e-01  # 2/sqrt(pi) - 1
_ERF_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
           -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_ERF_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
           1.32494738004321644526e-04, -3.96022827877536812320e-06)
_ERF_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
           3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
           -2.16637559486879084300e-03)
_ERF_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
           1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_ERFC_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
            -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
            -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_ERFC_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
            6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
            6.57024977031928170135e+00, -6.04244152148580987438e-02)
_ERFC_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
            -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
            -4.83519191608651397019e+02)
_ERFC_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
            3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
            -2.24409524465858183362e+01)
_ERF_SMALL = 0.84375
_ERF_MIDDLE = 1.25
_ERFC_SPLIT_ERF = float.fromhex('0x1.6db6e00000000p+1')   # ~1/0.35, where erf's two tails meet
_ERFC_SPLIT_ERFC = float.fromhex('0x1.6db6d00000000p+1')  # (erfc's test is one step lower)


def _poly_pairs(t, t2, c, pairs, last=None):
    """(c0 + t c1) + t2 (c2 + t c3) + t2^2 (c4 + t c5) ..., summed left to right as glibc writes
    it, with the powers ``pairs`` (t2, t4, t6 ...) given, plus ``last`` (power, coefficient);
    in place in as few new arrays as the order allows (each new mid-size array costs the
    allocator more than the arithmetic)."""
    total = t * c[1]
    total += c[0]
    term = np.empty_like(t)
    for k, power in enumerate(pairs, 1):
        if 2 * k + 1 < len(c):
            np.multiply(t, c[2 * k + 1], out=term)
            term += c[2 * k]
            term *= power
        else:
            np.multiply(power, c[2 * k], out=term)
        total += term
    if last is not None:
        np.multiply(last[0], last[1], out=term)
        total += term
    return total


def _erf_near_zero(x):
    """(erf(x) - x) / x for |x| < 0.84375 (elsewhere a number to overwrite)."""
    z = x * x
    z2 = z * z
    z4 = z2 * z2
    r = _poly_pairs(z, z2, _ERF_PP, (z2, z4))
    s = _poly_pairs(z, z2, _ERF_QQ, (z2, z4))
    r /= s
    return r


def _erf_near_one(ax):
    """erf(|x|) - erf(1)'s 24-bit value, for 0.84375 <= |x| < 1.25."""
    s = ax - 1.0
    s2 = s * s
    s4 = s2 * s2
    s6 = s4 * s2
    p = _poly_pairs(s, s2, _ERF_PA, (s2, s4, s6))
    q = _poly_pairs(s, s2, _ERF_QA, (s2, s4, s6))
    p /= q
    return p


def _erfc_tail(ax, split):
    """erfc(|x|) for 1.25 <= |x| (< 28): exp(-x^2 - 0.5625 + R/S) / |x|, R/S in 1/x^2."""
    s = ax * ax
    np.divide(1.0, s, out=s)
    s2 = s * s
    s4 = s2 * s2
    s6 = s4 * s2
    near = ax < split
    if near.all():  # [1.25, 1/0.35)
        r = _poly_pairs(s, s2, _ERFC_RA, (s2, s4, s6))
        r /= _poly_pairs(s, s2, _ERFC_SA, (s2, s4, s6), (s4 * s4, _ERFC_SA[8]))
    else:
        far = _poly_pairs(s, s2, _ERFC_RB, (s2, s4, s6))  # [1/0.35, 28)
        far /= _poly_pairs(s, s2, _ERFC_SB, (s2, s4, s6))
        r = far
        if near.any():
            t, t2, t4, t6 = s[near], s2[near], s4[near], s6[near]
            nr = _poly_pairs(t, t2, _ERFC_RA, (t2, t4, t6))
            nr /= _poly_pairs(t, t2, _ERFC_SA, (t2, t4, t6), (t4 * t4, _ERFC_SA[8]))
            r[near] = nr
    # x^2 = z^2 - (z - x)(z + x), z: x with its low 32 bits cleared, so that z^2 is exact
    z = (ax.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    d = z - ax
    d *= z + ax
    d += r
    np.exp(d, out=d)
    e = np.negative(z)
    e *= z
    e -= 0.5625
    np.exp(e, out=e)
    e *= d
    e /= ax
    return e


def _beyond_near_zero(x, ax):
    """The positions of the elements with |x| >= 0.84375 (NaN is not among them: it keeps the
    first region's NaN), their x and their |x|; for a normal sample, a quarter of them."""
    rest = np.flatnonzero(ax >= _ERF_SMALL)  # (integer positions: a take and a put cost a third
    return rest, x.take(rest), ax.take(rest)  # of boolean indexing with an irregular mask)


_ERF_BLOCK = 65536  # elements computed together (measured best, 64K to 1M elements: 13-14 ns an element)


def _on_float64_arrays(name):
    """erf's and erfc's entry: a GPU's array to cupyx.scipy.special (``name``), an array of any
    shape or more than _ERF_BLOCK elements in flat blocks; the function itself sees a flat block,
    with NumPy's floating-point warnings off (its unused branches overflow)."""
    def decorate(block_fn):
        @functools.wraps(block_fn)
        def fn(x):
            if type(x) is not np.ndarray and _module(x) is not np:
                return gpu_special(name, x)
            if x.ndim != 1 or x.size > _ERF_BLOCK:
                return _blockwise(fn, x)
            with np.errstate(all='ignore'):
                return block_fn(x)
        return fn
    return decorate


def _blockwise(fn, x):
    """``fn`` of ``x`` (any shape), computed on flat blocks of at most _ERF_BLOCK elements, so
    that the dozen float64 temporaries of a block stay in the cache."""
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    for start in range(0, flat.size, _ERF_BLOCK):
        out[start:start + _ERF_BLOCK] = fn(flat[start:start + _ERF_BLOCK])
    return out.reshape(x.shape)


@_on_float64_arrays('erf')
def erf(x):
    """erf of a float64 array (see the note above)."""
    out = x * _erf_near_zero(x)  # x + x R(x^2), on every element: polynomials cost less
    out += x                     # than picking out the three quarters of a sample it fits
    ax = np.abs(x)
    tiny = ax < 2.0 ** -28
    if tiny.any():  # (where R adds nothing, the C library's own form: x + (2/sqrt(pi) - 1) x)
        xt = x[tiny]
        out[tiny] = np.where(ax[tiny] < 2.0 ** -1015, 0.0625 * (16.0 * xt + (16.0 * _EFX) * xt),
                             xt + _EFX * xt)
    rest, xr, ar = _beyond_near_zero(x, ax)
    if rest.size:
        vals = np.ones_like(ar)  # (|x| >= 6: 1)
        middle = ar < _ERF_MIDDLE
        vals[middle] = _ERX + _erf_near_one(ar[middle])
        tail = ~middle & (ar < 6.0)
        vals[tail] = 1.0 - _erfc_tail(ar[tail], _ERFC_SPLIT_ERF)
        out[rest] = np.copysign(vals, xr)
    return out


@_on_float64_arrays('erfc')
def erfc(x):
    """erfc of a float64 array (see the note above)."""
    xy = x * _erf_near_zero(x)
    # below 1/4: 1 - erf(x); above, 0.5 - ((x - 0.5) + x y), which keeps erfc's digits
    low = 1.0 - (x + xy)
    xy += x - 0.5
    out = np.where(x < 0.25, low, 0.5 - xy)
    rest, xr, ar = _beyond_near_zero(x, np.abs(x))
    if rest.size:
        vals = np.where(xr > 0, 0.0, 2.0)  # (|x| >= 28, and x <= -6)
        middle = ar < _ERF_MIDDLE
        pq = _erf_near_one(ar[middle])
        vals[middle] = np.where(xr[middle] >= 0, (1.0 - _ERX) - pq, 1.0 + (_ERX + pq))
        tail = ~middle & (ar < 28.0) & (xr > -6.0)
        r = _erfc_tail(ar[tail], _ERFC_SPLIT_ERFC)
        vals[tail] = np.where(xr[tail] > 0, r, 2.0 - r)
        out[rest] = vals
    return out


# ---- erfcx, the normal distribution's cdf and its inverse -------------------------------------

def erfcx(x):
    """exp(x^2) erfc(x)."""
    out = np.empty_like(x)
    with np.errstate(all='ignore'):
        big = x >= 26  # erfc underflows: 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k
        xb = x[big]
        term = np.ones_like(xb)
        total = term.copy()
        for k in range(1, 30):
            term = term * -(2 * k - 1) / (2 * xb * xb)
            total = total + term
        out[big] = total * _INV_SQRT_PI / xb
        xs = x[~big]
        head = xs.astype(np.float32).astype(np.float64)  # head^2 is exact: exp(x^2) without the rounding of x^2
        tail = xs - head
        out[~big] = np.exp(head * head) * np.exp(tail * (head + xs)) * erfc(xs)
        out[x < -27] = np.inf  # exp(x^2) overflows (before the float32 head would)
    return out


def log_ndtr(x):
    """log of the standard normal cdf: log(erfcx(-t) / 2) - t^2 below -1, log1p(-erfc(t) / 2)
    above (t = x / sqrt 2)."""
    with np.errstate(all='ignore'):
        t = x * math.sqrt(0.5)
        low = x < -1
        tl = t[low]
        out = np.empty_like(x)
        out[low] = np.log(erfcx(-tl) / 2) - tl * tl
        out[~low] = np.log1p(-erfc(t[~low]) / 2)
    return out


def _erfcinv(q):
    """The y >= 0 with erfc(y) = q, for 0 < q < 1/2: Winitzki's estimate (relative error about
    2e-3), then Halley steps on q - erfc(y); below 1e-10 (where erfc(y) may be subnormal),
    Newton steps on log erfc(y) - log q instead, log erfc(y) being log erfcx(y) - y^2."""
    ln = np.log(q * (2 - q))
    t = 2 / (math.pi * 0.147) + ln / 2
    y = np.sqrt(np.maximum(np.sqrt(t * t - ln / 0.147) - t, 0.0))
    tiny = q < 1e-10
    yt, log_q = y[tiny], np.log(q[tiny])
    for _ in range(5):
        scaled = erfcx(yt)
        yt = yt + (np.log(scaled) - yt * yt - log_q) * (math.sqrt(math.pi) / 2) * scaled
    ys, qs = y[~tiny], q[~tiny]
    for _ in range(4):
        f = qs - erfc(ys)  # = erf(y) - (1 - q)
        d = 2 / math.sqrt(math.pi) * np.exp(-ys * ys)
        ys = ys - f / (d + ys * f)
    y[tiny], y[~tiny] = yt, ys
    return y


def erfinv(y):
    """erfinv: Winitzki's closed-form estimate (relative error ~2e-3), then Halley steps, each
    of which roughly triples the correct digits (in float64). For |y| >= 0.5 the steps solve
    erfc(x) = 1 - |y| instead, which keeps its digits as |y| approaches 1. (In ``y``'s dtype:
    computed in float64.)"""
    y64 = y.astype(np.float64, copy=False)
    a = np.abs(y64)
    inner = a < 1
    with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
        ln = np.log((1 - a) * (1 + a))
        t = 2 / (math.pi * 0.147) + ln / 2
        x = np.where(inner, np.sqrt(np.sqrt(t * t - ln / 0.147) - t), 0.0)
        tail = a >= 0.5
        for _ in range(4):
            # f(x) = erf(x) - a, or erfc(x) - (1 - a) = -(erf(x) - a) computed without cancellation
            f = np.where(tail, (1 - a) - erfc(x), erf(x) - a)
            d = 2 / math.sqrt(math.pi) * np.exp(-x * x)
            x = np.where(inner, x - f / (d + x * f), x)
        x = np.copysign(np.where(a == 1, np.inf, np.where((a > 1) | np.isnan(a), np.nan, x)), y64)
    return x.astype(y.dtype, copy=False)


def ndtri(p):
    """The standard normal quantile: -sqrt2 erfcinv(2p) below 1/4, sqrt2 erfinv(2p - 1) in the
    middle (2p - 1 exact there), sqrt2 erfcinv(2(1 - p)) above 3/4 (1 - p exact)."""
    out = np.empty_like(p)
    with np.errstate(all='ignore'):
        low = p < 0.25
        high = p > 0.75
        mid = ~low & ~high
        out[low] = -math.sqrt(2) * _erfcinv(2 * p[low])
        out[high] = math.sqrt(2) * _erfcinv(2 * (1 - p[high]))
        out[mid] = math.sqrt(2) * erfinv(2 * p[mid] - 1)
        out[p == 0] = -np.inf
        out[p == 1] = np.inf
        out[(p < 0) | (p > 1) | np.isnan(p)] = np.nan
    return out
