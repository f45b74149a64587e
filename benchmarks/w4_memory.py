"""W4: peak memory of one forward+backward of a 16-layer MLP, width 1024, batch 512.

    h = x;  15 x  h = relu(linear(h, W_i, b_i));  out = linear(h, W_16, b_16)
    loss = mean(out * out);  loss.backward()

Measured in a FRESH subprocess per implementation, after the parameters
(64 MiB) and the input (2 MiB) are allocated and one warm-up fwd+bwd ran
(its gradients released, gc.collect(), malloc_trim(0)), i.e. the
steady-state peak of a training step:

* rss_delta_mib: peak RSS during fwd+bwd minus RSS just before it.  On Linux
  the high-water mark is first reset to the current RSS
  (``echo 5 > /proc/self/clear_refs``) and the peak is read from VmHWM in
  /proc/self/status.  resource.getrusage(...).ru_maxrss is recorded too
  (ru_maxrss_delta_mib) and used as the fallback where /proc is missing, but
  it is not trustworthy here: it is max(signal->maxrss, VmHWM), and the
  kernel copies the PARENT's RSS into signal->maxrss at fork/exec, so a
  child of a big parent (run.py with torch loaded) reports the parent's
  size as its own floor (seen: 78 MiB true delta reported as 306 MiB).
* tracemalloc_mib (NumPy-based implementations only; numpy reports its data
  buffers to tracemalloc): peak traced allocation during a second fwd+bwd.

Both include the parameter gradients (64 MiB), which must exist at the end.
The children run with MALLOC_MMAP_THRESHOLD_=131072 (see MMAP_THRESHOLD).
Target: leafgrad's rss_delta <= 1.1x torch's.
"""
import _common  # noqa: F401
import gc
import json
import os
import resource
import sys
import tracemalloc

import numpy as np

ID = "W4"
TITLE = "peak memory of fwd+bwd, 16-layer MLP 1024 wide, batch 512"
KIND = "memory"
VARIANTS = [("peak fwd+bwd", "MiB", 1.0)]
TARGETS = {"peak fwd+bwd": ("leafgrad/torch", 1.1)}
LAYERS, WIDTH, BATCH = 16, 1024, 512
GRAD_BATCH = 32   # the gradient check uses the same net on a smaller batch
# glibc's *dynamic* mmap threshold (raised each time a big mmapped block is
# freed) sends later buffers to the brk heap, whose retention made torch's
# peak vary 108-136 MiB between identical runs.  Pinning the threshold at its
# default start value keeps every buffer >= 128 KiB in its own mapping, so RSS
# tracks live memory: torch 68.0 +- 0.1 MiB.  Same setting for every impl.
MMAP_THRESHOLD = 128 * 1024
MIB = 1024.0 * 1024.0


def init(seed=0, batch=BATCH):
    rng = np.random.default_rng(seed)
    b = 1.0 / np.sqrt(WIDTH)
    d = {}
    for i in range(LAYERS):
        # He-scaled weights keep activations O(1) through 16 ReLU layers
        d[f"W{i}"] = (rng.standard_normal((WIDTH, WIDTH), np.float32) * np.float32(np.sqrt(2.0) * b))
        d[f"b{i}"] = rng.uniform(-b, b, WIDTH).astype(np.float32)
    d["x"] = rng.standard_normal((batch, WIDTH), np.float32)
    return d


def names():
    return [f"{p}{i}" for i in range(LAYERS) for p in ("W", "b")]


# ---------------------------------------------------------------- T-style
def _build(T, seed, batch):
    F = T.nn.functional
    d = init(seed, batch)
    P = {}
    for k in names():
        P[k] = T.tensor(d.pop(k), requires_grad=True)
    x = T.tensor(d.pop("x"))

    def forward_backward():
        h = x
        for i in range(LAYERS):
            h = F.linear(h, P[f"W{i}"], P[f"b{i}"])
            if i < LAYERS - 1:
                h = F.relu(h)
        loss = (h * h).mean()
        loss.backward()

    def free_grads():
        for p in P.values():
            p.grad = None
    return P, forward_backward, free_grads


def grads(T, seed=0):
    P, fb, _ = _build(T, seed, GRAD_BATCH)
    fb()
    return {k: _common.to_numpy(p.grad) for k, p in P.items()}


