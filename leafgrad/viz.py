"""Drawing the recorded graph: ``leafgrad.viz.draw(loss, params=dict(model.named_parameters()))``.

``draw`` returns a ``Graph``: its ``source`` is Graphviz DOT text (always available, no
dependency); ``render``/``pipe`` and Jupyter's ``_repr_svg_`` turn it into SVG or PNG with
Graphviz's ``dot`` program (through the ``graphviz`` Python package when it is installed,
otherwise by running ``dot`` directly).

Legend (one colour and shape per kind; ``legend()`` draws it, docs/viz.md shows it):

=============  ===================  ======================================================
kind           look                 meaning
=============  ===================  ======================================================
leaf_grad      green box            leaf that requires grad: backward() keeps its ``.grad``
leaf_nograd    white dashed box     leaf that asked for no gradient (data, labels, frozen)
intermediate   white ellipse        non-leaf tensor: its gradient passes through, is freed
retained       yellow ellipse       non-leaf that keeps ``.grad`` (``retain_grad()``)
op             grey rounded box     a recorded op (Node) with the bytes it saved
op_freed       grey dashed box      an op whose saved tensors a backward() has freed
accumulate     blue box             AccumulateGrad: adds the gradient into a leaf's ``.grad``
hook           red "cds" shape      a hook: tensor ``register_hook``, node pre/post hooks
saved          yellow note          a tensor an op saved for backward: shape, dtype, bytes
=============  ===================  ======================================================

Arrows follow the forward computation (input -> op -> output); backward() walks them in
reverse. Dotted arrows go from a saved tensor to the op that saved it; dashed red arrows from a
hook to what it watches.

Design note. The walk is iterative (a stack, never recursion), visits each Node once and only
reads the graph's own fields (``next_functions``, ``_saved``, ``_retained``,
``_tensor_pre_hooks``), so drawing changes nothing and a deep network draws in milliseconds.
Intermediate tensors are not stored in the graph; the ones drawn are those the caller knows:
the roots, tensors named in ``params`` and tensors kept by ``retain_grad``.
"""
import os
import shutil
import subprocess

from .autograd.graph import AccumulateGrad
from .autograd.memory import saved_entries, storage_of
from .tensor import Tensor

STYLES = {
    'leaf_grad': dict(shape='box', style='filled', fillcolor='#b2f2bb'),
    'leaf_nograd': dict(shape='box', style='dashed', fillcolor='white'),
    'intermediate': dict(shape='ellipse', style='filled', fillcolor='white'),
    'retained': dict(shape='ellipse', style='filled', fillcolor='#ffec99'),
    'op': dict(shape='box', style='rounded,filled', fillcolor='#dee2e6'),
    'op_freed': dict(shape='box', style='rounded,dashed,filled', fillcolor='#f8f9fa', fontcolor='#868e96'),
    'accumulate': dict(shape='box', style='filled', fillcolor='#a5d8ff'),
    'hook': dict(shape='cds', style='filled', fillcolor='#ffc9c9'),
    'saved': dict(shape='note', style='filled', fillcolor='#fff3bf'),
}
EDGE_STYLES = {
    'flow': {},
    'saved': dict(style='dotted', arrowhead='odot'),
    'hook': dict(style='dashed', color='#e03131', arrowhead='dot'),
}
LEGEND = [
    ('leaf_grad', 'leaf: keeps .grad'),
    ('leaf_nograd', 'leaf: no gradient asked'),
    ('intermediate', 'intermediate: gradient\npasses through, freed'),
    ('retained', 'intermediate: retain_grad()\nkeeps .grad'),
    ('op', 'op (Node) + bytes saved'),
    ('op_freed', 'op after backward():\nsaved tensors freed'),
    ('accumulate', 'AccumulateGrad\n(.grad += gradient)'),
    ('hook', 'hook'),
    ('saved', 'saved tensor:\nshape dtype bytes'),
]


class GraphvizNotFound(RuntimeError):
    """Rendering needs Graphviz's ``dot`` program, which is not installed."""


class GraphNode:
    """One drawn node: ``id`` in the DOT text, ``kind`` (a key of STYLES), ``label``."""
    __slots__ = ('id', 'kind', 'label', 'obj')

    def __init__(self, id, kind, label, obj=None):
        self.id, self.kind, self.label, self.obj = id, kind, label, obj

    def __repr__(self):
        return f'GraphNode({self.id}, {self.kind}, {self.label!r})'


