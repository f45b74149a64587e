"""Sweep: every public function leafgrad shares with torch (and torch.nn.functional), called with a
plain int, a str and a list of floats in place of each Tensor argument of a small valid call; the
outcome compared with torch's. A leak: leafgrad raises another exception type than torch (an
internal one: AttributeError, IndexError, ... where torch raises TypeError/RuntimeError), or
raises where torch returns, or returns another value, dtype or shape.

``--methods``: every public Tensor method the two share, ``x.method(...)`` with each argument of
a small valid call replaced (a Tensor one by an int, a str and a list of floats; a number by a
str, None and a float where it was an int; a list of ints by a str); a leak is as above, or
leafgrad changing ``x`` where it raises (PyTorch checks before it writes), or a warning of
NumPy's (a RuntimeWarning that PyTorch does not give).

    PYTHONPATH=$PWD python tools/bad_args_sweep.py [-v] [--methods] [names...]
"""
import signal
import sys
import warnings

import numpy as np
import torch

import leafgrad as lg
import leafgrad.nn.functional as lgF
import torch.nn.functional as tF

warnings.simplefilter('ignore')

SKIP_PREFIXES = ('set_', 'use_', 'manual_seed', 'seed', 'initial_seed', 'save', 'load', 'compile', 'is_',
                 'get_', 'autocast', 'cond', 'vmap', 'from_', 'frombuffer', 'jit', 'export', 'sym_', 'Tensor',
                 'typename', 'empty', 'zeros', 'ones', 'full', 'rand', 'arange', 'range', 'linspace',
                 'logspace', 'eye', 'tensor', 'as_tensor', 'asarray', 'scalar_tensor', 'normal', 'poisson',
                 'bernoulli', 'multinomial', 'tril_indices', 'triu_indices', 'hann', 'hamming', 'bartlett',
                 'blackman', 'kaiser', 'promote_types', 'can_cast', 'result_type', 'chain_matmul', 'dropout',
                 'alpha_dropout', 'feature_alpha_dropout', 'fused_', 'native_', 'quantize', 'q_', 'randint',
                 'randperm', 'unique', 'nonzero', 'stft', 'istft', 'lstm', 'gru', 'rnn', 'sparse',
                 'enable_grad', 'no_grad', 'inference_mode', 'not_implemented')


def data(T):
    x = T.tensor(((np.arange(9.) + 1) / 10).reshape(3, 3), dtype=T.float32)
    return x


def templates(T):
    x = data(T)
    i = T.tensor([0, 2, 1])
    return [
        (x,), (x, x), (x, 0), (x, x, x), (x, 1, 0), (x, 0, i.reshape(3, 1).expand(3, 3).contiguous()),
        (x, 0, i), (x, i), (x, x > 0.5), (x, x > 0.5, x), (x > 0.5, x, x), (x, [3]), (x, (1, 1)), (x, 2),
        (x.reshape(1, 1, 3, 3), T.ones(2, 1, 2, 2)), (x.reshape(1, 3, 3), T.ones(2, 3, 2)),
        (x.reshape(1, 1, 1, 3, 3), T.ones(2, 1, 1, 2, 2)), (x.reshape(1, 1, 3, 3), 2), (x.reshape(1, 3, 3), 2),
        (x.reshape(1, 1, 3, 3), 2, 1), (x.reshape(1, 3, 3), 2, 1), (x, T.ones(3), T.ones(3)),
        (i, x), (x, i, x), (x, 0, i, x), (x.reshape(1, 1, 3, 3), (2, 2)), (x, x.reshape(3, 3, 1)),
        (x.reshape(1, 3, 3), x.reshape(1, 3, 3)), (x.reshape(1, 3, 3), x.reshape(1, 3, 3), x.reshape(1, 3, 3)),
        (x.reshape(1, 3, 3), x.reshape(1, 3, 3), 0), (x, 1, 0, 0), (T.ones(3), T.ones(3)), (x, T.ones(3)),
        ([x, x],), ([x, x], 0), ((x, x),), (T.ones(3),), (x, x, x, x),
    ]


BAD = {'int': 1, 'str': 'a', 'list': [1., 2., 3.]}


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout()


def outcome(fn, args):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(3)
    try:
        r = fn(*args)
    except Timeout:
        return ('timeout',)
    except BaseException as e:  # noqa: BLE001
        return ('raised', type(e).__name__, str(e).replace('leafgrad', 'torch'))
    finally:
        signal.alarm(0)
    return ('returned', summary(r))


def summary(r):
    if isinstance(r, (lg.Tensor, torch.Tensor)):
        v = r.detach()
        try:
            vals = v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v._data)
            vals = np.round(vals.astype(np.float64), 4).tolist() if vals.dtype.kind in 'fc' else vals.tolist()
        except Exception:  # noqa: BLE001
            vals = '?'
        return (tuple(r.shape), str(r.dtype).split('.')[-1], repr(vals))
    if isinstance(r, (tuple, list)):
        return tuple(summary(v) for v in r)
    return repr(r).replace('leafgrad', 'torch')[:80]


