"""leafgrad.compile: compiled calls against eager (bit for bit) and the API against torch.compile."""
import copy
import warnings

import numpy as np
import pytest

import leafgrad as lg
from leafgrad import nn
from leafgrad._compile import trace as _trace
from torch_facts import ask_torch

F = nn.functional

# torch.compile runs in a separate process: Dynamo installs a frame-evaluation hook for the
# rest of the process, which would change reference counts (and so leafgrad's buffer reuse)
# in the tests that run after these.
_TORCH_FACTS = r"""
import json, torch
facts = {}
def branchy(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1
try:
    torch.compile(branchy, fullgraph=True, backend='eager')(torch.ones(3))
except Exception as e:
    facts['fullgraph'] = [c.__name__ for c in type(e).__mro__[:3]]
m = torch.nn.Linear(2, 3)
om = torch.compile(m, backend='eager')
facts['type'] = type(om).__name__
facts['orig'] = om._orig_mod is m
facts['keys'] = list(om.state_dict())
facts['repr'] = repr(om)
facts['disable'] = torch.compile(m, disable=True) is m
def f(x):
    return x
errors = []
for kw in (dict(mode='bogus'), dict(mode='max-autotune', options={'a': 1}), dict(backend='nope')):
    try:
        torch.compile(f, **kw)
    except Exception as e:
        errors.append([type(e).__name__, str(e)])
try:
    torch.compile(3)
except Exception as e:
    errors.append([type(e).__name__, str(e)])
facts['errors'] = errors
w = torch.randn(3, requires_grad=True)
c = torch.compile(lambda x: (x * w).tanh().sum(), backend='aot_eager')
y = c(torch.randn(3))
facts['node'] = y.grad_fn.name()
(g,) = torch.autograd.grad(c(torch.randn(3)), w, create_graph=True)
facts['create_graph_node'] = g.grad_fn.name()
try:
    g.sum().backward()
except Exception as e:
    facts['double_backward'] = [type(e).__name__, str(e)]
lin = torch.nn.Linear(3, 2)
c = torch.compile(lambda x: lin(x).tanh(), backend='aot_eager')
c(torch.randn(4, 3, requires_grad=True))
y = c(torch.randn(4, 3, requires_grad=True)).sum()  # (the weight: read for the input's gradient)
with torch.no_grad():
    lin.weight.mul_(2)
try:
    y.backward()
except Exception as e:
    facts['changed_before_backward'] = [type(e).__name__, str(e)]
print(json.dumps(facts))
"""


@pytest.fixture(scope='module')
def torch_facts():
    return ask_torch(_TORCH_FACTS)


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a._data, b._data, equal_nan=True), np.abs(a._data - b._data).max()


def _program(compiled):
    state = getattr(compiled, '_leafgrad_compiled', None) or getattr(compiled, 'compiled', None) or compiled._compiled
    return [e.program for e in state.cache.values()]


# ---- values and gradients: compiled == eager, bit for bit ------------------------------------

FUNCTIONS = {
    'arith': lambda x, y: ((x + y) * (x - 0.5) / (y * y + 1.0) - x / 3 + 2 * y).sum(),
    'broadcast': lambda x, y: (x * y[0] + y[1:2] - x[0] / (y[0] + 3.0)).mean(),
    'unary': lambda x, y: (lg.tanh(x) + lg.sigmoid(y) * lg.exp(x * 0.1) + F.relu(x - y) + x.relu()).mean(),
    'shape': lambda x, y: (x.reshape(-1) * y.view(12) + x.detach().reshape(12)).sum() + x[1].sum() + y[-1].mean(),
    'sigmoid_tails': lambda x, y: (lg.sigmoid(x * 100.0) + lg.sigmoid(y) * lg.exp(-y)).sum(),
    'transposes': lambda x, y: (((x.t() @ y).permute(1, 0) * 2.0).sum() + (x.mT.T * y.transpose(0, 1).t()).sum()
                                + (x.t() * y.t()).sum()),
    'returns_input': lambda x, y: (x.contiguous().float() * y.flatten(0, 0)).sum(),
    'relu_alias': lambda x, y: (F.relu(x * y) + x * y).sum() + (F.relu(y) * 2).relu().sum(),
    'islands': lambda x, y: (lg.softmax(x, 1) * lg.log_softmax(y, 0) + x.abs().pow(1.5) + x @ y.t()[:, :1]).sum(),
}


def function_steps(fn, device='cpu'):
    """Three calls of ``fn(x, y)`` (x, y: 3x4 float32 that require grad) eagerly and compiled, on
    the same inputs: the compiled function and, per call, (eager, compiled) pairs of the output
    and of x's and y's gradients after backward()."""
    rng = np.random.default_rng(1)
    xs, ys = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    compiled = lg.compile(fn)
    steps = []
    for step in range(3):
        x1, y1 = (lg.tensor(a, device=device, requires_grad=True) for a in (xs, ys))
        x2, y2 = (lg.tensor(a, device=device, requires_grad=True) for a in (xs, ys))
        e, c = fn(x1, y1), compiled(x2, y2)
        e.backward()
        c.backward()
        steps.append([(e, c), (x1.grad, x2.grad), (y1.grad, y2.grad)])
    return compiled, steps


@pytest.mark.parametrize('name', sorted(FUNCTIONS))
def test_function_matches_eager(name):
    compiled, steps = function_steps(FUNCTIONS[name])
    for pairs in steps:
        for e, c in pairs:
            _same(e, c)
    assert type(steps[-1][0][1].grad_fn).__name__ == 'CompiledFunctionBackward'
    assert _program(compiled)[0] is not None


@pytest.mark.parametrize('dtype', [np.float32, np.float64], ids=['float32', 'float64'])
def test_python_numbers_round_as_eager(dtype):
    """A Python number beside a tensor replays as a 0-d array of the tensor's dtype (cheaper for
    NumPy than the number) holding what NumPy's weak-scalar rule makes of it: numbers that round
    in the dtype (0.1, 2**24 + 1, 1e-46), -0.0, and one past float32's range (1e39, kept as a
    number: inf there, as eager) give eager's values and gradients bit for bit."""
    def fn(x, y):
        a = (x + 0.1) * 16777217 - 1e-46 + (y - (-0.0)) / 3.3
        b = (x * -0.0 + y * 1e39) / 7 - 2
        return (a * a).sum() + (b * 0.5).sum()
    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((3, 4)).astype(dtype)
    xs[0, 0] = -0.0
    compiled = lg.compile(fn)
    for step in range(3):
        x1, y1 = lg.tensor(xs, requires_grad=True), lg.tensor(ys, requires_grad=True)
        x2, y2 = lg.tensor(xs, requires_grad=True), lg.tensor(ys, requires_grad=True)
        e, c = fn(x1, y1), compiled(x2, y2)
        _same(e, c)
        e.backward()
        c.backward()
        for a, b in ((x1.grad, x2.grad), (y1.grad, y2.grad)):
            _same(a, b)
            assert np.array_equal(np.signbit(a._data), np.signbit(b._data))
    (program,) = _program(compiled)
    assert program.islands == 0


@pytest.mark.parametrize('dtype', [np.float32, np.float64], ids=['float32', 'float64'])
def test_sigmoid_both_forms_as_eager(dtype):
    """sigmoid, written out in the generated forward, takes eager's form per call: 1 / (1 +
    exp(-x)) while no element is below exp's bound for the dtype, the stable form otherwise
    (far tails, a NaN), and a 0-d input; values and gradients bit for bit."""
    def fn(x, s):
        return (lg.sigmoid(x * s) * x).sum() + lg.sigmoid(x.sum())
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, 5)).astype(dtype)
    compiled = lg.compile(fn)
    for scale, nan in ((1.0, False), (1000.0, False), (1.0, True), (1.0, False)):
        x0 = xs.copy()
        if nan:
            x0[1, 2] = np.nan
        x1, x2 = lg.tensor(x0, requires_grad=True), lg.tensor(x0, requires_grad=True)
        s = lg.tensor(np.array(scale, dtype))
        e, c = fn(x1, s), compiled(x2, s)
        _same(e, c)
        e.backward()
        c.backward()
        _same(x1.grad, x2.grad)
    (program,) = _program(compiled)
    assert program.islands == 0 and '.argmin()' in program.source


def test_fresh_arrays_written_in_place_only_when_nothing_else_reads_them():
    """The generated forward writes an op's result into its input's buffer where that input is
    a new array made earlier and read by this op alone (an RNN step: the two products summed in
    the first, tanh in the sum), and not where a view, another op or the output reads it: values
    and gradients stay eager's, with and without grad mode."""
    def fn(x, w, h):
        a = F.linear(x, w) + F.linear(h, w)           # the sum in the first product's buffer
        t = lg.tanh(a)                                 # tanh in the sum's buffer
        b = x * 2.0
        v = b.reshape(-1)                              # b's view still alive: b not written
        c = lg.tanh(b)
        d = x + 1.0                                    # returned and read: not written
        e = lg.exp(d)
        s = (t * 3.0 + 1.0) * (t - 0.5)               # chains of fresh temporaries
        return s.sum() + v.sum() + c.sum() + e.sum() + (d * d).sum(), d
    rng = np.random.default_rng(5)
    xs, ws, hs = (rng.standard_normal(shape).astype(np.float32) for shape in ((4, 4), (4, 4), (4, 4)))
    compiled = lg.compile(fn)
    for grad in (True, False, True):
        with lg.set_grad_enabled(grad):
            ts = [[lg.tensor(a, requires_grad=True) for a in (xs, ws, hs)] for _ in range(2)]
            (e, ed), (c, cd) = fn(*ts[0]), compiled(*ts[1])
            _same(e, c)
            _same(ed, cd)
            if grad:
                (e + ed.sum()).backward()
                (c + cd.sum()).backward()
                for a, b in zip(ts[0], ts[1]):
                    _same(a.grad, b.grad)
    programs = [p for p in _program(compiled) if p is not None]
    assert len(programs) == 2 and all(p.islands == 0 for p in programs)
    source = programs[0].source
    assert 'xp.tanh(' in source and ', out=' in source and '+= ' in source, source


