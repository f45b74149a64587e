"""leafgrad draws PyTorch's random numbers: the same program, seeded alike, gives the same tensors
bit for bit (compared as bytes, not within a tolerance) — every sampler, dtype and size class
(fewer than 16 elements, 16, 17, 1000, a transposed tensor), seeds 0, 1, 2**32 + 5 and -3, the
default generator and explicit ones, calls interleaved, states carried between the libraries,
layers' initial weights, dropout masks and a shuffled DataLoader's order."""
import math
import warnings

import numpy as np
import pytest

import leafgrad as lg
import leafgrad.utils.data as lg_data

torch = pytest.importorskip('torch')
import torch.utils.data as torch_data  # noqa: E402

SEEDS = (0, 1, 2 ** 32 + 5, -3)
SIZES = (1, 5, 16, 17, 1000)
FLOATS = ('float32', 'float64', 'float16')


def _array(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach()._data)


def assert_bits(ours, theirs):
    """Same shape, dtype and bytes (NaNs alike); a failure shows the first elements that differ."""
    a, b = _array(ours), _array(theirs)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    same = (a == b) | ((a != a) & (b != b)) if a.dtype.kind == 'f' else a == b
    same &= np.signbit(a) == np.signbit(b) if a.dtype.kind == 'f' else True
    assert same.all(), f'{(~same).sum()} of {same.size} differ: {a[~same][:4]} vs {b[~same][:4]}'


def both(draw, seed, explicit):
    """draw(T, generator) in leafgrad and torch, from a generator seeded with ``seed`` (the
    default one through manual_seed, or a new Generator); then the streams' positions too."""
    out = []
    for T in (lg, torch):
        if explicit:
            g = T.Generator().manual_seed(seed)
            out.append((draw(T, g), g.get_state()))
        else:
            T.manual_seed(seed)
            out.append((draw(T, None), T.get_rng_state()))
    (ours, our_state), (theirs, their_state) = out
    assert_bits(our_state, their_state)
    return ours, theirs


def check(draw, explicit_too=True):
    for seed in SEEDS:
        for explicit in (False, True) if explicit_too else (False,):
            ours, theirs = both(draw, seed, explicit)
            if isinstance(theirs, (list, tuple)):
                assert len(ours) == len(theirs)
                for a, b in zip(ours, theirs):
                    assert_bits(a, b)
            else:
                assert_bits(ours, theirs)


def dt(T, name):
    return getattr(T, name)


# ---- factories -------------------------------------------------------------------------------

@pytest.mark.parametrize('n', SIZES)
@pytest.mark.parametrize('dtype', FLOATS)
def test_rand_randn(dtype, n):
    check(lambda T, g: T.rand(n, dtype=dt(T, dtype), generator=g))
    check(lambda T, g: T.randn(n, dtype=dt(T, dtype), generator=g))
    # (2, n) is contiguous: the same kernel as (2n,)
    check(lambda T, g: T.randn(2, n, dtype=dt(T, dtype), generator=g), explicit_too=False)


def test_randn_16_blocks_use_pytorchs_vectorised_math():
    """Sizes 16 and up take the vectorised float32 Box-Muller (PyTorch's own log and sincos, not
    correctly rounded): every element of a million agrees."""
    for T in (lg, torch):
        T.manual_seed(3)
    assert_bits(lg.randn(1_000_003), torch.randn(1_000_003))


@pytest.mark.parametrize('dtype', FLOATS)
def test_like_factories_keep_the_layout_and_its_drawing_order(dtype):
    def base(T):
        return T.zeros(6, 4, dtype=dt(T, dtype)).t()  # dense, not contiguous: drawn in memory order
    for n_like in ('rand_like', 'randn_like'):
        check(lambda T, g: getattr(T, n_like)(base(T), generator=g))
    check(lambda T, g: T.randint_like(base(T), 3, 90, generator=g))
    check(lambda T, g: T.randn_like(T.zeros(5, 7, dtype=dt(T, dtype)), generator=g))
    assert lg.rand_like(base(lg)).stride() == torch.rand_like(base(torch)).stride()


