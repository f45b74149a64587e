"""leafgrad.autograd.memory_report: bytes a graph holds, checked against what torch saves."""
import numpy as np
import pytest

import leafgrad as lg
import leafgrad.nn as lnn
from leafgrad.autograd import memory_report

torch = pytest.importorskip('torch')


def torch_saved(fn):
    """Run fn() under saved_tensors_hooks: {storage ptr: nbytes} of every saved tensor."""
    storages = {}

    def pack(t):
        st = t.untyped_storage()
        storages[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, storages


def _mlp_pair(dtype=np.float32):
    lm = lnn.Sequential(lnn.Linear(4, 8), lnn.ReLU(), lnn.Linear(8, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    with torch.no_grad():
        for (_, lp), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
            tp.copy_(torch.tensor(lp.detach().numpy()))
    x = np.random.randn(16, 4).astype(dtype)
    return lm, tm, x


def test_mlp_totals_match_torch():
    lm, tm, x = _mlp_pair()
    # x requires grad, so every addmm needs both of its matrices (torch saves only what is
    # needed, and with a constant x the first weight is not)
    lx, tx = lg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    loss = (lm(lx) * lm(lx)).mean()
    tloss, storages = torch_saved(lambda: (tm(tx) * tm(tx)).mean())
    rep = memory_report(loss)
    assert rep.total_bytes == sum(storages.values())
    leaf_ptrs = {p.untyped_storage().data_ptr() for p in tm.parameters()} | {tx.untyped_storage().data_ptr()}
    assert rep.leaf_bytes == sum(n for ptr, n in storages.items() if ptr in leaf_ptrs)
    assert rep.freed_by_backward == rep.total_bytes - rep.leaf_bytes > 0
    assert rep.nodes == 12 and rep.leaves == 5 and rep.freed_nodes == 0
    assert rep.grad_bytes == sum(p.numel() * 4 for p in tm.parameters()) + tx.numel() * 4
    assert np.isclose(loss.item(), tloss.item(), rtol=1e-5)


def test_elementwise_chain_per_node_and_roles():
    w = lg.tensor(np.ones((3, 5), np.float64), requires_grad=True)
    data = lg.tensor(np.ones((3, 5), np.float64))
    h = (w * data).exp()
    loss = h.sum()
    rep = memory_report(loss)
    assert [(s.node, s.role, s.shape, s.nbytes) for s in rep.saved] == [
        ('ExpBackward0', 'output', (3, 5), 120), ('MulBackward0', 'leaf', (3, 5), 120)]
    assert rep.per_node == [('ExpBackward0', 120), ('MulBackward0', 120)]
    assert (rep.total_bytes, rep.leaf_bytes, rep.freed_by_backward) == (240, 120, 120)
    tw = torch.ones(3, 5, dtype=torch.float64, requires_grad=True)
    _, storages = torch_saved(lambda: (tw * torch.ones(3, 5, dtype=torch.float64)).exp().sum())
    # torch also saves only the operand w's gradient needs (data), and exp's result
    assert sum(storages.values()) == rep.total_bytes
    text = str(rep)
    assert 'intermediates (backward() frees them): 120 B' in text and 'ExpBackward0' in text


def test_backward_frees_and_retain_graph_keeps():
    w = lg.ones(4, 4, requires_grad=True)
    loss = (w.exp() * 2).tanh().sum()
    before = memory_report(loss)
    assert before.freed_nodes == 0 and before.total_bytes > 0
    loss.backward(retain_graph=True)
    kept = memory_report(loss)
    assert kept.total_bytes == before.total_bytes and kept.grad_bytes == 0
    loss.backward()
    after = memory_report(loss)
    assert after.total_bytes == 0 and after.saved == []
    # exp and tanh freed their saved tensors; `* 2` its saved scalar (torch saves it as a tensor)
    assert after.freed_nodes == sum(1 for name, _ in before.per_node) + 1 == 3
    assert 'already released by a backward()' in str(after)


def test_views_share_storage():
    base = lg.ones(8, 8, requires_grad=True)
    a = base * 1
    loss = (a[:4] * a[4:]).sum()      # two views of one array are saved: counted once
    rep = memory_report(loss)
    assert rep.total_bytes == 8 * 8 * 4
    assert sum(s.nbytes for s in rep.saved) == 8 * 8 * 4


def test_roots_without_graph_and_several_roots():
    assert memory_report(lg.ones(2)).total_bytes == 0
    w = lg.ones(3, requires_grad=True)
    y1, y2 = w.exp(), w.tanh()
    rep = memory_report(y1, y2)
    assert rep.nodes == 2 and rep.total_bytes == 24 and rep.leaves == 1
    import leafgrad.autograd as ag
    assert ag.memory_report is memory_report


def test_a_kept_report_keeps_no_memory_alive():
    import gc
    import weakref
    x = lg.ones(3, requires_grad=True)
    y = x.exp()
    loss = y.sum()
    ref = weakref.ref(loss.grad_fn)
    rep = memory_report(loss)
    del y, loss
    gc.collect()
    assert ref() is None and rep.total_bytes == 12 and rep.saved[0].node == 'ExpBackward0'
