"""F.linear of a matrix, recorded as PyTorch records it (``weight.t()``'s TBackward0, then
AddmmBackward0, or MmBackward0 without a bias): node names and edges, which factors are saved,
gradients, the version check of a saved weight changed in place, and dtypes that take the ops'
own checks (the general path)."""
import numpy as np
import pytest

from oracle import assert_same, pair, raises_like, same_message, to_np, torch, torch_part
import leafgrad as lg


def name_tree(fn):
    if fn is None:
        return None
    return (fn.name().replace('torch::', 'leafgrad::'), tuple(name_tree(n) for n, _ in fn.next_functions))


def saved_slots(fn):
    """Which of a product node's factors are saved (None where not), and their shapes."""
    return tuple(None if getattr(fn, name) is None else tuple(getattr(fn, name).shape)
                 for name in ('_saved_mat1', '_saved_mat2', '_saved_self') if hasattr(fn, name))


CASES = [(x_grad, w_grad, bias, b_grad, layout, dtype)
         for x_grad in (False, True) for w_grad in (False, True) for bias in (False, True)
         for b_grad in ((False, True) if bias else (False,)) for layout in ('c', 'f')
         for dtype in (np.float32, np.float64)]


def _operands(x_grad, w_grad, bias, b_grad, layout, dtype):
    r = np.random.default_rng(0)
    x = r.standard_normal((4, 3)).astype(dtype)
    if layout == 'f':
        x = np.asfortranarray(x)
    lx, tx = pair(x, x_grad)
    lw, tw = pair(r.standard_normal((5, 3)).astype(dtype), w_grad)
    lb, tb = pair(r.standard_normal(5).astype(dtype), b_grad) if bias else (None, None)
    return (lx, lw, lb), (tx, tw, tb)


@pytest.mark.parametrize('x_grad,w_grad,bias,b_grad,layout,dtype', CASES)
def test_graph_saved_and_gradients_match_torch(x_grad, w_grad, bias, b_grad, layout, dtype):
    (lx, lw, lb), (tx, tw, tb) = _operands(x_grad, w_grad, bias, b_grad, layout, dtype)
    ly, ty = lg.nn.functional.linear(lx, lw, lb), torch.nn.functional.linear(tx, tw, tb)
    assert_same(ly, ty)
    assert ly.requires_grad == ty.requires_grad
    if ty.grad_fn is None:
        assert ly.grad_fn is None
        return
    assert name_tree(ly.grad_fn) == name_tree(ty.grad_fn)
    assert saved_slots(ly.grad_fn) == saved_slots(ty.grad_fn)
    g = np.random.default_rng(1).standard_normal((4, 5)).astype(dtype)
    ly.backward(lg.tensor(g))
    ty.backward(torch.tensor(g))
    for l, t in ((lx, tx), (lw, tw), (lb, tb)):
        if t is not None and t.requires_grad:
            assert_same(l.grad, t.grad)
            assert l.grad._data.strides == tuple(s * t.grad.element_size() for s in t.grad.stride())


def test_saved_weight_changed_in_place_fails_as_torch():
    def run(mod):
        r = np.random.default_rng(0)
        x = mod.tensor(r.standard_normal((4, 3)), requires_grad=True)
        w = mod.tensor(r.standard_normal((5, 3)), requires_grad=True)
        y = mod.nn.functional.linear(x, w, mod.zeros(5))
        with mod.no_grad():
            w.mul_(2)
        y.sum().backward()
    lg_msg, torch_msg = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(lg_msg, torch_msg)


