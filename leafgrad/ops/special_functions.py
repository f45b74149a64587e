"""Special functions: the gamma family (lgamma, digamma, polygamma, mvlgamma, the incomplete
gamma functions igamma/igammac, the Hurwitz zeta function), the modified Bessel functions i0,
i1 and their scaled forms, erfcx, the normal distribution's ndtr, log_ndtr and ndtri, entr and
xlog1py: the functions ``torch.distributions`` needs, under PyTorch's names (``torch.lgamma``,
``torch.special.gammaln`` ...) and node names, each op declared once (``_op.Op``) with its
derivative and its forward-mode rule (``jvp``) beside its forward.

The forward of each runs in float64 on the arrays (``leafgrad/_special_kernels.py``) and returns
the input's float dtype (the default float dtype for integer input). Derivatives are leafgrad ops,
so that each is differentiable again: lgamma' = digamma, digamma' = polygamma(1, .), and so on.
PyTorch gives some no derivative (igamma's with respect to its first argument, zeta's with
respect to its first); those raise its NotImplementedError when backward reaches them. The
``torch.special`` functions that PyTorch has not as ``torch.<name>`` (``special_i0e``) are
declared with ``public = False``: ``leafgrad.special`` takes them from here under its names.

Forward mode: the one-input functions have a diagonal Jacobian (``elementwise_jvp``: the
derivative applied to the tangent). PyTorch has no forward rule for igamma, igammac and zeta;
leafgrad gives one for the argument whose reverse derivative exists (igamma's ``other``,
zeta's ``q``) and raises PyTorch's NotImplementedError for the other. ndtr is recorded as the
four ops PyTorch composes it of (two MulBackward1, ErfBackward0, AddBackward1), each giving its
intermediate its tangent (``_composed``).

Also the ``torch.special`` functions PyTorch gives no derivative (its results never require
grad, and out= may): the orthogonal polynomials (``special_chebyshev_polynomial_t`` ...,
``leafgrad/_polynomial_kernels.py``) and the Bessel functions and Airy's Ai
(``special_bessel_j0`` ..., ``leafgrad/_bessel_kernels.py``), computed in the input's dtype as
PyTorch computes them.
"""
import math
import sys

from .. import backend
from .. import _bessel_kernels as B
from .. import _polynomial_kernels as P
from .. import _special_kernels as K
from ._op import CAST, Op, castable_dtype, copy_out, ops, write_out
from ._util import (SCALAR_NAMES, broadcast_error, float_dtype_for, iterated, laid_out_like, not_a_tensor, on_gpu,
                    record, saved_output, sum_to, unary, wrap, xp)
from ..autograd.graph import elementwise_jvp
from ._inplace import inplace as _run_inplace
from ..tensor import Tensor

_SQRT_2PI = math.sqrt(2 * math.pi)


def _check_tensor(name, input, arg='input', position=1):
    if not isinstance(input, Tensor):
        raise not_a_tensor(name, arg, input, position)


def _evaluate(kernel, input, half_kernel=None):
    """``kernel`` (a float64 function of a 1-d array) on the input's values, in the input's float
    dtype; ``half_kernel``: the name of PyTorch's kernel when it refuses half precision."""
    x = float_dtype_for(input._data)
    if half_kernel is not None and x.dtype.name in ('float16', 'bfloat16'):
        raise _not_implemented_for(half_kernel, x)
    with xp.errstate(all='ignore'):  # (the result laid out as the input, as PyTorch's elementwise kernels)
        out = xp.asarray(kernel(x.astype(xp.float64).reshape(-1))).reshape(x.shape).astype(x.dtype, copy=False)
    return laid_out_like(out, input._data)


def _not_implemented_for(kernel, dtype):
    """PyTorch's error for a dtype (an array's, or a NumPy dtype) its kernel lacks."""
    name = xp.dtype(getattr(dtype, 'dtype', dtype)).name
    label = SCALAR_NAMES.get(name, 'BFloat16' if name == 'bfloat16' else name)
    return NotImplementedError(f'"{kernel}" not implemented for \'{label}\'')


def _needs(node, i):
    return node.next_functions[i][0] is not None


def _no_forward_rule(name):
    """PyTorch's error for forward mode through an op (or an argument) it has no rule for."""
    return NotImplementedError(f'Trying to use forward AD with {name} that does not support it because it has not '
                               'been implemented yet.')


def _sum_tangents(*terms):
    out = None
    for term in terms:
        if term is not None:
            out = term if out is None else out + term
    return out


