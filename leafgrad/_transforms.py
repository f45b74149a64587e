"""The function transforms of ``leafgrad.func`` (``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``linearize``), built on the ops, ``autograd`` and ``vmap``
as ``autograd.functional`` is (whose forward-mode ``jacobian`` is ``jacfwd``). Reverse transforms
run ``autograd.grad``; ``jvp`` and ``jacfwd`` run forward mode (``autograd.forward_ad``: dual
tensors whose tangents the ops' forward rules carry), ``jacfwd`` one forward pass vmapped over
the basis of tangents; ``hessian`` is forward over reverse. ``vmap`` lives in ``_vmap.py``.

A reverse transform calls the function on copies of the differentiated arguments that require
grad and takes ``autograd.grad`` of the result. An argument that already requires grad (an
outer transform's input, as in ``grad(grad(f))``) or carries a tangent (inside ``jacfwd``) is
used through a view, so the inner result stays differentiable for the outer transform;
otherwise the result is returned detached. Arguments may be tensors or tuples/lists/dicts of
them.
"""
from . import _vmap as vm
from ._pytree import _flatten, _treespec, _unflatten
from .autograd import _instrument, forward_ad, grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .tensor import Tensor
from .autograd.graph import AccumulateGrad
from .creation import eye, ones_like, zeros, zeros_like
from .ops.rearrange import stack

__all__ = ['grad', 'grad_and_value', 'vjp', 'jvp', 'jacrev', 'jacfwd', 'hessian', 'linearize']


def _detach_tree(tree):
    leaves, spec = _flatten(tree)
    return _unflatten([leaf.detach() if isinstance(leaf, Tensor) else leaf for leaf in leaves], spec)


# the leaves the reverse transforms make while a forward-mode jvp runs (one list per running
# jvp): its results that reach no other leaf are detached, as torch.func's
_made_in_jvp = []


def _differentiable(leaf, nested):
    if not isinstance(leaf, Tensor):
        raise ValueError(f'Thing passed to transform API must be Tensor, got {type(leaf)}')
    if leaf._requires_grad:
        nested[0] = True
        return leaf.view_as(leaf)
    if leaf._fw_grad is None and vm.active():
        # under vmap: a leaf of each sample's own (an unbatched input expanded along the open
        # levels), so that a sample's gradient is not summed over the batch
        made = vm.per_sample_leaf(leaf)
    else:
        made = leaf.detach().requires_grad_(True)
    if _made_in_jvp:
        _made_in_jvp[-1].append(made)
    if leaf._fw_grad is not None:
        # a dual tensor (inside jacfwd/jvp): the reverse pass runs recorded, so that its ops
        # carry the tangents forward (forward over reverse), and its results keep them
        nested[0] = True
        return forward_ad.make_dual(made, leaf._fw_grad)
    return made


def _reaches_outer(outputs, own, nested):
    """Whether the results must stay connected to the caller's graph: the inputs are an outer
    transform's (``nested``), or the outputs depend on another tensor that requires grad (a
    closed-over parameter), as torch.func composes with autograd. Otherwise they are detached."""
    if nested[0]:
        return True
    own_ids = {id(t) for t in own}
    stack = [o._grad_fn for o in outputs if isinstance(o, Tensor) and o._grad_fn is not None]
    seen = set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        if type(fn) is AccumulateGrad:
            if id(fn.variable) not in own_ids:
                nested[0] = True
                return True
            continue
        stack.extend(n for n, _ in fn.next_functions)
    return False


def _argnums_tuple(argnums, nargs):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f'argnums must be int or Tuple[int, ...], got: {type(argnums)}')
        if not -nargs <= n < nargs:
            raise RuntimeError(f'Got argnum={n}, but only {nargs} positional inputs')
    return single, tuple(n % nargs for n in nums)


