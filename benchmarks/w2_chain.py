"""W2: per-op overhead -- a chain of 200 mixed elementwise ops on a (16,) tensor.

The chain repeats a residual cycle of 7 elementwise ops

    u = tanh(x); u = sigmoid(u); u = exp(u); u = u / d; u = u + (-0.85);
    u = u * c;   x = x + u

(d in [1.5, 2.5], c in [-0.6, -0.3] are constant (16,) tensors) until 200 ops
have run; the output is the last value computed.  This mixes tensor-tensor
(div, mul, add) and tensor-scalar (add) binary ops with tanh/sigmoid/exp.
x is pulled towards a stable fixed point, so every value stays in [-3, 3]
and the gradient stays O(0.01..1) (no vanishing, no overflow), which keeps
the gradient check meaningful.  Two variants:

* ``fwd+bwd``:    x.requires_grad, 200 ops, .sum(), .backward()   -> us per op
* ``nograd fwd``: the same 200 ops under no_grad                   -> us per op

Targets: leafgrad <= 1.0x torch for both.  The NumPy column is the bare cost
of the same ufunc calls (plus a hand-written backward): the floor for a
NumPy engine, shown for information.
"""
import _common  # noqa: F401
import numpy as np

ID = "W2"
TITLE = "chain of 200 elementwise ops on (16,), per-op overhead"
KIND = "timed"
N_OPS = 200
SIZE = 16
VARIANTS = [("fwd+bwd", "us/op", 1e6 / N_OPS), ("nograd fwd", "us/op", 1e6 / N_OPS),
            ("compiled fwd+bwd", "us/op", 1e6 / N_OPS)]
TARGETS = {"fwd+bwd": ("leafgrad/torch", 1.0), "nograd fwd": ("leafgrad/torch", 1.0),
           "compiled fwd+bwd": ("leafgrad/numpy", 1.0)}
SHIFT = -0.85
CYCLE = 7


def init(seed=0):
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal(SIZE).astype(np.float32),
        "c": rng.uniform(-0.6, -0.3, SIZE).astype(np.float32),
        "d": rng.uniform(1.5, 2.5, SIZE).astype(np.float32),
    }


# ---------------------------------------------------------------- T-style
def chain(T, x, c, d):
    u = x
    for i in range(N_OPS):
        op = i % CYCLE
        if op == 0:
            u = T.tanh(x)
        elif op == 1:
            u = T.sigmoid(u)
        elif op == 2:
            u = T.exp(u)
        elif op == 3:
            u = u / d
        elif op == 4:
            u = u + SHIFT
        elif op == 5:
            u = u * c
        else:
            x = x + u
            u = x
    return u


def make(T, seed=0, variant="fwd+bwd"):
    a = init(seed)
    c, d = T.tensor(a["c"]), T.tensor(a["d"])
    if variant == "nograd fwd":
        x = T.tensor(a["x"])

        def fwd():
            with T.no_grad():
                return chain(T, x, c, d)
        return fwd
    x = T.tensor(a["x"], requires_grad=True)
    if variant.startswith("compiled"):
        loss_fn = _common.compiled(T, lambda x: chain(T, x, c, d).sum())
    else:
        def loss_fn(x):
            return chain(T, x, c, d).sum()

    def fwd_bwd():
        x.grad = None
        loss_fn(x).backward()
    return fwd_bwd


def grads(T, seed=0):
    a = init(seed)
    x = T.tensor(a["x"], requires_grad=True)
    y = chain(T, x, T.tensor(a["c"]), T.tensor(a["d"]))
    y.sum().backward()
    return {"x": _common.to_numpy(x.grad), "forward": _common.to_numpy(y)}


# ---------------------------------------------------------------- hand-written NumPy
def _np_forward(x, c, d, save):
    tape = [] if save else None
    u = x
    for i in range(N_OPS):
        op = i % CYCLE
        if op == 0:
            u = np.tanh(x)
        elif op == 1:
            u = 1.0 / (1.0 + np.exp(-u))
        elif op == 2:
            u = np.exp(u)
        elif op == 3:
            u = u / d
        elif op == 4:
            u = u + np.float32(SHIFT)
        elif op == 5:
            u = u * c
        else:
            x = x + u
            u = x
        if save and op < 3:
            tape.append(u)
    return u, tape


def _np_backward(tape, c, d):
    gu = np.ones(SIZE, np.float32)  # d out / d u   (the output is the last u)
    gx = None                       # d out / d x   (None = zero)
    for i in reversed(range(N_OPS)):
        op = i % CYCLE
        if op == 0:                 # u = tanh(x)   (the old u is dead)
            t = tape.pop()
            gt = gu * (1.0 - t * t)
            gx = gt if gx is None else gx + gt
            gu = None
        elif op == 1:               # sigmoid
            s = tape.pop()
            gu = gu * (s * (1.0 - s))
        elif op == 2:               # exp
            gu = gu * tape.pop()
        elif op == 3:               # u / d
            gu = gu / d
        elif op == 5:               # u * c
            gu = gu * c
        elif op == 6:               # x = x + u; u = x
            if gu is not None:
                gx = gu if gx is None else gx + gu
            gu = gx
        # op == 4 (u + const): gradient passes through
    return gx


def make_numpy(seed=0, variant="fwd+bwd"):
    a = init(seed)
    x, c, d = a["x"], a["c"], a["d"]
    if variant == "nograd fwd":
        return lambda: _np_forward(x, c, d, False)[0]

    def fwd_bwd():
        y, tape = _np_forward(x, c, d, True)
        float(y.sum())
        return _np_backward(tape, c, d)
    return fwd_bwd


def grads_numpy(seed=0):
    a = init(seed)
    y, tape = _np_forward(a["x"], a["c"], a["d"], True)
    return {"x": _np_backward(tape, a["c"], a["d"]), "forward": y}


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
