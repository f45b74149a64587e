"""The backward walk.

Design note. Given root edges and their gradients, the engine

1. counts, for every node reachable from the roots, how many edges point at it (an
   iterative walk, so a 100,000-node chain needs no recursion);
2. keeps one input buffer per node (one slot per output of the node) where the gradients
   arriving along different edges are summed (in place into the first, when the walk alone
   holds it: ``graph.unshared``); a node is *ready* when all its counted edges
   have delivered. Ready nodes run newest first (highest sequence number, as PyTorch orders
   them); AccumulateGrad nodes run as soon as they are ready;
3. runs each ready node, in this order of hooks (as PyTorch documents):
   a. tensor hooks registered with ``register_hook`` on that output, in registration order,
      each able to replace the gradient;
   b. ``retain_grad``: the gradient, as the hooks left it, is added to the tensor's ``.grad``;
   c. node pre-hooks (``grad_fn.register_prehook``);
   d. the node's derivative (``apply``), then, unless ``retain_graph``, the release of what it
      saved;
   e. node post-hooks (``grad_fn.register_hook``);
   and routes each input gradient to the next node's buffer;
4. drops each buffer the moment its node has consumed it, so an intermediate gradient lives
   only until the op below it has used it.

With ``create_graph=True`` the walk runs with grad mode on, so the derivatives (written with
leafgrad's ops) are themselves recorded. When ``inputs`` are given, only nodes that lead to
one of them run, and the gradients arriving at them are captured (``autograd.grad``) or
accumulated (``backward(inputs=...)``).

Callbacks queued with ``queue_callback`` while a walk runs (DistributedDataParallel's: wait
for the last gradient all-reduce) run once the outermost walk of the thread has finished.

Threads, as PyTorch promises them: a walk keeps its state (counts, buffers, ready queue) to
itself, so backward and ``autograd.grad`` run in several threads at once, on separate graphs
or through a shared one (which needs ``retain_graph=True``: the first walk to finish frees its
saved tensors, as in PyTorch). What walks share is guarded: a leaf's ``.grad`` is updated under
its AccumulateGrad's lock, a retained non-leaf ``.grad`` under one lock, a leaf gets one
AccumulateGrad however many threads record ops on it, and hook tables are made under a lock.
Grad mode and inference mode are per thread (a new thread starts recording); anomaly mode is
one for the process (``anomaly.py``). Hooks run in the thread that runs the walk, unguarded,
as in PyTorch. Not guarded: in-place changes of one tensor from two threads (a data race on
its memory, as in NumPy); its version counter's ``+= 1`` on a list item runs without a
thread switch in CPython with its GIL (no call between the read and the write), so no bump
is lost.
"""
from __future__ import annotations  # (annotations stay strings: nothing evaluated at import or per call)

import _thread  # (threading's Lock is _thread's: importing threading costs ~0.8 ms)
import itertools
import sys as _sys
import warnings
from typing import Callable, Sequence, Union

from _heapq import heappop, heappush  # (heapq's own: heapq.py itself adds ~0.3 ms to the import)

from . import grad_mode
from .anomaly import anomaly_state, check_nan, warn_forward_trace
from . import graph as _graph
from .graph import AccumulateGrad, Node, gradient_edge, unshared
# (the walks running in this thread, which this module starts and ends; graph.py keeps them, for
# register_multi_grad_hook, and answers the two questions about them that PyTorch asks of its engine)
from .graph import _callbacks, current_graph_task_id, will_engine_execute_node  # noqa: F401
from . import origins
from .. import backend
from ..backend import numpy as _np

# Set by the profiler while it records (autograd/_instrument.py): called as
# profile_node(node, grads, apply) for each node instead of applying it directly.
profile_node = None


