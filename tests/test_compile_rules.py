"""leafgrad.compile's array rules for nn.functional ops (cross_entropy, log_softmax, softmax,
conv2d, max_pool2d): each replayed on arrays, not through its eager op, with eager's values
and gradients bit for bit, also where the op's data-dependent branches (ignored targets, NaN
windows, a non-finite gradient) go another way from one call to the next."""
import re
import warnings

import numpy as np
import pytest

import leafgrad as lg
from leafgrad import nn

F = nn.functional


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a._data, b._data, equal_nan=True), np.nanmax(np.abs(a._data - b._data))
    # bit for bit: the signs of zeros too
    assert np.array_equal(np.signbit(a._data), np.signbit(b._data))


def _program(compiled):
    return [e.program for e in compiled._leafgrad_compiled.cache.values()]


def _check(fn, make, steps=4, grad_dtype=None):
    """fn(*tensors) eagerly and compiled, on the arrays make(step) gives (a (array,
    requires_grad) list): outputs and the inputs' gradients equal bit for bit, every call of the
    compiled signature replayed on arrays."""
    compiled = lg.compile(fn)
    for step in range(steps):
        arrays = make(step)
        results = []
        for f in (fn, compiled):
            ts = [lg.tensor(a, requires_grad=rg) for a, rg in arrays]
            out = f(*ts)
            if out.requires_grad:
                seed = np.random.default_rng(step).standard_normal(out.shape).astype(out._data.dtype)
                out.backward(lg.tensor(seed) if out.dim() else None)
            results.append((out, [t.grad for t, (_, rg) in zip(ts, arrays) if rg]))
        (e, eg), (c, cg) = results
        _same(e, c)
        for a, b in zip(eg, cg):
            _same(a, b)
    programs = _program(compiled)
    assert len(programs) == 1 and programs[0] is not None
    assert programs[0].islands == 0, programs[0].source
    return compiled


def _rng(step, salt=0):
    return np.random.default_rng(100 * salt + step)


def _logits(step, n=8, c=5, dtype=np.float32):
    return _rng(step).standard_normal((n, c)).astype(dtype) * 3


def _targets(step, n=8, c=5, ignore=None, every=3):
    t = _rng(step, 1).integers(0, c, n)
    if ignore is not None and step % 2:  # ignored rows in every other call only
        t[::every] = ignore
    return t


CE = {
    'mean': (lambda x, t: F.cross_entropy(x, t), {}),
    'sum': (lambda x, t: F.cross_entropy(x, t, reduction='sum'), {}),
    'none': (lambda x, t: F.cross_entropy(x, t, reduction='none'), {}),
    'ignore_index': (lambda x, t: F.cross_entropy(x, t, ignore_index=2), {'ignore': 2}),
    'ignore_index_none': (lambda x, t: F.cross_entropy(x, t, ignore_index=-100, reduction='none'), {'ignore': -100}),
    'all_ignored': (lambda x, t: F.cross_entropy(x, t, ignore_index=1), {'ignore': 1, 'every': 1}),
    'scaled_zero': (lambda x, t: F.cross_entropy(x, t) * 0.0, {}),
    'keywords': (lambda x, t: F.cross_entropy(input=x, target=t, reduction='mean'), {}),
}


@pytest.mark.parametrize('name', sorted(CE))
@pytest.mark.parametrize('dtype', [np.float32, np.float64], ids=['float32', 'float64'])
def test_cross_entropy(name, dtype):
    fn, kw = CE[name]
    _check(fn, lambda s: [(_logits(s, dtype=dtype), True), (_targets(s, **kw), False)])


def test_cross_entropy_class_weights():
    w = np.abs(_rng(0, 7).standard_normal(5)).astype(np.float32)
    for reduction in ('mean', 'sum', 'none'):
        _check(lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=3, reduction=reduction),
               lambda s: [(_logits(s), True), (_targets(s, ignore=3), False), (w, False)])


