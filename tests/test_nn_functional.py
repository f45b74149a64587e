"""nn.functional against torch: values, dtypes, node names, gradients, second derivatives,
float64 finite differences (gradcheck's fast mode, tests/optable.py), and errors (type and message)."""
import warnings

import numpy as np
import pytest

import leafgrad as lg
from optable import check_fast, needs_torch, torch

if torch is not None:  # (without the oracle only the finite differences run)
    from oracle import raises_like, same_message

LF = lg.nn.functional
TF = torch.nn.functional if torch is not None else None


# ---- input generators: (make(rng) -> array, requires_grad) ------------------------------------

def normal(*shape):
    return (lambda rng: rng.standard_normal(shape)), True


def uniform(lo, hi, *shape, grad=True):
    return (lambda rng: rng.uniform(lo, hi, shape)), grad


def ints(high, *shape, low=0):
    return (lambda rng: rng.integers(low, high, shape)), False


def fixed(value, grad=False):
    return (lambda rng: np.asarray(value)), grad


def probs(*shape):
    def make(rng):
        e = np.exp(rng.standard_normal(shape))
        return e / e.sum(1, keepdims=True)
    return make, False


def spaced(*shape):
    """Distinct values at least 0.05 apart (max pooling without near-ties)."""
    def make(rng):
        n = int(np.prod(shape))
        return (rng.permutation(n) * 0.05 - n * 0.025).reshape(shape)
    return make, True


def case(name, fn, gens, twice=True, node=True, fd=True):
    return pytest.param(fn, gens, twice, node, fd, id=name)


def bn_train(T, F, x, w, b):
    rm = T.zeros(x.shape[1], dtype=x.dtype)
    rv = T.ones(x.shape[1], dtype=x.dtype)
    return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)


def bn_eval(T, F, x, w, b):
    rm = T.tensor(np.linspace(-0.5, 0.5, x.shape[1]), dtype=x.dtype)
    rv = T.tensor(np.linspace(0.5, 2.0, x.shape[1]), dtype=x.dtype)
    return F.batch_norm(x, rm, rv, w, b, training=False)


