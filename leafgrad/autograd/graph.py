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
import functools
import itertools
import sys
import _thread  # (threading's local, Lock and RLock are _thread's: importing threading costs ~0.8 ms)
import weakref

import numpy

from .. import backend
from . import grad_mode
from .grad_mode import state
from .origins import modified_at

_sequence = itertools.count()

_FREED = ('Trying to backward through the graph a second time (or directly access saved tensors '
          'after they have already been freed). Saved intermediate values of the graph are freed '
          'when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to '
          'backward through the graph a second time or if you need to access saved tensors after '
          'calling backward.')


class RemovableHandle:
    """Returned by every register_*hook: ``remove()`` takes the hook out again, from
    ``hooks_dict`` and from each ``extra_dict`` (a dict or a list of them) that holds its id
    (``torch.utils.hooks.RemovableHandle``, which code with hook tables of its own makes too).
    ``_changes``: a one-item list counting the registrations and removals of a kind of hook
    (a module's: see nn.modules.module.hook_changes), or None."""
    __slots__ = ('_hooks', 'id', '_extra', '_changes')
    _next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self._hooks = hooks_dict
        self.id = next(RemovableHandle._next_id)
        self._extra = ((extra_dict,) if isinstance(extra_dict, dict)
                       else tuple(extra_dict) if isinstance(extra_dict, list) else ())
        self._changes = None

    def remove(self):
        if self._changes is not None and self.id in self._hooks:
            self._changes[0] += 1
        self._hooks.pop(self.id, None)
        for extra in self._extra:
            extra.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# Held while a hook table is created and filled (rare: at registration), so that two threads
# registering on the same tensor or node at once do not each make a table and lose one.
registration_lock = _thread.RLock()


def add_hook(hooks, fn, changes=None):
    """Insert fn into an ordered dict of hooks; returns its handle. ``changes``: the counter of
    that kind of hook's registrations and removals (RemovableHandle._changes)."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    if changes is not None:
        changes[0] += 1
        handle._changes = changes
    return handle


class SavedOutput:
    """An op's own output, saved without keeping the output tensor alive."""
    __slots__ = ('data', '_version_counter', 'output_nr', 'requires_grad', 'view_fn')

    def __init__(self, tensor):
        self.data = tensor._data
        self._version_counter = tensor._version_counter  # named as a tensor's: save() reads either
        self.output_nr = tensor._output_nr
        self.requires_grad = tensor._requires_grad
        self.view_fn = None  # (an in-place op's view, saved as itself: a weak reference to its history)

    _detached_from = None  # (read like a tensor's: an output is never detached in place)


# ---- saved-tensor hooks (leafgrad.autograd.graph.saved_tensors_hooks) ----------------------
# The innermost (pack, unpack) pair of the saving thread applies when a node saves. Node.save
# first tests a plain module counter (how many hook contexts are open in any thread), so that
# it pays one truth test when no hooks are set; only then does it look at its thread's stack.
saved_hooks_active = 0
inference_made = False  # set once an inference tensor exists: Node.save then checks for them


def _refuse_inference(tensors):
    """PyTorch's error for saving an inference tensor for backward (outside inference mode)."""
    if state.inference:
        return
    for t in tensors:
        if type(getattr(t, '_version_counter', None)) is grad_mode.InferenceCounter:
            raise RuntimeError(grad_mode.SAVE_ERROR)
_hooks_tls = _thread._local()


def _hooks_stack():
    stack = getattr(_hooks_tls, 'stack', None)
    if stack is None:
        stack = _hooks_tls.stack = []
    return stack


def _is_saved_output(entry):
    return type(entry) is SavedOutput or (type(entry) is _Packed or type(entry) is _Kept) and entry.is_output


class _Packed:
    """What a pack hook returned, with what is needed to reconnect the unpacked tensor."""
    __slots__ = ('packed', 'unpack_hook', 'requires_grad', 'grad_fn', 'output_nr', 'accumulator', 'is_output')

    def __init__(self, packed, unpack_hook, requires_grad, grad_fn, output_nr, accumulator, is_output):
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.accumulator = accumulator
        self.is_output = is_output

    def unpack(self, node):
        t = self.unpack_hook(self.packed)
        if not isinstance(t, _tensor.Tensor):
            raise TypeError('Output of saved tensor unpack_hook expected to be a Tensor but got result '
                            f'of type {type(t).__name__}')
        # As in PyTorch, the unpacked tensor takes the saved tensor's place in the graph: an
        # output is connected to this node, an input to its producer (or its leaf accumulator).
        out = _tensor.Tensor._wrap(t._data, self.requires_grad)
        out._version_counter = t._version_counter
        out._output_nr = self.output_nr
        if self.requires_grad:
            out._grad_fn = node if self.is_output else self.grad_fn
            out._accumulator = self.accumulator
        return out


