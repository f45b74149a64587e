"""Bad arguments, as tools/bad_args_sweep.py gives them: each function below called with an int,
a str and a list of floats in place of each Tensor argument of a call both libraries take raises
PyTorch's exception, type and message (the parser's "argument 'input' (position 1) must be
Tensor, not int", or the error of PyTorch's Python where its function is Python), or returns
what PyTorch returns. None of them lets an internal error (AttributeError on ``_data``) out."""
import importlib.util
import pathlib
import warnings

import pytest

_spec = importlib.util.spec_from_file_location(
    'bad_args_sweep', pathlib.Path(__file__).resolve().parent.parent / 'tools' / 'bad_args_sweep.py')
sweep = importlib.util.module_from_spec(_spec)
with warnings.catch_warnings():  # (the sweep silences warnings when it runs as a script)
    _spec.loader.exec_module(sweep)

FUNCTIONS = {name: (f_lg, f_t) for name, f_lg, f_t in sweep.names()}

# the functions whose bad arguments match PyTorch's in every call the sweep makes (meshgrid not:
# the sweep calls it without indexing=, which PyTorch warns of once a process)
EXACT = [
    'absolute', 'add', 'addcdiv', 'addcmul', 'addmm', 'adjoint', 'all', 'any', 'arccos', 'arccos_',
    'arccosh', 'arccosh_', 'arcsin', 'arcsin_', 'arcsinh', 'arcsinh_', 'arctan', 'arctan_', 'arctanh',
    'arctanh_', 'argwhere', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'baddbmm', 'binomial',
    'block_diag', 'bmm', 'bucketize', 'cartesian_prod', 'celu', 'celu_', 'cholesky_inverse',
    'cholesky_solve', 'clamp_max', 'clamp_max_', 'clamp_min', 'clamp_min_', 'clone', 'combinations',
    'conj', 'conj_physical_', 'copysign', 'corrcoef', 'cov', 'det', 'div', 'divide', 'dot', 'dsplit',
    'einsum', 'fill', 'fill_', 'fix', 'fix_', 'flatten', 'fliplr', 'flipud', 'float_power',
    'floor_divide', 'fmod', 'gather', 'hardshrink', 'histogram', 'histogramdd', 'hsplit',
    'index_select', 'isfinite', 'isin', 'isinf', 'isnan', 'isreal', 'ldexp_', 'lerp', 'logdet', 'lu',
    'matrix_exp', 'mm', 'moveaxis', 'movedim', 'mul', 'multiply', 'mv', 'nanquantile', 'narrow',
    'negative', 'negative_', 'norm', 'orgqr', 'pdist', 'pinverse', 'positive', 'pow', 'quantile',
    'ravel', 'real', 'relu', 'remainder', 'repeat_interleave', 'resize_as_', 'resolve_conj', 'roll',
    'rsub', 'searchsorted', 'selu', 'selu_', 'split', 'split_copy', 'split_with_sizes',
    'split_with_sizes_copy', 'square', 'sub', 'subtract', 'swapaxes', 'swapdims', 't', 't_copy',
    'threshold', 'threshold_', 'tile', 'trace', 'trapz', 'triangular_solve', 'true_divide',
    'unsafe_split', 'unsafe_split_with_sizes', 'vander', 'vsplit', 'xlogy', 'xlogy_', 'zero_',
    'F.adaptive_avg_pool1d', 'F.adaptive_avg_pool2d', 'F.adaptive_avg_pool3d',
    'F.adaptive_max_pool1d', 'F.adaptive_max_pool1d_with_indices', 'F.adaptive_max_pool2d',
    'F.adaptive_max_pool2d_with_indices', 'F.adaptive_max_pool3d',
    'F.adaptive_max_pool3d_with_indices', 'F.avg_pool1d', 'F.avg_pool2d', 'F.batch_norm',
    'F.bilinear', 'F.binary_cross_entropy', 'F.binary_cross_entropy_with_logits', 'F.celu',
    'F.celu_', 'F.conv1d', 'F.conv2d', 'F.conv3d', 'F.conv_transpose1d', 'F.cosine_similarity',
    'F.cross_entropy', 'F.elu', 'F.elu_', 'F.embedding', 'F.gaussian_nll_loss', 'F.gelu',
    'F.gumbel_softmax', 'F.hardshrink', 'F.hardsigmoid', 'F.hardswish', 'F.hardtanh', 'F.hardtanh_',
    'F.hinge_embedding_loss', 'F.huber_loss', 'F.interpolate', 'F.kl_div', 'F.l1_loss',
    'F.layer_norm', 'F.leaky_relu', 'F.leaky_relu_', 'F.linear', 'F.local_response_norm',
    'F.log_softmax', 'F.logsigmoid', 'F.lp_pool1d', 'F.lp_pool2d', 'F.lp_pool3d',
    'F.margin_ranking_loss', 'F.max_pool1d', 'F.max_pool1d_with_indices', 'F.max_pool2d',
    'F.max_pool2d_with_indices', 'F.mish', 'F.mse_loss', 'F.multi_margin_loss',
    'F.multilabel_soft_margin_loss', 'F.nll_loss', 'F.pad', 'F.pairwise_distance', 'F.pdist',
    'F.prelu', 'F.relu6', 'F.relu_', 'F.rms_norm', 'F.rrelu', 'F.rrelu_',
    'F.scaled_dot_product_attention', 'F.selu', 'F.selu_', 'F.sigmoid', 'F.silu',
    'F.smooth_l1_loss', 'F.soft_margin_loss', 'F.softmax', 'F.softmin', 'F.softplus',
    'F.softshrink', 'F.softsign', 'F.tanh', 'F.tanhshrink', 'F.threshold', 'F.threshold_',
    'F.triplet_margin_loss', 'F.unfold', 'F.upsample', 'F.upsample_bilinear', 'F.upsample_nearest',
]


