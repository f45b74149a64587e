"""leafgrad.unique and Tensor.unique against torch: values, inverse indices, counts, dtypes and
shapes (flattened and along a dim, NaNs, signed zeros, empty and 0-d inputs), the node PyTorch
records and the error its backward raises."""
import numpy as np
import pytest

from oracle import lg, torch

RNG = np.random.default_rng(0)
NAN = float('nan')
INPUTS = {
    'ints': np.array([3, 1, 2, 1, 3, 3]),
    'int32 matrix': RNG.integers(0, 4, (5, 3)).astype(np.int32),
    'floats 3d': RNG.integers(0, 3, (3, 4, 2)).astype(np.float32),
    'nans and zeros': np.array([NAN, 1.0, -0.0, NAN, 0.0, 1.0]),
    'bools': np.array([True, False, True]),
    'empty': np.zeros(0, dtype=np.float32),
    'empty rows': np.zeros((0, 3), dtype=np.float32),
    '0-d': np.array(5),
    'rows': np.array([[1, 2], [1, 2], [0, 5], [0, 1]]),
    'nan rows': np.array([[NAN, 1.0], [NAN, 1.0]]),
}
DIMS = {'ints': [None, 0, -1], 'int32 matrix': [None, 0, 1], 'floats 3d': [None, 0, 1, 2, -2],
        'nans and zeros': [None], 'bools': [None, 0], 'empty': [None], 'empty rows': [None, 0], '0-d': [None],
        'rows': [None, 0, 1], 'nan rows': [None, 0]}
CASES = [(name, dim, flags) for name in INPUTS for dim in DIMS[name]
         for flags in [(False, False), (True, False), (False, True), (True, True)]]


def _described(result):
    parts = result if isinstance(result, tuple) else (result,)
    return [(str(p.dtype).split('.')[-1], tuple(p.shape), repr(p.tolist())) for p in parts]


@pytest.mark.parametrize('name,dim,flags', CASES)
def test_unique_as_torch(name, dim, flags):
    x = INPUTS[name]
    results = [m.unique(m.tensor(x), True, *flags, dim=dim) for m in (lg, torch)]
    assert isinstance(results[0], tuple) == isinstance(results[1], tuple)
    assert _described(results[0]) == _described(results[1])


def test_method_and_sorted_false():
    x = INPUTS['ints']
    for sorted_ in (True, False):
        ours = lg.tensor(x).unique(sorted=sorted_, return_inverse=True)
        theirs = torch.tensor(x).unique(sorted=sorted_, return_inverse=True)
        assert _described(ours) == _described(theirs)


@pytest.mark.parametrize('dim', [None, 0])
def test_unique_has_no_derivative(dim):
    def run(m):
        x = m.tensor([[1.0, 2.0], [1.0, 2.0]], requires_grad=True)
        u = m.unique(x, dim=dim)
        try:
            u.sum().backward()
        except Exception as e:  # noqa: BLE001  compared
            return u.requires_grad, type(u.grad_fn).__name__, type(e).__name__, str(e)
    assert run(lg) == run(torch)


def test_dim_out_of_range():
    with pytest.raises(IndexError) as ours:
        lg.unique(lg.tensor(INPUTS['rows']), dim=2)
    with pytest.raises(IndexError) as theirs:
        torch.unique(torch.tensor(INPUTS['rows']), dim=2)
    assert str(ours.value) == str(theirs.value)
