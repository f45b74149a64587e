"""leafgrad.compile on device='cuda': compiled calls replay on the GPU's arrays with eager's values
and gradients (on the stand-in for CuPy, tests/cuda_standin.py, bit for bit, since NumPy runs
underneath; on a real GPU within rounding, as cuBLAS may order a product's sums otherwise), the
device is part of the signature, and gradients land on the parameters' device."""
import numpy as np
import pytest

import leafgrad as lg
from leafgrad import nn

from cuda_standin import REAL_GPU, cuda_device  # noqa: F401  (the autouse fixture: CuPy or its stand-in)
from test_compile import FUNCTIONS as CPU_FUNCTIONS, function_steps

pytestmark = pytest.mark.cuda
F = nn.functional


def _host(t):
    return t.detach().cpu().numpy()


def _same(a, b):
    """Eager's and compile's numbers: equal on the stand-in, within rounding on a GPU."""
    a, b = _host(a) if isinstance(a, lg.Tensor) else a, _host(b) if isinstance(b, lg.Tensor) else b
    assert a.shape == b.shape and a.dtype == b.dtype
    if REAL_GPU:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    else:
        assert np.array_equal(a, b, equal_nan=True), np.abs(a - b).max()


def _entries(compiled):
    state = getattr(compiled, '_leafgrad_compiled', None) or compiled._compiled
    return list(state.cache.values())


def _assert_replayed(compiled, calls):
    """One signature, replayed (not run eagerly), ``calls`` times after its trace."""
    entries = _entries(compiled)
    assert len(entries) == 1 and entries[0].program is not None, entries[0].reason
    assert entries[0].calls == calls
    return entries[0].program


def _train(make, batch, loss_fn, steps=4, whole=True, **sgd):
    """``steps`` SGD steps of the model ``make()`` makes (seeded) on 'cuda', eagerly and compiled
    (the loss of the model's output with it, or with ``whole=False`` the model alone): each step's
    loss, the parameters' gradients and, at the end, the state dicts agree."""
    runs = []
    for compiled in (False, True):
        lg.manual_seed(0)
        model = make().cuda()
        def step_loss(x, y):
            return loss_fn(model(x), y)
        if not compiled:
            f = step_loss
        elif whole:
            f = lg.compile(step_loss)
        else:
            compiled_model = lg.compile(model)
            f = lambda x, y: loss_fn(compiled_model(x), y)  # noqa: E731
        opt = lg.optim.SGD(model.parameters(), lr=0.1, **sgd)
        record = []
        for step in range(steps):
            lg.manual_seed(100 + step)  # (dropout draws the same noise in both runs)
            x, y = batch(step)
            loss = f(x, y)
            loss.backward()
            grads = [p.grad for p in model.parameters()]
            assert all(g is not None and g.is_cuda for g in grads)  # on the parameters' device
            record.append([_host(loss)] + [_host(g) for g in grads])
            opt.step()
            opt.zero_grad()
        runs.append((record, {k: _host(v) for k, v in model.state_dict().items()},
                     f if whole else compiled_model if compiled else None))
    (eager, eager_state, _), (comp, comp_state, compiled) = runs
    for e, c in zip(eager, comp):
        for a, b in zip(e, c):
            _same(a, b)
    assert eager_state.keys() == comp_state.keys()
    for k in eager_state:
        _same(eager_state[k], comp_state[k])
    return compiled


def _ce(out, y):  # (F's attribute read at the call: the op the trace records, not a reference taken before)
    return F.cross_entropy(out, y)


def _normal(step, shape, salt=0):
    return lg.tensor(np.random.default_rng([step, salt]).standard_normal(shape).astype(np.float32), device='cuda')


def _classes(step, n, c):
    return lg.tensor(np.random.default_rng([step, 99]).integers(0, c, n), device='cuda')


@pytest.mark.parametrize('whole', [False, True], ids=['module', 'with_loss'])
def test_mlp_with_cross_entropy_trains_as_eagerly(whole):
    def make():
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    compiled = _train(make, lambda s: (_normal(s, (5, 8)), _classes(s, 5, 4)), _ce, whole=whole,
                      momentum=0.9)
    program = _assert_replayed(compiled, 3)
    assert program.islands == 0 and program.array_ops == (4 if whole else 3)
    assert program.device == lg.device('cuda', 0)


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 1)   # overlapping windows: the general pooling
        x = F.adaptive_avg_pool2d(F.avg_pool2d(x, 2, 1), 2)  # (4, 4) -> (3, 3) -> (2, 2)
        return self.fc(self.drop(x.reshape(x.shape[0], -1)))


