"""bfloat16 as a dtype, against PyTorch: creation, promotion, printing, conversions, errors, and
the values of ops and their gradients.

PyTorch computes a bfloat16 op in float32 and rounds its result once (sums and matrix products
accumulate in float32); leafgrad does the same, so most results are compared bit for bit. The
comparisons run on sizes that are multiples of 64: PyTorch's CPU kernels round a few ops
(``add`` with ``alpha``, ``softshrink`` ...) differently in the last elements of a row that do
not fill a vector register, and leafgrad computes every element as the vectorized body does.
Where PyTorch's kernels round intermediate results in bfloat16 (the norms' gradients, erf's
tails, the elementwise table's composite derivatives), a tolerance in bfloat16 ulps is stated.
"""
import io

import numpy as np
import pytest

import leafgrad as lg
import leafgrad.nn.functional as LF

torch = pytest.importorskip('torch')
import torch.nn.functional as TF  # noqa: E402

from fresh import fresh_python_output  # noqa: E402
from oracle import raises_like, same_message  # noqa: E402

BF = torch.bfloat16


def F(T):
    return LF if T is lg else TF


def _np(t):
    t = t.detach()
    return t.float().numpy() if t.dtype in (BF, lg.bfloat16) else t.numpy()


def _name(dtype):
    return str(dtype).split('.')[-1]


def _pair(*shapes, seed=0, grad=False, scale=1.0):
    """The same bfloat16 data in both libraries (from normal float32 values, rounded)."""
    rng = np.random.default_rng(seed)
    lgs, ths = [], []
    for shape in shapes:
        t = torch.tensor(rng.standard_normal(shape).astype(np.float32) * scale).to(BF).requires_grad_(grad)
        lgs.append(lg.tensor(_np(t), dtype=lg.bfloat16, requires_grad=grad))
        ths.append(t)
    return lgs, ths


def _ulps(a, b):
    """The distance of two float32 arrays of bfloat16 values, in bfloat16 steps (0 if both NaN)."""
    def key(x):
        i = x.astype(np.float32).view(np.int32).astype(np.int64) >> 16
        return np.where(i < 0, -(i & 0x7fff), i)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, np.abs(key(a) - key(b)))


def assert_same(l, t, ulps=0):
    """Same dtype and shape; bit for bit, or within ``ulps`` bfloat16 steps (other floating dtypes
    then to 1e-12 relative)."""
    assert _name(l.dtype) == _name(t.dtype)
    assert tuple(l.shape) == tuple(t.shape)
    a, b = _np(l), _np(t)
    if ulps == 0:
        np.testing.assert_array_equal(a, b)
    elif l.dtype is lg.bfloat16:
        assert _ulps(a, b).max(initial=0) <= ulps, (a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ---- the dtype --------------------------------------------------------------------------------

def test_import_leafgrad_does_not_load_ml_dtypes():
    code = ('import sys, leafgrad; a = "ml_dtypes" in sys.modules; leafgrad.bfloat16; '
            'print(a, "ml_dtypes" in sys.modules)')
    assert fresh_python_output(code) == 'False True'


def test_dtype_attributes_as_torch():
    d, t = lg.bfloat16, torch.bfloat16
    assert repr(d).replace('leafgrad', 'torch') == repr(t) and str(d).replace('leafgrad', 'torch') == str(t)
    for attr in ('is_floating_point', 'is_signed', 'itemsize', 'is_complex'):
        assert getattr(d, attr) == getattr(t, attr), attr
    assert lg.bfloat16 is lg.bfloat16 and d.to_real() is d


def test_finfo_as_torch():
    lf, tf = lg.finfo(lg.bfloat16), torch.finfo(torch.bfloat16)
    assert repr(lf) == repr(tf)
    for attr in ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution', 'dtype'):
        assert getattr(lf, attr) == getattr(tf, attr), attr


@pytest.mark.parametrize('other', ['float16', 'float32', 'float64', 'int64', 'int8', 'uint8', 'bool', 'bfloat16'])
def test_promote_types_as_torch(other):
    l = lg.promote_types(lg.bfloat16, getattr(lg, other))
    t = torch.promote_types(torch.bfloat16, getattr(torch, other))
    assert _name(l) == _name(t)
    assert _name(lg.promote_types(getattr(lg, other), lg.bfloat16)) == _name(t)


@pytest.mark.parametrize('make', [
    lambda T, x: x + 1,
    lambda T, x: x + 2.5,
    lambda T, x: x * True,
    lambda T, x: x + T.tensor(1.5),
    lambda T, x: x + T.tensor([1.5] * 4),
    lambda T, x: x + T.tensor([1.5] * 4, dtype=T.float16),
    lambda T, x: x + T.tensor([1, 2, 3, 4]),
    lambda T, x: x[0] + T.tensor(1.5),
    lambda T, x: x[0] + T.tensor(1, dtype=T.int32),
    lambda T, x: T.tensor([1, 2]) / T.tensor(2, dtype=T.bfloat16),
    lambda T, x: T.result_type(x, 2.5),
], ids=['int', 'float', 'bool', '0dim_float32', 'float32', 'float16', 'int64', 'both_0dim', '0dim_int',
        'int_by_0dim', 'result_type'])
def test_result_dtype_as_torch(make):
    out = {T: make(T, T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.bfloat16)) for T in (lg, torch)}
    l, t = out[lg], out[torch]
    assert _name(getattr(l, 'dtype', l)) == _name(getattr(t, 'dtype', t))


