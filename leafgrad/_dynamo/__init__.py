"""torch._dynamo's public surface for leafgrad.compile: ``explain``, ``reset``, ``config``,
``exc``, ``list_backends``, ``disable``, ``is_compiling``."""
import functools

from . import exc



class _Config:
    """torch._dynamo.config's settings that leafgrad.compile reads."""
    recompile_limit = 8

    @property
    def cache_size_limit(self):
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value):
        self.recompile_limit = value


config = _Config()


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


def disable(fn=None, recursive=True):
    """``fn`` run eagerly even inside a compiled function (its ops are then not traced)."""

    def decorate(f):
        @functools.wraps(f)
        def eager(*args, **kwargs):
            from .._compile import trace  # (the compiler, loaded when first used; it imports this module)
            tracer = trace.active
            if tracer is None:
                return f(*args, **kwargs)
            tracer.breaks.append(f'{getattr(f, "__qualname__", f)} is marked leafgrad._dynamo.disable')
            return f(*args, **kwargs)
        return eager
    return decorate if fn is None else decorate(fn)


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
