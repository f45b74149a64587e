"""nn modules against torch: reprs, state_dict keys and shapes, default initialisation, outputs
and gradients with copied weights, float64 finite differences (the Module API itself is in
test_nn_module_api.py).

Modules whose functional op is not in leafgrad.nn.functional yet are skipped (the op library
provides them); everything else runs.
"""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
from leafgrad.nn import functional as F  # noqa: E402
from oracle import assert_same, raises_like, same_message  # noqa: E402

tnn, lnn = torch.nn, lg.nn



def copy_weights(lm, tm):
    """Load torch's state dict into the leafgrad module (exercises load_state_dict too)."""
    sd = {k: lg.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    res = lm.load_state_dict(sd)
    assert not res.missing_keys and not res.unexpected_keys


def run_both(make, inputs, dtype=np.float64, grad=True, train=True, rtol=1e-6, atol=1e-7, out_index=None):
    """Build the module in both libraries with torch's weights, run on the same inputs, compare
    output, input grads and parameter grads."""
    tm, lm = make(tnn), make(lnn)
    if dtype == np.float64:
        tm, lm = tm.double(), lm.double()
    copy_weights(lm, tm)
    tm.train(train)
    lm.train(train)
    t_in, l_in = [], []
    for a in inputs:
        a = np.asarray(a)
        rg = grad and a.dtype.kind == 'f'
        t_in.append(torch.tensor(a.copy(), requires_grad=rg))
        l_in.append(lg.tensor(a.copy(), requires_grad=rg))
    t_out, l_out = tm(*t_in), lm(*l_in)
    if out_index is not None:
        t_out, l_out = t_out[out_index], l_out[out_index]
    if isinstance(t_out, tuple):
        t_flat, l_flat = _flatten(t_out), _flatten(l_out)
    else:
        t_flat, l_flat = [t_out], [l_out]
    for lo, to in zip(l_flat, t_flat):
        assert_same(lo, to, rtol=rtol, atol=atol)
    if grad:
        rng = np.random.default_rng(1)
        t_loss, l_loss = 0, 0
        for lo, to in zip(l_flat, t_flat):
            if not to.requires_grad:
                continue
            w = rng.standard_normal(tuple(to.shape))
            t_loss = t_loss + (to * torch.tensor(w, dtype=to.dtype)).sum()
            l_loss = l_loss + (lo * lg.tensor(w, dtype=lo.dtype)).sum()
        t_loss.backward()
        l_loss.backward()
        for li, ti in zip(l_in, t_in):
            if ti.requires_grad:
                assert_same(li.grad, ti.grad, rtol=rtol, atol=atol)
        tparams = dict(tm.named_parameters())
        for name, lp in lm.named_parameters():
            assert_same(lp.grad, tparams[name].grad, rtol=rtol, atol=atol)
    for name, tb in tm.named_buffers():
        assert_same(dict(lm.named_buffers())[name], tb, rtol=rtol, atol=atol)
    return lm, tm


def _flatten(x):
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _flatten(v)]
    return [x] if x is not None else []


def randn(*shape):
    return np.random.default_rng(abs(hash(shape)) % 2 ** 32).standard_normal(shape)


