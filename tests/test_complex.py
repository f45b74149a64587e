"""Complex tensors against PyTorch: creation, printing, promotion, the parts and views,
arithmetic, gradients under PyTorch's convention (dL/dx + i dL/dy), gradcheck, errors."""
import warnings

import numpy as np
import pytest

from oracle import raises_like, same_message, torch

import leafgrad as lg
from leafgrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
B = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
R = RNG.standard_normal((3, 3))


def _text(t):
    return str(t).replace('leafgrad', 'torch')


# ---- dtypes, creation, printing, promotion --------------------------------------------------

@pytest.mark.parametrize('name', ['complex64', 'complex128', 'cfloat', 'cdouble'])
def test_dtype_attributes(name):
    d, td = getattr(lg, name), getattr(torch, name)
    assert repr(d).replace('leafgrad', 'torch') == repr(td)
    assert (d.is_complex, d.is_floating_point, d.is_signed, d.itemsize) == \
        (td.is_complex, td.is_floating_point, td.is_signed, td.itemsize)
    assert repr(d.to_real()).replace('leafgrad', 'torch') == repr(td.to_real())
    assert repr(lg.float64.to_complex()).replace('leafgrad', 'torch') == repr(torch.float64.to_complex())


PRINTED = [
    lambda T: T.tensor([1 + 2j, 3 - 1j]),
    lambda T: T.tensor(1 + 2j),
    lambda T: T.tensor([1.5 + 2j], dtype=T.cdouble),
    lambda T: T.tensor([[1e-5 + 2j, 3e6 - 1j], [0j, -0.5 - 0.25j]]),
    lambda T: T.tensor([]).to(T.cfloat),
    lambda T: T.zeros(2, 3, dtype=T.cdouble),
    lambda T: T.ones(2, dtype=T.cfloat, requires_grad=True),
    lambda T: T.tensor([1 + 2j], requires_grad=True) * 2,
    lambda T: T.arange(2000.).reshape(1000, 2).to(T.cfloat) * (1 - 0.5j),
    lambda T: T.tensor([float('nan') + 1j, float('inf') - 2j, 1.25 + 0j]),
    lambda T: T.tensor([1, 2]) * 1j,
]


@pytest.mark.parametrize('case', range(len(PRINTED)))
def test_printing(case):
    assert _text(PRINTED[case](lg)) == str(PRINTED[case](torch))


def test_item_list_numpy_and_type():
    z = lg.tensor([1 + 2j, 3 - 1j])
    assert z[0].item() == 1 + 2j and complex(z[1]) == 3 - 1j
    assert z.tolist() == [1 + 2j, 3 - 1j]
    assert z.numpy().dtype == np.complex64
    assert z.type() == 'leafgrad.ComplexFloatTensor' and z.is_complex() and not z.is_floating_point()
    assert lg.is_complex(z) and not lg.tensor([1.]).is_complex()
    for f in (int, float):
        msg, tmsg = raises_like(lambda: f(z[0]), lambda: f(torch.tensor([1 + 2j])[0]))
        assert same_message(msg, tmsg)