CASES = [
    # softmax family
    case('softmax', lambda T, F, x: F.softmax(x, dim=1), [normal(3, 5)]),
    case('softmax_dim0_3d', lambda T, F, x: F.softmax(x, 0), [normal(2, 3, 4)]),
    case('softmax_dtype', lambda T, F, x: F.softmax(x, -1, dtype=T.float64), [normal(2, 4)], node=False),
    case('log_softmax', lambda T, F, x: F.log_softmax(x, dim=-1), [normal(3, 5)]),
    case('log_softmax_large', lambda T, F, x: F.log_softmax(x * 100, dim=1), [normal(3, 5)]),
    case('softmin', lambda T, F, x: F.softmin(x, 1), [normal(3, 4)]),
    # losses
    case('cross_entropy', lambda T, F, x, t: F.cross_entropy(x, t), [normal(4, 5), ints(5, 4)]),
    case('cross_entropy_weight', lambda T, F, x, t, w: F.cross_entropy(x, t, weight=w),
         [normal(4, 5), ints(5, 4), uniform(0.5, 2, 5, grad=False)]),
    case('cross_entropy_ignore', lambda T, F, x, t: F.cross_entropy(x, t, ignore_index=2),
         [normal(6, 3), fixed([0, 2, 1, 2, 1, 0])]),
    case('cross_entropy_smoothing', lambda T, F, x, t: F.cross_entropy(x, t, label_smoothing=0.2),
         [normal(4, 5), ints(5, 4)]),
    case('cross_entropy_smoothing_weight_ignore',
         lambda T, F, x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=0, label_smoothing=0.1),
         [normal(6, 3), fixed([0, 2, 1, 2, 1, 0]), uniform(0.5, 2, 3, grad=False)]),
    case('cross_entropy_sum', lambda T, F, x, t: F.cross_entropy(x, t, reduction='sum'), [normal(4, 5), ints(5, 4)]),
    case('cross_entropy_none', lambda T, F, x, t: F.cross_entropy(x, t, reduction='none'),
         [normal(4, 5), ints(5, 4)]),
    case('cross_entropy_probs', lambda T, F, x, p: F.cross_entropy(x, p), [normal(4, 5), probs(4, 5)], node=False),
    case('cross_entropy_probs_smoothing_none',
         lambda T, F, x, p: F.cross_entropy(x, p, label_smoothing=0.3, reduction='none'),
         [normal(4, 5), probs(4, 5)]),
    case('cross_entropy_spatial', lambda T, F, x, t: F.cross_entropy(x, t), [normal(2, 3, 4, 5), ints(3, 2, 4, 5)]),
    case('cross_entropy_unbatched', lambda T, F, x, t: F.cross_entropy(x, t), [normal(5), fixed(3)]),
    case('nll_loss', lambda T, F, x, t: F.nll_loss(x, t), [normal(4, 5), ints(5, 4)]),
    case('nll_loss_weight_none', lambda T, F, x, t, w: F.nll_loss(x, t, w, reduction='none'),
         [normal(4, 5), ints(5, 4), uniform(0.5, 2, 5, grad=False)]),
    case('nll_loss_3d', lambda T, F, x, t: F.nll_loss(x, t, reduction='sum'), [normal(2, 3, 4), ints(3, 2, 4)]),
    case('mse_loss', lambda T, F, x, y: F.mse_loss(x, y), [normal(3, 4), normal(3, 4)]),
    case('mse_loss_sum', lambda T, F, x, y: F.mse_loss(x, y, reduction='sum'), [normal(3, 4), normal(3, 4)]),
    case('mse_loss_none', lambda T, F, x, y: F.mse_loss(x, y, reduction='none'), [normal(3, 4), normal(3, 4)]),
    case('l1_loss', lambda T, F, x, y: F.l1_loss(x, y), [normal(3, 4), normal(3, 4)]),
    case('l1_loss_none', lambda T, F, x, y: F.l1_loss(x, y, reduction='none'), [normal(3, 4), normal(3, 4)]),
    case('smooth_l1_loss', lambda T, F, x, y: F.smooth_l1_loss(x, y, beta=0.5), [normal(3, 4), normal(3, 4)]),
    case('smooth_l1_loss_none', lambda T, F, x, y: F.smooth_l1_loss(x, y, reduction='none'),
         [normal(3, 4), normal(3, 4)]),
    case('huber_loss', lambda T, F, x, y: F.huber_loss(x, y, delta=0.7), [normal(3, 4), normal(3, 4)]),
    case('huber_loss_sum', lambda T, F, x, y: F.huber_loss(x, y, reduction='sum'), [normal(3, 4), normal(3, 4)]),
    case('binary_cross_entropy', lambda T, F, x, y: F.binary_cross_entropy(x, y),
         [uniform(0.05, 0.95, 3, 4), uniform(0, 1, 3, 4)]),
    case('binary_cross_entropy_weight_none', lambda T, F, x, y, w: F.binary_cross_entropy(x, y, w, reduction='none'),
         [uniform(0.05, 0.95, 3, 4), uniform(0, 1, 3, 4, grad=False), uniform(0.5, 2, 4, grad=False)]),
    case('bce_with_logits', lambda T, F, x, y: F.binary_cross_entropy_with_logits(x, y),
         [normal(3, 4), uniform(0, 1, 3, 4)]),
    case('bce_with_logits_pos_weight',
         lambda T, F, x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, w, pos_weight=pw, reduction='sum'),
         [normal(3, 4), uniform(0, 1, 3, 4), uniform(0.5, 2, 4, grad=False), uniform(0.5, 3, 4, grad=False)]),
    case('kl_div_batchmean', lambda T, F, x, y: F.kl_div(x, y, reduction='batchmean'),
         [normal(3, 4), uniform(0.05, 1, 3, 4)]),
    case('kl_div_log_target', lambda T, F, x, y: F.kl_div(x, y, reduction='sum', log_target=True),
         [normal(3, 4), normal(3, 4)]),
    case('kl_div_none', lambda T, F, x, y: F.kl_div(x, y, reduction='none'), [normal(3, 4), uniform(0.05, 1, 3, 4)]),
    case('poisson_nll_loss', lambda T, F, x, y: F.poisson_nll_loss(x, y), [normal(3, 4), uniform(0, 3, 3, 4)],
         node=False),
    case('poisson_nll_loss_full', lambda T, F, x, y: F.poisson_nll_loss(x, y, log_input=False, full=True),
         [uniform(0.5, 2, 3, 4), uniform(0, 3, 3, 4)], node=False),
    case('gaussian_nll_loss', lambda T, F, x, y, v: F.gaussian_nll_loss(x, y, v), [normal(3, 4), normal(3, 4),
                                                                               uniform(0.5, 2, 3)], node=False),
    case('margin_ranking_loss', lambda T, F, a, b, y: F.margin_ranking_loss(a, b, y, margin=0.3),
         [normal(5), normal(5), fixed([1.0, -1.0, 1.0, 1.0, -1.0])]),
    case('hinge_embedding_loss', lambda T, F, x, y: F.hinge_embedding_loss(x, y, margin=0.8),
         [normal(6), fixed([1.0, -1.0, 1.0, -1.0, -1.0, 1.0])], node=False),
    case('soft_margin_loss', lambda T, F, x, y: F.soft_margin_loss(x, y), [normal(6), fixed([1.0, -1.0] * 3)]),
    case('soft_margin_loss_int_target', lambda T, F, x, y: F.soft_margin_loss(x, y, reduction='none'),
         [normal(2, 3), fixed([[1, -1, 1], [-1, -1, 1]])]),
    case('multilabel_soft_margin_loss', lambda T, F, x, y: F.multilabel_soft_margin_loss(x, y),
         [normal(3, 4), fixed(np.eye(3, 4))], node=False),
    # PyTorch has no second derivative of these two (leafgrad's composition has one)
    case('multi_margin_loss', lambda T, F, x, t: F.multi_margin_loss(x, t), [normal(4, 5), fixed([0, 3, 1, 4])],
         node=False, twice=False),
    case('multi_margin_loss_p2_weight', lambda T, F, x, t, w: F.multi_margin_loss(x, t, p=2, margin=0.7, weight=w,
                                                                                  reduction='none'),
         [normal(4, 5), fixed([0, 3, 1, 4]), uniform(0.5, 2, 5, grad=False)], node=False, twice=False),
    case('multilabel_margin_loss', lambda T, F, x, t: F.multilabel_margin_loss(x, t),
         [normal(3, 4), fixed([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])], node=False, twice=False),
    case('cosine_embedding_loss', lambda T, F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.1),
         [normal(4, 3), normal(4, 3), fixed([1.0, -1.0, -1.0, 1.0])], node=False),
    case('triplet_margin_loss', lambda T, F, a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
         [normal(4, 3), normal(4, 3), normal(4, 3)], node=False),
    # vectors, embeddings
    case('normalize', lambda T, F, x: F.normalize(x, dim=1), [normal(3, 4)]),
    case('normalize_p1', lambda T, F, x: F.normalize(x, p=1, dim=0), [normal(3, 4)]),
    case('cosine_similarity', lambda T, F, x, y: F.cosine_similarity(x, y), [normal(3, 4), normal(3, 4)]),
    case('cosine_similarity_broadcast', lambda T, F, x, y: F.cosine_similarity(x, y, dim=-1),
         [normal(2, 3, 4), normal(3, 4)]),
    case('pairwise_distance', lambda T, F, x, y: F.pairwise_distance(x, y), [normal(3, 4), normal(3, 4)], node=False),
    case('pairwise_distance_p1_keepdim', lambda T, F, x, y: F.pairwise_distance(x, y, p=1.0, keepdim=True),
         [normal(3, 4), normal(4)], node=False),
    case('embedding', lambda T, F, i, w: F.embedding(i, w), [ints(5, 2, 3), normal(5, 3)]),
    case('embedding_padding', lambda T, F, i, w: F.embedding(i, w, padding_idx=1),
         [fixed([[1, 2, 1], [0, 4, 2]]), normal(5, 3)], fd=False),  # the padding row gets no gradient
    case('embedding_bag_mean', lambda T, F, i, w, o: F.embedding_bag(i, w, o),
         [fixed([1, 2, 4, 5, 4, 3, 2, 9]), normal(10, 3), fixed([0, 0, 4])]),
    case('embedding_bag_sum_2d_padding', lambda T, F, i, w: F.embedding_bag(i, w, mode='sum', padding_idx=2),
         [fixed([[1, 2, 4], [2, 2, 0]]), normal(5, 3)], fd=False),
    case('embedding_bag_per_sample', lambda T, F, i, w, o, p: F.embedding_bag(
        i, w, o, mode='sum', per_sample_weights=p, include_last_offset=True),
        [fixed([1, 2, 4, 1, 3]), normal(6, 2), fixed([0, 2, 5]), normal(5)], twice=False),  # torch: no 2nd
    # normalization
    case('layer_norm', lambda T, F, x, w, b: F.layer_norm(x, (4,), w, b), [normal(3, 4), normal(4), normal(4)]),
    case('layer_norm_2d_plain', lambda T, F, x: F.layer_norm(x, (3, 4)), [normal(2, 3, 4)]),
    case('batch_norm_train', bn_train, [normal(4, 3, 2), normal(3), normal(3)]),
    case('batch_norm_eval', bn_eval, [normal(4, 3, 2, 2), normal(3), normal(3)]),
    case('batch_norm_no_running', lambda T, F, x: F.batch_norm(x, None, None, training=True), [normal(4, 3)]),
    case('group_norm', lambda T, F, x, w, b: F.group_norm(x, 2, w, b), [normal(2, 4, 3), normal(4), normal(4)]),
    case('instance_norm', lambda T, F, x: F.instance_norm(x), [normal(2, 3, 4)], node=False),
    case('rms_norm', lambda T, F, x, w: F.rms_norm(x, (4,), w), [normal(2, 3, 4), normal(4)]),
    case('rms_norm_eps', lambda T, F, x: F.rms_norm(x, (3, 4), eps=1e-3), [normal(2, 3, 4)]),
    case('local_response_norm', lambda T, F, x: F.local_response_norm(x, 3), [normal(2, 5, 3, 2)]),
    case('local_response_norm_3d', lambda T, F, x: F.local_response_norm(x, 2, alpha=0.1, k=2.0), [normal(2, 4, 3)]),
    # convolution
    case('conv1d', lambda T, F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [normal(2, 3, 7), normal(4, 3, 3),
                                                                                   normal(4)]),
    case('conv2d', lambda T, F, x, w: F.conv2d(x, w), [normal(2, 3, 5, 4), normal(2, 3, 3, 2)]),
    case('conv2d_full', lambda T, F, x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                                       groups=2),
         [normal(2, 4, 6, 5), normal(6, 2, 3, 2), normal(6)]),
    case('conv2d_same', lambda T, F, x, w: F.conv2d(x, w, padding='same', dilation=2),
         [normal(1, 2, 6, 5), normal(3, 2, 3, 3)]),
    case('conv2d_valid_unbatched', lambda T, F, x, w: F.conv2d(x, w, padding='valid'),
         [normal(2, 5, 5), normal(3, 2, 2, 2)], node=False),
    case('conv_transpose2d', lambda T, F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
         [normal(2, 3, 3, 4), normal(3, 2, 3, 3), normal(2)]),
    case('conv_transpose2d_groups', lambda T, F, x, w: F.conv_transpose2d(x, w, groups=2, dilation=2),
         [normal(1, 4, 3, 3), normal(4, 1, 2, 2)]),
    case('conv3d', lambda T, F, x, w: F.conv3d(x, w, stride=2), [normal(1, 2, 4, 3, 4), normal(2, 2, 2, 2, 2)]),
    # pooling
    case('max_pool2d', lambda T, F, x: F.max_pool2d(x, 2), [spaced(2, 3, 4, 6)]),
    case('max_pool2d_full', lambda T, F, x: F.max_pool2d(x, (3, 2), stride=2, padding=1, dilation=(1, 2),
                                                         ceil_mode=True), [spaced(2, 2, 7, 6)]),
    case('max_pool2d_indices', lambda T, F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True)[0], [spaced(1, 2, 5, 5)]),
    case('max_pool1d', lambda T, F, x: F.max_pool1d(x, 3, stride=2), [spaced(2, 3, 7)]),
    case('max_pool2d_with_indices', lambda T, F, x: F.max_pool2d_with_indices(x, 2)[0], [spaced(1, 2, 4, 4)]),
    case('max_unpool2d', lambda T, F, x: F.max_unpool2d(x, T.tensor([[[[0, 3], [9, 14]], [[5, 6], [12, 15]]]]), 2),
         [normal(1, 2, 2, 2)]),
    case('max_unpool1d', lambda T, F, x: F.max_unpool1d(x, T.tensor([[[1, 2, 5]]]), 2, output_size=(7,)),
         [normal(1, 1, 3)]),
    case('lp_pool2d', lambda T, F, x: F.lp_pool2d(x, 2, 2), [uniform(0.5, 2, 1, 2, 4, 4)]),
    case('lp_pool1d', lambda T, F, x: F.lp_pool1d(x, 3, 2, stride=1), [uniform(0.5, 2, 2, 3, 5)]),
    case('avg_pool2d', lambda T, F, x: F.avg_pool2d(x, 2), [normal(2, 3, 4, 6)]),
    case('avg_pool2d_pad', lambda T, F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
         [normal(2, 2, 6, 5)]),
    case('avg_pool2d_divisor', lambda T, F, x: F.avg_pool2d(x, 3, 2, 1, divisor_override=4), [normal(1, 2, 5, 5)]),
    case('avg_pool1d', lambda T, F, x: F.avg_pool1d(x, 2), [normal(2, 3, 7)]),
    case('adaptive_max_pool2d', lambda T, F, x: F.adaptive_max_pool2d(x, (3, 2)), [spaced(2, 3, 7, 5)]),
    case('adaptive_max_pool1d', lambda T, F, x: F.adaptive_max_pool1d(x, 3), [spaced(2, 3, 7)]),
    case('adaptive_avg_pool2d', lambda T, F, x: F.adaptive_avg_pool2d(x, (3, 2)), [normal(2, 3, 7, 5)]),
    case('adaptive_avg_pool2d_global', lambda T, F, x: F.adaptive_avg_pool2d(x, 1), [normal(2, 3, 4, 4)]),
    case('interpolate_nearest', lambda T, F, x: F.interpolate(x, scale_factor=2), [normal(1, 2, 3, 4)]),
    case('interpolate_nearest_size', lambda T, F, x: F.interpolate(x, size=(5, 3)), [normal(1, 2, 3, 4)]),
    case('interpolate_bilinear', lambda T, F, x: F.interpolate(x, size=(5, 7), mode='bilinear'), [normal(1, 2, 3, 4)]),
    case('interpolate_bilinear_corners', lambda T, F, x: F.interpolate(x, scale_factor=1.5, mode='bilinear',
                                                                       align_corners=True), [normal(1, 2, 3, 4)]),
    case('interpolate_bicubic', lambda T, F, x: F.interpolate(x, size=(5, 7), mode='bicubic'), [normal(1, 2, 3, 4)]),
    case('upsample_bilinear', lambda T, F, x: F.upsample_bilinear(x, scale_factor=2), [normal(1, 2, 3, 3)]),
    case('interpolate_linear', lambda T, F, x: F.interpolate(x, size=7, mode='linear'), [normal(2, 2, 4)]),
    case('affine_grid', lambda T, F, t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False), [normal(2, 2, 3)]),
    case('affine_grid_corners', lambda T, F, t: F.affine_grid(t, (1, 1, 3, 2), align_corners=True), [normal(1, 2, 3)]),
    # PyTorch records grid_sample as one GridSampler2DBackward0; leafgrad composes it
    case('grid_sample', lambda T, F, x, g: F.grid_sample(x, g, align_corners=False),
         [normal(2, 3, 4, 5), uniform(-1.2, 1.2, 2, 3, 2, 2)], node=False),
    case('grid_sample_border_corners', lambda T, F, x, g: F.grid_sample(x, g, padding_mode='border',
                                                                        align_corners=True),
         [normal(1, 2, 4, 3), uniform(-1.3, 1.3, 1, 4, 3, 2)], node=False),
    case('grid_sample_nearest', lambda T, F, x, g: F.grid_sample(x, g, mode='nearest', align_corners=False),
         [normal(1, 2, 4, 3), uniform(-1.1, 1.1, 1, 4, 3, 2)], node=False),
    case('grid_sample_reflection', lambda T, F, x, g: F.grid_sample(x, g, padding_mode='reflection',
                                                                    align_corners=False),
         [normal(2, 2, 4, 5), uniform(-3.7, 3.7, 2, 3, 4, 2)], node=False),
    case('grid_sample_reflection_corners', lambda T, F, x, g: F.grid_sample(x, g, padding_mode='reflection',
                                                                            align_corners=True),
         [normal(1, 2, 4, 3), uniform(-3.3, 3.3, 1, 4, 3, 2)], node=False),
    case('grid_sample_reflection_nearest', lambda T, F, x, g: F.grid_sample(x, g, mode='nearest',
                                                                            padding_mode='reflection'),
         [normal(1, 2, 4, 3), uniform(-3.1, 3.1, 1, 4, 3, 2)], node=False),
    # attention, linear layers, misc
    case('sdpa', lambda T, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [normal(2, 3, 4), normal(2, 5, 4),
                                                                                  normal(2, 5, 4)]),
    case('sdpa_causal', lambda T, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
         [normal(2, 4, 3), normal(2, 4, 3), normal(2, 4, 3)]),
    case('sdpa_mask', lambda T, F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
         [normal(1, 2, 3, 4), normal(1, 2, 5, 4), normal(1, 2, 5, 4), normal(3, 5)]),
    case('sdpa_bool_mask_scale', lambda T, F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=T.tensor(np.tril(np.ones((3, 5), dtype=bool), 1)), scale=0.3),
        [normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 4)]),
    # 4-D input without a mask takes PyTorch's fused CPU flash kernel (another node, no 2nd derivative)
    case('sdpa_gqa', lambda T, F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
         [normal(1, 4, 3, 2), normal(1, 2, 3, 2), normal(1, 2, 3, 2)], twice=False, node=False),
    case('linear', lambda T, F, x, w, b: F.linear(x, w, b), [normal(3, 4), normal(2, 4), normal(2)]),
    case('linear_3d', lambda T, F, x, w: F.linear(x, w), [normal(2, 3, 4), normal(2, 4)]),
    case('linear_3d_bias', lambda T, F, x, w, b: F.linear(x, w, b), [normal(2, 3, 4), normal(2, 4), normal(2)]),
    case('linear_1d_bias', lambda T, F, x, w, b: F.linear(x, w, b), [normal(4), normal(2, 4), normal(2)]),
    case('linear_noncontiguous_bias', lambda T, F, x, w, b: F.linear(x.transpose(0, 2), w, b),
         [normal(4, 3, 2), normal(2, 4), normal(2)]),
    case('bilinear', lambda T, F, x, y, w, b: F.bilinear(x, y, w, b), [normal(3, 2), normal(3, 4), normal(5, 2, 4),
                                                                      normal(5)], node=False),
    case('prelu', lambda T, F, x, w: F.prelu(x, w), [normal(2, 3, 4), uniform(0.1, 0.5, 3)]),
    case('glu', lambda T, F, x: F.glu(x, 1), [normal(2, 4, 3)]),
    case('pixel_shuffle', lambda T, F, x: F.pixel_shuffle(x, 2), [normal(2, 8, 3, 2)]),
    case('pixel_unshuffle', lambda T, F, x: F.pixel_unshuffle(x, 2), [normal(2, 3, 4, 6)]),
    case('unfold', lambda T, F, x: F.unfold(x, 2, padding=1, stride=2), [normal(2, 3, 5, 4)]),
    case('fold', lambda T, F, x: F.fold(x, (4, 5), 2, padding=1), [normal(2, 8, 30)]),
]


