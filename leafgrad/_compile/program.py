"""The replayable program made from a trace: a generated forward and backward on arrays.

Design note. A trace (``trace.Tracer``) is a list of calls on numbered *slots*. ``build``
turns it into two straight-line Python functions, generated as source and compiled once:

* ``forward(v0, v1, ...)``: the arrays of the inputs and captured tensors in, the arrays of
  the outputs out (and, when a gradient is needed, a tuple of what the backward reads: only
  the arrays its derivatives use, as eager nodes save only those). Each call becomes the
  NumPy expression of its rule (``rules.py``), the same kernels in the same order as the eager
  op, so the values are bit-identical; an array nobody reads later is deleted where it is
  last used, so that it is freed when eager would free it.
* ``backward(saved, grads)``: the gradients of the outputs in, those of the inputs and
  captured tensors that require grad out. Calls run in reverse order (the order eager's
  engine runs their nodes: newest first) and gradients arriving at one slot are summed in the
  order eager sums them.

A call without a rule is an *island*: replayed by calling the op itself on tensors around the
arrays (an eager graph confined to that op, differentiated by the engine in the backward).
That keeps every op replayable (convolutions, losses, dropout drawing from the generator in
eager's order, batch norm updating its running statistics) at eager's cost for that op.

The compiled region appears to autograd as one node, ``CompiledFunctionBackward`` (PyTorch's
name), whose edges lead to the inputs and captured tensors that require grad: gradients
accumulate into the real parameters' ``.grad``, their hooks fire, and ``retain_graph`` keeps
what the node saved, as for any node.

A program runs on one device, its inputs' and captured tensors' (part of the signature that
guards it): the generated code calls NumPy's names through ``xp``, which is NumPy itself for a
CPU program and ``backend.DeviceDispatch`` (CuPy for a GPU's arrays) for a GPU one, and the
arrays it binds as constants (a 0-d number, the zeros of a missing gradient) are made on that
device when it is generated.
"""
import sys

import numpy

from .. import backend
from ..ops import _util
from ..autograd import grad_mode
from ..autograd.engine import run_backward, walk_keeps_graph
from ..autograd.graph import Node, gradient_edge, grad_accumulator, _FREED
from ..tensor import Tensor
from .trace import Ref, reads_guard

_state = grad_mode.state
_wrap = Tensor._wrap
_ndarray = numpy.ndarray
_run_backward_code = run_backward.__code__
_getframe = sys._getframe


class Gen:
    """Emits the lines of one generated function; ``names`` binds the constants they use.
    ``device``: the program's GPU (None: the CPU), where constant arrays are put."""

    def __init__(self, names, device=None):
        self.lines = []      # (text, names read)
        self.names = names
        self.device = device
        self.reads = {}      # name -> lines emitted so far that read it
        self.fresh = {}      # name -> its reads when it became fresh (see mark_fresh)

    def const(self, value, hint='k'):
        if callable(value):  # a function is bound once, under one name
            for name, v in self.names.items():
                if v is value:
                    return name
        if self.device is not None:
            value = _on_device(value, self.device)
        name = f'_{hint}{len(self.names)}'
        self.names[name] = value
        return name

    def emit(self, text, reads=(), consuming=None):
        """A line reading ``reads``; ``consuming=(name, text2)``: text2 instead where this line
        is the last to read ``name`` (a derivative may then reuse that gradient's buffer). Or a
        list of such options, the first that applies taken; an option ``(name, text2, True)``
        applies only where ``name`` is fresh (``mark_fresh``) and this line is the one line
        besides its own making that reads it."""
        reads = set(reads)
        for r in reads:
            self.reads[r] = self.reads.get(r, 0) + 1
        self.lines.append((text, reads, consuming))

    def mark_fresh(self, name):
        """``name`` now holds an array that the lines so far made and nothing else holds (a
        ufunc's or a product's new result, not a view): a later line that is its only other
        reader may write into it."""
        self.fresh[name] = self.reads.get(name, 0)


def _on_device(value, device):
    """``value`` with the NumPy arrays in it (itself, or the items of a list or tuple) copied to
    ``device``; NumPy's scalars stay: CuPy takes them as numbers."""
    if type(value) is numpy.ndarray:
        return backend.to_device(value, device)
    if type(value) in (list, tuple) and any(type(v) is numpy.ndarray for v in value):
        return type(value)(_on_device(v, device) for v in value)
    return value


