"""Activation checkpointing: keep a region's inputs, not its intermediate activations, and
recompute the region during backward.

Design note (``use_reentrant=False``, the recommended variant). The region runs once,
normally recorded, under saved-tensor hooks whose pack hook keeps only a small integer handle
in place of each tensor a node saves. The first time the backward unpacks a handle, the region
is run again (under the RNG state of the first run, so dropout draws the same mask) with hooks
that collect the tensors its nodes save, in the same order; each handle then returns its
tensor, which is dropped as soon as it has been used. Peak memory is the kept inputs plus one
region's activations.

With ``early_stop`` (the default; ``set_checkpoint_early_stop`` overrides it for the calls made
in its block) the recomputation stops as soon as it has saved as many tensors as the first run,
so code of the region after its last saving op does not run again, as in PyTorch.

``use_reentrant=True`` (PyTorch's default when the argument is omitted) is a custom Function:
its forward runs the region without recording, its backward re-runs it with recording and
backpropagates through it.
"""
import contextlib
import warnings

from .. import autograd
from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd.graph import Node, saved_tensors_hooks
from ..tensor import Tensor
from ..generator import get_rng_state, set_rng_state
from .._pytree import _flatten

__all__ = ['checkpoint', 'checkpoint_sequential', 'CheckpointError', 'CheckpointFunction', 'check_backward_validity',
           'detach_variable', 'get_device_states', 'set_device_states', 'noop_context_fn', 'set_checkpoint_early_stop',
           'DefaultDeviceType', 'set_checkpoint_debug_enabled']


class CheckpointError(RuntimeError):
    """The recomputation did not save what the first run saved."""


class _StopRecomputation(Exception):
    """The recomputation has saved every tensor the first run saved (early stop)."""


_early_stop = None  # set_checkpoint_early_stop's setting: None leaves it to each call's early_stop
_debug = None       # set_checkpoint_debug_enabled's setting: None leaves it to each call's debug


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether the checkpoints made in the block stop their recomputation once it has saved what
    the first run saved (the default) or run the whole region again."""
    global _early_stop
    previous, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """PyTorch's switch for the operator traces its non-determinism errors add (None: each call's
    ``debug``). leafgrad's errors name the tensors that differ and no more: kept and read back."""
    global _debug
    previous, _debug = _debug, enabled
    try:
        yield
    finally:
        _debug = previous


class DefaultDeviceType:
    """The device type whose random state a checkpoint saves when no tensor says which: unless
    set, the accelerator's ('cuda' with a GPU), else 'cpu'."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device='cuda'):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator  # (loaded when first used)
            found = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = found.type if found else 'cpu'
        return DefaultDeviceType._default_device_type


def detach_variable(inputs):
    """The tuple ``inputs`` with each tensor detached, its requires_grad kept."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f'Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}')
    out = []
    for a in inputs:
        if isinstance(a, Tensor):
            detached = a.detach()
            detached.requires_grad = a.requires_grad
            a = detached
        out.append(a)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(a.requires_grad for a in inputs if isinstance(a, Tensor)):
        warnings.warn('None of the inputs have requires_grad=True. Gradients will be None', stacklevel=2)


def get_device_states(*args):
    """(device indices, random states) of the accelerators the tensors in ``args`` are on: none on the
    CPU; leafgrad keeps no CUDA generator, so a CUDA tensor's state is refused (leafgrad.cuda's error)."""
    ids = []
    for a in _flatten(args)[0]:
        if isinstance(a, Tensor) and a.device.type not in ('cpu', 'meta') and a.get_device() not in ids:
            ids.append(a.get_device())
    if not ids:
        return [], []
    from .. import cuda  # (loaded when first used)
    return ids, [cuda.get_rng_state(i) for i in ids]


def set_device_states(devices, states, *, device_type=None):
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == 'meta' or not devices:
        return
    from .. import cuda  # (loaded when first used)
    for device, state in zip(devices, states):
        cuda.set_rng_state(state, device)


def _metadata(tensor):
    return {'shape': tensor.shape, 'dtype': tensor.dtype, 'device': tensor.device}


class _fork_rng:
    """Run under a given RNG state and put the current one back afterwards."""

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        if self.state is not None:
            self.current = get_rng_state()
            set_rng_state(self.state)

    def __exit__(self, *exc):
        if self.state is not None:
            set_rng_state(self.current)


def _rng_state(preserve):
    if not preserve:
        return None
    return get_rng_state()


def _noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


noop_context_fn = _noop_context_fn