# ---- constructors: repr, state_dict keys/shapes, parameter dtypes ---------------------------------
CONSTRUCTORS = [
    ('Linear', (3, 4), {}), ('Linear', (3, 4), dict(bias=False)), ('Bilinear', (2, 3, 4), {}),
    ('Identity', (), {}), ('Flatten', (), {}), ('Flatten', (0, 2), {}), ('Unflatten', (1, (2, 5)), {}),
    ('Conv1d', (2, 4, 3), dict(padding='same')), ('Conv2d', (3, 4, 3), {}),
    ('Conv2d', (4, 4, (3, 2)), dict(stride=2, padding=1, dilation=2, groups=2, bias=False,
                                    padding_mode='reflect')),
    ('ConvTranspose2d', (2, 4, 3), dict(stride=2, output_padding=1)),
    ('Conv3d', (2, 4, 3), dict(stride=(1, 2, 1), bias=False)), ('ConvTranspose1d', (2, 3, 3), dict(stride=2)),
    ('ConvTranspose3d', (2, 3, 2), dict(groups=1, dilation=2)),
    ('MaxPool1d', (2,), {}), ('MaxPool3d', (2,), {}), ('AvgPool1d', (3,), {}), ('AvgPool3d', (2,), {}),
    ('AdaptiveAvgPool1d', (4,), {}), ('AdaptiveAvgPool3d', (2,), {}), ('Dropout1d', (), {}), ('Dropout2d', (0.3,), {}),
    ('InstanceNorm1d', (3,), {}), ('InstanceNorm2d', (3,), dict(affine=True, track_running_stats=True)),
    ('BatchNorm3d', (2,), {}), ('Upsample', (), dict(scale_factor=2)),
    ('Upsample', (), dict(size=(3, 4), mode='bilinear', align_corners=False)), ('Fold', ((4, 5), (2, 2)), {}),
    ('Unfold', (2,), dict(padding=1)), ('ZeroPad2d', (1,), {}), ('ConstantPad1d', ((1, 2), 3.5), {}),
    ('ReflectionPad2d', (2,), {}), ('ReplicationPad1d', (1,), {}), ('CircularPad2d', (1,), {}), ('ZeroPad1d', (2,), {}),
    ('MaxPool2d', (2,), {}), ('MaxPool2d', (3, 2, 1), dict(ceil_mode=True)), ('AvgPool2d', (2,), {}),
    ('AdaptiveAvgPool2d', ((2, 3),), {}), ('AdaptiveAvgPool2d', (1,), {}),
    ('BatchNorm1d', (3,), {}), ('BatchNorm2d', (3,), dict(momentum=None, affine=False)),
    ('BatchNorm1d', (3,), dict(track_running_stats=False, bias=False)),
    ('LayerNorm', (4,), {}), ('LayerNorm', ([3, 4],), dict(elementwise_affine=False)),
    ('LayerNorm', (4,), dict(bias=False)), ('GroupNorm', (2, 4), {}), ('GroupNorm', (2, 4), dict(affine=False)),
    ('Dropout', (), {}), ('Dropout', (0.2, True), {}),
    ('Embedding', (10, 3), {}), ('Embedding', (10, 3), dict(padding_idx=-1, max_norm=1.0, norm_type=1.0,
                                                             scale_grad_by_freq=True)),
    ('RNN', (3, 4), {}), ('RNN', (3, 4, 2), dict(nonlinearity='relu', bias=False, batch_first=True)),
    ('LSTM', (3, 4, 2), dict(batch_first=True, bidirectional=True, dropout=0.1)),
    ('GRU', (3, 4), dict(bidirectional=True)), ('RNNCell', (3, 4), dict(nonlinearity='relu')),
    ('LSTMCell', (3, 4), dict(bias=False)), ('GRUCell', (3, 4), {}),
    ('MultiheadAttention', (4, 2), {}), ('MultiheadAttention', (4, 2), dict(kdim=3, vdim=5, bias=False)),
    ('TransformerEncoderLayer', (4, 2, 8), {}), ('TransformerEncoderLayer', (4, 2), dict(norm_first=True,
                                                                                       batch_first=True)),
    ('ReLU', (), {}), ('ReLU', (True,), {}), ('ReLU6', (), {}), ('LeakyReLU', (0.2, True), {}), ('ELU', (), {}),
    ('CELU', (0.5,), {}), ('SELU', (True,), {}), ('GELU', ('tanh',), {}), ('SiLU', (), {}), ('Mish', (), {}),
    ('Softplus', (2.0, 10.0), {}), ('Softsign', (), {}), ('Softshrink', (), {}), ('Hardshrink', (0.3,), {}),
    ('Hardtanh', (0.0, 6.0, True), {}), ('Hardsigmoid', (), {}), ('Hardswish', (), {}), ('Sigmoid', (), {}),
    ('LogSigmoid', (), {}), ('Tanh', (), {}), ('Tanhshrink', (), {}), ('Threshold', (0.1, 2.0), {}),
    ('Softmax', (1,), {}), ('Softmin', (), {}), ('LogSoftmax', (-1,), {}), ('Softmax2d', (), {}), ('GLU', (), {}),
    ('PReLU', (3,), {}),
    ('MSELoss', (), {}), ('L1Loss', (), dict(reduction='sum')), ('CrossEntropyLoss', (), dict(label_smoothing=0.1)),
    ('NLLLoss', (), dict(ignore_index=1)), ('BCELoss', (), {}), ('BCEWithLogitsLoss', (), {}),
    ('SmoothL1Loss', (), dict(beta=0.5)), ('HuberLoss', (), dict(delta=2.0)), ('KLDivLoss', (), dict(log_target=True)),
    ('CrossEntropyLoss', (), dict(weight='w')), ('BCEWithLogitsLoss', (), dict(pos_weight='w')),
    ('MarginRankingLoss', (0.5,), {}), ('CosineEmbeddingLoss', (), {}), ('HingeEmbeddingLoss', (), {}),
    ('SoftMarginLoss', (), {}), ('MultiLabelMarginLoss', (), {}), ('MultiLabelSoftMarginLoss', (), dict(weight='w')),
    ('MultiMarginLoss', (2, 0.5), {}), ('PoissonNLLLoss', (), dict(full=True)), ('GaussianNLLLoss', (), dict(eps=1e-3)),
    ('TripletMarginLoss', (), dict(swap=True)),
]


def _build(lib, name, args, kwargs):
    kwargs = dict(kwargs)
    for k, v in kwargs.items():
        if v == 'w':
            kwargs[k] = lib.tensor([1.0, 2.0, 0.5])
    return getattr(lib.nn, name)(*args, **kwargs)


@pytest.mark.parametrize('name,args,kwargs', CONSTRUCTORS,
                         ids=[f'{n}-{i}' for i, (n, _, _) in enumerate(CONSTRUCTORS)])
