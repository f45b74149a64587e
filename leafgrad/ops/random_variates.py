"""Random variates that PyTorch draws in C++: ``_standard_gamma`` (with its reparametrised
derivative), ``_sample_dirichlet``, ``poisson`` and ``binomial``, and the functions behind the
derivatives of Gamma, Beta and Dirichlet samples, ``_standard_gamma_grad`` and
``_dirichlet_grad``.

The gamma sampler (behind ``_standard_gamma``, ``_sample_dirichlet`` and so Gamma, Chi2, Beta,
Dirichlet and StudentT) is PyTorch's: Marsaglia and Tsang's rejection, boosted below
alpha = 1, run element by element in memory order on float64 uniforms and Box-Muller normals
of the generator's stream, with its float32 constants: a seeded program draws PyTorch's numbers
and leaves the generator where PyTorch's leaves it. ``poisson`` and ``binomial`` use the
textbook methods PyTorch also uses (Hormann's transformed rejection for rates, or count * p,
of 10 and more; inversion below), vectorised through ``leafgrad.rand`` with the ``generator``
given: every round of a rejection loop draws for the elements still waiting, so they follow
PyTorch's distributions with leafgrad's own numbers.

Reparametrised derivatives (``rsample``): a sample x of Gamma(alpha, 1) moves with alpha by
dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha), where P is the gamma cdf and p its density
(implicit differentiation of P(alpha, x) = u). PyTorch approximates this quantity (Taylor
series, saddle-point expansions and fitted rational functions, about 1e-3 relative error
and up to about 1e-2 for alpha near 1); leafgrad computes it to ~1e-13: the power series of P
(below x = alpha + 1) or its continued fraction (above) carry their derivative in alpha along,
term by term. ``_dirichlet_grad`` is the same quantity for the Beta(alpha, total - alpha)
marginal of a Dirichlet sample, from the continued fraction of the incomplete beta function.

Each op is declared once (``_op.Op``), a function only (``torch.<name>``, no method, no ``out=``,
as PyTorch's).
"""
import math

import numpy as np

from .. import _random_kernels as kernels
from ..generator import Generator, generator_of
from .. import _special_kernels as K
from ._op import Op
from ._util import SCALAR_NAMES, NotImplementedNode, record, saved_output, wrap, xp
from .._arg_parser import refuse_arguments

_TINY = 1e-300


def _settled(step, dstep, dlog):
    """Whether a continued fraction and its derivative have stopped changing (every element)."""
    return not ((np.abs(step) > 1e-16) | (np.abs(dstep) > 1e-16 * (np.abs(dlog) + 1e-300))).any()


# ---- the reparametrised derivative of gamma samples ----------------------------------------------

