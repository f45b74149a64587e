"""func.vmap against torch.func.vmap and against a loop over the samples: every op of the
forward-mode table batched along dim 0 (all inputs, and the first one only), in_dims/out_dims,
nesting, chunk_size, randomness, per-sample gradients, PyTorch's errors."""
import warnings

import numpy as np
import pytest

from both import T, same
from fwd_ops import OPS

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

B = 3


def _batched_inputs(name, M, seed=0):
    rng = np.random.default_rng(seed)
    return [M.tensor(np.stack([make(rng) for _ in range(B)])) for make in OPS[name][1]]


def _vmapped(name, M, first_only=False):
    fn = OPS[name][0]
    xs = _batched_inputs(name, M)
    if first_only:
        xs = [xs[0]] + [x[0] for x in xs[1:]]
        dims = (0,) + (None,) * (len(xs) - 1)
    else:
        dims = 0
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return M.func.vmap(lambda *a: fn(M, *a), in_dims=dims)(*xs), xs


# 'first batched' (the other inputs unbatched, in_dims None) only for ops of several inputs
@pytest.mark.parametrize('name, first_only', [
    pytest.param(name, first_only, id=f"{name}-{'first batched' if first_only else 'all batched'}")
    for name in sorted(OPS) for first_only in (False, True) if not first_only or len(OPS[name][1]) > 1])
def test_vmap_against_torch_and_loop(name, first_only):
    ours, xs = _vmapped(name, lg, first_only)
    theirs, _ = _vmapped(name, torch, first_only)
    assert T(ours) == T(theirs)
    fn = OPS[name][0]
    loop = lg.stack([fn(lg, *[x[i] if (not first_only or k == 0) else x for k, x in enumerate(xs)])
                     for i in range(B)])
    assert T(ours) == T(loop)


def _nested_vmapped(name, M):
    """vmap of vmap over (3, 2) samples, the inputs' batch dims transposed (non-contiguous)."""
    fn = OPS[name][0]
    rng = np.random.default_rng(0)
    xs = [M.tensor(np.stack([make(rng) for _ in range(2 * B)])) for make in OPS[name][1]]
    xs = [x.reshape((2, B) + tuple(x.shape[1:])).transpose(0, 1) for x in xs]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return M.func.vmap(M.func.vmap(lambda *a: fn(M, *a)))(*xs)


@pytest.mark.parametrize('name', sorted(OPS))
def test_nested_vmap_against_torch(name):
    """Nested vmap of every op of the table; an op without a batching rule runs once per sample
    of every level (the per-sample fallback of the inner level met inputs still batched at the
    outer one: qr, eigh, lu, svd ... got an extra dim, conv and fmax raised)."""
    assert T(_nested_vmapped(name, lg)) == T(_nested_vmapped(name, torch))


