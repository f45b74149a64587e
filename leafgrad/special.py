"""leafgrad.special: PyTorch's ``torch.special`` names for the elementwise ops that leafgrad has
(the same functions, recorded under the same nodes as PyTorch records them)."""
from .ops.activation import log_softmax, softmax
from .ops.elementwise import sigmoid as expit
from .ops.pointwise import exp2, logit, sinc, xlogy
from .ops.reduction import logsumexp
from .ops.rounding import RoundBackward1
from .ops.unary import erf, erfc, expm1, log1p
from .ops._util import record, xp


def round(input, *, decimals=0):
    """torch.special.round records RoundBackward1 even with decimals=0."""
    data = input._data
    if data.dtype.kind != 'f':
        from .ops.activation import _DTYPE_LABEL
        raise NotImplementedError(f'"round_vml_cpu" not implemented for \'{_DTYPE_LABEL[data.dtype.name]}\'')
    return record(xp.round(data, decimals).astype(data.dtype, copy=False), RoundBackward1, (input,))[0]


__all__ = ['expit', 'erf', 'erfc', 'exp2', 'expm1', 'log1p', 'logit', 'logsumexp', 'round', 'sinc', 'xlogy',
           'softmax', 'log_softmax']