@pytest.mark.parametrize('dtype', ['cfloat', 'cdouble'])
@pytest.mark.parametrize('fn', ['randn', 'rand'])
@pytest.mark.parametrize('shape', [(3,), (5, 4), (40,)])
def test_random_complex_is_torchs_stream(dtype, fn, shape):
    torch.manual_seed(3)
    lg.manual_seed(3)
    t = getattr(torch, fn)(*shape, dtype=getattr(torch, dtype))
    out = getattr(lg, fn)(*shape, dtype=getattr(lg, dtype))
    assert str(out.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(out.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


PROMOTIONS = [
    lambda T: T.tensor([1., 2.]) * 1j,
    lambda T: T.tensor([1., 2.], dtype=T.float64) * 1j,
    lambda T: T.tensor([1, 2]) * 1j,
    lambda T: T.tensor([1, 2]) * T.tensor(1j),
    lambda T: T.tensor([1., 2.], dtype=T.float64) * T.tensor([1j]),
    lambda T: T.tensor([1j]) + T.tensor([1j], dtype=T.cdouble),
    lambda T: T.tensor([True]) + T.tensor([1j]),
    lambda T: T.tensor(2., dtype=T.float64) * T.tensor([1j]),
    lambda T: T.tensor([1, 2]).to(T.cfloat),
    lambda T: T.zeros(2, dtype=complex),
]


@pytest.mark.parametrize('case', range(len(PROMOTIONS)))
def test_type_promotion(case):
    assert _text(PROMOTIONS[case](lg)) == str(PROMOTIONS[case](torch))
    assert str(lg.promote_types(lg.float64, lg.complex64)).replace('leafgrad', 'torch') == \
        str(torch.promote_types(torch.float64, torch.complex64))
    assert str(lg.result_type(lg.tensor([1.]), 1j)).replace('leafgrad', 'torch') == \
        str(torch.result_type(torch.tensor([1.]), 1j))


def test_to_real_warns_once_and_keeps_real_part():
    import leafgrad.ops.conversion as conversion
    conversion._warned_complex_to_real = False
    z = lg.tensor([1 + 2j])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        out = z.float()
        z.to(lg.float64)
    assert out.tolist() == [1.0]
    assert [str(w.message) for w in caught] == ['Casting complex values to real discards the imaginary part']


# ---- parts and views ----------------------------------------------------------------------------

def test_real_imag_are_writable_views():
    for T in (lg, torch):
        w = T.tensor([1 + 2j, 3 - 1j])
        w.real[1] = 7
        w.imag = T.tensor([9., 8.])
        r = T.view_as_real(w)
        r[0, 0] = -1
        c = T.view_as_complex(T.tensor([[1., 2.], [3., 4.]]))
        c.imag[0] = 5
        if T is lg:
            got = (w.tolist(), r.tolist(), c.tolist(), w.real._base is w, r._base is w)
        else:
            expected = (w.tolist(), r.tolist(), c.tolist(), w.real._base is w, r._base is w)
    assert got == expected


def test_view_as_complex_shares_memory_with_a_reshape():
    x = lg.arange(8.).reshape(2, 4)
    c = lg.view_as_complex(x.reshape(2, 2, 2))
    x[0, 1] = 10.
    assert c[0, 0].item() == 10j
    assert lg.view_as_real(c).shape == (2, 2, 2)
    assert lg.real(lg.tensor([1., 2.])).tolist() == [1., 2.]


def test_conj_and_resolve_conj():
    z = lg.tensor([1 + 2j, 3 - 1j])
    tz = torch.tensor([1 + 2j, 3 - 1j])
    assert z.conj().is_conj() == tz.conj().is_conj()
    assert z.conj().resolve_conj().is_conj() == tz.conj().resolve_conj().is_conj()
    assert z.conj().conj().is_conj() == tz.conj().conj().is_conj()
    assert _text(z.conj()) == str(tz.conj())
    assert _text(z.conj_physical()) == str(tz.conj_physical())
    assert lg.tensor([1, 2]).conj().tolist() == [1, 2]


# ---- arithmetic and gradients ----------------------------------------------------------------------

CASES = {
    'mul': lambda T, a, b, r: (a * b).abs().sum(),
    'div': lambda T, a, b, r: (a / b).real.sum() + (a / b).imag.pow(2).sum(),
    'add_sub': lambda T, a, b, r: ((a + b) * (a - b)).abs().sum(),
    'exp': lambda T, a, b, r: T.exp(a).abs().sum(),
    'log': lambda T, a, b, r: T.log(a).imag.sum(),
    'sqrt': lambda T, a, b, r: T.sqrt(a).real.sum(),
    'sin_cos': lambda T, a, b, r: (T.sin(a) * T.cos(b)).abs().sum(),
    'pow': lambda T, a, b, r: (a ** 2).abs().sum() + (a ** 3.0).real.sum(),
    'matmul': lambda T, a, b, r: (a @ b).abs().pow(2).sum(),
    'sum_mean': lambda T, a, b, r: (a.sum(0) * b.mean(1)).abs().sum(),
    'angle': lambda T, a, b, r: T.angle(a).sum() + T.angle(r).sum(),
    'conj': lambda T, a, b, r: (a.conj() * b).imag.sum() + (a.conj_physical() * b).real.sum(),
    'real_times_complex': lambda T, a, b, r: (r * a).abs().sum() + (a * r).angle().sum(),
    'polar': lambda T, a, b, r: T.polar(r.abs(), r).mul(a).abs().sum(),
    'complex': lambda T, a, b, r: (T.complex(r, r * 2) * a).angle().sum(),
    'view_as_real': lambda T, a, b, r: T.view_as_real(a * b).pow(2).sum(),
    'view_as_complex': lambda T, a, b, r: T.view_as_complex(T.stack([r, r * r], -1)).mul(a).abs().sum(),
    'views': lambda T, a, b, r: (a.t().reshape(9)[2:5] * b.flatten()[:3]).abs().sum(),
    'tanh_sigmoid': lambda T, a, b, r: (T.tanh(a * 0.3) + T.sigmoid(b * 0.3)).abs().sum(),
    'reciprocal': lambda T, a, b, r: (1 / a).abs().sum() + (2 - a).abs().sum(),
    'to_complex': lambda T, a, b, r: (r.to(T.complex128) * a).abs().sum(),
    'sgn': lambda T, a, b, r: (T.sgn(a) * b).real.sum(),
    'abs': lambda T, a, b, r: T.abs(a).sum(),
    'real_imag': lambda T, a, b, r: (a.real * b.imag).sum() + a.imag.exp().sum(),
    'var_std': lambda T, a, b, r: a.var() + b.std(0).sum() + a.var(1, correction=0).sum(),
    'norms': lambda T, a, b, r: a.norm() + T.linalg.vector_norm(b, 1) + T.linalg.vector_norm(a, 3, dim=0).sum()
    + T.linalg.vector_norm(b, float('inf')),
    'logsumexp': lambda T, a, b, r: T.logsumexp(a, 1).abs().sum() + T.logsumexp(b, 0, keepdim=True).angle().sum(),
    'vdot': lambda T, a, b, r: T.vdot(a.flatten(), b.flatten()).abs(),
    'cumsum_prod': lambda T, a, b, r: a.cumsum(0).abs().sum() + b.prod(1).abs().sum(),
    'index_cat_stack': lambda T, a, b, r: T.cat([a[[0, 2]], b[1:]]).abs().sum() + T.stack([a, b]).sum().abs(),
    'where': lambda T, a, b, r: T.where(r > 0, a, b).abs().sum(),
    'linear': lambda T, a, b, r: T.nn.functional.linear(a, b).abs().sum(),
    'square_rsqrt': lambda T, a, b, r: (a.square() + b.reciprocal() + b.rsqrt()).abs().sum(),
    'einsum': lambda T, a, b, r: T.einsum('ij,jk->ik', a, b).abs().sum(),
    # (off the real line 1 / sqrt(z^2 - 1) is -1 / (sqrt(z - 1) sqrt(z + 1)) in half the plane)
    'acosh': lambda T, a, b, r: (T.acosh(a) * T.acosh(-b)).abs().sum() + T.acosh(a * 1j).real.sum(),
}


def _run(T, case):
    a = T.tensor(A, requires_grad=True)
    b = T.tensor(B, requires_grad=True)
    r = T.tensor(R, requires_grad=True)
    out = CASES[case](T, a, b, r)
    out.backward()
    grads = [None if t.grad is None else t.grad.detach() for t in (a, b, r)]
    if T is torch:
        grads = [None if g is None else g.resolve_conj() for g in grads]
    return out, grads


@pytest.mark.parametrize('case', list(CASES))
def test_values_and_gradients_match_torch(case):
    out, grads = _run(lg, case)
    tout, tgrads = _run(torch, case)
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-10)
    for g, tg in zip(grads, tgrads):
        assert (g is None) == (tg is None)
        if g is not None:
            assert str(g.dtype).split('.')[-1] == str(tg.dtype).split('.')[-1]
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)


