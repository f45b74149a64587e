"""leafgrad.save / leafgrad.load on leafgrad's own format: round trips; truncated, tampered and
wrong-shape files rejected with the model left unchanged; files that leafgrad.save would not write
(odd JSON with a recomputed digest, foreign dtypes, huge headers, unending files) refused with
CheckpointError; loading that streams; and how files are written (atomically, through symlinks,
with the umask's permissions, nothing left behind by a killed save)."""
import hashlib
import io
import json
import math
import os
import pickle
import random
import stat
import struct
import subprocess
import sys
import threading
import tracemalloc
from collections import OrderedDict

import numpy as np
import pytest

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


def test_refuses_what_pickle_cannot_store_and_writes_nothing(tmp_path):
    with pytest.raises(AttributeError, match="Can't pickle local object"):  # (pickle's error; torch.save's too)
        lg.save({'f': lambda: 0}, tmp_path / 'x.lgt')
    assert not os.listdir(tmp_path)  # nothing written, no temp file left
    buf = io.BytesIO()
    with pytest.raises(TypeError, match="cannot pickle '_thread.lock' object"):
        lg.save([lg.ones(2), threading.Lock()], buf)
    assert buf.getvalue() == b''


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


# ---- files that leafgrad.save would not write ----------------------------------------------------
_CODES = {np.dtype(k): v for k, v in {'float32': 'F32', 'float64': 'F64', 'int64': 'I64', 'bool': 'BOOL',
                                      'uint32': 'U32', 'uint64': 'U64', 'uint16': 'U16', 'uint8': 'U8'}.items()}


def _forge(path, structure, arrays=None, header=None):
    """A file laid out as leafgrad.save lays one out, holding any structure text or JSON value, with
    the digest recomputed to match (what anyone editing a checkpoint can write)."""
    arrays = {'t0': np.arange(3, dtype=np.float32)} if arrays is None else arrays
    text = structure if isinstance(structure, str) else json.dumps(structure)
    h = hashlib.sha256(text.encode())
    for key in sorted(arrays):
        h.update(f'{key}:{arrays[key].dtype.str}:{arrays[key].shape}'.encode())
        h.update(arrays[key].tobytes())
    if header is None:
        header = {'__metadata__': {'format': 'leafgrad-checkpoint/1', 'structure': text, 'sha256': h.hexdigest()}}
        offset = 0
        for key, a in arrays.items():
            header[key] = {'dtype': _CODES[a.dtype], 'shape': list(a.shape),
                           'data_offsets': [offset, offset + a.nbytes]}
            offset += a.nbytes
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    raw += b' ' * (-len(raw) % 8)
    path.write_bytes(struct.pack('<Q', len(raw)) + raw + b''.join(a.tobytes() for a in arrays.values()))
    return path


_T = {'__tensor__': 't0', 'shape': [3], 'requires_grad': False, 'parameter': False}


