"""prelu, rrelu, glu, bilinear, unfold/fold: ops that modules build on."""
from ... import backend
from ..._arg_parser import Overloads
from ...ops._util import Node, NotImplementedNode, autocast, opmath, record, saved_output, sum_to, wrap_dim, xp, wrap
from ...ops import elementwise as _ew
from ...ops import shape as _shape
from .common import ntuple, dtype_name
from .conv import ConvParams, _cols
from ...ops.inplace import inplace as _run_inplace
from ...ops.linalg import einsum
from ...ops.activation import _DTYPE_LABEL, LEAKY_RELU_INPLACE_NEGATIVE_SLOPE
from ...creation import rand
from ...ops.indexing import index_put_embed
from ..._arg_parser import refuse_arguments


class PreluKernelBackward0(Node):
    """prelu of the input and of the weight viewed to broadcast along the channels (the view
    recorded before it, as PyTorch's prelu records its reshape)."""
    __slots__ = ()
    saved_names = ('self', 'weight')

    def apply(self, grad):
        x, w = self.saved_tensors
        pos = x > 0
        gx = _ew.where(pos, grad, grad * w) if self.next_functions[0][0] is not None else None
        gw = sum_to(_ew.where(pos, 0.0, grad * x), w._data.shape) if self.next_functions[1][0] is not None else None
        return gx, gw



class RreluWithNoiseBackward0(Node):
    """grad times the slope each element was given: 1 where the input was positive."""
    __slots__ = ('lower', 'upper', 'training')
    saved_names = ('self', 'noise', 'lower=lower', 'upper=upper', 'training=training')

    def apply(self, grad):
        noise = self.saved_tensors[1]
        return grad * noise,


class RreluWithNoiseBackward1(RreluWithNoiseBackward0):
    """rrelu_'s node: as PyTorch's, it saves the result (the input is gone); out of training,
    PyTorch's derivative is leaky_relu's of the result, refused for a negative mean slope."""
    __slots__ = ()
    saved_names = ('result', 'noise', 'lower=lower', 'upper=upper', 'training=training')

    def apply(self, grad):
        noise = self.saved_tensors[1]  # (unpacked first: a version error comes before this one)
        if not self.training and (self.lower + self.upper) / 2 < 0:
            raise RuntimeError(LEAKY_RELU_INPLACE_NEGATIVE_SLOPE)
        return grad * noise,


# torch.rrelu and torch.rrelu_ (F.rrelu_ is torch.rrelu_, as in PyTorch): ATen's signature, read
# by PyTorch's parser; F.rrelu calls them with its arguments in that order, so its errors are theirs
_RRELU = '(Tensor input, Number lower = 0.125, Number upper = 0.3333333333333333, bool training = False, ' \
         'leafgrad.Generator? generator = None)'
_RRELU_PARSER = Overloads('rrelu', _RRELU)
_RRELU_INPLACE_PARSER = Overloads('rrelu_', _RRELU)


def _parsed(parser, args, kwargs):
    # (one signature: PyTorch's parser raises its own error, even for too many arguments)
    return parser.function[0].parse(parser.name, args, kwargs, True)


