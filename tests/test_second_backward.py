"""A second backward through a graph whose saved values were freed fails exactly where PyTorch's
does: a node that kept anything for its derivative (a tensor, an index, a mask, a Python scalar
operand) raises; one that kept nothing (an add, a view) runs again. With retain_graph=True both
backward passes give PyTorch's gradients."""
import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg


def _i(T, v):
    return T.tensor(v)


CASES = {
    # a Python scalar operand is saved (PyTorch wraps it as a tensor)
    'x * 2.0': lambda T, x: x * 2.0, '2.0 * x': lambda T, x: 2.0 * x, 'x * True': lambda T, x: x * True,
    'x / 2.0': lambda T, x: x / 2.0, '2.0 / x': lambda T, x: 2.0 / x, 'x.mul(2)': lambda T, x: x.mul(2),
    'mul_(2.0)': lambda T, x: x.clone().mul_(2.0), 'div_(2.0)': lambda T, x: x.clone().div_(2.0),
    'div floor': lambda T, x: x.div(2, rounding_mode='floor'), 'div trunc': lambda T, x: x.div(2, rounding_mode='trunc'),
    # nothing saved: runs again
    'x + 2.0': lambda T, x: x + 2.0, '2 - x': lambda T, x: 2 - x, '-x': lambda T, x: -x, 'x.t()': lambda T, x: x.t(),
    'x[0]': lambda T, x: x[0], 'x.sum(0)': lambda T, x: x.sum(0), 'x.mean()': lambda T, x: x.mean(),
    # an index or a mask is saved
    'index_select': lambda T, x: x.index_select(0, _i(T, [1])), 'gather': lambda T, x: x.gather(0, _i(T, [[0, 1]])),
    'take': lambda T, x: T.take(x, _i(T, [0, 3])), 'x[idx]': lambda T, x: x[_i(T, [1, 0])],
    'x[mask]': lambda T, x: x[x.detach() > 2], 'masked_select': lambda T, x: x.masked_select(x.detach() > 2),
    'masked_fill': lambda T, x: x.masked_fill(x.detach() > 2, 0.0),
    'masked_fill tensor': lambda T, x: x.masked_fill(x.detach() > 2, T.tensor(0.0)),
    'scatter': lambda T, x: x.scatter(0, _i(T, [[1, 0]]), x.detach()[:1]),
    'scatter src': lambda T, x: x.detach().scatter(0, _i(T, [[1, 0]]), x[:1]),
    'scatter value': lambda T, x: x.scatter(0, _i(T, [[1, 0]]), 5.0),
    'scatter_add': lambda T, x: x.scatter_add(0, _i(T, [[1, 0]]), x[:1]),
    'index_add': lambda T, x: x.index_add(0, _i(T, [1]), x[:1]),
    'index_add source constant': lambda T, x: x.index_add(0, _i(T, [1]), x.detach()[:1]),
    'scatter_add source constant': lambda T, x: x.scatter_add(0, _i(T, [[1, 0]]), x.detach()[:1]),
    'index_fill': lambda T, x: x.index_fill(0, _i(T, [1]), 3.0),
    'index_fill tensor': lambda T, x: x.index_fill(0, _i(T, [1]), T.tensor(3.0)),
    'index_copy': lambda T, x: x.index_copy(0, _i(T, [1]), x[:1]),
    'masked_scatter': lambda T, x: x.masked_scatter(x.detach() > 2, x + 1),
    'index_put': lambda T, x: x.index_put((_i(T, [0]),), x[1:]),
    'index_put accumulate': lambda T, x: x.index_put((_i(T, [0, 0]),), x[:1].expand(2, 2), accumulate=True),
    'max dim': lambda T, x: x.max(0).values, 'min dim': lambda T, x: x.min(1)[0], 'sort': lambda T, x: x.sort(0).values,
    'topk': lambda T, x: x.topk(1).values, 'kthvalue': lambda T, x: x.kthvalue(1).values,
    'median dim': lambda T, x: x.median(0).values, 'mode': lambda T, x: x.mode(0).values,
    'cummax': lambda T, x: x.cummax(0).values,
    'pad reflect': lambda T, x: T.nn.functional.pad(x.reshape(1, 2, 2), (1, 1), mode='reflect'),
    'pad replicate': lambda T, x: T.nn.functional.pad(x.reshape(1, 2, 2), (1, 1), mode='replicate'),
    # saved only for an operand that needs grad (here only x does)
    'addcmul': lambda T, x: T.addcmul(x, x.detach(), x.detach(), value=2),
    'addcmul tensor1': lambda T, x: T.addcmul(x.detach(), x, x.detach(), value=2),
    'addcdiv': lambda T, x: T.addcdiv(x, x.detach(), x.detach() + 1, value=2),
    'fmod': lambda T, x: T.fmod(x, x.detach() + 1), 'fmod other': lambda T, x: T.fmod(x.detach() + 1, x),
    'remainder': lambda T, x: T.remainder(x, x.detach() + 1),
    'remainder other': lambda T, x: T.remainder(x.detach() + 1, x),
    'constant * x': lambda T, x: x.detach() * x, 'x * constant': lambda T, x: x * x.detach(),
    'x * x': lambda T, x: x * x, 'exp': lambda T, x: x.exp(), 'relu': lambda T, x: T.relu(x),
    # the input is saved though the derivative reads only its shape (or nothing)
    '2 ** x': lambda T, x: 2 ** x, 'nll_loss': lambda T, x: T.nn.functional.nll_loss(x, _i(T, [0, 1])),
    'copysign': lambda T, x: T.copysign(x, x.detach() - 2),
    'copysign other': lambda T, x: T.copysign(x.detach() - 2, x),
}


