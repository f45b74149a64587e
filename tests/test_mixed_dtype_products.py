"""A float32 result whose gradient comes back in float64 (a later op promoted it beside a
float64 tensor): PyTorch's engine casts every gradient to its input's dtype, so that the float32
ops before the promotion differentiate in float32; leafgrad's walk casts it where the dtypes
changed (Node._input_dtypes). Gradients, their dtypes, and what a hook on the float32 result
sees, against PyTorch's."""
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
    'inv': lambda M, a, b: M.linalg.inv(a + 4 * M.eye(3)) + b,
    'solve': lambda M, a, b: M.linalg.solve(a + 4 * M.eye(3), b),
    'pinv': lambda M, a, b: M.linalg.pinv(a + 4 * M.eye(3)) + b,
    'addr': lambda M, a, b: M.addr(a, a[0], b[0]),
    'cholesky': lambda M, a, b: M.linalg.cholesky(a @ a.t() + M.eye(3)) + b,
    'matrix_exp': lambda M, a, b: M.linalg.matrix_exp(a) + b,
    'det': lambda M, a, b: M.linalg.det(a + 4 * M.eye(3)).expand(3) + b[0],
    'norm': lambda M, a, b: M.linalg.vector_norm(a, dim=1) + b[0],
    'softmax': lambda M, a, b: M.softmax(a, 1) * b,
    'layer_norm': lambda M, a, b: M.nn.functional.layer_norm(a, (3,)) * b,
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


def _seen_by_a_hook(M):
    """What a hook and retain_grad see on a float32 result that a float64 tensor multiplies."""
    a = M.ones(2, 3, requires_grad=True)
    y = a.tanh()
    seen = []
    y.register_hook(lambda g: seen.append(str(g.dtype).split('.')[-1]))
    y.retain_grad()
    (y * M.ones(2, 3, dtype=M.float64)).sum().backward()
    return seen, str(y.grad.dtype).split('.')[-1], str(a.grad.dtype).split('.')[-1]


def test_a_hook_on_the_float32_result_sees_a_float32_gradient():
    assert _seen_by_a_hook(lg) == _seen_by_a_hook(torch) == (['float32'], 'float32', 'float32')


def _cdist_refusals(M):
    said = []
    for a, b, sa, sb in ((M.float32, M.float64, (2, 3), (2, 3)), (M.float64, M.float32, (2, 3), (2, 3)),
                         (M.float16, M.float16, (2, 3), (2, 3)), (M.int64, M.int64, (2, 3), (2, 3)),
                         (M.bfloat16, M.bfloat16, (2, 3), (2, 3)), (M.float32, M.float64, (3,), (2, 3)),
                         (M.float32, M.float64, (2, 3), (2, 4)), (M.float32, M.int64, (2, 3), (2, 3))):
        try:
            M.cdist(M.ones(*sa, dtype=a), M.ones(*sb, dtype=b))
            said.append(None)
        except Exception as e:
            said.append((type(e).__name__, str(e)))
    return said


def test_cdist_refuses_mixed_integer_and_16_bit_dtypes_as_pytorch():
    """(It had computed them: a float32 and a float64 operand gave a float32 result.)"""
    assert _cdist_refusals(lg) == _cdist_refusals(torch)
