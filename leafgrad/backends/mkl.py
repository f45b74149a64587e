"""``leafgrad.backends.mkl``: whether leafgrad's linear algebra runs on Intel MKL, that is,
whether the BLAS NumPy was built with is MKL (threadpoolctl reports it)."""
from . import numpy_blas_info


def is_available():
    return numpy_blas_info().get('internal_api') == 'mkl'
