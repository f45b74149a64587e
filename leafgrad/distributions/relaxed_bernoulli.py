"""RelaxedBernoulli (the binary Concrete / Gumbel-softmax distribution) and its logit,
LogitRelaxedBernoulli: continuous, reparametrised stand-ins for a Bernoulli."""
from numbers import Number

from .. import creation
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (_check_probs_or_logits, broadcast_all, clamp_probs, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ['LogitRelaxedBernoulli', 'RelaxedBernoulli']


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli: (logit(U) + logits) / temperature with U uniform
    (Maddison et al., 2017)."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _check_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if isinstance(given, Number) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        return self._expanded(LogitRelaxedBernoulli, new, batch_shape, temperature=self.temperature,
                              **self._expanded_probs_or_logits(Size(batch_shape)))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(creation.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Values in (0, 1) that concentrate at 0 and 1 as ``temperature`` goes to 0: the sigmoid of
    a LogitRelaxedBernoulli; ``probs`` or ``logits`` as for Bernoulli.

    >>> RelaxedBernoulli(leafgrad.tensor(0.5), probs=leafgrad.tensor([0.3])).event_shape
    leafgrad.Size([])
    """
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
