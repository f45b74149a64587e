"""leafgrad.compile: torch.compile's contract on leafgrad's own tracer and replay.

Design note. ``compile(fn)`` returns a callable that, per *signature* of its arguments (each
tensor's shape, dtype, device and requires_grad; every other argument's value; grad mode;
the training flags of the modules involved), traces ``fn`` once (``trace.py``: one eager
run recording its top-level op calls) and then replays the recording on arrays
(``program.py``: a generated forward, and a generated backward run by the one autograd node
the call records). Guards check the signature on every call; a new signature traces again,
up to ``_dynamo.config.recompile_limit`` signatures, after which the function runs eagerly
(with one warning), as torch.compile does.

Dynamic shapes, as PyTorch decides them (``dynamic=None``: a tensor dimension or an int or
float argument that changes between calls becomes dynamic; ``dynamic=True``: all are, from
the first call; ``mark_dynamic``): a new size of a dynamic dimension counts as no new
signature toward the limit, as PyTorch's one dynamic graph serves it. leafgrad has no symbolic
shapes, so each size still has its own trace: a size runs eagerly on its first call and is
traced on its second (sizes seen once, as in a generation loop, cost no trace), and the
traces of one dynamic signature are capped (``_SIZES_KEPT``, oldest forgotten first).

The first call of a signature is the traced eager run itself, so its values and graph are
eager's; replay begins with the second. A graph break (``.item()``, ``if t.sum() > 0``,
``.tolist()``, printing a tensor, a NumPy round trip) or a call the trace cannot replay makes
that signature run eagerly on every call, and ``report()`` says why; ``fullgraph=True``
raises ``leafgrad._dynamo.exc.Unsupported`` instead, as torch raises.

``backend='eager'`` runs the traced function eagerly after tracing (torch's 'eager' backend
keeps eager's autograd graph too); every other backend name replays (torch's 'inductor',
'aot_eager' and the others all record one ``CompiledFunctionBackward`` node per call).
"""
import functools
import itertools
import logging
import os
import threading
import time
import weakref

import numpy

from ..autograd.grad_mode import InferenceCounter, state as _grad_state
from ..backend import device_of as _device_of
from ..tensor import Tensor
from . import trace as _trace
from ..autograd.views import bump as _bump
from .. import _dynamo, _logging
from .._dynamo import testing as _testing  # (its counters may be a backend)
from .._dynamo.utils import counters as _counters
from ..autograd import _instrument
from ..amp.policy import state as _autocast
from ..nn.modules import module as _module
from ..nn.modules.module import Module

_MODES = ('default', 'lite', 'reduce-overhead', 'max-autotune-no-cudagraphs', 'max-autotune')
_BACKENDS = ('inductor', 'eager', 'aot_eager', 'aot_eager_decomp_partition', 'cudagraphs', 'tvm', 'openxla',
             'onnxrt')
_all_compiled = weakref.WeakSet()
_frame_ids = itertools.count()  # (a compiled callable's number in the logs, as PyTorch's frame id)
_ndarray = numpy.ndarray
_rules = None
_SIZES_KEPT = 32          # traces kept per dynamic signature (one per size)
_SIZES_REMEMBERED = 4096  # sizes seen once remembered per compiled callable


def _rule_table():
    global _rules
    if _rules is None:
        from .rules import table  # (loaded when first used: the first compile builds the rule table)
        _rules = table()
    return _rules


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, name=None,
            disable=False, recompile_limit=None, isolate_recompiles=False, shapes_spec=None):
    """Optimise ``model`` (a function or an ``nn.Module``) as ``torch.compile`` does; see the
    module's design note. Without ``model``, a decorator.

    ``name`` labels the compiled region in its report; ``recompile_limit`` caps the signatures
    traced for this call (default ``_dynamo.config.recompile_limit``; past it, new signatures run
    eagerly, or with ``fullgraph=True`` raise ``FailOnRecompileLimitHit``). Each call keeps its
    own entries, which is what ``isolate_recompiles=True`` asks of PyTorch; ``dynamic`` decides
    what is dynamic as PyTorch's (see the design note); ``shapes_spec`` (a specification of
    symbolic shapes) is refused: leafgrad has none."""
    if backend is None:
        backend = _dynamo.default_backend  # ('inductor', PyTorch's, unless compiler.set_default_backend)
    if shapes_spec is not None:
        raise NotImplementedError('compile(shapes_spec=...): leafgrad.compile has no symbolic shapes and takes no '
                                  'dynamic-shape specification')
    if recompile_limit is not None and (not isinstance(recompile_limit, int) or recompile_limit < 0):
        raise ValueError(f'recompile_limit must be a non-negative int or None, got {recompile_limit!r}')
    if name is not None and not isinstance(name, str):
        raise TypeError(f'name must be a str or None, got {type(name).__name__}')
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f'Unrecognized mode={mode}, should be one of: {", ".join(_MODES)}')
    if options is not None:
        if not isinstance(options, dict):
            raise TypeError(f'options must be a dict, got {type(options).__name__}')
        for key, value in options.items():
            # guard_filter_fn: PyTorch's leave to drop guards; leafgrad evaluates them all, which
            # gives the same results for a program that may drop them (compiler's guard filters)
            if key == 'guard_filter_fn' and (value is None or callable(value)):
                continue
            raise RuntimeError(f'Unexpected optimization option {key}, known options are []')
    check_backend(backend)
    if dynamic not in (None, True, False):
        raise TypeError(f'dynamic must be None, True or False, got {dynamic!r}')
    # (PyTorch reads TORCHDYNAMO_DISABLE when it compiles: the function or module is returned as
    # it is; TORCH_COMPILE_DISABLE sets _dynamo.config.disable, read at each call)
    disable = disable or os.environ.get('TORCHDYNAMO_DISABLE', '') == '1'

    def decorate(obj):
        if not callable(obj):
            raise AssertionError(f'A callable function is expected, but {type(obj)} is provided.')
        if disable:
            return obj
        if isinstance(obj, _Module):
            return OptimizedModule(obj, _Compiled(obj.__call__, fullgraph, backend, obj, name, recompile_limit,
                                                  dynamic))
        compiled = _Compiled(obj, fullgraph, backend, None, name, recompile_limit, dynamic)

        @functools.wraps(obj)
        def compiled_function(*args, **kwargs):
            return compiled(*args, **kwargs)
        compiled_function._torchdynamo_orig_callable = obj
        compiled_function._leafgrad_compiled = compiled
        compiled_function.report = compiled.report
        return compiled_function

    if model is None:
        return decorate
    return decorate(model)


