"""scaled_dot_product_attention's two CPU kernels, chosen as PyTorch chooses them: its flash
kernel (one ScaledDotProductFlashAttentionForCpuBackward0 node, saving the logsumexp) wherever
its conditions hold, else the math path (ending in _safe_softmax: a query its mask hides from
every key attends to nothing); nn.attention.sdpa_kernel, which switches them; the causal biases.
Values, gradients, nodes, saved tensors, warnings and errors against torch's."""
import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
from both import same  # noqa: E402

INF = float('inf')


def _inputs(M, shapes, dtype='float32', seed=0):
    rng = np.random.default_rng(seed)
    return [M.tensor(rng.standard_normal(s)).to(getattr(M, dtype)).requires_grad_() for s in shapes]


def _attend(M, shapes, dtype='float32', mask=None, **kwargs):
    """The output, its node's name, and each input's gradient of a weighted sum."""
    ts = _inputs(M, shapes, dtype)
    if mask is not None:
        mask = mask(M)
    out = M.nn.functional.scaled_dot_product_attention(*ts, attn_mask=mask, **kwargs)
    weights = M.tensor(np.sin(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=M.float32)
    (out.float() * weights).sum().backward()
    return [out.float(), type(out.grad_fn).__name__] + [t.grad.float() for t in ts]


def _rows_hidden(M):
    m = M.ones(4, 6, dtype=M.bool).tril()
    m[1] = False  # (query 1 sees no key)
    return m


Q, KV = (2, 3, 4, 8), (2, 3, 6, 8)
CASES = {
    'plain': dict(shapes=(Q, KV, KV)),
    'causal': dict(shapes=(Q, KV, KV), is_causal=True),
    'scale': dict(shapes=(Q, KV, KV), scale=0.3),
    'float64': dict(shapes=(Q, KV, KV), dtype='float64'),
    'bfloat16': dict(shapes=(Q, KV, KV), dtype='bfloat16'),
    'float16': dict(shapes=(Q, KV, KV), dtype='float16'),
    'gqa': dict(shapes=((2, 4, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8)), enable_gqa=True),
    'bool mask hiding a row': dict(shapes=(Q, KV, KV), mask=_rows_hidden),
    'float mask 4-d': dict(shapes=(Q, KV, KV), mask=lambda M: M.linspace(-1, 1, 24).reshape(1, 1, 4, 6).expand(2, 1, 4, 6)),
    # the math path: 3-d, a 3-d mask, other value width, dropout 0 on 3-d
    '3-d': dict(shapes=((3, 4, 8), (3, 6, 8), (3, 6, 8))),
    '3-d mask': dict(shapes=(Q, KV, KV), mask=lambda M: M.linspace(-1, 1, 72).reshape(3, 4, 6)),
    '3-d bool mask hiding a row': dict(shapes=((3, 4, 8), (3, 6, 8), (3, 6, 8)), mask=_rows_hidden),
    'value width differs': dict(shapes=(Q, KV, (2, 3, 6, 5))),
    'heads differ without gqa': dict(shapes=((2, 4, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8))),
}


@pytest.mark.parametrize('name', CASES)
def test_kernel_values_and_gradients_as_torch(name):
    case = dict(CASES[name])
    same(lambda M: _attend(M, **case))


def test_a_query_hidden_from_every_key_attends_to_nothing_on_both_paths():
    for shapes in ((Q, KV, KV), ((3, 4, 8), (3, 6, 8), (3, 6, 8))):
        out = same(lambda M: _attend(M, shapes, mask=_rows_hidden))
        assert not np.isnan(out[0][1][0].values).any()


def test_flash_node_saves_what_torch_saves():
    def saved(M, **kwargs):
        q, k, v = _inputs(M, (Q, KV, KV))
        g = M.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs).grad_fn
        mask = g._saved_attn_mask
        return [g._saved_logsumexp, g._saved_scale, g._saved_is_causal, g._saved_dropout_p,
                None if mask is None else (mask.dtype, mask.isinf().tolist()), g._saved_query.shape]
    same(lambda M: saved(M, is_causal=True, scale=0.5))
    same(lambda M: saved(M, attn_mask=_rows_hidden(M)))


