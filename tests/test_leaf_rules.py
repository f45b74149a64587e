"""PyTorch's leaf rules, checked against torch on the same programs."""
import warnings

import numpy as np
import pytest

from oracle import lg, pair, raises_like, same_message, torch, assert_same, torch_part


def both(fn):
    return fn(lg), fn(torch)


def test_leaf_flags_and_grads():
    def prog(T):
        w = T.tensor([1., 2., 3.], requires_grad=True)
        d = T.tensor([10., 10., 10.])
        h = w * 2
        loss = (h * d).sum()
        flags = (w.is_leaf, d.is_leaf, h.is_leaf, loss.is_leaf, w.requires_grad, d.requires_grad, h.requires_grad)
        loss.backward()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return flags, w.grad.tolist(), h.grad, d.grad, type(h.grad_fn).__name__, loss.grad_fn.name()
    a, b = both(prog)
    assert a == b


def test_accumulation_and_zero_grad():
    def prog(T):
        w = T.tensor([1., 2.], requires_grad=True)
        out = []
        for _ in range(3):
            (w * w).sum().backward()
            out.append(w.grad.tolist())
        g = w.grad
        (w * 3).sum().backward()
        out.append(g is w.grad)  # accumulation is in place
        w.grad.zero_()
        out.append(w.grad.tolist())
        w.grad = None
        (w * 3).sum().backward()
        out.append(w.grad.tolist())
        return out
    assert both(prog)[0] == both(prog)[1]


