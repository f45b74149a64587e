"""``torch.fx.passes.shape_prop``: run a GraphModule on example inputs and record, in each node's
``meta['tensor_meta']``, the shape, dtype, strides and memory format of the value it made."""
from typing import Any, NamedTuple

from ..._memory_format import channels_last, channels_last_3d, contiguous_format
from ...tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ['TensorMetadata', 'ShapeProp']


class TensorMetadata(NamedTuple):
    """What ShapeProp records about a tensor."""
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    memory_format = None
    if include_contiguity:
        for query in (contiguous_format, channels_last, channels_last_3d):
            if result.is_contiguous(memory_format=query):
                memory_format = query
                break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    """Runs the graph node by node on ``propagate(*args)`` and records each tensor result's
    TensorMetadata in ``node.meta['tensor_meta']`` (a structure of them for a structure of
    tensors) and its type in ``node.meta['type']``."""

    def __init__(self, gm, fake_mode=None):
        if fake_mode is not None:
            raise NotImplementedError('ShapeProp(fake_mode=...): leafgrad has no fake tensors; its meta device '
                                      "(device='meta') gives shapes without data")
        super().__init__(gm)
        self.fake_module = None
        self.fake_mode = None
        self.real_module = self.module

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f'ShapeProp error for: node={n.format_node()} with meta={n.meta}') from e
        found_tensor = False

        def extract(obj):
            nonlocal found_tensor
            if isinstance(obj, Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found_tensor:
            n.meta['tensor_meta'] = meta
        n.meta['type'] = type(result)
        return result

    def propagate(self, *args):
        """Run the graph on ``args`` (recording as it goes); returns its output."""
        return super().run(*args)
