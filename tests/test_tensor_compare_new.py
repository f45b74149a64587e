"""torch.softmax/log_softmax, isclose/allclose/equal and Tensor.new_* against torch."""
import numpy as np
import pytest

from oracle import assert_same, lg, raises_like, torch


def _pair(a, **kwargs):
    return lg.tensor(a, **kwargs), torch.tensor(a, **kwargs)


@pytest.mark.parametrize('dim', [0, 1, -1])
@pytest.mark.parametrize('log', [False, True])
def test_softmax_function_and_method(dim, log):
    a = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for T in (lg, torch):
        x = T.tensor(a, requires_grad=True)
        fn = T.log_softmax if log else T.softmax
        y = fn(x, dim)
        m = x.log_softmax(dim) if log else x.softmax(dim)
        f32 = fn(x, dim, dtype=T.float32)
        (y * T.tensor(np.arange(12.).reshape(3, 4))).sum().backward()
        results.append((y, m, f32, x.grad, y.grad_fn.name()))
    for a_, b_ in zip(results[0][:4], results[1][:4]):
        assert_same(a_, b_, rtol=1e-10, atol=1e-12) if a_.dtype == lg.float64 else assert_same(a_, b_)
    assert results[0][4] == results[1][4]
    fn = lg.log_softmax if log else lg.softmax
    assert lg.autograd.gradcheck(lambda t: fn(t, dim), (lg.tensor(a, requires_grad=True),))
    assert lg.autograd.gradgradcheck(lambda t: fn(t, dim), (lg.tensor(a, requires_grad=True),))
    assert raises_like(lambda: lg.softmax(lg.zeros(2)), lambda: torch.softmax(torch.zeros(2)))


CLOSE = [
    (np.array([1.0, 2.0, np.inf, -np.inf, np.nan]), np.array([1.0 + 1e-9, 2.1, np.inf, np.inf, np.nan]), {}),
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), {'equal_nan': True}),
    (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 2.0001]), {'rtol': 1e-3}),
    (np.array([100.0, 0.0]), np.array([100.5, 1e-7]), {'atol': 1e-6, 'rtol': 0.0}),
    (np.array([1, 2, 3]), np.array([1, 3, 3]), {}),
    (np.array([True, False]), np.array([True, True]), {}),
]


@pytest.mark.parametrize('a,b,kwargs', CLOSE)
@pytest.mark.parametrize('dtype', [None, 'float32'])
def test_isclose_allclose_equal(a, b, kwargs, dtype):
    if dtype and a.dtype.kind == 'f':
        a, b = a.astype(dtype), b.astype(dtype)
    (la, ta), (lb, tb) = _pair(a), _pair(b)
    assert_same(lg.isclose(la, lb, **kwargs), torch.isclose(ta, tb, **kwargs))
    assert_same(la.isclose(lb, **kwargs), ta.isclose(tb, **kwargs))
    assert lg.allclose(la, lb, **kwargs) == torch.allclose(ta, tb, **kwargs)
    assert la.allclose(lb, **kwargs) is torch.allclose(ta, tb, **kwargs)
    assert lg.equal(la, lb) is torch.equal(ta, tb)
    assert la.equal(la.clone()) is ta.equal(ta.clone())


def test_compare_errors_and_mixed_dtypes():
    (l32, t32), (l64, t64) = _pair(np.zeros(3, np.float32)), _pair(np.zeros(3))
    for name in ('isclose', 'allclose'):
        lm, tm = raises_like(lambda: getattr(lg, name)(l32, l64), lambda: getattr(torch, name)(t32, t64))
        assert lm == tm
        lm, tm = raises_like(lambda: getattr(lg, name)(l32, 1.0), lambda: getattr(torch, name)(t32, 1.0))
        assert lm == tm
        lm, tm = raises_like(lambda: getattr(lg, name)(l32, lg.zeros(2)), lambda: getattr(torch, name)(t32, torch.zeros(2)))
        assert lm == tm
    # equal compares values after promotion, and tensors of different sizes are not equal
    assert lg.equal(l32, l64) is torch.equal(t32, t64) is True
    assert lg.equal(l32, lg.zeros(2)) is torch.equal(t32, torch.zeros(2)) is False
    assert lg.equal(lg.tensor([1.0]), lg.tensor([1])) is torch.equal(torch.tensor([1.0]), torch.tensor([1]))


