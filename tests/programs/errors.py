"""The mistakes everybody makes, caught and printed: PyTorch's exception type and message are part
of what a program shows its user."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def attempt(label, fn):
    try:
        result = fn()
    except Exception as exc:  # noqa: BLE001 - printing the error is the point
        print(f'{label}: {type(exc).__name__}: {exc}')
    else:
        print(f'{label}: ok {result}')


a = torch.ones(2, 3)
b = torch.ones(4, 5)
leaf = torch.ones(3, requires_grad=True)

attempt('matmul shapes', lambda: a @ b)
attempt('add shapes', lambda: a + b)
attempt('linear input', lambda: nn.Linear(4, 2)(a))
attempt('view impossible', lambda: a.view(4, 2))
attempt('item of many', lambda: a.item())
attempt('numpy of requires_grad', lambda: leaf.numpy())
attempt('in-place on leaf', lambda: leaf.add_(1))
attempt('backward of non-scalar', lambda: (leaf * 2).backward())


def backward_twice():
    y = (leaf * leaf).sum()
    y.backward()
    y.backward()


attempt('backward twice', backward_twice)
attempt('index out of range', lambda: a[5])
attempt('cat dims', lambda: torch.cat([a, b]))
attempt('cross_entropy float target', lambda: F.cross_entropy(torch.zeros(2, 3), torch.tensor([0.0, 1.0])).item())
attempt('nll target out of range', lambda: F.nll_loss(torch.zeros(2, 3), torch.tensor([0, 7])))
attempt('no grad_fn', lambda: torch.ones(2).sum().backward())
attempt('dim out of range', lambda: a.sum(dim=2))
attempt('conv2d input rank', lambda: nn.Conv2d(1, 1, 3)(torch.ones(5)))
attempt('load_state_dict keys', lambda: nn.Linear(2, 2).load_state_dict({'weight': torch.ones(2, 2)}))
attempt('load_state_dict shape',
        lambda: nn.Linear(2, 2).load_state_dict({'weight': torch.ones(3, 2), 'bias': torch.ones(2)}))
attempt('optimizer empty', lambda: torch.optim.SGD([], lr=0.1))
attempt('negative lr', lambda: torch.optim.Adam(nn.Linear(1, 1).parameters(), lr=-1))
attempt('unknown device', lambda: torch.device('tpu'))
attempt('int requires_grad', lambda: torch.tensor([1, 2], requires_grad=True))
attempt('expand', lambda: torch.ones(2, 3).expand(3, 3))
attempt('ok call', lambda: torch.ones(2).sum().item())
