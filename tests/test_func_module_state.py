"""torch.func's module helpers and reverse-mode transforms, each program run on leafgrad and on
torch: functional_call, stack_module_state, nn.utils.stateless, grad_and_value, vjp(has_aux)."""
import pytest

from both import same

torch = pytest.importorskip('torch')


def _mlp(M, seed=0):
    M.manual_seed(seed)
    return M.nn.Sequential(M.nn.Linear(3, 4), M.nn.Tanh(), M.nn.Linear(4, 2))


def _bn(M):
    M.manual_seed(0)
    return M.nn.Sequential(M.nn.Linear(3, 4), M.nn.BatchNorm1d(4))


class _Tied:
    @staticmethod
    def make(M):
        class Tied(M.nn.Module):
            def __init__(self):
                super().__init__()
                self.foo = M.nn.Parameter(M.ones(()))
                self.foo_tied = self.foo
                self.register_buffer('buf', M.zeros(()))

            def forward(self, x):
                return x + self.foo + self.foo_tied + self.buf
        return Tied()


def _call(M):
    model = _mlp(M)
    x = M.arange(6.0).reshape(2, 3)
    params = {k: v * 2 for k, v in model.named_parameters()}
    out = M.func.functional_call(model, params, (x,))
    return out, model(x), model[0].weight.sum(), out.requires_grad


def _call_two_dicts(M):
    model = _bn(M)
    x = M.arange(6.0).reshape(2, 3)
    params = dict(model.named_parameters())
    buffers = {k: v.clone() for k, v in model.named_buffers()}
    out = M.func.functional_call(model, (params, buffers), x)
    return out, buffers, dict(model.named_buffers())


def _call_grad(M):
    model = _mlp(M)
    x = M.arange(6.0).reshape(2, 3)
    params = {k: v.detach().requires_grad_() for k, v in model.named_parameters()}
    loss = M.func.functional_call(model, params, (x,)).pow(2).sum()
    loss.backward()
    return [p.grad for p in params.values()], [p.grad for p in model.parameters()]


def _grad_of_call(M):
    model = _mlp(M)
    x = M.arange(6.0).reshape(2, 3)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x):
        return M.func.functional_call(model, p, (x,)).pow(2).sum()
    grads, value = M.func.grad_and_value(loss)(params, x)
    return grads, value


def _kwargs(M):
    class Scale(M.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = M.nn.Parameter(M.ones(2))

        def forward(self, x, *, scale=1.0):
            return self.w * x * scale
    return M.func.functional_call(Scale(), {'w': M.full((2,), 3.0)}, (M.ones(2),), {'scale': 2.0})


def _tied(M, tie):
    model = _Tied.make(M)
    return M.func.functional_call(model, {'foo': M.zeros(())}, (M.zeros(()),), tie_weights=tie)


def _tied_conflict(M):
    model = _Tied.make(M)
    return M.func.functional_call(model, {'foo': M.zeros(()), 'foo_tied': M.ones(())}, (M.zeros(()),))


def _strict(M, given):
    model = _mlp(M)
    return M.func.functional_call(model, given(M), (M.ones(1, 3),), strict=True)


def _stack(M):
    models = [_mlp(M, seed) for seed in range(3)]
    params, buffers = M.func.stack_module_state(models)
    return ({k: (v.shape, v.requires_grad, v.is_leaf, v) for k, v in params.items()}, buffers)


def _stack_buffers(M):
    params, buffers = M.func.stack_module_state([_bn(M), _bn(M)])
    return sorted(params), {k: v for k, v in buffers.items()}


def _stack_modes(M):
    a, b = _mlp(M), _mlp(M)
    b.eval()
    return M.func.stack_module_state([a, b])


def _stack_classes(M):
    return M.func.stack_module_state([_mlp(M), M.nn.Linear(3, 4)])


def _stack_grad_mix(M):
    a, b = M.nn.Linear(2, 2), M.nn.Linear(2, 2)
    b.weight.requires_grad_(False)
    return M.func.stack_module_state([a, b])


def _stateless(M):
    model = _mlp(M)
    return M.nn.utils.stateless.functional_call(model, {'0.bias': M.zeros(4)}, M.ones(1, 3))


def _vjp_aux(M):
    x = M.tensor([1.0, 2.0, 3.0])

    def f(x):
        y = x.sin() * 2
        return y, {'cos': x.cos(), 'pair': (y.sum(), x)}
    out, fn, aux = M.func.vjp(f, x, has_aux=True)
    return out, fn(M.ones(3)), aux, out.requires_grad, aux['cos'].requires_grad


def _vjp_aux_bad(M):
    return M.func.vjp(lambda x: x * 2, M.ones(2), has_aux=True)


def _vjp_aux_not_tensor(M):
    return M.func.vjp(lambda x: (x * 2, 3), M.ones(2), has_aux=True)


def _grad_and_value_aux(M):
    def f(x, y):
        return (x * y).sum(), (x + y, 'label')
    return M.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(M.tensor([1.0, 2.0]), M.tensor([3.0, 4.0]))


def _grad_and_value_nonscalar(M):
    return M.func.grad_and_value(lambda x: x * 2)(M.ones(2))


PROGRAMS = {
    'call': _call, 'call with two dicts': _call_two_dicts, 'gradients through a call': _call_grad,
    'grad of a call': _grad_of_call, 'kwargs': _kwargs,
    'tied': lambda M: _tied(M, True), 'untied': lambda M: _tied(M, False), 'tied conflict': _tied_conflict,
    'strict missing': lambda M: _strict(M, lambda M: {'0.weight': M.ones(4, 3)}),
    'strict unexpected': lambda M: _strict(M, lambda M: dict(_mlp(M).named_parameters(), extra=M.ones(1))),
    'repeated keys': lambda M: M.func.functional_call(_mlp(M), ({'0.bias': M.ones(4)}, {'0.bias': M.ones(4)}),
                                                      (M.ones(1, 3),)),
    'not dicts': lambda M: M.func.functional_call(_mlp(M), [{'0.bias': M.ones(4)}, 3], (M.ones(1, 3),)),
    'not a dict': lambda M: M.func.functional_call(_mlp(M), 3, (M.ones(1, 3),)),
    'stack': _stack, 'stack buffers': _stack_buffers, 'stack modes': _stack_modes, 'stack classes': _stack_classes,
    'stack none': lambda M: M.func.stack_module_state([]), 'stack requires_grad mix': _stack_grad_mix,
    'stateless': _stateless,
    'vjp has_aux': _vjp_aux, 'vjp has_aux not a pair': _vjp_aux_bad, 'vjp aux not tensors': _vjp_aux_not_tensor,
    'grad_and_value has_aux': _grad_and_value_aux, 'grad_and_value not scalar': _grad_and_value_nonscalar,
}


@pytest.mark.parametrize('name', sorted(PROGRAMS))
def test_program(name):
    same(PROGRAMS[name])
