"""Process-wide settings that PyTorch programs make in their first lines, as PyTorch takes them.

- threads: ``set_num_threads`` sizes the BLAS thread pool that NumPy's matrix products (and
  so leafgrad's) run on, through threadpoolctl; ``get_num_threads`` reads it back. leafgrad runs
  no inter-op pool: ``set_num_interop_threads`` is checked and recorded as PyTorch checks it
  (once only), and ``get_num_interop_threads`` reads it back.
- ``set_default_device``: where factories (``zeros``, ``tensor``, ``randn`` …) put new tensors
  when no ``device=`` is given.
- ``set_float32_matmul_precision``: recorded and read back, and shared with
  ``backends.cuda.matmul.allow_tf32`` as in PyTorch; leafgrad always multiplies float32 in
  float32 (PyTorch's 'highest'), on the CPU as on CuPy.
- ``use_deterministic_algorithms``: leafgrad's ops are deterministic; as in PyTorch the mode
  fills what ``empty`` returns (NaN, or an integer type's largest value) while
  ``leafgrad.utils.deterministic.fill_uninitialized_memory`` is on, and ``max_unpool`` (which
  has no deterministic implementation in PyTorch) raises or, with ``warn_only``, warns.
- ``set_warn_always``: PyTorch's warnings given once a process (``TORCH_WARN_ONCE``) are given
  every time while it is on; ``is_warn_always_enabled`` reads it back.
- ``set_flush_denormal``: NumPy gives no control over the CPU's flush-to-zero mode, so it
  returns False ("not supported"), PyTorch's answer on a CPU that cannot flush denormals.
"""
import os
import warnings

from . import backend

_interop_threads = None             # set once by set_num_interop_threads
_matmul_precision = 'highest'        # also backends.cuda.matmul.allow_tf32 (True for 'high' and 'medium')
_deterministic = False
_deterministic_warn_only = False
_fill_uninitialized_memory = True   # leafgrad.utils.deterministic.fill_uninitialized_memory
warn_always = False                 # set_warn_always: warnings given once are given every time

# ---- threads -------------------------------------------------------------------------------

_blas_pools = None


def _blas():
    """threadpoolctl's handle on NumPy's BLAS (every BLAS loaded, if NumPy's cannot be told apart)."""
    global _blas_pools
    if _blas_pools is None:
        from threadpoolctl import ThreadpoolController  # (optional; loaded when first used)
        pools = ThreadpoolController().select(user_api='blas')
        numpy_dir = os.path.dirname(os.path.dirname(backend.numpy.__file__))
        own = [c for c in pools.lib_controllers if os.path.realpath(c.filepath).startswith(numpy_dir)]
        _blas_pools = own or pools.lib_controllers
    return _blas_pools


def _check_int(name, value):
    if type(value) is not int:
        raise RuntimeError(f'{name} expects an int, but got {type(value).__name__}')
    if value <= 0:
        raise RuntimeError(f'{name} expects a positive integer')


def get_num_threads():
    """The number of threads leafgrad's CPU matrix products use (NumPy's BLAS pool)."""
    pools = _blas()
    return pools[0].num_threads if pools else 1


def set_num_threads(n, /):
    """Size NumPy's BLAS thread pool, where leafgrad's CPU matrix products run."""
    _check_int('set_num_threads', n)
    for pool in _blas():
        pool.set_num_threads(n)


def get_num_interop_threads():
    """The inter-op thread count PyTorch would use; leafgrad runs ops one after another."""
    return _interop_threads if _interop_threads is not None else get_num_threads()


def set_num_interop_threads(n, /):
    """Recorded (once, as PyTorch allows it once): leafgrad has no inter-op thread pool."""
    global _interop_threads
    _check_int('set_num_interop_threads', n)
    if _interop_threads is not None:
        raise RuntimeError('Error: cannot set number of interop threads after parallel work has started or '
                           'set_num_interop_threads called')
    _interop_threads = n


# ---- the default device ----------------------------------------------------------------------

