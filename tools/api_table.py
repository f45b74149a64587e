#!/usr/bin/env python
"""The API table: about 620 of the most-used PyTorch APIs, each called in PyTorch and in
leafgrad on the same inputs, and compared.

    python tools/api_table.py [--failures] [--top N]

Each row names one API and gives a small program that uses it (an expression, or statements
leaving their result in ``out``). The rows are ordered by how often programs use the API (the
order of PyTorch's tensor basics, layers, losses, optimizers and utilities in public training
code, an estimate: the first 300 are the ones nearly every program meets). A program runs once
per library in a namespace holding ``T`` (the library), ``nn``, ``F``, ``optim``, ``data`` and a
few tensors drawn after ``T.manual_seed(0)`` (leafgrad's generator gives PyTorch's numbers).

A row is *correct* when both libraries return the same thing (tensors: shape, dtype,
requires_grad and values within float32 tolerance; numbers, strings, sequences and dicts
likewise, 'leafgrad' read as 'torch' in strings) or raise the same exception type. A row whose
API leafgrad lacks counts as wrong: so the figure is "present and correct".
"""
import argparse
import io
import os
import sys
import tempfile
import warnings

import numpy as np

SETUP = '''
T.manual_seed(0)
x = T.randn(3, 4)
y = T.randn(3, 4)
v = T.randn(4)
m = T.randn(4, 4)
sq = m @ m.T + 4 * T.eye(4)
img = T.randn(2, 3, 8, 8)
seq = T.randn(5, 2, 4)
ix = T.tensor([0, 2, 1])
labels = T.tensor([1, 0, 3])
w = T.randn(3, 4, requires_grad=True)
'''

