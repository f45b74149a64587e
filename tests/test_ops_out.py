"""out= of the declared ops, against torch: the result is written into ``out`` (and ``out`` is
returned), ``out`` of another shape is resized with PyTorch's warning (silently when it held
no elements), an ``out`` that needs grad or an input that does is refused, ``out``'s dtype
follows PyTorch's rules, methods take no out=, and functions PyTorch gives no out= refuse it."""
import warnings

import numpy as np
import pytest

from oracle import lg, raises_like, same_message, torch

A = np.array([[0.5, -1.25, 2.0], [3.0, 0.75, -0.5]], dtype=np.float32)
B = np.array([[1.5, 2.0, -0.25], [0.5, 4.0, 1.0]], dtype=np.float32)
P = np.abs(A) + 0.5  # positive, for log and sqrt
H = A / 4  # in (-1, 1), for asin, atanh, erfinv


def _args(T, spec):
    made = {'a': lambda: T.tensor(A), 'b': lambda: T.tensor(B), 'p': lambda: T.tensor(P),
            'i': lambda: T.tensor(A.astype(np.int64)), 'm': lambda: T.tensor(A > 0),
            'h': lambda: T.tensor(H), 'q': lambda: T.tensor(P + 1)}
    return [made[s]() if isinstance(s, str) and s in made else s for s in spec]


