"""Wrong input, as a careless user writes it, against torch: the same exception type and message
(or the same result where PyTorch accepts it) and the same warnings; no NumPy exception or
warning leaks. One table drives the generic test; what needs more than one call has its own."""
import json
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')

import leafgrad as lg  # noqa: E402
from fresh import fresh_python_output  # noqa: E402

NAN, INF = float('nan'), float('inf')


def _x(T):
    return T.arange(9.).reshape(3, 3)


def _linear_bad_state(T):
    p = T.nn.Parameter(T.ones(3))
    opt = T.optim.Adam([p])
    p.grad = T.ones(3)
    opt.step()
    state = opt.state_dict()
    state['state'][0]['exp_avg'] = T.ones(4)
    opt.load_state_dict(state)
    opt.step()


def _multinomial_sorted(T, *args):
    out = T.multinomial(*args)
    return out.sort().values.shape, out.dtype  # the draws themselves differ (leafgrad's own RNG)


# (name, f(T)): f runs with T = leafgrad and T = torch.
CASES = [
    # creation from Python data
    ('tensor with None', lambda T: T.tensor([1, None])),
    ('tensor of None', lambda T: T.tensor(None)),
    ('nested None', lambda T: T.tensor([[1.], [None]])),
    ('tensor of object', lambda T: T.tensor([1, object()])),
    ('tensor of dict', lambda T: T.tensor({1: 2})),
    ('tensor of set', lambda T: T.tensor({1, 2})),
    ('tensor of str', lambda T: T.tensor('a')),
    ('list of str', lambda T: T.tensor(['a'])),
    ('str among ints', lambda T: T.tensor([1, 'a'])),
    ('ragged', lambda T: T.tensor([[1, 2], [1, 2, 3]])),
    ('ragged shorter', lambda T: T.tensor([[1, 2, 3], [1, 2]])),
    ('ragged deep', lambda T: T.tensor([[[1], [2]], [[1], [2, 3]]])),
    ('ragged tuples', lambda T: T.tensor(((1, 2), (3,)))),
    ('list after scalar', lambda T: T.tensor([1, [2]])),
    ('list after scalar, float', lambda T: T.tensor([1., [2.]])),
    ('scalar after list', lambda T: T.tensor([[2], 1])),
    ('empty then full', lambda T: T.tensor([[1], []])),
    ('full then empty', lambda T: T.tensor([[], [1]])),
    ('tensors in a list', lambda T: T.tensor([T.ones(2), T.ones(2)])),
    ('one-element tensors in a list', lambda T: T.tensor([T.ones(1), 5])),
    ('tensor rows of another length', lambda T: T.tensor([[1, 2], T.ones(3)])),
    ('int too big', lambda T: T.tensor([2 ** 63])),
    ('int too big for int32', lambda T: T.tensor([2 ** 40], dtype=T.int32)),
    ('int too big for int8', lambda T: T.tensor([300], dtype=T.int8)),
    ('negative uint8 wraps', lambda T: T.tensor([-1, -255], dtype=T.uint8)),
    ('too negative for uint8', lambda T: T.tensor([-256], dtype=T.uint8)),
    ('nan to int', lambda T: T.tensor([NAN], dtype=T.int64)),
    ('inf to int', lambda T: T.tensor([INF], dtype=T.int64)),
    ('float to int truncates', lambda T: T.tensor([1.7, -1.7], dtype=T.int64)),
    ('float16 overflow is inf', lambda T: T.tensor([1e10], dtype=T.float16)),
    ('None with a dtype', lambda T: T.tensor([1, None], dtype=T.float32)),
    ('str with a dtype', lambda T: T.tensor([1, 'a'], dtype=T.float32)),
    ('list with an int dtype', lambda T: T.tensor([1, [2]], dtype=T.int32)),
    # sizes
    ('empty of impossible size', lambda T: T.empty(10 ** 12, 10 ** 12)),
    ('zeros of impossible size', lambda T: T.zeros(10 ** 10, 10 ** 10)),
    ('ones of impossible size', lambda T: T.ones((2 ** 62, 4))),
    ('rand of impossible size', lambda T: T.rand(10 ** 12, 10 ** 12)),
    ('zeros negative', lambda T: T.zeros(-1)),
    ('ones negative', lambda T: T.ones(2, -1)),
    ('empty negative', lambda T: T.empty((2, -1))),
    ('randn negative', lambda T: T.randn(-2)),
    ('zeros float size', lambda T: T.zeros(2.5)),
    ('zeros float in sizes', lambda T: T.zeros(2, 2.5)),
    ('ones float in tuple', lambda T: T.ones((2, 2.5))),
    ('empty str size', lambda T: T.empty('a')),
    ('zeros None size', lambda T: T.zeros(None)),
    ('zeros tuple and int', lambda T: T.zeros((2,), 3)),
    ('ones tensor size', lambda T: T.ones(T.tensor([2, 3]))),
    ('ones float tensor size', lambda T: T.ones(T.tensor(2.))),
    ('ones 0-d int tensor size', lambda T: T.ones(T.tensor(2), 3)),
    ('ones bool size', lambda T: T.ones(True)),
    ('zeros nested size', lambda T: T.zeros([[2]])),
    ('full of str', lambda T: T.full((2,), 'a')),
    ('full int size', lambda T: T.full(2, 1.)),
    ('nn.Linear float features', lambda T: T.nn.Linear(3.5, 2)),
    ('rand int dtype', lambda T: T.rand(3, dtype=T.int64)),
    ('randn int dtype', lambda T: T.randn(3, dtype=T.int64)),
    # multinomial
    ('multinomial negative', lambda T: T.multinomial(T.tensor([0.5, -0.1, 0.6]), 1)),
    ('multinomial 0-d', lambda T: T.multinomial(T.tensor(0.5), 1)),
    ('multinomial 3-d', lambda T: T.multinomial(T.ones(2, 2, 2), 1)),
    ('multinomial too many', lambda T: T.multinomial(T.ones(3), 4)),
    ('multinomial zeros', lambda T: T.multinomial(T.zeros(3), 1)),
    ('multinomial int', lambda T: T.multinomial(T.ones(3, dtype=T.int64), 1)),
    ('multinomial no samples', lambda T: T.multinomial(T.ones(3), 0)),
    ('multinomial inf', lambda T: T.multinomial(T.tensor([1., INF]), 1)),
    ('multinomial nan', lambda T: T.multinomial(T.tensor([1., NAN]), 1)),
    ('multinomial zero row', lambda T: T.multinomial(T.tensor([[1., 1.], [0., 0.]]), 1)),
    ('multinomial float count', lambda T: T.multinomial(T.ones(3), 1.0)),
    ('multinomial replacement negative', lambda T: T.multinomial(T.tensor([1., -1.]), 2, True)),
    ('multinomial replacement inf', lambda T: T.multinomial(T.tensor([1., INF]), 2, True)),
    ('multinomial replacement nan', lambda T: T.multinomial(T.tensor([1., NAN]), 2, True)),
    ('multinomial replacement zeros', lambda T: T.multinomial(T.zeros(2), 2, True)),
    ('multinomial past the nonzero ones', lambda T: _multinomial_sorted(T, T.tensor([1., 0., 1.]), 3)),
    ('multinomial of no rows', lambda T: T.multinomial(T.ones(0, 3), 2)),
    # joining and broadcasting
    ('where shapes', lambda T: T.where(T.ones(2, 3) > 0, T.ones(2, 3), T.ones(4))),
    ('where condition shape', lambda T: T.where(T.ones(4) > 0, T.ones(2, 3), T.ones(2, 3))),
    ('where three shapes', lambda T: T.where(T.ones(4) > 0, T.ones(2, 3), T.ones(5, 1, 1))),
    ('where scalar other', lambda T: T.where(T.ones(2, 3) > 0, T.ones(3, 2), 1.0)),
    ('cat 0-d', lambda T: T.cat([T.tensor(1.), T.tensor(2.)])),
    ('cat 0-d second', lambda T: T.cat([T.ones(2), T.tensor(2.)])),
    # indexing
    ('x[0, 7]', lambda T: _x(T)[0, 7]),
    ('x[None, 0, 7]', lambda T: _x(T)[None, 0, 7]),
    ('x[..., 7]', lambda T: T.zeros(3, 3, 3)[..., 7]),
    ('x[:, None, :, 7]', lambda T: T.zeros(3, 3, 3)[:, None, :, 7]),
    ('x[7]', lambda T: _x(T)[7]),
    ('x[-4]', lambda T: _x(T)[-4]),
    ('x[:, [7]]', lambda T: _x(T)[:, [7]]),
    ('x[[0], :, [7]]', lambda T: T.zeros(3, 3, 3)[[0], :, [7]]),
    ('x[mask, [7]]', lambda T: T.zeros(3, 3, 3)[T.tensor([True, False, True]), [7]]),
    ('x[1.5]', lambda T: _x(T)[1.5]),
    ('x[0, 1.5]', lambda T: _x(T)[0, 1.5]),
    ('x[str]', lambda T: _x(T)['a']),
    ('x[0, str]', lambda T: _x(T)[0, 'a']),
    ('x[dict]', lambda T: _x(T)[{}]),
    ('x[complex]', lambda T: _x(T)[1j]),
    ('x[np.float64]', lambda T: _x(T)[np.float64(1.)]),
    ('x[::0]', lambda T: _x(T)[::0]),
    ('x[0, 7] = 1', lambda T: _x(T).__setitem__((0, 7), 1.)),
    ('x[0] = str', lambda T: _x(T).__setitem__(0, 'a')),
    ('x[0] = list', lambda T: _x(T).__setitem__(0, [1., 2.])),
    ('x[0] = None', lambda T: _x(T).__setitem__(0, None)),
    ('long x[0] = None', lambda T: T.zeros(3, dtype=T.int64).__setitem__(0, None)),
    ('x[0] = ndarray', lambda T: _x(T).__setitem__(0, np.array([1., 2., 3.]))),
    ('x[0] = wrong shape', lambda T: _x(T).__setitem__(0, T.ones(4))),
    ('x[0] = too many dims', lambda T: _x(T).__setitem__(0, T.ones(2, 1, 3))),
    ('select out of range', lambda T: _x(T).select(1, 3)),
    ('index_select out of range', lambda T: T.index_select(T.zeros(3), 0, T.tensor([5]))),
    ('index_select negative', lambda T: T.index_select(_x(T), 0, T.tensor([-1]))),
    ('index_select out of range, dim 1', lambda T: T.index_select(_x(T), 1, T.tensor([3]))),
    ('index_select on an empty dim 0', lambda T: T.ones(0, 3).index_select(0, T.tensor([0]))),
    ('index_select on an empty dim 1', lambda T: T.ones(3, 0).index_select(1, T.tensor([0]))),
    ('index_select on an empty dim 1 of 3', lambda T: T.ones(2, 0, 3).index_select(1, T.tensor([1]))),
    ('index_select out of range, dim 0 of an empty tensor', lambda T: T.ones(3, 0).index_select(0, T.tensor([5]))),
    ('gather float index', lambda T: T.gather(_x(T), 1, T.tensor([[0.]]))),
    ('scatter float index', lambda T: _x(T).scatter(0, T.tensor([[0.]]), 1.)),
    # conversions to Python
    ('float of 2 elements', lambda T: float(T.zeros(2))),
    ('int of 2 elements', lambda T: int(T.zeros(2))),
    ('float of none', lambda T: float(T.zeros(0))),
    ('complex of 2 elements', lambda T: complex(T.zeros(2))),
    ('bool of 2 elements', lambda T: bool(T.zeros(2))),
    ('bool of none', lambda T: bool(T.zeros(0))),
    ('item of 2 elements', lambda T: T.zeros(2).item()),
    ('int of nan', lambda T: int(T.tensor(NAN))),
    ('0-d int index 4', lambda T: T.tensor(1)[4]),
    ('0-d int index 0', lambda T: T.tensor(1)[0]),
    ('setitem broadcast prefix of ones', lambda T: _x(T).__setitem__(0, T.ones(1, 1, 3))),
    # arithmetic and comparisons
    ('bool - float', lambda T: T.tensor([True, False]) - T.tensor([0.5, 1.])),
    ('float - bool', lambda T: T.tensor([0.5, 1.]) - T.tensor([True, False])),
    ('bool - bool', lambda T: T.tensor([True]) - T.tensor([False])),
    ('bool - 1', lambda T: T.tensor([True]) - 1),
    ('1 - bool', lambda T: 1 - T.tensor([True])),
    ('float - True', lambda T: T.ones(2) - True),
    ('sub_ of a bool', lambda T: T.tensor([0.5, 1.]).sub_(T.tensor([True, False]))),
    ('rsub bool', lambda T: T.rsub(T.tensor([True]), 1.)),
    ('tanhshrink bool', lambda T: T.nn.functional.tanhshrink(T.tensor([True, False]))),
    ('sub bool alpha', lambda T: T.sub(T.ones(2), T.ones(2), alpha=True)),
    ('add bool alpha', lambda T: T.ones(2).add(T.ones(2), alpha=True)),
    ('add_ bool alpha', lambda T: T.ones(2).add_(T.ones(2), alpha=True)),
    ('bool add bool alpha', lambda T: T.tensor([True]).add(T.tensor([True]), alpha=True)),
    ('int ** negative tensor', lambda T: T.tensor([2, 1, -1, -2, 0]) ** T.tensor([-1, -2, -3, -2, 0])),
    ('2 ** negative int tensor', lambda T: 2 ** T.tensor([-1, 0, 2])),
    ('== None', lambda T: T.ones(2) == None),  # noqa: E711
    ('!= None', lambda T: T.ones(2) != None),  # noqa: E711
    ('== str', lambda T: T.ones(2) == 'a'),
    ('< None', lambda T: T.ones(2) < None),
    ('>= str', lambda T: T.ones(2) >= 'a'),
    ('@ list', lambda T: T.ones(2) @ [1., 2.]),
    ('list @', lambda T: [1., 2.] @ T.ones(2)),
    ('@ float', lambda T: T.ones(2) @ 2.),
    ('ndarray @', lambda T: np.ones(2) @ T.ones(2)),
    ('bool matmul', lambda T: T.ones(2, 2, dtype=T.bool) @ T.ones(2, 2, dtype=T.bool)),
    ('bool dot', lambda T: T.ones(2, dtype=T.bool) @ T.ones(2, dtype=T.bool)),
    ('bool mv', lambda T: T.ones(2, 2, dtype=T.bool) @ T.ones(2, dtype=T.bool)),
    ('bool bmm', lambda T: T.ones(2, 2, 2, dtype=T.bool) @ T.ones(2, 2, 2, dtype=T.bool)),
    ('matmul dtypes, batched vector', lambda T: T.ones(1, 3, dtype=T.float64) @ T.ones(2, 3, 2)),
    ('matmul dtypes, folded', lambda T: T.ones(1, 3, dtype=T.float64, requires_grad=True) @ T.ones(2, 3, 2)),
    ('matmul dtypes, 3-d @ 2-d', lambda T: T.ones(2, 2, 3, dtype=T.float64) @ T.ones(3, 2)),
    ('matmul a batch of one', lambda T: T.ones(2, 2, 3) @ T.ones(1, 2, 3, requires_grad=True)),
    ('matmul a batch of one, other side', lambda T: T.ones(1, 2, 3, requires_grad=True) @ T.ones(2, 2, 3)),
    ('sign of bool', lambda T: T.sign(T.tensor([True, False]))),
    ('median of bool', lambda T: T.tensor([True, False]).median()),
    ('topk of bool', lambda T: T.tensor([True, False]).topk(1)),
    ('softmax of long, not last dim', lambda T: T.softmax(T.ones(2, 2, dtype=T.int64), 0)),
    ('log_softmax of long, last dim', lambda T: T.log_softmax(T.ones(2, 2, dtype=T.int64), 1)),
    ('gelu of long', lambda T: T.nn.functional.gelu(T.tensor([1, 2]))),
    ('softshrink of long', lambda T: T.nn.functional.softshrink(T.tensor([1, 2]))),
    ('glu of bool', lambda T: T.nn.functional.glu(T.tensor([True, False]))),
    ('glu of long, odd', lambda T: T.nn.functional.glu(T.tensor([1, 2, 3]))),
    ('normalize long', lambda T: T.nn.functional.normalize(T.tensor([1, 2]))),
    ('dropout long', lambda T: T.nn.functional.dropout(T.tensor([1, 2]))),
    ('gather empty float index', lambda T: T.gather(T.ones(2, 3), 0, T.ones(2, 0))),
    ('detach_ a view', lambda T: T.ones(3, requires_grad=True)[0].detach_()),
] + [(f'{name} without broadcasting', lambda T, name=name: getattr(T, name)(T.ones(2, 3), T.ones(4)))
     for name in ('maximum', 'minimum', 'atan2', 'hypot', 'fmod', 'remainder', 'copysign', 'fmax', 'fmin',
                  'logaddexp', 'xlogy', 'floor_divide', 'eq', 'lt')] + [
    ('logical_and without broadcasting', lambda T: T.logical_and(T.ones(2, 3) > 0, T.ones(4) > 0)),
    ('hypot of longs without broadcasting', lambda T: T.hypot(T.ones(2, dtype=T.int64), T.ones(3, dtype=T.int64))),
    ('hypot of bools without broadcasting', lambda T: T.hypot(T.ones(2) > 0, T.ones(3) > 0)),
    ('fmod of bools', lambda T: T.fmod(T.ones(2) > 0, T.ones(2) > 0)),
    ('remainder of bools', lambda T: T.remainder(T.ones(2) > 0, T.ones(()) > 0)),
    ('fmod_ of bools', lambda T: (T.ones(2) > 0).fmod_(T.ones(2) > 0)),
    ('fmod of bools without broadcasting', lambda T: T.fmod(T.ones(2) > 0, T.ones(3) > 0)),
    ('remainder of longs by zero without broadcasting',
     lambda T: T.remainder(T.ones(2, dtype=T.int64), T.zeros(3, dtype=T.int64))),
    ('bitwise_and without broadcasting', lambda T: T.bitwise_and(T.ones(2, 3) > 0, T.ones(4) > 0)),
    ('lerp without broadcasting', lambda T: T.lerp(T.ones(2, 3), T.ones(4), 0.5)),
    ('addcmul without broadcasting', lambda T: T.addcmul(T.ones(2, 3), T.ones(4), T.ones(2, 3))),
    ('addcdiv without broadcasting', lambda T: T.addcdiv(T.ones(2, 3), T.ones(4), T.ones(2, 3))),
    ('clamp without broadcasting', lambda T: T.clamp(T.ones(2, 3), T.ones(4))),
    ('copy_ without broadcasting', lambda T: T.zeros(2, 0).copy_(T.ones(2, 1, 2))),
    ('copy_ into a smaller shape', lambda T: T.zeros(3).copy_(T.ones(2, 3))),
    ('copy_ rows', lambda T: T.zeros(2, 3).copy_(T.ones(3, 3))),
    ('copy_ a list', lambda T: T.zeros(3).copy_([1., 2., 3.])),
    ('copy_ a number', lambda T: T.zeros(3).copy_(2.0)),
    ('fill_ str', lambda T: T.zeros(3).fill_('a')),
    ('fill_ None', lambda T: T.zeros(3).fill_(None)),
    ('std of inf', lambda T: T.tensor([-0.6, INF, 1.4], dtype=T.float64).std()),
    ('var of inf, a dim', lambda T: T.tensor([[INF, -INF]]).var(1)),
    ('layer_norm of inf', lambda T: T.nn.functional.layer_norm(T.tensor([[INF, 1.0]]), (2,))),
    ('half mean of nothing', lambda T: T.tensor([], dtype=T.float16).mean()),
    # nn and losses
    ('list into nn.Linear', lambda T: T.nn.Linear(3, 2)([1., 2., 3.])),
    ('list into nn.ReLU', lambda T: T.nn.ReLU()([1., 2., 3.])),
    ('binary_cross_entropy of nan', lambda T: T.nn.functional.binary_cross_entropy(T.tensor([NAN]), T.tensor([1.]))),
    ('nn.Linear of a 0-d tensor', lambda T: T.nn.Linear(3, 2)(T.tensor(1.))),
    ('conv2d stride 0', lambda T: T.nn.Conv2d(1, 1, 3, stride=0)(T.ones(1, 1, 5, 5))),
    ('conv2d negative stride', lambda T: T.nn.functional.conv2d(T.ones(1, 1, 5, 5), T.ones(1, 1, 3, 3), stride=-1)),
    ('conv2d dilation 0', lambda T: T.nn.functional.conv2d(T.ones(1, 1, 5, 5), T.ones(1, 1, 3, 3), dilation=0)),
    ('conv1d stride 0', lambda T: T.nn.functional.conv1d(T.ones(1, 1, 5), T.ones(1, 1, 3), stride=0)),
    ('conv_transpose2d stride 0', lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 1, 5, 5), T.ones(1, 1, 3, 3),
                                                                             stride=0)),
    ('max_pool2d stride 0', lambda T: T.nn.functional.max_pool2d(T.ones(1, 1, 5, 5), 2, stride=0)),
    ('avg_pool2d stride 0', lambda T: T.nn.functional.avg_pool2d(T.ones(1, 1, 5, 5), 2, stride=0)),
    ('LayerNorm of ints', lambda T: T.nn.LayerNorm(4)(T.ones(2, 4, dtype=T.int64))),
    ('layer_norm of doubles, float weight', lambda T: T.nn.functional.layer_norm(
        T.ones(2, 4, dtype=T.float64), (4,), T.ones(4), T.ones(4))),
    ('layer_norm of floats, bfloat16 weight', lambda T: T.nn.functional.layer_norm(
        T.ones(2, 4), (4,), T.ones(4, dtype=T.bfloat16))),
    ('layer_norm of bfloat16, double weight', lambda T: T.nn.functional.layer_norm(
        T.ones(2, 4, dtype=T.bfloat16), (4,), T.ones(4, dtype=T.float64))),
    ('layer_norm of bfloat16, float weight, bfloat16 bias', lambda T: T.nn.functional.layer_norm(
        T.ones(2, 4, dtype=T.bfloat16), (4,), T.ones(4), T.ones(4, dtype=T.bfloat16))),
    ('layer_norm of floats, bfloat16 bias', lambda T: T.nn.functional.layer_norm(
        T.ones(2, 4), (4,), T.ones(4), T.ones(4, dtype=T.bfloat16))),
    ('layer_norm of bfloat16, float weight (allowed)', lambda T: T.nn.functional.layer_norm(
        T.arange(8.0).reshape(2, 4).bfloat16(), (4,), T.ones(4) / 3, T.ones(4) / 7)),
    ('Parameter of ints', lambda T: T.nn.Parameter(T.tensor([1, 2]))),
    ('Module.to an int dtype', lambda T: T.nn.Linear(2, 2).to(T.int64)),
    ('Module.to a str', lambda T: T.nn.Linear(2, 2).to('float')),
    ('to an unknown device', lambda T: T.ones(2).to('tpu')),
    ('mse_loss of ints', lambda T: T.nn.functional.mse_loss(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64))),
    ('mse_loss broadcasting warns', lambda T: T.nn.functional.mse_loss(T.ones(3), T.ones(1))),
    ('binary_cross_entropy int target', lambda T: T.nn.functional.binary_cross_entropy(T.tensor([0.5]),
                                                                                         T.tensor([1]))),
    ('binary_cross_entropy dtypes', lambda T: T.nn.functional.binary_cross_entropy(
        T.full((2,), .5, dtype=T.float64), T.ones(2))),
    ('kl_div of ints', lambda T: T.nn.functional.kl_div(T.ones(2, dtype=T.int64), T.ones(2), reduction='sum')),
    ('interpolate unknown mode', lambda T: T.nn.functional.interpolate(T.ones(1, 1, 4), size=8, mode='cubic')),
    ('log_softmax dim str', lambda T: T.nn.functional.log_softmax(T.ones(2, 3), dim='a')),
    ('stack a number', lambda T: T.stack([T.ones(2), 3])),
    ('cat a list', lambda T: T.cat([T.ones(2), [1., 2.]])),
    ('arange against its step', lambda T: T.arange(0, 5, -1)),
    ('eye negative', lambda T: T.eye(-1)),
    ('eye negative columns', lambda T: T.eye(2, -1)),
    ('eye float', lambda T: T.eye(2.5)),
    ('set_default_dtype int', lambda T: T.set_default_dtype(T.int64)),
    ('grad of another dtype', lambda T: setattr(T.ones(2, requires_grad=True), 'grad', T.ones(2, dtype=T.float64))),
    ('grad of half', lambda T: setattr(T.ones(2, requires_grad=True), 'grad', T.ones(2, dtype=T.float16))),
    ('tensor in tensor', lambda T: T.ones(2) in T.ones(2)),
    ('number in tensor', lambda T: 2 in T.ones(2)),
    ('str in tensor', lambda T: 'a' in T.ones(2)),
    # optimizers
    ('Adam with a loaded state of another shape', _linear_bad_state),
    # Python types as dtypes (float is a double whatever the default dtype)
    ('ones of dtype float', lambda T: T.ones(2, dtype=float)),
    ('tensor of dtype float', lambda T: T.tensor([1.5], dtype=float)),
    ('to(float)', lambda T: T.ones(2).to(float)),
    ('view(float)', lambda T: T.ones(3).view(float)),
    # view(dtype): the same bytes read as another dtype, with PyTorch's checks for other sizes
    ('view as int32', lambda T: T.tensor([1.0, -2.0]).view(T.int32)),
    ('view as a smaller dtype', lambda T: T.ones(2, 3).view(T.int16)),
    ('view of a slice as a smaller dtype', lambda T: T.ones(2, 3)[:, :2].view(T.int16)),
    ('view as a larger dtype', lambda T: T.ones(2, 4, dtype=T.int16).view(T.float32)),
    ('view as bool', lambda T: T.tensor([0, 1, 2], dtype=T.int8).view(T.bool)),
    ('view complex as float', lambda T: T.ones(2, dtype=T.complex64).view(T.float32)),
    ('view of a leaf that requires grad', lambda T: T.ones(3, requires_grad=True).view(T.int32)),
    ('view as its own dtype drops the history', lambda T: T.ones(3, requires_grad=True).view(T.float32).requires_grad),
    ('view as a larger dtype, odd size', lambda T: T.ones(3).view(T.float64)),
    ('view of a 0-d tensor as a smaller dtype', lambda T: T.ones((), dtype=T.float64).view(T.float32)),
    ('view of a 0-d tensor as its size', lambda T: T.ones((), dtype=T.float64).view(T.int64)),
    ('view at an odd offset as a larger dtype', lambda T: T.ones(4, 3)[:, 1:].view(T.float64)),
    ('view with an odd stride as a larger dtype', lambda T: T.ones(6, 2)[::3].view(T.float64)),
    ('view of a strided last dimension', lambda T: T.ones(4, 4, dtype=T.int8)[:, ::2].view(T.int16)),
    ('view of a transposed tensor', lambda T: T.ones(2, 4).t().view(T.float64)),
    ('view of a size-1 last dimension', lambda T: T.ones(4, 2)[:, :1].view(T.float16)),
    ('view of an empty tensor', lambda T: T.ones(0, 4).view(T.float64)),
    ('view of a meta tensor as a smaller dtype', lambda T: T.ones(2, 3, device='meta').view(T.int16).shape),
    ('view of a meta tensor as a larger dtype, odd size', lambda T: T.ones(2, 3, device='meta').view(T.float64)),
    # int lists (sizes, dims, repeats): PyTorch's parser refuses what is no int instead of truncating it
] + [(f'{name}({args})', lambda T, name=name, args=args: eval(f'T.ones(2, 3).{name}({args})', {'T': T}))
     for name, args in [('view', '3, 2.0'), ('view', '[3, 2.0]'), ('view', '3, T.ones(1)'), ('reshape', '3, 2.7'),
                        ('reshape', '(2.0, 3)'), ('reshape', '((2,), 3)'), ('reshape', '(2, (3,))'), ('reshape', '3, None'),
                        ('reshape', "'a'"), ('reshape', '2.0, 3'), ('reshape', 'True, 6'), ('reshape', '6, True'),
                        ('reshape', '[True, 6]'), ('reshape', '3, T.tensor(2.)'), ('reshape', '3, T.tensor([2])'),
                        ('expand', '2, 3.0'), ('expand', '2.0, 3'), ('permute', '0, 1.0'), ('permute', '0.0, 1'),
                        ('repeat', '1, 2.0'), ('repeat', '2.0'), ('tile', '2.0'), ('tile', '(1, 2.0)'), ('flip', '0.0'),
                        ('flip', '0, 1.0'), ('resize_', '2.0, 3'), ('resize_', '3, 2.5')]] + [
    ('zeros of a list after a tuple', lambda T: T.zeros((2,), 3)),
    ('zeros of a bool first', lambda T: T.zeros(True, 3)),
    ('zeros of a nested tuple', lambda T: T.zeros((2, (3,)))),
    ('zeros of a nested tuple first', lambda T: T.zeros(((2,), 3))),
    # ranges: infinite or NaN bounds and steps, a steps that is no int, randint's overloads
    ('arange to NaN', lambda T: T.arange(NAN)),
    ('arange to infinity', lambda T: T.arange(0, INF)),
    ('arange from minus infinity', lambda T: T.arange(-INF, 2)),
    ('arange by NaN', lambda T: T.arange(0, 1, NAN)),
    ('arange by minus infinity', lambda T: T.arange(0, 1, -INF)),
    ('arange by infinity', lambda T: T.arange(0, 1, INF)),
    ('linspace of negative steps', lambda T: T.linspace(0, 1, -1)),
    ('logspace of negative steps', lambda T: T.logspace(0, 1, -1)),
    ('linspace of float steps', lambda T: T.linspace(0, 1, 2.5)),
    ('linspace of bool steps', lambda T: T.linspace(0.5, T.tensor(1.), True)),
    ('logspace of float steps', lambda T: T.logspace(0, 1, 2.5)),
    ('linspace of tensor steps', lambda T: T.linspace(0, 1, T.tensor(3))),
    ('randint of an int size', lambda T: T.randint(5, 2)),
    ('randint of a float size', lambda T: T.randint(5, 2.0)),
    ('randint without a size', lambda T: T.randint(5)),
    ('randint of three ints', lambda T: T.randint(0, 5, 2)),
    # mean's dtype= must be floating or complex
    ('mean of longs as longs', lambda T: T.tensor([1, 2]).mean(dtype=T.int64)),
    ('mean of floats as ints', lambda T: T.tensor([1., 2.]).mean(dtype=T.int32)),
    ('mean of longs as doubles', lambda T: T.tensor([1, 2]).mean(dtype=T.float64)),
    ('nanmean of floats as longs', lambda T: T.tensor([1., NAN]).nanmean(dtype=T.int64)),
    ('nanmean of floats as bools', lambda T: T.tensor([1., NAN]).nanmean(dtype=T.bool)),
    ('nanmean of longs as doubles', lambda T: T.tensor([1, 2]).nanmean(dtype=T.float64)),
    # nn.functional
    ('binary_cross_entropy of a target above 1', lambda T: T.nn.functional.binary_cross_entropy(T.tensor([.5]), T.tensor([2.]))),
    ('binary_cross_entropy of a negative target', lambda T: T.nn.functional.binary_cross_entropy(T.tensor([.5]), T.tensor([-.1]))),
    ('binary_cross_entropy of a NaN target', lambda T: T.nn.functional.binary_cross_entropy(T.tensor([.5]), T.tensor([NAN]))),
    ('binary_cross_entropy of both out of range', lambda T: T.nn.functional.binary_cross_entropy(T.tensor([1.5]), T.tensor([2.]))),
    ('batch_norm in evaluation without running_mean', lambda T: T.nn.functional.batch_norm(T.ones(2, 3), None, T.ones(3))),
    ('batch_norm in evaluation without running_var', lambda T: T.nn.functional.batch_norm(T.ones(2, 3), T.zeros(3), None)),
    ('batch_norm in evaluation of a wrong running_mean', lambda T: T.nn.functional.batch_norm(T.ones(2, 3), T.ones(4), None)),
    ('batch_norm in training without running stats', lambda T: T.nn.functional.batch_norm(T.arange(6.).reshape(2, 3), None, None, training=True).round(decimals=4)),
    ('conv2d of fewer filters than groups', lambda T: T.nn.functional.conv2d(T.ones(1, 2, 3, 3), T.ones(1, 1, 2, 2), groups=2)),
    ('conv2d of filters not divisible by groups', lambda T: T.nn.functional.conv2d(T.ones(1, 2, 3, 3), T.ones(3, 1, 2, 2), groups=2)),
    ('conv_transpose2d of fewer filters than groups', lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 2, 3, 3), T.ones(1, 1, 2, 2), groups=2)),
    ('conv_transpose2d of filters not divisible by groups', lambda T: T.nn.functional.conv_transpose2d(T.ones(1, 3, 3, 3), T.ones(3, 1, 2, 2), groups=2)),
    ('pad of a str value', lambda T: T.nn.functional.pad(T.ones(2), (1, 1), value='a')),
    ('pad of a complex value', lambda T: T.nn.functional.pad(T.ones(2), (1, 1), value=1j)),
    ('pad of a tensor value', lambda T: T.nn.functional.pad(T.ones(2), (1, 1), value=T.tensor(2.))),
    ('pad of a bool value', lambda T: T.nn.functional.pad(T.ones(2), (1, 1), value=True)),
    ('pad of float sizes', lambda T: T.nn.functional.pad(T.ones(2), (1.5, 1))),
    ('pad of a str size', lambda T: T.nn.functional.pad(T.ones(2), (1, 'a'))),
    # autograd and optimizers
    ('grad of a vector into a tensor that needs none', lambda T: T.autograd.grad(T.ones(2, requires_grad=True) * 2, [T.ones(2)])),
    ('grad of a scalar into a tensor that needs none', lambda T: T.autograd.grad((T.ones(2, requires_grad=True) * 2).sum(), [T.ones(2)])),
    ('grad of a constant', lambda T: T.autograd.grad(T.ones(2), [T.ones(2)])),
    ('backward of a list as gradient', lambda T: T.autograd.backward([T.ones(2, requires_grad=True) * 2], [[1.0, 2.0]])),
    ('backward of an array as gradient', lambda T: T.autograd.backward([T.ones(2, requires_grad=True) * 2], [np.ones(2, np.float32)])),
    ('grad of a number as grad_output', lambda T: (lambda x: T.autograd.grad([x * 2], [x], [3]))(T.ones(2, requires_grad=True))),
    ('set_grad_enabled of an int', lambda T: T.set_grad_enabled(3)),
    ('set_grad_enabled of None', lambda T: T.set_grad_enabled(None)),
    ('SGD of a parameter twice', lambda T: len(T.optim.SGD([T.nn.Parameter(T.ones(2))] * 2, lr=0.1).param_groups[0]['params'])),
    # module-level functions' arguments
    ('typename of a tensor', lambda T: T.typename(T.ones(1, dtype=T.int64))),
    ('typename of a number', lambda T: T.typename(1)),
    ('typename of a module', lambda T: T.typename(T.nn.Linear(1, 1))),
    ('typename of a class', lambda T: T.typename(T.nn.Linear)),
    ('is_nonzero of a zero', lambda T: T.is_nonzero(T.tensor(0.))),
    ('is_nonzero of one element', lambda T: T.is_nonzero(T.tensor([1.5]))),
    ('is_nonzero of a number', lambda T: T.is_nonzero(1)),
    ('is_nonzero of two elements', lambda T: T.is_nonzero(T.tensor([1, 2]))),
    ('is_nonzero of none', lambda T: T.is_nonzero(T.tensor([]))),
    ('is_floating_point of a number', lambda T: T.is_floating_point(1.0)),
    ('numel of a list', lambda T: T.numel([1])),
    ('promote_types of a str', lambda T: T.promote_types('a', T.float16)),
    ('promote_types to a str', lambda T: T.promote_types(T.float16, 'a')),
    ('can_cast of a number', lambda T: T.can_cast(1, T.uint8)),
    ('DataLoader persistent without workers', lambda T: T.utils.data.DataLoader([1, 2], persistent_workers=True)),
    ('DataLoader of a negative prefetch', lambda T: T.utils.data.DataLoader([1, 2], num_workers=1, prefetch_factor=-1)),
] + [(f'can_cast {a} to {b}', lambda T, a=a, b=b: T.can_cast(getattr(T, a), getattr(T, b)))
     for a in ('float32', 'float16', 'bfloat16', 'int8', 'int64', 'uint8', 'bool', 'complex64')
     for b in ('float64', 'int32', 'uint8', 'bool', 'complex128')] + [
    # numbers written into a dtype they do not fit: PyTorch's overflow error (NumPy's OverflowError
    # or warning before), a wrap where PyTorch wraps (two's complement, arithmetic)
] + [(f'{how} {value!r} into {dtype}', lambda T, how=how, value=value, dtype=dtype: {
        'full': lambda: T.full((1,), value, dtype=getattr(T, dtype)),
        'fill_': lambda: T.zeros(1, dtype=getattr(T, dtype)).fill_(value),
        'setitem': lambda: T.zeros(1, dtype=getattr(T, dtype)).__setitem__(0, value),
        'masked_fill': lambda: T.zeros(1, dtype=getattr(T, dtype)).masked_fill(T.tensor([True]), value),
        'clamp': lambda: T.ones(1, dtype=getattr(T, dtype)).clamp(-value, value),
        'where': lambda: T.where(T.tensor([False]), T.ones(1, dtype=getattr(T, dtype)), value)}[how]())
     for how in ('full', 'fill_', 'setitem', 'masked_fill', 'clamp', 'where')
     for value, dtype in ((300, 'uint8'), (-1, 'uint8'), (-255, 'uint8'), (-256, 'uint8'), (255.5, 'uint8'), (-129, 'int8'),
                          (2 ** 63, 'int64'), (1e300, 'float32'), (1e300, 'float16'), (70000, 'float16'),
                          (1e300, 'bfloat16'), (INF, 'float32'), (NAN, 'int8'))
     if not (how == 'clamp' and value == 2 ** 63)] + [  # (PyTorch: no promotion of Long and UInt64)
    ('fill_ of an int beyond 64 bits', lambda T: T.zeros(1).fill_(10 ** 40)),
    ('setitem of an int beyond 64 bits', lambda T: T.zeros(1).__setitem__(0, 2 ** 63)),
    ('scatter of a number that does not fit', lambda T: T.ones(2, dtype=T.int8).scatter(0, T.tensor([0]), 300)),
    ('index_fill_ of a number that does not fit', lambda T: T.ones(2, dtype=T.int8).index_fill_(0, T.tensor([0]), 300)),
] + [(f'{op} of an int8 and {value}', lambda T, op=op, value=value: getattr(T.ones(2, dtype=T.int8), op)(value))
     for op in ('add_', 'sub_', 'mul_', 'add', 'mul') for value in (300, -129)] + [
    # where of two Python numbers: the dtype they take together
    ('where of an int and a float', lambda T: T.where(T.tensor([True, False]), 1, 2.5)),
    ('where of an int and a complex', lambda T: T.where(T.tensor([True, False]), 1j, 2).dtype),
    ('where of two bools', lambda T: T.where(T.tensor([True, False]), True, False)),
    ('where with a long condition', lambda T: T.where(T.tensor([1, 0]), 1, 2)),
    # what programs read of a tensor (issue 22's probe)
    ('nbytes', lambda T: T.ones(2, 3).nbytes),
    ('nbytes of a view', lambda T: T.ones(2, 3)[1:].nbytes),
    ('nbytes of an expanded tensor', lambda T: T.ones(3).expand(2, 3).nbytes),
    ('itemsize', lambda T: T.ones(2, dtype=T.float16).itemsize),
    ('is_signed', lambda T: [T.ones(1, dtype=d).is_signed() for d in (T.uint8, T.bool, T.int8, T.float32, T.complex64)]),
    ('get_device', lambda T: T.ones(2).get_device()),
    ('dim_order', lambda T: T.ones(2, 3).dim_order()),
    ('dim_order of a 0-d tensor', lambda T: T.tensor(3.).dim_order()),
    ('dim_order transposed', lambda T: T.ones(2, 3, 4).transpose(1, 2).dim_order()),
    ('dim_order channels_last', lambda T: T.ones(2, 3, 4, 5).to(memory_format=T.channels_last).dim_order()),
    ('dim_order ambiguous', lambda T: T.ones(1, 2, 3, 4).dim_order(ambiguity_check=True)),
    ('dim_order ambiguous, one format fits', lambda T: T.ones(1, 2, 3, 4).dim_order(
        ambiguity_check=[T.contiguous_format, T.channels_last])),
    ('dim_order of equal strides', lambda T: T.ones(3).expand(2, 3).dim_order(ambiguity_check=True)),
    ('dim_order of a bad check', lambda T: T.ones(2).dim_order(ambiguity_check='ILLEGAL')),
    ('untyped_storage nbytes', lambda T: T.tensor([3., 1, 2]).untyped_storage().nbytes()),
    ('untyped_storage of a view is its base\'s', lambda T: T.arange(6.)[2:].untyped_storage().size()),
    ('untyped_storage shares the data pointer', lambda T: (lambda x: x.untyped_storage().data_ptr() == x.data_ptr())(
        T.arange(6.).view(2, 3).t())),
    ('untyped_storage bytes', lambda T: [T.tensor([1.]).untyped_storage()[i] for i in range(4)]),
    ('untyped_storage written', lambda T: (lambda x: (x.untyped_storage().__setitem__(3, 64), x)[1])(T.zeros(2))),
    ('untyped_storage out of range', lambda T: T.zeros(2).untyped_storage()[8]),
    # NumPy's names that PyTorch's argument parser takes
    ('sum(axis=)', lambda T: T.arange(6.).reshape(2, 3).sum(axis=1)),
    ('sum(axis=, keepdims=)', lambda T: T.sum(T.arange(6.).reshape(2, 3), axis=1, keepdims=True)),
    ('max(axis=)', lambda T: T.arange(6.).reshape(2, 3).max(axis=0)),
    ('cat(axis=)', lambda T: T.cat([T.ones(2), T.zeros(1)], axis=0)),
    ('argsort(axis=)', lambda T: T.tensor([[3, 1], [0, 2]]).argsort(axis=0)),
    ('sum(dim, axis=)', lambda T: T.ones(2, 3).sum(1, axis=0)),
    ('sum(dim=, axis=)', lambda T: T.ones(2, 3).sum(dim=1, axis=0)),
    ('norm(axis=): Python in PyTorch', lambda T: T.norm(T.ones(2, 3), axis=0)),
    ('split(axis=): Python in PyTorch', lambda T: T.split(T.ones(2, 3), 1, axis=0)),
    # to(): non_blocking and copy by position
    ('to(device, dtype, non_blocking)', lambda T: T.ones(2).to('cpu', T.float64, True)),
    ('to(dtype, non_blocking, copy)', lambda T: T.ones(2).to(T.float64, False, True)),
    ('to(tensor, non_blocking, copy) copies', lambda T: (lambda x: x.to(x, False, True) is x)(T.ones(2))),
    ('to(dtype, int)', lambda T: T.ones(2).to(T.float64, 1)),
    ('to(copy=int)', lambda T: T.ones(2).to(T.float64, copy=1)),
    # the parameters PyTorch's parser types by name (keepdim a bool, diagonal an int ...)
    ('sum(keepdim=int)', lambda T: T.ones(2, 3).sum(1, keepdim=2)),
    ('sum(dim, int)', lambda T: T.ones(2, 3).sum(1, 1)),
    ('sum(keepdim=None)', lambda T: T.ones(2, 3).sum(1, keepdim=None)),
    ('sum(keepdim=numpy bool)', lambda T: T.ones(2, 3).sum(1, np.bool_(True))),
    ('amax(keepdim=int)', lambda T: T.amax(T.ones(2, 3), 1, 1)),
    ('topk(largest=int)', lambda T: T.ones(3).topk(1, largest=1)),
    ('topk(k, dim, int)', lambda T: T.ones(3).topk(1, 0, 1)),
    ('triu(float)', lambda T: T.ones(2, 3).triu(1.5)),
    ('torch.triu(x, float)', lambda T: T.triu(T.ones(2, 3), 1.5)),
    ('tril(diagonal=bool)', lambda T: T.ones(2, 3).tril(diagonal=True)),
    ('triu(numpy int)', lambda T: T.ones(2, 3).triu(np.int64(1))),
    ('round(decimals=float)', lambda T: T.ones(2).round(decimals=1.5)),
    ('nan_to_num(nan=str)', lambda T: T.ones(2).nan_to_num(nan='a')),
    ('nan_to_num(nan=None)', lambda T: T.tensor([NAN]).nan_to_num(nan=None)),
    ('nan_to_num(posinf=int)', lambda T: T.tensor([INF]).nan_to_num(posinf=1)),
    ('nan_to_num(posinf=str)', lambda T: T.ones(2).nan_to_num(nan=1, posinf='x')),
    ('topk(float)', lambda T: T.ones(2, 3).topk(2.0)),
    ('torch.topk(x, float)', lambda T: T.topk(T.ones(2, 3), 2.0)),
    ('topk(sorted=int)', lambda T: T.ones(2, 3).topk(2, sorted=1)),
    ('kthvalue(float)', lambda T: T.arange(6.).reshape(2, 3).kthvalue(1.5)),
    ('diagonal(offset=float)', lambda T: T.ones(2, 3).diagonal(offset=1.5)),
    ('diag_embed(offset=float)', lambda T: T.ones(2, 3).diag_embed(offset=1.5)),
    ('chunk(float)', lambda T: T.ones(2, 3).chunk(2.0)),
    ('transpose(float, int)', lambda T: T.ones(2, 3).transpose(0.0, 1)),
    ('torch.transpose(x, int, float)', lambda T: T.transpose(T.ones(2, 3), 0, 1.0)),
    ('rot90(float)', lambda T: T.ones(2, 3).rot90(1.0)),
    ('isclose(equal_nan=int)', lambda T: T.ones(2).isclose(T.ones(2), equal_nan=1)),
    ('isclose(.., int) by position', lambda T: T.ones(2).isclose(T.ones(2), 1e-5, 1e-8, 1)),
    ('tril(diagonal=None)', lambda T: T.ones(2, 3).tril(diagonal=None)),
    # an op's own typed parameters (a dim that is one int)
    ('cumsum(float)', lambda T: T.ones(2, 3).cumsum(1.0)),
    ('torch.cumsum(x, float)', lambda T: T.cumsum(T.ones(2, 3), 1.0)),
    ('cumsum(str)', lambda T: T.ones(2, 3).cumsum('a')),
    ('cumprod(dim=float)', lambda T: T.ones(2, 3).cumprod(dim=1.0)),
    ('softmax(float)', lambda T: T.ones(2, 3).softmax(1.0)),
    ('softmax(None)', lambda T: T.ones(2, 3).softmax(None)),
    ('torch.softmax(x, float)', lambda T: T.softmax(T.ones(2, 3), 1.0)),
    ('unsqueeze(float)', lambda T: T.ones(2, 3).unsqueeze(1.0)),
    ('unsqueeze(None)', lambda T: T.ones(2, 3).unsqueeze(None)),
    ('select(dim, float)', lambda T: T.ones(2, 3).select(0, 1.0)),
    ('select(float, index)', lambda T: T.ones(2, 3).select(0.0, 1)),
    ('index_select(float, index)', lambda T: T.ones(2, 3).index_select(0.0, T.tensor([0]))),
    ('gather(float, index)', lambda T: T.ones(2, 3).gather(1.0, T.tensor([[0]]))),
    ('logcumsumexp(float)', lambda T: T.ones(2, 3).logcumsumexp(1.0)),
    ('cummax(float)', lambda T: T.ones(2, 3).cummax(1.0)),
    ('cat(tensors, float)', lambda T: T.cat([T.ones(2), T.ones(2)], 0.0)),
    ('cat(tensors, dim=None)', lambda T: T.cat([T.ones(2), T.ones(2)], dim=None)),
    ('stack(tensors, float)', lambda T: T.stack([T.ones(2), T.ones(2)], 0.0)),
    ('storage_offset(1)', lambda T: T.ones(2).storage_offset(1)),
    ('size(float)', lambda T: T.ones(2, 3).size(1.0)),
    ('size(str)', lambda T: T.ones(2, 3).size('a')),
    ('stride(float)', lambda T: T.ones(2, 3).stride(1.0)),
    ('size(0-d tensor)', lambda T: T.ones(2, 3).size(T.tensor(1))),
    # messages of the wrong calls (issue 22's probe)
    ('cumsum() without dim', lambda T: T.ones(2, 3).cumsum()),
    ('softmax() without dim', lambda T: T.ones(2, 3).softmax()),
    ('torch.cumsum(x) without dim', lambda T: T.cumsum(T.ones(2, 3))),
    ('sum(axis=) keeps no dim missing', lambda T: T.ones(2, 3).cumsum(axis=1)),
    ('item(0)', lambda T: T.ones(1).item(0)),
    ('item(keyword)', lambda T: T.ones(1).item(a=1)),
    ('tolist(1)', lambda T: T.ones(1).tolist(1)),
    ('zero_(1)', lambda T: T.ones(2).zero_(1)),
    ('new_full(int, value)', lambda T: T.ones(2).new_full(2, 3)),
    ('new_zeros(float)', lambda T: T.ones(2).new_zeros(2.0)),
    ('new_ones(int, float)', lambda T: T.ones(2).new_ones(2, 3.)),
    ('new_empty(str)', lambda T: T.ones(2).new_empty('a')),
    ('new_full(size, str)', lambda T: T.ones(2).new_full((2,), 'a')),
    ('full_like(x, str)', lambda T: T.full_like(T.ones(2), 'a')),
    ('zeros_like(list)', lambda T: T.zeros_like([1, 2])),
    ('ones_like(list)', lambda T: T.ones_like([1, 2])),
    ('full_like(list, 1)', lambda T: T.full_like([1, 2], 1)),
    ('Tensor.equal(list)', lambda T: T.ones(3).equal([1, 1, 1])),
    ('torch.equal(x, list)', lambda T: T.equal(T.ones(3), [1, 1, 1])),
    ('addcdiv of integers', lambda T: T.ones(3).addcdiv(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64))),
    ('allclose(rtol<0)', lambda T: T.ones(3).allclose(T.ones(3), rtol=-1)),
    ('isclose(atol<0)', lambda T: T.isclose(T.ones(3), T.ones(3), atol=-1.5)),
    # ops with several signatures: each call binds one, or PyTorch's list of them
    ('sort(descending=int)', lambda T: T.tensor([1, 2]).sort(descending=1)),
    ('torch.sort(x, descending=int)', lambda T: T.sort(T.tensor([1, 2]), descending=1)),
    ('sort(dim, int)', lambda T: T.ones(2, 3).sort(1, 1)),
    ('sort(stable=int)', lambda T: T.ones(2, 3).sort(stable=1)),
    ('sort(stable=None)', lambda T: T.tensor([2, 1]).sort(dim=0, stable=None)),
    ('sort(stable=True, dim=, descending=)', lambda T: T.sort(T.tensor([1, 3, 2]), stable=True, dim=0, descending=True)),
    ('sort(float)', lambda T: T.sort(T.ones(2), 1.5)),
    ('var(dim, unbiased=, correction=)', lambda T: T.arange(6.).reshape(2, 3).var(1, unbiased=True, correction=1)),
    ('torch.var(x, dim, unbiased=, correction=)', lambda T: T.var(T.ones(2, 3), 1, unbiased=True, correction=1)),
    ('std(dim, int)', lambda T: T.ones(2, 3).std(1, 1)),
    ('var(unbiased=int)', lambda T: T.ones(2, 3).var(unbiased=1)),
    ('var(dim, keepdim=int)', lambda T: T.ones(2, 3).var(1, keepdim=1)),
    ('var(bool)', lambda T: T.arange(6.).var(True)),
    ('var(dim, correction=float)', lambda T: T.arange(6.).reshape(2, 3).var(1, correction=1.5)),
    ('var_mean(x, float)', lambda T: T.var_mean(T.ones(2, 3), 1.5)),
    ('std_mean(x, float)', lambda T: T.std_mean(T.ones(2, 3), 1.5)),
    ('prod(dim=tuple)', lambda T: T.arange(6.).reshape(2, 3).prod(dim=(0, 1))),
    ('torch.prod(x, tuple)', lambda T: T.prod(T.ones(2, 3), (0, 1))),
    ('prod(dim, keepdim=int)', lambda T: T.ones(2, 3).prod(1, keepdim=1)),
    ('prod(dim, dtype=)', lambda T: T.arange(1., 7.).reshape(2, 3).prod(1, dtype=T.float64)),
    # a string where a number belongs: PyTorch's TypeError, not NumPy's error
    ('clamp(min=str)', lambda T: T.ones(2, 3).clamp(min='a')),
    ('torch.clamp(x, str)', lambda T: T.clamp(T.ones(2, 3), 'a')),
    ('masked_fill(mask, str)', lambda T: T.ones(2, 3).masked_fill(T.ones(2, 3).bool(), 'a')),
    ('torch.masked_fill(x, mask, str)', lambda T: T.masked_fill(T.ones(2, 3), T.ones(2, 3).bool(), 'a')),
    ('lerp(end, str)', lambda T: T.ones(2, 3).lerp(T.ones(2, 3), 'a')),
    ('torch.lerp(x, end, str)', lambda T: T.lerp(T.ones(2, 3), T.ones(2, 3), 'a')),
    ('masked_fill of a float mask still its own error', lambda T: T.ones(2).masked_fill(T.ones(2), 1.)),
    # a number beside a tensor bound: no overload binds them, unless the tensor reads as a number
    # (0-d, requiring no grad), as the parser reads any number argument
    ('clamp(x, number, tensor)', lambda T: T.clamp(T.arange(3.), 0.5, T.ones(3))),
    ('clamp(x, tensor, number)', lambda T: T.clamp(T.arange(3.), T.zeros(3), 1.0)),
    ('clamp(x, min=number, max=tensor)', lambda T: T.clamp(T.arange(3.), min=0.5, max=T.ones(3))),
    ('clamp(x, number, one-element tensor)', lambda T: T.clamp(T.arange(3.), 0.5, T.ones(1))),
    ('clamp(x, number, 0-d tensor) reads it as a number', lambda T: T.clamp(T.arange(3), 0, T.tensor(1.5).double())),
    ('clamp(x, number, 0-d tensor requiring grad)', lambda T: T.clamp(T.arange(3.), 0.5, T.tensor(1., requires_grad=True))),
    ('clamp(x, number, out=) of a tensor bound', lambda T: T.clamp(T.arange(3.), 0.5, T.ones(3), out=T.empty(3))),
    ('x.clamp(number, tensor)', lambda T: T.arange(3.).clamp(0.5, T.ones(3))),
    ('x.clamp_(number, tensor)', lambda T: T.arange(3.).clamp_(0.5, T.ones(3))),
    ('torch.clamp_(x, number, tensor)', lambda T: T.clamp_(T.arange(3.), 0.5, T.ones(3))),
    ('clip(x, number, tensor)', lambda T: T.clip(T.arange(3.), 0.5, T.ones(3))),
    ('x.clip_(number, tensor)', lambda T: T.arange(3.).clip_(0.5, T.ones(3))),
    ('torch.clip(x, str)', lambda T: T.clip(T.ones(2, 3), 'a')),
    ('leaf.clamp_(number, tensor): the TypeError first', lambda T: T.ones(3, requires_grad=True).clamp_(0.5, T.ones(3))),
    # norm as torch.norm: an order named by a string is linalg.matrix_norm's
    ('norm(p=str)', lambda T: T.arange(6.).reshape(2, 3).norm(p='abc')),
    ('norm(p=str) of a vector', lambda T: T.ones(3).norm(p='abc')),
    ('norm(p=str, dim=int)', lambda T: T.ones(2, 3).norm(p='abc', dim=1)),
    ('norm(p=nuc, dim=int)', lambda T: T.ones(2, 3).norm(p='nuc', dim=1)),
    ('norm(p=nuc) of a vector', lambda T: T.ones(3).norm(p='nuc')),
    ('norm(p=nuc) of 3 dims', lambda T: T.ones(2, 3, 4).norm(p='nuc')),
    ('norm(p=fro) over 3 dims', lambda T: T.ones(2, 3, 4).norm(p='fro', dim=(0, 1, 2))),
    ('norm(p=nuc, dim=pair) of 3 dims', lambda T: T.arange(24.).reshape(2, 3, 4).norm(p='nuc', dim=(1, 2)).round(decimals=3)),
    ('norm(p=list)', lambda T: T.ones(2, 3).norm(p=[1])),
    ('matrix_norm of equal dims', lambda T: T.linalg.matrix_norm(T.ones(3, 3), 2, dim=(0, 0))),
    ('matrix_norm of an integer tensor, bad order', lambda T: T.linalg.matrix_norm(T.ones(3, 3, dtype=T.int64), 3)),
    ('vector_norm(ord=str)', lambda T: T.linalg.vector_norm(T.ones(3), 'fro')),
    # the transposes
    ('H of a vector', lambda T: T.ones(3).H),
    ('H of a batch', lambda T: T.ones(2, 2, 2).H),
    ('mT of a vector', lambda T: T.ones(3).mT),
    ('adjoint of a vector', lambda T: T.ones(3).adjoint()),
    # a dtype that is a string or NumPy's: refused, not read as the dtype it names
    ('ones(dtype=str)', lambda T: T.ones(2, dtype='float32')),
    ('empty(dtype=str)', lambda T: T.empty(2, dtype='float32')),
    ('zeros(dtype=NumPy type)', lambda T: T.zeros(2, dtype=np.float32)),
    ('zeros(dtype=NumPy dtype)', lambda T: T.zeros(2, dtype=np.dtype('float32'))),
    ('ones(dtype=float)', lambda T: T.ones(2, dtype=float)),
    ('tensor(dtype=str)', lambda T: T.tensor([1.], dtype='float32')),
    ('tensor(dtype=NumPy type)', lambda T: T.tensor([1.], dtype=np.float64)),
    ('as_tensor(dtype=str)', lambda T: T.as_tensor([1.], dtype='float32')),
    ('full(dtype=str)', lambda T: T.full((2,), 1., dtype='float32')),
    ('ones_like(dtype=str)', lambda T: T.ones_like(T.ones(2), dtype='float32')),
    ('new_ones(dtype=str)', lambda T: T.ones(2).new_ones((2,), dtype='float')),
    ('new_tensor(dtype=str)', lambda T: T.ones(2).new_tensor([1], dtype='float')),
    ('to(NumPy type)', lambda T: T.ones(2).to(np.float32)),
    ('to(dtype=str)', lambda T: T.ones(2).to(dtype='float32')),
    ('to(tensor, dtype=str)', lambda T: T.ones(2).to(T.ones(2), dtype='float32')),
    ('to(dtype=float)', lambda T: T.ones(2).to(dtype=float)),
    ('sum(dim, dtype=NumPy type)', lambda T: T.ones(2, 3).sum(1, dtype=np.float64)),
    ('mean(dtype=str)', lambda T: T.ones(2, 3).mean(1, dtype='float64')),
    ('cumsum(dtype=str)', lambda T: T.ones(2, 3).cumsum(1, dtype='float64')),
    ('softmax method (dtype=str)', lambda T: T.ones(2, 3).softmax(1, dtype='float64')),
    ('log_softmax(dtype=str)', lambda T: T.ones(2, 3).log_softmax(1, dtype='float64')),
    ('F.softmax(dtype=str)', lambda T: T.nn.functional.softmax(T.ones(2, 3), 1, dtype='float64')),
    ('F.softmin(dtype=str)', lambda T: T.nn.functional.softmin(T.ones(2, 3), 1, dtype='float64')),
    ('set_default_dtype(str)', lambda T: T.set_default_dtype('float32')),
    ('set_default_dtype(float)', lambda T: T.set_default_dtype(float)),
    ('view(str)', lambda T: T.ones(6).view('float32')),
    ('view(None)', lambda T: T.ones(6).view(None)),
    ('view(float, int)', lambda T: T.ones(6).view(3.0, 2)),
    ('view(NumPy int)', lambda T: T.ones(6).view(np.int64(6))),
    ('type(legacy name)', lambda T: T.ones(2).type(T.__name__ + '.DoubleTensor')),
    # numbers where PyTorch's parser wants a bool or an int
    ('requires_grad_(1)', lambda T: T.ones(2).requires_grad_(1)),
    ('requires_grad_(str)', lambda T: T.ones(2).requires_grad_('yes')),
    ('requires_grad_(NumPy bool)', lambda T: T.ones(2).requires_grad_(np.bool_(True))),
    ('randint(float high, size)', lambda T: T.randint(5.5, (2,))),
    ('randint(low, float high, size)', lambda T: T.randint(0, 5.5, (2,))),
    ('randint(NumPy int high)', lambda T: T.randint(np.int64(5), (2,)).shape),
    # add's and sub's alpha: a number, taken as a Python number (a NumPy float64 does not promote)
    ('add(alpha=str)', lambda T: T.ones(2).add(1, alpha='a')),
    ('add(alpha=None)', lambda T: T.ones(2).add(1, alpha=None)),
    ('add(alpha=list)', lambda T: T.ones(2).add(1, alpha=[1])),
    ('add(alpha=NumPy float64)', lambda T: T.ones(2).add(1, alpha=np.float64(2.))),
    ('add(alpha=0-dim tensor)', lambda T: T.ones(2).add(1, alpha=T.tensor(2.))),
    ('add(alpha=complex) of floats', lambda T: T.ones(2).add(1, alpha=1j)),
    ('add(alpha=complex) of a complex other', lambda T: T.ones(2).add(T.ones(2) * 1j, alpha=1j).imag),
    ('function add(alpha=str)', lambda T: T.add(T.ones(2), T.ones(2), alpha='a')),
    ('sub(alpha=str)', lambda T: T.ones(2).sub(1, alpha='a')),
    ('add_(alpha=str)', lambda T: T.ones(2).add_(1, alpha='a')),
    ('sub_(alpha=complex)', lambda T: T.ones(2).sub_(1, alpha=1j)),
    ('add_(alpha=True) of bools', lambda T: T.ones(2, dtype=T.bool).add_(True, alpha=True)),
    ('add_(alpha=True) of floats', lambda T: T.ones(2).add_(1, alpha=True)),
    ('where(c, number, str)', lambda T: T.where(T.tensor([True]), 1, 'a')),
    ('where(c, str, tensor)', lambda T: T.where(T.tensor([True]), 'a', T.ones(1))),
    # sizes and dims that are floats (PyTorch's parser refuses them; none is truncated)
    ('sum(float dim)', lambda T: T.ones(2, 3).sum(1.0)),
    ('sum(tuple of a float dim)', lambda T: T.ones(2, 3).sum((1.0,))),
    ('narrow(float start)', lambda T: T.ones(2, 3).narrow(1, 0.0, 2)),
    ('narrow(float length)', lambda T: T.ones(2, 3).narrow(1, 0, 2.0)),
    ('function narrow(float start)', lambda T: T.narrow(T.ones(2, 3), 1, 0.0, 2)),
    ('split(float)', lambda T: T.ones(2, 3).split(1.5)),
    ('function split(float)', lambda T: T.split(T.ones(2, 3), 1.5)),
    ('split(list of floats)', lambda T: T.ones(2, 3).split([1.5, 0.5])),
    ('split(tensor of sizes)', lambda T: T.ones(2, 3).split(T.tensor([1, 1]))),
    ('split(Size)', lambda T: len(T.ones(2, 3).split(T.Size([1, 1])))),
    ('arange(str)', lambda T: T.arange('a')),
    ('arange(int, str)', lambda T: T.arange(0, 'a')),
    ('arange(int, int, str)', lambda T: T.arange(0, 5, 'a')),
    ('eye(int, float)', lambda T: T.eye(2, 3.0)),
    ('eye(float)', lambda T: T.eye(2.0)),
    ('ones(requires_grad=1)', lambda T: T.ones(2, requires_grad=1)),
    ('tensor(requires_grad=1)', lambda T: T.tensor([1.], requires_grad=1)),
    ('zeros(requires_grad=str)', lambda T: T.zeros(2, requires_grad='yes')),
    ('vector_norm(dtype=str)', lambda T: T.linalg.vector_norm(T.ones(2), dtype='float64')),
    ('to(device, str)', lambda T: T.ones(2).to(T.device('cpu'), 'float32')),
    ('to(str, str)', lambda T: T.ones(2).to('cpu', 'float32')),
    ('amax(float dim)', lambda T: T.ones(2, 3).amax(0.0)),
    ('amin(float dim)', lambda T: T.ones(2, 3).amin(0.0)),
    ('function amax(float dim)', lambda T: T.amax(T.ones(2, 3), 0.0)),
    ('amax(dim=None)', lambda T: T.ones(2, 3).amax(dim=None)),
    ('amax(0-dim tensor dim)', lambda T: T.ones(2, 3).amax(T.tensor(0))),
    ('argmax(float dim)', lambda T: T.ones(2, 3).argmax(0.0)),
    ('argmin(float dim)', lambda T: T.ones(2, 3).argmin(dim=1.0)),
    ('argmax(None)', lambda T: T.ones(2, 3).argmax(None)),
    ('median(float dim)', lambda T: T.ones(2, 3).median(0.0)),
    ('median(None)', lambda T: T.ones(2, 3).median(None)),
    ('nanmedian(float dim)', lambda T: T.ones(2, 3).nanmedian(0.0)),
    ('mode(float dim)', lambda T: T.ones(2, 3).mode(0.0)),
    ('logsumexp(float dim)', lambda T: T.ones(2, 3).logsumexp(0.0)),
    ('logsumexp(None)', lambda T: T.ones(2, 3).logsumexp(None)),
    ('mean(float dim)', lambda T: T.ones(2, 3).mean(0.0)),
    ('mean(tuple of a float dim)', lambda T: T.ones(2, 3).mean((0.0,))),
    # a 'Number' parameter given a tensor that requires grad (its number would drop the gradient),
    # a tensor of one dim or more, a string or None
    ('full of a tensor requiring grad', lambda T: T.full((2,), T.tensor(0.5, requires_grad=True))),
    ('full_like of a tensor requiring grad', lambda T: T.full_like(T.ones(2), T.tensor(0.5, requires_grad=True))),
    ('new_full of a tensor requiring grad', lambda T: T.ones(2).new_full((2,), T.tensor(0.5, requires_grad=True))),
    ('leaky_relu slope requiring grad', lambda T: T.nn.functional.leaky_relu(
        T.ones(2), negative_slope=T.tensor(0.5, requires_grad=True))),
    ('leaky_relu slope of one dim', lambda T: T.nn.functional.leaky_relu(T.ones(2), T.tensor([0.5]))),
    ('leaky_relu slope of two', lambda T: T.nn.functional.leaky_relu(T.ones(2), T.tensor([0.5, 0.2]))),
    ('leaky_relu slope None', lambda T: T.nn.functional.leaky_relu(T.ones(2), None)),
    ('leaky_relu_ slope requiring grad', lambda T: T.nn.functional.leaky_relu_(
        T.ones(2), T.tensor(0.5, requires_grad=True))),
    ('LeakyReLU slope requiring grad', lambda T: T.nn.LeakyReLU(T.tensor(0.5, requires_grad=True))(T.ones(2))),
    ('softplus beta requiring grad', lambda T: T.nn.functional.softplus(T.ones(2), T.tensor(2., requires_grad=True))),
    ('softplus beta str', lambda T: T.nn.functional.softplus(T.ones(2), 'a')),
    ('softplus threshold of one dim', lambda T: T.nn.functional.softplus(T.ones(2), 1, T.tensor([2.]))),
    ('threshold requiring grad', lambda T: T.nn.functional.threshold(T.ones(2), T.tensor(0.5, requires_grad=True), 0.)),
    ('threshold value of one dim', lambda T: T.threshold(T.ones(2), 0.5, T.tensor([0.]))),
    ('threshold_ requiring grad', lambda T: T.nn.functional.threshold_(T.ones(2), T.tensor(0.5, requires_grad=True), 0.)),
    ('hardtanh min requiring grad', lambda T: T.nn.functional.hardtanh(T.ones(2), T.tensor(0.5, requires_grad=True), 1.)),
    ('hardtanh max of one dim', lambda T: T.nn.functional.hardtanh(T.ones(2), -1., T.tensor([1.]))),
    ('hardtanh_ min requiring grad', lambda T: T.nn.functional.hardtanh_(T.ones(2), T.tensor(0.5, requires_grad=True))),
    ('elu alpha requiring grad', lambda T: T.nn.functional.elu(T.ones(2), alpha=T.tensor(0.5, requires_grad=True))),
    ('elu alpha str', lambda T: T.nn.functional.elu(T.ones(2), 'a')),
    ('elu_ alpha of one dim', lambda T: T.nn.functional.elu_(T.ones(2), T.tensor([0.5]))),
    ('celu alpha requiring grad', lambda T: T.nn.functional.celu(T.ones(2), T.tensor(0.5, requires_grad=True))),
    ('celu_ alpha None', lambda T: T.nn.functional.celu_(T.ones(2), None)),
    ('hardshrink lambd requiring grad', lambda T: T.hardshrink(T.ones(2), T.tensor(0.5, requires_grad=True))),
    ('softshrink lambd str', lambda T: T.nn.functional.softshrink(T.ones(2), 'a')),
    ('rrelu lower requiring grad', lambda T: T.nn.functional.rrelu(T.ones(2), T.tensor(0.1, requires_grad=True))),
    ('rrelu upper str', lambda T: T.nn.functional.rrelu(T.ones(2), 0.1, 'a')),
    ('rrelu_ lower of one dim', lambda T: T.nn.functional.rrelu_(T.ones(2), T.tensor([0.1]))),
    # a dim given as a 0-dim integer tensor: the int it holds (PyTorch's parser reads its __index__)
    ('sum(0-dim tensor dim)', lambda T: _x(T).sum(T.tensor(0))),
    ('sum(dim=0-dim int32 tensor)', lambda T: _x(T).sum(dim=T.tensor(1, dtype=T.int32))),
    ('sum(2-element tensor dim)', lambda T: _x(T).sum(T.tensor([0, 1]))),
    ('mean(0-dim tensor dim)', lambda T: _x(T).mean(T.tensor(0))),
    ('std(0-dim tensor dim)', lambda T: _x(T).std(T.tensor(0), keepdim=True)),
    ('var(0-dim tensor dim)', lambda T: _x(T).var(T.tensor(1))),
    ('var_mean(0-dim tensor dim)', lambda T: T.var_mean(_x(T), T.tensor(0))),
    ('nanmean(0-dim tensor dim)', lambda T: _x(T).nanmean(T.tensor(0))),
    ('logsumexp(0-dim tensor dim)', lambda T: _x(T).logsumexp(T.tensor(0))),
    ('cumsum(0-dim tensor dim)', lambda T: _x(T).cumsum(T.tensor(0))),
    ('cumprod(0-dim tensor dim)', lambda T: _x(T).cumprod(T.tensor(1))),
    ('logcumsumexp(0-dim tensor dim)', lambda T: _x(T).logcumsumexp(T.tensor(0))),
    ('prod(0-dim tensor dim)', lambda T: _x(T).prod(T.tensor(0))),
    ('all(0-dim tensor dim)', lambda T: _x(T).all(T.tensor(0))),
    ('any(0-dim tensor dim)', lambda T: _x(T).any(T.tensor(1))),
    ('count_nonzero(0-dim tensor dim)', lambda T: _x(T).count_nonzero(T.tensor(0))),
    ('softmax(0-dim tensor dim)', lambda T: T.zeros(2, 3).softmax(T.tensor(1))),
    ('squeeze(0-dim tensor dim)', lambda T: T.ones(1, 3).squeeze(T.tensor(0))),
    ('narrow(0-dim tensor dim)', lambda T: _x(T).narrow(T.tensor(0), 0, 1)),
    ('unbind(0-dim tensor dim)', lambda T: _x(T).unbind(T.tensor(1))),
    ('chunk(0-dim tensor dim)', lambda T: _x(T).chunk(2, T.tensor(1))),
    ('split(0-dim tensor dim)', lambda T: _x(T).split(1, T.tensor(1))),
    ('tensor_split(0-dim tensor dim)', lambda T: _x(T).tensor_split(2, T.tensor(1))),
    ('diff(0-dim tensor dim)', lambda T: _x(T).diff(dim=T.tensor(0))),
    ('roll(1, 0-dim tensor dim)', lambda T: _x(T).roll(1, T.tensor(0))),
    ('roll(0-dim tensor shift, 0)', lambda T: _x(T).roll(T.tensor(1), 0)),
    ('movedim(0-dim tensor dim)', lambda T: _x(T).movedim(T.tensor(0), 1)),
    ('moveaxis(0-dim tensor dim)', lambda T: _x(T).moveaxis(T.tensor(0), 1)),
    ('norm(2, 0-dim tensor dim)', lambda T: _x(T).norm(2, T.tensor(0))),
    ('normalize(dim=0-dim tensor)', lambda T: T.nn.functional.normalize(_x(T), dim=T.tensor(0))),
    ('cosine_similarity(0-dim tensor dim)', lambda T: T.nn.functional.cosine_similarity(_x(T), _x(T), T.tensor(0))),
    # a dim that is no int: PyTorch's parser's TypeError, or its listing of the overloads
    ('squeeze(float dim)', lambda T: _x(T).squeeze(0.0)),
    ('function squeeze(float dim)', lambda T: T.squeeze(_x(T), 0.0)),
    ('squeeze(dim=float)', lambda T: _x(T).squeeze(dim=0.0)),
    ('flatten(float start_dim)', lambda T: _x(T).flatten(0.0)),
    ('flatten(float end_dim)', lambda T: _x(T).flatten(0, 1.0)),
    ('flatten(None)', lambda T: _x(T).flatten(None)),
    ('max(float dim)', lambda T: _x(T).max(0.5)),
    ('max(None)', lambda T: _x(T).max(None)),
    ('max(dim=float)', lambda T: _x(T).max(dim=0.5)),
    ('function max(float dim)', lambda T: T.max(_x(T), 0.5)),
    ('min(float dim, keepdim)', lambda T: _x(T).min(0.5, True)),
    ('roll(1, float dim)', lambda T: _x(T).roll(1, 0.0)),
    ('roll(float shift)', lambda T: _x(T).roll(1.0, 0)),
    ('roll(float shift in a tuple)', lambda T: _x(T).roll((1.5,), (0,))),
    ('roll(float dim in a tuple)', lambda T: _x(T).roll((1, 1), (0, 1.0))),
    ('roll(1, None dims given)', lambda T: _x(T).roll(None)),
    ('movedim(float source)', lambda T: _x(T).movedim(0.0, 1)),
    ('movedim(float destination)', lambda T: _x(T).movedim(0, 1.0)),
    ('movedim(None source)', lambda T: _x(T).movedim(None, 1)),
    ('unbind(float dim)', lambda T: _x(T).unbind(0.0)),
    ('function unbind(float dim)', lambda T: T.unbind(_x(T), 0.0)),
    ('unbind(None)', lambda T: _x(T).unbind(None)),
    ('unfold(float dimension)', lambda T: _x(T).unfold(0.0, 2, 1)),
    ('unfold(float size)', lambda T: _x(T).unfold(0, 2.0, 1)),
    ('unfold(float step)', lambda T: _x(T).unfold(0, 2, 1.0)),
    ('chunk(float dim)', lambda T: _x(T).chunk(2, 0.0)),
    ('function chunk(float dim)', lambda T: T.chunk(_x(T), 2, 0.0)),
    ('split(float dim)', lambda T: _x(T).split(1, 0.0)),
    ('function split(dim=float)', lambda T: T.split(_x(T), 1, dim=0.0)),
    ('topk(float dim)', lambda T: _x(T).topk(1, 0.0)),
    ('kthvalue(float dim)', lambda T: _x(T).kthvalue(1, 0.0)),
    ('any(float dim)', lambda T: _x(T).any(0.0)),
    ('all(float dim)', lambda T: _x(T).all(0.0)),
    ('all(dim=float)', lambda T: _x(T).all(dim=0.0)),
    ('all(dim, int keepdim)', lambda T: _x(T).all(1, 1)),
    ('function any(dim, int keepdim)', lambda T: T.any(_x(T), 1, 1)),
    ('count_nonzero(float dim)', lambda T: _x(T).count_nonzero(0.0)),
    ('count_nonzero(dim=float)', lambda T: _x(T).count_nonzero(dim=0.0)),
    ('nansum(float dim)', lambda T: _x(T).nansum(0.0)),
    ('nansum(tuple of a float dim)', lambda T: _x(T).nansum((0.0,))),
    ('function nansum(float dim)', lambda T: T.nansum(_x(T), 0.0)),
    ('sum(four ints)', lambda T: _x(T).sum(1, 2, 3, 4)),
    ('function mean(dim, int keepdim)', lambda T: T.mean(_x(T), 0, 1)),
    ('tensor_split(2, float dim)', lambda T: _x(T).tensor_split(2, 0.0)),
    ('diff(dim=float)', lambda T: _x(T).diff(dim=0.0)),
    ('norm(2, float dim)', lambda T: _x(T).norm(2, 0.0)),
    ('normalize(dim=float)', lambda T: T.nn.functional.normalize(_x(T), dim=0.0)),
    # an operand that is neither a tensor nor a number: the operator returns NotImplemented, and
    # Python's own error follows (or the other operand's answer: test_operators_defer_...)
    ('tensor + str', lambda T: _x(T) + 'a'),
    ('str + tensor', lambda T: 'a' + _x(T)),
    ('tensor - str', lambda T: _x(T) - 'a'),
    ('str - tensor', lambda T: 'a' - _x(T)),
    ('tensor * str', lambda T: _x(T) * 'a'),
    ('str * tensor', lambda T: 'a' * _x(T)),
    ('tensor * tuple', lambda T: _x(T) * (1, 2)),
    ('tensor / str', lambda T: _x(T) / 'a'),
    ('str / tensor', lambda T: 'a' / _x(T)),
    ('tensor ** str', lambda T: _x(T) ** 'a'),
    ('str ** tensor', lambda T: 'a' ** _x(T)),
    ('tensor // str', lambda T: _x(T) // 'a'),
    ('str // tensor', lambda T: 'a' // _x(T)),
    ('tensor % str', lambda T: _x(T) % 'a'),
    ('tensor & str', lambda T: _x(T).long() & 'a'),
    ('str & tensor', lambda T: 'a' & _x(T).long()),
    ('tensor | str', lambda T: _x(T).long() | 'a'),
    ('tensor ^ None', lambda T: _x(T).long() ^ None),
    ('tensor + None', lambda T: _x(T) + None),
    ('tensor + list', lambda T: _x(T) + [1., 2., 3.]),
    ('list + tensor', lambda T: [1., 2., 3.] + _x(T)),
    ('tensor + dict', lambda T: _x(T) + {}),
    ('tensor + object', lambda T: _x(T) + object()),
    # no size given at all (() is the 0-dim size): refused, not a 0-dim tensor
    ('zeros()', lambda T: T.zeros()),
    ('ones()', lambda T: T.ones()),
    ('empty()', lambda T: T.empty()),
    ('rand()', lambda T: T.rand()),
    ('randn()', lambda T: T.randn()),
    ('new_zeros()', lambda T: _x(T).new_zeros()),
    ('new_ones()', lambda T: _x(T).new_ones()),
    ('view()', lambda T: _x(T).view()),
    ('reshape()', lambda T: _x(T).reshape()),
    ('function reshape without shape', lambda T: T.reshape(_x(T))),
    ('permute()', lambda T: _x(T).permute()),
    ('expand()', lambda T: _x(T).expand()),
    ('repeat()', lambda T: _x(T).repeat()),
    ('flip()', lambda T: _x(T).flip()),
    # a number where the op's first argument, a tensor, belongs
    ('exp(float)', lambda T: T.exp(1.0)),
    ('sin(int)', lambda T: T.sin(1)),
    ('tanh(None)', lambda T: T.tanh(None)),
    ('sqrt(str)', lambda T: T.sqrt('a')),
    ('log(NumPy float)', lambda T: T.log(np.float64(1.0))),
    ('exp(list)', lambda T: T.exp([1.0])),
    ('abs(int)', lambda T: T.abs(1)),
    ('neg(int)', lambda T: T.neg(1)),
    ('floor(float)', lambda T: T.floor(1.5)),
    # in place: the method's parser error; the augmented assignment, Python's (no NumPy error)
    ('add_(str)', lambda T: _x(T).add_('a')),
    ('sub_(list)', lambda T: _x(T).sub_([1., 2., 3.])),
    ('mul_(None)', lambda T: _x(T).mul_(None)),
    ('div_(str)', lambda T: _x(T).div_('a')),
    ('tensor += str', lambda T: exec("x = T.ones(2)\nx += 'a'", {'T': T})),
    ('tensor -= None', lambda T: exec('x = T.ones(2)\nx -= None', {'T': T})),
    ('tensor *= str', lambda T: exec("x = T.ones(2)\nx *= 'a'", {'T': T})),
    ('tensor /= list', lambda T: exec('x = T.ones(2)\nx /= []', {'T': T})),
    # two numbers: add, sub, mul and div take a number for input as a 0-dim tensor
    ('add of two ints', lambda T: T.add(1, 2)),
    ('mul of two ints', lambda T: T.mul(2, 3)),
    ('sub of two ints', lambda T: T.sub(5, 2)),
    ('div of two ints', lambda T: T.div(1, 2)),
    ('add of a float and an int', lambda T: T.add(1.5, 2)),
    ('add of an int and a float', lambda T: T.add(1, 2.5)),
    ('mul of a bool and an int', lambda T: T.mul(True, 3)),
    ('mul of two bools', lambda T: T.mul(True, True)),
    ('add of two ints with alpha', lambda T: T.add(1, 2, alpha=2)),
    ('add of two ints with a float alpha', lambda T: T.add(1, 2, alpha=2.5)),
    ('sub of a bool', lambda T: T.sub(True, 1)),
    ('add of a complex', lambda T: (lambda r: (r.dtype, r.real, r.imag))(T.add(1 + 2j, 1))),
    ('div of a float by zero', lambda T: T.div(1.0, 0)),
    ('subtract of two ints by keyword', lambda T: T.subtract(input=5, other=2)),
    ('multiply of two ints', lambda T: T.multiply(2, 3)),
    ('true_divide of two ints', lambda T: T.true_divide(1, 2)),
    ('add of two ints into out', lambda T: T.add(1, 2, out=T.empty(0))),
    ('add of an int and a str', lambda T: T.add(1, 'a')),
    ('add of a str and a tensor', lambda T: T.add('a', T.ones(2))),
    ('mul of a list and an int', lambda T: T.mul([1.], 2)),
    ('sub of None and a tensor', lambda T: T.sub(None, T.ones(2))),
    ('div of an int by a str', lambda T: T.div(1, 'a')),
    # lerp's 0-dim weight of another dtype joins the type promotion (a weight of one dim or more must match)
    ('lerp of a 0-d float64 weight', lambda T: T.lerp(T.tensor([1., 2.]), T.tensor([3., 5.]), T.tensor(0.7, dtype=T.float64))),
    ('lerp of a 0-d float16 weight', lambda T: T.lerp(T.ones(3), T.zeros(3), T.tensor(0.3, dtype=T.float16))),
    ('lerp of a 0-d int weight', lambda T: T.lerp(T.ones(3), T.zeros(3), T.tensor(1))),
    ('lerp of a 0-d bool weight', lambda T: T.lerp(T.ones(3), T.zeros(3), T.tensor(True))),
    ('lerp of a 0-d complex weight', lambda T: (lambda r: (r.dtype, r.real, r.imag))(T.lerp(T.ones(3), T.zeros(3), T.tensor(0.5j)))),
    ('lerp of float64 by a 0-d float32 weight', lambda T: T.lerp(T.ones(2, dtype=T.float64), T.zeros(2, dtype=T.float64), T.tensor(0.3))),
    ('lerp of 0-d operands promoted', lambda T: T.lerp(T.ones(()), T.zeros(()), T.tensor(0.3, dtype=T.float64))),
    ('lerp of half by a 0-d float64 weight', lambda T: T.lerp(T.ones(3, dtype=T.float16), T.zeros(3, dtype=T.float16), T.tensor(0.3, dtype=T.float64))),
    ('lerp_ by a 0-d float64 weight', lambda T: T.ones(3).lerp_(T.zeros(3), T.tensor(0.25, dtype=T.float64))),
    ('lerp into out by a 0-d float64 weight', lambda T: T.lerp(T.ones(3), T.zeros(3), T.tensor(0.3, dtype=T.float64), out=T.empty(3))),
    ('lerp weight gradient in its dtype', lambda T: (lambda w: (T.lerp(T.ones(3), T.zeros(3), w).sum().backward(), w.grad)[1])(T.tensor(0.3, dtype=T.float64, requires_grad=True))),
    ('lerp of a 1-d float64 weight', lambda T: T.lerp(T.ones(3), T.zeros(3), T.tensor([0.5], dtype=T.float64))),
    # index_select's index and the comparisons' input: Tensor only in every overload
    ('index_select of an int index', lambda T: T.index_select(_x(T), 0, 1)),
    ('index_select of a list index', lambda T: T.index_select(_x(T), 0, [1])),
    ('index_select of an int index by keyword', lambda T: T.index_select(_x(T), 0, index=1)),
    ('index_select method of an int index', lambda T: _x(T).index_select(0, 1)),
    ('lt of an int and a tensor', lambda T: T.lt(1, _x(T))),
    ('le of a float and a tensor', lambda T: T.le(1.5, _x(T))),
    ('gt of a bool and a tensor', lambda T: T.gt(True, _x(T))),
    ('ge of two ints', lambda T: T.ge(1, 2)),
    ('eq of an int and a tensor', lambda T: T.eq(1, _x(T))),
    ('ne of an int and a tensor', lambda T: T.ne(1, _x(T))),
    ('less of an int and a tensor', lambda T: T.less(1, _x(T))),
    ('greater_equal of an int and a tensor', lambda T: T.greater_equal(1, _x(T))),
    ('not_equal of an int and a tensor', lambda T: T.not_equal(1, _x(T))),
    ('lt of an int and a tensor by keyword', lambda T: T.lt(input=1, other=_x(T))),
    ('lt of an int and a tensor into out', lambda T: T.lt(1, _x(T), out=T.empty(0, dtype=T.bool))),
    ('lt of a list and a tensor', lambda T: T.lt([1.], _x(T))),
    ('lt operator of an int and a tensor', lambda T: 1 < _x(T)),
    ('eq operator of an int and a tensor', lambda T: 1 == _x(T)),
]


def _outcome(fn, T):
    """('raised', type, message) or ('returned', summary), and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            result = fn(T)
        except Exception as e:  # noqa: BLE001 (the exception is what is compared)
            outcome = ('raised', type(e).__name__, str(e).replace('leafgrad', 'torch'))
        else:
            outcome = ('returned', _summary(result))
    # (PyTorch's C++ warnings end with where in its source they were raised)
    return outcome, [(w.category.__name__, str(w.message).split(' (Triggered internally')[0].replace('leafgrad', 'torch'))
                     for w in caught]


def _summary(x):
    if isinstance(x, (lg.Tensor, torch.Tensor)):
        y = x.detach().float() if str(x.dtype).endswith('bfloat16') else x.detach()  # (exact in float32)
        values = y.numpy() if isinstance(x, torch.Tensor) else np.asarray(y._data)
        return tuple(x.shape), str(x.dtype).split('.')[-1], json.dumps(values.tolist())  # (NaN equals NaN)
    if isinstance(x, tuple):
        return tuple(_summary(v) for v in x)
    if isinstance(x, (lg.dtype, torch.dtype)):
        return str(x).split('.')[-1]
    return repr(x).replace('leafgrad', 'torch')


@pytest.mark.parametrize('name', [c[0] for c in CASES])
def test_bad_input_as_torch(name):
    fn = dict(CASES)[name]
    expected = _outcome(fn, torch)
    assert _outcome(fn, lg) == expected


# A plain int, a str or a list where an op takes a Tensor (tools/bad_args_sweep.py finds them):
# PyTorch's parser's TypeError, which names the argument, not an error from inside the op.
NOT_TENSORS = [
    "T.abs_(1)",
    "T.abs_('a')",
    "T.acos_(1)",
    "T.acos_('a')",
    "T.acosh_(1)",
    "T.acosh_('a')",
    "T.addcdiv(X, 1, X)",
    "T.addcdiv(X, 'a', X)",
    "T.addr(X, 1, T.ones(3))",
    "T.addr(X, 'a', T.ones(3))",
    "T.asin_(1)",
    "T.asin_('a')",
    "T.asinh_(1)",
    "T.asinh_('a')",
    "T.atan_(1)",
    "T.atan_('a')",
    "T.atanh_(1)",
    "T.atanh_('a')",
    "T.ceil_(1)",
    "T.ceil_('a')",
    "T.chunk(1, 1, 0)",
    "T.chunk('a', 1, 0)",
    "T.cos_(1)",
    "T.cos_('a')",
    "T.cosh_(1)",
    "T.cosh_('a')",
    "T.count_nonzero(1)",
    "T.count_nonzero('a')",
    "T.cumprod(1, 0)",
    "T.cumprod('a', 0)",
    "T.cumsum(1, 0)",
    "T.cumsum('a', 0)",
    "T.cumulative_trapezoid(1)",
    "T.cumulative_trapezoid('a')",
    "T.deg2rad_(1)",
    "T.deg2rad_('a')",
    "T.diag(1)",
    "T.diag('a')",
    "T.diag_embed(1)",
    "T.diag_embed('a')",
    "T.diagflat(1)",
    "T.diagflat('a')",
    "T.diagonal(1)",
    "T.diagonal('a')",
    "T.erf_(1)",
    "T.erf_('a')",
    "T.erfc_(1)",
    "T.erfc_('a')",
    "T.exp2_(1)",
    "T.exp2_('a')",
    "T.exp_(1)",
    "T.exp_('a')",
    "T.expm1_(1)",
    "T.expm1_('a')",
    "T.floor_(1)",
    "T.floor_('a')",
    "T.frac_(1)",
    "T.frac_('a')",
    "T.gather(1, 0, I.reshape(3, 1).expand(3, 3).contiguous())",
    "T.gather('a', 0, I.reshape(3, 1).expand(3, 3).contiguous())",
    "T.i0_(1)",
    "T.i0_('a')",
    "T.index_add(1, 0, I, X)",
    "T.index_add('a', 0, I, X)",
    "T.index_copy(1, 0, I, X)",
    "T.index_copy('a', 0, I, X)",
    "T.index_select(1, 0, I)",
    "T.index_select('a', 0, I)",
    "T.log10_(1)",
    "T.log10_('a')",
    "T.log1p_(1)",
    "T.log1p_('a')",
    "T.log2_(1)",
    "T.log2_('a')",
    "T.log_(1)",
    "T.log_('a')",
    "T.log_softmax(1, 0)",
    "T.log_softmax('a', 0)",
    "T.logcumsumexp(1, 0)",
    "T.logcumsumexp('a', 0)",
    "T.logit_(1)",
    "T.logit_('a')",
    "T.logsumexp(1, 0)",
    "T.logsumexp('a', 0)",
    "T.max(1)",
    "T.max('a')",
    "T.mean(1)",
    "T.mean('a')",
    "T.median(1)",
    "T.median('a')",
    "T.min(1)",
    "T.min('a')",
    "T.nan_to_num_(1)",
    "T.nan_to_num_('a')",
    "T.nanmean(1)",
    "T.nanmean('a')",
    "T.nanmedian(1)",
    "T.nanmedian('a')",
    "T.nansum(1)",
    "T.nansum('a')",
    "T.neg_(1)",
    "T.neg_('a')",
    "T.rad2deg_(1)",
    "T.rad2deg_('a')",
    "T.reciprocal_(1)",
    "T.reciprocal_('a')",
    "T.relu_(1)",
    "T.relu_('a')",
    "T.rot90(1)",
    "T.rot90('a')",
    "T.round_(1)",
    "T.round_('a')",
    "T.rsqrt_(1)",
    "T.rsqrt_('a')",
    "T.select(1, 1, 0)",
    "T.select('a', 1, 0)",
    "T.sigmoid_(1)",
    "T.sigmoid_('a')",
    "T.sin_(1)",
    "T.sin_('a')",
    "T.sinc_(1)",
    "T.sinc_('a')",
    "T.sinh_(1)",
    "T.sinh_('a')",
    "T.softmax(1, 0)",
    "T.softmax('a', 0)",
    "T.sqrt_(1)",
    "T.sqrt_('a')",
    "T.square_(1)",
    "T.square_('a')",
    "T.squeeze(1)",
    "T.squeeze('a')",
    "T.sum(1)",
    "T.sum('a')",
    "T.tan_(1)",
    "T.tan_('a')",
    "T.tanh_(1)",
    "T.tanh_('a')",
    "T.transpose(1, 1, 0)",
    "T.transpose('a', 1, 0)",
    "T.trapezoid(1)",
    "T.trapezoid('a')",
    "T.tril(1)",
    "T.tril('a')",
    "T.triu(1)",
    "T.triu('a')",
    "T.trunc_(1)",
    "T.trunc_('a')",
    "T.unbind(1)",
    "T.unbind('a')",
    "T.unsqueeze(1, 0)",
    "T.unsqueeze('a', 0)",
]


@pytest.mark.parametrize('call', NOT_TENSORS)
def test_not_a_tensor_as_torch(call):
    def fn(T):
        X, I = _x(T) / 10 + 0.1, T.tensor([0, 2, 1])  # noqa: F841 (read by the call)
        return eval(call, {'T': T, 'X': X, 'I': I})
    assert _outcome(fn, lg) == _outcome(fn, torch)


# Bad arguments to Tensor methods (tools/bad_args_sweep.py --methods finds them): PyTorch's
# parser's TypeError, which names the argument, and x unchanged; no NumPy ValueError, no Python
# error from inside the op, nothing accepted that PyTorch refuses.
BAD_METHOD_ARGUMENTS = [
    # the samplers' numbers, typed float (random_'s bounds int, listed; bernoulli_'s p listed)
    "X.random_('a')",
    "X.random_(0, 'a')",
    "X.random_(1.5)",
    "X.random_(None)",
    "X.random_(2, 5, 6)",
    "X.random_(0, None).shape",
    "X.random_(**{'from': 2}).shape",
    "X.normal_('a')",
    "X.normal_(0, 'a')",
    "X.normal_(None)",
    "X.normal_(T.tensor(1.), 2).shape",
    "X.cauchy_('a')",
    "X.cauchy_(0, None)",
    "X.log_normal_('a')",
    "X.log_normal_(1, 'a')",
    "X.uniform_('a')",
    "X.uniform_(0, [1.0])",
    "X.uniform_(**{'from': 0, 'to': 2}).shape",
    "X.exponential_('a')",
    "X.geometric_('a')",
    "X.bernoulli_('a')",
    "X.bernoulli_(None)",
    # addcmul's and addcdiv's tensors: a number is no tensor there
    "X.addcmul(X, 2)",
    "X.addcmul_(2, X)",
    "X.addcdiv(X, 2)",
    "X.addcdiv_(2, X)",
    # quantile's q, repeat_interleave's repeats, the splits' sections: the parser's listing of the
    # overloads (the method's own: repeat_interleave(Tensor repeats) is the function's only)
    "X.quantile('a')",
    "X.quantile(0.5, 'a')",
    "X.nanquantile(None)",
    "T.quantile(X, 'a')",
    "X.repeat_interleave('a')",
    "X.repeat_interleave(2, 'a')",
    "X.repeat_interleave(1.5)",
    "X.repeat_interleave(2, output_size=1.5)",
    "T.tensor([1, 2]).repeat_interleave()",
    "T.repeat_interleave(X, 'a')",
    "X.tensor_split('a')",
    "X.tensor_split(1.5)",
    "X.tensor_split([1, 'a'])",
    "T.tensor_split(X, None)",
    "X.hsplit('a')",
    "X.hsplit(None)",
    "X.hsplit(1.5)",
    "X.vsplit([1.5])",
    "T.hsplit(X, 'a')",
    "X.reshape(1, 3, 3).dsplit('a')",
    "X.reshape(1, 3, 3).dsplit(T.tensor([1]))",
    # the typed parameters of bincount, histc, diff, take_along_dim, sum_to_size
    "T.tensor([1, 2]).bincount('a')",
    "T.tensor([1, 2]).bincount(minlength='a')",
    "T.bincount(T.tensor([1, 2]), 1)",
    "T.bincount(T.tensor([1, 2]), minlength=1.5)",
    "T.bincount(T.tensor([1, 2]), None, 3)",
    "X.histc('a')",
    "X.histc(4, 'a')",
    "X.histc(4, 0, None)",
    "T.histc(X, bins=4.0)",
    "X.histc(4, T.tensor(0.), 2)",
    "X.sum_to_size('a')",
    "X.sum_to_size(1.5)",
    "X.sum_to_size([1, 'a'])",
    "X.sum_to_size(None)",
    "X.sum_to_size(1, 3)",
    "X.take_along_dim(T.tensor([[0]]), 'a')",
    "X.take_along_dim(T.tensor([[0]]), 1.5)",
    "T.take_along_dim(X, T.tensor([[0]]), dim='a')",
    "X.diff('a')",
    "X.diff(1, 0, 'a')",
    "T.diff(X, prepend=1)",
    "T.diff(X, n=1.5)",
    "T.diff(X, append=[1.])",
    "X.diff(None)",
    # div's rounding_mode: a str or None, else the listing of the overloads of the name called
    "T.div(X, X, rounding_mode=1)",
    "X.div(2, rounding_mode=1)",
    "X.div(X, rounding_mode=['floor'])",
    "T.divide(X, 2, rounding_mode=1)",
    "X.divide(2, rounding_mode=1)",
    "X.div_(2, rounding_mode=1)",
    "X.divide_(X, rounding_mode=1)",
    "T.div(X, 2, rounding_mode=1, out=T.empty(3))",
    "X.true_divide(2, rounding_mode=1)",
    # stft's arguments as its parser reads them (by position, without center and pad_mode): the listing
    "T.stft(T.ones(16), 4, hop_length='a', return_complex=True, window=T.ones(4))",
    "T.stft(T.ones(16), 4, window=1, return_complex=True)",
    "T.stft(T.ones(16), 4, normalized='a', return_complex=True, window=T.ones(4))",
    "T.stft(T.ones(16), 4.5, return_complex=True, window=T.ones(4))",
    "T.ones(16).stft(4, return_complex=1, window=T.ones(4))",
    "T.ones(16).stft(4, return_complex=True, onesided=1, window=T.ones(4))",
    "T.stft(T.ones(16), 'a', center=False, return_complex=True, window=T.ones(4))",
    # an in-place variant's typed parameters checked as its method's, its errors naming it
    "X.cumsum_('a')",
    "X.cumprod_(1.5)",
    "X.cumsum_(dim='a')",
    "X.tril_(1.5)",
    "X.triu_('a')",
    "X.unsqueeze_('a')",
    "X.unsqueeze_(1.5)",
    "X.logit_('a')",
    "T.logit(X, 'a')",
    "X.logit(eps=[1.])",
    "X.addr_(1, T.ones(3))",
    "X.addr_(T.ones(3), 'a')",
    "X.cumsum_(0)",
    "X.tril_(1)",
    # addr's vectors, matrix_power's n
    "X.addr(1, T.ones(3))",
    "X.addr(T.ones(3), 'a')",
    "X.addr([1.], T.ones(3))",
    "T.addr(1, T.ones(3), T.ones(3))",
    "X.matrix_power(1.5)",
    "T.matrix_power(X, 'a')",
    # index_add's and index_copy's dim, index, source (and alpha), in every form
    "X.index_add('a', T.tensor([0]), T.ones(1, 3))",
    "X.index_add(1.5, T.tensor([0]), T.ones(1, 3))",
    "X.index_add(0, T.tensor([0]), T.ones(1, 3), alpha='a')",
    "X.index_add_(None, T.tensor([0]), T.ones(1, 3))",
    "X.index_add_(0, [0], T.ones(1, 3))",
    "X.index_add_(0, T.tensor([0]), 1)",
    "T.index_add(X, 'a', T.tensor([0]), T.ones(1, 3))",
    "X.index_add_(0, T.tensor([0]), T.ones(1, 3), alpha=2)",
    "X.index_copy('a', T.tensor([0]), T.ones(1, 3))",
    "X.index_copy_(1.5, T.tensor([0]), T.ones(1, 3))",
    "X.index_copy_(0, 1, T.ones(1, 3))",
    "X.index_copy_(0, T.tensor([0]), [1.])",
    "T.index_copy(X, 0, T.tensor([0]), 1)",
    "X.index_copy_(0, T.tensor([0]), T.ones(1, 3))",
]


@pytest.mark.parametrize('call', BAD_METHOD_ARGUMENTS)
def test_bad_method_arguments_as_torch(call):
    def fn(T):
        X = _x(T) / 10 + 0.1
        before = X.tolist()
        try:
            return eval(call, {'T': T, 'X': X})
        except Exception:
            assert X.tolist() == before, 'x changed by a call that raised'
            raise
    assert _outcome(fn, lg) == _outcome(fn, torch)


@pytest.mark.parametrize('call', ['contiguous(T.contiguous_format)', 'cpu(T.preserve_format)',
                                  'is_contiguous(T.channels_last)'])
def test_memory_format_is_keyword_only(call):
    """PyTorch refuses a memory format given by position (its message counts the arguments
    without self: 'cpu() takes 0 positional arguments but 1 was given'; leafgrad's, Python's, with)."""
    for T in (torch, lg):
        with pytest.raises(TypeError, match='positional argument'):
            eval(f'T.ones(2, 2, 2, 2).{call}', {'T': T})


class _Reflecting:
    """An operand that answers the reflected operators itself."""
    def __radd__(self, other):
        return 'radd'

    def __rsub__(self, other):
        return 'rsub'

    def __rmul__(self, other):
        return 'rmul'

    def __rtruediv__(self, other):
        return 'rtruediv'

    def __rpow__(self, other):
        return 'rpow'

    def __rfloordiv__(self, other):
        return 'rfloordiv'

    def __rmod__(self, other):
        return 'rmod'

    def __rand__(self, other):
        return 'rand'

    def __ror__(self, other):
        return 'ror'

    def __rxor__(self, other):
        return 'rxor'


@pytest.mark.parametrize('op', ['+', '-', '*', '/', '**', '//', '%', '&', '|', '^'])
def test_operators_defer_to_the_other_operand(op):
    """PyTorch's operators return NotImplemented for an operand they do not take: Python then
    asks the other operand's reflected method."""
    for T in (torch, lg):
        x = T.ones(2, dtype=T.int64)
        assert eval(f'x {op} r', {'x': x, 'r': _Reflecting()}) == _Reflecting.__dict__[
            '__r' + {'+': 'add', '-': 'sub', '*': 'mul', '/': 'truediv', '**': 'pow', '//': 'floordiv', '%': 'mod',
                     '&': 'and', '|': 'or', '^': 'xor'}[op] + '__'](None, None)


def test_the_table_has_no_duplicate_names():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))


