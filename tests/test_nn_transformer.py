"""Transformer, TransformerDecoder(Layer), the causal mask and MultiheadAttention's options
(add_bias_kv, add_zero_attn, kdim/vdim, need_weights, masks, is_causal) against torch, on the same
weights: torch and leafgrad seeded alike construct equal weights."""
import os
import warnings

import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg
from test_nn_modules import run_both

tnn, lnn = torch.nn, lg.nn
CORPUS = '/work/corpus/pytorch+examples'


def randn(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape)


def both_seeded(make, seed=0):
    """make(torch) and make(leafgrad), each after manual_seed(seed)."""
    torch.manual_seed(seed)
    tm = make(torch)
    lg.manual_seed(seed)
    lm = make(lg)
    return lm, tm


def same_params(lm, tm):
    tp = dict(tm.named_parameters())
    lp = dict(lm.named_parameters())
    assert list(lp) == list(tp)
    for name, p in tp.items():
        assert np.array_equal(lp[name].detach().numpy(), p.detach().numpy()), name


@pytest.mark.parametrize('kw', [{}, dict(norm_first=True), dict(activation='gelu'), dict(bias=False),
                                dict(batch_first=True)])
def test_transformer_weights_values_and_grads(kw):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        lm, tm = both_seeded(lambda T: T.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, **kw))
    same_params(lm, tm)
    assert repr(lm) == repr(tm)
    src, tgt = randn(5, 3, 8).astype(np.float32), randn(4, 3, 8).astype(np.float32)
    if kw.get('batch_first'):
        src, tgt = src.transpose(1, 0, 2).copy(), tgt.transpose(1, 0, 2).copy()
    outs, grads = [], []
    for T, m in ((torch, tm), (lg, lm)):
        s, t = T.tensor(src, requires_grad=True), T.tensor(tgt, requires_grad=True)
        mask = m.generate_square_subsequent_mask(4)
        kpm = T.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
        out = m(s, t, tgt_mask=mask, src_key_padding_mask=kpm, memory_key_padding_mask=kpm)
        (out * T.tensor(randn(*out.shape).astype(np.float32))).sum().backward()
        outs.append(out)
        grads.append([s.grad, t.grad] + [p.grad for p in m.parameters()])
    assert_same(outs[1], outs[0], rtol=1e-4, atol=1e-5)
    for lgr, tgr in zip(grads[1], grads[0]):
        assert_same(lgr, tgr, rtol=1e-4, atol=1e-5)


def test_generate_square_subsequent_mask():
    for args in [(4,), (1,), (3, None, torch.float64)]:
        t = tnn.Transformer.generate_square_subsequent_mask(*args)
        largs = args[:2] + ((lg.float64,) if len(args) > 2 else ())
        lt = lnn.Transformer.generate_square_subsequent_mask(*largs)
        assert_same(lt, t)


def test_decoder_layer_and_decoder():
    def make(nn):
        layer = nn.TransformerDecoderLayer(6, 3, 10, dropout=0.0)
        return nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(6))
    causal = np.triu(np.full((4, 4), -np.inf), 1)

    def masked(nn):
        lib = torch if nn is tnn else lg
        m = make(nn)
        orig = m.forward
        m.forward = lambda t, mem: orig(t, mem, tgt_mask=lib.tensor(causal), tgt_is_causal=True)
        return m
    lm, tm = run_both(make, [randn(4, 2, 6), randn(5, 2, 6)], rtol=1e-6, atol=1e-7)
    assert repr(lm) == repr(tm)
    run_both(masked, [randn(4, 2, 6), randn(5, 2, 6)], rtol=1e-6, atol=1e-7)
    run_both(lambda nn: nn.TransformerDecoderLayer(6, 2, 8, dropout=0.0, norm_first=True, batch_first=True),
             [randn(2, 4, 6), randn(2, 3, 6)], rtol=1e-6, atol=1e-7)
    # unbatched
    run_both(lambda nn: nn.TransformerDecoderLayer(6, 2, 8, dropout=0.0), [randn(4, 6), randn(3, 6)])


def test_transformer_errors():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        lm, tm = both_seeded(lambda T: T.nn.Transformer(8, 2, 1, 1, 8))
    for s, t in [((5, 3, 8), (4, 2, 8)), ((5, 3, 8), (4, 3, 6))]:
        a, b = raises_like(lambda: lm(lg.zeros(s), lg.zeros(t)), lambda: tm(torch.zeros(s), torch.zeros(t)))
        assert same_message(a, b)
    a, b = raises_like(lambda: lnn.TransformerDecoderLayer(4, 2, activation='tanh'),
                       lambda: tnn.TransformerDecoderLayer(4, 2, activation='tanh'))
    assert same_message(a, b)


