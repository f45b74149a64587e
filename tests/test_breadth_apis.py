"""PyTorch APIs that programs call, compared with torch: bitwise shifts (the function, method,
in-place variant and operators), and the binary bitwise ops' argument and dtype errors."""
import pytest

from both import same


def _i(M, values, dtype='int32'):
    return M.tensor(values, dtype=getattr(M, dtype))


def _x(M):
    return _i(M, [1, -2, 3, 100])


def _inplace(fn):
    def program(M):
        x = _x(M)
        result = fn(M, x)
        return x, result is x
    return program


def _augmented(left, value):
    def program(M):
        x = _x(M)
        v = value(M) if callable(value) else value
        if left:
            x <<= v
        else:
            x >>= v
        return x
    return program


SHIFTS = {
    'lshift_number': lambda M: _x(M) << 2,
    'rshift_number': lambda M: _x(M) >> 1,
    'lshift_tensor_promotes': lambda M: M.bitwise_left_shift(_x(M), M.tensor([0, 1, 31, 32])),
    'lshift_outside_width': lambda M: M.bitwise_left_shift(_x(M), M.tensor([33, -1, 40, 64])),
    'rshift_outside_width': lambda M: M.bitwise_right_shift(_x(M), M.tensor([33, -1, 40, 64])),
    'rshift_int64_outside': lambda M: M.bitwise_right_shift(M.tensor([-8, 8]), M.tensor([70, -3])),
    'lshift_int64_top_bit': lambda M: M.bitwise_left_shift(M.tensor([-8, 8, -1, 3]), M.tensor([63, 64, 63, 62])),
    'uint8_lshift_wraps': lambda M: _i(M, [200, 3], 'uint8') << 1,
    'uint8_rshift_width': lambda M: _i(M, [200, 3], 'uint8') >> 9,
    'uint8_lshift_negative': lambda M: _i(M, [200, 3], 'uint8') << -1,
    'uint8_rshift_negative': lambda M: _i(M, [200, 3], 'uint8') >> -1,
    'uint8_int8_promotes': lambda M: _i(M, [200, 3], 'uint8') << M.tensor([1, 2], dtype=M.int8),
    'uint8_zero_dim_keeps': lambda M: _i(M, [200, 3], 'uint8') << M.tensor(3),
    'int8_number_wraps_first': lambda M: _i(M, [1, 2], 'int8') << 300,
    'int8_257': lambda M: _i(M, [1], 'int8') << 257,
    'int8_rshift_minus_255': lambda M: _i(M, [64], 'int8') >> -255,
    'int8_rshift_sign': lambda M: _i(M, [-1, 5], 'int8') >> 100,
    'int8_lshift_into_sign': lambda M: _i(M, [-1], 'int8') << 7,
    'int16_rshift_negative': lambda M: _i(M, [5, -5], 'int16') >> -2,
    'reflected_lshift': lambda M: 1 << _x(M),
    'reflected_rshift': lambda M: 1 >> _x(M),
    'reflected_int8': lambda M: 300 << _i(M, [1], 'int8'),
    'reflected_float': lambda M: 2.0 << _i(M, [1]),
    'float_number': lambda M: _i(M, [1]) << 2.0,
    'float_tensor': lambda M: M.ones(2) << 2,
    'float_rshift_function': lambda M: M.bitwise_right_shift(M.ones(2), 2),
    'int_float_tensor': lambda M: M.tensor([1]) << M.tensor([1.5]),
    'bool_number': lambda M: M.tensor([True, False]) << 1,
    'bool_bool': lambda M: M.tensor([True, False]) << M.tensor([True, True]),
    'bool_number_operand': lambda M: _i(M, [1]) << True,
    'function_number_first': lambda M: M.bitwise_left_shift(2, _i(M, [1, 2])),
    'function_two_numbers': lambda M: M.bitwise_left_shift(2, 3),
    'function_string': lambda M: M.bitwise_left_shift(_i(M, [1]), 'a'),
    'function_one_argument': lambda M: M.bitwise_left_shift(_i(M, [1])),
    'function_three_arguments': lambda M: M.bitwise_left_shift(_i(M, [1]), 1, 2),
    'function_keywords': lambda M: M.bitwise_right_shift(input=M.tensor([4]), other=1),
    'method': lambda M: _i(M, [1, 2]).bitwise_right_shift(1),
    'method_none': lambda M: _i(M, [1]).bitwise_left_shift(None),
    'method_out': lambda M: _i(M, [1]).bitwise_left_shift(_i(M, [1]), out=None),
    'inplace_none': lambda M: _i(M, [1]).bitwise_left_shift_(None),
    'operator_string': lambda M: _i(M, [1]).__lshift__('x'),
    'operator_list': lambda M: _i(M, [1]).__rshift__([1]),
    'reflected_string': lambda M: _i(M, [1]).__rlshift__('a'),
    'broadcast_error': lambda M: M.tensor([1, 2, 3]) >> M.tensor([1, 2]),
    'zero_dim': lambda M: M.bitwise_left_shift(M.tensor(2), M.tensor(3)),
    'empty': lambda M: M.bitwise_left_shift(M.zeros(0, 3, dtype=M.int64), M.tensor([1, 2, 3])),
    'requires_grad_float': lambda M: M.ones(2, requires_grad=True) << 1,
    'inplace_number': _inplace(lambda M, x: x.bitwise_left_shift_(1)),
    'inplace_tensor': _inplace(lambda M, x: x.bitwise_right_shift_(M.tensor([1, 1, 1, 1]))),
    'inplace_float_number': _inplace(lambda M, x: x.bitwise_left_shift_(2.5)),
    'inplace_float_zero_dim': _inplace(lambda M, x: x.bitwise_left_shift_(M.tensor(1.))),
    'inplace_broadcast': _inplace(lambda M, x: x.bitwise_left_shift_(M.tensor([[1], [1]]))),
    'inplace_float_self': lambda M: M.ones(2).bitwise_left_shift_(2),
    'inplace_bool_self': lambda M: M.tensor([True]).bitwise_left_shift_(2),
    'inplace_leaf': lambda M: M.ones(2, requires_grad=True).bitwise_left_shift_(2),
    'augmented_lshift': _augmented(True, 1),
    'augmented_rshift': _augmented(False, lambda M: M.tensor([1, 2, 3, 4])),
    'augmented_uint8': _augmented(True, lambda M: M.tensor([1], dtype=M.uint8)),
    'augmented_float': _augmented(True, 1.5),
    'augmented_none': lambda M: _i(M, [1]).__ilshift__(None),
    'augmented_string': lambda M: _i(M, [1]).__irshift__('a'),
    'out_wider': lambda M: M.bitwise_left_shift(_i(M, [1, 2]), 1, out=M.empty(2, dtype=M.int64)),
    'out_float': lambda M: M.bitwise_left_shift(_i(M, [1, 2]), 1, out=M.empty(2)),
    'out_bool': lambda M: M.bitwise_left_shift(_i(M, [1, 2]), 1, out=M.empty(2, dtype=M.bool)),
    'out_float_input_int_out': lambda M: M.bitwise_left_shift(M.ones(2), 1, out=M.empty(2, dtype=M.int64)),
    'out_float_input': lambda M: M.bitwise_left_shift(M.ones(2), 1, out=M.empty(2)),
    'out_requires_grad': lambda M: M.bitwise_right_shift(_i(M, [1, 2]), 1, out=M.empty(2, requires_grad=True)),
    'out_resized': lambda M: M.bitwise_right_shift(_i(M, [1, 2]), 1, out=M.empty(3, dtype=M.int64)),
    'out_resized_other_dtype': lambda M: M.bitwise_right_shift(_i(M, [1, 2]), 1, out=M.empty(3, dtype=M.int16)),
    'out_not_tensor': lambda M: M.bitwise_right_shift(_i(M, [1, 2]), 1, out=3),
}


