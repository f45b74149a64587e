"""Rules the test files keep so that the suite runs without the torch oracle (LEAFGRAD_NO_ORACLE=1,
tests/conftest.py): a module imports torch only after a guard that skips it without torch
(``pytest.importorskip('torch')``, or importing ``oracle``, which does that), or inside a
``try``/``except ImportError``, or through ``optable``'s optional ``torch``. Checked on the source,
so that a new file breaking it fails here and not only on a machine without PyTorch."""
import ast
import pathlib

import pytest

TESTS = pathlib.Path(__file__).parent
GUARDS = ('oracle', 'optable')


def _imports_torch(node):
    if isinstance(node, ast.Import):
        return any(a.name == 'torch' or a.name.startswith('torch.') for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and node.module is not None and (node.module == 'torch'
                                                                 or node.module.startswith('torch.'))
    return False


def _is_guard(node):
    if isinstance(node, ast.ImportFrom) and node.module in GUARDS:
        return True
    if isinstance(node, ast.Import) and any(a.name in GUARDS for a in node.names):
        return True
    for call in ast.walk(node):
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == 'importorskip'
                and call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == 'torch'):
            return True
    return False


def unguarded_torch_imports(source):
    """Line numbers of module-level torch imports with no guard before them."""
    guarded, bad = False, []
    for node in ast.parse(source).body:
        if isinstance(node, ast.If):  # (an `if torch is not None:` block: torch was guarded already)
            continue
        if _is_guard(node):
            guarded = True
        elif _imports_torch(node) and not guarded:
            bad.append(node.lineno)
    return bad


def test_the_rule_sees_an_unguarded_import_and_accepts_the_guards():
    assert unguarded_torch_imports('import pytest\nimport torch\n') == [2]
    assert unguarded_torch_imports('from torch.utils import data\n') == [1]
    assert unguarded_torch_imports("import pytest\ntorch = pytest.importorskip('torch')\nimport torch.nn\n") == []
    assert unguarded_torch_imports('from oracle import lg, torch\nfrom torch.testing import assert_close\n') == []
    assert unguarded_torch_imports('try:\n    import torch\nexcept ImportError:\n    torch = None\n') == []


@pytest.mark.parametrize('path', sorted(TESTS.glob('*.py')), ids=lambda p: p.name)
def test_torch_is_imported_behind_a_guard(path):
    assert unguarded_torch_imports(path.read_text(encoding='utf-8')) == [], \
        f'{path.name} imports torch without a guard: without PyTorch the suite would fail at collection'
