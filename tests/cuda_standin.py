"""A stand-in for CuPy on a machine without a GPU: ``device='cuda'`` runs on NumPy arrays wrapped
so that they behave as CuPy's do where leafgrad could get it wrong.

What it refuses, as CuPy does (the messages are CuPy's):
* implicit conversion to NumPy: ``np.asarray(a)``, ``np.array(a)`` and any NumPy function that
  cannot hand the call to the array module raise TypeError (``a.get()`` is the explicit way);
* a NumPy array, 0-dim ones too (NumPy's scalars, ``np.float32(2)``, pass as numbers), mixed
  into a device computation (``a + np.ones(3)``, ``a * np.asarray(2.0)``, ``xp.where(m, a,
  host)``): TypeError 'Unsupported type <class 'numpy.ndarray'>' (as CuPy 14 on the H200);
  written into one (``a[i] = host``): ValueError 'non-scalar numpy.ndarray cannot be used for
  fill';
* ufunc methods CuPy lacks: ``reduce``/``accumulate`` of any ufunc but add and multiply, ``at``
  of any but add and subtract (maximum.at and minimum.at gave wrong values on the H200), and any method reached through NumPy's ufuncs
  (``np.add.at(a, ...)``); NumPy ufuncs made from Python functions (``np.vectorize``,
  ``np.frompyfunc``);
* ``flags.writeable`` (CuPy's flags are c_contiguous, f_contiguous and owndata).
What it gives as CuPy gives: reductions and integer indexing return 0-dim arrays, never NumPy
scalars; ``float(a)``, ``a.item()``, ``a.tolist()`` read a value (CuPy synchronises for them).

Tests switch it on with ``installed()``; ``leafgrad.cuda.is_available()`` is then True and
tensors on 'cuda' hold these arrays. A real GPU (benchmarks/gpu_check.sh) runs the same tests on
CuPy itself."""
import contextlib
import os
import operator
import sys
import time
import types

import numpy as np
import pytest

IMPLICIT = ('Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy '
            'array explicitly.')
_REDUCIBLE = {'add', 'multiply'}
# (CuPy 14 has maximum.at and minimum.at too, but on the H200 they gave NaN where NumPy gives
# the extremes: the stand-in refuses them, so that leafgrad does not use them)
_SCATTERABLE = {'add', 'subtract'}
_TAKES_HOST = {'asarray', 'array', 'asanyarray'}  # CuPy's functions that copy a NumPy array to the GPU


def _unwrap(value, name):
    """The NumPy array inside a stand-in array; a NumPy array is refused as CuPy refuses it."""
    if type(value) is ndarray:
        return value._a
    if isinstance(value, np.ndarray):  # (a 0-dim one too: only NumPy's scalars pass as numbers)
        raise TypeError(f"Unsupported type {type(value)}" if name is None else
                        f"Argument '{name}' has incorrect type (expected cupy._core.core._ndarray_base, "
                        f"got numpy.ndarray)")
    if type(value) in (list, tuple):
        return type(value)(_unwrap(v, name) for v in value)
    return value