class Graph:
    """A drawn graph: DOT text always; SVG/PNG through Graphviz's ``dot``."""

    def __init__(self, nodes, edges, legend=False, name='leafgrad'):
        self.nodes = nodes    # [GraphNode]
        self.edges = edges    # [(tail id, head id, kind, label)]
        self.name = name
        self.legend = legend
        self._source = None

    def nodes_of(self, kind):
        return [n for n in self.nodes if n.kind == kind]

    def node(self, label_start):
        """The first node whose label starts with ``label_start`` (for tests and scripts)."""
        for n in self.nodes:
            if n.label.startswith(label_start):
                return n
        raise KeyError(label_start)

    def node_by_id(self, node_id):
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def source(self):
        if self._source is None:
            self._source = self._dot()
        return self._source

    def __str__(self):
        return self.source

    def __repr__(self):
        return f'<leafgrad.viz.Graph: {len(self.nodes)} nodes, {len(self.edges)} edges; .source is DOT>'

    def _dot(self):
        out = [f'digraph {self.name} {{',
               '  graph [rankdir=TB, fontname="Helvetica", fontsize=10];',
               '  node [fontname="Helvetica", fontsize=10, margin="0.08,0.04"];',
               '  edge [fontname="Helvetica", fontsize=9, arrowsize=0.7];']
        for n in self.nodes:
            out.append(f'  {n.id} [label={_quote(n.label)}, {_attrs(STYLES[n.kind])}];')
        kinds = {n.id: n.kind for n in self.nodes}
        for tail, head, kind, label in self.edges:
            attrs = dict(EDGE_STYLES[kind])
            if kind == 'saved' and kinds.get(tail) in ('intermediate', 'retained'):
                attrs['constraint'] = 'false'  # an op saving its own output: no loop in the layout
            if label:
                attrs['label'] = label
            extra = f' [{_attrs(attrs)}]' if attrs else ''
            out.append(f'  {tail} -> {head}{extra};')
        if self.legend:
            out.extend(_legend_cluster())
        out.append('}')
        return '\n'.join(out) + '\n'

    # -- rendering ---------------------------------------------------------------------------
    def pipe(self, format='svg'):
        """The rendered bytes (``format`` is any Graphviz output format: svg, png, pdf)."""
        return _run_dot(self.source, format)

    def render(self, filename, format=None):
        """Write the graph to ``filename``; the format comes from the suffix (.dot/.gv is DOT
        text, needing nothing; .svg/.png/.pdf need Graphviz). Returns the filename."""
        if format is None:
            format = os.path.splitext(filename)[1].lstrip('.').lower() or 'svg'
        if format in ('dot', 'gv'):
            with open(filename, 'w') as f:
                f.write(self.source)
            return filename
        data = self.pipe(format)
        with open(filename, 'wb') as f:
            f.write(data)
        return filename

    def _repr_svg_(self):
        # Jupyter shows the SVG; without Graphviz it falls back to repr() (no error cell).
        try:
            return self.pipe('svg').decode('utf-8')
        except GraphvizNotFound:
            return None


def _quote(text):
    return '"' + text.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') + '"'


def _attrs(d):
    return ', '.join(f'{k}={_quote(str(v))}' for k, v in d.items())


def _legend_cluster(columns=3):
    lines = ['  subgraph cluster_legend {', '    label="legend"; fontsize=10; color="#adb5bd";']
    ids = [f'legend_{kind}' for kind, _ in LEGEND]
    for nid, (kind, text) in zip(ids, LEGEND):
        lines.append(f'    {nid} [label={_quote(text)}, {_attrs(STYLES[kind])}];')
    for row in range(0, len(ids), columns):   # a grid: rows share a rank, columns are chained
        lines.append('    { rank=same; ' + '; '.join(ids[row:row + columns]) + '; }')
        lines.append('    ' + ' -> '.join(ids[row:row + columns]) + ' [style=invis];')  # keep the order
        for i in range(row, min(row + columns, len(ids))):
            if i + columns < len(ids):
                lines.append(f'    {ids[i]} -> {ids[i + columns]} [style=invis];')
    lines.append('  }')
    return lines


_MISSING = ("rendering to {fmt} needs Graphviz's `dot` program, which was not found on PATH. Install "
            'Graphviz (Debian/Ubuntu: `apt-get install graphviz`; macOS: `brew install graphviz`; conda: '
            '`conda install graphviz`) -- or use graph.source, the DOT text, which needs nothing.')


def _run_dot(source, fmt):
    try:
        import graphviz  # (optional; loaded when first used)
    except ImportError:
        graphviz = None
    if graphviz is not None:
        try:
            return graphviz.Source(source).pipe(format=fmt)
        except graphviz.ExecutableNotFound:
            raise GraphvizNotFound(_MISSING.format(fmt=fmt)) from None
    exe = shutil.which('dot')
    if exe is None:
        raise GraphvizNotFound(_MISSING.format(fmt=fmt))
    proc = subprocess.run([exe, f'-T{fmt}'], input=source.encode('utf-8'), capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f'dot -T{fmt} failed: {proc.stderr.decode(errors="replace").strip()}')
    return proc.stdout


