"""leafgrad.save / leafgrad.load: checkpoints that never run code from a file.

``leafgrad.save`` writes

- PyTorch's zip archive (``_torch_save``), which ``torch.load`` reads, for a file named ``*.pt``,
  ``*.pth``, ``*.pt.tar``, ``*.pth.tar`` or ``*.ckpt`` (or ``format='torch'``);
- leafgrad's own format (``_native``) otherwise (or ``format='leafgrad'``): one safetensors file
  whose metadata holds the object's structure as JSON and a SHA-256 digest; no pickle at all.

Paths are replaced atomically (``_files``). Objects that torch.save pickles by class (modules,
NumPy arrays, instances of the program's classes) are saved in both, named as PyTorch names
their classes (``_names``).

``leafgrad.load`` reads, by their first bytes,

- leafgrad's files (``_native``);
- the files ``torch.save`` writes, zip archives and the legacy stream (``_torch``), through a
  pickle reader of leafgrad's own (``_unpickler``);
- for a path ending in ``.safetensors``, any safetensors file, as a dict of tensors (as
  torch.load does).

Both build what ``torch.load(weights_only=True)`` builds and, of the classes and functions a file
names, only those allowlisted (``add_safe_globals``, ``safe_globals``: ``_policy``), exactly as
PyTorch rebuilds them. ``weights_only=False`` loads nothing more: leafgrad has no unrestricted
unpickler. A file that is not a complete, intact checkpoint raises CheckpointError (a
RuntimeError); a file naming a class or function that is not allowlisted raises
``pickle.UnpicklingError`` (``UnsafeCheckpointError``), as torch.load does.
"""
import os
import pickle
import warnings

from . import _files, _native
from ._files import CheckpointError, UnsafeCheckpointError
from ._policy import (Passthrough, add_safe_globals, clear_safe_globals, get_safe_globals, is_allowed, safe_globals,
                      user_allowed)
from ._storage import UntypedStorage, restorer

DEFAULT_PROTOCOL = 2


# file names that PyTorch programs give torch.save's files: leafgrad writes PyTorch's format there
TORCH_SUFFIXES = ('.pt', '.pth', '.pt.tar', '.pth.tar', '.ckpt')


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False, *, format=None):
    """Write ``obj`` to ``f``, a path or a binary file object: tensors, state dicts, optimizer
    state, containers, numbers, strings, and what torch.save pickles by class (modules, NumPy
    arrays, objects of the program's classes), which ``load`` rebuilds only once allowlisted.

    ``format`` is ``'torch'`` (torch.save's zip archive, or its legacy stream with
    ``_use_new_zipfile_serialization=False``: ``torch.load`` reads it) or ``'leafgrad'`` (one
    safetensors file, the rest as JSON with a SHA-256 digest; no pickle at all). By default a
    file whose name ends in .pt, .pth, .pt.tar, .pth.tar or .ckpt is written in PyTorch's format,
    any other file and a buffer in leafgrad's. A path is replaced atomically (the old file stays
    whole if the save fails or is killed), a symlink is written through, and a new file gets the
    permissions ``open`` gives (0o666 less the umask). Nothing is written for an object that
    cannot be stored (pickle's errors: TypeError, PicklingError, AttributeError).
    """
    if pickle_module is not pickle and pickle_module is not None:
        raise TypeError('leafgrad.save pickles with its own pickler (it names leafgrad\'s classes as PyTorch\'s), so '
                        f'it takes no pickle_module (got {pickle_module!r})')
    if type(pickle_protocol) is not int or pickle_protocol > pickle.HIGHEST_PROTOCOL:
        raise ValueError(f'pickle protocol must be <= {pickle.HIGHEST_PROTOCOL}')
    if format is None:
        name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, 'name', None)
        format = 'torch' if isinstance(name, str) and name.lower().endswith(TORCH_SUFFIXES) else 'leafgrad'
    if format == 'leafgrad':
        write = _native.encode(obj).write  # (before any file is touched: an object it cannot store changes nothing)
    elif format == 'torch':
        from . import _torch_save  # (loaded when first used: only torch-format saves need it)
        data, storages = _torch_save.pickled(obj, pickle_protocol, legacy=not _use_new_zipfile_serialization)
        if _use_new_zipfile_serialization:
            def write(out):
                _torch_save.write_zip(out, data, storages, byteorder_record=not _disable_byteorder_record)
        else:
            def write(out):
                _torch_save.write_legacy(out, data, storages, pickle_protocol)
    else:
        raise ValueError(f"leafgrad.save: format must be 'torch' or 'leafgrad', not {format!r}")
    if isinstance(f, (str, os.PathLike)):
        _files.write_atomically(f, write)
        return
    if not hasattr(f, 'write'):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    write(f)
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

    Classes and functions that the file names (a module saved whole, a NumPy array, an
    ``argparse.Namespace``) are rebuilt only when allowlisted (``add_safe_globals``,
    ``safe_globals``), as ``torch.load(weights_only=True)`` rebuilds them; any other raises
    ``pickle.UnpicklingError`` naming the first such global as PyTorch does. ``weights_only=False``
    does not lift this: leafgrad never calls what the allowlist does not name.
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
        return _load(source, f, restore, mmap, encoding, errors)
    except Passthrough as e:
        raise e.error from None
    finally:
        source.close_if_opened()


def _load(source, f, restore, mmap, encoding, errors):
    kind = _kind(source)
    if kind == 'native':
        plain = source.path is not None and source.path.endswith('.safetensors')
        return _native.read(source, restore, mmap=bool(mmap), plain=plain)
    from . import _torch  # (loaded when first used: only torch-format files need it)
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


def get_unsafe_globals_in_checkpoint(f):
    """The names (``module.qualname``) of the classes and functions a checkpoint holds that are
    neither admitted by default nor allowlisted: what ``add_safe_globals`` would need before
    ``load`` reads it. Nothing is built; for a ``torch.save`` file its pickle is read as data
    (``pickletools``), as PyTorch disassembles it."""
    user = user_allowed()
    source = _files.Source.open(f)
    try:
        kind = _kind(source)
        if kind == 'native':
            names = {f'{module}.{qualname}' for module, qualname in _native.scan(source)}
        elif kind == 'zip':
            from . import _torch  # (loaded when first used: only torch-format files need it)
            names = _torch.globals_in_zip(source)
        else:
            raise ValueError('Expected input to be a checkpoint returned by torch.save')
    finally:
        source.close_if_opened()
    return [name for name in names if not is_allowed(name, user)]


__all__ = ['save', 'load', 'CheckpointError', 'UnsafeCheckpointError', 'UntypedStorage', 'add_safe_globals',
           'get_safe_globals', 'clear_safe_globals', 'safe_globals', 'get_unsafe_globals_in_checkpoint',
           'DEFAULT_PROTOCOL']
