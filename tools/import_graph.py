#!/usr/bin/env python
"""The import graph of the leafgrad package, computed from its source: its cycles and its
upward arrows.

    python tools/import_graph.py [--edges] [--root leafgrad]

An *arrow* A -> B says that module A imports module B somewhere in its text (at its top or
inside a function: a deferred import is still a dependency, it only runs later). ``from . import
x`` points at the submodule x when there is one, else at the package; ``from .m import name``
points at m. Arrows into a package's ``__init__`` that only reach one of its submodules count
as arrows into that submodule.

A *cycle* is a strongly connected component of more than one module: modules that cannot be
read, tested or replaced one without the others.

An arrow is *upward* when it goes from a lower layer to a higher one. The layers, bottom to
top, are listed in ``LAYERS`` (a module belongs to the layer of its longest matching prefix);
within the op library, a family module (``leafgrad.ops.<family>``) importing another family is
counted upward too: a family should import only the shared utilities (``leafgrad.ops._*``) and
reach its siblings through a late-bound namespace looked up when it runs.
"""
import argparse
import ast
import os
import sys

# Bottom to top. A module may import from its own layer and the layers below it.
LAYERS = [
    # what every part uses: arrays, dtypes and devices, printing, settings of the process
    ('leafgrad.backend', 'leafgrad._kernel_math', 'leafgrad._random_kernels', 'leafgrad._special_kernels',
     'leafgrad._polynomial_kernels', 'leafgrad._bessel_kernels', 'leafgrad._ldl_kernels',
     'leafgrad._tensor_str', 'leafgrad.version', 'leafgrad._type_info', 'leafgrad._settings',
     'leafgrad.return_types', 'leafgrad._memory_format', 'leafgrad._meta',
     'leafgrad.backends.cpu',  # (the CPU's vector instructions, as NumPy reports them: imports nothing)
     'leafgrad.torch_version',  # (the version string and its ordering: imports nothing)
     'leafgrad._storage',  # (the bytes under a tensor, on a device)
     'leafgrad._shared_memory',  # (an array's memory moved into a shared mapping)
     'leafgrad._pytree',  # (nested tuples, lists and dicts flattened and built again: imports nothing)
     'leafgrad._warn'),  # (PyTorch's warnings: the caller's stacklevel, TORCH_WARN_ONCE)
    # the engine: grad modes, the recorded graph, the backward walk, views' bookkeeping
    ('leafgrad.autograd.grad_mode', 'leafgrad.autograd.anomaly', 'leafgrad.autograd.origins',
     'leafgrad.autograd.graph', 'leafgrad.autograd.engine', 'leafgrad.autograd.views',
     'leafgrad.autograd.memory'),
    # the tensor (and PyTorch's argument parser, which reads tensors' types; the random number
    # generators, whose state is a tensor)
    ('leafgrad.tensor', 'leafgrad._sequence', 'leafgrad._arg_parser', 'leafgrad.generator'),
    # what every op shares (the op declaration, the recording utilities, the autocast policy)
    ('leafgrad.ops._op', 'leafgrad.ops._util', 'leafgrad.ops._inplace', 'leafgrad.ops._index', 'leafgrad.ops._matrix',
     'leafgrad.amp.policy'),
    # the op families
    ('leafgrad.ops.',),
    # the op library as a whole, and what is built on the ops (the autograd package's own
    # modules above the engine: Function, gradcheck, forward mode, functional, the profiler;
    # the function transforms, vmap and its batching rules, which functional and gradcheck use)
    # (the legacy tensor types, constructors built on the factories, with them)
    ('leafgrad.ops', 'leafgrad.creation', 'leafgrad._tensor_types', 'leafgrad.random', 'leafgrad.functional',
     'leafgrad.linalg', 'leafgrad._linalg_ldl', 'leafgrad.special', 'leafgrad.testing', 'leafgrad.autograd',
     'leafgrad.autograd.',
     'leafgrad._transforms', 'leafgrad._vmap', 'leafgrad._vmap_nn'),
    # everything above: layers, optimizers, data, tools
    ('leafgrad.',),
    ('leafgrad',),
    # what is built on the public namespace as a whole, which nothing in it imports: the
    # __torch_function__ protocol (its switch wraps every public function), torch.fx (its
    # generated code calls leafgrad.cat ...), the benchmark Timer (its statements see torch)
    ('leafgrad.overrides', 'leafgrad.fx', 'leafgrad.fx.', 'leafgrad.utils.benchmark', 'leafgrad.utils.benchmark.'),
]


def module_files(root):
    """{module name: path} of every module under the package directory ``root``."""
    base = os.path.dirname(os.path.abspath(root))
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for f in sorted(files):
            if f.endswith('.py'):
                path = os.path.join(folder, f)
                parts = os.path.relpath(path, base)[:-3].split(os.sep)
                if parts[-1] == '__init__':
                    parts = parts[:-1]
                found['.'.join(parts)] = path
    return found


def imports_of(name, path, modules):
    """The leafgrad modules that module ``name`` (read from ``path``) imports."""
    is_package = path.endswith('__init__.py')
    package = name if is_package else name.rpartition('.')[0]
    tree = ast.parse(open(path, encoding='utf-8').read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in modules:
                    target = target.rpartition('.')[0]
                if target:
                    out.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')
                if node.level > 1:
                    base = base[:len(base) - node.level + 1]
                source = '.'.join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ''
            if source not in modules:
                continue
            for alias in node.names:
                sub = f'{source}.{alias.name}'
                out.add(sub if sub in modules else source)
    out.discard(name)
    return out


def graph(root='leafgrad'):
    modules = module_files(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def layer_of(name):
    best, best_len = len(LAYERS) - 1, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (name == p or (p.endswith('.') and name.startswith(p))) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def _family(name):
    parts = name.split('.')
    if len(parts) == 3 and parts[1] == 'ops' and not parts[2].startswith('_'):
        return parts[2]
    return None


def upward(edges):
    """The arrows that go up: from a lower layer to a higher one, or between two op families."""
    out = []
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if layer_of(a) < layer_of(b) or (_family(a) and _family(b)):
                out.append((a, b))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'leafgrad'))
    ap.add_argument('--edges', action='store_true', help='print every arrow')
    args = ap.parse_args(argv)
    edges = graph(args.root)
    if args.edges:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f'{a} -> {b}')
    found = cycles(edges)
    up = upward(edges)
    print(f'{len(edges)} modules, {sum(len(v) for v in edges.values())} arrows')
    print(f'{len(found)} cycles:')
    for c in found:
        inner = sum(1 for a in c for b in edges[a] if b in c)
        print(f'  {len(c)} modules, {inner} arrows: {" ".join(c)}')
    print(f'{len(up)} upward arrows:')
    for a, b in up:
        print(f'  {a} -> {b}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
