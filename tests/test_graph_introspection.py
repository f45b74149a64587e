"""Looking at the recorded graph as in PyTorch: node names and edges, saved tensors, hooks and
their order, saved-tensor hooks; and the researcher examples of the lesson (FGSM, a saliency
map, frozen parameters pruning the backward walk)."""
import numpy as np
import pytest

from oracle import assert_same, pair, raises_like, same_message, to_np, torch
import leafgrad as lg


def name_tree(fn):
    if fn is None:
        return None
    return (fn.name().replace('torch::', 'leafgrad::'), tuple(name_tree(n) for n, _ in fn.next_functions))


def expr(mod, x, w):
    return ((x.mm(w).tanh() * 2 + x.sum()) / w.sum().exp()).sigmoid().sum()


def _xw(requires_grad=True):
    r = np.random.default_rng(0)
    return pair(r.standard_normal((2, 3)), requires_grad), pair(r.standard_normal((3, 2)), requires_grad)


def test_names_and_next_functions_match_torch():
    (lx, tx), (lw, tw) = _xw()
    ly, ty = expr(lg, lx, lw), expr(torch, tx, tw)
    assert name_tree(ly.grad_fn) == name_tree(ty.grad_fn)
    acc = ly.grad_fn.next_functions[0][0]
    while acc.next_functions:
        acc = acc.next_functions[0][0]
    assert acc.name() == 'leafgrad::autograd::AccumulateGrad'
    assert repr(acc).startswith('<AccumulateGrad object at')


@pytest.mark.parametrize('expr', [lambda x: 2 + x, lambda x: 2 * x, lambda x: 2.5 - x, lambda x: 2 / x,
                                  lambda x: x + 2, lambda x: x * 2])
def test_number_on_the_left_records_the_tensor_first(expr):
    """``2 + x`` records AddBackward0 with x's edge first, as PyTorch does."""
    def edges(T):
        y = expr(T.tensor([1., 2.], requires_grad=True))
        return [(n.name().replace('torch', 'leafgrad') if n is not None else None, i)
                for n, i in y.grad_fn.next_functions]
    assert edges(lg) == edges(torch)


def test_accumulate_grad_variable_and_shared_accumulator():
    lx = lg.tensor([1.0, 2.0], requires_grad=True)
    y = lx * lx
    a, b = y.grad_fn.next_functions
    assert a[0] is b[0] and a[0].variable is lx
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * tx
    assert ty.grad_fn.next_functions[0][0] is ty.grad_fn.next_functions[1][0]


def test_input_not_requiring_grad_has_none_edge():
    lx, tx = pair([1.0, 2.0], True)
    lc, tc = pair([3.0, 4.0], False)
    assert [e[0] is None for e in (lx * lc).grad_fn.next_functions] == \
           [e[0] is None for e in (tx * tc).grad_fn.next_functions] == [False, True]


def test_metadata_is_a_persistent_dict():
    y = lg.tensor([1.0], requires_grad=True) * 2
    assert y.grad_fn.metadata == {}
    y.grad_fn.metadata['tag'] = 'layer1'
    assert y.grad_fn.metadata == {'tag': 'layer1'}


SAVED_CASES = [
    ('mul', lambda x, y: x * y, ['_saved_self', '_saved_other']),
    ('mul_scalar', lambda x, y: x * 2.5, ['_saved_self', '_saved_other']),
    ('div', lambda x, y: x / y, ['_saved_self', '_saved_other']),
    ('div_int', lambda x, y: x / 2, ['_saved_self', '_saved_other']),
    ('pow_scalar', lambda x, y: x ** 3, ['_saved_self', '_saved_exponent']),
    ('pow_tensor', lambda x, y: x.abs() ** y, ['_saved_self', '_saved_exponent', '_saved_result']),
    ('exp', lambda x, y: x.exp(), ['_saved_result']),
    ('tanh', lambda x, y: x.tanh(), ['_saved_result']),
    ('sigmoid', lambda x, y: x.sigmoid(), ['_saved_result']),
    ('log', lambda x, y: x.abs().log(), ['_saved_self']),
    ('sin', lambda x, y: x.sin(), ['_saved_self']),
    ('relu', lambda x, y: x.relu(), ['_saved_result']),
    ('mm', lambda x, y: x.view(3, 1).mm(y.view(1, 3)), ['_saved_self', '_saved_mat2']),
]


@pytest.mark.parametrize('name,fn,attrs', SAVED_CASES, ids=[c[0] for c in SAVED_CASES])
def test_saved_tensors_match_torch(name, fn, attrs):
    r = np.random.default_rng(5)
    (lx, tx), (ly, ty) = pair(r.standard_normal(3), True), pair(r.standard_normal(3), True)
    lo, to = fn(lx, ly), fn(tx, ty)
    for attr in attrs:
        a, b = getattr(lo.grad_fn, attr), getattr(to.grad_fn, attr)
        if isinstance(b, torch.Tensor):
            assert_same(a, b, rtol=1e-15, atol=0)
            assert (a.grad_fn is None) == (b.grad_fn is None)
        else:
            assert a == b
    if '_saved_self' in attrs and name in ('mul', 'div', 'sin'):
        assert lo.grad_fn._saved_self is lx and to.grad_fn._saved_self is tx
    if '_saved_result' in attrs:
        res = lo.grad_fn._saved_result
        assert res.grad_fn is lo.grad_fn  # the output, reconnected to its producer
    lo.sum().backward()
    to.sum().backward()
    for attr in attrs:  # freed after the backward where torch frees them
        try:
            getattr(to.grad_fn, attr)
        except RuntimeError:
            m1, m2 = raises_like(lambda: getattr(lo.grad_fn, attr), lambda: getattr(to.grad_fn, attr))
            assert same_message(m1, m2)
        else:
            getattr(lo.grad_fn, attr)


