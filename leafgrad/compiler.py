"""torch.compiler for leafgrad: ``reset``, ``disable``, ``is_compiling``, ``is_dynamo_compiling``."""
from . import _dynamo


def reset():
    """Forget every compiled callable's traces."""
    _dynamo.reset()


def disable(fn=None, recursive=True):
    return _dynamo.disable(fn, recursive)


def is_compiling():
    return _dynamo.is_compiling()


is_dynamo_compiling = is_compiling
