"""``torch.fx.Graph``: a program as a list of Nodes, and the Python code it stands for."""
import builtins
import contextlib
import copy
import importlib
import inspect
import keyword
import re
import warnings

import leafgrad  # (the namespace generated code calls, leafgrad.cat(...), as PyTorch's calls torch: fx sits above it)
from .node import Node, _format_arg, _qualified_name, _type_repr, map_arg, operator_expression
from ._wrap import wrap
from ..backend import device, dtype
from ..tensor import Tensor

__all__ = ['Graph', 'PythonCode']

_ILLEGAL = re.compile(r'[^0-9a-zA-Z_]+')
_SUFFIX = re.compile(r'(.*)_(\d+)$')
_CAMEL = re.compile(r'(?<=[a-z])([A-Z])')


def _snake_case(s):
    """'ReLU6' -> 're_l_u6' as PyTorch names nodes: an underscore before each capital that follows
    a lower-case letter, then lower case."""
    return _CAMEL.sub(r'_\1', s).lower()


class _Namespace:
    """Unique, legal Python names for the nodes and globals of one graph."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = _ILLEGAL.sub('_', candidate) or '_unnamed'
        if candidate[0].isdigit():
            candidate = f'_{candidate}'
        match = _SUFFIX.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num_str = match.group(1, 2)
            num = int(num_str)
        candidate = base if num is None else f'{base}_{num}'
        if not num:
            num = self._base_count.get(base, 0)
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f'{base}_{num}'
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[obj] = name

    def _rename_object(self, obj, name):
        self._obj_to_name[obj] = name

    @staticmethod
    def _is_illegal_name(name, obj):
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        return False


class PythonCode:
    """What ``Graph.python_code`` returns: the source and the globals it runs with."""

    def __init__(self, src, globals_):
        self.src = src
        self.globals = globals_


def _repr_value(arg):
    """A constant argument as the generated code writes it."""
    if isinstance(arg, Node):
        return repr(arg)
    if isinstance(arg, tuple) and hasattr(arg, '_fields'):
        return f'{type(arg).__name__}({", ".join(_repr_value(a) for a in arg)})'
    if isinstance(arg, (tuple, list)):
        items = ', '.join(_repr_value(a) for a in arg)
        if isinstance(arg, list):
            return f'[{items}]'
        return f'({items},)' if len(arg) == 1 else f'({items})'
    if isinstance(arg, dict):
        return '{' + ', '.join(f'{_repr_value(k)}: {_repr_value(v)}' for k, v in arg.items()) + '}'
    if isinstance(arg, slice):
        return f'slice({_repr_value(arg.start)}, {_repr_value(arg.stop)}, {_repr_value(arg.step)})'
    if isinstance(arg, dtype):
        return repr(arg)  # leafgrad.float64
    if isinstance(arg, device):
        return f"device(type='{arg.type}')" if arg.index is None else f"device(type='{arg.type}', index={arg.index})"
    if arg is ...:
        return 'Ellipsis'
    if isinstance(arg, float) and (arg != arg or arg in (float('inf'), float('-inf'))):
        return repr(arg)  # inf, -inf, nan: names the generated code's globals define
    return repr(arg)


class Graph:
    """A list of Nodes (``graph.nodes``) that computes, from its placeholders, the value of its
    output node; ``python_code`` turns it into the source of a ``forward``."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, '', 'root', '', (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    # ---- the node list ---------------------------------------------------------------
    @property
    def nodes(self):
        return _NodeList(self)

    def find_nodes(self, *, op, target=None):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def __len__(self):
        return self._len

    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """A new node, inserted at the insertion point (the end unless ``inserting_before`` or
        ``inserting_after`` says otherwise)."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError('args must be a tuple')
        if not isinstance(kwargs, dict):
            raise AssertionError('kwargs must be a dict')
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    @staticmethod
    def _target_to_str(target):
        if callable(target):
            op = target.__name__
        else:
            op = target
            if op.startswith('__') and op.endswith('__') and len(op) > 4:  # '__add__' -> 'add'
                op = op[2:-2]
        return _snake_case(op)

    def erase_node(self, to_erase):
        """Remove a node that has no users."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f'Tried to erase Node {to_erase} but it still had {len(to_erase.users)} '
                               f'users in the graph: {to_erase.users}!')
        if to_erase.graph is not self:
            raise RuntimeError(f'Attempting to remove {to_erase} from wrong graph!')
        if to_erase._erased:
            warnings.warn(f'erase_node({to_erase}) on an already erased node')
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase.args = ()
        to_erase.kwargs = {}

    @contextlib.contextmanager
    def inserting_before(self, n=None):
        """New nodes go before ``n`` (the start of the graph if None) while the block runs."""
        if n is None:
            with self.inserting_after(self._root):
                yield
            return
        if n.graph is not self:
            raise AssertionError('Node to insert before is not in graph.')
        saved, self._insert = self._insert, n.prepend
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_after(self, n=None):
        """New nodes go after ``n`` (the end of the graph if None), each after the previous one."""
        if n is None:
            with self.inserting_before(self._root):
                yield
            return
        if n.graph is not self:
            raise AssertionError('Node to insert after is not in graph.')
        saved, self._insert = self._insert, n._next.prepend
        try:
            yield
        finally:
            self._insert = saved

    # ---- making nodes ------------------------------------------------------------------
    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node('placeholder', name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node('get_attr', qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node('call_module', module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node('call_method', method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node('call_function', the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node(op='output', target='output', args=(result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of ``node`` (from any graph) in this one, its node arguments mapped by
        ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of ``g`` but its output into this graph; ``val_map`` maps g's nodes to
        the copies (and may map some in advance). Returns the value g's output names."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == 'output':
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo):
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map={}, return_output_node=True)
        if output_vals is not None:
            output_val, old_output = output_vals
            new_output = g.output(output_val, type_expr=getattr(old_output, 'type', None))
            new_output.meta = copy.copy(old_output.meta)
        return g

    # ---- checks and clean-up -----------------------------------------------------------
    def lint(self):
        """Check that the graph is well formed: every argument defined before its use, names
        unique, back-links right, one output at the end."""
        seen, names = set(), set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f'Node {node} does not belong to this Graph!')
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f'Argument {arg} of Node {node} does not belong to this Graph, '
                                       'but was used as an argument! If you are copying nodes from another '
                                       'graph, make sure to use ``arg_transform`` on node_copy() to remap '
                                       'values\n' + str(self))
                if arg not in seen:
                    raise RuntimeError(f'Argument {arg} of Node {node} was used before it has been defined! '
                                       'Please check that Nodes in the graph are topologically ordered\n'
                                       + str(self))
            if node.name in names:
                raise RuntimeError(f'Node redefined name {node.name}!')
            seen.add(node)
            names.add(node.name)

    def eliminate_dead_code(self, is_impure_node=None):
        """Remove the nodes whose values nothing uses (and that change nothing); whether any was."""
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    # ---- printing and code -------------------------------------------------------------
    def __str__(self):
        maybe_return_typename = ['']
        node_strs = [node.format_node(maybe_return_typename=maybe_return_typename) for node in self.nodes]
        s = f'graph(){maybe_return_typename[0]}:'
        for node_str in node_strs:
            if node_str:
                s += '\n    ' + node_str
        return s

    def print_tabular(self):
        """The nodes as a table (opcode, name, target, args, kwargs); needs ``tabulate``."""
        try:
            from tabulate import tabulate  # (optional: loaded when first used)
        except ImportError:
            print('`print_tabular` relies on the library `tabulate`, which could not be found on this machine. '
                  'Run `pip install tabulate` to install the library.')
            raise
        node_specs = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(node_specs, headers=['opcode', 'name', 'target', 'args', 'kwargs']))

    def python_code(self, root_module='self'):
        """The Python source of ``forward(self, <placeholders>)`` that computes this graph, and
        its globals."""
        return _CodeGen(self, root_module).generate()

    def on_generate_code(self, make_transformer):
        raise NotImplementedError('Graph.on_generate_code is not implemented in leafgrad.fx')


class _NodeList:
    """``graph.nodes``: the nodes in order, live (iterating while erasing the current one is safe)."""

    def __init__(self, graph, reverse=False):
        self._graph = graph
        self._reverse = reverse

    def __len__(self):
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        step = '_prev' if self._reverse else '_next'
        cur = getattr(root, step)
        while cur is not root:
            following = getattr(cur, step)
            if not cur._erased:
                yield cur
            cur = following

    def __reversed__(self):
        return iter(_NodeList(self._graph, not self._reverse))

    def __repr__(self):
        return repr(list(self))


class _CodeGen:
    """Writes a graph as the body of a ``forward``, freeing each value after its last use as
    PyTorch's generated code does (``x = None``)."""

    def __init__(self, graph, root_module):
        self.graph = graph
        self.root_module = root_module
        self.namespace = _Namespace()
        self.globals = {'inf': float('inf'), 'nan': float('nan'), 'NoneType': type(None)}
        self.globals['leafgrad'] = leafgrad
        self.wrapped_fns = {}

    def add_global(self, name_hint, obj):
        """The name generated code uses for ``obj``, added to the globals."""
        qualified = name_hint
        if qualified.split('.')[0] == 'leafgrad' and _public_object(qualified) is obj:
            return qualified  # leafgrad.cat: reached through the global 'leafgrad'
        if qualified.startswith('builtins.') and getattr(builtins, qualified[9:], None) is obj:
            return qualified[9:]
        name = self.namespace.create_name(_ILLEGAL.sub('_', qualified.replace('.', '_')), obj)
        self.globals[name] = obj
        return name

    def generate(self):
        nodes = list(self.graph.nodes)
        for node in nodes:
            self.namespace.create_name(node.name, node)
        # the last use of each value: where the code frees it
        user_to_last_uses, seen = {}, set()
        for node in reversed(nodes):
            def register(n, user=node):
                if n not in seen:
                    seen.add(n)
                    user_to_last_uses.setdefault(user, []).append(n)
            map_arg(node.args, register)
            map_arg(node.kwargs, register)
        free_vars, body = [], []
        wrapped = []
        for node in nodes:
            self._emit(node, free_vars, body, wrapped)
            self._free_unused(node, user_to_last_uses, body)
        if len(body) == 0:
            body.append('pass\n')
        wrap_name = self.add_global('leafgrad.fx._symbolic_trace.wrap', wrap) if wrapped else None
        wrap_stmts = '\n'.join(f'{wrap_name}("{name}")' for name in wrapped)
        code = ''.join(body).lstrip('\n')
        code = '\n'.join('    ' + line for line in code.split('\n'))
        prologue = f'def forward({", ".join([self.root_module] + free_vars)}):'
        return PythonCode(f'\n{wrap_stmts}\n\n{prologue}\n{code}', self.globals)

    def _free_unused(self, user, user_to_last_uses, body):
        if user.op == 'placeholder':
            return
        if user.op == 'output':
            body.append('\n')
            return
        to_delete = list(user_to_last_uses.get(user, []))
        if len(user.users) == 0:
            to_delete.append(user)
        if to_delete:
            body.append(';  ' + ' = '.join([repr(n) for n in to_delete] + ['None']) + '\n')
        else:
            body.append('\n')

    def _type_repr(self, t):
        if t is None:
            return None
        if isinstance(t, type) and t.__module__ == 'builtins':
            return t.__qualname__
        if t is Tensor:
            return 'leafgrad.Tensor'
        return self.add_global(_type_repr(t), t)

    def _emit(self, node, free_vars, body, wrapped):
        def args(a, k):
            parts = [_repr_value(x) for x in a] + [f'{key} = {_repr_value(v)}' for key, v in k.items()]
            return ', '.join(parts)
        annotation = ''
        if node.type is not None:
            annotation = f' : {self._type_repr(node.type)}'
        if node.op == 'placeholder':
            free_var = f'{node.target}{annotation}'
            if node.args:
                free_var += f' = {_repr_value(node.args[0])}'
            free_vars.append(free_var)
            raw_name = node.target.replace('*', '')
            if raw_name != repr(node):
                body.append(f'{repr(node)} = {raw_name}\n')
            return
        if node.op == 'call_method':
            body.append(f'{repr(node)}{annotation} = {_repr_value(node.args[0])}.{node.target}('
                        f'{args(node.args[1:], node.kwargs)})')
            return
        if node.op == 'call_function':
            template = operator_expression(node.target)
            if template is not None and not node.kwargs and template.count('{}') == len(node.args):
                if node.target.__name__ == 'getitem':
                    body.append(f'{repr(node)}{annotation} = {_repr_value(node.args[0])}'
                                f'[{_repr_value(node.args[1])}]')
                else:
                    body.append(f'{repr(node)}{annotation} = '
                                f'{template.format(*(_repr_value(a) for a in node.args))}')
                return
            qualified = _qualified_name(node.target, for_code=True)
            global_name = self.add_global(qualified, node.target)
            if global_name == 'getattr' and isinstance(node.args[1], str) and node.args[1].isidentifier() \
                    and len(node.args) == 2:
                body.append(f'{repr(node)}{annotation} = {_repr_value(node.args[0])}.{node.args[1]}')
                return
            body.append(f'{repr(node)}{annotation} = {global_name}({args(node.args, node.kwargs)})')
            if node.meta.get('is_wrapped', False) and global_name not in wrapped:
                wrapped.append(global_name)
            return
        if node.op == 'call_module':
            body.append(f'{repr(node)}{annotation} = {_attr_path(self.root_module, node.target)}('
                        f'{args(node.args, node.kwargs)})')
            return
        if node.op == 'get_attr':
            body.append(f'{repr(node)}{annotation} = {_attr_path(self.root_module, node.target)}')
            return
        if node.op == 'output':
            body.append(f'return {_repr_value(node.args[0])}')
            return
        raise NotImplementedError(f'node: {node.op} {node.target}')


def _attr_path(root, target):
    """'self.lin', 'getattr(self.seq, "0")': a dotted target as code that reaches it."""
    path = root
    for atom in target.split('.'):
        path = f'{path}.{atom}' if atom.isidentifier() else f'getattr({path}, "{atom}")'
    return path


def _public_object(qualified):
    """The object 'leafgrad.nn.functional.relu' names, or None."""
    module_name, _, attr = qualified.rpartition('.')
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return vars(module).get(attr)

