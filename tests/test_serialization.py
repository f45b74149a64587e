"""leafgrad.save / leafgrad.load: round trips, and truncated, tampered and wrong-shape files
rejected with the model left unchanged."""
import io
import json
import math
import os
import struct
from collections import OrderedDict

import numpy as np
import pytest

pytest.importorskip('safetensors')
torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
from leafgrad.serialization import CheckpointError  # noqa: E402
from oracle import raises_like, same_message  # noqa: E402


def _model(seed=0):
    lg.manual_seed(seed)
    return lg.nn.Sequential(lg.nn.Linear(4, 5), lg.nn.Tanh(), lg.nn.Linear(5, 2))


def _state(m):
    return {k: v.numpy().copy() for k, v in m.state_dict().items()}


def test_tensor_round_trip_all_dtypes(tmp_path):
    objs = {
        'f32': lg.randn(3, 4), 'f64': lg.randn(2, dtype=lg.float64), 'f16': lg.tensor([1.5, -2.0], dtype=lg.float16),
        'i64': lg.arange(5), 'i32': lg.tensor([1, -2], dtype=lg.int32), 'i16': lg.tensor([3], dtype=lg.int16),
        'i8': lg.tensor([-4], dtype=lg.int8), 'u8': lg.tensor([250], dtype=lg.uint8),
        'bool': lg.tensor([True, False]), 'scalar': lg.tensor(2.5), 'empty': lg.zeros(0, 3),
        'strided': lg.arange(12.0).reshape(3, 4).t(),
    }
    path = tmp_path / 'tensors.lgt'
    lg.save(objs, path)
    back = lg.load(path)
    assert list(back) == list(objs)
    for k, v in objs.items():
        assert back[k].dtype == v.dtype and tuple(back[k].shape) == tuple(v.shape), k
        np.testing.assert_array_equal(back[k].numpy(), v.numpy())
    back['f32'].add_(1)  # loaded tensors own writable memory
    single = tmp_path / 'one.lgt'
    lg.save(objs['f32'], single)
    np.testing.assert_array_equal(lg.load(single).numpy(), objs['f32'].numpy())


def test_structures_round_trip(tmp_path):
    p = lg.nn.Parameter(lg.randn(2))
    shared = lg.ones(3)
    obj = {'params': p, 'grad': lg.zeros(2, requires_grad=True), 'a': shared, 'b': shared,
           1: (1.5, math.inf, -math.inf, None, 'text', True), 'nested': [{'x': [1, 2]}, (lg.tensor([7]),)],
           'ordered': OrderedDict([('z', 1), ('y', 2)]), 'nan': math.nan, 'dtype': lg.float64, 'set': {3, 4}}
    buf = io.BytesIO()
    lg.save(obj, buf)
    back = lg.load(io.BytesIO(buf.getvalue()))
    assert isinstance(back['params'], lg.nn.Parameter) and back['params'].requires_grad
    assert back['grad'].requires_grad and not isinstance(back['grad'], lg.nn.Parameter)
    assert back['a'] is back['b']  # one tensor saved once stays one tensor
    assert back[1][:2] == (1.5, math.inf) and back[1][2:] == (-math.inf, None, 'text', True)
    assert back['nested'][0] == {'x': [1, 2]} and back['nested'][1][0].tolist() == [7]
    assert isinstance(back['ordered'], OrderedDict) and list(back['ordered']) == ['z', 'y']
    assert math.isnan(back['nan']) and back['dtype'] is lg.float64 and back['set'] == {3, 4}


def test_refuses_what_it_cannot_store_without_pickle(tmp_path):
    with pytest.raises(TypeError, match='no pickle'):
        lg.save({'f': lambda: 0}, tmp_path / 'x.lgt')
    assert not os.listdir(tmp_path)  # nothing written, no temp file left
    # a torch (pickle) checkpoint is rejected, not unpickled
    torch.save({'a': torch.ones(2)}, tmp_path / 'torch.pt')
    with pytest.raises(CheckpointError):
        lg.load(tmp_path / 'torch.pt')


def test_model_and_optimizer_checkpoint_resumes_exactly(tmp_path):
    x, y = lg.randn(16, 4), lg.randn(16, 2)

    def train(m, opt, sched, n):
        for _ in range(n):
            opt.zero_grad()
            ((m(x) - y) ** 2).mean().backward()
            opt.step()
            sched.step()

    m = _model()
    opt = lg.optim.AdamW(m.parameters(), lr=0.01, amsgrad=True)
    sched = lg.optim.lr_scheduler.StepLR(opt, 3, 0.5)
    train(m, opt, sched, 5)
    path = tmp_path / 'ckpt.lgt'
    lg.save({'model': m.state_dict(), 'optim': opt.state_dict(), 'sched': sched.state_dict(), 'epoch': 5}, path)
    train(m, opt, sched, 5)

    ck = lg.load(path)
    m2 = _model(seed=1)
    m2.load_state_dict(ck['model'])
    opt2 = lg.optim.AdamW(m2.parameters(), lr=0.01, amsgrad=True)
    opt2.load_state_dict(ck['optim'])
    sched2 = lg.optim.lr_scheduler.StepLR(opt2, 3, 0.5)
    sched2.load_state_dict(ck['sched'])
    assert ck['epoch'] == 5 and isinstance(ck['model'], OrderedDict)
    train(m2, opt2, sched2, 5)
    for k, v in _state(m).items():
        np.testing.assert_array_equal(_state(m2)[k], v)
    assert opt2.param_groups[0]['lr'] == opt.param_groups[0]['lr']


