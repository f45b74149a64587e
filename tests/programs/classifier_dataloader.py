"""A classifier trained from a DataLoader, with the device boilerplate most training scripts
open with (cudnn flags, CUDA or accelerator checks) and a per-epoch accuracy report."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False

if torch.cuda.is_available():
    device = torch.device('cuda')
elif torch.accelerator.is_available():
    device = torch.accelerator.current_accelerator()
else:
    device = torch.device('cpu')
print('Using device:', device)
torch.manual_seed(1234)

# three classes on a ring: the label is the sector of the angle
angles = torch.linspace(0, 6.0, 240)
radius = 1.0 + 0.1 * torch.cos(angles * 7)
features = torch.stack([radius * torch.cos(angles), radius * torch.sin(angles)], dim=1)
labels = (angles / 2.0).long().clamp(max=2)
print('features', features.shape, features.dtype, 'labels', labels.shape, labels.dtype)
print('class counts', [int((labels == c).sum()) for c in range(3)])

dataset = TensorDataset(features, labels)
train_set = torch.utils.data.Subset(dataset, range(0, 240, 2))
test_set = torch.utils.data.Subset(dataset, range(1, 240, 2))
train_loader = DataLoader(train_set, batch_size=20, shuffle=False)
test_loader = DataLoader(test_set, batch_size=40)
print('batches per epoch:', len(train_loader), 'test batches:', len(test_loader))

model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * (0.9 + i)).view_as(p) * 0.4)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)


def evaluate():
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in test_loader:
            xb, yb = xb.to(device), yb.to(device)
            pred = model(xb).argmax(dim=1)
            correct += (pred == yb).sum().item()
            total += yb.size(0)
    return correct / total


for epoch in range(1, 9):
    model.train()
    running = 0.0
    for batch_idx, (xb, yb) in enumerate(train_loader):
        xb, yb = xb.to(device), yb.to(device)
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * xb.size(0)
    print(f'Epoch {epoch}: train loss {running / len(train_set):.4f}, test accuracy {100 * evaluate():.1f}%')

first = next(iter(test_loader))
print('first test batch:', [tuple(t.shape) for t in first], first[1][:8])
