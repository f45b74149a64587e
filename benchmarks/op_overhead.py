#!/usr/bin/env python
"""Per-op overhead, leafgrad vs torch side by side (standalone).

    python benchmarks/op_overhead.py [--rounds 7] [--leafgrad-path DIR]

1. The W2 chain (200 mixed elementwise ops on a (16,) float32 tensor):
   microseconds per op for fwd+bwd and for the no_grad forward.
2. A breakdown per op kind on the same (16,) tensor: forward-only cost of a
   single op while recording the graph (requires_grad input) and under
   no_grad.

Timings are interleaved round-robin between the implementations, single
thread; medians are printed.  Gradients of the W2 chain are checked first.
"""
import _common  # noqa: F401  (pins threads; before numpy)
import argparse
import statistics
import sys

import numpy as np

import w2_chain

INNER = 200  # single-op calls per sample in the breakdown


def _op_cases(T):
    a = w2_chain.init(0)
    c = T.tensor(a["c"])
    d = T.tensor(a["d"])
    return {
        "x * c (tensor)": lambda x: x * c,
        "x / d (tensor)": lambda x: x / d,
        "x + c (tensor)": lambda x: x + c,
        "x + 0.5 (scalar)": lambda x: x + 0.5,
        "x * 2.0 (scalar)": lambda x: x * 2.0,
        "tanh": T.tanh,
        "sigmoid": T.sigmoid,
        "exp": T.exp,
        "sum()": lambda x: x.sum(),
    }


def _single_op_timer(T, fn, grad):
    x = T.tensor(w2_chain.init(0)["x"], requires_grad=grad)

    def run():
        for _ in range(INNER):
            fn(x)
    if grad:
        return run

    def run_ng():
        with T.no_grad():
            run()
    return run_ng


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sample-time", type=float, default=0.05)
    ap.add_argument("--leafgrad-path")
    ap.add_argument("--impl-as-leafgrad", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    mods = {}
    lg, why = _common.load_leafgrad(args.leafgrad_path, args.impl_as_leafgrad)
    label = "leafgrad" if not args.impl_as_leafgrad else f"leafgrad[={args.impl_as_leafgrad}]"
    if args.impl_as_leafgrad:
        print(f"!! HARNESS TEST MODE: the '{label}' column is {args.impl_as_leafgrad} !!")
    if lg is None:
        print(f"leafgrad: {why}")
    else:
        mods["leafgrad"] = lg
    mods["torch"] = _common.import_torch()
    _common.limit_threads()

    # gradient check of the chain
    ref = w2_chain.grads(mods["torch"])
    if "leafgrad" in mods:
        try:
            ok, worst, _ = _common.compare(w2_chain.grads(mods["leafgrad"]), ref)
            print(f"W2 chain grad check leafgrad~torch: {'ok' if ok else 'MISMATCH'} ({worst:.1e})")
            if not ok:
                del mods["leafgrad"]
        except Exception as e:  # noqa: BLE001
            print(f"leafgrad failed on the W2 chain: {type(e).__name__}: {e}")
            del mods["leafgrad"]

    # build all timers: (row, impl) -> (fn, per-call divisor)
    timers = {}
    for impl, T in mods.items():
        for v, _, _ in w2_chain.VARIANTS:
            timers[(f"W2 chain {v}", impl)] = (w2_chain.make(T, 0, v), w2_chain.N_OPS)
        for name, fn in _op_cases(T).items():
            for grad in (True, False):
                row = f"  {name} {'grad' if grad else 'no_grad'}"
                try:
                    f = _single_op_timer(T, fn, grad)
                    f()
                    timers[(row, impl)] = (f, INNER)
                except Exception as e:  # noqa: BLE001
                    print(f"{impl} {row.strip()}: {type(e).__name__}: {e}")
    for v, _, _ in w2_chain.VARIANTS:   # NumPy floor for the chain
        timers[(f"W2 chain {v}", "numpy")] = (w2_chain.make_numpy(0, v), w2_chain.N_OPS)

    inner = {}
    for key, (f, _) in timers.items():
        f()
        t1 = _common.time_calls(f, 1)
        inner[key] = max(1, round(args.sample_time / max(t1, 1e-9)))
    samples = {k: [] for k in timers}
    impls = list(mods) + ["numpy"]
    _common.gc_settle()
    for r in range(args.rounds):
        order = impls[r % len(impls):] + impls[:r % len(impls)]
        for impl in order:
            for key, (f, div) in timers.items():
                if key[1] == impl:
                    n = inner[key]
                    samples[key].append(_common.time_calls(f, n) / n / div * 1e6)
    _common.gc_unsettle()

    rows = list(dict.fromkeys(k[0] for k in timers))
    med = {k: statistics.median(v) for k, v in samples.items() if v}
    print(f"\nmicroseconds per op, median of {args.rounds} rounds, (16,) float32, 1 thread")
    head = f"{'':34s} {label:>18s} {'torch':>8s} {'lg/torch':>9s} {'numpy':>8s}"
    print(head)
    print("-" * len(head))
    for row in rows:
        a, b, c = med.get((row, "leafgrad")), med.get((row, "torch")), med.get((row, "numpy"))
        f = lambda x: f"{x:.2f}" if x is not None else "-"  # noqa: E731
        ratio = f"{a / b:.2f}" if a is not None and b else "-"
        print(f"{row:34s} {f(a):>18s} {f(b):>8s} {ratio:>9s} {f(c):>8s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
