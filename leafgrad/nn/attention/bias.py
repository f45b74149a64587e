"""``leafgrad.nn.attention.bias``: causal masks as scaled_dot_product_attention's ``attn_mask``,
aligned to the top left (query i sees keys 0..i) or to the bottom right (the last query sees
every key: a query sequence that continues the keys)."""
import enum

from ... import creation
from ...backend import bool_

__all__ = ['causal_upper_left', 'causal_lower_right', 'CausalVariant', 'CausalBias']


class CausalVariant(enum.IntEnum):
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of ``seq_len_q`` queries over ``seq_len_kv`` keys, made (``_materialize``)
    only where the attention needs it as a tensor."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f'variant must be a CausalVariant, got {variant!r}')
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv

    def _materialize(self, device=None):
        """The boolean mask, True where a query may see a key."""
        ones = creation.ones((self.seq_len_q, self.seq_len_kv), dtype=bool_, device=device)
        if self.variant == CausalVariant.UPPER_LEFT:
            return ones.tril()
        return ones.tril(diagonal=self.seq_len_kv - self.seq_len_q)

    def __repr__(self):
        return repr(self._materialize())

    __str__ = __repr__


def _sizes(name, size):
    if len(size) != 2:
        raise AssertionError(f'{name} only supports 2D tensors')
    return size


def causal_upper_left(*size):
    """The causal mask of queries and keys that start together: query i sees keys 0..i."""
    seq_len_q, seq_len_kv = _sizes('causal_upper_left', size)
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size):
    """The causal mask of queries that end with the keys: query i sees keys 0..i + (kv - q)."""
    seq_len_q, seq_len_kv = _sizes('causal_lower_right', size)
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
