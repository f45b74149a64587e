"""``gradcheck`` and ``gradgradcheck``: analytical gradients against finite differences.

The numerical Jacobian of each (output, input) pair is built one input element at a time by
central differences, ``(f(x + eps) - f(x - eps)) / (2 eps)``, perturbing the input's array in
place (no new graph needed). The analytical Jacobian is built one output element at a time:
a backward seeded with a one-hot gradient gives one column of every input's Jacobian. Both
are laid out as PyTorch lays them out, ``[input.numel(), output.numel()]``, and compared with
``|analytical - numerical| <= atol + rtol * |numerical|``.

``fast_mode=True`` checks one number per (output, input) pair instead, as PyTorch's fast mode
does: for random unit vectors u (one per input) and v (one per output), drawn from a fresh
generator as PyTorch draws them, ``v^T J u`` from a backward seeded with v (then dotted with u)
against ``v`` dotted with the central difference of the function along u; atol is scaled by
``sum(u) * sum(v)``, the size of ``v^T A u`` for a matrix A of atol entries. Two function
evaluations per input and one backward per output, whatever their sizes.

Complex inputs and outputs are checked through the real function they define: each complex
input that requires grad becomes two real inputs (its real and imaginary parts, joined by
``complex``) and each complex output its real pairs (``view_as_real``). The real Jacobian of that
function is unambiguous, and the gradients flowing through ``complex`` and ``view_as_real`` are
right only when the op's complex gradient follows PyTorch's convention (dL/dx + i dL/dy).

After the Jacobians, as PyTorch: a backward seeded with zeros must give zero input gradients
("backward not multiplied by grad_output"; ``masked=True`` asks them to be close to zero only,
which is all ``masked`` means for dense tensors, the only kind leafgrad has), and, with
``check_undefined_grad``, a backward whose output gradients are undefined (None: an
``UndefinedGradBackward`` node between each output and the seed gives None) must run and give
zero or None input gradients; forward mode likewise, a zero tangent as an absent one.

Run them in float64: with float32 the differences are dominated by rounding.
"""
import warnings

import numpy as np

from .. import backend
from .._vmap import vmap
from ..creation import rand, randn_like, zeros, zeros_like
from ..generator import Generator
from ..ops import stack
from ..ops.complex_numbers import complex as join, resolve_conj, view_as_real
from ..tensor import Tensor
from . import forward_ad, grad as autograd_grad
from .graph import Node, gradient_edge


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck (a RuntimeError, as in PyTorch)."""


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _differentiable_outputs(outputs):
    return tuple(o for o in outputs if isinstance(o, Tensor))


def _check_inputs(inputs):
    any_requires = False
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t._requires_grad:
            if t._data.dtype != np.float64 and t._data.dtype != np.complex128:
                warnings.warn(f'Input #{i} requires gradient and is not a double precision floating point or '
                              'complex. This check will likely fail if all the inputs are not of double '
                              'precision floating point or complex. ', UserWarning, stacklevel=3)
            any_requires = True
    if not any_requires:
        raise ValueError('gradcheck expects at least one input tensor to require gradient, but none of them '
                         'have requires_grad=True.')


def _host_copy(t):
    """A NumPy copy of a tensor's values (the device's too: the Jacobians live on the host)."""
    return np.array(backend.to_numpy(t._data), copy=True)


def _eval(func, inputs):
    return _differentiable_outputs(_as_tuple(func(*inputs)))


def _real_lift(func, inputs):
    """``func`` as a function of real tensors only, and its inputs (see the module's docstring)."""
    lifted, parts = [], []
    for x in inputs:
        if isinstance(x, Tensor) and x._requires_grad and x._data.dtype.kind == 'c':
            lifted += [Tensor._wrap(x._data.real.copy(), True), Tensor._wrap(x._data.imag.copy(), True)]
            parts.append(2)
        else:
            lifted.append(x)
            parts.append(1)

    def real_func(*args):
        args = iter(args)
        outs = _as_tuple(func(*[join(next(args), next(args)) if n == 2 else next(args) for n in parts]))
        return tuple(view_as_real(resolve_conj(o)) if isinstance(o, Tensor) and o._data.dtype.kind == 'c' else o
                     for o in outs)
    return real_func, tuple(lifted)


def _numerical_jacobians(func, inputs, outputs, eps):
    """{(out_i, in_i): array [input numel, output numel]} by central differences."""
    jac = {}
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x._requires_grad):
            continue
        data = x._data  # perturbed in place, element by element, whatever its strides
        mats = [np.zeros((data.size, o._data.size), dtype=o._data.dtype) for o in outputs]
        for k in range(data.size):
            idx = np.unravel_index(k, data.shape)
            orig = data[idx].copy()
            data[idx] = orig - eps
            minus = [_host_copy(o) for o in _eval(func, inputs)]
            data[idx] = orig + eps
            plus = [_host_copy(o) for o in _eval(func, inputs)]
            data[idx] = orig
            for j, (p, m) in enumerate(zip(plus, minus)):
                if p.dtype.kind in 'fV':
                    mats[j][k] = ((p - m) / (2 * eps)).reshape(-1)
        for j in range(len(outputs)):
            jac[(j, i)] = mats[j]
    return jac