def check_backend(backend):
    """Refuse a backend leafgrad.compile does not have, as PyTorch refuses an unknown name: a
    name of ``list_backends()`` (or PyTorch's debugging ones) and ``_dynamo.testing``'s
    counters are had; another callable receives an FX graph, which leafgrad does not build."""
    if isinstance(backend, str):
        if backend not in _BACKENDS:
            raise _dynamo.exc.InvalidBackend(
                f"Invalid backend: '{backend}', see `torch._dynamo.list_backends()` for available backends.")
    elif isinstance(backend, _testing.CompileCounter):
        check_backend(getattr(backend, 'backend', 'inductor'))
    elif callable(backend):
        raise NotImplementedError('a callable backend receives an FX graph, which leafgrad does not build; use '
                                  "a backend name ('inductor', 'aot_eager', 'eager')")
    else:
        raise _dynamo.exc.InvalidBackend(f'Invalid backend: {backend!r}')


from ..nn.modules.module import Module as _Module  # noqa: E402


class OptimizedModule(_Module):
    """A module whose forward is compiled: ``_orig_mod`` is the module itself (its state
    dict's keys carry the ``_orig_mod.`` prefix, as PyTorch's)."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, '_compiled', compiled)
        object.__setattr__(self, 'forward', compiled)
        object.__setattr__(self, 'training', mod.training)

    def __getattr__(self, name):
        modules = self.__dict__.get('_modules')
        if modules is None or '_orig_mod' not in modules:
            raise AttributeError(name)
        if name == '_orig_mod':
            return modules['_orig_mod']
        return getattr(modules['_orig_mod'], name)

    def report(self):
        """compile's report of this module's forward (see ``leafgrad._dynamo.explain``)."""
        return self._compiled.report()


OptimizedModule.__module__ = 'leafgrad._dynamo.eval_frame'


class _Entry:
    """One traced signature: its program (None: runs eagerly) and the reason."""
    __slots__ = ('program', 'reason', 'out_template', 'calls', 'captured_meta', 'group')

    def __init__(self, program, reason, out_template=None):
        self.program, self.reason, self.out_template = program, reason, out_template
        self.calls = 0
        self.group = None  # (the signature with its dynamic sizes left out: _Compiled._group)


class _Compiled:
    """The state of one compiled callable: its cache of traced signatures and its log."""

    def __init__(self, fn, fullgraph, backend, module, name=None, recompile_limit=None, dynamic=None):
        self.fn = fn
        self.dynamic = dynamic
        self.fullgraph = fullgraph
        # (a _dynamo.testing counter as the backend: counts the programs made, which replay as
        # its backend's, the default one unless it names another)
        self.counter = backend if isinstance(backend, _testing.CompileCounter) else None
        self.backend = backend if self.counter is None else getattr(backend, 'backend', 'inductor')
        self.module = module
        self.name = name                        # the region's label in the report
        self.recompile_limit = recompile_limit  # None: _dynamo.config.recompile_limit
        # modules whose training flags guard each call: the compiled module, or those the
        # function reaches (a train/eval switch changes what their forward records), found at
        # its first call and again at each trace: a function is often decorated before the
        # globals it reads (the model) exist
        self.guard_modules = [module] if module is not None else None
        self.cache = {}
        self.children = None      # (the child modules, [(name, child, its compiled forward)]): _eager
        self.changed_state = set()  # signatures whose traced call changed Python state once
        self.retraced = {}        # signature -> times its guards failed (traced again each time)
        # dynamic shapes: the signatures with their dynamic sizes left out (each counts once
        # toward the recompile limit), the dims and values made dynamic (a part's index in a
        # signature -> the tensor's dims, or True for an int or float argument), the last
        # signature traced of each structure (which a new one is compared with), sizes seen once
        self.groups = set()
        self.dynamic_parts = {}
        self.structures = {}
        self.sizes_seen = {}
        self.forgotten = {}       # dynamic signature -> traces of its sizes forgotten (to keep _SIZES_KEPT)
        self.log = []             # plain sentences, in order
        self.limit_hit = False
        self.compile_seconds = []
        self.frame_id = next(_frame_ids)
        self.called_eagerly = False  # (its first call under the "eager_then_compile" stance: made)
        self.traces = 0           # traces so far (the logs' compile id)
        self.skipped = False      # a call met a new signature while _dynamo.config.disable was set
        _all_compiled.add(self)

    def reset(self):
        self.cache.clear()
        self.changed_state.clear()
        self.retraced.clear()
        self.groups.clear()
        self.dynamic_parts.clear()
        self.structures.clear()
        self.sizes_seen.clear()
        self.forgotten.clear()
        self.log.clear()
        self.limit_hit = False
        self.compile_seconds = []
        self.skipped = False

    def __call__(self, *args, **kwargs):
        # in a trace: inlined there; under a profiler: eagerly, so that its ops are seen; skipped
        # (see _skip): eagerly
        if _trace.active is not None or _instrument._thread is not None or self.skipped:
            return self.fn(*args, **kwargs)
        stance = _dynamo.stance
        if (stance.stance != 'default' or stance.backend is not None) and self._eager_by_stance(stance):
            return self.fn(*args, **kwargs)
        inputs = []
        modules = self.guard_modules
        if modules is None:
            modules = self.guard_modules = _trace.reachable_modules(self.fn)
        key = _signature(args, kwargs, inputs, modules)
        if key is None:
            return self.fn(*args, **kwargs)
        entry = self.cache.get(key)
        if entry is not None:
            program = entry.program
            if program is None:
                entry.calls += 1
                return self._eager(args, kwargs)
            if program.hooks_at != _module.hook_changes[0]:
                why = 'a module hook was registered or removed'
            elif _captured_unchanged(program):
                if program.reads_unchanged is None or program.reads_unchanged():
                    entry.calls += 1
                    changed = program.bumps and [(inputs[w] if type(w) is int else w, n) for w, n in program.bumps]
                    starts = changed and [t._version_counter[0] for t, _ in changed]
                    results = program.run(inputs)
                    if changed:  # (the changes a replay's own ops did not count: counted here)
                        for (t, times), start in zip(changed, starts):
                            for _ in range(times - (t._version_counter[0] - start)):
                                _bump(t)
                    if _grad_state.inference:  # (what eager makes in inference mode: inference tensors)
                        for t in results:
                            if type(t._version_counter) is list and not any(t is i for i in inputs):
                                t._version_counter = InferenceCounter((0,))
                    return _rebuild(entry.out_template, program.out_slots, results, inputs)
                why = ('a captured tensor was replaced by another object (a parameter, buffer, submodule, global '
                       'or closure variable reassigned), or a Python value the function reads changed')
            else:
                why = 'a captured tensor changed its shape, dtype or requires_grad'
            if _dynamo.config.disable:
                return self._skip(args, kwargs)
            del self.cache[key]
            # (each such retrace counts, as PyTorch counts a recompile: a value changed on every
            # call, a counter, would trace every call)
            retraced = self.retraced[key] = self.retraced.get(key, 0) + 1
            if retraced >= self._limit():
                self._hit_limit(why)
                self._store(key, _Entry(None, f'{why}, {retraced} times'), entry.group)
                self._say(f'{why}: this signature runs eagerly from now on')
                return self._eager(args, kwargs)
            self._say(f'{why}: traced again')
            group = entry.group
        else:
            if _dynamo.config.disable:
                return self._skip(args, kwargs)
            self._make_dynamic(key, inputs)
            group = self._group(key, inputs)
            if group in self.groups:  # (a new size of dynamic dims: no new signature)
                return self._new_size(key, group, args, kwargs, inputs)
            if len(self.groups) >= self._limit():
                self._hit_limit(_describe_key(key))
                return self.fn(*args, **kwargs)
        cause = why if entry is not None else None
        if self.traces and stance.stance in ('eager_on_recompile', 'fail_on_recompile'):
            if stance.stance == 'eager_on_recompile':
                return self.fn(*args, **kwargs)
            failed = cause or 'a new signature: ' + _describe_key(key)
            raise RuntimeError(f"Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                               f"{self._where(words=True)}\n    triggered by the following guard failure(s):\n"
                               f"    - {self.frame_id}/{self.traces - 1}: {failed}")
        return self._trace(key, args, kwargs, inputs, cause, group)

    def _skip(self, args, kwargs):
        """A call that would trace while ``_dynamo.config.disable`` is set runs eagerly, and so
        does every later call, replays included, until ``reset()``: as PyTorch, which then
        skips the function's code for good (its replays go on while no trace is needed)."""
        self.skipped = True
        self._say('a new signature while leafgrad._dynamo.config.disable is set: this callable runs eagerly '
                  'from now on (until leafgrad.compiler.reset())')
        return self.fn(*args, **kwargs)

    def _make_dynamic(self, key, inputs):
        """PyTorch's automatic dynamic shapes (``dynamic=None``): compared with the last signature
        traced of the same structure, the tensor dims whose size changed and the int and float
        arguments whose value changed become dynamic."""
        if self.dynamic is not None or not _dynamo.config.automatic_dynamic_shapes:
            return
        structure = _structure(key)
        before = self.structures.get(structure)
        if before is None:
            return
        n = 0
        for i, (old, new) in enumerate(zip(before, key)):
            if _is_tensor_part(new):
                n += 1
                dims = {d for d, (a, b) in enumerate(zip(old[0], new[0])) if a != b}
                made = dims - self.dynamic_parts.get(i, set())
                if made:
                    self.dynamic_parts.setdefault(i, set()).update(made)
                    self._say(f'input tensor {n}: the size of dim{"s" if len(made) > 1 else ""} '
                              f'{", ".join(map(str, sorted(made)))} changed, which makes '
                              f'{"them" if len(made) > 1 else "it"} dynamic (as PyTorch): sizes after this '
                              'one are no new signatures; each size runs eagerly on its first call and is '
                              'traced on its second')
            elif old != new and _is_number_part(new) and i not in self.dynamic_parts and _unspecialised(new[0]):
                self.dynamic_parts[i] = True
                self._say(f'a {new[0].__name__} argument changed, which makes it dynamic (as PyTorch): its '
                          'values after this one are no new signatures; each value runs eagerly on its first '
                          'call and is traced on its second')

    def _group(self, key, inputs):
        """The signature with its dynamic sizes and numbers left out (sizes 0 and 1 stay, as
        PyTorch specialises them): the signatures one dynamic graph of PyTorch's would serve
        share it."""
        every = self.dynamic is True or (self.dynamic is None and not _dynamo.config.assume_static_by_default)
        parts = self.dynamic_parts
        if not parts and not every and not any(getattr(t, '_has_dynamo_dim_marking', False) for t in inputs):
            return key
        group = list(key)
        n = 0
        for i, part in enumerate(key):
            if _is_tensor_part(part):
                t = inputs[n]
                n += 1
                shape = part[0]
                dims = set(range(len(shape))) if every else set(parts.get(i, ()))
                dims |= getattr(t, '_dynamo_dynamic_indices', set()) | getattr(t, '_dynamo_weak_dynamic_indices', set())
                dims -= getattr(t, '_dynamo_static_indices', set())
                if dims:
                    group[i] = (tuple(None if d in dims and s > 1 else s for d, s in enumerate(shape)),
                                part[1], part[2], part[3], None)  # (strides follow the sizes)
            elif _is_number_part(part) and (every or i in parts) and _unspecialised(part[0]):
                group[i] = (part[0], None)
        return tuple(group)

    def _new_size(self, key, group, args, kwargs, inputs):
        """A call whose only news is the size of dynamic dims (or the value of a dynamic number):
        eager on its first call, traced on its second; eager from then on where the sizes of that
        signature have outnumbered the traces it keeps once over (a loop over more sizes than
        are kept, repeated, would otherwise trace a size each time it comes round again)."""
        if key not in self.sizes_seen:
            if len(self.sizes_seen) >= _SIZES_REMEMBERED:
                self.sizes_seen.clear()
            self.sizes_seen[key] = True
            return self.fn(*args, **kwargs)  # (plainly: _eager's submodules would each trace this size)
        forgotten = self.forgotten.get(group, 0)
        if forgotten >= _SIZES_KEPT:
            return self.fn(*args, **kwargs)
        del self.sizes_seen[key]
        kept = [k for k, e in self.cache.items() if e.group == group]
        if len(kept) >= _SIZES_KEPT:
            del self.cache[kept[0]]
            self.forgotten[group] = forgotten + 1
            if forgotten + 1 == _SIZES_KEPT:
                self._say(f'{2 * _SIZES_KEPT} sizes of a dynamic signature traced and {_SIZES_KEPT} of them '
                          'forgotten: its new sizes run eagerly from now on (the traces kept still replay)')
        return self._trace(key, args, kwargs, inputs, None, group, counted=False)

    def _say(self, sentence):
        """A sentence of the report, also logged (set_logs(dynamo=logging.INFO))."""
        self.log.append(sentence)
        if _logging.dynamo_log.isEnabledFor(logging.INFO):
            _logging.dynamo_log.info(sentence, extra={'frame': self._frame()}, stacklevel=2)

    def _frame(self):
        return f'{self.frame_id}/{max(self.traces - 1, 0)}'

    def _where(self, words=False, short=False):
        """The compiled function and where it is defined (``words``: as the stance's error says it;
        ``short``: as the recompile limit's warning does)."""
        # (a module's: its forward, as PyTorch compiles that)
        fn = type(self.module).forward if self.module is not None else getattr(self.fn, '__func__', self.fn)
        code = getattr(fn, '__code__', None)
        name = getattr(fn, '__qualname__', repr(fn))
        if code is None:
            return name
        if short:
            return f"'{code.co_name}' ({code.co_filename}:{code.co_firstlineno})"
        if words:
            return f"filename: '{code.co_filename}', function name: '{code.co_name}', line number: {code.co_firstlineno}"
        return f'{name} in {code.co_filename}:{code.co_firstlineno}'

    def _eager_by_stance(self, stance):
        """Whether the compiler's stance (torch.compiler.set_stance) runs this call eagerly, without
        a trace: "force_eager"; the first call under "eager_then_compile"; a forced 'eager' backend."""
        if stance.stance not in _dynamo._STANCES:
            raise RuntimeError(f"invalid torch.compile stance '{stance}'")
        if stance.stance == 'force_eager' or stance.backend == 'eager':
            return True
        if stance.stance in ('eager_then_compile', 'aot_eager_then_compile') and not self.called_eagerly:
            self.called_eagerly = True
            return True
        return False

    def _limit(self):
        return _dynamo.config.recompile_limit if self.recompile_limit is None else self.recompile_limit

    def _hit_limit(self, reason):
        """PyTorch's error under fullgraph, else its warning (once): the recompile limit is
        reached and what is new runs eagerly."""
        limit = self._limit()
        if self.fullgraph:
            raise _dynamo.exc.FailOnRecompileLimitHit('Hard failure due to fullgraph=True')
        if not self.limit_hit:
            self.limit_hit = True
            # (PyTorch's warning, and as PyTorch a log record, not a Python warning)
            _logging.convert_frame_log.warning(f'leafgrad._dynamo hit config.recompile_limit ({limit})\n'
                                               f'   function: {self._where(short=True)}\n'
                                               f'   last reason: {reason}\n'
                                               'To log all recompilation reasons, use TORCH_LOGS="recompiles".',
                                               extra={'frame': f'{self.frame_id}/{self.traces}'})
            self._say(f'recompile limit ({limit}) reached: new signatures run eagerly')

    def _trace(self, key, args, kwargs, inputs, cause=None, group=None, counted=True):
        """Trace a call of a new signature (``cause``: why a traced one failed its guards;
        ``group``: the signature with its dynamic sizes left out; not ``counted``: a new size of
        a dynamic signature, which PyTorch's dynamic graph would serve without a recompile)."""
        if not _trace._lock.acquire(blocking=False):  # another thread is tracing: eager this once
            return self.fn(*args, **kwargs)
        say = self._say if counted else _silent
        if counted:
            self.traces += 1
        if counted and self.traces > 1 and _logging.enabled:
            _logging.log_artifact('recompiles', f'Recompiling function {self._where()}\n'
                                  '    triggered by the following guard failure(s):\n'
                                  f'    - {self.frame_id}/{self.traces - 2}: '
                                  f'{cause or "a new signature: " + _describe_key(key)}',
                                  self._frame())
        if self.module is None:
            reached, guarded = _trace.reachable_modules(self.fn), self.guard_modules
            if guarded is None or [id(m) for m in reached] != [id(m) for m in guarded]:
                # (a global or closure variable now holds another module, or one that did not
                # exist before: the signatures traced hold the old ones' training flags)
                self.guard_modules = reached
                if self.cache:
                    self.cache.clear()
                    self.groups.clear()
                    self.structures.clear()
                    self._say('the modules the function reaches changed: its signatures are traced again')
                key = _signature(args, kwargs, [], reached)
                group = self._group(key, inputs)
        start = time.perf_counter()
        _counters['frames']['total'] += 1
        try:
            # the compiled module, and modules passed as arguments (their identity is in the
            # signature): their parameters and buffers are captured like a compiled module's
            modules = ((self.module,) if self.module is not None else ()) + tuple(_modules_in((args, kwargs)))
            paths, values, state = {}, [], []
            known = _trace.known_tensors(self.fn, modules, paths=paths, values=values, state=state)
            tracer = _trace.Tracer(inputs, known, paths, values)
            before = _trace.python_state(state)
            versions = {i: t._version_counter[0] for i, t in known.items()}
            input_versions = [t._version_counter[0] for t in inputs]
            drawn = _trace.global_random_states()
            hooks_at = _module.hook_changes[0]
            _trace.install(tracer)
            try:
                out = self.fn(*args, **kwargs)
            finally:
                _trace.uninstall()
            changed = _trace.changed_state(state, before)
            _trace.changed_unseen(tracer, known, versions)
            _trace.drew_global_random(tracer, drawn)
            if _module.hook_changes[0] != hooks_at:
                tracer.fail('the call registers or removes a module hook, which a replay would not do')
        finally:
            _trace._lock.release()
        _counters['frames']['ok'] += 1
        n = len(self.groups) - (group in self.groups)  # (the other signatures)
        what = 'traced' if n == 0 else f'traced again (signature {n + 1}: {_describe_key(key)})'
        if tracer.breaks:
            reason = tracer.breaks[0]
            _counters['graph_break'][reason] += 1
            if _logging.enabled:
                _logging.log_artifact('graph_breaks', f'Graph break in user code at {tracer.break_lines[0]}\n'
                                      f'Graph Break Reason: {reason}', self._frame())
            if self.fullgraph:
                raise _dynamo.exc.Unsupported(reason)
            self._store(key, _Entry(None, reason), group)
            say(f'{what}; graph break: {reason}. This signature runs eagerly.')
            return out
        program = None
        tracer.check_saved(out)
        aliases = _check_outputs(tracer, out, inputs, known)
        if changed is not None and tracer.unsupported is None:
            if key not in self.changed_state:  # (a cache filled on the first call: the next may replay)
                self.changed_state.add(key)
                say(f'{what}; the call changed {changed}, which a replay would not do: '
                          'traced again on the next call')
                return out
            tracer.fail(f'the call changes {changed} every time, which a replay would not do')
        reason = tracer.unsupported
        out_slots = []
        out_template = None
        if reason is None:
            try:
                out_template = _out_template(tracer, out, out_slots, aliases)
            except _trace.Unsupported as e:
                reason = str(e)
        if reason is None and self.backend == 'eager':
            reason = "backend='eager' runs the traced function eagerly"
        if reason is None:
            from .program import Program  # (loaded when first used)
            program = Program(tracer, out_template, out_slots, _rule_table())
            program.hooks_at = hooks_at  # (module hooks as traced: nn.modules.module.hook_changes)
            program.bumps = _changed_in_place(program, inputs, input_versions, known, versions)
            if program.bumps is None:
                reason, program = 'the call changes in place a tensor that its backward reads', None
        elif self.fullgraph and self.backend != 'eager':
            raise _dynamo.exc.Unsupported(reason)
        self._store(key, _Entry(program, reason, out_template), group)
        seconds = time.perf_counter() - start
        self.compile_seconds.append(seconds)
        if program is None:
            say(f'{what}; not replayed: {reason}. This signature runs eagerly.')
        else:
            _counters['stats']['unique_graphs'] += 1
            _counters['stats']['calls_captured'] += program.n_ops
            if self.counter is not None:
                self.counter._counted(program.n_ops)
            if _logging.enabled:
                _logging.log_artifact('guards', f'GUARDS:\n{_guard_lines(key, program)}', self._frame())
                _logging.log_artifact('output_code', f'Output code:\n{program.source}', self._frame())
            say(f'{what}: {len(tracer.calls)} ops, {program.array_ops} replayed on arrays and '
                      f'{program.islands} through their eager op; guards: {_describe_guards(key, program)} '
                      f'({seconds * 1e3:.0f} ms).')
        for n, t in enumerate(inputs, 1):  # (torch._dynamo.mark_dynamic's marks)
            dims = set(getattr(t, '_dynamo_dynamic_indices', ())) | set(getattr(t, '_dynamo_weak_dynamic_indices', ()))
            if dims:
                say(f'input tensor {n}: dims {sorted(dims)} are marked dynamic: their sizes are no new '
                    'signatures; leafgrad has no symbolic shapes, so each size runs eagerly on its first call '
                    'and is traced on its second')
        return out

    def _store(self, key, entry, group):
        """Keep a traced signature's entry; its group counts toward the recompile limit."""
        entry.group = key if group is None else group
        self.cache[key] = entry
        self.groups.add(entry.group)
        self.structures[_structure(key)] = key

    def _eager(self, args, kwargs):
        """Run a signature that runs eagerly (a graph break, a call compile cannot replay). For
        a compiled module, as PyTorch compiles the code around a break, its child modules run
        compiled meanwhile, each on its own (its own signatures, guards and report; a child
        that breaks does the same with its children)."""
        children = self._compiled_children(args, kwargs)
        if not children:
            return self.fn(*args, **kwargs)
        patched = []
        try:
            for _, child, forward in children:
                fields = vars(child)
                if 'forward' not in fields:  # (an instance's own forward, the user's: left alone)
                    fields['forward'] = forward
                    patched.append(fields)
            return self.fn(*args, **kwargs)
        finally:
            for fields in patched:
                fields.pop('forward', None)

    def _compiled_children(self, args, kwargs):
        if self.backend == 'eager':
            return ()
        if self.module is not None:
            current = tuple(self.module._modules.items())
        else:  # (a function: the modules it reaches and those passed to it, and theirs)
            current = _module_trees(self.guard_modules + list(_modules_in((args, kwargs))))
        if self.children is None or self.children[0] != current:
            made = {id(child): forward for _, child, forward in (self.children[1] if self.children else ())}
            listed = []
            for name, child in current:
                if child is None or type(child).forward is Module.forward:  # (containers: no forward)
                    continue
                forward = made.get(id(child)) or _compiled_forward(child, self.backend, name)
                listed.append((name, child, forward))
            self.children = (current, listed)
        return self.children[1]

    def report(self):
        """What compile did, in plain sentences: signatures traced, graph breaks, guards."""
        lines = [f'compiled region {self.name!r}'] if self.name else []
        lines += self.log
        for i, entry in enumerate(self.cache.values()):
            state = 'replayed' if entry.program is not None else 'eager'
            lines.append(f'signature {i + 1}: {state}, called {entry.calls} times after tracing')
        what = 'submodule' if self.module is not None else 'module'
        for name, _, forward in (self.children[1] if self.children else ()):
            if forward.compiled.log:
                lines.append(f'{what} {name!r}, compiled on its own while a signature runs eagerly:')
                lines += ['  ' + line for line in forward.compiled.report().splitlines()]
        return '\n'.join(lines) if self.log or self.cache else '\n'.join(lines + ['not called yet'])


