"""W1: MLP 784-512-512-10, ReLU, cross-entropy, SGD momentum 0.9, batch 256.

One timed step = forward + backward + momentum-SGD update (+ grad reset).
Target: leafgrad <= 1.05x the hand-written NumPy step.
"""
import _common  # noqa: F401  (pins threads; must precede numpy)
import numpy as np

ID = "W1"
TITLE = "MLP 784-512-512-10 ReLU, CE, SGD momentum, batch 256"
KIND = "timed"
VARIANTS = [("step", "ms/step", 1e3), ("compiled step", "ms/step", 1e3)]  # (name, unit, s -> unit)
TARGETS = {"step": ("leafgrad/numpy", 1.05), "compiled step": ("leafgrad/numpy", 1.0)}

SIZES = (784, 512, 512, 10)
BATCH = 256
LR, MOM = 0.01, 0.9
NAMES = ("W1", "b1", "W2", "b2", "W3", "b3")


def init(seed=0):
    """Initial weights and data, generated once with NumPy (torch.nn.Linear-style init)."""
    rng = np.random.default_rng(seed)
    d = {}
    for i, (fi, fo) in enumerate(zip(SIZES[:-1], SIZES[1:]), 1):
        bound = 1.0 / np.sqrt(fi)
        d[f"W{i}"] = rng.uniform(-bound, bound, (fo, fi)).astype(np.float32)
        d[f"b{i}"] = rng.uniform(-bound, bound, (fo,)).astype(np.float32)
    d["x"] = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    d["y"] = rng.integers(0, SIZES[-1], BATCH).astype(np.int64)
    return d


# ---------------------------------------------------------------- T-style (torch / leafgrad)
def _build(T, seed, compiled=False):
    F = T.nn.functional
    d = init(seed)
    P = {k: T.tensor(d[k], requires_grad=True) for k in NAMES}
    bufs = {k: T.tensor(np.zeros_like(d[k])) for k in NAMES}
    x, y = T.tensor(d["x"]), T.tensor(d["y"])

    def loss_of():
        h = F.relu(F.linear(x, P["W1"], P["b1"]))
        h = F.relu(F.linear(h, P["W2"], P["b2"]))
        return F.cross_entropy(F.linear(h, P["W3"], P["b3"]), y)

    loss_fn = _common.compiled(T, loss_of) if compiled else loss_of

    def forward_backward():
        loss = loss_fn()
        loss.backward()
        return loss

    def update():
        with T.no_grad():
            for k in NAMES:
                p, b = P[k], bufs[k]
                b *= MOM
                b += p.grad
                p -= LR * b
                p.grad = None

    return P, forward_backward, update


def make(T, seed=0, variant="step"):
    return _common.training_step(_build, T, seed, compiled=variant.startswith("compiled"))


def grads(T, seed=0):
    return _common.first_grads(_build, T, seed, NAMES)


# ---------------------------------------------------------------- hand-written NumPy
def _build_numpy(seed):
    d = init(seed)
    P = {k: d[k].copy() for k in NAMES}
    bufs = {k: np.zeros_like(d[k]) for k in NAMES}
    x, y = d["x"], d["y"]
    rows = np.arange(BATCH)

    def forward_backward():
        W1, b1, W2, b2, W3, b3 = (P[k] for k in NAMES)
        h1 = x @ W1.T
        h1 += b1
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ W2.T
        h2 += b2
        np.maximum(h2, 0, out=h2)
        z = h2 @ W3.T
        z += b3
        # softmax cross-entropy, mean over the batch
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[rows, y]))
        dz = e
        dz /= s
        dz[rows, y] -= 1.0
        dz *= 1.0 / BATCH
        g = {"W3": dz.T @ h2, "b3": dz.sum(axis=0)}
        dh2 = dz @ W3
        dh2 *= h2 > 0
        g["W2"] = dh2.T @ h1
        g["b2"] = dh2.sum(axis=0)
        dh1 = dh2 @ W2
        dh1 *= h1 > 0
        g["W1"] = dh1.T @ x
        g["b1"] = dh1.sum(axis=0)
        return loss, g

    def update(g):
        for k in NAMES:
            b = bufs[k]
            b *= MOM
            b += g[k]
            P[k] -= LR * b

    return forward_backward, update


def make_numpy(seed=0, variant="step"):
    return _common.numpy_training_step(_build_numpy, seed)


def grads_numpy(seed=0):
    fb, _ = _build_numpy(seed)
    return fb()[1]


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
