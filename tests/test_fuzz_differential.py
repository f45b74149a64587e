"""Differential fuzzing against torch: random programs (tests/fuzz_programs.py) of elementwise
ops, reductions, matmul, shape ops and views, indexing, in-place ops on views, hooks that change
gradients, retain_grad, detach, grad-mode switches, backward with retain_graph and
autograd.grad, run in leafgrad and in torch from the same inputs; everything a user could
observe must agree (values, gradients, retained gradients, hooks' arguments, is_leaf,
requires_grad, grad_fn names, version counters, exceptions and warnings).

CI runs a fixed, derandomized budget (``test_programs_agree_with_torch``). The long mode runs
``LEAFGRAD_FUZZ_EXAMPLES`` programs from random seeds, keeps going after a failure, minimizes
one program per kind of failure and reports them all::

    LEAFGRAD_FUZZ_EXAMPLES=100000 python -m pytest -q tests/test_fuzz_differential.py -k long

(``LEAFGRAD_FUZZ_SEED`` picks the first seed; ``LEAFGRAD_FUZZ_REPORT`` a file for progress and
the minimized programs.)
"""
import multiprocessing
import os
import queue
import time

import numpy as np
import pytest

torch = pytest.importorskip('torch')
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import leafgrad as lg  # noqa: E402
import fuzz_programs as fp  # noqa: E402


def _first_difference(lines, torch_log=None):
    mine = fp.run(lg, lines)
    theirs = fp.run(torch, lines) if torch_log is None else torch_log
    return fp.differences(mine, theirs)


def _report(lines, diff):
    i, mine, theirs = diff
    return (f'leafgrad and torch differ at record {i}\n  leafgrad: {mine}\n  torch:    {theirs}\n'
            f'program:\n{fp.source(lines)}')


