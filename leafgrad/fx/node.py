"""``torch.fx.Node``: one operation of a Graph, and the maps over its arguments."""
import builtins
import operator
import sys

__all__ = ['Node', 'map_arg', 'map_aggregate', 'Argument', 'Target']

Argument = object  # what a node's args hold: nodes, constants, and lists, tuples, dicts, slices of them
Target = object    # a node's target: a callable (call_function) or a name (the other ops)

_OPS = ('placeholder', 'call_method', 'call_module', 'call_function', 'get_attr', 'output', 'root')


def map_aggregate(a, fn):
    """``fn`` applied to every leaf of ``a``, through tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(elem, fn) for elem in a)
        return type(a)(*mapped) if hasattr(a, '_fields') else mapped
    if isinstance(a, list):
        return [map_aggregate(elem, fn) for elem in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """``fn`` applied to every Node in ``a`` (the rest kept as it is)."""
    if not callable(fn):
        raise AssertionError('torch.fx.map_arg(a, fn): fn must be a callable')
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _type_repr(obj):
    if isinstance(obj, type):
        if obj.__module__ == 'builtins':
            return obj.__qualname__
        return f'{obj.__module__}.{obj.__qualname__}'
    if obj is ...:
        return '...'
    return repr(obj)


def _qualified_name(func, for_code=False):
    """'leafgrad.cat', 'operator.add', '__main__.f': the name under which printed graphs refer to a
    callable target (generated code: its module as Python names it, '_operator.abs')."""
    if getattr(builtins, getattr(func, '__name__', ''), None) is func:
        return f'builtins.{func.__name__}'
    name = func.__name__
    if name == '<lambda>':
        raise RuntimeError(f'Unable to represent lambda {func}')
    module = _public_module_of(func)
    if module is None:
        module = getattr(func, '__module__', None) or ''
        if module == '_operator' and not for_code:
            module = 'operator'
    return f'{module}.{name}'


def _public_module_of(func):
    """The public namespace ('leafgrad', 'leafgrad.nn.functional' ...) that exports ``func``
    under its name, or None."""
    name = getattr(func, '__name__', None)
    for module_name in _PUBLIC_NAMESPACES:
        module = sys.modules.get(module_name)
        if module is not None and name is not None and vars(module).get(name) is func:
            return module_name
    return None


_PUBLIC_NAMESPACES = ('leafgrad', 'leafgrad.nn.functional', 'leafgrad.linalg', 'leafgrad.special', 'leafgrad.fft')


def _format_arg(arg, max_list_len=float('inf')):
    if hasattr(arg, '_custom_fx_repr_fn'):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, list):
        items = ', '.join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = '' if len(arg) < max_list_len + 1 else f', ...[total_len={len(arg)}]'
        return f'[{items}{maybe_len}]'
    if isinstance(arg, tuple):
        items = ', '.join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = '' if len(arg) < max_list_len + 1 else f', ...[total_len={len(arg)}]'
        maybe_comma = ',' if len(arg) == 1 else ''
        return f'({items}{maybe_comma}{maybe_len})'
    if isinstance(arg, dict):
        items_str = ', '.join(f'{k}: {_format_arg(v)}' for k, v in arg.items())
        return f'{{{items_str}}}'
    if isinstance(arg, Node):
        return '%' + str(arg)
    return str(arg)


class Node:
    """One operation in a Graph: its kind (``op``), what it calls (``target``), its arguments
    (``args``, ``kwargs``: constants and other nodes), its ``name`` (the variable that holds its
    value in the generated code) and the nodes that use it (``users``).

    ``op`` is one of 'placeholder' (an input), 'get_attr' (a parameter, buffer or attribute of
    the module), 'call_function', 'call_method', 'call_module', 'output' (the value returned).
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPS:
            raise AssertionError(f'Unknown op {op!r}')
        if op == 'call_function' and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} "
                             'but a Callable is expected')
        if op in ('placeholder', 'call_method', 'call_module', 'get_attr', 'output') and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type {type(target)} "
                             'but a str is expected')
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self.__update_args_kwargs(args, kwargs)

    # ---- place in the graph ----------------------------------------------------------
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Put ``x`` just before this node (moving it if it is elsewhere in the graph)."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Put ``x`` just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- arguments ---------------------------------------------------------------------
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self.__update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self.__update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The nodes among this node's arguments, in order, each once."""
        return list(self._input_nodes.keys())

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def __update_args_kwargs(self, new_args, new_kwargs):
        for old_use in self._input_nodes:
            old_use.users.pop(self)
        self._input_nodes = {}

        def collect(n):
            self._input_nodes.setdefault(n)
            return n
        self._args = map_arg(tuple(new_args), collect)
        self._kwargs = map_arg(dict(new_kwargs), collect)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Make every user of this node use ``replace_with`` instead; returns the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        to_process = list(self.users)
        skipped = []
        for use_node in to_process:
            if not delete_user_cb(use_node):
                skipped.append(use_node)
                continue
            use_node.replace_input_with(self, replace_with)
        return [n for n in to_process if n not in skipped]

    def replace_input_with(self, old_input, new_input):
        """Use ``new_input`` wherever this node's arguments name ``old_input``."""
        def swap(n):
            return new_input if n is old_input else n
        self.__update_args_kwargs(map_arg(self.args, swap), map_arg(self.kwargs, swap))

    def is_impure(self):
        if self.op in ('placeholder', 'output'):
            return True
        if self.op == 'call_function':
            return getattr(self.target, '__name__', '').endswith('_') and \
                not getattr(self.target, '__name__', '').endswith('__')
        if self.op == 'call_method':
            return self.target.endswith('_') and not self.target.endswith('__')
        if self.op == 'call_module':
            return False
        return False

    @property
    def stack_trace(self):
        return self.meta.get('stack_trace', None)

    # ---- printing ----------------------------------------------------------------------
    def __repr__(self):
        return self.name

    def _pretty_print_target(self, target):
        if isinstance(target, str):
            return target
        return _qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """This node as a line of ``str(graph)``."""
        if self.op == 'placeholder':
            arg_str = self.target
            arg_str += f': {_type_repr(self.type)}' if self.type else ''
            if placeholder_names is not None:
                placeholder_names.append(arg_str)
                return None
            maybe_typename = f'{_type_repr(self.type)} ' if self.type else ''
            default_val = '(default=' + str(self.args[0]) + ')' if self.args else ''
            return f'%{self.name} : {maybe_typename}[num_users={len(self.users)}] = ' \
                   f'{self.op}[target={self.target}]{default_val}'
        if self.op == 'get_attr':
            maybe_typename = f'{_type_repr(self.type)} ' if self.type is not None else ''
            return f'%{self.name} : {maybe_typename}[num_users={len(self.users)}] = ' \
                   f'{self.op}[target={self._pretty_print_target(self.target)}]'
        if self.op == 'output':
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f' -> {_type_repr(self.type)}'
            return f'return {self.args[0]}'
        maybe_typename = f'{_type_repr(self.type)} ' if self.type is not None else ''
        return f'%{self.name} : {maybe_typename}[num_users={len(self.users)}] = ' \
               f'{self.op}[target={self._pretty_print_target(self.target)}](' \
               f'args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})'


