"""Checks that every rank runs under ``mpiexec -n N`` (launched by tests/test_distributed.py).

Each check asserts on every rank and prints ``OK <check> <rank>``; a failure raises, which the
excepthook turns into MPI_Abort (the job fails, the test shows the traceback). Collectives are
checked against their definition (each rank builds every rank's input and computes the
expected result with NumPy); DDP against one process trained on the whole batch.
"""
import os
import sys
import warnings

import numpy as np

import leafgrad as lg
import leafgrad.distributed as dist
from leafgrad import nn

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def data(rank, shape, dtype, salt=0):
    """Rank ``rank``'s input: small values, so that sums and products are exact in every dtype."""
    rng = np.random.default_rng(1000 * salt + rank)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(1, 4, shape).astype(dtype)


def raises(exc, fn, match=None):
    try:
        fn()
    except exc as e:
        assert match is None or match in str(e), (str(e), match)
        return str(e)
    raise AssertionError(f'{fn} did not raise {exc.__name__}')


R = N = None


@check
def init_refuses_a_world_size_or_rank_that_is_not_mpis():
    # (runs before init_process_group; the launcher's WORLD_SIZE is set by importing leafgrad.distributed)
    size, rank = int(os.environ['WORLD_SIZE']), int(os.environ['RANK'])
    raises(ValueError, lambda: dist.init_process_group(world_size=size + 1),
           f'world_size={size + 1} was given, but MPI started this process with world_size {size}')
    raises(ValueError, lambda: dist.init_process_group(rank=(rank + 1) % (size + 1)), 'MPI started this process')
    assert not dist.is_initialized()


@check
def environment():
    assert os.environ['RANK'] == str(R) and os.environ['WORLD_SIZE'] == str(N)
    assert os.environ['LOCAL_RANK'] == str(R) and os.environ['LOCAL_WORLD_SIZE'] == str(N)  # one host
    assert dist.is_initialized() and dist.get_backend() == 'mpi'
    assert dist.get_process_group_ranks(dist.group.WORLD) == list(range(N))


@check
def all_reduce_every_op_and_dtype():
    Op = dist.ReduceOp
    reducers = {Op.SUM: np.sum, Op.PRODUCT: np.prod, Op.MIN: np.min, Op.MAX: np.max}
    for dtype in (np.float32, np.float64, np.int64, np.int32, np.int16, np.int8, np.uint8, np.float16, np.bool_):
        ops = dict(reducers)
        if dtype().dtype.kind == 'f':
            ops[Op.AVG] = lambda a, axis: a.astype(np.float64).mean(axis)
        elif dtype != np.bool_:
            ops.update({Op.BAND: np.bitwise_and.reduce, Op.BOR: np.bitwise_or.reduce,
                        Op.BXOR: np.bitwise_xor.reduce})
        for op, reduce_all in ops.items():
            everyone = np.stack([data(r, (3, 4), dtype, op.value) for r in range(N)])
            expected = reduce_all(everyone, axis=0).astype(dtype)
            t = lg.from_numpy(everyone[R].copy())
            assert dist.all_reduce(t, op=op) is None
            assert t.dtype == lg.from_numpy(expected).dtype, (t.dtype, dtype)
            np.testing.assert_array_equal(t.numpy(), expected, err_msg=f'{op} {dtype}')


@check
def all_reduce_in_place_through_a_view_and_async():
    base = lg.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4) + R)
    before = base.numpy().copy()
    view = base[:, ::2]  # not contiguous: reduced through a copy, written back
    work = dist.all_reduce(view, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    expected = before.copy()
    expected[:, ::2] = sum(np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2] + r for r in range(N))
    np.testing.assert_array_equal(base.numpy(), expected)
    assert work.result()[0] is view


