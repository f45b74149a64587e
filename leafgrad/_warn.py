"""PyTorch's warnings as leafgrad gives them: the stacklevel that names the first caller outside
leafgrad, and TORCH_WARN_ONCE. Below every other module, so that low-level code (reading nested
data into a tensor) warns as the ops do."""
import sys
import warnings


def user_stacklevel():
    """The stacklevel of a warning that names the first caller outside leafgrad."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get('__name__', '').startswith('leafgrad'):
        frame, level = frame.f_back, level + 1
    return level


_warned_once = set()


def warn_once(message, category=UserWarning, key=None):
    """PyTorch's TORCH_WARN_ONCE: ``message`` once a process, naming the first caller outside
    leafgrad (``key``: once for all the messages of one site of PyTorch's, by that key)."""
    from . import _settings  # (loaded when first used: `import leafgrad` leaves the settings module out)
    key = message if key is None else key
    if key not in _warned_once or _settings.warn_always:
        _warned_once.add(key)
        warnings.warn(message, category, stacklevel=user_stacklevel())