INT_DTYPES = ('int64', 'int32', 'int16', 'int8', 'uint8', 'bool', 'float32', 'float64', 'float16')


@pytest.mark.parametrize('dtype', INT_DTYPES)
def test_randint_and_random_(dtype):
    def ranges():
        lo, hi = (0, 2) if dtype == 'bool' else (0, 100) if dtype in ('uint8', 'int8') else (-7, 100)
        yield lo, hi
        if dtype in ('int64', 'int32', 'float64'):
            yield from ((0, 2 ** 28 - 1), (0, 2 ** 28), (5, 2 ** 31 - 1))  # 32-bit draws, then 64-bit ones
        if dtype in ('int64', 'float64'):
            yield from ((0, 2 ** 40), (-2 ** 62, 2 ** 62))
    for lo, hi in ranges():
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # (float64 beyond 2**53: PyTorch's warning, given by both)
            check(lambda T, g: T.randint(lo, hi, (40,), dtype=dt(T, dtype), generator=g))
            check(lambda T, g: T.empty(8, 5, dtype=dt(T, dtype)).t().random_(lo, hi, generator=g),
                  explicit_too=False)
    check(lambda T, g: T.empty(40, dtype=dt(T, dtype)).random_(generator=g))
    check(lambda T, g: T.empty(40, dtype=dt(T, dtype)).random_(2, generator=g))
    if dtype != 'bool':
        check(lambda T, g: T.empty(40, dtype=dt(T, dtype)).random_(1, None, generator=g))
    if dtype in ('int64', 'float64', 'float32'):
        check(lambda T, g: T.empty(40, dtype=dt(T, dtype)).random_(-2 ** 63, None, generator=g))


@pytest.mark.parametrize('bounds', [(2 ** 24 + 1, 2 ** 25 + 7), (-2 ** 26 - 3, 2 ** 27 + 1), (-2 ** 30 - 5, None)])
def test_random_bounds_a_float_cannot_hold_are_moved_as_torch(bounds):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check(lambda T, g: T.empty(30).random_(*bounds, generator=g))
    with pytest.warns(UserWarning, match='is out of bounds'):
        lg.empty(3).random_(*bounds)


def test_random_bound_errors_as_torch():
    from oracle import raises_like, same_message
    for make in (lambda T: T.empty(3).random_(2 ** 30 + 5, None), lambda T: T.empty(3, dtype=T.float16).random_(70000),
                 lambda T: T.empty(3, dtype=T.int8).random_(-2 ** 63, None),
                 lambda T: T.empty(3).random_(2 ** 25 + 1, 2 ** 25 + 2)):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            lg_msg, torch_msg = raises_like(lambda: make(lg), lambda: make(torch))
        assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


@pytest.mark.parametrize('n', (1, 2, 5, 50, 1000))
def test_randperm(n):
    check(lambda T, g: T.randperm(n, generator=g))
    check(lambda T, g: T.randperm(n, dtype=T.float32, generator=g), explicit_too=False)


@pytest.mark.parametrize('n', SIZES)
def test_normal(n):
    check(lambda T, g: T.normal(0.3, 1.7, (n,), generator=g))
    m = np.linspace(-1, 1, n).astype(np.float32)
    s = np.linspace(0.5, 2, n).astype(np.float32)
    check(lambda T, g: T.normal(T.tensor(m), T.tensor(s), generator=g))
    check(lambda T, g: T.normal(T.tensor(m), 1.7, generator=g))
    check(lambda T, g: T.normal(0.3, T.tensor(s), generator=g))
    check(lambda T, g: T.normal(T.tensor(m, dtype=T.float64), T.tensor(s, dtype=T.float64), generator=g))


