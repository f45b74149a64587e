"""``torch.fx.replace_pattern``: find every copy of a pattern's graph in a GraphModule and put a
replacement's graph in its place."""
from typing import Dict, NamedTuple

from .graph_module import GraphModule
from .node import Node
from ._symbolic_trace import symbolic_trace

__all__ = ['Match', 'replace_pattern']


class Match(NamedTuple):
    anchor: Node               # the pattern's node whose value the pattern returns
    nodes_map: Dict[Node, Node]  # the pattern's nodes -> the graph's


def _as_graph(fn_or_gm):
    return fn_or_gm.graph if isinstance(fn_or_gm, GraphModule) else symbolic_trace(fn_or_gm).graph


def _match_value(p, g, nodes_map):
    """Whether the pattern's argument ``p`` matches the graph's ``g`` (binding into nodes_map)."""
    if isinstance(p, Node):
        return isinstance(g, Node) and _match_node(p, g, nodes_map)
    if isinstance(p, (list, tuple)):
        return type(p) is type(g) and len(p) == len(g) and all(_match_value(a, b, nodes_map) for a, b in zip(p, g))
    if isinstance(p, dict):
        return isinstance(g, dict) and p.keys() == g.keys() and all(_match_value(p[k], g[k], nodes_map) for k in p)
    return type(p) is type(g) and p == g


def _match_node(pn, gn, nodes_map):
    if pn in nodes_map:
        return nodes_map[pn] is gn
    if pn.op == 'placeholder':
        nodes_map[pn] = gn  # a pattern's input matches any value
        return True
    if gn in nodes_map.values():
        return False
    if pn.op != gn.op or pn.target != gn.target or len(pn.args) != len(gn.args) or pn.kwargs.keys() != gn.kwargs.keys():
        return False
    saved = dict(nodes_map)
    nodes_map[pn] = gn
    if all(_match_value(a, b, nodes_map) for a, b in zip(pn.args, gn.args)) and \
            all(_match_value(pn.kwargs[k], gn.kwargs[k], nodes_map) for k in pn.kwargs):
        return True
    nodes_map.clear()
    nodes_map.update(saved)
    return False


def _find_matches(graph, pattern_graph):
    """The non-overlapping matches of the pattern in the graph, in the graph's order, whose
    inner nodes nothing outside the match uses."""
    pattern_output = next(n for n in reversed(pattern_graph.nodes) if n.op == 'output')
    returned = pattern_output.args[0]
    if not isinstance(returned, Node):
        raise NotImplementedError('replace_pattern: a pattern that returns several values is not implemented in '
                                  'leafgrad.fx')
    matches, taken = [], set()
    for node in graph.nodes:
        nodes_map = {}
        if node.op in ('placeholder', 'output') or not _match_node(returned, node, nodes_map):
            continue
        inner = [g for p, g in nodes_map.items() if p.op != 'placeholder']
        if any(g in taken for g in inner):
            continue
        if any(user not in inner for g in inner if g is not node for user in g.users):
            continue  # a value inside the match is used outside it: replacing would lose it
        taken.update(inner)
        matches.append(Match(anchor=returned, nodes_map=nodes_map))
    return matches


def replace_pattern(gm, pattern, replacement):
    """Replace each non-overlapping copy of ``pattern``'s graph in ``gm`` by ``replacement``'s
    (both functions or GraphModules taking the same inputs); returns the Matches."""
    original_graph = gm.graph
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement)
    matches = _find_matches(original_graph, pattern_graph)
    pattern_placeholders = [n for n in pattern_graph.nodes if n.op == 'placeholder']
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == 'placeholder']
    for match in matches:
        val_map = {rn: match.nodes_map[pn] for pn, rn in zip(pattern_placeholders, replacement_placeholders)}
        anchor = match.nodes_map[match.anchor]
        users = set(anchor.users)
        insert_point = next((n for n in original_graph.nodes if n in users), anchor.next)
        with original_graph.inserting_before(insert_point):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        anchor.replace_all_uses_with(copied)
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in ('placeholder', 'output'):
                original_graph.erase_node(match.nodes_map[pn])
    gm.recompile()
    return matches
