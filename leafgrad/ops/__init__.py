"""The op library, one family per module.

An op is declared once, as a class (``_op.Op``): its class statement binds its function in
the family module (listed in the module's ``__all__``), its method, operators and in-place
variant on ``Tensor``, and its forward in the late-bound namespace ``_util.ops``. This file
exports every family's ``__all__`` as ``leafgrad.<name>``.

Families not yet declared that way list their functions in ``FUNCTIONS`` (``leafgrad.<name>``
and, unless ``NOT_METHODS`` lists it, a method of the same name) and further methods in
``METHODS`` (name -> function); ``TOP_LEVEL`` maps a ``leafgrad.<name>`` to a function whose
module name differs, where torch.<name> and torch.linalg.<name> are different functions. This
file installs those. Adding a family means adding its module to ``FAMILIES``.
"""
import importlib

from ..tensor import Tensor
from ._util import ops as _ops

FAMILIES = ['elementwise', 'unary', 'pointwise', 'rounding', 'logical', 'activation', 'reduction', 'minmax',
            'shape', 'rearrange', 'indexing', 'scatter', 'linalg', 'linalg_decomp', 'linalg_extra',
            'inplace', 'sampling', 'conversion', 'special_functions', 'random_variates', 'complex_numbers',
            'binning', 'linalg_products', 'statistics', 'linalg_solvers', 'number_parts', 'flat_index',
            'linalg_eig', 'storage']

__all__ = []
for _family in FAMILIES:
    _module = importlib.import_module(f'.{_family}', __name__)
    for _name in getattr(_module, '__all__', ()):  # declared ops: bound by their declarations
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
    _not_methods = set(getattr(_module, 'NOT_METHODS', ()))
    for _name in getattr(_module, 'FUNCTIONS', ()):
        _fn = getattr(_module, _name)
        globals()[_name] = _fn
        __all__.append(_name)
        if not hasattr(_ops, _name):
            setattr(_ops, _name, _fn)
        if _name not in _not_methods:  # (a method takes no out=, as PyTorch's)
            setattr(Tensor, _name, getattr(_fn, 'without_out', _fn))
    for _name, _fn in getattr(_module, 'TOP_LEVEL', {}).items():
        globals()[_name] = _fn
        __all__.append(_name)
    for _name, _fn in getattr(_module, 'METHODS', {}).items():
        setattr(Tensor, _name, _fn)
        if not _name.startswith('__') and not hasattr(_ops, _name):
            setattr(_ops, _name, _fn)


def __getattr__(name):
    # torch.ops.<namespace>: PyTorch's operator namespaces, where programs reach one directly
    if name == 'profiler':
        from ..autograd.profiler import OPS_NAMESPACE
        return OPS_NAMESPACE
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
