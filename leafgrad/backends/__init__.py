"""``leafgrad.backends``: the switches PyTorch programs set for PyTorch's kernel libraries
(``torch.backends.cudnn.benchmark = True`` and kin), each submodule loaded on first use.

leafgrad computes with NumPy on the CPU (CuPy for ``device='cuda'``) and uses none of cuDNN,
oneDNN (mkldnn), MPS or opt_einsum: their ``is_available()`` says False, as a PyTorch build
without them says. Their settable flags are checked as PyTorch checks them (a bool, or
PyTorch's RuntimeError), stored and read back, and, like on a CPU-only PyTorch, change nothing
leafgrad computes: ``cudnn.benchmark``, ``cudnn.deterministic``, ``cudnn.allow_tf32``,
``mkldnn.enabled``, ``cuda.matmul.allow_tf32`` (which is
``leafgrad.get_float32_matmul_precision() != 'highest'``: leafgrad always multiplies float32 in
float32) and the reduced-precision reductions. Two do act: ``cuda.enable_math_sdp`` with
``cuda.enable_flash_sdp`` (which of its CPU kernels ``scaled_dot_product_attention`` uses, as on
PyTorch's CPU build), and what ``cpu.get_cpu_capability()``, ``mkl.is_available()`` and
``openmp.is_available()`` report, which describes the NumPy leafgrad runs on.
"""
import importlib

from .. import _settings

_SUBMODULES = ('cpu', 'cuda', 'cudnn', 'mha', 'mkl', 'mkldnn', 'mps', 'openmp', 'opt_einsum')


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f'.{name}', __name__)
    raise AttributeError(f"module 'leafgrad.backends' has no attribute '{name}'")


def bool_flag(values, key, setter_name):
    """A module property for ``values[key]`` that takes only a bool, as PyTorch's setters do."""
    def get(module):
        return values[key]

    def set_(module, value):
        check_bool(setter_name, value)
        values[key] = value
    return property(get, set_)


def check_bool(setter_name, value):
    if type(value) is not bool:
        raise RuntimeError(f'{setter_name} expects a bool, but got {type(value).__name__}')


def numpy_blas_info():
    """threadpoolctl's description of the BLAS that NumPy (so leafgrad) multiplies with, or {}."""
    pools = _settings._blas()
    return pools[0].info() if pools else {}