def names():
    out = []
    for mod_lg, mod_t, prefix in ((lg, torch, ''), (lgF, tF, 'F.')):
        for n in sorted(dir(mod_lg)):
            if n.startswith('_') or n.startswith(SKIP_PREFIXES) or not hasattr(mod_t, n):
                continue
            f_lg, f_t = getattr(mod_lg, n), getattr(mod_t, n)
            if isinstance(f_lg, type) or not callable(f_lg) or not callable(f_t) or isinstance(f_t, type):
                continue
            out.append((prefix + n, f_lg, f_t))
    return out


def with_bad(args, i, bad):
    a = list(args)
    if isinstance(a[i], list):  # a list of tensors: its first element bad
        a[i] = [bad] + a[i][1:]
    elif isinstance(a[i], tuple):
        a[i] = (bad,) + a[i][1:]
    else:
        a[i] = bad
    return tuple(a)


def is_tensorish(a, T):
    return isinstance(a, T.Tensor) or isinstance(a, (list, tuple)) and a and isinstance(a[0], T.Tensor)


def compare(f_lg, f_t):
    """(template, argument, kind, torch's outcome, leafgrad's) for each bad argument of the first
    template both functions take; nothing where none is."""
    tt, lt = templates(torch), templates(lg)
    chosen = None
    for k, args in enumerate(tt):
        if outcome(f_t, args)[0] == 'returned' and outcome(f_lg, lt[k])[0] == 'returned':
            chosen = k
            break
    if chosen is None:
        return None
    t_args, l_args = tt[chosen], lt[chosen]
    out = []
    for i, a in enumerate(t_args):
        if not is_tensorish(a, torch):
            continue
        for kind, bad in BAD.items():
            ot = outcome(f_t, with_bad(t_args, i, bad))
            ol = outcome(f_lg, with_bad(l_args, i, bad))
            if ot[0] != 'timeout' and ol[0] != 'timeout':
                out.append((chosen, i, kind, ot, ol))
    return out


# ---- Tensor methods ----------------------------------------------------------------------------

def method_selves(T):
    """The tensors a method is called on, each made afresh (an in-place method writes to it)."""
    return [lambda: data(T), lambda: T.tensor([0, 2, 1]), lambda: T.tensor([1., 2., 3., 4.]),
            lambda: data(T).reshape(1, 3, 3), lambda: data(T) > 0.5]


def method_templates(T):
    """The arguments after self of a small valid call (tried in order; the first both take)."""
    x = data(T)
    i = T.tensor([0, 2, 1])
    return [
        (), (x,), (0,), (1,), (2,), (0.5,), (x, x), (1, 0), (0, 1), (0, i), (i,), (x > 0.5,), (x > 0.5, x),
        (x > 0.5, 1.0), (0, i.reshape(3, 1).expand(3, 3).contiguous()), (0, i, x), (0, i, 1.0), ([3],), ((1, 1),),
        (T.ones(3),), (1.0, 2.0), (0.5, 0), (x, 0.5), (3, 3), ([9],), ([1, 9],), (i, 0), (2, 0), (T.ones(3), T.ones(3)),
        (T.float64,), ('sum',), ([1, 2],), ([0.5],), (T.tensor([0.5]),), (x, 1),
    ]


def method_bads(value, T):
    if is_tensorish(value, T):
        return BAD
    if isinstance(value, bool):
        return {'str': 'a', 'int': 1}
    if isinstance(value, int):
        return {'str': 'a', 'None': None, 'float': 1.5}
    if isinstance(value, float):
        return {'str': 'a', 'None': None}
    if isinstance(value, (list, tuple)):
        return {'str': 'a', 'floats': [1.5]}
    return {'int': 1}


def method_names():
    out = []
    for n in sorted(dir(lg.Tensor)):
        if n.startswith('_') or n in METHOD_SKIP or not hasattr(torch.Tensor, n):
            continue
        if not callable(getattr(lg.Tensor, n, None)) or not callable(getattr(torch.Tensor, n)):
            continue
        out.append(n)
    return out


# methods whose outcome is not comparable: another library's objects, storage, the device, printing,
# the process's state
METHOD_SKIP = frozenset([
    'backward', 'register_hook', 'register_post_accumulate_grad_hook', 'numpy', 'tolist', 'item', 'cuda', 'cpu',
    'to', 'pin_memory', 'share_memory_', 'storage', 'untyped_storage', 'data_ptr', 'storage_offset',
    'element_size', 'new_empty', 'new_empty_strided', 'empty_like', 'set_', 'resize_', 'resize_as_', 'share_memory',
    'apply_', 'map_', 'map2_', 'record_stream', 'detach_', 'retain_grad', 'requires_grad_', 'dim_order',
    'module_load', 'get_device', 'type', 'type_as', 'is_shared', 'is_pinned', 'bernoulli', 'bernoulli_',
    'multinomial', 'dropout', 'exponential_', 'geometric_', 'uniform_', 'nonzero_static', 'as_subclass',
    'storage_type', 'to_dense', 'to_sparse', 'to_mkldnn', 'coalesce', 'values', 'indices', 'smm', 'sspaddmm',
])


