"""leafgrad.explain: every "Common mistakes" case of the lessons, and the normal cases.

Each test checks the facts the explanation states against what torch does with the same
program (is_leaf, requires_grad, whether .grad is None), then the reason and the advice.
"""
import warnings

import numpy as np
import pytest

import leafgrad as lg
import leafgrad.nn as lnn
from leafgrad.autograd import origins
from fresh import fresh_python_output

torch = pytest.importorskip('torch')


def facts(t):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return (t.is_leaf, t.requires_grad, t.grad is None)


def same_facts(lt, tt):
    assert facts(lt) == facts(tt)


@pytest.fixture
def fresh_session(monkeypatch):
    """A process in which no backward() has run yet."""
    monkeypatch.setattr(origins, 'walks', 0)


@pytest.fixture
def after_some_backward(monkeypatch):
    monkeypatch.setattr(origins, 'walks', max(origins.walks, 1))


def test_lesson_three_kinds_of_tensor():
    w, data = lg.tensor([1., 2., 3.], requires_grad=True), lg.tensor([10., 10., 10.])
    h = w * 2
    loss = (h * data).sum()
    tw, tdata = torch.tensor([1., 2., 3.], requires_grad=True), torch.tensor([10., 10., 10.])
    th = tw * 2
    tloss = (th * tdata).sum()
    loss.backward()
    tloss.backward()
    names = dict(w=w, data=data, h=h, loss=loss)
    for lt, tt in ((w, tw), (data, tdata), (h, th), (loss, tloss)):
        same_facts(lt, tt)
    e = lg.explain(w, names)
    assert e.reason == 'kept' and '`w` is a tensor of shape [3]' in e and 'is_leaf=True, requires_grad=True' in e
    assert 'zero it between steps' in e
    e = lg.explain(data, names)
    assert e.reason == 'no_grad_asked' and 'right for data and labels' in e
    e = h.explain(names)
    assert e.reason == 'non_leaf' and 'MulBackward0 produced it' in e and 'an input of MulBackward0 does: `w`' in e
    assert 'passes through' in e and 'retain_grad()' in e and 'It has 3 elements' in e
    assert loss.explain().reason == 'non_leaf'


def test_mistake_reading_grad_before_any_backward(fresh_session):
    model = lnn.Sequential(lnn.Linear(3, 2))
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 2))
    same_facts(model[0].weight, tmodel[0].weight)
    e = model[0].weight.explain(dict(model.named_parameters()))
    assert e.reason == 'no_backward_yet'
    assert '`0.weight` is an nn.Parameter' in e and 'because it is an nn.Parameter' in e
    assert 'healthy' in e


def test_mistake_grad_none_after_backward_means_never_reached(after_some_backward):
    w = lg.ones(3, requires_grad=True)
    other = lg.ones(3, requires_grad=True)
    unused_graph = (w * 2).sum()                      # uses w, but backward runs on another loss
    (other * 3).sum().backward()
    tw, to = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    (to * 3).sum().backward()
    same_facts(w, tw)
    e = w.explain()
    assert e.reason == 'not_reached' and 'not connected to it' in e
    lonely = lg.ones(2, requires_grad=True)
    assert lonely.explain().reason == 'never_used'
    del unused_graph


def test_mistake_rewrapping_with_tensor(after_some_backward):
    w = lg.tensor([1., 2., 3.], requires_grad=True)
    h = w * 2
    with pytest.warns(UserWarning, match='To copy construct from a tensor'):
        w2 = lg.tensor(h)
    tw = torch.tensor([1., 2., 3.], requires_grad=True)
    with pytest.warns(UserWarning, match='To copy construct from a tensor'):
        tw2 = torch.tensor(tw * 2)
    same_facts(w2, tw2)
    e = w2.explain()
    assert e.reason == 'tensor' and 're-wrapped with leafgrad.tensor(...)' in e
    assert 'from the output of MulBackward0' in e and 'test_explain.py:' in e
    assert 'detach().clone()' in e
    # the original leaf, re-wrapped and never used itself, points at its copy
    v = lg.ones(2, requires_grad=True)
    with pytest.warns(UserWarning):
        vc = lg.tensor(v)
    (vc * 2).sum()
    e = v.explain()
    assert e.reason == 'never_used' and 'A copy of it was made by leafgrad.tensor(...)' in e