def _pack_all(node, tensors):
    pack, unpack = _hooks_stack()[-1]
    order = node.pack_order
    if order is None or len(order) != len(tensors):
        order = range(len(tensors))
    packed = [None] * len(tensors)
    for i in order:  # packed in PyTorch's order, kept in the node's
        t = tensors[i]
        if type(t) is SavedOutput:
            as_tensor = _tensor.Tensor._from_saved_output(t, node)
            packed[i] = _Packed(pack(as_tensor), unpack, t.requires_grad, None, t.output_nr, None, True)
        elif isinstance(t, _tensor.Tensor):
            packed[i] = _Packed(pack(t), unpack, t._requires_grad, t._grad_fn, t._output_nr, t._accumulator, False)
        else:  # a placeholder for an operand the derivative does not need
            packed[i] = t
    return tuple(packed)


class _Kept:
    """A saved slot kept as is (with its version check) in a node whose other slots were
    packed by hooks (``grad_fn._raw_saved_<name>.register_hooks``)."""
    __slots__ = ('saved', 'version')

    def __init__(self, saved, version):
        self.saved, self.version = saved, version

    # read like a _Packed entry by tools that measure saved memory (autograd.memory)
    packed = property(lambda self: self.saved.data if type(self.saved) is SavedOutput else self.saved)
    is_output = property(lambda self: type(self.saved) is SavedOutput)
    grad_fn = property(lambda self: None if type(self.saved) is SavedOutput else self.saved._grad_fn)

    def unpack(self, node):
        t = self.saved
        if type(t) is SavedOutput:
            if t._version_counter[0] != self.version:
                node._raise_modified(t.data, t._version_counter[0], self.version, node, t.output_nr, t._version_counter)
            return _tensor.Tensor._from_saved_output(t, node)
        if t._detached_from is not None:
            _check_not_detached(t, node)
        if t._version_counter[0] != self.version:
            node._raise_modified(t._data, t._version_counter[0], self.version, _current_grad_fn(t), t._output_nr,
                                 t._version_counter)
        return t


def _check_not_detached(t, node):
    """PyTorch refuses to use a saved input that had a history when ``node`` saved it and has none
    now, lost to ``detach_()`` (``t._detached_from``: the spans of the histories it lost, from the
    node that began each, or its making, to the moment detach_() cut it)."""
    if t._grad_fn is None and any(since < node._seq < until for since, until in t._detached_from):
        raise RuntimeError('Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().'
                           'This is not supported, please use out-of-place `.detach()` instead')


_UNPACKS = (_Packed, _Kept)


class _EmptyType:
    """A placeholder in a node's saved tuple for an operand it does not need (reads as None
    from ``grad_fn._saved_<name>``, as PyTorch's unsaved slots do)."""
    __slots__ = ()
    _version_counter = (0,)
    _detached_from = None


_Empty = _EmptyType()


def _checking_what_was_saved(apply):
    """apply() of a node whose derivative reads ``saved_state``: refused once released, and
    its saved tensors (which PyTorch saves too, though the derivative needs only their shape or
    nothing) are checked for in-place changes first."""
    @functools.wraps(apply)
    def checked_apply(self, *grads):
        if self._saved is None:
            raise RuntimeError(_FREED)
        if self._saved:
            self.saved_tensors  # (the version check)
        return apply(self, *grads)
    return checked_apply


def elementwise_jvp(node, tangents, output=None):
    """The forward rule of a one-input elementwise op: its Jacobian is diagonal, so J t is what
    the reverse derivative gives for t (``jvp = elementwise_jvp`` beside such an op's apply).
    A batched tangent (jacfwd's basis) is given to the derivative as its physical array: the
    batch dimensions lead, so the saved operands broadcast against it sample by sample.
    A complex input: the reverse derivative of a holomorphic f multiplies by conj(f'), so f' t
    is conj(derivative(conj t)); for a real-valued f (abs, angle) the real part of that."""
    t = tangents[0]
    if type(t) is not _tensor.Tensor:
        vmap = sys.modules.get('leafgrad._vmap')
        if vmap is not None and vmap.is_batched(t):  # (not at a lowered level: there it is plain)
            return vmap.on_physical(lambda p: elementwise_jvp(node, (p,), output), t)
    complex_input = t._data.dtype.kind == 'c'
    out = node.apply(t.conj_physical() if complex_input else t)
    out = out[0] if isinstance(out, (tuple, list)) else out
    if out is not None and (complex_input or out._data.dtype.kind == 'c'):  # (or a real tangent of a complex input)
        out = out.conj_physical()
        if output is not None and output._data.dtype.kind != 'c':
            out = out.real
    return out


# Derivatives that record a node of their own, through no declared op (pooling's _separable): forward
# AD wraps them too (forward_ad.py), so that forward over reverse carries tangents through them. The
# module that defines one adds it here, above which it sits.
self_recording = []


def on_samples(fn, t):
    """``fn(t)`` for a computation that treats the leading dimensions as independent samples
    (an elementwise derivative on raw arrays, a scan along a dim counted from the end): a
    batched ``t`` (jacfwd's basis of tangents) is given as its physical array, batch dims in
    front, and the result batched as ``t``."""
    vmap = sys.modules.get('leafgrad._vmap')
    if vmap is not None and vmap.is_batched(t):
        return vmap.on_physical(fn, t)
    return fn(t)