_ODD_STRUCTURES = {
    'tensor key of another type': {'__tensor__': 5}, 'missing array': {'__tensor__': 't9'},
    'shape a string': {**_T, 'shape': 'abc'}, 'negative dim': {**_T, 'shape': [-3]},
    'huge dim': {**_T, 'shape': [2 ** 70, 0]}, 'float dim': {**_T, 'shape': [3.0]},
    'bool dim': {**_T, 'shape': [True, 3]},
    'other element count': {**_T, 'shape': [2, 2]}, 'requires_grad a string': {**_T, 'requires_grad': 'yes'},
    'parameter a number': {**_T, 'parameter': 1}, 'unknown tensor field': {**_T, 'grad': None},
    'one array two shapes': [_T, {**_T, 'shape': [3, 1]}], 'float tag garbage': {'__float__': 'abc'},
    'float tag number': {'__float__': 3}, 'float tag extra field': {'__float__': 'inf', 'x': 1},
    'dtype unknown': {'__dtype__': 'complex32'}, 'dtype a number': {'__dtype__': 7},
    'dtype alias': {'__dtype__': 'float'}, 'device unknown': {'__device__': 'xpu'},
    'device malformed': {'__device__': 'cuda:x'}, 'device a number': {'__device__': 5},
    'tuple of a number': {'__tuple__': 3}, 'tuple of a string': {'__tuple__': 'abc'},
    'set of a list': {'__set__': [[1]]}, 'dict of a number': {'__dict__': 3},
    'dict item not a pair': {'__dict__': [[1]]},
    'dict key a list': {'__dict__': [[[1], 2]]}, 'dict kind unknown': {'__dict__': [], 'kind': 'weird'},
    'dict kind a number': {'__dict__': [], 'kind': 5}, 'unknown tag': {'__unknown__': 1}, 'untagged dict': {'a': 1},
    'two tags': {'__tuple__': [], '__set__': []}, 'lists 900 deep': '[' * 900 + ']' * 900,
    'tuples 600 deep': '{"__tuple__": [' * 600 + '1' + ']}' * 600,
    'text nested 100000 deep': '[' * 100000 + ']' * 100000, 'a huge float': '[1e999]', 'a NaN literal': '[NaN]',
    'a 5000-digit integer': '[' + '7' * 5000 + ']', 'not JSON': '{"a":', 'bytes not UTF-8': '["\udcff"]',
}


@pytest.mark.parametrize('case', sorted(_ODD_STRUCTURES))
def test_odd_structure_with_a_recomputed_digest_is_a_checkpoint_error(tmp_path, case):
    structure = _ODD_STRUCTURES[case]
    if case == 'bytes not UTF-8':
        path = _forge(tmp_path / 'odd.lgt', '[1]')
        data = path.read_bytes()
        path.write_bytes(data.replace(b'"[1]"', b'"\xff[]"'))  # (the header's own JSON holds it)
    else:
        path = _forge(tmp_path / 'odd.lgt', structure)
    with pytest.raises(CheckpointError, match='leafgrad.load'):
        lg.load(path)


def test_int_tensor_that_requires_grad_is_a_checkpoint_error(tmp_path):
    path = _forge(tmp_path / 'int.lgt', {**_T, 'requires_grad': True}, {'t0': np.arange(3)})
    with pytest.raises(CheckpointError, match='floating point'):
        lg.load(path)


_ODD_HEADERS = {
    'a list': [1, 2], 'metadata not strings': {'__metadata__': {'format': 'leafgrad-checkpoint/1', 'structure': 5}},
    'entry a string': {'t0': 'x'}, 'dtype a number': {'t0': {'dtype': 5, 'shape': [3], 'data_offsets': [0, 12]}},
    'negative offset': {'t0': {'dtype': 'F32', 'shape': [3], 'data_offsets': [-1, 11]}},
    'offsets reversed': {'t0': {'dtype': 'F32', 'shape': [0], 'data_offsets': [12, 0]}},
    'size disagrees': {'t0': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 12]}},
    'extra field': {'t0': {'dtype': 'F32', 'shape': [3], 'data_offsets': [0, 12], 'x': 1}},
    'overlap': {'t0': {'dtype': 'F32', 'shape': [3], 'data_offsets': [0, 12]},
                't1': {'dtype': 'F32', 'shape': [1], 'data_offsets': [8, 12]}},
    'huge shape': {'t0': {'dtype': 'F32', 'shape': [2 ** 40, 2 ** 40, 2 ** 40], 'data_offsets': [0, 12]}},
    'many dims': {'t0': {'dtype': 'F32', 'shape': [1] * 100, 'data_offsets': [0, 4]}},
    'no digest': {'__metadata__': {'format': 'leafgrad-checkpoint/1', 'structure': '[]'}},
}


@pytest.mark.parametrize('case', sorted(_ODD_HEADERS))
def test_odd_header_is_a_checkpoint_error(tmp_path, case):
    path = _forge(tmp_path / 'odd.lgt', [], header=_ODD_HEADERS[case])
    with pytest.raises(CheckpointError, match='leafgrad.load'):
        lg.load(path)