# ---- what needs more than one call ------------------------------------------------------------

def test_relu_gradient_at_nan_passes_as_torchs():
    """PyTorch's threshold_backward zeroes the gradient where the result is <= 0: a NaN passes."""
    data = [NAN, 1., -1., 0., INF, -INF]
    grads = []
    for T in (lg, torch):
        x = T.tensor(data, requires_grad=True)
        T.relu(x).backward(T.tensor([INF, 2., 3., 4., 5., 6.]))
        grads.append(x.grad.tolist())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_relu_gradient_bits_as_torchs(dtype):
    """Where the result is <= 0 (a negative input, -0.0 or +0.0 alike) the gradient is +0.0,
    whatever arrived (inf, NaN, a negative number); elsewhere, at a NaN result too, the arriving
    gradient's own bits (-0.0 included). Eagerly, in the gradient's own buffer and in a copy,
    and compiled."""
    data = [NAN, 1., -1., 0., -0., INF, -INF, 2., -NAN]
    arriving = [INF, -2., NAN, -INF, -3., -0., NAN, -0., 5.]
    width = {'float16': np.int16, 'float32': np.int32, 'float64': np.int64}[dtype]
    seen = []
    for T in (lg, torch):
        x = T.tensor(data, dtype=getattr(T, dtype), requires_grad=True)
        T.relu(x).backward(T.tensor(arriving, dtype=getattr(T, dtype)))  # (the caller's gradient: a copy)
        seen.append(x.grad.numpy().view(width).tolist())
        x.grad = None
        (T.relu(x) * T.tensor(arriving, dtype=getattr(T, dtype))).sum().backward()  # (a fresh gradient)
        seen.append(x.grad.numpy().view(width).tolist())
    compiled = lg.compile(lambda x, g: (lg.relu(x) * g).sum())
    for _ in range(2):  # (the trace, then the replay)
        x = lg.tensor(data, dtype=getattr(lg, dtype), requires_grad=True)
        compiled(x, lg.tensor(arriving, dtype=getattr(lg, dtype))).backward()
    seen.append(x.grad.numpy().view(width).tolist())
    assert seen[0] == seen[2] and seen[1] == seen[3] == seen[4]