def _wrap(value):
    if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, np.dtype):
        return ndarray(np.asarray(value))
    if type(value) in (list, tuple):
        return type(value)(_wrap(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, '_fields'):  # a namedtuple (linalg results)
        return type(value)(*(_wrap(v) for v in value))
    return value


def _call(fn, args, kwargs, name=None):
    args = _unwrap(args, name)
    kwargs = {k: _unwrap(v, k if name is not None else None) for k, v in kwargs.items()}
    return _wrap(fn(*args, **kwargs))


class Flags:
    __slots__ = ('c_contiguous', 'f_contiguous', 'owndata')

    def __init__(self, a):
        self.c_contiguous, self.f_contiguous, self.owndata = (a.flags.c_contiguous, a.flags.f_contiguous,
                                                              a.flags.owndata)

    def __getitem__(self, key):
        return getattr(self, {'C_CONTIGUOUS': 'c_contiguous', 'F_CONTIGUOUS': 'f_contiguous',
                              'OWNDATA': 'owndata'}[key])


class _Pointer:
    __slots__ = ('ptr',)

    def __init__(self, ptr):
        self.ptr = ptr


class ndarray:
    """A device array: a NumPy array that will not be read as one without ``get()``."""
    __slots__ = ('_a',)
    __array_priority__ = 100

    def __init__(self, a):
        self._a = a

    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, value):  # (a reshape without a copy, or AttributeError, as NumPy and CuPy)
        self._a.shape = value

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    T = property(lambda self: ndarray(self._a.T))
    mT = property(lambda self: ndarray(self._a.mT))
    flags = property(lambda self: Flags(self._a))
    base = property(lambda self: None if self._a.base is None else ndarray(self._a.base)
                    if isinstance(self._a.base, np.ndarray) else None)
    data = property(lambda self: _Pointer(self._a.__array_interface__['data'][0]))
    device = property(lambda self: cuda.Device(0))

    @property
    def real(self):
        return ndarray(self._a.real)

    @real.setter
    def real(self, value):
        self._a.real = _unwrap(value, None)

    @property
    def imag(self):
        return ndarray(self._a.imag)

    @imag.setter
    def imag(self, value):
        self._a.imag = _unwrap(value, None)

    def get(self, stream=None, order='C', out=None):
        return np.array(self._a, order=order)

    def set(self, arr, stream=None):
        self._a[...] = arr

    def __array__(self, *args, **kwargs):
        raise TypeError(IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != '__call__' or getattr(np, ufunc.__name__, None) is not ufunc:
            return NotImplemented
        try:
            return getattr(_THIS, ufunc.__name__)(*inputs, **kwargs)
        except TypeError:
            return NotImplemented

    def __array_function__(self, func, types, args, kwargs):
        path = func.__module__.split('.')
        if path[0] != 'numpy':
            return NotImplemented
        namespace = _THIS
        for part in path[1:]:
            if part.startswith('_'):
                break
            namespace = getattr(namespace, part, None)
        mine = getattr(namespace, func.__name__, None)
        if mine is None:
            return NotImplemented
        return mine(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._a, name)
        if not callable(attr) or name in ('ctypes', '__array_interface__'):
            if name in ('ctypes', '__array_interface__', '__array_struct__'):
                raise AttributeError(name)
            return attr
        return lambda *args, **kwargs: _call(attr, args, kwargs)

    def __getitem__(self, index):
        index = _host_index(index)
        return _wrap(self._a[index])

    def __setitem__(self, index, value):
        if isinstance(value, np.ndarray) and value.ndim:
            raise ValueError('non-scalar numpy.ndarray cannot be used for fill')
        self._a[_host_index(index)] = value._a if type(value) is ndarray else value

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError('iteration over a 0-d array')
        return (ndarray(row) if isinstance(row, np.ndarray) else ndarray(np.asarray(row)) for row in self._a)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __index__(self):
        return operator.index(self._a)

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec)

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    def __reduce__(self):
        return ndarray, (self._a,)

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0


def _host_index(index):
    """CuPy indexes with device arrays, and with NumPy arrays too (it copies them over)."""
    if type(index) is tuple:
        return tuple(_host_index(i) for i in index)
    return index._a if type(index) is ndarray else index


def _binary(ufunc_name, reflected=False):
    def method(self, other):
        if isinstance(other, np.ndarray):
            raise TypeError(f"Unsupported type {type(other)}")
        fn = getattr(_THIS, ufunc_name)
        return fn(other, self) if reflected else fn(self, other)
    return method


def _inplace(ufunc_name):
    def method(self, other):
        getattr(_THIS, ufunc_name)(self, other, out=self)
        return self
    return method


for _name, _ufunc in (('add', 'add'), ('sub', 'subtract'), ('mul', 'multiply'), ('truediv', 'true_divide'),
                      ('floordiv', 'floor_divide'), ('mod', 'remainder'), ('pow', 'power'), ('matmul', 'matmul'),
                      ('and', 'bitwise_and'), ('or', 'bitwise_or'), ('xor', 'bitwise_xor'),
                      ('lshift', 'left_shift'), ('rshift', 'right_shift')):
    setattr(ndarray, f'__{_name}__', _binary(_ufunc))
    setattr(ndarray, f'__r{_name}__', _binary(_ufunc, reflected=True))
    setattr(ndarray, f'__i{_name}__', _inplace(_ufunc))
