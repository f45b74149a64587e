"""Gradients through ops that mix a float32 intermediate with a float64 tensor, against
PyTorch's: the gradient each op gives its float32 input is cast back to float32 (what a hook on
that input sees), the leaf's gradient has PyTorch's values, and an op PyTorch refuses for mixed
dtypes raises the same error. One sweep over a hundred ops and losses (elementwise, reductions,
linear algebra, nn.functional)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

_A = np.random.default_rng(0).standard_normal((3, 4))
_B = np.random.default_rng(1).standard_normal((3, 4))

CASES = {
    'add': lambda T, a, b: a + b, 'mul': lambda T, a, b: a * b, 'div': lambda T, a, b: a / b,
    'sub': lambda T, a, b: a - b, 'pow': lambda T, a, b: a.abs() ** b, 'atan2': lambda T, a, b: T.atan2(a, b),
    'maximum': lambda T, a, b: T.maximum(a, b), 'where': lambda T, a, b: T.where(a > 0, a, b),
    'hypot': lambda T, a, b: T.hypot(a, b), 'lerp': lambda T, a, b: T.lerp(a, b, 0.3),
    'cat': lambda T, a, b: T.cat([a, b]), 'stack': lambda T, a, b: T.stack([a, b]),
    'addcmul': lambda T, a, b: T.addcmul(a, a, b), 'fmod': lambda T, a, b: T.fmod(a, b),
    'copysign': lambda T, a, b: T.copysign(a, b), 'xlogy': lambda T, a, b: T.xlogy(a.abs(), b.abs()),
    'clamp': lambda T, a, b: T.clamp(a, min=b), 'dist': lambda T, a, b: T.dist(a, b),
    'cdist': lambda T, a, b: T.cdist(a.unsqueeze(0), b.unsqueeze(0)),
    'mse': lambda T, a, b: T.nn.functional.mse_loss(a, b),
    'bce': lambda T, a, b: T.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
    'l1': lambda T, a, b: T.nn.functional.l1_loss(a, b), 'smooth_l1': lambda T, a, b: T.nn.functional.smooth_l1_loss(a, b),
    'kl_div': lambda T, a, b: T.nn.functional.kl_div(a, b, reduction='batchmean'),
    'cosine_similarity': lambda T, a, b: T.nn.functional.cosine_similarity(a, b),
    'pairwise_distance': lambda T, a, b: T.nn.functional.pairwise_distance(a, b),
    'linear': lambda T, a, b: T.nn.functional.linear(a, b), 'einsum': lambda T, a, b: T.einsum('ij,ij->i', a, b),
    'index_put': lambda T, a, b: a.index_put((T.tensor([0, 1]),), b[:2]),
    'masked_scatter': lambda T, a, b: a.masked_scatter(a > 0, b),
    'scatter': lambda T, a, b: a.scatter(0, T.zeros(3, 4, dtype=T.long), b),
    'index_add': lambda T, a, b: a.index_add(0, T.tensor([0, 1, 2]), b),
    'mv': lambda T, a, b: T.mv(a, a[0]) * b[:, 0], 'bmm': lambda T, a, b: T.bmm(a.unsqueeze(0), a.t().unsqueeze(0)) * b.sum(),
    'outer': lambda T, a, b: T.outer(a[0], a[1]) * b[0, 0],
    'conv1d': lambda T, a, b: T.nn.functional.conv1d(a.unsqueeze(0), a[:, :2].unsqueeze(0).repeat(3, 1, 1)) * b.sum(),
    'vector_norm': lambda T, a, b: T.linalg.vector_norm(a, dim=1) * b[:, 0], 'softmax': lambda T, a, b: T.softmax(a, 1) * b,
    'layer_norm': lambda T, a, b: T.nn.functional.layer_norm(a, (4,)) * b, 'cumsum': lambda T, a, b: a.cumsum(1) * b,
    'prod': lambda T, a, b: a.prod(1) * b[:, 0], 'sort': lambda T, a, b: a.sort(1).values * b,
    'max': lambda T, a, b: a.max(1).values * b[:, 0], 'expand': lambda T, a, b: a[0].expand(3, 4) * b,
    'gather': lambda T, a, b: a.gather(1, T.zeros(3, 1, dtype=T.long)) * b, 'std': lambda T, a, b: a.std(1) * b[:, 0],
    'logsumexp': lambda T, a, b: a.logsumexp(1) * b[:, 0], 'trace': lambda T, a, b: a[:, :3].trace() * b,
    'det': lambda T, a, b: T.linalg.det(a[:, :3]) * b,
    'inv': lambda T, a, b: T.linalg.inv(a[:, :3] + 3 * T.eye(3)) * b[:, :3],
    'solve': lambda T, a, b: T.linalg.solve(a[:, :3] + 3 * T.eye(3), a[:, 3:]) * b[:, :1],
    'svdvals': lambda T, a, b: T.linalg.svdvals(a) * b[0, :3], 'rfft': lambda T, a, b: T.fft.rfft(a).abs() * b[:, :3],
    'roll': lambda T, a, b: a.roll(1, 1) * b, 'flip': lambda T, a, b: a.flip(1) * b,
    'unfold': lambda T, a, b: a.unfold(1, 2, 1).sum(-1) * b[:, :3], 'pad': lambda T, a, b: T.nn.functional.pad(a, (1, 1)) * b.sum(),
    'interpolate': lambda T, a, b: T.nn.functional.interpolate(a.unsqueeze(0), size=6, mode='linear') * b.sum(),
    'max_pool1d': lambda T, a, b: T.nn.functional.max_pool1d(a.unsqueeze(0), 2) * b.sum(),
    'embedding': lambda T, a, b: T.nn.functional.embedding(T.tensor([0, 2]), a) * b[:2],
    'cross_entropy': lambda T, a, b: T.nn.functional.cross_entropy(a, T.tensor([0, 1, 2])) * b.sum(),
    'gelu': lambda T, a, b: T.nn.functional.gelu(a) * b, 'silu': lambda T, a, b: T.nn.functional.silu(a) * b,
    'elu': lambda T, a, b: T.nn.functional.elu(a) * b, 'var_mean': lambda T, a, b: T.var_mean(a, 1)[0] * b[:, 0],
    'cummax': lambda T, a, b: a.cummax(1).values * b, 'topk': lambda T, a, b: a.topk(2, 1).values * b[:, :2],
    'kthvalue': lambda T, a, b: a.kthvalue(2, 1).values * b[:, 0], 'median': lambda T, a, b: a.median(1).values * b[:, 0],
    'amax': lambda T, a, b: a.amax(1) * b[:, 0], 'cross': lambda T, a, b: T.linalg.cross(a[:, :3], a[:, 1:]) * b[:, :3],
    'tril': lambda T, a, b: a[:, :3].tril() * b[:, :3], 'diagonal': lambda T, a, b: a.diagonal() * b[0, :3],
    'renorm': lambda T, a, b: a.renorm(2, 0, 1.0) * b, 'nan_to_num': lambda T, a, b: a.nan_to_num() * b,
    'polar': lambda T, a, b: T.polar(a.abs(), a).real * b,
    'complex': lambda T, a, b: T.view_as_real(T.complex(a, a)).sum(-1) * b,
    'cholesky': lambda T, a, b: T.linalg.cholesky(a[:, :3] @ a[:, :3].t() + T.eye(3)) * b[:, :3],
    'qr': lambda T, a, b: T.linalg.qr(a)[1] * b[:, :3].sum(),
    'eigh': lambda T, a, b: T.linalg.eigh(a[:, :3] + a[:, :3].t())[0] * b[0, :3],
    'pinv': lambda T, a, b: T.linalg.pinv(a) * b.t(), 'matrix_exp': lambda T, a, b: T.linalg.matrix_exp(a[:, :3]) * b[:, :3],
    'addmm': lambda T, a, b: T.addmm(a, a, T.eye(4)) * b, 'addmv': lambda T, a, b: T.addmv(a[:, 0], a, a[0]) * b[:, 0],
    'addr': lambda T, a, b: T.addr(a, a[:, 0], a[0]) * b, 'sigmoid': lambda T, a, b: a.sigmoid() * b,
    'tanh': lambda T, a, b: a.tanh() * b, 'exp': lambda T, a, b: a.exp() * b, 'relu': lambda T, a, b: a.relu() * b,
    'softplus': lambda T, a, b: T.nn.functional.softplus(a) * b,
    'logsigmoid': lambda T, a, b: T.nn.functional.logsigmoid(a) * b,
    'hardtanh': lambda T, a, b: T.nn.functional.hardtanh(a) * b, 'glu': lambda T, a, b: T.nn.functional.glu(a, 1) * b[:, :2],
    'normalize': lambda T, a, b: T.nn.functional.normalize(a) * b,
    'group_norm': lambda T, a, b: T.nn.functional.group_norm(a.unsqueeze(-1), 1).squeeze(-1) * b,
    'batch_norm': lambda T, a, b: T.nn.functional.batch_norm(a, None, None, training=True) * b,
    'sdpa': lambda T, a, b: T.nn.functional.scaled_dot_product_attention(a.unsqueeze(0), a.unsqueeze(0),
                                                                        a.unsqueeze(0)) * b,
}


def _run(T, name):
    leaf = T.tensor(_A, dtype=T.float32, requires_grad=True)
    b = T.tensor(_B, dtype=T.float64, requires_grad=True)
    a = leaf * 1  # (a float32 intermediate: a leaf's own gradient is cast by its AccumulateGrad)
    seen = []
    a.register_hook(lambda g: seen.append(str(g.dtype).split('.')[-1]))
    try:
        y = CASES[name](T, a, b)
        (y.sum() if y.dim() else y).backward()
    except Exception as e:
        return ('raised', type(e).__name__, str(e)), None
    grad_b = str(b.grad.dtype).split('.')[-1] if b.grad is not None else None
    return ('ran', seen, str(leaf.grad.dtype).split('.')[-1], grad_b), leaf.grad.detach().double().numpy()


@pytest.mark.parametrize('name', sorted(CASES))
def test_the_float32_input_gets_a_float32_gradient_as_in_pytorch(name):
    (mine, g), (theirs, tg) = _run(lg, name), _run(torch, name)
    assert mine == theirs
    if g is not None:
        np.testing.assert_allclose(g, tg, rtol=1e-4, atol=1e-5)


# ---- in place, leaves, 16-bit and complex operands ------------------------------------------------

_OPERANDS = [('float32', 'float64', (3, 4)), ('float32', 'float64', ()), ('float64', 'float32', ()),
             ('float32', 'float16', (3, 4)), ('float32', 'bfloat16', (3, 4)), ('bfloat16', 'float32', (3, 4)),
             ('float16', 'float64', ()), ('float32', 'complex64', (3, 4)), ('complex64', 'float64', (3, 4)),
             ('float32', 'float64', (1, 4)), ('float32', 'complex128', ())]
_BINARY = {
    'mul': lambda T, a, b: a * b, 'add': lambda T, a, b: a + b, 'div': lambda T, a, b: a / (b.abs() + 1),
    'add_': lambda T, a, b: a.add_(b), 'mul_': lambda T, a, b: a.mul_(b),
    'sub_ of the other': lambda T, a, b: b.sub_(a) if b.dim() else b.clone().sub_(a),
    'addcmul_': lambda T, a, b: a.addcmul_(a.detach(), b), 'lerp': lambda T, a, b: T.lerp(a, b, 0.5),
    'maximum': lambda T, a, b: T.maximum(a, b), 'cat': lambda T, a, b: T.cat([a.reshape(-1), b.reshape(-1)]),
    'matmul': lambda T, a, b: a @ b.t() if b.dim() == 2 else a * b, 'pow': lambda T, a, b: a.abs() ** b,
    'atan2': lambda T, a, b: T.atan2(a, b + 2), 'copy_': lambda T, a, b: a.clone().copy_(b) * a,
}


def _binary(T, name, da, db, shape_b, leaf_b):
    leaf_a = T.tensor(_A, dtype=getattr(T, da), requires_grad=True)
    other = _B[:shape_b[0], :shape_b[1]] if shape_b else _B[0, 0]
    leaf_other = T.tensor(other, dtype=getattr(T, db), requires_grad=True)
    a, b = leaf_a * 1, leaf_other if leaf_b else leaf_other * 1
    seen = []
    a.register_hook(lambda g: seen.append(('a', str(g.dtype).split('.')[-1])))
    b.register_hook(lambda g: seen.append(('b', str(g.dtype).split('.')[-1])))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # (copy_ of complex into real warns, once: as PyTorch)
            y = _BINARY[name](T, a, b)
            (y.real.sum() if y.is_complex() else y.sum()).backward()
    except Exception as e:  # (the message's start: its tensor names are leafgrad's, and it says more)
        return ('raised', type(e).__name__, str(e)[:60]), None
    return (('ran', sorted(seen), str(leaf_a.grad.dtype).split('.')[-1], str(leaf_other.grad.dtype).split('.')[-1]),
            [t.grad.detach().to(T.complex128).numpy() for t in (leaf_a, leaf_other)])


@pytest.mark.parametrize('leaf_b', [False, True], ids=['intermediate', 'leaf'])
@pytest.mark.parametrize('operands', _OPERANDS, ids=['-'.join(map(str, o)) for o in _OPERANDS])
@pytest.mark.parametrize('name', sorted(_BINARY))
def test_each_input_gets_a_gradient_of_its_own_dtype_as_in_pytorch(name, operands, leaf_b):
    (mine, g), (theirs, tg) = _binary(lg, name, *operands, leaf_b), _binary(torch, name, *operands, leaf_b)
    assert mine == theirs
    if g is not None:
        wide = any(d in ('float16', 'bfloat16') for d in operands[:2])
        for x, y in zip(g, tg):
            np.testing.assert_allclose(x, y, rtol=2e-2 if wide else 1e-5, atol=1e-5)


def _complex_signs(T):
    """The printed gradients of z * 2, z / 2, 3 * z and z * w of a complex z with zero imaginary
    parts (PyTorch's formulas give +0j)."""
    said = []
    for f in (lambda z: z * 2, lambda z: z / 2, lambda z: 3 * z, lambda z: z * T.tensor([2.0, 3.0]),
              lambda z: z * (1 + 1j), lambda z: 1 / z):
        z = T.tensor([1.0, 2.0], dtype=T.complex64, requires_grad=True)
        f(z).real.sum().backward()
        said.append(repr(z.grad))
    return said


def test_complex_gradients_of_products_and_quotients_print_as_pytorchs():
    assert _complex_signs(lg) == _complex_signs(torch)


def _copy_complex_into_real(T):
    a = T.zeros(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        a.copy_(T.tensor([1 + 2j, 3 - 1j]))
    return a.tolist(), [(x.category.__name__, str(x.message).split(' (Triggered')[0]) for x in w]


def test_copying_complex_values_into_a_real_tensor_warns_as_pytorch():
    """(NumPy's ComplexWarning had come through.)"""
    assert _copy_complex_into_real(lg) == _copy_complex_into_real(torch)


def _complex_lerp(T):
    x = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    e = T.tensor([-1 + 0.5j, 2j], requires_grad=True)
    w = T.tensor(0.25 + 0.5j, requires_grad=True)
    r = T.lerp(x, e, w)
    r.abs().sum().backward()
    return [np.round(t.detach().numpy(), 5).tolist() for t in (r, x.grad, e.grad, w.grad)]


def test_lerp_of_complex_tensors_as_pytorch():
    """(It had refused them as lerp_kernel_scalar not implemented for ComplexFloat.)"""
    assert _complex_lerp(lg) == _complex_lerp(torch)