def test_grad_fn_names():
    z = lg.tensor([1 + 2j], requires_grad=True)
    x = lg.tensor([1.], requires_grad=True)
    names = [z.real.grad_fn, lg.conj(z).grad_fn, lg.conj_physical(z).grad_fn, lg.angle(z).grad_fn,
             lg.view_as_real(z).grad_fn, lg.sgn(z).grad_fn, lg.polar(x, x).grad_fn, lg.complex(x, x).grad_fn,
             lg.view_as_complex(lg.stack([x, x], -1)).grad_fn, z.conj().resolve_conj().grad_fn]
    assert [type(n).__name__ for n in names] == [
        'SelectBackward0', 'ConjBackward0', 'ConjPhysicalBackward0', 'AngleBackward0', 'ViewAsRealBackward0',
        'SgnBackward0', 'PolarBackward0', 'ComplexBackward0', 'ViewAsComplexBackward0', 'CloneBackward0']


def _c(shape):
    return lg.tensor(RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape), requires_grad=True)


def _r(shape):
    return lg.tensor(RNG.standard_normal(shape), requires_grad=True)


GRADCHECKED = {
    'mul': (lambda a, b: a * b, lambda: (_c(3), _c(3))),
    'div': (lambda a, b: a / b, lambda: (_c(3), _c(3))),
    'exp_log_sqrt': (lambda a: lg.exp(a) + lg.log(a) + lg.sqrt(a), lambda: (_c(3),)),
    'pow': (lambda a: a ** 3, lambda: (_c(3),)),
    'matmul': (lambda a, b: a @ b, lambda: (_c((2, 3)), _c((3, 2)))),
    'abs': (lg.abs, lambda: (_c(3),)),
    'angle': (lg.angle, lambda: (_c(3),)),
    'conj': (lg.conj, lambda: (_c(3),)),
    'sgn': (lg.sgn, lambda: (_c(3),)),
    'real_imag': (lambda a: a.real * a.imag, lambda: (_c(3),)),
    'polar': (lg.polar, lambda: (_r(3).abs().detach().requires_grad_(), _r(3))),
    'complex': (lg.complex, lambda: (_r(3), _r(3))),
    'view_as_real': (lg.view_as_real, lambda: (_c(3),)),
    'view_as_complex': (lambda x: lg.view_as_complex(x), lambda: (_r((3, 2)),)),
    'real_times_complex': (lambda a, r: a * r, lambda: (_c(3), _r(3))),
    'sum_mean': (lambda a: a.sum(0) * a.mean(), lambda: (_c((2, 3)),)),
}


