"""Reading the files torch.save writes, without PyTorch and without running code from them.

Two layouts:

- the zip archive (torch.save's default since PyTorch 1.6): ``<archive>/data.pkl`` is the pickled
  object; each storage it refers to is an uncompressed record ``<archive>/data/<key>``; beside them
  ``byteorder``, ``version``, ``.format_version``, ``.storage_alignment``;
- the legacy stream (``_use_new_zipfile_serialization=False``): five pickles (a magic number, the
  protocol version, system information, the object, the list of storage keys) and then, for each
  key, the storage's element count (8 bytes) and its bytes.

The object's pickle is read by ``_unpickler`` under ``_policy``'s rules, which admit what
``torch.load(weights_only=True)`` admits and leafgrad has a type for (tensors rebuilt from
storages, parameters, containers, ``torch.Size``, devices, dtypes) and what the user allowlisted;
any other global is refused by name before anything is built from it. Storages are read straight
into the arrays the tensors view (tensors that shared a storage share memory again), checked
against the record's CRC-32, and handed to ``map_location`` as they are loaded.
"""
import _compat_pickle
import io
import struct
import zipfile
import zlib

import numpy as np

from .. import backend
from ._files import CHUNK, Source, map_copy_on_write
from ._policy import Passthrough, Policy, StorageType, Typed, ascii_text, fail, non_negative
from ._storage import restore_array
from ._unpickler import Unpickler

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


def _storage_dtype(storage_type):
    if type(storage_type) is not StorageType:
        raise fail(f'a storage of type {storage_type!r:.60}')
    return storage_type.dtype


def _location(value):
    value = ascii_text(value)
    if type(value) is not str:
        raise fail(f'a storage location {value!r:.60}')
    return value


def _restored(restore, array, location):
    try:
        return restore_array(restore, array, location)
    except Exception as e:
        raise Passthrough(e) from None


def _unpickle(source, policy, encoding, errors):
    return Unpickler(source, policy, encoding, errors).load()


# ---- the zip archive -----------------------------------------------------------------------------
class _Archive:
    """The records of a torch.save zip archive, read from ``source`` with every size and CRC-32
    checked."""

    def __init__(self, source):
        self.source = source
        name = self.name = source.name
        try:
            records = {info.filename: info for info in zipfile.ZipFile(source.file).infolist()}
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, struct.error,
                NotImplementedError, UnicodeDecodeError) as e:
            raise fail(f'{name} is a truncated or corrupted zip archive ({e})') from None
        if not records:
            raise fail(f'{name} is an empty zip archive')
        self.records = records
        self.prefix = prefix = next(iter(records)).split('/', 1)[0]
        if f'{prefix}/constants.pkl' in records:
            raise fail(f'{name} is a TorchScript archive (torch.jit.save), which leafgrad does not load; torch.load '
                       'refuses it too with weights_only=True')

    def info(self, key):
        return self.records.get(f'{self.prefix}/{key}')

    def data_offset(self, info):
        """Where the bytes of the record ``info`` begin in the file."""
        name, source = self.name, self.source
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1 or info.compress_size != info.file_size:
            raise fail(f'{name} has a compressed or encrypted record {info.filename!r} (torch.save stores them '
                       'uncompressed)')
        if not 0 <= info.header_offset <= source.start + source.size - 30:
            raise fail(f'{name} is corrupted: record {info.filename!r} starts outside the file')
        source.seek_absolute(info.header_offset)
        local = source.read(30, f'record {info.filename!r}')
        if local[:4] != b'PK\x03\x04':
            raise fail(f'{name} is corrupted: no local header for record {info.filename!r}')
        name_size, extra_size = struct.unpack('<HH', local[26:30])
        return info.header_offset + 30 + name_size + extra_size

    def small_record(self, key):
        """The bytes of the record ``key`` (None if there is none), checked against its CRC-32."""
        info = self.info(key)
        if info is None:
            return None
        self.source.seek_absolute(self.data_offset(info))
        data = self.source.read(info.file_size, f'record {info.filename!r}')
        if zlib.crc32(data) != info.CRC:
            raise fail(f'{self.name} is corrupted: record {info.filename!r} fails its CRC-32 check')
        return data

    def pickle(self):
        pickled = self.small_record('data.pkl')
        if pickled is None:
            raise fail(f'{self.name} is a zip archive without {self.prefix}/data.pkl: not a file torch.save wrote')
        return pickled


def globals_in_zip(source):
    """The names of the globals the pickle of a torch.save archive names, read as data
    (``pickletools``: nothing is built), as torch's get_unsafe_globals_in_checkpoint reads them."""
    import pickletools  # (loaded when first used: only get_unsafe_globals_in_checkpoint needs it)
    names, strings = set(), []
    try:
        for opcode, arg, _ in pickletools.genops(_Archive(source).pickle()):
            if opcode.name in ('GLOBAL', 'STACK_GLOBAL'):
                if opcode.name == 'GLOBAL':
                    module, name = arg.split(' ', 1)
                elif len(strings) >= 2:
                    module, name = strings[-2:]
                else:
                    continue
                if (module, name) in _compat_pickle.NAME_MAPPING:
                    module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                elif module in _compat_pickle.IMPORT_MAPPING:
                    module = _compat_pickle.IMPORT_MAPPING[module]
                names.add(f'{module}.{name}')
            elif isinstance(arg, str):
                strings.append(arg)
    except ValueError as e:  # (pickletools' word for a malformed pickle)
        raise fail(f'{source.name} has a corrupted pickle ({e})') from None
    return names