@settings(max_examples=200, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_programs_agree_with_torch(data):
    lines, torch_log = fp.generate(fp.DrawChooser(data), torch, length=data.draw(st.integers(1, 14)))
    diff = _first_difference(lines, torch_log)
    assert diff is None or fp.known(lines, diff), _report(lines, diff)


def test_the_log_sees_what_differs():
    """The comparison notices a changed value, a changed gradient and a changed error."""
    lines = ['v0 = T.tensor([1.0, 2.0], requires_grad=True)', 'v1 = (v0 * v0).sum()', 'v1.backward()']
    log = fp.run(torch, lines)
    assert fp.differences(log, fp.run(torch, lines)) is None
    assert fp.differences(fp.run(torch, lines[:1] + ['v1 = (v0 * v0 * 1.001).sum()'] + lines[2:]), log)
    assert fp.differences(fp.run(torch, lines[:2] + ['v1.backward(); v0.grad.mul_(2)']), log)
    assert fp.differences(fp.run(torch, lines + ['v1.backward()']), fp.run(torch, lines + ['v0.foo()']))


def test_a_name_bound_again_to_an_engine_gradient_is_not_compared_by_version():
    """Seed 4017434: ``v0 = v3`` binds an old name to autograd.grad's result, whose version
    counter is the engine's business (PyTorch's summed into it in place); the log compared
    v0's version as if it were the old v0. A name bound again to anything else is compared."""
    lines = ["v0 = T.tensor([1.6, -0.1], dtype=T.float64, requires_grad=True)",
             'v1 = T.tensor([0.7, -0.7, 0.4], dtype=T.float32, requires_grad=True)', 'v2 = v1[v1 > 0]',
             'v3, = T.autograd.grad(v2.sum(), [v1], retain_graph=True, allow_unused=False, create_graph=False)',
             'v0 = v3']
    diff = _first_difference(lines)
    assert diff is None, _report(lines, diff)
    ns = fp.namespace(torch)
    for i, line in enumerate(lines + ['v0 = v1 * 1', 'v0.add_(1)']):
        fp.run_line(ns, line, i)
        assert ('v0' in ns['GRADS']) == (i == 4)


@pytest.mark.parametrize('seed,lines,matcher', [
    (5003797, ['v0 = T.tensor([[[1.5, -0.7, 1.5]], [[-1.0, 1.4, -0.1]]], dtype=T.float32, requires_grad=True)',
               'v1 = v0.cos()', 'v2 = v1.split(1, 2)[0]', 'v3 = v2.detach()', 'with T.enable_grad(): v1.add_(v3)'],
     '_is_inplace_over_its_own_view'),
    (5005847, ['v0 = T.tensor([[-1.7, -1.3, -0.1], [-1.8, -1.4, 0.2]], dtype=T.float64, requires_grad=True)',
               'with T.no_grad(), T.enable_grad(): v1 = v0 + v0', 'v2 = T.remainder(v1, v0)',
               'v3 = v2.amax(1, keepdim=False)', 'v5 = T.atan2(v3, v3)'], '_is_zero_of_another_sign'),
    (5008114, ['v0 = T.tensor([[[0.0, -0.8], [0.6, -1.4], [1.4, -1.6]], [[-0.8, 0.1], [-0.3, 1.4], [1.1, 1.0]]], '
               'dtype=T.float64, requires_grad=True)', 'v1 = v0.transpose(2, 0)',
               'v2 = T.tensor([[-0.3], [-0.2]]).round().long()', 'v4 = v1 * v0', 'v12 = v4 @ v2'], '_is_other_layout'),
    (5014909, ['v0 = T.tensor([[0.5, -0.4, 0.3], [0.7, 0.2, -1.2]], dtype=T.float64, requires_grad=True)',
               "v1 = T.tensor([[1.2, 2.0, 0.3], [float('inf'), -1.7, 1.7]], dtype=T.float32, requires_grad=True)",
               'v2 = T.sqrt(v1)', 'v5 = T.fmod(v0, v2)', 'v7, = T.autograd.grad(v5.sum(), [v1], retain_graph=True, '
               'allow_unused=True, create_graph=True)'], '_is_uncast_gradient'),
    (5029101, ['v0 = T.tensor([[-0.7, -0.4, 0.1], [0.1, 0.0, 1.2], [-0.1, -0.5, 0.5]], dtype=T.float32, '
               'requires_grad=True)', 'v1 = T.tensor([[[0.4, 1.7, -1.2]], [[1.4, 0.7, 0.4]]], dtype=T.float64, '
               'requires_grad=True)', 'v4 = v0.mean()', 'v8 = T.remainder(v1, v4)'], '_is_rounding_at_a_jump'),
    (6007147, ['v0 = T.tensor([[1.4, -1.9, -0.6], [-0.1, -1.0, -2.0]], dtype=T.float32, requires_grad=True)',
               'v1 = v0 ** 2', "v1.register_hook(H(2, 'clone'))", 'v2, v3, = T.autograd.grad(v1.sum(), [v0, v1], '
               'retain_graph=False, allow_unused=True, create_graph=True)',
               'v9 = T.tensor([[[-0.6, -0.9, -1.1]], [[-1.1, -1.1, 1.4]]], dtype=T.float32)', 'v3.div_(v9)'],
     '_is_capture_before_hooks'),
    (6019932, ["v0 = T.tensor([[[float('nan'), -0.6], [1.1, -1.0], [-0.0, -1.3]], [[1.1, 1.8], [-1.6, -1.6], "
               "[0.8, 0.4]]], dtype=T.float32, requires_grad=True)",
               'v1 = T.tensor([[-1.0, -1.1, 0.6], [0.9, 0.2, -1.2]], dtype=T.float32, requires_grad=True)',
               'v2 = v0.transpose(-2, 0)', 'v6 = v2 @ v1', 'with T.set_grad_enabled(False): v7 = T.sqrt(v6)'],
     '_is_pole_of_a_rounded_product'),
    (5027715, ['v0 = T.tensor([[-1.7, -1.2, -0.4], [1.6, -1.5, -0.1], [1.6, 1.4, 0.1]], dtype=T.float32, '
               'requires_grad=True)', 'v1, = T.autograd.grad(v0.sum(), [v0], retain_graph=False, allow_unused=True, '
               'create_graph=False)', 'v3 = v1.diagonal()', 'with T.no_grad(), T.enable_grad(): v11, v12 = '
               'v3.median(0, keepdim=True)'], '_is_torch_median_of_expanded'),
    (8002331, ['v0 = T.tensor([[-0.2, 2.0, 1.3], [-1.5, 1.4, 1.5], [0.3, -1.7, -0.1]], dtype=T.float64, '
               'requires_grad=True)', 'v1 = v0 @ v0', 'v3 = T.reciprocal(v1)'], '_is_pole_of_a_rounded_product'),
    (8006911, ['v0 = T.tensor([[0.4, 0.0, 1.7], [0.0, -1.3, 1.3], [-1.1, -0.1, 0.4]], dtype=T.float64, '
               'requires_grad=True)', 'v2 = v0.permute(0, 1)', 'with T.no_grad(): v0.pow_(0.5)',
               'v5 = T.nn.functional.hardtanh(v2)', 'T.autograd.backward([v5.sum()], retain_graph=True)'],
     '_is_clamp_gradient_at_nan_by_lane'),
    (12027861, ["v0 = T.tensor([[[-1.1, 1.0], [1.7, 0.8], [-0.1, -1.2]], [[-0.6, 0.1], [-0.8, 0.0], [1.8, -1.6]]], "
                'dtype=T.float32, requires_grad=True)', 'with T.no_grad(): v1 = T.minimum(v0, v0)', 'v3 = v1.sum()',
                'with T.enable_grad(): v4 = -1.5 / v3'], '_is_pole_of_a_rounded_product'),
    (12029536, ['v0 = T.tensor([[[0.9, 1.7, 0.0]], [[-1.6, 1.9, -1.4]]], dtype=T.float64, requires_grad=True)',
                'v1 = v0[v0 > 0]', 'with T.no_grad(): v2 = v0 @ v1', 'v3 = v2 @ v0', 'v4 = T.remainder(v2, v3)',
                'v5 = T.nn.functional.elu(v4)', 'v5.sum().backward(retain_graph=False)'],
     '_is_clamp_gradient_at_nan_by_lane'),
    (14004053, ['v0 = T.tensor([[-0.1, 1.0, -0.7], [-2.0, -1.6, -1.3], [-1.9, -1.9, 1.1]], dtype=T.float32, '
                'requires_grad=True)', 'v2 = v0 @ v0', 'with T.no_grad(), T.enable_grad(): v3 = v0 + v2',
                'v5 = v0[v3 > 0]'], '_is_mask_at_a_rounded_zero'),
    (14008886, ["v0 = T.tensor([[-1.8, 1.3, -1.0], [-0.5, -float('inf'), 1.0], [-1.1, 0.9, 0.4]], dtype=T.float64, "
                'requires_grad=True)', 'v2 = T.remainder(v0, v0)', "v2.register_hook(H(1, 'clone'))",
                'v4, v5, = T.autograd.grad(v2.sum(), [v0, v2], retain_graph=True, allow_unused=False, '
                'create_graph=False)', 'v5.detach_()'], '_is_capture_before_hooks'),
    (14018176, ['v0 = T.tensor([1.0, 1.1, -0.6], dtype=T.float32, requires_grad=True)', 'v3 = T.abs(v0)',
                'v4, v5, = T.autograd.grad(v3.sum(), [v0, v3], retain_graph=False, allow_unused=False, '
                'create_graph=True)', 'v4.backward(T.ones_like(v4), retain_graph=True)'], '_is_torch_zero_tensor'),
    (15015480, ['v0 = T.tensor(-0.8, dtype=T.float32, requires_grad=True)', 'v2 = T.floor(v0)', 'v1 = v2',
                'v2.retain_grad()', 'v4 = v1.var()', 'v1.detach_()', 'v1.div_(v4)'], '_is_torch_internal_assert'),
    (16009473, ['v0 = T.tensor([[0.0], [-0.9], [1.1]], dtype=T.float32, requires_grad=True)', 'v2 = v0.reshape(-1)',
                'v3 = v0 * v2', 'with T.no_grad(): v4 = v2 * v3', 'v5 = T.maximum(v3, v4)',
                'with T.no_grad(): v10 = v5 ** -1'], '_is_zero_of_another_sign'),
    (16019072, ['v0 = T.tensor([[1.2], [0.0], [0.1]], dtype=T.float32, requires_grad=True)',
                'v2 = T.tensor([[0.4]], dtype=T.float32, requires_grad=True)', 'v3 = v0 @ v2',
                'v6, v7, = T.autograd.grad(v3.sum(), [v0, v2], retain_graph=False, allow_unused=False, '
                'create_graph=False)', 'v7.detach_()'], '_is_product_gradient_a_view'),
    (18003128, ['v0 = T.tensor([[[-1.5, 1.3], [1.7, -0.2], [-1.2, -1.4]], [[-0.5, -0.2], [0.5, 1.1], [1.5, -0.5]]], '
                'dtype=T.float32, requires_grad=True)', 'v2 = T.softmax(v0, 0)',
                'with T.no_grad(), T.enable_grad(): v4 = v2.std(1, keepdim=False)', 'v5 = v4.chunk(2, 1)[-1]',
                'v10, v11 = v5.min(-2, keepdim=False)'], '_is_index_among_rounded_ties'),
    (18019759, ['v0 = T.tensor([[0.6], [-0.8], [0.0]], dtype=T.float32, requires_grad=True)', 'v1 = v0.expm1()',
                'v2 = T.tensor([[-1.6, -0.4, 0.6]], dtype=T.float32, requires_grad=False)',
                'with T.enable_grad(): v3 = v1 @ v2', 'v5 = T.remainder(v2, v3)',
                'v5.sum().backward(retain_graph=False)'], '_is_product_at_zero_through_a_jump'),
    (19016678, ["v1 = T.tensor([[[0.0, -0.5], [-0.3, -0.2], [0.9, -1.8]], [[-float('inf'), -0.0], [2.0, 0.0], "
                "[0.9, 0.1]]], dtype=T.float64, requires_grad=True)", 'v2 = v1 * v1',
                'with T.set_grad_enabled(False): v5 = v1 - v2', 'v13 = T.nn.functional.mish(v5)',
                'v14, v15 = v13.median(-3, keepdim=True)'], '_is_index_among_rounded_ties'),
    (19026154, ["v0 = T.tensor([[[float('nan'), 0.9], [1.4, -0.5], [0.4, -1.2]], [[-1.1, 1.1], [1.6, 0.3], "
                "[-1.4, -1.6]]], dtype=T.float64, requires_grad=True)",
                'v2 = T.tensor([[-0.4, 0.5, 1.8], [-0.4, -0.9, 1.9]], dtype=T.float64, requires_grad=False)',
                'v3 = v0 @ v2', 'v5 = v3.abs()', 'v5.backward(T.ones_like(v5), retain_graph=False)'],
     '_is_product_at_zero_through_a_jump'),
    (20016913, ['v0 = T.tensor([[1.3, -0.2, -1.0]], dtype=T.float32, requires_grad=True)',
                'v1 = T.tensor([-1.9], dtype=T.float32, requires_grad=True)', 'v2 = v0 + v1',
                'v3, = T.autograd.grad(v2.sum(), [v1], retain_graph=False, allow_unused=True, create_graph=False)',
                'v3.detach_()'], '_is_product_gradient_a_view'),
    (22002389, ['v0 = T.tensor([[-0.1, -2.0, 0.8], [1.8, -0.7, -0.8]], dtype=T.float32, requires_grad=True)',
                'v2 = v0.sqrt()', 'with T.no_grad(), T.enable_grad(): v3 = T.stack([v0, v2])',
                'with T.no_grad(): v4 = v3.select(1, 1)', 'with T.set_grad_enabled(False): v3[0:] = v4'],
     '_is_inplace_over_its_own_view')])
def test_kernel_artefacts_the_long_run_found_are_known(seed, lines, matcher):
    """Seed 5003797: add_ of a detached view of the tensor it writes (PyTorch's loop reads what it
    has written; the view reached through detach()); seed 5005847: amax of -0.0, -0.0, 0.0 is
    PyTorch's -0.0 (a tie's zero is the kernel's), seen through atan2 (-pi against 0); seed
    5008114: a product of a transposed tensor and its base is laid out as the transposed one by
    PyTorch, so its matmul with an int64 matrix runs bmm (another dtype message), not a folded mm;
    seed 5014909: a float64 gradient reaching a float32 sqrt is cast as it leaves fmod's node in
    PyTorch, by autograd.grad at the end in leafgrad (ToCopyBackward0 with create_graph); seed
    5029101: remainder by a float32 mean of 9 elements, 1 ulp apart (PyTorch's 8-lane vectorized
    sum against NumPy's pairwise one), which divides 4 of the 6 dividends: they wrap around; seed
    6007147: div_ of autograd.grad's gradient of a sum, captured before a hook cloned it in
    PyTorch (an expanded ones, refused for its internal overlap first), after in leafgrad; seed
    6019932: sqrt of a float32 product 0.8 * 0.6 + 0.4 * -1.2, 0 by PyTorch's BLAS, a rounding
    below 0 (NaN) by OpenBLAS's fused multiply-add; seed 5027715: median along the diagonal of
    autograd.grad's gradient of a sum (in PyTorch an expanded ones: a view of stride 0) gives index
    0 of three equal values (PyTorch's median of an expanded tensor reads garbage); seed 8002331:
    reciprocal of a float64 product a rounding away from 0 by both BLAS (-3.1e15 against
    -1.8e15); seed 8006911: hardtanh's gradient at a NaN that pow_(0.5) made (PyTorch's vector
    lanes give 0, its scalar tail and leafgrad pass it); seed 12027861: -1.5 over a float32 sum
    that cancels to a rounding (the summation order's: 1.26e7 against 1.06e7); seed 12029536:
    elu's gradient at the NaN of a remainder by 0 (PyTorch's lanes: NaN), times the remainder's
    infinite derivative for its divisor; seed 14004053: a mask v0 + v0 @ v0 > 0 at an element
    that is -1.9 + 1.9 to within the BLAS's rounding; seed 14008886: detach_ of autograd.grad's
    gradient of a hooked non-leaf, captured before the hook in PyTorch (a view: refused); seed
    14018176: abs's second derivative, a ZeroTensor in PyTorch; seed 15015480: PyTorch's internal
    assertion fails (detach_ then div_ of a tensor whose grad is retained); seed 16009473: a tie of
    -0.0 and 0.0 in maximum (the kernel's lane decides), seen through ** -1; seed 16019072: a
    product's weight gradient, a transposed view in PyTorch (mm's backward by the operands'
    layout), refused by detach_; seed 18003128: min of two float32 std, equal in leafgrad, 1 ulp
    apart in PyTorch (Welford's variance of a softmax); seed 18019759: remainder by an outer
    product's zeros, -0.0 by PyTorch's mm of one column, +0.0 by OpenBLAS: inf against -inf; seed
    19016678: median of two equal inputs of mish, 1 ulp apart in PyTorch (a vector lane and the
    scalar tail); seed 19026154: abs of a float64 product that cancels to 0 in PyTorch, to
    -2.2e-18 in OpenBLAS: abs's derivative -1 against 0; seed 20016913: detach_ of the gradient
    of a (1,) input broadcast to (1, 3), a view in PyTorch (sum_to's view of its keepdim sum); seed
    22002389: x[0:] = a row of x broadcast over x (PyTorch's copy reads rows it has written)."""
    diff = _first_difference(lines)
    assert diff is None or getattr(fp, matcher)(lines, diff), _report(lines, diff)


def test_a_version_error_is_compared_by_pytorchs_first_line():
    """leafgrad's version error adds a line naming the user's line that changed the tensor; the
    log keeps PyTorch's message, its first line (the long run filed 88 of 10,000 programs from
    seed 5000300, all agreeing but for that line, under the known 'names another of the saved
    tensors')."""
    lines = ['v1 = T.tensor([[1.2, -1.8], [0.0, -1.6]], dtype=T.float32, requires_grad=True)',
             'v2 = T.hypot(v1, v1)', 'v2[:, None].add_(0.5)', 'T.autograd.backward([v2.sum()], retain_graph=False)']
    diff = _first_difference(lines)
    assert diff is None, _report(lines, diff)
    log = fp.run(lg, lines)
    assert any(r[0] == 'line' and r[2][0] == 'raised' and 'modified by an inplace' in r[2][2] for r in log)


def test_a_pole_of_a_rounded_product_is_let_through_only_there():
    """Seed 4016527: log1p of a float64 product that PyTorch's BLAS sums to -1 exactly and
    NumPy's to -1 + 4.4e-16 (-inf against -35.35) is the known BLAS rounding; the same values
    from no product, or a finite value far from a pole, are a difference."""
    lines = ["v0 = T.tensor([[1.6, float('nan'), 2.0], [0.3, 0.2, 1.1], [1.1, -1.3, -1.7]], dtype=T.float64, "
             'requires_grad=True)', 'v2 = v0 + v0', 'v3 = v0 @ v2', 'v6 = v3.flatten()', 'v8 = v6.expand(9)',
             'with T.no_grad(), T.enable_grad(): v9 = v8.log1p()']
    diff = _first_difference(lines)
    label = fp._is_pole_of_a_rounded_product.__name__
    assert diff is None or label in {t.__name__ for _, t in fp.KNOWN if t(lines, diff)}, _report(lines, diff)
    import numpy as np
    record = lambda values: ('new', 'v9', ('tensor', (2,), 'float64', True, False, 'Log1PBackward0',  # noqa: E731
                                           np.array(values)), '')
    pole = (0, record([1.5, -35.35]), record([1.5, -np.inf]))
    assert fp._is_pole_of_a_rounded_product(lines, pole)
    assert not fp._is_pole_of_a_rounded_product(lines, (0, record([1.5, -0.3]), record([1.5, -np.inf])))
    assert not fp._is_pole_of_a_rounded_product(lines[:2] + ['v3 = v0 * v2'] + lines[3:], pole)


def _elu_vector_block():
    """The contiguous float64 elements PyTorch's elu backward takes at a time in its vector loop
    on this machine (two vectors: 8 with AVX2, 16 with AVX-512; the rest goes to its scalar tail).
    Read from PyTorch: the fewest elements at which a NaN at element 0 gets the vector lanes' NaN
    gradient rather than the scalar tail's 1."""
    for n in range(1, 257):
        x = torch.full((n,), 0.5, dtype=torch.float64)
        x[0] = float('nan')
        x.requires_grad_()
        torch.nn.functional.elu(x).sum().backward()
        if torch.isnan(x.grad[0]):
            return n
    raise AssertionError("PyTorch's elu backward took no NaN in a vector lane")


def _elu_program(columns):
    """Seed 12003756's program on a 3 x ``columns`` tensor (its 3x3 values, then columns of 0.5)."""
    rows = [[float('nan'), 1.9, 2.0], [0.0, 0.4, -0.9], [1.7, 1.8, 1.6]]
    text = repr([r + [0.5] * (columns - 3) for r in rows]).replace('nan', "float('nan')")
    return [f'v0 = T.tensor({text}, dtype=T.float64, requires_grad=True)', f'v2 = v0.view(3, {columns})',
            'v3 = T.nn.functional.elu(v2)', "v0.register_hook(H(1, 'none'))",
            'T.autograd.backward([v3.sum()], retain_graph=False)']


def test_elus_gradient_at_nan_by_lane_is_known_only_as_nan_against_a_number():
    """Seed 12003756: elu of a 3x3 float64 tensor with a NaN at element 0: PyTorch's gradient
    there (a vector lane: the negative branch, NaN > 0 being false) is NaN, leafgrad's the
    positive branch's 1, as PyTorch's scalar tail's; seen by a hook, then as the leaf's grad.
    Any other value against PyTorch's is no lane artefact. Where PyTorch's vector loop takes more
    than 9 float64 elements at a time (16 with AVX-512), the seed's 9 all go to its scalar tail,
    which agrees with leafgrad: the tensor is widened until element 0 is in a lane."""
    import numpy as np
    block = _elu_vector_block()
    if block > 9:
        assert _first_difference(_elu_program(3)) is None  # (all scalar tail: leafgrad's values)
    lines = _elu_program(max(3, -(-block // 3)))
    diff = _first_difference(lines)
    assert diff is not None and diff[1][0] == 'hook'
    assert fp._is_clamp_gradient_at_nan_by_lane(lines, diff), _report(lines, diff)
    assert fp._is_clamp_gradient_at_nan_by_lane(lines[:3] + lines[4:], _first_difference(lines[:3] + lines[4:]))
    grad = lambda values: ('grad', 'v0', ('tensor', (2,), 'float64', False, True, None, np.array(values)))  # noqa: E731
    assert not fp._is_clamp_gradient_at_nan_by_lane(lines, (0, grad([1.0, 1.0]), grad([0.5, 1.0])))
    assert not fp._is_clamp_gradient_at_nan_by_lane(lines[:2] + ['v3 = v2.exp()'] + lines[3:],
                                                    (0, grad([1.0, 1.0]), grad([np.nan, 1.0])))


def test_an_index_among_elements_equal_to_a_products_rounding_is_known_only_there():
    """Seed 12005903: median along dim 0 of tanh(x) @ tanh(x) in float32, whose column 1 holds
    0, 0 by PyTorch's BLAS and 0, 1.6e-8 by OpenBLAS: index 1 against 0, elements equal to
    rounding. An index picking an element far from PyTorch's pick is a difference, and so is
    one where no product (nor another op that rounds otherwise than PyTorch) made the values."""
    import numpy as np
    lines = ['v0 = T.tensor([[0.3, -1.2, 1.2], [-0.1, 1.0, -0.9], [-0.1, 0.6, 1.8]]).round().long()',
             'v1 = T.tanh(v0)', 'v2 = v1 @ v1', 'v3, v4 = v2.median(0, keepdim=True)']
    diff = _first_difference(lines)
    assert diff is not None and diff[1][:2] == ('new', 'v4')
    assert fp._is_index_among_rounded_ties(lines, diff), _report(lines, diff)
    record = lambda index: ('new', 'v4', ('tensor', (1, 3), 'int64', False, True, None,  # noqa: E731
                                          np.array([index], dtype=float)), '')
    assert not fp._is_index_among_rounded_ties(lines, (0, record([1, 1, 0]), record([1, 1, 2])))
    no_product = lines[:1] + ['v1 = v0 * 0.5', 'v2 = v1 * v1'] + lines[3:]  # (nor another op that rounds otherwise)
    assert not fp._is_index_among_rounded_ties(no_product, (0, record([1, 0, 2]), record([1, 1, 2])))


def test_an_overlap_told_by_the_strides_of_size_one_dims_is_known_only_there():
    """Seed 12022409: div_ of a (3, 1) remainder by its own transpose: PyTorch's result has its
    operand's strides (1, 3), so the transpose's (3, 1) differ and the full overlap is refused as
    partial; leafgrad's (1, 1) let it through to the shape error. An operand with memory of its
    own is no such case."""
    lines = ['v0 = T.tensor([[1.8, -0.1, -0.9]], dtype=T.float32, requires_grad=True)',
             'v1 = T.tensor(-0.3, dtype=T.float32, requires_grad=True)', 'v2 = v0.t()', 'v3 = T.remainder(v1, v2)',
             'v6 = v3.transpose(-2, -1)', 'v3.div_(v6)']
    diff = _first_difference(lines)
    assert diff is not None and diff[1][0] == 'line'
    assert fp._is_other_layout(lines, diff), _report(lines, diff)
    other = lines[:4] + ['v6 = v3.transpose(-2, -1).clone()', 'v3.div_(v6)']
    assert not fp._is_other_layout(other, diff)


def test_an_operand_viewing_the_written_tensors_base_is_let_through_only_as_the_read_order():
    """Seed 11003852: a row of x multiplied in place by a column of x (both views of x, sharing
    one element: PyTorch lets the overlap through, the column being no dense tensor) ends, in
    PyTorch, with the row's last element times the first one already multiplied; read before
    the write (a clone), the two agree, so it is the known read order. The same program with a
    difference of another kind after it is not let through."""
    lines = ['v0 = T.tensor([[1.9, 1.9, 0.7], [0.4, 0.0, 0.8], [1.7, -0.2, -1.3]], dtype=T.float64, '
             'requires_grad=True)', 'v1 = T.nn.functional.leaky_relu(v0)', 'v3 = v1.expand(3, 3)',
             'with T.no_grad(), T.enable_grad(): v5 = v1.select(1, -3)', 'v3[2:].mul_(v5)']
    diff = _first_difference(lines)
    assert diff is not None and diff[1][0] == 'final' and diff[1][1] == 'v1'
    assert fp._is_inplace_over_its_own_view(lines, diff), _report(lines, diff)
    other = lines + ["v6 = T.copysign(T.ones(1), T.sqrt(T.tensor([-1.0])))"]  # (NumPy's NaN has its sign set)
    diff = _first_difference(other)
    assert diff is not None and not fp._is_inplace_over_its_own_view(other, diff), _report(other, diff)
    apart = lines[:3] + ['with T.no_grad(), T.enable_grad(): v5 = v1.select(1, -3).clone()', 'v3[2:].mul_(v5)']
    assert _first_difference(apart) is None


def test_an_assignment_of_a_view_of_the_written_tensor_is_let_through_only_as_the_read_order():
    """Seed 22002389: x[0:] = x.select(1, 1), broadcast over x, copies in PyTorch rows it has
    already written; the value cloned first, the two agree, so it is the known read order. A
    difference of another kind after it, or an assignment of a tensor that is no view of the
    written one, is not let through."""
    lines = ['v0 = T.tensor([[-0.1, -2.0, 0.8], [1.8, -0.7, -0.8]], dtype=T.float32, requires_grad=True)',
             'v2 = v0.sqrt()', 'with T.no_grad(), T.enable_grad(): v3 = T.stack([v0, v2])',
             'with T.no_grad(): v4 = v3.select(1, 1)', 'with T.set_grad_enabled(False): v3[0:] = v4']
    diff = _first_difference(lines)
    assert diff is not None and diff[1][0] == 'final' and diff[1][1] == 'v3'
    assert fp._is_inplace_over_its_own_view(lines, diff), _report(lines, diff)
    other = lines + ["v6 = T.copysign(T.ones(1), T.sqrt(T.tensor([-1.0])))"]  # (NumPy's NaN has its sign set)
    diff = _first_difference(other)
    assert diff is not None and not fp._is_inplace_over_its_own_view(other, diff), _report(other, diff)
    apart = lines[:3] + ['with T.no_grad(): v4 = v3.select(1, 1).clone()', 'with T.set_grad_enabled(False): v3[0:] = v4']
    assert _first_difference(apart) is None
    unrelated = lines[:3] + ['v5 = T.stack([v2, v0])', 'with T.no_grad(): v4 = v5.select(1, 1)',
                             "with T.set_grad_enabled(False): v3[0:] = v4",
                             "v6 = T.copysign(T.ones(1), T.sqrt(T.tensor([-1.0])))"]
    diff = _first_difference(unrelated)
    assert diff is not None and not fp._is_inplace_over_its_own_view(unrelated, diff), _report(unrelated, diff)


def test_a_float32_exp_rounding_is_let_through_only_where_float64_agrees():
    """Seed 11010365: sin(expm1(exp(2.0))) in float32: NumPy's exp(2.0) is 7.3890557, PyTorch's
    7.3890562 (correctly rounded), expm1 magnifies the ulp to 1617.1774 against 1617.1782, sin
    shows it in the third decimal; in float64 the program agrees: the known rounding. A result
    through exp that differs in float64 too (copysign of a NaN, whose sign NumPy sets) is not let
    through, nor the same program's result where no exp made it."""
    import numpy as np
    lines = ['v0 = T.tensor([[2.0, 1.4, -1.0], [-0.4, -1.8, -1.3], [0.8, 0.7, -1.5]], dtype=T.float32, '
             'requires_grad=True)', 'v1 = T.exp(v0)', 'v5 = T.expm1(v1)', 'with T.enable_grad(): v8 = v5.sin()']
    diff = _first_difference(lines)
    assert diff is not None and diff[1][:2] == ('new', 'v8')
    assert fp._is_float32_exp_rounding_amplified(lines, diff), _report(lines, diff)
    assert fp.known(lines, diff) is not None
    real = lines[:2] + ['v9 = T.copysign(v1, T.sqrt(T.tensor([-1.0])))']
    diff = _first_difference(real)
    assert diff is not None and diff[1][:2] == ('new', 'v9')
    assert not fp._is_float32_exp_rounding_amplified(real, diff), _report(real, diff)
    no_exp = [lines[0], 'v5 = v0 * 800.0', 'with T.enable_grad(): v8 = v5.sin()']
    record = lambda name: ('new', name, ('tensor', (3, 3), 'float32', True, False, 'SinBackward0',  # noqa: E731
                                         np.zeros((3, 3))), '')
    assert not fp._is_float32_exp_rounding_amplified(no_exp, (0, record('v8'), record('v8')))
    assert lg.get_default_dtype() == lg.float32 and torch.get_default_dtype() == torch.float32


def _signature(diff):
    """What kind of failure: the kind of record and, for an exception, its type."""
    _, mine, theirs = diff
    kind = lambda r: (r[0], r[2][:2] if r and r[0] == 'line' else None) if r else None  # noqa: E731
    return repr((kind(mine), kind(theirs)))


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get('LEAFGRAD_FUZZ_EXAMPLES'), reason='long mode: set LEAFGRAD_FUZZ_EXAMPLES')
def test_long_run():
    """The programs run in child processes, a chunk at a time, so that a crash of torch itself
    (it happens: a segfault) is noted, with its seed, and the run goes on after it."""
    total = int(os.environ['LEAFGRAD_FUZZ_EXAMPLES'])
    seed0 = int(os.environ.get('LEAFGRAD_FUZZ_SEED', '0'))
    report = os.environ.get('LEAFGRAD_FUZZ_REPORT')
    found, crashes = {}, []
    start = time.monotonic()
    ctx = multiprocessing.get_context('fork')
    seed, end = seed0, seed0 + total
    while seed < end:
        progress, results = ctx.Value('q', seed), ctx.Queue()
        child = ctx.Process(target=_run_chunk, args=(seed, min(seed + 500, end), progress, results, set(found)))
        child.start()
        while True:
            try:
                item = results.get(timeout=1)
            except queue.Empty:
                if child.is_alive():
                    continue
                item = 'died'
            if item is None or item == 'died':
                break
            sig, program_seed, text = item
            found.setdefault(sig, [None])
            found[sig].append(program_seed)
            if text is not None:
                found[sig][0] = text
        child.join()
        if item == 'died':
            crashes.append((progress.value, child.exitcode))
            seed = progress.value + 1
        else:
            seed = min(seed + 500, end)
        if report:
            _write(report, seed - seed0, seed0, found, crashes, time.monotonic() - start)
    unknown = {sig: v for sig, v in found.items() if not sig.startswith('known: ')}
    assert not unknown, '\n\n'.join(f'{sig}: {len(v) - 1} programs (seeds {v[1:6]}...)\n{v[0]}'
                                    for sig, v in unknown.items())


def _run_chunk(first, last, progress, results, seen):
    """Run the programs of seeds [first, last) (in a child process); put (kind, seed, report of
    its minimized program the first time a kind is seen) for each that differs, then None."""
    seen = set(seen)
    for seed in range(first, last):
        progress.value = seed
        chooser = fp.RandomChooser(seed)
        lines, torch_log = fp.generate(chooser, torch, length=chooser.int(1, 20))
        diff = _first_difference(lines, torch_log)
        if diff is None:
            continue
        label = fp.known(lines, diff)
        sig = f'known: {label}' if label else _signature(diff)
        text = None
        if sig not in seen:
            seen.add(sig)
            small = fp.minimize(lines, lambda ls: _still(ls, label))
            text = _report(small, _first_difference(small))
        results.put((sig, seed, text))
    results.put(None)


def _still(lines, label):
    """The smaller program still fails (as the same known difference, if it was one)."""
    diff = _first_difference(lines)
    return diff is not None and fp.known(lines, diff) == label


def _write(path, done, seed0, found, crashes, seconds):
    with open(path, 'w') as f:
        f.write(f'{done} programs from seed {seed0} in {seconds:.0f} s; {len(found)} kinds of difference; '
                f'torch crashed on seeds {crashes}\n\n')
        for sig, v in sorted(found.items(), key=lambda kv: kv[0].startswith('known: ')):
            f.write(f'=== {sig}: {len(v) - 1} programs, seeds {v[1:11]}\n{v[0]}\n\n')


def test_a_mask_at_a_rounded_zero_is_let_through_only_there():
    """The mask matcher computes the masked values in both libraries: a difference where they
    are far from 0 (or equal masks) is not a rounding at zero."""
    lines = ['v0 = T.tensor([1.0, -2.0, 0.5])', 'v1 = v0[v0 > 0]']
    record = lambda values: ('new', 'v1', ('tensor', (len(values),), 'float32', False, True, None,  # noqa: E731
                                           np.array(values)), '')
    assert not fp._is_mask_at_a_rounded_zero(lines, (0, record([1.0]), record([1.0, 0.5])))
    assert not fp._is_mask_at_a_rounded_zero(['v0 = T.tensor([1.0, -2.0])', 'v1 = v0[v0 < 0]'],
                                            (0, record([1.0]), record([1.0, 0.5])))


def test_a_products_zero_is_let_through_only_where_exact_zeros_agree():
    """Seed 18019759: remainder by an outer product's zeros (-0.0 in PyTorch, +0.0 in leafgrad)
    is let through because making the product's zeros +0.0 in both makes them agree. A program
    with a product and a division that differs for another reason (seed 16019072's transposed
    weight gradient, refused by detach_ in PyTorch) is not; nor is one without a product."""
    lines = ['v0 = T.tensor([[0.6], [-0.8], [0.0]], dtype=T.float32, requires_grad=True)', 'v1 = v0.expm1()',
             'v2 = T.tensor([[-1.6, -0.4, 0.6]], dtype=T.float32, requires_grad=False)', 'v3 = v1 @ v2',
             'v5 = T.remainder(v2, v3)', 'v5.sum().backward(retain_graph=False)']
    diff = _first_difference(lines)
    assert diff is not None and fp._is_product_at_zero_through_a_jump(lines, diff), _report(lines, diff)
    other = ['v0 = T.tensor([[1.2], [0.0], [0.1]], dtype=T.float32, requires_grad=True)',
             'v2 = T.tensor([[0.4]], dtype=T.float32, requires_grad=True)', 'v3 = v0 @ v2', 'v8 = 1 / v3',
             'v6, v7, = T.autograd.grad(v3.sum(), [v0, v2], retain_graph=False, allow_unused=False, '
             'create_graph=False)', 'v7.detach_()']
    diff = _first_difference(other)
    assert diff is not None and not fp._is_product_at_zero_through_a_jump(other, diff)
    no_product = [line.replace('v1 @ v2', 'v1 * v2') for line in lines]
    assert not fp._is_product_at_zero_through_a_jump(no_product, diff)
