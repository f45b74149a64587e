"""leafgrad.tensor reads any Python sequence as torch.tensor does (PySequence_Check): a deque, a
UserList, a custom Sequence, not only lists and tuples (pytorch/examples' reinforce.py builds its
returns in a deque). Compared with torch: values, dtype, shape, and the error for a non-sequence;
NumPy arrays inside the data (PyTorch's warning that this is slow, its error for a 0-d array
first in a list, the legacy constructors)."""
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


# ---- NumPy arrays inside the data of torch.tensor and the legacy constructors -------------------

_WITH_ARRAYS = ['tensor([np.array([1, 2]), np.array([3, 4])])', 'tensor((np.array([1, 2]),))',
                'tensor([[np.array([1, 2])]])', 'as_tensor([np.array([1, 2])])', 'FloatTensor([np.array([1.0])])',
                'tensor([[1, 2], np.array([3, 4])])', 'tensor([np.float64(1.0)])', 'Tensor([np.array([1.0])])',
                'tensor(np.array([1.0]))', 'tensor([np.array(1.0), 2.0])', 'tensor([1.0, np.array(2.0)])',
                'FloatTensor([1.0, np.array(2.0)])', 'tensor([[np.array(1)]])']


def _made_with_arrays(module, tmp_path, expression):
    """What the expression gives and whether it warned that a list of arrays is slow (a fresh
    process: PyTorch warns once a process)."""
    import json
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (f'import json, warnings, numpy as np\nimport {module} as torch\nwarnings.simplefilter("always")\n'
            'with warnings.catch_warnings(record=True) as w:\n'
            '    try:\n'
            f'        r = torch.{expression}\n'
            '        said = [r.tolist(), str(r.dtype).split(".")[-1]]\n'
            '    except Exception as e:\n'
            '        said = [type(e).__name__, str(e)]\n'
            'said.append(["extremely slow" in str(x.message) for x in w])\n'
            'print(json.dumps(said))\n')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get('PYTHONPATH', '')))
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize('expression', _WITH_ARRAYS)
def test_numpy_arrays_inside_a_tensors_data_as_pytorch(expression, tmp_path):
    """(PyTorch's warning had not been given, a 0-d array first in a list had been taken where
    PyTorch asks it its length, and the legacy constructors had refused arrays inside a list.)"""
    assert _made_with_arrays('leafgrad', tmp_path, expression) == _made_with_arrays('torch', tmp_path, expression)
