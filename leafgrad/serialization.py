"""leafgrad.save / leafgrad.load: checkpoints without pickle.

A checkpoint is one safetensors file. Its arrays are the tensors of the saved object; its
``__metadata__`` holds the rest of the object as JSON (dicts with their key types, lists,
tuples, numbers, strings, tensors by reference) and a SHA-256 digest of that JSON and of every
array's bytes. Loading therefore never executes code from the file, and a truncated or
tampered file is detected before anything is returned, so a model is only changed by a
complete, intact checkpoint.

Files are written atomically: to a temporary file in the same directory, flushed and fsync'ed,
then renamed over the target, so an interrupted save leaves the previous checkpoint intact.
"""
import hashlib
import json
import math
import os
import struct
import tempfile
from collections import Counter, OrderedDict

import numpy as np

from . import backend
from .tensor import Tensor

FORMAT = 'leafgrad-checkpoint/1'
_MAX_HEADER = 100 * 1024 * 1024


class CheckpointError(RuntimeError):
    """A checkpoint file that is not a complete, intact leafgrad checkpoint."""


def _safetensors():
    try:
        import safetensors.numpy as st
    except ImportError as e:  # an optional dependency (the 'checkpoint' extra)
        raise ImportError("leafgrad.save/leafgrad.load need the 'safetensors' package: "
                          "pip install 'leafgrad[checkpoint]'") from e
    return st


# ---- the object tree <-> JSON ------------------------------------------------------------------
def _encode(obj, arrays, ids):
    if isinstance(obj, Tensor):
        key = ids.get(id(obj))
        if key is None:
            key = ids[id(obj)] = f't{len(arrays)}'
            arrays[key] = np.ascontiguousarray(backend.to_numpy(obj._data))
        from .nn.parameter import Parameter
        # the shape is kept here too: safetensors' NumPy API turns 0-d arrays into 1-element ones
        return {'__tensor__': key, 'shape': list(obj._data.shape), 'requires_grad': bool(obj._requires_grad),
                'parameter': isinstance(obj, Parameter)}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        # JSON has no inf/nan: keep them as strings, tagged
        return obj if math.isfinite(obj) else {'__float__': repr(obj)}
    if isinstance(obj, (np.generic,)):
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