def _gamma_grad_series(a, x):
    """dx/da below x = a + 1, from P(a, x) = x^a e^-x / Gamma(a+1) sum_n t_n, t_n = x^n / ((a+1)...(a+n)):
    dP/da = (P-prefactor) [(log x - digamma(a+1)) sum t_n - sum t_n H_n], H_n = sum_k<=n 1/(a+k),
    and the density is the prefactor times a / x."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    weighted = np.zeros_like(x)
    harmonic = np.zeros_like(x)
    ak = a.copy()
    for _ in range(5000):
        ak = ak + 1
        term = term * x / ak
        harmonic = harmonic + 1 / ak
        total = total + term
        weighted = weighted + term * harmonic
        if not (term * (1 + harmonic) > 1e-17 * (total + weighted)).any():
            break
    dp = (np.log(x) - K.digamma(a + 1)) * total - weighted
    return -dp * x / a


def _gamma_grad_fraction(a, x):
    """dx/da above x = a + 1, from Q(a, x) = x^a e^-x / Gamma(a) h, h the continued fraction
    1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), evaluated (modified Lentz) together with
    its derivative in a: dx/da = dQ/da / density = x [(log x - digamma(a)) h + dh/da]."""
    b, db = x + 1 - a, -np.ones_like(x)
    c, dc = np.full_like(x, 1 / _TINY), np.zeros_like(x)
    d = 1 / b
    dd = -db * d * d
    h, dh = d.copy(), dd.copy()
    for i in range(1, 5000):
        an, dan = -i * (i - a), float(i)
        b = b + 2
        den = an * d + b
        dden = dan * d + an * dd + db
        den = np.where(np.abs(den) < _TINY, _TINY, den)
        d = 1 / den
        dd = -dden * d * d
        cn = b + an / c
        dc = db + dan / c - an * dc / (c * c)
        c = np.where(np.abs(cn) < _TINY, _TINY, cn)
        delta = d * c
        ddelta = dd * c + d * dc
        dh = dh * delta + h * ddelta
        h = h * delta
        # (at integer a the fraction ends, delta stays 1, but its derivative goes on)
        if _settled(delta - 1, ddelta, dh / h):
            break
    return x * ((np.log(x) - K.digamma(a)) * h + dh)


def standard_gamma_grad(alpha, x):
    """dx/dalpha for x ~ Gamma(alpha, 1) (float64 arrays, broadcast)."""
    alpha, x = np.broadcast_arrays(np.asarray(alpha, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.zeros(alpha.shape)
    with np.errstate(all='ignore'):
        ok = (alpha > 0) & (x > 0) & np.isfinite(alpha) & np.isfinite(x)
        a, v = alpha[ok], x[ok]
        series = v < a + 1
        res = np.empty(a.shape)
        res[series] = _gamma_grad_series(a[series], v[series])
        res[~series] = _gamma_grad_fraction(a[~series], v[~series])
        out[ok] = np.where(np.isfinite(res), res, 0.0)
    return out


# ---- the reparametrised derivative of Dirichlet (Beta) samples ----------------------------------

def _beta_fraction(x, a, b):
    """The continued fraction of I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * f with its derivatives
    in a and in b: (f, df/da, df/db), modified Lentz, converging fast for x < (a+1)/(a+b+2)."""
    one = np.ones_like(x)
    zero = np.zeros_like(x)
    # f = 1 / (1 + d1 / (1 + d2 / (1 + ...))); each d_m is a function of a and b
    c, dca, dcb = one.copy(), zero.copy(), zero.copy()
    den = 1 - (a + b) * x / (a + 1)
    dden_a = -(x / (a + 1) - (a + b) * x / ((a + 1) ** 2))
    dden_b = -x / (a + 1)
    den = np.where(np.abs(den) < _TINY, _TINY, den)
    d = 1 / den
    dda, ddb = -dden_a * d * d, -dden_b * d * d
    h, dha, dhb = d.copy(), dda.copy(), ddb.copy()
    for m in range(1, 5000):
        for even in (True, False):
            if even:  # d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m))
                p, q = a + 2 * m - 1, a + 2 * m
                coef = m * (b - m) * x / (p * q)
                dcoef_a = -coef * (1 / p + 1 / q)
                dcoef_b = m * x / (p * q)
            else:  # d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
                p, q = a + 2 * m, a + 2 * m + 1
                coef = -(a + m) * (a + b + m) * x / (p * q)
                dcoef_a = -((a + b + m) + (a + m)) * x / (p * q) - coef * (1 / p + 1 / q)
                dcoef_b = -(a + m) * x / (p * q)
            den = 1 + coef * d
            dden_a = dcoef_a * d + coef * dda
            dden_b = dcoef_b * d + coef * ddb
            den = np.where(np.abs(den) < _TINY, _TINY, den)
            d = 1 / den
            dda, ddb = -dden_a * d * d, -dden_b * d * d
            cn = 1 + coef / c
            dca_new = dcoef_a / c - coef * dca / (c * c)
            dcb_new = dcoef_b / c - coef * dcb / (c * c)
            c, dca, dcb = np.where(np.abs(cn) < _TINY, _TINY, cn), dca_new, dcb_new
            delta = d * c
            ddelta_a, ddelta_b = dda * c + d * dca, ddb * c + d * dcb
            dha = dha * delta + h * ddelta_a
            dhb = dhb * delta + h * ddelta_b
            h = h * delta
        if _settled(delta - 1, ddelta_a, dha / h) and _settled(delta - 1, ddelta_b, dhb / h):
            break
    return h, dha, dhb


def dirichlet_grad(x, alpha, total):
    """-(dI_x(alpha, beta)/dalpha) / density / (1 - x) with beta = total - alpha (float64 arrays)."""
    x, alpha, total = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (x, alpha, total)))
    out = np.zeros(x.shape)
    with np.errstate(all='ignore'):
        beta = total - alpha
        ok = (x > 0) & (x < 1) & (alpha > 0) & (beta > 0) & np.isfinite(alpha) & np.isfinite(beta)
        v, a, b = x[ok], alpha[ok], beta[ok]
        res = np.empty(v.shape)
        # I and the density share x^a (1-x)^b / B(a, b); dividing, only x (1-x) remains
        direct = v < (a + 1) / (a + b + 2)
        vd, ad, bd = v[direct], a[direct], b[direct]
        f, dfa, _ = _beta_fraction(vd, ad, bd)
        shared = K.digamma(ad + bd) - K.digamma(ad)
        dI = (np.log(vd) + shared) * f / ad + (dfa / ad - f / (ad * ad))
        res[direct] = -vd * dI
        # above: I_x(a, b) = 1 - I_{1-x}(b, a), whose fraction has a as its second parameter
        vr, ar, br = v[~direct], a[~direct], b[~direct]
        f, _, dfa = _beta_fraction(1 - vr, br, ar)
        shared = K.digamma(ar + br) - K.digamma(ar)
        dI = -((np.log(vr) + shared) * f / br + dfa / br)
        res[~direct] = -vr * dI
        out[ok] = np.where(np.isfinite(res), res, 0.0)
    return out


# ---- samplers ------------------------------------------------------------------------------------

def _check_generator(generator, name):
    if generator is not None and type(generator) is not Generator:
        raise TypeError(f"{name}(): argument 'generator' must be leafgrad.Generator, not {type(generator).__name__}")


def _uniform(n, generator):
    """n uniform numbers in [0, 1) (float64) from the generator's stream (``rand``'s)."""
    return kernels.uniform(generator_of(generator), n, np.dtype(np.float64))


def _not_implemented_for(kernel, arr):
    return NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_NAMES[arr.dtype.name]}\'')


class _SerialDraws:
    """Float64 uniforms (``at::uniform_real_distribution<double>``: 53 bits of one 64-bit draw)
    and normals (``at::normal_distribution<double>``: Box-Muller on two such uniforms, the
    second value cached in the generator) taken one at a time, as PyTorch's serial CPU kernels
    take them. The 64-bit draws come from the generator in blocks; ``close()`` leaves the
    generator exactly where the draws consumed would have (unused ones given back)."""

    def __init__(self, generator, expected):
        self.g = generator_of(generator)
        self.start = self.g.clone_state()
        self.cached = self.g._normal_double
        self.words = []
        self.used = 0
        self.block = max(16, int(expected))

    def uniform(self):
        if self.used == len(self.words):
            self.words += [(int(w) & (2 ** 53 - 1)) * 2.0 ** -53 for w in self.g._u64(self.block)]
            self.block *= 2
        self.used += 1
        return self.words[self.used - 1]

    def normal(self):
        if self.cached is not None:
            z, self.cached = self.cached, None
            return z
        u1 = self.uniform()
        u2 = self.uniform()
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.cached = radius * math.sin(theta)
        return radius * math.cos(theta)

    def close(self):
        g = self.g
        g.set_state(self.start.get_state())
        if self.used:
            g._u64(self.used)
        g._normal_double = self.cached


_ONE_THIRD_F = float(np.float32(1) / np.float32(3))  # PyTorch's kernel writes 1.0f / 3.0f
_0331_F = float(np.float32(0.0331))  # and 0.0331f


def _gamma_one(alpha, draws, single):
    """One Gamma(alpha, 1) sample by PyTorch's ``sample_gamma``: Marsaglia and Tsang's
    rejection in float64, alpha below 1 boosted by 1 with a U^(1/alpha) factor; ``single``: alpha
    is a float32, whose boost and d = alpha - 1/3 PyTorch computes in float32."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        exponent = float(np.float32(1) / np.float32(alpha)) if single else 1.0 / alpha
        scale = math.pow(1.0 - draws.uniform(), exponent)
        alpha = float(np.float32(alpha) + np.float32(1)) if single else alpha + 1.0
    d = float(np.float32(alpha) - np.float32(_ONE_THIRD_F)) if single else alpha - _ONE_THIRD_F
    # (C's arithmetic where Python's raises: a negative or NaN alpha gives NaN, which the caller
    # turns into the smallest normal number, as PyTorch's std::max does)
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else (math.inf if d == 0 else math.nan)
    while True:
        y = 0.0
        while y <= 0:
            x = draws.normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - draws.uniform()
        xx = x * x
        if u < 1.0 - _0331_F * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def sample_gamma(alpha, generator, single=False):
    """Gamma(alpha, 1) samples (float64, alpha a flat float64 array), element by element in
    memory order from the generator's stream: PyTorch's numbers (NaN for a NaN or negative
    alpha, inf for an infinite one)."""
    out = np.empty(alpha.shape)
    draws = _SerialDraws(generator, 2.5 * alpha.size)
    try:
        for i, a in enumerate(alpha.tolist()):
            out[i] = _gamma_one(a, draws, single)
    finally:
        draws.close()
    return out