def load_zip(source, restore, mmap, encoding, errors):
    archive = _Archive(source)
    name, records, prefix = archive.name, archive.records, archive.prefix
    data_offset, small_record = archive.data_offset, archive.small_record
    pickled = archive.pickle()
    byteorder = small_record('byteorder')
    byteorder = b'little' if byteorder is None else byteorder
    if byteorder not in (b'little', b'big'):
        raise fail(f'{name} has an unknown byte order {byteorder[:20]!r}')
    mapped = map_copy_on_write(source, 0) if mmap else None
    loaded = {}

    def load_storage(pid):
        if len(pid) != 5:
            raise fail(f'{name} has a storage reference of {len(pid)} fields, not 5')
        _, storage_type, key, location, numel = pid
        dtype, key, location = _storage_dtype(storage_type), ascii_text(key), _location(location)
        if key in loaded:
            return loaded[key]
        nbytes = non_negative(numel, 'a storage size') * dtype.itemsize
        info = records.get(f'{prefix}/data/{key}') if type(key) is str else None
        if info is None or info.file_size != nbytes:
            raise fail(f'{name} has no record of {nbytes} bytes for storage {key!r:.40}')
        start = data_offset(info)
        if mapped is not None:
            if start + nbytes > mapped.size:
                raise fail(f'{name} is truncated: storage {key!r} ends past the end of the file')
            array = mapped[start:start + nbytes]
        else:
            source.seek_absolute(start)
            array = source.read_array(nbytes, f'storage {key!r}')
            if zlib.crc32(array) != info.CRC:
                raise fail(f'{name} is corrupted: storage {key!r} fails its CRC-32 check')
        if byteorder == b'big' and dtype.itemsize > 1:
            array.view(dtype.np).byteswap(inplace=True)
        typed = loaded[key] = Typed(_restored(restore, array, location), dtype)
        return typed

    policy = Policy(name, load_storage)
    return _unpickle(Source(io.BytesIO(pickled), name, len(pickled)), policy, encoding, errors)


# ---- the legacy stream ---------------------------------------------------------------------------
def load_legacy(source, restore, encoding, errors):
    name = source.name
    plain = Policy(name)
    if _unpickle(source, plain, encoding, errors) != MAGIC_NUMBER:
        raise fail(f'{name}: Invalid magic number; corrupt file?')
    version = _unpickle(source, plain, encoding, errors)
    if version != PROTOCOL_VERSION:
        raise fail(f'{name}: Invalid protocol version: {version!r:.40}')
    sys_info = _unpickle(source, plain, encoding, errors)
    little = sys_info.get('little_endian', True) if type(sys_info) is dict else None
    if type(little) is not bool:
        raise fail(f'{name} has corrupted system information')
    roots = {}   # key -> [array, dtype, element count]
    views = {}
    claimed = [0]

    def load_storage(pid):
        if len(pid) != 6:
            raise fail(f'{name} has a storage reference of {len(pid)} fields, not 6')
        _, storage_type, key, location, numel, view = pid
        dtype, key, location = _storage_dtype(storage_type), ascii_text(key), _location(location)
        root = roots.get(key)
        if root is None:
            numel = non_negative(numel, 'a storage size')
            claimed[0] += 8 + numel * dtype.itemsize
            source.require(claimed[0], 'the storages the pickle refers to')  # before allocating them
            array = _restored(restore, np.empty(numel * dtype.itemsize, np.uint8), location)
            root = roots[key] = [array, dtype, numel]
        if view is None:
            return Typed(root[0], root[1])
        if type(view) is not tuple or len(view) != 3:
            raise fail(f'{name} has a corrupted storage view {view!r:.60}')
        view_key, offset, size = view
        if view_key not in views:
            es = root[1].itemsize
            begin, stop = non_negative(offset, 'a view offset') * es, (offset + non_negative(size, 'a view size')) * es
            if stop > root[0].nbytes:
                raise fail(f'{name} has a storage view past the end of its storage')
            views[view_key] = Typed(root[0][begin:stop], root[1])
        return views[view_key]

    result = _unpickle(source, Policy(name, load_storage), encoding, errors)
    keys = _unpickle(source, plain, encoding, errors)
    keys = [ascii_text(k) for k in keys] if type(keys) is list else None
    if keys is None or any(type(k) is not str for k in keys) or sorted(keys) != sorted(roots):
        raise fail(f'{name} lists other storages than its pickle refers to')
    for key in keys:
        array, dtype, numel = roots[key]
        (count,) = struct.unpack('<q', source.read(8, f'storage {key!r}'))
        if count != numel:
            raise fail(f'{name} holds {count} elements for storage {key!r}, its pickle says {numel}')
        _fill(array, source, dtype if not little and dtype.itemsize > 1 else None, f'storage {key!r}')
    return result


def _fill(array, source, swap_dtype, what):
    """Read ``array.nbytes`` bytes from ``source`` into ``array`` (on any device), byte-swapping
    elements of ``swap_dtype`` when given."""
    if type(array) is np.ndarray:
        source.read_into(array, what)
        if swap_dtype is not None:
            array.view(swap_dtype.np).byteswap(inplace=True)
        return
    xp = backend.array_module(array)
    for begin in range(0, array.nbytes, CHUNK):
        part = source.read_array(min(CHUNK, array.nbytes - begin), what)
        if swap_dtype is not None:
            part.view(swap_dtype.np).byteswap(inplace=True)
        array[begin:begin + part.size] = xp.asarray(part)
