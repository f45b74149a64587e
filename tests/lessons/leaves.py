import torch

w = torch.tensor([1., 2., 3.], requires_grad=True)   # a leaf: you made it
data = torch.tensor([10., 10., 10.])                 # a leaf too, no grad wanted
h = w * 2                                            # made BY an operation: not a leaf
loss = (h * data).sum()

print(w.is_leaf, data.is_leaf, h.is_leaf)
print(w.requires_grad, data.requires_grad, h.requires_grad)

loss.backward()
print(w.grad)      # populated: leaf with requires_grad=True
print(h.grad)      # None: non-leaf grads are used, then thrown away
