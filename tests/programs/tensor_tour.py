"""A tour of tensors as programs print them: creation, dtypes and promotion, indexing, views,
broadcasting, reductions, in-place updates, finfo/iinfo and the NumPy bridge."""
import numpy as np
import torch

a = torch.arange(12).reshape(3, 4)
print(a, a.dtype, a.shape, a.stride(), a.is_contiguous())
print(a.t(), a.t().is_contiguous(), a.t().contiguous().stride())
print(a[1], a[:, 2], a[-1, -2:], a[a > 6], a[[0, 2]][:, [1, 3]])
b = torch.tensor([[1.5, -2.25], [3.0, 0.125]])
print(b, b.dtype, b.double().dtype, b.half(), b.to(torch.int32))
print(torch.zeros(2, 3, dtype=torch.bool), torch.ones(2, dtype=torch.int8), torch.full((2, 2), 7.5))
print(torch.eye(3), torch.linspace(0, 1, 5), torch.logspace(0, 2, 3))

print('promotion:', (torch.tensor([1, 2]) + 0.5).dtype, (torch.tensor([1, 2]) * torch.tensor([1.0])).dtype,
      (torch.tensor([1], dtype=torch.int8) + torch.tensor([1], dtype=torch.uint8)).dtype,
      (torch.tensor([True]) + 1).dtype, torch.result_type(torch.tensor(1), 2.0))

x = torch.arange(6, dtype=torch.float32).view(2, 3)
y = torch.tensor([10.0, 20.0, 30.0])
print(x + y, x * y.view(1, 3), (x.unsqueeze(2) * y.view(1, 1, 3)).shape)
print(x.sum(), x.sum(dim=0), x.mean(dim=1, keepdim=True), x.max(), x.max(dim=1))
print(x.argmax(), x.std(), x.var(dim=0), x.prod(1), x.cumsum(1), x.norm())
values, indices = torch.topk(torch.tensor([0.3, 2.0, -1.0, 5.0, 0.0]), k=2)
print(values, indices)
print(torch.cat([x, x], dim=0).shape, torch.stack([x, x]).shape, x.chunk(3, dim=1), torch.split(x, 2, dim=1))
print(torch.where(x > 2, x, -x), x.clamp(1, 4), torch.sort(torch.tensor([3, 1, 2]), descending=True))

v = x.view(3, 2)
v[0, 0] = 100
print('view shares storage:', x[0, 0].item(), x.data_ptr() == v.data_ptr())
x.add_(1).mul_(2)
print(x, x.sub(1).div(4).floor(), x.pow(2).sqrt().round())

print(torch.finfo(torch.float32))
print(torch.finfo(torch.float16).max, torch.finfo(torch.float64).eps, torch.finfo().tiny)
print(torch.iinfo(torch.int32), torch.iinfo(torch.uint8).max)
print(torch.tensor([1e-8, 1e10, 3.0]), torch.tensor([1e-3, 1.0]), torch.tensor([float('inf'), float('nan'), -0.0]))
print(torch.tensor(3.14159), torch.tensor([1, 2, 3], dtype=torch.int16), torch.tensor([]), torch.empty(0, 3).shape)

n = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
t = torch.from_numpy(n)
n[0, 0] = -1
print(t, t.numpy().dtype, torch.as_tensor([1, 2]).tolist(), t.tolist(), t[1, 1].item())
print(torch.tensor(n).sum().item(), type(torch.tensor(5).item()), type(torch.tensor(5.0).item()))
print(torch.arange(100.0).view(10, 10) / 3)
print(torch.arange(2000).float())
