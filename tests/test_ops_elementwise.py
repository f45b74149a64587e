"""Elementwise ops and activations against PyTorch, driven by one table (CASES).

Each row runs the same function ``fn(T, *xs)`` with T = leafgrad and T = torch on the same data,
and the generic tests compare: forward values, dtype and shape (float32, and integer inputs where
the op takes them); the node name; first derivatives (backward of a randomly weighted sum);
second derivatives (create_graph=True, then the gradient of a weighted sum of the gradients);
and a float64 gradcheck/gradgradcheck of both derivatives (the only part that runs without torch).
"""
import numpy as np
import pytest

import leafgrad as lg
from leafgrad.ops import activation as lg_F

from optable import (Case, check_derivatives, check_finite_differences, check_forward,  # noqa: E402
                     needs_torch, params, torch)

torch_F = torch.nn.functional if torch is not None else None


def F(T):
    """nn.functional of either library (leafgrad's activations live in ops.activation)."""
    return lg_F if T is lg else torch_F


UNARY = [((3, 4),), ((),), ((0, 3),), ((2, 1, 3),)]
BINARY = [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()), ((0, 3), (3,))]
BOUNDS = [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), ()), ((2, 3), (3,), (2, 1))]  # x has the full shape
TERNARY = [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ()), ((2, 3), (3,), (2, 1))]



def C(name, fn, kinds, shapes=None, **kw):
    """A row; unary and binary rows default to the UNARY/BINARY shape sets."""
    return Case(name, fn, kinds, shapes or (UNARY if len(kinds) == 1 else BINARY), **kw)


