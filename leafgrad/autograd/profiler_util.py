"""The profiler's results, as ``torch.autograd.profiler_util``: one ``FunctionEvent`` per recorded
call, ``EventList`` (``table``, ``key_averages``, ``total_average``, ``export_chrome_trace``,
``export_stacks``) and ``FunctionEventAvg``, the per-name sums that ``key_averages`` returns.

Times are microseconds (floats), as in PyTorch. An event's *self* time is its time less its
direct children's; its self memory likewise. The table has PyTorch's columns and layout.
"""
import enum
import json
import os
from collections import defaultdict

__all__ = ['DeviceType', 'EventList', 'FunctionEvent', 'FunctionEventAvg', 'Interval']


class DeviceType(enum.Enum):
    """Where an event ran; leafgrad's profiler records CPU events only."""
    CPU = 0
    CUDA = 1


class Interval:
    """A start and an end, in microseconds."""
    __slots__ = ('start', 'end')

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f'Interval(start={self.start}, end={self.end})'


def _format_time(time_us):
    if time_us >= 1e6:
        return f'{time_us / 1e6:.3f}s'
    if time_us >= 1e3:
        return f'{time_us / 1e3:.3f}ms'
    return f'{time_us:.3f}us'


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return 'NaN'
    return f'{time_us * 100.0 / total_us:.2f}%'


def _format_memory(nbytes):
    for unit, size in (('GB', 1 << 30), ('MB', 1 << 20), ('KB', 1 << 10)):
        if abs(nbytes) >= size:
            return f'{nbytes / size:.2f} {unit}'
    return f'{nbytes} B'


class _Formatted:
    """The ``*_str`` views and the per-call average shared by events and their sums."""

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = property(lambda self: _format_time(0.0))
    device_time_total_str = device_time_str
    self_device_time_total_str = device_time_str


class FunctionEvent(_Formatted):
    """One recorded call: an op (``aten::mul``), a backward node (``MulBackward0`` inside
    ``autograd::engine::evaluate_function: MulBackward0``) or a ``record_function`` range."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None, scope=0,
                 cpu_memory_usage=0, is_user_annotation=False, sequence_nr=-1, trace_name=None):
        self.id = id
        self.name = name
        self.trace_name = name if trace_name is None else trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = thread
        self.input_shapes = input_shapes
        self.stack = stack
        self.scope = scope
        self.cpu_memory_usage = cpu_memory_usage
        self.is_user_annotation = is_user_annotation
        self.sequence_nr = sequence_nr
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.kernels = []
        self.node_id = -1
        self.device_type = DeviceType.CPU
        self.device_index = 0
        self.use_device = None
        self.overload_name = ''
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.is_python_function = False
        self.flops = 0
        self.device_memory_usage = 0
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(child.cpu_memory_usage for child in self.cpu_children)

    device_time_total = self_device_time_total = property(lambda self: 0.0)
    self_device_memory_usage = property(lambda self: 0)

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    def __repr__(self):
        return (f'<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} '
                f'device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} '
                f'start_us={self.time_range.start} end_us={self.time_range.end} '
                f'cpu_children={[child.id for child in self.cpu_children]} None_time={self.device_time_str} '
                f'name={self.name} thread={self.thread} input_shapes={self.input_shapes} '
                f'cpu_memory_usage={self.cpu_memory_usage} None_memory_usage=0 is_async=False '
                f'is_remote=False seq_nr={self.sequence_nr} is_legacy=False>')


class FunctionEventAvg(_Formatted):
    """The sums over the events that share a key (``key_averages``), or over all (``total_average``)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.is_legacy = False
        self.is_user_annotation = False
        self.use_device = None
        self.device_type = DeviceType.CPU
        self.cpu_time_total = 0
        self.self_cpu_time_total = 0
        self.device_time_total = 0
        self.self_device_time_total = 0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_children = None
        self.cpu_parent = None
        self.flops = 0

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.input_shapes = other.input_shapes
            self.overload_name = other.overload_name
            self.stack = other.stack
            self.scope = other.scope
        if other.key != self.key:
            raise AssertionError(f'Expected keys to match, but got {other.key} vs {self.key}')
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        return self

    __iadd__ = add

    def __repr__(self):
        return (f'<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} '
                f'cpu_time={self.cpu_time_str}  self_cuda_time={self.self_device_time_total_str} '
                f'cuda_time={self.device_time_str} input_shapes={self.input_shapes} '
                f'cpu_memory_usage={self.cpu_memory_usage} cuda_memory_usage=0>')


