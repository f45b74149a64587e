"""leafgrad.load reading the files torch.save writes (zip archives and the legacy stream): values,
dtypes, views and shared storage, state dicts that load into leafgrad modules and optimizers,
map_location, and hostile files refused with nothing run."""
import io
import os
import pickle
import random
import struct
import tracemalloc
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
from leafgrad.serialization import CheckpointError, UnsafeCheckpointError  # noqa: E402
from oracle import raises_like, same_message  # noqa: E402

FORMATS = {'zip': {}, 'legacy': {'_use_new_zipfile_serialization': False}}


@pytest.fixture(params=sorted(FORMATS))
def fmt(request):
    return request.param


def _save(obj, path, fmt, **kw):
    torch.save(obj, path, **FORMATS[fmt], **kw)
    return path


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


def _same_tensor(lt, tt):
    assert isinstance(lt, lg.Tensor), type(lt)
    assert str(lt.dtype).split('.')[-1] == str(tt.dtype).split('.')[-1], (lt.dtype, tt.dtype)
    assert tuple(lt.shape) == tuple(tt.shape) and lt.stride() == tt.stride(), (lt.shape, lt.stride(), tt.stride())
    assert lt.requires_grad == tt.requires_grad
    assert isinstance(lt, lg.nn.Parameter) == isinstance(tt, torch.nn.Parameter)
    a, b = _np(lt), _np(tt)
    if a.dtype.kind == 'f':  # bit for bit: nan payloads, -0.0
        a, b = a.view(f'u{a.itemsize}'), b.view(f'u{b.itemsize}')
    np.testing.assert_array_equal(a, b)


def _same(lobj, tobj):
    """leafgrad's object is torch's, with leafgrad's types where torch's are."""
    if isinstance(tobj, torch.Tensor):
        return _same_tensor(lobj, tobj)
    if isinstance(tobj, (torch.dtype, torch.device)):
        assert str(lobj).split('.')[-1] == str(tobj).split('.')[-1], (lobj, tobj)
        return
    if isinstance(tobj, float) and tobj != tobj:
        assert lobj != lobj
        return
    assert type(lobj).__name__ == type(tobj).__name__, (type(lobj), type(tobj))
    if isinstance(tobj, dict):
        assert list(lobj) == list(tobj)
        for k in tobj:
            _same(lobj[k], tobj[k])
    elif isinstance(tobj, (list, tuple)):
        assert len(lobj) == len(tobj)
        for a, b in zip(lobj, tobj):
            _same(a, b)
    else:
        assert lobj == tobj, (lobj, tobj)


def _both(path, **kw):
    return lg.load(path, **kw), torch.load(path, **kw)


# ---- values, dtypes, layouts ---------------------------------------------------------------------
def _every_dtype():
    g = torch.Generator().manual_seed(0)
    out = {'bool': torch.rand(7, generator=g) > 0.5}
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        info = torch.iinfo(dt)
        out[str(dt)] = torch.cat([torch.tensor([info.min, info.max, 0], dtype=dt),
                                  torch.randint(info.min, info.max, (5,), dtype=dt, generator=g)])
    for dt in (torch.float16, torch.float32, torch.float64):
        special = torch.tensor([float('nan'), float('inf'), -float('inf'), -0.0, torch.finfo(dt).tiny], dtype=dt)
        out[str(dt)] = torch.cat([special, torch.randn(6, dtype=dt, generator=g)])
    return out


def test_every_dtype_bit_for_bit(tmp_path, fmt):
    obj = _every_dtype()
    ours, theirs = _both(_save(obj, tmp_path / 'd.pt', fmt))
    _same(ours, theirs)


def test_bfloat16_loads_or_is_refused_clearly(tmp_path, fmt):
    path = _save({'w': torch.tensor([1.5, -2.25, 3e38], dtype=torch.bfloat16)}, tmp_path / 'bf.pt', fmt)
    if getattr(lg, 'bfloat16', None) is not None:
        ours, theirs = _both(path)
        assert ours['w'].dtype is lg.bfloat16
        np.testing.assert_array_equal(ours['w'].float().numpy(), theirs['w'].float().numpy())
    else:
        with pytest.raises(CheckpointError, match='bfloat16'):
            lg.load(path)