def test_saved_operand_not_needed_is_none():
    lx, tx = pair([1.0, 2.0], True)
    lc, tc = pair([3.0, 4.0], False)
    assert (lx * lc).grad_fn._saved_self is None and (tx * tc).grad_fn._saved_self is None
    assert (lx * lc).grad_fn._saved_other is lc and (tx * tc).grad_fn._saved_other is tc


def _hook_log(mod):
    """Register every kind of hook on x -> a = x * 2 -> b = a.exp() -> s = b.sum(); return the
    log of calls after a backward, and a's retained grad."""
    log = []
    x = mod.tensor([0.5, 1.0], requires_grad=True)
    a = x * 2
    b = a.exp()
    s = b.sum()
    a.register_hook(lambda g: log.append('a tensor hook 1') or g * 10)
    a.retain_grad()
    a.register_hook(lambda g: log.append('a tensor hook 2'))
    for node, label in ((a.grad_fn, 'Mul'), (b.grad_fn, 'Exp'), (s.grad_fn, 'Sum'),
                        (a.grad_fn.next_functions[0][0], 'Acc')):
        node.register_prehook(lambda go, label=label: log.append(f'{label} prehook'))
        node.register_hook(lambda gi, go, label=label: log.append(f'{label} hook'))
    x.register_hook(lambda g: log.append('x tensor hook'))
    x.register_post_accumulate_grad_hook(lambda t: log.append('x post accumulate'))
    b.register_hook(lambda g: log.append('b tensor hook'))
    s.backward()
    return log, a.grad, x.grad


def test_hook_order_matches_torch():
    llog, la, lxg = _hook_log(lg)
    tlog, ta, txg = _hook_log(torch)
    assert llog == tlog
    assert_same(la, ta)  # retain_grad sees the gradient after the tensor hooks
    assert_same(lxg, txg)


def test_prehook_and_hook_can_replace_gradients():
    res = []
    for mod in (lg, torch):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        z = y.sin().sum()
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, gi[1]) if len(gi) > 1 else (gi[0] + 1,))
        z.backward()
        res.append(x.grad)
    assert_same(*res)


@pytest.mark.parametrize('make', [
    lambda M, x: M.relu(x * 1),
    lambda M, x: M.nn.functional.relu(x * 1),
    lambda M, x: (x * 1).relu(),
    lambda M, x: M.nn.ReLU()(x * 1),
])
def test_a_node_hook_sees_the_gradients_as_they_arrived(make):
    """grad_outputs handed to a node's post-hook are what reached the node, even where its
    derivative (relu's) could have written its result into their buffer."""
    res = []
    for M in (lg, torch):
        seen = []
        x = M.tensor([-1.0, 2.0, 3.0], requires_grad=True)
        y = make(M, x)
        y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].clone(), go[0].clone())))
        (y * M.tensor([1.0, 2.0, 3.0])).sum().backward()
        res.append((seen[0], x.grad))
    (lgi, lgo), lxg = res[0]
    (tgi, tgo), txg = res[1]
    assert_same(lgo, tgo)
    assert_same(lgi, tgi)
    assert_same(lxg, txg)


def test_hook_handle_remove():
    calls = []
    x = lg.tensor([1.0], requires_grad=True)
    y = x * 2
    h = y.grad_fn.register_prehook(lambda go: calls.append(1))
    h.remove()
    y.sum().backward()
    assert calls == []


# ---- saved-tensor hooks ------------------------------------------------------------------------

def _with_pack_hooks(mod):
    events = []

    def pack(t):
        events.append(('pack', tuple(t.shape), t.requires_grad))
        return t.detach().clone()

    def unpack(p):
        events.append(('unpack',))
        return p
    x = mod.tensor([0.3, 0.6, 0.9], dtype=mod.float64, requires_grad=True)
    with mod.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.exp()
        z = (y * x).sum()
    infos = (y.grad_fn._saved_result.grad_fn is y.grad_fn, z.grad_fn.next_functions[0][0]._saved_other.is_leaf)
    z.backward()
    return sorted(events), x.grad, infos


def test_saved_tensors_hooks_match_torch():
    lev, lgrad, linfo = _with_pack_hooks(lg)
    tev, tgrad, tinfo = _with_pack_hooks(torch)
    assert lev == tev
    assert linfo == tinfo == (True, True)
    assert_same(lgrad, tgrad)


def test_saved_tensors_hooks_nest_and_in_place_is_not_checked():
    outer, inner = [], []
    x = lg.tensor([1.0, 2.0], requires_grad=True)
    with lg.autograd.graph.saved_tensors_hooks(lambda t: outer.append(1) or t, lambda p: p):
        with lg.autograd.graph.saved_tensors_hooks(lambda t: inner.append(1) or t.clone(), lambda p: p):
            y = x.sin()
        z = y.cos()
    assert inner == [1] and outer == [1]
    with lg.no_grad():
        x.mul_(1)  # the packed copy is not the tensor: no version error (as in torch)
    z.sum().backward()


def test_unpack_must_return_a_tensor():
    def run(mod):
        x = mod.tensor([1.0], requires_grad=True)
        with mod.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: 5):
            y = x.exp()
        y.sum().backward()
    m1, m2 = raises_like(lambda: run(lg), lambda: run(torch))
    assert m1 == m2


