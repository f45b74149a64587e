"""Generators: seeding, state, independence, and the ``generator=`` of every factory, in-place
sampler and data utility that takes one: behaviour, types and errors against torch. That the
numbers themselves are torch's, bit for bit, is test_random_streams.py's subject."""
import numpy as np
import pytest

import leafgrad as lg
import leafgrad.utils.data as lg_data
from oracle import raises_like, same_message

torch = pytest.importorskip('torch')
import torch.utils.data as torch_data  # noqa: E402


def _values(t):
    return np.asarray(t.tolist())


# ---- factories and samplers that take generator= ---------------------------------------------

# (name, call(T, generator)) — the same call in leafgrad and torch
DRAWS = [
    ('rand', lambda T, g: T.rand(2, 3, generator=g)),
    ('randn', lambda T, g: T.randn(5, generator=g)),
    ('randint', lambda T, g: T.randint(0, 1000, (6,), generator=g)),
    ('randint high only', lambda T, g: T.randint(1000, (6,), generator=g)),
    ('randperm', lambda T, g: T.randperm(20, generator=g)),
    ('normal numbers', lambda T, g: T.normal(1.0, 2.0, (5,), generator=g)),
    ('normal tensors', lambda T, g: T.normal(T.zeros(5), T.ones(5), generator=g)),
    ('bernoulli', lambda T, g: T.bernoulli(T.full((30,), 0.5), generator=g)),
    ('Tensor.bernoulli', lambda T, g: T.full((30,), 0.5).bernoulli(generator=g)),
    ('multinomial', lambda T, g: T.multinomial(T.ones(50), 10, generator=g)),
    ('Tensor.multinomial', lambda T, g: T.ones(50).multinomial(10, generator=g)),
    ('rand_like', lambda T, g: T.rand_like(T.zeros(5), generator=g)),
    ('randn_like', lambda T, g: T.randn_like(T.zeros(5), generator=g)),
    ('randint_like', lambda T, g: T.randint_like(T.zeros(8), 1000, generator=g)),
    ('random_', lambda T, g: T.zeros(6).random_(0, 1000, generator=g)),
    ('uniform_', lambda T, g: T.zeros(5).uniform_(-1, 1, generator=g)),
    ('normal_', lambda T, g: T.zeros(5).normal_(0, 1, generator=g)),
    ('bernoulli_', lambda T, g: T.zeros(30).bernoulli_(0.5, generator=g)),
    ('exponential_', lambda T, g: T.zeros(5).exponential_(2.0, generator=g)),
    ('geometric_', lambda T, g: T.zeros(8).geometric_(0.2, generator=g)),
    ('log_normal_', lambda T, g: T.zeros(5).log_normal_(generator=g)),
    ('cauchy_', lambda T, g: T.zeros(5).cauchy_(generator=g)),
    ('nn.init.uniform_', lambda T, g: T.nn.init.uniform_(T.zeros(5), generator=g)),
    ('nn.init.normal_', lambda T, g: T.nn.init.normal_(T.zeros(5), generator=g)),
]


@pytest.mark.parametrize('name,draw', DRAWS, ids=[d[0] for d in DRAWS])
def test_generator_keyword_honoured(name, draw):
    default_before = lg.get_rng_state()
    first = _values(draw(lg, lg.Generator().manual_seed(11)))
    again = _values(draw(lg, lg.Generator().manual_seed(11)))
    other = _values(draw(lg, lg.Generator().manual_seed(12)))
    assert (first == again).all()  # same seed, same numbers
    assert not (first == other).all()  # another seed, other numbers
    assert (lg.get_rng_state() == default_before).all()  # the default stream did not move
    # torch takes the same call, and its result has the same shape and dtype
    theirs = draw(torch, torch.Generator().manual_seed(11))
    ours = draw(lg, lg.Generator().manual_seed(11))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).replace('torch', 'leafgrad')


