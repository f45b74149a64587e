"""leafgrad.utils.checkpoint against torch.utils.checkpoint: same values and gradients,
recomputation under the saved RNG state, and the memory it saves."""
import contextlib
import importlib
import tracemalloc
import warnings

import numpy as np
import pytest

from oracle import raises_like, same_message, to_np, torch
import leafgrad as lg
from leafgrad.utils.checkpoint import checkpoint, checkpoint_sequential
import torch.utils.checkpoint as tcp


def block(x, w):
    return (x.mm(w).tanh() * x.mm(w).sigmoid()).mm(w.t()) + x


def _data():
    r = np.random.default_rng(3)
    return r.standard_normal((4, 3)), r.standard_normal((3, 5))


@pytest.mark.parametrize('use_reentrant', [False, True])
def test_values_and_grads_match_torch(use_reentrant):
    xa, wa = _data()
    res = []
    for mod, ck in ((lg, checkpoint), (torch, tcp.checkpoint)):
        x = mod.tensor(xa, requires_grad=True)
        w = mod.tensor(wa, requires_grad=True)
        y = ck(block, x, w, use_reentrant=use_reentrant)
        (y * y).sum().backward()
        res.append((y, x.grad, w.grad, y.grad_fn.name()))
    (ly, lgx, lgw, lname), (ty, tgx, tgw, tname) = res
    for a, b in ((ly, ty), (lgx, tgx), (lgw, tgw)):
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-12)
    assert lname == tname  # AddBackward0, or CheckpointFunctionBackward when reentrant


def test_non_reentrant_recomputes_once_per_backward():
    calls = []

    def fn(x):
        calls.append(1)
        return x.sin() * x
    x = lg.tensor([0.5, 1.5], dtype=lg.float64, requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=False)
    assert len(calls) == 1
    y.sum().backward(retain_graph=True)
    assert len(calls) == 2
    y.sum().backward()  # a second backward recomputes again
    assert len(calls) == 3
    a = np.array([0.5, 1.5])
    np.testing.assert_allclose(to_np(x.grad), 2 * (np.sin(a) + a * np.cos(a)))


def test_saved_tensor_access_triggers_recomputation():
    x = lg.tensor([0.5, 1.5], dtype=lg.float64, requires_grad=True)
    tx = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    y = checkpoint(lambda t: t.sin() * t, x, use_reentrant=False)
    ty = tcp.checkpoint(lambda t: t.sin() * t, tx, use_reentrant=False)
    np.testing.assert_allclose(to_np(y.grad_fn._saved_self), to_np(ty.grad_fn._saved_self))
    assert y.grad_fn._saved_self.grad_fn.name() == ty.grad_fn._saved_self.grad_fn.name() == 'SinBackward0'


def _dropout(x, p=0.5):
    mask = (lg.rand(*x.shape, dtype=x.dtype) > p).to(x.dtype)
    return x * mask / (1 - p)


@pytest.mark.parametrize('use_reentrant', [False, True])
def test_dropout_recomputed_with_the_same_mask(use_reentrant):
    def fn(x):
        return _dropout(x.tanh()).exp()
    x = lg.tensor(np.linspace(-1, 1, 64), requires_grad=True)
    lg.manual_seed(7)
    y_ref = fn(x)
    y_ref.sum().backward()
    g_ref = x.grad.clone()
    x.grad = None
    lg.manual_seed(7)
    y = checkpoint(fn, x, use_reentrant=use_reentrant)
    after_forward = lg.rand(3)
    y.sum().backward()
    np.testing.assert_array_equal(to_np(y), to_np(y_ref))
    np.testing.assert_allclose(to_np(x.grad), to_np(g_ref), rtol=1e-12)
    # the recomputation put the RNG state back: the stream continues as without it
    lg.manual_seed(7)
    fn(x)
    np.testing.assert_array_equal(to_np(lg.rand(3)), to_np(after_forward))


def test_without_preserved_rng_the_mask_differs():
    def fn(x):
        return _dropout(x)
    x = lg.tensor(np.ones(256), requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=False, preserve_rng_state=False)
    y.sum().backward()
    assert not np.array_equal(to_np(x.grad), to_np(y))  # recomputed mask != forward mask


