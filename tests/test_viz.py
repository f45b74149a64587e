"""leafgrad.viz.draw: the DOT text node by node, agreement with torch's graph, rendering."""
import re
import shutil
import time

import numpy as np
import pytest

import leafgrad as lg
import leafgrad.nn as lnn
from leafgrad import viz

torch = pytest.importorskip('torch')

needs_dot = pytest.mark.skipif(shutil.which('dot') is None, reason="Graphviz's dot is not installed "
                               '(apt-get install graphviz, brew install graphviz or conda install graphviz)')


def _lesson_graph(retain=False, hook=False):
    w = lg.tensor([1., 2., 3.], requires_grad=True)
    data = lg.tensor([10., 10., 10.])
    h = w * 2
    if retain:
        h.retain_grad()
    h2 = (h * data).exp()
    if hook:
        h2.register_hook(lambda g: g * 1)
    loss = h2.sum()
    return w, data, h, h2, loss


def _dot_nodes(src):
    """{node id: (label, attrs text)} parsed back from the DOT text."""
    out = {}
    for m in re.finditer(r'^\s+(n\d+) \[label="((?:[^"\\]|\\.)*)", (.*)\];$', src, re.M):
        out[m.group(1)] = (m.group(2).replace('\\n', '\n'), m.group(3))
    return out


def _dot_edges(src):
    return re.findall(r'^\s+(n\d+) -> (n\d+)(?: \[(.*)\])?;$', src, re.M)


def test_lesson_graph_node_by_node():
    w, data, h, h2, loss = _lesson_graph()
    g = viz.draw(loss, params=dict(w=w, data=data, loss=loss))
    nodes = _dot_nodes(g.source)
    labels = {lab: attrs for lab, attrs in nodes.values()}
    # the leaf that keeps .grad: a green box named from params
    assert labels['w\n[3] float32\n.grad: None'] == 'shape="box", style="filled", fillcolor="#b2f2bb"'
    # the leaf that asked for no gradient, found among the tensors MulBackward0 saved
    assert labels['data\n[3] float32\nno gradient'] == 'shape="box", style="dashed", fillcolor="white"'
    assert labels['AccumulateGrad'].endswith('fillcolor="#a5d8ff"')
    assert 'loss\n[] float32\ngrad passes, freed' in labels
    assert 'fillcolor="#dee2e6"' in labels['MulBackward0']          # w * 2 saves nothing
    assert labels['MulBackward0\nsaved 12 B'].startswith('shape="box", style="rounded,filled"')
    assert 'ExpBackward0\nsaved 12 B' in labels                      # exp saves its result
    assert 'saved: output of ExpBackward0\n[3] float32\n12 B' in labels
    assert 'SumBackward0' in labels
    assert len(nodes) == len(g.nodes) == 9
    # edges follow the forward computation: w -> AccumulateGrad -> MulBackward0 -> ...
    ids = {lab: nid for nid, (lab, _) in nodes.items()}
    edges = {(a, b): attrs for a, b, attrs in _dot_edges(g.source)}
    assert (ids['w\n[3] float32\n.grad: None'], ids['AccumulateGrad']) in edges
    assert (ids['AccumulateGrad'], ids['MulBackward0']) in edges
    assert (ids['MulBackward0'], ids['MulBackward0\nsaved 12 B']) in edges
    assert (ids['SumBackward0'], ids['loss\n[] float32\ngrad passes, freed']) in edges
    assert 'dotted' in edges[(ids['data\n[3] float32\nno gradient'], ids['MulBackward0\nsaved 12 B'])]
    assert 'dotted' in edges[(ids['saved: output of ExpBackward0\n[3] float32\n12 B'], ids['ExpBackward0\nsaved 12 B'])]
    assert len(edges) == len(g.edges) == 8