def _second_backward(T, fn):
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = fn(T, x)
    y.sum().backward()
    return lambda: y.sum().backward()


@pytest.mark.parametrize('name', list(CASES))
def test_second_backward_fails_where_torch_fails(name):
    again_lg, again_torch = _second_backward(lg, CASES[name]), _second_backward(torch, CASES[name])
    try:
        again_torch()
    except RuntimeError:
        m1, m2 = raises_like(again_lg, again_torch)
        assert same_message(m1, m2)
    else:
        again_lg()


@pytest.mark.parametrize('name', list(CASES))
def test_retain_graph_keeps_what_a_second_backward_needs(name):
    grads = []
    for T in (lg, torch):
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
        y = CASES[name](T, x)
        w = T.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)))
        (y * w).sum().backward(retain_graph=True)
        (y * w).sum().backward()
        grads.append(x.grad)
    assert_same(*grads)


@pytest.mark.parametrize('name', list(CASES))
def test_changing_the_input_in_place_after_the_op(name):
    """Fails where PyTorch's saved copy of the input notices the change, runs (with PyTorch's
    gradient) where it kept none."""
    results = []
    for T in (lg, torch):
        leaf = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        x = leaf + 0
        y = CASES[name](T, x)
        x.mul_(1.5)
        try:
            y.sum().backward()
            results.append(leaf.grad.tolist())
        except RuntimeError as e:
            results.append(str(e).split(':')[0])
    if isinstance(results[1], str):
        assert results[0] == results[1]
    else:  # (float32 exp and friends may differ from torch's in the last bit)
        np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_release_frees_an_index_and_marks_a_scalar():
    x = lg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    picked = x.index_select(0, lg.tensor([1]))
    scaled = x * 2.0
    (picked.sum() + scaled.sum()).backward()
    assert picked.grad_fn.index is None  # the index array is freed with the graph
    assert scaled.grad_fn._saved_self is None  # never saved: None, not an error (as in torch)
    with pytest.raises(RuntimeError, match='backward through the graph a second time'):
        scaled.grad_fn._saved_other
    assert (x * 2.0).grad_fn._saved_other.item() == 2.0


def test_an_operand_not_saved_may_change_in_place():
    """``c * y`` with c constant saves c only (y's gradient needs c): changing y in place
    afterwards is no error, as in PyTorch; changing c is."""
    for change_y in (True, False):
        results = []
        for T in (lg, torch):
            w = T.tensor([1.0, 2.0], requires_grad=True)
            c = T.tensor([3.0, 4.0])
            y = w * 1
            out = c * y
            (y if change_y else c).add_(1)
            try:
                out.sum().backward()
                results.append(w.grad.tolist())
            except RuntimeError as e:
                results.append(type(e))
        assert results[0] == results[1], (change_y, results)
        assert (results[0] == [3.0, 4.0]) == change_y


# ---- what a product saves: only the operands its derivative needs ------------------------------