@pytest.mark.parametrize('name', SHIFTS)
def test_shift(name):
    same(SHIFTS[name])


BITWISE = {}
for _op, _dunder in (('bitwise_and', '__iand__'), ('bitwise_or', '__ior__'), ('bitwise_xor', '__ixor__')):
    BITWISE.update({
        f'{_op}_string': lambda M, op=_op: getattr(M, op)(M.tensor([1, 2]), 'a'),
        f'{_op}_one_argument': lambda M, op=_op: getattr(M, op)(M.tensor([1, 2])),
        f'{_op}_two_numbers': lambda M, op=_op: getattr(M, op)(2, 3),
        f'{_op}_method_none': lambda M, op=_op: getattr(M.tensor([1, 2]), op)(None),
        f'{_op}_inplace_float': lambda M, op=_op: getattr(M.tensor([1, 2]), op + '_')(1.0),
        f'{_op}_inplace_none': lambda M, op=_op: getattr(M.tensor([1, 2]), op + '_')(None),
        f'{_op}_augmented_float': lambda M, d=_dunder: getattr(M.tensor([1, 2]), d)(1.5),
        f'{_op}_augmented_none': lambda M, d=_dunder: getattr(M.tensor([1, 2]), d)(None),
        f'{_op}_out_float_input': lambda M, op=_op: getattr(M, op)(M.ones(2), 1, out=M.empty(2, dtype=M.long)),
    })


@pytest.mark.parametrize('name', BITWISE)
def test_bitwise_arguments(name):
    same(BITWISE[name])


def _after_grad(name, other):
    """self.<name>(other) on a tensor with history: its node's name, the inputs it leads to,
    and the gradients that flow back through it."""
    def program(M):
        a = M.tensor([1., 2., 3.], requires_grad=True)
        b = M.tensor([2., 2., 2.], requires_grad=True)
        y = a * 2
        z = getattr(y, name)(other(M, b) if callable(other) else other)
        grads = M.autograd.grad(z.sum(), [a, b] if callable(other) else [a], allow_unused=True)
        return (z, z.requires_grad, type(z.grad_fn).__name__, len(z.grad_fn.next_functions), y._version,
                list(grads))
    return program


COMPARISONS_INPLACE = {}
for _name in ('eq_', 'ne_', 'lt_', 'le_', 'gt_', 'ge_', 'greater_', 'greater_equal_', 'less_', 'less_equal_',
              'not_equal_'):
    COMPARISONS_INPLACE.update({
        f'{_name}_float': lambda M, n=_name: getattr(M.tensor([1., 2., 3.]), n)(2),
        f'{_name}_int_tensor': lambda M, n=_name: getattr(M.tensor([1, 2, 3]), n)(M.tensor([2, 2, 2])),
        f'{_name}_int_float_number': lambda M, n=_name: getattr(M.tensor([1, 2, 3]), n)(2.5),
        f'{_name}_bool': lambda M, n=_name: getattr(M.tensor([True, False]), n)(0.5),
        f'{_name}_uint8_broadcast': lambda M, n=_name: getattr(M.tensor([1, 2, 3], dtype=M.uint8), n)(M.tensor(2)),
        f'{_name}_broadcast_error': lambda M, n=_name: getattr(M.tensor([1, 2, 3]), n)(M.tensor([[1], [2]])),
        f'{_name}_none': lambda M, n=_name: getattr(M.tensor([1, 2, 3]), n)(None),
        f'{_name}_string': lambda M, n=_name: getattr(M.tensor([1, 2, 3]), n)('a'),
        f'{_name}_no_argument': lambda M, n=_name: getattr(M.tensor([1, 2, 3]), n)(),
        f'{_name}_leaf': lambda M, n=_name: getattr(M.ones(2, requires_grad=True), n)(1),
        f'{_name}_number_grad': _after_grad(_name, 4),
        f'{_name}_tensor_grad': _after_grad(_name, lambda M, b: b),
        f'{_name}_tensor_broadcast_grad': _after_grad(_name, lambda M, b: b[:1]),
        f'{_name}_returns_self': lambda M, n=_name: (lambda x: getattr(x, n)(1) is x)(M.ones(2)),
        f'{_name}_view': lambda M, n=_name: (lambda b: (getattr(b[1:], n)(2), b)[1])(M.ones(3)),
        f'{_name}_expanded': lambda M, n=_name: getattr(M.ones(2).expand(3, 2), n)(2),
    })


