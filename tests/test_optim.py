"""Optimizers and lr schedulers against torch: parameter trajectories over 20 steps."""
import copy
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def _problem(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal(3).astype(dtype),
            rng.standard_normal((8, 5)).astype(dtype), rng.standard_normal((8, 3)).astype(dtype))


def _loss(lib, w, b, x, y):
    out = lib.matmul(x, w) + b
    # sin makes the curvature vary, so the adaptive optimizers' states differ per element
    return ((out - y) ** 2).sum() + (w * w * w).sum() * 0.1


def _run(lib, opt_cls, kwargs, steps=20, dtype=np.float64, groups=False, sched=None, closure=False):
    w0, b0, x0, y0 = _problem(dtype)
    w = lib.tensor(w0.copy(), requires_grad=True)
    b = lib.tensor(b0.copy(), requires_grad=True)
    x, y = lib.tensor(x0), lib.tensor(y0)
    params = [{'params': [w]}, {'params': [b], 'lr': 0.05}] if groups else [w, b]
    opt = getattr(lib.optim, opt_cls)(params, **kwargs)
    scheduler = None
    if sched is not None:
        name, skw = sched
        scheduler = getattr(lib.optim.lr_scheduler, name)(opt, **skw)
    traj, lrs = [], []
    for i in range(steps):
        def closure_fn():
            opt.zero_grad()
            loss = _loss(lib, w, b, x, y)
            loss.backward()
            return loss
        if closure:
            opt.step(closure_fn)
        else:
            closure_fn()
            opt.step()
        if scheduler is not None:
            if name == 'ReduceLROnPlateau':
                scheduler.step([3.0, 2.0, 2.5, 2.5, 2.5, 2.5, 1.0][i % 7])
            else:
                scheduler.step()
            lrs.append([g['lr'] for g in opt.param_groups])
        traj.append((np.array(w.detach().numpy()), np.array(b.detach().numpy())))
    return traj, lrs, opt


