"""nn modules against torch: reprs, state_dict keys and shapes, default initialisation, outputs
and gradients with copied weights, the Module API (registration, state dicts, modes, hooks).

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


def need(*names):
    """Skip unless leafgrad provides these ops (nn.functional first, then the top level)."""
    missing = [n for n in names if not hasattr(F, n) and not hasattr(lg, n)]
    if missing:
        pytest.skip(f'leafgrad does not provide {missing} yet')


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
    for lib in (torch, lg):
        pass
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
    need(op, *(['chunk'] if op == 'glu' else []))
    x = randn(2, 3, 4, 5)
    x[np.abs(x) < 1e-3] = 0.5  # keep away from kinks
    run_both(lambda nn: getattr(nn, name)(*args), [x])


def test_activation_inplace():
    need('relu')
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
    need(op)
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


def test_conv_modules():
    need('conv1d', 'conv2d', 'conv_transpose2d')
    run_both(lambda nn: nn.Conv1d(2, 4, 3, padding='same'), [randn(2, 2, 7)])
    run_both(lambda nn: nn.Conv2d(3, 4, 3, stride=2, padding=1), [randn(2, 3, 7, 6)])
    run_both(lambda nn: nn.Conv2d(4, 6, (3, 2), dilation=(2, 1), groups=2, bias=False), [randn(1, 4, 8, 5)])
    run_both(lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1), [randn(2, 3, 4, 4)])
    if hasattr(F, 'pad'):
        run_both(lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode='reflect'), [randn(1, 2, 5, 5)])
        run_both(lambda nn: nn.Conv2d(2, 3, 3, padding=2, padding_mode='circular'), [randn(1, 2, 5, 5)])


def test_pool_modules():
    need('max_pool2d', 'avg_pool2d', 'adaptive_avg_pool2d')
    run_both(lambda nn: nn.MaxPool2d(2), [randn(2, 3, 6, 6)])
    run_both(lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True), [randn(1, 2, 7, 7)])
    run_both(lambda nn: nn.AvgPool2d(2, padding=1, count_include_pad=False), [randn(1, 2, 5, 5)])
    run_both(lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [randn(2, 2, 7, 8)])


def test_norm_modules():
    need('batch_norm', 'layer_norm', 'group_norm')
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
    need('dropout')
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
    need('embedding')
    idx = np.array([[1, 2, 4], [4, 3, 0]])
    run_both(lambda nn: nn.Embedding(5, 3), [idx])
    run_both(lambda nn: nn.Embedding(5, 3, padding_idx=4), [idx])


def _rnn_inputs(batch_first, T=5, N=3, F_=4):
    return randn(N, T, F_) if batch_first else randn(T, N, F_)


@pytest.mark.parametrize('cls', ['RNN', 'LSTM', 'GRU'])
@pytest.mark.parametrize('layers,bidir,batch_first', [(1, False, False), (2, True, True), (2, False, True)])
def test_recurrent(cls, layers, bidir, batch_first):
    need('stack', 'cat')
    x = _rnn_inputs(batch_first)
    run_both(lambda nn: getattr(nn, cls)(4, 3, layers, batch_first=batch_first, bidirectional=bidir), [x])


@pytest.mark.parametrize('cls', ['RNN', 'LSTM', 'GRU'])
def test_recurrent_initial_state_unbatched_relu(cls):
    need('stack', 'cat')
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
    """Gradients of sum(w * output) w.r.t. every input and parameter against central differences."""
    rng = np.random.default_rng(7)
    module = module.double()
    inputs = [lg.tensor(a, requires_grad=True) for a in arrays]

    def value():
        out = module(*inputs)
        out = out if index is None else out[index]
        return out
    out = value()
    w = lg.tensor(rng.standard_normal(tuple(out.shape)))
    (out * w).sum().backward()
    leaves = inputs + list(module.parameters())
    analytic = [t.grad.numpy().copy() for t in leaves]
    eps = 1e-6
    with lg.no_grad():
        for t, g in zip(leaves, analytic):
            data = t._data
            for i in list(np.ndindex(data.shape))[:12]:  # a sample of the entries keeps this fast
                old = data[i]
                data[i] = old + eps
                plus = float((value() * w).sum())
                data[i] = old - eps
                minus = float((value() * w).sum())
                data[i] = old
                np.testing.assert_allclose(g[i], (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize('case', ['lstm', 'gru', 'rnn_relu_bidir', 'bilinear', 'mha', 'encoder'])
def test_finite_differences_float64(case):
    """Modules composed of leafgrad ops (recurrences, attention, bilinear) differentiate correctly."""
    lg.manual_seed(0)
    if case in ('lstm', 'gru', 'rnn_relu_bidir'):
        need('stack', 'cat')
        m = {'lstm': lambda: lnn.LSTM(2, 3), 'gru': lambda: lnn.GRU(2, 3, batch_first=True),
             'rnn_relu_bidir': lambda: lnn.RNN(2, 3, 2, nonlinearity='relu', bidirectional=True)}[case]()
        _fd_check(m, [randn(3, 2, 2)], index=0)
    elif case == 'bilinear':
        _fd_check(lnn.Bilinear(3, 2, 2), [randn(4, 3), randn(4, 2)])
    elif case == 'mha':
        need('softmax')
        _fd_check(lnn.MultiheadAttention(4, 2), [randn(3, 2, 4), randn(5, 2, 4), randn(5, 2, 4)], index=0)
    else:
        need('softmax', 'layer_norm', 'dropout')
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
    need('softmax', 'layer_norm', 'dropout')

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
    need('softmax')
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
    need('softmax', 'layer_norm', 'dropout', 'gelu')
    run_both(lambda nn: nn.TransformerEncoderLayer(6, 2, 10, dropout=0.0, norm_first=norm_first, batch_first=True),
             [randn(2, 4, 6)], rtol=1e-5, atol=1e-6)
    # eval mode (no dropout) with the default dropout
    run_both(lambda nn: nn.TransformerEncoderLayer(6, 3, 8, activation='gelu'), [randn(4, 2, 6)], train=False,
             rtol=1e-5, atol=1e-6)


# ---- the Module API ---------------------------------------------------------------------------
class _Net:
    """The same small network in both libraries."""

    @staticmethod
    def make(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(3, 4)
                self.act = nn.Tanh()
                self.block = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())
                self.shared = self.fc1
                self.register_buffer('scale', lib.ones(4))
                self.register_buffer('tmp', lib.zeros(2), persistent=False)
                self.alpha = nn.Parameter(lib.tensor(0.5))

            def forward(self, x):
                return self.block(self.act(self.fc1(x)) * self.scale) * self.alpha
        return Net()


def test_module_iteration_and_state_dict():
    tm, lm = _Net.make(torch), _Net.make(lg)
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in lm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    assert [n for n, _ in lm.named_children()] == [n for n, _ in tm.named_children()]
    assert [n for n, _ in lm.named_modules()] == [n for n, _ in tm.named_modules()]
    assert [n for n, _ in lm.named_modules(remove_duplicate=False)] == \
        [n for n, _ in tm.named_modules(remove_duplicate=False)]
    assert [n for n, _ in lm.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in tm.named_parameters(remove_duplicate=False)]
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert len(list(lm.children())) == len(list(tm.children()))
    assert len(list(lm.modules())) == len(list(tm.modules()))
    assert repr(lm) == repr(tm)
    assert lm.get_submodule('block.0') is lm.block[0]
    assert lm.get_parameter('block.0.weight') is lm.block[0].weight
    copy_weights(lm, tm)
    x = randn(5, 3).astype(np.float32)
    assert_same(lm(lg.tensor(x)), tm(torch.tensor(x)))


def test_load_state_dict_reports_like_torch():
    tm, lm = _Net.make(torch), _Net.make(lg)
    tsd = tm.state_dict()
    bad_t = dict(tsd)
    bad_t.pop('fc1.bias')
    bad_t['extra.weight'] = torch.zeros(1)
    bad_l = {k: lg.tensor(v.numpy()) for k, v in bad_t.items()}
    lmsg, tmsg = raises_like(lambda: lm.load_state_dict(bad_l), lambda: tm.load_state_dict(bad_t))
    assert same_message(lmsg, tmsg), (lmsg, tmsg)
    lres, tres = lm.load_state_dict(bad_l, strict=False), tm.load_state_dict(bad_t, strict=False)
    assert lres.missing_keys == tres.missing_keys and lres.unexpected_keys == tres.unexpected_keys
    assert repr(lres) == repr(tres)
    good = {k: lg.tensor(v.numpy()) for k, v in tsd.items()}
    assert repr(lm.load_state_dict(good)) == repr(tm.load_state_dict(tsd)) == '<All keys matched successfully>'
    # a shape mismatch is an error even with strict=False, and nothing is changed
    before = {k: v.numpy().copy() for k, v in lm.state_dict().items()}
    wrong_t = dict(tsd)
    wrong_t['fc1.weight'] = torch.zeros(2, 3)
    wrong_t['block.0.bias'] = torch.ones(4) * 7
    wrong_l = {k: lg.tensor(v.numpy()) for k, v in wrong_t.items()}
    lmsg, tmsg = raises_like(lambda: lm.load_state_dict(wrong_l, strict=False),
                             lambda: tm.load_state_dict(wrong_t, strict=False))
    assert same_message(lmsg, tmsg), (lmsg, tmsg)
    for k, v in lm.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def test_registration_errors():
    def pairs(fn):
        return fn(lnn, lg), fn(tnn, torch)
    cases = [
        lambda nn, lib: nn.Module().register_buffer('a.b', None),
        lambda nn, lib: nn.Module().register_parameter('', None),
        lambda nn, lib: nn.Module().register_parameter('w', lib.zeros(2)),
        lambda nn, lib: nn.Module().add_module('a.b', None),
        lambda nn, lib: nn.Module().add_module('x', 3),
        lambda nn, lib: nn.Module().register_buffer('x', 3),
        lambda nn, lib: setattr(nn.Linear(2, 2), 'weight', lib.zeros(2, 2)),
        lambda nn, lib: nn.Module().train('yes'),
        lambda nn, lib: nn.Module()(lib.zeros(1)),
        lambda nn, lib: nn.Linear(2, 2).nonexistent,
    ]
    for case in cases:
        lm, tm = raises_like(lambda: case(lnn, lg), lambda: case(tnn, torch))
        assert same_message(lm, tm), (lm, tm)


def test_modes_requires_grad_zero_grad_apply_to():
    lm = _Net.make(lg)
    lm.eval()
    assert not any(m.training for m in lm.modules())
    lm.train()
    assert all(m.training for m in lm.modules())
    lm.requires_grad_(False)
    assert not any(p.requires_grad for p in lm.parameters())
    lm.requires_grad_()
    lm(lg.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in lm.parameters())
    lm.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in lm.parameters())
    lm.zero_grad()
    assert all(p.grad is None for p in lm.parameters())
    names = []
    lm.apply(lambda m: names.append(type(m).__name__))
    tnames = []
    _Net.make(torch).apply(lambda m: tnames.append(type(m).__name__))
    assert names == tnames
    params = list(lm.parameters())
    assert lm.double() is lm
    assert all(p.dtype == lg.float64 for p in lm.parameters()) and lm.scale.dtype == lg.float64
    assert all(a is b for a, b in zip(params, lm.parameters()))  # the same Parameter objects
    lm.to(lg.float32)
    assert all(p.dtype == lg.float32 for p in lm.parameters())
    lm.to('cpu').float().cpu()
    assert all(p.is_leaf and p.requires_grad for p in lm.parameters())
    m = lnn.Module()
    m.register_buffer('count', lg.tensor(3))
    m.double()
    assert m.count.dtype == lg.int64  # integer buffers keep their dtype


def test_forward_hooks():
    tm, lm = _Net.make(torch), _Net.make(lg)
    copy_weights(lm, tm)
    seen = {'t': [], 'l': []}

    def install(m, key, lib):
        def pre(mod, args):
            seen[key].append(('pre', type(mod).__name__))
            return (args[0] * 2,)

        def post(mod, args, out):
            seen[key].append(('post', type(mod).__name__, tuple(out.shape)))
            return out + 1
        h1 = m.fc1.register_forward_pre_hook(pre)
        h2 = m.block.register_forward_hook(post)
        m.register_forward_hook(lambda mod, a, o: seen[key].append(('top',)), prepend=True)
        return h1, h2
    th, lh = install(tm, 't', torch), install(lm, 'l', lg)
    x = randn(2, 3).astype(np.float32)
    assert_same(lm(lg.tensor(x)), tm(torch.tensor(x)))
    assert seen['l'] == seen['t']
    for h in lh + th:
        h.remove()
    assert_same(lm(lg.tensor(x)), tm(torch.tensor(x)))


def _backward_hook_run(lib, nn, x_requires_grad):
    lib.manual_seed(0)
    m = nn.Linear(3, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], dtype=lib.float64))
        m.bias.copy_(lib.tensor([0.05, -0.05], dtype=lib.float64))
    record = []

    def hook(mod, grad_input, grad_output):
        record.append(([None if g is None else g.detach().numpy().copy() for g in grad_input],
                       [g.detach().numpy().copy() for g in grad_output]))
        if grad_input[0] is not None:
            return (grad_input[0] * 10,)

    def pre_hook(mod, grad_output):
        record.append(('pre', [g.detach().numpy().copy() for g in grad_output]))
        return (grad_output[0] * 2,)
    m.register_full_backward_hook(hook)
    m.register_full_backward_pre_hook(pre_hook)
    x = lib.tensor(np.arange(6.0).reshape(2, 3) / 7, requires_grad=x_requires_grad)
    y = m(x)
    name = y.grad_fn.name().split('.')[-1]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
    return record, (x.grad.numpy() if x_requires_grad else None), m.weight.grad.numpy(), name


@pytest.mark.parametrize('x_requires_grad', [True, False])
def test_full_backward_hook(x_requires_grad):
    lrec, lxg, lwg, lname = _backward_hook_run(lg, lnn, x_requires_grad)
    trec, txg, twg, tname = _backward_hook_run(torch, tnn, x_requires_grad)
    assert lname == tname == 'BackwardHookFunctionBackward'
    assert len(lrec) == len(trec) == 2
    assert lrec[0][0] == 'pre'
    np.testing.assert_allclose(lrec[0][1][0], trec[0][1][0])
    for (lgi, lgo), (tgi, tgo) in zip(lrec[1:], trec[1:]):
        assert len(lgi) == len(tgi)
        for a, b in zip(lgi, tgi):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b)
        for a, b in zip(lgo, tgo):
            np.testing.assert_allclose(a, b)
    if x_requires_grad:
        np.testing.assert_allclose(lxg, txg)  # the hook's replacement grad_input reached x
    np.testing.assert_allclose(lwg, twg)


# ---- nn.utils -----------------------------------------------------------------------------------------
@pytest.mark.parametrize('norm_type', [2.0, 1.0, math.inf, 3.0])
@pytest.mark.parametrize('max_norm', [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    results = []
    for lib in (lg, torch):
        ps = [lib.tensor(randn(3, 4), requires_grad=True), lib.tensor(randn(5), requires_grad=True),
              lib.tensor(randn(2), requires_grad=True)]
        (ps[0].sum() * 2 + (ps[1] ** 2).sum()).backward()
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        results.append((total, [p.grad for p in ps[:2]], ps[2].grad))
    (lt, lgr, l_none), (tt, tgr, t_none) = results
    assert_same(lt, tt, rtol=1e-6)
    for a, b in zip(lgr, tgr):
        assert_same(a, b, rtol=1e-6)
    assert l_none is None and t_none is None


def test_clip_grad_value_and_nonfinite():
    for lib in (lg, torch):
        p = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (p * lib.tensor([-5.0, 0.5, 5.0])).sum().backward()
        lib.nn.utils.clip_grad_value_([p], 1.0)
        assert p.grad.tolist() == [-1.0, 0.5, 1.0]
    lp = lg.tensor([1.0], requires_grad=True)
    tp = torch.tensor([1.0], requires_grad=True)
    lp.grad, tp.grad = lg.tensor([math.inf]), torch.tensor([math.inf])
    lm, tm = raises_like(lambda: lg.nn.utils.clip_grad_norm_([lp], 1.0, error_if_nonfinite=True),
                         lambda: torch.nn.utils.clip_grad_norm_([tp], 1.0, error_if_nonfinite=True))
    assert lm == tm


def test_parameters_vector_round_trip():
    need('cat')
    lmod, tmod = lnn.Linear(3, 2), tnn.Linear(3, 2)
    copy_weights(lmod, tmod)
    lv = lnn.utils.parameters_to_vector(lmod.parameters())
    tv = tnn.utils.parameters_to_vector(tmod.parameters())
    assert_same(lv, tv)
    lnn.utils.vector_to_parameters(lv * 2, lmod.parameters())
    tnn.utils.vector_to_parameters(tv * 2, tmod.parameters())
    for a, b in zip(lmod.parameters(), tmod.parameters()):
        assert_same(a.detach(), b.detach())
    lm, tm = raises_like(lambda: lnn.utils.vector_to_parameters([1.0], lmod.parameters()),
                         lambda: tnn.utils.vector_to_parameters([1.0], tmod.parameters()))
    assert lm == tm


def test_hooks_with_kwargs_and_assign_and_deepcopy():
    import copy
    results = []
    for lib, nn in ((lg, lnn), (torch, tnn)):
        class Scale(nn.Module):
            def forward(self, x, factor=1.0):
                return x * factor
        m = Scale()
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {'factor': kwargs.get('factor', 1.0) * 3}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs['factor'], with_kwargs=True)
        results.append(m(lib.tensor([1.0, 2.0]), factor=2.0).tolist())
    assert results[0] == results[1] == [12.0, 18.0]
    # assign=True puts the given tensors in the module (as Parameters), copy_ does not
    lin = lnn.Linear(2, 2)
    new_w = lg.ones(2, 2)
    lin.load_state_dict({'weight': new_w, 'bias': lg.zeros(2)}, assign=True)
    assert isinstance(lin.weight, lnn.Parameter) and lin.weight._data is new_w._data and lin.weight.requires_grad
    lmsg, tmsg = raises_like(lambda: lnn.Linear(2, 2).load_state_dict({'weight': 3, 'bias': lg.zeros(2)}),
                             lambda: tnn.Linear(2, 2).load_state_dict({'weight': 3, 'bias': torch.zeros(2)}))
    assert same_message(lmsg, tmsg), (lmsg, tmsg)
    lmsg, tmsg = raises_like(lambda: lnn.Linear(2, 2).load_state_dict([1]), lambda: tnn.Linear(2, 2).load_state_dict([1]))
    assert same_message(lmsg, tmsg), (lmsg, tmsg)
    # deepcopy gives independent parameters of the same values
    net = _Net.make(lg)
    twin = copy.deepcopy(net)
    for (n1, p1), (n2, p2) in zip(net.named_parameters(), twin.named_parameters()):
        assert n1 == n2 and p1 is not p2 and isinstance(p2, lnn.Parameter)
        np.testing.assert_array_equal(p1.detach().numpy(), p2.detach().numpy())
    with lg.no_grad():
        twin.fc1.weight.add_(1)
    assert not np.array_equal(twin.fc1.weight.detach().numpy(), net.fc1.weight.detach().numpy())
    assert twin.shared is twin.fc1  # sharing is preserved
    with pytest.warns(UserWarning, match='zero-element'):
        lnn.init.kaiming_uniform_(lg.empty(0, 3))
    lmsg, tmsg = raises_like(lambda: lnn.init.kaiming_uniform_(lg.empty(2, 3), mode='fan'),
                             lambda: tnn.init.kaiming_uniform_(torch.empty(2, 3), mode='fan'))
    assert lmsg == tmsg