@pytest.mark.parametrize('dtype', ['complex128', 'complex64'])
def test_complex_tensors_load(tmp_path, fmt, dtype):
    path = _save({'t': torch.tensor([1 + 2j, -0.5j], dtype=getattr(torch, dtype))}, tmp_path / 'c.pt', fmt)
    ours, theirs = _both(path)
    assert str(ours['t']).replace('leafgrad', 'torch') == str(theirs['t'])


@pytest.mark.parametrize('dtype', ['uint16', 'float8_e4m3fn'])
def test_dtypes_leafgrad_lacks_are_refused_by_name(tmp_path, fmt, dtype):
    t = torch.zeros(3, dtype=getattr(torch, dtype))
    path = _save({'t': t}, tmp_path / 'x.pt', fmt)
    with pytest.raises(CheckpointError, match=dtype):
        lg.load(path)


def test_views_strides_and_shared_storage(tmp_path, fmt):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    obj = {'base': base, 'rows': base[1:3], 'cols': base[:, ::2], 't': base.t(), 'elem': base[2, 3],
           'offset': base.view(-1)[5:17].view(3, 4), 'expanded': torch.tensor([1.0, 2.0]).expand(3, 2),
           'empty': torch.zeros(0, 3), 'scalar': torch.tensor(7, dtype=torch.int16), 'empty_view': base[4:]}
    ours, theirs = _both(_save(obj, tmp_path / 'v.pt', fmt))
    _same(ours, theirs)
    for lib, got in ((lg, ours), (torch, theirs)):
        with lib.no_grad():
            got['base'].mul_(-1)  # one storage: every view sees it
    _same(ours, theirs)
    assert ours['t'].is_contiguous() == theirs['t'].is_contiguous() is False


def test_parameters_and_requires_grad(tmp_path, fmt):
    w = torch.nn.Parameter(torch.randn(3, 2))
    frozen = torch.nn.Parameter(torch.randn(2), requires_grad=False)
    leaf = torch.randn(2, requires_grad=True)
    ours, theirs = _both(_save({'w': w, 'frozen': frozen, 'leaf': leaf, 'again': w}, tmp_path / 'p.pt', fmt))
    _same(ours, theirs)
    assert ours['w'] is ours['again'] and ours['w'].is_leaf


def test_tensor_and_parameter_attributes(tmp_path, fmt):
    t = torch.ones(2)
    t.note = 'kept'
    p = torch.nn.Parameter(torch.zeros(2))
    p.tag = 3
    ours, theirs = _both(_save({'t': t, 'p': p}, tmp_path / 'a.pt', fmt))
    _same(ours, theirs)
    assert ours['t'].note == theirs['t'].note == 'kept' and ours['p'].tag == theirs['p'].tag == 3


def test_nested_plain_containers(tmp_path, fmt):
    obj = OrderedDict(
        n=None, b=True, i=-(2 ** 70), f=1.5, nan=float('nan'), inf=-float('inf'), s='ünïcode', by=b'\x00\xffraw',
        ba=bytearray(b'xy'), c=1 + 2j, tup=(1, (2, [3, {'k': torch.ones(2)}])), lst=[[], {}, ()], st={1, 'a', (2, 3)},
        cnt=Counter('aab'), size=torch.Size([2, 3]), dev=torch.device('cpu'), dt=torch.float64,
        keys={1: 'a', (2, 3): 'b', 2.5: 'c'})
    ours, theirs = _both(_save(obj, tmp_path / 'c.pt', fmt))
    _same(ours, theirs)
    assert isinstance(ours['size'], lg.Size) and ours['size'] == (2, 3)


