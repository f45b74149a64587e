"""autograd.functional and leafgrad.func against torch.autograd.functional and torch.func."""
import numpy as np
import pytest

from oracle import raises_like, same_message, to_np, torch
import leafgrad as lg
import leafgrad.autograd.functional as LF
import leafgrad.func as lfunc
import torch.autograd.functional as TF
import torch.func as tfunc

R = np.random.default_rng(0)
A = R.standard_normal((3, 2))
B = R.standard_normal(2)
V = R.standard_normal((3, 2))


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [y for x in r for y in _flat(x)]
    return [r]


def _structure(r):
    if isinstance(r, (tuple, list)):
        return tuple(_structure(x) for x in r)
    return 'T'


def _tensors(mod, arrays):
    ts = tuple(mod.tensor(a) for a in arrays)
    return ts[0] if len(ts) == 1 else ts


def run_both(name, f, arrays, v=None, **kw):
    out = []
    for mod, fm in ((lg, LF), (torch, TF)):
        args = [lambda *x, mod=mod: f(mod, *x), _tensors(mod, arrays)]
        if v is not None:
            args.append(_tensors(mod, v))
        out.append(getattr(fm, name)(*args, **kw))
    lres, tres = out
    assert _structure(lres) == _structure(tres)
    for a, b in zip(_flat(lres), _flat(tres)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-10, atol=1e-12)
        assert a.requires_grad == b.requires_grad
    return lres, tres


def f_scalar(m, x):
    return (x.exp() * x).sum()


def f_vec(m, x):
    return x.exp() * x


def f_two(m, x, y):
    return x.tanh() * y, (x * x).sum() + y.sum()


@pytest.mark.parametrize('create_graph', [False, True])
def test_vjp(create_graph):
    run_both('vjp', f_scalar, [A], create_graph=create_graph)
    run_both('vjp', f_vec, [A], [V], create_graph=create_graph)


@pytest.mark.parametrize('create_graph', [False, True])
def test_jvp_double_backward_trick(create_graph):
    run_both('jvp', f_vec, [A], [V], create_graph=create_graph)
    run_both('jvp', f_two, [A, B], [V, B], create_graph=create_graph)


@pytest.mark.parametrize('create_graph', [False, True])
def test_jacobian(create_graph):
    run_both('jacobian', f_vec, [A], create_graph=create_graph)
    run_both('jacobian', f_two, [A, B], create_graph=create_graph)
    # vectorize=True gives the same result (computed by the same loop here)
    run_both('jacobian', f_two, [A, B], vectorize=True)


def test_hessian():
    run_both('hessian', f_scalar, [A])
    run_both('hessian', lambda m, x, y: (x.sigmoid() * y).sum(), [A, B])
    lres, _ = run_both('hessian', f_scalar, [A], create_graph=True)
    assert lres.grad_fn is not None


@pytest.mark.parametrize('name', ['hvp', 'vhp'])
def test_hvp_vhp(name):
    run_both(name, f_scalar, [A], [V])
    run_both(name, lambda m, x, y: (x.sin() * y).sum(), [A, B], [V, B], create_graph=True)


def test_hvp_equals_hessian_times_v():
    x = lg.tensor(A)
    _, hv = LF.hvp(lambda t: f_scalar(lg, t), x, lg.tensor(V))
    H = LF.hessian(lambda t: f_scalar(lg, t), x)
    np.testing.assert_allclose(to_np(hv).reshape(6), to_np(H).reshape(6, 6) @ V.reshape(6), rtol=1e-10)


def test_results_stay_connected_with_create_graph():
    x = lg.tensor(A, requires_grad=True)
    _, g = LF.vjp(lambda t: f_scalar(lg, t), x, create_graph=True)
    g.sum().backward()
    tx = torch.tensor(A, requires_grad=True)
    _, tg = TF.vjp(lambda t: f_scalar(torch, t), tx, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), to_np(tx.grad), rtol=1e-10)


