"""Reverse-mode automatic differentiation: ``backward`` and ``grad``, grad modes, anomaly
detection; and, loaded on first use, the toolkit: ``Function`` (custom ops, function.py),
``gradcheck``/``gradgradcheck`` (gradcheck.py), ``functional`` (vjp, jvp, jacobian, hessian,
hvp, vhp) and ``graph`` (Node, saved_tensors_hooks, save_on_cpu)."""
from __future__ import annotations  # (annotations stay strings: nothing to evaluate at import or per call)

import importlib
import sys
import warnings
from typing import TYPE_CHECKING

from . import grad_mode, graph
from .anomaly import detect_anomaly, set_detect_anomaly, is_anomaly_enabled, is_anomaly_check_nan_enabled
from . import anomaly as anomaly_mode  # (PyTorch's name of the module: importable by it too)
from .engine import _MaybeTensors, _Tensors, _as_tuple, _make_grads, _root_edges, backward, run_backward
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled, set_multithreading_enabled
from .graph import Node, gradient_edge

backward.__module__ = __name__  # (written in engine.py; its public home, torch.autograd's, names it in checkpoints)

if TYPE_CHECKING:
    from ..tensor import Tensor


def memory_report(*roots):
    """The bytes the graph leading to ``roots`` saved for backward, and what backward() will
    free: see ``leafgrad.autograd.memory`` (loaded on first use)."""
    from .memory import memory_report as report  # (loaded when first used: not at `import leafgrad`)
    return report(*roots)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad(..., is_grads_batched=True): one backward per row of each grad_output, the rows
    carried as a batch by vmap (as PyTorch); an unused input's materialized gradient is
    unbatched zeros, as PyTorch's."""
    # (vmap carries the batch, as PyTorch's is_grads_batched does with its vmap; here, not at the
    # top: vmap is not loaded at `import leafgrad`, and it imports this package)
    from .._vmap import vmap
    from ..creation import zeros_like  # (creation imports this package)
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    for i, (output, rows) in enumerate(zip(outputs, _as_tuple(grad_outputs))):
        if isinstance(rows, _tensor.Tensor) and rows.shape[1:] != output.shape:
            raise RuntimeError(
                'If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch '
                'dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding '
                f'output, but a mismatch was detected: grad_output[{i}] has a shape of {_tensor.Size(rows.shape[1:])} and '
                f'output[{i}] has a shape of {output.shape}. If you only want some tensors in `grad_output` to be '
                'considered batched, consider using vmap.')
    unused = []  # (vmap returns tensors only: the inputs that get no gradient are put back after)

    def vjp(*rows):
        grads = grad(outputs, inputs, rows, retain_graph, create_graph, allow_unused=allow_unused)
        unused[:] = [g is None for g in grads]
        return tuple(g for g in grads if g is not None)
    batched = iter(vmap(vjp)(*_as_tuple(grad_outputs)))
    return tuple((zeros_like(t) if materialize_grads else None) if none else next(batched)
                 for t, none in zip(inputs, unused))


