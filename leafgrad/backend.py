"""The one place that knows which array library holds a tensor's data.

Everything else asks this module for the array module (`xp`), for dtypes and for type
promotion, so that a CuPy backend (``device='cuda'``) changes no op. Dtypes follow PyTorch:
``float32`` is the default for Python floats, ``int64`` for Python ints, and mixing a tensor
with a Python scalar keeps the tensor's dtype unless the scalar is of a higher category.
"""
import builtins
import re
import sys
import types
import warnings

import numpy as np

# NumPy reports a floating-point exception (1/0, inf - inf, an overflow) as a RuntimeWarning;
# PyTorch computes the same inf or nan silently. Silenced only where leafgrad's own modules call
# NumPy (the filter matches the calling module): the user's own NumPy code warns as before.
# The filter is kept first in warnings.filters whenever the filters change (a -W option, a
# catch_warnings block, pytest's filters for each test): a filter added once at import would be
# dropped when a catch_warnings block that was open at import time ends, and overridden by any
# filter added after it. Keeping it first costs nothing per op, unlike np.errstate around each.
_FP_FILTER = ('ignore', re.compile(r'(divide by zero|invalid value|overflow|underflow) encountered', re.I),
              RuntimeWarning, re.compile(r'leafgrad(\.|$)'), 0)


def _keep_fp_filter_first():
    filters = warnings.filters
    if not filters or filters[0] is not _FP_FILTER:
        while _FP_FILTER in filters:
            filters.remove(_FP_FILTER)
        filters.insert(0, _FP_FILTER)


def _hook_filter_changes():
    """Run _keep_fp_filter_first after every change of the warning filters: warnings.py calls
    its module-level notifier (_filters_mutated; _filters_mutated_lock_held from Python 3.14)
    from filterwarnings, simplefilter, resetwarnings and catch_warnings."""
    for name in ('_filters_mutated_lock_held', '_filters_mutated'):
        notify = getattr(warnings, name, None)
        if notify is not None:
            break
    else:
        return
    if getattr(notify, '_keeps_leafgrad_filter', False):
        return

    def filters_mutated(*args, **kwargs):
        _keep_fp_filter_first()
        return notify(*args, **kwargs)
    filters_mutated._keeps_leafgrad_filter = True
    setattr(warnings, name, filters_mutated)


_hook_filter_changes()
warnings.filterwarnings(*_FP_FILTER[:1], _FP_FILTER[1].pattern, RuntimeWarning, _FP_FILTER[3].pattern)

try:  # CuPy is optional: only needed for device='cuda'.
    import cupy as _cupy  # (optional)
except Exception:  # ImportError, or a CuPy without a usable CUDA driver
    _cupy = None

numpy = np


# Every op's result is a new NumPy array, and glibc's malloc returns freed memory to the kernel
# once more than 128 KiB lies free at the top of the heap (the threshold grows only up to twice
# the largest array freed): a step's mid-size temporaries are then unmapped and faulted in
# again, page by page, on every call (a chain of four products of 64K-element float64 arrays:
# 480 page faults a call, 5-10x the arithmetic's time). At import, on glibc, leafgrad keeps up
# to 128 MiB freed for reuse and serves arrays below 32 MiB from the heap; memory is still
# returned beyond that. LEAFGRAD_KEEP_FREED_MEMORY=0, or glibc's own MALLOC_* / GLIBC_TUNABLES
# malloc settings, leave glibc's defaults as they are.
_MMAP_THRESHOLD, _TRIM_THRESHOLD = 32 << 20, 128 << 20
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # (mallopt's parameters, from glibc's malloc.h)


def _keep_freed_memory():
    """Set glibc malloc's thresholds as described above; True if they were set."""
    import os
    env = os.environ
    if (env.get('LEAFGRAD_KEEP_FREED_MEMORY', '1') == '0' or not sys.platform.startswith('linux')
            or 'MALLOC_TRIM_THRESHOLD_' in env or 'MALLOC_MMAP_THRESHOLD_' in env
            or 'glibc.malloc' in env.get('GLIBC_TUNABLES', '')):
        return False
    import ctypes  # (NumPy has imported it already)
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # (glibc's: another C library's mallopt means something else)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


