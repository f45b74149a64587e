"""Fractional max pooling (Graham, 2014) in two and three dimensions, as PyTorch's CPU kernels.

Each (batch, channel) plane has a sample u in [0, 1) per pooled dim (``_random_samples[n, c]``:
in 2-D the first for the width, the second for the height; in 3-D time, height, width; drawn by
``rand`` when not given, on PyTorch's random stream). Along a dimension of input size ``L``,
output size ``O`` and pool size ``k`` the windows start at ``floor((i + u) a) - floor(u a)``
with ``a = (L - k) / (O - 1)``, computed in the input's dtype, and the last at ``L - k``. Each output is its window's max (a NaN wins,
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
    starts = xp.empty(sample.shape + (out,), dtype=xp.int64, like=sample)
    if out > 1:
        alpha = dtype.type(size - pool) / dtype.type(out - 1)
        i = xp.arange(out - 1, like=sample).astype(dtype)
        starts[..., :-1] = (((i + sample[..., None]) * alpha).astype(xp.int64)
                            - (sample * alpha).astype(xp.int64)[..., None])
    if out > 0:
        starts[..., -1] = size - pool
    return starts


class FractionalMaxPool3DBackward0(_MaxPoolBackward):
    __slots__ = ()
    saved_names = ('self', 'result1')


# per number of pooled dims: the name, its dims' words in messages, the node, and which sample
# each dim reads (2-D: the first sample is the width's; 3-D: in the dims' order)
_KINDS = {2: ('fractional_max_pool2d', ('height', 'width'), FractionalMaxPool2DBackward0, (1, 0)),
          3: ('fractional_max_pool3d', ('time', 'height', 'width'), FractionalMaxPool3DBackward0, (0, 1, 2))}


def _sizes(value, nsp, name, what):
    """kernel_size or output_size as nsp ints: one int for all, or one per dim (PyTorch's error)."""
    sizes = ntuple(value, nsp)
    if len(sizes) != nsp:
        count = 'Ints' if nsp == 2 else 'three Ints'
        raise RuntimeError(f'{name}: {what} must either be a single Int or tuple of {count}')
    return sizes


def _fractional_max_pool(input, nsp, kernel_size, output_size, output_ratio, _random_samples):
    name, words, node_cls, sample_of = _KINDS[nsp]
    if output_size is None and output_ratio is None:
        raise ValueError(f'{name} requires specifying either an output_size or an output_ratio')
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nsp
        output_size = [int(input.size(d - nsp) * ratio[d]) for d in range(nsp)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nsp + 1 else input.size(0)
        _random_samples = rand(n_batch, input.size(-nsp - 1), nsp, dtype=input.dtype, device=input.device)
    kernel = _sizes(kernel_size, nsp, name, 'kernel_size')
    outs = _sizes(output_size, nsp, name, 'output_size')
    x = input._data
    where = name + ('()' if nsp == 2 else '_out()')
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f'{where}: Expected {nsp + 1}D or {nsp + 2}D tensor, but got: {list(x.shape)}')
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(f'{where}: Expected input to have non-zero size for non-batch dimensions, but '
                               f'got{list(x.shape)} with dimension {d} being empty.')
    spatial = x.shape[-nsp:]
    for d in range(nsp):  # (2-D allows a last window that ends at the edge, 3-D does not)
        if outs[d] + kernel[d] - 1 > spatial[d] - (nsp == 3):
            raise RuntimeError(f'{where}: pool {words[d]} {kernel[d]} too large relative to input {words[d]} '
                               f'{spatial[d]}')
    samples = _random_samples._data
    batch = x[None] if x.ndim == nsp + 1 else x
    N, C = batch.shape[:2]
    if samples.dtype != x.dtype:
        raise RuntimeError('Expect _random_samples to have the same dtype as input')
    if samples.ndim != 3:
        raise RuntimeError(f'Expect _random_samples to have 3 dimensions, got {samples.ndim}')
    if samples.shape[0] < N:
        raise RuntimeError('Expect _random_samples.size(0) no less then input batch size.')
    if samples.shape[1] != C:
        raise RuntimeError('Expect _random_samples.size(1) equals to input channel size.')
    if samples.shape[2] != nsp:
        raise RuntimeError(f'Expect _random_samples.size(2) equals to {nsp}; got {samples.shape[2]}.')
    values, indices = _window_maxima(batch, samples[:N], kernel, outs, sample_of)
    if x.ndim == nsp + 1:
        values, indices = values[0], indices[0]
    result, node = record(xp.ascontiguousarray(values), node_cls, (input,))
    indices = wrap(xp.ascontiguousarray(indices))
    if node is not None:
        node.nsp, node.win = nsp, None
        node.save(input, indices)
    return result, indices


def _window_maxima(batch, samples, kernel, outs, sample_of):
    """Each window's max over (N, C, *spatial) ``batch`` and its flat index in its plane, as
    PyTorch's loop finds it: the first max in row-major order within the window, a NaN winning
    (the last one met); an empty window gives -inf at its first position."""
    N, C = batch.shape[:2]
    spatial = batch.shape[2:]
    nsp = len(spatial)
    strides = [int(xp.prod(spatial[d + 1:], dtype=xp.int64)) for d in range(nsp)]
    origin = xp.zeros((N, C) + (1,) * nsp, dtype=xp.int64, like=batch)   # each window's first element
    offset = xp.zeros((1,) * nsp, dtype=xp.int64, like=batch)             # the elements' offsets within a window
    for d in range(nsp):
        starts = _starts(samples[:, :, sample_of[d]], spatial[d], outs[d], kernel[d])  # (N, C, out)
        shape = [N, C] + [1] * nsp
        shape[2 + d] = outs[d]
        origin = origin + starts.reshape(shape) * strides[d]
        shape = [1] * nsp
        shape[d] = kernel[d]
        offset = offset + xp.arange(kernel[d], like=batch).reshape(shape) * strides[d]
    origin = xp.broadcast_to(origin, (N, C) + tuple(outs))
    size = offset.size
    if size == 0:  # (no element looked at)
        return xp.full(origin.shape, -xp.inf, dtype=batch.dtype, like=batch), origin
    flat = origin[(...,) + (None,)] + offset.reshape(-1)                 # (N, C, *outs, size)
    windows = xp.take_along_axis(batch.reshape(N, C, -1), flat.reshape(N, C, -1), axis=2).reshape(flat.shape)
    first_max = xp.argmax(windows, axis=-1)
    if windows.dtype.kind in 'fV':  # a NaN wins: the last one met
        nan = xp.isnan(windows)
        last_nan = size - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        first_max = xp.where(nan.any(axis=-1), last_nan, first_max)
    values = xp.take_along_axis(windows, first_max[..., None], axis=-1)[..., 0]
    indices = xp.take_along_axis(flat, first_max[..., None], axis=-1)[..., 0]
    return values, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """The fractional max pooling of ``input`` (3-D or 4-D); with ``return_indices`` also the flat
    index of each max in its plane."""
    result, indices = _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, _random_samples)
    return (result, indices) if return_indices else result


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """The fractional max pooling of ``input`` (4-D or 5-D) over 3-D windows; with
    ``return_indices`` also the flat index of each max in its volume."""
    result, indices = _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, _random_samples)
    return (result, indices) if return_indices else result
