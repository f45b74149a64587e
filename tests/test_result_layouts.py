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
