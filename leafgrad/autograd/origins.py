"""Small provenance facts that ``leafgrad.explain`` reads: where a tensor lost its history.

Design note. ``explain(t)`` must say *why* a tensor has no gradient: detached, re-wrapped with
``leafgrad.tensor(t)``, frozen with ``requires_grad_(False)``, computed under ``no_grad``. Those
facts are only knowable at the moment they happen, so the few places that cut a tensor off its
history call ``note`` -- and only when the source required grad, so ordinary code pays one
attribute test. The fact is stored on the tensor itself (its instance ``__dict__``), so it dies
with it; it holds the source only weakly and the source's op only by class, so nothing here
keeps a tensor or a graph alive. A note costs about a microsecond: the user's line is kept as
(filename, line) and formatted only when explained.

``copies_of(leaf)`` looks through the most recent copies made of leaves (a bounded ring of weak
references) to tell a leaf "a copy of you was made at line 12".

Ops computed under ``no_grad`` are *not* watched by default: checking every op's inputs costs
about a tenth of a no-grad op. ``watch_no_grad(True)`` turns that on (see ``leafgrad.explain``).

``walks`` counts backward walks (the engine adds one per walk), so that ``explain`` can tell
"no backward has run yet" (healthy) from "a backward ran and never reached this leaf" (broken).

``note_change`` keeps, beside the count of a version counter bumped by an in-place change
(``views.bump``), the user's line that made the change, so that the error "one of the
variables needed for gradient computation has been modified by an inplace operation" can name
it without anomaly mode (``modified_at``). Each change is kept with the version it made (the
latest few): one frame walk and one tuple per in-place op.
"""
import collections
import os
import sys
import weakref

from . import grad_mode
from .grad_mode import InferenceCounter, state

walks = 0                 # backward walks run so far (written by the engine)
_recent = collections.deque(maxlen=256)   # weakrefs to recently noted tensors (for copies_of)
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Origin:
    """How a tensor was cut from the graph: ``kind`` is one of 'detach', 'detach_', 'data',
    'tensor' (re-wrapped by leafgrad.tensor), 'frozen' (requires_grad_(False)), 'no_grad' /
    'inference_mode' (an op run with grad mode off on a tensor that requires grad)."""
    __slots__ = ('kind', 'source', '_source_op', '_frame')

    def __init__(self, kind, source, source_op, frame):
        self.kind = kind
        self.source = source            # weakref to the tensor it came from (or None)
        self._source_op = source_op     # the class of the source's grad_fn then; False: a leaf
        self._frame = frame             # (filename, line) of the user's code, or None

    @property
    def source_desc(self):
        """'a leaf that requires grad' or 'the output of MulBackward0', as the source was."""
        op = self._source_op
        if op is None:
            return None
        return 'a leaf that requires grad' if op is False else f'the output of {op.__name__}'

    @property
    def where(self):
        """'file.py:12' of the user's code, or None."""
        if self._frame is None:
            return None
        return f'{os.path.basename(self._frame[0])}:{self._frame[1]}'

    def __repr__(self):
        return f'Origin({self.kind!r}, from {self.source_desc}, at {self.where})'


_inside = {}              # co_filename -> whether it belongs to the leafgrad package
_getframe = sys._getframe


def note(t, kind, source):
    """Record on ``t`` that it was made from ``source`` (which required grad) by ``kind``.

    Kept cheap (a tuple on the tensor, the user's frame as (filename, line), the package test
    cached per file), since ``loss.detach()`` may run every step."""
    if source is None:
        src = op = None
    else:
        fn = source._grad_fn
        op = type(fn) if fn is not None else False
        src = weakref.ref(source) if source is not t else None
    f = user_frame(_getframe(1))
    frame = None if f is None else (f.f_code.co_filename, f.f_lineno)
    try:
        t.__dict__['_origin'] = (kind, src, op, frame)
    except AttributeError:     # a tensor type without an instance dict: nothing to note on
        return
    if op is False and src is not None:
        _recent.append(weakref.ref(t))   # a copy of a leaf: copies_of(leaf) may look for it