def _module_trees(modules):
    """(label, module) for each module within ``modules`` (each once, they included): a
    function may call a model or its submodules directly. A label is the class's name of the
    module it is found in (numbered after the first of a class), then the submodule's name."""
    kept, seen, counts = [], set(), {}
    inner = {id(sub) for m in modules for sub in m.modules() if sub is not m}
    for root in modules:
        if id(root) in inner or id(root) in seen:
            continue
        label = type(root).__name__
        counts[label] = counts.get(label, 0) + 1
        if counts[label] > 1:
            label += f'#{counts[label]}'
        for name, m in root.named_modules():
            if id(m) not in seen:
                seen.add(id(m))
                kept.append((f'{label}.{name}' if name else label, m))
    return tuple(kept)


def _compiled_forward(child, backend, name):
    """``child``'s forward compiled on its own (for _Compiled._eager)."""
    compiled = _Compiled(type(child).forward.__get__(child), False, backend, child, name)

    def forward(*args, **kwargs):
        return compiled(*args, **kwargs)
    forward.compiled = compiled
    return forward


def _silent(sentence):
    pass


def _is_tensor_part(part):
    """Whether a part of a signature is an input tensor's (shape, dtype, requires_grad, kind, strides)."""
    return type(part) is tuple and len(part) == 5 and type(part[0]) is tuple


