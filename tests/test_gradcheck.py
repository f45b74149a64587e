"""gradcheck / gradgradcheck against torch's: same verdicts, same errors and reports."""
import importlib
import warnings

import numpy as np
import pytest

from oracle import torch
import leafgrad as lg
from leafgrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck

TGradcheckError = importlib.import_module('torch.autograd.gradcheck').GradcheckError


def _wrong_mul(mod):
    class WrongMul(mod.autograd.Function):
        """a * b whose gradient for a is twice too large."""
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b * 2, g * a
    return WrongMul


def _inputs(mod, a, b, dtype=None):
    dtype = dtype or mod.float64
    return (mod.tensor(a, dtype=dtype, requires_grad=True), mod.tensor(b, dtype=dtype, requires_grad=True))


def _report(fn_lg, fn_t):
    with pytest.raises(GradcheckError) as e1:
        fn_lg()
    with pytest.raises(TGradcheckError) as e2:
        fn_t()
    return str(e1.value), str(e2.value)


@pytest.mark.parametrize('fn', [
    lambda m, x, y: x * y + x.exp(),
    lambda m, x, y: (x / y).tanh(),
    lambda m, x, y: (x.sigmoid() * y).sum(),
    lambda m, x, y: (x ** 2 - y.sin()).mean(),
    lambda m, x, y: (x.view(2, 1).mm(y.view(1, 2)), x.cos()),
])
def test_passes_on_correct_gradients(fn):
    r = np.random.default_rng(0)
    a, b = r.uniform(0.5, 1.5, 2), r.uniform(0.5, 1.5, 2)
    assert gradcheck(lambda x, y: fn(lg, x, y), _inputs(lg, a, b))
    assert torch.autograd.gradcheck(lambda x, y: fn(torch, x, y), _inputs(torch, a, b))
    assert gradgradcheck(lambda x, y: fn(lg, x, y), _inputs(lg, a, b))


def test_report_identical_to_torch():
    m1, m2 = _report(lambda: gradcheck(_wrong_mul(lg).apply, _inputs(lg, [1., 2.], [3., 4.])),
                     lambda: torch.autograd.gradcheck(_wrong_mul(torch).apply, _inputs(torch, [1., 2.], [3., 4.])))
    assert m1.startswith('Jacobian mismatch for output 0 with respect to input 0,\nnumerical:')
    assert m1.replace('leafgrad', 'torch') == m2


def test_report_names_output_and_input_index():
    def lg_fn(x, y):
        return x * y, _wrong_mul(lg).apply(y, x)

    def t_fn(x, y):
        return x * y, _wrong_mul(torch).apply(y, x)
    m1, m2 = _report(lambda: gradcheck(lg_fn, _inputs(lg, [1., 2.], [3., 4.])),
                     lambda: torch.autograd.gradcheck(t_fn, _inputs(torch, [1., 2.], [3., 4.])))
    assert m1.startswith('Jacobian mismatch for output 1 with respect to input 1,')
    assert m1.replace('leafgrad', 'torch') == m2


def test_float32_numerical_jacobian_same_numbers_as_torch():
    a = np.array([1.0, 2.0], dtype=np.float32)
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter('always')
        m1 = gradcheck(lambda x: x * 2, (lg.tensor(a, requires_grad=True),), raise_exception=False)
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter('always')
        m2 = torch.autograd.gradcheck(lambda x: x * 2, (torch.tensor(a, requires_grad=True),), raise_exception=False)
    assert m1 is m2 is False
    assert [str(x.message) for x in w1] == [str(x.message) for x in w2]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        r1, r2 = _report(lambda: gradcheck(lambda x: x * 2, (lg.tensor(a, requires_grad=True),)),
                         lambda: torch.autograd.gradcheck(lambda x: x * 2, (torch.tensor(a, requires_grad=True),)))
    assert r1.replace('leafgrad', 'torch') == r2


def test_raise_exception_false_returns_false():
    assert gradcheck(_wrong_mul(lg).apply, _inputs(lg, [1.], [2.]), raise_exception=False) is False


