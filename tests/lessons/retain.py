import torch

w = torch.tensor([1., 2., 3.], requires_grad=True)
h = w * 2
h.retain_grad()                 # ask autograd to keep this one
(h * 10).sum().backward()
print(h.grad)
