"""put/put_, sum_to_size, apply_ and map_ against torch: values, node names, first and second
derivatives, gradcheck, errors, in-place semantics."""
import numpy as np
import pytest

import leafgrad as lg
from both import same
from optable import check_case

torch = pytest.importorskip('torch')
R = np.random.default_rng(11)


def row(name, fn, arrays, grad=True):
    return pytest.param(fn, arrays, grad, id=name)


ROWS = [
    row('put', lambda T, x, s: T.put(x, T.tensor([0, -1, 4]), s), [R.standard_normal((2, 3)), R.standard_normal(3)]),
    row('put_accumulate', lambda T, x, s: x.put(T.tensor([[1, 1]]), s, accumulate=True),
        [R.standard_normal(4), R.standard_normal((1, 2))]),
    row('put_inplace', lambda T, x, s: (x * 1).put_(T.tensor([2, 0]), s), [R.standard_normal((2, 2)),
                                                                         R.standard_normal(2)]),
    row('sum_to_size', lambda T, x: x.sum_to_size(1, 3), [R.standard_normal((2, 3))]),
    row('sum_to_size_tuple', lambda T, x: x.sum_to_size((2, 1)), [R.standard_normal((2, 3))]),
    row('sum_to_size_leading', lambda T, x: x.sum_to_size(3), [R.standard_normal((2, 3))]),
]


@pytest.mark.parametrize('fn,arrays,grad', ROWS)
def test_against_torch(fn, arrays, grad):
    check_case(fn, arrays, grad=grad)


PROGRAMS = [
    ('put_out_of_range', lambda M: M.zeros(6).put_(M.tensor([7]), M.tensor([9.]))),
    ('put_sizes', lambda M: M.zeros(6).put_(M.tensor([0]), M.tensor([9., 1]))),
    ('put_float_index', lambda M: M.zeros(6).put_(M.tensor([0.]), M.tensor([9.]))),
    ('put_dtypes', lambda M: M.zeros(6).put_(M.tensor([0]), M.tensor([9]))),
    ('sum_to_size_bad', lambda M: M.ones(2, 3).sum_to_size(4)),
    ('apply_shares_storage', lambda M: (lambda x: (x.detach().apply_(lambda a: a * 2), x))(M.arange(6.).reshape(2, 3))),
    ('apply_requires_grad', lambda M: M.ones(2, requires_grad=True).apply_(lambda a: a)),
    ('apply_noncontiguous', lambda M: (lambda x: (x.t().apply_(lambda a: a + 1), x))(M.arange(6.).reshape(2, 3))),
    ('map_', lambda M: M.arange(6.).reshape(2, 3).map_(M.ones(3), lambda a, b: a + b)),
    ('map_bad_shape', lambda M: M.ones(2).map_(M.ones(3), lambda a, b: a + b)),
    ('map_version', lambda M: (lambda x: (x.map_(M.ones(2), lambda a, b: a * b), x._version))(M.ones(2))),
]


@pytest.mark.parametrize('program', [p[1] for p in PROGRAMS], ids=[p[0] for p in PROGRAMS])
def test_programs_against_torch(program):
    same(program)
