"""``torch.autograd.profiler``: ``profile`` (the context manager that records), ``record_function``
(a named range, as a context manager or a decorator), ``emit_nvtx`` and ``emit_itt`` (refused:
leafgrad has neither tool's library).

    >>> import leafgrad as torch
    >>> x = torch.randn(4, 3, requires_grad=True)
    >>> with torch.autograd.profiler.profile() as prof:
    ...     (x * 2).sum().backward()
    >>> sorted({e.name for e in prof.function_events})[:2]
    ['MulBackward0', 'SumBackward0']

How ops are timed, and why nothing is paid when no profiler runs: ``_instrument.py``.
"""
import functools
import threading
import uuid
import warnings

from .. import backend
# (upward, the one arrow out of its layer: the __torch_function__ protocol, for torch.ops.profiler's
# operators, which hand an object that overrides (an fx Proxy) to its override as PyTorch's do. The
# protocol sits above the namespace because its switch wraps every public function of it; this
# package is below because the namespace is built on it.)
from ..overrides import handle_torch_function, has_torch_function
from . import _instrument
from .profiler_util import EventList, FunctionEvent, _write_chrome_trace

__all__ = ['profile', 'record_function', 'emit_itt', 'emit_nvtx', 'EventList', 'FunctionEvent']


def _cuda_available():
    return backend.cuda_available()  # (leafgrad.cuda.is_available's answer, without loading leafgrad.cuda)


class profile:
    """Record the calling thread's ops, backward nodes and ``record_function`` ranges while the
    context is open; ``key_averages().table()``, ``function_events``, ``export_chrome_trace``
    read the result.

    Parameters
    ----------
    enabled : bool
        ``False`` makes the context a no-op (``__enter__`` returns None, as in PyTorch).
    record_shapes : bool
        Keep each call's input shapes (``input_shapes``; the table's Input Shapes column).
    profile_memory : bool
        Count the bytes each call's outputs allocated (CPU Mem, Self CPU Mem).
    with_stack : bool
        Keep the Python frames (``file(line): function``) that led to each call.
    use_cuda, use_device : deprecated / ``'cuda'``
        GPU time is not measured: without a GPU, PyTorch's warning and a CPU-only profile.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          'instead.', FutureWarning, stacklevel=2)
            use_device = 'cuda'
        if use_device is not None and use_device not in ('cuda', 'xpu', 'mtia', 'hpu'):
            warnings.warn(f'The {use_device} is not a valid device option.', stacklevel=2)
            use_device = None
        if use_device == 'cuda' and not _cuda_available():
            warnings.warn('CUDA is not available, disabling CUDA profiling', stacklevel=2)
            self.use_cuda = False
            use_device = None
        if use_device is not None:
            raise NotImplementedError(f"leafgrad's profiler measures CPU time only; use_device='{use_device}' "
                                      'is not supported')
        if not use_cpu:
            raise AssertionError('Device-only events supported only with Kineto (use_kineto=True)'
                                 if not use_kineto else 'No activities specified for the profiler')
        if with_flops:
            raise NotImplementedError("leafgrad's profiler does not estimate FLOPs (with_flops=True)")
        if experimental_config is not None or activity_filters:
            raise NotImplementedError("leafgrad's profiler takes no experimental_config or activity_filters")
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError('post_processing_timeout_s must be non-negative')
        self.use_device = None
        self.record_shapes = record_shapes
        self.with_flops = False
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        # PyTorch records modules for TorchScript models only; in eager mode, as here, nothing.
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.trace_id = ''
        self.entered = False
        self._session = None
        self._function_events = None
        self._old_function_events = None
        self._metadata = {}

    # ---- recording ----------------------------------------------------------------------

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError('Profiler context manager is not reentrant')
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self):
        self.entered = True
        self.trace_id = (self.custom_trace_id_callback() if self.custom_trace_id_callback
                         else f'{uuid.uuid4().int:032X}')

    def _start_trace(self):
        self.entered = True
        self._session = _instrument.Session(self.record_shapes, self.profile_memory, self.with_stack)
        _instrument.start(self._session)

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.enabled:
            return False
        _instrument.stop(self._session)
        if self._function_events is not None and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        return False

    # ---- results ------------------------------------------------------------------------

    def _ensure_function_events(self):
        if self._function_events is not None:
            return
        events = _function_events(self._session) if self._session is not None else []
        if self._old_function_events is not None and self.acc_events:
            events = list(self._old_function_events) + events
            self._old_function_events = None
        self._function_events = EventList(events, use_device=None, profile_memory=self.profile_memory)

    @property
    def function_events(self):
        self._ensure_function_events()
        return self._function_events

    def __repr__(self):
        if self._session is None or self._session.end_ns == 0:
            return '<unfinished leafgrad.autograd.profile>'
        return repr(self.function_events)

    def __str__(self):
        if self._session is None or self._session.end_ns == 0:
            return '<unfinished leafgrad.autograd.profile>'
        return str(self.function_events)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self time (microseconds)."""
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the events as a Chrome trace (JSON; ``.gz`` paths are gzipped)."""
        _write_chrome_trace(self.function_events, path)

    def export_stacks(self, path, metric='self_cpu_time_total'):
        if not self.with_stack:
            raise AssertionError('export_stacks() requires with_stack=True')
        return self.function_events.export_stacks(path, metric)


def _function_events(session):
    """The session's raw events as FunctionEvents: ordered by start, ids from 1, each linked to
    the innermost event around it (``cpu_parent``/``cpu_children``)."""
    raws = sorted(session.events, key=lambda e: (e.start, -e.end))
    made = {}
    events = []
    thread = threading.get_native_id() if session.thread == threading.get_ident() else session.thread
    for number, raw in enumerate(raws, 1):
        name = raw.name
        if raw.user and name.startswith('ProfilerStep#'):
            name = 'ProfilerStep*'  # PyTorch groups the steps under one name
        event = FunctionEvent(number, name, thread, raw.start / 1000, raw.end / 1000,
                              input_shapes=raw.shapes if session.record_shapes and raw.shapes is not None else [],
                              stack=raw.stack if session.with_stack and raw.stack is not None else [],
                              scope=raw.scope, cpu_memory_usage=raw.memory if session.profile_memory else 0,
                              is_user_annotation=raw.user, sequence_nr=raw.seq, trace_name=raw.name)
        made[id(raw)] = event
        parent = made.get(id(raw.parent)) if raw.parent is not None else None
        if parent is not None:
            parent.append_cpu_child(event)
            event.set_cpu_parent(parent)
        events.append(event)
    return events


class record_function:
    """A named range in the profile: ``with record_function('block'):`` or ``@record_function('f')``.
    Outside a profile it records nothing (and costs one comparison)."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.record = None
        self.run_callbacks_on_exit = True

    def __enter__(self):
        if not isinstance(self.name, str):
            raise RuntimeError("profiler::_record_function_enter_new() Expected a value of type 'str' for argument "
                               f"'name' but instead found type '{type(self.name).__name__}'.")
        self.record = None
        if _instrument._thread == threading.get_ident():
            self.record = _instrument.push(self.name, scope=7, user=True)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self.record is not None:
            _instrument.pop(self.record)
            self.record = None
        return False

    def __call__(self, fn):
        name, args = self.name, self.args

        @functools.wraps(fn)
        def recorded(*a, **kw):
            with record_function(name, args):
                return fn(*a, **kw)
        return recorded


