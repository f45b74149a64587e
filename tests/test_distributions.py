"""leafgrad.distributions against torch.distributions, distribution by distribution (the cases
are in dist_cases.py): shapes, log_prob, moments, entropy, cdf/icdf and their gradients with
respect to the parameters, samples (torch's draws bit for bit where both draw the same
primitives in the same order, else the same distribution), rsample's gradients, expand,
enumerate_support and float64 gradcheck of log_prob."""
import numpy as np
import pytest

from oracle import assert_same, same_message, to_np
from dist_cases import CASES, Nested

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402
import leafgrad.distributions as D  # noqa: E402

NOT_DIFFERENTIABLE = {'total_count', 'reinterpreted_batch_ndims'}
IDS = [c[0] for c in CASES]


def _module(lib):
    return D if lib is lg else torch.distributions


def build(lib, name, params, requires_grad=True, dtype=None):
    """The distribution ``name`` in ``lib`` and the leaf tensors of its parameters."""
    leaves, kwargs = [], {}
    for key, value in params.items():
        if isinstance(value, Nested):
            kwargs[key], inner = build(lib, value.name, value.params, requires_grad, dtype)
            leaves += inner
        elif isinstance(value, np.ndarray):
            array = value if dtype is None else value.astype(dtype)
            grad = requires_grad and key not in NOT_DIFFERENTIABLE and array.dtype.kind == 'f'
            tensor = lib.tensor(array.copy(), requires_grad=grad)
            if grad:
                leaves.append(tensor)
            kwargs[key] = tensor
        else:
            kwargs[key] = value
    return getattr(_module(lib), name)(**kwargs), leaves


def both(case, **kw):
    _, name, params, _ = case
    return build(lg, name, params, **kw), build(torch, name, params, **kw)


def _values(case, dist_torch, n=2):
    torch.manual_seed(1)
    with torch.no_grad():
        return to_np(dist_torch.sample((n,))).copy()


def _weights(shape):
    return np.random.default_rng(7).uniform(0.5, 1.5, size=shape)


def _grads(out, leaves, lib):
    if not out.requires_grad or not leaves:
        return [None] * len(leaves)
    w = lib.tensor(_weights(tuple(out.shape)), dtype=out.dtype)
    grads = lib.autograd.grad((out * w).sum(), leaves, allow_unused=True)
    return list(grads)


def compare(out_lg, out_torch, leaves_lg, leaves_torch, atol=1e-7, rtol=1e-6):
    """Values and dtypes, then the gradients of a weighted sum with respect to the parameters
    (or the same error where torch has no derivative)."""
    assert_same(out_lg, out_torch, rtol=rtol, atol=atol)
    if out_torch.dtype.is_floating_point or out_torch.requires_grad:
        assert out_lg.requires_grad == out_torch.requires_grad
    try:
        grads_torch = _grads(out_torch, leaves_torch, torch)
    except (NotImplementedError, RuntimeError) as e:
        with pytest.raises(type(e)) as info:
            _grads(out_lg, leaves_lg, lg)
        assert same_message(str(info.value), str(e))
        return
    for g_lg, g_torch in zip(_grads(out_lg, leaves_lg, lg), grads_torch):
        if g_torch is None:
            assert g_lg is None or not np.any(to_np(g_lg)), g_lg
        else:
            assert_same(g_lg, g_torch, rtol=rtol * 10, atol=atol * 10)


def _tolerance(case, leaves):
    atol = case[3].get('atol')
    if atol is None:
        atol = 1e-5 if any(str(t.dtype) == 'torch.float32' for t in leaves) else 1e-9
    return atol, (1e-5 if atol >= 1e-5 else 1e-7)


def _call(dist, attr, *args):
    value = getattr(dist, attr)
    return value(*args) if callable(value) else value


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_shapes_and_flags(case):
    (d_lg, _), (d_torch, _) = both(case)
    assert tuple(d_lg.batch_shape) == tuple(d_torch.batch_shape)
    assert tuple(d_lg.event_shape) == tuple(d_torch.event_shape)
    assert type(d_lg.batch_shape) is lg.Size
    assert d_lg.has_rsample == d_torch.has_rsample
    assert d_lg.has_enumerate_support == d_torch.has_enumerate_support
    assert type(d_lg.support).__name__ == type(d_torch.support).__name__
    assert d_lg.support.is_discrete == d_torch.support.is_discrete
    assert d_lg.support.event_dim == d_torch.support.event_dim
    for shape in [(), (2,), (2, 3), lg.Size([4])]:
        with torch.no_grad():
            expected = tuple(d_torch.sample(torch.Size(shape)).shape)
        s = d_lg.sample(shape)
        assert tuple(s.shape) == expected
        assert not s.requires_grad
    assert repr(d_lg).replace('leafgrad', 'torch') == repr(d_torch)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_log_prob(case):
    (d_lg, leaves_lg), (d_torch, leaves_torch) = both(case)
    value = case[3]['value'](d_torch) if 'value' in case[3] else _values(case, d_torch)
    atol, rtol = _tolerance(case, leaves_torch)
    out_torch = d_torch.log_prob(torch.tensor(value))
    out_lg = d_lg.log_prob(lg.tensor(value))
    compare(out_lg, out_torch, leaves_lg, leaves_torch, atol, rtol)


