"""leafgrad.cpu.amp: the deprecated ``torch.cpu.amp.autocast`` and ``GradScaler``."""
from ..amp._device_amp import CpuAutocast as autocast, CpuGradScaler as GradScaler

__all__ = ['autocast', 'GradScaler']