def test_retained_and_hooks():
    w, data, h, h2, loss = _lesson_graph(retain=True, hook=True)
    w.register_hook(lambda g: g)
    g = viz.draw(loss, params=dict(w=w, h=h, h2=h2))
    h_node = g.node('h\n')
    assert h_node.kind == 'retained' and '.grad: None (kept at backward)' in h_node.label
    h2_node = g.node('h2\n')
    assert h2_node.kind == 'intermediate'
    hooks = g.nodes_of('hook')
    assert len(hooks) == 2
    targets = {b for a, b, kind, _ in g.edges if kind == 'hook'}
    assert targets == {h2_node.id, g.node('w\n').id}
    assert '#ffec99' in g.source and 'shape="cds"' in g.source
    # the retained tensor sits on the edge MulBackward0 -> h -> MulBackward0(saved)
    flows = {(a, b) for a, b, kind, _ in g.edges if kind == 'flow'}
    assert (g.node('MulBackward0\n').id, h_node.id) not in flows
    assert (h_node.id, g.node('MulBackward0\nsaved').id) in flows
    loss.backward()
    g2 = viz.draw(loss, params=dict(w=w, h=h))
    assert g2.node('h\n').label.endswith('.grad: kept [3]')
    assert g2.node('w\n').label.endswith('.grad: kept [3]')


def test_unnamed_hook_attaches_to_its_op():
    x = lg.ones(2, requires_grad=True)
    y = x.exp()
    y.register_hook(lambda g: g)
    g = viz.draw(y.sum())
    hook = g.nodes_of('hook')[0]
    assert hook.label.startswith('hook on output 0')
    assert [b for a, b, k, _ in g.edges if a == hook.id] == [g.node('ExpBackward0').id]


def test_freed_after_backward_and_kept_with_retain_graph():
    w, data, h, h2, loss = _lesson_graph()
    loss.backward(retain_graph=True)
    g = viz.draw(loss)
    assert not g.nodes_of('op_freed') and len(g.nodes_of('saved')) == 1
    loss.backward()
    g = viz.draw(loss, params=dict(w=w))
    freed = sorted(n.label for n in g.nodes_of('op_freed'))
    assert freed == ['ExpBackward0\nsaved tensors freed'] + ['MulBackward0\nsaved tensors freed'] * 2
    assert not g.nodes_of('saved')                      # nothing is saved any more
    assert 'style="rounded,dashed,filled"' in g.source
    assert g.node('w\n').label == 'w\n[3] float32\n.grad: kept [3]'
    # torch agrees that exactly these nodes lost their saved tensors
    tw = torch.tensor([1., 2., 3.], requires_grad=True)
    tl = (tw * 2 * torch.tensor([10., 10., 10.])).exp().sum()
    tl.backward()
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        tl.grad_fn.next_functions[0][0]._saved_result
    times_two = tl.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
    assert times_two.name() == 'MulBackward0'
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        times_two._saved_other  # the Python scalar 2, saved as a tensor and freed
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        loss.grad_fn.next_functions[0][0].saved_tensors


def test_show_saved_false():
    *_, loss = _lesson_graph()
    g = viz.draw(loss, show_saved=False)
    assert not g.nodes_of('saved') and not g.nodes_of('leaf_nograd')
    assert all(kind != 'saved' for _, _, kind, _ in g.edges)


