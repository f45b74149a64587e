"""The nodes PyTorch records for pairwise_distance (ATen's norm: NormBackward1), channel_shuffle
(ChannelShuffleBackward0; native_channel_shuffle's refuses backward), the margin and triplet
losses (clamp_min, whose gradient passes at 0; min of a swap's distances) and the fused
multi_margin / multilabel_margin losses (one node each, whose backward has no derivative),
against torch: values, node names, gradients, second derivatives and errors."""
import numpy as np
import pytest

import leafgrad as lg
from both import same
from optable import check_case

torch = pytest.importorskip('torch')

_RNG = np.random.default_rng(0)
A, B, C = (_RNG.standard_normal((4, 3)) for _ in range(3))
Y = np.array([1., -1., 1., -1.])


@pytest.mark.parametrize('fn,arrays', [
    (lambda T, a, b: T.nn.functional.pairwise_distance(a, b), [A, B]),
    (lambda T, a, b: T.nn.functional.pairwise_distance(a, b, 1.0, keepdim=True), [A, B]),
    (lambda T, a, b: T.nn.functional.pairwise_distance(a, b, 3.0), [A, B]),
    (lambda T, a, b: T.nn.functional.pairwise_distance(a[0], b[0]), [A, B]),
    (lambda T, a, b: T.nn.functional.pairwise_distance(a[0, 0], b[0, 0]), [A, B]),
    (lambda T, a, b: T.pairwise_distance(a, b[:1]), [A, B]),
    (lambda T, a: T.nn.functional.channel_shuffle(a.reshape(1, 4, 3, 1), 2), [A]),
    (lambda T, a: T.channel_shuffle(a.reshape(2, 6, 1), 3), [A]),
    (lambda T, a, b: T.nn.functional.margin_ranking_loss(a[:, 0], b[:, 0], T.tensor(Y), reduction='none'), [A, B]),
    (lambda T, a, b: T.nn.functional.margin_ranking_loss(a[:, 0], b[:, 0], T.tensor(Y), 0.5), [A, B]),
    (lambda T, a, b, c: T.nn.functional.triplet_margin_loss(a, b, c, reduction='none'), [A, B, C]),
    (lambda T, a, b, c: T.nn.functional.triplet_margin_loss(a, b, c, swap=True, reduction='sum'), [A, B, C]),
    (lambda T, a, b, c: T.nn.functional.triplet_margin_with_distance_loss(a, b, c, reduction='none'), [A, B, C]),
], ids=['pairwise', 'pairwise_p1_keepdim', 'pairwise_p3', 'pairwise_1d', 'pairwise_0d', 'torch_pairwise_broadcast',
        'channel_shuffle', 'torch_channel_shuffle', 'margin_ranking_none', 'margin_ranking_mean', 'triplet_none',
        'triplet_swap_sum', 'triplet_with_distance_none'])
def test_nodes_values_and_derivatives_against_torch(fn, arrays):
    check_case(fn, arrays)


_N = np.array([[0.5, -1., 2.], [1., 1., 1.]])