def test_a_weight_used_twice_sums_its_gradients():
    """An RNN's weight, applied at every step: one TBackward0 per use, their sum in .grad."""
    def run(mod):
        r = np.random.default_rng(0)
        w = mod.tensor(r.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
        b = mod.tensor(r.standard_normal(3).astype(np.float32), requires_grad=True)
        h = mod.tensor(r.standard_normal((2, 3)).astype(np.float32))
        for _ in range(4):
            h = mod.tanh(mod.nn.functional.linear(h, w, b) + mod.nn.functional.linear(h, w))
        h.sum().backward()
        return w.grad, b.grad
    for l, t in zip(run(lg), run(torch)):
        assert_same(l, t)


@pytest.mark.parametrize('dtypes', [('float32', 'float64', 'float32'), ('float64', 'float32', 'float64'),
                                    ('float32', 'float32', 'float64'), ('float16', 'float16', 'float16')])
def test_other_dtypes_take_the_ops_checks(dtypes):
    """Operands of different dtypes (or of a dtype the matrix path leaves to the ops): the ops'
    own outcome, PyTorch's error or result."""
    r = np.random.default_rng(0)
    arrays = [r.standard_normal((4, 3)).astype(dtypes[0]), r.standard_normal((5, 3)).astype(dtypes[1]),
              r.standard_normal(5).astype(dtypes[2])]

    def run(mod):
        return mod.nn.functional.linear(*[mod.tensor(a) for a in arrays])
    try:
        expected = run(torch)
    except RuntimeError:
        lg_msg, torch_msg = raises_like(lambda: run(lg), lambda: run(torch))
        assert same_message(lg_msg, torch_msg)
        return
    np.testing.assert_allclose(to_np(run(lg)), to_np(expected), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize('bias_shape', [(1,), (4, 5), (5,)])
def test_bias_broadcast_as_torch(bias_shape):
    r = np.random.default_rng(0)
    (lx, tx), (lw, tw) = pair(r.standard_normal((4, 3)), True), pair(r.standard_normal((5, 3)), True)
    lb, tb = pair(r.standard_normal(bias_shape), True)
    ly, ty = lg.nn.functional.linear(lx, lw, lb), torch.nn.functional.linear(tx, tw, tb)
    assert_same(ly, ty)
    assert name_tree(ly.grad_fn) == name_tree(ty.grad_fn)
    ly.sum().backward()
    ty.sum().backward()
    for l, t in ((lx, tx), (lw, tw), (lb, tb)):
        assert_same(l.grad, t.grad)


def test_saved_weight_view_and_its_history_as_torch():
    """``grad_fn._saved_mat2`` is ``weight.t()`` as PyTorch saves it: a view of the weight (same
    values, shape, strides, ``_base``) whose grad_fn is the TBackward0 on the graph's edge, the
    same tensor at each access; after ``w.add_(1)`` under no_grad both the saved view and the
    backward fail with PyTorch's message (the view's history regenerated: AsStrided), and,
    changed back with a new version, gradients (retain_graph, create_graph) agree."""
    def run(mod, bias):
        r = np.random.default_rng(0)
        x = mod.tensor(r.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
        w = mod.tensor(r.standard_normal((5, 3)).astype(np.float32), requires_grad=True)
        b = mod.tensor(r.standard_normal(5).astype(np.float32), requires_grad=True) if bias else None
        y = mod.nn.functional.linear(x, w, b)
        fn = y.grad_fn
        t_node = fn.next_functions[-1][0]
        saved = fn._saved_mat2
        facts = dict(names=name_tree(fn), saved=saved.detach().numpy() if mod is torch else to_np(saved),
                     shape=tuple(saved.shape), strides=saved.stride(), base=saved._base is w,
                     history=(saved.grad_fn is t_node, saved.grad_fn.name(), saved is fn._saved_mat2,
                              saved._version, saved.requires_grad, saved.is_leaf),
                     leaf=t_node.next_functions[0][0].variable is w)
        with mod.no_grad():
            w.add_(1)
        facts['saved_after'] = (saved.grad_fn.name(), saved.grad_fn is t_node, saved._version)
        for what in (lambda: fn._saved_mat2, lambda: y.sum().backward(retain_graph=True)):
            try:
                what()
            except RuntimeError as e:
                facts.setdefault('errors', []).append(torch_part(str(e)).replace('leafgrad', 'torch'))
        x2 = mod.nn.functional.linear(x, w, b)  # (a fresh graph on the changed weight)
        (x2 * x2).sum().backward(retain_graph=True)
        (x2 * x2).sum().backward()
        gx, gw = mod.autograd.grad(mod.nn.functional.linear(x, w, b).pow(2).sum(), (x, w), create_graph=True)
        (gx.sum() + gw.pow(2).sum()).backward()
        facts['grads'] = [t.grad.numpy() if mod is torch else to_np(t.grad) for t in (x, w, b) if t is not None]
        return facts
    for bias in (True, False):
        lf, tf = run(lg, bias), run(torch, bias)
        assert lf.keys() == tf.keys()
        for key in lf:
            if key in ('saved', 'grads'):
                for l, t in zip(lf[key] if key == 'grads' else [lf[key]], tf[key] if key == 'grads' else [tf[key]]):
                    np.testing.assert_allclose(l, t, rtol=1e-5, atol=1e-5)
            else:
                assert lf[key] == tf[key], (key, lf[key], tf[key])
        assert len(lf['errors']) == 2 and 'output 0 of AsStrided, is at version 1' in lf['errors'][0]