def test_permuted_product_scaled_by_a_sum_of_its_operand():
    """The gradient of a sum is eager's zero-strided expansion, not a filled array: multiplied
    by a transposed operand, the layout NumPy gives the product (and so the order in which the
    next reduction adds it up) is eager's. A filled array made y.grad differ by an ulp."""
    fn = lambda x, y: ((x.t() @ y).permute(1, 0) * y.T.t()[:, :3].sum()).sum()  # noqa: E731
    rng = np.random.default_rng(1)
    xs, ys = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    compiled = lg.compile(fn)
    compiled(lg.tensor(xs, requires_grad=True), lg.tensor(ys, requires_grad=True))
    grads = []
    for f in (fn, compiled):
        y = lg.tensor(ys, requires_grad=True)
        f(lg.tensor(xs, requires_grad=True), y).backward()
        grads.append(y.grad)
    _same(*grads)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(20, 32), nn.Linear(32, 5)

    def forward(self, x, y):
        return F.cross_entropy(self.l2(F.relu(self.l1(x))), y)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c, self.bn, self.f, self.d = nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.Linear(36, 3), nn.Dropout(0.3)

    def forward(self, x, y):
        h = F.max_pool2d(F.relu(self.bn(self.c(x))), 2)
        return F.cross_entropy(self.f(self.d(h.reshape(h.shape[0], -1))), y)


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.h, self.o = nn.Linear(6, 8), nn.Linear(8, 8, bias=False), nn.Linear(8, 2)

    def forward(self, x, t):
        h = lg.zeros(x.shape[1], 8)
        for i in range(x.shape[0]):
            h = lg.tanh(self.a(x[i]) + self.h(h))
        e = self.o(h) - t
        return (e * e).mean()


