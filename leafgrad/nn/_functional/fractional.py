"""Fractional max pooling (Graham, 2014) in two dimensions, as PyTorch's CPU kernel.

Each (batch, channel) plane has two samples u in [0, 1) (``_random_samples[n, c]``: the first
for the width, the second for the height; drawn by ``rand`` when not given, on PyTorch's random
stream). Along a dimension of input size ``L``, output size ``O`` and pool size ``k`` the
windows start at ``floor((i + u) a) - floor(u a)`` with ``a = (L - k) / (O - 1)``, computed in
the input's dtype, and the last at ``L - k``. Each output is its window's max (a NaN wins,
the last one met), with the flat index of that element in its plane; the derivative scatters the
gradient to those indices (max pooling's, so it differentiates twice).
"""
from ...creation import rand
from ...ops._util import record, wrap, xp
from .common import ntuple
from .pooling import _MaxPoolBackward


class FractionalMaxPool2DBackward0(_MaxPoolBackward):
    __slots__ = ()
    saved_names = ('self', 'result1')


def _starts(sample, size, out, pool):
    """The windows' first positions along one dim, per plane: (planes, out) int64."""
    dtype = sample.dtype
    starts = xp.empty(sample.shape + (out,), dtype=xp.int64)
    if out > 1:
        alpha = dtype.type(size - pool) / dtype.type(out - 1)
        i = xp.arange(out - 1).astype(dtype)
        starts[..., :-1] = (((i + sample[..., None]) * alpha).astype(xp.int64)
                            - (sample * alpha).astype(xp.int64)[..., None])
    if out > 0:
        starts[..., -1] = size - pool
    return starts


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    if output_size is None and output_ratio is None:
        raise ValueError('fractional_max_pool2d requires specifying either an output_size or an output_ratio')
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * 2
        output_size = [int(input.size(-2) * ratio[0]), int(input.size(-1) * ratio[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = rand(n_batch, input.size(-3), 2, dtype=input.dtype, device=input.device)
    kH, kW = ntuple(kernel_size, 2)
    oH, oW = ntuple(output_size, 2)
    x = input._data
    if x.ndim not in (3, 4):
        raise RuntimeError(f'fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(x.shape)}')
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError('fractional_max_pool2d(): Expected input to have non-zero size for non-batch '
                               f'dimensions, but got{list(x.shape)} with dimension {d} being empty.')
    H, W = x.shape[-2:]
    if oH + kH - 1 > H:
        raise RuntimeError(f'fractional_max_pool2d(): pool height {kH} too large relative to input height {H}')
    if oW + kW - 1 > W:
        raise RuntimeError(f'fractional_max_pool2d(): pool width {kW} too large relative to input width {W}')
    samples = _random_samples._data
    batch = x[None] if x.ndim == 3 else x
    N, C = batch.shape[:2]
    if samples.dtype != x.dtype:
        raise RuntimeError('Expect _random_samples to have the same dtype as input')
    if samples.ndim != 3:
        raise RuntimeError(f'Expect _random_samples to have 3 dimensions, got {samples.ndim}')
    if samples.shape[0] < N:
        raise RuntimeError('Expect _random_samples.size(0) no less then input batch size.')
    if samples.shape[1] != C:
        raise RuntimeError('Expect _random_samples.size(1) equals to input channel size.')
    if samples.shape[2] != 2:
        raise RuntimeError(f'Expect _random_samples.size(2) equals to 2, got {samples.shape[2]}.')
    rows = _starts(samples[:N, :, 1], H, oH, kH)[..., :, None] + xp.arange(kH)   # (N, C, oH, kH)
    cols = _starts(samples[:N, :, 0], W, oW, kW)[..., :, None] + xp.arange(kW)   # (N, C, oW, kW)
    n = xp.arange(N)[:, None, None, None, None, None]
    c = xp.arange(C)[None, :, None, None, None, None]
    r = rows[:, :, :, None, :, None]
    q = cols[:, :, None, :, None, :]
    windows = batch[n, c, r, q].reshape(N, C, oH, oW, kH * kW)       # (row-major within the window)
    flat = (r * W + q).reshape(N, C, oH, oW, kH * kW)
    first_max = xp.argmax(windows, axis=-1)
    if windows.dtype.kind in 'fV':  # a NaN wins: the last one met
        nan = xp.isnan(windows)
        last_nan = kH * kW - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        first_max = xp.where(nan.any(axis=-1), last_nan, first_max)
    values = xp.take_along_axis(windows, first_max[..., None], axis=-1)[..., 0]
    indices = xp.take_along_axis(flat, first_max[..., None], axis=-1)[..., 0]
    if x.ndim == 3:
        values, indices = values[0], indices[0]
    result, node = record(xp.ascontiguousarray(values), FractionalMaxPool2DBackward0, (input,))
    indices = wrap(xp.ascontiguousarray(indices))
    if node is not None:
        node.nsp, node.win = 2, None
        node.save(input, indices)
    return result, indices


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """The fractional max pooling of ``input`` (3-D or 4-D); with ``return_indices`` also the flat
    index of each max in its plane."""
    result, indices = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                                         return_indices, _random_samples)
    return (result, indices) if return_indices else result