@pytest.mark.parametrize('case', list(GRADCHECKED))
def test_gradcheck_and_gradgradcheck(case):
    f, make = GRADCHECKED[case]
    assert gradcheck(f, make())
    assert gradgradcheck(f, make())


def test_gradcheck_catches_a_rule_without_the_conjugate():
    from leafgrad.ops import complex_numbers
    rule = complex_numbers.Conj.apply
    complex_numbers.Conj.apply = lambda self, grad: (grad,)
    try:
        assert not gradcheck(lg.conj, (_c(3),), raise_exception=False)
    finally:
        complex_numbers.Conj.apply = rule


# ---- errors -----------------------------------------------------------------------------------------

ERRORS = [
    lambda T: T.view_as_complex(T.ones(3)),
    lambda T: T.view_as_complex(T.ones(3, 2).t()),
    lambda T: T.view_as_complex(T.ones(2, 3)[:, :2]),
    lambda T: T.view_as_complex(T.ones(3, 2, dtype=T.int64)),
    lambda T: T.view_as_real(T.ones(2)),
    lambda T: T.polar(T.ones(2), T.ones(2, dtype=T.float64)),
    lambda T: T.complex(T.ones(2), T.ones(2, dtype=T.float64)),
    lambda T: T.complex(T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)),
    lambda T: T.tensor([1 + 1j], requires_grad=True).sum().backward(),
    lambda T: T.tensor([1 + 2j], dtype=T.float32),
    lambda T: T.tensor([1., 2.]).imag,
    lambda T: T.tensor([1, 2]).requires_grad_(),
    lambda T: T.full((2,), 1 + 1j, dtype=T.float32),
    lambda T: T.vdot(T.tensor([1j]), T.ones(1)),
    lambda T: T.arange(3, dtype=T.cfloat),
]

