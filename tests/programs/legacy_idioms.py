"""Idioms from older PyTorch code that still runs today: Variable, the typed constructors,
torch.Tensor(sizes), .data updates, a TorchScript-decorated helper and torch.functional."""
import torch
import torch.functional as TF
import torch.nn as nn
from torch.autograd import Variable


@torch.jit.script
def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


x = Variable(torch.FloatTensor([[0.5, -1.0], [2.0, 0.0]]), requires_grad=True)
print(type(x).__name__, x.requires_grad, x.type(), isinstance(x, torch.FloatTensor))
labels = Variable(torch.LongTensor([1, 0]))
print(labels, labels.type(), torch.LongTensor(3).shape, torch.ByteTensor([1, 0, 1]).dtype)

weights = torch.Tensor(2, 2)
weights.data.fill_(0.25)
weights.data[0, 1] = -0.5
bias = torch.zeros(2).double()
print(weights, bias.type(), torch.DoubleTensor([1, 2]).float().type())

out = gelu_tanh(x @ weights)
print(out, torch.jit.is_scripting())
loss = nn.CrossEntropyLoss()(out, labels)
loss.backward()
print(f'loss {loss.data.item():.5f}', x.grad)

for p in [weights]:
    p.data.sub_(0.1 * torch.ones_like(p))
print(weights)
print(TF.einsum('ij,jk->ik', torch.eye(2), weights), TF.split(torch.arange(5), 2))
print(torch.cat([torch.IntTensor([1, 2]), torch.IntTensor([3])]).tolist())
