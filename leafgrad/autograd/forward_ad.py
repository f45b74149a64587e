"""``autograd.forward_ad``: dual tensors, whose tangents the ops carry forward.

Design note. Each op's forward rule is the ``jvp`` method of its node class, written beside
its ``apply`` (the reverse derivative): ``node.jvp(tangents)`` gets the tangents of the node's
inputs (aligned with ``next_functions``, None for an input without one) and returns the
tangent of the output (a tuple for a node with several outputs). It reads what the node saved
and its slots, as ``apply`` does, so that an op's forward states once what both rules need.

How the rules are reached, at no cost to ordinary programs. While a dual level is open, every
public op is replaced, wherever a module's globals or the Tensor class hold it, by a wrapper
(the profiler's mechanism, ``_instrument``); when the level closes, the originals are put
back. A wrapper whose inputs carry no tangent calls the op. Otherwise the outermost wrapper
marks the inputs with tangents as requiring grad for the duration of the call and turns grad
mode on, so that the op records its node as in any backward-ready forward; the node's ``jvp``
then gives the output's tangent. Composite ops (``F.linear`` calling ``addmm``) need no rule of
their own: the ops they call are wrapped too and give each intermediate its tangent. Afterwards
the recording made only for the tangents is forgotten: outputs keep a history only where an
input truly requires grad (with grad mode on), and edges to the temporarily marked inputs are
cut. Tangents are computed with propagation off (a rule's ops carry no tangents of their own)
and, unless an input or a tangent truly requires grad, with grad mode off.

In-place ops: the out-of-place op computes the new tangent, the in-place op the new value;
the tangent is written into the tensor's tangent in place, so that the tangent of a view is
a view of its base's tangent, as in PyTorch (a view that receives a tangent gives its base a
zero one first). One level at a time, as PyTorch's forward AD.
"""
import collections
import sys
import weakref

from . import grad_mode, _instrument
from ..creation import zeros_like
from ..ops import elementwise
from ..tensor import Tensor
from .graph import AccumulateGrad, SavedOutput, _sequence, grad_accumulator, self_recording

__all__ = ['dual_level', 'enter_dual_level', 'exit_dual_level', 'make_dual', 'unpack_dual',
           'UnpackedDualTensor']


class _State:
    level = None          # the open level (0), or None
    propagating = False   # wrappers carry tangents (off while a rule computes)
    depth = 0             # nesting of wrapped calls that carry tangents
    edge_tangents = None  # {(id(node), output_nr): tangent} while an outermost call runs
    held = None           # the accumulators named in edge_tangents, kept alive meanwhile
    truly = False         # while an outermost call runs: whether an input truly requires grad
    duals = []            # weak references to the tensors given a tangent in this level


_state = _State()


# ---- levels --------------------------------------------------------------------------------

def enter_dual_level():
    """Open a dual level (PyTorch has one at a time) and return its index."""
    if _state.level is not None:
        raise RuntimeError('Nested forward mode AD is not supported at the moment')
    _install()
    _state.level = 0
    _state.propagating = True
    _state.duals = []
    return 0


def exit_dual_level(*, level=None):
    """Close the level: every tangent given in it is dropped."""
    if level is None:
        level = _state.level
    if level is None or _state.level is None:
        raise RuntimeError('Dual level must be a positive number.')
    if level != _state.level:
        raise RuntimeError('Trying to exit a forward AD level that was not the last one that was created. This is '
                           'not supported.')
    for ref in _state.duals:
        t = ref()
        if t is not None:
            t.__dict__.pop('_fw_grad', None)
    _state.duals = []
    _state.level = None
    _state.propagating = False
    _uninstall()


class dual_level:
    """``with dual_level():`` make_dual, unpack_dual and the ops' tangents work inside."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _level_of(level):
    if level is None:
        level = _state.level
    if level is None or _state.level is None:
        return None
    return level


# ---- dual tensors --------------------------------------------------------------------------

UnpackedDualTensor = collections.namedtuple('UnpackedDualTensor', ['primal', 'tangent'])
UnpackedDualTensor.__module__ = 'leafgrad.autograd.forward_ad'
UnpackedDualTensor.__doc__ = 'The primal and tangent of a dual tensor (``unpack_dual``).'


def _set(t, tangent):
    t._fw_grad = tangent
    _state.duals.append(weakref.ref(t))


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient."""
    if _level_of(level) is None:
        raise RuntimeError('Trying to create a dual Tensor for forward AD but no level exists, make sure to '
                           'enter_dual_level() first.')
    if tensor._data.dtype.kind not in 'fcV':  # ('V': bfloat16)
        raise ValueError(f'Expected primal to be floating point or complex, but got: {tensor.dtype}')
    if tangent._data.dtype.kind not in 'fcV':
        raise ValueError(f'Expected tangent to be floating point or complex, but got: {tangent.dtype}')
    if tangent.shape != tensor.shape:  # (logical shapes: a tangent may be batched, as jacfwd's)
        raise RuntimeError('Trying to set a forward gradient that has a different size than that of the original '
                           f'Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given '
                           f'forward gradient is of size {list(tangent.shape)}.')
    with _off():
        dual = tensor.view(tensor.shape)
        if type(tangent) is Tensor and type(tensor) is Tensor and not _same_layout(tangent, tensor):
            # PyTorch keeps the tangent given only where it is laid out as its primal; another one
            # (expanded, transposed, a slice of a larger storage) is copied into the primal's
            # strides, so that an in-place op on the dual can write its tangent in place
            copy = tensor.new_empty_strided(tuple(tensor.shape), tensor.stride(), dtype=tangent.dtype)
            tangent = copy.copy_(tangent)
    _set(dual, tangent)
    return dual


