"""Reading the files torch.save writes, without PyTorch and without running code from them.

Two layouts:

- the zip archive (torch.save's default since PyTorch 1.6): ``<archive>/data.pkl`` is the pickled
  object; each storage it refers to is an uncompressed record ``<archive>/data/<key>``; beside them
  ``byteorder``, ``version``, ``.format_version``, ``.storage_alignment``;
- the legacy stream (``_use_new_zipfile_serialization=False``): five pickles (a magic number, the
  protocol version, system information, the object, the list of storage keys) and then, for each
  key, the storage's element count (8 bytes) and its bytes.

The object's pickle is read by ``_unpickler`` under the policy below, which admits what
``torch.load(weights_only=True)`` admits and leafgrad has a type for: tensors rebuilt from storages
(``torch._utils._rebuild_tensor_v2`` and kin), parameters, OrderedDict, Counter, set, bytes,
bytearray, complex, ``torch.Size``, ``torch.device`` and dtypes. Any other global is refused by name
before anything is built from it. Storages are read straight into the arrays the tensors view
(tensors that shared a storage share memory again), checked against the record's CRC-32, and
handed to ``map_location`` as they are loaded.
"""
import io
import re
import struct
import zlib
from collections import Counter, OrderedDict

import numpy as np

from .. import backend
from ..tensor import Size, Tensor
from ._files import CHUNK, CheckpointError, Source, map_copy_on_write, refusal
from ._storage import dtype_named, leafgrad_dtypes, restore_array
from ._unpickler import Unpickler

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_BLOCKED_MODULES = ('sys', 'os', 'posix', 'nt')

_STORAGE_DTYPES = {
    'DoubleStorage': 'float64', 'FloatStorage': 'float32', 'HalfStorage': 'float16', 'BFloat16Storage': 'bfloat16',
    'LongStorage': 'int64', 'IntStorage': 'int32', 'ShortStorage': 'int16', 'CharStorage': 'int8',
    'ByteStorage': 'uint8', 'BoolStorage': 'bool', 'ComplexDoubleStorage': 'complex128',
    'ComplexFloatStorage': 'complex64', 'QInt8Storage': 'qint8', 'QInt32Storage': 'qint32',
    'QUInt8Storage': 'quint8', 'QUInt4x2Storage': 'quint4x2', 'QUInt2x4Storage': 'quint2x4'}
_TORCH_DTYPES = (
    'bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64', 'complex32',
    'complex64', 'complex128', 'uint16', 'uint32', 'uint64', 'qint8', 'qint32', 'quint8', 'quint4x2', 'quint2x4',
    'float8_e4m3fn', 'float8_e5m2', 'float8_e4m3fnuz', 'float8_e5m2fnuz', 'float8_e8m0fnu', 'float4_e2m1fn_x2',
    'bits1x8', 'bits2x4', 'bits4x2', 'bits8', 'bits16', *(f'int{i}' for i in range(1, 8)),
    *(f'uint{i}' for i in range(1, 8)))
# What torch.load(weights_only=True) admits but leafgrad has no type for
_NOT_IN_LEAFGRAD = {
    'torch._utils._rebuild_qtensor': 'quantized tensors', 'torch._utils._rebuild_sparse_tensor': 'sparse tensors',
    'torch._utils._rebuild_meta_tensor_no_storage': 'meta tensors',
    'torch._utils._rebuild_nested_tensor': 'nested tensors',
    'torch._utils._rebuild_wrapper_subclass': 'tensor subclasses',
    'torch._utils._rebuild_device_tensor_from_numpy': 'tensors of devices without storage',
    'torch._utils._rebuild_device_tensor_from_cpu_tensor': 'tensors of devices without storage',
    'torch.serialization._get_layout': 'tensor layouts', 'torch.storage.TypedStorage': 'typed storages',
    **{f'torch.{q}': 'quantization schemes' for q in ('per_tensor_affine', 'per_tensor_symmetric',
                                                     'per_channel_affine', 'per_channel_symmetric',
                                                     'per_channel_affine_float_qparams')}}
