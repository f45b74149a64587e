"""Writing the files torch.save writes, so that PyTorch's ``torch.load`` reads what leafgrad saved.

The object is pickled as ``torch.save`` pickles it (protocol 2 unless asked otherwise): a tensor
becomes ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
OrderedDict())``, a parameter ``torch._utils._rebuild_parameter(tensor, requires_grad,
OrderedDict())``, dtypes, devices and ``torch.Size`` their torch globals, and every class or
function by PyTorch's name for it (``_names``); each storage is a persistent id
``('storage', torch.<X>Storage, key, location, numel)`` whose bytes follow outside the pickle.
Tensors that view one array share one storage, as they shared one in PyTorch. Writing a pickle
runs nothing from a file: the pickler only writes.

Two layouts, as in PyTorch: the zip archive (``archive/data.pkl``, ``archive/data/<key>`` aligned
to 64 bytes, ``byteorder``, ``version``, ``.format_version``, ``.storage_alignment``,
``.data/serialization_id``), and with ``_use_new_zipfile_serialization=False`` the legacy stream
(magic number, protocol version, system information, the object, the storage keys, then each
storage's element count and bytes). Storage bytes are written straight from the arrays.
"""
import hashlib
import io
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from .. import _memory_format, backend
from ._native import _warn_if_has_hooks
from ..tensor import Size, Tensor
from ._names import global_name
from ._policy import _rebuild_parameter, _rebuild_tensor_v2, default_name, storage_type

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_ALIGNMENT = 64


class _Storage:
    """One storage of the file: the array its bytes are (a NumPy array, whole) and its key."""
    __slots__ = ('array', 'dtype', 'key', 'location')

    def __init__(self, array, dtype, key, location):
        self.array, self.dtype, self.key, self.location = array, dtype, key, location

    @property
    def numel(self):
        return self.array.nbytes // self.dtype.itemsize

    def bytes(self):
        return memoryview(self.array.reshape(-1, order='A').view(np.uint8))  # (C or Fortran order: no copy)


class _TensorData:
    """The tensor a parameter is rebuilt from (pickled as a plain tensor)."""
    __slots__ = ('tensor',)

    def __init__(self, tensor):
        self.tensor = tensor


class _Pickler(pickle._Pickler):
    """Python's pickler, writing leafgrad's tensors, dtypes, devices and classes as torch.save
    writes PyTorch's (the pure-Python pickler: its save_global can name an object by another
    module than the object's own)."""

    def __init__(self, file, protocol, legacy):
        super().__init__(file, protocol)
        self.legacy = legacy
        self.storages = {}   # (id of the root array, dtype name) -> _Storage
        self.keep = []       # objects made here, alive while their ids are in the memo

    def persistent_id(self, obj):
        if type(obj) is not _Storage:
            return None
        if self.legacy:
            return ('storage', storage_type(obj.dtype), obj.key, obj.location, obj.numel, None)
        return ('storage', storage_type(obj.dtype), obj.key, obj.location, obj.numel)

    def reducer_override(self, obj):
        kind = type(obj)
        if kind is _TensorData:
            return self._tensor(obj.tensor, False)
        if isinstance(obj, Tensor):
            from ..nn.parameter import Parameter  # (loaded when first used: serialization does not load nn)
            if isinstance(obj, Parameter):
                data = _TensorData(obj)
                self.keep.append(data)
                return (_rebuild_parameter, (data, obj.requires_grad, _empty_hooks()))
            _warn_if_has_hooks(obj)
            return self._tensor(obj, obj.requires_grad)
        if default_name(obj) is not None:
            return 'global'  # (torch.float32, torch.FloatStorage, collections.OrderedDict ...: see save_global)
        if kind is backend.device:
            return (backend.device, (obj.type,) if obj.index is None else (obj.type, obj.index))
        if kind is Size:
            return (Size, (tuple(obj),))
        return NotImplemented

    def _tensor(self, t, requires_grad):
        data = t._data
        location = 'cpu' if type(data) is np.ndarray else str(t.device)
        array = backend.to_numpy(data)
        storage, offset, stride = self._storage_of(array, t.dtype, location)
        return (_rebuild_tensor_v2, (storage, offset, tuple(array.shape), stride, bool(requires_grad),
                                     _empty_hooks()))

    def _storage_of(self, array, dtype, location):
        """(the _Storage that ``array`` views, its offset and strides in elements): the whole
        array that owns the memory, as PyTorch saves a view's whole storage."""
        itemsize = dtype.itemsize
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        begin = array.__array_interface__['data'][0] - root.__array_interface__['data'][0]
        if (root.flags.c_contiguous or root.flags.f_contiguous) and root.nbytes % itemsize == 0 \
                and begin >= 0 and begin % itemsize == 0 and all(s >= 0 and s % itemsize == 0 for s in array.strides):
            strides = tuple(s // itemsize for s in array.strides)
        else:  # negative strides, a root in pieces: a storage of its own (a C-ordered copy)
            root, begin = np.ascontiguousarray(array), 0
            strides = _memory_format.contiguous_strides(array.shape)
        key = (id(root), dtype.name)
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = _Storage(root, dtype, str(len(self.storages)), location)
            self.keep.append(root)
        return storage, begin // itemsize, strides

    def save_global(self, obj, name=None):
        full = default_name(obj)
        if full is not None:
            module, _, qualname = full.rpartition('.')
        else:
            module, qualname = global_name(obj, name)
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            if '.' in qualname:
                raise pickle.PicklingError(f"Can't pickle {obj!r}: {module}.{qualname} is nested, which pickle "
                                           f'protocol {self.proto} cannot name')
            self.write(pickle.GLOBAL + f'{module}\n{qualname}\n'.encode('utf-8'))
        self.memoize(obj)



# classes and functions are written by _Pickler.save_global (the base class's table holds its own)
_Pickler.dispatch = {kind: _Pickler.save_global if saver in (pickle._Pickler.save_global, pickle._Pickler.save_type)
                     else saver for kind, saver in pickle._Pickler.dispatch.items()}


def _empty_hooks():
    return OrderedDict()


def pickled(obj, protocol, legacy=False):
    """(the pickle of ``obj`` as bytes, its storages in key order)."""
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, protocol, legacy)
    pickler.dump(obj)
    return buffer.getvalue(), sorted(pickler.storages.values(), key=lambda s: int(s.key))


