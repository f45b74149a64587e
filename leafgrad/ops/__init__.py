"""The op library, one family per module.

Each family module lists its public functions in ``FUNCTIONS`` (exported as
``leafgrad.<name>``) and the ones that are also ``Tensor`` methods or operators in ``METHODS``
(name -> function; a function listed in FUNCTIONS whose first argument is the tensor becomes a
method of the same name unless METHODS says otherwise, or ``NOT_METHODS`` lists it; ``TOP_LEVEL``
maps a ``leafgrad.<name>`` to a function whose module name differs, where torch.<name> and
torch.linalg.<name> are different functions). This file
installs them all; adding a family means adding its module to ``FAMILIES``.
"""
import importlib

from ..tensor import Tensor

FAMILIES = ['elementwise', 'unary', 'pointwise', 'rounding', 'logical', 'activation', 'reduction', 'minmax',
            'shape', 'rearrange', 'indexing', 'scatter', 'linalg', 'linalg_decomp', 'linalg_extra',
            'inplace', 'sampling', 'conversion', 'operators', 'special_functions', 'random_variates', 'complex_numbers',
            'binning', 'linalg_products', 'statistics', 'linalg_solvers', 'number_parts', 'flat_index']

__all__ = []
for _family in FAMILIES:
    _module = importlib.import_module(f'.{_family}', __name__)
    _not_methods = set(getattr(_module, 'NOT_METHODS', ()))
    for _name in getattr(_module, 'FUNCTIONS', ()):
        _fn = getattr(_module, _name)
        globals()[_name] = _fn
        __all__.append(_name)
        if _name not in _not_methods:
            setattr(Tensor, _name, _fn)
    for _name, _fn in getattr(_module, 'TOP_LEVEL', {}).items():
        globals()[_name] = _fn
        __all__.append(_name)
    for _name, _fn in getattr(_module, 'METHODS', {}).items():
        setattr(Tensor, _name, _fn)