keeps_freed_memory = _keep_freed_memory()

from ._meta import META_MODULE, MetaArray  # noqa: E402  (the 'meta' device: shapes without data)


class dtype:
    """A tensor element type, printed as PyTorch prints it (with leafgrad's name)."""
    __module__ = 'leafgrad'  # the public name, as type() prints it: <class 'leafgrad.dtype'>
    __slots__ = ('name', 'np', 'is_floating_point', 'is_complex', 'is_signed', 'itemsize', 'category')

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category  # 0 bool, 1 integer, 2 floating, 3 complex: orders promotion
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = self.np.kind in 'ifVc'  # 'V': ml_dtypes' bfloat16 is a NumPy 'void'-kind dtype
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return 'leafgrad.' + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        """The real dtype of a complex one's parts (complex64 -> float32); other dtypes themselves."""
        return _BY_NP[self.np.type(0).real.dtype] if self.category == 3 else self

    def to_complex(self):
        """The complex dtype whose parts are this float dtype (float32 -> complex64)."""
        if self.category == 3:
            return self
        if self.np.kind == 'f' and self.itemsize >= 4:
            return _BY_NP[np.result_type(self.np, np.complex64)]
        if self.np.kind == 'V':  # (bfloat16: PyTorch's complex dtype for it is complex64, there being no other)
            return complex64
        raise TypeError(f'leafgrad has no complex dtype of {self.name} parts (PyTorch\'s complex32 is not supported)')


bool_ = dtype('bool', np.bool_, 0)
uint8 = dtype('uint8', np.uint8, 1)
int8 = dtype('int8', np.int8, 1)
int16 = dtype('int16', np.int16, 1)
int32 = dtype('int32', np.int32, 1)
int64 = dtype('int64', np.int64, 1)
float16 = dtype('float16', np.float16, 2)
float32 = dtype('float32', np.float32, 2)
float64 = dtype('float64', np.float64, 2)
complex64 = dtype('complex64', np.complex64, 3)
complex128 = dtype('complex128', np.complex128, 3)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
_BY_NP = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({'float': float32, 'double': float64, 'half': float16, 'int': int32,
                 'long': int64, 'short': int16, 'cfloat': complex64, 'cdouble': complex128})

_default_float = float32


def _make_bfloat16():
    """``bfloat16``, made on first use: its NumPy dtype comes from ml_dtypes, whose import
    takes ~0.6 s, so ``import leafgrad`` does not load it. Its arrays are NumPy 'void'-kind
    (``kind == 'V'``); a leafgrad tensor holds no other such dtype, so ``kind in 'fV'`` means
    'floating point'."""
    global bfloat16
    d = _BY_NAME.get('bfloat16')
    if d is None:
        import ml_dtypes  # (loaded when first used: ~0.6 s to import)
        d = dtype('bfloat16', ml_dtypes.bfloat16, 2)
        _BY_NP[d.np] = _BY_NAME['bfloat16'] = bfloat16 = d
    return d


def __getattr__(name):
    if name == 'bfloat16':  # backend.bfloat16, until _make_bfloat16 sets it as a global
        return _make_bfloat16()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _dtype_by_name(name):
    return _make_bfloat16() if name == 'bfloat16' else _BY_NAME[name]


def get_default_dtype():
    return _default_float


def set_default_dtype(d, /):
    global _default_float
    if type(d) is not dtype:  # (not even float: PyTorch takes only its dtype objects here)
        raise TypeError('invalid dtype object: only floating-point types are supported as the default type')
    if not d.is_floating_point:
        raise TypeError('only floating-point types are supported as the default type')
    _default_float = d