_LEGACY_TENSOR_TYPE = re.compile(r'torch(\.cuda|\.sparse)?\.[A-Za-z0-9]+Tensor')


class _StorageType:
    """A storage class named in a pickle (``torch.FloatStorage``): stands for its dtype."""
    __slots__ = ('dtype', 'name')

    def __init__(self, dtype, name):
        self.dtype, self.name = dtype, name

    def __repr__(self):
        return f'StorageType(dtype={self.dtype})'


class _Typed:
    """A storage as a rebuild function receives it: bytes (a uint8 array) and their dtype."""
    __slots__ = ('array', 'dtype')

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype


class _RestoreFailed(Exception):
    """Carries an error of ``map_location`` past the unpickler, which reports its own as corruption."""

    def __init__(self, error):
        self.error = error


def _fail(what):
    return CheckpointError(f'leafgrad.load: {what}')


# ---- what the pickle may build -------------------------------------------------------------------
def _index(value, what):
    if type(value) is not int or value < 0:
        raise _fail(f'{what} is {value!r:.60}, not a non-negative integer')
    return value


def _dims(value, what):
    if type(value) not in (tuple, list, Size) or len(value) > 64:
        raise _fail(f'{what} is {type(value).__name__}, not a tuple of sizes')
    return tuple(_index(v, what) for v in value)


def _tensor(storage, dtype, offset, size, stride, requires_grad):
    """A tensor viewing ``storage`` as torch's ``set_(storage, offset, size, stride)`` does."""
    if type(storage) is not _Typed:
        raise _fail(f'a tensor is rebuilt from {type(storage).__name__}, not a storage')
    offset, size, stride = _index(offset, 'a storage offset'), _dims(size, 'a size'), _dims(stride, 'a stride')
    if len(size) != len(stride) or type(requires_grad) is not bool:
        raise _fail(f'a tensor of size {size}, stride {stride}, requires_grad {requires_grad!r:.20}')
    itemsize = dtype.itemsize
    array = storage.array
    if array.nbytes % itemsize:
        raise _fail(f'a storage of {array.nbytes} bytes holds {dtype} elements of {itemsize} bytes')
    count = array.nbytes // itemsize
    end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if 0 not in size else offset
    if end > count:
        raise _fail(f'a tensor of size {size}, stride {stride}, offset {offset} reaches past its storage of '
                    f'{count} elements')
    elements = array.view(dtype.np)[offset:]
    data = backend.array_module(array).lib.stride_tricks.as_strided(
        elements, shape=size, strides=tuple(s * itemsize for s in stride))
    t = Tensor._wrap(data)
    if requires_grad:
        try:
            t.requires_grad_(True)
        except RuntimeError as e:
            raise _fail(str(e)) from None
    return t


def _plain_rebuild_arguments(backward_hooks, metadata):
    if backward_hooks is not None and (type(backward_hooks) not in (dict, OrderedDict) or backward_hooks):
        raise _fail('a tensor with backward hooks (leafgrad loads none)')
    if metadata is not None and (type(metadata) is not dict or any(metadata.values())):
        raise _fail(f'a tensor with the flags {metadata!r:.60} (conjugate or negative views; leafgrad has none)')


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor(storage, getattr(storage, 'dtype', None), storage_offset, size, stride, False)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    _plain_rebuild_arguments(backward_hooks, metadata)
    return _tensor(storage, getattr(storage, 'dtype', None), storage_offset, size, stride, requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                       metadata=None):
    if not isinstance(dtype, backend.dtype):
        raise _fail(f'a tensor of dtype {dtype!r:.60}')
    _plain_rebuild_arguments(backward_hooks, metadata)
    return _tensor(storage, dtype, storage_offset, size, stride, requires_grad)


