# "Try it yourself": a -> b -> c, then again with b.retain_grad()
import warnings
import torch

warnings.simplefilter('ignore')
a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a * 3
c = b ** 2
c.sum().backward()
print(a.grad, b.grad, c.grad)

a = torch.tensor([1., 2., 3.], requires_grad=True)
b = a * 3
b.retain_grad()
c = b ** 2
c.sum().backward()
print(a.grad, b.grad, c.grad)
print(b.grad == 2 * b)
