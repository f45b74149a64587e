"""Random programs for the differential fuzzer (tests/test_fuzz_differential.py).

A program is a list of lines of Python, each one statement on variables ``v0, v1, ...`` and the
module ``T`` (leafgrad or torch): leaves, elementwise ops, reductions, matmul, shape ops and
views, indexing, in-place ops (on views too), hooks that change the gradient, ``retain_grad``,
``detach``, grad-mode switches, ``backward`` (with ``retain_graph``) and ``autograd.grad``.

The generator runs each line in torch as soon as it has chosen it and looks at torch's tensors
(their shapes, which require grad, which exist) to choose the next line, so that most lines are
valid; a few are made invalid on purpose, to compare errors. ``run`` then executes the same
lines with any module and returns what a user could observe at each step: values, dtypes,
``requires_grad``/``is_leaf``/``grad_fn`` names, gradients of leaves and retained gradients,
what the hooks saw, version counters, exceptions and warnings. ``differences`` compares two such
logs; ``minimize`` removes lines from a failing program while it still fails.

Choices come from a ``chooser``: hypothesis's ``data.draw`` (in CI: shrinking, a fixed
derandomized budget) or ``random.Random`` (the long mode).
"""
import random
import re
import sys
import warnings

import numpy as np

SHAPES = [(), (1,), (3,), (2, 3), (3, 1), (1, 3), (3, 3), (2, 1, 3), (2, 3, 2)]
UNARY = ['neg', 'exp', 'tanh', 'sigmoid', 'relu', 'abs', 'sin', 'cos', 'log', 'sqrt', 'reciprocal', 'square',
         'sign', 'floor', 'expm1', 'log1p', 'rsqrt', 'atan', 'erf']
F_UNARY = ['gelu', 'silu', 'softplus', 'elu', 'leaky_relu', 'hardtanh', 'logsigmoid', 'mish', 'relu6']
BINARY = ['+', '-', '*', '/']
BINARY_FN = ['maximum', 'minimum', 'atan2', 'hypot', 'fmod', 'remainder', 'copysign']
SCALARS = ['2.0', '0.5', '-1.5', '3', '0.0']
INPLACE_UNARY = ['relu_', 'sigmoid_', 'exp_', 'tanh_', 'neg_', 'abs_', 'zero_', 'sqrt_']
INPLACE_SCALAR = ['mul_', 'add_', 'sub_', 'div_', 'pow_', 'clamp_']
INPLACE_TENSOR = ['add_', 'mul_', 'sub_', 'div_', 'copy_']


class RandomChooser:
    """Choices from ``random.Random(seed)`` (the long mode)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def int(self, lo, hi):
        return self.rng.randint(lo, hi)

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, p):
        return self.rng.random() < p


class DrawChooser:
    """Choices drawn through hypothesis (``data.draw``), so that a failure shrinks."""

    def __init__(self, data):
        from hypothesis import strategies as st
        self.data, self.st = data, st

    def int(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, p):
        return self.int(0, 999) < p * 1000


# ---- running and observing -------------------------------------------------------------------

def _hook_factory(log):
    """H(k, kind): a tensor hook that notes the gradient it sees, then changes it (or not)."""
    def make(k, kind):
        def hook(g):
            log.append(('hook', k, kind, summary(g)))
            if kind == 'double':
                return g * 2
            if kind == 'negate':
                return -g
            if kind == 'clone':
                return g.clone()
            return None
        return hook
    return make


def namespace(T):
    log = []
    # GRADS: the variables autograd.grad returned (their version counters are the engine's
    # business: PyTorch may have summed into them in place)
    return {'T': T, 'H': _hook_factory(log), 'LOG': log, 'GRADS': set()}


def summary(x):
    """What a user sees of a value: for a tensor its shape, dtype, flags, grad_fn name and values
    (or the exception that reading them raises)."""
    try:
        return _summary(x)
    except Exception as e:  # noqa: BLE001
        return ('unreadable', type(e).__name__, _message(e))


def _summary(x):
    if x is None or isinstance(x, (bool, int, float, str)):
        return ('py', x)
    if isinstance(x, (tuple, list)):
        return ('seq', tuple(summary(v) for v in x))
    if hasattr(type(x), 'grad_fn'):
        fn = x.grad_fn
        values = np.array(x.detach().numpy(), dtype=np.float64, copy=True)
        return ('tensor', tuple(x.shape), str(x.dtype).split('.')[-1], bool(x.requires_grad), bool(x.is_leaf),
                None if fn is None else fn.name().replace('leafgrad', 'torch'), values)
    return ('other', type(x).__name__)


def _variables(ns):
    return sorted((n for n in ns if n.startswith('v') and n[1:].isdigit()), key=lambda n: int(n[1:]))


def _guarded(read):
    try:
        return read()
    except Exception as e:  # noqa: BLE001
        return ('unreadable', type(e).__name__, _message(e))


def _final_state(ns):
    out = []
    for name in _variables(ns):
        t = ns[name]
        if not hasattr(type(t), 'grad_fn'):
            out.append(('final', name, summary(t)))
            continue
        grad = _guarded(lambda: summary(t.grad) if (t.is_leaf or t.retains_grad) else ('not read',))
        version = None if name in ns['GRADS'] else _guarded(lambda: int(t._version))
        out.append(('final', name, summary(t), version, _guarded(lambda: bool(t.retains_grad)), grad))
    return out


def _grads(ns):
    out = []
    for name in _variables(ns):
        t = ns[name]
        read = _guarded(lambda: hasattr(type(t), 'grad_fn') and (t.is_leaf or t.retains_grad) and t.requires_grad)
        if read is True:
            out.append(('grad', name, _guarded(lambda: summary(t.grad))))
        elif read is not False:
            out.append(('grad', name, read))
    return out


def _message(e):
    # (leafgrad's version error adds a line naming the user's line that changed the tensor:
    # PyTorch's message is its first line)
    text = re.split(r'\nIt was (?:last )?modified in place at ', str(e))[0]
    return text.split(' (Triggered internally')[0].replace('leafgrad', 'torch')


def run_line(ns, line, index):
    """Execute one line in ``ns``; returns what it showed (exception, warnings, new variables,
    gradients after a backward, what the hooks saw)."""
    before = {name: id(value) for name, value in ns.items()}
    start = len(ns['LOG'])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            exec(line, ns)
            outcome = ('ok',)
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            outcome = ('raised', type(e).__name__, _message(e))
    record = [('line', index, outcome,
               tuple((w.category.__name__, _message(w.message)) for w in caught))]
    record.extend(ns['LOG'][start:])
    from_grads = 'autograd.grad(' in line or any(re.search(rf'\b{g}\b', line) for g in ns['GRADS'])
    for name in sorted(set(ns) - set(before)):
        if not name.startswith('__'):
            record.append(('new', name, summary(ns[name]), _guarded(lambda: repr(ns[name]).replace('leafgrad', 'torch'))))
            if from_grads:  # (and what was made from them: a view shares their counter)
                ns['GRADS'].add(name)
    rebound = [name for name in _variables(ns) if name in before and id(ns[name]) != before[name]]
    if rebound:  # a name bound again (v0 = v3): it is what its right-hand side makes
        rhs = line.split('=', 1)[-1]
        engine = 'autograd.grad(' in line or any(re.search(rf'\b{g}\b', rhs) for g in ns['GRADS'])
        for name in rebound:
            (ns['GRADS'].add if engine else ns['GRADS'].discard)(name)
    if 'backward(' in line or 'autograd.grad(' in line:
        record.extend(_grads(ns))
    return record


def run(T, lines):
    """The log of running ``lines`` with module ``T``."""
    ns = namespace(T)
    log = []
    for i, line in enumerate(lines):
        log.extend(run_line(ns, line, i))
    log.extend(_final_state(ns))
    return log


# ---- comparing ---------------------------------------------------------------------------------

def _close(a, b):
    if a.shape != b.shape:
        return False
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~finite & ~np.isnan(a)], b[~finite & ~np.isnan(b)]):
        return False  # infinities (and their signs) where the other has them
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return False
    return np.allclose(a[finite], b[finite], rtol=1e-4, atol=1e-4)


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and _close(a, b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def _exactly(a, b):
    """Equal to the last bit, the sign of a zero included (a matrix product's zeros take the
    sign its summation order gives them)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True) and np.array_equal(
            np.signbit(a), np.signbit(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_exactly(x, y) for x, y in zip(a, b))
    return a == b


def _same_record(a, b):
    """Records agree; a new tensor's printed form is compared only when its values agree to the
    last bit (a rounding difference within the tolerance may print otherwise)."""
    if a[0] == b[0] == 'new' and len(a) == len(b) == 4:
        return same(a[:3], b[:3]) and (a[3] == b[3] or not _exactly(a[2], b[2]))
    return same(a, b)


def differences(mine, theirs):
    """The first record where the two logs differ, as (index, leafgrad's, torch's); None if none."""
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if not _same_record(a, b):
            return i, a, b
    if len(mine) != len(theirs):
        i = min(len(mine), len(theirs))
        return i, mine[i] if i < len(mine) else None, theirs[i] if i < len(theirs) else None
    return None


# Differences found and reported elsewhere (they belong to other parts: the view machinery, the
# engine). ``known(lines, difference)`` names the one a difference is, so that CI stays green
# while they are open and the long mode counts them apart; each is a minimal program in the report.
def _is_multi_output_view_modified(lines, diff):
    # PyTorch refuses to read a view from split/chunk/unbind once its base changed in place
    return 'output of a function that returns multiple views' in repr(diff)


def _is_capture_before_hooks(lines, diff):
    # PyTorch's autograd.grad captures a non-leaf input's gradient before that tensor's hooks run
    # where the walk goes on through it (leafgrad too), and that gradient is one of PyTorch's
    # internal tensors, seen in an in-place op on it: a sum's gradient is an expanded ones,
    # refused for its internal overlap first, where leafgrad's is a plain array (seed 6007147), or
    # in detach_ of it: a view of that expanded ones, refused as a view (seed 14008886)
    record = diff[1]
    if not any('register_hook' in line for line in lines):
        return False
    overlap = 'more than one element of the written-to tensor refers to a single memory location'
    if record and diff[2] and record[0] == diff[2][0] == 'line' and overlap not in repr(record) and \
            (overlap in repr(diff[2]) or "Can't detach views in-place" in repr(diff[2])):
        written = re.match(r'(?:with [^:]*: )?(v\d+)', lines[record[1]])
        return bool(written) and any('autograd.grad(' in line and re.search(rf'\b{written.group(1)}\b',
                                                                              line.split('=', 1)[0])
                                     for line in lines)
    return False


def _is_torch_internal_assert(lines, diff):
    # PyTorch fails its own internal assertion, a PyTorch bug ('old_fn INTERNAL ASSERT FAILED ...
    # please report a bug to PyTorch': detach_ and div_ of a tensor whose grad was retained,
    # seed 15015480)
    theirs = diff[2]
    return bool(theirs and theirs[0] == 'line' and 'INTERNAL ASSERT FAILED' in repr(theirs[2]))


def _is_product_gradient_a_view(lines, diff):
    # a matrix product's gradient is a transposed view in PyTorch where its operands' layout
    # makes mm's backward compute the transpose (mm_mat2_backward: grad.t().mm(mat1).t()), a new
    # tensor in leafgrad: detach_ of it, as autograd.grad returned it, is refused there only
    # (seed 16019072: the gradient of a 1x1 weight of a (3, 1) @ (1, 1) product); likewise the
    # gradient of an input broadcast with leading dims, which PyTorch's sum_to returns as a view
    # of its keepdim sum (seed 20016913: a (1,) bias added to a (1, 3) tensor)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] == 'line' and mine[2][0] == 'ok'
            and "Can't detach views in-place" in repr(theirs[2])):
        return False
    m = re.match(r'(?:with [^:]*: )?(v\d+)\.detach_\(\)$', lines[theirs[1]])
    return bool(m) and any(
        'autograd.grad(' in line and re.search(rf'\b{m.group(1)}\b', line.split('=', 1)[0]) for line in lines)