class Block(nn.Module):
    """A nanoGPT-style model: embeddings, causal self-attention, MLP with GELU, layer norms."""
    def __init__(self, vocab=11, n=8, heads=2, block=4):
        super().__init__()
        self.n, self.heads = n, heads
        self.wte, self.wpe = nn.Embedding(vocab, n), nn.Embedding(block, n)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(n), nn.LayerNorm(n), nn.LayerNorm(n)
        self.attn, self.proj = nn.Linear(n, 3 * n), nn.Linear(n, n)
        self.mlp = nn.Sequential(nn.Linear(n, 4 * n), nn.GELU(), nn.Linear(4 * n, n), nn.Dropout(0.1))
        self.head = nn.Linear(n, vocab, bias=False)
        self.register_buffer('mask', lg.tril(lg.ones(block, block)).view(1, 1, block, block))

    def forward(self, idx, targets):
        B, T = idx.size()
        x = self.wte(idx) + self.wpe(lg.arange(0, T, dtype=lg.long))
        q, k, v = self.attn(self.ln1(x)).split(self.n, dim=2)
        q, k, v = (z.view(B, T, self.heads, self.n // self.heads).transpose(1, 2) for z in (q, k, v))
        a = (q @ k.transpose(-2, -1)) * (1.0 / (self.n // self.heads) ** 0.5)
        a = F.softmax(a.masked_fill(self.mask[:, :, :T, :T] == 0, float('-inf')), dim=-1)
        x = x + self.proj((a @ v).transpose(1, 2).contiguous().view(B, T, self.n))
        x = x + self.mlp(self.ln2(x))
        logits = self.head(self.lnf(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def _inputs(kind):
    if kind is MLP:
        return lg.randn(16, 20), lg.randint(0, 5, (16,))
    if kind is CNN:
        return lg.randn(4, 1, 8, 8), lg.randint(0, 3, (4,))
    if kind is RNN:
        return lg.randn(5, 3, 6), lg.randn(3, 2)
    return lg.randint(0, 11, (2, 4)), lg.randint(0, 11, (2, 4))


@pytest.mark.parametrize('kind', [MLP, CNN, RNN, Block], ids=lambda k: k.__name__)
def test_module_matches_eager(kind):
    lg.manual_seed(0)
    eager = kind()
    lg.manual_seed(0)
    model = kind()
    compiled = lg.compile(model)
    inputs = _inputs(kind)
    for step in range(3):
        lg.manual_seed(step)  # dropout draws the same numbers in both
        le = eager(*inputs)
        le.backward()
        lg.manual_seed(step)
        lc = compiled(*inputs)
        lc.backward()
        _same(le, lc)
        for p, q in zip(eager.parameters(), model.parameters()):
            _same(p.grad, q.grad)
            p.grad = q.grad = None
        for a, b in zip(eager.buffers(), model.buffers()):
            _same(a, b)  # batch norm's running statistics updated as eagerly
    assert type(lc.grad_fn).__name__ == 'CompiledFunctionBackward'
    assert _program(compiled)[0] is not None, compiled.report()


def test_nanogpt_training_loop_adamw():
    """A small GPT trained for a few AdamW steps compiled end to end: the same losses and
    weights as eager, bit for bit."""
    runs = []
    for compile_it in (False, True):
        lg.manual_seed(0)
        model = Block()
        opt = lg.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
        step_model = lg.compile(model) if compile_it else model
        losses = []
        for step in range(4):
            lg.manual_seed(100 + step)
            idx, tgt = lg.randint(0, 11, (2, 4)), lg.randint(0, 11, (2, 4))
            loss = step_model(idx, tgt)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss._data.copy())
        runs.append((losses, [p._data.copy() for p in model.parameters()]))
    for a, b in zip(runs[0][0], runs[1][0]):
        assert np.array_equal(a, b)
    for a, b in zip(runs[0][1], runs[1][1]):
        assert np.array_equal(a, b)


# ---- guards and retracing -------------------------------------------------------------------

def _signatures(compiled):
    return len(_program(compiled))


def _traces(compiled):
    """How many calls were traced (ran the function's Python)."""
    state = getattr(compiled, '_leafgrad_compiled', None) or compiled._compiled
    return sum(line.startswith('traced') for line in state.log)


def test_each_guard_retraces():
    def fn(x):
        return (x * 2).tanh().sum()

    compiled = lg.compile(fn)
    x = lg.randn(3, 4)
    compiled(x), compiled(lg.randn(3, 4))
    assert _signatures(compiled) == 1 and _traces(compiled) == 1  # the second call replayed
    compiled(lg.randn(5, 4))                             # shape
    compiled(lg.randn(3, 4, dtype=lg.float64))           # dtype
    xr = lg.randn(3, 4, requires_grad=True)
    compiled(xr)                                         # requires_grad
    out = compiled(xr)
    out.backward()
    np.testing.assert_allclose(xr.grad._data, ((1 - (xr * 2).tanh() ** 2) * 2)._data, rtol=1e-6)
    with lg.no_grad():                                   # grad mode
        r = compiled(xr)
        r2 = compiled(xr)
    assert not r2.requires_grad and np.array_equal(r._data, r2._data)
    assert _signatures(compiled) == 5 and _traces(compiled) == 5
    assert 'traced again' in compiled.report()


def test_train_eval_retraces():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    compiled = lg.compile(model)
    x = lg.randn(4, 3)
    compiled(x), compiled(x)
    compiled.eval()
    a, b = compiled(x), compiled(x)
    assert _signatures(compiled) == 2
    _same(a, b)
    _same(a, model(x))  # eval: dropout off, deterministic
    compiled.train()
    compiled(x)
    assert _signatures(compiled) == 2  # back to the first signature


def test_train_eval_of_a_module_the_function_calls_retraces():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    compiled = lg.compile(lambda x: model(x).sum())
    x = lg.randn(4, 3)
    compiled(x), compiled(x)
    model.eval()
    _same(compiled(x), model(x).sum())
    _same(compiled(x), model(x).sum())
    assert _signatures(compiled) == 2


def test_captured_tensor_change_retraces():
    w = lg.randn(3, 3)

    def fn(x):
        return x @ w

    compiled = lg.compile(fn)
    x = lg.randn(3, 3)
    compiled(x), compiled(x)
    w.data = lg.randn(3, 2)
    _same(compiled(x), x @ w)
    w.data = lg.randn(3, 2) * 2   # same shape: replayed with the new values
    _same(compiled(x), x @ w)


_W_GLOBAL = lg.randn(3, 2)


def _reads_a_global(x):
    return x @ _W_GLOBAL


def test_captured_tensor_replaced_by_another_object_retraces():
    """A parameter, buffer, submodule, global, closure variable or container entry reassigned
    to another tensor after tracing: the next call traces again and reads the new one (the
    trace would otherwise keep reading the object it captured)."""
    global _W_GLOBAL
    x = lg.randn(4, 3)
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.Linear(2, 1)).eval()
    compiled = lg.compile(model)
    w = lg.randn(3, 2)
    table = {'w': lg.randn(3, 2)}
    weights = [lg.randn(3, 2)]

    def reads_closure(x):
        return x @ w

    def reads_dict_and_list(x):
        return x @ table['w'] + x @ weights[0]

    compiled_closure, compiled_containers = lg.compile(reads_closure), lg.compile(reads_dict_and_list)
    compiled_global = lg.compile(_reads_a_global)
    replacements = [
        (compiled, lambda: model.__setitem__(2, nn.Linear(2, 1).eval()), lambda: model(x)),
        (compiled, lambda: setattr(model[0], 'weight', nn.Parameter(lg.randn(2, 3))), lambda: model(x)),
        (compiled, lambda: setattr(model[1], 'running_mean', lg.randn(2)), lambda: model(x)),
        (compiled_closure, lambda: None, lambda: reads_closure(x)),  # (w reassigned below)
        (compiled_containers, lambda: table.__setitem__('w', lg.randn(3, 2)), lambda: reads_dict_and_list(x)),
        (compiled_containers, lambda: weights.__setitem__(0, lg.randn(3, 2)), lambda: reads_dict_and_list(x)),
        (compiled_global, lambda: None, lambda: _reads_a_global(x)),  # (_W_GLOBAL reassigned below)
    ]
    for run, replace, eager in replacements:
        run(x), run(x)
        replace()
        if run is compiled_closure:
            w = lg.randn(3, 2)
        if run is compiled_global:
            _W_GLOBAL = lg.randn(3, 2)
        _same(run(x), eager())
        assert 'replaced by another object' in run.report()


_SCALE = 2.0


def _scaled(x):
    return x * _SCALE


class _Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls, self.lin = 0, nn.Linear(3, 3)

    def forward(self, x):
        self.calls += 1  # (a Python side effect the replay would not repeat)
        return self.lin(x) * self.calls


def test_a_python_value_the_function_reads_changed_retraces():
    """A module's attribute (dropout's p), a global number and a closure's number changed after
    tracing: the next call traces again with the new value. A module attribute the forward
    changes itself makes each call a traced (eager) run: its side effect happens every call."""
    global _SCALE
    x = lg.randn(4, 3)
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.Linear(3, 1))
    compiled = lg.compile(model)
    for _ in range(2):
        lg.manual_seed(0)
        compiled(x)
    model[1].p = 0.0
    lg.manual_seed(0)
    _same(compiled(x), model(x))
    assert 'a Python value the function reads changed' in compiled.report()
    compiled_global = lg.compile(_scaled)
    compiled_global(x), compiled_global(x)
    _SCALE = 3.0
    _same(compiled_global(x), _scaled(x))
    shift = 1.0

    def shifted(x):
        return x + shift

    compiled_closure = lg.compile(shifted)
    compiled_closure(x), compiled_closure(x)
    shift = -2.0
    _same(compiled_closure(x), shifted(x))
    counting = _Counting()
    compiled_counting = lg.compile(counting)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # (past the recompile limit: eager, with PyTorch's warning)
        outs = [compiled_counting(x) for _ in range(10)]
    assert counting.calls == 10
    lin = counting.lin
    for k, out in enumerate(outs, 1):
        _same(out, lin(x) * k)


class _Recording(nn.Module):
    """Keeps what it computed, as feature extractors and attention visualisers do."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.features = nn.Linear(3, 3), nn.Linear(3, 3), []

    def forward(self, x):
        h = self.a(x)
        self.features.append(h)
        self.last = self.b(h.relu())
        return self.last


class _CachingOnce(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.scale = nn.Linear(3, 3), None

    def forward(self, x):
        if self.scale is None:  # (filled on the first call only)
            self.scale = lg.full((3,), 0.5)
        return self.lin(x) * self.scale


def test_python_state_a_call_changes_is_changed_on_every_call():
    """A forward that appends to a list or rebinds an attribute of its module (Python effects a
    replay would not repeat) runs them on every call, as eagerly; one that only fills a cache
    on its first call replays from the second trace on."""
    recording = _Recording()
    compiled = lg.compile(recording)
    outs = [compiled(lg.randn(2, 3)) for _ in range(4)]
    assert len(recording.features) == 4 and recording.last is outs[-1]
    assert 'changes an attribute of the module (_Recording) every time' in compiled.report()
    caching = _CachingOnce()
    compiled = lg.compile(caching)
    x = lg.randn(2, 3)
    for _ in range(4):
        _same(compiled(x), caching.lin(x) * 0.5)
    assert _traces(compiled) == 2 and _program(compiled)[0] is not None


def test_a_module_passed_as_an_argument_is_replayed():
    """``loss_fn(model, x, y)`` compiled: the module's parameters are captured as a compiled
    module's are (it ran eagerly before: "a tensor made outside the traced ops"); another
    module is another signature; gradients reach its parameters as eagerly."""
    def loss_fn(model, x, y):
        return F.cross_entropy(model(x), y)

    compiled = lg.compile(loss_fn)
    x, y = lg.randn(5, 4), lg.tensor([0, 1, 2, 0, 1])
    models = [nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)) for _ in range(2)]
    twins = [copy.deepcopy(m) for m in models]
    for _ in range(2):
        for model, twin in zip(models, twins):
            got, want = compiled(model, x, y), loss_fn(twin, x, y)
            _same(got, want)
            got.backward()
            want.backward()
            for p, q in zip(model.parameters(), twin.parameters()):
                _same(p.grad, q.grad)
    assert _program(compiled)[0] is not None and _signatures(compiled) == 2


@pytest.mark.parametrize('make', [lambda ps: lg.optim.Adam(ps, lr=0.1), lambda ps: lg.optim.SGD(ps, lr=0.1, momentum=0.9)],
                         ids=['Adam', 'SGD'])
def test_a_change_the_trace_does_not_see_runs_eagerly(make):
    """``lg.compile(opt.step)``: an optimizer's updates are array code, not recorded ops, and the
    replay updated nothing (silently). The parameters' versions moved on during the trace
    without a recorded call changing them, so the signature runs eagerly, as eager."""
    results = []
    for compile_ in (False, True):
        lg.manual_seed(0)
        model = nn.Linear(3, 2)
        opt = make(model.parameters())
        step = lg.compile(opt.step) if compile_ else opt.step
        for _ in range(3):
            model.zero_grad()
            model(lg.ones(4, 3)).sum().backward()
            step()
        results.append(model.weight.detach().numpy().copy())
    assert np.array_equal(*results)
    assert 'does not see' in step.report()


def test_an_unchanged_model_is_not_traced_again():
    """Training steps, load_state_dict and .data assignments keep the captured objects: one trace."""
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    compiled = lg.compile(model)
    opt = lg.optim.Adam(model.parameters())
    for step in range(4):
        opt.zero_grad()
        compiled(lg.randn(5, 3)).sum().backward()
        opt.step()
        if step == 1:
            model.load_state_dict({k: v * 0.5 for k, v in model.state_dict().items()})
            model[0].bias.data = lg.zeros(4)
    assert len(compiled._compiled.cache) == 1 and 'traced again' not in compiled.report()


def test_captured_tensor_dtype_change_retraces():
    w = lg.randn(3)
    compiled = lg.compile(lambda x: x + w)
    x = lg.randn(3)
    compiled(x), compiled(x)
    w.data = lg.randn(3, dtype=lg.float64)   # same shape, another dtype: traced again
    out = compiled(x)
    assert out.dtype == lg.float64
    _same(out, x + w)


def test_recompile_limit_warns_once_then_eager(capsys):
    from leafgrad import _dynamo
    compiled = lg.compile(lambda x: x * 2, dynamic=False)  # (each size a signature)
    for n in range(1, _dynamo.config.recompile_limit + 4):
        _same(compiled(lg.ones(n)), lg.ones(n) * 2)
    assert capsys.readouterr().err.count('recompile_limit') == 1
    assert _signatures(compiled) == _dynamo.config.recompile_limit


# ---- graph breaks ---------------------------------------------------------------------------

def _branchy(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


BREAKS = {
    'bool': (_branchy, 'data-dependent branching'),
    'item': (lambda x: x * x.sum().item(), 'item()'),
    'tolist': (lambda x: x + len([v for v in x.tolist() if v > 0]), 'tolist()'),
    'numpy': (lambda x: x * float(np.asarray(x.detach().numpy()).max()), 'numpy()'),
    'print': (lambda x: (print(x), x * 3)[1], 'printed'),
}


@pytest.mark.parametrize('name', sorted(BREAKS))
def test_graph_break_runs_eagerly_and_correctly(name, capsys):
    fn, words = BREAKS[name]
    compiled = lg.compile(fn)
    for sign in (1, -1, 1):
        x1 = lg.tensor(np.float32(sign) * np.arange(1, 5, dtype=np.float32), requires_grad=True)
        x2 = lg.tensor(np.float32(sign) * np.arange(1, 5, dtype=np.float32), requires_grad=True)
        e, c = fn(x1), compiled(x2)
        _same(e, c)
        e.sum().backward()
        c.sum().backward()
        _same(x1.grad, x2.grad)
    assert _program(compiled) == [None]
    assert words in compiled.report() and 'graph break' in compiled.report()


def _masked_by_a_constant(x):
    n = x.shape[0]
    mask = lg.triu(lg.full((n, n), float('-inf')), diagonal=1)  # the causal mask, as nn.Transformer makes it
    causal = bool((mask == lg.triu(lg.full((n, n), float('-inf')), diagonal=1)).all())
    scale = lg.arange(1.0, n + 1).sum().item() + lg.zeros_like(x).sum().tolist()
    return (x @ x.t() + mask).softmax(-1) @ x * scale if causal else x


def test_reading_a_constant_of_the_signature_is_no_break():
    """A tensor made from Python numbers by factories (and ops on such tensors only) holds the
    same values on every call with the signature: reading it into Python (bool, item, tolist)
    replays, as nn.Transformer's test of its causal mask needs."""
    compiled = lg.compile(_masked_by_a_constant)
    for n in (3, 3, 4, 4):
        x1, x2 = (lg.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2) / 7, requires_grad=True)
                  for _ in range(2))
        e, c = _masked_by_a_constant(x1), compiled(x2)
        _same(e, c)
        e.sum().backward()
        c.sum().backward()
        _same(x1.grad, x2.grad)
    assert all(p is not None for p in _program(compiled)) and 'graph break' not in compiled.report()


def _constant_then_random(x):
    drawn = lg.full((8,), 0.5).bernoulli()  # a draw: not a constant
    return x * 2 if drawn.sum() > 4 else x * 3


def _constant_then_normal(x):
    drawn = lg.normal(lg.zeros(1), lg.ones(1))  # may take the generator's cached sample only
    return x * 2 if drawn.item() > 0 else x * 3


def _constant_changed_by_data(x):
    m = lg.zeros(4)
    m[0] = x[0]  # a constant's tensor changed by the input's data
    return x * 2 if m.sum() > 0 else x * 3


def _constant_added_to(x):
    m = lg.zeros(4)
    m.add_(x.detach())
    return x * 2 if m.sum() > 0 else x * 3


def _constant_printed(x):
    print(lg.ones(2))
    return x * 2


@pytest.mark.parametrize('fn', [_constant_then_random, _constant_then_normal, _constant_changed_by_data,
                                _constant_added_to, _constant_printed])
def test_what_is_no_constant_still_breaks(fn, capsys):
    compiled = lg.compile(fn)
    lg.manual_seed(0)
    lg.randn(1)  # (leaves a cached normal sample for _constant_then_normal to take)
    outs = []
    for sign in (1, -1, 1, -1):
        x1, x2 = (lg.tensor(np.float32(sign) * np.arange(1, 5, dtype=np.float32)) for _ in range(2))
        state = lg.get_rng_state()
        e = fn(x1)
        lg.set_rng_state(state)
        c = compiled(x2)
        _same(e, c)
        outs.append(c)
    assert _program(compiled) == [None] and 'graph break' in compiled.report()


class _BreaksAtTheTop(nn.Module):
    """A model whose own forward breaks the graph, around submodules that do not, one of them
    breaking itself around its own children."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.mid = _BreaksItself()
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        h = self.enc(x)
        if h.sum() > 0:  # (data-dependent: a graph break)
            h = h * 2
        return self.head(self.mid(h))


class _BreaksItself(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(8, 8), nn.Tanh())

    def forward(self, h):
        return self.inner(h) if h.max().item() > -100 else h


def test_submodules_of_a_module_that_breaks_are_compiled_on_their_own():
    """As PyTorch compiles the code around a graph break: while the model's signature runs
    eagerly, each child module runs compiled on its own (a child that breaks too does the same
    with its children), with eager's values and gradients; hooks fire; outside such a call the
    children are as they were."""
    model = _BreaksAtTheTop()
    twin = copy.deepcopy(model)
    hooked = []
    model.head.register_forward_hook(lambda module, inputs, output: hooked.append(output.shape))
    compiled = lg.compile(model)
    for _ in range(3):
        x1 = lg.randn(3, 4, requires_grad=True)
        x2 = lg.tensor(x1.detach().numpy().copy(), requires_grad=True)
        got, want = compiled(x1), twin(x2)
        _same(got, want)
        got.sum().backward()
        want.sum().backward()
        _same(x1.grad, x2.grad)
    for p, q in zip(model.parameters(), twin.parameters()):
        _same(p.grad, q.grad)
    assert len(hooked) == 3 and not any('forward' in vars(m) for m in model.modules())
    report = compiled.report()
    assert "submodule 'enc', compiled on its own" in report and "submodule 'head'" in report
    assert "submodule 'inner'" in report  # (mid breaks: its child is compiled on its own)
    children = dict((name, forward) for name, _, forward in compiled._compiled.children[1])
    programs = {name: [e.program for e in forward.compiled.cache.values()] for name, forward in children.items()}
    assert programs['enc'][0] is not None and programs['head'][0] is not None and programs['mid'] == [None]


def test_a_function_with_a_graph_break_runs_the_modules_it_reaches_compiled():
    """A compiled training step that breaks the graph (its backward, an .item() for the log)
    runs eagerly, and the modules it reaches (a global, a closure variable, an argument, and
    their submodules, which it may call directly) run compiled on their own meanwhile: eager's values, gradients and
    parameters, bit for bit; outside the call the modules are as they were."""
    lg.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    head = nn.Linear(3, 3)
    twin, twin_head = copy.deepcopy(model), copy.deepcopy(head)
    logged = []

    def make_step(model, optimizer):
        def step(x, y, head):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(head(model[2](model[1](model[0](x)))), y)
            loss.backward()
            optimizer.step()
            logged.append(loss.item())
            return loss
        return step

    compiled = lg.compile(make_step(model, lg.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)))
    eager = make_step(twin, lg.optim.SGD([*twin.parameters(), *twin_head.parameters()], lr=0.1))
    for _ in range(4):
        x, y = lg.randn(5, 6), lg.randint(0, 3, (5,))
        _same(compiled(x, y, head), eager(x, y, twin_head))
    for p, q in zip([*model.parameters(), *head.parameters()], [*twin.parameters(), *twin_head.parameters()]):
        _same(p, q)
    assert logged[0::2] == logged[1::2]
    report = compiled.report()
    assert "module 'Sequential.0', compiled on its own" in report and "module 'Linear', compiled" in report
    children = {name: forward for name, _, forward in compiled._leafgrad_compiled.children[1]}
    assert list(children) == ['Sequential', 'Sequential.0', 'Sequential.1', 'Sequential.2', 'Linear']
    assert _program(children['Sequential']) == []  # (never called: the step calls its layers)
    assert all(_program(children[name]) not in ([], [None]) for name in list(children)[1:])
    assert not any('forward' in vars(m) for m in [*model.modules(), head])


def test_a_function_compiled_before_the_model_exists_guards_its_training_flag():
    """A step decorated at the top of a program, before the model it reads is made: the
    model's train/eval switch still makes the call trace again (the modules a function reaches
    are found at its first call, not when it is decorated)."""
    namespace = {'lg': lg}
    exec('@lg.compile\ndef f(x):\n    return model(x) * 2\n', namespace)
    f = namespace['f']
    namespace['model'] = model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = lg.ones(3, 4)
    f(x), f(x)
    model.eval()
    _same(f(x), model(x) * 2)
    assert len(f._leafgrad_compiled.cache) == 2
    namespace['model'] = other = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))  # (another module, training)
    f(x)
    other.eval()
    _same(f(x), other(x) * 2)
    assert 'the modules the function reaches changed' in f.report()


_PROGRAM_READING_STATE = """
import argparse, types
import leafgrad as lg
from leafgrad import nn

