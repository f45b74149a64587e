"""leafgrad's own checkpoint format: one safetensors file, no pickle.

Its arrays are the tensors of the saved object (and its bytes); its ``__metadata__`` holds the
rest of the object as JSON - dicts with their key types, lists, tuples, sets, numbers, strings,
dtypes, devices, ``torch.Size``, tensors by reference, and object records for what torch.save
pickles by class (``_Encoder``) - and a SHA-256 digest of that JSON and of every array's bytes.
Any safetensors reader reads the arrays.

Reading trusts nothing in the file: the header's size is checked before the header is read, every
field of the header and of the JSON has the type and range ``_Encoder`` gives it (anything else is
a CheckpointError, never an AttributeError or a RecursionError), arrays are read straight into the
memory the tensors keep (by the safetensors library for a regular file), nothing is built before
the digest matches, and an object record is built only as ``_policy`` allows: a class or function
that is not allowlisted is refused by name, as torch.load(weights_only=True) refuses it.
"""
import copyreg
import hashlib
import json
import math
import pickle
import struct
import types
from collections import Counter, OrderedDict

import numpy as np

from .. import backend
from ..tensor import Size, Tensor
from ._files import CheckpointError, map_copy_on_write
from ._names import global_name
from ._policy import Policy, extend_list, set_items
from ._storage import dtype_named, leafgrad_dtypes, restore_array

FORMAT = 'leafgrad-checkpoint/2'  # /2 adds object records, bytes, torch.Size and references
FORMATS_READ = ('leafgrad-checkpoint/1', FORMAT)
# The most header bytes read. Below 0x04034b50 (b'PK\x03\x04' read as a size), so that no zip
# file passes for a header; a header holds ~250 bytes per tensor.
MAX_HEADER = 64 << 20
MAX_DEPTH = 1000  # containers inside containers
_MAX_NDIM = 64
_MAX_ELEMENTS = 1 << 62

# safetensors' dtype codes and the PyTorch dtype each stands for
_CODES = {'BOOL': 'bool', 'U8': 'uint8', 'I8': 'int8', 'I16': 'int16', 'I32': 'int32', 'I64': 'int64',
          'F16': 'float16', 'BF16': 'bfloat16', 'F32': 'float32', 'F64': 'float64', 'U16': 'uint16',
          'U32': 'uint32', 'U64': 'uint64', 'F8_E4M3': 'float8_e4m3fn', 'F8_E5M2': 'float8_e5m2',
          'F8_E8M0': 'float8_e8m0fnu', 'C64': 'complex64', 'F4': 'float4_e2m1fn_x2'}
_CODE_OF = {name: code for code, name in _CODES.items()}


# ---- the object tree <-> JSON ------------------------------------------------------------------
# Containers, tuples and objects are numbered in the order they are first met (depth first, the
# same order when reading); a second reference to one is {'__ref__': its number}, so that shared
# and self-referring objects come back as they were (pickle's memo).
_PLAIN = (type(None), bool, int, str)