@pytest.mark.parametrize('name,draw', DRAWS, ids=[d[0] for d in DRAWS])
def test_generator_of_a_wrong_type_refused_as_torch(name, draw):
    with pytest.raises(TypeError):
        draw(torch, 3)
    with pytest.raises(TypeError, match="argument 'generator' must be leafgrad.Generator, not int"):
        draw(lg, 3)


def test_draws_from_the_default_generator_follow_its_seed():
    for name, draw in DRAWS:
        lg.manual_seed(5)
        a = _values(draw(lg, None))
        lg.manual_seed(5)
        assert (_values(draw(lg, None)) == a).all(), name


def test_dropout_takes_no_generator_as_torch():
    lg_msg, torch_msg = raises_like(lambda: lg.nn.functional.dropout(lg.ones(3), generator=lg.Generator()),
                                    lambda: torch.nn.functional.dropout(torch.ones(3), generator=torch.Generator()))
    assert same_message(lg_msg, torch_msg)


# ---- the Generator object --------------------------------------------------------------------

def test_manual_seed_returns_the_default_generator():
    for T in (lg, torch):
        g = T.manual_seed(3)
        assert g is T.default_generator and type(g) is T.Generator
        assert g.initial_seed() == T.initial_seed() == 3
        assert T.manual_seed(2.7).initial_seed() == 2  # torch.manual_seed converts with int()
    assert lg.random.manual_seed(4) is lg.default_generator


def test_generator_seed_and_device():
    for T in (lg, torch):
        g = T.Generator(device='cpu')
        assert g.device == T.device('cpu') and T.Generator(T.device('cpu')).device.type == 'cpu'
        assert g.manual_seed(9) is g and g.initial_seed() == 9
        s = g.seed()
        assert isinstance(s, int) and 0 <= s < 2 ** 64 and g.initial_seed() == s
        assert T.Generator().initial_seed() == 67280421310721  # PyTorch's default seed
        for seed in (-1, -2 ** 63, 2 ** 64 - 1):
            assert g.manual_seed(seed).initial_seed() == seed % 2 ** 64
        a = _values(T.rand(3, generator=g.manual_seed(-1)))
        assert (a == _values(T.rand(3, generator=g.manual_seed(2 ** 64 - 1)))).all()


@pytest.mark.parametrize('seed', [2 ** 64, -2 ** 63 - 1, 1.5, '3', True, None])
def test_manual_seed_errors_as_torch(seed):
    lg_msg, torch_msg = raises_like(lambda: lg.Generator().manual_seed(seed),
                                    lambda: torch.Generator().manual_seed(seed if not isinstance(seed, type(None))
                                                                          else None))
    assert lg_msg == torch_msg


def test_manual_seed_of_a_tensor_refused_as_torch():
    lg_msg, torch_msg = raises_like(lambda: lg.Generator().manual_seed(lg.tensor(5)),
                                    lambda: torch.Generator().manual_seed(torch.tensor(5)))
    assert lg_msg == torch_msg


def test_device_errors_as_torch():
    for device in ('meta', 1):
        lg_msg, torch_msg = raises_like(lambda: lg.Generator(device), lambda: torch.Generator(device))
        assert lg_msg == torch_msg
    if not lg.cuda.is_available():
        raises_like(lambda: lg.Generator('cuda'), lambda: torch.Generator('cuda'))


def test_state_round_trip():
    for T in (lg, torch):
        g = T.Generator().manual_seed(21)
        T.rand(7, generator=g)
        state = g.get_state()
        assert state.dtype == T.uint8 and state.dim() == 1
        a = _values(T.randn(4, generator=g))
        g.manual_seed(99)
        assert g.set_state(state) is g
        assert g.initial_seed() == 21  # the seed travels with the state
        assert (_values(T.randn(4, generator=g)) == a).all()
        # another generator takes the state over
        h = T.Generator().set_state(state)
        assert (_values(T.randn(4, generator=h)) == a).all()
        # the default generator, through the module functions
        T.manual_seed(1)
        saved = T.get_rng_state()
        b = _values(T.rand(3))
        T.set_rng_state(saved)
        assert (_values(T.rand(3)) == b).all()


