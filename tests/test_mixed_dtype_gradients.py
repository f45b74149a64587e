"""Gradients through ops that mix a float32 intermediate with a float64 tensor, against
PyTorch's: the gradient each op gives its float32 input is cast back to float32 (what a hook on
that input sees), the leaf's gradient has PyTorch's values, and an op PyTorch refuses for mixed
dtypes raises the same error. One sweep over a hundred ops and losses (elementwise, reductions,
linear algebra, nn.functional)."""
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
