"""A small finite-difference gradient checker for the op tests (float64, central differences).

``check_grad(fn, inputs)`` compares the full Jacobian of ``fn`` (all floating outputs,
flattened and concatenated) with respect to every input, computed by leafgrad's backward
(one backward per output element), with central differences; on failure it prints both.
``check_gradgrad(fn, inputs)`` does the same for the function ``inputs -> grad(<fn, w>)``,
i.e. it checks the second derivatives that ``create_graph=True`` records.
"""
import numpy as np

import leafgrad as lg


def _outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, lg.Tensor) and o.dtype.is_floating_point]


def _flat_value(fn, inputs):
    with lg.no_grad():
        outs = _outputs(fn(*inputs))
    return np.concatenate([np.asarray(o._data, dtype=np.float64).reshape(-1) for o in outs]) if outs \
        else np.zeros(0)


def numerical_jacobian(fn, inputs, eps=1e-6):
    """J[i] of shape (n_outputs, input_i.numel()), by central differences."""
    jac = []
    for t in inputs:
        data = t._data
        cols = []
        for k in range(data.size):
            idx = np.unravel_index(k, data.shape)
            orig = data[idx]
            data[idx] = orig + eps
            plus = _flat_value(fn, inputs)
            data[idx] = orig - eps
            minus = _flat_value(fn, inputs)
            data[idx] = orig
            cols.append((plus - minus) / (2 * eps))
        n_out = _flat_value(fn, inputs).size
        jac.append(np.stack(cols, axis=1) if cols else np.zeros((n_out, 0)))
    return jac


def analytical_jacobian(fn, inputs):
    """J[i] of shape (n_outputs, input_i.numel()), one leafgrad backward per output element."""
    outs = _outputs(fn(*inputs))
    rows = [[] for _ in inputs]
    for o in outs:
        for k in range(o.numel()):
            seed = np.zeros(o.shape, dtype=o._data.dtype)
            seed.reshape(-1)[k] = 1
            if o.requires_grad:
                grads = lg.autograd.grad(o, inputs, lg.tensor(seed), retain_graph=True, allow_unused=True)
            else:
                grads = [None] * len(inputs)
            for i, (t, g) in enumerate(zip(inputs, grads)):
                rows[i].append(np.zeros(t.numel()) if g is None else np.asarray(g._data, np.float64).reshape(-1))
    return [np.stack(r, axis=0) if r else np.zeros((0, t.numel())) for r, t in zip(rows, inputs)]


def check_grad(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3):
    """Assert leafgrad's Jacobian of ``fn`` matches finite differences (inputs: float64 leaves)."""
    inputs = [t for t in inputs]
    numeric = numerical_jacobian(fn, inputs, eps)
    analytic = analytical_jacobian(fn, inputs)
    for i, (n, a) in enumerate(zip(numeric, analytic)):
        if n.shape != a.shape or not np.allclose(a, n, atol=atol, rtol=rtol, equal_nan=True):
            np.set_printoptions(precision=6, suppress=True, linewidth=150)
            msg = (f'Jacobian mismatch for input {i}:\nanalytical (leafgrad backward):\n{a}\n'
                   f'numerical (central differences):\n{n}')
            print(msg)
            raise AssertionError(msg)
    return True


def check_gradgrad(fn, inputs, eps=1e-6, atol=1e-4, rtol=1e-3, seed=0):
    """Check the second derivatives: the Jacobian of ``inputs -> d<fn(inputs), w>/d inputs``
    (recorded with create_graph=True) against finite differences of the first derivatives."""
    rng = np.random.default_rng(seed)
    with lg.no_grad():
        outs = _outputs(fn(*inputs))
    weights = [lg.tensor(rng.standard_normal(o.shape)) for o in outs]

    def first_grads(*xs):
        with lg.enable_grad():
            return _first_grads(*xs)

    def _first_grads(*xs):
        outs = _outputs(fn(*xs))
        total = None
        for o, w in zip(outs, weights):
            if o.requires_grad:
                with np.errstate(invalid='ignore'):  # -inf outputs times weights of both signs
                    s = (o * w).sum()
                total = s if total is None else total + s
        if total is None:
            return tuple(lg.zeros_like(x) for x in xs)
        grads = lg.autograd.grad(total, xs, create_graph=True, allow_unused=True)
        return tuple(lg.zeros_like(x) if g is None else g for g, x in zip(grads, xs))

    return check_grad(first_grads, inputs, eps, atol, rtol)