@check
def reduce_broadcast_gather_scatter():
    everyone = [data(r, (2, 3), np.float64, 7) for r in range(N)]
    dst = N - 1
    t = lg.from_numpy(everyone[R].copy())
    dist.reduce(t, dst=dst, op=dist.ReduceOp.MAX)
    if R == dst:
        np.testing.assert_array_equal(t.numpy(), np.max(everyone, axis=0))
    for dtype in (np.float32, np.int64, np.bool_, np.float16):
        t = lg.from_numpy(data(R, (5,), dtype, 3))
        dist.broadcast(t, src=dst)
        np.testing.assert_array_equal(t.numpy(), data(dst, (5,), dtype, 3))
    gather_list = [lg.zeros(2, 3, dtype=lg.float64) for _ in range(N)] if R == 1 % N else None
    dist.gather(lg.from_numpy(everyone[R].copy()), gather_list, dst=1 % N)
    if R == 1 % N:
        for r in range(N):
            np.testing.assert_array_equal(gather_list[r].numpy(), everyone[r])
            assert gather_list[r]._version == 1
    out = lg.zeros(2, 3, dtype=lg.float64)
    dist.scatter(out, [lg.from_numpy(e.copy()) for e in everyone] if R == 0 else None, src=0)
    np.testing.assert_array_equal(out.numpy(), everyone[R])


@check
def all_gather_forms():
    mine = lg.from_numpy(data(R, (2, 3), np.int32, 5))
    outs = [lg.zeros(2, 3, dtype=lg.int32) for _ in range(N)]
    dist.all_gather(outs, mine)
    for r in range(N):
        np.testing.assert_array_equal(outs[r].numpy(), data(r, (2, 3), np.int32, 5))
    concatenated = lg.zeros(2 * N, 3, dtype=lg.int32)
    stacked = lg.zeros(N, 2, 3, dtype=lg.int32)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        dist.all_gather_into_tensor(concatenated, mine)
    dist.all_gather_single(stacked, mine)
    expected = np.stack([data(r, (2, 3), np.int32, 5) for r in range(N)])
    np.testing.assert_array_equal(stacked.numpy(), expected)
    np.testing.assert_array_equal(concatenated.numpy(), expected.reshape(2 * N, 3))


@check
def reduce_scatter_and_all_to_all():
    everyone = [data(r, (N * 2, 3), np.float64, 9) for r in range(N)]
    for op, f in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.AVG, np.mean), (dist.ReduceOp.MAX, np.max)):
        out = lg.zeros(2, 3, dtype=lg.float64)
        dist.reduce_scatter_single(out, lg.from_numpy(everyone[R].copy()), op=op)
        np.testing.assert_allclose(out.numpy(), f(everyone, axis=0)[2 * R:2 * R + 2], rtol=1e-15)
    # equal splits: block j of rank i goes to rank j, as block i
    inp = lg.from_numpy(np.arange(N * 2, dtype=np.float32) + 100 * R)
    out = lg.zeros(N * 2)
    dist.all_to_all_single(out, inp)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([np.arange(2 * R, 2 * R + 2) + 100 * i
                                                                for i in range(N)]).astype(np.float32))
    # uneven splits: rank i sends i + j + 1 rows to rank j
    send = [i for j in range(N) for i in [R + j + 1]]
    recv = [i + R + 1 for i in range(N)]
    inp = lg.from_numpy(np.concatenate([np.full((R + j + 1, 2), 10 * R + j) for j in range(N)]).astype(np.int64))
    out = lg.zeros(sum(recv), 2, dtype=lg.int64)
    dist.all_to_all_single(out, inp, output_split_sizes=recv, input_split_sizes=send)
    expected = np.concatenate([np.full((i + R + 1, 2), 10 * i + R) for i in range(N)])
    np.testing.assert_array_equal(out.numpy(), expected)


@check
def point_to_point_ring():
    nxt, prv = (R + 1) % N, (R - 1) % N
    big = lg.from_numpy(np.arange(1_000_000, dtype=np.float32) + R)  # large: no eager send
    got = lg.zeros(1_000_000)
    sent = dist.isend(big, nxt)
    received = dist.irecv(got, prv)
    received.wait()
    sent.wait()
    np.testing.assert_array_equal(got.numpy(), np.arange(1_000_000, dtype=np.float32) + prv)
    if R == 0:
        dist.send(lg.tensor([7., 8.]), 1, tag=3)
    elif R == 1:
        t = lg.zeros(2)
        assert dist.recv(t, tag=3) == 0  # any source: the sender's rank comes back
        assert t.tolist() == [7., 8.]
    raises(ValueError, lambda: dist.send(lg.zeros(1), R), 'destination rank should not be the same')
    raises(RuntimeError, lambda: dist.isend(lg.zeros(1), N), f'invalid destination rank: {N}')


