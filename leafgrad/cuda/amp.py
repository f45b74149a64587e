"""leafgrad.cuda.amp: the deprecated ``torch.cuda.amp.autocast``, ``GradScaler``, ``custom_fwd``
and ``custom_bwd``."""
from ..amp._device_amp import (CudaAutocast as autocast, CudaGradScaler as GradScaler, amp_definitely_not_available,
                               cuda_custom_bwd as custom_bwd, cuda_custom_fwd as custom_fwd)

__all__ = ['amp_definitely_not_available', 'autocast', 'custom_bwd', 'custom_fwd', 'GradScaler']