def _parameter(data, requires_grad=True):
    from ..nn.parameter import Parameter
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise _fail(f'a Parameter of {type(data).__name__} with requires_grad {requires_grad!r:.20}')
    try:
        return Parameter(data, requires_grad)
    except RuntimeError as e:  # only floating-point tensors can require gradients
        raise _fail(str(e)) from None


def _rebuild_parameter(data, requires_grad, backward_hooks):
    _plain_rebuild_arguments(backward_hooks, None)
    return _parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_attributes(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    from ..nn.parameter import Parameter
    if not any(func is f for f in _REBUILDERS) or not (new_type is Tensor or new_type is Parameter) \
            or type(args) is not tuple:
        raise _fail(f'a tensor rebuilt by {func!r:.60} as {new_type!r:.60}')
    t = func(*args)
    if new_type is Parameter and not isinstance(t, Parameter):
        t = _parameter(t, t.requires_grad)
    return _set_attributes(t, state)


def _set_attributes(obj, state):
    """Python attributes saved with a tensor (``t.note = ...``): new public names only."""
    if type(state) is tuple and len(state) == 2:
        dicts = state
    else:
        dicts = (state,)
    for attributes in dicts:
        if attributes is None:
            continue
        if type(attributes) is not dict:
            raise _fail(f'tensor attributes given as {type(attributes).__name__}')
        for name, value in attributes.items():
            if type(name) is not str or not name.isidentifier() or name.startswith('_') or hasattr(type(obj), name):
                raise _fail(f'a tensor attribute named {name!r:.60} (only new public names are set)')
            setattr(obj, name, value)
    return obj


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state)


def _make_mapping(kind):
    def make(*args):
        if len(args) > 1 or (args and type(args[0]) not in (list, tuple, dict, OrderedDict, Counter, str)):
            raise _fail(f'{kind.__name__} of {tuple(type(a).__name__ for a in args)}')
        return kind(*args)
    return make


def _make_set(*args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple, set)):
        raise _fail(f'set of {tuple(type(a).__name__ for a in args)}')
    return set(*args)


def _make_size(*args):
    if len(args) > 1 or (args and (type(args[0]) not in (list, tuple) or any(type(d) is not int for d in args[0]))):
        raise _fail(f'torch.Size of {args!r:.60}')
    return Size(*args)


def _make_device(*args):
    index = args[1] if len(args) == 2 else None
    if not 1 <= len(args) <= 2 or type(args[0]) is not str or (index is not None and type(index) is not int):
        raise _fail(f'torch.device{args!r:.60}')
    try:
        return backend.device(*args)
    except (RuntimeError, ValueError) as e:
        raise _fail(f'torch.device{args!r:.60}: {e}') from None


_TEXT_ENCODINGS = ('latin1', 'latin-1', 'ascii', 'utf-8', 'utf8')


def _codecs_encode(text, encoding):
    if type(text) is not str or encoding not in _TEXT_ENCODINGS:
        raise _fail(f'_codecs.encode of {type(text).__name__} as {encoding!r:.30}')
    return text.encode(encoding)


def _make_bytearray(*args):
    if not args:
        return bytearray()
    if len(args) == 1 and type(args[0]) is bytes:
        return bytearray(args[0])
    if len(args) == 2 and type(args[0]) is str and args[1] in _TEXT_ENCODINGS:
        return bytearray(*args)
    raise _fail(f'bytearray of {tuple(type(a).__name__ for a in args)}')  # (never bytearray(n): n bytes)


def _make_complex(*args):
    if len(args) > 2 or any(type(a) not in (int, float, bool, str) for a in args):
        raise _fail(f'complex of {tuple(type(a).__name__ for a in args)}')
    return complex(*args)


_ALLOWED = None