@check
def object_collectives():
    objs = [{'rank': R, 'list': list(range(R))}, 'x' * R] if R == N - 1 else [None, None]
    dist.broadcast_object_list(objs, src=N - 1)
    assert objs == [{'rank': N - 1, 'list': list(range(N - 1))}, 'x' * (N - 1)]
    gathered = [None] * N
    dist.all_gather_object(gathered, ('rank', R, 'y' * (5 * R)))
    assert gathered == [('rank', r, 'y' * (5 * r)) for r in range(N)]
    at_root = [None] * N if R == 0 else None
    dist.gather_object({R: R * 2}, at_root, dst=0)
    if R == 0:
        assert at_root == [{r: r * 2} for r in range(N)]
    out = [None]
    dist.scatter_object_list(out, [f'for {r}' * (r + 1) for r in range(N)] if R == 0 else None, src=0)
    assert out == [f'for {R}' * (R + 1)]
    if R == 0:
        dist.send_object_list([1, 'two', {3: 4}], dst=1)
    elif R == 1:
        got = [None, None, None]
        assert dist.recv_object_list(got, src=0) == 0
        assert got == [1, 'two', {3: 4}]


@check
def groups():
    members = [0, N - 1]
    g = dist.new_group(members)
    if R in members:
        assert dist.get_rank(g) == members.index(R) and dist.get_world_size(g) == 2
        t = lg.tensor([float(R)])
        dist.all_reduce(t, group=g)
        assert t.tolist() == [float(N - 1)]
        t = lg.tensor([float(R)])
        dist.broadcast(t, src=N - 1, group=g)  # src is a global rank
        assert t.tolist() == [float(N - 1)]
        assert dist.get_global_rank(g, 1) == N - 1 and dist.get_group_rank(g, N - 1) == 1
        if N > 2:
            raises(ValueError, lambda: dist.get_group_rank(g, 1), 'Global rank 1 is not part of group')
        dist.destroy_process_group(g)
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            assert dist.all_reduce(lg.ones(1), group=g) is None
        assert 'does not belong to the given group' in str(w[0].message)
    dist.barrier()


@check
def errors_that_need_several_ranks():
    raises(RuntimeError, lambda: dist.broadcast(lg.ones(2), src=N),
           f'ProcessGroupMPI::broadcast: invalid root rank: {N}')
    raises(RuntimeError, lambda: dist.all_gather([lg.ones(2)], lg.ones(2)),
           f'invalid output tensor list at index 0 (expected length {N}, got 1)')
    raises(RuntimeError, lambda: dist.all_to_all_single(lg.zeros(N + 1), lg.zeros(N + 1)),
           "Tensor's dim 0 does not divide equally across group size")


# ---- DistributedDataParallel ---------------------------------------------------------------------
def params_equal_across_ranks(model):
    flat = np.concatenate([p.detach().numpy().reshape(-1).astype(np.float64) for p in model.parameters()])
    everyone = [None] * N
    dist.all_gather_object(everyone, flat)
    for other in everyone:
        np.testing.assert_array_equal(other, everyone[0])  # bit for bit


def assert_close_to(model, reference, rtol=1e-5, atol=1e-7):
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=rtol, atol=atol, err_msg=name)


def mlp(seed, dtype=lg.float32):
    lg.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3)).to(dtype)


def batch(step, per_rank=5, dtype=np.float32):
    rng = np.random.default_rng(step)
    x = rng.standard_normal((per_rank * N, 6)).astype(dtype)
    y = rng.standard_normal((per_rank * N, 3)).astype(dtype)
    return lg.from_numpy(x), lg.from_numpy(y)


def shard(t, per_rank=5):
    return t[R * per_rank:(R + 1) * per_rank]


def train_and_compare(make_ddp, make_opt, steps=4, dtype=lg.float32):
    model = mlp(seed=R, dtype=dtype)  # a different initialisation on every rank
    ddp = make_ddp(model)
    params_equal_across_ranks(model)  # rank 0's, broadcast
    reference = mlp(seed=0, dtype=dtype)
    reference.load_state_dict(model.state_dict())
    opt, ref_opt = make_opt(ddp.parameters()), make_opt(reference.parameters())
    for step in range(steps):
        x, y = batch(step, dtype=np.float64 if dtype == lg.float64 else np.float32)
        opt.zero_grad()
        nn.functional.mse_loss(ddp(shard(x)), shard(y)).backward()
        opt.step()
        ref_opt.zero_grad()
        nn.functional.mse_loss(reference(x), y).backward()
        ref_opt.step()
        params_equal_across_ranks(model)
        assert_close_to(model, reference)
    return ddp


