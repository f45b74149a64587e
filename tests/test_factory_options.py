"""The options every factory takes (``layout=``, ``pin_memory=``), the layouts, ``out=`` of the
factories that compute their values (``arange``, ``linspace``, ``logspace``, ``eye``, ``full``)
and ``requires_grad=`` with ``out=``, pinned memory, against torch on the same calls."""
import pickle
import warnings

import numpy as np
import pytest

from oracle import lg, torch

FACTORIES = {  # name: call(T, **options)
    'zeros': lambda T, **k: T.zeros(2, 3, **k),
    'ones': lambda T, **k: T.ones(2, **k),
    'empty': lambda T, **k: T.empty(2, **k).zero_(),
    'full': lambda T, **k: T.full((2,), 1.5, **k),
    'zeros_like': lambda T, **k: T.zeros_like(T.ones(2), **k),
    'ones_like': lambda T, **k: T.ones_like(T.ones(2), **k),
    'empty_like': lambda T, **k: T.empty_like(T.ones(2), **k).zero_(),
    'full_like': lambda T, **k: T.full_like(T.ones(2), 3.0, **k),
    'arange': lambda T, **k: T.arange(4, **k),
    'linspace': lambda T, **k: T.linspace(0, 1, 5, **k),
    'logspace': lambda T, **k: T.logspace(0, 2, 3, **k),
    'eye': lambda T, **k: T.eye(3, **k),
    'rand': lambda T, **k: T.rand(2, **k).zero_(),
    'randn': lambda T, **k: T.randn(2, **k).zero_(),
    'randint': lambda T, **k: T.randint(3, (2,), **k).zero_(),
    'rand_like': lambda T, **k: T.rand_like(T.ones(2), **k).zero_(),
    'randn_like': lambda T, **k: T.randn_like(T.ones(2), **k).zero_(),
    'randint_like': lambda T, **k: T.randint_like(T.ones(2), 3, **k).zero_(),
    'new_zeros': lambda T, **k: T.ones(2).new_zeros(3, **k),
    'new_ones': lambda T, **k: T.ones(2).new_ones(3, **k),
    'new_empty': lambda T, **k: T.ones(2).new_empty(3, **k).zero_(),
    'new_full': lambda T, **k: T.ones(2).new_full((3,), 2.0, **k),
}


