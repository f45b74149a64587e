"""Lazy modules against torch: reprs before and after the first forward, the class they become,
the weights they draw at the first forward (torch's stream), outputs and gradients, errors."""
import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg

CASES = [('LazyLinear(5)', (4, 3)), ('LazyLinear(2, bias=False)', (2, 3, 6)), ('LazyConv1d(4, 3)', (2, 3, 8)),
         ('LazyConv2d(4, 3, stride=2, padding=1)', (2, 3, 7, 7)), ('LazyConv2d(4, 3, groups=1)', (3, 5, 5)),
         ('LazyConv3d(2, 2, bias=False)', (1, 2, 4, 4, 4)), ('LazyConvTranspose1d(2, 3, 2, 1, 1)', (2, 4, 5)),
         ('LazyConvTranspose2d(3, 2)', (2, 4, 3, 3)), ('LazyConvTranspose3d(2, 2)', (1, 3, 2, 2, 2)),
         ('LazyBatchNorm1d()', (4, 3)), ('LazyBatchNorm2d(momentum=0.3)', (2, 3, 4, 4)),
         ('LazyBatchNorm3d(affine=False)', (2, 3, 2, 2, 2)), ('LazyInstanceNorm1d()', (2, 3, 5)),
         ('LazyInstanceNorm2d(affine=False, track_running_stats=False)', (2, 3, 4, 4)),
         ('LazyInstanceNorm3d()', (2, 2, 3, 3, 3))]


@pytest.mark.parametrize('make,shape', CASES)
def test_lazy_module(make, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    res = []
    for lib in (torch, lg):
        lib.manual_seed(0)
        m = eval('nn.' + make, {'nn': lib.nn})
        before = (repr(m), type(m).__name__, m.has_uninitialized_params())
        lib.manual_seed(1)  # the weights are drawn at the first forward
        xin = lib.tensor(x, requires_grad=True)
        out = m(xin)
        (out * lib.tensor(np.arange(out.numel(), dtype=np.float32).reshape(out.shape))).sum().backward()
        res.append((before, repr(m), type(m).__name__, dict(m.state_dict()), out, xin.grad,
                    [p.grad for p in m.parameters()]))
    (tb, tr, tn, tsd, to, tg, tpg), (lb, lr, ln, lsd, lo, lgr, lpg) = res
    assert lb == tb and lr == tr and ln == tn
    assert list(lsd) == list(tsd)
    for k in tsd:
        assert_same(lsd[k], tsd[k], rtol=1e-5, atol=1e-6)
    assert_same(lo, to, rtol=1e-4, atol=1e-5)
    assert_same(lgr, tg, rtol=1e-4, atol=1e-4)
    for a, b in zip(lpg, tpg):
        assert_same(a, b, rtol=1e-4, atol=1e-3)


def test_uninitialized_parameter():
    for lib in (torch, lg):
        p = lib.nn.UninitializedParameter()
        assert repr(p) == '<UninitializedParameter>' and p.requires_grad
        p.materialize((2, 3))
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3)
        b = lib.nn.UninitializedBuffer()
        assert repr(b) == '<UninitializedBuffer>'
        b.materialize((4,))
        assert type(b) is lib.Tensor and tuple(b.shape) == (4,)
    a, b = raises_like(lambda: lg.nn.UninitializedParameter().shape, lambda: torch.nn.UninitializedParameter().shape)
    assert same_message(a, b)


def test_lazy_errors():
    a, b = raises_like(lambda: lg.nn.LazyConv2d(4, 3)(lg.zeros(2, 3)), lambda: torch.nn.LazyConv2d(4, 3)(torch.zeros(2, 3)))
    assert same_message(a, b), (a, b)
    a, b = raises_like(lambda: lg.nn.LazyConv1d(4, 3, groups=2)(lg.zeros(1, 3, 5)),
                       lambda: torch.nn.LazyConv1d(4, 3, groups=2)(torch.zeros(1, 3, 5)))
    assert same_message(a, b), (a, b)


@pytest.mark.parametrize('momentum', [0.1, 0.5])
def test_instance_norm_updates_running_stats(momentum):
    """F.instance_norm updates given running statistics (it ignored them): per-sample copies
    updated by batch_norm, then averaged."""
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    res = []
    for lib in (torch, lg):
        m = lib.nn.InstanceNorm1d(3, momentum=momentum, track_running_stats=True)
        for k in range(3):
            m(lib.tensor(x * (k + 1)))
        m.eval()
        res.append((m.running_mean, m.running_var, m(lib.tensor(x))))
    for a, b in zip(res[1], res[0]):
        assert_same(a, b, rtol=1e-5, atol=1e-6)
