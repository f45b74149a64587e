"""Sweep: every public function leafgrad shares with torch (and torch.nn.functional), called with a
plain int, a str and a list of floats in place of each Tensor argument of a small valid call; the
outcome compared with torch's. A leak: leafgrad raises another exception type than torch (an
internal one: AttributeError, IndexError, ... where torch raises TypeError/RuntimeError), or
raises where torch returns, or returns another value, dtype or shape.

    PYTHONPATH=$PWD python tools/bad_args_sweep.py [-v] [names...]
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


def main(argv):
    verbose = '-v' in argv
    only = [a for a in argv if not a.startswith('-')]
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
