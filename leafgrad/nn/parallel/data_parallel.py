"""DataParallel as PyTorch runs it without several accelerators: it calls the module."""
from ..modules.module import Module


class DataParallel(Module):
    """Wraps ``module`` (reachable as ``.module``, its state-dict keys prefixed ``module.``) and
    runs it in this process, as PyTorch's DataParallel does when there is no GPU to split the
    batch over. Several processes: ``DistributedDataParallel``."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        from ... import cuda  # (loaded when first used: import leafgrad.nn.parallel does not load cuda)
        if cuda.is_available() and device_ids is not None and len(device_ids) > 1:
            raise ValueError('leafgrad.nn.DataParallel runs the module on one device; to train on several, start '
                             'one process per device and use DistributedDataParallel')
        self.module = module
        self.device_ids = []
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form: ``module(*inputs, **module_kwargs)`` in this process."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