# ---- creation and conversion ------------------------------------------------------------------

@pytest.mark.parametrize('make', [
    lambda T: T.tensor([1.1, -2.7, 3.3e5, 1e-3], dtype=T.bfloat16),
    lambda T: T.tensor([1, 2, 300], dtype=T.bfloat16),
    lambda T: T.zeros(2, 3, dtype=T.bfloat16),
    lambda T: T.ones(4, dtype=T.bfloat16, requires_grad=True),
    lambda T: T.full((2,), 0.1, dtype=T.bfloat16),
    lambda T: T.arange(0, 1, 0.125, dtype=T.bfloat16),
    lambda T: T.linspace(0, 1, 7, dtype=T.bfloat16),
    lambda T: T.tensor([0.1, 1e40, float('nan')]).bfloat16(),
    lambda T: T.tensor([0.1, 2.5]).to(T.bfloat16),
    lambda T: T.tensor([0.1, 2.5]).to(dtype=T.bfloat16).float(),
    lambda T: T.tensor([0.1, 2.5]).type(T.bfloat16).double(),
    lambda T: T.tensor([1.7, -2.5], dtype=T.bfloat16).long(),
    lambda T: T.zeros_like(T.ones(3), dtype=T.bfloat16),
    lambda T: T.tensor([2.5, 3.5], dtype=T.bfloat16).type_as(T.ones(1)),
], ids=['list', 'ints', 'zeros', 'ones_grad', 'full', 'arange', 'linspace', 'cast_overflow_nan', 'to', 'back',
        'type', 'to_long', 'zeros_like', 'type_as'])
def test_creation_and_conversion_as_torch(make):
    l, t = make(lg), make(torch)
    assert_same(l, t)
    assert l.requires_grad == t.requires_grad
    assert repr(l).replace('leafgrad', 'torch') == repr(t)


def test_tensor_properties_as_torch():
    for T in (lg, torch):
        x = T.tensor([1.5, 2.25, 0.1], dtype=T.bfloat16)
        assert x.element_size() == 2 and x.is_floating_point() and x.dtype.is_floating_point
        assert x.tolist() == [1.5, 2.25, 0.10009765625] and type(x[0].item()) is float
        assert float(x[1]) == 2.25
    assert lg.tensor([1.0], dtype=lg.bfloat16).type() == 'leafgrad.BFloat16Tensor'
    assert torch.tensor([1.0], dtype=BF).type() == 'torch.BFloat16Tensor'
    assert lg.ones(2).type('torch.BFloat16Tensor').dtype is lg.bfloat16