def fold_samples(fn, t, sample_dims):
    """``fn(t)`` for a computation whose result's first ``sample_dims`` dimensions are those of
    ``t`` and independent (a convolution's or a pooling's batch): a batched ``t`` (jacfwd's
    basis of tangents) is given with its batch dims folded into its first dimension, and the
    result unfolded and batched as ``t``."""
    vmap = sys.modules.get('leafgrad._vmap')
    if vmap is not None and vmap.is_batched(t):
        return vmap.folded(fn, t, sample_dims)
    return fn(t)


def each_sample(fn, *tensors):
    """``fn(*tensors)`` where some tensors may be batched (jacfwd's tangents): once per sample,
    the results stacked (for a forward rule written on raw arrays that does not batch)."""
    vmap = sys.modules.get('leafgrad._vmap')
    if vmap is not None and any(vmap.is_batched(t) for t in tensors):
        return vmap.each_sample(fn, tensors)
    return fn(*tensors)


def slice_reduction_jvp(node, tangents, output, dims, keepdim):
    """The forward rule of an op whose outputs each depend on their own slice of the first input
    (a max, a norm, a reduced loss): the reverse derivative seeded with ones gives each output's
    gradient on its slice, and the tangent is that gradient dotted with the inputs' tangents
    over the slice (``dims``; ``()`` for an elementwise, unreduced one)."""
    # (the ops through the tensors' methods, late-bound: the graph is below the op library)
    grads = node.apply(output.new_ones(output.shape))
    if not isinstance(grads, (tuple, list)):
        grads = (grads,)
    out = None
    for g, t in zip(grads, tangents):
        if g is not None and t is not None:
            # (a complex input: the reverse derivative is conj(df/dz) for a holomorphic f, and
            # df/dx + i df/dy for a real-valued one, whose tangent is the real part)
            term = (g.conj() if g.is_complex() else g) * t
            out = term if out is None else out + term
    if out is not None and out.is_complex() and not output.is_complex():
        out = out.real
    if out is None or not dims:
        return out
    return out.sum(dims, keepdim)


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
    _hooked = False           # set once any of the four above is, or _grad_dtype, _input_dtypes or _inert: the walk looks at them only then
    _metadata = None
    _anomaly_trace = None
    # A bfloat16 output's dtype: the walk casts the gradient arriving here to it, as PyTorch
    # casts each gradient to its input's dtype (a float32 op's gradient reaching bfloat16 input)
    _grad_dtype = None
    # Per input, the dtype the walk casts the gradient it gives that input to (None: as it
    # comes), set on a node whose float output's dtype differs from a float input's (a mixed-
    # dtype op); PyTorch's engine casts every gradient to its input's dtype
    _input_dtypes = None
    # Every input edge is None although an input requires grad (a view made under no_grad has
    # no accumulator): the walk passes None on without running the derivative, as PyTorch's
    # derivatives compute nothing when no input needs it (its hooks still run)
    _inert = False
    # Its derivative runs even when no gradient arrived (a custom Function's backward: PyTorch
    # calls it with zeros, or Nones after set_materialize_grads(False)); any other node then
    # passes None on without running, as PyTorch's derivatives give undefined for undefined.
    _runs_without_grads = False
    # The order in which saved-tensor hooks pack and unpack the saved tensors, where PyTorch's
    # differs from the order they are saved in (its generated code saves what the first
    # input's derivative needs first: mul packs other, then self).
    pack_order = None
    saved_names = ()  # grad_fn._saved_<name>: the saved tensors' names, in the order saved (and 'name=attr')
    saved_outputs = ()  # those of them that are outputs of the op, though kept as tensors (nll_loss's total_weight)
    # Slots that hold what the derivative needs besides saved tensors (an index, a mask) and
    # that PyTorch saves as tensors: release() frees them with the saved tensors, and a second
    # backward through the node then fails as PyTorch's does.
    saved_state = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if '_forward_cls' not in cls.__dict__:  # an op's node, not a custom Function's
            cls.__module__ = 'builtins'  # type() prints <class 'MulBackward0'>, as for PyTorch's nodes
        names = cls.__dict__.get('saved_names')
        if names:
            _install_saved_properties(cls, names)
        if cls.saved_state:  # its derivative reads state that release() frees: refuse once freed
            if 'release' not in cls.__dict__:
                cls.release = Node._release_with_state
            if 'apply' in cls.__dict__:
                cls.apply = _checking_what_was_saved(cls.__dict__['apply'])

    def __dir__(self):
        # as PyTorch's node lists itself: the _saved_<name> it has, not a parent's it lacks
        # (AbsentSaved) nor the bookkeeping of what it saved
        cls = type(self)
        return [name for name in super().__dir__()
                if name not in _BOOKKEEPING and not isinstance(getattr(cls, name, None), AbsentSaved)]

    def __init__(self, next_functions):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._saved = ()
        self._saved_versions = ()

    # -- what the op's forward uses ------------------------------------------------------
    def save(self, *tensors):
        """Keep tensors (inputs, or SavedOutput of outputs) for the derivative."""
        if saved_hooks_active or inference_made:  # two int tests on the hot path
            if inference_made:
                _refuse_inference(tensors)
            if saved_hooks_active and _hooks_stack():
                self._saved, self._saved_versions = _pack_all(self, tensors), None
                return
        self._saved = tensors
        # one or two tensors written out: a comprehension costs a function call (Python < 3.12)
        n = len(tensors)
        if n == 1:
            self._saved_versions = (tensors[0]._version_counter[0],)
        elif n == 2:
            self._saved_versions = (tensors[0]._version_counter[0], tensors[1]._version_counter[0])
        else:
            self._saved_versions = tuple([t._version_counter[0] for t in tensors])

    def save_crosswise(self, a, b, first=0):
        """Save a product's two factors (inputs ``first`` and ``first + 1``) as its derivative
        needs them and no more, as PyTorch does: ``b`` when ``a`` needs grad, ``a`` when ``b``
        does. An operand nobody needs is neither kept alive nor checked for in-place changes."""
        needs_a = self.next_functions[first][0] is not None
        needs_b = self.next_functions[first + 1][0] is not None
        if needs_a or needs_b:
            self.save(a if needs_b else _Empty, b if needs_a else _Empty)

    # -- what the derivative uses ----------------------------------------------------------
    @property
    def saved_tensors(self):
        """The saved tensors, checked against in-place changes since they were saved."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        if self._saved_versions is None:
            order = self._unpack_order(saved)
            out = [None] * len(saved)
            for i in order:  # unpacked in PyTorch's order
                p = saved[i]
                out[i] = p.unpack(self) if type(p) in _UNPACKS else p
            return out
        versions = self._saved_versions
        out = []
        for t in saved:  # (indexing versions costs less than a zip)
            version = versions[len(out)]
            if type(t) is SavedOutput:
                if t._version_counter[0] != version:
                    self._raise_first_unusable()
                t = _tensor.Tensor._from_saved_output(t, self)
            elif t._detached_from is not None or t._version_counter[0] != version:
                self._raise_first_unusable()
            out.append(t)
        return out

    def _raise_first_unusable(self):
        """PyTorch's error for the first saved tensor, in the order its derivative unpacks them
        (``pack_order``: mul's other before self), that was changed in place or detached in place
        since it was saved; nothing if none was (a tensor detached after this node was made)."""
        saved, versions = self._saved, self._saved_versions
        for i in self._unpack_order(saved):
            t, version = saved[i], versions[i]
            if type(t) is SavedOutput:
                if t._version_counter[0] != version:
                    producer = t.view_fn() if t.view_fn is not None else None
                    self._raise_modified(t.data, t._version_counter[0], version, producer or self, t.output_nr,
                                         t._version_counter)
                continue
            if t._detached_from is not None:
                _check_not_detached(t, self)
            if t._version_counter[0] != version:
                self._raise_modified(t._data, t._version_counter[0], version, _current_grad_fn(t), t._output_nr,
                                     t._version_counter)

    def _unpack_order(self, saved):
        """The order in which PyTorch's derivative unpacks what this node saved: ``pack_order``
        where the node gives it; else, where its saved names are declared, the inputs by name and
        then the outputs by name, as PyTorch's generated derivatives unpack them (hypot's other,
        self, result; clamp's max, min, self); else as saved."""
        order = self.pack_order
        if order is not None and len(order) == len(saved):
            return order
        names = [name for name in type(self).saved_names if '=' not in name]
        if len(names) != len(saved):
            return range(len(saved))
        outputs = self.saved_outputs
        return sorted(range(len(saved)), key=lambda i: (_is_saved_output(saved[i]) or names[i] in outputs, names[i]))

    def saved_arrays(self):
        """The saved tensors' arrays, checked as ``saved_tensors`` checks them, without
        re-wrapping a saved output: for a derivative computed on arrays in a plain backward,
        where nothing is recorded and no tensor is needed."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        versions = self._saved_versions
        if versions is None:  # packed by saved-tensor hooks: their unpack runs
            return [t._data for t in self.saved_tensors]
        out = []
        for t in saved:
            if t._version_counter[0] != versions[len(out)] or t._detached_from is not None:
                self.saved_tensors  # raises PyTorch's message for it (if it was detached after saving)
            out.append(t.data if type(t) is SavedOutput else t._data)
        return out

    @staticmethod
    def _raise_modified(data, now, expected, producer, output_nr, counter=None):
        """PyTorch's error for a saved tensor found at version ``now``, then (a second line)
        the user's line that changed it, when its version ``counter`` recorded one."""
        where = ''
        if producer is not None:
            where = f', which is output {output_nr} of {_short_name(producer)},'
        raise RuntimeError(
            'one of the variables needed for gradient computation has been modified by an inplace '
            f'operation: [{_tensor.legacy_type_name(data)} {list(data.shape)}]{where} is at version {now}; '
            f'expected version {expected} instead. Hint: enable anomaly detection to find the '
            'operation that failed to compute its gradient, with '
            'leafgrad.autograd.set_detect_anomaly(True, check_nan=False).'
            + (modified_at(counter, expected) if counter is not None else ''))

    def release(self):
        """Free what the derivative needed; a second backward through this node then fails.
        A node that kept nothing (an add) stays usable, as in PyTorch."""
        if self._saved:
            self._saved = None

    def _release_with_state(self):
        """release() of a class that names a ``saved_state`` (installed by __init_subclass__);
        state left None (not needed for the inputs that need grad) counts as nothing kept."""
        kept = self._saved
        for name in self.saved_state:
            if getattr(self, name, None) is not None:
                setattr(self, name, None)
                kept = True
        if kept:
            self._saved = None

    def _saved_slot(self, i, name):
        """The i-th saved tensor (``grad_fn._saved_<name>``); None where the op kept none, or
        the Python scalar operand as a 0-dim tensor."""
        if self._saved_versions is None and self._saved is not None:
            # packed by saved-tensor hooks: unpack this slot only, as PyTorch does
            p = self._saved[i] if i < len(self._saved) else None
            t = p.unpack(self) if type(p) in _UNPACKS else p
        elif self._saved is None and self._saved_versions is not None and i >= len(self._saved_versions) \
                and getattr(self, name + '_scalar', None) is None:
            return None  # released, but this slot never held anything: no error, as in PyTorch
        else:
            saved = self.saved_tensors
            t = saved[i] if i < len(saved) else None
        if isinstance(t, _tensor.Tensor):
            return t
        scalar = getattr(self, name + '_scalar', None)
        return None if scalar is None else _wrapped_number(scalar)

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
        with registration_lock:
            if self._post_hooks is None:
                self._post_hooks = {}
                self._hooked = True
            return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; it may return new grad_outputs."""
        with registration_lock:
            if self._pre_hooks is None:
                self._pre_hooks = {}
                self._hooked = True
            return add_hook(self._pre_hooks, fn)

    def __call__(self, *grads):
        return self.apply(*grads)

    def __repr__(self):  # (the class name: name() may add a namespace, as PyTorch's does)
        return f"<{self.name().rsplit('::', 1)[-1]} object at {hex(id(self))}>"


# ---- grad_fn._saved_<name>, as PyTorch exposes what a node saved ------------------------------
# A node class declares ``saved_names``: the names of its saved tensors in the order its forward
# passes them to ``save``, and ``name=attr`` for a non-tensor it keeps as an attribute. (The
# engine knows no op by name: an op's declaration says what its node saved.)


def _wrapped_number(value):
    """A Python scalar operand as PyTorch keeps it: a 0-dim float64/int64/bool tensor."""
    dtype = numpy.bool_ if isinstance(value, bool) else numpy.int64 if isinstance(value, int) else numpy.float64
    return _tensor.Tensor._wrap(numpy.asarray(value, dtype=dtype))


def _install_saved_properties(cls, names):
    own = {entry.partition('=')[0] for entry in names}
    for base in cls.__mro__[1:]:  # a parent's saved names that this node does not save (EluBackward1's
        for name in base.__dict__.get('saved_names') or ():  # result where EluBackward0 saves self): absent
            name = name.partition('=')[0]
            if name not in own:
                setattr(cls, f'_saved_{name}', AbsentSaved(_no_such_saved(cls, f'_saved_{name}')))
                setattr(cls, f'_raw_saved_{name}', AbsentSaved(_no_such_saved(cls, f'_raw_saved_{name}')))
    position = 0
    for entry in names:
        name, _, attr = entry.partition('=')
        attr, _, kind = attr.partition(':')
        if kind == 'int64':  # ('dim=given_dim:int64': an int or ints as PyTorch's node shows its int64s)
            prop = property(lambda self, attr=attr: shown_int64(getattr(self, attr, None)))
        elif attr:
            prop = property(lambda self, attr=attr: getattr(self, attr, None))
        else:
            prop = property(lambda self, i=position, name=name: self._saved_slot(i, name))
            setattr(cls, f'_raw_saved_{name}', property(lambda self, i=position: SavedTensor(self, i)))
            position += 1
        setattr(cls, f'_saved_{name}', prop)


def shown_int64(value):
    """An int64 a node keeps (or a sequence of them), as PyTorch shows it: as given, a negative
    one read back as an unsigned 64-bit number (grad_fn._saved_dim of unsqueeze(-1) is 2**64 - 1)."""
    if isinstance(value, (tuple, list)):
        return tuple(shown_int64(v) for v in value)
    return value + (1 << 64) if isinstance(value, int) and value < 0 else value


class AbsentSaved(property):
    """A parent's ``_saved_<name>`` that a node does not have (EluBackward1 saves the result
    where EluBackward0 saves self): reading it raises AttributeError, and dir() omits it."""


_BOOKKEEPING = frozenset(('_saved', '_saved_versions', '_saved_slot'))


def _no_such_saved(cls, attr):
    def absent(self):
        raise AttributeError(f"'{cls.__name__}' object has no attribute '{attr}'")
    return absent


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: one saved slot, on which a pair of saved-tensor hooks
    can be set for that tensor alone."""
    __slots__ = ('node', 'index')

    def __init__(self, node, index):
        self.node, self.index = node, index

    def register_hooks(self, pack_hook, unpack_hook):
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError('register_hooks(): incompatible function arguments: pack_hook and unpack_hook must '
                            'be callable')
        node, i = self.node, self.index
        if node._saved is None:
            raise RuntimeError('Calling register_hooks on a saved tensor after it has been freed. Saved '
                               'intermediate values of the graph are freed when you call .backward() or '
                               'autograd.grad(). Specify retain_graph=True if you need to backward through the '
                               'graph a second time or if you need to access saved variables after calling '
                               'backward.')
        saved = list(node._saved)
        if i >= len(saved) or not isinstance(saved[i], (SavedOutput, _tensor.Tensor, _Kept)):
            raise RuntimeError('Calling register_hooks on a saved tensor whose hooks have already been set. '
                               'Hint: only one pair of hooks is allowed at a time.')
        if node._saved_versions is not None:  # switch the node to per-slot unpacking
            saved = [_Kept(t, v) if isinstance(t, (SavedOutput, _tensor.Tensor)) else t
                     for t, v in zip(saved, node._saved_versions)]
        entry = saved[i].saved
        stack = _hooks_stack()  # _pack_all packs with the innermost pair: push this one briefly
        stack.append((pack_hook, unpack_hook))
        try:
            saved[i] = _pack_all(node, (entry,))[0]
        finally:
            stack.pop()
        node._saved, node._saved_versions = tuple(saved), None


