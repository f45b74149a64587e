"""What the profiler measures, and how it costs nothing when no profiler runs.

Design note. leafgrad has no central dispatcher every op passes through, so there is no single
place to time an op. Instead, while a profiler records:

* every public op (the op families' functions and Tensor methods, ``nn.functional``, the
  factories, ``linalg`` and ``special``) is replaced, wherever a module's globals or the
  ``Tensor`` class hold it, by a wrapper that times the call. Ops call one another through
  their modules' globals (``linear`` calls ``t`` and ``addmm``), so nested calls are recorded
  as the children of the op that made them, as PyTorch records ``aten::linear`` around
  ``aten::t`` and ``aten::addmm``;
* the engine hands each backward node to ``profile_node``, which records PyTorch's two events
  ``autograd::engine::evaluate_function: MulBackward0`` and ``MulBackward0``;
* ``record_function`` ranges are pushed and popped on the same stack.

When the last profiler stops, every wrapper is replaced by its original again (found by
identity, also in modules imported while profiling), and the engine's hook is cleared: an op
run outside a profile is the very function it always was. vmap and forward AD wrap the same ops
by the same mechanism; the three are layers that compose in one fixed order however they are
nested (see LAYERS below).

Events carry PyTorch's names: ``aten::<op>`` for the ops (``aten::t``, ``aten::addmm``,
``aten::cross_entropy_loss`` …). A call nested directly in a call of the same name (``F.relu``
calling the op ``relu``) is one event, as PyTorch keeps one.

Only the thread that started recording is recorded (PyTorch records the profiling thread's
ops, not those of other threads). Nested profilers on that thread each keep the events of
their own window.
"""
import importlib
import os
import sys
import threading
import time
from types import ModuleType

import numpy

from .. import creation, ops
from ..ops import _op, indexing, shape
from ..tensor import Tensor
from . import engine

_now = time.perf_counter_ns
_get_ident = threading.get_ident

# The recording thread's ident while any profiler records, else None (read by every wrapper).
_thread = None
_stack = []          # the open events of the recording thread, innermost last
_sessions = []       # the recording profilers, in start order
_options = {'record_shapes': False, 'profile_memory': False, 'with_stack': False}
_lock = threading.Lock()


class RawEvent:
    """One recorded range, in nanoseconds; made into a FunctionEvent when its profiler stops."""
    __slots__ = ('name', 'parent', 'start', 'end', 'shapes', 'stack', 'memory', 'scope', 'user', 'seq')

    def __init__(self, name, parent, scope=0, user=False):
        self.name = name
        self.parent = parent
        self.scope = scope  # PyTorch's RecordScope: 0 an op, 1 a backward node, 7 a user range
        self.user = user
        self.shapes = self.stack = None
        self.memory = 0
        self.seq = -1
        self.start = self.end = 0


class Session:
    """The events one profiler receives while it records."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.events = []
        self.thread = None
        self.start_ns = self.end_ns = 0


def start(session):
    """Start recording into ``session`` on the calling thread."""
    global _thread
    with _lock:
        me = _get_ident()
        if _thread is not None and _thread != me:
            raise RuntimeError('A profiler is already recording in another thread; leafgrad profiles one '
                               'thread at a time')
        session.thread = me
        session.start_ns = _now()
        session.events = []
        _sessions.append(session)
        _update_options()
        if _thread is None:
            _install()
            _thread = me


def stop(session):
    """Stop recording into ``session``; when no profiler records any more, restore every op."""
    global _thread
    with _lock:
        session.end_ns = _now()
        if session in _sessions:
            _sessions.remove(session)
        _update_options()
        if not _sessions and _thread is not None:
            _thread = None
            _stack.clear()
            _uninstall()


def _update_options():
    for option in _options:
        _options[option] = any(getattr(s, option) for s in _sessions)


def _emit(event):
    for session in _sessions:
        if event.start >= session.start_ns:
            session.events.append(event)


# ---- the timed call -----------------------------------------------------------------------

def push(name, scope=0, user=False, shapes=None):
    """Open a range on the recording thread's stack (a record_function, a backward node)."""
    event = RawEvent(name, _stack[-1] if _stack else None, scope, user)
    if shapes is not None and _options['record_shapes']:
        event.shapes = shapes
    if _options['with_stack']:
        event.stack = _python_stack()
    _stack.append(event)
    event.start = _now()
    return event