def _mvlgamma_dtype(rd, od):
    # (PyTorch's message names the result's dtype twice)
    if rd.category > od.category:
        raise RuntimeError(f"mvlgamma: result type {SCALAR_NAMES[rd.name]} can't be cast to the desired output type "
                           f'{SCALAR_NAMES[rd.name]}')


def _mvlgamma_out(name, out, result, differentiable=True):
    return write_out(name, out, result, _mvlgamma_dtype, differentiable)


def _ndtr_out(name, out, result, differentiable=True):
    # (PyTorch's ndtr is a composite: its out= is out.copy_(result))
    return copy_out(name, out, result, castable_dtype)


def _named_out(label):
    """CAST under the name of the op the function calls (``igamma`` for special_gammainc),
    its TypeError naming the function (``label``)."""
    def rule(name, out, result, differentiable=True):
        return write_out(name, out, result, castable_dtype, differentiable, label)
    return rule


class _Special(Op):
    """A special function: ``leafgrad.<op>`` with out= (CAST), its signature as PyTorch's."""
    __slots__ = ()
    out = CAST
    vmap = 'elementwise'  # (batching rule: each one elementwise, numbers and tensors broadcast)


class _TorchSpecial(_Special):
    """A ``torch.special`` function PyTorch has not as ``torch.<name>`` (``special_i0e``): no
    method, no ``leafgrad.<name>``; ``leafgrad.special`` binds it under its own name."""
    __slots__ = ()
    public = method = False


# ---- lgamma, digamma, polygamma, mvlgamma -----------------------------------------------------

class Lgamma(_Special):
    """lgamma(input, *, out=None): log |Gamma(x)| (also torch.special.gammaln)."""
    op, node, saved = 'lgamma', 'LgammaBackward0', ('self',)
    inplace = True
    __slots__ = ()
    jvp = elementwise_jvp  # (a diagonal Jacobian: J t is the derivative applied to t)

    def forward(input):
        _check_tensor('lgamma', input)
        return unary(Lgamma, input, _evaluate(K.lgamma, input), save='input')

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ops.digamma(x),


class Digamma(_Special):
    """digamma(input, *, out=None): the derivative of lgamma; -inf at 0 (+inf at -0), NaN at the
    negative integers (also torch.special.digamma and psi)."""
    op, node, saved = 'digamma', 'DigammaBackward0', ('self',)
    inplace = True
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('digamma', input)
        return unary(Digamma, input, _evaluate(K.digamma, input), save='input')

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ops.polygamma(1, x),


def _polygamma(n, input):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    _check_tensor('polygamma', input, 'input', 2)
    if n < 0:
        raise RuntimeError('polygamma(n, x) does not support negative n.')
    result, node = record(_evaluate(lambda x: K.polygamma(n, x), input), Polygamma, (input,))
    if node is not None:
        node.n = n
        node.save(input)
    return result


class Polygamma(_Special):
    """polygamma(n, input, *, out=None): the n-th derivative of digamma; Tensor.polygamma(n)."""
    op, node, saved = 'polygamma', 'PolygammaBackward0', ('n=n', 'self')
    __slots__ = ('n',)
    jvp = elementwise_jvp

    def forward(n, input):
        return _polygamma(n, input)

    def method(self, n):
        return _polygamma(n, self)

    def inplace(self, n):
        return _run_inplace(self, lambda s: _polygamma(n, s), ())

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ops.polygamma(self.n + 1, x),


def _mvlgamma_offsets(x, p):
    """x - (p-1)/2, x - (p-2)/2, ..., x along a new last dimension (PyTorch's order of summation)."""
    offsets = xp.arange(-p / 2 + 0.5, 0.5, 0.5, like=x._data)[:p].astype(x._data.dtype)
    return x.unsqueeze(-1) + wrap(offsets)


class Mvlgamma(_Special):
    """mvlgamma(input, p, *, out=None): the multivariate log-gamma function of dimension p,
    sum_i lgamma(x - i/2) + p(p-1)/4 log pi (also torch.special.multigammaln)."""
    op, node, saved = 'mvlgamma', 'MvlgammaBackward0', ('p=p', 'self')
    out = _mvlgamma_out
    inplace = True
    __slots__ = ('p',)
    jvp = elementwise_jvp

    def forward(input, p):
        _check_tensor('mvlgamma', input)
        if not isinstance(p, int) or isinstance(p, bool):
            raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
        if p < 1:
            raise RuntimeError('p has to be greater than or equal to 1')
        x = float_dtype_for(input._data)
        offsets = xp.arange(-p / 2 + 0.5, 0.5, 0.5, like=x)[:p]
        with xp.errstate(all='ignore'):
            args = x.astype(xp.float64)[..., None] + offsets
            values = K.lgamma(args.reshape(-1)).reshape(args.shape)
            data = (values.sum(-1) + p * (p - 1) / 4 * math.log(math.pi)).astype(x.dtype)
        result, node = record(data, Mvlgamma, (input,))
        if node is not None:
            node.p = p
            node.save(input)
        return result

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ops.digamma(_mvlgamma_offsets(x, self.p)).sum(-1),


