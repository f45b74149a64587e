"""Max pooling over non-overlapping windows (stride == kernel, no padding, dilation 1), in
NumPy alone; pooling.py records it as the usual MaxPool*DWithIndicesBackward0 op.

The window max is reduced one kernel axis at a time, the last first: along an axis, the k
slices x[..., j::k] (every window's j-th element) meet in a running np.maximum, and a boolean
(or small int) ``sel`` per axis records which slice won. Reducing the last axis first makes the
winner the first max in row-major window order, PyTorch's rule for ties. Every step is a
whole-array ufunc with long inner loops (no argmax over short rows, no int64 index
arithmetic); the flat indices are built only when someone asks for them.
"""
from ...ops._util import xp


class Windows:
    """Where each window's max is: ``sels[a]`` for kernel axis a (None where k[a] == 1),
    shaped as the array that axis was reduced in (axes before a not yet reduced); ``like``: the
    input, whose device the flat indices are made on."""
    __slots__ = ('k', 'out', 'sels', 'x_shape', 'like')


def window_max(x, k, out):
    """(values, Windows) of non-overlapping max pooling of (N, C, *S) x, or None when a
    window holds NaN (PyTorch's NaN rule, a later NaN wins, is the general loop's)."""
    nsp = len(k)
    sels = [None] * nsp
    m = x[(slice(None),) * 2 + tuple(slice(0, out[a] * k[a]) for a in range(nsp))]  # whole windows
    for a in reversed(range(nsp)):
        if k[a] == 1:
            continue
        if a == nsp - 1:
            # one copy sorts the k columns of every window apart, and the compares below read
            # them at unit stride (several times faster than at stride k); where the windows
            # leave a remainder (m a cropped view), making m contiguous first still pays
            # (a (64, 16, 11, 11) input in 2x2 windows: 25% less time)
            m = xp.ascontiguousarray(m)
            split = m.reshape(-1, k[a]).T.copy()
            parts = [split[j].reshape(m.shape[:-1] + (out[a],)) for j in range(k[a])]
        else:
            parts = [m[(slice(None),) * (2 + a) + (slice(j, None, k[a]),)] for j in range(k[a])]
        best, sel = parts[0], None
        for j in range(1, k[a]):
            v = parts[j]
            gt = v > best  # a later element wins only if greater: the first max wins ties
            # (v, best): on ties NumPy's maximum returns its second operand, the earlier one
            # (all that can differ is the sign of a zero); it also propagates NaN, caught below
            best = xp.maximum(v, best)
            if k[a] == 2:
                sel = gt
            else:
                sel = xp.where(gt, xp.int16(j), xp.int16(0) if sel is None else sel)
        sels[a], m = sel, best
    if m.dtype.kind in 'fV' and xp.isnan(m).any():
        return None
    win = Windows()
    win.k, win.out, win.sels, win.x_shape, win.like = k, out, sels, x.shape, x
    return xp.ascontiguousarray(m), win


def window_scatter(g, win):
    """Zeros of the input's shape with g at each window's max: the reduction undone axis by
    axis, the first axis first (g * sel, and g - that for the other slice of a pair)."""
    k, out = win.k, win.out
    d = g
    last = max([a for a in range(len(k)) if win.sels[a] is not None], default=None)
    full = None
    for a in range(len(k)):
        sel = win.sels[a]
        if sel is None:
            continue
        ax = 2 + a
        shape = d.shape[:ax] + (out[a] * k[a],) + d.shape[ax + 1:]
        if a == last and shape != win.x_shape:
            # the last axis undone straight into the input-shaped zeros (rows/columns past the
            # last window stay 0): no copy of the whole gradient into it afterwards
            full = xp.zeros(win.x_shape, dtype=g.dtype, like=g)
            e = full[tuple(slice(0, s) for s in shape)]
        else:
            e = xp.empty(shape, dtype=g.dtype, like=g)
        part = [e[(slice(None),) * ax + (slice(j, None, k[a]),)] for j in range(k[a])]
        if sel.dtype == bool:
            xp.multiply(d, sel, out=part[1])
            xp.subtract(d, part[1], out=part[0])  # exact: d is finite here
        else:
            for j in range(k[a]):
                xp.multiply(d, sel == j, out=part[j])
        d = e
    if full is not None:
        return full
    if d.shape == win.x_shape:
        return d
    full = xp.zeros(win.x_shape, dtype=g.dtype, like=g)  # rows/columns past the last window (k == 1 axes only)
    full[tuple(slice(0, s) for s in d.shape)] = d
    return full


def window_flat(win):
    """PyTorch's flat spatial indices (into each input plane) of the window maxima."""
    k, out, size = win.k, win.out, win.x_shape[2:]
    shape = win.x_shape[:2] + tuple(out)
    like = win.like
    if type(like) is xp.ndarray:  # (xp.ogrid makes NumPy arrays: on a GPU, aranges there)
        grids = list(xp.ogrid[tuple(slice(0, s) for s in shape)])
    else:
        grids = [xp.arange(s, like=like).reshape((1,) * i + (s,) + (1,) * (len(shape) - 1 - i))
                 for i, s in enumerate(shape)]
    pos = []
    for a in range(len(k)):
        sel = win.sels[a]
        # axis a was reduced before the axes above it: look its sel up at their winners
        off = 0 if sel is None else sel[tuple(grids[:2] + pos + grids[2 + a:])].astype(xp.int64)
        pos.append(grids[2 + a] * k[a] + off)
    flat = 0
    for a in range(len(k)):
        flat = flat * size[a] + pos[a]
    return xp.broadcast_to(flat, win.x_shape[:2] + tuple(out)).astype(xp.int64)