def test_constructor_repr_state_dict(name, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        tm, lm = _build(torch, name, args, kwargs), _build(lg, name, args, kwargs)
    assert repr(lm) == repr(tm).replace('torch.', 'leafgrad.')
    tsd, lsd = tm.state_dict(), lm.state_dict()
    assert list(lsd.keys()) == list(tsd.keys())
    for k in tsd:
        assert tuple(lsd[k].shape) == tuple(tsd[k].shape), k
        assert str(lsd[k].dtype).split('.')[-1] == str(tsd[k].dtype).split('.')[-1], k
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in lm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in lm.named_modules()] == [n for n, _ in tm.named_modules()]
    assert all(p.requires_grad for p in lm.parameters())
    assert all(p.is_leaf for p in lm.parameters())


def test_module_list_compressed_repr_and_containers():
    tl = tnn.ModuleList([tnn.ReLU(), tnn.ReLU(), tnn.ReLU(), tnn.Tanh(), tnn.Linear(2, 3), tnn.Linear(2, 3)])
    ll = lnn.ModuleList([lnn.ReLU(), lnn.ReLU(), lnn.ReLU(), lnn.Tanh(), lnn.Linear(2, 3), lnn.Linear(2, 3)])
    assert repr(ll) == repr(tl)
    assert repr(lnn.ModuleList()) == repr(tnn.ModuleList())
    assert repr(lnn.ModuleDict({'a': lnn.ReLU(), 'b': lnn.Linear(1, 2)})) == \
        repr(tnn.ModuleDict({'a': tnn.ReLU(), 'b': tnn.Linear(1, 2)}))
    tp = tnn.ParameterList([tnn.Parameter(torch.zeros(2, 3)), tnn.Parameter(torch.zeros(3).double())])
    lp = lnn.ParameterList([lnn.Parameter(lg.zeros(2, 3)), lnn.Parameter(lg.zeros(3).double())])
    assert repr(lp) == repr(tp).replace('torch.', 'leafgrad.')
    assert list(lp.state_dict()) == list(tp.state_dict())
    td = tnn.ParameterDict({'a': tnn.Parameter(torch.zeros(2, 3)), 'b': torch.ones(2)})
    ld = lnn.ParameterDict({'a': lnn.Parameter(lg.zeros(2, 3)), 'b': lg.ones(2)})
    assert repr(ld) == repr(td).replace('torch.', 'leafgrad.')
    assert isinstance(ld['b'], lnn.Parameter) and list(ld.keys()) == ['a', 'b']
    # Sequential indexing, slicing, deletion, insertion, append
    seq = lnn.Sequential(lnn.Linear(2, 3), lnn.ReLU(), lnn.Linear(3, 1))
    tseq = tnn.Sequential(tnn.Linear(2, 3), tnn.ReLU(), tnn.Linear(3, 1))
    assert repr(seq[1:]) == repr(tseq[1:]) and repr(seq[-1]) == repr(tseq[-1])
    del seq[1]
    del tseq[1]
    seq.insert(1, lnn.Tanh())
    tseq.insert(1, tnn.Tanh())
    seq.append(lnn.Sigmoid())
    tseq.append(tnn.Sigmoid())
    assert repr(seq) == repr(tseq) and len(seq) == len(tseq) == 4
    lm, tm = raises_like(lambda: seq[7], lambda: tseq[7])
    assert same_message(lm, tm), (lm, tm)
    ml = lnn.ModuleList([lnn.ReLU()])
    ml += [lnn.Tanh()]
    ml.insert(0, lnn.Sigmoid())
    assert [type(m).__name__ for m in ml] == ['Sigmoid', 'ReLU', 'Tanh']
    assert [type(m).__name__ for m in ml[1:]] == ['ReLU', 'Tanh']


# ---- default initialisation follows torch's distributions -------------------------------------
def _bound_ok(t, bound):
    a = t.detach().numpy()
    assert np.abs(a).max() <= bound + 1e-7
    # spread over the interval (not all zeros, not a tiny corner)
    assert np.abs(a).max() > 0.5 * bound


