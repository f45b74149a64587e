"""torch.randint's call forms as PyTorch binds them: the one bound given positionally with size
as a keyword (randint(high, size=...), as pytorch/examples' mnist_forward_forward calls it) draws
from [0, high); keyword bounds; and PyTorch's errors where a form is refused."""
import numpy as np
import pytest

import leafgrad as lg

torch = pytest.importorskip('torch')

DRAWS = [((9,), dict(size=(1,))), ((9,), dict(size=[2, 3], dtype='int32')), ((), dict(high=9, size=(2,))),
         ((), dict(low=2, high=9, size=(2,))), ((2, 9), dict(size=(4,))), ((9, (3,)), {}), ((2, 9, (3,)), {}),
         ((9,), dict(high=12, size=(2,))), ((2 ** 40,), dict(size=(5,)))]
REFUSED = [((9.5,), dict(size=(2,))), ((True,), dict(size=(2,))), ((9,), dict(size=3)), ((9,), dict(size=3.0)),
           ((9,), dict(size=(2.0,))), ((), dict(size=(2,))), ((9,), dict(high=3, size=(2,)))]


def _call(T, args, kwargs):
    kwargs = {k: getattr(T, v) if k == 'dtype' else v for k, v in kwargs.items()}
    T.manual_seed(3)
    try:
        return T.randint(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return e


@pytest.mark.parametrize('args, kwargs', DRAWS)
def test_draws_as_torch(args, kwargs):
    ours, theirs = _call(lg, args, kwargs), _call(torch, args, kwargs)
    assert isinstance(theirs, torch.Tensor) and isinstance(ours, lg.Tensor), (ours, theirs)
    assert str(ours.dtype).replace('leafgrad', 'torch') == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize('args, kwargs', REFUSED)
def test_refused_as_torch(args, kwargs):
    ours, theirs = _call(lg, args, kwargs), _call(torch, args, kwargs)
    assert isinstance(theirs, Exception) and isinstance(ours, Exception), (ours, theirs)
    assert type(ours) is type(theirs)
    assert str(ours).split('\n')[0].replace('leafgrad', 'torch') == str(theirs).split('\n')[0]
