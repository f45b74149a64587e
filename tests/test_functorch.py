"""``functorch`` (the package PyTorch installs beside torch) against the real one: deprecated
transforms with PyTorch's FutureWarning, make_functional / make_functional_with_buffers /
combine_state_for_ensemble, and ``import functorch`` under ``python -m leafgrad``."""
import os
import textwrap
import warnings

import numpy as np
import pytest

import leafgrad as lg
from fresh import run_python

torch = pytest.importorskip('torch')
functorch = pytest.importorskip('functorch')
lft = lg.functorch

X = np.random.default_rng(0).standard_normal((4, 3))


def _net(M):
    M.manual_seed(0)
    net = M.nn.Sequential(M.nn.Linear(3, 5), M.nn.BatchNorm1d(5), M.nn.Tanh(), M.nn.Linear(5, 2))
    return net.double()


def _both(program):
    """program(M, ft) on (leafgrad, leafgrad.functorch) and (torch, functorch): returns both
    results and the FutureWarnings' messages."""
    out = []
    for M, ft in ((lg, lft), (torch, functorch)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            result = program(M, ft)
        out.append((result, [str(w.message) for w in caught if w.category is FutureWarning]))
    return out


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, 'detach') else t)


def _close(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-10, atol=1e-12)


def test_jvp_warns_and_computes_as_functorch():
    def program(M, ft):
        p, t = M.tensor(X), M.tensor(X[::-1].copy())
        return ft.jvp(lambda a: (a ** 2).sin(), (p,), (t,))
    (ours, w1), (theirs, w2) = _both(program)
    _close(ours, theirs)
    assert w1 == w2 and len(w1) == 1


@pytest.mark.parametrize('api', ['grad', 'vjp', 'jacrev', 'jacfwd', 'hessian', 'vmap', 'grad_and_value'])
def test_transforms_warn_as_functorch(api):
    def program(M, ft):
        x = M.tensor(X[0])
        f = lambda a: (a ** 3).sum()  # noqa: E731
        if api == 'vjp':
            out, fn = ft.vjp(f, x)
            return [out, *fn(M.tensor(1.0, dtype=M.float64))]
        if api == 'vmap':
            return [ft.vmap(lambda a: M.sin(a))(M.tensor(X))]
        got = getattr(ft, api)(f)(x)
        return list(got) if isinstance(got, tuple) else [got]
    (ours, w1), (theirs, w2) = _both(program)
    _close(ours, theirs)
    assert w1 == w2 and len(w1) == 1


def test_make_functional_with_buffers_runs_the_model_on_given_state():
    def program(M, ft):
        net = _net(M)
        func, params, buffers = ft.make_functional_with_buffers(net)
        x = M.tensor(X)
        out = func(params, buffers, x)
        out.sum().backward()
        grads = [p.grad for p in params]
        doubled = func([2 * p for p in params], buffers, x)
        return ([out, doubled, *grads, *buffers], [type(p).__name__ for p in params], [p.requires_grad for p in params],
                [str(p.device) for p in net.parameters()], len(list(func.parameters())),
                [str(p.device) for p in func.stateless_model.parameters()], type(func).__name__)
    (ours, w1), (theirs, w2) = _both(program)
    _close(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    assert w1 == w2


def test_make_functional_of_tied_weights_and_its_options():
    def program(M, ft):
        M.manual_seed(1)
        lin = M.nn.Linear(3, 3).double()
        net = M.nn.Sequential(lin, M.nn.ReLU(), lin)
        func, params = ft.make_functional(net, disable_autograd_tracking=True)
        out = func(params, M.tensor(X))
        return [out, *params], len(params), [p.requires_grad for p in params]
    (ours, w1), (theirs, w2) = _both(program)
    _close(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    assert w1 == w2


def test_make_functional_refuses_a_model_with_buffers():
    msgs = []
    for M, ft in ((lg, lft), (torch, functorch)):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with pytest.raises(RuntimeError) as info:
                ft.make_functional(M.nn.BatchNorm1d(3))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_combine_state_for_ensemble_with_vmap():
    def program(M, ft):
        models = [_net(M) for _ in range(3)]
        for i, m in enumerate(models):
            with M.no_grad():
                m[0].weight.mul_(i + 1)
            m.eval()
        func, params, buffers = ft.combine_state_for_ensemble(models)
        out = M.func.vmap(func, in_dims=(0, 0, None))(params, buffers, M.tensor(X))
        return [out, *params, *buffers], [tuple(p.shape) for p in params]
    (ours, w1), (theirs, w2) = _both(program)
    _close(ours[0], theirs[0])
    assert ours[1] == theirs[1]
    assert [m for m in w1 if 'combine' in m] == [m for m in w2 if 'combine' in m]


def test_import_functorch_under_python_m_leafgrad(tmp_path):
    (tmp_path / 'prog.py').write_text(textwrap.dedent('''
        import sys, warnings
        warnings.simplefilter('ignore')
        import functorch, torch
        from functorch import jvp, make_functional_with_buffers
        import leafgrad
        try:
            import functorch.dim
        except ImportError as e:
            missing = type(e).__name__, e.name
        out, tangent = jvp(lambda x: x * 3, (torch.ones(2),), (torch.ones(2),))
        print(functorch is leafgrad.functorch, jvp is leafgrad.functorch.jvp, tangent.tolist(), missing,
              sorted(n for n in sys.modules if n.split('.')[0] in ('torch', 'functorch')
                     and not getattr(sys.modules[n], '__name__', '').startswith('leafgrad')))
        '''))
    run = run_python('-m', 'leafgrad', 'prog.py', cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True True [3.0, 3.0] ('ModuleNotFoundError', 'functorch.dim') []"


def test_torch_vmap_is_func_vmap():
    assert (lg.vmap is lg.func.vmap) == (torch.vmap is torch.func.vmap) is True
