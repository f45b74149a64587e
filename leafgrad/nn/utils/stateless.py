"""``nn.utils.stateless``: calling a module with other parameters and buffers in place of its own
(``torch.func.functional_call`` is built on it)."""
import contextlib
import warnings

from ...tensor import Tensor

_MISSING = object()


def _untie(module, given):
    """``given`` with each tied name (several names of one tensor in the module) given the value
    passed for one of them; PyTorch's ValueError for different values passed for tied names."""
    names_of = {}
    for name, tensor in _named_tensors(module):
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = {name for name in given if name in tied}
    for name in given_tied:
        names = tied[name]
        if len(names & given_tied) > 1 and len({id(given[n]) for n in names if n in given}) > 1:
            raise ValueError(f'functional_call got multiple values for keys {sorted(names)}, which are tied. '
                             'Consider using tie_weights=False')
    untied = dict(given)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = given[name]
    return untied


def _named_tensors(module):
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


def _owner(module, name):
    *path, leaf = name.split('.')
    for part in path:
        module = getattr(module, part)
    return module, leaf


def _swap(module, name, tensor):
    """Put ``tensor`` (or _MISSING: remove) at ``name``; returns what was there."""
    owner, leaf = _owner(module, name)
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f'{tensor} is not an instance of torch.Tensor')
    for store in (owner._parameters, owner._buffers):
        if leaf in store:
            old = store[leaf]
            if tensor is _MISSING:
                del store[leaf]
            else:
                store[leaf] = tensor
            return old
    old = getattr(owner, leaf, _MISSING)
    if tensor is _MISSING:
        if old is not _MISSING:
            delattr(owner, leaf)
    else:
        object.__setattr__(owner, leaf, tensor)
    return old


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    given = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        own = {name for name, _ in _named_tensors(module)}
        unexpected = sorted(set(given) - own)
        missing = sorted(own - set(given))
        messages = []
        if unexpected:
            messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if messages:
            raise RuntimeError('Error(s) in reparametrizing for {}:\n\t{}'.format(module._get_name(),
                                                                                 '\n\t'.join(messages)))
    originals = {}
    try:
        for name, tensor in given.items():
            originals[name] = _swap(module, name, tensor)
        yield
    finally:
        for name, old in reversed(list(originals.items())):
            new = _swap(module, name, old)
            if name in parameters_and_buffers:
                parameters_and_buffers[name] = new  # (an in-place rebinding inside the call is kept)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    from ..parallel.data_parallel import DataParallel  # (loaded when first used: nn.parallel loads on first use)
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` (name -> tensor) in place of
    the module's own (deprecated: use ``leafgrad.func.functional_call``)."""
    warnings.warn('`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in '
                  'a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in '
                  'replacement.', FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