@pytest.mark.parametrize('fn,arrays', [
    # at the tie (input1 == input2, margin 0), clamp_min passes the gradient (relu would not)
    (lambda T, a, b: T.nn.functional.margin_ranking_loss(a, b, T.tensor([1., -1.])), [_N[:, 0], _N[:, 0]]),
    # anchor == positive: the swap's distances tie, min gives each half
    (lambda T, a, p, n: T.nn.functional.triplet_margin_loss(a, p, n, margin=3.0, swap=True, reduction='none'),
     [_N + 1, _N + 1, _N]),
], ids=['margin_ranking_tie', 'triplet_swap_tie'])
def test_gradients_at_a_tie_as_torch(fn, arrays):
    grads = []
    for T in (lg, torch):
        xs = [T.tensor(a, requires_grad=True) for a in arrays]
        loss = fn(T, *xs)
        gs = T.autograd.grad(loss.sum(), xs)
        grads.append((type(loss.grad_fn).__name__, loss.tolist(), [g.tolist() for g in gs]))
    assert grads[0][0] == grads[1][0]
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)
    for ours, theirs in zip(grads[0][2], grads[1][2]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


_TARGETS = np.array([[0, 1, -1], [2, -1, 0], [1, 2, 0], [0, 0, -1]])  # (the last: a target listed twice)


def _margin_outcome(T, loss_fn, x, **kwargs):
    x = T.tensor(x, requires_grad=True)
    loss = loss_fn(T, x, **kwargs)
    v = T.tensor(np.linspace(-1, 1, loss.numel()).reshape(tuple(loss.shape)))
    g, = T.autograd.grad(loss, [x], v, create_graph=True)
    try:
        T.autograd.grad(g.sum(), [x])
        second = None
    except RuntimeError as e:
        second = str(e)
    return (type(loss.grad_fn).__name__, len(loss.grad_fn.next_functions), loss.dtype, tuple(loss.shape),
            np.round(loss.detach().numpy(), 12).tolist(), np.round(g.detach().numpy(), 12).tolist(),
            type(g.grad_fn).__name__, second)


def _multi(T, x, **kw):
    return T.nn.functional.multi_margin_loss(x, T.tensor([0, 1, 2, 0][:len(x)] if x.ndim == 2 else 1), **kw)


def _multilabel(T, x, **kw):
    return T.nn.functional.multilabel_margin_loss(x, T.tensor(_TARGETS if x.ndim == 2 else _TARGETS[3]), **kw)


@pytest.mark.parametrize('loss_fn,x,kwargs', [
    (_multi, A, {}), (_multi, A, {'reduction': 'none'}), (_multi, A, {'reduction': 'sum'}),
    (_multi, A, {'p': 2, 'margin': 0.5}), (_multi, A.astype(np.float32), {'weight': 'w'}),
    (_multi, A[0], {'reduction': 'none'}), (_multi, A[0], {}),
    (_multilabel, A, {}), (_multilabel, A, {'reduction': 'none'}), (_multilabel, A, {'reduction': 'sum'}),
    (_multilabel, A.astype(np.float32), {}), (_multilabel, A[0], {'reduction': 'none'}), (_multilabel, A[0], {}),
], ids=['multi', 'multi_none', 'multi_sum', 'multi_p2', 'multi_weight_f32', 'multi_1d_none', 'multi_1d',
        'multilabel', 'multilabel_none', 'multilabel_sum', 'multilabel_f32', 'multilabel_1d_none', 'multilabel_1d'])
def test_fused_margin_losses_as_torch(loss_fn, x, kwargs):
    outcomes = []
    for T in (lg, torch):
        kw = dict(kwargs)
        if kw.get('weight') == 'w':
            kw['weight'] = T.tensor([0.5, 2., 1.], dtype=T.float32)
        outcomes.append(_margin_outcome(T, loss_fn, x, **kw))
    ours, theirs = outcomes
    assert ours[:4] == (theirs[0], theirs[1], lg.float32 if theirs[2] == torch.float32 else lg.float64, theirs[3])
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-6, atol=1e-7)
    assert ours[6:] == theirs[6:]


@pytest.mark.parametrize('program', [
    lambda M: M.nn.functional.multi_margin_loss(M.ones(2, 3), M.tensor([0, 3])),
    lambda M: M.nn.functional.multi_margin_loss(M.ones(2, 3), M.tensor([-1, 0])),
    lambda M: M.nn.functional.multi_margin_loss(M.ones(2, 3, requires_grad=True), M.tensor([0, 1]),
                                                weight=M.ones(3, requires_grad=True)),
    lambda M: M.nn.functional.multilabel_margin_loss(M.ones(2, 3), M.tensor([[3, -1, 0], [0, 1, 2]])),
    lambda M: M.nn.functional.multilabel_margin_loss(M.ones(2, 3), M.tensor([[0, -1, 5], [0, 1, 2]])),
    lambda M: M.nn.functional.multilabel_margin_loss(M.ones(2, 3), M.tensor([[0, -2, 1], [0, 1, 2]])),
    lambda M: M.nn.functional.multilabel_margin_loss(M.tensor([[0.1, 0.2, 0.4]]), M.tensor([[0, 0, -1]])),
    lambda M: M.nn.functional.native_channel_shuffle(M.arange(8.).reshape(1, 4, 2), 2),
    lambda M: type(M.native_channel_shuffle(M.ones(1, 4, 2, requires_grad=True), 2).grad_fn).__name__,
    lambda M: M.autograd.grad(M.native_channel_shuffle(M.ones(1, 4, 2, requires_grad=True), 2).sum(),
                              [M.ones(1)], allow_unused=True),
    lambda M: (lambda x: M.autograd.grad(M.nn.functional.native_channel_shuffle(x, 2).sum(), [x]))(
        M.ones(1, 4, 2, requires_grad=True)),
    lambda M: M.nn.functional.channel_shuffle(M.ones(2, 4), 2),
], ids=['multi_target_too_big', 'multi_target_negative', 'multi_weight_requires_grad', 'multilabel_target_too_big',
        'multilabel_target_too_big_after_the_end', 'multilabel_target_below_-1', 'multilabel_target_listed_twice',
        'native_channel_shuffle', 'native_channel_shuffle_node', 'native_channel_shuffle_unused',
        'native_channel_shuffle_backward', 'channel_shuffle_of_two_dims'])
