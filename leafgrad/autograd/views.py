"""Views and in-place changes: how a view is linked to its base, how a change bumps the shared
version counter, and how a view's history is regenerated, lazily, after its base changed.

Design note. A view shares its base's storage and version counter. It remembers how it was
made from its parent (``_view_of = (parent, make[, op name of a multi-output op])``, with
``make(parent) -> view``), the counter's value when its history was last made
(``_attr_version``), and, when it was not made while recording, how it was made (``_creation``:
'no_grad' or 'inference'; 'multi' for an output of unbind/split/chunk, inherited by the
views made from it, as PyTorch's creation meta).

An in-place change (``bump``) adds one to the shared counter and changes only two histories:
the changed tensor's and, when it is a view, its base's (a CopySlices, made by the in-place
op). Every other view of the base is brought up to date when its history is next needed, as
PyTorch does it: ``fresh(view)``, called wherever a view's grad_fn is read (an op recording
it as an input, a backward from it, ``.grad_fn``, ``.is_leaf``, hooks), finds its recorded
version behind the counter and gives it an ``AsStridedBackward0`` whose one edge is the
base's current history and whose derivative runs the view's own chain of view derivatives
(select, slice, transpose ...). That chain is made once per view, from its parent's (a
shared linked list), so an in-place change costs O(1) however many views are alive, and a
view 100,000 views deep is regenerated in linear time once. A view made without recording,
or an output of a multi-output op, refuses to be regenerated, with PyTorch's errors.

The check costs a recording op one flag test per input (``changed``): it turns on the first
time a tensor with live views (or a view) is changed in place, so a program that never does
that pays nothing more. ``requires_grad`` is kept eagerly instead: a base starts to require
grad at most once, and then its live views (kept weakly, ``LiveViews``) are told.

Threads: two threads regenerating one view at once may each make a node; either one is a
correct history (PyTorch serialises this with a lock per view).
"""
import sys

from .. import backend
from . import origins
from .grad_mode import state
from . import graph as _graph  # (its _tensor: leafgrad.tensor, late-bound)
from .graph import Node, gradient_edge

changed = False  # a view's history may be out of date somewhere (see the design note)


# ---- linking a view ---------------------------------------------------------------------------

class LiveViews:
    """A base's views, held weakly. Plain weak references (no callbacks, unlike a WeakSet,
    which costs a view op a microsecond); dead ones are dropped each time the list doubles."""
    __slots__ = ('refs', 'limit')

    def __init__(self):
        self.refs = []
        self.limit = 16

    def add(self, view):
        refs = self.refs
        refs.append(_weakref(view))
        if len(refs) > self.limit:
            self.compact()

    def compact(self):
        refs = self.refs
        refs[:] = [r for r in refs if r() is not None]
        self.limit = max(16, 2 * len(refs))

    def alive(self):
        return [v for v in (r() for r in self.refs) if v is not None]

    def any_alive(self):
        """Whether a view is alive; drops the dead ones met on the way (each once)."""
        refs = self.refs
        for i, r in enumerate(refs):
            if r() is not None:
                if i:
                    del refs[:i]
                return True
        refs.clear()
        return False


def link(input, out, make, multi=None):
    """Make ``out`` a view of ``input``: shared version counter, the base, how it was made.

    ``multi`` names the op when the view is one of several outputs (unbind, split): such
    views may not be changed in place while recording, nor used after their base was."""
    counter = out._version_counter = input._version_counter
    base = input._base
    if base is None:
        base, inherited = input, None
    else:
        inherited = input._creation
    out._base = base
    out._view_of = (input, make) if multi is None else (input, make, multi)
    out._attr_version = counter[0]
    if state.inference:
        creation = 'inference'
    elif not state.grad_enabled:
        creation = 'no_grad'
    else:
        creation = 'multi' if multi is not None else None
    if inherited is not None and (creation is None or inherited == 'inference'):
        creation = inherited  # the stricter of the two, as PyTorch propagates it
    if creation is not None:
        out._creation = creation
    node = out._grad_fn
    if node is not None:
        out._view_node = node  # its derivative, for the chain of a regenerated history
    if base._requires_grad and not out._requires_grad:
        out._requires_grad = True  # (made without recording) PyTorch's view asks its base
    views = base._views
    if views is None:
        views = base._views = LiveViews()
    refs = views.refs  # (LiveViews.add written out: one view op in three is a view's making)
    refs.append(_weakref(out))
    if len(refs) > views.limit:
        views.compact()