# name: (positional arguments, keyword arguments); 'a', 'b', 'p', 'h', 'q' float32 tensors, 'i' int64,
# 'm' bool
CASES = {
    'add': (['a', 'b'], {}), 'add alpha': (['a', 'b'], {'alpha': 2}), 'add scalar': (['a', 0.5], {}),
    'sub': (['a', 'b'], {}), 'subtract': (['a', 1.5], {}), 'sub alpha': (['a', 'b'], {'alpha': -3}),
    'mul': (['a', 'b'], {}), 'multiply': (['a', 2.0], {}),
    'div': (['a', 'b'], {}), 'divide': (['a', 4.0], {}), 'true_divide': (['i', 'i'], {}),
    'div floor': (['a', 'b'], {'rounding_mode': 'floor'}),
    'reciprocal': (['b'], {}), 'pow': (['p', 'b'], {}), 'pow scalar': (['a', 2], {}),
    'pow number base': ([2.0, 'a'], {}), 'square': (['a'], {}),
    'neg': (['a'], {}), 'negative': (['a'], {}), 'exp': (['a'], {}), 'log': (['p'], {}), 'sqrt': (['p'], {}),
    'abs': (['a'], {}), 'absolute': (['a'], {}), 'sign': (['a'], {}), 'tanh': (['a'], {}),
    'sigmoid': (['a'], {}), 'sin': (['a'], {}), 'cos': (['a'], {}), 'exp int': (['i'], {}),
    'where': (['m', 'a', 'b'], {}),
    'eq': (['a', 'b'], {}), 'ne': (['a', 0.5], {}), 'lt': (['a', 'b'], {}), 'le': (['a', 'b'], {}),
    'gt': (['a', 'b'], {}), 'ge': (['a', 'b'], {}), 'less': (['a', 'b'], {}), 'less_equal': (['a', 'b'], {}),
    'greater': (['a', 'b'], {}), 'greater_equal': (['a', 'b'], {}), 'not_equal': (['a', 'b'], {}),
    # the unary family
    'rsqrt': (['p'], {}), 'expm1': (['a'], {}), 'log1p': (['p'], {}), 'log2': (['p'], {}), 'log10': (['p'], {}),
    'tan': (['a'], {}), 'asin': (['h'], {}), 'arcsin': (['h'], {}), 'acos': (['h'], {}), 'arccos': (['h'], {}),
    'atan': (['a'], {}), 'arctan': (['a'], {}), 'sinh': (['a'], {}), 'cosh': (['a'], {}), 'asinh': (['a'], {}),
    'arcsinh': (['a'], {}), 'acosh': (['q'], {}), 'arccosh': (['q'], {}), 'atanh': (['h'], {}),
    'arctanh': (['h'], {}), 'erf': (['a'], {}), 'erfc': (['a'], {}), 'erfinv': (['h'], {}), 'log1p int': (['m'], {}),
    'atan2': (['a', 'b'], {}), 'arctan2': (['a', 'b'], {}), 'clamp': (['a', -0.5, 1.0], {}),
    'clamp tensors': (['a', 'b', 'p'], {}), 'clip': (['a'], {'min': 0.0}), 'clamp_min': (['a', 0.1], {}),
    'clamp_max': (['a', 'b'], {}), 'maximum': (['a', 'b'], {}), 'minimum': (['a', 'b'], {}),
    'lerp': (['a', 'b', 0.25], {}), 'lerp tensor weight': (['a', 'b', 'h'], {}), 'nan_to_num': (['a'], {'nan': 1.0}),
    # the rounding family
    'floor': (['a'], {}), 'ceil': (['a'], {}), 'trunc': (['a'], {}), 'fix': (['a'], {}), 'round': (['a'], {}),
    'round decimals': (['a'], {'decimals': 1}), 'frac': (['a'], {}), 'floor_divide': (['a', 'b'], {}),
    'fmod': (['a', 'b'], {}), 'fmod scalar': (['a', 0.5], {}), 'remainder': (['a', 'b'], {}),
    'remainder scalar': (['a', 0.5], {}),
    # the pointwise family
    'addcmul': (['a', 'b', 'p'], {'value': 0.5}), 'addcdiv': (['a', 'b', 'p'], {}), 'xlogy': (['p', 'q'], {}),
    'xlogy number': (['a', 2.0], {}), 'logaddexp': (['a', 'b'], {}), 'hypot': (['a', 'b'], {}),
    'copysign': (['a', 'b'], {}), 'fmax': (['a', 'b'], {}), 'fmin': (['a', 'b'], {}),
    'exp2': (['a'], {}), 'logit': (['h'], {}), 'logit eps': (['a'], {'eps': 0.1}),
    'sinc': (['a'], {}), 'sgn': (['a'], {}), 'deg2rad': (['a'], {}), 'rad2deg': (['a'], {}),
    # the logical family (bool or integer results)
    'logical_and': (['a', 'b'], {}), 'logical_or': (['m', 'a'], {}), 'logical_xor': (['a', 'm'], {}),
    'logical_not': (['a'], {}), 'bitwise_and': (['i', 'i'], {}), 'bitwise_or': (['i', 3], {}),
    'bitwise_xor': (['m', 'm'], {}),
}
FLOAT_RESULT = {k for k in CASES if k.split()[0] not in ('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'less', 'less_equal',
                                                          'greater', 'greater_equal', 'not_equal')
                and not k.startswith(('logical_', 'bitwise_'))}


def _run(T, case, out):
    args, kwargs = CASES[case]
    return getattr(T, case.split()[0])(*_args(T, args), out=out, **kwargs)


