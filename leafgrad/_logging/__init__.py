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
import logging
import os
import sys
import time

__all__ = ['set_logs']

# torch 2.13's set_logs parameters: the log levels, then the artifacts (switches)
_LOGS = ('all', 'dynamo', 'aot', 'autograd', 'dynamic', 'inductor', 'distributed', 'c10d', 'ddp', 'fsdp', 'dtensor',
         'onnx', 'export')
_ARTIFACTS = ('bytecode', 'aot_graphs', 'aot_joint_graph', 'ddp_graphs', 'graph', 'graph_code',
              'graph_code_verbose', 'graph_breaks', 'side_effects', 'graph_sizes', 'guards', 'recompiles',
              'recompiles_verbose', 'trace_source', 'trace_call', 'trace_bytecode', 'output_code', 'kernel_code',
              'schedule', 'perf_hints', 'pre_grad_graphs', 'post_grad_graphs', 'ir_pre_fusion', 'ir_post_fusion',
              'onnx_diagnostics', 'fusion', 'overlap', 'cudagraphs', 'sym_node', 'compiled_autograd',
              'compiled_autograd_verbose', 'cudagraph_static_inputs', 'benchmarking', 'autotuning', 'incremental',
              'graph_region_expansion', 'inductor_metrics', 'hierarchical_compile', 'compute_dependencies',
              'caching')
_VALID_LEVELS = (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG, logging.NOTSET)

# the artifacts shown (read by leafgrad.compile: an empty set costs one test per trace)
enabled = set()
# what each artifact leafgrad.compile writes is shown by: the ones it writes, and their aliases
_SHOWN_BY = {'graph_breaks': ('graph_breaks',), 'recompiles': ('recompiles', 'recompiles_verbose'),
             'guards': ('guards',), 'output_code': ('graph', 'graph_code', 'graph_code_verbose', 'aot_graphs',
                                                    'output_code')}