def test_default_init():
    lg.manual_seed(0)
    lin = lnn.Linear(50, 40)
    _bound_ok(lin.weight, 1 / math.sqrt(50))
    _bound_ok(lin.bias, 1 / math.sqrt(50))
    conv = lnn.Conv2d(4, 8, 3, groups=2)
    fan_in = 2 * 9
    _bound_ok(conv.weight, 1 / math.sqrt(fan_in))
    _bound_ok(conv.bias, 1 / math.sqrt(fan_in))
    convt = lnn.ConvTranspose2d(4, 6, 3)
    _bound_ok(convt.weight, 1 / math.sqrt(6 * 9))  # fan_in of the (in, out, k, k) weight is dim 1
    bil = lnn.Bilinear(5, 7, 3)
    _bound_ok(bil.weight, 1 / math.sqrt(5))
    rnn = lnn.LSTM(6, 30, 2)
    for p in rnn.parameters():
        _bound_ok(p, 1 / math.sqrt(30))
    emb = lnn.Embedding(400, 50, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert np.all(w[3] == 0)
    assert abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05
    mha = lnn.MultiheadAttention(8, 2)
    _bound_ok(mha.in_proj_weight, math.sqrt(6 / (8 + 24)))
    assert np.all(mha.in_proj_bias.detach().numpy() == 0) and np.all(mha.out_proj.bias.detach().numpy() == 0)
    bn = lnn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    assert bn.running_var.tolist() == [1, 1, 1] and int(bn.num_batches_tracked) == 0
    assert lnn.PReLU(2).weight.tolist() == [0.25, 0.25]


def test_init_functions():
    t = lg.empty(300, 200)
    lnn.init.xavier_uniform_(t, gain=2.0)
    _bound_ok(t, 2.0 * math.sqrt(6 / 500))
    lnn.init.kaiming_normal_(t, mode='fan_out', nonlinearity='relu')
    assert abs(t.numpy().std() - math.sqrt(2 / 300)) < 0.005
    lnn.init.trunc_normal_(t, std=2.0, a=-1.0, b=1.5)
    assert t.numpy().min() >= -1.0 and t.numpy().max() <= 1.5
    lnn.init.orthogonal_(t)
    q = t.numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(200), atol=1e-4)
    lnn.init.sparse_(t, 0.5)
    assert np.all((t.numpy() == 0).sum(0) == 150)
    d = lg.empty(4, 2, 3)
    lnn.init.dirac_(d)
    np.testing.assert_array_equal(d.numpy(), tnn.init.dirac_(torch.empty(4, 2, 3)).numpy())
    for nl, p in [('linear', None), ('tanh', None), ('relu', None), ('leaky_relu', 0.2), ('selu', None),
                  ('conv2d', None), ('sigmoid', None)]:
        assert lnn.init.calculate_gain(nl, p) == tnn.init.calculate_gain(nl, p)
    lm, tm = raises_like(lambda: lnn.init.calculate_gain('foo'), lambda: tnn.init.calculate_gain('foo'))
    assert lm == tm
    lm, tm = raises_like(lambda: lnn.init.xavier_uniform_(lg.empty(3)), lambda: tnn.init.xavier_uniform_(torch.empty(3)))
    assert lm == tm
    # init works under no_grad on parameters and bumps the version
    p = lnn.Parameter(lg.zeros(2, 2))
    v = p._version
    lnn.init.ones_(p)
    assert p._version > v and p.requires_grad and p.grad_fn is None


# ---- outputs and gradients with copied weights ----------------------------------------------------
def test_linear_bilinear_identity_flatten():
    run_both(lambda nn: nn.Linear(5, 3), [randn(4, 5)])
    run_both(lambda nn: nn.Linear(5, 3, bias=False), [randn(2, 4, 5)])
    run_both(lambda nn: nn.Bilinear(3, 4, 2), [randn(6, 3), randn(6, 4)])
    run_both(lambda nn: nn.Bilinear(3, 4, 2, bias=False), [randn(2, 5, 3), randn(2, 5, 4)])
    run_both(lambda nn: nn.Sequential(nn.Flatten(), nn.Linear(12, 2), nn.Unflatten(1, (2, 1))), [randn(3, 4, 3)])
    run_both(lambda nn: nn.Sequential(nn.Identity(7), nn.Flatten(0, 1)), [randn(3, 4, 2)])
    run_both(lambda nn: nn.Linear(5, 3), [randn(4, 5).astype(np.float32)], dtype=np.float32, rtol=1e-5, atol=1e-6)


ACTIVATIONS = [
    ('ReLU', (), 'relu'), ('ReLU6', (), 'relu6'), ('LeakyReLU', (0.2,), 'leaky_relu'), ('ELU', (0.7,), 'elu'),
    ('CELU', (0.5,), 'celu'), ('SELU', (), 'selu'), ('GELU', (), 'gelu'), ('GELU', ('tanh',), 'gelu'),
    ('SiLU', (), 'silu'), ('Mish', (), 'mish'), ('Softplus', (2.0, 1.0), 'softplus'), ('Softsign', (), 'softsign'),
    ('Softshrink', (0.3,), 'softshrink'), ('Hardshrink', (0.3,), 'hardshrink'), ('Hardtanh', (-0.5, 0.7), 'hardtanh'),
    ('Hardsigmoid', (), 'hardsigmoid'), ('Hardswish', (), 'hardswish'), ('Sigmoid', (), 'sigmoid'),
    ('LogSigmoid', (), 'logsigmoid'), ('Tanh', (), 'tanh'), ('Tanhshrink', (), 'tanhshrink'),
    ('Threshold', (0.1, -2.0), 'threshold'), ('Softmax', (1,), 'softmax'), ('Softmin', (0,), 'softmin'),
    ('LogSoftmax', (-1,), 'log_softmax'), ('Softmax2d', (), 'softmax'), ('GLU', (2,), 'glu'), ('PReLU', (3,), 'prelu'),
]


