"""Custom autograd.Function against torch: values, gradients, node names, ctx features,
double backward, and the errors PyTorch raises for malformed backwards."""
import warnings

import numpy as np
import pytest

from oracle import assert_same, pair, raises_like, same_message, to_np, torch, torch_part  # noqa: F401
import leafgrad as lg
from leafgrad.autograd import Function, gradcheck, gradgradcheck, once_differentiable


def make(mod, name, forward, backward, setup_context=None):
    """The same Function class for leafgrad (mod=lg) and torch (mod=torch)."""
    body = {'forward': staticmethod(forward), 'backward': staticmethod(backward)}
    if setup_context is not None:
        body['setup_context'] = staticmethod(setup_context)
    return type(name, (mod.autograd.Function,), body)


def both(name, forward, backward, setup_context=None):
    return make(lg, name, forward, backward, setup_context), make(torch, name, forward, backward, setup_context)


def _scaled_exp_fwd(ctx, x, k):
    y = x.exp() * k
    ctx.save_for_backward(y)
    ctx.k = k
    return y


def _scaled_exp_bwd(ctx, g):
    (y,) = ctx.saved_tensors
    return g * y, None


def test_forward_backward_non_tensor_arg_and_node_name():
    L, T = both('ScaledExp', _scaled_exp_fwd, _scaled_exp_bwd)
    a = np.random.default_rng(1).standard_normal((2, 3))
    lx, tx = pair(a, requires_grad=True)
    ly, ty = L.apply(lx, 2.5), T.apply(tx, 2.5)
    assert_same(ly, ty)
    assert ly.grad_fn.name() == ty.grad_fn.name() == 'ScaledExpBackward'
    assert type(ly.grad_fn).__name__ == type(ty.grad_fn).__name__
    assert len(ly.grad_fn.next_functions) == len(ty.grad_fn.next_functions) == 1
    assert ly.grad_fn.next_functions[0][0].variable is lx
    assert repr(ly.grad_fn).startswith('<leafgrad.autograd.function.ScaledExpBackward object at')
    assert repr(ty.grad_fn).startswith('<torch.autograd.function.ScaledExpBackward object at')
    assert ly.grad_fn.k == ty.grad_fn.k == 2.5
    (ly * ly).sum().backward()
    (ty * ty).sum().backward()
    assert_same(lx.grad, tx.grad)
    assert 'grad_fn=<ScaledExpBackward>' in repr(ly)


def test_setup_context_style():
    def forward(x, y):
        return x * y + y

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, g * (x + 1)
    L, T = both('MulAdd', forward, backward, setup_context)
    r = np.random.default_rng(2)
    lx, tx = pair(r.standard_normal(4), True)
    ly, ty = pair(r.standard_normal(4), True)
    lo, to = L.apply(lx, ly), T.apply(tx, ty)
    assert_same(lo, to)
    assert lo.grad_fn.name() == to.grad_fn.name() == 'MulAddBackward'
    lo.sum().backward()
    to.sum().backward()
    assert_same(lx.grad, tx.grad)
    assert_same(ly.grad, ty.grad)


@pytest.mark.parametrize('materialize', [True, False])
def test_multiple_outputs_and_materialize_grads(materialize):
    seen = {}

    def forward(ctx, x):
        ctx.set_materialize_grads(materialize)
        return x * 2, x * 3

    def backward(ctx, g1, g2):
        seen.setdefault(type(g1).__module__.split('.')[0], (g1, g2))
        out = g1 * 2
        if g2 is not None:
            out = out + g2 * 3
        return out
    L, T = both('TwoOut', forward, backward)
    lx, tx = pair([1.0, 2.0, 3.0], True)
    la, lb = L.apply(lx)
    ta, tb = T.apply(tx)
    assert la.grad_fn is lb.grad_fn and la.output_nr == 0 and lb.output_nr == 1
    assert ta.output_nr == 0 and tb.output_nr == 1
    la.sum().backward()
    ta.sum().backward()
    assert_same(lx.grad, tx.grad)
    lg_g2, t_g2 = seen['leafgrad'][1], seen['torch'][1]
    if materialize:
        assert_same(lg_g2, t_g2)  # zeros of the output's shape and dtype
    else:
        assert lg_g2 is None and t_g2 is None