def _make(gens, seed=0):
    rng = np.random.default_rng(seed)
    return [make(rng) for make, _ in gens], [grad for _, grad in gens]


def _tensors(T, arrays, mask, float_dtype):
    out = []
    for a, m in zip(arrays, mask):
        a = np.asarray(a)
        if a.dtype.kind == 'f':
            out.append(T.tensor(a, dtype=float_dtype, requires_grad=m))
        else:
            out.append(T.tensor(a))
    return out


def _np(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t.detach().numpy()


def _call(T, F, fn, ts):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return fn(T, F, *ts)


@needs_torch
@pytest.mark.parametrize('fn,gens,twice,node,fd', CASES)
def test_forward_and_grads_match_torch(fn, gens, twice, node, fd):
    arrays, mask = _make(gens)
    lts = _tensors(lg, arrays, mask, lg.float32)
    tts = _tensors(torch, arrays, mask, torch.float32)
    lout, tout = _call(lg, LF, fn, lts), _call(torch, TF, fn, tts)
    assert tuple(lout.shape) == tuple(tout.shape)
    assert lout.dtype.name == str(tout.dtype).split('.')[-1]
    np.testing.assert_allclose(_np(lout), _np(tout), rtol=1e-4, atol=1e-5)
    if node:
        assert lout.grad_fn.name() == tout.grad_fn.name()
    w = np.random.default_rng(1).standard_normal(tuple(tout.shape)).astype(np.float32)
    (lout * lg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for a, b in zip(lts, tts):
        if b.requires_grad:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-3, atol=1e-4)


def _second(T, F, fn, arrays, mask):
    ts = _tensors(T, arrays, mask, T.float64)
    wrt = [t for t, m in zip(ts, mask) if m]
    out = _call(T, F, fn, ts)
    w = T.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grads = T.autograd.grad((out * w).sum(), wrt, create_graph=True, allow_unused=True)
    terms = [(g * g).sum() for g in grads if g is not None and g.requires_grad]
    if not terms:
        return None
    second = T.autograd.grad(sum(terms[1:], terms[0]), wrt, allow_unused=True)
    return [np.zeros(tuple(t.shape)) if s is None else _np(s) for t, s in zip(wrt, second)]


@needs_torch
@pytest.mark.parametrize('fn,gens,twice,node,fd', [c for c in CASES if c.values[2]],
                         ids=[c.id for c in CASES if c.values[2]])
def test_second_derivatives_match_torch(fn, gens, twice, node, fd):
    arrays, mask = _make(gens)
    lres, tres = _second(lg, LF, fn, arrays, mask), _second(torch, TF, fn, arrays, mask)
    if tres is None or lres is None:
        assert lres is None or all(not np.any(r) for r in lres)
        assert tres is None or all(not np.any(r) for r in tres)
        return
    for a, b in zip(lres, tres):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize('fn,gens,twice,node,fd', CASES)
def test_finite_differences_float64(fn, gens, twice, node, fd):
    arrays, mask = _make(gens)
    arrays = [np.asarray(a, dtype=np.float64) if np.asarray(a).dtype.kind == 'f' else np.asarray(a) for a in arrays]
    check_fast(lambda *ts: _call(lg, LF, fn, ts), arrays, mask, first=fd, second=twice)


# ---- behaviour beyond values --------------------------------------------------------------

@needs_torch
def test_batch_norm_updates_running_stats_like_torch():
    x = np.random.default_rng(0).standard_normal((5, 3, 4))
    stats = []
    for T, F in ((lg, LF), (torch, TF)):
        rm, rv = T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64)
        F.batch_norm(T.tensor(x), rm, rv, training=True, momentum=0.2)
        F.batch_norm(T.tensor(x * 2 + 1), rm, rv, training=True, momentum=0.2)
        stats.append((_np(rm), _np(rv)))
    for a, b in zip(*stats):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert not np.allclose(stats[0][0], 0)