def _analytical_jacobians(outputs, inputs):
    """{(out_i, in_i): array [input numel, output numel]}, one backward per output element."""
    diff = [(i, x) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]
    jac = {}
    for j, out in enumerate(outputs):
        mats = {i: np.zeros((x._data.size, out._data.size), dtype=out._data.dtype) for i, x in diff}
        if not out._requires_grad:
            for i, _ in diff:
                jac[(j, i)] = mats[i]
            continue
        for k in range(out._data.size):
            seed = np.zeros_like(out._data).reshape(-1)  # on the output's device
            seed[k] = 1
            seed_t = Tensor._wrap(seed.reshape(out._data.shape))
            grads = autograd_grad((out,), [x for _, x in diff], (seed_t,), retain_graph=True, allow_unused=True)
            for (i, x), g in zip(diff, grads):
                if g is None:
                    continue
                if tuple(g._data.shape) != tuple(x._data.shape):
                    raise GradcheckError('Gradient has incorrect shape')
                mats[i][:, k] = _host_copy(g).astype(out._data.dtype, copy=False).reshape(-1)
        for i, _ in diff:
            jac[(j, i)] = mats[i]
    return jac


def _forward_jacobians(func, inputs, outputs):
    """{(out_i, in_i): array [input numel, output numel]} by forward mode: one forward pass per
    input element, that input's tangent one-hot, the others' zero."""
    diff = [(i, x) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]
    jac = {}
    with forward_ad.dual_level():
        for i, x in diff:
            mats = [np.zeros((x._data.size, o._data.size), dtype=o._data.dtype) for o in outputs]
            for k in range(x._data.size):
                duals = list(inputs)
                for ii, xx in diff:
                    tangent = np.zeros_like(xx._data).reshape(-1)
                    if ii == i:
                        tangent[k] = 1
                    duals[ii] = forward_ad.make_dual(xx, Tensor._wrap(tangent.reshape(xx._data.shape)))
                outs = _eval(func, duals)
                for j, o in enumerate(outs):
                    t = forward_ad.unpack_dual(o).tangent
                    if t is not None:
                        if tuple(t._data.shape) != tuple(o._data.shape):
                            raise GradcheckError('Forward-mode gradient has incorrect shape')
                        mats[j][k] = _host_copy(t).reshape(-1)
            for j in range(len(outputs)):
                jac[(j, i)] = mats[j]
    return jac


