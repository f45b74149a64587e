"""gcd, lcm, heaviside, signbit, frexp, ldexp, logaddexp2 against torch: values, dtypes, node
names, first and second derivatives, float64 gradcheck, errors."""
import numpy as np
import pytest

import leafgrad as lg
from optable import check_case, needs_torch, torch
from oracle import raises_like, same_message

R = np.random.default_rng(7)
SIGNED = np.array([1.5, -2., 0., -0., np.inf, -np.nan, 3e-310])


def row(name, fn, arrays, grad=True, fd=True):
    return pytest.param(fn, arrays, grad, fd, id=name)


ROWS = [
    row('gcd', lambda T, a, b: T.gcd(a, b), [np.array([12, -18, 0, 7]), np.array([8, 27, 0, -21])], grad=False),
    row('gcd_broadcast_int32', lambda T, a, b: a.int().gcd(b), [np.array([[12], [9]]), np.array([8, 6])],
        grad=False),
    row('lcm', lambda T, a, b: T.lcm(a, b), [np.array([4, -6, 0, 5]), np.array([6, 4, 3, -5])], grad=False),
    row('heaviside', lambda T, x, v: T.heaviside(x, v), [np.array([-1., 0., 2.]), np.array(0.5)], grad=False),
    row('heaviside_int', lambda T, x, v: x.heaviside(v), [np.array([1, 0, -2]), np.array([7, 8, 9])], grad=False),
    row('signbit', lambda T, x: T.signbit(x), [SIGNED], grad=False),
    row('signbit_int', lambda T, x: x.signbit(), [np.array([1, -1, 0])], grad=False),
    row('frexp', lambda T, x: tuple(T.frexp(x)), [R.standard_normal(5) * 10]),
    row('frexp_special', lambda T, x: tuple(x.frexp()), [SIGNED[:4]], fd=False),
    # (an integer exponent below 0: PyTorch's derivative takes 2**e in integers, 0)
    row('ldexp', lambda T, x, e: T.ldexp(x, e), [R.standard_normal(4), np.array([1, 2, -3, 0])], fd=False),
    row('ldexp_nonnegative', lambda T, x, e: T.ldexp(x, e), [R.standard_normal(4), np.array([1, 2, 3, 0])]),
    row('ldexp_float_exponent', lambda T, x, e: T.ldexp(x, e), [R.standard_normal(4), R.standard_normal(4)]),
    row('ldexp_int_broadcast', lambda T, x, e: x.ldexp(e), [np.array([[1], [2]]), np.array([1, 3])], grad=False),
    row('logaddexp2', lambda T, a, b: T.logaddexp2(a, b), [R.standard_normal(4), R.standard_normal((2, 4))]),
    row('logaddexp2_method', lambda T, a, b: a.logaddexp2(b), [R.standard_normal(3), R.standard_normal(3)]),
]


@needs_torch
@pytest.mark.parametrize('fn,arrays,grad,fd', ROWS)
def test_against_torch(fn, arrays, grad, fd):
    with np.errstate(all='ignore'):
        check_case(fn, arrays, grad=grad, fd=fd)


ERRORS = [
    ('gcd_float', lambda T: T.gcd(T.tensor([12.]), T.tensor([8.]))),
    ('gcd_bool', lambda T: T.gcd(T.tensor([True]), T.tensor([True]))),
    ('gcd_shapes', lambda T: T.gcd(T.tensor([1, 2]), T.tensor([1, 2, 3]))),
    ('lcm_float', lambda T: T.lcm(T.tensor([1.]), T.tensor([2]))),
    ('heaviside_dtypes', lambda T: T.heaviside(T.tensor([1.]), T.tensor(1))),
    ('heaviside_backward', lambda T: T.heaviside(T.ones(2, requires_grad=True), T.tensor(0.)).sum().backward()),
    ('frexp_int', lambda T: T.frexp(T.tensor([1, 2]))),
    ('logaddexp2_int', lambda T: T.logaddexp2(T.tensor([1]), T.tensor([2]))),
]


