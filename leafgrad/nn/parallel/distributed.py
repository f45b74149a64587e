"""DistributedDataParallel: one model replica per process, gradients averaged across processes.

At construction rank 0's parameters and buffers are broadcast to every rank (after checking
that every rank registered the same parameters, in the same order, with the same shapes), so
that all replicas start equal; every synchronised backward then averages the gradients
(``leafgrad.distributed.reducer``: in buckets, while backward runs), so that they stay equal.
"""
import contextlib
import dataclasses
import sys
import warnings

import numpy as np

from ..modules.module import Module
from ...tensor import Tensor
from ...autograd.grad_mode import state, no_grad

_DEFAULT_BUCKET_CAP_MB = 25


class DistributedDataParallel(Module):
    """Data parallelism across the processes of a process group, with PyTorch's arguments.

    Parameters (beyond PyTorch's usual meaning): ``device_ids``/``output_device`` must be None
    (CPU modules); ``bucket_cap_mb`` (25) caps a gradient bucket; ``find_unused_parameters``
    searches the graph of each forward's outputs for parameters that will get no gradient;
    ``gradient_as_bucket_view`` makes each ``.grad`` a view into its bucket (no copy back);
    ``static_graph`` declares that the same parameters are used in every iteration;
    ``broadcast_buffers`` (deprecated in PyTorch, use ``forward_sync_buffers``) broadcasts rank
    0's buffers before each forward in training.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        from ... import distributed as dist  # (loaded when first used)
        from ...distributed import process_group as pgm  # (loaded when first used)
        from ...distributed.reducer import DEFAULT_FIRST_BUCKET_BYTES, MB, Reducer  # (loaded when first used)
        if (delay_all_reduce_named_params is None) != (param_to_hook_all_reduce is None):
            raise ValueError('delay_all_reduce_named_params and param_to_hook_all_reduce need to be set at the same '
                             'time.')
        for name, value, default in (('delay_all_reduce_named_params', delay_all_reduce_named_params, None),
                                     ('mixed_precision', mixed_precision, None),
                                     ('skip_all_reduce_unused_params', skip_all_reduce_unused_params, False)):
            if value is not default and value != default:
                raise TypeError(f"DistributedDataParallel(): leafgrad does not support the argument {name}={value!r}")
        if process_group is not None and device_mesh is not None:
            raise RuntimeError('Cannot specify both process_group and device_mesh arguments.')
        if device_mesh is not None:
            raise TypeError('DistributedDataParallel(): leafgrad has no DeviceMesh; pass a process_group instead')
        self.process_group = pgm.default_group() if process_group is None else process_group
        ignore = set(getattr(module, '_ddp_params_and_buffers_to_ignore', ()))
        self.parameters_to_ignore = ignore
        module_params = [p for n, p in module.named_parameters() if n not in ignore]
        if not any(p.requires_grad for p in module_params):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               'requires a gradient.')
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError('device_ids can only be None or contain a single element.')
        device_types = {p.device.type for p in module_params}
        if len(device_types) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type of devices, but input "
                             f'module parameters locate in {device_types}.')
        if device_ids or output_device:
            raise ValueError('DistributedDataParallel device_ids and output_device arguments only work with '
                             'single-device/multiple-device GPU modules or CPU modules, but got device_ids '
                             f'{device_ids}, output_device {output_device}, and module parameters '
                             f'{ {p.device for p in module_params} }.')
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.module = module
        self.device = module_params[0].device
        self.device_type = self.device.type
        if broadcast_buffers is not None:
            if forward_sync_buffers is not None:
                warnings.warn('Both `broadcast_buffers` and `forward_sync_buffers` were specified. '
                              '`broadcast_buffers` is deprecated and its value is ignored when '
                              '`forward_sync_buffers` is provided.', FutureWarning, stacklevel=2)
            else:
                warnings.warn('`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: '
                              'unlike `broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at '
                              'init. If you rely on buffers NOT being synced at init (e.g. rank-local buffers), keep '
                              'using `broadcast_buffers=False` until `init_sync_buffers` is available.',
                              FutureWarning, stacklevel=2)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = forward_sync_buffers
            init_sync_buffers = True
        else:
            self.forward_sync_buffers = init_sync_buffers = broadcast_buffers if broadcast_buffers is not None \
                else True
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = False
        if check_reduction:
            warnings.warn('The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please '
                          'avoid using it.', FutureWarning, stacklevel=2)
        self.broadcast_bucket_size = 250 * MB
        if bucket_cap_mb_list:
            limits = [int(c * MB) for c in bucket_cap_mb_list]
            bucket_cap_mb = max(bucket_cap_mb_list)
            first = int(bucket_cap_mb * MB)
        else:
            default = bucket_cap_mb is None
            bucket_cap_mb = _DEFAULT_BUCKET_CAP_MB if default else bucket_cap_mb
            first = DEFAULT_FIRST_BUCKET_BYTES if default else int(bucket_cap_mb * MB)
            limits = [first, int(bucket_cap_mb * MB)] if first < int(bucket_cap_mb * MB) \
                else [int(bucket_cap_mb * MB)]
        self.bucket_bytes_cap = int(bucket_cap_mb * MB)

        params, names = self._params_for_reducer()
        if init_sync:
            _verify_params_across_processes(self.process_group, params, names)
            self._sync_module_states(init_sync_buffers)
        rebuild_limits = limits if bucket_cap_mb_list else [first, self.bucket_bytes_cap]
        self.reducer = Reducer(params, names, self.process_group, limits, first, find_unused_parameters,
                               gradient_as_bucket_view, rebuild_limits)
        if static_graph:
            self._set_static_graph()
        self._dist = dist

    # ---- construction helpers ----------------------------------------------------------------
    def _params_for_reducer(self):
        """The parameters to reduce (requires_grad, not ignored, each once) in registration
        order, and PyTorch's name for each (module path, '.', parameter name)."""
        params, names, seen = [], {}, set()
        for module_name, module in self.module.named_modules():
            for param_name, param in module.named_parameters(recurse=False):
                name = f'{module_name}.{param_name}'
                if not param.requires_grad or name in self.parameters_to_ignore or id(param) in seen:
                    continue
                seen.add(id(param))
                names[len(params)] = name
                params.append(param)
        return params, names

    def _synced_buffers(self):
        return [b for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]

    def _sync_module_states(self, buffers):
        tensors = [p for n, p in self.module.named_parameters() if n not in self.parameters_to_ignore]
        if buffers:
            tensors += self._synced_buffers()
        _broadcast_coalesced(self.process_group, tensors, 0)

    def _set_static_graph(self):
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.", stacklevel=2)
            return
        self.static_graph = True
        self.reducer.set_static_graph()
        if self.find_unused_parameters:
            warnings.warn('You passed find_unused_parameters=true to DistributedDataParallel, `_set_static_graph` '
                          'will detect unused parameters automatically, so you do not need to set '
                          'find_unused_parameters=true, just be sure these unused parameters will not change during '
                          'training loop while calling `_set_static_graph`.', stacklevel=2)

    @staticmethod
    def _set_params_and_buffers_to_ignore_for_model(module, params_and_buffers_to_ignore):
        module._ddp_params_and_buffers_to_ignore = params_and_buffers_to_ignore

    @property
    def broadcast_buffers(self):
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value):
        self.forward_sync_buffers = value

    # ---- training ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first synchronised backward after it
        averages what was accumulated. The forward must run inside the context too."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        _break_a_trace()
        grad_enabled = state.grad_enabled
        if grad_enabled:
            self.reducer.rebuild_buckets()
            if self.require_backward_grad_sync:
                self.reducer.prepare_for_forward()
        if self.require_forward_param_sync and self.forward_sync_buffers:
            buffers = self._synced_buffers()
            if buffers:
                with no_grad():
                    _broadcast_coalesced(self.process_group, buffers, 0)
        output = self.module(*inputs, **kwargs)
        if grad_enabled and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            search = self.find_unused_parameters and not self.static_graph
            self.reducer.prepare_for_backward(list(_find_tensors(output)) if search else [])
        else:
            self.require_forward_param_sync = False
        return output

    def train(self, mode=True):
        super().train(mode)
        return self


