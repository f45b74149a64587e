"""Checkpoints of whole objects, the allowlist and files PyTorch reads, against torch.

- ``torch.serialization``'s allowlist (add_safe_globals, get_safe_globals, clear_safe_globals,
  safe_globals, get_unsafe_globals_in_checkpoint) behaves as PyTorch's;
- what torch.save pickles by class (modules, NumPy arrays and scalars, argparse.Namespace, classes
  and functions by reference) is saved, refused on load in PyTorch's words naming the global as
  PyTorch names it, and rebuilt once allowlisted - in leafgrad's format and in PyTorch's;
- files leafgrad.save writes for .pt/.pth names are read by PyTorch's own torch.load;
- save refuses what pickle refuses, with pickle's errors; forged object records are refused.
"""
import argparse
import collections
import io
import json
import os
import pickle
import re
import threading
import types
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
import leafgrad.optim.lr_scheduler  # noqa: E402,F401
from leafgrad.serialization import CheckpointError  # noqa: E402
from fresh import run_python  # noqa: E402
from test_serialization import _forge  # noqa: E402

PROGRAMS = os.path.join(os.path.dirname(__file__), 'programs')


@pytest.fixture(autouse=True)
def _empty_allowlists():
    clear = getattr(lg.serialization, 'clear_safe_globals', lambda: None)
    clear()
    torch_before = torch.serialization.get_safe_globals()
    yield
    clear()
    torch.serialization.clear_safe_globals()
    torch.serialization.add_safe_globals(torch_before)


def _detail(error):
    """The part of a weights-only refusal that names the problem (the headers differ on purpose:
    leafgrad's says that weights_only=False does not help)."""
    text = str(error)
    text = text.split('WeightsUnpickler error: ', 1)[1] if 'WeightsUnpickler error: ' in text else text.split('\n\n')[1]
    return text.split('\n\nCheck the documentation')[0].strip().replace('leafgrad', 'torch')


def _refusals(load_lg, load_torch):
    """Both raise pickle.UnpicklingError itself; the two details."""
    with pytest.raises(pickle.UnpicklingError) as t_info:
        load_torch()
    with pytest.raises(pickle.UnpicklingError) as l_info:
        load_lg()
    assert type(l_info.value) is type(t_info.value) is pickle.UnpicklingError
    assert str(l_info.value).replace('leafgrad', 'torch').endswith(str(t_info.value).rsplit('\n\n', 1)[1])
    return _detail(l_info.value), _detail(t_info.value)


# ---- a PyTorch program that saves whole objects, run on both -------------------------------------
def test_whole_objects_program_prints_what_pytorch_prints(tmp_path):
    script = os.path.join(PROGRAMS, 'whole_objects.py')
    (tmp_path / 'torch').mkdir()
    (tmp_path / 'leafgrad').mkdir()
    ran = run_python(script, '.pt', '.lgt', '.pth', cwd=tmp_path / 'torch')
    assert ran.returncode == 0, ran.stderr
    ours = run_python('-m', 'leafgrad', script, '.pt', '.lgt', '.pth', cwd=tmp_path / 'leafgrad')
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.replace('leafgrad', 'torch').splitlines() == ran.stdout.splitlines()
    assert ran.stdout.count('refused:') == 3 * 17
    # .pt and .pth: PyTorch's zip archive; anything else: leafgrad's own format
    assert (tmp_path / 'leafgrad' / 'net.pt').read_bytes()[:4] == b'PK\x03\x04'
    assert (tmp_path / 'leafgrad' / 'data.pth').read_bytes()[:4] == b'PK\x03\x04'
    assert b'leafgrad-checkpoint/2' in (tmp_path / 'leafgrad' / 'net.lgt').read_bytes()[:4096]


# ---- the allowlist API ---------------------------------------------------------------------------
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Point and (self.x, self.y) == (other.x, other.y)

    __hash__ = None


class Slotted:
    __slots__ = ('a', 'b')


class WithState:
    def __init__(self):
        self.calls = []

    def __getstate__(self):
        return {'saved': [1, 2]}

    def __setstate__(self, state):
        self.calls = ['setstate', state]


def helper(value):
    return value


