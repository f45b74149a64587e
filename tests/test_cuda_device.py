"""device='cuda' on a GPU: tensors, a training step and checkpoints on CuPy, against the same program
on the CPU (and against torch CUDA where this python's torch has a GPU). benchmarks/gpu_check.sh runs
these on a GPU machine; elsewhere they run on the stand-in for CuPy (tests/cuda_standin.py), which refuses
every hidden host round trip as CuPy does (with LEAFGRAD_REQUIRE_CUDA set, a missing GPU fails)."""

import numpy as np
import pytest

import leafgrad as lg

from cuda_standin import REAL_GPU, cuda_device  # noqa: F401  (the autouse fixture: CuPy or its stand-in)

pytestmark = pytest.mark.cuda

try:
    import torch
    TORCH_CUDA = torch.cuda.is_available()
except ImportError:
    torch, TORCH_CUDA = None, False


def test_factories_and_moves_keep_their_device():
    t = lg.randn(3, 4, device='cuda')
    assert str(t.device) == 'cuda:0' and t.is_cuda
    back = t.cpu()
    assert back.device.type == 'cpu' and np.array_equal(back.numpy(), t.to('cpu').numpy())
    assert t.to('cuda') is t
    moved = back.to('cuda')
    assert moved.is_cuda and np.array_equal(moved.cpu().numpy(), back.numpy())
    for make in (lambda: lg.zeros(2, 3, device='cuda'), lambda: lg.ones(2, device='cuda'),
                 lambda: lg.arange(5, device='cuda'), lambda: lg.tensor([1.0, 2.0], device='cuda'),
                 lambda: lg.full((2,), 3.0, device='cuda'), lambda: lg.empty(4, device='cuda')):
        assert make().is_cuda


def test_mixing_devices_is_refused_as_pytorch_refuses_it():
    with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device'):
        lg.ones(2, device='cuda') + lg.ones(2)
    with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device'):
        lg.ones(2) * lg.ones(2, device='cuda')
    gpu, cpu = lg.ones(2, 3, device='cuda'), lg.ones(2, 3)
    for mixed in (lambda: gpu @ cpu.t(), lambda: lg.nn.Linear(3, 2)(gpu), lambda: lg.cat([gpu, cpu]),
                  lambda: lg.stack([cpu, gpu]), lambda: gpu.masked_fill(cpu > 0, 1.0), lambda: gpu.add_(cpu),
                  lambda: lg.where(gpu > 0, cpu, gpu), lambda: lg.einsum('ij,kj->ik', gpu, cpu),
                  lambda: lg.nn.Conv1d(2, 2, 1)(gpu[None]),
                  lambda: lg.nn.functional.cross_entropy(gpu, lg.tensor([0, 1])),
                  lambda: lg.nn.functional.nll_loss(gpu, lg.tensor([0, 1], device='cuda'), weight=lg.ones(3))):
        with pytest.raises(RuntimeError, match='Expected all tensors to be on the same device, but found at '
                                               'least two devices, (cuda:0 and cpu|cpu and cuda:0)!'):
            mixed()
    moved = lg.ones(2, device='cuda') + lg.tensor(2.0)  # a 0-dim CPU tensor is a number, as in PyTorch
    assert moved.is_cuda and moved.cpu().tolist() == [3.0, 3.0]


def _mlp_step(T, device, seed=0):
    rng = np.random.default_rng(seed)
    x = T.tensor(rng.standard_normal((32, 20)).astype(np.float32), device=device)
    y = T.tensor(rng.integers(0, 5, 32), device=device)
    w1 = T.tensor((rng.standard_normal((16, 20)) * 0.2).astype(np.float32), device=device, requires_grad=True)
    w2 = T.tensor((rng.standard_normal((5, 16)) * 0.2).astype(np.float32), device=device, requires_grad=True)
    conv_w = T.tensor((rng.standard_normal((3, 1, 3, 3)) * 0.3).astype(np.float32), device=device,
                      requires_grad=True)
    F = T.nn.functional
    h = F.relu(F.linear(x, w1))
    loss = F.cross_entropy(F.linear(h, w2), y)
    img = x.reshape(32, 1, 4, 5)
    loss = loss + F.conv2d(img, conv_w, padding=1).tanh().mean() + h[:, ::2].softmax(-1).sum() * 0.01
    loss.backward()
    return [a.detach().cpu().numpy() for a in (loss, w1.grad, w2.grad, conv_w.grad)]


def test_a_training_step_on_the_gpu_gives_the_cpu_step_values():
    on_gpu, on_cpu = _mlp_step(lg, 'cuda'), _mlp_step(lg, 'cpu')
    for g, c in zip(on_gpu, on_cpu):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)
    if TORCH_CUDA:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        for g, t in zip(on_gpu, _mlp_step(torch, 'cuda')):
            np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


