"""The strides of views against torch's, dims of size 1 included: any stride is valid for such
a dim, and NumPy and PyTorch choose differently, but stride() shows PyTorch's choice and matmul
folds a batch into one mm (or not) by it. Each chain of views starts from a contiguous or a
transposed tensor; stride(), is_contiguous() and the values must be torch's."""
import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

STARTS = {
    'contiguous': lambda M: M.arange(6.0).reshape(2, 3),
    'transposed': lambda M: M.arange(6.0).reshape(3, 2).t(),
    'column': lambda M: M.arange(3.0).reshape(3, 1),
    'column of a transpose': lambda M: M.arange(6.0).reshape(2, 3).t()[:, :1],
    'row of a slice': lambda M: M.arange(12.0).reshape(4, 3)[::2][:1],
    'scalar': lambda M: M.tensor(2.0),
    'transposed column': lambda M: M.arange(3.0)[:, None].t(),
    'unsqueezed transpose': lambda M: M.arange(6.0).reshape(2, 3).t()[:, None],
}

CHAINS = {
    'unsqueeze(-1)': lambda x: x.unsqueeze(-1),
    'unsqueeze(0)': lambda x: x.unsqueeze(0),
    'unsqueeze(1)': lambda x: x.unsqueeze(min(1, x.dim())),
    'unsqueeze twice': lambda x: x.unsqueeze(-1).unsqueeze(0),
    '[..., None]': lambda x: x[..., None],
    '[None, ..., None]': lambda x: x[None, ..., None],
    't().unsqueeze(-1)': lambda x: x.t().unsqueeze(-1),
    'expand with a new dim of 1': lambda x: x.expand(1, *x.shape),
    'expand with new dims 2, 1': lambda x: x.expand(2, 1, *x.shape),
    'expand a dim of 1 to 2': lambda x: x.expand(*[2 if s == 1 else s for s in x.shape]) if x.dim() else x.expand(()),
    'unsqueeze, expand': lambda x: x.unsqueeze(0).expand(1, 2, *x.shape[1:]) if x.dim() else x.expand(1, 2),
    'view with a trailing 1': lambda x: x.contiguous().view(*x.shape, 1),
    'view of a column': lambda x: x.view(*x.shape, 1) if x.dim() and x.shape[-1] == 1 else x.reshape(-1, 1),
    'view, all ones': lambda x: x.reshape(-1)[:1].view(1, 1, 1),
    'reshape with 1s': lambda x: x.reshape(1, -1, 1),
    'reshape, trailing 1s of a column': lambda x: x.unsqueeze(-1).reshape(*x.shape, 1, 1),
    'unflatten(1, (-1, 1))': lambda x: x.unflatten(-1, (-1, 1)) if x.dim() else x.reshape(1),
    'flatten of a column': lambda x: x.unsqueeze(-1).flatten(-2) if x.dim() else x.flatten(),
    'permute after unsqueeze': lambda x: x.unsqueeze(-1).permute(*range(x.dim(), -1, -1)),
    'view to its own shape': lambda x: x.view(x.shape),
    'reshape to its own shape': lambda x: x.reshape(x.shape),
    'view_as itself': lambda x: x.view_as(x),
    'transpose, view to its own shape': lambda x: x.mT.view(x.mT.shape) if x.dim() >= 2 else x.view(x.shape),
}


@pytest.mark.parametrize('chain', sorted(CHAINS))
@pytest.mark.parametrize('start', sorted(STARTS))
def test_a_view_has_torchs_strides(start, chain):
    def run(M):
        try:
            y = CHAINS[chain](STARTS[start](M))
        except RuntimeError as e:
            return ('error', str(e))
        return y.stride(), tuple(y.shape), y.is_contiguous(), y.detach().numpy().tolist()
    assert run(lg) == run(torch)


def _leaf(M, n):
    return M.arange(float(n)).requires_grad_()


FOLDS = {  # products whose batch PyTorch folds into one mm (or not) by the larger operand's strides
    'vector @ unsqueezed transpose': lambda M: M.ones(3) @ _leaf(M, 9).reshape(3, 3).t().unsqueeze(-1),
    'unsqueezed row of a slice @ vector': lambda M: _leaf(M, 12).reshape(4, 3)[::2][:1].unsqueeze(-1) @ M.ones(1),
    'expanded column @ vector': lambda M: _leaf(M, 3).reshape(3, 1).expand(1, 3, 1) @ M.ones(1),
    'vector @ expanded transpose': lambda M: M.ones(2) @ _leaf(M, 4).reshape(2, 2).t().unsqueeze(-1).expand(2, 2, 1),
    'viewed column @ matrix': lambda M: _leaf(M, 6).reshape(2, 3).t()[:, :1].view(3, 1, 1) @ M.ones(1, 2),
}