def pop(event):
    """Close ``event`` (and any range left open inside it by an exception)."""
    event.end = _now()
    while _stack:
        if _stack.pop() is event:
            break
    _emit(event)


def _call(name, fn, args, kwargs):
    if _stack and _stack[-1].name == name:  # F.relu calling the op relu: one event
        return fn(*args, **kwargs)
    event = push(name, shapes=_input_shapes(args, kwargs) if _options['record_shapes'] else None)
    try:
        out = fn(*args, **kwargs)
    finally:
        pop(event)
    if _options['profile_memory']:
        event.memory = _new_bytes(out, args, kwargs)
    return out


def _make_wrapper(fn, name):
    def profiled(*args, **kwargs):
        if _thread != _get_ident():
            return fn(*args, **kwargs)
        return _call(name, fn, args, kwargs)
    _copy_identity(profiled, fn)
    return profiled


def _make_index_wrapper(fn, writes):
    """``t[i]`` and ``t[i] = v``: a basic index is recorded by the views it makes (``aten::select``,
    ``aten::slice``), an advanced one as ``aten::index`` / ``aten::index_put_`` as in PyTorch; a
    basic write as the ``aten::copy_`` or ``aten::fill_`` that does it."""
    def profiled(self, index, *value):
        if _thread != _get_ident():
            return fn(self, index, *value)
        advanced = _is_advanced(index)
        if writes:
            name = ('aten::index_put_' if advanced else
                    'aten::copy_' if isinstance(value[0], Tensor) else 'aten::fill_')
        elif advanced:
            name = 'aten::index'
        else:
            return fn(self, index)
        return _call(name, fn, (self, index) + value, {})
    _copy_identity(profiled, fn)
    return profiled


def _copy_identity(wrapper, fn):
    for attr in ('__name__', '__qualname__', '__doc__', '__module__'):
        try:
            setattr(wrapper, attr, getattr(fn, attr))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = fn


def _is_advanced(index):
    parts = index if type(index) is tuple else (index,)
    return any(isinstance(p, (Tensor, list, numpy.ndarray, bool)) for p in parts)


def profile_node(node, grads, apply):
    """The engine's hook while recording: ``apply(node, grads)`` inside PyTorch's two events."""
    if _thread != _get_ident():
        return apply(node, grads)
    name = node.name()
    outer = push('autograd::engine::evaluate_function: ' + name)
    inner = push(name, scope=1, shapes=[_shape(g) for g in grads])
    seq = getattr(node, '_seq', -1)
    outer.seq = inner.seq = seq if type(seq) is int else -1  # (AccumulateGrad's is infinite)
    try:
        outs = apply(node, grads)
    finally:
        pop(inner)
        pop(outer)
    if _options['profile_memory']:
        inner.memory = outer.memory = _new_bytes(outs, grads, {})
    return outs


# ---- what an event records -------------------------------------------------------------------

def _shape(value):
    return list(value._data.shape) if isinstance(value, Tensor) else []


def _input_shapes(args, kwargs):
    """PyTorch's ``input_shapes``: a tensor's shape, ``[]`` for anything else (lists included)."""
    return [_shape(a) for a in args] + [_shape(v) for v in kwargs.values()]


def _tensors(value):
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, Tensor)]
    return []


def _new_bytes(out, args, kwargs):
    """The bytes of the outputs that own new memory (not views of an input, not the input
    changed in place): what the call allocated and handed back. Temporaries it freed before
    returning are not seen (PyTorch's allocator hooks see them)."""
    inputs = [t._data for v in (*args, *kwargs.values()) for t in _tensors(v)]
    total = 0
    for t in _tensors(out):
        data = t._data
        if not isinstance(data, numpy.ndarray):
            continue
        if not any(isinstance(i, numpy.ndarray) and numpy.may_share_memory(data, i) for i in inputs):
            total += data.nbytes
    return total


_PACKAGE_DIR = None