def _compare(opt_cls, kwargs, rtol=1e-5, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        t_traj, t_lrs, _ = _run(torch, opt_cls, kwargs, **kw)
        l_traj, l_lrs, opt = _run(lg, opt_cls, kwargs, **kw)
    for step, ((tw, tb), (lw, lb)) in enumerate(zip(t_traj, l_traj)):
        np.testing.assert_allclose(lw, tw, rtol=rtol, atol=1e-7, err_msg=f'step {step}')
        np.testing.assert_allclose(lb, tb, rtol=rtol, atol=1e-7, err_msg=f'step {step}')
    np.testing.assert_allclose(np.array(l_lrs), np.array(t_lrs), rtol=1e-12)
    # the trajectory actually moved (a test that cannot fail is a defect)
    assert not np.allclose(t_traj[0][0], t_traj[-1][0])
    return opt


OPTIONS = [
    ('SGD', dict(lr=0.01)),
    ('SGD', dict(lr=0.01, momentum=0.9)),
    ('SGD', dict(lr=0.01, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ('SGD', dict(lr=0.01, momentum=0.9, nesterov=True, maximize=False)),
    ('SGD', dict(lr=0.01, momentum=0.5, nesterov=True, weight_decay=0.05)),
    ('Adam', dict(lr=0.01)),
    ('Adam', dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ('Adam', dict(lr=0.02, betas=(0.8, 0.9), eps=1e-6)),
    ('Adam', dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ('AdamW', dict(lr=0.01)),
    ('AdamW', dict(lr=0.01, amsgrad=True, weight_decay=0.2)),
    ('RMSprop', dict(lr=0.01)),
    ('RMSprop', dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ('RMSprop', dict(lr=0.01, alpha=0.9, centered=True)),
    ('RMSprop', dict(lr=0.01, momentum=0.5)),
    ('Adagrad', dict(lr=0.1)),
    ('Adagrad', dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ('Adadelta', dict()),
    ('Adadelta', dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ('Adamax', dict(lr=0.01)),
    ('Adamax', dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.99))),
    ('NAdam', dict(lr=0.01)),
    ('NAdam', dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ('NAdam', dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ('RAdam', dict(lr=0.01)),
    ('RAdam', dict(lr=0.01, weight_decay=0.1)),
    ('RAdam', dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
]


@pytest.mark.parametrize('opt_cls,kwargs', OPTIONS, ids=[f'{c}-{i}' for i, (c, _) in enumerate(OPTIONS)])
def test_trajectory_float64(opt_cls, kwargs):
    _compare(opt_cls, kwargs)


@pytest.mark.parametrize('opt_cls', ['SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad', 'Adadelta', 'Adamax', 'NAdam',
                                     'RAdam'])
def test_maximize_groups_float32(opt_cls):
    kwargs = dict(lr=0.01, maximize=True)
    if opt_cls == 'SGD':
        kwargs['momentum'] = 0.9
    _compare(opt_cls, kwargs, dtype=np.float32, groups=True, rtol=2e-5)


def test_closure_returns_loss():
    _compare('SGD', dict(lr=0.01, momentum=0.9), closure=True)
    w = lg.zeros(2, requires_grad=True)
    opt = lg.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 2.0


SCHEDULERS = [
    ('StepLR', dict(step_size=3, gamma=0.5)),
    ('MultiStepLR', dict(milestones=[2, 5, 5, 9], gamma=0.5)),
    ('ExponentialLR', dict(gamma=0.9)),
    ('CosineAnnealingLR', dict(T_max=6, eta_min=0.001)),
    ('LambdaLR', dict(lr_lambda=lambda e: 1.0 / (1 + e))),
    ('LinearLR', dict(start_factor=0.25, total_iters=6)),
    ('OneCycleLR', dict(max_lr=0.05, total_steps=25)),
    ('OneCycleLR', dict(max_lr=[0.05, 0.1], total_steps=25, anneal_strategy='linear', three_phase=True)),
    ('ReduceLROnPlateau', dict(factor=0.5, patience=1, cooldown=1)),
    ('MultiplicativeLR', dict(lr_lambda=lambda e: 0.9)), ('ConstantLR', dict(factor=0.5, total_iters=4)),
    ('PolynomialLR', dict(total_iters=8, power=2.0)), ('CosineAnnealingWarmRestarts', dict(T_0=3, T_mult=2)),
    ('ReduceLROnPlateau', dict(mode='max', factor=0.5, patience=0, threshold_mode='abs', min_lr=0.004)),
]


@pytest.mark.parametrize('name,skw', SCHEDULERS, ids=[f'{n}-{i}' for i, (n, _) in enumerate(SCHEDULERS)])
@pytest.mark.parametrize('opt_cls', ['SGD', 'Adam'])
def test_scheduler_trajectory(name, skw, opt_cls):
    kwargs = dict(lr=0.02, momentum=0.9) if opt_cls == 'SGD' else dict(lr=0.02)
    _compare(opt_cls, kwargs, groups=True, sched=(name, skw))


def _sequential(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    s1 = lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
    s2 = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
    seq = lib.optim.lr_scheduler.SequentialLR(opt, [s1, s2], milestones=[3])
    lrs = []
    for _ in range(10):
        opt.step()
        seq.step()
        lrs.append(seq.get_last_lr()[0])
    return lrs


def test_sequential_lr():
    np.testing.assert_allclose(_sequential(lg), _sequential(torch), rtol=1e-12)


def _chained(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    sched = lib.optim.lr_scheduler.ChainedScheduler([lib.optim.lr_scheduler.ConstantLR(opt, 0.5, 3),
                                                     lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)])
    lrs = []
    for _ in range(8):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    return lrs


def test_chained_scheduler():
    np.testing.assert_allclose(_chained(lg), _chained(torch), rtol=1e-12)


def test_scheduler_warns_before_optimizer_step():
    w = lg.zeros(2, requires_grad=True)
    opt = lg.optim.SGD([w], lr=0.1)
    sched = lg.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match='before `optimizer.step\\(\\)`'):
        sched.step()


def _state_resume(lib, opt_cls, kwargs):
    """10 steps, save optimizer state, rebuild and load, 10 more: equals 20 straight steps."""
    w0, b0, x0, y0 = _problem()
    x, y = lib.tensor(x0), lib.tensor(y0)

    def make(wd, bd):
        w = lib.tensor(wd, requires_grad=True)
        b = lib.tensor(bd, requires_grad=True)
        return w, b, getattr(lib.optim, opt_cls)([w, b], **kwargs)

    def steps(w, b, opt, n):
        for _ in range(n):
            opt.zero_grad()
            _loss(lib, w, b, x, y).backward()
            opt.step()
    w, b, opt = make(w0.copy(), b0.copy())
    steps(w, b, opt, 10)
    sd = opt.state_dict()
    w2, b2, opt2 = make(w.detach().numpy().copy(), b.detach().numpy().copy())
    # load_state_dict keeps (does not copy) state tensors of the right dtype, in both libraries
    opt2.load_state_dict(copy.deepcopy(sd))
    steps(w2, b2, opt2, 10)
    steps(w, b, opt, 10)
    return w2.detach().numpy(), w.detach().numpy(), sd


@pytest.mark.parametrize('opt_cls,kwargs', [('SGD', dict(lr=0.01, momentum=0.9)), ('Adam', dict(lr=0.01, amsgrad=True)),
                                            ('Adagrad', dict(lr=0.1)), ('NAdam', dict(lr=0.01)),
                                            ('RMSprop', dict(lr=0.01, centered=True, momentum=0.5))])
def test_state_dict_round_trip(opt_cls, kwargs):
    resumed, straight, sd = _state_resume(lg, opt_cls, kwargs)
    np.testing.assert_array_equal(resumed, straight)
    t_resumed, _, t_sd = _state_resume(torch, opt_cls, kwargs)
    np.testing.assert_allclose(resumed, t_resumed, rtol=1e-10)
    # the same layout as torch's: keys of the groups and of each parameter's state
    assert sd['param_groups'][0].keys() == t_sd['param_groups'][0].keys()
    assert sd['param_groups'][0]['params'] == t_sd['param_groups'][0]['params']
    assert sorted(sd['state']) == sorted(t_sd['state'])
    for k in t_sd['state']:
        assert sd['state'][k].keys() == t_sd['state'][k].keys()
        for key, tv in t_sd['state'][k].items():
            lv = sd['state'][k][key]
            assert str(lv.dtype).split('.')[-1] == str(tv.dtype).split('.')[-1], key
            np.testing.assert_allclose(lv.numpy(), tv.numpy(), rtol=1e-10)


def test_load_state_dict_errors():
    w = lg.zeros(2, requires_grad=True)
    v = lg.zeros(2, requires_grad=True)
    opt = lg.optim.SGD([w], lr=0.1)
    opt2 = lg.optim.SGD([{'params': [w]}, {'params': [v]}], lr=0.1)
    with pytest.raises(ValueError, match='different number of parameter groups'):
        opt.load_state_dict(opt2.state_dict())
    opt3 = lg.optim.SGD([w, v], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(opt3.state_dict())


@pytest.mark.parametrize('make', [
    lambda lib, p: lib.optim.SGD(p, lr=-1),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=-1),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, nesterov=True),
    lambda lib, p: lib.optim.Adam(p, betas=(1.0, 0.9)),
    lambda lib, p: lib.optim.Adam(p, eps=-1),
    lambda lib, p: lib.optim.RMSprop(p, alpha=-1),
    lambda lib, p: lib.optim.Adadelta(p, rho=2),
    lambda lib, p: lib.optim.SGD([], lr=0.1),
    lambda lib, p: lib.optim.SGD(p[0], lr=0.1),
    lambda lib, p: lib.optim.SGD([{'params': p}, {'params': p}], lr=0.1),
])
def test_constructor_errors(make):
    from oracle import raises_like, same_message
    lm, tm = raises_like(lambda: make(lg, [lg.zeros(2, requires_grad=True)]),
                         lambda: make(torch, [torch.zeros(2, requires_grad=True)]))
    assert same_message(lm, tm), (lm, tm)


def test_repr_and_zero_grad():
    tw = torch.zeros(2, requires_grad=True)
    lw = lg.zeros(2, requires_grad=True)
    assert repr(lg.optim.Adam([lw], lr=0.1)) == repr(torch.optim.Adam([tw], lr=0.1))
    assert repr(lg.optim.SGD([lw], lr=0.1)) == repr(torch.optim.SGD([tw], lr=0.1))
    opt = lg.optim.SGD([lw], lr=0.1)
    lw.sum().backward()
    opt.zero_grad(set_to_none=False)
    assert lw.grad is not None and float(lw.grad.sum()) == 0.0
    opt.zero_grad()
    assert lw.grad is None


def test_updates_are_in_place():
    w = lg.zeros(3, requires_grad=True)
    data = w._data
    opt = lg.optim.Adam([w], lr=0.1)
    (w * lg.tensor([1.0, 2.0, 3.0])).sum().backward()
    v = w._version
    opt.step()
    assert w._data is data and w._version == v + 1
    assert math.isclose(float(w[0]), -0.1, rel_tol=1e-6)


def test_sgd_without_momentum_keeps_no_state():
    for lib in (lg, torch):
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        w.sum().backward()
        opt.step()
        assert opt.state_dict()['state'] == {} and len(opt.state) == 0


def test_step_hooks():
    calls = []
    for lib in (lg, torch):
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.1)
        h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(('pre', type(o).__name__)))
        opt.register_step_post_hook(lambda o, a, k: calls.append(('post', float(w.detach()[0]))))
        w.sum().backward()
        opt.step()
        h1.remove()
        opt.step()
    half = len(calls) // 2
    assert calls[:half] == calls[half:]
    assert [c[0] for c in calls[:half]] == ['pre', 'post', 'post']


def test_combined_schedulers_refuse_what_torch_refuses():
    def messages(T):
        out = []
        opt = T.optim.SGD([T.nn.Parameter(T.ones(2))], lr=0.1)
        other = T.optim.SGD([T.nn.Parameter(T.ones(2))], lr=0.1)
        step, plateau = T.optim.lr_scheduler.StepLR(opt, 1), T.optim.lr_scheduler.ReduceLROnPlateau(opt)
        foreign = T.optim.lr_scheduler.StepLR(other, 1)
        for make in (lambda: T.optim.lr_scheduler.SequentialLR(opt, [step, plateau], [1]),
                     lambda: T.optim.lr_scheduler.SequentialLR(opt, [step, foreign], [1]),
                     lambda: T.optim.lr_scheduler.ChainedScheduler([step, plateau]),
                     lambda: T.optim.lr_scheduler.SequentialLR(opt, [step, object()], [1])):
            try:
                make()
            except Exception as e:  # the optimizer's repr differs between the two: compare up to it
                out.append((type(e).__name__, str(e).split(' has ')[0].replace('leafgrad', 'torch')))
            else:
                out.append(None)
        return out
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        assert messages(lg) == messages(torch)