@pytest.mark.parametrize('base_dtype', ['float32', 'float64', 'int64'])
def test_new_tensors_like_torch(base_dtype):
    lb, tb = _pair(np.arange(6).reshape(2, 3).astype(base_dtype))
    cases = [
        lambda x, T: x.new_zeros(2, 3), lambda x, T: x.new_zeros((4,)), lambda x, T: x.new_ones([2, 2]),
        lambda x, T: x.new_full((2, 2), 7), lambda x, T: x.new_full((3,), 2.5),
        lambda x, T: x.new_tensor([1, 2, 3]), lambda x, T: x.new_tensor([[1.5], [2.5]]),
        lambda x, T: x.new_zeros(3, dtype=T.int64), lambda x, T: x.new_ones(2, dtype=T.float16),
        lambda x, T: x.new_empty(2, 5).fill_(0), lambda x, T: x.new_ones(2, dtype=T.float32, requires_grad=True),
    ]
    for case in cases:
        lr, tr = case(lb, lg), case(tb, torch)
        assert_same(lr, tr)
        assert lr.requires_grad == tr.requires_grad and lr.is_leaf
    grad_base = lg.ones(2, requires_grad=True) * 2
    assert not grad_base.new_zeros(2).requires_grad and grad_base.new_zeros(2).grad_fn is None


# ---- sampling in place: normal_, uniform_ -------------------------------------------------------

@pytest.mark.parametrize('method,args,kernel_name', [('normal_', (), 'NormalBackward0'),
                                                     ('uniform_', (-1.0, 2.0), 'UniformBackward0')])
def test_sampling_in_place_like_torch(method, args, kernel_name):
    names, grads, versions = [], [], []
    for T in (lg, torch):
        x = T.zeros(3, requires_grad=True)
        y = x * 2
        getattr(y, method)(*args)
        names.append(y.grad_fn.name())
        versions.append(y._version)
        y.sum().backward()
        grads.append(x.grad.numpy())
        # through .data or under no_grad a leaf that requires grad takes it
        getattr(x.data, method)(*args)
        with T.no_grad():
            getattr(x, method)(*args)
    assert names == [kernel_name] * 2 and versions[0] == versions[1] == 1
    lm, tm = raises_like(lambda: getattr(lg.zeros(3, requires_grad=True), method)(*args),
                         lambda: getattr(torch.zeros(3, requires_grad=True), method)(*args))
    assert lm == tm
    np.testing.assert_array_equal(grads[0], grads[1])  # zeros: the old values do not matter


def test_sampling_values_dtypes_and_errors():
    gen = lg.Generator().manual_seed(0)
    for dtype in (lg.float16, lg.float32, lg.float64):
        n = lg.zeros(20000, dtype=dtype).normal_(3.0, 0.5, generator=gen)
        u = lg.empty(20000, dtype=dtype).uniform_(-2, to=5, generator=gen)
        assert n.dtype == u.dtype == dtype
        assert abs(float(n.mean()) - 3.0) < 0.02 and abs(float(n.float().std()) - 0.5) < 0.02
        assert float(u.min()) >= -2 and float(u.max()) <= 5 and abs(float(u.float().mean()) - 1.5) < 0.1
    a = lg.zeros(5).normal_(generator=lg.Generator().manual_seed(7))
    b = lg.zeros(5).normal_(generator=lg.Generator().manual_seed(7))
    assert lg.equal(a, b)  # the generator decides
    for make in (lambda T: T.zeros(2, dtype=T.int64).uniform_(), lambda T: T.zeros(2, dtype=T.bool).normal_(),
                 lambda T: T.zeros(3).uniform_(2, 1), lambda T: T.zeros(3).normal_(0, -1)):
        lm, tm = raises_like(lambda: make(lg), lambda: make(torch))
        assert lm == tm
    assert lg.equal(lg.zeros(3).uniform_(0, 0), lg.zeros(3))