@pytest.mark.parametrize('call', [
    lambda F, m: F.vjp(lambda x: x * 2, m.ones(3)),
    lambda F, m: F.vjp(lambda x: x * 2, m.ones(3), m.ones(2)),
    lambda F, m: F.vjp(lambda x: m.ones(3), m.ones(3), m.ones(3), strict=True),
    lambda F, m: F.jacobian(lambda x: m.ones(1).sum(), m.ones(3), strict=True),
    lambda F, m: F.jacobian(lambda x, y: x * 2, (m.ones(3), m.ones(2)), strict=True),
    lambda F, m: F.hessian(lambda x: x * 2, m.ones(3)),
    lambda F, m: F.hessian(lambda x: (x * 2).sum(), m.ones(3), strict=True),
    lambda F, m: F.vjp(lambda x: x * 2, [1.0]),
    lambda F, m: F.hvp(lambda x: (x * x).sum(), (m.ones(3), m.ones(2)), (m.ones(3),)),
])
def test_errors_match_torch(call):
    m1, m2 = raises_like(lambda: call(LF, lg), lambda: call(TF, torch))
    assert same_message(m1, m2.replace("<class 'list'>", "<class 'list'>")), (m1, m2)


def _containers(r):
    return type(r).__name__ if not isinstance(r, (tuple, list)) else (type(r).__name__, tuple(map(_containers, r)))


@pytest.mark.parametrize('f, arrays', [(f_vec, [A]), (f_two, [A, B]), (lambda m, x, y: x.sum() * y, [A, B]),
                                       (lambda m, x: (x.sin(), x.exp().sum()), [A])])
def test_jacobian_forward_mode(f, arrays):
    """strategy='forward-mode' (vectorize=True): jacfwd over every input, PyTorch's values and
    its containers (lists, where reverse mode gives tuples)."""
    lres, tres = run_both('jacobian', f, arrays, vectorize=True, strategy='forward-mode')
    assert _containers(lres) == _containers(tres)


