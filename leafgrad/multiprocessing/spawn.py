"""``spawn``: ``nprocs`` processes running ``fn(i, *args)``, joined as PyTorch joins them: the
first process that raises (its traceback in the error) or exits with a nonzero code ends the
others, and the parent raises for it."""
import multiprocessing
import signal
import traceback

__all__ = ['spawn', 'start_processes', 'ProcessContext', 'SpawnContext', 'ProcessException',
           'ProcessRaisedException', 'ProcessExitedException']


class ProcessException(Exception):
    __slots__ = ['error_index', 'pid']

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process exited with a nonzero code or was killed by a signal."""
    __slots__ = ['exit_code', 'signal_name']

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, errors):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent process ends them all
    except Exception:
        errors.put((i, traceback.format_exc()))
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, errors):
        self.processes, self.error_queue = processes, errors
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Wait for the processes (up to ``timeout`` seconds); True once all have ended well.
        Raises for the first that failed, after ending the others."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            process = self.processes[i]
            process.join()
            if process.exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        process = self.processes[failed]
        reported = {}
        while not self.error_queue.empty():
            index, text = self.error_queue.get()
            reported[index] = text
        if failed not in reported:
            code = process.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f'process {failed} terminated with signal {name}', failed, process.pid,
                                             code, name)
            raise ProcessExitedException(f'process {failed} terminated with exit code {code}', failed, process.pid,
                                         code)
        raise ProcessRaisedException(f'\n\n-- Process {failed} terminated with the following error:\n'
                                     f'{reported[failed]}', failed, process.pid)


class SpawnContext(ProcessContext):
    pass


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'):
    context = multiprocessing.get_context(start_method)
    errors = context.SimpleQueue()
    processes = []
    for i in range(nprocs):
        process = context.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
        process.start()
        processes.append(process)
    running = ProcessContext(processes, errors)
    if not join:
        return running
    while not running.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'):
    """Start ``nprocs`` processes running ``fn(i, *args)`` (``i`` from 0); with ``join``, wait
    for them all and raise for the first that fails, else return their ``ProcessContext``."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