def _program_device(tracer):
    """The GPU that the traced call's tensors live on (None: the CPU; the tracer refuses a call
    whose tensors are on more than one device)."""
    for t in tracer.keep:
        if type(t._data) is not numpy.ndarray and backend.on_gpu(t._data):
            return backend.device_of(t._data)
    return None


def _where(array):
    """(the array's type, its GPU or None), as ``_captured_unchanged`` compares them."""
    return (type(array), backend.device_of(array) if backend.on_gpu(array) else None)


def _zeros_on(device):
    """``zeros(shape, dtype)`` on ``device`` (None: the CPU's numpy.zeros)."""
    if device is None:
        return numpy.zeros
    cp = backend.module_for(device)

    def zeros(shape, dtype):
        with cp.cuda.Device(device.index or 0):
            return cp.zeros(shape, dtype)
    return zeros


def _v(slot):
    return f'v{slot}'


def _g(slot):
    return f'g{slot}'


class Island:
    """A call replayed through the op itself (see the module's design note)."""

    def __init__(self, call, tracer, zeros):
        self.fn = call.fn
        self.zeros = zeros  # the program's zeros(shape, dtype), on its device
        self.name = call.name
        self.args, self.kwargs = call.args, call.kwargs
        self.grad_mode = call.grad_mode
        self.ins = call.ins
        meta = tracer.meta
        # (requires_grad as traced, under no_grad too: an op may choose its kernel by it, as the
        # matrix product of a vector and a batch does)
        self.rg = [meta[s][2] for s in call.ins]
        # a captured tensor that needs no gradient is passed itself (an op may update it in
        # place: batch norm's running statistics); everything else as a tensor around the array
        self.real = [tracer.captured.get(s) if not meta[s][2] else None for s in call.ins]
        # a captured tensor that needs a gradient is passed as a new leaf around its array, which
        # counts the captured tensor's versions: a node of the op that saved it then finds an
        # in-place change made before the backward, as eager's does (with eager's error)
        self.counters = [tracer.captured[s]._version_counter if meta[s][2] and s in tracer.captured else None
                         for s in call.ins]
        self.differentiable = any(meta[s][2] for s in call.outs)
        # An in-place op under autograd on an intermediate (``nn.ReLU(inplace=True)``): given a
        # copy (a leaf made here cannot be changed in place under autograd, and the input slot's
        # array stays as traced), whose gradient is the op's, as eager's
        self.copied = set(call.mutated) if call.grad_mode else ()

    def forward(self, *arrays):
        tensors = []
        made = {}  # slot -> the tensor made for it: one tensor passed twice is one object, as traced
        for i, a in enumerate(arrays):  # (MultiheadAttention's self-attention tests `query is key`)
            real = self.real[i]
            if real is None:
                real = made.get(self.ins[i])
                if real is None:
                    real = made[self.ins[i]] = _wrap(a, self.rg[i])
                    if self.counters[i] is not None:
                        real._version_counter = self.counters[i]
            tensors.append(real)
        prev = _state.grad_enabled
        _state.grad_enabled = self.grad_mode
        try:
            if self.copied:
                copies = {}  # (one copy of a tensor passed twice: x.add_(x))
                passed = list(tensors)
                for i in self.copied:
                    t = tensors[i]
                    if id(t) not in copies:
                        copies[id(t)] = t.clone()
                    passed[i] = copies[id(t)]
            else:
                passed = tensors
            it = iter(passed)
            args = _fill(self.args, it)
            kwargs = _fill(self.kwargs, it)
            out = self.fn(*args, **kwargs)
        finally:
            _state.grad_enabled = prev
        outs = list(_flat_tensors(out))
        arrays_out = [o._data for o in outs]
        if not self.differentiable:
            return arrays_out, None
        # Kept for the backward: the edges only, not the output tensors (eager frees an output
        # that no node saved as soon as its consumers have run)
        out_edges = [(o._grad_fn, o._output_nr) if o._grad_fn is not None else None for o in outs]
        leaves, seen = [], set()
        for t, rg in zip(tensors, self.rg):
            if rg:  # (a tensor passed again takes its whole gradient at its first place: zeros after)
                leaves.append((gradient_edge(t), t._data.shape, t._data.dtype, id(t) in seen))
                seen.add(id(t))
        return arrays_out, (out_edges, leaves)

    def backward(self, state, grads, seeds=None):
        """The gradients of the op's inputs that require grad, from its outputs' ``grads``.
        ``seeds``: per such input, None or the gradient its slot already took from later calls,
        where the walk starts that input's sum (the result then includes it)."""
        out_edges, leaves = state
        edges, roots = [], []
        for e, g in zip(out_edges, grads):
            if g is not None and e is not None:
                edges.append(e)
                roots.append(_wrap(_as_array(g)))
        if seeds is not None:
            for (edge, _, _, _), seed in zip(leaves, seeds):
                if seed is not None:
                    edges.append(edge)
                    roots.append(_wrap(_as_array(seed)))
        zeros = self.zeros
        if not edges:
            return [zeros(shape, dtype) for _, shape, dtype, _ in leaves]
        got = run_backward(edges, roots, True, False, [leaf[0] for leaf in leaves], capture=True)
        return [c._data if c is not None and not again else zeros(shape, dtype)
                for c, (_, shape, dtype, again) in zip(got, leaves)]


