"""W10: a nanoGPT training step (the model of karpathy/nanoGPT's model.py, at a CPU size).

GPT with 2 blocks, 4 heads, embedding 64, block size 32, vocabulary 65 (shakespeare_char's),
batch 8: token and position embeddings, pre-norm blocks of causal self-attention
(F.scaled_dot_product_attention, as nanoGPT calls it) and a GELU MLP, tied output head,
cross-entropy; AdamW (weight decay 0.1). One timed step = forward + backward + AdamW step
(+ grad reset), eager and with the model through ``compile`` (nanoGPT compiles by default).
No hand-written NumPy column and no target: the figure says where a real program stands.
"""
import math

import _common  # noqa: F401  (pins threads; must precede numpy)
import numpy as np

ID = "W10"
TITLE = "nanoGPT step: 2 layers, 4 heads, 64 wide, block 32, batch 8, AdamW"
KIND = "timed"
VARIANTS = [("step", "ms/step", 1e3), ("compiled step", "ms/step", 1e3)]
TARGETS = {}

N_LAYER, N_HEAD, N_EMBD, BLOCK, VOCAB, BATCH = 2, 4, 64, 32, 65, 8
LR, WEIGHT_DECAY = 1e-3, 0.1


def _model(T):
    nn, F = T.nn, T.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(N_EMBD, 3 * N_EMBD)
            self.c_proj = nn.Linear(N_EMBD, N_EMBD)

        def forward(self, x):
            B, Tn, C = x.size()
            q, k, v = self.c_attn(x).split(N_EMBD, dim=2)
            k = k.view(B, Tn, N_HEAD, C // N_HEAD).transpose(1, 2)
            q = q.view(B, Tn, N_HEAD, C // N_HEAD).transpose(1, 2)
            v = v.view(B, Tn, N_HEAD, C // N_HEAD).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, Tn, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(N_EMBD, 4 * N_EMBD)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * N_EMBD, N_EMBD)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(N_EMBD), CausalSelfAttention()
            self.ln_2, self.mlp = nn.LayerNorm(N_EMBD), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, N_EMBD), nn.Embedding(BLOCK, N_EMBD)
            self.h = nn.ModuleList([Block() for _ in range(N_LAYER)])
            self.ln_f = nn.LayerNorm(N_EMBD)
            self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
            self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = T.arange(0, t, dtype=T.long)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    return GPT()


def _build(T, seed, compiled=False):
    rng = np.random.default_rng(seed)
    model = _model(T)
    params = dict(model.named_parameters())
    with T.no_grad():  # the same weights for every framework: nanoGPT's init, drawn by NumPy
        for name, p in params.items():
            if name.endswith('bias'):
                p.zero_()
            elif p.dim() == 1:  # layer norms' weights
                p.fill_(1.0)
            else:
                std = 0.02 / math.sqrt(2 * N_LAYER) if name.endswith('c_proj.weight') else 0.02
                p.copy_(T.tensor(rng.normal(0.0, std, tuple(p.shape)).astype(np.float32)))
    idx = T.tensor(rng.integers(0, VOCAB, (BATCH, BLOCK)))
    targets = T.tensor(rng.integers(0, VOCAB, (BATCH, BLOCK)))
    step_model = _common.compiled(T, model) if compiled else model
    opt = T.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)

    def forward_backward():
        loss = step_model(idx, targets)
        loss.backward()
        return loss

    def update():
        opt.step()
        opt.zero_grad(set_to_none=True)

    return params, forward_backward, update


def make(T, seed=0, variant="step"):
    return _common.training_step(_build, T, seed, compiled=variant.startswith("compiled"))


def grads(T, seed=0):
    params, forward_backward, _ = _build(T, seed)
    forward_backward()
    return {k: _common.to_numpy(p.grad) for k, p in params.items()}


if __name__ == "__main__":
    import sys
    import run
    sys.exit(run.main(["--only", ID] + sys.argv[1:]))