def test_mask_that_requires_grad_takes_the_math_path():
    same(lambda M: _attend(M, (Q, KV, KV), mask=lambda M: M.zeros(4, 6, requires_grad=True)))


def test_flash_derivative_has_no_derivative_and_no_forward_rule():
    def second(M):
        q, k, v = _inputs(M, (Q, KV, KV))
        out = M.nn.functional.scaled_dot_product_attention(q, k, v)
        (g,) = M.autograd.grad(out.sum(), q, create_graph=True)
        g.sum().backward()
    same(second)

    def forward_mode(M):
        q = _inputs(M, (Q,))[0].detach()
        try:
            M.func.jvp(lambda x: M.nn.functional.scaled_dot_product_attention(x, x, x), (q,), (M.ones_like(q),))
        except NotImplementedError as e:
            return str(e).splitlines()[0]  # (PyTorch's second line asks for an issue at PyTorch)
    same(forward_mode, warnings_too=False)
    assert forward_mode(lg).startswith('Trying to use forward AD with _scaled_dot_product_flash_attention_for_cpu')


def test_gradcheck_of_the_flash_kernel():
    rng = np.random.default_rng(1)
    q = lg.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    k = lg.tensor(rng.standard_normal((1, 1, 5, 4)), requires_grad=True)
    v = lg.tensor(rng.standard_normal((1, 1, 5, 4)), requires_grad=True)
    mask = lg.tensor(rng.standard_normal((3, 5)))
    sdpa = lg.nn.functional.scaled_dot_product_attention
    assert type(sdpa(q, k, v, attn_mask=mask, enable_gqa=True).grad_fn).__name__.startswith('ScaledDotProductFlash')
    assert lg.autograd.gradcheck(lambda q, k, v: sdpa(q, k, v, attn_mask=mask, enable_gqa=True), (q, k, v))
    assert lg.autograd.gradcheck(lambda q, k, v: sdpa(q, k, v, is_causal=True, scale=0.7, enable_gqa=True), (q, k, v))


REFUSED = {  # what the flash kernel cannot take, each with the reason it gives
    'dropout': ((Q, KV, KV), dict(dropout_p=0.2)),
    '3-d': (((3, 4, 8), (3, 6, 8), (3, 6, 8)), {}),
    'batch': ((Q, (1, 3, 6, 8), (1, 3, 6, 8)), {}),
    'heads': (((2, 4, 4, 8), KV, KV), {}),
    'gqa heads': (((2, 4, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8)), dict(enable_gqa=True)),
    'value width': ((Q, KV, (2, 3, 6, 5)), {}),
}


@pytest.mark.parametrize('name', REFUSED)
def test_flash_alone_explains_why_it_cannot_run(name):
    shapes, kwargs = REFUSED[name]

    def program(M):
        with M.nn.attention.sdpa_kernel(M.nn.attention.SDPBackend.FLASH_ATTENTION):
            return M.nn.functional.scaled_dot_product_attention(*_inputs(M, shapes), **kwargs)
    assert same(program)[0][0] == 'raised'


def test_flash_alone_with_masks_and_strides_it_cannot_take():
    def program(M, make_mask=None, transposed=False):
        q, k, v = _inputs(M, (Q, KV, KV))
        if transposed:
            q, k, v = (t.detach().transpose(-1, -2).contiguous().transpose(-1, -2) for t in (q, k, v))
        with M.nn.attention.sdpa_kernel([M.nn.attention.SDPBackend.FLASH_ATTENTION]):
            return M.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None if make_mask is None else make_mask(M))
    same(lambda M: program(M, lambda M: M.zeros(3, 4, 6)))
    same(lambda M: program(M, lambda M: M.zeros(6)))
    same(lambda M: program(M, lambda M: M.zeros(4, 6, requires_grad=True)))
    same(lambda M: program(M, transposed=True))


