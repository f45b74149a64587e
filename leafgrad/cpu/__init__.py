"""leafgrad.cpu: the CPU as a device module, as ``torch.cpu`` (and its deprecated ``amp``)."""
import importlib as _importlib


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return 'cpu'


def synchronize(device=None):
    """Nothing to wait for: NumPy's work is done when its call returns."""


def __getattr__(name):
    if name == 'amp':
        return _importlib.import_module('.amp', __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
