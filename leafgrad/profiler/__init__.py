"""``torch.profiler``: ``profile`` with activities, a step ``schedule`` and ``on_trace_ready``,
``record_function``, ``tensorboard_trace_handler``.

    >>> import leafgrad as torch
    >>> from leafgrad.profiler import profile, ProfilerActivity, record_function
    >>> model = torch.nn.Linear(4, 3)
    >>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    ...     with record_function('forward'):
    ...         model(torch.randn(2, 4)).sum().backward()
    >>> print(prof.key_averages().table(sort_by='cpu_time_total', row_limit=10))  # doctest: +SKIP

Only CPU time is measured (leafgrad's profiler has no device activity). The events, their
names and the table are ``leafgrad.autograd.profiler``'s; how ops are timed at no cost outside
a profile is told in ``leafgrad/autograd/_instrument.py``.
"""
import enum
import os
import time as _time
import warnings

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType

__all__ = ['profile', 'schedule', 'supported_activities', 'tensorboard_trace_handler', 'ProfilerAction',
           'ProfilerActivity', 'kineto_available', 'DeviceType', 'record_function']


class ProfilerActivity(enum.Enum):
    """The activity groups PyTorch names; leafgrad records ``CPU``."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this build can record: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


def kineto_available():
    """leafgrad records without PyTorch's Kineto library."""
    return False


class ProfilerAction(enum.Enum):
    """What the profiler does during a step, as a ``schedule`` returns it."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The step schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last of them ``RECORD_AND_SAVE``, when
    ``on_trace_ready`` is called), ``repeat`` times (0: until the profiler stops). With
    ``skip_first_wait`` the first cycle starts without its wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f'Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} '
                             f'(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), '
                             f'skip_first={skip_first} (need >= 0).')
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f'Step must be non-negative. Got {step}.')
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An ``on_trace_ready`` that writes each cycle's Chrome trace into ``dir_name`` as
    ``<worker_name>.<time_ns>.pt.trace.json`` (``.gz`` with ``use_gzip``), the files TensorBoard's
    profiler plugin reads."""
    import socket  # (loaded when first used: only this trace handler needs it)

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f'{socket.gethostname()}_{os.getpid()}'
        file_name = f'{worker_name}.{_time.time_ns()}.pt.trace.json' + ('.gz' if use_gzip else '')
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


