"""W3: small CNN, batch 64, 28x28x1 input, cross-entropy, plain SGD step.

    conv(1->8, 3x3) - ReLU - maxpool2 - conv(8->16, 3x3) - ReLU - maxpool2
    - flatten(16*5*5) - linear(->10)

(no padding, stride 1; the second pool floors 11x11 -> 5x5, as torch does.)
One timed step = forward + backward + SGD update.  Target: leafgrad <= 1.0x torch.

The NumPy baseline keeps activations as (C, N, H, W): im2col via
numpy.lib.stride_tricks.sliding_window_view + ONE matmul per conv (forward)
and two per conv in backward (dW, dcols), col2im as 9 strided adds, ReLU and
max-pool fused (relu(maxpool(z)) == maxpool(relu(z)); 3 np.maximum on
strided quarter views), and the routing mask ``z == max`` in backward.
"""
import _common  # noqa: F401
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

ID = "W3"
TITLE = "CNN conv8-pool-conv16-pool-linear, batch 64, 28x28, SGD"
KIND = "timed"
VARIANTS = [("step", "ms/step", 1e3), ("compiled step", "ms/step", 1e3)]
TARGETS = {"step": ("leafgrad/torch", 1.0), "compiled step": ("leafgrad/torch", 0.85)}

BATCH, H, C1, C2, NCLS = 64, 28, 8, 16, 10
LR = 0.01
NAMES = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc_w", "fc_b")


def init(seed=0):
    rng = np.random.default_rng(seed)

    def u(shape, fan_in):
        b = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-b, b, shape).astype(np.float32)
    return {
        "conv1_w": u((C1, 1, 3, 3), 9), "conv1_b": u((C1,), 9),
        "conv2_w": u((C2, C1, 3, 3), C1 * 9), "conv2_b": u((C2,), C1 * 9),
        "fc_w": u((NCLS, C2 * 5 * 5), C2 * 25), "fc_b": u((NCLS,), C2 * 25),
        "x": rng.standard_normal((BATCH, 1, H, H)).astype(np.float32),
        "y": rng.integers(0, NCLS, BATCH).astype(np.int64),
    }


# ---------------------------------------------------------------- T-style
def _build(T, seed, compiled=False):
    F = T.nn.functional
    d = init(seed)
    P = {k: T.tensor(d[k], requires_grad=True) for k in NAMES}
    x, y = T.tensor(d["x"]), T.tensor(d["y"])

    def loss_of():
        h = F.max_pool2d(F.relu(F.conv2d(x, P["conv1_w"], P["conv1_b"])), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, P["conv2_w"], P["conv2_b"])), 2)
        logits = F.linear(h.reshape(h.shape[0], -1), P["fc_w"], P["fc_b"])
        return F.cross_entropy(logits, y)

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


# ---------------------------------------------------------------- hand-written NumPy (CNHW)
# Activations are kept as (C, N, H, W): im2col then copies with the contiguous
# W axis innermost, one matmul  W(O, C*9) @ cols(C*9, N*H'*W')  yields the next
# activation directly in (O, N, H', W'), and flattening for the linear layer
# is a single transpose to torch's (N, C*H*W) order.
def _conv_fwd(x, wm, b):
    """x (C,N,H,W) -> (O,N,H-2,W-2); returns (out, cols)."""
    c, n, h, w = x.shape
    cols = sliding_window_view(x, (3, 3), axis=(2, 3))        # (C,N,H',W',3,3) view
    cols = cols.transpose(0, 4, 5, 1, 2, 3).reshape(c * 9, n * (h - 2) * (w - 2))
    out = wm @ cols
    out += b[:, None]
    return out.reshape(wm.shape[0], n, h - 2, w - 2), cols


def _col2im(dcols, shape):
    """Adjoint of _conv_fwd's im2col: (C*9, N*H'*W') -> (C,N,H,W)."""
    c, n, h, w = shape
    d6 = dcols.reshape(c, 3, 3, n, h - 2, w - 2)
    dx = np.zeros(shape, np.float32)
    for i in range(3):
        for j in range(3):
            dx[:, :, i:i + h - 2, j:j + w - 2] += d6[:, i, j]
    return dx


