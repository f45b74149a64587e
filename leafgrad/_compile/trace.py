"""Tracing: one eager run of the function that records its top-level op calls.

Design note. leafgrad has no central dispatcher, so tracing borrows the profiler's mechanism
(``autograd/_instrument.py``): while a trace runs, every public op (the op families'
functions and Tensor methods, ``nn.functional``, the factories, ``linalg``, ``special``) is
replaced, wherever a module's globals or the ``Tensor`` class hold it, by a wrapper that runs
the op and records the call: the function, its arguments with each tensor replaced by the
*slot* that holds it, and the slots of its outputs. Only top-level calls are recorded (``F.linear``,
not the ``t`` and ``addmm`` it calls); the wrappers are removed when the trace ends, so an
op outside a trace is the very function it always was.

A tensor the recorded calls read is an input of the compiled function, the output of an
earlier recorded call, or a tensor that existed before the call and is reachable from the
function (a module's parameters and buffers, tensors in its closure and globals): those are
*captured* and read afresh on every call. Any other tensor was made by something the trace
did not see; the call is then not replayable and runs eagerly (the report says why).

Data-dependent Python (``.item()``, ``bool(t)``, ``.tolist()``, ``.numpy()``, printing a
tensor, ``float(t)``) is a *graph break*: the wrappers of those methods note it, and the
function then runs eagerly for that signature, as torch.compile runs the code around a break
eagerly (``fullgraph=True`` raises instead).

Except where the tensor read is a *constant* of the signature: made on the CPU by factories
from Python numbers (``full``, ``arange``, ``zeros_like`` ...) and by ops on such tensors only,
with no random draw, and not changed in place by anything else (``Tracer.constant``). Its
value is the same on every call with this signature, so reading it (the Transformer's test of
whether its mask is the causal one) decides nothing that a replay could get wrong.
"""
import builtins
import functools
import importlib
import logging
import os
import random
import sys
import threading
import types
import warnings
import weakref

import numpy

from ..tensor import Tensor
from ..autograd import _instrument, origins
from .. import ops
from ..nn.modules.module import Module
from ..autograd.grad_mode import state
from ..autograd.graph import _sequence as _node_sequence
from ..amp import policy as autocast
from ..generator import Generator, default_generator

_get_ident = threading.get_ident

# The tracer recording in this process (one at a time), else None: read by every wrapper.
active = None
_lock = threading.Lock()
_wrappers = None     # {id(original): (original, wrapper)}
_originals = {}      # {id(wrapper): (wrapper, original)}
_sites = None        # where the originals are bound (_instrument.Sites: found once, then each new module)


class Unsupported(Exception):
    """Raised inside the tracer's bookkeeping: the traced call cannot be replayed."""


class Ref:
    """A tensor argument's place in a recorded call: the slot that holds it."""
    __slots__ = ('slot',)

    def __init__(self, slot):
        self.slot = slot

    def __repr__(self):
        return f'%{self.slot}'


class Call:
    """One recorded top-level op call."""
    __slots__ = ('fn', 'name', 'args', 'kwargs', 'ins', 'outs', 'out_template', 'grad_mode', 'inplace', 'reached',
                 'mutated', 'saves', 'view')

    def __init__(self, fn, name, args, kwargs, ins, outs, out_template, grad_mode, inplace, reached=None, mutated=(),
                 saves=()):
        self.fn, self.name, self.args, self.kwargs = fn, name, args, kwargs
        self.ins, self.outs, self.out_template = ins, outs, out_template
        self.grad_mode, self.inplace = grad_mode, inplace
        self.reached = reached  # per input: whether the op's recorded graph leads back to it
        # The positions in ``ins`` of the tensor an in-place op changed, where that tensor is an
        # intermediate the function made, no view and viewed by none: the replay may compute the
        # op out of place into the output's slot (the input's slot is then never read again)
        self.mutated = mutated
        # The positions in ``ins`` of the tensors the op's own nodes saved for the backward (or a
        # view of them): an island's replay saves them too, for eager's check of an in-place change
        self.saves = saves
        self.view = None  # a view op (one tensor argument, its outputs views of it, nothing changed): 0

    def __repr__(self):
        return f'{self.outs} = {self.name}{self.args}'