# ---- the regularized incomplete gamma functions, the Hurwitz zeta function --------------------

def _binary(kernel, a, b, dt):
    """``kernel`` (a float64 function of two 1-d arrays) on two operands, broadcast, in dtype ``dt``."""
    like = b if isinstance(a, (bool, int, float)) else a
    if on_gpu(like):  # (a number operand on the other's GPU)
        a, b = xp.asarray(a, dtype=xp.float64, like=like), xp.asarray(b, dtype=xp.float64, like=like)
    a, b = xp.broadcast_arrays(xp.asarray(a, dtype=xp.float64), xp.asarray(b, dtype=xp.float64))
    with xp.errstate(all='ignore'):
        return xp.asarray(kernel(a.reshape(-1), b.reshape(-1))).reshape(a.shape).astype(dt.np)


def _binary_float(kernel, name, input, other):
    """Values of a float function of two tensors (no integer kernels, as PyTorch)."""
    dt = backend.result_type(input, other)
    if not dt.is_floating_point:
        raise _not_implemented_for(name, dt.np)
    return _binary(kernel, input._data, other._data, dt)


def _igamma(input, other, node_cls, name):
    upper = node_cls is Igammac
    data = _binary_float(lambda a, x: K.gammainc(a, x, upper), f'{name}_cpu', input, other)
    result, node = record(data, node_cls, (input, other))
    if node is not None:
        node.self_shape, node.other_shape, node.sign = input._data.shape, other._data.shape, -1 if upper else 1
        node.save(input, other)
    return result


class Igamma(_Special):
    """igamma(input, other, *, out=None): the regularized lower incomplete gamma function
    P(input, other). PyTorch has no derivative with respect to input."""
    op, node, saved = 'igamma', 'IgammaBackward0', ('self', 'other')
    tensors = ('input', 'other')
    inplace = True
    __slots__ = ('self_shape', 'other_shape', 'sign')

    def forward(input, other):
        return _igamma(input, other, Igamma, 'igamma')

    def _density(self):
        a, x = self.saved_tensors
        return ops.exp((a - 1) * ops.log(x) - x - ops.lgamma(a)) * self.sign  # (the gamma(a) density at x)

    def apply(self, grad):
        if _needs(self, 0):
            raise NotImplementedError(f"the derivative for '{self.op_name}: input' is not implemented.")
        return None, sum_to(grad * self._density(), self.other_shape)

    def jvp(self, tangents):
        if tangents[0] is not None:
            raise _no_forward_rule(self.op_name)
        return tangents[1] * self._density()

    op_name = 'igamma'


class Igammac(Igamma):
    """igammac(input, other, *, out=None): the regularized upper incomplete gamma function
    Q(input, other) = 1 - P(input, other)."""
    op, node = 'igammac', 'IgammacBackward0'
    __slots__ = ()
    op_name = 'igammac'

    def forward(input, other):
        return _igamma(input, other, Igammac, 'igammac')


class SpecialGammainc(_TorchSpecial):
    """special_gammainc(input, other, *, out=None): torch.special.gammainc, igamma (its node)."""
    op = 'special_gammainc'
    out = _named_out('special_gammainc')
    out_name = 'igamma'
    __slots__ = ()

    def forward(input, other):
        _check_tensor('special_gammainc', input)
        _check_tensor('special_gammainc', other, 'other', 2)
        return ops.igamma(input, other)


class SpecialGammaincc(_TorchSpecial):
    """special_gammaincc(input, other, *, out=None): torch.special.gammaincc, igammac."""
    op = 'special_gammaincc'
    out = _named_out('special_gammaincc')
    out_name = 'igammac'
    __slots__ = ()

    def forward(input, other):
        _check_tensor('special_gammaincc', input)
        _check_tensor('special_gammaincc', other, 'other', 2)
        return ops.igammac(input, other)


def _scalar_tensor(value, like):
    dt = backend.result_type(like, value).np
    return wrap(xp.asarray(value, dtype=dt, like=like._data) if on_gpu(like._data) else xp.asarray(value, dtype=dt))