def _is_torch_zero_tensor(lines, diff):
    # PyTorch's gradient is a ZeroTensor (a derivative that is 0 everywhere, abs's second
    # derivative: seed 14018176), whose .numpy() PyTorch refuses; leafgrad's is zeros
    # (a hook's argument too)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('grad', 'final', 'new', 'hook')):
        return False
    value = mine[3] if mine[0] == 'hook' else mine[2]
    return ('Cannot convert a ZeroTensor to numpy' in repr(theirs) and value[0] == 'tensor'
            and not np.asarray(value[6]).any())


def _is_no_grad_view_modified(lines, diff):
    # PyTorch refuses an in-place change, with grad mode on, of a view made under no_grad
    return 'A view was created in no_grad mode and is being modified inplace' in repr(diff)


def _is_op_error_before_the_no_grad_view_error(lines, diff):
    # an op that fails on its arguments (a shape mismatch) and is given a view made under
    # no_grad whose base then changed in place: PyTorch's autograd asks the view's history (and
    # raises the no_grad-view error) before the kernel checks its arguments; leafgrad's op checks
    # first and records after (the matrix products', stack's and cat's size checks and var's
    # warning read the histories first, ops/_util.histories_first: seeds 5017430, 5026183, 5025012)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] == 'line' and mine[1] == theirs[1]):
        return False
    text = 'A view was created in no_grad mode and its base or another view of its base has been modified inplace'
    return mine[2][0] == theirs[2][0] == 'raised' and text in theirs[2][2] and text not in mine[2][2]


def _is_uncast_gradient(lines, diff):
    # PyTorch's engine casts each gradient to its input's dtype as it leaves a node; leafgrad's
    # only when it is accumulated: a hook or a retained grad of a float32 tensor used with a
    # float64 one sees float64 (and of a float64 0-d tensor added to a float32 one, float32)
    _, mine, theirs = diff
    if mine and theirs and mine[0] == theirs[0] == 'new' and mine[2][0] == theirs[2][0] == 'tensor':
        # with create_graph, autograd.grad's result cast at the end (ToCopyBackward0) where
        # PyTorch's was cast as it left the node and then went on through the ops below it
        # (seed 5014909: fmod of float64 by the float32 sqrt of a leaf: DivBackward0)
        a, b = mine[2], theirs[2]
        return (a[5] == 'ToCopyBackward0' != b[5] and a[:5] == b[:5] and same(a[6], b[6])
                and any('autograd.grad(' in line and 'create_graph=True' in line for line in lines))
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('hook', 'grad', 'final')):
        return False
    a, b = repr(mine), repr(theirs)
    return a.count('float64') != b.count('float64')


def _is_nan_sign(lines, diff):
    # NumPy's sqrt/log/pow of a negative number is a NaN with its sign bit set, PyTorch's is not:
    # seen only through copysign (or signbit)
    _, mine, theirs = diff
    if not any('copysign' in line for line in lines) or not (mine and theirs):
        return False
    return same(_unsigned(mine[:3]), _unsigned(theirs[:3]))  # (not the printed form: a '-' widens its columns)


def _unsigned(record):
    if isinstance(record, np.ndarray):
        return np.abs(record)
    if isinstance(record, tuple):
        return tuple(_unsigned(x) for x in record)
    return record.replace('-', '') if isinstance(record, str) else record


def _is_other_version_error(lines, diff):
    # both refuse a backward through a tensor changed in place, naming another saved tensor
    text = 'one of the variables needed for gradient computation has been modified by an inplace operation'
    return text in repr(diff[1]) and text in repr(diff[2])