def test_allowlist_calls_behave_as_torch():
    for ser in (lg.serialization, torch.serialization):
        ser.clear_safe_globals()
    ours, theirs = lg.serialization, torch.serialization
    for op in (lambda s: s.add_safe_globals([Point, helper]), lambda s: s.add_safe_globals([(Slotted, 'x.Slotted')]),
               lambda s: s.add_safe_globals([Point])):
        op(ours)
        op(theirs)
        assert set(ours.get_safe_globals()) == set(theirs.get_safe_globals())
    with ours.safe_globals([WithState, Point]), theirs.safe_globals([WithState, Point]):
        assert set(ours.get_safe_globals()) == set(theirs.get_safe_globals())
    # leaving the block removes its globals, also those allowlisted before it (as PyTorch does)
    assert set(ours.get_safe_globals()) == set(theirs.get_safe_globals()) == {helper, (Slotted, 'x.Slotted')}
    ours.clear_safe_globals()
    theirs.clear_safe_globals()
    assert ours.get_safe_globals() == theirs.get_safe_globals() == []
    assert ours.DEFAULT_PROTOCOL == theirs.DEFAULT_PROTOCOL == 2


@pytest.mark.parametrize('entry', [(Point, 'a', 'b'), (Point, 5)])
def test_malformed_allowlist_entries_fail_at_load_as_in_torch(tmp_path, entry):
    lg.save({'p': Point(1, 2)}, tmp_path / 'p.lgt')
    torch.save({'p': Point(1, 2)}, tmp_path / 'p.pt')
    lg.serialization.add_safe_globals([entry])
    torch.serialization.add_safe_globals([entry])
    with pytest.raises((ValueError, TypeError)) as t_info:
        torch.load(tmp_path / 'p.pt')
    for path in (tmp_path / 'p.lgt', tmp_path / 'p.pt'):
        with pytest.raises(type(t_info.value)) as l_info:
            lg.load(path)
        assert str(l_info.value) == str(t_info.value)
    lg.load(_save_plain(tmp_path))  # (a file naming no global never reads the allowlist, as in torch)


def _save_plain(tmp_path):
    lg.save({'w': lg.ones(2)}, tmp_path / 'plain.lgt')
    return tmp_path / 'plain.lgt'


@pytest.mark.parametrize('suffix', ['.lgt', '.pt'])
def test_user_classes_as_torch_rebuilds_them(tmp_path, suffix):
    """NEWOBJ + BUILD by __dict__, by __setstate__ and by slots; REDUCE of an allowlisted function."""
    s = Slotted()
    s.a, s.b = 1, [2]
    obj = {'point': Point(1, (2, 3)), 'slotted': s, 'state': WithState(), 'fn': helper, 'cls': Point}
    lg.save(obj, tmp_path / f'o{suffix}')
    torch.save(obj, tmp_path / 'o.torch')
    names = {f'{__name__}.{n}' for n in ('Point', 'Slotted', 'WithState', 'helper')}
    assert set(lg.serialization.get_unsafe_globals_in_checkpoint(tmp_path / f'o{suffix}')) == names
    assert set(torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'o.torch')) == names
    assert set(lg.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'o.torch')) == names
    for allowed in ([], [Point], [Point, Slotted], [Point, Slotted, WithState]):
        with lg.serialization.safe_globals(allowed), torch.serialization.safe_globals(allowed):
            lmsg, tmsg = _refusals(lambda: lg.load(tmp_path / f'o{suffix}'), lambda: torch.load(tmp_path / 'o.torch'))
            assert lmsg == tmsg
            assert _detail_of(lambda: lg.load(tmp_path / 'o.torch')) == tmsg
    allowed = [Point, Slotted, WithState, helper]
    with lg.serialization.safe_globals(allowed), torch.serialization.safe_globals(allowed):
        assert set(lg.serialization.get_unsafe_globals_in_checkpoint(tmp_path / f'o{suffix}')) == set()
        for got in (lg.load(tmp_path / f'o{suffix}'), lg.load(tmp_path / 'o.torch'), torch.load(tmp_path / 'o.torch')):
            assert got['point'] == Point(1, (2, 3)) and got['fn'] is helper and got['cls'] is Point
            assert (got['slotted'].a, got['slotted'].b) == (1, [2])
            assert got['state'].calls == ['setstate', {'saved': [1, 2]}]


def _detail_of(load):
    with pytest.raises(pickle.UnpicklingError) as info:
        load()
    return _detail(info.value)


