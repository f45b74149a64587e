"""``torch.fx.Interpreter`` and ``Transformer``: run a GraphModule node by node, with a method per
kind of node to override."""
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy
from ._symbolic_trace import Tracer

__all__ = ['Interpreter', 'Transformer']


def _fetch_attr(module, target):
    obj = module
    for i, atom in enumerate(target.split('.')):
        if not hasattr(obj, atom):
            raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target.split('.')[:i + 1])}")
        obj = getattr(obj, atom)
    return obj


class Interpreter:
    """Runs ``module``'s graph one node at a time: ``run(*args)`` calls ``run_node`` for each
    node, which calls the method named by the node's op (``placeholder``, ``get_attr``,
    ``call_function``, ``call_method``, ``call_module``, ``output``) with the node's arguments
    already evaluated. Override those to change what running means (shape propagation, ...)."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = 'Interpreter'
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # the last node to use each value, where the value is dropped from env
            node_to_last_use, self.user_to_last_uses = {}, {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in node_to_last_use:
                        node_to_last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """The graph's output for the inputs ``args``."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == 'output':
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == 'placeholder':
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target, args, kwargs):
        if target.startswith('*'):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f'Expected positional argument for parameter {target}, but one was not passed in!')

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    def fetch_attr(self, target):
        return _fetch_attr(self.module, target)

    def fetch_args_kwargs_from_env(self, n):
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n):
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f'Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to diagnose '
                                   'such issues')
            return self.env[n_arg]
        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph

    def is_leaf_module(self, _, __):
        return True


class Transformer(Interpreter):
    """An Interpreter that runs the graph on Proxies, so that what the overridden methods return
    is recorded into a new graph: ``transform()`` returns the new GraphModule."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default_value = next(iter(args)) if args else None
        return Proxy(self.new_graph.placeholder(target, default_value=default_value) if args else
                     self.new_graph.placeholder(target), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy('get_attr', target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy('call_function', target, args, kwargs)

    def call_method(self, target, args, kwargs):
        return self.tracer.create_proxy('call_method', target, args, kwargs)

    def transform(self):
        result = super().run()
        if result is not None:
            def strip_proxy(a):
                return a.node if isinstance(a, Proxy) else a
            self.new_graph.output(map_aggregate(result, strip_proxy))
        return GraphModule(self.module, self.new_graph)