@needs_torch
def test_dropout_uses_leafgrad_generator_and_scales():
    x = lg.ones(20000, requires_grad=True)
    lg.manual_seed(3)
    a = LF.dropout(x, 0.25)
    lg.manual_seed(3)
    b = LF.dropout(x, 0.25)
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    vals = set(np.unique(a.detach().numpy()).tolist())
    assert vals == {0.0, np.float32(1 / 0.75)}
    assert abs((a.detach().numpy() == 0).mean() - 0.25) < 0.02
    assert a.grad_fn.name() == TF.dropout(torch.ones(3, requires_grad=True), 0.25).grad_fn.name()
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), a.detach().numpy())
    assert LF.dropout(x, 0.5, training=False) is x
    assert float(LF.dropout(x, 1.0).detach().abs().sum()) == 0.0


@needs_torch
def test_alpha_dropout_and_gumbel_softmax():
    lg.manual_seed(0)
    x = lg.randn(200000)
    y = LF.alpha_dropout(x, 0.2, training=True)
    assert abs(float(y.mean()) - float(x.mean())) < 0.02 and abs(float(y.std()) - float(x.std())) < 0.02
    assert LF.alpha_dropout(x, 0.2) is x  # training defaults to False
    logits = lg.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), requires_grad=True)
    soft = LF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    hard = LF.gumbel_softmax(logits, hard=True)
    counts = hard.detach().numpy().mean(0)
    assert set(np.unique(hard.detach().numpy())) <= {0.0, 1.0} and abs(counts[0] - 0.7) < 0.03
    (hard * lg.tensor(np.arange(3.0))).sum().backward()  # straight-through: the soft sample's gradient
    assert np.abs(logits.grad.numpy()).sum() > 0


@needs_torch
def test_max_pool_indices_match_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    lo, li = LF.max_pool2d(lg.tensor(x), 3, 2, 1, ceil_mode=True, return_indices=True)
    to, ti = TF.max_pool2d(torch.tensor(x), 3, 2, 1, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(li.numpy(), ti.numpy())
    assert li.dtype.name == 'int64'


@needs_torch
def test_one_hot_matches_torch():
    t = np.array([[0, 3], [2, 1]])
    for n in (-1, 6):
        a, b = LF.one_hot(lg.tensor(t), n), TF.one_hot(torch.tensor(t), n)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.dtype.name == 'int64'


@needs_torch
@pytest.mark.parametrize('name', ['mse_loss', 'l1_loss', 'smooth_l1_loss', 'bce_with_logits'])
def test_loss_dtype_promotion_matches_torch(name):
    rng = np.random.default_rng(0)
    x, y = rng.random(4).astype(np.float32), rng.random(4)
    res = []
    for T, F in ((lg, LF), (torch, TF)):
        fn = {'mse_loss': F.mse_loss, 'l1_loss': F.l1_loss, 'smooth_l1_loss': F.smooth_l1_loss,
              'bce_with_logits': F.binary_cross_entropy_with_logits}[name]
        xt = T.tensor(x, requires_grad=True)
        for target in (T.tensor(y), T.tensor(y.astype(np.float32))):
            out = fn(xt, target)
            out.backward()
            # (the dtype of x.grad is the engine's business: it should cast to the leaf's dtype)
            res.append((str(out.dtype).split('.')[-1], float(out.detach()), np.asarray(_np(xt.grad), dtype=np.float64)))
            xt.grad = None
    for a, b in zip(res[:2], res[2:]):
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6)
        np.testing.assert_allclose(a[2], b[2], rtol=1e-5)