def _count_dependencies(roots):
    """{node: number of edges into it} over the graph reachable from ``roots``.

    A node is walked from when its first incoming edge is counted (its count is then new),
    so the counts double as the visited set; roots start on the stack."""
    deps = {}
    roots = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is not None:
                count = deps.get(nxt)
                if count is None:
                    deps[nxt] = 1
                    if nxt not in roots:
                        stack.append(nxt)
                else:
                    deps[nxt] = count + 1
    return deps, roots


def _nodes_leading_to(targets, nodes):
    """The nodes from which an edge path reaches a target node (targets included)."""
    leads = {}
    for start in nodes:
        if start in leads:
            continue
        # Iterative post-order: a node is decided once all of its successors are.
        stack = [(start, iter(start.next_functions))]
        leads[start] = start in targets
        while stack:
            node, it = stack[-1]
            for nxt, _ in it:
                if nxt is None:
                    continue
                if nxt not in leads:
                    leads[nxt] = nxt in targets
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
                if leads[nxt]:
                    leads[node] = True
            else:
                stack.pop()
                if stack and leads[node]:
                    leads[stack[-1][0]] = True
    return {node for node, ok in leads.items() if ok}


_walk_ids = itertools.count()


def walk_keeps_graph() -> bool:
    """Whether the innermost backward walk running in this thread keeps the graph
    (``retain_graph``); True outside a walk."""
    walks = _callbacks.walks
    return walks[-1][5] if walks else True


def queue_callback(callback: Callable[[], None]) -> None:
    """Run ``callback()`` when the backward walk now running (the outermost one, if a walk runs
    inside another) has finished, as PyTorch's ``Variable._execution_engine.queue_callback``."""
    if _callbacks.pending is None:
        raise RuntimeError('Final callbacks can only be installed during backward pass.')
    _callbacks.pending.append(callback)