@pytest.mark.parametrize('make', [lambda T: [1, 2], lambda T: T.zeros(5), lambda T: T.zeros(5, dtype=T.uint8)],
                         ids=['list', 'float tensor', 'wrong size'])
def test_set_state_errors_as_torch(make):
    lg_msg, torch_msg = raises_like(lambda: lg.Generator().set_state(make(lg)),
                                    lambda: torch.Generator().set_state(make(torch)))
    if 'size' not in lg_msg:
        assert same_message(lg_msg, torch_msg)
    lg_msg, torch_msg = raises_like(lambda: lg.set_rng_state(make(lg)), lambda: torch.set_rng_state(make(torch)))


def test_generators_are_independent():
    g, h = lg.Generator().manual_seed(3), lg.Generator().manual_seed(3)
    a = _values(lg.rand(5, generator=g))
    lg.rand(100)  # the default stream moves: g and h do not notice
    lg.rand(50, generator=lg.Generator().manual_seed(3))
    assert (_values(lg.rand(5, generator=h)) == a).all()
    assert (_values(lg.rand(5, generator=g)) != a).any()  # g moved on
    lg.manual_seed(3)
    assert (_values(lg.rand(5)) == a).all()  # the default generator seeded alike draws alike


def test_clone_state():
    for T in (lg, torch):
        g = T.Generator().manual_seed(8)
        T.rand(3, generator=g)
        c = g.clone_state()
        assert c is not g and c.initial_seed() == 8
        assert (_values(T.rand(4, generator=c)) == _values(T.rand(4, generator=g))).all()


# ---- in-place samplers: grad_fn names, dtypes and parameters as torch --------------------------

SAMPLERS = [('random_', ()), ('random_', (5,)), ('random_', (1, 5)), ('bernoulli_', ()), ('bernoulli_', (0.3,)),
            ('bernoulli_', 'tensor'), ('exponential_', ()), ('geometric_', (0.5,)), ('log_normal_', ()),
            ('cauchy_', ())]


def _args(T, args):
    return (T.full((3,), 0.25),) if args == 'tensor' else args


@pytest.mark.parametrize('method,args', SAMPLERS)
def test_in_place_sampler_records_as_torch(method, args):
    for T in (lg, torch):
        x = T.ones(3, requires_grad=True)
        y = getattr(x.clone(), method)(*_args(T, args))
        (y * 1.0).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
    names = [getattr(T.ones(3, requires_grad=True).clone(), method)(*_args(T, args)).grad_fn.name()
             for T in (lg, torch)]
    assert names[0] == names[1]
    lg_msg, torch_msg = raises_like(lambda: getattr(lg.ones(3, requires_grad=True), method)(*_args(lg, args)),
                                    lambda: getattr(torch.ones(3, requires_grad=True), method)(*_args(torch, args)))
    assert lg_msg == torch_msg


@pytest.mark.parametrize('dtype', ['int64', 'int32', 'uint8', 'bool', 'float64', 'float16'])
@pytest.mark.parametrize('method,args', SAMPLERS)
def test_in_place_sampler_dtypes_as_torch(method, args, dtype):
    def run(T):
        return getattr(T.zeros(3, dtype=getattr(T, dtype)), method)(*_args(T, args))
    try:
        theirs = run(torch)
    except Exception as e:
        lg_msg, torch_msg = raises_like(lambda: run(lg), lambda: run(torch))
        assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)
        return
    ours = run(lg)
    assert str(ours.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]