def to_dtype(d):
    """Accept a leafgrad dtype, a NumPy dtype or a Python type, as torch accepts its own."""
    if type(d) is dtype:
        return d
    if d is float:  # (Python's float is a double, whatever the default dtype)
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    try:
        return from_np(np.dtype(d))
    except TypeError:
        raise TypeError(f'unsupported dtype: {d!r}') from None


def type_name(value):
    """A value's type as PyTorch's argument errors name it (NumPy's with their module: numpy.bool,
    numpy.dtypes.Float32DType)."""
    kind = type(value)
    return f'{kind.__module__}.{kind.__name__}' if kind.__module__.startswith('numpy') else kind.__name__


def is_bfloat16(np_dtype):
    """Whether a NumPy dtype is ml_dtypes' bfloat16 (without importing ml_dtypes)."""
    return np_dtype.kind == 'V' and np_dtype.name == 'bfloat16'


def np_finfo(np_dtype):
    """NumPy's finfo of a floating dtype, also of bfloat16 (ml_dtypes' finfo)."""
    if np_dtype.kind == 'V':
        import ml_dtypes  # (loaded when first used: ~0.6 s to import)
        return ml_dtypes.finfo(np_dtype)
    return np.finfo(np_dtype)


def from_np(np_dtype):
    """The leafgrad dtype of a NumPy dtype (float64 arrays stay float64)."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        if is_bfloat16(np_dtype):  # an array made before leafgrad.bfloat16 was first used
            return _make_bfloat16()
        raise TypeError(f"can't convert np.ndarray of type {np_dtype}. The only supported types are: "
                        'float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and '
                        'bool.') from None


def promote_types(a, b):
    """PyTorch's promotion of two dtypes: the higher category wins, else NumPy's lattice; a
    complex dtype beside a wider float takes that float's width (complex64, float64: complex128)."""
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == 3 and lo.category == 2 and lo.itemsize > hi.itemsize // 2:
            return complex128
        return hi
    return _BY_NP[np.promote_types(a.np, b.np)]


def default_complex_dtype():
    """complex128 when the default float dtype is float64, else complex64 (as PyTorch)."""
    return complex128 if _default_float is float64 else complex64