@pytest.mark.parametrize('make', [
    lambda T: T.tensor([1.0, 2.0], dtype=T.bfloat16),
    lambda T: T.tensor([[1.0625, 2e-5], [3e8, -4.0]], dtype=T.bfloat16),
    lambda T: T.tensor([100.0, 2.0, 3.0], dtype=T.bfloat16),
    lambda T: T.tensor(3.14159, dtype=T.bfloat16),
    lambda T: T.tensor([], dtype=T.bfloat16),
    lambda T: T.zeros(2, 0, dtype=T.bfloat16),
    lambda T: T.tensor([float('inf'), float('nan'), 1.5], dtype=T.bfloat16),
    lambda T: T.tensor([0.1] * 8, dtype=T.bfloat16, requires_grad=True) * 3,
    lambda T: T.arange(2000, dtype=T.bfloat16).reshape(40, 50) / 7,
    lambda T: T.tensor([123456.0, 0.001], dtype=T.bfloat16),
], ids=['small', 'sci', 'ints', '0dim', 'empty', 'empty_2d', 'inf_nan', 'grad_fn', 'summarized', 'wide'])
def test_repr_as_torch(make):
    assert repr(make(lg)).replace('leafgrad', 'torch') == repr(make(torch))


def test_bfloat16_numpy_arrays_refused_as_torch():
    for make in (lambda T, a: T.from_numpy(a), lambda T, a: T.tensor(a), lambda T, a: T.as_tensor(a)):
        a = np.ones(2, dtype=lg.bfloat16.np)
        with pytest.raises(TypeError, match="can't convert np.ndarray of type ml_dtypes.bfloat16"):
            make(torch, a)
        with pytest.raises(TypeError, match="can't convert np.ndarray of type ml_dtypes.bfloat16"):
            make(lg, a)


@pytest.mark.parametrize('fn', [
    lambda T: T.tensor([1.0], dtype=T.bfloat16).numpy(),
    lambda T: T.tensor([1.0], dtype=T.bfloat16).numpy(force=True),
    lambda T: np.asarray(T.tensor([1.0], dtype=T.bfloat16)),
    lambda T: T.tensor([1, 2], dtype=T.bfloat16, requires_grad=True).long().requires_grad_(),
    lambda T: T.linalg.inv(T.eye(3, dtype=T.bfloat16)),
    lambda T: T.linalg.cholesky(T.eye(3, dtype=T.bfloat16)),
    lambda T: T.linalg.pinv(T.eye(3, dtype=T.bfloat16)),
], ids=['numpy', 'numpy_force', 'asarray', 'long_requires_grad', 'inv', 'cholesky', 'pinv'])
def test_errors_as_torch(fn):
    lg_msg, th_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
    assert same_message(lg_msg, th_msg), (lg_msg, th_msg)


@pytest.mark.parametrize('make', [
    lambda T: T.randn(64, dtype=T.bfloat16),
    lambda T: T.rand(64, dtype=T.bfloat16),
    lambda T: T.empty(64, dtype=T.bfloat16).normal_(),
    lambda T: T.empty(64, dtype=T.bfloat16).uniform_(-1, 2),
    lambda T: F(T).dropout(T.ones(64, dtype=T.bfloat16), 0.3),
    lambda T: T.bernoulli(T.full((64,), 0.3, dtype=T.bfloat16)),
    lambda T: T.randint(0, 10, (64,), dtype=T.bfloat16),
], ids=['randn', 'rand', 'normal_', 'uniform_', 'dropout', 'bernoulli', 'randint'])
def test_random_numbers_as_torch(make):
    torch.manual_seed(0)
    lg.manual_seed(0)
    assert_same(make(lg), make(torch))


def test_checkpoint_round_trip():
    x = lg.tensor([[1.5, -0.1], [3e5, 2.0]], dtype=lg.bfloat16, requires_grad=True)
    m = lg.nn.Linear(2, 3).bfloat16()
    buf = io.BytesIO()
    lg.save({'x': x, 'model': m.state_dict(), 'dtype': lg.bfloat16}, buf)
    buf.seek(0)
    out = lg.load(buf)
    assert out['x'].dtype is lg.bfloat16 and out['x'].requires_grad and out['dtype'] is lg.bfloat16
    np.testing.assert_array_equal(_np(out['x']), _np(x))
    assert all(v.dtype is lg.bfloat16 for v in out['model'].values())