@check
def ddp_matches_one_process_on_the_whole_batch():
    ddp = train_and_compare(nn.parallel.DistributedDataParallel,
                            lambda ps: lg.optim.SGD(ps, lr=0.1, momentum=0.9))
    assert list(ddp.state_dict())[0] == 'module.0.weight'
    assert ddp.reducer.has_rebuilt  # buckets rebuilt in gradient order after the first iteration


@check
def compiled_ddp_matches_one_process_in_either_order():
    """lg.compile(DDP(model)) and DDP(lg.compile(model)), as PyTorch's programs write them: the
    gradients are all-reduced as eagerly (DDP's forward prepares its reducer, Python a replay
    would skip: its forward runs eagerly, the model it wraps compiled)."""
    ddp = train_and_compare(lambda model: lg.compile(nn.parallel.DistributedDataParallel(model)),
                            lambda ps: lg.optim.SGD(ps, lr=0.1, momentum=0.9))
    assert 'DistributedDataParallel.forward prepares its reducer' in ddp.report()
    assert "submodule 'module'" in ddp.report() and 'replayed, called 2 times' in ddp.report()
    ddp = train_and_compare(lambda model: nn.parallel.DistributedDataParallel(lg.compile(model)),
                            lambda ps: lg.optim.SGD(ps, lr=0.1, momentum=0.9))
    assert 'replayed, called 3 times' in ddp.module.report()


@check
def ddp_small_buckets_as_views_adam():
    def make(model):
        return nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0002, gradient_as_bucket_view=True)
    ddp = train_and_compare(make, lambda ps: lg.optim.Adam(ps, lr=0.01))
    assert len(ddp.reducer.buckets) >= 3
    bucket, k = ddp.reducer.locate[0]
    assert ddp.module[0].weight.grad._data is bucket.views[k]  # the .grad is the bucket


@check
def ddp_buckets_start_during_backward():
    model = mlp(0)
    started = []
    # the first layer's weight gets its gradient last; by then the other buckets are reducing
    # (this hook runs before DDP's, registered after it)
    model[0].weight.register_post_accumulate_grad_hook(
        lambda p: started.append([b.work is not None for b in ddp.reducer.buckets]))
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.002)
    x, y = batch(0)
    nn.functional.mse_loss(ddp(shard(x)), shard(y)).backward()
    assert started[0][0] and not started[0][-1], started


@check
def ddp_no_sync_accumulates_then_averages():
    model = mlp(seed=R)
    ddp = nn.parallel.DistributedDataParallel(model)
    reference = mlp(0)
    reference.load_state_dict(model.state_dict())
    (x1, y1), (x2, y2) = batch(1), batch(2)
    with ddp.no_sync():
        nn.functional.mse_loss(ddp(shard(x1)), shard(y1)).backward()
    local = model[0].weight.grad.numpy().copy()
    nn.functional.mse_loss(ddp(shard(x2)), shard(y2)).backward()
    (nn.functional.mse_loss(reference(x1), y1) + nn.functional.mse_loss(reference(x2), y2)).backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)
    everyone = [None] * N
    dist.all_gather_object(everyone, local)
    assert N == 1 or not np.array_equal(everyone[0], everyone[1])  # inside no_sync: not averaged


@check
def ddp_dropped_leaves_the_model_alone():
    model = mlp(seed=R)
    ddp = nn.parallel.DistributedDataParallel(model)
    del ddp  # its hooks go with it: a backward through the model alone is local again
    x, y = batch(3)
    nn.functional.mse_loss(model(shard(x)), shard(y)).backward()
    reference = mlp(0)
    reference.load_state_dict(model.state_dict())
    nn.functional.mse_loss(reference(shard(x)), shard(y)).backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.a = nn.Linear(4, 2)
        self.b = nn.Linear(4, 2)
        self.never = nn.Linear(4, 2)

    def forward(self, x, use_b):
        h = self.body(x).tanh()
        return self.a(h) + self.b(h) if use_b else self.a(h)