def test_modules_optimizers_and_checkpoints_move_to_the_gpu(tmp_path):
    model = lg.nn.Sequential(lg.nn.Linear(4, 8), lg.nn.ReLU(), lg.nn.Linear(8, 2)).to('cuda')
    assert all(p.is_cuda for p in model.parameters())
    opt = lg.optim.Adam(model.parameters(), lr=0.1)
    out = model(lg.randn(5, 4, device='cuda'))
    assert out.is_cuda
    out.square().sum().backward()
    opt.step()
    assert all(p.grad.is_cuda for p in model.parameters())
    lg.save(model.state_dict(), tmp_path / 'm.pt')
    state = lg.load(tmp_path / 'm.pt', map_location='cpu')
    assert all(v.device.type == 'cpu' for v in state.values())
    state = lg.load(tmp_path / 'm.pt')
    assert all(v.is_cuda for v in state.values())


def test_events_time_gpu_work_and_streams_order_it():
    start, end = lg.cuda.Event(enable_timing=True), lg.cuda.Event(enable_timing=True)
    side = lg.cuda.Stream()
    a = lg.randn(64, 64, device='cuda')
    start.record()
    with lg.cuda.stream(side):
        assert lg.cuda.current_stream() == side
        b = a @ a
    assert lg.cuda.current_stream() != side
    side.synchronize()
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0
    np.testing.assert_allclose(b.cpu().numpy(), a.cpu().numpy() @ a.cpu().numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(RuntimeError, match='enable_timing=True'):
        lg.cuda.Event().elapsed_time(end)
    with pytest.raises(TypeError, match="unexpected keyword argument 'stream_id'"):
        lg.cuda.Stream(stream_id=3)  # (nothing accepted and ignored)
    with pytest.raises(NotImplementedError, match='external'):
        lg.cuda.Event(external=True)


def test_peak_memory_counts_from_the_reset():
    lg.cuda.reset_peak_memory_stats()
    before = lg.cuda.memory_allocated()
    big = lg.empty(1 << 20, device='cuda')  # 4 MiB
    assert lg.cuda.max_memory_allocated() >= lg.cuda.memory_allocated() >= (before if not REAL_GPU else before + (4 << 20))
    del big
    assert lg.cuda.max_memory_reserved() >= lg.cuda.memory_reserved()


def test_dlpack_moves_gpu_tensors_without_a_copy():
    if not (REAL_GPU and TORCH_CUDA):
        pytest.skip('no CUDA GPU with CuPy here (or no torch CUDA to exchange with)')
    import cupy
    theirs = torch.arange(6.0, device='cuda')
    ours = lg.from_dlpack(theirs)
    assert ours.is_cuda and ours.__dlpack_device__() == (2, 0)
    theirs[0] = 7.0
    torch.cuda.synchronize()
    assert ours.cpu().tolist()[0] == 7.0  # the same memory
    back = torch.from_dlpack(lg.ones(3, device='cuda'))
    assert back.is_cuda and back.tolist() == [1.0, 1.0, 1.0]
    assert cupy.from_dlpack(lg.arange(3, device='cuda')).tolist() == [0, 1, 2]


def test_grad_buffers_are_taken_only_when_nobody_else_sees_them():
    x = lg.randn(5, 4, device='cuda')
    w = lg.randn(3, 4, device='cuda', requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g) or None)  # (a hook that keeps the incoming gradient)
    lg.nn.functional.linear(x, w).sum().backward()
    first = seen[0].cpu().numpy().copy()
    lg.nn.functional.linear(x, w).sum().backward()  # accumulates into .grad, not into what the hook kept
    np.testing.assert_array_equal(seen[0].cpu().numpy(), first)
    np.testing.assert_allclose(w.grad.cpu().numpy(), 2 * first, rtol=1e-6)
    v = lg.randn(3, 4, device='cuda', requires_grad=True)
    lg.nn.functional.linear(x, v).sum().backward()
    np.testing.assert_allclose(v.grad.cpu().numpy(), first, rtol=1e-6)


def test_random_factories_draw_on_the_gpu_and_follow_the_seed():
    def draws():
        lg.manual_seed(7)
        return [lg.rand(1000, device='cuda'), lg.randn(1000, device='cuda', dtype=lg.float64),
                lg.randint(3, 9, (1000,), device='cuda'), lg.randperm(50, device='cuda'),
                lg.rand_like(lg.zeros(2, 500, device='cuda')), lg.randn_like(lg.zeros(1000, device='cuda')),
                lg.randint_like(lg.zeros(1000, device='cuda', dtype=lg.int32), 5),
                lg.normal(lg.zeros(1000, device='cuda'), 2.0), lg.rand(10, device='cuda', dtype=lg.float16),
                lg.empty(1000, device='cuda').normal_(1.0, 0.5), lg.empty(1000, device='cuda').uniform_(-2, 2)]
    first, again = draws(), draws()
    for a, b in zip(first, again):
        assert a.is_cuda and np.array_equal(a.cpu().numpy(), b.cpu().numpy())
    u, n, i, p, ul, nl, il, scaled, half, n_, u_ = [t.cpu().numpy() for t in first]
    assert 0.9 < n_.mean() < 1.1 and 0.4 < n_.std() < 0.6 and -2 <= u_.min() and u_.max() < 2 and abs(u_.mean()) < 0.2
    assert first[0].dtype == lg.float32 and first[1].dtype == lg.float64 and first[2].dtype == lg.int64
    assert first[6].dtype == lg.int32 and first[8].dtype == lg.float16
    assert 0 <= u.min() and u.max() < 1 and 0.4 < u.mean() < 0.6 and ul.shape == (2, 500)
    assert abs(n.mean()) < 0.2 and 0.8 < n.std() < 1.2 and 1.6 < scaled.std() < 2.4
    assert set(np.unique(i)) <= set(range(3, 9)) and set(np.unique(il)) <= set(range(5))
    assert sorted(p.tolist()) == list(range(50))