for _name, _ufunc in (('lt', 'less'), ('le', 'less_equal'), ('gt', 'greater'), ('ge', 'greater_equal'),
                      ('eq', 'equal'), ('ne', 'not_equal'), ('divmod', 'divmod')):
    setattr(ndarray, f'__{_name}__', _binary(_ufunc))
ndarray.__neg__ = lambda self: _THIS.negative(self)
ndarray.__pos__ = lambda self: _THIS.positive(self)
ndarray.__abs__ = lambda self: _THIS.absolute(self)
ndarray.__invert__ = lambda self: _THIS.invert(self)
ndarray.__hash__ = None


class ufunc:
    """A CuPy ufunc: called on device arrays; reduce/accumulate/at only where CuPy has them."""

    def __init__(self, np_ufunc):
        self._u = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.nin, self.nout, self.types = np_ufunc.nin, np_ufunc.nout, np_ufunc.types

    def __call__(self, *args, **kwargs):
        return _call(self._u, args, kwargs)

    def _method(self, method, allowed):
        if self.__name__ not in allowed:
            raise NotImplementedError(f'`cupy_{self.__name__}.{method}` is not supported yet')
        fn = getattr(self._u, method)
        return lambda *args, **kwargs: _call(fn, args, kwargs)

    reduce = property(lambda self: self._method('reduce', _REDUCIBLE))
    accumulate = property(lambda self: self._method('accumulate', _REDUCIBLE))
    at = property(lambda self: self._method('at', _SCATTERABLE))
    outer = property(lambda self: self._method('outer', {self.__name__}))
    reduceat = property(lambda self: self._method('reduceat', set()))


def _function(name, fn):
    def call(*args, **kwargs):
        if name in _TAKES_HOST:
            args = tuple(a._a if type(a) is ndarray else a for a in args)
            return ndarray(np.array(fn(*args, **kwargs), copy=True) if name == 'array' else
                           np.asarray(fn(*args, **kwargs)))
        return _call(fn, args, kwargs, name='a')
    call.__name__ = name
    return call


class _Namespace(types.ModuleType):
    """cupy, cupy.linalg, cupy.fft, cupy.random...: NumPy's namespace, on device arrays."""

    def __init__(self, name, source):
        super().__init__(name)
        self._source = source

    def __getattr__(self, name):
        try:
            value = getattr(self._source, name)
        except AttributeError:
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'") from None
        if isinstance(value, np.ufunc):
            if value.__name__ != name and getattr(np, value.__name__, None) is not value:
                raise AttributeError(name)
            wrapped = ufunc(value)
        elif isinstance(value, types.ModuleType):
            wrapped = _Namespace(f'{self.__name__}.{name}', value)
        elif callable(value) and not isinstance(value, type):
            wrapped = _function(name, value)
        else:
            wrapped = value
        setattr(self, name, wrapped)
        return wrapped


class _Device:
    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def use(self):
        pass

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self):
        return self.id


class _MemoryPool:
    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        pass

    def set_limit(self, size=None, fraction=None):
        pass

    def get_limit(self):
        return 0


_POOL = _MemoryPool()


class _Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.time, self.done = None, True

    def record(self, stream=None):
        self.time = time.perf_counter()

    def synchronize(self):
        pass


class _Stream:
    _current = []

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.ptr = 0 if null else id(self)
        self.done = True

    def synchronize(self):
        pass

    def wait_event(self, event):
        pass

    def use(self):
        _Stream._current[:] = [self]

    def __enter__(self):
        _Stream._current.append(self)
        return self

    def __exit__(self, *exc):
        _Stream._current.pop()


_Stream.null = _Stream(null=True)


class _MemoryHook:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

cuda = types.SimpleNamespace(
    Device=_Device,
    runtime=types.SimpleNamespace(
        getDeviceCount=lambda: 1, runtimeGetVersion=lambda: 12080, driverGetVersion=lambda: 12080,
        getDeviceProperties=lambda i: {'name': b'leafgrad stand-in', 'totalGlobalMem': 1 << 34, 'major': 9,
                                       'minor': 0, 'multiProcessorCount': 1},
        memGetInfo=lambda: (1 << 33, 1 << 34)),
    PinnedMemoryPointer=type('PinnedMemoryPointer', (), {}), PinnedMemory=type('PinnedMemory', (), {}),
    alloc_pinned_memory=lambda n: bytearray(n),
    get_current_stream=lambda: _Stream._current[-1] if _Stream._current else _Stream.null,
    Stream=_Stream, Event=_Event, MemoryHook=_MemoryHook,
    get_elapsed_time=lambda start, end: (end.time - start.time) * 1e3,
)