def scalar_dtype(value):
    """The dtype a Python scalar takes when it stands alone (a 'wrapped number')."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return default_complex_dtype()
    return _default_float


def _combine(higher, lower):
    # torch's combine_categories: a lower-priority participant only matters when it is of
    # a higher category (e.g. a float scalar with an int tensor).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == 3:
        return higher
    if lower.category == 3:  # a complex lower operand keeps a float higher one's width
        return higher.to_complex() if higher.category == 2 else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """torch.result_type over tensors and Python scalars.

    Dimensioned tensors take priority over zero-dim tensors, which take priority over Python
    scalars; a lower-priority operand only changes the result when its category is higher.
    """
    dim_result = zero_result = wrapped_result = None
    for x in operands:
        d = getattr(x, 'dtype', None)
        if d is None:
            d = scalar_dtype(x)
            wrapped_result = d if wrapped_result is None else promote_types(wrapped_result, d)
        elif x.ndim == 0:
            zero_result = d if zero_result is None else promote_types(zero_result, d)
        else:
            dim_result = d if dim_result is None else promote_types(dim_result, d)
    return _combine(dim_result, _combine(zero_result, wrapped_result))


# ---- devices ---------------------------------------------------------------------------

# the device types PyTorch's device parser knows, in the order its error lists them
_PYTORCH_DEVICE_TYPES = ('cpu', 'cuda', 'ipu', 'xpu', 'mkldnn', 'opengl', 'opencl', 'ideep', 'hip', 've', 'fpga', 'maia',
                         'xla', 'lazy', 'vulkan', 'mps', 'meta', 'hpu', 'mtia', 'privateuseone')


class device:
    """A place where tensor data lives: 'cpu' (NumPy), 'cuda[:i]' (CuPy) or 'meta' (no data: _meta.py)."""
    __module__ = 'leafgrad'  # the public name, as type() prints it: <class 'leafgrad.device'>
    __slots__ = ('type', 'index')

    def __init__(self, type, index=None):
        if index is not None:
            _check_device_index(index)
        if isinstance(type, bytes):
            type = type.decode()
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not leafgrad.device")
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool) and index is None:
            # a bare index names the accelerator's device, as PyTorch's (CUDA here)
            _check_device_index(type)
            if not cuda_available():
                raise RuntimeError('Cannot access accelerator device when none is available.')
            type, index = 'cuda', type
        elif not isinstance(type, str):
            got = builtins.type(type).__name__
            raise TypeError(f'device() received an invalid combination of arguments - got ({got}), but expected '
                            f"one of:\n * (leafgrad.device device)\n      didn't match because some of the arguments "
                            f'have invalid types: (!{got}!)\n * (str type, int index = -1)\n')
        elif ':' in type:
            text = type
            if index is not None:
                raise RuntimeError(f'type (string) must not include an index because index was passed explicitly: {text}')
            type, idx = type.split(':', 1)
            if not idx.isdigit() or (idx.startswith('0') and idx != '0'):
                raise RuntimeError(f"Invalid device string: '{text}'")
            index = int(idx)
        if type not in ('cpu', 'cuda', 'meta'):
            if not type:
                raise RuntimeError('Device string must not be empty')
            if type in _PYTORCH_DEVICE_TYPES:
                raise RuntimeError(f"leafgrad has no '{type}' device: its tensors live on cpu (NumPy) or cuda (CuPy), "
                                   "or are shapes without data (meta)")
            raise RuntimeError(f'Expected one of {", ".join(_PYTORCH_DEVICE_TYPES)} device type at start of device '
                               f'string: {type}')
        self.type = type
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f'{self.type}:{self.index}'

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __enter__(self):
        """``with torch.device(d):`` puts factories' tensors on ``d`` until the block ends."""
        global _default_device
        _devices_entered.append(_default_device)
        _default_device = self
        return self

    def __exit__(self, *exc_info):
        global _default_device
        _default_device = _devices_entered.pop()


def _check_device_index(index):
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"device(): argument 'index' (position 2) must be int, not {builtins.type(index).__name__}")
    if index < 0:
        raise RuntimeError('Device index must not be negative')


CPU = device('cpu')
META = device('meta')
_default_device = None  # where factories put tensors without device= (leafgrad.set_default_device); None: CPU
# Whether empty() fills the memory it hands out, as PyTorch does under deterministic algorithms (set
# by _settings, which `import leafgrad` does not load; read by creation)
fill_uninitialized = False
_devices_entered = []  # the default devices that `with device(...)` blocks will put back


def cuda_available():
    if _cupy is None:
        return False
    try:
        return _cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def cuda_device_count():
    """The GPUs CuPy sees (0 without CuPy or a GPU): ``leafgrad.cuda.device_count()``."""
    if not cuda_available():
        return 0
    return _cupy.cuda.runtime.getDeviceCount()


def cuda_manual_seed(seed):
    """Seed CuPy's generator on a GPU (nothing without one): ``leafgrad.cuda.manual_seed``, also
    what ``leafgrad.manual_seed`` does besides seeding the CPU generator."""
    if cuda_available():
        _cupy.random.seed(seed)


def pinned_copy(array):
    """A copy of a NumPy array in page-locked host memory (CuPy's pinned allocator), which a GPU
    reads by DMA: what ``Tensor.pin_memory()`` makes."""
    memory = _cupy.cuda.alloc_pinned_memory(max(array.nbytes, 1))
    copy = np.frombuffer(memory, array.dtype, array.size).reshape(array.shape)
    copy[...] = array
    return copy


def is_pinned(array):
    """Does a NumPy array lie in page-locked memory (``pinned_copy``'s, or a view of it)?"""
    if _cupy is None or type(array) is not np.ndarray:
        return False
    pinned = (_cupy.cuda.PinnedMemoryPointer, _cupy.cuda.PinnedMemory)
    while isinstance(array, np.ndarray):
        array = array.base
    return isinstance(array, pinned)