Z = [1 + 2j, 3 - 1j]
REFUSED = {  # what PyTorch does not define for complex numbers (no order, no rounding)
    'lt': lambda T: T.tensor(Z) < T.tensor(Z), 'le_scalar': lambda T: T.tensor(Z) <= 1,
    'gt_reflected': lambda T: 1 < T.tensor(Z), 'ge': lambda T: T.ge(T.tensor(Z), T.tensor(Z)),
    'relu': lambda T: T.relu(T.tensor(Z)), 'clamp': lambda T: T.tensor(Z).clamp(0, 1),
    'clamp_min': lambda T: T.tensor(Z).clamp_min(0), 'max': lambda T: T.tensor(Z).max(),
    'min': lambda T: T.tensor(Z).min(), 'max_dim': lambda T: T.tensor(Z).max(0), 'min_dim': lambda T: T.tensor(Z).min(0),
    'amax': lambda T: T.tensor(Z).amax(), 'amin': lambda T: T.tensor(Z).amin(),
    'maximum': lambda T: T.maximum(T.tensor(Z), T.tensor(Z)), 'minimum': lambda T: T.minimum(T.tensor(Z), T.tensor(Z)),
    'sort': lambda T: T.tensor(Z).sort(), 'argsort': lambda T: T.tensor(Z).argsort(), 'topk': lambda T: T.tensor(Z).topk(1),
    'argmax': lambda T: T.tensor(Z).argmax(), 'argmin': lambda T: T.tensor(Z).argmin(),
    'floor': lambda T: T.floor(T.tensor(Z)), 'ceil': lambda T: T.ceil(T.tensor(Z)), 'trunc': lambda T: T.tensor(Z).trunc(),
    'round': lambda T: T.round(T.tensor(Z)), 'sign': lambda T: T.sign(T.tensor(Z)),
    'atan2': lambda T: T.atan2(T.tensor(Z), T.tensor(Z)), 'remainder': lambda T: T.tensor(Z) % 2,
    'floor_divide': lambda T: T.tensor(Z) // 2, 'fmod': lambda T: T.tensor(Z).fmod(2), 'erf': lambda T: T.erf(T.tensor(Z)),
    'softmax': lambda T: T.softmax(T.tensor(Z), 0), 'float': lambda T: float(T.tensor(Z)[0]),
}


@pytest.mark.parametrize('case', list(REFUSED))
def test_refused_for_complex_as_torch(case):
    msg, tmsg = raises_like(lambda: REFUSED[case](lg), lambda: REFUSED[case](torch))
    assert same_message(msg, tmsg), (msg, tmsg)


@pytest.mark.parametrize('case', range(len(ERRORS)))
def test_errors_as_torch(case):
    msg, tmsg = raises_like(lambda: ERRORS[case](lg), lambda: ERRORS[case](torch))
    assert same_message(msg, tmsg), (msg, tmsg)


# ---- rotary embeddings (LLaMA's apply_rotary_emb), end to end -----------------------------------------

def _rotary(T, dtype_name='float32'):
    dtype = getattr(T, dtype_name)
    T.manual_seed(0)
    dim, seq, heads, batch = 8, 5, 2, 3
    freqs = 1.0 / (10000 ** (T.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    freqs = T.outer(T.arange(seq, device=freqs.device), freqs).float()
    freqs_cis = T.polar(T.ones_like(freqs), freqs)
    xq = T.randn(batch, seq, heads, dim, dtype=dtype, requires_grad=True)
    xk = T.randn(batch, seq, heads, dim, dtype=dtype, requires_grad=True)
    xq_ = T.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = T.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, seq, 1, dim // 2)
    xq_out = T.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)
    xk_out = T.view_as_real(xk_ * freqs_cis).flatten(3).type_as(xk)
    loss = (xq_out * xk_out).sum(-1).pow(2).mean()
    loss.backward()
    return str(freqs_cis[0, :2, 0]), xq_out.grad_fn.name(), loss.item(), xq.grad.numpy(), xk.grad.numpy()


def test_rotary_embedding_pattern_as_torch():
    got, expected = _rotary(lg), _rotary(torch)
    assert got[0].replace('leafgrad', 'torch') == expected[0]
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)
    np.testing.assert_allclose(got[3], expected[3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[4], expected[4], rtol=1e-5, atol=1e-6)


def test_rotary_embedding_gradcheck():
    angles = lg.tensor(RNG.standard_normal((3, 2)))
    freqs_cis = lg.polar(lg.ones_like(angles), angles)

    def rotate(x):
        x_ = lg.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        return lg.view_as_real(x_ * freqs_cis).flatten(1)
    assert gradcheck(rotate, (_r((3, 4)),))
    assert gradgradcheck(rotate, (_r((3, 4)),))


def _in_place(T, path):
    a = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    b = a * 1
    b.mul_(2j)
    b.add_(1)
    b.real.mul_(3)
    b.abs().sum().backward()
    z = T.zeros(2, dtype=T.cfloat)
    z += T.tensor([1j, 2])
    z[0] = 5 - 1j
    T.save({'z': z}, path)
    return a.grad.resolve_conj().tolist(), str(z), b.grad_fn.name().split('::')[-1], str(T.load(path)['z'])


def test_in_place_ops_setitem_and_save_load(tmp_path):
    got = _in_place(lg, str(tmp_path / 'lg.pt'))
    expected = _in_place(torch, str(tmp_path / 'torch.pt'))
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    assert got[1:] == expected[1:]
    msg, tmsg = raises_like(lambda: lg.ones(2).__setitem__(0, 1j), lambda: torch.ones(2).__setitem__(0, 1j))
    assert same_message(msg, tmsg)


def _transformed(T):
    z = T.tensor([[1 + 2j, -0.5 + 1j], [0.3 - 0.2j, 2 + 0j]], dtype=T.cdouble, requires_grad=True)
    f = (lambda z: (T.exp(z) * z.conj()).abs().sum())
    f = T.compile(f) if T is lg else f
    for _ in range(3):  # (compile: the trace, then replays)
        z.grad = None
        out = f(z)
        out.backward()
    batched = T.func.vmap(lambda r: (T.exp(r) * 2j).abs())(z.detach())
    return out.item(), z.grad.resolve_conj().numpy(), batched.numpy()


def test_compile_and_vmap_of_a_complex_program():
    got, expected = _transformed(lg), _transformed(torch)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)