def test_save_on_cpu_gives_the_same_gradients():
    (lx, tx), (lw, tw) = _xw()
    with lg.autograd.graph.save_on_cpu():
        ly = expr(lg, lx, lw)
    with torch.autograd.graph.save_on_cpu():
        ty = expr(torch, tx, tw)
    ly.backward()
    ty.backward()
    assert_same(lx.grad, tx.grad)
    assert_same(lw.grad, tw.grad)


# ---- researcher examples -----------------------------------------------------------------------

def _small_mlp(mod):
    r = np.random.default_rng(42)
    net = mod.nn.Sequential(mod.nn.Linear(6, 8), mod.nn.Tanh(), mod.nn.Linear(8, 3))
    with mod.no_grad():
        for p in net.parameters():
            p.copy_(mod.tensor(r.standard_normal(tuple(p.shape)) * 0.5, dtype=mod.float32))
    return net


def _fgsm(mod, eps=0.1):
    net = _small_mlp(mod)
    x = mod.tensor(np.random.default_rng(1).standard_normal((4, 6)), dtype=mod.float32, requires_grad=True)
    target = mod.tensor(np.eye(3)[[0, 2, 1, 0]], dtype=mod.float32)
    loss = mod.nn.functional.mse_loss(net(x).sigmoid(), target)
    loss.backward()
    x_adv = (x + eps * x.grad.sign()).detach()
    loss_adv = mod.nn.functional.mse_loss(net(x_adv).sigmoid(), target)
    return x_adv, loss, loss_adv


def test_fgsm_matches_torch():
    lx, lloss, ladv = _fgsm(lg)
    tx, tloss, tadv = _fgsm(torch)
    assert_same(lx, tx, rtol=1e-6, atol=1e-6)
    assert_same(lloss, tloss)
    assert_same(ladv, tadv)
    assert ladv.item() > lloss.item()  # the step increases the loss


def _saliency(mod):
    net = _small_mlp(mod)
    x = mod.tensor(np.random.default_rng(2).standard_normal((1, 6)), dtype=mod.float32, requires_grad=True)
    scores = net(x)
    k = int(np.argmax(to_np(scores)))
    scores[0, k].backward()
    return x.grad.abs()[0], k


def test_saliency_map_matches_torch():
    (ls, lk), (ts, tk) = _saliency(lg), _saliency(torch)
    assert lk == tk
    assert_same(ls, ts)


def _visits(mod, freeze_first):
    net = mod.nn.Sequential(mod.nn.Linear(4, 4), mod.nn.Tanh(), mod.nn.Linear(4, 4), mod.nn.Tanh(),
                            mod.nn.Linear(4, 2))
    if freeze_first:
        for p in list(net[0].parameters()) + list(net[2].parameters()):
            p.requires_grad_(False)
    loss = net(mod.ones(3, 4)).sum()
    visited = []
    seen = set()
    stack = [loss.grad_fn]
    while stack:  # a prehook on every node reachable from the loss
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        fn.register_prehook(lambda go, fn=fn: visited.append(fn.name().replace('torch::', 'leafgrad::')))
        stack.extend(n for n, _ in fn.next_functions)
    loss.backward()
    grads = [p.grad is not None for p in net.parameters()]
    return sorted(visited), grads


def test_frozen_subnetwork_is_not_visited():
    lfull, _ = _visits(lg, False)
    lfrozen, lgrads = _visits(lg, True)
    tfull, _ = _visits(torch, False)
    tfrozen, tgrads = _visits(torch, True)
    assert lfull == tfull and lfrozen == tfrozen
    assert len(lfrozen) < len(lfull)
    assert lfrozen.count('AddmmBackward0') == 1  # only the trainable last layer's matmul runs
    assert lfull.count('AddmmBackward0') == 3
    assert lgrads == tgrads == [False, False, False, False, True, True]


def test_disable_saved_tensors_hooks_and_increment_version():
    for mod in (lg, torch):
        graph = mod.autograd.graph
        with pytest.raises(RuntimeError, match='^no hooks here$'):
            with graph.disable_saved_tensors_hooks('no hooks here'):
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match='^no hooks here$'):
                with graph.disable_saved_tensors_hooks('no hooks here'):
                    pass
        x = mod.ones(2, requires_grad=True)
        y = x.exp()
        graph.increment_version(y)
        assert y._version == 1
        with pytest.raises(RuntimeError, match='is at version 1; expected version 0 instead'):
            y.sum().backward()


def test_saved_tensors_hooks_are_per_thread():
    import threading
    packed = []
    inside, release = threading.Event(), threading.Event()

    def other_thread():
        with lg.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda p: p):
            inside.set()
            release.wait(5)
    th = threading.Thread(target=other_thread)
    th.start()
    inside.wait(5)
    try:
        x = lg.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()  # saved in this thread: the other thread's hooks do not apply
        assert packed == []
        y.sum().backward()
    finally:
        release.set()
        th.join()