def _break_a_trace():
    """A graph break where leafgrad.compile traces DDP's forward: the forward prepares the
    reducer (which buckets the gradients and all-reduces them in the backward), Python a replay
    would skip. So a compiled DDP runs its forward eagerly and the module it wraps compiled, as
    PyTorch compiles the wrapped module and keeps DDP's hooks."""
    trace = sys.modules.get('leafgrad._compile.trace')  # (None until something is compiled)
    if trace is not None and trace.active is not None:
        trace.active.graph_break('DistributedDataParallel.forward prepares its reducer for the backward, which a '
                                 'replay would skip; the module it wraps runs compiled')


def _find_tensors(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _find_tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _find_tensors(x)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _find_tensors(getattr(obj, f.name))


def _broadcast_coalesced(group, tensors, src):
    """Broadcast the tensors' data from ``src`` as one byte buffer, written back in place."""
    from ...distributed.collectives import _bytes, _store, broadcast_array  # (loaded when first used)
    if not tensors:
        return
    arrays = [t._data for t in tensors]
    flat = np.concatenate([_bytes(a) for a in arrays])  # (host bytes: a GPU's tensors are staged)
    broadcast_array(group, flat, src).wait()
    offset = 0
    for a in arrays:
        n = a.nbytes
        _store(a, flat[offset:offset + n].view(a.dtype).reshape(a.shape))
        offset += n


def _verify_params_across_processes(group, params, names):
    """Every rank must have registered the same parameters, in the same order, with the same
    shapes and dtypes: otherwise gradients of different parameters would be averaged together.
    One all-gather of a digest; on a mismatch, the full lists say which parameter differs."""
    import hashlib  # (loaded when first used: only the parameter-shape check needs it)
    from ...distributed import objects  # (loaded when first used)
    meta = [(names[i], tuple(p.shape), str(p.dtype)) for i, p in enumerate(params)]
    digest = np.frombuffer(hashlib.sha256(repr(meta).encode()).digest(), np.uint8).copy()
    everyone = np.empty(group.size() * digest.size, np.uint8)
    group.run('ALLGATHER', lambda: [group._comm.Iallgather(digest, everyone)])
    if all((everyone.reshape(group.size(), -1) == digest).all(axis=1)):
        return
    metas = [None] * group.size()
    objects.all_gather_object(metas, meta, group=group)
    rank = group.rank()
    for other, theirs in enumerate(metas):
        if theirs == meta:
            continue
        if len(theirs) != len(meta):
            raise RuntimeError(f'DDP expects same model across all ranks, but Rank {rank} has {len(meta)} params, '
                               f'while rank {other} has inconsistent {len(theirs)} params.')
        for i, (mine, their) in enumerate(zip(meta, theirs)):
            if mine == their:
                continue
            if mine[1] != their[1]:
                raise RuntimeError(f'[{rank}]: params[{i}] in this process with sizes {list(mine[1])} appears not '
                                   f'to match sizes of the same param in process {other}. The parameter is '
                                   f"'{mine[0]}' in this process and '{their[0]}' in process {other} (sizes "
                                   f'{list(their[1])}).')
            if mine[0] != their[0]:
                raise RuntimeError(f"[{rank}]: params[{i}] is '{mine[0]}' in this process but '{their[0]}' in "
                                   f'process {other}: the ranks registered their parameters in a different order.')
            raise RuntimeError(f"[{rank}]: params[{i}] ('{mine[0]}') has dtype {mine[2]} in this process but "
                               f'{their[2]} in process {other}.')
