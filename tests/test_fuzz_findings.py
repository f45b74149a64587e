"""What the differential fuzzer (tests/test_fuzz_differential.py) found, each as its smallest
program, run in leafgrad and torch: values, gradients, grad_fn names and version counters."""
import itertools
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')

import leafgrad as lg  # noqa: E402

NAN = float('nan')


def _both(program):
    """program(T) -> a dict of what to compare, for T = leafgrad and T = torch (or the error)."""
    def run(T):
        try:
            return program(T)
        except Exception as e:  # noqa: BLE001  (the error is compared)
            return {'error': (type(e).__name__, str(e).replace('leafgrad', 'torch'))}
    return run(lg), run(torch)


def _plain(x):
    if isinstance(x, (lg.Tensor, torch.Tensor)):
        return np.asarray(x.detach().numpy(), dtype=np.float64).tolist()
    return x


def assert_same(program):
    mine, theirs = _both(program)
    assert mine.keys() == theirs.keys()
    for key in mine:
        a, b = _plain(mine[key]), _plain(theirs[key])
        if isinstance(a, list):
            np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-6, atol=1e-7,
                                       equal_nan=True, err_msg=key)
            a, b = np.array(a, dtype=float), np.array(b, dtype=float)
            number = ~np.isnan(a)  # (the sign bit of a NaN is noise: NumPy's and PyTorch's differ)
            assert np.array_equal(np.signbit(a[number]), np.signbit(b[number])), key
        else:
            assert a == b, (key, a, b)


def _name(t):
    return None if t.grad_fn is None else t.grad_fn.name().replace('leafgrad', 'torch')


SHAPES = [(3,), (2, 3), (1, 3), (2, 2, 3), (1, 2, 3), (2, 1, 2, 3), (3, 2), (2, 3, 2), (1, 3, 2), (4, 3, 2)]


@pytest.mark.parametrize('sa,sb', [(a, b) for a, b in itertools.product(SHAPES, SHAPES)
                                   if a[-1] == (b[0] if len(b) == 1 else b[-2])])
def test_matmul_records_as_torch(sa, sb):
    """PyTorch folds a >= 3-D operand into one mm when the smaller one requires grad (or when
    no copy is needed), takes a batch of one that requires grad as a matrix, and squeezes a
    1-D @ 2-D product in place: the graph (grad_fn), the version and the gradients follow."""
    for rga, rgb, transposed in itertools.product((False, True), repeat=3):
        def program(T):
            rng = np.random.default_rng(0)
            a = T.tensor(rng.standard_normal(sa), requires_grad=rga)
            b = T.tensor(rng.standard_normal(sb), requires_grad=rgb)
            a_used = a.transpose(0, 1) if transposed and a.dim() >= 3 else a
            out = a_used @ b
            seen = {'out': out, 'name': _name(out), 'version': out._version}
            if out.requires_grad:
                out.sum().backward()
                seen.update(ga=a.grad if rga else None, gb=b.grad if rgb else None)
            return seen
        assert_same(program)


@pytest.mark.parametrize('op', ['maximum', 'minimum'])
def test_maximum_gradient_at_nan_and_ties_as_torch(op):
    """Half to each at a tie, nothing to the loser, all to both where a NaN makes neither lose."""
    def program(T):
        a = T.tensor([1.0, 2.0, NAN, 3.0, NAN], requires_grad=True)
        b = T.tensor([1.0, NAN, 0.5, 4.0, NAN], requires_grad=True)
        getattr(T, op)(a, b).sum().backward()
        return {'ga': a.grad, 'gb': b.grad}
    assert_same(program)


def test_atan2_gradient_at_the_origin_as_torch():
    def program(T):
        y = T.tensor([0.0, 1.0, 0.0], requires_grad=True)
        x = T.tensor([0.0, 0.0, -2.0], requires_grad=True)
        T.atan2(y, x).sum().backward()
        return {'gy': y.grad, 'gx': x.grad}
    assert_same(program)


def test_relu_of_a_chain_through_nan():
    def program(T):
        x = T.tensor([NAN, 1.0, -1.0], requires_grad=True)
        (T.relu(x * 2) * 3).sum().backward()
        return {'g': x.grad}
    assert_same(program)


@pytest.mark.parametrize('shape_a,shape_b', [((2, 3), (3, 4)), ((1, 3), (3, 1)), ((3, 1), (1, 3)), ((1, 1), (1, 2))])
@pytest.mark.parametrize('a_by_columns', [False, True])
@pytest.mark.parametrize('b_by_columns', [False, True])
@pytest.mark.parametrize('bias', [False, True])
def test_matrix_product_gradients_are_laid_out_as_torch(shape_a, shape_b, a_by_columns, b_by_columns, bias):
    """PyTorch computes a factor's gradient transposed when that factor is laid out by columns
    (strides (1, rows)): with create_graph the gradient's history says so (TBackward0)."""
    def program(T):
        rng = np.random.default_rng(1)
        a = T.tensor(rng.standard_normal(shape_a[::-1] if a_by_columns else shape_a), requires_grad=True)
        b = T.tensor(rng.standard_normal(shape_b[::-1] if b_by_columns else shape_b), requires_grad=True)
        a_used, b_used = (a.t() if a_by_columns else a), (b.t() if b_by_columns else b)
        out = T.addmm(T.zeros(shape_a[0], shape_b[1]), a_used, b_used) if bias else a_used @ b_used
        ga, gb = T.autograd.grad(out.sum(), [a_used, b_used], create_graph=True)
        return {'ga': ga, 'gb': gb, 'names': (_name(ga), _name(gb))}
    assert_same(program)


def test_step_functions_pass_zeros_not_nan():
    """sign, floor, ceil, round, trunc: zeros_like(grad) as PyTorch, not grad * 0 (NaN at inf)."""
    def program(T):
        x = T.tensor([1.5, -0.5], requires_grad=True)
        return {f: T.autograd.grad(getattr(T, f)(x), x, T.tensor([float('inf'), 1.0]))[0]
                for f in ('sign', 'floor', 'ceil', 'round', 'trunc')}
    assert_same(program)


def test_sign_of_nan_is_zero_as_torch():
    assert_same(lambda T: {'s': T.sign(T.tensor([NAN, -0.0, 2.0, -3.0]))})


def test_remainder_keeps_fmods_sign_of_zero():
    assert_same(lambda T: {'r': T.remainder(T.tensor([1., -1., -0., 5.5, 2.]), T.tensor([-1., 1., 1., -2., 0.]))})


@pytest.mark.parametrize('exponent', [3, -0.5, -1, -2])
def test_pow_by_special_exponents_as_torch(exponent):
    """PyTorch computes x**3 as x*x*x, x**-0.5 as 1/sqrt(x) (so (-0.0)**-0.5 is -inf), and so on."""
    def program(T):
        x = T.tensor([-0.0, 0.0, 1.7, 3.1, -2.3], requires_grad=True)
        y = x ** exponent
        (g,) = T.autograd.grad(y.sum(), x)
        return {'y': y, 'g': g}
    assert_same(program)


@pytest.mark.parametrize('dtype', ['float32', 'float16', 'float64'])
@pytest.mark.parametrize('op', ['cumsum', 'cumprod'])
def test_scans_accumulate_in_a_wider_type_as_torch(dtype, op):
    """PyTorch's CPU cumsum/cumprod accumulate float in double and half in float."""
    def program(T):
        rng = np.random.default_rng(0)
        x = T.tensor((1 + rng.standard_normal((60, 2)) * 0.05).astype(dtype))
        return {'y': getattr(x, op)(0)}
    mine, theirs = _both(program)
    assert np.array_equal(mine['y'].numpy(), theirs['y'].numpy())


@pytest.mark.parametrize('op', ['var', 'std'])
def test_variance_of_one_element_has_a_constant_gradient(op):
    """With no degrees of freedom left, PyTorch's derivative is where(x == mean, nan, inf), a
    constant: with create_graph it has no history."""
    def program(T):
        x = T.tensor([-1.7], dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad(getattr(x, op)(), x, create_graph=True)
        return {'g': g, 'requires_grad': g.requires_grad and op == 'var'}
    assert_same(program)


def test_index_into_an_empty_dim_as_torch():
    assert_same(lambda T: {'e': _both_error(lambda: T.ones(2, 0)[:, [1]])})


def _both_error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e))
    return None


def test_vector_matrix_product_is_no_view():
    """1-D @ 2-D: PyTorch squeezes the product in place, so the result is no view (detach_ may)."""
    def program(T):
        v = T.tensor([1.0, 2.0], requires_grad=True)
        m = T.tensor([[1.0, 0.5], [2.0, -1.0]], requires_grad=True)
        out = v @ m
        out.detach_()
        return {'out': out, 'version': out._version, 'requires_grad': out.requires_grad}
    assert_same(program)


def test_setitem_with_a_0d_tensor_fills():
    def program(T):
        x = T.ones(3, requires_grad=True) * 1
        x[...] = T.tensor(2.0, dtype=T.float64)
        y = T.ones(2, 3, requires_grad=True) * 1
        y[0] = T.tensor(3.0)
        return {'x': x, 'x_fn': _name(x), 'y': y, 'y_fn': _name(y)}
    assert_same(program)


def test_grad_fn_prints_without_namespace():
    def program(T):
        x = T.ones(2, requires_grad=True) * 1
        y = x.clone()
        y.copy_(x)
        return {'repr': repr(y).replace('leafgrad', 'torch'), 'fn': repr(y.grad_fn).split(' object')[0]}
    assert_same(program)


def test_matmul_squeezes_a_batch_of_one_under_no_grad_too():
    """The operand that requires grad decides the fold even when the squeezed view of it,
    made under no_grad, does not carry requires_grad."""
    def program(T):
        a = T.ones(1, 1, 3, requires_grad=True)
        b = T.ones(2, 1, 3)
        with T.no_grad():
            return {'error': _both_error(lambda: a @ b), 'ok': a @ T.ones(2, 3, 1)}
    assert_same(program)


def test_maximum_gives_the_loser_zero_even_of_a_nan_gradient():
    """PyTorch selects (where/masked_fill) rather than multiplies: the loser gets 0, not NaN."""
    def program(T):
        a = T.tensor([-1.4, -1.0, 0.6], requires_grad=True)
        b = T.tensor([-0.5, -0.2, 0.1])
        T.maximum(a, b).sqrt().sum().backward()
        return {'g': a.grad}
    assert_same(program)


def test_empty_reductions_and_indices_as_torch():
    def program(T):
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            variance = T.ones(1, 0, 3).var(-1)
        return {'amax': _both_error(lambda: T.ones(0).amax()), 'amin': _both_error(lambda: T.ones(0).amin()),
                'gather': T.ones(0, 1).gather(1, T.tensor([])), 'gather2': T.ones(2, 1).gather(1, T.tensor([])),
                'softmax': T.softmax(T.ones(0, 2, dtype=T.int64), 0).dtype == T.int64,
                'var': variance, 'warned': len(caught)}
    assert_same(program)


def test_dot_checks_dtypes_before_sizes():
    assert_same(lambda T: {'e': _both_error(lambda: T.dot(T.ones(1, dtype=T.float64), T.ones(4)))})


def test_copysign_gradient_records_as_torch():
    def program(T):
        x = T.tensor([0.5, 0.0, -2.0], requires_grad=True)
        y = T.tensor([-1.0, 1.0, 1.0], dtype=T.float64, requires_grad=True)
        gx, gy = T.autograd.grad(T.copysign(x, y).sum(), [x, y], create_graph=True)
        return {'gx': gx, 'gy': gy, 'names': (_name(gx), _name(gy)), 'gy_dtype': str(gy.dtype).split('.')[-1]}
    assert_same(program)


def test_amax_names_the_dim_as_given():
    assert_same(lambda T: {'e': _both_error(lambda: T.ones(0, 1, 1).amin(-3, keepdim=True))})


@pytest.mark.parametrize('op', ['elu', 'selu', 'celu'])
def test_elu_keeps_the_sign_of_zero(op):
    assert_same(lambda T: {'y': getattr(T.nn.functional, op)(T.tensor([-0.0, 0.0, -1.0, 2.0]))})


@pytest.mark.parametrize('values', [[NAN], [2.0], [0.0], [2.0, 3.0], [0.0, 3.0], [0.0, 0.0, 2.0],
                                    [[0.0, 2.0], [3.0, 0.0]]], ids=str)
def test_prod_gradient_records_as_torch(values):
    """prod's derivative node for node as PyTorch's prod_backward: grad * (result / x) without
    zeros, the exclusive products (and a view for the full product) with them."""
    def program(T):
        x = T.tensor(values, requires_grad=True)
        (g0,) = T.autograd.grad(x.prod(0, keepdim=True).sum(), [x], create_graph=True)
        (g1,) = T.autograd.grad(x.prod(), [x], create_graph=True)
        x.prod().backward()
        return {'g0': g0, 'g1': g1, 'names': (_name(g0), _name(g1)), 'grad': x.grad}
    assert_same(program)


@pytest.mark.parametrize('op', ['mm', 'mul', 'exp', 'unsqueeze'])
def test_ops_on_views_made_under_no_grad_record_a_node_backward_passes_by(op):
    """A view made under no_grad requires grad as its base does but has no accumulator: an op
    on it records a node with no edge, whose derivative backward does not run (its hooks do)
    and no leaf gets a gradient (found by the long run: MmBackward0 failed unpacking nothing)."""
    def program(T):
        x = T.tensor([[-0.5, 0.9, 0.0], [-0.6, 1.2, -0.7], [0.1, 2.0, 2.0]], dtype=T.float64, requires_grad=True)
        with T.no_grad():
            v = x.transpose(1, 1)
        y = {'mm': lambda: v @ v, 'mul': lambda: v * v, 'exp': lambda: v.exp(), 'unsqueeze': lambda: v.unsqueeze(0)}[op]()
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append(tuple(g is None for g in gi)))
        y.backward(T.ones_like(y))
        return {'name': type(y.grad_fn).__name__, 'requires_grad': y.requires_grad, 'x.grad': x.grad is None,
                'hook saw': seen}
    assert_same(program)


