"""The GPU benchmark of issue 21: an SGD step of two MLPs, leafgrad beside PyTorch and hand-written CuPy.

    python benchmarks/gpu_mlp.py                 # device 'cuda': leafgrad on CuPy, torch CUDA, CuPy by hand
    python benchmarks/gpu_mlp.py --device cpu    # the same script on the CPU (NumPy by hand), to check it

The compiled column runs the same program with its forward through leafgrad.compile.
Models (fp32, ReLU, cross-entropy, plain SGD lr 0.01, gradients set to None after each step):
784-512-512-10 at batch 256, and 4096-4096-4096-1000 at batch 4096. The three start from the same
weights and data; their first gradients are compared before anything is timed (PyTorch's TF32 is
off, as CuPy computes fp32 products in fp32). A step is timed between two device synchronisations,
over repeats of a block of steps; the table gives the median ms per step and the ratios to torch and
to the hand-written step. Target (issue 21): leafgrad <= 1.1x torch CUDA on both sizes.
"""
import argparse
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # this checkout's leafgrad

MODELS = {'small': ((784, 512, 512, 10), 256), 'large': ((4096, 4096, 4096, 1000), 4096)}
LR = 0.01


def initial(sizes, batch, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        weights.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, (fan_out,)).astype(np.float32))
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch).astype(np.int64)
    return weights, x, y


def framework_step(T, weights, x, y, device, compiled=False):
    """A training step written as a PyTorch program; T is torch or leafgrad (``compiled``: its
    forward, to the loss, through ``T.compile``)."""
    F = T.nn.functional
    params = [T.tensor(w, device=device, requires_grad=True) for w in weights]
    x, y = T.tensor(x, device=device), T.tensor(y, device=device)
    opt = T.optim.SGD(params, lr=LR)

    def loss_of():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = F.relu(F.linear(h, params[i], params[i + 1]))
        return F.cross_entropy(F.linear(h, params[-2], params[-1]), y)

    loss_fn = T.compile(loss_of) if compiled else loss_of

    def step():
        loss = loss_fn()
        loss.backward()
        grads = [p.grad for p in params]
        opt.step()
        opt.zero_grad(set_to_none=True)
        return grads

    return step


