"""The memory layout of op results against torch's: stride(), and what programs see of it
(``.view(-1)`` works or raises as torch's, is_contiguous()). The inputs are permuted or
transposed tensors, whose results NumPy lays out otherwise than PyTorch's allocation rules:
reductions allocate their result contiguous, sorts keep the input's layout."""
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def _inputs(M, requires_grad=False):
    c = M.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)
    if requires_grad:
        c = c.detach().requires_grad_()
    return {'c': c, 'ci': M.arange(24).reshape(2, 3, 4).permute(2, 0, 1),
            'b': M.arange(12.).reshape(4, 3).t(), 'a': M.arange(12.).reshape(3, 4), 'M': M}


def _check(expr, requires_grad=False):
    got, want = (eval(expr, _inputs(M, requires_grad)) for M in (lg, torch))
    assert got.shape == tuple(want.shape)
    assert got.stride() == want.stride(), (got.stride(), want.stride())
    assert got.is_contiguous() == want.is_contiguous()
    try:
        want.view(-1)
    except RuntimeError:
        with pytest.raises(RuntimeError, match='view size is not compatible'):
            got.view(-1)
    else:
        assert got.view(-1).tolist() == pytest.approx(want.reshape(-1).tolist(), nan_ok=True)


# group A: reductions over dims allocate a contiguous result (keepdim too), whatever the input's layout
REDUCTIONS = [
    'c.sum(1)', 'c.sum(1, keepdim=True)', 'c.sum(-1)', 'ci.sum(1)', 'c.tanh().sum(1)',
    'c.sum(1, dtype=M.bfloat16)', 'c.mean(1)', 'c.mean(1, keepdim=True)', 'c.amax(1, keepdim=True)', 'c.amin(1)',
    'c.all(1)', 'c.any(1)', 'c.count_nonzero(1)', 'c.nansum(1)', 'c.nanmean(1)', 'c.var(1)', 'c.std(1)',
    'M.var_mean(c, 1)[0]', 'M.var_mean(c, 1)[1]', 'M.std_mean(c, 1)[0]', 'M.std_mean(c, 1)[1]', 'c.prod(1)',
    'c.logsumexp(1)', 'c.norm(dim=1)', 'M.linalg.vector_norm(c, dim=1)', 'M.linalg.vector_norm(c, 1, dim=1)',
    'c.aminmax(dim=1)[0]', 'c.aminmax(dim=1)[1]', 'c.nanmedian(1)[0]', 'c.nanmedian(1)[1]',
    'c.nanmedian(1, keepdim=True)[0]',
]


@pytest.mark.parametrize('expr', REDUCTIONS)
def test_reduction_results_are_contiguous(expr):
    _check(expr)


@pytest.mark.parametrize('expr', ['c.sum(1)', 'c.mean(1)', 'c.var(1)', 'c.prod(1)', 'c.amax(1)', 'c.logsumexp(1)'])
def test_reduction_results_are_contiguous_when_recorded(expr):
    _check(expr, requires_grad=True)


def test_view_of_a_permuted_sum_works():
    c = lg.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)
    assert c.sum(1).view(-1).tolist() == torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1).sum(1).view(-1).tolist()


# group B: sorts lay their values and indices out as the input (PyTorch's empty_like), as do the
# special functions' elementwise kernels; a non-dense input gives a dense result in its order
LIKE_INPUT = [
    'c.sort(1)[0]', 'c.sort(1)[1]', 'c.sort(2, descending=True)[0]', 'c.sort(dim=1, stable=True)[1]', 'c.argsort(1)',
    'M.argsort(c, dim=0, stable=True)', 'c.msort()', 'c[::2].sort(1)[0]', 'c[::2].argsort(2)', 'b.sort(0)[1]',
    'c.lgamma()', 'c.digamma()', 'c[::2].lgamma()', 'M.polygamma(1, c)', 'M.special.i0e(c)', 'M.special.entr(c)',
    'M.special.erfcx(c)', 'b.lgamma()',
]


@pytest.mark.parametrize('expr', LIKE_INPUT)
def test_results_laid_out_as_the_input(expr):
    _check(expr)


