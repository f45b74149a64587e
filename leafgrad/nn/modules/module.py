"""nn.Module: parameters, buffers and submodules registered by attribute assignment."""
from __future__ import annotations  # (annotations stay strings: nothing to evaluate at import or per call)

import warnings
from collections import OrderedDict
from typing import Any, Callable, Iterator, Mapping

from ..parameter import Parameter
from ...tensor import Tensor, legacy_type_name
from ...autograd.grad_mode import no_grad
from ...ops.conversion import _parse_to
from ... import creation
from ...autograd.graph import add_hook


def _typename(obj):
    if isinstance(obj, Tensor):
        return legacy_type_name(obj._data)
    module = type(obj).__module__
    return type(obj).__qualname__ if module in ('builtins', None) else f'{module}.{type(obj).__qualname__}'


def _check_name(name, kind):
    if not isinstance(name, str):
        raise TypeError(f'{kind} name should be a string. Got {type(name).__name__}')
    if name == '':
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if '.' in name:
        # PyTorch names the offending name only for modules
        raise KeyError(f'{kind} name can\'t contain "."' + (f', got: {name}' if kind == 'module' else ''))


def _addindent(s, n):
    lines = s.split('\n')
    if len(lines) == 1:
        return s
    return lines[0] + '\n' + '\n'.join(' ' * n + line for line in lines[1:])


# Registrations and removals of module hooks, counted: leafgrad.compile's replays skip the
# module calls they stand for, so a module hook registered or removed since a trace makes the
# next call of what was traced trace again.
hook_changes = [0]


