"""A float32 product whose gradient comes back in float64 (a later op promoted it beside a
float64 tensor): PyTorch's engine casts the gradient to the product's dtype; the products'
derivatives here take it in either dtype, with PyTorch's gradients."""
import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

CASES = {
    'mv': lambda M, a, b: a @ b[:, 0],
    'mm': lambda M, a, b: a @ b,
    'bmm': lambda M, a, b: M.bmm(a[None], b[None])[0],
    'batch_times_vector': lambda M, a, b: (a[None] @ b[:, 0])[0],
    'dot': lambda M, a, b: M.dot(a[0], b[:, 0]).expand(3),
    'linear': lambda M, a, b: M.nn.functional.linear(a, b.t()),
    'addmm': lambda M, a, b: M.addmm(a[:, :1], a, b),
    'addmv': lambda M, a, b: M.addmv(a[0], a, b[0]),
    'baddbmm': lambda M, a, b: M.baddbmm(a[None], a[None], b[None])[0],
    'outer': lambda M, a, b: M.outer(a[0], b[0]),
    'vector_times_matrix': lambda M, a, b: b[0] @ a,
    'einsum': lambda M, a, b: M.einsum('ij,jk->ik', a, b),
    'tensordot': lambda M, a, b: M.tensordot(a, b, dims=1),
}


def _grads(M, name):
    rng = np.random.default_rng(3)
    a = M.tensor(rng.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
    b = M.tensor(rng.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
    y = CASES[name](M, a, b)
    signs = M.tensor(rng.standard_normal(y.shape[:1] + (1,) * (y.dim() - 1)), dtype=M.float64, requires_grad=True)
    (M.copysign(y, signs) * signs).sum().backward()
    return [(str(t.grad.dtype).split('.')[-1], t.grad.detach().numpy()) for t in (a, b, signs)]


@pytest.mark.parametrize('name', sorted(CASES))
def test_a_float32_products_gradient_that_comes_back_in_float64(name):
    mine, theirs = _grads(lg, name), _grads(torch, name)
    for (dt, g), (tdt, tg) in zip(mine, theirs):
        assert dt == tdt
        np.testing.assert_allclose(g, tg, rtol=1e-5, atol=1e-6)