def _python_stack():
    """The Python frames that led to the call, innermost first, as ``file(line): function``;
    leafgrad's own frames are left out."""
    global _PACKAGE_DIR
    if _PACKAGE_DIR is None:
        _PACKAGE_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep
    frame = sys._getframe(2)
    entries = []
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            entries.append(f'{filename}({frame.f_lineno}): {frame.f_code.co_name}')
        frame = frame.f_back
    return entries


# ---- which functions are ops, and their names ------------------------------------------------

# Names PyTorch records where leafgrad's function is named otherwise.
_ATEN_NAMES = {
    'float': 'to', 'double': 'to', 'half': 'to', 'long': 'to', 'int': 'to', 'short': 'to', 'bool': 'to',
    'byte': 'to', 'char': 'to', 'cpu': 'to', 'cuda': 'to', 'type_as': 'to', 'type': 'to', 'bfloat16': 'to',
    '__rsub__': 'rsub', '__rtruediv__': 'div', '__rpow__': 'pow', '__rmatmul__': 'matmul',
    '__rand__': 'bitwise_and', '__ror__': 'bitwise_or', '__rxor__': 'bitwise_xor', '__invert__': 'bitwise_not',
    '__rmod__': 'remainder', '__rfloordiv__': 'floor_divide', '__pos__': 'positive',
    'cross_entropy': 'cross_entropy_loss', 'nll_loss': 'nll_loss_nd', 'slice_dim': 'slice',
}
# Tensor methods that are not ops (PyTorch records nothing for them).
_NOT_OPS = {'__hash__', '__iter__', '__len__', '__repr__', '__format__', '__bool__', 'size', 'dim', 'numel'}
_FACTORIES = ('zeros', 'ones', 'empty', 'full', 'arange', 'linspace', 'logspace', 'eye', 'zeros_like', 'ones_like',
              'empty_like', 'full_like', 'rand', 'randn', 'randint', 'randperm', 'rand_like', 'randn_like',
              'randint_like', 'normal', 'multinomial')


def _profiled(fn, name):
    """The profiler's wrapper of the op ``fn`` named ``name``: its calls timed as events named as
    PyTorch names the op (an index as the views or the write it makes)."""
    if name in ('__getitem__', '__setitem__'):
        return _make_index_wrapper(fn, name == '__setitem__')
    plain = name[2:-2] if name.startswith('__') and name.endswith('__') else name  # __neg__: neg
    return _make_wrapper(fn, 'aten::' + _ATEN_NAMES.get(name, plain))


def _build_ops(imported=False):
    """{id(function): (function, name)} for every public op as defined (a layer's wrapper bound
    in its place now is read as the op it wraps), under PyTorch's name; the first name a
    function is listed under wins (``mul`` before ``multiply``). ``imported``: also the ops that
    ``nn.functional`` and ``linalg`` take from the op families (``linalg.solve``), which vmap and
    forward AD wrap and the profiler records under the op's own name."""
    table = {}

    def add(fn, name):
        fn = _defined(fn)
        if callable(fn) and not isinstance(fn, type) and id(fn) not in table and name not in _NOT_OPS:
            table[id(fn)] = (fn, name)
            # a function made by writes_out is the op with out= in front; the op itself is the
            # Tensor method (methods take no out=), wrapped in its own right
            add(getattr(fn, 'without_out', None), name)

    add(indexing.getitem, '__getitem__')
    add(indexing.setitem, '__setitem__')
    for name, fn in _op.bound_ops():  # the declared ops: each function, method, variant, operator
        add(fn, name)
    add(shape.slice_dim, 'slice_dim')
    for name in ('detach', 'detach_', 'item'):
        add(Tensor.__dict__[name], name)
    for name in _FACTORIES:
        add(getattr(creation, name), name)
    for name in ('new_zeros', 'new_ones', 'new_empty', 'new_full', 'new_tensor'):
        add(getattr(creation, name), name)
    # the functions these namespaces define (not the helpers they import)
    for module_name, home, prefix in (('nn.functional', 'leafgrad.nn', ''), ('linalg', 'leafgrad.linalg', 'linalg_'),
                                      ('special', 'leafgrad.special', 'special_')):
        module = importlib.import_module(f'..{module_name}', __package__)
        for name, fn in vars(module).items():
            fn = _defined(fn)
            where = getattr(fn, '__module__', None) or ''
            if not name.startswith('_') and (where.startswith(home) or (
                    imported and module_name in ('nn.functional', 'linalg')
                    and where.startswith('leafgrad.ops.') and not where.startswith('leafgrad.ops._'))):
                add(fn, prefix + name)
    return table