# ---- NumPy ---------------------------------------------------------------------------------------
_ARRAY_STEPS = [[], [np._core.multiarray._reconstruct], [np._core.multiarray._reconstruct, np.ndarray],
                [np._core.multiarray._reconstruct, np.ndarray, np.dtype]]


@pytest.mark.parametrize('value', [np.arange(6.0).reshape(2, 3), np.arange(12, dtype=np.int16).reshape(3, 4).T,
                                   np.array([True, False]), np.zeros((0, 3), np.float32), np.float64(2.5),
                                   np.int32(-7), np.array(['ab', 'c'])], ids=lambda v: f'{type(v).__name__}-{v.dtype}')
def test_numpy_values_are_refused_then_rebuilt_as_torch(tmp_path, value):
    """time_sequence_prediction saves a NumPy array and loads it: PyTorch 2.13 refuses it, naming
    numpy._core.multiarray._reconstruct; allowlisting what each refusal names admits it."""
    lg.save(value, tmp_path / 'a.lgt')
    lg.save(value, tmp_path / 'a.pt')
    torch.save(value, tmp_path / 'a.torch')
    dtype_class = type(value.dtype)
    steps = _ARRAY_STEPS if isinstance(value, np.ndarray) else \
        [[], [np._core.multiarray.scalar], [np._core.multiarray.scalar, np.dtype]]
    if value.nbytes == 0:  # pickle protocol 2 writes no bytes as a call of builtins.bytes
        steps = steps + [steps[-1] + [dtype_class]]
    for allowed in steps:
        with lg.serialization.safe_globals(allowed), torch.serialization.safe_globals(allowed):
            expected = _detail_of(lambda: torch.load(tmp_path / 'a.torch'))
            for path in ('a.lgt', 'a.pt', 'a.torch'):
                assert _detail_of(lambda: lg.load(tmp_path / path)) == expected, path
    allowed = steps[-1] + [dtype_class, bytes]
    with lg.serialization.safe_globals(allowed), torch.serialization.safe_globals(allowed):
        for got in (lg.load(tmp_path / 'a.lgt'), lg.load(tmp_path / 'a.pt'), lg.load(tmp_path / 'a.torch'),
                    torch.load(tmp_path / 'a.pt')):
            assert type(got) is type(value) and got.dtype == value.dtype and got.shape == value.shape
            np.testing.assert_array_equal(got, value)
    with pytest.raises(pickle.UnpicklingError, match='with `weights_only=False` neither'):
        lg.load(tmp_path / 'a.lgt', weights_only=False)