class Module:
    """The base class of every layer and model, PyTorch's ``torch.nn.Module``.

    A subclass makes its parts in ``__init__`` (after ``super().__init__()``) and computes in
    ``forward``; calling the module runs ``forward`` between its hooks. Assigning a
    ``Parameter`` to an attribute registers it as a parameter, a ``Module`` as a submodule
    (``register_buffer`` registers a tensor as a buffer), so that ``parameters()``,
    ``state_dict()``, ``to()``, ``train()``/``eval()`` and ``zero_grad()`` reach everything
    the module holds, recursively, in the order of registration.

    ``training`` says whether the module is in training mode (``train()``, the default) or
    evaluation mode (``eval()``); layers such as dropout and batch normalisation behave
    differently in each.
    """
    training = True
    _version = 1  # the layout of this module's state_dict entries (a checkpoint records it)

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, 'training', True)
        object.__setattr__(self, '_parameters', {})
        object.__setattr__(self, '_buffers', {})
        object.__setattr__(self, '_non_persistent_buffers_set', set())
        object.__setattr__(self, '_modules', {})
        object.__setattr__(self, '_forward_hooks', OrderedDict())
        object.__setattr__(self, '_forward_pre_hooks', OrderedDict())
        object.__setattr__(self, '_backward_hooks', OrderedDict())
        object.__setattr__(self, '_backward_pre_hooks', OrderedDict())
        # which kind the hooks in _backward_hooks are: None before the first, then True (full,
        # register_full_backward_hook) or False (register_backward_hook's); a module has one kind
        object.__setattr__(self, '_is_full_backward_hook', None)
        object.__setattr__(self, '_hooks_with_kwargs', set())
        object.__setattr__(self, '_forward_hooks_always_called', set())

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or
                self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        called = set()  # the forward hooks run so far, for always_call's hooks if something raises
        try:
            for hid, hook in tuple(self._forward_pre_hooks.items()):
                if hid in self._hooks_with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if not (isinstance(res, tuple) and len(res) == 2):
                            raise RuntimeError('forward pre-hook must return None or a tuple of (new_args, '
                                               f'new_kwargs), but got {res}.')
                        args, kwargs = res
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            non_full = bool(self._backward_hooks) and self._is_full_backward_hook is False
            if (self._backward_hooks and not non_full) or self._backward_pre_hooks:
                from .hooks import backward_hook_call  # (loaded when first used: only backward hooks need it)
                out = backward_hook_call(self, args, kwargs, called)
            else:
                out = self._run_forward_hooks(args, kwargs, self.forward(*args, **kwargs), called)
            if non_full:
                from .hooks import attach_non_full_hooks
                attach_non_full_hooks(self, args, out)
            return out
        except Exception:
            if self._forward_hooks_always_called:
                self._run_always_called_hooks(args, kwargs, called)
            raise

    def _run_forward_hooks(self, args, kwargs, out, called):
        for hid, hook in tuple(self._forward_hooks.items()):
            called.add(hid)
            res = hook(self, args, kwargs, out) if hid in self._hooks_with_kwargs else hook(self, args, out)
            if res is not None:
                out = res
        return out

    def _run_always_called_hooks(self, args, kwargs, called):
        """After an exception in the call: the forward hooks registered with always_call=True that
        have not run, given None as the output (as PyTorch); an exception of theirs becomes a
        warning, and the first exception propagates."""
        result = None
        for hid, hook in tuple(self._forward_hooks.items()):
            if hid not in self._forward_hooks_always_called or hid in called:
                continue
            try:
                res = hook(self, args, kwargs, result) if hid in self._hooks_with_kwargs else hook(self, args, result)
                if res is not None:
                    result = res
            except Exception as e:
                warnings.warn('module forward hook with ``always_call=True`` raised an exception that was silenced '
                              f'as another error was raised in forward: {e}', stacklevel=3)

    # ---- registration ------------------------------------------------------------------
    def __setattr__(self, name, value):
        params = self.__dict__.get('_parameters')
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError('cannot assign parameters before Module.__init__() call')
            self._remove_from(name, keep=params)
            params[name] = value
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            params[name] = None
            return
        modules = self.__dict__.get('_modules')
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError('cannot assign module before Module.__init__() call')
            self._remove_from(name, keep=modules)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                '(torch.nn.Module or None expected)')
            modules[name] = None
            return
        buffers = self.__dict__.get('_buffers')
        if isinstance(value, Tensor) and getattr(value, '_is_buffer', False):  # an nn.Buffer
            if buffers is None:
                raise AttributeError('cannot assign buffer before Module.__init__() call')
            self.register_buffer(name, value, value.persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                '(torch.Tensor or None expected)')
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _remove_from(self, name, keep):
        # the dict being assigned to keeps its entry, so a replaced module or parameter keeps its
        # place in the order (PyTorch's named_parameters order after self.decoder = Linear(...))
        for d in (self.__dict__, self._parameters, self._buffers, self._modules):
            if name in d and d is not keep:
                del d[name]
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ('_parameters', '_buffers', '_modules'):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if '_parameters' not in self.__dict__:
            raise AttributeError('cannot assign parameter before Module.__init__() call')
        _check_name(name, 'parameter')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            '(torch.nn.Parameter or None required)')
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             'created explicitly. To express \'{name}\' as a function of another Tensor, compute '
                             'the value in the forward() method.'.replace('{name}', name))
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if '_buffers' not in self.__dict__:
            raise AttributeError('cannot assign buffer before Module.__init__() call')
        _check_name(name, 'buffer')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            '(torch Tensor or None required)')
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f'{_typename(module)} is not a Module subclass')
        _check_name(name, 'module')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        mod = self
        if target == '':
            return mod
        for item in target.split('.'):
            if item not in mod._modules:
                raise AttributeError(f'{mod._get_name()} has no attribute `{item}`')
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition('.')
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f'`{name}` is not an nn.Parameter')
        return mod._parameters[name]

    # ---- iteration -----------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = '',
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if self in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ('.' if prefix else '') + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, m in self._modules.items():
            if m is not None and m not in memo:
                memo.add(m)
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members, prefix='', recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ('.' if module_prefix else '') + k, v

    def named_parameters(self, prefix: str = '', recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = '', recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and gradients ---------------------------------------------------------------
    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's forward in place with ``leafgrad.compile`` and its arguments, as
        PyTorch's ``Module.compile``: the module itself (its state dict's keys unchanged) runs
        compiled from now on; its hooks run around the compiled forward."""
        from ..._compile import compile  # (the compiler loads when first used)
        object.__setattr__(self, 'forward', compile(type(self).forward.__get__(self), *args, **kwargs))

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError('training mode is expected to be boolean')
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p._grad = None
                else:
                    if p._grad._grad_fn is not None:
                        p._grad.detach_()
                    else:
                        p._grad.requires_grad_(False)
                    p._grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        for key, p in self._parameters.items():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            p._data = new._data
            if p._grad is not None:
                p._grad._data = fn(p._grad)._data
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        dtype, device, _, memory_format = _parse_to(args, dict(kwargs))
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f'nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}')
        relayout = kwargs.get('memory_format') is not None  # (as PyTorch: only 4-d and 5-d tensors are laid out)

        def convert(t):
            dt = dtype if t.is_floating_point() else None
            if relayout and t.dim() in (4, 5):
                return t.to(dtype=dt, device=device, memory_format=memory_format)
            return t.to(dtype=dt, device=device)
        return self._apply(convert)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Move the parameters and buffers to ``device`` without copying their values: they are
        uninitialised there (from the 'meta' device, where they have none, this is the way out)."""
        return self._apply(lambda t: creation.empty_like(t, device=device), recurse=recurse)

    def share_memory(self) -> Module:
        """Move the parameters and buffers into shared memory (``Tensor.share_memory_``)."""
        return self._apply(lambda t: t.share_memory_())

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    # ---- hooks ---------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> Any:
        """hook(module, args) (or hook(module, args, kwargs) with_kwargs) before forward; it may
        return new args (or (args, kwargs))."""
        handle = add_hook(self._forward_pre_hooks, hook, hook_changes)
        if with_kwargs:
            self._hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> Any:
        """hook(module, args, output) (or hook(module, args, kwargs, output)) after forward; it may
        return a new output. With ``always_call``, the hook runs (with output None) also when the
        call raises, before the exception propagates."""
        handle = add_hook(self._forward_hooks, hook, hook_changes)
        if with_kwargs:
            self._hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> Any:
        """The deprecated kind of backward hook: ``hook(module, grad_input, grad_output)`` runs as a
        hook of the node that made the module's (first) output, with that node's input and output
        gradients, which are the module's only when its forward is that one node (PyTorch warns
        otherwise, a FutureWarning at each call)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError('Cannot use both regular backward hooks and full backward hooks on a single Module. '
                               'Please use only one of them.')
        object.__setattr__(self, '_is_full_backward_hook', False)
        return add_hook(self._backward_hooks, hook, hook_changes)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> Any:
        if self._is_full_backward_hook is False:
            raise RuntimeError('Cannot use both regular backward hooks and full backward hooks on a single Module. '
                               'Please use only one of them.')
        object.__setattr__(self, '_is_full_backward_hook', True)
        handle = add_hook(self._backward_hooks, hook, hook_changes)
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> Any:
        handle = add_hook(self._backward_pre_hooks, hook, hook_changes)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    # ---- state ---------------------------------------------------------------------------
    def state_dict(self, destination: dict | None = None, prefix: str = '',
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        if hasattr(destination, '_metadata'):
            destination._metadata[prefix[:-1]] = {'version': self._version}
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + '.', keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        from .state import load_state_dict  # (loaded when first used: import leafgrad.nn does not load state)
        return load_state_dict(self, state_dict, strict, assign)

    # ---- printing ------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ''

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split('\n')
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append('(' + key + '): ' + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + '('
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += '\n  ' + '\n  '.join(lines) + '\n'
        main_str += ')'
        return main_str

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._modules) | set(self._buffers))