def _raw_saved_log(mod):
    log = []
    x = mod.tensor([1., 2., 3.], requires_grad=True)
    y = x.pow(2) * x.exp()
    pow_node = y.grad_fn.next_functions[0][0]
    pow_node._raw_saved_self.register_hooks(lambda t: log.append('pack') or t * 1,
                                            lambda t: log.append('unpack') or t)
    log.append(list(log))
    for fn in (lambda: pow_node._raw_saved_self.register_hooks(lambda t: t, lambda t: t),):
        try:
            fn()
        except RuntimeError as e:
            log.append(str(e))
    y.grad_fn._raw_saved_other.register_hooks(lambda t: log.append('pack2') or t,
                                              lambda t: log.append('unpack2') or t)
    y.sum().backward()
    log.append([round(v, 3) for v in x.grad.tolist()])
    try:
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as e:
        log.append(str(e))
    w = x * x  # a hook on one slot; the other keeps its in-place check
    w.grad_fn._raw_saved_self.register_hooks(lambda t: t.detach().clone(), lambda t: t)
    with mod.no_grad():
        x.mul_(1)
    try:
        w.sum().backward()
    except RuntimeError as e:
        log.append(str(e).split('\n')[0].replace('torch', 'leafgrad'))  # (leafgrad's second line: where)
    return log


def test_raw_saved_register_hooks_match_torch():
    assert _raw_saved_log(lg) == _raw_saved_log(torch)


def test_callbacks_queued_during_backward_run_after_it_as_in_torch():
    # (DistributedDataParallel waits for its last all-reduce in such a callback)
    lg_msg, torch_msg = raises_like(lambda: lg.autograd.engine.queue_callback(lambda: None),
                                    lambda: torch.autograd.Variable._execution_engine.queue_callback(lambda: None))
    assert lg_msg == torch_msg

    def run(L, queue):
        log = []
        w = L.ones(3, requires_grad=True)
        v = L.ones(3, requires_grad=True)

        def on_w(p):
            log.append('w')
            queue(lambda: log.append(('callback', v.grad is not None)))
        w.register_post_accumulate_grad_hook(on_w)
        v.register_post_accumulate_grad_hook(lambda p: log.append('v'))
        ((w * 2).sum() * (v * 3).sum()).backward()
        return log
    assert run(lg, lg.autograd.engine.queue_callback) == \
        run(torch, torch.autograd.Variable._execution_engine.queue_callback)


_SQUEEZES = {
    'squeeze()': lambda T, x: x.squeeze(), 'squeeze(0)': lambda T, x: x.squeeze(0),
    'squeeze(-1)': lambda T, x: x.squeeze(-1), 'squeeze((0, -1))': lambda T, x: x.squeeze((0, -1)),
    'squeeze(1), nothing squeezed': lambda T, x: x.squeeze(1), 'unsqueeze(-1)': lambda T, x: x.unsqueeze(-1),
    'unsqueeze(0)': lambda T, x: x.unsqueeze(0), 'squeeze_()': lambda T, x: (x * 1).squeeze_(),
    'squeeze_(-1)': lambda T, x: (x * 1).squeeze_(-1), 'squeeze_((0, 2))': lambda T, x: (x * 1).squeeze_((0, 2)),
    'unsqueeze_(-1)': lambda T, x: (x * 1).unsqueeze_(-1), '1-D @ 2-D': lambda T, x: x[0, :, 0] @ T.ones(2, 3, dtype=T.float64),
}


def _history(fn, depth):
    """The names of ``depth`` nodes down the first edges, and the squeeze nodes' saved values."""
    names = []
    while fn is not None and len(names) < depth:
        kept = 'queeze' in type(fn).__name__
        names.append((type(fn).__name__, {a: getattr(fn, a) for a in ('_saved_dim', '_saved_self_sym_sizes')
                                          if kept and hasattr(fn, a)}))
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


@pytest.mark.parametrize('name', list(_SQUEEZES))
def test_squeeze_and_unsqueeze_nodes_as_pytorch(name):
    """squeeze's and unsqueeze's nodes keep what PyTorch's keep (_saved_dim as given, a negative
    one read as an unsigned 64-bit number, as PyTorch's; _saved_self_sym_sizes), and a gradient
    through squeeze made with create_graph is recorded as PyTorch's unsqueeze_to: one unsqueeze a
    squeezed dim (it had been one reshape, ViewBackward0)."""
    def run(T):
        x = T.tensor([[[0.5], [-1.0]]], dtype=T.float64, requires_grad=True)
        y = _SQUEEZES[name](T, x)
        (g,) = T.autograd.grad(y.exp().sum(), x, create_graph=True)
        return _history(y.grad_fn, 1), _history(g.grad_fn, 3), tuple(g.shape), g.tolist()
    mine, theirs = run(lg), run(torch)
    assert mine[:3] == theirs[:3] and np.allclose(mine[3], theirs[3], rtol=1e-15)


_SOFTMAXES = {
    'softmax': lambda T, x: x.softmax(-1), 'log_softmax': lambda T, x: x.log_softmax(1),
    'softmax along dim 0': lambda T, x: T.nn.functional.softmax(x, 0),
    'log_softmax along dim 0': lambda T, x: T.nn.functional.log_softmax(x, 0),
    'cross_entropy': lambda T, x: T.nn.functional.cross_entropy(x, T.tensor([0, 2])),
}


@pytest.mark.parametrize('name', list(_SOFTMAXES))
def test_softmax_gradients_with_create_graph_are_one_node_as_pytorch(name):
    """With create_graph, softmax's and log_softmax's gradients are recorded as PyTorch's one node
    (SoftmaxBackwardDataBackward0, LogSoftmaxBackwardDataBackward0, with _saved_grad_output and
    _saved_output), not as their parts; second and third derivatives through them are PyTorch's
    (log_softmax's by the incoming gradient is its map's transpose), and forward mode over them."""
    def run(T):
        x = T.tensor([[0.3, -1.2, 2.0], [1.5, 0.1, -0.4]], dtype=T.float64, requires_grad=True)
        w = T.tensor([[1., 2., 3.], [-1., 0.5, 2.]], dtype=T.float64)
        y = _SOFTMAXES[name](T, x)
        (g,) = T.autograd.grad((y * (w if y.dim() == 2 else 1)).sum(), x, create_graph=True)
        fn = g.grad_fn
        saved = [getattr(fn, a).tolist() for a in ('_saved_grad_output', '_saved_output')]
        (h,) = T.autograd.grad((g * g).sum() + g.sum(), x, create_graph=True)
        (k,) = T.autograd.grad(h.sin().sum(), x)
        return type(fn).__name__, saved, g.tolist(), h.tolist(), k.tolist()
    mine, theirs = run(lg), run(torch)
    assert mine[0] == theirs[0]
    for a, b in zip(mine[1:], theirs[1:]):
        np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize('op', ['softmax', 'log_softmax'])