# ---- modules saved whole -------------------------------------------------------------------------
class TiedNet(lg.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = lg.nn.Embedding(6, 4)
        self.out = lg.nn.Linear(4, 6)
        self.out.weight = self.emb.weight
        self.register_buffer('steps', lg.tensor(3))

    def forward(self, x):
        return self.out(self.emb(x))


@pytest.mark.parametrize('suffix', ['.lgt', '.pt'])
def test_a_module_saved_whole_comes_back_whole(tmp_path, suffix):
    lg.manual_seed(0)
    net = TiedNet()
    net.eval()
    net.emb.weight.grad = lg.ones(6, 4)
    lg.save(net, tmp_path / f'net{suffix}')
    with pytest.raises(pickle.UnpicklingError, match=f'GLOBAL {__name__}.TiedNet was not an allowed'):
        lg.load(tmp_path / f'net{suffix}')
    with lg.serialization.safe_globals([TiedNet, lg.nn.Embedding, lg.nn.Linear]):
        back = lg.load(tmp_path / f'net{suffix}')
    x = lg.tensor([[1, 2], [3, 5]])
    assert lg.equal(back(x), net(x)) and not back.training
    assert back.out.weight is back.emb.weight and type(back.out.weight) is lg.nn.Parameter
    assert back.emb.weight.grad is None  # (as torch.save: gradients are not saved)
    assert back.steps.item() == 3 and list(back.state_dict()) == list(net.state_dict())
    loss = back(x).sum()
    loss.backward()
    assert back.emb.weight.grad is not None


# ---- files PyTorch reads -------------------------------------------------------------------------
def _torch_of(value):
    return torch.from_numpy(np.array(value._data))


@pytest.mark.parametrize('legacy', [False, True])
def test_torch_load_reads_what_leafgrad_saves(tmp_path, legacy):
    base = lg.arange(24.0).reshape(4, 6)
    obj = {'f32': lg.randn(3, 2), 'f64': lg.randn(2, dtype=lg.float64), 'f16': lg.tensor([1.5], dtype=lg.float16),
           'i64': lg.arange(5), 'i32': lg.tensor([1, -2], dtype=lg.int32), 'i16': lg.tensor([3], dtype=lg.int16),
           'i8': lg.tensor([-4], dtype=lg.int8), 'u8': lg.tensor([250], dtype=lg.uint8), 'b': lg.tensor([True, False]),
           'scalar': lg.tensor(2.5), 'empty': lg.zeros(0, 3), 'base': base, 'row': base[1], 'col': base[:, 2],
           't': base.t(), 'grid': base[::2, 1::3], 'wide': lg.ones(3, 1).expand(3, 4),
           'p': lg.nn.Parameter(lg.ones(2)), 'frozen': lg.nn.Parameter(lg.ones(2), requires_grad=False),
           'rg': lg.ones(2, requires_grad=True), 'size': lg.Size([2, 3]), 'dev': lg.device('cpu'), 'dt': lg.float16,
           'nested': [1, 2.5, 'x', None, (True, {'k': (lg.tensor([7]),)}), {3, 4}, b'\x00\x01', complex(1, 2)],
           'od': collections.OrderedDict(z=1, a=2), 'cnt': collections.Counter('aab')}
    lg.save(obj, tmp_path / 'x.pt', _use_new_zipfile_serialization=not legacy)
    assert (tmp_path / 'x.pt').read_bytes()[:4] == (b'\x80\x02\x8a\x0a' if legacy else b'PK\x03\x04')
    back = torch.load(tmp_path / 'x.pt', weights_only=True)
    assert list(back) == list(obj)
    for key, value in obj.items():
        if isinstance(value, lg.Tensor):
            got = back[key]
            assert str(got.dtype) == str(value.dtype).replace('leafgrad', 'torch'), key
            assert tuple(got.shape) == tuple(value.shape) and got.requires_grad == value.requires_grad, key
            assert isinstance(got, torch.nn.Parameter) == isinstance(value, lg.nn.Parameter), key
            np.testing.assert_array_equal(got.detach().numpy(), value.detach().numpy())
    # views share their storage again, with their strides and offsets (PyTorch saves whole storages)
    assert back['t'].stride() == (1, 6) and back['col'].storage_offset() == 2 and back['grid'].stride() == (12, 3)
    assert back['wide'].stride() == (1, 0)
    back['base'][1, 2] = 100.0
    assert back['row'][2].item() == back['col'][1].item() == back['t'][2, 1].item() == 100.0
    assert back['size'] == torch.Size([2, 3]) and back['dev'] == torch.device('cpu') and back['dt'] is torch.float16
    assert back['nested'][:4] == [1, 2.5, 'x', None] and back['nested'][4][1]['k'][0].tolist() == [7]
    assert back['nested'][5:] == [{3, 4}, b'\x00\x01', complex(1, 2)]
    assert back['od'] == obj['od'] and type(back['od']) is collections.OrderedDict and back['cnt'] == obj['cnt']
    mine = lg.load(tmp_path / 'x.pt')  # and leafgrad reads it back as it was
    assert mine['t'].stride() == (1, 6) and mine['size'] == lg.Size([2, 3]) and type(mine['p']) is lg.nn.Parameter
    mine['base'][0, 0] = 5.0
    assert mine['t'][0, 0].item() == 5.0


def test_torch_resumes_training_from_a_leafgrad_checkpoint(tmp_path):
    """A model and an Adam optimizer trained in leafgrad, saved to model.pt, resumed in PyTorch:
    the same predictions, the same next step."""
    lg.manual_seed(1)
    model = lg.nn.Sequential(lg.nn.Linear(4, 8), lg.nn.Tanh(), lg.nn.Linear(8, 2))
    opt = lg.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
    x, y = lg.randn(16, 4), lg.randn(16, 2)
    for _ in range(3):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
    lg.save({'model': model.state_dict(), 'optimizer': opt.state_dict(), 'epoch': 3}, tmp_path / 'model.pt')
    ckpt = torch.load(tmp_path / 'model.pt')
    twin = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    twin.load_state_dict(ckpt['model'])
    twin_opt = torch.optim.Adam(twin.parameters(), lr=0.01, amsgrad=True)
    twin_opt.load_state_dict(ckpt['optimizer'])
    tx, ty = _torch_of(x), _torch_of(y)
    np.testing.assert_allclose(twin(tx).detach().numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-7)
    for o, m, inp, tgt in ((opt, model, x, y), (twin_opt, twin, tx, ty)):
        o.zero_grad()
        ((m(inp) - tgt) ** 2).mean().backward()
        o.step()
    for mine, theirs in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(theirs.detach().numpy(), mine.detach().numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize('protocol', [2, 3, 4, 5])
def test_pickle_protocols(tmp_path, protocol):
    obj = {'w': lg.arange(4.0), 'n': [1, (2, 'x')], 'p': Point(1, 2)}
    lg.save(obj, tmp_path / 'p.pt', pickle_protocol=protocol)
    back = torch.load(tmp_path / 'p.pt', weights_only=False)  # (weights_only reads protocol 2 only)
    assert back['w'].tolist() == [0, 1, 2, 3] and back['n'] == [1, (2, 'x')] and back['p'] == Point(1, 2)
    with lg.serialization.safe_globals([Point]):
        mine = lg.load(tmp_path / 'p.pt')
    assert mine['w'].tolist() == [0, 1, 2, 3] and mine['p'] == Point(1, 2)


def test_numpy_and_namespace_saved_by_leafgrad_load_in_torch(tmp_path):
    obj = {'data': np.sin(np.arange(6.0)), 'args': argparse.Namespace(lr=0.5, name='run'), 'step': np.int64(3)}
    lg.save(obj, tmp_path / 'n.pt')
    allowed = [np._core.multiarray._reconstruct, np._core.multiarray.scalar, np.ndarray, np.dtype,
               type(np.dtype('float64')), type(np.dtype('int64')), argparse.Namespace]
    with torch.serialization.safe_globals(allowed):
        back = torch.load(tmp_path / 'n.pt')
    np.testing.assert_array_equal(back['data'], obj['data'])
    assert back['args'] == obj['args'] and back['step'] == 3 and type(back['step']) is np.int64


def test_which_format_is_written(tmp_path):
    t = {'w': lg.ones(2)}
    for name in ('a.pt', 'a.pth', 'a.PT', 'a.pth.tar', 'a.ckpt'):
        lg.save(t, tmp_path / name)
        assert (tmp_path / name).read_bytes()[:4] == b'PK\x03\x04', name
        assert torch.load(tmp_path / name)['w'].tolist() == [1.0, 1.0]
    for name in ('a.lgt', 'a.safetensors', 'a', 'a.pt.bak'):
        lg.save(t, tmp_path / name)
        assert b'leafgrad-checkpoint/2' in (tmp_path / name).read_bytes()[:300], name
    with open(tmp_path / 'f.pt', 'wb') as f:  # a file object: by its name
        lg.save(t, f)
    assert (tmp_path / 'f.pt').read_bytes()[:4] == b'PK\x03\x04'
    buffer = io.BytesIO()
    lg.save(t, buffer)
    assert b'leafgrad-checkpoint/2' in buffer.getvalue()[:300]
    lg.save(t, tmp_path / 'b.lgt', format='torch')
    lg.save(t, tmp_path / 'b.pt', format='leafgrad')
    assert (tmp_path / 'b.lgt').read_bytes()[:4] == b'PK\x03\x04'
    assert (tmp_path / 'b.pt').read_bytes()[:4] != b'PK\x03\x04'
    for name in ('a.pt', 'a.lgt', 'b.lgt', 'b.pt', 'f.pt'):
        assert lg.load(tmp_path / name)['w'].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="format must be 'torch' or 'leafgrad'"):
        lg.save(t, tmp_path / 'c.pt', format='pickle')
    assert not (tmp_path / 'c.pt').exists()
    with zipfile.ZipFile(tmp_path / 'a.pt') as z:
        info = {i.filename: i for i in z.infolist()}
        assert info['archive/data/0'].header_offset + 30 + len('archive/data/0') + len(info['archive/data/0'].extra) \
            == _data_offset(tmp_path / 'a.pt', info['archive/data/0'])
        assert _data_offset(tmp_path / 'a.pt', info['archive/data/0']) % 64 == 0  # (torch's alignment)
        assert sorted(info) == sorted(f'archive/{n}' for n in ('data.pkl', '.format_version', '.storage_alignment',
                                                               'byteorder', 'data/0', 'version',
                                                               '.data/serialization_id'))


def _data_offset(path, info):
    data = path.read_bytes()
    name_len, extra_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], 'little'), \
        int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], 'little')
    return info.header_offset + 30 + name_len + extra_len