# ---------------------------------------------------------------- hand-written NumPy
def _build_numpy(seed, batch):
    d = init(seed, batch)
    x = d.pop("x")
    P = d
    out = {}

    def forward_backward():
        hs = [x]
        h = x
        for i in range(LAYERS):
            h = h @ P[f"W{i}"].T
            h += P[f"b{i}"]
            if i < LAYERS - 1:
                np.maximum(h, 0, out=h)
            hs.append(h)
        dh = h * (2.0 / h.size)
        for i in range(LAYERS - 1, -1, -1):
            hin = hs[i]
            out[f"W{i}"] = dh.T @ hin
            out[f"b{i}"] = dh.sum(axis=0)
            if i:
                dh = dh @ P[f"W{i}"]
                dh *= hin > 0
            hs[i + 1] = None
        return out

    def free_grads():
        out.clear()
    return P, forward_backward, free_grads


def grads_numpy(seed=0):
    _, fb, _ = _build_numpy(seed, GRAD_BATCH)
    return dict(fb())


# ---------------------------------------------------------------- measurement (child process)
def _status_kib(field):
    """VmRSS / VmHWM of this process in KiB from /proc (None if unavailable)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _malloc_trim():
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(impl, T=None, seed=0, numpy_based=True):
    """Run in a fresh process.  ``impl`` is 'numpy' or a label for module T."""
    if impl == "numpy":
        P, fb, free = _build_numpy(seed, BATCH)
    else:
        P, fb, free = _build(T, seed, BATCH)
    # Warm-up: one full fwd+bwd, then release its gradients and hand freed
    # heap pages back to the OS.  This keeps one-time costs (lazy imports,
    # BLAS work buffers, first-touch of shared-library code pages, which
    # varied by 40+ MiB between otherwise identical runs) out of the number,
    # so it is the steady-state peak of a training step.
    fb()
    free()
    gc.collect()
    _malloc_trim()
    param_bytes = sum(int(np.prod(tuple(p.shape))) * 4 for p in P.values())
    gc.collect()
    rss0 = _status_kib("VmRSS")
    reset = _reset_peak()
    ru0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fb()
    ru1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hwm1 = _status_kib("VmHWM")
    if reset and rss0 is not None and hwm1 is not None:
        delta, method = hwm1 - rss0, "VmHWM after clear_refs reset - VmRSS before"
    else:
        delta, method = ru1 - ru0, "ru_maxrss after - before (may under-report)"
    res = {
        "impl": impl,
        "param_mib": param_bytes / MIB,
        "rss_delta_mib": delta / 1024.0,
        "rss_method": method,
        "ru_maxrss_delta_mib": (ru1 - ru0) / 1024.0,
        "tracemalloc_mib": None,
    }
    if numpy_based:
        free()
        gc.collect()
        tracemalloc.start()
        fb()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        res["tracemalloc_mib"] = peak / MIB
    return res


def _child(argv):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--measure", required=True, choices=("leafgrad", "torch", "numpy"))
    ap.add_argument("--leafgrad-path")
    ap.add_argument("--impl-as-leafgrad")
    a = ap.parse_args(argv)
    if a.measure == "numpy":
        res = measure("numpy")
    elif a.measure == "torch":
        res = measure("torch", _common.import_torch(), numpy_based=False)
    else:
        T, why = _common.load_leafgrad(a.leafgrad_path, a.impl_as_leafgrad)
        if T is None:
            raise SystemExit(why)
        res = measure("leafgrad", T, numpy_based=True)
    print("W4RESULT " + json.dumps(res))


def measure_in_subprocess(impl, leafgrad_path=None, as_module=None, timeout=300):
    """Returns (result dict, None) or (None, error string)."""
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), "--measure", impl]
    if leafgrad_path:
        cmd += ["--leafgrad-path", leafgrad_path]
    if as_module:
        cmd += ["--impl-as-leafgrad", as_module]
    env = dict(os.environ)
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout}s"
    for line in p.stdout.splitlines():
        if line.startswith("W4RESULT "):
            return json.loads(line[len("W4RESULT "):]), None
    tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
    return None, f"subprocess rc={p.returncode}: " + " | ".join(tail)


if __name__ == "__main__":
    if "--measure" in sys.argv:
        _child(sys.argv[1:])
    else:
        import run
        sys.exit(run.main(["--only", ID] + sys.argv[1:]))
