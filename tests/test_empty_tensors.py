"""Reductions, losses, products, indexing and layers of empty tensors (shapes (0, 3), (3, 0),
(0, 0)) against PyTorch's: the result's shape, dtype and values (NaN where PyTorch gives NaN),
the gradient's shape, the error (type and message) where PyTorch raises, and the warnings,
which name the caller's line. (median of an empty tensor had raised a ValueError from its
backward, nanmedian's and aminmax's messages and kthvalue's error on an empty dimension were
not PyTorch's, and std's degrees-of-freedom warning named a line inside leafgrad.)"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

OPS = {
 'sum': lambda T, x: x.sum(), 'mean': lambda T, x: x.mean(), 'mean0': lambda T, x: x.mean(0), 'mean1': lambda T, x: x.mean(1), 'std': lambda T, x: x.std(),
 'var1': lambda T, x: x.var(1), 'prod': lambda T, x: x.prod(), 'prod1': lambda T, x: x.prod(1), 'max': lambda T, x: x.max(), 'max1': lambda T, x: x.max(1).values,
 'amax1': lambda T, x: x.amax(1), 'amax0': lambda T, x: x.amax(0), 'argmax': lambda T, x: x.argmax(), 'logsumexp1': lambda T, x: x.logsumexp(1), 'logsumexp0': lambda T, x: x.logsumexp(0),
 'softmax1': lambda T, x: x.softmax(1), 'log_softmax0': lambda T, x: x.log_softmax(0), 'norm': lambda T, x: x.norm(), 'norm1': lambda T, x: x.norm(dim=1),
 'cumsum1': lambda T, x: x.cumsum(1), 'cumprod0': lambda T, x: x.cumprod(0), 'sort1': lambda T, x: x.sort(1).values, 'topk0': lambda T, x: x.topk(0, 1).values,
 'median': lambda T, x: x.median(), 'median1': lambda T, x: x.median(1).values, 'min1': lambda T, x: x.min(1).values, 'matmul': lambda T, x: x @ x.t(), 'matmul2': lambda T, x: x.t() @ x,
 'mm_empty_k': lambda T, x: x.t() @ x, 'linear': lambda T, x: T.nn.functional.linear(x, T.ones(2, x.shape[1])), 'layer_norm': lambda T, x: T.nn.functional.layer_norm(x, (x.shape[1],)),
 'cross_entropy': lambda T, x: T.nn.functional.cross_entropy(x, T.zeros(x.shape[0], dtype=T.long)) if x.shape[1] else T.nn.functional.cross_entropy(x.t(), T.zeros(x.shape[1], dtype=T.long)),
 'mse': lambda T, x: T.nn.functional.mse_loss(x, x * 2), 'nll': lambda T, x: T.nn.functional.nll_loss(x, T.zeros(x.shape[0], dtype=T.long)),
 'bce': lambda T, x: T.nn.functional.binary_cross_entropy(x.sigmoid(), x.sigmoid().detach()), 'l1': lambda T, x: T.nn.functional.l1_loss(x, x * 0),
 'cat': lambda T, x: T.cat([x, x]), 'stack': lambda T, x: T.stack([x, x]), 'index_select': lambda T, x: x.index_select(0, T.tensor([], dtype=T.long)),
 'gather': lambda T, x: x.gather(1, T.zeros(x.shape[0], 0, dtype=T.long)), 'masked': lambda T, x: x[x > 0], 'nonzero': lambda T, x: T.nonzero(x),
 'unique': lambda T, x: T.unique(x), 'quantile': lambda T, x: T.quantile(x, 0.5), 'nanmean': lambda T, x: x.nanmean(), 'var_mean': lambda T, x: T.var_mean(x, 1)[0],
 'min_all': lambda T, x: x.min(), 'aminmax': lambda T, x: T.aminmax(x).min, 'mode1': lambda T, x: x.mode(1).values, 'kthvalue': lambda T, x: x.kthvalue(1, 1).values,
 'cdist': lambda T, x: T.cdist(x, x), 'einsum': lambda T, x: T.einsum('ij,ij->', x, x), 'det': lambda T, x: T.linalg.det(x[:, :0][:0]),
 'inv_empty': lambda T, x: T.linalg.inv(x.reshape(0, 0) if x.numel() == 0 and False else T.zeros(0, 0, requires_grad=True)), 'trace': lambda T, x: x.trace(),
 'diag': lambda T, x: x.diag(), 'tril': lambda T, x: x.tril(), 'flip': lambda T, x: x.flip(0), 'roll': lambda T, x: x.roll(1, 0), 'repeat': lambda T, x: x.repeat(2, 3),
 'expand': lambda T, x: x[:, :1].expand(-1, 3) if x.shape[1] else x, 'chunk': lambda T, x: T.cat(x.chunk(2, 1), 1) if x.shape[1] else x.chunk(2, 0)[0], 'split': lambda T, x: x.split(1, 0)[0] if x.shape[0] else x,
 'batch_norm': lambda T, x: T.nn.functional.batch_norm(x, None, None, training=True), 'group_norm': lambda T, x: T.nn.functional.group_norm(x.unsqueeze(-1), 1),
 'dropout': lambda T, x: T.nn.functional.dropout(x, 0.5), 'conv1d': lambda T, x: T.nn.functional.conv1d(x.unsqueeze(0), T.ones(1, x.shape[0], 1)) if x.shape[0] else x,
 'embedding_bag': lambda T, x: x, 'interp': lambda T, x: T.nn.functional.interpolate(x.unsqueeze(0), scale_factor=2.0), 'max_pool': lambda T, x: T.nn.functional.max_pool1d(x.unsqueeze(0), 1),
 'adaptive_avg': lambda T, x: T.nn.functional.adaptive_avg_pool1d(x.unsqueeze(0), 1), 'pad': lambda T, x: T.nn.functional.pad(x, (1, 1)), 'cosine_sim': lambda T, x: T.nn.functional.cosine_similarity(x, x),
 'normalize': lambda T, x: T.nn.functional.normalize(x), 'sdpa': lambda T, x: T.nn.functional.scaled_dot_product_attention(x.unsqueeze(0), x.unsqueeze(0), x.unsqueeze(0)),
 'logcumsumexp': lambda T, x: x.logcumsumexp(1), 'cummax': lambda T, x: x.cummax(1).values, 'histc': lambda T, x: T.histc(x.detach()), 'bincount': lambda T, x: T.bincount(T.zeros(0, dtype=T.long)),
 'searchsorted': lambda T, x: T.searchsorted(T.zeros(0), T.zeros(3)), 'std_mean0': lambda T, x: T.std_mean(x, 0)[0], 'count_nonzero': lambda T, x: T.count_nonzero(x),
 'all': lambda T, x: T.all(x), 'any1': lambda T, x: T.any(x, 1), 'argsort': lambda T, x: x.argsort(1), 'renorm': lambda T, x: x.renorm(2, 0, 1.0),
 'clamp': lambda T, x: x.clamp(0, 1), 'where': lambda T, x: T.where(x > 0, x, 0.0), 'outer': lambda T, x: T.outer(x.reshape(-1), x.reshape(-1)),
}

SHAPES = [(0, 3), (3, 0), (0, 0)]


def _run(T, name, shape):
    x = T.zeros(shape, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            y = OPS[name](T, x)
            said = ('ran', tuple(y.shape), str(y.dtype).split('.')[-1])
            if y.requires_grad and y.is_floating_point():
                y.sum().backward()
                said += (tuple(x.grad.shape) if x.grad is not None else None,)
            if y.numel() and y.is_floating_point():
                said += (str(np.round(y.detach().double().numpy(), 4).tolist()),)
        except Exception as e:
            said = ('raised', type(e).__name__, str(e))
    return said, sorted({(w.category.__name__, w.filename == __file__) for w in caught})


@pytest.mark.parametrize('shape', SHAPES, ids=['0x3', '3x0', '0x0'])
@pytest.mark.parametrize('name', sorted(OPS))
def test_an_empty_tensor_as_in_pytorch(name, shape):
    assert _run(lg, name, shape) == _run(torch, name, shape)


# ---- pooling, interpolation, unfold, grid_sample, attention, group norm of empty tensors ----------

def _shapes_with_an_empty_dim(nsp):
    """Every shape of an unbatched and a batched input with one dimension empty (size 2 elsewhere)."""
    shapes = []
    for batched in (False, True):
        n = nsp + 2 if batched else nsp + 1
        for empty in range(n):
            shape = [2] * n
            shape[empty] = 0
            shapes.append(tuple(shape))
    return shapes


def _poolings(F, nsp):
    return {
        1: {'max': F.max_pool1d, 'avg': F.avg_pool1d, 'lp': lambda x, k: F.lp_pool1d(x, 2, k),
            'adaptive_max': lambda x, k: F.adaptive_max_pool1d(x, 1), 'adaptive_avg': lambda x, k: F.adaptive_avg_pool1d(x, 1),
            'adaptive_avg to 3': lambda x, k: F.adaptive_avg_pool1d(x, 3)},
        2: {'max': F.max_pool2d, 'avg': F.avg_pool2d, 'lp': lambda x, k: F.lp_pool2d(x, 2, k),
            'adaptive_max': lambda x, k: F.adaptive_max_pool2d(x, 1), 'adaptive_avg': lambda x, k: F.adaptive_avg_pool2d(x, 1),
            'adaptive_avg to 3': lambda x, k: F.adaptive_avg_pool2d(x, 3)},
        3: {'max': F.max_pool3d, 'avg': F.avg_pool3d, 'adaptive_max': lambda x, k: F.adaptive_max_pool3d(x, 1),
            'adaptive_avg': lambda x, k: F.adaptive_avg_pool3d(x, 1), 'adaptive_avg to 3': lambda x, k: F.adaptive_avg_pool3d(x, 3)},
    }[nsp]


def _outcome(T, make):
    """What ``make(x)`` gives for each input: its shape and the gradient's, or the error."""
    def run(shape):
        x = T.zeros(shape, requires_grad=True)
        try:
            r = make(x)
            r.sum().backward()
            return ('ran', tuple(r.shape), tuple(x.grad.shape), str(np.round(r.detach().double().numpy(), 4).tolist()))
        except Exception as e:
            return ('raised', type(e).__name__, str(e))
    return run