def test_get_unsafe_globals_in_checkpoint_as_torch(tmp_path):
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    torch.save({'net': net, 'args': argparse.Namespace(a=1), 'x': np.ones(2)}, tmp_path / 'n.pt')
    expected = set(torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'n.pt'))
    assert set(lg.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'n.pt')) == expected
    with open(tmp_path / 'n.pt', 'rb') as f:
        assert set(lg.serialization.get_unsafe_globals_in_checkpoint(f)) == expected
    for ser in (lg.serialization, torch.serialization):
        ser.add_safe_globals([argparse.Namespace, np.ndarray])
    assert set(lg.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'n.pt')) == \
        set(torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'n.pt'))
    lg_net = lg.nn.Sequential(lg.nn.Linear(2, 2), lg.nn.BatchNorm1d(2))
    lg.save({'net': lg_net, 'args': argparse.Namespace(a=1), 'x': np.ones(2)}, tmp_path / 'n.lgt')
    assert set(lg.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'n.lgt')) == \
        set(torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'n.pt'))
    torch.save({'a': torch.ones(1)}, tmp_path / 'legacy.pt', _use_new_zipfile_serialization=False)
    lmsg, tmsg = _raises_same(lambda: lg.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'legacy.pt'),
                              lambda: torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / 'legacy.pt'))
    assert lmsg == tmsg