@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('shape', [(7,), (3, 50)])
def test_multinomial(shape, dtype):
    probs = np.random.default_rng(0).random(shape).astype(dtype)
    for replacement, samples in ((True, 1), (True, 5), (True, 40), (False, 1), (False, 5)):
        check(lambda T, g: T.multinomial(T.tensor(probs), samples, replacement, generator=g))
    check(lambda T, g: T.tensor(probs).multinomial(3, generator=g))


@pytest.mark.parametrize('dtype', FLOATS)
def test_bernoulli(dtype):
    p = np.linspace(0, 1, 1000).astype(dtype)
    check(lambda T, g: T.bernoulli(T.tensor(p), generator=g))
    check(lambda T, g: T.tensor(p).bernoulli(0.3, generator=g))
    check(lambda T, g: T.tensor(p).reshape(25, 40).t().bernoulli(generator=g))


# ---- in-place samplers -----------------------------------------------------------------------

def _target(T, dtype, n):
    """A tensor of n elements of dtype: contiguous, or (n = 'T') a transposed 9 x 7 one."""
    if n == 'T':
        return T.zeros(9, 7, dtype=dt(T, dtype)).t()
    return T.zeros(n, dtype=dt(T, dtype))


SAMPLERS = [
    ('uniform_', lambda t, g: t.uniform_(-1.3, 2.7, generator=g)),
    ('uniform_ 0 1', lambda t, g: t.uniform_(generator=g)),
    ('normal_', lambda t, g: t.normal_(0.7, 2.3, generator=g)),
    ('normal_ 0 1', lambda t, g: t.normal_(generator=g)),
    ('bernoulli_ p', lambda t, g: t.bernoulli_(0.3, generator=g)),
    ('bernoulli_ tensor', lambda t, g: t.bernoulli_(t.new_full(t.shape, 0.6), generator=g)),
    ('exponential_', lambda t, g: t.exponential_(2.5, generator=g)),
    ('geometric_', lambda t, g: t.geometric_(0.2, generator=g)),
    ('log_normal_', lambda t, g: t.log_normal_(0.5, 0.75, generator=g)),
    ('cauchy_', lambda t, g: t.cauchy_(0.5, 2.0, generator=g)),
]


