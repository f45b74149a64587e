"""A small convolutional network on synthetic 12x12 images of stripes (horizontal or vertical):
Conv2d, BatchNorm2d, MaxPool2d, Dropout (inactive in eval), AdamW with a cosine schedule."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(42)


def stripes(n):
    images, labels = [], []
    grid = torch.arange(12, dtype=torch.float32)
    for i in range(n):
        phase = (i % 4) * 0.8
        wave = torch.sin(grid * (1.0 + 0.25 * (i % 3)) + phase)
        if i % 2 == 0:
            image, label = wave.view(12, 1).expand(12, 12), 0
        else:
            image, label = wave.view(1, 12).expand(12, 12), 1
        images.append(image.unsqueeze(0))
        labels.append(label)
    return torch.stack(images), torch.tensor(labels)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1, bias=False)  # BatchNorm follows
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
        self.pool = nn.MaxPool2d(2)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(8 * 4 * 4, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = F.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        return self.fc(self.dropout(x))


images, labels = stripes(32)
print('images', images.shape, images.dtype, 'labels', labels.tolist()[:8])
model = ConvNet()
with torch.no_grad():
    for name, p in model.named_parameters():
        if p.dim() > 1:
            p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 1.7).view_as(p) * 0.3)
        elif 'bn' not in name:
            p.zero_()
print(model)

model.eval()
with torch.no_grad():
    print('untrained logits', model(images[:2]))
    trace = images[:1]
    for layer in [model.conv1, model.bn1, nn.ReLU(), model.pool, model.conv2]:
        trace = layer(trace)
        print(f'  {type(layer).__name__:12s} -> {tuple(trace.shape)}')

optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
model.dropout.p = 0.0  # deterministic training: no dropout masks
for epoch in range(10):
    model.train()
    optimizer.zero_grad()
    logits = model(images)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    scheduler.step()
    accuracy = (logits.argmax(1) == labels).float().mean()
    lr = optimizer.param_groups[0]['lr']
    print(f'epoch {epoch}: loss {loss.item():.4f} accuracy {accuracy.item():.3f} lr {lr:.5f}')

print('running mean', model.bn1.running_mean)
print('running var ', model.bn1.running_var)
print('batches tracked', model.bn1.num_batches_tracked)
model.eval()
with torch.no_grad():
    probs = F.softmax(model(images[:4]), dim=1)
print(probs)