_FAILED_BATCHED_FORWARD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True`
and `check_forward_ad=True`, but can be disabled in the following ways
dependong on how the test was invoked (via a test that calls gradcheck
directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_forward_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_forward_grad=False`
"""


def _batched_forward_failure(func, inputs):
    """PyTorch's batched forward-gradient check: for each input that requires grad, the output
    tangents of two random tangents, computed at once (vmap over the tangents: each forward
    rule runs on the batch) and one by one, must agree. Returns the failure message or None."""
    for i, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x._requires_grad and x._data.dtype.kind == 'f'):
            continue

        def push(tangent, i=i, x=x):
            duals = [forward_ad.make_dual(x.detach(), tangent) if k == i else
                     (inp.detach() if isinstance(inp, Tensor) else inp) for k, inp in enumerate(inputs)]
            out = []
            for o in _as_tuple(func(*duals)):
                if o is None:
                    continue
                primal, tangent_out = forward_ad.unpack_dual(o)
                out.append(tangent_out if tangent_out is not None else zeros_like(primal))
            return tuple(out)
        tangents = [randn_like(x.detach()) for _ in range(2)]
        with forward_ad.dual_level():
            expected = [stack(list(shards)) for shards in zip(*[push(t) for t in tangents])]
            try:
                result = vmap(push)(stack(tangents))
            except RuntimeError as ex:
                return f'While computing batched gradients, got: {ex}\n\n{_FAILED_BATCHED_FORWARD}'
        for j, (res, exp) in enumerate(zip(result, expected)):
            if not np.allclose(_host_copy(res), _host_copy(exp)):
                return (f'For output {j} and input {j}:\n\n{_FAILED_BATCHED_FORWARD}\n\nGot:\n{res!r}\n\n'
                        f'Expected:\n{exp!r}')
    return None


_FAILED_BATCHED_GRAD = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_grad=False` and/or `check_batched_gradgrad=False`.

If you're modifying an existing operator that supports batched grad computation,
or wish to make a new operator work with batched grad computation, please read
the following.

To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation. The most common failure case is if there is a 'vmap-incompatible
operation' in the backward pass. Please see
NOTE: [How to write vmap-compatible backward formulas]
in the codebase for an explanation of how to fix this.
""".strip()


def _test_batched_grad(diff, output, output_idx):
    """PyTorch's batched backward check: the gradients of ``output`` for two random output
    gradients, computed at once (vmap over the backward: each node's derivative runs on the
    batch) and one by one, must agree; raises GradcheckError when they do not."""

    def vjp(v):
        grads = autograd_grad(output, diff, v, retain_graph=True, allow_unused=True)
        return tuple(g if g is not None else zeros([], dtype=x.dtype).expand(x.shape) for g, x in zip(grads, diff))
    grad_outputs = [randn_like(output) for _ in range(2)]
    expected = [stack(list(shards)) for shards in zip(*[vjp(g) for g in grad_outputs])]
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', message='There is a performance drop')
        try:
            result = vmap(vjp)(stack(grad_outputs))
        except RuntimeError as ex:
            raise GradcheckError(f'While computing batched gradients, got: {ex}\n\n{_FAILED_BATCHED_GRAD}') from ex
    for i, (res, exp) in enumerate(zip(result, expected)):
        if not np.allclose(_host_copy(res), _host_copy(exp)):
            raise GradcheckError(f'For output {output_idx} and input {i}:\n\n{_FAILED_BATCHED_GRAD}\n\nGot:\n{res!r}'
                                 f'\n\nExpected:\n{exp!r}')


class UndefinedGradBackward(Node):
    """Gives its input an undefined (None) gradient whatever it receives: PyTorch's
    ``torch._C._functions.UndefinedGrad``, which gradcheck puts after an output."""

    def apply(self, grad):
        return (None,)


def _undefined_grad(t):
    """``t`` as a new tensor whose backward gives ``t`` an undefined gradient."""
    out = Tensor._wrap(t._data, True)
    out._grad_fn = UndefinedGradBackward((gradient_edge(t),))
    return out


def _zero_seeded_grads(outputs, diff):
    seeds = [Tensor._wrap(np.zeros_like(o._data)) for o in outputs]
    return autograd_grad(outputs, diff, seeds, allow_unused=True)


def _backward_mul_by_grad_output_failure(outputs, diff, masked):
    """PyTorch's check that backward multiplies by grad_output: zero output gradients must give
    zero input gradients (with ``masked``: close to zero), of the inputs' dtype and size."""
    for g, x in zip(_zero_seeded_grads(outputs, diff), diff):
        if g is None:
            continue
        values = _host_copy(g)
        zero = np.allclose(values, 0, rtol=1e-05, atol=1e-08) if masked else not values.any()
        if not zero:
            return 'backward not multiplied by grad_output'
        if g._data.dtype != x._data.dtype:
            return 'grad is incorrect type'
        if g.device != x.device:
            return 'grad is incorrect device'
        if g._data.shape != x._data.shape:
            return 'grad is incorrect size'
    return None


