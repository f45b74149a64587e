"""PixelShuffle/PixelUnshuffle, ChannelShuffle, RMSNorm, LocalResponseNorm, AdaptiveMaxPool1d/2d/3d,
MaxUnpool1d/2d/3d, LPPool1d/2d, EmbeddingBag against torch: values, gradients, reprs, errors."""
import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg
from test_nn_modules import run_both

tnn, lnn = torch.nn, lg.nn
TF, LF = torch.nn.functional, lg.nn.functional


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both_seeded(make, seed=0):
    torch.manual_seed(seed)
    tm = make(torch)
    lg.manual_seed(seed)
    return make(lg), tm


@pytest.mark.parametrize('make,shape', [
    ('PixelShuffle(2)', (2, 8, 3, 4)), ('PixelShuffle(3)', (9, 2, 2)), ('PixelUnshuffle(2)', (2, 3, 4, 6)),
    ('PixelUnshuffle(3)', (1, 2, 1, 6, 3)), ('ChannelShuffle(2)', (2, 6, 3)), ('ChannelShuffle(3)', (1, 6, 2, 2)),
    ('RMSNorm(4)', (3, 2, 4)), ('RMSNorm([2, 4], eps=1e-3)', (3, 2, 4)),
    ('RMSNorm(4, elementwise_affine=False)', (3, 4)), ('LocalResponseNorm(3)', (2, 5, 4)),
    ('LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0)', (2, 4, 3, 3)),
    ('AdaptiveMaxPool1d(3)', (2, 3, 7)), ('AdaptiveMaxPool2d((3, None))', (2, 5, 7)),
    ('AdaptiveMaxPool2d(4)', (1, 2, 9, 5)), ('AdaptiveMaxPool3d(2)', (2, 3, 5, 4, 6)),
    ('AdaptiveMaxPool3d((3, 1, 2))', (2, 5, 4, 7)), ('LPPool1d(2, 3, stride=2)', (2, 3, 9)),
    ('LPPool2d(1.5, (2, 3))', (1, 2, 6, 6)), ('LPPool3d(2, 2)', (1, 2, 4, 4, 4)),
    ('LPPool2d(float("inf"), 2)', (1, 2, 4, 4)), ('LPPool1d(-float("inf"), 3)', (2, 6)),
    ('LPPool3d(3, (1, 2, 2), stride=1)', (2, 3, 3, 3)), ('UpsamplingNearest2d(scale_factor=2)', (1, 2, 3, 3)),
    ('UpsamplingBilinear2d(size=(5, 4))', (1, 2, 3, 3))])
def test_layer_values_and_gradients(make, shape):
    x = np.abs(randn(*shape)) + 0.1 if 'LPPool' in make else randn(*shape)
    lm, tm = run_both(lambda nn: eval('nn.' + make, {'nn': nn}), [x])
    assert repr(lm) == repr(tm)


@pytest.mark.parametrize('n', [1, 2, 3])
def test_adaptive_max_pool_indices_and_unpool(n):
    shape = (2, 3) + (6, 4, 4)[:n]
    x = randn(*shape)
    outs = []
    for T, F, nn in ((torch, TF, tnn), (lg, LF, lnn)):
        xt = T.tensor(x, requires_grad=True)
        out, idx = getattr(F, f'adaptive_max_pool{n}d')(xt, 3, return_indices=True)
        pooled, pidx = getattr(nn, f'MaxPool{n}d')(2, return_indices=True)(xt)
        unpool = getattr(nn, f'MaxUnpool{n}d')(2)
        up = unpool(pooled, pidx)
        up2 = unpool(pooled, pidx, output_size=xt.shape)
        ((out * 2).sum() + (up * T.tensor(randn(*up.shape, seed=1))).sum() + up2.sum()).backward()
        outs.append((out, idx, up, up2, xt.grad))
    for a, b in zip(outs[1], outs[0]):
        assert_same(a, b)