def _call_differentiable(func, args, kwargs, argnums, has_aux, nested, caller):
    """Call ``func`` with ``args[argnums]`` made differentiable leaves (inside enable_grad).

    Returns (output, aux, the leaves per argnum, their tree specs)."""
    _, nums = _argnums_tuple(argnums, len(args))
    args = list(args)
    specs, flat_inputs = [], []
    for n in nums:
        leaves, spec = _flatten(args[n])
        leaves = [_differentiable(leaf, nested) for leaf in leaves]
        flat_inputs.append(leaves)
        specs.append(spec)
        args[n] = _unflatten(leaves, spec)
    result = func(*args, **kwargs)
    aux = None
    if has_aux:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(f'{caller}: output of function f should be a tuple: (output, aux) if has_aux is True')
        result, aux = result
    return result, aux, flat_inputs, specs


def grad_and_value(func, argnums=0, has_aux=False):
    """``grad_and_value(f)(*args)`` -> (gradient of f w.r.t. args[argnums], f(*args)); with
    ``has_aux``, f returns (output, aux) and the value is (output, aux)."""
    def wrapper(*args, **kwargs):
        if vm.active() and (forward_ad._state.level is None or vm.batched_in(args)):
            # (inside a dual level, unbatched inputs (a jvp of grad run per sample under vmap) keep
            # their tangents through the plain path: forward over reverse)
            return _grad_and_value_in_vmap(vm, func, argnums, has_aux, args, kwargs)
        single, nested = _argnums_tuple(argnums, len(args))[0], [False]
        with enable_grad():
            result, aux, flat_inputs, specs = _call_differentiable(
                func, args, kwargs, argnums, has_aux, nested, 'grad_and_value(f)(*args)')
            if not isinstance(result, Tensor):
                raise RuntimeError(f'grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got '
                                   f'{type(result)}')
            if result.dim() != 0:
                raise RuntimeError('grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, '
                                   f'got tensor with {result.dim()} dims. Maybe you wanted to use the vjp or '
                                   'jacrev APIs instead?')
            if has_aux:
                for leaf in _flatten(aux)[0]:
                    if not isinstance(leaf, Tensor):
                        raise RuntimeError(f'Expected tensors, got unsupported type {type(leaf)}')
            inputs = [leaf for leaves in flat_inputs for leaf in leaves]
            _reaches_outer([result], inputs, nested)
            if result._requires_grad:
                grads = _autograd_grad(result, inputs, create_graph=nested[0], allow_unused=True,
                                       materialize_grads=True)
            else:
                grads = [zeros_like(leaf) for leaf in inputs]
        if not nested[0]:
            result = result.detach()
            aux = _detach_tree(aux)
        out, pos = [], 0
        for leaves, spec in zip(flat_inputs, specs):
            out.append(_unflatten(grads[pos:pos + len(leaves)], spec))
            pos += len(leaves)
        g = out[0] if single else tuple(out)
        return (g, (result, aux)) if has_aux else (g, result)
    return wrapper


def _tensor_leaves(args, nums):
    """The leaves of each differentiated argument (``nums``: its argnums) and their tree specs; a
    leaf that is no tensor is torch.func's ValueError."""
    flat_inputs, specs = [], []
    for n in nums:
        leaves, spec = _flatten(args[n])
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise ValueError(f'Thing passed to transform API must be Tensor, got {type(leaf)}')
        flat_inputs.append(leaves)
        specs.append(spec)
    return flat_inputs, specs


def _grad_and_value_in_vmap(vm, func, argnums, has_aux, args, kwargs):
    """Per-sample gradients: the differentiated inputs batched leaves (``vm.per_sample_leaf``),
    one backward over the physical graph of the whole batch (samples are independent), each
    gradient batched as its input."""
    single, nums = _argnums_tuple(argnums, len(args))
    args = list(args)
    flat_inputs, specs = _tensor_leaves(args, nums)
    flat_inputs = [[vm.per_sample_leaf(leaf) for leaf in leaves] for leaves in flat_inputs]
    for n, leaves, spec in zip(nums, flat_inputs, specs):
        args[n] = _unflatten(leaves, spec)
    with enable_grad():
        result = func(*args, **kwargs)
        aux = None
        if has_aux:
            result, aux = result
        if result.dim() != 0:
            raise RuntimeError('grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor '
                               f'with {result.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?')
        inputs = [leaf for leaves in flat_inputs for leaf in leaves]
        dual = any(leaf._fw_grad is not None for leaf in inputs)
        if result._requires_grad:  # (a jvp of this grad: the backward recorded, carrying tangents)
            grads = vm.grad_through([result], inputs, [ones_like(result)], vm.depth(), allow_unused=True,
                                    materialize_grads=True, create_graph=dual)
        else:
            grads = [zeros_like(leaf) for leaf in inputs]
    grads = [g if dual and g._fw_grad is not None else g.detach() for g in grads]  # (a jvp of it: their tangents)
    value = result.detach()
    out, pos = [], 0
    for leaves, spec in zip(flat_inputs, specs):
        out.append(_unflatten(grads[pos:pos + len(leaves)], spec))
        pos += len(leaves)
    g = out[0] if single else tuple(out)
    return (g, (value, _detach_tree(aux))) if has_aux else (g, value)