SCALE = 2.0
args = argparse.Namespace(shift=1.0, unused=0)

def helper(h):
    return h * SCALE

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.config = types.SimpleNamespace(gain=3.0)

    def forward(self, x):
        return helper(self.lin(x)) * self.config.gain + args.shift

class Trainer:
    def __init__(self):
        self.model = Net()
        self.weight = 0.5

    def loss(self, x):
        return self.model(x).sum() * self.weight
"""


def test_state_read_by_helpers_methods_and_plain_objects_is_guarded():
    """What the traced code reads beyond the compiled function's own globals: a global read by a
    helper it calls or by a module's forward, an attribute of a config object (argparse's
    Namespace, a SimpleNamespace held by the module), the fields of a plain object whose method
    is compiled. A change traces again, as PyTorch's guards do; a method of a plain object
    replays (its model captured)."""
    ns = {}
    exec(compile(_PROGRAM_READING_STATE, '<user program>', 'exec'), ns)
    trainer = ns['Trainer']()
    compiled = lg.compile(trainer.loss)
    x = lg.randn(4, 3)
    for change in (None, lambda: ns.update(SCALE=5.0), lambda: setattr(ns['args'], 'shift', -1.0),
                   lambda: setattr(trainer.model.config, 'gain', 7.0), lambda: setattr(trainer, 'weight', 2.0),
                   lambda: setattr(trainer, 'model', ns['Net']())):
        if change is not None:
            change()
        for _ in range(2):
            _same(compiled(x), trainer.loss(x))
    assert _program(compiled)[0] is not None
    assert compiled.report().count('traced again') == 5


def test_a_callable_object_and_a_partial_are_guarded_as_functions():
    """A compiled object with a ``__call__`` (not a module) and a compiled functools.partial:
    what they read (the object's attributes and model, the partial's function's globals and its
    arguments) is reached and guarded as a function's is; a change traces again."""
    import functools
    ns = {}
    exec(compile(_PROGRAM_READING_STATE + _CALLABLES, '<user program>', 'exec'), ns)
    scorer = ns['Scorer']()
    net = ns['Net']()
    x = lg.randn(4, 3)
    for compiled, eager, changes in (
            (lg.compile(scorer), scorer, (lambda: setattr(scorer, 'k', 3.0), lambda: scorer.model.eval())),
            (lg.compile(functools.partial(ns['scaled'], net=net, k=0.5)),
             functools.partial(ns['scaled'], net=net, k=0.5), (lambda: ns.update(SCALE=4.0),))):
        for change in (None,) + changes:
            if change is not None:
                change()
            for _ in range(2):
                _same(compiled(x), eager(x))
        assert _program(compiled)[0] is not None