def run_backward(root_edges, root_grads, keep_graph, create_graph, input_edges=None, capture=False):
    """Walk the graph from ``root_edges`` seeded with ``root_grads``.

    ``input_edges``: restrict the walk to what reaches these edges. With ``capture`` the
    gradients arriving there are returned (one per edge, None where none arrived) instead of
    being accumulated.
    """
    origins.walks += 1  # lets leafgrad.explain tell "no backward yet" from "never reached"
    roots = [node for node, _ in root_edges]
    deps, root_nodes = _count_dependencies(roots)

    targets = None
    runnable = None
    captured = None
    if input_edges is not None:
        targets = {}
        for pos, (node, nr) in enumerate(input_edges):
            if node is not None:
                targets.setdefault(node, []).append((nr, pos))
        runnable = _nodes_leading_to(targets, root_nodes | deps.keys())
        captured = [None] * len(input_edges)

    buffers = {}
    for (node, nr), grad in zip(root_edges, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad

    order = itertools.count()
    ready = []
    for node in buffers:
        if deps.get(node, 0) == 0 and (runnable is None or node in runnable):
            heappush(ready, (-node._seq, next(order), node))

    # Anomaly detection and the profiler take the watched path; read once per walk, so the
    # plain loop pays nothing per node for either.
    # A walk under vmap (_vmap.grad_through: batched gradients through the graph) also takes it.
    vmap = _sys.modules.get('leafgrad._vmap')
    if vmap is not None and not vmap.active():
        vmap = None
    watched = anomaly_state.enabled or profile_node is not None or vmap is not None
    # Leaves whose gradient is complete run at once, after the node that completed them (a
    # leaf's AccumulateGrad is first in line: it would be popped next), without the heap and
    # the checks of a node with hooks, when nothing watches the walk and it ends at the leaves.
    leaves = [] if targets is None and not watched else None
    # `pending` is a node that became ready while no other was: it would be popped next
    # anyway, so it skips the heap (the common case in a chain of ops).
    pending = None
    # grad mode for the derivatives, restored however the walk ends (a context manager's
    # three calls, without them). A batched walk runs them with grad mode on, so that they take
    # their ops (which batch) rather than the shortcuts on raw arrays that a plain walk takes;
    # what they record is dropped with their results unless create_graph.
    prev_grad_mode = grad_mode.state.grad_enabled
    grad_mode.state.grad_enabled = (bool(create_graph) or vmap is not None) and not grad_mode.state.inference
    outermost = _callbacks.pending is None
    if outermost:
        _callbacks.pending = []
    walks = _callbacks.walks
    if walks is None:
        walks = _callbacks.walks = []
    walks.append((next(_walk_ids), deps, root_nodes, runnable, capture, keep_graph))
    try:
        while True:
            if pending is not None:
                node, pending = pending, None
            elif ready:
                node = heappop(ready)[2]
            else:
                break
            grads = buffers.pop(node, None) or [None] * node.num_outputs  # none arrived: all None
            # (_hooked: also set on a node with a _grad_dtype or _inert, so that the plain
            # node costs the walk one attribute read for the three)
            hooked = node._hooked
            if hooked and node._grad_dtype is not None and grads[0] is not None \
                    and grads[0]._data.dtype != node._grad_dtype:
                grads[0] = _to_dtype(grads[0], node._grad_dtype)

            if targets is not None and node in targets:
                # autograd.grad takes an input's gradient before its tensors' hooks where the walk goes
                # on through the input's node (they run with it), after them where the walk ends there,
                # as PyTorch's engine captures
                ends = capture and not any(nxt in runnable for nxt, _ in node.next_functions if nxt is not None)
                if hooked and (ends or not capture):
                    _run_tensor_hooks_and_retain(node, grads)
                for nr, pos in targets[node]:
                    captured[pos] = grads[nr]
                if ends:
                    continue
                if hooked and capture:
                    _run_tensor_hooks_and_retain(node, grads)
            elif hooked:
                _run_tensor_hooks_and_retain(node, grads)

            if hooked and node._pre_hooks is not None:
                for hook in tuple(node._pre_hooks.values()):
                    new = hook(tuple(grads))
                    if new is not None:
                        grads = _checked_all(hook, grads, new)

            # the gradients a post-hook will read, held here so that no derivative takes their
            # buffers for its result (a derivative reuses a buffer that only the walk holds)
            seen = tuple(grads) if hooked and node._post_hooks is not None else None
            grad = grads[0] if len(grads) == 1 else _any_grad(grads)
            if hooked and node._inert or grad is None and not node._runs_without_grads:
                # Nothing can leave (Node._inert), or nothing arrived (every consumer's gradient
                # was None) at a derivative that then gives None: pass None along. PyTorch's
                # derivative unpacks what it saved before it asks which inputs need a gradient:
                # the checks of a saved tensor changed in place still raise, and so does its
                # unpack once a first walk has freed it (``_saved`` None).
                if node._inert and node._saved != ():
                    node.saved_tensors
                outs = (None,) * len(node.next_functions)
            elif watched:
                outs = _apply_watched(node, grads, vmap)
            elif len(grads) == 1:
                outs = node.apply(grad)  # (a star-call would build an argument tuple first)
            else:
                outs = node.apply(*grads)
            if not keep_graph:
                node.release()
            if hooked and node._input_dtypes is not None:
                outs = _cast_to_inputs(node, outs)

            if seen is not None:
                for hook in tuple(node._post_hooks.values()):
                    new = hook(tuple(outs), seen)
                    if new is not None:
                        outs = tuple(_checked_all(hook, outs, new))

            i = -1
            for nxt, nr in node.next_functions:  # (indexing outs costs less than a zip)
                i += 1
                if nxt is None:
                    continue
                grad = outs[i]
                if grad is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt.num_outputs
                    old = buf[nr]
                    if old is None:
                        buf[nr] = grad
                    elif create_graph or not _sum_in_place(old, grad):
                        buf[nr] = old + grad
                count = deps[nxt] - 1
                deps[nxt] = count
                if count:
                    continue
                if runnable is not None and nxt not in runnable:
                    buffers.pop(nxt, None)
                    continue
                if leaves is not None and type(nxt) is AccumulateGrad:
                    leaves.append(nxt)
                    continue
                if pending is None and not ready:
                    pending = nxt
                else:
                    if pending is not None:
                        heappush(ready, (-pending._seq, next(order), pending))
                        pending = None
                    heappush(ready, (-nxt._seq, next(order), nxt))
            # Drop this step's references, so that a buffer consumed here can be freed (or
            # taken by AccumulateGrad without a copy) as soon as its last consumer has run.
            grads = outs = grad = old = None
            if leaves:
                pending = _accumulate_leaves(leaves, buffers, ready, order, pending)
    finally:
        walks.pop()
        grad_mode.state.grad_enabled = prev_grad_mode
        if outermost:
            callbacks, _callbacks.pending = _callbacks.pending, None
    if outermost and callbacks:
        for callback in callbacks:
            callback()
    return captured


def _accumulate_leaves(leaves, buffers, ready, order, pending):
    """Run the AccumulateGrad nodes in ``leaves`` (ready, in the order they became ready) as
    the walk would have run them next; from the first one with a hook (which the walk's general
    step runs), the rest go onto the heap in that order. Returns the walk's ``pending``."""
    for i, node in enumerate(leaves):
        meta = node.variable._meta
        if (node._tensor_pre_hooks is not None or node._retained is not None or node._pre_hooks is not None
                or node._post_hooks is not None or node._grad_dtype is not None
                or (meta is not None and meta.hooks)):
            if pending is not None:
                heappush(ready, (-pending._seq, next(order), pending))
                pending = None
            for rest in leaves[i:]:
                heappush(ready, (-rest._seq, next(order), rest))
            break
        buf = buffers.pop(node, None)
        if buf is not None:
            grad = buf[0]
            if grad is not None:
                # (held by buf and grad, and apply's parameter: as the walk's general step holds
                # it, which AccumulateGrad counts to take the buffer without a copy)
                node.apply(grad)
            buf = grad = None
    leaves.clear()
    return pending


def _cast_to_inputs(node, outs):
    """A mixed-dtype node's gradients, each in its input's dtype (Node._input_dtypes), as
    PyTorch's validate_outputs casts them before the post-hooks see them."""
    cast = None
    for i, d in enumerate(node._input_dtypes):
        g = outs[i] if d is not None else None
        data = getattr(g, '_data', None)
        if data is not None and data.dtype != d and (data.dtype.kind != 'c' or d.kind == 'c'):
            if cast is None:
                cast = list(outs)
            cast[i] = _to_dtype(g, d)
    return outs if cast is None else tuple(cast)


def _to_dtype(grad, np_dtype):
    return grad.to(backend.from_np(np_dtype))


def _sum_in_place(old, grad):
    """``old += grad`` when the walk alone holds ``old`` (its buffer slot, the loop's local and
    this function's parameter) and the sum keeps its shape and dtype: one allocation less per
    summed gradient."""
    # (no local name for old's array: unshared counts the references to it)
    if old._data.shape != grad._data.shape or old._data.dtype != grad._data.dtype or not unshared(old, 3):
        return False
    if type(old) is not _graph._tensor.Tensor or type(grad) is not _graph._tensor.Tensor:  # (batched: the sum's rule aligns)
        return False
    old._accumulate_(grad)
    return True


def _any_grad(grads):
    """A gradient that arrived (any one), or None."""
    for g in grads:
        if g is not None:
            return g
    return None


def _run_tensor_hooks_and_retain(node, grads):
    """Steps a and b: the hooks of the tensors ``node`` produced (or of its leaf), then
    ``retain_grad``."""
    if node._tensor_pre_hooks is not None:
        _run_tensor_hooks(node._tensor_pre_hooks, grads)
    if type(node) is AccumulateGrad:
        meta = node.variable._meta
        if meta is not None and meta.hooks:
            _run_tensor_hooks({0: meta.hooks}, grads)
    if node._retained is not None:
        _retain(node._retained, grads)




def _checked(hook, old, new):
    """A hook's replacement for the gradient ``old``, refused as PyTorch refuses it when it
    changes the gradient's shape or dtype."""
    if old is None or new is None:
        return new
    if not isinstance(new, _graph._tensor.Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    name = getattr(hook, '__name__', type(hook).__name__)
    if new._data.shape != old._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if new._data.dtype != old._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_graph._tensor.legacy_type_name(old._data)} "
                           f"got {_graph._tensor.legacy_type_name(new._data)})")
    return new


