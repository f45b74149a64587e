"""affine_grid and grid_sample (2-D).

grid_sample is composed of leafgrad ops: the four corner reads are gathers (whose derivative
scatters, see ``pooling._gather_flat``) weighted by bilinear weights computed from the grid, so
both gradients (input and grid) and their derivatives come from the parts. PyTorch records one
GridSampler2DBackward0 node instead.
"""
import warnings

from ..._warn import user_stacklevel
from ...ops._util import Node, autocast, record, wrap, xp
from ...ops import elementwise as _ew
from ...ops import shape as _shape
from ...ops.linalg import matmul
from .common import const
from .pooling import _gather_flat


def _base_coords(n, align_corners, like=None):
    """The n pixel positions in [-1, 1], made where ``like`` lives."""
    if align_corners:
        if n <= 1:
            return xp.zeros(1, like=like)
        # NumPy's linspace (which takes no like=), step for step: i * step + start, the last one stop
        coords = xp.arange(n, dtype=xp.float64, like=like) * (2.0 / (n - 1)) + -1.0
        coords[-1] = 1.0
        return coords
    return (xp.arange(n, like=like) * 2.0 + 1.0) / n - 1.0


class AffineGridGeneratorBackward0(Node):
    __slots__ = ('base',)

    def apply(self, grad):
        n, h, w, _ = grad._data.shape
        g = _shape.reshape(grad, (n, h * w, 2))
        # theta (N, 2, 3): grid = base @ theta^T, so d theta = g^T @ base
        return matmul(_shape.transpose(g, 1, 2), const(self.base, grad)),


_ALIGN_CORNERS_DEFAULT = ('Default grid_sample and affine_grid behavior has changed to align_corners=False since '
                          '1.3.0. Please specify align_corners=True if the old behavior is desired. See the '
                          'documentation of grid_sample for details.')


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:  # (PyTorch's warning, naming the caller's line)
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=user_stacklevel())
    size = tuple(int(s) for s in size)
    if len(size) != 4:
        if len(size) == 5:
            raise NotImplementedError('affine_grid: 3-D (5-D size) grids are not supported by leafgrad')
        raise NotImplementedError(f'affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, '
                                  f'respectively. Got size {size}.')
    t = theta._data
    if t.ndim != 3 or t.shape[1:] != (2, 3):
        raise ValueError(f'Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. Got '
                         f'{list(t.shape)}.')
    if t.dtype.kind not in 'fV':
        raise ValueError(f'Expected theta to have floating point type, but got {theta.dtype}')
    n, _, h, w = size
    align_corners = bool(align_corners)
    xs, ys = _base_coords(w, align_corners, t), _base_coords(h, align_corners, t)
    base = xp.stack([xp.broadcast_to(xs[None, :], (h, w)), xp.broadcast_to(ys[:, None], (h, w)),
                     xp.ones((h, w), like=t)], axis=-1).reshape(h * w, 3).astype(t.dtype)
    data = xp.matmul(base[None], xp.swapaxes(t, 1, 2)).reshape(n, h, w, 2)
    out, node = record(data, AffineGridGeneratorBackward0, (theta,))
    if node is not None:
        node.base = base
    return out


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflected(coord, size, align_corners):
    """PyTorch's reflect_coordinates: ``coord`` folded back and forth into the image (its
    pixels' centres with align_corners, else their outer edges), as a tensor whose gradient is
    the fold's slope, +1 or -1 (reflect_coordinates_set_grad)."""
    low, high = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
    c = coord._data
    span = high - low
    if span <= 0:
        return coord * 0
    with xp.errstate(invalid='ignore'):
        distance = c - low
        slope = xp.where(distance < 0, -1.0, 1.0)
        distance = xp.abs(distance)
        extra = xp.fmod(distance, span)
        odd = xp.floor(distance / span) % 2 == 1
    folded = xp.where(odd, span - extra + low, extra + low).astype(c.dtype)
    slope = xp.where(odd, -slope, slope).astype(c.dtype)
    return coord * const(slope, coord) + const(folded - slope * c, coord)


def grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None):
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=user_stacklevel())
    if autocast.state.on:
        input, grid = autocast.fp32(input, grid)
    x, g = input._data, grid._data
    if mode == 'bicubic':
        raise NotImplementedError("grid_sample: mode 'bicubic' is not supported by leafgrad")
    if mode not in ('bilinear', 'nearest'):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ('zeros', 'border', 'reflection'):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if x.ndim != 4:
        raise RuntimeError(f'grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got '
                           f'input with sizes {list(x.shape)} and grid with sizes {list(g.shape)}')
    if g.shape[-1] != 2:
        raise RuntimeError(f'grid_sampler(): expected grid to have size 2 in last dimension, but got grid with sizes '
                           f'{list(g.shape)}')
    if g.ndim != 4 or g.shape[0] != x.shape[0]:
        raise RuntimeError(f'grid_sampler(): expected grid and input to have same batch size, but got input with sizes '
                           f'{list(x.shape)} and grid with sizes {list(g.shape)}')
    for i in (2, 3):
        if x.shape[i] == 0:
            raise RuntimeError(f'grid_sampler(): expected input to have non-empty spatial dimensions, but input has '
                               f'sizes {list(x.shape)} with dimension {i} being empty')
    n, c, h, w = x.shape
    ho, wo = g.shape[1:3]
    align_corners = bool(align_corners)
    ix = _unnormalize(_shape.select(grid, -1, 0), w, align_corners)     # (N, Ho, Wo), differentiable
    iy = _unnormalize(_shape.select(grid, -1, 1), h, align_corners)
    if padding_mode == 'reflection':
        ix, iy = _reflected(ix, w, align_corners), _reflected(iy, h, align_corners)
    if padding_mode != 'zeros':
        # clamped coordinates: no gradient where clamped, as PyTorch's clip_coordinates_set_grad
        ix = _ew.where(wrap((ix._data > 0) & (ix._data < w - 1)), ix, const(xp.clip(ix._data, 0, w - 1), ix))
        iy = _ew.where(wrap((iy._data > 0) & (iy._data < h - 1)), iy, const(xp.clip(iy._data, 0, h - 1), iy))

    def read(yi, xi):
        """input at integer positions (N, Ho, Wo), 0 outside: (N, C, Ho, Wo) via a gather."""
        valid = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        flat = xp.where(valid, yi * w + xi, 0).astype(xp.int64)
        idx = wrap(xp.ascontiguousarray(xp.broadcast_to(flat[:, None], (n, c, ho, wo))))
        return _gather_flat(input, idx, 2), valid

    if mode == 'nearest':
        xi, yi = xp.rint(ix._data).astype(xp.int64), xp.rint(iy._data).astype(xp.int64)
        v, valid = read(yi, xi)
        out = v * const(valid[:, None], v)
        # keep the grid in the graph with a zero gradient, as PyTorch's node does
        keep = wrap(xp.ones((n, 1, ho, wo), dtype=bool, like=x))
        return _ew.where(keep, out, _shape.unsqueeze(ix + iy, 1)) if grid.requires_grad else out
    x0, y0 = xp.floor(ix._data), xp.floor(iy._data)
    tx, ty = ix - const(x0, ix), iy - const(y0, iy)
    x0, y0 = x0.astype(xp.int64), y0.astype(xp.int64)
    out = None
    for dy, dx, wgt in ((0, 0, (1 - tx) * (1 - ty)), (0, 1, tx * (1 - ty)), (1, 0, (1 - tx) * ty), (1, 1, tx * ty)):
        v, valid = read(y0 + dy, x0 + dx)
        term = v * _shape.unsqueeze(wgt * const(valid, wgt), 1)
        out = term if out is None else out + term
    return out