@needs_torch
@pytest.mark.parametrize('fn', [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn):
    lg_msg, t_msg = raises_like(lambda: fn(lg), lambda: fn(torch))
    assert same_message(lg_msg, t_msg), (lg_msg, t_msg)


@needs_torch
def test_frexp_is_a_return_type_like_torch():
    x = np.array([1.5, -8.])
    assert repr(lg.frexp(lg.tensor(x))).replace('leafgrad', 'torch') == repr(torch.frexp(torch.tensor(x)))


@needs_torch
@pytest.mark.parametrize('name,make,attrs', [
    ('frexp', lambda T, x: T.frexp(x)[0], ['_saved_exponent']),
    ('logaddexp2', lambda T, x: T.logaddexp2(x, x * 2), ['_saved_other', '_saved_self']),
])
def test_saved_tensors_as_torch(name, make, attrs):
    """grad_fn._saved_<name>: what PyTorch's node exposes, the same values."""
    x = np.array([1.5, -8., 0.25])
    lo, to = make(lg, lg.tensor(x, requires_grad=True)), make(torch, torch.tensor(x, requires_grad=True))
    assert [a for a in dir(to.grad_fn) if a.startswith('_saved_')] == attrs
    for a in attrs:
        np.testing.assert_array_equal(getattr(lo.grad_fn, a).detach().numpy(), getattr(to.grad_fn, a).detach().numpy())


@pytest.mark.parametrize('name', ['gcd', 'lcm', 'heaviside', 'signbit', 'frexp', 'ldexp', 'logaddexp2'])
def test_functions_say_their_signature(name):
    """Each function's docstring opens with PyTorch's signature, out= included."""
    first = getattr(lg, name).__doc__.splitlines()[0]
    assert first.startswith(f'{name}(input, ') and '*, out=None)' in first


@needs_torch
@pytest.mark.parametrize('call', ['x.gcd(x, out=None)', 'x.lcm(x, out=None)', 'x.ldexp(x, out=None)',
                                  'x.logaddexp2(x, out=None)', 'x.heaviside(x, out=None)'])
def test_methods_take_no_out(call):
    """PyTorch's methods take no out=: Python's TypeError, its message."""
    msgs = []
    for T in (lg, torch):
        with pytest.raises(TypeError) as info:
            eval(call, {'x': T.tensor([2, 3])})
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def _inplace_run(T, code):
    """values, dtype, version, node name and the input's gradient of an in-place call, or its error."""
    try:
        x = T.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=T.float64, requires_grad=True)
        env = {'T': T, 'x': x, 'i': T.tensor([[4, 6], [9, 0]]), 'j': T.tensor([6, 4])}
        r = eval(code, env)
        got = [r.tolist(), str(r.dtype).split('.')[-1], r._version,
               type(r.grad_fn).__name__ if r.grad_fn is not None else None]
        if r.requires_grad:
            r.sum().backward()
            got.append(np.round(x.grad.numpy(), 12).tolist())
        return got
    except Exception as e:
        return type(e).__name__, str(e).replace('leafgrad', 'torch')


INPLACE = ['i.clone().gcd_(j)', 'T.gcd_(i.clone(), j)', 'i.clone().lcm_(j)', 'T.lcm_(i.clone(), j)',
           'i.clone().int().gcd_(j)', 'i.clone().gcd_(j.float())', 'i.clone().bool().gcd_(j)',
           'T.lcm_(i.clone().float(), j)', 'i.clone().gcd_(T.tensor([[1], [2]]))',
           '(x * 1).heaviside_(T.tensor(0.5, dtype=T.float64))', 'i.clone().heaviside_(j)',
           'x.detach().clone().heaviside_(T.tensor(0.5))',
           '(x * 1).ldexp_(j)', 'T.ldexp_(x * 1, j)', 'x.detach().float().ldexp_(j.double())', 'x.half().ldexp_(j)',
           'i.clone().ldexp_(j)', 'T.ldexp_(i.clone(), j)', 'x.ldexp_(j)', '(x * 1)[0].ldexp_(j)']


@needs_torch
@pytest.mark.parametrize('code', INPLACE)
def test_inplace_variants_as_torch(code):
    """Tensor.gcd_/lcm_/heaviside_/ldexp_ and leafgrad.gcd_/lcm_/ldexp_ as PyTorch's (they were
    missing): values written into self, its version bumped, the node (heaviside_'s NotImplemented
    names aten::heaviside_), gradients, and PyTorch's errors, a result self cannot hold refused
    before computing."""
    assert _inplace_run(lg, code) == _inplace_run(torch, code)


@needs_torch
def test_heaviside_inplace_backward_names_its_op():
    msgs = raises_like(lambda: lg.ones(2, requires_grad=True).mul(1).heaviside_(lg.tensor(0.5)).sum().backward(),
                       lambda: torch.ones(2, requires_grad=True).mul(1).heaviside_(torch.tensor(0.5)).sum().backward())
    assert same_message(*msgs)
