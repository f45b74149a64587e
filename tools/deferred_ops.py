#!/usr/bin/env python
"""The names that leafgrad's deferred op families bind, read off the families themselves:
writes leafgrad/ops/_deferred.py, or checks that it is current.

    python tools/deferred_ops.py [--write] [--families a,b,c]

A deferred family is imported on first use (ops/__init__.py): until then, what it binds stands
in its place. This runs ``import leafgrad`` in a fresh interpreter with every family imported at
once, in ``FAMILIES`` order, and records what each deferred family binds as it is imported: its
functions (``__all__``), the Tensor attributes and the names in ``ops`` it sets. It refuses a
family that cannot be deferred without a change a program could see: one that another module
imports during ``import leafgrad``, one that binds a property on Tensor (an attribute that can
be set: a stand-in cannot be one), one whose
names a later family or module binds again, one that adds to another module's tables.

Without --write it prints what differs from leafgrad/ops/_deferred.py and exits 1 if anything
does (tests/test_deferred_ops.py runs it so). --families: the families to defer (default: those
_deferred.py lists).
"""
import argparse
import ast
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
TARGET = os.path.join(ROOT, 'leafgrad', 'ops', '_deferred.py')

# Run in a fresh interpreter, argv[1] the families (comma-separated): every family imported by
# ops/__init__.py's loop, each import watched. Prints JSON: {'names': {family: [functions, Tensor
# attributes, ops names]}, 'errors': [...]}.
PROGRAM = r'''
import importlib, json, sys, types
families = sys.argv[1].split(',')
fake = types.ModuleType('leafgrad.ops._deferred')
fake.DEFERRED = {}  # (every family imported with the others)
sys.modules[fake.__name__] = fake
errors, seen, before = [], {}, {}
# the tables a family may add to: the declarations, the parser's cache of parameter types, and what
# only the op's own code reads (its operands' signatures by name, its method's code)
KNOWN = {('leafgrad.ops._op', 'declared'), ('leafgrad._arg_parser', '_OP_TYPES'), ('leafgrad.ops._util', 'OPERANDS'),
         ('leafgrad._arg_parser', 'METHOD_CODES')}

def tables():
    sizes = {}
    # (a known table imported by name into another module is the same table there)
    known = {id(vars(sys.modules[m]).get(k)) for m, k in KNOWN if m in sys.modules}
    for name, module in list(sys.modules.items()):
        if name.startswith('leafgrad') and isinstance(module, types.ModuleType):
            for key, value in list(vars(module).items()):
                if isinstance(value, (dict, list, set)) and not key.startswith('__') and (name, key) not in KNOWN \
                        and id(value) not in known:
                    sizes[name, key] = len(value)
    return sizes

real_import = importlib.import_module
def watched(name, package=None):
    family = name[1:] if package == 'leafgrad.ops' and name.startswith('.') else None
    if family not in families:
        return real_import(name, package)
    if 'leafgrad.ops.' + family in sys.modules:
        errors.append(f'{family}: imported by another module during import leafgrad')
        return real_import(name, package)
    from leafgrad.tensor import Tensor
    from leafgrad.ops._util import ops
    t0, o0, s0 = dict(vars(Tensor)), dict(vars(ops)), tables()
    module = real_import(name, package)
    t1, o1, s1 = dict(vars(Tensor)), dict(vars(ops)), tables()
    changed = lambda a, b: {k: v for k, v in b.items() if k not in a or a[k] is not v}
    seen[family] = (module, changed(t0, t1), changed(o0, o1))
    for key in s0:
        if s1.get(key) != s0[key]:
            errors.append(f'{family}: adds to {key[0]}.{key[1]}')
    return module
importlib.import_module = watched
import leafgrad
importlib.import_module = real_import
from leafgrad.tensor import Tensor
from leafgrad.ops._util import ops
names = {}
for family in families:
    if family not in seen:
        errors.append(f'{family}: not imported by leafgrad.ops (not in FAMILIES?)')
        continue
    module, tensor, forwards = seen[family]
    for key, value in tensor.items():
        if hasattr(type(value), '__set__'):
            errors.append(f'{family}: binds the property Tensor.{key}')
        if vars(Tensor).get(key) is not value:
            errors.append(f'{family}: Tensor.{key} is bound again later')
    for key, value in forwards.items():
        if vars(ops).get(key) is not value:
            errors.append(f'{family}: ops.{key} is bound again later')
    for key in module.__all__:
        if vars(leafgrad.ops).get(key) is not getattr(module, key):
            errors.append(f'{family}: leafgrad.ops.{key} is bound again later')
    names[family] = [list(module.__all__), list(tensor), list(forwards)]
print(json.dumps({'names': names, 'errors': errors}))
'''

HEADER = '''"""The op families imported on first use (ops/__init__.py) and what each binds, in place from
the start: {family: (leafgrad.<name>, Tensor.<name>, ops.<name>)}.

Written by tools/deferred_ops.py --write from the families themselves (tests/test_deferred_ops.py
checks that it is current): run it after changing what a family here declares. A family moves
in or out by adding or removing its entry and running it.
"""
'''


def current_families():
    tree = ast.parse(open(TARGET).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == 'DEFERRED':
            return [k.value for k in node.value.keys]
    return []


def measure(families):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + ([os.environ['PYTHONPATH']]
                                                               if os.environ.get('PYTHONPATH') else [])))
    p = subprocess.run([sys.executable, '-c', PROGRAM, ','.join(families)], capture_output=True, text=True,
                       env=env, cwd=ROOT)
    if p.returncode:
        sys.exit(p.stderr)
    return json.loads(p.stdout)


def _tuple(names, indent):
    lines, line = [], indent + '('
    for n in names:
        item = repr(n) + ', '
        if len(line) + len(item) > 110:
            lines.append(line.rstrip())
            line = indent + ' '
        line += item
    lines.append((line.rstrip(', ') + (',' if len(names) == 1 else '') + ')') if names else indent + '()')
    return '\n'.join(lines)


def render(names):
    out = [HEADER, 'DEFERRED = {']
    for family, (public, tensor, forwards) in names.items():
        out.append(f'    {family!r}: (')
        out.extend([_tuple(public, ' ' * 8) + ',', _tuple(tensor, ' ' * 8) + ',', _tuple(forwards, ' ' * 8) + ','])
        out.append('    ),')
    out.append('}')
    return '\n'.join(out) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--write', action='store_true')
    parser.add_argument('--families')
    args = parser.parse_args(argv)
    families = args.families.split(',') if args.families else current_families()
    result = measure(families)
    if result['errors']:
        print('\n'.join(result['errors']))
        return 1
    text = render(result['names'])
    if args.write:
        with open(TARGET, 'w') as f:
            f.write(text)
        return 0
    if open(TARGET).read() != text:
        print('leafgrad/ops/_deferred.py is not current: run python tools/deferred_ops.py --write')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