@pytest.mark.parametrize('name', EXACT)
def test_bad_arguments_raise_torchs_error(name):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        results = sweep.compare(*FUNCTIONS[name])
    assert results, f'{name}: no template both libraries take'
    differing = [(i, kind, torch_outcome, leafgrad_outcome)
                 for _, i, kind, torch_outcome, leafgrad_outcome in results if torch_outcome != leafgrad_outcome]
    assert not differing


def _assign(g, index_and_value):
    """``g[index] = value``, both made of ``g``; then g's values."""
    index, value = index_and_value(g)
    g[index] = value
    return g.tolist()


def _outcome(fn):
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).replace('leafgrad', 'torch')
    return 'returned', result if isinstance(result, list) else None


@pytest.mark.parametrize('call', [
    # PyTorch's Python checks the dimensions first, with the arguments' own .dim()
    lambda T, F: F.margin_ranking_loss(T.ones(3), T.ones(3), T.ones(1, 3)),
    lambda T, F: F.margin_ranking_loss(T.ones(3), 1, T.ones(3)),
    # a number for a tensor: only with 1-D boundaries
    lambda T, F: T.searchsorted(T.ones(2, 3), 1),
    lambda T, F: T.searchsorted(T.ones(()), 2.5),
    # the parser's listing names a sequence's elements
    lambda T, F: T.hsplit(1, [1]),
    lambda T, F: T.dsplit(1, (1, 1)),
    lambda T, F: T.fill([1.0, 2.0], 1),
    lambda T, F: T.clamp_min('a', T.ones(3)),
    lambda T, F: T.meshgrid(1, T.ones(2), indexing='ij'),
    lambda T, F: F.conv2d(T.ones(1, 1, 3, 3), 'a', stride=2),
    # as a method: positions counted after self
    lambda T, F: T.ones(3).index_select(0, [1]),
    lambda T, F: T.index_select(T.ones(3), 0, index=1),
    # an alias's errors name it
    lambda T, F: T.arccos(T.ones(3), 1),
    # no number first where PyTorch has no such overload (remainder has: two numbers it refuses)
    lambda T, F: T.remainder(1, 2),
    lambda T, F: T.remainder(2, T.ones(3)),
    lambda T, F: T.rsub(T.ones(3), 1, alpha='a'),
    lambda T, F: T.fmod(T.ones(3), 'a', out=T.ones(3)),
    lambda T, F: T.ones(3).fmod('a'),
    lambda T, F: T.ones(3).copysign([1.0]),
    lambda T, F: T.ones(3).remainder_([1.0]),
    lambda T, F: T.any(False),
    lambda T, F: T.all([1.0], 0),
    # gaussian_nll_loss is Python in PyTorch: its steps' errors, in its order
    lambda T, F: F.gaussian_nll_loss(1, T.ones(3), 0.5),
    lambda T, F: F.gaussian_nll_loss(T.ones(3), T.ones(3), T.ones(3), reduction='foo'),
    lambda T, F: F.gaussian_nll_loss(T.ones(3), T.ones(3), 1, reduction='foo'),
    lambda T, F: F.gaussian_nll_loss(T.ones(4, 3, 5), T.ones(4, 3, 5), T.ones(4, 1, 5)),
    lambda T, F: F.gaussian_nll_loss(T.ones(4, 3, 5), T.ones(4, 3, 5), T.ones(4, 1, 1)),
    lambda T, F: F.triplet_margin_loss(T.ones(3), T.ones(3), 'a', margin=2.0),
    lambda T, F: F.hinge_embedding_loss(1, T.ones(3)),
    # PyTorch's Python reads an attribute of its arguments first: its AttributeError, in its order
    lambda T, F: F.softmax(1, 0),
    lambda T, F: F.softmin('a', 0),
    lambda T, F: F.softmin(1, 0),
    lambda T, F: F.log_softmax([1.0], 0, dtype=T.float64),
    lambda T, F: F.mse_loss(1, 'a'),
    lambda T, F: F.mse_loss(T.ones(3), 1, weight=T.ones(3)),
    lambda T, F: F.smooth_l1_loss(T.ones(3), 1, beta=0.0),
    lambda T, F: F.binary_cross_entropy(T.ones(3) / 2, 1),
    lambda T, F: F.interpolate(1, size=2),
    lambda T, F: T.norm('a', p='nuc'),
    # an operand that is no tensor nor number: the parser's error, as the function or the method
    # words it (positions after self), for the name called (an alias lists its overloads)
    lambda T, F: T.ones(3).add('a', alpha=2),
    lambda T, F: T.ones(3).sub([1.0]),
    lambda T, F: T.ones(3).subtract('a'),
    lambda T, F: T.ones(3).multiply('a'),
    lambda T, F: T.ones(3).divide('a'),
    lambda T, F: T.ones(3).true_divide([1.0]),
    lambda T, F: T.ones(3).floor_divide('a'),
    lambda T, F: T.ones(3).pow('a'),
    lambda T, F: T.ones(3).xlogy('a'),
    lambda T, F: T.ones(3).addcmul('a', T.ones(3)),
    lambda T, F: T.ones(3).addcdiv('a', T.ones(3)),
    lambda T, F: T.add(T.ones(3), 'a', out=T.ones(3)),
    lambda T, F: T.divide(T.ones(3), 'a', rounding_mode='floor'),
    lambda T, F: T.div('a', T.ones(3)),
    lambda T, F: T.pow(1, 'a'),
    lambda T, F: T.xlogy('a', 'b'),
    lambda T, F: T.ones(3).add(1, alpha='a'),
    lambda T, F: T.ones(3) / 'a',
    # PyTorch's names of the parameters: its keywords too
    lambda T, F: T.dot(T.ones(3), tensor=T.ones(3)),
    lambda T, F: T.dot(T.ones(3), tensor='a'),
    lambda T, F: T.cholesky_solve(T.eye(2), input2=T.eye(2)),
    lambda T, F: T.cholesky_inverse(input=1),
    lambda T, F: T.orgqr(T.eye(2), input2=[1.0]),
    # an alias's errors name it; F.relu(inplace=True) is relu_
    lambda T, F: T.swapdims('a', 0, 1),
    lambda T, F: F.relu(1, inplace=True),
    lambda T, F: T.square_('a'),
    # the listing of the overloads where the input is no tensor (an alias's names it); a typed
    # parameter of the wrong type lists them too
    lambda T, F: T.moveaxis('a', 0, 1),
    lambda T, F: T.ones(3).movedim('a', 1),
    lambda T, F: T.quantile(T.ones(3), 0.5, keepdim='a'),
    lambda T, F: T.nanquantile('a', 0.5, 0),
    lambda T, F: T.clamp_min(T.ones(3), 'a', out=T.ones(3)),
    lambda T, F: T.repeat_interleave(T.tensor([1, 2])),
    # a method counts positions after self, its function from input
    lambda T, F: T.ones(3, 3).mm(1),
    lambda T, F: T.ones(2, 2).mm('a'),
    lambda T, F: T.mm(1, T.ones(3, 3)),
    lambda T, F: T.ones(2, 2).addmm(1, T.ones(2, 2)),
    # an advanced index's value that shares the memory written is refused before its shape is
    # checked (index_put_'s order), unless one of them is not dense or a mask fills one element
    lambda T, F: _assign(T.arange(9.0).reshape(3, 3), lambda g: ([0, 1], g)),
    lambda T, F: _assign(T.arange(9.0).reshape(3, 3), lambda g: ([0, 1], g.t())),
    lambda T, F: _assign(T.arange(9.0).reshape(3, 3), lambda g: (g > 0, g[:2])),
    lambda T, F: _assign(T.arange(9.0).reshape(3, 3), lambda g: ((slice(None), [0, 2]), g[0, None])),
    lambda T, F: _assign(T.arange(9.0).reshape(3, 3), lambda g: ([0, 1], g[:, 0])) and None,  # (values: memory order)
    lambda T, F: _assign(T.arange(9.0).reshape(3, 3), lambda g: ((0, None), g)),
    # einsum's operands are one list of tensors to PyTorch's parser
    lambda T, F: T.einsum('a', (1, 1)),
    lambda T, F: T.einsum('i,i', T.ones(3), 'a'),
    lambda T, F: T.einsum('i', [1.0]),
    # addcmul/addcdiv's value: a Number (a 0-dim tensor reads as its number)
    lambda T, F: T.addcmul(T.ones(3), T.ones(3), T.ones(3), value='a'),
    lambda T, F: T.ones(3).addcmul(T.ones(3), T.ones(3), value=None),
    lambda T, F: T.addcdiv(T.ones(3), T.ones(3), T.ones(3), value=[1]),
    lambda T, F: T.addcmul(T.ones(3), T.ones(3), T.ones(3), value=T.tensor(2.)).tolist(),
    lambda T, F: T.ones(3).addcdiv_(T.ones(3), T.ones(3), value=T.tensor(3)).tolist(),
    lambda T, F: T.addcmul(T.ones(3), T.ones(3), T.ones(3), value=T.tensor([2.])),
    # an in-place variant's errors name it, with its own signatures (no number for self), and its
    # function form counts positions from input
    lambda T, F: T.ones(3).clamp_min_('a'),
    lambda T, F: T.ones(3).clamp_max_([1.0]),
    lambda T, F: T.ones(3).clamp_min('a'),
    lambda T, F: T.clamp_max_(1, T.ones(3)),
    lambda T, F: T.ones(3).xlogy_('a'),
    lambda T, F: T.xlogy_(T.ones(3), [1.0]),
    lambda T, F: T.xlogy_(2, T.ones(3)),
    lambda T, F: T.ldexp_(T.ones(3), 1),
    lambda T, F: T.ones(3).pow_('a'),
    lambda T, F: T.ones(3).floor_divide_([1.0]),
    lambda T, F: T.ones(3).multiply_('a'),
    lambda T, F: T.ones(3).subtract_([1.0]),
    lambda T, F: T.ones(3).divide_('a'),
    lambda T, F: T.ones(3).true_divide_('a'),
    lambda T, F: T.ones(3).addcmul_('a', T.ones(3)),
    lambda T, F: T.ones(3).addcdiv_(T.ones(3), [1.0]),
    lambda T, F: T.ones(3).float_power_('a'),
    lambda T, F: T.ones(3).float_power('a'),
    # float_power_ computes in float64 (complex128): self must be of that dtype already
    lambda T, F: T.ones(3).float_power_(2),
    lambda T, F: T.ones(3).float_power_(T.ones(3, dtype=T.float64)),
    lambda T, F: T.ones(3, dtype=T.float64).float_power_(2j),
    lambda T, F: T.ones(3, dtype=T.complex64).float_power_(2),
    lambda T, F: T.ones(3, dtype=T.int64).float_power_(2),
    lambda T, F: T.ones(3, dtype=T.float64).float_power_(T.ones(3, dtype=T.complex128)),
    lambda T, F: T.ones(3, dtype=T.float64).float_power_(1.5).tolist(),
    lambda T, F: T.float_power(T.ones(3), 2, out=T.ones(3, dtype=T.complex128)),
    lambda T, F: T.float_power(T.ones(3), 2j, out=T.ones(3, dtype=T.float64)),
    # gather's arguments refused in the parser's order, each with its position
    lambda T, F: T.gather(T.ones(3), 0, 1),
    lambda T, F: T.ones(3).gather(0, [1]),
    lambda T, F: T.gather(1, 0, 'a'),
    lambda T, F: T.gather(T.ones(3), 'a', 1),
    lambda T, F: T.ones(3).gather(0.5, 'a'),
    lambda T, F: T.gather(T.ones(3), 0, T.tensor([0]), sparse_grad='a'),
    # block_diag(*tensors): one list is its element 0, no list of tensors; none gives 1 x 0
    lambda T, F: T.block_diag([1.0, 2.0]),
    lambda T, F: T.block_diag([T.ones(2), T.ones(2)]),
    lambda T, F: T.block_diag((T.ones(2),)),
    lambda T, F: T.block_diag(T.ones(2), None),
    lambda T, F: list(T.block_diag().shape),
    # the method's keywords and positions are PyTorch's
    lambda T, F: T.ones(3).dot(tensor='a'),
    lambda T, F: T.ones(3).dot([1.0]),
    lambda T, F: T.ones(3).div('a', rounding_mode='floor'),
    lambda T, F: T.ones(3).divide([1.0], rounding_mode='trunc'),
    lambda T, F: T.ones(3).div('a', rounding_mode='x'),
    # the linear-algebra methods refuse a tensor argument that is no tensor, and typed ones, as
    # PyTorch's parser (an AttributeError on _data, a NumPy error or a value leaked)
    lambda T, F: T.ones(2, 2).cholesky_solve(1),
    lambda T, F: T.ones(2, 2).orgqr('a'),
    lambda T, F: T.ones(2, 2).triangular_solve([1.0]),
    lambda T, F: T.ones(2, 2).triangular_solve(T.ones(2, 2), upper=1),
    lambda T, F: T.triangular_solve(T.ones(2, 2), T.ones(2, 2), 'a'),
    lambda T, F: T.ones(2, 2).addbmm(T.ones(1, 2, 2), 'a'),
    lambda T, F: T.ones(2).addmv(T.ones(2, 2), 1),
    lambda T, F: T.ones(2).addmv_(T.ones(2, 2), 'a'),
    lambda T, F: T.ones(2, 2).lu_solve(T.ones(2, 2), 1),
    lambda T, F: T.ones(2, 2).cholesky(1),
    lambda T, F: T.ones(2, 2).cholesky_inverse('a'),
    lambda T, F: T.ones(2, 2).cholesky_solve(T.ones(2, 2), upper=T.ones(())),
    lambda T, F: T.ones(2, 2).pinverse('a'),
    lambda T, F: T.pinverse(T.ones(2, 2), T.ones(2, 2)),
    # histogramdd binds its overloads first: a keyword of the wrong type is refused too
    lambda T, F: T.histogramdd(T.ones(4, 2), 2, density=1),
    lambda T, F: T.histogramdd(T.ones(4, 2), 2, weight=1),
    lambda T, F: T.histogramdd(T.ones(4, 2), 2, range='a'),
])
def test_bad_arguments_as_torch(call):
    import torch
    import torch.nn.functional as tF
    import leafgrad as lg
    import leafgrad.nn.functional as lF
    assert _outcome(lambda: call(lg, lF)) == _outcome(lambda: call(torch, tF))