def _current_grad_fn(t):
    """A saved input's grad_fn as it is now (a view's is regenerated, by the tensor's grad_fn:
    PyTorch's message names the node the tensor has when the error is raised)."""
    return _tensor.Tensor.grad_fn.fget(t)


def _short_name(node):
    """A node's name as PyTorch's errors give it: without its 'Backward0' or 'Backward' ending,
    'Backward<n>' for another n becoming n (MulBackward0 is Mul, PowBackward1 is Pow1, a custom
    Function's EBackward is E, CopyBackwards stays whole)."""
    name = node.name()
    stem = name.rstrip('0123456789')
    if not stem.endswith('Backward'):
        return name
    number = name[len(stem):]
    return stem[:-len('Backward')] + (number if number != '0' else '')


class AccumulateGrad(Node):
    """The terminal node of a leaf that requires grad: ``leaf.grad += grad``.

    Backward calls in several threads may accumulate into the same leaf at once (NumPy
    releases the GIL inside a large addition, so an unguarded ``+=`` loses updates): the
    update of ``.grad`` and the post-accumulate hooks run under the node's lock, as PyTorch
    locks its AccumulateGrad. ``grad_accumulator`` gives a leaf one node at a time, so that
    lock is the leaf's. (Re-entrant, so that a post-accumulate hook may run a backward into
    the same leaf.) Tensor hooks run before it, unguarded, as in PyTorch."""
    __slots__ = ('variable', '_lock')
    _hooked = True  # the leaf's own hooks (variable._meta.hooks) run here

    def name(self):
        # PyTorch names it by its C++ class: torch::autograd::AccumulateGrad
        return 'leafgrad::autograd::AccumulateGrad'

    def __repr__(self):
        return f'<AccumulateGrad object at {hex(id(self))}>'

    def __init__(self, variable):
        # (Node.__init__'s fields written out, without a sequence number: a leaf's node is made
        # for every graph that uses the leaf, as the graph's first node)
        self.next_functions = ()
        self._seq = _INF  # runs as soon as it is ready, as in PyTorch
        self._saved = ()
        self._saved_versions = ()
        self.variable = variable
        self._lock = _RLock()

    def apply(self, grad):
        var = self.variable
        if var._grad_fn is not None:
            raise RuntimeError('leaf variable has been moved into the graph interior')
        if not var._requires_grad:
            return ()  # requires_grad_(False) or detach_() since it was used: no .grad, as in PyTorch
        if grad._data.dtype != var._data.dtype:
            grad = grad.to(var.dtype)  # a float32 leaf gets a float32 .grad, as in PyTorch
        lock = self._lock  # (acquire/release: half the instructions of a with-statement)
        lock.acquire()
        try:
            old = var._grad
            if old is None:
                # The first write allocates, unless nobody else can see the incoming buffer:
                # then .grad takes it as it is (PyTorch "steals" it the same way, by
                # reference count).
                if state.grad_enabled:
                    var._grad = grad.clone()
                elif unshared(grad, 3):  # the engine's buffer list, apply's argument tuple and parameter
                    var._grad = _tensor.Tensor._wrap(grad._data)
                else:
                    var._grad = grad.detach()._owned_copy()
                if state.inference:  # a .grad made in inference mode is an inference tensor, as PyTorch's
                    var._grad._version_counter = grad_mode.InferenceCounter((0,))
            elif state.grad_enabled:
                var._grad = old + grad  # out of place, so that the new .grad has a history
            else:
                old._accumulate_(grad)
            meta = var._meta
            if meta is not None and meta.post_acc_hooks:
                for hook in tuple(meta.post_acc_hooks.values()):
                    returned = hook(var)
                    if returned is not None:
                        if not isinstance(returned, _tensor.Tensor):
                            raise TypeError(f"expected Variable, but hook returned '{type(returned).__name__}'")
                        raise RuntimeError('Tensor post accumulate grad hooks should return None.')
        finally:
            lock.release()
        return ()

    def release(self):
        pass


