"""The 'meta' device against torch: tensors with a shape and a dtype and no data.

Each program runs on leafgrad and on torch (tests/both.py) and returns what it prints (reprs,
shapes, dtypes, devices) or raises; both must agree, warnings included.
"""
import math

import pytest

from both import lg, outcome, torch


def _r(t):
    return repr(t)


def same(program):
    """What program(M) returns (as text, 'leafgrad' read as 'torch'), raises and warns is the
    same on both libraries."""
    def as_text(M):
        return str(program(M)).replace('leafgrad', 'torch')
    ours, theirs = outcome(as_text, lg), outcome(as_text, torch)
    assert ours == theirs, f'\nleafgrad: {ours}\ntorch:    {theirs}'


CREATION = {
    'empty': lambda M: M.empty(2, 3, device='meta'),
    'zeros int64': lambda M: M.zeros(2, 3, dtype=M.int64, device='meta'),
    'ones float64': lambda M: M.ones(2, device='meta', dtype=M.float64),
    'full': lambda M: M.full((4,), 2.5, device='meta'),
    'rand requires_grad': lambda M: M.rand(2, 3, device='meta', requires_grad=True),
    'randn huge': lambda M: M.randn(2 ** 10, 3, 2 ** 16, 2 ** 16, device='meta'),
    'randint': lambda M: M.randint(0, 5, (3, 2), device='meta'),
    'arange': lambda M: M.arange(0, 10, 3, device='meta'),
    'tensor of a list': lambda M: M.tensor([[1., 2.], [3., 4.]], device='meta'),
    'empty 0-d': lambda M: M.empty((), device='meta'),
    'empty no elements': lambda M: M.empty(0, 4, device='meta'),
    'cpu tensor to meta': lambda M: M.arange(6.).reshape(2, 3).to('meta'),
    'with device block': lambda M: _in_meta_block(M, lambda: M.randn(5, 2)),
    'empty_like': lambda M: M.empty_like(M.empty(3, 4, device='meta')),
    'zeros_like to meta': lambda M: M.zeros_like(M.ones(2, 2), device='meta'),
}


def _in_meta_block(M, make):
    with M.device('meta'):
        return make()


@pytest.mark.parametrize('name', CREATION)
def test_creation_prints_as_torch(name):
    def program(M):
        t = CREATION[name](M)
        return _r(t), str(t.device), t.is_meta, str(t.dtype), tuple(t.shape), t.stride(), t.requires_grad
    same(program)


def test_meta_factories_draw_nothing_from_the_generator():
    """PyTorch's CPU generator does not advance for meta tensors (rand, randn, uniform_, module
    initialisation)."""
    def program(M):
        M.manual_seed(0)
        M.randn(1000, device='meta')
        M.empty(10, device='meta').uniform_()
        M.nn.Linear(10, 10, device='meta')
        return M.randn(3)
    same(program)


OPS = {
    'add scalar': lambda M, x: x + 1,
    'mul tensors grad_fn': lambda M, x: M.randn(2, 3, device='meta', requires_grad=True) * x,
    'broadcast': lambda M, x: x + M.empty(3, device='meta'),
    'compare': lambda M, x: x > 0,
    'int promotion': lambda M, x: M.ones(2, 3, dtype=M.int32, device='meta') * 2.5,
    'relu': lambda M, x: M.relu(x),
    'exp': lambda M, x: M.exp(x),
    'matmul': lambda M, x: x @ M.empty(3, 7, device='meta'),
    'batched matmul': lambda M, x: M.empty(5, 1, 4, 2, device='meta') @ M.empty(3, 2, 6, device='meta'),
    'matrix vector': lambda M, x: x @ M.empty(3, device='meta'),
    'linear': lambda M, x: M.nn.functional.linear(x, M.empty(4, 3, device='meta'), M.empty(4, device='meta')),
    'sum': lambda M, x: x.sum(),
    'sum dim keepdim': lambda M, x: x.sum(1, keepdim=True),
    'mean dim': lambda M, x: x.mean(0),
    'reshape': lambda M, x: x.reshape(3, -1),
    'view': lambda M, x: x.view(6),
    'flatten': lambda M, x: M.flatten(x),
    'transpose': lambda M, x: x.t(),
    'permute': lambda M, x: M.empty(2, 3, 4, device='meta').permute(2, 0, 1),
    'unsqueeze': lambda M, x: x.unsqueeze(0),
    'index': lambda M, x: x[1],
    'slice': lambda M, x: x[:, 1:],
    'expand': lambda M, x: x[:, :1].expand(2, 5),
    'cat': lambda M, x: M.cat([x, x], 1),
    'stack': lambda M, x: M.stack([x, x]),
    'to float64': lambda M, x: x.to(M.float64),
    'max along a dim': lambda M, x: x.max(dim=1)[0],
    'argmax': lambda M, x: x.argmax(-1),
    'repeat': lambda M, x: x.repeat(2, 1, 3),
    'roll': lambda M, x: x.roll(1, 0),
    'argsort': lambda M, x: x.argsort(1),
    'in-place add_': lambda M, x: x.add_(1),
    'in-place fill_': lambda M, x: x.fill_(3),
    'in-place zero_': lambda M, x: x.zero_(),
    'in-place normal_': lambda M, x: x.normal_(),
    'in-place copy_ from cpu': lambda M, x: x.copy_(M.ones(2, 3)),
}


@pytest.mark.parametrize('name', OPS)
def test_ops_propagate_shapes_and_dtypes(name):
    def program(M):
        x = M.empty(2, 3, device='meta')
        out = OPS[name](M, x)
        return _r(out), tuple(out.shape), str(out.dtype), str(out.device)
    same(program)


