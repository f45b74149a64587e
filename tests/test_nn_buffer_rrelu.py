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
], ids=['training', 'eval', 'module'])
def test_rrelu_derivatives_against_torch(fn):
    # values, node names (RreluWithNoiseBackward0), first and second derivatives, gradcheck
    check_case(fn, [np.random.default_rng(0).standard_normal((3, 4))])
