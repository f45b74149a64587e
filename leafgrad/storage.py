"""PyTorch's ``torch.storage``: ``UntypedStorage`` (``Tensor.untyped_storage()``) and the
deprecated ``TypedStorage`` (``Tensor.storage()``)."""
from ._storage import TypedStorage, UntypedStorage

__all__ = ['TypedStorage', 'UntypedStorage']