def test_pickle_protocols_two_to_five(tmp_path):
    obj = {'w': torch.arange(4.0), 'meta': ('x', b'y', {3, 4}), 'v': torch.arange(4.0)[1:]}
    for proto in (2, 3, 4, 5):
        path = tmp_path / f'p{proto}.pt'
        torch.save(obj, path, pickle_protocol=proto)
        _same(lg.load(path), torch.load(path, weights_only=False))  # (weights_only reads protocol 2 only)


def test_streams_and_buffers(tmp_path, fmt):
    buf = io.BytesIO()
    torch.save({'a': torch.arange(3)}, buf, **FORMATS[fmt])
    buf.seek(0)
    assert lg.load(buf)['a'].tolist() == [0, 1, 2]
    with open(_save({'a': torch.arange(3)}, tmp_path / 'f.pt', fmt), 'rb') as fh:
        assert lg.load(fh)['a'].tolist() == [0, 1, 2]


# ---- state dicts into leafgrad modules and optimizers --------------------------------------------
def _nets(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                             lib.nn.Flatten(), lib.nn.Linear(4 * 5 * 5, 3), lib.nn.LayerNorm(3))


def test_module_state_dict_loads_and_predicts_the_same(tmp_path, fmt):
    tnet = _nets(torch)
    x = torch.randn(6, 2, 5, 5)
    tnet.train()
    tnet(x)  # BatchNorm's running statistics and num_batches_tracked move
    tnet.eval()
    path = _save(tnet.state_dict(), tmp_path / 'model.pt', fmt)
    sd = lg.load(path)
    assert isinstance(sd, OrderedDict) and list(sd) == list(tnet.state_dict())
    assert hasattr(sd, '_metadata')
    lnet = _nets(lg)
    lnet.load_state_dict(sd)
    lnet.eval()
    np.testing.assert_allclose(lnet(lg.tensor(x.numpy())).detach().numpy(), tnet(x).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize('opt', ['Adam', 'SGD', 'AdamW', 'RMSprop'])
def test_optimizer_state_dict_resumes_as_torch(tmp_path, fmt, opt):
    kw = {'SGD': {'lr': 0.1, 'momentum': 0.9, 'nesterov': True}, 'Adam': {'lr': 0.01, 'amsgrad': True},
          'AdamW': {'lr': 0.01}, 'RMSprop': {'lr': 0.01, 'momentum': 0.5, 'centered': True}}[opt]
    torch.manual_seed(0)
    tmodel = torch.nn.Linear(4, 2)
    topt = getattr(torch.optim, opt)(tmodel.parameters(), **kw)
    x, y = torch.randn(8, 4), torch.randn(8, 2)

    def step(model, optimizer, lib, xx, yy):
        optimizer.zero_grad()
        ((model(xx) - yy) ** 2).mean().backward()
        optimizer.step()

    for _ in range(3):
        step(tmodel, topt, torch, x, y)
    path = _save({'model': tmodel.state_dict(), 'opt': topt.state_dict()}, tmp_path / 'ck.pt', fmt)
    ck = lg.load(path)
    lmodel = lg.nn.Linear(4, 2)
    lmodel.load_state_dict(ck['model'])
    lopt = getattr(lg.optim, opt)(lmodel.parameters(), **kw)
    lopt.load_state_dict(ck['opt'])
    for _ in range(3):
        step(tmodel, topt, torch, x, y)
        step(lmodel, lopt, lg, lg.tensor(x.numpy()), lg.tensor(y.numpy()))
    for (name, lp), tp in zip(lmodel.named_parameters(), tmodel.parameters()):
        np.testing.assert_allclose(lp.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


# ---- map_location --------------------------------------------------------------------------------
def _retagged(path, fmt, tag):
    """The torch file at ``path`` with its storages' location 'cpu' renamed ``tag`` (as saved on a GPU)."""
    old = b'X\x03\x00\x00\x00cpu'
    new = b'X' + struct.pack('<I', len(tag)) + tag.encode()
    out = path.with_name(f'{path.stem}_{tag.replace(":", "")}.pt')
    if fmt == 'legacy':
        out.write_bytes(path.read_bytes().replace(old, new))
        return out
    with zipfile.ZipFile(path) as z, zipfile.ZipFile(out, 'w', zipfile.ZIP_STORED) as w:
        for info in z.infolist():
            data = z.read(info)
            w.writestr(info.filename, data.replace(old, new) if info.filename.endswith('data.pkl') else data)
    return out


def _shared_pair():
    base = torch.arange(6.0)
    return {'a': base, 'b': base[2:]}


def test_map_location_forms(tmp_path, fmt):
    path = _retagged(_save(_shared_pair(), tmp_path / 'm.pt', fmt), fmt, 'cuda:0')
    for where in ('cpu', {'cuda:0': 'cpu'}):
        lwhere = where if isinstance(where, dict) else lg.device(where)
        _same(lg.load(path, map_location=lwhere), torch.load(path, map_location=where))
        _same(lg.load(path, map_location=where), torch.load(path, map_location=where))
    seen = {lg: [], torch: []}
    for lib in (lg, torch):
        got = lib.load(path, map_location=lambda storage, loc, lib=lib: seen[lib].append(loc) or storage.clone())
        with lib.no_grad():
            got['a'].add_(10)  # the clone is one storage for both tensors
        assert got['b'].tolist() == [12.0, 13.0, 14.0, 15.0]
    assert seen[lg] == seen[torch] == ['cuda:0']


@pytest.mark.skipif(lg.cuda.is_available(), reason='checks the CPU-only message')
@pytest.mark.parametrize('where', [None, 'cuda', 'cuda:1', {'cuda:0': 'cuda:1'}, 'xpu', 'nowhere'])
def test_map_location_errors_like_torch(tmp_path, fmt, where):
    path = _retagged(_save(_shared_pair(), tmp_path / 'm.pt', fmt), fmt, 'cuda:0')
    lmsg, tmsg = raises_like(lambda: lg.load(path, map_location=where), lambda: torch.load(path, map_location=where))
    assert same_message(lmsg.replace('leafgrad.storage', 'torch.storage'), tmsg), (lmsg, tmsg)


def test_map_location_that_is_not_a_location(tmp_path):
    path = _save(_shared_pair(), tmp_path / 'm.pt', 'zip')
    lmsg, tmsg = raises_like(lambda: lg.load(path, map_location=5), lambda: torch.load(path, map_location=5))
    assert lmsg == tmsg


def test_big_endian_archive(tmp_path):
    """A zip whose byteorder record says 'big' (written on a big-endian machine) reads as torch reads it."""
    path = _save({'f': torch.tensor([1.5, -2.0]), 'i': torch.tensor([1, 256], dtype=torch.int16), 'b': torch.tensor(
        [3], dtype=torch.uint8)}, tmp_path / 'le.pt', 'zip')
    sizes = {'0': 4, '1': 2, '2': 1}
    out = tmp_path / 'be.pt'
    with zipfile.ZipFile(path) as z, zipfile.ZipFile(out, 'w', zipfile.ZIP_STORED) as w:
        for info in z.infolist():
            data = z.read(info)
            key = info.filename.rsplit('/', 1)[-1]
            if info.filename.endswith('byteorder'):
                data = b'big'
            elif '/data/' in info.filename:
                data = np.frombuffer(data, f'u{sizes[key]}').byteswap().tobytes()
            w.writestr(info.filename, data)
    ours, theirs = _both(out)
    _same(ours, theirs)
    assert ours['f'].tolist() == [1.5, -2.0]


def test_mmap(tmp_path):
    w = torch.arange(8.0)
    path = _save({'w': w, 'v': w[::2]}, tmp_path / 'mm.pt', 'zip')
    before = path.read_bytes()
    got = lg.load(path, mmap=True)
    _same(got, torch.load(path, mmap=True))
    got['w'].add_(1)  # copy-on-write: the tensors change, the file does not
    assert got['v'].tolist() == [1.0, 3.0, 5.0, 7.0] and path.read_bytes() == before
    legacy = _save({'w': torch.ones(2)}, tmp_path / 'old.pt', 'legacy')
    lmsg, tmsg = raises_like(lambda: lg.load(legacy, mmap=True), lambda: torch.load(legacy, mmap=True))
    assert same_message(lmsg, tmsg)
    with open(path, 'rb') as fh, open(path, 'rb') as fh2:
        lmsg, tmsg = raises_like(lambda: lg.load(fh, mmap=True), lambda: torch.load(fh2, mmap=True))
    assert lmsg == tmsg


# ---- memory --------------------------------------------------------------------------------------
def test_loading_streams_into_the_tensors(tmp_path, fmt):
    """Peak memory while loading stays within 1.2x of the tensors loaded (each storage is read
    straight into the array the tensors keep)."""
    n = 4 << 20
    path = _save({f'w{i}': torch.ones(n // 4) for i in range(4)}, tmp_path / 'big.pt', fmt)
    tracemalloc.start()
    try:
        got = lg.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(t._data.nbytes for t in got.values()) == 4 * n
    assert peak <= 1.2 * 4 * n, peak / (4 * n)


# ---- hostile files -------------------------------------------------------------------------------
class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f'touch {self.marker}',))


def test_malicious_pickle_is_refused_with_nothing_run(tmp_path, fmt):
    marker = tmp_path / 'ran'
    path = _save({'w': torch.ones(2), 'evil': _Evil(marker)}, tmp_path / 'evil.pt', fmt)
    for weights_only in (None, True, False):
        with pytest.raises(UnsafeCheckpointError) as info:
            lg.load(path, weights_only=weights_only)
        # torch's type: a pickle.UnpicklingError, not a RuntimeError (so not a CheckpointError)
        assert isinstance(info.value, pickle.UnpicklingError) and not isinstance(info.value, RuntimeError)
        assert 'Trying to load unsupported GLOBAL posix.system whose module posix is blocked.' in str(info.value)
    lmsg, tmsg = raises_like(lambda: lg.load(path), lambda: torch.load(path))
    assert 'posix.system' in lmsg and 'posix.system' in tmsg
    assert not marker.exists()


class _Thing:
    pass


def _pickle_in_archive(tmp_path, payload):
    """A zip with torch's layout whose data.pkl is ``payload``."""
    path = tmp_path / 'forged.pt'
    template = _save({'w': torch.ones(2)}, tmp_path / 'template.pt', 'zip')
    with zipfile.ZipFile(template) as z, zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as w:
        for info in z.infolist():
            w.writestr(info.filename, payload if info.filename.endswith('data.pkl') else z.read(info))
    return path


def _s(text):
    """A pickled str (BINUNICODE)."""
    return b'X' + struct.pack('<I', len(text)) + text.encode()


@pytest.mark.parametrize('payload, named, torch_refuses', [
    (b'cbuiltins\neval\n(' + _s('print(1)') + b'tR.', 'GLOBAL eval was not an allowed global', True),
    (b'csubprocess\nPopen\n(' + _s('true') + b'tR.', 'GLOBAL subprocess.Popen was not an allowed global', True),
    (b'\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x04true\x85R.', 'GLOBAL os.system whose module os is blocked', True),
    (pickle.dumps(_Thing(), protocol=2), f'GLOBAL {__name__}._Thing was not an allowed global', True),
    (b'ccollections\nOrderedDict\n)R}(' + _s('k') + _s('v') + b'ub.', None, False),  # attributes: allowed
    (b'c__builtin__\ngetattr\n(ccollections\nOrderedDict\n' + _s('__init__') + b'tR.', 'GLOBAL getattr was not', True),
    (b'}(' + _s('k') + b']Qu.', 'persistent_load', True),
    (b'ccollections\nOrderedDict\n)R(' + _s('x') + b'I1\nd.', 'Unsupported operand', True),
    (b'}}b.', 'Can only build Tensor, Parameter, OrderedDict or types allowlisted', True),
    (b'}' + _s('x') + b'a.', 'Can only append to lists', True),
    (b'ctorch\nTensor\n)\x81.', 'creates a new object of torch.Tensor', False),
    (b'ccollections\nCounter\n)R)R.', 'Trying to call reduce for unrecognized function', True),
])
def test_forged_pickles(tmp_path, payload, named, torch_refuses):
    path = _pickle_in_archive(tmp_path, payload)
    if named is None:
        got = lg.load(path)
        assert isinstance(got, OrderedDict) and got.k == 'v'
        return
    with pytest.raises((CheckpointError, UnsafeCheckpointError)) as info:
        lg.load(path)
    assert named in str(info.value), str(info.value)
    if torch_refuses:
        with pytest.raises(pickle.UnpicklingError):
            torch.load(path)


@pytest.mark.parametrize('payload', [
    b'cbuiltins\nbytearray\n(J\x00\x00\x00\x7ftR.',          # bytearray(2**31): no allocation from a number
    b'ccollections\nOrderedDict\n(J\x05\x00\x00\x00tR.',     # OrderedDict(5)
    b'ctorch._utils\n_rebuild_tensor_v2\n(NK\x00)))\x89NtR.',  # no storage
    b'ctorch\nSize\n(](' + _s('x') + b'etR.',                  # torch.Size(['x'])
    b'ctorch\ndevice\n(' + _s('mps') + b'tR.',                # a device leafgrad does not have
    b'(' * 50000 + b'.',                                     # marks without end
    b'\x80\x02' + b')' + b'\x85' * 5000 + b'.',              # tuples 5000 deep
    b'}(]' + _s('v') + b'u.',                                  # an unhashable key
    b'h\x07.',                                                # an empty memo
])
def test_forged_arguments_are_checkpoint_errors(tmp_path, payload):
    with pytest.raises(CheckpointError):
        lg.load(_pickle_in_archive(tmp_path, payload))


# damage gives one of the documented errors: CheckpointError, or (a byte that became an opcode
# reaching for code, as torch.load says too) UnsafeCheckpointError
_BAD_FILE = (CheckpointError, UnsafeCheckpointError)


def _small_files(tmp_path):
    obj = {'w': torch.arange(6.0).reshape(2, 3), 'v': torch.arange(6.0)[1:4], 'step': 3, 'name': 'x'}
    return {fmt: _save(obj, tmp_path / f'small_{fmt}.pt', fmt).read_bytes() for fmt in FORMATS}


def test_truncated_at_every_offset(tmp_path, fmt):
    data = _small_files(tmp_path)[fmt]
    path = tmp_path / 'cut.pt'
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        with pytest.raises(_BAD_FILE):
            lg.load(path)


def test_corrupted_bytes(tmp_path, fmt):
    """Any one byte changed: one of the documented errors, or (where the format has no checksum over
    that byte) an object like the original one."""
    data = _small_files(tmp_path)[fmt]
    rng = random.Random(1)
    path = tmp_path / 'flip.pt'
    for _ in range(400):
        damaged = bytearray(data)
        damaged[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(damaged))
        try:
            lg.load(path)
        except _BAD_FILE:
            pass


def test_random_bytes_behind_each_magic(tmp_path):
    rng = random.Random(2)
    legacy = _small_files(tmp_path)['legacy']
    path = tmp_path / 'noise.pt'
    for prefix in (b'', b'PK\x03\x04', legacy[:14], legacy[:40]):
        for n in (0, 1, 7, 100, 3000):
            path.write_bytes(prefix + bytes(rng.randrange(256) for _ in range(n)))
            with pytest.raises(_BAD_FILE):
                lg.load(path)


def test_torchscript_and_legacy_tar_are_refused(tmp_path):
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    torch.jit.save(scripted, tmp_path / 'script.pt')
    with pytest.raises(CheckpointError, match='TorchScript'):
        lg.load(tmp_path / 'script.pt')
    import tarfile
    with tarfile.open(tmp_path / 'old.tar', 'w', format=tarfile.PAX_FORMAT) as tar:
        tar.add(tmp_path / 'script.pt', arcname='storages')
    with pytest.raises(CheckpointError, match='tar'):
        lg.load(tmp_path / 'old.tar')