@pytest.mark.parametrize('overwrite', ['zero_', 'fill_', 'fill_tensor', 'setitem'])
def test_an_overwritten_tensor_gets_zeros_even_where_the_gradient_is_infinite(overwrite):
    """fill_/zero_'s derivative is zeros_like(grad), not grad * 0 (NaN where the gradient
    after it is infinite: x.zero_().div_(0.0); found by the long run, seed 1002727)."""
    def program(T):
        x = T.tensor([[1.4, 0.3], [0.0, -1.0]], requires_grad=True)
        y = x.gather(1, T.tensor([[0, 1], [1, 0]]))
        v = T.tensor(2.0, requires_grad=True)
        {'zero_': lambda: y.zero_(), 'fill_': lambda: y.fill_(3.0), 'fill_tensor': lambda: y.fill_(v),
         'setitem': lambda: y.__setitem__(0, 5.0)}[overwrite]()
        y.div_(0.0)
        y.backward(T.ones_like(y))
        return {'x.grad': x.grad, 'v.grad': v.grad if v.grad is not None else 'none', 'name': y.grad_fn.name()}
    assert_same(program)


def test_cat_of_empty_tensors_passes_their_gradients():
    """cat of 1-D empty tensors only (a boolean mask that selected nothing): backward gives each
    its empty gradient (CatBackward0 lacked its shapes; found by the long run, seed 1010248)."""
    def program(T):
        x = T.tensor([[-1.3, 0.1, 1.6], [-0.3, -0.3, -0.8]], requires_grad=True)
        e = x[T.nn.functional.logsigmoid(x) > 0]
        y = T.cat([e, e], 0)
        y.sum().backward()
        return {'x.grad': x.grad, 'shape': tuple(y.shape), 'name': y.grad_fn.name()}
    assert_same(program)


@pytest.mark.parametrize('case', ['saved input', 'saved twice', 'then changed', 'saved after', 'saved output',
                                  'leaf', 'leaf requires_grad_(False)', 'autograd.grad'])
def test_a_saved_tensor_detached_in_place_is_refused_at_backward(case):
    """A tensor with a history, saved for backward and then detach_()'d, is refused when the
    node unpacks it (PyTorch's SavedVariable); saved after the detach_, or saved as an op's
    output, it is not. A leaf that stopped requiring grad after it was used gets no .grad
    (PyTorch's AccumulateGrad skips it)."""
    def program(T):
        a = T.tensor([1.0, -2.0, 0.5], requires_grad=True)
        b = a * 2
        if case == 'saved after':
            b.detach_()
            y = (b * a).sum()
        elif case == 'saved output':
            y = b.exp()
            y = y.sum() if b.detach_() is None else (y * 1).sum()
        elif case.startswith('leaf'):
            y = (a * a).sum()
            a.detach_() if case == 'leaf' else a.requires_grad_(False)
        else:
            y = (b * b).sum() if case != 'saved twice' else (b.sin() * b).sum()
            b.detach_()
            if case == 'then changed':
                b.mul_(2)
        if case == 'autograd.grad':
            return {'error': _both_error(lambda: T.autograd.grad(y, [a])), 'version': b._version}
        return {'error': _both_error(y.backward), 'grad': a.grad if a.grad is not None else 'none',
                'version': b._version}
    assert_same(program)


def test_a_version_error_names_copy_backwards_whole():
    """PyTorch drops 'Backward<n>' from the producer's name in its version error: MulBackward0
    is 'Mul', SoftmaxBackwardDataBackward0 'SoftmaxBackwardData', CopyBackwards stays whole."""
    def program(T):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = a.clone().copy_(a)
        y = b.sin()
        with T.no_grad():
            b.add_(1)
        return {'error': _both_error(y.sum().backward)[1].split('\n')[0].replace('leafgrad', 'torch')}
    assert_same(program)


@pytest.mark.parametrize('made', ['no_grad', 'grad', 'before the base required grad'])
@pytest.mark.parametrize('how', ['detach_', 'requires_grad_(False)'])
def test_a_view_without_history_follows_its_base_that_stops_requiring_grad(how, made):
    """PyTorch's view without a grad_fn asks its base whether it requires grad: once the base
    is detach_()'d (or a leaf base set requires_grad_(False)) it does not, nor does what is made
    from it; a view with a history keeps requiring grad."""
    def program(T):
        a = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=made != 'before the base required grad')
        b = a * 1 if how == 'detach_' else a
        if made == 'no_grad':
            with T.no_grad():
                v = b[0]
        else:
            v = b[0]
        if made.startswith('before'):
            a.requires_grad_(True)
        before = _name(v.reshape(2))
        w = v.unsqueeze(0)
        b.detach_() if how == 'detach_' else b.requires_grad_(False)
        r = v.reshape(2)
        return {'v': (v.requires_grad, v.is_leaf), 'w': w.requires_grad, 'r': (r.requires_grad, _name(r)),
                'before': before}
    assert_same(program)


_ACTIVATIONS = {'relu6': lambda F, x: F.relu6(x), 'hardtanh': lambda F, x: F.hardtanh(x),
                'elu': lambda F, x: F.elu(x), 'selu': lambda F, x: F.selu(x), 'celu': lambda F, x: F.celu(x, 0.5),
                'gelu': lambda F, x: F.gelu(x), 'gelu_tanh': lambda F, x: F.gelu(x, approximate='tanh'),
                'threshold': lambda F, x: F.threshold(x, 0.5, 2.0), 'hardshrink': lambda F, x: F.hardshrink(x),
                'softshrink': lambda F, x: F.softshrink(x), 'hardswish': lambda F, x: F.hardswish(x),
                'hardsigmoid': lambda F, x: F.hardsigmoid(x), 'leaky_relu': lambda F, x: F.leaky_relu(x),
                'relu': lambda F, x: F.relu(x)}


@pytest.mark.parametrize('upstream', [1.0, -1.0, NAN, float('inf')], ids=str)
@pytest.mark.parametrize('op', sorted(_ACTIVATIONS))
def test_activations_at_nan_and_infinity_as_torch(op, upstream):
    """Values and gradients at NaN, +-inf, +-0 and the kinks, under a NaN or infinite incoming
    gradient too: PyTorch's kernels select (x <= 0 ? ... : ...), so a NaN input takes the side
    its comparison falls to and a gradient that is cut is 0 (not NaN * 0, not -0.0); gelu(+inf)
    of a float32 tensor is NaN (PyTorch's vectorized kernel). (float32 only: PyTorch's vectorized
    float64 comparisons, on whole chunks of 8, cut the gradient at a NaN where its scalar path
    and float32's pass it, depending on the CPU.)"""
    values = [NAN, float('inf'), -float('inf'), 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 6.0, 7.0]
    if not op.startswith('gelu'):  # (gelu's float32 gradient at -3 agrees to 1e-4 only)
        values += [-3.0, 3.0]
    if op == 'relu':  # (relu(-0.0) is 0.0: PyTorch's -0.0 would cost relu's forward a select)
        values = [v for v in values if not (v == 0 and np.signbit(v))]
    if op == 'gelu' and torch.backends.cpu.get_cpu_capability() != 'AVX512':
        # (PyTorch's AVX2 float32 kernel gives gelu(-0.0) = +0.0, its AVX-512 kernel and the
        # formula -0.0, which leafgrad gives: the sign of that zero depends on torch's CPU)
        values = [v for v in values if not (v == 0 and np.signbit(v))]

    def program(T):
        x = T.tensor(values, requires_grad=True)
        y = _ACTIVATIONS[op](T.nn.functional, x)
        y.backward(T.full_like(y, upstream))
        return {'y': y, 'grad': x.grad}
    assert_same(program)


@pytest.mark.parametrize('shape', [(), (1,), (3,), (2, 4)])
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'bfloat16', 'float16'])
def test_gelu_of_infinity_as_torch(dtype, shape):
    """PyTorch's gelu(+inf): NaN from its vectorized float32/bfloat16 kernel (a contiguous tensor
    of two or more elements), inf from its scalar path and in float64/float16."""
    def program(T):
        x = T.full(shape, float('inf'), dtype=getattr(T, dtype))
        strided = T.full((4, 2), float('inf'), dtype=getattr(T, dtype))[:, 0]
        return {'y': T.nn.functional.gelu(x).float(), 'strided': T.nn.functional.gelu(strided).float()}
    assert_same(program)


@pytest.mark.parametrize('op', ['mul_', 'add_', 'copy_', 'div_'])
@pytest.mark.parametrize('made', ['no_grad', 'grad'])
def test_an_expanded_view_changed_in_place_by_a_tensor_that_requires_grad(op, made):
    """With grad mode on and an operand that requires grad, PyTorch checks the view (made under
    no_grad: its error) before the kernel checks the memory (expanded: the overlap error)."""
    def program(T):
        a = T.ones(3, 1)
        with (T.no_grad() if made == 'no_grad' else T.enable_grad()):
            e = a.expand(3, 2)
        w = T.ones(3, 2, requires_grad=True)
        return {'error': _both_error(lambda: getattr(e, op)(w)), 'version': e._version}
    assert_same(program)


def test_requires_grad_false_on_a_view_without_history_keeps_asking_its_base():
    """A view made under no_grad of a tensor that requires grad: requires_grad_(False) leaves it
    requiring grad (PyTorch's view asks its base), so a hook may still be registered."""
    def program(T):
        a = T.ones(3, 2, requires_grad=True)
        with T.no_grad():
            v = a.narrow(0, 2, 1)
        v.requires_grad_(False)
        handle = v.register_hook(lambda g: None)
        return {'requires_grad': v.requires_grad, 'is_leaf': v.is_leaf, 'hook': handle is not None}
    assert_same(program)


@pytest.mark.parametrize('made', ['no_grad', 'grad'])
def test_reshape_of_non_contiguous_data_without_a_copy_is_reshape_alias(made):
    """reshape records ViewBackward0 on contiguous data, ReshapeAliasBackward0 on non-contiguous
    data it can still view, UnsafeViewBackward0 when it copies (a view made under no_grad too)."""
    def program(T):
        b = T.ones(3, 3, requires_grad=True) * 1
        with (T.no_grad() if made == 'no_grad' else T.enable_grad()):
            views = [b[:, 0:1], b[0:1, :], b.split(1, -1)[0].squeeze(-2), b[::2], b.t()[:, 0:1]]
        return {'names': tuple(tuple(_name(v.reshape(s)) for s in ((-1,), (1, -1))) for v in views)}
    assert_same(program)


@pytest.mark.parametrize('case', ['no_grad view', 'view regenerated later'])
def test_retain_grad_and_grad_read_the_history_as_it_stands(case):
    """retain_grad() and .grad see the history a view has, without regenerating it (PyTorch's
    C++ is_leaf): on a view made under no_grad whose base changed in place they raise nothing
    (found by the long run, seed 3000630), and on a view that will get its history only when
    regenerated retain_grad is a leaf's no-op and .grad does not warn."""
    def program(T):
        import warnings
        if case == 'no_grad view':
            v0 = T.tensor([[0.5], [1.5], [0.5]], requires_grad=True)
            with T.no_grad():
                v = v0.squeeze(0)
            v0.detach()[...].sqrt_()
        else:
            b = T.ones(3)
            v = b[0:2]
            b.mul_(T.full((3,), 2.0, requires_grad=True))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            v.retain_grad()
            grad = v.grad
        out = {'retains_grad': v.retains_grad, 'grad': grad is None, 'warned': len(caught)}
        if case != 'no_grad view':
            (v * 2).sum().backward()
            out.update(name=_name(v), after=v.grad is None)
        return out
    assert_same(program)


_EMPTY_PRODUCTS = [((2, 0, 3), (2, 3, 2)), ((2, 2, 0), (2, 0, 2)), ((1, 0, 3), (2, 3, 2)), ((0, 3), (2, 3, 2)),
                   ((2, 3), (2, 3, 0)), ((2, 2, 3), (2, 3, 2)), ((2, 0, 3), (3, 2)), ((0,), (2, 0, 2))]


@pytest.mark.parametrize('op,sa,sb', [(op, sa, sb) for op in ('matmul', 'bmm', 'baddbmm') for sa, sb in _EMPTY_PRODUCTS
                                       if op == 'matmul' or (len(sa) == len(sb) == 3 and sa[0] == sb[0])], ids=str)
@pytest.mark.parametrize('dtypes', [('int64', 'float32'), ('float32', 'int64'), ('float32', 'float64'),
                                    ('bool', 'bool'), ('bool', 'float32')], ids=str)
@pytest.mark.parametrize('grad', [False, True])
def test_a_batched_product_of_nothing_reads_no_dtype(op, sa, sb, dtypes, grad):
    """PyTorch's bmm kernel returns before it reads its operands when the result is empty or the
    contraction is (zeros): no dtype check, the result in the second operand's dtype, and
    autograd's refusal of an integral result that would require grad (the long run, seed
    3003948: an empty int64 median index @ a float32 tensor)."""
    def program(T):
        a = T.zeros(sa, dtype=getattr(T, dtypes[0]))
        b = T.ones(sb, dtype=getattr(T, dtypes[1]))
        if grad:
            a, b = (x.requires_grad_() if x.is_floating_point() else x for x in (a, b))
        if op == 'baddbmm':
            out = T.baddbmm(T.ones(sa[0], sa[1], sb[2], dtype=a.dtype), a, b)
        else:
            out = getattr(T, op)(a, b)
        seen = {'out': out, 'dtype': str(out.dtype).split('.')[-1], 'shape': tuple(out.shape), 'name': _name(out)}
        if out.requires_grad:
            out.sum().backward()
            seen.update(ga=a.grad, gb=b.grad)
        return seen
    assert_same(program)


@pytest.mark.parametrize('case', ['baddbmm f f i empty', 'baddbmm f f i k0', 'baddbmm b b b k0', 'baddbmm b b b k0 beta0',
                                  'baddbmm b b b', 'baddbmm b b f', 'baddbmm i i f k0 beta2.5', 'baddbmm f d f',
                                  'mm b b empty', 'mm b b k0', 'mm b b', 'mv b b empty', 'mv b b k0', 'bmm f b', 'bmm i b',
                                  'mv f f 2-D vec'])
