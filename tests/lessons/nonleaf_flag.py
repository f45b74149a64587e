import torch

w = torch.tensor([1., 2., 3.], requires_grad=True)
h = w * 2
try:
    h.requires_grad_(False)
except RuntimeError as e:
    print(f"RuntimeError: {e}")
