"""Elementwise ops and activations against PyTorch, driven by one table (CASES).

Each row runs the same function ``fn(T, *xs)`` with T = leafgrad and T = torch on the same data,
and the generic tests compare: forward values, dtype and shape (float32, and integer inputs where
the op takes them); the node name; first derivatives (backward of a randomly weighted sum);
second derivatives (create_graph=True, then the gradient of a weighted sum of the gradients);
and a float64 finite-difference check of both derivatives (tests/fd.py).
"""
import numpy as np
import pytest

import leafgrad as lg
from leafgrad.ops import activation as lg_F

torch = pytest.importorskip('torch')
import torch.nn.functional as torch_F  # noqa: E402

from fd import check_grad, check_gradgrad  # noqa: E402


def F(T):
    """nn.functional of either library (leafgrad's activations live in ops.activation)."""
    return lg_F if T is lg else torch_F


# ---- input generators -------------------------------------------------------------------------
# r: normal; p: positive; u: in (-0.9, 0.9); z: normal, away from 0; g: > 1.2; s: normal * 4
# (reaching the kinks of hardtanh/relu6/hardswish); i: small integers; b: bool

def make(kind, shape, rng):
    if kind == 'r':
        return rng.standard_normal(shape)
    if kind == 'p':
        return rng.uniform(0.5, 2.0, shape)
    if kind == 'u':
        return rng.uniform(-0.9, 0.9, shape)
    if kind == 'z':
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    if kind == 'g':
        return rng.uniform(1.2, 3.0, shape)
    if kind == 's':
        return rng.standard_normal(shape) * 4
    if kind == 'i':
        return rng.integers(-5, 6, shape)
    if kind == 'b':
        return rng.random(shape) > 0.5
    raise ValueError(kind)


class Case:
    def __init__(self, name, fn, kinds, shapes=None, grad=True, gradgrad=True, ints=False, atol=1e-6):
        self.name, self.fn, self.kinds = name, fn, kinds
        if shapes is None:
            shapes = UNARY if len(kinds) == 1 else BINARY
        self.shapes, self.grad, self.gradgrad, self.ints, self.atol = shapes, grad, gradgrad, ints, atol

    def __repr__(self):
        return self.name


UNARY = [((3, 4),), ((),), ((0, 3),), ((2, 1, 3),)]
BINARY = [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()), ((0, 3), (3,))]
BOUNDS = [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), ()), ((2, 3), (3,), (2, 1))]  # x has the full shape
TERNARY = [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ()), ((2, 3), (3,), (2, 1))]

