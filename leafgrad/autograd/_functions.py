"""The autograd Functions behind a few legacy Tensor methods (``torch.autograd._functions``)."""
import math

from .function import Function


class Resize(Function):
    """``Tensor.resize(*sizes)`` and ``resize_as`` (deprecated): the elements in another shape,
    never another number of them; the gradient reshaped back."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in total), but "
                               f"the given tensor has a size of {'x'.join(map(str, tensor.size()))} "
                               f"({tensor.numel()} elements). autograd's resize can only change the shape of a given "
                               'tensor, while preserving the number of elements. ')
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None