def _allowed():
    """'module.name' -> the object a pickle gets for that global, and id(object) -> (object, the
    function a REDUCE of it calls)."""
    global _ALLOWED
    if _ALLOWED is None:
        from ..nn.parameter import Parameter
        names = {
            'collections.OrderedDict': (OrderedDict, _make_mapping(OrderedDict)),
            'collections.Counter': (Counter, _make_mapping(Counter)),
            'builtins.set': (set, _make_set), 'builtins.bytearray': (bytearray, _make_bytearray),
            'builtins.complex': (complex, _make_complex), '_codecs.encode': (_codecs_encode, _codecs_encode),
            'torch.Size': (Size, _make_size), 'torch.device': (backend.device, _make_device),
            'torch.nn.parameter.Parameter': (Parameter, _parameter), 'torch.Tensor': (Tensor, None),
            'torch._tensor._rebuild_from_type_v2': (_rebuild_from_type_v2, _rebuild_from_type_v2),
            **{f'torch._utils.{f.__name__}': (f, f) for f in _REBUILDERS},
        }
        for name in _TORCH_DTYPES:
            dtype = dtype_named(name)
            if dtype is not None:
                names[f'torch.{name}'] = (dtype, None)
        for storage, name in _STORAGE_DTYPES.items():
            dtype = dtype_named(name)
            if dtype is not None:
                for module in ('torch', 'torch.cuda'):
                    names[f'{module}.{storage}'] = (_StorageType(dtype, f'{module}.{storage}'), None)
        names['torch.storage.UntypedStorage'] = (_StorageType(backend.uint8, 'torch.storage.UntypedStorage'), None)
        calls = {id(obj): (obj, call) for obj, call in names.values() if call is not None}
        _ALLOWED = ({name: obj for name, (obj, _) in names.items()}, calls)
    return _ALLOWED


def _missing_type(full_name):
    """Why leafgrad cannot build a global that torch.load(weights_only=True) admits, or None."""
    if full_name in _NOT_IN_LEAFGRAD:
        return _NOT_IN_LEAFGRAD[full_name]
    module, _, name = full_name.rpartition('.')
    if module == 'torch' and name in _TORCH_DTYPES:
        return f'a dtype leafgrad does not have; leafgrad has {leafgrad_dtypes()}'
    if module in ('torch', 'torch.cuda') and name in _STORAGE_DTYPES:
        return f'storage of torch.{_STORAGE_DTYPES[name]}, a dtype leafgrad does not have'
    if _LEGACY_TENSOR_TYPE.fullmatch(full_name):
        return 'legacy tensor types'
    return None


class _Policy:
    """What a torch.save pickle may build (see the module docstring)."""

    def __init__(self, name, persistent_load=None):
        self.name = name
        self._persistent_load = persistent_load

    def find_global(self, module, name):
        full = f'{module}.{name}'
        table, _ = _allowed()
        if full in table:
            return table[full]
        why = _missing_type(full)
        if why is not None:
            raise _fail(f'{self.name} holds {full} ({why})')
        if module in _BLOCKED_MODULES:
            raise refusal(f'Trying to load unsupported GLOBAL {full} whose module {module} is blocked.')
        if full.startswith('builtins.'):
            full = full[len('builtins.'):]
        raise refusal(f'Unsupported global: GLOBAL {full} was not an allowed global by default.')

    def call(self, func, args):
        _, calls = _allowed()
        entry = calls.get(id(func))
        if entry is None or entry[0] is not func:
            raise refusal(f'Trying to call reduce for unrecognized function {func!r:.80}')
        return entry[1](*args)

    def new(self, cls, args):
        from ..nn.parameter import Parameter
        if cls is Parameter:
            return _parameter(*args)
        if cls is OrderedDict or cls is Counter or cls is set:
            return cls()  # (cls.__new__(cls, *args): the items follow)
        raise refusal(f'Can only create new object for nn.Parameter, OrderedDict, Counter or set but got {cls!r:.80}')

    def build(self, obj, state):
        if type(obj) not in (OrderedDict, Counter):
            raise refusal(f'Can only build OrderedDict or Counter, but got {type(obj)}')
        if state is None:
            return
        if type(state) is not dict or any(type(k) is not str for k in state):
            raise _fail(f'OrderedDict attributes given as {type(state).__name__}')
        obj.__dict__.update(state)  # (a state_dict's _metadata)

    def persistent_load(self, pid):
        if self._persistent_load is None:
            raise refusal('unsupported persistent id encountered')
        if type(pid) is not tuple or not pid or _ascii(pid[0]) != 'storage':
            raise refusal(f'Only persistent_load of storage is allowed, but got {pid!r:.80}')
        return self._persistent_load(pid)


