"""nn.Buffer (a tensor marked to register as a buffer, persistent or not), F.rrelu / rrelu_ and
nn.RReLU (random slopes drawn as PyTorch's CPU kernel draws them) against torch."""
import numpy as np
import pytest

import leafgrad as lg
from both import same
from optable import check_case

torch = pytest.importorskip('torch')


def _module_with_buffers(M):
    m = M.nn.Module()
    m.a = M.nn.Buffer(M.ones(2), persistent=False)
    m.b = M.nn.Buffer(M.arange(3.))
    m.b = M.nn.Buffer(M.zeros(1), persistent=False)   # re-registered: now not persistent
    m.c = M.nn.Buffer(M.ones(1))
    return [list(m.state_dict()), [n for n, _ in m.named_buffers()], m.b, isinstance(m.c, M.nn.Buffer)]


def _existing_attribute(M):
    m = M.nn.Module()
    m.x = 1
    m.x = M.nn.Buffer(M.ones(2))


def _over_a_parameter(M):
    m = M.nn.Module()
    m.p = M.nn.Parameter(M.ones(1))
    m.p = M.nn.Buffer(M.ones(2))


PROGRAMS = [
    ('buffer_registers', _module_with_buffers),
    ('buffer_is_a_marked_tensor', lambda M: [type(M.nn.Buffer(M.ones(1))).__name__, isinstance(M.ones(1), M.nn.Buffer),
                                            M.nn.Buffer().shape, M.nn.Buffer(M.ones(2, requires_grad=True)).requires_grad]),
    ('buffer_before_init', lambda M: setattr(M.nn.Module.__new__(M.nn.Module), 'b', M.nn.Buffer(M.ones(1)))),
    ('buffer_over_attribute', _existing_attribute),
    ('buffer_over_parameter', _over_a_parameter),
    ('buffer_positional_persistent', lambda M: M.nn.Buffer(M.ones(1), True)),
    ('rrelu_eval', lambda M: M.nn.functional.rrelu(M.linspace(-2, 2, 9))),
    ('rrelu_training', lambda M: (M.manual_seed(0), M.nn.functional.rrelu(M.randn(40), training=True))[1]),
    ('rrelu_training_float64_bounds', lambda M: (M.manual_seed(1), M.nn.functional.rrelu(
        M.randn(3, 5, dtype=M.float64), 0.2, 0.6, training=True), M.rand(2))[1:]),
    ('rrelu_inplace', lambda M: (M.manual_seed(2), M.nn.functional.rrelu_(M.randn(6), training=True))[1]),
    ('rrelu_module_train_eval', lambda M: (M.manual_seed(3), M.nn.RReLU(0.1, 0.3)(M.randn(8)),
                                           M.nn.RReLU().eval()(M.randn(8)), repr(M.nn.RReLU(0.1, 0.3, True)))[1:]),
    ('rrelu_int', lambda M: M.nn.functional.rrelu(M.tensor([1, -1]))),
    ('rrelu_int_training', lambda M: M.nn.functional.rrelu(M.tensor([1, -1]), training=True)),
    # torch.rrelu / torch.rrelu_ (F.rrelu_ is torch.rrelu_): ATen's signature, with generator=
    ('torch_rrelu_eval', lambda M: M.rrelu(M.linspace(-2, 2, 9), 0.2, 0.4)),
    ('torch_rrelu_eval_node', lambda M: type(M.rrelu(M.ones(2, requires_grad=True)).grad_fn).__name__),
    ('torch_rrelu_training', lambda M: (M.manual_seed(0), M.rrelu(M.randn(40), training=True))[1]),
    ('torch_rrelu_generator', lambda M: M.rrelu(M.linspace(-2, 2, 9), 0.1, 0.3, True, M.Generator().manual_seed(3))),
    ('torch_rrelu_generator_keyword', lambda M: (M.manual_seed(1), M.rrelu(
        M.linspace(-2, 2, 9, dtype=M.float64), training=True, generator=M.Generator().manual_seed(4)), M.rand(2))[1:]),
    ('torch_rrelu_generator_none', lambda M: (M.manual_seed(2), M.rrelu(-M.ones(4), 0.1, 0.3, True, None))[1]),
    ('torch_rrelu_bfloat16', lambda M: M.rrelu(-M.ones(3, 2, dtype=M.bfloat16), 0.1, 0.2, True,
                                               M.Generator().manual_seed(1)).float()),
    ('torch_rrelu_', lambda M: M.rrelu_(M.linspace(-2, 2, 9), training=True, generator=M.Generator().manual_seed(5))),
    ('F_rrelu__generator', lambda M: M.nn.functional.rrelu_(M.linspace(-2, 2, 9), 0.1, 0.3, True,
                                                            M.Generator().manual_seed(5))),
    ('F_rrelu__is_torch_rrelu_', lambda M: M.nn.functional.rrelu_ is M.rrelu_),
    ('torch_rrelu__leaf', lambda M: M.rrelu_(M.ones(2, requires_grad=True))),
    ('torch_rrelu_generator_int', lambda M: M.rrelu(M.ones(2), generator=1)),
    ('torch_rrelu__generator_str', lambda M: M.rrelu_(M.ones(2), generator='g')),
    ('torch_rrelu_input_int', lambda M: M.rrelu(1)),
    ('torch_rrelu_lower_str', lambda M: M.rrelu(M.ones(2), 'a')),
    ('torch_rrelu_training_int', lambda M: M.rrelu(M.ones(2), 0.1, 0.3, 1)),
    ('torch_rrelu_training_none_keyword', lambda M: M.rrelu(M.ones(2), training=None)),
    ('torch_rrelu_six_arguments', lambda M: M.rrelu(M.ones(2), 0.1, 0.3, True, None, 1)),
    ('torch_rrelu_unknown_keyword', lambda M: M.rrelu(M.ones(2), foo=1)),
    ('torch_rrelu_input_twice', lambda M: M.rrelu(M.ones(2), input=M.ones(2))),
    ('torch_rrelu_tensor_bounds', lambda M: M.rrelu(-M.ones(2), M.tensor(0.1), M.tensor(0.2))),
    ('torch_rrelu_long', lambda M: M.rrelu(M.tensor([1, -1]))),
    ('F_rrelu_has_no_generator', lambda M: M.nn.functional.rrelu(M.ones(2), training=True, generator=M.Generator())),
    ('F_rrelu_training_int', lambda M: M.nn.functional.rrelu(M.ones(2), training=1)),
    ('F_rrelu_input_int', lambda M: M.nn.functional.rrelu(1)),
    # lower > upper: refused in either mode, before the dtype is looked at
    ('rrelu_bounds_reversed_training', lambda M: M.rrelu(M.ones(2), 0.5, 0.1, True)),
    ('rrelu_bounds_reversed_eval', lambda M: M.nn.functional.rrelu(M.ones(2), 0.5, 0.1)),
    ('rrelu_bounds_reversed_inplace', lambda M: M.nn.functional.rrelu(M.ones(2), 0.5, 0.1, True, True)),
    ('rrelu_bounds_reversed_long', lambda M: M.rrelu_(M.tensor([1, -1]), 0.5, 0.1, True)),
    ('rrelu_module_bounds_reversed', lambda M: M.nn.RReLU(0.2, 0.1)(M.ones(2))),
]


