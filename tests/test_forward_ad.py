"""Forward-mode AD (autograd.forward_ad and torch.func.jvp/jacfwd/hessian/linearize) against
torch: tangents of every op with a forward rule, float64 forward-mode gradcheck, dual tensors
through views and in-place ops, the API's errors."""
import warnings

import numpy as np
import pytest

from both import T, plain, same
from fwd_ops import OPS, inputs

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def _tangents(name, M):
    fn = OPS[name][0]
    xs = inputs(name, M)
    ts = inputs(name, M, seed=1)
    with M.autograd.forward_ad.dual_level():
        duals = [M.autograd.forward_ad.make_dual(x, t) for x, t in zip(xs, ts)]
        out = fn(M, *duals)
        primal, tangent = M.autograd.forward_ad.unpack_dual(out)
        return primal, tangent


@pytest.mark.parametrize('name', sorted(OPS))
def test_tangent_against_torch(name):
    ours, theirs = _tangents(name, lg), _tangents(name, torch)
    assert T(ours[0]) == T(theirs[0])
    assert T(ours[1]) == T(theirs[1]), (ours[1], theirs[1])


@pytest.mark.parametrize('name', sorted(set(OPS) - {'to float32'}))
def test_forward_gradcheck(name):
    fn = OPS[name][0]
    xs = [x.requires_grad_() for x in inputs(name, lg)]
    assert lg.autograd.gradcheck(lambda *a: fn(lg, *a), xs, check_forward_ad=True, check_backward_ad=False,
                                 check_batched_forward_grad=True)


GRADCHECK_SKIP = {'to float32'}  # (a float32 round trip: finite differences of 1e-6 lose it)


def _fw(M):
    return M.autograd.forward_ad


def _api_views_inplace(M):
    fw = _fw(M)
    with fw.dual_level():
        e = fw.make_dual(M.tensor([1.0, 2.0, 3.0]), M.tensor([1.0, 0.0, 0.0]))
        view = e[1:]
        view.mul_(fw.make_dual(M.tensor([2.0, 2.0]), M.tensor([1.0, 1.0])))
        f = M.zeros(3)
        f[1:].copy_(fw.make_dual(M.ones(2), M.ones(2) * 5))
        g = fw.make_dual(M.tensor([1.0, -2.0]), M.tensor([3.0, 4.0]))
        g.add_(g * 2)
        h = fw.make_dual(M.tensor([1.0, 2.0]), M.tensor([1.0, 1.0]))
        h.zero_()
        k = M.zeros(2, 3)
        k[0] = fw.make_dual(M.tensor([1.0, 2.0, 3.0]), M.tensor([4.0, 5.0, 6.0]))
        return (e, fw.unpack_dual(e).tangent, fw.unpack_dual(view).tangent, fw.unpack_dual(f).tangent,
                g, fw.unpack_dual(g).tangent, fw.unpack_dual(h).tangent, fw.unpack_dual(k).tangent)


def _api_modes(M):
    fw = _fw(M)
    with fw.dual_level():
        d = fw.make_dual(M.tensor([1.0, 2.0]), M.tensor([1.0, 1.0]))
        with M.no_grad():
            a = d * 3
        w = M.ones(2, requires_grad=True)
        z = w * d
        z.sum().backward()
        c, det = d.clone(), d.detach()
        return (fw.unpack_dual(a).tangent, a.requires_grad, z.requires_grad, type(z.grad_fn).__name__,
                fw.unpack_dual(z).tangent.detach(), w.grad, fw.unpack_dual(c).tangent, fw.unpack_dual(det).tangent,
                d.requires_grad, d.grad_fn is None)


def _api_unpack(M):
    fw = _fw(M)
    x = M.tensor([1.0, 2.0])
    outside = fw.unpack_dual(x)
    with fw.dual_level() as level:
        d = fw.make_dual(x, M.ones(2))
        u = fw.unpack_dual(d)
        plain = fw.unpack_dual(x)
        fields = type(u).__name__, u._fields, u.primal._base is x, u.primal is d
    after = fw.unpack_dual(d)
    return level, outside.tangent, u, plain.tangent, fields, after.tangent


def _api_float_tangent(M):
    fw = _fw(M)
    with fw.dual_level():
        d = fw.make_dual(M.tensor([1.0, 2.0]), M.ones(2, dtype=M.float64))
        return fw.unpack_dual(d).tangent, fw.unpack_dual(d * 2).tangent


