"""Whole training loops (model, DataLoader, optimizer, scheduler, clipping) give torch's losses
step by step from the same initial weights."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402



def _data(n=48, d=6, classes=3, dtype=np.float64):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype(dtype)
    w = rng.standard_normal((d, classes))
    y_reg = (np.tanh(x @ w) + 0.1 * rng.standard_normal((n, classes))).astype(dtype)
    y_cls = (x @ w).argmax(1)
    order = rng.permutation(n).tolist()  # one fixed "shuffle", fed to both loaders as the sampler
    return x, y_reg, y_cls, order


def _loop(lib, make_model, loss_name, opt_name, opt_kw, sched, classify, epochs=3, clip=None, dtype=np.float64):
    x, y_reg, y_cls, order = _data(dtype=dtype)
    y = y_cls if classify else y_reg
    model = make_model(lib.nn)
    if dtype == np.float64:
        model = model.double()
    ds = lib.utils.data.TensorDataset(lib.tensor(x), lib.tensor(y))
    loader = lib.utils.data.DataLoader(ds, batch_size=10, sampler=order)
    opt = getattr(lib.optim, opt_name)(model.parameters(), **opt_kw)
    scheduler = sched(lib, opt, len(loader) * epochs) if sched else None
    loss_fn = getattr(lib.nn, loss_name)()
    losses, norms = [], []
    for _ in range(epochs):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            if clip:
                norms.append(float(lib.nn.utils.clip_grad_norm_(model.parameters(), clip)))
            opt.step()
            if scheduler is not None:
                scheduler.step()
            losses.append(loss.item())
        model.eval()
        with lib.no_grad():
            losses.append(loss_fn(model(lib.tensor(x)), lib.tensor(y)).item())
    return losses, norms, model


def _compare(make_model, loss_name, opt_name, opt_kw, sched=None, classify=False, clip=None, rtol=1e-9,
             dtype=np.float64):
    torch.manual_seed(0)
    tm = make_model(torch.nn)
    weights = {k: v.detach().numpy().copy() for k, v in tm.state_dict().items()}

    def seeded(nn):
        m = make_model(nn)
        lib = torch if nn is torch.nn else lg
        m.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
        return m
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        t_losses, t_norms, _ = _loop(torch, seeded, loss_name, opt_name, opt_kw, sched, classify, clip=clip,
                                     dtype=dtype)
        l_losses, l_norms, model = _loop(lg, seeded, loss_name, opt_name, opt_kw, sched, classify, clip=clip,
                                         dtype=dtype)
    np.testing.assert_allclose(l_losses, t_losses, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(l_norms, t_norms, rtol=rtol)
    assert t_losses[-1] < t_losses[4]  # the loop trains (so the comparison means something)
    return model


def _mlp(nn):
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def test_regression_sgd_momentum_steplr_clipping():
    _compare(_mlp, 'MSELoss', 'SGD', dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
             sched=lambda lib, opt, n: lib.optim.lr_scheduler.StepLR(opt, 4, 0.7), clip=1.0)


def test_regression_adamw_onecycle():
    _compare(_mlp, 'MSELoss', 'AdamW', dict(lr=0.01),
             sched=lambda lib, opt, n: lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=n))


def test_regression_float32_rmsprop_cosine():
    _compare(_mlp, 'MSELoss', 'RMSprop', dict(lr=0.01, momentum=0.5),
             sched=lambda lib, opt, n: lib.optim.lr_scheduler.CosineAnnealingLR(opt, n), rtol=2e-5,
             dtype=np.float32)


def test_classifier_cross_entropy_adam():

    def net(nn):
        return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.0), nn.Linear(16, 3))
    _compare(net, 'CrossEntropyLoss', 'Adam', dict(lr=0.01, amsgrad=True), classify=True,
             sched=lambda lib, opt, n: lib.optim.lr_scheduler.LinearLR(opt, 0.5, total_iters=5))
