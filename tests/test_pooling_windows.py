"""Max pooling over non-overlapping windows (stride == kernel, no padding, dilation 1) takes a
path of its own (max_windows.py): values, indices, node names, gradients, second
derivatives and the NaN / non-finite-gradient fallbacks, each against torch."""
import numpy as np
import pytest

import leafgrad as lg
from optable import check_fast, needs_torch, torch

if torch is not None:  # (without the oracle only the finite differences run)
    from oracle import raises_like

LF = lg.nn.functional
TF = torch.nn.functional if torch is not None else None


def _pool(F, x, kernel, indices=True):
    nsp = len(kernel)
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nsp]
    return fn(x, kernel[0] if nsp == 1 else kernel, return_indices=indices)


# (input shape, kernel): divisible (whole rows: the columns split apart by one copy) and not
# (rows/columns past the last window), kernels of 1, 2 (boolean winners) and 3 (small-int
# winners), 1-d, 3-d and unbatched
SHAPES = [
    ((3, 4, 8, 6), (2, 2)),
    ((3, 4, 9, 7), (2, 2)),
    ((2, 3, 9, 7), (3, 2)),
    ((2, 3, 5, 7), (1, 3)),
    ((2, 3, 6, 9), (2, 9)),
    ((4, 9, 7), (2, 2)),
    ((2, 3, 11), (3,)),
    ((2, 2, 7, 6, 5), (2, 2, 2)),
    ((2, 2, 7, 6, 5), (3, 1, 2)),
    ((2, 2, 4, 6, 4), (2, 3, 2)),
    ((2, 3, 12), (3,)),
]


def _run(T, F, x, kernel, seed):
    """(output, indices, input gradient) of pooling x, the output weighted by random numbers."""
    t = T.tensor(x, requires_grad=x.dtype.kind == 'f')
    out, idx = _pool(F, t, kernel)
    if not t.requires_grad:
        return out, idx, None
    w = np.random.default_rng(seed).standard_normal(tuple(out.shape)).astype(x.dtype)
    (out * T.tensor(w)).sum().backward()
    return out, idx, t.grad.numpy()


def _compare(x, kernel, seed=1):
    lout, lidx, lgrad = _run(lg, LF, x, kernel, seed)
    tout, tidx, tgrad = _run(torch, TF, x, kernel, seed)
    assert lout.dtype.name == str(tout.dtype).split('.')[-1]
    np.testing.assert_array_equal(lout.detach().numpy(), tout.detach().numpy())
    np.testing.assert_array_equal(lidx.numpy(), tidx.numpy())
    assert lidx.dtype.name == 'int64'
    if tgrad is not None:
        assert lout.grad_fn.name() == tout.grad_fn.name()
        np.testing.assert_array_equal(lgrad, tgrad)


@needs_torch
@pytest.mark.parametrize('shape,kernel', SHAPES)
@pytest.mark.parametrize('dtype', [np.float32, np.float64])
def test_distinct_values_match_torch(shape, kernel, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    _compare(x, kernel)


@needs_torch
@pytest.mark.parametrize('shape,kernel', SHAPES)
def test_ties_go_to_the_first_max_like_torch(shape, kernel):
    # few distinct values: most windows hold several maxima, in every arrangement
    x = np.random.default_rng(0).integers(0, 3, shape).astype(np.float32)
    _compare(x, kernel)


@needs_torch
def test_relu_zeros_and_integer_inputs_match_torch():
    rng = np.random.default_rng(0)
    _compare(np.maximum(rng.standard_normal((4, 3, 10, 10)), 0).astype(np.float32), (2, 2))
    _compare(rng.integers(-3, 3, (2, 3, 6, 7)), (2, 2))


@needs_torch
@pytest.mark.parametrize('kernel', [(2, 2), (3, 2)])
def test_nan_follows_torch(kernel):
    # a later NaN wins over anything (the general loop's rule): windows with one NaN, with
    # several, and with a NaN before and after the max
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    x[0, 0, 0, 0] = x[0, 0, 1, 1] = np.nan
    x[1, 2, 3, 2] = np.nan
    x[1, 1, 5, 5] = np.nan
    _compare(x, kernel)


@needs_torch
def test_non_finite_gradient_stays_in_its_window():
    # g * mask would turn inf into NaN at the other window positions: torch leaves them 0
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 4)).astype(np.float32)
    grads = []
    for T, F in ((lg, LF), (torch, TF)):
        t = T.tensor(x, requires_grad=True)
        out = F.max_pool2d(t, 2)
        w = np.ones(tuple(out.shape), np.float32)
        w[0, 0, 0, 0], w[1, 2, 1, 1] = np.inf, np.nan
        (out * T.tensor(w)).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


@needs_torch
@pytest.mark.parametrize('shape,kernel', [((2, 3, 6, 7), (2, 2)), ((2, 2, 5, 4, 6), (2, 2, 3)), ((3, 9, 7), (3, 2))])
def test_second_derivatives_match_torch(shape, kernel):
    x = np.random.default_rng(0).standard_normal(shape)
    res = []
    for T, F in ((lg, LF), (torch, TF)):
        t = T.tensor(x, requires_grad=True)
        out = _pool(F, t, kernel, indices=False)
        w = T.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), requires_grad=True)
        (g,) = T.autograd.grad((out * w).sum(), t, create_graph=True)
        names = g.grad_fn.name()
        gg = T.autograd.grad((g * g * T.tensor(x)).sum(), (t, w), allow_unused=True)
        res.append((names, [None if a is None else a.detach().numpy() for a in gg]))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1], res[1][1]):
        assert (a is None) == (b is None) or not np.any(a if a is not None else b)
        if a is not None and b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize('shape,kernel', [((2, 3, 6, 5), (2, 2)), ((2, 2, 4, 6, 3), (2, 3, 1))])
def test_finite_differences_float64(shape, kernel):
    n = int(np.prod(shape))
    x = (np.random.default_rng(0).permutation(n) * 0.05).reshape(shape)  # no near-ties
    fn = lambda t: _pool(LF, t, kernel, indices=False)  # noqa: E731
    check_fast(fn, [x], [True], second=True)


@needs_torch
def test_modified_indices_fail_backward_like_torch():
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))

    def run(T, F):
        t = T.tensor(x, requires_grad=True)
        out, idx = F.max_pool2d(t, 2, return_indices=True)
        idx.add_(0)
        out.sum().backward()
    raises_like(lambda: run(lg, LF), lambda: run(torch, TF))