def test_softmax_gradient_nodes_forward_mode(op):
    def run(T):
        x = T.tensor([[0.3, -1.2, 2.0], [1.5, 0.1, -0.4]], dtype=T.float64, requires_grad=True)
        w = T.tensor([[1., 2., 3.], [-1., 0.5, 2.]], dtype=T.float64)

        def grad_of(x):
            (g,) = T.autograd.grad((getattr(x, op)(-1) * w).sum(), x, create_graph=True)
            return g
        return T.autograd.functional.jvp(grad_of, x, T.ones_like(x))[1].tolist()
    np.testing.assert_allclose(run(lg), run(torch), rtol=1e-10)


def _target(T):
    return T.tensor([0.1, 0.2, -0.3, 0.5, 0.0], dtype=T.float64)


_GRADIENT_OPS = {
    'gelu': lambda T, x: T.nn.functional.gelu(x),
    'gelu tanh': lambda T, x: T.nn.functional.gelu(x, approximate='tanh'),
    'elu': lambda T, x: T.nn.functional.elu(x, 0.7),
    'selu': lambda T, x: T.selu(x),
    'celu': lambda T, x: T.celu(x, 0.3),
    'elu_': lambda T, x: T.nn.functional.elu(x * 1, inplace=True),
    'celu_': lambda T, x: T.nn.functional.celu(x * 1, 0.3, inplace=True),
    'softplus': lambda T, x: T.nn.functional.softplus(x, beta=2.0, threshold=3.0),
    'logsigmoid': lambda T, x: T.nn.functional.logsigmoid(x),
    'hardswish': lambda T, x: T.nn.functional.hardswish(x * 2),
    'mse_loss': lambda T, x: T.nn.functional.mse_loss(x, _target(T)),
    'mse_loss sum': lambda T, x: T.nn.functional.mse_loss(x, _target(T), reduction='sum'),
    'mse_loss none': lambda T, x: T.nn.functional.mse_loss(x, _target(T), reduction='none'),
    'mse_loss of the target': lambda T, x: T.nn.functional.mse_loss(_target(T), x),
    'mse_loss of both': lambda T, x: T.nn.functional.mse_loss(x, x.flip(0) * 0.5),
    'smooth_l1_loss': lambda T, x: T.nn.functional.smooth_l1_loss(x, _target(T), beta=0.5),
    'smooth_l1_loss none': lambda T, x: T.nn.functional.smooth_l1_loss(x, _target(T), reduction='none'),
    'smooth_l1_loss of both': lambda T, x: T.nn.functional.smooth_l1_loss(x, x.flip(0) * 0.5, reduction='sum'),
    'huber_loss': lambda T, x: T.nn.functional.huber_loss(x, _target(T), delta=0.5),
    'huber_loss of both': lambda T, x: T.nn.functional.huber_loss(x, x.flip(0) * 0.5, reduction='sum'),
    'nll_loss': lambda T, x: T.nn.functional.nll_loss(x.view(1, 5), T.tensor([1])),
    'nll_loss weighted': lambda T, x: T.nn.functional.nll_loss(
        x.view(1, 5), T.tensor([1]), weight=T.tensor([1., 2., 3., .5, 1.], dtype=T.float64)),
    'nll_loss none': lambda T, x: T.nn.functional.nll_loss(
        x.view(5, 1).expand(5, 2).log_softmax(1), T.tensor([1, 0, 1, -100, 0]), reduction='none'),
    'cross_entropy 2-d': lambda T, x: T.nn.functional.cross_entropy(
        x.view(1, 5, 1, 1).expand(2, 5, 1, 2) * 1, T.tensor([[[0, 3]], [[4, 1]]]), reduction='sum'),
}


def _fused_node(fn):
    """The first node down the first edges whose name says it is a gradient's own node."""
    while fn is not None and 'BackwardBackward' not in fn.name():
        fn = next((n for n, _ in fn.next_functions if n is not None), None)
    return fn


def _saved_values(fn):
    out = {}
    for a in sorted(dir(fn)):
        if a.startswith('_saved_') and a not in ('_saved_slot', '_saved_versions'):
            v = getattr(fn, a)
            out[a] = v.tolist() if hasattr(v, 'tolist') and not isinstance(v, (int, float, str, bool)) else v
    return out