@pytest.mark.parametrize('name', COMPARISONS_INPLACE)
def test_comparison_inplace(name):
    same(COMPARISONS_INPLACE[name])


def test_comparison_inplace_under_no_grad():
    def program(M):
        a = M.ones(2, requires_grad=True)
        with M.no_grad():
            a.lt_(3)
        return a, a.requires_grad, a.grad_fn is None
    same(program)


COMPARISON_ARGUMENTS = {
    'eq_string': lambda M: M.eq(M.tensor([1, 2]), 'a'),
    'lt_method_none': lambda M: M.tensor([1, 2]).lt(None),
    'less_method_none': lambda M: M.tensor([1, 2]).less(None),
    'lt_two_numbers': lambda M: M.lt(1, 2),
    'gt_one_argument': lambda M: M.gt(M.tensor([1])),
}


@pytest.mark.parametrize('name', COMPARISON_ARGUMENTS)
def test_comparison_arguments(name):
    same(COMPARISON_ARGUMENTS[name])


def _inference(M):
    with M.inference_mode():
        return M.ones(2)


def _detached(M):
    a = M.ones(2, requires_grad=True)
    y = M.detach(a * 2)
    return y, y.requires_grad, y.is_leaf, y.grad_fn is None


def _strided(M, *args, **kwargs):
    t = M.ones(2, 3).new_empty_strided(*args, **kwargs)
    return tuple(t.shape), t.stride(), t.dtype, t.requires_grad, t.is_contiguous()


SMALL = {
    'reversed_1d': lambda M: reversed(M.tensor([1, 2, 3])),
    'reversed_2d': lambda M: reversed(M.tensor([[1, 2], [3, 4]])),
    'reversed_0d': lambda M: reversed(M.tensor(5)),
    'reversed_grad': lambda M: (lambda r: (r, type(r.grad_fn).__name__))(reversed(M.ones(3, requires_grad=True) * 2)),
    'is_nonzero_method': lambda M: (M.tensor([1.]).is_nonzero(), M.tensor([0.]).is_nonzero(),
                                    M.tensor([[0]]).is_nonzero()),
    'is_nonzero_method_empty': lambda M: M.tensor([]).is_nonzero(),
    'is_nonzero_method_many': lambda M: M.ones(2).is_nonzero(),
    'is_same_size': lambda M: (M.is_same_size(M.ones(2), M.ones(2)), M.ones(2).is_same_size(M.ones(3)),
                               M.is_same_size(M.ones(2, 1), M.ones(2))),
    'is_same_size_number': lambda M: M.is_same_size(M.ones(2), 2),
    'is_same_size_method_number': lambda M: M.ones(2).is_same_size(2),
    'is_same_size_method_missing': lambda M: M.ones(2).is_same_size(),
    'is_signed': lambda M: [M.is_signed(M.ones(2, dtype=d)) for d in (M.float32, M.uint8, M.bool, M.int8, M.int64)],
    'is_signed_number': lambda M: M.is_signed(3),
    'is_inference': lambda M: (M.is_inference(M.ones(2)), M.is_inference(_inference(M))),
    'is_inference_number': lambda M: M.is_inference(3),
    'detach': _detached,
    'detach_number': lambda M: M.detach(3),
    'detach_two_arguments': lambda M: M.detach(M.ones(2), 1),
    'is_neg': lambda M: (M.is_neg(M.ones(2)), M.ones(2).is_neg()),
    'resolve_neg': lambda M: (lambda x: (M.resolve_neg(x) is x, x.resolve_neg() is x))(M.ones(2)),
    'is_neg_number': lambda M: M.is_neg(3),
    'resolve_neg_number': lambda M: M.resolve_neg(3),
    'scalar_tensor': lambda M: [M.scalar_tensor(3), M.scalar_tensor(3, dtype=M.int64), M.scalar_tensor(True),
                                M.scalar_tensor(2, dtype=M.bool), M.scalar_tensor(2.5, dtype=M.int32),
                                M.scalar_tensor(M.tensor(2)), M.scalar_tensor(s=2), M.scalar_tensor(2, device='cpu')],
    'scalar_tensor_requires_grad': lambda M: M.scalar_tensor(2.5, requires_grad=True).requires_grad,
    'scalar_tensor_int_requires_grad': lambda M: M.scalar_tensor(2, requires_grad=True, dtype=M.int64),
    'scalar_tensor_string': lambda M: M.scalar_tensor('a'),
    'scalar_tensor_list': lambda M: M.scalar_tensor([1]),
    'scalar_tensor_1d': lambda M: M.scalar_tensor(M.tensor([2.])),
    'scalar_tensor_two_positional': lambda M: M.scalar_tensor(2, M.int64),
    'new_empty_strided': lambda M: _strided(M, (2, 2), (2, 1)),
    'new_empty_strided_columns': lambda M: _strided(M, [2, 3], [1, 2]),
    'new_empty_strided_options': lambda M: _strided(M, (2, 2), (2, 1), dtype=M.int64, device='cpu'),
    'new_empty_strided_zero_strides': lambda M: _strided(M, (2, 2), (0, 0)),
    'new_empty_strided_requires_grad': lambda M: _strided(M, (2, 2), (2, 1), requires_grad=True),
    'new_empty_strided_negative_size': lambda M: _strided(M, (2, -2), (2, 1)),
    'new_empty_strided_negative_stride': lambda M: _strided(M, (2, 2), (2, -1)),
    'new_empty_strided_dims': lambda M: _strided(M, (2, 2), (2,)),
    'new_empty_strided_int': lambda M: _strided(M, 2, 1),
    'new_empty_strided_missing': lambda M: _strided(M, (2, 2)),
}