@pytest.mark.parametrize('f, arrays', [(f_scalar, [A]), (lambda m, x, y: (x.tanh() * y).sum(), [A, B])])
def test_hessian_forward_over_reverse(f, arrays):
    """outer_jacobian_strategy='forward-mode': forward mode over the reverse-mode gradient.
    (PyTorch's result requires grad, a graph left over from its batched tangents: values only.)"""
    mine = LF.hessian(lambda *x: f(lg, *x), _tensors(lg, arrays), vectorize=True, outer_jacobian_strategy='forward-mode')
    theirs = TF.hessian(lambda *x: f(torch, *x), _tensors(torch, arrays), vectorize=True,
                        outer_jacobian_strategy='forward-mode')
    assert _structure(mine) == _structure(theirs)
    for a, b in zip(_flat(mine), _flat(theirs)):
        np.testing.assert_allclose(to_np(a.detach()), to_np(b.detach()), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize('call', [
    lambda F, m: F.jacobian(lambda x: x ** 2, m.ones(2), strategy='forward-mode'),
    lambda F, m: F.jacobian(lambda x: x ** 2, m.ones(2), vectorize=True, strategy='forward-mode', create_graph=True),
    lambda F, m: F.jacobian(lambda x: x ** 2, m.ones(2), vectorize=True, strategy='forward-mode', strict=True),
    lambda F, m: F.jacobian(lambda x: x ** 2, m.ones(2), strategy='foo'),
    lambda F, m: F.hessian(lambda x: (x ** 3).sum(), m.ones(2), outer_jacobian_strategy='foo'),
])
def test_forward_mode_jacobian_errors_match_torch(call):
    m1, m2 = raises_like(lambda: call(LF, lg), lambda: call(TF, torch))
    assert same_message(m1, m2), (m1, m2)


# ---- leafgrad.func ---------------------------------------------------------------------------

def test_func_grad_and_nested_grad():
    x = np.array([0.3, -1.2, 2.0])
    lgx = lfunc.grad(lambda t: (t.sin() * t).sum())(lg.tensor(x))
    tgx = tfunc.grad(lambda t: (t.sin() * t).sum())(torch.tensor(x))
    np.testing.assert_allclose(to_np(lgx), to_np(tgx), rtol=1e-12)
    assert lgx.requires_grad is False and lgx.grad_fn is None
    l2 = lfunc.grad(lfunc.grad(lambda t: t ** 3))(lg.tensor(2.0))
    t2 = tfunc.grad(tfunc.grad(lambda t: t ** 3))(torch.tensor(2.0))
    assert l2.item() == t2.item() == 12.0


def test_func_grad_argnums_has_aux_and_grad_and_value():
    a, b = np.array([1.0, 2.0]), np.array([-0.5, 0.25])

    def f(x, y):
        return (x * y).exp().sum(), x * 2
    for argnums in (0, 1, (0, 1)):
        (lg_g, (lg_v, lg_aux)) = lfunc.grad_and_value(f, argnums=argnums, has_aux=True)(lg.tensor(a), lg.tensor(b))
        (t_g, (t_v, t_aux)) = tfunc.grad_and_value(f, argnums=argnums, has_aux=True)(torch.tensor(a), torch.tensor(b))
        for x, y in zip(_flat(lg_g) + [lg_v, lg_aux], _flat(t_g) + [t_v, t_aux]):
            np.testing.assert_allclose(to_np(x), to_np(y), rtol=1e-12)
            assert x.requires_grad == y.requires_grad
    g, aux = lfunc.grad(f, has_aux=True)(lg.tensor(a), lg.tensor(b))
    np.testing.assert_allclose(to_np(aux), a * 2)


def test_func_grad_dict_argument():
    params = {'w': np.array([1.0, 2.0]), 'b': np.array(0.5)}

    def loss(p, x, mod):
        return ((p['w'] * x).sum() + p['b']).tanh()
    lgp = lfunc.grad(lambda p, x: loss(p, x, lg))({k: lg.tensor(v) for k, v in params.items()}, lg.tensor([0.3, 0.1]))
    tp = tfunc.grad(lambda p, x: loss(p, x, torch))({k: torch.tensor(v) for k, v in params.items()},
                                                     torch.tensor([0.3, 0.1]))
    assert set(lgp) == set(tp)
    for k in tp:
        np.testing.assert_allclose(to_np(lgp[k]), to_np(tp[k]), rtol=1e-12)


def test_func_vjp():
    x = np.array([0.1, 0.2, 0.3])
    lo, lfn = lfunc.vjp(lambda t: t.exp() * t, lg.tensor(x))
    to, tfn = tfunc.vjp(lambda t: t.exp() * t, torch.tensor(x))
    np.testing.assert_allclose(to_np(lo), to_np(to))
    assert not lo.requires_grad
    (lv,), (tv,) = lfn(lg.ones(3, dtype=lg.float64)), tfn(torch.ones(3, dtype=torch.float64))
    np.testing.assert_allclose(to_np(lv), to_np(tv), rtol=1e-12)
    m1, m2 = raises_like(lambda: lfn(lg.ones(2, dtype=lg.float64)), lambda: tfn(torch.ones(2, dtype=torch.float64)))
    assert same_message(m1, m2)


@pytest.mark.parametrize('call', [
    lambda F, m: F.grad(lambda x: x * 2)(m.ones(3)),
    lambda F, m: F.grad(lambda x: x.sum(), argnums=2)(m.ones(3)),
    lambda F, m: F.grad(lambda x: x.sum(), has_aux=True)(m.ones(3)),
    lambda F, m: F.grad(lambda x: 3.0)(m.ones(3)),
    lambda F, m: F.grad(lambda x, y: (x * y).sum(), argnums=1)(m.ones(3), 2.0),
])
def test_func_errors_match_torch(call):
    m1, m2 = raises_like(lambda: call(lfunc, lg), lambda: call(tfunc, torch))
    assert same_message(m1, m2), (m1, m2)


@pytest.mark.parametrize('argnums', [0, 1, (0, 1)])
def test_func_jacrev_matches_torch(argnums):
    x, y = R.standard_normal(3), R.standard_normal(2)

    def g(x, y):
        return x.sin() * y.sum(), (x * x).sum() * y
    a = lfunc.jacrev(g, argnums=argnums)(lg.tensor(x), lg.tensor(y))
    b = tfunc.jacrev(g, argnums=argnums)(torch.tensor(x), torch.tensor(y))
    assert _structure(a) == _structure(b)
    for p, q in zip(_flat(a), _flat(b)):
        assert tuple(p.shape) == tuple(q.shape)
        np.testing.assert_allclose(to_np(p), to_np(q), rtol=1e-12)
        assert p.requires_grad == q.requires_grad


def test_func_hessian_matches_torch_and_functional():
    x, y = R.standard_normal(3), R.standard_normal(2)

    def f(x, y):
        return (x.sin() * x * y.sum()).sum()
    a = lfunc.hessian(f, argnums=(0, 1))(lg.tensor(x), lg.tensor(y))
    b = tfunc.hessian(f, argnums=(0, 1))(torch.tensor(x), torch.tensor(y))
    for p, q in zip(_flat(a), _flat(b)):
        np.testing.assert_allclose(to_np(p), to_np(q), rtol=1e-12)
    h = LF.hessian(f, (lg.tensor(x), lg.tensor(y)))
    for p, q in zip(_flat(a), _flat(h)):
        np.testing.assert_allclose(to_np(p), to_np(q), rtol=1e-12)


def test_func_jvp_matches_torch():
    x = np.linspace(-1, 1, 3)

    def f(a, b):
        return a.sin() * b, a.sum()
    res = []
    for mod, F in ((lg, lfunc), (torch, tfunc)):
        xs = (mod.tensor(x), mod.tensor(x * 2))
        ts = (mod.ones(3, dtype=mod.float64), mod.tensor(x))
        out, tan = F.jvp(f, xs, ts)
        const = F.jvp(lambda a: mod.ones(2, dtype=mod.float64), (xs[0],), (ts[0],))
        o2, t2, aux = F.jvp(lambda a: (a.exp(), a), (xs[0],), (ts[1],), has_aux=True)
        res.append(_flat(out) + _flat(tan) + _flat(const) + [o2, t2, aux])
    for a, b in zip(*res):
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-12)
        assert a.requires_grad == b.requires_grad


