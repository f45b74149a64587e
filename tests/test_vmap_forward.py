"""vmap and forward mode nested in either order against torch.func: jvp, jacfwd and hessian
under vmap (batched primals, batched tangents, both), jvp of a vmapped function, two vmap
levels around a jvp, forward over reverse (hvp) under vmap."""
import warnings

import numpy as np
import pytest

from both import plain

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def _setup(M):
    M.manual_seed(0)
    F = M.nn.functional
    w, b = M.randn(5, 4, dtype=M.float64), M.randn(5, dtype=M.float64)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()
    return F, w, b, predict, M.randn(3, 4, dtype=M.float64), M.randn(3, 4, dtype=M.float64)


def _quiet(program):
    def run(M):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return program(M)
    return run


PROGRAMS = {
    'vmap(jvp) primals and tangents batched': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(
        lambda x, t: M.func.jvp(lambda a: f(w, b, a), (x,), (t,)))(X, T))(*_setup(M)),
    'vmap(jvp) tangents batched': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(
        lambda t: M.func.jvp(lambda a: f(w, b, a), (X[0],), (t,)))(T))(*_setup(M)),
    'vmap(jvp) primals batched': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(
        lambda x: M.func.jvp(lambda a: f(w, b, a), (x,), (T[0],)))(X))(*_setup(M)),
    'jvp(vmap)': lambda M: (lambda F, w, b, f, X, T: M.func.jvp(
        M.func.vmap(lambda a: f(w, b, a)), (X,), (T,)))(*_setup(M)),
    'vmap(vmap(jvp))': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(M.func.vmap(
        lambda x, t: M.func.jvp(lambda a: (a * a).sin().sum(), (x,), (t,))))(
        X.reshape(3, 2, 2), T.reshape(3, 2, 2)))(*_setup(M)),
    'vmap(jacfwd)': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(
        M.func.jacfwd(f, argnums=2), in_dims=(None, None, 0))(w, b, X))(*_setup(M)),
    'vmap(jacfwd) argnums 0 and 2': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(
        M.func.jacfwd(f, argnums=(0, 2)), in_dims=(None, None, 0))(w, b, X))(*_setup(M)),
    'vmap(hessian)': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(
        M.func.hessian(f, argnums=2), in_dims=(None, None, 0))(w, b, X))(*_setup(M)),
    'vmap(hvp)': lambda M: (lambda F, w, b, f, X, T: M.func.vmap(
        lambda x, t: M.func.jvp(M.func.grad(lambda a: a.sin().sum()), (x,), (t,)))(X, T))(*_setup(M)),
    'jvp of linear on a vector, then tanh': lambda M: (lambda F, w, b, f, X, T: M.func.jvp(
        lambda a: f(w, b, a), (X[0],), (T[0],)))(*_setup(M)),
    'jacfwd after vmap(jacfwd)': lambda M: (lambda F, w, b, f, X, T: (
        M.func.vmap(M.func.jacfwd(f, argnums=2), in_dims=(None, None, 0))(w, b, X),
        M.func.jacfwd(f, argnums=2)(w, b, X[0]), M.func.hessian(f, argnums=2)(w, b, X[1])))(*_setup(M)),
    # a vjp inside jacfwd: its backward walk carries the basis of tangents, batched where the
    # graph's tensors are not
    'jacfwd of a vjp': lambda M: (lambda F, w, b, f, X, T: M.func.jacfwd(
        lambda a: (lambda o, fn: fn(o.cos())[0] * a)(*M.func.vjp(lambda c: f(w, b, c), a)))(X[0]))(*_setup(M)),
}