CASES = [
    # arithmetic
    Case('add', lambda T, x, y: T.add(x, y), 'rr', ints=True),
    Case('add_alpha', lambda T, x, y: T.add(x, y, alpha=2.5), 'rr'),
    Case('add_scalar', lambda T, x: x + 1.5, 'r', ints=True),
    Case('sub', lambda T, x, y: T.sub(x, y), 'rr', ints=True),
    Case('sub_alpha', lambda T, x, y: T.sub(x, y, alpha=-2), 'rr'),
    Case('rsub', lambda T, x: 2.0 - x, 'r'),
    Case('mul', lambda T, x, y: T.mul(x, y), 'rr', ints=True),
    Case('div', lambda T, x, y: T.div(x, y), 'rz', ints=False),
    Case('rdiv', lambda T, x: 2.0 / x, 'z'),
    Case('div_trunc', lambda T, x, y: T.div(x, y, rounding_mode='trunc'), 'rz'),
    Case('div_floor', lambda T, x, y: T.div(x, y, rounding_mode='floor'), 'rz'),
    Case('div_floor_scalar', lambda T, x: T.div(x, 0.7, rounding_mode='floor'), 'r'),
    Case('pow_scalar', lambda T, x: x ** 3, 'r', ints=True),
    Case('pow_half', lambda T, x: x ** 0.5, 'p'),
    Case('pow_tensor', lambda T, x, y: T.pow(x, y), 'pr'),
    Case('rpow', lambda T, x: 2.0 ** x, 'r'),
    Case('square', lambda T, x: T.square(x), 'r'),
    Case('reciprocal', lambda T, x: T.reciprocal(x), 'z'),
    Case('neg', lambda T, x: -x, 'r', ints=True),
    Case('abs', lambda T, x: T.abs(x), 'z', ints=True),
    # unary math
    Case('rsqrt', lambda T, x: T.rsqrt(x), 'p'),
    Case('expm1', lambda T, x: T.expm1(x), 'r', ints=True),
    Case('log1p', lambda T, x: T.log1p(x), 'p'),
    Case('log2', lambda T, x: T.log2(x), 'p'),
    Case('log10', lambda T, x: T.log10(x), 'p'),
    Case('tan', lambda T, x: T.tan(x), 'u'),
    Case('asin', lambda T, x: T.asin(x), 'u'),
    Case('acos', lambda T, x: T.acos(x), 'u'),
    Case('atan', lambda T, x: T.atan(x), 'r', ints=True),
    Case('sinh', lambda T, x: T.sinh(x), 'r'),
    Case('cosh', lambda T, x: T.cosh(x), 'r'),
    Case('asinh', lambda T, x: T.asinh(x), 'r'),
    Case('acosh', lambda T, x: T.acosh(x), 'g'),
    Case('atanh', lambda T, x: T.atanh(x), 'u'),
    Case('erf', lambda T, x: T.erf(x), 'r', ints=True),
    Case('erfc', lambda T, x: T.erfc(x), 'r'),
    Case('atan2', lambda T, x, y: T.atan2(x, y), 'rz'),
    Case('exp', lambda T, x: T.exp(x), 'r'),
    Case('sin', lambda T, x: x.sin(), 'r'),
    # clamp, maximum, minimum, lerp
    Case('clamp', lambda T, x: T.clamp(x, -0.5, 0.5), 'r', ints=True),
    Case('clamp_min', lambda T, x: T.clamp(x, min=0.1), 'r'),
    Case('clamp_max', lambda T, x: x.clamp(max=-0.1), 'r'),
    Case('clip', lambda T, x: T.clip(x, -1, 0.3), 'r'),
    Case('clamp_float_bound_int', lambda T, x: T.clamp(x, 0.5), 'r', ints=True),
    Case('clamp_tensor', lambda T, x, lo, hi: T.clamp(x, lo, hi), 'rrr', BOUNDS),
    Case('clamp_tensor_min', lambda T, x, lo: T.clamp(x, min=lo), 'rr', [s[:2] for s in BOUNDS]),
    Case('clamp_tensor_max', lambda T, x, hi: T.clamp(x, max=hi), 'rr', [s[:2] for s in BOUNDS]),
    Case('maximum', lambda T, x, y: T.maximum(x, y), 'rr', ints=True),
    Case('minimum', lambda T, x, y: T.minimum(x, y), 'rr', ints=True),
    Case('max_binary', lambda T, x, y: T.max(x, y), 'rr'),
    Case('lerp_scalar', lambda T, x, y: T.lerp(x, y, 0.3), 'rr'),
    Case('lerp_scalar_high', lambda T, x, y: T.lerp(x, y, 0.8), 'rr'),
    Case('lerp_tensor', lambda T, x, y, w: T.lerp(x, y, w), 'rrr', TERNARY),
    # rounding and remainders
    Case('floor', lambda T, x: T.floor(x * 3), 'r', ints=True),
    Case('ceil', lambda T, x: T.ceil(x * 3), 'r', ints=True),
    Case('round', lambda T, x: T.round(x * 3), 'r', ints=True),
    Case('round_decimals', lambda T, x: T.round(x * 30, decimals=1), 'r'),
    Case('round_negative_decimals', lambda T, x: T.round(x * 300, decimals=-1), 'r'),
    Case('trunc', lambda T, x: T.trunc(x * 3), 'r', ints=True),
    Case('fix', lambda T, x: T.fix(x * 3), 'r'),
    Case('frac', lambda T, x: T.frac(x * 3), 'r'),
    Case('fmod_scalar', lambda T, x: T.fmod(x * 3, 1.5), 'r', ints=True),
    Case('fmod_tensor', lambda T, x, y: T.fmod(x * 3, y), 'rz'),
    Case('remainder_scalar', lambda T, x: T.remainder(x * 3, 1.5), 'r', ints=True),
    Case('remainder_tensor', lambda T, x, y: T.remainder(x * 3, y), 'rz'),
    Case('mod_operator', lambda T, x: (x * 3) % -1.5, 'r'),
    Case('rmod_operator', lambda T, x: 5 % x, 'z', grad=False),
    Case('nan_to_num', lambda T, x: T.nan_to_num(T.log(x), nan=0.5, posinf=3.0), 'r'),
    Case('nan_to_num_default', lambda T, x: T.nan_to_num(T.log(x)), 'r', grad=False),
    # activations with torch.* names
    Case('relu', lambda T, x: T.relu(x), 'r'),
    Case('sigmoid', lambda T, x: T.sigmoid(x), 's'),
    Case('tanh', lambda T, x: T.tanh(x), 'r'),
    Case('selu', lambda T, x: T.selu(x), 'r'),
    Case('celu', lambda T, x: T.celu(x, 0.7), 'r'),
    Case('threshold', lambda T, x: T.threshold(x, 0.1, 2.0), 'r'),
    Case('hardshrink', lambda T, x: T.hardshrink(x, 0.4), 'r'),
    # nn.functional activations
    Case('leaky_relu', lambda T, x: F(T).leaky_relu(x, 0.2), 'r'),
    Case('leaky_relu_default', lambda T, x: F(T).leaky_relu(x), 'r'),
    Case('elu', lambda T, x: F(T).elu(x), 'r'),
    Case('elu_alpha', lambda T, x: F(T).elu(x, alpha=0.5), 'r'),
    Case('F_selu', lambda T, x: F(T).selu(x), 'r'),
    Case('gelu', lambda T, x: F(T).gelu(x), 's'),
    Case('gelu_tanh', lambda T, x: F(T).gelu(x, approximate='tanh'), 's'),
    Case('silu', lambda T, x: F(T).silu(x), 's'),
    Case('mish', lambda T, x: F(T).mish(x), 's'),
    Case('softplus', lambda T, x: F(T).softplus(x), 's'),
    Case('softplus_beta', lambda T, x: F(T).softplus(x, beta=2, threshold=1), 'r'),
    Case('logsigmoid', lambda T, x: F(T).logsigmoid(x), 's'),
    Case('hardtanh', lambda T, x: F(T).hardtanh(x), 's'),
    Case('hardtanh_range', lambda T, x: F(T).hardtanh(x, -0.5, 2.0), 's'),
    Case('relu6', lambda T, x: F(T).relu6(x * 2), 's'),
    Case('hardswish', lambda T, x: F(T).hardswish(x), 's'),
    Case('hardsigmoid', lambda T, x: F(T).hardsigmoid(x), 's', gradgrad=False),  # torch: not implemented
    Case('softshrink', lambda T, x: F(T).softshrink(x, 0.3), 'r'),
    Case('softsign', lambda T, x: F(T).softsign(x), 'r'),
    Case('tanhshrink', lambda T, x: F(T).tanhshrink(x), 'r'),
    # no gradient: logical, bitwise, class tests, floor division
    Case('logical_and', lambda T, x, y: T.logical_and(x, y), 'ri', grad=False, ints=True),
    Case('logical_or', lambda T, x, y: T.logical_or(x, y), 'bb', grad=False),
    Case('logical_xor', lambda T, x, y: x.logical_xor(y), 'ib', grad=False),
    Case('logical_not', lambda T, x: T.logical_not(x), 'r', grad=False, ints=True),
    Case('bitwise_and', lambda T, x, y: T.bitwise_and(x, y), 'ii', grad=False),
    Case('and_operator', lambda T, x, y: x & y, 'bb', grad=False),
    Case('or_operator', lambda T, x, y: x | y, 'ii', grad=False),
    Case('xor_operator', lambda T, x, y: x ^ y, 'bi', grad=False),
    Case('xor_scalar', lambda T, x: x ^ 3, 'i', grad=False),
    Case('rand_scalar', lambda T, x: 6 & x, 'i', grad=False),
    Case('invert_bool', lambda T, x: ~x, 'b', grad=False),
    Case('invert_int', lambda T, x: ~x, 'i', grad=False),
    Case('bitwise_not', lambda T, x: T.bitwise_not(x), 'i', grad=False),
    Case('isnan', lambda T, x: T.isnan(T.log(x)), 'r', grad=False),
    Case('isinf', lambda T, x: T.isinf(1 / (x * 0)), 'r', grad=False),
    Case('isfinite', lambda T, x: T.isfinite(T.log(x)), 'r', grad=False, ints=True),
    Case('floor_divide', lambda T, x, y: T.floor_divide(x * 3, y), 'rz', grad=False),
    Case('floordiv_operator', lambda T, x: (x * 3) // 0.7, 'r', grad=False),
    Case('rfloordiv_operator', lambda T, x: 3 // x, 'z', grad=False),
]


def _inputs(case, shapes, rng, dtype):
    arrays = []
    for kind, shape in zip(case.kinds, shapes):
        a = make(kind, shape, rng)
        if a.dtype.kind == 'f':
            a = a.astype(dtype)
        arrays.append(a)
    return arrays


def _pair(arrays, requires_grad=False):
    lgs = [lg.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == 'f') for a in arrays]
    ths = [torch.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == 'f') for a in arrays]
    return lgs, ths


