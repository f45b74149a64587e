"""``Compare``: many measurements as one table per label, laid out as PyTorch lays it out.

Rows are the measurements' ``sub_label`` (or statement), grouped by thread count (and ``env``
when several); columns are their ``description``; each cell is the median in the unit of the
table's fastest result. Replicates of one task are pooled first (``Measurement.merge``).
"""
import collections
import enum
import math

from . import common

__all__ = ['Colorize', 'Compare']

BEST = '\033[92m'
GOOD = '\033[34m'
BAD = '\033[2m\033[91m'
VERY_BAD = '\033[31m'
BOLD = '\033[1m'
TERMINATE = '\033[0m'


class Colorize(enum.Enum):
    NONE = 'none'
    COLUMNWISE = 'columnwise'
    ROWWISE = 'rowwise'


class _Column:
    """How one column's numbers are printed: digits enough for its largest median, decimals as
    its measurements' significant figures allow (one decimal unless trimming)."""

    def __init__(self, grouped, scale, trim, highlight):
        self.grouped = grouped  # per thread group: that group's results in this column
        flat = [m for group in grouped for m in group]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in flat if m)
        digits = [math.ceil(common._log10_f32(m.median / scale)) if m else None for m in flat]
        unit_digits = max(d for d in digits if d is not None)
        decimals = min(max(m.significant_figures - d, 0) for d, m in zip(digits, flat)
                       if m is not None and d is not None) if trim else 1
        length = unit_digits + decimals + (1 if decimals else 0)
        self.template = f"{{:>{length}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def num_to_str(self, value, sigfigs, spread):
        if value is None:
            return ' ' * len(self.num_to_str(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        return self.template.format(value, f' (! {spread * 100:.0f}%)' if self.highlight and spread is not None else '')


def _colored(segment, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best * 2:
        return BAD + segment + TERMINATE * 2
    return segment


def _table(results, colorize, trim, highlight):
    """One label's measurements as text."""
    unit, scale = common.select_unit(min(r.median for r in results))
    row_key = lambda m: (m.num_threads, m.env, m.as_row_name)  # noqa: E731
    row_keys = common.ordered_unique(row_key(r) for r in results)
    row_keys.sort(key=lambda key: key[:2])  # by threads and env, keeping the statements' order
    col_keys = common.ordered_unique(r.description for r in results)
    cells = [[None] * len(col_keys) for _ in row_keys]
    for r in results:
        cells[row_keys.index(row_key(r))][col_keys.index(r.description)] = r
    envs = {r.env for r in results}
    show_env = len(envs) > 1
    env_width = max(len(e) for e in envs) if show_env else 0

    groups, row_group, row_threads, row_env_shown = [], [], [], []
    prior_threads, prior_env = -1, ''
    for (threads, env, _), row in zip(row_keys, cells):
        new_group = threads != prior_threads
        if new_group:
            prior_threads, prior_env = threads, ''
            groups.append([])
        groups[-1].append(row)
        row_group.append(len(groups) - 1)
        row_threads.append(threads if new_group else None)
        row_env_shown.append(show_env and env != prior_env)
        prior_env = env
    columns = [_Column([tuple(row[i] for row in group) for group in groups], scale, trim, highlight)
               for i in range(len(col_keys))]

    text_rows = [[''] + col_keys]
    for row, env_shown in zip(cells, row_env_shown):
        first = next(m for m in row if m is not None)
        env = (f'({first.env})' if env_shown else '').ljust(env_width + 4)
        text = ['  ' + env + first.as_row_name]
        for m, column in zip(row, columns):
            text.append(column.num_to_str(None, 1, None) if m is None else
                        column.num_to_str(m.median / scale, m.significant_figures,
                                          m.iqr / m.median if m.has_warnings else None))
        text_rows.append(text)
    width = max(len(r) for r in text_rows)
    for r in text_rows:
        r.extend([''] * (width - len(r)))
    widths = [max(len(cell) for cell in column) for column in zip(*text_rows)]
    lines = ['  |  '.join(cell.center(w) for cell, w in zip(text_rows[0], widths))]
    overall = len(lines[0])
    for text, row, group, threads in zip(text_rows[1:], cells, row_group, row_threads):
        if threads is not None:
            lines.append(f'{threads} threads: '.ljust(overall, '-'))
        if colorize == Colorize.ROWWISE:
            best = [min(m.median for m in row if m is not None)] * len(row)
        elif colorize == Colorize.COLUMNWISE:
            best = [min((m.median for m in column.grouped[group] if m is not None), default=None)
                    for column in columns]
        else:
            best = [None] * len(row)
        out = [text[0].ljust(widths[0])]
        for cell, w, m, b in zip(text[1:], widths[1:], row, best):
            cell = cell.center(w)
            if colorize != Colorize.NONE and m is not None and b is not None:
                cell = _colored(cell, m.median, b)
            out.append(cell)
        lines.append('  |  '.join(out))
    label = results[0].label
    warned = highlight and any(r.has_warnings for r in results)
    return (f"[{(' ' + (label or '') + ' ').center(overall - 2, '-')}]\n" + '\n'.join(lines) + '\n\n'
            + f'Times are in {common.unit_to_english(unit)}s ({unit}).\n'
            + ('(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n' if warned else ''))


class Compare:
    """A table of measurements: ``print(Compare(results))`` or ``Compare(results).print()``.
    ``trim_significant_figures()``, ``colorize(rowwise=False)`` and ``highlight_warnings()``
    change how it is drawn."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return '\n'.join(self._render())

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f'Expected an instance of `Measurement`, got {type(r)} instead.')
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for r in common.Measurement.merge(self._results):
            by_label[r.label].append(r)
        return [_table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings)
                for group in by_label.values()]