def test_encoder_nested_tensor_warning():
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter('always')
        tnn.TransformerEncoder(tnn.TransformerEncoderLayer(4, 2), 1)
    with warnings.catch_warnings(record=True) as lw:
        warnings.simplefilter('always')
        lnn.TransformerEncoder(lnn.TransformerEncoderLayer(4, 2), 1)
    assert [str(w.message) for w in lw] == [str(w.message) for w in tw] and len(tw) == 1
    for layer in ['nn.TransformerEncoderLayer(6, 3, batch_first=True)',
                  'nn.TransformerEncoderLayer(4, 2, batch_first=True, norm_first=True)',
                  'nn.TransformerEncoderLayer(4, 2, batch_first=True, activation=lambda x: x)']:
        msgs = []
        for nn in (tnn, lnn):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter('always')
                nn.TransformerEncoder(eval(layer, {'nn': nn}), 1)
            msgs.append([str(x.message) for x in w])
        assert msgs[0] == msgs[1]


def test_encoder_eval_with_padding_zeroes_padded_positions():
    """torch runs an eval-mode encoder with a key-padding mask on nested tensors: padded positions
    come out as zeros before the final norm."""
    def make(T):
        layer = T.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
        return T.nn.TransformerEncoder(layer, 2, norm=T.nn.LayerNorm(4)).eval()
    lm, tm = both_seeded(make)
    x = randn(2, 5, 4).astype(np.float32)
    kpm = np.array([[False] * 5, [False] * 3 + [True] * 2])
    for grad in (False, True):
        with torch.set_grad_enabled(grad), lg.set_grad_enabled(grad):
            to = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
            lo = lm(lg.tensor(x), src_key_padding_mask=lg.tensor(kpm))
        assert_same(lo, to, rtol=1e-4, atol=1e-5)
    # not left-aligned padding: no nested tensors
    kpm = np.array([[False] * 5, [True] + [False] * 4])
    with torch.no_grad(), lg.no_grad():
        assert_same(lm(lg.tensor(x), src_key_padding_mask=lg.tensor(kpm)),
                    tm(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm)), rtol=1e-4, atol=1e-5)


# ---- MultiheadAttention's options ----------------------------------------------------------------
@pytest.mark.parametrize('kw', [dict(add_bias_kv=True), dict(add_zero_attn=True),
                                dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5),
                                dict(add_zero_attn=True, bias=False, batch_first=True)])
@pytest.mark.parametrize('need_weights', [True, False])
def test_mha_options(kw, need_weights):
    L, S, N, E = 4, 5, 2, 6
    lm, tm = both_seeded(lambda T: T.nn.MultiheadAttention(E, 2, **kw))
    same_params(lm, tm)
    kd, vd = kw.get('kdim', E), kw.get('vdim', E)
    q, k, v = randn(L, N, E), randn(S, N, kd), randn(S, N, vd)
    if kw.get('batch_first'):
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    mask = np.triu(np.ones((L, S), dtype=bool), 1)
    kpm = np.zeros((N, S), dtype=bool)
    kpm[1, -2:] = True

    def make(nn):
        lib = torch if nn is tnn else lg
        m = nn.MultiheadAttention(E, 2, **kw)
        orig = m.forward
        m.forward = lambda q, k, v: orig(q, k, v, key_padding_mask=lib.tensor(kpm), attn_mask=lib.tensor(mask),
                                         need_weights=need_weights, average_attn_weights=False)
        return m
    run_both(make, [q, k, v])
    run_both(lambda nn: nn.MultiheadAttention(E, 3, **kw), [q, k, v])
    # unbatched
    if not kw.get('batch_first'):
        run_both(lambda nn: nn.MultiheadAttention(E, 3, **kw), [q[:, 0], k[:, 0], v[:, 0]])


def test_mha_dropout_draws_as_torch():
    def make(nn):
        m = nn.MultiheadAttention(6, 2, dropout=0.5, add_bias_kv=True)
        orig = m.forward
        m.forward = lambda q: orig(q, q, q)
        return m
    torch.manual_seed(3)
    lg.manual_seed(3)
    run_both(make, [randn(4, 2, 6).astype(np.float32)], dtype=np.float32, rtol=1e-5, atol=1e-6)


def test_mha_gradcheck_float64():
    lg.manual_seed(0)
    m = lnn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5).double()
    q = lg.randn(3, 2, 4, dtype=lg.float64, requires_grad=True)
    k = lg.randn(2, 2, 3, dtype=lg.float64, requires_grad=True)
    v = lg.randn(2, 2, 5, dtype=lg.float64, requires_grad=True)
    assert lg.autograd.gradcheck(lambda q, k, v: m(q, k, v)[0], (q, k, v))
    assert lg.autograd.gradcheck(lambda q, bk: m(q, k, v)[1], (q, m.bias_k))


@pytest.mark.parametrize('case', ['mask2d', 'mask3d', 'mask4d', 'kpm', 'kpm_dim', 'int_mask', 'causal_no_mask',
                                  'key_rank', 'query_rank'])