def _is_torch_median_of_expanded(lines, diff):
    # a PyTorch bug: median along a dim of an expanded tensor (autograd.grad's gradient of a sum
    # is one) reads garbage (denormals such as 4.6e-41)
    theirs = diff[2]
    values = theirs[2][6] if theirs and len(theirs) > 2 and isinstance(theirs[2], tuple) and \
        theirs[2][0] == 'tensor' else None
    if not (any('median(' in line for line in lines) and isinstance(values, np.ndarray)):
        return False
    if bool(((values != 0) & (np.abs(values) < 1e-20)).any()):  # (denormals, or 2.7e-27: seed 4014021)
        return True
    # or any garbage (4.07e-10: seed 4015238), where the median is of a gradient autograd.grad returned
    # or of a tensor made by expand (seed 4015737)
    grads = {name.strip() for line in lines if 'autograd.grad(' in line
             for name in line.split('=', 1)[0].split(',') if name.strip()}
    grads |= {line.split(' = ', 1)[0].split(': ')[-1] for line in lines if '.expand(' in line and ' = ' in line}
    # and views of those, still expanded (seed 5027715: the median index of a gradient's diagonal)
    for line in lines:
        m = re.match(r'(?:.*: )?(v\d+) = (v\d+)\.(diagonal|permute|t|transpose|narrow|select|squeeze|unsqueeze|'
                     r'movedim|swapaxes|expand)\(', line)
        if m and m.group(2) in grads:
            grads.add(m.group(1))
    return any(re.search(rf'\b{re.escape(diff[1][1])}\b.* = ({"|".join(grads)})\.median\(', line)
               for line in lines) if grads and diff[1] and diff[1][0] == 'new' else False


def _is_fused_double_backward(lines, diff):
    # with create_graph, PyTorch records some gradients as one fused node
    # (SoftmaxBackwardDataBackward0 ...) where leafgrad records their parts
    return any('create_graph=True' in line for line in lines) and 'BackwardBackward0' in repr(diff[2]) \
        or 'BackwardDataBackward0' in repr(diff[2])


def _is_rounding_at_a_jump(lines, diff):
    # a step or modulo (remainder, fmod, sign, floor ...) of values that agree only to rounding
    # (a matrix product's summation order, gelu's far tail) falls on the other side of its jump:
    # a few elements differ by a whole step, or all by the rounding of a tiny divisor (seeds
    # 3000707, 3001573, 3003028); or a modulo by a divisor that divides most of the dividends
    # (to rounding) wraps around in any number of them: one side ~0 where the other is ~ a whole
    # divisor (seed 5029101: remainder by a float32 mean, which PyTorch's 8-lane sum makes 1 ulp
    # larger than NumPy's pairwise sum; remainder itself agrees with PyTorch's to the bit)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('new', 'final')):
        return False
    made_by = [line for line in lines if line.startswith(f'{mine[1]} = ') or f' {mine[1]} = ' in line]
    if not any(op in line for line in made_by for op in ('remainder', 'fmod', 'sign', 'floor', 'ceil', 'round',
                                                          'trunc')):
        return False
    a, b = mine[2], theirs[2]
    if not (a[0] == b[0] == 'tensor' and a[:6] == b[:6]):
        return False
    bad = ~np.isclose(a[6], b[6], rtol=1e-4, atol=1e-4, equal_nan=True)
    if not bad.any():
        return False
    small = np.abs(a[6][bad] - b[6][bad]).max() <= 1e-3 * (1 + np.nanmax(np.abs(b[6][np.isfinite(b[6])]), initial=0))
    x, y = np.abs(a[6][bad]), np.abs(b[6][bad])
    wrapped = any(op in line for line in made_by for op in ('remainder', 'fmod', '%')) and \
        bool((np.minimum(x, y) <= 1e-3 * np.maximum(x, y)).all())
    return small or wrapped or int(bad.sum()) <= max(1, bad.size // 4)


def _is_other_layout(lines, diff):
    # an elementwise op of operands laid out differently (a transposed one) lays its result out
    # as PyTorch's TensorIterator does (by its operands' strides) or as NumPy does: a reshape
    # then copies in one and not in the other (seed 3002556)
    _, mine, theirs = diff
    names = {'ViewBackward0', 'ReshapeAliasBackward0', 'UnsafeViewBackward0'}
    if mine and theirs and mine[0] == theirs[0] == 'line' and \
            mine[2][:2] == theirs[2][:2] == ('raised', 'RuntimeError'):
        # or a matrix product of mixed dtypes: PyTorch folds a >= 3-D operand into one mm (its
        # message: 'expected m1 and m2 to have the same dtype') when that needs no copy, else runs
        # bmm ('expected scalar type Double but found Long') (seed 5008114: a product of a
        # transposed tensor and its base, laid out as the transposed one in PyTorch)
        texts = {r[2][2].split(',')[0].split(' type ')[0] for r in (mine, theirs)}
        if texts == {'expected m1 and m2 to have the same dtype', 'expected scalar'}:
            return True
        return _is_overlap_by_the_strides_of_size_one_dims(lines, mine, theirs)
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('new', 'final')):
        return False
    a, b = mine[2], theirs[2]
    return (a[0] == b[0] == 'tensor' and a[5] != b[5] and {a[5], b[5]} <= names
            and 'UnsafeViewBackward0' in (a[5], b[5]))


def _is_overlap_by_the_strides_of_size_one_dims(lines, mine, theirs):
    # an in-place op given a transpose of the tensor it writes, which has a dim of size 1: the
    # two cover the same memory, and PyTorch calls that a partial overlap when their strides
    # differ, those of the dims of size 1 included, which its TensorIterator takes from the
    # operands' layout (seed 12022409: remainder of a number by a column made by t(), strides
    # (1, 3) in PyTorch, (1, 1) in leafgrad, then div_ by its transpose): let through only where,
    # in PyTorch's run, the two start at one address, hold as many elements, and differ only in
    # the strides of dims of size 1
    text = 'some elements of the input tensor and the written-to tensor refer to a single memory location'
    if not (text in theirs[2][2] and text not in mine[2][2]):
        return False
    line = lines[theirs[1]]
    m = re.match(r'(?:with [^:]*: )?(v\d+)\.\w+_\((v\d+)\)$', line)
    torch = sys.modules.get('torch')
    if not m or torch is None:
        return False
    ns = namespace(torch)
    for j, earlier in enumerate(lines[:theirs[1]]):
        run_line(ns, earlier, j)
    w, o = ns.get(m.group(1)), ns.get(m.group(2))
    if not (isinstance(w, torch.Tensor) and isinstance(o, torch.Tensor)):
        return False
    dims = lambda t: [(n, s) for n, s in zip(t.shape, t.stride()) if n != 1]  # noqa: E731
    return (w.data_ptr() == o.data_ptr() and w.numel() == o.numel() and w.stride() != o.stride()
            and sorted(dims(w), key=lambda d: d[1]) == sorted(dims(o), key=lambda d: d[1]))


def _is_blas_dropping_nan(lines, diff):
    # a matrix product of non-finite values: NumPy's BLAS gives inf (or a number) where a NaN term
    # meets the sum, PyTorch's gives NaN (seed 3003154)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('new', 'final')):
        return False
    made_by = [line for line in lines if line.startswith(f'{mine[1]} = ') or f' {mine[1]} = ' in line]
    if not any(op in line for line in made_by for op in ('@', 'matmul', 'mm(', 'bmm', 'dot(', 'mv(')):
        return False
    a, b = mine[2], theirs[2]
    if not (a[0] == b[0] == 'tensor' and a[:6] == b[:6]):
        return False
    bad = ~np.isclose(a[6], b[6], rtol=1e-4, atol=1e-4, equal_nan=True)
    return bool(bad.any()) and bool(np.isnan(b[6][bad]).all()) and not np.isnan(a[6][bad]).any()