def _saved_model_file(tmp_path):
    path = tmp_path / 'model.lgt'
    lg.save(_model(seed=3).state_dict(), path)
    return path, path.read_bytes()


def _check_rejected(path, model):
    before = _state(model)
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(lg.load(path))
    for k, v in _state(model).items():
        np.testing.assert_array_equal(v, before[k])
    return str(info.value)


@pytest.mark.parametrize('cut', [0, 5, 8, 40, -200, -1])
def test_truncated_file_is_rejected(tmp_path, cut):
    path, data = _saved_model_file(tmp_path)
    path.write_bytes(data[:cut] if cut else b'')
    msg = _check_rejected(path, _model())
    assert 'truncated' in msg or 'corrupted' in msg


@pytest.mark.parametrize('where', ['data', 'structure', 'digest', 'header'])
def test_tampered_file_is_rejected(tmp_path, where):
    path, data = _saved_model_file(tmp_path)
    data = bytearray(data)
    (n,) = struct.unpack('<Q', bytes(data[:8]))
    header = json.loads(bytes(data[8:8 + n]))
    if where == 'data':
        data[-3] ^= 0x01
    else:
        meta = header['__metadata__']
        if where == 'structure':
            meta['structure'] = meta['structure'].replace('"requires_grad":false', '"requires_grad":true', 1)
        elif where == 'digest':
            meta['sha256'] = '0' * 64
        else:
            first = next(k for k in header if k != '__metadata__')
            header[first]['shape'] = header[first]['shape'][::-1] + [1]
        raw = json.dumps(header).encode()
        raw += b' ' * (-len(raw) % 8)
        data = struct.pack('<Q', len(raw)) + raw + bytes(data[8 + n:])
    path.write_bytes(bytes(data))
    msg = _check_rejected(path, _model())
    assert 'leafgrad.load' in msg


def test_wrong_shape_is_rejected_like_torch(tmp_path):
    path = tmp_path / 'wide.lgt'
    lg.manual_seed(0)
    lg.save(lg.nn.Sequential(lg.nn.Linear(4, 6), lg.nn.Tanh(), lg.nn.Linear(6, 2)).state_dict(), path)
    m = _model()
    before = _state(m)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    tsd = {k: torch.tensor(v.numpy()) for k, v in lg.load(path).items()}
    lmsg, tmsg = raises_like(lambda: m.load_state_dict(lg.load(path)), lambda: tm.load_state_dict(tsd))
    assert same_message(lmsg, tmsg), (lmsg, tmsg)
    for k, v in _state(m).items():
        np.testing.assert_array_equal(v, before[k])


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / 'ckpt.lgt'
    lg.save({'v': lg.tensor([1.0])}, path)
    original = path.read_bytes()

    def failing_fsync(fd):
        raise OSError('disk full')
    monkeypatch.setattr(os, 'fsync', failing_fsync)
    with pytest.raises(OSError, match='disk full'):
        lg.save({'v': lg.tensor([2.0])}, path)
    monkeypatch.undo()
    assert path.read_bytes() == original  # the old checkpoint is intact
    assert os.listdir(tmp_path) == ['ckpt.lgt']  # and no temporary file is left behind
    lg.save({'v': lg.tensor([3.0])}, path)
    assert lg.load(path)['v'].tolist() == [3.0]


def _sched_run(lib, path=None, resume_from=None):
    """Three schedulers on one optimizer, 6 steps, optionally saved and resumed half-way."""
    w = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    ms = lib.optim.lr_scheduler.MultiStepLR(opt, [2, 4, 4], 0.5)
    plateau = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    if resume_from is not None:
        ck = lib.load(resume_from)
        with lib.no_grad():
            w.copy_(ck['w'])
        opt.load_state_dict(ck['opt'])
        ms.load_state_dict(ck['ms'])
        plateau.load_state_dict(ck['plateau'])
    lrs = []
    start = 3 if resume_from is not None else 0
    for i in range(start, 6):
        opt.zero_grad()
        (w * lib.tensor([1.0, 2.0])).sum().backward()
        opt.step()
        ms.step()
        plateau.step([1.0, 0.5, 0.5, 0.5, 0.2, 0.2][i])
        lrs.append(opt.param_groups[0]['lr'])
        if path is not None and i == 2:
            lib.save({'w': w, 'opt': opt.state_dict(), 'ms': ms.state_dict(), 'plateau': plateau.state_dict()}, path)
    return lrs, w.detach().numpy().copy()


def test_scheduler_state_round_trip(tmp_path):
    path = tmp_path / 'sched.lgt'
    full, w_full = _sched_run(lg, path=path)
    resumed, w_resumed = _sched_run(lg, resume_from=path)
    assert resumed == full[3:]
    np.testing.assert_array_equal(w_resumed, w_full)
    t_full, _ = _sched_run(torch)
    np.testing.assert_allclose(full, t_full, rtol=1e-12)
    ck = lg.load(path)
    assert type(ck['ms']['milestones']).__name__ == 'Counter' and ck['plateau']['best'] == 0.5