@pytest.mark.parametrize('call', [
    lambda T: T.zeros(3).exponential_(0), lambda T: T.zeros(3).exponential_(-1.0),
    lambda T: T.zeros(3).geometric_(0), lambda T: T.zeros(3).geometric_(1),
    lambda T: T.zeros(3).log_normal_(1, 0), lambda T: T.zeros(3).cauchy_(0, 0),
    lambda T: T.zeros(3).bernoulli_(1.5), lambda T: T.zeros(3).bernoulli_(T.full((3,), 1.5)),
    lambda T: T.bernoulli(T.full((3,), 1.5)), lambda T: T.ones(3, dtype=T.long).bernoulli(),
    lambda T: T.zeros(4).bernoulli_(T.rand(3)),
    lambda T: T.zeros(3).random_(5, 2), lambda T: T.zeros(3).random_(0),
    lambda T: T.zeros(3, dtype=T.uint8).random_(300), lambda T: T.zeros(3, dtype=T.uint8).random_(-1, 5),
    lambda T: T.zeros(3, dtype=T.bool).random_(5),
])
def test_sampler_parameter_errors_as_torch(call):
    lg_msg, torch_msg = raises_like(lambda: call(lg), lambda: call(torch))
    assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


def test_in_place_sampler_ranges():
    g = lg.Generator().manual_seed(0)
    assert set(lg.zeros(2000).random_(5, generator=g).tolist()) == {0, 1, 2, 3, 4}
    assert set(lg.zeros(2000).random_(3, 6, generator=g).tolist()) == {3, 4, 5}
    u8 = lg.zeros(5000, dtype=lg.uint8).random_(generator=g)
    assert 0 <= u8.min().item() and u8.max().item() >= 250
    f = lg.zeros(5000).random_(generator=g)
    assert 0 <= f.min().item() and f.max().item() <= 2 ** 24 and f.max().item() > 2 ** 23
    big = lg.zeros(1000, dtype=lg.int64).random_(generator=g)
    assert big.min().item() >= 0 and big.max().item() > 2 ** 61
    assert set(lg.zeros(1000, dtype=lg.bool).random_(generator=g).tolist()) == {False, True}
    assert set(lg.zeros(2000).bernoulli_(0.3, generator=g).tolist()) == {0.0, 1.0}
    e = lg.zeros(20000).exponential_(4.0, generator=g)
    assert e.min().item() > 0 and abs(e.mean().item() - 0.25) < 0.02
    geo = lg.zeros(20000).geometric_(0.25, generator=g)
    assert geo.min().item() >= 1 and (geo == geo.round()).all() and abs(geo.mean().item() - 4) < 0.2
    ln = lg.zeros(20000, dtype=lg.float64).log_normal_(0.0, 0.5, generator=g)
    assert ln.min().item() > 0 and abs(ln.log().mean().item()) < 0.02
    c = lg.zeros(20000, dtype=lg.float64).cauchy_(2.0, 0.5, generator=g)
    assert abs(c.median().item() - 2.0) < 0.05
    with pytest.warns(UserWarning, match='to - 1 is out of bounds'):
        lg.zeros(3).random_(2 ** 25)


# ---- data utilities --------------------------------------------------------------------------

def _order(M, T, **kw):
    ds = M.TensorDataset(T.arange(12))
    return [int(b[0]) for (b,) in M.DataLoader(ds, batch_size=1, shuffle=True, **kw)]


def test_dataloader_shuffles_by_its_generator():
    for M, T in ((lg_data, lg), (torch_data, torch)):
        a = _order(M, T, generator=T.Generator().manual_seed(4))
        assert a == _order(M, T, generator=T.Generator().manual_seed(4))  # run to run
        assert sorted(a) == list(range(12))
        assert a != _order(M, T, generator=T.Generator().manual_seed(5))
        T.manual_seed(4)
        default = _order(M, T)
        assert default != a or T is torch  # (torch's default draws a fresh seed from its stream)
        # the loader's private generator leaves the default stream where it was
        T.manual_seed(0)
        state = T.get_rng_state()
        _order(M, T, generator=T.Generator().manual_seed(4))
        assert (T.get_rng_state() == state).all()
        # two epochs of one loader differ, and the pair repeats with the same seed
        g = T.Generator().manual_seed(6)
        loader = M.DataLoader(M.TensorDataset(T.arange(12)), shuffle=True, generator=g)
        epochs = [[int(b[0]) for (b,) in loader] for _ in range(2)]
        assert epochs[0] != epochs[1]
        g.manual_seed(6)
        assert [[int(b[0]) for (b,) in loader] for _ in range(2)] == epochs


