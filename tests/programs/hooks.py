"""Module and tensor hooks: forward pre-hooks and forward hooks that record activations, a full
backward hook, a tensor hook that rescales a gradient, retain_grad, and removing handles."""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.lin(x))


model = nn.Sequential(Block(), nn.Linear(3, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).view_as(p) * 0.125 - 0.3)

activations = {}
log = []


def save_output(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()
        log.append(f'forward {name}: {type(module).__name__} in {tuple(inputs[0].shape)} out {tuple(output.shape)}')
    return hook


def pre_hook(module, inputs):
    log.append(f'pre {type(module).__name__}')
    return (inputs[0] * 2,)


def backward_hook(module, grad_input, grad_output):
    log.append(f'backward {type(module).__name__}: grad_output {grad_output[0]}')


handles = [model[0].lin.register_forward_hook(save_output('lin')),
           model[1].register_forward_hook(save_output('head')),
           model[0].register_forward_pre_hook(pre_hook),
           model[1].register_full_backward_hook(backward_hook)]

x = torch.tensor([[1.0, -1.0, 0.5], [0.0, 2.0, -0.5]], requires_grad=True)
hidden = model[0](x)
hidden.retain_grad()
hidden.register_hook(lambda g: g * 10)
out = model[1](hidden)
loss = out.pow(2).sum()
loss.backward()

print('\n'.join(log))
for name, value in activations.items():
    print(name, value)
print('hidden.grad (retain_grad runs after the x10 hook):', hidden.grad)
print('x.grad:', x.grad)
print('is_leaf:', x.is_leaf, hidden.is_leaf, 'retains_grad:', hidden.retains_grad)

for handle in handles:
    handle.remove()
log.clear()
model(x)
print('hooks after remove():', log)

counts = {'grad': 0}


def count(grad):
    counts['grad'] += 1


w = nn.Parameter(torch.ones(2))
w.register_hook(count)
for _ in range(3):
    (w * 3).sum().backward()
print('parameter hook calls:', counts['grad'], 'accumulated grad:', w.grad)
