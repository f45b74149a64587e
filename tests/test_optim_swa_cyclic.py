"""lr_scheduler.CyclicLR and optim.swa_utils (AveragedModel, SWALR, update_bn, the avg_fn
factories) against torch."""
import warnings

import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg
from test_optim import _compare


@pytest.mark.parametrize('opt_cls,skw', [
    ('SGD', dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
    ('SGD', dict(base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=5, mode='triangular2')),
    ('SGD', dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=4, mode='exp_range', gamma=0.9)),
    ('Adam', dict(base_lr=0.001, max_lr=0.01, step_size_up=3, base_momentum=0.8, max_momentum=0.95)),
    ('SGD', dict(base_lr=0.01, max_lr=0.05, step_size_up=3, cycle_momentum=False,
                 scale_fn=lambda x: 1 / (x + 1), scale_mode='iterations'))])
def test_cyclic_lr(opt_cls, skw):
    kwargs = dict(lr=0.01, momentum=0.9) if opt_cls == 'SGD' else dict(lr=0.01)
    opt = _compare(opt_cls, kwargs, groups=True, sched=('CyclicLR', skw))
    if skw.get('cycle_momentum', True):
        key = 'betas' if opt_cls == 'Adam' else 'momentum'
        assert key in opt.param_groups[0]


def test_cyclic_lr_momentum_values_and_errors():
    res = []
    for lib in (torch, lg):
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        s = lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=2, mode='triangular2')
        vals = []
        for _ in range(9):
            opt.step()
            s.step()
            vals.append((opt.param_groups[0]['lr'], opt.param_groups[0]['momentum']))
        sd = s.state_dict()
        res.append((vals, sorted(sd)))
    assert res[0][0] == res[1][0]
    assert res[0][1] == res[1][1]
    for make in (lambda L: L.optim.lr_scheduler.CyclicLR(L.optim.Adagrad([L.zeros(1, requires_grad=True)]),
                                                          0.01, 0.1),
                 lambda L: L.optim.lr_scheduler.CyclicLR(L.optim.SGD([L.zeros(1, requires_grad=True)], lr=0.1,
                                                                     momentum=0.9), 0.01, 0.1, mode='foo'),
                 lambda L: L.optim.lr_scheduler.CyclicLR(L.optim.SGD([L.zeros(1, requires_grad=True)], lr=0.1,
                                                                     momentum=0.9), [0.1, 0.2], 0.1)):
        a, b = raises_like(lambda: make(lg), lambda: make(torch))
        assert same_message(a, b), (a, b)


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


@pytest.mark.parametrize('kind', ['swa', 'ema', 'ema_multi', 'swa_multi', 'use_buffers'])
def test_averaged_model(kind):
    data = np.random.default_rng(0).standard_normal((6, 8, 3)).astype(np.float32)
    results = []
    for lib in (torch, lg):
        lib.manual_seed(0)
        net = _net(lib)
        su = lib.optim.swa_utils
        kw = {'ema': dict(avg_fn=su.get_ema_avg_fn(0.9)), 'ema_multi': dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8)),
              'swa_multi': dict(multi_avg_fn=su.get_swa_multi_avg_fn()), 'use_buffers': dict(use_buffers=True),
              'swa': {}}[kind]
        avg = su.AveragedModel(net, **kw)
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        sched = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        lrs = []
        for x in data:
            opt.zero_grad()
            net(lib.tensor(x)).pow(2).sum().backward()
            opt.step()
            avg.update_parameters(net)
            sched.step()
            lrs.append(opt.param_groups[0]['lr'])
        su.update_bn([(lib.tensor(x), 0) for x in data], avg)
        avg.eval()
        out = avg(lib.tensor(data[0]))
        results.append((out, lrs, avg.state_dict()))
    (to, tl, tsd), (lo, ll, lsd) = results
    assert_same(lo, to, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ll, tl, rtol=1e-12)
    assert list(lsd) == list(tsd)
    for k in tsd:
        assert_same(lsd[k], tsd[k], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('strategy,epochs', [('cos', 3), ('linear', 4), ('cos', 0)])
def test_swalr(strategy, epochs):
    res = []
    for lib in (torch, lg):
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([{'params': [w]}, {'params': [lib.zeros(1, requires_grad=True)], 'lr': 0.3}], lr=0.1)
        s = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.01, 0.02], anneal_epochs=epochs, anneal_strategy=strategy)
        vals = []
        for _ in range(7):
            opt.step()
            s.step()
            vals.append([g['lr'] for g in opt.param_groups])
        res.append((vals, sorted(s.state_dict())))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    assert res[1][1] == res[0][1]


@pytest.mark.parametrize('case', ['both_fns', 'decay', 'strategy', 'epochs'])
def test_swa_errors(case):
    def run(lib):
        su = lib.optim.swa_utils
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        if case == 'both_fns':
            return su.AveragedModel(lib.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(),
                                    multi_avg_fn=su.get_swa_multi_avg_fn())
        if case == 'decay':
            return su.get_ema_avg_fn(1.5)
        if case == 'strategy':
            return su.SWALR(opt, 0.1, anneal_strategy='exp')
        return su.SWALR(opt, 0.1, anneal_epochs=-1)
    a, b = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(a, b), (a, b)


def test_swa_utils_loads_lazily():
    import subprocess
    import sys
    code = ('import sys, leafgrad, leafgrad.optim; assert "leafgrad.optim.swa_utils" not in sys.modules; '
            'leafgrad.optim.swa_utils.AveragedModel; print("ok")')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert out.stdout.strip() == 'ok', out.stderr