def test_the_products_of_nothing_as_torch(case):
    """baddbmm's result takes batch2's dtype and starts as input, scaled in place by beta when the
    contraction is empty; Bool is refused by the kernel's dispatch, which an empty product never
    reaches, and before batch2's dtype is compared."""
    def program(T):
        op, *dtypes = case.split()[:4]
        shapes = {'bmm': ((2, 2, 3), (2, 3, 2)), 'mm': ((2, 3), (3, 2)), 'mv': ((2, 3), (3,)),
                  'baddbmm': ((2, 2, 2), (2, 2, 3), (2, 3, 2))}[op]
        if 'empty' in case:  # no rows (in input, the first factor)
            shapes = tuple(s[:-2] + (0,) + s[-1:] for s in shapes[:-1]) + shapes[-1:]
        if 'k0' in case:  # an empty contraction
            last = shapes[-1]
            shapes = shapes[:-2] + (shapes[-2][:-1] + (0,), last[:-2] + (0,) + last[-1:] if len(last) > 1 else (0,))
        names = {'f': 'float32', 'd': 'float64', 'i': 'int64', 'b': 'bool'}
        args = [T.ones(s, dtype=getattr(T, names[d])) for s, d in zip(shapes, dtypes)]
        kwargs = {'beta': float(case.split('beta')[1])} if 'beta' in case else {}
        if '2-D' in case:
            args[1] = args[1][:, None]
        out = getattr(T, op)(*args, **kwargs)
        return {'out': out, 'dtype': str(out.dtype).split('.')[-1], 'shape': tuple(out.shape)}
    assert_same(program)


def _no_grad_view_of(T, kind):
    """A view without a history of a tensor that requires grad (or of one that will)."""
    x = T.ones(3, 1, requires_grad=True)
    if kind == 'base later':
        b = T.ones(3, 1)
        v = b.view(-1)
        b.requires_grad_(True)
        return b, v, x
    base = x * 2 if kind == 'non-leaf' else x
    with T.no_grad():
        v = base.transpose(0, -1).permute(0, 1)
    return base, v, x


@pytest.mark.parametrize('kind', ['non-leaf', 'leaf', 'base later'])
@pytest.mark.parametrize('then', ['backward', 'base stops', 'view stops', 'view of it', 'not asked'])
def test_a_view_asked_to_require_grad_gets_its_own_gradient(kind, then):
    """A view without a history requires grad as its base does, and besides by its own flag:
    requires_grad_(True) on it gives it an accumulator of its own (PyTorch's grad_accumulator
    asks the tensor's own flag), where following its base alone gives none; the flag outlives
    the base's (the long run, seed 2003242: a no_grad view's .grad stayed None)."""
    def program(T):
        base, v, x = _no_grad_view_of(T, kind)
        if then != 'not asked':
            v.requires_grad_(True)
        if then == 'base stops' and base.grad_fn is None:
            base.requires_grad_(False)
        if then == 'view stops':
            v.requires_grad_(False)
        used = v[1:] if then == 'view of it' else v
        seen = {'requires_grad': v.requires_grad, 'leaf': v.is_leaf, 'used': used.requires_grad}
        if used.requires_grad:
            (used * 3).sum().backward()
        seen.update(grad=v.grad, base_grad=base.grad if base.grad_fn is None else 'non-leaf', x_grad=x.grad)
        return seen
    assert_same(program)


_CUMPROD_INPUTS = [[[0.2, -0.5, -0.0], [float('inf'), 0.6, 0.5], [-1.2, -0.5, 0.2]],
                   [[0.0, 2.0, 0.0, 3.0], [1.5, 0.0, float('inf'), 2.0], [NAN, 0.0, 2.0, 0.0]],
                   [[2.0, float('-inf'), 0.0, 4.0, 0.0, 5.0]], [[0.0], [3.0]], [[1.0, 2.0, 3.0]], [[0.0, 0.0, 0.0]]]


@pytest.mark.parametrize('create_graph', [False, True])
@pytest.mark.parametrize('dim', [0, 1, -1])
@pytest.mark.parametrize('values', _CUMPROD_INPUTS, ids=str)
def test_cumprod_gradient_with_zeros_and_infinities_as_torch(values, dim, create_graph):
    """cumprod's gradient where the input has zeros is PyTorch's: around each slice's first zero
    (a plain backward) or by the products with x_k left out (create_graph), whose values differ
    from each other's and from the product formula where the input has infinities (the long
    run, seed 2002005: NaN and inf where leafgrad gave -0.04 and NaN); the second derivative too."""
    def program(T):
        x = T.tensor(values, dtype=T.float64, requires_grad=True)
        g = T.tensor(np.linspace(0.5, 2.0, x.numel()).reshape(x.shape))
        gx, = T.autograd.grad(x.cumprod(dim), x, g, create_graph=create_graph)
        seen = {'grad': gx, 'name': _name(gx)}
        if create_graph:
            seen['second'] = T.autograd.grad((gx * gx.detach().isfinite()).sum(), x, allow_unused=True)[0]
        return seen
    assert_same(program)


def test_cumprod_gradgradcheck():
    x = lg.tensor([[0.5, 0.0, 2.0, 0.0], [1.5, -2.0, 0.0, 3.0], [0.3, 0.7, -1.1, 2.0]], dtype=lg.float64,
                  requires_grad=True)
    for dim in (0, 1):
        assert lg.autograd.gradcheck(lambda t: t.cumprod(dim), (x,))
        assert lg.autograd.gradgradcheck(lambda t: t.cumprod(dim), (x,))


@pytest.mark.parametrize('op', ['erf', 'sin', 'exp', 'mul_self', 'mul_tensor', 'unsqueeze', 'mm'])
@pytest.mark.parametrize('change', ['base through a view', 'base', 'the view under no_grad', 'nothing'])
def test_a_derivative_that_computes_nothing_still_unpacks_what_it_saved(op, change):
    """An op on a view made under no_grad records a node with no edge, whose derivative computes
    nothing; PyTorch's still unpacks what the op saved first, so a saved tensor changed in place
    raises at backward (the long run, seed 2004308: the no_grad-view error, which PyTorch's unpack
    raises asking the view's grad_fn, where leafgrad's backward passed)."""
    def program(T):
        x = T.tensor([[1.4, 0.3]], requires_grad=True)
        base = T.nn.functional.silu(x)
        with T.no_grad():
            v = base.narrow(-1, 0, 2)
        y = {'erf': lambda: v.erf(), 'sin': lambda: v.sin(), 'exp': lambda: v.exp(), 'mul_self': lambda: v * v,
             'mul_tensor': lambda: v * T.ones(2), 'unsqueeze': lambda: v.unsqueeze(0),
             'mm': lambda: v.t() @ T.ones(1, 2)}[op]()
        if change == 'base through a view':
            base[...].relu_()
        elif change == 'base':
            base.mul_(2)
        elif change == 'the view under no_grad':
            with T.no_grad():
                v.mul_(2)
        seen = {'name': _name(y), 'requires_grad': y.requires_grad}
        T.autograd.backward([y.sum()])
        seen.update(x=x.grad, v=v.grad)
        return seen
    assert_same(program)



@pytest.mark.parametrize('op', ['relu', 'relu_', 'F.relu'])
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'bfloat16'])
@pytest.mark.parametrize('n', [1, 7, 33])
def test_relu_keeps_the_sign_of_zero_as_torch(op, dtype, n):
    """relu(-0.0) is -0.0 in PyTorch, for every length (NumPy's maximum(x, 0) returns the 0):
    seen through rsqrt or a division as -inf against inf (the long run, seeds 4000315, 4003590)."""
    a = np.where(np.random.default_rng(n).random(n) < 0.5, -0.0, 0.0)
    a[0] = NAN

    def program(T):
        x = T.tensor(a, dtype=getattr(T, dtype))
        out = {'relu': lambda: T.relu(x), 'relu_': lambda: x.clone().relu_(), 'F.relu': lambda: T.nn.functional.relu(x)}[op]()
        values = out.float().numpy()
        return {'out': out.float(), 'signs': tuple(np.signbit(values[1:]).tolist()),  # (not of the NaN: noise)
                'rsqrt': out.float().rsqrt()}
    assert_same(program)


@pytest.mark.parametrize('op', ['fmod', 'remainder', 'floor_divide', 'div_floor', 'div_trunc'])
@pytest.mark.parametrize('shapes', [((0,), (3, 1)), ((3, 1), (0,)), ((3, 0), ()), ((0,), None), ((3,), (2,)),
                                    ((3,), (3,))], ids=str)
def test_an_integer_division_by_zero_of_nothing_as_torch(op, shapes):
    """An integer division by zero is refused only where PyTorch's kernel divides something: an
    empty result (an empty tensor broadcast against zeros) is returned, shapes that do not
    broadcast get the broadcast error (the long run, seed 4005070: fmod of an empty int64 view
    by a sign() with zeros raised ZeroDivisionError)."""
    def program(T):
        a = T.arange(1, 1 + int(np.prod(shapes[0])), dtype=T.int64).reshape(shapes[0])
        b = 0 if shapes[1] is None else T.zeros(shapes[1], dtype=T.int64)
        fn = {'div_floor': lambda: T.div(a, b, rounding_mode='floor'),
              'div_trunc': lambda: T.div(a, b, rounding_mode='trunc')}.get(op, lambda: getattr(T, op)(a, b))
        out = fn()
        return {'out': out, 'shape': tuple(out.shape), 'dtype': str(out.dtype).split('.')[-1]}
    assert_same(program)


@pytest.mark.parametrize('op', ['add_ number', 'mul_ number', 'mul_ tensor', 'zero_'])
@pytest.mark.parametrize('retain', [False, True])
def test_a_second_backward_through_copy_slices_is_refused_as_torch(op, retain):
    """PyTorch's CopySlices drops its in-place op's node when the graph is freed, so a second
    backward through it fails even where that op saved nothing (an add_ of a number); with
    retain_graph both run (the long run, seed 4013601)."""
    def program(T):
        x = T.ones(2, 3, dtype=T.float64, requires_grad=True)
        y = x + x
        {'add_ number': lambda: y[::1].add_(0.5), 'mul_ number': lambda: y[0].mul_(2.0),
         'mul_ tensor': lambda: y[0].mul_(T.ones(3)), 'zero_': lambda: y[0].zero_()}[op]()
        z = y.clone()
        y.backward(T.ones_like(y), retain_graph=retain)
        z.sum().backward()
        return {'grad': x.grad, 'name': _name(y)}
    assert_same(program)


@pytest.mark.parametrize('case', ['history, in-place, detach_', 'no history, in-place, detach_',
                                  'history, detach_, in-place, detach_', 'detach_ first, in-place, detach_',
                                  'history, detach_', 'history, in-place'])
def test_a_saved_tensor_detached_in_place_is_refused_by_its_history_when_saved(case):
    """PyTorch refuses a saved tensor that had a history when it was saved and has none now
    (lost to detach_()), before it compares versions, however many in-place ops and detach_()
    came after; one saved without a history gets the version error (the long run, seed
    4003576: hypot saved a gather result, then pow_ and detach_ on it; leafgrad raised the
    version error)."""
    def program(T):
        x = T.tensor([[-1.3, 0.5, -1.1], [1.4, -1.0, -0.4]], requires_grad=True)
        w = T.ones(2, 3, requires_grad=True)
        t = T.zeros(2, 3) if case.startswith('no history') else x.gather(0, T.tensor([[1, 0, 0], [1, 0, 1]]))
        if case.startswith('detach_ first'):
            t.detach_()
        y = T.hypot(t, w)
        steps = case.split(', ')[1:]
        for step in steps:
            if step == 'in-place':
                t.mul_(w)
            else:
                t.detach_()
        try:
            T.autograd.backward([y.sum()])
        except RuntimeError as e:  # (which error: its message up to the details)
            return {'error': str(e).split(':')[0].split('.')[0]}
        return {'x': x.grad, 'w': w.grad}
    assert_same(program)


@pytest.mark.parametrize('shape', [(2, 3, 3), (3, 3), (4, 2, 3, 3)])
def test_a_product_times_a_wider_tensor_backpropagates_as_pytorch(shape):
    """((a @ a) * float64).sum().backward() with float32 a: the gradient reaching the batched
    product is float64, which PyTorch's engine casts to the product's dtype (leafgrad's bmm
    refused it: 'expected scalar type Double but found Float')."""
    grads = []
    for T in (lg, torch):
        a = T.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10, requires_grad=True)
        ((a @ a) * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
        grads.append(a.grad)
    assert grads[0].dtype.__repr__().split('.')[-1] == str(grads[1].dtype).split('.')[-1]
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy(), rtol=1e-6)


_NO_GRAD_VIEW_OPS = {'tanh': lambda T, v: v.tanh(), 'gelu': lambda T, v: T.nn.functional.gelu(v),
                     'exp': lambda T, v: v.exp(), 'div number': lambda T, v: v / 3, 'pow': lambda T, v: v ** 2,
                     'softmax': lambda T, v: T.softmax(v, 0), 'index': lambda T, v: v[T.tensor([0, 1])],
                     'maximum': lambda T, v: T.maximum(v, v), 'mul self': lambda T, v: v * v,
                     'mul number': lambda T, v: v * 2, 'mul tensor': lambda T, v: v * T.ones(3),
                     'neg': lambda T, v: -v, 'sum': lambda T, v: v.sum(), 'matmul': lambda T, v: v @ v}