class _RandomState:
    """CuPy's RandomState (the methods leafgrad draws with), on a NumPy RandomState of its own
    (as CuPy's is its own: not NumPy's global one, which a user's np.random.rand() draws from)."""

    def __init__(self):
        self._r = np.random.RandomState(0)

    def random_sample(self, size=None, dtype=float):
        return ndarray(np.asarray(self._r.random_sample(size), dtype=dtype))

    def standard_normal(self, size=None, dtype=float):
        return ndarray(np.asarray(self._r.standard_normal(size), dtype=dtype))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return ndarray(np.asarray(self._r.normal(loc, scale, size), dtype=dtype))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return ndarray(np.asarray(self._r.uniform(low, high, size), dtype=dtype))

    def randint(self, low, high=None, size=None, dtype=int):
        return ndarray(np.asarray(self._r.randint(low, high, size, dtype=dtype)))

    def permutation(self, n):
        return ndarray(np.asarray(self._r.permutation(n)))


_RANDOM_STATE = _RandomState()


def _make_module():
    module = _Namespace('cupy', np)
    module.random.get_random_state = lambda: _RANDOM_STATE
    module.random.seed = lambda seed=None: _RANDOM_STATE._r.seed(seed)
    module.ndarray = ndarray
    module.cuda = cuda
    module.get_default_memory_pool = lambda: _POOL
    module.get_default_pinned_memory_pool = lambda: _POOL
    module.asnumpy = lambda a, stream=None: a.get() if type(a) is ndarray else np.asarray(a)
    module.get_array_module = lambda *arrays: module if any(type(a) is ndarray for a in arrays) else np
    module.__version__ = 'stand-in'
    return module


_THIS = _make_module()
cupy = _THIS


def _special_module():
    """cupyx.scipy.special's functions leafgrad calls (erf, erfc), on device arrays: CuPy's
    kernels compute them in the array's dtype, as these do (NumPy has no erf: math's, elementwise)."""
    import math
    special = types.ModuleType('cupyx.scipy.special')
    for name in ('erf', 'erfc'):
        fn = np.frompyfunc(getattr(math, name), 1, 1)
        setattr(special, name, (lambda fn: lambda x: ndarray(fn(x._a).astype(x._a.dtype)))(fn))
    scipy = types.ModuleType('cupyx.scipy')
    scipy.special = special
    cupyx = types.ModuleType('cupyx')
    cupyx.scipy = scipy
    return {'cupyx': cupyx, 'cupyx.scipy': scipy, 'cupyx.scipy.special': special}


@contextlib.contextmanager
def installed():
    """Put the stand-in behind device='cuda' (and cupyx.scipy.special's erf and erfc) for the
    duration of the block."""
    from leafgrad import backend
    before = backend._cupy
    backend._cupy = _THIS
    modules = {} if 'cupyx' in sys.modules else _special_module()
    sys.modules.update(modules)
    try:
        yield _THIS
    finally:
        for name in modules:
            sys.modules.pop(name, None)
        backend._cupy = before
        if backend._dispatch is not None:  # every module's xp back to NumPy itself, as before any GPU
            for module in list(sys.modules.values()):
                if getattr(module, 'xp', None) is backend._dispatch:
                    module.xp = np
            backend._dispatch = None


def _real_gpu():
    from leafgrad import backend
    available = backend.cuda_available()
    if not available and os.environ.get('LEAFGRAD_REQUIRE_CUDA'):
        raise RuntimeError('LEAFGRAD_REQUIRE_CUDA is set but leafgrad.cuda.is_available() is False')
    return available


REAL_GPU = _real_gpu()  # (CuPy with a GPU: the tests run on it, and the stand-in stays out)


@pytest.fixture(autouse=True)
def cuda_device():
    """For the tests of device='cuda' (imported into their modules): CuPy on a GPU; elsewhere the
    stand-in, which refuses, as CuPy does, every hidden round trip through host memory."""
    if REAL_GPU:
        yield
    else:
        with installed():
            yield
