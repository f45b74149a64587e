"""leafgrad.tensor reads any Python sequence as torch.tensor does (PySequence_Check): a deque, a
UserList, a custom Sequence, not only lists and tuples (pytorch/examples' reinforce.py builds its
returns in a deque). Compared with torch: values, dtype, shape, and the error for a non-sequence."""
import collections

import pytest

import leafgrad as lg

torch = pytest.importorskip('torch')


class Squares(collections.abc.Sequence):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        if not 0 <= i < 3:
            raise IndexError(i)
        return float(i * i)


CASES = {
    'deque of floats': lambda: collections.deque([1.5, -2.0, 3.25]),
    'deque of ints': lambda: collections.deque([1, 2, 3]),
    'deque of lists': lambda: collections.deque([[1.0, 2.0], [3.0, 4.0]]),
    'appendleft deque': lambda: _left(),
    'UserList': lambda: collections.UserList([True, False]),
    'custom Sequence': Squares,
    'empty deque': collections.deque,
}


def _left():
    d = collections.deque()
    for r in (1.0, 0.5, 0.25):
        d.appendleft(r)
    return d


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('factory', ['tensor', 'as_tensor'])
def test_any_sequence_reads_as_torch_reads_it(name, factory):
    ours = getattr(lg, factory)(CASES[name]())
    theirs = getattr(torch, factory)(CASES[name]())
    assert str(ours.dtype).replace('leafgrad', 'torch') == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.tolist() == theirs.tolist()


def test_a_mapping_is_no_sequence():
    with pytest.raises(RuntimeError, match='Could not infer dtype of dict'):
        torch.tensor({'a': 1})
    with pytest.raises(RuntimeError, match='Could not infer dtype of dict'):
        lg.tensor({'a': 1})