def _is_number_part(part):
    """Whether a part of a signature is an int or float argument's (type, value)."""
    return type(part) is tuple and len(part) == 2 and (part[0] is int or part[0] is float)


def _unspecialised(kind):
    """Whether int (float) arguments may be dynamic: _dynamo.config.specialize_int (specialize_float)."""
    return not (_dynamo.config.specialize_int if kind is int else _dynamo.config.specialize_float)


def _structure(key):
    """A signature without its input tensors' sizes and strides and its numbers' values: what
    two signatures that differ only in what can be dynamic share."""
    return tuple((len(p[0]), p[1], p[2], p[3]) if _is_tensor_part(p) else p[0] if _is_number_part(p) else p
                 for p in key)


def _signature(args, kwargs, inputs, modules):
    """The guard key of a call (None when an argument cannot be hashed); ``inputs`` receives
    the argument tensors in order."""
    parts = []
    try:
        _key_of(args, parts, inputs)
        if kwargs:
            _key_of(kwargs, parts, inputs)
        parts.append((_grad_state.grad_enabled, _grad_state.inference))
        if _autocast.on:  # (a region traced under autocast runs eagerly: its own signature)
            parts.append(('autocast', _autocast.cpu, _autocast.cuda, _autocast.cpu_dtype, _autocast.cuda_dtype))
        for module in modules:
            parts.append(tuple([m.training for m in module.modules()]))
        key = tuple(parts)
        hash(key)
    except TypeError:
        return None
    return key


