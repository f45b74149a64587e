"""nn.FractionalMaxPool2d and 3d, F.fractional_max_pool2d and 3d, against torch: values, indices, gradients
(float32/float64, 3-D and 4-D input, output_size and output_ratio, drawn and given
_random_samples), float64 gradcheck and gradgradcheck, NaN, the module, and the errors."""
import numpy as np
import pytest

from oracle import lg, raises_like, same_message, torch

CASES = {
    'size': ((2, 3, 9, 11), 2, {'output_size': 4}),
    'rect_kernel': ((2, 3, 9, 11), (3, 2), {'output_size': (5, 7)}),
    'ratio_3d': ((3, 8, 8), 2, {'output_ratio': 0.5}),
    'ratio_pair': ((1, 2, 10, 10), 3, {'output_ratio': (0.6, 0.4)}),
    'tight': ((2, 1, 5, 5), 2, {'output_size': 4}),
    'one_output': ((2, 1, 5, 5), 2, {'output_size': 1}),
}


def _run(T, case, dtype):
    shape, k, kw = CASES[case]
    T.manual_seed(0)
    x = T.randn(*shape, dtype=getattr(T, dtype), requires_grad=True)
    y, i = T.nn.FractionalMaxPool2d(k, return_indices=True, **kw)(x)
    (y * T.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
    after = T.rand(3)  # the samples were drawn from the stream as PyTorch draws them
    return y, i, x.grad, after


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('case', list(CASES))
def test_fractional_max_pool2d_as_torch(case, dtype):
    results = _run(lg, case, dtype), _run(torch, case, dtype)
    for a, b in zip(*results):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split('.')[1] == str(b.dtype).split('.')[1]
        np.testing.assert_array_equal(_np(a), _np(b))
    assert type(results[0][0].grad_fn).__name__ == type(results[1][0].grad_fn).__name__ == \
        'FractionalMaxPool2DBackward0'


def test_given_samples_nan_and_functional_as_torch():
    x = np.arange(2 * 2 * 6 * 6, dtype=np.float32).reshape(2, 2, 6, 6) % 7
    x[0, 0, 1, 1] = x[0, 0, 2, 2] = np.nan
    samples = np.array([[[0.1, 0.9], [0.5, 0.5]], [[0.99, 0.0], [0.3, 0.7]], [[0.2, 0.2], [0.4, 0.4]]], np.float32)
    outs = []
    for T in (lg, torch):
        y, i = T.nn.functional.fractional_max_pool2d(T.tensor(x), (2, 3), output_size=(3, 3), return_indices=True,
                                                     _random_samples=T.tensor(samples))
        outs.append((_np(y), _np(i)))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])


def test_fractional_max_pool2d_gradcheck_and_gradgradcheck():
    x = lg.tensor(np.random.RandomState(0).standard_normal((1, 2, 7, 6)), requires_grad=True)
    samples = lg.tensor([[[0.3, 0.8], [0.6, 0.1]]], dtype=lg.float64)

    def pool(x):
        return lg.nn.functional.fractional_max_pool2d(x, 2, output_size=(4, 3), _random_samples=samples)
    assert lg.autograd.gradcheck(pool, (x,))
    assert lg.autograd.gradgradcheck(pool, (x,))


def test_the_module_as_torch():
    for T in (lg, torch):
        samples = T.rand(1, 3, 2)
        m = T.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=samples)
        assert repr(m) == 'FractionalMaxPool2d()' and list(m.state_dict()) == ['_random_samples']
        assert m.kernel_size == (2, 2) and m.output_size == (3, 3) and m.output_ratio is None
        r = T.nn.FractionalMaxPool2d(3, output_ratio=0.5)
        assert r.output_ratio == (0.5, 0.5) and list(r.state_dict()) == []