@pytest.mark.parametrize('op', sorted(_NO_GRAD_VIEW_OPS))
@pytest.mark.parametrize('retain', [False, True])
def test_a_second_backward_through_an_op_on_a_no_grad_view_as_torch(op, retain):
    """An op on a view made under no_grad records a node with no edge; the first backward frees
    what it saved, so a second is refused (PyTorch's derivative unpacks first) where the op
    saved something (tanh, gelu, a division by a number ...) and runs where it saved nothing
    (mul guards both of its saves, neg and sum save nothing): the long run, seeds 4020544
    (tanh of a diagonal taken under no_grad) and 4020723 (gelu of a narrow)."""
    def program(T):
        x = T.tensor([1.8, -1.2, 0.6], requires_grad=True)
        base = T.stack([x, x])
        with T.no_grad():
            v = base.diagonal()
        y = _NO_GRAD_VIEW_OPS[op](T, v)
        seen = {'name': _name(y)}
        y.sum().backward(retain_graph=retain)
        try:
            y.sum().backward()
            seen['second'] = 'ran'
        except RuntimeError as e:
            seen['second'] = str(e)
        seen.update(x=x.grad, v=v.grad)
        return seen
    assert_same(program)


@pytest.mark.parametrize('made', ['no_grad', 'grad'])
@pytest.mark.parametrize('before', [1, 2])
@pytest.mark.parametrize('then', ['nothing', 'backward of the base', 'backward through the view', 'grad_fn',
                                  'retain_grad'])
def test_register_hook_reads_grad_fn_at_the_first_registration_only(made, before, then):
    """PyTorch's register_hook reads the tensor's grad_fn only when it makes its hook table (the
    first registration): a view whose base then changed in place takes more hooks without
    regenerating its history, so a view made under no_grad does not raise the no_grad-view error
    there (the long run, seed 4015888), and hooks added to a view made with grad stay on its old
    node (none runs in a backward through its regenerated history). (A first registration after
    the change: PyTorch raises for a no_grad view and crashes for the other.)"""
    def program(T):
        seen = {'log': []}

        def hook(k):
            def h(g):
                seen['log'].extend([k] + g.flatten().tolist())
                return g * 2
            return h
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = x * 3
        if made == 'no_grad':
            with T.no_grad():
                v = b[1:]
        else:
            v = b[1:]
        for k in range(before):
            v.register_hook(hook(k))
        b.add_(x)
        v.register_hook(hook(9))
        if then == 'backward of the base':
            b.sum().backward()
        elif then == 'backward through the view':
            (v * 1).sum().backward()
        elif then == 'grad_fn':
            seen['name'] = _name(v)
        elif then == 'retain_grad':
            v.retain_grad()
            b.sum().backward()
            seen['v'] = v.grad
        seen['x'] = x.grad
        return seen
    assert_same(program)


@pytest.mark.parametrize('shape,dim', [((1,), 0), ((3,), 0), ((20,), 0), ((2, 1, 3), 1), ((2, 3), 0), ((2, 3), 1),
                                       ((3, 2), -2)], ids=str)
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'bfloat16'])
def test_cumsum_starts_from_positive_zero_as_torch(shape, dim, dtype):
    """PyTorch's cumsum adds each element to an accumulator that starts at +0.0, so a leading
    run of -0.0 gives +0.0 (NumPy's keeps the first element's -0.0): seen through min over a
    dim, then a division, as -inf against inf (the long run, seed 4016827); and a 0-d tensor is
    copied (-0.0 stays)."""
    rng = np.random.default_rng(len(shape) * 10 + dim)
    a = np.where(rng.random(shape) < 0.3, 1.5, -0.0)
    a.reshape(-1)[0] = -0.0

    def program(T):
        x = T.tensor(a, dtype=getattr(T, dtype), requires_grad=True)
        y = x.cumsum(dim)
        y.backward(T.full(shape, -0.0, dtype=getattr(T, dtype)))
        values = y.detach().float()
        return {'y': values, 'signs': np.signbit(values.numpy()).tolist(), 'through a division': 1 / values,
                'min': 1 / values.min(0)[0], 'grad signs': np.signbit(x.grad.float().numpy()).tolist(),
                '0-d': 1 / T.tensor(-0.0, dtype=getattr(T, dtype)).cumsum(0).float()}
    assert_same(program)


def _leading_names(t, names):
    """The names of t's history from its grad_fn down (first inputs), while they are ``names``."""
    out, fn = [], t.grad_fn
    while fn is not None and fn.name() in names:
        out.append(fn.name())
        fn = next((f for f, _ in fn.next_functions if f is not None), None)
    return out


@pytest.mark.parametrize('op', ['cumsum', 'cumprod'])
@pytest.mark.parametrize('shape,dim', [((3, 1), 0), ((3,), 0), ((1,), 0), ((2, 3), 1), ((2, 3), -2), ((3, 1), 1)],
                         ids=str)
def test_a_reversed_cumsum_under_create_graph_records_as_torch(op, shape, dim):
    """cumsum's derivative (and cumprod's, where the input has no zero) is PyTorch's
    reversed_cumsum, recorded with create_graph as flip, cumsum, flip (leafgrad recorded one
    CumsumBackward0): the long run, seed 5000052 (autograd.grad of a cumsum's erf's log1p with
    create_graph named its result CumsumBackward0, PyTorch FlipBackward0)."""
    def program(T):
        x = (T.arange(1.0, 1.0 + int(np.prod(shape)), dtype=T.float64).reshape(shape) / 4).requires_grad_()
        y = getattr(x, op)(dim).erf()
        g, = T.autograd.grad(y.sum(), [x], create_graph=True)
        gg, = T.autograd.grad(g.sum(), [x])
        names = ' '.join(_leading_names(g, {'FlipBackward0', 'CumsumBackward0', 'DivBackward0'}))
        return {'names': names, 'g': g, 'gg': gg}
    assert_same(program)


@pytest.mark.parametrize('how', ['clone', 'add', 'mul by one', 'expand'])
@pytest.mark.parametrize('create_graph', [False, True])
def test_autograd_grad_returns_one_tensor_for_one_gradient(how, create_graph):
    """A gradient that reaches two inputs unchanged (through a clone, an add, an expand to the
    same shape) is one tensor in what autograd.grad returns, as in PyTorch: an in-place change
    of one changes the other, its flags included (the long run, seed 5003159: v4[...] = v9 on
    the gradient of a clone made PyTorch's v3, the same tensor, require grad, CopyBackwards)."""
    def program(T):
        x = T.tensor([1.4, 2.0, 0.7], dtype=T.float64, requires_grad=True)
        y = {'clone': lambda: x.clone(), 'add': lambda: x + 0, 'mul by one': lambda: x * 1,
             'expand': lambda: x.expand(3)}[how]()
        w = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
        gx, gy, gy2 = T.autograd.grad((y * w).sum(), [x, y, y], create_graph=create_graph)
        seen = {'x is y': gx is gy, 'y is y': gy is gy2}
        with T.no_grad():
            gy.mul_(2)
        src = (w * 1).sin()
        gy[...] = src
        seen.update(gx=gx, gy=gy, x_requires_grad=gx.requires_grad, x_name=_name(gx) or '', y_name=_name(gy) or '')
        return seen
    assert_same(program)


_EMPTY_INDICES = ['T.tensor([])', 'T.zeros(0, dtype=T.long)', 'T.zeros(1, 1, 0, dtype=T.long)',
                  'T.zeros(0, 5, dtype=T.long)', 'T.zeros(2, 0, dtype=T.long)']


@pytest.mark.parametrize('index', _EMPTY_INDICES)
@pytest.mark.parametrize('shape', [(0, 3), (2, 3)], ids=str)
@pytest.mark.parametrize('dim', [0, 1])
def test_gather_of_an_empty_index_backpropagates_as_torch(index, shape, dim):
    """gather with an empty index gives an empty result and its backward zeros: PyTorch's
    scatter_add into zeros checks no shape against an empty index (the long run, seed 5007578:
    gather(1, tensor([])) of an empty view, then backward, raised 'Index tensor must have the
    same number of dimensions as self tensor')."""
    def program(T):
        x = T.ones(shape, requires_grad=True)
        y = x.gather(dim, eval(index))
        y.sum().backward()
        return {'y': y, 'shape': tuple(y.shape), 'grad': x.grad}
    assert_same(program)


@pytest.mark.parametrize('op', ['scatter', 'scatter_add', 'scatter_reduce', 'scatter_'])
@pytest.mark.parametrize('index,src', [(i, s) for i in _EMPTY_INDICES[:4]
                                       for s in ('T.zeros(0)', 'T.zeros(2, 2)', 'T.zeros(0, dtype=T.float64)')])
def test_scatter_of_an_empty_index_checks_only_dtypes(op, index, src):
    """PyTorch's scatter family returns its input for an empty index, whatever the shapes,
    checking only the source's dtype."""
    def program(T):
        x = T.arange(6.0).reshape(2, 3)
        args = (1, eval(index), eval(src)) + (('sum',) if op == 'scatter_reduce' else ())
        y = getattr(x, op)(*args)
        return {'y': y, 'shape': tuple(y.shape)}
    assert_same(program)


@pytest.mark.parametrize('upstream', [1.0, float('inf'), NAN], ids=str)
@pytest.mark.parametrize('create_graph', [False, True])
def test_pow_zero_passes_zeros_whatever_the_gradient(upstream, create_graph):
    """x ** 0's derivative is zeros_like(x), as PyTorch's pow_backward (not grad * 0, which is NaN
    for an infinite gradient: the long run, seed 5008204, sqrt(x) ** 0 then div_(0.0))."""
    def program(T):
        x = T.tensor([1.9, 0.0, -2.0], requires_grad=True)
        y = x ** 0
        g, = T.autograd.grad(y, [x], T.full((3,), upstream), create_graph=create_graph)
        return {'g': g, 'requires_grad': g.requires_grad, 'name': _name(g) or ''}
    assert_same(program)


@pytest.mark.parametrize('shape', [(2, 1, 3), (3,), (1,)], ids=str)
def test_a_gradient_summed_to_a_0d_tensor_is_sum_backward0(shape):
    """Under create_graph, the gradient of a 0-d tensor broadcast against a bigger one is
    PyTorch's sum_to: tensor.sum() (SumBackward0), not a sum over dims (the long run, seed
    5009231)."""
    def program(T):
        x = T.tensor(0.8, dtype=T.float64, requires_grad=True)
        w = T.arange(1.0, 1.0 + int(np.prod(shape)), dtype=T.float64).reshape(shape)
        x2 = x * x
        y = (w + x2).log1p()
        g, = T.autograd.grad(y.sum(), [x2], create_graph=True)
        gg, = T.autograd.grad(g, [x])
        return {'g': g.reshape(1), 'name': _name(g), 'gg': gg.reshape(1)}  # (as lists: to rounding)
    assert_same(program)


@pytest.mark.parametrize('pair', ['x, x', 'x, w', 'w, x', 'tiny'])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_atan2_derivative_is_torchs_masked_reciprocal(pair, dtype):
    """atan2's derivative is PyTorch's: grad * other * recip and grad * -self * recip, recip
    the reciprocal of self^2 + other^2 set to 0 where that is 0; so the second derivative at the
    origin is NaN (the long run, seed 5012088: leafgrad's 0), and a denominator that is only tiny
    (1e-40 in float32) gives NaN and -inf, as PyTorch's."""
    def program(T):
        dt = getattr(T, dtype)
        x = T.tensor([-1.3, 1.3, 0.0] + ([1e-20] if pair == 'tiny' else []), dtype=dt, requires_grad=True)
        w = T.zeros(x.shape, dtype=dt, requires_grad=True)
        a, b = {'x, x': (x, x), 'x, w': (x, w), 'w, x': (w, x), 'tiny': (x, w)}[pair]
        gx, gw = T.autograd.grad(T.atan2(a, b).sum(), [x, w], create_graph=True, allow_unused=True,
                                 materialize_grads=True)
        ggx, ggw = T.autograd.grad((gx + gw).sum(), [x, w], allow_unused=True, materialize_grads=True)
        return {'gx': gx, 'gw': gw, 'ggx': ggx, 'ggw': ggw, 'name': _name(gx) or ''}
    assert_same(program)


_OVERLAPS = {'t sub_ its element': lambda x: x.t().sub_(x.select(1, -1)),
             'add_ its transpose': lambda x: x.view(6)[:4].view(2, 2).add_(x.view(6)[:4].view(2, 2).t()),
             'add_ itself': lambda x: x.add_(x), 'add_ itself viewed': lambda x: x.view(6).add_(x.reshape(6)),
             'copy_ a shifted slice': lambda x: x.view(6)[1:].copy_(x.view(6)[:-1]),
             'copy_ another row': lambda x: x[0].copy_(x[1]),
             'mul_ its first element': lambda x: x.view(6).mul_(x.view(6)[:1]),
             'copy_ its detached self': lambda x: x.copy_(x.detach()),
             'sub_ its detached row': lambda x: x[0].sub_(x.detach()[0, 1:2]),
             'setitem of itself unsqueezed': lambda x: x.__setitem__((None, Ellipsis), x),
             'copy_ itself unsqueezed': lambda x: x[None].copy_(x), 'add_ itself squeezed': lambda x: x[None].add_(x),
             'fill_ with its element': lambda x: x.fill_(x[0, 0]),
             'setitem of its element': lambda x: x[0, 0].unsqueeze(0).__setitem__(slice(None), x[0, 0]),
             'div_ one element by its step slice': lambda x: x.view(6)[:1][::2].div_(x.view(6)[:1]),
             'div_ a step slice of one element': lambda x: x.view(6)[:1].div_(x.view(6)[:1][::2]),
             'add_ itself unsqueezed twice': lambda x: x[None, :, None].add_(x[None, :, None]),
             'add_ the transpose of a column': lambda x: x.view(6)[:3].view(3, 1).add_(x.view(6)[:3].view(3, 1).t()),
             'copy_ the transpose of a row': lambda x: x.view(6)[:3].view(1, 3).copy_(x.view(6)[:3].view(1, 3).t()),
             'add_ its permuted column': lambda x: x.view(6)[:2].view(2, 1, 1).add_(x.view(6)[:2].view(2, 1, 1).permute(2, 1, 0)),
             'mul_ another view of a column': lambda x: x.view(6)[:2].view(2, 1).mul_(x.view(6)[:2].view(1, 2))}