_CALLABLES = """
class Scorer:
    def __init__(self):
        self.model, self.k = Net(), 2.0

    def __call__(self, x):
        return self.model(x) * self.k

def scaled(x, net, k):
    return net(x) * k * SCALE
"""


def test_a_call_that_draws_from_pythons_or_numpys_global_generator_runs_eagerly():
    """random.random() or numpy.random.rand() inside the compiled function: the number drawn
    would be a constant of every replay; the signature runs eagerly, a new draw each call."""
    import random
    for draw in (random.random, lambda: float(np.random.rand())):
        f = lg.compile(lambda x: x * draw())
        random.seed(0)
        np.random.seed(0)
        got = [float(f(lg.ones(1))) for _ in range(3)]
        random.seed(0)
        np.random.seed(0)
        assert got == [float(lg.ones(1) * draw()) for _ in range(3)] and len(set(got)) == 3
        report = f.report()
        assert _program(f) == [None] and ('global random generator' in report or 'random module' in report)


def test_seeding_the_generator_inside_the_compiled_function_is_a_graph_break():
    """manual_seed or set_rng_state inside the compiled function: a graph break, so that every
    call reseeds and draws eager's numbers (a replay would draw on from where it was)."""
    state = lg.get_rng_state()

    def seeded(x):
        lg.manual_seed(0)
        return x + lg.rand(3)

    def restored(x):
        lg.set_rng_state(state)
        return x * lg.randn(3)

    for fn in (seeded, restored):
        compiled = lg.compile(fn)
        for _ in range(3):
            _same(compiled(lg.ones(3)), fn(lg.ones(3)))
        assert _program(compiled) == [None] and 'seeded or its state set' in compiled.report()


def test_numpy_numbers_are_guarded_and_a_nan_stays_unchanged():
    """A NumPy number the function reads (np.float32(2)) is guarded as a Python number is; a
    NaN, which equals nothing, is unchanged while it is the same object (no trace per call)."""
    ns = {}
    exec(compile('import leafgrad as lg, numpy as np\nS = np.float32(2.0)\nN = float("nan")\n'
                 '@lg.compile\ndef f(x):\n    return x * S\n@lg.compile\ndef g(x):\n    return x + N\n',
                 '<user program>', 'exec'), ns)
    x = lg.ones(2)
    ns['f'](x), ns['f'](x)
    ns['S'] = np.float32(7.0)
    _same(ns['f'](x), x * 7.0)
    for _ in range(12):
        ns['g'](x)
    assert _program(ns['g'])[0] is not None and 'traced again' not in ns['g'].report()


def test_an_output_that_is_a_view_of_an_input_stays_linked_to_it():
    """An output that is a view of an input (or of a parameter), the input itself or its
    detach(): as eagerly, it shares the input's version counter (a view has it as its
    ``_base``), so that an in-place change through it is seen by a node that saved the input
    (the signature runs eagerly: a replay's output would be a fresh tensor on the same memory)."""
    w = lg.randn(3, requires_grad=True)
    f = lg.compile(lambda x: x.view(3))
    for _ in range(3):
        x = lg.randn(1, 3)
        v = f(x)
        assert v._base is x and v._version_counter is x._version_counter
    x = lg.randn(1, 3)
    y = (x * w).sum()  # (saves x, for w's gradient)
    f(x).mul_(2)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        y.backward()
    for alias in (lambda x: (x, x * 2), lambda x: x.detach()):  # (the input itself; its detach())
        g = lg.compile(alias)
        for _ in range(3):
            x = lg.randn(3)
            out = g(x)
            out = out[0] if isinstance(out, tuple) else out
            assert out._version_counter is x._version_counter


def test_outputs_made_in_inference_mode_are_inference_tensors():
    """A call in inference mode is a signature of its own (PyTorch guards the mode), and what
    it returns are inference tensors, as eagerly."""
    f = lg.compile(lambda x: x * 2)
    with lg.no_grad():
        f(lg.ones(2)), f(lg.ones(2))
    for _ in range(3):
        with lg.inference_mode():
            out = f(lg.ones(2))
        assert out.is_inference()
        with pytest.raises(RuntimeError, match='Inference tensors cannot be saved for backward'):
            out * lg.ones(2, requires_grad=True)
    assert len(f._leafgrad_compiled.cache) == 2 and all(p is not None for p in _program(f))


def test_a_module_hook_registered_or_removed_after_tracing_traces_again():
    """A forward pre-hook or hook registered on a compiled model's submodule after it was
    traced runs, and changes the result, as eagerly (a replay would skip it); removing it
    traces again too."""
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    compiled = lg.compile(model)
    x = lg.randn(2, 3)
    compiled(x), compiled(x)
    pre = model[0].register_forward_pre_hook(lambda module, inputs: (inputs[0] * 0,))
    for _ in range(2):
        _same(compiled(x), model(x))
    assert _program(compiled)[0] is not None
    pre.remove()
    for _ in range(2):
        _same(compiled(x), model(x))
    assert _program(compiled)[0] is not None and 'a module hook was registered or removed' in compiled.report()
    seen = []
    model[0].register_forward_hook(lambda module, inputs, out: seen.append(out.shape))
    for _ in range(3):
        compiled(x)
    assert len(seen) == 3


def test_grad_mode_enabled_inside_a_call_made_without_it():
    """enable_grad inside a function called under no_grad (an input-gradient map at evaluation):
    its ops record as eagerly (the signature runs eagerly: a replay without grad mode records
    nothing), and the gradient flows."""
    w = lg.randn(3, requires_grad=True)

    def saliency(x):
        with lg.enable_grad():
            x = x.detach().requires_grad_()
            (g,) = lg.autograd.grad((x * w).tanh().sum(), x)
        return g

    def scaled(x):
        with lg.enable_grad():
            return x * w

    for eager in (scaled, saliency):
        compiled = lg.compile(eager)
        with lg.no_grad():
            for _ in range(3):
                x = lg.randn(3)
                got, want = compiled(x), eager(x)
                _same(got, want)
                assert got.requires_grad == want.requires_grad


_PROGRAM_WITH_DEFAULTS_AND_SECTIONS = """
import functools, types
import leafgrad as lg

class Config:
    def __init__(self):
        self.scale = 2.0

cfg = Config()
opts = types.SimpleNamespace(model=types.SimpleNamespace(attn=types.SimpleNamespace(gain=3.0)))

def by_default(x, c=cfg, table={'shift': 1.0}, *, extra=[0.5]):
    return x * c.scale + table['shift'] + extra[0]

def by_section(x):
    return x * opts.model.attn.gain

def base(x, k):
    return x * k

scaled = functools.partial(base, k=2.0)

def by_partial(x):
    return scaled(x)
"""


def test_default_arguments_nested_config_sections_and_a_global_partial_are_guarded():
    """State a function reads through its default arguments (an object, a dict, a keyword-only
    list), a configuration's section three attributes down (``opts.model.attn.gain``) and the
    arguments a global ``functools.partial`` holds: a change traces again, as PyTorch's guards
    do, where the replay kept the old value."""
    ns = {}
    exec(compile(_PROGRAM_WITH_DEFAULTS_AND_SECTIONS, '<user program>', 'exec'), ns)
    x = lg.randn(3)
    changes = {'by_default': (lambda: setattr(ns['cfg'], 'scale', 5.0),
                              lambda: ns['by_default'].__defaults__[1].update(shift=-2.0),
                              lambda: ns['by_default'].__kwdefaults__['extra'].__setitem__(0, 4.0)),
               'by_section': (lambda: setattr(ns['opts'].model.attn, 'gain', 7.0),),
               'by_partial': (lambda: ns['scaled'].keywords.update(k=8.0),)}
    for name, steps in changes.items():
        fn = ns[name]
        compiled = lg.compile(fn)
        for change in (None,) + steps:
            if change is not None:
                change()
            for _ in range(2):
                _same(compiled(x), fn(x))
        assert _program(compiled)[0] is not None and compiled.report().count('traced again') == len(steps), name


def test_a_class_attribute_read_through_the_object_is_guarded():
    """A value set in the class body (``scale = 2.0``) and read as ``self.scale``: changed on the
    class, or shadowed by one set on the object, the call traces again."""
    class Scaled(nn.Module):
        scale = 2.0

        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x) * self.scale

    model = Scaled()
    compiled = lg.compile(model)
    x = lg.randn(3, 2)
    for change in (None, lambda: setattr(Scaled, 'scale', 5.0), lambda: setattr(model, 'scale', 7.0)):
        if change is not None:
            change()
        for _ in range(2):
            _same(compiled(x), model(x))
    assert _program(compiled)[0] is not None and compiled.report().count('traced again') == 2