@needs_torch
def test_cross_entropy_float32_extreme_logits_are_finite():
    x = np.array([[1000.0, -1000.0, 0.0], [-1e4, 1e4, 3.0]], dtype=np.float32)
    t = np.array([1, 0])
    a = LF.cross_entropy(lg.tensor(x, requires_grad=True), lg.tensor(t))
    b = TF.cross_entropy(torch.tensor(x), torch.tensor(t))
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-6)


@needs_torch
def test_conv2d_float32_realistic_size_matches_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    a = LF.conv2d(lg.tensor(x, requires_grad=True), lg.tensor(w, requires_grad=True), padding=1)
    b = TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1)
    np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-4, atol=1e-3)
    a.sum().backward()


EMPTY = [
    ('conv2d', lambda T, F, x: F.conv2d(x, T.ones(4, 3, 3, 3, dtype=x.dtype)), (0, 3, 5, 5)),
    ('conv_transpose2d', lambda T, F, x: F.conv_transpose2d(x, T.ones(3, 2, 3, 3, dtype=x.dtype)), (0, 3, 5, 5)),
    ('max_pool2d', lambda T, F, x: F.max_pool2d(x, 2), (0, 3, 4, 4)),
    ('avg_pool2d', lambda T, F, x: F.avg_pool2d(x, 2), (0, 3, 4, 4)),
    ('softmax', lambda T, F, x: F.softmax(x, 1), (0, 3)),
    ('log_softmax_empty_dim', lambda T, F, x: F.log_softmax(x, 1), (2, 0)),
    ('cross_entropy', lambda T, F, x: F.cross_entropy(x, T.zeros(0, dtype=T.int64)), (0, 3)),
    ('mse_loss', lambda T, F, x: F.mse_loss(x, x.detach()), (0,)),
    ('layer_norm', lambda T, F, x: F.layer_norm(x, (3,)), (0, 3)),
    ('linear', lambda T, F, x: F.linear(x, T.ones(4, 3, dtype=x.dtype), T.ones(4, dtype=x.dtype)), (0, 3)),
    ('interpolate', lambda T, F, x: F.interpolate(x, scale_factor=2), (0, 2, 3, 3)),
]


@needs_torch
@pytest.mark.parametrize('fn,shape', [e[1:] for e in EMPTY], ids=[e[0] for e in EMPTY])
def test_empty_inputs_match_torch(fn, shape):
    outs = []
    for T, F in ((lg, LF), (torch, TF)):
        x = T.zeros(shape, dtype=T.float64, requires_grad=True)
        out = _call(T, F, fn, [x])
        out.sum().backward()
        outs.append((tuple(out.shape), np.nan_to_num(_np(out)).tolist(), tuple(x.grad.shape)))
    assert outs[0] == outs[1]


# ---- errors: torch's exception type and message ----------------------------------------------

def _r(*shape):
    return np.random.default_rng(0).standard_normal(shape)


