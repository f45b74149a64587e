"""Whole training programs through leafgrad.compile against the same programs run eagerly.

Each program is written here in the manner of a pytorch/examples one: a VAE, a DCGAN, an LSTM
and a Transformer language model (its causal mask made and compared inside the call), LSTM
cells over a time series with LBFGS, an MNIST convnet with Adadelta and StepLR, polynomial
regression, a Siamese network and a small ResNet. The model is compiled as
``torch.compile(model)`` and trained a few steps beside an eager copy from the same seed.
Losses, parameters and buffers agree bit for bit, and every traced signature replays (no eager
fallback), in-place activations (``nn.ReLU(inplace=True)``) and residual sums (``out += x``)
included. The rest checks in-place ops under autograd: replayed out of place on an
intermediate that nothing else shows, eager where a view, an input or a saved tensor is
changed."""
import math
import warnings

import numpy as np
import pytest

import leafgrad as lg

nn, F = lg.nn, lg.nn.functional


def _compiled_or_not(model, compile_):
    return lg.compile(model) if compile_ else model


# ---- a variational autoencoder: randn_like inside the compiled region ---------------------------

class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc21, self.fc22 = nn.Linear(20, 16), nn.Linear(16, 4), nn.Linear(16, 4)
        self.fc3, self.fc4 = nn.Linear(4, 16), nn.Linear(16, 20)

    def forward(self, x):
        h1 = F.relu(self.fc1(x.view(-1, 20)))
        mu, logvar = self.fc21(h1), self.fc22(h1)
        z = mu + lg.randn_like(mu) * lg.exp(0.5 * logvar)
        return lg.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


def vae(compile_):
    lg.manual_seed(0)
    model = VAE()
    run = _compiled_or_not(model, compile_)
    opt = lg.optim.Adam(model.parameters(), lr=1e-3)
    data, seen = lg.rand(8, 20), []
    for _ in range(3):
        opt.zero_grad()
        recon, mu, logvar = run(data)
        loss = F.binary_cross_entropy(recon, data, reduction='sum') - 0.5 * lg.sum(
            1 + logvar - mu.pow(2) - logvar.exp())
        loss.backward()
        opt.step()
        seen.append(loss.item())
    return run, seen, model


# ---- a DCGAN: in-place activations, detach(), two optimizers, one model called on two inputs -----

def _generator():
    return nn.Sequential(nn.ConvTranspose2d(8, 16, 4, 1, 0, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
                         nn.ConvTranspose2d(16, 3, 4, 2, 1, bias=False), nn.Tanh())


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                                  nn.Conv2d(16, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32),
                                  nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(32, 1, 2, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def _weights_init(m):
    if 'Conv' in type(m).__name__:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif 'BatchNorm' in type(m).__name__:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def dcgan(compile_):
    lg.manual_seed(0)
    net_g, net_d = _generator(), Discriminator()
    net_g.apply(_weights_init)
    net_d.apply(_weights_init)
    g, d = _compiled_or_not(net_g, compile_), _compiled_or_not(net_d, compile_)
    criterion = nn.BCELoss()
    opt_d = lg.optim.Adam(net_d.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = lg.optim.Adam(net_g.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real, seen = lg.rand(4, 3, 8, 8) * 2 - 1, []
    for _ in range(3):
        net_d.zero_grad()
        label = lg.full((4,), 1.0)
        err_real = criterion(d(real), label)
        err_real.backward()
        fake = g(lg.randn(4, 8, 1, 1))
        label.fill_(0.0)
        err_fake = criterion(d(fake.detach()), label)
        err_fake.backward()
        opt_d.step()
        net_g.zero_grad()
        label.fill_(1.0)
        err_g = criterion(d(fake), label)
        err_g.backward()
        opt_g.step()
        seen += [err_real.item(), err_fake.item(), err_g.item()]
    return (g, d), seen, nn.ModuleList([net_g, net_d])


# ---- an LSTM language model: tied weights, hidden state carried and detached, clipping ---------

class RNNModel(nn.Module):
    def __init__(self, ntoken=11, ninp=6, nlayers=2, dropout=0.2):
        super().__init__()
        self.drop, self.encoder = nn.Dropout(dropout), nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, ninp, nlayers, dropout=dropout)
        self.decoder = nn.Linear(ninp, ntoken)
        self.decoder.weight = self.encoder.weight  # tied
        self.ntoken, self.nlayers, self.nhid = ntoken, nlayers, ninp

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden


def _clipped_sgd_step(model, loss, lr):
    """The word language model's update: backward, the gradients' norm clipped to 0.25, then
    plain SGD through .data."""
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)


def word_lstm(compile_):
    lg.manual_seed(0)
    model = RNNModel()
    run = _compiled_or_not(model, compile_)
    data = lg.randint(0, 11, (21, 3))
    weight = next(model.parameters())
    hidden = (weight.new_zeros(2, 3, 6), weight.new_zeros(2, 3, 6))
    seen = []
    for i in range(0, 20, 5):
        model.zero_grad()
        hidden = tuple(h.detach() for h in hidden)
        output, hidden = run(data[i:i + 5], hidden)
        loss = F.nll_loss(output, data[i + 1:i + 6].reshape(-1))
        _clipped_sgd_step(model, loss, 2.0)
        seen.append(loss.item())
    model.eval()
    with lg.no_grad():
        output, _ = run(data[:5], hidden)
    seen.append(output.sum().item())
    return run, seen, model


# ---- a Transformer language model: the causal mask, made and tested inside the compiled call -------

class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=50):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = lg.arange(0, max_len, dtype=lg.float).unsqueeze(1)
        div_term = lg.exp(lg.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe = lg.zeros(max_len, d_model)
        pe[:, 0::2] = lg.sin(position * div_term)
        pe[:, 1::2] = lg.cos(position * div_term)
        self.register_buffer('pe', pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Module):
    def __init__(self, ntoken=11, ninp=8, nhead=2, nhid=16, nlayers=2, dropout=0.1):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout), nlayers)
        self.input_emb, self.decoder, self.ninp = nn.Embedding(ntoken, ninp), nn.Linear(ninp, ntoken), ninp

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        src = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
        return F.log_softmax(self.decoder(self.encoder(src, mask=mask)), dim=-1)