def test_mark_non_differentiable_and_integer_outputs():
    def forward(ctx, x):
        idx = (x.detach() > 0).long()
        half = x.detach() * 0.5
        ctx.mark_non_differentiable(half)
        return x * 2, idx, half

    def backward(ctx, g, gi, gh):
        return g * 2
    L, T = both('Split', forward, backward)
    lx, tx = pair([1.0, -2.0], True)
    lo, to = L.apply(lx), T.apply(tx)
    for a, b in zip(lo, to):
        assert_same(a, b)
        assert a.requires_grad == b.requires_grad
        assert (a.grad_fn is None) == (b.grad_fn is None)
    lo[0].sum().backward()
    to[0].sum().backward()
    assert_same(lx.grad, tx.grad)


def test_mark_dirty_in_place():
    def forward(ctx, x):
        ctx.mark_dirty(x)
        x.mul_(3)
        return x

    def backward(ctx, g):
        return g * 3
    L, T = both('Triple', forward, backward)
    lx, tx = pair([1.0, 2.0], True)
    ly, ty = lx * 1, tx * 1  # non-leaf, so it may be modified in place
    lo, to = L.apply(ly), T.apply(ty)
    assert lo is ly and to is ty
    assert ly.grad_fn.name() == ty.grad_fn.name() == 'TripleBackward'
    assert ly._version == ty._version == 2
    assert_same(lo, to)
    lo.sum().backward()
    to.sum().backward()
    assert_same(lx.grad, tx.grad)


def test_mark_dirty_not_returned_raises_like_torch():
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x * 2

    L, T = both('Bad', forward, lambda ctx, g: g)
    lx, tx = pair([1.0, 2.0], True)
    m1, m2 = raises_like(lambda: L.apply(lx * 1), lambda: T.apply(tx * 1))
    assert same_message(m1, m2)


def test_needs_input_grad():
    seen = []

    def forward(ctx, a, b, k):
        seen.append(ctx.needs_input_grad)
        return a * b * k

    def backward(ctx, g):
        return g, g, None
    L, T = both('Needs', forward, backward)
    la, ta = pair([1.0], True)
    lb, tb = pair([2.0], False)
    L.apply(la, lb, 3)
    T.apply(ta, tb, 3)
    L.apply(lb, la, 3)
    T.apply(tb, ta, 3)
    assert seen[0] == seen[1] == (True, False, False)
    assert seen[2] == seen[3] == (False, True, False)


def test_apply_with_keyword_arguments():
    def forward(ctx, x, scale=2.0):
        ctx.scale = scale
        return x * scale

    def backward(ctx, g):
        return g * ctx.scale, None
    L, T = both('Scale', forward, backward)
    lx, tx = pair([1.0, 2.0], True)
    assert_same(L.apply(lx, scale=4.0), T.apply(tx, scale=4.0))
    assert_same(L.apply(lx), T.apply(tx))


def test_returning_input_unchanged_makes_new_tensor():
    L, T = both('Ident', lambda ctx, x: x, lambda ctx, g: g * 5)
    lx, tx = pair([1.0, 2.0], True)
    lo, to = L.apply(lx), T.apply(tx)
    assert (lo is lx) == (to is tx) == False  # noqa: E712
    assert lo.grad_fn.name() == to.grad_fn.name()
    lo.sum().backward()
    to.sum().backward()
    assert_same(lx.grad, tx.grad)


def test_save_none_and_version_check():
    def forward(ctx, x):
        ctx.save_for_backward(None, x)
        return x * 2

    def backward(ctx, g):
        none, x = ctx.saved_tensors
        assert none is None
        return g * x
    L, T = both('SaveNone', forward, backward)
    lx, tx = pair([1.0, 2.0], True)
    lo, to = L.apply(lx), T.apply(tx)
    with lg.no_grad():
        lx.add_(1)
    with torch.no_grad():
        tx.add_(1)
    m1, m2 = raises_like(lambda: lo.sum().backward(), lambda: to.sum().backward())
    assert same_message(torch_part(m1), m2)


def test_saved_output_is_connected_for_double_backward():
    L, T = both('ScaledExp', _scaled_exp_fwd, lambda ctx, g: (g * ctx.saved_tensors[0], None))
    for mod, F in ((lg, L), (torch, T)):
        x = mod.tensor([0.5, -1.0], dtype=mod.float64, requires_grad=True)
        y = F.apply(x, 3.0)
        (g,) = mod.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = mod.autograd.grad(g.sum(), x)
        if mod is lg:
            lres = (g, gg)
        else:
            tres = (g, gg)
    assert_same(lres[0], tres[0], rtol=1e-12, atol=1e-12)
    assert_same(lres[1], tres[1], rtol=1e-12, atol=1e-12)


