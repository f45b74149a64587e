"""torch.autocast on the CPU and torch.amp.GradScaler, against PyTorch.

One table (CASES) of ops run on float32 (and bfloat16) inputs inside ``autocast('cpu')`` in both
libraries: the output's dtype, its values (bfloat16 outputs to one bfloat16 rounding, float32
ones to float32 round-off), and the dtype and values of every input's gradient. Then the
context manager itself (nesting, decorator, state functions, warnings, errors, the cast cache)
and the GradScaler's sequence of scales with an injected inf.
"""
import warnings

import numpy as np
import pytest

import leafgrad as lg
import leafgrad.nn.functional as LF

torch = pytest.importorskip('torch')
import torch.nn.functional as TF  # noqa: E402

from oracle import raises_like, same_message  # noqa: E402


def F(T):
    return LF if T is lg else TF


def _np(t):
    t = t.detach()
    return (t.float() if t.dtype in (torch.bfloat16, lg.bfloat16) else t).numpy()


def _name(dtype):
    return str(dtype).split('.')[-1]


def _inputs(specs, seed):
    """(leafgrad tensors, torch tensors) from specs: (shape, kind) with kind 'f' (float32, requires
    grad), 'c' (float32 constant), 'b' (bfloat16, requires grad), 'd' (float64), 'p' (probabilities
    in (0, 1)), 'i<n>' (int64 in [0, n))."""
    rng = np.random.default_rng(seed)
    lgs, ths = [], []
    for shape, kind in specs:
        if kind.startswith('i'):
            a = rng.integers(0, int(kind[1:]), shape)
            lgs.append(lg.tensor(a))
            ths.append(torch.tensor(a))
            continue
        a = rng.uniform(0.05, 0.95, shape) if kind == 'p' else rng.standard_normal(shape)
        if kind == 'b':
            t = torch.tensor(a, dtype=torch.bfloat16, requires_grad=True)
            lgs.append(lg.tensor(_np(t), dtype=lg.bfloat16, requires_grad=True))
            ths.append(t)
            continue
        dt = 'float64' if kind == 'd' else 'float32'
        grad = kind in 'fb'
        lgs.append(lg.tensor(a.astype(dt), requires_grad=grad))
        ths.append(torch.tensor(a.astype(dt), requires_grad=grad))
    return lgs, ths


def C(name, fn, *specs, atol=0.0):
    return pytest.param(fn, specs, atol, id=name)