def _same_layout(tangent, tensor):
    return (tangent.stride() == tensor.stride() and tangent.storage_offset() == tensor.storage_offset()
            and tangent.untyped_storage().nbytes() // tangent.element_size()
            == tensor.untyped_storage().nbytes() // tensor.element_size())


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the primal a view of ``tensor`` without the tangent; tangent None
    outside a level or for a tensor without one."""
    if _level_of(level) is None or tensor._fw_grad is None:
        return UnpackedDualTensor(tensor, None)
    with _off():
        primal = tensor.view(tensor.shape)
    return UnpackedDualTensor(primal, tensor._fw_grad)


class _off:
    """Within: ops carry no tangents."""

    def __enter__(self):
        self.prev = _state.propagating
        _state.propagating = False

    def __exit__(self, *exc):
        _state.propagating = self.prev


# ---- the wrapped ops -------------------------------------------------------------------------

_INPLACE_DUNDERS = {'__iadd__': '__add__', '__isub__': '__sub__', '__imul__': '__mul__',
                    '__itruediv__': '__truediv__', '__ipow__': '__pow__', '__imatmul__': '__matmul__',
                    '__ifloordiv__': '__floordiv__', '__imod__': '__mod__'}
# in-place ops whose new value does not depend on the old one differentiably
_OVERWRITING = {'zero_', 'fill_', 'normal_', 'uniform_', 'random_', 'bernoulli_', 'exponential_',
                'geometric_', 'log_normal_', 'cauchy_'}
# in-place ops that change only the tensor's shape and strides: the same change made to its tangent
_RESHAPING = {'t_', 'transpose_', 'swapaxes_', 'swapdims_', 'squeeze_', 'unsqueeze_'}


def _duals_in(args, kwargs):
    found = []
    for a in args:
        if isinstance(a, Tensor):
            if a._fw_grad is not None:
                found.append(a)
        elif isinstance(a, (tuple, list)):
            found.extend(x for x in a if isinstance(x, Tensor) and x._fw_grad is not None)
    for a in kwargs.values():
        if isinstance(a, Tensor) and a._fw_grad is not None:
            found.append(a)
    return found


def _make_wrapper(fn, name):
    if name in _INPLACE_DUNDERS or name == '__setitem__' or (
            name.endswith('_') and not name.endswith('__') and name not in ('requires_grad_', 'retain_grad_')):
        def forward_ad(*args, **kwargs):
            if not _state.propagating:
                return fn(*args, **kwargs)
            if not _duals_in(args, kwargs):
                return fn(*args, **kwargs)
            return _run_inplace(fn, name, args, kwargs)
    else:
        def forward_ad(*args, **kwargs):
            if not _state.propagating:
                return fn(*args, **kwargs)
            duals = _duals_in(args, kwargs)
            if not duals:
                return fn(*args, **kwargs)
            return _run(fn, name, args, kwargs, duals)
    _instrument._copy_identity(forward_ad, fn)
    return forward_ad


def _install():
    """Wrap the ops: forward AD's layer (``_instrument``), under vmap's when vmap runs (a jvp
    under vmap): an op on batched tensors goes through its batching rule, which calls the op on
    the physical arrays through forward AD's wrapper, so that the tangents are computed on the
    physical arrays too (and batched with the outputs, ``_vmap._batched``)."""
    _instrument.enable('forward_ad')


def _ops():
    table = _instrument._build_ops(imported=True)  # (which loads nn.functional: its entries are in self_recording)
    for fn in (elementwise.tanh_backward, elementwise.sigmoid_backward, elementwise.masked_grad, *self_recording):
        # derivatives that record their own node: forward over reverse carries tangents through them
        table[id(fn)] = (fn, fn.__name__)
    return table


def _uninstall():
    _instrument.disable('forward_ad')


_instrument.register_layer('forward_ad', _make_wrapper, _ops)


def _edge_key(t):
    fn = t._grad_fn
    if fn is not None:
        return (id(fn), t._output_nr)
    fn = grad_accumulator(t)
    _state.held.append(fn)  # (alive while the registry is: an id is unique only while its object lives)
    return (id(fn), 0)


def _outputs(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, Tensor)]
    return []


def _run(fn, name, args, kwargs, duals):
    """Call ``fn`` so that its outputs carry tangents (see the design note)."""
    if _state.depth:  # inside an outer op: inputs already record, the registry is open
        out = fn(*args, **kwargs)
        _give_tangents(out, name, _state.truly)  # (the rule records only where the outer op truly does)
        return out
    state = grad_mode.state
    prev = state.grad_enabled
    tensors = [a for a in args if isinstance(a, Tensor)] + [a for a in kwargs.values() if isinstance(a, Tensor)]
    for a in args:
        if isinstance(a, (tuple, list)):
            tensors.extend(x for x in a if isinstance(x, Tensor))
    truly = prev and any(t._requires_grad for t in tensors)
    # a tangent that requires grad (a tangent given as a tensor that requires grad): the rules
    # run recorded, so that the output's tangent is differentiable w.r.t. it, as PyTorch's
    recorded = truly or (prev and any(t._fw_grad._requires_grad for t in duals))
    temp = [t for t in duals if not t._requires_grad]
    start = next(_sequence)
    for t in temp:
        t._requires_grad = True
    state.grad_enabled = True
    _state.depth += 1
    _state.truly = recorded
    _state.held = []
    _state.edge_tangents = {_edge_key(t): t._fw_grad for t in duals}
    try:
        out = fn(*args, **kwargs)
    finally:
        _state.depth -= 1
        state.grad_enabled = prev
        for t in temp:
            t._requires_grad = False
    try:
        _give_tangents(out, name, recorded)
    finally:
        _state.edge_tangents = None
        _state.held = None
        _forget(out, temp, start, truly, recorded)
    return out


def _give_tangents(out, name, truly=None):
    registry = _state.edge_tangents
    for o in _outputs(out):
        if o._fw_grad is not None:
            registry[_edge_key(o)] = o._fw_grad
            continue
        node = o._grad_fn
        if node is None:
            continue  # not differentiable (indices, comparisons): no tangent
        tangents = [registry.get((id(n), nr)) if n is not None else None for n, nr in node.next_functions]
        if all(t is None for t in tangents):
            continue
        link = o._view_of
        if link is not None and link[0]._fw_grad is not None and len(node.next_functions) == 1:
            # a view: its tangent is the same view of its parent's tangent, as in PyTorch
            with _off():
                result = link[1](link[0]._fw_grad)
            _set(o, result)
            registry[_edge_key(o)] = result
            continue
        rule = getattr(node, 'jvp', None)
        if rule is None:
            raise NotImplementedError(f'Trying to use forward AD with {name} that does not support it because it '
                                      'has not been implemented yet.')
        state = grad_mode.state
        prev_grad, prev_prop = state.grad_enabled, _state.propagating
        if truly is not None:
            state.grad_enabled = truly
        _state.propagating = False
        try:
            code = getattr(rule, '__code__', None)
            # a rule that needs the output (its shape, its dtype) takes it as a third parameter
            result = rule(tangents, o) if code is not None and code.co_argcount == 3 else rule(tangents)
        finally:
            state.grad_enabled, _state.propagating = prev_grad, prev_prop
        if isinstance(result, (tuple, list)):  # one tangent per output of the node
            result = result[o._output_nr]
        if result is not None and result.shape != o.shape:  # (logical: jacfwd's tangents are batched)
            with _off():  # (a rule may leave a broadcast operand's tangent unexpanded)
                result = result.expand(o.shape)
        if result is not None:
            _set(o, result)
            registry[_edge_key(o)] = result
            _save_dual_output(node, o)


def _save_dual_output(node, o):
    """A node that saved its own output (tanh, exp, softmax) keeps the output tensor itself
    from now on, tangent included, so that a derivative computed while the level is open (a
    jacfwd of a jacrev) carries the output's tangent."""
    saved = node._saved
    if not saved or node._saved_versions is None:
        return
    replaced = tuple(o if type(s) is SavedOutput and s.data is o._data and s.output_nr == o._output_nr else s
                     for s in saved)
    if any(a is not b for a, b in zip(replaced, saved)):
        node._saved = replaced


def _forget(out, temp, start, truly, recorded=False):
    """Drop the recording made only for the tangents (see the design note)."""
    outs = [o for o in _outputs(out) if o._grad_fn is not None and o._grad_fn._seq >= start]
    if recorded and temp:  # (the tangents' history: no edge to the inputs marked for the call)
        _cut_edges([o._fw_grad._grad_fn for o in _outputs(out) if o._fw_grad is not None
                    and o._fw_grad._grad_fn is not None and o._fw_grad._grad_fn._seq >= start], temp, start)
    if not truly:
        for o in outs:
            base = o._base
            if base is not None and base._grad_fn is not None and base._grad_fn._seq >= start:
                # a view of an intermediate (F.linear of a vector: addmm, then a view): the base
                # forgets too, else the view would require grad as its base does, without an
                # accumulator of its own, and the next op could not find its tangent
                base._grad_fn = None
                base._requires_grad = False
                base._output_nr = 0
            o._grad_fn = None
            o._requires_grad = False
            o._output_nr = 0
        return
    if not temp:
        return
    _cut_edges([o._grad_fn for o in outs], temp, start)


def _cut_edges(nodes, temp, start):
    """Cut the edges from the graph above ``nodes`` (those recorded since ``start``) to the
    accumulators of ``temp``."""
    temp_ids = {id(t) for t in temp}
    seen = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        edges = node.next_functions
        if any(type(n) is AccumulateGrad and id(n.variable) in temp_ids for n, _ in edges if n is not None):
            node.next_functions = tuple((None, 0) if type(n) is AccumulateGrad and id(n.variable) in temp_ids
                                        else (n, nr) for n, nr in edges)
        stack.extend(n for n, _ in node.next_functions
                     if n is not None and type(n) is not AccumulateGrad and n._seq >= start)


# ---- in-place ops ----------------------------------------------------------------------------

def _run_inplace(fn, name, args, kwargs):
    self = args[0]
    if name == '__setitem__':
        index, value = args[1], args[2]
        with _off():
            fn(*args, **kwargs)
            vt = value._fw_grad if isinstance(value, Tensor) else None
            tangent = _tangent_for_update(self, like=vt)
            if tangent is not None:
                tangent[index] = 0.0 if vt is None else vt
        return None
    if name in _RESHAPING and type(self._fw_grad) in (Tensor, type(None)):  # (a batched tangent: not here)
        with _off():
            fn(*args, **kwargs)
            tangent = _tangent_for_update(self, force=False)
            if tangent is not None:
                getattr(tangent, name)(*args[1:], **kwargs)
        return self
    if name in _OVERWRITING:
        with _off():
            fn(*args, **kwargs)
            tangent = _tangent_for_update(self)
            if tangent is not None:
                tangent.zero_()
        return self
    if name == 'copy_':
        src = args[1] if len(args) > 1 else kwargs['src']
        with _off():
            fn(*args, **kwargs)
            st = src._fw_grad if isinstance(src, Tensor) else None
            tangent = _tangent_for_update(self, force=st is not None, like=st)
            if tangent is not None:
                if st is None:
                    tangent.zero_()
                else:
                    tangent.copy_(st)
        return self
    plain = _INPLACE_DUNDERS.get(name) or name[:-1]
    out_of_place = getattr(Tensor, plain, None)
    if out_of_place is None:
        raise NotImplementedError(f'Trying to use forward AD with {name} that does not support it because it has not '
                                  'been implemented yet.')
    result = out_of_place(*args, **kwargs)  # (a wrapper: gives the tangent)
    with _off():
        out = fn(*args, **kwargs)
        new = result._fw_grad
        tangent = _tangent_for_update(self, force=new is not None, like=new)
        if tangent is not None:
            if new is None:
                tangent.zero_()
            else:
                tangent.copy_(new)
    return out


def _tangent_for_update(t, force=True, like=None):
    """The tangent of ``t`` to write into in place: its own; for a view without one, the view
    of its base's tangent (made zero first); else a new zero tangent. None when ``t`` has none
    and none is needed (``force`` False). ``like``: the tangent to be written, whose vmap levels
    a new zero tangent takes (a batched tangent written into a tensor without one: the
    copies of circular padding under jacfwd, or a jvp with batched tangents)."""
    if t._fw_grad is not None:
        return t._fw_grad
    if not force:
        return None
    if t._base is not None and t._view_of is not None:
        chain = []
        v = t
        while v._base is not None and v._view_of is not None and v._fw_grad is None:
            chain.append(v._view_of[1])
            v = v._view_of[0]
        if v._fw_grad is None:
            _set(v, _zero_tangent(v, like))
        tangent = v._fw_grad
        for make in reversed(chain):
            tangent = make(tangent)
        _set(t, tangent)
        return tangent
    _set(t, _zero_tangent(t, like))
    return t._fw_grad


def _zero_tangent(t, like):
    vmap = sys.modules.get('leafgrad._vmap')  # (batched only once vmap is loaded; forward AD does not load it)
    if like is not None and vmap is not None and vmap.is_batched(like):
        return vmap.zeros_with_levels(t, like)
    return zeros_like(t)
