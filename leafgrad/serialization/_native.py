"""leafgrad's own checkpoint format: one safetensors file.

Its arrays are the tensors of the saved object; its ``__metadata__`` holds the rest of the object
as JSON (dicts with their key types, lists, tuples, sets, numbers, strings, dtypes, devices and
tensors by reference) and a SHA-256 digest of that JSON and of every array's bytes. Any
safetensors reader reads the arrays.

Reading trusts nothing in the file: the header's size is checked before the header is read, every
field of the header and of the JSON has the type and range ``write`` gives it (anything else is a
CheckpointError, never an AttributeError or a RecursionError), arrays are read straight into the
memory the tensors keep, and nothing is built before the digest matches.
"""
import hashlib
import json
import math
import struct
from collections import Counter, OrderedDict

import numpy as np

from .. import backend
from ..tensor import Tensor
from ._files import CheckpointError, map_copy_on_write
from ._storage import dtype_named, leafgrad_dtypes, restore_array

FORMAT = 'leafgrad-checkpoint/1'
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
def _encode(obj, arrays, ids):
    if isinstance(obj, Tensor):
        key = ids.get(id(obj))
        if key is None:
            key = ids[id(obj)] = f't{len(arrays)}'
            # (at least one dimension: scalars are stored as one-element arrays, their shape is below)
            arrays[key] = np.ascontiguousarray(backend.to_numpy(obj._data))
        from ..nn.parameter import Parameter
        return {'__tensor__': key, 'shape': list(obj._data.shape), 'requires_grad': bool(obj._requires_grad),
                'parameter': isinstance(obj, Parameter)}
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        # JSON has no inf/nan: keep them as strings, tagged
        return obj if math.isfinite(obj) else {'__float__': repr(obj)}
    if isinstance(obj, np.generic):
        return _encode(obj.item(), arrays, ids)
    if isinstance(obj, backend.dtype):
        return {'__dtype__': obj.name}
    if isinstance(obj, backend.device):
        return {'__device__': str(obj)}
    if isinstance(obj, dict):
        kind = 'counter' if isinstance(obj, Counter) else 'ordered' if isinstance(obj, OrderedDict) else 'dict'
        return {'__dict__': [[_encode(k, arrays, ids), _encode(v, arrays, ids)] for k, v in obj.items()],
                'kind': kind}
    if isinstance(obj, tuple):
        return {'__tuple__': [_encode(v, arrays, ids) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, arrays, ids) for v in obj]
    if isinstance(obj, set):
        return {'__set__': [_encode(v, arrays, ids) for v in obj]}
    raise TypeError(f'leafgrad.save cannot store an object of type {type(obj).__name__} (checkpoints hold '
                    'tensors, numbers, strings, None, and dicts/lists/tuples of them; no pickle)')


_TENSOR_FIELDS = frozenset(('__tensor__', 'shape', 'requires_grad', 'parameter'))
_TAGS = frozenset(('__tensor__', '__float__', '__dtype__', '__device__', '__tuple__', '__set__', '__dict__'))
_DICT_KINDS = {'dict': dict, 'ordered': OrderedDict, 'counter': lambda items: Counter(dict(items))}


class _Decoder:
    """Builds the saved object from its JSON, refusing anything ``_encode`` does not write."""

    def __init__(self, arrays, name):
        self.arrays = arrays
        self.name = name
        self.tensors = {}  # array key -> (tensor, its fields): one saved tensor stays one tensor

    def fail(self, what):
        return CheckpointError(f'leafgrad.load: {self.name} has a malformed structure: {what}')

    def decode(self, node, depth=0):
        kind = type(node)
        if kind is list:
            if depth >= MAX_DEPTH:
                raise self.fail(f'containers nested more than {MAX_DEPTH} deep')
            return [self.decode(v, depth + 1) for v in node]
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
        if type(value) is not list:
            raise self.fail(f'{tag} holds {type(value).__name__}, not a list')
        items = [self.decode(v, depth + 1) for v in value]
        if tag == '__tuple__':
            return tuple(items)
        try:
            return set(items)
        except TypeError as e:
            raise self.fail(f'a set element ({e})') from None

    def mapping(self, node, depth):
        pairs, kind = node['__dict__'], node.get('kind', 'dict')
        if not node.keys() <= {'__dict__', 'kind'} or kind not in _DICT_KINDS or type(pairs) is not list:
            raise self.fail(f'a __dict__ entry with the fields {sorted(node)[:8]} and kind {_short(kind)}')
        items = []
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2:
                raise self.fail('a __dict__ item that is not a [key, value] pair')
            items.append((self.decode(pair[0], depth + 1), self.decode(pair[1], depth + 1)))
        try:
            return _DICT_KINDS[kind](items)
        except TypeError as e:
            raise self.fail(f'a dict key ({e})') from None

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
                from ..nn.parameter import Parameter
                t = Parameter(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
        except RuntimeError as e:  # only floating-point tensors can require gradients
            raise self.fail(f'tensor {key!r}: {e}') from None
        self.tensors[key] = (t, fields)
        return t


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
    """The Payload of ``obj``; TypeError for an object that a checkpoint cannot hold."""
    arrays, ids = {}, {}
    structure = json.dumps(_encode(obj, arrays, ids), separators=(',', ':'), allow_nan=False)
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
    (n,) = struct.unpack('<Q', source.read(8, 'the header size'))
    if n > MAX_HEADER:
        raise CheckpointError(f'leafgrad.load: {name} is not a checkpoint leafgrad can read (its first 8 bytes give a '
                              f'header of {n} bytes; leafgrad reads at most {MAX_HEADER})')
    header = _parse_json(source.read(n, 'the header'), name, 'header')
    entries, meta = _check_header(header, name)
    total = entries[-1][4] if entries else 0
    if source.remaining is not None and source.remaining != total:
        raise CheckpointError(f'leafgrad.load: {name} is truncated or corrupted (expected {source.pos + total} bytes, '
                              f'found {source.size})')
    ours = meta.get('format') == FORMAT
    if not ours and not plain:
        raise CheckpointError(f'leafgrad.load: {name} is not a leafgrad checkpoint (format {meta.get("format")!r})')
    if ours:
        text, digest = meta.get('structure'), meta.get('sha256')
        if text is None or digest is None:
            raise CheckpointError(f'leafgrad.load: {name} has a corrupted header (no structure or digest)')
        structure = _parse_json(text, name, 'structure')

    mapped = map_copy_on_write(source, source.start + 8 + n) if mmap and entries else None
    raw = {}
    for key, dtype, shape, begin, end in entries:
        data = mapped[begin:end] if mapped is not None else source.read_array(end - begin, f'array {key!r}')
        raw[key] = (data, dtype, shape)
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
        return _Decoder(arrays, name).decode(structure)
    except RecursionError:
        raise CheckpointError(f'leafgrad.load: {name} has a malformed structure: nested too deeply') from None