M, K, N = (8, 16), (16, 32), (32,)
CASES = [
    # lower precision: computed in bfloat16
    C('mm', lambda T, a, b: T.mm(a, b), (M, 'f'), (K, 'f')),
    C('mm_bf16_f32', lambda T, a, b: T.mm(a, b), (M, 'b'), (K, 'f')),
    C('mm_float64_not_cast', lambda T, a, b: T.mm(a, b), (M, 'd'), (K, 'd')),
    C('matmul_batched', lambda T, a, b: T.matmul(a, b), ((3, 8, 16), 'f'), (K, 'f')),
    C('matmul_vector', lambda T, a, b: T.matmul(a, b), (M, 'f'), ((16,), 'f')),
    C('matmul_operator', lambda T, a, b: a @ b, (M, 'c'), (K, 'f')),
    C('bmm', lambda T, a, b: T.bmm(a, b), ((3, 8, 16), 'f'), ((3, 16, 4), 'f')),
    C('addmm', lambda T, c, a, b: T.addmm(c, a, b), ((32,), 'f'), (M, 'f'), (K, 'f')),
    C('baddbmm', lambda T, c, a, b: T.baddbmm(c, a, b, alpha=0.5), ((3, 8, 4), 'f'), ((3, 8, 16), 'f'),
      ((3, 16, 4), 'f')),
    C('addbmm', lambda T, c, a, b: T.addbmm(c, a, b), ((8, 4), 'f'), ((3, 8, 16), 'f'), ((3, 16, 4), 'f')),
    C('linear', lambda T, x, w, b: F(T).linear(x, w, b), (M, 'f'), ((32, 16), 'f'), (N, 'f')),
    C('linear_3d_no_bias', lambda T, x, w: F(T).linear(x, w), ((2, 8, 16), 'c'), ((32, 16), 'f')),
    C('conv1d', lambda T, x, w, b: F(T).conv1d(x, w, b, padding=1), ((2, 3, 16), 'f'), ((4, 3, 3), 'f'), ((4,), 'f')),
    C('conv2d', lambda T, x, w, b: F(T).conv2d(x, w, b), ((2, 3, 8, 8), 'c'), ((4, 3, 3, 3), 'f'), ((4,), 'f')),
    C('conv_transpose2d', lambda T, x, w: F(T).conv_transpose2d(x, w, stride=2), ((2, 4, 4, 4), 'f'),
      ((4, 2, 3, 3), 'f')),
    C('prelu', lambda T, x, w: F(T).prelu(x, w), (M, 'f'), ((1,), 'f')),
    C('sdpa', lambda T, q, k, v: F(T).scaled_dot_product_attention(q, k, v), ((2, 8, 16), 'f'), ((2, 8, 16), 'f'),
      ((2, 8, 16), 'f')),
    C('einsum_via_bmm', lambda T, a, b: T.einsum('ij,jk->ik', a, b), (M, 'f'), (K, 'f')),
    # not listed: run in the dtype they are given
    C('relu_after_mm', lambda T, a, b: T.relu(T.mm(a, b)), (M, 'f'), (K, 'f')),
    C('softmax_after_linear', lambda T, x, w: F(T).softmax(F(T).linear(x, w), -1), (M, 'f'), ((32, 16), 'f')),
    C('layer_norm_after_linear', lambda T, x, w, g, b: F(T).layer_norm(F(T).linear(x, w), (32,), g, b),
      (M, 'f'), ((32, 16), 'f'), (N, 'f'), (N, 'f'), atol=0.05),
    C('add_f32_bf16', lambda T, a, b, c: T.mm(a, b) + c, (M, 'f'), (K, 'f'), (N, 'f')),
    C('sum_of_bf16', lambda T, a, b: T.mm(a, b).sum(), (M, 'f'), (K, 'f')),
    C('mv_not_cast', lambda T, a, v: T.mv(a, v), (M, 'f'), ((16,), 'f')),
    C('dot_not_cast', lambda T, a, v: T.dot(a, v), ((16,), 'f'), ((16,), 'f')),
    C('exp_not_cast', lambda T, a: T.exp(a), (M, 'f')),
    C('softmax_float32', lambda T, a: F(T).softmax(a, -1), (M, 'f')),
    # fp32: bfloat16 inputs run in float32
    C('mse_loss', lambda T, a, b, t: F(T).mse_loss(T.mm(a, b), t), (M, 'f'), (K, 'f'), ((8, 32), 'c')),
    C('cross_entropy', lambda T, x, w, t: F(T).cross_entropy(F(T).linear(x, w), t), (M, 'f'), ((32, 16), 'f'),
      ((8,), 'i32')),
    C('nll_loss', lambda T, x, t: F(T).nll_loss(F(T).log_softmax(x, 1), t), (M, 'b'), ((8,), 'i16')),
    C('l1_loss', lambda T, x, t: F(T).l1_loss(x, t), (M, 'b'), (M, 'c')),
    C('smooth_l1_loss', lambda T, x, t: F(T).smooth_l1_loss(x, t), (M, 'b'), (M, 'c')),
    C('huber_loss', lambda T, x, t: F(T).huber_loss(x, t), (M, 'b'), (M, 'c')),
    C('bce_with_logits', lambda T, x, t: F(T).binary_cross_entropy_with_logits(x, t), (M, 'b'), (M, 'p')),
    C('binary_cross_entropy', lambda T, x, t: F(T).binary_cross_entropy(T.sigmoid(x), t), (M, 'b'), (M, 'p')),
    C('kl_div', lambda T, x, t: F(T).kl_div(x, t, reduction='batchmean'), (M, 'b'), (M, 'p')),
    C('prod', lambda T, x: T.prod(x, 1), (M, 'b')),
    C('cdist', lambda T, a, b: T.cdist(a, b), (M, 'b'), ((4, 16), 'b'), atol=1e-5),
    C('reflect_pad', lambda T, x: F(T).pad(x, (2, 2), mode='reflect'), ((2, 3, 8), 'b')),
    C('replicate_pad', lambda T, x: F(T).pad(x, (1, 1, 1, 1), mode='replicate'), ((2, 3, 8, 8), 'b')),
    C('avg_pool3d', lambda T, x: F(T).avg_pool3d(x, 2), ((1, 2, 4, 4, 4), 'b')),
    C('max_pool3d', lambda T, x: F(T).max_pool3d(x, 2), ((1, 2, 4, 4, 4), 'b')),
    C('linalg_inv', lambda T, x: T.linalg.inv(x + T.eye(4) * 4), ((4, 4), 'b'), atol=1e-6),
    C('linalg_svdvals', lambda T, x: T.linalg.svdvals(x), ((4, 3), 'b'), atol=1e-6),
    # promote: the widest floating dtype among the inputs
    C('cat_promotes', lambda T, a, b, c: T.cat([T.mm(a, b), c]), (M, 'f'), (K, 'f'), (M[:1] + (32,), 'f')),
    C('cat_bf16', lambda T, a, b: T.cat([T.mm(a, b), T.mm(a, b)]), (M, 'f'), (K, 'f')),
    C('stack_promotes', lambda T, a, b, c: T.stack([T.mm(a, b), c]), (M, 'f'), (K, 'f'), ((8, 32), 'f')),
    C('cat_float64_kept', lambda T, a, c: T.cat([a, c]), (M, 'b'), (M, 'd')),
]


