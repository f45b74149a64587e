"""nn.utils.rnn (pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence,
unpad/unpack_sequence, PackedSequence) and PackedSequence through RNN/LSTM/GRU, LSTM's proj_size:
against torch on equal seeded weights (values, lengths, gradients, errors)."""
import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg

tnn, lnn = torch.nn, lg.nn
trnn = torch.nn.utils.rnn
lrnn = lg.nn.utils.rnn


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def seqs(lengths, feat=3, dtype=np.float64):
    return [randn(n, feat, seed=i).astype(dtype) for i, n in enumerate(lengths)]


def both(arrays, requires_grad=True):
    t = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    lgt = [lg.tensor(a, requires_grad=requires_grad) for a in arrays]
    return lgt, t


def same_packed(lp, tp):
    assert type(lp).__name__ == 'PackedSequence'
    assert_same(lp.data, tp.data)
    assert_same(lp.batch_sizes, tp.batch_sizes)
    for a, b in ((lp.sorted_indices, tp.sorted_indices), (lp.unsorted_indices, tp.unsorted_indices)):
        assert_same(a, b)


@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('padding_side', ['right', 'left'])
def test_pad_sequence(batch_first, padding_side):
    ls, ts = both(seqs([4, 2, 5, 1]))
    lo = lrnn.pad_sequence(ls, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    to = trnn.pad_sequence(ts, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    assert_same(lo, to)
    w = randn(*to.shape, seed=9)
    (lo * lg.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    for a, b in zip(ls, ts):
        assert_same(a.grad, b.grad)


@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('enforce_sorted', [True, False])
@pytest.mark.parametrize('lengths', [[5, 3, 3, 1], [2, 5, 1, 5], [4]])
def test_pack_pad_roundtrip(batch_first, enforce_sorted, lengths):
    if enforce_sorted and lengths != sorted(lengths, reverse=True):
        lengths = sorted(lengths, reverse=True)
    T, B = max(lengths), len(lengths)
    x = randn(B, T, 3) if batch_first else randn(T, B, 3)
    (lx,), (tx,) = both([x])
    for as_tensor in (False, True):
        ll = lg.tensor(lengths) if as_tensor else lengths
        tl = torch.tensor(lengths) if as_tensor else lengths
        lp = lrnn.pack_padded_sequence(lx, ll, batch_first=batch_first, enforce_sorted=enforce_sorted)
        tp = trnn.pack_padded_sequence(tx, tl, batch_first=batch_first, enforce_sorted=enforce_sorted)
        same_packed(lp, tp)
    for total in (None, T + 2):
        lo, llen = lrnn.pad_packed_sequence(lp, batch_first=batch_first, padding_value=0.5, total_length=total)
        to, tlen = trnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=0.5, total_length=total)
        assert_same(lo, to)
        assert_same(llen, tlen)
    w = randn(*to.shape, seed=4)
    (lo * lg.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    assert_same(lx.grad, tx.grad)


def test_pack_sequence_unpack_unpad():
    for enforce_sorted, lengths in ((True, [4, 3, 1]), (False, [1, 4, 2])):
        ls, ts = both(seqs(lengths))
        lp = lrnn.pack_sequence(ls, enforce_sorted=enforce_sorted)
        tp = trnn.pack_sequence(ts, enforce_sorted=enforce_sorted)
        same_packed(lp, tp)
        for a, b in zip(lrnn.unpack_sequence(lp), trnn.unpack_sequence(tp)):
            assert_same(a, b)
    for bf in (False, True):
        padded = randn(3, 4, 2) if bf else randn(4, 3, 2)
        lo = lrnn.unpad_sequence(lg.tensor(padded), lg.tensor([4, 2, 1]), batch_first=bf)
        to = trnn.unpad_sequence(torch.tensor(padded), torch.tensor([4, 2, 1]), batch_first=bf)
        assert len(lo) == len(to)
        for a, b in zip(lo, to):
            assert_same(a, b)


def test_packed_sequence_object():
    lp = lrnn.pack_sequence([lg.tensor([1., 2.]), lg.tensor([3.])])
    tp = trnn.pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])])
    assert repr(lp).replace('leafgrad', 'torch') == repr(tp)
    assert_same(lp.double().data, tp.double().data)
    assert lp.to(lg.float32) is lp and tp.to(torch.float32) is tp
    d, b, s, u = lp
    assert_same(b, tp.batch_sizes)
    assert isinstance(lp, tuple) and lp._fields == tp._fields
    assert_same(lrnn.invert_permutation(lg.tensor([2, 0, 1])), trnn.invert_permutation(torch.tensor([2, 0, 1])))
    assert lrnn.invert_permutation(None) is None


