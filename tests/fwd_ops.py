"""The ops forward mode and vmap are tested on: name -> (function of (M, *inputs), input makers).

An input maker takes a NumPy generator and returns an array (float64); inputs are positive
where the op needs it. Shared by the forward-mode and vmap tests."""
import numpy as np


def rand(*shape, low=None):
    def make(rng):
        x = rng.standard_normal(shape)
        return np.abs(x) + 0.5 if low == 'positive' else np.clip(x, -0.9, 0.9) if low == 'unit' else x
    return make


def pos(*shape):
    return rand(*shape, low='positive')


def wellcond(n):
    def make(rng):
        return rng.standard_normal((n, n)) + 3 * np.eye(n)
    return make


def F(M):
    return M.nn.functional


def _i64(M, values):
    return M.tensor(values, dtype=M.int64)


OPS = {
    # elementwise arithmetic
    'add': (lambda M, a, b: a + b, [rand(2, 3), rand(2, 3)]),
    'add broadcast': (lambda M, a, b: a + b, [rand(2, 3), rand(3)]),
    'add alpha': (lambda M, a, b: M.add(a, b, alpha=2.5), [rand(2, 3), rand(2, 3)]),
    'sub': (lambda M, a, b: a - b, [rand(2, 3), rand(1, 3)]),
    'rsub': (lambda M, a: 2.0 - a, [rand(4)]),
    'mul': (lambda M, a, b: a * b, [rand(2, 3), rand(2, 3)]),
    'mul broadcast': (lambda M, a, b: a * b, [rand(3), rand(2, 3)]),
    'mul scalar': (lambda M, a: a * 3.0, [rand(2, 3)]),
    'div': (lambda M, a, b: a / b, [rand(2, 3), pos(2, 3)]),
    'div scalar': (lambda M, a: a / 4.0, [rand(2, 3)]),
    'rdiv': (lambda M, a: 2.0 / a, [pos(3)]),
    'pow scalar': (lambda M, a: a ** 3, [rand(2, 3)]),
    'pow tensor': (lambda M, a, b: a ** b, [pos(2, 3), rand(2, 3)]),
    'rpow': (lambda M, a: 2.0 ** a, [rand(3)]),
    'neg': (lambda M, a: -a, [rand(3)]),
    'where': (lambda M, a, b: M.where(a > 0, a, b), [rand(2, 3), rand(2, 3)]),
    'maximum-free square': (lambda M, a: a.square(), [rand(3)]),
    # unary functions and activations
    'exp': (lambda M, a: a.exp(), [rand(3)]), 'log': (lambda M, a: a.log(), [pos(3)]),
    'sqrt': (lambda M, a: a.sqrt(), [pos(3)]), 'rsqrt': (lambda M, a: a.rsqrt(), [pos(3)]),
    'abs': (lambda M, a: a.abs(), [pos(3)]), 'sin': (lambda M, a: a.sin(), [rand(3)]),
    'cos': (lambda M, a: a.cos(), [rand(3)]), 'tan': (lambda M, a: a.tan(), [rand(3, low='unit')]),
    'tanh': (lambda M, a: a.tanh(), [rand(3)]), 'sigmoid': (lambda M, a: a.sigmoid(), [rand(3)]),
    'reciprocal': (lambda M, a: a.reciprocal(), [pos(3)]), 'expm1': (lambda M, a: a.expm1(), [rand(3)]),
    'log1p': (lambda M, a: a.log1p(), [pos(3)]), 'log2': (lambda M, a: a.log2(), [pos(3)]),
    'asin': (lambda M, a: a.asin(), [rand(3, low='unit')]), 'atan': (lambda M, a: a.atan(), [rand(3)]),
    'sinh': (lambda M, a: a.sinh(), [rand(3)]), 'cosh': (lambda M, a: a.cosh(), [rand(3)]),
    'erf': (lambda M, a: a.erf(), [rand(3)]), 'relu': (lambda M, a: a.relu(), [rand(2, 3)]),
    'leaky_relu': (lambda M, a: F(M).leaky_relu(a, 0.2), [rand(2, 3)]),
    'elu': (lambda M, a: F(M).elu(a), [rand(2, 3)]), 'selu': (lambda M, a: F(M).selu(a), [rand(2, 3)]),
    'gelu': (lambda M, a: F(M).gelu(a), [rand(2, 3)]),
    'gelu tanh': (lambda M, a: F(M).gelu(a, approximate='tanh'), [rand(2, 3)]),
    'silu': (lambda M, a: F(M).silu(a), [rand(2, 3)]), 'mish': (lambda M, a: F(M).mish(a), [rand(2, 3)]),
    'softplus': (lambda M, a: F(M).softplus(a), [rand(2, 3)]),
    'logsigmoid': (lambda M, a: F(M).logsigmoid(a), [rand(2, 3)]),
    'hardtanh': (lambda M, a: F(M).hardtanh(a), [rand(2, 3)]),
    'hardswish': (lambda M, a: F(M).hardswish(a), [rand(2, 3)]),
    'softmax': (lambda M, a: a.softmax(-1), [rand(2, 3)]),
    'log_softmax': (lambda M, a: a.log_softmax(1), [rand(2, 3)]),
    # matrix products
    'mm': (lambda M, a, b: a @ b, [rand(2, 3), rand(3, 4)]),
    'mv': (lambda M, a, b: a @ b, [rand(2, 3), rand(3)]),
    'dot': (lambda M, a, b: a @ b, [rand(3), rand(3)]),
    'bmm': (lambda M, a, b: a @ b, [rand(2, 2, 3), rand(2, 3, 4)]),
    'matmul broadcast': (lambda M, a, b: a @ b, [rand(2, 2, 3), rand(3, 4)]),
    'addmm': (lambda M, c, a, b: M.addmm(c, a, b, beta=0.5, alpha=2.0), [rand(4), rand(2, 3), rand(3, 4)]),
    'linear': (lambda M, x, w, b: F(M).linear(x, w, b), [rand(5, 3), rand(4, 3), rand(4)]),
    'linear 3d': (lambda M, x, w, b: F(M).linear(x, w, b), [rand(2, 5, 3), rand(4, 3), rand(4)]),
    'outer': (lambda M, a, b: M.outer(a, b), [rand(3), rand(2)]),
    # reductions
    'sum': (lambda M, a: a.sum(), [rand(2, 3)]), 'sum dim': (lambda M, a: a.sum(1), [rand(2, 3)]),
    'sum keepdim': (lambda M, a: a.sum(0, keepdim=True), [rand(2, 3)]),
    'mean': (lambda M, a: a.mean(), [rand(2, 3)]), 'mean dims': (lambda M, a: a.mean((0, 2)), [rand(2, 3, 2)]),
    'var': (lambda M, a: a.var(1), [rand(2, 3)]), 'std': (lambda M, a: a.std(), [rand(2, 3)]),
    'logsumexp': (lambda M, a: a.logsumexp(1), [rand(2, 3)]),
    'norm': (lambda M, a: a.norm(), [rand(2, 3)]), 'norm dim': (lambda M, a: a.norm(dim=1), [rand(2, 3)]),
    'amax': (lambda M, a: a.amax(1), [rand(2, 3)]), 'max': (lambda M, a: a.max(), [rand(2, 3)]),
    'max dim': (lambda M, a: a.max(1)[0], [rand(2, 3)]), 'min dim': (lambda M, a: a.min(0).values, [rand(2, 3)]),
    'cumsum': (lambda M, a: a.cumsum(1), [rand(2, 3)]),
    'prod': (lambda M, a: a.prod(), [rand(2, 3)]),
    'prod dim': (lambda M, a: a.prod(1, keepdim=True), [rand(2, 3)]),
    'prod with a zero': (lambda M, a: (a * M.tensor([1.0, 0.0, 1.0], dtype=a.dtype)).prod(1), [rand(2, 3)]),
    'cumprod': (lambda M, a: a.cumprod(1), [rand(2, 3)]),
    'cumprod with a zero': (lambda M, a: (a * M.tensor([1.0, 0.0, 1.0], dtype=a.dtype)).cumprod(1), [rand(2, 3)]),
    'sort': (lambda M, a: a.sort(1, descending=True).values, [rand(2, 4)]),
    'topk': (lambda M, a: a.topk(2, 0)[0], [rand(4, 3)]),
    # pointwise
    'addcmul': (lambda M, a, b, c: M.addcmul(a, b, c, value=0.5), [rand(2, 3), rand(2, 3), rand(3)]),
    'addcdiv': (lambda M, a, b, c: M.addcdiv(a, b, c, value=2.0), [rand(2, 3), rand(2, 3), pos(2, 3)]),
    'atan2': (lambda M, a, b: M.atan2(a, b), [rand(2, 3), rand(3)]),
    'maximum': (lambda M, a, b: M.maximum(a, b), [rand(2, 3), rand(2, 3)]),
    'maximum tie': (lambda M, a: M.maximum(a, M.tensor([0.0, 0.5, 0.0], dtype=a.dtype)),
                    [lambda rng: np.array([[0.0, 0.5, 1.0], [-1.0, 0.5, 0.0]])]),
    'minimum': (lambda M, a, b: M.minimum(a, b), [rand(2, 3), rand(3)]),
    'lerp number': (lambda M, a, b: M.lerp(a, b, 0.3), [rand(2, 3), rand(2, 3)]),
    'lerp tensor': (lambda M, a, b, w: M.lerp(a, b, w), [rand(2, 3), rand(2, 3), rand(3)]),
    'xlogy': (lambda M, a, b: M.xlogy(a, b), [rand(2, 3), pos(2, 3)]),
    'xlogy number x': (lambda M, b: M.xlogy(2.0, b), [pos(3)]),
    'xlogy number y': (lambda M, a: M.xlogy(a, 3.0), [rand(3)]),
    # views and copies
    'view': (lambda M, a: a.view(3, 2), [rand(2, 3)]), 'reshape': (lambda M, a: a.t().reshape(6), [rand(2, 3)]),
    'transpose': (lambda M, a: a.transpose(0, 1), [rand(2, 3)]), 'permute': (lambda M, a: a.permute(2, 0, 1),
                                                                            [rand(2, 3, 2)]),
    'select': (lambda M, a: a[1], [rand(2, 3)]), 'slice': (lambda M, a: a[:, 1:], [rand(2, 3)]),
    'unsqueeze': (lambda M, a: a.unsqueeze(1), [rand(2, 3)]), 'squeeze': (lambda M, a: a.squeeze(), [rand(2, 1, 3)]),
    'expand': (lambda M, a: a.expand(4, 3), [rand(1, 3)]), 'flatten': (lambda M, a: a.flatten(), [rand(2, 3)]),
    'unbind': (lambda M, a: a.unbind(1)[2], [rand(2, 3)]), 'chunk': (lambda M, a: a.chunk(2, 1)[1], [rand(2, 4)]),
    'clone': (lambda M, a: a.clone(), [rand(3)]), 'contiguous': (lambda M, a: a.t().contiguous(), [rand(2, 3)]),
    'repeat': (lambda M, a: a.repeat(2, 1, 2), [rand(2, 3)]),
    'flip': (lambda M, a: a.flip(0, 1), [rand(2, 3)]),
    'roll': (lambda M, a: a.roll((1, -1), (0, 1)), [rand(2, 3)]),
    'tril': (lambda M, a: a.tril(-1), [rand(3, 3)]),
    'triu': (lambda M, a: M.triu(a, 1), [rand(3, 4)]),
    'pad': (lambda M, a: F(M).pad(a, (1, 2, 0, 1)), [rand(2, 3)]),
    'rot90': (lambda M, a: a.rot90(1, (0, 1)), [rand(2, 3)]),
    'masked_fill': (lambda M, a: a.masked_fill(a > 0, 0.5), [rand(2, 3)]),
    'masked_fill tensor value': (lambda M, a, v: a.masked_fill(M.tensor([True, False, True]), v), [rand(2, 3),
                                                                                              rand()]),
    'cat': (lambda M, a, b: M.cat([a, b], 1), [rand(2, 3), rand(2, 2)]),
    'stack': (lambda M, a, b: M.stack([a, b], 1), [rand(2, 3), rand(2, 3)]),
    'to float32': (lambda M, a: a.float().double(), [rand(3)]),
    # losses
    'mse': (lambda M, a, b: F(M).mse_loss(a, b), [rand(2, 3), rand(2, 3)]),
    'mse none': (lambda M, a, b: F(M).mse_loss(a, b, reduction='none'), [rand(2, 3), rand(2, 3)]),
    'cross_entropy': (lambda M, a: F(M).cross_entropy(a, M.tensor([0, 2])), [rand(2, 3)]),
    'cross_entropy weighted': (lambda M, a: F(M).cross_entropy(a, _i64(M, [0, 2, -100, 2]),
                                                               weight=M.tensor([0.5, 2.0, 1.0], dtype=a.dtype)),
                               [rand(4, 3)]),
    'cross_entropy smoothing': (lambda M, a: F(M).cross_entropy(a, _i64(M, [1, 2]), label_smoothing=0.2),
                                [rand(2, 3)]),
    'cross_entropy probabilities': (lambda M, a, p: F(M).cross_entropy(a, p.softmax(-1)), [rand(2, 3), rand(2, 3)]),
    'cross_entropy one sample': (lambda M, a: F(M).cross_entropy(a, _i64(M, 1)), [rand(3)]),
    'nll none': (lambda M, a: F(M).nll_loss(a, M.tensor([1, 0]), reduction='none'), [rand(2, 3)]),
    'bce logits': (lambda M, a, b: F(M).binary_cross_entropy_with_logits(a, b.sigmoid()), [rand(2, 3), rand(2, 3)]),
    'smooth_l1': (lambda M, a, b: F(M).smooth_l1_loss(a, b), [rand(2, 3), rand(2, 3)]),
    'huber sum': (lambda M, a, b: F(M).huber_loss(a, b, reduction='sum'), [rand(2, 3), rand(2, 3)]),
    # convolutions and pooling
    'conv1d': (lambda M, x, w, b: F(M).conv1d(x, w, b, padding=1), [rand(2, 3, 6), rand(4, 3, 3), rand(4)]),
    'conv1d unbatched': (lambda M, x, w: F(M).conv1d(x, w, stride=2), [rand(3, 7), rand(2, 3, 3)]),
    'conv2d': (lambda M, x, w, b: F(M).conv2d(x, w, b, stride=2, padding=1), [rand(2, 2, 5, 5), rand(3, 2, 3, 3),
                                                                               rand(3)]),
    'conv2d groups': (lambda M, x, w: F(M).conv2d(x, w, groups=2, dilation=2), [rand(1, 4, 6, 6), rand(4, 2, 2, 2)]),
    'conv_transpose2d': (lambda M, x, w, b: F(M).conv_transpose2d(x, w, b, stride=2), [rand(1, 2, 3, 3),
                                                                                       rand(2, 3, 2, 2), rand(3)]),
    'max_pool2d': (lambda M, x: F(M).max_pool2d(x, 2), [rand(2, 2, 4, 4)]),
    'max_pool2d overlapping': (lambda M, x: F(M).max_pool2d(x, 3, stride=1, padding=1), [rand(1, 2, 4, 4)]),
    'max_pool1d unbatched': (lambda M, x: F(M).max_pool1d(x, 2), [rand(2, 6)]),
    'avg_pool2d': (lambda M, x: F(M).avg_pool2d(x, 2, stride=1, padding=1, count_include_pad=False),
                   [rand(2, 2, 4, 4)]),
    'avg_pool1d unbatched': (lambda M, x: F(M).avg_pool1d(x, 3), [rand(2, 6)]),
    'adaptive_avg_pool2d': (lambda M, x: F(M).adaptive_avg_pool2d(x, (2, 3)), [rand(1, 2, 5, 4)]),
    'adaptive_max_pool2d': (lambda M, x: F(M).adaptive_max_pool2d(x, 2), [rand(1, 2, 5, 4)]),
    'adaptive_avg_pool1d unbatched': (lambda M, x: F(M).adaptive_avg_pool1d(x, 3), [rand(2, 7)]),
    # normalizations and embeddings
    'layer_norm': (lambda M, x, w, b: F(M).layer_norm(x, (4,), w, b), [rand(3, 4), rand(4), rand(4)]),
    'layer_norm 2 dims': (lambda M, x: F(M).layer_norm(x, (2, 3)), [rand(2, 2, 3)]),
    'batch_norm training': (lambda M, x, w, b: F(M).batch_norm(x, None, None, w, b, training=True),
                            [rand(4, 3), rand(3), rand(3)]),
    'batch_norm eval': (lambda M, x, w, b: F(M).batch_norm(x, M.full((3,), 0.1, dtype=M.float64),
                                                           M.full((3,), 2.0, dtype=M.float64), w, b),
                        [rand(4, 3, 2), rand(3), rand(3)]),
    'group_norm': (lambda M, x, w, b: F(M).group_norm(x, 2, w, b), [rand(2, 4, 3), rand(4), rand(4)]),
    'embedding': (lambda M, w: F(M).embedding(_i64(M, [[0, 2], [1, 0]]), w), [rand(3, 4)]),
    'embedding 1d': (lambda M, w: F(M).embedding(_i64(M, [2, 0, 2]), w), [rand(3, 4)]),
    # indexing
    'index': (lambda M, a: a[_i64(M, [0, 2, 0])], [rand(3, 2)]),
    'index dim 1': (lambda M, a: a[:, _i64(M, [1, 0])], [rand(2, 3)]),
    'index_select': (lambda M, a: M.index_select(a, 1, _i64(M, [2, 0])), [rand(2, 3)]),
    'gather': (lambda M, a: M.gather(a, 1, _i64(M, [[0, 0], [1, 0]])), [rand(2, 3)]),
    'scatter': (lambda M, a, b: a.scatter(1, _i64(M, [[0], [2]]), b), [rand(2, 3), rand(2, 1)]),
    'scatter value': (lambda M, a: a.scatter(0, _i64(M, [[1, 0, 1]]), 2.0), [rand(2, 3)]),
    'scatter_add': (lambda M, a, b: a.scatter_add(1, _i64(M, [[0, 0], [2, 1]]), b), [rand(2, 3), rand(2, 2)]),
    # linear algebra
    'inv': (lambda M, a: M.linalg.inv(a), [wellcond(3)]),
    'det': (lambda M, a: M.linalg.det(a), [wellcond(3)]),
    'solve': (lambda M, a, b: M.linalg.solve(a, b), [wellcond(3), rand(3, 2)]),
    'solve vector': (lambda M, a, b: M.linalg.solve(a, b), [wellcond(3), rand(3)]),
    'solve right': (lambda M, a, b: M.linalg.solve(a, b, left=False), [wellcond(3), rand(2, 3)]),
    'cholesky': (lambda M, a: M.linalg.cholesky(a @ a.mT + M.eye(3, dtype=a.dtype)), [rand(3, 3)]),
    'cholesky upper': (lambda M, a: M.linalg.cholesky(a @ a.mT + M.eye(3, dtype=a.dtype), upper=True), [rand(3, 3)]),
    'inverse': (lambda M, a: M.inverse(a), [wellcond(3)]),
    'slogdet': (lambda M, a: M.linalg.slogdet(a).logabsdet, [wellcond(3)]),
    'torch.slogdet': (lambda M, a: M.slogdet(a)[1], [wellcond(3)]),
    'logdet': (lambda M, a: M.logdet(a @ a.mT + M.eye(3, dtype=a.dtype)), [rand(3, 3)]),
    'qr Q': (lambda M, a: M.linalg.qr(a).Q, [rand(4, 3)]),
    'qr R': (lambda M, a: M.linalg.qr(a).R, [rand(4, 3)]),
    'qr wide Q': (lambda M, a: M.linalg.qr(a)[0], [rand(2, 4)]),
    'qr wide R': (lambda M, a: M.linalg.qr(a)[1], [rand(2, 4)]),
    'qr complete square': (lambda M, a: M.linalg.qr(a, mode='complete')[1], [rand(3, 3)]),
    'torch.qr': (lambda M, a: M.qr(a)[1], [rand(4, 3)]),
    # (eigenvectors and singular vectors are fixed up to sign, which LAPACK builds may choose
    # differently: the programs take sign-free functions of them)
    'eigh values': (lambda M, a: M.linalg.eigh(a + a.mT).eigenvalues, [rand(3, 3)]),
    'eigh vectors': (lambda M, a: M.linalg.eigh(a + a.mT)[1] ** 2, [rand(3, 3)]),
    'eigh upper': (lambda M, a: M.linalg.eigh(a + a.mT, UPLO='U')[1] ** 2, [rand(3, 3)]),
    'eigvalsh': (lambda M, a: M.linalg.eigvalsh(a + a.mT), [rand(3, 3)]),
    'svd S': (lambda M, a: M.linalg.svd(a)[1], [rand(4, 3)]),
    'svd U': (lambda M, a: M.linalg.svd(a, full_matrices=False).U ** 2, [rand(4, 3)]),
    'svd Vh': (lambda M, a: M.linalg.svd(a, full_matrices=False).Vh ** 2, [rand(4, 3)]),
    'svd wide U': (lambda M, a: M.linalg.svd(a, full_matrices=False)[0] ** 2, [rand(2, 4)]),
    'svd wide Vh': (lambda M, a: M.linalg.svd(a, full_matrices=False)[2] ** 2, [rand(2, 4)]),
    'svd full U': (lambda M, a: M.linalg.svd(a)[0][:, :3] ** 2, [rand(4, 3)]),  # (the other columns: arbitrary)
    'svd full Vh': (lambda M, a: M.linalg.svd(a)[2][:2] ** 2, [rand(2, 4)]),
    'svd vectors product': (lambda M, a: (lambda r: r.U * r.Vh.mT)(M.linalg.svd(a, full_matrices=False)), [rand(3, 3)]),
    'svdvals': (lambda M, a: M.linalg.svdvals(a), [rand(2, 4)]),
    'torch.svd': (lambda M, a: M.svd(a)[1], [rand(4, 3)]),
    'pinv': (lambda M, a: M.linalg.pinv(a), [rand(4, 3)]),
    'pinv wide': (lambda M, a: M.linalg.pinv(a), [rand(2, 4)]),
    'pinverse': (lambda M, a: M.pinverse(a), [rand(3, 4)]),
    'solve_triangular': (lambda M, a, b: M.linalg.solve_triangular(a, b, upper=True), [wellcond(3), rand(3, 2)]),
    'solve_triangular right unit': (lambda M, a, b: M.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                            unitriangular=True),
                                    [wellcond(3), rand(2, 3)]),
    'linalg.cross': (lambda M, a, b: M.linalg.cross(a, b), [rand(2, 3), rand(2, 3)]),
    'matrix_power': (lambda M, a: M.matrix_power(a, -2), [wellcond(3)]),
    'inv_ex': (lambda M, a: M.linalg.inv_ex(a).inverse, [wellcond(3)]),
    # clamp with number and tensor bounds, steps (zero tangents), cumulative extrema
    'clamp numbers': (lambda M, a: a.clamp(-0.5, 0.5), [rand(2, 3)]),
    'clamp_min number': (lambda M, a: M.clamp_min(a, 0.1), [rand(2, 3)]),
    'clip tensors': (lambda M, a, lo, hi: M.clip(a, lo, hi), [rand(2, 3), rand(2, 3), pos(3)]),
    'clamp tensor min': (lambda M, a, lo: a.clamp(min=lo), [rand(2, 3), rand(3)]),
    'clamp tensor max': (lambda M, a, hi: M.clamp(a, max=hi), [rand(2, 3), rand(2, 1)]),
    'floor': (lambda M, a: a.floor() * a, [rand(2, 3)]), 'ceil': (lambda M, a: a.ceil() + a, [rand(2, 3)]),
    'round': (lambda M, a: M.round(a * 3) * a, [rand(2, 3)]),
    'round decimals': (lambda M, a: M.round(a, decimals=1) + a, [rand(2, 3)]),
    'trunc': (lambda M, a: a.trunc() * a, [rand(2, 3)]), 'sign': (lambda M, a: a.sign() * a, [rand(2, 3)]),
    'frac': (lambda M, a: (a * 3).frac(), [rand(2, 3)]),
    'cummax': (lambda M, a: a.cummax(1).values, [rand(2, 4)]),
    'cummin': (lambda M, a: M.cummin(a, 0)[0], [rand(3, 2)]),
    # special functions
    'lgamma': (lambda M, a: a.lgamma(), [pos(3)]), 'digamma': (lambda M, a: a.digamma(), [pos(3)]),
    'polygamma': (lambda M, a: M.polygamma(2, a), [pos(3)]),
    'mvlgamma': (lambda M, a: M.mvlgamma(a + 1, 2), [pos(3)]),
    'i0': (lambda M, a: M.i0(a), [rand(3)]),
    # interpolate, every mode (a linear map along each spatial dim)
    'interpolate nearest': (lambda M, a: F(M).interpolate(a, size=7), [rand(1, 2, 5)]),
    'interpolate nearest-exact': (lambda M, a: F(M).interpolate(a, scale_factor=1.5, mode='nearest-exact'),
                                  [rand(1, 2, 3, 4)]),
    'interpolate linear': (lambda M, a: F(M).interpolate(a, size=7, mode='linear', align_corners=True), [rand(2, 1, 4)]),
    'interpolate bilinear': (lambda M, a: F(M).interpolate(a, size=(4, 5), mode='bilinear'), [rand(1, 2, 3, 3)]),
    'interpolate bilinear antialias': (lambda M, a: F(M).interpolate(a, size=(2, 3), mode='bilinear', antialias=True),
                                       [rand(1, 1, 5, 6)]),
    'interpolate bicubic': (lambda M, a: F(M).interpolate(a, size=(4, 5), mode='bicubic'), [rand(1, 1, 3, 3)]),
    'interpolate bicubic antialias': (lambda M, a: F(M).interpolate(a, size=(2, 3), mode='bicubic', antialias=True),
                                      [rand(1, 1, 5, 6)]),
    'interpolate trilinear': (lambda M, a: F(M).interpolate(a, size=(3, 2, 4), mode='trilinear'), [rand(1, 1, 2, 3, 2)]),
    'interpolate area': (lambda M, a: F(M).interpolate(a, size=(2, 3), mode='area'), [rand(1, 2, 4, 5)]),
    # a small network
    'mlp': (lambda M, x, w1, b1, w2: (F(M).linear(F(M).linear(x, w1, b1).tanh(), w2).log_softmax(-1)),
            [rand(4, 3), rand(5, 3), rand(5), rand(2, 5)]),
}


def inputs(name, M, seed=0, dtype='float64'):
    rng = np.random.default_rng(seed)
    return [M.tensor(make(rng).astype(dtype)) for make in OPS[name][1]]
