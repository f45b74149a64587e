"""The in-place variants that the declarations of tril, triu and the scaled products give
(``Tensor.tril_``, ``addmm_``, ``addmv_`` and ``torch.addmv_``, ``baddbmm_``, ``addbmm_``,
``addr_``), against torch: the tensor itself returned and changed, its version bumped, the node
recorded and the gradients through it."""
import numpy as np
import pytest

from oracle import lg, torch

rng = np.random.default_rng(7)
M, N = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
SQUARE = rng.standard_normal((3, 3))
BATCH1, BATCH2 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 2))
V3, V4, V2 = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(2)

# name: (self's array, the other operands' arrays, keyword arguments)
CASES = {
    'tril_': (SQUARE, (), {}), 'tril_ diagonal': (SQUARE, (), {'diagonal': -1}),
    'triu_': (SQUARE, (), {}), 'triu_ diagonal': (SQUARE, (), {'diagonal': 1}),
    'addmm_': (rng.standard_normal((3, 2)), (M, N), {}), 'addmm_ scaled': (rng.standard_normal((3, 2)), (M, N),
                                                                          {'beta': 0.5, 'alpha': 2.0}),
    'addmv_': (V3, (M, V4), {'alpha': -1.5}),
    'baddbmm_': (rng.standard_normal((2, 3, 2)), (BATCH1, BATCH2), {'beta': 2.0}),
    'addbmm_': (rng.standard_normal((3, 2)), (BATCH1, BATCH2), {'alpha': 0.5}),
    'addr_': (rng.standard_normal((3, 2)), (V3, V2), {'beta': 0.25}),
}


def _run(T, case):
    self_array, others, kwargs = CASES[case]
    leaf = T.tensor(self_array, requires_grad=True)
    operands = [T.tensor(a, requires_grad=True) for a in others]
    x = leaf * 1.0  # (a leaf that requires grad may not change in place)
    before = x._version
    result = getattr(x, case.split()[0])(*operands, **kwargs)
    assert result is x
    versions = x._version - before
    name = type(x.grad_fn).__name__
    (x * x).sum().backward()
    grads = [t.grad.detach().numpy() if T is torch else np.asarray(t.grad._data) for t in [leaf] + operands]
    values = x.detach().numpy() if T is torch else np.asarray(x.detach()._data)
    return values, versions, name, grads


@pytest.mark.parametrize('case', CASES)
def test_inplace_variant_as_torch(case):
    lv, lver, lname, lgrads = _run(lg, case)
    tv, tver, tname, tgrads = _run(torch, case)
    np.testing.assert_allclose(lv, tv, rtol=1e-10, atol=1e-12)
    assert lver == tver == 1
    assert lname == tname
    for lgr, tgr in zip(lgrads, tgrads):
        np.testing.assert_allclose(lgr, tgr, rtol=1e-10, atol=1e-12)


def test_addmv_in_place_is_a_function_too():
    for T in (lg, torch):
        y = T.tensor(V3.copy())
        assert T.addmv_(y, T.tensor(M), T.tensor(V4)) is y
    np.testing.assert_allclose(np.asarray(y.numpy()), V3 + M @ V4)
    assert hasattr(lg, 'addmv_') and not hasattr(lg, 'addmm_') and not hasattr(torch, 'addmm_')