class _Encoder:
    """Turns an object into JSON-able structure and a table of arrays; what ``torch.save``
    pickles by class or function (modules, NumPy arrays, ``argparse.Namespace`` ...) becomes an
    object record, built from what the object's ``__reduce_ex__(2)`` says as pickle builds it:
    ``{'__new__': class, 'args': [...], 'state': ...}`` (``cls.__new__(cls, *args)``, then its
    state) or ``{'__reduce__': function, 'args': [...], 'state': ...}``, with ``items`` and
    ``pairs`` for what a list or dict subclass holds; classes and functions are
    ``{'__global__': [module, qualname]}`` under PyTorch's names (``_names``)."""

    def __init__(self):
        self.arrays = {}     # key -> NumPy array
        self.tensors = {}    # id(tensor) -> key
        self.memo = {}       # id(container or object) -> its number
        self.unfinished = set()  # ids of tuples and objects whose arguments are being encoded
        self.keep = []       # everything whose id is in a table (a freed temporary's id may recur)

    def _add_array(self, prefix, array):
        key = f'{prefix}{len(self.arrays)}'
        self.arrays[key] = array
        return key

    def _remember(self, obj):
        self.memo[id(obj)] = len(self.memo)
        self.keep.append(obj)

    def encode(self, obj):
        kind = type(obj)
        if kind in _PLAIN:
            return obj
        if kind is float:
            # JSON has no inf/nan: keep them as strings, tagged
            return obj if math.isfinite(obj) else {'__float__': repr(obj)}
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if kind is backend.dtype:
            return {'__dtype__': obj.name}
        if kind is backend.device:
            return {'__device__': str(obj)}
        if kind is bytes:
            if not obj:  # pickle protocol 2 (torch.save's) writes b'' as a call of builtins.bytes, which
                # torch.load admits only when allowlisted: so does leafgrad.load
                return {'__reduce__': {'__global__': ['builtins', 'bytes']}, 'args': []}
            return {'__bytes__': self._add_array('b', np.frombuffer(obj, np.uint8))}
        if kind is Size:
            return {'__size__': list(obj)}
        number = self.memo.get(id(obj))
        if number is not None:
            if id(obj) in self.unfinished:
                raise ValueError(f'leafgrad.save cannot store a {kind.__name__} that contains itself through its '
                                 'own arguments (pickle cannot either)')
            return {'__ref__': number}
        if kind is dict or kind is OrderedDict or kind is Counter:
            self._remember(obj)
            return {'__dict__': [[self.encode(k), self.encode(v)] for k, v in obj.items()],
                    'kind': 'counter' if kind is Counter else 'ordered' if kind is OrderedDict else 'dict'}
        if kind is list:
            self._remember(obj)
            return [self.encode(v) for v in obj]
        if kind is tuple:
            self._remember(obj)
            self.unfinished.add(id(obj))
            items = [self.encode(v) for v in obj]
            self.unfinished.discard(id(obj))
            return {'__tuple__': items}
        if kind is set:
            self._remember(obj)
            return {'__set__': [self.encode(v) for v in obj]}
        return self.object(obj)

    def tensor(self, t):
        from ..nn.parameter import Parameter  # (loaded when first used: serialization does not load nn)
        parameter = isinstance(t, Parameter)
        key = self.tensors.get(id(t))
        if key is None:
            if not parameter:
                _warn_if_has_hooks(t)
            # (at least one dimension: scalars are stored as one-element arrays, their shape is below)
            key = self.tensors[id(t)] = self._add_array('t', np.ascontiguousarray(backend.to_numpy(t._data)))
            self.keep.append(t)
        return {'__tensor__': key, 'shape': list(t._data.shape), 'requires_grad': bool(t._requires_grad),
                'parameter': parameter}

    def object(self, obj):
        if isinstance(obj, type) or isinstance(obj, _BY_NAME):
            return {'__global__': list(global_name(obj))}
        reduce = copyreg.dispatch_table.get(type(obj))
        rv = reduce(obj) if reduce is not None else obj.__reduce_ex__(2)
        if isinstance(rv, str):
            return {'__global__': list(global_name(obj, rv))}
        if not isinstance(rv, tuple):
            raise pickle.PicklingError(f'{type(obj).__name__}.__reduce__ must return a string or tuple, but got '
                                       f'{type(rv).__name__}')
        if not 2 <= len(rv) <= 6:
            raise pickle.PicklingError(f'tuple returned by {type(obj).__name__}.__reduce__ must contain 2 through 6 '
                                       'elements')
        func, args, state, listitems, dictitems, setter = rv + (None,) * (6 - len(rv))
        if not callable(func) or not isinstance(args, tuple):
            raise pickle.PicklingError(f'{type(obj).__name__}.__reduce__ must give a callable and a tuple of its '
                                       'arguments')
        if setter is not None or getattr(func, '__name__', '') == '__newobj_ex__':
            raise TypeError(f'leafgrad.save cannot store {type(obj).__name__} objects: they are rebuilt with a state '
                            'setter or keyword arguments, which pickle protocol 2 (torch.save\'s) has no form for')
        self._remember(obj)
        self.keep.append(rv)
        self.unfinished.add(id(obj))
        if getattr(func, '__name__', '') == '__newobj__':
            if not args or not isinstance(args[0], type) or args[0] is not type(obj):
                raise pickle.PicklingError(f'args[0] from __newobj__ args of {type(obj).__name__} is not its class')
            record = {'__new__': self.encode(args[0]), 'args': [self.encode(a) for a in args[1:]]}
        else:
            record = {'__reduce__': self.encode(func), 'args': [self.encode(a) for a in args]}
        self.unfinished.discard(id(obj))
        if listitems is not None:
            record['items'] = [self.encode(v) for v in listitems]
        if dictitems is not None:
            record['pairs'] = [[self.encode(k), self.encode(v)] for k, v in dictitems]
        if state is not None:
            record['state'] = self.encode(state)
        return record


