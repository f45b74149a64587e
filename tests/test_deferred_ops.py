"""The op families imported on first use (leafgrad/ops/_deferred.py): ``import leafgrad`` leaves
them unloaded, and a program sees the same names, objects and behaviour as if they were loaded
with the others: leafgrad.<name>, Tensor.<name> (on the class and on a tensor), the late-bound
``ops``, dir(), ``from leafgrad import *`` and pickling."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sys.path.insert(0, ROOT)
from leafgrad.ops._deferred import DEFERRED  # noqa: E402


def run(code):
    """``code`` in a fresh interpreter (nothing loaded by other tests); its last printed line, as JSON."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + ([os.environ['PYTHONPATH']]
                                                               if os.environ.get('PYTHONPATH') else [])))
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_list_is_current():
    p = subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'deferred_ops.py')], capture_output=True,
                       text=True, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr


def test_import_leaves_them_unloaded():
    loaded = run('import json, sys, leafgrad; from leafgrad.ops._deferred import DEFERRED\n'
                 'print(json.dumps([f for f in DEFERRED if "leafgrad.ops." + f in sys.modules]))')
    assert loaded == []


def _names(family, route):
    public, methods, forwards = DEFERRED[family]
    return {'function': public, 'class': methods, 'tensor': methods, 'ops': forwards}[route]


# (only the routes by which a family binds a name: CI lets nothing skip)
@pytest.mark.parametrize('family,route', [(f, r) for r in ('function', 'class', 'tensor', 'ops')
                                          for f in sorted(DEFERRED) if _names(f, r)])
def test_first_read_binds_the_family_s_own(family, route):
    """Whichever name is read first, every name of the family is the family's own after it."""
    names = _names(family, route)
    first = {'function': f'leafgrad.{names[0]}', 'class': f'leafgrad.Tensor.{names[0]}',
             'tensor': f'getattr(leafgrad.ones(2, 2), {names[0]!r})',
             'ops': f'leafgrad.ops._util.ops.{names[0]}'}[route]
    checked = run(f'''
import json, sys, leafgrad
first = {first}
from leafgrad.ops._deferred import DEFERRED
from leafgrad.ops._util import ops
public, methods, forwards = DEFERRED[{family!r}]
m = sys.modules['leafgrad.ops.{family}']
wrong = [n for n in public if getattr(leafgrad.ops, n) is not getattr(m, n)]
wrong += [n for n in public if n in vars(leafgrad) and vars(leafgrad)[n] is not getattr(m, n)
          and type(vars(leafgrad)[n]).__name__ == '_Deferred']
wrong += ['Tensor.' + n for n in methods if type(vars(leafgrad.Tensor)[n]).__name__ == '_Deferred']
wrong += ['ops.' + n for n in forwards if n not in vars(ops)]
print(json.dumps(wrong))''')
    assert checked == []


def test_leafgrad_names_are_the_eager_ones():
    """leafgrad.<name> of a deferred function is the family's function, except where leafgrad
    binds a name of its own after the ops (as ``from .ops import *`` followed by its own did)."""
    wrong = run('''
import json, sys, leafgrad
from leafgrad.ops._deferred import DEFERRED
own = {n: v for n, v in vars(leafgrad).items() if n in leafgrad.ops.deferred_names}
leafgrad.ops.load()
wrong = [n for f, (public, _, _) in DEFERRED.items() for n in public
         if getattr(leafgrad, n) is not (own[n] if n in own else getattr(sys.modules['leafgrad.ops.' + f], n))]
print(json.dumps(wrong))''')
    assert wrong == []


def test_dir_star_import_and_all_see_every_op():
    names = '''
import json, leafgrad
before = [dir(leafgrad), dir(leafgrad.ops), dir(leafgrad.Tensor), sorted(leafgrad.ops.__all__)]
leafgrad.ops.load()
after = [dir(leafgrad), dir(leafgrad.ops), dir(leafgrad.Tensor), sorted(leafgrad.ops.__all__)]
public = lambda names: {n for n in names if not n.startswith('_')}  # (helper modules show once imported)
print(json.dumps([[sorted(public(a) ^ public(b)) for a, b in zip(before, after)]]))'''
    assert run(names) == [[[], [], [], []]]
    star = run('import json\nfrom leafgrad import *\nprint(json.dumps(sorted(n for n in ("svd", "lgamma", "softmax", '
               '"scatter", "bincount", "erf", "clamp", "put") if n not in globals())))')
    assert star == []
    star_ops = run('import json\nfrom leafgrad.ops import *\nprint(json.dumps([n for n in ("svd", "erf") '
                   'if n not in globals()]))')
    assert star_ops == []


def test_same_results_and_pickling_before_loading():
    out = run('''
import json, pickle, leafgrad
x = leafgrad.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
y = x.det() + leafgrad.lgamma(x).sum() + x.softmax(0)[0, 0] + x.clamp(0, 2.5).sum() + x.max()
y.backward()
f = pickle.loads(pickle.dumps(leafgrad.svd))
print(json.dumps([y.item(), x.grad.tolist(), type(y.grad_fn).__name__, f is leafgrad.svd,
                  leafgrad.Tensor.det is leafgrad.Tensor.det, hasattr(leafgrad.Tensor, 'slogdet')]))''')
    assert out[2:] == ['AddBackward0', True, True, True]
    import torch
    x = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    y = x.det() + torch.lgamma(x).sum() + x.softmax(0)[0, 0] + x.clamp(0, 2.5).sum() + x.max()
    y.backward()
    assert out[0] == pytest.approx(y.item())
    assert sum(out[1], []) == pytest.approx(sum(x.grad.tolist(), []))
