"""Random compiled regions against eager leafgrad (tests/compile_fuzz.py): CI runs a fixed,
derandomized budget; ``python tests/compile_fuzz.py FIRST LAST`` runs seeds in the long mode.
The regressions below are what the long mode found, minimized."""
import pytest

torch = pytest.importorskip('torch')
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import leafgrad as lg  # noqa: E402
import compile_fuzz as cf  # noqa: E402
import fuzz_programs as fp  # noqa: E402


@settings(max_examples=150, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_compiled_regions_agree_with_eager(data):
    inputs, body = cf.generate(fp.DrawChooser(data), torch, length=data.draw(st.integers(1, 12)))
    found = cf.check(lg, inputs, body) if body else None
    assert found is None, found


def test_a_changed_value_is_seen_by_the_comparison():
    """The comparison notices a value, a gradient and an input's version that differ."""
    inputs = ['v0 = T.tensor([1.0, -2.0], dtype=T.float32, requires_grad=True)']
    eager = cf.run(lg, inputs, ['v1 = v0 * 2'], compiled=False)
    assert cf.difference(eager, cf.run(lg, inputs, ['v1 = v0 * 2'])) is None
    assert cf.difference(eager, cf.run(lg, inputs, ['v1 = v0 * 3'], compiled=False))
    assert cf.difference(eager, cf.run(lg, inputs, ['v1 = (v0 * 2).detach()'], compiled=False))
    with_grad = ['v1 = T.tensor([1.0, -2.0], dtype=T.float32, requires_grad=False)']
    assert cf.difference(cf.run(lg, inputs + with_grad, ['v2 = v0 + v1']),
                         cf.run(lg, inputs + with_grad, ['v2 = v0 + v1', 'with T.no_grad(): v1.add_(1)']))


REGRESSIONS = {
    # a view made under no_grad of a tensor that requires grad: requires grad with no history,
    # where the replay gave it the compiled node
    'no_grad_view_output': (['v0 = T.tensor([[-0.2, -1.5, 1.2]], dtype=T.float64, requires_grad=True)'],
                            ['v3 = v0.amin(1, keepdim=False)', 'v4 = v3.select(-1, 0)',
                             'with T.no_grad(): v11 = v4.reshape(-1)']),
    # an input an island op (one replayed through its eager op) saved, changed in place later in
    # the call: eager's backward raises, the replay's island had saved a tensor of its own
    'island_saved_input_changed': (['v0 = T.tensor([[[0.5, -1.8, 0.7]]], dtype=T.float32, requires_grad=True)',
                                    'v2 = T.tensor([[-0.8, -1.2], [0.3, -1.2], [0.6, 0.2]], dtype=T.float32, '
                                    'requires_grad=False)'],
                                   ['v3 = v0 @ v2', 'v2[...].pow_(-1.5)']),
    # an intermediate a node saved, changed in place under no_grad: eager's backward raises
    'saved_intermediate_changed_under_no_grad': (
        ['v0 = T.tensor([[-0.5, 0.0, -1.7], [-0.7, 1.9, 1.6]], dtype=T.float32, requires_grad=True)'],
        ['with T.set_grad_enabled(False): v2 = v0[[1, -1]]', 'v4 = T.expm1(v2)', 'v6 = v0[:, :1] / v4',
         'with T.set_grad_enabled(False): v4.mul_(-1.5)']),
    # an intermediate with a history changed in place under no_grad: its gradient still flows
    # through the ops that made it, where the replay followed the value
    'history_changed_under_no_grad': (['v0 = T.tensor([[1.5, 0.4], [0.7, 2.0]], dtype=T.float32, requires_grad=True)'],
                                      ['v2 = T.square(v0)', 'with T.no_grad(): v2.exp_()']),
    # an input leaf changed in place under no_grad, then read with grad mode on: its gradient
    'leaf_changed_under_no_grad': (['v0 = T.tensor([0.6, 0.6, -1.6], dtype=T.float32, requires_grad=True)'],
                                   ['with T.set_grad_enabled(False): v0.tanh_()', 'v2 = v0 @ v0']),
    # relu keeps -0.0 (eager's, PyTorch's); the replay's maximum had its operands the other way
    'relu_of_negative_zero': (['v0 = T.tensor([[-1.4, -1.2, -1.0], [-1.6, -0.7, -0.3]], dtype=T.float32, '
                               'requires_grad=True)'],
                              ['v1 = v0.mean(-1, keepdim=False)', 'v2 = T.fmod(v1, v1)', 'v4 = T.floor(v2)',
                               'v6 = T.stack([v2, v4])', 'v9 = v6.relu()']),
    # an island (a vector times a batch of matrices) under no_grad: eager's kernel is chosen by
    # whether the operands require grad, which the island's tensors did not
    'island_kernel_by_requires_grad': (['v0 = T.tensor([[[-0.2, 1.2], [0.6, -1.6], [-1.9, -1.7]], [[-1.8, -0.4], '
                                        '[-0.2, -0.2], [-1.8, -0.5]]], dtype=T.float32, requires_grad=True)',
                                        'v1 = T.tensor([-0.6, -0.2, -0.3], dtype=T.float32, requires_grad=True)'],
                                       ['with T.set_grad_enabled(False): v6 = v1 @ v0']),
    # a saved intermediate changed in place through an empty slice: its version moves on, and
    # eager's backward raises
    'saved_intermediate_changed_through_an_empty_slice': (
        ['v1 = T.tensor([[[1.0, 0.5, -1.5]], [[0.2, 0.1, 0.5]]], dtype=T.float32, requires_grad=False)',
         'v4 = T.tensor([[-0.4, -0.9, 1.1], [1.6, 0.8, -0.3], [-2.0, -0.4, 1.8]], dtype=T.float32, requires_grad=True)'],
        ['v2 = T.maximum(v1, v1)', 'v5 = v2 @ v4', 'v2[1:, :, 3:].sub_(0.5)']),
    # a 0-d gradient: NumPy gives a scalar, which relu's derivative then wrote into (a TypeError)
    'relu_derivative_of_a_0d_gradient': (['v0 = T.tensor([[0.4, -0.4, -1.1]], dtype=T.float32, requires_grad=True)'],
                                         ['v2 = v0.norm()', 'v6 = T.relu(v2)', 'v8 = v6.sigmoid()']),
    # a rule's gradient that is a difference (log_softmax's g - exp(out) * sum(g)) added to the
    # gradient a later call gave: summed as (a + g) - e, where eager adds a + (g - e)
    'a_rules_difference_added_to_a_gradient': (
        ['v0 = T.tensor([[0.4, 1.3, 0.4], [-0.6, 1.5, 1.8], [0.8, -1.9, 0.0]], dtype=T.float64, requires_grad=True)'],
        ['v1 = T.nn.functional.log_softmax(v0, dim=-1)', 'v3 = v0 * 2']),
    # an op given a number instead of a tensor while traced: PyTorch's TypeError (the argument
    # check read the tracer's wrapper's frame, and an AttributeError came out)
    'an_op_given_a_number': (['v1 = T.tensor([[0.7, -0.6, 2.0]], dtype=T.float32, requires_grad=True)',
                              'v2 = T.tensor([1.0], dtype=T.float32, requires_grad=True)'],
                             ['v4 = T.nn.functional.elu(v2)', 'v2 = 0.5']),
    # an in-place change through a detach() of an intermediate (or of a view of one), which
    # shares its memory and version counter: replayed out of place, it left the intermediate as
    # it was (a wrong value, silently)
    'changed_through_a_detach_of_an_intermediate': (
        ['v0 = T.tensor([[0.3, 0.2, 1.5]], dtype=T.float32, requires_grad=True)'],
        ['with T.set_grad_enabled(False): v1 = v0 * v0', 'with T.set_grad_enabled(False): v2 = v1.transpose(-1, -2)',
         'v4 = v2.unsqueeze(1)', 'v6 = v4.detach()', 'v6.add_(0.5)']),
    'changed_through_a_detach': (['v0 = T.tensor([[0.3, 0.2, 1.5]], dtype=T.float32, requires_grad=True)'],
                                 ['v1 = v0 * v0', 'v6 = v1.detach()', 'v6.add_(0.5)', 'v7 = v1 * 2']),
}


@pytest.mark.parametrize('name', sorted(REGRESSIONS))
def test_regions_the_long_mode_found(name):
    inputs, body = REGRESSIONS[name]
    assert cf.check(lg, inputs, body) is None


def test_an_input_an_island_saved_and_changed_after_the_call_raises_at_the_backward():
    """A compiled call whose backward reads an input through an island (a matrix product of a
    batch by a matrix), the input then changed in place before the backward: eager's error."""
    compiled = lg.compile(lambda a, b: (a @ b).tanh())
    for _ in range(3):
        a, b = lg.randn(2, 2, 3, requires_grad=True), lg.randn(3, 2)
        out = compiled(a, b)
        b.add_(1)
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            out.sum().backward()