def _two_operands(name, input, other):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f'{name}() received an invalid combination of arguments - got '
                        f'({type(input).__name__}, {type(other).__name__}), but expected one of:\n'
                        ' * (Tensor input, Tensor other, *, Tensor out = None)\n'
                        ' * (Number self, Tensor other, *, Tensor out = None)\n'
                        ' * (Tensor input, Number other, *, Tensor out = None)\n')


class SpecialZeta(_TorchSpecial):
    """special_zeta(input, other, *, out=None): the Hurwitz zeta function sum_k (k + other)^-input
    (torch.special.zeta). The derivative with respect to other (q) is -x zeta(x + 1, q); PyTorch
    has none with respect to input (x)."""
    op, node, saved = 'special_zeta', 'SpecialZetaBackward0', ('self', 'other')
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        _two_operands('special_zeta', input, other)
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
        result, node = record(data, SpecialZeta, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = input._data.shape, other._data.shape
            node.save(input, other)
        return result

    def apply(self, grad):
        x, q = self.saved_tensors
        if _needs(self, 0):
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return None, sum_to(grad * -x * ops.special_zeta(x + 1.0, q), self.other_shape)

    def jvp(self, tangents):
        if tangents[0] is not None:
            raise _no_forward_rule('special_zeta')
        x, q = self.saved_tensors
        return tangents[1] * (-x * ops.special_zeta(x + 1.0, q))


class SpecialZetaBackward1(Op):
    """zeta(number, q)."""
    node, saved = 'SpecialZetaBackward1', ('self=scalar', 'other')
    __slots__ = ('scalar',)
    jvp = elementwise_jvp

    def apply(self, grad):
        (q,) = self.saved_tensors
        return grad * -self.scalar * ops.special_zeta(self.scalar + 1.0, q),


class SpecialZetaBackward2(Op):
    """zeta(x, number): PyTorch has no derivative with respect to x (nor a forward rule)."""
    node = 'SpecialZetaBackward2'
    __slots__ = ()

    def apply(self, grad):
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")

    def jvp(self, tangents):
        raise _no_forward_rule('special_zeta')


# ---- modified Bessel functions ---------------------------------------------------------------

def _not_tiny(x):
    """|x| > eps (a mask), and x with the tiny values replaced by eps: the derivatives of i1 and
    i1e divide by x, and take their limit 1/2 at 0."""
    eps = float(xp.finfo(x._data.dtype).eps)
    mask = wrap(xp.abs(x._data) > eps)
    return mask, ops.where(mask, x, wrap(xp.asarray(eps, dtype=x._data.dtype, like=x._data)))


class I0(_Special):
    """i0(input, *, out=None): the modified Bessel function of the first kind of order 0 (also
    torch.special.i0; torch.i0_)."""
    op, node, saved = 'i0', 'I0Backward0', ('self',)
    inplace = inplace_function = True
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('i0', input)
        return unary(I0, input, _evaluate(lambda x: K.bessel_i(x, 0, False), input), save='input')

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * ops.special_i1(x),


def _with_result(node_cls, input, data):
    """Record a one-input op whose node saves its input and its result."""
    result, node = record(data, node_cls, (input,))
    if node is not None:
        node.save(input, saved_output(result))
    return result


class SpecialI0e(_TorchSpecial):
    """special_i0e(input, *, out=None): exp(-|x|) i0(x) (torch.special.i0e)."""
    op, node, saved = 'special_i0e', 'SpecialI0EBackward0', ('self', 'result')
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('special_i0e', input)
        return _with_result(SpecialI0e, input, _evaluate(lambda x: K.bessel_i(x, 0, True), input))

    def apply(self, grad):
        x, result = self.saved_tensors
        return grad * (ops.special_i1e(x) - ops.sign(x) * result),


class SpecialI1(_TorchSpecial):
    """special_i1(input, *, out=None): the modified Bessel function of the first kind of order 1."""
    op, node, saved = 'special_i1', 'SpecialI1Backward0', ('self', 'result')
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('special_i1', input)
        return _with_result(SpecialI1, input, _evaluate(lambda x: K.bessel_i(x, 1, False), input))

    def apply(self, grad):
        x, result = self.saved_tensors
        mask, safe = _not_tiny(x)
        return grad * ops.where(mask, ops.i0(safe) - result * ops.reciprocal(safe), grad * 0 + 0.5),


class SpecialI1e(_TorchSpecial):
    """special_i1e(input, *, out=None): exp(-|x|) i1(x)."""
    op, node, saved = 'special_i1e', 'SpecialI1EBackward0', ('self', 'result')
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('special_i1e', input)
        return _with_result(SpecialI1e, input, _evaluate(lambda x: K.bessel_i(x, 1, True), input))

    def apply(self, grad):
        x, result = self.saved_tensors
        mask, safe = _not_tiny(x)
        d = ops.special_i0e(safe) - result * (ops.sign(safe) + ops.reciprocal(safe))
        return grad * ops.where(mask, d, grad * 0 + 0.5),


# ---- erfcx and the normal distribution -------------------------------------------------------

class SpecialErfcx(_TorchSpecial):
    """special_erfcx(input, *, out=None): the scaled complementary error function exp(x^2) erfc(x)."""
    op, node, saved = 'special_erfcx', 'SpecialErfcxBackward0', ('self', 'result')
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('special_erfcx', input)
        return _with_result(SpecialErfcx, input, _evaluate(K.erfcx, input, 'erfcx_cpu'))

    def apply(self, grad):
        x, result = self.saved_tensors
        return (x * result * 2.0 - 2.0 / math.sqrt(math.pi)) * grad,


class AddBackward1(Op):
    """A tensor plus a number (in C++ compositions)."""
    node = 'AddBackward1'
    __slots__ = ()
    jvp = elementwise_jvp

    def apply(self, grad):
        return grad,


def _composed(result, name):
    """An intermediate that a composite op records itself (not through an op's function): while
    forward mode carries tangents through the op, the intermediate gets its tangent here from
    its node's rule, so that the next step finds it."""
    forward_ad = sys.modules.get('leafgrad.autograd.forward_ad')
    if forward_ad is not None and forward_ad._state.depth and result._grad_fn is not None:
        forward_ad._give_tangents(result, name, forward_ad._state.truly)
    return result


def _times_number(t, number):
    return _composed(ops.mul_by_number(t, number), 'mul')


class SpecialNdtr(_TorchSpecial):
    """special_ndtr(input, *, out=None): the standard normal cdf, (1 + erf(x / sqrt 2)) / 2,
    recorded, as PyTorch records it, as those four ops (which is also why it is 0 below about
    -8.3 rather than tiny); out= is copied in, as PyTorch's composite does."""
    op = 'special_ndtr'
    out = _ndtr_out
    __slots__ = ()

    def forward(input):
        _check_tensor('special_ndtr', input)
        x = input if input._data.dtype.kind == 'f' else wrap(float_dtype_for(input._data))
        e = ops.erf(_times_number(x, 1 / math.sqrt(2)))
        shifted = _composed(record(e._data + e._data.dtype.type(1), AddBackward1, (e,))[0], 'add')
        return _times_number(shifted, 0.5)


class SpecialLogNdtr(_TorchSpecial):
    """special_log_ndtr(input, *, out=None): log of the standard normal cdf, accurate far into
    the lower tail."""
    op, node, saved = 'special_log_ndtr', 'SpecialLogNdtrBackward0', ('self', 'result')
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('special_log_ndtr', input)
        return _with_result(SpecialLogNdtr, input, _evaluate(K.log_ndtr, input, 'log_ndtr_cpu'))

    def apply(self, grad):
        x, result = self.saved_tensors
        return grad / _SQRT_2PI * ops.exp(-(result + x * x / 2)),


class SpecialNdtri(_TorchSpecial):
    """special_ndtri(input, *, out=None): the standard normal quantile function (the inverse of ndtr)."""
    op, node, saved = 'special_ndtri', 'SpecialNdtriBackward0', ('result',)
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('special_ndtri', input)
        return unary(SpecialNdtri, input, _evaluate(K.ndtri, input, 'ndtri_cpu'), save='output')

    def apply(self, grad):
        (result,) = self.saved_tensors
        return grad * _SQRT_2PI * ops.exp(result * result * 0.5),


# ---- entr, xlog1py ---------------------------------------------------------------------------

def _entr(x):
    out = -x * xp.log(x)  # (x is 1-d)
    out[x == 0] = 0.0
    out[x < 0] = -xp.inf
    return out


class SpecialEntr(_TorchSpecial):
    """special_entr(input, *, out=None): -x log x elementwise (0 at 0, -inf below)."""
    op, node, saved = 'special_entr', 'SpecialEntrBackward0', ('self',)
    __slots__ = ()
    jvp = elementwise_jvp

    def forward(input):
        _check_tensor('special_entr', input)
        return unary(SpecialEntr, input, _evaluate(_entr, input), save='input')

    def apply(self, grad):
        (x,) = self.saved_tensors
        return grad * -(ops.log(x) + 1),


def _xlog1py(x, y):
    out = x * xp.log1p(y)
    return xp.where((x == 0) & ~xp.isnan(y), 0.0, out)


class SpecialXlog1py(_TorchSpecial):
    """special_xlog1py(input, other, *, out=None): x * log1p(y), and 0 where x is 0 (unless y is
    NaN); a number for either operand (SpecialXlog1PyBackward1/2)."""
    op, node, saved = 'special_xlog1py', 'SpecialXlog1PyBackward0', ('self', 'other')
    __slots__ = ('self_shape', 'other_shape')

    def forward(input, other):
        _two_operands('special_xlog1py', input, other)
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
        result, node = record(data, SpecialXlog1py, (input, other))
        if node is not None:
            node.self_shape, node.other_shape = input._data.shape, other._data.shape
            node.save(input, other)
        return result

    def _d_self(self, t, x, y):
        """t * log1p(y), 0 where x is 0 and y <= -1 (PyTorch's rule; also where t is 0)."""
        zero = wrap((x._data == 0) & (y._data <= -1))
        return ops.where(zero, 0.0, ops.special_xlog1py(t, y))

    def apply(self, grad):
        x, y = self.saved_tensors
        gx = gy = None
        if _needs(self, 0):
            gx = sum_to(self._d_self(grad, x, y), self.self_shape)
        if _needs(self, 1):
            gy = sum_to(grad * x / (y + 1), self.other_shape)
        return gx, gy

    def jvp(self, tangents):  # d(x log1p y) = dx log1p y (0 where x == 0, y <= -1) + x dy / (1 + y)
        tx, ty = tangents
        x, y = self.saved_tensors
        return _sum_tangents(None if tx is None else self._d_self(tx, x, y),
                             None if ty is None else ty * (x / (y + 1)))


class SpecialXlog1PyBackward1(Op):
    """xlog1py(number, tensor)."""
    node, saved = 'SpecialXlog1PyBackward1', ('self=scalar', 'other')
    __slots__ = ('scalar',)
    jvp = elementwise_jvp

    def apply(self, grad):
        (y,) = self.saved_tensors
        return grad * self.scalar / (y + 1),


class SpecialXlog1PyBackward2(Op):
    """xlog1py(tensor, number)."""
    node, saved = 'SpecialXlog1PyBackward2', ('self', 'other=scalar')
    __slots__ = ('scalar',)
    jvp = elementwise_jvp

    def apply(self, grad):
        (x,) = self.saved_tensors
        g = ops.special_xlog1py(grad, self.scalar)
        if self.scalar > -1:
            return g,
        return ops.where(wrap(x._data == 0), 0.0, g),  # (0, not g * 0: g is NaN there)


# ---- the orthogonal polynomials: torch.special's chebyshev_polynomial_t ... legendre_polynomial_p --

_NUMBER_TYPES = (bool, int, float, complex)


def _polynomial(name, kernel, x, n):
    """``kernel`` (``_polynomial_kernels``) on x and the degree n, each a tensor or a number
    (not both), broadcast, in their common dtype (the default float dtype for integers), as
    PyTorch's kernel computes it. PyTorch records no node: its result never requires grad."""
    fn = f'special_{name}'
    if not (isinstance(x, Tensor) or isinstance(n, Tensor)) or not all(
            isinstance(v, (Tensor,) + _NUMBER_TYPES) for v in (x, n)):
        raise TypeError(f'{fn}() received an invalid combination of arguments - got '
                        f'({type(x).__name__}, {type(n).__name__}), but expected one of:\n'
                        ' * (Tensor x, Tensor n, *, Tensor out = None)\n'
                        ' * (Number x, Tensor n, *, Tensor out = None)\n'
                        ' * (Tensor x, Number n, *, Tensor out = None)\n')
    dt = backend.result_type(x, n)
    if not dt.is_floating_point and not dt.is_complex:
        dt = backend.get_default_dtype()
    if dt.np not in (xp.float32, xp.float64):
        raise _not_implemented_for(f'{name}_cpu', dt.np)
    operands = [v._data if isinstance(v, Tensor) else v for v in (x, n)]
    try:
        like = next(v._data for v in (x, n) if isinstance(v, Tensor))
        if on_gpu(like):  # (a number operand on the tensor's GPU)
            operands = [xp.asarray(v, dtype=dt.np, like=like) for v in operands]
        xd, nd = xp.broadcast_arrays(*(xp.asarray(v, dtype=dt.np) for v in operands))
    except ValueError:
        raise broadcast_error(x, n) from None
    with xp.errstate(all='ignore'):
        out = kernel(xd.reshape(-1), P.degrees(nd.reshape(-1))).reshape(xd.shape)
    return wrap(iterated(out, *operands) if out.ndim > 1 else out)  # (laid out as TensorIterator)


class _Polynomial(_TorchSpecial):
    """An orthogonal polynomial of torch.special: no derivative (PyTorch's result has no
    grad_fn), so out= may require grad."""
    __slots__ = ()
    differentiable = False


class SpecialChebyshevPolynomialT(_Polynomial):
    """special_chebyshev_polynomial_t(x, n, *, out=None): the Chebyshev polynomial of the first
    kind T_n(x) (torch.special.chebyshev_polynomial_t)."""
    op = 'special_chebyshev_polynomial_t'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('chebyshev_polynomial_t', P.chebyshev_t, x, n)


class SpecialChebyshevPolynomialU(_Polynomial):
    """special_chebyshev_polynomial_u(x, n, *, out=None): the Chebyshev polynomial of the second
    kind U_n(x)."""
    op = 'special_chebyshev_polynomial_u'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('chebyshev_polynomial_u', P.chebyshev_u, x, n)


class SpecialChebyshevPolynomialV(_Polynomial):
    """special_chebyshev_polynomial_v(x, n, *, out=None): the Chebyshev polynomial of the third
    kind V_n(x)."""
    op = 'special_chebyshev_polynomial_v'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('chebyshev_polynomial_v', P.chebyshev_v, x, n)


class SpecialChebyshevPolynomialW(_Polynomial):
    """special_chebyshev_polynomial_w(x, n, *, out=None): the Chebyshev polynomial of the fourth
    kind W_n(x)."""
    op = 'special_chebyshev_polynomial_w'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('chebyshev_polynomial_w', P.chebyshev_w, x, n)


class SpecialShiftedChebyshevPolynomialT(_Polynomial):
    """special_shifted_chebyshev_polynomial_t(x, n, *, out=None): T_n(2x - 1), on [0, 1]."""
    op = 'special_shifted_chebyshev_polynomial_t'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('shifted_chebyshev_polynomial_t', P.shifted_chebyshev_t, x, n)


class SpecialShiftedChebyshevPolynomialU(_Polynomial):
    """special_shifted_chebyshev_polynomial_u(x, n, *, out=None): U_n(2x - 1)."""
    op = 'special_shifted_chebyshev_polynomial_u'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('shifted_chebyshev_polynomial_u', P.shifted_chebyshev_u, x, n)


class SpecialShiftedChebyshevPolynomialV(_Polynomial):
    """special_shifted_chebyshev_polynomial_v(x, n, *, out=None): V_n(2x - 1)."""
    op = 'special_shifted_chebyshev_polynomial_v'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('shifted_chebyshev_polynomial_v', P.shifted_chebyshev_v, x, n)


class SpecialShiftedChebyshevPolynomialW(_Polynomial):
    """special_shifted_chebyshev_polynomial_w(x, n, *, out=None): W_n(2x - 1)."""
    op = 'special_shifted_chebyshev_polynomial_w'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('shifted_chebyshev_polynomial_w', P.shifted_chebyshev_w, x, n)


class SpecialHermitePolynomialH(_Polynomial):
    """special_hermite_polynomial_h(x, n, *, out=None): the physicists' Hermite polynomial H_n(x)."""
    op = 'special_hermite_polynomial_h'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('hermite_polynomial_h', P.hermite_h, x, n)


class SpecialHermitePolynomialHe(_Polynomial):
    """special_hermite_polynomial_he(x, n, *, out=None): the probabilists' Hermite polynomial
    He_n(x)."""
    op = 'special_hermite_polynomial_he'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('hermite_polynomial_he', P.hermite_he, x, n)


class SpecialLaguerrePolynomialL(_Polynomial):
    """special_laguerre_polynomial_l(x, n, *, out=None): the Laguerre polynomial L_n(x)."""
    op = 'special_laguerre_polynomial_l'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('laguerre_polynomial_l', P.laguerre_l, x, n)


class SpecialLegendrePolynomialP(_Polynomial):
    """special_legendre_polynomial_p(x, n, *, out=None): the Legendre polynomial P_n(x)."""
    op = 'special_legendre_polynomial_p'
    __slots__ = ()

    def forward(x, n):
        return _polynomial('legendre_polynomial_p', P.legendre_p, x, n)


# ---- the Bessel functions of torch.special (bessel_j0 ... spherical_bessel_j0) and airy_ai ------

def _bessel(name, kernel, input, arg='input'):
    """``kernel`` (``_bessel_kernels``) on the input's values in its float dtype (the default
    float dtype for integers), as PyTorch's kernel computes it; no half precision, no complex.
    PyTorch records no node: its result never requires grad. (``arg``: PyTorch's name of the
    parameter: ``x`` for some.)"""
    _check_tensor(f'special_{name}', input, arg)
    x = float_dtype_for(input._data)
    if x.dtype not in (xp.float32, xp.float64):
        raise _not_implemented_for(f'{name}_cpu', x)
    with xp.errstate(all='ignore'):
        out = kernel(x.reshape(-1)).reshape(x.shape)
    return wrap(laid_out_like(out, input._data))


class _Bessel(_TorchSpecial):
    """A Bessel function (or Ai) of torch.special: no derivative (PyTorch's result has no
    grad_fn), so out= may require grad."""
    __slots__ = ()
    differentiable = False


class SpecialAiryAi(_Bessel):
    """special_airy_ai(x, *, out=None): the Airy function Ai(x) (torch.special.airy_ai)."""
    op = 'special_airy_ai'
    __slots__ = ()

    def forward(x):
        return _bessel('airy_ai', B.airy_ai, x, 'x')


class SpecialBesselJ0(_Bessel):
    """special_bessel_j0(input, *, out=None): the Bessel function of the first kind of order 0."""
    op = 'special_bessel_j0'
    __slots__ = ()

    def forward(input):
        return _bessel('bessel_j0', B.bessel_j0, input)


class SpecialBesselJ1(_Bessel):
    """special_bessel_j1(input, *, out=None): the Bessel function of the first kind of order 1."""
    op = 'special_bessel_j1'
    __slots__ = ()

    def forward(input):
        return _bessel('bessel_j1', B.bessel_j1, input)


class SpecialBesselY0(_Bessel):
    """special_bessel_y0(input, *, out=None): the Bessel function of the second kind of order 0
    (-inf at 0, NaN below)."""
    op = 'special_bessel_y0'
    __slots__ = ()

    def forward(input):
        return _bessel('bessel_y0', B.bessel_y0, input)


class SpecialBesselY1(_Bessel):
    """special_bessel_y1(input, *, out=None): the Bessel function of the second kind of order 1
    (-inf at 0, NaN below)."""
    op = 'special_bessel_y1'
    __slots__ = ()

    def forward(input):
        return _bessel('bessel_y1', B.bessel_y1, input)


class SpecialModifiedBesselI0(_Bessel):
    """special_modified_bessel_i0(input, *, out=None): the modified Bessel function of the first
    kind of order 0."""
    op = 'special_modified_bessel_i0'
    __slots__ = ()

    def forward(input):
        return _bessel('modified_bessel_i0', B.modified_bessel_i0, input)


class SpecialModifiedBesselI1(_Bessel):
    """special_modified_bessel_i1(input, *, out=None): the modified Bessel function of the first
    kind of order 1."""
    op = 'special_modified_bessel_i1'
    __slots__ = ()

    def forward(input):
        return _bessel('modified_bessel_i1', B.modified_bessel_i1, input)


class SpecialModifiedBesselK0(_Bessel):
    """special_modified_bessel_k0(input, *, out=None): the modified Bessel function of the second
    kind of order 0 (inf at 0, NaN below)."""
    op = 'special_modified_bessel_k0'
    __slots__ = ()

    def forward(input):
        return _bessel('modified_bessel_k0', B.modified_bessel_k0, input)


class SpecialModifiedBesselK1(_Bessel):
    """special_modified_bessel_k1(input, *, out=None): the modified Bessel function of the second
    kind of order 1 (inf at 0, NaN below)."""
    op = 'special_modified_bessel_k1'
    __slots__ = ()

    def forward(input):
        return _bessel('modified_bessel_k1', B.modified_bessel_k1, input)


class SpecialScaledModifiedBesselK0(_Bessel):
    """special_scaled_modified_bessel_k0(x, *, out=None): exp(x) K0(x)."""
    op = 'special_scaled_modified_bessel_k0'
    __slots__ = ()

    def forward(x):
        return _bessel('scaled_modified_bessel_k0', B.scaled_modified_bessel_k0, x, 'x')


class SpecialScaledModifiedBesselK1(_Bessel):
    """special_scaled_modified_bessel_k1(x, *, out=None): exp(x) K1(x)."""
    op = 'special_scaled_modified_bessel_k1'
    __slots__ = ()

    def forward(x):
        return _bessel('scaled_modified_bessel_k1', B.scaled_modified_bessel_k1, x, 'x')


class SpecialSphericalBesselJ0(_Bessel):
    """special_spherical_bessel_j0(x, *, out=None): sin(x) / x (its series below 0.5; 0 at
    +-inf)."""
    op = 'special_spherical_bessel_j0'
    __slots__ = ()

    def forward(x):
        return _bessel('spherical_bessel_j0', B.spherical_bessel_j0, x, 'x')