def legend():
    """The legend alone, as a Graph."""
    return Graph([], [], legend=True, name='legend')


# ---- labels --------------------------------------------------------------------------------

def _fmt_bytes(n):
    for unit in ('B', 'KiB', 'MiB', 'GiB'):
        if n < 1024 or unit == 'GiB':
            return f'{n} {unit}' if unit == 'B' else f'{n:.1f} {unit}'
        n /= 1024


def _desc(arr):
    dtype = arr.dtype.name
    return f'{list(arr.shape)} {dtype}'


def _saved_bytes(node):
    return sum(array.nbytes for _, _, _, array in saved_entries(node))


# ---- the walk ------------------------------------------------------------------------------

def draw(*roots, params=None, show_saved=True, legend=False):
    """Draw the graph that leads to ``roots`` (tensors). ``params`` maps names to tensors
    (``dict(model.named_parameters())``; non-leaf tensors may be named too, and are drawn).
    ``show_saved`` draws the tensors each op saved for backward. Returns a ``Graph``."""
    if len(roots) == 1 and isinstance(roots[0], (list, tuple)):
        roots = tuple(roots[0])
    for r in roots:
        if not isinstance(r, Tensor):
            raise TypeError(f'draw() expects tensors, got {type(r).__name__}')
    return _Drawer(params, show_saved).run(roots, legend)