def test_forward_ad_of_complex_tensors():
    """make_dual takes a complex primal and tangent (tests/test_forward_ad.py compares the
    tangents with torch's)."""
    results = []
    for T in (lg, torch):
        with T.autograd.forward_ad.dual_level():
            dual = T.autograd.forward_ad.make_dual(T.tensor([1j]), T.tensor([1 + 0j]))
            results.append(T.autograd.forward_ad.unpack_dual(dual.exp()).tangent.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


@pytest.mark.parametrize('dtype', ['cfloat', 'cdouble'])
def test_assert_close_of_complex_tensors(dtype):
    for T in (lg, torch):
        x = T.tensor([1 + 2j, 3j], dtype=getattr(T, dtype))
        T.testing.assert_close(x, x + 1e-8j)  # within the dtype's default tolerance
    msg, tmsg = raises_like(lambda: lg.testing.assert_close(lg.tensor([1 + 2j, 3j]), lg.tensor([1 + 2.1j, 3j])),
                            lambda: torch.testing.assert_close(torch.tensor([1 + 2j, 3j]), torch.tensor([1 + 2.1j, 3j])))
    assert same_message(msg, tmsg), (msg, tmsg)


CONJUGATE_TRANSPOSES = {
    'mH': lambda T, a: (a.mH @ a).abs().sum(),
    'adjoint': lambda T, a: (a.adjoint() * a).real.sum(),
    'H': lambda T, a: (a.H * a).imag.sum() + a.H.abs().sum(),
}


@pytest.mark.parametrize('case', list(CONJUGATE_TRANSPOSES))
def test_conjugate_transposes_as_torch(case):
    results = []
    for T in (lg, torch):
        a = T.tensor(A, requires_grad=True)
        out = CONJUGATE_TRANSPOSES[case](T, a)
        out.backward()
        results.append((out.item(), a.grad.resolve_conj().numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10)


@pytest.mark.parametrize('name', ['matrix_norm', 'pinv'])
def test_linear_algebra_of_complex_matrices_is_refused_by_name(name):
    a = lg.tensor(A)
    args = (a,)
    with pytest.raises(NotImplementedError, match=f'linalg.{name}: .* real matrices only'):
        getattr(lg.linalg, name)(*args)


OPTIMIZERS = {'SGD': {'momentum': 0.9}, 'Adam': {'amsgrad': True}, 'AdamW': {}, 'RMSprop': {}, 'Adagrad': {},
              'Adamax': {}, 'NAdam': {}, 'RAdam': {}, 'Adadelta': {}, 'ASGD': {}, 'Rprop': {}}


def _optimized(T, name):
    p = T.nn.Parameter(T.tensor(A))
    opt = getattr(T.optim, name)([p], lr=0.1, **OPTIMIZERS[name])
    for _ in range(3):
        opt.zero_grad()
        loss = (p * T.tensor(B)).abs().sum() + (p * p).real.sum()
        loss.backward()
        opt.step()
    state = opt.state_dict()['state'][0]
    return p.detach().numpy().copy(), sorted((k, str(v.dtype).split('.')[-1], tuple(v.shape))
                                             for k, v in state.items() if hasattr(v, 'dtype'))


@pytest.mark.parametrize('name', list(OPTIMIZERS))
def test_optimizers_update_complex_parameters_as_real_pairs(name):
    (got, got_state), (expected, expected_state) = _optimized(lg, name), _optimized(torch, name)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert got_state == expected_state