@pytest.mark.parametrize('case', ['unsorted', 'zero', 'count', 'lengths2d', 'empty', 'iterable', 'side', 'shape',
                                  'total'])
def test_errors(case):
    def run(T, R):
        x = T.zeros(4, 3, 2)
        if case == 'unsorted':
            return R.pack_padded_sequence(x, [2, 3, 1])
        if case == 'zero':
            return R.pack_padded_sequence(x, [3, 2, 0])
        if case == 'count':
            return R.pack_padded_sequence(x, [3, 2])
        if case == 'lengths2d':
            return R.pack_padded_sequence(x, T.tensor([[3, 2, 1]]))
        if case == 'empty':
            return R.pad_sequence([])
        if case == 'iterable':
            return R.pad_sequence(3)
        if case == 'side':
            return R.pad_sequence([T.zeros(2)], padding_side='x')
        if case == 'shape':
            return R.pad_sequence([T.zeros(2, 3), T.zeros(3, 2)])
        if case == 'total':
            return R.pad_packed_sequence(R.pack_padded_sequence(x, [3, 2, 1]), total_length=2)
    a, b = raises_like(lambda: run(lg, lrnn), lambda: run(torch, trnn))
    assert same_message(a, b), (a, b)


# ---- PackedSequence through the recurrent layers --------------------------------------------------
@pytest.mark.parametrize('cls', ['RNN', 'LSTM', 'GRU'])
@pytest.mark.parametrize('kw', [{}, dict(num_layers=2, bidirectional=True), dict(batch_first=True, num_layers=2)])
@pytest.mark.parametrize('enforce_sorted', [True, False])
@pytest.mark.parametrize('with_hx', [False, True])
def test_recurrent_layers_take_packed_sequences(cls, kw, enforce_sorted, with_hx):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(3, 4, **kw).double()
    lg.manual_seed(0)
    lm = getattr(lnn, cls)(3, 4, **kw).double()
    bf = kw.get('batch_first', False)
    x = randn(4, 5, 3) if bf else randn(5, 4, 3)
    D = 2 if kw.get('bidirectional') else 1
    L = kw.get('num_layers', 1)
    h0 = randn(L * D, 4, 4, seed=3)
    c0 = randn(L * D, 4, 4, seed=5)
    results = []
    for T, R, m in ((torch, trnn, tm), (lg, lrnn, lm)):
        xin = T.tensor(x, requires_grad=True)
        packed = R.pack_padded_sequence(xin, lengths, batch_first=bf, enforce_sorted=enforce_sorted)
        hx = None
        if with_hx:
            hx = T.tensor(h0, requires_grad=True)
            if cls == 'LSTM':
                hx = (hx, T.tensor(c0, requires_grad=True))
        out, hidden = m(packed, hx)
        padded, lens = R.pad_packed_sequence(out, batch_first=bf)
        hs = hidden if cls == 'LSTM' else (hidden,)
        loss = (padded * T.tensor(randn(*padded.shape, seed=7))).sum()
        for i, h in enumerate(hs):
            loss = loss + (h * T.tensor(randn(*h.shape, seed=8 + i))).sum()
        loss.backward()
        grads = [xin.grad] + ([h.grad for h in (hx if cls == 'LSTM' else (hx,))] if with_hx else [])
        results.append((out, padded, lens, hs, grads, [p.grad for p in m.parameters()]))
    (to, tpad, tlen, ths, tg, tpg), (lo, lpad, llen, lhs, lgr, lpg) = results
    same_packed(lo, to)
    assert_same(lpad, tpad)
    assert_same(llen, tlen)
    for a, b in zip(lhs, ths):
        assert_same(a, b)
    for a, b in zip(lgr + lpg, tg + tpg):
        assert_same(a, b)