def _custom_function(M):
    class Cube(M.autograd.Function):
        @staticmethod
        def forward(x, scale):
            return x ** 3 * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, scale = inputs
            ctx.save_for_forward(x)
            ctx.save_for_backward(x)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.scale, None

        @staticmethod
        def jvp(ctx, tx, _):
            (x,) = ctx.saved_tensors
            return tx * 3 * x ** 2 * ctx.scale

    class NoJvp(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    fw = _fw(M)
    x = M.tensor([1.0, 2.0])
    with fw.dual_level():
        y = Cube.apply(fw.make_dual(x, M.tensor([1.0, 0.5])), 2.0)
        xr = M.tensor([1.0, -1.0], requires_grad=True)
        yr = Cube.apply(fw.make_dual(xr, M.tensor([2.0, 2.0])), 1.0)
        yr.sum().backward()
        result = fw.unpack_dual(y).tangent, fw.unpack_dual(yr).tangent.detach(), xr.grad
        try:
            NoJvp.apply(fw.make_dual(x, M.ones(2)))
        except NotImplementedError as e:
            result += (str(e),)
        return result


def _api_repr(M):
    fw = _fw(M)
    out = []
    with fw.dual_level():
        d = fw.make_dual(M.tensor([1.0, 2.0]), M.tensor([3.0, 4.0]))
        e = fw.make_dual(M.tensor(1.5, dtype=M.float64), M.tensor(2.0, dtype=M.float64))
        r = fw.make_dual(M.tensor([1.0, 2.0], requires_grad=True), M.tensor([3.0, 4.0]))
        out += [repr(d), repr(d * 2), repr(d.sum()), repr(e), str(e), repr(r),
                repr(fw.make_dual(M.ones(2, 3), M.zeros(2, 3))), repr(fw.make_dual(M.ones(0), M.zeros(0))),
                repr(fw.make_dual(M.ones(3, dtype=M.float64) * 1e5, M.ones(3, dtype=M.float64) / 3))]
    out.append(repr(d))  # (the level closed: no tangent)
    return [text.replace(M.__name__ + '.', 'torch.') for text in out]


def _batched_forward_check(M):
    """gradcheck's batched forward-gradient check catches a forward rule that does not batch."""
    class ItemJvp(M.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, tx):
            return tx * 2 if float(tx.sum()) == float(tx.sum()) else tx
    x = M.tensor([1.0, 2.0], dtype=M.float64, requires_grad=True)
    plain = M.autograd.gradcheck(ItemJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    try:
        M.autograd.gradcheck(ItemJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False,
                             check_batched_forward_grad=True)
    except RuntimeError as e:  # (GradcheckError, around the error the vmapped rule raised, worded otherwise)
        head, _, tail = str(e).partition(': ')
        return plain, type(e).__name__, head, tail.split('\n\n', 1)[1]


API = {
    'make_dual outside a level': lambda M: _fw(M).make_dual(M.ones(2), M.ones(2)),
    'nested level': lambda M: [_fw(M).dual_level().__enter__() for _ in range(2)],
    'exit without a level': lambda M: _fw(M).exit_dual_level(),
    'tangent of another size': lambda M: _in_level(M, lambda fw: fw.make_dual(M.ones(2), M.ones(3))),
    'integer primal': lambda M: _in_level(M, lambda fw: fw.make_dual(M.tensor([1, 2]), M.ones(2))),
    'integer tangent': lambda M: _in_level(M, lambda fw: fw.make_dual(M.ones(2), M.tensor([1, 2]))),
    'views and in-place': _api_views_inplace, 'modes': _api_modes, 'unpack': _api_unpack,
    'float64 tangent': _api_float_tangent, 'custom Function jvp': _custom_function, 'repr': _api_repr,
    'batched forward gradcheck': _batched_forward_check,
    'batched forward gradcheck needs forward AD': lambda M: M.autograd.gradcheck(
        lambda a: a * 2, (M.ones(2, dtype=M.float64, requires_grad=True),), check_batched_forward_grad=True),
}


def _in_level(M, body):
    with _fw(M).dual_level():
        return body(_fw(M))


@pytest.fixture(autouse=True)
def _no_level_left():
    yield
    for M in (lg, torch):  # a test that failed inside a level leaves none open for the next
        while True:
            try:
                M.autograd.forward_ad.exit_dual_level()
            except RuntimeError:
                break


@pytest.mark.parametrize('name', sorted(API))
def test_api(name):
    same(API[name], warnings_too=False)  # (torch warns of its own jit.script on first use)


# ---- torch.func: jvp, jacfwd, hessian, linearize ------------------------------------------------

def _mlp_loss(M, w1, b1, w2, x):
    F = M.nn.functional
    return F.cross_entropy(F.linear(F.linear(x, w1, b1).tanh(), w2), M.tensor([0, 1, 1, 0]))


def _params(M):
    rng = np.random.default_rng(3)
    return [M.tensor(rng.standard_normal(s)) for s in ((5, 3), (5,), (2, 5), (4, 3))]


FUNC = {
    'jvp': lambda M: M.func.jvp(lambda x: (x.sin() * x).softmax(0), (M.tensor([0.5, -1.0, 2.0]),),
                                (M.tensor([1.0, 2.0, 3.0]),)),
    'jvp two outputs': lambda M: M.func.jvp(lambda a, b: (a * b, (a + b).exp()), (M.ones(2), M.tensor([1.0, 2.0])),
                                            (M.ones(2), M.zeros(2))),
    'jvp has_aux': lambda M: M.func.jvp(lambda x: (x * 2, x.sum()), (M.ones(2),), (M.ones(2),), has_aux=True),
    'jvp primals not a tuple': lambda M: M.func.jvp(lambda x: x, M.ones(2), (M.ones(2),)),
    'jvp structure': lambda M: M.func.jvp(lambda x: x, (M.ones(2),), [M.ones(2)]),
    'jvp shapes': lambda M: M.func.jvp(lambda x: x, (M.ones(2),), (M.ones(3),)),
    'jacfwd': lambda M: M.func.jacfwd(lambda x: (x.tanh() @ x) * x)(M.tensor([0.5, -1.0, 2.0])),
    'jacfwd argnums': lambda M: M.func.jacfwd(lambda a, b: a * b.sum(), argnums=(0, 1))(M.ones(2),
                                                                                     M.tensor([1.0, 2.0, 3.0])),
    'jacfwd has_aux': lambda M: M.func.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(M.tensor([0.0, 1.0])),
    'jacfwd = jacrev': lambda M: [M.func.jacfwd(_mlp_loss, argnums=(0, 2))(*_params(M)),
                                  M.func.jacrev(_mlp_loss, argnums=(0, 2))(*_params(M))],
    'jacfwd randomness': lambda M: M.func.jacfwd(lambda x: x, randomness='sometimes')(M.ones(2)),
    'hessian': lambda M: M.func.hessian(lambda x: (x.sin() * x).sum() + (x @ x).exp() * 0.01)(
        M.tensor([0.5, -1.0, 2.0])),
    'hessian of an mlp loss': lambda M: M.func.hessian(lambda w2: _mlp_loss(M, *_params(M)[:2], w2, _params(M)[3]))(
        _params(M)[2]),
    'hessian sigmoid relu': lambda M: M.func.hessian(lambda x: (x.sigmoid() * x.relu() + x.exp().log_softmax(0)).sum())(
        M.tensor([0.5, -1.0, 2.0])),
    'linearize': lambda M: _linearized(M),
}


def _linearized(M):
    out, fn = M.func.linearize(lambda x: x.sin().exp(), M.tensor([0.5, 1.0]))
    return out, fn(M.tensor([1.0, 0.0])), fn(M.tensor([0.0, 2.0]))


@pytest.mark.parametrize('name', sorted(FUNC))
def test_func_transforms(name):
    same(lambda M: _double(M, FUNC[name]), warnings_too=False)


def _double(M, program):
    previous = M.get_default_dtype()
    M.set_default_dtype(M.float64)
    try:
        return program(M)
    finally:
        M.set_default_dtype(previous)


@pytest.mark.parametrize('name', sorted(set(OPS) - {'to float32'}))
def test_jacfwd_against_torch(name):
    """jacfwd (vmap over the basis of tangents) of every program of the table, w.r.t. all its
    inputs, against torch.func.jacfwd."""
    def run(M):
        fn, xs = OPS[name][0], inputs(name, M)
        return M.func.jacfwd(lambda *a: fn(M, *a), argnums=tuple(range(len(xs))))(*xs)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # (an op without a batching rule: PyTorch's performance warning)
        ours = run(lg)
    assert plain(ours) == plain(run(torch))


def test_jacfwd_is_one_batched_forward_pass():
    """jacfwd calls f once, the tangents of all n input elements carried as one batch."""
    calls = []

    def f(a, b):
        calls.append(1)
        return (a.tanh() @ b) * a

    a, b = lg.tensor([0.5, -1.0, 2.0]), lg.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, 0.5], [2.0, 0.0, 1.0]])
    jac = lg.func.jacfwd(f, argnums=(0, 1))(a, b)
    assert len(calls) == 1
    expected = torch.func.jacfwd(lambda a, b: (a.tanh() @ b) * a, argnums=(0, 1))(torch.tensor(a.numpy()),
                                                                                  torch.tensor(b.numpy()))
    assert plain(jac) == plain(expected)


