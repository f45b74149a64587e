#!/usr/bin/env python
"""Random numbers, leafgrad vs torch side by side (standalone).

    python benchmarks/random_streams.py [--rounds 5] [--leafgrad-path DIR]

CPU milliseconds per call (the process's CPU time, which a machine shared with other work
inflates less than the wall clock; median of ``--rounds``, interleaved round-robin, one thread) of the
samplers a program leans on: rand and randn of a million float32 (and randn of a million
float64), randint, randperm of 60,000 (a shuffled epoch of MNIST), dropout of a million, and
building ``nn.Linear(4096, 4096)`` (its kaiming_uniform_ weight and uniform_ bias). First it
checks that both draw the same numbers from the same seed (the columns only compare like with
like when they do); ``--leafgrad-path`` times another checkout, an older one without PyTorch's
stream included (the check is then reported, not required).
"""
import _common  # noqa: F401  (pins threads; before numpy)
import argparse
import statistics
import time

import numpy as np


def cases(T):
    F = T.nn.functional
    x = T.ones(1_000_000)
    return {
        'rand(1e6)': lambda: T.rand(1_000_000),
        'randn(1e6)': lambda: T.randn(1_000_000),
        'randn(1e6) float64': lambda: T.randn(1_000_000, dtype=T.float64),
        'randint(0, 10, 1e6)': lambda: T.randint(0, 10, (1_000_000,)),
        'randperm(60000)': lambda: T.randperm(60_000),
        'dropout(1e6, 0.5)': lambda: F.dropout(x, 0.5),
        'nn.Linear(4096, 4096)': lambda: T.nn.Linear(4096, 4096),
    }


def same_numbers(lg, torch):
    out = []
    for name in cases(torch):
        for T in (lg, torch):
            T.manual_seed(0)
        a, b = cases(lg)[name](), cases(torch)[name]()
        if name.startswith('nn.'):
            a, b = a.weight, b.weight
        out.append((name, np.array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--leafgrad-path')
    args = ap.parse_args(argv)
    lg, why = _common.load_leafgrad(args.leafgrad_path)
    if lg is None:
        raise SystemExit(why)
    import torch
    _common.limit_threads(torch)
    print(f'leafgrad from {lg.__file__}')
    for name, same in same_numbers(lg, torch):
        print(f'  {name:24s} same numbers as torch: {same}')
    impls = {'leafgrad': cases(lg), 'torch': cases(torch)}
    times = {(impl, name): [] for impl in impls for name in impls[impl]}
    for _ in range(args.rounds):
        for name in impls['torch']:
            for impl, fns in impls.items():
                start = time.process_time()
                fns[name]()
                times[impl, name].append(time.process_time() - start)
    print(f"{'case (CPU ms)':24s} {'leafgrad':>12s} {'torch':>10s} {'lg/torch':>9s}")
    for name in impls['torch']:
        ours, theirs = (statistics.median(times[impl, name]) * 1e3 for impl in ('leafgrad', 'torch'))
        print(f'{name:24s} {ours:12.2f} {theirs:10.2f} {ours / theirs:9.2f}')


if __name__ == '__main__':
    main()
