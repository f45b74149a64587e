#!/usr/bin/env python
"""torch.func transforms in leafgrad (standalone; torch side by side when installed).

    python benchmarks/func_transforms.py [--rounds 5]

1. Per-sample gradients of a small MLP (10-64-64-3, tanh, cross-entropy) at batch 64:
   ``vmap(grad(loss))`` against a Python loop of 64 ``grad(loss)`` calls (gradients checked
   equal first). Target: vmap >= 5x the loop.
2. The Jacobian of a 100 -> 100 function (tanh(W x + b) * x): ``jacfwd`` (one forward pass
   vmapped over the 100 one-hot tangents) against reverse mode row by row (100 backward passes:
   ``autograd.functional.jacobian``) and ``jacrev`` (one backward pass vmapped over the 100
   one-hot cotangents, as torch.func's), checked equal first. Target: jacfwd faster than the
   row-by-row backward.

Medians of ``--rounds`` timings, one thread.
"""
import _common  # noqa: F401  (pins threads; before numpy)
import argparse
import statistics
import sys
import time

import numpy as np


def _median_ms(fn, rounds):
    fn()  # warm-up
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def per_sample(T, rounds):
    F = T.nn.functional
    rng = np.random.default_rng(0)
    params = {'w1': T.tensor(rng.standard_normal((64, 10)).astype('float32') * 0.3),
              'b1': T.tensor(np.zeros(64, 'float32')),
              'w2': T.tensor(rng.standard_normal((64, 64)).astype('float32') * 0.1),
              'b2': T.tensor(np.zeros(64, 'float32')),
              'w3': T.tensor(rng.standard_normal((3, 64)).astype('float32') * 0.1)}
    x = T.tensor(rng.standard_normal((64, 10)).astype('float32'))
    y = T.tensor(rng.integers(0, 3, 64))

    def loss(p, xb, yb):
        h = F.linear(F.linear(xb, p['w1'], p['b1']).tanh(), p['w2'], p['b2']).tanh()
        return F.cross_entropy(F.linear(h, p['w3']).unsqueeze(0), yb.unsqueeze(0))

    g = T.func.grad(loss)
    vmapped = T.func.vmap(g, in_dims=(None, 0, 0))

    def loop():
        return [g(params, x[i], y[i]) for i in range(64)]
    a, b = vmapped(params, x, y), loop()
    for k in params:
        np.testing.assert_allclose(np.asarray(a[k]), np.stack([np.asarray(r[k]) for r in b]), rtol=1e-4, atol=1e-6)
    return _median_ms(lambda: vmapped(params, x, y), rounds), _median_ms(loop, rounds)


def jacobians(T, rounds):
    rng = np.random.default_rng(1)
    W = T.tensor(rng.standard_normal((100, 100)) / 10)
    b = T.tensor(rng.standard_normal(100))
    x = T.tensor(rng.standard_normal(100))

    def f(v):
        return (W @ v + b).tanh() * v
    fwd, rev = T.func.jacfwd(f), T.func.jacrev(f)
    rows = lambda v: T.autograd.functional.jacobian(f, v)  # noqa: E731  (one backward per output element)
    for other in (rev, rows):
        np.testing.assert_allclose(np.asarray(fwd(x)), np.asarray(other(x)), rtol=1e-9, atol=1e-12)
    return tuple(_median_ms(lambda: fn(x), rounds) for fn in (fwd, rows, rev))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--rounds', type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, _common.REPO_ROOT)
    import leafgrad
    libs = [('leafgrad', leafgrad)]
    try:
        import torch
        torch.set_num_threads(1)
        libs.append(('torch', torch))
    except ImportError:
        pass
    for name, T in libs:
        v, loop = per_sample(T, args.rounds)
        fwd, rows, rev = jacobians(T, args.rounds)
        print(f'{name:8s} per-sample grads, batch 64: vmap(grad) {v:8.2f} ms, loop {loop:8.2f} ms, '
              f'speed-up {loop / v:5.1f}x')
        print(f'{name:8s} jacobian 100->100:          jacfwd {fwd:8.2f} ms, row by row {rows:8.2f} ms, '
              f'jacrev {rev:8.2f} ms, jacfwd/row-by-row {fwd / rows:5.2f}, jacfwd/jacrev {fwd / rev:5.2f}')


if __name__ == '__main__':
    main()