@pytest.mark.parametrize('kw', [dict(proj_size=2), dict(proj_size=3, num_layers=2, bidirectional=True),
                                dict(proj_size=1, batch_first=True, bias=False)])
def test_lstm_proj_size(kw):
    torch.manual_seed(0)
    tm = tnn.LSTM(3, 4, **kw).double()
    lg.manual_seed(0)
    lm = lnn.LSTM(3, 4, **kw).double()
    assert repr(lm) == repr(tm)
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for (n, a), b in zip(lm.named_parameters(), tm.parameters()):
        assert_same(a, b)
    x = randn(5, 2, 3)
    for packed in (False, True):
        outs = []
        for T, R, m in ((torch, trnn, tm), (lg, lrnn, lm)):
            m.zero_grad()
            xin = T.tensor(x, requires_grad=True)
            inp = R.pack_padded_sequence(xin, [5, 3]) if packed else xin
            out, (h, c) = m(inp)
            o = out.data if packed else out
            (o.sum() + (h * 2).sum() + (c * 3).sum()).backward()
            outs.append([o, h, c, xin.grad] + [p.grad for p in m.parameters()])
        for a, b in zip(outs[1], outs[0]):
            assert_same(a, b)
    # unbatched with a given state
    D = 2 if kw.get('bidirectional') else 1
    L = kw.get('num_layers', 1)
    P = kw['proj_size']
    for T, m, store in ((torch, tm, outs[0]), (lg, lm, outs[1])):
        store[:] = list(m(T.tensor(x[:, 0]), (T.tensor(randn(L * D, P)), T.tensor(randn(L * D, 4))))[1])
    for a, b in zip(outs[1], outs[0]):
        assert_same(a, b)


def test_lstm_proj_size_gradcheck():
    lg.manual_seed(0)
    m = lnn.LSTM(2, 3, proj_size=2, bidirectional=True).double()
    x = lg.randn(3, 2, 2, dtype=lg.float64, requires_grad=True)
    assert lg.autograd.gradcheck(lambda x, w: m(x)[0], (x, m.weight_hr_l0_reverse))
    packed = lambda x: m(lrnn.pack_padded_sequence(x, [3, 1]))[0].data  # noqa: E731
    assert lg.autograd.gradcheck(packed, (x,))


@pytest.mark.parametrize('case', ['neg', 'big', 'rnn', 'gru', 'hidden0', 'hidden1'])
def test_recurrent_errors(case):
    def run(nn, T, R):
        if case == 'neg':
            return nn.LSTM(3, 4, proj_size=-1)
        if case == 'big':
            return nn.LSTM(3, 4, proj_size=4)
        if case == 'rnn':
            return nn.RNN(3, 4, proj_size=2)
        if case == 'gru':
            return nn.GRU(3, 4, proj_size=2)
        m = nn.LSTM(3, 4, proj_size=2)
        if case == 'hidden0':
            return m(T.zeros(5, 2, 3), (T.zeros(1, 2, 4), T.zeros(1, 2, 4)))
        return m(T.zeros(5, 2, 3), (T.zeros(1, 2, 2), T.zeros(1, 2, 2)))  # hidden1
    a, b = raises_like(lambda: run(lnn, lg, lrnn), lambda: run(tnn, torch, trnn))
    assert same_message(a, b), (a, b)
