"""A small float64 finite-difference checker for the nn and linalg tests.

Rather than a full Jacobian, it checks directional derivatives: for random directions d and a
random output weighting u, the central difference of <u, f(x + h d)> against <grad, d> from
leafgrad's backward. Cheap (two forward calls per direction), and it cannot pass by accident
unless the gradient is right along every sampled direction.
"""
import numpy as np

import leafgrad as lg


def _scalar(out, weights):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    total = 0.0
    for o, w in zip(outs, weights):
        if w is not None:
            total += float((np.asarray(o.detach()._data, dtype=np.float64) * w).sum())
    return total


def check_directional(fn, arrays, grad_mask, *, eps=1e-6, directions=3, rtol=1e-5, atol=1e-7, seed=0):
    """fn(*tensors) -> tensor (or tuple); arrays: float64/int inputs; grad_mask: which need grad."""
    rng = np.random.default_rng(seed)
    ts = [lg.tensor(a, requires_grad=m) for a, m in zip(arrays, grad_mask)]
    out = fn(*ts)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    weights = [rng.standard_normal(tuple(o.shape)) if o.requires_grad else None for o in outs]
    loss = None
    for o, w in zip(outs, weights):
        if w is not None:
            term = (o * lg.tensor(w)).sum()
            loss = term if loss is None else loss + term
    wrt = [t for t, m in zip(ts, grad_mask) if m]
    grads = lg.autograd.grad(loss, wrt, allow_unused=True)
    grads = [np.zeros(t.shape) if g is None else g.numpy() for t, g in zip(wrt, grads)]
    for _ in range(directions):
        dirs = [rng.standard_normal(a.shape) if m else None for a, m in zip(arrays, grad_mask)]
        plus = [a + eps * d if d is not None else a for a, d in zip(arrays, dirs)]
        minus = [a - eps * d if d is not None else a for a, d in zip(arrays, dirs)]
        with lg.no_grad():
            fp = _scalar(fn(*[lg.tensor(a) for a in plus]), weights)
            fm = _scalar(fn(*[lg.tensor(a) for a in minus]), weights)
        numeric = (fp - fm) / (2 * eps)
        analytic = sum(float((g * d).sum()) for g, d in zip(grads, [d for d in dirs if d is not None]))
        assert abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic), 1.0), \
            f'directional derivative: finite differences {numeric!r}, backward {analytic!r}'


def check_second_directional(fn, arrays, grad_mask, *, eps=1e-6, rtol=1e-4, atol=1e-6, seed=0):
    """The gradient of <grad f, v> (a Hessian-vector product) against finite differences of the
    gradient itself along a random direction."""
    rng = np.random.default_rng(seed)
    idx = [i for i, m in enumerate(grad_mask) if m]

    def grads_at(arrs, create_graph=False):
        ts = [lg.tensor(a, requires_grad=m) for a, m in zip(arrs, grad_mask)]
        out = fn(*ts)
        out = out[0] if isinstance(out, (tuple, list)) else out
        w = np.random.default_rng(seed + 1).standard_normal(tuple(out.shape))
        gs = lg.autograd.grad((out * lg.tensor(w)).sum(), [ts[i] for i in idx], create_graph=create_graph,
                              allow_unused=True)
        return ts, gs

    v = [rng.standard_normal(arrays[i].shape) for i in idx]
    ts, gs = grads_at(arrays, create_graph=True)
    terms = [(g * lg.tensor(vi)).sum() for g, vi in zip(gs, v) if g is not None and g.requires_grad]
    if not terms:
        return
    hv = lg.autograd.grad(sum(terms[1:], terms[0]), [ts[i] for i in idx], allow_unused=True)
    hv = [np.zeros(ts[i].shape) if h is None else h.numpy() for i, h in zip(idx, hv)]
    d = [rng.standard_normal(arrays[i].shape) for i in idx]
    plus, minus = list(arrays), list(arrays)
    for k, i in enumerate(idx):
        plus[i] = arrays[i] + eps * d[k]
        minus[i] = arrays[i] - eps * d[k]
    gp = [g.detach().numpy() if g is not None else 0 for g in grads_at(plus)[1]]
    gm = [g.detach().numpy() if g is not None else 0 for g in grads_at(minus)[1]]
    numeric = sum(float(((a - b) / (2 * eps) * vi).sum()) for a, b, vi in zip(gp, gm, v))
    analytic = sum(float((h * dk).sum()) for h, dk in zip(hv, d))
    assert abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic), 1.0), \
        f'second directional derivative: finite differences {numeric!r}, double backward {analytic!r}'