def two_heads_reference(model_state, xs, ys, use_b, steps, **ddp_kwargs):
    """DDP on TwoHeads (b used on some ranks only, never on none) against one process that
    averages the per-rank losses."""
    lg.manual_seed(R)
    model = TwoHeads()
    ddp = nn.parallel.DistributedDataParallel(model, **ddp_kwargs)
    reference = TwoHeads()
    reference.load_state_dict(model.state_dict())
    opt, ref_opt = lg.optim.SGD(ddp.parameters(), lr=0.2), lg.optim.SGD(reference.parameters(), lr=0.2)
    for step in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(ddp(xs[R], use_b(R, step)), ys[R]).backward()
        opt.step()
        ref_opt.zero_grad()
        (sum(nn.functional.mse_loss(reference(xs[r], use_b(r, step)), ys[r]) for r in range(N)) / N).backward()
        ref_opt.step()
        params_equal_across_ranks(model)
        assert_close_to(model, reference)
    return model


@check
def ddp_find_unused_parameters():
    rng = np.random.default_rng(3)
    xs = [lg.from_numpy(rng.standard_normal((3, 4)).astype(np.float32)) for _ in range(N)]
    ys = [lg.from_numpy(rng.standard_normal((3, 2)).astype(np.float32)) for _ in range(N)]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)
        model = two_heads_reference(None, xs, ys, lambda r, step: r == 0, 3, find_unused_parameters=True)
    assert model.never.weight.grad is None  # unused on every rank: untouched
    assert model.b.weight.grad is not None  # used on rank 0 only: averaged with zeros


@check
def ddp_static_graph():
    rng = np.random.default_rng(4)
    xs = [lg.from_numpy(rng.standard_normal((3, 4)).astype(np.float32)) for _ in range(N)]
    ys = [lg.from_numpy(rng.standard_normal((3, 2)).astype(np.float32)) for _ in range(N)]
    model = two_heads_reference(None, xs, ys, lambda r, step: True, 4, static_graph=True)
    assert model.never.weight.grad is None


@check
def ddp_unused_parameter_error_names_them():
    lg.manual_seed(0)
    ddp = nn.parallel.DistributedDataParallel(TwoHeads())
    x = lg.ones(2, 4)
    ddp(x, False).sum().backward()
    message = raises(RuntimeError, lambda: ddp(x, False), 'Expected to have finished reduction in the prior '
                     'iteration before starting a new one.')
    assert f'Parameters which did not receive grad for rank {R}: never.bias, never.weight, b.bias, b.weight' \
        in message, message
    assert f'Parameter indices which did not receive grad for rank {R}: 4 5 6 7' in message


@check
def ddp_detects_models_that_differ():
    def make(sizes):
        return nn.Sequential(nn.Linear(3, sizes), nn.Linear(sizes, 2))
    if N > 1:
        message = raises(RuntimeError, lambda: nn.parallel.DistributedDataParallel(make(4 if R == 0 else 5)))
        assert "'0.weight'" in message and 'params[0]' in message, message

        class Swapped(nn.Module):
            def __init__(self):
                super().__init__()
                if R == 0:
                    self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 3)
                else:
                    self.b, self.a = nn.Linear(3, 3), nn.Linear(3, 3)
        message = raises(RuntimeError, lambda: nn.parallel.DistributedDataParallel(Swapped()), 'different order')
        assert "'a.weight'" in message and "'b.weight'" in message, message
    dist.barrier()


@check
def sync_batchnorm_matches_batchnorm_on_the_whole_batch():
    lg.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3)).double()
    reference = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                              nn.Linear(64, 3)).double()
    reference.load_state_dict(net.state_dict())
    ddp = nn.parallel.DistributedDataParallel(nn.SyncBatchNorm.convert_sync_batchnorm(net))
    assert type(ddp.module[1]).__name__ == 'SyncBatchNorm'
    opt, ref_opt = lg.optim.SGD(ddp.parameters(), lr=0.1), lg.optim.SGD(reference.parameters(), lr=0.1)
    rng = np.random.default_rng(5)
    for step in range(3):
        x = lg.from_numpy(rng.standard_normal((3 * N, 2, 6, 6)))
        y = lg.from_numpy(rng.standard_normal((3 * N, 3)))
        opt.zero_grad()
        nn.functional.mse_loss(ddp(x[3 * R:3 * R + 3]), y[3 * R:3 * R + 3]).backward()
        opt.step()
        ref_opt.zero_grad()
        nn.functional.mse_loss(reference(x), y).backward()
        ref_opt.step()
    for (k, v), w in zip(ddp.module.state_dict().items(), reference.state_dict().values()):
        np.testing.assert_allclose(v.double().numpy(), w.double().numpy(), rtol=1e-10, atol=1e-12, err_msg=k)


