"""The generic half of the op tests: input generators, the Case row, and the checks every
row gets (forward vs torch, node name, first and second derivatives vs torch, finite
differences through leafgrad.autograd.gradcheck). Each test file holds one table of Case rows
and parametrizes these checks; without torch only the finite differences run."""
import numpy as np
import pytest

import leafgrad as lg

try:
    import torch
except ImportError:  # the finite-difference checks need no oracle
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason='needs the torch oracle')



# ---- input generators -------------------------------------------------------------------------
# r: normal; p: positive; u: in (-0.9, 0.9); z: normal, away from 0; g: > 1.2; s: normal * 4
# (reaching the kinks of hardtanh/relu6/hardswish); t: small whole numbers (ties); o, w: normal with
# one or two zeros; i: small integers; b: bool

def make(kind, shape, rng):
    if kind == 'r':
        return rng.standard_normal(shape)
    if kind == 'p':
        return rng.uniform(0.5, 2.0, shape)
    if kind == 'u':
        return rng.uniform(-0.9, 0.9, shape)
    if kind == 'z':
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    if kind == 'g':
        return rng.uniform(1.2, 3.0, shape)
    if kind == 's':
        return rng.standard_normal(shape) * 4
    if kind == 't':  # many ties
        return rng.integers(0, 3, shape).astype(np.float64)
    if kind in 'ow':  # normal with one ('o') or two ('w') zeros
        a = rng.standard_normal(shape)
        if a.size:
            a.reshape(-1)[rng.choice(a.size, 1 if kind == 'o' or a.size < 2 else 2, replace=False)] = 0
        return a
    if kind == 'i':
        return rng.integers(-5, 6, shape)
    if kind == 'b':
        return rng.random(shape) > 0.5
    raise ValueError(kind)


class Case:
    """One row: ``fn(T, *xs)`` runs with T = leafgrad or torch; ``kinds`` one generator letter
    per tensor argument; ``shapes`` the list of shape tuples to run; ``grad``/``gradgrad``/``fd``
    whether to compare derivatives / second derivatives / finite differences; ``ints`` whether
    to run the forward on integer inputs too."""

    def __init__(self, name, fn, kinds, shapes, grad=True, gradgrad=True, ints=False, fd=True):
        self.name, self.fn, self.kinds, self.shapes = name, fn, kinds, shapes
        self.grad, self.gradgrad, self.ints, self.fd = grad, gradgrad, ints, fd

    def __repr__(self):
        return self.name


def _inputs(case, shapes, rng, dtype):
    arrays = []
    for kind, shape in zip(case.kinds, shapes):
        a = make(kind, shape, rng)
        if a.dtype.kind == 'f':
            a = a.astype(dtype)
        arrays.append(a)
    return arrays


def _pair(arrays, requires_grad=False):
    lgs = [lg.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == 'f') for a in arrays]
    ths = [torch.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == 'f') for a in arrays]
    return lgs, ths


def _outs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _np(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _same(a, b, atol, rtol=1e-5, what=''):
    assert tuple(a.shape) == tuple(b.shape), (what, a.shape, b.shape)
    assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1], (what, a.dtype, b.dtype)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _id(case, shapes):
    return f'{case.name}-{"x".join(str(list(s)) for s in shapes)}'


def params(cases, which='all'):
    """pytest params (case, shapes): every shape set; 'grad': of differentiable rows; 'fd': the
    first two shape sets of rows checked by finite differences."""
    out = []
    for case in cases:
        if which != 'all' and not case.grad:
            continue
        if which == 'fd' and not case.fd:
            continue
        for shapes in (case.shapes[:2] if which == 'fd' else case.shapes):
            out.append(pytest.param(case, shapes, id=_id(case, shapes)))
    return out


def _float_outs(outs):
    return [o for o in outs if o.dtype.is_floating_point]


def check_forward(case, shapes):
    """Values, dtype and shape of every output vs torch: float32 inputs, then integer ones."""
    rng = np.random.default_rng(1)
    with np.errstate(all='ignore'):
        a = _inputs(case, shapes, rng, np.float32)
        lx, tx = _pair(a)
        lo, to = _outs(case.fn(lg, *lx)), _outs(case.fn(torch, *tx))
        assert len(lo) == len(to)
        for l, t in zip(lo, to):
            _same(l, t, atol=1e-5, what='float32 forward')
        if case.ints:
            a = [np.round(x * 3).astype(np.int64) if x.dtype.kind == 'f' else x for x in a]
            lx, tx = _pair(a)
            for l, t in zip(_outs(case.fn(lg, *lx)), _outs(case.fn(torch, *tx))):
                _same(l, t, atol=1e-5, what='integer forward')


