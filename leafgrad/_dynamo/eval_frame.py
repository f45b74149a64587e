"""torch._dynamo.eval_frame's public name: ``OptimizedModule``, the class of what
``compile(module)`` returns (programs test ``isinstance(model, OptimizedModule)`` to reach
``_orig_mod``, for instance before saving a state dict)."""
import importlib


def __getattr__(name):
    if name == 'OptimizedModule':
        # (the compiler defines it, loaded when first named: it imports this package, so it is
        # reached by name rather than imported here)
        return importlib.import_module('leafgrad._compile').OptimizedModule
    raise AttributeError(f"module 'leafgrad._dynamo.eval_frame' has no attribute '{name}'")