_ndarray = backend.numpy.ndarray
# The counts below hold for CPython up to 3.13 (checked on 3.10-3.13; 3.10 counts more, so it
# never reuses). Later versions may borrow references on the stack, and a lower count would no
# longer prove that nobody else holds a buffer: there the walk always copies.
_COUNTS_PROVE_UNSHARED = sys.implementation.name == 'cpython' and sys.version_info < (3, 14)


def unshared(grad, holders):
    """True when ``grad`` and its memory are seen by nothing but the engine's walk (no user
    tensor, no other buffer, no view) and laid out contiguously and writable: then the walk may
    reuse the buffer (AccumulateGrad keeps it as .grad, a sum is made in it) instead of
    allocating. ``holders``: the references the caller itself has to ``grad``; any other one
    means someone else can see it (PyTorch decides the same way, by reference count)."""
    # getrefcount sees, besides the holders, this function's parameter and its own argument;
    # the array is held by the tensor, the local ``arr`` and getrefcount's argument.
    if (not _COUNTS_PROVE_UNSHARED or type(grad) is not _tensor.Tensor or sys.getrefcount(grad) > holders + 2
            or grad._grad_fn is not None):
        return False
    arr = grad._data
    if type(arr) is not _ndarray:  # (a CuPy array: always writable)
        return (backend.on_gpu(arr) and arr.base is None and sys.getrefcount(arr) <= 3
                and arr.flags.c_contiguous)
    if arr.base is not None or sys.getrefcount(arr) > 3:
        return False
    flags = arr.flags  # (a flags object holds its array: counted above, before it existed)
    return flags.c_contiguous and flags.writeable


