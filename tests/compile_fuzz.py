"""Random compiled regions against eager leafgrad (tests/test_compile_fuzz.py).

A region is a random program of tests/fuzz_programs.py without its backward, autograd.grad,
hooks and flags (ops, views, indexing, in-place ops on inputs, intermediates and views,
grad-mode switches), cut in two: the lines that make leaves become the inputs of a function
(every second leaf is read from its closure instead, made once, as a model's parameters are),
the other lines its body, which returns every variable it made. The function runs eagerly and
compiled, nine times each from fresh arguments (``CALLS``): with grad mode on and off, then
with the arguments' first dim two and three times as long (dynamic shapes: traced, then eager
on a size's first call, traced on its second, replayed); after each call what a user can
observe must agree: an exception's type and message, each output's shape, dtype,
requires_grad, is_leaf and values (a zero's sign too), each leaf's values and version, and,
after a backward through every output that requires grad, the leaves' gradients. Eager is the
reference (tests/test_fuzz_differential.py holds it to PyTorch).

Long mode, from the repository's root::

    python tests/compile_fuzz.py 0 2000     # seeds 0..1999; prints each failure, minimized
"""
import re
import sys
import warnings

import numpy as np

import fuzz_programs as fp

_LEAF = re.compile(r'^(v\d+) = T\.tensor\(')
_NAMES = re.compile(r'\bv\d+\b')


class RegionGenerator(fp.Generator):
    """The fuzzer's generator without the statements that end a region or act across it, with
    the functions of layers (``nn_function``)."""
    STATEMENTS = [('leaf', 3), ('unary', 4), ('f_unary', 1), ('binary', 4), ('scalar', 2), ('reduction', 3),
                  ('matmul', 2), ('shape_op', 5), ('advanced_index', 2), ('inplace', 3), ('nn_function', 3)]

    def nn_function(self):
        """A layer's function on tensors that exist: dropout (random draws: each call is seeded
        alike), layer norm, linear, normalize, a loss, softmax with a temperature."""
        a = self.pick_tensor(lambda t: t.dim() >= 1 and t.dtype.is_floating_point)
        if a is None:
            return None
        t = self.ns[a]
        k = self.c.int(0, 6)
        new = self.fresh()
        F = 'T.nn.functional'
        if k == 0:
            p = self.c.pick(['0.0', '0.25', '0.5'])
            return f'{new} = {F}.dropout({a}, {p}, training={self.c.chance(0.8)})'
        if k == 1:
            return f'{new} = {F}.layer_norm({a}, {tuple(t.shape[-1:])})'
        if k == 2:
            w = self.pick_tensor(lambda u: u.dim() == 2 and u.shape[1] == t.shape[-1] and u.dtype == t.dtype)
            if w is None:
                return None
            b = self.pick_tensor(lambda u: tuple(u.shape) == (self.ns[w].shape[0],) and u.dtype == t.dtype)
            return f'{new} = {F}.linear({a}, {w}{", " + b if b and self.c.chance(0.5) else ""})'
        if k == 3:
            return f'{new} = {F}.normalize({a}, dim={self.dim(t)})'
        if k == 4:
            b = self.pick_tensor(lambda u: tuple(u.shape) == tuple(t.shape) and u.dtype == t.dtype)
            if b is None:
                return None
            loss = self.c.pick(['mse_loss', 'l1_loss', 'smooth_l1_loss', 'huber_loss'])
            return f'{new} = {F}.{loss}({a}, {b}, reduction={self.c.pick(["mean", "sum", "none"])!r})'
        if k == 5:
            return f'{new} = {F}.softmax({a} / {self.c.pick(["0.5", "2.0"])}, dim={self.dim(t)})'
        return f'{new} = {F}.log_softmax({a}, dim=-1).exp()'


def generate(chooser, torch, length=10):
    """(input lines, body lines): a random region's leaves and its statements (those that ran in
    torch without an exception)."""
    g = RegionGenerator(chooser, torch, specials=False)
    g.program(length)
    failed = {r[1] for r in g.log if r[0] == 'line' and r[2][0] != 'ok'}
    inputs, body = [], []
    for i, line in enumerate(g.lines):
        if i in failed:
            continue
        (inputs if _LEAF.match(line) else body).append(line)
    return inputs, body


