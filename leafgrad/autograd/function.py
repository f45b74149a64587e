"""Custom autograd functions: ``class MyFn(leafgrad.autograd.Function)`` with static
``forward`` and ``backward``, used as ``MyFn.apply(...)``.

Design note. Each Function subclass gets its own node class, named ``<MyFn>Backward`` as
PyTorch names it. One node is created per ``apply``: it is both the ``ctx`` that ``forward``
and ``backward`` see and the graph node that the outputs point at, so attributes set on
``ctx`` in the forward are there in the backward. ``forward`` runs with grad mode off (its
own ops record nothing); the outputs are then connected to the node. Saved tensors go
through ``Node.save`` and so get the usual in-place version checks and saved-tensor hooks;
an output is saved without keeping the output tensor (no reference cycle).

``backward`` returns one gradient per ``forward`` argument (None for non-tensors). It runs
under the engine's grad mode, so with ``create_graph=True`` the ops it uses are recorded and
a custom Function is twice differentiable when its backward is written with leafgrad ops.
"""
from __future__ import annotations  # (annotations stay strings: nothing evaluated at import or per call)

import functools
import inspect
import sys as _sys
import warnings
from typing import Any, Callable

from . import grad_mode
from .anomaly import anomaly_state, forward_trace
from .graph import Node, SavedOutput, gradient_edge
from .. import backend
from ..creation import zeros, zeros_like
from ..ops._util import sum_to
from ..tensor import Tensor


class _NoneSaved:
    """Stands for a None passed to ``save_for_backward`` (Node.save expects tensors)."""
    __slots__ = ()
    _version_counter = (0,)
    _detached_from = None


_NONE = _NoneSaved()


class FunctionCtx:
    """What ``ctx`` offers ``forward``/``setup_context``/``backward``."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f'save_for_backward can only save variables, but argument {i} is of type '
                                f'{type(t).__name__}')
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs: Any) -> None:
        raise RuntimeError('mark_shared_storage is deprecated. Tensors with shared storages are '
                           'automatically tracked. Note that calls to `set_()` are not tracked')


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ctx) of one ``apply`` of a custom Function."""
    _forward_cls = None
    _runs_without_grads = True

    def __init__(self, next_functions):
        super().__init__(next_functions)
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._arg_is_tensor = ()
        self._input_meta = ()
        self.output_meta = ()

    @property
    def saved_tensors(self):
        return tuple(None if t is _NONE else t for t in Node.saved_tensors.fget(self))

    saved_variables = saved_tensors

    def __repr__(self):
        return f'<leafgrad.autograd.function.{self.name()} object at {hex(id(self))}>'

    def apply(self, *grads):
        if self.materialize_grads:
            # a tensor output that received no gradient gets zeros; a non-tensor output None
            grads = tuple(zeros(shape, dtype=dtype) if g is None and dtype is not None else g
                          for g, (shape, dtype) in zip(grads, self.output_meta))
        cls = self._forward_cls
        backward = cls.backward if cls.backward is not Function.backward or cls.vjp is Function.vjp else cls.vjp
        result = backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return self._validate(result)

    def _validate(self, result):
        """One gradient per forward argument, as PyTorch checks them; returns those of the tensors."""
        expected = len(self._arg_is_tensor)
        if len(result) != expected:
            if len(result) > expected and all(g is None for g in result[expected:]):
                result = result[:expected]  # trailing Nones are allowed
            else:
                raise RuntimeError(f'function {self.name()} returned an incorrect number of gradients '
                                   f'(expected {expected}, got {len(result)})')
        out = []
        k = 0
        for i, (g, is_tensor) in enumerate(zip(result, self._arg_is_tensor)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(f'function {self.name()} returned a gradient different than None at '
                                       f'position {i + 1}, but the corresponding forward input was not a Variable')
                continue
            shape, dtype, needed = self._input_meta[k]
            k += 1
            if g is None or not needed:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise RuntimeError(f'expected Variable or None (got {type(g).__name__})')
            if g._data.shape != shape:
                if not _expandable(shape, g._data.shape):
                    raise RuntimeError(f'Function {self.name()} returned an invalid gradient at index {i} - '
                                       f'got {list(g._data.shape)} but expected shape compatible with {list(shape)}')
                g = sum_to(g, shape)
            if g._data.dtype != dtype:
                g = g.to(backend.from_np(dtype))
            out.append(g)
        return tuple(out)


def _expandable(shape, to):
    if len(shape) > len(to):
        return False
    for s, t in zip(reversed(shape), reversed(to)):
        if s != 1 and s != t:
            return False
    return True


class DelayedError(Node):
    """Put on the gradients of a once_differentiable backward run under create_graph."""
    __slots__ = ('message',)

    def __init__(self, next_functions, message):
        super().__init__(next_functions)
        self.message = message

    def name(self):
        return 'leafgrad::autograd::Error'  # PyTorch: torch::autograd::Error

    def apply(self, *grads):
        raise RuntimeError(self.message)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A backward that is not itself differentiable: it runs without recording, and asking for
    its derivative (create_graph=True, then backward again) raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.state.grad_enabled:
            return outputs
        requiring = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not requiring:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        err = DelayedError(tuple(gradient_edge(a) for a in requiring),
                           'trying to differentiate twice a function that was marked with @once_differentiable')
        wrapped = []
        for o in outs:
            if isinstance(o, Tensor):
                o = o.detach()
                o._grad_fn, o._requires_grad = err, True
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)
    return wrapper


