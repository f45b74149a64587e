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
from ...autograd.graph import _Empty
from ...ops import linalg
from ...ops import shape as _shape
from ...ops._op import CPP_NAMES
from ...ops._util import Node, NotImplementedNode, autocast, record, record_many, saved_output, state, wrap, xp
from ...ops.activation import _safe_softmax, nn_softmax as softmax
from ...ops.special_functions import _no_forward_rule, _times_number
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
        data = xp.where(mask._data, -math.inf, 0.0).astype(target_type.np)
        return creation.tensor(data) if type(data) is xp.ndarray else creation.tensor(data, device=mask.device)
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
        q_scaled = q * (math.sqrt(1.0 / float(q.shape[-1])) if q.shape[-1] else math.inf)  # (PyTorch's form)
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
# PyTorch's CPU build has two kernels: its flash kernel, one node (ScaledDotProductFlashAttention-
# ForCpuBackward0) whose derivative recomputes the probabilities from the saved logsumexp, and
# the math path, the attention composed of ops. It takes the flash kernel wherever that kernel's
# conditions hold (sdp_utils_cpp's gate, below) and it is switched on; else the math path.

class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    __slots__ = ('dropout_p', 'is_causal', 'scale', 'scale_value')
    saved_names = ('query', 'key', 'value', 'output', 'logsumexp', 'attn_mask', 'dropout_p=dropout_p',
                   'is_causal=is_causal', 'scale=scale')
    saved_outputs = ('logsumexp',)  # (the kernel's second output, kept as a tensor)

    def jvp(self, tangents):
        raise _no_forward_rule('_scaled_dot_product_flash_attention_for_cpu')

    def apply(self, grad):
        q, k, v, out, lse, mask = self.saved_tensors
        grads = _flash_attention_grads(grad._data, q._data, k._data, v._data, out._data, lse._data,
                                       None if mask is _Empty else mask._data, self.is_causal, self.scale_value)
        if state.grad_enabled:  # (create_graph: PyTorch gives this derivative no derivative)
            outs, node = record_many(grads, NotImplementedNode, (grad, q, k, v, out))
            if node is not None:
                node.op_name = '_scaled_dot_product_flash_attention_for_cpu_backward'
            return tuple(outs)
        return tuple(wrap(g) for g in grads)


def _attention_scores(q, k, mask, is_causal, scale):
    """q k^T * scale, masked, in the accumulation dtype (float32 for the half types); k has
    been repeated to q's heads."""
    s = q @ xp.swapaxes(k, -1, -2)
    s *= s.dtype.type(scale)
    if is_causal:  # (-inf above the diagonal, added: cheaper than writing through a boolean index)
        s += xp.triu(xp.full(s.shape[-2:], -xp.inf, s.dtype, like=s), 1)
    elif mask is not None:
        s += mask.astype(s.dtype, copy=False)
    return s


def _heads_repeated(x, rep):
    return x if rep == 1 else xp.repeat(x, rep, axis=-3)


