"""``leafgrad.cuda``: the GPU backend (CuPy with a CUDA device) and the calls programs make of it.

Without CuPy, every call answers as a CPU-only PyTorch answers: ``is_available()`` is False,
``device_count()`` 0, the memory counters 0 (``memory_stats()`` empty), ``empty_cache`` and
``manual_seed`` do nothing, and what needs a device (``current_device``, ``set_device``,
``get_device_name``, ``synchronize``, ``Stream``, ``Event`` …) raises PyTorch's ``AssertionError:
Torch not compiled with CUDA enabled``. With CuPy and a GPU they ask CuPy: the memory counters
read CuPy's memory pool (which keeps no peaks: ``max_memory_allocated`` and kin count from their
first call or ``reset_peak_memory_stats``), streams and events are CuPy's.

CuPy's arrays have no bfloat16 and leafgrad never computes in TF32: ``is_bf16_supported()`` and
``is_tf32_supported()`` are False on any GPU. ``leafgrad.cuda.amp`` (the deprecated
``torch.cuda.amp``) loads on first use.
"""
import collections
import importlib as _importlib
import warnings

from .. import backend

_NOT_COMPILED = 'Torch not compiled with CUDA enabled'


def is_available():
    return backend.cuda_available()


def device_count():
    return backend.cuda_device_count()


def _cupy():
    """CuPy, once a GPU is known to be there; PyTorch's error otherwise."""
    backend.module_for('cuda')
    return backend._cupy


def is_initialized():
    """Whether CUDA has been set up: as soon as CuPy has found a GPU."""
    return is_available()


def init():
    _cupy()


def _index(device):
    """A device index from None (the current device), an int, a string or a device."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    device = backend.device(device) if not isinstance(device, backend.device) else device
    if device.type != 'cuda':
        raise ValueError(f'Expected a cuda device, but got: {device}')
    return current_device() if device.index is None else device.index


def current_device():
    return _cupy().cuda.Device().id


def set_device(device):
    """Make ``device`` the current GPU (a negative index does nothing, as in PyTorch)."""
    index = device if isinstance(device, int) else _index(device)
    if index >= 0:
        _cupy().cuda.Device(index).use()


class device:
    """Context manager: ``device`` is the current GPU inside the block (None or negative: no change)."""

    def __init__(self, device):
        self.device = device
        self.prev_idx = -1

    def __enter__(self):
        if self.device is None or (isinstance(self.device, int) and self.device < 0):
            return
        if backend._cupy is None:
            raise RuntimeError('leafgrad was compiled without CUDA support (CuPy is not installed)')
        self.prev_idx = current_device()
        set_device(self.device)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


def synchronize(device=None):
    cp = _cupy()
    with cp.cuda.Device(_index(device)):
        cp.cuda.runtime.deviceSynchronize()


def get_device_properties(device=None):
    """CUDA's properties of a GPU: ``name``, ``major``, ``minor``, ``total_memory``, ``multi_processor_count``."""
    props = _cupy().cuda.runtime.getDeviceProperties(_index(device))
    return _DeviceProperties(props['name'].decode(), props['major'], props['minor'], props['totalGlobalMem'],
                             props['multiProcessorCount'])


_DeviceProperties = collections.namedtuple('_CudaDeviceProperties',
                                           'name major minor total_memory multi_processor_count')


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    props = get_device_properties(device)
    return props.major, props.minor


def get_arch_list():
    """The architectures leafgrad's kernels were built for: none (CuPy compiles at run time)."""
    return []


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


# ---- random numbers (leafgrad draws on the CPU generator and copies: see creation.py) ----------

def manual_seed(seed):
    backend.cuda_manual_seed(seed)


manual_seed_all = manual_seed


def seed():
    pass


seed_all = seed


def initial_seed():
    _cupy()
    raise RuntimeError('leafgrad keeps no CUDA generator: random tensors on CUDA are drawn by the CPU generator')