def test_relu_second_derivative_at_nan_as_torchs():
    grads = []
    for T in (lg, torch):
        x = T.tensor([NAN, 1., -1.], requires_grad=True)
        g = T.ones(3, requires_grad=True)
        (gx,) = T.autograd.grad(T.relu(x), x, g, create_graph=True)
        (gg,) = T.autograd.grad(gx.sum(), g)
        grads.append((gx.tolist(), gg.tolist()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_adam_refuses_a_loaded_state_of_another_shape_before_changing_anything():
    p = lg.nn.Parameter(lg.ones(3))
    opt = lg.optim.Adam([p])
    p.grad = lg.ones(3)
    opt.step()
    state = opt.state_dict()
    state['state'][0]['exp_avg'] = lg.ones(1)
    opt.load_state_dict(state)
    before = p.detach().clone().tolist(), opt.state[p]['exp_avg_sq'].tolist()
    with pytest.raises(RuntimeError, match=r"output with shape \[1\] doesn't match the broadcast shape \[3\]"):
        opt.step()
    assert (p.tolist(), opt.state[p]['exp_avg_sq'].tolist()) == before


def _batchnorm_loads(T, make_state):
    m = T.nn.Sequential(T.nn.BatchNorm1d(3))
    m[0].num_batches_tracked.fill_(5)
    state = make_state(m)
    try:
        keys = m.load_state_dict(state)
    except RuntimeError as e:
        return 'raised', str(e)
    return repr(keys), int(m[0].num_batches_tracked)


def _without_count(m):
    state = m.state_dict()
    del state['0.num_batches_tracked']
    return state


def _old_checkpoint(m):  # a plain dict (no recorded versions), as older PyTorch wrote them
    return {k: v for k, v in _without_count(m).items()}


def _version_1(m):
    state = _without_count(m)
    state._metadata['0']['version'] = 1
    return state


def _old_without_mean(m):
    state = _old_checkpoint(m)
    del state['0.running_mean']
    return state


@pytest.mark.parametrize('make_state', [_without_count, _old_checkpoint, _version_1, _old_without_mean])
def test_batchnorm_checkpoint_without_num_batches_tracked(make_state):
    """Before version 2 BatchNorm kept no count: such a checkpoint loads and the module keeps its
    own; a checkpoint of the present version must have it."""
    assert _batchnorm_loads(lg, make_state) == _batchnorm_loads(torch, make_state)


def test_state_dict_records_versions_as_torch():
    assert lg.nn.Sequential(lg.nn.Linear(2, 2), lg.nn.BatchNorm1d(2)).state_dict()._metadata == \
        torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2)).state_dict()._metadata