@pytest.mark.parametrize('name', ['lgamma', 'digamma', 'i0', 'erfinv', 'sinc', 'logit', 'expm1', 'sigmoid', 'sqrt',
                                  'exp2', 'log1p'])
def test_method_forms_carry_tangents_as_pytorch(name):
    """Tensor.<op>() under forward AD as leafgrad.<op>() and torch's: a function given out= by
    writes_out has its op as the method, which the forward-AD layer must wrap too (lgamma's,
    digamma's and i0's methods gave no tangent)."""
    x = np.array([0.3, 0.6], dtype=np.float64)
    got = []
    for T, F in ((lg, lg.autograd.forward_ad), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            d = F.make_dual(T.tensor(x), T.tensor([1.0, -2.0], dtype=T.float64))
            got.append([F.unpack_dual(getattr(d, name)()).tangent, F.unpack_dual(getattr(T, name)(d)).tangent])
    for ours, theirs in zip(got[0], got[1]):
        assert ours is not None
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10)


RESAMPLING = {
    'interpolate bilinear': lambda M, a: M.nn.functional.interpolate(a, size=(5, 6), mode='bilinear'),
    'interpolate bicubic antialias': lambda M, a: M.nn.functional.interpolate(a, size=(2, 3), mode='bicubic',
                                                                              antialias=True),
    'interpolate nearest': lambda M, a: M.nn.functional.interpolate(a, scale_factor=2),
    'interpolate area': lambda M, a: M.nn.functional.interpolate(a, size=(2, 2), mode='area'),
    'adaptive_avg_pool2d': lambda M, a: M.nn.functional.adaptive_avg_pool2d(a, (2, 3)),
}


