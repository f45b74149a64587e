"""Sparse COO tensors against PyTorch: construction, printing, conversions, the sparse @ dense
product and its gradients, sums, the arithmetic PyTorch runs on sparse tensors, and its errors
for the rest."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

warnings.filterwarnings('ignore', message='Sparse invariant checks')


def form(x):
    """What is compared: a sparse tensor by its printed form, a dense one by dtype, shape and
    values, anything else as it is."""
    if isinstance(x, (lg.Tensor, torch.Tensor)):
        if x.is_sparse:
            return repr(x).replace('leafgrad', 'torch')
        return (str(x.dtype).split('.')[-1], tuple(x.shape), np.round(x.detach().numpy().astype(float), 4).tolist())
    if isinstance(x, (tuple, list)):
        return [form(v) for v in x]
    if isinstance(x, (lg.Size, torch.Size)):
        return tuple(x)
    if isinstance(x, (lg.dtype, torch.dtype, lg.layout, torch.layout)):
        return str(x).replace('leafgrad', 'torch')
    return x


def outcome(program, M):
    try:
        return form(program(M))
    except Exception as e:  # (compared: the type and the message's first sentence)
        return type(e).__name__, str(e).split(' This could be')[0]


def same(program):
    ours, theirs = outcome(program, lg), outcome(program, torch)
    assert ours == theirs, f'\nleafgrad: {ours}\ntorch:    {theirs}'


def _s(M, dtype=None, coalesced=False, **kw):
    i = M.tensor([[1, 0, 1, 2], [0, 2, 0, 1]])
    v = M.tensor([1., 2., 3., -4.], dtype=dtype)
    s = M.sparse_coo_tensor(i, v, (3, 3), **kw)
    return s.coalesce() if coalesced else s


def _dense(M):
    return M.tensor([[0., 1.5, 0.], [2., 0., 0.], [0., 0., -3.]])


PROGRAMS = {
    'uncoalesced': lambda M: _s(M),
    'coalesce': lambda M: _s(M).coalesce(),
    'flags': lambda M: [(s.is_sparse, s.layout, s.sparse_dim(), s.dense_dim(), s._nnz(), s.is_coalesced(), s.shape,
                         s.size(), s.size(1), s.dim(), s.numel(), s.dtype, str(s.device), len(s))
                        for s in (_s(M), _s(M, coalesced=True), _dense(M).to_sparse(1))]
    + [_dense(M).is_sparse, _dense(M).layout, _dense(M).to_sparse().to_dense().is_sparse],
    'float64': lambda M: _s(M, dtype=M.float64),
    'dtype int64': lambda M: _s(M, dtype=M.float32, ).to(M.int64),
    'dtype argument': lambda M: M.sparse_coo_tensor(np.array([[0, 1, 1], [1, 0, 1]], dtype=np.int32), M.ones(3),
                                                    (2, 2), dtype=M.int64),
    'inferred size': lambda M: M.sparse_coo_tensor(M.tensor([[0, 3], [1, 0]]), M.tensor([1., 2.])).shape,
    'hybrid': lambda M: M.sparse_coo_tensor(M.tensor([[0, 2]]), M.tensor([[1., 2.], [3., 4.]])),
    'hybrid to_dense': lambda M: M.sparse_coo_tensor(M.tensor([[0, 2, 0]]), M.tensor([[1., 2.], [3., 4.], [5., 6.]]),
                                                     (3, 2)).to_dense(),
    'requires_grad': lambda M: _s(M, requires_grad=True),
    'is_coalesced argument': lambda M: _s(M, coalesced=True).is_coalesced(),
    'empty': lambda M: M.zeros(2, 3).to_sparse(),
    'legacy FloatTensor': lambda M: M.sparse.FloatTensor(M.tensor([[0, 2], [1, 0]]), M.tensor([1., 2.]), M.Size([3, 2])),
    'legacy FloatTensor keeps float64': lambda M: M.sparse.FloatTensor(M.tensor([[0, 1]]), M.tensor([1., 2.],
                                                                                                  dtype=M.float64)),
    'legacy empty': lambda M: M.sparse.FloatTensor(2, 3),
    'legacy LongTensor empty': lambda M: M.sparse.LongTensor(M.Size([4])),
    'legacy class name': lambda M: str(M.sparse.DoubleTensor).replace('leafgrad', 'torch'),
    'to_sparse': lambda M: _dense(M).to_sparse(),
    'to_sparse int': lambda M: M.tensor([[0, 7], [1, 0]]).to_sparse(),
    'to_sparse_coo': lambda M: _dense(M).to_sparse_coo(),
    'to_sparse(1)': lambda M: _dense(M).to_sparse(1),
    'to_sparse grad_fn': lambda M: _dense(M).requires_grad_().to_sparse(),
    'to_dense': lambda M: _s(M).to_dense(),
    'round trip': lambda M: _dense(M).to_sparse().to_dense(),
    'indices uncoalesced': lambda M: _s(M).indices(),
    'values uncoalesced': lambda M: _s(M).values(),
    'indices values': lambda M: (_s(M).coalesce().indices(), _s(M).coalesce().values()),
    '_indices _values': lambda M: (_s(M)._indices(), _s(M)._values()),
    'float()': lambda M: _s(M, dtype=M.float64).float(),
    'to(float64)': lambda M: _s(M).to(M.float64),
    'to(cpu)': lambda M: _s(M).to('cpu'),
    'detach': lambda M: _s(M, requires_grad=True).detach(),
    # products
    'mm': lambda M: M.mm(_s(M), _dense(M)),
    'spmm': lambda M: M.spmm(_s(M), _dense(M)),
    'matmul': lambda M: M.matmul(_s(M), _dense(M)),
    '@': lambda M: _s(M) @ _dense(M),
    'Tensor.mm': lambda M: _s(M).mm(_dense(M)),
    'sparse.mm': lambda M: M.sparse.mm(_s(M), _dense(M)),
    'mm rectangular': lambda M: M.mm(_s(M), M.arange(6.).reshape(3, 2)),
    'mm shape error': lambda M: M.mm(_s(M), M.ones(2, 2)),
    'mm dtype error': lambda M: M.mm(_s(M), M.ones(3, 2, dtype=M.float64)),
    'dense @ sparse': lambda M: M.arange(6.).reshape(2, 3) @ _s(M),
    'mm(dense, sparse)': lambda M: M.mm(M.arange(6.).reshape(2, 3), _s(M)),
    'matmul(dense, sparse)': lambda M: M.matmul(M.arange(6.).reshape(2, 3), _s(M)),
    'dense @ sparse shape error': lambda M: M.ones(2, 2) @ _s(M),
    'dense @ sparse dtype error': lambda M: M.ones(2, 3, dtype=M.float64) @ _s(M),
    'sparse @ vector': lambda M: _s(M) @ M.tensor([1., 2., 3.]),
    'vector @ sparse': lambda M: M.tensor([1., 2., 3.]) @ _s(M),
    'sparse @ sparse': lambda M: _s(M) @ _s(M),
    'sparse.mm sparse sparse': lambda M: M.sparse.mm(_s(M), _dense(M).to_sparse()),
    't': lambda M: _s(M).t(),
    't coalesced': lambda M: _s(M).coalesce().t(),
    't grad_fn': lambda M: _s(M, requires_grad=True).t(),
    'sparse @ dense @ sparse': lambda M: _s(M) @ _dense(M) @ _s(M).t(),
    # arithmetic
    'add uncoalesced': lambda M: _s(M) + _s(M) * 10,
    'add coalesced': lambda M: _s(M, coalesced=True) + _s(M, coalesced=True) * 10,
    'add mixed': lambda M: _s(M, coalesced=True) + _s(M) * 10,
    'add other pattern': lambda M: _s(M, coalesced=True) + _dense(M).to_sparse(),
    'dense + sparse': lambda M: M.eye(3) + _s(M),
    'dense + sparse int': lambda M: M.eye(3) + _s(M, dtype=M.float32).to(M.int64),
    'sparse + dense': lambda M: _s(M) + M.eye(3),
    'sub': lambda M: _s(M, coalesced=True) - _dense(M).to_sparse(),
    'dense - sparse': lambda M: M.eye(3) - _s(M),
    'index refused': lambda M: _s(M)[[0, 1]],
    'mul scalar': lambda M: _s(M) * 2,
    'rmul scalar': lambda M: 2.5 * _s(M),
    'div scalar': lambda M: _s(M) / 2,
    'neg': lambda M: -_s(M),
    'sparse.sum': lambda M: M.sparse.sum(_s(M)),
    'sparse.sum dim 0': lambda M: M.sparse.sum(_s(M), 0),
    'sparse.sum dim 1': lambda M: M.sparse.sum(_s(M), dim=1),
    'sparse.sum all dims': lambda M: M.sparse.sum(_s(M), (0, 1)),
    'Tensor.sum': lambda M: _s(M).sum(),
    'sparse.softmax 1': lambda M: M.sparse.softmax(_s(M), 1),
    'sparse.softmax 0': lambda M: M.sparse.softmax(_dense(M).to_sparse(), 0),
    'sparse.softmax rows': lambda M: M.sparse.softmax(M.sparse_coo_tensor(M.tensor([[0, 0, 1, 0], [0, 2, 1, 1]]),
                                                                          M.tensor([1., 2., 3., 0.5]), (2, 3)), 1),
    'sparse.log_softmax': lambda M: M.sparse.log_softmax(M.sparse_coo_tensor(M.tensor([[0, 0, 1], [0, 2, 1]]),
                                                                             M.tensor([1., 2., 3.]), (2, 3)), 1),
    'sparse.softmax hybrid': lambda M: M.sparse.softmax(M.sparse_coo_tensor(M.tensor([[0, 2]]),
                                                                            M.tensor([[1., 2.], [3., 4.]]), (3, 2)), 0),
    'sparse.softmax dense dim': lambda M: M.sparse.softmax(M.sparse_coo_tensor(M.tensor([[0, 2]]),
                                                                               M.tensor([[1., 2.], [3., 4.]]), (3, 2)), 1),
    'sparse.softmax dtype': lambda M: M.sparse.softmax(_s(M, dtype=M.float64), 1, dtype=M.float32),
    'sparse.softmax grad_fn': lambda M: M.sparse.softmax(_s(M, requires_grad=True), 1),
    # errors
    'exp': lambda M: _s(M).exp(),
    'view': lambda M: _s(M).view(9),
    'log_softmax': lambda M: M.log_softmax(_s(M), 1),
    'reshape': lambda M: _s(M).reshape(9),
    'numpy': lambda M: _s(M).numpy(),
    'size inconsistent': lambda M: M.sparse_coo_tensor(M.tensor([[0, 5]]), M.tensor([1., 2.]), (3,),
                                                       check_invariants=True),
    'negative index': lambda M: M.sparse_coo_tensor(M.tensor([[0, -1]]), M.tensor([1., 2.]), (3,),
                                                    check_invariants=True),
    'unchecked': lambda M: M.sparse_coo_tensor(M.tensor([[0, 5]]), M.tensor([1., 2.]), (3,)),
    'nnz mismatch': lambda M: M.sparse_coo_tensor(M.tensor([[0, 1]]), M.tensor([1., 2., 3.]), (3,)),
    'indices rank': lambda M: M.sparse_coo_tensor(M.tensor([0, 1]), M.tensor([1., 2.]), (3,)),
    'indices rank, size agreeing': lambda M: M.sparse_coo_tensor(M.tensor([0, 1]), M.tensor([1., 2.]), (3, 3)),
    'indices rank, no size': lambda M: M.sparse_coo_tensor(M.tensor([0, 1]), M.tensor([1., 2.])),
    'float indices': lambda M: M.sparse_coo_tensor(M.tensor([[0., 1.]]), M.tensor([1., 2.]), (3,)),
    'wrong ndim': lambda M: M.sparse_coo_tensor(M.tensor([[0, 1]]), M.tensor([1., 2.]), (3, 3)),
    'int requires_grad': lambda M: M.sparse_coo_tensor(M.tensor([[0, 1]]), M.tensor([1, 2]), (3,), requires_grad=True),
}


@pytest.mark.parametrize('name', PROGRAMS)
def test_sparse_like_torch(name):
    same(PROGRAMS[name])


def _grads(M, product, sparse_leaf=True):
    """The product's value, its grad_fn's name, and the gradients of both factors."""
    d = _dense(M).requires_grad_()
    s = _s(M, requires_grad=True) if sparse_leaf else _s(M)
    out = product(M, s, d)
    (out * M.arange(9.).reshape(3, 3)).sum().backward()
    return out, type(out.grad_fn).__name__, s.grad, d.grad


GRADS = {
    'mm': lambda M, s, d: M.mm(s, d),
    'spmm': lambda M, s, d: M.spmm(s, d),
    'matmul': lambda M, s, d: M.matmul(s, d),
    '@': lambda M, s, d: s @ d,
    'sparse.mm': lambda M, s, d: M.sparse.mm(s, d),
    'to_dense': lambda M, s, d: s.to_dense() * d,
    'dense + sparse': lambda M, s, d: d + s,
    'sparse add then mm': lambda M, s, d: M.sparse.mm(s + s, d),
    'scaled': lambda M, s, d: M.mm(s * 3, d),
    'coalesced': lambda M, s, d: M.sparse.mm(s.coalesce(), d),
    'dense @ sparse': lambda M, s, d: d @ s,
    'mm(dense, sparse.t())': lambda M, s, d: M.mm(d, s.t()),
    'sparse.t() @ dense': lambda M, s, d: s.t() @ d,
}


@pytest.mark.parametrize('name', GRADS)
def test_gradients_like_torch(name):
    same(lambda M: _grads(M, GRADS[name]))


def test_gradient_of_dense_factor_only():
    same(lambda M: _grads(M, GRADS['sparse.mm'], sparse_leaf=False))


def test_sparse_gradient_accumulates():
    def program(M):
        s, d = _s(M, requires_grad=True), _dense(M)
        M.sparse.mm(s, d).sum().backward()
        M.sparse.mm(s, d * 2).sum().backward()
        return s.grad.to_dense()
    same(program)


def test_gradient_through_to_sparse_and_values():
    def program(M):
        x = _dense(M).requires_grad_()
        v = M.tensor([1., 2., 3.], requires_grad=True)
        y = M.sparse_coo_tensor(M.tensor([[0, 2, 0], [1, 1, 1]]), v, (3, 3))
        out = M.mm(x.to_sparse(), _dense(M)) + M.sparse.mm(y, _dense(M))
        (out * M.arange(9.).reshape(3, 3)).sum().backward()
        return x.grad, v.grad, type(y.grad_fn).__name__
    same(program)


def test_cora_style_normalisation():
    """examples/gat's load_cora: a diagonal made sparse scales the features; an int64 adjacency
    built from a NumPy int32 edge list is added to the identity."""
    def program(M):
        features = M.tensor([[1., 0., 1.], [0., 0., 0.], [2., 1., 1.]])
        scale = 1 / M.sum(features, dim=1)
        scale[scale == float('inf')] = 0
        features = M.diag(scale).to_sparse() @ features
        edges = np.array([[0, 1], [1, 2], [0, 1]], dtype=np.int32)
        adj = M.sparse_coo_tensor(edges.T, M.ones(3), (3, 3), dtype=M.int64)
        return features, M.eye(3) + adj
    same(program)


def test_gcn_style_normalisation():
    """pytorch/examples gcn's load_cora: D^-1/2 (A + I) D^-1/2 with the diagonals sparse, then
    the features and the adjacency made sparse, and a layer's product with them."""
    def program(M):
        features = M.tensor([[1., 0., 1.], [0., 2., 0.], [2., 1., 1.]])
        edges = np.array([[0, 1], [1, 2], [2, 0]], dtype=np.int32)
        adj = M.eye(3) + M.sparse_coo_tensor(edges.T, M.ones(3), (3, 3), dtype=M.int64)
        degree = M.diag(M.sqrt(1 / M.sum(adj, dim=1))).to_sparse()
        adj = (degree @ adj @ degree).to_sparse()
        features = features.to_sparse()
        kernel = M.arange(6.).reshape(3, 2).requires_grad_()
        out = M.spmm(adj, M.mm(features, kernel))
        out.sum().backward()
        return adj, features, out, kernel.grad
    same(program)


