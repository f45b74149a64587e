"""Pruning: zero out parts of a module's tensor through a mask kept beside it.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, stores a ``<name>_mask`` buffer
and makes ``module.<name>`` a plain attribute equal to ``mask * orig``, recomputed by a forward
pre-hook (the pruning method itself) before every call, so gradients reach ``<name>_orig`` only
where the mask is one. Pruning the same tensor again combines the masks in a ``PruningContainer``:
the new method sees only what the earlier masks kept (the entries still one for unstructured
methods, the channels not yet emptied for structured ones). ``remove`` makes the pruning
permanent: ``<name>`` becomes a parameter again, holding the pruned values.

>>> m = nn.Linear(4, 2)
>>> _ = prune.l1_unstructured(m, 'weight', amount=3)
>>> int((m.weight == 0).sum()), sorted(n for n, _ in m.named_parameters())
(3, ['bias', 'weight_orig'])
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import creation
from ...tensor import Tensor
from .convert_parameters import parameters_to_vector

__all__ = ['BasePruningMethod', 'PruningContainer', 'Identity', 'RandomUnstructured', 'L1Unstructured',
           'RandomStructured', 'LnStructured', 'CustomFromMask', 'identity', 'random_unstructured',
           'l1_unstructured', 'random_structured', 'ln_structured', 'global_unstructured', 'custom_from_mask',
           'remove', 'is_pruned']


class BasePruningMethod(ABC):
    """A way to compute a mask for a tensor; also the forward pre-hook that reapplies it.

    Subclasses set ``PRUNING_TYPE`` ('unstructured', 'structured' with a ``dim``, or 'global') and
    implement ``compute_mask(t, default_mask)``, which returns a mask no larger than
    ``default_mask`` (the entries already pruned stay pruned)."""
    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for ``t``, given the mask ``default_mask`` of what earlier pruning kept."""

    def apply_mask(self, module):
        """``<name>_mask * <name>_orig`` of the tensor this method prunes."""
        if self._tensor_name is None:
            raise AssertionError(f'Module {module} has to be pruned')
        mask = getattr(module, self._tensor_name + '_mask')
        orig = getattr(module, self._tensor_name + '_orig')
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, combined with the pruning
        already on that tensor; returns the hook now in charge of it."""
        method = _combined_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f'importance_scores should have the same shape as parameter {name} of {module}, '
                                 f'got {importance_scores.shape} vs {orig.shape}')
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + '_orig', orig)
            del module._parameters[name]
            default_mask = creation.ones_like(orig)
        else:
            default_mask = getattr(module, name + '_mask').detach().clone()
        try:
            module.register_buffer(name + '_mask', method.compute_mask(importance_scores, default_mask=default_mask))
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # the parameter goes back where it was
                module.register_parameter(name, getattr(module, name + '_orig'))
                del module._parameters[name + '_orig']
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times its mask, computed from ``importance_scores`` (``t`` itself by default)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f'importance_scores should have the same shape as tensor t, '
                                 f'got {importance_scores.shape} vs {t.shape}')
        if default_mask is None:
            default_mask = creation.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` is a parameter again, with the pruned values."""
        if self._tensor_name is None:
            raise AssertionError(f'Module {module} has to be pruned before pruning can be removed')
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + '_orig']
        orig.data = weight.data
        del module._parameters[name + '_orig']
        del module._buffers[name + '_mask']
        setattr(module, name, orig)