def _key_of(value, parts, inputs):
    if isinstance(value, Tensor):
        d = value._data
        kind = type(d)  # (the device: NumPy's arrays are the CPU's; other arrays say where they live)
        # (the strides too: a branch on x.is_contiguous() or x.stride() is decided by them)
        parts.append((d.shape, d.dtype, value._requires_grad, kind if kind is _ndarray else (kind, _device_of(d)),
                      d.strides))
        inputs.append(value)
        return
    t = type(value)
    if t is tuple or t is list:
        parts.append((t, len(value)))
        for v in value:
            _key_of(v, parts, inputs)
        return
    if t is dict:
        parts.append((dict, tuple(value)))
        for v in value.values():
            _key_of(v, parts, inputs)
        return
    if t in (int, float, bool, str, type(None), complex):
        parts.append((t, value))
        return
    if isinstance(value, Module):
        parts.append((id(value), tuple([m.training for m in value.modules()])))
        return
    parts.append((t, id(value)))


def _modules_in(value):
    """The nn.Modules among a call's arguments (in lists, tuples and dicts too)."""
    if isinstance(value, Module):
        yield value
    elif type(value) in (list, tuple):
        for v in value:
            yield from _modules_in(v)
    elif type(value) is dict:
        for v in value.values():
            yield from _modules_in(v)