@pytest.mark.parametrize('name,args,op', ACTIVATIONS, ids=[f'{a[0]}-{i}' for i, a in enumerate(ACTIVATIONS)])
def test_activation(name, args, op):
    x = randn(2, 3, 4, 5)
    x[np.abs(x) < 1e-3] = 0.5  # keep away from kinks
    run_both(lambda nn: getattr(nn, name)(*args), [x])


def test_activation_inplace():
    lx, tx = lg.tensor(randn(3, 4)), torch.tensor(randn(3, 4))
    ly, ty = lnn.ReLU(inplace=True)(lx), tnn.ReLU(inplace=True)(tx)
    assert ly is lx and ty is tx
    assert_same(lx, tx)


LOSSES = [
    ('MSELoss', {}, 'mse_loss', 'reg'), ('MSELoss', dict(reduction='sum'), 'mse_loss', 'reg'),
    ('L1Loss', {}, 'l1_loss', 'reg'), ('L1Loss', dict(reduction='none'), 'l1_loss', 'reg'),
    ('SmoothL1Loss', dict(beta=0.5), 'smooth_l1_loss', 'reg'), ('HuberLoss', dict(delta=0.7), 'huber_loss', 'reg'),
    ('CrossEntropyLoss', {}, 'cross_entropy', 'cls'),
    ('CrossEntropyLoss', dict(weight='w', label_smoothing=0.1, ignore_index=2), 'cross_entropy', 'cls'),
    ('CrossEntropyLoss', dict(reduction='sum'), 'cross_entropy', 'probs'),
    ('NLLLoss', dict(weight='w'), 'nll_loss', 'logp'), ('NLLLoss', dict(reduction='none'), 'nll_loss', 'logp'),
    ('BCELoss', {}, 'binary_cross_entropy', 'bin'), ('BCELoss', dict(weight='w3'), 'binary_cross_entropy', 'bin'),
    ('BCEWithLogitsLoss', {}, 'binary_cross_entropy_with_logits', 'logit'),
    ('BCEWithLogitsLoss', dict(pos_weight='w3'), 'binary_cross_entropy_with_logits', 'logit'),
    ('KLDivLoss', dict(reduction='batchmean'), 'kl_div', 'kl'), ('KLDivLoss', dict(log_target=True), 'kl_div', 'kl'),
]


@pytest.mark.parametrize('name,kwargs,op,kind', LOSSES, ids=[f'{a[0]}-{i}' for i, a in enumerate(LOSSES)])
def test_loss(name, kwargs, op, kind):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4))
    if kind == 'reg':
        inputs = [x, rng.standard_normal((6, 4))]
    elif kind == 'cls':
        inputs = [x, rng.integers(0, 4, 6)]
    elif kind == 'probs':
        inputs = [x, rng.dirichlet(np.ones(4), 6)]
    elif kind == 'logp':
        inputs = [x - np.log(np.exp(x).sum(1, keepdims=True)), rng.integers(0, 4, 6)]
    elif kind == 'bin':
        inputs = [1 / (1 + np.exp(-x)), rng.uniform(0, 1, (6, 4))]
    elif kind == 'logit':
        inputs = [x, rng.uniform(0, 1, (6, 4))]
    else:
        inputs = [x - np.log(np.exp(x).sum(1, keepdims=True)), np.log(rng.dirichlet(np.ones(4), 6))]
        if not kwargs.get('log_target'):
            inputs[1] = np.exp(inputs[1])

    def make(nn):
        kw = dict(kwargs)
        lib = torch if nn is tnn else lg
        for k, v in kw.items():
            if v == 'w':
                kw[k] = lib.tensor([1.0, 2.0, 0.5, 1.5], dtype=lib.float64)
            elif v == 'w3':
                kw[k] = lib.tensor([1.0, 2.0, 0.5, 1.5], dtype=lib.float64)
        return getattr(nn, name)(**kw)
    run_both(make, inputs)


@pytest.mark.parametrize('name,args,kwargs,op,inputs', [
    ('MarginRankingLoss', (0.5,), {}, 'margin_ranking_loss', lambda r: [r.standard_normal(5), r.standard_normal(5),
                                                                        np.sign(r.standard_normal(5))]),
    ('CosineEmbeddingLoss', (), dict(margin=0.1), 'cosine_embedding_loss',
     lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)), np.array([1.0, -1.0, 1.0, -1.0])]),
    ('HingeEmbeddingLoss', (), {}, 'hinge_embedding_loss', lambda r: [r.standard_normal(6), np.sign(r.standard_normal(6))]),
    # (an integer target: PyTorch refuses a soft_margin_loss target that requires grad)
    ('SoftMarginLoss', (), {}, 'soft_margin_loss',
     lambda r: [r.standard_normal(6), np.sign(r.standard_normal(6)).astype(np.int64)]),
    ('MultiLabelSoftMarginLoss', (), {}, 'multilabel_soft_margin_loss',
     lambda r: [r.standard_normal((3, 4)), (r.uniform(size=(3, 4)) > 0.5).astype(float)]),
    ('MultiMarginLoss', (), {}, 'multi_margin_loss', lambda r: [r.standard_normal((3, 4)), np.array([0, 3, 1])]),
    ('PoissonNLLLoss', (), dict(full=True), 'poisson_nll_loss', lambda r: [r.standard_normal(6), r.integers(1, 5, 6) * 1.0]),
    ('GaussianNLLLoss', (), {}, 'gaussian_nll_loss', lambda r: [r.standard_normal((3, 2)), r.standard_normal((3, 2)),
                                                                r.uniform(0.5, 2, (3, 2))]),
    ('TripletMarginLoss', (), dict(swap=True), 'triplet_margin_loss',
     lambda r: [r.standard_normal((4, 3)), r.standard_normal((4, 3)), r.standard_normal((4, 3))]),
])
def test_more_losses(name, args, kwargs, op, inputs):
    run_both(lambda nn: getattr(nn, name)(*args, **kwargs), inputs(np.random.default_rng(5)))