def rrelu(input, lower=1. / 8, upper=1. / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each non-positive element is multiplied by its own slope
    drawn uniformly from [lower, upper] (one float64 draw of the generator per such element, in
    order, as PyTorch's CPU kernel); in evaluation by the mean slope (lower + upper) / 2."""
    return _rrelu_inplace(input, lower, upper, training) if inplace else _rrelu(input, lower, upper, training)


def _rrelu(*args, **kwargs):
    """torch.rrelu(input, lower=1/8, upper=1/3, training=False, generator=None)."""
    return _rrelu_with_noise(**_parsed(_RRELU_PARSER, args, kwargs))


def _rrelu_inplace(*args, **kwargs):
    """torch.rrelu_(input, lower=1/8, upper=1/3, training=False, generator=None), also F.rrelu_."""
    return _rrelu_with_noise(**_parsed(_RRELU_INPLACE_PARSER, args, kwargs), inplace=True)


def _rrelu_with_noise(input, lower, upper, training, generator, inplace=False, node_cls=RreluWithNoiseBackward0):
    lower, upper = float(lower), float(upper)
    if lower > upper:
        raise RuntimeError('Lower bound should be less than or equal to the upper bound')
    if inplace:
        return _run_inplace(input, lambda s: _rrelu_with_noise(s, lower, upper, training, generator,
                                                               node_cls=RreluWithNoiseBackward1))
    x = input._data
    if x.dtype.kind not in 'fV':
        kernel = 'rrelu_with_noise_out_cpu' if training else 'leaky_relu_cpu'  # (eval mode runs leaky_relu)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_DTYPE_LABEL.get(x.dtype.name)}\'')
    work = opmath(x)
    if training:
        negative = work <= 0
        # (on a GPU drawn there by CuPy's generator, or, with a generator=, on the host and copied over)
        draws = rand(int(negative.sum()), dtype=backend.float64, generator=generator,
                     device=backend.device_of(work) if backend.on_gpu(work) else None)._data
        noise = xp.ones(work.shape, dtype=xp.float64, like=work)
        noise[negative] = draws * (upper - lower) + lower
    else:
        noise = xp.where(work > 0, 1, (lower + upper) / 2)
    noise = noise.astype(work.dtype)
    # (contiguous whatever the input's layout: PyTorch's kernel writes a new contiguous tensor)
    out, node = record((work * noise).astype(x.dtype, order='C'), node_cls, (input,))
    if node is not None:
        node.lower, node.upper, node.training = lower, upper, bool(training)
        node.save(saved_output(out) if node_cls is RreluWithNoiseBackward1 else input, wrap(noise.astype(x.dtype)))
    return out


rrelu_ = _rrelu_inplace
rrelu_.__name__ = rrelu_.__qualname__ = 'rrelu_'
_rrelu.__name__ = _rrelu.__qualname__ = 'rrelu'


def prelu(input, weight):
    try:
        if autocast.state.on:
            input, weight = autocast.lower_precision(input, weight)
        x, w = input._data, weight._data
        if w.size != 1:
            if x.ndim < 2:
                raise RuntimeError('Not allow zero-dim input tensor.' if x.ndim == 0 else
                                   f'Mismatch of parameter numbers and input channel size. Found parameter numbers = '
                                   f'{w.size} and channel size = 1.')
            if x.shape[1] != w.size:
                raise RuntimeError(f'Mismatch of parameter numbers and input channel size. Found parameter numbers = '
                                   f'{w.size} and channel size = {x.shape[1]}.')
        shape = (1, w.size) + (1,) * (x.ndim - 2) if w.size != 1 and x.ndim >= 2 else (1,) * max(x.ndim, 1)
        shape = shape if x.ndim else ()
        wb = weight if w.shape == shape else _shape.reshape(weight, shape)  # (PyTorch reshapes only then)
        out, node = record(xp.where(x > 0, x, x * wb._data).astype(x.dtype, copy=False), PreluKernelBackward0,
                           (input, wb))
        if node is not None:
            node.save(input, wb)
        return out
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


class GluBackward0(Node):
    __slots__ = ('dim', 'given_dim')
    saved_names = ('self', 'dim=given_dim:int64')

    def apply(self, grad):
        (x,) = self.saved_tensors
        n = x._data.shape[self.dim] // 2
        a = _shape.narrow(x, self.dim, 0, n)
        b = _shape.narrow(x, self.dim, n, n)
        s = _ew.sigmoid(b)
        ga = grad * s
        gb = grad * a * s * (1 - s)
        shape = x._data.shape
        lead = (slice(None),) * self.dim
        return index_put_embed(ga, shape, lead + (slice(0, n),)) + index_put_embed(gb, shape, lead + (slice(n, 2 * n),)),


def glu(input, dim=-1):
    x = input._data
    if x.ndim == 0:
        raise RuntimeError('glu does not support scalars because halving size must be even')
    d = wrap_dim(dim, x.ndim)
    if x.shape[d] % 2:
        raise RuntimeError(f'Halving dimension must be even, but dimension {d} is size {x.shape[d]}')
    if x.dtype.kind not in 'fV':
        raise NotImplementedError(f'"glu_cpu" not implemented for \'{dtype_name(input)}\'')
    a, b = xp.split(opmath(x), 2, axis=d)  # (bfloat16: in float32, rounded once, as PyTorch's)
    with xp.errstate(over='ignore'):
        out, node = record((a / (1 + xp.exp(-b))).astype(x.dtype, copy=False), GluBackward0, (input,))
    if node is not None:
        node.dim, node.given_dim = d, dim
        node.save(input)
    return out


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1 W_k x2 + b_k, as one einsum (leafgrad ops, so it differentiates)."""
    try:
        if input1._data.shape[:-1] != input2._data.shape[:-1]:
            raise RuntimeError(f'bilinear(): input batch dimensions do not match: got '
                               f'{list(input1._data.shape[:-1])} and '
                               f'{list(input2._data.shape[:-1])}')
        w = weight._data.shape
        if input1._data.shape[-1] != w[1]:
            raise RuntimeError(f'bilinear(): input1 size does not match weight size: got {input1._data.shape[-1]} but '
                               f'expected {w[1]}')
        if input2._data.shape[-1] != w[2]:
            raise RuntimeError(f'bilinear(): input2 size does not match weight size: got {input2._data.shape[-1]} but '
                               f'expected {w[2]}')
        out = einsum('...i,kij,...j->...k', input1, weight, input2)
        return out if bias is None else out + bias
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments()
        raise


# ---- unfold / fold (im2col / col2im as ops) ---------------------------------------------

class Im2ColBackward0(Node):
    __slots__ = ('params', 'k', 'x_shape')

    def apply(self, grad):
        return _fold_op(grad, self.params, self.k, self.x_shape),


class Col2ImBackward0(Node):
    __slots__ = ('params', 'k', 'x_shape')

    def apply(self, grad):
        return _unfold_op(grad, self.params, self.k),


def _unfold_op(t, p, k):
    x = t._data
    out = tuple((x.shape[2 + i] + 2 * p.lo[i] - p.dilation[i] * (k[i] - 1) - 1) // p.stride[i] + 1
                for i in range(2))
    cols = _cols(x, k, p, out)  # (1, C*K, N*L)
    data = xp.ascontiguousarray(xp.swapaxes(cols.reshape(cols.shape[1], x.shape[0], out[0] * out[1]), 0, 1))
    res, node = record(data, Im2ColBackward0, (t,))
    if node is not None:
        node.params, node.k, node.x_shape = p, k, x.shape
    return res


def _fold_op(t, p, k, x_shape):
    n, ck, L = t._data.shape
    c = x_shape[1]
    out = tuple((x_shape[2 + i] + 2 * p.lo[i] - p.dilation[i] * (k[i] - 1) - 1) // p.stride[i] + 1 for i in range(2))
    cols = t._data.reshape((n, c) + tuple(k) + out)
    padded = tuple(x_shape[2 + i] + 2 * p.lo[i] for i in range(2))
    acc = xp.zeros((n, c) + padded, dtype=t._data.dtype, like=t._data)
    # col2im: one slice-add per kernel offset
    for i, j in xp.ndindex(*k):
        di, dj = i * p.dilation[0], j * p.dilation[1]
        acc[:, :, di:di + p.stride[0] * (out[0] - 1) + 1:p.stride[0],
            dj:dj + p.stride[1] * (out[1] - 1) + 1:p.stride[1]] += cols[:, :, i, j]
    data = xp.ascontiguousarray(acc[:, :, p.lo[0]:p.lo[0] + x_shape[2], p.lo[1]:p.lo[1] + x_shape[3]])
    res, node = record(data, Col2ImBackward0, (t,))
    if node is not None:
        node.params, node.k, node.x_shape = p, k, x_shape
    return res


def _im2col_shape_check(shape, k, p):
    """PyTorch's im2col_shape_check, in its order: the kernel, dilation, padding and stride, the
    input (only the batch may be empty), then the number of blocks (at least one each way)."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = k, p.dilation, p.lo, p.stride
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f'kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}')
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f'dilation should be greater than zero, but got dilation_height: {dh} dilation_width: {dw}')
    if ph < 0 or pw < 0:
        raise RuntimeError(f'padding should be non-negative, but got pad_height: {ph} pad_width: {pw}')
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f'stride should be greater than zero, but got stride_height: {sh} stride_width: {sw}')
    if len(shape) not in (3, 4) or not all(shape[1:] if len(shape) == 4 else shape):
        raise RuntimeError('Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero '
                           f'dimensions for input, but got: {list(shape)}')
    h, w = shape[-2:]
    oh, ow = (h + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1, (w + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    if oh < 1 or ow < 1:
        raise RuntimeError(f'Given input with spatial size ({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), '
                           f'padding=({ph}, {pw}), calculated shape of the array of sliding blocks as ({oh}, {ow}), but '
                           'its components must be at least one.')


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    try:
        nd = input._data.ndim
        if nd < 3:  # (PyTorch reads the input's size at dim 2 first)
            raise IndexError(f'Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], '
                             'but got 2)')
        k = ntuple(kernel_size, 2)
        pad = ntuple(padding, 2)
        p = ConvParams(ntuple(stride, 2), pad, pad, ntuple(dilation, 2), 1)
        _im2col_shape_check(input._data.shape, k, p)
        if nd == 3:  # (an unbatched input: the columns of a batch of one)
            return _shape.squeeze(_unfold_op(_shape.unsqueeze(input, 0), p, k), 0)
        return _unfold_op(input, p, k)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('im2col')
        raise


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if input._data.ndim == 2:  # (an unbatched input: the image of a batch of one)
        return _shape.squeeze(fold(_shape.unsqueeze(input, 0), output_size, kernel_size, dilation, padding, stride), 0)
    if input._data.ndim != 3:
        raise RuntimeError('Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero '
                           f'dimensions for input, but got: {list(input._data.shape)}')
    k = ntuple(kernel_size, 2)
    pad = ntuple(padding, 2)
    p = ConvParams(ntuple(stride, 2), pad, pad, ntuple(dilation, 2), 1)
    n, ck, L = input._data.shape
    size = ntuple(output_size, 2)
    blocks = [(size[i] + 2 * pad[i] - p.dilation[i] * (k[i] - 1) - 1) // p.stride[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != L:
        raise RuntimeError(f'Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), dilation='
                           f'({p.dilation[0]}, {p.dilation[1]}), padding=({pad[0]}, {pad[1]}), stride=({p.stride[0]}, '
                           f"{p.stride[1]}), expected size of input's dimension 2 to match the calculated number of "
                           f'sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got '
                           f'input.size(2)={L}.')
    return _fold_op(input, p, k, (n, ck // (k[0] * k[1])) + size)


# ---- pixel_shuffle / pixel_unshuffle ------------------------------------------------------

class PixelShuffleBackward0(Node):
    __slots__ = ('r',)
    saved_names = ('upscale_factor=r',)

    def apply(self, grad):
        return pixel_unshuffle(grad, self.r),


class PixelUnshuffleBackward0(Node):
    __slots__ = ('r',)
    saved_names = ('downscale_factor=r',)

    def apply(self, grad):
        return pixel_shuffle(grad, self.r),


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): a reshape and a transpose (one copy)."""
    x, r = input._data, int(upscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f'pixel_shuffle expects input to have at least 3 dimensions, but got input with {x.ndim} '
                           'dimension(s)')
    c, h, w = x.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f'pixel_shuffle expects its input\'s \'channel\' dimension to be divisible by the square of '
                           f'upscale_factor, but input.size(-3)={c} is not divisible by {r * r}')
    lead = x.shape[:-3]
    y = x.reshape(lead + (c // (r * r), r, r, h, w))
    n = len(lead)
    y = xp.transpose(y, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)).reshape(lead + (c // (r * r), h * r, w * r))
    out, node = record(xp.ascontiguousarray(y), PixelShuffleBackward0, (input,))
    if node is not None:
        node.r = r
    return out


def pixel_unshuffle(input, downscale_factor):
    x, r = input._data, int(downscale_factor)
    if x.ndim < 3:
        raise RuntimeError(f'pixel_unshuffle expects input to have at least 3 dimensions, but got input with {x.ndim} '
                           'dimension(s)')
    c, h, w = x.shape[-3:]
    if h % r or w % r:
        raise RuntimeError(f'pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h}'
                           f' is not divisible by {r}' if h % r else
                           f'pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w}'
                           f' is not divisible by {r}')
    lead = x.shape[:-3]
    n = len(lead)
    y = x.reshape(lead + (c, h // r, r, w // r, r))
    y = xp.transpose(y, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)).reshape(lead + (c * r * r, h // r, w // r))
    out, node = record(xp.ascontiguousarray(y), PixelUnshuffleBackward0, (input,))
    if node is not None:
        node.r = r
    return out


def channel_shuffle(input, groups):
    """(N, g * c, *) -> channel i of group j moved to i * g + j (ChannelShuffleBackward0)."""
    return _shuffled(input, _checked_groups(input, groups), ChannelShuffleBackward0)


def native_channel_shuffle(input, groups):
    """channel_shuffle without a derivative, as PyTorch's (its node refuses backward)."""
    return _shuffled(input, _checked_groups(input, groups), NotImplementedNode)


def _checked_groups(input, groups):
    shape = tuple(input._data.shape)
    if len(shape) <= 2:
        raise RuntimeError(f'channel_shuffle expects input with > 2 dims, but got input with sizes {list(shape)}')
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f'Number of groups to divide channels in must be positive. Value of groups:{groups}')
    c = shape[1]
    if c % groups:
        raise RuntimeError(f'Number of channels must be divisible by groups. Got {c} channels and {groups} groups.')
    return groups


def _shuffled(input, groups, node_class):
    """(N, g * c, *) -> channel i of group j moved to i * g + j, recorded as ``node_class``."""
    shape = input._data.shape
    data = input._data.reshape((shape[0], groups, shape[1] // groups) + shape[2:]).swapaxes(1, 2).reshape(shape)
    out, node = record(xp.ascontiguousarray(data), node_class, (input,))
    if node is not None:
        if node_class is NotImplementedNode:
            node.op_name = 'native_channel_shuffle'
        else:
            node.groups = groups
    return out


class ChannelShuffleBackward0(Node):
    """The gradient shuffled back: channel_shuffle by C // groups."""
    __slots__ = ('groups',)

    def apply(self, grad):
        return channel_shuffle(grad, grad._data.shape[1] // self.groups),