def test_sdpa_kernel_switches_and_restores():
    def program(M):
        A = M.nn.attention
        cuda = M.backends.cuda
        seen = []
        with A.sdpa_kernel([A.SDPBackend.MATH, A.SDPBackend.EFFICIENT_ATTENTION]):
            seen.append([cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(), cuda.mem_efficient_sdp_enabled(),
                         cuda.cudnn_sdp_enabled()])
            q = _inputs(M, (Q,))[0]
            seen.append(type(M.nn.functional.scaled_dot_product_attention(q, q, q).grad_fn).__name__)
        seen.append([cuda.flash_sdp_enabled(), cuda.math_sdp_enabled()])
        with A.sdpa_kernel(A.SDPBackend.CUDNN_ATTENTION, set_priority=True):
            try:
                M.nn.functional.scaled_dot_product_attention(q, q, q)
            except RuntimeError as e:
                seen.append(str(e))
        seen.append([repr(A.SDPBackend.MATH), str(A.SDPBackend.FLASH_ATTENTION), int(A.SDPBackend.ERROR),
                     A.SDPBackend(2).name, list(A.SDPBackend.__members__), A.WARN_FOR_UNFUSED_KERNELS,
                     A.list_flash_attention_impls(), A.current_flash_attention_impl()])
        for bad in (3, 'math', None, (A.SDPBackend.MATH,)):
            try:
                with A.sdpa_kernel(bad):
                    pass
            except AssertionError as e:
                seen.append(str(e))
        return seen
    same(program)


def test_flash_attention_implementations_are_cuda_libraries():
    def program(M):
        A = M.nn.attention
        for impl in ('FA3', 'nope'):
            try:
                A.activate_flash_attention_impl(impl)
            except (ModuleNotFoundError, ValueError) as e:
                yield type(e).__name__, str(e)
    same(lambda M: list(program(M)))


def test_causal_biases():
    def program(M):
        from importlib import import_module
        bias = import_module(M.__name__ + '.nn.attention.bias')
        q, k, v = _inputs(M, ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)))
        sdpa = M.nn.functional.scaled_dot_product_attention
        lower, upper = bias.causal_lower_right(3, 5), bias.causal_upper_left(3, 5)
        out = [lower._materialize(), upper._materialize(), sdpa(q, k, v, attn_mask=lower),
               sdpa(q, k, v, attn_mask=upper), int(bias.CausalVariant.LOWER_RIGHT), repr(lower)]
        for bad in (lambda: sdpa(q, k, v, attn_mask=lower, is_causal=True), lambda: bias.causal_lower_right(3)):
            try:
                bad()
            except (ValueError, AssertionError) as e:
                out.append((type(e).__name__, str(e)))
        return out
    same(program)


def test_arguments_checked_before_a_kernel_is_chosen():
    def program(M, make):
        q = _inputs(M, (Q,))[0]
        return M.nn.functional.scaled_dot_product_attention(*make(M, q))
    same(lambda M: program(M, lambda M, q: (q, q.double(), q)))
    same(lambda M: program(M, lambda M, q: (q, q, q, M.zeros(4, 4, dtype=M.float64))))
    same(lambda M: program(M, lambda M, q: (q[0, 0, 0], q[0, 0, 0], q[0, 0, 0])))


def test_safe_softmax():
    def program(M, rows, dim=-1):
        x = M.tensor(rows, requires_grad=True)
        y = M._safe_softmax(x, dim)
        y.backward(M.ones_like(y) * M.arange(y.shape[-1]))
        return y, type(y.grad_fn).__name__, x.grad
    for rows in ([[-INF] * 3, [1., 2, 3]], [[float('nan'), -INF]], [[INF, -INF]], [[-INF, 0.]]):
        same(lambda M: program(M, rows))
    same(lambda M: program(M, [[-INF, 2.], [-INF, 1.]], 0))