def grad(outputs: _Tensors, inputs: _Tensors, grad_outputs: _MaybeTensors = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, returned rather than accumulated.

    Parameters
    ----------
    outputs
        The roots of the differentiated function.
    inputs
        The tensors to differentiate with respect to; nothing is accumulated into their ``.grad``.
    grad_outputs
        The gradient with respect to each output (``None`` for a scalar output: 1).
    retain_graph
        Keep what the graph saved (default: ``create_graph``).
    create_graph
        Record the backward pass, so that the returned gradients can be differentiated again.
    only_inputs
        Ignored, as in PyTorch (where it is deprecated: ``False`` warns).
    allow_unused
        Return ``None`` for an input the outputs do not depend on, instead of raising.
    is_grads_batched
        The first dimension of each ``grad_outputs`` tensor is a batch: one vector-Jacobian
        product per row, computed by ``vmap``.
    materialize_grads
        Return zeros instead of ``None`` for unused inputs (implies ``allow_unused``).

    Returns
    -------
    tuple
        One gradient per input, in order.
    """
    if not only_inputs:
        warnings.warn('only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate '
                      'gradient for other parts of the graph, please use torch.autograd.backward.', FutureWarning,
                      stacklevel=2)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused or materialize_grads, materialize_grads)
    if materialize_grads and allow_unused is False:
        raise ValueError('Expected allow_unused to be True or not passed when materialize_grads=True, '
                         'but got: allow_unused=False.')
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError('`inputs` argument to `grad()` cannot be empty.')
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f'grad requires one grad_output per output: got {len(grad_outputs)} '
                           f'grad_outputs and {len(outputs)} outputs')
    if retain_graph is None:
        retain_graph = create_graph
    # Outputs that do not require grad contribute nothing (PyTorch skips them too).
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o._requires_grad]
    outs = [o for o, _ in pairs]
    grads = _make_grads(outs, [g for _, g in pairs])  # (first, as PyTorch: 'only for scalar outputs')
    if not pairs:
        raise RuntimeError('element 0 of tensors does not require grad and does not have a grad_fn')
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError('One of the differentiated Tensors does not require grad')
    edges = _root_edges(outs)
    input_edges = [gradient_edge(t) for t in inputs]
    captured = run_backward(edges, grads, retain_graph, create_graph, input_edges, capture=True)
    result = []
    made = {}  # one gradient reaching two inputs (through a clone, an add) is one tensor, as in PyTorch
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is not None and (id(g), t._data.dtype) in made:
            result.append(made[id(g), t._data.dtype])
            continue
        if g is None:
            if materialize_grads:
                from ..creation import zeros_like  # (creation imports this package)
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f'The differentiated Tensor at index {i} appears to not have been '
                                   'used in the graph. Set allow_unused=True if this is the desired behavior.')
        else:
            key = id(g), t._data.dtype
            if g._data.dtype != t._data.dtype:
                g = g.to(t.dtype)
            if not create_graph and g.requires_grad and _walked_in_grad_mode():
                g = g.detach()  # (a batched walk records what only create_graph keeps)
            made[key] = g
        result.append(g)
    return tuple(result)


def _walked_in_grad_mode():
    """Whether the walk just run took its derivatives with grad mode on (one under vmap does, see
    ``engine.run_backward``). Otherwise a gradient is returned as the walk made it, as PyTorch
    returns it: a view of what it came from (the gradient of a sum is an expand of the output's),
    or a tensor a hook or ``grad_outputs`` gave, requiring grad as it does."""
    vmap = sys.modules.get('leafgrad._vmap')  # (active only once loaded; grad does not load it)
    return vmap is not None and vmap.active()


_LAZY = {'Function': 'function', 'FunctionCtx': 'function', 'once_differentiable': 'function',
         'InplaceFunction': 'function', 'gradgradcheck': 'gradcheck', 'GradcheckError': 'gradcheck',
         'Variable': 'variable'}


def __getattr__(name):
    # The toolkit loads on first use, so that `import leafgrad` stays fast.
    if name in _LAZY:
        return getattr(importlib.import_module(f'.{_LAZY[name]}', __name__), name)
    if name in ('function', 'functional', 'profiler', 'profiler_util', 'forward_ad'):
        return importlib.import_module(f'.{name}', __name__)
    raise AttributeError(f"module 'leafgrad.autograd' has no attribute '{name}'")


__all__ = ['backward', 'grad', 'no_grad', 'enable_grad', 'set_grad_enabled', 'set_multithreading_enabled',
           'inference_mode', 'grad_mode',
           'Node', 'graph', 'Function', 'once_differentiable', 'gradcheck', 'gradgradcheck', 'functional',
           'detect_anomaly', 'set_detect_anomaly', 'is_anomaly_enabled', 'is_anomaly_check_nan_enabled']


class _AutogradModule(type(grad_mode)):
    """``leafgrad.autograd.gradcheck`` is the function, as in PyTorch, although a submodule of
    the same name exists: importing a submodule sets the package's attribute of its name, and
    this property ignores that."""

    @property
    def gradcheck(self):
        from .gradcheck import gradcheck  # (loaded when first used: not at `import leafgrad`)
        return gradcheck

    @gradcheck.setter
    def gradcheck(self, value):
        pass


from .. import tensor as _tensor  # noqa: E402  (tensor.py imports this package first)
sys.modules[__name__].__class__ = _AutogradModule
sys.modules[__name__ + '.anomaly_mode'] = anomaly_mode