def _as_array(a):
    return a if type(a) is _ndarray else _util.xp.asarray(a)


def _fill(template, it):
    if type(template) is Ref:
        return next(it)
    t = type(template)
    if t is list or t is tuple:
        return t([_fill(v, it) for v in template])
    if t is dict:
        return {k: _fill(v, it) for k, v in template.items()}
    return template


def _flat_tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat_tensors(v)


class Program:
    """The generated forward and backward of one traced signature."""

    def __init__(self, tracer, out_template, out_slots, rules):
        self.tracer_meta = tracer.meta
        self.n_ops = len(tracer.calls)
        self.out_template = out_template
        self.out_slots = out_slots
        kinds = tracer.kind
        self.input_slots = [s for s, k in enumerate(kinds) if k == 'input']
        self.captured_slots = sorted(tracer.captured)
        self.captured = [tracer.captured[s] for s in self.captured_slots]
        # (shape, dtype, requires_grad, the array's type and a GPU's device: a model moved to
        # another device after tracing is traced again)
        self.captured_meta = [tracer.meta[s] + _where(tracer.captured[s]._data) for s in self.captured_slots]
        # True while every captured tensor is where the function reached it and every Python
        # value it can read is unchanged (None: nothing to test)
        self.reads_unchanged = reads_guard(self.captured, tracer.paths, tracer.values)
        self.n_values = len(tracer.values)
        params = self.input_slots + self.captured_slots
        meta = tracer.meta
        self.grad_slots = [s for s in params if meta[s][2]]
        self.n_inputs = len(self.input_slots)
        self.grad_params = [i for i, s in enumerate(params) if meta[s][2]]  # their edges, in this order
        self.out_requires_grad = [meta[s][2] for s in out_slots]
        self.differentiable = any(meta[s][2] for s in out_slots)
        self.islands = 0
        self.array_ops = 0
        # (__name__: NumPy's floating-point warnings from the generated code are silenced as from
        # any leafgrad module, by backend's filter, which matches the calling module's name)
        self.device = device = _program_device(tracer)
        zeros = _zeros_on(device)
        # (xp: a GPU program's is the dispatching module, read when it is built: the GPU's use
        # has installed it by then)
        names = {'xp': numpy if device is None else _util.xp, '__name__': 'leafgrad._compile.generated',
                 '_wrap': _wrap, '_state': _state, '_edge': _edge, '_Node': CompiledFunctionBackward,
                 '_program': self, '_zeros': zeros}
        self.names = names

        # ---- backward first: it decides what the forward saves
        bwd = Gen(names, device)
        touched = set()
        summed = set()
        for i, s in enumerate(out_slots):
            if not meta[s][2]:
                continue
            shape, dtype = meta[s][0], meta[s][1]
            z = bwd.const((shape, dtype), 'meta')
            if s in touched:
                bwd.emit(f'{_g(s)} = {_g(s)} + (grads[{i}] if grads[{i}] is not None else _zeros(*{z}))',
                         [_g(s)])
            else:
                bwd.emit(f'{_g(s)} = grads[{i}] if grads[{i}] is not None else _zeros(*{z})')
            touched.add(s)
        forward_parts = []
        saved_states = []
        for k, call in enumerate(tracer.calls):
            rule = rules.get(call.fn)
            if rule is None and hasattr(call.fn, '_dispatches'):  # (leafgrad.overrides' check in front of the op)
                rule = rules.get(call.fn._dispatches)
            spec = rule(call, meta) if rule is not None else None
            forward_parts.append((call, spec))
        from .nn_rules import fuse  # (loaded when first used)
        self.fused = fuse(forward_parts, out_slots)
        for k in range(len(forward_parts) - 1, -1, -1):
            call, spec = forward_parts[k]
            if not any(s in touched for s in call.outs):
                continue
            gouts = [_g(s) if s in touched else None for s in call.outs]
            need = [meta[s][2] and call.grad_mode for s in call.ins]
            if spec is None and call.reached is not None:  # (an input the op's graph does not reach: no gradient)
                need = [n and r for n, r in zip(need, call.reached)]
            if not any(need):
                continue
            if spec is None:
                st = f'st{k}'
                saved_states.append(st)
                isl = f'_I{k}'
                res = f'r{k}'
                # The island gives a gradient per input that requires grad (its leaves), the whole
                # of a tensor's at its first place. A slot that later calls already gave gradient
                # to seeds the island's walk, which adds the op's own to it as eager's buffer
                # takes them, one by one (self-attention's query, key and value: one tensor).
                seeds, taken, exprs = [], set(), []
                for i, s in enumerate(call.ins):
                    if not (meta[s][2] and call.grad_mode):
                        continue
                    first = need[i] and s not in taken
                    seeds.append(_g(s) if first and s in touched else None)
                    if first:
                        taken.add(s)
                        exprs.append((s, f'{res}[{len(seeds) - 1}]', [res], seeds[-1] is not None))
                grads_list = ', '.join(g or 'None' for g in gouts)
                seeded = ', [' + ', '.join(g or 'None' for g in seeds) + ']' if any(seeds) else ''
                bwd.emit(f'{res} = {isl}.backward({st}, [{grads_list}]{seeded})',
                         [st] + [g for g in gouts if g] + [g for g in seeds if g])
                for s, expr, reads, whole in exprs:
                    if whole:  # (the island's result is the slot's whole sum, the seed included)
                        bwd.emit(f'{_g(s)} = {expr}', reads)
                        summed.discard(s)  # (it may be the seed itself, which another slot may hold)
                exprs = [e[:3] for e in exprs if not e[3]]
            else:
                exprs = spec.backward(bwd, gouts, need)
            for s, expr, reads, *alt in exprs:
                if s in summed:  # the sum is this backward's own fresh array: add in place
                    bwd.emit(f'{_g(s)} += {expr}', [_g(s)] + list(reads))
                elif s in touched:  # (the first gradient may be another's: a new array)
                    # (the parentheses: a rule's expression may be a sum itself, `g - e * s`, which
                    # eager computes before adding it)
                    bwd.emit(f'{_g(s)} = {_g(s)} + ({expr})', [_g(s)] + list(reads))
                    summed.add(s)
                else:
                    consuming = (alt[0][0], f'{_g(s)} = {alt[0][1]}') if alt else None
                    bwd.emit(f'{_g(s)} = {expr}', reads, consuming)
                    touched.add(s)
                if not meta[s][0]:  # (NumPy gives a scalar for a 0-d result: the next rule may write into it)
                    bwd.emit(f'{_g(s)} = xp.asarray({_g(s)})', [_g(s)])
        # the gradients as tensors (a 0-d one from NumPy may be a scalar: an array in a tensor)
        ret = ', '.join(('_wrap(' + (_g(s) if meta[s][0] else f'xp.asarray({_g(s)})') + ')') if s in touched
                        else 'None' for s in self.grad_slots)
        bwd_reads = set()
        for _, reads, _ in bwd.lines:
            bwd_reads |= reads
        saved = sorted(r for r in bwd_reads if r.startswith('v')) + [st for st in saved_states if st in bwd_reads]
        # the inputs and captured tensors whose arrays the generated backward reads: the node
        # saves them, so that a change in place before the backward raises eager's error
        self.watched = [i for i, s in enumerate(params) if _v(s) in saved]
        # and those an island's eager graph saved: its replay saves a tensor of its own around
        # the array, whose version counter does not move with the input's
        position = {s: i for i, s in enumerate(params)}
        for k, (call, spec) in enumerate(forward_parts):
            if spec is None and f'st{k}' in saved:
                for j in call.saves:
                    i = position.get(call.ins[j])
                    if i is not None and i not in self.watched:
                        self.watched.append(i)
        self.watched.sort()

        # ---- forward
        fwd = Gen(names, device)
        for k, (call, spec) in enumerate(forward_parts):
            if spec is None:
                isl = Island(call, tracer, zeros)
                names[f'_I{k}'] = isl
                self.islands += 1
                outs = ''.join(_v(s) + ', ' for s in call.outs)
                ins = ', '.join(_v(s) for s in call.ins)
                st = f'st{k}' if f'st{k}' in saved else '_'
                fwd.emit(f'({outs}), {st} = _I{k}.forward({ins})', [_v(s) for s in call.ins])
            else:
                self.array_ops += 1
                spec.forward(fwd)
                for s in call.outs:
                    if not meta[s][0]:  # NumPy gives a scalar for a 0-d result; a tensor holds an array
                        fwd.emit(f'{_v(s)} = xp.asarray({_v(s)})', [_v(s)])
        self.saved_names = saved
        out_names = [_v(s) for s in out_slots]
        src_grad = _function('forward_grad', [_v(s) for s in params], fwd.lines,
                             f'({"".join(n + ", " for n in out_names)}), ({"".join(n + ", " for n in saved)})',
                             set(out_names) | set(saved), fwd.fresh)
        src_nograd = _function('forward_nograd', [_v(s) for s in params],
                               fwd.lines,
                               f'({"".join(n + ", " for n in out_names)})', set(out_names), fwd.fresh)
        # (saved: a one-item list holding the state, emptied once unpacked)
        unpack = [(f'({"".join(n + ", " for n in saved)}) = saved.pop()', set(), None)] if saved else []
        src_bwd = _function('backward', ['saved', 'grads'], unpack + bwd.lines, f'({ret},)' if ret else '()',
                            {_g(s) for s in self.grad_slots})
        self.source = '\n'.join((src_grad, src_nograd, src_bwd, self._run_source(names)))
        code = compile(self.source, '<leafgrad.compile generated>', 'exec')
        exec(code, names)
        self.forward_grad = names['forward_grad']
        self.forward_nograd = names['forward_nograd']
        self.backward = names['backward']
        self.run = names['run']

    def _run_source(self, names):
        """Source of ``run(inputs)``: the input tensors (a list) in, the output tensors out; the
        arrays read from the inputs and captured tensors, the forward called, and, where a
        gradient is needed, the call's node made with its edges and attached to the outputs
        (written out per program: no loop over the inputs and outputs at run time)."""
        ins = [f'i{i}' for i in range(self.n_inputs)]
        tensors = list(ins)
        for j, t in enumerate(self.captured):
            names[f'_c{j}'] = t
            tensors.append(f'_c{j}')
        arrays = ''.join(f'{t}._data, ' for t in tensors)
        n_out = len(self.out_slots)
        outs = ''.join(f'o{i}, ' for i in range(n_out))
        lines = [f'    ({"".join(n + ", " for n in ins)}) = inputs'] if ins else []
        nograd = [f'    ({outs}) = forward_nograd({arrays})',
                  f'    return [{", ".join(f"_wrap(o{i})" for i in range(n_out))}]']
        if not self.differentiable:
            return 'def run(inputs):\n' + '\n'.join(lines + nograd) + '\n'
        lines.append('    if not _state.grad_enabled:')
        lines += ['    ' + line for line in nograd]
        edges = ''.join(f'_edge({tensors[i]}), ' for i in self.grad_params)
        lines += [f'    ({outs}), saved = forward_grad({arrays})',
                  f'    node = _Node(({edges}))',
                  '    node.program = _program',
                  '    node.state = saved',
                  '    del saved',
                  *([f'    node.save({"".join(tensors[i] + ", " for i in self.watched)})'] if self.watched else []),
                  f'    node.num_outputs = {n_out}']
        for i, rg in enumerate(self.out_requires_grad):
            lines.append(f'    r{i} = _wrap(o{i})')
            if rg:
                lines.append(f'    r{i}._grad_fn = node')
                lines.append(f'    r{i}._requires_grad = True')
                if i:
                    lines.append(f'    r{i}._output_nr = {i}')
        lines.append(f'    return [{", ".join(f"r{i}" for i in range(n_out))}]')
        return 'def run(inputs):\n' + '\n'.join(lines) + '\n'


