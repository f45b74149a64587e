"""``leafgrad.version``: what PyTorch programs read from ``torch.version``.

``__version__`` is ``leafgrad.__version__``: the PyTorch version whose API leafgrad follows, with
leafgrad's own version as its local label (``2.13.0+leafgrad.0.1.0``), a ``TorchVersion`` that
compares as a version (``>= '2.0'``, ``>= (2, 1)``); ``cuda`` is the CUDA runtime that CuPy (leafgrad's
``device='cuda'`` backend) was built with, ``None`` without CuPy, as a CPU-only PyTorch says;
``hip`` is ``None`` (no ROCm backend) and ``debug`` is ``False``.
"""
from . import backend
from .torch_version import __version__

__all__ = ['__version__', 'cuda', 'debug', 'hip']

debug = False
hip = None


def _cuda_version():
    if backend._cupy is None:
        return None
    try:
        v = backend._cupy.cuda.runtime.runtimeGetVersion()
    except Exception:  # a CuPy whose CUDA runtime cannot be loaded
        return None
    return f'{v // 1000}.{v % 1000 // 10}'


cuda = _cuda_version()
