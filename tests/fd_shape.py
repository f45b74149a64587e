"""A small float64 finite-difference checker and a torch-vs-leafgrad harness shared by
test_ops_shape.py and test_ops_indexing.py.

``check_case`` runs one table row in both libraries: forward values/dtypes/shapes and node
names, first derivatives (for a random upstream gradient), second derivatives (of
<grad, w> with respect to the inputs and to the upstream gradient, through create_graph),
and compares leafgrad's first derivative with central differences.
"""
import numpy as np
import torch

import leafgrad as lg


def _as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach()._data)


def node_name(t):
    fn = t.grad_fn
    return None if fn is None else fn.name().replace('torch::', 'leafgrad::')


def assert_close(lt, tt, what, rtol=1e-7, atol=1e-9):
    assert tuple(lt.shape) == tuple(tt.shape), (what, tuple(lt.shape), tuple(tt.shape))
    assert str(lt.dtype).split('.')[-1] == str(tt.dtype).split('.')[-1], (what, lt.dtype, tt.dtype)
    np.testing.assert_allclose(_np(lt), _np(tt), rtol=rtol, atol=atol, err_msg=what)


def _zeros_for_none(gs, like, m):
    return [g if g is not None else m.zeros_like(x) for g, x in zip(gs, like)]


def _run(m, fn, arrays, seed, grad):
    xs = [m.tensor(a.copy(), requires_grad=grad and a.dtype.kind == 'f') for a in arrays]
    outs = _as_list(fn(m, *xs))
    result = {'xs': xs, 'outs': outs}
    if not grad:
        return result
    diff = [o for o in outs if o.requires_grad]
    rng = np.random.default_rng(seed + 1)
    vs = [m.tensor(rng.standard_normal(tuple(o.shape)), requires_grad=True) for o in diff]
    wx = [xs[i] for i in range(len(xs)) if xs[i].requires_grad]
    gs = m.autograd.grad(diff, wx, vs, create_graph=True, allow_unused=True)
    gs = _zeros_for_none(list(gs), wx, m)
    ws = [m.tensor(rng.standard_normal(tuple(g.shape))) for g in gs]
    s = None
    for g, w in zip(gs, ws):
        if g.requires_grad:
            term = (g * w).sum()
            s = term if s is None else s + term
    gg = None
    if s is not None:
        gg = _zeros_for_none(list(m.autograd.grad(s, wx + vs, allow_unused=True)), wx + vs, m)
    result.update(vs=vs, gs=gs, gg=gg, wx=wx)
    return result


def numeric_vjp(fn, arrays, vs, eps=1e-6):
    """Central differences of sum(out_i * v_i) with respect to each float input (leafgrad)."""
    def loss(arrs):
        outs = [o for o in _as_list(fn(lg, *[lg.tensor(a) for a in arrs]))]
        outs = [o for o in outs if o.dtype.is_floating_point]
        return sum(float((np.asarray(o._data) * v).sum()) for o, v in zip(outs, vs))

    grads = []
    for i, a in enumerate(arrays):
        if a.dtype.kind != 'f':
            continue
        g = np.zeros_like(a)
        for j in range(a.size):
            plus = [b.copy() for b in arrays]
            minus = [b.copy() for b in arrays]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            g.reshape(-1)[j] = (loss(plus) - loss(minus)) / (2 * eps)
        grads.append(g)
    return grads


def check_case(fn, arrays, seed=0, grad=True, fd=True):
    arrays = [np.asarray(a) for a in arrays]
    lgr = _run(lg, fn, arrays, seed, grad)
    tr = _run(torch, fn, arrays, seed, grad)
    assert len(lgr['outs']) == len(tr['outs'])
    for i, (lo, to) in enumerate(zip(lgr['outs'], tr['outs'])):
        assert_close(lo, to, f'output {i}')
        assert node_name(lo) == node_name(to), (i, node_name(lo), node_name(to))
        assert lo.requires_grad == to.requires_grad, i
    if not grad:
        return
    for i, (lgg, tg) in enumerate(zip(lgr['gs'], tr['gs'])):
        assert_close(lgg, tg, f'grad {i}')
    assert (lgr['gg'] is None) == (tr['gg'] is None)
    if tr['gg'] is not None:
        for i, (lgg, tg) in enumerate(zip(lgr['gg'], tr['gg'])):
            assert_close(lgg, tg, f'second derivative {i}')
    if fd:
        vs = [_np(v) for v in lgr['vs']]
        num = numeric_vjp(fn, arrays, vs)
        for i, (lgg, n) in enumerate(zip(lgr['gs'], num)):
            np.testing.assert_allclose(_np(lgg), n, rtol=1e-5, atol=1e-6, err_msg=f'finite differences {i}')
