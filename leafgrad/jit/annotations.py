"""``leafgrad.jit.annotations``: the type names TorchScript code imports for its annotations.

``BroadcastingList1/2/3[T]`` (an int or a list of ints, in TorchScript) and the ``typing``
containers; leafgrad runs annotated code eagerly and reads none of them.
"""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401  re-exported for programs


class _BroadcastingList:
    """``BroadcastingList2[int]`` in an annotation: subscripting gives None, as PyTorch's does outside TorchScript."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = _BroadcastingList()
BroadcastingList2 = _BroadcastingList()
BroadcastingList3 = _BroadcastingList()