def test_against_torch(program):
    same(program)


def _kl(M, reduction, target_requires_grad):
    x = M.tensor([[0.2, -0.5, 0.1], [1.0, 0.3, 0.2]], dtype=M.float64, requires_grad=True)
    t = M.tensor([[-0.5, 0.3, float('nan')], [0.0, 0.7, float('inf')]], dtype=M.float64,
                 requires_grad=target_requires_grad)
    loss = M.nn.functional.kl_div(x, t, reduction=reduction)
    return [loss] + list(M.autograd.grad(loss.sum(), [x, t] if target_requires_grad else [x]))


@pytest.mark.parametrize('reduction', ['none', 'sum', 'batchmean'])
@pytest.mark.parametrize('target_requires_grad', [False, True])
def test_kl_div_of_a_negative_nan_or_infinite_target_as_torch(reduction, target_requires_grad):
    # ATen's xlogy(target, target) - target * input: NaN where the target is negative, whether or
    # not it requires grad, and xlogy's gradients for it
    same(lambda M: _kl(M, reduction, target_requires_grad))


def _bce(M, fname, **kwargs):
    x = M.tensor([[0.2, -0.5], [1.0, 0.3]], requires_grad=kwargs.pop('input_requires_grad', True))
    target = M.tensor([[1., 0.], [0., 1.]])
    if fname == 'binary_cross_entropy':
        x = x.sigmoid()
    loss = getattr(M.nn.functional, fname)(x, target, **kwargs)
    return loss, type(loss.grad_fn).__name__


def _w(M):
    return M.tensor([1., 2.], requires_grad=True)


@pytest.mark.parametrize('program', [
    lambda M: _bce(M, 'binary_cross_entropy_with_logits', weight=_w(M)),
    lambda M: _bce(M, 'binary_cross_entropy_with_logits', pos_weight=_w(M)),
    lambda M: _bce(M, 'binary_cross_entropy_with_logits', weight=_w(M), reduction='none'),
    lambda M: _bce(M, 'binary_cross_entropy_with_logits', weight=_w(M), input_requires_grad=False),
    lambda M: _bce(M, 'binary_cross_entropy_with_logits', weight=_w(M).detach(), pos_weight=_w(M)),
    lambda M: M.binary_cross_entropy_with_logits(M.ones(2, 2), M.ones(2, 2), _w(M), None, 1),
    lambda M: _bce(M, 'binary_cross_entropy', weight=_w(M)),
    lambda M: _bce(M, 'binary_cross_entropy', weight=_w(M), input_requires_grad=False),
    lambda M: _bce(M, 'binary_cross_entropy', weight=M.ones(3, requires_grad=True)),
    lambda M: [M.set_grad_enabled(False), _bce(M, 'binary_cross_entropy_with_logits', weight=_w(M))[0],
               _bce(M, 'binary_cross_entropy', weight=_w(M))[0], M.set_grad_enabled(True)][1:3],
], ids=['logits_weight', 'logits_pos_weight', 'logits_weight_none', 'logits_weight_input_without_grad',
        'logits_pos_weight_after_weight', 'torch_form_weight', 'bce_weight', 'bce_weight_input_without_grad',
        'bce_weight_not_broadcastable', 'no_grad_mode_accepts_them'])
def test_a_weight_that_requires_grad_is_refused_as_torch(program):
    same(program)


@pytest.mark.parametrize('loss_fn,kwargs', [
    (_multi, {}), (_multi, {'reduction': 'none'}), (_multi, {'p': 2, 'margin': 0.5}),
    (_multilabel, {}), (_multilabel, {'reduction': 'none'}),
], ids=['multi', 'multi_none', 'multi_p2', 'multilabel', 'multilabel_none'])
def test_fused_margin_losses_gradcheck(loss_fn, kwargs):
    # float64, away from the hinges' kinks (A is random normal)
    x = lg.tensor(A, requires_grad=True)
    assert lg.autograd.gradcheck(lambda t: loss_fn(lg, t, **kwargs), (x,), atol=1e-6, rtol=1e-5)
