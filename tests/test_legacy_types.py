"""PyTorch's legacy constructors, compared with torch: ``torch.FloatTensor`` and kin (every call
form, ``isinstance``, reprs, errors), ``torch.cuda.*Tensor`` without a GPU, ``Tensor(...)`` and
``Tensor.new``, ``Tensor.type``, ``set_default_tensor_type`` and ``autograd.Variable``."""
import json

import numpy as np
import pytest

from fresh import fresh_python_output
from leafgrad import backend
from oracle import lg, torch
from test_boilerplate import outcome, same

NAMES = ['FloatTensor', 'DoubleTensor', 'HalfTensor', 'LongTensor', 'IntTensor', 'ShortTensor', 'CharTensor',
         'ByteTensor', 'BoolTensor']


def first_line(fn):
    """outcome() with an error message cut to its first line (torch lists its overloads after it)."""
    result, said = outcome(fn)
    if result[0] == 'raised':
        result = result[:2] + (result[2].split('\n')[0],)
    return result, said


def same_first_line(call):
    assert first_line(lambda: call(lg)) == first_line(lambda: call(torch))


@pytest.mark.parametrize('name', NAMES)
def test_the_type_itself(name):
    ours, theirs = getattr(lg, name), getattr(torch, name)
    assert repr(ours) == repr(theirs).replace('torch', 'leafgrad')
    assert (ours.__name__, ours.__qualname__) == (theirs.__name__, theirs.__qualname__)
    assert repr(ours.dtype).replace('leafgrad', 'torch') == repr(theirs.dtype)
    assert (ours.is_cuda, ours.is_sparse) == (theirs.is_cuda, theirs.is_sparse) == (False, False)
    assert type(ours).__name__ == type(theirs).__name__ == 'tensortype'
    assert issubclass(ours, lg.Tensor) is issubclass(theirs, torch.Tensor) is False
    assert isinstance(ours, type) and getattr(lg, name) is ours


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool'])
def test_isinstance_asks_the_dtype(name, dtype):
    assert isinstance(lg.zeros(2, dtype=getattr(lg, dtype)), getattr(lg, name)) == \
        isinstance(torch.zeros(2, dtype=getattr(torch, dtype)), getattr(torch, name))


def test_isinstance_of_others():
    same(lambda t: (isinstance(t.nn.Parameter(t.ones(2)), t.FloatTensor), isinstance(1, t.FloatTensor),
                    isinstance(np.ones(2, np.float32), t.FloatTensor), isinstance(t.ones(2), t.cuda.FloatTensor),
                    issubclass(t.Tensor, t.FloatTensor)))


def _shape_dtype(x):
    return tuple(x.shape), str(x.dtype).split('.')[-1]


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('call', [
    lambda T, t: T(),
    lambda T, t: _shape_dtype(T(2, 3)),
    lambda T, t: _shape_dtype(T(0)),
    lambda T, t: _shape_dtype(T(t.Size([2, 3]))),
    lambda T, t: _shape_dtype(T(np.int64(2))),
    lambda T, t: _shape_dtype(T(2, device='cpu')),
    lambda T, t: _shape_dtype(T(size=(2,))),
    lambda T, t: T((2, 3)),
    lambda T, t: T([2, 3]),
    lambda T, t: T([[1.5, -2.7], [3, 4]]),
    lambda T, t: T([-1, 300, 7]),
    lambda T, t: T([True, 0, 2.5]),
    lambda T, t: T(range(3)),
    lambda T, t: T(data=[1]),
    lambda T, t: T([t.tensor(1.5), t.tensor(2.0)]),
    lambda T, t: T(np.array([1.5, 2.0])),
    lambda T, t: T(-1),
    lambda T, t: T(2.5),
    lambda T, t: T(True),
    lambda T, t: T(np.float32(2)),
    lambda T, t: T('a'),
    lambda T, t: T([1, None]),
    lambda T, t: T(2, 3.0),
    lambda T, t: T(2, 'a'),
    lambda T, t: T(2, 3, device='cuda'),
    lambda T, t: T([1], device='cuda:0'),
    lambda T, t: T(t.ones(2, dtype=t.float32)),
    lambda T, t: T(t.ones(2, dtype=t.int64)),
    lambda T, t: T(t.ones(2), device='cpu'),
], ids=lambda c: '')
def test_call_forms(name, call):
    same_first_line(lambda t: call(getattr(t, name), t))


