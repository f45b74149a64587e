"""optim.Adafactor against torch: parameter trajectories (matrices, batches of matrices,
vectors; weight decay, maximize, d, eps, beta2_decay), state, printing, state_dict and the
constructor's errors."""
import copy

import numpy as np
import pytest

from oracle import lg, raises_like, same_message, torch


def _run(T, opts, dtype, steps=6):
    T.manual_seed(0)
    w = T.nn.Parameter(T.randn(3, 4, 5).to(getattr(T, dtype)))
    m = T.nn.Parameter(T.randn(4, 5).to(getattr(T, dtype)))
    b = T.nn.Parameter(T.randn(5).to(getattr(T, dtype)))
    opt = T.optim.Adafactor([{'params': [w, m]}, {'params': [b], 'lr': 0.05}], **opts)
    for _ in range(steps):
        opt.zero_grad()
        ((w * w).sum() * 0.3 + (w.sum(0) @ b).sum() + (m @ b).pow(2).sum() + b.pow(3).sum()).backward()
        opt.step()
    return (w, m, b), opt


OPTIONS = {'defaults': {}, 'weight_decay': {'lr': 0.1, 'weight_decay': 0.1}, 'maximize_d': {'maximize': True, 'd': 2.0},
           'eps_beta2': {'eps': (1e-5, 1e-2), 'beta2_decay': -0.5}}


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('name', list(OPTIONS))
def test_adafactor_trajectory_and_state_as_torch(name, dtype):
    (params_l, opt_l), (params_t, opt_t) = _run(lg, OPTIONS[name], dtype), _run(torch, OPTIONS[name], dtype)
    tol = 1e-5 if dtype == 'float32' else 1e-12
    for pl, pt in zip(params_l, params_t):
        np.testing.assert_allclose(pl.detach().numpy(), pt.detach().numpy(), rtol=tol, atol=tol)
    sl, st = opt_l.state_dict(), opt_t.state_dict()
    assert sl['param_groups'] == st['param_groups']
    for k in st['state']:
        assert sorted(sl['state'][k]) == sorted(st['state'][k])
        for key, value in st['state'][k].items():
            assert tuple(sl['state'][k][key].shape) == tuple(value.shape)
            assert str(sl['state'][k][key].dtype).split('.')[1] == str(value.dtype).split('.')[1]
            np.testing.assert_allclose(sl['state'][k][key].numpy(), value.numpy(), rtol=tol * 10, atol=tol)
    assert repr(opt_l) == repr(opt_t)


def test_adafactor_resumes_from_its_state_dict():
    (params, opt), _ = _run(lg, {}, 'float32', steps=3), None
    saved = copy.deepcopy(opt.state_dict())  # (state_dict holds the state's tensors themselves)
    copies = [lg.nn.Parameter(p.detach().clone()) for p in params]
    resumed = lg.optim.Adafactor([{'params': copies[:2]}, {'params': copies[2:], 'lr': 0.05}])
    resumed.load_state_dict(saved)
    for o, ps in ((opt, params), (resumed, copies)):
        o.zero_grad()
        sum((p * p).sum() for p in ps).backward()
        o.step()
    for p, c in zip(params, copies):
        np.testing.assert_array_equal(p.detach().numpy(), c.detach().numpy())


ERRORS = {
    'lr': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], lr=-1),
    'beta2_decay': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], beta2_decay=0.5),
    'eps1': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], eps=(-1, 1e-3)),
    'eps2': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], eps=(None, -1)),
    'd': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], d=0.5),
    'weight_decay': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], weight_decay=-1),
    'tensor_lr': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], lr=T.ones(2)),
    'keyword': lambda T: T.optim.Adafactor([T.nn.Parameter(T.ones(2))], momentum=0.9),
}


@pytest.mark.parametrize('case', list(ERRORS))
def test_adafactor_errors_as_torch(case):
    msgs = raises_like(lambda: ERRORS[case](lg), lambda: ERRORS[case](torch))
    assert same_message(*msgs), msgs


def test_adafactor_refuses_complex_parameters_as_torch():
    msgs = []
    for T in (lg, torch):
        p = T.nn.Parameter(T.ones(2, dtype=T.complex64))
        opt = T.optim.Adafactor([p])
        p.abs().sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        msgs.append(str(info.value))
    assert same_message(*msgs)
