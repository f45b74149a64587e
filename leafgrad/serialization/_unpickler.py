"""A pickle reader that builds only data.

Python's pickle turns a file into calls: any global named in the file is imported and called. This
reader runs the same opcodes (protocols 2 to 5) over its own stack and memo, but looks every
global up in a table its caller supplies (``policy.find_global``) and lets the policy alone
decide what a call (REDUCE), a ``cls.__new__`` (NEWOBJ), a ``__setstate__`` (BUILD) and a
persistent id may do. Nothing is imported; no callable that the policy did not hand out can be
reached, so a file can only produce numbers, strings, bytes, containers and what the policy
builds. Opcodes that exist only to reach arbitrary code (INST, OBJ, EXT*, NEWOBJ_EX, the text
protocol 0 forms) are refused, as are tuples nested so deep that hashing them would overflow the
C stack.
"""
import _compat_pickle
import struct

from ._files import CheckpointError, refusal
from ._policy import extend_list, set_items

MAX_TUPLE_DEPTH = 1000  # tuples inside tuples; hash() of a deeper one recurses without a limit
_MAX_LINE = 4096        # a GLOBAL's module or name


class Unpickler:
    """``Unpickler(source, policy).load()``: the object of one pickle read from ``source`` (a
    ``_files.Source``), built as ``policy`` allows."""

    def __init__(self, source, policy, encoding='utf-8', errors='strict'):
        self.source = source
        self.policy = policy
        self.encoding = encoding
        self.errors = errors

    def load(self):
        self.stack, self.metastack, self.memo = [], [], {}
        self.tuple_depth = {}  # id -> nesting depth of the tuples built here
        ops = _OPS
        read = self.source.read
        try:
            while True:
                code = read(1, 'the pickle')[0]
                op = ops.get(code)
                if op is None:
                    raise refusal(f'Unsupported operand {code}')
                if op is _stop:
                    return self.stack.pop()
                op(self)
        except CheckpointError:
            raise
        except (IndexError, KeyError, TypeError, ValueError, AttributeError, struct.error, OverflowError,
                RecursionError) as e:
            # a stack or memo that the opcodes do not fit, or arguments the policy's builders refuse
            raise CheckpointError(f'leafgrad.load: {self.source.name} has a corrupted pickle '
                                  f'({type(e).__name__}: {e})') from None

    # ---- helpers ----
    def read(self, n):
        return self.source.read(n, 'the pickle')

    def push(self, obj):
        self.stack.append(obj)

    def pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def make_tuple(self, items):
        depth = self.tuple_depth
        level = 1 + max((depth.get(id(x), 0) for x in items if type(x) is tuple), default=0)
        if level > MAX_TUPLE_DEPTH:
            raise CheckpointError(f'leafgrad.load: {self.source.name} holds tuples nested more than {MAX_TUPLE_DEPTH} '
                                  'deep')
        t = tuple(items)
        depth[id(t)] = level
        return t

    def string8(self, data):
        if self.encoding == 'bytes':
            return data
        return data.decode(self.encoding, self.errors)

    def global_(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # protocol 2 files use Python 2's names
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        return self.policy.find_global(module, name)


def _stop(self):
    pass


def _op_proto(self):
    self.read(1)


def _op_frame(self):
    self.read(8)


def _op_global(self):
    module = self.source.readline(_MAX_LINE, 'a global').decode('utf-8')[:-1]
    name = self.source.readline(_MAX_LINE, 'a global').decode('utf-8')[:-1]
    self.push(self.global_(module, name))


def _op_stack_global(self):
    name = self.stack.pop()
    module = self.stack.pop()
    if type(name) is not str or type(module) is not str:
        raise refusal('STACK_GLOBAL requires str')
    self.push(self.global_(module, name))


def _op_reduce(self):
    args = self.stack.pop()
    if type(args) is not tuple:
        raise refusal(f'REDUCE with arguments of type {type(args).__name__}')
    self.stack[-1] = self.policy.call(self.stack[-1], args)


def _op_newobj(self):
    args = self.stack.pop()
    cls = self.stack.pop()
    if type(args) is not tuple:
        raise refusal(f'NEWOBJ with arguments of type {type(args).__name__}')
    self.push(self.policy.new(cls, args))


def _op_build(self):
    state = self.stack.pop()
    self.policy.build(self.stack[-1], state)


def _op_binpersid(self):
    self.push(self.policy.persistent_load(self.stack.pop()))


def _op_mark(self):
    self.metastack.append(self.stack)
    self.stack = []


def _op_pop(self):
    if self.stack:
        self.stack.pop()
    else:
        self.pop_mark()


def _op_pop_mark(self):
    self.pop_mark()


def _op_dup(self):
    self.push(self.stack[-1])


def _op_append(self):
    item = self.stack.pop()
    extend_list(self.stack[-1], (item,), 'append')


def _op_appends(self):
    items = self.pop_mark()
    extend_list(self.stack[-1], items, 'extend')


def _op_setitem(self):
    value = self.stack.pop()
    key = self.stack.pop()
    set_items(self.stack[-1], ((key, value),), 'SETITEM')


def _op_setitems(self):
    items = self.pop_mark()
    if len(items) % 2:
        raise ValueError(f'SETITEMS of {len(items)} items, not key-value pairs')
    set_items(self.stack[-1], zip(items[0::2], items[1::2]), 'SETITEMS')


def _op_additems(self):
    items = self.pop_mark()
    target = self.stack[-1]
    if type(target) is not set:
        raise refusal(f'Can only add items to sets, but got {type(target)}')
    target.update(items)


def _op_tuple(self):
    self.push(self.make_tuple(self.pop_mark()))


def _op_tuple1(self):
    self.stack[-1] = self.make_tuple(self.stack[-1:])


def _op_tuple2(self):
    self.stack[-2:] = [self.make_tuple(self.stack[-2:])]


def _op_tuple3(self):
    self.stack[-3:] = [self.make_tuple(self.stack[-3:])]


def _constant(value):
    def op(self):
        self.push(value)
    return op


def _op_empty_tuple(self):
    self.push(())


def _op_empty_list(self):
    self.push([])


def _op_empty_dict(self):
    self.push({})


def _op_empty_set(self):
    self.push(set())


def _unpacked(fmt, size):
    def op(self):
        self.push(struct.unpack(fmt, self.read(size))[0])
    return op


def _op_long1(self):
    self.push(int.from_bytes(self.read(self.read(1)[0]), 'little', signed=True))


def _op_long4(self):
    (n,) = struct.unpack('<i', self.read(4))
    if n < 0:
        raise CheckpointError(f'leafgrad.load: {self.source.name} has a corrupted pickle (LONG pickle has negative '
                              'byte count)')
    self.push(int.from_bytes(self.read(n), 'little', signed=True))


def _sized(length_fmt, length_size, make):
    def op(self):
        (n,) = struct.unpack(length_fmt, self.read(length_size))
        if n < 0:
            raise ValueError('negative byte count')
        self.push(make(self, self.read(n)))
    return op


def _text(self, data):
    return str(data, 'utf-8', 'surrogatepass')


def _op_binget(self):
    self.push(self.memo[self.read(1)[0]])


def _op_long_binget(self):
    self.push(self.memo[struct.unpack('<I', self.read(4))[0]])


def _op_binput(self):
    self.memo[self.read(1)[0]] = self.stack[-1]


def _op_long_binput(self):
    self.memo[struct.unpack('<I', self.read(4))[0]] = self.stack[-1]


def _op_memoize(self):
    self.memo[len(self.memo)] = self.stack[-1]


_OPS = {
    0x80: _op_proto, 0x95: _op_frame, ord('.'): _stop,
    ord('c'): _op_global, 0x93: _op_stack_global, ord('R'): _op_reduce, 0x81: _op_newobj, ord('b'): _op_build,
    ord('Q'): _op_binpersid,
    ord('('): _op_mark, ord('0'): _op_pop, ord('1'): _op_pop_mark, ord('2'): _op_dup,
    ord('a'): _op_append, ord('e'): _op_appends, ord('s'): _op_setitem, ord('u'): _op_setitems, 0x90: _op_additems,
    ord('t'): _op_tuple, 0x85: _op_tuple1, 0x86: _op_tuple2, 0x87: _op_tuple3,
    ord(')'): _op_empty_tuple, ord(']'): _op_empty_list, ord('}'): _op_empty_dict, 0x8f: _op_empty_set,
    ord('N'): _constant(None), 0x88: _constant(True), 0x89: _constant(False),
    ord('J'): _unpacked('<i', 4), ord('K'): _unpacked('<B', 1), ord('M'): _unpacked('<H', 2),
    ord('G'): _unpacked('>d', 8), 0x8a: _op_long1, 0x8b: _op_long4,
    ord('X'): _sized('<I', 4, _text), 0x8c: _sized('<B', 1, _text), 0x8d: _sized('<Q', 8, _text),
    ord('U'): _sized('<B', 1, Unpickler.string8), ord('T'): _sized('<i', 4, Unpickler.string8),
    ord('B'): _sized('<I', 4, lambda self, data: data), ord('C'): _sized('<B', 1, lambda self, data: data),
    0x8e: _sized('<Q', 8, lambda self, data: data), 0x96: _sized('<Q', 8, lambda self, data: bytearray(data)),
    ord('h'): _op_binget, ord('j'): _op_long_binget, ord('q'): _op_binput, ord('r'): _op_long_binput,
    0x94: _op_memoize,
}
