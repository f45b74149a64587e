"""Storages (the bytes under tensors) and ``map_location``: where each loaded storage goes.

Every storage a checkpoint holds is read onto the CPU first and then handed, with its location
tag (``'cpu'``, ``'cuda:0'`` ...), to the restore function that ``map_location`` describes, as in
PyTorch: None keeps each storage where it was saved, a string or device sends all of them there,
a dict renames location tags, and a callable ``(storage, location)`` returns the storage to use
(or None for the default).
"""
import re

from .. import backend
from .._storage import UntypedStorage
from ._files import CheckpointError


_CUDA_TAG = re.compile(r'cuda(:|[0-9]+)')
_OTHER_ACCELERATORS = ('xpu', 'hpu', 'mtia', 'privateuse1')


def default_restore(storage, location):
    """Move ``storage`` to the device its location tag names (torch's default_restore_location)."""
    if location == 'cpu':
        return storage
    if location == 'cuda' or _CUDA_TAG.match(location):
        from .. import cuda  # (loaded when first used: only CUDA locations need it)
        if not cuda.is_available():
            raise RuntimeError('Attempting to deserialize object on a CUDA device but leafgrad.cuda.is_available() is '
                               'False. If you are running on a CPU-only machine, please use leafgrad.load with '
                               "map_location=leafgrad.device('cpu') to map your storages to the CPU.")
        try:
            device = backend.device(location)
        except (RuntimeError, ValueError):
            raise _unknown(location) from None
        count = cuda.device_count()
        if (device.index or 0) >= count:
            raise RuntimeError(f'Attempting to deserialize object on CUDA device {device.index} but '
                               f'leafgrad.cuda.device_count() is {count}. Please use leafgrad.load with map_location '
                               'to map your storages to an existing device.')
        return storage.to(device=device)
    for name in _OTHER_ACCELERATORS:
        if location == name or re.match(f'{name}(:|[0-9]+)', location):
            raise RuntimeError(f'Attempting to deserialize object on a {name.upper()} device but '
                               f'leafgrad.{name}.is_available() is False. If you are running on a CPU-only machine, '
                               "please use leafgrad.load with map_location=leafgrad.device('cpu') to map your "
                               'storages to the CPU.')
    if location == 'mps' or location == 'meta':
        raise RuntimeError(f'leafgrad.UntypedStorage(): Storage device not recognized: {location}')
    raise _unknown(location)


def _unknown(location):
    # (a RuntimeError, as torch's is; a location tag that names no device is damage)
    return CheckpointError(f"don't know how to restore data location of leafgrad.storage.UntypedStorage (tagged "
                           f'with {location})')


def restorer(map_location):
    """The function ``(storage, location) -> storage`` that ``map_location`` describes."""
    if map_location is None:
        return default_restore
    if isinstance(map_location, dict):
        return lambda storage, location: default_restore(storage, _tag(map_location.get(location, location)))
    if isinstance(map_location, (str, bytes, backend.device)):
        tag = _tag(map_location)
        return lambda storage, location: default_restore(storage, tag)
    if callable(map_location):
        def restore(storage, location):
            result = map_location(storage, location)
            if result is None:
                return default_restore(storage, location)
            if not isinstance(result, UntypedStorage):
                raise TypeError(f'map_location should return a storage or None, not {type(result).__name__}')
            return result
        return restore
    raise TypeError(f"'{type(map_location).__name__}' object is not callable")


def restore_array(restore, array, location):
    """The uint8 array ``array`` where ``restore`` puts a storage of it tagged ``location``."""
    storage = restore(UntypedStorage(array), location)
    if storage.nbytes() != array.nbytes:
        raise RuntimeError(f'map_location returned a storage of {storage.nbytes()} bytes for one of {array.nbytes}')
    return storage._array


def _tag(where):
    if isinstance(where, bytes):
        return where.decode('ascii')
    if isinstance(where, (str, backend.device)):
        return str(where)
    raise TypeError(f'map_location maps location tags to device strings or devices, not {type(where).__name__}')


def dtype_named(name):
    """leafgrad's dtype called ``name`` (PyTorch's name: 'float32', 'bool' ...), or None where
    leafgrad has no such dtype."""
    d = getattr(backend, 'bool_' if name == 'bool' else name, None)
    return d if isinstance(d, backend.dtype) else None


def leafgrad_dtypes():
    return ', '.join(d.name for d in backend.ALL_DTYPES)
