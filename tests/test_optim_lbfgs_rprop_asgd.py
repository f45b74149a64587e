"""LBFGS (fixed step and strong-Wolfe line search), Rprop and ASGD against torch: parameter
trajectories, closure call counts, state, errors."""
import os
import sys
import warnings

import numpy as np
import pytest

from oracle import raises_like, same_message, torch
import leafgrad as lg
from test_optim import _compare

CORPUS = '/work/corpus/pytorch+examples'


@pytest.mark.parametrize('opt_cls,kwargs', [
    ('Rprop', dict()), ('Rprop', dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ('Rprop', dict(lr=0.01, maximize=True)),
    ('ASGD', dict(lr=0.01)), ('ASGD', dict(lr=0.02, lambd=1e-2, alpha=0.6, t0=5, weight_decay=0.1)),
    ('ASGD', dict(lr=0.01, t0=3, maximize=True))])
def test_trajectory_float64(opt_cls, kwargs):
    _compare(opt_cls, kwargs)


@pytest.mark.parametrize('opt_cls', ['Rprop', 'ASGD'])
def test_float32_groups(opt_cls):
    _compare(opt_cls, dict(lr=0.01), dtype=np.float32, groups=True, rtol=2e-5)


def test_asgd_state_and_state_dict():
    out = []
    for lib in (torch, lg):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        opt = lib.optim.ASGD([w], lr=0.1, t0=2)
        for _ in range(5):
            opt.zero_grad()
            (w ** 2).sum().backward()
            opt.step()
        out.append(opt.state_dict())
    ts, ls = out
    for key in ('step', 'eta', 'mu', 'ax'):
        t, v = ts['state'][0][key], ls['state'][0][key]
        assert str(v.dtype).split('.')[-1] == str(t.dtype).split('.')[-1], key
        np.testing.assert_allclose(v.numpy(), t.numpy(), rtol=1e-6)
    assert ls['param_groups'] == ts['param_groups']


def _lbfgs_run(lib, kwargs, dtype=np.float64, steps=4):
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((5, 3)).astype(dtype), requires_grad=True)
    b = lib.tensor(rng.standard_normal(3).astype(dtype), requires_grad=True)
    x, y = lib.tensor(rng.standard_normal((8, 5)).astype(dtype)), lib.tensor(rng.standard_normal((8, 3)).astype(dtype))
    opt = lib.optim.LBFGS([w, b], **kwargs)
    losses, returned = [], []

    def closure():
        opt.zero_grad()
        loss = (((x @ w + b) - y) ** 2).sum() + (w ** 4).sum() * 0.1
        losses.append(loss.item())
        loss.backward()
        return loss
    for _ in range(steps):
        returned.append(opt.step(closure).item())
    st = opt.state[w]
    return w.detach().numpy().copy(), b.detach().numpy().copy(), losses, returned, st, opt


@pytest.mark.parametrize('kwargs', [dict(), dict(lr=0.8), dict(lr=0.5, history_size=3, max_iter=7),
                                    dict(line_search_fn='strong_wolfe'),
                                    dict(lr=0.8, line_search_fn='strong_wolfe', history_size=2, max_iter=30),
                                    dict(line_search_fn='strong_wolfe', max_eval=6, tolerance_grad=1e-3),
                                    dict(max_iter=50, tolerance_change=1e-3)])
