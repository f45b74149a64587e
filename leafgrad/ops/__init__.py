"""The op library, one family per module.

An op is declared once, as a class (``_op.Op``): its class statement binds its function in
the family module (listed in the module's ``__all__``), its method, operators and in-place
variant on ``Tensor``, and its forward in the late-bound namespace ``_util.ops``. Importing a
family runs its declarations; this file imports the families and exports each one's
``__all__`` as ``leafgrad.<name>``. Adding a family means adding its module to ``FAMILIES``.

The families in ``_deferred.DEFERRED`` (all but those that making, shaping, indexing and
adding tensors needs) are imported on first use instead: what they bind (their functions,
Tensor methods and operators, names in ``ops``, listed there) stands in place from the start,
and the first read of any of it imports the family, which binds the real ones. Declaring and
binding their ~280 ops was half of ``import leafgrad``. tools/deferred_ops.py writes the lists
from the families.
"""
import importlib
import sys

from ..tensor import Tensor
from ._deferred import DEFERRED
from ._util import deferred as _deferred_ops, load_deferred as _load_deferred

FAMILIES = ['elementwise', 'unary', 'pointwise', 'rounding', 'logical', 'activation', 'reduction', 'minmax',
            'shape', 'rearrange', 'indexing', 'scatter', 'linalg', 'linalg_decomp', 'linalg_extra',
            'inplace', 'sampling', 'conversion', 'special_functions', 'random_variates', 'complex_numbers',
            'binning', 'linalg_products', 'statistics', 'linalg_solvers', 'number_parts', 'flat_index',
            'linalg_eig', 'storage', 'copies']

__all__ = []
deferred_names = {}  # leafgrad.<name> of a deferred family -> the family
for _family in FAMILIES:
    if _family in DEFERRED:
        _names = DEFERRED[_family][0]
        deferred_names.update(dict.fromkeys(_names, _family))
        __all__.extend(_names)
        continue
    _module = importlib.import_module(f'.{_family}', __name__)
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)


def load(family=None):
    """Import the deferred ``family`` (None: every one) and bind its functions
    as ``leafgrad.ops.<name>`` and ``leafgrad.<name>``, where ``from .ops import *`` put the
    others (a name leafgrad defines itself stays its own)."""
    top = sys.modules[__name__.rpartition('.')[0]].__dict__
    for family in DEFERRED if family is None else (family,):
        module = sys.modules.get(f'{__name__}.{family}')
        if module is None:
            # a Tensor attribute the program replaced before the family came stays the program's
            replaced = {name: vars(Tensor)[name] for name in DEFERRED[family][1]
                        if name in vars(Tensor) and not isinstance(vars(Tensor)[name], _Deferred)}
            module = importlib.import_module(f'.{family}', __name__)
            for name, value in replaced.items():
                setattr(Tensor, name, value)
        if family not in _bound:  # (once: what replaces them later, a transform's wrapper, stays)
            _bound.add(family)
            for name in module.__all__:  # (in place of the module where they share a name: scatter)
                value = globals()[name] = getattr(module, name)
                top.setdefault(name, value)


_bound = set()  # the deferred families whose functions load() has bound


class _Deferred:
    """``Tensor.<name>`` of a deferred family until it is imported: the first read imports it,
    which binds the real attribute in this one's place, and reads that."""
    __slots__ = ('family', 'name')

    def __init__(self, family, name):
        self.family, self.name = family, name

    def __get__(self, instance, owner=None):
        load(self.family)
        if isinstance(vars(Tensor).get(self.name), _Deferred):  # (the family binds it no more: _deferred.py is stale)
            raise AttributeError(f"type object 'Tensor' has no attribute '{self.name}'")
        return getattr(owner if instance is None else instance, self.name)


for _family, (_names, _methods, _forwards) in DEFERRED.items():
    for _name in _methods:
        setattr(Tensor, _name, _Deferred(_family, _name))
    _deferred_ops.update(dict.fromkeys(_forwards, _family))
_load_deferred[0] = load


def __getattr__(name):
    family = deferred_names.get(name)
    if family is not None:  # a function of a deferred family, read before the family is imported
        load(family)
        return globals()[name]
    # torch.ops.<namespace>: PyTorch's operator namespaces, where programs reach one directly
    if name == 'profiler':
        from ..autograd.profiler import OPS_NAMESPACE  # (loaded when first used)
        return OPS_NAMESPACE
    if not name.startswith('__'):  # a family or helper module not imported yet (leafgrad.ops.unary)
        try:
            return importlib.import_module(f'{__name__}.{name}')
        except ModuleNotFoundError as e:
            if e.name != f'{__name__}.{name}':
                raise  # an existing module failed to import something: that is its error
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) - {'__dir__'} | set(deferred_names) | set(DEFERRED))