def sample_poisson(rate, generator):
    """Poisson samples (float64, rate flat): multiplying uniforms below 10, Hormann's
    transformed rejection (PTRS) from 10 on."""
    out = np.zeros(rate.shape)
    with np.errstate(all='ignore'):
        small = np.flatnonzero((rate > 0) & (rate < 10))
        limit = np.exp(-rate)
        product = np.ones(rate.shape)
        while small.size:
            product[small] *= _uniform(small.size, generator)
            more = product[small] > limit[small]
            out[small[more]] += 1
            small = small[more]
        large = np.flatnonzero((rate >= 10) & np.isfinite(rate))
        lam = rate[large]
        slam, loglam = np.sqrt(lam), np.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        pending = np.arange(large.size)
        while pending.size:
            u = _uniform(pending.size, generator) - 0.5
            v = _uniform(pending.size, generator)
            us = 0.5 - np.abs(u)
            ap, bp, lp = a[pending], b[pending], lam[pending]
            k = np.floor((2 * ap / us + bp) * u + lp + 0.43)
            quick = (us >= 0.07) & (v <= vr[pending])
            possible = (k >= 0) & ~((us < 0.013) & (v > us))
            bound = -lp + k * loglam[pending] - K.lgamma(k + 1)
            accept = quick | (possible & (np.log(v) + np.log(inv_alpha[pending]) - np.log(ap / (us * us) + bp) <= bound))
            out[large[pending[accept]]] = k[accept]
            pending = pending[~accept]
        out[rate == np.inf] = -2.0 ** 63  # (PyTorch's integer conversion of its NaN draw)
    return out


