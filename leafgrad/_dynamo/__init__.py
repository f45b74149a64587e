"""torch._dynamo's public surface for leafgrad.compile: ``explain``, ``reset``, ``config``,
``exc``, ``list_backends``, ``disable``, ``is_compiling``, ``mark_dynamic``,
``maybe_mark_dynamic``, ``mark_static``."""
import collections
import functools

from . import config, exc  # (config: a module of PyTorch's settings, as torch._dynamo.config)


def reset():
    """Forget every compiled callable's traces."""
    from .. import _compile  # (the compiler, loaded when first used; it imports this module)
    _compile.reset()


def list_backends(exclude_tags=('debug', 'experimental')):
    return ['cudagraphs', 'inductor', 'onnxrt', 'openxla', 'tvm']


def is_compiling():
    """True while leafgrad.compile traces a function (replays run no Python)."""
    from .._compile import trace  # (the compiler, loaded when first used; it imports this module)
    return trace.active is not None


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """``fn`` run eagerly even inside a compiled function (its ops are then not traced);
    ``reason`` is said in the graph break's reason."""

    def decorate(f):
        @functools.wraps(f)
        def eager(*args, **kwargs):
            from .._compile import trace  # (the compiler, loaded when first used; it imports this module)
            tracer = trace.active
            if tracer is None:
                return f(*args, **kwargs)
            tracer.graph_break(f'{getattr(f, "__qualname__", f)} is marked leafgrad._dynamo.disable'
                               + (f' ({reason})' if reason else ''))
            return f(*args, **kwargs)
        return eager
    return decorate if fn is None else decorate(fn)


# ---- the compiler's stance ------------------------------------------------------------------

DynamoStance = collections.namedtuple('DynamoStance', 'stance skip_guard_eval_unsafe backend',
                                      defaults=('default', False, None))
_STANCES = ('default', 'force_eager', 'eager_on_recompile', 'fail_on_recompile', 'eager_then_compile',
            'aot_eager_then_compile')
stance = DynamoStance()  # (read by every compiled call)