def _checked_all(hook, old, new):
    new = list(new)
    if len(new) != len(old):
        name = getattr(hook, '__name__', type(hook).__name__)
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got {len(new)}, but "
                           f"expected {len(old)})")
    return [_checked(hook, o, n) for o, n in zip(old, new)]


def _run_tensor_hooks(hooks_by_output, grads):
    for nr, hooks in hooks_by_output.items():
        if grads[nr] is None or not hooks:
            continue
        for hook in tuple(hooks.values()):
            new = hook(grads[nr])
            if new is not None:
                grads[nr] = _checked(hook, grads[nr], new)


def _retain(retained, grads):
    for nr, ref in tuple(retained.items()):
        tensor = ref()
        grad = grads[nr]
        if tensor is None or grad is None:
            continue
        if grad._data.dtype != tensor._data.dtype:
            grad = grad.to(tensor.dtype)
        add_to_nonleaf_grad(tensor, grad, copy=True)


def add_to_nonleaf_grad(tensor, grad, copy):
    """``tensor.grad += grad`` (out of place) for a non-leaf's retained gradient, under one
    lock: walks in several threads through a shared graph (``retain_graph=True``) may deliver
    to the same tensor at once."""
    with _nonleaf_grad_lock:
        if tensor._grad is None:
            if not copy:
                tensor._grad = grad.detach()
            else:
                tensor._grad = grad.clone() if grad_mode.state.grad_enabled else grad.detach()._owned_copy()
            if grad_mode.state.inference:  # made in inference mode: an inference tensor, as PyTorch's
                tensor._grad._version_counter = grad_mode.InferenceCounter((0,))
        else:
            tensor._grad = tensor._grad + grad


