"""The rows of the CPU op tables as (id, fn(*tensors) with T = leafgrad, float64/integer input
arrays, which inputs require grad): elementwise, reductions, special functions, shapes,
indexing, copies, number parts, statistics and products, linear algebra, nn.functional. Shared
by the tests that run every row another way (tests/test_cuda_optable.py on 'cuda',
tests/test_compile_optable.py through leafgrad.compile) and compare with the row run eagerly on
the CPU, which the CPU suite checks against torch."""
import warnings

import numpy as np

import leafgrad as lg

import test_linalg
import test_linalg_solvers
import test_nn_functional
import test_ops_copies
import test_ops_elementwise
import test_ops_flat_index
import test_ops_indexing
import test_ops_number_parts
import test_ops_reduction
import test_ops_shape
import test_ops_stats_products
import test_special_functions
from optable import _inputs


def rows():
    """(id, fn(*tensors) with T = leafgrad, float64/integer arrays, which inputs require grad)."""
    rows = []
    for module in (test_ops_elementwise, test_ops_reduction, test_special_functions):
        for case in module.CASES:
            arrays = _inputs(case, case.shapes[0], np.random.default_rng(0), np.float64)
            rows.append((f'{module.__name__[5:]}:{case.name}', (lambda fn: lambda *ts: fn(lg, *ts))(case.fn),
                         arrays, [case.grad and a.dtype.kind == 'f' for a in arrays]))
    for module, table in ((test_ops_shape, 'CASES'), (test_ops_indexing, 'CASES'), (test_ops_copies, 'CASES')):
        for case in getattr(module, table):
            arrays = [np.asarray(a) for a in case[2]]
            rows.append((f'{module.__name__[5:]}:{case[0]}', (lambda fn: lambda *ts: fn(lg, *ts))(case[1]),
                         arrays, [a.dtype.kind == 'f' for a in arrays]))
    for case in test_ops_indexing.FORWARD_ONLY:
        arrays = [np.asarray(a) for a in case[2]]
        rows.append((f'ops_indexing:{case[0]}', (lambda fn: lambda *ts: fn(lg, *ts))(case[1]), arrays,
                     [False] * len(arrays)))
    for module in (test_ops_flat_index, test_ops_number_parts, test_ops_stats_products, test_linalg_solvers):
        for i, row in enumerate(module.ROWS):
            values = row.values if hasattr(row, 'values') else row
            fn, arrays, grad = values[0], [np.asarray(a) for a in values[1]], values[2]
            name = getattr(row, 'id', None) or f'{i}'
            rows.append((f'{module.__name__[5:]}:{name}', (lambda fn: lambda *ts: fn(lg, *ts))(fn), arrays,
                         [grad and a.dtype.kind == 'f' for a in arrays]))
    for i, row in enumerate(test_nn_functional.CASES):
        fn, gens = row.values[0], row.values[1]
        arrays, mask = test_nn_functional._make(gens)
        arrays = [np.asarray(a) for a in arrays]
        rows.append((f'nn_functional:{getattr(row, "id", None) or i}',
                     (lambda fn: lambda *ts: fn(lg, lg.nn.functional, *ts))(fn), arrays,
                     [m and a.dtype.kind == 'f' for a, m in zip(arrays, mask)]))
    for i, row in enumerate(test_linalg.CASES):
        fn, gens = row.values[0], row.values[1]
        arrays = [np.asarray(a) for a in test_linalg._make(gens)]
        rows.append((f'linalg:{getattr(row, "id", None) or i}', (lambda fn: lambda *ts: fn(lg, *ts))(fn), arrays,
                     [a.dtype.kind == 'f' for a in arrays]))
    return rows


def run_row(fn, arrays, grads, device='cpu'):
    """A row run once: its tensor outputs, and the gradients of those that require grad (against
    fixed random cotangents) for the inputs that require grad (None where unused). Seeded, so
    that rows drawing random numbers draw the same ones each time."""
    with lg.device(device), warnings.catch_warnings():
        warnings.simplefilter('ignore')
        lg.manual_seed(0)
        xs = [lg.tensor(a.copy(), device=device, requires_grad=g) for a, g in zip(arrays, grads)]
        outs = fn(*xs)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        outs = [o for o in outs if isinstance(o, lg.Tensor)]
        diff = [o for o in outs if o.requires_grad]
        wrt = [x for x in xs if x.requires_grad]
        gs = []
        if diff and wrt:
            rng = np.random.default_rng(1)
            vs = [lg.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=device) for o in diff]
            gs = lg.autograd.grad(diff, wrt, vs, allow_unused=True)
    return outs, gs
