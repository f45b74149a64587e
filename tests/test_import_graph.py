"""The op library's import structure (issue 23), measured by tools/import_graph.py: an op family
imports only the shared utilities (``leafgrad.ops._*``) and reaches its sibling families through
the late-bound namespace ``ops``, so that no family imports another."""
import importlib.util
import os

_TOOL = os.path.join(os.path.dirname(__file__), '..', 'tools', 'import_graph.py')
_spec = importlib.util.spec_from_file_location('import_graph', _TOOL)
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)


def test_no_op_family_imports_another():
    edges = import_graph.graph(os.path.join(os.path.dirname(_TOOL), '..', 'leafgrad'))
    between = [(a, b) for a in edges for b in edges[a] if import_graph._family(a) and import_graph._family(b)]
    assert between == [], between


# What is left of the tangle, as bounds that only go down: the upward arrows the tool lists and
# the modules caught in cycles (each cycle's size).
MAX_UPWARD = 1
MAX_CYCLES = [22]


def _edges():
    return import_graph.graph(os.path.join(os.path.dirname(_TOOL), '..', 'leafgrad'))


def test_upward_arrows_bounded():
    up = import_graph.upward(_edges())
    assert len(up) <= MAX_UPWARD, up


def test_cycles_bounded():
    sizes = sorted((len(c) for c in import_graph.cycles(_edges())), reverse=True)
    assert len(sizes) <= len(MAX_CYCLES) and all(s <= m for s, m in zip(sizes, MAX_CYCLES)), sizes