_PRODUCTS = ('@', 'matmul', 'mm(', 'bmm', 'dot(', 'mv(')
_TIES = ('maximum', 'minimum', 'clamp', 'fmax', 'fmin', 'amax', 'amin', '.max(', '.min(', 'median')
_JUMPS_AT_ZERO = ('/', 'div', 'reciprocal', 'rsqrt', 'atan2', 'copysign', 'sign', 'pow', '**', 'log')
# functions whose derivative jumps at zero (abs: -1, 0, 1), or that jump there themselves
_JUMPS_OF_DERIVATIVES = ('remainder', 'fmod', 'abs', 'sgn', 'relu', 'floor', 'ceil', 'round', 'trunc', '>', '<')


def _made_by(lines, name):
    return [line for line in lines if line.startswith(f'{name} = ') or f' {name} = ' in line]


def _is_zero_of_another_sign(lines, diff):
    # an exact zero whose sign (or whose being exact) is the kernel's: a matrix product's zero
    # is -0.0 or 0.0 by PyTorch's kernel path (its mm of one column gives -0.0, OpenBLAS sums from
    # +0.0), or a tiny number where PyTorch's summation cancels exactly; a tie of -0.0 and 0.0 in
    # maximum/minimum/clamp gives PyTorch's second operand in its SIMD loop (AVX512 here: 16
    # float32 lanes), its first in the scalar tail; in a reduction (amax/amin, max()/min())
    # its first element while the reduced size is under four SIMD vectors (AVX2: 32 float32,
    # 16 float64), another beyond, and max() of all elements its last (seed 5005847: amax of
    # remainder's -0.0, -0.0, 0.0). Seen only through a function with a jump
    # at zero: a division (inf against -inf, NaN against 1), rsqrt, reciprocal, atan2 (0 against
    # -pi), a negative power (seed 16009473: maximum of -0.0 and 0.0, then ** -1) (seeds 2002955,
    # 4002925, 4004582, 4004728, 4008327, 4009550)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('new', 'final')):
        return False
    product = any(op in line for line in lines for op in _PRODUCTS)
    tie = any(op in line for line in lines for op in _TIES)
    if not (product or tie) or not any(op in line for line in _made_by(lines, mine[1]) for op in _JUMPS_AT_ZERO):
        return False
    a, b = mine[2], theirs[2]
    if not (a[0] == b[0] == 'tensor' and a[:6] == b[:6]):
        return False
    x, y = a[6], b[6]
    bad = ~np.isclose(x, y, rtol=1e-4, atol=1e-4, equal_nan=True)
    if not bad.any():
        return False
    x, y = x[bad], y[bad]
    flipped = x == -y
    at_zero = np.isclose(x, 0) | np.isclose(y, 0) | np.isclose(np.abs(x), np.pi) | np.isclose(np.abs(y), np.pi)
    nan_for_one = np.isnan(x) != np.isnan(y)
    return bool((flipped | ((product | tie) & (at_zero | nan_for_one))).all())


_POLES = ('log', 'reciprocal', 'rsqrt', '/', 'div', '**', 'pow')
_SUMS = ('.sum(', '.mean(', 'T.sum(', 'T.mean(')
_DOMAIN_EDGES_AT_ZERO = ('sqrt', 'pow', '**')  # (NaN just below 0, about 0 at it: a root)


def _is_pole_of_a_rounded_product(lines, diff):
    # a function at its pole (log1p at -1; log, reciprocal, rsqrt, a division at 0) of a matrix
    # product's value that is exactly there by PyTorch's BLAS (MKL) and one rounding away by
    # NumPy's (OpenBLAS, with its fused multiply-adds), or the reverse: -inf against -35.35,
    # float64's log1p of an ulp (seed 4016527: a float64 row . column summing to -1 exactly in
    # PyTorch, -1 + 4.4e-16 in NumPy). Neither library promises the last bit of a product, so
    # only such elements are let through: one side infinite, the other NaN or as large as a
    # pole of one rounding (|x| >= 15: a log of float32's ulp is -16.6), or both finite and as large
    # as the reciprocal of a rounding (|x| >= 1e6: float32's ulp gives 1.7e7); or, at the edge of a
    # domain (sqrt), one side NaN, the root of a rounding below 0, the other the root of 0 or of
    # a rounding above it (|x| <= 1e-3; seed 6019932: sqrt of a float32 row . column
    # 0.8 * 0.6 + 0.4 * -1.2, 0 by PyTorch's BLAS, a rounding below 0 by OpenBLAS's fused
    # multiply-add)
    # Or of a sum that cancels to a rounding, whose last bits are the summation order's (PyTorch's
    # 8-lane vectorized sum, NumPy's pairwise one: seed 12027861, -1.5 over a float32 sum of six
    # numbers, 1.26e7 against 1.06e7).
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('new', 'final')):
        return False
    made_by = _made_by(lines, mine[1])
    if not any(op in line for line in lines for op in _PRODUCTS + _SUMS) or \
            not any(op in line for line in made_by for op in _POLES + _DOMAIN_EDGES_AT_ZERO):
        return False
    a, b = mine[2], theirs[2]
    if not (a[0] == b[0] == 'tensor' and a[:6] == b[:6]):
        return False
    x, y = a[6], b[6]
    bad = ~np.isclose(x, y, rtol=1e-4, atol=1e-4, equal_nan=True)
    if not bad.any():
        return False
    x, y = x[bad], y[bad]
    if any(op in line for line in made_by for op in _DOMAIN_EDGES_AT_ZERO) and \
            bool(((np.isnan(x) != np.isnan(y)) & (np.abs(np.where(np.isnan(x), y, x)) <= 1e-3)).all()):
        return True
    if (np.isfinite(x) & np.isfinite(y) & (np.abs(x) >= 1e6) & (np.abs(y) >= 1e6)).all():
        return True  # (both the reciprocal of a rounding: seed 8002331, -3.1e15 against -1.8e15)
    if not (np.isinf(x) != np.isinf(y)).all():
        return False
    other = np.where(np.isinf(x), y, x)
    return bool((np.isnan(other) | (np.abs(other) >= 15)).all())


def _is_mask_at_a_rounded_zero(lines, diff):
    # a mask v[m > 0] where an element of m is 0 to within a rounding (a matrix product's or a
    # sum's: -1.9 + 1.9 by two BLAS, seed 14004053), > 0 in one library and not in the other:
    # let through only where, computed in both, the masks differ at no element farther from 0
    # than 1e-5 of m's largest
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] == 'new'):
        return False
    line = next((ln for ln in lines if re.match(rf'(?:with [^:]*: )?{mine[1]} = ', ln)), None)
    m = re.match(r'(?:with [^:]*: )?(v\d+) = (v\d+)\[(v\d+) > 0\]$', line or '')
    torch, leafgrad = sys.modules.get('torch'), sys.modules.get('leafgrad')
    if not m or torch is None or leafgrad is None:
        return False
    values = []
    for T in (leafgrad, torch):
        ns = namespace(T)
        for j, earlier in enumerate(lines[:lines.index(line)]):
            run_line(ns, earlier, j)
        t = ns.get(m.group(3))
        if not isinstance(t, T.Tensor) or not t.dtype.is_floating_point:
            return False
        values.append(t.detach().double().numpy())
    a, b = values
    if a.shape != b.shape:
        return False
    differ = (a > 0) != (b > 0)
    scale = 1e-5 * max(1.0, float(np.nanmax(np.abs(b), initial=0)))
    return bool(differ.any()) and bool((np.abs(a[differ]) <= scale).all() and (np.abs(b[differ]) <= scale).all())


def _is_index_of_a_squeezed_reduction(lines, diff):
    # indexing out of bounds a 0-d result of min/max/median ... along a dim: PyTorch's message
    # says 'with size 1' (its result was made with the reduced dim kept, then squeezed in
    # place), for any other 0-d tensor 'with size 0', as leafgrad's always does (seed 4013487)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] == 'line'):
        return False
    a, b = mine[2], theirs[2]
    return (a[:2] == b[:2] == ('raised', 'IndexError') and a[2].endswith('with size 0')
            and b[2] == a[2][:-1] + '1')


