"""vmap over the backward pass against torch.func: ``vmap(vjp_fn)`` over a batch of cotangents
through a graph recorded outside vmap (every program of the forward-mode table), ``jacrev`` as
one backward vmapped over the basis of cotangents, ``jacrev`` inside ``vmap``, and against the
loop over the cotangents (the values a backward per cotangent gives)."""
import warnings

import numpy as np
import pytest

from both import T, plain
from fwd_ops import OPS

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

B = 3


def _vjp_of_batch(name, M):
    """vmap(vjp_fn) of the program over B cotangents per output, w.r.t. its float inputs."""
    fn, makers = OPS[name]
    rng = np.random.default_rng(0)
    arrays = [make(rng) for make in makers]
    xs = [M.tensor(a) for a in arrays]
    floats = [i for i, a in enumerate(arrays) if a.dtype.kind == 'f']

    def f(*diff):
        full = list(xs)
        for i, v in zip(floats, diff):
            full[i] = v
        return fn(M, *full)
    out, vjp_fn = M.func.vjp(f, *[xs[i] for i in floats])
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(1)
    cots = [M.tensor(rng.standard_normal((B,) + tuple(o.shape))) for o in outs]
    cot = tuple(cots) if isinstance(out, tuple) else cots[0]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        batched = M.func.vmap(vjp_fn)(cot)
    looped = [vjp_fn(tuple(c[i] for c in cots) if isinstance(out, tuple) else cots[0][i]) for i in range(B)]
    return batched, [M.stack([r[k] for r in looped]) for k in range(len(batched))]


@pytest.mark.parametrize('name', sorted(OPS))
def test_vmap_of_vjp_against_torch_and_loop(name):
    ours, our_loop = _vjp_of_batch(name, lg)
    theirs, _ = _vjp_of_batch(name, torch)
    assert plain(ours) == plain(theirs)
    assert plain(ours) == plain(our_loop)


def _tutorial_jacobians(M):
    """The Jacobian steps of PyTorch's tutorial 'Jacobians, Hessians, hvp, vhp, and more'."""
    from functools import partial
    F = M.nn.functional
    M.manual_seed(0)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()
    D = 16
    weight, bias, x = M.randn(D, D), M.randn(D), M.randn(D)
    _, vjp_fn = M.func.vjp(partial(predict, weight, bias), x)
    ft_jacobian, = M.func.vmap(vjp_fn)(M.eye(D))
    jac_x = M.func.jacrev(predict, argnums=2)(weight, bias, x)
    jac_w, jac_b = M.func.jacrev(predict, argnums=(0, 1))(weight, bias, x)
    xs = M.randn(5, D)
    batch_jac = M.func.vmap(M.func.jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xs)
    summed = M.func.jacrev(lambda w, b, x: predict(w, b, x).sum(0), argnums=2)(weight, bias, xs).movedim(1, 0)
    chunked = M.func.jacrev(predict, argnums=2, chunk_size=5)(weight, bias, x)
    return ft_jacobian, jac_x, jac_w, jac_b, batch_jac, summed, chunked


def test_tutorial_jacobians_against_torch():
    ours = _tutorial_jacobians(lg)
    assert plain(ours) == plain(_tutorial_jacobians(torch))
    assert T(ours[0]) == T(ours[1])
    assert T(ours[4]) == T(ours[5])
    assert T(ours[6]) == T(ours[1])


def test_jacrev_is_one_batched_backward(monkeypatch):
    """jacrev of a 6-output function runs each node's derivative once (on the 6 cotangents)."""
    from leafgrad.ops import linalg
    calls = []
    original = linalg.Addmm.apply

    def counted(self, grad):
        calls.append(tuple(grad.shape))
        return original(self, grad)
    monkeypatch.setattr(linalg.Addmm, 'apply', counted)
    w, b, x = lg.randn(6, 4), lg.randn(6), lg.randn(2, 4)
    jac = lg.func.jacrev(lambda x: lg.nn.functional.linear(x, w, b).tanh(), argnums=0)(x)
    assert len(calls) == 1
    want = torch.func.jacrev(lambda x: torch.nn.functional.linear(x, torch.tensor(w.numpy()),
                                                                   torch.tensor(b.numpy())).tanh())(
        torch.tensor(x.numpy()))
    assert T(jac) == T(want)


def _nested(M):
    M.manual_seed(0)
    w = M.randn(3, 3)

    def f(x):
        return (w @ x).sin()
    x = M.randn(3)
    out, vjp_fn = M.func.vjp(f, x)
    per_row = M.func.vmap(M.func.vmap(vjp_fn))(M.randn(2, 4, 3))  # two levels of cotangents
    inside = M.func.vmap(lambda xi, ct: M.func.vjp(f, xi)[1](ct))(M.randn(4, 3), M.randn(4, 3))
    over = M.func.vmap(lambda xi: M.func.vmap(M.func.vjp(f, xi)[1])(M.eye(3)))(M.randn(4, 3))
    return per_row, inside, over


def test_nested_vmaps_over_vjp_against_torch():
    assert plain(_nested(lg)) == plain(_nested(torch))


@pytest.mark.parametrize('name', sorted(set(OPS) - {'to float32'}))
def test_gradcheck_batched_grad(name):
    """gradcheck(check_batched_grad=True): vmap over each program's backward gives the loop's
    gradients (float64; 'to float32' loses finite differences in its round trip)."""
    from fwd_ops import inputs
    fn = OPS[name][0]
    xs = [x.requires_grad_() for x in inputs(name, lg)]
    assert lg.autograd.gradcheck(lambda *a: fn(lg, *a), xs, check_batched_grad=True)


