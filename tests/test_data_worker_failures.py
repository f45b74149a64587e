"""DataLoader workers that fail, against torch: an exception in a worker comes back with its type
and PyTorch's "Caught X in DataLoader worker process N." form; a worker that dies is reported at
once; Ctrl-C gives one traceback (the main process's), none from the workers."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

torch = pytest.importorskip('torch')

import leafgrad as lg  # noqa: E402
import leafgrad.utils.data as ld  # noqa: E402


def _worker_error(T, exc):
    class Failing(T.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise exc

    with pytest.raises(Exception) as info:
        next(iter(T.utils.data.DataLoader(Failing(), batch_size=2, num_workers=1)))
    return info.value


def _form(message):
    """The message without the frames (which name each library's own files)."""
    lines = str(message).split('\n')
    return lines[:2] + [line for line in lines[2:] if not line.startswith(' ')]


def test_worker_key_error_comes_back_as_torchs():
    """A KeyError prints the repr of its argument: PyTorch's message keeps its lines all the same."""
    mine, theirs = _worker_error(lg, KeyError('b')), _worker_error(torch, KeyError('b'))
    assert type(mine) is type(theirs) is KeyError
    assert _form(mine) == _form(theirs) == ['Caught KeyError in DataLoader worker process 0.',
                                            'Original Traceback (most recent call last):', "KeyError: 'b'", '']
    assert repr(mine).startswith('KeyError(Caught KeyError in DataLoader worker process 0.\nOriginal')


@pytest.mark.parametrize('exc', [ValueError('bad sample'), IndexError(3)], ids=repr)
def test_worker_exception_comes_back_with_its_type(exc):
    error = _worker_error(lg, exc)
    assert type(error) is type(exc)
    assert _form(error) == [f'Caught {type(exc).__name__} in DataLoader worker process 0.',
                            'Original Traceback (most recent call last):', f'{type(exc).__name__}: {exc}', '']


class _NeedsTwoArguments(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


def test_worker_exception_that_cannot_be_rebuilt_comes_back_as_runtime_error():
    error = _worker_error(lg, _NeedsTwoArguments(1, 2))
    assert type(error) is RuntimeError  # as PyTorch: the type cannot be made from one message
    assert _form(error)[0] == 'Caught _NeedsTwoArguments in DataLoader worker process 0.'


def test_worker_init_fn_error_comes_back_with_the_first_batch():
    def init(worker_id):
        raise ValueError(f'no init for {worker_id}')
    loader = ld.DataLoader(list(range(4)), batch_size=2, num_workers=1, worker_init_fn=init)
    with pytest.raises(ValueError, match='Caught ValueError in DataLoader worker process 0') as info:
        next(iter(loader))
    assert 'no init for 0' in str(info.value)


class _StuckAfterFirst:
    """Batch 0 at once (it carries the worker's pid); every later sample hangs."""
    def __init__(self, T):
        self.T = T

    def __len__(self):
        return 100

    def __getitem__(self, i):
        if i >= 2:
            time.sleep(60)
        return self.T.tensor([os.getpid()])


def _kill_a_worker(T):
    # With timeout=20, a loader that only polls its workers now and then would report
    # "timed out" instead: the death must be noticed as it happens.
    loader = T.utils.data.DataLoader(_StuckAfterFirst(T), batch_size=2, num_workers=2, timeout=20)
    it = iter(loader)
    pid = int(next(it)[0, 0])
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(RuntimeError) as info:
        next(it)
    del it
    return str(info.value).replace(str(pid), 'N'), str(info.value.__cause__).replace(str(pid), 'N')


def test_killed_worker_is_reported_at_once_as_torch():
    # (PyTorch's SIGCHLD handler gives the cause; its check of the workers the message)
    assert _kill_a_worker(lg) == ('DataLoader worker (pid(s) N) exited unexpectedly',
                                  'DataLoader worker (pid N) is killed by signal: Killed. ')


def test_worker_exiting_with_an_error_code_is_reported_as_torch():
    class Exits(ld.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            os._exit(3)
    with pytest.raises(RuntimeError, match=r'DataLoader worker \(pid\(s\) \d+\) exited unexpectedly') as info:
        next(iter(ld.DataLoader(Exits(), batch_size=2, num_workers=1, timeout=20)))
    assert 'exited unexpectedly with exit code 3. Details are lost due to multiprocessing.' in str(
        info.value.__cause__)


_CTRL_C = textwrap.dedent('''
    import sys, time
    T = __import__(sys.argv[1])
    class Slow(T.utils.data.Dataset):
        def __len__(self):
            return 10 ** 6
        def __getitem__(self, i):
            time.sleep(0.05)
            return T.tensor([float(i)])
    for i, b in enumerate(T.utils.data.DataLoader(Slow(), batch_size=2, num_workers=2)):
        if i == 1:
            print('ready', flush=True)
''')


def _as_at_a_terminal():
    """In the child, before Python starts: SIGINT as a terminal gives it. A process started in the
    background by a shell without job control (CI launched with '&', nohup) ignores SIGINT, and
    an ignored SIGINT is inherited through exec: Python then installs no KeyboardInterrupt handler
    and Ctrl-C does nothing (the loader ran on, seen as a hang past 60 s)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def _interrupt(module):
    run = subprocess.Popen([sys.executable, '-c', _CTRL_C, module], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True, preexec_fn=_as_at_a_terminal)
    try:
        assert run.stdout.readline() == 'ready\n'
        time.sleep(0.2)  # the workers are busy with their next batches
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    return err


def test_ctrl_c_gives_one_traceback():
    """As PyTorch: the main process reports the KeyboardInterrupt; the workers end silently."""
    err = _interrupt('leafgrad')
    assert err.count('Traceback') == 1 and err.rstrip().endswith('KeyboardInterrupt'), err[-3000:]