class profile:
    """Profile the calling thread's ops: a context manager, or ``start()``/``stop()``.

    Parameters
    ----------
    activities : iterable of ProfilerActivity
        ``ProfilerActivity.CPU`` (device activities: PyTorch's warning, or its error when no
        CPU activity is left).
    schedule : callable, optional
        step number -> ``ProfilerAction`` (see ``schedule``); ``step()`` advances it and each step
        is a ``ProfilerStep#n`` range. Without one, everything is recorded.
    on_trace_ready : callable, optional
        Called with this profiler at the end of each recorded cycle.
    record_shapes, profile_memory, with_stack : bool
        As ``leafgrad.autograd.profiler.profile``.
    acc_events : bool
        Keep the events of earlier cycles (otherwise each cycle starts afresh).
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        if activities is not None:
            chosen = set()
            for item in activities:
                if isinstance(item, ProfilerActivity):
                    chosen.add(item)
                elif isinstance(item, dict):
                    chosen.update(item)
        else:
            chosen = supported_activities()
        if use_cuda is not None:
            warnings.warn('`use_cuda` is deprecated, use `activities` argument instead', FutureWarning, stacklevel=2)
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
            else:
                chosen.discard(ProfilerActivity.CUDA)
        if not chosen:
            raise AssertionError('No valid profiler activities found')
        if execution_trace_observer is not None:
            raise NotImplementedError("leafgrad's profiler writes no execution traces (execution_trace_observer)")
        self.activities = _parse_activities(activities) if activities is not None else supported_activities()
        self.use_device = 'cuda' if ProfilerActivity.CUDA in self.activities else None
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler = None
        self.preset_metadata = {}
        self._warned_clears = False
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self._scheduled(self.step_num)

    def _scheduled(self, step):
        action = self.schedule(step)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError('ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be '
                             'returned by a user-provided schedule')
        return action

    # ---- the cycle: prepare (a fresh recorder), start, stop, trace ready ------------------

    def prepare_trace(self):
        if self.profiler is not None and not self.acc_events and not self._warned_clears:
            self._warned_clears = True
            warnings.warn('Warning: Profiler clears events at the end of each cycle. Only events from the current '
                          'cycle will be reported. To keep events across cycles, set acc_events=True.', stacklevel=2)
        if self.profiler is None or not self.acc_events:
            self.profiler = _autograd_profiler.profile(
                use_cpu=ProfilerActivity.CPU in self.activities, use_device=self.use_device,
                record_shapes=self.record_shapes, with_flops=self.with_flops, profile_memory=self.profile_memory,
                with_stack=self.with_stack, with_modules=self.with_modules, use_kineto=True,
                experimental_config=self.experimental_config, acc_events=self.acc_events,
                custom_trace_id_callback=self.custom_trace_id_callback,
                post_processing_timeout_s=self.post_processing_timeout_s)
        self.profiler._prepare_trace()

    def start_trace(self):
        if self.profiler is None:
            raise AssertionError('Profiler must be initialized before starting trace')
        self.profiler._start_trace()

    def stop_trace(self):
        if self.profiler is None:
            raise AssertionError('Profiler must be initialized before stopping trace')
        self.profiler.__exit__(None, None, None)

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit(self, previous, current):
        """Do what changes between two steps' actions (``current`` None: the profiler stops),
        as PyTorch's table of transitions does."""
        none, warmup, record, save = (ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
                                      ProfilerAction.RECORD_AND_SAVE)
        records = current in (record, save)
        if previous == none:
            actions = [] if current in (none, None) else [self.prepare_trace] + ([self.start_trace] if records else [])
        elif previous == warmup:
            if current in (none, None):
                actions = [self.start_trace, self.stop_trace]
                if current == none:
                    warnings.warn('Incorrect schedule: WARMUP followed by NONE', stacklevel=3)
            else:
                actions = [self.start_trace] if records else []
        elif previous == record:
            if current is None:
                actions = [self.stop_trace, self._trace_ready]
            elif records:
                actions = []
            else:
                warnings.warn(f'Incorrect schedule: RECORD followed by {current.name}', stacklevel=3)
                actions = [self.stop_trace]
        else:  # RECORD_AND_SAVE: the cycle ends here
            actions = [self.stop_trace, self._trace_ready]
            if current not in (none, None):
                actions += [self.prepare_trace] + ([self.start_trace] if records else [])
        for action in actions:
            action()

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function('ProfilerStep#' + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit(self.current_action, None)

    def step(self):
        """The next step begins: the schedule decides whether it is recorded."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        previous = self.current_action
        action = self._scheduled(self.step_num + 1)
        self.step_num += 1
        self.current_action = action
        self._transit(previous, action)
        if self.record_steps:
            self.step_rec_fn = record_function('ProfilerStep#' + str(self.step_num))
            self.step_rec_fn.__enter__()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()
        return False

    # ---- results ------------------------------------------------------------------------

    def events(self):
        """The recorded events of the last cycle (all cycles with ``acc_events``)."""
        if self.profiler is None:
            raise AssertionError('Profiler must be initialized before accessing events')
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One row per op name (and input shapes, stack entries when asked): see ``EventList``."""
        if self.profiler is None:
            raise AssertionError('Profiler must be initialized before getting key averages')
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path, use_python_export=False):
        if self.profiler is None:
            raise AssertionError('Profiler must be initialized before exporting chrome trace')
        return self.profiler.export_chrome_trace(path)

    def export_stacks(self, path, metric='self_cpu_time_total'):
        if self.profiler is None:
            raise AssertionError('Profiler must be initialized before exporting stacks')
        return self.profiler.export_stacks(path, metric)

    def export_memory_timeline(self, path, device=None):
        raise NotImplementedError("leafgrad's profiler has no memory timeline")

    def add_metadata(self, key, value):
        self.preset_metadata[key] = f'"{value}"'

    def add_metadata_json(self, key, value):
        self.preset_metadata[key] = value

    def get_trace_id(self):
        return None if self.profiler is None else self.profiler.trace_id


def _parse_activities(activities):
    """The activity set, with PyTorch's errors for a repeated activity or a foreign item."""
    parsed = set()
    for item in activities:
        if isinstance(item, ProfilerActivity):
            if item in parsed:
                raise ValueError(f'Activity {item} specified more than once')
            parsed.add(item)
        elif isinstance(item, dict):
            for key in item:
                if key in parsed:
                    raise ValueError(f'Activity {key} specified more than once')
                parsed.add(key)
        else:
            raise TypeError(f'Expected ProfilerActivity or dict, got {type(item)}')
    return parsed