@pytest.mark.parametrize('fn', ['softmax', 'log_softmax'])
def test_sparse_softmax_gradient(fn):
    def program(M):
        s = M.sparse_coo_tensor(M.tensor([[0, 0, 1, 1, 2], [0, 2, 1, 2, 0]]), M.tensor([1., 2., 3., 0.5, -1.]),
                                (3, 3), requires_grad=True)
        out = getattr(M.sparse, fn)(s, 1)
        (out.to_dense() * M.arange(9.).reshape(3, 3)).sum().backward()
        return out, s.grad
    same(program)


def _embedding_step(M, optimizer, padding_idx=None, **options):
    M.manual_seed(0)
    emb = M.nn.Embedding(5, 3, sparse=True, padding_idx=padding_idx)
    opt = getattr(M.optim, optimizer)(emb.parameters(), lr=0.1, **options)
    grads = []
    for idx in ([[0, 2], [2, 4]], [[1, 2]]):
        opt.zero_grad()
        (emb(M.tensor(idx)) * M.arange(3.)).sum().backward()
        grads.append(emb.weight.grad)
        opt.step()
    return grads, emb.weight


EMBEDDING = {
    'SGD': lambda M: _embedding_step(M, 'SGD'),
    'SGD padding_idx': lambda M: _embedding_step(M, 'SGD', padding_idx=2),
    'SGD momentum': lambda M: _embedding_step(M, 'SGD', momentum=0.9),
    'SGD maximize': lambda M: _embedding_step(M, 'SGD', maximize=True),
    'SGD weight_decay': lambda M: _embedding_step(M, 'SGD', weight_decay=0.1),
    'Adagrad': lambda M: _embedding_step(M, 'Adagrad'),
    'Adagrad weight_decay': lambda M: _embedding_step(M, 'Adagrad', weight_decay=0.1),
    'Adam': lambda M: _embedding_step(M, 'Adam'),
    'AdamW': lambda M: _embedding_step(M, 'AdamW'),
    'RMSprop': lambda M: _embedding_step(M, 'RMSprop'),
    'Rprop': lambda M: _embedding_step(M, 'Rprop'),
}