def test_node_names_match_torch_for_an_mlp():
    lm = lnn.Sequential(lnn.Linear(4, 8), lnn.ReLU(), lnn.Linear(8, 2), lnn.Sigmoid())
    x = np.random.randn(5, 4).astype(np.float32)
    loss = lm(lg.tensor(x)).sum()
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2), torch.nn.Sigmoid())
    tloss = tm(torch.tensor(x)).sum()
    g = viz.draw(loss, params=dict(lm.named_parameters()))
    ours = sorted(n.label.split('\n')[0] for n in g.nodes if n.kind in ('op', 'accumulate'))
    theirs = []
    stack, seen = [tloss.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        theirs.append(fn.name().split('::')[-1])
        stack.extend(f for f, _ in fn.next_functions if f is not None)
    assert ours == sorted(theirs)
    names = sorted(n.label.split('\n')[0] for n in g.nodes_of('leaf_grad'))
    assert names == sorted(name for name, _ in tm.named_parameters())


def test_saved_arrays_drawn_once_and_views_of_weights_named():
    model = lnn.Sequential(lnn.Linear(4, 3), lnn.ReLU(), lnn.Linear(3, 1))
    out = model(lg.randn(2, 4)).sum()
    g = viz.draw(out, params=dict(model.named_parameters()))
    saved = sorted(n.label for n in g.nodes_of('saved'))
    # the first layer's weight view is not saved: its input needs no grad (torch agrees below)
    assert saved == ['saved: output of ReluBackward0\n[2, 3] float32\n24 B',
                     'saved: output of TBackward0\nmemory of 2.weight\n[3, 1] float32\n12 B']
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    first = tmodel(torch.randn(2, 4)).grad_fn.next_functions[1][0].next_functions[0][0]
    assert first.name() == 'AddmmBackward0' and first._saved_mat2 is None
    assert out.grad_fn.next_functions[0][0].next_functions[1][0].next_functions[0][0]._saved_mat2 is None
    relu_out = g.node('saved: output of ReluBackward0').id
    heads = sorted(g.node_by_id(b).label.split('\n')[0] for a, b, k, _ in g.edges if a == relu_out)
    assert heads == ['AddmmBackward0', 'ReluBackward0']


def test_graph_without_history_and_leaf_root():
    d = lg.ones(2)
    g = viz.draw(d, params=dict(d=d))
    assert [n.kind for n in g.nodes] == ['leaf_nograd'] and not g.edges
    w = lg.ones(2, requires_grad=True)
    g = viz.draw(w)
    assert [n.kind for n in g.nodes] == ['leaf_grad']
    with pytest.raises(TypeError):
        viz.draw(np.ones(2))


def test_fifty_layer_mlp_is_fast_and_iterative():
    layers = []
    for _ in range(50):
        layers += [lnn.Linear(16, 16), lnn.ReLU()]
    model = lnn.Sequential(*layers)
    loss = model(lg.randn(4, 16)).sum()
    t0 = time.perf_counter()
    g = viz.draw(loss, params=dict(model.named_parameters()))
    src = g.source
    assert time.perf_counter() - t0 < 1.0
    assert len(g.nodes_of('leaf_grad')) == 100 and len(g.nodes_of('accumulate')) == 100
    assert src.count('AddmmBackward0') == 50


def test_deep_chain_needs_no_recursion():
    x = lg.ones(1, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1
    g = viz.draw(y)
    assert len(g.nodes_of('op')) == 5000


def test_legend_documents_every_kind():
    src = viz.legend().source
    for kind in viz.STYLES:
        assert f'legend_{kind}' in src


@needs_dot
def test_svg_and_png_rendering(tmp_path):
    w, data, h, h2, loss = _lesson_graph(retain=True)
    g = viz.draw(loss, params=dict(w=w, h=h))
    svg = g._repr_svg_()
    assert svg.lstrip().startswith('<?xml') and '<svg' in svg and 'AccumulateGrad' in svg
    path = g.render(str(tmp_path / 'g.png'))
    assert open(path, 'rb').read(8) == b'\x89PNG\r\n\x1a\n'
    dot_path = g.render(str(tmp_path / 'g.dot'))
    assert open(dot_path).read() == g.source


@needs_dot
def test_rendering_without_the_graphviz_package_runs_dot(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, 'graphviz', None)   # `import graphviz` now fails
    svg = viz.draw(lg.ones(2, requires_grad=True).exp().sum()).pipe('svg')
    assert b'<svg' in svg and b'ExpBackward0' in svg


@pytest.mark.parametrize('without_package', [False, True])
def test_missing_dot_is_a_clear_error(monkeypatch, tmp_path, without_package):
    if without_package:
        import sys
        monkeypatch.setitem(sys.modules, 'graphviz', None)
    monkeypatch.setenv('PATH', str(tmp_path))          # no dot anywhere
    g = viz.draw(lg.ones(1, requires_grad=True).exp())
    with pytest.raises(viz.GraphvizNotFound, match="Graphviz's `dot` program"):
        g.pipe('svg')
    assert g._repr_svg_() is None                        # Jupyter falls back to repr
    assert str(g).startswith('digraph')                  # DOT text needs nothing


def test_a_kept_drawing_does_not_keep_the_graph_alive():
    import gc
    import weakref
    x = lg.ones(3, requires_grad=True)
    y = x.exp()
    loss = y.sum()
    ref = weakref.ref(loss.grad_fn)
    saved = weakref.ref(y)
    g = viz.draw(loss, params=dict(x=x, y=y))
    del y, loss
    gc.collect()
    assert ref() is None and saved() is None and len(g.nodes) > 3
