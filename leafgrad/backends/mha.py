"""``leafgrad.backends.mha``: PyTorch's switch for the fused MultiheadAttention fast path.

leafgrad's ``nn.MultiheadAttention`` has one path, which computes what the fast path computes;
the switch is stored and read back.
"""
_is_fastpath_enabled = True


def get_fastpath_enabled():
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