ERRORS = [
    ('softmax_int', lambda T, F: F.softmax(T.tensor([1, 2]), 0)),
    ('softmax_dim', lambda T, F: F.softmax(T.tensor(_r(2, 3)), 2)),
    ('one_hot_float', lambda T, F: F.one_hot(T.tensor([1.0, 2.0]))),
    ('one_hot_negative', lambda T, F: F.one_hot(T.tensor([-1, 2]))),
    ('one_hot_small', lambda T, F: F.one_hot(T.tensor([1, 2]), 2)),
    ('one_hot_empty', lambda T, F: F.one_hot(T.tensor([], dtype=T.int64))),
    ('dropout_p', lambda T, F: F.dropout(T.tensor(_r(2)), 1.5)),
    ('nll_batch', lambda T, F: F.nll_loss(T.tensor(_r(3, 4)), T.tensor([1, 2]))),
    ('nll_bounds', lambda T, F: F.nll_loss(T.tensor(_r(3, 4)), T.tensor([1, 2, 7]))),
    ('nll_multi_target', lambda T, F: F.cross_entropy(T.tensor(_r(3, 4)), T.tensor(_r(3, 5)))),
    ('ce_batch', lambda T, F: F.cross_entropy(T.tensor(_r(3, 4)), T.tensor([1, 2]))),
    ('bce_size', lambda T, F: F.binary_cross_entropy(T.tensor([0.5] * 3), T.tensor([0.5] * 4))),
    ('bce_range', lambda T, F: F.binary_cross_entropy(T.tensor([1.5]), T.tensor([0.5]))),
    ('bce_logits_size', lambda T, F: F.binary_cross_entropy_with_logits(T.tensor(_r(3)), T.tensor(_r(4)))),
    ('mse_reduction', lambda T, F: F.mse_loss(T.tensor(_r(2)), T.tensor(_r(2)), reduction='foo')),
    ('smooth_l1_beta', lambda T, F: F.smooth_l1_loss(T.tensor(_r(2)), T.tensor(_r(2)), beta=-1.0)),
    ('embedding_range', lambda T, F: F.embedding(T.tensor([5]), T.tensor(_r(3, 2)))),
    ('embedding_float', lambda T, F: F.embedding(T.tensor([1.0]), T.tensor(_r(3, 2)))),
    ('layer_norm_shape', lambda T, F: F.layer_norm(T.tensor(_r(2, 3)), (4,))),
    ('batch_norm_one', lambda T, F: F.batch_norm(T.tensor(_r(1, 3)), T.zeros(3, dtype=T.float64),
                                                 T.ones(3, dtype=T.float64), training=True)),
    ('batch_norm_running', lambda T, F: F.batch_norm(T.tensor(_r(2, 3)), T.zeros(4, dtype=T.float64),
                                                     T.ones(4, dtype=T.float64), training=True)),
    ('group_norm_groups', lambda T, F: F.group_norm(T.tensor(_r(2, 3, 4)), 2)),
    ('conv_channels', lambda T, F: F.conv2d(T.tensor(_r(2, 3, 5, 5)), T.tensor(_r(4, 2, 3, 3)))),
    ('conv_stride_len', lambda T, F: F.conv1d(T.tensor(_r(2, 3, 5)), T.tensor(_r(4, 3, 3)), stride=(1, 1))),
    ('conv_kernel_big', lambda T, F: F.conv2d(T.tensor(_r(2, 3, 2, 2)), T.tensor(_r(4, 3, 3, 3)))),
    ('conv_groups', lambda T, F: F.conv2d(T.tensor(_r(2, 4, 5, 5)), T.tensor(_r(4, 2, 3, 3)), groups=3)),
    ('conv_same_strided', lambda T, F: F.conv2d(T.tensor(_r(2, 3, 5, 5)), T.tensor(_r(4, 3, 3, 3)), padding='same',
                                                stride=2)),
    ('conv_bias', lambda T, F: F.conv2d(T.tensor(_r(2, 3, 5, 5)), T.tensor(_r(4, 3, 3, 3)), T.tensor(_r(3)))),
    ('conv_dtype', lambda T, F: F.conv2d(T.tensor(_r(1, 3, 5, 5)), T.tensor(_r(4, 3, 3, 3)).float())),
    ('max_pool_pad', lambda T, F: F.max_pool2d(T.tensor(_r(2, 3, 5, 5)), 3, padding=2)),
    ('max_pool_small', lambda T, F: F.max_pool2d(T.tensor(_r(2, 3, 2, 2)), 3)),
    ('avg_pool_small', lambda T, F: F.avg_pool2d(T.tensor(_r(2, 3, 2, 2)), 3)),
    ('linear_shapes', lambda T, F: F.linear(T.tensor(_r(2, 3)), T.tensor(_r(4, 5)))),
    ('linear_dtype', lambda T, F: F.linear(T.tensor(_r(2, 3)), T.tensor(_r(4, 3)).float())),
    ('linear_dtype_bias', lambda T, F: F.linear(T.tensor(_r(2, 3)).float(), T.tensor(_r(4, 3)), T.tensor(_r(4)).float())),
    ('linear_bias_size', lambda T, F: F.linear(T.tensor(_r(2, 2, 3)), T.tensor(_r(4, 3)), T.tensor(_r(3)))),
    ('cosine_broadcast', lambda T, F: F.cosine_similarity(T.tensor(_r(2, 3)), T.tensor(_r(4, 3)))),
    ('interpolate_mode_dims', lambda T, F: F.interpolate(T.tensor(_r(2, 3, 4)), scale_factor=2, mode='bilinear')),
    ('glu_odd', lambda T, F: F.glu(T.tensor(_r(2, 3)))),
    ('soft_margin_target_grad', lambda T, F: F.soft_margin_loss(T.tensor(_r(3)), T.tensor(_r(3), requires_grad=True))),
    ('bce_mixed_dtype_backward', lambda T, F: F.binary_cross_entropy(
        T.tensor(np.full(3, 0.5), dtype=T.float32, requires_grad=True), T.tensor(np.full(3, 0.3))).backward()),
    ('huber_mixed_dtype_backward', lambda T, F: F.huber_loss(
        T.tensor(_r(3), dtype=T.float32, requires_grad=True), T.tensor([1, 2, 3])).backward()),
    ('ce_weight_dtype', lambda T, F: F.cross_entropy(T.tensor(_r(2, 3)).float(), T.tensor([0, 1]),
                                                     weight=T.tensor(_r(3)))),
    ('bce_logits_long_target', lambda T, F: F.binary_cross_entropy_with_logits(T.tensor(_r(3)).float(),
                                                                               T.tensor([1, 0, 1]))),
    ('grid_sample_padding_mode', lambda T, F: F.grid_sample(T.tensor(_r(2, 3, 4, 5)), T.tensor(_r(2, 4, 5, 2)),
                                                            padding_mode='mirror', align_corners=False)),
    ('grid_sample_mode', lambda T, F: F.grid_sample(T.tensor(_r(2, 3, 4, 5)), T.tensor(_r(2, 4, 5, 2)),
                                                    mode='cubic', align_corners=False)),
    ('grid_sample_last_dim', lambda T, F: F.grid_sample(T.tensor(_r(2, 3, 4, 5)), T.tensor(_r(2, 4, 5, 1)),
                                                        align_corners=False)),
    ('affine_grid_size', lambda T, F: F.affine_grid(T.tensor(_r(2, 2, 3)), (2, 3, 4), align_corners=False)),
    ('conv_weight_dims', lambda T, F: F.conv2d(T.tensor(_r(2, 3, 5, 5)), T.tensor(_r(4, 3, 3)))),
    ('conv_input_dims', lambda T, F: F.conv2d(T.tensor(_r(2, 3)), T.tensor(_r(4, 3, 3, 3)))),
    ('conv_transpose_channels', lambda T, F: F.conv_transpose2d(T.tensor(_r(2, 3, 5, 5)), T.tensor(_r(4, 3, 3, 3)))),
    ('avg_pool_pad', lambda T, F: F.avg_pool2d(T.tensor(_r(2, 3, 5, 5)), 3, padding=2)),
    ('group_norm_weight', lambda T, F: F.group_norm(T.tensor(_r(2, 4, 3)), 2, T.tensor(_r(3)))),
    ('gaussian_nll_negative', lambda T, F: F.gaussian_nll_loss(T.tensor(_r(3, 4)), T.tensor(_r(3, 4)),
                                                               -T.ones(3, 4, dtype=T.float64))),
    ('gaussian_nll_size', lambda T, F: F.gaussian_nll_loss(T.tensor(_r(3, 4)), T.tensor(_r(3, 4)),
                                                           T.ones(2, dtype=T.float64))),
    ('interpolate_align_nearest', lambda T, F: F.interpolate(T.tensor(_r(1, 2, 3, 3)), size=(2, 2),
                                                             align_corners=True)),
    ('interpolate_zero_size', lambda T, F: F.interpolate(T.tensor(_r(1, 2, 1, 3)), size=(0, 2))),
    ('sdpa_mask_and_causal', lambda T, F: F.scaled_dot_product_attention(
        T.tensor(_r(2, 3, 4)), T.tensor(_r(2, 3, 4)), T.tensor(_r(2, 3, 4)), attn_mask=T.ones(3, 3, dtype=T.bool),
        is_causal=True)),
    ('label_smoothing_range', lambda T, F: F.cross_entropy(T.tensor(_r(3, 4)), T.tensor([0, 1, 2]),
                                                           label_smoothing=1.5)),
    ('prelu_channels', lambda T, F: F.prelu(T.tensor(_r(2, 3)), T.tensor(_r(4)))),
    ('embedding_padding_range', lambda T, F: F.embedding(T.tensor([1]), T.tensor(_r(3, 2)), padding_idx=5)),
    ('fold_blocks', lambda T, F: F.fold(T.tensor(_r(2, 8, 20)), (4, 5), 2, padding=1)),
    ('nll_float_target', lambda T, F: F.nll_loss(T.tensor(_r(3, 4)), T.tensor([1.0, 2.0, 3.0]))),
    ('ce_prob_int', lambda T, F: F.cross_entropy(T.tensor(_r(3, 4)), T.zeros(3, 4, dtype=T.int64))),
]


