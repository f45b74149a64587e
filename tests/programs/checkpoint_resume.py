"""Train, save a checkpoint dictionary, resume from it in a fresh model and optimizer, and check
that the resumed run continues exactly where the first one would have gone."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        self.register_buffer('steps', torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.steps += 1
        return self.body(x)


def fixed_net():
    net = Net()
    with torch.no_grad():
        for k, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-0.6, 0.6, p.numel()).roll(k).view_as(p))
    return net


inputs = torch.arange(24, dtype=torch.float32).view(6, 4) / 10
targets = torch.stack([inputs.sum(1), inputs[:, 0] - inputs[:, 3]], dim=1)


def train(net, opt, sched, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(inputs), targets)
        loss.backward()
        opt.step()
        sched.step()
    return loss.item()


net = fixed_net()
opt = optim.Adam(net.parameters(), lr=0.01, betas=(0.8, 0.99))
sched = optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
loss = train(net, opt, sched, 5)
print(f'after 5 steps: loss {loss:.6f}, lr {sched.get_last_lr()[0]:.6f}, steps buffer {net.steps.item()}')

path = os.path.join(tempfile.mkdtemp(), 'checkpoint.pt')
torch.save({'epoch': 5, 'model_state_dict': net.state_dict(), 'optimizer_state_dict': opt.state_dict(),
            'scheduler_state_dict': sched.state_dict(), 'loss': loss}, path)

checkpoint = torch.load(path)
print('checkpoint keys:', sorted(checkpoint))
print('model keys:', list(checkpoint['model_state_dict']))
for name, tensor in checkpoint['model_state_dict'].items():
    print(f'  {name:16s} {tuple(tensor.shape)} {tensor.dtype}')
state = checkpoint['optimizer_state_dict']
print('optimizer state for params', sorted(state['state']), 'groups', [g['params'] for g in state['param_groups']])
print('exp_avg of param 0:', state['state'][0]['exp_avg'][:2])
print('adam step counter:', state['state'][0]['step'])

resumed = fixed_net()
resumed_opt = optim.Adam(resumed.parameters(), lr=0.01, betas=(0.8, 0.99))
resumed_sched = optim.lr_scheduler.ExponentialLR(resumed_opt, gamma=0.9)
resumed.load_state_dict(checkpoint['model_state_dict'])
resumed_opt.load_state_dict(checkpoint['optimizer_state_dict'])
resumed_sched.load_state_dict(checkpoint['scheduler_state_dict'])
print('resumed epoch', checkpoint['epoch'], 'loss', f"{checkpoint['loss']:.6f}",
      'lr', resumed_opt.param_groups[0]['lr'])

a = train(net, opt, sched, 3)
b = train(resumed, resumed_opt, resumed_sched, 3)
print(f'continued: {a:.6f}  resumed: {b:.6f}  identical: {a == b}')
print('weights identical:', all(torch.equal(p, q) for p, q in zip(net.parameters(), resumed.parameters())))

resumed.eval()
with torch.no_grad():
    print(resumed(inputs[:2]))
missing = resumed.load_state_dict({k: v for k, v in net.state_dict().items() if k != 'steps'}, strict=False)
print(missing)