def test_an_op_whose_output_shape_depends_on_data_is_a_graph_break():
    """x[x > 0], nonzero, unique, masked_select ...: the output's shape is the data's, and a
    Python number read from it (``y.shape[0]``, ``len(idx)``) would be a constant of every
    replay; a graph break, as PyTorch's default, so every call is eager's."""
    cases = (lambda x: x[x > 0].sum() * x[x > 0].shape[0], lambda x: x.new_zeros(len(lg.nonzero(x > 0))) + 1,
             lambda x: lg.unique(x) * 2, lambda x: lg.masked_select(x, x > 0).sum() * 1.0,
             lambda x: x.repeat_interleave(lg.tensor([1, 2, 0])), lambda x: lg.where(x > 0)[0] * 2)
    for fn in cases:
        compiled = lg.compile(fn)
        for data in ([1., -1., 2.], [1., 2., 3.], [-1., -2., 3.]):
            x = lg.tensor(data)
            _same(compiled(x), fn(x))
        assert _program(compiled) == [None] and 'shape depends on tensor data' in compiled.report()


def test_strides_are_part_of_the_signature():
    """A branch on x.is_contiguous() (or x.stride()) is decided by the input's strides: a
    transposed input of the same shape traces again, as PyTorch's guards check strides."""
    def f(x):
        return x * 2 if x.is_contiguous() else x * 3

    compiled = lg.compile(f)
    for x in (lg.ones(2, 3), lg.ones(2, 3), lg.ones(3, 2).t(), lg.ones(3, 2).t(), lg.ones(2, 3)):
        _same(compiled(x), f(x))
    assert len(_program(compiled)) == 2


def test_print_warnings_and_logging_inside_the_function_are_graph_breaks(capsys):
    """print(), warnings.warn() and a logger's record in the compiled function: side effects a
    replay would not repeat, so graph breaks (as PyTorch's by default), and every call prints,
    warns and logs as eagerly; a warning's stacklevel still names the user's line."""
    import logging
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    log = logging.getLogger('a user program')
    log.addHandler(handler)
    log.setLevel(logging.INFO)

    def printing(x):
        print('step')
        return x * 2

    def warning(x):
        warnings.warn('careful', UserWarning, stacklevel=1)
        return x * 2

    def logged(x):
        log.info('hello')
        return x * 2

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            for fn in (printing, warning, logged):
                compiled = lg.compile(fn)
                for _ in range(3):
                    compiled(lg.ones(1))
                assert _program(compiled) == [None] and 'inside the compiled region' in compiled.report()
    finally:
        log.removeHandler(handler)
    assert capsys.readouterr().out == 'step\n' * 3
    assert len(caught) == 3 and all(w.filename == __file__ for w in caught)
    assert [r.getMessage() for r in records] == ['hello'] * 3 and all(r.pathname == __file__ for r in records)


def test_compile_logs_nothing_through_a_root_logger_set_to_info(capsys):
    """A program's logging.basicConfig(level=INFO) does not make leafgrad.compile talk: its
    loggers stay at WARNING until set_logs says otherwise, as PyTorch's."""
    import logging
    root = logging.getLogger()
    handler = logging.StreamHandler()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        f = lg.compile(lambda x: x * 2)
        f(lg.ones(1)), f(lg.ones(1))
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    assert capsys.readouterr().err == ''


def test_an_input_changed_in_place_moves_its_version_on_as_eagerly():
    """An input (or a captured buffer) changed in place by the compiled function: its version
    counter moves on in every call as eagerly, so that a graph that saved it before raises at
    its backward (a replay wrote the array and left the version: a silent wrong gradient)."""
    w = lg.ones(2, requires_grad=True)
    buf = lg.zeros(2)

    def step(x):
        x.add_(1)
        buf.mul_(0.5).add_(x)
        return x * 2

    compiled = lg.compile(step)
    for _ in range(3):
        x = lg.ones(2)
        y = (x * w).sum()  # (saves x)
        before = buf._version
        _same(compiled(x), lg.full((2,), 4.0))
        assert x._version == 1 and buf._version == before + 2
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            y.backward()
    assert _program(compiled)[0] is not None


_TORCH_STANCE_FACTS = r"""
import json, torch
facts = {'names': sorted(n for n in ('compile', 'reset', 'disable', 'set_stance', 'list_backends', 'is_compiling',
                                     'is_dynamo_compiling', 'is_exporting', 'allow_in_graph',
                                     'assume_constant_result', 'cudagraph_mark_step_begin')
                         if hasattr(torch.compiler, n))}
try:
    torch.compiler.set_stance('force_eager', force_backend='eager')
except Exception as e:
    facts['backend_error'] = [type(e).__name__, str(e)]
f = torch.compile(lambda x: x * 2, backend='eager')
torch.compiler.set_stance('bogus')
try:
    f(torch.ones(2))
except Exception as e:
    facts['invalid'] = [type(e).__name__, str(e)]
torch.compiler.set_stance('default')
def step(x):
    return x * 2
g = torch.compile(step, backend='eager')
g(torch.ones(2))
with torch.compiler.set_stance('fail_on_recompile'):
    g(torch.ones(2))
    try:
        g(torch.ones(3))
    except Exception as e:
        facts['fail'] = [type(e).__name__, str(e).split('\n')[0]]
facts['type'] = type(torch.compiler.set_stance('default')).__name__
print(json.dumps(facts))
"""


def test_set_stance_as_torchs(tmp_path):
    """torch.compiler.set_stance: its errors and the "fail_on_recompile" message as PyTorch's;
    "force_eager" runs compiled callables eagerly, "eager_on_recompile" runs eagerly what would
    trace again while replays go on, "eager_then_compile" runs a callable's first call eagerly;
    as a context manager and a decorator it holds only there."""
    facts = ask_torch(_TORCH_STANCE_FACTS)
    import leafgrad.compiler as compiler
    assert [n for n in facts['names'] if hasattr(compiler, n)] == facts['names']
    with pytest.raises(RuntimeError) as caught:
        compiler.set_stance('force_eager', force_backend='eager')
    assert [type(caught.value).__name__, str(caught.value)] == facts['backend_error']
    f = lg.compile(lambda x: x * 2)
    compiler.set_stance('bogus')
    try:
        with pytest.raises(RuntimeError) as caught:
            f(lg.ones(2))
    finally:
        compiler.set_stance('default')
    assert [type(caught.value).__name__, str(caught.value)] == facts['invalid']

    def step(x):
        return x * 2
    g = lg.compile(step)
    g(lg.ones(2))
    with compiler.set_stance('fail_on_recompile'):
        g(lg.ones(2))  # (a replay: allowed)
        with pytest.raises(RuntimeError) as caught:
            g(lg.ones(3))
    kind, first_line = facts['fail']  # (the file and line differ: theirs is a -c program)
    assert type(caught.value).__name__ == kind
    assert str(caught.value).split('\n')[0].split(' filename: ')[0] == first_line.split(' filename: ')[0]
    assert f"function name: 'step', line number: {step.__code__.co_firstlineno}" in str(caught.value)
    assert type(compiler.set_stance('default')).__name__ == facts['type']

    h = lg.compile(lambda x: x + 1)
    with compiler.set_stance('force_eager'):
        h(lg.ones(2))
    assert _program(h) == []  # (not traced)
    h(lg.ones(2))
    with compiler.set_stance('eager_on_recompile'):
        _same(h(lg.ones(2)), lg.full((2,), 2.0))
        _same(h(lg.ones(4)), lg.full((4,), 2.0))  # (a new signature: eagerly, not traced)
    assert len(_program(h)) == 1 and _program(h)[0] is not None
    k = lg.compile(lambda x: x - 1)

    @compiler.set_stance('eager_then_compile')
    def run():
        return [k(lg.ones(2)) for _ in range(3)]
    assert lg._dynamo.stance.stance == 'default'
    run()
    assert _program(k)[0] is not None and k._leafgrad_compiled.cache[next(iter(k._leafgrad_compiled.cache))].calls == 1


def test_a_compiled_method_that_appends_to_its_objects_list_keeps_doing_so():
    """A plain object's compiled method that appends to a list the object holds (a log of
    losses): a side effect a replay would not repeat, so the signature runs eagerly, and every
    call appends, as eagerly."""
    class Trainer:
        def __init__(self):
            self.log, self.w = [], lg.ones(3, requires_grad=True)

        def step(self, x):
            y = (x * self.w).sum()
            self.log.append(y)
            return y

    trainer = Trainer()
    step = lg.compile(trainer.step)
    for _ in range(4):
        step(lg.ones(3))
    assert len(trainer.log) == 4 and 'changes a list it reaches every time' in step.report()


def test_a_value_changed_on_every_call_runs_eagerly_past_the_recompile_limit(capsys):
    """A value the function reads that changes on every call (a counter) traces again each
    time only up to the recompile limit; then that signature runs eagerly, with PyTorch's one
    warning, its results still right."""
    from leafgrad import _dynamo
    ns = {}
    exec(compile('import leafgrad as lg\nSTEP = 0\n@lg.compile\ndef f(x):\n    return x * STEP\n',
                 '<user program>', 'exec'), ns)
    x = lg.ones(3)
    for step in range(_dynamo.config.recompile_limit + 4):
        ns['STEP'] = step
        _same(ns['f'](x), x * step)
    assert capsys.readouterr().err.count('recompile_limit') == 1
    assert _program(ns['f']) == [None] and 'runs eagerly from now on' in ns['f'].report()


