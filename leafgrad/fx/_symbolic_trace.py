"""``torch.fx.symbolic_trace`` and ``Tracer``: run a module's forward on Proxies and keep the
Graph they record."""
import builtins
import functools
import inspect
import math

from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import ParameterProxy, Proxy, TracerBase
from ._wrap import _wrapped_fns_to_patch, wrap
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..tensor import Tensor

__all__ = ['Tracer', 'symbolic_trace', 'wrap', 'PH', 'ProxyableClassMeta']


class _PlaceholderSentinel:
    def __repr__(self):
        return 'PH'


PH = _PlaceholderSentinel()


class ProxyableClassMeta(type):
    """Instances of a class with this metaclass are recorded as a call of the class when a
    constructor argument is a Proxy."""

    def __call__(cls, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy('call_function', cls, args, kwargs)
        return super().__call__(*args, **kwargs)


def _find_proxy(*objects):
    found = []

    def check(a):
        if isinstance(a, Proxy):
            found.append(a)
    map_aggregate(objects, check)
    return found[0] if found else None


class _Patcher:
    """Attributes replaced while a trace runs, put back after it."""

    def __init__(self):
        self._saved = []

    def patch(self, owner, name, new, *, is_dict=False):
        if is_dict:
            self._saved.append((owner, name, owner.get(name, _MISSING), True))
            owner[name] = new
        else:
            self._saved.append((owner, name, owner.__dict__.get(name, _MISSING), False))
            setattr(owner, name, new)

    def restore(self):
        for owner, name, old, is_dict in reversed(self._saved):
            if is_dict:
                if old is _MISSING:
                    owner.pop(name, None)
                else:
                    owner[name] = old
            elif old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        self._saved.clear()


_MISSING = object()


class Tracer(TracerBase):
    """Records a Graph by running ``root.forward`` (or a function) on Proxies.

    Calls of leaf modules (those of ``torch.nn``, except containers) are recorded as
    ``call_module``; other modules are traced through. Parameters and buffers become
    ``get_attr`` nodes; functions named by ``fx.wrap`` become ``call_function`` nodes."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {id(value) for module in autowrap_modules
                                       for name, value in vars(module).items()
                                       if not name.startswith('_') and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_modules = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root = None
        self.tensor_attrs = {}

    # ---- what is a leaf ----------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """Whether calls of ``m`` are recorded as ``call_module`` rather than traced into: the
        modules of torch.nn, except Sequential and the other containers."""
        module = type(m).__module__
        return (module.startswith('leafgrad.nn') or module.startswith('torch.nn')) and \
            type(m).__name__ != 'Sequential'

    def path_of_module(self, mod):
        """The qualified name of ``mod`` inside the root ('layer.0')."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError('module is not installed as a submodule')
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError('module is not installed as a submodule')

    def call_module(self, m, forward, args, kwargs):
        """A call of submodule ``m``: recorded if it is a leaf, traced through otherwise."""
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy('call_module', module_qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """The value of ``module.attr`` while tracing: a parameter (or, with
        ``proxy_buffer_attributes``, a buffer) as the Proxy of a ``get_attr`` node."""
        def maybe_get_proxy_for_attr(attr_val, collection_to_search, cache):
            for n, p in collection_to_search:
                if attr_val is p:
                    if n not in cache:
                        kwargs = {}
                        if 'proxy_factory_fn' in inspect.signature(self.create_proxy).parameters:
                            kwargs['proxy_factory_fn'] = (None if not self.param_shapes_constant else
                                                          lambda node: ParameterProxy(self, node, n, attr_val))
                        cache[n] = self.create_proxy('get_attr', n, (), {}, **kwargs)
                    return cache[n]
            return None
        if isinstance(attr_val, Parameter):
            found = maybe_get_proxy_for_attr(attr_val, self.root.named_parameters(), parameter_proxy_cache)
            if found is not None:
                return found
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            found = maybe_get_proxy_for_attr(attr_val, self.root.named_buffers(), parameter_proxy_cache)
            if found is not None:
                return found
        return attr_val

    def create_arg(self, a):
        """Also: parameters and tensors of the root as ``get_attr`` nodes; any other tensor
        kept as a constant attribute ``_tensor_constant<N>``."""
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node('get_attr', n, (), {})
            raise NameError('parameter is not a member of this module')
        if isinstance(a, Tensor):
            for n_, p_ in self.root.named_buffers():
                if a is p_:
                    return self.create_node('get_attr', n_, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while True:
                    qualname = f'_tensor_constant{i}'
                    if not hasattr(self.root, qualname):
                        break
                    i += 1
                self.tensor_attrs[id(a)] = qualname
                setattr(self.root, qualname, a)
            return self.create_node('get_attr', qualname, (), {})
        if isinstance(a, Module):
            raise NotImplementedError(f'argument of type: {type(a)}')
        return super().create_arg(a)

    # ---- the trace -----------------------------------------------------------------------
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """The placeholders for ``root_fn``'s parameters (after ``self`` for a module)."""
        sig = inspect.signature(root_fn)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]
        concrete_args = concrete_args or {}
        proxies = []
        kw_proxies = {}
        for p in params:
            if p.kind == p.VAR_POSITIONAL or p.kind == p.VAR_KEYWORD:
                raise NotImplementedError('symbolic_trace of a forward with *args or **kwargs is not implemented '
                                          'in leafgrad.fx')
            if p.name in concrete_args:
                value = concrete_args[p.name]
            else:
                default = () if p.default is inspect.Parameter.empty else (p.default,)
                type_expr = None if p.annotation is inspect.Parameter.empty else p.annotation
                if isinstance(type_expr, str):
                    type_expr = None
                value = self.create_proxy('placeholder', p.name, default, {}, type_expr=type_expr)
            if p.kind == p.KEYWORD_ONLY:
                kw_proxies[p.name] = value
            else:
                proxies.append(value)
        return proxies, kw_proxies

    def trace(self, root, concrete_args=None):
        """The Graph of ``root`` (a Module or a function) run on Proxies."""
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root = Module()
            fn = root
            self.submodule_paths = None
        fn_globals = fn.__globals__
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        is_module = isinstance(root, Module)
        args, kwargs = self.create_args_for_root(fn, is_module, concrete_args)
        parameter_proxy_cache = {}
        tracer = self
        patcher = _Patcher()
        original_getattr = Module.__getattr__
        original_call = Module.__call__

        @functools.wraps(original_getattr)
        def module_getattr_wrapper(mod, attr):
            attr_val = original_getattr(mod, attr)
            return tracer.getattr(attr, attr_val, parameter_proxy_cache)

        @functools.wraps(original_call)
        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return original_call(mod, *args, **kwargs)
            return tracer.call_module(mod, forward, args, kwargs)
        try:
            patcher.patch(Module, '__getattr__', module_getattr_wrapper)
            patcher.patch(Module, '__call__', module_call_wrapper)
            self._patch_wrapped_functions(patcher, fn_globals)
            result = fn(root, *args, **kwargs) if is_module else fn(*args, **kwargs)
            self.create_node('output', 'output', (self.create_arg(result),), {},
                             type_expr=fn.__annotations__.get('return', None)
                             if not isinstance(fn.__annotations__.get('return', None), str) else None)
        finally:
            patcher.restore()
        return self.graph

    def _patch_wrapped_functions(self, patcher, fn_globals):
        """Replace, in the globals that named them, the functions fx.wrap named (and the autowrapped
        ones the traced function's globals refer to) by ones that record a call when given a Proxy."""
        for (_, name), frame_dict in _wrapped_fns_to_patch.items():
            if name not in frame_dict and hasattr(builtins, name):
                original = getattr(builtins, name)
            else:
                original = frame_dict[name]
            patcher.patch(frame_dict, name, _create_wrapped_func(original), is_dict=True)
        for namespace in [fn_globals] + [vars(module) for module in self._autowrap_modules]:  # math.sqrt too
            for name, value in list(namespace.items()):
                if not name.startswith('_') and callable(value) and id(value) in self._autowrap_function_ids:
                    patcher.patch(namespace, name, _create_wrapped_func(value), is_dict=True)

    def __deepcopy__(self, memo):
        raise NotImplementedError('deepcopy of a Tracer is not implemented in leafgrad.fx')


def _create_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return_proxy = proxy.tracer.create_proxy('call_function', orig_fn, args, kwargs)
            return_proxy.node.meta['is_wrapped'] = True
            return return_proxy
        return orig_fn(*args, **kwargs)
    return wrapped


def symbolic_trace(root, concrete_args=None):
    """The GraphModule of ``root`` (a Module or a function): its forward traced on Proxies."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