@pytest.mark.parametrize('dtype', ['uint32', 'uint64', 'uint16'])
def test_arrays_of_dtypes_leafgrad_lacks_are_refused(tmp_path, dtype):
    path = _forge(tmp_path / 'u.lgt', {**_T}, {'t0': np.arange(3, dtype=dtype)})
    with pytest.raises(CheckpointError, match=f'torch.{dtype}'):
        lg.load(path)


def test_bool_bytes_other_than_zero_and_one_are_refused(tmp_path):
    path = _forge(tmp_path / 'b.lgt', {**_T}, {'t0': np.array([0, 1, 7], np.uint8).view(np.bool_)})
    with pytest.raises(CheckpointError, match='bool'):
        lg.load(path)


class _Unending(io.RawIOBase):
    """A seekable file of ``size`` bytes whose first 8 announce a header of all the rest; counts what
    is read from it (nothing is held in memory)."""

    def __init__(self, size):
        self.size, self.pos, self.served = size, 0, 0
        self.head = struct.pack('<Q', size - 8) + b'{'

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, pos, whence=0):
        self.pos = (pos, self.pos + pos, self.size + pos)[whence]
        return self.pos

    def tell(self):
        return self.pos

    def readinto(self, b):
        n = max(0, min(len(b), self.size - self.pos))
        data = (self.head[self.pos:] + b' ' * n)[:n] if self.pos < len(self.head) else b' ' * n
        b[:n] = data
        self.pos += n
        self.served += n
        return n


def test_header_size_is_checked_before_the_header_is_read():
    huge = _Unending(83 << 20)
    with pytest.raises(CheckpointError, match='header'):
        lg.load(io.BufferedReader(huge))
    assert huge.served <= 64 << 10  # the first bytes, not the 83 MiB


def test_header_cap_is_also_a_save_error(tmp_path, monkeypatch):
    from leafgrad.serialization import _native
    monkeypatch.setattr(_native, 'MAX_HEADER', 512)
    with pytest.raises(ValueError, match='header'):
        lg.save(list(range(200)), tmp_path / 'long.lgt')
    assert not os.listdir(tmp_path)


def test_dev_zero_is_read_with_a_bound():
    code = ("import resource, leafgrad\n"
            "resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))\n"
            "for f in ('/dev/zero', open('/dev/zero', 'rb')):\n"
            "    try:\n"
            "        leafgrad.load(f)\n"
            "    except leafgrad.serialization.CheckpointError as e:\n"
            "        print('CheckpointError:', e)\n")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith('CheckpointError:') for line in lines), (out.stdout, out.stderr)


def test_a_named_pipe_streams(tmp_path):
    fifo = tmp_path / 'pipe'
    os.mkfifo(fifo)
    buf = io.BytesIO()
    lg.save({'w': lg.arange(5.0), 'n': 3}, buf)
    claims_4_tib = {'__metadata__': {'format': 'leafgrad-checkpoint/1', 'structure': '[]', 'sha256': ''},
                    't0': {'dtype': 'F32', 'shape': [1 << 40], 'data_offsets': [0, 4 << 40]}}
    huge = _forge(tmp_path / 'huge.lgt', [], header=claims_4_tib).read_bytes()
    for payload, expect in ((buf.getvalue(), None), (buf.getvalue()[:60], 'truncated'), (huge, 'truncated')):
        writer = threading.Thread(target=fifo.write_bytes, args=(payload,))
        writer.start()
        try:
            if expect is None:
                got = lg.load(fifo)
                assert got['w'].tolist() == [0, 1, 2, 3, 4] and got['n'] == 3
            else:
                with pytest.raises(CheckpointError, match=expect):
                    lg.load(fifo)
        finally:
            writer.join()


