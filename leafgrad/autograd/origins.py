"""Small provenance facts that ``leafgrad.explain`` reads: where a tensor lost its history.

Design note. ``explain(t)`` must say *why* a tensor has no gradient: detached, re-wrapped with
``leafgrad.tensor(t)``, frozen with ``requires_grad_(False)``, computed under ``no_grad``. Those
facts are only knowable at the moment they happen, so the few places that cut a tensor off its
history call ``note`` -- and only when the source required grad, so ordinary code pays one
attribute test. A fact is kept in a dict keyed by ``id(tensor)`` whose entry dies with the tensor
(a weakref callback), never in the tensor itself: nothing here keeps a tensor or a graph alive.

Ops computed under ``no_grad`` are *not* watched by default: checking every op's inputs costs
about a tenth of a no-grad op. ``watch_no_grad(True)`` turns that on (see ``leafgrad.explain``).

``walks`` counts backward walks (the engine adds one per walk), so that ``explain`` can tell
"no backward has run yet" (healthy) from "a backward ran and never reached this leaf" (broken).
"""
import os
import sys
import weakref

walks = 0                 # backward walks run so far (written by the engine)
_facts = {}               # id(tensor) -> (weakref to tensor, Origin)
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Origin:
    """How a tensor was cut from the graph: ``kind`` is one of 'detach', 'detach_', 'data',
    'tensor' (re-wrapped by leafgrad.tensor), 'frozen' (requires_grad_(False)), 'no_grad'
    (an op run with grad mode off on a tensor that requires grad)."""
    __slots__ = ('kind', 'source', 'source_desc', 'where')

    def __init__(self, kind, source, source_desc, where):
        self.kind = kind
        self.source = source            # weakref to the tensor it came from (or None)
        self.source_desc = source_desc  # e.g. 'a leaf that requires grad', 'the output of MulBackward0'
        self.where = where              # 'file.py:12' of the user's code, or None

    def __repr__(self):
        return f'Origin({self.kind!r}, from {self.source_desc}, at {self.where})'


def describe(t):
    """A short phrase for a tensor's place in the graph."""
    fn = t._grad_fn
    if fn is not None:
        return f'the output of {fn.name()}'
    if t._requires_grad:
        return 'a leaf that requires grad'
    return 'a tensor that does not require grad'


def user_location():
    """'file:line' of the innermost frame outside the leafgrad package (the user's line)."""
    f = sys._getframe(2)
    while f is not None:
        filename = f.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PKG_DIR + os.sep):
            return f'{os.path.basename(filename)}:{f.f_lineno}'
        f = f.f_back
    return None


def note(t, kind, source):
    """Record that ``t`` was made from ``source`` (which required grad) by ``kind``."""
    key = id(t)
    try:
        ref = weakref.ref(t, lambda _r, key=key: _facts.pop(key, None))
        src = weakref.ref(source) if source is not None and source is not t else None
    except TypeError:
        return
    _facts[key] = (ref, Origin(kind, src, describe(source) if source is not None else None, user_location()))


def origin_of(t):
    """The recorded Origin of ``t``, or None."""
    entry = _facts.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    return entry[1]


def copies_of(source):
    """Origins of live tensors made from ``source`` (its detached or re-wrapped copies)."""
    out = []
    for ref, origin in list(_facts.values()):
        t = ref()
        if t is not None and origin.source is not None and origin.source() is source:
            out.append((t, origin))
    return out


# ---- watching ops under no_grad (opt-in) -------------------------------------------------

_watching = False


def _noting_record(record):
    def record_watched(out_data, node_cls, inputs):
        out, node = record(out_data, node_cls, inputs)
        if node is None:
            _note_no_grad(out, inputs)
        return out, node
    record_watched.__wrapped__ = record
    return record_watched


def _noting_record_many(record_many):
    def record_many_watched(out_datas, node_cls, inputs, differentiable=None):
        outs, node = record_many(out_datas, node_cls, inputs, differentiable)
        if node is None:
            for out in outs:
                _note_no_grad(out, inputs)
        return outs, node
    record_many_watched.__wrapped__ = record_many
    return record_many_watched


def _note_no_grad(out, inputs):
    from .grad_mode import state
    if state.grad_enabled:
        return
    for t in inputs:
        if getattr(t, '_requires_grad', False) is True:
            note(out, 'inference_mode' if state.inference else 'no_grad', t)
            return


def watch_no_grad(enabled=True):
    """Record which tensors were computed under ``no_grad``/``inference_mode`` from tensors
    that require grad. Off by default (it costs ~0.1 us per op while on). The ops modules bind
    ``record`` by name, so turning it on rebinds that name in every loaded leafgrad module;
    modules imported later pick up the rebound ``_util.record``."""
    global _watching
    from ..ops import _util
    enabled = bool(enabled)
    if enabled == _watching:
        return
    plain = (_util.record, _util.record_many)
    if enabled:
        new = (_noting_record(plain[0]), _noting_record_many(plain[1]))
    else:
        new = (plain[0].__wrapped__, plain[1].__wrapped__)
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == 'leafgrad' or name.startswith('leafgrad.')):
            continue
        d = getattr(mod, '__dict__', {})
        if d.get('record') is plain[0]:
            mod.record = new[0]
        if d.get('record_many') is plain[1]:
            mod.record_many = new[1]
    _watching = enabled


def watching_no_grad():
    return _watching