# ---- the zip archive -----------------------------------------------------------------------------
def write_zip(out, data, storages, byteorder_record=True):
    """Write the pickle ``data`` and its ``storages`` (from ``pickled``) to the binary file
    ``out`` as torch.save's zip archive."""
    archive = zipfile.ZipFile(out, 'w', zipfile.ZIP_STORED, allowZip64=True)

    def record(name, parts, size):
        info = zipfile.ZipInfo(f'archive/{name}', date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = size
        zip64 = size * 1.05 > zipfile.ZIP64_LIMIT  # (as zipfile decides it)
        start = archive.start_dir if archive._seekable else archive.fp.tell()
        header = 30 + len(info.filename.encode('utf-8')) + 4 + (20 if zip64 else 0)
        pad = -(start + header) % _ALIGNMENT
        info.extra = b'FB' + struct.pack('<H', pad) + b'Z' * pad  # (torch's padding field: data 64-aligned)
        with archive.open(info, 'w', force_zip64=zip64) as w:
            for part in parts:
                w.write(part)

    record('data.pkl', [data], len(data))
    record('.format_version', [b'1'], 1)
    record('.storage_alignment', [str(_ALIGNMENT).encode()], len(str(_ALIGNMENT)))
    if byteorder_record:
        record('byteorder', [sys.byteorder.encode()], len(sys.byteorder))
    for storage in storages:
        view = storage.bytes()
        record(f'data/{storage.key}', _chunks(view), len(view))
    record('version', [b'3\n'], 2)
    serialization_id = str(int(hashlib.sha256(data).hexdigest(), 16))[:40].rjust(40, '0').encode()
    record('.data/serialization_id', [serialization_id], 40)
    archive.close()


def _chunks(view, size=64 << 20):
    for begin in range(0, len(view), size):
        yield view[begin:begin + size]


# ---- the legacy stream ---------------------------------------------------------------------------
def write_legacy(out, data, storages, protocol):
    """Write the pickle ``data`` and its ``storages`` (from ``pickled(..., legacy=True)``) to
    ``out`` as ``torch.save(..., _use_new_zipfile_serialization=False)`` does."""
    sys_info = {'protocol_version': PROTOCOL_VERSION, 'little_endian': sys.byteorder == 'little',
                'type_sizes': {'short': 2, 'int': 4, 'long': struct.calcsize('l')}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle.dump(header, out, protocol=protocol)
    out.write(data)
    keys = sorted(s.key for s in storages)
    pickle.dump(keys, out, protocol=protocol)
    by_key = {s.key: s for s in storages}
    for key in keys:
        storage = by_key[key]
        out.write(struct.pack('<q', storage.numel))
        for part in _chunks(storage.bytes()):
            out.write(part)