@pytest.mark.parametrize('n', SIZES + ('T',))
@pytest.mark.parametrize('dtype', FLOATS)
@pytest.mark.parametrize('name,fill', SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_in_place_samplers(name, fill, dtype, n):
    check(lambda T, g: fill(_target(T, dtype, n), g))


def test_geometric_into_integers():
    check(lambda T, g: T.zeros(50, dtype=T.int64).geometric_(0.05, generator=g))
    check(lambda T, g: T.zeros(50, dtype=T.uint8).bernoulli_(0.5, generator=g))


# ---- one stream, several calls; several streams ------------------------------------------------

def test_interleaved_calls_share_one_stream():
    """Each call continues where the last stopped, the scalar normal sampler's cached second
    sample included (an odd-sized float64 randn leaves one for the next normal)."""
    def program(T, g):
        return [T.randn(3, dtype=T.float64, generator=g), T.rand(5, generator=g), T.randn(5, generator=g),
                T.randint(0, 10, (3,), generator=g), T.randn(20, generator=g),
                T.empty(1, dtype=T.float64).log_normal_(generator=g), T.randperm(7, generator=g),
                T.randn(1, dtype=T.float64, generator=g), T.rand(17, dtype=T.float16, generator=g)]
    check(program)


def test_two_generators_alternating():
    def program(T, _):
        g, h = T.Generator().manual_seed(1), T.Generator().manual_seed(2)
        return [T.randn(3, generator=g), T.randn(3, generator=h), T.rand(20, generator=g), T.randn(3),
                T.randn(3, generator=h)]
    check(program, explicit_too=False)


def test_initial_seed_and_seed():
    for T in (lg, torch):
        assert T.Generator().initial_seed() == 67280421310721
        g = T.Generator()
        s = g.seed()
        a = T.rand(5, generator=g)
        assert_bits(a, T.rand(5, generator=T.Generator().manual_seed(s)))
    # an unseeded program starts, as PyTorch's, from the operating system's randomness
    assert lg.Generator().manual_seed(0).initial_seed() == 0
    assert_bits(lg.rand(4, generator=lg.Generator()), torch.rand(4, generator=torch.Generator()))


# ---- states carried between the libraries ----------------------------------------------------

def _advance(T, g):
    T.rand(7, generator=g)
    T.randn(3, dtype=T.float64, generator=g)  # leaves a cached normal sample in the state


@pytest.mark.parametrize('seed', SEEDS)
def test_states_are_pytorchs_bytes_and_carry_over(seed):
    ours, theirs = lg.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    assert_bits(ours.get_state(), theirs.get_state())  # just seeded
    _advance(lg, ours)
    _advance(torch, theirs)
    state = ours.get_state()
    assert_bits(state, theirs.get_state())
    assert state.numel() == 5056
    # leafgrad's state in torch, torch's in leafgrad: each continues as the other would
    t2 = torch.Generator().set_state(torch.from_numpy(state.numpy().copy()))
    l2 = lg.Generator().set_state(lg.tensor(theirs.get_state().numpy()))
    assert t2.initial_seed() == l2.initial_seed() == seed % 2 ** 64
    for a, b in ((lg.randn(5, dtype=lg.float64, generator=l2), torch.randn(5, dtype=torch.float64, generator=t2)),
                 (lg.randn(40, generator=l2), torch.randn(40, generator=t2))):
        assert_bits(a, b)


def test_rng_state_of_the_default_generator_round_trips():
    lg.manual_seed(5)
    torch.manual_seed(5)
    lg.rand(3)
    torch.rand(3)
    lg.set_rng_state(lg.tensor(torch.get_rng_state().numpy()))
    assert_bits(lg.randn(30), torch.randn(30))
    torch.set_rng_state(torch.from_numpy(lg.get_rng_state().numpy().copy()))
    assert_bits(lg.randint(0, 1000, (9,)), torch.randint(0, 1000, (9,)))
    with lg.random.fork_rng():
        lg.rand(100)
    assert_bits(lg.rand(3), torch.rand(3))


def test_a_state_set_mid_block_reads_its_words_before_the_next_twist():
    """A state whose position is not where a run of draws leaves it (left + next != 625) is read
    as PyTorch reads it: the remaining words first, then a twist."""
    state = torch.Generator().manual_seed(9).get_state().numpy().copy()
    state[8:12] = np.frombuffer(np.int32(600).tobytes(), np.uint8)  # left
    state[16:24] = np.frombuffer(np.uint64(3).tobytes(), np.uint8)  # next
    t = torch.Generator().set_state(torch.from_numpy(state.copy()))
    g = lg.Generator().set_state(lg.tensor(state))
    assert_bits(lg.randint(0, 2 ** 31, (100,), dtype=lg.int32, generator=g),
                torch.randint(0, 2 ** 31, (100,), dtype=torch.int32, generator=t))
    assert_bits(g.get_state(), t.get_state())
    assert_bits(lg.randint(0, 2 ** 31, (800,), dtype=lg.int32, generator=g),
                torch.randint(0, 2 ** 31, (800,), dtype=torch.int32, generator=t))


# ---- layers, initialisers, dropout -----------------------------------------------------------

LAYERS = [
    ('Linear', lambda T: T.nn.Linear(3, 2)),
    ('Linear wide', lambda T: T.nn.Linear(20, 7, bias=False)),
    ('Bilinear', lambda T: T.nn.Bilinear(3, 4, 5)),
    ('Conv1d', lambda T: T.nn.Conv1d(3, 4, 3)),
    ('Conv2d groups', lambda T: T.nn.Conv2d(4, 8, 3, groups=2)),
    ('Conv3d', lambda T: T.nn.Conv3d(2, 3, 2)),
    ('ConvTranspose2d', lambda T: T.nn.ConvTranspose2d(3, 4, 3)),
    ('Embedding', lambda T: T.nn.Embedding(10, 3, padding_idx=2)),
    ('RNN', lambda T: T.nn.RNN(3, 4, num_layers=2, bidirectional=True)),
    ('LSTM', lambda T: T.nn.LSTM(3, 4, num_layers=2)),
    ('GRU', lambda T: T.nn.GRU(3, 4, bidirectional=True)),
    ('LSTMCell', lambda T: T.nn.LSTMCell(3, 4)),
    ('GRUCell', lambda T: T.nn.GRUCell(3, 4)),
    ('MultiheadAttention', lambda T: T.nn.MultiheadAttention(8, 2)),
    ('MultiheadAttention kdim', lambda T: T.nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True)),
    ('TransformerEncoder', lambda T: T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(8, 2, 16), 2)),
    ('BatchNorm1d', lambda T: T.nn.BatchNorm1d(3)),
    ('MLP', lambda T: T.nn.Sequential(T.nn.Linear(64, 128), T.nn.ReLU(), T.nn.Linear(128, 10))),
]


