"""A character bigram language model: nn.Embedding feeding a linear head, trained with
cross-entropy and Adam on a fixed text, then greedy decoding one character at a time."""
import torch
import torch.nn as nn
import torch.nn.functional as F

text = ('the quick brown fox jumps over the lazy dog. ' * 4 +
        'a stitch in time saves nine. the early bird catches the worm. ')
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print(f'{len(text)} characters, vocabulary of {len(chars)}: {"".join(chars)!r}')
print(data[:16], data.dtype)


class Bigram(nn.Module):
    def __init__(self, vocab, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        return self.head(self.norm(self.embed(idx)))


model = Bigram(len(chars))
with torch.no_grad():
    model.embed.weight.copy_(torch.sin(torch.arange(model.embed.weight.numel(), dtype=torch.float32) * 0.61)
                             .view_as(model.embed.weight))
    model.head.weight.copy_(torch.cos(torch.arange(model.head.weight.numel(), dtype=torch.float32) * 0.43)
                            .view_as(model.head.weight) * 0.3)
    model.head.bias.zero_()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)

inputs, targets = data[:-1], data[1:]
for step in range(80):
    logits = model(inputs)
    loss = F.cross_entropy(logits, targets)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 20 == 0 or step == 79:
        print(f'step {step:2d} loss {loss.item():.4f} perplexity {loss.exp().item():.3f}')

model.eval()
with torch.no_grad():
    idx = torch.tensor([stoi['t']])
    out = ['t']
    for _ in range(30):
        probs = F.softmax(model(idx[-1:]), dim=-1)
        nxt = torch.argmax(probs, dim=-1)
        idx = torch.cat([idx, nxt])
        out.append(itos[nxt.item()])
print('greedy:', ''.join(out))
print('top 3 after "e":', [itos[i] for i in model(torch.tensor([stoi['e']])).topk(3).indices[0].tolist()])
optimizer.zero_grad(set_to_none=True)
print('embedding grad after zero_grad(set_to_none=True):', model.embed.weight.grad)