def grad_accumulator(tensor):
    """The (cached) AccumulateGrad of a leaf; weakly referenced so that it is shared by
    every use of the leaf while a graph holds it, and freed with the graph. Made under a
    lock, so that graphs recorded at once in several threads share one node (and its lock)."""
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        if tensor._base is not None and tensor._base._requires_grad and not tensor._own_requires_grad:
            return None  # a view that requires grad only as its base does (PyTorch's: no accumulator)
        _accumulator_creation.acquire()
        try:
            ref = tensor._accumulator
            node = ref() if ref is not None else None
            if node is None:
                node = AccumulateGrad(tensor)
                tensor._accumulator = weakref.ref(node)
        finally:
            _accumulator_creation.release()
    return node


_accumulator_creation = _thread.allocate_lock()
_RLock = _thread.RLock  # (the C type itself: half the cost of threading.RLock())
_INF = float('inf')


def gradient_edge(tensor):
    """The edge a gradient for ``tensor`` flows along: its grad_fn (a view's brought up to date
    by the tensor's grad_fn, views.py's regeneration), or its accumulator."""
    fn = tensor._grad_fn if tensor._base is None else _tensor.Tensor.grad_fn.fget(tensor)
    if fn is not None:
        return (fn, tensor._output_nr)
    if tensor._requires_grad:
        return (grad_accumulator(tensor), 0)
    return (None, 0)