@pytest.mark.parametrize('name', sorted(RESAMPLING))
def test_forward_over_reverse_through_resampling(name):
    """hessian (jacfwd of jacrev) and jvp of grad of a loss through interpolate or adaptive
    pooling: the derivative's own node carries the tangent (it was dropped: a zero Hessian)."""
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))

    def run(M):
        def loss(a):
            return (RESAMPLING[name](M, a) ** 2).sum()
        hessian = M.func.hessian(loss)(M.tensor(x))
        tangent = M.func.jvp(M.func.grad(loss), (M.tensor(x),), (M.tensor(np.cos(x)),))[1]
        return hessian, tangent
    assert plain(run(lg)) == plain(run(torch))


def _second_order(name, M):
    """hessian (jacfwd of jacrev) and jvp of grad, w.r.t. the first input, of a nonlinear
    scalar of the program's output (a linear one would hide a dropped tangent)."""
    fn, xs = OPS[name][0], inputs(name, M)
    w = M.tensor(np.random.default_rng(2).standard_normal(tuple(fn(M, *xs).shape)))

    def loss(*a):
        y = fn(M, *a)
        return ((y.real if y.is_complex() else y).sin() * w).sum()
    hessian = M.func.hessian(loss)(*xs)
    t = M.tensor(np.random.default_rng(3).standard_normal(tuple(xs[0].shape)))
    tangent = M.func.jvp(lambda x: M.func.grad(loss)(x, *xs[1:]), (xs[0],), (t,))[1]
    return hessian, tangent