@pytest.mark.parametrize('name', list(_GRADIENT_OPS))
def test_gradients_with_create_graph_are_one_node_as_pytorch(name):
    """With create_graph, the gradients of gelu, elu/selu/celu (and their in-place variants),
    softplus, logsigmoid, mse_loss and nll_loss are recorded as PyTorch's one node per gradient
    (GeluBackwardBackward0 ...), with its edges and saved values, not as their parts; second and
    third derivatives through them are PyTorch's, with the names of their last ops (an nll_loss
    gradient requires grad, its derivative by the input being zeros, as in PyTorch)."""
    def run(T):
        x = T.tensor([-1.5, 0.3, 2.0, 0.0, -0.0], dtype=T.float64, requires_grad=True)
        w = T.tensor([1., 2., 3., 0.5, -1.0], dtype=T.float64)
        y = _GRADIENT_OPS[name](T, x)
        (g,) = T.autograd.grad((y * 1.5).sum(), x, create_graph=True)
        fused = _fused_node(g.grad_fn)
        found = [g.grad_fn.name(), fused.name(), name_tree(fused)[1], _saved_values(fused), g.tolist(),
                 g.requires_grad]
        (h,) = T.autograd.grad((g * w).sum(), x, create_graph=True, allow_unused=True)
        found += [h.grad_fn.name() if h.grad_fn is not None else None, h.tolist()]
        if h.requires_grad:
            (k,) = T.autograd.grad((h * w).sum() + (h * h).sum(), x, allow_unused=True)
            found.append(k.tolist())
        return found
    mine, theirs = run(lg), run(torch)
    assert mine[:3] == theirs[:3] and mine[5:7] == theirs[5:7], (mine, theirs)
    assert mine[3].keys() == theirs[3].keys()
    for a, b in zip(mine[3].values(), theirs[3].values()):
        if isinstance(b, list):
            np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-6)
        else:
            assert a == b and type(a) is type(b), (a, b)
    for a, b in zip(mine[4:5] + mine[7:], theirs[4:5] + theirs[7:]):
        np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-10, atol=1e-14)
    assert len(mine) == len(theirs)


@pytest.mark.parametrize('name', ['gelu', 'gelu tanh', 'elu', 'celu', 'softplus', 'logsigmoid', 'mse_loss of both'])
def test_gradient_nodes_gradcheck_and_forward_mode(name):
    """The one-node gradients differentiate as their finite differences (float64 gradcheck of
    the gradient), and forward mode and vmap over them run the ops they are composed of."""
    f = _GRADIENT_OPS[name]

    def gradient(T):
        def grad_of(x):
            (g,) = T.autograd.grad((f(T, x) * 1.5).sum(), x, create_graph=True)
            return g
        return grad_of
    x = lg.tensor([-1.5, 0.3, 2.0, 0.7, -0.2], dtype=lg.float64, requires_grad=True)
    assert lg.autograd.gradcheck(gradient(lg), (x,))
    assert lg.autograd.gradgradcheck(gradient(lg), (x,))

    def jvp(T):
        x = T.tensor([-1.5, 0.3, 2.0, 0.7, -0.2], dtype=T.float64, requires_grad=True)
        return T.autograd.functional.jvp(gradient(T), x, T.ones_like(x))[1].tolist()
    np.testing.assert_allclose(jvp(lg), jvp(torch), rtol=1e-10)


@pytest.mark.parametrize('name', list(_GRADIENT_OPS))
def test_gradient_nodes_by_the_incoming_gradient(name):
    """A one-node gradient differentiated by the incoming gradient: the op's gradient again
    (nll_loss's: nll_loss of it; a reduced mse_loss's: a sum), as PyTorch's."""
    def run(T):
        x = T.tensor([-1.5, 0.3, 2.0, 0.0, -0.4], dtype=T.float64, requires_grad=True)
        y = _GRADIENT_OPS[name](T, x)
        v = T.linspace(0.5, 2.0, y.numel(), dtype=T.float64).view(y.shape).requires_grad_()
        (g,) = T.autograd.grad(y, x, v, create_graph=True)
        (dv,) = T.autograd.grad((g * T.tensor([1., 2., 3., 0.5, -1.0], dtype=T.float64)).sum(), v,
                                create_graph=True)
        return dv.grad_fn.name() if dv.grad_fn is not None else None, dv.tolist()
    mine, theirs = run(lg), run(torch)
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(np.array(mine[1], dtype=float), np.array(theirs[1], dtype=float), rtol=1e-12)


