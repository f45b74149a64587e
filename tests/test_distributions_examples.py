"""Programs that use leafgrad.distributions the way pytorch/examples does, run under the same
seeds in leafgrad and torch: REINFORCE and actor-critic updates (Categorical over a policy
network's softmax), a Gaussian policy, a VAE's reparametrised KL term; rsample gradients of
Gamma, Beta and Dirichlet (which leafgrad computes exactly) against torch's approximate
formulas at the same draws; the gamma sampler's edge cases."""
import numpy as np
import pytest

from oracle import assert_same, to_np

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
import leafgrad.distributions as D  # noqa: E402


def _policy_run(lib, dists, actor_critic):
    """Three episodes of 6 steps in a made-up environment: states from a fixed table, a
    two-layer policy (and value head), actions sampled from Categorical, returns discounted,
    then one Adam step; the parameters after the step and the sampled actions."""
    lib.manual_seed(0)
    nn, F = lib.nn, lib.nn.functional
    body = nn.Linear(4, 16)
    action_head = nn.Linear(16, 3)
    value_head = nn.Linear(16, 1)
    params = list(body.parameters()) + list(action_head.parameters()) + list(value_head.parameters())
    opt = lib.optim.Adam(params, lr=1e-2)
    states = lib.tensor(np.random.default_rng(1).normal(size=(6, 4)), dtype=lib.float32)
    actions, log_probs, values, rewards = [], [], [], []
    for episode in range(3):
        for t in range(6):
            h = F.relu(body(states[t]))
            probs = F.softmax(action_head(h), dim=-1)
            m = dists.Categorical(probs)
            action = m.sample()
            actions.append(action.item())
            log_probs.append(m.log_prob(action))
            values.append(value_head(h))
            rewards.append(float(action.item() == t % 3) - 0.1 * m.entropy().item())
    returns, R = [], 0.0
    for r in rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = lib.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + np.finfo(np.float32).eps.item())
    if actor_critic:
        losses = [-lp * (R - v.item()) + F.smooth_l1_loss(v, lib.tensor([R]))
                  for lp, v, R in zip(log_probs, values, returns)]
    else:
        losses = [-lp * R for lp, R in zip(log_probs, returns)]
    opt.zero_grad()
    loss = lib.stack(losses).sum()
    loss.backward()
    opt.step()
    return actions, loss, [p.detach().clone() for p in params]


@pytest.mark.parametrize('actor_critic', [False, True])
def test_reinforce_and_actor_critic_step_is_torchs(actor_critic):
    a_lg, loss_lg, p_lg = _policy_run(lg, D, actor_critic)
    a_t, loss_t, p_t = _policy_run(torch, torch.distributions, actor_critic)
    assert a_lg == a_t
    assert_same(loss_lg, loss_t, rtol=1e-5, atol=1e-5)
    for x, y in zip(p_lg, p_t):
        assert_same(x, y, rtol=1e-5, atol=1e-6)


def _gaussian_policy_and_vae(lib, dists):
    lib.manual_seed(4)
    mu = lib.tensor([[0.1, -0.3], [0.5, 0.2]], requires_grad=True)
    log_std = lib.tensor([-0.5, 0.3], requires_grad=True)
    pi = dists.Independent(dists.Normal(mu, log_std.exp()), 1)
    a = pi.sample()
    policy_loss = -(pi.log_prob(a) * lib.tensor([1.0, -2.0])).sum() - 0.01 * pi.entropy().sum()
    z = dists.Normal(mu, log_std.exp()).rsample((3,))  # the VAE's reparametrisation trick
    kl = dists.kl_divergence(dists.Normal(mu, log_std.exp()), dists.Normal(lib.zeros(2), lib.ones(2))).sum()
    total = policy_loss + (z ** 2).sum() + kl
    total.backward()
    return a, total, mu.grad, log_std.grad


def test_gaussian_policy_and_vae_gradients_are_torchs():
    out_lg = _gaussian_policy_and_vae(lg, D)
    out_t = _gaussian_policy_and_vae(torch, torch.distributions)
    # (the same normal draws; scale = exp(log_std) may differ from torch's vectorised exp by an ulp)
    np.testing.assert_allclose(to_np(out_lg[0]), to_np(out_t[0]), rtol=1e-6, atol=1e-7)
    for x, y in zip(out_lg[1:], out_t[1:]):
        assert_same(x, y, rtol=1e-6, atol=1e-6)