@pytest.mark.parametrize('name', sorted(set(OPS) - {'to float32', 'huber sum', 'mse'}))  # (torch's own refusals)
def test_forward_over_reverse_against_torch(name):
    """The derivative's ops that record their own nodes (the embedding of a slice's, an index's,
    take's gradient; conv's, pooling's, pad's, embedding's, mean's derivatives) carry the
    tangent, and index_add and conj have forward rules: they were dropped (a wrong Hessian) or
    refused."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        ours = _second_order(name, lg)
    assert plain(ours) == plain(_second_order(name, torch))


NEW_RULES = {
    'index_add': lambda M, a, b: M.index_add(a, 1, M.tensor([2, 0]), b, alpha=1.5),
    'index_add source only': lambda M, a, b: M.index_add(a.detach(), 1, M.tensor([1, 1]), b),
    'take': lambda M, a, b: a.take(M.tensor([[0, 5], [5, 3]])) * b[0, 0],
    'masked_select': lambda M, a, b: a.masked_select(M.tensor([True, False, True])) + b.sum(),
    'index_put': lambda M, a, b: M.index_put(a, (M.tensor([1, 0]),), b[:, :1].expand(2, 3) * 3),
    'index_put accumulate': lambda M, a, b: M.index_put(a, (M.tensor([1, 1]),), b[0, 0] * 2, accumulate=True),
    'index_put_ of a number': lambda M, a, b: a.clone().index_put_((M.tensor([0]),), M.tensor(7.0, dtype=a.dtype)),
    'div floor': lambda M, a, b: M.div(a, b[0, 0] + 3, rounding_mode='floor') + a,
    'div_ trunc': lambda M, a, b: a.clone().div_(b[:, :1] + 3, rounding_mode='trunc'),
    't_ then mul_': lambda M, a, b: a[:, :2].clone().t_().mul_(b),
    'transpose_ and squeeze_': lambda M, a, b: a.clone().unsqueeze_(0).transpose_(1, 2).squeeze_(0) * 2,
    'conj of a complex intermediate': lambda M, a, b: (lambda z: z.real * z.imag ** 2)((a * 1j + b.sum()).conj()),
}


@pytest.mark.parametrize('name', sorted(NEW_RULES))
def test_forward_rules_of_indexing_and_conj(name):
    """jvp and jacfwd through index_add, take, masked_select, index_put, div with a rounding mode,
    conj, and the in-place reshaping ops t_, transpose_, squeeze_, unsqueeze_ (they were refused)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    ta, tb = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))

    def run(M):
        f = lambda x, y: NEW_RULES[name](M, x, y)  # noqa: E731
        out = M.func.jvp(f, (M.tensor(a), M.tensor(b)), (M.tensor(ta), M.tensor(tb)))
        if 'conj' in name:  # (torch's jacfwd has no batching rule for the imaginary part's view)
            return out
        if '_ ' in name:  # (jacfwd through an in-place reshaping op: still refused)
            return out
        return out, M.func.jacfwd(f, argnums=(0, 1))(M.tensor(a), M.tensor(b))
    assert plain(run(lg)) == plain(run(torch))


COMPLEX_UNARY = ['exp', 'sin', 'cos', 'tanh', 'sigmoid', 'log', 'sqrt', 'rsqrt', 'reciprocal', 'abs', 'angle', 'sgn',
                 'square', 'expm1', 'log1p', 'sinh', 'cosh', 'tan', 'asin', 'acos', 'atan', 'asinh', 'acosh', 'atanh',
                 'log2', 'log10', 'exp2', 'sinc', 'conj', 'conj_physical', 'neg']


@pytest.mark.parametrize('name', COMPLEX_UNARY)
def test_tangent_through_a_complex_intermediate(name):
    """jvp of a real function through an elementwise op of a complex intermediate: f'(z) t for
    a holomorphic op (the reverse rule multiplies by conj(f')), the real part for abs and
    angle, sgn's own rule (the tangent was conj(f') t, complex for abs; angle, conj refused)."""
    rng = np.random.default_rng(0)
    a, b, ta, tb = (rng.standard_normal(4) for _ in range(4))

    def run(M):
        def f(x, y):
            out = getattr(M, name)(x + y * 1j)
            return M.view_as_real(out.resolve_conj()) if out.is_complex() else out
        return M.func.jvp(f, (M.tensor(a), M.tensor(b)), (M.tensor(ta), M.tensor(tb)))
    assert plain(run(lg)) == plain(run(torch))


@pytest.mark.parametrize('transform', ['jvp', 'jacfwd', 'linearize'])
@pytest.mark.parametrize('dtype', ['int64', 'complex64', 'bfloat16'])
def test_forward_transforms_of_integer_complex_bfloat16_primals(transform, dtype):
    """An integer primal is PyTorch's ValueError (its tangent was zero), a complex one carries
    its tangent (jacfwd refuses it, as PyTorch's), a bfloat16 one carries its tangent (it was
    zero)."""
    def run(M):
        x = M.tensor([1.0, 2.0]).to(getattr(M, dtype))
        if transform == 'jvp':
            out = M.func.jvp(lambda a: a * 2, (x,), (x,))
        elif transform == 'jacfwd':
            out = (M.func.jacfwd(lambda a: a * 2)(x),)
        else:
            out = (M.func.linearize(lambda a: a * 2, x)[1](x),)
        return [(t.dtype, t.float()) for t in out]  # (NumPy has no bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        same(run, warnings_too=False)