def link_leaf(base, out, node, make):
    """``link`` of a view made while recording (``node``: its view op's) from ``base``, a tensor
    that is no view: the common case (a Linear's ``weight.t()``, once per call) written out,
    without the branches that cannot apply (no inherited creation, no creation of its own, the
    view requiring grad already). The view's fields are ``link``'s, one for one
    (tests/test_views_inplace.py compares them)."""
    counter = out._version_counter = base._version_counter
    out._base = base
    out._view_of = (base, make)
    out._attr_version = counter[0]
    out._view_node = node
    views = base._views
    if views is None:
        views = base._views = LiveViews()
    refs = views.refs
    refs.append(_weakref(out))
    if len(refs) > views.limit:
        views.compact()


# ---- an in-place change ---------------------------------------------------------------------

def bump(t):
    """``t`` was changed in place: one more on its version counter (shared with its base and
    views), its views' histories out of date, and the user's line that changed it noted (for
    the version error, ``origins``). Called by leafgrad's own code only."""
    global changed
    counter = t._version_counter
    counter[0] += 1
    if not changed and (t._base is not None or t._views is not None):
        base = t._base if t._base is not None else t
        if t._base is not None or base._views.any_alive():
            changed = True
    if state.grad_enabled or t._requires_grad:
        # (a tensor that needs no grad, changed under no_grad, is rarely one a node saved:
        # the frame walk is spared there; a no_grad x.add_(1) costs 14k instructions, the
        # walk and its note ~7k)
        try:
            f = _getframe(2)  # (the caller of bump is leafgrad's: start at its caller)
        except ValueError:
            return
        origins.note_change(counter, f)


def detached(t):
    """``t``, a view or a base with views, is being detached: the result shares their version
    counter (PyTorch's detach is a view), but has no base nor views by which ``bump`` would see
    that its in-place changes put their histories out of date: the check is turned on now."""
    global changed
    if t._base is not None or t._views.any_alive():
        changed = True


def set_history(t, node):
    """``t`` is now output 0 of ``node`` (after an in-place op): its retain_grad moves there, its
    hooks as a leaf are dropped, and a base that starts to require grad tells its live views."""
    retained = t._grad_fn is not None and t._meta is not None and t._meta.retains_grad
    if retained:
        t._grad_fn._retained.pop(t._output_nr, None)
    if t._grad_fn is None:
        t._history_since = getattr(node, '_seq', -1)  # (its history begins here: for detach_)
        if t._meta is not None and t._meta.hooks:
            # PyTorch resets a tensor's hooks when its grad_fn changes: a leaf's (run by its
            # AccumulateGrad, which a graph made before may still reach) run no more
            t._meta.hooks = None
    t._grad_fn = node
    t._output_nr = 0
    if not t._requires_grad:
        t._requires_grad = True
        if t._views is not None:
            views_require_grad(t)
    if retained:
        _graph._tensor._attach_retain(t)


def views_require_grad(base):
    """``base`` has started to require grad: so do its views (PyTorch asks the base)."""
    for v in base._views.alive():
        v._requires_grad = True


def views_stop_requiring_grad(base):
    """``base`` no longer requires grad (``requires_grad_(False)``, ``detach_()``): nor do its
    views that have no history of their own and were not asked to (PyTorch's view without a
    grad_fn asks its base, beside its own flag)."""
    for v in base._views.alive():
        if v._grad_fn is None and not v._own_requires_grad:
            v._requires_grad = False


def reroot(t, old_data, inverse):
    """``t`` (a base or a view) changed shape in place (``t_``, ``unsqueeze_`` ...): the views
    made from it, recipes for its old shape, become views of a stand-in for the old shape,
    itself a view of ``t`` made by ``inverse`` (its new shape back to the old). Rare; it
    costs one pass over the base's live views, whose chains are made again when needed."""
    base = t._base if t._base is not None else t
    views = base._views.alive() if base._views is not None else ()
    if not views:
        return
    old = _graph._tensor.Tensor._wrap(old_data, t._requires_grad)
    old._version_counter = t._version_counter
    old._base = base
    old._view_of = (t, inverse)
    old._attr_version = t._version_counter[0]
    old._creation = t._creation
    base._views.add(old)  # (re-rooted in turn if t changes shape again)
    for v in views:
        link = v._view_of
        if link is not None and link[0] is t:
            v._view_of = (old,) + link[1:]
        v._chain = v._makes = None


