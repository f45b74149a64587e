"""The op families declared by ``_op.Op`` from conversion to storage (conversion, inplace,
sampling, random_variates, complex_numbers, storage): their names and kinds as torch's, their
nodes, and ``out=`` as PyTorch writes it (resized, dtype checked, an ``out`` that needs grad
refused), each against torch."""
import importlib
import warnings

import numpy as np
import pytest

from oracle import lg, raises_like, same_message, torch

FAMILIES = ['conversion', 'inplace', 'sampling', 'random_variates', 'complex_numbers', 'storage']


@pytest.mark.parametrize('family', FAMILIES)
def test_family_is_declared(family):
    module = importlib.import_module('leafgrad.ops.' + family)
    for table in ('FUNCTIONS', 'METHODS', 'NOT_METHODS', 'TOP_LEVEL'):
        assert not hasattr(module, table), (family, table)


def _declared(family):
    from leafgrad.ops import _op
    return [cls for cls in _op.declared if cls.forward.__module__ == 'leafgrad.ops.' + family]


@pytest.mark.parametrize('family', FAMILIES)
def test_names_and_kinds_as_torch(family):
    """Each declared op is a torch function where leafgrad makes a function (leafgrad.to, its own,
    aside), a Tensor method where torch's is, with the class's docstring naming its signature."""
    for cls in _declared(family):
        names = (cls.op,) + tuple(cls.aliases)
        for n in names:
            if cls.function and cls.public and n != 'to':
                assert hasattr(torch, n), n
            if cls.function and cls.public:
                assert getattr(lg, n) is getattr(importlib.import_module('leafgrad.ops.' + family), n), n
            if cls.method:
                assert hasattr(torch.Tensor, n), n
            assert hasattr(lg.Tensor, n) == hasattr(torch.Tensor, n), n
            if cls.inplace and cls.method:
                assert hasattr(torch.Tensor, n + '_') and hasattr(lg.Tensor, n + '_'), n
            if cls.inplace_function:
                assert hasattr(torch, n + '_') and hasattr(lg, n + '_'), n
        assert cls.__doc__ and '(' in cls.__doc__.splitlines()[0], cls


# ---- conversion ------------------------------------------------------------------------------

@pytest.mark.parametrize('method', ['float', 'double', 'half', 'long', 'int', 'short', 'char', 'byte', 'bool',
                                    'cfloat', 'cdouble', 'bfloat16'])
def test_casts_as_torch(method):
    data = np.array([[0.5, -1.25], [3.0, 2.0]], dtype=np.float32)
    lx, tx = lg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ly, ty = getattr(lx, method)(), getattr(tx, method)()
    assert str(ly.dtype).split('.')[-1] == str(ty.dtype).split('.')[-1]
    assert (type(ly.grad_fn).__name__ if ly.grad_fn else None) == (type(ty.grad_fn).__name__ if ty.grad_fn else None)
    assert ly.requires_grad == ty.requires_grad


def test_cpu_and_cuda_take_memory_format_as_torch():
    """Tensor.cpu(memory_format=) lays the result out (a copy, ToCopyBackward0), as PyTorch;
    it raised TypeError."""
    data = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    lx, tx = lg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ly, ty = lx.cpu(memory_format=lg.channels_last), tx.cpu(memory_format=torch.channels_last)
    assert ly.stride() == ty.stride() and ly is not lx
    assert type(ly.grad_fn).__name__ == type(ty.grad_fn).__name__ == 'ToCopyBackward0'
    assert lx.cpu(memory_format=lg.preserve_format) is lx
    assert tx.cpu(memory_format=torch.preserve_format) is tx
    assert 'memory_format' in str(__import__('inspect').signature(lg.Tensor.cuda))


# ---- inplace ---------------------------------------------------------------------------------

@pytest.mark.parametrize('call', ['fill_(2.0)', 'fill_(T.tensor(3.0))', 'zero_()', 'copy_(T.ones(3))',
                                  'unsqueeze_(0)', 'squeeze_()', 'squeeze_(0)', 't_()', 'transpose_(0, 1)',
                                  'swapaxes_(0, 1)', 'swapdims_(1, 0)'])