_POOLING_CASES = [(nsp, name, shape) for nsp in (1, 2, 3) for name in _poolings(lg.nn.functional, nsp)
                  for shape in _shapes_with_an_empty_dim(nsp)]


@pytest.mark.parametrize('nsp, name, shape', _POOLING_CASES, ids=[f'{n}d-{m}-{s}' for n, m, s in _POOLING_CASES])
def test_pooling_an_empty_tensor_as_pytorch(nsp, name, shape):
    """(NumPy's ValueErrors had come through, an empty plane had been pooled where PyTorch refuses
    it, and a global 3-d average of an empty plane had been 0, not NaN.)"""
    mine = _outcome(lg, lambda x: _poolings(lg.nn.functional, nsp)[name](x, 1))(shape)
    assert mine == _outcome(torch, lambda x: _poolings(torch.nn.functional, nsp)[name](x, 1))(shape)


_MODES = {1: ('nearest', 'linear', 'nearest-exact', 'area'), 2: ('nearest', 'bilinear', 'bicubic', 'area'),
          3: ('nearest', 'trilinear', 'area')}
_INTERPOLATIONS = [(nsp, mode, shape, sized) for nsp in (1, 2, 3) for mode in _MODES[nsp]
                   for shape in ((0, 2) + (3,) * nsp, (2, 0) + (3,) * nsp, (2, 2, 0) + (3,) * (nsp - 1),
                                 (0, 0) + (3,) * nsp) for sized in (False, True)]