class Tracer:
    """What one traced call recorded (see the module's design note)."""

    def __init__(self, inputs, known, paths=None, values=()):
        self.thread = _get_ident()
        self.grad_mode = state.grad_enabled  # (the call's: its replay's forward is chosen by it)
        self.paths = paths if paths is not None else {}  # id -> how a known tensor was reached
        self.values = values  # (path, value) of the Python values the function can reach
        self.depth = 0
        self.calls = []
        self.slot_of = {}        # id(tensor) -> slot (the tensor's current value)
        self.keep = []           # every tensor seen: kept alive so that ids stay unique
        self.meta = []           # slot -> (shape, dtype, requires_grad)
        self.kind = []           # slot -> 'input', 'captured' or 'op'
        self.captured = {}       # slot -> the pre-existing tensor
        self.known = known       # id -> pre-existing tensor that may be captured
        self.breaks = []         # graph-break reasons, in order
        self.break_lines = []    # the user's line of each (file:line, or None)
        self.unsupported = None  # why the trace cannot be replayed (first reason)
        self.opaque = {}         # id(tensor) -> name of the untraced op that made it
        self.array_type = None   # the type of every slot's array (NumPy's, CuPy's...): one device
        self.external = set()    # ids of the input and captured tensors (changed in place, still theirs)
        self.first_node = next(_node_sequence)  # the call's own autograd nodes are numbered from here
        self.constant = set()    # the slots whose values the signature decides (the module's note);
        #                          None once a constant tensor was changed by other data
        self.draws = 0           # random draws from any Generator so far (counted while tracing)
        self.changed = set()     # ids of the tensors recorded calls changed in place
        for t in inputs:
            self._new_slot(t, 'input')

    def _new_slot(self, t, kind):
        s = len(self.meta)
        self.meta.append((t._data.shape, t._data.dtype, t._requires_grad))
        if type(t._data) is not self.array_type:
            if self.array_type is None:
                self.array_type = type(t._data)
            else:  # (a CPU scalar tensor beside a GPU's, a .cuda() inside: the call runs eagerly)
                self.fail('the call reads or makes tensors on more than one device, which compile does not '
                          'replay')
        self.kind.append(kind)
        self.slot_of[id(t)] = s
        self.keep.append(t)
        if kind == 'captured':
            self.captured[s] = t
        if kind != 'op':
            self.external.add(id(t))
        return s

    def fail(self, reason):
        if self.unsupported is None:
            self.unsupported = reason

    def graph_break(self, reason):
        """A graph break, and the user's line that made it (for the graph_breaks log)."""
        self.breaks.append(reason)
        f = origins.user_frame(sys._getframe(1))
        self.break_lines.append(f'{f.f_code.co_filename}:{f.f_lineno}' if f is not None else None)

    def slot(self, t, name):
        s = self.slot_of.get(id(t))
        if s is None:
            if id(t) in self.opaque:
                raise Unsupported(f'{name} reads a tensor made by {self.opaque[id(t)]}, which compile cannot replay')
            if id(t) not in self.known:
                raise Unsupported(f'{name} reads a tensor made outside the traced ops (not an input, nor a '
                                  'parameter, buffer or tensor reachable from the function)')
            return self._new_slot(t, 'captured')
        if self.meta[s][2] != t._requires_grad:
            raise Unsupported(f'{name} reads a tensor whose requires_grad changed inside the function')
        return s

    def template(self, value, name, ins):
        """``value`` with every tensor replaced by its Ref (lists, tuples and dicts searched)."""
        if isinstance(value, Tensor):
            s = self.slot(value, name)
            ins.append(s)
            return Ref(s)
        tv = type(value)
        if tv is list or tv is tuple:
            return tv([self.template(v, name, ins) for v in value])
        if tv is dict:
            return {k: self.template(v, name, ins) for k, v in value.items()}
        return value

    def record(self, fn, name, args, kwargs, out, versions, first_node, grad_fns, drew):
        """Record one top-level call. ``versions`` and ``grad_fns``: its tensor arguments'
        before it ran; ``first_node``: the number its own autograd nodes start from; ``drew``:
        whether it drew random numbers."""
        if self.unsupported is not None:
            return
        if autocast.state.on:  # casts and its cast cache are not replayed: eager, correct
            self.fail(f'{name} runs under autocast, which compile does not replay')
            return
        if state.grad_enabled and not self.grad_mode:  # (a replay without grad mode records nothing)
            self.fail(f'{name} runs with grad mode enabled inside a call made without it')
            return
        if _shape_from_data(fn, args, kwargs):  # (PyTorch's default too: a graph break)
            self.graph_break(f'{name} makes an output whose shape depends on tensor data')
            return
        try:
            if 'out' in kwargs and kwargs['out'] is not None:
                raise Unsupported(f'{name}(out=...) is not replayed')
            ins = []
            targs = self.template(args, name, ins)
            tkw = self.template(kwargs, name, ins)
            in_tensors = [t for t in _tensors((args, kwargs))]
            outs_t = list(_tensors(out))
            if outs_t and all(
                    any(o is t and t._version_counter[0] == v for t, v in zip(in_tensors, versions)) for o in outs_t):
                return  # the op handed back its input unchanged (contiguous(), float() of a float): no call
            # per tensor argument: whether its version moved on, and whether the op handed it back
            moved = [t._version_counter[0] != v for t, v in zip(in_tensors, versions)]
            handed_back = [any(o is t for o in outs_t) for t in in_tensors]
            changed = [m or h for m, h in zip(moved, handed_back)]
            self.changed.update(id(t) for t, c in zip(in_tensors, changed) if c)
            inplace = any(handed_back)
            mutated = self._functional(in_tensors, handed_back) if inplace else ()
            if mutated is None:
                if state.grad_enabled and any(t._requires_grad for t in in_tensors):
                    raise Unsupported(f'{name} changes in place, under autograd, a tensor that is an input or '
                                      'captured, a view or viewed')
                mutated = ()
            # (an op that returns nothing, as __setitem__, shows its change by the version counter;
            # batch norm's running statistics, which need no gradient, replay as they are)
            if state.grad_enabled and any(m and t._requires_grad and i not in mutated
                                          for i, (t, m) in enumerate(zip(in_tensors, moved))):
                raise Unsupported(f'{name} changes a tensor in place under autograd')
            if not state.grad_enabled and any(m and t._requires_grad for t, m in zip(in_tensors, moved)):
                # (eagerly its gradient still flows to where it did: through the ops that made
                # it, or into the leaf; the replay would follow the value, through an op recorded
                # without a gradient)
                raise Unsupported(f'{name} changes in place under no_grad a tensor that requires grad')
            constant = self._is_constant(fn, args, kwargs, ins, drew)
            if self.constant is not None and not constant and any(
                    c and s in self.constant for c, s in zip(changed, ins)):
                self.constant = None  # a constant's tensor changed by other data: no more constants
            if not isinstance(out, (Tensor, tuple, list)) and out is not None:
                if getattr(fn, '__name__', '') in _DATA_DEPENDENT and not constant:
                    self.graph_break(f'{name}() returned a Python {type(out).__name__} computed from tensor data')
                return
            outs = []
            tout = self._out_template(out, outs)
            if constant and self.constant is not None and all(
                    type(self.keep[s]._data) is numpy.ndarray for s in outs):
                self.constant.update(outs)
            reached, saves = _reached(outs_t, in_tensors, first_node, grad_fns) if state.grad_enabled else (None, ())
            call = Call(fn, name, targs, tkw, ins, outs, tout, state.grad_enabled, inplace, reached, mutated, saves)
            if len(in_tensors) == 1 and outs_t and not any(changed) and all(
                    o._version_counter is in_tensors[0]._version_counter for o in outs_t):
                call.view = 0  # (an output that is a view of an input is made again by it: alias_chain)
            self.calls.append(call)
        except Unsupported as e:
            self.fail(str(e))

    def _is_constant(self, fn, args, kwargs, ins, drew):
        """Whether a call's outputs are constants of the signature: no random draw, no
        Generator or NumPy array among its arguments, and its tensors all constants (or none,
        for the factories in _CONSTANT_FACTORIES; any, for those in _SHAPE_FACTORIES)."""
        if self.constant is None or drew or _holds_data((args, kwargs)):
            return False
        name = getattr(fn, '__name__', '')
        if getattr(fn, '__module__', '') == 'leafgrad.creation' and (
                name in _SHAPE_FACTORIES or name in _CONSTANT_FACTORIES and not ins):
            return True
        return bool(ins) and all(s in self.constant for s in ins)

    def is_constant(self, t):
        """Whether tensor ``t`` holds a constant of the signature (the module's note)."""
        return self.constant is not None and self.slot_of.get(id(t)) in self.constant

    def _functional(self, in_tensors, handed_back):
        """The positions of the inputs that an in-place op handed back (changed), where each is
        an intermediate this call made, not a view and viewed by no tensor the trace saw (so no
        other tensor shows the change: a view or a ``detach()`` shares its version counter); None
        where one is not."""
        positions = []
        for i, t in enumerate(in_tensors):
            if handed_back[i]:
                s = self.slot_of.get(id(t))
                counter = t._version_counter
                if s is None or id(t) in self.external or t._base is not None or any(
                        k._version_counter is counter and k is not t for k in self.keep):
                    return None
                positions.append(i)
        return tuple(positions)

    def check_saved(self, out):
        """After the trace: fail if an in-place op changed a tensor that a node of the call's
        graph saved before (an empty slice's change too: it moves the version on). Eager's
        backward raises there; a replay would not (an in-place op replayed out of place, an
        intermediate's array, which has no version), so that call runs eagerly."""
        stack = [t._grad_fn for t in _tensors(out) if t._grad_fn is not None]
        seen = set()
        while stack:
            node = stack.pop()
            if node in seen or node._seq < self.first_node:
                continue
            seen.add(node)
            saved, versions = node._saved, node._saved_versions
            if saved and versions is not None:
                for item, v in zip(saved, versions):
                    counter = getattr(item, '_version_counter', None)
                    if counter is not None and counter[0] != v:
                        self.fail('an in-place op changed a tensor that the backward needs (eager\'s backward '
                                  'raises there)')
                        return
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)

    def _out_template(self, value, outs):
        if isinstance(value, Tensor):
            s = self._new_slot(value, 'op')
            outs.append(s)
            return Ref(s)
        if isinstance(value, (tuple, list)):
            items = [self._out_template(v, outs) for v in value]
            if type(value) in (tuple, list):
                return type(value)(items)
            return (type(value), items)  # a named tuple (return_types.max ...)
        return value

    def note_opaque(self, out, name):
        for t in _tensors(out):
            if id(t) not in self.slot_of:
                self.opaque[id(t)] = name
                self.keep.append(t)


