"""out= of matmul, mul, rand and randn against torch: the result written into out (returned, same object,
version bumped, views of it see the values), PyTorch's dtype rules (matmul: exactly the
result's; mul: one the result casts to), resizing with PyTorch's warning, its errors."""
import pytest

from both import lg, outcome, torch


def same(program):
    def as_text(M):
        return str(program(M)).replace('leafgrad', 'torch')
    ours, theirs = outcome(as_text, lg), outcome(as_text, torch)
    assert ours == theirs, f'\nleafgrad: {ours}\ntorch:    {theirs}'


def _a(M):
    return M.ones(2, 3) * 1.5


def _b(M):
    return M.arange(6.).reshape(3, 2)


CASES = {
    'matmul': lambda M: M.matmul(_a(M), _b(M), out=M.empty(2, 2)),
    'matmul vector': lambda M: M.matmul(M.ones(3), M.ones(3), out=M.empty(())),
    'matmul batched': lambda M: M.matmul(M.ones(4, 2, 3), _b(M), out=M.empty(4, 2, 2)),
    'matmul resized': lambda M: M.matmul(_a(M), _b(M), out=M.empty(3)),
    'matmul into empty': lambda M: M.matmul(_a(M), _b(M), out=M.empty(0)),
    'matmul other dtype': lambda M: M.matmul(_a(M), _b(M), out=M.empty(2, 2, dtype=M.float64)),
    'matmul long out': lambda M: M.matmul(_a(M), _b(M), out=M.empty(2, 2, dtype=M.int64)),
    'matmul requires grad': lambda M: M.matmul(_a(M).requires_grad_(), _b(M), out=M.empty(2, 2)),
    'matmul out not a tensor': lambda M: M.matmul(_a(M), _b(M), out=3),
    'matmul vectors other dtype': lambda M: M.matmul(M.ones(3), M.ones(3), out=M.empty((), dtype=M.float64)),
    'matmul operand not a tensor': lambda M: M.matmul(_a(M), 3),
    'matmul input not a tensor': lambda M: M.matmul(3, 'a'),
    # linalg.matmul is PyTorch's linalg_matmul: its own name in its TypeErrors (matmul's in the others)
    'linalg.matmul': lambda M: M.linalg.matmul(_a(M), _b(M), out=M.empty(2, 2)),
    'linalg.matmul other dtype': lambda M: M.linalg.matmul(_a(M), _b(M), out=M.empty(2, 2, dtype=M.float64)),
    'linalg.matmul long out': lambda M: M.linalg.matmul(_a(M), _b(M), out=M.empty(0, dtype=M.int64)),
    'linalg.matmul requires grad': lambda M: M.linalg.matmul(_a(M).requires_grad_(), _b(M), out=M.empty(2, 2)),
    'linalg.matmul out requires grad': lambda M: M.linalg.matmul(_a(M), _b(M), out=M.empty(2, 2, requires_grad=True)),
    'linalg.matmul vectors other dtype': lambda M: M.linalg.matmul(M.ones(3), M.ones(3), out=M.empty(0, dtype=M.int64)),
    'linalg.matmul out not a tensor': lambda M: M.linalg.matmul(_a(M), _b(M), out=[M.empty(0)]),
    'linalg.matmul operand not a tensor': lambda M: M.linalg.matmul(_a(M), 3),
    'linalg.matmul name': lambda M: M.linalg.matmul.__name__,
    'dot': lambda M: M.dot(M.ones(3), M.ones(3), out=M.empty(())),
    'dot other dtype': lambda M: M.dot(M.ones(3), M.ones(3), out=M.empty((), dtype=M.float64)),
    'dot requires grad': lambda M: M.dot(M.ones(3, requires_grad=True), M.ones(3), out=M.empty(())),
    'mul': lambda M: M.mul(_a(M), _a(M), out=M.empty(2, 3)),
    'mul scalar into float64': lambda M: M.mul(_a(M), 2, out=M.empty(2, 3, dtype=M.float64)),
    'mul int into float': lambda M: M.mul(M.ones(2, dtype=M.int64), 2, out=M.empty(2)),
    'mul float into long': lambda M: M.mul(_a(M), 2, out=M.empty(2, 3, dtype=M.int64)),
    'mul broadcast resized': lambda M: M.mul(_a(M), M.ones(3), out=M.empty(5)),
    'mul requires grad': lambda M: M.mul(_a(M), _b(M).t().clone().requires_grad_(), out=M.empty(2, 3)),
    'mul under no_grad': lambda M: M.no_grad()(lambda: M.mul(_a(M).requires_grad_(), 2, out=M.empty(2, 3)))(),
    'multiply': lambda M: M.multiply(_a(M), 3, out=M.empty(2, 3)),
    'rand': lambda M: (M.manual_seed(0), M.rand(2, 2, out=M.zeros(2, 2)))[1],
    'rand resized silently': lambda M: (M.manual_seed(0), M.rand(3, out=M.zeros(2, 2)))[1],
    'rand float64 out': lambda M: (M.manual_seed(0), M.rand(2, out=M.zeros(2, dtype=M.float64)))[1],
    'rand long out': lambda M: M.rand(2, out=M.zeros(2, dtype=M.int64)),
    'rand dtype mismatch': lambda M: M.rand(2, out=M.zeros(2), dtype=M.float64),
    'rand out requires grad': lambda M: M.rand(2, out=M.zeros(2, requires_grad=True)),
    'randn': lambda M: (M.manual_seed(0), M.randn(2, 3, out=M.zeros(2, 3)))[1],
}


@pytest.mark.parametrize('name', CASES)
def test_out_as_torch(name):
    def program(M):
        r = CASES[name](M)
        return (repr(r), r._version, r.requires_grad) if isinstance(r, M.Tensor) else r
    same(program)


def test_out_is_the_tensor_given_and_its_views_see_the_result():
    def program(M):
        out = M.zeros(2, 2)
        row = out[1]
        r = M.matmul(_a(M), _b(M), out=out)
        return r is out, repr(row), out._version
    same(program)


@pytest.mark.parametrize('call', ['M.matmul(a, a, True)', 'M.matmul(a, a, _requires_grad=True)'])
def test_matmul_takes_no_third_argument(call):
    """matmul's private flag (a batch of one squeezed away) was a third parameter anyone could pass
    (the method refuses it too, in Python's words, which count self)."""
    same(lambda M: eval(call, {'M': M, 'a': M.ones(2, 2)}))
    with pytest.raises(TypeError):
        lg.ones(2, 2).matmul(lg.ones(2, 2), True)