def _install():
    """Time the ops (the profiler's layer over them) and the backward nodes."""
    engine.profile_node = profile_node
    enable('profiler')


def _uninstall():
    engine.profile_node = None
    disable('profiler')


# ---- the layers over the ops: the profiler, vmap, forward AD ----------------------------------
#
# Each layer wraps the same ops and is switched on and off on its own (a profile, a vmap call, a
# dual level), in any order and nesting. What is bound in place of an op is the composition of
# the wrappers of the layers on now, always in the order of LAYERS, whichever came first: the
# profiler outermost (a call is timed as the user made it, a batched op's rule and the ops it
# runs inside it), then vmap, then forward AD (a batched op's rule calls the op on the physical
# arrays through forward AD, whose tangents are then physical too). Each layer's wrapper is
# built over the next one's, so that one swap moves every site from one composition to another.

LAYERS = ('profiler', 'vmap', 'forward_ad')  # outermost first

_layers = {'profiler': (_profiled, _build_ops)}  # name -> (make_wrapper(fn, name), its ops())
_layer_ops = {}          # name -> {id(op): (op, name)}, built on the layer's first use
_on = frozenset()        # the layers on now
_composites = {_on: {}}  # layers -> {id(op): (op, the composition of their wrappers)}
_transitions = {}        # (layers before, after) -> {id(bound before): (bound before, bound after)}
_defined_by_id = {}      # id(composition) -> (composition, the op it wraps)
_known = set()           # ids of the ops and of their compositions: what a site may hold
_sites = None            # where the ops are bound (Sites), found on the first switch


def register_layer(name, make_wrapper, ops):
    """Declare the layer ``name`` (one of LAYERS): ``make_wrapper(fn, name)`` wraps the
    function ``fn`` (the op, or the inner layers' wrapper of it) of the op named ``name``;
    ``ops()`` gives the layer's ops as ``_build_ops`` does."""
    _layers[name] = (make_wrapper, ops)


def enable(name):
    """Switch the layer ``name`` on (if it is not)."""
    _switch(_on | {name})


def disable(name):
    """Switch the layer ``name`` off (if it is on)."""
    _switch(_on - {name})


def enabled(name):
    return name in _on


def bound(fn):
    """The op ``fn`` (or a composition of wrappers of it) as bound now: an op passed to a
    transform itself (``vmap(leafgrad.dot)``, taken before the layers were switched on) runs
    through the layers on now."""
    fn = _defined(fn)
    entry = _composites[_on].get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else fn


def _defined(fn):
    entry = _defined_by_id.get(id(fn))
    return entry[1] if entry is not None and entry[0] is fn else fn


def _ops_of(name):
    global _sites
    ops = _layer_ops.get(name)
    if ops is None:
        ops = _layer_ops[name] = _layers[name][1]()
        if not _known.issuperset(ops):  # (ops no layer had: where they are bound is found afresh)
            _sites = None
        _known.update(ops)
    return ops


def _composite(layers):
    table = _composites.get(layers)
    if table is None:
        table = {}
        for name in reversed(LAYERS):  # innermost first
            if name in layers:
                make = _layers[name][0]
                for key, (op, op_name) in _ops_of(name).items():
                    inner = table.get(key)
                    table[key] = (op, make(op if inner is None else inner[1], op_name))
        for op, wrapper in table.values():
            _defined_by_id[id(wrapper)] = (wrapper, op)
            _known.add(id(wrapper))
        _composites[layers] = table
    return table


def _switch(layers):
    """Bind the composition of ``layers`` wherever an op is bound."""
    global _on, _sites
    if layers == _on:
        return
    table = _transitions.get((_on, layers))
    if table is None:
        before, after = _composite(_on), _composite(layers)
        table = {}
        for key in before.keys() | after.keys():
            op = (before.get(key) or after.get(key))[0]
            was, now = before.get(key, (op, op))[1], after.get(key, (op, op))[1]
            if was is not now:
                table[id(was)] = (was, now)
        _transitions[(_on, layers)] = table
    if _sites is None:
        _sites = Sites()
    _sites.swap(table)
    _on = layers


