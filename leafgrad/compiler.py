"""torch.compiler for leafgrad: ``compile``, ``reset``, ``disable``, ``set_stance``,
``list_backends``, ``is_compiling``, ``is_dynamo_compiling``, ``is_exporting``,
``allow_in_graph``, ``assume_constant_result``, ``cudagraph_mark_step_begin``."""
from . import _dynamo
from ._dynamo import set_stance  # noqa: F401  (a class, as PyTorch's: a function, a context and a decorator)


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


def allow_in_graph(fn):
    """``fn`` itself: PyTorch's Dynamo puts it in the graph without tracing into it; leafgrad's
    trace records the ops it runs, which replay alike."""
    return fn


def assume_constant_result(fn):
    """``fn`` itself: PyTorch's Dynamo keeps its result as a constant of the graph; leafgrad's
    trace does the same with any Python value a call returns that is not computed from tensors."""
    return fn


def cudagraph_mark_step_begin():
    """Nothing to mark: leafgrad has no CUDA graphs (PyTorch's marks the start of an iteration
    for the CUDA graphs of mode='reduce-overhead', and does nothing else)."""