@pytest.mark.parametrize('name', SMALL)
def test_small_apis(name):
    same(SMALL[name])


def _fill_diagonal(shape, *args, dtype='float32', **kwargs):
    def program(M):
        x = M.zeros(*shape, dtype=getattr(M, dtype))
        result = x.fill_diagonal_(*args, **kwargs)
        return x, result is x
    return program


def _fill_diagonal_grad(M):
    a = M.ones(3, 3, requires_grad=True)
    y = a * 2
    y.fill_diagonal_(0)
    y.sum().backward()
    return y, type(y.grad_fn).__name__, a.grad, y._version


def _fill_diagonal_strided(M):
    x = M.zeros(4, 8)[:, ::2]
    x.fill_diagonal_(1)
    y = M.zeros(4, 5).t()
    y.fill_diagonal_(2, wrap=True)
    return x, y


FILL_DIAGONAL = {
    'wide': _fill_diagonal((3, 4), 5),
    'tall': _fill_diagonal((7, 3), 5),
    'tall_wrap': _fill_diagonal((7, 3), 5, wrap=True),
    'tall_wrap_partial': _fill_diagonal((9, 3), 5, True),
    'tall_wrap_just_one_more': _fill_diagonal((4, 3), 5, wrap=True),
    'wide_wrap': _fill_diagonal((3, 7), 5, True),
    'cube': _fill_diagonal((3, 3, 3), 5),
    'four_dims': _fill_diagonal((2, 2, 2, 2), 5),
    'cube_wrap': _fill_diagonal((3, 3, 3), 5, wrap=True),
    'unequal_dims': _fill_diagonal((3, 3, 4), 5),
    'one_dim': _fill_diagonal((3,), 5),
    'int_truncates': _fill_diagonal((3, 3), 2.7, dtype='int64'),
    'bool': _fill_diagonal((3, 3), 2, dtype='bool'),
    'zero_dim_tensor': lambda M: M.zeros(3, 3).fill_diagonal_(M.tensor(2.)),
    'string': _fill_diagonal((3, 3), 'a'),
    'wrap_not_bool': _fill_diagonal((3, 3), 1, wrap='x'),
    'missing_value': _fill_diagonal((3, 3)),
    'leaf': lambda M: M.zeros(2, 2, requires_grad=True).fill_diagonal_(1),
    'grad': _fill_diagonal_grad,
    'strided': _fill_diagonal_strided,
    'empty': _fill_diagonal((0, 3), 1),
}


@pytest.mark.parametrize('name', FILL_DIAGONAL)
def test_fill_diagonal(name):
    same(FILL_DIAGONAL[name])


def _unique_consecutive_grad(dim):
    def program(M):
        a = M.tensor([1., 1., 2.], requires_grad=True)
        y = M.unique_consecutive(a, dim=dim)
        y.sum().backward()
    return program


_RUNS = [1, 1, 2, 2, 3, 1, 1, 2]
_ROWS = [[1, 1], [1, 1], [2, 3], [1, 1]]
UNIQUE_CONSECUTIVE = {
    'plain': lambda M: M.unique_consecutive(M.tensor(_RUNS)),
    'inverse': lambda M: M.unique_consecutive(M.tensor(_RUNS), return_inverse=True),
    'counts': lambda M: M.unique_consecutive(M.tensor(_RUNS), return_counts=True),
    'both_positional': lambda M: M.unique_consecutive(M.tensor(_RUNS), True, True),
    'method': lambda M: M.tensor(_RUNS).unique_consecutive(True, True),
    'method_dim': lambda M: M.tensor(_ROWS).unique_consecutive(return_counts=True, dim=0),
    'matrix_flattened': lambda M: M.unique_consecutive(M.tensor(_ROWS), return_inverse=True),
    'dim0': lambda M: M.unique_consecutive(M.tensor(_ROWS), return_inverse=True, return_counts=True, dim=0),
    'dim1': lambda M: M.unique_consecutive(M.tensor(_ROWS), return_inverse=True, return_counts=True, dim=1),
    'dim_negative': lambda M: M.unique_consecutive(M.tensor(_ROWS), dim=-1),
    'dim_transposed': lambda M: M.unique_consecutive(M.tensor(_ROWS).t(), True, True, dim=0),
    'dim_middle': lambda M: M.unique_consecutive(M.tensor([[[1, 2], [1, 2]], [[1, 2], [1, 2]]]), return_counts=True,
                                                 dim=1),
    'dim_out_of_range': lambda M: M.unique_consecutive(M.tensor(_ROWS), dim=2),
    'empty': lambda M: M.unique_consecutive(M.tensor([]), return_counts=True, return_inverse=True),
    'empty_rows': lambda M: M.unique_consecutive(M.zeros(0, 3), return_counts=True, return_inverse=True, dim=0),
    'empty_other_dim': lambda M: M.unique_consecutive(M.zeros(0, 3), return_counts=True, return_inverse=True, dim=1),
    'empty_selected': lambda M: M.unique_consecutive(M.ones(2, 0), return_counts=True, return_inverse=True, dim=1),
    'zero_dim': lambda M: M.unique_consecutive(M.tensor(5), return_counts=True, return_inverse=True),
    'zero_dim_dim': lambda M: M.unique_consecutive(M.tensor(5), return_counts=True, dim=0),
    'nan': lambda M: M.unique_consecutive(M.tensor([1., float('nan'), float('nan'), 2.]), return_counts=True),
    'bool': lambda M: M.unique_consecutive(M.tensor([True, True, False])),
    'requires_grad': lambda M: (lambda y: (y, type(y.grad_fn).__name__))(
        M.unique_consecutive(M.tensor([1., 1., 2.], requires_grad=True))),
    'counts_no_grad': lambda M: M.unique_consecutive(M.tensor([1., 1., 2.], requires_grad=True),
                                                     return_counts=True)[1].requires_grad,
    'backward': _unique_consecutive_grad(None),
    'backward_dim': _unique_consecutive_grad(0),
    'list': lambda M: M.unique_consecutive([1, 2]),
    'dim_float': lambda M: M.unique_consecutive(M.tensor(_RUNS), dim=1.5),
    'inverse_int': lambda M: M.unique_consecutive(M.tensor(_RUNS), return_inverse=1),
}