@pytest.mark.parametrize('name', ['tanh', 'mul', 'softmax', 'mm', 'div', 'logsumexp', 'mlp'])
def test_gradgradcheck_batched_grad(name):
    from fwd_ops import inputs
    fn = OPS[name][0]
    xs = [x.requires_grad_() for x in inputs(name, lg)]
    assert lg.autograd.gradgradcheck(lambda *a: fn(lg, *a), xs, check_batched_grad=True)


def _backward_on_numpy(M):
    class Bad(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return M.tensor(g.numpy() * 2)
    x = M.randn(3, dtype=M.float64, requires_grad=True)
    try:
        M.autograd.gradcheck(Bad.apply, (x,), check_batched_grad=True)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split(':')[0], 'gradcheck or gradgradcheck failed while testing batched' in str(e)
    return 'no error'


def test_batched_grad_check_fails_on_a_backward_that_does_not_batch():
    assert _backward_on_numpy(lg) == _backward_on_numpy(torch) == (
        'GradcheckError', 'While computing batched gradients, got', True)


def _flag_errors(M):
    x = M.randn(3, dtype=M.float64, requires_grad=True)
    out = []
    for call in (lambda: M.autograd.gradcheck(M.sin, (x,), check_batched_grad=True, check_backward_ad=False,
                                              check_forward_ad=True),
                 lambda: M.autograd.gradgradcheck(M.sin, (x,), check_batched_grad=True, check_rev_over_rev=False,
                                                  check_fwd_over_rev=True, check_undefined_grad=False)):
        try:
            call()
            out.append('ok')
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


def test_batched_grad_flag_errors():
    assert _flag_errors(lg) == _flag_errors(torch)


def _grads_batched(M, **options):
    x = M.tensor([0.5, -1.0], requires_grad=True)
    w = M.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    unused = M.ones(3, requires_grad=True)
    y = (w @ x).sin() * x.exp()
    return M.autograd.grad(y, [x, w, unused], M.arange(6.).reshape(3, 2), is_grads_batched=True, **options)


@pytest.mark.parametrize('options', [dict(allow_unused=True), dict(materialize_grads=True),
                                     dict(allow_unused=True, create_graph=True)])
def test_grad_with_batched_grad_outputs_as_torch(options):
    """autograd.grad(is_grads_batched=True): one vector-Jacobian product per row of the
    grad_outputs (vmap over the backward, as PyTorch); an unused input's gradient None, or
    (materialize_grads) unbatched zeros, as PyTorch's."""
    mine, theirs = _grads_batched(lg, **options), _grads_batched(torch, **options)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert (m is None) == (t is None)
        if t is not None:
            assert m.shape == t.shape and m.requires_grad == t.requires_grad
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6)


def test_grad_with_batched_grad_outputs_of_the_wrong_shape():
    messages = []
    for M in (lg, torch):
        x = M.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            M.autograd.grad(x.exp(), x, M.ones(2), is_grads_batched=True)
        messages.append(str(e.value).replace('torch.Size', 'leafgrad.Size'))
    assert messages[0] == messages[1]


def test_grad_only_inputs_false_warns_as_torch():
    seen = []
    for M in (lg, torch):
        x = M.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            M.autograd.grad((x * 2).sum(), x, only_inputs=False)
            M.autograd.grad((x * 2).sum(), x, only_inputs=True)
        seen.append([(w.category, str(w.message)) for w in caught])
    assert seen[0] == seen[1] and len(seen[0]) == 1


def _per_sample_setup(M):
    rng = np.random.default_rng(0)
    w, b, X = (M.tensor(rng.standard_normal(s)) for s in ((2, 3), (2,), (4, 3)))
    return M.nn.functional, w, b, X


# reverse transforms under vmap w.r.t. an input that is not batched: each sample's Jacobian or
# vector-Jacobian product is its own, not the sum over the batch
PER_SAMPLE = {
    'jacrev of x * b': lambda M, F, w, b, X: M.func.vmap(M.func.jacrev(lambda b, x: x[:2] * b), (None, 0))(b, X),
    'jacrev of linear w.r.t. its weight': lambda M, F, w, b, X: M.func.vmap(
        M.func.jacrev(lambda w, x: F.linear(x, w, b).tanh()), (None, 0))(w, X),
    'jacrev of linear w.r.t. a dict': lambda M, F, w, b, X: M.func.vmap(M.func.jacrev(
        lambda p, x: F.linear(x, p['w'], p['b']).tanh()), (None, 0))({'w': w, 'b': b}, X),
    'vjp w.r.t. an unbatched weight': lambda M, F, w, b, X: M.func.vmap(
        lambda x: M.func.vjp(lambda w: F.linear(x, w, b).sin(), w)[1](x[:2])[0])(X),
    'vjp closing over a batched input, two levels': lambda M, F, w, b, X: M.func.vmap(M.func.vmap(
        lambda x, y: M.func.vjp(lambda w: F.linear(x, w, b) * y, w)[1](y.expand(2))[0], (None, 0)), (0, None))(X, b.reshape(2, 1)),
}


@pytest.mark.parametrize('name', sorted(PER_SAMPLE))
def test_reverse_transforms_under_vmap_are_per_sample(name):
    def run(M):
        return PER_SAMPLE[name](M, *_per_sample_setup(M))
    assert plain(run(lg)) == plain(run(torch))