@pytest.mark.parametrize('program', [p[1] for p in PROGRAMS], ids=[p[0] for p in PROGRAMS])
def test_against_torch(program):
    same(program)


def _seeded(fn):
    def run(T, x):
        T.manual_seed(0)
        return fn(T, x)
    return run


@pytest.mark.parametrize('fn', [
    _seeded(lambda T, x: T.nn.functional.rrelu(x, training=True)),
    lambda T, x: T.nn.functional.rrelu(x, 0.2, 0.4),
    _seeded(lambda T, x: T.nn.RReLU()(x * 1)),
    lambda T, x: T.rrelu(x, 0.1, 0.3, True, T.Generator().manual_seed(6)),
    lambda T, x: T.rrelu(x),
    lambda T, x: T.rrelu(x, 0.2, 0.2 + 1e-7, True, T.Generator().manual_seed(6)),
], ids=['training', 'eval', 'module', 'torch_generator', 'torch_eval', 'torch_narrow_bounds'])
def test_rrelu_derivatives_against_torch(fn):
    # values, node names (RreluWithNoiseBackward0), first and second derivatives, gradcheck
    check_case(fn, [np.random.default_rng(0).standard_normal((3, 4))])


def test_rrelu_training_gradient_is_the_sampled_slope():
    # the gradient of a training rrelu is the slope each element drew (torch's and leafgrad's draws
    # are the same), even for bounds within 1e-6 of each other
    for lower, upper in ((0.1, 0.3), (0.2, 0.2 + 1e-7)):
        grads = []
        for T in (lg, torch):
            x = T.tensor([-1., -2., 0., 3.], dtype=T.float64, requires_grad=True)
            out = T.rrelu(x, lower, upper, True, T.Generator().manual_seed(8))
            out.sum().backward()
            grads.append((x.grad.tolist(), out.tolist()))
        assert grads[0] == grads[1]
