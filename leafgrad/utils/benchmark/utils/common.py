"""What a measurement is: ``TaskSpec`` (the statement and its labels) and ``Measurement`` (the
times of its runs, their statistics, and PyTorch's printed form).

PyTorch computes a few of these statistics in float32 (the unit chosen for a time, the
significant figures of a median); so does this module, so that a table shows the same digits.
"""
import collections
import contextlib
import dataclasses
import math
import textwrap

import numpy as np

from ...._settings import get_num_threads, set_num_threads

__all__ = ['TaskSpec', 'Measurement', 'select_unit', 'unit_to_english', 'trim_sigfig', 'ordered_unique',
           'set_torch_threads']

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _precision(x):
    """The float type PyTorch would compute with on ``torch.tensor(x)``: float64 for a NumPy
    float64, else (a Python float) the default float32."""
    return np.float64 if isinstance(x, np.float64) else np.float32


def _log10_f32(x):
    """log10 of ``x`` as PyTorch's tensor arithmetic gives it (the nearest float32, for a Python
    float)."""
    cast = _precision(x)
    x = float(cast(x))
    if x <= 0:
        return float('-inf') if x == 0 else float('nan')
    return float(cast(math.log10(x)))


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """A timed statement, its setup, and the labels that name it in printed results."""
    stmt: str
    setup: str
    global_setup: str = ''
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (and sub-label), else the statement."""
        if self.label is not None:
            return self.label + (f': {self.sub_label}' if self.sub_label else '')
        if '\n' not in self.stmt:
            return self.stmt + (f': {self.sub_label}' if self.sub_label else '')
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup == 'pass' or not self.setup:
            return ''
        if '\n' in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f'setup: {self.setup}'

    def summarize(self):
        """The title, description and setup: the head of a measurement's printed form."""
        sections = [self.title, self.description or '', self.setup_str()]
        return '\n'.join(f'{s}\n' if '\n' in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of ``len(raw_times)`` runs of ``number_per_run`` executions each.

    ``times`` are per execution; ``median``, ``mean`` and ``iqr`` are over them. The fields of
    ``task_spec`` (``label``, ``stmt``, ``num_threads`` …) read as the measurement's own."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """How many figures of the median the spread of the middle half of the times supports
        (1 to 4): the digits ``Compare`` keeps when trimming."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = np.asarray(self._sorted_times[n // 4:math.ceil(3 * n / 4)], dtype=np.float32)
        std = float(middle.std())
        sqrt_n = float(np.sqrt(np.float32(len(middle))))
        confidence_interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(_log10_f32(self._median / confidence_interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            times = np.asarray(self._sorted_times, dtype=np.float64)
            self._median = float(np.quantile(times, 0.5))
            self._mean = float(times.mean())
            self._p25 = float(np.quantile(times, 0.25))
            self._p75 = float(np.quantile(times, 0.75))
            for threshold, advice in ((_IQR_GROSS_WARN_THRESHOLD, 'This suggests significant environmental influence.'),
                                      (_IQR_WARN_THRESHOLD, 'This could indicate system fluctuation.')):
                if not self.meets_confidence(threshold):
                    self._warnings += (f'  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% '
                                       f'of the median measurement.\n           {advice}',)
                    break

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or '[Unknown]'

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [super().__repr__(), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f'  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})')
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} thread"
                     f"{'s' if self.num_threads > 1 else ''}")
        lines += self._warnings
        return '\n'.join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One measurement per task (``TaskSpec``), pooling the times of its replicates (per
        execution: ``number_per_run`` becomes 1; metadata is dropped)."""
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [Measurement(number_per_run=1, raw_times=[t for m in group for t in m.times], task_spec=task_spec)
                for task_spec, group in grouped.items()]


def select_unit(t):
    """The unit ('ns', 'us', 'ms' or 's') that shows ``t`` seconds with 1-3 leading digits, and its
    scale in seconds."""
    unit = {-3: 'ns', -2: 'us', -1: 'ms'}.get(int(_log10_f32(t) // 3), 's')
    return unit, {'ns': 1e-9, 'us': 1e-6, 'ms': 1e-3, 's': 1}[unit]


def unit_to_english(u):
    return {'ns': 'nanosecond', 'us': 'microsecond', 'ms': 'millisecond', 's': 'second'}[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError('Number of significant figures must be an integer')
    magnitude = math.ceil(_log10_f32(abs(x)))
    scale = 10 ** (magnitude - n)
    cast = _precision(x)
    return float(np.round(cast(x / scale)) * cast(scale))


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the block with leafgrad's CPU thread pool at ``n`` threads, then restore it."""
    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)