# ops whose forward rules meet a complex primal: elementwise (holomorphic or real-valued),
# products, reductions through the reverse derivative (prod, norm), the real-valued statistics,
# and the linear algebra whose rules conjugate-transpose
COMPLEX_PRIMALS = ['abs', 'addmm', 'cholesky', 'conv2d', 'cumprod', 'det', 'eig vectors', 'eigh values', 'eigvalsh',
                   'exp', 'gather', 'inv', 'linear', 'logsumexp', 'matrix_exp', 'mean dims', 'norm', 'norm dim',
                   'pad reflect', 'pow tensor', 'prod', 'prod dim', 'prod with a zero', 'sigmoid', 'slogdet', 'solve',
                   'sqrt', 'std', 'sum dim', 'tanh', 'torch.slogdet', 'var']


@pytest.mark.parametrize('name', COMPLEX_PRIMALS)
def test_jvp_of_complex_primals_against_torch(name):
    fn, makers = OPS[name]

    def run(M):
        rng = np.random.default_rng(0)
        arrays = [make(rng) for make in makers]
        rng = np.random.default_rng(5)
        floats = [i for i, a in enumerate(arrays) if a.dtype.kind == 'f']
        primals = [M.tensor(a + 0.3j * rng.standard_normal(a.shape)) if i in floats else M.tensor(a)
                   for i, a in enumerate(arrays)]
        tangents = tuple(M.tensor(rng.standard_normal(arrays[i].shape) + 1j * rng.standard_normal(arrays[i].shape))
                         for i in floats)

        def f(*diff):
            full = list(primals)
            for i, v in zip(floats, diff):
                full[i] = v
            return fn(M, *full)
        return M.func.jvp(f, tuple(primals[i] for i in floats), tangents)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        assert plain(run(lg)) == plain(run(torch))


@pytest.mark.parametrize('name', ['qr Q', 'svd U', 'svdvals'])
def test_forward_rules_written_for_real_matrices_refuse_complex_ones(name):
    fn, makers = OPS[name]
    rng = np.random.default_rng(0)
    a = lg.tensor(makers[0](rng) + 0.5j)
    with pytest.raises(NotImplementedError, match='takes real matrices only'):
        lg.func.jvp(lambda x: fn(lg, x), (a,), (a,))


@pytest.mark.parametrize('primal, tangent', [('complex64', 'float32'), ('float32', 'complex64')])
def test_make_dual_of_complex_and_real_as_torch(primal, tangent):
    """A real tangent of a complex primal and the reverse are kept as given; an elementwise op's
    tangent is f'(z) t (a real-valued op's, the real part)."""
    def run(M):
        fw = M.autograd.forward_ad
        with fw.dual_level():
            p = M.tensor([1 + 1j, 2 - 1j, -0.5 + 2j]).to(getattr(M, primal))
            t = M.tensor([1.0, -2.0, 0.5]).to(getattr(M, tangent))
            d = fw.make_dual(p, t)
            return [fw.unpack_dual(d).tangent] + [fw.unpack_dual(y).tangent for y in (d.sin(), d.abs(), d.exp())]
    assert plain(run(lg)) == plain(run(torch))


def _closed_over(M):
    return M.tensor([1.5, -0.5, 2.0], requires_grad=True)