@pytest.mark.parametrize('attr', ['mean', 'mode', 'variance', 'stddev', 'entropy', 'perplexity'])
@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_moments_and_entropy(case, attr):
    (d_lg, leaves_lg), (d_torch, leaves_torch) = both(case)
    atol, rtol = _tolerance(case, leaves_torch)
    try:
        out_torch = _call(d_torch, attr)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            _call(d_lg, attr)
        return
    compare(_call(d_lg, attr), out_torch, leaves_lg, leaves_torch, atol, rtol)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_cdf_and_icdf(case):
    (d_lg, leaves_lg), (d_torch, leaves_torch) = both(case)
    atol, rtol = _tolerance(case, leaves_torch)
    value = _values(case, d_torch)
    try:
        out_torch = d_torch.cdf(torch.tensor(value))
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            d_lg.cdf(lg.tensor(value))
    else:
        compare(d_lg.cdf(lg.tensor(value)), out_torch, leaves_lg, leaves_torch, atol, rtol)
    q = np.random.default_rng(3).uniform(0.05, 0.95, size=(2,) + tuple(d_torch.batch_shape + d_torch.event_shape))
    q = q.astype(str(leaves_torch[0].dtype).split('.')[-1]) if leaves_torch else q
    try:
        out_torch = d_torch.icdf(torch.tensor(q))
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            d_lg.icdf(lg.tensor(q))
    else:
        compare(d_lg.icdf(lg.tensor(q)), out_torch, leaves_lg, leaves_torch, atol, rtol)


def _same_draws(s_lg, s_torch, exact):
    """Equal bit for bit, or (``exact='ulp'``, a transcendental function computed by a library
    other than torch's) within 64 units in the last place."""
    if exact == 'ulp':
        eps = np.finfo(to_np(s_lg).dtype).eps
        np.testing.assert_allclose(to_np(s_lg), to_np(s_torch), rtol=64 * eps,
                                   atol=16 * eps * np.abs(to_np(s_torch)).max())
    else:
        np.testing.assert_array_equal(to_np(s_lg), to_np(s_torch))


@pytest.mark.parametrize('seed', [0, 12345])
@pytest.mark.parametrize('case', [c for c in CASES if c[3].get('exact')], ids=[c[0] for c in CASES if c[3].get('exact')])
def test_samples_are_torchs_draws(case, seed):
    (d_lg, leaves_lg), (d_torch, leaves_torch) = both(case)
    lg.manual_seed(seed)
    torch.manual_seed(seed)
    for shape in [(), (5,), (3, 7)]:
        s_lg, s_torch = d_lg.sample(shape), d_torch.sample(shape)
        assert str(s_lg.dtype).split('.')[-1] == str(s_torch.dtype).split('.')[-1]
        _same_draws(s_lg, s_torch, case[3]['exact'])
    if d_torch.has_rsample:
        x_lg, x_torch = d_lg.rsample((4,)), d_torch.rsample((4,))
        _same_draws(x_lg, x_torch, case[3]['exact'])
        atol, rtol = _tolerance(case, leaves_torch)
        # (torch approximates the implicit reparametrisation gradient of gamma samples, to ~1e-3)
        rtol = case[3].get('rsample_grad_rtol', 10 * rtol) / 10
        compare(x_lg, x_torch, leaves_lg, leaves_torch, atol, rtol)


@pytest.mark.parametrize('case', [c for c in CASES if not c[3].get('exact')],
                         ids=[c[0] for c in CASES if not c[3].get('exact')])
def test_samples_follow_torchs_distribution(case):
    """Means and variances of 20,000 draws per batch element agree with torch's within 6
    standard errors (of the difference of two independent estimates)."""
    (d_lg, _), (d_torch, _) = both(case, requires_grad=False)
    n = 20000
    s_lg, s_torch = to_np(d_lg.sample((n,))), to_np(d_torch.sample((n,)))
    assert s_lg.dtype == s_torch.dtype
    for stat in (lambda s: s, lambda s: (s - s.mean(0)) ** 2):
        a, b = stat(s_lg.astype(np.float64)), stat(s_torch.astype(np.float64))
        se = np.sqrt((a.var(0) + b.var(0)) / n) + 1e-12
        assert np.all(np.abs(a.mean(0) - b.mean(0)) < 6 * se), (a.mean(0), b.mean(0))


