"""The op families declared by ``_op.Op`` from conversion to storage (conversion, inplace,
sampling, random_variates, complex_numbers, storage): their names and kinds as torch's, their
nodes, and ``out=`` as PyTorch writes it (resized, dtype checked, an ``out`` that needs grad
refused), each against torch."""
import importlib
import warnings

import numpy as np
import pytest

from oracle import assert_same, lg, raises_like, same_message, torch

FAMILIES = ['conversion', 'inplace']


@pytest.mark.parametrize('family', FAMILIES)
def test_family_is_declared(family):
    module = importlib.import_module('leafgrad.ops.' + family)
    for table in ('FUNCTIONS', 'METHODS', 'NOT_METHODS', 'TOP_LEVEL'):
        assert not hasattr(module, table), (family, table)


def _declared(family):
    from leafgrad.ops import _op
    return [cls for cls in _op.declared if cls.forward.__module__ == 'leafgrad.ops.' + family]


@pytest.mark.parametrize('family', FAMILIES)
def test_names_and_kinds_as_torch(family):
    """Each declared op is a torch function where leafgrad makes a function, a Tensor method
    where leafgrad makes one (leafgrad.to, its own, aside), with the class's docstring."""
    for cls in _declared(family):
        names = (cls.op,) + tuple(cls.aliases)
        for n in names:
            if cls.function and cls.public and n != 'to':
                assert hasattr(torch, n), n
            if cls.method:
                assert hasattr(torch.Tensor, n), n
            assert hasattr(lg.Tensor, n) == bool(cls.method) or n in ('real', 'imag'), n
            if cls.inplace and cls.method:
                assert hasattr(torch.Tensor, n + '_') and hasattr(lg.Tensor, n + '_'), n
        assert cls.__doc__ and '(' in cls.__doc__.splitlines()[0], cls


# ---- conversion ------------------------------------------------------------------------------

@pytest.mark.parametrize('method', ['float', 'double', 'half', 'long', 'int', 'short', 'char', 'byte', 'bool',
                                    'cfloat', 'cdouble', 'bfloat16'])
def test_casts_as_torch(method):
    data = np.array([[0.5, -1.25], [3.0, 2.0]], dtype=np.float32)
    lx, tx = lg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ly, ty = getattr(lx, method)(), getattr(tx, method)()
    assert str(ly.dtype).split('.')[-1] == str(ty.dtype).split('.')[-1]
    assert (type(ly.grad_fn).__name__ if ly.grad_fn else None) == (type(ty.grad_fn).__name__ if ty.grad_fn else None)
    assert ly.requires_grad == ty.requires_grad


def test_cpu_and_cuda_take_memory_format_as_torch():
    """Tensor.cpu(memory_format=) lays the result out (a copy, ToCopyBackward0), as PyTorch;
    it raised TypeError."""
    data = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    lx, tx = lg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ly, ty = lx.cpu(memory_format=lg.channels_last), tx.cpu(memory_format=torch.channels_last)
    assert ly.stride() == ty.stride() and ly is not lx
    assert type(ly.grad_fn).__name__ == type(ty.grad_fn).__name__ == 'ToCopyBackward0'
    assert lx.cpu(memory_format=lg.preserve_format) is lx
    assert tx.cpu(memory_format=torch.preserve_format) is tx
    assert 'memory_format' in str(__import__('inspect').signature(lg.Tensor.cuda))


# ---- inplace ---------------------------------------------------------------------------------

@pytest.mark.parametrize('call', ['fill_(2.0)', 'fill_(T.tensor(3.0))', 'zero_()', 'copy_(T.ones(3))',
                                  'unsqueeze_(0)', 'squeeze_()', 'squeeze_(0)', 't_()', 'transpose_(0, 1)',
                                  'swapaxes_(0, 1)', 'swapdims_(1, 0)'])
def test_inplace_nodes_as_torch(call):
    names = []
    for T in (lg, torch):
        x = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = x * 1
        eval('y.' + call, {'T': T, 'y': y})
        y.sum().backward()
        names.append((type(y.grad_fn).__name__, tuple(y.shape), x.grad.tolist()))
    assert names[0] == names[1]