def test_fullgraph_raises_torchs_error_type(torch_facts):
    from leafgrad import _dynamo
    with pytest.raises(_dynamo.exc.Unsupported) as mine:
        lg.compile(_branchy, fullgraph=True)(lg.ones(3))
    assert isinstance(mine.value, RuntimeError)
    assert [c.__name__ for c in type(mine.value).__mro__[:3]] == torch_facts['fullgraph']


def test_explain_reports_breaks_and_ops():
    from leafgrad import _dynamo
    out = _dynamo.explain(_branchy)(lg.ones(3))
    assert out.graph_break_count == 1 and 'data-dependent' in out.break_reasons[0]
    out = _dynamo.explain(lambda x: (x * 2).tanh().sum())(lg.ones(3))
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.op_count == 3
    assert 'Graph Count: 1' in str(out)


# ---- autograd through a compiled region -----------------------------------------------------

def test_a_saved_tensor_changed_before_the_backward_raises_torchs_error(torch_facts):
    """A parameter the compiled backward reads, changed in place between the forward and the
    backward (an optimizer step between them): torch.compile's error, naming the parameter.
    Where the op is replayed through itself, its own nodes find it, as eagerly."""
    for make in (lambda: nn.Linear(3, 2), lambda: nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))):
        model = make()
        compiled = lg.compile(lambda x: model(x).tanh())
        compiled(lg.randn(4, 3, requires_grad=True))
        y = compiled(lg.randn(4, 3, requires_grad=True)).sum()
        with lg.no_grad():
            model.get_submodule('0' if isinstance(model, nn.Sequential) else '').weight.mul_(2)
        with pytest.raises(RuntimeError) as caught:
            y.backward()
        kind, message = torch_facts['changed_before_backward']
        assert type(caught.value).__name__ == kind
        # (leafgrad's own words follow PyTorch's: the line that made the change)
        assert str(caught.value).startswith(message.replace('torch.', 'leafgrad.'))
    norm = nn.GroupNorm(1, 3)  # (replayed through itself: its weight is checked by its own node)
    compiled = lg.compile(lambda x: norm(x * 2).sum())
    compiled(lg.randn(2, 3, requires_grad=True))
    y = compiled(lg.randn(2, 3, requires_grad=True))
    with lg.no_grad():
        norm.weight.add_(1)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        y.backward()


def test_parameter_hooks_fire_and_optimizer_steps():
    model = nn.Linear(3, 2)
    seen, post = [], []
    model.weight.register_hook(lambda g: seen.append(g.shape))
    model.bias.register_post_accumulate_grad_hook(lambda p: post.append(p.grad.shape))
    compiled = lg.compile(model)
    opt = lg.optim.SGD(model.parameters(), lr=0.1)
    x = lg.randn(4, 3)
    for _ in range(3):
        before = model.weight._data.copy()
        opt.zero_grad()
        compiled(x).sum().backward()
        opt.step()
        assert not np.array_equal(before, model.weight._data)
    assert len(seen) == 3 and len(post) == 3


def test_retain_graph_and_second_backward():
    w = lg.randn(3, requires_grad=True)
    compiled = lg.compile(lambda x: (x * w).tanh().sum())
    x = lg.randn(3)
    compiled(x)
    y = compiled(x)
    y.backward(retain_graph=True)
    g1 = w.grad.clone()
    y.backward()
    _same(w.grad, g1 * 2)
    with pytest.raises(RuntimeError, match='Trying to backward through the graph a second time'):
        y.backward()


def test_autograd_grad_and_create_graph(torch_facts):
    w = lg.randn(3, requires_grad=True)
    compiled = lg.compile(lambda x: (x * w).tanh().sum())
    x = lg.randn(3)
    compiled(x)
    y = compiled(x)
    assert y.grad_fn.name() == torch_facts['node']
    (g,) = lg.autograd.grad(y, w)
    (ge,) = lg.autograd.grad((x * w).tanh().sum(), w)
    _same(g, ge)
    (g2,) = lg.autograd.grad(compiled(x), w, create_graph=True)
    _same(g2, ge)
    assert g2.grad_fn.name() == torch_facts['create_graph_node']
    with pytest.raises(RuntimeError) as mine:
        g2.sum().backward()
    assert ['RuntimeError', str(mine.value)] == torch_facts['double_backward']


def test_one_node_in_viz_with_op_count():
    from leafgrad import viz
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    compiled = lg.compile(model)
    x = lg.randn(2, 3)
    compiled(x)
    out = compiled(x).sum()
    labels = [n.label for n in viz.draw(out).nodes if n.kind in ('op', 'op_freed')]
    assert labels[0].startswith('SumBackward0')
    assert len(labels) == 2 and labels[1].startswith('CompiledFunctionBackward\n3 ops'), labels


def test_eager_unchanged_after_tracing():
    from leafgrad.ops import elementwise
    add, plus = elementwise.add, lg.Tensor.__add__  # (the function with out=, and add's forward named __add__)
    compiled = lg.compile(lambda x: x + 1)
    compiled(lg.ones(2, requires_grad=True))
    assert elementwise.add is add and lg.Tensor.__add__ is plus and _trace.active is None
    assert plus.__code__.co_code == elementwise.Add.forward.__code__.co_code
    assert type((lg.ones(2, requires_grad=True) * 2).grad_fn).__name__ == 'MulBackward0'
    assert 'leafgrad' not in repr(lg.Tensor.item)  or lg.Tensor.item.__name__ == 'item'
    assert not hasattr(lg.Tensor.item, '__wrapped__')


def test_autocast_runs_eagerly():
    model = nn.Linear(4, 3)
    x = lg.randn(2, 4)

    def fn(x):
        with lg.autocast('cpu', dtype=lg.bfloat16):
            return model(x)

    compiled = lg.compile(fn)
    for _ in range(2):
        a, b = compiled(x), fn(x)
        assert a.dtype == b.dtype == lg.bfloat16
        _same(a.float(), b.float())
    assert _program(compiled) == [None] and 'autocast' in compiled.report()
    plain = lg.compile(model)
    plain(x), plain(x)
    with lg.autocast('cpu', dtype=lg.bfloat16):  # the caller's autocast: another signature
        assert plain(x).dtype == lg.bfloat16
    assert _program(plain)[0] is not None and _program(plain)[1] is None


def test_op_held_in_a_closure_runs_eagerly():
    """An op reached through a closure is not replaced by the trace's wrapper: the signature
    runs eagerly (correct on every call), rather than replaying what the op does inside."""
    def make(op):
        return lambda x: op(x * 2.0, 1)
    fn = make(F.log_softmax)
    compiled = lg.compile(fn)
    for step in range(3):
        xs = np.random.default_rng(step).standard_normal((2, 3)).astype(np.float32)
        _same(fn(lg.tensor(xs)), compiled(lg.tensor(xs)))
    assert _program(compiled) == [None]
    assert 'made outside the traced ops' in compiled.report()


def test_untraceable_falls_back_with_reason():
    w = lg.randn(3, requires_grad=True)

    def fn(x):
        y = x * w
        y[:2].add_(1)   # in place, under autograd, on a view: eager keeps its checks and views
        return y.sum()

    compiled = lg.compile(fn)
    for _ in range(2):
        x1 = lg.randn(3)
        _same(compiled(x1), fn(x1))
    assert _program(compiled) == [None] and 'in place' in compiled.report()


# ---- the API, as torch.compile's -------------------------------------------------------------

def test_optimized_module_api_as_torch(torch_facts):
    lm = nn.Linear(2, 3)
    lo = lg.compile(lm)
    assert type(lo).__name__ == torch_facts['type'] and isinstance(lo, nn.Module)
    assert lo._orig_mod is lm and torch_facts['orig']
    assert list(lo.state_dict()) == torch_facts['keys'] == ['_orig_mod.weight', '_orig_mod.bias']
    assert lo.weight is lm.weight and lo.in_features == 2
    assert repr(lo) == torch_facts['repr']
    assert (lg.compile(lm, disable=True) is lm) == torch_facts['disable'] is True


def test_function_and_decorator_forms():
    @lg.compile
    def f(x):
        return x * 2

    @lg.compile(fullgraph=True, mode='max-autotune')
    def g(x):
        return x + 1

    x = lg.ones(2)
    _same(f(x), x * 2), _same(f(x), x * 2), _same(g(x), x + 1), _same(g(x), x + 1)
    assert f.__name__ == 'f' and f._torchdynamo_orig_callable.__name__ == 'f'
    assert 'replayed' in f.report()


def test_argument_errors_as_torch(torch_facts):
    def f(x):
        return x

    mine = []
    for kw in (dict(mode='bogus'), dict(mode='max-autotune', options={'a': 1}), dict(backend='nope')):
        with pytest.raises(Exception) as e:
            lg.compile(f, **kw)
        mine.append([type(e.value).__name__, str(e.value)])
    with pytest.raises(Exception) as e:
        lg.compile(3)
    mine.append([type(e.value).__name__, str(e.value)])
    assert mine == torch_facts['errors']


def test_backend_eager_keeps_eager_graph():
    compiled = lg.compile(lambda x: (x * 2).sum(), backend='eager')
    x = lg.ones(3, requires_grad=True)
    compiled(x)
    assert type(compiled(x).grad_fn).__name__ == 'SumBackward0'


def test_reset_forgets_traces():
    from leafgrad import _dynamo
    compiled = lg.compile(lambda x: x * 2)
    compiled(lg.ones(2))
    assert _signatures(compiled) == 1
    _dynamo.reset()
    assert _signatures(compiled) == 0
    lg.compiler.reset()