@pytest.mark.parametrize('case', sorted(_OVERLAPS))
@pytest.mark.parametrize('grad', [False, True])
def test_an_in_place_operand_sharing_part_of_the_written_memory_is_refused(case, grad):
    """PyTorch's TensorIterator refuses an operand that shares some, not all, of the memory an
    in-place op writes ('some elements of the input tensor and the written-to tensor refer to a
    single memory location'), and lets through one that shares all of it with the same strides,
    or one not laid out densely (a broadcast column): the long run's most common known
    difference, 25 of 10,000 programs from seed 5000300 (t().sub_ of a select of the same leaf,
    seed 5000499). The same memory with other strides is a partial overlap, a size-1 dim's
    stride included (a one-element step slice, seed 6012568)."""
    def program(T):
        leaf = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=grad)
        x = leaf * 1 if grad else leaf
        _OVERLAPS[case](x)
        return {'x': x}
    assert_same(program)


_SETITEM_SELF_INDICES = {'[:]': (slice(None),), '[0]': (0,), '[...]': (Ellipsis,), '[None]': (None,),
                         '[None][0]': None, '[:, -1]': (slice(None), -1), '[None, 0]': (None, 0),
                         '[..., None]': (Ellipsis, None), '[None, None]': (None, None), '[::2]': (slice(None, None, 2),)}


@pytest.mark.parametrize('shape', [(1,), (1, 1), (2,), (2, 1), (1, 2), (1, 1, 1), (1, 2, 1), ()], ids=str)
@pytest.mark.parametrize('index', sorted(_SETITEM_SELF_INDICES))
@pytest.mark.parametrize('grad', [False, True])
def test_setitem_of_itself_refuses_a_partial_overlap_as_torch(shape, index, grad):
    """``x[index] = x``: PyTorch copies a value of another shape from its view without leading
    1s, expanded to the written view's shape; a value of ones is expanded from 0-d with strides
    0, so writing it into a view of its own one element is a partial overlap (v3[:, -1] = v3 of
    1x1, v1[None] = v1 of one element: seeds 8000233, 5043888), while a value of the view's
    shape (v1[None][0] = v1) or of more elements (x[None] = x of two: seed 5018909) is not."""
    def program(T):
        leaf = T.arange(1.0, 1.0 + max(1, int(np.prod(shape)))).reshape(shape).requires_grad_(grad)
        x = leaf * 1 if grad else leaf.detach()
        where = _SETITEM_SELF_INDICES[index]
        if where is None:
            x[None][0] = x
        else:
            x[where] = x
        out = {'x': x, 'version': x._version}
        if grad:
            out['grad'] = T.autograd.grad(x.sum(), leaf)[0]
        return out
    assert_same(program)


_TIES = {'maximum': lambda T, a, b: T.maximum(a, b), 'minimum': lambda T, a, b: T.minimum(a, b),
         'fmax': lambda T, a, b: T.fmax(a, b), 'fmin': lambda T, a, b: T.fmin(a, b),
         'max': lambda T, a, b: T.max(a, b), 'clamp min': lambda T, a, b: T.clamp(a, min=b),
         'clamp max': lambda T, a, b: T.clamp(a, max=b), 'clamp both': lambda T, a, b: T.clamp(a, b, b + 1),
         'clamp_min': lambda T, a, b: T.clamp_min(a, b), 'clamp_max': lambda T, a, b: T.clamp_max(a, b)}


@pytest.mark.parametrize('op', sorted(_TIES))
@pytest.mark.parametrize('forward_mode', [False, True])
@pytest.mark.parametrize('dtypes', ['float32, 0-d float64', '0-d float64, float32', 'float64, 0-d float32',
                                    'float32, float64'])
def test_a_tie_is_decided_in_pytorchs_promoted_dtype(op, dtypes, forward_mode):
    """A tie of maximum/minimum/fmax/fmin/clamp's tensor bounds is an equality of the operands as
    PyTorch compares them, in their promoted dtype: a 0-d float64 1.1 beside a float32 tensor is
    compared in float32, where it equals the tensor's 1.1 (seeds 5034136, 5043782: leafgrad gave
    all of the gradient to one side, having compared in float64)."""
    def program(T):
        first, second = dtypes.split(', ')
        big = [[0.9, 1.1, 1.6], [-0.3, 1.1, -1.1]]
        a = T.tensor(big if '0-d' not in first else 1.1, dtype=getattr(T, first.split()[-1]), requires_grad=True)
        b = T.tensor(big if '0-d' not in second else 1.1, dtype=getattr(T, second.split()[-1]), requires_grad=True)
        if first == 'float32' and second == 'float64':
            b = (b * 0 + 1.1).detach().requires_grad_()  # equal to a's 1.1 only in float32
        if forward_mode:
            fwad = T.autograd.forward_ad
            with fwad.dual_level():
                ta, tb = T.ones_like(a), T.full_like(b, 3.0)
                out = _TIES[op](T, fwad.make_dual(a, ta), fwad.make_dual(b, tb))
                return {'out': fwad.unpack_dual(out).primal, 'tangent': fwad.unpack_dual(out).tangent}
        out = _TIES[op](T, a, b)
        ga, gb = T.autograd.grad(out.sum(), [a, b])
        return {'out': out, 'dtype': str(out.dtype).split('.')[-1], 'ga': ga, 'gb': gb}


def _graph_names(fn, depth=1):
    """The names of ``fn`` and of the nodes below it, ``depth`` levels down."""
    if fn is None:
        return None
    name = fn.name().replace('leafgrad', 'torch')
    return [name] + ([_graph_names(f, depth - 1) for f, _ in fn.next_functions] if depth else [])


_GRADIENT_GRAPHS = {
    'advanced index': lambda T, x, y: x[[0, 2, 0]], 'mask index': lambda T, x, y: x[x > 0],
    'select': lambda T, x, y: x[1], 'slice': lambda T, x, y: x[1:3, ::2], 'narrow': lambda T, x, y: x.narrow(1, 1, 2),
    'take': lambda T, x, y: T.take(x, T.tensor([[0, 5], [-1, 5]])),
    'take of a 0-d tensor': lambda T, x, y: T.take(x[0, 0], T.tensor([0, 0])),
    'masked_select': lambda T, x, y: T.masked_select(x, y > 0),
    'div by x': lambda T, x, y: y / x, 'div of x': lambda T, x, y: x / y, 'reciprocal': lambda T, x, y: x.reciprocal(),
    'maximum': lambda T, x, y: T.maximum(x, y), 'minimum': lambda T, x, y: T.minimum(y, x),
    'maximum tied': lambda T, x, y: T.maximum(x, x.detach()), 'fmax': lambda T, x, y: T.fmax(x, y),
    'fmin': lambda T, x, y: T.fmin(y, x),
    'broadcast to leading dims': lambda T, x, y: x[0] * y, 'broadcast of an empty': lambda T, x, y: x[:, :0] * y[:1, :0],
}