# ---- regenerating a view's history ------------------------------------------------------------

def fresh(t):
    """Bring ``t``'s history up to date if it is a view whose base (or another view of it)
    changed in place since its history was made."""
    if t._base is not None and t._version_counter[0] != t._attr_version:
        regenerate(t)


def regenerate(view):
    """Give ``view`` a history through its base's current one (AsStridedBackward0), or raise
    PyTorch's error for a view that may not have one."""
    base = view._base
    if view._view_of is None or (view._grad_fn is None and not base._requires_grad):
        return  # nothing to regenerate (and, as PyTorch, the recorded version stays)
    if view._creation is not None:
        raise RuntimeError(rebase_error(view, indirect=True))
    node = AsStridedBackward0((gradient_edge(base),))
    node.chain = _chain_of(view)
    node.makes, node.base_shape, node.base_dtype = makes_of(view), base._data.shape, base._data.dtype
    set_history(view, node)
    view._attr_version = view._version_counter[0]


def check_inplace(view):
    """Before a recorded in-place change of ``view``: PyTorch's error for a view made
    without recording or by a multi-output op."""
    if view._creation is not None:
        raise RuntimeError(rebase_error(view, indirect=False))


def rebase_error(view, indirect):
    """PyTorch's message for a view whose history may not be rebased."""
    creation = view._creation
    what = 'its base or another view of its base has been modified inplace' if indirect else \
        'is being modified inplace'
    fn = view._grad_fn
    if creation in ('no_grad', 'inference') or fn is None:
        prefix = (f'Output {view._output_nr} of {_short_name(fn)} is a view of a view which was created in'
                  if fn is not None else 'A view was created in')
        if creation == 'inference':
            msg = f'{prefix} inference mode and {what} in normal mode.'
        else:
            msg = f'{prefix} no_grad mode and {what} with grad mode enabled.'
    else:
        msg = f'Output {view._output_nr} of {_short_name(fn)} is a view and {what}.'
    if creation == 'multi':
        return (msg + ' This view is the output of a function that returns multiple views. Such functions do '
                'not allow the output views to be modified inplace. You should replace the inplace operation by '
                'an out-of-place one.')
    block = 'inference_mode' if creation == 'inference' else 'no_grad'
    return (msg + ' Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your '
            f'code by moving both the view and the inplace either both inside the {block} block (if you '
            "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


class AsStridedBackward0(Node):
    """The history of a view whose base changed in place: the view's own chain of view
    derivatives (select, slice, transpose ...), innermost first, from the gradient of the
    view to that of its base. (PyTorch regenerates the view with as_strided and names the
    node so; here each view op's derivative runs, written with leafgrad's ops.) Under
    create_graph the gradient is made as PyTorch's as_strided_backward records it
    (``_recorded``)."""

    def apply(self, grad):
        if state.grad_enabled and type(grad) is _graph._tensor.Tensor and grad.requires_grad:
            out = _recorded(self, grad)
            if out is not None:
                return out,
        link = self.chain
        while link is not None:
            grad = link.node.apply(grad)[0]
            link = link.rest
        return grad,


def _recorded(node, grad):
    """PyTorch's as_strided_backward, recorded: the view's gradient copied into the view's
    region of zeros of the base's shape (a CopySlices), the dims of size 1 squeezed and the
    expanded ones (stride 0) summed first, and the base's gradient that as_strided of those
    zeros (this node again, with no chain: the same geometry); zeros with no history where the
    view or the base is empty. None where the region overlaps itself (an unfold's: PyTorch's
    index_add_), or for a view of another dtype (PyTorch replays view_as_real), left to the
    chain."""
    if grad._data.dtype != node.base_dtype:
        return None
    shape = tuple(grad.shape)
    base_shape = node.base_shape
    if 0 in shape or 0 in base_shape:
        return grad.new_zeros(base_shape)
    storage = grad.new_zeros(base_shape)
    region = storage
    region = apply_makes(node.makes, region)
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] == 1:
            grad, region = grad.squeeze(i), region.select(i, 0)
        elif region._data.strides[i] == 0:
            grad, region = grad.sum(i), region.select(i, 0)
    data = region._data
    if not backend.writeable(data):
        # (an expanded view's region, its expanded dims gone: NumPy's broadcast arrays stay
        # read-only, so the region is given a writable alias of the same memory of storage)
        if type(data) is not backend.numpy.ndarray or _maybe_overlapping(data):
            return None
        offset = (data.__array_interface__['data'][0] - storage._data.__array_interface__['data'][0]) // data.itemsize
        region._data = backend.numpy.lib.stride_tricks.as_strided(storage._data.reshape(-1)[offset:], data.shape,
                                                                  data.strides)
    region.copy_(grad)
    out = _graph._tensor.Tensor._wrap(storage._data.view(), True)
    strided = AsStridedBackward0((gradient_edge(storage),))
    strided.chain = strided.makes = None
    strided.base_shape, strided.base_dtype = base_shape, node.base_dtype
    out._grad_fn = strided
    link(storage, out, lambda t: t.view(base_shape))
    return out