# jacfwd under vmap carries the batch (one pass, no loop over the samples), also of a function
# closing over a batched tensor
JACFWD_UNDER_VMAP = {
    'closing over the batched input': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.jacfwd(lambda y: (x * y).sin())(x))(xs),
    'closing over it, differentiating an unbatched one': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.jacfwd(lambda y: (x.sum() * y).sin())(w))(xs),
    'hessian closing over it': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.hessian(lambda y: (x * y).sin().sum())(x))(xs),
    'with aux': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.jacfwd(lambda y: ((x * y).sin(), y.cos()), has_aux=True)(x))(xs),
    'two vmap levels': lambda M, xs, w: M.func.vmap(M.func.vmap(
        lambda x: M.func.jacfwd(lambda y: (x * y).sin())(x)))(xs.reshape(3, 2, 2)),
    'an unbatched argument': lambda M, xs, w: M.func.vmap(
        lambda x, v: M.func.jacfwd(lambda y: (x * y * v).sin())(x), in_dims=(0, None))(xs, w),
    'argnums 0 and 1': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.jacfwd(lambda a, b: (a * b).sin(), argnums=(0, 1))(x, w))(xs),
    'linear closing over it': lambda M, xs, w: M.func.vmap(lambda x: M.func.jacfwd(
        lambda y: M.nn.functional.linear(y, x.reshape(1, 4).expand(2, 4)).tanh())(w))(xs),
    'item of a sample of several elements': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.jacfwd(lambda y: y.item())(x))(xs),
    'item of a one-element sample': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.jacfwd(lambda y: y.sum().item())(x))(xs),
    'float of a sample of several elements': lambda M, xs, w: M.func.vmap(
        lambda x: M.func.jacfwd(lambda y: float(y))(x))(xs),
}


@pytest.mark.parametrize('name', sorted(JACFWD_UNDER_VMAP))
def test_jacfwd_under_vmap_carries_the_batch(name, monkeypatch):
    from leafgrad import _vmap

    def results(M):
        xs = M.tensor([[0.0, 0.1, 0.2, 0.3], [0.4, 0.5, 0.6, 0.7], [0.8, 0.9, 1.0, 1.1]], dtype=M.float64)
        w = M.tensor([0.0, 0.5, 1.0, 1.5], dtype=M.float64)
        try:
            return plain(JACFWD_UNDER_VMAP[name](M, xs, w))
        except Exception as e:
            return type(e), str(e).replace('torch', 'leafgrad')
    expected = results(torch)

    def refuse(*args, **kwargs):
        raise AssertionError('ran once per sample')
    monkeypatch.setattr(_vmap, '_loop', refuse)
    assert results(lg) == expected


@pytest.mark.parametrize('name', sorted(PROGRAMS))
def test_nesting_against_torch(name):
    program = _quiet(PROGRAMS[name])
    assert plain(program(lg)) == plain(program(torch))


def _conv_setup(M):
    rng = np.random.default_rng(0)
    w, b = M.tensor(rng.standard_normal((4, 3, 3, 3))), M.tensor(rng.standard_normal(4))
    X, TW, TX = (M.tensor(rng.standard_normal(s)) for s in ((3, 3, 6, 6), (2, 4, 3, 3, 3), (2, 3, 3, 6, 6)))
    F = M.nn.functional

    def f(x, w):
        return F.conv2d(x[None], w, b).tanh().sum((0, 2, 3)) * x.mean()
    return F, w, X, TW, TX, f