@pytest.mark.parametrize('training', [True, False], ids=['train', 'eval'])
def test_cnn_with_batch_norm_and_dropout_trains_as_eagerly(training):
    def make():
        model = _CNN()
        return model.train(training)
    compiled = _train(make, lambda s: (_normal(s, (4, 3, 10, 10)), _classes(s, 4, 5)), _ce,
                      momentum=0.9, weight_decay=1e-3)
    program = _assert_replayed(compiled, 3)
    assert program.islands == (2 if training else 1)  # batch norm and its counter's add_: eagerly


class _GRUish(nn.Module):
    """A gated recurrent cell unrolled over time: tanh and sigmoid chains, x[t] selects."""

    def __init__(self):
        super().__init__()
        self.gate_in, self.cand_in = nn.Linear(6, 4), nn.Linear(6, 4)
        self.gate_rec, self.cand_rec = nn.Linear(4, 4, bias=False), nn.Linear(4, 4, bias=False)
        self.out = nn.Linear(4, 3)

    def forward(self, x):
        h = lg.zeros(x.shape[1], 4, device=x.device)
        for t in range(x.shape[0]):
            gate = lg.sigmoid(self.gate_in(x[t]) + self.gate_rec(h))
            cand = lg.tanh(self.cand_in(x[t]) + self.cand_rec(h))
            h = gate * h + (1.0 - gate) * cand
        return self.out(h)


def test_recurrent_tanh_sigmoid_chain_trains_as_eagerly():
    compiled = _train(_GRUish, lambda s: (_normal(s, (5, 3, 6)), _classes(s, 3, 3)), _ce)
    _assert_replayed(compiled, 3)


class _Block(nn.Module):
    """A GPT-style model: embeddings, layer norm, causal attention through bmm and softmax, a
    GELU MLP, a tied head."""

    def __init__(self, vocab=11, n=6, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.register_buffer('mask', lg.tril(lg.ones(n, n)))

    def forward(self, idx):
        b, t = idx.shape
        x = self.wte(idx) + self.wpe(lg.arange(t, device=idx.device))
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        hs = x.shape[-1] // self.heads
        q, k, v = (a.reshape(b, t, self.heads, hs).transpose(1, 2).reshape(b * self.heads, t, hs)
                   for a in (q, k, v))
        att = lg.bmm(q, k.transpose(1, 2)) * (1.0 / hs ** 0.5)
        att = att.masked_fill(self.mask[:t, :t] == 0, float('-inf'))
        y = lg.bmm(F.softmax(att, dim=-1), v).reshape(b, self.heads, t, hs)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, -1))
        x = x + self.fc2(F.gelu(self.fc(self.ln2(x))))
        return self.lnf(x) @ self.wte.weight.t()


def test_gpt_block_trains_as_eagerly():
    def batch(s):
        rng = np.random.default_rng([s, 7])
        return (lg.tensor(rng.integers(0, 11, (2, 6)), device='cuda'),
                lg.tensor(rng.integers(0, 11, (2, 6)), device='cuda'))
    compiled = _train(_Block, batch, lambda logits, y: F.cross_entropy(logits.reshape(-1, 11), y.reshape(-1)),
                      momentum=0.9)
    _assert_replayed(compiled, 3)


FUNCTIONS = dict(CPU_FUNCTIONS, **{
    'numbers_float64': lambda x, y: ((x.double() + 0.1) * 16777217 - 1e-46 + (y.double() - (-0.0)) / 3.3).sum(),
    'softmaxes': lambda x, y: (F.log_softmax(x * y, 1) * F.softmax(y, 0) + lg.exp(x) / (y * y + 1.0)).mean(),
    'cross_entropy': lambda x, y: (F.cross_entropy(x, lg.arange(3, device=x.device), weight=y[0].abs(), ignore_index=1)
                                   + F.cross_entropy(x * y, lg.arange(3, device=x.device).flip(0), reduction='sum')
                                   + F.cross_entropy(y, lg.arange(3, device=x.device), reduction='none')[1]),
    'baddbmm': lambda x, y: lg.baddbmm(x[None, :, :3], x.reshape(1, 3, 4), y.reshape(1, 4, 3),
                                       beta=0.5, alpha=2.0).sum(),
    'pools': lambda x, y: (F.adaptive_avg_pool2d(x.reshape(1, 1, 3, 4) * y.reshape(1, 1, 3, 4), 1).sum()
                           + F.adaptive_avg_pool2d(x.reshape(1, 3, 4), (2, 3)).mean()),
    'embedding': lambda x, y: (F.embedding(lg.arange(4, device=x.device).reshape(2, 2) % 3, x, padding_idx=0)
                               * y[:2, None, :]).sum(),
})


