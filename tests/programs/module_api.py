"""The nn.Module API that programs lean on: named parameters and buffers, state_dict keys,
children and modules, apply() for initialisation, freezing, train/eval flags, containers and
their printed form."""
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.norm = nn.BatchNorm1d(4)
        self.heads = nn.ModuleDict({'cls': nn.Linear(4, 3), 'reg': nn.Linear(4, 1)})
        self.scale = nn.Parameter(torch.tensor(2.0))
        self.extra = nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.ones(3))])
        self.register_buffer('calls', torch.tensor(0))
        self.register_buffer('scratch', torch.zeros(1), persistent=False)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x):
        self.calls += 1
        for layer in self.layers:
            x = torch.relu(layer(x))
        x = self.dropout(self.norm(x)) * self.scale
        return self.heads['cls'](x), self.heads['reg'](x)


def init(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.1)
        nn.init.zeros_(m.bias)


model = Encoder()
model.apply(init)
print(model)
for name, p in model.named_parameters():
    print(f'{name:20s} {str(tuple(p.shape)):10s} requires_grad={p.requires_grad}')
print('buffers:', [name for name, _ in model.named_buffers()])
print('state_dict:', list(model.state_dict().keys()))
print('children:', [name for name, _ in model.named_children()])
print('modules:', len(list(model.modules())), [type(m).__name__ for m in model.modules()][:6])
print('trainable parameters:', sum(p.numel() for p in model.parameters() if p.requires_grad))

for p in model.layers.parameters():
    p.requires_grad_(False)
print('after freezing:', sum(p.numel() for p in model.parameters() if p.requires_grad))
print('training flags:', model.training, model.dropout.training)
model.eval()
print('after eval():', model.training, model.norm.training, model.heads['cls'].training)
x = torch.arange(8, dtype=torch.float32).view(2, 4) / 4
with torch.no_grad():
    cls, reg = model(x)
print(cls, reg, model.calls)
model.train()
cls, reg = model(torch.ones(3, 4))
print('train mode shapes', cls.shape, reg.shape, 'calls', int(model.calls))
print('get_submodule:', model.get_submodule('heads.reg'), model.get_parameter('heads.cls.bias').shape)
model.zero_grad()
print('half():', model.half().scale.dtype, 'double():', model.double().norm.running_mean.dtype)
print(nn.Sequential(nn.Conv1d(2, 4, 3), nn.Flatten(), nn.Identity(), nn.Softmax(dim=1), nn.LeakyReLU(0.2),
                    nn.Embedding(10, 3, padding_idx=0), nn.GroupNorm(2, 4), nn.AvgPool2d(2),
                    nn.Upsample(scale_factor=2)))
seq = nn.Sequential()
seq.add_module('first', nn.Linear(2, 2))
seq.append(nn.Tanh())
print(seq, len(seq), seq[-1], seq[:1])
