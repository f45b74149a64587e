"""Module backward hooks: identity nodes around a module's inputs and outputs.

``register_full_backward_hook(hook)`` calls ``hook(module, grad_input, grad_output)`` once the
gradients with respect to the module's inputs are known. As PyTorch does, the forward wraps the
tensors entering and leaving the module in an identity node (``BackwardHookFunctionBackward``).
The node on the outputs captures ``grad_output`` when the walk reaches it; the node on the inputs
then receives ``grad_input`` and calls the hooks, whose return value replaces ``grad_input``.
When no input requires grad, the hooks run at the output node with ``grad_input`` all None.
Both tuples have one entry per argument (per output), None where it is not a tensor.
"""
import warnings

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


def _call_hooks(module, grad_input, grad_output):
    for hook in tuple(module._backward_hooks.values()):
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
            if not module._backward_hooks:
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
        if not wants_input_grad and module._backward_hooks:
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
