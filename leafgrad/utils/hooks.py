"""``leafgrad.utils.hooks``: the handle every ``register_*hook`` returns, for code that keeps
hook tables of its own, and the marks ``torch.save`` reads on a tensor's hooks."""
import warnings

from ..autograd.graph import RemovableHandle

__all__ = ['RemovableHandle', 'unserializable_hook', 'warn_if_has_hooks']


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not saved with its tensor: ``warn_if_has_hooks`` is then
    silent about it."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn about each hook registered on ``tensor`` that saving it would not keep (leafgrad's
    ``save`` keeps none), unless marked with ``unserializable_hook``."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, '__torch_unserializable__'):
            warnings.warn(f'backward hook {hook!r} on tensor will not be serialized.  If this is expected, '
                          'you can decorate the function with @torch.utils.hooks.unserializable_hook '
                          'to suppress this warning', stacklevel=2)


def _tensor_hooks(tensor):
    """The hooks ``tensor.register_hook`` registered, oldest first."""
    node = tensor._grad_fn
    if node is None:
        meta = tensor._meta
        return list(meta.hooks.values()) if meta is not None and meta.hooks else []
    table = node._tensor_pre_hooks
    return list(table.get(tensor._output_nr, {}).values()) if table else []