_UNDEFINED_BC_WARNING = ('Backwards compatibility: New undefined gradient support checking feature is enabled by '
                         'default, but it may break existing callers of this function. If this is true for you, you '
                         'can call this function with "check_undefined_grad=False" to disable the feature')
_UNDEFINED_NOTES = 'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'


def _test_undefined_backward(func, inputs, diff, n_outputs):
    """PyTorch's undefined-gradient check: every output's gradient undefined, then (with several
    outputs) one at a time; the backward must run and give zero or None input gradients.
    Raises GradcheckError (after PyTorch's warning) when it does not."""
    def requiring():
        return [o for o in _eval(func, inputs) if o._requires_grad]
    cases = [[_undefined_grad(o) for o in requiring()]]
    if len(cases[0]) > 1:
        for k in range(n_outputs):
            cases.append([_undefined_grad(o) if j == k else o for j, o in enumerate(requiring())])
    for outs in cases:
        try:
            grads = _zero_seeded_grads(outs, diff)
        except RuntimeError as e:
            warnings.warn(_UNDEFINED_BC_WARNING, UserWarning, stacklevel=4)
            raise GradcheckError('Expected backward function to handle undefined output grads. '
                                 + _UNDEFINED_NOTES) from e
        for g in grads:
            if g is not None and _host_copy(g).any():
                warnings.warn(_UNDEFINED_BC_WARNING, UserWarning, stacklevel=4)
                raise GradcheckError('Expected all input grads to be undefined or zero when all output grads '
                                     'are undefined or zero. ' + _UNDEFINED_NOTES)


def _test_undefined_forward(func, inputs):
    """PyTorch's forward-mode counterpart: for each input, its tangent given as zeros and not
    given at all (the other inputs' tangents random) must give the same output tangents."""
    rng = np.random.default_rng(0)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]
    with forward_ad.dual_level():
        duals = list(inputs)
        for i in diff:
            x = inputs[i]
            duals[i] = forward_ad.make_dual(x.detach(), Tensor._wrap(_random_like(rng, x._data)))
        for i in diff:
            x, kept = inputs[i], duals[i]
            duals[i] = forward_ad.make_dual(x.detach(), Tensor._wrap(np.zeros_like(x._data)))
            zero_tangent = _eval(func, duals)
            duals[i] = x.detach()
            no_tangent = _eval(func, duals)
            duals[i] = kept
            for k, (o1, o2) in enumerate(zip(zero_tangent, no_tangent)):
                if o1._data.dtype.kind not in 'fc' or o2._data.dtype.kind not in 'fc':
                    continue
                t1, t2 = forward_ad.unpack_dual(o1).tangent, forward_ad.unpack_dual(o2).tangent
                if t1 is not None and t2 is not None and not np.allclose(_host_copy(t1), _host_copy(t2)):
                    raise GradcheckError('Mismatch in tangent values for output with index: ', k, ' when input: ',
                                         x, ' has an undefined tangent value. ', ' Got: ', t1, ' but expected: ',
                                         t2)


def _fmt(array, dtype):
    return repr(Tensor._wrap(np.asarray(array, dtype=dtype)))