def test_conv_modules():
    run_both(lambda nn: nn.Conv1d(2, 4, 3, padding='same'), [randn(2, 2, 7)])
    run_both(lambda nn: nn.Conv2d(3, 4, 3, stride=2, padding=1), [randn(2, 3, 7, 6)])
    run_both(lambda nn: nn.Conv2d(4, 6, (3, 2), dilation=(2, 1), groups=2, bias=False), [randn(1, 4, 8, 5)])
    run_both(lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1), [randn(2, 3, 4, 4)])
    if hasattr(F, 'pad'):
        run_both(lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode='reflect'), [randn(1, 2, 5, 5)])
        run_both(lambda nn: nn.Conv2d(2, 3, 3, padding=2, padding_mode='circular'), [randn(1, 2, 5, 5)])


def test_more_layer_families():
    run_both(lambda nn: nn.Conv3d(2, 3, 2, padding=1), [randn(1, 2, 3, 4, 3)])
    run_both(lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2, output_padding=1), [randn(2, 2, 5)])
    run_both(lambda nn: nn.MaxPool1d(2), [randn(2, 3, 8)])
    run_both(lambda nn: nn.AvgPool1d(3, 2, 1), [randn(2, 3, 8)])
    run_both(lambda nn: nn.AdaptiveAvgPool1d(3), [randn(2, 3, 7)])
    run_both(lambda nn: nn.InstanceNorm1d(3), [randn(2, 3, 6)])
    # (running statistics of instance norm are F.instance_norm's business: not compared here)
    run_both(lambda nn: nn.InstanceNorm2d(3, affine=True), [randn(2, 3, 4, 4)])
    run_both(lambda nn: nn.InstanceNorm1d(3), [randn(3, 6)])  # unbatched
    run_both(lambda nn: nn.Sequential(nn.ReflectionPad2d(2), nn.ZeroPad2d((1, 0, 2, 1)), nn.ReplicationPad2d(1)),
             [randn(1, 2, 4, 5)])
    run_both(lambda nn: nn.ConstantPad1d((1, 2), 3.5), [randn(2, 3, 4)])
    run_both(lambda nn: nn.Upsample(scale_factor=2), [randn(1, 2, 3, 3)])
    run_both(lambda nn: nn.Upsample(size=(5, 4), mode='bilinear', align_corners=False), [randn(1, 2, 3, 3)])
    run_both(lambda nn: nn.Sequential(nn.Unfold(2, padding=1), nn.Fold((4, 5), 2, padding=1)), [randn(1, 2, 4, 5)])


def test_pool_modules():
    run_both(lambda nn: nn.MaxPool2d(2), [randn(2, 3, 6, 6)])
    run_both(lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), [randn(1, 2, 7, 7)])
    run_both(lambda nn: nn.AvgPool2d(2, padding=1, count_include_pad=False), [randn(1, 2, 5, 5)])
    run_both(lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [randn(2, 2, 7, 8)])


def test_norm_modules():
    lm, tm = run_both(lambda nn: nn.BatchNorm1d(3), [randn(8, 3)])
    run_both(lambda nn: nn.BatchNorm1d(3, momentum=None), [randn(4, 3, 5)])
    lm, tm = run_both(lambda nn: nn.BatchNorm2d(3), [randn(4, 3, 2, 2)])
    assert int(lm.num_batches_tracked) == 1
    run_both(lambda nn: nn.BatchNorm2d(3), [randn(4, 3, 2, 2)], train=False)
    run_both(lambda nn: nn.BatchNorm2d(3, track_running_stats=False, affine=False), [randn(4, 3, 2, 2)], train=False)
    run_both(lambda nn: nn.LayerNorm(5), [randn(3, 4, 5)])
    run_both(lambda nn: nn.LayerNorm([4, 5], elementwise_affine=False), [randn(3, 4, 5)])
    run_both(lambda nn: nn.GroupNorm(2, 4), [randn(3, 4, 5)])
    lm, tm = raises_like(lambda: lnn.BatchNorm2d(3)(lg.zeros(2, 3)), lambda: tnn.BatchNorm2d(3)(torch.zeros(2, 3)))
    assert lm == tm


