"""PyTorch's SymInt-aware utilities (``torch.sym_int``, ``torch.sym_max`` ...), which its
symbolic shapes overload: leafgrad has none, so they act on plain numbers, as PyTorch's do on
them (shape code written for ``torch.compile`` calls them in eager programs too)."""
import builtins
import math

import numpy

__all__ = ['sym_float', 'sym_int', 'sym_max', 'sym_min', 'sym_not', 'sym_ite', 'sym_sum', 'sym_sqrt',
           'sym_fresh_size']

_NUMBERS = (numpy.integer, numpy.floating, builtins.int, builtins.float)
_FLOATS = (numpy.floating, builtins.float)


def sym_float(a):
    return builtins.float(a)


def sym_int(a):
    return builtins.int(a)


def _checked(a, b):
    for x in (a, b):
        if not isinstance(x, _NUMBERS):
            raise AssertionError(f'expected {_NUMBERS}, got {type(x)}')
    return isinstance(a, _FLOATS) or isinstance(b, _FLOATS)


def sym_max(a, b):
    """max of two numbers, a float if either is (max(1, 1.0) and max(1.0, 1) are both 1.0)."""
    return builtins.float(builtins.max(a, b)) if _checked(a, b) else builtins.max(a, b)


def sym_min(a, b):
    return builtins.float(builtins.min(a, b)) if _checked(a, b) else builtins.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    """``t if b else f``."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f'expected SymBool or bool, got {type(b)}')
    if type(t) is not type(f):
        raise AssertionError(f'type mismatch: {type(t)} vs {type(f)}')
    return t if b else f


def sym_sum(*args):
    """The sum of the numbers, given as arguments or as one list or tuple."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_sqrt(a):
    return math.sqrt(a)


def sym_fresh_size(expr):
    return numpy.asarray(expr).item()  # (a Python number, as PyTorch's tensor(expr).item())