@pytest.mark.parametrize('call', [
    lambda t: t.FloatTensor([1], dtype=t.float64),
    lambda t: t.FloatTensor([1], requires_grad=True),
    lambda t: t.FloatTensor(2, foo=1),
    lambda t: t.FloatTensor(t.ones(2), 3),
    lambda t: t.FloatTensor([1], [2]),
    lambda t: t.LongTensor([2 ** 40]),
    lambda t: t.DoubleTensor([0.1]).item(),
    lambda t: t.HalfTensor([70000]),
    lambda t: t.FloatTensor([[1], [2, 3]]),
    lambda t: t.FloatTensor([[1, 2], [3]]),
    lambda t: t.FloatTensor([1, [2]]),
    lambda t: t.FloatTensor([[1], 2]),
    lambda t: t.FloatTensor(['a']),
    lambda t: t.FloatTensor([[], []]),
    lambda t: t.FloatTensor([[[1]], [[2, 3]]]),
    lambda t: t.LongTensor([object()]),
    lambda t: t.BoolTensor([1, None]),
    lambda t: t.BoolTensor([1.5, 0.0]),
    lambda t: t.LongTensor([t.tensor(2)]),
    lambda t: t.LongTensor([t.tensor([1, 2])]),
    lambda t: t.BoolTensor([t.tensor(True)]),
    lambda t: t.FloatTensor([t.tensor([1.0, 2.0])]),
    lambda t: t.LongTensor([[t.tensor(1.0)]]),
    lambda t: t.ByteTensor([-1, 3]),
    lambda t: t.ByteTensor([-255, 255]),
    lambda t: t.ByteTensor([-256]),
    lambda t: t.CharTensor([127, -128]),
    lambda t: t.CharTensor([128]),
    lambda t: t.ByteTensor([-0.5]),
    lambda t: t.LongTensor([float('nan')]),
    lambda t: t.FloatTensor([float('nan'), float('inf')]),
], ids=lambda c: '')
def test_more_call_forms(call):
    same_first_line(call)


def test_the_full_overload_message():
    ours, theirs = [], []
    for t, out in ((lg, ours), (torch, theirs)):
        with pytest.raises(TypeError) as info:
            t.FloatTensor([1], dtype=t.float64)
        out.append([line for line in str(info.value).replace('leafgrad', 'torch').splitlines()
                    if "didn't match" not in line])
    assert ours == theirs


def test_a_tensor_of_the_type_is_aliased():
    for t in (lg, torch):
        a = t.ones(2, requires_grad=True)
        b = t.FloatTensor(a)
        assert b is not a and b.requires_grad and type(b.grad_fn).__name__ == 'AliasBackward0'
        (b * 3).sum().backward()
        assert a.grad.tolist() == [3.0, 3.0]
        c = t.ones(2)
        d = t.FloatTensor(c)
        d.add_(1)
        assert c.tolist() == [2.0, 2.0] and c._version == d._version == 1


def test_numpy_array_of_the_type_shares_memory():
    a = np.ones(2, np.float32)
    b = lg.FloatTensor(a)
    b.add_(1)
    assert a.tolist() == [2.0, 2.0]
    assert lg.DoubleTensor(a).dtype is lg.float64


@pytest.mark.skipif(backend._cupy is not None, reason='the answers without CuPy')
@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('call', [
    lambda T, t: repr(T), lambda T, t: (T.is_cuda, T.__module__, T.__name__), lambda T, t: T(2),
    lambda T, t: T([1]), lambda T, t: T(), lambda T, t: isinstance(t.zeros(2), T),
], ids=lambda c: '')
def test_cuda_types_without_a_gpu(name, call):
    same(lambda t: call(getattr(t.cuda, name), t))


# ---- Tensor(...) and Tensor.new -----------------------------------------------------------------

@pytest.mark.parametrize('call', [
    lambda t: t.Tensor(),
    lambda t: _shape_dtype(t.Tensor(2, 3)),
    lambda t: _shape_dtype(t.Tensor(t.Size([2]))),
    lambda t: t.Tensor([1, 2]),
    lambda t: t.Tensor((2, 3)),
    lambda t: t.Tensor(np.array([1, 2])),
    lambda t: t.Tensor(t.ones(2, dtype=t.float64)),
    lambda t: t.Tensor(t.ones(2, dtype=t.int64)),
    lambda t: t.Tensor(2, dtype=t.float64),
    lambda t: t.Tensor(2, device='cuda'),
    lambda t: t.Tensor(True),
    lambda t: t.Tensor(size=(2,)).shape,
    lambda t: t.Tensor(data=[1]),
    lambda t: t.ones(2, dtype=t.int64).new(),
    lambda t: _shape_dtype(t.ones(2, dtype=t.int64).new(2, 3)),
    lambda t: t.ones(2, dtype=t.int64).new([1.5]),
    lambda t: t.ones(2, dtype=t.int64).new(t.ones(2)),
    lambda t: t.ones(2).new([1], dtype=t.float64),
    lambda t: t.ones(2).new(2, device='cuda'),
], ids=lambda c: '')
def test_tensor_constructor_and_new(call):
    same_first_line(call)


def test_tensor_constructor_follows_the_default_dtype():
    try:
        lg.set_default_dtype(lg.float64)
        torch.set_default_dtype(torch.float64)
        same(lambda t: (t.Tensor([1.5]), t.Tensor(2).dtype, t.FloatTensor([1.5]).dtype))
    finally:
        lg.set_default_dtype(lg.float32)
        torch.set_default_dtype(torch.float32)


def test_tensor_of_a_tensor_shares_memory():
    a = lg.ones(2)
    b = lg.Tensor(a)
    b.add_(1)
    assert a.tolist() == [2.0, 2.0] and a._version == b._version == 1


# ---- Tensor.type -------------------------------------------------------------------------------