def _outs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _np(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _same(a, b, atol, rtol=1e-5, what=''):
    assert tuple(a.shape) == tuple(b.shape), (what, a.shape, b.shape)
    assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1], (what, a.dtype, b.dtype)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _params():
    for case in CASES:
        for shapes in case.shapes:
            yield pytest.param(case, shapes, id=f'{case.name}-{"x".join(str(list(s)) for s in shapes)}')


PARAMS = list(_params())


@pytest.mark.parametrize('case,shapes', PARAMS)
def test_forward(case, shapes):
    rng = np.random.default_rng(1)
    with np.errstate(all='ignore'):
        a = _inputs(case, shapes, rng, np.float32)
        lx, tx = _pair(a)
        for lo, to in zip(_outs(case.fn(lg, *lx)), _outs(case.fn(torch, *tx))):
            _same(lo, to, atol=1e-5, what='float32 forward')
        if case.ints:
            a = [np.round(x * 3).astype(np.int64) if x.dtype.kind == 'f' else x for x in a]
            lx, tx = _pair(a)
            for lo, to in zip(_outs(case.fn(lg, *lx)), _outs(case.fn(torch, *tx))):
                _same(lo, to, atol=1e-5, what='integer forward')


def _grad_params():
    for p in PARAMS:
        case = p.values[0]
        if case.grad:
            yield p