@pytest.mark.parametrize('name,make', LAYERS, ids=[layer[0] for layer in LAYERS])
def test_layers_start_from_pytorchs_weights(name, make):
    def params(T, _):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # (enable_nested_tensor's notice)
            module = make(T)
        return [p for _, p in module.named_parameters()] + [T.rand(1)]  # and the stream continues alike
    check(params, explicit_too=False)
    lg.manual_seed(0)
    torch.manual_seed(0)
    assert [n for n, _ in make(lg).named_parameters()] == [n for n, _ in make(torch).named_parameters()]


def test_linear_prints_pytorchs_weights():
    lg.manual_seed(0)
    torch.manual_seed(0)
    assert str(lg.nn.Linear(3, 2).weight).replace('leafgrad', 'torch') == str(torch.nn.Linear(3, 2).weight)


INITS = [
    ('uniform_', lambda T, w, g: T.nn.init.uniform_(w, -0.2, 0.7, generator=g)),
    ('normal_', lambda T, w, g: T.nn.init.normal_(w, 0.1, 0.02, generator=g)),
    ('xavier_uniform_', lambda T, w, g: T.nn.init.xavier_uniform_(w, gain=1.3, generator=g)),
    ('xavier_normal_', lambda T, w, g: T.nn.init.xavier_normal_(w, generator=g)),
    ('kaiming_uniform_', lambda T, w, g: T.nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=g)),
    ('kaiming_normal_ fan_out', lambda T, w, g: T.nn.init.kaiming_normal_(w, mode='fan_out', nonlinearity='relu',
                                                                         generator=g)),
    ('trunc_normal_', lambda T, w, g: T.nn.init.trunc_normal_(w, std=0.02, generator=g)),
    ('trunc_normal_ narrow', lambda T, w, g: T.nn.init.trunc_normal_(w, mean=0.0, std=1.0, a=1.5, b=2.5,
                                                                     generator=g)),
    ('sparse_', lambda T, w, g: T.nn.init.sparse_(w, 0.3, generator=g)),
]


INIT_CASES = [pytest.param(init, shape, id=f"{name}-{'x'.join(map(str, shape))}") for name, init in INITS
              for shape in ((3, 5), (40, 30), (8, 4, 3, 3)) if name != 'sparse_' or len(shape) == 2]


@pytest.mark.parametrize('init,shape', INIT_CASES)
def test_init(init, shape):
    check(lambda T, g: init(T, T.empty(shape), g))


