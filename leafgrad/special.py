"""leafgrad.special: PyTorch's ``torch.special`` names for the elementwise ops that leafgrad has
(the same functions, recorded under the same nodes as PyTorch records them)."""
from .ops.activation import _DTYPE_LABEL, log_softmax, softmax
from .ops.elementwise import sigmoid as expit
from .ops.pointwise import exp2, logit, sinc, xlogy
from .ops.reduction import logsumexp
from .ops.rounding import RoundBackward1 as _RoundBackward1
from .ops.unary import erf, erfc, erfinv, expm1, log1p
from .ops.special_functions import (digamma, i0, lgamma as gammaln, mvlgamma as multigammaln, polygamma,
                                    special_entr as entr, special_erfcx as erfcx, special_gammainc as gammainc,
                                    special_gammaincc as gammaincc, special_i0e as i0e, special_i1 as i1,
                                    special_i1e as i1e, special_log_ndtr as log_ndtr, special_ndtr as ndtr,
                                    special_ndtri as ndtri, special_xlog1py as xlog1py, special_zeta as zeta,
                                    special_chebyshev_polynomial_t as chebyshev_polynomial_t,
                                    special_chebyshev_polynomial_u as chebyshev_polynomial_u,
                                    special_chebyshev_polynomial_v as chebyshev_polynomial_v,
                                    special_chebyshev_polynomial_w as chebyshev_polynomial_w,
                                    special_shifted_chebyshev_polynomial_t as shifted_chebyshev_polynomial_t,
                                    special_shifted_chebyshev_polynomial_u as shifted_chebyshev_polynomial_u,
                                    special_shifted_chebyshev_polynomial_v as shifted_chebyshev_polynomial_v,
                                    special_shifted_chebyshev_polynomial_w as shifted_chebyshev_polynomial_w,
                                    special_hermite_polynomial_h as hermite_polynomial_h,
                                    special_hermite_polynomial_he as hermite_polynomial_he,
                                    special_laguerre_polynomial_l as laguerre_polynomial_l,
                                    special_legendre_polynomial_p as legendre_polynomial_p,
                                    special_airy_ai as airy_ai, special_bessel_j0 as bessel_j0,
                                    special_bessel_j1 as bessel_j1, special_bessel_y0 as bessel_y0,
                                    special_bessel_y1 as bessel_y1, special_modified_bessel_i0 as modified_bessel_i0,
                                    special_modified_bessel_i1 as modified_bessel_i1,
                                    special_modified_bessel_k0 as modified_bessel_k0,
                                    special_modified_bessel_k1 as modified_bessel_k1,
                                    special_scaled_modified_bessel_k0 as scaled_modified_bessel_k0,
                                    special_scaled_modified_bessel_k1 as scaled_modified_bessel_k1,
                                    special_spherical_bessel_j0 as spherical_bessel_j0)
# (the helpers under private names: torch.special holds its functions only)
from .ops._op import same_dtype as _same_dtype, writes_out as _writes_out
from .ops._util import record as _record, xp as _xp


@_writes_out('round', _same_dtype('Found dtype {out} but expected {result}'))
def round(input, *, decimals=0):
    """torch.special.round records RoundBackward1 even with decimals=0."""
    data = input._data
    if data.dtype.kind not in 'fV':
        raise NotImplementedError(f'"round_vml_cpu" not implemented for \'{_DTYPE_LABEL[data.dtype.name]}\'')
    return _record(_xp.round(data, decimals).astype(data.dtype, copy=False), _RoundBackward1, (input,))[0]


psi = digamma

__all__ = ['expit', 'erf', 'erfc', 'exp2', 'expm1', 'log1p', 'logit', 'logsumexp', 'round', 'sinc', 'xlogy',
           'softmax', 'log_softmax', 'digamma', 'psi', 'gammaln', 'multigammaln', 'polygamma', 'i0', 'i0e', 'i1',
           'i1e', 'erfinv', 'erfcx', 'ndtr', 'log_ndtr', 'ndtri', 'entr', 'xlog1py', 'zeta', 'gammainc',
           'gammaincc', 'chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
           'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
           'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h',
           'hermite_polynomial_he', 'laguerre_polynomial_l', 'legendre_polynomial_p', 'airy_ai', 'bessel_j0',
           'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_i0', 'modified_bessel_i1', 'modified_bessel_k0',
           'modified_bessel_k1', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1', 'spherical_bessel_j0']