@needs_torch
@pytest.mark.parametrize('fn', [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with pytest.raises(Exception) as t_info:
            fn(torch, TF)
        with pytest.raises(type(t_info.value)) as l_info:
            fn(lg, LF)
    assert str(l_info.value).replace('leafgrad', 'torch') == str(t_info.value)


@needs_torch
@pytest.mark.parametrize('mode,align', [('nearest', None), ('nearest-exact', None), ('bilinear', False), ('bicubic', False),
                                        ('bicubic', True),
                                        ('bilinear', True), ('area', None)])
def test_interpolate_index_rules_match_torch(mode, align):
    """PyTorch's source-index rules (float32 scales, whole-ratio shortcuts, 1/scale_factor vs
    in/out) over a grid of sizes and factors."""
    rng = np.random.default_rng(0)
    for h, w in ((1, 3), (3, 4), (7, 9), (13, 11)):
        x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
        for kw in (dict(size=(3, 5)), dict(scale_factor=1.5), dict(scale_factor=(0.5, 2.3)),
                   dict(scale_factor=(2.5, 3.3)), dict(scale_factor=0.7, recompute_scale_factor=True),
                   dict(size=(2 * h, 3 * w))):
            try:
                ref = TF.interpolate(torch.tensor(x), mode=mode, align_corners=align, **kw)
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match='sizes should be greater than 0'):
                    LF.interpolate(lg.tensor(x), mode=mode, align_corners=align, **kw)
                assert 'greater than 0' in str(e)
                continue
            out = LF.interpolate(lg.tensor(x), mode=mode, align_corners=align, **kw)
            assert tuple(out.shape) == tuple(ref.shape)
            np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


@needs_torch
def test_embedding_max_norm_and_scale_grad_by_freq_match_torch():
    w = np.random.default_rng(0).standard_normal((5, 3)) * 3
    idx = np.array([[1, 2, 1], [4, 1, 0]])
    res = []
    for T, F in ((lg, LF), (torch, TF)):
        weight = T.tensor(w.copy(), requires_grad=True)
        out = F.embedding(T.tensor(idx), weight, max_norm=1.5, scale_grad_by_freq=True)
        (out * T.tensor(np.arange(18.0).reshape(2, 3, 3))).sum().backward()
        res.append((_np(out), _np(weight), weight.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


@needs_torch
@pytest.mark.parametrize('targets, kwargs', [
    ([0, 2, 1, 1], {}),
    ([1, -100, 2, -100], {}),                                # ignored rows: +0 gradient
    ([1, -100, 2, -100], dict(reduction='none')),            # ... and a +0 loss
    ([-100] * 4, {}),                                        # nothing counts: nan loss, zero gradient
    ([-100] * 4, dict(reduction='sum')),
    ([0, 0, 2, -100], dict(weight=[0., 1., 0.])),            # zero total weight: -0/0 where counted
    ([0, 0, 2, -100], dict(weight=[0., 1., 0.], reduction='sum')),
    ([2, 1, 1, 0], dict(weight=[0.5, 2., 1.], ignore_index=1)),
    ([2, 2, 0, 0], dict(ignore_index=1)),                    # ignore_index between the targets
    ([2, 1, 2, 2], dict(ignore_index=2, reduction='none')),
    ([], {}),                                                 # no rows
])
def test_nll_loss_ignored_rows_and_zero_weights_match_torch(targets, kwargs):
    """Signs of zeros included: an ignored row's gradient and loss are +0, a counted row with
    weight 0 gets -0 (or -0/0 = nan for a mean), as PyTorch's kernel writes them."""
    def run(T):
        x = T.tensor(np.random.default_rng(0).standard_normal((len(targets), 3)).astype(np.float32),
                     requires_grad=True)
        kw = dict(kwargs)
        if 'weight' in kw:
            kw['weight'] = T.tensor(kw['weight'])
        loss = T.nn.functional.nll_loss(x, T.tensor(targets, dtype=T.int64), **kw)
        loss.sum().backward()
        return loss.detach().numpy(), x.grad.numpy()
    for got, want in zip(run(lg), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
        number = ~np.isnan(want)  # (a NaN's sign bit is not part of the answer)
        np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


@needs_torch
@pytest.mark.parametrize('targets', [[1, 0, 3], [1, -1, 2], [1, -100, 3], [-5, -100, 0]])
@pytest.mark.parametrize('dtype', ['int64', 'uint8'])
def test_nll_loss_targets_out_of_range_match_torch(targets, dtype):
    def run(T):
        target = T.tensor(np.array(targets).astype(dtype) if dtype == 'int64' or min(targets) >= 0 else [1, 0, 3],
                          dtype=getattr(T, dtype))
        return T.nn.functional.nll_loss(T.zeros(3, 3), target)
    assert same_message(*raises_like(lambda: run(lg), lambda: run(torch)))


@needs_torch
def test_nll_loss_target_changed_in_place_is_caught():
    def run(T):
        x = T.zeros(4, 3, requires_grad=True)
        target = T.tensor([0, 2, 1, 1])
        loss = T.nn.functional.nll_loss(x, target)
        target[0] = 1
        loss.backward()
    assert same_message(*raises_like(lambda: run(lg), lambda: run(torch)))


@needs_torch
@pytest.mark.parametrize('kwargs', [{}, dict(reduction='sum'), dict(ignore_index=1)])
def test_nll_loss_gradient_is_computed_as_torch_computes_it(kwargs):
    """-(grad / total) at the target classes, bit for bit (the upstream gradient divided by the
    number of rows, not multiplied by a rounded -1/n)."""
    rng = np.random.default_rng(3)
    logp = rng.standard_normal((13, 5)).astype(np.float32)
    target = rng.integers(0, 5, 13)

    def grad(T):
        x = T.tensor(logp, requires_grad=True)
        (T.nn.functional.nll_loss(x, T.tensor(target), **kwargs) * 0.3).backward()
        return x.grad.numpy()
    np.testing.assert_array_equal(grad(lg), grad(torch))


@needs_torch
@pytest.mark.parametrize('name', ['l1_loss', 'mse_loss', 'huber_loss'])
@pytest.mark.parametrize('reduction', ['mean', 'sum', 'none'])
def test_weighted_pointwise_losses_match_torch(name, reduction):
    """weight= (per element): PyTorch's composite (weighted 'mean' is over the weights' sum for
    l1/mse, over the elements for huber): values, gradients to input, target and weight, the
    graph's node, and the errors for a weight of another size and a bad reduction."""
    rng = np.random.default_rng(3)
    x0, y0, w0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)) * 2, rng.random((3, 4))
    results = []
    for lib in (lg, torch):
        x, y, w = (lib.tensor(a, requires_grad=True) for a in (x0, y0, w0))
        out = getattr(lib.nn.functional, name)(x, y, reduction=reduction, weight=w)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy(), w.grad.numpy(),
                        type(out.grad_fn).__name__))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12) if not isinstance(a, str) else None
    assert results[0][4] == results[1][4]
    for bad in [dict(weight=np.ones(4)), dict(weight=w0, reduction='avg')]:
        errors = []
        for lib in (lg, torch):
            kwargs = {k: lib.tensor(v) if k == 'weight' else v for k, v in bad.items()}
            kwargs.setdefault('reduction', reduction)
            with pytest.raises(ValueError) as info:
                getattr(lib.nn.functional, name)(lib.tensor(x0), lib.tensor(y0), **kwargs)
            errors.append(str(info.value))
        assert errors[0] == errors[1]


@needs_torch
@pytest.mark.parametrize('mode', ['bilinear', 'bicubic', 'lanczos'])
@pytest.mark.parametrize('in_hw,out_hw,align_corners', [((8, 8), (3, 5), False), ((5, 13), (16, 9), False),
                                                        ((20, 3), (4, 4), False), ((2, 2), (5, 2), False),
                                                        ((9, 7), (4, 3), True), ((3, 4), (8, 9), True)])
def test_antialiased_interpolate_matches_torch(mode, in_hw, out_hw, align_corners):
    """antialias=True (Pillow's resampling, which PyTorch follows): values, gradients and node.
    (An output width of 1 is left out: PyTorch 2.13's CPU kernel then gives every output row the
    first row's taps, where leafgrad computes each row's own.)"""
    if mode == 'lanczos' and align_corners:
        return
    rng = np.random.default_rng(7)
    x0, results = rng.standard_normal((2, 3) + in_hw), []
    for lib, dtype in ((lg, None), (torch, None)):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.nn.functional.interpolate(x, size=out_hw, mode=mode, antialias=True, align_corners=align_corners)
        y.backward(lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) % 5 - 2))
        results.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-12)
    assert results[0][2] == results[1][2]
    y32 = [lib.nn.functional.interpolate(lib.tensor(x0.astype(np.float32)), scale_factor=0.5, mode=mode,
                                         antialias=True).numpy() for lib in (lg, torch)]
    if y32[1].shape[-1] > 1:
        assert y32[0].dtype == y32[1].dtype
        np.testing.assert_allclose(y32[0], y32[1], rtol=1e-5, atol=1e-6)


def test_antialiased_interpolate_gradcheck():
    x = lg.tensor(np.random.default_rng(1).standard_normal((1, 2, 7, 6)), requires_grad=True)
    for mode in ('bilinear', 'bicubic', 'lanczos'):
        assert lg.autograd.gradcheck(lambda t: lg.nn.functional.interpolate(t, size=(3, 4), mode=mode,
                                                                            antialias=True), (x,))


@needs_torch
@pytest.mark.parametrize('shape,kwargs', [((1, 1, 8, 8), dict(mode='nearest', antialias=True)),
                                          ((1, 1, 8), dict(mode='linear', antialias=True)),
                                          ((1, 1, 8, 8), dict(mode='lanczos')),
                                          ((1, 1, 8, 8), dict(mode='lanczos', antialias=True, align_corners=True)),
                                          ((1, 1, 8), dict(mode='lanczos'))])
def test_antialias_and_lanczos_errors_as_torch(shape, kwargs):
    errors = []
    for lib in (lg, torch):
        with pytest.raises(Exception) as info:
            lib.nn.functional.interpolate(lib.zeros(shape), size=3, **kwargs)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


# ---- edge values (inf, -inf, nan, ±0, 1e30): PyTorch's values and gradients ----------------------

from both import on_edges, same  # noqa: E402


