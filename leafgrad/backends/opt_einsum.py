"""``leafgrad.backends.opt_einsum``: leafgrad's ``einsum`` contracts from left to right and never
uses the opt_einsum package, so it is not available, as in PyTorch without opt_einsum:
``enabled`` is False and ``strategy`` None (plain attributes there too: what is assigned is
read back and changes nothing), and ``set_flags`` refuses to turn either on."""
from contextlib import contextmanager

enabled = False
strategy = None


def is_available():
    return False


def get_opt_einsum():
    return None


def set_flags(_enabled=None, _strategy=None):
    """Turning the path optimisation on is refused (PyTorch's ValueError); returns the previous flags."""
    orig = (enabled, None)
    if _enabled:
        raise ValueError(f'opt_einsum is not available, so setting `enabled` to {_enabled} will not reap the '
                         'benefits of calculating an optimal path for einsum. leafgrad.einsum will fall back to '
                         'contracting from left to right. leafgrad does not use opt-einsum.')
    if _enabled is not None:
        globals()['enabled'] = _enabled
    if _strategy is not None:
        raise ValueError(f'opt_einsum is not available, so setting `strategy` to {_strategy} will not be meaningful. '
                         'leafgrad.einsum will bypass path calculation and simply contract from left to right. '
                         'leafgrad does not use opt-einsum.')
    return orig


@contextmanager
def flags(enabled=None, strategy=None):
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)