_BY_NAME = (types.FunctionType, types.BuiltinFunctionType)
_TENSOR_FIELDS = frozenset(('__tensor__', 'shape', 'requires_grad', 'parameter'))
_OBJECT_FIELDS = frozenset(('args', 'state', 'items', 'pairs'))
_TAGS = frozenset(('__tensor__', '__float__', '__dtype__', '__device__', '__tuple__', '__set__', '__dict__',
                   '__bytes__', '__size__', '__ref__', '__global__', '__new__', '__reduce__'))
_DICT_KINDS = {'dict': dict, 'ordered': OrderedDict, 'counter': Counter}
_UNFINISHED = object()  # the number of a tuple or object whose arguments are still being read
# what a class, a policy's builder or an allowlisted function raises for arguments that do not fit
_BUILD_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError)


class _Decoder:
    """Builds the saved object from its JSON, refusing anything ``_Encoder`` does not write; object
    records are built through ``policy`` (``_policy.Policy``), as a pickle's opcodes would be."""

    def __init__(self, arrays, name, policy):
        self.arrays = arrays
        self.name = name
        self.policy = policy
        self.tensors = {}  # array key -> (tensor, its fields): one saved tensor stays one tensor
        self.memo = []

    def fail(self, what):
        return CheckpointError(f'leafgrad.load: {self.name} has a malformed structure: {what}')

    def decode(self, node, depth=0):
        kind = type(node)
        if kind is list:
            if depth >= MAX_DEPTH:
                raise self.fail(f'containers nested more than {MAX_DEPTH} deep')
            out = []
            self.memo.append(out)
            out.extend(self.decode(v, depth + 1) for v in node)
            return out
        if kind is float and not math.isfinite(node):
            raise self.fail(f'the number {node} (non-finite numbers are stored tagged)')
        if kind is not dict:
            return node  # None, bool, int, str, float
        if depth >= MAX_DEPTH:
            raise self.fail(f'containers nested more than {MAX_DEPTH} deep')
        tags = node.keys() & _TAGS
        if len(tags) != 1:
            raise self.fail(f'an unrecognised entry with the fields {sorted(node)[:8]}')
        tag = tags.pop()
        if tag == '__tensor__':
            return self.tensor(node)
        if tag == '__dict__':
            return self.mapping(node, depth)
        if tag in ('__new__', '__reduce__'):
            return self.object(node, tag, depth)
        if len(node) != 1:
            raise self.fail(f'an entry {tag} with the fields {sorted(node)[:8]}')
        value = node[tag]
        if tag == '__float__':
            if value not in ('inf', '-inf', 'nan'):
                raise self.fail(f'__float__ {_short(value)}')
            return float(value)
        if tag == '__dtype__':
            dtype = dtype_named(value) if value in _CODE_OF else None
            if dtype is None:
                raise self.fail(f'__dtype__ {_short(value)} (leafgrad has {leafgrad_dtypes()})')
            return dtype
        if tag == '__device__':
            try:
                if type(value) is str:
                    return backend.device(value)
            except (RuntimeError, ValueError):
                pass
            raise self.fail(f'__device__ {_short(value)}')
        if tag == '__bytes__':
            array = self.arrays.get(value) if type(value) is str else None
            if array is None or array.dtype != np.uint8 or array.ndim != 1:
                raise self.fail(f'__bytes__ {_short(value)} is not an array of bytes')
            return array.tobytes()
        if tag == '__ref__':
            if type(value) is not int or not 0 <= value < len(self.memo) or self.memo[value] is _UNFINISHED:
                raise self.fail(f'__ref__ {_short(value)} refers to nothing read before')
            return self.memo[value]
        if tag == '__global__':
            if type(value) is not list or len(value) != 2 or any(type(v) is not str for v in value):
                raise self.fail(f'__global__ {_short(value)}')
            return self.policy.find_global(*value)
        if type(value) is not list:
            raise self.fail(f'{tag} holds {type(value).__name__}, not a list')
        if tag == '__size__':
            if len(value) > _MAX_NDIM or any(type(d) is not int for d in value):
                raise self.fail(f'__size__ {_short(value)}')
            return Size(value)
        if tag == '__tuple__':
            number = len(self.memo)
            self.memo.append(_UNFINISHED)
            self.memo[number] = out = tuple([self.decode(v, depth + 1) for v in value])
            return out
        out = set()  # __set__
        self.memo.append(out)
        try:
            out.update(self.decode(v, depth + 1) for v in value)
        except TypeError as e:
            raise self.fail(f'a set element ({e})') from None
        return out

    def mapping(self, node, depth):
        pairs, kind = node['__dict__'], node.get('kind', 'dict')
        if not node.keys() <= {'__dict__', 'kind'} or kind not in _DICT_KINDS or type(pairs) is not list:
            raise self.fail(f'a __dict__ entry with the fields {sorted(node)[:8]} and kind {_short(kind)}')
        out = _DICT_KINDS[kind]()
        self.memo.append(out)
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2:
                raise self.fail('a __dict__ item that is not a [key, value] pair')
            key = self.decode(pair[0], depth + 1)
            try:
                out[key] = self.decode(pair[1], depth + 1)
            except TypeError as e:
                raise self.fail(f'a dict key ({e})') from None
        return out

    def object(self, node, tag, depth):
        """An object record: built as NEWOBJ or REDUCE, then APPENDS, SETITEMS and BUILD would
        build it from a pickle (the policy decides each step)."""
        if not node.keys() <= _OBJECT_FIELDS | {tag} or type(node.get('args', [])) is not list:
            raise self.fail(f'an object with the fields {sorted(node)[:8]}')
        for field in ('items', 'pairs'):
            if type(node.get(field, [])) is not list:
                raise self.fail(f'an object whose {field} is not a list')
        number = len(self.memo)
        self.memo.append(_UNFINISHED)
        callee = self.decode(node[tag], depth + 1)
        args = tuple(self.decode(a, depth + 1) for a in node.get('args', ()))
        try:
            obj = self.policy.new(callee, args) if tag == '__new__' else self.policy.call(callee, args)
            self.memo[number] = obj
            if 'items' in node:  # (pickle writes one item as APPEND, more as APPENDS)
                items = [self.decode(v, depth + 1) for v in node['items']]
                extend_list(obj, items, 'append' if len(items) == 1 else 'extend')
            if 'pairs' in node:
                pairs = []
                for pair in node['pairs']:
                    if type(pair) is not list or len(pair) != 2:
                        raise self.fail('an object item that is not a [key, value] pair')
                    pairs.append((self.decode(pair[0], depth + 1), self.decode(pair[1], depth + 1)))
                set_items(obj, pairs, 'SETITEM' if len(pairs) == 1 else 'SETITEMS')
            if 'state' in node:
                self.policy.build(obj, self.decode(node['state'], depth + 1))
        except _BUILD_ERRORS as e:
            raise self.fail(f'an object could not be built ({type(e).__name__}: {e})') from None
        return obj

    def tensor(self, node):
        key = node['__tensor__']
        if not node.keys() <= _TENSOR_FIELDS:
            raise self.fail(f'a tensor with the fields {sorted(node)[:8]}')
        if type(key) is not str or key not in self.arrays:
            raise self.fail(f'a tensor refers to a missing array {_short(key)}')
        shape = node.get('shape')
        requires_grad, parameter = node.get('requires_grad', False), node.get('parameter', False)
        if type(requires_grad) is not bool or type(parameter) is not bool:
            raise self.fail(f'tensor {key!r} has requires_grad {_short(requires_grad)}, parameter {_short(parameter)}')
        array = self.arrays[key]
        if shape is not None:
            shape = _shape(shape)
            if shape is None:
                raise self.fail(f'tensor {key!r} has the shape {_short(node["shape"])}')
            if _count(shape) != array.size:
                raise self.fail(f'array {key!r} has {array.size} elements, the checkpoint structure says shape '
                                f'{list(shape)}')
            array = array.reshape(shape)
        fields = (array.shape, requires_grad, parameter)
        known = self.tensors.get(key)
        if known is not None:
            if known[1] != fields:
                raise self.fail(f'array {key!r} is two different tensors')
            return known[0]
        t = Tensor._wrap(array)
        try:
            if parameter:
                from ..nn.parameter import Parameter  # (loaded when first used: serialization does not load nn)
                t = Parameter(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
        except RuntimeError as e:  # only floating-point tensors can require gradients
            raise self.fail(f'tensor {key!r}: {e}') from None
        self.tensors[key] = (t, fields)
        return t


def globals_named(node, found, depth=0):
    """Append to ``found`` the [module, qualname] of every class and function the structure
    ``node`` names, in the order the decoder meets them (nothing is built)."""
    if depth > MAX_DEPTH:
        return
    if type(node) is list:
        for v in node:
            globals_named(v, found, depth + 1)
    elif type(node) is dict:
        value = node.get('__global__')
        if type(value) is list and len(value) == 2 and all(type(v) is str for v in value):
            found.append(value)
            return
        for key in ('__new__', '__reduce__', 'args', '__tuple__', '__set__', '__dict__', 'items', 'pairs', 'state'):
            if key in node:
                globals_named(node[key], found, depth + 1)


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _shape(value):
    """A tuple of dimension sizes, or None if ``value`` is not a list of at most 64 sizes."""
    if type(value) is not list or len(value) > _MAX_NDIM:
        return None
    for d in value:
        if type(d) is not int or not 0 <= d <= _MAX_ELEMENTS:
            return None
    return tuple(value)


def _count(shape):
    """Elements of ``shape``; None past 2**62 (computed without building a huge product)."""
    if 0 in shape:
        return 0
    n = 1
    for d in shape:
        n *= d
        if n > _MAX_ELEMENTS:
            return None
    return n


# ---- the digest ----------------------------------------------------------------------------------
def _bytes(array):
    return memoryview(array.reshape(-1).view(np.uint8))


def _digest(structure, arrays):
    h = hashlib.sha256(structure.encode())
    for key in sorted(arrays):
        a = arrays[key]
        h.update(f'{key}:{a.dtype.str}:{a.shape}'.encode())
        h.update(_bytes(a))
    return h.hexdigest()


# ---- write ---------------------------------------------------------------------------------------
class Payload:
    """An encoded checkpoint: ``write(out)`` writes it to a binary file (the arrays straight from
    the tensors' memory)."""
    __slots__ = ('header', 'arrays')

    def __init__(self, header, arrays):
        self.header, self.arrays = header, arrays

    def write(self, out):
        out.write(struct.pack('<Q', len(self.header)))
        out.write(self.header)
        for a in self.arrays:
            out.write(_bytes(a))


def encode(obj):
    """The Payload of ``obj``; pickle's errors (TypeError, PicklingError, AttributeError) for an
    object that pickle could not store either."""
    encoder = _Encoder()
    structure = json.dumps(encoder.encode(obj), separators=(',', ':'), allow_nan=False)
    arrays = encoder.arrays
    header = {'__metadata__': {'format': FORMAT, 'structure': structure, 'sha256': _digest(structure, arrays)}}
    order = sorted(arrays, key=lambda k: (-arrays[k].itemsize, k))  # each array aligned to its item size
    offset = 0
    for key in order:
        a = arrays[key]
        header[key] = {'dtype': _CODE_OF[backend.from_np(a.dtype).name], 'shape': list(a.shape),
                       'data_offsets': [offset, offset + a.nbytes]}
        offset += a.nbytes
    raw = json.dumps(header, separators=(',', ':')).encode()
    raw += b' ' * (-len(raw) % 8)  # the arrays start 8-aligned
    if len(raw) > MAX_HEADER:
        raise ValueError(f'leafgrad.save: the checkpoint needs a header of {len(raw)} bytes, above the {MAX_HEADER} '
                         'that leafgrad.load reads; keep large data in tensors, not in Python lists')
    return Payload(raw, [arrays[key] for key in order])


# ---- read ----------------------------------------------------------------------------------------
def _parse_json(text, name, what):
    def reject(constant):
        raise ValueError(f'{constant} is not JSON')
    try:
        return json.loads(text, parse_constant=reject)
    except RecursionError:
        raise CheckpointError(f'leafgrad.load: {name} has a malformed {what}: nested too deeply') from None
    except ValueError as e:  # (UnicodeDecodeError too)
        raise CheckpointError(f'leafgrad.load: {name} has a corrupted {what} ({e})') from None


def _array_dtype(code, key, name):
    torch_name = _CODES.get(code)
    dtype = dtype_named(torch_name) if torch_name else None
    if dtype is None:
        what = f'torch.{torch_name}' if torch_name else 'an unknown dtype'
        raise CheckpointError(f'leafgrad.load: {name} holds array {key!r} of dtype {_short(code)} ({what}), which '
                              f'leafgrad does not have (leafgrad has {leafgrad_dtypes()})')
    return dtype


def _check_header(header, name):
    """The arrays the header describes, as (key, dtype, shape, begin, end) in file order, and the
    metadata; CheckpointError unless they tile the data exactly."""
    def bad(what):
        return CheckpointError(f'leafgrad.load: {name} has a corrupted header ({what})')
    if type(header) is not dict:
        raise bad(f'a JSON {type(header).__name__}, not an object')
    meta = header.get('__metadata__', {})
    if type(meta) is not dict or any(type(v) is not str for v in meta.values()):
        raise bad('__metadata__ is not a map of strings to strings')
    entries = []
    for key, info in header.items():
        if key == '__metadata__':
            continue
        if type(info) is not dict or info.keys() != {'dtype', 'shape', 'data_offsets'}:
            raise bad(f'entry {_short(key)}')
        code, shape, offsets = info['dtype'], _shape(info['shape']), info['data_offsets']
        if type(code) is not str or shape is None or type(offsets) is not list or len(offsets) != 2 \
                or any(type(o) is not int for o in offsets) or not 0 <= offsets[0] <= offsets[1]:
            raise bad(f'entry {_short(key)}')
        dtype = _array_dtype(code, key, name)
        count = _count(shape)
        if count is None or offsets[1] - offsets[0] != count * dtype.itemsize:
            raise bad(f'entry {_short(key)}: shape {list(shape)} of {code} is not {offsets[1] - offsets[0]} bytes')
        entries.append((key, dtype, shape, offsets[0], offsets[1]))
    entries.sort(key=lambda e: (e[3], e[4]))
    end = 0
    for key, _, _, begin, stop in entries:
        if begin != end:
            raise bad(f'array {_short(key)} starts at byte {begin}, not {end}')
        end = stop
    return entries, meta


def read(source, restore, mmap=False, plain=False):
    """The object in the leafgrad checkpoint ``source`` (a ``_files.Source``); with ``plain``
    (a ``.safetensors`` path) a safetensors file of other origin gives its arrays as a dict."""
    name = source.name
    n, entries, meta = _read_header(source)
    total = entries[-1][4] if entries else 0
    if source.remaining is not None and source.remaining != total:
        raise CheckpointError(f'leafgrad.load: {name} is truncated or corrupted (expected {source.pos + total} bytes, '
                              f'found {source.size})')
    ours = meta.get('format') in FORMATS_READ
    if not ours and not plain:
        raise CheckpointError(f'leafgrad.load: {name} is not a leafgrad checkpoint (format {meta.get("format")!r})')
    if ours:
        text, digest = meta.get('structure'), meta.get('sha256')
        if text is None or digest is None:
            raise CheckpointError(f'leafgrad.load: {name} has a corrupted header (no structure or digest)')
        structure = _parse_json(text, name, 'structure')

    if mmap and entries:
        mapped = map_copy_on_write(source, source.start + 8 + n)
        raw = {key: (mapped[begin:end], dtype, shape) for key, dtype, shape, begin, end in entries}
    elif source.path is not None and source.size is not None and entries:
        raw = _read_arrays_by_path(source.path, entries, name)
    else:
        raw = {key: (source.read_array(end - begin, f'array {key!r}'), dtype, shape)
               for key, dtype, shape, begin, end in entries}
    arrays = {key: data.view(dtype.np).reshape(shape) for key, (data, dtype, shape) in raw.items()}
    if ours and _digest(text, arrays) != digest:
        raise CheckpointError(f'leafgrad.load: {name} failed its integrity check (sha256 mismatch): the file was '
                              'modified or damaged after it was written')
    for key, (data, dtype, shape) in raw.items():
        if dtype is backend.bool_ and data.size and data.max() > 1:
            raise CheckpointError(f'leafgrad.load: {name} holds bool array {key!r} with bytes other than 0 and 1')
        arrays[key] = restore_array(restore, data, 'cpu').view(dtype.np).reshape(shape)
    if not ours:
        return {key: Tensor._wrap(arrays[key]) for key in sorted(arrays)}
    try:
        # (classes and functions are looked up as the structure is built, in the order a pickle
        # of the same object would meet them: the same refusal as torch.load's comes first)
        return _Decoder(arrays, name, Policy(name)).decode(structure)
    except RecursionError:
        raise CheckpointError(f'leafgrad.load: {name} has a malformed structure: nested too deeply') from None


def _read_header(source):
    """(header size, arrays as _check_header gives them, metadata), read from ``source``."""
    name = source.name
    (n,) = struct.unpack('<Q', source.read(8, 'the header size'))
    if n > MAX_HEADER:
        raise CheckpointError(f'leafgrad.load: {name} is not a checkpoint leafgrad can read (its first 8 bytes give a '
                              f'header of {n} bytes; leafgrad reads at most {MAX_HEADER})')
    header = _parse_json(source.read(n, 'the header'), name, 'header')
    entries, meta = _check_header(header, name)
    return n, entries, meta


def _read_arrays_by_path(path, entries, name):
    """The arrays of a regular file, read by the safetensors library (``pread`` into memory the
    arrays keep: peak memory 1.00x the arrays), as key -> (uint8 bytes, dtype, shape).

    The header was already checked field by field here, and stays so: safetensors' own errors are
    SafetensorError, not the documented CheckpointError, and it neither bounds the header below
    its 100 MB nor knows leafgrad's dtypes. File objects, devices and pipes are read by
    ``_files.Source``, which safetensors cannot read from (it opens a path)."""
    from safetensors import SafetensorError, safe_open  # (optional: loaded when first used)
    raw = {}
    try:
        with safe_open(path, framework='np', backend='pread') as f:
            for key, dtype, shape, begin, end in entries:
                array = f.get_tensor(key)
                if array.shape != shape or array.dtype.itemsize != dtype.itemsize or not array.flags.c_contiguous:
                    raise CheckpointError(f'leafgrad.load: {name} changed while it was read (array {key!r})')
                raw[key] = (array.reshape(-1).view(np.uint8), dtype, shape)
    except SafetensorError as e:  # (the file changed since its header was checked)
        raise CheckpointError(f'leafgrad.load: {name} is corrupted ({e})') from None
    return raw


def scan(source):
    """[module, qualname] of every class and function a leafgrad checkpoint names (its arrays
    are not read)."""
    _, _, meta = _read_header(source)
    if meta.get('format') not in FORMATS_READ or type(meta.get('structure')) is not str:
        raise ValueError('Expected input to be a checkpoint returned by leafgrad.save or torch.save')
    named = []
    globals_named(_parse_json(meta['structure'], source.name, 'structure'), named)
    return named


def _warn_if_has_hooks(t):
    """torch.save's warning about the hooks of a (plain) tensor it saves, which are not saved
    with it."""
    if t._hooks_made:
        from ..utils.hooks import warn_if_has_hooks  # (loaded when first used)
        warn_if_has_hooks(t)