def test_fan_in_sums():
    def prog(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        y = x * x + x.exp() + x * 2
        y.sum().backward()
        return x.grad.numpy() if T is torch else x.grad.numpy()
    a, b = both(prog)
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_retain_grad_and_hooks_order():
    def prog(T):
        calls = []
        x = T.tensor([1., 2.], requires_grad=True)
        h = x * 2
        h.retain_grad()
        h.register_hook(lambda g: calls.append(('h1', g.tolist())))
        h.register_hook(lambda g: g * 10)  # replaces the gradient in flight
        h.register_hook(lambda g: calls.append(('h3', g.tolist())))
        x.register_hook(lambda g: calls.append(('x', g.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: calls.append(('post', t.grad.tolist())))
        (h * 3).sum().backward()
        return calls, h.grad.tolist(), x.grad.tolist()
    a, b = both(prog)
    assert a == b


def test_hook_handle_remove():
    def prog(T):
        x = T.tensor([1., 2.], requires_grad=True)
        handle = x.register_hook(lambda g: g * 100)
        handle.remove()
        (x * 2).sum().backward()
        return x.grad.tolist()
    a, b = both(prog)
    assert a == b


def test_detach_no_grad_inference_mode():
    def prog(T):
        x = T.tensor([1., 2.], requires_grad=True)
        d = x.detach()
        with T.no_grad():
            n = x * 2
        with T.inference_mode():
            i = x * 2
        with T.enable_grad():
            e = x * 2
        T.set_grad_enabled(False)
        s = x * 2
        T.set_grad_enabled(True)

        @T.no_grad()
        def f(t):
            return t * 2
        return [(t.requires_grad, t.is_leaf, t.grad_fn is None) for t in (d, n, i, e, s, f(x))] + [T.is_grad_enabled()]
    a, b = both(prog)
    assert a == b


def test_detach_shares_storage_and_version():
    x = lg.tensor([1., 2.], requires_grad=True)
    d = x.detach()
    d.add_(1)
    assert x.tolist() == [2., 3.] and x._version == 1


def test_data_shares_storage_but_not_the_version():
    """``.data`` shares the storage and has a version counter of its own, as PyTorch's: a change
    through it is hidden from autograd (backward uses the changed values without an error, where
    a change through ``detach()`` is refused). Before, it shared the counter, and backward raised."""
    def run(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * x
        d = x.data
        seen = [(d._version, x._version, d.requires_grad, d.is_leaf, d._base is None)]
        d.mul_(2)
        seen.append((d._version, x._version, x.tolist()))
        y.sum().backward()
        w = x[0:1]
        wd = w.data
        wd.add_(1)
        seen.append((wd._version, w._version, x._version, wd._base is None))
        return seen, x.grad.tolist()
    assert run(lg) == run(torch)


def test_requires_grad_errors():
    m1, m2 = raises_like(lambda: lg.tensor([1], requires_grad=True), lambda: torch.tensor([1], requires_grad=True))
    assert same_message(m1, m2)
    m1, m2 = raises_like(lambda: lg.tensor([1]).requires_grad_(), lambda: torch.tensor([1]).requires_grad_())
    assert same_message(m1, m2)
    wl, wt = pair([1., 2.], requires_grad=True)
    m1, m2 = raises_like(lambda: (wl * 2).requires_grad_(False), lambda: (wt * 2).requires_grad_(False))
    assert same_message(m1, m2)
    m1, m2 = raises_like(lambda: (wl * 2).backward(), lambda: (wt * 2).backward())
    assert same_message(m1, m2)
    m1, m2 = raises_like(lambda: lg.ones(3).sum().backward(), lambda: torch.ones(3).sum().backward())
    assert same_message(m1, m2)
    m1, m2 = raises_like(lambda: wl.numpy(), lambda: wt.numpy())
    assert same_message(m1, m2)
    m1, m2 = raises_like(lambda: wl.add_(1), lambda: wt.add_(1))
    assert same_message(m1, m2)
    assert wl._version == 0 and wl.tolist() == [1., 2.]


def test_second_backward_fails_and_retain_graph_works():
    def prog(T, retain):
        x = T.tensor([1., 2.], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=retain)
        try:
            y.backward()
        except RuntimeError as e:
            return str(e).split('.')[0]
        return x.grad.tolist()
    assert prog(lg, False) == prog(torch, False)
    assert prog(lg, True) == prog(torch, True) == [4., 8.]


def test_saved_tensor_modified_inplace_message():
    def prog(T):
        x = T.ones(3, requires_grad=True)
        a = x * 1
        y = a * a
        a.add_(1)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return str(e)
    m1, m2 = prog(lg), prog(torch)
    assert torch_part(m1).replace('leafgrad', 'torch') == m2


@pytest.mark.parametrize('op', ['exp', 'tanh', 'sigmoid'])
@pytest.mark.parametrize('create_graph', [False, True])
def test_saved_output_modified_in_place_message(op, create_graph):
    """These ops' derivatives read their saved output as an array in a plain backward and as a
    tensor with create_graph: both check its version."""
    def prog(T):
        x = T.tensor([0.5, -1., 2.], requires_grad=True)
        y = getattr(T, op)(x)
        y.mul_(2)
        y.sum().backward(create_graph=create_graph)
    m1, m2 = raises_like(lambda: prog(lg), lambda: prog(torch))
    assert same_message(torch_part(m1), m2)


_CHANGED_AFTER_AN_INPLACE_OP = {
    'exp_ then exp_': lambda T, a: (a * 1).exp_().exp_(),
    'relu_ then mul_': lambda T, a: (a * 1).relu_().mul_(2),
    'pow_ by a tensor then add_': lambda T, a: (a * 1).pow_(a).add_(2),
    'sigmoid_ then tanh_': lambda T, a: (a * 1).sigmoid_().tanh_(),
    'sqrt_ then add_': lambda T, a: (a * 1).sqrt_().add_(1),
    'rsqrt_ then add_': lambda T, a: (a * 1).rsqrt_().add_(1),
    'reciprocal_ then add_': lambda T, a: (a * 1).reciprocal_().add_(1),
    'relu inplace then add_': lambda T, a: T.nn.functional.relu(a * 1, inplace=True).add_(1),
    'a slice of the result changed': lambda T, a: (a * 1).exp_()[0:2].add_(1),
    'changed through .detach()': lambda T, a: _changed(T, a, lambda b: b.detach().add_(1)),
    'changed under no_grad': lambda T, a: _changed(T, a, lambda b: _under_no_grad(T, b.add_, 1)),
    'a view changed in place, then its base (the view alive)': lambda T, a: _view_then_base(T, a, keep=True),
    'a view changed in place, then its base (the view gone)': lambda T, a: _view_then_base(T, a, keep=False),
}


def _changed(T, a, change):
    b = a * 1
    b.exp_()
    change(b)
    return b


def _under_no_grad(T, fn, *args):
    with T.no_grad():
        return fn(*args)


def _view_then_base(T, a, keep):
    b = a * 1
    v = b[1:]
    v.exp_()
    if not keep:
        del v  # (PyTorch's error then names the op's node, its weak reference to the view's history dead)
    b.add_(1)
    return b


@pytest.mark.parametrize('name', list(_CHANGED_AFTER_AN_INPLACE_OP))
def test_an_inplace_op_saves_self_as_pytorch_does(name):
    """An in-place op whose derivative reads its result (exp_, relu_, sigmoid_, pow_) saves self
    as it is after the op, as PyTorch's does: changing self again before backward is refused with
    PyTorch's message (the node named as PyTorch's errors name it: PowBackward1 is Pow1; of a view,
    the view's history while it lives). Before, the op kept its result's own array, and backward
    went on with the old values."""
    program = _CHANGED_AFTER_AN_INPLACE_OP[name]

    def run(T):
        a = T.tensor([1., 2., 3.], requires_grad=True)
        program(T, a).sum().backward()
    m1, m2 = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(m1, m2), (m1, m2)


def test_an_inplace_op_that_saves_self_keeps_no_second_array():
    """Gradients as torch's, and the node's saved result is the tensor's own memory, not a
    copy kept beside it."""
    def run(T):
        a = T.tensor([1., 2., 3.], requires_grad=True)
        b = (a * 1).exp_()
        shared = T is lg and np.shares_memory(b.grad_fn._saved[0].data, b._data)
        (b * 2).sum().backward()
        return a.grad.tolist(), shared
    (g1, shared), (g2, _) = run(lg), run(torch)
    assert np.allclose(g1, g2, rtol=1e-6) and shared


@pytest.mark.parametrize('op', ['exp', 'tanh', 'sigmoid'])
def test_saved_output_unpacked_by_hooks_in_plain_backward(op):
    def prog(T):
        unpacked = []

        def unpack(t):
            unpacked.append(tuple(t.shape))
            return t
        x = T.tensor([0.5, -1., 2.], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = getattr(T, op)(x)
        (y * y).sum().backward()
        return x.grad.tolist(), unpacked
    (g1, u1), (g2, u2) = prog(lg), prog(torch)
    assert np.allclose(g1, g2, rtol=1e-6) and u1 == u2 == [(3,)]


@pytest.mark.parametrize('create_graph', [False, True])
@pytest.mark.parametrize('outer_mode', [False, True])
def test_grad_mode_restored_after_a_failed_backward(create_graph, outer_mode):
    """The walk sets grad mode to create_graph for the derivatives and restores the caller's,
    also when a derivative raises, as in PyTorch."""
    def prog(T):
        x = T.tensor([0.5, -1., 2.], requires_grad=True)
        y = x.exp()
        loss = y.sum()
        with T.no_grad():
            y.mul_(2)
        with T.set_grad_enabled(outer_mode):
            try:
                loss.backward(create_graph=create_graph)
            except RuntimeError as e:
                assert 'modified by an inplace operation' in str(e)
                return T.is_grad_enabled()
    assert prog(lg) == prog(torch) == outer_mode


def test_failed_op_changes_nothing():
    x = lg.tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError):
        y.view(2, 2)
    with pytest.raises(RuntimeError):
        y.add_(lg.ones(2, 3))
    assert y._version == 0 and y.grad_fn.name() == 'MulBackward0'
    y.sum().backward()
    assert x.grad.tolist() == [2., 2., 2.]


def test_warnings():
    x = lg.tensor([1., 2.], requires_grad=True)
    with pytest.warns(UserWarning, match='not a leaf Tensor'):
        (x * 2).grad
    with pytest.warns(UserWarning, match='recommended to use sourceTensor.detach'):
        lg.tensor(x)


def test_rewrapping_severs_the_graph():
    def prog(T):
        w = T.tensor([1., 2.], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            w2 = T.tensor(w * 2)
        return w2.is_leaf, w2.requires_grad, w2.grad_fn is None
    assert both(prog)[0] == both(prog)[1]


def test_create_graph_higher_order():
    def prog(T):
        x = T.tensor([2.0, -1.0], requires_grad=True)
        y = (x ** 3).sum()
        g, = T.autograd.grad(y, x, create_graph=True)
        g2, = T.autograd.grad(g.sum(), x, create_graph=True)
        g3, = T.autograd.grad(g2.sum(), x)
        return g.tolist(), g2.tolist(), g3.tolist()
    assert both(prog)[0] == both(prog)[1]


def test_hessian_vector_product():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((5, 5))
    xv = rng.standard_normal(5)
    v = rng.standard_normal(5)

    def prog(T):
        Wt, x, vt = T.tensor(W), T.tensor(xv, requires_grad=True), T.tensor(v)
        f = T.tanh(Wt @ x).sum()
        g, = T.autograd.grad(f, x, create_graph=True)
        hv, = T.autograd.grad((g * vt).sum(), x)
        return hv.numpy()
    np.testing.assert_allclose(prog(lg), prog(torch), rtol=1e-10)


def test_backward_inputs_and_grad_allow_unused():
    def prog(T):
        a = T.tensor([1., 2.], requires_grad=True)
        b = T.tensor([3., 4.], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        res = [a.grad.tolist(), b.grad]
        c = T.tensor([1.], requires_grad=True)
        ga, gc = T.autograd.grad((a * 2).sum(), [a, c], allow_unused=True)
        res += [ga.tolist(), gc]
        try:
            T.autograd.grad((a * 2).sum(), [a, c])
        except RuntimeError as e:
            res.append(str(e))
        return res
    assert both(prog)[0] == both(prog)[1]


def test_grad_outputs_and_shape_mismatch():
    def prog(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        y = x * 2
        g, = T.autograd.grad(y, x, grad_outputs=T.tensor([1., 0., 2.]))
        try:
            (x * 2).backward(T.ones(2))
        except RuntimeError as e:
            return g.tolist(), str(e).replace('torch', 'leafgrad')
    assert both(prog)[0] == both(prog)[1]


def test_nonleaf_inplace_records_and_views():
    def prog(T):
        x = T.ones(2, 3, requires_grad=True)
        y = x * 1
        y[:, 1] *= 5
        y[0] = y[0] * 2
        z = T.zeros(2, 3)
        w = T.tensor([1., 2., 3.], requires_grad=True)
        z[1] = w * w
        (y.sum() + z.sum()).backward()
        return x.grad.tolist(), w.grad.tolist(), z.is_leaf, z.requires_grad, y._version
    assert both(prog)[0] == both(prog)[1]


def test_deep_chain_has_no_recursion_limit():
    x = lg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_graph_and_intermediate_grads_freed():
    import gc
    import weakref
    x = lg.ones(4, requires_grad=True)
    y = x.exp()
    z = y.tanh()
    node = z.grad_fn
    loss = z.sum()
    loss.backward()
    assert node._saved is None  # saved tensors released after backward
    gc.collect()
    x2 = lg.ones(4, requires_grad=True)
    h = x2 * 2
    ref = weakref.ref(h.grad_fn)
    loss = (h * 3).sum()
    del h
    loss.backward()
    del loss
    assert ref() is None  # the graph is freed with its root, no reference cycles


def test_grad_mode_is_thread_local():
    import threading
    seen = []
    with lg.no_grad():
        t = threading.Thread(target=lambda: seen.append(lg.is_grad_enabled()))
        t.start()
        t.join()
        seen.append(lg.is_grad_enabled())
    assert seen == [True, False]


def test_inference_mode_decorator_and_flags():
    @lg.inference_mode()
    def f(x):
        return x * 2
    x = lg.ones(2, requires_grad=True)
    y = f(x)
    assert not y.requires_grad and lg.is_grad_enabled()
    with lg.inference_mode():
        assert lg.is_inference_mode_enabled() and not lg.is_grad_enabled()


def test_grads_never_alias_each_other_or_user_tensors():
    x, y = lg.ones(3, requires_grad=True), lg.ones(3, requires_grad=True)
    (x + y).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    x.grad.add_(1)
    assert y.grad.tolist() == [1., 1., 1.]
    g = lg.tensor([1., 2., 3.])
    z = lg.zeros(3, requires_grad=True)
    z.backward(g)
    assert z.grad is not g and not np.shares_memory(z.grad.numpy(), g.numpy())
    w = lg.ones(2, 3, requires_grad=True)
    h = w.reshape(6)  # the gradient arrives as a view: .grad must own its memory
    h.backward(lg.ones(6))
    w.grad.add_(1)
    assert w.grad.tolist() == [[2.] * 3] * 2


def test_fresh_gradient_buffers_are_kept_without_a_copy():
    """AccumulateGrad takes an unshared buffer as PyTorch steals it (memory is a feature)."""
    import sys
    tensor_cls = sys.modules['leafgrad.tensor'].Tensor
    copies = []
    original = tensor_cls._owned_copy
    tensor_cls._owned_copy = lambda self: copies.append(tuple(self.shape)) or original(self)
    try:
        x = lg.randn(5, requires_grad=True)
        (x * x).sum().backward()
        b = lg.zeros(3, requires_grad=True)
        (lg.ones(4, 3) + b).sum().backward()
        layer = lg.nn.Linear(4, 3)  # the weight's gradient arrives through t(): kept too
        (layer(lg.randn(5, 4)) ** 2).sum().backward()
        assert layer.weight.grad.numpy().flags.c_contiguous
    finally:
        tensor_cls._owned_copy = original
    assert copies == []


def test_summed_gradients_never_change_a_tensor_someone_holds():
    """The engine sums gradients arriving at one input in place only in a buffer nobody else
    sees: gradients kept by hooks, passed on unchanged by add, given as the root gradient or
    captured by autograd.grad keep their values, as in torch."""
    def prog(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        kept = []
        a = x * 2
        b = a + 1                      # AddBackward0 passes b's gradient on to a as is
        b.register_hook(lambda g: kept.append(g))
        c = a * 4                      # ... and a second gradient then arrives at a
        s = a.sin()                    # ... and a third
        loss = (b * 3).sum() + c.sum() + s.sum()
        root = T.ones(())
        loss.backward(root, retain_graph=True)
        first = [g.tolist() for g in kept]
        ga, = T.autograd.grad(loss, a, retain_graph=True)
        gb, = T.autograd.grad(loss, b, retain_graph=True)
        (b + b + a).sum().backward()   # one tensor delivered twice to the same input
        return first, [g.tolist() for g in kept], ga.tolist(), gb.tolist(), root.tolist(), x.grad.tolist()
    out_lg, out_torch = prog(lg), prog(torch)
    np.testing.assert_allclose(np.array(out_lg[-1]), np.array(out_torch[-1]), rtol=1e-6)
    assert out_lg[:-1] == out_torch[:-1]


def test_summed_gradients_are_made_in_place_when_unshared():
    """Fifty gradients summed for one weight (an unrolled RNN) allocate once, not fifty times:
    every sum after the first is made in the first gradient's own buffer."""
    w = lg.randn(8, 8, requires_grad=True)
    h = lg.randn(4, 8)
    outs = []
    for _ in range(50):
        outs.append(h @ w)
    sums = []
    tensor_cls = type(w)
    original = tensor_cls._accumulate_
    tensor_cls._accumulate_ = lambda self, other: sums.append(id(self)) or original(self, other)
    try:
        lg.stack(outs).sum().backward()
    finally:
        tensor_cls._accumulate_ = original
    assert len(sums) == 49 and len(set(sums)) == 1
    np.testing.assert_allclose(w.grad.numpy(), 50 * h.numpy().T @ np.ones((4, 8)), rtol=1e-5)


def test_relu_masks_a_gradient_only_the_walk_holds_in_place():
    """relu's derivative zeroes the incoming gradient where it lies when nobody else sees it
    (as a hand-written backward does); a gradient kept by a hook or given as the root keeps
    its values, as in torch."""
    def prog(T):
        x = T.tensor([[-1., 2.], [3., -4.]], requires_grad=True)
        kept = []
        h = x * 2
        h.register_hook(lambda g: kept.append(g))  # relu's incoming gradient, held by the user
        r = h.relu()
        root = T.ones(2, 2)
        r.backward(root)
        (x * 3).relu().sum().backward()
        return [g.tolist() for g in kept], root.tolist(), x.grad.tolist()
    assert prog(lg) == prog(torch)

    from leafgrad.ops import elementwise
    reused = []
    original = elementwise.unshared
    # (the spy's own parameter is one more reference to the gradient)
    elementwise.unshared = lambda grad, holders: reused.append(original(grad, holders + 1)) or reused[-1]
    try:
        x = lg.tensor([[-1., 2.], [3., -4.]], requires_grad=True)
        ((x * 2).relu() * 3).sum().backward()   # mul's derivative hands relu a fresh gradient
        held = lg.ones(2, 2)
        (x * 2).relu().backward(held)              # the root gradient is the user's: not reused
    finally:
        elementwise.unshared = original
    assert reused == [True, False] and held.tolist() == [[1., 1.], [1., 1.]]


def _grad_and_backward_arguments(T):
    """autograd.grad and backward with their inputs argument: used, unused, materialized, empty,
    not requiring grad; what each returns or PyTorch's error."""
    x, y, z = T.tensor([1., 2.], requires_grad=True), T.tensor([3., 4.], requires_grad=True), T.tensor([1., 1.])
    said = []
    for f in (lambda: T.autograd.grad((x * 2).sum(), [x, y]), lambda: T.autograd.grad((x * 2).sum(), [x, y], allow_unused=True),
              lambda: T.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True), lambda: T.autograd.grad((x * 2).sum(), z),
              lambda: T.autograd.grad((x * 2).sum(), []), lambda: T.autograd.grad((x * 2).sum(), ()),
              lambda: (x * 2).sum().backward(inputs=[]), lambda: (x * 2).sum().backward(inputs=[z]),
              lambda: (x * 2).sum().backward(inputs=[x, z])):
        try:
            r = f()
            said.append([t.tolist() if t is not None else None for t in r] if isinstance(r, tuple) else r)
        except Exception as e:
            said.append((type(e).__name__, str(e)))
    return said


def test_grad_and_backward_inputs_as_pytorch():
    """(An empty inputs had given () where PyTorch refuses it; backward's inputs that do not
    require grad had another message than PyTorch's.)"""
    mine, theirs = both(_grad_and_backward_arguments)
    assert mine == theirs


_CAPTURES = {
    'the input alone': lambda y, x: [y],
    'the input, then a leaf beyond it': lambda y, x: [y, x],
    'a leaf, then the input': lambda y, x: [x, y],
    'the input twice': lambda y, x: [y, y],
}


@pytest.mark.parametrize('inputs', list(_CAPTURES))
@pytest.mark.parametrize('hook', ['scales', 'observes', 'two hooks'])
@pytest.mark.parametrize('create_graph', [False, True])
def test_autograd_grad_captures_a_nonleaf_input_as_pytorch(inputs, hook, create_graph):
    """autograd.grad's gradient for a non-leaf input is taken after that tensor's hooks where the
    walk ends at its node, and before them where the walk goes on through it to another input
    (PyTorch's engine runs the hooks with the node then). Before, it was always taken after."""
    def run(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        seen = []
        if hook in ('scales', 'two hooks'):
            y.register_hook(lambda g: g * 10)
        if hook in ('observes', 'two hooks'):
            y.register_hook(lambda g: seen.append(g.tolist()))
        z = (y * 3).sum() + (y * y).sum()
        grads = T.autograd.grad(z, _CAPTURES[inputs](y, x), create_graph=create_graph)
        return [g.tolist() for g in grads], seen
    assert run(lg) == run(torch)


_UNPACKED = {  # op(x, y) -> (result, {name: tensor}) of the tensors its node saves
    'hypot': lambda T, x, y: (T.hypot(x, y), {}),
    'atan2': lambda T, x, y: (T.atan2(x, y), {}),
    'lerp by a tensor': lambda T, x, y: (T.lerp(x, y, y * 0.5), {}),
    'maximum': lambda T, x, y: (T.maximum(x, y), {}),
    'xlogy': lambda T, x, y: (T.xlogy(x, y), {}),
    'fmod': lambda T, x, y: (T.fmod(x, y), {}),
    'clamp by tensors': lambda T, x, y: (T.clamp(x, y - 1, y + 1), {}),
    'dist': lambda T, x, y: (T.dist(x, y), {}),
    'logaddexp2': lambda T, x, y: (T.logaddexp2(x, y), {}),
    'vdot': lambda T, x, y: (T.vdot(x, y), {}),
    'linalg.cross': lambda T, x, y: (T.linalg.cross(x, y), {}),
    'aminmax': lambda T, x, y: (lambda mn, mx: (mn + mx, {'min': mn, 'max': mx}))(*x.aminmax()),
}


@pytest.mark.parametrize('name', list(_UNPACKED))
def test_saved_tensors_unpack_in_pytorchs_order(name):
    """A node unpacks what it saved as PyTorch's generated derivatives do: the inputs by name,
    then the outputs by name (hypot's other, self, result; clamp's max, min, self): the order in
    which saved-tensor hooks see them, and which changed tensor a version error names."""
    def unpacked(T):
        order = []
        x = T.tensor([1., 2.5, 3.], requires_grad=True) * 1
        y = T.tensor([0.5, 2., 1.5], requires_grad=True) * 1
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: order.append(t) or t):
            result, named = _UNPACKED[name](T, x, y)
        named = dict(named, self=x, other=y, result=result)
        result.sum().backward()
        return [next((k for k, v in named.items() if v.shape == t.shape and T.equal(v, t)), tuple(t.shape))
                for t in order]

    def changed(T):
        x = T.tensor([1., 2.5, 3.], requires_grad=True) * 1
        y = T.tensor([0.5, 2., 1.5], requires_grad=True) * 1
        result, _ = _UNPACKED[name](T, x, y)
        x.add_(1)
        y.mul_(1)
        result.sum().backward()
    assert unpacked(lg) == unpacked(torch)
    m1, m2 = raises_like(lambda: changed(lg), lambda: changed(torch))
    assert same_message(m1, m2), (m1, m2)


def _lu(T):
    m = T.tensor([[2., 1., 0.5], [1., 3., 1.], [0.2, 0.4, 4.]], requires_grad=True) * 1
    P, L, U = T.linalg.lu(m)
    return L.sum() + U.sum(), {'P': P, 'L': L, 'U': U, 'self': m}


def _sdpa(T):
    q, k, v = ((T.arange(64.).reshape(1, 2, 4, 8) / d).requires_grad_() * 1 for d in (64, 32, 16))
    out = T.nn.functional.scaled_dot_product_attention(q, k, v)
    return out.sum(), {'query': q, 'key': k, 'value': v, 'output': out}


def _nll(T):
    a = T.tensor([[0.3, -1., 2.], [0.5, 1.5, -2.], [1., 2., 3.]], requires_grad=True) * 1
    w = T.tensor([1., 2., 0.5])
    t = T.tensor([0, 2, 1])
    return T.nn.functional.nll_loss(a, t, weight=w, reduction='sum'), {'self': a, 'target': t, 'weight': w}


@pytest.mark.parametrize('make', [_lu, _sdpa, _nll], ids=['linalg.lu', 'scaled_dot_product_attention', 'nll_loss'])
def test_saved_outputs_kept_as_tensors_unpack_last(make):
    """An op's output that its node keeps as a plain tensor (lu's P, attention's logsumexp,
    nll_loss's total weight) is unpacked with the outputs, after the inputs, as PyTorch's."""
    def unpacked(T):
        order = []
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: order.append(t) or t):
            loss, named = make(T)
        loss.backward()
        return [next((k for k, v in named.items() if v.shape == t.shape and v.dtype == t.dtype and T.equal(v, t)),
                     tuple(t.shape)) for t in order]
    assert unpacked(lg) == unpacked(torch)