def region_source(inputs, body, captured=()):
    """The source of ``make(*captured)``, which returns the function: its parameters are the
    leaves but ``captured`` (the names of leaves it reads from its closure, as a model's
    parameters), and it returns a dict of what its body made."""
    leaves = [_LEAF.match(line).group(1) for line in inputs]
    params = [n for n in leaves if n not in captured]
    made = []
    for line in body:
        for name in _NAMES.findall(line.split('=', 1)[0] if '=' in line and '==' not in line else ''):
            if name not in leaves and name not in made:
                made.append(name)
    lines = [f'def make({", ".join(captured)}):', f'    def region({", ".join(params)}):']
    if captured:
        lines.append(f'        nonlocal {", ".join(captured)}')
    lines += ['        ' + line for line in body]
    lines.append('        return {' + ', '.join(f'{n!r}: {n}' for n in made) + '}')
    lines.append('    return region')
    return '\n'.join(lines), params


def _observed(value):
    if not hasattr(type(value), 'grad_fn'):
        return ('py', repr(value))
    try:
        return (tuple(value.shape), str(value.dtype), bool(value.requires_grad), bool(value.is_leaf),
                np.array(value.detach().numpy(), dtype=np.float64, copy=True))
    except Exception as e:  # noqa: BLE001 (reading it raises: the error is what is compared)
        return ('unreadable', _message(e))


def _same(a, b):
    if len(a) != len(b) or a[:-1] != b[:-1]:
        return False
    x, y = a[-1], b[-1]
    if isinstance(x, np.ndarray):
        # (a zero's sign too; not a NaN's, which no op is defined to keep)
        return x.shape == y.shape and np.array_equal(x, y, equal_nan=True) and np.array_equal(
            np.signbit(x) & ~np.isnan(x), np.signbit(y) & ~np.isnan(y))
    return x == y


def _message(e):
    return (type(e).__name__, re.split(r'\nIt was (?:last )?modified in place at ', str(e))[0])


def captured_of(inputs):
    """The leaves a region reads from its closure: every second one."""
    return tuple(_LEAF.match(line).group(1) for line in inputs[1::2])


# (grad mode, how many times each argument's first dim is repeated), per call: a compiled call
# traces its first call in each mode and replays the others; then a second size (dim 0 becomes
# dynamic: traced), a third (eager on its first call, traced on its second, then replayed)
CALLS = ((True, 1), (True, 1), (True, 1), (False, 1), (False, 1), (True, 2), (True, 3), (True, 3), (True, 3))


def _repeated(lg, t, times):
    """A leaf like ``t`` with its first dim ``times`` as long (``t`` itself for 0-d or once)."""
    if times == 1 or not t.dim():
        return t
    return lg.cat([t.detach()] * times).requires_grad_(t.requires_grad)


def run(lg, inputs, body, modes=CALLS, compiled=True, captured=None):
    """What a user observes over calls of the region, eagerly or compiled, one per entry of
    ``modes``: a list of records per call. The captured leaves (default: ``captured_of``) are
    made once, the arguments for each call."""
    modes = [m if type(m) is tuple else (m, 1) for m in modes]
    captured = captured_of(inputs) if captured is None else captured
    source, params = region_source(inputs, body, captured)
    ns = {'T': lg}
    exec(compile(source, '<region>', 'exec'), ns)
    exec('\n'.join(inputs), ns)
    kept = [ns[n] for n in captured]
    region = ns['make'](*kept)
    fn = lg.compile(region) if compiled else region
    records = []
    for n, (grad_mode, times) in enumerate(modes):
        lg.manual_seed(n)  # (dropout's draws: the same in the eager and the compiled call)
        leaves = {'T': lg}
        for line in inputs:
            exec(line, leaves)
        args = [_repeated(lg, leaves[p], times) for p in params]
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            try:
                with lg.set_grad_enabled(grad_mode):
                    out = fn(*args)
            except Exception as e:  # noqa: BLE001 (the exception is what is compared)
                records.append(('raised', _message(e)))
                continue
            record = [('out', k, _observed(v)) for k, v in out.items()]
            held = list(zip(params, args)) + list(zip(captured, kept))
            record += [('input', p, _observed(a), a._version) for p, a in held]
            try:
                total = None
                for v in out.values():
                    if hasattr(type(v), 'grad_fn') and v.requires_grad and v.dtype.is_floating_point:
                        part = v.double().sum()
                        total = part if total is None else total + part
                if total is not None:
                    total.backward()
                    record += [('grad', p, None if a.grad is None else _observed(a.grad)) for p, a in held]
            except Exception as e:  # noqa: BLE001
                record.append(('backward raised', _message(e)))
        records.append(record)
    return records


