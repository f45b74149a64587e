"""``differentiable=True``: an optimizer step recorded by autograd (meta-learning), against torch.

SGD, Adam and AdamW run PyTorch's differentiable path (tensor operations with grad mode on,
the bias corrections as float32 tensors of the step tensor); the updated parameters and the
gradients that flow back through the steps, to the gradients and to what made a non-leaf
parameter, are compared with torch's. The other optimizers refuse the flag.
"""
import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

from oracle import raises_like, same_message  # noqa: E402

CASES = [('SGD', {}), ('SGD', dict(momentum=0.9, nesterov=True, weight_decay=0.1)),
         ('SGD', dict(momentum=0.9, dampening=0.3, maximize=True)),
         ('Adam', {}), ('Adam', dict(weight_decay=0.1, maximize=True)), ('AdamW', dict(amsgrad=False)),
         ('AdamW', dict(weight_decay=0.3, betas=(0.8, 0.9)))]


def _inner_loop(lib, name, kwargs, dtype):
    """MAML's shape: a non-leaf parameter made from w, gradients taken with create_graph, three
    differentiable steps, then an outer loss backward to w and to the scale s of the gradients."""
    w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(dtype), requires_grad=True)
    s = lib.tensor(np.array(0.7, dtype=dtype), requires_grad=True)
    x = lib.tensor(np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.5]], dtype=dtype))
    p = w * 1.5
    opt = getattr(lib.optim, name)([p], lr=0.1, differentiable=True, **kwargs)
    for _ in range(3):
        inner = ((x @ p).tanh() ** 2).sum()
        grad, = lib.autograd.grad(inner, p, create_graph=True)
        p.grad = grad * s
        opt.step()
    outer = (x @ p).sin().sum()
    outer.backward()
    return p, w.grad, s.grad, opt


@pytest.mark.parametrize('dtype', [np.float32, np.float64])
@pytest.mark.parametrize('name,kwargs', CASES, ids=[f'{n}-{k}' for n, k in CASES])
def test_gradients_flow_through_steps_as_torch(name, kwargs, dtype):
    p_t, w_grad_t, s_grad_t, opt_t = _inner_loop(torch, name, kwargs, dtype)
    p_l, w_grad_l, s_grad_l, opt_l = _inner_loop(lg, name, kwargs, dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(p_l.detach().numpy(), p_t.detach().numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(w_grad_l.numpy(), w_grad_t.numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(s_grad_l.numpy(), s_grad_t.numpy(), rtol=rtol, atol=rtol)
    assert type(p_l.grad_fn).__name__ == type(p_t.grad_fn).__name__
    state_t, state_l = opt_t.state_dict()['state'], opt_l.state_dict()['state']
    assert sorted(state_l) == sorted(state_t)  # (SGD without momentum keeps none)
    for i in state_t:
        assert sorted(state_l[i]) == sorted(state_t[i])
        for key in state_t[i]:
            assert state_l[i][key].requires_grad == state_t[i][key].requires_grad, key


@pytest.mark.parametrize('name', ['Adam', 'AdamW'])
def test_a_step_through_a_saved_state_fails_as_in_torch(name):
    """AMSGrad changes the running maximum, saved for backward, in place: torch's version error,
    in both."""
    def run(lib):
        _inner_loop(lib, name, dict(amsgrad=True), np.float64)
    lg_msg, torch_msg = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


def test_a_leaf_parameter_cannot_step_differentiably():
    def run(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SGD([p], lr=0.1, differentiable=True)
        p.grad = lib.ones(3)
        opt.step()
    lg_msg, torch_msg = raises_like(lambda: run(lg), lambda: run(torch))
    assert lg_msg == torch_msg


def test_which_parameters_an_optimizer_takes():
    """A non-leaf parameter: refused unless differentiable or it retains its grad (as torch)."""
    for lib in (lg, torch):
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            lib.optim.SGD([w * 2], lr=0.1)
        kept = w * 2
        kept.retain_grad()
        lib.optim.SGD([kept], lr=0.1)
        lib.optim.Adam([w * 2], lr=0.1, differentiable=True)


def test_no_grad_outside_does_not_stop_the_differentiable_step():
    """As torch: the step switches grad mode on for itself, and back after."""
    for lib in (lg, torch):
        w = lib.ones(3, requires_grad=True)
        p = w * 2
        opt = lib.optim.SGD([p], lr=0.1, differentiable=True)
        p.grad = lib.ones(3)
        with lib.no_grad():
            opt.step()
            assert not lib.is_grad_enabled()
        assert p.grad_fn is not None


def test_fused_and_differentiable_refused_as_torch():
    lg_msg, torch_msg = raises_like(lambda: lg.optim.Adam([lg.ones(2, requires_grad=True)], fused=True,
                                                         differentiable=True),
                                    lambda: torch.optim.Adam([torch.ones(2, requires_grad=True)], fused=True,
                                                             differentiable=True))
    assert lg_msg == torch_msg


@pytest.mark.parametrize('name', ['Adagrad', 'RMSprop', 'Adamax', 'NAdam', 'RAdam', 'Adadelta', 'ASGD', 'Rprop'])
def test_the_others_refuse_the_flag(name):
    """leafgrad's other optimizers have no differentiable step: refused (torch accepts it), never
    accepted and ignored."""
    with pytest.raises(NotImplementedError, match=f'{name} has no differentiable step'):
        getattr(lg.optim, name)([lg.ones(2, requires_grad=True)], lr=0.1, differentiable=True)
