"""nn.utils.fuse_conv_bn_eval / fuse_linear_bn_eval (and their _weights forms) and skip_init
against torch: the fused parameters bit for bit, the fused module's output (within rounding),
the errors."""
import numpy as np
import pytest

from oracle import raises_like, same_message, torch
import leafgrad as lg


def _stats(m, bn, seed):
    rng = np.random.default_rng(seed)
    n = bn.num_features
    with m.no_grad():
        bn.running_mean.copy_(m.tensor(rng.standard_normal(n).astype(np.float32)))
        bn.running_var.copy_(m.tensor(rng.uniform(0.5, 2, n).astype(np.float32)))
        if bn.weight is not None:
            bn.weight.copy_(m.tensor(rng.uniform(0.5, 2, n).astype(np.float32)))
            bn.bias.copy_(m.tensor(rng.standard_normal(n).astype(np.float32)))


def _same_init(m, module, seed):
    rng = np.random.default_rng(seed)
    with m.no_grad():
        for p in module.parameters():
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))


FUSED = [
    ('conv2d', lambda m: m.nn.Conv2d(2, 3, 3), lambda m: m.nn.BatchNorm2d(3), (2, 2, 5, 5), {}),
    ('conv1d_no_bias', lambda m: m.nn.Conv1d(2, 4, 3, bias=False), lambda m: m.nn.BatchNorm1d(4), (2, 2, 6), {}),
    ('conv2d_bn_not_affine', lambda m: m.nn.Conv2d(2, 3, 1), lambda m: m.nn.BatchNorm2d(3, affine=False),
     (1, 2, 4, 4), {}),
    ('conv_transpose2d', lambda m: m.nn.ConvTranspose2d(2, 3, 3), lambda m: m.nn.BatchNorm2d(3), (1, 2, 4, 4),
     {'transpose': True}),
    ('linear', lambda m: m.nn.Linear(4, 3), lambda m: m.nn.BatchNorm1d(3), (5, 4), None),
    ('linear_one_feature', lambda m: m.nn.Linear(4, 3, bias=False), lambda m: m.nn.BatchNorm1d(1), (5, 4), None),
]


@pytest.mark.parametrize('layer,norm,shape,options', [f[1:] for f in FUSED], ids=[f[0] for f in FUSED])
def test_fused_module_as_torch(layer, norm, shape, options):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    results = []
    for m in (lg, torch):
        a, bn = layer(m), norm(m)
        _same_init(m, a, 0)
        _stats(m, bn, 2)
        a.eval()
        bn.eval()
        fuse = m.nn.utils.fuse_linear_bn_eval if options is None else m.nn.utils.fuse_conv_bn_eval
        fused = fuse(a, bn) if options is None else fuse(a, bn, **options)
        assert fused is not a and type(fused).__name__ == type(a).__name__
        assert isinstance(fused.weight, m.nn.Parameter) and isinstance(fused.bias, m.nn.Parameter)
        out = fused(m.tensor(x)) if options is None or bn.num_features != 1 else None
        results.append((fused.weight.detach().numpy(), fused.bias.detach().numpy(),
                        None if out is None else out.detach().numpy()))
    (w, b, out), (tw, tb, tout) = results
    np.testing.assert_array_equal(w, tw)
    np.testing.assert_array_equal(b, tb)
    if out is not None:  # (the layer's own kernel may sum in another order: within rounding)
        np.testing.assert_allclose(out, tout, rtol=1e-5, atol=1e-5)


ERRORS = [
    lambda m: m.nn.utils.fuse_conv_bn_eval(m.nn.Conv2d(2, 3, 1), m.nn.BatchNorm2d(3).eval()),
    lambda m: m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(2, 3).eval(), m.nn.BatchNorm1d(3)),
    lambda m: m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(2, 3).eval(), m.nn.BatchNorm1d(2).eval()),
    lambda m: m.nn.utils.fuse_conv_bn_eval(m.nn.Conv2d(2, 3, 1).eval(),
                                           m.nn.BatchNorm2d(3, track_running_stats=False).eval()),
    lambda m: m.nn.utils.skip_init(int),
    lambda m: m.nn.utils.skip_init(m.nn.ReLU),
]


@pytest.mark.parametrize('call', ERRORS)
def test_errors_as_torch(call):
    assert same_message(*raises_like(lambda: call(lg), lambda: call(torch)))


def test_skip_init_makes_the_module_on_the_device():
    for m in (lg, torch):
        layer = m.nn.utils.skip_init(m.nn.Linear, 3, 2, bias=True)
        assert tuple(layer.weight.shape) == (2, 3) and str(layer.weight.device) == 'cpu'
        assert layer.weight.requires_grad and type(layer).__name__ == 'Linear'