class _Frame:
    """One checkpointed call: what recomputation needs, and the recomputed tensors."""

    def __init__(self, fn, args, kwargs, rng_state, recompute_context, check_metadata, early_stop):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.early_stop = early_stop
        # the inputs are kept, as a node keeps what it saves: an in-place change before the
        # backward would make the recomputation wrong, so it is detected the same way
        self.versions = [a._version_counter[0] if isinstance(a, Tensor) else None for a in args]
        self.rng_state = rng_state
        self.recompute_context = recompute_context
        self.metadata = [] if check_metadata else None  # per handle, to check the recomputation
        self.num_saved = 0
        self.recomputed = {}

    def pack(self, tensor):
        handle = self.num_saved
        self.num_saved += 1
        if self.metadata is not None:
            self.metadata.append(_metadata(tensor))
        return handle

    def unpack(self, handle):
        if handle not in self.recomputed:
            self.recompute()
        return self.recomputed.pop(handle)

    def recompute(self):
        collected = []

        def collect(tensor):
            collected.append(tensor.detach())
            if self.early_stop and len(collected) == self.num_saved:
                raise _StopRecomputation
            return None

        for a, version in zip(self.args, self.versions):
            if version is not None and a._version_counter[0] != version:
                Node._raise_modified(a._data, a._version_counter[0], version, a._grad_fn, a._output_nr)
        args = tuple(a.detach().requires_grad_(a._requires_grad) if isinstance(a, Tensor) else a
                     for a in self.args)
        try:
            with _fork_rng(self.rng_state), grad_mode.enable_grad(), self.recompute_context, \
                    saved_tensors_hooks(collect, lambda packed: packed):
                self.fn(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        if self.metadata is not None:
            self.check(collected)
        self.recomputed = dict(enumerate(collected))

    def check(self, collected):
        if len(collected) != self.num_saved:
            raise CheckpointError('leafgrad.utils.checkpoint: A different number of tensors was saved during the '
                                  'original forward and recomputation.\n'
                                  f'Number of tensors saved during forward: {self.num_saved}\n'
                                  f'Number of tensors saved during recomputation: {len(collected)}.\n')
        mismatched = ''
        for idx, (meta, t) in enumerate(zip(self.metadata, collected)):
            now = _metadata(t)
            if now != meta:
                mismatched += f'tensor at position {idx}:\nsaved metadata: {meta}\nrecomputed metadata: {now}\n'
        if mismatched:
            raise CheckpointError('leafgrad.utils.checkpoint: Recomputed values for the following tensors have '
                                  f'different metadata than during the forward pass.\n{mismatched}.\n')


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check, early_stop, args,
                                  kwargs):
    if determinism_check not in ('default', 'none'):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, _rng_state(preserve_rng_state), recompute_context,
                   determinism_check == 'default', early_stop if _early_stop is None else _early_stop)
    with forward_context, saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _rng_state(preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t.detach().requires_grad_(t._requires_grad)
        with _fork_rng(ctx.rng_state), grad_mode.enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o._requires_grad]
        if not pairs:
            raise RuntimeError('none of output has requires_grad=True, this checkpoint() is not necessary')
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(t.grad if isinstance(t, Tensor) else None for t in inputs)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check='default',
               debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)``, keeping its inputs instead of its activations for the
    backward, which recomputes them (see the module docstring)."""
    if use_reentrant is None:
        warnings.warn('leafgrad.utils.checkpoint: the use_reentrant parameter should be passed explicitly. '
                      'Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an '
                      'exception. use_reentrant=False is recommended, but if you need to preserve the current '
                      'default behavior, you can pass use_reentrant=True. Refer to docs for more details on the '
                      'differences between the two variants.', UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop('preserve_rng_state', True)
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError('Passing `context_fn` or `debug` is only supported when use_reentrant=False.')
        if kwargs:
            raise ValueError('Unexpected keyword arguments: ' + ','.join(arg for arg in kwargs))
        if grad_mode.state.grad_enabled and not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            warnings.warn('None of the inputs have requires_grad=True. Gradients will be None', UserWarning,
                          stacklevel=2)
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list or nn.Sequential) on ``input`` in ``segments`` pieces, each but
    the last checkpointed."""
    if use_reentrant is None:
        warnings.warn('leafgrad.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be '
                      'passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not '
                      'passed. use_reentrant=False is recommended, but if you need to preserve the current '
                      'default behavior, you can pass use_reentrant=True. Refer to docs for more details on '
                      'the differences between the two variants.', UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop('preserve_rng_state', True)
    if kwargs:
        raise ValueError('Unexpected keyword arguments: ' + ','.join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, 'children') and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