def _raises_same(fn_lg, fn_torch):
    with pytest.raises(Exception) as t_info:
        fn_torch()
    with pytest.raises(type(t_info.value)) as l_info:
        fn_lg()
    return str(l_info.value), str(t_info.value)


# ---- PyTorch's names for leafgrad's classes and functions ---------------------------------------
def _public(namespace):
    for name in dir(namespace):
        value = getattr(namespace, name)
        if not name.startswith('_') and isinstance(value, (type, types.FunctionType)):
            yield name, value


@pytest.mark.parametrize('where', ['', 'nn', 'nn.functional', 'nn.init', 'nn.utils', 'optim', 'optim.lr_scheduler',
                                   'utils.data', 'autograd', 'random'])
def test_leafgrad_objects_are_named_as_torch_names_them(where):
    from leafgrad.serialization._names import _TORCH_NAMES, global_name
    lg_ns, torch_ns = lg, torch
    for part in where.split('.') if where else ():
        lg_ns, torch_ns = getattr(lg_ns, part), getattr(torch_ns, part)
    checked = 0
    for name, value in _public(lg_ns):
        theirs = getattr(torch_ns, name, None)
        if not value.__module__.startswith('leafgrad') or not isinstance(theirs, (type, types.FunctionType)) \
                or '<locals>' in theirs.__qualname__ or not theirs.__module__.startswith('torch'):
            continue
        assert global_name(value) == (theirs.__module__, theirs.__qualname__), name
        checked += 1
    assert checked >= 3
    for name in _TORCH_NAMES:  # (no entry outlives the object it names)
        module, _, qualname = name.rpartition('.')
        obj = getattr(__import__(module, fromlist=['_']), qualname)
        assert f'{obj.__module__}.{obj.__qualname__}' == name


def test_the_names_used_by_word_language_model_exist():
    """generate.py allowlists these by PyTorch's module paths."""
    for path in ('nn.modules.activation.MultiheadAttention', 'nn.modules.linear.NonDynamicallyQuantizableLinear',
                 'nn.modules.rnn.LSTM', 'nn.modules.transformer.TransformerEncoderLayer', 'nn.functional.relu'):
        obj = lg
        for part in path.split('.'):
            obj = getattr(obj, part)
        assert lg.serialization._names.allowlist_name(obj) == f'torch.{path}'
    assert type(lg.nn.MultiheadAttention(4, 2).out_proj) is lg.nn.modules.linear.NonDynamicallyQuantizableLinear
    rnn = lg.nn.LSTM(2, 3)
    assert rnn.flatten_parameters() is None and torch.nn.LSTM(2, 3).flatten_parameters() is None