def _close(a, b):
    x, y = a[-1], b[-1]
    return a[:-1] == b[:-1] and x.shape == y.shape and np.allclose(x, y, rtol=1e-6, atol=1e-7, equal_nan=True)


def difference(eager, compiled, mixed=False):
    """The first record where the compiled runs differ from the eager ones, or None. ``mixed``:
    the region mixes float32 and float64, where gradients are compared to within a rounding
    (eager's engine casts a gradient to its input's dtype when it is accumulated, so a chain of
    float32 nodes may run in float64 after a float64 one; a replay casts as each op's gradient
    leaves it, as PyTorch's engine does), and not at all once a backward raised part way (where
    a node refuses a gradient of the other dtype: what each had accumulated by then depends on
    the order of its walk)."""
    raised = False  # (a backward that raised part way: what it had accumulated is its walk's order's)
    for call, (a, b) in enumerate(zip(eager, compiled)):
        if type(a) is tuple or type(b) is tuple:
            if a != b:
                return call, a, b
            continue
        if len(a) != len(b):
            return call, a, b
        for x, y in zip(a, b):
            if x[:2] != y[:2]:
                return call, x, y
            if x[0] == 'grad' and (x[2] is None) != (y[2] is None):
                return call, x, y
            if x[0] in ('out', 'input') and not _same(x[2], y[2]) or x[0] == 'input' and x[3] != y[3]:
                return call, x, y
            if x[0] == 'grad' and x[2] is not None and not (mixed and raised) and not (
                    _close if mixed else _same)(x[2], y[2]):
                return call, x, y
            if x[0] == 'backward raised':
                if x != y:
                    return call, x, y
                raised = True
    return None


def check(lg, inputs, body):
    """None, or a description of how the compiled region differs from eager."""
    mixed = 'float64' in ' '.join(inputs) and 'float32' in ' '.join(inputs)
    diff = difference(run(lg, inputs, body, compiled=False), run(lg, inputs, body), mixed)
    if diff is None:
        return None
    call, eager, compiled = diff
    return (f'call {call + 1}: eager {eager}\n          compiled {compiled}\n'
            + region_source(inputs, body)[0] + '\ninputs:\n' + '\n'.join(inputs))


def minimized(lg, inputs, body):
    """``body`` with lines dropped while the difference stays."""
    def fails(lines):
        try:
            return check(lg, inputs, lines) is not None
        except Exception:  # noqa: BLE001 (a region that no longer runs: not this failure)
            return False
    return fp.minimize(body, fails)


def main(first, last):
    import torch
    import leafgrad as lg
    failures = 0
    for seed in range(first, last):
        inputs, body = generate(fp.RandomChooser(seed), torch, length=12)
        if not body:
            continue
        try:
            found = check(lg, inputs, body)
        except Exception as e:  # noqa: BLE001
            found = f'the fuzzer itself raised {e!r}'
        if found is not None:
            failures += 1
            small = minimized(lg, inputs, body)
            print(f'--- seed {seed}\n{check(lg, inputs, small) or found}\n', flush=True)
    print(f'{failures} of {last - first} regions differ')


if __name__ == '__main__':
    sys.path.insert(0, __file__.rsplit('/', 1)[0])
    main(int(sys.argv[1]), int(sys.argv[2]))
