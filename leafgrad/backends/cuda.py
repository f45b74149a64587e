"""``leafgrad.backends.cuda``: the cuBLAS and attention switches PyTorch programs set.

``matmul.allow_tf32`` is ``leafgrad.get_float32_matmul_precision() != 'highest'`` and setting it
sets that precision ('high' or 'highest'), as in PyTorch; leafgrad multiplies float32 in float32
whatever it says (NumPy and CuPy's default GEMMs). The reduced-precision reduction switches are
stored and read back. The attention switches choose among PyTorch's kernels for
``scaled_dot_product_attention``: as on PyTorch's CPU build, its flash kernel where that kernel's
conditions hold and it is on, else the math path (``nn.attention`` sets them for a block).
"""
import warnings
from contextlib import contextmanager

from . import check_bool
from .. import backend, _settings


def is_built():
    """Whether leafgrad can run on CUDA: CuPy is installed (a GPU may still be missing)."""
    return backend._cupy is not None


class cuBLASModule:
    """``leafgrad.backends.cuda.matmul``: cuBLAS's precision switches."""
    _reductions = {'allow_fp16_reduced_precision_reduction': [True, True],
                   'allow_bf16_reduced_precision_reduction': [True, True]}
    _fp16_accumulation = [False]

    def __getattr__(self, name):
        if name == 'allow_tf32':
            return _settings.get_float32_matmul_precision() != 'highest'
        if name in self._reductions:
            return self._reductions[name][0]
        if name.endswith('_split_k') and name[:-8] in self._reductions:
            return self._reductions[name[:-8]][1]
        if name == 'allow_fp16_accumulation':
            return self._fp16_accumulation[0]
        raise AttributeError('Unknown attribute ' + name)

    def __setattr__(self, name, value):
        if name == 'allow_tf32':
            check_bool('set_allow_tf32_cublas', value)
            _settings.set_float32_matmul_precision('high' if value else 'highest')
        elif name in self._reductions:
            self._reductions[name][:] = _reduction_setting(name, value)
        elif name == 'allow_fp16_accumulation':
            check_bool('set_allow_fp16_accumulation_cublas', value)
            self._fp16_accumulation[0] = value
        else:
            raise AttributeError('Unknown attribute ' + name)


def _reduction_setting(name, value):
    """(allow reduced precision, allow split-K) from a bool or a list/tuple of one or two bools."""
    if isinstance(value, bool):
        return value, True
    if not isinstance(value, (list, tuple)):
        raise TypeError(f'{name} expects a bool or a tuple/list of bools, but got {type(value)!r}')
    if not value:
        raise TypeError(f'{name} expects at least one boolean argument')
    if len(value) > 2:
        raise TypeError(f'{name} expects at most two boolean arguments')
    for v, which in zip(value, ('allow_reduced_precision', 'allow_splitk')):
        if not isinstance(v, bool):
            raise TypeError(f'{name} expects a bool for {which}, but got {type(v)!r}')
    allow, split_k = value[0], value[1] if len(value) == 2 else True
    if allow and not split_k:
        raise RuntimeError('allow_splitk=False is not supported when reduced precision reductions are enabled')
    return allow, split_k


matmul = cuBLASModule()

# ---- scaled_dot_product_attention's kernels ------------------------------------------------------

sdp_enabled = {'flash': True, 'mem_efficient': True, 'math': True, 'cudnn': True, 'overrideable': True}
# the kernels' priority (SDPBackend's values; nn.attention.sdpa_kernel(set_priority=True) sets it):
# PyTorch's CPU build tries flash, then math, whatever it says
sdp_priority = [1, 2, 0, 3, 4]


def _enable(kind, setter_name, enabled):
    check_bool(setter_name, enabled)
    sdp_enabled[kind] = enabled


def enable_flash_sdp(enabled):
    _enable('flash', 'set_sdp_use_flash', enabled)


def enable_mem_efficient_sdp(enabled):
    _enable('mem_efficient', 'set_sdp_use_mem_efficient', enabled)


def enable_math_sdp(enabled):
    _enable('math', 'set_sdp_use_math', enabled)


def enable_cudnn_sdp(enabled):
    _enable('cudnn', 'set_sdp_use_cudnn', enabled)


def flash_sdp_enabled():
    return sdp_enabled['flash']


def mem_efficient_sdp_enabled():
    return sdp_enabled['mem_efficient']


def math_sdp_enabled():
    return sdp_enabled['math']


def cudnn_sdp_enabled():
    return sdp_enabled['cudnn']


def check_sdp_kernel():
    """Raise PyTorch's CPU error when no kernel that leafgrad's attention stands for is enabled."""
    if not (sdp_enabled['math'] or sdp_enabled['flash']):
        raise RuntimeError('No viable backend for scaled_dot_product_attention was found. This is likely due to '
                           'turning off both the math kernel and the fused kernels.')


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated in PyTorch (use ``nn.attention.sdpa_kernel``): the attention kernels allowed in the block."""
    warnings.warn('`leafgrad.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be '
                  'removed. Please see `leafgrad.nn.attention.sdpa_kernel()` for the new context manager, with updated '
                  'signature.', FutureWarning, stacklevel=2)
    return _allowed_kernels(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                            cudnn=bool(enable_cudnn))


@contextmanager
def _allowed_kernels(**allowed):
    previous = dict(sdp_enabled)
    sdp_enabled.update(allowed)
    try:
        yield {}
    finally:
        sdp_enabled.update(previous)