def grad(func, argnums=0, has_aux=False):
    """``grad(f)(*args)``: the gradient of the scalar ``f(*args)`` w.r.t. ``args[argnums]``
    (with ``has_aux``: (gradient, aux))."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``output, vjp_fn = vjp(f, *primals)``; ``vjp_fn(cotangents)`` is the tuple of
    vector-Jacobian products, one per primal (``has_aux``: also returns aux)."""
    nested = [False]
    depth = vm.depth()  # (the vmap levels the graph is recorded at)
    with enable_grad():
        flat, spec = _flatten(primals)
        flat = [_differentiable(leaf, nested) for leaf in flat]
        result = func(*_unflatten(flat, spec))
        aux = None
        if has_aux:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError('vjp(f, *primals): output of function f should be a tuple: (output, aux) '
                                   'if has_aux is True')
            result, aux = result
    out_leaves, out_spec = _flatten(result)
    _reaches_outer(out_leaves, flat, nested)
    for leaf in out_leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f'vjp(f, *primals): Expected f to be a function that has non-empty output and '
                               f'returns a Tensor or a tuple of Tensors, got {type(leaf)}')
    if has_aux:
        for leaf in _flatten(aux)[0]:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f'Expected tensors, got unsupported type {type(leaf)}')

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = nested[0] or any(isinstance(c, Tensor) and c._requires_grad
                                            for c in _flatten(cotangents)[0])
        cots = _flatten(cotangents)[0]
        if len(cots) != len(out_leaves):
            raise RuntimeError('Expected pytree structure of cotangents to be the same as pytree structure of '
                               'outputs to the function')
        pairs = [(o, c) for o, c in zip(out_leaves, cots) if o._requires_grad]
        if not pairs:
            grads = [zeros_like(leaf) for leaf in flat]
        else:
            with enable_grad():
                if vm.depth():  # under vmap: see _vmap.grad_through
                    grads = vm.grad_through([o for o, _ in pairs], flat, [c for _, c in pairs], depth,
                                            retain_graph=retain_graph, create_graph=create_graph,
                                            allow_unused=True, materialize_grads=True)
                else:
                    grads = _autograd_grad([o for o, _ in pairs], flat, [c for _, c in pairs],
                                           retain_graph=retain_graph, create_graph=create_graph,
                                           allow_unused=True, materialize_grads=True)
        return _unflatten(list(grads), spec)

    if not nested[0]:
        result = _unflatten([leaf.detach() for leaf in out_leaves], out_spec)
        aux = _detach_tree(aux)
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``jacrev(f)(*args)``: the Jacobian of f w.r.t. ``args[argnums]`` by reverse mode; for
    each output, a tensor of shape ``output.shape + input.shape`` (a tuple over argnums when
    argnums is a tuple). As torch.func computes it: one backward vmapped over the basis of
    cotangents (the rows of the identity over all outputs' elements; ``chunk_size`` rows at a
    time), so that each node's derivative runs once on the whole basis (``_vmap.grad_through``)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError('jacrev: `chunk_size` should be greater than 0.')

    def wrapper(*args, **kwargs):
        single, nested = _argnums_tuple(argnums, len(args))[0], [False]
        depth = vm.depth()  # (the vmap levels f's graph is recorded at)
        with enable_grad():
            result, aux, flat_inputs, specs = _call_differentiable(
                func, args, kwargs, argnums, has_aux, nested, 'jacrev(f, ...)(*args)')
            out_leaves, out_spec = _flatten(result)
            for leaf in out_leaves:
                if not isinstance(leaf, Tensor):
                    raise RuntimeError('vjp(f, *primals): expected f(*primals) to return only tensors, got '
                                       f'unsupported type {type(leaf)}')
            inputs = [leaf for leaves in flat_inputs for leaf in leaves]
            _reaches_outer(out_leaves, inputs, nested)
            rows = _vjp_rows(vm, out_leaves, inputs, depth, nested[0], chunk_size)
            jacobians = []
            pos = 0
            for out in out_leaves:
                n = out.numel()
                per_input = []
                for row, leaf in zip(rows, inputs):
                    jac = row.narrow(0, pos, n).reshape(tuple(out.shape) + tuple(leaf.shape))
                    per_input.append(jac if nested[0] else jac.detach())
                pos += n
                grouped, start = [], 0
                for leaves, spec in zip(flat_inputs, specs):
                    grouped.append(_unflatten(per_input[start:start + len(leaves)], spec))
                    start += len(leaves)
                jacobians.append(grouped[0] if single else tuple(grouped))
        jac = _unflatten(jacobians, out_spec)
        if has_aux:
            return jac, (aux if nested[0] else _detach_tree(aux))
        return jac
    return wrapper