class set_stance:
    """torch.compiler.set_stance: what compiled callables do, from now on, or within a ``with``
    block, or while a decorated function runs. "force_eager": run every compiled callable
    eagerly; "eager_on_recompile": run eagerly what would be traced again (replays go on);
    "fail_on_recompile": raise where a callable would be traced again; "eager_then_compile"
    (and "aot_eager_then_compile"): each callable's first call runs eagerly, without a trace.
    ``force_backend`` (with "default"): the backend every compiled callable uses.
    ``skip_guard_eval_unsafe`` is PyTorch's leave to skip guards; leafgrad evaluates them all,
    which gives the same results for a program that meets that flag's condition."""

    def __init__(self, stance='default', *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != 'default':
            raise RuntimeError('non-default stance cannot have force_backend set')
        self.previous = _swap(DynamoStance(stance, skip_guard_eval_unsafe, force_backend))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _swap(self.previous)
        return False

    def __call__(self, fn):
        chosen = _swap(self.previous)  # (as a decorator: the stance holds while fn runs, not from now on)

        @functools.wraps(fn)
        def staged(*args, **kwargs):
            before = _swap(chosen)
            try:
                return fn(*args, **kwargs)
            finally:
                _swap(before)
        return staged


def _swap(new):
    """Make ``new`` the stance; returns the one it replaces."""
    global stance
    old, stance = stance, new
    return old


# ---- dimension marks ------------------------------------------------------------------------
# PyTorch records them on the tensor, under these names; leafgrad.compile counts a new size of
# a marked dimension as no new signature (and traces each size on its second call).

_DimRange = collections.namedtuple('_DimRange', 'dim min max')


def _refuse_in_trace(fn):
    from .._compile import trace  # (the compiler, loaded when first used; it imports this module)
    if trace.active is not None:
        raise AssertionError(f'Attempt to trace forbidden callable {fn}')


def _indices(index, mark):
    if not isinstance(index, (list, tuple)):
        raise AssertionError(f'Expected index to be int, list, or tuple, got {type(index)}')
    for i in index:
        mark(i)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Mark dimension(s) ``index`` of ``t`` dynamic, recorded as PyTorch records them
    (``t._dynamo_dynamic_indices``): a new size of it is no new signature of a compiled call.
    leafgrad.compile has no symbolic shapes: each size is traced on its second call."""
    _refuse_in_trace(mark_dynamic)
    if not isinstance(index, int):
        return _indices(index, lambda i: mark_dynamic(t, i, min=min, max=max, specialize_on=specialize_on))
    if not hasattr(t, '_dynamo_dynamic_indices'):
        t._dynamo_dynamic_indices, t._dynamo_dynamic_range, t._dynamo_hint_overrides = set(), set(), {}
    if not hasattr(t, '_specialize_on'):
        t._specialize_on = {}
    if hint_override:
        t._dynamo_hint_overrides[index] = hint_override
    t._dynamo_dynamic_indices.add(index)
    t._dynamo_dynamic_range.add(_DimRange(index, min, max))
    t._has_dynamo_dim_marking = True
    t._specialize_on[index] = specialize_on if specialize_on is not None else []


def maybe_mark_dynamic(t, index):
    """Mark dimension(s) ``index`` of ``t`` dynamic where that does not force a specialisation
    error (``t._dynamo_weak_dynamic_indices``); compile follows it as mark_dynamic."""
    _refuse_in_trace(maybe_mark_dynamic)
    if not isinstance(index, int):
        return _indices(index, lambda i: maybe_mark_dynamic(t, i))
    if not hasattr(t, '_dynamo_weak_dynamic_indices'):
        t._dynamo_weak_dynamic_indices = set()
    t._dynamo_weak_dynamic_indices.add(index)
    t._has_dynamo_dim_marking = True


def mark_static(t, index=None):
    """Mark dimension(s) ``index`` of ``t`` (all of them for None) static
    (``t._dynamo_static_indices``): a compiled call counts each of its sizes as a new
    signature, even where the dimension would be dynamic; or an nn.Module class static
    (returned)."""
    from ..tensor import Tensor
    from ..nn.modules.module import Module  # (nn imports compile's modules, which import this one)
    if not isinstance(t, Tensor) and issubclass(t, Module):
        t._dynamo_marked_static = True
        return t
    if not isinstance(t, Tensor):
        raise TypeError(f'mark_static expects a tensor/nn.Module class but received {type(t)}')
    if index is None:
        for i in range(t.dim()):
            mark_static(t, i)
    elif isinstance(index, int):
        if not hasattr(t, '_dynamo_static_indices'):
            t._dynamo_static_indices = set()
        t._dynamo_static_indices.add(index)
        t._has_dynamo_dim_marking = True
    else:
        _indices(index, lambda i: mark_static(t, i))


class ExplainOutput:
    """What ``explain(fn)(*args)`` found, as torch._dynamo.explain reports it."""

    def __init__(self, graph_count, graph_break_count, break_reasons, op_count, ops_per_graph, out_guards,
                 compile_times, report):
        self.graph_count = graph_count
        self.graph_break_count = graph_break_count
        self.break_reasons = break_reasons
        self.op_count = op_count
        self.ops_per_graph = ops_per_graph
        self.out_guards = out_guards
        self.compile_times = compile_times
        self.report = report

    def __str__(self):
        s = f'Graph Count: {self.graph_count}\nGraph Break Count: {self.graph_break_count}\nOp Count: {self.op_count}\n'
        if self.break_reasons:
            s += 'Break Reasons:\n' + ''.join(f'  Break Reason {i + 1}:\n    Reason: {r}\n'
                                              for i, r in enumerate(self.break_reasons))
        s += 'Report:\n' + '\n'.join('  ' + line for line in self.report.splitlines()) + '\n'
        return s


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args)``: trace ``fn`` on these arguments and say what compile does with
    it: graphs, graph breaks and their reasons, op counts, guards."""
    def inner(*args, **kwargs):
        from .. import _compile  # (the compiler, loaded when first used; it imports this module)
        from .._compile import trace  # (the compiler, loaded when first used; it imports this module)
        inputs = []
        key = _compile._signature(args, kwargs, inputs, [])
        compiled = _compile._Compiled(f, False, 'inductor', None)
        compiled._trace(key, args, kwargs, inputs)
        entry = next(iter(compiled.cache.values()))
        breaks = [] if entry.program is not None or entry.reason is None else [entry.reason]
        program = entry.program
        ops = program.n_ops if program is not None else 0
        guards = [line for line in compiled.log]
        return ExplainOutput(1 if program is not None else 0, len(breaks), breaks, ops,
                             [ops] if program is not None else [], guards, compiled.compile_seconds,
                             compiled.report())
        _ = trace
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
