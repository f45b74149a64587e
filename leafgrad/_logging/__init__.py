"""torch._logging's ``set_logs`` (and the ``TORCH_LOGS`` environment variable): what
leafgrad.compile says while it works, written to stderr in PyTorch's log format.

What each setting shows here (leafgrad.compile has no bytecode tracer, AOT stage or Inductor:
the settings for those stages are accepted, and log nothing, as PyTorch logs nothing for a
stage that does not run):

- ``dynamo`` (or ``all``) at ``logging.INFO`` or lower: the sentences of the compiled
  callable's report (``report()``) as they are written: each trace, graph break and retrace.
- ``graph_breaks``: each graph break, with the user's line and the reason.
- ``recompiles`` (``recompiles_verbose``): each retrace, and the guard that failed.
- ``guards``: the guards of each traced signature.
- ``graph``, ``graph_code``, ``aot_graphs``, ``output_code``: the generated forward and
  backward source of each signature that replays.
"""
from ._internal import set_logs  # noqa: F401
from ._internal import convert_frame_log, dynamo_log, enabled, log_artifact  # noqa: F401  (leafgrad.compile's)
from . import _internal  # noqa: F401  (torch._logging._internal)

__all__ = ['set_logs']