@pytest.mark.parametrize('call', [
    lambda t: t.ones(2).type(),
    lambda t: t.ones(2, dtype=t.uint8).type(),
    lambda t: t.ones(2, dtype=t.int64).type(t.FloatTensor),
    lambda t: t.ones(2).type('torch.DoubleTensor'),
    lambda t: t.ones(2).type('torch.ShortTensor'),
    lambda t: t.ones(2).type('torch.CharTensor'),
    lambda t: t.ones(2).type('torch.foo'),
    lambda t: t.ones(2).type('FloatTensor'),
    lambda t: t.ones(2).type(t.float64),
    lambda t: t.ones(2).type(float),
    lambda t: t.ones(2).type(5),
    lambda t: t.ones(2).type(dtype=t.int8),
    lambda t: (lambda a: a.type(t.float32) is a)(t.ones(2)),
    lambda t: (lambda a: a.type('torch.FloatTensor') is a)(t.ones(2)),
    lambda t: (lambda a: a.type(t.FloatTensor) is a)(t.ones(2)),
], ids=lambda c: '')
def test_tensor_type(call):
    same(call)


@pytest.mark.skipif(backend._cupy is not None, reason='the answers without CuPy')
@pytest.mark.parametrize('target', ['torch.cuda.FloatTensor', 'cuda.FloatTensor'])
def test_tensor_type_cuda_without_a_gpu(target):
    # torch's CPU build fails with 'Cannot initialize CUDA without ATen_cuda library...': the same
    # RuntimeError, with leafgrad's 'not compiled with CUDA' words
    def call(t):
        return t.ones(2).type(target if target.startswith('torch') else getattr(t.cuda, 'FloatTensor'))
    (_, theirs, _), _ = outcome(lambda: call(torch))
    with pytest.raises(RuntimeError, match=theirs and 'not compiled with CUDA'):
        call(lg)


# ---- set_default_tensor_type (warns once a process: compared in fresh ones) ----------------------

def test_set_default_tensor_type():
    program = '''
import json, warnings
import {lib} as t
out = []
for arg in ['t.DoubleTensor', "'torch.FloatTensor'", 't.LongTensor', 't.cuda.FloatTensor', 't.float64',
            "'torch.Foo'", '5', "'torch.DoubleTensor'"]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            t.set_default_tensor_type(eval(arg.replace("'torch.", "'{lib}.")))
            result = ['returned', str(t.get_default_dtype()), str(t.tensor([1.0]).dtype), str(t.Tensor(2).dtype)]
        except Exception as e:
            result = ['raised', type(e).__name__, str(e)]
    out.append([result, [[w.category.__name__, str(w.message).split(' (Triggered internally')[0]] for w in caught]])
print(json.dumps(out).replace('{lib}', 'torch'))
'''
    ours = json.loads(fresh_python_output(program.replace('{lib}', 'leafgrad')))
    theirs = json.loads(fresh_python_output(program.replace('{lib}', 'torch')))
    assert ours == theirs


# ---- autograd.Variable ---------------------------------------------------------------------------

@pytest.mark.parametrize('call', [
    lambda t: t.autograd.Variable(t.ones(2)),
    lambda t: t.autograd.Variable(t.ones(2), requires_grad=True),
    lambda t: t.autograd.Variable(t.ones(2), True),
    lambda t: t.autograd.Variable(t.ones(2), requires_grad=1),
    lambda t: t.autograd.Variable(t.ones(2), requires_grad=None),
    lambda t: t.autograd.Variable(t.ones(2), volatile=True),
    lambda t: t.autograd.Variable(t.ones(2), True, True),
    lambda t: t.autograd.Variable(t.ones(2), False, volatile=False),
    lambda t: t.autograd.Variable(),
    lambda t: t.autograd.Variable([1.0]),
    lambda t: t.autograd.Variable(1),
    lambda t: t.autograd.Variable(np.ones(2)),
    lambda t: t.autograd.Variable(t.ones(2, dtype=t.int64), requires_grad=True),
    lambda t: t.autograd.Variable(data=t.ones(2)),
    lambda t: t.autograd.Variable(t.ones(2, requires_grad=True)),
    lambda t: t.autograd.Variable(t.ones(2, requires_grad=True) * 2).grad_fn,
    lambda t: type(t.autograd.Variable(t.nn.Parameter(t.ones(2)))).__name__,
    lambda t: (isinstance(t.ones(2), t.autograd.Variable), isinstance(1, t.autograd.Variable)),
    lambda t: t.ones(2).volatile,
], ids=lambda c: '')
def test_variable(call):
    same(call)


def test_variable_shares_memory_and_version():
    for t in (lg, torch):
        x = t.ones(2)
        v = t.autograd.Variable(x, requires_grad=True)
        assert v is not x and not x.requires_grad and v.is_leaf
        with t.no_grad():
            v[0] = 5
        assert x.tolist() == [5.0, 1.0] and x._version == v._version == 1


def test_variable_names():
    from leafgrad.autograd import Variable
    assert repr(Variable) == "<class 'leafgrad.autograd.Variable'>"
