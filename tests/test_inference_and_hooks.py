"""Inference tensors, grad-mode decorators, saved-tensor hooks and the graph API: each program
runs on leafgrad and on torch, and what it returns (or raises, or warns) must be the same."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def _plain(x):
    if isinstance(x, (lg.Tensor, torch.Tensor)):
        return ('tensor', str(x.dtype).split('.')[-1], tuple(x.shape), np.round(x.detach().numpy(), 6).tolist())
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def outcome(program, M):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            result = ('ok', _plain(program(M)))
        except Exception as e:  # noqa: BLE001 (the exception is the outcome)
            result = ('raised', type(e).__name__, str(e).replace('leafgrad', 'torch'))
    messages = [str(w.message).split(' (Triggered internally')[0].replace('leafgrad', 'torch') for w in caught]
    return result, messages


def same(program):
    ours, theirs = outcome(program, lg), outcome(program, torch)
    assert ours == theirs
    return ours


# ---- inference tensors ------------------------------------------------------------------

def _made_in_inference(M):
    with M.inference_mode():
        return M.ones(3)


INFERENCE = {
    'flags': lambda M: (_made_in_inference(M).is_inference(), M.is_inference_mode_enabled(),
                        M.ones(1).is_inference()),
    'op result in inference mode': lambda M: _op_in_inference(M),
    'view of a normal tensor': lambda M: _view_in_inference(M),
    'inplace outside': lambda M: _made_in_inference(M).add_(1),
    'mul_ outside': lambda M: _made_in_inference(M).mul_(2),
    'zero_ outside': lambda M: _made_in_inference(M).zero_(),
    'copy_ outside': lambda M: _made_in_inference(M).copy_(M.zeros(3)),
    'setitem outside': lambda M: _made_in_inference(M).__setitem__(0, 5.0),
    'inplace under no_grad': lambda M: _inplace_no_grad(M),
    'inplace inside is fine': lambda M: _inplace_inside(M),
    'saved for backward': lambda M: M.ones(3, requires_grad=True) * _made_in_inference(M),
    'not saved: fine': lambda M: (M.ones(3, requires_grad=True) + _made_in_inference(M)).sum(),
    'saved through hooks': lambda M: _saved_through_hooks(M),
    'requires_grad outside': lambda M: _made_in_inference(M).requires_grad_(),
    'version': lambda M: _made_in_inference(M)._version,
    'inference_mode(False)': lambda M: _inference_false(M),
    'result outside is normal': lambda M: ((_made_in_inference(M) * 2).is_inference(),
                                           _made_in_inference(M).clone().is_inference()),
}


def _op_in_inference(M):
    x = M.ones(3)
    with M.inference_mode():
        y = x * 2
        z = y.sum()
    return y.is_inference(), z.is_inference(), y.requires_grad


def _view_in_inference(M):
    x = M.ones(3)
    with M.inference_mode():
        v = x[0:2]
    v.add_(1)
    return v.is_inference(), x


def _inplace_no_grad(M):
    x = _made_in_inference(M)
    with M.no_grad():
        x.add_(1)


def _inplace_inside(M):
    x = _made_in_inference(M)
    with M.inference_mode():
        x.add_(1)
        x[0] = 7.0
    return x


def _saved_through_hooks(M):
    x = _made_in_inference(M)
    with M.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        return M.ones(3, requires_grad=True) * x


def _inference_false(M):
    with M.inference_mode():
        with M.inference_mode(False):
            x = M.ones(3)
            inside = M.is_inference_mode_enabled(), M.is_grad_enabled()
        return inside, x.is_inference(), M.is_inference_mode_enabled()


@pytest.mark.parametrize('name', sorted(INFERENCE))
def test_inference_tensors(name):
    same(INFERENCE[name])


def test_refused_inplace_leaves_the_tensor_unchanged():
    x = _made_in_inference(lg)
    for op in (lambda: x.add_(1), lambda: x.mul_(3), lambda: x.zero_(), lambda: x.__setitem__(0, 5.0)):
        with pytest.raises(RuntimeError):
            op()
    assert x.tolist() == [1.0, 1.0, 1.0]


# ---- grad-mode managers as decorators ---------------------------------------------------

def _decorated(M):
    @M.no_grad
    def a():
        return M.is_grad_enabled()

    @M.no_grad()
    def b():
        return M.is_grad_enabled()

    @M.enable_grad
    def c():
        return M.is_grad_enabled()

    @M.inference_mode
    def d():
        return M.is_inference_mode_enabled()

    @M.inference_mode(False)
    def e():
        return M.is_inference_mode_enabled()

    @M.set_grad_enabled(False)
    def f():
        return M.is_grad_enabled()

    @M.autograd.no_grad
    def g():
        return M.is_grad_enabled()
    outside = M.is_grad_enabled()
    with M.no_grad():
        inner = c()
    return a(), b(), inner, d(), e(), f(), g(), outside, M.is_grad_enabled(), a.__name__


def test_grad_mode_decorators():
    assert same(_decorated)[0] == ('ok', [False, False, True, True, False, False, False, True, True, 'a'])


# ---- saved-tensor hooks: what is packed and unpacked, in PyTorch's order -----------------

PACKING = {
    'mm': (lambda M, a, b: a @ b, (2, 3), (3, 4)),
    'bmm': (lambda M, a, b: a @ b, (2, 2, 3), (2, 3, 4)),
    'mul': (lambda M, a, b: a * b, (2, 3), (2, 3)),
    'div': (lambda M, a, b: a / b, (2, 3), (2, 3)),
    'pow': (lambda M, a, b: a.abs() ** b, (2, 3), (2, 3)),
    'linear': (lambda M, x, w, b: M.nn.functional.linear(x, w, b), (2, 3), (4, 3), (4,)),
    'addmm': (lambda M, b, x, w: M.addmm(b, x, w), (4,), (2, 3), (3, 4)),
    'tanh exp': (lambda M, a: a.tanh().exp(), (2, 3)),
    'sigmoid relu': (lambda M, a: a.sigmoid().relu(), (2, 3)),
    'softmax': (lambda M, a: a.softmax(-1), (2, 3)),
    'log_softmax': (lambda M, a: a.log_softmax(-1), (2, 3)),
    'mse': (lambda M, a, b: M.nn.functional.mse_loss(a, b), (2, 3), (2, 3)),
    'conv2d': (lambda M, x, w, b: M.nn.functional.conv2d(x, w, b), (1, 2, 4, 4), (3, 2, 2, 2), (3,)),
    'cross_entropy': (lambda M, a: M.nn.functional.cross_entropy(a, M.tensor([0, 2])), (2, 3)),
    'cross_entropy weighted sum': (lambda M, a: M.nn.functional.cross_entropy(
        a, M.tensor([0, 2, -100]), weight=M.tensor([0.5, 2.0, 1.0], dtype=a.dtype), reduction='sum'), (3, 3)),
    'nll_loss none': (lambda M, a: M.nn.functional.nll_loss(a, M.tensor([1, 0]), reduction='none'), (2, 3)),
    'layer_norm': (lambda M, x, w, b: M.nn.functional.layer_norm(x, (3,), w, b), (2, 3), (3,), (3,)),
    'layer_norm weight only': (lambda M, x, w: M.nn.functional.layer_norm(x, (2, 3), w), (2, 2, 3), (2, 3)),
    'layer_norm no affine': (lambda M, x: M.nn.functional.layer_norm(x, (3,)), (4, 3)),
}


@pytest.mark.parametrize('name', sorted(PACKING))
def test_saved_tensors_hooks_order(name):
    fn, *shapes = PACKING[name]

    def program(M):
        rng = np.random.default_rng(0)
        xs = [M.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
        log = []

        def pack(t):
            log.append(('pack', tuple(t.shape), round(float(t.sum()), 6)))
            return ('boxed', t)

        def unpack(box):
            log.append(('unpack', tuple(box[1].shape), round(float(box[1].sum()), 6)))
            return box[1]
        with M.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = fn(M, *xs)
        y.sum().backward()
        return log, [x.grad for x in xs]
    same(program)


# ---- hooks: what PyTorch refuses ----------------------------------------------------------

def _leaf_and_hook(M, hook):
    a = M.ones(3, requires_grad=True)
    a.register_hook(hook)
    (a * 2).sum().backward()
    return a.grad


def _nonleaf_hook(M, hook):
    a = M.ones(3, requires_grad=True)
    y = a * 2
    y.register_hook(hook)
    y.sum().backward()
    return a.grad


def myhook(g):
    return g.sum()


def _post_accumulate(M, value):
    a = M.ones(3, requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda t: value(M, t))
    (a * 2).sum().backward()
    return a.grad


def _node_prehook(M, returns):
    a = M.ones(3, requires_grad=True)
    y = a * 2
    y.grad_fn.register_prehook(lambda go: returns(M, go))
    y.sum().backward()
    return a.grad


def _node_hook(M, returns):
    a = M.ones(3, requires_grad=True)
    y = a * 2
    y.grad_fn.register_hook(lambda gi, go: returns(M, gi))
    y.sum().backward()
    return a.grad


HOOKS = {
    'shape changed (named)': lambda M: _leaf_and_hook(M, myhook),
    'shape changed (nonleaf)': lambda M: _nonleaf_hook(M, lambda g: M.ones(2)),
    'dtype changed': lambda M: _nonleaf_hook(M, lambda g: g.double()),
    'not a tensor': lambda M: _nonleaf_hook(M, lambda g: 3),
    'scaled is fine': lambda M: _nonleaf_hook(M, lambda g: g * 3),
    'post-accumulate returns an int': lambda M: _post_accumulate(M, lambda M, t: 5),
    'post-accumulate returns a tensor': lambda M: _post_accumulate(M, lambda M, t: t * 2),
    'post-accumulate returns None': lambda M: _post_accumulate(M, lambda M, t: None),
    'prehook wrong count': lambda M: _node_prehook(M, lambda M, go: (go[0], go[0])),
    'prehook wrong shape': lambda M: _node_prehook(M, lambda M, go: (M.ones(2),)),
    'prehook scales': lambda M: _node_prehook(M, lambda M, go: (go[0] * 5,)),
    'node hook wrong shape': lambda M: _node_hook(M, lambda M, gi: (M.ones(2),)),
    'requires_grad on a non-leaf': lambda M: setattr(M.ones(3, requires_grad=True) * 2, 'requires_grad', False),
}


@pytest.mark.parametrize('name', sorted(HOOKS))
def test_hook_validation(name):
    same(HOOKS[name])


def test_create_graph_warning_once_per_process():
    code = '''
import warnings, sys
import {M} as M
warnings.simplefilter('always')
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter('always')
    a = M.ones(3, requires_grad=True)
    M.autograd.grad((a * 2).sum(), a, create_graph=True)
    n0 = len(w)
    (a * a).sum().backward(create_graph=True)
    (a * a).sum().backward(create_graph=True)
print(n0, len(w), str(w[0].message).split(' (Triggered')[0] if w else '')
'''
    import subprocess
    import sys
    outs = [subprocess.run([sys.executable, '-c', code.format(M=m)], capture_output=True, text=True).stdout
            for m in ('leafgrad', 'torch')]
    assert outs[0] == outs[1] and outs[0].startswith('0 1 Using backward() with create_graph=True')


# ---- the graph API -------------------------------------------------------------------------

def _multi_all(M):
    a, b = M.ones(2, requires_grad=True), M.ones(2, requires_grad=True)
    c, d = a * b, a * b
    seen = []
    handle = M.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda gs: seen.append([g is not None for g in gs]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    M.autograd.grad(d.sum(), (b,), retain_graph=True)
    handle.remove()
    c.sum().backward(retain_graph=True)
    return seen


def _multi_any(M):
    a, b = M.ones(2, requires_grad=True), M.ones(2, requires_grad=True)
    seen = []
    M.autograd.graph.register_multi_grad_hook((a, b), lambda g: seen.append(g.tolist()), mode='any')
    (a * 2 + b * 3).sum().backward()
    (b * 5).sum().backward()
    return seen


def _multi_order(M):
    a = M.ones(2, requires_grad=True)
    y = a * 2
    z = y * 3
    seen = []
    M.autograd.graph.register_multi_grad_hook((a, y), lambda gs: seen.append(('multi', [g.tolist() for g in gs])))
    a.register_hook(lambda g: seen.append(('a', g.tolist())))
    z.sum().backward()
    return seen


def _mutation(M):
    with M.autograd.graph.allow_mutation_on_saved_tensors():
        a = M.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a.clone()
        y = (b * b).sum()
        b.mul_(10)
        y.backward()
    return a.grad, b


def _mutation_outside(M):
    with M.autograd.graph.allow_mutation_on_saved_tensors():
        a = M.tensor([1.0, 2.0], requires_grad=True)
        y = (a.clone().exp()).sum()
    y.backward()


def _mutation_nested(M):
    with M.autograd.graph.allow_mutation_on_saved_tensors():
        with M.autograd.graph.allow_mutation_on_saved_tensors():
            pass


def _mutation_without(M):
    a = M.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.clone()
    y = (b * b).sum()
    b.mul_(10)
    try:
        y.backward()
    except RuntimeError as e:  # (leafgrad adds a line naming where the change was made)
        return str(e).split('\n')[0].replace('leafgrad', 'torch')


def _node_api(M):
    a = M.ones(3, requires_grad=True)
    y = (a * 2).sum()
    node = y.grad_fn
    node.metadata['k'] = 1
    log = []
    node.register_prehook(lambda go: log.append(('pre', go[0].tolist())))
    node.register_hook(lambda gi, go: log.append(('post', gi[0].tolist())))
    y.backward()
    return node.name(), node.next_functions[0][0].name(), dict(node.metadata), log


def _versions(M):
    a = M.ones(3)
    v0 = a._version
    M.autograd.graph.increment_version(a)
    M.autograd.graph.increment_version([a, a])
    return a._version - v0


def _disabled(M):
    with M.autograd.graph.disable_saved_tensors_hooks('no hooks here'):
        with M.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass


def _save_on_cpu(M):
    a = M.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with M.autograd.graph.save_on_cpu(pin_memory=False):
        y = (a * a.exp()).sum()
    y.backward()
    return a.grad


GRAPH = {'multi all': _multi_all, 'multi any': _multi_any, 'multi order': _multi_order,
         'multi bad mode': lambda M: M.autograd.graph.register_multi_grad_hook((M.ones(1, requires_grad=True),),
                                                                               print, mode='some'),
         'mutation': _mutation, 'mutation outside': _mutation_outside, 'mutation nested': _mutation_nested,
         'mutation without': _mutation_without, 'node api': _node_api, 'versions': _versions,
         'disabled': _disabled, 'save_on_cpu': _save_on_cpu}


@pytest.mark.parametrize('name', sorted(GRAPH))
def test_graph_api(name):
    same(GRAPH[name])