def word_transformer(compile_):
    lg.manual_seed(0)
    model = TransformerModel()
    run = _compiled_or_not(model, compile_)
    data, seen = lg.randint(0, 11, (21, 3)), []
    for i in range(0, 20, 5):
        model.zero_grad()
        loss = F.nll_loss(run(data[i:i + 5]).view(-1, 11), data[i + 1:i + 6].reshape(-1))
        _clipped_sgd_step(model, loss, 0.5)
        seen.append(loss.item())
    model.eval()
    with lg.no_grad():
        seen.append(run(data[:7]).sum().item())
    return run, seen, model


# ---- LSTM cells over a time series, trained with LBFGS's closure -------------------------------

class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1, self.lstm2, self.linear = nn.LSTMCell(1, 8), nn.LSTMCell(8, 8), nn.Linear(8, 1)

    def forward(self, input, future=0):
        outputs = []
        h, c, h2, c2 = (lg.zeros(input.size(0), 8, dtype=lg.double) for _ in range(4))
        for input_t in input.split(1, dim=1):
            h, c = self.lstm1(input_t, (h, c))
            h2, c2 = self.lstm2(h, (h2, c2))
            output = self.linear(h2)
            outputs += [output]
        for _ in range(future):
            h, c = self.lstm1(output, (h, c))
            h2, c2 = self.lstm2(h, (h2, c2))
            output = self.linear(h2)
            outputs += [output]
        return lg.cat(outputs, dim=1)


def time_sequence(compile_):
    lg.manual_seed(0)
    x = np.arange(12) + np.random.default_rng(0).integers(-8, 8, (4, 1))
    data = np.sin(x / 5.0)
    input, target = lg.from_numpy(data[1:, :-1]), lg.from_numpy(data[1:, 1:])
    model = Sequence().double()
    run = _compiled_or_not(model, compile_)
    opt = lg.optim.LBFGS(model.parameters(), lr=0.8)
    seen = []

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(run(input), target)
        loss.backward()
        seen.append(loss.item())
        return loss
    for _ in range(2):
        opt.step(closure)
    with lg.no_grad():
        seen.append(run(input[:2], future=3).sum().item())
    return run, seen, model


# ---- an MNIST convnet: dropout, train/eval, Adadelta with StepLR -------------------------------

class MnistNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 4, 3, 1), nn.Conv2d(4, 8, 3, 1)
        self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1, self.fc2 = nn.Linear(128, 16), nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = F.relu(self.fc1(lg.flatten(self.dropout1(x), 1)))
        return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)


