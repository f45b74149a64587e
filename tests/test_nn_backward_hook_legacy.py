"""Module.register_backward_hook (the deprecated, non-full kind) against torch: the hook runs on
the node that made the module's first output tensor, with that node's gradients; its return value
replaces them; PyTorch's FutureWarnings where those are not the module's; a module keeps one kind
of backward hook."""
import pytest

from both import same


def recorder(seen):
    def hook(module, grad_input, grad_output):
        seen.append(dict(module=type(module).__name__, kind=(type(grad_input).__name__, type(grad_output).__name__),
                         grad_input=[g if g is None else g.clone() for g in grad_input],
                         grad_output=[g if g is None else g.clone() for g in grad_output]))
    return hook


def test_on_a_convolution_whose_input_comes_from_another_node():
    def program(M):
        M.manual_seed(0)
        pool, conv = M.nn.MaxPool2d(2), M.nn.Conv2d(2, 3, 3)
        seen = []
        conv.register_backward_hook(recorder(seen))
        x = M.randn(1, 2, 10, 10, requires_grad=True)
        conv(pool(x)).pow(2).sum().backward()
        return seen, x.grad
    same(program)


def test_a_single_node_forward_and_a_hook_that_replaces_the_gradient():
    def program(M):
        relu = M.nn.ReLU()
        seen = []
        relu.register_backward_hook(recorder(seen))
        relu.register_backward_hook(lambda m, gi, go: tuple(g * 10 for g in gi))
        x = M.tensor([[-1., 2., 3.]], requires_grad=True)
        (relu(x * 1) * M.tensor([1., 2., 3.])).sum().backward()
        return seen, x.grad
    same(program)


def test_a_linear_layer_sees_its_addmm_node():
    def program(M):
        M.manual_seed(0)
        lin = M.nn.Linear(3, 2)
        seen = []
        handle = lin.register_backward_hook(recorder(seen))
        x = M.randn(4, 3, requires_grad=True)
        lin(x).sum().backward()
        handle.remove()
        lin(x).sum().backward()
        return seen, len(seen)
    same(program)


def test_the_warnings_where_the_node_is_not_the_module():
    def program(M):
        class Two(M.nn.Module):
            def forward(self, x):
                return x * 2, x + 1

        class Nested(M.nn.Module):
            def forward(self, x):
                return [x * 2]

        class Keyword(M.nn.Module):
            def forward(self, x, scale):
                return x * scale

        class Dict(M.nn.Module):
            def forward(self, x):
                return {'a': 1, 'out': x * 3}

        seen = []
        x = M.ones(2, requires_grad=True)
        for module, args in [(M.nn.Sequential(M.nn.Linear(2, 2), M.nn.ReLU()), (x,)), (Two(), (x,)),
                             (Nested(), (x,)), (Keyword(), (x, 2.0)), (Dict(), (x,))]:
            module.register_backward_hook(recorder(seen))
            out = module(*args)
            first = out['out'] if isinstance(out, dict) else out[0] if isinstance(out, (tuple, list)) else out
            first.sum().backward()
        return [s['module'] for s in seen]
    same(program)


@pytest.mark.parametrize('order', ['regular first', 'full first'])
def test_one_kind_of_backward_hook_per_module(order):
    def program(M):
        lin = M.nn.Linear(2, 2)
        hook = lambda m, gi, go: None  # noqa: E731
        if order == 'regular first':
            lin.register_backward_hook(hook)
            lin.register_full_backward_hook(hook)
        else:
            lin.register_full_backward_hook(hook)
            lin.register_backward_hook(hook)
    same(program)
