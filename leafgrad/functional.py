"""``leafgrad.functional``: the module PyTorch's ``torch.functional`` is, for programs that import
from it (``from torch.functional import einsum``).

It holds the same functions as ``leafgrad.<name>`` (their one home is in ``leafgrad.ops``), for
each name of ``torch.functional`` that leafgrad has; a name leafgrad lacks is absent here too.
"""
import sys

_TORCH_FUNCTIONAL = ('atleast_1d', 'atleast_2d', 'atleast_3d', 'broadcast_shapes', 'broadcast_tensors',
                     'cartesian_prod', 'block_diag', 'cdist', 'chain_matmul', 'einsum', 'istft', 'lu', 'norm',
                     'meshgrid', 'pca_lowrank', 'split', 'stft', 'svd_lowrank', 'tensordot', 'unique',
                     'unique_consecutive', 'unravel_index')

_leafgrad = sys.modules[__package__]
__all__ = [name for name in _TORCH_FUNCTIONAL if hasattr(_leafgrad, name)]
globals().update({name: getattr(_leafgrad, name) for name in __all__})