@pytest.mark.parametrize('call', [
    lambda F, m: F.jvp(lambda x: x.sin(), m.ones(3), m.ones(3)),
    lambda F, m: F.jvp(lambda x: x.sin(), (m.ones(3),), (m.ones(2),)),
    lambda F, m: F.jvp(lambda x: 3.0, (m.ones(3),), (m.ones(3),)),
])
def test_func_jvp_errors_match_torch(call):
    m1, m2 = raises_like(lambda: call(lfunc, lg), lambda: call(tfunc, torch))
    assert same_message(m1, m2), (m1, m2)


def test_func_jacfwd_equals_torch():
    x = np.linspace(-1, 1, 3)
    a = lfunc.jacfwd(lambda p, q: p.exp() * q, argnums=(0, 1))(lg.tensor(x), lg.tensor(x))
    b = tfunc.jacfwd(lambda p, q: p.exp() * q, argnums=(0, 1))(torch.tensor(x), torch.tensor(x))
    for p, q in zip(a, b):
        np.testing.assert_allclose(to_np(p), to_np(q), rtol=1e-12)


def test_func_transforms_compose_with_outer_autograd():
    """A closed-over tensor that requires grad keeps the transform's result connected (as
    torch.func composes with autograd); without one, the result is a plain tensor."""
    res = []
    for mod, F in ((lg, lfunc), (torch, tfunc)):
        y = mod.tensor([0.5, -1.0, 2.0], dtype=mod.float64, requires_grad=True)
        x = mod.tensor([1.0, 2.0, 3.0], dtype=mod.float64)
        g = F.grad(lambda t: (t.sin() * y * y).sum())(x)
        (g * g).sum().backward()
        _, fn = F.vjp(lambda t: t.exp() * y, x)
        (v,) = fn(mod.ones(3, dtype=mod.float64))
        j = F.jacrev(lambda t: t * t)(x)
        res.append((g, y.grad, v, j))
        assert g.requires_grad and v.requires_grad and not j.requires_grad
    for a, b in zip(*res):
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-12)