def _fail(message, raise_exception):
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Returns True, or raises GradcheckError (returns False with ``raise_exception=False``)
    naming the output and input whose Jacobians differ, or the check that failed.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError('Expected at least one of check_forward_ad or check_backward_ad to be True')
    if check_batched_grad and not check_backward_ad:
        raise AssertionError('Setting check_batched_grad=True requires check_backward_ad to be True')
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError('Setting check_batched_forward_grad=True requires check_forward_ad to be True')
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_batched_grad, check_batched_forward_grad, check_forward_ad,
                          check_backward_ad, fast_mode, masked)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad, fast_mode, masked):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    outputs = _eval(func, inputs)
    if any(t._data.dtype.kind == 'c' for t in inputs + outputs if isinstance(t, Tensor)):
        func, inputs = _real_lift(func, inputs)
        outputs = _eval(func, inputs)

    if fast_mode:
        if not _fast_gradcheck(func, inputs, outputs, eps, atol, rtol, nondet_tol, raise_exception):
            return False
    elif not _slow_gradcheck(func, inputs, outputs, eps, atol, rtol, raise_exception, nondet_tol,
                             check_undefined_grad, check_grad_dtypes, check_batched_forward_grad, check_forward_ad,
                             check_backward_ad):
        return False
    if not check_backward_ad:
        return True
    diff = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
    requiring = [o for o in outputs if o._requires_grad]
    if check_batched_grad:
        for j, out in enumerate(requiring):
            _test_batched_grad(diff, out, j)
    if requiring:
        failure = _backward_mul_by_grad_output_failure(requiring, diff, masked)
        if failure is not None:
            return _fail(failure, raise_exception)
        if check_undefined_grad:
            _test_undefined_backward(func, inputs, diff, len(outputs))
    return True


def _slow_gradcheck(func, inputs, outputs, eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad,
                    check_grad_dtypes, check_batched_forward_grad, check_forward_ad, check_backward_ad):
    numerical = _numerical_jacobians(func, inputs, outputs, eps)
    if check_forward_ad:
        forward = _forward_jacobians(func, inputs, outputs)
        for (j, i), a in forward.items():
            n = numerical[(j, i)]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                dtype = outputs[j]._data.dtype
                return _fail(f'Jacobian computed with forward mode mismatch for output {j} with respect to input '
                             f'{i},\nnumerical:{_fmt(n, dtype)}\nanalytical:{_fmt(a, dtype)}\n', raise_exception)
        if check_undefined_grad:
            _test_undefined_forward(func, inputs)
        if check_batched_forward_grad:
            failure = _batched_forward_failure(func, inputs)
            if failure is not None:
                return _fail(failure, raise_exception)
    if not check_backward_ad:
        return True

    # Outputs that do not require grad must have a zero numerical Jacobian.
    for j, out in enumerate(outputs):
        if out._requires_grad:
            continue
        for (jj, i), n in numerical.items():
            if jj == j and not np.allclose(n, 0, rtol=rtol, atol=atol):
                return _fail('Numerical gradient for function expected to be zero', raise_exception)

    analytical = _analytical_jacobians(outputs, inputs)
    if check_grad_dtypes:
        diff = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
        for out in outputs:
            if out._requires_grad:
                grads = autograd_grad(out, diff, Tensor._wrap(np.ones_like(out._data)), retain_graph=True,
                                      allow_unused=True)
                for x, g in zip(diff, grads):
                    if g is not None and g._data.dtype != x._data.dtype:
                        return _fail('Gradient has dtype mismatch', raise_exception)

    for (j, i), a in analytical.items():
        n = numerical[(j, i)]
        if not np.allclose(a, n, rtol=rtol, atol=atol):
            dtype = outputs[j]._data.dtype
            return _fail(f'Jacobian mismatch for output {j} with respect to input {i},\n'
                         f'numerical:{_fmt(n, dtype)}\nanalytical:{_fmt(a, dtype)}\n', raise_exception)

    # Reentrancy: the backward pass run again gives the same result.
    again = _analytical_jacobians(_eval(func, inputs), inputs)
    for key, a in analytical.items():
        if np.abs(again[key] - a).max(initial=0.0) > nondet_tol:
            return _fail('Backward is not reentrant, i.e., running backward with same input and grad_output '
                         'multiple times gives different values, although analytical gradient matches '
                         f'numerical gradient.The tolerance for nondeterminism was {nondet_tol}.',
                         raise_exception)
    return True


def _unit_vector(numel, generator, dtype):
    """PyTorch's random direction: rand (default float dtype) of the generator, in ``dtype``,
    divided by its norm."""
    vec = np.asarray(backend.to_numpy(rand(numel, generator=generator)._data)).astype(dtype)
    norm = np.sqrt((vec * vec).sum())
    return vec / norm if norm else vec