# a NaN written in a program, or made by a domain error (seed 8006911: pow_(0.5) of a negative)
_NAN_SOURCES = ("float('nan')", 'sqrt', 'log', 'pow', '**', 'acos', 'asin')


def _is_clamp_gradient_at_nan_by_lane(lines, diff):
    # hardtanh/relu6's gradient at a NaN input: PyTorch's vectorized loop gives 0, its scalar tail
    # passes the gradient (by position and CPU: 16 float32 / 8 float64 lanes with AVX512), leafgrad
    # passes it everywhere (seed 4011257); that 0 times an infinite derivative further back is
    # NaN where leafgrad's is inf (seed 11011214: hardtanh of x / x.clone() at x = 0, whose 0/0
    # is the NaN and whose derivative 1/0 the inf, at element 0, a vectorized lane)
    # elu/selu/celu's gradient at NaN likewise: PyTorch's vector lanes take the negative branch
    # (NaN > 0 is false: grad times a scale times exp(NaN), NaN), its scalar tail the positive
    # one (NaN <= 0 is false: grad times a scale), as leafgrad does everywhere (seed 12003756:
    # elu of a 3x3 float64 tensor with a NaN at element 0, a lane of 8), and further back that NaN
    # times an infinite derivative, where leafgrad's 1 gives an inf (seed 12029536: elu of a
    # remainder by 0, whose derivative for the divisor, -floor(x / 0), is infinite)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('grad', 'hook', 'final')):
        return False
    clamp = any(op in line for line in lines for op in ('hardtanh', 'relu6'))
    elu = any(re.search(r'\b[sc]?elu\(', line) for line in lines)
    nan_sources = _NAN_SOURCES + (' / ', 'remainder', 'fmod')
    if not (clamp or elu) or not any(op in line for line in lines for op in nan_sources):
        return False
    a, b = (mine[3], theirs[3]) if mine[0] == 'hook' else (mine[2], theirs[2])  # (what a hook saw)
    if not (a and b and a[0] == b[0] == 'tensor' and a[:6] == b[:6]):
        return False
    bad = ~np.isclose(a[6], b[6], equal_nan=True)
    theirs_bad, mine_bad = b[6][bad], a[6][bad]
    lane = np.zeros(theirs_bad.shape, dtype=bool)
    if clamp:
        lane |= (theirs_bad == 0) | (np.isnan(theirs_bad) & np.isinf(mine_bad))
    if elu:
        lane |= np.isnan(theirs_bad) & ~np.isnan(mine_bad)
    return bool(bad.any()) and bool(lane.all())


def _is_inplace_over_its_own_view(lines, diff):
    # an in-place op whose other operand is a view of the tensor it writes (broadcast, so that
    # PyTorch does not refuse the overlap): PyTorch's loop reads elements it has already
    # written, NumPy's reads the operand as it was (seed 4008186)
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('new', 'final')):
        return False
    views = {}
    for line in lines:
        m = re.match(r'(?:with [^:]*: )?(v\d+) = (v\d+)[.\[]', line)
        if m:
            views[m.group(1)] = m.group(2)

    def made_from(name, target):  # through views of views (and detach(): seed 5003797)
        seen = set()
        while name in views and name not in seen:
            seen.add(name)
            name = views[name]
            if name == target:
                return True
        return False
    def root(name):
        seen = set()
        while name in views and name not in seen:
            seen.add(name)
            name = views[name]
        return name
    for i, line in enumerate(lines):
        m = re.match(r'(?:with [^:]*: )?(v\d+)\[[^\]]*\] = (.*)$', line)
        if m:
            # an assignment (a copy_) of a view of the written tensor's base (seed 22002389:
            # x[0:] = a row of x, broadcast over x: PyTorch copies the row's elements after
            # writing some of them): let through only where the value cloned first agrees
            shared = [arg for arg in re.findall(r'v\d+', m.group(2)) if root(arg) == root(m.group(1))]
            if shared:
                head, tail = line[:m.start(2)], line[m.start(2):]
                tail = re.sub(r'\b(' + '|'.join(shared) + r')\b', r'\1.clone()', tail)
                if _agree(lines[:i] + [head + tail] + lines[i + 1:]):
                    return True
            continue
        m = re.match(r'(?:with [^:]*: )?(v\d+)(?:\[[^\]]*\])?\.\w+_\((.*)\)', line)
        if not m:
            continue
        args = re.findall(r'v\d+', m.group(2))
        if any(made_from(arg, m.group(1)) for arg in args):
            return True
        # an operand that is another view of the written tensor's base (seed 11003852: a row of
        # x.mul_(a column of x), which share one element: PyTorch lets the overlap through, as
        # the column is no dense tensor, and multiplies the row's last element by the first
        # one it has already written): let through only where reading the operand before the
        # write (a clone) makes the two agree
        shared = [arg for arg in args if arg != m.group(1) and root(arg) == root(m.group(1))]
        if shared:
            head, tail = line[:m.start(2)], line[m.start(2):]
            tail = re.sub(r'\b(' + '|'.join(shared) + r')\b', r'\1.clone()', tail)
            if _agree(lines[:i] + [head + tail] + lines[i + 1:]):
                return True
    return False


def _ancestry(lines, name):
    """The lines that made ``name`` or changed (in place) what it was made of, transitively."""
    names, kept, changed = {name}, set(), True
    while changed:
        changed = False
        for i, line in enumerate(lines):
            body = re.sub(r'^with [^:]*: ', '', line)
            target = re.match(r'((?:v\d+, *)*v\d+),? *=(?!=)|(v\d+)[.\[]', body)
            if i in kept or not target:
                continue
            written = set(re.findall(r'v\d+', target.group(1) or target.group(2)))
            if written & names:
                kept.add(i)
                names |= set(re.findall(r'v\d+', body))
                changed = True
    return [lines[i] for i in sorted(kept)]


def _is_float32_exp_rounding_amplified(lines, diff):
    # NumPy's float32 exp and expm1 round otherwise than PyTorch's (Sleef's) kernels in the last
    # bit for many inputs (exp: 39% of normal(0, 4) inputs, expm1: 8%), which a function further
    # on with a large derivative shows (seed 11010365: sin(expm1(exp(2.0))), exp 1 ulp apart,
    # expm1 of it 1617.1774 against 1617.1782, their sines 0.6764 against 0.6758): let through
    # only a float32 result made through an exp or expm1 whose program, run in float64, agrees
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] and mine[0] in ('new', 'final')):
        return False
    a, b = mine[2], theirs[2]
    if not (a[0] == b[0] == 'tensor' and a[:6] == b[:6] and a[2] == 'float32'):
        return False
    if not any(re.search(r'\bexp(?:m1)?_?\(', line) for line in _ancestry(lines, mine[1])):
        return False
    wider = ['T.set_default_dtype(T.float64)'] + [line.replace('T.float32', 'T.float64') for line in lines]
    lg, torch = sys.modules.get('leafgrad'), sys.modules.get('torch')
    if lg is None or torch is None:
        return False
    try:
        return _agree(wider)
    finally:
        lg.set_default_dtype(lg.float32)
        torch.set_default_dtype(torch.float32)


# float32 ops whose last bit NumPy's kernels round otherwise than PyTorch's (exp's own rounding;
# Welford's variance against NumPy's two passes; a vectorized sum's order against a pairwise one)
# (and a transcendental function: in PyTorch's vectorized lanes and its scalar tail, two)
_ROUNDED_OTHERWISE = ('softmax', 'std', 'var', 'exp', 'sigmoid', 'mean', 'norm', 'logsumexp', 'tanh', 'mish',
                      'gelu', 'silu', 'softplus', 'elu', 'log', 'sin', 'cos', 'erf', 'pow', '**')