def _weighted_sum(outs, weights):
    total = None
    for o, w in zip(outs, weights):
        with np.errstate(invalid='ignore'):  # outputs of -inf (logsumexp of nothing) sum to NaN
            s = (o * w).sum()
        total = s if total is None else total + s
    return total


def check_derivatives(case, shapes):
    """float64: node names, first derivatives of a randomly weighted sum of the outputs, and
    second derivatives (the gradient of a weighted sum of the create_graph gradients)."""
    rng = np.random.default_rng(2)
    a = _inputs(case, shapes, rng, np.float64)
    lx, tx = _pair(a, requires_grad=True)
    lo, to = _outs(case.fn(lg, *lx)), _outs(case.fn(torch, *tx))
    for l, t in zip(lo, to):
        _same(l, t, atol=1e-9, what='float64 forward')
        if t.grad_fn is not None:
            assert l.grad_fn is not None and l.grad_fn.name() == t.grad_fn.name(), (l.grad_fn, t.grad_fn)
        else:
            assert l.grad_fn is None, l.grad_fn
    lo, to = _float_outs(lo), _float_outs(to)
    w = [rng.standard_normal(t.shape) for t in to]
    ls = _weighted_sum(lo, [lg.tensor(x) for x in w])
    ts = _weighted_sum(to, [torch.tensor(x) for x in w])
    l_inputs = [x for x in lx if x.requires_grad]
    t_inputs = [x for x in tx if x.requires_grad]
    lg_g = lg.autograd.grad(ls, l_inputs, create_graph=True, allow_unused=True)
    th_g = torch.autograd.grad(ts, t_inputs, create_graph=True, allow_unused=True)
    for l, t in zip(lg_g, th_g):
        if t is None:
            assert l is None or not np.any(_np(l)), l
            continue
        _same(l, t, atol=1e-9, what='first derivative')
    if not case.gradgrad:
        return
    v = [rng.standard_normal(x.shape) for x in t_inputs]
    l2 = [(g * lg.tensor(x)).sum() for g, x in zip(lg_g, v) if g is not None and g.requires_grad]
    t2 = [(g * torch.tensor(x)).sum() for g, x in zip(th_g, v) if g is not None and g.requires_grad]
    assert len(l2) == len(t2), 'which first derivatives are differentiable differs from torch'
    if not t2:
        return
    lg_gg = lg.autograd.grad(sum(l2[1:], l2[0]), l_inputs, allow_unused=True)
    th_gg = torch.autograd.grad(sum(t2[1:], t2[0]), t_inputs, allow_unused=True)
    for l, t in zip(lg_gg, th_gg):
        ln = np.zeros(1) if l is None else _np(l)
        tn = np.zeros(1) if t is None else _np(t)
        shape = np.broadcast_shapes(ln.shape, tn.shape)
        np.testing.assert_allclose(np.broadcast_to(ln, shape), np.broadcast_to(tn, shape), rtol=1e-5, atol=1e-8,
                                   err_msg='second derivative')


def check_finite_differences(case, shapes):
    """float64 Jacobians (first, and second unless gradgrad=False) against central differences:
    leafgrad.autograd.gradcheck and gradgradcheck. Needs no torch."""
    rng = np.random.default_rng(3)
    a = _inputs(case, shapes, rng, np.float64)
    xs = [lg.tensor(x, requires_grad=True) if x.dtype.kind == 'f' else lg.tensor(x) for x in a]

    def fn(*args):
        return case.fn(lg, *args)
    assert lg.autograd.gradcheck(fn, xs)
    if case.gradgrad:
        assert lg.autograd.gradgradcheck(fn, xs, atol=1e-4)


# ---- rows given as data: the shape and indexing tables ---------------------------------------
# ``check_case(fn, arrays)`` runs ``fn(T, *tensors)`` on the given float64/integer arrays (index
# tensors, masks) rather than generated ones, and compares with torch forward values and node
# names, first derivatives for a random upstream gradient, and second derivatives with respect
# to the inputs and to that upstream gradient; then gradcheck of leafgrad's first derivatives.