# methods whose values are random draws (or memory not written: new): their shapes and dtypes compared
RANDOM = frozenset(['random_', 'normal_', 'cauchy_', 'log_normal_', 'exponential_', 'geometric_', 'uniform_', 'new'])


def method_outcome(T, n, make_self, args):
    """``outcome`` of ``make_self().n(*args)``, with 'changed' appended where it raised and left its
    self changed, and the RuntimeWarnings it gave."""
    x = make_self()
    before = summary(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        o = outcome(lambda: getattr(x, n)(*args), ())
    if o[0] == 'raised' and summary(x) != before:
        o = o + ('changed',)
    if o[0] == 'returned' and n in RANDOM:  # (the draws differ: leafgrad has its own generator)
        o = ('returned', o[1][:2] if n == 'new' else summary(x)[:2])
    return o, sorted({str(w.message)[:60] for w in caught if w.category is RuntimeWarning})


def compare_method(n):
    """(self, template, argument, kind, torch's outcome, leafgrad's) for each bad argument of the
    first self and template both take; None where there is none."""
    ts, ls = method_selves(torch), method_selves(lg)
    tt, lt = method_templates(torch), method_templates(lg)
    taken = [(s, k) for s in range(len(ts)) for k in range(len(tt))
             if method_outcome(torch, n, ts[s], tt[k])[0][0] == 'returned' and
             method_outcome(lg, n, ls[s], lt[k])[0][0] == 'returned']
    if not taken:
        return None
    s, k = min(taken, key=lambda sk: not tt[sk[1]])  # (the first with arguments to replace)
    out = []
    for i, a in enumerate(tt[k]):
        for kind, bad in method_bads(a, torch).items():
            ot = method_outcome(torch, n, ts[s], with_bad(tt[k], i, bad))
            ol = method_outcome(lg, n, ls[s], with_bad(lt[k], i, bad))
            if ot[0][0] != 'timeout' and ol[0][0] != 'timeout':
                out.append((s, k, i, kind, ot, ol))
    return out


def main_methods(verbose, only):
    compared = leaks = mismatched_messages = no_template = 0
    report = []
    for n in method_names():
        if only and n not in only:
            continue
        results = compare_method(n)
        if results is None:
            no_template += 1
            if verbose:
                print('no template', n)
            continue
        for s, k, i, kind, (ot, wt), (ol, wl) in results:
            compared += 1
            where = f'x{s}.{n} template {k} arg {i} {kind}'
            numpy_warnings = sorted(set(wl) - set(wt))
            if ot[0] != ol[0] or ot[1] != ol[1] or (ot[0] == 'returned' and ot != ol) or \
                    ol[-1:] == ('changed',) or numpy_warnings:
                leaks += 1
                report.append(f'LEAK {where}: torch {str(ot)[:150]} | leafgrad {str(ol)[:150]}'
                              + (f' warns {numpy_warnings}' if numpy_warnings else ''))
            elif ot != ol:
                mismatched_messages += 1
                if verbose:
                    report.append(f'msg  {where}: torch {ot[2][:120]!r} | leafgrad {ol[2][:120]!r}')
    print('\n'.join(report))
    print(f'compared {compared} calls; leaks (type/result/changed/warning) {leaks}; same type, other message '
          f'{mismatched_messages}; methods without a valid template {no_template}')


def main(argv):
    verbose = '-v' in argv
    only = [a for a in argv if not a.startswith('-')]
    if '--methods' in argv:
        return main_methods(verbose, only)
    compared = leaks = mismatched_messages = no_template = 0
    report = []
    for name, f_lg, f_t in names():
        if only and name not in only:
            continue
        results = compare(f_lg, f_t)
        if results is None:
            no_template += 1
            if verbose:
                print('no template', name)
            continue
        for chosen, i, kind, ot, ol in results:
            compared += 1
            if ot[0] != ol[0] or ot[1] != ol[1] or (ot[0] == 'returned' and ot != ol):
                leaks += 1
                report.append(f'LEAK {name} template {chosen} arg {i} {kind}: torch {ot} | leafgrad {ol}')
            elif ot != ol:
                mismatched_messages += 1
                if verbose:
                    report.append(f'msg  {name} template {chosen} arg {i} {kind}: torch {ot[2][:100]!r} | '
                                  f'leafgrad {ol[2][:100]!r}')
    print('\n'.join(report))
    print(f'compared {compared} calls; leaks (type/result) {leaks}; same type, other message {mismatched_messages}; '
          f'functions without a valid template {no_template}')


if __name__ == '__main__':
    main(sys.argv[1:])