def test_orthogonal_draws_as_pytorch():
    """The Gaussian matrix is PyTorch's bit for bit; its QR runs through another LAPACK, so the
    orthogonal factor agrees in its printed digits (and to 1e-6), not necessarily in every bit."""
    for shape in ((3, 5), (6, 4), (8, 4, 3)):
        for T in (lg, torch):
            T.manual_seed(0)
        ours, theirs = lg.nn.init.orthogonal_(lg.empty(shape)), torch.nn.init.orthogonal_(torch.empty(shape))
        np.testing.assert_allclose(_array(ours), _array(theirs), atol=1e-6)
        assert str(ours).replace('leafgrad', 'torch') == str(theirs)
        assert_bits(lg.rand(2), torch.rand(2))


DROPOUTS = [
    ('dropout', lambda T, x: T.nn.functional.dropout(x, 0.3)),
    ('dropout p=1', lambda T, x: T.nn.functional.dropout(x, 1.0)),
    ('dropout in place', lambda T, x: T.nn.functional.dropout(x.clone(), 0.6, inplace=True)),
    ('nn.Dropout', lambda T, x: T.nn.Dropout(0.5)(x)),
    ('dropout of a transposed input', lambda T, x: T.nn.functional.dropout(x.transpose(0, 3), 0.5)),
    ('dropout1d', lambda T, x: T.nn.functional.dropout1d(x[0], 0.5)),
    ('dropout1d unbatched', lambda T, x: T.nn.functional.dropout1d(x[0, 0], 0.5)),
    ('dropout2d', lambda T, x: T.nn.Dropout2d(0.4)(x)),
    ('dropout2d 3-D', lambda T, x: T.nn.functional.dropout2d(x[0], 0.4)),
    ('dropout3d', lambda T, x: T.nn.Dropout3d(0.4)(x.unsqueeze(0))),
    ('dropout3d unbatched', lambda T, x: T.nn.functional.dropout3d(x, 0.4)),
    ('alpha_dropout', lambda T, x: T.nn.functional.alpha_dropout(x, 0.2, True)),
    ('AlphaDropout', lambda T, x: T.nn.AlphaDropout(0.5)(x)),
    ('feature_alpha_dropout', lambda T, x: T.nn.functional.feature_alpha_dropout(x, 0.3, True)),
    ('FeatureAlphaDropout', lambda T, x: T.nn.FeatureAlphaDropout(0.3)(x)),
]


@pytest.mark.parametrize('dtype', ('float32', 'float64', 'float16'))
@pytest.mark.parametrize('name,drop', DROPOUTS, ids=[d[0] for d in DROPOUTS])
def test_dropout_masks(name, drop, dtype):
    data = np.random.default_rng(0).standard_normal((2, 3, 4, 5))

    def run(T, _):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # (dropout2d's notices about 3-D inputs)
            x = T.tensor(data, dtype=dt(T, dtype), requires_grad=True)
            out = drop(T, x)
        out.sum().backward()
        return [out, x.grad]
    check(run, explicit_too=False)


def test_gumbel_softmax_draws_as_pytorch():
    """The Gumbel noise is -log of PyTorch's Exp(1) samples; the log of a float32 is NumPy's (not
    PyTorch's vectorised one), so the soft sample agrees to 1e-6 and the hard one exactly."""
    logits = np.random.default_rng(1).standard_normal((4, 10)).astype(np.float32)
    for hard in (False, True):
        outs = []
        for T in (lg, torch):
            T.manual_seed(0)
            outs.append(_array(T.nn.functional.gumbel_softmax(T.tensor(logits), tau=0.5, hard=hard)))
        np.testing.assert_allclose(outs[0], outs[1], atol=1e-6)


# ---- data loading ----------------------------------------------------------------------------

def _batches(M, T, loader_kwargs, epochs=2):
    ds = M.TensorDataset(T.arange(50))
    loader = M.DataLoader(ds, **loader_kwargs)
    return [[b[0].tolist() for b in loader] for _ in range(epochs)]


