"""Helpers to run the same computation in leafgrad and in torch and compare the results."""
import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def pair(array, requires_grad=False):
    """The same data as a leafgrad tensor and a torch tensor."""
    array = np.asarray(array)
    return (lg.tensor(array.copy(), requires_grad=requires_grad),
            torch.tensor(array.copy(), requires_grad=requires_grad))


def to_np(t):
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach()._data)


def assert_same(lt, tt, rtol=1e-5, atol=1e-6):
    """Values, shape and dtype agree (dtype by name)."""
    if tt is None or lt is None:
        assert lt is None and tt is None, (lt, tt)
        return
    assert tuple(lt.shape) == tuple(tt.shape), (lt.shape, tt.shape)
    assert str(lt.dtype).split('.')[-1] == str(tt.dtype).split('.')[-1], (lt.dtype, tt.dtype)
    np.testing.assert_allclose(to_np(lt), to_np(tt), rtol=rtol, atol=atol, equal_nan=True)


def raises_like(fn_lg, fn_torch):
    """Both raise the same exception type; returns the two messages."""
    try:
        fn_torch()
    except Exception as e:
        t_exc = e
    else:
        raise AssertionError('torch did not raise')
    with pytest.raises(type(t_exc)) as info:
        fn_lg()
    return str(info.value), str(t_exc)


def torch_part(lg_msg):
    """A version-counter error without its last line: PyTorch's message (leafgrad's last
    line names the user's line that changed the tensor in place)."""
    head, sep, last = lg_msg.rpartition('\nIt was ')
    return head if sep and ' in place at ' in last else lg_msg


def same_message(lg_msg, torch_msg):
    """The same message, 'leafgrad' read as 'torch' (and a version-counter error's line
    naming where the tensor was changed, which PyTorch has not, left out)."""
    return torch_part(lg_msg).replace('leafgrad', 'torch') == torch_msg
