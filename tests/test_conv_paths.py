"""Convolution's forward keeps its im2col matrix for the weight gradient (conv.py,
ConvolutionBackward0.cols): gradients stay right when the graph is walked twice, when only
some inputs need grad, and under saved-tensor hooks (which get nothing kept behind their back)."""
import numpy as np

from oracle import lg, torch


def _grads(T, retain_twice=False, hooks=False, x_grad=True):
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal((3, 2, 7, 6)), requires_grad=x_grad)
    w = T.tensor(rng.standard_normal((4, 2, 3, 3)), requires_grad=True)
    b = T.tensor(rng.standard_normal(4), requires_grad=True)
    u = T.tensor(rng.standard_normal((3, 4, 4, 4)))

    def forward():
        return (T.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=(1, 0)) * u).sum()
    if hooks:
        with T.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            loss = forward()
    else:
        loss = forward()
    loss.backward(retain_graph=retain_twice)
    if retain_twice:
        loss.backward()
    return [None if t.grad is None else t.grad.numpy() for t in (x, w, b)]


def _check(**kw):
    for a, b in zip(_grads(lg, **kw), _grads(torch, **kw)):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_weight_gradient_from_kept_columns():
    _check()


def test_second_walk_recomputes_the_columns():
    _check(retain_twice=True)


def test_input_without_grad():
    _check(x_grad=False)


def test_under_saved_tensor_hooks():
    _check(hooks=True)
