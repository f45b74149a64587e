"""Variable-length sequences for the recurrent layers: PackedSequence and its helpers.

A packed sequence keeps the time steps of a batch sorted by length (longest first) one after the
other: ``data`` holds, for each step t, the rows of the ``batch_sizes[t]`` sequences still running
(so the batch sizes never grow). ``sorted_indices`` maps the packed order to the caller's batch
and ``unsorted_indices`` back. Packing and padding are each one ``index_select`` with an index
built in NumPy, so autograd records one node and the gradient flows back to the padded input.
"""
from collections import namedtuple
from collections.abc import Iterable

from ... import backend, creation
from ...tensor import Tensor
from ...ops.indexing import index_select
from ...ops import cat, stack
from ...ops._util import xp  # (NumPy, or CuPy's dispatcher once a GPU is in use)

__all__ = ['PackedSequence', 'invert_permutation', 'pack_padded_sequence', 'pad_packed_sequence', 'pad_sequence',
           'unpad_sequence', 'pack_sequence', 'unpack_sequence']

PackedSequence_ = namedtuple('PackedSequence_', ['data', 'batch_sizes', 'sorted_indices', 'unsorted_indices'])


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and list of ``batch_sizes`` of a packed sequence (made by pack_padded_sequence
    or pack_sequence, never by hand)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices,
                                                                 unsorted_indices))

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes, _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move),
                          _bind(self.unsorted_indices, move))

    def cuda(self, *args, **kwargs):
        kwargs.setdefault('device', 'cuda')
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs['device'] = 'cpu'
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=backend.float64)

    def float(self):
        return self.to(dtype=backend.float32)

    def half(self):
        return self.to(dtype=backend.float16)

    def long(self):
        return self.to(dtype=backend.int64)

    def int(self):
        return self.to(dtype=backend.int32)

    def short(self):
        return self.to(dtype=backend.int16)

    def char(self):
        return self.to(dtype=backend.int8)

    def byte(self):
        return self.to(dtype=backend.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != 'cpu':
            raise ValueError('batch_sizes should always be on CPU. Instances of PackedSequence should never be '
                             'created manually. They should be instantiated by functions like pack_sequence and '
                             'pack_padded_sequences in nn.utils.rnn. '
                             'https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence')
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError('Expected data to be a list or tuple of length 2')
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None for None)."""
    if permutation is None:
        return None
    p = permutation._data
    out = xp.empty_like(p)
    out[p] = xp.arange(p.size, dtype=p.dtype)
    return creation.tensor(out)


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D cpu {_legacy_type(lengths)} tensor")
        return lengths._data.astype(xp.int64)
    return xp.asarray(lengths, dtype=xp.int64).reshape(-1)


def _legacy_type(t):
    return {'int64': 'Long', 'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'float32': 'Float',
            'float64': 'Double', 'bool': 'Bool'}.get(str(t._data.dtype), str(t._data.dtype))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences of the given
    lengths; with ``enforce_sorted`` the lengths must be decreasing, else they are sorted here."""
    lens = _lengths_array(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = xp.argsort(-lens, kind='stable')
        lens = lens[order]
        sorted_indices = creation.tensor(order.astype(xp.int64))
        input = index_select(input, 0 if batch_first else 1, sorted_indices)
    batch = input.shape[0 if batch_first else 1]
    if lens.size != batch:
        raise RuntimeError(f'Expected `len(lengths)` to be equal to batch_size, but got {lens.size} '
                           f'(batch_size={batch})')
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           'is <= 0')
    if xp.any(lens[1:] > lens[:-1]):
        raise RuntimeError('`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You '
                           'can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep '
                           'this requirement if you do not need ONNX exportability.')
    steps = int(lens[0]) if lens.size else 0
    batch_sizes = (lens[None, :] > xp.arange(steps)[:, None]).sum(1).astype(xp.int64)
    # row of the flattened (T*B, *) input for each packed row, time-major
    t_idx = xp.repeat(xp.arange(steps), batch_sizes)
    b_idx = xp.concatenate([xp.arange(n) for n in batch_sizes]) if steps else xp.zeros(0, xp.int64)
    T = input.shape[1 if batch_first else 0]
    flat_rows = b_idx * T + t_idx if batch_first else t_idx * batch + b_idx
    flat = input.reshape((-1,) + tuple(input.shape[2:]))
    data = index_select(flat, 0, creation.tensor(flat_rows.astype(xp.int64)))
    return PackedSequence(data, creation.tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch (T, B, *) of a PackedSequence and the lengths (an int64 tensor), in the
    caller's original batch order."""
    batch_sizes = sequence.batch_sizes._data.astype(xp.int64)
    max_len = batch_sizes.size
    if total_length is not None:
        if total_length < max_len:
            raise ValueError('Expected total_length to be at least the length of the longest sequence in input, '
                             f'but got total_length={total_length} and max sequence length being {max_len}')
        max_len = total_length
    data = sequence.data
    batch = int(batch_sizes[0]) if batch_sizes.size else 0
    lengths = (batch_sizes[None, :] > xp.arange(batch)[:, None]).sum(1).astype(xp.int64)
    offsets = xp.concatenate([[0], xp.cumsum(batch_sizes)[:-1]]).astype(xp.int64)
    n = data.shape[0]
    # index into cat([data, one padding row]): the packed row of (t, b), or the padding row
    index = xp.full((max_len, batch), n, dtype=xp.int64)
    for t, (off, bs) in enumerate(zip(offsets, batch_sizes)):
        index[t, :bs] = off + xp.arange(bs)
    if batch_first:
        index = index.T
    pad_row = creation.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = index_select(cat([data, pad_row]), 0, creation.tensor(index.reshape(-1).copy()))
    padded = padded.reshape(index.shape + tuple(data.shape[1:]))
    lengths_t = creation.tensor(lengths)
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 0 if batch_first else 1, sequence.unsorted_indices)
        lengths_t = creation.tensor(lengths[sequence.unsorted_indices._data])
    return padded, lengths_t


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right'):
    """Stack tensors of shapes (L_i, *) into (max L, B, *) (or (B, max L, *)), padded with
    ``padding_value`` on the right (or the left)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f'pad_sequence: Expected iterable for input sequences, but got arg of type: '
                           f'{type(sequences)}')
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError('received an empty list of sequences')
    if padding_side not in ('left', 'right'):
        raise RuntimeError(f'Expected padding_side to be one of left or right, but got {padding_side}.')
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    max_len = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            for i, (a, b) in enumerate(zip(reversed(tuple(s.shape[1:])), reversed(trailing))):
                if a != b:
                    dim = len(trailing) - i
                    raise RuntimeError(f'The size of tensor a ({b}) must match the size of tensor b ({a}) at '
                                       f'non-singleton dimension {dim}')
            raise RuntimeError(f'The size of tensor a must match the size of tensor b')
        if s.dtype != first.dtype:
            s = s.to(first.dtype)
        short = max_len - s.shape[0]
        if short:
            pad = creation.full((short,) + trailing, padding_value, dtype=first.dtype, device=first.device)
            s = cat([s, pad] if padding_side == 'right' else [pad, s])
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch (as PyTorch: a time-major batch is
    transposed in place first)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = xp.arange(padded_sequences.shape[1])
    lens = lengths._data.tolist() if isinstance(lengths, Tensor) else list(lengths)
    if len(lens) != padded_sequences.shape[0]:
        raise ValueError(f'zip() argument 2 is {"shorter" if len(lens) < padded_sequences.shape[0] else "longer"} '
                         'than argument 1')
    return [padded_sequences[i][creation.tensor(idx < n)] for i, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_padded_sequence of pad_sequence(sequences) with their lengths."""
    lengths = creation.tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