def _stirling_tail(k):
    """log k! - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]."""
    with np.errstate(all='ignore'):
        direct = K.lgamma(k + 1) - (k + 0.5) * np.log(k + 1) + (k + 1) - 0.5 * np.log(2 * np.pi)
        k1sq = (k + 1) * (k + 1)
        series = (1 / 12 - (1 / 360 - 1 / 1260 / k1sq) / k1sq) / (k + 1)
    return np.where(k <= 9, direct, series)


def sample_binomial(count, prob, generator):
    """Binomial samples (float64, flat, prob <= 1/2 only): inversion through geometric waiting
    times where count * prob < 10, Hormann's BTRS from 10 on."""
    out = np.zeros(count.shape)
    with np.errstate(all='ignore'):
        small = np.flatnonzero((count > 0) & (prob > 0) & (count * prob < 10))
        log_q = np.log1p(-prob)
        waited = np.zeros(count.shape)
        while small.size:
            waited[small] += np.ceil(np.log(_uniform(small.size, generator)) / log_q[small])
            more = waited[small] <= count[small]
            out[small[more]] += 1
            small = small[more]
        large = np.flatnonzero((count * prob >= 10) & np.isfinite(count))
        n, p = count[large], prob[large]
        spq = np.sqrt(n * p * (1 - p))
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * p
        c = n * p + 0.5
        vr = 0.92 - 4.2 / b
        r = p / (1 - p)
        alpha = (2.83 + 5.1 / b) * spq
        m = np.floor((n + 1) * p)
        pending = np.arange(large.size)
        while pending.size:
            u = _uniform(pending.size, generator) - 0.5
            v = _uniform(pending.size, generator)
            us = 0.5 - np.abs(u)
            nn, mm, rr, ap, bp = n[pending], m[pending], r[pending], a[pending], b[pending]
            k = np.floor((2 * ap / us + bp) * u + c[pending])
            inside = (k >= 0) & (k <= nn)
            quick = inside & (us >= 0.07) & (v <= vr[pending])
            log_v = np.log(v * alpha[pending] / (ap / (us * us) + bp))
            bound = ((mm + 0.5) * np.log((mm + 1) / (rr * (nn - mm + 1))) + (nn + 1) * np.log((nn - mm + 1) / (nn - k + 1))
                     + (k + 0.5) * np.log(rr * (nn - k + 1) / (k + 1)) + _stirling_tail(mm) + _stirling_tail(nn - mm)
                     - _stirling_tail(k) - _stirling_tail(nn - k))
            accept = quick | (inside & (log_v <= bound))
            out[large[pending[accept]]] = k[accept]
            pending = pending[~accept]
    return out


