"""The nn.Module API against torch: iteration, state dicts (missing/unexpected keys, shape
errors, assign), registration errors, modes, dtype moves, forward and full backward hooks,
deepcopy; and nn.utils (gradient clipping, parameters as one vector)."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
from oracle import assert_same, raises_like, same_message  # noqa: E402
from test_nn_modules import copy_weights, randn  # noqa: E402

tnn, lnn = torch.nn, lg.nn


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


def test_backward_hook_argument_layout_like_torch():
    """grad_input/grad_output list every argument/output, None where it is not a tensor."""
    seen = {}
    for name, lib, nn in (('l', lg, lnn), ('t', torch, tnn)):
        lib.manual_seed(0)
        m = nn.LSTM(3, 2)
        seen[name] = []
        m.register_full_backward_hook(lambda mod, gi, go, key=name: seen[key].append(
            ([None if g is None else tuple(g.shape) for g in gi], [None if g is None else tuple(g.shape) for g in go])))
        x = lib.randn(4, 1, 3, requires_grad=True)
        out, _ = m(x)
        out.sum().backward()
        # a module called with a non-tensor argument, and without any input requiring grad
        lin = nn.Bilinear(2, 2, 1)
        lin.register_full_backward_hook(lambda mod, gi, go, key=name: seen[key].append(
            ([None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])))
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            lin(lib.ones(3, 2), lib.ones(3, 2)).sum().backward()
    assert seen['l'] == seen['t']


@pytest.mark.parametrize('backward_hook', [False, True])
@pytest.mark.parametrize('where', ['forward', 'pre_hook', 'hook'])
def test_always_call_hooks_run_when_the_call_raises(where, backward_hook):
    """register_forward_hook(always_call=True): when forward, a pre-hook or an earlier forward
    hook raises, the always-called hooks not yet run get output None, a hook's own exception
    becomes torch's warning, and the first exception propagates; other hooks do not run."""
    def run(lib):
        seen = []

        class Boom(lib.nn.Module):
            def forward(self, x):
                if where == 'forward':
                    raise ValueError('bad forward')
                return x * 2

        m = Boom()
        if where == 'pre_hook':
            m.register_forward_pre_hook(lambda mod, args: (_ for _ in ()).throw(ValueError('bad pre')))
        if backward_hook:
            m.register_full_backward_hook(lambda mod, gi, go: None)
        m.register_forward_hook(lambda mod, args, out: seen.append(('first', out)), always_call=True)
        if where == 'hook':
            m.register_forward_hook(lambda mod, args, out: (_ for _ in ()).throw(ValueError('bad hook')))
        m.register_forward_hook(lambda mod, args, out: seen.append(('plain', out)))
        m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(('kw', out, sorted(kwargs))),
                                with_kwargs=True, always_call=True)

        def raising(mod, args, out):
            seen.append(('raising', out))
            raise KeyError('from an always-called hook')
        m.register_forward_hook(raising, always_call=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            with pytest.raises(ValueError) as info:
                m(lib.ones(2, requires_grad=True))
        return ([tuple(None if isinstance(v, lib.Tensor) else v for v in entry) for entry in seen], str(info.value),
                [str(w.message) for w in caught])
    assert run(lg) == run(torch)


def test_always_call_hooks_do_not_run_twice():
    def run(lib):
        seen = []
        m = lib.nn.Linear(2, 2)
        m.register_forward_hook(lambda mod, args, out: seen.append('always'), always_call=True)
        m.register_forward_hook(lambda mod, args, out: (_ for _ in ()).throw(RuntimeError('late')))
        with pytest.raises(RuntimeError, match='late'):
            m(lib.ones(2))
        return seen
    assert run(lg) == run(torch) == ['always']