@pytest.mark.parametrize('name', EMBEDDING)
def test_embedding_sparse_gradient_and_optimizers(name):
    """nn.Embedding(sparse=True): a sparse weight gradient (the looked-up rows, listed as looked
    up), which SGD and Adagrad take and the other optimizers refuse, as PyTorch's."""
    same(EMBEDDING[name])


def test_sparse_grad_zeroed_in_place():
    def program(M):
        emb = M.nn.Embedding(4, 2, sparse=True)
        emb(M.tensor([1, 3, 1])).sum().backward()
        emb.zero_grad(set_to_none=False)
        return emb.weight.grad
    same(program)


def test_gradient_through_values():
    """values() of a coalesced tensor carries the gradient back to it (sparse, at its positions)."""
    def program(M):
        s = _dense(M).to_sparse().requires_grad_()
        u = _s(M, requires_grad=True)
        v, w = s.values(), u.coalesce().values()
        ((v * M.tensor([3., 4., 5.])).sum() + (w * w).sum()).backward()
        return v, w, type(v.grad_fn).__name__, s.grad, u.grad, s._values()
    same(program)


def test_float32_products_are_pytorchs_bits():
    """sparse @ dense, dense @ sparse and the dense factor's gradient (sparse.t() @ grad) in
    float32 are PyTorch's to the bit: each row's terms added in order, each product added
    exactly and rounded once (its fused multiply-add)."""
    rng = np.random.default_rng(0)
    flat = np.unique(rng.integers(0, 300 * 300, 4000))
    idx = np.stack(np.unravel_index(flat, (300, 300)))
    vals = rng.standard_normal(idx.shape[1]).astype(np.float32)
    d = rng.standard_normal((300, 8)).astype(np.float32)
    g = rng.standard_normal((300, 8)).astype(np.float32)
    results = []
    for M in (lg, torch):
        s = M.sparse_coo_tensor(M.tensor(idx), M.tensor(vals), (300, 300)).coalesce()
        x = M.tensor(d, requires_grad=True)
        out = M.sparse.mm(s, x)
        out.backward(M.tensor(g))
        results.append([out.detach().numpy(), x.grad.numpy(), (M.tensor(d.T.copy()) @ s).numpy()])
    for ours, theirs in zip(*results):
        assert np.array_equal(ours, theirs), int((ours != theirs).sum())


def test_legacy_constructors_warn_as_pytorchs():
    messages = []
    for M in (lg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            M.sparse.FloatTensor(M.tensor([[0, 1]]), M.tensor([1., 2.]), M.Size([3]))
            M.sparse.FloatTensor(M.tensor([[0, 1]]), M.tensor([1., 2.]), M.Size([3]))
            M.sparse.FloatTensor(2, 3)
        messages.append([str(w.message) for w in caught if 'deprecated' in str(w.message)])
    assert messages[0] == messages[1]