class Function:
    """Base class of custom autograd functions (see the module docstring)."""
    _backward_cls = BackwardCFunction

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__name__ + 'Backward'
        cls._backward_cls = type(name, (BackwardCFunction,),
                                 {'_forward_cls': cls, '__module__': __name__, '__qualname__': name})

    def __init__(self, *args, **kwargs):
        warnings.warn(f'{self.__class__} should not be instantiated. Methods on autograd functions are all '
                      'static, so you should invoke them on the class itself. Instantiating an autograd '
                      'function will raise an error in a future version of PyTorch.', DeprecationWarning,
                      stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError('Legacy autograd function with non-static forward method is deprecated. Please use '
                           'new-style autograd function with static forward method. (Example: '
                           'https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)')

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError('You must implement the forward function for custom autograd.Function.')

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        raise NotImplementedError('setup_context is not implemented.')

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Tensor | None) -> Any:
        raise NotImplementedError('You must implement either the backward or vjp method for your custom '
                                  'autograd.Function to use it with backward mode AD.')

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Tensor | None) -> Any:
        raise NotImplementedError('You must implement the jvp function for custom autograd.Function to use '
                                  'it with forward mode AD.')

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            args = _bind(cls, args, kwargs)
        uses_setup = cls.setup_context is not Function.setup_context
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        record = grad_mode.is_grad_enabled() and any(needs)  # (grad mode, also in inference mode: as PyTorch)
        ctx = cls._backward_cls(tuple(gradient_edge(t) for t in tensor_args) if record else ())
        ctx.needs_input_grad = needs if record else (False,) * len(args)
        ctx._arg_is_tensor = is_tensor

        with grad_mode.no_grad():
            if uses_setup:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)

        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        dirty = ctx.dirty_tensors or ()
        for d in dirty:
            if not any(d is o for o in outputs):
                raise RuntimeError('Some elements marked as dirty during the forward method were not returned as '
                                   'output. The inputs that are modified inplace must all be outputs of the Function.')
        forward_ad = _sys.modules.get('leafgrad.autograd.forward_ad')
        duals = forward_ad is not None and forward_ad._state.propagating and any(
            t._fw_grad is not None for t in tensor_args)
        if not record:
            if duals:
                _forward_tangents(cls, ctx, args, outputs, forward_ad)
            return output
        if anomaly_state.enabled:
            ctx._anomaly_trace = forward_trace()
        ctx._input_meta = tuple((t._data.shape, t._data.dtype, t._requires_grad) for t in tensor_args)
        outputs = _connect_outputs(ctx, outputs, tensor_args, dirty)
        if duals:
            to_save = ctx.to_save
            _forward_tangents(cls, ctx, args, outputs, forward_ad)
            ctx.to_save = to_save
        _save(ctx, outputs, tensor_args)
        return outputs[0] if single else outputs