_SAVED_VALUES = {
    'add': lambda T, x: x + x, 'add alpha': lambda T, x: T.add(x, x, alpha=2),
    'add float alpha': lambda T, x: T.add(x, x, alpha=0.5), 'sub alpha': lambda T, x: T.sub(x, x, alpha=2),
    'rsub': lambda T, x: 1 - x, 'flip': lambda T, x: x.flip(-1, 0), 'permute': lambda T, x: x.permute(-1, 0, 1),
    'movedim': lambda T, x: x.movedim(-1, 0),
    'sum': lambda T, x: x.sum(), 'sum dim': lambda T, x: x.sum(-1), 'sum dims': lambda T, x: x.sum((0, -1), keepdim=True),
    'mean': lambda T, x: x.mean(), 'mean dims': lambda T, x: x.mean((-1, 0), keepdim=True),
    'prod dim': lambda T, x: x.prod(-1), 'logsumexp': lambda T, x: x.logsumexp(-1), 'amax': lambda T, x: x.amax(-1),
    'amin all': lambda T, x: x.amin(), 'cumsum': lambda T, x: x.cumsum(-1), 'cumprod': lambda T, x: x.cumprod(1),
    'norm': lambda T, x: x.norm(dim=1), 'norm 3': lambda T, x: x.norm(3.0),
    'vector_norm': lambda T, x: T.linalg.vector_norm(x, 1, (0, -1)),
    'cat': lambda T, x: T.cat([x, x], -2), 'stack': lambda T, x: T.stack([x, x], -1),
    'roll': lambda T, x: x.roll((1, -1), (0, -1)), 'roll flat': lambda T, x: x.roll(1),
    'pad': lambda T, x: T.nn.functional.pad(x, (-1, 2)), 'expand': lambda T, x: x.expand(2, 2, 3, 4),
    'slice': lambda T, x: x[:, 1:3], 'slice open': lambda T, x: x[:, -2:], 'slice step': lambda T, x: x[:, ::2],
    'slice far': lambda T, x: x[:, -10:2], 'narrow': lambda T, x: x.narrow(-1, -2, 2),
    'select': lambda T, x: x.select(1, -1), 'index int': lambda T, x: x[-1], 'index mixed': lambda T, x: x[0, 1:, -1],
    'split': lambda T, x: x.split(2, -1)[1], 'chunk': lambda T, x: x.chunk(2, -1)[1],
    'split_with_sizes': lambda T, x: x.split([1, 2], 1)[1], 'unbind': lambda T, x: x.unbind(-1)[0],
    'diagonal': lambda T, x: x.diagonal(-1, -2, 0), 'transpose': lambda T, x: x.transpose(-1, 0),
    'unfold': lambda T, x: x.unfold(-1, 2, 1), 'as_strided': lambda T, x: x.as_strided((2, 2), (1, 2), 1),
    'view': lambda T, x: x.view(-1), 'reshape': lambda T, x: x.reshape(4, -1), 'repeat': lambda T, x: x.repeat(2, 1, 1, 1),
    'tril': lambda T, x: x.tril(-1), 'softmax': lambda T, x: x.softmax(-1), 'log_softmax': lambda T, x: x.log_softmax(1),
    'max dim': lambda T, x: x.max(-1)[0], 'median dim': lambda T, x: x.median(1, keepdim=True)[0],
    'kthvalue': lambda T, x: x.kthvalue(2, 1)[0], 'sort': lambda T, x: x.sort()[0], 'topk': lambda T, x: x.topk(2, 1)[0],
    'gather': lambda T, x: x.gather(-1, T.zeros(2, 3, 1, dtype=T.long)),
    'index_select': lambda T, x: x.index_select(-1, T.tensor([3, 0])),
    'masked_fill': lambda T, x: x.masked_fill(x > 1, 0.5),
    'scatter_add': lambda T, x: T.zeros(2, 3, 4, dtype=T.float64).scatter_add(2, T.zeros(2, 3, 1, dtype=T.long), x[..., :1]),
    'index_add': lambda T, x: T.zeros(2, 3, 4, dtype=T.float64).index_add(2, T.tensor([1]), x[..., :1], alpha=2),
    'addcmul': lambda T, x: T.addcmul(x, x, x * 2, value=0.5), 'addcdiv': lambda T, x: T.addcdiv(x, x, x + 1, value=2),
    'trace': lambda T, x: x[0, :, :3].trace(),
    'hardtanh': lambda T, x: T.nn.functional.hardtanh(x, -1, 2), 'threshold': lambda T, x: T.nn.functional.threshold(x, 1, 0.5),
    'softplus': lambda T, x: T.nn.functional.softplus(x, 2), 'softplus default': lambda T, x: T.nn.functional.softplus(x),
    'gelu': lambda T, x: T.nn.functional.gelu(x, approximate='tanh'),
    'mse_loss': lambda T, x: T.nn.functional.mse_loss(x, x.detach() * 0, reduction='sum'),
    'smooth_l1_loss': lambda T, x: T.nn.functional.smooth_l1_loss(x, x.detach() * 0, beta=0.5),
    'nll_loss': lambda T, x: T.nn.functional.nll_loss(x[0], T.tensor([1, 0, 3]), ignore_index=3),
    'max_pool2d': lambda T, x: T.nn.functional.max_pool2d(x, 2),
    'max_pool2d overlapping': lambda T, x: T.nn.functional.max_pool2d(x[None], (3, 2), 2, 1, (1, 2), True),
    'max_pool1d': lambda T, x: T.nn.functional.max_pool1d(x, 3, 1),
    'MaxPool2d': lambda T, x: T.nn.MaxPool2d(2)(x), 'avg_pool2d': lambda T, x: T.nn.functional.avg_pool2d(x, 2),
    'avg_pool2d padded': lambda T, x: T.nn.functional.avg_pool2d(x[None], 3, 2, 1, True, False, 2),
    'avg_pool1d': lambda T, x: T.nn.functional.avg_pool1d(x, 2), 'AvgPool2d': lambda T, x: T.nn.AvgPool2d(3, padding=1)(x),
    'binary_cross_entropy': lambda T, x: T.nn.functional.binary_cross_entropy(x.sigmoid(), x.detach().sigmoid()),
    'binary_cross_entropy weighted': lambda T, x: T.nn.functional.binary_cross_entropy(
        x.sigmoid(), x.detach().sigmoid(), weight=x.detach() + 1, reduction='sum'),
    'binary_cross_entropy_with_logits': lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(
        x, x.detach().sigmoid(), pos_weight=T.tensor([1., 2., 3., 4.], dtype=T.float64)),
    'soft_margin_loss': lambda T, x: T.nn.functional.soft_margin_loss(x, x.detach().sign()),
    'glu': lambda T, x: T.nn.functional.glu(x, -1), 'prelu': lambda T, x: T.nn.functional.prelu(
        x, T.tensor([0.1, 0.2, 0.3], dtype=T.float64, requires_grad=True)),
    'prelu one weight': lambda T, x: T.nn.functional.prelu(x[0, 0], T.tensor([0.25], dtype=T.float64)),
    'pixel_shuffle': lambda T, x: T.nn.functional.pixel_shuffle(x.reshape(1, 4, 3, 2), 2),
    'pixel_unshuffle': lambda T, x: T.nn.functional.pixel_unshuffle(x.reshape(1, 1, 4, 6), 2),
    'diag_embed': lambda T, x: T.diag_embed(x, 1, 0, 2), 'diag': lambda T, x: T.diag(x[0, 0], -1),
    'rot90': lambda T, x: T.rot90(x, 3, (2, 0)),
    'cross_entropy probabilities': lambda T, x: T.nn.functional.cross_entropy(x[0], x[1].detach().softmax(1)),
    'cross_entropy probabilities, no rows': lambda T, x: T.nn.functional.cross_entropy(
        x[0, :0], x[1, :0].detach().softmax(1)),
    'embedding': lambda T, x: T.nn.functional.embedding(T.tensor([1, 2]), x[0]),
    'embedding padding': lambda T, x: T.nn.functional.embedding(T.tensor([1, 2]), x[0], padding_idx=-2),
    'div floor': lambda T, x: T.div(x, x + 1, rounding_mode='floor'),
    'div trunc by a number': lambda T, x: T.div(x, 2.5, rounding_mode='trunc'),
    'xlogy of a number': lambda T, x: T.xlogy(2.0, x + 1), 'xlogy by a number': lambda T, x: T.xlogy(x, 3.0),
    'logaddexp': lambda T, x: T.logaddexp(x, x * 2), 'copysign': lambda T, x: T.copysign(x, x - 1),
    'fmax': lambda T, x: T.fmax(x, x * 0.5), 'fmin': lambda T, x: T.fmin(x, 1 - x),
    'hardshrink': lambda T, x: T.nn.functional.hardshrink(x, 0.4), 'softshrink': lambda T, x: T.nn.functional.softshrink(x, 0.3),
    'silu': lambda T, x: T.nn.functional.silu(x), 'mish': lambda T, x: T.nn.functional.mish(x),
    'logsigmoid': lambda T, x: T.nn.functional.logsigmoid(x), 'hardswish': lambda T, x: T.nn.functional.hardswish(x),
    'hardsigmoid': lambda T, x: T.nn.functional.hardsigmoid(x),
    'aminmax': lambda T, x: T.aminmax(x, dim=-1, keepdim=True)[0], 'aminmax all': lambda T, x: T.aminmax(x)[1],
    'var': lambda T, x: x.var(), 'var unbiased': lambda T, x: x.var(False), 'var dim': lambda T, x: x.var(-1),
    'var correction': lambda T, x: x.var((0, -1), correction=2, keepdim=True), 'std': lambda T, x: x.std(),
    'std dim': lambda T, x: x.std(0, unbiased=False), 'var_mean': lambda T, x: T.var_mean(x, 1)[0],
    'std_mean': lambda T, x: T.std_mean(x, (0, 1), correction=0)[0],
    'cummax': lambda T, x: x.cummax(-1)[0], 'cummin': lambda T, x: x.cummin(0)[0],
    'logcumsumexp': lambda T, x: x.logcumsumexp(-1), 'nansum': lambda T, x: x.nansum(), 'nansum dim': lambda T, x: x.nansum(1, True),
    'conv2d': lambda T, x: T.nn.functional.conv2d(x[None], x[:, :2, :2].reshape(1, 2, 2, 2).repeat(3, 1, 1, 1),
                                                  padding=1, stride=2),
    'conv_transpose1d': lambda T, x: T.nn.functional.conv_transpose1d(
        x, x[0, :, :2].reshape(3, 1, 2).repeat(1, 2, 1), T.ones(2, dtype=T.float64), stride=2, padding=1,
        output_padding=1),
}