def user_frame(f):
    """The innermost frame from ``f`` outwards that is not leafgrad's own: the user's line."""
    while f is not None:
        code = f.f_code
        inside = _inside.get(code.co_filename)
        if inside is None:
            inside = _inside[code.co_filename] = os.path.abspath(code.co_filename).startswith(_PKG_DIR + os.sep)
        if not inside:
            return f
        f = f.f_back
    return None


_KEPT_CHANGES = 4


def note_change(counter, f):
    """Remember, after the count of a version ``counter`` just bumped, the user's line that
    changed it (the latest ``_KEPT_CHANGES`` changes, each as (version it made, file, line,
    function)): the innermost frame from ``f`` outwards that is not leafgrad's own.
    (``views.bump`` calls it, with its caller's caller: a frame skipped by _getframe is not
    made into a frame object, and each one made costs ~1.4k instructions.)"""
    while True:  # (user_frame, written out: this runs on every recorded in-place op)
        if f is None:
            return
        code = f.f_code
        inside = _inside.get(code.co_filename)
        if inside is None:
            inside = _inside[code.co_filename] = os.path.abspath(code.co_filename).startswith(_PKG_DIR + os.sep)
        if not inside:
            break
        f = f.f_back
    counter.append((counter[0], code.co_filename, f.f_lineno, code.co_name))
    if len(counter) > _KEPT_CHANGES + 1:
        del counter[1]


def modified_at(counter, expected):
    """'It was modified in place at FILE:LINE (in FUNC)': the change that took a version
    counter past the ``expected`` version, else the latest change kept; '' if none was."""
    for change in counter[1:]:
        if change[0] == expected + 1:
            return '\nIt was modified in place at {1}:{2} (in {3})'.format(*change)
    if len(counter) > 1:
        return '\nIt was last modified in place at {1}:{2} (in {3})'.format(*counter[-1])
    return ''


def origin_of(t):
    """The recorded Origin of ``t``, or None."""
    d = getattr(t, '__dict__', None)
    fact = d.get('_origin') if d is not None else None
    return Origin(*fact) if fact is not None else None


def copies_of(source):
    """(tensor, Origin) of live, recently noted tensors made from ``source``."""
    out = []
    for ref in list(_recent):
        t = ref()
        if t is None:
            continue
        origin = origin_of(t)
        if origin is not None and origin.source is not None and origin.source() is source:
            out.append((t, origin))
    return out


# ---- watching ops under no_grad (opt-in) -------------------------------------------------

_watching = False          # explain_watching, or some thread is inside inference_mode
explain_watching = False


def _inference_contexts_changed(count):
    global _watching
    _watching = explain_watching or count > 0


grad_mode.inference_listeners.append(_inference_contexts_changed)


def note_no_grad(out, inputs):
    """Called by ``_util.record`` for an op run with grad mode off, while watching: marks an
    output made in inference mode an inference tensor (a view's counter is its base's: set
    after this), and notes for explain why ``out`` has no history."""
    if state.inference and type(out._version_counter) is not InferenceCounter:
        out._version_counter = InferenceCounter((0,))
    if not explain_watching:
        return
    for t in inputs:
        if getattr(t, '_requires_grad', False) is True:
            note(out, 'inference_mode' if state.inference else 'no_grad', t)
            return


def watch_no_grad(enabled=True):
    """Record which tensors were computed under ``no_grad``/``inference_mode`` from tensors
    that require grad. Off by default: while off, an op pays one flag test (in ``_util.record``)."""
    global _watching, explain_watching
    explain_watching = bool(enabled)
    _watching = explain_watching or grad_mode.inference_contexts > 0


def watching_no_grad():
    return explain_watching
