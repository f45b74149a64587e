"""W5: vanilla tanh RNN, input 64, hidden 128, batch 32, 50 steps unrolled.

    h_t = tanh(x_t W_xh^T + b_h + h_{t-1} W_hh^T),   h_0 = 0
    loss = mean((h_50 W_o^T + b_o - target)^2)       (readout to 10 outputs)

One timed step = forward + backward through time + plain SGD update.
Targets: eager leafgrad <= 1.0x torch eager; compiled <= 1.1x the hand-written
NumPy step.  The NumPy baseline does the same per-time-step matmuls as the
T-style graph (no cross-step batching of the weight gradients), i.e. what a
NumPy engine has to execute.
"""
import _common  # noqa: F401
import numpy as np

ID = "W5"
TITLE = "tanh RNN in64 hid128 batch32, 50 steps BPTT, SGD"
KIND = "timed"
VARIANTS = [("step", "ms/step", 1e3), ("compiled step", "ms/step", 1e3)]
TARGETS = {"step": ("leafgrad/torch", 1.0), "compiled step": ("leafgrad/numpy", 1.1)}

STEPS, BATCH, NIN, NH, NOUT = 50, 32, 64, 128, 10
LR = 0.01
NAMES = ("W_xh", "W_hh", "b_h", "W_o", "b_o")


def init(seed=0):
    rng = np.random.default_rng(seed)
    b = 1.0 / np.sqrt(NH)

    def u(*shape):
        return rng.uniform(-b, b, shape).astype(np.float32)
    return {
        "W_xh": u(NH, NIN), "W_hh": u(NH, NH), "b_h": u(NH),
        "W_o": u(NOUT, NH), "b_o": u(NOUT),
        "x": rng.standard_normal((STEPS, BATCH, NIN)).astype(np.float32),
        "target": rng.standard_normal((BATCH, NOUT)).astype(np.float32),
    }


# ---------------------------------------------------------------- T-style
def _build(T, seed, compiled=False):
    F = T.nn.functional
    d = init(seed)
    P = {k: T.tensor(d[k], requires_grad=True) for k in NAMES}
    x, target = T.tensor(d["x"]), T.tensor(d["target"])
    h0 = T.tensor(np.zeros((BATCH, NH), np.float32))

    def loss_of():
        h = h0
        for t in range(STEPS):
            h = T.tanh(F.linear(x[t], P["W_xh"], P["b_h"]) + F.linear(h, P["W_hh"]))
        err = F.linear(h, P["W_o"], P["b_o"]) - target
        return (err * err).mean()

    loss_fn = _common.compiled(T, loss_of) if compiled else loss_of

    def forward_backward():
        loss = loss_fn()
        loss.backward()
        return loss

    return P, forward_backward, _common.sgd_update(T, P, LR)


def make(T, seed=0, variant="step"):
    return _common.training_step(_build, T, seed, compiled=variant.startswith("compiled"))


def grads(T, seed=0):
    return _common.first_grads(_build, T, seed, NAMES)


# ---------------------------------------------------------------- hand-written NumPy
def _build_numpy(seed):
    d = init(seed)
    P = {k: d[k].copy() for k in NAMES}
    x, target = d["x"], d["target"]
    h0 = np.zeros((BATCH, NH), np.float32)

    def forward_backward():
        W_xh, W_hh, b_h, W_o, b_o = (P[k] for k in NAMES)
        hs = [h0]
        h = h0
        for t in range(STEPS):
            a = x[t] @ W_xh.T
            a += b_h
            a += h @ W_hh.T
            h = np.tanh(a, out=a)
            hs.append(h)
        err = h @ W_o.T
        err += b_o
        err -= target
        loss = float(np.mean(err * err))
        dout = err * (2.0 / err.size)
        g = {"W_o": dout.T @ h, "b_o": dout.sum(axis=0)}
        dh = dout @ W_o
        gxh = np.zeros_like(W_xh)
        ghh = np.zeros_like(W_hh)
        gb = np.zeros_like(b_h)
        for t in range(STEPS - 1, -1, -1):
            h = hs[t + 1]
            da = dh * (1.0 - h * h)
            gxh += da.T @ x[t]
            ghh += da.T @ hs[t]
            gb += da.sum(axis=0)
            if t:
                dh = da @ W_hh
        g["W_xh"], g["W_hh"], g["b_h"] = gxh, ghh, gb
        return loss, g

    return forward_backward, _common.numpy_sgd_update(P, LR)


def make_numpy(seed=0, variant="step"):
    return _common.numpy_training_step(_build_numpy, seed)


def grads_numpy(seed=0):
    fb, _ = _build_numpy(seed)
    return fb()[1]


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
