"""DistributedDataParallel on MPI: how much communication hides behind backward, and the
digits example on 1 and 2 ranks.

    python benchmarks/ddp.py                 # both parts (starts mpiexec itself)
    python benchmarks/ddp.py --only overlap  # --rounds 9 --batch 64 ...
    python benchmarks/ddp.py --only digits

``overlap``: 2 ranks, an MLP of ~9.5 M parameters (38 MB of float32 gradients), one thread
per rank. Each round times, interleaved, per training step (forward + backward + averaging
the gradients, no optimizer):

- ``ddp``: DistributedDataParallel (25 MiB buckets, 1 MiB first): each bucket's all-reduce
  starts as soon as its gradients are in, while backward goes on;
- ``serial``: the plain module's backward, then one all-reduce of every gradient at once
  (flattened into one buffer, averaged, copied back), as without overlap;
- ``compute``: forward + backward alone, and ``allreduce``: the 38 MB all-reduce alone.

``latency``: one all-reduce of 1 and of 14,000 floats, through leafgrad and through mpi4py
directly (printed with ``overlap``).

``digits``: ``examples/ddp_digits.py`` (MLP and CNN) with 1 and 2 ranks (the global batch of 32 split
across them, so each epoch is the same number of steps), seconds per epoch.
"""
import os
import sys

for _var in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ[_var] = '1'  # one thread per rank (read when NumPy loads its BLAS)

import argparse  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def mpiexec(n, *command):
    exe = shutil.which('mpiexec', path=os.path.dirname(sys.executable)) or shutil.which('mpiexec')
    if exe is None:
        raise SystemExit("mpiexec not found: pip install -e '.[distributed]'")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get('PYTHONPATH', '')]))
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    version = subprocess.run([exe, '--version'], capture_output=True, text=True, env=env).stdout
    extra = ['--oversubscribe'] if ('Open MPI' in version or 'prterun' in version) else []
    return subprocess.run([exe, '-n', str(n), *extra, sys.executable, *command], capture_output=True, text=True,
                          env=env)


# ---- overlap (runs on every rank) ------------------------------------------------------------------
def overlap_worker(args):
    import numpy as np
    sys.path.insert(0, ROOT)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    import leafgrad as lg
    import leafgrad.distributed as dist
    from leafgrad import nn

    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    widths = [1024, 2048, 2048, 1024, 1024, 10]

    def mlp():
        lg.manual_seed(0)
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        return nn.Sequential(*layers[:-1])
    model, model5 = mlp(), mlp()
    params = list(model.parameters())
    n_params = sum(p.numel() for p in params)
    ddp = nn.parallel.DistributedDataParallel(model)
    ddp5 = nn.parallel.DistributedDataParallel(model5, bucket_cap_mb=5)
    rng = np.random.default_rng(rank)
    x = lg.from_numpy(rng.standard_normal((args.batch, widths[0])).astype(np.float32))
    y = lg.from_numpy(rng.integers(0, 10, args.batch))
    loss_fn = nn.CrossEntropyLoss()
    flat = np.empty(n_params, np.float32)

    def step_ddp():
        loss_fn(ddp(x), y).backward()

    def step_ddp5():
        loss_fn(ddp5(x), y).backward()

    def step_serial():
        loss_fn(model(x), y).backward()
        offset = 0
        for p in params:
            n = p.numel()
            flat[offset:offset + n] = p.grad._data.ravel()
            offset += n
        dist.all_reduce(lg.from_numpy(flat), op=dist.ReduceOp.AVG)
        offset = 0
        for p in params:
            n = p.numel()
            p.grad._data[...] = flat[offset:offset + n].reshape(p.grad.shape)
            offset += n

    def step_compute():
        loss_fn(model(x), y).backward()

    buffer = lg.from_numpy(np.ones(n_params, np.float32))

    def step_allreduce():
        dist.all_reduce(buffer)

    variants = {'ddp': step_ddp, 'ddp5': step_ddp5, 'serial': step_serial, 'compute': step_compute,
                'allreduce': step_allreduce}
    times = {k: [] for k in variants}
    every = params + list(model5.parameters())
    for fn in variants.values():  # warm-up (and DDP's bucket rebuild)
        for p in every:
            p.grad = None
        fn()
    # the same averaged gradients, overlapped or not
    for p in every:
        p.grad = None
    step_ddp()
    step_ddp5()
    overlapped = [p.grad.numpy().copy() for p in params]
    for p, q in zip(params, model5.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-9)
        p.grad = None
    step_serial()
    for p, g in zip(params, overlapped):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-6, atol=1e-9)
    for r in range(args.rounds):
        order = list(variants)[r % 5:] + list(variants)[:r % 5]
        for name in order:
            for p in every:
                p.grad = None
            dist.barrier()
            start = time.perf_counter()
            variants[name]()
            elapsed = np.array([time.perf_counter() - start])
            dist.all_reduce(lg.from_numpy(elapsed), op=dist.ReduceOp.MAX)  # a step lasts as long as its slowest rank
            times[name].append(float(elapsed[0]))
    if rank == 0:
        med = {k: float(np.median(v)) * 1000 for k, v in times.items()}
        buckets = [b.flat.nbytes / 2 ** 20 for b in ddp.reducer.buckets]
        buckets5 = [b.flat.nbytes / 2 ** 20 for b in ddp5.reducer.buckets]
        print(f'overlap: {world} ranks, {n_params / 1e6:.2f} M parameters ({n_params * 4 / 2 ** 20:.1f} MiB of '
              f'gradients), batch {args.batch} per rank, {args.rounds} rounds, 1 thread per rank')
        print(f'  DDP buckets (MiB, in reduction order): {", ".join(f"{b:.1f}" for b in buckets)}; with '
              f'bucket_cap_mb=5: {", ".join(f"{b:.1f}" for b in buckets5)}')
        print('  gradients: the same averaged gradients from every variant (rtol 1e-6)')
        print(f'  {"variant (ms per step)":<40}{"median":>8}{"min":>8}{"max":>8}')
        for name, label in (('ddp', 'ddp (25 MiB buckets, overlapped)'), ('ddp5', 'ddp (5 MiB buckets, overlapped)'),
                            ('serial', 'serial (backward, then 1 all-reduce)'),
                            ('compute', 'compute (forward + backward only)'), ('allreduce', 'all-reduce alone')):
            print(f'  {label:<40}{med[name]:>8.1f}{min(times[name]) * 1e3:>8.1f}{max(times[name]) * 1e3:>8.1f}')
        for name in ('ddp', 'ddp5'):
            hidden = (med['serial'] - med[name]) / med['allreduce']
            print(f'  {name} / serial: {med[name] / med["serial"]:.3f} (communication hidden behind backward: '
                  f'{hidden:.0%} of the all-reduce alone)')
    latency(args, lg, dist, rank)
    dist.destroy_process_group()