@pytest.mark.parametrize('expr', ['c.sort(1)[0]', 'c.lgamma()', 'c.digamma()'])
def test_results_laid_out_as_the_input_when_recorded(expr):
    _check(expr, requires_grad=True)


# group C: results PyTorch allocates contiguous whatever the input's layout
CONTIGUOUS = [
    'c.renorm(2, 1, 1.0)', 'b.renorm(2, 0, 1.0)', 'M.nn.functional.layer_norm(c, (3,))',
    'M.nn.functional.layer_norm(b, (4,), M.ones(4), M.zeros(4))', 'c.masked_fill(c > 3, 0)',
    'c.masked_fill(c > 3, M.tensor(0.))', 'c.masked_fill(M.tensor(True), 1)', '2 ** c', 'M.pow(2, c)', '2 ** b',
    'M.pow(2, ci)', 'M.pow(2.5, c[::2])', 'M.nn.functional.logsigmoid(c)', 'M.nn.functional.logsigmoid(b)',
    'M.nn.functional.rrelu(c)', 'M.nn.functional.rrelu(b, training=True)',
]


@pytest.mark.parametrize('expr', CONTIGUOUS)
def test_results_are_contiguous(expr):
    _check(expr)


@pytest.mark.parametrize('expr', ['c.renorm(2, 1, 1.0)', 'M.nn.functional.layer_norm(c, (3,))',
                                  'c.masked_fill(c > 3, 0)', '2 ** c', 'M.nn.functional.logsigmoid(c)',
                                  'M.nn.functional.rrelu(b)'])
def test_results_are_contiguous_when_recorded(expr):
    _check(expr, requires_grad=True)


# group E: an empty tensor's strides are the contiguous strides of its sizes (each at least 1)
EMPTY = ['M.empty(0, 3)', 'M.zeros(2, 0, 3)', 'M.ones(3, 0)', 'M.randn(0, 4)',
         'M.empty(0, 3, dtype=M.int64)', 'M.zeros(0, 3) + 1']


@pytest.mark.parametrize('expr', EMPTY)
def test_empty_tensor_strides(expr):
    got, want = (eval(expr, {'M': M}) for M in (lg, torch))
    assert got.stride() == want.stride()
    assert [got.stride(d) for d in range(got.dim())] == [want.stride(d) for d in range(want.dim())]
    assert got.is_contiguous() == want.is_contiguous()


# group D: an elementwise result of operands laid out differently is ordered as PyTorch's
# TensorIterator orders it (the first operand whose strides differ for a pair of dims decides)
ELEMENTWISE = [
    'b + a', 'b - a', 'b * a', 'b / a', 'b ** a', 'M.where(b > 3, a, b)', 'M.addcmul(b, a, a)', 'M.addcdiv(b, a, a + 1)',
    'M.maximum(b, a)', 'M.minimum(b, a)', 'M.fmax(b, a)', 'M.atan2(b, a)', 'b > a', 'b == a', 'b.add(a, alpha=2)',
    'b.sub(a, alpha=2)', 'M.xlogy(b, a)', 'M.logaddexp(b, a)', 'M.hypot(b, a)', 'M.copysign(b, a)',
    'b.long() & a.long()', 'b + a.long()', 'c + c.transpose(0, 2).contiguous().transpose(0, 2) * 0 + c.contiguous()',
    'M.nn.functional.normalize(c, dim=1)', 'c / c.sum(1, keepdim=True)', 'c.diff(dim=1)', 'c[:, :1] + c[:, :1]',
    'c[:, :1] > c[:, :1]',
]


@pytest.mark.parametrize('expr', ELEMENTWISE)
def test_elementwise_results_ordered_as_torch(expr):
    _check(expr)


@pytest.mark.parametrize('expr', ['b + a', 'b * a', 'M.where(b > 3, a, b)', 'M.addcmul(b, a, a)'])
def test_elementwise_results_ordered_as_torch_when_recorded(expr):
    got, want = (eval(expr.replace('b', 'bg'), {'bg': M.arange(12.).reshape(4, 3).t().detach().requires_grad_(),
                                                  'a': M.arange(12.).reshape(3, 4), 'M': M}) for M in (lg, torch))
    assert got.stride() == want.stride()
