"""PyTorch's deprecated names that old programs still use, against torch: nn.init's names
without the underscore (dirac and eye among them), nn.NLLLoss2d and nn.Container: the same
results and repr, with torch's FutureWarning."""
import warnings

import pytest

from oracle import torch
import leafgrad as lg


def _run(m, program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        m.manual_seed(0)
        out = program(m)
    return out, [(w.category.__name__, str(w.message)) for w in caught]


def _init(name, shape, *args, **kwargs):
    def program(m):
        t = m.empty(*shape)
        r = getattr(m.nn.init, name)(t, *args, **kwargs)
        # (to 5 places: orthogonal's QR rounds as the LAPACK underneath does)
        return r is t, [[round(v, 5) for v in row] for row in t.reshape(t.shape[0], -1).tolist()], \
            getattr(m.nn.init, name).__name__
    return program


PROGRAMS = {
    'eye': _init('eye', (3, 4)),
    'dirac': _init('dirac', (4, 2, 3)),
    'dirac groups': _init('dirac', (4, 2, 3, 3), groups=2),
    'uniform': _init('uniform', (2, 3), -1.0, 1.0),
    'normal': _init('normal', (2, 3), std=0.5),
    'constant': _init('constant', (2, 2), 0.3),
    'xavier_uniform': _init('xavier_uniform', (3, 5), gain=2.0),
    'xavier_normal': _init('xavier_normal', (3, 5)),
    'kaiming_uniform': _init('kaiming_uniform', (3, 5), a=0.1),
    'kaiming_normal': _init('kaiming_normal', (3, 5), mode='fan_out'),
    'orthogonal': _init('orthogonal', (3, 5)),
    'NLLLoss2d': lambda m: _nll2d(m),
    'Container': lambda m: repr(m.nn.Container(a=m.nn.Linear(2, 3), b=m.nn.ReLU())),
}


def _nll2d(m):
    loss = m.nn.NLLLoss2d(ignore_index=1, reduction='sum')
    x = m.log_softmax(m.arange(24.).reshape(2, 3, 2, 2) / 7, 1)
    y = m.tensor([[[0, 1], [2, 0]], [[1, 1], [0, 2]]])
    return repr(loss), round(loss(x, y).item(), 6), isinstance(loss, m.nn.NLLLoss)


@pytest.mark.parametrize('name', PROGRAMS)
def test_as_torch(name):
    got, want = _run(lg, PROGRAMS[name]), _run(torch, PROGRAMS[name])
    assert got == want
    assert want[1]  # (torch warns)