def test_lbfgs_trajectory(kwargs):
    tw, tb, tl, tr, ts, _ = _lbfgs_run(torch, kwargs)
    lw, lb, ll, lr, ls, _ = _lbfgs_run(lg, kwargs)
    assert len(ll) == len(tl)  # the same number of closure calls
    np.testing.assert_allclose(ll, tl, rtol=1e-9)
    np.testing.assert_allclose(lr, tr, rtol=1e-9)
    np.testing.assert_allclose(lw, tw, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lb, tb, rtol=1e-9, atol=1e-12)
    for key in ('func_evals', 'n_iter', 'prev_loss'):
        assert ls[key] == pytest.approx(ts[key], rel=1e-9), key
    assert len(ls['old_dirs']) == len(ts['old_dirs'])
    np.testing.assert_allclose(ls['d'].numpy(), ts['d'].numpy(), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(float(ls['t']), float(ts['t']), rtol=1e-9)
    assert not np.allclose(tw, _lbfgs_run(torch, kwargs, steps=0)[0])


def test_lbfgs_float32_close():
    tw, *_ = _lbfgs_run(torch, dict(lr=0.5, history_size=3, max_iter=7), dtype=np.float32)
    lw, *_ = _lbfgs_run(lg, dict(lr=0.5, history_size=3, max_iter=7), dtype=np.float32)
    assert lw.dtype == np.float32
    np.testing.assert_allclose(lw, tw, rtol=1e-3, atol=1e-4)


def test_lbfgs_stops_at_a_minimum_and_returns_the_first_loss():
    for lib in (torch, lg):
        w = lib.zeros(3, requires_grad=True)
        opt = lib.optim.LBFGS([w])
        calls = []

        def closure():
            opt.zero_grad()
            loss = (w ** 2).sum()
            loss.backward()
            calls.append(1)
            return loss
        assert opt.step(closure).item() == 0.0
        assert len(calls) == 1 and opt.state[w]['func_evals'] == 1 and opt.state[w]['n_iter'] == 0


@pytest.mark.parametrize('case', ['lr', 'groups', 'line_search', 'no_closure', 'rprop_lr', 'rprop_etas', 'asgd_lr',
                                  'asgd_wd'])
def test_errors(case):
    def run(lib):
        w = lib.zeros(2, requires_grad=True)
        v = lib.zeros(2, requires_grad=True)
        if case == 'lr':
            return lib.optim.LBFGS([w], lr=-1)
        if case == 'groups':
            return lib.optim.LBFGS([{'params': [w]}, {'params': [v]}])
        if case == 'rprop_lr':
            return lib.optim.Rprop([w], lr=-0.1)
        if case == 'rprop_etas':
            return lib.optim.Rprop([w], etas=(1.2, 0.5))
        if case == 'asgd_lr':
            return lib.optim.ASGD([w], lr=-0.1)
        if case == 'asgd_wd':
            return lib.optim.ASGD([w], weight_decay=-0.1)
        opt = lib.optim.LBFGS([w], line_search_fn='wolfe' if case == 'line_search' else None)
        w.grad = lib.ones(2)
        if case == 'no_closure':
            return opt.step()
        return opt.step(lambda: (w * 1.0).sum())
    a, b = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(a, b), (a, b)


def test_time_sequence_prediction_model():
    """pytorch/examples' time_sequence_prediction: two LSTMCells and a Linear in float64 trained by
    LBFGS(lr=0.8) with a closure, on the sine waves its generate_sine_wave.py makes."""
    path = os.path.join(CORPUS, 'time_sequence_prediction', 'train.py')
    if not os.path.exists(path):
        pytest.skip('no corpus of real PyTorch programs here (pytorch/examples is not on this machine)')
    src = open(path).read().split("if __name__ == '__main__':")[0]
    src = src.replace('import matplotlib\n', '').replace("matplotlib.use('Agg')\n", '')
    src = src.replace('import matplotlib.pyplot as plt\n', '')
    np.random.seed(2)
    T, L, N = 20, 100, 8  # generate_sine_wave.py's recipe, smaller
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    results = []
    for lib, name in ((torch, 'torch'), (lg, 'leafgrad')):
        code = src
        if name == 'leafgrad':
            code = (code.replace('import torch.nn as nn', 'import leafgrad.nn as nn')
                    .replace('import torch.optim as optim', 'import leafgrad.optim as optim')
                    .replace('import torch\n', 'import leafgrad as torch\n'))
        ns = {'__name__': 'tsp_' + name}
        exec(compile(code, path, 'exec'), ns)
        lib.manual_seed(0)
        inp, target = lib.from_numpy(data[3:, :-1]), lib.from_numpy(data[3:, 1:])
        test_input, test_target = lib.from_numpy(data[:3, :-1]), lib.from_numpy(data[:3, 1:])
        seq = ns['Sequence']()
        seq.double()
        criterion = lib.nn.MSELoss()
        optimizer = lib.optim.LBFGS(seq.parameters(), lr=0.8)
        losses = []
        for _ in range(2):
            def closure():
                optimizer.zero_grad()
                loss = criterion(seq(inp), target)
                losses.append(loss.item())
                loss.backward()
                return loss
            optimizer.step(closure)
            with lib.no_grad():
                pred = seq(test_input, future=20)
                losses.append(criterion(pred[:, :-20], test_target).item())
        results.append((losses, pred.numpy()))
    (tl, tp), (ll, lp) = results
    assert len(ll) == len(tl)
    np.testing.assert_allclose(ll, tl, rtol=1e-7)
    np.testing.assert_allclose(lp, tp, rtol=1e-6, atol=1e-9)