def _ascii(value):
    return value.decode('ascii') if type(value) is bytes else value


def _storage_dtype(storage_type):
    if type(storage_type) is not _StorageType:
        raise _fail(f'a storage of type {storage_type!r:.60}')
    return storage_type.dtype


def _location(value):
    value = _ascii(value)
    if type(value) is not str:
        raise _fail(f'a storage location {value!r:.60}')
    return value


def _restored(restore, array, location):
    try:
        return restore_array(restore, array, location)
    except Exception as e:
        raise _RestoreFailed(e) from None


def _unpickle(source, policy, encoding, errors):
    try:
        return Unpickler(source, policy, encoding, errors).load()
    except _RestoreFailed as e:
        raise e.error from None


# ---- the zip archive -----------------------------------------------------------------------------
def load_zip(source, restore, mmap, encoding, errors):
    import zipfile
    name = source.name
    try:
        archive = zipfile.ZipFile(source.file)
        records = {info.filename: info for info in archive.infolist()}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, struct.error,
            NotImplementedError, UnicodeDecodeError) as e:
        raise _fail(f'{name} is a truncated or corrupted zip archive ({e})') from None
    if not records:
        raise _fail(f'{name} is an empty zip archive')
    prefix = next(iter(records)).split('/', 1)[0]
    if f'{prefix}/constants.pkl' in records:
        raise _fail(f'{name} is a TorchScript archive (torch.jit.save), which leafgrad does not load; torch.load '
                    'refuses it too with weights_only=True')

    def data_offset(info):
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1 or info.compress_size != info.file_size:
            raise _fail(f'{name} has a compressed or encrypted record {info.filename!r} (torch.save stores them '
                        'uncompressed)')
        if not 0 <= info.header_offset <= source.start + source.size - 30:
            raise _fail(f'{name} is corrupted: record {info.filename!r} starts outside the file')
        source.seek_absolute(info.header_offset)
        local = source.read(30, f'record {info.filename!r}')
        if local[:4] != b'PK\x03\x04':
            raise _fail(f'{name} is corrupted: no local header for record {info.filename!r}')
        name_size, extra_size = struct.unpack('<HH', local[26:30])
        return info.header_offset + 30 + name_size + extra_size

    def small_record(key):
        info = records.get(f'{prefix}/{key}')
        if info is None:
            return None
        source.seek_absolute(data_offset(info))
        data = source.read(info.file_size, f'record {info.filename!r}')
        if zlib.crc32(data) != info.CRC:
            raise _fail(f'{name} is corrupted: record {info.filename!r} fails its CRC-32 check')
        return data

    pickled = small_record('data.pkl')
    if pickled is None:
        raise _fail(f'{name} is a zip archive without {prefix}/data.pkl: not a file torch.save wrote')
    byteorder = small_record('byteorder')
    byteorder = b'little' if byteorder is None else byteorder
    if byteorder not in (b'little', b'big'):
        raise _fail(f'{name} has an unknown byte order {byteorder[:20]!r}')
    mapped = map_copy_on_write(source, 0) if mmap else None
    loaded = {}

    def load_storage(pid):
        if len(pid) != 5:
            raise _fail(f'{name} has a storage reference of {len(pid)} fields, not 5')
        _, storage_type, key, location, numel = pid
        dtype, key, location = _storage_dtype(storage_type), _ascii(key), _location(location)
        if key in loaded:
            return loaded[key]
        nbytes = _index(numel, 'a storage size') * dtype.itemsize
        info = records.get(f'{prefix}/data/{key}') if type(key) is str else None
        if info is None or info.file_size != nbytes:
            raise _fail(f'{name} has no record of {nbytes} bytes for storage {key!r:.40}')
        start = data_offset(info)
        if mapped is not None:
            if start + nbytes > mapped.size:
                raise _fail(f'{name} is truncated: storage {key!r} ends past the end of the file')
            array = mapped[start:start + nbytes]
        else:
            source.seek_absolute(start)
            array = source.read_array(nbytes, f'storage {key!r}')
            if zlib.crc32(array) != info.CRC:
                raise _fail(f'{name} is corrupted: storage {key!r} fails its CRC-32 check')
        if byteorder == b'big' and dtype.itemsize > 1:
            array.view(dtype.np).byteswap(inplace=True)
        typed = loaded[key] = _Typed(_restored(restore, array, location), dtype)
        return typed

    policy = _Policy(name, load_storage)
    return _unpickle(Source(io.BytesIO(pickled), name, len(pickled)), policy, encoding, errors)