def _is_index_among_rounded_ties(lines, diff):
    # the index that max/min/median along a dim gives where two elements agree only to a matrix
    # product's rounding (seed 12005903: median of column 1 of tanh(x) @ tanh(x) in float32,
    # 0 by PyTorch's BLAS, 1.6e-8 by OpenBLAS, the other element 0 in both: index 1 against 0),
    # or to another op's (seed 18003128: min of two float32 std of a softmax and of one minus it,
    # equal in leafgrad, 1 ulp apart in PyTorch, whose min picks the other index; seed 19016678:
    # median of two equal inputs to mish, one in PyTorch's vector lanes, one in its scalar tail):
    # let through only where the elements the two indices pick, read in PyTorch's run, are equal
    # to rounding
    _, mine, theirs = diff
    if not (mine and theirs and mine[0] == theirs[0] == 'new'):
        return False
    a, b = mine[2], theirs[2]
    if not (a[0] == b[0] == 'tensor' and a[:6] == b[:6] and a[2] == 'int64'):
        return False
    for i, line in enumerate(lines):
        m = re.match(r'(?:with [^:]*: )?v\d+, (v\d+) = (v\d+)\.(?:median|max|min)\((-?\d+)(.*)\)$', line)
        if m and m.group(1) == mine[1]:
            break
    else:
        return False
    source, dim = m.group(2), int(m.group(3))
    if not any(op in line for line in _ancestry(lines, source) for op in _PRODUCTS + _ROUNDED_OTHERWISE):
        return False
    torch = sys.modules.get('torch')
    if torch is None:
        return False
    ns = namespace(torch)
    for j, line in enumerate(lines[:i]):
        run_line(ns, line, j)
    values = np.asarray(ns[source].detach().numpy(), dtype=np.float64)
    if values.ndim == 0:
        return False
    dim %= values.ndim
    picked = []
    for index in (a[6], b[6]):
        index = np.asarray(index, dtype=np.int64)
        if index.ndim < values.ndim:
            index = np.expand_dims(index, dim)
        picked.append(np.take_along_axis(values, index, dim))
    return bool(np.isclose(picked[0], picked[1], rtol=1e-4, atol=1e-4, equal_nan=True).all())


def _is_product_at_zero_through_a_jump(lines, diff):
    # a matrix product's result at zero is the kernel's: its sign (-0.0 by PyTorch's mm of one
    # column, the product itself; OpenBLAS adds it to +0.0), or a rounding off zero where
    # PyTorch's sum cancels exactly (-2.2e-18 against 0.0); seen through a function with a jump
    # at zero: a division or remainder by it (inf against -inf, which meet in a gradient's sum
    # as NaN against -inf: seed 18019759, remainder(v2, v1 @ v2) with v1 = expm1 of a 0), abs's
    # or sign's derivative (-1 against 0: seed 19026154, abs of a float64 product -1.1 * -0.4 +
    # 1.1 * -0.4). Confirmed by running both libraries again with every product's elements
    # within a few roundings of zero made +0.0: then they agree.
    if not any(op in line for line in lines for op in _PRODUCTS) or \
            not any(op in line for line in lines for op in _JUMPS_AT_ZERO + _JUMPS_OF_DERIVATIVES):
        return False
    zeroed = []
    for line in lines:
        zeroed.append(line)
        m = re.match(r'((?:with [^:]*: )?)(v\d+) = ', line)
        if m and any(op in line for op in _PRODUCTS):
            prefix, v = m.groups()
            size = f'({v}.detach().abs().nan_to_num(0.0, 0.0, 0.0).amax() + 1)'  # (NaN and inf aside)
            near_zero = f'{v}.detach().abs() <= T.finfo({v}.dtype).eps * 64 * {size}'
            zeroed.append(f'{prefix}{v} = {v}.masked_fill({near_zero}, 0) if {v}.is_floating_point() and '
                          f'{v}.numel() else {v}')
    return len(zeroed) > len(lines) and _agree(zeroed)


def _agree(lines):
    """Whether ``lines`` run alike in leafgrad and torch (both imported by the fuzzer)."""
    lg, torch = sys.modules.get('leafgrad'), sys.modules.get('torch')
    return lg is not None and torch is not None and differences(run(lg, lines), run(torch, lines)) is None


KNOWN = [('a split/chunk/unbind view stays readable after its base changes in place', _is_multi_output_view_modified),
         ('a view made under no_grad may be changed in place with grad mode on', _is_no_grad_view_modified),
         ("an op's own argument error comes before the no_grad-view error (PyTorch: after)",
          _is_op_error_before_the_no_grad_view_error),
         ("gradients keep the other operand's dtype until accumulated", _is_uncast_gradient),
         ('the sign bit of a NaN from a domain error (copysign shows it)', _is_nan_sign),
         ('a version error names another of the saved tensors', _is_other_version_error),
         ("autograd.grad's gradient of a hooked non-leaf input is one of PyTorch's internal tensors (an "
          "expanded ones, a view of one)", _is_capture_before_hooks),
         ("PyTorch's median of an expanded tensor reads garbage (a PyTorch bug)", _is_torch_median_of_expanded),
         ("create_graph: a gradient recorded as its parts where PyTorch has one fused node",
          _is_fused_double_backward),
         ('a step or modulo of values equal to rounding falls on the other side of its jump', _is_rounding_at_a_jump),
         ("an elementwise result laid out otherwise than by PyTorch's TensorIterator (a reshape copies or not)",
          _is_other_layout),
         ("a matrix product where a NaN meets the sum gives inf (NumPy's BLAS), PyTorch NaN", _is_blas_dropping_nan),
         ("an exact zero's sign (a matrix product's, a tie in maximum/minimum/clamp or in a reduction) is the "
          "kernel's, seen through a jump at zero", _is_zero_of_another_sign),
         ("a matrix product's result at zero (its sign, or a rounding off zero) is the kernel's, seen through a "
          "jump at zero", _is_product_at_zero_through_a_jump),
         ('an in-place op reading a view of the tensor it writes: PyTorch reads what it has written',
          _is_inplace_over_its_own_view),
         ("NumPy's float32 exp/expm1 rounds otherwise than PyTorch's, and a later function magnifies it",
          _is_float32_exp_rounding_amplified),
         ("max/min/median's index among elements equal to rounding (a matrix product's, exp's, a variance's)",
          _is_index_among_rounded_ties),
         ("PyTorch's index error on a 0-d result of a reduction along a dim says size 1",
          _is_index_of_a_squeezed_reduction),
         ("hardtanh/relu6's gradient at NaN is 0 (elu's NaN) in PyTorch's vectorized loop, passed in its scalar tail",
          _is_clamp_gradient_at_nan_by_lane),
         ("a pole (log1p at -1, log/reciprocal/division at 0) of a matrix product's value that one BLAS gives "
          'exactly and the other one rounding away', _is_pole_of_a_rounded_product),
         ("a mask of values > 0 where one is 0 to within a rounding (a product's, a sum's)",
          _is_mask_at_a_rounded_zero),
         ("PyTorch's gradient is a ZeroTensor, which refuses .numpy()", _is_torch_zero_tensor),
         ('PyTorch fails an internal assertion (a PyTorch bug)', _is_torch_internal_assert),
         ("autograd.grad's gradient is a view in PyTorch (a product's transposed, a broadcast input's sum_to), "
          "so detach_ of it is refused there", _is_product_gradient_a_view)]


def known(lines, diff):
    for label, test in KNOWN:
        if test(lines, diff):
            return label
    return None


def minimize(lines, fails):
    """Drop lines (one at a time, from the end) while ``fails(lines)`` stays true."""
    lines = list(lines)
    changed = True
    while changed:
        changed = False
        for i in range(len(lines) - 1, -1, -1):
            trial = lines[:i] + lines[i + 1:]
            if trial and fails(trial):
                lines = trial
                changed = True
    return lines