def _reached(outs, ins, first_node, grad_fns):
    """Per input tensor, whether the graph an op recorded for its outputs (its nodes: those
    numbered from ``first_node`` on) leads back to it: ``x.view_as(y)`` reaches x, not y, and
    eager's gradient for y is then None, not zeros. ``grad_fns``: the inputs' grad_fn before
    the call (an in-place op has since made itself its input's). Also the positions of the
    inputs that those nodes saved (a view of one too: it shares its version counter)."""
    targets = {}
    for i, t in enumerate(ins):
        fn = grad_fns[i]
        if fn is None and t._accumulator is not None:
            fn = t._accumulator()
        if fn is not None:
            targets.setdefault(fn, []).append(i)
    reached = [False] * len(ins)
    counters = set()  # (the version counters of what the op's nodes saved)
    stack = [o._grad_fn for o in outs if o._grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        hit = targets.get(node)
        if hit is not None:
            for i in hit:
                reached[i] = True
            continue
        if node._seq < first_node:  # (a node older than the op: not the op's own)
            continue
        saved = getattr(node, '_saved', None)
        if type(saved) is tuple:
            counters.update(id(t._version_counter) for t in saved if isinstance(t, Tensor))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return reached, tuple(i for i, t in enumerate(ins) if id(t._version_counter) in counters)


def _holds_data(value):
    """Whether ``value`` holds a NumPy array or a Generator (lists, tuples and dicts searched):
    data a call reads that the trace does not see change."""
    if isinstance(value, (numpy.ndarray, Generator)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_data(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_data(v) for v in value.values())
    return False


def alias_chain(tracer, t):
    """How to make the output ``t`` again from a tensor that existed before the call, where it
    is one (the input itself) or a view of one made by view ops: (the input's position or the
    captured tensor, [(view call, which of its outputs)] to run on it in order); None where it
    is neither."""
    producer = {}
    for call in tracer.calls:
        for k, s in enumerate(call.outs):
            producer[s] = (call, k)
    s = tracer.slot_of.get(id(t))
    chain = []
    while s is not None:
        obj = tracer.keep[s]
        if id(obj) in tracer.external:  # (an input or captured tensor, changed in place or not)
            # (the input's position: inputs hold the first slots, in order)
            root = next((i for i, kind in enumerate(tracer.kind) if kind == 'input' and tracer.keep[i] is obj), None)
            if root is None:
                root = next((c for c in tracer.captured.values() if c is obj), None)
            return (root, chain[::-1]) if root is not None else None
        call, k = producer.get(s, (None, None))
        if call is None or call.view is None:
            return None
        chain.append((call, k))
        s = call.ins[call.view]
    return None


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


# ---- the wrappers ------------------------------------------------------------------------------

def _make_wrapper(fn, name):
    def traced(*args, **kwargs):
        tr = active
        if tr is None or tr.depth or tr.thread != _get_ident():
            return fn(*args, **kwargs)
        if disallowed and id(fn) in disallowed:
            tr.graph_break(f'{name} is marked leafgrad._dynamo.disallow_in_graph')
        tensors = list(_tensors((args, kwargs)))
        versions = [t._version_counter[0] for t in tensors]
        grad_fns = [t._grad_fn for t in tensors]
        first_node = next(_node_sequence)  # (the op's own nodes are numbered after this)
        draws, cached = tr.draws, _cached_normals()
        tr.depth = 1
        try:
            out = fn(*args, **kwargs)
        finally:
            tr.depth = 0
        drew = tr.draws != draws or _cached_normals() != cached
        tr.record(fn, name, args, kwargs, out, versions, first_node, grad_fns, drew)
        return out
    _copy_identity(traced, fn)
    return traced


def _cached_normals():
    """The default generator's cached second normal samples: a normal draw may take one without
    drawing (a Generator passed to the op is seen by _holds_data)."""
    return default_generator._normal_double, default_generator._normal_float


def _counting(draw):
    """A Generator's draw method that counts its calls while a trace runs (Tracer.draws)."""
    def counted(self, n):
        tr = active
        if tr is not None:
            tr.draws += 1
        return draw(self, n)
    _copy_identity(counted, draw)
    return counted


def _effect(fn, what):
    """``print``, ``warnings.warn`` or a logger's record, which a replay would not repeat: a
    graph break when the user's code calls it during a trace (leafgrad's own warnings are not)."""
    def effect(*args, **kwargs):
        tr = active
        if tr is not None and tr.thread == _get_ident():
            f = sys._getframe(1)
            while f is not None and f.f_code.co_filename == logging.__file__:  # (Logger.info -> _log -> handle)
                f = f.f_back
            if f is not None and f is origins.user_frame(f):
                tr.graph_break(what)
        if fn is _warn:  # (this frame between the caller and warn: one level further up)
            if len(args) > 2:
                args = args[:2] + (args[2] + 1,) + args[3:]
            else:
                kwargs['stacklevel'] = kwargs.get('stacklevel', 1) + 1
        return fn(*args, **kwargs)
    _copy_identity(effect, fn)
    return effect


_warn = warnings.warn


_EFFECTS = ((builtins, 'print', 'a value printed (print() inside the compiled region)'),
            (warnings, 'warn', 'warnings.warn() inside the compiled region'),
            (logging.Logger, 'handle', 'a logging call inside the compiled region'))
_effects_saved = []


def _shape_from_data(fn, args, kwargs):
    """Whether the call's output shape depends on tensor values (``x[x > 0]``, ``nonzero``,
    ``unique``): a replay would keep Python numbers read from the traced shape."""
    name = getattr(fn, '__name__', '')
    if name in _SHAPE_FROM_DATA:
        return True
    if name in ('__getitem__', 'getitem') and len(args) > 1:
        index = args[1]
        return any(isinstance(i, Tensor) and i._data.dtype.kind == 'b'
                   for i in (index if isinstance(index, (tuple, list)) else (index,)))
    if name == 'where':  # (where(condition) alone: nonzero's)
        return len(args) + len(kwargs) == 1
    if name == 'repeat_interleave':  # (repeats given by a tensor)
        repeats = args[1] if len(args) > 1 else kwargs.get('repeats', args[0] if args else None)
        return isinstance(repeats, Tensor) and repeats._data.ndim > 0
    return False


_SHAPE_FROM_DATA = {'nonzero', 'argwhere', 'masked_select', 'unique', 'unique_consecutive',
                    'bincount', '_unique', '_unique2'}


def _seeding(set_state):
    """A Generator's method that sets its state: a graph break while a trace runs (a replay
    would not set it again, and would draw other numbers than eager)."""
    def seeding(self, *args):
        tr = active
        if tr is not None and tr.thread == _get_ident():
            tr.graph_break('the random generator is seeded or its state set inside the compiled region')
        return set_state(self, *args)
    _copy_identity(seeding, set_state)
    return seeding


def _make_break_wrapper(fn, name, what):
    """A Tensor method that turns tensor data into Python data: a graph break at top level,
    except where it reads a value that the signature decides (Tracer.constant)."""
    def breaking(self, *args, **kwargs):
        tr = active
        if tr is not None and not tr.depth and tr.thread == _get_ident():
            if not (name in _VALUE_READS and tr.is_constant(self)):
                tr.graph_break(what)
            tr.depth = 1
            try:
                return fn(self, *args, **kwargs)
            finally:
                tr.depth = 0
        return fn(self, *args, **kwargs)
    _copy_identity(breaking, fn)
    return breaking


def _make_property_wrapper(prop, name):
    """``t.data``, ``t.T``, ``t.mT``: recorded as calls of their getter."""
    getter = _make_wrapper(prop.fget, name)
    return property(getter, prop.fset, prop.fdel, prop.__doc__)


def _copy_identity(wrapper, fn):
    for attr in ('__name__', '__qualname__', '__doc__', '__module__'):
        try:
            setattr(wrapper, attr, getattr(fn, attr))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = fn


# Tensor methods that hand tensor data to Python: a graph break, as in torch.compile.
_BREAKS = {
    'item': 'Tensor.item() reads a tensor value into Python',
    'tolist': 'Tensor.tolist() reads tensor values into Python',
    'numpy': 'Tensor.numpy() hands the data to NumPy',
    '__array__': 'a tensor converted to a NumPy array',
    '__bool__': 'data-dependent branching (bool of a tensor, e.g. `if t.sum() > 0:`)',
    '__float__': 'float() of a tensor', '__int__': 'int() of a tensor', '__index__': 'a tensor used as an index',
    '__complex__': 'complex() of a tensor',
    '__repr__': 'a tensor printed (repr)', '__str__': 'a tensor printed (str)', '__format__': 'a tensor formatted',
    'register_hook': 'Tensor.register_hook inside the compiled region',
    'retain_grad': 'Tensor.retain_grad inside the compiled region',
    'register_post_accumulate_grad_hook': 'a post-accumulate-grad hook registered inside the compiled region',
    'backward': 'Tensor.backward() inside the compiled region',
}
_PROPERTIES = ('data', 'T', 'mT', 'H', 'mH', 'grad')
# Of those, the ones that only read a value into Python: no break where the value is a constant
# of the signature (printing one still is: a side effect the replay would not repeat)
_VALUE_READS = {'item', 'tolist', '__bool__', '__float__', '__int__', '__index__', '__complex__'}
# Factories whose values depend on their Python arguments only (no tensor, no random draw,
# not `empty`); and those whose values depend on their tensor argument's shape and dtype only
_CONSTANT_FACTORIES = {'zeros', 'ones', 'full', 'arange', 'range', 'linspace', 'logspace', 'eye', 'scalar_tensor',
                       'tril_indices', 'triu_indices'}
_SHAPE_FACTORIES = {'zeros_like', 'ones_like', 'full_like'}


# Tensor methods that read metadata or attach hooks: not ops, never recorded.
_NOT_OPS = {'size', 'dim', 'numel', 'ndimension', 'nelement', 'stride', 'storage_offset', 'is_contiguous',
            'data_ptr', 'element_size', 'get_device', 'is_floating_point', 'is_complex', 'is_signed', 'untyped_storage',
            'storage', 'is_shared', 'share_memory_', 'is_pinned', 'pin_memory', 'new', 'type', 'is_set_to',
            'dim_order', 'is_inference', 'is_same_size', 'has_names', 'is_coalesced'}


def _build():
    table = {}

    def add(fn):
        if isinstance(fn, types.FunctionType) and id(fn) not in table and fn.__name__ not in _BREAKS \
                and fn.__name__ not in _NOT_OPS and (fn.__module__ or '').startswith('leafgrad') \
                and fn.__module__ not in _HELPER_MODULES:
            table[id(fn)] = (fn, _make_wrapper(fn, _name_of(fn)))

    for fn, _ in _instrument._build_ops().values():
        add(fn)
    # also what the profiler's table leaves out: every public function of the op families and
    # of nn.functional, and every public Tensor method
    modules = [importlib.import_module(f'..ops.{family}', __package__) for family in ops.FAMILIES]
    modules.append(importlib.import_module('..nn.functional', __package__))
    for module in modules:
        for name, fn in list(vars(module).items()):
            if not name.startswith('_'):
                add(fn)
    for name, fn in list(vars(Tensor).items()):
        if not name.startswith('_') or (name.startswith('__') and name.endswith('__') and name not in _NOT_DUNDERS):
            add(fn)
    return table


_NOT_DUNDERS = {'__init__', '__new__', '__getattr__', '__setattr__', '__delattr__', '__hash__', '__len__',
                '__iter__', '__reduce__', '__reduce_ex__', '__getstate__', '__setstate__', '__deepcopy__',
                '__copy__', '__dir__', '__sizeof__', '__init_subclass__', '__class_getitem__', '__contains__',
                '__torch_function__', '__array_wrap__', '__array_priority__', '__dlpack__', '__dlpack_device__'}
# Modules of the ops' own helpers (``record``, ``wrap``, ``sum_to`` ...), which the op families
# import into their namespaces: not ops. Recorded, one of them would stand for the op around it
# wherever that op itself was not wrapped (a function held in a closure or a default argument),
# and replay a constant.
_HELPER_MODULES = {'leafgrad.ops._util', 'leafgrad.autograd.graph', 'leafgrad.autograd.grad_mode',
                   'leafgrad.nn._functional.common', 'leafgrad._arg_parser', 'leafgrad.ops._op', 'leafgrad.ops._inplace',
                   'leafgrad.ops._index', 'leafgrad.ops._matrix', 'leafgrad.backend', 'leafgrad.generator'}
# (and the argument checks: refuse_arguments reads the failing op's frame, which a wrapper
# around it would be, so that an op given a number raised an AttributeError while traced)
# Functions whose Python result depends on tensor data: a graph break.
_DATA_DEPENDENT = {'equal', 'allclose', 'is_nonzero', 'isclose_all'}


def _name_of(fn):
    mod = getattr(fn, '__module__', '') or ''
    name = getattr(fn, '__name__', type(fn).__name__)
    if mod.startswith('leafgrad.nn'):
        return 'F.' + name
    return name


_tensor_saved = {}   # name -> original attribute of Tensor
disallowed = set()   # ids of the ops marked _dynamo.disallow_in_graph: a graph break where called


def is_op(fn):
    """Whether ``fn`` is one of the ops the trace records (PyTorch's "allowed callables")."""
    _built()
    return id(fn) in _wrappers


def _built():
    """The wrappers of the ops, made when first needed, and where their originals are bound."""
    global _wrappers, _sites
    if _wrappers is None:
        _wrappers = _build()
        _originals.update((id(w), (w, fn)) for fn, w in _wrappers.values())
        _sites = _instrument.Sites(set(_wrappers) | set(_originals))


def install(tracer):
    """Start recording ``tracer`` (the caller holds ``_lock``)."""
    global active
    _built()
    _sites.swap(_wrappers)
    for name, what in _BREAKS.items():
        original = Tensor.__dict__.get(name)
        if original is None:
            for klass in Tensor.__mro__[1:]:
                if name in klass.__dict__ and klass is not object:
                    original = klass.__dict__[name]
                    break
        if original is None or not callable(original):
            continue
        _tensor_saved[name] = Tensor.__dict__.get(name, _ABSENT)
        setattr(Tensor, name, _make_break_wrapper(original, name, what))
    for name in _PROPERTIES:
        prop = Tensor.__dict__.get(name)
        if isinstance(prop, property):
            _tensor_saved[name] = prop
            if name == 'grad':
                setattr(Tensor, name, property(_make_break_wrapper(prop.fget, name, 'Tensor.grad read inside the '
                                                                   'compiled region'), prop.fset, prop.fdel))
            else:
                setattr(Tensor, name, _make_property_wrapper(prop, '.' + name))
    _generator_saved.update((name, Generator.__dict__[name]) for name in _DRAWS + _SEEDS)
    for name in _DRAWS:
        setattr(Generator, name, _counting(_generator_saved[name]))
    for name in _SEEDS:
        setattr(Generator, name, _seeding(_generator_saved[name]))
    for owner, name, what in _EFFECTS:
        original = getattr(owner, name)
        _effects_saved.append((owner, name, original))
        setattr(owner, name, _effect(original, what))
    active = tracer


_ABSENT = object()
_DRAWS = ('_u32', '_u64')  # every random draw of a CPU Generator goes through one of these
_SEEDS = ('manual_seed', 'seed', 'set_state')  # what sets a Generator's state (manual_seed, set_rng_state)
_generator_saved = {}


def uninstall():
    global active
    active = None
    for name, original in _tensor_saved.items():
        if original is _ABSENT:
            delattr(Tensor, name)
        else:
            setattr(Tensor, name, original)
    _tensor_saved.clear()
    for name, original in _generator_saved.items():
        setattr(Generator, name, original)
    _generator_saved.clear()
    for owner, name, original in reversed(_effects_saved):
        setattr(owner, name, original)
    _effects_saved.clear()
    _sites.swap(_originals)


def reachable_modules(fn):
    """The nn.Modules the function reaches through its closure, globals and ``self``: their
    training flags are part of every call's guard."""
    modules = {}
    known_tensors(fn, (), modules)
    return list(modules.values())


def known_tensors(fn, extra=(), modules=None, paths=None, values=None, state=None):
    """{id: tensor} of the tensors that exist before the call and that the function can reach:
    a module's parameters, buffers and tensor attributes (``extra``: modules), the tensors in
    the function's closure, globals and default arguments (directly, or one level down in a
    dict, list, tuple or module). ``paths``: filled with {id: the steps by which the tensor was
    first reached}, from a root (``('obj', module)``, ``('cell', cell)``, ``('global', globals,
    name)``) through submodules (``'m'``), parameters (``'p'``), buffers (``'b'``), attributes
    (``'a'``) and items (``'i'``). ``values``: filled with (path, value) of the Python numbers,
    strings and tuples of them found the same way (a module's ``p``, a global constant), which
    a replay would keep. What ``reads_guard`` checks on every call. ``state``: filled with
    (what, object) for the modules, lists, dicts, closure cells and globals passed on the way,
    whose ``python_state`` tells whether a call changed them."""
    # (read where it is: optim's modules import the package this one is part of, and no
    # optimizer exists before they are imported)
    optimizer_module = sys.modules.get('leafgrad.optim.optimizer')
    Optimizer = optimizer_module.Optimizer if optimizer_module is not None else ()
    found = {}
    functions = [fn]     # the functions whose closures and globals are walked (the function,
    classes_seen = set()  # the helpers they name, the methods of the objects reached)

    def note(t, path):
        found[id(t)] = t
        if paths is not None:
            paths.setdefault(id(t), path)

    def add_module(m, path):
        if modules is not None:
            modules[id(m)] = m
        for name, sub in m.named_modules():
            at = path + tuple(('m', part) for part in name.split('.')) if name else path
            add_methods(sub, at)
            if state is not None:
                state.append((f'an attribute of {f"submodule {name!r}" if name else "the module"} '
                              f'({type(sub).__name__})', sub))
            for k, p in sub._parameters.items():
                if p is not None:
                    note(p, at + (('p', k),))
            for k, b in sub._buffers.items():
                if b is not None:
                    note(b, at + (('b', k),))
            for k, v in list(vars(sub).items()):
                if k not in _MODULE_STORES:  # (read above, and submodules by named_modules)
                    add(v, 0, at + (('a', k),))

    def add(v, depth, path):
        if isinstance(v, Tensor):
            note(v, path)
        elif isinstance(v, Optimizer):  # (its parameters and state: known, for the check of what changed)
            for group in v.param_groups:
                for p in group['params']:
                    found[id(p)] = p
            for entries in v.state.values():
                for t in entries.values():
                    if isinstance(t, Tensor):
                        found[id(t)] = t
        elif values is not None and _plain(v):
            # (not a module's training flag, which the signature holds, nor Module's own fields)
            if path[-1][0] != 'a' or path[-1][1] not in _module_fields():
                values.append((path, v))
        elif isinstance(v, Module):
            if depth < 2:
                add_module(v, path)
        elif depth < 2 and isinstance(v, (dict, list, tuple)):
            if state is not None and not isinstance(v, tuple):
                state.append((f'a {type(v).__name__} it reaches', v))
            if depth < 1 or len(v) <= _SMALL:  # (one level further, a small one: a config's dict)
                for k, item in (list(v.items()) if isinstance(v, dict) else enumerate(v)):
                    add(item, depth + 1, path + (('i', k),))
        elif isinstance(v, (types.FunctionType, types.MethodType, functools.partial)):
            functions.append(v)  # (a helper it calls: what it reads is read too)
        elif (depth < 2 or depth < _CONFIG_DEPTH and _config_like(v)) and _plain_object(v):
            # (a trainer, a config, argparse's Namespace; a config's nested sections deeper)
            if state is not None:
                state.append((f'an attribute of a {type(v).__name__} it reaches', v))
            add_methods(v, path)
            for k, item in list(vars(v).items()):
                add(item, depth + 1, path + (('a', k),))

    def add_methods(obj, path):
        """The functions of ``obj``'s class (its own code, not leafgrad's) join the walk: a
        forward or a method may read globals; and the class's own plain values are guarded as
        ``obj`` (at ``path``) reads them (``scale = 2.0`` in the class body, ``self.scale``)."""
        cls = type(obj)
        if cls in classes_seen:
            return
        classes_seen.add(cls)
        for klass in cls.__mro__:
            if klass is object or str(klass.__module__).partition('.')[0] == 'leafgrad' or (
                    klass.__module__ == 'builtins' and getattr(builtins, klass.__name__, None) is klass):
                continue
            for name, item in vars(klass).items():
                if isinstance(item, types.FunctionType):
                    if not _library_code(item.__code__):
                        functions.append(item)
                elif values is not None and not name.startswith('__') and _plain(item) and name not in vars(obj):
                    values.append((path + (('g', name),), item))

    for m in extra:
        add_module(m, (('obj', m),))
    seen = set()
    while functions and len(seen) < _MAX_FUNCTIONS:
        fn = functions.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if isinstance(fn, functools.partial):  # (its function, and the arguments it holds)
            functions.append(fn.func)
            add(fn.args, 0, (('obj', fn.args),))
            add(fn.keywords, 0, (('obj', fn.keywords),))
            continue
        if not isinstance(fn, (types.FunctionType, types.MethodType)) and _plain_object(fn):
            add(fn, 0, (('obj', fn),))  # (an object with a __call__: its attributes and methods)
            continue
        self = getattr(fn, '__self__', None)
        if self is not None:
            add(self, 0, (('obj', self),))
        code_fn = getattr(fn, '__func__', fn)
        code = getattr(code_fn, '__code__', None)
        if code is None or _library_code(code):
            continue
        # (default arguments: an object or dict given as one is read as a global is)
        defaults = getattr(code_fn, '__defaults__', None)
        if defaults:
            add(defaults, 0, (('obj', defaults),))
        defaults = getattr(code_fn, '__kwdefaults__', None)
        if defaults:
            add(defaults, 0, (('obj', defaults),))
        for cell in getattr(code_fn, '__closure__', None) or ():
            if state is not None:
                state.append(('a variable of its closure', cell))
            try:
                add(cell.cell_contents, 0, (('cell', cell),))
            except ValueError:
                pass
        g = getattr(code_fn, '__globals__', None)
        if g is not None:
            for name in _names_used(code):
                if name in g:
                    add(g[name], 0, (('global', g, name),))
                    if state is not None:
                        state.append((f'the global {name!r}', (g, name)))
        wrapped = getattr(fn, '__wrapped__', None)
        if wrapped is not None:
            functions.append(wrapped)
    return found


def global_random_states():
    """The states of Python's ``random`` module and of NumPy's global generator
    (``numpy.random.rand``): a traced call that draws from them has a result a replay would not
    repeat (the number drawn would be a constant)."""
    return random.getstate(), numpy.random.get_state(legacy=False)


def drew_global_random(tracer, before):
    """Fail ``tracer`` where the traced call drew from Python's or NumPy's global generator."""
    python, drawn_numpy = before
    if random.getstate() != python:
        tracer.fail("the call draws from Python's random module, which a replay would not do")
        return
    now = numpy.random.get_state(legacy=False)
    if (now['state']['pos'] != drawn_numpy['state']['pos'] or now['has_gauss'] != drawn_numpy['has_gauss']
            or not numpy.array_equal(now['state']['key'], drawn_numpy['state']['key'])):
        tracer.fail("the call draws from NumPy's global random generator, which a replay would not do")


def changed_unseen(tracer, known, versions):
    """Fail ``tracer`` where a known tensor's version moved on during the traced call
    (``versions``: before it) without a recorded call changing it: leafgrad's own array code
    changed it (an optimizer's step), which a replay would not repeat."""
    for i, t in known.items():
        if t._version_counter[0] != versions[i] and i not in tracer.changed:
            tracer.fail('the call changes a tensor in place by code the trace does not see (an optimizer\'s '
                        'step), which a replay would not repeat')
            return


def python_state(state):
    """A fingerprint of each object in ``state`` (known_tensors' list): which objects a module's
    attributes, parameters, buffers and submodules, a list's or dict's items, a closure cell or
    a global hold. Compared before and after a traced call: a call that changed them (appended
    to a list, rebound an attribute) has a Python effect that a replay would not repeat."""
    return [_fingerprint(obj) for _, obj in state]


def changed_state(state, before):
    """What the first object of ``state`` whose fingerprint differs from ``before`` is, else None."""
    for (what, obj), fingerprint in zip(state, before):
        if _fingerprint(obj) != fingerprint:
            return what
    return None


def _fingerprint(obj):
    if isinstance(obj, Module):
        d = vars(obj)
        return (tuple([(k, id(v)) for k, v in d.items()]),
                *(tuple([(k, id(v)) for k, v in d[store].items()]) for store in _MODULE_STORES if store in d))
    if isinstance(obj, dict):
        return tuple([(k, id(v)) for k, v in obj.items()])
    if isinstance(obj, list):
        return tuple(map(id, obj))
    if isinstance(obj, tuple):  # (globals, name)
        return id(obj[0].get(obj[1], _MISSING))
    if _plain_object(obj):
        return tuple([(k, id(v)) for k, v in vars(obj).items()])
    try:  # a closure cell
        return id(obj.cell_contents)
    except ValueError:
        return None


def _module_fields():
    """The attributes every Module sets in its __init__ (its training flag and bookkeeping)."""
    global _MODULE_FIELDS
    if _MODULE_FIELDS is None:
        _MODULE_FIELDS = frozenset(vars(Module()))
    return _MODULE_FIELDS


_MODULE_FIELDS = None


def _plain(v):
    """A Python number, string or None, a NumPy number (``np.float32(2)``), or a tuple of them:
    a value a replay keeps as traced."""
    t = type(v)
    return t in _PLAIN or isinstance(v, numpy.generic) or t is tuple and all(
        type(x) in _PLAIN or isinstance(x, numpy.generic) for x in v)


_PLAIN = {int, float, bool, str, complex, type(None)}
_MISSING = object()
_MODULE_STORES = ('_parameters', '_buffers', '_modules')
_STEPS = {'m': '_modules', 'p': '_parameters', 'b': '_buffers'}  # (a path's steps into a module)


def reads_guard(tensors, paths, values=()):
    """A function of no arguments that tells whether each of ``tensors`` (captured by a trace)
    is still where the function reached it (``known_tensors``' paths: no parameter, buffer,
    submodule, global, closure cell or container entry on the way replaced by another object,
    ``model.fc = nn.Linear(...)``, ``W = new_tensor``), and each of ``values`` (path, value)
    still equal (``model.drop.p = 0.2``). Generated as straight-line tests, a shared prefix
    tested once; None where there is nothing to test."""
    names = {'_MISSING': _MISSING}
    lines = []
    held = {}  # path prefix -> the constant holding what it reached at trace time (tested)

    def const(value):
        name = f'_k{len(names)}'
        names[name] = value
        return name

    def reach(prefix):
        """The expression that reaches ``prefix`` now, from its tested parent; None for a root
        object or a tuple's item (neither can be replaced)."""
        if len(prefix) == 1:
            kind = prefix[0][0]
            if kind == 'cell':
                return f'{const(prefix[0][1])}.cell_contents'
            if kind == 'global':
                return f'{const(prefix[0][1])}.get({const(prefix[0][2])}, _MISSING)'
            return None
        parent, p = _reach(prefix[:-1]), holder(prefix[:-1])
        kind, key = prefix[-1]
        k = const(key)
        if kind in _STEPS:
            return f'{p}.{_STEPS[kind]}.get({k})'
        if kind == 'a':
            return f'vars({p}).get({k}, _MISSING)'
        if kind == 'g':  # (a class's value, read through the object: an attribute of its own shadows it)
            return f'getattr({p}, {k}, _MISSING)'
        if isinstance(parent, tuple):
            return None
        if isinstance(parent, dict):
            return f'{p}.get({k}, _MISSING)'
        return f'({p}[{k}] if len({p}) > {k} else _MISSING)'  # a list

    def holder(prefix):
        key = (prefix[0][0], id(prefix[0][1])) + prefix[0][2:] + prefix[1:]  # (a root's object by id)
        name = held.get(key)
        if name is None:
            name = held[key] = const(_reach(prefix))
            got = reach(prefix)
            if got is not None:
                lines.append(f'if {got} is not {name}: return False')
        return name

    for t in tensors:
        path = paths.get(id(t))
        if path is not None:
            holder(path)
    by_holder = {}  # a module's plain attributes are read together: one tuple compared
    for path, value in values:
        kind, key = path[-1][:2]
        if len(path) > 1 and kind == 'a' and key.isidentifier() and isinstance(_reach(path[:-1]), Module):
            by_holder.setdefault(holder(path[:-1]), []).append((key, value))
            continue
        got = reach(path)
        if got is not None:  # (`is` first: a NaN the same object as traced is unchanged)
            k = const(value)
            lines.append(f'v = {got}')
            lines.append(f'if v is not {k} and v != {k}: return False')
    for p, items in by_holder.items():  # (an attribute deleted since: AttributeError, caught below)
        read = ''.join(f'{p}.{key}, ' for key, _ in items)
        lines.append(f'if ({read}) != {const(tuple(v for _, v in items))}: return False')
    if not lines:
        return None
    body = '\n'.join('        ' + line for line in lines)
    source = f'def unchanged():\n    try:\n{body}\n    except Exception:\n        return False\n    return True\n'
    exec(compile(source, '<leafgrad.compile guard>', 'exec'), names)
    return names['unchanged']


def _reach(path):
    """What ``path`` (a known_tensors path) reaches now."""
    kind = path[0][0]
    obj = path[0][1] if kind == 'obj' else path[0][1].cell_contents if kind == 'cell' else path[0][1][path[0][2]]
    for kind, key in path[1:]:
        obj = (getattr(obj, _STEPS[kind])[key] if kind in _STEPS else vars(obj)[key] if kind == 'a'
               else getattr(obj, key) if kind == 'g' else obj[key])
    return obj


_MAX_FUNCTIONS = 500  # (the walk's bound, for a trace's time: a model zoo's helpers)
_SMALL = 64  # (the most items of a container one level down whose items are walked)


def _library_code(code):
    """Code of leafgrad's own, of Python's library or of an installed package: the state a
    program changes between calls is its own (an installed model's code is not walked)."""
    name = code.co_filename
    known = _library_files.get(name)
    if known is None:
        known = _library_files[name] = name.startswith('<frozen') or _library_path(name)
    return known


def _library_path(name):
    """Whether the file ``name`` is leafgrad's, Python's library's or an installed package's."""
    path = os.path.abspath(name)
    return path.startswith((_PACKAGE_DIR, _STDLIB_DIR)) or _INSTALLED in path or _DIST in path


_library_files = {}
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
_INSTALLED, _DIST = f'{os.sep}site-packages{os.sep}', f'{os.sep}dist-packages{os.sep}'


def _config_like(v):
    """An object of a class of the program's own, a dataclass, or a namespace (``SimpleNamespace``,
    argparse's): a configuration's nested sections are walked deeper than a library's objects."""
    cls = type(v)
    known = _config_classes.get(cls)
    if known is None:
        if cls is types.SimpleNamespace or (cls.__module__, cls.__name__) == ('argparse', 'Namespace') or hasattr(
                cls, '__dataclass_fields__'):
            known = True
        else:  # (a class of a module with no file is the program's: a notebook's __main__)
            path = getattr(sys.modules.get(cls.__module__), '__file__', None)
            known = path is None or not _library_path(path)
        _config_classes[cls] = known
    return known


_config_classes = weakref.WeakKeyDictionary()
_CONFIG_DEPTH = 4  # (the depth of a configuration's nested sections walked: cfg.model.attn.dropout)


def _plain_object(v):
    """An instance of a class of the user's that keeps its attributes in a ``__dict__`` (not a
    module, a function, a class or leafgrad's own object)."""
    t = type(v)
    return (not isinstance(v, (type, types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType))
            and hasattr(v, '__dict__') and str(t.__module__).partition('.')[0] != 'leafgrad')


def _names_used(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, 'co_names'):
            names |= _names_used(const)
    return names


__all__ = ['Tracer', 'Call', 'Ref', 'install', 'uninstall', 'known_tensors', 'Unsupported']
