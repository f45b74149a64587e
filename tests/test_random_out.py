"""out= of the random factories torch.multinomial, torch.randperm, torch.randint and torch.normal,
against torch from the same seed: values, dtype, shape, version, warnings (a resize of an out
that held elements warns only for normal of tensors), errors, and the stream left behind."""
import warnings

import numpy as np

import pytest

from oracle import lg, torch


def _run(T, make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            r = make(T)
            values = np.round(np.asarray(r.tolist(), dtype=float), 5).tolist()
            got = (str(r.dtype).split('.')[-1], tuple(r.shape), values, r._version)
        except Exception as e:
            got = (type(e).__name__, str(e).replace('leafgrad', 'torch'))
    return got + (len(caught),)


CASES = {
 'mn float out': lambda T: T.multinomial(T.tensor([[0.2,0.3,0.5],[0.5,0.25,0.25]]), 2, out=T.empty(5)),
 'mn long': lambda T: T.multinomial(T.tensor([[0.2,0.3,0.5],[0.5,0.25,0.25]]), 2, out=T.empty(2,2,dtype=T.int64)),
 'mn long resize': lambda T: T.multinomial(T.tensor([[0.2, 0.3, 0.5], [0.5, 0.25, 0.25]]), 2, True,
                                           out=T.empty(5, dtype=T.int64)),
 'mn int32': lambda T: T.multinomial(T.tensor([0.2,0.3,0.5]), 2, out=T.empty(2,dtype=T.int32)),
 'mn ingrad': lambda T: T.multinomial(T.tensor([0.2,0.3,0.5], requires_grad=True), 2, out=T.empty(2,dtype=T.int64)),
 'rp float': lambda T: T.randperm(6, out=T.empty(3)),
 'rp int32': lambda T: T.randperm(6, out=T.empty(6, dtype=T.int32)),
 'rp mismatch': lambda T: T.randperm(6, out=T.empty(6, dtype=T.int32), dtype=T.int64),
 'rp outgrad': lambda T: T.randperm(4, out=T.empty(4, requires_grad=True)),
 'ri resize': lambda T: T.randint(0, 10, (2, 2), out=T.empty(3, dtype=T.int64)),
 'ri float': lambda T: T.randint(3, 10, (2, 2), out=T.empty(4)),
 'ri int32': lambda T: T.randint(10, (2, 2), out=T.empty(4, dtype=T.int32)),
 'ri mismatch': lambda T: T.randint(10, (2, 2), out=T.empty(4, dtype=T.int32), dtype=T.int64),
 'ri outgrad': lambda T: T.randint(10, (2, 2), out=T.empty(4, requires_grad=True)),
 'n size out': lambda T: T.normal(0., 1., (2, 2), out=T.empty(3)),
 'n size f64': lambda T: T.normal(1., 2., (2, 2), out=T.empty(4, dtype=T.float64)),
 'n size int': lambda T: T.normal(0., 1., (2, 2), out=T.empty(4, dtype=T.int64)),
 'n size outgrad': lambda T: T.normal(0., 1., (3,), out=T.empty(3, requires_grad=True)),
 'n size dtype': lambda T: T.normal(0., 1., (3,), out=T.empty(3), dtype=T.float64),
 'n tt out': lambda T: T.normal(T.tensor([0., 1., 2.]), T.tensor([1., 2., .5]), out=T.empty(1)),
 'n tt out0': lambda T: T.normal(T.tensor([0., 1., 2.]), T.tensor([1., 2., .5]), out=T.empty(0)),
 'n tt f64': lambda T: T.normal(T.tensor([0., 1., 2.]), T.tensor([1., 2., .5]), out=T.empty(3, dtype=T.float64)),
 'n tt int': lambda T: T.normal(T.tensor([0., 1., 2.]), T.tensor([1., 2., .5]), out=T.empty(3, dtype=T.int64)),
 'n t n': lambda T: T.normal(T.tensor([0., 1., 2.]), 2., out=T.empty(3)),
 'n n t': lambda T: T.normal(1., T.tensor([1., 2., .5]), out=T.empty(3)),
 'n tt bcast': lambda T: T.normal(T.tensor([[0.], [1.]]), T.tensor([1., 2., .5]), out=T.empty(2, 3)),
 'n tt grad': lambda T: T.normal(T.tensor([0., 1., 2.], requires_grad=True), T.tensor([1., 2., .5]), out=T.empty(3)),
 'n tt sgrad': lambda T: T.normal(T.tensor([0., 1., 2.]), T.tensor([1., 2., .5], requires_grad=True), out=T.empty(3)),
 'n tt outgrad': lambda T: T.normal(T.tensor([0., 1., 2.]), T.tensor([1., 2., .5]), out=T.empty(3, requires_grad=True)),
}


@pytest.mark.parametrize('case', list(CASES))
def test_random_factory_out_as_torch(case):
    got = []
    for T in (lg, torch):
        T.manual_seed(0)
        got.append(_run(T, CASES[case]) + (T.rand(2).tolist(),))
    assert got[0] == got[1]