def array_module(array):
    """NumPy for NumPy arrays, CuPy for CuPy arrays (Chainer's get_array_module)."""
    if _cupy is not None and type(array) is not np.ndarray and isinstance(array, _cupy.ndarray):
        return _cupy
    return np


def module_for(dev):
    """The array module for a device (None: the default device, the CPU unless set otherwise)."""
    if dev is None:
        dev = _default_device
        if dev is None:
            return np
    dev = device(dev) if not isinstance(dev, device) else dev
    if dev.type == 'cpu':
        return np
    if dev.type == 'meta':
        return META_MODULE
    if not cuda_available():
        if _cupy is None:
            raise AssertionError('Torch not compiled with CUDA enabled')  # PyTorch's error, type and words
        raise RuntimeError('No CUDA GPUs are available')
    if _dispatch is None or _dispatch._cp is not _cupy:
        _use_device_dispatch()
    return _cupy


def writeable(array):
    """Can the array be written through? NumPy marks broadcast views read-only; CuPy's and meta
    arrays have no such flag and are always writable."""
    return type(array) is not np.ndarray or array.flags.writeable


# ---- the array module once a GPU is in use ---------------------------------------------------
# Ops call NumPy's names through their module's ``xp`` (``xp.add.reduce``, ``xp.asarray``,
# ``xp.zeros_like``). On the CPU that is NumPy itself: nothing between an op and its kernel.
# The first CUDA array (``module_for``, ``to_device``) rebinds every leafgrad module's ``xp``
# to ``DeviceDispatch``, which sends each call to CuPy when an array argument (or ``like=``)
# is CuPy's, else to NumPy; only programs that use a GPU pay for the look.

def on_gpu(array):
    """Is this array a CuPy one?"""
    return _cupy is not None and isinstance(array, _cupy.ndarray)


def fused_kernel(name, in_params, out_params, *operation, kind='ElementwiseKernel'):
    """A CuPy kernel (compiled on first use, cached): one launch where the same expression in
    CuPy's operators would launch one kernel per operator. ``operation``: the elementwise
    expression, or a ReductionKernel's map, reduce, post-map expressions and identity (with
    ``kind='ReductionKernel'``). None without CuPy's kernels (the stand-in for CuPy in the tests):
    the caller then writes the expression out."""
    kernel = _fused_kernels.get(name)
    if kernel is None:
        make = getattr(_cupy, kind, None)
        if make is None:
            return None
        kernel = _fused_kernels[name] = make(in_params, out_params, *operation, 'leafgrad_' + name)
    return kernel


_fused_kernels = {}


def _on_gpu(value):
    if type(value) is np.ndarray or value is None:
        return False
    if isinstance(value, _cupy.ndarray):
        return True
    if type(value) in (list, tuple):
        return any(_on_gpu(v) for v in value)
    return False


_HOST_REFUSED = re.compile(r'numpy\.ndarray|Implicit conversion to a NumPy array')


def _device_error(args, kwargs, error):
    """PyTorch's RuntimeError for CuPy's refusal (``error``) of a host array beside a GPU's: the
    arrays of tensors on different devices. None where ``error`` is another."""
    if not _HOST_REFUSED.search(str(error)):
        return None
    devices = []
    for value in list(args) + list(kwargs.values()):
        for array in (value if type(value) in (list, tuple) else (value,)):
            if type(array) is np.ndarray:
                name = 'cpu'
            elif isinstance(array, _cupy.ndarray):
                name = f'cuda:{array.device.id}'
            else:
                continue
            if name not in devices:
                devices.append(name)
    if len(devices) < 2:
        return None
    return RuntimeError(f'Expected all tensors to be on the same device, but found at least two devices, '
                        f'{devices[0]} and {devices[1]}!')


