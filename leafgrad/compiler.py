"""torch.compiler for leafgrad: ``compile``, ``reset``, ``disable``, ``set_stance``,
``list_backends``, ``set_default_backend``, ``get_default_backend``, ``is_compiling``,
``is_dynamo_compiling``, ``is_exporting``, ``allow_in_graph``, ``substitute_in_graph``,
``assume_constant_result``, ``nested_compile_region``, ``cudagraph_mark_step_begin`` and the
guard filters (``skip_guard_on_globals_unsafe`` and kin)."""
from . import _dynamo
from ._dynamo import set_stance  # noqa: F401  (a class, as PyTorch's: a function, a context and a decorator)
from ._dynamo import allow_in_graph, substitute_in_graph  # noqa: F401


def compile(*args, **kwargs):
    """torch.compiler.compile: leafgrad.compile."""
    from ._compile import compile as compile_  # (the compiler, loaded when first used)
    return compile_(*args, **kwargs)


def reset():
    """Forget every compiled callable's traces."""
    _dynamo.reset()


def disable(fn=None, recursive=True, *, reason=None):
    return _dynamo.disable(fn, recursive, reason=reason)


def list_backends(exclude_tags=('debug', 'experimental')):
    return _dynamo.list_backends(exclude_tags)


def is_compiling():
    return _dynamo.is_compiling()


is_dynamo_compiling = is_compiling


def is_exporting():
    """False: leafgrad has no torch.export."""
    return False


def assume_constant_result(fn):
    """``fn`` itself: PyTorch's Dynamo keeps its result as a constant of the graph; leafgrad's
    trace does the same with any Python value a call returns that is not computed from tensors."""
    return fn


def cudagraph_mark_step_begin():
    """Nothing to mark: leafgrad has no CUDA graphs (PyTorch's marks the start of an iteration
    for the CUDA graphs of mode='reduce-overhead', and does nothing else)."""


def set_default_backend(backend):
    """The backend ``compile`` uses when given none (``None``: back to ``'inductor'``)."""
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise TypeError(f'backend must be a string or callable, got {type(backend)}')
    _dynamo.default_backend = 'inductor' if backend is None else backend


def get_default_backend():
    """The backend ``compile`` uses when given none: ``'inductor'`` until set."""
    return _dynamo.default_backend


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """``fn`` itself (or a decorator returning it): PyTorch compiles a region called many times
    once and stamps it out; leafgrad's trace records each call's ops, which replay alike."""
    if fn is None:
        return lambda f: nested_compile_region(f, options=options, max_reuse_entries=max_reuse_entries,
                                               reuse_hash_fn=reuse_hash_fn)
    if not callable(fn):
        raise TypeError(f'nested_compile_region expects a callable, got {type(fn)}')
    return fn


# ---- guard filters, for compile(options={"guard_filter_fn": ...}) ---------------------------
# PyTorch calls the filter with its guard entries and drops the guards it answers False for.
# leafgrad.compile takes the option and evaluates every guard, which gives the same results for
# a program that meets the filter's condition (nothing that a dropped guard watches changes);
# the filters are PyTorch's, for programs that call them on entries of their own.

def keep_portable_guards_unsafe(guard_entries):
    return [g.guard_type in ('GLOBAL_STATE', 'SHAPE_ENV') or (g.guard_type == 'TENSOR_MATCH' and not g.is_global)
            for g in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    return [not entry.orig_guard.source.is_unspecialized_builtin_nn_module() for entry in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    return [not entry.orig_guard.source.is_unspecialized_nn_module() for entry in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    from .nn.parameter import Parameter
    return [entry.guard_type == 'TENSOR_MATCH' and (keep_parameters or not isinstance(entry.value, Parameter))
            for entry in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries):
    return [not entry.is_global for entry in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    return [False for _ in guard_entries]
