"""out= of cat, stack, gather, tensordot and the factories zeros/ones/empty against torch: the
values written into out (resized as PyTorch resizes it, with its warning where it warns), the
same object returned, the version bumped, and PyTorch's errors for a wrong dtype or an input
that requires grad. (Before, these accepted out= and ignored it.)"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402

A, B = np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)
CASES = {
    'cat': lambda T, o: T.cat([T.tensor(A, dtype=T.float32), T.tensor(B, dtype=T.float32)], out=o),
    'cat dim 1': lambda T, o: T.cat([T.tensor(A, dtype=T.float32), T.tensor(B, dtype=T.float32)], 1, out=o),
    'stack': lambda T, o: T.stack([T.tensor(A, dtype=T.float32), T.tensor(B, dtype=T.float32)], out=o),
    'gather': lambda T, o: T.gather(T.tensor(A, dtype=T.float32), 1, T.tensor([[0], [2]]), out=o),
    'tensordot': lambda T, o: T.tensordot(T.tensor(A, dtype=T.float32), T.tensor(B.T, dtype=T.float32), dims=1,
                                          out=o),
    'zeros': lambda T, o: T.zeros(2, 3, out=o),
    'ones': lambda T, o: T.ones((3,), out=o),
    'ones float64 asked': lambda T, o: T.ones(2, out=o, dtype=T.float64),
    'empty': lambda T, o: T.empty(2, 2, out=o).shape,
}
OUTS = {'float32 of the shape': lambda T: {'cat': T.empty(4, 3), 'cat dim 1': T.empty(2, 6), 'stack': T.empty(2, 2, 3),
                                           'gather': T.empty(2, 1), 'tensordot': T.empty(2, 2)},
        'float64': lambda T: T.empty(1, dtype=T.float64),
        'int64': lambda T: T.empty(0, dtype=T.int64),
        'empty float32': lambda T: T.empty(0),
        'float32 of another shape': lambda T: T.empty(5),
        'requiring grad': lambda T: T.empty(0, requires_grad=True)}


def _result(T, case, out_kind):
    out = OUTS[out_kind](T)
    if isinstance(out, dict):
        out = out.get(case, T.empty(0))
    version = out._version
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            r = CASES[case](T, out)
        except Exception as e:
            return type(e).__name__, str(e).replace('leafgrad', 'torch')
    same = r is out
    values = None if case == 'empty' else out.detach().numpy().tolist()
    return (same, out._version > version, str(out.dtype).split('.')[-1], tuple(out.shape), values,
            [str(w.message).split(' (Triggered internally at')[0] for w in caught])


@pytest.mark.parametrize('out_kind', list(OUTS))
@pytest.mark.parametrize('case', list(CASES))
def test_out_as_torch(case, out_kind):
    assert _result(lg, case, out_kind) == _result(torch, case, out_kind)


def test_cat_refuses_out_when_an_input_requires_grad():
    msgs = []
    for T in (lg, torch):
        with pytest.raises(RuntimeError) as info:
            T.cat([T.ones(2, requires_grad=True), T.ones(2)], out=T.empty(4))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


REFUSED = {  # ops that take out= in PyTorch but do not write it in leafgrad yet: refused, never ignored
    'linalg.inv': lambda T, o: T.linalg.inv(T.eye(2), out=o),
    'linalg.det': lambda T, o: T.linalg.det(T.eye(2), out=o),
    'linalg.solve': lambda T, o: T.linalg.solve(T.eye(2), T.ones(2), out=o),
    'linalg.cholesky': lambda T, o: T.linalg.cholesky(T.eye(2), out=o),
    'linalg.svdvals': lambda T, o: T.linalg.svdvals(T.eye(2), out=o),
    'linalg.pinv': lambda T, o: T.linalg.pinv(T.eye(2), out=o),
    'linalg.cross': lambda T, o: T.linalg.cross(T.ones(3), T.ones(3), out=o),
    'linalg.vecdot': lambda T, o: T.linalg.vecdot(T.ones(3), T.ones(3), out=o),
    'linalg.multi_dot': lambda T, o: T.linalg.multi_dot([T.eye(2), T.eye(2)], out=o),
    'kron': lambda T, o: T.kron(T.eye(2), T.eye(2), out=o),
    'inner': lambda T, o: T.inner(T.ones(2), T.ones(2), out=o),
    'quantile': lambda T, o: T.quantile(T.ones(4), 0.5, out=o),
    'gcd': lambda T, o: T.gcd(T.tensor([4]), T.tensor([6]), out=o.long()),
    'searchsorted': lambda T, o: T.searchsorted(T.arange(4), T.tensor([2]), out=o.long()),
    'histc': lambda T, o: T.histc(T.ones(4), out=o),
    'max': lambda T, o: T.max(T.ones(2, 2), 1, out=(o, T.empty(2, dtype=T.int64))),
}


@pytest.mark.parametrize('name', list(REFUSED))
def test_out_not_written_yet_is_refused(name):
    """torch writes these outs; leafgrad says it does not (NotImplementedError), and leaves out as
    it was, instead of accepting out= and ignoring it."""
    REFUSED[name](torch, torch.empty(0))  # (torch accepts it: the deviation is leafgrad's)
    out = lg.full((3,), 7.0)
    with pytest.raises(NotImplementedError, match='does not write out= for this op yet'):
        REFUSED[name](lg, out)
    assert out.tolist() == [7.0, 7.0, 7.0]