def _heads_summed(g, rep):
    """The gradient of ``_heads_repeated``: each group of ``rep`` heads summed."""
    return g if rep == 1 else g.reshape(g.shape[:-3] + (g.shape[-3] // rep, rep) + g.shape[-2:]).sum(-3)


def _flash_attention_arrays(q, k, v, mask, is_causal, scale):
    """The attention and its logsumexp over the keys (0, and an output of 0, where the mask
    hides every key from a query), computed in float32 for the half types."""
    dtype = q.dtype
    acc = xp.dtype(xp.float32) if dtype.itemsize == 2 else dtype
    rep = q.shape[-3] // k.shape[-3]
    q, k, v = (a.astype(acc, copy=False) for a in (q, k, v))
    s = _attention_scores(q, _heads_repeated(k, rep), mask, is_causal, scale)
    top = s.max(-1, keepdims=True) if s.shape[-1] else xp.full(s.shape[:-1] + (1,), -xp.inf, acc, like=s)
    hidden = top == -xp.inf
    top[hidden] = 0
    s -= top
    p = xp.exp(s, out=s)
    total = p.sum(-1, keepdims=True)
    if acc is not dtype:  # (the half types' kernel multiplies v by the probabilities rounded to their dtype)
        p = p.astype(dtype).astype(acc)
    out = p @ _heads_repeated(v, rep)
    total[hidden] = 1  # (hidden rows: p is 0, and so is their output)
    out /= total
    lse = (top + xp.log(total))[..., 0]  # (0 where hidden: top 0, total 1)
    return out.astype(dtype, copy=False), lse


def _flash_attention_grads(dout, q, k, v, out, lse, mask, is_causal, scale):
    """The gradients of query, key and value: the probabilities recomputed from the logsumexp,
    dS = P * (dP - rowsum(dO * O))."""
    dtypes = q.dtype, k.dtype, v.dtype
    acc = lse.dtype
    rep = q.shape[-3] // k.shape[-3]
    q, k, v, dout, out = (a.astype(acc, copy=False) for a in (q, k, v, dout, out))
    kr, vr = _heads_repeated(k, rep), _heads_repeated(v, rep)
    s = _attention_scores(q, kr, mask, is_causal, scale)
    finite = xp.isfinite(lse)
    s -= xp.where(finite, lse, 0)[..., None]
    p = xp.exp(s, out=s)
    if not finite.all():
        p *= finite[..., None]
    half = xp.dtype(dtypes[0]) != acc  # (the half types' kernel multiplies by p and dS rounded to their dtype)
    dv = xp.swapaxes(p.astype(dtypes[0]).astype(acc) if half else p, -1, -2) @ dout
    dp = dout @ xp.swapaxes(vr, -1, -2)
    dp -= (dout * out).sum(-1, keepdims=True)
    ds = xp.multiply(dp, p, out=dp)
    if half:
        ds = ds.astype(dtypes[0]).astype(acc)
    dq = ds @ kr
    dk = xp.swapaxes(ds, -1, -2) @ q
    dq *= dq.dtype.type(scale)
    dk *= dk.dtype.type(scale)
    grads = dq, _heads_summed(dk, rep), _heads_summed(dv, rep)
    for g in grads:
        g += 0.0  # (no -0.0: PyTorch's products start from +0.0)
    return tuple(g.astype(dt, copy=False) for g, dt in zip(grads, dtypes))


def _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Why PyTorch's CPU flash kernel cannot take these arguments (sdp_utils_cpp's gate, in its
    order: the warning it gives when the math kernel is off), '' when it can, None when it
    cannot and says nothing."""
    from ...backends import cuda as _kernels  # (loaded when first used)
    q, k, v = query._data, key._data, value._data
    if not _kernels.sdp_enabled['flash']:
        return 'Flash attention has been runtime disabled.'
    if dropout_p > 0.0:
        return 'Both fused kernels do not support non-zero dropout.'
    if not q.ndim == k.ndim == v.ndim == 4:
        return (f'All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: '
                f'{q.ndim}, Key dim: {k.ndim}, Value dim: {v.ndim} instead.')
    sizes = tuple(list(a.shape) for a in (q, k, v))
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return ('For dense inputs, both fused kernels require query, key and value to have the same batch_size. '
                'Query.sizes(): {}, Key.sizes(): {}, Value.sizes(): {} instead. To broadcast dense inputs, try '
                'using unsqueeze and expand_to before passing them into the kernel.'.format(*sizes))
    if enable_gqa:
        if k.shape[1] != v.shape[1]:
            return ('Both fused kernels require key and value to have the same num_heads and batch_size but got: '
                    'Key sizes: {1}, Value sizes: {2}, Query sizes: {0} instead.'.format(*sizes))
        if q.shape[1] % k.shape[1]:
            return (f'The number of heads in key/value must divide number of heads in query.Got input Key '
                    f'sizes(): {k.shape[1]}, Value sizes(): {v.shape[1]}, Query sizes(): {q.shape[1]} instead.')
    elif not q.shape[1] == k.shape[1] == v.shape[1]:
        return ('For dense input, both fused kernels require query, key and value to have the same num_heads. '
                'Query.sizes(): {}, Key sizes(): {}, Value sizes(): {} instead. To broadcast dense inputs, try '
                'using unsqueeze and expand_to before passing them into the kernel.'.format(*sizes))
    if attn_mask is not None:
        if attn_mask.requires_grad:
            return None
        m = attn_mask._data
        if m.ndim < 2:
            raise IndexError(f'Dimension out of range (expected to be in range of [{-max(m.ndim, 1)}, '
                             f'{max(m.ndim, 1) - 1}], but got -2)')
        if m.shape[-2] not in (q.shape[2], 1) or m.shape[-1] not in (k.shape[2], 1):
            return None
        if not (m.ndim == 2 or m.ndim == 4 and m.shape[0] in (1, q.shape[0]) and m.shape[1] in (1, q.shape[1])):
            return ('Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); 4d - '
                    '({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})')
    if not q.shape[-1] == k.shape[-1] == v.shape[-1]:
        return (f'Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): {q.shape[-1]}, '
                f'Key.size(-1): {k.shape[-1]}, Value.size(-1): {v.shape[-1]} instead.')
    if q.shape[2] == 0 or k.shape[2] == 0:
        return 'All fused kernels do not support zero seq_len_q or seq_len_kv.'
    strides = [a.strides[-1] // a.itemsize if a.shape[-1] != 1 else 1 for a in (q, k, v)]
    if strides != [1, 1, 1]:
        strides = [query.stride(-1), key.stride(-1), value.stride(-1)]
        if strides != [1, 1, 1]:
            return ('All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): '
                    '{}, Key.stride(-1): {}, Value.stride(-1): {}'.format(*strides))
    if q.dtype.kind not in 'fV' or q.dtype.kind == 'V' and q.dtype.name != 'bfloat16':
        names = [CPP_NAMES.get(a.dtype.name, a.dtype.name) for a in (q, k, v)]
        return ('Expected query, key and value to all be of dtype: {{Float, Double, BFloat16, Half}}. Got Query '
                'dtype: {}, Key dtype: {}, and Value dtype: {} instead.'.format(*names))
    return ''


def _default_scale(embed):
    """1/sqrt(E), the scores' default scale; infinite for E = 0, as PyTorch's C++ divides (the
    products are then empty)."""
    return 1.0 / math.sqrt(embed) if embed else math.inf


def _flash_attention(query, key, value, attn_mask, is_causal, scale):
    """PyTorch's CPU flash kernel: one node, which saves the logsumexp for its derivative."""
    q = query._data
    if scale is None:
        scale_value = _default_scale(q.shape[-1])
    else:
        scale_value = scale
    mask = attn_mask
    if mask is not None and mask._data.dtype == xp.bool_:  # (as a float mask, PyTorch's conversion)
        mask = wrap(xp.where(mask._data, xp.zeros((), q.dtype, like=q), xp.asarray(-xp.inf, q.dtype, like=q)))
    data, lse = _flash_attention_arrays(q, key._data, value._data, None if mask is None else mask._data, is_causal,
                                        scale_value)
    out, node = record(data, ScaledDotProductFlashAttentionForCpuBackward0, (query, key, value))
    if node is not None:
        node.dropout_p, node.is_causal, node.scale = 0.0, bool(is_causal), scale
        node.scale_value = scale_value
        node.save(query, key, value, saved_output(out), wrap(lse), _Empty if mask is None else mask)
    return out


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(q k^T * scale + mask) v, by PyTorch's CPU flash kernel where it would take it, else
    composed of leafgrad ops as PyTorch's math path composes it."""
    try:
        if autocast.state.on:
            query, key, value, attn_mask = autocast.lower_precision(query, key, value, attn_mask)
        if type(attn_mask).__name__ == 'CausalBias':  # (nn.attention.bias: a causal mask, made where needed)
            if is_causal:
                raise ValueError('CausalBias should not be used with causal=True')
            if attn_mask.variant == 1 or attn_mask.seq_len_q == attn_mask.seq_len_kv:  # (upper left)
                attn_mask, is_causal = None, True
            else:
                attn_mask = attn_mask._materialize()
        from ...backends import cuda as _kernels  # (loaded when first used)
        _kernels.check_sdp_kernel()  # (math or flash switched on)
        _validate_attention(query, key, value, attn_mask)
        if is_causal and attn_mask is not None:
            raise RuntimeError('_scaled_dot_product_attention: Explicit attn_mask should not be set when '
                               'is_causal=True')
        # (a batched tensor of vmap, whose logical shape is not its array's, takes the math path)
        if query.shape == query._data.shape and key.shape == key._data.shape and value.shape == value._data.shape:
            why = _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa)
        else:
            why = None
        if why == '':
            return _flash_attention(query, key, value, attn_mask, is_causal, scale)
        if not _kernels.sdp_enabled['math']:
            warnings.warn('Flash attention kernel not used because:', stacklevel=2)
            if why:
                warnings.warn(why, stacklevel=2)
            raise RuntimeError('No available kernel.  Aborting execution.')
        return _math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
        refuse_arguments('scaled_dot_product_attention', ('query', 'key', 'value'))
        raise


