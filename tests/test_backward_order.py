"""The order backward runs things in, checked directly: the nodes of diamond-shaped graphs
(ready nodes run newest first: highest sequence number), and, at one node, tensor hooks,
retain_grad, node pre-hooks, the derivative, node post-hooks, leaf hooks and post-accumulate
hooks. Each trace is compared with the order PyTorch documents and, where torch is installed,
with torch's own trace of the same program."""
import math

import pytest

import leafgrad as lg

try:
    import torch
except ImportError:
    torch = None

LIBS = ['leafgrad', pytest.param('torch', marks=pytest.mark.skipif(torch is None, reason='needs the torch oracle'))]


def _lib(name):
    return lg if name == 'leafgrad' else torch


def _node_order(T, build):
    """Names of the nodes in the order backward runs them (a pre-hook on every node)."""
    x = T.tensor([0.5, 1.5], dtype=T.float64, requires_grad=True)
    out = build(T, x)
    order, seen, stack = [], set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: order.append(node.name()))
        stack.extend(n for n, _ in node.next_functions)
    out.sum().backward()
    return order, x.grad.tolist()


def _diamond(T, x):
    # x -> a; two branches of unequal length from a; joined
    a = x * 2
    b = a.exp().cos()       # older branch: ExpBackward0, CosBackward0
    c = a.sin()             # newer branch: SinBackward0
    return b + c


def _diamond_newer_long(T, x):
    a = x * 2
    b = a.sin()             # older, short
    c = a.exp().cos().tanh()  # newer, long
    return c * b


def _two_diamonds(T, x):
    a = x.exp()
    b = a * 3
    c = a.sqrt()
    d = b + c               # first diamond joins
    e = d.sigmoid()
    f = d.neg()
    g = d.abs()
    return (e - f) * g      # second diamond, three branches


def _shared_leaf(T, x):
    # the leaf itself is the fork: its AccumulateGrad waits for both branches
    return x.exp() + x.sin().cos()


GRAPHS = {
    'diamond': (_diamond, ['AddBackward0', 'SinBackward0', 'CosBackward0', 'ExpBackward0', 'MulBackward0',
                           'torch::autograd::AccumulateGrad']),
    'diamond-newer-long': (_diamond_newer_long, ['MulBackward0', 'TanhBackward0', 'CosBackward0', 'ExpBackward0',
                                                 'SinBackward0', 'MulBackward0',
                                                 'torch::autograd::AccumulateGrad']),
    'two-diamonds': (_two_diamonds, ['MulBackward0', 'SubBackward0', 'AbsBackward0', 'NegBackward0',
                                     'SigmoidBackward0', 'AddBackward0', 'SqrtBackward0', 'MulBackward0',
                                     'ExpBackward0', 'torch::autograd::AccumulateGrad']),
    'shared-leaf': (_shared_leaf, ['AddBackward0', 'CosBackward0', 'SinBackward0', 'ExpBackward0',
                                   'torch::autograd::AccumulateGrad']),
}


@pytest.mark.parametrize('lib', LIBS)
@pytest.mark.parametrize('graph', list(GRAPHS))
def test_diamond_nodes_run_newest_first(lib, graph):
    build, expected = GRAPHS[graph]
    order, _ = _node_order(_lib(lib), build)
    assert [n.replace('leafgrad::', 'torch::') for n in order] == expected


@pytest.mark.skipif(torch is None, reason='needs the torch oracle')
@pytest.mark.parametrize('graph', list(GRAPHS))
def test_diamond_order_and_gradients_like_torch(graph):
    build, _ = GRAPHS[graph]
    lo, lgrad = _node_order(lg, build)
    to, tgrad = _node_order(torch, build)
    assert [n.replace('leafgrad::', 'torch::') for n in lo] == to
    assert lgrad == pytest.approx(tgrad, rel=1e-12)


def _hook_trace(T, hooks_first):
    """Every kind of hook on one graph, each recording its name and the gradient it sees."""
    events = []
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y * y

    def tensor_hook(name, factor):
        def hook(g):
            events.append((name, g.tolist()))
            return g * factor
        return hook

    def record(name):
        def hook(*args):
            events.append((name, [None if g is None else g.tolist() for g in args[-1]]))
        return hook

    if not hooks_first:
        y.retain_grad()
    y.register_hook(tensor_hook('y hook 1', 2))
    y.register_hook(tensor_hook('y hook 2', 10))
    if hooks_first:
        y.retain_grad()
    y.grad_fn.register_prehook(record('y node pre-hook'))
    y.grad_fn.register_hook(record('y node post-hook'))
    z.grad_fn.register_prehook(record('z node pre-hook'))
    z.retain_grad()
    z.register_hook(tensor_hook('z hook', 1))
    x.register_hook(tensor_hook('x hook', 1))
    x.register_post_accumulate_grad_hook(lambda p: events.append(('x post-accumulate', p.grad.tolist())))
    z.sum().backward()
    return events, y.grad.tolist(), z.grad.tolist(), x.grad.tolist()


# y's gradient 2*y = [6, 12] arrives; its hooks make it x2 then x10; retain_grad stores what the
# hooks leave ([120, 240]), whichever was registered first; then y's node runs.
EXPECTED_HOOKS = (
    [('z hook', [1.0, 1.0]), ('z node pre-hook', [[1.0, 1.0]]),
     ('y hook 1', [6.0, 12.0]), ('y hook 2', [12.0, 24.0]), ('y node pre-hook', [[120.0, 240.0]]),
     ('y node post-hook', [[120.0, 240.0]]),
     ('x hook', [360.0, 720.0]), ('x post-accumulate', [360.0, 720.0])],
    [120.0, 240.0], [1.0, 1.0], [360.0, 720.0])


@pytest.mark.parametrize('lib', LIBS)
@pytest.mark.parametrize('hooks_first', [True, False], ids=['hooks-then-retain', 'retain-then-hooks'])
def test_hook_and_retain_order(lib, hooks_first):
    assert _hook_trace(_lib(lib), hooks_first) == EXPECTED_HOOKS


@pytest.mark.skipif(torch is None, reason='needs the torch oracle')
@pytest.mark.parametrize('hooks_first', [True, False], ids=['hooks-then-retain', 'retain-then-hooks'])
def test_hook_and_retain_order_like_torch(hooks_first):
    assert _hook_trace(lg, hooks_first) == _hook_trace(torch, hooks_first)


@pytest.mark.parametrize('lib', LIBS)
def test_retained_grad_of_a_fork_sums_both_branches_after_hooks(lib):
    """A non-leaf used twice: its hook and retain_grad see the sum of both branches, once."""
    T = _lib(lib)
    x = T.tensor([1.0, -2.0], requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()) or g + 1)
    y.retain_grad()
    (y.exp() + y * 3).sum().backward()
    assert len(seen) == 1
    assert seen[0] == pytest.approx([math.exp(2) + 3, math.exp(-4) + 3])
    assert y.grad.tolist() == pytest.approx([s + 1 for s in seen[0]])