@pytest.mark.parametrize('case', [c for c in CASES if not c[3].get('exact')],
                         ids=[c[0] for c in CASES if not c[3].get('exact')])
def test_rsample_of_own_samplers_is_differentiable(case):
    """Samplers that are not torch's stream: rsample's gradient reaches every parameter and is
    finite (its values against torch's formulas: test_distributions_examples.py)."""
    (d_lg, leaves_lg), _ = both(case)
    if not d_lg.has_rsample:
        pytest.skip('no rsample')
    x = d_lg.rsample((2,))
    (x * lg.tensor(_weights(tuple(x.shape)), dtype=x.dtype)).sum().backward()
    for leaf in leaves_lg:
        assert leaf.grad is not None and np.all(np.isfinite(to_np(leaf.grad)))


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_expand(case):
    (d_lg, leaves_lg), (d_torch, leaves_torch) = both(case)
    shape = (2,) + tuple(d_torch.batch_shape)
    e_lg, e_torch = d_lg.expand(lg.Size(shape)), d_torch.expand(torch.Size(shape))
    assert type(e_lg).__name__ == type(e_torch).__name__
    assert tuple(e_lg.batch_shape) == shape and tuple(e_lg.event_shape) == tuple(e_torch.event_shape)
    assert e_lg._validate_args == e_torch._validate_args
    value = _values(case, d_torch)
    value = np.broadcast_to(value[:, None], (2, 2) + value.shape[1:]).copy()
    compare(e_lg.log_prob(lg.tensor(value)), e_torch.log_prob(torch.tensor(value)), leaves_lg, leaves_torch,
            *_tolerance(case, leaves_torch))
    assert tuple(e_lg.sample((3,)).shape) == tuple(e_torch.sample((3,)).shape)
    e_lg2 = d_lg.expand(list(shape))  # a list is taken as well
    assert tuple(e_lg2.batch_shape) == shape


@pytest.mark.parametrize('expand', [True, False])
@pytest.mark.parametrize('case', [c for c in CASES if c[1] in ('Bernoulli', 'Categorical', 'OneHotCategorical',
                                                                  'Binomial', 'Independent', 'MixtureSameFamily')],
                         ids=lambda c: c[0])
def test_enumerate_support(case, expand):
    (d_lg, _), (d_torch, _) = both(case)
    try:
        expected = d_torch.enumerate_support(expand)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e) or None):
            d_lg.enumerate_support(expand)
        return
    assert_same(d_lg.enumerate_support(expand), expected)


@pytest.mark.parametrize('case', CASES, ids=IDS)
def test_gradcheck_log_prob(case):
    """float64 log_prob, differentiated numerically and by backward, in every parameter."""
    if case[3].get('float32_only'):
        with pytest.raises(RuntimeError, match='Double did not match Float'):
            getattr(D, case[1])(**{k: lg.tensor(v.astype(np.float64)) for k, v in case[2].items()}).log_prob(
                lg.zeros(3, dtype=lg.float64))
        return
    (d_torch, _) = build(torch, case[1], case[2], dtype=np.float64)
    value = _values(case, d_torch)
    value = lg.tensor(value.astype(np.float64) if value.dtype.kind == 'f' else value)
    _, name, params, _ = case
    arrays = {}

    def flatten(prefix, ps):
        for k, v in ps.items():
            if isinstance(v, Nested):
                flatten(prefix + k + '.', v.params)
            elif isinstance(v, np.ndarray) and v.dtype.kind == 'f' and k not in NOT_DIFFERENTIABLE:
                arrays[prefix + k] = v.astype(np.float64)
    flatten('', params)
    if not arrays:
        pytest.skip('no tensor parameters')
    keys = list(arrays)

    def rebuild(ps, prefix, tensors):
        out = {}
        for k, v in ps.items():
            if isinstance(v, Nested):
                out[k] = getattr(D, v.name)(**rebuild(v.params, prefix + k + '.', tensors))
            elif prefix + k in tensors:
                t = tensors[prefix + k]
                # a covariance is read from its lower triangle: perturb it symmetrically
                out[k] = (t + t.mT) / 2 if k in ('covariance_matrix', 'precision_matrix') else t
            elif isinstance(v, np.ndarray):
                out[k] = lg.tensor(v.astype(np.float64) if v.dtype.kind == 'f' else v)
            else:
                out[k] = v
        return out

    def f(*tensors):
        d = getattr(D, name)(**rebuild(params, '', dict(zip(keys, tensors))), validate_args=False)
        return d.log_prob(value)
    inputs = [lg.tensor(arrays[k], requires_grad=True) for k in keys]
    assert lg.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)