# (api, program): programs are expressions, or statements that assign ``out``
ROWS = [
    # ---- tensors: creation, shape, conversion (the first hundred) ----
    ('torch.tensor', 'T.tensor([[1., 2.], [3., 4.]])'),
    ('Tensor.size', 'x.size()'),
    ('Tensor.shape', 'tuple(x.shape)'),
    ('Tensor.view', 'x.view(2, 6)'),
    ('torch.zeros', 'T.zeros(2, 3)'),
    ('torch.cat', 'T.cat([x, y], 1)'),
    ('Tensor.to', 'x.to(T.float64)'),
    ('torch.ones', 'T.ones(2, 3, dtype=T.int64)'),
    ('torch.randn', 'T.randn(2, 3)'),
    ('torch.arange', 'T.arange(0, 10, 3)'),
    ('Tensor.item', 'x[0, 0].item()'),
    ('torch.no_grad', 'out = None\nwith T.no_grad():\n    out = (w * 2).requires_grad'),
    ('Tensor.backward', 'out = None\n(w * w).sum().backward()\nout = w.grad'),
    ('Tensor.unsqueeze', 'x.unsqueeze(1)'),
    ('torch.stack', 'T.stack([x, y], 0)'),
    ('Tensor.squeeze', 'x.unsqueeze(0).squeeze()'),
    ('Tensor.permute', 'img.permute(0, 2, 3, 1)'),
    ('Tensor.transpose', 'x.transpose(0, 1)'),
    ('Tensor.reshape', 'x.reshape(-1)'),
    ('Tensor.contiguous', 'x.t().contiguous()'),
    ('Tensor.sum', 'x.sum(1)'),
    ('Tensor.mean', 'x.mean(0, keepdim=True)'),
    ('Tensor.max', 'tuple(x.max(1))'),
    ('Tensor.argmax', 'x.argmax(1)'),
    ('Tensor.cpu', 'x.cpu()'),
    ('Tensor.numpy', 'x.numpy()'),
    ('Tensor.detach', 'w.detach()'),
    ('torch.from_numpy', 'T.from_numpy(np.arange(6.).reshape(2, 3))'),
    ('Tensor.float', 'ix.float()'),
    ('Tensor.long', 'x.long()'),
    ('Tensor.clone', 'w.clone()'),
    ('torch.matmul', 'T.matmul(x, m)'),
    ('Tensor.__matmul__', 'x @ m'),
    ('torch.device', 'str(T.device("cpu"))'),
    ('torch.cuda.is_available', 'T.cuda.is_available()'),
    ('torch.manual_seed', 'out = None\nT.manual_seed(3)\nout = T.rand(2)'),
    ('torch.zeros_like', 'T.zeros_like(x)'),
    ('torch.ones_like', 'T.ones_like(ix)'),
    ('torch.rand', 'T.rand(2, 2)'),
    ('torch.randint', 'T.randint(0, 10, (5,))'),
    ('torch.randint(high, size)', 'T.randint(10, (5,))'),
    ('torch.exp', 'T.exp(x)'),
    ('torch.log', 'T.log(x.abs())'),
    ('torch.sqrt', 'T.sqrt(x.abs())'),
    ('torch.abs', 'T.abs(x)'),
    ('torch.clamp', 'T.clamp(x, -0.5, 0.5)'),
    ('torch.where', 'T.where(x > 0, x, y)'),
    ('torch.max', 'T.max(x)'),
    ('torch.min', 'T.min(x, y)'),
    ('torch.sum', 'T.sum(x)'),
    ('torch.mean', 'T.mean(x)'),
    ('torch.argmax', 'T.argmax(x)'),
    ('torch.softmax', 'T.softmax(x, 1)'),
    ('torch.sigmoid', 'T.sigmoid(x)'),
    ('torch.tanh', 'T.tanh(x)'),
    ('Tensor.flatten', 'img.flatten(1)'),
    ('torch.flatten', 'T.flatten(img)'),
    ('Tensor.expand', 'v.expand(3, 4)'),
    ('Tensor.repeat', 'v.repeat(2, 1)'),
    ('torch.eye', 'T.eye(3)'),
    ('torch.full', 'T.full((2, 2), 7.)'),
    ('torch.linspace', 'T.linspace(0, 1, 5)'),
    ('torch.empty', 'T.empty(2, 3).shape'),
    ('Tensor.fill_', 'T.zeros(3).fill_(2.)'),
    ('Tensor.zero_', 'x.clone().zero_()'),
    ('Tensor.type', 'x.type()'),
    ('Tensor.dtype', 'str(x.dtype)'),
    ('Tensor.device', 'str(x.device)'),
    ('Tensor.requires_grad_', 'x.clone().requires_grad_().requires_grad'),
    ('Tensor.grad', 'out = None\nw.sum().backward()\nout = w.grad'),
    ('Tensor.dim', 'img.dim()'),
    ('Tensor.numel', 'img.numel()'),
    ('Tensor.tolist', 'x.tolist()'),
    ('Tensor.__getitem__', 'x[1:, ::2]'),
    ('Tensor.__setitem__', 'out = x.clone()\nout[0] = 5.'),
    ('Tensor.masked_fill', 'x.masked_fill(x > 0, 0.)'),
    ('Tensor.chunk', 'x.chunk(2, 1)'),
    ('torch.split', 'T.split(x, [1, 3], 1)'),
    ('Tensor.split', 'x.split(2)'),
    ('Tensor.index_select', 'x.index_select(1, ix)'),
    ('torch.gather', 'T.gather(x, 1, T.tensor([[0], [1], [2]]))'),
    ('Tensor.scatter_', 'T.zeros(3, 4).scatter_(1, T.tensor([[0], [1], [2]]), 1.)'),
    ('torch.sort', 'tuple(T.sort(x, 1))'),
    ('torch.topk', 'tuple(T.topk(x, 2))'),
    ('Tensor.t', 'x.t()'),
    ('Tensor.pow', 'x.pow(2)'),
    ('torch.pow', 'T.pow(x.abs(), 0.5)'),
    ('Tensor.norm', 'x.norm()'),
    ('torch.norm', 'T.norm(x, dim=1)'),
    ('Tensor.std', 'x.std(0)'),
    ('Tensor.var', 'x.var(1, unbiased=False)'),
    ('torch.cumsum', 'T.cumsum(x, 1)'),
    ('torch.allclose', 'T.allclose(x, x + 1e-9)'),
    ('torch.equal', 'T.equal(x, x.clone())'),
    ('torch.isnan', 'T.isnan(x / 0 * 0)'),
    ('Tensor.any', '(x > 2).any()'),
    ('Tensor.all', '(x > -5).all()'),
    ('torch.bmm', 'T.bmm(seq, seq.transpose(1, 2))'),
    ('torch.mm', 'T.mm(x, m)'),
    ('torch.einsum', 'T.einsum("ij,jk->ik", x, m)'),
    ('torch.save/load', 'out = None\nb = io.BytesIO()\nT.save({"a": x}, b)\nb.seek(0)\nout = T.load(b)["a"]'),
    # ---- nn core ----
    ('nn.Module', 'out = None\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n'
                  '        self.l = nn.Linear(4, 2)\n    def forward(self, a):\n        return self.l(a)\nout = M()(x)'),
    ('nn.Linear', 'nn.Linear(4, 2)(x)'),
    ('nn.ReLU', 'nn.ReLU()(x)'),
    ('nn.Sequential', 'nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))(x)'),
    ('F.relu', 'F.relu(x)'),
    ('nn.Conv2d', 'nn.Conv2d(3, 4, 3, padding=1)(img)'),
    ('nn.Dropout', 'nn.Dropout(0.5)(x)'),
    ('nn.CrossEntropyLoss', 'nn.CrossEntropyLoss()(x, labels[:3].clamp(max=3))'),
    ('F.cross_entropy', 'F.cross_entropy(x, T.tensor([1, 0, 3]))'),
    ('nn.MSELoss', 'nn.MSELoss()(x, y)'),
    ('F.mse_loss', 'F.mse_loss(x, y, reduction="sum")'),
    ('nn.BatchNorm2d', 'nn.BatchNorm2d(3)(img)'),
    ('nn.LayerNorm', 'nn.LayerNorm(4)(x)'),
    ('nn.Embedding', 'nn.Embedding(10, 3)(T.tensor([[1, 2], [3, 9]]))'),
    ('nn.LSTM', 'nn.LSTM(4, 3)(seq)[0]'),
    ('nn.GRU', 'nn.GRU(4, 3, batch_first=True)(seq)[1]'),
    ('nn.Parameter', 'nn.Parameter(T.ones(2))'),
    ('Module.parameters', '[p.shape for p in nn.Linear(4, 2).parameters()]'),
    ('Module.named_parameters', '[n for n, _ in nn.Sequential(nn.Linear(4, 2), nn.Linear(2, 1)).named_parameters()]'),
    ('Module.state_dict', 'list(nn.Linear(4, 2).state_dict().keys())'),
    ('Module.load_state_dict', 'out = nn.Linear(4, 2)\nout.load_state_dict(nn.Linear(4, 2).state_dict())\nout = out(x)'),
    ('Module.eval', 'nn.Dropout(0.5).eval()(x)'),
    ('Module.train', 'nn.Dropout(0.5).train()(x)'),
    ('Module.to', 'nn.Linear(4, 2).to(T.float64)(x.double())'),
    ('Module.zero_grad', 'out = nn.Linear(4, 2)\nout(x).sum().backward()\nout.zero_grad()\nout = out.weight.grad'),
    ('Module.apply', 'out = nn.Sequential(nn.Linear(4, 2))\nout.apply(lambda mod: None)\nout = out(x)'),
    ('Module.modules', 'len(list(nn.Sequential(nn.Linear(4, 2), nn.ReLU()).modules()))'),
    ('Module.children', 'len(list(nn.Sequential(nn.Linear(4, 2), nn.ReLU()).children()))'),
    ('Module.register_buffer', 'out = nn.Module()\nout.register_buffer("b", T.ones(2))\nout = dict(out.named_buffers())'),
    ('nn.ModuleList', 'len(nn.ModuleList([nn.Linear(2, 2) for _ in range(3)]))'),
    ('nn.ModuleDict', 'list(nn.ModuleDict({"a": nn.Linear(2, 2)}).keys())'),
    ('nn.Tanh', 'nn.Tanh()(x)'),
    ('nn.Sigmoid', 'nn.Sigmoid()(x)'),
    ('nn.Softmax', 'nn.Softmax(dim=1)(x)'),
    ('nn.LogSoftmax', 'nn.LogSoftmax(dim=1)(x)'),
    ('F.softmax', 'F.softmax(x, dim=-1)'),
    ('F.log_softmax', 'F.log_softmax(x, dim=-1)'),
    ('F.dropout', 'F.dropout(x, 0.3, training=True)'),
    ('nn.MaxPool2d', 'nn.MaxPool2d(2)(img)'),
    ('F.max_pool2d', 'F.max_pool2d(img, 2, 2)'),
    ('nn.AvgPool2d', 'nn.AvgPool2d(2)(img)'),
    ('nn.AdaptiveAvgPool2d', 'nn.AdaptiveAvgPool2d((1, 1))(img)'),
    ('F.adaptive_avg_pool2d', 'F.adaptive_avg_pool2d(img, 3)'),
    ('nn.Flatten', 'nn.Flatten()(img)'),
    ('nn.Conv1d', 'nn.Conv1d(2, 3, 3)(seq.permute(1, 0, 2).reshape(2, 2, 10))'),
    ('nn.ConvTranspose2d', 'nn.ConvTranspose2d(3, 2, 2, stride=2)(img)'),
    ('nn.BatchNorm1d', 'nn.BatchNorm1d(4)(x)'),
    ('nn.GELU', 'nn.GELU()(x)'),
    ('F.gelu', 'F.gelu(x, approximate="tanh")'),
    ('nn.LeakyReLU', 'nn.LeakyReLU(0.1)(x)'),
    ('F.leaky_relu', 'F.leaky_relu(x, 0.2)'),
    ('nn.Identity', 'nn.Identity()(x)'),
    ('nn.BCELoss', 'nn.BCELoss()(T.sigmoid(x), (y > 0).float())'),
    ('nn.BCEWithLogitsLoss', 'nn.BCEWithLogitsLoss()(x, (y > 0).float())'),
    ('F.binary_cross_entropy_with_logits', 'F.binary_cross_entropy_with_logits(x, (y > 0).float())'),
    ('F.binary_cross_entropy', 'F.binary_cross_entropy(T.sigmoid(x), (y > 0).float())'),
    ('nn.NLLLoss', 'nn.NLLLoss()(F.log_softmax(x, 1), T.tensor([1, 0, 3]))'),
    ('F.nll_loss', 'F.nll_loss(F.log_softmax(x, 1), T.tensor([1, 0, 3]))'),
    ('nn.L1Loss', 'nn.L1Loss()(x, y)'),
    ('F.l1_loss', 'F.l1_loss(x, y)'),
    ('nn.SmoothL1Loss', 'nn.SmoothL1Loss()(x, y)'),
    ('nn.KLDivLoss', 'nn.KLDivLoss(reduction="batchmean")(F.log_softmax(x, 1), F.softmax(y, 1))'),
    ('F.kl_div', 'F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1), reduction="batchmean")'),
    ('F.pad', 'F.pad(x, (1, 2))'),
    ('F.interpolate', 'F.interpolate(img, scale_factor=2, mode="nearest")'),
    ('F.interpolate bilinear', 'F.interpolate(img, size=(5, 5), mode="bilinear", align_corners=False)'),
    ('F.normalize', 'F.normalize(x, dim=1)'),
    ('F.cosine_similarity', 'F.cosine_similarity(x, y)'),
    ('F.one_hot', 'F.one_hot(T.tensor([0, 2, 1]), 4)'),
    ('F.linear', 'F.linear(x, m, v)'),
    ('F.conv2d', 'F.conv2d(img, T.ones(2, 3, 3, 3))'),
    ('F.embedding', 'F.embedding(T.tensor([1, 0]), m)'),
    ('F.sigmoid', 'F.sigmoid(x)'),
    ('F.tanh', 'F.tanh(x)'),
    ('F.silu', 'F.silu(x)'),
    ('nn.SiLU', 'nn.SiLU()(x)'),
    ('F.elu', 'F.elu(x)'),
    ('F.softplus', 'F.softplus(x)'),
    ('F.layer_norm', 'F.layer_norm(x, (4,))'),
    ('F.batch_norm', 'F.batch_norm(x, T.zeros(4), T.ones(4), training=True)'),
    ('F.avg_pool2d', 'F.avg_pool2d(img, 2)'),
    ('F.scaled_dot_product_attention', 'F.scaled_dot_product_attention(seq, seq, seq, is_causal=True)'),
    ('nn.MultiheadAttention', 'nn.MultiheadAttention(4, 2)(seq, seq, seq)[0]'),
    ('nn.TransformerEncoderLayer', 'nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)(seq)'),
    ('nn.TransformerEncoder', 'nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 2)(seq)'),
    ('nn.Transformer', 'nn.Transformer(4, 2, 1, 1, 8, dropout=0.0)(seq, seq[:3])'),
    ('nn.RNN', 'nn.RNN(4, 3)(seq)[0]'),
    ('nn.LSTMCell', 'nn.LSTMCell(4, 3)(x)[0]'),
    ('nn.GRUCell', 'nn.GRUCell(4, 3)(x)'),
    ('nn.GroupNorm', 'nn.GroupNorm(1, 3)(img)'),
    ('nn.InstanceNorm2d', 'nn.InstanceNorm2d(3)(img)'),
    ('nn.Dropout2d', 'nn.Dropout2d(0.5)(img)'),
    ('nn.Upsample', 'nn.Upsample(scale_factor=2)(img)'),
    ('nn.PixelShuffle', 'nn.PixelShuffle(2)(T.randn(1, 4, 2, 2))'),
    ('nn.Softplus', 'nn.Softplus()(x)'),
    ('nn.ELU', 'nn.ELU()(x)'),
    ('nn.PReLU', 'nn.PReLU()(x)'),
    ('nn.Hardtanh', 'nn.Hardtanh()(x)'),
    ('nn.ReLU6', 'nn.ReLU6()(x * 4)'),
    ('nn.Mish', 'nn.Mish()(x)'),
    ('nn.CosineSimilarity', 'nn.CosineSimilarity()(x, y)'),
    ('nn.Bilinear', 'nn.Bilinear(4, 4, 2)(x, y)'),
    ('nn.ZeroPad2d', 'nn.ZeroPad2d(1)(img)'),
    ('nn.Unflatten', 'nn.Unflatten(1, (2, 2))(x)'),
    ('nn.EmbeddingBag', 'nn.EmbeddingBag(10, 3)(T.tensor([[1, 2], [3, 4]]))'),
    ('nn.Conv3d', 'nn.Conv3d(1, 2, 2)(T.randn(1, 1, 3, 3, 3))'),
    ('nn.MaxPool1d', 'nn.MaxPool1d(2)(seq)'),
    ('nn.AdaptiveMaxPool2d', 'nn.AdaptiveMaxPool2d(2)(img)'),
    ('nn.RMSNorm', 'nn.RMSNorm(4)(x)'),
    ('nn.init.xavier_uniform_', 'nn.init.xavier_uniform_(T.empty(3, 4))'),
    ('nn.init.kaiming_normal_', 'nn.init.kaiming_normal_(T.empty(3, 4))'),
    ('nn.init.normal_', 'nn.init.normal_(T.empty(3), 0, 0.02)'),
    ('nn.init.zeros_', 'nn.init.zeros_(T.empty(3))'),
    ('nn.init.constant_', 'nn.init.constant_(T.empty(3), 0.5)'),
    ('nn.init.uniform_', 'nn.init.uniform_(T.empty(3), -1, 1)'),
    ('nn.init.xavier_normal_', 'nn.init.xavier_normal_(T.empty(3, 4))'),
    ('nn.init.kaiming_uniform_', 'nn.init.kaiming_uniform_(T.empty(3, 4), a=5 ** 0.5)'),
    ('nn.init.orthogonal_', 'nn.init.orthogonal_(T.empty(3, 3))'),
    ('nn.init.ones_', 'nn.init.ones_(T.empty(2))'),
    ('nn.init.trunc_normal_', 'nn.init.trunc_normal_(T.empty(3), std=0.02)'),
    ('nn.utils.clip_grad_norm_', 'out = nn.Linear(4, 2)\nout(x).sum().backward()\n'
                                 'out = nn.utils.clip_grad_norm_(out.parameters(), 0.1)'),
    ('nn.utils.clip_grad_value_', 'out = nn.Linear(4, 2)\nout(x).sum().backward()\n'
                                  'nn.utils.clip_grad_value_(out.parameters(), 0.1)\nout = out.weight.grad'),
    ('nn.utils.rnn.pad_sequence', 'nn.utils.rnn.pad_sequence([T.ones(2), T.ones(3)], batch_first=True)'),
    ('nn.utils.rnn.pack_padded_sequence', 'nn.utils.rnn.pack_padded_sequence(seq, [5, 3]).data'),
    ('nn.utils.parameters_to_vector', 'nn.utils.parameters_to_vector(nn.Linear(2, 2).parameters())'),
    # ---- optimizers, schedulers, data ----
    ('optim.Adam', 'out = nn.Linear(4, 2)\no = optim.Adam(out.parameters(), lr=0.1)\n'
                   'out(x).sum().backward()\no.step()\nout = out.weight'),
    ('optim.SGD', 'out = nn.Linear(4, 2)\no = optim.SGD(out.parameters(), lr=0.1, momentum=0.9)\n'
                  'out(x).sum().backward()\no.step()\no.step()\nout = out.weight'),
    ('Optimizer.zero_grad', 'out = nn.Linear(4, 2)\no = optim.SGD(out.parameters(), lr=0.1)\n'
                            'out(x).sum().backward()\no.zero_grad()\nout = out.weight.grad'),
    ('optim.AdamW', 'out = nn.Linear(4, 2)\no = optim.AdamW(out.parameters(), lr=0.1)\n'
                    'out(x).sum().backward()\no.step()\nout = out.weight'),
    ('optim.RMSprop', 'out = nn.Linear(4, 2)\no = optim.RMSprop(out.parameters(), lr=0.1)\n'
                      'out(x).sum().backward()\no.step()\nout = out.weight'),
    ('optim.Adagrad', 'out = nn.Linear(4, 2)\no = optim.Adagrad(out.parameters(), lr=0.1)\n'
                      'out(x).sum().backward()\no.step()\nout = out.weight'),
    ('Optimizer.state_dict', 'out = nn.Linear(4, 2)\no = optim.Adam(out.parameters())\n'
                             'out(x).sum().backward()\no.step()\nout = o.state_dict()["state"][0]["exp_avg"]'),
    ('Optimizer.param_groups', 'optim.SGD(nn.Linear(2, 2).parameters(), lr=0.5).param_groups[0]["lr"]'),
    ('lr_scheduler.StepLR', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                            's = optim.lr_scheduler.StepLR(out, 2, 0.5)\n'
                            'for _ in range(5):\n    out.step()\n    s.step()\nout = s.get_last_lr()'),
    ('lr_scheduler.CosineAnnealingLR', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                                       's = optim.lr_scheduler.CosineAnnealingLR(out, 10)\n'
                                       'for _ in range(3):\n    out.step()\n    s.step()\nout = s.get_last_lr()'),
    ('lr_scheduler.ReduceLROnPlateau', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                                       's = optim.lr_scheduler.ReduceLROnPlateau(out, patience=0)\n'
                                       'for i in range(4):\n    s.step(1.0)\nout = out.param_groups[0]["lr"]'),
    ('lr_scheduler.LambdaLR', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                              's = optim.lr_scheduler.LambdaLR(out, lambda e: 0.9 ** e)\n'
                              'out.step()\ns.step()\nout = s.get_last_lr()'),
    ('lr_scheduler.OneCycleLR', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                                's = optim.lr_scheduler.OneCycleLR(out, 1.0, total_steps=10)\n'
                                'out.step()\ns.step()\nout = s.get_last_lr()'),
    ('lr_scheduler.MultiStepLR', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                                 's = optim.lr_scheduler.MultiStepLR(out, [1, 2])\n'
                                 'for _ in range(3):\n    out.step()\n    s.step()\nout = s.get_last_lr()'),
    ('lr_scheduler.ExponentialLR', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                                   's = optim.lr_scheduler.ExponentialLR(out, 0.5)\nout.step()\ns.step()\n'
                                   'out = s.get_last_lr()'),
    ('lr_scheduler.CyclicLR', 'out = optim.SGD(nn.Linear(2, 2).parameters(), lr=1.)\n'
                              's = optim.lr_scheduler.CyclicLR(out, 0.1, 1.0, step_size_up=2)\nout.step()\ns.step()\n'
                              'out = s.get_last_lr()'),
    ('optim.LBFGS', 'out = nn.Linear(4, 1)\no = optim.LBFGS(out.parameters(), max_iter=3)\n'
                    'def closure():\n    o.zero_grad()\n    l = (out(x) ** 2).sum()\n    l.backward()\n    return l\n'
                    'o.step(closure)\nout = out.weight'),
    ('data.DataLoader', '[b for b in data.DataLoader(data.TensorDataset(x, ix), batch_size=2)]'),
    ('data.TensorDataset', 'data.TensorDataset(x, ix)[1]'),
    ('data.Dataset', 'out = None\nclass D(data.Dataset):\n    def __len__(self):\n        return 3\n'
                     '    def __getitem__(self, i):\n        return T.tensor(i)\nout = list(data.DataLoader(D(), 2))'),
    ('data.random_split', '[len(s) for s in data.random_split(range(10), [7, 3])]'),
    ('data.Subset', 'list(data.Subset(range(10), [1, 5]))'),
    ('DataLoader shuffle', '[b for b in data.DataLoader(range(6), batch_size=3, shuffle=True)]'),
    ('data.ConcatDataset', 'len(data.ConcatDataset([range(3), range(4)]))'),
    ('data.WeightedRandomSampler', 'list(data.WeightedRandomSampler([0.1, 0.9, 0.5], 5))'),
    ('data.SubsetRandomSampler', 'list(data.SubsetRandomSampler([1, 4, 7]))'),
    ('data.BatchSampler', 'list(data.BatchSampler(range(5), 2, False))'),
    # ---- autograd ----
    ('torch.autograd.grad', 'T.autograd.grad((w ** 3).sum(), w, create_graph=True)[0]'),
    ('Tensor.requires_grad', 'w.requires_grad'),
    ('Tensor.grad_fn', 'type((w * 2).grad_fn).__name__'),
    ('Tensor.retain_grad', 'out = w * 2\nout.retain_grad()\nout.sum().backward()\nout = out.grad'),
    ('Tensor.register_hook', 'out = []\nw.register_hook(lambda g: out.append(g * 1))\n(w * 3).sum().backward()'),
    ('torch.enable_grad', 'out = None\nwith T.no_grad():\n    with T.enable_grad():\n        out = (w * 2).requires_grad'),
    ('torch.set_grad_enabled', 'out = None\nwith T.set_grad_enabled(False):\n    out = (w * 2).requires_grad'),
    ('torch.inference_mode', 'out = None\nwith T.inference_mode():\n    out = (w * 2).requires_grad'),
    ('autograd.Function', 'out = None\nclass Sq(T.autograd.Function):\n    @staticmethod\n'
                          '    def forward(ctx, a):\n        ctx.save_for_backward(a)\n        return a * a\n'
                          '    @staticmethod\n    def backward(ctx, g):\n        a, = ctx.saved_tensors\n'
                          '        return 2 * a * g\nSq.apply(w).sum().backward()\nout = w.grad'),
    ('autograd.functional.jacobian', 'T.autograd.functional.jacobian(lambda a: a ** 2, v)'),
    ('autograd.functional.hessian', 'T.autograd.functional.hessian(lambda a: (a ** 3).sum(), v)'),
    ('torch.autograd.gradcheck', 'T.autograd.gradcheck(lambda a: a.sin(), T.randn(3, dtype=T.float64, '
                                 'requires_grad=True))'),
    ('utils.checkpoint.checkpoint', 'T.utils.checkpoint.checkpoint(lambda a: a.sin(), w, use_reentrant=False)'),
    ('torch.func.vmap', 'T.func.vmap(T.dot)(x, y)'),
    ('torch.func.grad', 'T.func.grad(lambda a: (a ** 2).sum())(v)'),
    # ---- more tensor maths ----
    ('torch.sin', 'T.sin(x)'),
    ('torch.cos', 'T.cos(x)'),
    ('torch.log_softmax', 'T.log_softmax(x, 1)'),
    ('torch.logsumexp', 'T.logsumexp(x, 1)'),
    ('torch.argmin', 'T.argmin(x, 1)'),
    ('torch.argsort', 'T.argsort(x, 1)'),
    ('torch.unique', 'T.unique(T.tensor([3, 1, 3, 2]))'),
    ('torch.nonzero', 'T.nonzero(x > 0)'),
    ('torch.masked_select', 'T.masked_select(x, x > 0)'),
    ('torch.tril', 'T.tril(m)'),
    ('torch.triu', 'T.triu(m, 1)'),
    ('torch.diag', 'T.diag(v)'),
    ('torch.outer', 'T.outer(v, v)'),
    ('torch.dot', 'T.dot(v, v)'),
    ('torch.clip', 'T.clip(x, max=0.1)'),
    ('torch.round', 'T.round(x * 10)'),
    ('torch.floor', 'T.floor(x)'),
    ('torch.ceil', 'T.ceil(x)'),
    ('torch.sign', 'T.sign(x)'),
    ('torch.prod', 'T.prod(x, 1)'),
    ('torch.std', 'T.std(x)'),
    ('torch.var', 'T.var(x, 0)'),
    ('torch.median', 'T.median(x)'),
    ('torch.cumprod', 'T.cumprod(x, 0)'),
    ('torch.flip', 'T.flip(x, [0])'),
    ('torch.roll', 'T.roll(x, 1, 1)'),
    ('torch.chunk', 'T.chunk(x, 2)'),
    ('torch.meshgrid', 'T.meshgrid(v, v, indexing="ij")'),
    ('torch.multinomial', 'T.multinomial(T.tensor([0.1, 0.5, 0.4]), 4, replacement=True)'),
    ('torch.randperm', 'T.randperm(6)'),
    ('torch.randn_like', 'T.randn_like(x)'),
    ('torch.rand_like', 'T.rand_like(x)'),
    ('torch.full_like', 'T.full_like(x, 3.)'),
    ('torch.empty_like', 'T.empty_like(x).shape'),
    ('torch.normal', 'T.normal(0., 1., (3,))'),
    ('torch.bernoulli', 'T.bernoulli(T.full((5,), 0.5))'),
    ('torch.isinf', 'T.isinf(x / 0)'),
    ('torch.isfinite', 'T.isfinite(x)'),
    ('torch.logical_and', 'T.logical_and(x > 0, y > 0)'),
    ('torch.logical_not', 'T.logical_not(x > 0)'),
    ('torch.maximum', 'T.maximum(x, y)'),
    ('torch.minimum', 'T.minimum(x, y)'),
    ('torch.squeeze', 'T.squeeze(T.ones(1, 3, 1))'),
    ('torch.unsqueeze', 'T.unsqueeze(v, 0)'),
    ('torch.transpose', 'T.transpose(x, 0, 1)'),
    ('torch.permute', 'T.permute(img, (1, 0, 2, 3))'),
    ('torch.reshape', 'T.reshape(x, (4, 3))'),
    ('torch.narrow', 'T.narrow(x, 1, 1, 2)'),
    ('torch.index_select', 'T.index_select(x, 0, T.tensor([0, 0]))'),
    ('torch.repeat_interleave', 'T.repeat_interleave(v, 2)'),
    ('torch.tile', 'T.tile(v, (2,))'),
    ('torch.diagonal', 'T.diagonal(m)'),
    ('torch.trace', 'T.trace(m)'),
    ('torch.det / linalg.det', 'T.linalg.det(sq)'),
    ('torch.inverse', 'T.inverse(sq)'),
    ('torch.linalg.norm', 'T.linalg.norm(x)'),
    ('torch.linalg.inv', 'T.linalg.inv(sq)'),
    ('torch.linalg.solve', 'T.linalg.solve(sq, v)'),
    ('torch.linalg.svd', 'T.linalg.svdvals(m)'),
    ('torch.linalg.eigh', 'T.linalg.eigh(sq)[0]'),
    ('torch.linalg.qr', 'T.linalg.qr(m)[1].abs()'),
    ('torch.linalg.cholesky', 'T.linalg.cholesky(sq)'),
    ('torch.cdist', 'T.cdist(x, y)'),
    ('torch.cross', 'T.cross(x[:, :3], y[:, :3], dim=1)'),
    ('torch.diff', 'T.diff(x)'),
    ('torch.bincount', 'T.bincount(T.tensor([0, 1, 1, 4]))'),
    ('torch.histc', 'T.histc(x, 5)'),
    ('torch.searchsorted', 'T.searchsorted(T.tensor([1., 2, 3]), T.tensor([2.5, 0.]))'),
    ('torch.bucketize', 'T.bucketize(x, T.tensor([-1., 0, 1]))'),
    ('torch.quantile', 'T.quantile(x, 0.25, dim=1)'),
    ('torch.kron', 'T.kron(m[:2, :2], m[:2, :2])'),
    ('torch.cartesian_prod', 'T.cartesian_prod(v[:2], v[:3])'),
    ('torch.tril_indices', 'T.tril_indices(3, 3)'),
    ('torch.erf', 'T.erf(x)'),
    ('torch.erfinv', 'T.erfinv(x.clamp(-0.9, 0.9))'),
    ('torch.lgamma', 'T.lgamma(x.abs() + 0.5)'),
    ('torch.digamma', 'T.digamma(x.abs() + 0.5)'),
    ('torch.special.expit', 'T.special.expit(x)'),
    ('torch.expm1', 'T.expm1(x)'),
    ('torch.log1p', 'T.log1p(x.abs())'),
    ('torch.rsqrt', 'T.rsqrt(x.abs())'),
    ('torch.atan2', 'T.atan2(x, y)'),
    ('torch.fmod', 'T.fmod(x, 0.3)'),
    ('torch.remainder', 'T.remainder(x, 0.3)'),
    ('torch.floor_divide', 'T.floor_divide(T.tensor([7, -7]), 2)'),
    ('torch.div rounding_mode', 'T.div(x, 0.3, rounding_mode="floor")'),
    ('torch.lerp', 'T.lerp(x, y, 0.3)'),
    ('torch.addmm', 'T.addmm(v, x, m)'),
    ('torch.baddbmm', 'T.baddbmm(T.zeros(5, 2, 2), seq[:, :, :2].transpose(1, 2), seq[:, :, :2])'),
    ('torch.stft', 'T.stft(T.arange(64.), 16, window=T.ones(16), return_complex=True).abs()'),
    ('torch.fft.fft', 'T.fft.fft(v).real'),
    ('torch.fft.rfft', 'T.fft.rfft(x).abs()'),
    ('torch.view_as_real', 'T.view_as_real(T.polar(T.ones(3), v[:3]))'),
    ('torch.complex', 'T.complex(v, v).abs()'),
    ('torch.polar', 'T.polar(T.ones(2), v[:2]).imag'),
    ('torch.distributions.Normal', 'T.distributions.Normal(0., 1.).log_prob(v)'),
    ('torch.distributions.Categorical', 'T.distributions.Categorical(logits=x).sample()'),
    ('distributions.kl_divergence', 'T.distributions.kl_divergence(T.distributions.Normal(0., 1.), '
                                    'T.distributions.Normal(1., 2.))'),
    ('torch.distributions.MultivariateNormal', 'T.distributions.MultivariateNormal(T.zeros(4), sq).log_prob(v)'),
    # ---- tensor methods: in-place, comparisons, types ----
    ('Tensor.add_', 'x.clone().add_(y, alpha=2)'),
    ('Tensor.mul_', 'x.clone().mul_(2)'),
    ('Tensor.copy_', 'T.zeros(3, 4).copy_(x)'),
    ('Tensor.clamp_', 'x.clone().clamp_(min=0)'),
    ('Tensor.normal_', 'T.empty(3).normal_()'),
    ('Tensor.uniform_', 'T.empty(3).uniform_(-1, 1)'),
    ('Tensor.random_', 'T.empty(4).random_(0, 10)'),
    ('Tensor.bernoulli_', 'T.empty(4).bernoulli_(0.5)'),
    ('Tensor.exponential_', 'T.empty(4).exponential_()'),
    ('Tensor.data', 'w.data'),
    ('Tensor.eq', 'x.eq(x)'),
    ('Tensor.ne', 'ix.ne(1)'),
    ('Tensor.gt', 'x.gt(0)'),
    ('Tensor.lt', 'x.lt(y)'),
    ('Tensor.ge', 'x.ge(0)'),
    ('Tensor.le', 'x.le(0)'),
    ('Tensor.bool', 'x.bool()'),
    ('Tensor.int', 'x.int()'),
    ('Tensor.double', 'x.double()'),
    ('Tensor.half', 'x.half()'),
    ('Tensor.bfloat16', 'x.bfloat16().float()'),
    ('Tensor.type_as', 'ix.type_as(x)'),
    ('Tensor.new_zeros', 'x.new_zeros(2)'),
    ('Tensor.new_tensor', 'x.new_tensor([1, 2])'),
    ('Tensor.new_ones', 'x.new_ones((2, 2))'),
    ('Tensor.new_full', 'x.new_full((2,), 3.)'),
    ('Tensor.unbind', 'x.unbind(1)'),
    ('Tensor.view_as', 'x.view_as(y)'),
    ('Tensor.expand_as', 'v.expand_as(x)'),
    ('Tensor.masked_fill_', 'x.clone().masked_fill_(x < 0, 1.)'),
    ('Tensor.index_add_', 'T.zeros(3, 4).index_add_(0, T.tensor([0, 0]), x[:2])'),
    ('Tensor.scatter_add_', 'T.zeros(3, 4).scatter_add_(1, T.tensor([[0, 0], [1, 1], [2, 3]]), x[:, :2])'),
    ('Tensor.gather', 'x.gather(1, T.tensor([[1], [0], [3]]))'),
    ('Tensor.sort', 'x.sort(descending=True)[0]'),
    ('Tensor.topk', 'x.topk(1, dim=0)[1]'),
    ('Tensor.abs', 'x.abs()'),
    ('Tensor.exp', 'x.exp()'),
    ('Tensor.log', 'x.abs().log()'),
    ('Tensor.sqrt', 'x.abs().sqrt()'),
    ('Tensor.sigmoid', 'x.sigmoid()'),
    ('Tensor.softmax', 'x.softmax(0)'),
    ('Tensor.log_softmax', 'x.log_softmax(1)'),
    ('Tensor.relu', 'x.relu()'),
    ('Tensor.tanh', 'x.tanh()'),
    ('Tensor.clamp', 'x.clamp(min=0)'),
    ('Tensor.min', 'x.min()'),
    ('Tensor.argmin', 'x.argmin()'),
    ('Tensor.prod', 'x.prod()'),
    ('Tensor.cumsum', 'x.cumsum(0)'),
    ('Tensor.neg', 'x.neg()'),
    ('Tensor.sign', 'x.sign()'),
    ('Tensor.round', 'x.round(decimals=1)'),
    ('Tensor.floor', 'x.floor()'),
    ('Tensor.fmod', 'x.fmod(0.5)'),
    ('Tensor.is_contiguous', 'x.t().is_contiguous()'),
    ('Tensor.storage_offset', 'x[1].storage_offset()'),
    ('Tensor.stride', 'x.t().stride()'),
    ('Tensor.element_size', 'x.element_size()'),
    ('Tensor.is_floating_point', 'ix.is_floating_point()'),
    ('Tensor.is_leaf', '(w * 2).is_leaf'),
    ('Tensor.ndim', 'img.ndim'),
    ('Tensor.T', 'x.T'),
    ('Tensor.mT', 'seq.mT'),
    ('Tensor.nelement', 'x.nelement()'),
    ('Tensor.__len__', 'len(x)'),
    ('Tensor.__iter__', '[r for r in x]'),
    ('Tensor.__repr__', 'repr(x[:2, :2])'),
    ('Tensor.__format__', 'f"{x[0, 0]:.3f}"'),
    ('Tensor.__bool__', 'bool(x[0, 0] > 0)'),
    ('Tensor.__float__', 'float(x[0, 0])'),
    ('Tensor.__int__', 'int(ix[1])'),
    ('Tensor.__index__', '[0, 1, 2][ix[2]]'),
    ('Tensor.masked_scatter', 'x.masked_scatter(x > 0, T.zeros(12))'),
    ('Tensor.unfold', 'v.unfold(0, 2, 1)'),
    ('Tensor.diag_embed', 'x.diag_embed()'),
    ('Tensor.apply_', 'x.clone().apply_(lambda a: a * 2)'),
    ('Tensor.map_', 'x.clone().map_(y, lambda a, b: a + b)'),
    ('Tensor.pin_memory / is_pinned', 'x.is_pinned()'),
    ('Tensor.share_memory_', 'x.clone().share_memory_().is_shared()'),
    ('Tensor.index_put_', 'T.zeros(3).index_put_((T.tensor([0, 2]),), T.tensor([1., 2.]))'),
    ('Tensor.put_', 'T.zeros(4).put_(T.tensor([1, 3]), T.tensor([9., 8.]))'),
    ('Tensor.nan_to_num', '(x / 0).nan_to_num(posinf=1.)'),
    ('Tensor.count_nonzero', '(x > 0).count_nonzero()'),
    ('Tensor.logical_or', '(x > 0).logical_or(y > 0)'),
    ('Tensor.bitwise_and', 'ix.bitwise_and(T.tensor(1))'),
    ('Tensor.float_power', 'x.float_power(2)'),
    ('Tensor.addcmul_', 'x.clone().addcmul_(y, y, value=0.5)'),
    ('Tensor.addcdiv_', 'x.clone().addcdiv_(y, y.abs() + 1, value=0.5)'),
    ('Tensor.lerp_', 'x.clone().lerp_(y, 0.5)'),
    ('Tensor.sub_', 'x.clone().sub_(y)'),
    ('Tensor.div_', 'x.clone().div_(2)'),
    ('Tensor.pow_', 'x.clone().pow_(2)'),
    ('Tensor.sqrt_', 'x.abs().sqrt_()'),
    ('Tensor.exp_', 'x.clone().exp_()'),
    ('Tensor.unsqueeze_', 'x.clone().unsqueeze_(0)'),
    ('Tensor.resize_', 'T.zeros(4).resize_(2, 2)'),
    ('Tensor.detach_', 'w.clone().detach_().requires_grad'),
    ('Tensor.sum_to_size', 'x.sum_to_size(1, 4)'),
    ('Tensor.flip', 'x.flip(1)'),
    ('Tensor.roll', 'x.roll(1)'),
    ('Tensor.where', 'x.where(x > 0, 0.)'),
    ('Tensor.isclose', 'x.isclose(x + 1e-9)'),
    ('Tensor.allclose', 'x.allclose(y)'),
    ('Tensor.equal', 'x.equal(y)'),
    ('Tensor.amax', 'x.amax(1)'),
    ('Tensor.amin', 'x.amin((0, 1))'),
    ('Tensor.logsumexp', 'x.logsumexp(0)'),
    ('Tensor.nansum', '(x / (x > 0)).nansum()'),
    ('Tensor.nanmean', '(x / (x > 0)).nanmean()'),
    ('Tensor.median', 'x.median(1)[0]'),
    ('Tensor.mode', 'T.tensor([[1, 1, 2], [3, 3, 3]]).mode(1)[0]'),
    ('Tensor.kthvalue', 'x.kthvalue(2, 1)[0]'),
    ('Tensor.cummax', 'x.cummax(1)[0]'),
    ('Tensor.diff', 'x.diff(dim=0)'),
    ('Tensor.trace', 'm.trace()'),
    ('Tensor.det', 'sq.det()'),
    ('Tensor.inverse', 'sq.inverse()'),
    ('Tensor.matrix_exp', 'm.matrix_exp()'),
    ('Tensor.cholesky_solve', 'v[:, None].cholesky_solve(T.linalg.cholesky(sq))'),
    ('Tensor.lu', 'sq.lu()[0]'),
    ('Tensor.histc', 'x.histc(4)'),
    ('Tensor.bincount', 'T.tensor([1, 1, 0]).bincount()'),
    ('Tensor.quantile', 'x.quantile(0.5)'),
    ('Tensor.renorm', 'x.renorm(2, 0, 1.)'),
    ('Tensor.kron', 'v.kron(v)'),
    ('Tensor.tensor_split', 'x.tensor_split(3, 1)'),
    ('Tensor.hsplit', 'x.hsplit(2)'),
    ('Tensor.vsplit', 'x.vsplit([1])'),
    ('Tensor.rot90', 'x.rot90()'),
    ('Tensor.fliplr', 'x.fliplr()'),
    ('Tensor.logcumsumexp', 'x.logcumsumexp(1)'),
    ('Tensor.take_along_dim', 'x.take_along_dim(T.tensor([[0], [1], [2]]), 1)'),
    ('Tensor.isin', 'T.isin(ix, T.tensor([2]))'),
    ('Tensor.cov', 'x.cov()'),
    ('Tensor.corrcoef', 'x.corrcoef()'),
    ('Tensor.dist', 'x.dist(y)'),
    # ---- less common torch functions ----
    ('torch.hstack', 'T.hstack([x, y])'),
    ('torch.vstack', 'T.vstack([x, y])'),
    ('torch.column_stack', 'T.column_stack([v, v])'),
    ('torch.dstack', 'T.dstack([x, y])'),
    ('torch.atleast_2d', 'T.atleast_2d(v)'),
    ('torch.block_diag', 'T.block_diag(m[:2, :2], v[:1])'),
    ('torch.combinations', 'T.combinations(v[:3])'),
    ('torch.triu_indices', 'T.triu_indices(3, 4, 1)'),
    ('torch.rot90', 'T.rot90(x, 2)'),
    ('torch.flipud', 'T.flipud(x)'),
    ('torch.diag_embed', 'T.diag_embed(x)'),
    ('torch.diagflat', 'T.diagflat(v)'),
    ('torch.logcumsumexp', 'T.logcumsumexp(x, 0)'),
    ('torch.renorm', 'T.renorm(x, 1, 1, 0.5)'),
    ('torch.count_nonzero', 'T.count_nonzero(x > 0, dim=1)'),
    ('torch.isin', 'T.isin(x, x[0])'),
    ('torch.nan_to_num', 'T.nan_to_num(x / 0, nan=0.0)'),
    ('torch.take_along_dim', 'T.take_along_dim(x, x.argsort(1), 1)'),
    ('torch.tensor_split', 'T.tensor_split(x, [1, 2], 1)'),
    ('torch.hsplit', 'T.hsplit(x, 2)'),
    ('torch.vsplit', 'T.vsplit(T.ones(4, 2), 2)'),
    ('torch.dsplit', 'T.dsplit(T.ones(2, 2, 4), [1])'),
    ('torch.histogram', 'tuple(T.histogram(x, 3))'),
    ('torch.nanquantile', 'T.nanquantile(x, 0.5)'),
    ('torch.nanmedian', 'T.nanmedian(x)'),
    ('torch.cov', 'T.cov(x)'),
    ('torch.corrcoef', 'T.corrcoef(x)'),
    ('torch.trapezoid', 'T.trapezoid(x)'),
    ('torch.cumulative_trapezoid', 'T.cumulative_trapezoid(x)'),
    ('torch.dist', 'T.dist(x, y, 1)'),
    ('torch.vdot', 'T.vdot(v, v)'),
    ('torch.inner', 'T.inner(x, y)'),
    ('torch.addr', 'T.addr(m, v, v)'),
    ('torch.vander', 'T.vander(v[:3])'),
    ('torch.tensordot', 'T.tensordot(x, m, 1)'),
    ('torch.chain_matmul', 'T.linalg.multi_dot([x, m, m])'),
    ('torch.matrix_power', 'T.matrix_power(m, 3)'),
    ('torch.logdet', 'T.logdet(sq)'),
    ('torch.slogdet', 'tuple(T.slogdet(sq))'),
    ('torch.pinverse', 'T.pinverse(x)'),
    ('torch.linalg.matrix_exp', 'T.linalg.matrix_exp(m)'),
    ('torch.linalg.lstsq', 'T.linalg.lstsq(x, y).solution'),
    ('torch.linalg.pinv', 'T.linalg.pinv(x)'),
    ('torch.linalg.matrix_rank', 'T.linalg.matrix_rank(x)'),
    ('torch.linalg.cond', 'T.linalg.cond(sq)'),
    ('torch.linalg.multi_dot', 'T.linalg.multi_dot([v, m, v])'),
    ('torch.linalg.householder_product', 'T.linalg.householder_product(*T.geqrf(sq))'),
    ('torch.linalg.vander', 'T.linalg.vander(v)'),
    ('torch.linalg.matrix_power', 'T.linalg.matrix_power(m, -2)'),
    ('torch.linalg.slogdet', 'tuple(T.linalg.slogdet(m))'),
    ('torch.linalg.lu_factor', 'tuple(T.linalg.lu_factor(m))'),
    ('torch.linalg.lu', 'tuple(T.linalg.lu(x))'),
    ('torch.linalg.lu_solve', 'T.linalg.lu_solve(*T.linalg.lu_factor(sq), x.T)'),
    ('torch.linalg.solve_triangular', 'T.linalg.solve_triangular(T.linalg.cholesky(sq), x.T, upper=False)'),
    ('torch.linalg.cross', 'T.linalg.cross(x[:, :3], y[:, :3])'),
    ('torch.linalg.vecdot', 'T.linalg.vecdot(x, y)'),
    ('torch.linalg.tensorinv', 'T.linalg.tensorinv(sq.reshape(4, 2, 2), 1)'),
    ('torch.linalg.tensorsolve', 'T.linalg.tensorsolve(sq.reshape(2, 2, 4), x[:2, :2])'),
    ('torch.linalg.eigvals', 'T.linalg.eigvals(sq).real.sort()[0]'),
    ('torch.linalg.eig', 'T.linalg.eig(sq)[0].real.sort()[0]'),
    ('torch.linalg.matrix_norm', 'T.linalg.matrix_norm(m, "nuc")'),
    ('torch.linalg.vector_norm', 'T.linalg.vector_norm(x, 3, dim=1)'),
    ('torch.linalg.diagonal', 'T.linalg.diagonal(img)'),
    ('torch.linalg.solve_ex', 'tuple(T.linalg.solve_ex(sq, v))'),
    ('torch.cholesky_inverse', 'T.cholesky_inverse(T.linalg.cholesky(sq))'),
    ('torch.gcd', 'T.gcd(T.tensor([12, 18]), T.tensor([8, 27]))'),
    ('torch.logaddexp', 'T.logaddexp(x, y)'),
    ('torch.heaviside', 'T.heaviside(x, T.tensor(0.5))'),
    ('torch.signbit', 'T.signbit(x)'),
    ('torch.frexp', 'tuple(T.frexp(x))'),
    ('torch.hypot', 'T.hypot(x, y)'),
    ('torch.xlogy', 'T.xlogy(x.abs(), y.abs())'),
    ('torch.sinc', 'T.sinc(x)'),
    ('torch.deg2rad', 'T.deg2rad(x)'),
    ('torch.bitwise_xor', 'T.bitwise_xor(ix, T.tensor(3))'),
    ('torch.result_type', 'str(T.result_type(ix, 1.0))'),
    ('torch.promote_types', 'str(T.promote_types(T.int32, T.float16))'),
    ('torch.is_tensor', 'T.is_tensor(x)'),
    ('torch.numel', 'T.numel(x)'),
    ('torch.set_printoptions', 'out = None\nT.set_printoptions(precision=2)\nout = repr(x[0])\nT.set_printoptions(profile="default")'),
    ('torch.get_default_dtype', 'str(T.get_default_dtype())'),
    ('torch.finfo', 'T.finfo(T.float32).eps'),
    ('torch.iinfo', 'T.iinfo(T.int8).max'),
    ('torch.broadcast_tensors', 'T.broadcast_tensors(v, x)'),
    ('torch.broadcast_shapes', 'tuple(T.broadcast_shapes((3, 1), (4,)))'),
    ('torch.as_tensor', 'T.as_tensor([1, 2])'),
    ('torch.asarray', 'T.asarray(np.ones(2))'),
    ('torch.empty_strided', 'T.empty_strided((2, 3), (1, 2)).stride()'),
    ('torch.logspace', 'T.logspace(0, 2, 3)'),
    ('torch.zeros dtype=bool', 'T.zeros(3, dtype=T.bool)'),
    ('torch.testing.assert_close', 'T.testing.assert_close(x, x.clone())'),
    ('torch.nn.functional.grid_sample', 'F.grid_sample(img, T.zeros(2, 2, 2, 2), align_corners=False)'),
    ('F.unfold', 'F.unfold(img, 2)'),
    ('F.fold', 'F.fold(F.unfold(img, 2), (8, 8), 2)'),
    ('F.pixel_shuffle', 'F.pixel_shuffle(T.randn(1, 4, 2, 2), 2)'),
    ('F.ctc_loss', 'F.ctc_loss(F.log_softmax(T.randn(6, 2, 4), 2), T.tensor([[1, 2], [3, 1]]), [6, 6], [2, 2])'),
    ('F.hardswish', 'F.hardswish(x)'),
    ('F.mish', 'F.mish(x)'),
    ('F.glu', 'F.glu(x)'),
    ('F.logsigmoid', 'F.logsigmoid(x)'),
    ('F.huber_loss', 'F.huber_loss(x, y)'),
    ('F.smooth_l1_loss', 'F.smooth_l1_loss(x, y, beta=0.5)'),
    ('F.triplet_margin_loss', 'F.triplet_margin_loss(x, y, x.flip(0))'),
    ('F.margin_ranking_loss', 'F.margin_ranking_loss(v, v.flip(0), T.ones(4))'),
    ('F.cosine_embedding_loss', 'F.cosine_embedding_loss(x, y, T.tensor([1, -1, 1]))'),
    ('F.multi_margin_loss', 'F.multi_margin_loss(x, T.tensor([1, 0, 3]))'),
    ('F.gumbel_softmax', 'F.gumbel_softmax(x, tau=0.5)'),
    ('F.rrelu', 'F.rrelu(x, training=False)'),
    ('nn.RReLU', 'nn.RReLU()(x)'),
    ('nn.Buffer', 'out = nn.Module()\nout.b = nn.Buffer(T.ones(2))\nout = list(dict(out.named_buffers()))'),
    ('nn.FractionalMaxPool2d', 'nn.FractionalMaxPool2d(2, output_size=3)(img)'),
    ('optim.Adafactor', 'out = nn.Linear(4, 2)\no = optim.Adafactor(out.parameters())\n'
                        'out(x).sum().backward()\no.step()\nout = out.weight'),
    ('nn.utils.parametrizations.orthogonal', 'nn.utils.parametrizations.orthogonal(nn.Linear(3, 3)).weight'),
    ('nn.utils.parametrizations.weight_norm', 'nn.utils.parametrizations.weight_norm(nn.Linear(3, 3))(x[:, :3])'),
    ('nn.utils.spectral_norm', 'nn.utils.spectral_norm(nn.Linear(4, 3))(x)'),
    ('distributions.LKJCholesky', 'T.distributions.LKJCholesky(3, 0.5).sample()'),
    ('distributions.Wishart', 'T.distributions.Wishart(T.tensor(5.), T.eye(2)).sample()'),
]