dynamo_log = logging.getLogger('leafgrad._dynamo')


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever ``sys.stderr`` is when it writes (a test's capture too)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


class _Format(logging.Formatter):
    """PyTorch's log line: level letter, date and time, process, file and line, then the
    artifact's name on every line of a message."""

    def format(self, record):
        moment = time.localtime(record.created)
        artifact = getattr(record, 'artifact', None)
        letter = 'V' if artifact is not None else record.levelname[0]  # (PyTorch's: V for an artifact's)
        head = (f'{letter}{time.strftime("%m%d %H:%M:%S", moment)}.{int(record.msecs) * 1000:06d} '
                f'{record.process} {_short_path(record.pathname)}:{record.lineno}] ')
        frame = getattr(record, 'frame', None)
        if frame is not None:
            head += f'[{frame}] '
        if artifact is not None:
            head += f'[__{artifact}] '
        return '\n'.join(head + line for line in record.getMessage().split('\n'))


def _short_path(path):
    """A leafgrad file's path from the package's folder on (PyTorch writes torch/_dynamo/...)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if path.startswith(package + os.sep):
        return 'leafgrad' + path[len(package):].replace(os.sep, '/')
    return path


_root = logging.getLogger('leafgrad')
_handler = None


def _install_handler():
    global _handler
    if _handler is None:
        _handler = _Stderr()
        _handler.setFormatter(_Format())
        _root.addHandler(_handler)
        _root.propagate = False  # (as PyTorch's: its lines once, not again through the root logger's)


def log_artifact(artifact, message, frame=None):
    """Write ``message`` as ``artifact``'s (one of _SHOWN_BY's keys) where a setting shows it."""
    if any(name in enabled for name in _SHOWN_BY[artifact]):
        shown = next(name for name in _SHOWN_BY[artifact] if name in enabled)
        _root.debug(message, extra={'artifact': shown, 'frame': frame}, stacklevel=2)


def set_logs(*, all=None, dynamo=None, aot=None, autograd=None, dynamic=None, inductor=None, distributed=None,
             c10d=None, ddp=None, fsdp=None, dtensor=None, onnx=None, bytecode=False, aot_graphs=False,
             aot_joint_graph=False, ddp_graphs=False, graph=False, graph_code=False, graph_code_verbose=False,
             graph_breaks=False, side_effects=False, graph_sizes=False, guards=False, recompiles=False,
             recompiles_verbose=False, trace_source=False, trace_call=False, trace_bytecode=False, output_code=False,
             kernel_code=False, schedule=False, perf_hints=False, pre_grad_graphs=False, post_grad_graphs=False,
             ir_pre_fusion=False, ir_post_fusion=False, onnx_diagnostics=False, fusion=False, overlap=False,
             export=None, modules=None, cudagraphs=False, sym_node=False, compiled_autograd=False,
             compiled_autograd_verbose=False, cudagraph_static_inputs=False, benchmarking=False, autotuning=False,
             incremental=False, graph_region_expansion=False, inductor_metrics=False, hierarchical_compile=False,
             compute_dependencies=False, caching=False):
    """Set what leafgrad.compile logs, as torch._logging.set_logs: a log's level (``dynamo=
    logging.INFO``), an artifact on or off (``graph_breaks=True``), ``modules`` a dict of
    either by name. Every call starts from the defaults: what it does not name is off. With
    ``TORCH_LOGS`` set in the environment, it does nothing (the variable decides)."""
    if os.environ.get('TORCH_LOGS'):
        _install_handler()
        _root.warning('Using TORCH_LOGS environment variable for log settings, ignoring call to set_logs')
        return
    settings = dict(locals())
    settings.pop('modules')
    levels, artifacts = {}, set()
    for name, value in [*settings.items(), *(modules or {}).items()]:
        if name in _LOGS:
            if value is not None:
                if value not in _VALID_LEVELS or type(value) is not int:
                    raise ValueError(f'Unrecognized log level for log {name}: {value}, valid level values are: '
                                     + ','.join(str(level) for level in _VALID_LEVELS))
                levels[name] = value
        elif name in _ARTIFACTS:
            if type(value) is not bool:
                raise ValueError(f'Expected bool to enable artifact {name}, received {value}')
            if value:
                artifacts.add(name)
        else:  # (a name in modules)
            raise ValueError(f'Unrecognized log or artifact name passed to set_logs: {name}')
    _apply(levels, artifacts)


def _apply(levels, artifacts):
    enabled.clear()
    enabled.update(artifacts)
    level = levels.get('dynamo', levels.get('all', logging.WARNING))
    dynamo_log.setLevel(level)
    _root.setLevel(logging.DEBUG if artifacts else level)
    _install_handler()  # (PyTorch's too, from its import: its warnings in its format)


def _from_environment(spec):
    """``TORCH_LOGS``'s settings: comma-separated names, a log's name with ``+`` (DEBUG),
    ``-`` (ERROR) or neither (INFO), an artifact's name alone; an unknown name: PyTorch's
    error."""
    levels, artifacts = {}, set()
    for item in filter(None, (part.strip() for part in spec.split(','))):
        sign, name = (item[0], item[1:]) if item[0] in '+-' else ('', item)
        if name in _LOGS:
            levels[name] = {'+': logging.DEBUG, '-': logging.ERROR, '': logging.INFO}[sign]
        elif name in _ARTIFACTS and not sign:
            artifacts.add(name)
        else:
            raise ValueError(f'\nInvalid log settings: {spec}, must be a comma separated list of fully\n'
                             'qualified module names, registered log names or registered artifact names.\n'
                             'Valid settings:\n' + ', '.join(sorted(_LOGS + _ARTIFACTS)) + '\n')
    _apply(levels, artifacts)


if os.environ.get('TORCH_LOGS'):
    _from_environment(os.environ['TORCH_LOGS'])
else:  # (as PyTorch's loggers: WARNING, whatever the root logger's level is)
    _apply({}, set())
