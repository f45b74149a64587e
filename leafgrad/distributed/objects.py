"""Collectives on picklable Python objects: ``broadcast_object_list``, ``all_gather_object``,
``gather_object``, ``scatter_object_list``, ``send_object_list``/``recv_object_list``.

As in PyTorch, each object is pickled into bytes, the sizes are exchanged first and then the
bytes. Unpickling runs code chosen by the sender: use these only between the ranks of one job
(they trust each other as much as they trust the program they all run).
"""
import pickle

import numpy as np

from . import collectives as C
from .process_group import GroupMember


def _to_bytes(obj):
    return np.frombuffer(pickle.dumps(obj), dtype=np.uint8)


def _from_bytes(buf):
    return pickle.loads(buf.tobytes())


def _sizes_everywhere(group, size):
    """Every rank's size (an all-gather of one int64 each)."""
    sizes = np.zeros(group.size(), np.int64)
    mine = np.array([size], np.int64)
    group.run('ALLGATHER', lambda: [group._comm.Iallgather(mine.view(np.uint8), sizes.view(np.uint8))])
    return sizes


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    group = C._resolve(group)
    if src is None and group_src is None:
        src = 0
    if group is not GroupMember.NON_GROUP_MEMBER:
        group_src = C._group_rank(group, src, group_src)
    if C._not_in_group(group, 'broadcast_object_list'):
        return None
    C._check_root(group, group_src, 'broadcast')
    root = group.rank() == group_src
    if root:
        pieces = [_to_bytes(obj) for obj in object_list]
        sizes = np.array([p.size for p in pieces], np.int64)
    else:
        sizes = np.empty(len(object_list), np.int64)
    C.broadcast_array(group, sizes, group_src).wait()
    data = np.concatenate(pieces) if root and pieces else np.empty(int(sizes.sum()), np.uint8)
    C.broadcast_array(group, data, group_src).wait()
    if not root:
        offset = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _from_bytes(data[offset:offset + n])
            offset += n
    return None


def all_gather_object(object_list, obj, group=None):
    if C._not_in_group(group, 'all_gather_object'):
        return None
    group = C._resolve(group)
    mine = _to_bytes(obj)
    sizes = _sizes_everywhere(group, mine.size)
    width = int(sizes.max())
    padded = np.zeros(width, np.uint8)
    padded[:mine.size] = mine
    flat = np.empty(width * group.size(), np.uint8)
    group.run('ALLGATHER', lambda: [group._comm.Iallgather(padded, flat)])
    for i, n in enumerate(sizes.tolist()):
        object_list[i] = _from_bytes(flat[i * width:i * width + n])
    return None


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    group = C._resolve(group)
    if dst is None and group_dst is None:
        dst = 0
    if group is not GroupMember.NON_GROUP_MEMBER:
        group_dst = C._group_rank(group, dst, group_dst)
    if C._not_in_group(group, 'gather_object'):
        return None
    C._validate_list_for_rank(group.rank(), group_dst, object_gather_list, 'gather_list', 'destination')
    C._check_root(group, group_dst, 'gather')
    mine = _to_bytes(obj)
    sizes = _sizes_everywhere(group, mine.size)
    width = int(sizes.max())
    padded = np.zeros(width, np.uint8)
    padded[:mine.size] = mine
    root = group.rank() == group_dst
    flat = np.empty(width * group.size() if root else 0, np.uint8)
    group.run('GATHER', lambda: [group._comm.Igather(padded, flat if root else None, group_dst)])
    if root:
        for i, n in enumerate(sizes.tolist()):
            object_gather_list[i] = _from_bytes(flat[i * width:i * width + n])
    return None


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    group = C._resolve(group)
    if src is None and group_src is None:
        src = 0
    if group is not GroupMember.NON_GROUP_MEMBER:
        group_src = C._group_rank(group, src, group_src)
    if C._not_in_group(group, 'scatter_object_list'):
        return None
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError('Expected argument scatter_object_output_list to be a list of size at least 1.')
    C._check_root(group, group_src, 'scatter')
    root = group.rank() == group_src
    n = group.size()
    if root:
        if scatter_object_input_list is None:
            raise ValueError('source rank must provide non-None scatter_object_input_list')
        pieces = [_to_bytes(obj) for obj in scatter_object_input_list]
        sizes = np.array([p.size for p in pieces], np.int64)
        if len(pieces) != n:
            raise RuntimeError(f'ProcessGroupMPI::scatter: Incorrect input list size {len(pieces)}. Input list size '
                               f'should be {n}, same as size of the process group.')
    else:
        sizes = np.empty(n, np.int64)
    C.broadcast_array(group, sizes, group_src).wait()
    width = int(sizes.max())
    flat = None
    if root:
        flat = np.zeros(width * n, np.uint8)
        for i, p in enumerate(pieces):
            flat[i * width:i * width + p.size] = p
    mine = np.empty(width, np.uint8)
    group.run('SCATTER', lambda: [group._comm.Iscatter(flat, mine, group_src)])
    scatter_object_output_list[0] = _from_bytes(mine[:int(sizes[group.rank()])])
    return None


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None, use_batch=False):
    group = C._resolve(group)
    group_dst = C._group_rank(group, dst, group_dst)
    if group.rank() == group_dst:
        raise ValueError('Invalid destination rank: destination rank should not be the same as the rank of the '
                         'current process.')
    if C._not_in_group(group, 'send_object_list'):
        return None
    C._check_root(group, group_dst, 'send', 'destination')
    pieces = [_to_bytes(obj) for obj in object_list]
    sizes = np.array([p.size for p in pieces], np.int64)
    data = np.concatenate(pieces) if pieces else np.empty(0, np.uint8)
    group.run('SEND', lambda: [group._comm.Isend(sizes.view(np.uint8), group_dst, 0)])
    group.run('SEND', lambda: [group._comm.Isend(data, group_dst, 0)])
    return None


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None, use_batch=False):
    group = C._resolve(group)
    group_src = C._group_rank(group, src, group_src)
    if group.rank() == group_src:
        raise ValueError('Invalid source rank: source rank should not be the same as the rank of the current '
                         'process.')
    if C._not_in_group(group, 'recv_object_list'):
        return -1
    C._check_root(group, group_src, 'recv', 'source')
    sizes = np.empty(len(object_list), np.int64)
    group.run('RECV', lambda: [group._comm.Irecv(sizes.view(np.uint8), group_src, 0)])
    data = np.empty(int(sizes.sum()), np.uint8)
    group.run('RECV', lambda: [group._comm.Irecv(data, group_src, 0)])
    offset = 0
    for i, n in enumerate(sizes.tolist()):
        object_list[i] = _from_bytes(data[offset:offset + n])
        offset += n
    return C.get_global_rank(group, group_src)
