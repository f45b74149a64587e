"""leafgrad.save / leafgrad.load: checkpoints that never run code from a file.

``leafgrad.save`` writes leafgrad's own format (``_native``): one safetensors file whose metadata
holds the object's structure as JSON and a SHA-256 digest; paths are replaced atomically
(``_files``).

``leafgrad.load`` reads, by their first bytes,

- leafgrad's files (``_native``);
- the files ``torch.save`` writes, zip archives and the legacy stream (``_torch``), through a
  pickle reader of leafgrad's own (``_unpickler``) that builds what
  ``torch.load(weights_only=True)`` builds and nothing else;
- for a path ending in ``.safetensors``, any safetensors file, as a dict of tensors (as
  torch.load does).

``weights_only=False`` loads the same things: leafgrad has no unrestricted unpickler. A file that
is not a complete, intact checkpoint raises CheckpointError (a RuntimeError); a pickle that asks
for more than tensors, numbers, strings and containers of them raises UnsafeCheckpointError,
which is also a ``pickle.UnpicklingError`` as torch.load's refusals are.
"""
import os
import pickle
import warnings

from . import _files, _native
from ._files import CheckpointError, UnsafeCheckpointError
from ._storage import UntypedStorage, restorer


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write ``obj`` (tensors, state dicts, optimizer state, nested containers of them, numbers
    and strings) to ``f``, a path or a binary file object.

    A path is replaced atomically (the old file stays whole if the save fails or is killed), a
    symlink is written through, and a new file gets the permissions ``open`` gives (0o666 less the
    umask). leafgrad writes one format whatever ``pickle_protocol`` and
    ``_use_new_zipfile_serialization`` say (it pickles nothing); ``torch.load`` does not read it,
    any safetensors reader reads its arrays.
    """
    if pickle_module is not pickle and pickle_module is not None:
        raise TypeError(f'leafgrad.save pickles nothing, so it takes no pickle_module (got {pickle_module!r})')
    if type(pickle_protocol) is not int or pickle_protocol > pickle.HIGHEST_PROTOCOL:
        raise ValueError(f'pickle protocol must be <= {pickle.HIGHEST_PROTOCOL}')
    payload = _native.encode(obj)  # (before any file is touched: an object it cannot store changes nothing)
    if isinstance(f, (str, os.PathLike)):
        _files.write_atomically(f, payload.write)
        return
    if not hasattr(f, 'write'):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    payload.write(f)
    if hasattr(f, 'flush'):
        f.flush()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read an object written by ``leafgrad.save`` or ``torch.save`` from ``f`` (a path or a
    seekable binary file object).

    ``map_location`` places the storages as in PyTorch: a device or device string for all of
    them, a dict renaming location tags (``{'cuda:0': 'cpu'}``), or a callable
    ``(storage, location)`` returning a storage or None. ``mmap=True`` maps a file instead of
    reading it (copy-on-write: tensors may change, the file does not). The whole file is checked
    (sizes, CRC-32s or the SHA-256 digest, every field's type) as it is read; nothing is returned
    from a bad file.
    """
    if pickle_module is not None:
        raise RuntimeError('Can not safely load weights when explicit pickle_module is specified')
    encoding = pickle_load_args.pop('encoding', 'utf-8')
    errors = pickle_load_args.pop('errors', 'strict')
    if weights_only is False:
        for key in pickle_load_args:
            if key not in ('fix_imports', 'buffers'):
                raise TypeError(f"'{key}' is an invalid keyword argument for Unpickler()")
    elif pickle_load_args or encoding != 'utf-8' or errors != 'strict':
        warnings.warn('pickle_load_args only works if `weights_only=False`.', stacklevel=2)
    restore = restorer(map_location)
    source = _files.Source.open(f)
    try:
        kind = _kind(source)
        if kind == 'native':
            plain = source.path is not None and source.path.endswith('.safetensors')
            return _native.read(source, restore, mmap=bool(mmap), plain=plain)
        from . import _torch
        if kind == 'zip':
            return _torch.load_zip(source, restore, bool(mmap), encoding, errors)
        if mmap:
            shown = f'{f}, ' if isinstance(f, str) else ''
            raise RuntimeError(f'mmap can only be used with files saved with `torch.save({shown}'
                               '_use_new_zipfile_serialization=True), please torch.save your checkpoint with this '
                               'option in order to use mmap.')
        if kind == 'legacy':
            return _torch.load_legacy(source, restore, encoding, errors)
        raise CheckpointError(f'leafgrad.load: {source.name} is in the legacy .tar format of PyTorch before 0.4, '
                              'which leafgrad does not read (torch.load refuses it with weights_only=True too)')
    finally:
        source.close_if_opened()


_LEGACY_MAGIC = (0x1950A86A20F9469CFC6C).to_bytes(10, 'little')


def _kind(source):
    """'native', 'zip', 'legacy' or 'tar', from the first bytes of ``source``."""
    if source.size is None:  # a device or pipe: only leafgrad's own format streams from those
        return 'native'
    head = source.read(min(source.size, 512))
    source.seek(0)
    if head[:4] == b'PK\x03\x04':
        return 'zip'
    if head[:2] in (b'\x80\x02', b'\x80\x03') and head[2:14] == b'\x8a\x0a' + _LEGACY_MAGIC:
        return 'legacy'
    if head[:2] in (b'\x80\x04', b'\x80\x05') and head[2:3] == b'\x95' and head[11:23] == b'\x8a\x0a' + _LEGACY_MAGIC:
        return 'legacy'
    if head[257:262] == b'ustar':
        return 'tar'
    return 'native'


__all__ = ['save', 'load', 'CheckpointError', 'UnsafeCheckpointError', 'UntypedStorage']
