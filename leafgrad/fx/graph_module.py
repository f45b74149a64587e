"""``torch.fx.GraphModule``: a Module whose ``forward`` is the code generated from a Graph."""
import copy

from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ..tensor import Tensor

__all__ = ['GraphModule']


def _copy_attr(from_module, to_module, target):
    """Install ``from_module``'s attribute at the dotted path ``target`` into ``to_module``,
    making empty Modules for the path's intermediate names (``(seq): Module(...)`` in a repr)."""
    *prefix, field = target.split('.')
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # already installed, with everything below it
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter) and field in getattr(from_module, '_buffers', {}):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split('.')
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class GraphModule(Module):
    """A Module made from ``root`` (a Module, or a dict of the attributes the graph reads) and
    a Graph: it holds the submodules, parameters and buffers the graph's nodes name, and its
    ``forward`` is the graph's generated code (``gm.code``), made again by ``recompile()``."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so that its generated forward is its own
        if cls.__name__ != 'GraphModuleImpl':
            cls = type('GraphModuleImpl', (cls,), {})
        return super().__new__(cls)

    def __init__(self, root, graph, class_name='GraphModule'):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, 'training'):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ('get_attr', 'call_module'):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ('get_attr', 'call_module'):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that target was not "
                                           'provided in ``root``!')
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError('Unsupported type ' + str(root) + ' passed for root!')
        self.graph = graph
        self.meta = {}

    @property
    def graph(self):
        """The Graph this module runs; assigning one regenerates ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g):
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of ``forward``."""
        if not hasattr(self, '_code'):
            raise RuntimeError('Code has not been generated! Please report a bug to PyTorch')
        return self._code

    def recompile(self):
        """Generate ``forward`` again from the graph, after the graph was changed."""
        python_code = self._graph.python_code(root_module='self')
        self._code = python_code.src
        globals_ = dict(python_code.globals)
        exec(compile(self._code, f'<eval_with_key>.{id(self)}', 'exec'), globals_)
        type(self).forward = globals_['forward']
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False):
        """The generated code as the source of a class. ``include_stride``, ``include_device`` and
        ``colored`` annotate PyTorch's printout with each node's tensor metadata: not implemented
        here, and refused rather than ignored."""
        for flag, value in (('include_stride', include_stride), ('include_device', include_device),
                            ('colored', colored)):
            if value:
                raise NotImplementedError(f'GraphModule.print_readable({flag}=True) is not implemented in leafgrad.fx')
        body = '\n'.join('    ' + line if line else line for line in self._code.strip('\n').split('\n'))
        text = f'class {type(self).__name__}(leafgrad.nn.Module):\n{body}\n'
        if print_output:
            print(text)
        return text

    def __str__(self):
        orig_str = super().__str__()
        reminder = '# To see more debug info, please use `graph_module.print_readable()`'
        return '\n'.join([orig_str, self._code, reminder])

    def __copy__(self):
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, 'meta', {})
        return res

    def __deepcopy__(self, memo):
        fake_mod = Module()
        fake_mod.__dict__ = copy.deepcopy(self.__dict__, memo)
        return GraphModule(fake_mod, fake_mod.__dict__['_graph'], type(self).__name__)