def test_view_as_another_dtype_shares_storage_and_version():
    """view(dtype) reads the same bytes: a write through it changes the base, and bumps the
    version counter they share (no history: PyTorch's view.dtype is not differentiable)."""
    seen = []
    for T in (lg, torch):
        x = T.tensor([1.0, -2.0])
        v = x.view(T.int32)
        v[0] = 0
        seen.append((x.tolist(), v.tolist(), x._version, v._version, v.is_leaf, v.grad_fn))
    assert seen[0] == seen[1]


_WARNED_ONCE = """
import warnings, {lib} as T
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    a = [T.ones(2, 3, 4).T, T.ones(3).T, T.tensor(3.).T, T.tensor(3.).mT, T.tensor(1 + 2j).mH,
         T.tensor(1 + 2j).adjoint(), T.tensor(3.).T, T.ones(2, 3, 4).T]
    index, src = T.tensor([[0], [1]]), T.ones(1, 1)
    for reduce in ('sum', 'add'):  # (warned before the shapes are checked, and once)
        try:
            T.zeros(2, 3).scatter(1, index, src, reduce=reduce)
        except RuntimeError as e:
            print(str(e).replace('{lib}', 'torch'))
print([tuple(t.shape) for t in a], a[4].item(), a[5].item())
print(T.zeros(2, 3).scatter(1, index, 2., reduce='add').tolist())
print([str(w.message).split(' (Triggered')[0].replace('{lib}', 'torch') for w in caught])
"""


def test_transposes_of_non_matrices_and_scatter_reduce_warn_once_a_process_as_torch():
    # (PyTorch's TORCH_WARN_ONCE: a fresh process each, as another test may have warned already)
    assert fresh_python_output(_WARNED_ONCE.format(lib='leafgrad')) == \
        fresh_python_output(_WARNED_ONCE.format(lib='torch'))
