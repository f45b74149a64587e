"""interpolate (nearest, nearest-exact, (bi/tri)linear, bicubic, area; antialiased bilinear,
bicubic and lanczos).

Every resampling mode is a linear map acting on each spatial dim separately: the op builds one
small (out x in) matrix per dim, exactly as PyTorch computes its source indices and weights, and
applies them with matmuls (see ``pooling._separable``).
"""
import math
import warnings

from ... import backend
from ...ops._util import xp
from .pooling import _separable, _SeparableBackward, _adaptive_avg_poolnd, adaptive_avg_pool1d


class UpsampleNearest1DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleNearest2DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleNearest3DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleNearestExact1DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleNearestExact2DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleLinear1DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleBilinear2DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleTrilinear3DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleBicubic2DBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleBilinear2DAaBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleBicubic2DAaBackward0(_SeparableBackward):
    __slots__ = ()


class UpsampleLanczos2DAaBackward0(_SeparableBackward):
    __slots__ = ()


def _triangle(x):
    return xp.maximum(1 - xp.abs(x), 0.0)


def _keys_cubic(x, a=-0.5):
    x = xp.abs(x)
    return xp.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    xp.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))


def _lanczos3(x):
    return xp.where((x >= -3) & (x < 3), xp.sinc(x) * xp.sinc(x / 3), 0.0)


# mode: (the filter, its support in input pixels at scale 1)
_ANTIALIAS_FILTERS = {'bilinear': (_triangle, 2), 'bicubic': (_keys_cubic, 4), 'lanczos': (_lanczos3, 6)}


def _antialias_matrix(size, out, scale, mode):
    """PyTorch's antialiased taps (Pillow's resampling): when shrinking, the filter is stretched
    by the scale so that every input pixel under it contributes; each output's taps cover
    [center - support, center + support) clipped to the input and are normalised to sum to 1."""
    kernel, width = _ANTIALIAS_FILTERS[mode]
    support = width / 2 * scale if scale >= 1 else width / 2
    invscale = 1 / scale if scale >= 1 else 1.0
    m = xp.zeros((out, size))
    for i in range(out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), size)
        w = kernel((xp.arange(lo, hi) - center + 0.5) * invscale)
        total = w.sum()
        m[i, lo:hi] = w / total if total != 0 else w
    return m


def _cubic_matrix(size, out, scale, align_corners, like=None):
    """PyTorch's bicubic taps: cubic convolution (A = -0.75) over src-1 .. src+2, the indices
    clamped to the edge; the source index is not clamped at 0 (unlike linear). Made where
    ``like`` lives."""
    A = -0.75
    dst = xp.arange(out, dtype=xp.float64, like=like)
    if align_corners:
        src = dst * ((size - 1) / (out - 1)) if out > 1 else dst * 0
    else:
        src = (dst + 0.5) * scale - 0.5
    i0 = xp.floor(src).astype(xp.int64)
    t = src - i0
    c1 = lambda x: ((A + 2) * x - (A + 3)) * x * x + 1  # noqa: E731
    c2 = lambda x: ((A * x - 5 * A) * x + 8 * A) * x - 4 * A  # noqa: E731
    coeffs = [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]
    m = xp.zeros((out, size), like=like)
    rows = xp.arange(out, like=like)
    for j, c in enumerate(coeffs):
        xp.add.at(m, (rows, xp.clip(i0 - 1 + j, 0, size - 1)), c)
    return m


def _nearest_matrix(size, out, scale_factor, exact, like=None):
    """PyTorch's nearest_idx: the same size copies, twice the size halves the index (no float
    error); otherwise floor(dst * scale) in float32, scale = 1/scale_factor (or in/out). Made
    where ``like`` lives."""
    dst = xp.arange(out, like=like)
    if not exact and out == size:
        src = dst
    elif not exact and out == 2 * size:
        src = dst >> 1
    else:
        scale = xp.float32(1.0 / scale_factor) if scale_factor else xp.float32(size) / xp.float32(out)
        pos = (dst.astype(xp.float32) + xp.float32(0.5)) * scale if exact else dst.astype(xp.float32) * scale
        src = xp.minimum(xp.floor(pos).astype(xp.int64), size - 1)
    m = xp.zeros((out, size), like=like)
    m[dst, src] = 1.0
    return m


def _linear_matrix(size, out, scale, align_corners, like=None):
    """PyTorch's linear taps (made where ``like`` lives)."""
    dst = xp.arange(out, dtype=xp.float64, like=like)
    if align_corners:
        src = dst * ((size - 1) / (out - 1)) if out > 1 else dst * 0
    else:
        src = xp.maximum((dst + 0.5) * scale - 0.5, 0.0)
    i0 = xp.minimum(xp.floor(src).astype(xp.int64), size - 1)
    i1 = xp.minimum(i0 + 1, size - 1)
    lam = src - i0
    m = xp.zeros((out, size), like=like)
    rows = xp.arange(out, like=like)
    m[rows, i0] += 1 - lam
    m[rows, i1] += lam
    return m


def interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
                recompute_scale_factor=None, antialias=False):
    try:
        x = input._data
    except AttributeError:  # (PyTorch's Python reads input.dim() first: its error for a non-tensor)
        input.dim()
        raise
    nsp = x.ndim - 2
    linear_modes = {'linear': 1, 'bilinear': 2, 'trilinear': 3, 'bicubic': 2}
    if mode in ('nearest', 'nearest-exact', 'area'):
        if align_corners is not None:
            raise ValueError('align_corners option can only be set with the interpolating modes: '
                             'linear | bilinear | bicubic | trilinear')
    elif mode in linear_modes:
        if nsp != linear_modes[mode]:
            raise NotImplementedError(f'Got {x.ndim}D input, but {mode} mode needs {linear_modes[mode] + 2}D input')
        align_corners = bool(align_corners)
    elif mode != 'lanczos' or nsp != 2:
        raise NotImplementedError(f'Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the '
                                  f'modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact '
                                  f'(got {mode})')
    if nsp < 1 or nsp > 3:
        raise NotImplementedError(f'Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the '
                                  f'modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact '
                                  f'(got {mode})')
    in_size = x.shape[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError('only one of size or scale_factor should be defined' if size is not None else
                         'either size or scale_factor should be defined')
    if size is not None:
        out = tuple(int(s) for s in size) if isinstance(size, (tuple, list)) else (int(size),) * nsp
        if len(out) != nsp:
            raise ValueError(f'Input and output must have the same number of spatial dimensions, but got input with '
                             f'spatial dimensions of {list(in_size)} and output size of {list(out)}. Please provide '
                             'input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.')
        scales = [in_size[i] / max(out[i], 1) for i in range(nsp)]
        factors = [None] * nsp
    else:
        sf = tuple(float(s) for s in scale_factor) if isinstance(scale_factor, (tuple, list)) else \
            (float(scale_factor),) * nsp
        if len(sf) != nsp:
            raise ValueError(f'Input and scale_factor must have the same number of spatial dimensions, but got input '
                             f'with spatial dimensions of {list(in_size)} and scale_factor of shape {list(sf)}. Please '
                             'provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, '
                             '...,sK) format.')
        out = tuple(int(math.floor(in_size[i] * sf[i])) for i in range(nsp))
        scales = [in_size[i] / max(out[i], 1) if recompute_scale_factor else 1.0 / sf[i] for i in range(nsp)]
        factors = [None if recompute_scale_factor else sf[i] for i in range(nsp)]
    if antialias and not (mode in ('bilinear', 'bicubic', 'lanczos') and x.ndim == 4):
        raise ValueError('Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D '
                         'tensor as input')
    if mode == 'lanczos':
        if align_corners:
            raise ValueError('Lanczos mode does not support align_corners=True')
        if not antialias:
            raise ValueError('Lanczos mode requires antialias=True')
    if mode == 'area':  # (PyTorch's: adaptive average pooling, the 1-d one through the 2-d one)
        return adaptive_avg_pool1d(input, out) if nsp == 1 else _adaptive_avg_poolnd(input, out, nsp)
    _check_sizes(in_size, out)
    if x.size == 0 and not math.prod(x.shape[1:]):  # (an empty batch passes; an empty channel dim does not)
        raise RuntimeError(f'Non-empty {x.ndim}D data tensor expected but got a tensor with sizes {list(x.shape)}')
    if mode in ('nearest', 'nearest-exact'):
        exact = mode == 'nearest-exact'
        mats = [_nearest_matrix(in_size[i], out[i], factors[i], exact, x) for i in range(nsp)]
        names = {False: {1: UpsampleNearest1DBackward0, 2: UpsampleNearest2DBackward0, 3: UpsampleNearest3DBackward0},
                 True: {1: UpsampleNearestExact1DBackward0, 2: UpsampleNearestExact2DBackward0,
                        3: UpsampleNearest3DBackward0}}
        cls = names[exact][nsp]
    elif antialias:
        if align_corners:  # (the scale then maps the corners' centres onto each other)
            scales = [(in_size[i] - 1) / (out[i] - 1) if out[i] > 1 else 0.0 for i in range(nsp)]
        mats = [_antialias_matrix(in_size[i], out[i], scales[i], mode) for i in range(nsp)]
        if type(x) is not xp.ndarray and backend.device_of(x).type == 'cuda':
            # built on the host, a row at a time (a Python loop of small slices, each a kernel
            # launch and a sync on a GPU), then copied over once: an (out x in) matrix per dim
            mats = [backend.to_device(m, backend.device_of(x)) for m in mats]
        cls = {'bilinear': UpsampleBilinear2DAaBackward0, 'bicubic': UpsampleBicubic2DAaBackward0,
               'lanczos': UpsampleLanczos2DAaBackward0}[mode]
    elif mode == 'bicubic':
        mats = [_cubic_matrix(in_size[i], out[i], scales[i], align_corners, x) for i in range(nsp)]
        cls = UpsampleBicubic2DBackward0
    else:
        mats = [_linear_matrix(in_size[i], out[i], scales[i], align_corners, x) for i in range(nsp)]
        cls = {1: UpsampleLinear1DBackward0, 2: UpsampleBilinear2DBackward0, 3: UpsampleTrilinear3DBackward0}[nsp]
    return _separable(input, [m.astype(x.dtype) for m in mats], cls)


def _check_sizes(in_size, out):
    if any(o <= 0 for o in out) or any(i <= 0 for i in in_size):
        names = 'DHW'[3 - len(out):]
        fmt = lambda sizes: ', '.join(f'{n}: {v}' for n, v in zip(names, sizes))  # noqa: E731
        raise RuntimeError(f'Input and output sizes should be greater than 0, but got input ({fmt(in_size)})'
                           f'{" and" if len(out) == 1 else ""} output ({fmt(out)})')  # (sic: 1-d's says "and")


def upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


# ---- attention ----------------------------------------------------------------------------

def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn('`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.',
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode='nearest')


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn('`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.',
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)