class Cube(Function):
    """x**3 with a backward written in leafgrad ops, so it is itself differentiable."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def test_double_backward_matches_torch_and_gradgradcheck():
    TCube = make(torch, 'Cube', Cube.forward, Cube.backward)
    a = np.array([0.3, -1.2, 2.0])
    lx, tx = pair(a, True)
    (lg1,) = lg.autograd.grad(Cube.apply(lx).sum(), lx, create_graph=True)
    (tg1,) = torch.autograd.grad(TCube.apply(tx).sum(), tx, create_graph=True)
    assert lg1.grad_fn is not None
    (lg2,) = lg.autograd.grad(lg1.sum(), lx)
    (tg2,) = torch.autograd.grad(tg1.sum(), tx)
    assert_same(lg2, tg2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_np(lg2), 6 * a)
    x = lg.tensor(a, requires_grad=True)
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))


def test_once_differentiable():
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    L = make(lg, 'Sq', forward, once_differentiable(backward))
    T = make(torch, 'Sq', forward, torch.autograd.function.once_differentiable(backward))
    lx, tx = pair([1.0, 3.0], True)
    lv, tv = pair([1.0, 1.0], True)  # grad_outputs that require grad: the vjp is differentiable
    (lg1,) = lg.autograd.grad(L.apply(lx), lx, lv, create_graph=True)
    (tg1,) = torch.autograd.grad(T.apply(tx), tx, tv, create_graph=True)
    assert_same(lg1, tg1)
    assert lg1.requires_grad and tg1.requires_grad
    assert lg1.grad_fn.name().replace('leafgrad::', 'torch::') == tg1.grad_fn.name() == 'torch::autograd::Error'
    m1, m2 = raises_like(lambda: lg1.sum().backward(), lambda: tg1.sum().backward())
    assert same_message(m1, m2)
    # without create_graph the gradient is a plain tensor
    (g,) = lg.autograd.grad(L.apply(lx).sum(), lx)
    assert not g.requires_grad


@pytest.mark.parametrize('case', ['too_few', 'too_many', 'non_tensor_grad', 'bad_shape', 'not_tensor'])
def test_backward_validation_errors_match_torch(case):
    backward = {
        'too_few': lambda ctx, g: g,
        'too_many': lambda ctx, g: (g, None, g),
        'non_tensor_grad': lambda ctx, g: (g, g),
        'bad_shape': lambda ctx, g: (g.sum(), None),
        'not_tensor': lambda ctx, g: (5, None),
    }[case]
    L, T = both('Check', lambda ctx, x, k: x * k, backward)
    lx, tx = pair([1.0, 2.0, 3.0], True)
    m1, m2 = raises_like(lambda: L.apply(lx, 2.0).sum().backward(), lambda: T.apply(tx, 2.0).sum().backward())
    assert same_message(m1, m2), (m1, m2)


def test_extra_none_gradients_and_broadcast_gradient_are_accepted():
    L, T = both('Loose', lambda ctx, x: x * 2, lambda ctx, g: (g.expand(2, 3), None, None))
    lx, tx = pair([1.0, 2.0, 3.0], True)
    L.apply(lx).sum().backward()
    T.apply(tx).sum().backward()
    assert_same(lx.grad, tx.grad)  # summed back to the input's shape


def test_gradient_cast_to_input_dtype():
    L, T = both('Cast', lambda ctx, x: x * 2, lambda ctx, g: g.float())
    lx, tx = pair(np.array([1.0, 2.0]), True)
    L.apply(lx).sum().backward()
    T.apply(tx).sum().backward()
    assert_same(lx.grad, tx.grad)


def test_instantiation_warns_and_legacy_call_raises():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x

    class TF(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter('always')
        f = F()
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter('always')
        tf = TF()
    assert w1[0].category is w2[0].category is DeprecationWarning
    assert str(w1[0].message).split('>', 1)[1] == str(w2[0].message).split('>', 1)[1].replace('.TF', '.F')
    m1, m2 = raises_like(lambda: f(lg.ones(1)), lambda: tf(torch.ones(1)))
    assert same_message(m1, m2)


def test_no_grad_needed_records_nothing():
    L, T = both('ScaledExp', _scaled_exp_fwd, _scaled_exp_bwd)
    lx, tx = pair([1.0], False)
    lo, to = L.apply(lx, 1.0), T.apply(tx, 1.0)
    assert lo.grad_fn is None and to.grad_fn is None
    lx.requires_grad_()
    with lg.no_grad():
        assert L.apply(lx, 1.0).grad_fn is None


def test_hooks_on_custom_node():
    calls = []
    for mod, F in zip((lg, torch), both('ScaledExp', _scaled_exp_fwd, _scaled_exp_bwd)):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x, 2.0)
        y.grad_fn.register_prehook(lambda go, mod=mod: calls.append((mod.__name__, 'pre')))
        y.grad_fn.register_hook(lambda gi, go, mod=mod: calls.append((mod.__name__, 'post')))
        y.sum().backward()
    assert [c for m, c in calls if m == 'leafgrad'] == [c for m, c in calls if m == 'torch'] == ['pre', 'post']


def test_custom_function_gradcheck_float64():
    class Softplus(Function):
        @staticmethod
        def forward(ctx, x, beta):
            ctx.save_for_backward(x)
            ctx.beta = beta
            return (1 + (x * beta).exp()).log() / beta

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x * ctx.beta).sigmoid(), None
    x = lg.tensor(np.linspace(-2, 2, 5), requires_grad=True)
    assert gradcheck(Softplus.apply, (x, 1.5))
    assert gradgradcheck(lambda t: Softplus.apply(t, 1.5), (x,))


def _edge_cases(mod):
    """Run PyTorch's corner cases of Function; return a log of what happened."""
    log = []
    x = mod.ones(2, requires_grad=True)

    class NonTensorOut(mod.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, 3

        @staticmethod
        def backward(ctx, g, g2):
            log.append(('g2', g2))
            return g

    class DirtyLeaf(mod.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.mark_dirty(a)
            a.mul_(2)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    class SaveInt(mod.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(3)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    class OnlyVjp(mod.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 5

    class NoBackward(mod.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    class GradMode(mod.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            log.append(('fwd grad enabled', mod.is_grad_enabled()))
            return a * 2

        @staticmethod
        def backward(ctx, g):
            log.append(('bwd grad enabled', mod.is_grad_enabled()))
            return g

    out = NonTensorOut.apply(x)
    log.append(('second output', out[1]))
    out[0].sum().backward()
    for fn in (lambda: DirtyLeaf.apply(x), lambda: SaveInt.apply(x),
               lambda: NoBackward.apply(x).sum().backward()):
        try:
            fn()
        except Exception as e:  # noqa: BLE001  (type and message are compared with torch's)
            log.append((type(e).__name__, str(e)))
    x.grad = None
    OnlyVjp.apply(x).sum().backward()
    log.append(('vjp grad', x.grad.tolist()))
    GradMode.apply(x).sum().backward()
    mod.autograd.grad(GradMode.apply(x).sum(), x, create_graph=True)
    log.append(('is Node', isinstance(OnlyVjp.apply(x).grad_fn, mod.autograd.graph.Node)))
    return log


def test_corner_cases_match_torch():
    assert _edge_cases(lg) == _edge_cases(torch)


def test_saved_output_modified_in_place_error_matches_torch():
    def run(mod):
        class E(mod.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                y = a.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y
        y = E.apply(mod.ones(2, requires_grad=True))
        with mod.no_grad():
            y.mul_(2)
        y.sum().backward()
    m1, m2 = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(torch_part(m1), m2)


def test_outputs_taken_over_as_torch_does():
    """An input returned unchanged is aliased (it keeps its history); any other tensor with a
    history becomes this node's output and loses that history, in torch as here."""
    res = []
    for mod in (lg, torch):
        w = mod.tensor([1.0, 2.0], requires_grad=True)
        outside = w * 3  # a tensor with a history, returned by the forward

        class Leak(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(x)
                return x, outside

            @staticmethod
            def backward(ctx, gx, go):
                return gx

        x = mod.tensor([5.0, 6.0], requires_grad=True)
        a, b = Leak.apply(x)
        res.append((a.requires_grad, a is x, b is outside, b.grad_fn.name(), x.grad_fn))
        outside.sum().backward()
        res.append(w.grad)
    assert res[:2] == res[2:]