def get_rng_state_all():
    return [] if not is_available() else [get_rng_state(i) for i in range(device_count())]


def get_rng_state(device='cuda'):
    _cupy()
    raise RuntimeError('leafgrad keeps no CUDA generator: random tensors on CUDA are drawn by the CPU generator')


def set_rng_state(new_state, device='cuda'):
    _cupy()
    raise RuntimeError('leafgrad keeps no CUDA generator: random tensors on CUDA are drawn by the CPU generator')


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- memory ------------------------------------------------------------------------------------

def _pool():
    return backend._cupy.get_default_memory_pool() if is_available() else None


def empty_cache():
    """Give the GPU memory CuPy's pool holds unused back to the driver (nothing without a GPU)."""
    pool = _pool()
    if pool is not None:
        pool.free_all_blocks()


def memory_allocated(device=None):
    pool = _pool()
    return 0 if pool is None else pool.used_bytes()


def memory_reserved(device=None):
    pool = _pool()
    return 0 if pool is None else pool.total_bytes()


def memory_stats(device=None):
    pool = _pool()
    if pool is None:
        return collections.OrderedDict()
    return collections.OrderedDict([('allocated_bytes.all.current', pool.used_bytes()),
                                    ('reserved_bytes.all.current', pool.total_bytes())])


class _PeakHook:
    """Keeps the highest ``used_bytes`` and ``total_bytes`` of CuPy's pool, read after each of its
    allocations (a CuPy MemoryHook, registered for the calling thread). CuPy's pool keeps no peaks,
    so it is registered by the first ``reset_peak_memory_stats`` or ``max_memory_*`` call: peaks
    count from then, and programs that never ask pay nothing per allocation."""
    instance = None

    def __init__(self):
        cp = backend._cupy
        self.pool = cp.get_default_memory_pool()
        self.allocated = self.reserved = 0
        hook = self

        class Hook(cp.cuda.MemoryHook):
            name = 'leafgrad_peaks'

            def malloc_postprocess(self, **kwargs):
                hook.allocated = max(hook.allocated, hook.pool.used_bytes())
                hook.reserved = max(hook.reserved, hook.pool.total_bytes())

        self.hook = Hook()
        self.hook.__enter__()
        self.reset()

    def reset(self):
        self.allocated, self.reserved = self.pool.used_bytes(), self.pool.total_bytes()

    @classmethod
    def get(cls):
        _cupy()
        if cls.instance is None:
            cls.instance = cls()
        return cls.instance


def max_memory_allocated(device=None):
    """The most memory tensors held at once since the first call of this or
    ``reset_peak_memory_stats`` (or the last reset); 0 without a GPU."""
    if not is_available():
        return 0
    peaks = _PeakHook.get()
    return max(peaks.allocated, peaks.pool.used_bytes())


def max_memory_reserved(device=None):
    if not is_available():
        return 0
    peaks = _PeakHook.get()
    return max(peaks.reserved, peaks.pool.total_bytes())