LAYERS = {
    'conv2d': lambda M: M.nn.Conv2d(3, 5, 2, device='meta')(M.rand(2, 3, 10, 10, device='meta')),
    'conv2d huge': lambda M: M.nn.Conv2d(3, 5, 2, device='meta')(M.rand(2 ** 10, 3, 2 ** 16, 2 ** 16, device='meta')),
    'conv2d padded strided': lambda M: M.nn.Conv2d(3, 4, 3, stride=2, padding=1, device='meta')(
        M.rand(1, 3, 9, 8, device='meta')),
    'conv1d unbatched': lambda M: M.nn.Conv1d(2, 4, 3, device='meta')(M.rand(2, 10, device='meta')),
    'max_pool2d': lambda M: M.nn.MaxPool2d(2, 2)(M.rand(4, 6, 28, 28, device='meta')),
    'max_pool2d ceil': lambda M: M.nn.functional.max_pool2d(M.rand(1, 2, 7, 7, device='meta'), 2, ceil_mode=True),
    'linear': lambda M: M.nn.Linear(400, 120, device='meta')(M.rand(1024, 400, device='meta')),
}


@pytest.mark.parametrize('name', LAYERS)
def test_layers_give_output_shapes(name):
    def program(M):
        out = LAYERS[name](M)
        return _r(out), tuple(out.shape)
    same(program)


def test_a_network_on_meta_inputs_reports_each_layers_shape():
    """reasoning_about_shapes' program: a forward hook prints every layer's output shape."""
    def program(M):
        nn, F = M.nn, M.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.pool, self.conv2 = nn.Conv2d(3, 6, 5), nn.MaxPool2d(2, 2), nn.Conv2d(6, 16, 5)
                self.fc1, self.fc2 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 10)

            def forward(self, x):
                x = self.pool(F.relu(self.conv1(x)))
                x = self.pool(F.relu(self.conv2(x)))
                return self.fc2(F.relu(self.fc1(M.flatten(x, 1))))
        seen = []
        with M.device('meta'):
            net = Net()
            inp = M.randn((1024, 3, 32, 32))
        for _, layer in net.named_modules():
            layer.register_forward_hook(lambda m, i, o: seen.append((type(m).__name__, tuple(o.shape))))
        out = net(inp)
        return seen, _r(out), [str(p.device) for p in net.parameters()]
    same(program)


ERRORS = {
    'item': lambda M, x: x.sum().item(),
    'float': lambda M, x: float(x.sum()),
    'bool': lambda M, x: bool(x.sum() > 0),
    'cpu': lambda M, x: x.cpu(),
    'to cpu': lambda M, x: x.to('cpu'),
    'tolist': lambda M, x: x.tolist(),
    'numpy': lambda M, x: x.numpy(),
    'meta and cpu': lambda M, x: x + M.ones(3),
    'copy meta into cpu': lambda M, x: M.ones(3).copy_(x),
    'backward without grad': lambda M, x: x.sum().backward(),
}


@pytest.mark.parametrize('name', ERRORS)
def test_reading_values_raises_as_torch(name):
    same(lambda M: ERRORS[name](M, M.randn(3, device='meta')))


def test_module_to_meta_and_to_empty():
    def program(M):
        m = M.nn.Linear(2, 3).to('meta')
        before = (str(m.weight.device), type(m.weight).__name__, m.weight.requires_grad, _r(m.bias))
        m2 = m.to_empty(device='cpu')
        return before, m2 is m, str(m.weight.device), tuple(m.weight.shape), m.weight.requires_grad
    same(program)


def test_to_empty_without_recursion_moves_only_the_modules_own_tensors():
    def program(M):
        outer = M.nn.Module()
        outer.p = M.nn.Parameter(M.empty(2, device='meta'))
        outer.inner = M.nn.Linear(2, 2, device='meta')
        outer.to_empty(device='cpu', recurse=False)
        return str(outer.p.device), str(outer.inner.weight.device)
    same(program)


def test_load_state_dict_into_meta_module():
    """Copying into a meta parameter is a no-op that warns; assign=True takes the checkpoint's
    tensors (module_load_state_dict_tips)."""
    def program(M):
        with M.device('meta'):
            m = M.nn.Linear(2, 2)
        sd = M.nn.Linear(2, 2).state_dict()
        first = str(m.load_state_dict(sd)), str(m.weight.device)
        second = str(m.load_state_dict(sd, assign=True))
        return first, second, str(m.weight.device), type(m.weight).__name__, m.weight.requires_grad, \
            bool((m.weight == sd['weight']).all())
    same(program)


def test_meta_tensors_take_no_memory():
    """A meta tensor of 1.3e13 float32 elements (48 TiB) exists, its operations run at once, and
    no array of that size is ever allocated (it could not be)."""
    t = lg.empty(2 ** 10, 3, 2 ** 16, 2 ** 16, device='meta')
    out = (t * 2).sum(dim=1)
    assert tuple(out.shape) == (2 ** 10, 2 ** 16, 2 ** 16)
    assert math.prod(t.shape) * 4 > 2 ** 45
    assert torch.empty(1, device='meta').is_meta  # (the oracle agrees such tensors exist)


def test_an_op_without_a_meta_rule_says_so():
    """An op whose NumPy code has no meta rule raises NotImplementedError naming it, as PyTorch
    does for an op without a meta kernel, rather than computing on something else."""
    x = lg.empty(3, 4, device='meta')
    with pytest.raises(NotImplementedError, match="meta device has no shape rule for numpy.svd"):
        lg.linalg.svd(x)
    with pytest.raises(NotImplementedError, match="meta device cannot run embedding: it reads an array's values"):
        lg.nn.functional.embedding(lg.empty(2, dtype=lg.int64, device='meta'), lg.empty(5, 3, device='meta'))