@pytest.mark.parametrize('name', UNIQUE_CONSECUTIVE)
def test_unique_consecutive(name):
    same(UNIQUE_CONSECUTIVE[name])


def _graded(call, *shapes, seed=0, node=True):
    """call(M, *tensors) on tensors requiring grad (made from fixed values): its result, its
    node's name (``node``) and the inputs' gradients."""
    import numpy as np
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(shape).astype('float32') for shape in shapes]

    def program(M):
        tensors = [M.tensor(v.tolist(), requires_grad=True) for v in values]
        out = call(M, *tensors)
        result = out[0] if isinstance(out, tuple) else out
        grads = M.autograd.grad(result.sum(), tensors, allow_unused=True)
        return out, type(result.grad_fn).__name__ if node else None, list(grads)
    return program


NN_FORMS = {
    'dropout_eval': _graded(lambda M, x: M.dropout(x, 0.5, False), (3, 4)),
    'dropout_p0': _graded(lambda M, x: M.dropout(x, 0.0, True), (3, 4)),
    'alpha_dropout_eval': _graded(lambda M, x: M.alpha_dropout(x, 0.5, False), (3, 4)),
    'feature_alpha_dropout_eval': _graded(lambda M, x: M.feature_alpha_dropout(x, 0.5, False), (2, 3, 4)),
    'embedding': _graded(lambda M, w: M.embedding(w, M.tensor([[0, 2], [1, 2]])), (4, 3)),
    'embedding_padding': _graded(lambda M, w: M.embedding(w, M.tensor([0, 2, 1, 2]), 2), (4, 3)),
    'embedding_scale_grad': _graded(lambda M, w: M.embedding(w, M.tensor([0, 2, 2]), -1, True), (4, 3)),
    'layer_norm': _graded(lambda M, x, w, b: M.layer_norm(x, (4,), w, b, 1e-5, True), (3, 4), (4,), (4,)),
    'layer_norm_plain': _graded(lambda M, x: M.layer_norm(x, [3, 4]), (2, 3, 4)),
    'batch_norm': _graded(lambda M, x, w, b: M.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
                          (4, 3, 2), (3,), (3,)),
    'batch_norm_running': _graded(lambda M, x: M.batch_norm(x, None, None, M.zeros(3), M.ones(3), False, 0.1, 1e-5,
                                                            False), (4, 3)),
    'group_norm': _graded(lambda M, x, w, b: M.group_norm(x, 2, w, b), (2, 4, 3), (4,), (4,)),
    'instance_norm': _graded(lambda M, x: M.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
                             (2, 3, 5)),
    'rms_norm': _graded(lambda M, x, w: M.rms_norm(x, (4,), w, 1e-6), (3, 4), (4,)),
    'conv1d': _graded(lambda M, x, w, b: M.conv1d(x, w, b, 1, 1), (2, 3, 6), (4, 3, 3), (4,)),
    'conv2d': _graded(lambda M, x, w: M.conv2d(x, w, None, 2, 'valid' if False else 0), (1, 2, 5, 5), (3, 2, 2, 2)),
    'conv3d': _graded(lambda M, x, w: M.conv3d(x, w), (1, 1, 3, 3, 3), (2, 1, 2, 2, 2)),
    'conv_transpose1d': _graded(lambda M, x, w: M.conv_transpose1d(x, w, None, 2, 1, 1), (1, 2, 4), (2, 3, 3)),
    'conv_transpose2d': _graded(lambda M, x, w: M.conv_transpose2d(x, w), (1, 2, 3, 3), (2, 1, 2, 2)),
    'conv_transpose3d': _graded(lambda M, x, w: M.conv_transpose3d(x, w), (1, 1, 2, 2, 2), (1, 1, 2, 2, 2)),
    'max_pool1d': _graded(lambda M, x: M.max_pool1d(x, 2), (1, 2, 6)),
    'max_pool2d': _graded(lambda M, x: M.max_pool2d(x, 2, 1, 1, 1, True), (1, 1, 4, 4)),
    'max_pool3d': _graded(lambda M, x: M.max_pool3d(x, 2), (1, 1, 4, 4, 4)),
    'avg_pool1d': _graded(lambda M, x: M.avg_pool1d(x, 3, 2, 1), (1, 2, 7)),
    'adaptive_avg_pool1d': _graded(lambda M, x: M.adaptive_avg_pool1d(x, 3), (1, 2, 7)),
    'adaptive_max_pool1d': _graded(lambda M, x: M.adaptive_max_pool1d(x, 3), (1, 2, 7)),
    'cosine_similarity': _graded(lambda M, a, b: M.cosine_similarity(a, b), (3, 4), (3, 4)),
    'pairwise_distance': lambda M: M.pairwise_distance(M.ones(3, 4), M.zeros(3, 4), 1.5, 1e-6, True),
    'pixel_shuffle': _graded(lambda M, x: M.pixel_shuffle(x, 2), (1, 8, 2, 2)),
    'pixel_unshuffle': _graded(lambda M, x: M.pixel_unshuffle(x, 2), (1, 2, 4, 4)),
    'prelu': _graded(lambda M, x, w: M.prelu(x, w), (2, 3, 4), (3,)),
    'bilinear': _graded(lambda M, a, b, w, c: M.bilinear(a, b, w, c), (2, 3), (2, 4), (5, 3, 4), (5,)),
    'channel_shuffle': lambda M: M.channel_shuffle(M.arange(16.).reshape(1, 4, 2, 2), 2),
    'constant_pad_nd': _graded(lambda M, x: M.constant_pad_nd(x, [1, 2], 3.5), (2, 3)),
    'constant_pad_nd_default': _graded(lambda M, x: M.constant_pad_nd(x, (1, 1, 0, 1)), (2, 3)),
    'kl_div': _graded(lambda M, x, t: M.kl_div(x, t.softmax(-1)), (3, 4), (3, 4)),
    'kl_div_mean': _graded(lambda M, x, t: M.kl_div(x, t.softmax(-1), 1), (3, 4), (3, 4)),
    'kl_div_sum_log_target': _graded(lambda M, x, t: M.kl_div(x, t, 2, log_target=True), (3, 4), (3, 4)),
    'kl_div_none': _graded(lambda M, x, t: M.kl_div(x, t.softmax(-1), 0), (3, 4), (3, 4)),
    'bce_with_logits': _graded(lambda M, x: M.binary_cross_entropy_with_logits(x, M.ones(3, 4) * 0.3), (3, 4)),
    'bce_with_logits_weight_mean': _graded(lambda M, x: M.binary_cross_entropy_with_logits(
        x, M.ones(3, 4) * 0.3, M.arange(4.), None, 1), (3, 4)),
    'bce_with_logits_pos_weight': _graded(lambda M, x: M.binary_cross_entropy_with_logits(
        x, M.ones(3, 4) * 0.3, None, M.arange(4.), 2), (3, 4)),
    'hinge_embedding_loss': _graded(lambda M, x: M.hinge_embedding_loss(x, M.tensor([1., -1., 1.]), 0.5), (3,)),
    'hinge_embedding_loss_mean': _graded(lambda M, x: M.hinge_embedding_loss(x, M.tensor([1., -1., 1.]), 0.5, 1),
                                         (3,)),
    # (nn.functional's margin losses record ReluBackward0 where PyTorch's record ClampMinBackward0)
    'margin_ranking_loss_default': _graded(lambda M, a, b: M.margin_ranking_loss(a, b, M.tensor([1., -1., 1.])),
                                           (3,), (3,), node=False),
    'cosine_embedding_loss_default': _graded(lambda M, a, b: M.cosine_embedding_loss(a, b, M.tensor([1., -1., 1.])),
                                             (3, 4), (3, 4)),
    'loss_reduction_string': lambda M: M.hinge_embedding_loss(M.ones(3), M.ones(3), 1.0, 'mean'),
    'margin_ranking_loss': _graded(lambda M, a, b: M.margin_ranking_loss(a, b, M.tensor([1., -1., 1.]), 0.1, 2),
                                   (3,), (3,)),
    'cosine_embedding_loss': _graded(lambda M, a, b: M.cosine_embedding_loss(a, b, M.tensor([1., -1., 1.]), 0.2, 0),
                                     (3, 4), (3, 4)),
    'triplet_margin_loss': _graded(lambda M, a, p, n: M.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, True),
                                   (3, 4), (3, 4), (3, 4), node=False),
    'poisson_nll_loss': _graded(lambda M, x: M.poisson_nll_loss(x, M.ones(3, 4) * 2, True, True, 1e-8, 1), (3, 4)),
    'poisson_nll_loss_not_log': _graded(lambda M, x: M.poisson_nll_loss(x.abs(), M.ones(3, 4), False, False, 1e-8, 2),
                                        (3, 4)),
}
NN_FORMS.update({  # ATen's single steps of the recurrent layers
    'rnn_tanh_cell': _graded(lambda M, x, h, w, u, b, c: M.rnn_tanh_cell(x, h, w, u, b, c),
                             (3, 4), (3, 5), (5, 4), (5, 5), (5,), (5,)),
    'rnn_tanh_cell_no_bias': _graded(lambda M, x, h, w, u: M.rnn_tanh_cell(x, h, w, u), (3, 4), (3, 5), (5, 4), (5, 5)),
    'rnn_relu_cell': _graded(lambda M, x, h, w, u, b: M.rnn_relu_cell(x, h, w, u, b), (3, 4), (3, 5), (5, 4), (5, 5),
                             (5,)),
    'lstm_cell': _graded(lambda M, x, h, c, w, u, b, d: M.lstm_cell(x, (h, c), w, u, b, d),
                         (3, 4), (3, 5), (3, 5), (20, 4), (20, 5), (20,), (20,)),
    'lstm_cell_list': _graded(lambda M, x, h, c, w, u: M.lstm_cell(x, [h, c], w, u)[1],
                              (2, 4), (2, 3), (2, 3), (12, 4), (12, 3)),
    'gru_cell': _graded(lambda M, x, h, w, u, b, d: M.gru_cell(x, h, w, u, b, d),
                        (3, 4), (3, 5), (15, 4), (15, 5), (15,), (15,)),
    'gru_cell_no_bias': _graded(lambda M, x, h, w, u: M.gru_cell(x, h, w, u), (3, 4), (3, 5), (15, 4), (15, 5)),
})
_CELL_ERRORS = {
    'rnn_wih_rows': lambda M: M.rnn_tanh_cell(M.ones(3, 4), M.ones(3, 5), M.ones(6, 4), M.ones(5, 5)),
    'rnn_whh_rows': lambda M: M.rnn_tanh_cell(M.ones(3, 4), M.ones(3, 5), M.ones(5, 4), M.ones(6, 5)),
    'rnn_input_size': lambda M: M.rnn_tanh_cell(M.ones(3, 4), M.ones(3, 5), M.ones(5, 3), M.ones(5, 5)),
    'rnn_batch': lambda M: M.rnn_relu_cell(M.ones(3, 4), M.ones(2, 5), M.ones(5, 4), M.ones(5, 5)),
    'rnn_hidden': lambda M: M.rnn_tanh_cell(M.ones(3, 4), M.ones(3, 6), M.ones(5, 4), M.ones(5, 5)),
    'rnn_whh_cols': lambda M: M.rnn_tanh_cell(M.ones(3, 4), M.ones(3, 5), M.ones(5, 4), M.ones(5, 6)),
    'rnn_hx_none': lambda M: M.rnn_tanh_cell(M.ones(3, 4), None, M.ones(5, 4), M.ones(5, 5)),
    'rnn_input_int': lambda M: M.rnn_tanh_cell(1, M.ones(3, 5), M.ones(5, 4), M.ones(5, 5)),
    'lstm_c_hidden': lambda M: M.lstm_cell(M.ones(3, 4), (M.ones(3, 5), M.ones(3, 6)), M.ones(20, 4), M.ones(20, 5)),
    'lstm_one_state': lambda M: M.lstm_cell(M.ones(3, 4), (M.ones(3, 5),), M.ones(20, 4), M.ones(20, 5)),
    'lstm_tensor_state': lambda M: M.lstm_cell(M.ones(3, 4), M.ones(3, 5), M.ones(20, 4), M.ones(20, 5)),
    'gru_whh_rows': lambda M: M.gru_cell(M.ones(3, 4), M.ones(3, 5), M.ones(15, 4), M.ones(14, 5)),
    'gru_missing': lambda M: M.gru_cell(M.ones(3, 4), M.ones(3, 5), M.ones(15, 4)),
}
NN_FORMS.update({f'cell_error_{k}': v for k, v in _CELL_ERRORS.items()})