CASES = [
    # arithmetic
    C('add', lambda T, x, y: T.add(x, y), 'rr', ints=True),
    C('add_alpha', lambda T, x, y: T.add(x, y, alpha=2.5), 'rr'),
    C('add_scalar', lambda T, x: x + 1.5, 'r', ints=True),
    C('sub', lambda T, x, y: T.sub(x, y), 'rr', ints=True),
    C('sub_alpha', lambda T, x, y: T.sub(x, y, alpha=-2), 'rr'),
    C('rsub', lambda T, x: 2.0 - x, 'r'),
    C('mul', lambda T, x, y: T.mul(x, y), 'rr', ints=True),
    C('div', lambda T, x, y: T.div(x, y), 'rz', ints=False),
    C('rdiv', lambda T, x: 2.0 / x, 'z'),
    C('div_trunc', lambda T, x, y: T.div(x, y, rounding_mode='trunc'), 'rz'),
    C('div_floor', lambda T, x, y: T.div(x, y, rounding_mode='floor'), 'rz'),
    C('div_floor_scalar', lambda T, x: T.div(x, 0.7, rounding_mode='floor'), 'r'),
    C('pow_scalar', lambda T, x: x ** 3, 'r', ints=True),
    C('pow_half', lambda T, x: x ** 0.5, 'p'),
    C('pow_tensor', lambda T, x, y: T.pow(x, y), 'pr'),
    C('pow_int_negative_exponents', lambda T, x, y: T.pow(x, y), 'ii', grad=False),
    C('rpow', lambda T, x: 2.0 ** x, 'r'),
    C('square', lambda T, x: T.square(x), 'r'),
    C('reciprocal', lambda T, x: T.reciprocal(x), 'z'),
    C('neg', lambda T, x: -x, 'r', ints=True),
    C('abs', lambda T, x: T.abs(x), 'z', ints=True),
    # unary math
    C('rsqrt', lambda T, x: T.rsqrt(x), 'p'),
    C('expm1', lambda T, x: T.expm1(x), 'r', ints=True),
    C('log1p', lambda T, x: T.log1p(x), 'p'),
    C('log2', lambda T, x: T.log2(x), 'p'),
    C('log10', lambda T, x: T.log10(x), 'p'),
    C('tan', lambda T, x: T.tan(x), 'u'),
    C('asin', lambda T, x: T.asin(x), 'u'),
    C('acos', lambda T, x: T.acos(x), 'u'),
    C('atan', lambda T, x: T.atan(x), 'r', ints=True),
    C('sinh', lambda T, x: T.sinh(x), 'r'),
    C('cosh', lambda T, x: T.cosh(x), 'r'),
    C('asinh', lambda T, x: T.asinh(x), 'r'),
    C('acosh', lambda T, x: T.acosh(x), 'g'),
    C('atanh', lambda T, x: T.atanh(x), 'u'),
    C('erf', lambda T, x: T.erf(x), 'r', ints=True),
    C('erfc', lambda T, x: T.erfc(x), 'r'),
    C('erfinv', lambda T, x: T.erfinv(x), 'u'),
    C('erfinv_tails', lambda T, x: (x * 1e-4 + 0.9998).erfinv(), 'u'),
    C('atan2', lambda T, x, y: T.atan2(x, y), 'rz', ints=True),
    C('exp', lambda T, x: T.exp(x), 'r'),
    C('sin', lambda T, x: x.sin(), 'r'),
    # the rest of the pointwise family
    C('addcmul', lambda T, x, y, z: T.addcmul(x, y, z, value=0.5), 'rrr', TERNARY),
    C('addcdiv', lambda T, x, y, z: x.addcdiv(y, z), 'rrz', TERNARY),
    C('xlogy', lambda T, x, y: T.xlogy(x, y), 'rp'),
    C('xlogy_zero', lambda T, x, y: T.xlogy(x * 0, y), 'rp'),
    C('xlogy_scalar_self', lambda T, y: T.xlogy(2.0, y), 'p'),
    C('xlogy_scalar_other', lambda T, x: T.xlogy(x, 3.0), 'r'),
    C('logaddexp', lambda T, x, y: T.logaddexp(x, y * 3), 'rr'),
    C('hypot', lambda T, x, y: T.hypot(x, y), 'zz'),
    C('copysign', lambda T, x, y: T.copysign(x, y), 'rz'),
    C('fmax', lambda T, x, y: T.fmax(x, y), 'rr'),
    C('fmin', lambda T, x, y: x.fmin(y), 'rr'),
    C('float_power', lambda T, x: T.float_power(x, 3), 'r', ints=True),
    C('float_power_tensor', lambda T, x, y: x.float_power(y), 'pr'),
    C('exp2', lambda T, x: T.exp2(x), 'r', ints=True),
    C('logit', lambda T, x: T.logit(x * 0.5 + 0.5), 'u'),
    C('logit_eps', lambda T, x: T.logit(x * 0.6 + 0.5, eps=0.2), 'u'),
    C('sinc', lambda T, x: T.sinc(x), 'r'),
    C('sgn', lambda T, x: T.sgn(x), 'r', ints=True),
    C('sgn_bool', lambda T, x: T.sgn(x), 'b', grad=False),
    C('positive', lambda T, x: +T.positive(x) * 2, 'r'),
    C('deg2rad', lambda T, x: T.deg2rad(x * 90), 'r'),
    C('rad2deg', lambda T, x: x.rad2deg(), 'r'),
    # torch.special names
    C('special_expit', lambda T, x: T.special.expit(x), 'r'),
    C('special_erf', lambda T, x: T.special.erfc(x) * T.special.erf(x), 'r'),
    C('special_round', lambda T, x: T.special.round(x * 3), 'r'),
    C('special_logit_xlogy', lambda T, x, y: T.special.xlogy(x, y) + T.special.logit(y / 3), 'rp'),
    # clamp, maximum, minimum, lerp
    C('clamp', lambda T, x: T.clamp(x, -0.5, 0.5), 'r', ints=True),
    C('clamp_min', lambda T, x: T.clamp(x, min=0.1), 'r'),
    C('clamp_max', lambda T, x: x.clamp(max=-0.1), 'r'),
    C('clip', lambda T, x: T.clip(x, -1, 0.3), 'r'),
    C('clamp_float_bound_int', lambda T, x: T.clamp(x, 0.5), 'r', ints=True),
    C('clamp_tensor', lambda T, x, lo, hi: T.clamp(x, lo, hi), 'rrr', BOUNDS),
    C('clamp_tensor_min', lambda T, x, lo: T.clamp(x, min=lo), 'rr', [s[:2] for s in BOUNDS]),
    C('clamp_tensor_max', lambda T, x, hi: T.clamp(x, max=hi), 'rr', [s[:2] for s in BOUNDS]),
    C('maximum', lambda T, x, y: T.maximum(x, y), 'rr', ints=True),
    C('minimum', lambda T, x, y: T.minimum(x, y), 'rr', ints=True),
    C('max_binary', lambda T, x, y: T.max(x, y), 'rr'),
    C('lerp_scalar', lambda T, x, y: T.lerp(x, y, 0.3), 'rr'),
    C('lerp_scalar_high', lambda T, x, y: T.lerp(x, y, 0.8), 'rr'),
    C('lerp_tensor', lambda T, x, y, w: T.lerp(x, y, w), 'rrr', TERNARY),
    # rounding and remainders
    C('floor', lambda T, x: T.floor(x * 3), 'r', ints=True),
    C('ceil', lambda T, x: T.ceil(x * 3), 'r', ints=True),
    C('round', lambda T, x: T.round(x * 3), 'r', ints=True),
    C('round_decimals', lambda T, x: T.round(x * 30, decimals=1), 'r'),
    C('round_negative_decimals', lambda T, x: T.round(x * 300, decimals=-1), 'r'),
    C('trunc', lambda T, x: T.trunc(x * 3), 'r', ints=True),
    C('fix', lambda T, x: T.fix(x * 3), 'r'),
    C('frac', lambda T, x: T.frac(x * 3), 'r'),
    C('fmod_scalar', lambda T, x: T.fmod(x * 3, 1.5), 'r', ints=True),
    C('fmod_tensor', lambda T, x, y: T.fmod(x * 3, y), 'rz'),
    C('remainder_scalar', lambda T, x: T.remainder(x * 3, 1.5), 'r', ints=True),
    C('remainder_tensor', lambda T, x, y: T.remainder(x * 3, y), 'rz'),
    C('mod_operator', lambda T, x: (x * 3) % -1.5, 'r'),
    C('rmod_operator', lambda T, x: 5 % x, 'z', grad=False),
    C('nan_to_num', lambda T, x: T.nan_to_num(T.log(x), nan=0.5, posinf=3.0), 'r'),
    C('nan_to_num_default', lambda T, x: T.nan_to_num(T.log(x)), 'r', grad=False),
    # activations with torch.* names
    C('relu', lambda T, x: T.relu(x), 'r'),
    C('sigmoid', lambda T, x: T.sigmoid(x), 's'),
    C('tanh', lambda T, x: T.tanh(x), 'r'),
    C('selu', lambda T, x: T.selu(x), 'r'),
    C('celu', lambda T, x: T.celu(x, 0.7), 'r'),
    C('threshold', lambda T, x: T.threshold(x, 0.1, 2.0), 'r'),
    C('hardshrink', lambda T, x: T.hardshrink(x, 0.4), 'r'),
    # nn.functional activations
    C('leaky_relu', lambda T, x: F(T).leaky_relu(x, 0.2), 'r'),
    C('leaky_relu_default', lambda T, x: F(T).leaky_relu(x), 'r'),
    C('elu', lambda T, x: F(T).elu(x), 'r'),
    C('elu_alpha', lambda T, x: F(T).elu(x, alpha=0.5), 'r'),
    C('F_selu', lambda T, x: F(T).selu(x), 'r'),
    C('gelu', lambda T, x: F(T).gelu(x), 's'),
    C('gelu_tanh', lambda T, x: F(T).gelu(x, approximate='tanh'), 's'),
    C('silu', lambda T, x: F(T).silu(x), 's'),
    C('mish', lambda T, x: F(T).mish(x), 's'),
    C('softplus', lambda T, x: F(T).softplus(x), 's'),
    C('softplus_beta', lambda T, x: F(T).softplus(x, beta=2, threshold=1), 'r'),
    C('logsigmoid', lambda T, x: F(T).logsigmoid(x), 's'),
    C('hardtanh', lambda T, x: F(T).hardtanh(x), 's'),
    C('hardtanh_range', lambda T, x: F(T).hardtanh(x, -0.5, 2.0), 's'),
    C('relu6', lambda T, x: F(T).relu6(x * 2), 's'),
    C('hardswish', lambda T, x: F(T).hardswish(x), 's'),
    C('hardsigmoid', lambda T, x: F(T).hardsigmoid(x), 's', gradgrad=False),  # torch: not implemented
    C('softshrink', lambda T, x: F(T).softshrink(x, 0.3), 'r'),
    C('softsign', lambda T, x: F(T).softsign(x), 'r'),
    C('tanhshrink', lambda T, x: F(T).tanhshrink(x), 'r'),
    # no gradient: logical, bitwise, class tests, floor division
    C('logical_and', lambda T, x, y: T.logical_and(x, y), 'ri', grad=False, ints=True),
    C('logical_or', lambda T, x, y: T.logical_or(x, y), 'bb', grad=False),
    C('logical_xor', lambda T, x, y: x.logical_xor(y), 'ib', grad=False),
    C('logical_not', lambda T, x: T.logical_not(x), 'r', grad=False, ints=True),
    C('bitwise_and', lambda T, x, y: T.bitwise_and(x, y), 'ii', grad=False),
    C('and_operator', lambda T, x, y: x & y, 'bb', grad=False),
    C('or_operator', lambda T, x, y: x | y, 'ii', grad=False),
    C('xor_operator', lambda T, x, y: x ^ y, 'bi', grad=False),
    C('xor_scalar', lambda T, x: x ^ 3, 'i', grad=False),
    C('rand_scalar', lambda T, x: 6 & x, 'i', grad=False),
    C('invert_bool', lambda T, x: ~x, 'b', grad=False),
    C('invert_int', lambda T, x: ~x, 'i', grad=False),
    C('bitwise_not', lambda T, x: T.bitwise_not(x), 'i', grad=False),
    C('isnan', lambda T, x: T.isnan(T.log(x)), 'r', grad=False),
    C('isinf', lambda T, x: T.isinf(1 / (x * 0)), 'r', grad=False),
    C('isfinite', lambda T, x: T.isfinite(T.log(x)), 'r', grad=False, ints=True),
    C('floor_divide', lambda T, x, y: T.floor_divide(x * 3, y), 'rz', grad=False),
    C('floordiv_operator', lambda T, x: (x * 3) // 0.7, 'r', grad=False),
    C('rfloordiv_operator', lambda T, x: 3 // x, 'z', grad=False),
]


@needs_torch
@pytest.mark.parametrize('case,shapes', params(CASES))
def test_against_torch(case, shapes):
    check_forward(case, shapes)
    if case.grad:
        check_derivatives(case, shapes)


@pytest.mark.parametrize('case,shapes', params(CASES, 'fd'))
def test_finite_differences(case, shapes):
    check_finite_differences(case, shapes)


# ---- errors: the same exception type as torch (and the same message, with leafgrad's name) -----

def _x(T):
    return T.tensor([[0.5, -1.5, 2.0], [1.0, -0.25, 3.0]])


def _i(T):
    return T.tensor([1, 2])


ERRORS = [  # (name, fn(T), compare the message too)
    ('neg_bool', lambda T: -T.tensor([True]), True),
    ('sub_bools', lambda T: T.tensor([True]) - T.tensor([False]), True),
    ('pow_int_negative', lambda T: _i(T) ** -1, True),
    ('div_bad_rounding', lambda T: T.div(_x(T), 2, rounding_mode='round'), True),
    ('int_div_zero_floor', lambda T: T.div(_i(T), 0, rounding_mode='floor'), True),
    ('int_floordiv_zero', lambda T: _i(T) // 0, True),
    ('int_remainder_zero', lambda T: _i(T) % 0, True),
    ('int_fmod_zero', lambda T: T.fmod(_i(T), 0), True),
    ('floor_bool', lambda T: T.floor(T.tensor([True])), True),
    ('frac_int', lambda T: T.frac(_i(T)), True),
    ('round_decimals_int', lambda T: T.round(_i(T), decimals=1), True),
    ('clamp_no_bounds', lambda T: T.clamp(_x(T)), True),
    ('positive_bool', lambda T: +T.tensor([True]), True),
    ('relu_bool', lambda T: T.relu(T.tensor([True])), True),
    ('abs_bool', lambda T: T.tensor([True]).abs(), True),
    ('hardtanh_bool', lambda T: F(T).hardtanh(T.tensor([True])), True),
    ('int_add_float_alpha', lambda T: T.add(_i(T), _i(T), alpha=0.5), True),
    ('int_sub_float_alpha', lambda T: _i(T).sub(_i(T), alpha=1.5), True),
    ('logaddexp_int', lambda T: T.logaddexp(_i(T), _i(T)), True),
    ('hypot_int', lambda T: T.hypot(_i(T), _i(T)), True),
    ('special_round_int', lambda T: T.special.round(_i(T)), True),
    ('maximum_number', lambda T: T.maximum(_x(T), 1.0), True),
    ('lerp_int', lambda T: T.lerp(_i(T), _i(T), 0.5), True),
    ('lerp_dtypes', lambda T: T.lerp(_x(T), _x(T).double(), 0.5), True),
    ('invert_float', lambda T: ~_x(T), True),
    ('bitwise_and_float', lambda T: T.bitwise_and(_x(T), _x(T)), True),
    ('or_float', lambda T: _x(T) | _x(T), True),
    ('xor_float_scalar', lambda T: _i(T) ^ 1.5, True),
    ('bitwise_not_float', lambda T: T.bitwise_not(_x(T)), True),
    ('gelu_approximate', lambda T: F(T).gelu(_x(T), approximate='fast'), True),
    ('hardtanh_bounds', lambda T: F(T).hardtanh(_x(T), 2.0, 1.0), True),
    ('softshrink_negative', lambda T: F(T).softshrink(_x(T), -1.0), True),
    ('celu_zero_alpha', lambda T: F(T).celu(_x(T), 0.0), True),
    ('leaky_relu_int', lambda T: F(T).leaky_relu(_i(T)), True),
    ('elu_int', lambda T: F(T).elu(_i(T)), True),
    ('logsigmoid_int', lambda T: F(T).logsigmoid(_i(T)), True),
    ('exp_int_inplace', lambda T: _i(T).exp_(), True),
    ('sigmoid_int_inplace', lambda T: _i(T).sigmoid_(), True),
    ('inplace_on_leaf', lambda T: T.ones(2, requires_grad=True).clamp_(0, 1), True),
    ('floor_divide_backward', lambda T: (T.ones(2, requires_grad=True) // 2).sum().backward(), False),
    ('hardsigmoid_double_backward', lambda T: _double_backward(T, F(T).hardsigmoid), False),
]


def _double_backward(T, fn):
    x = T.tensor([0.5, -1.0], requires_grad=True)
    g, = T.autograd.grad(fn(x).sum(), x, create_graph=True)
    g.sum().backward()


@needs_torch
@pytest.mark.parametrize('name,fn,message', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, message):
    with pytest.raises(Exception) as t_info:
        fn(torch)
    with pytest.raises(type(t_info.value)) as l_info:
        fn(lg)
    if message:
        assert str(l_info.value).replace('leafgrad', 'torch') == str(t_info.value)
    else:
        # the op is named in both messages (torch's NotImplemented node)
        assert str(l_info.value).split('aten::')[-1] == str(t_info.value).split('aten::')[-1]


# ---- in-place variants: values, node names, gradients through a non-leaf ------------------------

INPLACE = [
    ('clamp_', lambda x: x.clamp_(-0.5, 0.5)), ('clamp_min_', lambda x: x.clamp_min_(0.0)),
    ('clip_', lambda x: x.clip_(max=0.2)), ('relu_', lambda x: x.relu_()), ('torch.relu_', 'relu_'),
    ('sigmoid_', lambda x: x.sigmoid_()), ('tanh_', lambda x: x.tanh_()), ('exp_', lambda x: x.exp_()),
    ('neg_', lambda x: x.neg_()), ('abs_', lambda x: x.abs_()), ('sqrt_', lambda x: x.abs_().sqrt_()),
    ('floor_', lambda x: x.floor_()), ('ceil_', lambda x: x.ceil_()), ('round_', lambda x: x.round_()),
    ('trunc_', lambda x: x.trunc_()), ('frac_', lambda x: x.frac_()), ('sin_', lambda x: x.sin_()),
    ('log1p_', lambda x: x.abs_().log1p_()), ('expm1_', lambda x: x.expm1_()), ('erf_', lambda x: x.erf_()),
    ('atan2_', lambda x: x.atan2_(x * 2 + 1)), ('lerp_', lambda x: x.lerp_(x * 3, 0.25)),
    ('fmod_', lambda x: x.fmod_(0.3)), ('remainder_', lambda x: x.remainder_(0.3)),
    ('imod', lambda x: x.__imod__(0.3)), ('nan_to_num_', lambda x: x.nan_to_num_()),
    ('square_', lambda x: x.square_()), ('reciprocal_', lambda x: x.reciprocal_()),
    ('addcmul_', lambda x: x.addcmul_(x * 2, x * 0 + 3, value=0.5)), ('hypot_', lambda x: x.hypot_(x * 0 + 1)),
    ('exp2_', lambda x: x.exp2_()), ('deg2rad_', lambda x: x.deg2rad_()),
    ('erfinv_', lambda x: x.mul_(0.3).erfinv_()),
    ('torch.exp_', 'exp_'), ('torch.selu_', 'selu_'), ('torch.celu_', 'celu_'),
    ('clamp_max_tensor', lambda x: x.clamp_max_(x * 0 + 0.2)), ('torch.threshold_', 'threshold_'),
    ('leaky_relu_', None),  # nn.functional's: made per library by _inplace_fn
]


def _inplace_fn(name, fn, T):
    if name == 'leaky_relu_':
        return lambda x: F(T).leaky_relu_(x, 0.1)
    if fn == 'threshold_':
        return lambda x: T.threshold_(x, 0.1, -2.0)
    if isinstance(fn, str):
        return lambda x: getattr(T, fn)(x)
    return fn


@needs_torch
@pytest.mark.parametrize('name,fn', INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace(name, fn):
    data = np.array([[0.3, -1.2, 2.5], [-0.7, 0.05, 1.6]])
    results = []
    for T in (lg, torch):
        op = _inplace_fn(name, fn, T)
        plain = T.tensor(data.copy())
        out = op(plain)
        assert out is plain  # in-place returns self
        leaf = T.tensor(data.copy(), requires_grad=True)
        y = leaf * 1.0
        version = y._version
        op(y)
        assert y._version > version
        (y * T.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
        results.append((plain, y, leaf.grad))
    (lp, ly, lgrad), (tp, ty, tgrad) = results
    np.testing.assert_allclose(lp.numpy(), tp.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert ly.grad_fn.name() == ty.grad_fn.name()
    np.testing.assert_allclose(lgrad.numpy(), tgrad.numpy(), rtol=1e-6, atol=1e-7)


@needs_torch
def test_inplace_activation_keyword():
    values = []
    for T in (lg, torch):
        x = T.tensor([-1.0, 2.0])
        assert F(T).elu(x, inplace=True) is x and F(T).hardtanh(x, 0.5, inplace=True) is x
        values.append(x.tolist())
    assert values[0] == values[1] == [0.5, 1.0]


# ---- specific rules ---------------------------------------------------------------------------

@needs_torch
def test_maximum_minimum_ties_split_the_gradient():
    for T in (lg, torch):
        a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = T.tensor([1.0, 5.0, 3.0], requires_grad=True)
        (T.maximum(a, b) * 2 + T.minimum(a, b)).sum().backward()
        assert a.grad.tolist() == [1.5, 1.0, 1.5] and b.grad.tolist() == [1.5, 2.0, 1.5]


@needs_torch
def test_clamp_gradient_at_the_bounds_passes():
    for T in (lg, torch):
        x = T.tensor([-1.0, -0.5, 0.0, 0.5, 1.0], requires_grad=True)
        x.clamp(-0.5, 0.5).sum().backward()
        assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]


@needs_torch
def test_kinks_take_torchs_side():
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0])
    for name in ['relu', 'leaky_relu', 'hardtanh', 'relu6', 'hardswish', 'hardsigmoid', 'elu', 'threshold',
                 'hardshrink', 'softshrink']:
        grads = []
        for T in (lg, torch):
            t = T.tensor(x, requires_grad=True)
            fn = getattr(F(T), name, None) or getattr(T, name)
            (fn(t, 0.0, 1.0) if name == 'threshold' else fn(t, 1.0) if name.endswith('shrink') else fn(t)).sum().backward()
            grads.append(t.grad.tolist())
        assert grads[0] == grads[1], (name, grads)


@needs_torch
def test_operators_and_dtypes():
    for T in (lg, torch):
        a, b = T.tensor([5, -3, 7]), T.tensor([2, 2, -3])
        x, y = np.array([5, -3, 7]), np.array([2, 2, -3])
        assert [(a // b).tolist(), (a % b).tolist(), (a & b).tolist(), (a | b).tolist(), (a ^ b).tolist(),
                (~a).tolist()] == [(x // y).tolist(), (x % y).tolist(), (x & y).tolist(), (x | y).tolist(),
                                   (x ^ y).tolist(), (~x).tolist()]
        assert (a // b).dtype == T.int64 and T.div(a, b, rounding_mode='trunc').tolist() == [2, -1, -2]
        c = a.clone()
        c //= 2
        c %= 3
        c &= 1
        c |= 4
        c ^= 1
        assert c.tolist() == [5, 4, 5]
        assert (T.tensor([1, 2], dtype=T.int32) + 1.5).dtype == T.float32


@needs_torch
def test_erfinv_edges():
    y = np.array([-1.0, -0.999999999999, -0.0, 0.0, 1e-300, 0.5, 1 - 2 ** -53, 1.0, 1.5, float('nan')])
    signed = y[:8]  # the sign of zero and of infinity (not of NaN)
    np.testing.assert_array_equal(np.signbit(lg.erfinv(lg.tensor(signed)).numpy()),
                                  np.signbit(torch.erfinv(torch.tensor(signed)).numpy()))
    np.testing.assert_allclose(lg.erfinv(lg.tensor(y)).numpy(), torch.erfinv(torch.tensor(y)).numpy(), rtol=1e-14)


@needs_torch
def test_erf_is_exact_in_float64():
    x = np.linspace(-5, 5, 41)
    np.testing.assert_allclose(lg.erf(lg.tensor(x)).numpy(), torch.erf(torch.tensor(x)).numpy(), rtol=1e-15, atol=1e-16)


_COMPARISONS = {'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'less', 'less_equal', 'greater', 'greater_equal', 'not_equal'}


@needs_torch
def test_names_exist_in_torch_where_leafgrad_exports_them():
    """Every op family's exports exist in torch under the same name and kind (torch.<f>,
    Tensor.<method>, nn.functional.<f>), and functions torch lacks as methods are not methods."""
    import importlib
    from leafgrad.ops import _op
    for family in ['elementwise', 'unary', 'rounding', 'pointwise', 'logical', 'activation',
                   'reduction']:  # declared ops: functions, methods and in-place ones as torch's
        module = importlib.import_module('leafgrad.ops.' + family)
        for name in module.__all__:
            assert hasattr(torch, name), (family, name)
            base = name[:-1] if name.endswith('_') else name
            # (the in-place comparisons, x.eq_(y), which record a node of zero derivative, are not made)
            for n in (base,) if base in _COMPARISONS else (base, base + '_'):
                assert hasattr(lg.Tensor, n) == hasattr(torch.Tensor, n), (family, n)
                assert hasattr(lg, n) == hasattr(torch, n), (family, n)
    for cls in _op.declared:  # nn.functional's, linalg's or special's only: there, not torch.<name> nor a method
        if not cls.public and cls.method is False:
            for n in (cls.op, cls.op + '_') if cls.inplace_function else (cls.op,):
                space, short = next(((s, n[len(s) + 1:]) for s in ('linalg', 'special') if n.startswith(s + '_')),
                                    ('nn.functional', n))
                theirs, ours = torch, lg
                for part in space.split('.'):
                    theirs, ours = getattr(theirs, part), getattr(ours, part)
                assert hasattr(theirs, short) and hasattr(ours, short), n
                assert not hasattr(torch, n) and not hasattr(lg, n) and not hasattr(lg.Tensor, n), n
    for cls in _op.declared:  # a method only (Tensor.view: no torch.view), as in PyTorch
        if not cls.public and cls.method is not False:
            assert hasattr(torch.Tensor, cls.op) and hasattr(lg.Tensor, cls.op), cls.op
            assert not hasattr(torch, cls.op) and not hasattr(lg, cls.op), cls.op


@needs_torch
def test_maximum_out_as_amsgrad_uses_it():
    for T in (lg, torch):
        running, new = T.tensor([1.0, 5.0, 2.0]), T.tensor([3.0, 4.0, 2.5])
        assert T.maximum(running, new, out=running) is running
        assert running.tolist() == [3.0, 5.0, 2.5]




# floating-point exceptions, as expressions of T (leafgrad or torch) and grad(T, fn, values)
FP_EXCEPTIONS = {
    '1 / 0': 'T.tensor([1.0, 0.0, -1.0]) / T.tensor([0.0, 0.0, 0.0])', 'x / 0.0': 'T.tensor([1.0]) / 0.0',
    'exp overflow': 'T.tensor([1000.0]).exp()', 'inf * 0': "T.tensor([float('inf')]) * 0",
    'inf - inf': "T.tensor([float('inf')]) - float('inf')", '0 ** -1': 'T.tensor([0.0]) ** -1.0',
    'reciprocal 0': 'T.tensor([0.0]).reciprocal()', 'float32 overflow': 'T.tensor([3e38]) * 10.0',
    'sum overflow': 'T.tensor([3e38, 3e38]).sum()', 'softmax inf': "T.tensor([float('inf'), 1.0]).softmax(0)",
    'nan to int': "T.tensor([float('nan')]).long()", 'log 0 grad': 'grad(T, lambda x: x.log(), [0.0])',
    'sqrt 0 grad': 'grad(T, lambda x: x.sqrt(), [0.0])', 'x / x grad at 0': 'grad(T, lambda x: x / x, [0.0])',
    '1 / 0 grad': 'grad(T, lambda x: x / T.tensor([0.0]), [1.0])',
    'mean of nothing': 'T.zeros(0, 3).mean()', 'mean of empty columns': 'T.zeros(0, 3).mean(0)',
    'mse of nothing': 'T.nn.functional.mse_loss(T.zeros(0), T.zeros(0))',
}
_GRAD = """
def grad(T, fn, values):
    x = T.tensor(values, requires_grad=True)
    fn(x).sum().backward()
    return x.grad
"""


def _evaluate(expr, T):
    scope = {'T': T}
    exec(_GRAD, scope)
    return eval(expr, scope)


@needs_torch
@pytest.mark.parametrize('name', list(FP_EXCEPTIONS))
def test_floating_point_exceptions_give_torchs_values(name):
    expr = FP_EXCEPTIONS[name]
    np.testing.assert_array_equal(_evaluate(expr, lg).numpy(), _evaluate(expr, torch).numpy())


@needs_torch
def test_floating_point_exceptions_are_silent_as_in_torch():
    """NumPy's RuntimeWarnings for 1/0, inf - inf, overflow do not leak out of leafgrad (PyTorch
    gives none), even under -W error; the user's own NumPy code still warns."""
    import subprocess
    import sys
    source = '\n'.join(['import numpy as np', 'import leafgrad as T', _GRAD]
                       + [f'{expr}' for expr in FP_EXCEPTIONS.values()]
                       + ['try:', '    np.array([1.0]) / 0', 'except RuntimeWarning:', "    print('user warns')"])
    run = subprocess.run([sys.executable, '-W', 'error', '-c', source], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == 'user warns\n', run.stderr[-2000:]


@needs_torch
@pytest.mark.parametrize('other', ['tensor', 2.0, 0.0, -1.0, float('nan'), float('inf')])
def test_xlogy_gradient_where_x_is_zero(other):
    """d xlogy(x, y)/dx is log y also at x = 0 (a Gamma or Dirichlet log_prob at concentration 1),
    taken as 0 only where y <= 0 (a number y: unless y > 0), as PyTorch takes it."""
    xs = [0.0, 0.0, 0.0, 1.0, float('nan'), 0.0, 0.0, 0.0, 2.0]
    ys = [0.0, 2.0, float('nan'), 0.0, 1.0, -1.0, float('inf'), -float('inf'), -1.0]
    grads = []
    for lib in (lg, torch):
        x = lib.tensor(xs, requires_grad=True)
        lib.xlogy(x, lib.tensor(ys) if other == 'tensor' else other).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@needs_torch
@pytest.mark.parametrize('name, args', [('exp2', ()), ('sinc', ()), ('logit', ()), ('logit', (0.1,))])
def test_pointwise_nodes_expose_what_they_saved_as_torch(name, args):
    x = np.array([0.25, 0.5, 0.75], dtype=np.float32)
    lf = getattr(lg, name)(lg.tensor(x, requires_grad=True), *args).grad_fn
    tf = getattr(torch, name)(torch.tensor(x, requires_grad=True), *args).grad_fn
    names = [a for a in dir(tf) if a.startswith('_saved_')]
    assert names and type(lf).__name__ == tf.name()
    for saved in names:
        lv, tv = getattr(lf, saved), getattr(tf, saved)
        if isinstance(tv, torch.Tensor):
            np.testing.assert_allclose(lv.detach().numpy(), tv.detach().numpy(), rtol=1e-6)
        else:
            assert lv == tv, saved


@needs_torch
@pytest.mark.parametrize('call', [
    lambda T, x: T.float_power(x, 2j),
    lambda T, x: T.float_power(x, 0.5 + 1j),
    lambda T, x: T.float_power(1.5j, x),
    lambda T, x: T.float_power(x.to(T.complex64), 2),
    lambda T, x: T.float_power(x, x.to(T.complex64)),
    lambda T, x: x.to(T.complex128).float_power_(x),
    lambda T, x: x.clone().float_power_(x),
])
def test_float_power_of_a_complex_operand_is_complex128(call):
    """float_power computes in complex128 where either operand is complex (the imaginary part
    was dropped); values, dtype and the gradient of the real input as PyTorch's."""
    data = [0.5, 1.0, 2.5]
    results = []
    for lib in (lg, torch):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        y = call(lib, x * 1)
        (y.real if y.is_complex() else y).sum().backward()
        results.append((str(y.dtype), y.detach().numpy(), x.grad.numpy()))
    assert results[0][0] == results[1][0].replace('torch', 'leafgrad')
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12, atol=1e-15)


@needs_torch
@pytest.mark.parametrize('base', [-2.0, -0.5, 1.5j, -1 + 1j, 0.0, 2.0])
def test_pow_gradient_of_a_number_base(base):
    """d base**x / dx = base**x log(base): NaN for a negative real base, the complex logarithm for
    a complex one (Python's math.log raised a ValueError, or a TypeError)."""
    grads = []
    for lib in (lg, torch):
        x = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, requires_grad=True)
        y = lib.pow(base, x)
        (y.real if y.is_complex() else y).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, equal_nan=True)
