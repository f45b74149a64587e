"""Shared helpers for the leafgrad benchmarks.

Importing this module pins every math library to ONE thread.  It must be
imported before numpy / torch (every workload module does ``import _common``
as its first import), because OpenBLAS / MKL / OpenMP read these variables
only once, when they are loaded.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import gc  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)

# Gradient comparison tolerance (float32).
RTOL = 1e-4

_thread_limiter = None  # keep threadpoolctl's context alive for the process


def limit_threads(torch_mod=None):
    """Pin numpy's BLAS and torch's intra/inter-op pools to one thread."""
    global _thread_limiter
    info = {"env": {v: os.environ.get(v) for v in
                    ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}}
    try:
        from threadpoolctl import threadpool_limits
        if _thread_limiter is None:
            _thread_limiter = threadpool_limits(1)
        info["threadpoolctl"] = True
    except ImportError:
        info["threadpoolctl"] = False
    if torch_mod is not None:
        torch_mod.set_num_threads(1)
        try:
            torch_mod.set_num_interop_threads(1)
        except RuntimeError:
            pass  # can only be set before the first parallel work
        info["torch_threads"] = torch_mod.get_num_threads()
    return info


def import_torch():
    import torch
    limit_threads(torch)
    return torch


def leafgrad_search_path(extra=None):
    """Put the leafgrad checkout first on sys.path: ``extra`` if given, else
    the repository this benchmarks/ directory belongs to."""
    p = os.path.abspath(extra or REPO_ROOT)
    if p in sys.path:
        sys.path.remove(p)
    sys.path.insert(0, p)


def load_leafgrad(leafgrad_path=None, as_module=None):
    """Return (module, None) when a usable leafgrad is importable, else
    (None, reason).

    ``as_module`` is a testing aid for the harness itself: it returns that
    module (e.g. torch) under the leafgrad label.  run.py marks results
    produced this way in its output so they can never be mistaken for
    leafgrad's own numbers.
    """
    if as_module:
        import importlib
        mod = importlib.import_module(as_module)
        if as_module == "torch":
            limit_threads(mod)
        return mod, None
    leafgrad_search_path(leafgrad_path)
    try:
        import leafgrad
    except Exception as e:  # noqa: BLE001
        return None, f"import leafgrad failed: {type(e).__name__}: {e}"
    missing = [a for a in ("tensor", "no_grad", "nn", "tanh") if not hasattr(leafgrad, a)]
    if missing:
        return None, ("leafgrad imported from %s but lacks the torch-like API (missing: %s)"
                      % (getattr(leafgrad, "__file__", "?"), ", ".join(missing)))
    try:
        t = leafgrad.tensor(np.ones(2, np.float32), requires_grad=True)
        (t * t).sum().backward()
        assert np.allclose(t.grad.detach().numpy(), 2.0)
    except Exception as e:  # noqa: BLE001
        return None, f"leafgrad smoke test failed: {type(e).__name__}: {e}"
    if hasattr(leafgrad, "set_num_threads"):
        try:
            leafgrad.set_num_threads(1)
        except Exception:  # noqa: BLE001
            pass
    return leafgrad, None


def compiled(T, fn):
    """``T.compile(fn)`` for leafgrad and for the torch.compile column (``TorchCompile``); for
    torch, ``fn`` itself: a compiled row's torch column is torch *eager* (the issue's targets
    compare with it)."""
    if T.__name__ == "torch":
        return fn
    return T.compile(fn)


class TorchCompile:
    """torch under the name ``torch.compile``: the same module, except that a workload's
    compiled variant compiles its loss with ``torch.compile`` (``compiled`` above); run.py
    times it in compiled variants only."""
    __name__ = "torch.compile"

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        return getattr(self._torch, name)


def training_step(build, T, seed, **options):
    """One timed step of a workload built as (params, forward_backward, update)."""
    _, forward_backward, update = build(T, seed, **options)

    def step():
        forward_backward()
        update()
    return step


def first_grads(build, T, seed, names):
    """The parameters' gradients after one forward and backward, as NumPy arrays."""
    params, forward_backward, _ = build(T, seed)
    forward_backward()
    return {k: to_numpy(params[k].grad) for k in names}


def numpy_training_step(build_numpy, seed):
    """One timed step of a hand-written NumPy workload built as (forward_backward -> (loss,
    grads), update(grads))."""
    forward_backward, update = build_numpy(seed)

    def step():
        _, grads = forward_backward()
        update(grads)
    return step


def numpy_sgd_update(params, lr):
    """Plain SGD in place on NumPy arrays, given the gradients by name."""
    def update(grads):
        for k, p in params.items():
            p -= lr * grads[k]
    return update


def sgd_update(T, params, lr):
    """Plain SGD in place under no_grad, resetting the gradients (set_to_none)."""
    def update():
        with T.no_grad():
            for p in params.values():
                p -= lr * p.grad
                p.grad = None
    return update


def to_numpy(t):
    """Tensor (torch / leafgrad) or ndarray -> float ndarray copy."""
    if isinstance(t, np.ndarray):
        return t.copy()
    return np.array(t.detach().numpy(), copy=True)


def compare(a, ref, rtol=RTOL):
    """Compare two dicts of arrays.  Returns (ok, worst_err, detail).

    Element-wise |a - ref| <= rtol * |ref| + rtol * max|ref|: relative tolerance
    plus an absolute floor scaled to the tensor's magnitude, so entries that
    are ~0 only by cancellation (float32 summation order differs between
    BLAS libraries) do not cause spurious failures.
    """
    worst, detail, ok = 0.0, {}, True
    if set(a) != set(ref):
        return False, float("inf"), {"keys": [sorted(a), sorted(ref)]}
    for k in ref:
        x, y = np.asarray(a[k], np.float64), np.asarray(ref[k], np.float64)
        if x.shape != y.shape:
            ok = False
            detail[k] = f"shape {x.shape} vs {y.shape}"
            worst = float("inf")
            continue
        if not np.all(np.isfinite(x)):
            ok = False
            detail[k] = "non-finite values"
            worst = float("inf")
            continue
        scale = max(float(np.max(np.abs(y))), 1e-30) if y.size else 1.0
        err = np.abs(x - y) / (np.abs(y) + scale)  # <= rtol  <=> within tolerance
        e = float(err.max()) if err.size else 0.0
        worst = max(worst, e)
        if e > rtol:
            ok = False
            detail[k] = f"max scaled err {e:.2e}"
    return ok, worst, detail


# The clock of time_calls: wall-clock time, or (run.py --clock cpu) this process's CPU time,
# which a loaded machine's other processes do not inflate (every library runs one thread).
clock = time.perf_counter


def time_calls(fn, n, prepare=None):
    """Seconds for ``n`` calls of ``fn`` (``prepare`` runs untimed before each)."""
    now = clock
    if prepare is None:
        t0 = now()
        for _ in range(n):
            fn()
        return now() - t0
    total = 0.0
    for _ in range(n):
        prepare()
        t0 = now()
        fn()
        total += now() - t0
    return total


def gc_settle():
    gc.collect()
    gc.freeze()


def gc_unsettle():
    gc.unfreeze()
    gc.collect()
