"""Zeros, infinities and NaN where an op's derivative or kernel treats them specially, against
PyTorch's: vector_norm's gradient at zero elements for every order (PyTorch's norm_backward
masks them: it had been NaN for orders below 2), and sinc of an infinity (NaN without NumPy's
RuntimeWarning, which had come through)."""
import warnings

import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

_ORDERS = (0.5, 1.0, 1.5, 2.0, 3.0, float('inf'), -1.0, -0.5, 2.5)
_VALUES = ([0.0, -0.0, 2.0, -1.0], [0.0, 0.0, 0.0], [3.0, -4.0, 0.5], [float('inf'), 1.0, 0.0])


def _norm_gradient(T, p, values):
    x = T.tensor(values, requires_grad=True, dtype=T.float64)
    n = T.linalg.vector_norm(x, p)
    n.backward()
    return round(n.item(), 9), [round(v, 9) if v == v else 'nan' for v in x.grad.tolist()]


@pytest.mark.parametrize('values', _VALUES, ids=['zeros among others', 'all zero', 'no zero', 'inf and zero'])
@pytest.mark.parametrize('p', _ORDERS)
def test_vector_norm_gradient_at_zero_elements_as_pytorch(p, values):
    assert _norm_gradient(lg, p, values) == _norm_gradient(torch, p, values)


def test_vector_norm_gradient_below_order_one_differentiates_again():
    def second(T):
        x = T.tensor([[0.0, 1.0], [2.0, 0.0]], dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(T.linalg.vector_norm(x, 0.5, dim=1).sum(), x, create_graph=True)
        gg, = T.autograd.grad(g.sum(), x)
        return [[round(v, 9) if v == v else 'nan' for v in t.flatten().tolist()] for t in (g, gg)]
    assert second(lg) == second(torch)


def _sinc(T):
    x = T.tensor([float('inf'), -float('inf'), float('nan'), 0.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        return [v if v == v else 'nan' for v in T.sinc(x).tolist()]


def test_sinc_of_an_infinity_is_nan_without_a_warning():
    assert _sinc(lg) == _sinc(torch)