def test_cross_entropy_bad_target_raises_as_eager():
    compiled = lg.compile(lambda x, t: F.cross_entropy(x, t))
    x = lg.tensor(_logits(0), requires_grad=True)
    compiled(x, lg.tensor(_targets(0)))
    compiled(x, lg.tensor(_targets(1)))
    bad = _targets(2)
    bad[3] = 7
    with pytest.raises(IndexError, match='Target 7 is out of bounds.'):
        F.cross_entropy(x, lg.tensor(bad))
    with pytest.raises(IndexError, match='Target 7 is out of bounds.'):
        compiled(x, lg.tensor(bad))


@pytest.mark.parametrize('dim', [0, 1, -1])
@pytest.mark.parametrize('log', [True, False], ids=['log_softmax', 'softmax'])
def test_softmaxes(dim, log):
    name = 'log_softmax' if log else 'softmax'  # (looked up at the call: a function held in a closure is
    # not seen by the trace, see test_compile.py::test_op_held_in_a_closure_runs_eagerly)
    _check(lambda x: getattr(F, name)(x * 2.0, dim),
           lambda s: [(_rng(s).standard_normal((3, 4, 5)).astype(np.float32), True)])


CONV = {
    'rows': ((4, 3, 9, 9), (6, 3, 3, 3), {}),                 # stride 1, narrow: padded rows
    'windows': ((2, 2, 12, 20), (4, 2, 3, 3), {}),            # wide: the window view
    'stride_padding': ((2, 3, 10, 11), (4, 3, 3, 3), {'stride': 2, 'padding': 1}),
    'dilation': ((2, 2, 11, 11), (3, 2, 3, 3), {'dilation': 2, 'padding': (1, 2)}),
    'groups': ((2, 4, 8, 8), (6, 2, 3, 3), {'groups': 2}),
    'same': ((2, 3, 7, 7), (4, 3, 2, 3), {'padding': 'same'}),
    'no_bias': ((2, 3, 7, 7), (4, 3, 3, 3), {'bias': None}),
}


@pytest.mark.parametrize('name', sorted(CONV))
@pytest.mark.parametrize('input_grad', [True, False], ids=['input_grad', 'no_input_grad'])
def test_conv2d(name, input_grad):
    xs, ws, kw = CONV[name]
    kw = dict(kw)
    with_bias = kw.pop('bias', True) is not None

    def make(s):
        r = _rng(s)
        arrays = [(r.standard_normal(xs).astype(np.float32), input_grad),
                  (r.standard_normal(ws).astype(np.float32), True)]
        if with_bias:
            arrays.append((r.standard_normal(ws[0]).astype(np.float32), True))
        return arrays
    _check(lambda x, w, b=None: F.conv2d(x, w, b, **kw), make)


def test_conv2d_float64_and_a_nonfinite_input():
    def make(s):
        x = _rng(s).standard_normal((2, 2, 6, 6))
        if s % 2:
            x[0, 1, 2, 3] = np.inf  # the padded-rows weight gradient falls back to the windows
        return [(x, True), (_rng(s, 1).standard_normal((3, 2, 3, 3)), True)]
    _check(lambda x, w: F.conv2d(x, w), make)


@pytest.mark.parametrize('name', ['rows', 'windows', 'groups'])
def test_conv2d_weight_gradient_reads_the_forward_columns(name):
    """Where the input's and the weight's gradients are both needed, the weight's reads the
    im2col columns the forward made (kept, not made again) and runs before the input's; where
    only the weight's is needed they are made again. Bit for bit as eager either way."""
    xs, ws, kw = CONV[name]
    for input_grad in (True, False):
        compiled = _check(lambda x, w: F.conv2d(x, w, **kw),
                          lambda s: [(_rng(s).standard_normal(xs).astype(np.float32), input_grad),
                                     (_rng(s, 1).standard_normal(ws).astype(np.float32), True)])
        source = _program(compiled)[0].source
        backward = source[source.index('def backward'):]
        kept = re.search(r'conv_gw\w*\([^\n]*, v2s\[0\]\)', backward)
        assert bool(kept) == input_grad, source
        if input_grad:
            assert backward.index('conv_gw') < backward.index('conv_gi'), source
            # (the forward without grad drops them at once)
            assert 'del v0, v1, v2s\n' in source[source.index('def forward_nograd'):], source