def _seeded(call):
    def program(M):
        M.manual_seed(0)
        x = M.arange(1.0, 25.0).reshape(2, 3, 4)
        result = call(M, x)
        return result, result is x, x
    return program


NN_FORMS.update({  # the in-place and feature forms of the dropouts, max_pool1d_with_indices
    'dropout_': _seeded(lambda M, x: M.dropout_(x, 0.5, True)),
    'dropout_eval_': _seeded(lambda M, x: M.dropout_(x, 0.5, False)),
    'alpha_dropout_': _seeded(lambda M, x: M.alpha_dropout_(x, 0.3, True)),
    'feature_dropout': _seeded(lambda M, x: M.feature_dropout(x, 0.5, True)),
    'feature_dropout_2d': _seeded(lambda M, x: M.feature_dropout(x[0], 0.5, True)),
    'feature_dropout_': _seeded(lambda M, x: M.feature_dropout_(x, 0.5, True)),
    'feature_dropout_eval': _seeded(lambda M, x: M.feature_dropout(x, 0.5, False)),
    'feature_alpha_dropout_': _seeded(lambda M, x: M.feature_alpha_dropout_(x, 0.5, True)),
    'feature_dropout_p': _seeded(lambda M, x: M.feature_dropout(x, 1.5, True)),
    'dropout__p': _seeded(lambda M, x: M.dropout_(x, -0.5, False)),
    'dropout_p': _seeded(lambda M, x: M.dropout(x, 1.5, False)),
    'alpha_dropout_p': _seeded(lambda M, x: M.alpha_dropout(x, 1.5, True)),
    'feature_alpha_dropout_p': _seeded(lambda M, x: M.feature_alpha_dropout(x, -1, True)),
    'dropout__missing': lambda M: M.dropout_(M.ones(2), 0.5),
    'feature_dropout_missing': lambda M: M.feature_dropout(M.ones(2), 0.5),
    'max_pool1d_with_indices': _graded(lambda M, x: M.max_pool1d_with_indices(x, 2), (1, 2, 7)),
    'max_pool1d_with_indices_options': _graded(lambda M, x: M.max_pool1d_with_indices(x, 3, 2, 1, 1, True),
                                               (2, 3, 8)),
})
# (the arguments given: the leading tensors; nn.functional's own functions, which PyTorch's are
# too, conv2d's and the others', are not among these)
for _name, _args in {'dropout': 1, 'alpha_dropout': 1, 'feature_alpha_dropout': 0, 'embedding': 1, 'layer_norm': 1,
                     'batch_norm': 5, 'group_norm': 1, 'instance_norm': 5, 'rms_norm': 1, 'max_pool1d': 1,
                     'max_pool2d': 0, 'adaptive_max_pool1d': 1, 'kl_div': 1, 'binary_cross_entropy_with_logits': 1,
                     'constant_pad_nd': 1, 'hinge_embedding_loss': 1, 'margin_ranking_loss': 2,
                     'cosine_embedding_loss': 1, 'triplet_margin_loss': 2, 'poisson_nll_loss': 2}.items():
    NN_FORMS[f'{_name}_missing_arguments'] = lambda M, n=_name, k=_args: getattr(M, n)(*[M.ones(2, 3)] * k)