@pytest.mark.parametrize('nsp, mode, shape, sized', _INTERPOLATIONS,
                         ids=[f'{n}d-{m}-{s}-{"size" if z else "scale"}' for n, m, s, z in _INTERPOLATIONS])
def test_interpolating_an_empty_tensor_as_pytorch(nsp, mode, shape, sized):
    def make(T):
        kw = {'size': (4,) * nsp} if sized else {'scale_factor': 2.0}
        return lambda x: T.nn.functional.interpolate(x, mode=mode, **kw)
    assert _outcome(lg, make(lg))(shape) == _outcome(torch, make(torch))(shape)


def _others(T):
    F = T.nn.functional
    return {
        'unfold': lambda x: F.unfold(x, 2), 'grid_sample': lambda x: F.grid_sample(
            x, T.zeros(x.shape[0], 2, 2, 2), align_corners=False),
        'sdpa': lambda x: F.scaled_dot_product_attention(x[0], x[0], x[0]),
        'group_norm': lambda x: F.group_norm(x, 1 if x.shape[1] % 2 else 2, T.ones(x.shape[1]) if x.shape[1] else None),
    }


_OTHER_CASES = [(name, shape) for name in sorted(_others(lg)) for shape in ((0, 2, 4, 4), (1, 0, 4, 4), (1, 2, 0, 4),
                                                                            (1, 2, 4, 0))]


