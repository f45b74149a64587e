"""multi_head_attention_forward: PyTorch's reference path of multi-head attention.

The steps and their order are PyTorch's (torch.nn.functional.multi_head_attention_forward): masks
made float (-inf where a boolean mask is True), the in-projection, bias_k/bias_v appended as one
more key position, heads split into the batch, add_zero_attn appending a zero key and value, the
key-padding mask merged into the attention mask. With ``need_weights`` the scores are
``baddbmm(mask, q * sqrt(1/hd), k^T)``, softmax, dropout, ``bmm`` with v; without, the heads go
through scaled_dot_product_attention. Both end in the out-projection.

scaled_dot_product_attention: softmax(q k^T * scale + mask) v.
"""
import math
import warnings

from ... import backend, creation
from ...ops import elementwise as _ew
from ...ops import linalg
from ...ops import shape as _shape
from ...ops._util import autocast, xp
from ...ops.activation import nn_softmax as softmax
from ...ops.linalg import matmul
from ...ops.rearrange import cat, pad
from .basic import dropout, linear
from .common import const
from ..._arg_parser import refuse_arguments


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A boolean mask as a float one (-inf where True); a float mask unchanged; other types refused."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype != backend.bool_ and not is_float:
        raise AssertionError(f'only bool and floating types of {mask_name} are supported')
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f'Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both '
                      'instead.', stacklevel=3)
    if not is_float:
        data = backend.numpy.where(mask._data, -math.inf, 0.0).astype(target_type.np)
        return creation.tensor(data)
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's checks of the inputs' ranks; True when the query is batched (3-D)."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError('For batched (3-D) `query`, expected `key` and `value` to be 3-D but found '
                                 f'{key.dim()}-D and {value.dim()}-D tensors respectively')
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError('For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but '
                                 f'found {key_padding_mask.dim()}-D tensor instead')
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError('For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but '
                                 f'found {attn_mask.dim()}-D tensor instead')
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError('For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found '
                                 f'{key.dim()}-D and {value.dim()}-D tensors respectively')
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError('For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but '
                                 f'found {key_padding_mask.dim()}-D tensor instead')
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError('For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D '
                                     f'but found {attn_mask.dim()}-D tensor instead')
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f'Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}')
        return False
    raise AssertionError(f'query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query '
                         'tensor')


def _linear(x, w, b):
    return linear(x, w, b)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention of (L, N, E) query over (S, N, E) key/value (or unbatched (L, E)).

    Returns the output (L, N, E) and, with ``need_weights``, the attention weights (N, L, S), or
    (N, H, L, S) when ``average_attn_weights`` is False.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, 'key_padding_mask',
                                       None if attn_mask is None else attn_mask.dtype, 'attn_mask', query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError('Need attn_mask if specifying the is_causal hint. You may use the Transformer module '
                           'method `generate_square_subsequent_mask` to create this mask.')
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone says causal (scaled_dot_product_attention's is_causal)
    else:
        attn_mask = _canonical_mask(attn_mask, 'attn_mask', None, '', query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f'was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}')
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f'embed_dim {embed_dim} not divisible by num_heads {num_heads}')
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f'{value.shape[:2]}')
    elif key.shape != value.shape:
        raise AssertionError(f'key shape {key.shape} does not match value shape {value.shape}')

    # in-projection
    E = embed_dim
    if in_proj_bias is None:
        b_q = b_k = b_v = None
    else:
        b_q, b_k, b_v = in_proj_bias.narrow(0, 0, E), in_proj_bias.narrow(0, E, E), in_proj_bias.narrow(0, 2 * E, E)
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError('use_separate_proj_weight is False but in_proj_weight is None')
        w_q, w_k, w_v = (in_proj_weight.narrow(0, 0, E), in_proj_weight.narrow(0, E, E),
                         in_proj_weight.narrow(0, 2 * E, E))
    else:
        for name, w in (('q', q_proj_weight), ('k', k_proj_weight), ('v', v_proj_weight)):
            if w is None:
                raise AssertionError(f'use_separate_proj_weight is True but {name}_proj_weight is None')
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    q = _linear(query, w_q, b_q)
    k = _linear(key, w_k, b_k)
    v = _linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f'The shape of the 2D attn_mask is {attn_mask.shape}, but should be '
                                   f'{(tgt_len, src_len)}.')
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f'The shape of the 3D attn_mask is {attn_mask.shape}, but should be '
                                   f'{(bsz * num_heads, tgt_len, src_len)}.')
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError('bias cannot be added to static key.')
        if static_v is not None:
            raise AssertionError('bias cannot be added to static value.')
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError('bias_k is set but bias_v is None')
    elif bias_v is not None:
        raise AssertionError('bias_v is set but bias_k is None')

    # heads into the batch: (L, N, E) -> (N*H, L, hd)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f'expecting static_k.size(0) of {bsz * num_heads}, but got {static_k.size(0)}')
        if static_k.size(2) != head_dim:
            raise AssertionError(f'expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}')
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f'expecting static_v.size(0) of {bsz * num_heads}, but got {static_v.size(0)}')
        if static_v.size(2) != head_dim:
            raise AssertionError(f'expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}')
        v = static_v

    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = cat([k, creation.zeros(zeros, dtype=k.dtype, device=k.device)], 1)
        v = cat([v, creation.zeros(zeros, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f'Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}')
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f'Expected key_padded_mask.shape[1] to be {src_len}, but got '
                                 f'{key_padding_mask.shape[1]}')
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        if attn_mask is not None:
            weights = linalg.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = linalg.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = linalg.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias)
        out = out.reshape(tgt_len, bsz, out.shape[1])
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[1])
    if not is_batched:
        out = out.squeeze(1)
    return out, None