# ---- running a program in one library and comparing -----------------------------------------------

def namespace(T):
    ns = {'T': T, 'nn': T.nn, 'F': T.nn.functional, 'optim': T.optim, 'data': T.utils.data, 'np': np, 'io': io}
    exec(SETUP, ns)
    return ns


def run(program, T):
    """('ok', result) or ('raise', exception type name)."""
    ns = namespace(T)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with np.errstate(all='ignore'):
                if '\n' in program or program.startswith('out ='):
                    exec(program, ns)
                    return 'ok', ns.get('out')
                return 'ok', eval(program, ns)
    except Exception as e:  # the comparison is the point: any exception is an outcome
        return 'raise', type(e).__name__


def _plain(value, T):
    """A comparable form of a result: tensors as (shape, dtype, requires_grad, float64 values)."""
    if isinstance(value, T.Tensor):
        t = value.detach()
        dtype = str(t.dtype).split('.')[-1]
        if t.dtype == T.bfloat16 or t.dtype == T.float16:
            t = t.float()
        arr = np.array(t.numpy(), copy=True)
        return ('tensor', tuple(value.shape), dtype, bool(value.requires_grad), arr)
    if isinstance(value, T.nn.Module):
        return ('module', type(value).__name__)
    if isinstance(value, dict):
        return ('dict', tuple((str(k), _plain(v, T)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ('seq', tuple(_plain(v, T) for v in value))
    if isinstance(value, (str, T.dtype, T.device, T.Size)):
        return ('str', str(value).replace('leafgrad', 'torch'))
    if isinstance(value, np.ndarray):
        return ('array', value.shape, value.dtype.name, value)
    return ('value', value)


def same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple) and a and a[0] == 'tensor':
        if a[1:4] != b[1:4]:
            return False
        return a[4].shape == b[4].shape and np.allclose(a[4], b[4], rtol=1e-4, atol=1e-5, equal_nan=True)
    if isinstance(a, tuple) and a and a[0] == 'array':
        return a[1:3] == b[1:3] and np.allclose(a[3], b[3], rtol=1e-4, atol=1e-5, equal_nan=True)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return np.isclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True)
    return a == b


def check(program):
    """(correct, why): both libraries return the same thing or raise the same exception type."""
    import torch
    import leafgrad
    lg_kind, lg_value = run(program, leafgrad)
    th_kind, th_value = run(program, torch)
    if lg_kind != th_kind:
        return False, (f'leafgrad raised {lg_value}' if lg_kind == 'raise' else f'torch raised {th_value}')
    if lg_kind == 'raise':
        return lg_value == th_value, f'{lg_value} (torch: {th_value})'
    ok = same(_plain(lg_value, leafgrad), _plain(th_value, torch))
    return ok, '' if ok else 'results differ'


def measure(rows=ROWS, top=300):
    """{'top': (correct, n), 'all': (correct, n), 'failures': [(rank, api, why)]}."""
    failures, correct_top, correct_all = [], 0, 0
    for rank, (api, program) in enumerate(rows, 1):
        ok, why = check(program)
        if ok:
            correct_all += 1
            correct_top += rank <= top
        else:
            failures.append((rank, api, why))
    return {'top': (correct_top, min(top, len(rows))), 'all': (correct_all, len(rows)), 'failures': failures}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--failures', action='store_true', help='list the rows that fail and why')
    parser.add_argument('--top', type=int, default=300)
    args = parser.parse_args(argv)
    result = measure(top=args.top)
    (ct, nt), (ca, na) = result['top'], result['all']
    print(f'top {nt}: {ct}/{nt} present and correct ({100 * ct / nt:.1f}%)')
    print(f'all {na}: {ca}/{na} present and correct ({100 * ca / na:.1f}%)')
    if args.failures:
        for rank, api, why in result['failures']:
            print(f'  {rank:4d}  {api:45s} {why}')


if __name__ == '__main__':
    import importlib.util
    if importlib.util.find_spec('leafgrad') is None:  # (PYTHONPATH names the leafgrad to measure)
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory():
        main()