# leafgrad.tensor, late-bound: tensor.py sets it as it loads. The graph is below the tensor (which
# imports it); it makes Tensors (gradients, unpacked saved outputs) without importing their
# module. The engine and the view bookkeeping reach it here too.
_tensor = None


class saved_tensors_hooks:
    """Within this context, a node saving a tensor for its derivative keeps
    ``pack_hook(tensor)`` instead, and its derivative gets ``unpack_hook(packed)`` back.
    Contexts nest; the innermost applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        message = getattr(_hooks_tls, 'disabled_message', None)
        if message is not None:
            raise RuntimeError(message)
        _hooks_stack().append((self.pack_hook, self.unpack_hook))
        _count_hook_contexts(1)
        return self

    def __exit__(self, *exc):
        _hooks_stack().pop()
        _count_hook_contexts(-1)


_hooks_count_lock = _thread.allocate_lock()


def _count_hook_contexts(step):
    # (a bare ``+=`` on a module global can lose an update between two threads)
    global saved_hooks_active
    with _hooks_count_lock:
        saved_hooks_active += step


class disable_saved_tensors_hooks:
    """Within this context, entering saved_tensors_hooks raises ``error_message`` (in this
    thread: the setting is per thread, as PyTorch's)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if saved_hooks_active and _hooks_stack():
            raise RuntimeError(self.error_message)
        self.prev = getattr(_hooks_tls, 'disabled_message', None)
        _hooks_tls.disabled_message = self.error_message

    def __exit__(self, *exc):
        _hooks_tls.disabled_message = self.prev


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept in host memory and moved back to their device when the
    derivative needs them (a no-op copy-free pass for tensors already on the CPU)."""

    def __init__(self, pin_memory=False, device_type='cuda'):
        def pack(tensor):
            device = tensor.device
            if device.type == 'cpu':
                return device, tensor
            return device, tensor.cpu()

        def unpack(packed):
            device, tensor = packed
            return tensor if device.type == 'cpu' else tensor.to(device)

        super().__init__(pack, unpack)


def increment_version(tensor):
    """Mark ``tensor`` as modified in place (for changes made behind autograd's back)."""
    tensors = (tensor,) if isinstance(tensor, _tensor.Tensor) else tensor
    for t in tensors:
        t._bump_version()


def _grad_fn_or_accumulator(t):
    if t._grad_fn is not None:
        return t._grad_fn
    if t._requires_grad:
        return grad_accumulator(t)
    raise RuntimeError('Expected a tensor that requires grad')


class _MultiHandle:
    __slots__ = ('handles',)

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# ---- the backward walks running in this thread (the engine starts and ends them; a multi-grad hook asks) ----

class _Callbacks(_thread._local):
    pending = None  # the outermost running walk's callbacks (None when no walk runs)
    walks = None    # the running walks, innermost last: (id, dependency counts, roots, runnable, grad(),
    #               retain_graph)


_callbacks = _Callbacks()
def current_graph_task_id() -> int:
    """The id of the backward walk running in this thread (the innermost), -1 outside one."""
    walks = _callbacks.walks
    return walks[-1][0] if walks else -1


def will_engine_execute_node(node: Node) -> bool:
    """Whether the walk running in this thread reaches ``node`` (a grad_fn or AccumulateGrad),
    as PyTorch's ``torch._C._will_engine_execute_node``."""
    walks = _callbacks.walks
    if not walks:
        raise RuntimeError('_will_engine_execute_node should only be called during the backward pass')
    _, deps, roots, runnable, capture, _ = walks[-1]
    if capture and type(node) is AccumulateGrad:
        raise RuntimeError('A leaf node was passed to _will_engine_execute_node but we are currently running '
                           'autograd.grad(). This is currently not supported.')
    return (node in deps or node in roots) and (runnable is None or node in runnable)


def register_multi_grad_hook(tensors, fn, *, mode='all'):
    """A hook on several tensors at once. ``mode='all'``: ``fn(grads)`` once per backward, when
    the gradient of every tensor the walk reaches has been computed (None for the others);
    ``mode='any'``: ``fn(grad)`` with the first of them computed in each backward."""
    supported_modes = ('all', 'any')
    if mode not in supported_modes:
        raise ValueError(f'Expects mode to be one of {supported_modes} but got {mode}')
    lock = _thread.allocate_lock()
    tensors = tuple(tensors)
    if mode == 'all':
        count, buffer, expected = {}, {}, [None]
        grad_fns = [_grad_fn_or_accumulator(t) for t in tensors]

        def inner_hook(idx):
            def hook(grad):
                task = current_graph_task_id()
                with lock:
                    seen = count.get(task, 0)
                    count[task] = seen + 1
                    if seen == 0:
                        expected[0] = sum(map(will_engine_execute_node, grad_fns))
                        buffer[task] = [None] * len(tensors)
                buffer[task][idx] = grad
                if seen == expected[0] - 1:
                    grads = buffer.pop(task)
                    del count[task]
                    fn(grads)
            return hook
        return _MultiHandle(tuple(t.register_hook(inner_hook(i)) for i, t in enumerate(tensors)))
    ran = {}

    @functools.wraps(fn)
    def wrapped(grad):
        task = current_graph_task_id()
        with lock:
            first = task not in ran
            ran[task] = True
        if first:
            fn(grad)
    return _MultiHandle(tuple(t.register_hook(wrapped) for t in tensors if t._requires_grad))


_mutation_allowed = [False]


class _AllowMutationOnSavedContext:
    """What ``allow_mutation_on_saved_tensors`` yields: the saved copies, dropped on exit."""

    def __init__(self):
        self.saved = {}

    def clear(self):
        self.saved.clear()


class allow_mutation_on_saved_tensors:
    """Within this context, a tensor saved for backward may be changed in place afterwards: the
    derivative sees the value it had when it was saved. Forward and backward both run inside.
    (PyTorch copies a saved tensor when it is first changed; leafgrad copies it when it is
    saved: the same values, more memory while the graph lives.)"""

    _MESSAGE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                'in which the graph was originally recorded.')

    def __enter__(self):
        if _mutation_allowed[0]:
            raise RuntimeError('allow_mutation_on_saved_tensors contexts cannot be nested')
        ctx = self.ctx = _AllowMutationOnSavedContext()

        def pack(tensor):
            key = object()
            ctx.saved[key] = tensor.detach().clone()
            return key

        def unpack(key):
            if not _mutation_allowed[0] or key not in ctx.saved:
                raise AssertionError(self._MESSAGE)
            return ctx.saved[key]
        self.hooks = saved_tensors_hooks(pack, unpack)
        self.hooks.__enter__()
        _mutation_allowed[0] = True
        return ctx

    def __exit__(self, *exc):
        self.hooks.__exit__(*exc)
        self.ctx.clear()
        _mutation_allowed[0] = False
