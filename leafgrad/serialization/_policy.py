"""What a checkpoint may build: PyTorch's ``weights_only`` rules, and the allowlist.

Every class and function a checkpoint names - a global in a ``torch.save`` pickle, an object record
in leafgrad's own format - is looked up here by its name (``_names``), never imported. A name
resolves to

- leafgrad's stand-in for what ``torch.load(weights_only=True)`` admits by default (tensors rebuilt
  from storages, parameters, OrderedDict, Counter, set, bytearray, complex, ``torch.Size``,
  ``torch.device``, dtypes, storage types); these build only data;
- or an object the user allowlisted (``add_safe_globals``, ``safe_globals``), which is then used
  exactly as PyTorch's weights-only unpickler uses it: called by REDUCE, ``cls.__new__(cls, *args)``
  by NEWOBJ, and given its state by BUILD (``__setstate__``, else ``__dict__`` and slots updated),
  provided the object's type is allowlisted too.

Anything else is refused by name before anything is built from it, in PyTorch's words
(``Unsupported global: GLOBAL __main__.Net was not an allowed global by default...``), as an
``UnsafeCheckpointError`` (a ``pickle.UnpicklingError``); the modules ``sys``, ``os``, ``posix``
and ``nt`` stay blocked even when allowlisted. Nothing that is not allowlisted is ever called.
"""
import re
from collections import Counter, OrderedDict

from .. import backend
from ..tensor import Size, Tensor
from ._files import CheckpointError, refusal
from ._names import allowlist_name
from ._storage import dtype_named, leafgrad_dtypes

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


class StorageType:
    """A storage class named in a pickle (``torch.FloatStorage``): stands for its dtype."""
    __slots__ = ('dtype', 'name')

    def __init__(self, dtype, name):
        self.dtype, self.name = dtype, name

    def __repr__(self):
        return f'StorageType(dtype={self.dtype})'


class Typed:
    """A storage as a rebuild function receives it: bytes (a uint8 array) and their dtype."""
    __slots__ = ('array', 'dtype')

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype


def fail(what):
    return CheckpointError(f'leafgrad.load: {what}')


# ---- what the pickle may build -------------------------------------------------------------------
def non_negative(value, what):
    if type(value) is not int or value < 0:
        raise fail(f'{what} is {value!r:.60}, not a non-negative integer')
    return value


def _dims(value, what):
    if type(value) not in (tuple, list, Size) or len(value) > 64:
        raise fail(f'{what} is {type(value).__name__}, not a tuple of sizes')
    return tuple(non_negative(v, what) for v in value)


def _tensor(storage, dtype, offset, size, stride, requires_grad):
    """A tensor viewing ``storage`` as torch's ``set_(storage, offset, size, stride)`` does."""
    if type(storage) is not Typed:
        raise fail(f'a tensor is rebuilt from {type(storage).__name__}, not a storage')
    offset, size, stride = non_negative(offset, 'a storage offset'), _dims(size, 'a size'), _dims(stride, 'a stride')
    if len(size) != len(stride) or type(requires_grad) is not bool:
        raise fail(f'a tensor of size {size}, stride {stride}, requires_grad {requires_grad!r:.20}')
    itemsize = dtype.itemsize
    array = storage.array
    if array.nbytes % itemsize:
        raise fail(f'a storage of {array.nbytes} bytes holds {dtype} elements of {itemsize} bytes')
    count = array.nbytes // itemsize
    end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if 0 not in size else offset
    if end > count:
        raise fail(f'a tensor of size {size}, stride {stride}, offset {offset} reaches past its storage of '
                    f'{count} elements')
    elements = array.view(dtype.np)[offset:]
    data = backend.array_module(array).lib.stride_tricks.as_strided(
        elements, shape=size, strides=tuple(s * itemsize for s in stride))
    t = Tensor._wrap(data)
    if requires_grad:
        try:
            t.requires_grad_(True)
        except RuntimeError as e:
            raise fail(str(e)) from None
    return t