# The operators whose calls the generated code writes as Python expressions, and how.
MAGIC_METHODS = {
    'add': '{} + {}', 'sub': '{} - {}', 'mul': '{} * {}', 'floordiv': '{} // {}', 'truediv': '{} / {}',
    'div': '{} / {}', 'mod': '{} % {}', 'pow': '{} ** {}', 'lshift': '{} << {}', 'rshift': '{} >> {}',
    'and_': '{} & {}', 'or_': '{} | {}', 'xor': '{} ^ {}', 'getitem': '{}[{}]', 'matmul': '{} @ {}',
}
COMPARISONS = {'eq': '{} == {}', 'ne': '{} != {}', 'lt': '{} < {}', 'gt': '{} > {}', 'le': '{} <= {}',
               'ge': '{} >= {}'}
UNARY = {'neg': '-{}', 'pos': '+{}', 'invert': '~{}'}
REFLECTABLE = ('add', 'sub', 'mul', 'floordiv', 'truediv', 'div', 'mod', 'pow', 'lshift', 'rshift', 'and_', 'or_',
               'xor', 'matmul')
INPLACE = {'iadd': '{} += {}', 'iand': '{} &= {}', 'ifloordiv': '{} //= {}', 'ilshift': '{} <<= {}',
           'imod': '{} %= {}', 'imul': '{} *= {}', 'imatmul': '{} @= {}', 'ior': '{} |= {}', 'ipow': '{} **= {}',
           'irshift': '{} >>= {}', 'isub': '{} -= {}', 'itruediv': '{} /= {}', 'ixor': '{} ^= {}'}


def operator_expression(target):
    """The expression template for an operator target ('{} + {}'), or None."""
    if getattr(operator, getattr(target, '__name__', ''), None) is not target:
        return None
    name = target.__name__
    return MAGIC_METHODS.get(name) or COMPARISONS.get(name) or UNARY.get(name)
