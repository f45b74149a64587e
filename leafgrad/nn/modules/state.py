"""Loading a state dict into a module, with PyTorch's report of missing and unexpected keys.

Everything is checked (types, shapes) before anything is copied, so a failed load leaves the
module unchanged.
"""
import warnings
from collections import namedtuple
from collections.abc import Mapping

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..parameter import Parameter

IncompatibleKeys = namedtuple('IncompatibleKeys', ['missing_keys', 'unexpected_keys'])


class _IncompatibleKeys(IncompatibleKeys):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return '<All keys matched successfully>'
        return super().__repr__()

    __str__ = __repr__


def _targets(module):
    """{key: (owning module, attribute name, 'param'|'buffer')} for every entry of state_dict()."""
    out = {}
    for prefix, m in module.named_modules(remove_duplicate=False):
        pre = prefix + '.' if prefix else ''
        for name, p in m._parameters.items():
            if p is not None:
                out.setdefault(pre + name, (m, name, 'param'))
        for name, b in m._buffers.items():
            if b is not None and name not in m._non_persistent_buffers_set:
                out.setdefault(pre + name, (m, name, 'buffer'))
    return out


def load_state_dict(module, state_dict, strict=True, assign=False):
    if not isinstance(state_dict, Mapping):
        raise TypeError(f'Expected state_dict to be dict-like, got {type(state_dict)}.')
    own = module.state_dict(keep_vars=True)
    metadata = getattr(state_dict, '_metadata', None) or {}
    for prefix, m in module.named_modules():
        absent_in_version = getattr(m, '_absent_in_version', None)
        if absent_in_version is not None:
            pre = prefix + '.' if prefix else ''
            for name in absent_in_version(metadata.get(prefix, {}).get('version')):
                if pre + name not in state_dict:
                    del own[pre + name]  # an older checkpoint: not missing, and left as it is
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    errors = []
    for k, target in own.items():
        if k not in state_dict:
            continue
        src = state_dict[k]
        if not isinstance(src, Tensor):
            errors.append(f'While copying the parameter named "{k}", expected torch.Tensor or Tensor-like object '
                          f'from checkpoint but received {type(src)}')
            continue
        if tuple(src.shape) != tuple(target.shape):
            errors.append(f'size mismatch for {k}: copying a param with shape {src.shape} from checkpoint, '
                          f'the shape in current model is {target.shape}.')
    if strict:
        if unexpected:
            errors.insert(0, 'Unexpected key(s) in state_dict: {}. '.format(', '.join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, 'Missing key(s) in state_dict: {}. '.format(', '.join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError('Error(s) in loading state_dict for {}:\n\t{}'.format(
            type(module).__name__, '\n\t'.join(errors)))
    if assign:
        for k, (m, name, kind) in _targets(module).items():
            if k not in state_dict:
                continue
            src = state_dict[k]
            if kind == 'param':
                old = m._parameters[name]
                m._parameters[name] = src if isinstance(src, Parameter) else Parameter(src, old.requires_grad)
            else:
                m._buffers[name] = src
    else:
        with no_grad():
            for k, target in own.items():
                if k not in state_dict:
                    continue
                if target.is_meta and not state_dict[k].is_meta:
                    warnings.warn(f'for {k}: copying from a non-meta parameter in the checkpoint to a meta parameter in '
                                  'the current model, which is a no-op. (Did you mean to pass `assign=True` to assign '
                                  'items in the state dictionary to their corresponding key in the module instead of '
                                  'copying them in place?)', UserWarning, stacklevel=3)
                    continue
                target.copy_(state_dict[k])
    return _IncompatibleKeys(missing, unexpected)
