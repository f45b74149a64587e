"""torch._dynamo's public surface for leafgrad.compile: ``explain``, ``reset``, ``config``,
``exc``, ``list_backends``, ``optimize``, ``disable``, ``graph_break``, ``is_compiling``,
``allow_in_graph``, ``disallow_in_graph``, ``forbid_in_graph``, ``nonstrict_trace``,
``substitute_in_graph``, ``mark_dynamic``, ``maybe_mark_dynamic``, ``mark_static``,
``mark_static_address``, ``OptimizedModule`` (also in ``eval_frame``), ``utils.counters`` and
``testing``'s ``CompileCounter``."""
import collections
import functools
import importlib
import os

from . import config, eval_frame, exc, utils  # (config: a module of PyTorch's settings, as torch._dynamo.config)


def __getattr__(name):
    if name == 'OptimizedModule':
        return eval_frame.OptimizedModule
    if name == 'testing':  # (as PyTorch's: a submodule, imported when named)
        return importlib.import_module(__name__ + '.testing')
    raise AttributeError(f"module 'leafgrad._dynamo' has no attribute '{name}'")


def reset():
    """Forget every compiled callable's traces."""
    from .. import _compile  # (the compiler, loaded when first used; it imports this module)
    _compile.reset()


default_backend = 'inductor'  # (what compile uses when given no backend: compiler.set_default_backend)


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


def graph_break(msg=''):
    """A graph break where it is called inside a compiled function (its signature then runs
    eagerly; with ``fullgraph=True``, Unsupported is raised); nothing outside one."""
    from .._compile import trace  # (the compiler, loaded when first used; it imports this module)
    tracer = trace.active
    if tracer is not None:
        tracer.graph_break('a call to leafgrad._dynamo.graph_break()' + (f': {msg}' if msg else ''))


def allow_in_graph(fn):
    """``fn`` itself: PyTorch's Dynamo puts it in the graph without tracing into it; leafgrad's
    trace records the ops it runs, which replay alike."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError('allow_in_graph expects a callable')
    return fn


def disallow_in_graph(fn):
    """A graph break wherever a compiled function calls ``fn``, one of leafgrad's ops (which
    PyTorch's Dynamo puts in its graphs as they are); returns ``fn``."""
    if isinstance(fn, (list, tuple)):
        return [disallow_in_graph(x) for x in fn]
    from .._compile import trace  # (the compiler, loaded when first used; it imports this module)
    if not trace.is_op(fn):
        raise RuntimeError('disallow_in_graph is expected to be used on an already allowed callable (like '
                           'torch.* ops). Allowed callables means callables that TorchDynamo puts as-is in the '
                           'extracted graph.')
    trace.disallowed.add(id(fn))
    return fn


def forbid_in_graph(fn):
    """``fn`` made to raise PyTorch's AssertionError when a compiled function calls it while
    traced (returned as a new function: decorate with it; PyTorch marks ``fn`` itself, which
    leafgrad's trace, running the function's Python, cannot see being called)."""
    if isinstance(fn, (list, tuple)):
        return [forbid_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError('forbid_in_graph applies only to callables')

    @functools.wraps(fn)
    def forbidden(*args, **kwargs):
        _refuse_in_trace(fn)
        return fn(*args, **kwargs)
    forbidden._dynamo_forbidden = True
    return forbidden


def nonstrict_trace(traceable_fn):
    """``traceable_fn`` itself: PyTorch's Dynamo traces its ops without its Python; leafgrad's
    trace records the ops of every function it runs, this one's too."""
    if not callable(traceable_fn):
        raise AssertionError('nonstrict_trace expects a callable')
    return traceable_fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False,
                        is_embedded_type=False):
    """A decorator for a Python ``polyfill`` of ``original_fn`` that PyTorch's Dynamo traces in
    its place; it returns a function that calls ``original_fn``, as PyTorch's does outside
    compiled code. leafgrad's trace runs ``original_fn`` itself (its ops are recorded as any)."""
    if not callable(original_fn):
        raise TypeError(f'substitute_in_graph expects a callable, got {original_fn!r}')

    def decorate(polyfill):
        @functools.wraps(original_fn)
        def wrapped(*args, **kwargs):
            return original_fn(*args, **kwargs)
        wrapped.__torch_dynamo_polyfill__ = polyfill
        return wrapped
    return decorate


def mark_static_address(t, guard=False):
    """Mark ``t``'s memory as not moving between calls (PyTorch's CUDA graphs read it), recorded
    as PyTorch records it (``t._dynamo_static_input_type``); leafgrad's replay reads every
    tensor where it is at each call, so the mark changes nothing else."""
    from ..tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f'mark_static_address expects a tensor but received {type(t)}')
    t._dynamo_static_input_type = 'guarded' if guard else 'unguarded'


# ---- torch._dynamo.optimize, the decorator torch.compile is made of -----------------------------

class OptimizeContext:
    """What ``optimize(...)`` returns: a decorator that compiles a function or module with
    these options (as a context manager it raises, as PyTorch's does)."""

    def __init__(self, backend, nopython, dynamic, disable):
        self.backend, self.nopython, self.dynamic, self.disable = backend, nopython, dynamic, disable

    def __call__(self, fn):
        from .._compile import compile as compile_  # (the compiler, loaded when first used)
        return compile_(fn, backend=self.backend, fullgraph=self.nopython, dynamic=self.dynamic,
                        disable=self.disable)

    def __enter__(self):
        raise RuntimeError('torch._dynamo.optimize(...) is used with a context manager. Please refer to '
                           'https://pytorch.org/tutorials/intermediate/torch_compile_tutorial.html to use '
                           'torch._dynamo.optimize(...) as an annotation/decorator. ')

    def __exit__(self, *exc):
        return False


class _NullDecorator:
    """``optimize``'s answer when compiling is disabled: the function itself."""

    def __call__(self, fn):
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def optimize(backend='inductor', *, nopython=False, guard_export_fn=None, guard_fail_fn=None,
             guard_filter_fn=None, disable=False, dynamic=None, **rest):
    """torch._dynamo.optimize(backend, nopython=...): the decorator ``compile`` is made of
    (``nopython`` is ``fullgraph``). ``guard_filter_fn`` is PyTorch's leave to drop guards;
    leafgrad evaluates them all, which gives the same results for a program that may drop
    them. The guard callbacks are refused: leafgrad's guards are not PyTorch's objects."""
    if rest:
        raise TypeError(f"optimize() got an unexpected keyword argument '{next(iter(rest))}'")
    if guard_export_fn is not None or guard_fail_fn is not None:
        raise NotImplementedError('optimize(guard_export_fn=..., guard_fail_fn=...): leafgrad.compile does not '
                                  "hand out PyTorch's guard objects; its report says which guards failed "
                                  '(leafgrad._dynamo.explain, TORCH_LOGS="recompiles")')
    if disable or os.environ.get('TORCHDYNAMO_DISABLE', '') == '1':
        return _NullDecorator()
    from .. import _compile  # (the compiler, loaded when first used; it imports this module)
    _compile.check_backend(backend)
    return OptimizeContext(backend, nopython, dynamic, disable)


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
