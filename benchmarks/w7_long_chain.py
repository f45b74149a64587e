"""W7: backward through a very long chain (10k, 50k, 100k nodes).

    y = x;  repeat n times: y = y * 1.00001;   y.sum().backward()

on a (16,) tensor.  Only ``backward()`` is timed (the graph is rebuilt,
untimed, before each call, and the previous graph is released untimed).
Reported as microseconds per node for each length (median of 3 rounds).
Target: it completes (no RecursionError / stack overflow) and is linear: the
best per-node time at 100k within 1.5x of the best per-node time at 10k.  No NumPy timing (there is nothing
to hand-write); the gradient 1.00001**n (float32 repeated multiplication) is
checked against torch at n = 10k.
"""
import _common  # noqa: F401
import numpy as np

ID = "W7"
TITLE = "backward of a long chain y = y * 1.00001 (per node)"
KIND = "timed"
LENGTHS = (10_000, 50_000, 100_000)
VARIANTS = [(f"bwd n={n // 1000}k", "us/node", 1e6 / n) for n in LENGTHS]
TARGETS = {}           # judged by run.py: completes + linear (see LINEAR_MAX)
LINEAR_MAX = 1.5
# Each W7 sample rebuilds a graph of up to 100k nodes (untimed but slow), so:
MAX_ROUNDS = 3      # rounds, whatever --rounds says
WARMUP_CALLS = 0
INNER_CALLS = 1     # one backward per sample, no calibration
SIZE = 16
FACTOR = 1.00001
CHECK_N = 10_000


def _n(variant):
    return int(variant.split("=")[1].rstrip("k")) * 1000


def init(seed=0):
    return {"x": np.random.default_rng(seed).standard_normal(SIZE).astype(np.float32)}


def _chain(x, n):
    y = x
    for _ in range(n):
        y = y * FACTOR
    return y


def make(T, seed=0, variant="bwd n=10k"):
    """Returns (prepare, run): prepare() builds the graph (untimed), run() is
    the timed backward."""
    n = _n(variant)
    x = T.tensor(init(seed)["x"], requires_grad=True)
    state = {}

    def prepare():
        state.clear()            # release the previous graph (untimed)
        x.grad = None
        state["loss"] = _chain(x, n).sum()

    def run():
        state["loss"].backward()
    return prepare, run


def grads(T, seed=0):
    x = T.tensor(init(seed)["x"], requires_grad=True)
    _chain(x, CHECK_N).sum().backward()
    return {"x": _common.to_numpy(x.grad)}


def grads_numpy(seed=0):
    g = np.ones(SIZE, np.float32)
    f = np.float32(FACTOR)
    for _ in range(CHECK_N):
        g = g * f
    return {"x": g}


make_numpy = None


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