def set_default_device(device):
    """Put tensors made by factories without ``device=`` on ``device`` (None: the CPU again)."""
    if device is None:
        backend._default_device = None
        return
    if isinstance(device, int) and not isinstance(device, bool):
        if not backend.cuda_available():  # (leafgrad.cuda.is_available(), which is above the settings)
            raise RuntimeError('Cannot access accelerator device when none is available.')
        device = f'cuda:{device}'
    backend._default_device = backend.device(device)


def get_default_device():
    """Where factories put new tensors: ``device(type='cpu')`` unless ``set_default_device`` said otherwise."""
    d = backend._default_device
    if d is None:
        return backend.device('cpu')
    if d.type == 'cuda' and d.index is None:
        return backend.device('cuda', backend.module_for('cuda').cuda.Device().id)  # (cuda.current_device())
    return d


# ---- float32 matrix products ----------------------------------------------------------------

def set_float32_matmul_precision(precision):
    """Record 'highest', 'high' or 'medium' (leafgrad computes float32 products at 'highest' always)."""
    global _matmul_precision
    if not isinstance(precision, str):
        raise RuntimeError(f'set_float32_matmul_precision expects a str, but got {type(precision).__name__}')
    if precision not in ('highest', 'high', 'medium'):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      'setFloat32MatmulPrecision call has no effect.', UserWarning, stacklevel=2)
        return
    _matmul_precision = precision


def get_float32_matmul_precision():
    return _matmul_precision


# ---- determinism -----------------------------------------------------------------------------

def use_deterministic_algorithms(mode, *, warn_only=False):
    """Require deterministic algorithms (see the module's docstring for what changes in leafgrad)."""
    for name, value in (('mode', mode), ('warn_only', warn_only)):
        if type(value) is not bool:
            where = "'mode' (position 1)" if name == 'mode' else "'warn_only'"
            raise TypeError(f'_set_deterministic_algorithms(): argument {where} must be bool, not '
                            f'{type(value).__name__}')
    _set_deterministic(mode, warn_only)


def _set_deterministic(mode, warn_only):
    global _deterministic, _deterministic_warn_only
    _deterministic, _deterministic_warn_only = mode, warn_only
    _sync_fill()


def _sync_fill():
    backend.fill_uninitialized = _deterministic and _fill_uninitialized_memory


def are_deterministic_algorithms_enabled():
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic_warn_only


def set_deterministic_debug_mode(debug_mode):
    """0 or 'default': off; 1 or 'warn': deterministic, warn only; 2 or 'error': deterministic."""
    if isinstance(debug_mode, str):
        modes = {'default': 0, 'warn': 1, 'error': 2}
        if debug_mode not in modes:
            raise RuntimeError('invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got '
                               f'{debug_mode}')
        debug_mode = modes[debug_mode]
    elif isinstance(debug_mode, int):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f'invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}')
    else:
        raise TypeError(f'debug_mode must be str or int, but got {type(debug_mode)}')
    _set_deterministic(debug_mode != 0, debug_mode == 1)


def get_deterministic_debug_mode():
    return 0 if not _deterministic else 1 if _deterministic_warn_only else 2


def alert_not_deterministic(caller):
    """Raise (or warn, with ``warn_only``) where PyTorch has no deterministic implementation."""
    if not _deterministic:
        return
    if _deterministic_warn_only:
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'leafgrad.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
                      'https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support '
                      'for this operation.', UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'leafgrad.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
                       "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
                       'application. You can also file an issue at https://github.com/pytorch/pytorch/issues to help '
                       'us prioritize adding deterministic support for this operation.')


# ---- denormals -------------------------------------------------------------------------------

def set_flush_denormal(mode, /):
    """False: leafgrad cannot switch the CPU to flush denormal numbers to zero (see the module docstring)."""
    if type(mode) is not bool:
        raise RuntimeError(f'flush_denormal expects a bool, but got {type(mode).__name__}')
    return False


def set_warn_always(b, /):
    """Give the warnings that PyTorch gives once a process every time (True), or once (False)."""
    if type(b) is not bool:
        raise RuntimeError(f'setWarnOnlyOnce expects a bool, but got {type(b).__name__}')
    global warn_always
    warn_always = b


def is_warn_always_enabled():
    return warn_always