def latency(args, lg, dist, rank):
    """One all-reduce of a small buffer: through leafgrad (the progress thread, the caller
    waiting on an event) and through mpi4py directly (Iallreduce + Wait, spinning)."""
    import numpy as np
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rows = []
    for numel in (1, 14_000):  # one number; the digits CNN's gradients (55 kB)
        array = np.ones(numel, np.float32)
        tensor = lg.from_numpy(array)
        ours, direct = [], []
        for _ in range(args.rounds):
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(100):
                dist.all_reduce(tensor)
            ours.append((time.perf_counter() - start) / 100)
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(100):
                comm.Iallreduce(MPI.IN_PLACE, array).Wait()
            direct.append((time.perf_counter() - start) / 100)
        rows.append((numel, np.median(ours) * 1e6, np.median(direct) * 1e6))
    if rank == 0:
        print('latency: one all-reduce, 2 ranks (median of rounds of 100)')
        print(f'  {"elements":<10}{"leafgrad us":>12}{"mpi4py us":>11}')
        for numel, ours, direct in rows:
            print(f'  {numel:<10}{ours:>12.0f}{direct:>11.0f}')


# ---- digits ---------------------------------------------------------------------------------------
def digits(args):
    print('digits: examples/ddp_digits.py, global batch 32 (45 steps an epoch at any number of ranks)')
    print(f'  {"model":<7}{"epochs":>7}{"ranks":>7}{"s/epoch":>9}{"speed-up":>10}{"accuracy":>10}')
    for model, epochs in (('mlp', args.epochs), ('cnn', max(args.epochs // 4, 1))):
        rows = []
        for n in (1, 2):
            done = mpiexec(n, os.path.join(ROOT, 'examples', 'ddp_digits.py'), '--epochs', str(epochs), '--model',
                           model, '--min-accuracy', '0')
            if done.returncode:
                raise SystemExit(done.stdout + done.stderr)
            line = [ln for ln in done.stdout.splitlines() if ln.startswith('test accuracy')][0]
            per_epoch = float(re.search(r'([\d.]+) s per epoch', line).group(1))
            accuracy = re.search(r'test accuracy: ([\d.]+%)', line).group(1)
            rows.append((n, per_epoch, accuracy))
        for n, per_epoch, accuracy in rows:
            print(f'  {model:<7}{epochs:>7}{n:>7}{per_epoch:>9.3f}{rows[0][1] / per_epoch:>10.2f}{accuracy:>10}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--only', choices=['overlap', 'digits'])
    parser.add_argument('--rounds', type=int, default=9)
    parser.add_argument('--batch', type=int, default=64)
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return overlap_worker(args)
    if args.only in (None, 'overlap'):
        done = mpiexec(2, os.path.abspath(__file__), '--worker', '--rounds', str(args.rounds), '--batch',
                       str(args.batch))
        if done.returncode:
            raise SystemExit(done.stdout + done.stderr)
        print(done.stdout, end='')
    if args.only in (None, 'digits'):
        digits(args)


if __name__ == '__main__':
    main()