def _plain_rebuild_arguments(backward_hooks, metadata):
    if backward_hooks is not None and (type(backward_hooks) not in (dict, OrderedDict) or backward_hooks):
        raise fail('a tensor with backward hooks (leafgrad loads none)')
    if metadata is not None and (type(metadata) is not dict or any(metadata.values())):
        raise fail(f'a tensor with the flags {metadata!r:.60} (conjugate or negative views; leafgrad has none)')


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor(storage, getattr(storage, 'dtype', None), storage_offset, size, stride, False)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    _plain_rebuild_arguments(backward_hooks, metadata)
    return _tensor(storage, getattr(storage, 'dtype', None), storage_offset, size, stride, requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                       metadata=None):
    if not isinstance(dtype, backend.dtype):
        raise fail(f'a tensor of dtype {dtype!r:.60}')
    _plain_rebuild_arguments(backward_hooks, metadata)
    return _tensor(storage, dtype, storage_offset, size, stride, requires_grad)


def _parameter(data, requires_grad=True):
    from ..nn.parameter import Parameter  # (loaded when first used: serialization does not load nn)
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise fail(f'a Parameter of {type(data).__name__} with requires_grad {requires_grad!r:.20}')
    try:
        return Parameter(data, requires_grad)
    except RuntimeError as e:  # only floating-point tensors can require gradients
        raise fail(str(e)) from None


def _rebuild_parameter(data, requires_grad, backward_hooks):
    _plain_rebuild_arguments(backward_hooks, None)
    return _parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_attributes(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    from ..nn.parameter import Parameter  # (loaded when first used: serialization does not load nn)
    if not any(func is f for f in _REBUILDERS) or not (new_type is Tensor or new_type is Parameter) \
            or type(args) is not tuple:
        raise fail(f'a tensor rebuilt by {func!r:.60} as {new_type!r:.60}')
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
            raise fail(f'tensor attributes given as {type(attributes).__name__}')
        for name, value in attributes.items():
            if type(name) is not str or not name.isidentifier() or name.startswith('_') or hasattr(type(obj), name):
                raise fail(f'a tensor attribute named {name!r:.60} (only new public names are set)')
            setattr(obj, name, value)
    return obj


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
               _rebuild_parameter_with_state)


def _make_mapping(kind):
    def make(*args):
        if len(args) > 1 or (args and type(args[0]) not in (list, tuple, dict, OrderedDict, Counter, str)):
            raise fail(f'{kind.__name__} of {tuple(type(a).__name__ for a in args)}')
        return kind(*args)
    return make


def _make_set(*args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple, set)):
        raise fail(f'set of {tuple(type(a).__name__ for a in args)}')
    return set(*args)


def _make_size(*args):
    if len(args) > 1 or (args and (type(args[0]) not in (list, tuple) or any(type(d) is not int for d in args[0]))):
        raise fail(f'torch.Size of {args!r:.60}')
    return Size(*args)


def _make_device(*args):
    index = args[1] if len(args) == 2 else None
    if not 1 <= len(args) <= 2 or type(args[0]) is not str or (index is not None and type(index) is not int):
        raise fail(f'torch.device{args!r:.60}')
    try:
        return backend.device(*args)
    except (RuntimeError, ValueError) as e:
        raise fail(f'torch.device{args!r:.60}: {e}') from None


_TEXT_ENCODINGS = ('latin1', 'latin-1', 'ascii', 'utf-8', 'utf8')


def _codecs_encode(text, encoding):
    if type(text) is not str or encoding not in _TEXT_ENCODINGS:
        raise fail(f'_codecs.encode of {type(text).__name__} as {encoding!r:.30}')
    return text.encode(encoding)


def _make_bytearray(*args):
    if not args:
        return bytearray()
    if len(args) == 1 and type(args[0]) is bytes:
        return bytearray(args[0])
    if len(args) == 2 and type(args[0]) is str and args[1] in _TEXT_ENCODINGS:
        return bytearray(*args)
    raise fail(f'bytearray of {tuple(type(a).__name__ for a in args)}')  # (never bytearray(n): n bytes)


def _make_complex(*args):
    if len(args) > 2 or any(type(a) not in (int, float, bool, str) for a in args):
        raise fail(f'complex of {tuple(type(a).__name__ for a in args)}')
    return complex(*args)


_ALLOWED = None