def _vjp_rows(vm, outputs, inputs, depth, create_graph, chunk_size):
    """For each input, the vector-Jacobian products of the outputs (flattened, concatenated) with
    every row of the identity: a tensor (total output elements, *input.shape), computed by one
    backward vmapped over the rows."""
    sizes = [o.numel() for o in outputs]
    total = sum(sizes)
    differentiable = [i for i, o in enumerate(outputs) if o._requires_grad]
    if not total or not differentiable:
        return [zeros((total,) + tuple(x.shape), dtype=x.dtype) for x in inputs]

    dual = forward_ad._state.level is not None
    if create_graph or dual:
        # The gradients are differentiated again (by an outer reverse transform, or forward mode
        # carries tangents through the walk): row by row, since what a batched walk records
        # keeps its batched tensors, whose levels would be read again by later walks
        per_input = [[] for _ in inputs]
        for i, (out, n) in enumerate(zip(outputs, sizes)):
            flat = out.reshape(-1)
            for j in range(n):
                if i not in differentiable:
                    grads = [zeros_like(x) for x in inputs]
                elif vm.batched_in(flat[j]):  # (one element of each sample: the batch's walk)
                    grads = vm.grad_through([flat[j]], inputs, [ones_like(flat[j])], depth, retain_graph=True,
                                            create_graph=create_graph or dual, allow_unused=True,
                                            materialize_grads=True)
                else:
                    grads = _autograd_grad(flat[j], inputs, retain_graph=True, create_graph=create_graph,
                                           allow_unused=True, materialize_grads=True)
                for rows, g in zip(per_input, grads):
                    rows.append(g)
        return [stack(rows) for rows in per_input]

    def pullback(*cotangents):
        return vm.grad_through([outputs[i] for i in differentiable], inputs, [cotangents[i] for i in differentiable],
                               depth, retain_graph=True, create_graph=create_graph, allow_unused=True,
                               materialize_grads=True)
    basis, pos = [], 0
    for out, n in zip(outputs, sizes):
        rows = zeros((total, n), dtype=out.dtype)
        rows[pos:pos + n] = _eye(n, out.dtype)
        basis.append(rows.reshape((total,) + tuple(out.shape)))
        pos += n
    return list(vm.vmap(pullback, chunk_size=chunk_size)(*basis))


def _eye(n, dtype):
    return eye(n, dtype=dtype)


def _jvp_outputs(result, has_aux, caller='jvp(f, primals, tangents)'):
    """The outputs of f in forward mode (jvp, jacfwd), flattened, with their structure and the aux
    value, or PyTorch's error naming the caller."""
    aux = None
    if has_aux:
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(f'{caller}: output of function f should be a tuple: (output, aux) if has_aux is True')
        result, aux = result
    outs, out_spec = _flatten(result)
    for leaf in outs:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f'{caller}: expected f(*primals) to return only tensors, got unsupported type '
                               f'{type(leaf)}')
    return outs, out_spec, aux