def _same(a, b):
    assert str(a.dtype).split('.')[-1] == str(b.dtype).split('.')[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(np.asarray(a.detach()._data), b.detach().numpy())


@pytest.mark.parametrize('name', sorted(FACTORIES))
@pytest.mark.parametrize('options', [dict(layout=None), dict(pin_memory=False), dict(layout='strided')],
                         ids=['layout-None', 'pin-False', 'layout-strided'])
def test_default_options_are_taken(name, options):
    call = FACTORIES[name]
    mine = call(lg, **{k: getattr(lg, v) if isinstance(v, str) else v for k, v in options.items()})
    theirs = call(torch, **{k: getattr(torch, v) if isinstance(v, str) else v for k, v in options.items()})
    _same(mine, theirs)
    assert mine.layout is lg.strided and theirs.layout is torch.strided


@pytest.mark.parametrize('name', sorted(FACTORIES))
def test_pin_memory_needs_an_accelerator(name):
    """pin_memory=True: PyTorch's RuntimeError on a machine without a GPU (this one)."""
    with pytest.raises(RuntimeError) as theirs:
        FACTORIES[name](torch, pin_memory=True)
    with pytest.raises(RuntimeError) as mine:
        FACTORIES[name](lg, pin_memory=True)
    assert str(mine.value) == str(theirs.value)


def test_tensor_pin_memory_is_refused_not_ignored():
    with pytest.raises(RuntimeError) as theirs:
        torch.tensor([1.0], pin_memory=True)
    with pytest.raises(RuntimeError) as mine:
        lg.tensor([1.0], pin_memory=True)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize('name', ['zeros', 'full', 'zeros_like', 'new_zeros'])
def test_a_layout_that_is_no_layout(name):
    with pytest.raises(TypeError) as theirs:
        FACTORIES[name](torch, layout=3)
    with pytest.raises(TypeError) as mine:
        FACTORIES[name](lg, layout=3)
    assert str(mine.value) == str(theirs.value).replace('torch.layout', 'leafgrad.layout')


@pytest.mark.parametrize('name', ['zeros', 'ones', 'arange', 'eye', 'rand'])
def test_sparse_layouts_are_refused(name):
    """leafgrad has dense tensors only: a sparse layout is refused (PyTorch makes a sparse tensor,
    or raises NotImplementedError for the factories that have no sparse kernel)."""
    with pytest.raises(NotImplementedError, match='sparse_coo'):
        FACTORIES[name](lg, layout=lg.sparse_coo)


def test_layouts():
    names = sorted(n for n in dir(torch) if isinstance(getattr(torch, n), torch.layout))
    assert sorted(n for n in dir(lg) if isinstance(getattr(lg, n, None), lg.layout)) == names
    for n in names:
        assert repr(getattr(lg, n)) == repr(getattr(torch, n)).replace('torch.', 'leafgrad.')
        assert pickle.loads(pickle.dumps(getattr(lg, n))) is getattr(lg, n)
    assert lg.ones(2).layout is lg.strided and lg.ones(2)[::2].t().layout is lg.strided
    assert lg.strided != lg.sparse_coo


OUT_CALLS = {  # name: (call(T, out, **kwargs), out's dtype, out's shape)
    'arange-into-empty-double': (lambda T, o, **k: T.arange(5, out=o, **k), 'float64', (0,)),
    'arange-cast-to-long': (lambda T, o, **k: T.arange(0.5, 3, out=o, **k), 'int64', (0,)),
    'arange-keeps-shape': (lambda T, o, **k: T.arange(3, out=o, **k), 'float32', (3, 1)),
    'arange-resized-warns': (lambda T, o, **k: T.arange(3, out=o, **k), 'float32', (2, 2)),
    'linspace': (lambda T, o, **k: T.linspace(0, 1, 3, out=o, **k), 'float64', (5,)),
    'logspace-long': (lambda T, o, **k: T.logspace(0, 2, 3, out=o, **k), 'int64', (0,)),
    'eye-int': (lambda T, o, **k: T.eye(2, out=o, **k), 'int32', (5,)),
    'eye-rect': (lambda T, o, **k: T.eye(2, 3, out=o, **k), 'float32', (2, 3)),
    'full-float': (lambda T, o, **k: T.full((2,), 3, out=o, **k), 'float32', (0,)),
    'full-long': (lambda T, o, **k: T.full((2,), 3.5, out=o, **k), 'int64', (0,)),
}


def _caught(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        result = fn()
    return result, [str(w.message) for w in seen]


@pytest.mark.parametrize('case', sorted(OUT_CALLS))
def test_out_of_computed_factories(case):
    call, dtype, shape = OUT_CALLS[case]
    lo = lg.empty(shape, dtype=getattr(lg, dtype))
    to = torch.empty(shape, dtype=getattr(torch, dtype))
    lr, lw = _caught(lambda: call(lg, lo))
    tr, tw = _caught(lambda: call(torch, to))
    assert lr is lo and tr is to
    _same(lo, to)
    assert [w.split(' (Triggered')[0] for w in tw] == lw
    assert lo._version == to._version


def test_arange_fills_a_strided_out_in_place():
    lo, to = lg.zeros(6)[::2], torch.zeros(6)[::2]
    lg.arange(3, out=lo), torch.arange(3, out=to)
    _same(lo._base, to._base)
    assert lo.stride() == to.stride()


@pytest.mark.filterwarnings('ignore:The number of elements in the out tensor')
@pytest.mark.parametrize('case', sorted(OUT_CALLS))
def test_out_errors_of_computed_factories(case):
    call, dtype, shape = OUT_CALLS[case]
    wrong = 'float16' if dtype != 'float16' else 'float32'
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.empty(shape, dtype=getattr(torch, dtype)), dtype=getattr(torch, wrong))
    with pytest.raises(RuntimeError) as mine:
        call(lg, lg.empty(shape, dtype=getattr(lg, dtype)), dtype=getattr(lg, wrong))
    assert str(mine.value) == str(theirs.value)
    if dtype.startswith('float'):
        with pytest.raises(RuntimeError) as theirs:
            call(torch, torch.empty(shape, dtype=getattr(torch, dtype), requires_grad=True))
        with pytest.raises(RuntimeError) as mine:
            call(lg, lg.empty(shape, dtype=getattr(lg, dtype), requires_grad=True))
        assert str(mine.value) == str(theirs.value)
    with pytest.raises(TypeError):
        call(lg, [1.0])


@pytest.mark.parametrize('name,call', [
    ('zeros', lambda T, o: T.zeros(2, out=o, requires_grad=True)),
    ('empty', lambda T, o: T.empty(2, out=o, requires_grad=True)),
    ('eye', lambda T, o: T.eye(2, out=o, requires_grad=True)),
    ('arange', lambda T, o: T.arange(3.0, out=o, requires_grad=True)),
    ('full', lambda T, o: T.full((2,), 1.0, out=o, requires_grad=True)),
    ('linspace', lambda T, o: T.linspace(0, 1, 3, out=o, requires_grad=True)),
    ('rand', lambda T, o: T.rand(2, out=o, requires_grad=True)),
])
def test_requires_grad_with_out_makes_out_a_leaf_that_requires_grad(name, call):
    lo, to = lg.empty(0), torch.empty(0)
    with lg.no_grad():
        assert call(lg, lo) is lo
    with torch.no_grad():
        assert call(torch, to) is to
    assert (lo.requires_grad, lo.is_leaf) == (to.requires_grad, to.is_leaf) == (True, True)


def test_requires_grad_with_an_integer_out():
    lo, to = lg.empty(0, dtype=lg.int64), torch.empty(0, dtype=torch.int64)
    with pytest.raises(RuntimeError) as theirs:
        torch.arange(3, out=to, requires_grad=True)
    with pytest.raises(RuntimeError) as mine:
        lg.arange(3, out=lo, requires_grad=True)
    assert str(mine.value) == str(theirs.value)
    _same(lo, to)  # filled before it was refused, as in PyTorch


def test_new_tensor_takes_no_options():
    for options in (dict(layout=None), dict(pin_memory=False)):
        with pytest.raises(TypeError) as theirs:
            torch.ones(2).new_tensor([1.0], **options)
        with pytest.raises(TypeError) as mine:
            lg.ones(2).new_tensor([1.0], **options)
        assert str(mine.value) == str(theirs.value)


def test_pinned_memory_without_a_gpu():
    x, t = lg.ones(2), torch.ones(2)
    assert x.is_pinned() is t.is_pinned() is False
    with pytest.raises(RuntimeError) as theirs:
        t.pin_memory()
    with pytest.raises(RuntimeError) as mine:
        x.pin_memory()
    assert str(mine.value) == str(theirs.value)


def test_dataloader_pin_memory_without_a_gpu_warns_and_loads():
    def load(T):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter('always')
            batches = list(T.utils.data.DataLoader([1.0, 2.0, 3.0], batch_size=2, pin_memory=True))
        return batches, [str(w.message) for w in seen if 'pin_memory' in str(w.message)]
    (lb, lw), (tb, tw) = load(lg), load(torch)
    assert lw == tw and len(tw) == 1
    for a, b in zip(lb, tb, strict=True):
        _same(a, b)


@pytest.mark.parametrize('method', ['pin_memory', 'is_pinned'])
@pytest.mark.parametrize('device', ['cpu', 3, 'foo', 'cpu:0'])
def test_pinning_device_argument_is_deprecated_not_ignored(method, device):
    """Tensor.pin_memory(device)/is_pinned(device): PyTorch's deprecation warnings, its refusal of a
    device that is no accelerator, its errors for a bad device (a machine without a GPU: this one)."""
    def outcome(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            try:
                result = getattr(T.ones(2), method)(device)
            except RuntimeError as e:
                result = str(e)
        return result, [(w.category, str(w.message).split(' (Triggered')[0]) for w in caught]
    assert outcome(lg) == outcome(torch)


# ---- torch.range (deprecated: end included) and torch.frombuffer ---------------------------------

def _same_tensor(ours, theirs):
    assert str(ours.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


@pytest.mark.parametrize('args,kwargs', [((1, 4), {}), ((0, 1, 0.25), {}), ((0, 0.3, 0.1), {}), ((0, 1, 0.1), {}),
                                         ((1, 4), dict(dtype='int64')), ((0, 5, 2), {}), ((-1, -4, -1), {}),
                                         ((), dict(start=0, end=2, step=1)), ((1, 3), dict(requires_grad=True)),
                                         ((0, 1, 0.1), dict(dtype='float64')), ((2, 2), {})])
def test_range_as_torch(args, kwargs):
    results = []
    for T in (lg, torch):
        k = dict(kwargs, dtype=getattr(T, kwargs['dtype'])) if 'dtype' in kwargs else kwargs
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            results.append(T.range(*args, **k))
        assert [x.category for x in w] == [UserWarning] and w[0].filename == __file__
        message = str(w[0].message)
    _same_tensor(*results)
    assert message == str(w[0].message)  # (torch's words, torch's name)
    assert message.replace('torch', 'leafgrad') == str(_range_warning())


def _range_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        lg.range(0, 1)
    return w[0].message


def test_range_out():
    for T in (lg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            out = T.empty(0)
            assert T.range(1, 3, out=out) is out and out.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize('call', ['T.range(1, 0)', 'T.range(0, 1, 0)', "T.range(0, float('inf'))", 'T.range(0, 1, -1)',
                                  "T.range(0, 'a')", 'T.range(3)', 'T.range(0, 2, dtype=T.complex64)'])
def test_range_errors_as_torch(call):
    errors = []
    for T in (lg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with pytest.raises(Exception) as info:
                eval(call, {'T': T})
        errors.append((type(info.value), str(info.value).replace('leafgrad', 'torch')))
    assert errors[0] == errors[1]


def test_frombuffer_shares_the_buffer():
    import array
    for T in (lg, torch):
        b = bytearray(b'\x01\x02\x03\x04\x05\x06\x07\x08')
        t = T.frombuffer(b, dtype=T.int16)
        b[0] = 9
        assert t.tolist() == [521, 1027, 1541, 2055] and t.dtype == T.int16
        assert T.frombuffer(b, dtype=T.uint8, count=3, offset=2).tolist() == [3, 4, 5]
        f = T.frombuffer(array.array('f', [1, 2, 3]), dtype=T.float32, requires_grad=True)
        assert f.requires_grad and f.tolist() == [1.0, 2.0, 3.0]


def test_frombuffer_of_bytes_warns_as_torch():
    messages = []
    for T in (lg, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            assert T.frombuffer(b'abcd', dtype=T.uint8).tolist() == [97, 98, 99, 100]
        messages += [str(x.message).split(' (Triggered internally')[0] for x in w if x.category is UserWarning]
    assert len(messages) == 2 and messages[0] == messages[1]


@pytest.mark.parametrize('call', ['T.frombuffer(b)', 'T.frombuffer(b, dtype=T.int32, offset=9)',
                                  'T.frombuffer(b, dtype=T.int32, count=3)', 'T.frombuffer(b, dtype=T.int32, count=0)',
                                  'T.frombuffer(b, dtype=T.int32, offset=2)', 'T.frombuffer(3, dtype=T.int32)',
                                  'T.frombuffer(bytearray(), dtype=T.int32)',
                                  'T.frombuffer(b, dtype=T.int32, offset=-1)'])
def test_frombuffer_errors_as_torch(call):
    errors = []
    for T in (lg, torch):
        with pytest.raises(Exception) as info:
            eval(call, {'T': T, 'b': bytearray(8)})
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize('call', ['T.empty(size=(2, 3)).zero_()', 'T.zeros(size=(2,))', 'T.ones(size=[1, 2], dtype=T.int64)',
                                  'T.rand(size=(2, 2)).shape', 'T.randn(size=(3,), dtype=T.float64).dtype',
                                  'T.zeros(2, size=(3,))', 'T.ones((2,), size=(3,))'])
def test_size_by_keyword(call):
    """The factories taking ``*size`` take it by keyword too, as PyTorch's (examples/gat's
    ``torch.empty(size=(in_features, n_hidden))``)."""
    results = []
    for T in (lg, torch):
        try:
            r = eval(call, {'T': T})
            results.append(np.asarray(r).tolist() if isinstance(r, T.Tensor) else str(r).replace('leafgrad', 'torch'))
        except TypeError as e:
            results.append(str(e))
    assert results[0] == results[1]
