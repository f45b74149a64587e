"""MultiheadAttention, computed as PyTorch's reference path does (scaled q, bmm, softmax, bmm)."""
import math

from .. import functional as F, init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module
from ... import backend, creation
from ...ops import linalg


def _warn_mismatched(mask, other, mask_name, other_name):
    """PyTorch's deprecation warning for a boolean mask combined with a float one."""
    if mask is not None and other is not None and (mask.dtype == backend.bool_) != (other.dtype == backend.bool_):
        import warnings
        warnings.warn(f'Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both '
                      'instead.', UserWarning, stacklevel=3)


def _additive_mask(mask, dtype):
    """A boolean mask (True = not allowed) as a float mask of -inf / 0; a float mask unchanged."""
    if mask is None:
        return None
    if mask.dtype == backend.bool_:
        data = backend.numpy.where(mask._data, -math.inf, 0.0).astype(dtype.np)
        return creation.tensor(data)
    return mask


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f'embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and '
                             f'num_heads={num_heads} instead')
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError('embed_dim must be divisible by num_heads')
        kw = dict(device=device, dtype=dtype)
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(creation.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(creation.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(creation.empty((embed_dim, self.vdim), **kw))
            self.register_parameter('in_proj_weight', None)
        else:
            self.in_proj_weight = Parameter(creation.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter('q_proj_weight', None)
            self.register_parameter('k_proj_weight', None)
            self.register_parameter('v_proj_weight', None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter('in_proj_bias', None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(creation.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(creation.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projections(self):
        E = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b.narrow(0, 0, E), b.narrow(0, E, E), b.narrow(0, 2 * E, E))
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            return (w.narrow(0, 0, E), bq), (w.narrow(0, E, E), bk), (w.narrow(0, 2 * E, E), bv)
        return (self.q_proj_weight, bq), (self.k_proj_weight, bk), (self.v_proj_weight, bv)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if self.bias_k is not None or self.add_zero_attn:
            raise NotImplementedError('leafgrad: add_bias_kv and add_zero_attn are not supported')
        batched = query.dim() == 3
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        tgt_len, bsz, E = query.shape
        src_len = key.shape[0]
        H, hd = self.num_heads, self.head_dim
        (wq, bq), (wk, bk), (wv, bv) = self._projections()
        q = F.linear(query, wq, bq)
        k = F.linear(key, wk, bk)
        v = F.linear(value, wv, bv)
        # (L, N, E) -> (N*H, L, hd): each head attends independently
        q = q.reshape(tgt_len, bsz * H, hd).transpose(0, 1)
        k = k.reshape(src_len, bsz * H, hd).transpose(0, 1)
        v = v.reshape(src_len, bsz * H, hd).transpose(0, 1)

        _warn_mismatched(key_padding_mask, attn_mask, 'key_padding_mask', 'attn_mask')
        mask = _additive_mask(attn_mask, query.dtype)
        if mask is not None and mask.dim() == 2:
            mask = mask.unsqueeze(0)
        kpm = _additive_mask(key_padding_mask, query.dtype)
        if kpm is not None:
            kpm = kpm.reshape(bsz, 1, 1, src_len).expand(bsz, H, 1, src_len).reshape(bsz * H, 1, src_len)
            mask = kpm if mask is None else mask + kpm

        scores = linalg.bmm(q * math.sqrt(1.0 / float(hd)), k.transpose(1, 2))
        if mask is not None:
            scores = scores + mask
        weights = F.softmax(scores, -1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout, True)
        out = linalg.bmm(weights, v)  # (N*H, L, hd)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, E)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).reshape(tgt_len, bsz, E)
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        weights = weights.reshape(bsz, H, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights


__all__ = ['MultiheadAttention']