def _fast_gradcheck(func, inputs, outputs, eps, atol, rtol, nondet_tol, raise_exception):
    generator = Generator()  # (its own: the user's stream is left alone, as in PyTorch)
    diff = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
    us = [_unit_vector(x._data.size, generator, x._data.dtype) for x in diff]
    vs = [_unit_vector(o._data.size, generator, o._data.dtype) for o in outputs]

    # numerical[i][j] = v_j . (f_j(x + eps u_i) - f_j(x - eps u_i)) / (2 eps)
    numerical = []
    for x, u in zip(diff, us):
        data = x._data  # perturbed in place, restored after
        orig = data.copy()
        step = backend.array_module(data).asarray(u.reshape(data.shape) * eps)  # (on the input's device)
        data[...] = orig - step
        minus = [_host_copy(o) for o in _eval(func, inputs)]
        data[...] = orig + step
        plus = [_host_copy(o) for o in _eval(func, inputs)]
        data[...] = orig
        numerical.append([float(((p - m) / (2 * eps)).reshape(-1) @ v) if p.dtype.kind == 'f' else 0.0
                          for p, m, v in zip(plus, minus, vs)])

    def vjps():
        """analytical[j][i] = (v_j^T J_ji) . u_i, one backward per output."""
        out = []
        for o, v in zip(outputs, vs):
            if not o._requires_grad:
                out.append([0.0] * len(diff))
                continue
            seed = Tensor._wrap(backend.array_module(o._data).asarray(v.reshape(o._data.shape)))
            grads = autograd_grad((o,), diff, (seed,), retain_graph=True, allow_unused=True)
            row = []
            for x, g, u in zip(diff, grads, us):
                if g is not None and tuple(g._data.shape) != tuple(x._data.shape):
                    raise GradcheckError('Gradient has incorrect shape')
                row.append(0.0 if g is None else float(_host_copy(g).reshape(-1) @ u))
            out.append(row)
        return out

    analytical = vjps()
    for j, v in enumerate(vs):
        for i, u in enumerate(us):
            a, n = analytical[j][i], numerical[i][j]
            tolerance = atol * float(u.sum()) * float(v.sum()) + rtol * abs(n)
            if not abs(a - n) <= tolerance:
                return _fail(f'Jacobian mismatch for output {j} with respect to input {i},\n'
                             f'numerical:{n}\nanalytical:{a}\n\n'
                             'The above quantities relating the numerical and analytical jacobians are '
                             'computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 '
                             'for more background \nabout fast mode. Run with fast_mode=False for the '
                             'full Jacobians.', raise_exception)
    again = vjps()
    for row, row_again in zip(analytical, again):
        if max((abs(a - b) for a, b in zip(row, row_again)), default=0.0) > nondet_tol:
            return _fail('Backward is not reentrant, i.e., running backward with same input and grad_output '
                         'multiple times gives different values, although analytical gradient matches '
                         f'numerical gradient.The tolerance for nondeterminism was {nondet_tol}.',
                         raise_exception)
    return True


def _random_like(rng, array):
    values = rng.uniform(-1, 1, array.shape)
    if array.dtype.kind == 'c':
        values = values + 1j * rng.uniform(-1, 1, array.shape)
    return np.asarray(values, dtype=array.dtype)  # (an array also for a 0-dim output)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of the map (inputs, grad_outputs) -> vjp, which
    ``create_graph=True`` makes differentiable."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError('Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True')
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError('Setting check_undefined_grad=True requires check_rev_over_rev to be True')
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError('Setting check_batched_grad=True requires check_rev_over_rev to be True')
    inputs = _as_tuple(inputs)
    outputs = _eval(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor._wrap(_random_like(rng, o._data), requires_grad=True) for o in outputs if o._requires_grad)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_positions = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._requires_grad]

    def new_func(*args):
        inp, gos = args[:-num_outputs] if num_outputs else args, args[-num_outputs:] if num_outputs else ()
        outs = [o for o in _eval(func, inp) if o._requires_grad]
        diff = [inp[i] for i in diff_positions]
        grads = autograd_grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    # (as PyTorch: forward-over-reverse is forward mode through the vjp, reverse-over-reverse its backward)
    return gradcheck(new_func, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, fast_mode=fast_mode, masked=masked)


__all__ = ['gradcheck', 'gradgradcheck', 'GradcheckError']
