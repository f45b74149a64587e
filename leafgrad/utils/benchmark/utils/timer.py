"""``Timer``: ``timeit.Timer`` with warm-up, a fixed thread count, and replicated measurements.

``blocked_autorange`` first grows the block size (executions per timed run) by powers of ten
until the timer's own overhead is under 0.01% of a block (or a block takes a thousandth of
``min_run_time``), then times blocks until ``min_run_time`` has passed. ``adaptive_autorange``
keeps timing blocks until the spread of the times (IQR / median) is under ``threshold`` or
``max_run_time`` has passed.
"""
import enum
import textwrap
import timeit

import numpy as np

import leafgrad  # (the namespace timed statements see as torch, as PyTorch's Timer gives them torch)

from .... import cuda
from . import common

__all__ = ['Timer', 'timer', 'Language']


def timer():
    """The default clock: ``timeit.default_timer``, after waiting for the GPU when there is one."""
    if cuda.is_available():
        cuda.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time the Python statement ``stmt`` (after ``setup``) with ``globals``, on ``num_threads``
    threads; ``label``, ``sub_label``, ``description`` and ``env`` name the result in printed
    measurements and in ``Compare``. ``torch`` in ``stmt`` is leafgrad unless ``globals`` says
    otherwise."""

    def __init__(self, stmt='pass', setup='pass', global_setup='', timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError('Currently only a `str` stmt is supported.')
        if language in (Language.CPP, 'cpp', 'c++'):
            raise NotImplementedError("leafgrad's Timer times Python statements only (language='c++')")
        if language not in (Language.PYTHON, 'py', 'python'):
            raise ValueError(f'Invalid language `{language}`.')
        if global_setup:
            raise ValueError(f'global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be '
                             'moved to `setup`.')
        self._globals = dict(globals or {})
        self._globals.setdefault('torch', leafgrad)
        self._language = Language.PYTHON
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == '\n' else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == '\n' else setup).rstrip()
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)  # a zero time would break the statistics

    def timeit(self, number=1000000):
        """One run of ``number`` executions, after a warm-up of a hundredth as many."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError('See `Timer.blocked_autorange.`')

    def autorange(self, callback=None):
        raise NotImplementedError('See `Timer.blocked_autorange.`')

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True, retain_out_file=False):
        raise NotImplementedError("leafgrad's Timer does not run statements under Callgrind (collect_callgrind)")

    def _measurement_loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total = 0.0
        can_stop = False
        times = []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of executions (their size chosen so that the timer's overhead is negligible),
        timed until ``min_run_time`` seconds have passed; ``callback(number, time)`` after each."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Like ``blocked_autorange``, but timing blocks until IQR / median < ``threshold`` (with
        more than 3 blocks and ``min_run_time`` spent) or ``max_run_time`` has passed."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and common.Measurement(number_per_run=number, raw_times=times,
                                                         task_spec=self._task_spec).meets_confidence(threshold)
        times = self._measurement_loop(number, stop, min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