def _edge(t):
    """gradient_edge of an input or captured tensor of a compiled call (a leaf's accumulator)."""
    fn = t._grad_fn
    return (fn, t._output_nr) if fn is not None else (grad_accumulator(t), 0)


def _function(name, params, lines, ret, keep, fresh=None):
    """Source of a function of ``params`` running ``lines``, each name deleted after its last
    read unless it is in ``keep`` (what the function returns); ``fresh``: ``Gen.fresh``."""
    lines = [line if len(line) == 3 else line + (None,) for line in lines]
    last = {}
    count = {}
    for i, (_, reads, _) in enumerate(lines):
        for r in reads:
            last[r] = i
            count[r] = count.get(r, 0) + 1
    body = []
    for i, (text, reads, consuming) in enumerate(lines):
        for option in ([] if consuming is None else consuming if type(consuming) is list else [consuming]):
            c = option[0]
            if last.get(c) != i or c in keep:
                continue
            if len(option) > 2 and option[2] and not (fresh and c in fresh and count[c] == fresh[c] + 1):
                continue
            text = option[1]
            break
        body.append('    ' + text)
        dead = sorted(r for r in reads if last.get(r) == i and r not in keep and r[0] in 'vgrs' and r not in ('grads', 'saved'))
        if dead:
            body.append('    del ' + ', '.join(dead))
    body.append(f'    return {ret}')
    return f'def {name}({", ".join(params)}):\n' + '\n'.join(body) + '\n'