@pytest.mark.parametrize('name', NN_FORMS)
def test_torch_forms_of_functional_ops(name):
    same(NN_FORMS[name])


# ---- function forms: detach_, index_put_, get_device, empty_permuted, nuclear_norm, frobenius_norm

def _norm_program(call):
    def program(M):
        x = M.arange(1.0, 25.0).reshape(2, 3, 4).requires_grad_(True)
        y = call(M, x)
        y.sum().backward()
        return y, type(y.grad_fn).__name__, x.grad
    return program


FUNCTION_FORMS = {
    'detach_': lambda M: (lambda y: (M.detach_(y), y.requires_grad, y.grad_fn))(M.ones(2, requires_grad=True) * 2),
    'detach_leaf': lambda M: (lambda x: M.detach_(x) is x)(M.ones(2)),
    'detach_not_tensor': lambda M: M.detach_(1),
    'index_put_': lambda M: (lambda y: (M.index_put_(y, (M.tensor([0, 2]),), M.tensor(1.0)) is y, y))(M.zeros(3)),
    'index_put_accumulate': lambda M: (lambda y: (M.index_put_(y, (M.tensor([0, 0]),), M.tensor([1.0, 2.0]), True),
                                                  y))(M.zeros(3)),
    'get_device': lambda M: M.get_device(M.ones(2)),
    'get_device_not_tensor': lambda M: M.get_device(1),
    'empty_permuted': lambda M: (lambda t: (t.shape, t.stride(), t.dtype, t.requires_grad, t.is_contiguous()))(
        M.empty_permuted((2, 3, 4), (2, 0, 1), dtype=M.float64, requires_grad=True)),
    'empty_permuted_channels_last': lambda M: M.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1)).stride(),
    'empty_permuted_0d': lambda M: M.empty_permuted((), ()).shape,
    'empty_permuted_duplicate': lambda M: M.empty_permuted((2, 3, 4), (0, 0, 1)),
    'empty_permuted_range': lambda M: M.empty_permuted((2, 3, 4), (0, 1, 3)),
    'empty_permuted_length': lambda M: M.empty_permuted((2, 3), (2, 0, 1)),
    'empty_permuted_negative': lambda M: M.empty_permuted([2, -1], (0, 1)),
    'empty_permuted_int_grad': lambda M: M.empty_permuted((2, 3), (1, 0), dtype=M.int64, requires_grad=True),
    'nuclear_norm': _graded(lambda M, x: M.nuclear_norm(x), (3, 4)),
    'nuclear_norm_batch': lambda M: M.nuclear_norm(M.arange(24.0).reshape(2, 3, 4)),
    'nuclear_norm_keepdim': lambda M: M.nuclear_norm(M.arange(12.0).reshape(3, 4), True),
    'nuclear_norm_dims': lambda M: M.nuclear_norm(M.arange(24.0).reshape(2, 3, 4), (0, 2), True),
    'nuclear_norm_one_dim': lambda M: M.nuclear_norm(M.ones(3, 4), (0,)),
    'frobenius_norm': _norm_program(lambda M, x: M.frobenius_norm(x, (0, 1))),
    'frobenius_norm_keepdim': _norm_program(lambda M, x: M.frobenius_norm(x, (2,), True)),
    'frobenius_norm_int': lambda M: M.frobenius_norm(M.ones(3, 4, dtype=M.int64), (0,)),
    'frobenius_norm_three_dims': lambda M: M.frobenius_norm(M.ones(3, 4), (0, 1, 0)),
    'frobenius_norm_missing_dim': lambda M: M.frobenius_norm(M.ones(3, 4)),
}