def memory_cached(device=None):
    warnings.warn('`leafgrad.cuda.memory_cached` has been renamed to `leafgrad.cuda.memory_reserved`', FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    warnings.warn('`leafgrad.cuda.max_memory_cached` has been renamed to `leafgrad.cuda.max_memory_reserved`',
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    _PeakHook.get().reset()


def reset_accumulated_memory_stats(device=None):
    _cupy()  # (CuPy's pool counts nothing cumulative: nothing to reset)


# ---- streams and events: CuPy's, with PyTorch's names ----------------------------------------

class Event:
    """``torch.cuda.Event``: a marker in a stream's work; ``elapsed_time`` (ms) between two
    recorded with ``enable_timing=True``."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        if not is_available():
            raise RuntimeError('Tried to instantiate dummy base class Event')  # (PyTorch without CUDA)
        if external:  # (PyTorch's events recorded into a captured CUDA graph: CuPy has none such)
            raise NotImplementedError('leafgrad.cuda.Event(external=True): CuPy has no external events')
        self.enable_timing = enable_timing
        self._event = _cupy().cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)

    def record(self, stream=None):
        self._event.record(None if stream is None else stream._stream)

    def wait(self, stream=None):
        (current_stream() if stream is None else stream)._stream.wait_event(self._event)

    def query(self):
        return self._event.done

    def synchronize(self):
        self._event.synchronize()

    def elapsed_time(self, end_event):
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError('Both events must be created with argument \'enable_timing=True\'.')
        return backend._cupy.cuda.get_elapsed_time(self._event, end_event._event)

    def __repr__(self):
        return f'<leafgrad.cuda.Event {self._event!r}>'


class Stream:
    """``torch.cuda.Stream``: a queue of GPU work (CuPy's stream); ``with stream:`` (or
    ``leafgrad.cuda.stream(s)``) makes it the current one, where ops queue their kernels."""

    def __init__(self, device=None, priority=0, **kwargs):
        if not is_available():
            raise RuntimeError('torch.cuda.Stream requires CUDA support')  # (PyTorch's words without CUDA)
        stream = kwargs.pop('_cupy_stream', None)  # (current_stream's and default_stream's: CuPy's own)
        if kwargs:  # (PyTorch's stream_id/device_index/device_type name streams made outside Python)
            raise TypeError(f"Stream() got an unexpected keyword argument '{next(iter(kwargs))}'")
        index = _index(device)
        if stream is None:
            cp = _cupy()
            with cp.cuda.Device(index):
                if priority:  # (a CuPy without stream priorities refuses it, rather than ignore it)
                    try:
                        stream = cp.cuda.Stream(non_blocking=False, priority=priority)
                    except TypeError:
                        raise NotImplementedError('leafgrad.cuda.Stream(priority=...): this CuPy makes '
                                                  'no streams of another priority') from None
                else:
                    stream = cp.cuda.Stream(non_blocking=False)
        self._stream = stream
        self.device = backend.device('cuda', index)
        self.priority = priority

    @property
    def cuda_stream(self):
        return self._stream.ptr

    def query(self):
        return self._stream.done

    def synchronize(self):
        self._stream.synchronize()

    def wait_event(self, event):
        self._stream.wait_event(event._event)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __enter__(self):
        self._stream.__enter__()
        return self

    def __exit__(self, *exc_info):
        return self._stream.__exit__(*exc_info)

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __repr__(self):
        return f'<leafgrad.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>'


def current_stream(device=None):
    cp = _cupy()
    with cp.cuda.Device(_index(device)):  # (the given device's current stream)
        return Stream(device, _cupy_stream=cp.cuda.get_current_stream())


def default_stream(device=None):
    return Stream(device, _cupy_stream=_cupy().cuda.Stream.null)


def set_stream(stream):
    if stream is not None:
        stream._stream.use()


class StreamContext:
    """``leafgrad.cuda.stream(s)``: ``s`` is the current stream inside the block (None: no change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc_info):
        if self.stream is not None:
            self.stream.__exit__(*exc_info)
        return False


def stream(stream):
    return StreamContext(stream)


def memory_summary(device=None, abbreviated=False):
    _cupy()
    return (f'CUDA memory (CuPy pool) on device {_index(device)}: {memory_allocated(device)} bytes allocated, '
            f'{memory_reserved(device)} bytes reserved')


def __getattr__(name):
    if name == 'amp':  # the deprecated torch.cuda.amp
        return _importlib.import_module('.amp', __name__)
    # leafgrad.cuda.FloatTensor and kin: the legacy types, loaded on first use
    from .. import _tensor_types  # (loaded when first used: the legacy types, ~3 ms)
    if name in _tensor_types.CUDA_TYPES:
        return _tensor_types.CUDA_TYPES[name]
    raise AttributeError(f"module 'leafgrad.cuda' has no attribute '{name}'")
