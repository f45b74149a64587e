"""``leafgrad.backends.openmp``: whether leafgrad's parallel kernels use OpenMP, that is,
whether NumPy's BLAS threads through OpenMP (threadpoolctl reports it; PyTorch asks its build)."""
from . import numpy_blas_info


def is_available():
    return numpy_blas_info().get('threading_layer') == 'openmp'