CONNECTED = {
    'jvp of grad': lambda M, x, t, w: M.func.jvp(M.func.grad(lambda a: a.sin().sum()), (x,), (t,)),
    'jvp of grad with aux': lambda M, x, t, w: M.func.jvp(
        lambda a: M.func.grad(lambda c: (c.sin().sum(), c.cos()), has_aux=True)(a)[1], (x,), (t,)),
    'jvp of vjp': lambda M, x, t, w: M.func.jvp(lambda a: M.func.vjp(lambda c: c.sin(), a)[1](t)[0], (x,), (t,)),
    'jvp of grad closing over': lambda M, x, t, w: M.func.jvp(M.func.grad(lambda a: (a.sin() * w).sum()), (x,), (t,)),
    'jacfwd closing over': lambda M, x, t, w: M.func.jacfwd(lambda a: a.sin() * w)(x),
    'hessian closing over': lambda M, x, t, w: M.func.hessian(lambda a: (a.sin() * w).sum())(x),
    'jacfwd of grad closing over': lambda M, x, t, w: M.func.jacfwd(M.func.grad(lambda a: (a.sin() * w).sum()))(x),
    'hessian': lambda M, x, t, w: M.func.hessian(lambda a: (a.sin() * a).sum())(x),
    'jacfwd of an input that requires grad': lambda M, x, t, w: M.func.jacfwd(lambda a: a.sin())(x.requires_grad_()),
    'vmap of jacfwd closing over': lambda M, x, t, w: M.func.vmap(M.func.jacfwd(lambda a: (a * w).sin()))(x),
    'vmap of jvp closing over': lambda M, x, t, w: M.func.vmap(
        lambda a, b: M.func.jvp(lambda c: (c * w).sin(), (a,), (b,)))(x, t),
}


@pytest.mark.parametrize('name', sorted(CONNECTED))
def test_forward_transforms_connect_to_autograd_as_torch(name):
    """Results require grad exactly where torch.func's do: a grad or vjp inside jvp left them
    recorded (requiring grad, .numpy() refused), jacfwd of a function closing over a tensor
    that requires grad cut them off."""
    def run(M):
        rng = np.random.default_rng(0)
        x, t = M.tensor(rng.standard_normal((2, 3))), M.tensor(rng.standard_normal((2, 3)))
        out = CONNECTED[name](M, x, t, _closed_over(M))
        leaves = out if isinstance(out, tuple) else (out,)
        return [(o.requires_grad, o.grad_fn is not None) for o in leaves], out
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        ours = run(lg)
    theirs = run(torch)
    assert ours[0] == theirs[0]
    assert plain(ours[1]) == plain(theirs[1])


@pytest.mark.parametrize('name', ['vmap of jacfwd closing over', 'vmap of jvp closing over'])
def test_gradient_through_forward_transforms_under_vmap_as_torch(name):
    """The tangents forward mode computes under vmap keep their history: a backward through
    them reaches the tensor f closes over, as torch.func's."""
    def run(M):
        rng = np.random.default_rng(0)
        x, t, w = M.tensor(rng.standard_normal((2, 3))), M.tensor(rng.standard_normal((2, 3))), _closed_over(M)
        out = CONNECTED[name](M, x, t, w)
        (out if isinstance(out, tuple) else (out,))[-1].pow(2).sum().backward()
        return w.grad
    assert plain(run(lg)) == plain(run(torch))


LAYOUTS = {
    'contiguous': lambda M: M.ones(2, 3), 'expanded': lambda M: M.tensor([1.0, 2.0, 3.0]).expand(2, 3),
    'expanded scalar': lambda M: M.tensor(2.0).expand(2, 3), 'transposed': lambda M: M.ones(3, 2).t(),
    'a slice of a larger storage': lambda M: M.arange(12.0).reshape(4, 3)[1:3],
}


@pytest.mark.parametrize('primal', ['contiguous', 'transposed'])
@pytest.mark.parametrize('tangent', sorted(LAYOUTS))
def test_make_dual_lays_the_tangent_out_as_its_primal(primal, tangent):
    """make_dual keeps the tangent given only where it is laid out as the primal; another one
    (an expanded tangent of stride 0, a transposed one, a slice) is copied into the primal's
    strides, as PyTorch's, so that an in-place op on the dual writes its tangent in place."""
    def run(M):
        with M.autograd.forward_ad.dual_level():
            p = M.arange(6.0).reshape(2, 3) if primal == 'contiguous' else M.arange(6.0).reshape(3, 2).t()
            t = LAYOUTS[tangent](M)
            dual = M.autograd.forward_ad.make_dual(p, t)
            kept = M.autograd.forward_ad.unpack_dual(dual).tangent
            layout = (kept is t, kept.stride())
            dual.mul_(3).sin_()
            return layout, M.autograd.forward_ad.unpack_dual(dual).tangent, t
    assert plain(run(lg)) == plain(run(torch))


@pytest.mark.parametrize('program', ['inverse', 'vander', 'slogdet'])
def test_tangent_of_an_op_made_of_ops_requires_no_grad(program):
    """An op that calls other ops (torch.inverse calls linalg.inv): its tangent, computed inside
    the outer call, records no graph unless an input truly requires grad (as torch's)."""
    fns = {'inverse': lambda M, x: M.inverse(x), 'vander': lambda M, x: M.linalg.vander(x[0]),
           'slogdet': lambda M, x: M.slogdet(x)[1]}
    for M in (lg, torch):
        x = M.eye(3, dtype=M.float64) * 2
        _, tangent = M.func.jvp(lambda a: fns[program](M, a), (x,), (M.ones(3, 3, dtype=M.float64),))
        assert not tangent.requires_grad