# ---- what cannot be saved ------------------------------------------------------------------------
def _local():
    class Local:
        pass
    return Local()


@pytest.mark.parametrize('make', [lambda: {'f': lambda: 0}, lambda: [_local()], lambda: {'lock': threading.Lock()},
                                  lambda: (i for i in range(2))], ids=['lambda', 'local class', 'lock', 'generator'])
@pytest.mark.parametrize('suffix', ['.lgt', '.pt'])
def test_what_pickle_cannot_store_is_refused_with_its_error(tmp_path, make, suffix):
    path = tmp_path / f'bad{suffix}'
    path.write_bytes(b'old')
    lmsg, tmsg = _raises_same(lambda: lg.save(make(), path), lambda: torch.save(make(), io.BytesIO()))
    assert re.sub(r' at 0x[0-9a-f]+', '', lmsg) == re.sub(r' at 0x[0-9a-f]+', '', tmsg)
    assert path.read_bytes() == b'old' and os.listdir(tmp_path) == [path.name]  # nothing written


# ---- forged object records -----------------------------------------------------------------------
def _g(module, name):
    return {'__global__': [module, name]}


_FORGED = {
    'os.system': ({'__reduce__': _g('posix', 'system'), 'args': ['touch MARKER']}, pickle.UnpicklingError,
                  'Trying to load unsupported GLOBAL posix.system whose module posix is blocked.'),
    'eval': ({'__reduce__': _g('builtins', 'eval'), 'args': ['1']}, pickle.UnpicklingError,
             'GLOBAL eval was not an allowed global'),
    'new of a dict': ({'__new__': {'__dict__': []}}, pickle.UnpicklingError, 'Can only create new object'),
    'call of a string': ({'__reduce__': 'print', 'args': []}, pickle.UnpicklingError,
                         'Trying to call reduce for unrecognized function print'),
    'state on a dict': ({'__reduce__': _g('collections', 'OrderedDict'), 'args': [], 'pairs': [[1, 2]],
                         'items': [3]}, pickle.UnpicklingError, 'Can only append to lists'),
    'bad args for an allowed class': ({'__reduce__': _g('torch', 'Size'), 'args': ['x']}, CheckpointError, 'Size'),
    'ref ahead': ([{'__ref__': 5}], CheckpointError, 'refers to nothing read before'),
    'ref to an unfinished tuple': ({'__tuple__': [{'__ref__': 0}]}, CheckpointError, 'refers to nothing'),
    'global malformed': ({'__global__': 'os.system'}, CheckpointError, '__global__'),
    'object field unknown': ({'__new__': _g('collections', 'OrderedDict'), 'code': 1}, CheckpointError, 'fields'),
    'args not a list': ({'__new__': _g('collections', 'OrderedDict'), 'args': 5}, CheckpointError, 'fields'),
    'bytes not an array': ({'__bytes__': 't9'}, CheckpointError, 'not an array of bytes'),
    'size of strings': ({'__size__': ['a']}, CheckpointError, '__size__'),
}


@pytest.mark.parametrize('case', sorted(_FORGED))
def test_forged_object_records_are_refused(tmp_path, case):
    structure, error, words = _FORGED[case]
    path = _forge(tmp_path / 'forged.lgt', json.loads(json.dumps(structure).replace('MARKER', str(tmp_path / 'ran'))))
    data = path.read_bytes().replace(b'leafgrad-checkpoint/1', b'leafgrad-checkpoint/2')
    path.write_bytes(data)
    lg.serialization.add_safe_globals([os.system])  # (blocked modules stay blocked)
    with pytest.raises(error, match=re.escape(words)):
        lg.load(path)
    assert not (tmp_path / 'ran').exists()


def test_bfloat16_round_trips_in_both_formats(tmp_path):
    t = lg.tensor([1.5, -2.25, 3.0]).to(lg.bfloat16)
    for name in ('bf.lgt', 'bf.pt'):
        lg.save({'t': t, 'dt': lg.bfloat16}, tmp_path / name)
        back = lg.load(tmp_path / name)
        assert back['t'].dtype == lg.bfloat16 and back['dt'] is lg.bfloat16 and back['t'].tolist() == [1.5, -2.25, 3.0]
    theirs = torch.load(tmp_path / 'bf.pt')
    assert theirs['t'].dtype == torch.bfloat16 and theirs['t'].tolist() == [1.5, -2.25, 3.0]