# ---- generating --------------------------------------------------------------------------------

class Generator:
    """Chooses lines one by one, running each in torch (``ns``) to see what exists."""

    def __init__(self, chooser, torch, specials=True):
        self.c = chooser
        self.torch = torch
        self.ns = namespace(torch)
        self.lines = []
        self.log = []
        self.count = 0
        self.hooks = 0
        self.specials = specials

    # what exists (in torch) --------------------------------------------------------------------
    def tensors(self, pred=lambda t: True):
        out = []
        for name, t in self.ns.items():
            if name.startswith('v') and name[1:].isdigit() and isinstance(t, self.torch.Tensor) and pred(t):
                out.append(name)
        return sorted(out, key=lambda n: int(n[1:]))

    def pick_tensor(self, pred=lambda t: True):
        names = self.tensors(pred)
        return self.c.pick(names) if names else None

    def fresh(self):
        name = f'v{self.count}'
        self.count += 1
        return name

    def emit(self, line):
        self.log.extend(run_line(self.ns, line, len(self.lines)))
        self.lines.append(line)

    # pieces ----------------------------------------------------------------------------------
    def number(self):
        if self.specials and self.c.chance(0.03):
            return self.c.pick(["float('nan')", "float('inf')", "-float('inf')", '0.0', '-0.0'])
        return repr(self.c.int(-20, 20) / 10)

    def data(self, shape):
        if not shape:
            return self.number()
        return '[' + ', '.join(self.data(shape[1:]) for _ in range(shape[0])) + ']'

    def leaf(self, shape=None, requires_grad=None):
        shape = self.c.pick(SHAPES) if shape is None else shape
        name = self.fresh()
        if self.c.chance(0.08):  # an integer tensor now and then: promotion, errors on grad
            data = self.data(shape).replace("float('nan')", '0').replace("-float('inf')", '-9')
            data = data.replace("float('inf')", '9').replace('-0.0', '0.0')
            ints = ''.join(ch for ch in data)
            self.emit(f'{name} = T.tensor({ints}).round().long()')
            return name
        dtype = self.c.pick(['float32', 'float32', 'float64'])
        rg = self.c.chance(0.75) if requires_grad is None else requires_grad
        self.emit(f'{name} = T.tensor({self.data(shape)}, dtype=T.{dtype}, requires_grad={rg})')
        return name

    def dim(self, t):
        nd = max(t.dim(), 1)
        if self.c.chance(0.04):
            return self.c.pick([nd, -nd - 1])  # out of range, on purpose
        return self.c.int(-nd, nd - 1)

    def broadcastable_with(self, a):
        sa = tuple(self.ns[a].shape)

        def ok(t):
            try:
                np.broadcast_shapes(sa, tuple(t.shape))
                return True
            except ValueError:
                return False
        if self.c.chance(0.05):
            return self.pick_tensor()
        return self.pick_tensor(ok)

    def grad_mode(self, stmt):
        r = self.c.int(0, 19)
        if r == 0:
            return f'with T.no_grad(): {stmt}'
        if r == 1:
            return f'with T.no_grad(), T.enable_grad(): {stmt}'
        if r == 2:
            return f'with T.set_grad_enabled(False): {stmt}'
        if r == 3:
            return f'with T.enable_grad(): {stmt}'
        return stmt

    # statements ------------------------------------------------------------------------------
    def unary(self):
        a = self.pick_tensor()
        op = self.c.pick(UNARY)
        form = self.c.int(0, 1)
        expr = f'T.{op}({a})' if form == 0 else f'{a}.{op}()'
        return f'{self.fresh()} = {expr}'

    def f_unary(self):
        a = self.pick_tensor()
        op = self.c.pick(F_UNARY)
        return f'{self.fresh()} = T.nn.functional.{op}({a})'

    def binary(self):
        a = self.pick_tensor()
        b = self.broadcastable_with(a)
        if self.c.chance(0.5):
            return f'{self.fresh()} = {a} {self.c.pick(BINARY)} {b}'
        return f'{self.fresh()} = T.{self.c.pick(BINARY_FN)}({a}, {b})'

    def scalar(self):
        a = self.pick_tensor()
        s = self.c.pick(SCALARS)
        op = self.c.pick(BINARY + ['**'])
        if op == '**':
            return f'{self.fresh()} = {a} ** {self.c.pick(["2", "0.5", "3", "-1", "0"])}'
        return f'{self.fresh()} = {a} {op} {s}' if self.c.chance(0.5) else f'{self.fresh()} = {s} {op} {a}'

    def reduction(self):
        a = self.pick_tensor()
        t = self.ns[a]
        kind = self.c.int(0, 9)
        if kind == 0 or t.dim() == 0:
            return f'{self.fresh()} = {a}.{self.c.pick(["sum", "mean", "amax", "prod", "norm", "std", "var"])}()'
        d = self.dim(t)
        kd = self.c.chance(0.5)
        if kind <= 3:
            op = self.c.pick(['sum', 'mean', 'amax', 'amin', 'prod', 'logsumexp', 'std', 'var'])
            return f'{self.fresh()} = {a}.{op}({d}, keepdim={kd})'
        if kind <= 5:
            op = self.c.pick(['max', 'min', 'median'])
            return f'{self.fresh()}, {self.fresh()} = {a}.{op}({d}, keepdim={kd})'
        if kind <= 7:
            op = self.c.pick(['softmax', 'log_softmax'])
            return f'{self.fresh()} = T.{op}({a}, {d})'
        op = self.c.pick(['cumsum', 'cumprod'])
        return f'{self.fresh()} = {a}.{op}({d})'

    def matmul(self):
        a = self.pick_tensor(lambda t: 1 <= t.dim() <= 3)
        if a is None:
            return None
        sa = tuple(self.ns[a].shape)

        def ok(t):
            try:
                np.matmul(np.zeros(sa), np.zeros(tuple(t.shape)))
                return True
            except ValueError:
                return False
        b = self.pick_tensor(ok) if not self.c.chance(0.05) else self.pick_tensor()
        if b is None:
            n = sa[-1]
            b = self.leaf(shape=(n, self.c.int(1, 3)))
        return f'{self.fresh()} = {a} @ {b}'

    def shape_op(self):
        a = self.pick_tensor()
        t = self.ns[a]
        shape, nd = tuple(t.shape), t.dim()
        k = self.c.int(0, 15)
        new = self.fresh()
        if k == 0:
            return f'{new} = {a}.reshape(-1)'
        if k == 1:
            return f'{new} = {a}.view({", ".join(str(s) for s in reversed(shape)) or "()"})' \
                if self.c.chance(0.5) else f'{new} = {a}.view(-1)'
        if k == 2 and nd <= 2:
            return f'{new} = {a}.t()'
        if k == 3 and nd >= 2:
            return f'{new} = {a}.transpose({self.dim(t)}, {self.dim(t)})'
        if k == 4 and nd >= 1:
            perm = list(range(nd))
            random.Random(self.c.int(0, 99)).shuffle(perm)
            return f'{new} = {a}.permute({", ".join(map(str, perm))})'
        if k == 5:
            return f'{new} = {a}.unsqueeze({self.c.int(-nd - 1, nd)})'
        if k == 6:
            return f'{new} = {a}.squeeze()' if self.c.chance(0.5) else f'{new} = {a}.squeeze({self.dim(t)})'
        if k == 7:
            target = [s if s != 1 else self.c.int(1, 3) for s in shape]
            return f'{new} = {a}.expand({", ".join(map(str, target)) or "()"})'
        if k == 8 and nd >= 1:
            d = self.dim(t)
            size = shape[d] if -nd <= d < nd else 1
            start = self.c.int(0, max(size - 1, 0))
            return f'{new} = {a}.narrow({d}, {start}, {self.c.int(0, size - start)})'
        if k == 9 and nd >= 1:
            d = self.dim(t)
            size = shape[d] if -nd <= d < nd else 1
            return f'{new} = {a}.select({d}, {self.c.int(-size, max(size - 1, 0))})'
        if k == 10:
            return f'{new} = {a}[{self.basic_index(shape)}]'
        if k == 11:
            return f'{new} = {a}.{self.c.pick(["contiguous", "clone", "flatten", "detach"])}()'
        if k == 12 and nd >= 1:
            d = self.dim(t)
            op = self.c.pick(['unbind({d})[0]', 'chunk(2, {d})[-1]', 'split(1, {d})[0]'])
            return f'{new} = {a}.{op.format(d=d)}'
        if k in (13, 14):
            b = self.pick_tensor(lambda u: u.dim() == nd) if not self.c.chance(0.1) else self.pick_tensor()
            if k == 13 and nd >= 1:
                return f'{new} = T.cat([{a}, {b}], {self.dim(t)})'
            return f'{new} = T.stack([{a}, {b}])'
        if k == 15 and nd >= 1:
            return f'{new} = {a}.diagonal()' if nd >= 2 else f'{new} = {a}.flip(0)'
        return f'{new} = {a}.clone()'

    def basic_index(self, shape):
        parts = []
        for size in shape[:self.c.int(0, len(shape))]:
            r = self.c.int(0, 5)
            if r == 0:
                parts.append(str(self.c.int(-size, size - 1)) if size else ':')
            elif r == 1:
                parts.append(f'{self.c.int(0, size)}:')
            elif r == 2:
                parts.append(f'::{self.c.int(1, 2)}')
            elif r == 3:
                parts.append('None')
            elif r == 4:
                parts.append(f'{self.c.int(-size, size)}:{self.c.int(-size, size)}')
            else:
                parts.append(':')
        if self.c.chance(0.2):
            parts.insert(self.c.int(0, len(parts)), '...')
        if self.c.chance(0.03):
            parts.append(str(self.c.int(3, 7)))  # out of range, on purpose
        return ', '.join(parts) if parts else '...'

    def advanced_index(self):
        a = self.pick_tensor(lambda t: t.dim() >= 1)
        if a is None:
            return None
        t = self.ns[a]
        size = t.shape[0]
        k = self.c.int(0, 3)
        if k == 0:
            idx = [self.c.int(-size, size - 1) for _ in range(self.c.int(1, 3))] if size else [0]
            return f'{self.fresh()} = {a}[{idx}]'
        if k == 1:
            m = self.pick_tensor(lambda u: tuple(u.shape) == tuple(t.shape) and u.dtype != self.torch.int64)
            if m is None:
                return None
            return f'{self.fresh()} = {a}[{m} > 0]'
        if k == 2:
            d = self.dim(t)
            sz = t.shape[d] if -t.dim() <= d < t.dim() else 1
            idx = [self.c.int(0, max(sz - 1, 0)) for _ in range(self.c.int(1, 3))]
            return f'{self.fresh()} = {a}.index_select({d}, T.tensor({idx}))'
        d = self.c.int(0, t.dim() - 1)
        shape = list(t.shape)
        idx = np.zeros(shape, dtype=int)
        for pos in np.ndindex(*shape):
            idx[pos] = self.c.int(0, shape[d] - 1) if shape[d] else 0
        return f'{self.fresh()} = {a}.gather({d}, T.tensor({idx.tolist()}))'

    def inplace(self):
        a = self.pick_tensor(lambda t: t.dtype != self.torch.int64)
        if a is None:
            return None
        target = a
        t = self.ns[a]
        if self.c.chance(0.4) and t.dim() >= 1:
            target = f'{a}[{self.basic_index(tuple(t.shape))}]'
        k = self.c.int(0, 3)
        if k == 0:
            return f'{target}.{self.c.pick(INPLACE_UNARY)}()'
        if k == 1:
            op = self.c.pick(INPLACE_SCALAR)
            if op == 'clamp_':
                return f'{target}.clamp_(min={self.c.pick(["-0.5", "0.0", "1.0"])})'
            return f'{target}.{op}({self.c.pick(SCALARS)})'
        if k == 2:
            b = self.pick_tensor()
            return f'{target}.{self.c.pick(INPLACE_TENSOR)}({b})'
        return f'{target} = {self.c.pick(SCALARS)}' if self.c.chance(0.5) else \
            f'{target} = {self.pick_tensor()}'

    def hook(self):
        a = self.pick_tensor(lambda t: t.requires_grad) if not self.c.chance(0.05) else self.pick_tensor()
        if a is None:
            return None
        self.hooks += 1
        kind = self.c.pick(['double', 'negate', 'none', 'clone'])
        return f'{a}.register_hook(H({self.hooks}, {kind!r}))'

    def flags(self):
        a = self.pick_tensor()
        k = self.c.int(0, 4)
        if k == 0:
            return f'{a}.retain_grad()'
        if k == 1:
            return f'{self.fresh()} = {a}.detach()'
        if k == 2:
            return f'{a}.requires_grad_({self.c.chance(0.7)})'
        if k == 3:
            return f'{a}.grad = None'
        return f'{a}.detach_()'

    def backward(self):
        a = self.pick_tensor(lambda t: t.requires_grad) if not self.c.chance(0.05) else self.pick_tensor()
        if a is None:
            return None
        rg = self.c.chance(0.5)
        t = self.ns[a]
        k = self.c.int(0, 2)
        if k == 0 or t.dim() == 0:
            target = f'{a}.sum()' if t.dim() else a
            return f'{target}.backward(retain_graph={rg})'
        if k == 1:
            return f'{a}.backward(T.ones_like({a}), retain_graph={rg})'
        return f'T.autograd.backward([{a}.sum()], retain_graph={rg})'

    def autograd_grad(self):
        a = self.pick_tensor(lambda t: t.requires_grad)
        if a is None:
            return None
        inputs = sorted(set(self.c.pick(self.tensors()) for _ in range(self.c.int(1, 3))), key=lambda n: int(n[1:]))
        rg, au, cg = self.c.chance(0.5), self.c.chance(0.5), self.c.chance(0.2)
        outs = ', '.join(self.fresh() for _ in inputs) + ','
        return (f'{outs} = T.autograd.grad({a}.sum(), [{", ".join(inputs)}], retain_graph={rg}, '
                f'allow_unused={au}, create_graph={cg})')

    STATEMENTS = [('leaf', 3), ('unary', 4), ('f_unary', 1), ('binary', 4), ('scalar', 2), ('reduction', 3),
                  ('matmul', 2), ('shape_op', 5), ('advanced_index', 2), ('inplace', 3), ('hook', 2), ('flags', 2),
                  ('backward', 3), ('autograd_grad', 1)]

    def statement(self):
        kinds = [k for k, w in self.STATEMENTS for _ in range(w)]
        for _ in range(10):
            kind = self.c.pick(kinds)
            if kind == 'leaf':
                self.leaf()
                return
            if not self.tensors():
                continue
            line = getattr(self, kind)()
            if line is not None:
                if kind not in ('backward', 'autograd_grad', 'hook', 'flags'):
                    line = self.grad_mode(line)
                self.emit(line)
                return

    def program(self, length):
        for _ in range(self.c.int(1, 2)):
            self.leaf(requires_grad=True)
        for _ in range(length):
            self.statement()
        return self.lines


def generate(chooser, torch, length=12, specials=True):
    """(lines, torch's log) of a random program of about ``length`` statements."""
    g = Generator(chooser, torch, specials)
    g.program(length)
    log = g.log + _final_state(g.ns)
    return g.lines, log


def source(lines):
    """The program as a runnable script."""
    return '\n'.join(['import torch as T', 'def H(k, kind):', "    return lambda g: g * 2 if kind == 'double' else "
                      "-g if kind == 'negate' else g.clone() if kind == 'clone' else None"] + list(lines))