def test_inplace_nodes_as_torch(call):
    names = []
    for T in (lg, torch):
        x = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = x * 1
        eval('y.' + call, {'T': T, 'y': y})
        y.sum().backward()
        names.append((type(y.grad_fn).__name__, tuple(y.shape), x.grad.tolist()))
    assert names[0] == names[1]


@pytest.mark.parametrize('value', ['2.0', '7', 'T.tensor(3.0, requires_grad=True)'])
def test_fill_and_the_inplace_functions_as_torch(value):
    """torch.fill (out-of-place: FillBackward0, FillBackward1 for a tensor value), torch.fill_,
    torch.zero_ and torch.resize_as_ as PyTorch's (leafgrad had none of the four)."""
    got = []
    for T in (lg, torch):
        x = T.ones(2, 3, requires_grad=True)
        v = eval(value, {'T': T})
        y = T.fill(x, v)
        (y * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        vg = v.grad.tolist() if isinstance(v, T.Tensor) else None
        a = T.zeros(2)
        same = (T.fill_(a, 2.5) is a, a.tolist(), T.zero_(a) is a, a.tolist(),
                tuple(T.resize_as_(a, T.zeros(2, 2)).shape))
        got.append((type(y.grad_fn).__name__, y.tolist(), str(y.dtype).split('.')[-1], x.grad.tolist(), vg, same))
    assert got[0] == got[1]
    assert same_message(*raises_like(lambda: lg.fill(lg.ones(2), lg.ones(2)), lambda: torch.fill(torch.ones(2),
                                                                                               torch.ones(2))))
    raises_like(lambda: lg.fill(lg.ones(2), 'a'), lambda: torch.fill(torch.ones(2), 'a'))
    raises_like(lambda: lg.fill(lg.ones(2), 1.0, out=lg.empty(2)), lambda: torch.fill(torch.ones(2), 1.0,
                                                                                     out=torch.empty(2)))
    assert not hasattr(lg.Tensor, 'fill') and not hasattr(torch.Tensor, 'fill')


# ---- sampling --------------------------------------------------------------------------------

@pytest.mark.parametrize('out_shape,out_dtype', [((2, 3), 'float32'), ((2,), 'float32'), ((0,), 'float64'),
                                                 ((2, 3), 'int64'), ((3, 2), 'bool')])
def test_bernoulli_out_as_torch(out_shape, out_dtype):
    """torch.bernoulli(input, out=): out resized silently to input's shape, any dtype, the numbers
    of the same generator state; out returned (leafgrad refused out= before)."""
    p = np.array([[0.25, 0.5, 0.75], [0.1, 0.9, 0.5]], dtype=np.float32)
    got = []
    for T in (lg, torch):
        T.manual_seed(3)
        out = T.empty(out_shape, dtype=getattr(T, out_dtype))
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            r = T.bernoulli(T.tensor(p), out=out)
        assert r is out
        got.append((out.tolist(), str(out.dtype).split('.')[-1], T.rand(2).tolist()))
    assert got[0] == got[1]


def test_bernoulli_out_errors_as_torch():
    p = np.full((2, 3), 0.5, dtype=np.float32)
    for make in (lambda T: (T.tensor(p, requires_grad=True), T.empty(2, 3)),
                 lambda T: (T.tensor(p), T.empty(2, 3, requires_grad=True))):
        msgs = raises_like(lambda: lg.bernoulli(*make(lg)[:1], out=make(lg)[1]),
                           lambda: torch.bernoulli(*make(torch)[:1], out=make(torch)[1]))
        assert same_message(*msgs)
    raises_like(lambda: lg.bernoulli(lg.tensor(p), 0.5, out=lg.empty(2, 3)),
                lambda: torch.bernoulli(torch.tensor(p), 0.5, out=torch.empty(2, 3)))
    raises_like(lambda: lg.tensor(p).bernoulli(out=lg.empty(2, 3)),
                lambda: torch.tensor(p).bernoulli(out=torch.empty(2, 3)))
    # refused before drawing: the generator where it was
    lg.manual_seed(0)
    with pytest.raises(RuntimeError):
        lg.bernoulli(lg.tensor(p, requires_grad=True), out=lg.empty(2, 3))
    torch.manual_seed(0)
    assert lg.rand(3).tolist() == torch.rand(3).tolist()


@pytest.mark.parametrize('call', ['random_()', 'random_(5)', 'random_(2, 9)', 'bernoulli_(0.3)',
                                  'bernoulli_(T.full((3,), 0.5))', 'exponential_()', 'geometric_(0.4)',
                                  'log_normal_()', 'cauchy_()'])
def test_sampling_nodes_and_streams_as_torch(call):
    got = []
    for T in (lg, torch):
        T.manual_seed(5)
        x = T.zeros(2, 3, requires_grad=True)
        y = x * 1
        eval('y.' + call, {'T': T, 'y': y})
        y.sum().backward()
        got.append((type(y.grad_fn).__name__, y.tolist(), x.grad.tolist(), T.bernoulli(T.full((4,), 0.5)).tolist(),
                    T.full((2, 3), 1.0).multinomial(2).tolist()))
    np.testing.assert_allclose(np.array(got[0][1]), np.array(got[1][1]), rtol=1e-6)
    assert got[0][0] == got[1][0] and got[0][2:] == got[1][2:]


# ---- random_variates -------------------------------------------------------------------------

def test_random_variates_nodes_and_saved_as_torch():
    """_standard_gamma's node saves self and result as PyTorch's; _standard_gamma_grad's node is
    StandardGammaGradBackward0 (it was named _StandardGammaGradNode)."""
    got = []
    for T in (lg, torch):
        T.manual_seed(1)
        x, y = T.full((3,), 2.0, requires_grad=True), T.full((3,), 1.0)
        g = T._standard_gamma(x)
        saved = (g.grad_fn._saved_self.tolist(), g.grad_fn._saved_result.tolist())
        g.sum().backward()
        gg = T._standard_gamma_grad(x, y)
        with pytest.raises(NotImplementedError) as info:
            gg.sum().backward()
        got.append((type(g.grad_fn).__name__, saved, type(gg.grad_fn).__name__, gg.grad_fn.name().split('::')[-1],
                    str(info.value), type(T.poisson(x).grad_fn).__name__,
                    type(T._dirichlet_grad(x / 4, x, x * 2).grad_fn).__name__))
        got[-1] += (np.round(x.grad.numpy(), 3).tolist(),)
    assert got[0] == got[1]


@pytest.mark.parametrize('name,args', [('poisson', 'x'), ('_standard_gamma', 'x'), ('binomial', 'xp'),
                                       ('_sample_dirichlet', 'x'), ('_standard_gamma_grad', 'xx'),
                                       ('_dirichlet_grad', 'pxx')])
def test_random_variates_take_no_out_and_are_no_methods(name, args):
    def call(T, **kw):
        made = {'x': T.full((2, 3), 2.0), 'p': T.full((2, 3), 0.25)}
        return getattr(T, name)(*[made[a] for a in args], **kw)
    call(lg)
    raises_like(lambda: call(lg, out=lg.empty(2)), lambda: call(torch, out=torch.empty(2)))
    assert not hasattr(lg.Tensor, name) and not hasattr(torch.Tensor, name)


# ---- complex_numbers -------------------------------------------------------------------------

def _pair_args(T, dtype='float32', angle_shape=(2,)):
    return (T.tensor([1.0, 2.0], dtype=getattr(T, dtype)),
            T.tensor(np.linspace(0.5, 1.0, int(np.prod(angle_shape))).reshape(angle_shape), dtype=getattr(T, dtype)))


@pytest.mark.parametrize('name', ['polar', 'complex'])
@pytest.mark.parametrize('out_dtype,out_shape,angle_shape', [
    ('complex64', (2,), (2,)), ('complex64', (3,), (2,)), ('complex64', (0,), (2,)), ('complex64', (2, 2), (2, 1)),
    ('complex128', (2,), (2,)), ('float32', (2,), (2,))])
def test_polar_and_complex_out_as_torch(name, out_dtype, out_shape, angle_shape):
    """torch.polar(out=) and torch.complex(out=): out of the result's complex dtype only, resized
    (with PyTorch's warning when it held elements), written and returned (leafgrad refused out=)."""
    got = []
    for T in (lg, torch):
        out = T.zeros(out_shape, dtype=getattr(T, out_dtype))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            try:
                r = getattr(T, name)(*_pair_args(T, angle_shape=angle_shape), out=out)
            except RuntimeError as e:
                got.append(('error', str(e)))
                continue
        assert r is out
        got.append((np.round(out.numpy(), 6).tolist(), tuple(out.shape), [str(w.message)[:60] for w in caught]))
    assert got[0] == got[1]


@pytest.mark.parametrize('name', ['polar', 'complex'])
def test_polar_and_complex_out_refuses_autograd_as_torch(name):
    for grad_in, grad_out in ((True, False), (False, True)):
        def call(T):
            a, t = _pair_args(T)
            return getattr(T, name)(a.requires_grad_(grad_in), t,
                                    out=T.empty(2, dtype=T.complex64, requires_grad=grad_out))
        assert same_message(*raises_like(lambda: call(lg), lambda: call(torch)))
    assert same_message(*raises_like(
        lambda: getattr(lg, name)(*_pair_args(lg), out=lg.empty(1, dtype=lg.complex64).expand(2)),
        lambda: getattr(torch, name)(*_pair_args(torch), out=torch.empty(1, dtype=torch.complex64).expand(2))))
    raises_like(lambda: lg.view_as_real(lg.ones(2, dtype=lg.complex64), out=lg.empty(2, 2)),
                lambda: torch.view_as_real(torch.ones(2, dtype=torch.complex64), out=torch.empty(2, 2)))


def test_resolve_conj_is_clone_as_torch():
    """resolve_conj of a conjugate: a copy recorded by clone's CloneBackward0 (one class of that
    name: complex_numbers had a second one)."""
    from leafgrad.ops import _op
    assert [cls.node for cls in _op.declared].count('CloneBackward0') == 1
    got = []
    for T in (lg, torch):
        z = T.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
        r = z.conj().resolve_conj()
        (r * T.tensor([2 - 1j, 1j])).real.sum().backward()
        got.append((type(r.grad_fn).__name__, r.is_conj(), z.grad.tolist()))
    assert got[0] == got[1]


def test_complex_saved_names_as_torch():
    for T in (lg, torch):
        z = T.tensor([1 + 2j, -3 + 0.5j], requires_grad=True)
        a, t = T.tensor([1.0, 2.0], requires_grad=True), T.tensor([0.5, 1.0])
        assert T.angle(z).grad_fn._saved_self is not None
        p = T.polar(a, t)
        assert np.allclose(p.grad_fn._saved_result.detach().numpy(), p.detach().numpy())


# ---- storage ---------------------------------------------------------------------------------

def test_empty_strided_layout_as_torch():
    """empty_strided(layout=torch.strided) as PyTorch's (leafgrad raised NotImplementedError for
    any layout); what is no layout refused with PyTorch's TypeError."""
    for T in (lg, torch):
        t = T.empty_strided((2, 3), (1, 2), layout=T.strided)
        assert t.stride() == (1, 2) and tuple(t.shape) == (2, 3)
    raises_like(lambda: lg.empty_strided((2,), (1,), layout=3), lambda: torch.empty_strided((2,), (1,), layout=3))


def test_every_declared_op_has_its_docstring():
    """leafgrad.<op> and Tensor.<op> of every declaration carry its docstring (the class's, when
    the forward has none), PyTorch's signature first: the API reference reads them."""
    from leafgrad.ops import _op
    for cls in _op.declared:
        for name in (cls.op,) + tuple(cls.aliases):
            made = [getattr(lg, name, None) if cls.function and cls.public else None,
                    getattr(lg.Tensor, name, None) if cls.method else None]
            for fn in made:
                if fn is not None and not isinstance(fn, property):
                    assert fn.__doc__, (cls, name)


def test_conj_physical_inplace_as_torch():
    """Tensor.conj_physical_ and torch.conj_physical_ (missing before): ConjPhysicalBackward1,
    recorded for a real tensor too, the version bumped, PyTorch's gradient."""
    got = []
    for T in (lg, torch):
        z = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = z * 1
        assert y.conj_physical_() is y
        (y * T.tensor([1j, 2])).real.sum().backward()
        x = T.tensor([1.0, 2.0], requires_grad=True) * 1
        x.conj_physical_()
        w = T.conj_physical_(T.tensor([1 - 1j]))
        got.append((type(y.grad_fn).__name__, y.tolist(), z.grad.tolist(), type(x.grad_fn).__name__, x._version,
                    w.tolist()))
    assert got[0] == got[1]
