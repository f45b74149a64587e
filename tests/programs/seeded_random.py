"""Seeded randomness as training scripts rely on it: manual_seed, randn/rand/randint, the default
initialisation of layers, dropout masks, randperm and a shuffled DataLoader, a Generator object."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(2024)
print(torch.randn(2, 3))
print(torch.rand(4), torch.randint(0, 10, (5,)), torch.randperm(6))
layer = nn.Linear(3, 2)
print(layer.weight, layer.bias)
drop = nn.Dropout(0.5)
print(drop(torch.ones(8)))
loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=4, shuffle=True)
print([batch[0].tolist() for batch in loader])
g = torch.Generator().manual_seed(7)
print(torch.randn(3, generator=g), torch.normal(0.0, 1.0, size=(2,), generator=g))
print(torch.empty(3).uniform_(-1, 1), torch.multinomial(torch.tensor([0.1, 0.6, 0.3]), 4, replacement=True))