def _jvp_by_double_backward(func, primals, tangents, *, strict=False, has_aux=False):
    """jvp inside an open dual level (a jvp of a jvp): the vjp ``u -> J^T u`` is linear in ``u``;
    its derivative in the direction ``v`` is ``J v``."""
    if not isinstance(primals, tuple):
        raise RuntimeError('jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid '
                           'to call f(*primals).')
    flat, spec = _flatten(primals)
    flat_t, spec_t = _flatten(tangents)
    if spec != spec_t or not isinstance(tangents, tuple):
        raise RuntimeError('jvp(f, primals, tangents): Expected primals and tangents to have the same python '
                           'structure. For example, if primals is a tuple of 3 tensors, tangents also must be.')
    for p, t in zip(flat, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError('Trying to set a forward gradient that has a different size than that of the '
                               f'original Tensor, this is not supported. Tensor is of size {list(p.shape)} while '
                               f'the given forward gradient is of size {list(t.shape)}.')
    nested = [False]
    with enable_grad():
        flat = [_differentiable(leaf, nested) for leaf in flat]
        result = func(*_unflatten(flat, spec))
        outs, out_spec, aux = _jvp_outputs(result, has_aux)
        _reaches_outer(outs, flat, nested)
        live = [o for o in outs if o._requires_grad]
        us = [zeros_like(o).requires_grad_(True) for o in live]
        gs = _autograd_grad(live, flat, us, create_graph=True, allow_unused=True) if live else [None] * len(flat)
        pairs = [(g, t) for g, t in zip(gs, flat_t) if g is not None and g._requires_grad]
        if pairs:
            dirs = _autograd_grad([g for g, _ in pairs], us, [t for _, t in pairs], create_graph=nested[0],
                                  allow_unused=True, materialize_grads=True)
        else:
            dirs = [zeros_like(u) for u in us]
    by_output = dict(zip(map(id, live), dirs))
    tangent_out = [by_output[id(o)] if id(o) in by_output else zeros_like(o) for o in outs]
    if not nested[0]:
        outs = [o.detach() for o in outs]
        tangent_out = [t.detach() for t in tangent_out]
        aux = _detach_tree(aux)
    result = (_unflatten(outs, out_spec), _unflatten(tangent_out, out_spec))
    return result + (aux,) if has_aux else result


def _check_jvp_args(primals, tangents):
    if not isinstance(primals, tuple):
        raise RuntimeError('jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid '
                           'to call f(*primals).')
    flat, spec = _flatten(primals)
    flat_t, spec_t = _flatten(tangents)
    if spec != spec_t or type(primals) is not type(tangents):
        raise RuntimeError('jvp(f, primals, tangents): Expected primals and tangents to have the same python '
                           'structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got '
                           f'primals with structure {_treespec(primals)} and tangents with structure '
                           f'{_treespec(tangents)}')
    for p, t in zip(flat, flat_t):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            bad = p if not isinstance(p, Tensor) else t
            raise RuntimeError(f'jvp(f, primals, tangents): Expected primals and tangents to only contain Tensors, '
                               f'got unsupported type {type(bad)}')
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError('Trying to set a forward gradient that has a different size than that of the original '
                               f'Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given '
                               f'forward gradient is of size {list(t.shape)}.')
    return flat, flat_t, spec


def _as_bound(func):
    """``func`` as bound now: the transforms wrap each op where modules hold it, so an op passed
    in itself (``jvp(leafgrad.sin, ...)``, taken before the ops were wrapped) is replaced by its
    wrappers in place (forward AD's, vmap's over it, ``autograd._instrument.bound``)."""
    return _instrument.bound(func)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``output, jvp_out = jvp(f, primals, tangents)``: f(*primals) and its directional
    derivative along ``tangents`` (same structure as ``primals``), by forward mode: the
    primals made dual tensors, the ops' forward rules carrying the tangents."""
    flat, flat_t, spec = _check_jvp_args(primals, tangents)
    if forward_ad._state.level is not None:
        return _jvp_by_double_backward(func, primals, tangents, strict=strict, has_aux=has_aux)
    _made_in_jvp.append([])
    try:
        with forward_ad.dual_level():
            duals = [forward_ad.make_dual(p, t) for p, t in zip(flat, flat_t)]  # (PyTorch's errors: integer, complex)
            result = _as_bound(func)(*_unflatten(duals, spec))
            outs, out_spec, aux = _jvp_outputs(result, has_aux)
            primal_out, tangent_out = [], []
            for o in outs:
                p, t = forward_ad.unpack_dual(o)
                primal_out.append(p)
                tangent_out.append(t if t is not None else zeros_like(o))
            aux = _unflatten([forward_ad.unpack_dual(a).primal if isinstance(a, Tensor) else a
                              for a in _flatten(aux)[0]], _flatten(aux)[1]) if has_aux else None
    finally:
        made = _made_in_jvp.pop()
    if made:  # (a grad or vjp inside, whose results kept their graph for the tangents: cut where it ends)
        primal_out = [o if _reaches_outer([o], made, [False]) else o.detach() for o in primal_out]
        tangent_out = [t if _reaches_outer([t], made, [False]) else t.detach() for t in tangent_out]
    result = (_unflatten(primal_out, out_spec), _unflatten(tangent_out, out_spec))
    return result + (aux,) if has_aux else result


def jacfwd(func, argnums=0, has_aux=False, *, randomness='error'):
    """``jacfwd(f)(*args)``: the Jacobian of f w.r.t. ``args[argnums]`` by forward mode, as
    torch.func computes it: ``vmap`` of one forward pass over the basis of tangents. The inputs
    (all differentiated inputs together, n elements) get the rows of the n x n identity as one
    batched tangent, so that each op's forward rule runs once on the whole basis (its batching
    rule carrying the batch of tangents) and the output's batched tangent holds every column of
    the Jacobian; for each output a tensor of shape ``output.shape + input.shape``. Under vmap
    the batch is carried through the same pass (``_vmap.spread``)."""
    if randomness not in ('error', 'different', 'same'):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f'{randomness}')

    def wrapper(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        # under vmap the batch is carried, as torch.func carries it: see push_forward
        under_vmap = vm.active()
        if forward_ad._state.level is not None:  # a jacfwd inside a dual level: by reverse mode
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        args = list(args)
        flat_inputs, specs = _tensor_leaves(args, nums)
        inputs = [leaf for leaves in flat_inputs for leaf in leaves]
        for i, x in enumerate(inputs):
            if x._data.dtype.kind == 'c':
                raise RuntimeError(f'jacfwd: Expected all inputs to be real but received complex tensor at flattened '
                                   f'input idx: {i}')
        sizes = [x.numel() for x in inputs]
        total = sum(sizes)
        found = {}  # the primal outputs, their structure and aux, seen from inside the vmap

        def call(duals):
            call_args, pos = list(args), 0
            for n, leaves, spec in zip(nums, flat_inputs, specs):
                call_args[n] = _unflatten(duals[pos:pos + len(leaves)], spec)
                pos += len(leaves)
            return _jvp_outputs(_as_bound(func)(*call_args, **kwargs), has_aux, 'jacfwd(f, ...)(*args)')

        def push_forward(*basis):
            primals = inputs
            if under_vmap:
                # each primal batched at every open level, the basis's too (expanded): the ops on
                # the duals then see the tangents batched within their primals' levels, so that
                # one pass carries the outer batch (the inputs', or a tensor f closes over) and
                # the basis together; the outputs and aux are a sample's of the basis level
                primals = [vm.spread(x) for x in inputs]
            duals = [forward_ad.make_dual(x, t) for x, t in zip(primals, basis)]
            outs, found['spec'], aux = call(duals)
            unpacked = [forward_ad.unpack_dual(o) for o in outs]
            found['outs'] = [u.primal for u in unpacked]
            found['aux'] = vm.first_of_innermost(aux) if under_vmap else aux
            return tuple(u.tangent if u.tangent is not None else zeros_like(o) for u, o in zip(unpacked, outs))

        _made_in_jvp.append([])
        try:
            columns, out_leaves, out_spec, aux = _jacfwd_pass(total, inputs, sizes, push_forward, call, found,
                                                              randomness)
        finally:
            made = _made_in_jvp.pop()
        return _jacobians(out_leaves, columns, inputs, sizes, flat_inputs, specs, single, out_spec, has_aux, aux,
                          made)
    return wrapper


def _jacfwd_pass(total, inputs, sizes, push_forward, call, found, randomness):
    """jacfwd's one forward pass (vmapped over the basis of tangents): the columns of every
    output's Jacobian, the outputs, their structure and aux."""
    with forward_ad.dual_level():
        if total:
            dtype = next((x.dtype for x in inputs if x.is_floating_point()), inputs[0].dtype)
            identity, basis, pos = eye(total, dtype=dtype), [], 0
            for x, size in zip(inputs, sizes):
                basis.append(identity[:, pos:pos + size].reshape((total,) + tuple(x.shape)).to(x.dtype))
                pos += size
            columns = vm.vmap(push_forward, randomness=randomness)(*basis)  # per output: [total, *out]
            out_leaves, out_spec, aux = found['outs'], found['spec'], found['aux']
        else:  # every input empty: evaluate once for the shapes
            out_leaves, out_spec, aux = call(inputs)
            columns = [zeros((0,) + tuple(o.shape), dtype=o.dtype) for o in out_leaves]
    return columns, out_leaves, out_spec, aux


def _jacobians(out_leaves, columns, inputs, sizes, flat_inputs, specs, single, out_spec, has_aux, aux, made):
    """Each output's columns reshaped to output.shape + input.shape, per input, in the inputs'
    structure; detached where they reach no tensor that requires grad outside (as torch.func's:
    an input, or a tensor f closes over)."""
    jacobians = []
    for out, cols in zip(out_leaves, columns):
        per_input, pos = [], 0
        for x, size in zip(inputs, sizes):
            block = cols[pos:pos + size].reshape((size,) + tuple(out.shape))
            per_input.append(block.movedim(0, -1).reshape(tuple(out.shape) + tuple(x.shape)))
            pos += size
        grouped, pos = [], 0
        for leaves, spec in zip(flat_inputs, specs):
            grouped.append(_unflatten(per_input[pos:pos + len(leaves)], spec))
            pos += len(leaves)
        jacobians.append(grouped[0] if single else tuple(grouped))
    jac = _unflatten(jacobians, out_spec)
    leaves, spec = _flatten(jac)
    jac = _unflatten([j if isinstance(j, Tensor) and _reaches_outer([j], made, [False]) else
                      j.detach() if isinstance(j, Tensor) else j for j in leaves], spec)
    if has_aux:
        return jac, _detach_tree(aux)
    return jac


def hessian(func, argnums=0):
    """``hessian(f)(*args)``: the Jacobian of the gradient, forward mode over reverse mode
    (``jacfwd(jacrev(f))``), as torch.func computes it."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """``output, jvp_fn = linearize(f, *primals)``: ``jvp_fn(*tangents)`` is the jvp of f at
    ``primals`` (computed again at each call: leafgrad keeps no traced graph)."""
    for p in _flatten(primals)[0]:
        if isinstance(p, Tensor) and p._data.dtype.kind not in 'fcV':
            raise ValueError(f'Expected primal to be floating point or complex, but got: {p.dtype}')
    output = func(*primals)
    for leaf in _flatten(output)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f'linearize: Expected f to return only tensors, got {type(leaf)}')
    saved = tuple(p.detach() if isinstance(p, Tensor) else p for p in primals)

    def jvp_fn(*tangents):
        flat_p, flat_t = _flatten(saved)[0], _flatten(tangents)[0]
        if len(flat_t) != len(flat_p):
            raise RuntimeError(f'Expected the tangents to have the structure of the primals: {len(flat_p)} '
                               f'tensors, got {len(flat_t)}')
        for p, t in zip(flat_p, flat_t):
            if tuple(p.shape) != tuple(t.shape):
                raise RuntimeError(f'Expected tangent to have the shape of the primal: {list(p.shape)}, got '
                                   f'{list(t.shape)}')
        return jvp(func, saved, tuple(tangents))[1]
    return _detach_tree(output), jvp_fn