def _record_function_enter(name, args=None):
    """``torch.ops.profiler._record_function_enter``: open a ``record_function`` range and return
    its handle (closed by ``_record_function_exit``), the two halves of ``with record_function``."""
    if has_torch_function((name,)):
        return handle_torch_function(_record_function_enter, (name,), name, args)
    handle = record_function(name, args)
    handle.__enter__()
    return handle


def _record_function_exit(handle):
    """``torch.ops.profiler._record_function_exit``: close the range ``handle`` opened."""
    if has_torch_function((handle,)):
        return handle_torch_function(_record_function_exit, (handle,), handle)
    handle.__exit__(None, None, None)
    return None


class _ProfilerOps:
    """``torch.ops.profiler``: the profiler's operators as programs reach them directly."""
    _record_function_enter = staticmethod(_record_function_enter)
    _record_function_enter_new = staticmethod(_record_function_enter)
    _record_function_exit = staticmethod(_record_function_exit)


OPS_NAMESPACE = _ProfilerOps()


class emit_nvtx:
    """NVTX ranges for NVIDIA's profilers: there is no CUDA here (PyTorch's CPU build refuses the
    same way), and with CuPy leafgrad does not emit them."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if not _cuda_available():
            raise AssertionError('Torch not compiled with CUDA enabled')
        raise NotImplementedError('leafgrad emits no NVTX ranges')

    def __exit__(self, exc_type, exc_value, traceback):
        return False


class emit_itt:
    """ITT ranges for Intel VTune: leafgrad has no ITT library to emit them with."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        raise NotImplementedError('leafgrad emits no ITT ranges (Intel VTune annotations)')

    def __exit__(self, exc_type, exc_value, traceback):
        return False