def test_load_reads_torchs_bfloat16_tensors():
    t = torch.tensor([[1.5, -0.1], [3e5, 2.0]], dtype=BF)
    buf = io.BytesIO()
    torch.save({'w': t}, buf)
    buf.seek(0)
    w = lg.load(buf)['w']
    assert w.dtype is lg.bfloat16
    np.testing.assert_array_equal(_np(w), _np(t))


def test_module_bfloat16_as_torch():
    for T in (lg, torch):
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Linear(4, 3), T.nn.LayerNorm(3)).bfloat16()
        assert all(p.dtype is T.bfloat16 for p in m.parameters())
        assert m.float()[0].weight.dtype is T.float32


# ---- values: bit for bit where PyTorch rounds once -------------------------------------------

BINARY = [
    ('add', lambda T, x, y: x + y), ('sub', lambda T, x, y: x - y), ('mul', lambda T, x, y: x * y),
    ('div', lambda T, x, y: x / y), ('add_alpha', lambda T, x, y: T.add(x, y, alpha=1.7)),
    ('sub_alpha', lambda T, x, y: T.sub(x, y, alpha=0.3)), ('mul_scalar', lambda T, x, y: x * 0.1),
    ('scalar_mul', lambda T, x, y: 1.7 * x), ('div_scalar', lambda T, x, y: x / 0.3),
    ('scalar_div', lambda T, x, y: 0.7 / y), ('add_scalar', lambda T, x, y: x + 0.1),
    ('rsub_scalar', lambda T, x, y: 0.3 - x), ('mul_int', lambda T, x, y: x * 257),
    ('mul_0dim_float32', lambda T, x, y: x * T.tensor(0.1)), ('pow_scalar', lambda T, x, y: x.abs() ** 0.7),
    ('pow_tensor', lambda T, x, y: x.abs() ** y), ('maximum', lambda T, x, y: T.maximum(x, y)),
    ('atan2', lambda T, x, y: T.atan2(x, y)), ('div_trunc', lambda T, x, y: T.div(x, 0.1, rounding_mode='trunc')),
    ('floor_divide', lambda T, x, y: x // 0.3), ('remainder', lambda T, x, y: x % 0.7),
    ('lerp', lambda T, x, y: T.lerp(x, y, 0.3)), ('lerp_high', lambda T, x, y: T.lerp(x, y, 1.7)),
    ('addcmul', lambda T, x, y: T.addcmul(x, x, y, value=0.1)), ('addcdiv', lambda T, x, y: x.addcdiv(x, y, value=1.7)),
    ('where', lambda T, x, y: T.where(x > 0, x, y)), ('clamp', lambda T, x, y: x.clamp(-0.3, 0.7)),
    ('inplace_mul', lambda T, x, y: x.clone().mul_(0.1)), ('inplace_add_alpha', lambda T, x, y: x.clone().add_(y, alpha=0.3)),
]
UNARY = ['exp', 'log', 'sqrt', 'rsqrt', 'sin', 'cos', 'tanh', 'sigmoid', 'abs', 'neg', 'reciprocal', 'expm1',
         'log1p', 'erf', 'atan', 'sinh', 'floor', 'round', 'sign']


@pytest.mark.parametrize('name,fn', BINARY, ids=[b[0] for b in BINARY])
def test_binary_bit_for_bit(name, fn):
    """(lerp: within 1 ulp, PyTorch's float32 arithmetic differs in one element of 512.)"""
    (lx, ly), (tx, ty) = _pair((8, 64), (8, 64), scale=3)
    assert_same(fn(lg, lx, ly), fn(torch, tx, ty), ulps=1 if name.startswith('lerp') else 0)


@pytest.mark.parametrize('name', UNARY)
def test_unary_bit_for_bit(name):
    (lx,), (tx,) = _pair((8, 64), scale=2)
    if name in ('log', 'sqrt', 'rsqrt', 'log1p'):
        lx, tx = lx.abs(), tx.abs()
    assert_same(getattr(lg, name)(lx), getattr(torch, name)(tx))


REDUCTIONS = [
    ('sum', lambda T, x: x.sum()), ('sum_dim', lambda T, x: x.sum(1)), ('sum_dim0', lambda T, x: x.sum(0)),
    ('sum_of_ones', lambda T, x: T.ones(1000, dtype=T.bfloat16).sum()),
    ('sum_float32', lambda T, x: x.sum(dtype=T.float32)), ('mean', lambda T, x: x.mean()),
    ('mean_dim', lambda T, x: x.mean(1)), ('var', lambda T, x: x.var(1)), ('std', lambda T, x: x.std()),
    ('prod', lambda T, x: x[:, :6].prod(1)), ('cumsum', lambda T, x: x.cumsum(1)),
    ('cumprod', lambda T, x: x[:, :6].cumprod(1)), ('norm', lambda T, x: x.norm(dim=1)),
    ('logsumexp', lambda T, x: x.logsumexp(1)), ('amax', lambda T, x: x.amax(1)), ('max_dim', lambda T, x: x.max(0)[0]),
    ('argmax', lambda T, x: x.argmax(1)), ('sort', lambda T, x: x.sort(1)[0]), ('nansum', lambda T, x: x.nansum(1)),
]


@pytest.mark.parametrize('name,fn', REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_bit_for_bit(name, fn):
    (lx,), (tx,) = _pair((16, 64))
    assert_same(fn(lg, lx), fn(torch, tx))


NN = [
    ('linear', lambda T, x, w, b: F(T).linear(x, w, b), [(64, 32), (16, 32), (16,)]),
    ('linear_3d', lambda T, x, w: F(T).linear(x, w), [(4, 8, 32), (16, 32)]),
    ('matmul', lambda T, a, b: a @ b, [(64, 32), (32, 16)]),
    ('bmm', lambda T, a, b: T.bmm(a, b), [(4, 16, 32), (4, 32, 16)]),
    ('baddbmm', lambda T, c, a, b: T.baddbmm(c, a, b, beta=0.5, alpha=2.0), [(4, 16, 16), (4, 16, 32), (4, 32, 16)]),
    ('addbmm', lambda T, c, a, b: T.addbmm(c, a, b), [(16, 16), (4, 16, 32), (4, 32, 16)]),
    ('conv1d', lambda T, x, w, b: F(T).conv1d(x, w, b, padding=1), [(2, 3, 64), (4, 3, 3), (4,)]),
    ('conv2d', lambda T, x, w, b: F(T).conv2d(x, w, b, padding=1), [(2, 3, 8, 8), (8, 3, 3, 3), (8,)]),
    ('relu', lambda T, x: T.relu(x), [(64, 64)]),
    ('gelu', lambda T, x: F(T).gelu(x), [(64, 64)]),
    ('silu', lambda T, x: F(T).silu(x), [(64, 64)]),
    ('softplus', lambda T, x: F(T).softplus(x), [(64, 64)]),
    ('softmax', lambda T, x: F(T).softmax(x, -1), [(64, 64)]),
    ('log_softmax', lambda T, x: F(T).log_softmax(x, -1), [(64, 37)]),
    ('log_softmax_dim0', lambda T, x: F(T).log_softmax(x, 0), [(64, 64)]),
    ('mse_loss', lambda T, x, y: F(T).mse_loss(x, y), [(64, 64), (64, 64)]),
    ('mse_loss_sum', lambda T, x, y: F(T).mse_loss(x, y, reduction='sum'), [(64, 64), (64, 64)]),
    ('sdpa_3d', lambda T, q, k, v: F(T).scaled_dot_product_attention(q, k, v), [(2, 16, 16)] * 3),
]



# The checks that refuse integer tensors (mse_loss, kl_div, glu, normalize, Parameter, the step
# functions' NaN) take bfloat16 for the floating dtype it is; pow's products and reciprocals
# round each step, as PyTorch's bfloat16 kernel does.
FLOATING_CHECKS = [
    ('pow3', lambda T, x: x ** 3),
    ('pow-1', lambda T, x: x ** -1),
    ('pow-2', lambda T, x: x ** -2),
    ('pow1.7', lambda T, x: x.abs() ** 1.7),
    ('sign_nan', lambda T, x: T.sign(T.cat([x.reshape(-1), T.tensor([float('nan')], dtype=x.dtype)]))),
    ('kl_div', lambda T, x: F(T).kl_div(x, x.exp(), reduction='sum')),
    ('glu', lambda T, x: F(T).glu(x)),
    ('normalize', lambda T, x: F(T).normalize(x)),
    ('parameter', lambda T, x: T.nn.Parameter(x * 1) * 2),
]


@pytest.mark.parametrize('case', FLOATING_CHECKS, ids=[c[0] for c in FLOATING_CHECKS])
def test_bfloat16_passes_the_floating_checks_as_torch(case):
    (lx,), (tx,) = _pair((64, 64))
    assert_same(case[1](lg, lx), case[1](torch, tx), *case[2:])

def _nn_case(fn, shapes, seed=0):
    lx, tx = _pair(*shapes, seed=seed, grad=True)
    lo, to = fn(lg, *lx), fn(torch, *tx)
    w = np.random.default_rng(7).standard_normal(tuple(to.shape)).astype(np.float32)
    lgrads = lg.autograd.grad(lo, lx, lg.tensor(w, dtype=lg.bfloat16))
    tgrads = torch.autograd.grad(to, tx, torch.tensor(w, dtype=BF))
    return (lo, to), list(zip(lgrads, tgrads))


# PyTorch's bfloat16 convolution gradients round once (float32 sums) where its CPU kernels are
# AVX-512's; on an AVX2 CPU its kernel rounds partial sums to bfloat16 on the way, so there they
# agree to a rounding of the largest partial sum, not bit for bit (leafgrad rounds once)
ROUNDED_ON_THE_WAY = set() if torch.backends.cpu.get_cpu_capability() == 'AVX512' else {'conv1d', 'conv2d'}


@pytest.mark.parametrize('name,fn,shapes', NN, ids=[n[0] for n in NN])
def test_nn_ops_and_gradients_bit_for_bit(name, fn, shapes):
    (lo, to), grads = _nn_case(fn, shapes)
    assert_same(lo, to)
    for l, t in grads:
        if name in ROUNDED_ON_THE_WAY:
            a, b = _np(l).astype(np.float32), _np(t).astype(np.float32)
            assert _name(l.dtype) == _name(t.dtype) and a.shape == b.shape
            assert np.abs(a - b).max() <= 2 ** -7 * np.abs(b).max()
        else:
            assert_same(l, t)


@pytest.mark.parametrize('seed', range(4))
def test_cross_entropy_bit_for_bit(seed):
    """nll_loss's bfloat16 sums are PyTorch's cascade of bfloat16 partial sums (a batch not a
    multiple of 16, an ignored class, class weights)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    (lx, lw), (tx, tw) = _pair((n, 10), (10,), seed=seed, grad=True)
    t = rng.integers(0, 10, n)
    for kw in (dict(), dict(ignore_index=3), dict(reduction='sum'), dict(weight=True)):
        kl, kt = dict(kw), dict(kw)
        if kw.get('weight'):
            kl['weight'], kt['weight'] = lw.detach().abs(), tw.detach().abs()
        lo = LF.cross_entropy(lx, lg.tensor(t), **kl)
        to = TF.cross_entropy(tx, torch.tensor(t), **kt)
        assert_same(lo, to)
        (lg_g,), (th_g,) = lg.autograd.grad(lo, [lx]), torch.autograd.grad(to, [tx])
        assert_same(lg_g, th_g)


NORMS = [
    ('layer_norm', lambda T, x, w, b: F(T).layer_norm(x, (64,), w, b), [(16, 64), (64,), (64,)]),
    ('group_norm', lambda T, x, w, b: F(T).group_norm(x, 2, w, b), [(4, 4, 8, 8), (4,), (4,)]),
    ('batch_norm', lambda T, x, w, b: F(T).batch_norm(x, None, None, w, b, training=True), [(8, 4, 8, 8), (4,), (4,)]),
]


@pytest.mark.parametrize('name,fn,shapes', NORMS, ids=[n[0] for n in NORMS])
def test_norms_within_a_stated_tolerance(name, fn, shapes):
    """Forward within 1/64 of the output's scale (layer_norm: 1 ulp), gradients within 1/32 of
    theirs: leafgrad computes in float32 and rounds once; PyTorch's batch_norm and the norms'
    backward kernels round intermediate sums to bfloat16 (further from the exact values)."""
    (lo, to), grads = _nn_case(fn, shapes)
    if name == 'layer_norm':
        assert_same(lo, to, ulps=1)
    else:
        assert _name(lo.dtype) == _name(to.dtype)
        np.testing.assert_allclose(_np(lo), _np(to), atol=np.abs(_np(to)).max() / 64)
    for l, t in grads:
        assert _name(l.dtype) == _name(t.dtype)
        scale = np.abs(_np(t)).max()
        np.testing.assert_allclose(_np(l), _np(t), atol=scale / 32)


def test_float32_affine_with_bfloat16_input_as_torch():
    """layer_norm of bfloat16 input with float32 weight and bias: a bfloat16 result, each
    gradient in its own input's dtype."""
    (lx,), (tx,) = _pair((16, 64), grad=True)
    out = {}
    for T, x in ((lg, lx), (torch, tx)):
        w, b = T.ones(64, requires_grad=True), T.zeros(64, requires_grad=True)
        y = F(T).layer_norm(x, (64,), w, b)
        y.sum().backward()
        out[T] = (y, x.grad, w.grad, b.grad)
    assert [_name(t.dtype) for t in out[lg]] == [_name(t.dtype) for t in out[torch]] == \
        ['bfloat16', 'bfloat16', 'float32', 'float32']
    assert_same(out[lg][0], out[torch][0], ulps=1)


def test_mixed_dtype_gradient_takes_its_input_dtype():
    """A float32 op's gradient reaching a bfloat16 input arrives in bfloat16 (and so is rounded
    before the bfloat16 op's derivative uses it), as in PyTorch."""
    seen = {}
    for T in (lg, torch):
        a = T.ones(4, 4, dtype=T.bfloat16, requires_grad=True)
        h = a * 1.5
        h.register_hook(lambda g, T=T: seen.__setitem__(T, g))
        ((h + T.full((4, 4), 0.1)) * T.full((4, 4), 1 / 3)).sum().backward()
        assert _name(seen[T].dtype) == 'bfloat16'
    assert_same(seen[lg], seen[torch])


@pytest.mark.parametrize('opt', ['SGD', 'Adam', 'AdamW'])
def test_optimizer_steps_on_bfloat16_params_within_a_rounding(opt):
    """leafgrad's optimizers update a bfloat16 parameter with NumPy operations that round each
    intermediate to bfloat16, PyTorch's round some in float32: within 1/128 of the parameters'
    scale after three steps."""
    kwargs = {'SGD': dict(lr=0.1, momentum=0.9), 'Adam': dict(lr=0.01), 'AdamW': dict(lr=0.01)}[opt]
    (lp,), (tp,) = _pair((4, 64), grad=True)
    (lg_g,), (th_g,) = _pair((4, 64), seed=1)
    lo, to = getattr(lg.optim, opt)([lp], **kwargs), getattr(torch.optim, opt)([tp], **kwargs, foreach=False)
    for _ in range(3):
        lp.grad, tp.grad = lg_g.clone(), th_g.clone()
        lo.step()
        to.step()
    assert lp.dtype is lg.bfloat16
    np.testing.assert_allclose(_np(lp), _np(tp), atol=np.abs(_np(tp)).max() / 128)


def test_training_step_in_bfloat16_bit_for_bit():
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((64, 16)).astype(np.float32), rng.integers(0, 4, 64)
    w1, b1 = rng.standard_normal((32, 16)).astype(np.float32) * 0.3, rng.standard_normal(32).astype(np.float32) * 0.1
    w2, b2 = rng.standard_normal((4, 32)).astype(np.float32) * 0.3, rng.standard_normal(4).astype(np.float32) * 0.1
    out = {}
    for T in (lg, torch):
        ps = [T.tensor(a).bfloat16().requires_grad_() for a in (w1, b1, w2, b2)]
        h = T.relu(F(T).linear(T.tensor(x).bfloat16(), ps[0], ps[1]))
        loss = F(T).cross_entropy(F(T).linear(h, ps[2], ps[3]), T.tensor(t))
        loss.backward()
        out[T] = [loss] + [p.grad for p in ps]
    for l, t in zip(out[lg], out[torch]):
        assert_same(l, t)


# ---- the op tables, within a stated tolerance --------------------------------------------------

def _table_rows():
    import test_ops_elementwise
    import test_ops_reduction
    rows = []
    for case in test_ops_elementwise.CASES + test_ops_reduction.CASES:
        if case.grad and all(k in 'rpuzgsow' for k in case.kinds) and case.shapes[0][0]:
            rows.append(pytest.param(case, id=case.name))
    return rows


# rows whose bfloat16 results PyTorch rounds step by step in ways leafgrad does not reproduce:
# ulps allowed for the forward and the gradient (the gradient compared to its largest element)
_LOOSE = {'gelu': 2, 'sinc': 2, 'logit_eps': 4, 'round_decimals': 64, 'pow_scalar': 1, 'rad2deg': 1,
          'special_expit': 1, 'selu': 2, 'F_selu': 2, 'softshrink': 8, 'leaky_relu_default': 1, 'mish': 1,
          'logsigmoid': 1, 'softplus_beta': 1, 'silu': 1, 'sigmoid': 1, 'gelu_tanh': 4, 'lerp_scalar': 8,
          'lerp_scalar_high': 2, 'lerp_tensor': 2, 'addcmul': 16, 'addcdiv': 32, 'add_alpha': 2, 'logcumsumexp': 1}


@pytest.mark.parametrize('case', _table_rows())
def test_op_table_in_bfloat16(case):
    """Every differentiable row of the elementwise and reduction tables on bfloat16 input: dtypes
    as PyTorch's, values within 1 bfloat16 ulp (more for the rows in _LOOSE, whose tails PyTorch
    rounds differently), gradients within 1/16 of their largest element."""
    rng = np.random.default_rng(1)
    from optable import make
    arrays = [make(k, s, rng).astype(np.float32) for k, s in zip(case.kinds, case.shapes[0])]
    tx = [torch.tensor(a).to(BF).requires_grad_() for a in arrays]
    lx = [lg.tensor(_np(t), dtype=lg.bfloat16, requires_grad=True) for t in tx]
    lo, to = case.fn(lg, *lx), case.fn(torch, *tx)
    lo, to = (list(lo), list(to)) if isinstance(to, (tuple, list)) else ([lo], [to])
    for l, t in zip(lo, to):
        assert _name(l.dtype) == _name(t.dtype)
        a, b = _np(l), _np(t)
        if l.dtype is lg.bfloat16:  # within the ulps, or (near 0) within 1/256 of the output's scale
            close = np.isclose(a, b, rtol=0, atol=np.abs(b[np.isfinite(b)]).max(initial=0) / 256, equal_nan=True)
            assert (_ulps(a, b)[~close] <= _LOOSE.get(case.name, 1)).all(), (a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6)
    lf = [l for l in lo if l.dtype.is_floating_point]
    tf = [t for t in to if t.dtype.is_floating_point]
    ws = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in tf]
    ls = sum((l * lg.tensor(w, dtype=l.dtype)).sum() for l, w in zip(lf, ws))
    ts = sum((t * torch.tensor(w, dtype=t.dtype)).sum() for t, w in zip(tf, ws))
    for l, t in zip(lg.autograd.grad(ls, lx, allow_unused=True), torch.autograd.grad(ts, tx, allow_unused=True)):
        if t is None:
            assert l is None or not _np(l).any()
            continue
        assert _name(l.dtype) == _name(t.dtype)
        a, b = _np(l), _np(t)
        finite = np.isfinite(b)
        np.testing.assert_allclose(a[finite], b[finite], atol=np.abs(b[finite]).max(initial=0) / 16 + 1e-6)
