"""The learning rates that PyTorch's schedulers produce, epoch by epoch, as training scripts log
them; ReduceLROnPlateau driven by a made-up validation loss; param groups with their own rates."""
import torch
import torch.nn as nn
from torch.optim import lr_scheduler


def fresh(lr=0.1, **kw):
    return torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=lr, momentum=0.9, **kw)


def trace(make, epochs=10, fmt='{:.5f}'):
    opt = fresh()
    sched = make(opt)
    rates = []
    for _ in range(epochs):
        opt.step()
        rates.append(fmt.format(sched.get_last_lr()[0]))
        sched.step()
    return ' '.join(rates)


print('StepLR          ', trace(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5)))
print('MultiStepLR     ', trace(lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5, 8], gamma=0.3)))
print('ExponentialLR   ', trace(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.8)))
print('CosineAnnealing ', trace(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=8, eta_min=0.01)))
print('LambdaLR        ', trace(lambda o: lr_scheduler.LambdaLR(o, lambda epoch: 1 / (1 + epoch))))
print('LinearLR        ', trace(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4)))
print('OneCycleLR      ', trace(lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10)))
print('CosineWarmRest  ', trace(lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)))
print('Sequential      ', trace(lambda o: lr_scheduler.SequentialLR(
    o, [lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=3), lr_scheduler.ExponentialLR(o, gamma=0.9)],
    milestones=[3])))

opt = fresh()
plateau = lr_scheduler.ReduceLROnPlateau(opt, mode='min', factor=0.5, patience=1)
for epoch, val_loss in enumerate([1.0, 0.9, 0.95, 0.97, 0.96, 0.5, 0.6, 0.7, 0.8]):
    opt.step()
    plateau.step(val_loss)
    print(f'epoch {epoch} val {val_loss:.2f} lr {opt.param_groups[0]["lr"]:.4f}')

model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
opt = torch.optim.Adam([{'params': model[0].parameters()},
                        {'params': model[1].parameters(), 'lr': 1e-2, 'weight_decay': 0.1}], lr=1e-3)
sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
for group in opt.param_groups:
    print({k: v for k, v in group.items() if k != 'params'}, 'tensors:', len(group['params']))
opt.step()
sched.step()
print('after one step:', [g['lr'] for g in opt.param_groups], sched.get_last_lr(), sched.last_epoch)
print(sorted(sched.state_dict()))