_NOTHING = object()  # (a site whose value no table knows: never ``is`` a value)


class Sites:
    """Where the ops are bound (module globals, ``Tensor``, the declared ops' namespace), found by
    one scan of every module and remembered, so that a switch of layers scans only the modules
    imported since (and ``__main__``): a dual level or a vmap call switches in a fraction of a
    millisecond once the first has paid for the scan. A site is anywhere an op or a composition
    of its wrappers (``_known``) is bound, so a module imported while layers are on is found as
    well as one imported before. ``known``: the ids a site may hold, for another table of
    wrappers than the layers' (compile's tracer)."""

    def __init__(self, known=None):
        self.known = _known if known is None else known
        self.scanned = set()      # names of the modules scanned
        self.sites = []           # (namespace dict, key) that held an op
        self.seen = set()         # (id(namespace), key) of those
        self.classes = {}         # id(class) -> (class, its number of attributes, names holding ops)
        self.plans = {}           # id(table) -> (what it was made for, its (site, old, new) lists)

    def _scan_new(self):
        this = sys.modules[__name__]
        wanted = self.known.__contains__
        for name, module in list(sys.modules.items()):
            if name in self.scanned and name != '__main__':
                continue
            self.scanned.add(name)
            if not isinstance(module, ModuleType) or module is this:
                continue
            namespace = module.__dict__
            if not any(map(wanted, map(id, list(namespace.values())))):
                continue
            for key, value in list(namespace.items()):
                if wanted(id(value)) and (id(namespace), key) not in self.seen:
                    self.seen.add((id(namespace), key))
                    self.sites.append((namespace, key))

    def swap(self, table):
        """Put ``table[id(value)][1]`` wherever a site holds ``table[id(value)][0]``. The
        replacements found are remembered per table as (site, old, new), so that the next swap
        by the same table (the next transform call) only checks that each site still holds
        ``old`` and stores ``new``: half the work of looking every value up again."""
        if len(sys.modules) != len(self.scanned) or '__main__' in sys.modules:
            self._scan_new()
        declared = sys.modules.get('leafgrad.ops._op')
        holders = [h for h in (Tensor, getattr(declared, 'ops', None)) if h is not None]
        names = [self._attributes(h) for h in holders]  # (a new list when a class changed)
        plan = self.plans.get(id(table))
        if plan is None or plan[0] != len(self.sites) or any(a is not b for a, b in zip(plan[1], names)):
            plan = self.plans[id(table)] = (len(self.sites), names, self._plan(table, holders))
        get = table.get
        for namespace, key, old, new in plan[2][0]:
            value = namespace.get(key)
            if value is old:
                namespace[key] = new
            else:  # (something else bound there now: looked up)
                entry = get(id(value))
                if entry is not None and entry[0] is value:
                    namespace[key] = entry[1]
        for holder, key, old, new in plan[2][1]:
            value = getattr(holder, key, None)
            if value is old:
                setattr(holder, key, new)
            else:
                entry = get(id(value))
                if entry is not None and entry[0] is value:
                    setattr(holder, key, entry[1])

    def _plan(self, table, holders):
        """(module sites, class attributes) of the swap by ``table``, each with the value it
        holds now and its replacement."""
        def step(value):
            entry = table.get(id(value))
            if entry is None or entry[0] is not value:
                return _NOTHING, None  # (nothing known: looked up each time)
            return entry
        sites = [(namespace, key) + tuple(step(namespace.get(key))) for namespace, key in self.sites]
        attributes = [(holder, key) + tuple(step(getattr(holder, key, None)))
                      for holder in holders for key in self._attributes(holder)]
        return sites, attributes

    def _attributes(self, holder):
        """The names under which the class ``holder`` holds an op (or a composition of its
        wrappers), found again only when its number of attributes changed (a swap then reads
        those names only)."""
        attributes = vars(holder)
        entry = self.classes.get(id(holder))
        if entry is None or entry[0] is not holder or entry[1] != len(attributes):
            entry = self.classes[id(holder)] = (
                holder, len(attributes), [key for key, value in list(attributes.items()) if id(value) in self.known])
        return entry[2]