class _Drawer:
    def __init__(self, params, show_saved):
        self.names = {}
        self.named = []
        for k, v in (params or {}).items():
            if isinstance(v, Tensor):
                self.names[id(v)] = k
                self.named.append(v)
        self.show_saved = show_saved
        self.nodes = []
        self.edges = []
        self.ids = {}          # id(object) -> dot id
        self.keep = []         # objects whose id() is a key: kept alive while drawing
        self.tensor_at = {}    # (id(node), output_nr) -> dot id of a known intermediate tensor
        self.produced = []     # (node, output_nr, dot id of that known intermediate tensor)
        self._storages = None

    def _add(self, obj, kind, label):
        nid = f'n{len(self.nodes)}'
        self.ids[id(obj)] = nid
        self.keep.append(obj)
        self.nodes.append(GraphNode(nid, kind, label, obj))
        return nid

    def _edge(self, tail, head, kind='flow', label=''):
        self.edges.append((tail, head, kind, label))

    # -- tensors -----------------------------------------------------------------------------
    def _tensor_name(self, t, default):
        return self.names.get(id(t), default)

    def leaf(self, t):
        nid = self.ids.get(id(t))
        if nid is not None:
            return nid
        desc = _desc(t._data)
        if t._requires_grad:
            kind = 'Parameter' if type(t).__name__ == 'Parameter' else 'leaf'
            grad = 'None' if t._grad is None else f'kept {list(t._grad._data.shape)}'
            nid = self._add(t, 'leaf_grad', f'{self._tensor_name(t, kind)}\n{desc}\n.grad: {grad}')
            meta = t._meta
            if meta is not None:
                for hook in (meta.hooks or {}).values():
                    self._hook(hook, nid, 'hook')
                for hook in (meta.post_acc_hooks or {}).values():
                    self._hook(hook, nid, 'post-accumulate hook')
        else:
            nid = self._add(t, 'leaf_nograd', f'{self._tensor_name(t, "leaf")}\n{desc}\nno gradient')
        self._storages = None
        return nid

    def intermediate(self, t, default='tensor'):
        """A known non-leaf tensor, drawn between its grad_fn and that op's consumers."""
        nid = self.ids.get(id(t))
        if nid is not None:
            return nid
        retained = t._meta is not None and t._meta.retains_grad
        grad = ''
        if retained:
            grad = '\n.grad: ' + ('None (kept at backward)' if t._grad is None else f'kept {list(t._grad._data.shape)}')
        label = f'{self._tensor_name(t, default)}\n{_desc(t._data)}' + (grad or '\ngrad passes, freed')
        nid = self._add(t, 'retained' if retained else 'intermediate', label)
        self.ids.setdefault(id(t._data), nid)  # its grad_fn may save it as a SavedOutput
        self.tensor_at[(id(t._grad_fn), t._output_nr)] = nid
        self.produced.append((t._grad_fn, t._output_nr, nid))
        return nid

    def _hook(self, fn, target, what):
        name = getattr(fn, '__qualname__', None) or getattr(fn, '__name__', None) or type(fn).__name__
        hid = self._add(fn, 'hook', f'{what}\n{name}')
        self._edge(hid, target, 'hook')

    # -- nodes -------------------------------------------------------------------------------
    def op(self, node):
        if type(node) is AccumulateGrad:
            nid = self._add(node, 'accumulate', 'AccumulateGrad')
            self._edge(self.leaf(node.variable), nid)
            return nid
        saved = node._saved
        if saved is None:
            nid = self._add(node, 'op_freed', f'{node.name()}\nsaved tensors freed')
        else:
            label = node.name()
            summary = getattr(node, 'compiled_summary', None)  # a compiled region: what it holds
            if summary is not None:
                label += '\n' + summary()
            if saved:
                label += f'\nsaved {_fmt_bytes(_saved_bytes(node))}'
            nid = self._add(node, 'op', label)
        for hooks, what in ((node._pre_hooks, 'node prehook'), (node._post_hooks, 'node hook')):
            for hook in (hooks or {}).values():
                self._hook(hook, nid, what)
        return nid

    def saved(self, node, nid):
        for n, (i, role, s, array) in enumerate(saved_entries(node)):
            if role == 'leaf' and s is not None:
                sid = self.leaf(s)   # a leaf (with or without grad) is drawn as itself
            elif role == 'intermediate' and id(s) in self.ids:
                sid = self.ids[id(s)]
            else:
                # One note per array: an op's saved output is often saved again as the next
                # op's input (ReLU's result, used by the next Linear).
                sid = self.ids.get(id(array))
                if sid is None:
                    if role == 'output':
                        what = f'saved: output of {node.name()}'
                    elif s is None:    # kept by a saved_tensors_hooks pack hook
                        what = f'saved by a pack hook ({role})'
                    else:
                        what = f'saved: output of {s._grad_fn.name()}'
                    owner = self._leaf_storage().get(id(storage_of(array)))
                    view = f'\nmemory of {owner}' if owner else ''
                    sid = self._add(array, 'saved', f'{what}{view}\n{_desc(array)}\n{_fmt_bytes(array.nbytes)}')
            self._edge(sid, nid, 'saved', 'saved' if n == 0 else '')

    def _leaf_storage(self):
        """{id(storage): name} of the leaves drawn so far (a saved view of a weight says so)."""
        if self._storages is None:
            self._storages = {id(storage_of(g.obj._data)): g.label.split('\n')[0]
                              for g in self.nodes if g.kind in ('leaf_grad', 'leaf_nograd')}
        return self._storages

    def run(self, roots, legend):
        # Tensors the caller knows are drawn first, so edges can pass through them.
        for k, t in enumerate(list(roots) + self.named):
            if t._grad_fn is not None:
                self.intermediate(t, 'output' if k < len(roots) else 'tensor')
        for t in roots:
            if t._grad_fn is None:
                self.leaf(t)
        # Retained tensors found on the way are drawn as they are met (below).
        start = []
        for t in list(roots) + self.named:
            fn = t._grad_fn
            if fn is None and t._requires_grad and t._accumulator is not None:
                fn = t._accumulator()
            if fn is not None:
                start.append(fn)
        seen = set()
        stack = []
        for fn in reversed(start):
            if fn not in seen:
                seen.add(fn)
                stack.append(fn)
        order = []
        while stack:
            node = stack.pop()
            order.append(node)
            self.op(node)
            for nxt, _ in reversed(node.next_functions):
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        for node in order:
            nid = self.ids[id(node)]
            if node._retained:
                for nr, ref in node._retained.items():
                    t = ref()
                    if t is not None:
                        self.intermediate(t)
            for nr, hooks in (node._tensor_pre_hooks or {}).items():
                target = self.tensor_at.get((id(node), nr), nid)
                for hook in hooks.values():
                    self._hook(hook, target, 'hook' if target != nid else f'hook on output {nr}')
            if self.show_saved and node._saved:
                self.saved(node, nid)
        # Edges: producer -> (known tensor ->) consumer.
        for node in order:
            nid = self.ids[id(node)]
            multi = node.num_outputs > 1
            for nxt, nr in node.next_functions:
                if nxt is None:
                    continue
                via = self.tensor_at.get((id(nxt), nr))
                self._edge(via or self.ids[id(nxt)], nid, 'flow', str(nr) if multi and via is None else '')
        for fn, nr, tid in self.produced:
            producer = self.ids.get(id(fn))
            if producer is not None:
                self._edge(producer, tid, 'flow', str(nr) if fn.num_outputs > 1 else '')
        for n in self.nodes:
            n.obj = None   # a kept Graph must not keep the tensors and their graph alive
        return Graph(self.nodes, self.edges, legend=legend)


__all__ = ['draw', 'legend', 'Graph', 'GraphNode', 'GraphvizNotFound', 'STYLES', 'LEGEND']