def test_dropout_module():
    m = lnn.Dropout(0.5)
    x = lg.ones(1000)
    y = m(x)
    kept = y.numpy() != 0
    assert 400 < kept.sum() < 600 and np.allclose(y.numpy()[kept], 2.0)
    m.eval()
    assert np.array_equal(m(x).numpy(), x.numpy())
    lm, tm = raises_like(lambda: lnn.Dropout(1.5), lambda: tnn.Dropout(1.5))
    assert lm == tm


def test_embedding_module():
    idx = np.array([[1, 2, 4], [4, 3, 0]])
    run_both(lambda nn: nn.Embedding(5, 3), [idx])
    run_both(lambda nn: nn.Embedding(5, 3, padding_idx=4), [idx])


def _rnn_inputs(batch_first, T=5, N=3, F_=4):
    return randn(N, T, F_) if batch_first else randn(T, N, F_)


@pytest.mark.parametrize('cls', ['RNN', 'LSTM', 'GRU'])
@pytest.mark.parametrize('layers,bidir,batch_first', [(1, False, False), (2, True, True), (2, False, True)])
def test_recurrent(cls, layers, bidir, batch_first):
    x = _rnn_inputs(batch_first)
    run_both(lambda nn: getattr(nn, cls)(4, 3, layers, batch_first=batch_first, bidirectional=bidir), [x])


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('cls,kw', [(cls, kw) for cls in ('RNN', 'LSTM', 'GRU') for kw in (
    {}, dict(num_layers=2), dict(bidirectional=True), dict(batch_first=True), dict(mkldnn=False))]
    + [('LSTM', dict(proj_size=2))], ids=repr)
def test_recurrent_history_named_as_pytorch_cpu(cls, kw, dtype):
    """An output's grad_fn is named as PyTorch's CPU kernels name it: a float32 LSTM layer is one
    oneDNN op (MkldnnRnnLayerBackward0) unless it has projections or mkldnn is disabled; GRU and
    RNN transpose a batch-first output in place (TransposeBackward1)."""
    kw = dict(kw)
    mkldnn = kw.pop('mkldnn', True)
    names = []
    for lib in (torch, lg):
        m = getattr(lib.nn, cls)(3, 4, **kw).to(getattr(lib, dtype))
        x = lib.tensor(randn(2, 5, 3)).to(getattr(lib, dtype))
        with lib.backends.mkldnn.flags(enabled=mkldnn), warnings.catch_warnings():
            warnings.simplefilter('ignore')  # PyTorch's LSTM with projections: "not supported with oneDNN"
            out, h = m(x)
        names.append((out.grad_fn.name(), (h[0] if cls == 'LSTM' else h).grad_fn.name()))
    assert names[1] == names[0]


@pytest.mark.parametrize('cls', ['RNN', 'LSTM', 'GRU'])
def test_recurrent_initial_state_unbatched_relu(cls):
    D, L, H = 2, 2, 3
    if cls == 'LSTM':
        class Wrap:
            pass
        h0, c0 = randn(L * D, 2, H), randn(L * D, 2, H) * 0.5

        def make(nn):
            lib = torch if nn is tnn else lg
            m = nn.LSTM(4, H, L, bidirectional=True)
            orig = m.forward

            def fwd(x):
                return orig(x, (lib.tensor(h0), lib.tensor(c0)))
            m.forward = fwd
            return m
        run_both(make, [randn(5, 2, 4)])
    else:
        h0 = randn(L * D, H)

        def make(nn):
            lib = torch if nn is tnn else lg
            kw = dict(nonlinearity='relu') if cls == 'RNN' else {}
            m = getattr(nn, cls)(4, H, L, bidirectional=True, bias=False, **kw)
            orig = m.forward
            m.forward = lambda x: orig(x, lib.tensor(h0))
            return m
        run_both(make, [randn(5, 4)])  # unbatched


def _fd_check(module, arrays, index=None):
    """leafgrad's gradcheck (float64) of the module's output with respect to its inputs and every
    parameter at once, the parameters passed through functional_call."""
    module = module.double()
    names = [name for name, _ in module.named_parameters()]
    params = [p.detach().clone().requires_grad_(True) for _, p in module.named_parameters()]
    inputs = [lg.tensor(a, requires_grad=True) for a in arrays]

    def value(*tensors):
        state = dict(zip(names, tensors[len(inputs):]))
        out = lg.func.functional_call(module, state, tuple(tensors[:len(inputs)]))
        return out if index is None else out[index]
    assert lg.autograd.gradcheck(value, (*inputs, *params), fast_mode=True)