def _combined_method(cls, module, name, *args, **kwargs):
    """The new method, or the container that now holds it after the method already pruning
    ``name`` (whose hook is taken off: the combined one replaces it)."""
    found = [(key, hook) for key, hook in module._forward_pre_hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f'Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. '
                             'Use a PruningContainer.')
    for key, _ in found:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not found:
        return method
    old = found[0][1]
    if not isinstance(old, PruningContainer):
        old = PruningContainer(old)
    old.add_pruning_method(method)
    return old


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one tensor; the newest computes the mask, on what
    the earlier ones kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f'{type(method)} is not a BasePruningMethod subclass')
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The newest method's mask over the part of ``t`` that ``default_mask`` still keeps:
        the unpruned entries (unstructured), the channels along ``dim`` not yet all zero
        (structured), or everything (global)."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == 'unstructured':
            kept = default_mask == 1
        elif kind == 'structured':
            if not hasattr(method, 'dim'):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                     'defined.')
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f'Index is out of bounds for tensor with dimensions {ndim}')
            kept = [slice(None)] * ndim
            kept[dim] = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            kept = tuple(kept)
        elif kind == 'global':
            kept = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f'Unrecognized PRUNING_TYPE {kind}')
        mask[kept] = method.compute_mask(t[kept], default_mask=default_mask[kept]).to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: a mask of ones."""
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction of them) chosen at random."""
    PRUNING_TYPE = 'unstructured'

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _count_to_prune(self.amount, t.nelement())
        mask = default_mask.clone()
        if count != 0:
            mask.view(-1)[creation.rand_like(t).view(-1).topk(count).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value."""
    PRUNING_TYPE = 'unstructured'

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        count = _count_to_prune(self.amount, t.nelement())
        mask = default_mask.clone()
        if count != 0:
            mask.view(-1)[t.abs().view(-1).topk(count, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""
    PRUNING_TYPE = 'structured'

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        count = _count_to_prune(self.amount, channels)
        if count == 0:
            return default_mask
        score = creation.rand(channels)
        return _channel_mask(t, self.dim, score > score.kthvalue(count).values) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest ``n``-norm."""
    PRUNING_TYPE = 'structured'

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        channels = t.shape[self.dim]
        count = _count_to_prune(self.amount, channels)
        dim = self.dim % t.dim()
        norms = t.norm(p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        kept = norms.topk(channels - count, largest=True).indices
        if count == 0:
            return default_mask
        return _channel_mask(t, self.dim, kept) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is zero."""
    PRUNING_TYPE = 'global'

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f'default_mask shape {default_mask.shape} must match self.mask shape '
                                 f'{self.mask.shape}')
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the tensors ``(module, name)`` of ``parameters`` as one: ``pruning_method`` (an
    unstructured method) chooses among all their entries together, so each tensor loses its own
    share."""
    if not isinstance(parameters, Iterable):
        raise TypeError('global_unstructured(): parameters is not an Iterable')
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError('global_unstructured(): importance_scores must be of type dict')
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([getattr(module, name + '_mask', creation.ones_like(getattr(module, name)))
                                         for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = 'temp'
    method = pruning_method(**kwargs)
    method._tensor_name = 'temp'
    if method.PRUNING_TYPE != 'unstructured':
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f'Found method {pruning_method} of type {method.PRUNING_TYPE}')
    container.add_pruning_method(method)
    mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=mask[start:start + param.numel()].view_as(param))
        start += param.numel()


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent (see ``BasePruningMethod.remove``)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether any submodule of ``module`` has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f'Invalid type for amount: {amount}. Must be int or float.')
    if (amount < 0 if isinstance(amount, numbers.Integral) else not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f'amount={amount} should either be a float in the range [0, 1] or a non-negative integer')


def _count_to_prune(amount, size):
    """How many of ``size`` entries (or channels) ``amount`` prunes: a count, or a rounded share."""
    count = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if isinstance(count, numbers.Integral) and count > size:
        raise ValueError(f'amount={count} should be smaller than the number of parameters to prune={size}')
    return count


def _check_structured(t, dim):
    if len(t.shape) <= 1:
        raise ValueError(f'Structured pruning can only be applied to multidimensional tensors. Found tensor of '
                         f'shape {t.shape} with {len(t.shape)} dims')
    if dim >= t.dim():
        raise IndexError(f'Invalid index {dim} for tensor of size {t.shape}')


def _channel_mask(t, dim, kept):
    """Ones in the channels ``kept`` (indices or a boolean mask) along ``dim``, zeros elsewhere."""
    mask = creation.zeros_like(t)
    index = [slice(None)] * t.dim()
    index[dim] = kept
    mask[tuple(index)] = 1
    return mask