def _decode(obj, arrays, cache):
    if isinstance(obj, list):
        return [_decode(v, arrays, cache) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if '__tensor__' in obj:
        key = obj['__tensor__']
        if key in cache:
            return cache[key]
        if key not in arrays:
            raise CheckpointError(f'leafgrad.load: the checkpoint refers to a missing array {key!r}')
        array = arrays[key]
        shape = tuple(obj.get('shape', array.shape))
        if array.shape != shape:
            if array.size != math.prod(shape):
                raise CheckpointError(f'leafgrad.load: array {key!r} has {array.size} elements, the checkpoint '
                                      f'structure says shape {list(shape)}')
            array = array.reshape(shape)
        t = Tensor._wrap(array)
        if obj.get('parameter'):
            from .nn.parameter import Parameter
            t = Parameter(t, requires_grad=obj.get('requires_grad', True))
        elif obj.get('requires_grad'):
            t.requires_grad_(True)
        cache[key] = t
        return t
    if '__float__' in obj:
        return float(obj['__float__'])
    if '__dtype__' in obj:
        return backend.to_dtype(obj['__dtype__'])
    if '__device__' in obj:
        return backend.device(obj['__device__'])
    if '__tuple__' in obj:
        return tuple(_decode(v, arrays, cache) for v in obj['__tuple__'])
    if '__set__' in obj:
        return set(_decode(v, arrays, cache) for v in obj['__set__'])
    if '__dict__' in obj:
        items = [(_hashable(_decode(k, arrays, cache)), _decode(v, arrays, cache)) for k, v in obj['__dict__']]
        kind = obj.get('kind', 'dict')  # MultiStepLR keeps its milestones in a Counter
        return OrderedDict(items) if kind == 'ordered' else Counter(dict(items)) if kind == 'counter' else dict(items)
    raise CheckpointError('leafgrad.load: unrecognised entry in the checkpoint structure')


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def _digest(structure, arrays):
    h = hashlib.sha256()
    h.update(structure.encode())
    for key in sorted(arrays):
        a = arrays[key]
        h.update(f'{key}:{a.dtype.str}:{a.shape}'.encode())
        h.update(a.tobytes())
    return h.hexdigest()


# ---- save ----------------------------------------------------------------------------------------
def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (tensors, state dicts, optimizer state, nested containers) to ``f`` (a path or
    a binary file object)."""
    st = _safetensors()
    arrays, ids = {}, {}
    structure = json.dumps(_encode(obj, arrays, ids), separators=(',', ':'), allow_nan=False)
    metadata = {'format': FORMAT, 'structure': structure, 'sha256': _digest(structure, arrays)}
    payload = st.save(arrays, metadata=metadata)
    if hasattr(f, 'write'):
        f.write(payload)
        if hasattr(f, 'flush'):
            f.flush()
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(path) + '.', suffix='.tmp', dir=directory)
    try:
        with os.fdopen(fd, 'wb') as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


# ---- load ----------------------------------------------------------------------------------------
def _read_header(data, name):
    if len(data) < 8:
        raise CheckpointError(f'leafgrad.load: {name} is truncated or not a leafgrad checkpoint '
                              f'({len(data)} bytes)')
    (n,) = struct.unpack('<Q', data[:8])
    if n > _MAX_HEADER or 8 + n > len(data):
        raise CheckpointError(f'leafgrad.load: {name} is truncated or corrupted (its header says {n} bytes, the '
                              f'file has {len(data) - 8})')
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise CheckpointError(f'leafgrad.load: {name} has a corrupted header ({e})') from None
    if not isinstance(header, dict):
        raise CheckpointError(f'leafgrad.load: {name} has a corrupted header')
    end = 0
    for key, info in header.items():
        if key == '__metadata__':
            continue
        try:
            end = max(end, int(info['data_offsets'][1]))
        except (TypeError, KeyError, IndexError, ValueError):
            raise CheckpointError(f'leafgrad.load: {name} has a corrupted header (entry {key!r})') from None
    if 8 + n + end != len(data):
        raise CheckpointError(f'leafgrad.load: {name} is truncated or corrupted (expected {8 + n + end} bytes, '
                              f'found {len(data)})')
    meta = header.get('__metadata__') or {}
    if meta.get('format') != FORMAT:
        raise CheckpointError(f'leafgrad.load: {name} is not a leafgrad checkpoint (format '
                              f'{meta.get("format")!r})')
    return meta


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Read an object written by ``leafgrad.save``. The whole file is checked (size, header,
    digest) before anything is built; a bad file raises CheckpointError (a RuntimeError)."""
    st = _safetensors()
    if hasattr(f, 'read'):
        data, name = f.read(), 'the checkpoint stream'
    else:
        name = repr(os.fspath(f))
        with open(f, 'rb') as fh:
            data = fh.read()
    meta = _read_header(data, name)
    try:
        arrays = st.load(data)
    except Exception as e:
        raise CheckpointError(f'leafgrad.load: {name} is corrupted ({e})') from None
    structure = meta.get('structure', '')
    if _digest(structure, arrays) != meta.get('sha256'):
        raise CheckpointError(f'leafgrad.load: {name} failed its integrity check (sha256 mismatch): the file was '
                              'modified or damaged after it was written')
    if map_location is not None:
        dev = map_location if isinstance(map_location, backend.device) else backend.device(str(map_location))
        arrays = {k: backend.to_device(a, dev) for k, a in arrays.items()}
    else:
        # arrays from safetensors are read-only views of the file's bytes: give tensors their own
        arrays = {k: np.array(a, copy=True) for k, a in arrays.items()}
    return _decode(json.loads(structure), arrays, {})


__all__ = ['save', 'load', 'CheckpointError']