@pytest.mark.parametrize('name', list(_SAVED_VALUES))
def test_nodes_show_what_they_saved_as_pytorch(name):
    """A node's _saved_<name> attributes are PyTorch's: its dims and sizes as given (a negative
    int64 read back unsigned), its numbers, flags and saved tensors; dir() lists the same names."""
    def run(T):
        x = T.arange(24., dtype=T.float64).view(2, 3, 4).div(7).requires_grad_()
        fn = _SAVED_VALUES[name](T, x).grad_fn
        names = [a for a in dir(fn) if a.startswith('_saved_')]
        values, tensors = {}, {}
        for a in names:
            v = getattr(fn, a)
            if isinstance(v, T.Tensor):
                values[a], tensors[a] = (tuple(v.shape), str(v.dtype).split('.')[-1]), v.detach().numpy()
            else:
                values[a] = v
        return fn.name(), names, values, tensors
    mine, theirs = run(lg), run(torch)
    assert mine[:3] == theirs[:3]
    for a in mine[3]:
        np.testing.assert_allclose(mine[3][a], theirs[3][a], rtol=1e-12)


@pytest.mark.parametrize('expr', ['2 % x', 'T.remainder(2.5, x)'])
def test_a_number_modulo_a_tensor_has_no_derivative_as_in_pytorch(expr):
    """``number % tensor`` (PyTorch's remainder.Scalar_Tensor) records PyTorch's NotImplemented
    node, one edge, and its backward raises PyTorch's error (leafgrad had differentiated it)."""
    def run(T):
        x = T.tensor([1.5, 2.5, -3.0], requires_grad=True)
        y = eval(expr, {'T': T, 'x': x})
        fn = y.grad_fn
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        return type(fn).__name__, len(fn.next_functions), y.tolist(), str(info.value)
    assert run(lg) == run(torch)
