"""``leafgrad.torch_version``: ``TorchVersion``, the kind of string ``torch.__version__`` is, which
programs compare with a version (``torch.__version__ >= '2.0'``, ``>= (2, 1)``)."""
import re

__all__ = ['TorchVersion']

# (a pattern, compiled by re when first matched: compiling it took ~0.4 ms of `import leafgrad`)
_VERSION = r'v?(\d+(?:\.\d+)*)((?:a|b|rc|\.?dev|\.?post)\d*)*(\+[0-9A-Za-z.]+)?$'


def _key(version):
    """An ordering key, as PEP 440 orders the versions programs compare: the release numbers,
    a pre-release or dev build before the release, a local label ('+cpu') after it."""
    if isinstance(version, (tuple, list)):
        version = '.'.join(map(str, version))
    match = re.match(_VERSION, str(version).strip())
    if match is None:
        raise ValueError(f"Invalid version: '{version}'")
    release = tuple(int(n) for n in match.group(1).split('.'))
    release += (0,) * (6 - len(release))
    suffix, local = match.group(2), match.group(3)
    return release, 0 if suffix and 'post' not in suffix else 1, suffix or '', 1 if local else 0, local or ''


class TorchVersion(str):
    """A version string that compares as a version with another one (a string or a tuple of
    ints): ``TorchVersion('2.13.0+leafgrad.0.1.0') >= '2.0'`` is True, as PyTorch's."""

    def __lt__(self, other):
        return _key(self) < _key(other)

    def __le__(self, other):
        return _key(self) <= _key(other)

    def __gt__(self, other):
        return _key(self) > _key(other)

    def __ge__(self, other):
        return _key(self) >= _key(other)

    def __eq__(self, other):
        try:
            return _key(self) == _key(other)
        except (ValueError, TypeError):
            return str.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = str.__hash__


# the PyTorch version whose API leafgrad follows, leafgrad's own version as the local label, so that a
# program's `torch.__version__ >= '2.0'` takes its present-day path (leafgrad.__version__,
# leafgrad.version.__version__: PyTorch's torch_version holds it too)
__version__ = TorchVersion('2.13.0+leafgrad.0.1.0')