# ---- the ops ---------------------------------------------------------------------------------

class StandardGamma(Op):
    """_standard_gamma(input, generator=None): Gamma(input, 1) samples, differentiable in
    ``input`` (``Gamma.rsample``): the reparametrised derivative."""
    op, node, method = '_standard_gamma', 'StandardGammaBackward0', False
    saved = ('self', 'result')
    __slots__ = ()

    def forward(input, generator=None):
        _check_generator(generator, '_standard_gamma')
        data = input._data
        if data.dtype.kind != 'f':
            raise _not_implemented_for('gamma_cpu', data)
        flat = sample_gamma(data.astype(np.float64).reshape(-1), generator, single=data.dtype != np.float64)
        flat = flat.reshape(data.shape).astype(data.dtype)
        data = np.fmax(flat, np.finfo(data.dtype).tiny)  # (NaN too becomes the smallest normal)
        result, node = record(data, StandardGamma, (input,))
        if node is not None:
            node.save(input, saved_output(result))
        return result

    def apply(self, grad):
        alpha, result = self.saved_tensors
        return grad * _standard_gamma_grad(alpha, result),


def _same_float_dtype(a, b):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f'Found dtype {SCALAR_NAMES[b._data.dtype.name]} but expected '
                           f'{SCALAR_NAMES[a._data.dtype.name]}')


class StandardGammaGrad(Op):
    """_standard_gamma_grad(input, output): d output / d input for output ~ Gamma(input, 1)
    (a node of no derivative, StandardGammaGradBackward0 as PyTorch's)."""
    op, node, method = '_standard_gamma_grad', 'StandardGammaGradBackward0', False
    __slots__ = ()

    def forward(input, output):
        _same_float_dtype(input, output)
        data = standard_gamma_grad(input._data, output._data).astype(input._data.dtype)
        return record(data, StandardGammaGrad, (input, output))[0]

    def apply(self, grad):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


def _not_implemented(data, op_name, inputs):
    result, node = record(data, NotImplementedNode, inputs)
    if node is not None:
        node.op_name = op_name
    return result