@pytest.mark.parametrize('case', ['lstm', 'gru', 'rnn_relu_bidir', 'bilinear', 'mha', 'encoder'])
def test_finite_differences_float64(case):
    """Modules composed of leafgrad ops (recurrences, attention, bilinear) differentiate correctly."""
    lg.manual_seed(0)
    if case in ('lstm', 'gru', 'rnn_relu_bidir'):
        m = {'lstm': lambda: lnn.LSTM(2, 3), 'gru': lambda: lnn.GRU(2, 3, batch_first=True),
             'rnn_relu_bidir': lambda: lnn.RNN(2, 3, 2, nonlinearity='relu', bidirectional=True)}[case]()
        _fd_check(m, [randn(3, 2, 2)], index=0)
    elif case == 'bilinear':
        _fd_check(lnn.Bilinear(3, 2, 2), [randn(4, 3), randn(4, 2)])
    elif case == 'mha':
        _fd_check(lnn.MultiheadAttention(4, 2), [randn(3, 2, 4), randn(5, 2, 4), randn(5, 2, 4)], index=0)
    else:
        _fd_check(lnn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True), [randn(3, 2, 4)])


@pytest.mark.parametrize('cls', ['RNNCell', 'LSTMCell', 'GRUCell'])
def test_recurrent_cells(cls):
    run_both(lambda nn: getattr(nn, cls)(4, 3), [randn(5, 4)])
    run_both(lambda nn: getattr(nn, cls)(4, 3, bias=False), [randn(4)])  # unbatched

    def with_state(nn):
        lib = torch if nn is tnn else lg
        m = getattr(nn, cls)(4, 3)
        orig = m.forward
        h = lib.tensor(randn(2, 3))
        m.forward = (lambda x: orig(x, (h, h * 0.5))) if cls == 'LSTMCell' else (lambda x: orig(x, h))
        return m
    run_both(with_state, [randn(2, 4)])


def test_transformer_encoder():

    def make(nn):
        layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0)
        return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4), enable_nested_tensor=False)
    lm, tm = run_both(make, [randn(3, 2, 4)], rtol=1e-5, atol=1e-6)
    assert repr(lm) == repr(tm)


def test_recurrent_errors():
    lm, tm = raises_like(lambda: lnn.LSTM(3, 4)(lg.zeros(2, 3, 5)), lambda: tnn.LSTM(3, 4)(torch.zeros(2, 3, 5)))
    assert lm == tm
    lm, tm = raises_like(lambda: lnn.RNN(3, 4, nonlinearity='foo'), lambda: tnn.RNN(3, 4, nonlinearity='foo'))
    assert lm == tm
    lm, tm = raises_like(lambda: lnn.GRU(3, 4, dropout=2), lambda: tnn.GRU(3, 4, dropout=2))
    assert lm == tm


@pytest.mark.parametrize('batch_first', [False, True])
def test_multihead_attention(batch_first):
    L, S, N, E = 4, 5, 2, 6
    q, k = randn(L, N, E), randn(S, N, E)
    if batch_first:
        q, k = q.transpose(1, 0, 2).copy(), k.transpose(1, 0, 2).copy()
    run_both(lambda nn: nn.MultiheadAttention(E, 3, batch_first=batch_first), [q, k, k])
    mask = np.triu(np.ones((L, S), dtype=bool), 1)
    kpm = np.zeros((N, S), dtype=bool)
    kpm[1, -1] = True

    def make(nn):
        lib = torch if nn is tnn else lg
        m = nn.MultiheadAttention(E, 2, kdim=3, vdim=5, batch_first=batch_first)
        orig = m.forward
        m.forward = lambda q, k, v: orig(q, k, v, key_padding_mask=lib.tensor(kpm), attn_mask=lib.tensor(mask),
                                         average_attn_weights=False)
        return m
    kk = randn(S, N, 3) if not batch_first else randn(N, S, 3)
    vv = randn(S, N, 5) if not batch_first else randn(N, S, 5)
    run_both(make, [q, kk, vv])


@pytest.mark.parametrize('norm_first', [False, True])
def test_transformer_encoder_layer(norm_first):
    run_both(lambda nn: nn.TransformerEncoderLayer(6, 2, 10, dropout=0.0, norm_first=norm_first, batch_first=True),
             [randn(2, 4, 6)], rtol=1e-5, atol=1e-6)
    # masks: a causal float mask and a boolean key-padding mask
    kpm = np.zeros((2, 4), dtype=bool)
    kpm[0, -1] = True
    causal = np.triu(np.full((4, 4), -np.inf), 1)

    def masked(nn):
        lib = torch if nn is tnn else lg
        m = nn.TransformerEncoderLayer(6, 2, 10, dropout=0.0, norm_first=norm_first, batch_first=True)
        orig = m.forward
        m.forward = lambda x: orig(x, src_mask=lib.tensor(causal), src_key_padding_mask=lib.tensor(kpm))
        return m
    with pytest.warns(UserWarning, match='mismatched src_key_padding_mask and src_mask'):
        run_both(masked, [randn(2, 4, 6)], rtol=1e-5, atol=1e-6)
    # eval mode (no dropout) with the default dropout
    run_both(lambda nn: nn.TransformerEncoderLayer(6, 3, 8, activation='gelu'), [randn(4, 2, 6)], train=False,
             rtol=1e-5, atol=1e-6)