# ---- scaled_dot_product_attention ---------------------------------------------------------------

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q k^T * scale + mask) v, composed of leafgrad ops as PyTorch's math path composes it
    (q and k are each scaled by sqrt(scale), which keeps the products small)."""
    try:
        if autocast.state.on:
            query, key, value, attn_mask = autocast.lower_precision(query, key, value, attn_mask)
        if query._data.dtype.kind == 'V':  # bfloat16: in float32, rounded once, as PyTorch's CPU kernels
            if attn_mask is not None and attn_mask._data.dtype.kind == 'V':
                attn_mask = attn_mask.float()
            with autocast.suspended():
                out = scaled_dot_product_attention(query.float(), key.float(), value.float(), attn_mask, dropout_p,
                                                   is_causal, scale, enable_gqa)
            return out.to(query.dtype)
        # the attention kernels switched on (leafgrad's is math or flash)
        from ...backends import cuda as _kernels  # (loaded when first used)
        _kernels.check_sdp_kernel()
        q, k = query._data, key._data
        L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
        if is_causal and attn_mask is not None:
            raise RuntimeError('_scaled_dot_product_attention: Explicit attn_mask should not be set when '
                               'is_causal=True')
        if enable_gqa and q.ndim >= 3 and q.shape[-3] != k.shape[-3]:
            rep = q.shape[-3] // k.shape[-3]
            key = _repeat_heads(key, rep)
            value = _repeat_heads(value, rep)
        factor = math.sqrt(1.0 / math.sqrt(E) if scale is None else scale)
        attn = matmul(query * factor, _shape.transpose(key, -2, -1) * factor)
        if is_causal:
            keep = xp.tril(xp.ones((L, S), dtype=bool))
            attn = _ew.where(const(keep), attn, const(xp.asarray(-xp.inf, dtype=attn._data.dtype)))
        elif attn_mask is not None:
            if attn_mask._data.dtype == xp.bool_:
                attn = _ew.where(attn_mask, attn, const(xp.asarray(-xp.inf, dtype=attn._data.dtype)))
            else:
                attn = attn + attn_mask
        attn = softmax(attn, -1)
        if dropout_p > 0.0:
            attn = dropout(attn, dropout_p, True)
        return matmul(attn, value)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('scaled_dot_product_attention', ('query', 'key', 'value'))
        raise


def _repeat_heads(t, rep):
    shape = t._data.shape
    x = _shape.unsqueeze(t, -3)
    x = _shape.expand(x, shape[:-2] + (rep,) + shape[-2:])
    return _shape.reshape(x, shape[:-3] + (shape[-3] * rep,) + shape[-2:])