POOL = {
    'windows': ((2, 3, 8, 8), {'kernel_size': 2}),
    'windows_3_rest': ((2, 3, 8, 7), {'kernel_size': 3}),
    'overlapping': ((2, 3, 9, 9), {'kernel_size': 3, 'stride': 2, 'padding': 1}),
    'ceil_mode': ((2, 2, 7, 7), {'kernel_size': 2, 'ceil_mode': True}),
    'dilation': ((1, 2, 9, 9), {'kernel_size': 2, 'stride': 1, 'dilation': 2}),
}


@pytest.mark.parametrize('name', sorted(POOL))
def test_max_pool2d(name):
    xs, kw = POOL[name]

    def make(s):
        x = _rng(s).standard_normal(xs).astype(np.float32)
        x[0, 0, 1, :] = x[0, 0, 0, :]  # ties: the first max wins
        return [(x, True)]
    _check(lambda x: F.max_pool2d(x, **kw), make)


def test_max_pool2d_nan_windows_and_nonfinite_gradients():
    def make(s):
        x = _rng(s).standard_normal((2, 2, 6, 6)).astype(np.float32)
        scale = np.ones((2, 2, 3, 3), np.float32)
        if s % 2:
            x[1, 0, 2, 3] = np.nan   # a NaN window: the general loop, its flat indices
        if s % 3 == 2:
            scale[0, 1, 1, 1] = np.inf  # a non-finite gradient: scattered by bincount
        return [(x, True), (scale, False)]
    _check(lambda x, scale: (F.max_pool2d(x, 2) * scale).sum(), make, steps=6)


def test_cnn_step_replays_every_op_on_arrays():
    """W3's loss: convolutions, ReLU, pooling, a linear layer and cross-entropy."""
    def loss(x, t, w1, b1, w2, b2, fw, fb):
        h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
        return F.cross_entropy(F.linear(h.reshape(h.shape[0], -1), fw, fb), t)

    def make(s):
        r = _rng(s)
        shapes = [(4, 3, 3, 3), (4,), (6, 4, 3, 3), (6,), (3, 24), (3,)]
        return [(r.standard_normal((8, 3, 14, 14)).astype(np.float32), False),
                (r.integers(0, 3, 8), False)] + [(r.standard_normal(sh).astype(np.float32), True) for sh in shapes]
    _check(loss, make)


def _pool_input(s, shape=(2, 3, 8, 8), nan=False):
    x = _rng(s).standard_normal(shape).astype(np.float32)
    x[0, 0, 1, :] = x[0, 0, 0, :]            # ties
    x[1, 1, :2, :] = -np.abs(x[1, 1, :2, :])  # windows wholly negative: zero after the ReLU
    if nan and s % 2:
        x[1, 2, 3, 3] = np.nan                # a NaN window: ReLU, then the general loop
    return x