def _allowed():
    """'module.name' -> the object a pickle gets for that global, and id(object) -> (object, the
    function a REDUCE of it calls)."""
    global _ALLOWED
    if _ALLOWED is None:
        from ..nn.parameter import Parameter  # (loaded when first used: serialization does not load nn)
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
                    names[f'{module}.{storage}'] = (StorageType(dtype, f'{module}.{storage}'), None)
        names['torch.storage.UntypedStorage'] = (StorageType(backend.uint8, 'torch.storage.UntypedStorage'), None)
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


class Passthrough(Exception):
    """Carries an error that is the caller's, not the file's (a malformed allowlist, a failing
    ``map_location``) past the readers, which report their own errors as damage; ``load``
    raises ``error`` itself."""

    def __init__(self, error):
        self.error = error


# ---- the allowlist (torch.serialization.add_safe_globals and kin) ---------------------------------
_user_globals = set()


def add_safe_globals(safe_globals):
    """Mark classes and functions as safe to rebuild from a checkpoint: each item is the object or
    ``(object, 'module.qualname')``, the name the checkpoint gives it."""
    global _user_globals
    _user_globals = _user_globals.union(set(safe_globals))


def get_safe_globals():
    """The classes and functions that ``add_safe_globals`` marked safe."""
    return list(_user_globals)


def clear_safe_globals():
    """Forget every class and function that ``add_safe_globals`` marked safe."""
    global _user_globals
    _user_globals = set()


def remove_safe_globals(safe_globals):
    global _user_globals
    _user_globals = _user_globals - set(safe_globals)


