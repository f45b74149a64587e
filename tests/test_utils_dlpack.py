"""torch.from_dlpack and torch.utils.dlpack against torch: tensors on the memory of NumPy arrays,
torch tensors and DLPack capsules, both ways; the errors."""
import numpy as np
import pytest

from oracle import lg, torch


def test_from_numpy_array_shares_memory():
    for T in (lg, torch):
        a = np.arange(6.0).reshape(2, 3)
        t = T.from_dlpack(a)
        a[0, 0] = 9
        assert t.tolist() == [[9.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and not t.requires_grad and t.dtype == T.float64
        assert T.from_dlpack(np.arange(4.0)[::2]).stride() == (2,)
        assert T.from_dlpack(a, copy=True).tolist() == t.tolist()
        assert T.from_dlpack(np.array(True)).dtype == T.bool


def test_between_leafgrad_and_torch():
    t = torch.from_dlpack(lg.arange(4.0))
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0] and t.dtype == torch.float32
    ours = lg.from_dlpack(torch.ones(2, 3).t())
    assert ours.stride() == (1, 3) and ours.dtype == lg.float32
    assert lg.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(3))).tolist() == [0, 1, 2]
    assert np.from_dlpack(lg.ones(2)).tolist() == [1.0, 1.0]


def test_capsules_are_read_once():
    from leafgrad.utils import dlpack
    assert dlpack.from_dlpack is lg.from_dlpack and torch.utils.dlpack.from_dlpack is torch.from_dlpack
    errors = []
    for T, capsule in ((lg, dlpack.to_dlpack(lg.arange(3))), (torch, torch.utils.dlpack.to_dlpack(torch.arange(3)))):
        assert 'dltensor' in repr(capsule)
        assert T.from_dlpack(capsule).tolist() == [0, 1, 2]
        with pytest.raises(RuntimeError) as info:
            T.from_dlpack(capsule)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_device_and_enum():
    from leafgrad.utils import dlpack
    device = lg.ones(1).__dlpack_device__()
    assert device == torch.ones(1).__dlpack_device__() and repr(device[0]) == '<DLDeviceType.kDLCPU: 1>'
    assert {k: int(v) for k, v in dlpack.DLDeviceType.__members__.items()} == \
        {k: int(v) for k, v in torch.utils.dlpack.DLDeviceType.__members__.items()}


@pytest.mark.parametrize('call', ['T.utils.dlpack.to_dlpack(x)', 'x.__dlpack__()', 'T.from_dlpack(x)',
                                  'T.from_dlpack(3)', 'T.from_dlpack([1, 2])', 'T.utils.dlpack.to_dlpack(3)'])
def test_calls_and_errors_as_torch(call):
    outcomes = []
    import importlib
    importlib.import_module('leafgrad.utils.dlpack')
    importlib.import_module('torch.utils.dlpack')
    for T in (lg, torch):
        x = T.ones(2, requires_grad=True)
        try:
            result = eval(call, {'T': T, 'x': x})
            outcomes.append(('ok', type(result).__name__))
        except Exception as e:
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]
