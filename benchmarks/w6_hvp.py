"""W6: Hessian-vector product by double backward.

    f(x) = sum(tanh(W @ x)),  W (1000, 1000), x, v (1000,)
    g  = grad(f, x, create_graph=True)
    hv = grad(g @ v, x)

One timed call computes g and hv.  Target: leafgrad <= 1.0x torch.
NumPy baseline, closed form: with u = W x, t = tanh u,
    g  = W^T (1 - t^2)
    hv = W^T (-2 t (1 - t^2) * (W v))          (3 mat-vecs for hv + g)
"""
import _common  # noqa: F401
import numpy as np

ID = "W6"
TITLE = "Hessian-vector product, f=sum(tanh(W@x)), W 1000x1000, double backward"
KIND = "timed"
VARIANTS = [("hvp", "ms/call", 1e3)]
TARGETS = {"hvp": ("leafgrad/torch", 1.0)}
N = 1000


def init(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "W": (rng.standard_normal((N, N)) / np.sqrt(N)).astype(np.float32),
        "x": rng.standard_normal(N).astype(np.float32),
        "v": rng.standard_normal(N).astype(np.float32),
    }


# ---------------------------------------------------------------- T-style
def _build(T, seed):
    d = init(seed)
    W, v = T.tensor(d["W"]), T.tensor(d["v"])
    x = T.tensor(d["x"], requires_grad=True)

    def hvp():
        f = T.tanh(W @ x).sum()
        g, = T.autograd.grad(f, x, create_graph=True)
        hv, = T.autograd.grad(g @ v, x)
        return g, hv
    return hvp


def make(T, seed=0, variant="hvp"):
    return _build(T, seed)


def grads(T, seed=0):
    g, hv = _build(T, seed)()
    return {"g": _common.to_numpy(g), "hv": _common.to_numpy(hv)}


# ---------------------------------------------------------------- hand-written NumPy
def _build_numpy(seed):
    d = init(seed)
    W, x, v = d["W"], d["x"], d["v"]

    def hvp():
        t = np.tanh(W @ x)
        s = 1.0 - t * t
        g = W.T @ s
        hv = W.T @ ((-2.0 * t * s) * (W @ v))
        return g, hv
    return hvp


def make_numpy(seed=0, variant="hvp"):
    return _build_numpy(seed)


def grads_numpy(seed=0):
    g, hv = _build_numpy(seed)()
    return {"g": g, "hv": hv}


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
