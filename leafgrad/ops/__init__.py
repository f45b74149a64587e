"""The op library, one family per module.

An op is declared once, as a class (``_op.Op``): its class statement binds its function in
the family module (listed in the module's ``__all__``), its method, operators and in-place
variant on ``Tensor``, and its forward in the late-bound namespace ``_util.ops``. Importing a
family runs its declarations; this file imports every family and exports each one's
``__all__`` as ``leafgrad.<name>``. Adding a family means adding its module to ``FAMILIES``.
"""
import importlib

FAMILIES = ['elementwise', 'unary', 'pointwise', 'rounding', 'logical', 'activation', 'reduction', 'minmax',
            'shape', 'rearrange', 'indexing', 'scatter', 'linalg', 'linalg_decomp', 'linalg_extra',
            'inplace', 'sampling', 'conversion', 'special_functions', 'random_variates', 'complex_numbers',
            'binning', 'linalg_products', 'statistics', 'linalg_solvers', 'number_parts', 'flat_index',
            'linalg_eig', 'storage']

__all__ = []
for _family in FAMILIES:
    _module = importlib.import_module(f'.{_family}', __name__)
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)


def __getattr__(name):
    # torch.ops.<namespace>: PyTorch's operator namespaces, where programs reach one directly
    if name == 'profiler':
        from ..autograd.profiler import OPS_NAMESPACE  # (loaded when first used)
        return OPS_NAMESPACE
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