def _graph(fn, depth=3):
    """The names of a node and of those it reaches, ``depth`` deep."""
    if fn is None or depth == 0:
        return None
    return type(fn).__name__, [_graph(f, depth - 1) for f, _ in fn.next_functions]


@pytest.mark.parametrize('case', sorted(FOLDS))
def test_matmul_folds_by_torchs_strides(case):
    """Folded: an mm or mv of the batch viewed as rows (MmBackward0, MvBackward0), or mv's
    error; not folded: a bmm (BmmBackward0), or bmm's error. Values and gradients agree."""
    def run(M):
        try:
            out = FOLDS[case](M)
        except RuntimeError as e:
            return ('error', str(e))
        return out.detach().numpy().tolist(), _graph(out.grad_fn)
    assert run(lg) == run(torch)


LAYOUTS = {
    'expanded': lambda M: M.arange(3.0).expand(2, 2, 3),
    'expanded column': lambda M: M.arange(3.0).reshape(3, 1).expand(3, 2),
    'sliced transpose': lambda M: M.arange(12.0).reshape(3, 4).t()[::2],
    'unsqueezed transpose': lambda M: M.arange(9.0).reshape(3, 3).t().unsqueeze(-1),
    'column of a transpose': lambda M: M.arange(6.0).reshape(2, 3).t()[:, :1],
    'sliced channels_last': lambda M: M.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1)[:, ::2],
    'strided vector': lambda M: M.arange(6.0)[::2],
    'permuted and expanded': lambda M: M.arange(6.0).reshape(2, 3).t().unsqueeze(1).expand(3, 4, 2),
}

COPIES = {
    'clone': lambda M, x: x.clone(),
    'empty_like': lambda M, x: M.empty_like(x),
    'zeros_like float32': lambda M, x: M.zeros_like(x, dtype=M.float32),
    'ones_like': lambda M, x: M.ones_like(x),
    'double()': lambda M, x: x.double(),
    'int()': lambda M, x: x.int(),
    'to(copy=True)': lambda M, x: x.to(M.float32, copy=True),
}


@pytest.mark.parametrize('copy', sorted(COPIES))
@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_a_preserved_copy_has_torchs_strides(layout, copy):
    """preserve_format (clone, *_like, a dtype conversion): a dense tensor's copy takes its very
    strides (dims of size 1 included); one that is not dense (broadcast, sliced) a dense layout
    in the order of its strides, where NumPy's order 'K' chose another order for a broadcast dim."""
    def run(M):
        y = COPIES[copy](M, LAYOUTS[layout](M))
        return y.stride(), y.is_contiguous(), y.dtype.itemsize
    assert run(lg) == run(torch)
    if not copy.endswith('_like'):
        np.testing.assert_array_equal(COPIES[copy](lg, LAYOUTS[layout](lg)).numpy(),
                                      COPIES[copy](torch, LAYOUTS[layout](torch)).numpy())


SHARED = {
    'unsqueezed transpose of a slice': lambda M, x: x[1:].t().unsqueeze(-1),
    'view of a column': lambda M, x: x[1:, :1].view(1, 2, 1),
    'expanded by a dim of 1': lambda M, x: x[1:].expand(1, 2, 4),
    'expanded column': lambda M, x: x[:, 1:2].expand(1, 3, 1),
}


@pytest.mark.parametrize('case', sorted(SHARED))
def test_a_restrided_view_shares_its_storage(case):
    """A view given PyTorch's strides is still a view of its base's storage: the offset, the
    storage's size, an in-place change seen by the base (an expand that only adds dims of size 1
    repeats no element: PyTorch writes through it)."""
    def run(M):
        x = M.arange(12.0).reshape(3, 4)
        y = SHARED[case](M, x)
        facts = (y.stride(), y.storage_offset(), y.untyped_storage().nbytes(),
                 y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
        y.add_(100)
        return facts, x.tolist(), x._version
    assert run(lg) == run(torch)


REARRANGED = {
    'roll(1, 0)': lambda M, x: x.roll(1, 0),
    'roll(2, -1)': lambda M, x: x.roll(2, -1),
    'roll((1, 1), (0, -1))': lambda M, x: x.roll((1, 1), (0, -1)),
    'roll(0, 1)': lambda M, x: x.roll(0, 1),
    'roll(1)': lambda M, x: x.roll(1),
    'flip(0)': lambda M, x: x.flip(0),
    'flip(0, -1)': lambda M, x: x.flip(0, -1),
    'flip()': lambda M, x: x.flip(()),
    'repeat(ones)': lambda M, x: x.repeat(*[1] * x.dim()),
    'repeat(2, ones)': lambda M, x: x.repeat(2, *[1] * x.dim()),
    'tile(1)': lambda M, x: x.tile((1,)),
    'repeat_interleave(2, 0)': lambda M, x: x.repeat_interleave(2, 0),
    'repeat_interleave(2, -1)': lambda M, x: x.repeat_interleave(2, -1),
}

REARRANGED_INPUTS = {
    'transposed': lambda M: M.arange(6.0).reshape(2, 3).t(),
    'sliced transpose': lambda M: M.arange(12.0).reshape(3, 4).t()[::2],
    'unsqueezed transpose': lambda M: M.arange(6.0).reshape(2, 3).t().unsqueeze(-1),
    'channels_last': lambda M: M.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=M.channels_last),
    'contiguous': lambda M: M.arange(6.0).reshape(2, 3),
}


