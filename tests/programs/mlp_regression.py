"""Fit a small MLP to a noisy-free sine curve: SGD with momentum, a StepLR schedule, evaluation
under no_grad. Weights start from a fixed pattern so both libraries train the same network."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def init_fixed(module):
    if isinstance(module, nn.Linear):
        with torch.no_grad():
            n = module.weight.numel()
            module.weight.copy_(torch.sin(torch.arange(n, dtype=torch.float32) * 0.7).view_as(module.weight) * 0.5)
            module.bias.fill_(0.05)


class MLP(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(1, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.out(x)


x = torch.linspace(-math.pi, math.pi, 64).unsqueeze(1)
y = torch.sin(x)

model = MLP()
model.apply(init_fixed)
print(model)
print('parameters:', sum(p.numel() for p in model.parameters()))

optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
loss_fn = nn.MSELoss()

for epoch in range(60):
    model.train()
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    scheduler.step()
    if epoch % 10 == 9:
        print(f'epoch {epoch + 1:3d}  loss {loss.item():.5f}  lr {scheduler.get_last_lr()[0]:.4f}')

model.eval()
with torch.no_grad():
    test = torch.tensor([[-2.0], [0.0], [1.5]])
    pred = model(test)
print('predictions', pred.squeeze(1))
print('targets    ', torch.sin(test).squeeze(1))
print('requires_grad inside no_grad:', pred.requires_grad, pred.dtype, tuple(pred.shape))