def mnist(compile_):
    lg.manual_seed(0)
    model = MnistNet()
    run = _compiled_or_not(model, compile_)
    opt = lg.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = lg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    data, target, seen = lg.randn(6, 1, 12, 12), lg.randint(0, 10, (6,)), []
    for _ in range(3):
        model.train()
        opt.zero_grad()
        loss = F.nll_loss(run(data), target)
        loss.backward()
        opt.step()
        scheduler.step()
        model.eval()
        with lg.no_grad():
            output = run(data)
        seen += [loss.item(), F.nll_loss(output, target, reduction='sum').item(),
                 output.argmax(dim=1).eq(target).sum().item()]
    return run, seen, model


# ---- polynomial regression: manual updates through .data --------------------------------------

def regression(compile_):
    lg.manual_seed(0)
    w_target, b_target = lg.randn(4, 1) * 5, lg.randn(1) * 5
    fc = nn.Linear(4, 1)
    run = _compiled_or_not(fc, compile_)
    seen = []
    for _ in range(4):
        x = lg.randn(8).unsqueeze(1)
        features = lg.cat([x ** i for i in range(1, 5)], 1)
        fc.zero_grad()
        loss = F.smooth_l1_loss(run(features), features.mm(w_target) + b_target.item())
        loss.backward()
        for p in fc.parameters():
            p.data.add_(-0.1 * p.grad)
        seen.append(loss.item())
    return run, seen, fc


# ---- a Siamese network: one tower called twice in the region (batch norm counts both) -----------

class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                                 nn.AdaptiveAvgPool2d((1, 1)))
        self.fc = nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))

    def forward(self, a, b):
        towers = lg.cat((self.cnn(a).view(a.size(0), -1), self.cnn(b).view(b.size(0), -1)), 1)
        return lg.sigmoid(self.fc(towers))


def siamese(compile_):
    lg.manual_seed(0)
    model = Siamese()
    run = _compiled_or_not(model, compile_)
    opt = lg.optim.Adam(model.parameters(), lr=1e-2)
    a, b, t, seen = lg.randn(4, 1, 6, 6), lg.randn(4, 1, 6, 6), lg.tensor([1., 0., 1., 0.]), []
    for _ in range(3):
        opt.zero_grad()
        loss = F.binary_cross_entropy(run(a, b).squeeze(), t)
        loss.backward()
        opt.step()
        seen.append(loss.item())
    return run, seen, model


# ---- a residual block: out += identity, then relu in place ----------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, planes=4):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False), nn.BatchNorm2d(planes)
        self.conv2, self.bn2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False), nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(inplace=True))
        self.layer = nn.Sequential(BasicBlock(), BasicBlock())
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        return self.fc(lg.flatten(F.adaptive_avg_pool2d(self.layer(self.stem(x)), 1), 1))


def resnet(compile_):
    lg.manual_seed(0)
    model = TinyResNet()
    run = _compiled_or_not(model, compile_)
    opt = lg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x, y, seen = lg.randn(4, 3, 6, 6), lg.tensor([0, 1, 4, 2]), []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(run(x), y)
        loss.backward()
        opt.step()
        seen.append(loss.item())
    model.eval()
    with lg.no_grad():
        seen.append(run(x).sum().item())
    return run, seen, model


PROGRAMS = [vae, dcgan, word_lstm, word_transformer, time_sequence, mnist, regression, siamese, resnet]


def _state(model):
    return [t.detach().numpy().copy() for t in list(model.parameters()) + list(model.buffers())]


def _replays(run):
    """Every signature each compiled model traced replays (none runs eagerly)."""
    runs = run if isinstance(run, tuple) else (run,)
    entries = [e for r in runs for e in getattr(r, '_compiled', getattr(r, '_leafgrad_compiled', None)).cache.values()]
    return bool(entries) and all(e.program is not None for e in entries)


@pytest.mark.parametrize('program', PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_program_compiled_gives_the_eager_training(program):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        _, want, eager_model = program(False)
        run, got, compiled_model = program(True)
    assert got == want
    for g, w in zip(_state(compiled_model), _state(eager_model)):
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)
    runs = run if isinstance(run, tuple) else (run,)
    assert _replays(run), '\n'.join(r.report() for r in runs)


# ---- in-place ops under autograd ------------------------------------------------------------------

