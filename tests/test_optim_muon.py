"""torch.optim.Muon against torch: parameter trajectories (bit for bit: the same bfloat16
Newton-Schulz iteration, lerp and fused add), its options, state, errors."""
import warnings

import numpy as np
import pytest

from oracle import raises_like, same_message, torch
import leafgrad as lg


def _trajectory(m, dtype, steps=6, **options):
    rng = np.random.default_rng(0)
    dt = getattr(m, dtype)
    wide = m.tensor(rng.standard_normal((6, 4)), dtype=dt, requires_grad=True)
    tall = m.tensor(rng.standard_normal((3, 7)), dtype=dt, requires_grad=True)
    x = m.tensor(rng.standard_normal((8, 4)), dtype=dt)
    opt = m.optim.Muon([{'params': [wide]}, {'params': [tall], 'lr': 0.05}], **options)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (x @ wide.T).tanh().sum() + (tall * tall).sum() + (x[:3, :3] @ tall).sin().sum()
        loss.backward()
        opt.step()
        out.append((wide.detach().numpy().tolist(), tall.detach().numpy().tolist()))
    state = opt.state[wide]
    return out, sorted(state), str(state['momentum_buffer'].dtype).split('.')[-1]


OPTIONS = [
    {},
    dict(lr=0.02, nesterov=False),
    dict(lr=0.02, weight_decay=0.0, momentum=0.5),
    dict(adjust_lr_fn='match_rms_adamw', weight_decay=0.01),
    dict(adjust_lr_fn='original', ns_steps=3, eps=1e-5),
    dict(ns_coefficients=(3.0, -3.2, 1.2), momentum=0.0),
]


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('options', OPTIONS, ids=str)
def test_trajectory_bit_for_bit(options, dtype):
    got, want = _trajectory(lg, dtype, **options), _trajectory(torch, dtype, **options)
    assert got == want
    assert want[0][0] != want[0][-1]  # (the parameters moved)


def test_tensor_lr_closure_and_state_dict():
    results = []
    for m in (lg, torch):
        w = m.nn.Parameter(m.ones(4, 3) * m.arange(3.))
        opt = m.optim.Muon([w], lr=m.tensor(0.1))

        def closure():
            opt.zero_grad()
            loss = (w ** 3).sum()
            loss.backward()
            return loss
        loss = opt.step(closure)
        sd = opt.state_dict()
        results.append((loss.item(), w.detach().numpy().tolist(), sorted(sd['param_groups'][0]),
                        sorted(sd['state'][0]), repr(opt).replace('tensor(0.1000)', 'T')))
    assert results[0] == results[1]


ERRORS = [
    lambda m: m.optim.Muon([m.zeros(3, 3, requires_grad=True)], lr=-1.0),
    lambda m: m.optim.Muon([m.zeros(3, 3, requires_grad=True)], momentum=-0.5),
    lambda m: m.optim.Muon([m.zeros(3, 3, requires_grad=True)], weight_decay=-0.1),
    lambda m: m.optim.Muon([m.zeros(3, 3, requires_grad=True)], adjust_lr_fn='other'),
    lambda m: m.optim.Muon([m.zeros(3, requires_grad=True)]),
    lambda m: m.optim.Muon([m.zeros(2, 3, 3, requires_grad=True)]),
    lambda m: m.optim.Muon([m.zeros(3, 3, requires_grad=True)], lr=m.tensor([0.1, 0.2])),
    lambda m: _stepped(m, ns_steps=100),
    lambda m: _stepped(m, ns_coefficients=(1.0, 2.0)),
    lambda m: _stepped(m, dtype=m.complex64),
]


def _stepped(m, dtype=None, **options):
    w = m.zeros(3, 3, dtype=dtype, requires_grad=True)
    opt = m.optim.Muon([w], **options)
    w.grad = m.ones(3, 3, dtype=dtype)
    opt.step()


@pytest.mark.parametrize('program', ERRORS)
def test_errors_as_torch(program):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        got, want = raises_like(lambda: program(lg), lambda: program(torch))
    assert same_message(got, want), (got, want)