def _maybe_overlapping(data):
    """PyTorch's _maybe_overlapping_memory: the dims (of size > 1), by stride, each step past
    the reach of those below it."""
    reach = 0
    for stride, size in sorted((abs(st), n) for n, st in zip(data.shape, data.strides) if n > 1):
        if stride <= reach:
            return True
        reach += stride * (size - 1)
    return False


class _ViewChain:
    """One view's derivative node, then its parent's chain (None at the base): shared by
    all the views made from one parent."""
    __slots__ = ('node', 'rest')

    def __init__(self, node, rest):
        self.node, self.rest = node, rest


class _StandIn(Node):
    """The history of the stand-in parent a view op is replayed on to get its node."""


_STAND_IN = _StandIn(())


def _chain_of(view):
    """``view``'s chain of view derivatives (made once per view, from its parent's): the
    node recorded when the view was made, or, for a view made without recording (or reshaped
    in place since), the nodes of its view op replayed on a stand-in for its parent."""
    todo = []
    t = view
    while t._base is not None and t._chain is None and t._view_of is not None:
        todo.append(t)
        t = t._view_of[0]
    rest = t._chain
    for v in reversed(todo):
        node = v._view_node
        if node is not None:
            rest = _ViewChain(node, rest)
        else:
            for node in _replayed_nodes(v):
                rest = _ViewChain(node, rest)
        v._chain = rest
    return rest


class _Makes:
    """One view's view op (``make(parent) -> view``), then its parent's (None at the base):
    shared by all the views made from one parent, holding no tensor."""
    __slots__ = ('make', 'rest')

    def __init__(self, make, rest):
        self.make, self.rest = make, rest


def apply_makes(makes, t):
    """The view of ``t`` that the view ops ``makes`` (innermost first, ``makes_of``) make."""
    chain = []
    while makes is not None:
        chain.append(makes.make)
        makes = makes.rest
    for make in reversed(chain):
        t = make(t)
    return t


def makes_of(view):
    """The view ops that make ``view`` from its base, innermost first (linked, made once per
    view from its parent's); a CopySlices makes the view's region of a gradient with them."""
    todo = []
    t = view
    while t._base is not None and t._makes is None and t._view_of is not None:
        todo.append(t)
        t = t._view_of[0]
    rest = t._makes
    for v in reversed(todo):
        rest = v._makes = _Makes(v._view_of[1], rest)
    return rest


def _replayed_nodes(view):
    """The nodes of ``view``'s own view op(s), replayed on a stand-in for its parent that
    requires grad (whatever the parent's history is), the one next to the parent first."""
    stand_in = _graph._tensor.Tensor._wrap(view._view_of[0]._data, True)
    stand_in._grad_fn = _STAND_IN
    prev, state.grad_enabled = state.grad_enabled, True
    try:
        node = view._view_of[1](stand_in)._grad_fn
    finally:
        state.grad_enabled = prev
    nodes = []
    while node is not _STAND_IN:
        nodes.append(node)
        node = node.next_functions[0][0]
    nodes.reverse()
    return nodes


def _short_name(node):
    """The op as PyTorch's view errors name it: the node's name without 'Backward', and without
    the overload's number where it is 0 (SqueezeBackward0: Squeeze, SqueezeBackward1: Squeeze1)."""
    name = node.name()
    i = name.find('Backward')
    if i <= 0:
        return name
    rest = name[i + len('Backward'):]
    return name[:i] + ('' if rest == '0' else rest)


from weakref import ref as _weakref  # noqa: E402
_getframe = sys._getframe