def _both(fn, *make):
    """fn eagerly and compiled (called twice: trace, then replay), on fresh inputs each time:
    (eager's output and input gradients, the compiled call's, the compiled callable)."""
    compiled = lg.compile(fn)
    results = []
    for run in (fn, compiled, compiled):
        lg.manual_seed(0)
        xs = [m() for m in make]
        out = run(*xs)
        out.sum().backward()
        results.append([out.detach().numpy().copy()] + [x.grad.numpy().copy() for x in xs if x.grad is not None])
    return results[0], results[2], compiled


def _leaf(*shape):
    return lambda: lg.randn(*shape, dtype=lg.float64, requires_grad=True)


@pytest.mark.parametrize('name', ['relu_', 'F.relu inplace', 'leaky_relu inplace', '+=', 'mul_ twice',
                                  'add_ of itself', 'dropout inplace', 'mul_ then sigmoid_'])
def test_in_place_op_on_an_intermediate_replays_as_eager(name):
    w = lg.randn(3, 4, dtype=lg.float64, requires_grad=True)
    ops = {
        'relu_': lambda h, x: h.relu_(),
        'F.relu inplace': lambda h, x: F.relu(h, inplace=True),
        'leaky_relu inplace': lambda h, x: F.leaky_relu(h, 0.1, inplace=True),
        '+=': lambda h, x: h.__iadd__(x),
        'mul_ twice': lambda h, x: h.mul_(x).mul_(2.5),
        'add_ of itself': lambda h, x: h.add_(h),
        'dropout inplace': lambda h, x: F.dropout(h, 0.5, training=True, inplace=True),
        'mul_ then sigmoid_': lambda h, x: h.mul_(2.5).sigmoid_(),
    }

    def fn(x):
        h = x * w  # an intermediate: nothing else holds it
        return ops[name](h, x) * 3

    want, got, compiled = _both(fn, _leaf(3, 4))
    for g, e in zip(got, want):
        assert g.dtype == e.dtype and np.array_equal(g, e)
    assert w.grad is not None
    assert _replays(compiled), compiled.report()


@pytest.mark.parametrize('case', ['exp then relu_', 'sigmoid_ then tanh_'])
def test_in_place_change_of_a_tensor_the_backward_needs_raises_as_eager(case):
    def fn(x):
        if case == 'sigmoid_ then tanh_':  # (sigmoid_ saves self, as PyTorch's: tanh_ changes it)
            return (x * 1).sigmoid_().tanh_()
        y = x.exp()  # saves its result
        y.relu_()
        return y

    x = lg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError) as eager_error:
        fn(x).sum().backward()
    compiled = lg.compile(fn)
    for _ in range(2):
        with pytest.raises(RuntimeError) as compiled_error:
            compiled(lg.randn(3, requires_grad=True)).sum().backward()
        assert str(compiled_error.value) == str(eager_error.value)
    assert 'the backward needs' in compiled.report()


@pytest.mark.parametrize('case', ['a view changed', 'a viewed tensor changed', 'an input changed'])
def test_in_place_change_that_another_tensor_shows_runs_eagerly(case):
    w = lg.randn(4, dtype=lg.float64, requires_grad=True)

    def fn(x):
        if case == 'an input changed':
            return x.relu_() * w
        h = x * w
        if case == 'a view changed':
            h[1:].relu_()
            return h * 2
        v = h[1:]
        h.relu_()
        return v * 2 + h[1:]

    def make():
        leaf = lg.randn(4, dtype=lg.float64, requires_grad=True)
        return leaf * 1.0 if case == 'an input changed' else leaf

    compiled = lg.compile(fn)
    for _ in range(2):
        lg.manual_seed(1)
        x_eager = make()
        want = fn(x_eager)
        want.sum().backward()
        lg.manual_seed(1)
        x_compiled = make()
        got = compiled(x_compiled)
        got.sum().backward()
        assert np.array_equal(got.detach().numpy(), want.detach().numpy())
    assert not _replays(compiled) and 'in place' in compiled.report()


def test_batch_norm_called_twice_in_the_region_counts_both_batches():
    bn = nn.BatchNorm1d(3)
    compiled = lg.compile(lambda a, b: bn(a) + bn(b))
    for _ in range(3):
        compiled(lg.randn(4, 3, requires_grad=True), lg.randn(4, 3)).sum().backward()
    assert int(bn.num_batches_tracked) == 6
    assert _replays(compiled)


