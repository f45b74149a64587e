"""torch.linalg.ldl_factor, ldl_factor_ex and ldl_solve: LAPACK's Bunch-Kaufman LD and pivots,
the solve, their errors and their lack of a derivative, against torch's."""
import numpy as np
import pytest

from both import lg, same, torch


def _matrix(M, seed, n, dtype, hermitian, small_diagonal=False, batch=()):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    if dtype.startswith('complex'):
        a = a + 1j * rng.standard_normal(batch + (n, n))
    if small_diagonal:  # (forces 2 x 2 pivots and row swaps)
        a[..., np.arange(n), np.arange(n)] *= 0.01
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))
    return M.from_numpy(a.astype(dtype))


CASES = [(seed, n, dtype, herm, small) for seed, (n, dtype, herm, small) in enumerate(
    [(n, d, h, s) for n in (1, 2, 3, 5, 8) for d in ('float32', 'float64', 'complex128')
     for h in (False, True) for s in (False, True)])]


@pytest.mark.parametrize('seed,n,dtype,hermitian,small', CASES)
def test_factor_and_solve(seed, n, dtype, hermitian, small):
    def program(M):
        A = _matrix(M, seed, n, dtype, hermitian, small)
        LD, pivots, info = M.linalg.ldl_factor_ex(A, hermitian=hermitian)
        B = _matrix(M, seed + 1000, n, dtype, False)[..., :2]
        return LD, pivots, info, M.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian)
    same(program)


def test_pivots_exact_on_many_matrices():
    for seed in range(60):
        n = 2 + seed % 9
        args = (seed, n, ('float64', 'complex128')[seed % 2], bool(seed % 3), bool(seed % 4 == 0))
        ours = lg.linalg.ldl_factor(_matrix(lg, *args), hermitian=args[3])
        theirs = torch.linalg.ldl_factor(_matrix(torch, *args), hermitian=args[3])
        assert np.array_equal(ours.pivots.numpy(), theirs.pivots.numpy()), seed
        np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-10, atol=1e-12)


def test_batched_and_broadcast_solve():
    def program(M):
        A = _matrix(M, 3, 4, 'float64', False, True, batch=(2, 3))
        r = M.linalg.ldl_factor(A)
        B = _matrix(M, 4, 4, 'float64', False)[..., :3]
        return r, type(r).__name__, M.linalg.ldl_solve(r.LD, r.pivots, B), M.linalg.ldl_solve(r.LD[0, 0], r.pivots[0, 0],
                                                                                                B.expand(5, 4, 3))
    same(program)


def test_empty_and_upper_triangle_ignored():
    same(lambda M: (M.linalg.ldl_factor(M.ones(0, 0)), M.linalg.ldl_factor_ex(M.ones(2, 0, 3, 3)),
                    M.linalg.ldl_factor(M.tensor([[2., 5.], [1., 3.]]))))


def test_singular():
    same(lambda M: M.linalg.ldl_factor_ex(M.zeros(2, 2)))
    same(lambda M: M.linalg.ldl_factor_ex(M.tensor([[1., 1.], [1., 1.]])))


def test_no_derivative():
    def program(M):
        A = _matrix(M, 1, 3, 'float64', False).requires_grad_()
        LD, pivots, info = M.linalg.ldl_factor_ex(A)
        B = M.ones(3, 1, dtype=M.float64, requires_grad=True)
        X = M.linalg.ldl_solve(LD.detach(), pivots, B)
        out = [LD.requires_grad, pivots.requires_grad, info.requires_grad, type(LD.grad_fn).__name__,
               X.requires_grad, type(X.grad_fn).__name__]
        for t in (LD, X):
            try:
                t.sum().backward()
            except RuntimeError as e:
                out.append(str(e))
        with M.no_grad():
            out.append(M.linalg.ldl_factor(A).LD.requires_grad)
        return out
    same(program)


def test_out():
    same(lambda M: M.linalg.ldl_factor(M.eye(2), out=(M.empty(0), M.empty(0, dtype=M.int32))))
    same(lambda M: M.linalg.ldl_factor(M.eye(2), out=(M.empty(0), M.empty(0))))
    same(lambda M: M.linalg.ldl_factor(M.eye(2), out=(M.empty(0, dtype=M.float64), M.empty(0, dtype=M.int32))))


@pytest.mark.parametrize('call', [
    lambda M: M.linalg.ldl_factor(M.ones(3)),
    lambda M: M.linalg.ldl_factor(M.ones(2, 3)),
    lambda M: M.linalg.ldl_factor_ex(M.ones(2, 3, 4)),
    lambda M: M.linalg.ldl_factor(M.ones(2, 2, dtype=M.int64)),
    lambda M: M.linalg.ldl_factor(M.ones(2, 2, dtype=M.float16)),
    lambda M: M.linalg.ldl_factor(M.zeros(2, 2)),
    lambda M: M.linalg.ldl_factor_ex(M.zeros(2, 2), check_errors=True),
    lambda M: M.linalg.ldl_factor(M.stack([M.eye(2), M.zeros(2, 2)])),
    lambda M: M.linalg.ldl_factor([[1.]]),
    lambda M: M.linalg.ldl_factor_ex([[1.]]),
    lambda M: M.linalg.ldl_factor(M.eye(2), True),
    lambda M: M.linalg.ldl_factor(input=M.eye(2)).pivots,
    lambda M: M.linalg.ldl_solve(1, 2, 3),
    lambda M: M.linalg.ldl_solve(M.eye(2), 2, 3),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.ones(2, dtype=M.int32), 3),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([1, 2]), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2, dtype=M.float64), M.tensor([1, 2], dtype=M.int32), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([1, 2], dtype=M.int32), M.ones(2)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([1, 2], dtype=M.int32), M.ones(3, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([1, 2, 3], dtype=M.int32), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.ones(2), M.tensor([1, 2], dtype=M.int32), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.ones(2, 3), M.tensor([1, 2], dtype=M.int32), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2, dtype=M.int64), M.tensor([1, 2], dtype=M.int32), M.ones(2, 1, dtype=M.int64)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([5, 2], dtype=M.int32), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([0, 2], dtype=M.int32), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([[1, 2]], dtype=M.int32), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([1, 2], dtype=M.int32), M.ones(2, 1, dtype=M.complex64)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.ones(2), M.ones(2, 1)),
    lambda M: M.linalg.ldl_solve(M.eye(2), M.tensor([1, 2], dtype=M.int16), M.ones(2, 1), hermitian=True),
])
def test_errors_and_edges(call):
    same(call)


def test_not_on_torch_or_tensor():
    assert hasattr(lg, 'ldl_factor') == hasattr(torch, 'ldl_factor')
    assert hasattr(lg.Tensor, 'ldl_factor') == hasattr(torch.Tensor, 'ldl_factor')
    assert {'ldl_factor', 'ldl_factor_ex', 'ldl_solve'} <= set(lg.linalg.__all__)
