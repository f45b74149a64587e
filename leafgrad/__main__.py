"""``python -m leafgrad``: run a PyTorch program on leafgrad.

Every ``import torch``, ``import torch.X`` and ``from torch.X import Y`` in the program (and in
whatever it imports) resolves to leafgrad's module of the same name (``leafgrad/_torch_alias.py``);
PyTorch itself is never loaded. The program runs as ``python`` would run it: ``sys.argv``,
``__name__ == '__main__'``, ``__file__``, ``sys.path[0]``, exit status, and tracebacks that hold
the program's frames, not this runner's.
"""
import builtins
import importlib.machinery
import os
import runpy  # (python -m leafgrad runs through it: loaded already)
import sys

from . import _torch_alias
from ._torch_alias import install

USAGE = """\
usage: python -m leafgrad SCRIPT [ARGS...]      run a PyTorch script on leafgrad
       python -m leafgrad -m MODULE [ARGS...]   run a module as 'python -m MODULE' would (e.g. -m pytest)
       python -m leafgrad -c COMMAND [ARGS...]  run a command as 'python -c COMMAND' would

Every 'import torch' (torch.nn, torch.utils.data, ...) in the program resolves to leafgrad; PyTorch
itself is never loaded. Inside a program or notebook, leafgrad.install_as_torch() does the same."""


def main(argv):
    if not argv or argv[0] in ('-h', '--help'):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    option = argv[0] if argv[0] in ('-m', '-c') else None
    if argv[0].startswith('-') and option is None:
        return _usage_error(f'unknown option {argv[0]}')
    if option and len(argv) < 2:
        return _usage_error(f'Argument expected for the {option} option')
    install()
    sys.excepthook = _ProgramFramesOnly(sys.excepthook)
    try:
        if option == '-m':
            _run_module(argv[1], argv[2:])
        elif option == '-c':
            _run_command(argv[1], argv[2:])
        else:
            _run_script(argv[0], argv[1:])
    except BaseException:
        if not isinstance(sys.excepthook, _ProgramFramesOnly):  # the program set its own hook
            sys.excepthook = _ProgramFramesOnly(sys.excepthook)
        raise
    return 0


def _usage_error(message):
    print(f'{USAGE}\n\npython -m leafgrad: {message}', file=sys.stderr)
    return 2


def _fresh_main(**attributes):
    """A new ``__main__`` module for the program, as the interpreter makes one."""
    main = type(sys)('__main__')
    main.__dict__.update(__builtins__=builtins, __annotations__={}, **attributes)
    sys.modules['__main__'] = main
    return main


def _run_script(path, args):
    sys.argv = [path, *args]
    if _is_directory_or_zip(path):  # runs its __main__.py; python puts it first on the path
        if sys.flags.safe_path:
            sys.path.insert(0, os.path.abspath(path))
        else:
            sys.path[0] = os.path.abspath(path)
        _fresh_main()
        runpy._run_module_as_main('__main__', alter_argv=False)
        return
    file = os.path.abspath(path)
    try:
        with open(file, 'rb') as f:
            source = f.read()
    except OSError as e:
        print(f"{sys.executable}: can't open file {file!r}: [Errno {e.errno}] {e.strerror}", file=sys.stderr)
        sys.exit(2)
    if not sys.flags.safe_path:
        sys.path[0] = os.path.dirname(os.path.realpath(file))
    main = _fresh_main(__file__=file, __cached__=None,
                       __loader__=importlib.machinery.SourceFileLoader('__main__', file))
    exec(compile(source, file, 'exec', dont_inherit=True), main.__dict__)


def _is_directory_or_zip(path):
    if os.path.isdir(path):
        return True
    import zipfile  # (loaded when first used: only a path that is no .py file needs it)
    return not path.endswith('.py') and zipfile.is_zipfile(path)


def _run_module(name, args):
    sys.argv = ['-m', *args]  # as python's -m: '-m' while the module is found, then its file
    _fresh_main()
    runpy._run_module_as_main(name)  # what 'python -m' itself calls


def _run_command(command, args):
    sys.argv = ['-c', *args]
    if not sys.flags.safe_path:
        sys.path[0] = ''
    main = _fresh_main(__loader__=importlib.machinery.BuiltinImporter)
    exec(compile(command, '<string>', 'exec', dont_inherit=True), main.__dict__)


class _ProgramFramesOnly:
    """An excepthook that shows the program's traceback as ``python`` would: without the frames of
    this runner and runpy around the program, and of the torch alias inside a failed import."""

    def __init__(self, hook):
        self.hook = hook

    def __call__(self, exc_type, exc, tb):
        hidden = (globals(), runpy.__dict__, _torch_alias.__dict__)
        seen = set()
        chained = exc
        while chained is not None and id(chained) not in seen:
            seen.add(id(chained))
            chained.__traceback__ = _without_frames(chained.__traceback__, hidden)
            chained = chained.__cause__ or chained.__context__
        self.hook(exc_type, exc, _without_frames(tb, hidden))


def _without_frames(tb, hidden):
    """The traceback ``tb`` without the entries whose frame runs in one of the ``hidden`` globals."""
    kept = []
    while tb is not None:
        if not any(tb.tb_frame.f_globals is g for g in hidden):
            kept.append(tb)
        tb = tb.tb_next
    for entry, after in zip(kept, kept[1:] + [None]):
        entry.tb_next = after
    return kept[0] if kept else None


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