def test_loading_streams_into_the_tensors(tmp_path):
    """Peak memory while loading stays within 1.2x of the tensors loaded."""
    n = 4 << 20
    path = tmp_path / 'big.lgt'
    lg.save({f'w{i}': lg.ones(n // 4) for i in range(4)}, path)
    tracemalloc.start()
    try:
        got = lg.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(t._data.nbytes for t in got.values()) == 4 * n
    assert peak <= 1.2 * 4 * n, peak / (4 * n)


def test_truncated_at_every_offset_and_damaged_bytes(tmp_path):
    path, data = _saved_model_file(tmp_path)
    cut = tmp_path / 'cut.lgt'
    for n in range(len(data)):
        cut.write_bytes(data[:n])
        with pytest.raises(CheckpointError):
            lg.load(cut)
    rng = random.Random(0)
    reference = _state_of(lg.load(path))
    for _ in range(300):
        damaged = bytearray(data)
        damaged[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        cut.write_bytes(bytes(damaged))
        try:
            got = lg.load(cut)
        except CheckpointError:
            continue
        assert _state_of(got) == reference  # (a change to JSON whitespace in the header, say)
    for n in (1, 8, 9, 100, 5000):
        cut.write_bytes(bytes(rng.randrange(256) for _ in range(n)))
        with pytest.raises(CheckpointError):
            lg.load(cut)


def _state_of(sd):
    return {k: (str(v.dtype), v.numpy().tobytes()) for k, v in sd.items()}


def test_mmap_maps_copy_on_write(tmp_path):
    path = tmp_path / 'm.lgt'
    lg.save({'w': lg.arange(6.0), 'i': lg.arange(3)}, path)
    before = path.read_bytes()
    got = lg.load(path, mmap=True)
    assert got['w'].tolist() == [0, 1, 2, 3, 4, 5] and got['i'].tolist() == [0, 1, 2]
    got['w'].add_(1)
    assert got['w'].tolist() == [1, 2, 3, 4, 5, 6] and path.read_bytes() == before


# ---- plain safetensors files ----------------------------------------------------------------------
def test_plain_safetensors_files_load_as_torch_loads_them(tmp_path):
    st = pytest.importorskip('safetensors.numpy')
    arrays = {'b': np.arange(6, dtype=np.float32).reshape(2, 3), 'a': np.array([1, -2]), 'c': np.zeros(0, np.float16)}
    path = tmp_path / 'w.safetensors'
    st.save_file(arrays, str(path))
    ours, theirs = lg.load(path), torch.load(path)
    assert sorted(ours) == sorted(theirs) == ['a', 'b', 'c']
    for k in arrays:
        assert str(ours[k].dtype)[9:] == str(theirs[k].dtype)[6:]
        np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy())
    other = tmp_path / 'w.bin'
    other.write_bytes(path.read_bytes())
    with pytest.raises(CheckpointError, match='not a leafgrad checkpoint'):
        lg.load(other)  # (only a .safetensors path says the file is meant as one)


def test_leafgrad_files_are_safetensors_files(tmp_path):
    st = pytest.importorskip('safetensors.numpy')
    path = tmp_path / 'ck.lgt'
    sd = _model().state_dict()
    lg.save(sd, path)
    arrays = st.load_file(str(path))
    assert sorted(a.tobytes() for a in arrays.values()) == sorted(v.numpy().tobytes() for v in sd.values())


# ---- writing files -------------------------------------------------------------------------------
def test_save_writes_through_a_symlink_as_torch(tmp_path):
    for lib in (lg, torch):
        where = tmp_path / lib.__name__
        where.mkdir()
        link = where / 'link.pt'
        link.symlink_to('real.pt')  # dangling: the first save creates the target
        for value in (1.0, 2.0):
            lib.save({'a': lib.full((2,), value)}, link)
            assert link.is_symlink() and (where / 'real.pt').is_file()
            assert lib.load(link)['a'].tolist() == [value, value]
        assert sorted(os.listdir(where)) == ['link.pt', 'real.pt']


@pytest.mark.parametrize('umask', [0o022, 0o077, 0o002])
def test_new_files_get_the_permissions_torch_gives_them(tmp_path, umask):
    old = os.umask(umask)
    try:
        lg.save({'a': lg.ones(1)}, tmp_path / 'lg.pt')
        torch.save({'a': torch.ones(1)}, tmp_path / 'torch.pt')
    finally:
        os.umask(old)
    modes = {name: stat.S_IMODE(os.stat(tmp_path / name).st_mode) for name in ('lg.pt', 'torch.pt')}
    assert modes['lg.pt'] == modes['torch.pt'] == 0o666 & ~umask


def test_an_existing_file_keeps_its_permissions(tmp_path):
    for lib, name in ((lg, 'lg.pt'), (torch, 'torch.pt')):
        lib.save(1, tmp_path / name)
        os.chmod(tmp_path / name, 0o640)
        lib.save(2, tmp_path / name)
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o640


def test_saving_into_a_missing_directory_reads_like_torch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for where in (tmp_path / 'nodir' / 'x.pt', str(tmp_path / 'no' / 'sub' / 'x.pt'), 'rel/x.pt'):
        lmsg, tmsg = raises_like(lambda: lg.save({'a': 1}, where), lambda: torch.save({'a': 1}, where))
        assert lmsg == tmsg
    assert os.listdir(tmp_path) == []
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        lg.save(1, tmp_path)


_KILLED_SAVE = '''
import os, sys, time
import leafgrad
from leafgrad.serialization import _files
if sys.argv[2] == 'named':  # a filesystem without O_TMPFILE
    _files._open_unnamed = lambda directory: None

def stall(fd):  # every byte written, not yet renamed: killed here
    print('written', flush=True)
    time.sleep(600)

os.fsync = stall
leafgrad.save({'w': leafgrad.zeros(1 << 20)}, sys.argv[1])
'''


@pytest.mark.parametrize('how', ['unnamed', 'named'])
def test_a_killed_save_leaves_no_temporary_file_behind(tmp_path, how):
    path = tmp_path / 'ck.lgt'
    lg.save({'w': lg.ones(2)}, path)
    p = subprocess.Popen([sys.executable, '-c', _KILLED_SAVE, str(path), how], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == 'written\n'
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
    left = sorted(os.listdir(tmp_path))
    if how == 'unnamed':
        assert left == ['ck.lgt']  # an unnamed file vanishes with its process
    else:
        assert len(left) == 2 and os.path.getsize(tmp_path / left[0]) > 4 << 20
    assert lg.load(path)['w'].tolist() == [1.0, 1.0]  # the previous checkpoint is whole
    lg.save({'w': lg.ones(3)}, path)
    assert os.listdir(tmp_path) == ['ck.lgt']


# ---- arguments -----------------------------------------------------------------------------------
class _NoSeek(io.RawIOBase):
    def readable(self):
        return True

    def readinto(self, b):
        return 0


def test_arguments_like_torch(tmp_path):
    path = tmp_path / 'a.pt'
    lmsg, tmsg = raises_like(lambda: lg.save(1, 5), lambda: torch.save(1, 5))
    assert lmsg == tmsg
    lg.save({'a': lg.ones(1)}, path)
    torch.save({'a': torch.ones(1)}, path.with_suffix('.torch'))
    lmsg, tmsg = raises_like(lambda: lg.load(path.with_suffix('.torch'), pickle_module=pickle),
                             lambda: torch.load(path.with_suffix('.torch'), pickle_module=pickle, weights_only=True))
    assert lmsg == tmsg
    with pytest.warns(UserWarning, match='pickle_load_args only works'):
        lg.load(path, encoding='latin1')
    with pytest.raises(TypeError, match="'foo' is an invalid keyword argument"):
        lg.load(path, weights_only=False, foo=1)
    lmsg, tmsg = raises_like(lambda: lg.load(_NoSeek()), lambda: torch.load(_NoSeek()))
    assert same_message(lmsg, tmsg)
    with pytest.raises(TypeError, match='pickle_module'):
        lg.save(1, path, pickle_module=json)
    lg.save(1, path, pickle_module=pickle, pickle_protocol=4, _use_new_zipfile_serialization=False)
    assert lg.load(path) == 1