class DirichletGrad(Op):
    """_dirichlet_grad(x, alpha, total): d x / d alpha for the Beta(alpha, total - alpha)
    marginal x of a Dirichlet sample, over 1 - x (PyTorch gives it no derivative)."""
    op, method = '_dirichlet_grad', False

    def forward(x, alpha, total):
        _same_float_dtype(x, alpha)
        _same_float_dtype(x, total)
        data = dirichlet_grad(x._data, alpha._data, total._data).astype(x._data.dtype)
        return _not_implemented(data, '_dirichlet_grad', (x, alpha, total))


class SampleDirichlet(Op):
    """_sample_dirichlet(input, generator=None): Dirichlet samples along the last dimension:
    gamma samples (at least the smallest normal float64) divided by their sum in float64,
    rounded to the input's dtype and kept inside [smallest normal, largest number below 1], as
    PyTorch's kernel keeps them (PyTorch gives it no derivative)."""
    op, method = '_sample_dirichlet', False

    def forward(input, generator=None):
        _check_generator(generator, '_sample_dirichlet')
        data = input._data
        if data.dtype.kind != 'f':
            raise _not_implemented_for('dirichlet', data)
        gammas = sample_gamma(data.astype(np.float64).reshape(-1), generator).reshape(data.shape)
        gammas = np.fmax(gammas, np.finfo(np.float64).tiny)
        total = gammas.sum(-1, keepdims=True) if gammas.ndim else gammas
        dtype = data.dtype
        shares = np.clip((gammas / total).astype(dtype), np.finfo(dtype).tiny,
                         np.nextafter(dtype.type(1), dtype.type(0)))
        return _not_implemented(shares, '_sample_dirichlet', (input,))


class Poisson(Op):
    """poisson(input, generator=None): Poisson samples with the rates in ``input``; they carry
    no gradient to the rates (PoissonBackward0 passes zeros)."""
    op, node, method = 'poisson', 'PoissonBackward0', False
    __slots__ = ()

    def forward(input, generator=None):
        _check_generator(generator, 'poisson')
        data = input._data
        if data.dtype.kind != 'f':
            raise _not_implemented_for('poisson_cpu', data)
        rates = data.astype(np.float64).reshape(-1)
        if rates.size and not (rates >= 0).all():
            raise RuntimeError('invalid Poisson rate, expected rate to be non-negative')
        return record(sample_poisson(rates, generator).reshape(data.shape).astype(data.dtype), Poisson, (input,))[0]

    def apply(self, grad):
        return wrap(xp.zeros_like(grad._data)),  # (PyTorch's zeros_like, not grad * 0: NaN at inf)


class Binomial(Op):
    """binomial(count, prob, generator=None): binomial samples, ``count`` trials with success
    probability ``prob`` (broadcast; PyTorch gives it no derivative)."""
    op, method = 'binomial', False

    def forward(count, prob, generator=None):
        try:
            _check_generator(generator, 'binomial')
            for t, what in ((count, 'count'), (prob, 'prob')):
                if t._data.dtype.kind != 'f':
                    raise ValueError(f'binomial only supports floating-point dtypes for {what}, got: '
                                     f'{SCALAR_NAMES[t._data.dtype.name]}')
            _same_float_dtype(count, prob)
            n, p = np.broadcast_arrays(count._data.astype(np.float64), prob._data.astype(np.float64))
            shape = n.shape
            n, p = n.reshape(-1), p.reshape(-1)
            flip = p > 0.5  # sample the failures when they are the rarer outcome
            q = np.where(flip, 1 - p, p)
            draws = sample_binomial(n, q, generator)
            out = np.where(flip, n - draws, draws)
            out = np.where((n <= 0) | (p <= 0), 0.0, np.where(p >= 1, n, out))
            out = np.where(np.isnan(p), np.nan, out)
            return _not_implemented(out.reshape(shape).astype(count._data.dtype), 'binomial', (count, prob))
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise
