"""``python -m leafgrad`` and ``leafgrad.install_as_torch()``: every ``torch`` import resolves to
leafgrad's modules, PyTorch is never loaded, and the program runs as ``python`` would run it
(argv, ``__main__``, ``__file__``, ``sys.path[0]``, tracebacks, exit status)."""
import json
import os
import signal
import sys
import textwrap

import pytest

import leafgrad
from fresh import run_python

torch = pytest.importorskip('torch')

TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))

# A PyTorch program's imports, and what they should be under `python -m leafgrad`.
PROGRAM = '''
import json, os, sys, typing
import torch
from torch import nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data
from torch.utils.data import DataLoader, TensorDataset
from torch.nn.functional import relu
import leafgrad, helper

leafgrad.install_as_torch()
leafgrad.install_as_torch()
finder = sys.meta_path[0]
try:
    import torch.no_such_submodule
except ImportError as e:
    missing = [type(e).__name__, e.name, str(e)]
torch_dir = sys.argv[1]
real_torch = [name for name, m in list(sys.modules.items())
              if os.path.abspath(getattr(m, '__file__', None) or '/').startswith(torch_dir + os.sep)]
class MyTensor(torch.Tensor):
    pass


def annotated(x: torch.Tensor) -> torch.Tensor:
    return x


x = torch.ones(2, 3)
isinstance_checks = [
    isinstance(x, torch.Tensor), isinstance(nn.Parameter(x), torch.Tensor), isinstance(MyTensor([1.0]), torch.Tensor),
    isinstance(x.shape, torch.Size), isinstance(x.shape, tuple), isinstance(x.dtype, torch.dtype),
    isinstance(torch.float64, torch.dtype), isinstance(x.device, torch.device),
    isinstance(torch.device('cpu'), torch.device),
    isinstance(torch.Generator(), torch.Generator), isinstance(torch.default_generator, torch.Generator),
    typing.get_type_hints(annotated) == {'x': torch.Tensor, 'return': torch.Tensor}]
print(json.dumps({
    'isinstance': isinstance_checks,
    'types': [str(type(x)), str(type(x.shape)), str(type(x.dtype)), str(type(x.device)), str(type(nn.Parameter(x)))],
    'same_objects': [torch is leafgrad, nn is leafgrad.nn, F is leafgrad.nn.functional, optim is leafgrad.optim,
                     torch.utils.data is leafgrad.utils.data, DataLoader is leafgrad.utils.data.DataLoader,
                     relu is leafgrad.nn.functional.relu, sys.modules['torch.nn'] is leafgrad.nn,
                     sys.modules['leafgrad.nn'] is leafgrad.nn],
    'specs': [torch.__spec__.name, nn.__spec__.name, F.__spec__.name, torch.utils.data.__spec__.name],
    'finder_once': sys.meta_path.count(finder) == 1 and 'leafgrad' in repr(finder),
    'missing': missing,
    'real_torch': real_torch,
    'hasattr': [hasattr(torch, 'no_such_namespace'), hasattr(torch, 'nn'), hasattr(torch, 'linalg')],
    'main': [__name__, __file__, sys.argv, sys.path[0], helper.__file__],
}))
'''


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def test_script_imports_resolve_to_leafgrad_and_never_load_torch(tmp_path):
    write(tmp_path / 'prog.py', PROGRAM)
    write(tmp_path / 'helper.py', '')  # found through sys.path[0], the script's directory
    script = os.path.join(tmp_path.name, 'prog.py')  # run from another directory than the script's
    run = run_python('-W', 'error', '-m', 'leafgrad', script, TORCH_DIR, cwd=tmp_path.parent)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out['same_objects'] == [True] * 9
    assert out['specs'] == ['leafgrad', 'leafgrad.nn', 'leafgrad.nn.functional', 'leafgrad.utils.data']
    assert out['finder_once']
    kind, name, message = out['missing']
    assert (kind, name) == ('ModuleNotFoundError', 'torch.no_such_submodule')
    assert message == "No module named 'torch.no_such_submodule'"  # (PyTorch's; leafgrad is named in a note)
    assert out['real_torch'] == []
    assert out['hasattr'] == [False, True, True]
    assert out['isinstance'] == [True] * 12
    assert out['types'] == ["<class 'leafgrad.Tensor'>", "<class 'leafgrad.Size'>", "<class 'leafgrad.dtype'>",
                            "<class 'leafgrad.device'>", "<class 'leafgrad.nn.parameter.Parameter'>"]
    assert out['main'] == ['__main__', str(tmp_path / 'prog.py'), [script, TORCH_DIR], str(tmp_path),
                           str(tmp_path / 'helper.py')]


# Programs that end badly, run by `python` and by `python -m leafgrad`: the same output, traceback
# and exit status. None of them imports torch, so `python` runs them without loading PyTorch.
ENDINGS = {
    'exception': '''
        import helper
        def f(x):
            return helper.divide(1, x)
        if __name__ == '__main__':
            print('started')
            f(0)
        ''',
    'chained': '''
        try:
            {}['key']
        except KeyError as e:
            raise RuntimeError('wrapped') from e
        ''',
    'exit status': '''
        import sys
        print('out')
        sys.exit(3)
        ''',
    'exit message': '''
        raise SystemExit('bye')
        ''',
    'syntax error': '''
        x = 1
        def (
        ''',
    'interrupt': '''
        raise KeyboardInterrupt
        ''',
}


@pytest.mark.parametrize('ending', ENDINGS)
def test_ending_as_python(tmp_path, ending):
    write(tmp_path / 'prog.py', ENDINGS[ending])
    write(tmp_path / 'helper.py', '''
        def divide(a, b):
            return a / b
        ''')
    direct = run_python('prog.py', cwd=tmp_path)
    alias = run_python('-m', 'leafgrad', 'prog.py', cwd=tmp_path)
    assert direct.returncode != 0
    assert (alias.returncode, alias.stdout, alias.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    if ending == 'interrupt':
        assert alias.returncode == -signal.SIGINT


def test_directory_runs_as_python(tmp_path):
    app = tmp_path / 'app'
    app.mkdir()
    write(app / '__main__.py', '''
        import sys
        print(__name__, __spec__.name, __file__, sys.argv, sys.path[0])
        ''')
    direct = run_python('app', 'x', cwd=tmp_path)
    alias = run_python('-m', 'leafgrad', 'app', 'x', cwd=tmp_path)
    assert direct.returncode == 0 and (alias.returncode, alias.stdout, alias.stderr) == (0, direct.stdout, '')


def test_failed_torch_import_traceback_shows_only_the_program(tmp_path):
    write(tmp_path / 'prog.py', '''
        import torch
        import torch.no_such_submodule
        ''')
    run = run_python('-m', 'leafgrad', 'prog.py', cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        'Traceback (most recent call last):',
        f'  File "{tmp_path / "prog.py"}", line 3, in <module>',
        '    import torch.no_such_submodule',
        "ModuleNotFoundError: No module named 'torch.no_such_submodule'",
        '(leafgrad, which stands in for PyTorch here, does not have torch.no_such_submodule)']


def test_a_module_pytorch_lacks_too_raises_pytorchs_message(tmp_path):
    """The error's message is PyTorch's (a program that catches it and prints it, or stops at
    it, prints what it prints under PyTorch); leafgrad is named in a note under it."""
    write(tmp_path / 'prog.py', '''
        try:
            from torch.nn.utils._stateless import functional_call
        except ImportError as e:
            print(type(e).__name__, e, e.name)
        ''')
    pytorch = run_python('prog.py', cwd=tmp_path)
    alias = run_python('-m', 'leafgrad', 'prog.py', cwd=tmp_path)
    assert pytorch.returncode == alias.returncode == 0, (pytorch.stderr, alias.stderr)
    assert alias.stdout == pytorch.stdout == \
        "ModuleNotFoundError No module named 'torch.nn.utils._stateless' torch.nn.utils._stateless\n"


def test_module_mode_as_python_m(tmp_path):
    package = tmp_path / 'pkg'
    package.mkdir()
    write(package / '__init__.py', '')
    write(package / 'helper.py', 'NAME = __name__\n')
    write(package / 'mod.py', '''
        import json, sys
        import torch.nn as nn
        from . import helper
        print(json.dumps([__name__, __spec__.name, __file__, sys.argv, sys.path[0], helper.NAME, nn.__name__]))
        ''')
    run = run_python('-m', 'leafgrad', '-m', 'pkg.mod', 'a', '-b', cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    mod = str(package / 'mod.py')
    assert json.loads(run.stdout) == ['__main__', 'pkg.mod', mod, [mod, 'a', '-b'], str(tmp_path), 'pkg.helper',
                                      'leafgrad.nn']
    missing = run_python('-m', 'leafgrad', '-m', 'no_such_module_here', cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (1, f'{sys.executable}: No module named no_such_module_here\n')


def test_pytest_runs_a_torch_test_on_leafgrad(tmp_path):
    write(tmp_path / 'test_tiny.py', '''
        import torch

        def test_tiny():
            x = torch.ones(2, requires_grad=True)
            (x * 3).sum().backward()
            assert torch.__name__ == 'leafgrad' and x.grad.tolist() == [3.0, 3.0]
        ''')
    run = run_python('-m', 'leafgrad', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_tiny.py', cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert '1 passed' in run.stdout


def test_command_mode_and_usage(tmp_path):
    run = run_python('-m', 'leafgrad', '-c', 'import sys, torch; print(torch.__name__, sys.argv, repr(sys.path[0]))',
                     'x', cwd=tmp_path)
    assert run.stdout == "leafgrad ['-c', 'x'] ''\n", run.stderr
    usage = run_python('-m', 'leafgrad', '--help', cwd=tmp_path)
    assert usage.returncode == 0 and usage.stdout.startswith('usage: python -m leafgrad SCRIPT')
    bare = run_python('-m', 'leafgrad', cwd=tmp_path)
    assert bare.returncode == 2 and bare.stderr.startswith('usage: python -m leafgrad SCRIPT')
    absent = run_python('-m', 'leafgrad', 'absent.py', cwd=tmp_path)
    direct = run_python('absent.py', cwd=tmp_path)
    assert direct.returncode == 2 and (absent.returncode, absent.stderr) == (direct.returncode, direct.stderr)


def test_install_as_torch_refuses_once_torch_is_loaded():
    # This test process has imported PyTorch (the oracle): 'import torch' cannot become leafgrad.
    before = list(sys.meta_path)
    with pytest.raises(RuntimeError, match=r"PyTorch is already imported.*sys.modules\['torch'\]"):
        leafgrad.install_as_torch()
    assert sys.meta_path == before


# ---- leafgrad's namespaces load on first use; a missing one is an AttributeError -----------------

def test_missing_namespace_is_attribute_error():
    assert not hasattr(leafgrad, 'no_such_namespace')
    with pytest.raises(AttributeError, match="^module 'leafgrad' has no attribute 'no_such_namespace'$"):
        leafgrad.no_such_namespace
    assert getattr(leafgrad, '__wrapped__', None) is None


@pytest.fixture
def extra_leafgrad_modules(tmp_path, monkeypatch):
    """Module files in a directory added to leafgrad's package path, removed afterwards."""
    write(tmp_path / 'alias_probe_new.py', 'VALUE = 7\n')
    write(tmp_path / 'alias_probe_broken.py', 'import alias_probe_absent_dependency\n')
    monkeypatch.setattr(leafgrad, '__path__', [*leafgrad.__path__, str(tmp_path)])
    yield
    for name in ('alias_probe_new', 'alias_probe_broken'):
        sys.modules.pop(f'leafgrad.{name}', None)
        leafgrad.__dict__.pop(name, None)


def test_any_submodule_loads_on_first_use(extra_leafgrad_modules):
    assert 'leafgrad.alias_probe_new' not in sys.modules
    assert leafgrad.alias_probe_new.VALUE == 7
    assert hasattr(leafgrad, 'alias_probe_new')


def test_import_error_inside_a_submodule_propagates(extra_leafgrad_modules):
    with pytest.raises(ModuleNotFoundError) as info:
        hasattr(leafgrad, 'alias_probe_broken')
    assert info.value.name == 'alias_probe_absent_dependency'


# ---- types print as PyTorch's, with leafgrad's name ------------------------------------------------

def _function(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2
    return Double


TYPED = {
    'tensor': lambda lib: lib.ones(2),
    'parameter': lambda lib: lib.nn.Parameter(lib.ones(2)),
    'size': lambda lib: lib.ones(2, 3).shape,
    'dtype': lambda lib: lib.float32,
    'device': lambda lib: lib.device('cpu'),
    'op node': lambda lib: (lib.ones(2, requires_grad=True) * 2).grad_fn,
    'reduction node': lambda lib: lib.ones(2, requires_grad=True).sum().grad_fn,
    'AccumulateGrad': lambda lib: (lib.ones(2, requires_grad=True) * 2).grad_fn.next_functions[0][0],
    'custom Function node': lambda lib: _function(lib).apply(lib.ones(2, requires_grad=True)).grad_fn,
    'module': lambda lib: lib.nn.Linear(2, 3),
}


@pytest.mark.parametrize('what', TYPED)
def test_type_prints_as_torch(what):
    theirs = str(type(TYPED[what](torch)))
    ours = str(type(TYPED[what](leafgrad)))
    assert ours.replace('leafgrad', 'torch') == theirs


def test_spawned_processes_import_leafgrad_too(tmp_path):
    """A process started by the 'spawn' method (a new interpreter, as pytorch/examples'
    mnist_hogwild starts its trainers) imports the program's main module afresh: its ``import
    torch`` is leafgrad's too, and it takes the parent's tensors (a shared one among them) as its
    own."""
    write(tmp_path / 'prog.py', '''
        import torch.multiprocessing as mp
        import torch


        def child(t, shared, q):
            q.put([isinstance(t, torch.Tensor), type(t).__name__, (t * 2).tolist()])
            shared.add_(1)


        if __name__ == '__main__':
            ctx = mp.get_context('spawn')
            shared = torch.zeros(3).share_memory_()
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(torch.tensor([1.5, 2.0]), shared, q))
            p.start()
            print(q.get())
            p.join()
            print(p.exitcode, shared.tolist())
        ''')
    direct = run_python('prog.py', cwd=tmp_path)
    alias = run_python('-m', 'leafgrad', 'prog.py', cwd=tmp_path)
    assert direct.returncode == 0, direct.stderr
    assert (alias.returncode, alias.stdout) == (0, direct.stdout), alias.stderr
    assert direct.stdout == "[True, 'Tensor', [3.0, 4.0]]\n0 [1.0, 1.0, 1.0]\n"
