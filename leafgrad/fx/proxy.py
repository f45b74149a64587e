"""``torch.fx.Proxy``: a stand-in value that records, as a Node, every operation done to it."""
import bisect
import dis
import inspect
import operator

from .graph import Graph
from ..backend import device, dtype
from ..tensor import Size
from .node import Node, REFLECTABLE, map_aggregate

__all__ = ['TracerBase', 'GraphAppendingTracer', 'TraceError', 'Proxy', 'Attribute', 'ParameterProxy']


class TraceError(ValueError):
    pass


class TracerBase:
    """What a Proxy needs from whoever records: ``create_proxy`` and the rules for turning
    values into node arguments."""
    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = 'forward'
    scope = None
    module_stack = None
    node_name_to_scope = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """A node in ``self.graph``; a subclass may override it to change what is recorded."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Record ``target`` called on ``args``/``kwargs`` (Proxies become their nodes) and
        return the Proxy of its value."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple):
            raise AssertionError('args must be a tuple')
        if not isinstance(kwargs_, dict):
            raise AssertionError('kwargs must be a dict')
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """``a`` as a node argument: Proxies as their nodes, through containers; constants as
        they are. An unknown object type is PyTorch's NotImplementedError."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, '__fx_create_arg__'):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            if hasattr(a, '_fields'):
                return type(a)(*(self.create_arg(elem) for elem in a))
            return tuple(self.create_arg(elem) for elem in a)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f'Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}')
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, Node) or a is None or a is ... or isinstance(a, (str, int, float, bool, complex)):
            return a
        if isinstance(a, (dtype, device, Size)) or \
                type(a).__name__ in ('memory_format', 'layout'):
            return a
        raise NotImplementedError(f'argument of type: {type(a)}')

    def to_bool(self, obj):
        raise TraceError('symbolically traced variables cannot be used as inputs to control flow')

    def iter(self, obj):
        raise TraceError('Proxy object cannot be iterated. This can be attempted when the Proxy is used in a '
                         'loop or as a *args or **kwargs function argument. See the torch.fx docs on '
                         'pytorch.org for a more detailed explanation of what types of control flow can be '
                         'traced, and check out the Proxy docstring for help troubleshooting Proxy iteration '
                         'errors')

    def keys(self, obj):
        return Attribute(obj, 'keys')()


class GraphAppendingTracer(TracerBase):
    """Records into an existing graph: Proxies made by hand (``Proxy(node, tracer)``) append
    their operations to ``graph``."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


class Proxy:
    """The value of a Node while a program is traced: attribute reads, method calls, operators
    and leafgrad functions applied to it are recorded as new nodes instead of being computed."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f'Proxy({self.node.name})'

    def __getattr__(self, k):
        # attribute reads are lazy: a method call on the attribute records call_method instead
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __deepcopy__(self, memo):
        raise RuntimeError('Proxy objects cannot be deep-copied while tracing')

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy('call_method', '__call__', (self,) + args, kwargs)

    def __iter__(self):
        # unpacking (``B, T, C = x.size()``) gives the items as getitem nodes: the caller's
        # current instruction says how many it takes
        calling_frame = inspect.currentframe().f_back
        instructions = list(dis.get_instructions(calling_frame.f_code))
        at = bisect.bisect_left(instructions, calling_frame.f_lasti, key=lambda inst: inst.offset)
        if at < len(instructions) and instructions[at].opname == 'UNPACK_SEQUENCE':
            return (self[i] for i in range(instructions[at].argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy('call_function', operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           'recorded, please call torch.fx.wrap(\'len\') at module scope')

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f'Found multiple different tracers {list(tracers.keys())} while trying to trace '
                               f'operations {orig_method}')
        tracer = next(iter(tracers.keys()))
        return tracer.create_proxy('call_function', orig_method, args, kwargs)


class Attribute(Proxy):
    """``proxy.attr``: a call records ``call_method``; any other use records ``getattr``."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy('call_function', getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy('call_method', self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A parameter's Proxy, which answers shape, size(), dim() and the like from the parameter
    itself rather than recording them."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f'ParameterProxy({self.name})'

    @property
    def shape(self):
        return self.param.shape

    def size(self, *args):
        return self.param.size(*args)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


def _binary(name, reflected):
    target = getattr(operator, name)

    def impl(self, other):
        args = (other, self) if reflected else (self, other)
        return self.tracer.create_proxy('call_function', target, args, {})
    impl.__name__ = f'__r{name.rstrip("_")}__' if reflected else f'__{name.rstrip("_")}__'
    return impl


def _unary(name):
    target = getattr(operator, name)

    def impl(self):
        return self.tracer.create_proxy('call_function', target, (self,), {})
    impl.__name__ = f'__{name}__'
    return impl


for _name in ('add', 'sub', 'mul', 'floordiv', 'truediv', 'mod', 'pow', 'lshift', 'rshift', 'and_', 'or_', 'xor',
              'getitem', 'matmul', 'eq', 'ne', 'lt', 'gt', 'le', 'ge'):
    setattr(Proxy, f'__{_name.rstrip("_")}__', _binary(_name, False))
for _name in REFLECTABLE:
    if _name != 'div':
        setattr(Proxy, f'__r{_name.rstrip("_")}__', _binary(_name, True))
for _name in ('neg', 'pos', 'invert'):
    setattr(Proxy, f'__{_name}__', _unary(_name))