def test_mistake_update_without_no_grad():
    w = lg.tensor([1., 2., 3.], requires_grad=True)
    (w * w).sum().backward()
    w = w - 0.1 * w.grad
    tw = torch.tensor([1., 2., 3.], requires_grad=True)
    (tw * tw).sum().backward()
    tw = tw - 0.1 * tw.grad
    same_facts(w, tw)
    e = w.explain(dict(w=w))
    assert e.reason == 'replaced' and 'w = w - lr * w.grad' in e and 'SubBackward0' in e
    assert 'with leafgrad.no_grad(): w -= lr * w.grad' in e
    # the right way keeps the same leaf and its .grad
    v = lg.tensor([1., 2., 3.], requires_grad=True)
    (v * v).sum().backward()
    with lg.no_grad():
        v -= 0.1 * v.grad
    assert v.is_leaf and v.explain().reason == 'kept'


def test_mistake_expecting_grad_on_every_requires_grad_tensor():
    a = lg.tensor(2.0, requires_grad=True)
    b = a * 3
    c = b + 1
    c.backward()
    ta = torch.tensor(2.0, requires_grad=True)
    tb = ta * 3
    tc = tb + 1
    tc.backward()
    for lt, tt in ((a, ta), (b, tb), (c, tc)):
        same_facts(lt, tt)
    e = b.explain()
    assert 'is_leaf=False, requires_grad=True' in e and '"gradient flows through me"' in e
    assert 'It has' not in e          # a scalar needs no gradient argument


def test_try_it_yourself_retain_grad():
    a = lg.tensor([1., 2.], requires_grad=True)
    b = a * 2
    b.retain_grad()
    assert b.explain().reason == 'retain_pending'
    c = b * 3
    c.sum().backward()
    ta = torch.tensor([1., 2.], requires_grad=True)
    tb = ta * 2
    tb.retain_grad()
    tc = tb * 3
    tc.sum().backward()
    for lt, tt in ((a, ta), (b, tb), (c, tc)):
        same_facts(lt, tt)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy())
    assert b.explain().reason == 'retained' and 'retain_grad() was called' in b.explain()
    assert c.explain().reason == 'non_leaf'


def test_detach_data_and_detach_():
    w = lg.ones(2, requires_grad=True)
    h = w * 2
    d, dd = h.detach(), w.data
    tw = torch.ones(2, requires_grad=True)
    same_facts(d, (tw * 2).detach())
    same_facts(dd, tw.data)
    e = d.explain()
    assert e.reason == 'detach' and 'made by detach()' in e and 'the output of MulBackward0' in e
    e = dd.explain()
    assert e.reason == 'data' and 'Prefer detach()' in e and 'a leaf that requires grad' in e
    h.detach_()
    th = tw * 2
    th.detach_()
    same_facts(h, th)
    assert h.explain().reason == 'detach_' and 'it was the output of MulBackward0' in h.explain()
    plain = lg.ones(2).detach()                      # detaching what needs no grad records nothing
    assert plain.explain().reason == 'no_grad_asked'


def test_no_grad_watched_and_unwatched():
    w = lg.ones(2, requires_grad=True)
    with lg.no_grad():
        u = w * 2
    assert u.explain().reason == 'no_grad_asked' and 'watch_no_grad' in u.explain()
    lg.explain.watch_no_grad(True)
    try:
        with lg.no_grad():
            v = w * 2
            s = lg.nn.functional.relu(w)
        with lg.inference_mode():
            i = w * 2
        g = w * 2                                    # grad mode on: a normal non-leaf
    finally:
        lg.explain.watch_no_grad(False)
    with torch.no_grad():
        tv = torch.ones(2, requires_grad=True) * 2
    same_facts(v, tv)
    e = v.explain()
    assert e.reason == 'no_grad' and 'computed under no_grad()' in e and 'test_explain.py:' in e
    assert s.explain().reason == 'no_grad'
    assert i.explain().reason == 'inference_mode'
    assert g.explain().reason == 'non_leaf'
    with lg.no_grad():
        later = w * 2
    assert later.explain().reason == 'no_grad_asked'  # watching is off again