# ---- the legacy stream ---------------------------------------------------------------------------
def load_legacy(source, restore, encoding, errors):
    name = source.name
    plain = _Policy(name)
    if _unpickle(source, plain, encoding, errors) != MAGIC_NUMBER:
        raise _fail(f'{name}: Invalid magic number; corrupt file?')
    version = _unpickle(source, plain, encoding, errors)
    if version != PROTOCOL_VERSION:
        raise _fail(f'{name}: Invalid protocol version: {version!r:.40}')
    sys_info = _unpickle(source, plain, encoding, errors)
    little = sys_info.get('little_endian', True) if type(sys_info) is dict else None
    if type(little) is not bool:
        raise _fail(f'{name} has corrupted system information')
    roots = {}   # key -> [array, dtype, element count]
    views = {}
    claimed = [0]

    def load_storage(pid):
        if len(pid) != 6:
            raise _fail(f'{name} has a storage reference of {len(pid)} fields, not 6')
        _, storage_type, key, location, numel, view = pid
        dtype, key, location = _storage_dtype(storage_type), _ascii(key), _location(location)
        root = roots.get(key)
        if root is None:
            numel = _index(numel, 'a storage size')
            claimed[0] += 8 + numel * dtype.itemsize
            source.require(claimed[0], 'the storages the pickle refers to')  # before allocating them
            array = _restored(restore, np.empty(numel * dtype.itemsize, np.uint8), location)
            root = roots[key] = [array, dtype, numel]
        if view is None:
            return _Typed(root[0], root[1])
        if type(view) is not tuple or len(view) != 3:
            raise _fail(f'{name} has a corrupted storage view {view!r:.60}')
        view_key, offset, size = view
        if view_key not in views:
            es = root[1].itemsize
            begin, stop = _index(offset, 'a view offset') * es, (offset + _index(size, 'a view size')) * es
            if stop > root[0].nbytes:
                raise _fail(f'{name} has a storage view past the end of its storage')
            views[view_key] = _Typed(root[0][begin:stop], root[1])
        return views[view_key]

    result = _unpickle(source, _Policy(name, load_storage), encoding, errors)
    keys = _unpickle(source, plain, encoding, errors)
    keys = [_ascii(k) for k in keys] if type(keys) is list else None
    if keys is None or any(type(k) is not str for k in keys) or sorted(keys) != sorted(roots):
        raise _fail(f'{name} lists other storages than its pickle refers to')
    for key in keys:
        array, dtype, numel = roots[key]
        (count,) = struct.unpack('<q', source.read(8, f'storage {key!r}'))
        if count != numel:
            raise _fail(f'{name} holds {count} elements for storage {key!r}, its pickle says {numel}')
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