def _forward_tangents(cls, ctx, args, outputs, forward_ad):
    """Forward mode through a custom Function: ``cls.jvp(ctx, *tangents)`` (a tangent per
    forward argument: zeros for a tensor without one, or None after set_materialize_grads(False);
    None for a non-tensor) gives the outputs' tangents; ``ctx.saved_tensors`` holds what
    ``save_for_forward`` (else ``save_for_backward``) kept."""
    materialize = ctx.materialize_grads  # (set_materialize_grads(False): None for a missing tangent)
    tangents = tuple((a._fw_grad if a._fw_grad is not None else zeros_like(a) if materialize else None)
                     if isinstance(a, Tensor) else None for a in args)
    kept = getattr(ctx, 'saved_for_forward', None)
    if kept is None:
        kept = ctx.to_save or ()
    previous = (ctx._saved, ctx._saved_versions)
    Node.save(ctx, *[_NONE if t is None else t for t in kept])
    try:
        with forward_ad._off():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._saved, ctx._saved_versions = previous
    result = result if isinstance(result, tuple) else (result,)
    tensor_outputs = [o for o in outputs if isinstance(o, Tensor)]
    if len(result) != len(outputs) and len(result) != len(tensor_outputs):
        raise RuntimeError(f'function {cls.__name__}_jvp returned an incorrect number of forward gradients (expected '
                           f'{len(outputs)}, got {len(result)})')
    for o, t in zip(outputs if len(result) == len(outputs) else tensor_outputs, result):
        if isinstance(o, Tensor) and t is not None:
            forward_ad._set(o, t)


def _bind(cls, args, kwargs):
    """Keyword arguments to ``apply`` become positional, with forward's defaults filled in."""
    fn = cls.forward
    params = list(inspect.signature(fn).parameters.values())
    if cls.setup_context is Function.setup_context:
        params = params[1:]  # ctx
    sig = inspect.Signature(params)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args)


def _connect_outputs(ctx, outputs, tensor_args, dirty):
    non_diff = ctx.non_differentiable or ()
    result = []
    meta = []
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            meta.append(((), None))
            result.append(o)
            continue
        meta.append((o._data.shape, o._data.dtype))
        differentiable = o._data.dtype.kind in 'fVc' and not any(o is n for n in non_diff)
        if any(o is d for d in dirty):
            if o._requires_grad and o._grad_fn is None:
                raise RuntimeError('a leaf Variable that requires grad has been used in an in-place operation.')
            o._bump_version()
        elif any(o is t for t in tensor_args):
            # An input returned unchanged: the output is a new tensor over the same data
            # (PyTorch makes it a view), so that the input keeps its own history. (Any other
            # tensor is taken over by this node, history and all, as PyTorch does.)
            alias = Tensor._wrap(o._data)
            alias._version_counter = o._version_counter
            alias._base = o
            o = alias
        if not differentiable:
            o._requires_grad = False
            o._grad_fn = None
        else:
            o._grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
        result.append(o)
    ctx.num_outputs = len(outputs)
    ctx.output_meta = tuple((s, _dtype(d)) for s, d in meta)
    return tuple(result)


def _dtype(np_dtype):
    if np_dtype is None:
        return None
    return backend.from_np(np_dtype)


def _save(ctx, outputs, tensor_args):
    to_save = ctx.to_save
    if not to_save:
        return
    saved = []
    for t in to_save:
        if t is None:
            saved.append(_NONE)
        elif any(t is o for o in outputs) and t._grad_fn is ctx:
            saved.append(SavedOutput(t))  # not the tensor itself: no cycle output -> ctx -> output
        else:
            saved.append(t)
    ctx.to_save = None
    ctx.save(*saved)


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass


__all__ = ['Function', 'FunctionCtx', 'BackwardCFunction', 'once_differentiable', 'InplaceFunction']
