"""The op families minmax, statistics, binning and number_parts declared by ``_op.Op``: no
installer tables left, each op a torch function, a Tensor method exactly where torch has one,
its function's docstring opening with PyTorch's signature, and ``out=`` on the function exactly
where PyTorch's function takes it (never on the method), each against torch."""
import importlib

import pytest

from oracle import lg, torch

FAMILIES = ['minmax', 'statistics', 'binning', 'number_parts']


def _declared(family):
    from leafgrad.ops import _op
    return [cls for cls in _op.declared if cls.forward.__module__ == 'leafgrad.ops.' + family]


@pytest.mark.parametrize('family', FAMILIES)
def test_family_is_declared(family):
    module = importlib.import_module('leafgrad.ops.' + family)
    for table in ('FUNCTIONS', 'METHODS', 'NOT_METHODS', 'TOP_LEVEL'):
        assert not hasattr(module, table), (family, table)
    names = []
    for cls in _declared(family):
        for n in (cls.op,) + tuple(cls.aliases):
            names.append(n)
            if cls.inplace and cls.inplace_function:  # (leafgrad.gcd_, as torch.gcd_)
                names.append(n + '_')
    assert sorted(module.__all__) == sorted(names)


@pytest.mark.parametrize('family', FAMILIES)
def test_names_kinds_and_docstrings_as_torch(family):
    module = importlib.import_module('leafgrad.ops.' + family)
    for cls in _declared(family):
        for n in (cls.op,) + tuple(cls.aliases):
            assert hasattr(torch, n) and getattr(lg, n) is getattr(module, n), n
            assert hasattr(lg.Tensor, n) == hasattr(torch.Tensor, n), n
            assert hasattr(lg.Tensor, n + '_') == hasattr(torch.Tensor, n + '_'), n
            assert hasattr(lg, n + '_') == hasattr(torch, n + '_'), n
            first = getattr(lg, n).__doc__.splitlines()[0]
            assert first.startswith(cls.op + '('), n


def _takes_out(fn, *args):
    """Whether ``fn(*args, out=None)`` is accepted (the call without out= is)."""
    fn(*args)
    try:
        fn(*args, out=None)
    except TypeError:
        return False
    return True


# one call of each op with arguments it accepts
CALLS = {
    'max': ['x'], 'min': ['x', 0], 'amax': ['x'], 'amin': ['x'], 'aminmax': ['x'], 'argmax': ['x'], 'argmin': ['x'],
    'median': ['x', 0], 'kthvalue': ['x', 1], 'mode': ['x'], 'sort': ['x'], 'msort': ['x'], 'topk': ['x', 1],
    'cummax': ['x', 0], 'cummin': ['x', 0], 'unique': ['x'], 'quantile': ['x', 0.5], 'nanquantile': ['x', 0.5],
    'nanmedian': ['x', 0], 'cov': ['x'], 'corrcoef': ['x'], 'diff': ['x'], 'trapezoid': ['x'], 'trapz': ['x'],
    'cumulative_trapezoid': ['x'], 'dist': ['x', 'x'], 'renorm': ['x', 2, 0, 1.0], 'bincount': ['i'],
    'histc': ['x'], 'histogram': ['x', 3], 'searchsorted': ['s', 'x'], 'bucketize': ['x', 's'], 'isin': ['x', 'x'],
    'unravel_index': ['i', (4,)], 'gcd': ['i', 'i'], 'lcm': ['i', 'i'], 'heaviside': ['x', 'x'], 'signbit': ['x'],
    'frexp': ['x'], 'ldexp': ['x', 'i'], 'logaddexp2': ['x', 'x'],
}


@pytest.mark.parametrize('name', sorted(CALLS))
def test_out_where_torch_takes_it(name):
    """out=None is accepted by the function exactly where torch's function accepts it, and by no
    method (Tensor.max, min, nanmedian and quantile took it)."""
    got = []
    for T in (lg, torch):
        made = {'x': T.tensor([[1.0, 2.0], [0.5, 3.0]]), 'i': T.tensor([1, 2]), 's': T.tensor([0.5, 1.5])}
        args = [made.get(a, a) if isinstance(a, str) else a for a in CALLS[name]]
        method = getattr(args[0], name, None) if isinstance(args[0], T.Tensor) else None
        got.append((_takes_out(getattr(T, name), *args),
                    method is not None and _takes_out(method, *args[1:])))
    assert got[0] == got[1]