ERRORS = {
    'neither': lambda T: T.nn.FractionalMaxPool2d(2),
    'both': lambda T: T.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    'ratio': lambda T: T.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    'functional_neither': lambda T: T.nn.functional.fractional_max_pool2d(T.randn(1, 1, 5, 5), 2),
    'too_large': lambda T: T.nn.FractionalMaxPool2d(2, output_size=5)(T.randn(1, 1, 5, 5)),
    'too_wide': lambda T: T.nn.FractionalMaxPool2d(2, output_size=(2, 5))(T.randn(1, 1, 5, 5)),
    'two_dims': lambda T: T.nn.FractionalMaxPool2d(2, output_size=3)(T.randn(5, 5)),
    'five_dims': lambda T: T.nn.FractionalMaxPool2d(2, output_size=3)(T.randn(1, 1, 1, 5, 5)),
    'empty': lambda T: T.nn.FractionalMaxPool2d(2, output_size=3)(T.randn(1, 0, 5, 5)),
    'samples_channels': lambda T: T.nn.functional.fractional_max_pool2d(T.randn(1, 1, 5, 5), 2, output_size=3,
                                                                        _random_samples=T.rand(1, 2, 2)),
    'samples_dtype': lambda T: T.nn.functional.fractional_max_pool2d(
        T.randn(1, 1, 5, 5), 2, output_size=3, _random_samples=T.rand(1, 1, 2, dtype=T.float64)),
    'samples_batch': lambda T: T.nn.functional.fractional_max_pool2d(T.randn(2, 1, 5, 5), 2, output_size=3,
                                                                     _random_samples=T.rand(1, 1, 2)),
    'samples_width': lambda T: T.nn.functional.fractional_max_pool2d(T.randn(1, 1, 5, 5), 2, output_size=3,
                                                                     _random_samples=T.rand(1, 1, 3)),
    'kernel_three': lambda T: T.nn.functional.fractional_max_pool2d(T.randn(1, 1, 5, 5), (2, 2, 2), output_size=2),
    'output_three': lambda T: T.nn.functional.fractional_max_pool2d(T.randn(1, 1, 5, 5), 2, output_size=(2, 2, 2)),
}


@pytest.mark.parametrize('case', list(ERRORS))
def test_fractional_max_pool2d_errors_as_torch(case):
    msgs = raises_like(lambda: ERRORS[case](lg), lambda: ERRORS[case](torch))
    assert same_message(*msgs), msgs

# ---- 3-D -------------------------------------------------------------------------------

CASES_3D = {
    'size': ((2, 3, 6, 7, 8), 2, {'output_size': 3}),
    'rect_kernel': ((2, 2, 6, 7, 8), (2, 3, 2), {'output_size': (3, 4, 5)}),
    'ratio_4d': ((3, 8, 8, 6), 2, {'output_ratio': 0.5}),
    'ratio_triple': ((1, 2, 10, 9, 8), 3, {'output_ratio': (0.6, 0.4, 0.5)}),
    'tight': ((2, 1, 5, 5, 5), 2, {'output_size': 3}),
    'one_output': ((1, 2, 4, 4, 4), 2, {'output_size': 1}),
}