def _describe_key(key):
    tensors = [p for p in key if type(p) is tuple and len(p) == 5 and type(p[0]) is tuple]
    bits = [f'{list(s)} {dt}{" requires_grad" if rg else ""}' for s, dt, rg, _, _ in tensors]
    return 'tensors ' + ', '.join(bits) if bits else 'no tensor arguments'


def _describe_guards(key, program):
    n_in = len(program.input_slots)
    s = (f'{n_in} input tensor{"s" if n_in != 1 else ""} (shape, strides, dtype, device, requires_grad), grad mode, '
         f'{len(program.captured)} captured tensors (shape, dtype, device, requires_grad, none replaced), '
         f'{program.n_values} Python values')
    return s


def _changed_in_place(program, inputs, input_versions, known, versions):
    """The inputs (by position) and captured tensors that the traced call changed in place,
    each with the number of changes: a replay writes their arrays and moves their version
    counters on as eager did. None where the program's node saves one of them: eager's check at
    the backward depends on whether the change came before or after the read that saved it."""
    bumps = [(i, t._version_counter[0] - v) for i, (t, v) in enumerate(zip(inputs, input_versions))
             if t._version_counter[0] != v]
    bumps += [(t, t._version_counter[0] - versions[i]) for i, t in known.items()
              if t._version_counter[0] != versions[i] and all(t is not x for x in inputs)]
    params = list(inputs) + list(program.captured)
    saved = [params[i] for i in program.watched]
    if any(any(s is (inputs[which] if type(which) is int else which) for s in saved) for which, _ in bumps):
        return None
    return bumps