_DOUBLE_BACKWARD = 'torch.compile with aot_autograd does not currently support double backward'


class CompiledFunctionBackward(Node):
    """The node of one call of a compiled region: its backward is the generated backward."""
    _forward_cls = None  # (keeps the class's module: named as PyTorch's, autograd.function)
    __module__ = 'leafgrad.autograd.function'

    def __init__(self, next_functions):
        super().__init__(next_functions)
        self.program = None
        self.state = None

    def __repr__(self):
        return f'<leafgrad.autograd.function.{self.name()} object at {hex(id(self))}>'

    def compiled_summary(self):
        p = self.program
        return f'{p.n_ops} ops ({p.array_ops} replayed on arrays, {p.islands} through their eager op)'

    def apply(self, *grads):
        state = self.state
        if state is None:
            raise RuntimeError(_FREED)
        if self._saved:  # (inputs and captured tensors the backward reads: changed in place since?)
            self.saved_tensors
        arrays = [g._data if g is not None else None for g in grads]
        if _state.grad_enabled:  # create_graph: the gradients' own backward raises, as PyTorch's
            _state.grad_enabled = False
            try:
                res = self.program.backward([state], arrays)
            finally:
                _state.grad_enabled = True
            edges = tuple(gradient_edge(g) for g in grads if g is not None and g._requires_grad) or self.next_functions
            err = _DoubleBackward(edges)
            for t in res:
                if t is not None:
                    t._grad_fn, t._requires_grad = err, True
            return res
        # called by the backward walk (not anomaly mode's or the profiler's wrapper, not
        # directly), whose record says whether it keeps the graph (retain_graph)
        if _getframe(1).f_code is _run_backward_code and not walk_keeps_graph():
            # the last backward through this call: hand the saved arrays over, so that each is
            # freed at its last use in the generated backward (as eager frees node by node)
            box = [state]
            del state  # (no local name may hold the state: popped inside)
            self.state = None
            return self.program.backward(box, arrays)
        return self.program.backward([state], arrays)

    def release(self):
        self.state = None
        self._saved = None


class _DoubleBackward(Node):
    """What PyTorch records for the gradients a compiled region computed under create_graph:
    differentiating them again raises."""
    _forward_cls = None
    __module__ = 'leafgrad.autograd.function'

    def name(self):
        return 'CompiledFunctionBackwardBackward'

    def __repr__(self):
        return f'<leafgrad.autograd.function.CompiledFunctionBackwardBackward object at {hex(id(self))}>'

    def apply(self, *grads):
        raise RuntimeError(_DOUBLE_BACKWARD)