@pytest.mark.parametrize('op', sorted(REARRANGED))
@pytest.mark.parametrize('layout', sorted(REARRANGED_INPUTS))
def test_a_rearranged_copy_is_laid_out_as_torch(layout, op):
    """roll is a cat of two narrows (contiguous, or channels_last where the input is), flip is
    laid out as empty_like(input), repeat, tile and repeat_interleave are contiguous: NumPy's
    roll and tile keep the input's order and its flip copy is C order, so is_contiguous() and
    view() differed (repeat_interleave of a transpose, a view of its clone, raised)."""
    def run(M):
        y = REARRANGED[op](M, REARRANGED_INPUTS[layout](M))
        return y.stride(), y.is_contiguous(), y.detach().numpy().tolist()
    assert run(lg) == run(torch)


SAMPLED_FROM = {
    'sliced transpose': lambda M: M.arange(1.0, 25.0).reshape(4, 6).t()[::2],
    'sliced channels_last': lambda M: M.arange(1.0, 121.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1)[:, ::2],
    'unsqueezed transpose': lambda M: M.arange(1.0, 10.0).reshape(3, 3).t().unsqueeze(-1),
    'expanded': lambda M: M.arange(1.0, 4.0).expand(2, 3),
}

SAMPLERS = {
    'rand_like': lambda M, x: M.rand_like(x),
    'randn_like': lambda M, x: M.randn_like(x),
    'randint_like': lambda M, x: M.randint_like(x, 7),
    'dropout': lambda M, x: M.nn.functional.dropout(x, 0.5),
    'alpha_dropout': lambda M, x: M.nn.functional.alpha_dropout(x, 0.5, True),
}


@pytest.mark.parametrize('sampler', sorted(SAMPLERS))
@pytest.mark.parametrize('layout', sorted(SAMPLED_FROM))
def test_draws_like_a_tensor_fill_torchs_layout_in_memory_order(layout, sampler):
    """PyTorch draws into empty_like(input) in memory order: for an input that is not dense that
    layout is dense in the order of the input's strides (it was C order here), so the same draws
    land on other elements."""
    def run(M):
        M.manual_seed(0)
        y = SAMPLERS[sampler](M, SAMPLED_FROM[layout](M))
        return y.stride() if sampler.endswith('_like') else None, y.numpy().tolist()
    assert run(lg) == run(torch)


NONZERO_OF = {
    'matrix': lambda M: M.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]]),
    'transposed': lambda M: M.tensor([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]]).t(),
    'vector': lambda M: M.tensor([0.0, 1.0, 2.0]),
    'nonzero scalar': lambda M: M.tensor(2.0),
    'zero scalar': lambda M: M.tensor(0.0),
    'all zeros': lambda M: M.zeros(2, 3),
}


@pytest.mark.parametrize('how', ['nonzero', 'argwhere', 'as_tuple', 'view(-1)'])
@pytest.mark.parametrize('of', sorted(NONZERO_OF))
def test_nonzero_is_laid_out_as_torch(of, how):
    """PyTorch's nonzero writes the indices of each dim in a row of an (ndim, n) tensor and
    returns its transpose (view(-1) raises); a 0-d tensor gives one index of no dims (NumPy
    refuses a 0-d array: its ValueError leaked)."""
    def run(M):
        x = NONZERO_OF[of](M)
        try:
            if how == 'as_tuple':
                return [t.tolist() for t in x.nonzero(as_tuple=True)]
            y = M.argwhere(x) if how == 'argwhere' else x.nonzero()
            if how == 'view(-1)':
                y = y.view(-1)
            return tuple(y.shape), y.stride() if y.numel() else None, y.tolist(), str(y.dtype)[-5:]
        except RuntimeError as e:
            return 'RuntimeError', str(e)
    assert run(lg) == run(torch)