@pytest.mark.parametrize('nan', [False, True], ids=['finite', 'nan_windows'])
@pytest.mark.parametrize('relu', ['F.relu', 'Tensor.relu', 'lg.relu'])
def test_relu_then_max_pool_fused(relu, nan):
    """ReLU then max pooling over non-overlapping windows: pooled first, then the ReLU on the
    pooled values; eager's values bit for bit, and its gradients as numbers (a zero may carry
    the other sign: the tolerance docs/compile.md states)."""
    act = {'F.relu': lambda t: F.relu(t), 'Tensor.relu': lambda t: t.relu(), 'lg.relu': lambda t: lg.relu(t)}[relu]

    def fn(x, w):
        return (F.max_pool2d(act(x * 2.0), 2) * w).sum()
    compiled = lg.compile(fn)
    for s in range(4):
        xs, ws = _pool_input(s, nan=nan), _rng(s, 3).standard_normal((2, 3, 4, 4)).astype(np.float32)
        grads = []
        for f in (fn, compiled):
            x = lg.tensor(xs, requires_grad=True)
            out = f(x, lg.tensor(ws))
            out.backward()
            grads.append((out, x.grad))
        (e, eg), (c, cg) = grads
        _same(e, c)
        assert np.array_equal(eg._data, cg._data, equal_nan=True)
    (program,) = _program(compiled)
    assert program.fused == 1 and program.islands == 0


def test_relu_read_elsewhere_or_returned_is_not_fused():
    def read_twice(x):
        r = F.relu(x)
        return F.max_pool2d(r, 2).sum() + r.mean()

    def returned(x):
        r = F.relu(x)
        return F.max_pool2d(r, 2), r
    compiled = _check(read_twice, lambda s: [(_pool_input(s), True)])
    assert _program(compiled)[0].fused == 0
    c = lg.compile(returned)
    for s in range(2):
        xs = _pool_input(s)
        for a, b in zip(returned(lg.tensor(xs)), c(lg.tensor(xs))):
            _same(a, b)
    assert _program(c)[0].fused == 0


@pytest.mark.parametrize('dtype', [np.float32, np.float64], ids=['float32', 'float64'])
def test_relu_derivative_as_threshold_backward(dtype):
    """ReLU's derivative as eager's (PyTorch's threshold_backward): the gradient passes at a
    NaN result (of either sign), is +0.0 where the result is <= 0 (not -0.0 for a negative
    gradient, also at an input of -0.0), and an infinite gradient there gives 0, not NaN. NumPy's
    warnings (inf * 0) do not leak from the generated code, as they do not from eager's ops."""
    def make(s):
        x = _rng(s).standard_normal((4, 6)).astype(dtype)
        x[0, :3] = np.nan
        x[0, 3] = -np.abs(np.array(np.nan, dtype))
        x[2, :2] = -0.0
        scale = _rng(s, 1).standard_normal((4, 6)).astype(dtype)
        scale[1, :] = np.inf
        return [(x, True), (scale, False)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        _check(lambda x, scale: (F.relu(x) * scale).sum() + (lg.relu(x * 2.0) * scale).sum(), make)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


@pytest.mark.parametrize('layout', ['contiguous', 'transposed'])
@pytest.mark.parametrize('dtype', [np.float32, np.float64], ids=['float32', 'float64'])
def test_dropout_draws_as_eager(layout, dtype):
    """F.dropout and nn.Dropout replayed on arrays: the same draws from the default generator,
    in eager's order (a transposed input is filled in its memory order), the same scaling."""
    drop = nn.Dropout(0.3)

    def fn(x):
        h = x.t() if layout == 'transposed' else x * 1.0
        return F.dropout(h * 2.0, 0.4) + drop(h) * 0.5
    compiled = lg.compile(fn)
    for s in range(3):
        xs = _rng(s).standard_normal((5, 7)).astype(dtype)
        results = []
        for f in (fn, compiled):
            lg.manual_seed(s)
            x = lg.tensor(xs, requires_grad=True)
            out = f(x)
            out.backward(lg.tensor(_rng(s, 1).standard_normal(out.shape).astype(dtype)))
            results.append((out, x.grad, lg.rand(2)))
        (e, eg, er), (c, cg, cr) = results
        _same(e, c)
        _same(eg, cg)
        _same(er, cr)  # the generator left where eager leaves it
    (program,) = _program(compiled)
    assert program.islands == 0
