"""The hook-based weight normalisation (torch.nn.utils.weight_norm, deprecated in PyTorch for
parametrizations.weight_norm): ``<name>`` is replaced by parameters ``<name>_g`` (norms) and
``<name>_v`` (directions) and recomputed as g * v / |v| before every forward."""
import warnings

from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ['WeightNorm', 'weight_norm', 'remove_weight_norm']


class WeightNorm:
    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + '_v'), getattr(module, self.name + '_g'), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn('`torch.nn.utils.weight_norm` is deprecated in favor of '
                      '`torch.nn.utils.parametrizations.weight_norm`.', FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f'Cannot register two weight_norm hooks on the same parameter {name}')
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + '_g', Parameter(_norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + '_v', Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + '_g']
        del module._parameters[self.name + '_v']
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name='weight', dim=0):
    """Replace ``module.<name>`` by ``<name>_g`` and ``<name>_v``, recombined before each forward."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name='weight'):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
