"""Distribution: the base class. It holds the batch and event shapes, checks parameters against
``arg_constraints`` when built and values against ``support`` when scored (``validate_args``,
on by default as in PyTorch, off under ``python -O``), and defines what every distribution
shares: ``sample`` as ``rsample`` without gradient, ``perplexity``, ``stddev`` from
``variance``, ``expand``'s bookkeeping, the repr.
"""
import warnings

from .. import ops
from ..autograd.grad_mode import no_grad
from ..tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ['Distribution']


class Distribution:
    """A probability distribution.

    Parameters
    ----------
    batch_shape : Size
        The shape over which parameters are batched.
    event_shape : Size
        The shape of a single sample (without batching).
    validate_args : bool, optional
        Whether to check parameters and values (default: ``Distribution``'s default, True unless
        Python runs with -O).
    """
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn validation on or off for every distribution built afterwards without an explicit
        ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)  # (a slice of a Size is a tuple in leafgrad)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f'{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = '
                              '{}` or initialize the distribution with `validate_args=False` to turn off validation.',
                              stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # nothing can be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # not computed yet (the probs of a distribution given logits)
                value = getattr(self, param)
                if not constraint.check(value).all():
                    raise ValueError(f'Expected parameter {param} ({type(value).__name__} of shape '
                                     f'{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint '
                                     f'{constraint!r}, but found invalid values:\n{value}')
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A distribution of the same kind with its parameters expanded (views, no copies) to
        ``batch_shape``; no checks are repeated."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of one sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """Parameter name -> the Constraint its values must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f'{self.__class__} does not implement mode')

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """Samples of shape ``sample_shape + batch_shape + event_shape``, without gradient."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Reparametrised samples: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """``sample((n,))`` (deprecated in PyTorch)."""
        warnings.warn('`sample_n(n)` will be deprecated. Use `sample((n,))` instead.', FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution along a new dimension 0: of shape
        ``(cardinality,) + batch_shape + event_shape``, or with singleton batch dimensions when
        not ``expand``."""
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return ops.exp(self.entropy())

    def _extended_shape(self, sample_shape=Size()):
        """``sample_shape + batch_shape + event_shape``."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Refuse a ``value`` that is no tensor, whose shape does not fit, or that lies outside
        the support (ValueError, PyTorch's messages)."""
        if not isinstance(value, Tensor):
            raise ValueError('The value argument to log_prob must be a Tensor')
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f'The right-most size of value must match event_shape: {value.size()} vs '
                             f'{self._event_shape}.')
        actual, expected = value.size(), Size(self._batch_shape + self._event_shape)
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f'Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.')
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f'{self.__class__} does not define `support` to enable sample validation. Please '
                          'initialize the distribution with `validate_args=False` to turn off validation.',
                          stacklevel=2)
            return
        if support is None:
            raise AssertionError('support is unexpectedly None')
        if not support.check(value).all():
            raise ValueError(f'Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be '
                             f'within the support ({support!r}) of the distribution {self!r}, but found invalid '
                             f'values:\n{value}')

    def _get_checked_instance(self, cls, _instance=None):
        """A bare new instance for ``expand`` (a subclass with its own ``__init__`` must define
        its own ``expand``)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f'Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom '
                                      '__init__ method must also define a custom .expand() method.')
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, cls, new, batch_shape, **attributes):
        """Finish ``expand``: set ``attributes`` on ``new``, give it ``batch_shape`` (this
        distribution's event shape) and this distribution's validation setting."""
        for name, value in attributes.items():
            setattr(new, name, value)
        super(cls, new).__init__(Size(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expanded_probs_or_logits(self, shape):
        """``probs`` and/or ``logits`` (those this distribution holds) expanded to ``shape``,
        with ``_param`` the one it was given."""
        out = {}
        for name in ('probs', 'logits'):
            if name in self.__dict__:
                out[name] = out['_param'] = self.__dict__[name].expand(shape)
        return out

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ', '.join(f'{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}'
                         for p in names)
        return f'{self.__class__.__name__}({args})'