_nonleaf_grad_lock = _thread.allocate_lock()


def _apply_watched(node, grads, vmap=None):
    """A node's derivative under anomaly detection, a profiler or vmap (batched gradients)."""
    apply = _apply_with_anomaly if anomaly_state.enabled else _apply
    if vmap is not None:
        unbatched = apply

        def apply(node, grads):
            return vmap.apply_node(node, grads, unbatched)
    hook = profile_node
    return apply(node, grads) if hook is None else hook(node, grads, apply)


def _apply(node, grads):
    # as the plain loop calls it: a star-call's tuple would be one more reference to the
    # gradient, and AccumulateGrad would copy a buffer it could have kept
    return node.apply(grads[0]) if len(grads) == 1 else node.apply(*grads)


def _apply_with_anomaly(node, grads):
    try:
        outs = node.apply(*grads)
        check_nan(node, outs)
    except Exception:
        warn_forward_trace(node)
        raise
    return outs


# ---- the entry point: backward() -------------------------------------------------------------

# ('Tensor': leafgrad.tensor's, a forward reference never evaluated here, since leafgrad.tensor
# imports this module, not the other way round)
_Tensors = Union['Tensor', Sequence['Tensor']]
_MaybeTensors = Union['Tensor', Sequence[Union['Tensor', None]], None]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _graph._tensor.Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads, is_grads_batched=False):
    """Check user-given output gradients, or create ones for scalar outputs."""
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out._requires_grad:
                if out._data.size != 1:
                    raise RuntimeError('grad can be implicitly created only for scalar outputs')
                if out._data.dtype.kind not in 'fV':
                    raise RuntimeError('grad can be implicitly created only for real scalar outputs '
                                       f'but got {out.dtype}')
                d = out._data
                # (a 0-d float loss, the common root: the array constructor, a fifth of ones_like's cost)
                g = _graph._tensor.Tensor._wrap(_np.array(1, d.dtype) if type(d) is _np.ndarray and not d.ndim
                                                and d.dtype.kind == 'f' else _np.ones_like(d))
            result.append(g)
            continue
        if not isinstance(g, _graph._tensor.Tensor):
            raise TypeError(f'gradients can be either Tensors or None, but got {type(g).__name__}')
        if g._data.shape != out._data.shape if type(g) is type(out) is _graph._tensor.Tensor else g.shape != out.shape:
            raise RuntimeError(f'Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and '
                               f'output[{i}] has a shape of {out.shape}.')
        if g._data.dtype.kind != out._data.dtype.kind:
            raise TypeError(f'For output at index {i}: expected grad_output of dtype {out.dtype} '
                            f'but got {g.dtype}')
        result.append(g)
    return result


