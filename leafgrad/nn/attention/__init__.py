"""``leafgrad.nn.attention``: which kernels ``scaled_dot_product_attention`` may use.

PyTorch's CPU build has two, and so has leafgrad: ``SDPBackend.FLASH_ATTENTION`` (its CPU flash
kernel: one node, ScaledDotProductFlashAttentionForCpuBackward0, where that kernel's conditions
hold) and ``SDPBackend.MATH`` (the attention composed of ops). ``sdpa_kernel`` switches the
others on and off too (``leafgrad.backends.cuda`` reads them back), and, alone, they leave no
kernel: PyTorch's error. The flash-attention implementations (FA3, FA4) are CUDA libraries:
they are listed, and activating one fails to import it, as on a machine without them.
"""
import contextlib
import enum
import importlib
import logging

__all__ = ['SDPBackend', 'sdpa_kernel', 'WARN_FOR_UNFUSED_KERNELS', 'register_flash_attention_impl',
           'activate_flash_attention_impl', 'list_flash_attention_impls', 'current_flash_attention_impl',
           'restore_flash_attention_impl']

# PyTorch warns why its fused kernels were not used when this is True (it never uses them on the
# CPU but for flash, whose refusal it explains when the math kernel is off)
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The kernels of scaled_dot_product_attention (PyTorch's enum: its members convert to int)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__

    def __hash__(self):
        return hash(self.value)


# each backend's switch in leafgrad.backends.cuda.sdp_enabled
_SWITCHES = {'cudnn': SDPBackend.CUDNN_ATTENTION, 'flash': SDPBackend.FLASH_ATTENTION,
             'mem_efficient': SDPBackend.EFFICIENT_ATTENTION, 'math': SDPBackend.MATH,
             'overrideable': SDPBackend.OVERRIDEABLE}


def _current_backends(with_priority=False):
    from ...backends import cuda  # (loaded when first used)
    backends = [backend for name, backend in _SWITCHES.items() if cuda.sdp_enabled[name]]
    if with_priority:
        backends.sort(key=lambda backend: cuda.sdp_priority.index(int(backend)))
    return backends


def _switch_to(backends, set_priority):
    from ...backends import cuda  # (loaded when first used)
    for name, backend in _SWITCHES.items():
        cuda.sdp_enabled[name] = backend in backends
    if set_priority:
        order = [int(backend) for backend in backends]
        cuda.sdp_priority[:] = order + [b for b in cuda.sdp_priority if b not in order]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only ``backends`` (one SDPBackend or
    a list; with ``set_priority``, their order is their priority). The previous switches come back
    on leaving."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError('Backend must be an instance of SDPBackend or a list of SDPBackend instances, got '
                             f'{type(backends).__name__}')
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _current_backends(with_priority=set_priority)
    try:
        _switch_to(backends, set_priority)
        yield {}
    finally:
        _switch_to(previous, set_priority)


# ---- flash-attention implementations (CUDA libraries) ------------------------------------------

_log = logging.getLogger('torch.nn.attention._registry')


def _import_module(name):
    def register():
        importlib.import_module(name)  # (a CUDA library: not on a machine without it)
    return register


_implementations = {'FA3': _import_module('flash_attn_interface'), 'FA4': _import_module('flash_attn.cute')}
_active = [None]


def register_flash_attention_impl(impl, *, register_fn):
    """Make ``impl`` a flash-attention implementation that ``activate_flash_attention_impl``
    activates by calling ``register_fn()``."""
    _implementations[impl] = register_fn


def list_flash_attention_impls():
    return list(_implementations)


def current_flash_attention_impl():
    return _active[0]


def activate_flash_attention_impl(impl):
    if impl not in _implementations:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f'{list_flash_attention_impls()}')
    _implementations[impl]()
    _active[0] = impl


def restore_flash_attention_impl(_raise_warn=True):
    if _active[0] is None:
        if _raise_warn:
            _log.warning('Trying to restore default FA2 impl when no custom impl was activated')
        return
    _active[0] = None