def _run(T, fn, xs):
    with T.autocast('cpu'):
        return fn(T, *xs)


@pytest.mark.parametrize('fn,specs,atol', CASES)
def test_op_under_cpu_autocast(fn, specs, atol):
    lx, tx = _inputs(specs, 0)
    lo, to = _run(lg, fn, lx), _run(torch, fn, tx)
    assert _name(lo.dtype) == _name(to.dtype)
    assert tuple(lo.shape) == tuple(to.shape)
    half = to.dtype in (torch.bfloat16, torch.float16)
    # a half-precision result of a long sum (a convolution, a product) depends on how torch
    # accumulates it on this CPU (avx512_bf16 or not): there the tolerance scales with its size
    rtol = 2 ** -7 if half else 1e-5
    scale = 2 ** -7 * float(np.abs(_np(to)).max()) if half else 0.0
    np.testing.assert_allclose(_np(lo), _np(to), rtol=rtol, atol=max(atol, 1e-6, scale))
    if not to.requires_grad:
        return
    w = np.random.default_rng(1).standard_normal(tuple(to.shape))
    lg_inputs = [x for x in lx if x.requires_grad]
    th_inputs = [x for x in tx if x.requires_grad]
    lw, tw = lg.tensor(w.astype(np.float32)).to(lo.dtype), torch.tensor(w.astype(np.float32)).to(to.dtype)
    lgr = lg.autograd.grad((lo * lw).sum(), lg_inputs, allow_unused=True)
    thr = torch.autograd.grad((to * tw).sum(), th_inputs, allow_unused=True)
    for l, t in zip(lgr, thr):
        if t is None:
            assert l is None
            continue
        assert _name(l.dtype) == _name(t.dtype)
        scale = 2 ** -8 * float(np.abs(_np(t)).max()) if half else 0.0
        np.testing.assert_allclose(_np(l), _np(t), rtol=2 ** -6, atol=max(atol, 1e-2, scale))


def test_outside_autocast_nothing_is_cast():
    (a, b), _ = _inputs([(M, 'f'), (K, 'f')], 0)
    with lg.autocast('cpu'):
        pass
    assert (a @ b).dtype is lg.float32


