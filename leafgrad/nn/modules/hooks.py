"""Module backward hooks: identity nodes around a module's inputs and outputs.

``register_full_backward_hook(hook)`` calls ``hook(module, grad_input, grad_output)`` once the
gradients with respect to the module's inputs are known. As PyTorch does, the forward wraps the
tensors entering and leaving the module in an identity node (``BackwardHookFunctionBackward``).
The node on the outputs captures ``grad_output`` when the walk reaches it; the node on the inputs
then receives ``grad_input`` and calls the hooks, whose return value replaces ``grad_input``.
When no input requires grad, the hooks run at the output node with ``grad_input`` all None.
Both tuples have one entry per argument (per output), None where it is not a tensor.

``register_backward_hook(hook)``, the deprecated kind, is a hook on the node that made the
module's first output tensor: ``grad_input`` and ``grad_output`` are that node's, which are the
module's only when its forward is that one node. PyTorch says so in a FutureWarning at each call
where it can tell they are not; ``attach_non_full_hooks`` makes the same checks.
"""
import warnings
import weakref

from ...ops._util import Node, record_many
from ...tensor import Tensor


class BackwardHookFunctionBackward(Node):
    """Identity on several tensors: each gradient passes through unchanged."""

    def apply(self, *grads):
        return grads


def _identity(tensors):
    """New tensors with the same data, recorded behind one identity node (None if nothing
    needs grad)."""
    outs, node = record_many([t._data for t in tensors], BackwardHookFunctionBackward, tensors)
    if node is None:
        return tensors, None
    for o, t in zip(outs, tensors):
        o._version_counter = t._version_counter  # an identity view: in-place changes are shared
        if not t._requires_grad:
            o._grad_fn, o._requires_grad = None, False
    return outs, node


def _split(values):
    """The tensors in a flat argument tuple (or a single tensor), with their positions."""
    if isinstance(values, Tensor):
        return [values], [0], True
    pos = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    return [values[i] for i in pos], pos, False


def _rebuild(values, pos, new, single):
    if single:
        return new[0]
    values = list(values)
    for i, t in zip(pos, new):
        values[i] = t
    return tuple(values)


def _full_hooks(module):
    return tuple(module._backward_hooks.values()) if module._is_full_backward_hook else ()


def _call_hooks(module, grad_input, grad_output):
    for hook in _full_hooks(module):
        res = hook(module, grad_input, grad_output)
        if res is None:
            continue
        res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        if len(res) != len(grad_input):
            raise RuntimeError(f'Backward hook returned an invalid number of grad_input, got {len(res)}, but '
                               f'expected {len(grad_input)}')
        grad_input = res
    return grad_input


def _run_pre_hooks(module, grad_output):
    for hook in tuple(module._backward_pre_hooks.values()):
        res = hook(module, grad_output)
        if res is not None:
            grad_output = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    return grad_output


def _full(grads, positions, n):
    """Gradients at the tensors' positions of an n-long argument tuple, None elsewhere (PyTorch
    lists one entry per argument, tensor or not)."""
    out = [None] * n
    for pos, g in zip(positions, grads):
        out[pos] = g
    return tuple(out)


def backward_hook_call(module, args, kwargs, called):
    """Run ``module.forward`` with its forward hooks, wrapped so the backward hooks fire."""
    captured = {}
    n_inputs = len(args)
    in_tensors, in_pos, _ = _split(args)
    wants_input_grad = any(t._requires_grad for t in in_tensors)
    if wants_input_grad:
        new_in, in_node = _identity(in_tensors)
        args = _rebuild(args, in_pos, new_in, False)

        def on_inputs(grads):
            if not _full_hooks(module):
                return None
            full = _call_hooks(module, _full(grads, in_pos, n_inputs), captured.get('grad_output', ()))
            return [full[pos] for pos in in_pos]
        in_node.register_prehook(on_inputs)

    out = module._run_forward_hooks(args, kwargs, module.forward(*args, **kwargs), called)

    packed = out if isinstance(out, (Tensor, tuple)) else (out,)
    out_tensors, out_pos, single = _split(packed)
    if not any(t._requires_grad for t in out_tensors):
        return out
    n_outputs = 1 if single else len(packed)
    new_out, out_node = _identity(out_tensors)

    def on_outputs(grads):
        full = _full(grads, out_pos, n_outputs)
        if module._backward_pre_hooks:
            full = _run_pre_hooks(module, full)
        captured['grad_output'] = full
        if not wants_input_grad and _full_hooks(module):
            warnings.warn('Full backward hook is firing when gradients are computed with respect to module outputs '
                          'since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/'
                          'torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.',
                          UserWarning, stacklevel=2)
            _call_hooks(module, (None,) * n_inputs, full)
        return [full[pos] for pos in out_pos]
    out_node.register_prehook(on_outputs)
    if not isinstance(out, (Tensor, tuple)):
        return new_out[0]
    return _rebuild(out, out_pos, new_out, single)


_NESTED = ('Using a non-full backward hook when outputs are nested in python data structure is deprecated and will be '
           'removed in future versions. This hook will be missing some grad_output.')
_MANY_OUTPUT_NODES = ('Using a non-full backward hook when outputs are generated by different autograd Nodes is '
                      'deprecated and will be removed in future versions. This hook will be missing some grad_output. '
                      'Please use register_full_backward_hook to get the documented behavior.')
_MANY_NODES = ('Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and '
               'will be removed in future versions. This hook will be missing some grad_input. Please use '
               'register_full_backward_hook to get the documented behavior.')


def _not_tensors(what, missing):
    return (f'Using non-full backward hooks on a Module that {what} a single Tensor or a tuple of Tensors is '
            f'deprecated and will be removed in future versions. This hook will be missing some of the {missing}. '
            'Please use register_full_backward_hook to get the documented behavior.')


def attach_non_full_hooks(module, args, result):
    """Register the module's non-full backward hooks on the node that made its first output tensor
    (searched as PyTorch does: first items of sequences, first tensor value of dicts)."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    ref = weakref.ref(module)
    for hook in tuple(module._backward_hooks.values()):
        grad_fn.register_hook(_module_hook(hook, ref))
    _warn_if_not_the_module_grads(args, result, grad_fn)


def _module_hook(hook, ref):
    def on_node(grad_inputs, grad_outputs):
        module = ref()
        if module is None:
            raise RuntimeError('You are trying to call the hook of a dead Module!')
        return hook(module, grad_inputs, grad_outputs)
    return on_node


def _warn_if_not_the_module_grads(inputs, result, grad_fn):
    """PyTorch's FutureWarning where the node's gradients are visibly not the module's: outputs
    or inputs that are not tensors, outputs from several nodes, or a forward of several nodes
    (the node's inputs are not just the module inputs' nodes)."""
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            return warnings.warn(_not_tensors('does not return', 'grad_output'), FutureWarning, stacklevel=4)
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            return warnings.warn(_not_tensors('does not take as input', 'grad_input'), FutureWarning, stacklevel=4)
    else:
        inputs = (inputs,)
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and grad_fn not in out_nodes):
        warnings.warn(_NESTED, FutureWarning, stacklevel=4)
    elif len(out_nodes) > 1:
        warnings.warn(_MANY_OUTPUT_NODES, FutureWarning, stacklevel=4)
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
        warnings.warn(_MANY_NODES, FutureWarning, stacklevel=4)