def test_missing_use_reentrant_warns_like_torch():
    for mod, ck in ((lg, checkpoint), (torch, tcp.checkpoint)):
        x = mod.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            ck(lambda t: t * 2, x)
        msgs = [str(m.message).replace('leafgrad', 'torch') for m in w if 'use_reentrant' in str(m.message)]
        if mod is lg:
            lmsg = msgs
        else:
            tmsg = msgs
    assert lmsg == tmsg and len(lmsg) == 1


def _mlp(mod, depth, width, seed=0):
    r = np.random.default_rng(seed)
    layers = []
    for _ in range(depth):
        lin = mod.nn.Linear(width, width)
        with mod.no_grad():
            lin.weight.copy_(mod.tensor(r.standard_normal((width, width)) / np.sqrt(width), dtype=mod.float32))
            lin.bias.copy_(mod.tensor(r.standard_normal(width) * 0.1, dtype=mod.float32))
        layers += [lin, mod.nn.ReLU()]
    return mod.nn.Sequential(*layers)


@pytest.mark.parametrize('use_reentrant', [False, True])
def test_checkpoint_sequential_matches_torch(use_reentrant):
    x = np.random.default_rng(1).standard_normal((5, 8)).astype(np.float32)
    grads = []
    for mod, cs in ((lg, checkpoint_sequential), (torch, tcp.checkpoint_sequential)):
        net = _mlp(mod, 4, 8)
        xi = mod.tensor(x, requires_grad=True)
        y = cs(net, 3, xi, use_reentrant=use_reentrant)
        y.sum().backward()
        grads.append([to_np(y), to_np(xi.grad)] + [to_np(p.grad) for p in net.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_peak_memory_lower_by_the_expected_amount():
    """16 Linear+ReLU layers on a batch whose activations dwarf the weights: without
    checkpointing the forward keeps ~1 activation per layer; checkpoint_sequential with 4
    segments keeps the 3 segment inputs plus the last segment's 4 layers, and the backward
    recomputes one segment at a time."""
    depth, width, batch = 16, 32, 2048
    net = _mlp(lg, depth, width)
    x = lg.randn(batch, width)
    act = batch * width * 4

    def measure(use_checkpoint):
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        if use_checkpoint:
            y = checkpoint_sequential(net, 4, x, use_reentrant=False)
        else:
            y = net(x)
        held = tracemalloc.get_traced_memory()[0] - base
        y.sum().backward()
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        for p in net.parameters():
            p.grad = None
        return held / act, peak / act
    held_plain, peak_plain = measure(False)
    held_ckpt, peak_ckpt = measure(True)
    assert 14 <= held_plain <= 20, held_plain
    assert 5 <= held_ckpt <= 9, held_ckpt           # 3 segment inputs + 4 layers
    assert peak_ckpt < 0.7 * peak_plain, (peak_ckpt, peak_plain)
    assert peak_plain - peak_ckpt > 6, (peak_ckpt, peak_plain)  # at least ~6 activations saved


def test_autograd_grad_and_double_backward_through_non_reentrant_checkpoint():
    xa, wa = _data()
    res = []
    for mod, ck in ((lg, checkpoint), (torch, tcp.checkpoint)):
        x = mod.tensor(xa, requires_grad=True)
        w = mod.tensor(wa, requires_grad=True)
        y = ck(block, x, w, use_reentrant=False).pow(2).sum()
        gx, gw = mod.autograd.grad(y, (x, w), create_graph=True)
        (ggx,) = mod.autograd.grad((gx * gx).sum() + gw.sum(), x)
        res.append((gx, gw, ggx))
    for a, b in zip(*res):
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-10, atol=1e-12)


def _nested(mod, ck):
    class Cube(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    x = mod.tensor([0.5, -1.0, 2.0], dtype=mod.float64, requires_grad=True)

    def inner(t):
        return Cube.apply(t.sin()) * t

    def outer(t):
        return ck(inner, t.exp(), use_reentrant=False).tanh()
    ck(outer, x, use_reentrant=False).sum().backward()
    g1 = x.grad
    x.grad = None
    a, b = ck(lambda t: (Cube.apply(t), t * 2), x, use_reentrant=False)
    (a.sum() + b.sum()).backward()
    return g1, x.grad


def test_nested_checkpoints_and_custom_function_inside():
    for a, b in zip(_nested(lg, checkpoint), _nested(torch, tcp.checkpoint)):
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-10)  # tanh' near 0: rounding


def _nondeterministic(mod, ck, shapes):
    """A region whose second run saves a tensor of another shape (or one more tensor)."""
    runs = []

    def fn(x):
        runs.append(1)
        n = shapes[min(len(runs), len(shapes)) - 1]
        y = x[:n].exp() if n else x
        return y.sum() * x.sum()
    x = mod.ones(4, requires_grad=True)
    out = ck(fn, x, use_reentrant=False)
    with pytest.raises(RuntimeError) as e:
        out.backward()
    return type(e.value).__name__, str(e.value).replace('torch', 'leafgrad').split('\nTip:')[0].rstrip('\n')


def test_recomputation_mismatch_is_reported_like_torch():
    for shapes in ((2, 3), (2, 0)):
        lname, lmsg = _nondeterministic(lg, checkpoint, shapes)
        tname, tmsg = _nondeterministic(torch, tcp.checkpoint, shapes)
        assert lname == tname == 'CheckpointError'
        assert lmsg.replace('leafgrad.', 'x.') == tmsg.replace('leafgrad.', 'x.'), (lmsg, tmsg)


def test_input_modified_in_place_before_backward_is_detected():
    def run(mod, ck):
        x = mod.tensor([0.5, 1.5], dtype=mod.float64, requires_grad=True)
        h = x * 2
        y = ck(lambda t: t.sin() * t, h, use_reentrant=False)
        with mod.no_grad():
            h.add_(1)
        y.sum().backward()
    m1, m2 = raises_like(lambda: run(lg, checkpoint), lambda: run(torch, tcp.checkpoint))
    assert same_message(m1, m2), (m1, m2)


def _recomputed_steps(mod, early_stop=True, context=None):
    """What a region's recomputation runs again: the steps after its last saving op are skipped
    when it stops early."""
    cp = importlib.import_module(mod.__name__ + '.utils.checkpoint')
    steps = []

    def region(x):
        steps.append('start')
        y = x.sin()
        steps.append('after sin')
        z = y.exp()  # (saves its result: the last tensor the region saves)
        steps.append('after exp')
        return z * 2
    x = mod.tensor([0.5, 1.5], dtype=mod.float64, requires_grad=True)
    with context(cp) if context else contextlib.nullcontext():
        out = cp.checkpoint(region, x, use_reentrant=False, early_stop=early_stop)
    out.sum().backward()
    return steps, to_np(x.grad).tolist()


@pytest.mark.parametrize('early_stop', [True, False])
def test_recomputation_stops_once_everything_is_saved_again(early_stop):
    assert _recomputed_steps(lg, early_stop) == _recomputed_steps(torch, early_stop)


@pytest.mark.parametrize('enable', [True, False])
def test_set_checkpoint_early_stop_overrides_each_call(enable):
    for early_stop in (True, False):
        def context(cp):
            return cp.set_checkpoint_early_stop(enable)
        ours = _recomputed_steps(lg, early_stop, context)
        assert ours == _recomputed_steps(torch, early_stop, context)
        assert len(ours[0]) == (5 if enable else 6)


def test_checkpoint_utilities_as_torch():
    def program(mod):
        cp = importlib.import_module(mod.__name__ + '.utils.checkpoint')
        x = mod.ones(2, requires_grad=True)
        detached = cp.detach_variable((x, 3, mod.zeros(1)))
        out = [[type(a).__name__ if not isinstance(a, mod.Tensor) else (a.requires_grad, a.is_leaf)
                for a in detached], cp.get_device_states(x, [mod.zeros(2)], {'a': 1}),
               cp.DefaultDeviceType.get_device_type()]
        cp.DefaultDeviceType.set_device_type('meta')
        out.append(cp.DefaultDeviceType.get_device_type())
        cp.DefaultDeviceType.set_device_type('cpu')
        cp.set_device_states([], [])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            cp.check_backward_validity([mod.zeros(1), 2])
            cp.check_backward_validity([x])
        out.append([str(w.message) for w in caught])
        with cp.set_checkpoint_debug_enabled(True):
            out.append(cp.checkpoint(lambda t: t * 2, x, use_reentrant=False).sum().item())
        try:
            cp.detach_variable([x])
        except RuntimeError as e:
            out.append(str(e))
        return out
    assert program(lg) == program(torch)