def test_ldl_factor_and_solve_return_to_the_gpu():
    """ldl_factor(_ex) and ldl_solve (scalar kernels on NumPy, no CuPy ?sytrf) go through the host
    explicitly and hand back tensors on the GPU, equal to the CPU's."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 4))
    a = a + np.swapaxes(a, -1, -2)
    b = rng.standard_normal((2, 4, 3))
    LD, piv, info = lg.linalg.ldl_factor_ex(lg.tensor(a, device='cuda'))
    x = lg.linalg.ldl_solve(LD, piv, lg.tensor(b, device='cuda'))
    cLD, cpiv, cinfo = lg.linalg.ldl_factor_ex(lg.tensor(a))
    for got, want in ((LD, cLD), (piv, cpiv), (info, cinfo), (x, lg.linalg.ldl_solve(cLD, cpiv, lg.tensor(b)))):
        assert got.is_cuda and np.array_equal(got.cpu().numpy(), want.numpy())


def test_bernoulli_and_in_place_draws_stay_on_the_gpu():
    lg.manual_seed(3)
    probs = lg.full((4000,), 0.25, device='cuda')
    for drawn in (lg.bernoulli(probs), lg.bernoulli(probs, 0.25), lg.empty(4000, device='cuda').bernoulli_(0.25),
                  lg.empty(4000, device='cuda').bernoulli_(probs)):
        values = drawn.cpu().numpy()
        assert drawn.is_cuda and set(np.unique(values)) <= {0.0, 1.0} and 0.2 < values.mean() < 0.3
    for drawn in (lg.empty(100, device='cuda').exponential_(), lg.empty(100, device='cuda').random_(0, 5),
                  lg.empty(100, device='cuda').geometric_(0.5), lg.empty(100, device='cuda').log_normal_()):
        assert drawn.is_cuda and drawn.cpu().numpy().min() >= 0
    with pytest.raises(RuntimeError, match='Expected p_in >= 0'):
        lg.bernoulli(lg.full((3,), 1.5, device='cuda'))


def test_batch_norm_trains_and_in_place_numbers_wrap_on_the_gpu():
    torch_like = []
    for device in ('cpu', 'cuda'):
        lg.manual_seed(0)
        bn = lg.nn.BatchNorm2d(3).to(device)
        x = lg.tensor(np.random.default_rng(0).standard_normal((4, 3, 5, 5)).astype(np.float32), device=device)
        bn(x).square().sum().backward()
        small = lg.zeros(3, dtype=lg.int8, device=device)
        small += 300  # (wraps, as PyTorch's int8 add)
        torch_like.append([bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.weight.grad, small])
    for g, c in zip(torch_like[1], torch_like[0]):
        assert g.is_cuda
        np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=1e-5, atol=1e-6)


def _gpt_steps(device, steps=2):
    """A small GPT-style model (embeddings, a pre-norm block with causal attention and a GELU
    MLP, tied head) trained with AdamW and gradient clipping, as nanoGPT trains one."""
    lg.manual_seed(0)
    F, nn = lg.nn.functional, lg.nn

    class Block(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.heads = heads

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(b, t, d)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, vocab=11, d=16, block=8):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.block, self.ln = Block(d, 2), nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.head.weight = self.tok.weight

        def forward(self, idx, targets):
            x = self.tok(idx) + self.pos(lg.arange(idx.shape[1], device=idx.device))
            logits = self.head(self.ln(self.block(x)))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))

    model = GPT().to(device)
    opt = lg.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    rng = np.random.default_rng(0)
    data = lg.tensor(rng.integers(0, 11, (4, 9)), device=device)
    losses = []
    for _ in range(steps):
        loss = model(data[:, :-1], data[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses, {name: p.detach().cpu().numpy() for name, p in model.named_parameters()}


def test_a_gpt_style_training_step_on_the_gpu_gives_the_cpu_values():
    (gpu_losses, gpu_params), (cpu_losses, cpu_params) = _gpt_steps('cuda'), _gpt_steps('cpu')
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-5)
    for name, c in cpu_params.items():
        g = gpu_params[name]
        if name == 'block.qkv.bias':
            # The keys' third of this bias has a gradient of 0 but for rounding (~1e-9: softmax
            # ignores a shift of a row's scores), and AdamW turns that noise into steps of lr,
            # whose signs the device's rounding decides: only the queries' and values' thirds compare.
            g, c = np.delete(g, slice(16, 32)), np.delete(c, slice(16, 32))
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5, err_msg=name)
