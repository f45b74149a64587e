"""``torch.signal``: signal-processing helpers (``windows``)."""
from . import windows

__all__ = ['windows']