@pytest.mark.parametrize('name, shape', _OTHER_CASES, ids=[f'{n}-{s}' for n, s in _OTHER_CASES])
def test_an_empty_tensor_through_unfold_grid_sample_attention_and_group_norm_as_pytorch(name, shape):
    """(NumPy's and Python's errors had come through: a reshape of 0 elements, a division by
    an empty embedding's size, an index into an empty plane.)"""
    assert _outcome(lg, _others(lg)[name])(shape) == _outcome(torch, _others(torch)[name])(shape)


def _unfold_refusals(T):
    said = []
    x = T.zeros(1, 2, 4, 5)
    for kw in ({'kernel_size': 0}, {'kernel_size': 2, 'stride': 0}, {'kernel_size': 2, 'dilation': 0},
               {'kernel_size': 2, 'padding': -1}, {'kernel_size': (6, 2)}, {'kernel_size': (1, 0)},
               {'kernel_size': 2, 'stride': 0, 'dilation': 0}, {'kernel_size': 2, 'stride': 0, 'padding': -1},
               {'kernel_size': (2, 6), 'dilation': (1, 2), 'padding': (1, 0)}):
        try:
            said.append(tuple(T.nn.functional.unfold(x, **kw).shape))
        except Exception as e:
            said.append((type(e).__name__, str(e)))
    return said


def test_unfold_checks_its_arguments_as_pytorch():
    """(A kernel, stride or dilation of 0, a negative padding, a kernel larger than the input had
    raised NumPy's and Python's errors or given a result.)"""
    assert _unfold_refusals(lg) == _unfold_refusals(torch)


_WRITTEN = {
    'an in-place op on a view of it, then backward': lambda T, x: _through_a_view(T, x),
    'masked_fill_': lambda T, x: x.narrow(0, 0, 0).sin().masked_fill_(T.tensor(True), 1.),
    'exp_': lambda T, x: x.narrow(0, 0, 0).sin().exp_(),
    'as_strided_scatter of an empty slice': lambda T, x: T.as_strided_scatter(T.zeros(3), T.zeros(0, 3), (0, 3), (0, 0)),
}


def _through_a_view(T, x):
    v = x.narrow(0, 0, 0).sin()
    v[...].sigmoid_()
    v.sum().backward()
    return x.grad


@pytest.mark.parametrize('name', list(_WRITTEN))
def test_writing_an_empty_tensor_as_pytorch(name):
    """An empty tensor overlaps nothing, whatever strides NumPy gives it ((0, 0) for the result
    of an op on one): an in-place op on a view of it is differentiated (CopySlices had refused
    it for internal overlap at backward), masked_fill_ does not warn about an expanded tensor,
    and as_strided_scatter writes an empty slice of stride 0 (it had been refused)."""
    def run(T):
        x = T.tensor([[0.4, 1.7, -0.3]], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            out = _WRITTEN[name](T, x)
        return tuple(out.shape), out.tolist(), [str(w.message) for w in caught]
    assert run(lg) == run(torch)