@pytest.mark.parametrize('name', sorted(FUNCTIONS))
def test_function_matches_eager(name):
    """tests/test_compile.py's functions (each op's rule) and more, on 'cuda'."""
    compiled, steps = function_steps(FUNCTIONS[name], 'cuda')
    for pairs in steps:
        for e, c in pairs:
            assert c.is_cuda
            _same(e, c)
    _assert_replayed(compiled, 2)
    assert type(steps[-1][0][1].grad_fn).__name__ == 'CompiledFunctionBackward'


def test_gradients_of_outputs_left_out_are_zeros_on_the_gpu():
    """An output that gets no gradient, through an array rule and through an island: zeros made
    on the GPU."""
    def fn(x, y):
        return lg.tanh(x) * y, x.abs() * 2.0, (x * y).sum()
    compiled = lg.compile(fn)
    rng = np.random.default_rng(2)
    xs, ys = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    for step in range(3):
        ins = [[lg.tensor(a, device='cuda', requires_grad=True) for a in (xs, ys)] for _ in range(2)]
        for f, (x, y) in zip((fn, compiled), ins):
            a, b, c = f(x, y)
            (c * 3.0).backward()
        for t1, t2 in zip(*ins):
            _same(t1.grad, t2.grad)
    _assert_replayed(compiled, 2)


def test_no_grad_replay_gives_eager_values():
    lg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4), nn.Sigmoid()).cuda()
    compiled = lg.compile(model)
    with lg.no_grad():
        for step in range(3):
            x = _normal(step, (5, 8))
            out = compiled(x)
            assert out.is_cuda and not out.requires_grad
            _same(model(x), out)
    _assert_replayed(compiled, 2)


def test_device_is_a_guard_and_results_land_on_the_inputs_device():
    def fn(x, w):
        return (F.relu(x @ w) * 2.0 - 1.0).sum(dim=0)
    compiled = lg.compile(fn)
    rng = np.random.default_rng(3)
    xs, ws = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    for device in ('cpu', 'cuda', 'cpu', 'cuda', 'cuda', 'cpu'):
        args = [lg.tensor(a, device=device, requires_grad=True) for a in (xs, ws)]
        out = compiled(*args)
        assert out.device.type == device
        expected = fn(*[lg.tensor(a, device=device) for a in (xs, ws)])
        _same(expected, out)
        out.sum().backward()
        assert all(a.grad.device.type == device for a in args)
    entries = _entries(compiled)
    assert len(entries) == 2 and all(e.program is not None for e in entries)
    assert sorted(e.program.device is None for e in entries) == [False, True]


def test_a_model_moved_to_the_gpu_after_compiling_is_traced_again():
    lg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    compiled = lg.compile(model)
    x = lg.tensor(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))
    for _ in range(2):
        compiled(x).sum().backward()
    model.zero_grad()
    model.cuda()
    xc = x.cuda()
    for _ in range(3):
        model.zero_grad()
        out = compiled(xc)
        assert out.is_cuda
        out.sum().backward()
        assert all(p.grad.is_cuda for p in model.parameters())
    grads = [_host(p.grad) for p in model.parameters()]
    model.zero_grad()
    model(xc).sum().backward()
    for g, p in zip(grads, model.parameters()):
        _same(p.grad, g)
    entries = _entries(compiled)
    assert len(entries) == 2 and entries[1].program.device == lg.device('cuda', 0) and entries[1].calls == 2


def test_function_of_captured_cuda_tensors_only():
    """No tensor argument: the program's device is its captured tensors', and their gradients
    accumulate there as eagerly."""
    w = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    ws = [lg.tensor(w, device='cuda', requires_grad=True) for _ in range(2)]

    def make(w):
        return lambda: (lg.tanh(w * 2.0) * w).sum()
    eager, compiled = make(ws[0]), lg.compile(make(ws[1]))
    for _ in range(3):
        a, b = eager(), compiled()
        assert b.is_cuda
        _same(a, b)
        a.backward()
        b.backward()
        _same(ws[0].grad, ws[1].grad)
    assert _assert_replayed(compiled, 2).device == lg.device('cuda', 0)


def test_a_cpu_scalar_beside_gpu_tensors_runs_eagerly():
    """A 0-dim CPU tensor beside 'cuda' ones (a number to PyTorch's ops): the call mixes devices,
    which compile does not replay, so it runs eagerly, with eager's values."""
    def fn(x, s):
        return (lg.tanh(x) * s).sum()
    compiled = lg.compile(fn)
    x = _normal(0, (3, 4))
    for _ in range(3):
        out = compiled(x, lg.tensor(2.0))
        assert out.is_cuda
        _same(fn(x, lg.tensor(2.0)), out)
    entries = _entries(compiled)
    assert len(entries) == 1 and entries[0].program is None and 'more than one device' in entries[0].reason