@pytest.mark.parametrize('make', ['PairwiseDistance()', 'PairwiseDistance(p=1.0, keepdim=True)',
                                  'CosineSimilarity()', 'CosineSimilarity(dim=0, eps=1e-3)'])
def test_distance_modules(make):
    lm, tm = run_both(lambda nn: eval('nn.' + make, {'nn': nn}), [randn(4, 3), randn(4, 3, seed=1)])
    assert repr(lm) == repr(tm)


def test_unpool_gradcheck():
    x = lg.tensor(randn(1, 2, 4, 4, 4), requires_grad=True)
    pooled, idx = LF.max_pool3d(x, 2, return_indices=True)
    assert lg.autograd.gradcheck(lambda p: LF.max_unpool3d(p, idx, 2), (pooled.detach().requires_grad_(),))
    assert lg.autograd.gradcheck(lambda x: LF.adaptive_max_pool3d(x, (3, 2, 3)), (x,))
    y = lg.tensor(randn(2, 6, 3), requires_grad=True)
    assert lg.autograd.gradcheck(lambda y: LF.channel_shuffle(y, 3), (y,))


@pytest.mark.parametrize('case', ['amp3_dim', 'unpool_index', 'unpool3_dim', 'cs_div', 'cs_dims',
                                  'cs_groups', 'ps_div'])
def test_errors(case):
    def run(T, F):
        z = T.zeros
        return {
            'amp3_dim': lambda: F.adaptive_max_pool3d(z(2, 3), 2),
            'amp2_dim': lambda: F.adaptive_max_pool2d(z(2, 3), 2),
            'unpool_index': lambda: F.max_unpool3d(z(1, 1, 2, 2, 2), T.full((1, 1, 2, 2, 2), 99), 2),
            'unpool3_dim': lambda: F.max_unpool3d(z(2, 2, 2), z(2, 2, 2, dtype=T.int64), 2),
            'cs_div': lambda: (T.nn.ChannelShuffle(3))(z(1, 4, 2)),
            'cs_dims': lambda: F.channel_shuffle(z(4), 2),
            'cs_groups': lambda: F.channel_shuffle(z(1, 4, 2), 0),
            'ps_div': lambda: T.nn.PixelShuffle(2)(z(1, 3, 2, 2)),
        }[case]()
    a, b = raises_like(lambda: run(lg, LF), lambda: run(torch, TF))
    assert same_message(a, b), (a, b)


@pytest.mark.parametrize('kw', [dict(), dict(mode='sum'), dict(mode='sum', padding_idx=1),
                                dict(mode='mean', include_last_offset=True), dict(max_norm=1.0),
                                dict(mode='max'), dict(mode='max', padding_idx=2, include_last_offset=True),
                                dict(mode='max', max_norm=0.5, norm_type=1.0)])
def test_embedding_bag(kw):
    lm, tm = both_seeded(lambda T: T.nn.EmbeddingBag(6, 3, **kw))
    assert repr(lm) == repr(tm)
    assert_same(lm.weight, tm.weight)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 1, 1])
    offsets = np.array([0, 2, 5, 5] + ([9] if kw.get('include_last_offset') else []))  # one bag empty
    outs = []
    for T, m in ((torch, tm), (lg, lm)):
        out = m(T.tensor(idx), T.tensor(offsets))
        out2 = m(T.tensor(idx[:8].reshape(2, 4)))
        (out.sum() + (out2 * 2).sum()).backward()
        outs.append((out, out2, m.weight.grad, m.weight.detach().clone()))
    for a, b in zip(outs[1], outs[0]):
        assert_same(a, b)


def test_embedding_bag_from_pretrained_and_weights():
    w = randn(5, 2)
    lm = lnn.EmbeddingBag.from_pretrained(lg.tensor(w), mode='sum')
    tm = tnn.EmbeddingBag.from_pretrained(torch.tensor(w), mode='sum')
    assert repr(lm) == repr(tm) and lm.weight.requires_grad == tm.weight.requires_grad
    psw = randn(4)
    assert_same(lm(lg.tensor([[0, 1], [2, 4]]), per_sample_weights=lg.tensor(psw.reshape(2, 2))),
                tm(torch.tensor([[0, 1], [2, 4]]), per_sample_weights=torch.tensor(psw.reshape(2, 2))))