def hand_step(xp, weights, x, y):
    """The same step written by hand with the array module xp (CuPy, or NumPy on the CPU)."""
    params = [xp.asarray(w) for w in weights]
    x, y = xp.asarray(x), xp.asarray(y)
    rows = xp.arange(len(y))

    def step():
        acts = [x]
        for i in range(0, len(params) - 2, 2):
            h = acts[-1] @ params[i].T
            h += params[i + 1]
            xp.maximum(h, 0, out=h)
            acts.append(h)
        z = acts[-1] @ params[-2].T
        z += params[-1]
        z -= z.max(axis=1, keepdims=True)
        e = xp.exp(z)
        e /= e.sum(axis=1, keepdims=True)
        e[rows, y] -= 1.0
        e *= 1.0 / len(y)
        grads = [None] * len(params)
        d = e
        for i in range(len(params) - 2, -1, -2):
            grads[i], grads[i + 1] = d.T @ acts[i // 2], d.sum(axis=0)
            if i:
                d = d @ params[i]
                d *= acts[i // 2] > 0
        for p, g in zip(params, grads):
            p -= LR * g
        return grads

    return step


def as_numpy(a):
    if hasattr(a, 'detach'):
        a = a.detach().cpu()
        return a.numpy()
    return a.get() if hasattr(a, 'get') else a


def timed(step, sync, steps, repeats):
    for _ in range(3):
        step()
    sync()
    per_step = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        per_step.append((time.perf_counter() - start) / steps)
    return statistics.median(per_step) * 1e3


def phases(leafgrad, torch, sync, device, repeats=5):
    """ms of the forward (to the loss), the backward and the SGD step of the large model, each
    between two synchronisations: leafgrad beside torch."""
    weights, x, y = initial(*MODELS['large'])
    print(f"{'phase':<10} {'leafgrad ms':>11} {'torch ms':>9}")
    rows = {}
    for name, T in (('leafgrad', leafgrad), ('torch', torch)):
        F = T.nn.functional
        params = [T.tensor(w, device=device, requires_grad=True) for w in weights]
        xs, ys = T.tensor(x, device=device), T.tensor(y, device=device)
        opt = T.optim.SGD(params, lr=LR)
        times = {'forward': [], 'backward': [], 'step': []}
        for i in range(repeats + 2):
            sync()
            t0 = time.perf_counter()
            h = xs
            for j in range(0, len(params) - 2, 2):
                h = F.relu(F.linear(h, params[j], params[j + 1]))
            loss = F.cross_entropy(F.linear(h, params[-2], params[-1]), ys)
            sync()
            t1 = time.perf_counter()
            loss.backward()
            sync()
            t2 = time.perf_counter()
            opt.step()
            opt.zero_grad(set_to_none=True)
            sync()
            t3 = time.perf_counter()
            if i >= 2:
                for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2)):
                    times[k].append(v * 1e3)
        rows[name] = {k: statistics.median(v) for k, v in times.items()}
    for k in ('forward', 'backward', 'step'):
        print(f"{k:<10} {rows['leafgrad'][k]:>11.3f} {rows['torch'][k]:>9.3f}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--device', default='cuda', choices=('cuda', 'cpu'))
    parser.add_argument('--models', default='small,large')
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument('--phases', action='store_true',
                        help='instead of the table: forward, backward and optimizer step timed apart (large model)')
    parser.add_argument('--profile', action='store_true',
                        help="instead of the table: where leafgrad's small step spends its time, eager and compiled (cProfile)")
    args = parser.parse_args(argv)
    if args.device == 'cpu':  # one BLAS thread for everybody, as the CPU benchmarks
        for var in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
            os.environ[var] = '1'
    import numpy as np
    import torch
    import leafgrad
    if args.device == 'cuda':
        import cupy as xp
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

        def sync():
            torch.cuda.synchronize()
            xp.cuda.Device().synchronize()
        print(f'GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, CuPy {xp.__version__}, '
              f'NumPy {np.__version__}; leafgrad.cuda.is_available() = {leafgrad.cuda.is_available()}')
    else:
        xp = np
        torch.set_num_threads(1)

        def sync():
            pass
        print(f'CPU, one thread; torch {torch.__version__}, NumPy {np.__version__}')
    if args.phases:
        return phases(leafgrad, torch, sync, args.device)
    if args.profile:
        import cProfile
        import pstats
        for compiled in (False, True):
            print(f"== leafgrad's small step, {'compiled' if compiled else 'eager'}")
            step = framework_step(leafgrad, *initial(*MODELS['small']), args.device, compiled=compiled)
            for _ in range(5):
                step()
            sync()
            profile = cProfile.Profile()
            profile.runcall(lambda: [step() for _ in range(50)] and sync())
            pstats.Stats(profile).sort_stats('tottime').print_stats(30)
        return 0
    print(f"{'model':<26} {'leafgrad ms':>11} {'compiled ms':>11} {'torch ms':>9} {'hand ms':>8} {'lg/torch':>8} "
          f"{'comp/torch':>10} {'lg/hand':>8}")
    worst = 0.0
    for name in args.models.split(','):
        sizes, batch = MODELS[name]
        weights, x, y = initial(sizes, batch)
        steps = {'lg': framework_step(leafgrad, weights, x, y, args.device),
                 'lgc': framework_step(leafgrad, weights, x, y, args.device, compiled=True),
                 'torch': framework_step(torch, weights, x, y, args.device),
                 'hand': hand_step(xp, weights, x, y)}
        first = {}
        for k, s in list(steps.items()):
            try:
                first[k] = [as_numpy(g) for g in s()]
            except Exception:  # (a failing framework is reported; the others are still timed)
                traceback.print_exc()
                print(f'{name}: the {k} step failed')
                del steps[k]
                worst = float('inf')
        for mine, other in [(m, k) for m in ('lg', 'lgc') for k in ('torch', 'hand') if k in first and m in first]:
            for g_lg, g_other in zip(first[mine], first[other]):
                scale = float(np.abs(g_other).max()) or 1.0
                if not np.allclose(g_lg, g_other, rtol=1e-3, atol=1e-4 * scale):
                    print(f'{name}: {mine} gradients differ from {other}: max |diff| '
                          f'{float(np.abs(g_lg - g_other).max()):.3g} (scale {scale:.3g})')
                    worst = float('inf')
                    break
        n = 20 if name == 'small' else 5
        if args.device == 'cpu':
            n = max(1, n // 5)
        ms = {k: timed(s, sync, n, args.repeats) for k, s in steps.items()}
        ms.setdefault('lg', float('inf'))
        ms.setdefault('lgc', float('inf'))
        ms.setdefault('torch', float('nan'))
        ms.setdefault('hand', float('nan'))
        worst = max(worst, ms['lg'] / ms['torch'])
        label = f"{'-'.join(map(str, sizes))} b{batch}"
        print(f"{label:<26} {ms['lg']:>11.3f} {ms['lgc']:>11.3f} {ms['torch']:>9.3f} {ms['hand']:>8.3f} "
              f"{ms['lg'] / ms['torch']:>8.2f} {ms['lgc'] / ms['torch']:>10.2f} {ms['lg'] / ms['hand']:>8.2f}")
    print(f'worst leafgrad/torch: {worst:.2f} (target <= 1.10)')
    return 0 if worst < float('inf') else 1


if __name__ == '__main__':
    sys.exit(main())
