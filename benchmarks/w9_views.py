"""W9: in-place ops on views while many views are alive.

    rows:  y = x * 1 (2000 x 8);  rows = [y[i] for i in range(2000)];  timed: r.mul_(2) for each row
    chain: y = x * 1 (4,);  v = y; 100,000 times v = v[:];          timed: v.mul_(2)   (one op)
    chain backward: after that, timed: y.sum().backward()

Only the in-place ops (and the backward) are timed; the views are made, untimed, before each
call. Reported in ms per call (2000 in-place ops for "rows", one for "chain"). An in-place op
on a view should cost the same however many views are alive, and a chain of views should cost
time linear in its length (no target: the rows show the cost beside torch's). No NumPy timing
(nothing to hand-write); the gradients of the same programs at a smaller size (200 rows, a
chain of 1,000) are checked against torch.
"""
import _common  # noqa: F401
import numpy as np

ID = "W9"
TITLE = "in-place ops on views: 2000 live row views, one op at the end of a 100k-view chain"
KIND = "timed"
ROWS, DEPTH = 2000, 100_000
VARIANTS = [(f"rows {ROWS} mul_", "ms/call", 1e3), (f"chain {DEPTH // 1000}k mul_", "ms/call", 1e3),
            (f"chain {DEPTH // 1000}k bwd", "ms/call", 1e3)]
TARGETS = {}
MAX_ROUNDS = 3      # building 100k views per sample is slow
WARMUP_CALLS = 0
INNER_CALLS = 1


def init(seed=0):
    rng = np.random.default_rng(seed)
    return {"rows": rng.standard_normal((ROWS, 8)).astype(np.float32),
            "chain": rng.standard_normal(4).astype(np.float32)}


def _rows(T, data, n):
    x = T.tensor(data[:n], requires_grad=True)
    y = x * 1
    return x, y, [y[i] for i in range(n)]


def _chain(T, data, depth):
    x = T.tensor(data, requires_grad=True)
    y = x * 1
    v = y
    for _ in range(depth):
        v = v[:]
    return x, y, v


def make(T, seed=0, variant=VARIANTS[0][0]):
    """Returns (prepare, run): prepare() makes the views (untimed), run() is timed."""
    d = init(seed)
    state = {}
    if variant.startswith("rows"):
        def prepare():
            state.clear()
            state["x"], state["y"], state["rows"] = _rows(T, d["rows"], ROWS)

        def run():
            for r in state["rows"]:
                r.mul_(2)
        return prepare, run
    backward = variant.endswith("bwd")

    def prepare():
        state.clear()
        state["x"], state["y"], state["v"] = _chain(T, d["chain"], DEPTH)
        if backward:
            state["v"].mul_(2)

    def run():
        if backward:
            state["y"].sum().backward()
        else:
            state["v"].mul_(2)
    return prepare, run


def grads(T, seed=0):
    d = init(seed)
    x, y, rows = _rows(T, d["rows"], 200)
    for i, r in enumerate(rows):
        r.mul_(i % 3 + 1)
    (y * y).sum().backward()
    cx, cy, v = _chain(T, d["chain"], 1000)
    v[1:].mul_(3)
    (cy * cy).sum().backward()
    return {"rows x": _common.to_numpy(x.grad), "chain x": _common.to_numpy(cx.grad)}


grads_numpy = None
make_numpy = None


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
