"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm) and the hook-based
nn.utils.weight_norm / spectral_norm against torch on equal seeded weights."""
import warnings

import numpy as np
import pytest

from oracle import assert_same, raises_like, same_message, torch
import leafgrad as lg


def both_seeded(make, seed=0):
    torch.manual_seed(seed)
    tm = make(torch)
    lg.manual_seed(seed)
    return make(lg), tm


def _train(lib, m, steps=3, shape=(4, 3)):
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    outs = []
    for _ in range(steps):
        opt.zero_grad()
        out = m(x)
        out.pow(2).sum().backward()
        opt.step()
        outs.append(out.detach().clone())
    return outs


def _compare_training(lm, tm, shape=(4, 3)):
    assert repr(lm) == repr(tm)
    assert list(lm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        assert_same(lm.state_dict()[k], v, rtol=1e-5, atol=1e-6)
    for a, b in zip(_train(lg, lm, shape=shape), _train(torch, tm, shape=shape)):
        assert_same(a, b, rtol=1e-5, atol=1e-6)
    for k, v in tm.state_dict().items():
        assert_same(lm.state_dict()[k], v, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize('make', ['nn.Linear(3, 5)', 'nn.Conv1d(4, 2, 3)'])
@pytest.mark.parametrize('dim', [0, 1, None])
def test_parametrizations_weight_norm(make, dim):
    lm, tm = both_seeded(lambda T: T.nn.utils.parametrizations.weight_norm(eval(make, {'nn': T.nn}), dim=dim))
    assert type(lm).__name__ == type(tm).__name__
    _compare_training(lm, tm, shape=(4, 3) if 'Linear' in make else (2, 4, 6))


@pytest.mark.parametrize('make,kw', [('nn.Linear(3, 5)', {}), ('nn.Linear(3, 5)', dict(n_power_iterations=3)),
                                     ('nn.Conv1d(4, 2, 3)', {}), ('nn.ConvTranspose1d(4, 2, 3)', {})])
def test_parametrizations_spectral_norm(make, kw):
    lm, tm = both_seeded(lambda T: T.nn.utils.parametrizations.spectral_norm(eval(make, {'nn': T.nn}), **kw))
    _compare_training(lm, tm, shape=(4, 3) if 'Linear' in make else (2, 4, 6))
    lm.eval()
    tm.eval()
    assert_same(lm.weight, tm.weight, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('make', ['nn.Linear(3, 5)', 'nn.Conv1d(4, 2, 3)'])
def test_hook_based_weight_and_spectral_norm(make):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        lm, tm = both_seeded(lambda T: T.nn.utils.weight_norm(eval(make, {'nn': T.nn})))
    assert [str(x.message).replace('leafgrad', 'torch') for x in w][-1] == str(w[0].message)
    _compare_training(lm, tm, shape=(4, 3) if 'Linear' in make else (2, 4, 6))
    lg.nn.utils.remove_weight_norm(lm)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert_same(lm.weight, tm.weight, rtol=1e-5, atol=1e-6)
    lm, tm = both_seeded(lambda T: T.nn.utils.spectral_norm(eval(make, {'nn': T.nn})))
    _compare_training(lm, tm, shape=(4, 3) if 'Linear' in make else (2, 4, 6))
    lg.nn.utils.remove_spectral_norm(lm)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert_same(lm.weight, tm.weight, rtol=1e-5, atol=1e-6)


class _Symmetric:
    @staticmethod
    def make(nn):
        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()
        return Symmetric()


def test_register_and_remove_parametrization():
    def build(T):
        m = T.nn.Linear(3, 3)
        T.nn.utils.parametrize.register_parametrization(m, 'weight', _Symmetric.make(T.nn))
        return m
    lm, tm = both_seeded(build)
    P, LP = torch.nn.utils.parametrize, lg.nn.utils.parametrize
    assert LP.is_parametrized(lm) and LP.is_parametrized(lm, 'weight') and not LP.is_parametrized(lm, 'bias')
    assert LP.type_before_parametrizations(lm) is lg.nn.Linear
    assert_same(lm.weight, tm.weight)
    _compare_training(lm, tm)
    # assignment runs right_inverse
    A = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    with torch.no_grad(), lg.no_grad():
        tm.weight = torch.tensor(A)
        lm.weight = lg.tensor(A)
    assert_same(lm.weight, tm.weight)
    with P.cached(), LP.cached():
        assert lm.weight is lm.weight
        assert_same(lm.weight, tm.weight)
    for leave in (True,):
        P.remove_parametrizations(tm, 'weight', leave_parametrized=leave)
        LP.remove_parametrizations(lm, 'weight', leave_parametrized=leave)
    assert type(lm) is lg.nn.Linear and not hasattr(lm, 'parametrizations')
    assert list(lm.state_dict()) == list(tm.state_dict())
    assert_same(lm.weight, tm.weight)


@pytest.mark.parametrize('case', ['not_found', 'remove_missing', 'shape', 'leave_seq', 'spectral_iters',
                                  'spectral_dim', 'two_weight_norms', 'remove_weight_norm'])
def test_errors(case):
    def run(T):
        nn = T.nn
        m = nn.Linear(3, 2)
        if case == 'not_found':
            return nn.utils.parametrize.register_parametrization(m, 'foo', nn.Identity())
        if case == 'remove_missing':
            return nn.utils.parametrize.remove_parametrizations(m, 'weight')
        if case == 'shape':
            class Bad(nn.Module):
                def forward(self, x):
                    return x[0]
            return nn.utils.parametrize.register_parametrization(m, 'weight', Bad())
        if case == 'leave_seq':
            nn.utils.parametrizations.weight_norm(m)
            return nn.utils.parametrize.remove_parametrizations(m, 'weight', leave_parametrized=False)
        if case == 'spectral_iters':
            return nn.utils.parametrizations.spectral_norm(m, n_power_iterations=0)
        if case == 'spectral_dim':
            return nn.utils.parametrizations.spectral_norm(m, dim=3)
        if case == 'two_weight_norms':
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                nn.utils.weight_norm(m)
                return nn.utils.weight_norm(m)
        return nn.utils.remove_weight_norm(m)
    a, b = raises_like(lambda: run(lg), lambda: run(torch))
    assert same_message(a, b), (a, b)


ORTHOGONAL_CASES = [((4, 4), {}), ((6, 3), {}), ((3, 6), {}), ((4, 4), dict(orthogonal_map='cayley')),
                    ((3, 5), dict(orthogonal_map='cayley')), ((5, 3), dict(orthogonal_map='householder')),
                    ((5, 3), dict(orthogonal_map='householder', use_trivialization=False)),
                    ((4, 4), dict(orthogonal_map='matrix_exp', use_trivialization=False))]


def _orthogonal_linear(T, shape, kw):
    T.manual_seed(0)
    m = T.nn.Linear(*shape, dtype=T.float64)
    T.nn.utils.parametrizations.orthogonal(m, **kw)
    return m


@pytest.mark.parametrize('shape,kw', ORTHOGONAL_CASES, ids=[f'{s}-{k}' for s, k in ORTHOGONAL_CASES])
def test_orthogonal_as_pytorch(shape, kw):
    """parametrizations.orthogonal: the weight (orthogonal from the start), the original's gradient,
    the trivialization's base, the module's repr, and assigning an orthogonal matrix, each as
    PyTorch's from the same seed; a float64 gradcheck of the map."""
    results = []
    for T in (lg, torch):
        m = _orthogonal_linear(T, shape, kw)
        x = T.randn(3, shape[0], dtype=T.float64)
        m(x).sum().backward()
        orth = m.parametrizations.weight[0]
        base = getattr(orth, 'base', None)
        results.append([m.weight.detach().numpy(), m.parametrizations.weight.original.grad.numpy(),
                        None if base is None else base.numpy(), repr(m).replace('leafgrad', 'torch')])
    for ours, theirs in zip(*results):
        if isinstance(ours, str) or ours is None:
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    m = _orthogonal_linear(lg, shape, kw)
    orth = m.parametrizations.weight[0]
    # (householder's map keeps the signs int(diagonal): smooth only away from integers, where
    # the trivialization's start, -I, sits)
    original = (m.parametrizations.weight.original.detach() + 0.25).requires_grad_(True)
    assert lg.autograd.gradcheck(orth, (original,))


def test_orthogonal_errors_and_assignment_as_pytorch():
    for make in (lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3), orthogonal_map='foo'),
                 lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3), name='bias'),
                 lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3), name='nope')):
        raises_like(lambda: make(lg), lambda: make(torch))
    weights = []
    for T in (lg, torch):
        m = _orthogonal_linear(T, (4, 4), {})
        with T.no_grad():
            m.weight = T.linalg.qr(T.arange(16.0, dtype=T.float64).reshape(4, 4) + T.eye(4, dtype=T.float64))[0]
        weights.append(m.weight.detach().numpy())
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-10, atol=1e-12)
    m = _orthogonal_linear(lg, (4, 4), dict(use_trivialization=False))
    with pytest.raises(NotImplementedError, match='not possible to assign to the matrix exponential'):
        m.weight = lg.eye(4, dtype=lg.float64)
