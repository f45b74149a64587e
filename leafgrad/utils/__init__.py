"""``leafgrad.utils``: subpackages load on first use (``leafgrad.utils.checkpoint``,
``leafgrad.utils.data``), so that importing one does not import the others."""
import importlib

_SUBMODULES = ('benchmark', 'checkpoint', 'data', 'deterministic', 'dlpack', 'hooks')


def __getattr__(name):
    if name == 'swap_tensors':
        from ._swap import swap_tensors  # (loaded when first used, like the subpackages)
        return swap_tensors
    if name in _SUBMODULES:
        return importlib.import_module(f'.{name}', __name__)
    raise AttributeError(f"module 'leafgrad.utils' has no attribute '{name}'")