@pytest.mark.parametrize('seed', SEEDS)
def test_shuffled_dataloader_yields_pytorchs_batches(seed):
    for kwargs in (dict(batch_size=8, shuffle=True), dict(batch_size=7, shuffle=True, drop_last=True)):
        for with_generator in (False, True):
            orders = []
            for M, T in ((lg_data, lg), (torch_data, torch)):
                T.manual_seed(seed)
                extra = dict(generator=T.Generator().manual_seed(seed + 1)) if with_generator else {}
                orders.append((_batches(M, T, dict(kwargs, **extra)), T.rand(2).tolist()))
            assert orders[0] == orders[1]


@pytest.mark.parametrize('seed', SEEDS)
def test_samplers_and_random_split_draw_as_pytorch(seed):
    def run(M, T):
        T.manual_seed(seed)
        g = T.Generator().manual_seed(seed)
        return (list(M.RandomSampler(range(20))), list(M.RandomSampler(range(20), replacement=True, num_samples=70)),
                list(M.RandomSampler(range(20), num_samples=45, generator=g)),
                list(M.SubsetRandomSampler([3, 5, 7, 9, 11, 13])),
                [list(s) for s in M.random_split(range(30), [0.3, 0.7])],
                list(M.WeightedRandomSampler([0.1, 0.2, 0.7, 0.0, 1.0], 30)),
                list(M.WeightedRandomSampler([1, 2, 3, 4, 5], 4, replacement=False, generator=g)),
                list(M.DistributedSampler(range(23), num_replicas=3, rank=1, seed=seed % 1000)),
                T.rand(3).tolist())
    assert run(lg_data, lg) == run(torch_data, torch)


def test_worker_seeds_are_pytorchs():
    """Workers are seeded with base_seed + worker_id (the base seed an int64 random_() from the
    loader's generator) and numpy.random with PyTorch's hash of the two."""
    from torch.utils.data._utils.worker import _generate_state
    from leafgrad.utils.data._workers import _numpy_seed

    class Seeds:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = lg_data.get_worker_info()
            return info.seed, info.id, np.random.get_state()[1][:4].tolist()

    g, torch_g = lg.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    loader = lg_data.DataLoader(Seeds(), batch_size=None, num_workers=2, generator=g)
    for epoch in range(2):  # a base seed per epoch, from the loader's generator
        base = int(torch.empty((), dtype=torch.int64).random_(generator=torch_g))
        seen = set()
        for seed, worker, numpy_key in loader:
            assert seed == base + worker
            assert numpy_key == np.random.RandomState(_generate_state(base, worker)).get_state()[1][:4].tolist()
            seen.add(worker)
        assert seen == {0, 1}
    rng = np.random.default_rng(7)
    for base_seed, worker in zip(rng.integers(0, 2 ** 63, 50).tolist(), rng.integers(0, 16, 50).tolist()):
        assert _numpy_seed(base_seed, worker) == _generate_state(base_seed, worker)


@pytest.mark.slow
def test_vectorised_log_and_sincos_need_no_tie_check_on_the_samplers_arguments():
    """The float32 normal sampler's log and sincos do their multiply-adds in float64 and round
    once (mul_add), skipping fma's check for a float64 sum that lands on a float32 tie: for
    every one of the 2**24 float uniforms u, log(1 - u) and sincos(2 pi u) come out the same
    either way."""
    from leafgrad import _kernel_math as km
    u_all = np.arange(1 << 24, dtype=np.uint32).astype(np.float32) * np.float32(2.0 ** -24)
    for start in range(0, 1 << 24, 1 << 20):
        u = u_all[start:start + (1 << 20)]
        one_minus_u, angle = np.float32(1) - u, np.float32(2 * np.pi) * u
        assert np.array_equal(km.log(one_minus_u).view(np.uint32), km.log(one_minus_u, km.fma).view(np.uint32))
        for fast, checked in zip(km.sincos(angle), km.sincos(angle, km.fma)):
            assert np.array_equal(fast.view(np.uint32), checked.view(np.uint32))