@pytest.mark.parametrize('name', FUNCTION_FORMS)
def test_function_forms_as_torch(name):
    same(FUNCTION_FORMS[name])


# ---- Tensor.to_dense, const_data_ptr, is_set_to, resize, resize_as ----------------------------

def _resized(call):
    def program(M):
        x = M.arange(6.0).requires_grad_(True)
        y = call(M, x)
        (y * M.arange(6.0).reshape(y.shape)).sum().backward()
        return y, type(y.grad_fn).__name__, x.grad
    return program


TENSOR_METHODS = {
    'to_dense': lambda M: (lambda x: (x.to_dense() is x, x.to_dense(masked_grad=False) is x))(M.ones(2)),
    'to_dense_dtype': lambda M: (lambda y: (y, type(y.grad_fn).__name__))(
        M.ones(2, requires_grad=True).to_dense(M.float64)),
    'to_dense_bad_dtype': lambda M: M.ones(2).to_dense('a'),
    'const_data_ptr': lambda M: (lambda x: (type(x.const_data_ptr()), x.const_data_ptr() == x.data_ptr()))(M.ones(2)),
    'is_set_to': lambda M: (lambda a: (a.is_set_to(a), a.is_set_to(a.view(2, 3)), a.is_set_to(a.clone()),
                                       a[:].is_set_to(a), a[1:].is_set_to(a)))(M.arange(6.0)),
    'is_set_to_not_tensor': lambda M: M.ones(2).is_set_to(1),
    'resize': _resized(lambda M, x: x.resize(2, 3)),
    'resize_tuple': _resized(lambda M, x: x.resize((3, 2))),
    'resize_as': _resized(lambda M, x: x.resize_as(M.ones(3, 2))),
    'resize_numel': lambda M: M.arange(6.0).resize(2, 4),
    'resize_as_numel': lambda M: M.ones(3, requires_grad=True).resize_as(M.ones(2, 2)),
}


@pytest.mark.parametrize('name', TENSOR_METHODS)
def test_tensor_methods_as_torch(name):
    same(TENSOR_METHODS[name])