class _WorkerSeeds:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return lg_data.get_worker_info().seed


def test_worker_seeds_follow_the_loader_generator():
    def seeds(seed):
        loader = lg_data.DataLoader(_WorkerSeeds(), batch_size=None, num_workers=2,
                                    generator=lg.Generator().manual_seed(seed))
        return [int(s) for s in loader]
    first = seeds(1)
    assert first == seeds(1) and first != seeds(2)
    assert len(set(first)) == 2  # one seed per worker: base seed + worker id


def test_samplers_and_random_split_follow_their_generator():
    def run(M, T, seed):
        g = lambda: T.Generator().manual_seed(seed)  # noqa: E731
        return (list(M.RandomSampler(range(10), generator=g())),
                list(M.RandomSampler(range(10), replacement=True, num_samples=40, generator=g())),
                list(M.SubsetRandomSampler([3, 5, 7, 9, 11], generator=g())),
                [list(s) for s in M.random_split(range(10), [4, 6], generator=g())],
                list(M.WeightedRandomSampler([0.1, 0.2, 0.7], 20, generator=g())),
                list(M.WeightedRandomSampler([1, 2, 3, 4], 4, replacement=False, generator=g())))
    for M, T in ((lg_data, lg), (torch_data, torch)):
        a = run(M, T, 1)
        assert a == run(M, T, 1) and a != run(M, T, 2)
        assert sorted(a[0]) == list(range(10)) and sorted(a[2]) == [3, 5, 7, 9, 11]
        assert sorted(a[3][0] + a[3][1]) == list(range(10)) and set(a[4]) <= {0, 1, 2}
        assert sorted(a[5]) == [0, 1, 2, 3]


@pytest.mark.parametrize('kwargs', [dict(weights=[1.0, 2.0], num_samples=0), dict(weights=[1.0], num_samples=True),
                                    dict(weights=[1.0], num_samples=2, replacement=1),
                                    dict(weights=[[1.0, 2.0]], num_samples=2)])
def test_weighted_sampler_errors_as_torch(kwargs):
    lg_msg, torch_msg = raises_like(lambda: lg_data.WeightedRandomSampler(**kwargs),
                                    lambda: torch_data.WeightedRandomSampler(**kwargs))
    assert lg_msg == torch_msg


# ---- torch.random ----------------------------------------------------------------------------

def test_random_module_as_torch():
    for T in (lg, torch):
        R = T.random
        for name in ('manual_seed', 'seed', 'initial_seed', 'get_rng_state', 'set_rng_state', 'fork_rng',
                     'default_generator', 'Generator'):
            assert hasattr(R, name), name
        assert R.default_generator is T.default_generator
        R.manual_seed(10)
        assert R.initial_seed() == 10
        before = _values(R.get_rng_state())
        with R.fork_rng():
            inside = _values(T.rand(3))
        assert (_values(R.get_rng_state()) == before).all()
        assert (_values(T.rand(3)) == inside).all()  # the stream continues as if the block drew nothing
        with R.fork_rng(enabled=False):
            T.rand(3)
        assert not (_values(R.get_rng_state()) == before).all()
        with R.fork_rng(device_type='meta'):
            pass


def test_fork_rng_errors_as_torch():
    def run(T, **kw):
        with T.random.fork_rng(**kw):
            pass
    if not lg.cuda.is_available():
        lg_msg, torch_msg = raises_like(lambda: run(lg, devices=[0]), lambda: run(torch, devices=[0]))
        assert lg_msg == torch_msg
    raises_like(lambda: run(lg, device_type='xyz'), lambda: run(torch, device_type='xyz'))
