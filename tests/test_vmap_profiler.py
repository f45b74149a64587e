"""vmap, forward AD and the profiler wrap the same ops: they compose in either order and nesting
(a profile around vmap, a profile inside the vmapped function, nested vmap, grad and jvp under
vmap under a profile), the values agreeing with torch.func under torch.profiler, the profiler
still recording the ops, and every op the function it was once all are done."""
import warnings

import numpy as np
import pytest

from both import plain

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def _data(M):
    x = M.tensor(np.arange(12.0).reshape(3, 4) / 10, dtype=M.float64)
    w = M.tensor(np.arange(4.0) / 7, dtype=M.float64)
    return x, w


def _f(w):
    return lambda a: (a * w).sin().sum() + a.matmul(w)


def _vmap_in_profile(M):
    x, w = _data(M)
    with M.profiler.profile() as prof:
        out = M.func.vmap(_f(w))(x)
    return out, prof


def _profile_in_vmap(M):
    x, w = _data(M)
    profs = []

    def g(a):
        with M.profiler.profile() as prof:
            profs.append(prof)
            return _f(w)(a)
    return M.func.vmap(g)(x), profs[0]


def _nested_vmap_in_profile(M):
    x, w = _data(M)
    with M.profiler.profile() as prof:
        out = M.func.vmap(M.func.vmap(lambda s: s.sin() * w.sum()))(x)
    return out, prof


def _grad_under_vmap_in_profile(M):
    x, w = _data(M)
    with M.profiler.profile() as prof:
        out = M.func.vmap(M.func.grad(_f(w)))(x)
    return out, prof


def _jacfwd_under_vmap_in_profile(M):
    x, w = _data(M)
    with M.profiler.profile() as prof:
        out = M.func.vmap(M.func.jacfwd(lambda a: (a * w).sin()))(x)
    return out, prof


def _vmap_in_profile_in_vmap(M):
    x, w = _data(M)
    profs = []

    def g(row):
        with M.profiler.profile() as prof:
            profs.append(prof)
            return M.func.vmap(lambda s: s.sin() * w.sum())(row)
    return M.func.vmap(g)(x), profs[0]


PROGRAMS = {'vmap in a profile': _vmap_in_profile, 'a profile in vmap': _profile_in_vmap,
            'nested vmap in a profile': _nested_vmap_in_profile, 'grad under vmap in a profile':
            _grad_under_vmap_in_profile, 'jacfwd under vmap in a profile': _jacfwd_under_vmap_in_profile,
            'vmap in a profile in vmap': _vmap_in_profile_in_vmap}


def _run(program, M):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return program(M)


def _warm_both_layers():
    """Each layer used on its own first (its wrappers built while the other was off): before
    the layers composed, a profile then found vmap's wrappers where it looked for the ops (and
    recorded nothing), or vmap found the profiler's (and batched nothing: wrong results)."""
    lg.func.vmap(lambda a: a.sin())(lg.ones(2, 2))
    with lg.profiler.profile():
        lg.ones(2).sin()


@pytest.mark.parametrize('name', sorted(PROGRAMS))
def test_values_and_events_against_torch(name):
    _warm_both_layers()
    out, prof = _run(PROGRAMS[name], lg)
    expected, torch_prof = _run(PROGRAMS[name], torch)
    assert plain(out) == plain(expected)
    names = {e.name for e in prof.events()}
    torch_names = {e.name for e in torch_prof.events()}
    for op in ('aten::sin', 'aten::mul'):
        assert op in torch_names
        assert op in names, sorted(names)


@pytest.mark.parametrize('name', sorted(PROGRAMS))
def test_ops_restored_and_vmap_works_after(name):
    _warm_both_layers()
    methods = dict(vars(lg.Tensor))
    sin, mul = lg.sin, lg.mul
    _run(PROGRAMS[name], lg)
    assert lg.sin is sin and lg.mul is mul
    assert all(vars(lg.Tensor).get(k) is v for k, v in methods.items())
    x, w = _data(lg)
    tx, tw = _data(torch)
    assert plain(lg.func.vmap(_f(w))(x)) == plain(torch.func.vmap(_f(tw))(tx))
    with lg.profiler.profile() as prof:
        lg.ones(2).sin()
    assert 'aten::sin' in {e.name for e in prof.events()}


def test_op_passed_to_vmap_in_a_profile():
    """vmap(leafgrad.dot): the op taken before any layer was on runs through vmap's rules
    inside a profile, and is recorded."""
    _warm_both_layers()
    x, w = _data(lg)
    tx, tw = _data(torch)
    with lg.profiler.profile() as prof:
        out = lg.func.vmap(lg.dot, in_dims=(0, None))(x, w)
    assert plain(out) == plain(torch.func.vmap(torch.dot, in_dims=(0, None))(tx, tw))
    assert 'aten::dot' in {e.name for e in prof.events()}
