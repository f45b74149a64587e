"""The foundation's ops against torch: values, dtypes, gradients, second derivatives, and a
float64 finite-difference check of every gradient."""
import math

import numpy as np
import pytest

from oracle import lg, torch


def positive(shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def normal(shape):
    return lambda rng: rng.standard_normal(shape)


def away_from_zero(shape):
    return lambda rng: rng.uniform(0.3, 2.0, shape) * rng.choice([-1, 1], shape)


# name, function of (module, *tensors), input generators, twice differentiable
OPS = [
    ('add', lambda T, a, b: a + b, [normal((3, 4)), normal((4,))], True),
    ('add_scalar', lambda T, a: 2.5 + a, [normal((3,))], True),
    ('add_alpha', lambda T, a, b: T.add(a, b, alpha=2), [normal((2, 3)), normal((2, 3))], True),
    ('sub', lambda T, a, b: a - b, [normal((2, 1, 3)), normal((4, 1))], True),
    ('rsub', lambda T, a: 1 - a, [normal((3,))], True),
    ('mul', lambda T, a, b: a * b, [normal((3, 4)), normal((3, 1))], True),
    ('mul_scalar', lambda T, a: a * 3, [normal((3,))], True),
    ('div', lambda T, a, b: a / b, [normal((3, 4)), away_from_zero((4,))], True),
    ('rdiv', lambda T, a: 2 / a, [away_from_zero((5,))], True),
    ('pow_scalar', lambda T, a: a ** 3, [normal((4,))], True),
    ('pow_half', lambda T, a: a ** 0.5, [positive((4,))], True),
    ('pow_tensor', lambda T, a, b: a ** b, [positive((3,)), normal((3,))], True),
    ('rpow', lambda T, a: 2 ** a, [normal((3,))], True),
    ('neg', lambda T, a: -a, [normal((2, 2))], True),
    ('exp', lambda T, a: T.exp(a), [normal((2, 3))], True),
    ('log', lambda T, a: T.log(a), [positive((2, 3))], True),
    ('sqrt', lambda T, a: T.sqrt(a), [positive((5,))], True),
    ('abs', lambda T, a: T.abs(a), [away_from_zero((5,))], True),
    ('tanh', lambda T, a: T.tanh(a), [normal((2, 3))], True),
    ('sigmoid', lambda T, a: T.sigmoid(a), [normal((2, 3))], True),
    ('relu', lambda T, a: T.relu(a), [away_from_zero((6,))], True),
    ('sin', lambda T, a: T.sin(a), [normal((4,))], True),
    ('cos', lambda T, a: T.cos(a), [normal((4,))], True),
    ('sum', lambda T, a: a.sum(), [normal((2, 3))], True),
    ('sum_dim', lambda T, a: a.sum(-1, keepdim=True), [normal((2, 3))], True),
    ('sum_dims', lambda T, a: a.sum((0, 2)), [normal((2, 3, 4))], True),
    ('mean', lambda T, a: a.mean(), [normal((2, 3))], True),
    ('mean_dim', lambda T, a: a.mean(1), [normal((2, 3, 2))], True),
    ('std', lambda T, a: a.std(0), [normal((4, 3))], True),
    ('matmul_dot', lambda T, a, b: a @ b, [normal((4,)), normal((4,))], True),
    ('matmul_mv', lambda T, a, b: a @ b, [normal((3, 4)), normal((4,))], True),
    ('matmul_vm', lambda T, a, b: a @ b, [normal((3,)), normal((3, 4))], True),
    ('matmul_mm', lambda T, a, b: a @ b, [normal((2, 3)), normal((3, 4))], True),
    ('matmul_batched', lambda T, a, b: a @ b, [normal((2, 2, 3)), normal((3, 4))], True),
    ('matmul_broadcast', lambda T, a, b: a @ b, [normal((2, 1, 2, 3)), normal((3, 3, 2))], True),
    ('reshape', lambda T, a: a.reshape(3, -1), [normal((2, 3))], True),
    ('view', lambda T, a: a.view(6), [normal((2, 3))], True),
    ('transpose', lambda T, a: a.transpose(0, 2), [normal((2, 3, 4))], True),
    ('t', lambda T, a: a.t(), [normal((2, 3))], True),
    ('T', lambda T, a: a.T, [normal((2, 3))], True),
    ('permute', lambda T, a: a.permute(2, 0, 1), [normal((2, 3, 4))], True),
    ('unsqueeze', lambda T, a: a.unsqueeze(-1), [normal((2, 3))], True),
    ('squeeze', lambda T, a: a.squeeze(), [normal((2, 1, 3))], True),
    ('squeeze_dim', lambda T, a: a.squeeze(1), [normal((2, 1, 3))], True),
    ('index_int', lambda T, a: a[1], [normal((3, 4))], True),
    ('index_slice', lambda T, a: a[:, 1:3], [normal((3, 4))], True),
    ('index_step', lambda T, a: a[::2, ..., None], [normal((5, 4))], True),
    ('index_mixed', lambda T, a: a[1, None, ::-1 if False else 2], [normal((3, 4))], True),
    ('index_ellipsis', lambda T, a: a[..., 0], [normal((2, 3, 4))], True),
    ('index_list', lambda T, a: a[[0, 2, 0]], [normal((3, 4))], True),
    ('index_mask', lambda T, a: a[a > 0], [normal((3, 4))], True),
]
IDS = [op[0] for op in OPS]


def inputs(gens, seed=0):
    rng = np.random.default_rng(seed)
    return [g(rng) for g in gens]


def run(T, fn, arrays, dtype):
    ts = [T.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    return ts, fn(T, *ts)


@pytest.mark.parametrize('name,fn,gens,twice', OPS, ids=IDS)
def test_forward_and_grads_match_torch(name, fn, gens, twice):
    arrays = inputs(gens)
    lts, lout = run(lg, fn, arrays, lg.float32)
    tts, tout = run(torch, fn, arrays, torch.float32)
    assert tuple(lout.shape) == tuple(tout.shape)
    assert lout.dtype.name == str(tout.dtype).split('.')[-1]
    np.testing.assert_allclose(lout.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert lout.grad_fn.name() == tout.grad_fn.name()
    weights = np.random.default_rng(1).standard_normal(tuple(tout.shape)).astype(np.float32)
    (lout * lg.tensor(weights)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    for a, b in zip(lts, tts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('name,fn,gens,twice', [op for op in OPS if op[3]], ids=[op[0] for op in OPS if op[3]])
def test_second_derivatives_match_torch(name, fn, gens, twice):
    arrays = inputs(gens)
    results = []
    for T in (lg, torch):
        ts, out = run(T, fn, arrays, T.float64)
        weights = T.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        grads = T.autograd.grad((out * weights).sum(), ts, create_graph=True)
        total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
        if not (isinstance(total, T.Tensor) and total.requires_grad):
            results.append([None] * len(ts))  # the first derivative is constant in the inputs
            continue
        second = T.autograd.grad(total, ts, allow_unused=True)
        results.append([None if s is None else (s.detach().numpy(force=True) if T is torch else s.numpy())
                        for s in second])
    lres, tres = results
    for a, b in zip(lres, tres):
        if b is None or a is None:
            assert a is None or not np.any(a), (a, b)
            continue
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize('name,fn,gens,twice', OPS, ids=IDS)
def test_gradcheck_float64(name, fn, gens, twice):
    ts = [lg.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in inputs(gens)]
    assert lg.autograd.gradcheck(lambda *xs: fn(lg, *xs), ts, rtol=1e-5, atol=1e-6)


def test_errors_match_torch():
    cases = [
        lambda T: T.ones(2, 3) @ T.ones(2, 3),
        lambda T: T.ones(2, 3).view(4),
        lambda T: T.ones(2, 3).reshape(5, -1),
        lambda T: T.ones(2, 3).transpose(0, 3),
        lambda T: T.ones(2, 3)[3],
        lambda T: T.ones(2, 3)[0, 0, 0],
        lambda T: T.ones(2, 3) + T.ones(3, 2),
        lambda T: T.ones(2, 3).sum(2),
        lambda T: T.ones(3).expand(2, 4),
        lambda T: T.ones(2, 3).t().view(6),
    ]
    for case in cases:
        try:
            case(torch)
        except Exception as e:
            texc = e
        else:
            raise AssertionError('torch did not raise')
        with pytest.raises(type(texc)):
            case(lg)


@pytest.mark.parametrize('op', ['tanh', 'sigmoid', 'relu', 'exp'])
def test_derivative_graph_names_match_torch(op):
    """Derivatives are ops of their own (tanh_backward …), recorded under create_graph."""
    names = []
    for T in (lg, torch):
        x = T.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        g, = T.autograd.grad(getattr(T, op)(x).sum(), x, create_graph=True)
        names.append(g.grad_fn.name().split('::')[-1])
    assert names[0] == names[1]


def test_sigmoid_extremes_without_warnings():
    import warnings
    x = np.array([-200., -90., -50., 0., 50., 200., np.inf, -np.inf], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        out = lg.sigmoid(lg.tensor(x)).numpy()
    np.testing.assert_allclose(out, torch.sigmoid(torch.tensor(x)).numpy(), rtol=1e-6, atol=1e-38)


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_sigmoid_fast_and_stable_paths_match_torch(dtype):
    """sigmoid takes 1/(1+exp(-x)) unless its smallest input would overflow exp: the smallest
    element is found in a transposed (non-contiguous) array too, and a NaN anywhere is kept."""
    import warnings
    cases = [np.array([[3., -1.], [0.5, -800.]]).T, np.array([[3., -1.], [0.5, -2.]]).T,
             np.array([[np.nan, -1.], [0.5, 2.]]), np.array([[1.0]]), np.zeros((0, 2))]
    for x in cases:
        x = x.astype(dtype)
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            got = lg.sigmoid(lg.tensor(x)).numpy()
        want = torch.sigmoid(torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == 'float16' else 1e-6, atol=1e-38)


@pytest.mark.parametrize('grad_mode', [False, True])
@pytest.mark.parametrize('op', ['add_', 'sub_', 'mul_', 'div_'])
def test_in_place_into_expanded_or_unbroadcastable_output_raises_like_torch(op, grad_mode):
    """In-place ops refuse a written-to tensor whose elements share memory (an expand) and an
    operand that broadcasts beyond it, with PyTorch's messages, and change nothing."""
    def run(T, make, operand):
        with T.set_grad_enabled(grad_mode):
            t = make(T)
            before = t.clone()
            try:
                getattr(t, op)(operand(T))
            except RuntimeError as e:
                return str(e), bool((t == before).all())
        raise AssertionError('did not raise')
    cases = [(lambda T: T.zeros(3).expand(2, 3), lambda T: 1.5),
             (lambda T: T.zeros(3).expand(2, 3), lambda T: T.ones(2, 3)),
             (lambda T: T.zeros(3), lambda T: T.ones(2, 3)),
             (lambda T: T.zeros(3), lambda T: T.ones(4)),
             (lambda T: T.zeros(2, 3), lambda T: T.ones(4, 1)),
             (lambda T: T.zeros(3), lambda T: T.ones(2, 3, dtype=T.float64))]
    for make, operand in cases:
        assert run(lg, make, operand) == run(torch, make, operand)


# ---- edge values (inf, -inf, nan, ±0, 1e30): PyTorch's values and gradients ----------------------

from both import EDGES, on_edges, same  # noqa: E402


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_logit_eps_gradient_is_zero_where_clamped(dtype):
    # 0 outside [eps, 1 - eps] even where the input is 0, 1 or inf; nan stays nan
    same(on_edges(lambda M, x: M.logit(M.sigmoid(x), eps=1e-6), dtype))
    # at a NaN input PyTorch's vector loop gives 0 (leafgrad's, everywhere), its scalar tail NaN: the
    # edge rows repeated to fill whole vector blocks of this machine, so that every NaN is in a lane
    size = len(EDGES) * len(EDGES[0])
    rows = EDGES * (math.lcm(size, _logit_vector_block(dtype)) // size)
    same(on_edges(lambda M, x: M.logit(x, eps=0.25), dtype, rows))


def _logit_vector_block(dtype):
    """The elements PyTorch's logit backward (eps given) takes at a time in its vector loop on this
    machine, its remainder going to the scalar tail: two vectors, 16 float32 or 8 float64 with AVX2,
    32 or 16 with AVX-512. Read from PyTorch: the fewest contiguous elements at which a NaN at
    element 0 gets the vector loop's 0 gradient rather than the scalar tail's NaN."""
    for n in range(1, 257):
        x = torch.full((n,), 0.5, dtype=getattr(torch, dtype))
        x[0] = float('nan')
        x.requires_grad_()
        torch.logit(x, eps=0.25).sum().backward()
        if x.grad[0] == 0:
            return n
    raise AssertionError("PyTorch's logit backward took no NaN in a vector lane")


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('op', ['topk', 'sort', 'argsort'])
def test_descending_order_puts_nan_before_inf(op, dtype):
    nan, inf = float('nan'), float('inf')
    rows = [[0., inf, nan, -inf, nan, 1., inf], [nan, inf, 2., nan, 1., inf, -inf], [inf, 1., nan, 2., inf, 0., 3.]]
    # (values only: among equal values PyTorch's topk does not promise which index it takes)
    fns = {'topk': lambda M, x: x.topk(2, 1).values.detach(), 'sort': lambda M, x: x.sort(dim=1, descending=True, stable=True).values,
           'argsort': lambda M, x: x.argsort(dim=1, descending=True, stable=True)}
    same(on_edges(fns[op], dtype, rows))
    if op == 'topk':
        same(on_edges(lambda M, x: x.topk(2, 0).values.detach(), dtype))


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('p', [float('inf'), -float('inf')])
@pytest.mark.parametrize('dim', [0, 1])
def test_inf_norm_gradient_zero_at_nan_norm(dim, p, dtype):
    # a NaN norm is hit by no element: 0, not 0 / 0
    same(on_edges(lambda M, x: M.linalg.vector_norm(x, p, dim=dim), dtype))


@pytest.mark.parametrize('fn', [lambda M, x: M.linalg.vector_norm(x, 0), lambda M, x: M.linalg.vector_norm(x, 0, dim=1),
                                lambda M, x: M.dist(x, M.zeros_like(x), 0)])
def test_zero_norm_has_no_gradient(fn):
    # PyTorch's derivative of the 0-"norm" is undefined: the input's .grad stays None
    def program(M):
        x = M.tensor([[1., 0., -2.], [float('nan'), float('inf'), 3.]], requires_grad=True)
        fn(M, x).sum().backward()
        return x.grad
    same(program)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_two_norm_over_dims_of_size_one_does_not_overflow(dtype):
    big = [[1e30], [-3e38], [1e-30], [float('inf')]] if dtype == 'float32' else [[1e200], [-1e300], [1e-200], [1.]]
    same(on_edges(lambda M, x: M.linalg.vector_norm(x, dim=1), dtype, big))
    same(on_edges(lambda M, x: M.linalg.vector_norm(x, dim=1, keepdim=True), dtype, big))
    same(on_edges(lambda M, x: M.nn.functional.triplet_margin_loss(x[:, :1], x[:, 1:2], x[:, 2:3], reduction='none'),
                  dtype))
