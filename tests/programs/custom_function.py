"""Custom autograd Functions: a clipped identity with a straight-through gradient, a cube that
saves its input, one with two outputs and a non-differentiable mask, checked with gradcheck."""
import torch
from torch.autograd import Function, gradcheck


class StraightThroughClamp(Function):
    @staticmethod
    def forward(ctx, x, low, high):
        return x.clamp(low, high)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2


class SortWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
        values, index = torch.sort(x)
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(index)
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        index, = ctx.saved_tensors
        grad = torch.zeros_like(grad_values)
        grad[index] = grad_values
        return grad


x = torch.tensor([-2.0, -0.5, 0.25, 1.5, 3.0], requires_grad=True)
y = StraightThroughClamp.apply(x, -1.0, 1.0)
print(y)
y.sum().backward()
print('straight-through grad:', x.grad)

x.grad = None
z = Cube.apply(x)
print(z.grad_fn.__class__.__name__, z.requires_grad)
z.backward(torch.ones_like(z))
print('cube grad:', x.grad)

values, index = SortWithIndex.apply(torch.tensor([3.0, 1.0, 2.0], requires_grad=True))
print(values, index, index.requires_grad)
(values * torch.tensor([1.0, 10.0, 100.0])).sum().backward()

point = torch.tensor([0.3, -1.2, 2.0], dtype=torch.double, requires_grad=True)
print('gradcheck Cube:', gradcheck(Cube.apply, (point,)))
print('gradcheck sort:', gradcheck(lambda t: SortWithIndex.apply(t)[0],
                                   (torch.tensor([0.3, -1.2, 2.0, 0.7], dtype=torch.double, requires_grad=True),)))


class Scale(Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        print('  Scale.backward needs_input_grad =', ctx.needs_input_grad)
        return grad * ctx.factor if ctx.needs_input_grad[0] else None, None


w = torch.ones(3, requires_grad=True)
out = Scale.apply(Scale.apply(w, 2.0), 3.0)
out.sum().backward()
print('chained scale grad:', w.grad)
