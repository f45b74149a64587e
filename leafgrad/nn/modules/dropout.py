"""Dropout: zeroes elements with probability p in training mode, the identity in eval mode."""
from .. import functional as F
from .module import Module


class Dropout(Module):
    _fn = 'dropout'

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f'dropout probability has to be between 0 and 1, but got {p}')
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f'p={self.p}, inplace={self.inplace}'


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) input."""
    _fn = 'dropout1d'


class Dropout2d(Dropout):
    """Zeroes whole channels of (N, C, H, W) input."""
    _fn = 'dropout2d'


class Dropout3d(Dropout):
    """Zeroes whole channels of (N, C, D, H, W) input."""
    _fn = 'dropout3d'


class AlphaDropout(Dropout):
    _fn = 'alpha_dropout'


class FeatureAlphaDropout(Dropout):
    """AlphaDropout of whole channels."""
    _fn = 'feature_alpha_dropout'


__all__ = ['Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'AlphaDropout', 'FeatureAlphaDropout']