@pytest.mark.parametrize('case', sorted(_GRADIENT_GRAPHS))
@pytest.mark.parametrize('upstream', [1.5, float('inf')], ids=str)
def test_a_gradient_under_create_graph_records_pytorchs_ops(case, upstream):
    """The graph of a gradient (backward or autograd.grad with create_graph) records the ops of
    PyTorch's derivative formula: an index's zeros.index_put_ (IndexPutImplBackward0: the long
    run, seed 5022179), select's and slice's own nodes, take's put_, masked_select's
    masked_scatter_; div's -grad * ((self / other) / other) (a MulBackward0: seed 5027552);
    maximum's where(tie, grad / 2, grad).masked_fill_(loses, 0) (seed 5037064) and fmax's
    masked_fill (a loser gets 0 of an infinite gradient, not NaN); sum_to's sum keeping its dims
    then a view (ViewBackward0: seed 5025213). (Compared one level down: PyTorch's C++ grad / 2
    in maximum's is a DivBackward1, leafgrad's a DivBackward0.)"""
    def program(T):
        x = T.tensor([[0.5, -1.5, 2.0], [1.0, 3.0, -0.5], [NAN, 2.0, 0.25]], dtype=T.float64, requires_grad=True)
        y = T.tensor([[2.0, -1.5, 1.0], [1.0, NAN, 0.5], [0.5, 1.0, 0.25]], dtype=T.float64)
        out = _GRADIENT_GRAPHS[case](T, x, y)
        v = T.full(out.shape, upstream, dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(out, [x], v, create_graph=True)
        seen = {'g': g, 'graph': repr(_graph_names(g.grad_fn))}
        if g.requires_grad:
            gv, = T.autograd.grad(g, [v], T.ones_like(g))
            seen['gv'] = gv
        return seen
    assert_same(program)


@pytest.mark.parametrize('fn', ['softmax', 'log_softmax', 'softmin'])
@pytest.mark.parametrize('layout', ['permuted', 'transposed', 'channels_last', 'sliced'])
@pytest.mark.parametrize('dtype', ['float64', 'float16'])
def test_softmax_is_laid_out_contiguously(fn, layout, dtype):
    """PyTorch's softmax/log_softmax kernels read their input made contiguous and write a
    contiguous result, whose gradient is contiguous too, whatever the input's strides (seed
    5034921: softmax of a permuted tensor, then reshape under no_grad: a view of it in PyTorch,
    a copy in leafgrad, which kept the input's layout)."""
    def program(T):
        x = T.arange(1.0, 25.0, dtype=getattr(T, dtype)).div(7).reshape(2, 3, 4).requires_grad_()
        v = {'permuted': lambda: x.permute(2, 1, 0), 'transposed': lambda: x.transpose(0, 2),
             'channels_last': lambda: x.reshape(1, 2, 3, 4).contiguous(memory_format=T.channels_last),
             'sliced': lambda: x[:, :, ::2]}[layout]()
        seen = []
        v.register_hook(lambda g: seen.append(g.stride()))
        y = getattr(T.nn.functional, fn)(v, 1)
        with T.no_grad():
            flat = y.reshape(-1)
        weights = T.ones_like(y).transpose(0, -1).contiguous().transpose(0, -1)  # (not contiguous)
        g, = T.autograd.grad(y, [v], weights)
        strides = {'stride': y.stride(), 'view': flat._base is not None, 'requires_grad': flat.requires_grad,
                   'g stride': g.stride(), 'hook': seen}
        # (float16's values differ from PyTorch's in the last bit: its vectorized exp)
        return strides if dtype == 'float16' else dict(strides, y=y, flat=flat, g=g)
    assert_same(program)


@pytest.mark.parametrize('op', ['remainder', 'fmod'])
@pytest.mark.parametrize('dtypes', ['float32, float32', 'float64, float64', 'float32, 0-d float64',
                                    '0-d float64, float32', 'float32, float64', 'float16, float16'])
def test_a_modulo_agrees_with_pytorchs_to_the_bit(op, dtypes):
    """remainder and fmod compute as PyTorch's kernels (fmod, then moved by the divisor where the
    signs differ), in the promoted dtype, to the last bit and the sign of a zero: so a modulo
    that differs from PyTorch's in the long run (seed 5029101, a remainder by a float32 mean)
    differs by its operands' rounding (there: the mean's summation order), which the fuzzer
    files as known."""
    rng = np.random.default_rng(0)
    first, second = dtypes.split(', ')
    for scale in (1e-3, 1.0, 1e3):
        a = (rng.standard_normal(() if '0-d' in first else 64) * scale).round(1).astype(first.split()[-1])
        b = (rng.standard_normal(() if '0-d' in second else 64)).round(1).astype(second.split()[-1])
        mine = getattr(lg, op)(lg.tensor(a), lg.tensor(b)).numpy()
        theirs = getattr(torch, op)(torch.tensor(a), torch.tensor(b)).numpy()
        assert mine.dtype == theirs.dtype
        number = ~np.isnan(theirs)
        assert np.array_equal(np.isnan(mine), ~number)
        assert np.array_equal(mine[number], theirs[number]) and np.array_equal(np.signbit(mine[number]),
                                                                              np.signbit(theirs[number]))


_TENSORS_ONLY = ['atan2', 'arctan2', 'fmax', 'fmin', 'logaddexp', 'logaddexp2', 'dist', 'ldexp', 'heaviside', 'hypot',
                 'maximum', 'minimum', 'igamma', 'igammac']
_NOT_TENSORS = {'a float second': lambda T, op, t: getattr(T, op)(t, 2.0),
                'an int first': lambda T, op, t: getattr(T, op)(2, t),
                'a bool second': lambda T, op, t: getattr(T, op)(t, True),
                'a NumPy scalar': lambda T, op, t: getattr(T, op)(t, np.float64(2.0)),
                'None': lambda T, op, t: getattr(T, op)(t, None),
                'by keyword': lambda T, op, t: getattr(T, op)(t, **{'values' if op == 'heaviside' else 'other': 2.0}),
                'with out=': lambda T, op, t: getattr(T, op)(t, 2.0, out=T.empty(3)),
                'the method': lambda T, op, t: getattr(t, op)(2.0),
                'the in-place method': lambda T, op, t: getattr(t, op + '_')(2)}


@pytest.mark.parametrize('op', _TENSORS_ONLY)
@pytest.mark.parametrize('case', sorted(_NOT_TENSORS))
def test_a_number_where_pytorch_takes_only_a_tensor_is_its_type_error(op, case):
    """atan2, fmax, fmin, logaddexp, logaddexp2, dist, ldexp, heaviside, hypot, maximum, minimum,
    igamma and igammac take tensors only: a number (or anything else) is PyTorch's parser
    TypeError naming the argument and its position (after self in a method), also through an
    alias (arctan2), where leafgrad computed with the number (atan2, hypot ...), raised an
    AttributeError (dist, ldexp, heaviside) or counted the method's position as the function's
    (maximum, igamma): issue 22."""
    def program(T):
        t = T.tensor([1.0, -2.0, 0.5])
        if not hasattr(t, op + '_') and case == 'the in-place method':
            return {'skipped': True}
        return {'out': _NOT_TENSORS[case](T, op, t)}
    assert_same(program)


def test_dist_of_a_float_and_an_integer_tensor_as_torch():
    """dist computes input - other first (in their promoted dtype; a bool operand is the
    subtraction's error) and refuses an integer difference only (leafgrad refused any integer
    operand)."""
    for a, b in [([1.0, -2.0], [1, 2]), ([1, 2], [0.5, 1.0]), ([1, 2], [3, 4]), ([True, False], [0.5, 1.0])]:
        def program(T):
            x, y = T.tensor(a), T.tensor(b)
            if x.is_floating_point():
                x.requires_grad_(True)
            d = T.dist(x, y)
            seen = {'d': d, 'dtype': str(d.dtype).split('.')[-1]}
            if d.requires_grad:
                d.backward()
                seen['grad'] = x.grad
            return seen
        assert_same(program)


_CHECKS_AFTER_A_CHANGED_NO_GRAD_VIEW = {
    'var of one element': lambda T, v: T.var(v, 0), 'std of one element': lambda T, v: v.std(),
    'var_mean of one element': lambda T, v: T.var_mean(v), 'std_mean with dof 0': lambda T, v: T.std_mean(v, correction=1),
    'mm of mismatched sizes': lambda T, v: T.mm(T.ones(2, 2), v.reshape(3, 1)),
    'matmul 3-D @ 1-D mismatched': lambda T, v: T.ones(2, 3, 2) @ v,
    'mv of mismatched sizes': lambda T, v: T.mv(T.ones(2, 2), v)}


@pytest.mark.parametrize('case', sorted(_CHECKS_AFTER_A_CHANGED_NO_GRAD_VIEW))
@pytest.mark.parametrize('mode', ['grad', 'no_grad'])
def test_a_no_grad_view_whose_base_changed_raises_before_the_ops_own_checks(case, mode):
    """PyTorch's autograd reads an input's history before the kernel runs, so a view made under
    no_grad whose base changed in place raises its error before the op warns (var/std with no
    degrees of freedom left: the long run, seed 5026183, where leafgrad warned, then raised the
    same error) or checks its sizes (matrix products: seed 5017430); under no_grad nothing is
    read: the warning or the size error."""
    def program(T):
        x = T.tensor([0.5, 1.6, 0.2], requires_grad=True)
        y = x.reciprocal()
        with T.no_grad():
            v = y.chunk(2, 0)[-1] if case.startswith(('var', 'std')) else y.reshape(-1)  # (one element; three)
            y.mul_(2)  # (v's base changed: v may not get a history)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter('always')
            try:
                with T.set_grad_enabled(mode == 'grad'):
                    _CHECKS_AFTER_A_CHANGED_NO_GRAD_VIEW[case](T, v)
                error = None
            except RuntimeError as e:
                error = str(e)
        return {'error': error, 'warnings': ' | '.join(str(w.message).split(' (Triggered internally')[0] for w in seen)}


_ZERO_GRADIENTS = {
    'copy_': lambda T, x, y: (x * 1).copy_(y), 'setitem': lambda T, x, y: _set_all(x * 1, y),
    'clamp min tensor': lambda T, x, y: T.clamp(x, min=y), 'clamp tensors': lambda T, x, y: T.clamp(x, y, y + 1),
    'where': lambda T, x, y: T.where(x > 0, x, y), 'sinc at 0': lambda T, x, y: T.sinc(x * 0),
    'sgn': lambda T, x, y: T.sgn(x) * 1, 'angle': lambda T, x, y: T.angle(x),
    'div floor': lambda T, x, y: T.div(x, y, rounding_mode='floor'),
    'div trunc': lambda T, x, y: T.div(x, y, rounding_mode='trunc'), 'poisson': lambda T, x, y: T.poisson(x.abs()),
    'pow of 0': lambda T, x, y: T.pow(0.0, x), 'vector_norm 0': lambda T, x, y: T.linalg.vector_norm(x, 0, dim=0),
    'relu twice': lambda T, x, y: T.autograd.grad(T.relu(x), [x], y * 1, create_graph=True)[0],
    'bernoulli_ of a tensor p': lambda T, x, y: (x * 1).bernoulli_(y.detach())}


def _set_all(t, value):
    t[...] = value
    return t


@pytest.mark.parametrize('case', sorted(_ZERO_GRADIENTS))
def test_a_zero_gradient_stays_zero_where_the_gradient_is_not_finite(case):
    """A derivative that is zero is PyTorch's zeros (zeros_like, or where(mask, grad, 0)), not
    grad * 0, which is NaN where the incoming gradient is infinite or NaN (seed 6005760:
    v2[...] = v0 over a cumsum, then v0 / v2: the NaN of one element's gradient reached the
    overwritten cumsum through copy_'s zero and spread along it); pow(0, x) at a negative x is
    result * log(0), -inf."""
    def program(T):
        x = T.tensor([0.3, -0.4, 0.5, 0.0], requires_grad=True)
        y = T.tensor([0.1, 0.2, 0.5, 0.7], requires_grad=True)
        out = _ZERO_GRADIENTS[case](T, x, y)
        g = T.tensor([NAN, float('inf'), -float('inf'), 1.0])[:out.numel()].reshape(out.shape)
        gx, gy = T.autograd.grad(out, [x, y], g, allow_unused=True, materialize_grads=True)
        return {'gx': gx.clone(), 'gy': gy.clone()}  # (clone: PyTorch's sgn gives a zero tensor of no storage)
    assert_same(program)


def test_a_cumsum_overwritten_by_setitem_gets_no_nan():
    """Seed 6005760, the long run's program: a NaN gradient for v0 through v2 = v0 does not reach
    v0 again through the cumsum that setitem overwrote."""
    def program(T):
        v0 = T.tensor([[[0.4, NAN], [1.6, 0.4], [0.5, 0.3]], [[1.1, 1.4], [-1.1, -1.8], [-1.7, 0.2]]],
                      requires_grad=True)
        v2 = v0.cumsum(-1)
        v2[...] = v0
        (v0 / v2).backward(T.ones_like(v0))
        return {'grad': v0.grad}
    assert_same(program)



_TENSORS_ONLY_MORE = [  # (t: a float tensor, b: a bool one, i: a long one)
    lambda T, t, b, i: T.logical_and(t, 2.0), lambda T, t, b, i: t.logical_and(2.0),
    lambda T, t, b, i: t.logical_and_(True), lambda T, t, b, i: T.logical_or(2.0, t),
    lambda T, t, b, i: t.logical_or(None), lambda T, t, b, i: T.logical_xor(t, other=1),
    lambda T, t, b, i: t.logical_xor_(1), lambda T, t, b, i: T.isclose(t, 2.0), lambda T, t, b, i: t.isclose(2.0),
    lambda T, t, b, i: T.allclose(t, 2.0), lambda T, t, b, i: T.equal(t, 2.0), lambda T, t, b, i: t.equal(2.0),
    lambda T, t, b, i: t.view_as(2.0), lambda T, t, b, i: t.reshape_as([1.0]), lambda T, t, b, i: t.expand_as(2.0),
    lambda T, t, b, i: t.type_as(2), lambda T, t, b, i: T.take(t, 2), lambda T, t, b, i: t.take(2),
    lambda T, t, b, i: T.take_along_dim(t, 2), lambda T, t, b, i: t.take_along_dim(2),
    lambda T, t, b, i: T.masked_select(t, True), lambda T, t, b, i: t.masked_select(True),
    lambda T, t, b, i: T.masked_scatter(t, b, 2.0), lambda T, t, b, i: t.masked_scatter(True, t),
    lambda T, t, b, i: t.masked_scatter_(b, 2.0), lambda T, t, b, i: T.vdot(t, 2.0), lambda T, t, b, i: t.vdot(2.0),
    lambda T, t, b, i: T.outer(t, 2.0), lambda T, t, b, i: t.ger(2.0), lambda T, t, b, i: T.cross(t, 2.0),
    lambda T, t, b, i: t.cross(2.0), lambda T, t, b, i: T.kron(t, 2.0), lambda T, t, b, i: t.kron(2.0),
    lambda T, t, b, i: T.inner(t, 2.0), lambda T, t, b, i: T.gcd(i, 2), lambda T, t, b, i: i.gcd(2),
    lambda T, t, b, i: i.gcd_(2), lambda T, t, b, i: T.lcm(2, i), lambda T, t, b, i: i.lcm_(2),
    lambda T, t, b, i: T.select_scatter(t, 2.0, 0, 0), lambda T, t, b, i: t.select_scatter(2.0, 0, 0),
    lambda T, t, b, i: T.slice_scatter(t, 2.0), lambda T, t, b, i: T.diagonal_scatter(t, src=2.0),
    lambda T, t, b, i: T.put(t, 2, t), lambda T, t, b, i: t.put_(i[:1], 2.0), lambda T, t, b, i: T.cdist(t, 2.0)]


@pytest.mark.parametrize('k', range(len(_TENSORS_ONLY_MORE)))
def test_more_ops_take_only_tensors_as_torch(k):
    """The same parser TypeError (Op.tensors) for the other ops whose tensor parameters take
    nothing else: the logical ops (whose methods said position 2), isclose, allclose, equal,
    the *_as methods, take, take_along_dim, masked_select/masked_scatter, vdot, outer/ger, cross,
    kron, inner, gcd, lcm, the *_scatter ops, put and cdist (an AttributeError or another error
    in leafgrad before)."""
    def program(T):
        t, b, i = T.tensor([1.0, 2.0, 0.5]), T.tensor([True, False, True]), T.tensor([1, 2, 3])
        return {'out': _TENSORS_ONLY_MORE[k](T, t, b, i)}


_CAT_LAYOUTS = {'transposed': lambda T, x4, x3: [x3.transpose(0, -2)] * 2,
                'permuted, other dim': lambda T, x4, x3: [x3.permute(2, 0, 1)] * 2,
                'channels_last': lambda T, x4, x3: [x4.contiguous(memory_format=T.channels_last)] * 2,
                'channels_last sliced': lambda T, x4, x3: [x4.contiguous(memory_format=T.channels_last)[..., ::2]] * 2,
                'channels_last and contiguous': lambda T, x4, x3: [x4.contiguous(memory_format=T.channels_last), x4],
                'channels_last_3d': lambda T, x4, x3: [x4[None].contiguous(memory_format=T.channels_last_3d)] * 2,
                'with a legacy empty': lambda T, x4, x3: [x4.contiguous(memory_format=T.channels_last), T.empty(0)]}


@pytest.mark.parametrize('case', sorted(_CAT_LAYOUTS))
@pytest.mark.parametrize('dim', [0, 1])
def test_cat_is_laid_out_as_pytorchs(case, dim):
    """cat's result takes the memory format its inputs all suggest (channels_last ones stay
    so), else it is contiguous, whatever its inputs' strides (seed 7002030: cat of a transposed
    tensor with itself, then view(2, 2, 6): refused by leafgrad, whose NumPy concatenate kept
    the transposed order)."""
    def program(T):
        x4 = T.arange(24.0).reshape(1, 2, 3, 4).requires_grad_()
        x3 = T.arange(12.0).reshape(2, 3, 2).requires_grad_()
        y = T.cat(_CAT_LAYOUTS[case](T, x4, x3), dim)
        return {'y': y, 'stride': y.stride(), 'flat': y.view(-1) if y.is_contiguous() else y.reshape(-1)}
    assert_same(program)


def test_cat_of_transposed_tensors_can_be_viewed():
    """Seed 7002030, the long run's program."""
    def program(T):
        v4 = T.tensor([[[-1.8, 0.6], [-0.5, -0.7], [-1.1, 1.5]], [[0.0, 0.2], [-0.1, 0.5], [0.3, -0.8]]],
                      requires_grad=True)
        v10 = T.cat([v4.transpose(0, -2)] * 2, -3).view(2, 2, 6)
        v10.sum().backward()
        return {'v10': v10, 'grad': v4.grad}
    assert_same(program)


_STACK_INPUTS = {'transposed': lambda T: T.arange(12.0).reshape(2, 3, 2).transpose(0, -2),
                 'permuted': lambda T: T.arange(12.0).reshape(2, 3, 2).permute(2, 0, 1),
                 'permuted 3-d': lambda T: T.arange(24.0).reshape(2, 3, 4).permute(1, 2, 0),
                 'a matrix transposed': lambda T: T.arange(6.0).reshape(2, 3).t(),
                 'a step slice': lambda T: T.arange(8.0)[::2]}


@pytest.mark.parametrize('case', sorted(_STACK_INPUTS))
@pytest.mark.parametrize('mixed', [False, True])
def test_stack_is_laid_out_as_pytorchs(case, mixed):
    """stack of tensors of up to 3 dims is laid out as PyTorch's cat of them unsqueezed: the
    format they all suggest, else contiguous (the same cause as seed 7002030's cat)."""
    def program(T):
        t = _STACK_INPUTS[case](T)
        u = t.contiguous() if mixed else t
        out = {}
        for d in range(t.dim() + 1):
            y = T.stack([t, u], d)
            out[f'stride {d}'] = y.stride()
            out[f'y {d}'] = y
        return out
    assert_same(program)


_DETACHED_CHANGES = {
    'no_grad view, its detach changed': lambda T, y: (_no_grad_view(T, y), None),
    'no_grad view, its base detached and changed': lambda T, y: (_no_grad_view(T, y), y),
    'view made with grad, its base detached and changed': lambda T, y: (y[1:], y)}


def _no_grad_view(T, y):
    with T.no_grad():
        return y.reshape(-1)[1:]


@pytest.mark.parametrize('case', sorted(_DETACHED_CHANGES))
@pytest.mark.parametrize('leaf', [True, False])
def test_a_detached_view_changed_in_place_puts_the_views_history_out_of_date(case, leaf):
    """detach() of a view, or of a base with views, shares their version counter (PyTorch's is a
    view): changing it in place makes a view made under no_grad refuse a history (PyTorch's
    error), and a view made with grad get one through its base's. leafgrad missed it: the
    detached tensor has neither base nor views, so the change did not turn on the views' check
    (CI's fuzzer, test_programs_agree_with_torch: v3 = v2.detach(); v3.zero_(); v2 @ v2)."""
    def program(T):
        x = T.tensor([[-1.8, 1.0, -1.8], [1.0, -1.7, -0.1]], requires_grad=True)
        y = x if leaf else x * 1
        v, base = _DETACHED_CHANGES[case](T, y)
        (v if base is None else base).detach().mul_(2)
        out = (v * v).sum()
        out.backward()
        return {'out': out, 'grad': x.grad}
    assert_same(program)


@pytest.mark.parametrize('join', ['stack', 'stack reversed', 'cat of other sizes', 'cat of other ranks'])
@pytest.mark.parametrize('mode', ['grad', 'no_grad'])
def test_a_changed_no_grad_view_joined_raises_before_the_size_check(join, mode):
    """stack and cat of tensors whose sizes do not fit, one a view made under no_grad whose base
    changed since: PyTorch's no_grad-view error with grad mode on (the long run, seed 5025012:
    leafgrad's size error), the size error under no_grad."""
    def program(T):
        x = T.tensor([1.2], requires_grad=True)
        y = x[[0, -1, 0]]
        with T.no_grad():
            v = y.narrow(0, 1, 1)
        y.pow_(2.0)
        with T.set_grad_enabled(mode == 'grad'):
            out = {'stack': lambda: T.stack([y, v]), 'stack reversed': lambda: T.stack([v, y]),
                   'cat of other sizes': lambda: T.cat([y[None], v[None]]),
                   'cat of other ranks': lambda: T.cat([y[None], v])}[join]()
        return {'out': out}
    assert_same(program)


_ALIAS_CHANGES = {'no_grad view, then *': lambda T, v: v * v, 'no_grad view, then @': lambda T, v: v @ v,
                  'no_grad view, then sum': lambda T, v: v.sum(), 'no_grad view, then permute': lambda T, v: v.permute(0)}


@pytest.mark.parametrize('case', sorted(_ALIAS_CHANGES))
def test_a_change_through_a_detached_alias_reaches_the_views(case):
    """detach() shares the storage and version counter: changing the detached tensor in place
    changes the base of the views it was made from, so a view made under no_grad refuses to be
    used (PyTorch's error), and a recorded view's history is regenerated (AsStridedBackward0)
    (the CI fuzzer's program since a685384: v3 = v2.detach(); v3.zero_(); v10 = v2 @ v2; leafgrad
    saw no change)."""
    def program(T):
        v0 = T.tensor([[-1.8, 1.0, -1.8], [1.0, -1.7, -0.1]], requires_grad=True)
        with T.no_grad():
            v2 = v0.reshape(-1)
        v2.detach().zero_()
        _ALIAS_CHANGES[case](T, v2)
        return {}
    assert_same(program)
    for detached in ('view', 'base'):
        def recorded(T):
            v0 = T.tensor([[-1.8, 1.0, -1.8], [1.0, -1.7, -0.1]], requires_grad=True)
            v2 = v0 * 1
            v4 = v2[0]
            (v4 if detached == 'view' else v2).detach().zero_()
            name = v4.grad_fn.name()
            v4.sum().backward()
            return {'name': name, 'grad': v0.grad}
        assert_same(recorded)


_NUMBER_CLAMPS = {'clamp min': lambda x: x.clamp(min=-0.5), 'clamp max': lambda x: x.clamp(max=-5.0),
                  'clamp both': lambda x: x.clamp(-0.5, 1.0), 'clamp_ min': lambda x: (x * 1).clamp_(min=-0.5),
                  'clamp_min': lambda x: x.clamp_min(-0.5), 'clamp_max': lambda x: x.clamp_max(1.0)}


@pytest.mark.parametrize('case', sorted(_NUMBER_CLAMPS))
def test_clamp_with_number_bounds_gives_zero_where_a_bound_was_taken_even_to_nan(case):
    """clamp's gradient with number bounds is PyTorch's where(mask, grad, 0), not grad * mask: the
    sqrt of a clamped -0.5 sends NaN back, which stops at the clamp (seed 10004743: leafgrad's
    leaf gradient was NaN); with create_graph the gradient is a WhereBackward0."""
    def program(T):
        x = T.tensor([-4.0, 0.3, 2.0], requires_grad=True)
        y = _NUMBER_CLAMPS[case](x)
        (gx,) = T.autograd.grad((T.sqrt(y) + y * y).sum(), x, create_graph=True)
        (ggx,) = T.autograd.grad(gx.sum(), x, allow_unused=True, materialize_grads=True)
        return {'gx': gx, 'ggx': ggx, 'name': _name(gx)}
    assert_same(program)


@pytest.mark.parametrize('op', ['std', 'var'])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('values,correction', [([0.3], 1), (0.3, 1), ([0.3, 0.5], 2), ([0.3, 0.5], 3)], ids=str)
def test_a_variance_without_degrees_of_freedom_has_torchs_gradient_graph(op, dtype, values, correction):
    """The derivative of std/var over all elements with no degrees of freedom left is grad times
    a where() of two numbers, of the default dtype, which PyTorch's engine casts to the input's
    dtype: with create_graph the gradient of a float64 std of one element is a ToCopyBackward0
    (seeds 10006796, 10016988: leafgrad's was a MulBackward0)."""
    def program(T):
        x = T.tensor(values, dtype=getattr(T, dtype), requires_grad=True)
        w = T.tensor(2.0, dtype=getattr(T, dtype), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            y = getattr(x, op)(correction=correction) * w
        gx, gw = T.autograd.grad(y, [x, w], create_graph=True)
        (ggw,) = T.autograd.grad(gx.sum(), w, allow_unused=True, materialize_grads=True)
        return {'gx': gx.reshape(-1), 'ggw': ggw.reshape(-1), 'name': _name(gx), 'dtype': str(gx.dtype).split('.')[-1]}
    assert_same(program)


_SCANS = {'cumsum': lambda T, t: t.cumsum(0), 'cumprod': lambda T, t: t.cumprod(0),
          'cummax': lambda T, t: t.cummax(0).values, 'cummax indices': lambda T, t: t.cummax(0).indices,
          'cummin': lambda T, t: t.cummin(1).values, 'logcumsumexp': lambda T, t: t.logcumsumexp(0),
          'cumsum in float64': lambda T, t: t.float().cumsum(1, dtype=T.float64),
          'cumsum of float32': lambda T, t: t.float().cumsum(1)}


@pytest.mark.parametrize('case', sorted(_SCANS))
@pytest.mark.parametrize('layout', ['transposed', 'diagonal'])
def test_a_scan_is_contiguous_whatever_its_input_layout(case, layout):
    """PyTorch's scans write a new contiguous tensor: the cumprod of a diagonal can be view()ed
    (seeds 11002403, 11008020: leafgrad's kept NumPy's layout of the input and refused view(-1))."""
    def program(T):
        x = T.arange(1.0, 13.0, dtype=T.float64).reshape(2, 3, 2).requires_grad_()
        t = x.diagonal() if layout == 'diagonal' else x.reshape(3, 4).t()
        y = _SCANS[case](T, t)
        return {'stride': y.stride(), 'flat': y.view(-1).double()}
    assert_same(program)


def test_matmul_folds_an_unsqueezed_transpose_by_torchs_strides():
    """Seed 8005726: PyTorch folds the 3-D operand of a 1-D @ 3-D product into one mv when its
    strides allow a view as rows, and unsqueeze(-1) gives the new dim stride 1 (NumPy gave it the
    stride before it, so leafgrad took bmm and bmm's error instead of mv's)."""
    def program(T):
        v0 = T.tensor([0.6], dtype=T.float32, requires_grad=True)
        v1 = T.tensor([[-0.8, 0.2, -1.1], [1.1, -1.9, -1.4], [0.6, -0.1, 0.8]], dtype=T.float64, requires_grad=True)
        v5 = v1.t().unsqueeze(-1)
        with T.set_grad_enabled(False):
            v5_strides = v5.stride()
            v9 = v0.detach() @ v5
        return {'strides': v5_strides, 'v9': v9}
    assert_same(program)


_GRADIENTS_AS_MADE = {
    'sum': lambda T, x: x.sum(), 'sum of a dim': lambda T, x: x.sum(1), 'sum keeping it': lambda T, x: x.sum(1, True),
    'mean': lambda T, x: x.mean(), 'mean of a dim': lambda T, x: x.mean(0), 'reshape': lambda T, x: x.reshape(3, 2),
    'view': lambda T, x: x.view(6), 'squeeze of nothing': lambda T, x: x.squeeze(), 'squeeze': lambda T, x: x[None].squeeze(0),
    'clone': lambda T, x: x.clone(),
    'mul': lambda T, x: x * 2, 'transpose': lambda T, x: x.t(), 'itself': lambda T, x: x,
}


@pytest.mark.parametrize('op', sorted(_GRADIENTS_AS_MADE))
@pytest.mark.parametrize('upstream', ['plain', 'requires grad'])
def test_autograd_grad_returns_the_gradient_the_walk_made(op, upstream):
    """autograd.grad returns each gradient as the walk made it, not a detached copy, as PyTorch
    does: a sum's is a view of the expanded upstream gradient, so a view made of it follows that
    base, not the gradient, when the gradient is then set to require grad (the long run, seed
    11016263: v1.select(-1, -1), then v1.requires_grad_(True)); a reshape's is a view of
    grad_outputs, a clone's grad_outputs itself (requiring grad if it does); a mean's, and a
    squeeze's of no dim, are no view (PyTorch's expand, then divide; unsqueeze_to of nothing).
    (Not compared: a broadcast's gradient, summed to the input's shape, which PyTorch views
    without the leading dims; leafgrad's plain walk gives the sum itself, which AccumulateGrad
    then keeps as .grad without a copy.)"""
    def program(T):
        x = T.tensor([[0.5, -1.5, 2.0], [1.0, 3.0, -0.5]], dtype=T.float64, requires_grad=True)
        out = _GRADIENTS_AS_MADE[op](T, x)
        go = T.full(out.shape, 2.0, dtype=T.float64, requires_grad=upstream == 'requires grad')
        g, = T.autograd.grad(out, [x], go)
        v = g.select(-1, -1)
        seen = {'g': g, 'view': g._base is not None, 'of go': g._base is go, 'is go': g is go,
                'stride': g.stride(), 'requires_grad': g.requires_grad}
        g.requires_grad_(True)
        seen.update(v_requires_grad=v.requires_grad, v_is_leaf=v.is_leaf, v_name=_name(v) or '')
        return seen
    assert_same(program)


@pytest.mark.parametrize('then', ['sub_ of a view', 'detach_', 'mul_ of a view under no_grad'])
def test_autograd_grads_gradient_of_a_sum_is_a_view_made_under_no_grad(then):
    """The gradient of a sum that autograd.grad returns is PyTorch's view of the expanded upstream
    gradient, made while the walk had grad mode off: set to require grad, a view of it changed in
    place is refused as a view of a view made under no_grad (seed 5019399: v2[-2].sub_(v2)), and
    detach_ refuses it as a view."""
    def program(T):
        x = T.tensor([[0.8, -0.1, -0.6], [1.2, -0.3, 1.3]], dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(x.sum(), [x])
        if then == 'detach_':
            g.detach_()
        elif then == 'sub_ of a view':
            g.requires_grad_(True)
            g[-2].sub_(g)
        else:
            with T.no_grad():
                g[-2].mul_(2)
        return {'g': g, 'requires_grad': g.requires_grad}
    assert_same(program)


def _graph_names_deep(fn, depth):
    return None if fn is None else [fn.name().replace('leafgrad', 'torch')] + (
        [_graph_names_deep(f, depth - 1) for f, _ in fn.next_functions] if depth else [])


_REGENERATED_VIEWS = {
    'select': lambda y: y[1], 'element': lambda y: y[1, 2], 'slice by steps': lambda y: y[:, ::2],
    'narrow': lambda y: y.narrow(1, 1, 2), 'transpose': lambda y: y.t(), 'permute': lambda y: y.permute(1, 0),
    'diagonal': lambda y: y.diagonal(), 'view': lambda y: y.view(12), 'reshape': lambda y: y.reshape(4, 3),
    'view of a select': lambda y: y[2].view(2, 2), 'unsqueeze': lambda y: y.unsqueeze(1),
    'None and a slice': lambda y: y[None, :, 1:2], 'squeeze': lambda y: y[None].squeeze(0),
    'expand': lambda y: y.expand(2, 3, 4), 'expand of a column': lambda y: y[:, :1].expand(3, 4),
    'empty': lambda y: y[:0], 'view_as': lambda y: y.view_as(y),
}


@pytest.mark.parametrize('view', sorted(_REGENERATED_VIEWS))
@pytest.mark.parametrize('change', ['under no_grad', 'recorded'])
def test_a_regenerated_views_gradient_under_create_graph_is_pytorchs_as_strided_backward(view, change):
    """A view whose base changed in place has PyTorch's AsStridedBackward0, whose derivative
    under create_graph records as_strided_backward: the gradient copied into zeros of the base's
    shape (CopySlices), its dims of size 1 squeezed and its expanded dims summed first, then
    as_strided of those zeros (AsStridedBackward0), or zeros with no history for an empty view
    (seed 11008616: a reshape of a leaf, relu_ under no_grad, then the gradient of its dot with
    itself: PyTorch's AsStridedBackward0, leafgrad's the reshape's derivative, ViewBackward0).
    Second derivatives through it as PyTorch's."""
    def program(T):
        x = T.arange(12., dtype=T.float64).reshape(3, 4).div(5).requires_grad_()
        y = x * 1.5
        v = _REGENERATED_VIEWS[view](y)
        if change == 'recorded':
            v.mul_(T.tensor(2.0, dtype=T.float64, requires_grad=True))
        else:
            with T.no_grad():
                y.mul_(2)
        w = T.tensor(0.5, dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad((v * v * w).sum(), [x], create_graph=True)
        gw, gx = T.autograd.grad((g * g).sum(), [w, x], allow_unused=True)
        # (recorded: CopySlices's own derivative below the AsStridedBackward0 records a clone where
        # PyTorch's copies into a new tensor and takes as_strided of it, not compared)
        depth = 2 if change == 'recorded' else 4
        return {'graph': repr(_graph_names_deep(g.grad_fn, depth)), 'g': g, 'requires_grad': g.requires_grad,
                'stride': g.stride(), 'gw': gw.reshape(1), 'gx': 'None' if gx is None else gx}
    assert_same(program)


@pytest.mark.parametrize('then', ['backward through the old graph', 'backward through the new one', 'hook again'])
@pytest.mark.parametrize('how', ['detach_', 'requires_grad_(False)'])
def test_a_leafs_hooks_are_dropped_when_an_in_place_op_gives_it_a_history(then, how):
    """PyTorch resets a tensor's hooks when its grad_fn changes: a leaf that stopped requiring
    grad (detach_) and was then changed in place by a tensor that requires grad no longer runs
    the hooks it had as a leaf, where a graph made before reaches its AccumulateGrad (which
    then refuses the moved leaf) or not (seed 12012471: v1 = v0.contiguous(), which is v0;
    v1.register_hook; v0.detach_(); v1.div_(v3); the backward of v0.cumsum(1) ran the hook in
    leafgrad before the error)."""
    def program(T):
        seen = []
        x = T.tensor([[0.2, 0.9], [1.4, -0.4]], requires_grad=True)
        old = x.cumsum(1)
        x.register_hook(lambda g: seen.append(g.sum().item()))
        getattr(x, how.split('(')[0])(*(False,) if '(' in how else ())
        c = T.tensor([[2.0, 1.0], [0.5, 4.0]], requires_grad=True)
        x.div_(c)
        out = {'leaf': x.is_leaf, 'name': _name(x)}
        try:
            if then == 'backward through the old graph':
                old.sum().backward()
            else:
                if then == 'hook again':
                    x.register_hook(lambda g: seen.append(-g.sum().item()))
                (x * 3).sum().backward()
                out['c'] = c.grad
        except RuntimeError as e:
            out['error'] = str(e)
        out['seen'] = seen
        return out
    assert_same(program)


_EXPANDS_WITHOUT_REPEATS = {
    '(1,) of a 0-d tensor': lambda T: T.tensor(1.5, dtype=T.float64).expand(1),
    '(1, 1, 3) of (3,)': lambda T: T.tensor([1.5, -2.0, 0.5], dtype=T.float64).expand(1, 1, 3),
    '(0, 3) of (3,)': lambda T: T.tensor([1.5, -2.0, 0.5], dtype=T.float64).expand(0, 3),
    "autograd.grad's gradient of a one-element sum": lambda T: _grad_of_one_element_sum(T),
}


def _grad_of_one_element_sum(T):
    x = T.tensor([-1.8], dtype=T.float64, requires_grad=True)
    return T.autograd.grad(x.sum(), [x])[0]


@pytest.mark.parametrize('case', sorted(_EXPANDS_WITHOUT_REPEATS))
@pytest.mark.parametrize('op', ['mul_', 'copy_', 'setitem'])
def test_an_expand_that_repeats_no_element_can_be_written(case, op):
    """An expand that repeats no element (dims of size 1 added, or nothing to hold) has no
    internal overlap for PyTorch: an in-place op writes it, and its base (seed 12000479: mul_ of
    autograd.grad's gradient of the sum of one element, a (1,) view of stride 0)."""
    def program(T):
        t = _EXPANDS_WITHOUT_REPEATS[case](T)
        if op == 'mul_':
            t.mul_(2.0)
        elif op == 'copy_':
            t.copy_(T.full(t.shape, 4.0, dtype=T.float64))
        else:
            t[...] = 3.0
        return {'t': t, 'shape': tuple(t.shape), 'version': t._version,
                'base': 'None' if t._base is None else t._base}
    assert_same(program)


_NO_GRAD_VIEWS_OF_VIEWS = {
    'squeeze()': lambda t: t.squeeze(), 'squeeze(-1)': lambda t: t.squeeze(-1), 'squeeze((0,))': lambda t: t.squeeze((0,)),
    'select': lambda t: t[0], 'narrow': lambda t: t.narrow(0, 0, 1),
}


@pytest.mark.parametrize('view', sorted(_NO_GRAD_VIEWS_OF_VIEWS))
@pytest.mark.parametrize('change', ['its base', 'itself'])
def test_the_no_grad_view_error_names_the_views_op_as_torch(view, change):
    """PyTorch's error for a view of a view made under no_grad names the view's op by its node
    without 'Backward' and without an overload number of 0: Squeeze, Squeeze1, Squeeze2 (seed
    12029019: squeeze(-1) of an expand made under no_grad, whose base then changed in place:
    leafgrad said Squeeze)."""
    def program(T):
        x = T.ones(3, 3, requires_grad=True)
        with T.no_grad():
            e = x.expand(3, 3)
        v = _NO_GRAD_VIEWS_OF_VIEWS[view](e)
        if change == 'its base':
            with T.no_grad():
                x.mul_(2)
            v.grad_fn
        else:
            v.mul_(T.tensor(2.0, requires_grad=True))
        return {}
    assert_same(program)


@pytest.mark.parametrize('expr', [
    'e.fill_(1)', 'e.zero_()', 'e.add_(1)', 'e[0].fill_(2)', 'e[0].zero_()', 'e[0].add_(T.ones(3))', 'e[0].mul_(3)',
    'e.copy_(T.ones(2, 3))', 'e.normal_()', 'e.masked_fill_(T.tensor([[True, False, True]] * 2), 1)',
    'e.masked_fill_(T.tensor([True, False, False]), T.tensor(4.0))', 'e[:, :0].add_(1)', 'e.fill_(T.tensor(3.0))',
    'e[0].copy_(T.arange(3.0))', 'e[0][1] = 7', 'e[0].sub_(1, alpha=2)', 'e[0].add_(T.ones(3, dtype=T.float64))',
    'e[:, 1].fill_(5)', 'e[1:].add_(2)', 'e.t()[0].add_(1)',
    'w = T.ones(3, requires_grad=True); y = w * 1; y.expand(2, 3).fill_(2); y.sum().backward(); r = (y, w.grad)',
    'w = T.ones(3, requires_grad=True); y = w * 1; y.expand(2, 3)[1].mul_(2); y.sum().backward(); r = (y, w.grad)',
    'w = T.ones(3, requires_grad=True); y = w * 1; y.expand(2, 3).zero_(); y.sum().backward(); r = (y, w.grad)',
    'e[:1].diagonal().sigmoid_()', 'e.t().diagonal().mul_(2)', 'e.diagonal().exp_()',
    'e.copy_(e)', 'e[...] = e', 'e[:] = e', 'e.copy_(e[:])', 'e.copy_(e.detach())', 'e.copy_(e + 1)',
    'w = T.ones(1, requires_grad=True); y = (w * 1).expand(3); y.copy_(y); r = (y._version,); y.sum().backward()'])
def test_writing_into_an_expanded_tensor_is_refused_only_where_pytorch_refuses_it(expr):
    """Seed 12000479 and kin: NumPy marks every array derived from a broadcast read-only, so
    leafgrad refused fill_/zero_ of an expanded tensor (PyTorch writes the shared memory: fill_
    by a number checks no overlap), masked_fill_ (PyTorch warns that it is deprecated, and
    writes), and any in-place op on a part of one that repeats no memory (a row, an empty
    slice): only a dim of size > 1 and stride 0 in what is written is refused. Seeds 12004087,
    12004403, 12004916: copy_ of a tensor's own memory read the same way (x.copy_(x), x[...] = x)
    returns at once in PyTorch, whatever the overlap; the version is bumped all the same. Seed
    13000567: sigmoid_ of the diagonal of an expanded tensor (one element: as_strided's view)."""
    import warnings

    def run(M):
        t = M.zeros(3)
        ns = {'T': M, 'e': t.expand(2, 3), 'r': None}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            try:
                exec(expr, ns)
            except RuntimeError as err:
                return 'raised', str(err), t.tolist(), ns['e']._version
        r = ns['r']
        got = [x.tolist() if isinstance(x, M.Tensor) else x for x in r] if r else None
        return t.tolist(), got, [str(w.message).split(' (Triggered')[0] for w in caught], ns['e']._version
    assert run(lg) == run(torch)


def test_only_the_first_hook_registration_reads_a_views_history_even_when_it_raises():
    """Seed 15021733: PyTorch's register_hook makes its hooks dict before it reads grad_fn, at the
    first registration only: a view made under no_grad whose base changed in place refuses the
    first registration (its history is ambiguous) and takes the second; backward still refuses."""
    def run(M):
        v0 = M.tensor([[1.5], [1.5], [-0.1]], requires_grad=True)
        with M.set_grad_enabled(False):
            v1 = v0.reshape(-1)
        v1.detach().sub_(v1)
        out = []
        for step in (lambda: v1.register_hook(lambda g: g), lambda: v1.register_hook(lambda g: -g),
                     lambda: v1.sum().backward()):
            try:
                step()
                out.append('ok')
            except RuntimeError as err:
                out.append(str(err).split('.')[0])
        return out
    assert run(lg) == run(torch)


@pytest.mark.parametrize('read', ['', 'v2.requires_grad', 'v2.grad_fn', 'v2.is_leaf', 'v2.sum()', 'v2 * 2'])
def test_a_view_made_before_its_base_required_grad_is_a_leaf_until_its_history_is_read(read):
    """Seed 15028846: a view made while its base needed no grad, the base then given a history
    by an in-place op: PyTorch's in-place check asks is_leaf of the history as it stands (none
    yet: 'a leaf Variable that requires grad ...'), unless something read the view's grad_fn
    first (regenerated: AsStridedBackward0, the op taken)."""
    def run(M):
        v0 = M.tensor([[-1.4, -1.9], [-0.8, 1.4]], requires_grad=True)
        with M.set_grad_enabled(False):
            v1 = M.sqrt(v0)
        v2 = v1.permute(0, 1)
        v1.add_(v0)
        if read:
            eval(read)
        try:
            v2.add_(2.0)
        except RuntimeError as err:
            return str(err)
        return type(v2.grad_fn).__name__, str(v2.detach().tolist())
    assert run(lg) == run(torch)


def test_the_transpose_of_an_empty_slice_passes_its_gradient_on():
    """Seed 18026408: the gradient of a sum reaching t() of an empty slice is a broadcast array,
    whose NumPy base is no array; t()'s backward asked it for its dims (AttributeError)."""
    def program(T):
        x = T.tensor([[[1.1, 0.5], [2.0, 1.7], [1.2, 0.3]], [[1.0, -1.3], [-0.1, 1.3], [1.3, -1.8]]],
                     requires_grad=True)
        y = 0.5 + x[-2:2, -1, 1:0].t()
        T.autograd.backward([y.sum()])
        return {'grad': x.grad, 'shape': tuple(y.shape)}
    assert_same(program)


def test_a_view_whose_history_cannot_be_made_prints_an_invalid_grad_fn():
    """Seed 18024907: printing a view made under no_grad whose base then changed in place with
    grad mode on: PyTorch's repr catches the error reading grad_fn raises and prints
    grad_fn=<Invalid>; leafgrad's repr raised it. Reading grad_fn still raises in both."""
    def program(T):
        x = T.tensor([[0.1], [1.1], [1.5]], requires_grad=True)
        y = x.cos()
        with T.no_grad():
            v = y[2:, None]
        y[..., 1:, :].sqrt_()
        out = {'repr': repr(v).replace('leafgrad', 'torch'), 'str': str(v.contiguous())}
        try:
            v.grad_fn
        except RuntimeError as e:
            out['grad_fn'] = str(e)
        return out
    assert_same(program)


@pytest.mark.parametrize('order', ['modified * detached', 'detached * modified'])
def test_the_first_unusable_saved_tensor_is_named_in_pytorchs_unpack_order(order):
    """Seed 18018182: mul saved one operand that was then detached in place and another changed
    in place; PyTorch unpacks other before self and reports the first it finds unusable.
    leafgrad checked them in the order saved (self first)."""
    def program(T):
        a = T.tensor([1., 2., 3.], requires_grad=True)
        b = T.tensor(0.1, requires_grad=True)
        detached, modified = b.clone(), a * 1
        y = modified * detached if order == 'modified * detached' else detached * modified
        detached.detach_()
        with T.no_grad():
            modified[:0].sqrt_()
        y.sum().backward()
        return {'grad': a.grad}
    mine, theirs = _both(program)
    assert mine['error'][1].split('\n')[0] == theirs['error'][1]


@pytest.mark.parametrize('reduce', ['x.mean()', 'x.mean(0)', 'x.mean((0, 1))', 'x.mean(1, keepdim=True)'])
def test_means_gradient_under_create_graph_divides_by_a_number_as_pytorch(reduce):
    """Seed 20024186: mean's gradient, recorded under create_graph, is PyTorch's div by a Scalar
    (DivBackward1, the count saved as _saved_other, one edge); leafgrad recorded a DivBackward0.
    Its own gradient divides again (DivBackward1)."""
    def program(T):
        x = T.tensor([[1., 2., 5.], [3., 4., 7.]], requires_grad=True)
        w = T.tensor(2., requires_grad=True)
        g, = T.autograd.grad((eval(reduce) * w).sum(), [x], create_graph=True)
        h, = T.autograd.grad((g * g).sum(), [w], create_graph=True)
        gg, = T.autograd.grad(g.sum(), [x], create_graph=True, allow_unused=True)
        return {'g': g, 'name': type(g.grad_fn).__name__, 'other': g.grad_fn._saved_other,
                'edges': len(g.grad_fn.next_functions), 'h': h, 'gg': gg}
    assert_same(program)


@pytest.mark.parametrize('shape', [(1,), (1, 1)])
@pytest.mark.parametrize('index', ['None', '(slice(None), None)', '(None, None)', '(Ellipsis, None)',
                                   '(None, slice(0, 1, 2))'])
def test_writing_an_expanded_element_into_its_view_of_zero_strides_is_no_partial_overlap(shape, index):
    """Seed 22007581: the gradient of a sum over one element is PyTorch's 0-d gradient expanded
    (strides 0); a view of it at None has strides 0 too, the layout of the expanded value written
    into it, so PyTorch copies (full overlap) where leafgrad refused a partial overlap. A None
    put after the last dim has stride 1: refused in both."""
    def program(T):
        v0 = T.ones(shape, dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(v0.sum(), [v0])
        with T.no_grad():
            g[eval(index)] = g
        return {'g': g, 'stride': list(g.stride())}
    assert_same(program)