def test_no_input_requires_grad_value_error():
    with pytest.raises(ValueError) as e1:
        gradcheck(lambda x: x * 2, (lg.ones(2, dtype=lg.float64),))
    with pytest.raises(ValueError) as e2:
        torch.autograd.gradcheck(lambda x: x * 2, (torch.ones(2, dtype=torch.float64),))
    assert str(e1.value) == str(e2.value)


def test_gradcheck_error_is_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)


def test_tolerances_are_used():
    class Off(Function):
        """Gradient off by 1e-4 relative."""
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3.0003
    x = lg.tensor([1.0, 2.0], dtype=lg.float64, requires_grad=True)
    assert gradcheck(Off.apply, (x,))                      # within rtol=1e-3
    assert not gradcheck(Off.apply, (x,), rtol=1e-6, atol=1e-8, raise_exception=False)


def test_non_tensor_and_non_differentiable_inputs():
    x = lg.tensor([0.3, 0.7], dtype=lg.float64, requires_grad=True)
    c = lg.tensor([2.0, 3.0], dtype=lg.float64)
    assert gradcheck(lambda x, c, k: (x * c) ** k, (x, c, 3))


def test_gradgradcheck_catches_non_differentiable_backward():
    def make(mod):
        class Sq(mod.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 2

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * 2 * a.detach()  # the detach breaks the second derivative
        return Sq
    x = lg.tensor([1.0, 2.0], dtype=lg.float64, requires_grad=True)
    assert gradcheck(make(lg).apply, (x,))
    with pytest.raises(GradcheckError) as e:
        gradgradcheck(make(lg).apply, (x,))
    with pytest.raises(TGradcheckError):
        torch.autograd.gradgradcheck(make(torch).apply, (torch.tensor([1.0, 2.0], dtype=torch.float64,
                                                                      requires_grad=True),))
    msg = str(e.value)
    assert msg.startswith('Jacobian mismatch for output 0 with respect to input 0,\nnumerical:')
    assert 'analytical:tensor([[0., 0.],\n        [0., 0.]], dtype=leafgrad.float64)' in msg


def test_gradgradcheck_with_given_grad_outputs():
    x = lg.tensor([0.5, -0.4], dtype=lg.float64, requires_grad=True)
    go = lg.tensor([1.0, 2.0], dtype=lg.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t.tanh() * t, (x,), (go,))


def test_autograd_gradcheck_is_the_function_after_submodule_import():
    import leafgrad.autograd.gradcheck  # noqa: F401  (sets the package attribute in plain Python)
    assert callable(lg.autograd.gradcheck)
    assert lg.autograd.gradcheck is gradcheck


def test_non_contiguous_and_zero_dim_inputs():
    base = np.random.default_rng(4).uniform(0.5, 1.5, (3, 4))
    lt = lg.tensor(base).t().detach().requires_grad_()
    tt = torch.tensor(base).t().detach().requires_grad_()
    assert not lt.is_contiguous() and not tt.is_contiguous()
    assert gradcheck(lambda a: (a.exp() * a).sum(0), (lt,))
    assert torch.autograd.gradcheck(lambda a: (a.exp() * a).sum(0), (tt,))
    np.testing.assert_array_equal(np.asarray(lt.detach()._data), base.T)  # perturbations undone
    s = lg.tensor(0.7, dtype=lg.float64, requires_grad=True)
    assert gradcheck(lambda a: a.exp() * a, (s,))
    m1, m2 = _report(lambda: gradcheck(lambda a: _wrong_mul(lg).apply(a, a * 2), (lt,)),
                     lambda: torch.autograd.gradcheck(lambda a: _wrong_mul(torch).apply(a, a * 2), (tt,)))
    assert m1.replace('leafgrad', 'torch') == m2


# ---- fast mode: v^T J u for random unit vectors, drawn as torch draws them -----------------------

def _scaled_sin(mod, factor):
    class ScaledSin(mod.autograd.Function):
        """sin whose derivative is ``factor`` times too large (1: right)."""
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * factor
    return ScaledSin


FAST_CASES = {
    'right': lambda m, x, y: (x * y + x.exp(), (x / y).tanh()),
    'sum and mean': lambda m, x, y: ((x.sigmoid() * y).sum(), (x ** 2 - y.sin()).mean()),
    'matmul': lambda m, x, y: x.view(2, 1).mm(y.view(1, 2)),
    'sin 1.01x': lambda m, x, y: _scaled_sin(m, 1.01).apply(x) * y,
    'sin 2x': lambda m, x, y: _scaled_sin(m, 2.0).apply(x) + y,
    'sin 1.0001x (within rtol)': lambda m, x, y: _scaled_sin(m, 1.0001).apply(x) * y,
    'wrong mul': lambda m, x, y: _wrong_mul(m).apply(x, y),
    'second output wrong': lambda m, x, y: (x * y, _scaled_sin(m, 1.5).apply(y)),
}


def _fast_verdict(mod, name, error):
    r = np.random.default_rng(0)
    a, b = r.uniform(0.5, 1.5, 2), r.uniform(0.5, 1.5, 2)
    try:
        return mod.autograd.gradcheck(lambda x, y: FAST_CASES[name](mod, x, y), _inputs(mod, a, b), fast_mode=True)
    except error as e:
        return str(e).split('\n\n')[0]


@pytest.mark.parametrize('name', list(FAST_CASES))
def test_fast_mode_verdict_and_numbers_as_torch(name):
    """The same verdict and, on failure, the same v^T J u numbers as torch (same vectors)."""
    ours, theirs = _fast_verdict(lg, name, GradcheckError), _fast_verdict(torch, name, TGradcheckError)
    if theirs is True:
        assert ours is True
        return
    head, t_head = ours.split('numerical:'), theirs.split('numerical:')
    assert head[0] == t_head[0]
    (n, a), (tn, ta) = (h.split('\nanalytical:') for h in (head[1], t_head[1]))
    assert float(n) == pytest.approx(float(tn), rel=1e-9) and float(a) == pytest.approx(float(ta), rel=1e-9)


def test_fast_mode_catches_what_slow_mode_catches_and_gradgradcheck_takes_it():
    x = lg.tensor(np.random.default_rng(1).standard_normal((4, 5)), requires_grad=True)
    for factor, ok in ((1.0, True), (1.05, False)):
        fn = _scaled_sin(lg, factor).apply
        assert gradcheck(fn, (x,), fast_mode=True, raise_exception=False) is ok
        assert gradcheck(fn, (x,), fast_mode=False, raise_exception=False) is ok
    assert gradgradcheck(lambda t: (t.sin() * t).sum(1), (x,), fast_mode=True)


def test_fast_mode_leaves_the_default_stream_alone():
    lg.manual_seed(3)
    expected = lg.rand(3)
    lg.manual_seed(3)
    gradcheck(lambda t: t.exp(), (lg.tensor([0.5, 1.0], dtype=lg.float64, requires_grad=True),), fast_mode=True)
    assert lg.rand(3).tolist() == expected.tolist()


def test_gradgradcheck_passes_its_mode_flags_on():
    """check_fwd_over_rev=True runs forward mode through the vjp (as PyTorch): a backward built of
    a Function without a jvp passes the reverse-over-reverse check and fails the forward one;
    check_batched_grad runs the batched check on the vjp (vmap over the second backward)."""
    class Cube(lg.autograd.Function):  # backward: 3 x^2 g, made of a Function without jvp
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return Square.apply(x) * 3 * g

    class Square(lg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = lg.tensor([0.5, -1.5], dtype=lg.float64, requires_grad=True)
    assert lg.autograd.gradgradcheck(Cube.apply, (x,))
    with pytest.raises(Exception):
        lg.autograd.gradgradcheck(Cube.apply, (x,), check_fwd_over_rev=True)
    assert lg.autograd.gradgradcheck(Cube.apply, (x,), check_batched_grad=True)
