"""Sequence models: an LSTM and a GRU predicting the next value of a sine wave, with gradient
clipping, hidden state carried and detached between chunks, and batch_first inputs."""
import torch
import torch.nn as nn

torch.manual_seed(7)

steps = torch.arange(0, 94, dtype=torch.float32)
wave = torch.sin(steps * 0.3) * 0.8
inputs = wave[:-1].view(3, 31, 1)   # three sequences of 31 steps, batch first
targets = wave[1:].view(3, 31, 1)


class Forecaster(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(input_size=1, hidden_size=6, num_layers=2, batch_first=True)
        self.head = nn.Linear(6, 1)

    def forward(self, x, state=None):
        out, state = self.rnn(x, state)
        return self.head(out), state


def fixed(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i).view_as(p) * 0.3)
    return model


for cell in (nn.LSTM, nn.GRU):
    model = fixed(Forecaster(cell))
    print(model)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
    for epoch in range(6):
        state = None
        total = 0.0
        for chunk in range(0, 31, 10):
            x, y = inputs[:, chunk:chunk + 10], targets[:, chunk:chunk + 10]
            pred, state = model(x, state)
            state = tuple(s.detach() for s in state) if isinstance(state, tuple) else state.detach()
            loss = nn.functional.mse_loss(pred, y)
            optimizer.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            total += loss.item()
        print(f'{cell.__name__} epoch {epoch}: loss {total:.5f} last grad norm {norm.item():.4f}')
    shapes = [tuple(s.shape) for s in state] if isinstance(state, tuple) else tuple(state.shape)
    print('final state shapes', shapes)
    with torch.no_grad():
        pred, _ = model(inputs[:1, :5])
    print('first predictions', pred.view(-1))

cell = nn.LSTMCell(2, 3)
fixed(cell)
h = c = torch.zeros(1, 3)
for t in range(3):
    h, c = cell(torch.tensor([[float(t), 1.0 - t]]), (h, c))
print('LSTMCell h', h, 'c', c)