def _check_outputs(tracer, out, inputs, known):
    """The outputs a replay makes again from a tensor that existed before the call ({id: their
    _trace.alias_chain}): an input or a parameter itself, or a view of one (its ``detach()``
    too), which eagerly shares its version counter (an in-place change through it is seen by
    autograd on that tensor) and has it as ``_base``, as PyTorch's compiled functions return
    them (the views made again by their ops, eagerly, after the replay). Fails ``tracer``
    where an output shares that counter otherwise, or requires grad without a history (a view
    made under no_grad of a tensor that requires grad: a replay would give it the call's node)."""
    counters = {id(t._version_counter) for t in inputs} | {id(t._version_counter) for t in known.values()}
    aliases = {}
    for t in _trace._tensors(out):
        if id(t._version_counter) in counters:
            chain = _trace.alias_chain(tracer, t)
            if chain is None:
                tracer.fail('an output is an input or captured tensor changed by an op that is no view, or a '
                            'view of one made so (eager shares its version counter)')
                return aliases
            aliases[id(t)] = chain
        elif t._requires_grad and t._grad_fn is None:
            tracer.fail('an output requires grad but has no history (a view made under no_grad of a tensor '
                        'that requires grad), which a replay would give the call\'s node')
            return aliases
    if not _separate_gradients(tracer, aliases.values()):
        tracer.fail('an output is a view of an input that requires grad, which the call also reads otherwise '
                    '(its gradient would be summed in another order than eager\'s)')
    return aliases


