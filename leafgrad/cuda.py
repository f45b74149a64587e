"""leafgrad.cuda: whether a GPU backend (CuPy with a CUDA device) is usable."""
from . import backend


def is_available():
    return backend.cuda_available()


def device_count():
    if not is_available():
        return 0
    return backend._cupy.cuda.runtime.getDeviceCount()


def current_device():
    backend.module_for('cuda')  # PyTorch's error without CuPy or without a GPU
    return backend._cupy.cuda.Device().id


def manual_seed(seed):
    if is_available():
        backend._cupy.random.seed(seed)


manual_seed_all = manual_seed


def synchronize(device=None):
    if is_available():
        backend._cupy.cuda.Device(device or 0).synchronize()