def test_error_in_the_traced_call_propagates_and_leaves_nothing():
    calls = []

    def fn(x):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError('first call fails')
        return x * 2

    compiled = lg.compile(fn)
    with pytest.raises(ValueError, match='first call fails'):
        compiled(lg.ones(2))
    assert _trace.active is None and _signatures(compiled) == 0
    _same(compiled(lg.ones(2)), lg.ones(2) * 2)
    _same(compiled(lg.ones(2)), lg.ones(2) * 2)
    # (the function appends to a list it reaches: a Python effect a replay would not repeat, so
    # every call runs it, as PyTorch's replays its side effects)
    assert len(calls) == 3 and 'changes a list it reaches every time' in compiled.report()


def test_under_python_m_leafgrad_torch_compile_is_leafgrads(tmp_path):
    from fresh import run_python
    script = tmp_path / 'prog.py'
    script.write_text('import torch\n'
                      'm = torch.compile(torch.nn.Linear(2, 1))\n'
                      'x = torch.ones(3, 2)\n'
                      'm(x); y = m(x); y.sum().backward()\n'
                      'print(type(m).__name__, y.grad_fn.name(), torch._dynamo.config.cache_size_limit,\n'
                      '      torch.compiler.is_compiling(), list(m.state_dict())[0])\n')
    out = run_python('-m', 'leafgrad', str(script), cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['OptimizedModule', 'CompiledFunctionBackward', '8', 'False', '_orig_mod.weight']


def test_peak_memory_not_above_eager():
    """A replayed MLP step (forward, backward) peaks no higher than the eager step: the
    generated code frees each array at its last use, as eager frees a tensor nobody holds."""
    import tracemalloc

    def peak(step):
        step(), step()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            step()
            return tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()

    peaks = []
    for compile_it in (False, True):
        lg.manual_seed(0)
        model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.Tanh(), nn.Linear(512, 10))
        x, y = lg.randn(128, 256), lg.randint(0, 10, (128,))
        run = lg.compile(model) if compile_it else model

        def step():
            F.cross_entropy(run(x), y).backward()
            for p in model.parameters():
                p.grad = None
        peaks.append(peak(step))
    assert peaks[1] <= peaks[0] * 1.01, peaks  # (1%: the replay's own few small objects)


def test_dimension_marks_as_torchs_and_each_size_traced():
    """torch._dynamo.mark_dynamic / maybe_mark_dynamic / mark_static record their marks as
    PyTorch's (on the tensor, with PyTorch's errors); compile says that a marked dimension is
    traced size by size, and gives eager's values."""
    from leafgrad import _dynamo
    x = lg.ones(3, 4)
    _dynamo.mark_dynamic(x, 0)
    _dynamo.mark_dynamic(x, [1], min=2, max=8)
    _dynamo.maybe_mark_dynamic(x, (0, 1))
    _dynamo.mark_static(x)
    assert x._dynamo_dynamic_indices == {0, 1} and x._dynamo_weak_dynamic_indices == {0, 1}
    assert x._dynamo_static_indices == {0, 1} and x._has_dynamo_dim_marking
    assert {(r.dim, r.min, r.max) for r in x._dynamo_dynamic_range} == {(0, None, None), (1, 2, 8)}
    with pytest.raises(AssertionError, match="Expected index to be int, list, or tuple, got <class 'str'>"):
        _dynamo.mark_dynamic(x, 'a')
    with pytest.raises(TypeError, match=r'issubclass\(\) arg 1 must be a class'):  # (PyTorch's, for no class)
        _dynamo.mark_static(lg.nn.Linear(2, 2))
    assert _dynamo.mark_static(lg.nn.Linear) is lg.nn.Linear and lg.nn.Linear._dynamo_marked_static
    del lg.nn.Linear._dynamo_marked_static

    def inside(t):
        _dynamo.mark_dynamic(t, 0)
        return t * 2
    with pytest.raises(AssertionError, match='Attempt to trace forbidden callable'):
        lg.compile(inside)(lg.ones(2))
    compiled = lg.compile(lambda t: (t * 2).sum(1))
    for n in (3, 5, 3):
        t = lg.randn(n, 4)
        _dynamo.mark_dynamic(t, 0)
        _same(compiled(t), (t * 2).sum(1))
    # (a marked dim's new size is no new signature: it runs eagerly, and is traced when seen again)
    assert _signatures(compiled) == 1 and 'dims [0] are marked dynamic' in compiled.report()


def test_compile_keywords_of_pytorch_2_13(capsys):
    """name labels the report; recompile_limit caps this call's signatures (past it: eager with
    a warning, or with fullgraph=True PyTorch's FailOnRecompileLimitHit); backend=None is
    PyTorch's default backend; shapes_spec is refused (every shape is specialised)."""
    import warnings

    def f(x):
        return x * 2

    compiled = lg.compile(f, name='double', recompile_limit=1, backend=None)
    assert compiled.report().startswith("compiled region 'double'")
    compiled(lg.ones(2))
    out = compiled(lg.ones(3))  # a second signature: past this call's limit of 1
    assert lg.equal(out, lg.full((3,), 2.0)) and 'recompile_limit (1)' in capsys.readouterr().err
    strict = lg.compile(f, fullgraph=True, recompile_limit=1)
    strict(lg.ones(2))
    with pytest.raises(lg._dynamo.exc.FailOnRecompileLimitHit, match='Hard failure due to fullgraph=True'):
        strict(lg.ones(3))
    with pytest.raises(NotImplementedError, match='shapes_spec'):
        lg.compile(f, shapes_spec=object())
    with pytest.raises(ValueError, match='recompile_limit'):
        lg.compile(f, recompile_limit=-1)


def test_module_compile_in_place():
    """Module.compile(): the module itself runs compiled (PyTorch's nn.Module.compile returns
    None and keeps the state dict's keys), with eager's values and gradients; its hooks fire."""
    lg.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = lg.arange(6.).reshape(2, 3) / 5
    eager = m(x)
    eager.sum().backward()
    eager_grad = m[0].weight.grad.clone()
    m.zero_grad()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    assert m.compile() is None
    out = m(x)
    assert lg.equal(out, eager) and seen == [(2, 2)]
    assert list(m.state_dict()) == ['0.weight', '0.bias', '2.weight', '2.bias']
    out.sum().backward()
    assert lg.equal(m[0].weight.grad, eager_grad)
    assert type(m.forward).__name__ == 'function' and m.forward.__wrapped__ is not None  # compiled, in place


_VIEW_OUTPUTS = [('t', 'lambda x: x.t()'), ('view', 'lambda x: x.view(12)'), ('select', 'lambda x: x[1]'),
                 ('detach', 'lambda x: x.detach()'), ('itself', 'lambda x: x'),
                 ('chunk_then_t', 'lambda x: x.chunk(2, 1)[1].t()'), ('with_another', 'lambda x: (x.t(), x.sum())')]


def test_an_output_that_is_a_view_of_an_input_is_made_again_as_torchs():
    """A compiled function returning its input or a view of it (by view ops) returns, as
    torch.compile's does, that input itself or a view of it: ``_base`` the input, eager's
    grad_fn, its version counter shared (an in-place change through it is seen by autograd on
    the input); the rest replays, and gradients are eager's."""
    facts = ask_torch('import json, torch\nx = torch.randn(3, 4, requires_grad=True)\nfacts = {}\n'
                      f'for name, src in {_VIEW_OUTPUTS!r}:\n'
                      '    torch._dynamo.reset()\n'
                      "    c = torch.compile(eval(src), backend='aot_eager')\n"
                      '    c(x)\n    o = c(x)\n    o = o[0] if isinstance(o, tuple) else o\n'
                      '    facts[name] = [o._base is x, o.grad_fn.name() if o.grad_fn else None, o is x, o.requires_grad]\n'
                      'print(json.dumps(facts))')
    x = lg.randn(3, 4, requires_grad=True)
    for name, src in _VIEW_OUTPUTS:
        fn = eval(src)
        compiled = lg.compile(fn)
        compiled(x)
        out = compiled(x)
        first = out[0] if isinstance(out, tuple) else out
        got = [first._base is x, first.grad_fn.name() if first.grad_fn else None, first is x, first.requires_grad]
        if name == 'chunk_then_t':  # (PyTorch names this one's grad_fn CompiledFunctionBackward: eager's here)
            facts[name][1] = fn(x).grad_fn.name()
        assert got == facts[name], name
        # (a view of an input the call also reads otherwise: eagerly, which gives eager's gradient sums)
        assert (_program(compiled)[0] is None) == (name == 'with_another'), name
        want = fn(x)
        for a, b in zip(out if isinstance(out, tuple) else (out,), want if isinstance(want, tuple) else (want,)):
            _same(a, b)
    y = lg.compile(lambda t: t.t())(x)
    before = x._version
    with lg.no_grad():
        y.mul_(1.0)  # (through the output: the input's version moves on, as eagerly)
    assert x._version == before + 1
    a, b = lg.randn(3, 4, requires_grad=True), None
    b = a.detach().clone().requires_grad_()
    compiled = lg.compile(lambda t: t.view(2, 6))
    compiled(a)
    (compiled(a) * lg.arange(12.0).view(2, 6)).sum().backward()
    (b.view(2, 6) * lg.arange(12.0).view(2, 6)).sum().backward()
    _same(a.grad, b.grad)
