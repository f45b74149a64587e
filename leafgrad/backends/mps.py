"""``leafgrad.backends.mps``: leafgrad has no Apple-GPU (MPS) backend."""


def is_available():
    """Whether an MPS device can be used: never in leafgrad."""
    return False


def is_built():
    """Whether leafgrad was built with MPS support: no."""
    return False