def test_mha_errors(case):
    E = 4
    args = dict(mask2d=((3, 2, E), (5, 2, E), dict(attn_mask=(3, 4))),
                mask3d=((3, 2, E), (5, 2, E), dict(attn_mask=(3, 3, 5))),
                mask4d=((3, 2, E), (5, 2, E), dict(attn_mask=(1, 4, 3, 5))),
                kpm=((3, 2, E), (5, 2, E), dict(key_padding_mask=(2, 4))),
                kpm_dim=((3, 2, E), (5, 2, E), dict(key_padding_mask=(2,))),
                int_mask=((3, 2, E), (5, 2, E), dict(attn_mask=(3, 5), int=True)),
                causal_no_mask=((3, 2, E), (5, 2, E), dict(is_causal=True)),
                key_rank=((3, 2, E), (5, E), {}),
                query_rank=((2, 3, 2, E), (5, 2, E), {}))[case]
    qs, ks, extra = args

    def call(T, m):
        kw = {}
        for name in ('attn_mask', 'key_padding_mask'):
            if name in extra:
                kw[name] = T.zeros(extra[name], dtype=T.int64 if extra.get('int') else T.float32)
        if 'is_causal' in extra:
            kw['is_causal'] = True
        return m(T.zeros(qs), T.zeros(ks), T.zeros(ks), **kw)
    lm, tm = both_seeded(lambda T: T.nn.MultiheadAttention(E, 2))
    a, b = raises_like(lambda: call(lg, lm), lambda: call(torch, tm))
    assert same_message(a, b), (a, b)


def test_functional_multi_head_attention_forward():
    lm, tm = both_seeded(lambda T: T.nn.MultiheadAttention(4, 2, add_bias_kv=True))
    q = randn(3, 2, 4).astype(np.float32)
    outs = []
    for T, m in ((torch, tm), (lg, lm)):
        x = T.tensor(q)
        outs.append(T.nn.functional.multi_head_attention_forward(
            x, x, x, 4, 2, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, True, 0.0, m.out_proj.weight,
            m.out_proj.bias, training=False, need_weights=True, average_attn_weights=False))
    assert_same(outs[1][0], outs[0][0])
    assert_same(outs[1][1], outs[0][1])


# ---- pytorch/examples' word_language_model, its model.py as written -----------------------------
def _load_model_py(lib):
    path = os.path.join(CORPUS, 'word_language_model', 'model.py')
    if not os.path.exists(path):
        pytest.skip('no corpus of real PyTorch programs here (pytorch/examples is not on this machine)')
    src = open(path).read()
    if lib == 'leafgrad':
        src = (src.replace('import torch.nn.functional as F', 'import leafgrad.nn.functional as F')
               .replace('import torch.nn as nn', 'import leafgrad.nn as nn')
               .replace('import torch\n', 'import leafgrad as torch\n'))
    namespace = {'__name__': f'model_{lib}'}
    exec(compile(src, path, 'exec'), namespace)
    return namespace


@pytest.mark.parametrize('kind', ['Transformer', 'LSTM', 'GRU', 'RNN_TANH'])
@pytest.mark.parametrize('train', [False, True])
def test_word_language_model(kind, train):
    tmod, lmod = _load_model_py('torch'), _load_model_py('leafgrad')
    ntoken, bptt, bsz = 50, 7, 3

    def make(mod):
        if kind == 'Transformer':
            return mod['TransformerModel'](ntoken, 16, 2, 16, 2, dropout=0.2)
        return mod['RNNModel'](kind, ntoken, 16, 16, 2, dropout=0.2, tie_weights=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        torch.manual_seed(1)
        tm = make(tmod)
        lg.manual_seed(1)
        lm = make(lmod)
    same_params(lm, tm)
    tm.train(train)
    lm.train(train)
    data = np.random.default_rng(0).integers(0, ntoken, (bptt, bsz))
    target = np.random.default_rng(1).integers(0, ntoken, (bptt * bsz,))
    results = []
    torch.manual_seed(2)
    lg.manual_seed(2)
    for T, m in ((torch, tm), (lg, lm)):
        m.zero_grad()
        if kind == 'Transformer':
            out = m(T.tensor(data))
            loss = T.nn.functional.nll_loss(out.view(-1, ntoken), T.tensor(target))
            hidden = None
        else:
            out, hidden = m(T.tensor(data), m.init_hidden(bsz))
            loss = T.nn.functional.nll_loss(out, T.tensor(target))
        loss.backward()
        results.append((out, loss, hidden, {n: p.grad for n, p in m.named_parameters()}))
    (to, tl, th, tg), (lo, ll, lh, lgr) = results
    assert_same(lo, to, rtol=1e-4, atol=1e-5)
    assert_same(ll, tl, rtol=1e-5, atol=1e-6)
    for name in tg:
        assert_same(lgr[name], tg[name], rtol=1e-4, atol=1e-5)
