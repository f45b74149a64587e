"""What the differential fuzzer (tests/test_fuzz_differential.py) found, each as its smallest
program, run in leafgrad and torch: values, gradients, grad_fn names and version counters."""
import itertools

import numpy as np
import pytest
import torch

import leafgrad as lg

NAN = float('nan')


def _both(program):
    """program(T) -> a dict of what to compare, for T = leafgrad and T = torch (or the error)."""
    def run(T):
        try:
            return program(T)
        except Exception as e:  # noqa: BLE001  (the error is compared)
            return {'error': (type(e).__name__, str(e).replace('leafgrad', 'torch'))}
    return run(lg), run(torch)


def _plain(x):
    if isinstance(x, (lg.Tensor, torch.Tensor)):
        return np.asarray(x.detach().numpy(), dtype=np.float64).tolist()
    return x


def assert_same(program):
    mine, theirs = _both(program)
    assert mine.keys() == theirs.keys()
    for key in mine:
        a, b = _plain(mine[key]), _plain(theirs[key])
        if isinstance(a, list):
            np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-6, atol=1e-7,
                                       equal_nan=True, err_msg=key)
            assert np.array_equal(np.signbit(np.array(a, dtype=float)), np.signbit(np.array(b, dtype=float))), key
        else:
            assert a == b, (key, a, b)


def _name(t):
    return None if t.grad_fn is None else t.grad_fn.name().replace('leafgrad', 'torch')


SHAPES = [(3,), (2, 3), (1, 3), (2, 2, 3), (1, 2, 3), (2, 1, 2, 3), (3, 2), (2, 3, 2), (1, 3, 2), (4, 3, 2)]


@pytest.mark.parametrize('sa,sb', [(a, b) for a, b in itertools.product(SHAPES, SHAPES)
                                   if a[-1] == (b[0] if len(b) == 1 else b[-2])])
def test_matmul_records_as_torch(sa, sb):
    """PyTorch folds a >= 3-D operand into one mm when the smaller one requires grad (or when
    no copy is needed), takes a batch of one that requires grad as a matrix, and squeezes a
    1-D @ 2-D product in place: the graph (grad_fn), the version and the gradients follow."""
    for rga, rgb, transposed in itertools.product((False, True), repeat=3):
        def program(T):
            rng = np.random.default_rng(0)
            a = T.tensor(rng.standard_normal(sa), requires_grad=rga)
            b = T.tensor(rng.standard_normal(sb), requires_grad=rgb)
            a_used = a.transpose(0, 1) if transposed and a.dim() >= 3 else a
            out = a_used @ b
            seen = {'out': out, 'name': _name(out), 'version': out._version}
            if out.requires_grad:
                out.sum().backward()
                seen.update(ga=a.grad if rga else None, gb=b.grad if rgb else None)
            return seen
        assert_same(program)


@pytest.mark.parametrize('op', ['maximum', 'minimum'])
def test_maximum_gradient_at_nan_and_ties_as_torch(op):
    """Half to each at a tie, nothing to the loser, all to both where a NaN makes neither lose."""
    def program(T):
        a = T.tensor([1.0, 2.0, NAN, 3.0, NAN], requires_grad=True)
        b = T.tensor([1.0, NAN, 0.5, 4.0, NAN], requires_grad=True)
        getattr(T, op)(a, b).sum().backward()
        return {'ga': a.grad, 'gb': b.grad}
    assert_same(program)


def test_atan2_gradient_at_the_origin_as_torch():
    def program(T):
        y = T.tensor([0.0, 1.0, 0.0], requires_grad=True)
        x = T.tensor([0.0, 0.0, -2.0], requires_grad=True)
        T.atan2(y, x).sum().backward()
        return {'gy': y.grad, 'gx': x.grad}
    assert_same(program)


def test_relu_of_a_chain_through_nan():
    def program(T):
        x = T.tensor([NAN, 1.0, -1.0], requires_grad=True)
        (T.relu(x * 2) * 3).sum().backward()
        return {'g': x.grad}
    assert_same(program)
