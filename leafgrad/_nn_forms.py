"""The ``torch.<name>`` forms of ``nn.functional`` ops that programs call directly, with PyTorch's
own signatures for them (ATen's, not ``F``'s: ``torch.dropout(input, p, train)`` has no defaults,
``torch.embedding`` takes the weight first, ``torch.batch_norm`` its arguments in ATen's order,
a loss its reduction as ATen's int: 0 none, 1 mean, 2 sum, and none unless told: PyTorch's parser
reads ATen's default, at::Reduction::Mean, as 0). Each calls ``nn.functional``, which
records what PyTorch records. Loaded when one of them is first read (``leafgrad.__getattr__``).
Where PyTorch's ``F.<name>`` is ``torch.<name>`` itself (conv2d, pixel_shuffle ...), leafgrad's
is too: those are taken from ``nn.functional`` as they are (``SAME``).
"""
import functools
import inspect
import warnings

from ._arg_parser import missing_message
from .nn import functional as F
from .nn._functional.basic import _dropout
from .nn._functional.extra import _rrelu as rrelu  # noqa: F401 (torch.rrelu: ATen's, with generator=)
from .nn._functional.recurrent import gru_step, lstm_step, rnn_step
from .tensor import Tensor

# the names whose torch form is nn.functional's function itself, as in PyTorch
SAME = ('conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d', 'avg_pool1d',
        'adaptive_avg_pool1d', 'cosine_similarity', 'pairwise_distance', 'pixel_shuffle', 'pixel_unshuffle', 'prelu',
        'bilinear', 'channel_shuffle', 'native_channel_shuffle', 'rrelu_')

_REDUCTIONS = {0: 'none', 1: 'mean', 2: 'sum'}


def _reduction(name, reduction, position):
    if not isinstance(reduction, int) or isinstance(reduction, bool):
        raise TypeError(f"{name}(): argument 'reduction' (position {position}) must be int, not "
                        f'{type(reduction).__name__}')
    if reduction not in _REDUCTIONS:
        raise ValueError(f'{reduction} is not a valid value for reduction')
    return _REDUCTIONS[reduction]


def _aten(fn):
    """``fn`` refusing missing required arguments with PyTorch's parser's words."""
    parameters = inspect.signature(fn).parameters.values()
    required = [p.name for p in parameters if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if len(args) < len(required):
            missing = [p for p in required[len(args):] if p not in kwargs]
            if missing:
                raise TypeError(missing_message(fn.__name__, missing))
        return fn(*args, **kwargs)
    return checked


def _check_probability(p):
    """ATen's check of a dropout's ``p`` (F's raises ValueError), in training or not."""
    if not 0 <= p <= 1:
        raise RuntimeError(f'dropout probability has to be between 0 and 1, but got {p}')


@_aten
def dropout(input, p, train):
    _check_probability(p)
    return F.dropout(input, p, train)


@_aten
def alpha_dropout(input, p, train):
    _check_probability(p)
    return F.alpha_dropout(input, p, train)


@_aten
def feature_alpha_dropout(input, p, train):
    _check_probability(p)
    return F.feature_alpha_dropout(input, p, train)


@_aten
def dropout_(input, p, train):
    _check_probability(p)
    return F.dropout(input, p, train, inplace=True)


@_aten
def alpha_dropout_(input, p, train):
    _check_probability(p)
    return F.alpha_dropout(input, p, train, inplace=True)


@_aten
def feature_dropout(input, p, train):
    """Dropout of whole features: one draw per (sample, channel), the first two dims."""
    _check_probability(p)
    return _dropout(input, p, train, False, feature=True)


@_aten
def feature_dropout_(input, p, train):
    _check_probability(p)
    return _dropout(input, p, train, True, feature=True)


@_aten
def feature_alpha_dropout_(input, p, train):
    _check_probability(p)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


@_aten
def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(values, indices), as ATen's."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


@_aten
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's embedding: the weight first; a negative ``padding_idx`` is none."""
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


@_aten
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


@_aten
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@_aten
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


@_aten
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


@_aten
def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


@_aten
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


@_aten
def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


@_aten
def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


@_aten
def adaptive_max_pool1d(input, output_size):
    """(values, indices), always, as ATen's."""
    return F.adaptive_max_pool1d(input, output_size, True)


@_aten
def constant_pad_nd(input, pad, value=0):
    return F.pad(input, pad, 'constant', value)


@_aten
def kl_div(input, target, reduction=0, *, log_target=False):
    """ATen's kl_div: its mean (reduction=1) is over every element, without F's warning about it."""
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', "reduction: 'mean' divides the total loss")
        return F.kl_div(input, target, reduction=_reduction('kl_div', reduction, 3), log_target=log_target)


@_aten
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction('binary_cross_entropy_with_logits', reduction, 5),
                                              pos_weight=pos_weight)


@_aten
def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction('hinge_embedding_loss', reduction, 4))


@_aten
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction('margin_ranking_loss', reduction, 5))


@_aten
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction('cosine_embedding_loss', reduction, 5))


@_aten
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction('triplet_margin_loss', reduction, 8))


@_aten
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction('poisson_nll_loss', reduction, 6))



# ---- ATen's single steps of the recurrent layers (nn.RNNCell, LSTMCell, GRUCell call these) -------

def _cell_checks(name, input, hx, w_ih, w_hh, chunks):
    """ATen's checks of a cell's arguments, in its order; returns the hidden states."""
    hs = tuple(hx) if chunks == 4 and isinstance(hx, (tuple, list)) else hx
    for position, (arg, value) in enumerate((('input', input), ('hx', hx), ('w_ih', w_ih), ('w_hh', w_hh)), 1):
        if arg == 'hx' and chunks == 4:
            if not isinstance(value, (tuple, list)) or not all(isinstance(h, Tensor) for h in value):
                raise TypeError(f"{name}(): argument 'hx' (position 2) must be tuple of Tensors, not "
                                f'{type(value).__name__}')
        elif not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                            f'{type(value).__name__}')
    if chunks == 4 and len(hs) != 2:
        raise RuntimeError('lstm_cell expects two hidden states')
    hidden_size = w_hh.size(1)
    for label, w in (('weight_ih', w_ih), ('weight_hh', w_hh)):
        if w.size(0) != chunks * hidden_size:
            raise RuntimeError(f'{label} first dim must be {chunks} * hidden_size = {chunks * hidden_size}, but got '
                               f'{w.size(0)}')
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f'input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}')
    for i, h in enumerate(hs if chunks == 4 else (hs,)):
        if input.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size {h.size(0)}")
        if h.size(1) != hidden_size:
            raise RuntimeError(f'hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected {hidden_size}')
    return hs


@_aten
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN: tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    hx = _cell_checks('rnn_tanh_cell', input, hx, w_ih, w_hh, 1)
    return rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)


@_aten
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN: relu(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    hx = _cell_checks('rnn_relu_cell', input, hx, w_ih, w_hh, 1)
    return rnn_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh, relu=True)


@_aten
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an LSTM: (h', c') from ``hx`` = (h, c), the gates in the order i, f, g, o."""
    hx = _cell_checks('lstm_cell', input, hx, w_ih, w_hh, 4)
    return lstm_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)


@_aten
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of a GRU, the gates in the order r, z, n."""
    hx = _cell_checks('gru_cell', input, hx, w_ih, w_hh, 3)
    return gru_step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)


NAMES = SAME + ('rrelu',) + tuple(name for name, value in list(globals().items())
                                  if callable(value) and getattr(value, '__wrapped__', None) is not None)
