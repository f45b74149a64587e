"""Special functions: the gamma family (lgamma, digamma, polygamma, mvlgamma, the incomplete
gamma functions igamma/igammac, the Hurwitz zeta function), the modified Bessel functions i0,
i1 and their scaled forms, erfcx, the normal distribution's ndtr, log_ndtr and ndtri, entr and
xlog1py: the functions ``torch.distributions`` needs, under PyTorch's names (``torch.lgamma``,
``torch.special.gammaln`` ...) and node names.

The forward of each runs in float64 on the arrays (``special_kernels.py``) and returns the
input's float dtype (the default float dtype for integer input). Derivatives are leafgrad ops,
so that each is differentiable again: lgamma' = digamma, digamma' = polygamma(1, .), and so on.
PyTorch gives some no derivative (igamma's with respect to its first argument, zeta's with
respect to its first); those raise its NotImplementedError when backward reaches them.
"""
import math

from .. import backend
from . import elementwise as ew
from . import special_kernels as K
from ._op import castable_dtype, writes_out
from ._util import SCALAR_NAMES, Node, float_dtype_for, record, saved_output, sum_to, unary, wrap, xp
from ..autograd.graph import elementwise_jvp
from .inplace import inplace
from ..tensor import Tensor

_SQRT_2PI = math.sqrt(2 * math.pi)


def _check_tensor(name, input, arg='input', position=1):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {type(input).__name__}")


def _evaluate(kernel, input, half_kernel=None):
    """``kernel`` (a float64 function of a 1-d array) on the input's values, in the input's float
    dtype; ``half_kernel``: the name of PyTorch's kernel when it refuses half precision."""
    x = float_dtype_for(input._data)
    if half_kernel is not None and x.dtype.name in ('float16', 'bfloat16'):
        raise _not_implemented_for(half_kernel, x)
    with xp.errstate(all='ignore'):
        return xp.asarray(kernel(x.astype(xp.float64).reshape(-1))).reshape(x.shape).astype(x.dtype, copy=False)


def _not_implemented_for(kernel, dtype):
    """PyTorch's error for a dtype (an array's, or a NumPy dtype) its kernel lacks."""
    from .activation import _DTYPE_LABEL
    name = xp.dtype(getattr(dtype, 'dtype', dtype)).name
    label = _DTYPE_LABEL.get(name, 'BFloat16' if name == 'bfloat16' else name)
    return NotImplementedError(f'"{kernel}" not implemented for \'{label}\'')


def _needs(node, i):
    return node.next_functions[i][0] is not None


class _DerivativeNotImplemented(Node):
    """A node whose input ``what`` PyTorch gives no derivative."""
    __slots__ = ()
    what = ''

    def apply(self, grad):
        raise NotImplementedError(f"the derivative for '{self.what}' is not implemented.")


def _mvlgamma_out(rd, od):
    # (PyTorch's message names the result's dtype twice)
    if rd.category > od.category:
        raise RuntimeError(f"mvlgamma: result type {SCALAR_NAMES[rd.name]} can't be cast to the desired output type "
                           f'{SCALAR_NAMES[rd.name]}')


# ---- lgamma, digamma, polygamma, mvlgamma -----------------------------------------------------

class LgammaBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * digamma(x),


@writes_out('lgamma', castable_dtype)
def lgamma(input):
    """log |Gamma(x)|."""
    _check_tensor('lgamma', input)
    return unary(LgammaBackward0, input, _evaluate(K.lgamma, input), save='input')


class DigammaBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * polygamma(1, x),


@writes_out('digamma', castable_dtype)
def digamma(input):
    """The derivative of lgamma: -inf at 0 (+inf at -0), NaN at the negative integers."""
    _check_tensor('digamma', input)
    return unary(DigammaBackward0, input, _evaluate(K.digamma, input), save='input')


class PolygammaBackward0(Node):
    __slots__ = ('n',)

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * polygamma(self.n + 1, x),