# jvp under vmap of tangents batched at levels their primals are not (the weight's tangent at
# another level than the input, as in the NTK-vector products): the forward rules meet the
# physical primals of one level and the tangents of another
TANGENTS_AT_OTHER_LEVELS = {
    "weight's tangent outer, input inner": lambda M, F, w, X, TW, TX, f: M.func.vmap(
        lambda tw: M.func.vmap(lambda x: M.func.jvp(lambda a: f(x, a), (w,), (tw,))[1])(X))(TW),
    "weight's tangent inner, input outer": lambda M, F, w, X, TW, TX, f: M.func.vmap(
        lambda x: M.func.vmap(lambda tw: M.func.jvp(lambda a: f(x, a), (w,), (tw,))[1])(TW))(X),
    "weight's tangent and input at one level": lambda M, F, w, X, TW, TX, f: M.func.vmap(
        lambda x, tw: M.func.jvp(lambda a: f(x, a), (w,), (tw,))[1])(X[:2], TW),
    "weight's tangent at levels 0 and 2, input at 1": lambda M, F, w, X, TW, TX, f: M.func.vmap(
        lambda t2: M.func.vmap(lambda x: M.func.vmap(lambda tw: M.func.jvp(lambda a: f(x, a), (w,), (tw,))[1])(
            t2))(X))(TW.unsqueeze(0).expand(2, 2, 4, 3, 3, 3) * M.tensor([1.0, -2.0]).reshape(2, 1, 1, 1, 1, 1)),
    "input's tangent at its level and another": lambda M, F, w, X, TW, TX, f: M.func.vmap(
        lambda tx: M.func.vmap(lambda x, t: M.func.jvp(lambda a: f(a, w), (x,), (t,))[1])(X, tx))(TX),
    "elementwise, the tangent at its primal's level and another": lambda M, F, w, X, TW, TX, f: M.func.vmap(
        lambda tx: M.func.vmap(lambda x, t: M.func.jvp(lambda a: a.sin() * a.sum(), (x,), (t,))[1])(X, tx))(TX),
}


@pytest.mark.parametrize('name', sorted(TANGENTS_AT_OTHER_LEVELS))
def test_tangents_batched_at_other_levels_than_their_primals(name):
    def run(M):
        return TANGENTS_AT_OTHER_LEVELS[name](M, *_conv_setup(M))
    assert plain(run(lg)) == plain(run(torch))


def _empirical_ntk(M):
    """PyTorch's tutorial 'Neural Tangent Kernels', small: the kernel by Jacobian contraction
    and by NTK-vector products (a jvp of a vjp's cotangents under two vmaps)."""
    rng = np.random.default_rng(0)
    net = M.nn.Sequential(M.nn.Conv2d(2, 3, 3), M.nn.ReLU(), M.nn.Conv2d(3, 2, 3), M.nn.Flatten(), M.nn.Linear(8, 3))
    params = {k: M.tensor(rng.standard_normal(tuple(v.shape)) * 0.3) for k, v in net.named_parameters()}
    x1, x2 = M.tensor(rng.standard_normal((2, 2, 6, 6))), M.tensor(rng.standard_normal((3, 2, 6, 6)))
    fn = M.func

    def fnet_single(params, x):
        return fn.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    jac1 = [j.flatten(2) for j in fn.vmap(fn.jacrev(fnet_single), (None, 0))(params, x1).values()]
    jac2 = [j.flatten(2) for j in fn.vmap(fn.jacrev(fnet_single), (None, 0))(params, x2).values()]
    by_contraction = M.stack([M.einsum('Naf,Mbf->NMab', a, b) for a, b in zip(jac1, jac2)]).sum(0)

    def get_ntk(x1, x2):
        output, vjp_fn = fn.vjp(lambda p: fnet_single(p, x1), params)

        def get_ntk_slice(vec):
            return fn.jvp(lambda p: fnet_single(p, x2), (params,), vjp_fn(vec))[1]
        return fn.vmap(get_ntk_slice)(M.eye(output.numel(), dtype=output.dtype))
    by_products = fn.vmap(fn.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    return by_contraction, by_products


def test_neural_tangent_kernel_tutorial_against_torch():
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # (no op runs once per sample)
        ours = _empirical_ntk(lg)
    theirs = _empirical_ntk(torch)
    assert plain(ours) == plain(theirs)
    assert plain(ours[0]) == plain(ours[1])


def test_vmap_of_jvp_of_complex_primals_through_conj():
    """conj batches elementwise (no per-sample fallback, no warning, as PyTorch's)."""
    def run(M):
        z = M.tensor([[1 + 1j, 2 - 1j], [0.5j, 3.0 + 0j]])
        with warnings.catch_warnings():
            warnings.simplefilter('error', UserWarning)
            return M.func.vmap(lambda a, t: M.func.jvp(lambda b: b.sin() * b.conj(), (a,), (t,)))(z, z * 1j)
    assert plain(run(lg)) == plain(run(torch))
