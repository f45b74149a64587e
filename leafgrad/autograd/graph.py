"""The recorded graph: one Node per differentiable op, one AccumulateGrad per leaf.

Design note. A Node is created by an op's forward when grad mode is on and an input requires
grad. It holds ``next_functions``: one ``(node, input_nr)`` edge per input (``(None, 0)`` for
an input that needs no gradient), the tensors its derivative needs (saved with their version
so that an in-place change is detected), and its ``apply``: given the gradient of each of its
outputs, the gradient of each of its inputs, written with leafgrad's own ops so that
``create_graph=True`` records it. The engine knows nothing else about a Node.

A saved *input* is kept as the tensor itself. A saved *output* is kept as its array and
version counter only (keeping the output tensor would make a reference cycle
tensor -> grad_fn -> tensor); it is re-wrapped, connected to this node, when unpacked.
"""
import itertools
import weakref

_sequence = itertools.count()

_FREED = ('Trying to backward through the graph a second time (or directly access saved tensors '
          'after they have already been freed). Saved intermediate values of the graph are freed '
          'when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to '
          'backward through the graph a second time or if you need to access saved tensors after '
          'calling backward.')


class RemovableHandle:
    """Returned by every register_*hook: ``remove()`` takes the hook out again."""
    __slots__ = ('_hooks', 'id')
    _next_id = itertools.count()

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks, fn):
    """Insert fn into an ordered dict of hooks; returns its handle."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class SavedOutput:
    """An op's own output, saved without keeping the output tensor alive."""
    __slots__ = ('data', 'version_counter', 'output_nr', 'requires_grad')

    def __init__(self, tensor):
        self.data = tensor._data
        self.version_counter = tensor._version_counter
        self.output_nr = tensor._output_nr
        self.requires_grad = tensor._requires_grad


class Node:
    """A recorded op. Subclasses are named as PyTorch names them (``MulBackward0``)."""
    # Rarely set fields are class-level defaults; an instance stores them (in its __dict__)
    # only once a hook or metadata is attached, so recording a node sets just two fields.
    __slots__ = ('next_functions', '_seq', '_saved', '_saved_versions', '__dict__', '__weakref__')
    num_outputs = 1
    _tensor_pre_hooks = None  # {output_nr: {id: hook}}: hooks of the non-leaf tensors it produced
    _retained = None          # {output_nr: weakref to a tensor that retains its grad}
    _pre_hooks = None         # {id: hook(grad_outputs)}
    _post_hooks = None        # {id: hook(grad_inputs, grad_outputs)}
    _metadata = None
    _anomaly_trace = None

    def __init__(self, next_functions):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._saved = ()
        self._saved_versions = ()

    # -- what the op's forward uses ------------------------------------------------------
    def save(self, *tensors):
        """Keep tensors (inputs, or SavedOutput of outputs) for the derivative."""
        self._saved = tensors
        self._saved_versions = tuple(t.version_counter[0] if type(t) is SavedOutput
                                     else t._version_counter[0] for t in tensors)

    # -- what the derivative uses ----------------------------------------------------------
    @property
    def saved_tensors(self):
        """The saved tensors, checked against in-place changes since they were saved."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        out = []
        for t, version in zip(saved, self._saved_versions):
            if type(t) is SavedOutput:
                if t.version_counter[0] != version:
                    self._raise_modified(t.data, t.version_counter[0], version, self, t.output_nr)
                t = _tensor.Tensor._from_saved_output(t, self)
            elif t._version_counter[0] != version:
                self._raise_modified(t._data, t._version_counter[0], version, t._grad_fn, t._output_nr)
            out.append(t)
        return out

    @staticmethod
    def _raise_modified(data, now, expected, producer, output_nr):
        where = ''
        if producer is not None:
            where = f', which is output {output_nr} of {_short_name(producer)},'
        raise RuntimeError(
            'one of the variables needed for gradient computation has been modified by an inplace '
            f'operation: [{_tensor.legacy_type_name(data)} {list(data.shape)}]{where} is at version {now}; '
            f'expected version {expected} instead. Hint: enable anomaly detection to find the '
            'operation that failed to compute its gradient, with '
            'leafgrad.autograd.set_detect_anomaly(True, check_nan=False).')

    def release(self):
        """Free what the derivative needed; a second backward through this node then fails."""
        if self._saved:
            self._saved = None

    def needs_input_grad(self, i):
        return self.next_functions[i][0] is not None

    def apply(self, *grads):
        raise NotImplementedError

    # -- introspection, as in PyTorch --------------------------------------------------------
    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; it may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return add_hook(self._pre_hooks, fn)

    def __call__(self, *grads):
        return self.apply(*grads)

    def __repr__(self):
        return f'<{self.name()} object at {hex(id(self))}>'


def _short_name(node):
    name = node.name()
    i = name.find('Backward')
    return name[:i] if i > 0 else name


class AccumulateGrad(Node):
    """The terminal node of a leaf that requires grad: ``leaf.grad += grad``."""
    __slots__ = ('variable',)

    def __init__(self, variable):
        super().__init__(())
        self._seq = float('inf')  # runs as soon as it is ready, as in PyTorch
        self.variable = variable

    def apply(self, grad):
        from .grad_mode import state
        var = self.variable
        old = var._grad
        if old is None:
            # The first write allocates: the engine may hand the same buffer to several
            # consumers, so .grad gets its own copy (detached unless recording the walk).
            var._grad = grad.clone() if state.grad_enabled else grad.detach()._owned_copy()
        elif state.grad_enabled:
            var._grad = old + grad  # out of place, so that the new .grad has a history
        else:
            old._accumulate_(grad)
        meta = var._meta
        if meta is not None and meta.post_acc_hooks:
            for hook in tuple(meta.post_acc_hooks.values()):
                hook(var)
        return ()

    def release(self):
        pass


def grad_accumulator(tensor):
    """The (cached) AccumulateGrad of a leaf; weakly referenced so that it is shared by
    every use of the leaf while a graph holds it, and freed with the graph."""
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
    return node


def gradient_edge(tensor):
    """The edge a gradient for ``tensor`` flows along: its grad_fn, or its accumulator."""
    fn = tensor._grad_fn
    if fn is not None:
        return (fn, tensor._output_nr)
    if tensor._requires_grad:
        return (grad_accumulator(tensor), 0)
    return (None, 0)



from .. import tensor as _tensor  # noqa: E402  (tensor.py imports this module first)