PRODUCTS = {
    'mm': lambda T, a, b: a @ b, 'mv': lambda T, a, b: T.mv(a, b[0]), 'dot': lambda T, a, b: T.dot(a[0], b[0]),
    'outer': lambda T, a, b: T.outer(a[0], b[0]), 'bmm': lambda T, a, b: T.bmm(a[None], b[None]),
    'linear': lambda T, a, b: T.nn.functional.linear(a, b), 'linear bias': lambda T, a, b: T.nn.functional.linear(a, b, b[0]),
    'addmm': lambda T, a, b: T.addmm(a, a, b), 'addmv': lambda T, a, b: T.addmv(a[0], a, b[0]),
    'baddbmm': lambda T, a, b: T.baddbmm(a[None], a[None], b[None]), 'addbmm': lambda T, a, b: T.addbmm(a, a[None], b[None]),
    'einsum': lambda T, a, b: T.einsum('ij,jk->ik', a, b), 'mul': lambda T, a, b: a * b,
    'hypot': lambda T, a, b: T.hypot(a, b), 'copysign': lambda T, a, b: T.copysign(a, b),
    'addcmul': lambda T, a, b: T.addcmul(a.detach(), a, b), 'addcdiv': lambda T, a, b: T.addcdiv(a.detach(), a, b + 3),
    'lerp': lambda T, a, b: T.lerp(a, b, b.detach() * 0.1), 'lerp weight': lambda T, a, b: T.lerp(a.detach(), b.detach(), b),
    'embedding_bag': lambda T, a, b: T.nn.functional.embedding_bag(T.tensor([1, 0]), a, T.tensor([0]), mode='sum',
                                                                   per_sample_weights=b[0]),
}


@pytest.mark.parametrize('needs', ['a', 'b', 'ab'])
@pytest.mark.parametrize('modified', ['a', 'b'])
@pytest.mark.parametrize('name', list(PRODUCTS))
def test_changing_an_operand_in_place_after_a_product(name, modified, needs):
    """The in-place change of an operand the derivative does not need is no error (PyTorch saves
    no more than its formulas use); of one it needs, it is PyTorch's error."""
    results = []
    for T in (lg, torch):
        a0 = T.tensor([[1.0, -2.0], [0.5, 4.0]], requires_grad='a' in needs)
        b0 = T.tensor([[0.3, 2.0], [-3.0, 1.5]], requires_grad='b' in needs)
        a = a0 + 0 if 'a' in needs else a0.clone()  # non-leaf operands may change in place
        b = b0 + 0 if 'b' in needs else b0.clone()
        y = PRODUCTS[name](T, a, b)
        (a if modified == 'a' else b).mul_(1.5)
        try:
            y.sum().backward()
            results.append([None if t.grad is None else t.grad.tolist() for t in (a0, b0)])
        except RuntimeError as e:
            results.append(str(e).split(':')[0])
    assert results[0] == results[1]


SCALED_PRODUCTS = {
    'addmm': (lambda T, c, a, b: T.addmm(c, a, b, beta=0.5), [(2, 4), (2, 3), (3, 4)]),
    'addmv': (lambda T, c, a, b: T.addmv(c, a, b, beta=2), [(2,), (2, 3), (3,)]),
    'baddbmm': (lambda T, c, a, b: T.baddbmm(c, a, b, beta=-1), [(1, 3, 2), (2, 3, 4), (2, 4, 2)]),
    'addbmm': (lambda T, c, a, b: T.addbmm(c, a, b, beta=3), [(3, 2), (2, 3, 4), (2, 4, 2)]),
}


@pytest.mark.parametrize('name', list(SCALED_PRODUCTS))
def test_a_scaled_product_of_constants_saves_nothing(name):
    """beta * input + alpha * (a @ b) where only input needs grad: its gradient (beta, summed
    back to its shape) as torch's, and nothing saved, so a second backward runs, as in torch."""
    fn, shapes = SCALED_PRODUCTS[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    grads = []
    for T in (lg, torch):
        c = T.tensor(arrays[0], requires_grad=True)
        y = fn(T, c, T.tensor(arrays[1]), T.tensor(arrays[2]))
        y.sum().backward()
        y.sum().backward()  # nothing was saved: no error
        grads.append(c.grad)
    assert_same(*grads)