def _pool_relu_fwd(z):
    """relu(maxpool2x2(z)) (floor) of (C,N,H,W) ``z``; equal to maxpool(relu(z))
    and 4x cheaper: 3 np.maximum over strided quarter views + one ReLU."""
    h2, w2 = z.shape[2] // 2, z.shape[3] // 2
    q = [z[:, :, i:2 * h2:2, j:2 * w2:2] for i in (0, 1) for j in (0, 1)]
    m = np.maximum(q[0], q[1])
    np.maximum(m, q[2], out=m)
    np.maximum(m, q[3], out=m)
    np.maximum(m, 0, out=m)
    return m


def _pool_relu_bwd(dout, out, z):
    """Adjoint of _pool_relu_fwd: route dout to each window's max (mask
    ``z == max``), only where the max is > 0 (where ReLU let it through)."""
    h2, w2 = out.shape[2], out.shape[3]
    dpos = dout * (out > 0)
    dz = np.zeros(z.shape, np.float32)
    for i in (0, 1):
        for j in (0, 1):
            np.multiply(z[:, :, i:2 * h2:2, j:2 * w2:2] == out, dpos,
                        out=dz[:, :, i:2 * h2:2, j:2 * w2:2])
    return dz


def _build_numpy(seed):
    d = init(seed)
    P = {
        "w1": d["conv1_w"].reshape(C1, 9).copy(), "b1": d["conv1_b"].copy(),
        "w2": d["conv2_w"].reshape(C2, C1 * 9).copy(), "b2": d["conv2_b"].copy(),
        "wf": d["fc_w"].copy(), "bf": d["fc_b"].copy(),
    }
    x = d["x"].reshape(1, BATCH, H, H)  # (N,1,H,W) -> (1,N,H,W): same memory
    y = d["y"]
    rows = np.arange(BATCH)

    def forward_backward():
        z1, cols1 = _conv_fwd(x, P["w1"], P["b1"])
        p1 = _pool_relu_fwd(z1)
        z2, cols2 = _conv_fwd(p1, P["w2"], P["b2"])
        p2 = _pool_relu_fwd(z2)
        flat = p2.transpose(1, 0, 2, 3).reshape(BATCH, -1)   # torch's (C,H,W) order
        z = flat @ P["wf"].T
        z += P["bf"]
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[rows, y]))
        dz = e
        dz /= s
        dz[rows, y] -= 1.0
        dz *= 1.0 / BATCH
        g = {"wf": dz.T @ flat, "bf": dz.sum(axis=0)}
        dp2 = (dz @ P["wf"]).reshape(BATCH, C2, 5, 5).transpose(1, 0, 2, 3)
        dout2 = _pool_relu_bwd(dp2, p2, z2).reshape(C2, -1)
        g["w2"] = dout2 @ cols2.T
        g["b2"] = dout2.sum(axis=1)
        dp1 = _col2im(P["w2"].T @ dout2, p1.shape)
        dout1 = _pool_relu_bwd(dp1, p1, z1).reshape(C1, -1)
        g["w1"] = dout1 @ cols1.T
        g["b1"] = dout1.sum(axis=1)
        return loss, g

    return forward_backward, _common.numpy_sgd_update(P, LR)


def make_numpy(seed=0, variant="step"):
    return _common.numpy_training_step(_build_numpy, seed)


def grads_numpy(seed=0):
    fb, _ = _build_numpy(seed)
    g = fb()[1]
    return {
        "conv1_w": g["w1"].reshape(C1, 1, 3, 3), "conv1_b": g["b1"],
        "conv2_w": g["w2"].reshape(C2, C1, 3, 3), "conv2_b": g["b2"],
        "fc_w": g["wf"], "fc_b": g["bf"],
    }


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