GRAD_PARAMS = list(_grad_params())


def _weighted_sum(outs, weights):
    total = None
    for o, w in zip(outs, weights):
        s = (o * w).sum()
        total = s if total is None else total + s
    return total


@pytest.mark.parametrize('case,shapes', GRAD_PARAMS)
def test_first_and_second_derivatives(case, shapes):
    rng = np.random.default_rng(2)
    a = _inputs(case, shapes, rng, np.float64)
    lx, tx = _pair(a, requires_grad=True)
    lo, to = _outs(case.fn(lg, *lx)), _outs(case.fn(torch, *tx))
    for l, t in zip(lo, to):
        _same(l, t, atol=1e-9, what='float64 forward')
        if t.grad_fn is not None:
            assert l.grad_fn is not None and l.grad_fn.name() == t.grad_fn.name(), (l.grad_fn, t.grad_fn)
    w = [rng.standard_normal(t.shape) for t in to]
    ls = _weighted_sum(lo, [lg.tensor(x) for x in w])
    ts = _weighted_sum(to, [torch.tensor(x) for x in w])
    l_inputs = [x for x in lx if x.requires_grad]
    t_inputs = [x for x in tx if x.requires_grad]
    lg_g = lg.autograd.grad(ls, l_inputs, create_graph=True, allow_unused=True)
    th_g = torch.autograd.grad(ts, t_inputs, create_graph=True, allow_unused=True)
    for l, t in zip(lg_g, th_g):
        if t is None:
            assert l is None or not np.any(_np(l)), l
            continue
        _same(l, t, atol=1e-9, what='first derivative')
    if not case.gradgrad:
        return
    # second derivatives: gradient of <grads, v>
    v = [rng.standard_normal(x.shape) for x in t_inputs]
    l2 = [(g * lg.tensor(x)).sum() for g, x in zip(lg_g, v) if g is not None and g.requires_grad]
    t2 = [(g * torch.tensor(x)).sum() for g, x in zip(th_g, v) if g is not None and g.requires_grad]
    assert len(l2) == len(t2), 'which first derivatives are differentiable differs from torch'
    if not t2:
        return
    lg_gg = lg.autograd.grad(sum(l2[1:], l2[0]), l_inputs, allow_unused=True)
    th_gg = torch.autograd.grad(sum(t2[1:], t2[0]), t_inputs, allow_unused=True)
    for l, t in zip(lg_gg, th_gg):
        ln = np.zeros(1) if l is None else _np(l)
        tn = np.zeros(1) if t is None else _np(t)
        np.testing.assert_allclose(np.broadcast_to(ln, np.broadcast_shapes(ln.shape, tn.shape)),
                                   np.broadcast_to(tn, np.broadcast_shapes(ln.shape, tn.shape)),
                                   rtol=1e-5, atol=1e-8, err_msg='second derivative')


def _fd_params():
    # finite differences on the first two shape sets (the others are the same code at other shapes)
    for case in CASES:
        if case.grad:
            for shapes in case.shapes[:2]:
                yield pytest.param(case, shapes, id=f'{case.name}-{"x".join(str(list(s)) for s in shapes)}')


@pytest.mark.parametrize('case,shapes', list(_fd_params()))
def test_finite_differences(case, shapes):
    rng = np.random.default_rng(3)
    a = _inputs(case, shapes, rng, np.float64)
    xs = [lg.tensor(x, requires_grad=True) for x in a if x.dtype.kind == 'f']

    def fn(*args):
        return case.fn(lg, *args)
    check_grad(fn, xs)
    if case.gradgrad:
        check_gradgrad(fn, xs)
