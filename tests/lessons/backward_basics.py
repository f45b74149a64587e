import torch

x = torch.tensor([2.0], requires_grad=True)
y = x * 3
z = y.sum()
print(x.is_leaf, y.is_leaf, z.is_leaf)

x = torch.tensor([1.0, 2.0], requires_grad=True)
x2 = torch.ones(3)
x2.requires_grad_(True)
print(x2)

x = torch.tensor([2.0], requires_grad=True)
y = x ** 2
y.backward()
print(x.grad)  # tensor([4.0])

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
# y is a vector, so we need to pass a gradient vector
y.backward(torch.tensor([1.0, 1.0]))
print(x.grad)  # tensor([2.0, 2.0])

x = torch.tensor([1.0], requires_grad=True)
y = x * 2
y_detached = y.detach()  # no gradient connection
print(y_detached, y_detached.requires_grad, y_detached.is_leaf)

with torch.no_grad():
    p = x * 5
print(p, p.requires_grad)

try:
    torch.tensor([1.0, 2.0], requires_grad=True).mul(2).backward()
except RuntimeError as e:
    print(e)