def _same(lo, to):
    assert tuple(lo.shape) == tuple(to.shape)
    assert str(lo.dtype).split('.')[-1] == str(to.dtype).split('.')[-1]
    np.testing.assert_allclose(np.asarray(lo._data, dtype=np.float64), to.numpy().astype(np.float64),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('case', CASES)
def test_out_is_written_and_returned(case):
    lo, to = lg.zeros(2, 3), torch.zeros(2, 3)
    lr, tr = _run(lg, case, lo), _run(torch, case, to)
    assert lr is lo and tr is to
    _same(lo, to)
    assert lo._version == to._version


@pytest.mark.parametrize('case', CASES)
def test_out_of_another_dtype(case):
    """float64 and float16 take a float result (cast), except for the ops that keep their dtype
    (neg, abs, sign) and where; an integer out refuses a float result with PyTorch's error; a
    bool result goes into any out."""
    for ld, td in ((lg.float64, torch.float64), (lg.float16, torch.float16)):
        lo, to = lg.zeros(2, 3, dtype=ld), torch.zeros(2, 3, dtype=td)
        try:
            _run(torch, case, to)
        except RuntimeError:
            lm, tm = raises_like(lambda: _run(lg, case, lo), lambda: _run(torch, case, to))
            assert same_message(lm, tm), (lm, tm)
            assert not lo._data.any()
        else:
            _run(lg, case, lo)
            _same(lo, to)
    lo, to = lg.zeros(2, 3, dtype=lg.int64), torch.zeros(2, 3, dtype=torch.int64)
    if case in FLOAT_RESULT:
        lm, tm = raises_like(lambda: _run(lg, case, lo), lambda: _run(torch, case, to))
        assert same_message(lm, tm), (lm, tm)
        assert not lo._data.any()
    else:
        _run(lg, case, lo), _run(torch, case, to)
        _same(lo, to)


@pytest.mark.parametrize('case', CASES)
def test_out_of_another_shape_is_resized(case):
    for shape, warns in (((0,), False), ((5,), True), ((3, 2), True)):
        lo, to = lg.zeros(*shape), torch.zeros(*shape)
        with warnings.catch_warnings(record=True) as lw:
            warnings.simplefilter('always', UserWarning)
            _run(lg, case, lo)
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter('always', UserWarning)
            _run(torch, case, to)
        lw = [w for w in lw if w.category is UserWarning]
        tw = [w for w in tw if w.category is UserWarning]
        _same(lo, to)
        # (the bitwise ops warn twice into an out of another dtype: PyTorch resizes a temporary too)
        assert len(lw) == len(tw) == (0 if not warns else 2 if case.startswith('bitwise_') else 1)
        if warns:
            assert lw[0].category is tw[0].category
            assert str(tw[0].message).startswith(str(lw[0].message))


@pytest.mark.parametrize('case', CASES)
def test_out_with_autograd_is_refused(case):
    args, kwargs = CASES[case]
    name = case.split()[0]
    # out requiring grad (no error for a comparison or a logical op: they are not differentiable; the
    # bitwise ops refuse it, as aten::bitwise_and)
    lo, to = lg.zeros(2, 3, requires_grad=True), torch.zeros(2, 3, requires_grad=True)
    if case in FLOAT_RESULT or name.startswith('bitwise_'):
        lm, tm = raises_like(lambda: _run(lg, case, lo), lambda: _run(torch, case, to))
        assert same_message(lm, tm), (lm, tm)
    else:
        _run(lg, case, lo), _run(torch, case, to)
        _same(lo.detach(), to.detach())
    # an input requiring grad
    if case in FLOAT_RESULT and 'i' not in args and 'm' not in args[:1] and case != 'floor_divide':
        def run(T, out):
            made = _args(T, args)
            for t in made:
                if isinstance(t, T.Tensor) and t.dtype == T.float32:
                    t.requires_grad_()
            return getattr(T, name)(*made, out=out, **kwargs)
        lo, to = lg.zeros(2, 3), torch.zeros(2, 3)
        lm, tm = raises_like(lambda: run(lg, lo), lambda: run(torch, to))
        assert same_message(lm, tm), (lm, tm)
        assert not lo._data.any()
        with lg.no_grad(), torch.no_grad():  # without grad mode it is allowed
            run(lg, lo), run(torch, to)
        _same(lo, to)


@pytest.mark.parametrize('case', ['add', 'exp', 'where', 'eq'])
def test_out_must_be_a_tensor(case):
    raises_like(lambda: _run(lg, case, np.zeros((2, 3))), lambda: _run(torch, case, np.zeros((2, 3))))


def test_out_overlapping_itself_is_refused():
    lm, tm = raises_like(lambda: lg.exp(lg.ones(3), out=lg.ones(3).expand(2, 3)),
                         lambda: torch.exp(torch.ones(3), out=torch.ones(3).expand(2, 3)))
    assert same_message(lm, tm)


def test_out_aliasing_an_input():
    la, ta = lg.tensor(A), torch.tensor(A)
    lg.mul(la, 2.0, out=la), torch.mul(ta, 2.0, out=ta)
    _same(la, ta)
    assert la._version == ta._version


def test_out_into_a_view_writes_its_base():
    lb, tb = lg.zeros(2, 3), torch.zeros(2, 3)
    lg.exp(lg.tensor(A[0]), out=lb[1]), torch.exp(torch.tensor(A[0]), out=tb[1])
    _same(lb, tb)


@pytest.mark.parametrize('name, args', [('exp', ['a']), ('add', ['a', 'b']), ('mul', ['a', 'b']),
                                        ('eq', ['a', 'b']), ('neg', ['a'])])
def test_methods_take_no_out(name, args):
    def run(T):
        made = _args(T, args)
        return getattr(made[0], name)(*made[1:], out=T.zeros(2, 3))
    raises_like(lambda: run(lg), lambda: run(torch))


@pytest.mark.parametrize('name', ['relu', 'rsub', 'positive', 'isnan', 'isinf', 'isfinite', 'isreal', 'isclose',
                                  'allclose', 'equal'])
def test_functions_without_out_refuse_it(name):
    args = ['a', 'b'] if name in ('rsub', 'isclose', 'allclose', 'equal') else ['a']
    raises_like(lambda: getattr(lg, name)(*_args(lg, args), out=lg.zeros(2, 3)),
                lambda: getattr(torch, name)(*_args(torch, args), out=torch.zeros(2, 3)))


def test_floor_divide_out_with_an_input_requiring_grad():
    """floor_divide has no derivative: PyTorch writes out= even when an input requires grad."""
    lo, to = lg.zeros(2, 3), torch.zeros(2, 3)
    lg.floor_divide(lg.tensor(A, requires_grad=True), lg.tensor(B), out=lo)
    torch.floor_divide(torch.tensor(A, requires_grad=True), torch.tensor(B), out=to)
    _same(lo.detach(), to.detach())


def test_float_power_out_is_float64_only():
    lo, to = lg.zeros(2, 3, dtype=lg.float64), torch.zeros(2, 3, dtype=torch.float64)
    assert lg.float_power(lg.tensor(P), lg.tensor(B), out=lo) is lo
    torch.float_power(torch.tensor(P), torch.tensor(B), out=to)
    _same(lo, to)
    for ld, td in ((lg.float32, torch.float32), (lg.int64, torch.int64)):
        lm, tm = raises_like(lambda: lg.float_power(lg.tensor(P), 2, out=lg.zeros(2, 3, dtype=ld)),
                             lambda: torch.float_power(torch.tensor(P), 2, out=torch.zeros(2, 3, dtype=td)))
        assert same_message(lm, tm), (lm, tm)
    lm, tm = raises_like(
        lambda: lg.float_power(lg.tensor(P), 2, out=lg.zeros(2, 3, dtype=lg.float64, requires_grad=True)),
        lambda: torch.float_power(torch.tensor(P), 2, out=torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)))
    assert same_message(lm, tm), (lm, tm)


@pytest.mark.parametrize('name, args', [('bitwise_not', ['i']), ('isposinf', ['a']), ('isneginf', ['a'])])
def test_out_of_the_result_dtype_only(name, args):
    """bitwise_not writes into an out of its input's dtype only, isposinf and isneginf into a bool one."""
    for ld, td in ((lg.int64, torch.int64), (lg.bool, torch.bool), (lg.float32, torch.float32)):
        lo, to = lg.zeros(2, 3, dtype=ld), torch.zeros(2, 3, dtype=td)
        try:
            getattr(torch, name)(*_args(torch, args), out=to)
        except RuntimeError:
            lm, tm = raises_like(lambda: getattr(lg, name)(*_args(lg, args), out=lo),
                                 lambda: getattr(torch, name)(*_args(torch, args), out=to))
            assert same_message(lm, tm), (lm, tm)
        else:
            assert getattr(lg, name)(*_args(lg, args), out=lo) is lo
            _same(lo, to)