def test_float32_leaf_grads_are_float32_and_exact_as_torch():
    """A float32 model in a bfloat16 region: bit for bit PyTorch's loss and gradients."""
    rng = np.random.default_rng(0)
    x, w1, b1, w2, t = (rng.standard_normal((32, 16)), rng.standard_normal((64, 16)) * 0.3, rng.standard_normal(64),
                        rng.standard_normal((8, 64)) * 0.2, rng.integers(0, 8, 32))
    out = {}
    for T in (lg, torch):
        p = [T.tensor(a.astype(np.float32), requires_grad=True) for a in (w1, b1, w2)]
        with T.autocast('cpu'):
            h = F(T).relu(F(T).linear(T.tensor(x.astype(np.float32)), p[0], p[1]))
            loss = F(T).cross_entropy(F(T).linear(h, p[2]), T.tensor(t))
        loss.backward()
        out[T] = [loss] + [q.grad for q in p]
    for l, t in zip(out[lg], out[torch]):
        assert _name(l.dtype) == _name(t.dtype) == 'float32'
        np.testing.assert_array_equal(_np(l), _np(t))


def test_weight_cast_once_per_region_as_torch():
    """A float32 weight used twice shares one ToCopyBackward0 (PyTorch's cast cache): its two
    bfloat16 gradients are summed in bfloat16 before the cast back, bit for bit as in PyTorch."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((8, 16)), rng.standard_normal((16, 16))
    grads, fns = {}, {}
    for T in (lg, torch):
        for cache in (True, False):
            W = T.tensor(w.astype(np.float32), requires_grad=True)
            with T.autocast('cpu', cache_enabled=cache):
                a = T.tensor(x.astype(np.float32)) @ W
                y = (a @ W).float().sum()
            fns[T, cache] = a.grad_fn.next_functions[1][0] is y.grad_fn.next_functions[0][0].next_functions[0][0] \
                .next_functions[1][0]
            y.backward()
            grads[T, cache] = _np(W.grad)
    for cache in (True, False):
        np.testing.assert_array_equal(grads[lg, cache], grads[torch, cache])
        assert fns[lg, cache] == fns[torch, cache]
    assert fns[lg, True] and not fns[lg, False]


def test_nesting_disabled_region_and_state_functions():
    for T in (lg, torch):
        a = T.ones(2, 3)
        assert not T.is_autocast_enabled('cpu')
        with T.autocast('cpu'):
            assert T.is_autocast_enabled('cpu') and not T.is_autocast_enabled()  # no argument: CUDA's
            assert (a @ a.t()).dtype is T.bfloat16
            with T.autocast('cpu', enabled=False):
                assert not T.is_autocast_enabled('cpu')
                assert (a @ a.t()).dtype is T.float32
            with T.autocast('cpu', dtype=T.float16):
                assert T.get_autocast_dtype('cpu') is T.float16
                assert (a @ a.t()).dtype is T.float16
            assert T.get_autocast_dtype('cpu') is T.bfloat16
            assert (a @ a.t()).dtype is T.bfloat16
        assert not T.is_autocast_enabled('cpu')
        assert T.get_autocast_dtype('cpu') is T.bfloat16 and T.get_autocast_dtype('cuda') is T.float16
        assert T.is_autocast_cache_enabled()


def test_decorator_and_exceptions_restore_the_state():
    for T in (lg, torch):
        @T.autocast('cpu')
        def f(a):
            """doc"""
            return a @ a.t()
        assert f(T.ones(2, 3)).dtype is T.bfloat16 and f.__doc__ == 'doc'
        with pytest.raises(ZeroDivisionError):
            with T.autocast('cpu'):
                1 / 0
        assert not T.is_autocast_enabled('cpu')


def test_float16_region_matches_torch():
    (a, b), (ta, tb) = _inputs([(M, 'f'), (K, 'f')], 2)
    with lg.autocast('cpu', dtype=lg.float16):
        lo = lg.relu(a @ b)
    with torch.autocast('cpu', dtype=torch.float16):
        to = torch.relu(ta @ tb)
    assert lo.dtype is lg.float16
    np.testing.assert_allclose(_np(lo), _np(to), rtol=1e-3, atol=1e-3)


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        result = fn()
    return result, [(w.category, str(w.message).replace('leafgrad', 'torch')) for w in rec]


@pytest.mark.parametrize('make', [
    lambda T: T.autocast('cpu', dtype=T.float32),
    lambda T: T.autocast('cuda'),
    lambda T: T.cpu.amp.autocast(),
    lambda T: T.cuda.amp.autocast(),
    lambda T: T.amp.GradScaler(),
    lambda T: T.cuda.amp.GradScaler(),
    lambda T: T.cpu.amp.GradScaler(),
], ids=['unsupported_dtype', 'cuda_unavailable', 'cpu_amp_autocast', 'cuda_amp_autocast', 'default_scaler_cuda',
        'cuda_amp_scaler', 'cpu_amp_scaler'])
def test_warnings_as_torch(make):
    lo, lw = _warnings_of(lambda: make(lg))
    to, tw = _warnings_of(lambda: make(torch))
    assert lw == tw
    enabled = getattr(to, '_enabled', None)
    assert getattr(lo, '_enabled', None) == enabled
    if isinstance(to, torch.amp.GradScaler):
        assert lo.is_enabled() == to.is_enabled()


def test_deprecated_autocasts_work_in_their_dtype():
    for T in (lg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', FutureWarning)
            with T.cpu.amp.autocast():
                assert (T.ones(2, 2) @ T.ones(2, 2)).dtype is T.bfloat16
        _, w = _warnings_of(lambda: T.is_autocast_cpu_enabled())
        assert w and w[0][0] is DeprecationWarning


@pytest.mark.parametrize('fn', [
    lambda T: T.autocast(3),
    lambda T: T.autocast('cpu')(5),
    lambda T: T.autocast('cpu')(None),
], ids=['device_type_not_str', 'decorate_a_number', 'decorate_none'])
def test_errors_as_torch(fn):
    lg_msg, th_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
    assert same_message(lg_msg, th_msg), (lg_msg, th_msg)


def test_bad_device_type_raises_runtime_error():
    with pytest.raises(RuntimeError):
        torch.autocast('xyz')
    with pytest.raises(RuntimeError, match='xyz'):
        lg.autocast('xyz')


def test_repr_and_identity():
    assert lg.autocast is lg.amp.autocast
    assert repr(lg.autocast('cpu')).startswith('<leafgrad.amp.autocast_mode.autocast object at 0x')
    assert lg.amp.is_autocast_available('cpu') and lg.amp.is_autocast_available('cuda')


def test_custom_fwd_cast_inputs():
    for T in (lg, torch):
        class Square(T.autograd.Function):
            @staticmethod
            @T.amp.custom_fwd(device_type='cpu', cast_inputs=T.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                assert not T.is_autocast_enabled('cpu')
                return x * x

            @staticmethod
            @T.amp.custom_bwd(device_type='cpu')
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        x = T.ones(3, dtype=T.bfloat16, requires_grad=True)
        with T.autocast('cpu'):
            y = Square.apply(x)
        assert y.dtype is T.float32
        y.sum().backward()
        assert x.grad.dtype is T.bfloat16


# ---- GradScaler ---------------------------------------------------------------------------

def _scaler_run(T, losses_scale, inf_at, **kw):
    """A few steps of SGD with a GradScaler; an inf gradient injected at the steps in inf_at.
    Returns the scale after each update, the growth tracker, and the final weights."""
    w = T.nn.Parameter(T.tensor([1.0, -2.0, 0.5]))
    opt = T.optim.SGD([w], lr=0.1)
    scaler = T.amp.GradScaler('cpu', **kw)
    scales, trackers = [], []
    for step, c in enumerate(losses_scale):
        opt.zero_grad()
        loss = (w * w).sum() * c
        scaler.scale(loss).backward()
        if step in inf_at:
            with T.no_grad():
                w.grad[1] = float('inf') if step % 2 else float('nan')
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        trackers.append(scaler._get_growth_tracker())
    return scales, trackers, w.detach().numpy().copy(), scaler.state_dict()


@pytest.mark.parametrize('kw', [dict(), dict(init_scale=1024.0, growth_factor=3.0, backoff_factor=0.25,
                                             growth_interval=2),
                                dict(init_scale=3.0e38, growth_interval=1)],
                         ids=['defaults', 'custom', 'growth_to_inf_not_taken'])
def test_scale_sequence_with_injected_infs_as_torch(kw):
    losses = [1.0, 0.5, 2.0, 1.5, 0.25, 1.0, 3.0, 0.75]
    inf_at = {2, 3, 6}
    ls, lt, lw, lsd = _scaler_run(lg, losses, inf_at, **kw)
    ts, tt, tw, tsd = _scaler_run(torch, losses, inf_at, **kw)
    assert ls == ts and lt == tt and lsd == tsd
    np.testing.assert_array_equal(lw, tw)


def test_unscale_then_clip_then_step():
    out = {}
    for T in (lg, torch):
        w = T.nn.Parameter(T.tensor([3.0, -4.0]))
        opt = T.optim.SGD([w], lr=0.5)
        scaler = T.amp.GradScaler('cpu', init_scale=256.0)
        scaler.scale((w * w).sum()).backward()
        scaler.unscale_(opt)
        norm = T.nn.utils.clip_grad_norm_([w], 1.0)
        scaler.step(opt)
        scaler.update()
        out[T] = (_np(norm), _np(w), scaler.get_scale())
    np.testing.assert_allclose(out[lg][0], out[torch][0], rtol=1e-6)
    np.testing.assert_array_equal(out[lg][1], out[torch][1])
    assert out[lg][2] == out[torch][2]


def _scaler_and_opt(T):
    w = T.nn.Parameter(T.ones(2))
    return w, T.optim.SGD([w], lr=0.1), T.amp.GradScaler('cpu')


@pytest.mark.parametrize('fn', [
    lambda T: _scaler_and_opt(T)[2].step(_scaler_and_opt(T)[1]),
    lambda T: _scaler_and_opt(T)[2].update(),
    lambda T: _scaler_and_opt(T)[2].unscale_(_scaler_and_opt(T)[1]),
    lambda T: T.amp.GradScaler('cpu', growth_factor=1.0),
    lambda T: T.amp.GradScaler('cpu', backoff_factor=1.0),
    lambda T: T.amp.GradScaler('cpu').load_state_dict({}),
    lambda T: T.amp.GradScaler('cpu').scale([T.ones(1), 3]),
], ids=['step_before_scale', 'update_before_scale', 'unscale_before_scale', 'growth_factor', 'backoff_factor',
        'empty_state_dict', 'scale_a_number'])
def test_scaler_errors_as_torch(fn):
    lg_msg, th_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
    assert same_message(lg_msg, th_msg), (lg_msg, th_msg)


def test_scaler_stage_errors_as_torch():
    for T in (lg, torch):
        w, opt, scaler = _scaler_and_opt(T)
        scaler.scale(w.sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match=r'unscale_\(\) has already been called'):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match=r'step\(\) has already been called'):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match=r'unscale_\(\) is being called after step'):
            scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match='Closure use is not currently supported'):
            scaler.step(opt, closure=lambda: 0)


def test_scaler_scales_nested_outputs_and_state_dict_round_trip():
    for T in (lg, torch):
        scaler = T.amp.GradScaler('cpu', init_scale=8.0)
        a, (b, c) = scaler.scale([T.ones(2), (T.ones(1) * 2, T.ones(1, dtype=T.bfloat16))])
        assert a.tolist() == [8.0, 8.0] and b.tolist() == [16.0] and c.dtype is T.bfloat16
        other = T.amp.GradScaler('cpu')
        other.load_state_dict(scaler.state_dict())
        assert other.get_scale() == 8.0 and other.state_dict() == scaler.state_dict()


def test_disabled_scaler_passes_through():
    for T in (lg, torch):
        w, opt, _ = _scaler_and_opt(T)
        scaler = T.amp.GradScaler('cpu', enabled=False)
        loss = w.sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.step(opt)
        scaler.update()
        assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()
        assert w.tolist() == pytest.approx([0.9, 0.9])


def test_bfloat16_loss_is_scaled_in_float32():
    """A 0-dim bfloat16 loss times the float32 scale is float32 (0-dim operands promote)."""
    for T in (lg, torch):
        scaler = T.amp.GradScaler('cpu')
        assert scaler.scale(T.tensor(1.5, dtype=T.bfloat16)).dtype is T.float32
        assert scaler.scale(T.ones(2, dtype=T.bfloat16)).dtype is T.bfloat16