def _separate_gradients(tracer, chains):
    """Whether the gradients of the outputs made again by view ops reach their inputs apart from
    the replay's node: an input that requires grad has one such output, and no other call reads
    it or the views on the way (eager's engine would otherwise sum the gradient the view passes
    and the ones the other calls pass in its own order, which the node's sum would change)."""
    seen = set()
    for root, chain in chains:
        t = tracer.keep[root] if type(root) is int else root
        if not t._requires_grad:
            continue
        if id(t) in seen:
            return False
        seen.add(id(t))
        own = {id(call) for call, _ in chain}
        slots = {s for s, kept in enumerate(tracer.keep) if kept is t} | {call.outs[k] for call, k in chain}
        if any(id(call) not in own and any(s in slots for s in call.ins) for call in tracer.calls):
            return False
    return True


def _guard_lines(key, program):
    """The guards of a traced signature, one per line (the guards log)."""
    tensors = [p for p in key if type(p) is tuple and len(p) == 5 and type(p[0]) is tuple]
    lines = [f'- input tensor {i}: shape {list(shape)}, {dtype}, requires_grad={rg}'
             for i, (shape, dtype, rg, _, _) in enumerate(tensors, 1)]
    lines.append(f'- grad mode: {"enabled" if _grad_state.grad_enabled else "disabled"}')
    lines += [f'- captured tensor {i}: shape {list(shape)}, {dtype}, requires_grad={rg}, the same object'
              for i, (shape, dtype, rg, _, _) in enumerate(program.captured_meta, 1)]
    if program.n_values:
        lines.append(f'- {program.n_values} Python values it reads, unchanged')
    return '\n'.join(lines)


def _captured_unchanged(program):
    for t, (shape, dtype, rg, kind, gpu) in zip(program.captured, program.captured_meta):
        d = t._data
        # (an array's dtype is mostly the very object traced: `is` spares NumPy's comparison)
        if d.shape != shape or (d.dtype is not dtype and d.dtype != dtype) or t._requires_grad != rg \
                or type(d) is not kind or (gpu is not None and _device_of(d) != gpu):
            return False
    return True


class _Alias:
    """An output made again from an input or captured tensor (``_trace.alias_chain``)."""
    __slots__ = ('root', 'chain')

    def __init__(self, root, chain):
        self.root, self.chain = root, chain

    def make(self, inputs):
        t = inputs[self.root] if type(self.root) is int else self.root
        for call, k in self.chain:  # (each view op as traced, in its grad mode: a no_grad view too)
            it = iter((t,))
            args = _fill(call.args, it)
            kwargs = _fill(call.kwargs, it)
            before = _grad_state.grad_enabled
            _grad_state.grad_enabled = call.grad_mode
            try:
                made = call.fn(*args, **kwargs)
            finally:
                _grad_state.grad_enabled = before
            t = made if k == 0 and isinstance(made, Tensor) else list(_trace._tensors(made))[k]
        return t


def _fill(template, it):
    from .program import _fill as fill  # (loaded when first used)
    return fill(template, it)


def _out_template(tracer, value, out_slots, aliases):
    if isinstance(value, Tensor):
        alias = aliases.get(id(value))
        if alias is not None:
            return _Alias(*alias)
        s = tracer.slot(value, 'the output')
        out_slots.append(s)
        return _trace.Ref(len(out_slots) - 1)
    t = type(value)
    if t is tuple or t is list:
        return t([_out_template(tracer, v, out_slots, aliases) for v in value])
    if t is dict:
        return {k: _out_template(tracer, v, out_slots, aliases) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, '_fields'):
        return ('namedtuple', t, [_out_template(tracer, v, out_slots, aliases) for v in value])
    if value is None or t in (int, float, bool, str):
        return value
    raise _trace.Unsupported(f'the function returns a {t.__name__}, which compile does not replay')


def _rebuild(template, out_slots, results, inputs):
    if type(template) is _trace.Ref:
        return results[template.slot]
    if type(template) is _Alias:
        return template.make(inputs)
    t = type(template)
    if t is tuple and len(template) == 3 and template[0] == 'namedtuple':
        return template[1](*[_rebuild(v, out_slots, results, inputs) for v in template[2]])
    if t is tuple or t is list:
        return t([_rebuild(v, out_slots, results, inputs) for v in template])
    if t is dict:
        return {k: _rebuild(v, out_slots, results, inputs) for k, v in template.items()}
    return template


def reset():
    """Forget every compiled callable's traces (torch._dynamo.reset / torch.compiler.reset)."""
    for c in list(_all_compiled):
        c.reset()


_ = threading