def node_name(t):
    fn = t.grad_fn
    return None if fn is None else fn.name().replace('torch::', 'leafgrad::')


def _close(lt, tt, what, rtol=1e-7, atol=1e-9):
    _same(lt, tt, atol=atol, rtol=rtol, what=what)


def _zeros_for_none(gs, like, T):
    return [g if g is not None else T.zeros_like(x) for g, x in zip(gs, like)]


def _run_row(T, fn, arrays, seed, grad):
    xs = [T.tensor(a.copy(), requires_grad=grad and a.dtype.kind == 'f') for a in arrays]
    outs = _outs(fn(T, *xs))
    result = {'xs': xs, 'outs': outs}
    if not grad:
        return result
    diff = [o for o in outs if o.requires_grad]
    rng = np.random.default_rng(seed + 1)
    vs = [T.tensor(rng.standard_normal(tuple(o.shape)), requires_grad=True) for o in diff]
    wx = [x for x in xs if x.requires_grad]
    gs = _zeros_for_none(list(T.autograd.grad(diff, wx, vs, create_graph=True, allow_unused=True)), wx, T)
    ws = [T.tensor(rng.standard_normal(tuple(g.shape))) for g in gs]
    s = None
    for g, w in zip(gs, ws):
        if g.requires_grad:
            term = (g * w).sum()
            s = term if s is None else s + term
    gg = None
    if s is not None:
        gg = _zeros_for_none(list(T.autograd.grad(s, wx + vs, allow_unused=True)), wx + vs, T)
    result.update(vs=vs, gs=gs, gg=gg)
    return result


def check_case(fn, arrays, seed=0, grad=True, fd=True, names=True):
    """One data row against torch, then (``fd``) leafgrad's gradcheck of it; ``names``: compare
    the outputs' node names too."""
    arrays = [np.asarray(a) for a in arrays]
    lgr, tr = _run_row(lg, fn, arrays, seed, grad), _run_row(torch, fn, arrays, seed, grad)
    assert len(lgr['outs']) == len(tr['outs'])
    for i, (lo, to) in enumerate(zip(lgr['outs'], tr['outs'])):
        _close(lo, to, f'output {i}')
        assert not names or node_name(lo) == node_name(to), (i, node_name(lo), node_name(to))
        assert lo.requires_grad == to.requires_grad, i
    if not grad:
        return
    for i, (lgg, tg) in enumerate(zip(lgr['gs'], tr['gs'])):
        _close(lgg, tg, f'grad {i}')
    assert (lgr['gg'] is None) == (tr['gg'] is None)
    if tr['gg'] is not None:
        for i, (lgg, tg) in enumerate(zip(lgr['gg'], tr['gg'])):
            _close(lgg, tg, f'second derivative {i}')
    if fd and any(a.dtype.kind == 'f' for a in arrays):
        xs = [lg.tensor(a.copy(), requires_grad=a.dtype.kind == 'f') for a in arrays]
        assert lg.autograd.gradcheck(lambda *ts: fn(lg, *ts), xs, atol=1e-6, rtol=1e-5)



# ---- large inputs: gradcheck's fast mode ------------------------------------------------------

def check_fast(fn, arrays, grad_mask, first=True, second=False, rtol=1e-5, atol=1e-7):
    """float64 first and (``second``) second derivatives of ``fn(*tensors)`` at ``arrays`` by
    gradcheck/gradgradcheck in fast mode (one v^T J u per output and input): for the nn and
    linalg tables, whose inputs are too large for full Jacobians. ``grad_mask``: which inputs
    require grad. Needs no torch."""
    ts = [lg.tensor(np.array(a, copy=True), requires_grad=m) for a, m in zip(arrays, grad_mask)]
    if first:
        assert lg.autograd.gradcheck(fn, ts, fast_mode=True, rtol=rtol, atol=atol)
    if second:
        assert lg.autograd.gradgradcheck(fn, ts, fast_mode=True, rtol=rtol * 10, atol=atol * 10)


def method_refusal_messages(call):
    """The TypeErrors of ``call`` (an expression of ``x``, a 2x2 tensor) in leafgrad and in torch,
    for the methods that take no out= (PyTorch's methods never do)."""
    messages = []
    for T in (lg, torch):
        with pytest.raises(TypeError) as info:
            eval(call, {'x': T.tensor([[1.0, 2.0], [0.5, 3.0]])})
        messages.append(str(info.value))
    return messages
