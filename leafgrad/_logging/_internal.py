"""torch._logging._internal: where the logs are set up (set_logs, the ``TORCH_LOGS`` and
``TORCH_LOGS_FORMAT`` environment variables, the handler and its formatter, the loggers), as
PyTorch's is; the package re-exports its public names. Programs reach in here too: PyTorch's
compile tutorials begin by choosing the format and applying it again::

    os.environ["TORCH_LOGS_FORMAT"] = ""
    torch._logging._internal.DEFAULT_FORMATTER = torch._logging._internal._default_formatter()
    torch._logging._internal._init_logs()
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
convert_frame_log = logging.getLogger('leafgrad._dynamo.convert_frame')  # (the recompile limit's warning)


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


LOG_ENV_VAR = 'TORCH_LOGS'
LOG_FORMAT_ENV_VAR = 'TORCH_LOGS_FORMAT'


def _default_formatter():
    """PyTorch's line format, or with ``TORCH_LOGS_FORMAT`` set that format ("short" and "basic":
    logging's basic one; an empty one: the message alone)."""
    fmt = os.environ.get(LOG_FORMAT_ENV_VAR)
    if fmt is None:
        return _Format()
    if fmt in ('short', 'basic'):
        fmt = logging.BASIC_FORMAT
    return logging.Formatter(fmt)


DEFAULT_FORMATTER = _default_formatter()  # (a program may replace it, then call _init_logs)
_file_handlers = []

_root = logging.getLogger('leafgrad')
_handler = None


def _install_handler():
    global _handler
    if _handler is None:
        _handler = _Stderr()
        _handler.setFormatter(DEFAULT_FORMATTER)
        _root.addHandler(_handler)
        _root.propagate = False  # (as PyTorch's: its lines once, not again through the root logger's)


# the logger each artifact is written by, named as PyTorch's (its name shows in a format that
# a program sets: TORCH_LOGS_FORMAT, _internal.DEFAULT_FORMATTER)
_ARTIFACT_LOGGERS = {'graph_breaks': '_dynamo.symbolic_convert', 'recompiles': '_dynamo.guards',
                     'recompiles_verbose': '_dynamo.guards', 'guards': '_dynamo.guards',
                     'graph': '_dynamo.output_graph', 'graph_code': '_dynamo.output_graph',
                     'graph_code_verbose': '_dynamo.output_graph',
                     'aot_graphs': '_functorch._aot_autograd.graph_capture', 'output_code': '_inductor.codecache'}


def _artifact_logger(artifact):
    log = logging.getLogger(f'leafgrad.{_ARTIFACT_LOGGERS[artifact]}.__{artifact}')
    log.setLevel(logging.DEBUG)  # (shown when its artifact is: whatever its parents' levels are)
    return log


def log_artifact(artifact, message, frame=None):
    """Write ``message`` as ``artifact``'s (one of _SHOWN_BY's keys) where a setting shows it."""
    if any(name in enabled for name in _SHOWN_BY[artifact]):
        shown = next(name for name in _SHOWN_BY[artifact] if name in enabled)
        _artifact_logger(shown).debug(message, extra={'artifact': shown, 'frame': frame}, stacklevel=2)


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


def _init_logs(log_file_name=None):
    """Apply ``TORCH_LOGS`` (its defaults where it is not set) and ``DEFAULT_FORMATTER`` again;
    with ``log_file_name``, the logs go to that file too."""
    _install_handler()
    _handler.setFormatter(DEFAULT_FORMATTER)
    while _file_handlers:
        _root.removeHandler(_file_handlers.pop())
    if log_file_name is not None:
        handler = logging.FileHandler(log_file_name)
        handler.setFormatter(DEFAULT_FORMATTER)
        _root.addHandler(handler)
        _file_handlers.append(handler)
    spec = os.environ.get(LOG_ENV_VAR)
    if spec:
        _from_environment(spec)
    else:
        _apply({}, set())
