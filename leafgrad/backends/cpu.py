"""``leafgrad.backends.cpu``: the vector instructions the CPU offers NumPy's kernels."""
from numpy._core._multiarray_umath import __cpu_features__ as _has

__all__ = ['get_cpu_capability']


def get_cpu_capability():
    """'AVX512', 'AVX2' or 'DEFAULT', PyTorch's names for x86 vector levels (from NumPy's CPU features).

    PyTorch's 'AVX512' needs AVX512 F, BW, VL and DQ; 'AVX2' needs AVX2 and FMA3. Other
    processors answer 'DEFAULT'.
    """
    if all(_has.get(f) for f in ('AVX512F', 'AVX512BW', 'AVX512VL', 'AVX512DQ')):
        return 'AVX512'
    if _has.get('AVX2') and _has.get('FMA3'):
        return 'AVX2'
    return 'DEFAULT'