WHERE_TORCH_DIFFERS = {
    'cholesky_inverse': lambda M, a: M.cholesky_inverse(M.linalg.cholesky(a @ a.mT + 3 * M.eye(3, dtype=a.dtype))),
    'cholesky_inverse upper': lambda M, a: M.cholesky_inverse(a.triu() + 3 * M.eye(3, dtype=a.dtype), upper=True),
    'triangular_solve': lambda M, a: M.triangular_solve(a[:, :2], a + 3 * M.eye(3, dtype=a.dtype))[0],
    'triangular_solve transpose unit': lambda M, a: M.triangular_solve(a[:, :2], a, upper=False, transpose=True,
                                                                       unitriangular=True)[0],
}


@pytest.mark.parametrize('name', sorted(WHERE_TORCH_DIFFERS))
def test_tangent_against_torchs_finite_differences(name):
    """cholesky_inverse and triangular_solve: torch 2.13's forward rules disagree with torch's own
    finite differences (by 0.02 and 44 on these inputs); leafgrad's tangent is checked against
    the finite differences of torch's function and by forward-mode gradcheck."""
    fn = WHERE_TORCH_DIFFERS[name]
    rng = np.random.default_rng(0)
    a, t = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # (triangular_solve's deprecation)
        _, tangent = lg.func.jvp(lambda x: fn(lg, x), (lg.tensor(a),), (lg.tensor(t),))
        eps = 1e-6
        numeric = (fn(torch, torch.tensor(a + eps * t)) - fn(torch, torch.tensor(a - eps * t))) / (2 * eps)
        np.testing.assert_allclose(tangent.numpy(), numeric.numpy(), atol=1e-7)
        assert lg.autograd.gradcheck(lambda x: fn(lg, x), (lg.tensor(a, requires_grad=True),), check_forward_ad=True,
                                     check_backward_ad=False)


@pytest.mark.parametrize('driver', [None, 'gelsd'])
def test_lstsq_of_a_vector_carries_tangents_as_torch(driver):
    """linalg.lstsq with a vector B (not in the table: torch's vmap of it fails), solution and
    residuals."""
    rng = np.random.default_rng(0)
    a, b, ta, tb = (rng.standard_normal(s) for s in ((4, 3), (4,), (4, 3), (4,)))

    def run(M):
        return M.func.jvp(lambda x, y: tuple(M.linalg.lstsq(x, y, driver=driver))[:2], (M.tensor(a), M.tensor(b)),
                          (M.tensor(ta), M.tensor(tb)))
    assert plain(run(lg)) == plain(run(torch))


TANGENTS_THAT_REQUIRE_GRAD = {
    'sin': lambda M, d: d.sin(),
    'linear then tanh': lambda M, d: M.nn.functional.linear(d, d, None).tanh(),
    'softmax': lambda M, d: d.softmax(-1),
    'matmul then exp': lambda M, d: (d @ d).exp(),
    'in place': lambda M, d: d.clone().mul_(3).sin_(),
}


@pytest.mark.parametrize('name', sorted(TANGENTS_THAT_REQUIRE_GRAD) + ['func.jvp'])
def test_tangent_that_requires_grad_gives_a_differentiable_tangent(name):
    """A tangent that requires grad: the ops' forward rules run recorded, so the output's tangent
    is differentiable w.r.t. it (its primal stays without history), as PyTorch's."""
    def run(M):
        w = M.tensor([[1.0, 2.0], [-0.5, 0.3]], requires_grad=True)
        p = M.tensor([[0.3, -1.2], [2.0, 0.7]])
        if name == 'func.jvp':
            primal, tangent = M.func.jvp(lambda a: (a @ a).sin(), (p,), (w * 2,))
        else:
            fw = M.autograd.forward_ad
            with fw.dual_level():
                primal, tangent = fw.unpack_dual(TANGENTS_THAT_REQUIRE_GRAD[name](M, fw.make_dual(p, w * 2)))
        tangent.pow(2).sum().backward()
        return primal.requires_grad, tangent.requires_grad, w.grad
    assert plain(run(lg)) == plain(run(torch))