class EventList(list):
    """A list of events (or of their sums) that prints as PyTorch's table."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch's text table.

        ``sort_by``: an attribute, largest first (``self_cpu_time_total``, ``cpu_time_total``,
        ``cpu_time``, ``count``, ``cpu_memory_usage``, ``self_cpu_memory_usage``); by default in
        recording order. ``time_unit``: ``'s'``, ``'ms'`` or ``'us'`` for every time shown.
        """
        return _build_table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only, time_unit,
                            self._profile_memory)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """One ``FunctionEventAvg`` per name (and input shapes, and top stack entries, if asked)."""
        stats = defaultdict(FunctionEventAvg)
        for event in self:
            key = [event.key, str(event.node_id), str(event.device_type), str(event.is_user_annotation)]
            if group_by_overload_name:
                key.append(event.overload_name)
            if group_by_input_shapes:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key += (event.stack or [])[:group_by_stack_n]
            stats[tuple(key)].add(event)
        averages = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                             with_flops=self._with_flops)
        for avg in averages:
            avg.stack = (avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ''
            if not group_by_overload_name:
                avg.overload_name = ''
        return averages

    def total_average(self):
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
            total.key = None
        total.key = 'Total'
        return total

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (open in chrome://tracing or Perfetto)."""
        _write_chrome_trace(self, path)

    def supported_export_stacks_metrics(self):
        return ['self_cpu_time_total', 'self_cuda_time_total', 'self_xpu_time_total',
                'self_privateuse1_time_total']

    def export_stacks(self, path, metric):
        """One line per event with a stack: its frames outermost first, then the metric (integer
        microseconds), the input of flame-graph tools."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError('metric should be one of: ' + str(self.supported_export_stacks_metrics()))
        spaces = str.maketrans(' ;\t\n', '____')
        attr = 'self_cpu_time_total' if metric == 'self_cpu_time_total' else 'self_device_time_total'
        with open(path, 'w') as f:
            for event in self:
                value = int(getattr(event, attr))
                if event.stack and value > 0:
                    f.write(';'.join(entry.translate(spaces) for entry in reversed(event.stack)) + f' {value}\n')


def _build_table(events, sort_by, row_limit, max_src_column_width, max_name_column_width,
                 max_shapes_column_width, header, top_level_events_only, time_unit, profile_memory):
    if len(events) == 0:
        return ''
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace('cuda', 'device')), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]

    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    src_width = None
    if stacks:
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ['Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg']
    if profile_memory:
        headers += ['CPU Mem', 'Self CPU Mem']
    headers.append('# of Calls')
    # columns: (width, alignment); two spaces after each, as PyTorch pads them
    columns = [(name_width, '>')] + [(12, '>')] * (len(headers) - 1)
    if has_shapes:
        headers.append('Input Shapes')
        columns.append((shapes_width, '>'))
    if stacks:
        headers.append('Source Location')
        columns.append((src_width, '<'))
    row_format = ''.join('{: ' + align + str(width) + '}  ' for width, align in columns)
    separator = ''.join('-' * width + '  ' for width, _ in columns)
    line_length = sum(width + 2 for width, _ in columns) - 2

    def show_time(time_us):
        if time_unit == 's':
            return f'{time_us / 1e6:.3f}s'
        if time_unit == 'ms':
            return f'{time_us / 1e3:.3f}ms'
        if time_unit == 'us':
            return f'{time_us:.3f}us'
        return _format_time(time_us)

    def trim_path(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = '...' + path[3:]
        return path

    total_self = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ['=' * line_length, header]
    if top_level_events_only:
        lines += ['=' * line_length, 'This report only display top-level ops statistics']
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_events_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + '...'
        event.self_cpu_percent = _format_time_share(event.self_cpu_time_total, total_self)
        event.total_cpu_percent = _format_time_share(event.cpu_time_total, total_self)
        row = [name, event.self_cpu_percent, show_time(event.self_cpu_time_total), event.total_cpu_percent,
               show_time(event.cpu_time_total), show_time(event.cpu_time)]
        if profile_memory:
            row += [_format_memory(event.cpu_memory_usage), _format_memory(event.self_cpu_memory_usage)]
        row.append(event.count)
        if has_shapes:
            row.append(str(event.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim_path(event.stack[0]) if event.stack else '')
        lines.append(row_format.format(*row))
        if stacks:
            blank = [''] * (len(headers) - 1)
            for entry in (event.stack or [])[1:]:
                lines.append(row_format.format(*blank, trim_path(entry)))
            lines.append(row_format.format(*blank, ''))
    lines += [separator, f'Self CPU time total: {show_time(total_self)}']
    return '\n'.join(lines) + '\n'


def _write_chrome_trace(events, path, process_name='python'):
    """The events in the Chrome trace event format (a JSON object with ``traceEvents``, complete
    events ``"ph": "X"`` with microsecond ``ts`` and ``dur``), as PyTorch writes it."""
    pid = os.getpid()
    trace = [{'ph': 'M', 'name': 'process_name', 'pid': pid, 'tid': 0, 'args': {'name': process_name}},
             {'ph': 'M', 'name': 'process_labels', 'pid': pid, 'tid': 0, 'args': {'labels': 'CPU'}}]
    for event in events:
        if not isinstance(event, FunctionEvent):
            continue
        args = {'External id': event.id, 'Sequence number': event.sequence_nr}
        if event.input_shapes is not None:
            args['Input Dims'] = event.input_shapes
        if event.stack:
            args['Call stack'] = ';'.join(event.stack)
        trace.append({'ph': 'X', 'cat': 'user_annotation' if event.is_user_annotation else 'cpu_op',
                      'name': event.trace_name, 'pid': pid, 'tid': event.thread,
                      'ts': event.time_range.start, 'dur': event.time_range.elapsed_us(), 'args': args})
    document = {'schemaVersion': 1, 'deviceProperties': [], 'displayTimeUnit': 'ms', 'traceEvents': trace,
                'traceName': os.fspath(path)}
    opener = open
    if os.fspath(path).endswith('.gz'):
        import gzip  # (loaded when first used: only .gz traces need it)
        opener = gzip.open
    with opener(path, 'wt') as f:
        json.dump(document, f)