def _on_cupy(fn, args, kwargs):
    try:
        return fn(*args, **kwargs)
    except (TypeError, ValueError) as error:
        mixed = _device_error(args, kwargs, error)
        if mixed is None:
            raise
        raise mixed from None


class _DispatchUfunc:
    __slots__ = ('_np', '_cp', '__name__')

    def __init__(self, np_ufunc, cp_ufunc):
        self._np, self._cp, self.__name__ = np_ufunc, cp_ufunc, np_ufunc.__name__

    def _pick(self, args, kwargs):
        if self._cp is not None and (any(_on_gpu(a) for a in args) or _on_gpu(kwargs.get('out'))):
            return self._cp
        return self._np

    def __call__(self, *args, **kwargs):
        chosen = self._pick(args, kwargs)
        return chosen(*args, **kwargs) if chosen is self._np else _on_cupy(chosen, args, kwargs)

    def __getattr__(self, name):
        np_method = getattr(self._np, name)
        if name not in ('reduce', 'accumulate', 'at', 'outer', 'reduceat'):
            return np_method
        return lambda *args, **kwargs: _on_cupy(getattr(self._pick(args, kwargs), name), args, kwargs)


class DeviceDispatch(types.ModuleType):
    """NumPy's namespace (and its linalg, fft, lib...), each function and ufunc sent to CuPy
    when one of its array arguments, its ``out=`` or its ``like=`` lives on a GPU."""

    def __init__(self, np_module, cp_module):
        super().__init__(np_module.__name__)
        self._np, self._cp = np_module, cp_module

    def __getattr__(self, name):
        value = getattr(self._np, name)
        mine = getattr(self._cp, name, None) if self._cp is not None else None
        if isinstance(value, np.ufunc):
            value = _DispatchUfunc(value, mine)
        elif isinstance(value, types.ModuleType):
            value = DeviceDispatch(value, mine)
        elif callable(value) and not isinstance(value, builtins.type):
            value = _dispatching(value, mine)
        setattr(self, name, value)
        return value


def _dispatching(np_fn, cp_fn):
    def call(*args, **kwargs):
        like = kwargs.pop('like', None)
        if cp_fn is not None and (_on_gpu(like) or any(_on_gpu(a) for a in args)
                                  or any(_on_gpu(v) for v in kwargs.values())):
            return _on_cupy(cp_fn, args, kwargs)
        if like is not None:
            kwargs['like'] = like
        return np_fn(*args, **kwargs)
    call.__name__ = np_fn.__name__
    return call


_dispatch = None  # the DeviceDispatch once installed


def _use_device_dispatch():
    """Rebind ``xp`` in every leafgrad module that holds NumPy there (modules imported later
    take it from ops._util, rebound here too)."""
    global _dispatch
    if _dispatch is not None and _dispatch._cp is _cupy:
        return
    _dispatch = DeviceDispatch(np, _cupy)
    for name, module in list(sys.modules.items()):
        if (name == 'leafgrad' or name.startswith('leafgrad.')) and module is not None \
                and getattr(module, 'xp', None) is np:
            module.xp = _dispatch


def device_of(array):
    if type(array) is np.ndarray:
        return CPU
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return device('cuda', array.device.id)
    if type(array) is MetaArray:
        return META
    return CPU


def to_device(array, dev):
    """Move an array to a device; returns the same array when it already lives there."""
    dev = device(dev) if not isinstance(dev, device) else dev
    if type(array) is MetaArray:
        if dev.type != 'meta':
            raise NotImplementedError('Cannot copy out of meta tensor; no data!')
        return array
    if dev.type == 'cpu':
        return array if type(array) is np.ndarray else array.get()
    if dev.type == 'meta':
        return MetaArray(array.shape, array.dtype)
    xp = module_for(dev)
    with xp.cuda.Device(dev.index or 0):
        return xp.asarray(array)


def to_numpy(array):
    if type(array) is np.ndarray:
        return array
    if type(array) is MetaArray:
        raise NotImplementedError('Cannot copy out of meta tensor; no data!')
    return array.get()
