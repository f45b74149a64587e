"""Calls with one rank whose outcome (result, or exception type and message) must be PyTorch's.

Each case is ``lambda L: ...`` where ``L`` is ``torch`` or ``leafgrad``. tests/test_distributed.py
runs them on torch (gloo, world size 1, in its own process) and on leafgrad (MPI, world size
1, in a subprocess running this file) and compares.
"""
import json
import sys
import warnings


def _ddp_unused(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(3, 3)
            self.b = L.nn.Linear(3, 3)

        def forward(self, x):
            return self.a(x)
    L.manual_seed(0)
    d = L.nn.parallel.DistributedDataParallel(M())
    d(L.ones(2, 3)).sum().backward()
    return d(L.ones(2, 3))


def _ddp_outline(L):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        d = L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 2), broadcast_buffers=False)
    return [repr(d), list(d.state_dict()), [str(x.message) for x in w], [x.category.__name__ for x in w],
            d.broadcast_buffers, d.bucket_bytes_cap, type(d).__name__]


def _ddp_grads(L):
    lin = L.nn.Linear(3, 2)
    with L.no_grad():
        lin.weight.copy_(L.arange(6.).reshape(2, 3) / 10)
        lin.bias.fill_(-0.5)
    d = L.nn.parallel.DistributedDataParallel(lin, find_unused_parameters=False)
    d(L.arange(6.).reshape(2, 3)).pow(2).sum().backward()
    return [lin.weight.grad.tolist(), lin.bias.grad.tolist()]


def _work(L):
    w = L.distributed.all_reduce(L.ones(2), async_op=True)
    return [w.wait(), w.is_completed(), w.is_success()]


def _with(L, fn, *tensors):
    fn()
    return [t.tolist() for t in tensors]


CASES = {
    'rank and size': lambda L: [L.distributed.get_rank(), L.distributed.get_world_size(),
                                L.distributed.is_initialized()],
    'init twice': lambda L: L.distributed.init_process_group('gloo'),
    'all_reduce a list': lambda L: L.distributed.all_reduce([L.ones(2)]),
    'all_reduce int AVG': lambda L: L.distributed.all_reduce(L.tensor([1, 2]), op=L.distributed.ReduceOp.AVG),
    'all_reduce bool AVG': lambda L: L.distributed.all_reduce(L.tensor([True]), op=L.distributed.ReduceOp.AVG),
    'all_reduce float BAND': lambda L: L.distributed.all_reduce(L.ones(2), op=L.distributed.ReduceOp.BAND),
    'all_reduce AVG': lambda L: (lambda t: _with(L, lambda: L.distributed.all_reduce(
        t, op=L.distributed.ReduceOp.AVG), t))(L.arange(4.)),
    'all_reduce returns None': lambda L: L.distributed.all_reduce(L.ones(2)),
    'all_reduce version': lambda L: (lambda t: [L.distributed.all_reduce(t), t._version])(L.ones(2)),
    'all_reduce leaf requiring grad': lambda L: (lambda t: [L.distributed.all_reduce(t), t.tolist(),
                                                            t.requires_grad])(L.ones(2, requires_grad=True)),
    'broadcast invalid src': lambda L: L.distributed.broadcast(L.ones(2), src=3),
    'broadcast negative src': lambda L: L.distributed.broadcast(L.ones(2), src=-1),
    'reduce invalid dst': lambda L: L.distributed.reduce(L.ones(2), dst=3),
    'all_gather dtypes': lambda L: L.distributed.all_gather([L.ones(2, dtype=L.float64)], L.ones(2)),
    'all_gather list length': lambda L: L.distributed.all_gather([L.ones(2), L.ones(2)], L.ones(2)),
    'all_gather size': lambda L: L.distributed.all_gather([L.ones(3)], L.ones(2)),
    'all_gather not a list': lambda L: L.distributed.all_gather(L.ones(2), L.ones(2)),
    'all_gather version': lambda L: (lambda o: [L.distributed.all_gather(o, L.ones(2)), o[0]._version])(
        [L.zeros(2)]),
    'all_gather_single size': lambda L: L.distributed.all_gather_single(L.ones(3), L.ones(2)),
    'gather without list on dst': lambda L: L.distributed.gather(L.ones(2), None, dst=0),
    'gather list size': lambda L: L.distributed.gather(L.ones(2), [L.ones(2), L.ones(2)], dst=0),
    'scatter without list on src': lambda L: L.distributed.scatter(L.ones(2), None, src=0),
    'scatter sizes': lambda L: L.distributed.scatter(L.ones(2), [L.ones(3)], src=0),
    'all_to_all splits': lambda L: L.distributed.all_to_all_single(L.ones(3), L.ones(3), [1, 2], [3]),
    'send to self': lambda L: L.distributed.send(L.ones(2), dst=0),
    'new_group too large': lambda L: L.distributed.new_group([0, 3]),
    'new_group duplicates': lambda L: L.distributed.new_group([0, 0]),
    'group rank of a non-member': lambda L: L.distributed.get_group_rank(L.distributed.new_group([0]), 3),
    'both src and group_src': lambda L: L.distributed.broadcast(L.ones(1), src=0, group_src=0),
    'broadcast_object_list': lambda L: (lambda objs: [L.distributed.broadcast_object_list(objs), objs])(
        [1, {'a': [2, 3]}, 'x']),
    'all_gather_object': lambda L: (lambda objs: [L.distributed.all_gather_object(objs, (1, 'b')), objs])([None]),
    'scatter_object_list empty output': lambda L: L.distributed.scatter_object_list([], ['x']),
    'work': _work,
    'ReduceOp': lambda L: [str(L.distributed.ReduceOp.SUM), repr(L.distributed.ReduceOp.MAX),
                           [m for m in L.distributed.ReduceOp.RedOpType.__members__]],
    'Backend': lambda L: [L.distributed.Backend('GLOO'), L.distributed.Backend.MPI, L.distributed.Backend('MyBe')],
    'DDP without parameters that require grad': lambda L: L.nn.parallel.DistributedDataParallel(L.nn.ReLU()),
    'DDP device_ids on CPU': lambda L: L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 2), device_ids=[0]),
    'DDP two device_ids': lambda L: L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 2), device_ids=[0, 1]),
    'DDP outline': _ddp_outline,
    'DDP grads': _ddp_grads,
    'DDP unused parameters': _ddp_unused,
}

# where the backends word a check differently (the exception type is still PyTorch's)
TYPE_ONLY = {'all_gather_single size', 'all_to_all splits', 'group rank of a non-member'}


def outcome(fn, L):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', FutureWarning)
            return ['ok', _plain(fn(L))]
    except Exception as e:  # noqa: BLE001  (the exception is the result)
        return [type(e).__name__, str(e)]


def _plain(value):
    """JSON-able, with tensors as lists."""
    if hasattr(value, 'tolist'):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)


if __name__ == '__main__':
    import leafgrad
    import leafgrad.distributed
    leafgrad.distributed.init_process_group('gloo')
    results = {name: outcome(fn, leafgrad) for name, fn in CASES.items()}
    leafgrad.distributed.destroy_process_group()
    json.dump(results, sys.stdout)