@needs_torch
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('dim', [0, 1])
def test_normalize_keeps_nan_norms(dim, dtype):
    # clamp_min(eps) of a nan norm is nan, not eps
    same(on_edges(lambda M, x: M.nn.functional.normalize(x, dim=dim), dtype))


@needs_torch
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_hinge_embedding_loss_at_infinite_input(dtype):
    y = [[1., -1., 1., -1.]] * 6
    same(on_edges(lambda M, x: M.nn.functional.hinge_embedding_loss(x, M.ones_like(x), reduction='none'), dtype))
    same(on_edges(lambda M, x: M.nn.functional.hinge_embedding_loss(x, M.tensor(y, dtype=x.dtype),
                                                                      reduction='none'), dtype))


@needs_torch
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('loss', ['smooth_l1_loss', 'huber_loss'])
def test_smooth_l1_and_huber_gradient_nan_at_nan_difference(loss, dtype):
    same(on_edges(lambda M, x: getattr(M.nn.functional, loss)(x[:, :2], x[:, 2:]), dtype))
    same(on_edges(lambda M, x: getattr(M.nn.functional, loss)(x[:, :2], x[:, 2:], reduction='none'), dtype))


@needs_torch
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_cosine_similarity_with_an_infinite_norm(dtype):
    # the norms' clamp_min(eps) leaves an infinite norm infinite (x / inf is 0), not inf - inf
    same(on_edges(lambda M, x: M.nn.functional.cosine_similarity(x[:, :2], x[:, 2:]), dtype))
    same(on_edges(lambda M, x: M.nn.functional.cosine_similarity(x[:, :2] * 1e300, x[:, 2:]), dtype))


def _functional_shapes_and_warnings(T):
    """unfold and fold of unbatched inputs, their refusals, grid_sample's and affine_grid's
    warning when align_corners is not given, a loss's broadcast warning named at the caller's
    line, and cross_entropy's batch sizes compared before the target's dims."""
    F, said = T.nn.functional, []
    x = T.arange(48.).reshape(3, 4, 4)
    for f in (lambda: F.unfold(x, 2).tolist(), lambda: F.unfold(T.ones(4, 4), 2), lambda: F.unfold(T.ones(1, 1, 1, 4, 4), 2),
              lambda: F.fold(T.ones(12, 4), (3, 3), 2).tolist(), lambda: F.fold(T.ones(4), (3, 3), 2),
              lambda: F.unfold(T.ones(3, 4, 0), 2), lambda: list(F.grid_sample(T.ones(1, 1, 3, 3), T.zeros(1, 2, 2, 2)).shape),
              lambda: list(F.affine_grid(T.ones(1, 2, 3), (1, 1, 2, 2)).shape), lambda: F.mse_loss(T.ones(2, 1), T.ones(3)).item(),
              lambda: F.l1_loss(T.ones(2, 1), T.ones(3)).item(), lambda: F.cross_entropy(T.ones(2, 3), T.tensor([[0, 1]]))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            try:
                said.append(f())
            except Exception as e:
                said.append((type(e).__name__, str(e)))
        said.append([(str(w.message).split(' (Triggered')[0].replace(T.__name__ + '.', 'torch.'), w.filename == __file__)
                     for w in caught])
    return said


def test_functional_shapes_and_warnings_as_pytorch():
    """(unfold and fold had refused unbatched inputs; the align_corners warning had not been
    given; a loss's broadcast warning had named a line one frame too far out, or none; the
    cross_entropy refusal had been the target's.)"""
    if torch is None:
        pytest.skip('needs the torch oracle')
    assert _functional_shapes_and_warnings(lg) == _functional_shapes_and_warnings(torch)


# ---- in-place activations: their nodes save the result, as PyTorch's -------------------------

_INPLACE_ACTIVATIONS = {
    'elu': lambda F, y: F.elu(y, inplace=True),
    'elu alpha 0.5': lambda F, y: F.elu(y, alpha=0.5, inplace=True),
    'elu alpha 0': lambda F, y: F.elu(y, alpha=0., inplace=True),
    'elu_ alpha -1': lambda F, y: F.elu_(y, alpha=-1.),
    'selu': lambda F, y: F.selu(y, inplace=True),
    'celu alpha 0.3': lambda F, y: F.celu(y, alpha=0.3, inplace=True),
    'celu alpha -1': lambda F, y: F.celu(y, alpha=-1., inplace=True),
    'leaky_relu': lambda F, y: F.leaky_relu(y, inplace=True),
    'leaky_relu slope 0': lambda F, y: F.leaky_relu(y, 0., inplace=True),
    'leaky_relu_ slope -0.5': lambda F, y: F.leaky_relu_(y, -0.5),
    'rrelu eval': lambda F, y: F.rrelu(y, inplace=True, training=False),
    'rrelu eval negative slopes': lambda F, y: F.rrelu(y, -0.5, -0.25, inplace=True, training=False),
    'rrelu_ training': lambda F, y: F.rrelu_(y, 0.1, 0.1, training=True),
}
_SAVED = ('_saved_self', '_saved_result', '_saved_alpha', '_saved_scale', '_saved_input_scale',
          '_saved_negative_slope', '_saved_noise', '_saved_lower', '_saved_upper', '_saved_training')


@needs_torch
@pytest.mark.parametrize('name', list(_INPLACE_ACTIVATIONS))
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_inplace_activation_saves_its_result(name, dtype):
    """elu_/selu_/celu_/leaky_relu_/rrelu_ record PyTorch's nodes that save the result (the input
    is overwritten): the same _saved_ attributes, the gradient computed from the result as
    PyTorch's (elu's as input_scale * (result + alpha * scale); celu's input scale 1 / alpha
    with alpha rounded to float, as PyTorch's derivative divides), PyTorch's error
    at backward where the result no longer tells the slope (a negative one), and the version
    error when the result is changed again. Before, the nodes saved the input's copy."""
    def run(T, change):
        x = T.tensor([1.5, -2., 0., -0.25, 3.], dtype=getattr(T, dtype), requires_grad=True)
        y = _INPLACE_ACTIVATIONS[name](T.nn.functional, x * 1)
        fn = y.grad_fn
        saved = {}
        for attr in _SAVED:
            if hasattr(fn, attr):
                value = getattr(fn, attr)
                # (out of training PyTorch's noise is memory it never wrote: its presence is compared)
                saved[attr] = tuple(value.shape) if attr == '_saved_noise' and 'training' not in name else \
                    np.array(value.tolist()) if hasattr(value, 'tolist') else value
        if change:
            y.mul_(2)
        try:
            (y * T.arange(5.)).sum().backward()
        except RuntimeError as e:
            return type(fn).__name__, saved, str(e)
        return type(fn).__name__, saved, x.grad.tolist()
    rtol = 1e-6 if dtype == 'float32' else 1e-13  # (a forward's last bit: selu's and celu's kernels)
    for change in (False, True):
        mine, theirs = run(lg, change), run(torch, change)
        assert mine[0] == theirs[0] and mine[1].keys() == theirs[1].keys()
        for attr, value in theirs[1].items():
            if isinstance(value, np.ndarray):
                np.testing.assert_allclose(mine[1][attr], value, rtol=rtol, atol=0)
            else:
                assert mine[1][attr] == value and type(mine[1][attr]) is type(value), attr
        if isinstance(theirs[2], str):
            assert same_message(mine[2], theirs[2])
        else:
            np.testing.assert_allclose(mine[2], theirs[2], rtol=rtol, atol=0)


@needs_torch
def test_inplace_elu_second_derivative():
    def run(T):
        x = T.tensor([1.5, -2., -0.25], dtype=T.float64, requires_grad=True)
        y = T.nn.functional.elu(x * 1, alpha=0.7, inplace=True)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = T.autograd.grad(g.sum(), x)
        return g.tolist(), h.tolist()
    (g1, h1), (g2, h2) = run(lg), run(torch)
    assert np.allclose(g1, g2, rtol=1e-13) and np.allclose(h1, h2, rtol=1e-13)
