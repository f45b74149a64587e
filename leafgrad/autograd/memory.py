"""``memory_report(root)``: the bytes a graph holds, and what ``backward()`` will free.

Every recorded op keeps what its derivative needs (``Node._saved``): its inputs as tensors,
its outputs as ``SavedOutput`` (array + version counter). Those arrays stay alive as long as
the graph does -- usually until ``backward()``, which releases them (``_saved = None``) unless
``retain_graph=True``.

What a release actually frees depends on who else holds the array. A saved *leaf* (a weight,
the input batch) is held by you as well, so releasing drops a reference and frees nothing.
A saved *intermediate* (an op's output, or a non-leaf input) is usually held only by the graph:
that is the activation memory ``backward()`` gives back. Arrays are counted once per storage
(views of one array share it), so totals are the memory really held.

The walk is iterative and reads the graph without changing it.
"""
from .graph import AccumulateGrad, SavedOutput


def saved_entries(node):
    """[(index, role, tensor or None, array)] for what ``node`` saved; role is 'output',
    'leaf' or 'intermediate'. Placeholders (ops may save a stand-in for an unneeded operand)
    are skipped. An entry packed by a ``saved_tensors_hooks`` pack hook is counted when the
    hook kept a tensor or an array (its ``packed``), and skipped otherwise: what a hook stores
    elsewhere (on disk, on another device) is not the graph's memory."""
    out = []
    for i, s in enumerate(node._saved or ()):
        if type(s) is SavedOutput:
            out.append((i, 'output', None, s.data))
            continue
        packed = getattr(s, 'packed', _MISSING)
        if packed is not _MISSING:
            data = getattr(packed, '_data', packed)
            if hasattr(data, 'nbytes') and hasattr(data, 'shape'):
                role = 'output' if getattr(s, 'is_output', False) else (
                    'leaf' if getattr(s, 'grad_fn', None) is None else 'intermediate')
                out.append((i, role, None, data))
            continue
        data = getattr(s, '_data', None)
        if data is None or not hasattr(data, 'nbytes'):
            continue
        out.append((i, 'leaf' if s._grad_fn is None else 'intermediate', s, data))
    return out


_MISSING = object()


def storage_of(array):
    """The array that owns ``array``'s memory (NumPy views point to it through ``.base``)."""
    while getattr(array, 'base', None) is not None and hasattr(array.base, 'nbytes'):
        array = array.base
    return array


def _fmt(n):
    for unit in ('B', 'KiB', 'MiB', 'GiB'):
        if n < 1024 or unit == 'GiB':
            return f'{n} {unit}' if unit == 'B' else f'{n:.1f} {unit}'
        n /= 1024


class SavedTensor:
    """One saved entry: the node's name (``node``) and its place in the walk (``node_nr``), the
    entry's position, role, shape, dtype, bytes, and the id and size of its storage. It holds
    no array, so a kept report keeps no memory alive."""
    __slots__ = ('node', 'node_nr', 'index', 'role', 'shape', 'dtype', 'nbytes', 'storage_id',
                 'storage_nbytes')

    def __init__(self, node, node_nr, index, role, array):
        self.node = node.name()
        self.node_nr = node_nr
        self.index = index
        self.role = role
        self.shape = tuple(array.shape)
        self.dtype = array.dtype.name
        self.nbytes = int(array.nbytes)
        storage = storage_of(array)
        self.storage_id = id(storage)
        self.storage_nbytes = int(storage.nbytes)

    def __repr__(self):
        return f'SavedTensor({self.node}[{self.index}], {self.role}, {list(self.shape)} {self.dtype}, {self.nbytes} B)'


class MemoryReport:
    """What a graph holds. Fields:

    ``nodes``: number of recorded ops (AccumulateGrad excluded); ``freed_nodes``: how many of
    them a backward() without retain_graph has already released; ``saved``: [SavedTensor];
    ``total_bytes``: bytes of distinct storages the graph's saved tensors hold; ``leaf_bytes``:
    the part held by leaves (kept after backward); ``freed_by_backward``: the rest -- saved
    intermediates, freed when backward() releases the graph; ``grad_bytes``: bytes of the
    ``.grad`` tensors backward() will allocate for leaves that have none yet; ``per_node``:
    [(node name, bytes)] in walk order.
    """

    def __init__(self, nodes, freed_nodes, saved, leaves):
        self.nodes = nodes
        self.freed_nodes = freed_nodes
        self.saved = saved
        storages = {}
        # Storage that belongs to a leaf stays after backward, even when an op saved it through
        # a view (``w.t()`` saved by mm is an intermediate tensor on the weight's memory).
        leaf_storages = {id(storage_of(v._data)) for v in leaves}
        for s in saved:
            storages[s.storage_id] = s.storage_nbytes
            if s.role == 'leaf':
                leaf_storages.add(s.storage_id)
        leaf_storages &= storages.keys()
        self.total_bytes = sum(storages.values())
        self.leaf_bytes = sum(storages[k] for k in leaf_storages)
        self.freed_by_backward = self.total_bytes - self.leaf_bytes
        self.grad_bytes = sum(v._data.nbytes for v in leaves if v._grad is None)
        self.leaves = len(leaves)
        per = {}
        for s in saved:
            name, total = per.get(s.node_nr, (s.node, 0))
            per[s.node_nr] = (name, total + s.nbytes)
        self.per_node = [per[k] for k in sorted(per)]

    def __str__(self):
        lines = [f'graph: {self.nodes} op node(s), {self.leaves} leaf tensor(s) that require grad']
        if self.freed_nodes:
            lines.append(f'{self.freed_nodes} node(s) already released by a backward() (their saved '
                         'tensors are freed)')
        lines.append(f'saved for backward: {_fmt(self.total_bytes)} in {len(self.saved)} tensor(s)')
        lines.append(f'  held by leaves (kept after backward): {_fmt(self.leaf_bytes)}')
        lines.append(f'  intermediates (backward() frees them): {_fmt(self.freed_by_backward)}')
        lines.append(f'backward() will allocate .grad for leaves: {_fmt(self.grad_bytes)}')
        if self.saved:
            lines.append('per saved tensor:')
            for s in self.saved:
                lines.append(f'  {s.node:<24} [{s.index}] {s.role:<12} {str(list(s.shape)):<14} '
                             f'{s.dtype:<8} {_fmt(s.nbytes)}')
        return '\n'.join(lines)

    __repr__ = __str__


def memory_report(*roots):
    """A MemoryReport of the graph(s) leading to ``roots`` (tensors or Nodes)."""
    start = []
    for r in roots:
        fn = getattr(r, '_grad_fn', r) if not hasattr(r, 'next_functions') else r
        if fn is not None:
            start.append(fn)
    seen = set(start)
    stack = list(reversed(start))
    nodes = freed = 0
    saved = []
    leaves = []
    while stack:
        node = stack.pop()
        if type(node) is AccumulateGrad:
            leaves.append(node.variable)
            continue
        nodes += 1
        if node._saved is None:
            freed += 1
        for i, role, _, array in saved_entries(node):
            saved.append(SavedTensor(node, nodes, i, role, array))
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return MemoryReport(nodes, freed, saved, leaves)


__all__ = ['memory_report', 'MemoryReport', 'SavedTensor', 'saved_entries']