def _fill_refusals(T):
    """fill_, fill and nn.init.constant_ given what is no number: PyTorch's listing, whose detail
    names a list's or tuple's elements ('list of [int, float]', 'tuple of (int,)')."""
    import leafgrad as lg
    x, said = T.ones(2), []
    for f in (lambda: x.fill_([1]), lambda: x.fill_([1, 2.0, 'a', 1]), lambda: x.fill_((1,)), lambda: x.fill_(((1,),)),
              lambda: x.fill_([]), lambda: x.fill_([T.ones(1)]), lambda: x.fill_([None]), lambda: T.fill(x, 'a'),
              lambda: T.fill(x, (1, 2)), lambda: T.nn.init.constant_(T.empty(2), 'a'), lambda: x.fill_('a'),
              lambda: T.nn.init.constant_(T.empty(2), 2.5).tolist(), lambda: T.nn.init.ones_(T.zeros(2, dtype=T.int64)).tolist()):
        try:
            said.append(f())
        except Exception as e:
            said.append((type(e).__name__, str(e).replace(lg.__name__, 'torch')))
    return said


def test_fill_values_that_are_no_numbers_as_pytorch():
    """(fill's listing had been the method's, a list's or tuple's elements had not been named,
    and nn.init.constant_ had let Python's ValueError out for a string.)"""
    import leafgrad as lg
    torch = pytest.importorskip('torch')
    assert _fill_refusals(lg) == _fill_refusals(torch)