@check
def gpu_tensors_go_through_host_memory():
    """On 'cuda' (CuPy's stand-in here: tests/cuda_standin.py): collectives, DDP and SyncBatchNorm
    stage the data through the host (the MPI is not CUDA-aware) and leave the results on the GPU."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import cuda_standin
    with cuda_standin.installed():
        everyone = [data(r, (3, 4), np.float32, 11) for r in range(N)]
        t = lg.tensor(everyone[R], device='cuda')
        dist.all_reduce(t)
        assert t.is_cuda
        np.testing.assert_array_equal(t.cpu().numpy(), sum(everyone))
        view = lg.tensor(everyone[R], device='cuda')[:, ::2]
        dist.all_reduce(view, op=dist.ReduceOp.AVG)
        np.testing.assert_allclose(view.cpu().numpy(), sum(everyone)[:, ::2] / N, rtol=1e-6)
        b = lg.tensor(everyone[R], device='cuda')
        dist.broadcast(b, src=0)
        np.testing.assert_array_equal(b.cpu().numpy(), everyone[0])
        out = lg.empty(N * 3, 4, device='cuda')
        dist.all_gather_into_tensor(out, lg.tensor(everyone[R], device='cuda'))
        np.testing.assert_array_equal(out.cpu().numpy(), np.concatenate(everyone))
        parts = [lg.empty(3, 4, device='cuda') for _ in range(N)]
        dist.all_gather(parts, lg.tensor(everyone[R], device='cuda'))
        assert all(p.is_cuda for p in parts)
        np.testing.assert_array_equal(np.stack([p.cpu().numpy() for p in parts]), np.stack(everyone))
        model = mlp(seed=R).to('cuda')
        ddp = nn.parallel.DistributedDataParallel(model)
        reference = mlp(seed=0)
        reference.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
        x, y = batch(0)
        nn.functional.mse_loss(ddp(shard(x).to('cuda')), shard(y).to('cuda')).backward()
        nn.functional.mse_loss(reference(x), y).backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            assert p.grad.is_cuda
            np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-7)
        lg.manual_seed(0)  # SyncBatchNorm's statistics, gathered through the host
        net = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3)).double()
        reference = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                                  nn.Linear(64, 3)).double()
        reference.load_state_dict(net.state_dict())
        ddp = nn.parallel.DistributedDataParallel(nn.SyncBatchNorm.convert_sync_batchnorm(net).to('cuda'))
        rng = np.random.default_rng(5)
        x, y = lg.from_numpy(rng.standard_normal((3 * N, 2, 6, 6))), lg.from_numpy(rng.standard_normal((3 * N, 3)))
        nn.functional.mse_loss(ddp(x[3 * R:3 * R + 3].to('cuda')), y[3 * R:3 * R + 3].to('cuda')).backward()
        nn.functional.mse_loss(reference(x), y).backward()
        for (k, v), w in zip(ddp.module.state_dict().items(), reference.state_dict().values()):
            assert v.is_cuda
            np.testing.assert_allclose(v.cpu().double().numpy(), w.double().numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
        for p, q in zip(net.parameters(), reference.parameters()):
            np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12)


@check
def sampler_shards_cover_the_dataset():
    dataset = lg.utils.data.TensorDataset(lg.arange(23))
    sampler = lg.utils.data.DistributedSampler(dataset, shuffle=True, seed=5)
    sampler.set_epoch(2)
    mine = [int(i) for (b,) in lg.utils.data.DataLoader(dataset, batch_size=4, sampler=sampler) for i in b]
    everyone = [None] * N
    dist.all_gather_object(everyone, mine)
    assert all(len(e) == len(mine) for e in everyone)
    assert sorted(set(sum(everyone, []))) == list(range(23))


def main():
    global R, N
    CHECKS[0]()
    print(f'OK {CHECKS[0].__name__} {os.environ["RANK"]}', flush=True)
    dist.init_process_group('gloo')  # served by MPI
    R, N = dist.get_rank(), dist.get_world_size()
    only = sys.argv[1:]
    for fn in CHECKS[1:]:
        if not only or fn.__name__ in only:
            fn()
            print(f'OK {fn.__name__} {R}', flush=True)
    dist.destroy_process_group()
    assert not dist.is_initialized()


if __name__ == '__main__':
    main()