def _per_sample_grads(M):
    F = M.nn.functional
    M.manual_seed(0)
    model = M.nn.Sequential(M.nn.Linear(4, 8), M.nn.Tanh(), M.nn.Linear(8, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = M.randn(5, 4), M.tensor([0, 2, 1, 1, 0])

    def loss(p, xb, yb):
        return F.cross_entropy(M.func.functional_call(model, p, (xb.unsqueeze(0),)), yb.unsqueeze(0))
    grads = M.func.vmap(M.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    values = M.func.vmap(M.func.grad_and_value(loss), in_dims=(None, 0, 0))(params, x, y)[1]
    return grads, values


def _ensemble(M):
    M.manual_seed(1)
    models = [M.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = M.func.stack_module_state(models)
    x = M.randn(5, 3)
    return M.func.vmap(lambda p, b: M.func.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0))(params, buffers)


def _nested(M):
    x = M.arange(24.0).reshape(2, 3, 4)
    inner = M.func.vmap(lambda r: r.softmax(0) * r.sum(), in_dims=1)
    return M.func.vmap(inner)(x), M.func.vmap(M.func.vmap(lambda a, b: a @ b), in_dims=(0, None))(x, M.ones(4))


def _dims(M):
    x = M.arange(24.0).reshape(2, 3, 4)
    return (M.func.vmap(lambda a: a.sum(0), in_dims=2, out_dims=1)(x),
            M.func.vmap(lambda a, b: (a * b, a), in_dims=(1, None), out_dims=(0, 1))(x, M.ones(4)),
            M.func.vmap(lambda d: d['a'] + d['b'], in_dims=({'a': 0, 'b': None},))({'a': x, 'b': M.ones(3, 4)}))


def _chunks(M):
    x = M.arange(30.0).reshape(10, 3)
    return M.func.vmap(lambda a: (a * a).sum(), chunk_size=3)(x), M.func.vmap(lambda a: a.exp(), chunk_size=20)(x)


def _random(M, mode):
    M.manual_seed(0)
    out = M.func.vmap(lambda a: M.nn.functional.dropout(a, 0.5), randomness=mode)(M.ones(4, 6))
    return out.shape, (out == 0).any().item(), bool(((out == out[0]).all()).item())


PROGRAMS = {
    'per-sample gradients': _per_sample_grads, 'ensemble': _ensemble, 'nested': _nested, 'dims': _dims,
    'chunks': _chunks, 'same randomness': lambda M: _random(M, 'same'),
    'random error': lambda M: M.func.vmap(lambda a: a + M.rand(3))(M.ones(2, 3)),
    'random dropout error': lambda M: M.func.vmap(lambda a: M.nn.functional.dropout(a))(M.ones(2, 3)),
    'in_dims a list': lambda M: M.func.vmap(lambda a: a, in_dims=[0])(M.ones(3, 2)),
    'in_dims None': lambda M: M.func.vmap(lambda a: a, in_dims=None)(M.ones(3, 2)),
    'in_dims a float': lambda M: M.func.vmap(lambda a: a, in_dims=0.5)(M.ones(3, 2)),
    'in_dim out of range': lambda M: M.func.vmap(lambda a: a, in_dims=2)(M.ones(3, 2)),
    'in_dim for a number': lambda M: M.func.vmap(lambda a, b: a, in_dims=(0, 0))(M.ones(3, 2), 3),
    'sizes differ': lambda M: M.func.vmap(lambda a, b: a + b)(M.ones(3, 2), M.ones(4)),
    'in_dims structure': lambda M: M.func.vmap(lambda a: a, in_dims=(0, 0))(M.ones(3, 2)),
    'no inputs': lambda M: M.func.vmap(lambda: 1)(),
    'returns a number': lambda M: M.func.vmap(lambda a: 3)(M.ones(3, 2)),
    'item': lambda M: M.func.vmap(lambda a: a.sum().item())(M.ones(3, 2)),
    'bad randomness': lambda M: M.func.vmap(lambda a: a, randomness='x')(M.ones(3, 2)),
    'bad chunk_size': lambda M: M.func.vmap(lambda a: a, chunk_size=0)(M.ones(3, 2)),
    'out_dim out of range': lambda M: M.func.vmap(lambda a: a, out_dims=3)(M.ones(3, 2)),
    'shapes inside': lambda M: M.func.vmap(lambda a: M.tensor([a.dim(), a.shape[0], a.size(-1), a.numel()]))(
        M.ones(3, 2, 5)),
}


@pytest.mark.parametrize('name', sorted(PROGRAMS))
def test_program(name):
    same(PROGRAMS[name], warnings_too=False)


def test_different_randomness_draws_per_sample():
    out = lg.func.vmap(lambda a: lg.nn.functional.dropout(a, 0.5), randomness='different')(lg.ones(8, 50))
    assert out.shape == (8, 50) and not bool((out == out[0]).all())


def test_a_batching_rule_is_not_a_loop():
    """vmap of an MLP calls each op once (on the batch), not once per sample."""
    calls = []
    from leafgrad.ops import linalg
    original = linalg.matmul

    def counting(*a, **k):
        calls.append(1)
        return original(*a, **k)
    linalg.matmul = counting
    try:
        x = lg.randn(64, 3)
        w = lg.randn(3, 4)
        lg.func.vmap(lambda r: (r @ w).tanh().sum())(x)
    finally:
        linalg.matmul = original
    assert len(calls) == 1


# the ops whose batching rule makes one call for the whole batch (none of them runs per sample)
RULED = sorted(name for name in OPS if name.split()[0] in (
    'conv1d', 'conv2d', 'conv_transpose2d', 'max_pool2d', 'max_pool1d', 'avg_pool2d', 'avg_pool1d',
    'adaptive_avg_pool2d', 'adaptive_max_pool2d', 'adaptive_avg_pool1d', 'layer_norm', 'batch_norm', 'group_norm',
    'embedding', 'index_select', 'gather', 'softmax', 'log_softmax', 'cross_entropy', 'nll',
    # rules added with the declarations' vmap slot (and for the matrix functions, interpolate)
    'interpolate', 'pad', 'index', 'scatter', 'scatter_add', 'outer', 'addmm', 'repeat', 'tril', 'triu', 'rot90',
    'clamp_min', 'inv', 'det', 'cholesky', 'solve', 'lgamma', 'digamma', 'polygamma', 'mvlgamma', 'i0',
    'special.i0e', 'special.i1', 'special.i1e', 'special.erfcx', 'special.ndtr', 'special.log_ndtr',
    'special.ndtri', 'special.entr', 'special.xlog1py', 'special.multigammaln'))


@pytest.mark.parametrize('name, first_only', [(name, first) for name in RULED for first in (False, True)
                                              if not first or len(OPS[name][1]) > 1])
def test_rule_is_not_the_loop(name, first_only, monkeypatch):
    """A batched call of each of these ops is one call on the physical batch (not PyTorch's
    per-sample fallback), its result the same as torch.func.vmap's."""
    from leafgrad import _vmap

    def no_loop(fn, op, args, kwargs):
        raise AssertionError(f'{op} ran once per sample')
    monkeypatch.setattr(_vmap, '_loop', no_loop)
    ours, _ = _vmapped(name, lg, first_only)
    assert T(ours) == T(_vmapped(name, torch, first_only)[0])


def test_ensemble_of_normalized_convnets():
    """vmap over stacked conv/group_norm/layer_norm parameters (an ensemble): batched weights."""
    def run(M):
        M.manual_seed(0)
        rng = np.random.default_rng(2)
        F = M.nn.functional
        w = M.tensor(rng.standard_normal((3, 4, 2, 3)))
        g, b = M.tensor(rng.standard_normal((3, 4))), M.tensor(rng.standard_normal((3, 4)))
        x = M.tensor(rng.standard_normal((2, 2, 6)))

        def model(w, g, b):
            h = F.group_norm(F.conv1d(x, w), 2, g, b)
            return F.layer_norm(h.transpose(1, 2), (4,), g, b)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return M.func.vmap(model)(w, g, b)
    assert T(run(lg)) == T(run(torch))


@pytest.mark.parametrize('program', [
    lambda M: M.func.vmap(M.dot)(M.arange(12.).reshape(3, 4), M.ones(3, 4)),
    lambda M: M.func.vmap(M.mv, in_dims=(None, 0))(M.arange(8.).reshape(2, 4), M.ones(3, 4)),
    lambda M: M.func.vmap(M.Tensor.sum)(M.arange(6.).reshape(2, 3)),
    lambda M: M.func.vmap(M.func.vmap(M.dot))(M.arange(24.).reshape(2, 3, 4), M.ones(2, 3, 4)),
], ids=['dot', 'mv_in_dims', 'Tensor.sum', 'nested_dot'])
def test_an_op_passed_itself_is_vmapped_like_torch(program):
    # vmap(torch.dot): the op was taken before vmap wrapped the ops, and was called unwrapped
    same(program)


def _no_per_sample(monkeypatch):
    from leafgrad import _vmap

    def refuse(*args, **kwargs):
        raise AssertionError('ran once per sample')
    monkeypatch.setattr(_vmap, '_loop', refuse)


def test_circular_pad_is_batched(monkeypatch):
    _no_per_sample(monkeypatch)
    x = np.random.default_rng(0).standard_normal((3, 2, 1, 3, 4))
    ours, theirs = (M.func.vmap(lambda a: M.nn.functional.pad(a, (1, 1, 1, 0), mode='circular'))(M.tensor(x))
                    for M in (lg, torch))
    assert T(ours) == T(theirs)


JVP_UNDER_VMAP = {
    'closing over a batched tensor': lambda M, xs, c, t, w, tt: M.func.vmap(
        lambda x: M.func.jvp(lambda y: (y * x).sin() @ w, (c,), (t,))[1])(xs),
    'batched primals': lambda M, xs, c, t, w, tt: M.func.vmap(
        lambda x: M.func.jvp(lambda y: (y * c).tanh().sum(), (x,), (t,))[1])(xs),
    'batched primals and tangents': lambda M, xs, c, t, w, tt: M.func.vmap(
        lambda x, s: M.func.jvp(lambda y: M.nn.functional.softplus(y @ w) * c, (x,), (s,)))(xs, tt),
    'batched tangents': lambda M, xs, c, t, w, tt: M.func.vmap(
        lambda s: M.func.jvp(lambda y: (y @ w).exp(), (c,), (s,))[1])(tt),
    'of a gradient (hvp)': lambda M, xs, c, t, w, tt: M.func.vmap(
        lambda x, s: M.func.jvp(M.func.grad(lambda y: (y.sin() * c).sum()), (x,), (s,)))(xs, tt),
    'special functions': lambda M, xs, c, t, w, tt: M.func.vmap(
        lambda x, s: M.func.jvp(lambda y: M.special.i1e(y) + M.special.log_ndtr(y * c) + M.lgamma(y + 1),
                                (x,), (s,))[1])(xs, tt),
}


@pytest.mark.parametrize('name', sorted(JVP_UNDER_VMAP))
def test_jvp_under_vmap_is_batched(name, monkeypatch):
    """func.jvp inside vmap, with batched primals, tangents or a closed-over batched tensor: one
    forward pass on the batch (no per-sample loop), torch.func's results (closing over a batched
    tensor raised before; batched primals ran once per sample)."""
    rng = np.random.default_rng(1)
    data = [rng.random((4, 3)), rng.random(3), np.ones(3), rng.random((3, 3)), rng.random((4, 3))]
    theirs = JVP_UNDER_VMAP[name](torch, *[torch.tensor(d) for d in data])
    _no_per_sample(monkeypatch)
    ours = JVP_UNDER_VMAP[name](lg, *[lg.tensor(d) for d in data])
    assert plain_all(ours) == plain_all(theirs)


def plain_all(v):
    return [T(x) for x in (v if isinstance(v, (tuple, list)) else [v])]


def test_per_sample_gradient_of_a_summed_scalar():
    """vmap(grad(f)) where f sums a 0-d value (the loss already a scalar): the sum of a 0-d
    sample keeps its batch (it reduced the batch away: IndexError)."""
    rng = np.random.default_rng(2)
    a, b = rng.random((3, 4)), rng.random((3, 4))
    ours, theirs = (M.func.vmap(M.func.grad(lambda u, v: M.dot(u, v).sum().mean() * 2, argnums=(0, 1)))(
        M.tensor(a), M.tensor(b)) for M in (lg, torch))
    assert plain_all(ours) == plain_all(theirs)
    ours, theirs = (M.func.vmap(lambda u: (M.dot(u, u).amax(), u.sum().prod(), u.max().max()))(M.tensor(a))
                    for M in (lg, torch))
    assert plain_all(ours) == plain_all(theirs)


def test_transforms_reach_a_module_imported_between_their_calls(monkeypatch):
    """The transforms remember where the ops are bound (and, since the swaps were made cheap,
    what each site holds): a module imported after the first call is still reached, and every
    op is put back after each call."""
    import sys
    import types
    x = np.arange(12.0).reshape(4, 3)
    lg.func.vmap(lg.sin)(lg.tensor(x))
    lg.func.jvp(lg.sin, (lg.tensor(x),), (lg.tensor(x),))
    bound = (lg.sum, lg.sin, lg.Tensor.sum, lg.Tensor.sin, lg.nn.functional.relu)
    late = types.ModuleType('leafgrad_test_late_module')
    late.sum, late.sin = lg.sum, lg.sin
    monkeypatch.setitem(sys.modules, late.__name__, late)
    for M, mod in ((lg, late), (torch, torch)):
        per_sample = M.func.vmap(lambda a: mod.sum(a))(M.tensor(x))
        tangent = M.func.jvp(lambda a: mod.sin(a), (M.tensor(x),), (M.ones(4, 3, dtype=M.float64),))[1]
        if M is lg:
            ours = (per_sample, tangent)
        else:
            theirs = (per_sample, tangent)
    assert plain_all(ours) == plain_all(theirs)
    assert (late.sum, late.sin) == (lg.sum, lg.sin)
    assert bound == (lg.sum, lg.sin, lg.Tensor.sum, lg.Tensor.sin, lg.nn.functional.relu)


SETITEM = {
    'slice of a batched tensor, batched value': lambda M, a, b: M.func.vmap(
        lambda x, v: _written(x, slice(1, 3), v[:2]))(a, b),
    'int, a 0-d batched value': lambda M, a, b: M.func.vmap(
        lambda x, v: _written(x, 1, v[0]))(a, b),
    'None and Ellipsis, a broadcast value': lambda M, a, b: M.func.vmap(
        lambda x, v: _written(x, (Ellipsis, None, slice(1, None)), v[:3]))(a, b),
    'unbatched value': lambda M, a, b: M.func.vmap(
        lambda x: _written(x, slice(0, 2), M.tensor([7.0, 8.0])))(a),
    'batched value into an unbatched tensor': lambda M, a, b: M.func.vmap(
        lambda v: _written(M.zeros(4), slice(1, 3), v[:2]))(b),
}


def _written(x, index, value):
    x = x.clone()
    x[index] = value
    return x


@pytest.mark.parametrize('name', sorted(SETITEM))
def test_setitem_is_batched(name, monkeypatch):
    """``x[index] = value`` under vmap, a basic index: one write on the physical array (no
    per-sample loop, no warning); a value batched where x is not: PyTorch's error."""
    def run(M):
        a = M.tensor(np.arange(8.0).reshape(2, 4))
        b = M.tensor(-np.arange(8.0).reshape(2, 4))
        try:
            return T(SETITEM[name](M, a, b))
        except RuntimeError as e:
            return str(e)
    expected = run(torch)
    _no_per_sample(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert run(lg) == expected


@pytest.mark.parametrize('case', ['mul', 'sum', 'out_dims 1', 'in_dims 1 t', 'nested', 'twice', 'twice, two out_dims',
                                  'tuple'])
def test_a_vmapped_result_keeps_its_ops_grad_fn(case):
    """The unbatched result of vmap is the op's own output when its batch dim is already where
    out_dims puts it (PyTorch records no permute then: MulBackward0, not PermuteBackward0), a
    permute where it moves; a tensor returned twice is one result."""
    def run(M):
        x = M.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        vmap = M.func.vmap
        out = {'mul': lambda: vmap(lambda r: r * 2)(x),
               'sum': lambda: vmap(lambda r: (r * 2).sum())(x),
               'out_dims 1': lambda: vmap(lambda r: r * 2, out_dims=1)(x),
               'in_dims 1 t': lambda: vmap(lambda r: r.t(), in_dims=1)(x.view(3, 2, 2)),
               'nested': lambda: vmap(vmap(lambda r: r * 2))(x.view(3, 2, 2)),
               'twice': lambda: vmap(lambda r: (r * 2,) * 2)(x),
               'twice, two out_dims': lambda: vmap(lambda r: (r * 2,) * 2, out_dims=(0, 1))(x),
               'tuple': lambda: vmap(lambda r: (r.exp(), r.sin()))(x)}[case]()
        outs = out if isinstance(out, tuple) else (out,)
        (sum(o.sum() for o in outs)).backward()
        return ([type(o.grad_fn).__name__ for o in outs], [o.shape for o in outs], outs[0] is outs[-1],
                [o.detach().numpy() for o in outs], x.grad.numpy())
    mine, theirs = run(lg), run(torch)
    assert mine[:3] == theirs[:3]
    for a, b in zip(mine[3] + [mine[4]], theirs[3] + [theirs[4]]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
