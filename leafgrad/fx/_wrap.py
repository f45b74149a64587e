"""``fx.wrap``: the registry of the module-level functions a trace records as leaf calls. Below
the tracer (_symbolic_trace.py, which reads the registry) and the code generator (graph.py,
whose generated modules call ``wrap`` again)."""
import inspect

# the functions fx.wrap named, as (the globals dict of the module that called wrap, name)
_wrapped_fns_to_patch = {}


def wrap(fn_or_name):
    """Make calls of a module-level function leaf calls in traces (a ``call_function`` node)
    instead of being traced through. Call it at module scope, with the function or its name."""
    if callable(fn_or_name):
        fn_name = fn_or_name.__code__.co_name if hasattr(fn_or_name, '__code__') else fn_or_name.__name__
    else:
        if not isinstance(fn_or_name, str):
            raise AssertionError('fn_or_name must be a global function or string name')
        fn_name = fn_or_name
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != '<module>':
        raise NotImplementedError('wrap must be called at the top level of a module')
    _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    return fn_or_name