def _validate_attention(query, key, value, attn_mask):
    """PyTorch's checks of the arguments, before a kernel is chosen."""
    q, k, v = query._data, key._data, value._data
    if not q.dtype == k.dtype == v.dtype:
        names = [CPP_NAMES.get(a.dtype.name, a.dtype.name) for a in (q, k, v)]
        raise RuntimeError('Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: '
                           '{} and value.dtype: {} instead.'.format(*names))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(f'Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: '
                           f'{q.ndim} key.dim: {k.ndim} and value.dim: {v.ndim} instead.')
    if attn_mask is not None:
        m = attn_mask._data
        if m.dtype != xp.bool_ and m.dtype != q.dtype:
            raise RuntimeError(f'Expected attn_mask dtype to be bool or float or to match query dtype, but got '
                               f'attn_mask.dtype: {CPP_NAMES.get(m.dtype.name, m.dtype.name)} and  query.dtype: '
                               f'{CPP_NAMES.get(q.dtype.name, q.dtype.name)} instead.')


def _math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """PyTorch's math path: q and k each scaled by sqrt(scale) (which keeps the products small),
    a boolean or causal mask made a float one (-inf where hidden) and added, _safe_softmax (a
    query hidden from every key attends to nothing), dropout, the product with v."""
    if query._data.dtype.kind == 'V':  # bfloat16: in float32, rounded once, as PyTorch's CPU kernels
        if attn_mask is not None and attn_mask._data.dtype.kind == 'V':
            attn_mask = attn_mask.float()
        with autocast.suspended():
            out = _math_attention(query.float(), key.float(), value.float(), attn_mask, dropout_p, is_causal,
                                  scale, enable_gqa)
        return out.to(query.dtype)
    q, k = query._data, key._data
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    if enable_gqa and q.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        key = _repeat_heads(key, rep)
        value = _repeat_heads(value, rep)
    factor = math.sqrt(_default_scale(E) if scale is None else scale)
    attn = matmul(_times_number(query, factor), _times_number(_shape.transpose(key, -2, -1), factor))
    if is_causal:
        attn_mask = const(xp.tril(xp.ones((L, S), dtype=bool, like=q)))
    if attn_mask is not None:
        if attn_mask._data.dtype == xp.bool_:
            attn_mask = const(xp.where(attn_mask._data, xp.zeros((), attn._data.dtype, like=attn._data),
                                       xp.asarray(-xp.inf, attn._data.dtype, like=attn._data)))
        attn = attn + attn_mask
    attn = _safe_softmax(attn, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return matmul(attn, value)


def _repeat_heads(t, rep):
    shape = t._data.shape
    x = _shape.unsqueeze(t, -3)
    x = _shape.expand(x, shape[:-2] + (rep,) + shape[-2:])
    return _shape.reshape(x, shape[:-3] + (shape[-3] * rep,) + shape[-2:])
