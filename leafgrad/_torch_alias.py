"""``import torch`` answered by leafgrad: every ``torch`` and ``torch.A.B`` import resolves to
``leafgrad`` and ``leafgrad.A.B``, the very module objects (``torch.nn is leafgrad.nn``), and
PyTorch, even where it is installed, is never loaded. ``functorch``, which PyTorch installs
beside ``torch``, resolves to ``leafgrad.functorch``.

One meta-path finder, first in ``sys.meta_path``, claims the names ``torch`` and ``torch.*`` and
maps them by name, so that any module or package leafgrad has is found under its ``torch`` name
without being listed anywhere. Its loader hands the import system the leafgrad module itself.
The import system then sets that module's ``__spec__`` to the ``torch`` spec
(``importlib._bootstrap._init_module_attrs`` always does); the loader puts leafgrad's own spec
back, which leafgrad's relative imports and ``importlib.reload`` read. Python's import system
then records the module under its ``torch`` name in ``sys.modules`` and as an attribute of its
parent, which is already there.

A process that multiprocessing starts afresh (the 'spawn' method) gets the alias too: the finder
adds to ``multiprocessing.spawn``'s preparation data an object whose unpickling installs it in
the child before the child imports the program's main module.

Used by ``python -m leafgrad`` (``leafgrad/__main__.py``) and ``leafgrad.install_as_torch()``.
"""
import importlib.machinery
import importlib.util
import sys

ALIAS = 'torch'
TARGET = __name__.rpartition('.')[0]  # 'leafgrad'


def _leafgrad_name(fullname):
    """'torch.nn.functional' -> 'leafgrad.nn.functional', 'functorch' (the package PyTorch ships
    beside torch) -> 'leafgrad.functorch'; None for a name outside them."""
    if fullname == ALIAS or fullname.startswith(ALIAS + '.'):
        return TARGET + fullname[len(ALIAS):]
    if fullname == 'functorch' or fullname.startswith('functorch.'):
        return TARGET + '.' + fullname
    return None


class TorchAliasFinder:
    """Finds ``torch`` and ``torch.*`` as leafgrad's modules of the same names."""

    def find_spec(self, fullname, path=None, target=None):
        name = _leafgrad_name(fullname)
        if name is None:
            if fullname == 'multiprocessing.spawn':  # (loaded when a process is first spawned)
                return _spawn_spec(fullname, path)
            return None  # every import in the process asks here first: keep this path short
        if name not in sys.modules and not _exists(name):
            # Raised here rather than answered with None, so that the traceback says why: PyTorch's
            # message (a module PyTorch lacks too raises PyTorch's error), and a note under it
            # naming leafgrad; importlib.util.find_spec('torch.X') raises it too.
            error = ModuleNotFoundError(f"No module named '{fullname}'", name=fullname)
            error.add_note(f'(leafgrad, which stands in for PyTorch here, does not have {fullname})')
            raise error
        return importlib.util.spec_from_loader(fullname, _LeafgradLoader(name))

    def __repr__(self):
        return f'<{type(self).__name__}: {ALIAS} -> {TARGET}>'


def _spawn_spec(fullname, path):
    spec = importlib.machinery.PathFinder.find_spec(fullname, path)
    if spec is not None and spec.loader is not None:
        spec.loader = _SpawnLoader(spec.loader)
    return spec


def _exists(name):
    """Whether leafgrad has the module ``name`` (found, not run)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its parent is a module, not a package
        return False


class _LeafgradLoader:
    """Hands the import system leafgrad's module ``name`` for its torch name."""

    def __init__(self, name):
        self.name = name
        self.spec = None

    def create_module(self, spec):
        __import__(self.name)  # a builtin: no frame of its own in a traceback
        module = sys.modules[self.name]
        self.spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self.spec  # _init_module_attrs replaced it with the torch spec


FINDER = TorchAliasFinder()


def install():
    """Put the finder first in ``sys.meta_path`` (once); refuse if PyTorch is already loaded."""
    for name, module in sorted(sys.modules.items(), key=lambda item: (item[0].split('.')[0] != ALIAS, item[0])):
        # ('torch' first, then its submodules, then functorch's)
        if _leafgrad_name(name) is None:
            continue
        if module is None:  # a remembered failed import: forget it, leafgrad may have the module
            del sys.modules[name]
        elif not getattr(module, '__name__', '').startswith(TARGET):
            raise RuntimeError(
                f"PyTorch is already imported in this process (sys.modules['{name}'] is {module!r}), so "
                "'import torch' can no longer mean leafgrad: call leafgrad.install_as_torch() before the first "
                "'import torch' (in a notebook: restart the kernel), or run the program with "
                "'python -m leafgrad script.py'")
    if not sys.meta_path or sys.meta_path[0] is not FINDER:
        if FINDER in sys.meta_path:
            sys.meta_path.remove(FINDER)
        sys.meta_path.insert(0, FINDER)
    spawn = sys.modules.get('multiprocessing.spawn')
    if spawn is not None:  # (otherwise the finder patches it when it is first imported)
        _in_spawned_processes_too(spawn)


class _InstallInChild:
    """Unpickled by a process that multiprocessing starts afresh (the 'spawn' method: a new
    interpreter), as part of its preparation data, before that process imports the program's main
    module as ``__mp_main__``: it installs the alias there too, so that the child's ``import torch``
    means leafgrad as the parent's does (a forked child inherits the finder itself)."""

    def __reduce__(self):
        return install, ()


def _in_spawned_processes_too(spawn):
    if getattr(spawn.get_preparation_data, 'installs_torch_alias', False):
        return
    original = spawn.get_preparation_data

    def get_preparation_data(name):
        data = original(name)
        data['leafgrad_torch_alias'] = _InstallInChild()  # (spawn.prepare reads only its own keys)
        return data
    get_preparation_data.installs_torch_alias = True
    spawn.get_preparation_data = get_preparation_data


class _SpawnLoader:
    """multiprocessing.spawn's own loader, and then the patch that passes the alias on."""

    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _in_spawned_processes_too(module)