def _root_edges(tensors):
    edges = []
    for i, t in enumerate(tensors):
        edge = gradient_edge(t) if t._requires_grad else (None, 0)
        if edge[0] is None:  # (also a view made under no_grad: it has no accumulator of its own)
            raise RuntimeError(f'element {i} of tensors does not require grad and does not have a grad_fn')
        edges.append(edge)
    return edges


_warned_create_graph = False


def _warn_create_graph():
    """PyTorch's warning, once a process, for backward() (not grad()) with create_graph=True."""
    global _warned_create_graph
    _warned_create_graph = True
    warnings.warn('Using backward() with create_graph=True will create a reference cycle between the parameter and '
                  'its gradient which can cause a memory leak. We recommend using autograd.grad when creating the '
                  'graph to avoid this. If you have to use this function, make sure to reset the .grad fields of your '
                  'parameters to None after use to break the cycle and avoid the leak.', UserWarning, stacklevel=3)


def backward(tensors: _Tensors, grad_tensors: _MaybeTensors = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: _MaybeTensors = None,
             inputs: _Tensors | None = None) -> None:
    """Accumulate into ``.grad`` of the leaves the gradient of ``tensors`` (sum over them).

    Parameters
    ----------
    tensors
        The roots: tensors whose gradient is computed (a scalar loss, usually).
    grad_tensors
        The gradient with respect to each root (``None`` for a scalar root: 1).
    retain_graph
        Keep what the graph saved, so that another backward can run through it (default:
        ``create_graph``).
    create_graph
        Record the backward pass itself, for derivatives of higher order.
    grad_variables
        The old name of ``grad_tensors``.
    inputs
        Accumulate only into these tensors (leaves, or non-leaves, whose ``.grad`` is then
        set as ``retain_grad`` would set it).
    """
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f'got {len(grad_tensors)} tensors and {len(tensors)} gradients')
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError('`inputs` argument to `backward()` cannot be empty.')
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(tensors)
    grads = _make_grads(tensors, grad_tensors)
    if create_graph and not _warned_create_graph:
        _warn_create_graph()
    input_edges = None
    if inputs is not None:
        input_edges = []
        for t in inputs:
            if not t._requires_grad:  # (PyTorch's backward retains the inputs' gradients: that refusal)
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            input_edges.append(gradient_edge(t))
    captured = run_backward(edges, grads, retain_graph, create_graph, input_edges)
    if inputs is not None:
        # Leaves accumulated through their AccumulateGrad; a non-leaf input gets its
        # gradient in .grad as retain_grad would give it.
        for t, g in zip(inputs, captured):
            if t._grad_fn is not None and g is not None:
                add_to_nonleaf_grad(t, g, copy=False)
