"""A pre-norm transformer block written out by hand (causal self-attention with a tril mask and
masked_fill, GELU MLP, residuals, LayerNorm), checked against F.scaled_dot_product_attention and
nn.MultiheadAttention on the same weights, then trained a few steps on a copy task."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads, block):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer('mask', torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        fused = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        self.max_difference = (y - fused).abs().max().item()
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim=8, heads=2, block=6):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, block)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


torch.manual_seed(3)
block = Block()
with torch.no_grad():
    for i, (name, p) in enumerate(block.named_parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + i).view_as(p) * 0.4)
print(block)
print('buffers:', [(n, tuple(b.shape)) for n, b in block.named_buffers()])

x = torch.cos(torch.arange(2 * 6 * 8, dtype=torch.float32) * 0.31).view(2, 6, 8)
out = block(x)
print('output', out.shape, out[0, :2])
print('hand-written attention matches SDPA:', block.attn.max_difference < 1e-6)

mha = nn.MultiheadAttention(8, 2, batch_first=True)
with torch.no_grad():
    mha.in_proj_weight.copy_(block.attn.qkv.weight)
    mha.in_proj_bias.copy_(block.attn.qkv.bias)
    mha.out_proj.weight.copy_(block.attn.proj.weight)
    mha.out_proj.bias.copy_(block.attn.proj.bias)
h = block.ln1(x)
causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
mha_out, weights = mha(h, h, h, attn_mask=causal)
print('MultiheadAttention agrees:', torch.allclose(mha_out, block.attn(h), atol=1e-5), 'weights', tuple(weights.shape))
print('attention rows sum to one:', torch.allclose(weights.sum(-1), torch.ones(2, 6)))

optimizer = torch.optim.AdamW(block.parameters(), lr=3e-3)
for step in range(15):
    loss = F.mse_loss(block(x), x.flip(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 5 == 4:
        print(f'step {step + 1}: loss {loss.item():.5f}')