@pytest.mark.parametrize('kw', [{}, dict(margin=0.5, swap=True, reduction='sum'), dict(reduction='none'),
                                dict(distance_function='cos')])
def test_triplet_margin_with_distance_loss(kw):
    a, p, n = randn(4, 3), randn(4, 3, seed=1), randn(4, 3, seed=2)

    def make(nn):
        k = dict(kw)
        if k.get('distance_function') == 'cos':
            k['distance_function'] = lambda x, y: 1.0 - nn.functional.cosine_similarity(x, y)
        return nn.TripletMarginWithDistanceLoss(**k)
    run_both(make, [a, p, n])
    for T, F in ((torch, TF), (lg, LF)):
        assert F.triplet_margin_with_distance_loss is not None
    x, y = raises_like(lambda: LF.triplet_margin_with_distance_loss(lg.zeros(2, 3), lg.zeros(2, 3), lg.zeros(3)),
                       lambda: TF.triplet_margin_with_distance_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(3)))
    assert same_message(x, y)
    x, y = raises_like(lambda: lnn.TripletMarginWithDistanceLoss(margin=0), lambda: tnn.TripletMarginWithDistanceLoss(margin=0))
    assert same_message(x, y)


@pytest.mark.parametrize('kw', [dict(cutoffs=[3, 6]), dict(cutoffs=[2], div_value=2.0, head_bias=True)])
def test_adaptive_log_softmax(kw):
    x = randn(7, 8).astype(np.float32)
    target = np.array([0, 5, 9, 2, 7, 1, 3])
    res = []
    for T in (torch, lg):
        T.manual_seed(0)
        m = T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, **kw)
        xin = T.tensor(x, requires_grad=True)
        out, loss = m(xin, T.tensor(target))
        loss.backward()
        single = m(xin[0].detach(), T.tensor(target[3]))
        res.append((repr(m), out, loss, xin.grad, [p.grad for p in m.parameters()], m.log_prob(xin.detach()),
                    m.predict(xin.detach()), single.output, single.loss))
    assert res[1][0] == res[0][0]
    for a, b in zip(res[1][1:4], res[0][1:4]):
        assert_same(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(res[1][4], res[0][4]):
        assert_same(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(res[1][5:], res[0][5:]):
        assert_same(a, b, rtol=1e-5, atol=1e-6)
    a, b = raises_like(lambda: lnn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]),
                       lambda: tnn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]))
    assert same_message(a, b)
    lg.manual_seed(0)
    torch.manual_seed(0)
    a, b = raises_like(lambda: lnn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(lg.zeros(2, 8), lg.tensor([1, 12])),
                       lambda: tnn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(torch.zeros(2, 8), torch.tensor([1, 12])))
    assert same_message(a, b)


@pytest.mark.parametrize('make', [lambda: lg.nn.EmbeddingBag(5, 3, sparse=True, max_norm=0.5, mode='sum')])
def test_sparse_gradients_are_refused_not_ignored(make):
    """EmbeddingBag(sparse=True): leafgrad's embedding_bag makes no sparse gradient, so a lookup
    that would record one is refused (before max_norm touches the weight); without one
    (no_grad, frozen) it runs. (Embedding's: tests/test_sparse.py.)"""
    m = make()
    before = m.weight.detach().clone()
    idx = lg.tensor([[0, 2, 4]])
    with pytest.raises(NotImplementedError, match='sparse=True needs sparse gradients'):
        m(idx)
    assert lg.equal(m.weight, before)
    with lg.no_grad():
        m(idx)
    m.weight.requires_grad_(False)
    m(idx)