def test_frozen_parameters_and_tensors():
    model = lnn.Linear(2, 2)
    model.requires_grad_(False)
    tmodel = torch.nn.Linear(2, 2).requires_grad_(False)
    same_facts(model.weight, tmodel.weight)
    e = model.weight.explain(dict(model.named_parameters()))
    assert e.reason == 'frozen' and 'requires_grad_(False) was called' in e and 'requires_grad_(True)' in e
    p = lnn.Parameter(lg.ones(2), requires_grad=False)
    assert p.explain().reason == 'frozen' and 'frozen nn.Parameter' in p.explain()


def test_integer_and_inference_tensors():
    idx = lg.tensor([1, 2])
    assert idx.explain().reason == 'not_float' and 'only floating point' in idx.explain()
    with lg.inference_mode():
        t = lg.ones(2)
    assert t.explain().reason == 'inference_mode'


def test_second_backward_and_hooks_are_mentioned():
    w = lg.ones(3, requires_grad=True)
    y = w.exp()
    y.register_hook(lambda g: g)
    loss = y.sum()
    loss.backward()
    e = y.explain()
    assert 'Trying to backward through the graph a second time' in e and '1 hook(s)' in e
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        loss.backward()
    tw = torch.ones(3, requires_grad=True)
    tl = tw.exp().sum()
    tl.backward()
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        tl.backward()


def test_names_and_many_leaves():
    model = lnn.Sequential(lnn.Linear(2, 3), lnn.ReLU(), lnn.Linear(3, 1))
    out = model(lg.ones(4, 2))
    e = out.explain(dict(model.named_parameters()))
    assert 'It depends on 4 leaf tensor(s) that require grad' in e
    for name in ('`0.weight`', '`0.bias`', '`2.weight`', '`2.bias`'):
        assert name in e


def test_explain_is_a_module_and_a_function_and_loads_lazily():
    import leafgrad.explain as mod
    assert callable(lg.explain) and lg.explain is mod
    assert lg.explain(lg.ones(1)).reason == mod.explain(lg.ones(1)).reason
    assert repr(lg.ones(1).explain()) == str(lg.ones(1).explain())
    with pytest.raises(TypeError):
        lg.explain(np.ones(2))
    code = 'import sys, leafgrad; print(any(m in sys.modules for m in ("leafgrad.explain", "leafgrad.viz", "leafgrad.autograd.memory")))'
    assert fresh_python_output(code) == 'False'


def test_loss_cut_upstream_quotes_the_backward_error():
    w = lg.ones(2, requires_grad=True)
    loss = (w.detach() * 2).sum()
    tw = torch.ones(2, requires_grad=True)
    tloss = (tw.detach() * 2).sum()
    same_facts(loss, tloss)
    e = loss.explain()
    assert e.reason == 'no_grad_asked' and 'the graph was cut upstream' in e
    with pytest.raises(RuntimeError) as ours:
        loss.backward()
    with pytest.raises(RuntimeError) as theirs:
        tloss.backward()
    assert str(ours.value) == str(theirs.value) and f'"{ours.value}"' in e


def test_non_leaf_given_to_backward_inputs_keeps_its_grad():
    w = lg.ones(2, requires_grad=True)
    h = w * 2
    (h * h).sum().backward(inputs=[h])
    tw = torch.ones(2, requires_grad=True)
    th = tw * 2
    (th * th).sum().backward(inputs=[th])
    same_facts(h, th)
    same_facts(w, tw)
    e = h.explain()
    assert e.reason == 'kept' and 'backward(inputs=[...])' in e
