"""Convolution paths against torch: gradients when the graph is walked twice, when only some
inputs need grad and under saved-tensor hooks; and conv_gi's whole-plane col2im (2-d, stride 1)
with padding, dilation, groups, output padding and non-finite weights."""
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


def test_gradients():
    _check()


def test_second_walk():
    _check(retain_twice=True)


def test_input_without_grad():
    _check(x_grad=False)


def test_under_saved_tensor_hooks():
    _check(hooks=True)


# conv_gi in 2-d with stride 1 runs its col2im over whole planes (conv.py, _gi_planes)
GI_CASES = [
    ('conv_pad_dilation_groups', lambda T, x, w: T.nn.functional.conv2d(x, w, padding=(2, 1), dilation=(2, 1),
                                                                        groups=2), (2, 4, 7, 6), (6, 2, 3, 2)),
    ('conv_same', lambda T, x, w: T.nn.functional.conv2d(x, w, padding='same'), (3, 2, 5, 6), (3, 2, 3, 3)),
    ('transpose_output_padding', lambda T, x, w: T.nn.functional.conv_transpose2d(
        x, w, padding=1, output_padding=(1, 0), dilation=(2, 1)), (2, 3, 4, 5), (3, 2, 3, 3)),
]


def _gi_case(T, fn, xs, ws, w_fill=None):
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal(xs), requires_grad=True)
    wa = rng.standard_normal(ws)
    if w_fill is not None:
        wa[0, 0, 0, 0] = w_fill
    w = T.tensor(wa, requires_grad=True)
    out = fn(T, x, w)
    u = T.tensor(rng.standard_normal(tuple(out.shape)))
    (gx,) = T.autograd.grad((out * u).sum(), x, create_graph=True)
    (gw,) = T.autograd.grad((gx * gx).sum(), w)
    return gx.detach().numpy(), gw.numpy()


def test_plane_col2im_matches_torch():
    for name, fn, xs, ws in GI_CASES:
        for a, b in zip(_gi_case(lg, fn, xs, ws), _gi_case(torch, fn, xs, ws)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


def test_non_finite_weight_keeps_nan_where_torch_has_it():
    # the planes' zero padding would turn into NaN (0 * inf): such weights take the other path
    for fill in (np.inf, np.nan):
        name, fn, xs, ws = GI_CASES[1]
        a, b = _gi_case(lg, fn, xs, ws, fill)[0], _gi_case(torch, fn, xs, ws, fill)[0]
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_padded_rows_with_inf_input_match_torch():
    # 2-d stride-1 convolutions of narrow images run on padded rows (conv.py, _cols_rows); an
    # inf in the input's last column lands in the dropped positions, where 0 * inf would make
    # the weight gradient NaN: the window path must take over
    res = []
    for T in (lg, torch):
        rng = np.random.default_rng(0)
        xa = rng.standard_normal((2, 2, 6, 5))
        xa[0, 1, 2, 4] = np.inf
        x = T.tensor(xa, requires_grad=True)
        w = T.tensor(rng.standard_normal((3, 2, 2, 3)), requires_grad=True)
        out = T.nn.functional.conv2d(x, w, padding=(1, 0), dilation=(2, 1))
        (out * T.tensor(rng.standard_normal(tuple(out.shape)))).sum().backward()
        res.append((out.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# Without groups, on at least conv.PER_SAMPLE_FROM output positions, the forward takes one
# product a sample (conv.py, _fwd_per_sample): 1-, 2- and 3-d, stride, padding, dilation, a
# transposed convolution's input gradient (its double backward runs the forward); the weight
# gradient per sample where C*K <= P/4 (_gw_per_sample)
PER_SAMPLE_CASES = [
    ('conv1d_stride_pad', lambda T, x, w: T.nn.functional.conv1d(x, w, stride=2, padding=3), (2, 3, 600), (4, 3, 5)),
    ('conv2d_dilation', lambda T, x, w: T.nn.functional.conv2d(x, w, padding=(1, 2), dilation=(2, 1)),
     (3, 2, 20, 24), (5, 2, 3, 3)),
    ('conv2d_one_channel', lambda T, x, w: T.nn.functional.conv2d(x, w), (4, 1, 28, 28), (8, 1, 3, 3)),
    ('conv3d', lambda T, x, w: T.nn.functional.conv3d(x, w, stride=(1, 2, 1)), (2, 2, 8, 9, 12), (3, 2, 2, 3, 2)),
    ('transpose2d', lambda T, x, w: T.nn.functional.conv_transpose2d(x, w, padding=1), (2, 3, 18, 17), (3, 2, 3, 3)),
]


def test_per_sample_forward_matches_torch():
    from leafgrad.nn._functional import conv
    for name, fn, xs, ws in PER_SAMPLE_CASES:
        res = [_gi_case(T, fn, xs, ws) for T in (lg, torch)]
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)
    assert conv.PER_SAMPLE_FROM <= 18 * 17  # (the cases above reach the path)


def test_per_sample_weight_gradient_matches_torch():
    # the weight gradient of the same cases (conv.py, _gw_per_sample where C*K <= P/4)
    for name, fn, xs, ws in PER_SAMPLE_CASES:
        res = []
        for T in (lg, torch):
            rng = np.random.default_rng(2)
            x = T.tensor(rng.standard_normal(xs), requires_grad=True)
            w = T.tensor(rng.standard_normal(ws), requires_grad=True)
            out = fn(T, x, w)
            (out * T.tensor(rng.standard_normal(tuple(out.shape)))).sum().backward()
            res.append((out.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


def test_per_sample_forward_float32_and_non_finite():
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((3, 2, 20, 20)).astype(np.float32)
    xa[1, 0, 5, 5], xa[2, 1, 0, 0] = np.inf, np.nan
    wa = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    res = []
    for T in (lg, torch):
        w = T.tensor(wa, requires_grad=True)
        out = T.nn.functional.conv2d(T.tensor(xa), w, padding=1)
        out.sum().backward()
        res.append((out.detach().numpy(), w.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
