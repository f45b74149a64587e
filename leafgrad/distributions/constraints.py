"""Constraints: regions a parameter or a sample must lie in, each with ``check(value)`` giving
a bool tensor over the batch (the ``event_dim`` rightmost dimensions form one event and are
checked together). The names are PyTorch's:

``boolean``, ``cat``, ``corr_cholesky``, ``dependent``, ``greater_than(lower_bound)``,
``greater_than_eq(lower_bound)``, ``independent(constraint, reinterpreted_batch_ndims)``,
``integer_interval(lower_bound, upper_bound)``, ``interval(lower_bound, upper_bound)``,
``half_open_interval(lower_bound, upper_bound)``, ``less_than(upper_bound)``, ``lower_cholesky``,
``lower_triangular``, ``MixtureSameFamilyConstraint(base_constraint)``, ``multinomial``,
``nonnegative``, ``nonnegative_integer``, ``one_hot``, ``positive``, ``positive_definite``,
``positive_semidefinite``, ``positive_integer``, ``real``, ``real_vector``, ``simplex``,
``square``, ``stack``, ``symmetric``, ``unit_interval``.
"""

from .. import backend, creation, linalg, ops
from .._type_info import finfo

__all__ = ['Constraint', 'boolean', 'cat', 'corr_cholesky', 'dependent', 'dependent_property', 'greater_than',
           'greater_than_eq', 'independent', 'integer_interval', 'interval', 'half_open_interval', 'is_dependent',
           'less_than', 'lower_cholesky', 'lower_triangular', 'MixtureSameFamilyConstraint', 'multinomial',
           'nonnegative', 'nonnegative_integer', 'one_hot', 'positive', 'positive_semidefinite', 'positive_definite',
           'positive_integer', 'real', 'real_vector', 'simplex', 'square', 'stack', 'symmetric', 'unit_interval']


class Constraint:
    """A region over which a variable is valid.

    ``is_discrete``: whether the region is discrete; ``event_dim``: how many rightmost dimensions
    make one event (``check`` reduces over them).
    """
    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor of shape ``sample_shape + batch_shape``: whether each event satisfies
        the constraint."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + '()'


class _Dependent(Constraint):
    """A placeholder for a variable whose support depends on other variables; nothing to check.
    ``is_discrete`` and ``event_dim`` may be given when they are known statically; otherwise
    reading them raises NotImplementedError."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError('.is_discrete cannot be determined statically')
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError('.event_dim cannot be determined statically')
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """``dependent(is_discrete=True, event_dim=1)``: a dependent constraint with those known."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError('Cannot determine validity of dependent constraint')


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent one (validation skips those)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@constraints.dependent_property``: a property on an instance (a distribution's support
    computed from its parameters), a dependent constraint on the class."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        super().__init__(fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        """``@dependent_property(is_discrete=True, event_dim=1)``."""
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more dimensions in each event: an
    event is valid when all its entries are."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f'base_constraint must be a Constraint, got {type(base_constraint).__name__}')
        if not isinstance(reinterpreted_batch_ndims, int):
            raise AssertionError('reinterpreted_batch_ndims must be an int, got '
                                 f'{type(reinterpreted_batch_ndims).__name__}')
        if reinterpreted_batch_ndims < 0:
            raise AssertionError(f'reinterpreted_batch_ndims must be >= 0, got {reinterpreted_batch_ndims}')
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f'Expected value.dim() >= {self.base_constraint.event_dim + n} but got {value.dim()}')
        return result.reshape(result.shape[:result.dim() - n] + (-1,)).all(-1)

    def __repr__(self):
        return f'{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})'


class MixtureSameFamilyConstraint(Constraint):
    """The support of a MixtureSameFamily: its components' support, checked with the component
    dimension put back."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f'base_constraint must be a Constraint, got {type(base_constraint).__name__}')
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f'Expected value.dim() >= {self.event_dim} but got {value.dim()}')
        return result.reshape(result.shape[:value.dim() - self.event_dim] + (-1,)).all(-1)

    def __repr__(self):
        return f'{type(self).__name__}({self.base_constraint!r})'


class _Boolean(Constraint):
    """The two values 0 and 1."""
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors."""
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


def _bounds_repr(self, *names):
    return type(self).__name__[1:] + '(' + ', '.join(f'{n}={getattr(self, n)}' for n in names) + ')'


class _IntegerInterval(Constraint):
    """The integers in [lower_bound, upper_bound]."""
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, 'lower_bound', 'upper_bound')


class _IntegerLessThan(Constraint):
    """The integers up to upper_bound."""
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, 'upper_bound')


class _IntegerGreaterThan(Constraint):
    """The integers from lower_bound on."""
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return _bounds_repr(self, 'lower_bound')


class _Real(Constraint):
    """The extended real line [-inf, inf] (NaN is not in it)."""

    def check(self, value):
        return value == value


class _GreaterThan(Constraint):
    """(lower_bound, inf]."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return _bounds_repr(self, 'lower_bound')


class _GreaterThanEq(Constraint):
    """[lower_bound, inf)."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return _bounds_repr(self, 'lower_bound')


class _LessThan(Constraint):
    """[-inf, upper_bound)."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return _bounds_repr(self, 'upper_bound')


class _Interval(Constraint):
    """[lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, 'lower_bound', 'upper_bound')


class _HalfOpenInterval(Constraint):
    """[lower_bound, upper_bound)."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, 'lower_bound', 'upper_bound')


class _Simplex(Constraint):
    """The unit simplex in the last dimension: x >= 0 and sum(x) = 1 (within 1e-6)."""
    event_dim = 1

    def check(self, value):
        return ops.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer counts summing to at most upper_bound (PyTorch checks this weaker
    condition rather than equality)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)


def _is_lower_triangular(value):
    return (value.tril() == value).view(value.shape[:-2] + (-1,)).min(-1)[0]


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""
    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        return _is_lower_triangular(value) & (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky with rows of unit length."""
    event_dim = 2

    def check(self, value):
        tol = finfo(value.dtype).eps * value.size(-1) * 10  # 10: a fudge factor, as PyTorch's
        row_norm = linalg.norm(value.detach(), dim=-1)
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    """Square matrices."""
    event_dim = 2

    def check(self, value):
        return creation.full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=backend.bool_)


class _Symmetric(_Square):
    """Symmetric square matrices (to within an absolute 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        return ops.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with no negative eigenvalue."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factorization."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return linalg.cholesky_ex(value).info.eq(0)


def _check_dim(dim, value):
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(f'dim {dim} out of range for value with {value.dim()} dimensions')


class _Cat(Constraint):
    """Constraints ``cseq`` applied to consecutive slices (of ``lengths``) along ``dim``, as
    ``cat`` joins them."""

    def __init__(self, cseq, dim=0, lengths=None):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError('All elements of cseq must be Constraint instances')
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f'lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})')
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        _check_dim(self.dim, value)
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start = start + length
        return ops.cat(checks, self.dim)


class _Stack(Constraint):
    """Constraints ``cseq`` applied to the slices along ``dim``, as ``stack`` joins them."""

    def __init__(self, cseq, dim=0):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError('All elements of cseq must be Constraint instances')
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        _check_dim(self.dim, value)
        slices = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return ops.stack([c.check(v) for v, c in zip(slices, self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