def test_gamma_rsample_gradient_is_the_implicit_one():
    """d sample / d concentration of Gamma(a, rate) = _standard_gamma_grad(rate x, a) / rate,
    d sample / d rate = -x / rate (torch's formulas, evaluated at leafgrad's draws; torch's
    _standard_gamma_grad is an approximation accurate to ~5e-4)."""
    a = lg.tensor([0.3, 1.0, 2.5, 9.0], dtype=lg.float64, requires_grad=True)
    rate = lg.tensor([0.5, 2.0, 1.0, 3.0], dtype=lg.float64, requires_grad=True)
    x = D.Gamma(a, rate).rsample((50,))
    x.sum().backward()
    xs = torch.tensor(to_np(x).copy())
    r_t = torch.tensor(to_np(rate).copy())
    expected_a = (torch._standard_gamma_grad(torch.tensor(to_np(a).copy()).expand_as(xs), xs * r_t) / r_t).sum(0)
    np.testing.assert_allclose(to_np(a.grad), expected_a.numpy(), rtol=2e-3)
    np.testing.assert_allclose(to_np(rate.grad), (-xs / r_t).sum(0).numpy(), rtol=1e-10)


def test_dirichlet_and_beta_rsample_gradients_are_the_implicit_ones():
    conc = lg.tensor([[0.5, 1.5, 3.0], [2.0, 2.0, 0.8]], dtype=lg.float64, requires_grad=True)
    x = D.Dirichlet(conc).rsample((20,))
    w = np.random.default_rng(0).normal(size=x.shape)
    (x * lg.tensor(w)).sum().backward()
    xs = torch.tensor(to_np(x).copy())
    c_t = torch.tensor(to_np(conc).copy()).expand_as(xs)
    grad = torch._dirichlet_grad(xs, c_t, c_t.sum(-1, keepdim=True).expand_as(c_t))
    w_t = torch.tensor(w)
    expected = (grad * (w_t - (xs * w_t).sum(-1, keepdim=True))).sum(0)  # torch's Dirichlet backward
    np.testing.assert_allclose(to_np(conc.grad), expected.numpy(), rtol=2e-3, atol=1e-6)
    c1 = lg.tensor([0.7, 2.0], dtype=lg.float64, requires_grad=True)
    c0 = lg.tensor([1.5, 0.4], dtype=lg.float64, requires_grad=True)
    b = D.Beta(c1, c0).rsample((30,))
    b.sum().backward()
    bs = torch.tensor(to_np(b).copy())
    stacked = torch.stack([bs, 1 - bs], -1)
    conc_t = torch.stack([torch.tensor(to_np(c1).copy()), torch.tensor(to_np(c0).copy())], -1).expand_as(stacked)
    g = torch._dirichlet_grad(stacked, conc_t, conc_t.sum(-1, keepdim=True).expand_as(conc_t))
    upstream = torch.stack([torch.ones_like(bs), torch.zeros_like(bs)], -1)
    full = g * (upstream - (stacked * upstream).sum(-1, keepdim=True))
    np.testing.assert_allclose(to_np(c1.grad), full[..., 0].sum(0).numpy(), rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(to_np(c0.grad), full[..., 1].sum(0).numpy(), rtol=2e-3, atol=1e-6)


def test_studentt_rsample_is_normal_over_chi2():
    """StudentT draws its normal first, then its chi-squared: with the gamma sampler replaced
    by torch's draws the sample is torch's."""
    df = lg.tensor([3.0, 7.5], dtype=lg.float64, requires_grad=True)
    lg.manual_seed(8)
    x = D.StudentT(df, 1.0, 2.0).rsample((4,))
    lg.manual_seed(8)
    eps = lg.empty((4, 2), dtype=lg.float64).normal_()
    z = D.Chi2(df.detach()).rsample((4,))
    np.testing.assert_allclose(to_np(x), to_np(1.0 + 2.0 * eps * lg.rsqrt(z / df.detach())), rtol=1e-14)
    x.sum().backward()
    assert np.all(np.isfinite(to_np(df.grad))) and np.all(to_np(df.grad) != 0)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_gamma_and_dirichlet_draws_are_torchs_at_the_edges(dtype):
    """_standard_gamma over alpha 0, NaN, inf, negative, tiny and huge (each consumes the draws
    PyTorch's kernel consumes: the next randn is torch's too), and Dirichlet/Beta shares kept
    below 1 in float32 where a component's gamma draw underflows."""
    alpha = np.array([0.0, np.nan, np.inf, -1.0, 1e-3, 0.7, 1.0, 1e3, 2.5] * 3, dtype=dtype)
    out = []
    for lib in (lg, torch):
        lib.manual_seed(11)
        first = lib._standard_gamma(lib.tensor(alpha))
        out.append((to_np(first), to_np(lib.randn(5, dtype=getattr(lib, dtype)))))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    conc = np.array([[0.02, 0.05, 3.0], [0.01, 0.01, 0.01]], dtype=dtype)
    draws = []
    for lib, dists in ((lg, D), (torch, torch.distributions)):
        lib.manual_seed(2)
        d = lib._sample_dirichlet(lib.tensor(conc).expand(50, 2, 3))
        b = dists.Beta(lib.tensor(conc[:, 0]), lib.tensor(conc[:, 1])).sample((50,))
        draws.append((to_np(d), to_np(b)))
    for x, y in zip(*draws):
        np.testing.assert_array_equal(x, y)
    assert draws[0][1].max() < 1