def _run3d(T, case, dtype):
    shape, k, kw = CASES_3D[case]
    T.manual_seed(0)
    x = T.randn(*shape, dtype=getattr(T, dtype), requires_grad=True)
    y, i = T.nn.FractionalMaxPool3d(k, return_indices=True, **kw)(x)
    (y * T.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
    return y, i, x.grad, T.rand(3)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('case', list(CASES_3D))
def test_fractional_max_pool3d_as_torch(case, dtype):
    results = _run3d(lg, case, dtype), _run3d(torch, case, dtype)
    for a, b in zip(*results):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split('.')[1] == str(b.dtype).split('.')[1]
        np.testing.assert_array_equal(_np(a), _np(b))
    assert type(results[0][0].grad_fn).__name__ == type(results[1][0].grad_fn).__name__ == \
        'FractionalMaxPool3DBackward0'


def test_3d_given_samples_nan_and_empty_windows_as_torch():
    x = np.arange(2 * 2 * 5 * 6 * 6, dtype=np.float32).reshape(2, 2, 5, 6, 6) % 7
    x[0, 0, 1, 1, 1] = x[0, 0, 2, 2, 2] = np.nan
    samples = np.random.RandomState(1).uniform(0, 1, (3, 2, 3)).astype(np.float32)
    outs = []
    for T in (lg, torch):
        F = T.nn.functional
        for kernel in ((2, 3, 2), (0, 2, 2)):
            y, i = F.fractional_max_pool3d(T.tensor(x), kernel, output_size=(3, 3, 2), return_indices=True,
                                           _random_samples=T.tensor(samples))
            outs.append((_np(y), _np(i)))
        outs.append((_np(F.fractional_max_pool2d(T.tensor(x[:, :, 0]), 0, output_size=2,
                                                 _random_samples=T.tensor(samples[:, :, :2]))), None))
    for a, b in zip(outs[:3], outs[3:]):
        np.testing.assert_array_equal(a[0], b[0])
        if a[1] is not None:
            np.testing.assert_array_equal(a[1], b[1])


def test_fractional_max_pool3d_gradcheck_and_gradgradcheck():
    x = lg.tensor(np.random.RandomState(0).standard_normal((1, 2, 5, 6, 5)), requires_grad=True)
    samples = lg.tensor([[[0.3, 0.8, 0.1], [0.6, 0.1, 0.9]]], dtype=lg.float64)

    def pool(x):
        return lg.nn.functional.fractional_max_pool3d(x, 2, output_size=(3, 4, 2), _random_samples=samples)
    assert lg.autograd.gradcheck(pool, (x,))
    assert lg.autograd.gradgradcheck(pool, (x,))


def test_the_3d_module_as_torch():
    for T in (lg, torch):
        samples = T.rand(1, 3, 3)
        m = T.nn.FractionalMaxPool3d(2, output_size=3, _random_samples=samples)
        assert repr(m) == 'FractionalMaxPool3d()' and list(m.state_dict()) == ['_random_samples']
        assert m.kernel_size == (2, 2, 2) and m.output_size == (3, 3, 3) and m.output_ratio is None
        r = T.nn.FractionalMaxPool3d(3, output_ratio=0.5)
        assert r.output_ratio == (0.5, 0.5, 0.5) and list(r.state_dict()) == []


def _f3(T, shape=(1, 1, 5, 5, 5), **kw):
    return T.nn.functional.fractional_max_pool3d(T.randn(*shape), kw.pop('k', 2), **kw)


ERRORS_3D = {
    'neither': lambda T: T.nn.FractionalMaxPool3d(2),
    'both': lambda T: T.nn.FractionalMaxPool3d(2, output_size=3, output_ratio=0.5),
    'ratio': lambda T: T.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5)),
    'kernel_zero': lambda T: T.nn.FractionalMaxPool3d(0, output_size=2),
    'kernel_tuple_zero': lambda T: T.nn.FractionalMaxPool3d((2, 0, 2), output_size=2),
    'functional_neither': lambda T: _f3(T),
    'too_long': lambda T: _f3(T, output_size=(4, 3, 3)),
    'too_high': lambda T: _f3(T, output_size=(3, 4, 3)),
    'too_wide': lambda T: _f3(T, output_size=(3, 3, 4)),
    'three_dims': lambda T: _f3(T, shape=(5, 5, 5), output_size=2),
    'six_dims': lambda T: _f3(T, shape=(1, 1, 1, 5, 5, 5), output_size=2),
    'empty': lambda T: _f3(T, shape=(1, 0, 5, 5, 5), output_size=2),
    'kernel_pair': lambda T: _f3(T, k=(2, 2), output_size=2),
    'output_pair': lambda T: _f3(T, output_size=(2, 2)),
    'samples_dtype': lambda T: _f3(T, output_size=2, _random_samples=T.rand(1, 1, 3, dtype=T.float64)),
    'samples_channels': lambda T: _f3(T, output_size=2, _random_samples=T.rand(1, 2, 3)),
    'samples_batch': lambda T: _f3(T, shape=(2, 1, 5, 5, 5), output_size=2, _random_samples=T.rand(1, 1, 3)),
    'samples_rank': lambda T: _f3(T, output_size=2, _random_samples=T.rand(1, 3)),
    'samples_width': lambda T: _f3(T, output_size=2, _random_samples=T.rand(1, 1, 2)),
}


@pytest.mark.parametrize('case', list(ERRORS_3D))
def test_fractional_max_pool3d_errors_as_torch(case):
    msgs = raises_like(lambda: ERRORS_3D[case](lg), lambda: ERRORS_3D[case](torch))
    assert same_message(*msgs), msgs
