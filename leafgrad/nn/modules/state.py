"""Loading a state dict into a module, with PyTorch's report of missing and unexpected keys."""
from collections import namedtuple

from ...autograd.grad_mode import no_grad

IncompatibleKeys = namedtuple('IncompatibleKeys', ['missing_keys', 'unexpected_keys'])


class _IncompatibleKeys(IncompatibleKeys):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return '<All keys matched successfully>'
        return super().__repr__()

    __str__ = __repr__


def load_state_dict(module, state_dict, strict=True, assign=False):
    own = module.state_dict(keep_vars=True)
    missing = [k for k in own if k not in state_dict]
    unexpected = [k for k in state_dict if k not in own]
    errors = []
    for k, target in own.items():
        if k not in state_dict:
            continue
        src = state_dict[k]
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
    with no_grad():
        for k, target in own.items():
            if k in state_dict:
                src = state_dict[k]
                target.copy_(src)
    return _IncompatibleKeys(missing, unexpected)