class safe_globals:
    """Context manager: the given classes and functions are allowlisted inside the ``with`` block
    (and removed from the allowlist when it ends, as in PyTorch, even if allowlisted before)."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        remove_safe_globals(self.safe_globals)


def user_allowed():
    """name -> object for the allowlist as it is now (PyTorch's errors for a malformed entry)."""
    named = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError('Expected tuple of length 2 (global, str of callable full path), but got tuple of '
                                 f'length: {len(entry)}')
            if type(entry[1]) is not str:
                raise TypeError('Expected second item in tuple to be str of callable full path, but got: '
                                f'{type(entry[1])}')
            named[entry[1]] = entry[0]
        else:
            named[allowlist_name(entry)] = entry
    return named


def is_allowed(full_name, user=None):
    """Whether a checkpoint may name ``full_name`` (allowed by default or allowlisted)."""
    return full_name in _allowed()[0] or full_name in (user_allowed() if user is None else user)


def storage_type(dtype):
    """The ``torch.<X>Storage`` stand-in of ``dtype`` (what torch.save names a storage by)."""
    table = _allowed()[0]
    for storage, name in _STORAGE_DTYPES.items():
        if name == dtype.name:
            return table[f'torch.{storage}']
    raise TypeError(f'torch has no storage type for {dtype}')


def default_name(obj):
    """The name of a stand-in that PyTorch admits by default (``torch.float32``,
    ``torch._utils._rebuild_tensor_v2`` ...), or None for any other object."""
    global _NAME_OF
    if _NAME_OF is None:
        names = {}
        for name, value in _allowed()[0].items():
            names.setdefault(id(value), (value, name))  # (torch.FloatStorage before torch.cuda.FloatStorage)
        _NAME_OF = names
    entry = _NAME_OF.get(id(obj))
    return entry[1] if entry is not None and entry[0] is obj else None


_NAME_OF = None


def _shown(obj):
    text = str(obj)
    return text if len(text) <= 300 else text[:297] + '...'


# ---- what a pickle's opcodes (or a leafgrad object record) may do -------------------------------
class Policy:
    """The rules for one load: a table of names (default and allowlisted, read once when the load
    starts) and what REDUCE, NEWOBJ, BUILD and a persistent id may do."""

    def __init__(self, name, persistent_load=None):
        self.name = name
        self._persistent_load = persistent_load
        self._user = None

    @property
    def user(self):
        """The allowlist, named (read when a load first needs it, as PyTorch reads it)."""
        if self._user is None:
            try:
                self._user = user_allowed()
            except (ValueError, TypeError, AttributeError) as e:
                raise Passthrough(e) from None
            self._user_ids = {id(obj) for obj in self._user.values()}
        return self._user

    def _is_user(self, obj):
        return id(obj) in self._user_ids if self.user else False

    def find_global(self, module, name):
        full = f'{module}.{name}'
        if module in _BLOCKED_MODULES:
            raise refusal(f'Trying to load unsupported GLOBAL {full} whose module {module} is blocked.', 'blocked')
        table, _ = _allowed()
        if full in table:
            return table[full]
        if full in self.user:
            return self.user[full]
        why = _missing_type(full)
        if why is not None:
            raise fail(f'{self.name} holds {full} ({why})')
        if full.startswith('builtins.'):
            full = full[len('builtins.'):]
        raise refusal(f'Unsupported global: GLOBAL {full} was not an allowed global by default. Please use '
                      f'`leafgrad.serialization.add_safe_globals([{full}])` or the '
                      f'`leafgrad.serialization.safe_globals([{full}])` context manager to allowlist this global '
                      'if you trust this class/function.', 'global')

    def call(self, func, args):
        """REDUCE: ``func(*args)``."""
        _, calls = _allowed()
        entry = calls.get(id(func))
        if entry is not None and entry[0] is func:
            return entry[1](*args)
        if self._is_user(func):
            return func(*args)
        message = f'Trying to call reduce for unrecognized function {_shown(func)}'
        if hasattr(func, '__self__'):
            message += f' which belongs to {_shown(func.__self__)}'
        raise refusal(message)

    def new(self, cls, args):
        """NEWOBJ: ``cls.__new__(cls, *args)``."""
        from ..nn.parameter import Parameter  # (loaded when first used: serialization does not load nn)
        if cls is Parameter:
            return _parameter(*args)
        if cls is OrderedDict or cls is Counter or cls is set or cls is bytearray:
            return cls()  # (what cls.__new__ gives; the items follow)
        if cls is complex:
            return _make_complex(*args)
        if cls is Size:
            return _make_size(*args)
        if cls is backend.device:
            return _make_device(*args)
        if self._is_user(cls):
            return cls.__new__(cls, *args)
        if default_name(cls) is not None:
            raise fail(f'{self.name} creates a new object of {default_name(cls)}, which leafgrad does not do')
        raise refusal('Can only create new object for nn.Parameter or classes allowlisted via `add_safe_globals` but '
                      f'got {_shown(cls)}')

    def build(self, obj, state):
        """BUILD: give ``obj`` its state."""
        kind = type(obj)
        if kind is OrderedDict:
            if state is None:
                return
            if type(state) is not dict or any(type(k) is not str for k in state):
                raise fail(f'OrderedDict attributes given as {type(state).__name__}')
            obj.__dict__.update(state)  # (a state_dict's _metadata)
            return
        if kind is Counter or self._is_user(kind):
            setstate = getattr(obj, '__setstate__', None)
            if setstate is not None:
                setstate(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                obj.__dict__.update(state)
            if slotstate:
                for key, value in slotstate.items():
                    setattr(obj, key, value)
            return
        if default_name(kind) is not None or kind is Tensor or kind is set:
            raise fail(f'{self.name} sets the state of a {kind.__name__}, which leafgrad does not do')
        raise refusal('Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`, '
                      f'but got {kind}')

    def persistent_load(self, pid):
        if self._persistent_load is None:
            raise refusal('unsupported persistent id encountered')
        if type(pid) is not tuple and type(pid) is not int:
            raise refusal(f'persistent_load id must be tuple or int, but got {type(pid)}')
        if type(pid) is not tuple or not pid or ascii_text(pid[0]) != 'storage':
            shown = type(pid[0]) if type(pid) is tuple and pid else type(pid)
            raise refusal(f'Only persistent_load of storage is allowed, but got {shown}')
        return self._persistent_load(pid)


def ascii_text(value):
    return value.decode('ascii') if type(value) is bytes else value


def extend_list(target, items, opcode):
    """APPEND (opcode 'append') or APPENDS ('extend'): lists only."""
    if type(target) is not list:
        raise refusal(f'Can only append to lists, but got {type(target)}' if opcode == 'append'
                      else f'Can only extend lists, but got {type(target)}')
    target.extend(items)


def set_items(target, pairs, opcode):
    """SETITEM / SETITEMS: dict, OrderedDict and Counter only."""
    if type(target) not in (dict, OrderedDict, Counter):
        raise refusal(f'Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but got '
                      f'{type(target)}')
    for key, value in pairs:
        target[key] = value