@writes_out('polygamma', castable_dtype)
def polygamma(n, input):
    """The n-th derivative of digamma."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    _check_tensor('polygamma', input, 'input', 2)
    if n < 0:
        raise RuntimeError('polygamma(n, x) does not support negative n.')
    result, node = record(_evaluate(lambda x: K.polygamma(n, x), input), PolygammaBackward0, (input,))
    if node is not None:
        node.n = n
        node.save(input)
    return result


def _polygamma_method(self, n):
    return polygamma(n, self)


def _mvlgamma_offsets(x, p):
    """x - (p-1)/2, x - (p-2)/2, ..., x along a new last dimension (PyTorch's order of summation)."""
    offsets = xp.arange(-p / 2 + 0.5, 0.5, 0.5)[:p].astype(x._data.dtype)
    return x.unsqueeze(-1) + wrap(offsets)


class MvlgammaBackward0(Node):
    __slots__ = ('p',)

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * digamma(_mvlgamma_offsets(x, self.p)).sum(-1),


@writes_out('mvlgamma', _mvlgamma_out)
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension p: sum_i lgamma(x - i/2) + p(p-1)/4 log pi."""
    _check_tensor('mvlgamma', input)
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError('p has to be greater than or equal to 1')
    x = float_dtype_for(input._data)
    offsets = xp.arange(-p / 2 + 0.5, 0.5, 0.5)[:p]
    with xp.errstate(all='ignore'):
        args = x.astype(xp.float64)[..., None] + offsets
        values = K.lgamma(args.reshape(-1)).reshape(args.shape)
        data = (values.sum(-1) + p * (p - 1) / 4 * math.log(math.pi)).astype(x.dtype)
    result, node = record(data, MvlgammaBackward0, (input,))
    if node is not None:
        node.p = p
        node.save(input)
    return result


# ---- the regularized incomplete gamma functions, the Hurwitz zeta function --------------------

def _binary(kernel, a, b, dt):
    """``kernel`` (a float64 function of two 1-d arrays) on two operands, broadcast, in dtype ``dt``."""
    a, b = xp.broadcast_arrays(xp.asarray(a, dtype=xp.float64), xp.asarray(b, dtype=xp.float64))
    with xp.errstate(all='ignore'):
        return xp.asarray(kernel(a.reshape(-1), b.reshape(-1))).reshape(a.shape).astype(dt.np)


def _binary_float(kernel, name, input, other):
    """Values of a float function of two tensors (no integer kernels, as PyTorch)."""
    dt = backend.result_type(input, other)
    if not dt.is_floating_point:
        raise _not_implemented_for(name, dt.np)
    return _binary(kernel, input._data, other._data, dt)


class IgammaBackward0(Node):
    __slots__ = ('self_shape', 'other_shape', 'sign')

    def apply(self, grad):
        a, x = self.saved_tensors
        if _needs(self, 0):
            name = 'igamma' if self.sign > 0 else 'igammac'
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        density = ew.exp((a - 1) * ew.log(x) - x - lgamma(a))  # the gamma(a) density at x
        return None, sum_to(grad * density * self.sign, self.other_shape)


class IgammacBackward0(IgammaBackward0):
    __slots__ = ()


def _igamma(input, other, upper, node_cls, name):
    _check_tensor(name, input)
    _check_tensor(name, other, 'other', 2)
    data = _binary_float(lambda a, x: K.gammainc(a, x, upper), f'{name}_cpu', input, other)
    result, node = record(data, node_cls, (input, other))
    if node is not None:
        node.self_shape, node.other_shape, node.sign = input._data.shape, other._data.shape, -1 if upper else 1
        node.save(input, other)
    return result


@writes_out('igamma', castable_dtype)
def igamma(input, other):
    """The regularized lower incomplete gamma function P(input, other)."""
    return _igamma(input, other, False, IgammaBackward0, 'igamma')


@writes_out('igammac', castable_dtype)
def igammac(input, other):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)."""
    return _igamma(input, other, True, IgammacBackward0, 'igammac')


@writes_out('igamma', castable_dtype, label='special_gammainc')
def special_gammainc(input, other):
    _check_tensor('special_gammainc', input)
    _check_tensor('special_gammainc', other, 'other', 2)
    return igamma(input, other)


@writes_out('igammac', castable_dtype, label='special_gammaincc')
def special_gammaincc(input, other):
    _check_tensor('special_gammaincc', input)
    _check_tensor('special_gammaincc', other, 'other', 2)
    return igammac(input, other)


class SpecialZetaBackward0(Node):
    """zeta(x, q): the derivative with respect to q is -x zeta(x + 1, q); PyTorch has none for x."""
    __slots__ = ('self_shape', 'other_shape')

    def apply(self, grad):
        x, q = self.saved_tensors
        if _needs(self, 0):
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return None, sum_to(grad * -x * special_zeta(x + 1.0, q), self.other_shape)


class SpecialZetaBackward1(Node):
    """zeta(number, q)."""
    __slots__ = ('scalar',)

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (q,) = self.saved_tensors
        return grad * -self.scalar * special_zeta(self.scalar + 1.0, q),


class SpecialZetaBackward2(_DerivativeNotImplemented):
    """zeta(x, number): no derivative with respect to x."""
    __slots__ = ()
    what = 'zeta'


def _scalar_tensor(value, like):
    return wrap(xp.asarray(value, dtype=backend.result_type(like, value).np))


@writes_out('special_zeta', castable_dtype)
def special_zeta(input, other):
    """The Hurwitz zeta function sum_k (k + other)^-input."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f'special_zeta() received an invalid combination of arguments - got '
                        f'({type(input).__name__}, {type(other).__name__}), but expected one of:\n'
                        ' * (Tensor input, Tensor other, *, Tensor out = None)\n'
                        ' * (Number self, Tensor other, *, Tensor out = None)\n'
                        ' * (Tensor input, Number other, *, Tensor out = None)\n')
    a = input if isinstance(input, Tensor) else _scalar_tensor(input, other)
    b = other if isinstance(other, Tensor) else _scalar_tensor(other, input)
    dt = backend.result_type(input, other)
    dt = dt if dt.is_floating_point else backend.get_default_dtype()
    if dt.name in ('float16', 'bfloat16'):
        raise _not_implemented_for('zeta_cpu', dt.np)
    data = _binary(K.zeta, a._data, b._data, dt)
    if not isinstance(input, Tensor):
        result, node = record(data, SpecialZetaBackward1, (other,))
        if node is not None:
            node.scalar = input
            node.save(other)
        return result
    if not isinstance(other, Tensor):
        return record(data, SpecialZetaBackward2, (input,))[0]
    result, node = record(data, SpecialZetaBackward0, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = input._data.shape, other._data.shape
        node.save(input, other)
    return result


# ---- modified Bessel functions ---------------------------------------------------------------

def _not_tiny(x):
    """|x| > eps (a mask), and x with the tiny values replaced by eps: the derivatives of i1 and
    i1e divide by x, and take their limit 1/2 at 0."""
    eps = float(xp.finfo(x._data.dtype).eps)
    mask = wrap(xp.abs(x._data) > eps)
    return mask, ew.where(mask, x, wrap(xp.asarray(eps, dtype=x._data.dtype)))


class I0Backward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * special_i1(x),


@writes_out('i0', castable_dtype)
def i0(input):
    """The modified Bessel function of the first kind of order 0."""
    _check_tensor('i0', input)
    return unary(I0Backward0, input, _evaluate(lambda x: K.bessel_i(x, 0, False), input), save='input')


class SpecialI0EBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        x, result = self.saved_tensors
        return grad * (special_i1e(x) - ew.sign(x) * result),


@writes_out('special_i0e', castable_dtype)
def special_i0e(input):
    """exp(-|x|) i0(x)."""
    _check_tensor('special_i0e', input)
    result, node = record(_evaluate(lambda x: K.bessel_i(x, 0, True), input), SpecialI0EBackward0, (input,))
    if node is not None:
        node.save(input, saved_output(result))
    return result


class SpecialI1Backward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        x, result = self.saved_tensors
        mask, safe = _not_tiny(x)
        return grad * ew.where(mask, i0(safe) - result * ew.reciprocal(safe), grad * 0 + 0.5),


@writes_out('special_i1', castable_dtype)
def special_i1(input):
    """The modified Bessel function of the first kind of order 1."""
    _check_tensor('special_i1', input)
    result, node = record(_evaluate(lambda x: K.bessel_i(x, 1, False), input), SpecialI1Backward0, (input,))
    if node is not None:
        node.save(input, saved_output(result))
    return result


class SpecialI1EBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        x, result = self.saved_tensors
        mask, safe = _not_tiny(x)
        d = special_i0e(safe) - result * (ew.sign(safe) + ew.reciprocal(safe))
        return grad * ew.where(mask, d, grad * 0 + 0.5),


@writes_out('special_i1e', castable_dtype)
def special_i1e(input):
    """exp(-|x|) i1(x)."""
    _check_tensor('special_i1e', input)
    result, node = record(_evaluate(lambda x: K.bessel_i(x, 1, True), input), SpecialI1EBackward0, (input,))
    if node is not None:
        node.save(input, saved_output(result))
    return result


# ---- erfcx and the normal distribution -------------------------------------------------------

class SpecialErfcxBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        x, result = self.saved_tensors
        return (x * result * 2.0 - 2.0 / math.sqrt(math.pi)) * grad,


@writes_out('special_erfcx', castable_dtype)
def special_erfcx(input):
    """The scaled complementary error function exp(x^2) erfc(x)."""
    _check_tensor('special_erfcx', input)
    result, node = record(_evaluate(K.erfcx, input, 'erfcx_cpu'), SpecialErfcxBackward0, (input,))
    if node is not None:
        node.save(input, saved_output(result))
    return result


class MulBackward1(Node):
    """A tensor times a number, as the ops PyTorch composes in C++ record it."""
    __slots__ = ('other',)

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        return grad * self.other,


class AddBackward1(Node):
    """A tensor plus a number (in C++ compositions)."""
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        return grad,


def _times_number(t, number):
    result, node = record(t._data * t._data.dtype.type(number), MulBackward1, (t,))
    if node is not None:
        node.other = number
    return result


@writes_out('special_ndtr', castable_dtype, copy=True)
def special_ndtr(input):
    """The standard normal cdf, (1 + erf(x / sqrt 2)) / 2: recorded, as PyTorch records it, as
    those four ops (which is also why it is 0 below about -8.3 rather than tiny)."""
    _check_tensor('special_ndtr', input)
    from .unary import erf
    x = input if input._data.dtype.kind == 'f' else wrap(float_dtype_for(input._data))
    e = erf(_times_number(x, 1 / math.sqrt(2)))
    return _times_number(record(e._data + e._data.dtype.type(1), AddBackward1, (e,))[0], 0.5)


class SpecialLogNdtrBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        x, result = self.saved_tensors
        return grad / _SQRT_2PI * ew.exp(-(result + x * x / 2)),


@writes_out('special_log_ndtr', castable_dtype)
def special_log_ndtr(input):
    """log of the standard normal cdf, accurate far into the lower tail."""
    _check_tensor('special_log_ndtr', input)
    result, node = record(_evaluate(K.log_ndtr, input, 'log_ndtr_cpu'), SpecialLogNdtrBackward0, (input,))
    if node is not None:
        node.save(input, saved_output(result))
    return result


class SpecialNdtriBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * _SQRT_2PI * ew.exp(result * result * 0.5),


@writes_out('special_ndtri', castable_dtype)
def special_ndtri(input):
    """The standard normal quantile function (the inverse of ndtr)."""
    _check_tensor('special_ndtri', input)
    return unary(SpecialNdtriBackward0, input, _evaluate(K.ndtri, input, 'ndtri_cpu'), save='output')


# ---- entr, xlog1py ---------------------------------------------------------------------------

class SpecialEntrBackward0(Node):
    __slots__ = ()

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * -(ew.log(x) + 1),


def _entr(x):
    out = -x * xp.log(x)  # (x is 1-d)
    out[x == 0] = 0.0
    out[x < 0] = -xp.inf
    return out


@writes_out('special_entr', castable_dtype)
def special_entr(input):
    """-x log x elementwise (0 at 0, -inf below)."""
    _check_tensor('special_entr', input)
    return unary(SpecialEntrBackward0, input, _evaluate(_entr, input), save='input')


class SpecialXlog1PyBackward0(Node):
    __slots__ = ('self_shape', 'other_shape')

    def apply(self, grad):
        x, y = self.saved_tensors
        gx = gy = None
        if _needs(self, 0):
            zero = wrap((x._data == 0) & (y._data <= -1))
            gx = sum_to(ew.where(zero, grad * 0, special_xlog1py(grad, y)), self.self_shape)
        if _needs(self, 1):
            gy = sum_to(grad * x / (y + 1), self.other_shape)
        return gx, gy


class SpecialXlog1PyBackward1(Node):
    """xlog1py(number, tensor)."""
    __slots__ = ('scalar',)

    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def apply(self, grad):
        (y,) = self.saved_tensors
        return grad * self.scalar / (y + 1),


class SpecialXlog1PyBackward2(Node):
    """xlog1py(tensor, number)."""
    __slots__ = ('scalar',)

    def apply(self, grad):
        (x,) = self.saved_tensors
        g = special_xlog1py(grad, self.scalar)
        if self.scalar > -1:
            return g,
        return ew.where(wrap(x._data == 0), g * 0, g),


def _xlog1py(x, y):
    out = x * xp.log1p(y)
    return xp.where((x == 0) & ~xp.isnan(y), 0.0, out)


@writes_out('special_xlog1py', castable_dtype)
def special_xlog1py(input, other):
    """x * log1p(y), and 0 where x is 0 (unless y is NaN)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f'special_xlog1py() received an invalid combination of arguments - got '
                        f'({type(input).__name__}, {type(other).__name__}), but expected one of:\n'
                        ' * (Tensor input, Tensor other, *, Tensor out = None)\n'
                        ' * (Number self, Tensor other, *, Tensor out = None)\n'
                        ' * (Tensor input, Number other, *, Tensor out = None)\n')
    dt = backend.result_type(input, other)
    dt = dt if dt.is_floating_point else backend.get_default_dtype()
    data = _binary(_xlog1py, input._data if isinstance(input, Tensor) else input,
                   other._data if isinstance(other, Tensor) else other, dt)
    if not isinstance(input, Tensor):
        result, node = record(data, SpecialXlog1PyBackward1, (other,))
        if node is not None:
            node.scalar = input
            node.save(other)
        return result
    if not isinstance(other, Tensor):
        result, node = record(data, SpecialXlog1PyBackward2, (input,))
        if node is not None:
            node.scalar = other
            node.save(input)
        return result
    result, node = record(data, SpecialXlog1PyBackward0, (input, other))
    if node is not None:
        node.self_shape, node.other_shape = input._data.shape, other._data.shape
        node.save(input, other)
    return result


# ---- in-place variants -----------------------------------------------------------------------

def _inplace_of(fn, name):
    def op_(self, *args):
        others = tuple(a for a in args if isinstance(a, Tensor))
        return inplace(self, lambda s: fn(s, *args), others)
    op_.__name__ = name
    return op_


lgamma_ = _inplace_of(lgamma, 'lgamma_')
digamma_ = _inplace_of(digamma, 'digamma_')
polygamma_ = _inplace_of(_polygamma_method, 'polygamma_')
mvlgamma_ = _inplace_of(mvlgamma, 'mvlgamma_')
i0_ = _inplace_of(i0, 'i0_')
igamma_ = _inplace_of(igamma, 'igamma_')
igammac_ = _inplace_of(igammac, 'igammac_')

FUNCTIONS = ['lgamma', 'digamma', 'polygamma', 'mvlgamma', 'igamma', 'igammac', 'i0', 'i0_']
NOT_METHODS = ['polygamma']
METHODS = {'polygamma': _polygamma_method, 'lgamma_': lgamma_, 'digamma_': digamma_, 'polygamma_': polygamma_,
           'mvlgamma_': mvlgamma_, 'igamma_': igamma_, 'igammac_': igammac_}
