"""``torch.fx``: programs as graphs you can read, change and run again.

``symbolic_trace(module)`` runs the module's ``forward`` on Proxies, stand-in values that
record each operation as a ``Node`` of a ``Graph``, and returns a ``GraphModule``: a Module
whose ``forward`` is Python code generated from the graph (``gm.code``). Change the graph
(``graph.call_function``, ``node.replace_all_uses_with``, ``graph.erase_node``,
``replace_pattern``), then ``gm.recompile()``.

leafgrad's functions see Proxies through ``__torch_function__`` (``leafgrad.overrides``), which
importing this package switches on.
"""
from .. import overrides
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from .subgraph_rewriter import replace_pattern

__all__ = ['symbolic_trace', 'Tracer', 'wrap', 'Graph', 'GraphModule', 'Node', 'Proxy', 'Interpreter',
           'Transformer', 'replace_pattern', 'map_arg', 'PH', 'ProxyableClassMeta']

overrides.enable()  # leafgrad's functions given a Proxy record a node