def _complex_numbers_written(T):
    """fill_, full and item assignment of a complex number into every dtype: a real dtype takes
    one without an imaginary part (its real part), refuses another with c10's overflow error,
    bool takes any as True; complex dtypes take it."""
    said = []
    for d in (T.bool, T.uint8, T.int64, T.float16, T.bfloat16, T.float32, T.float64, T.complex64):
        for v in (1j, 2 + 0j, 1.5 + 2j):
            for write in (lambda: T.ones(2, dtype=d).fill_(v), lambda: T.full((2,), v, dtype=d),
                          lambda: T.ones(2, dtype=d).__setitem__(0, v)):
                try:
                    r = write()
                    said.append(r.tolist() if r is not None else 'set')
                except Exception as e:
                    said.append((type(e).__name__, str(e)))
    return said


def test_complex_numbers_written_into_every_dtype_as_pytorch():
    """(fill_ had refused a complex number, even into a complex tensor; full and item assignment
    had refused one with no imaginary part.)"""
    import leafgrad as lg
    torch = pytest.importorskip('torch')
    assert _complex_numbers_written(lg) == _complex_numbers_written(torch)


def _bitwise_of_complex(T):
    a, said = T.ones(2, dtype=T.complex64), []
    for f in (lambda: a & 2, lambda: a.__iand__(2), lambda: a.__ior__(True), lambda: a.__ixor__(a), lambda: a | a,
              lambda: a.bitwise_not_(), lambda: a.bitwise_and_(a), lambda: ~a, lambda: T.bitwise_xor(a, 1)):
        try:
            said.append(f().tolist())
        except Exception as e:
            said.append((type(e).__name__, str(e)))
    return said


def test_bitwise_ops_of_complex_tensors_refused_as_pytorch():
    """(NumPy's TypeError for the ufunc had come through.)"""
    import leafgrad as lg
    torch = pytest.importorskip('torch')
    assert _bitwise_of_complex(lg) == _bitwise_of_complex(torch)
