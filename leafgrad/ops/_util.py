"""What every op shares: wrapping results, recording nodes, undoing broadcasting.

An op's forward computes on raw arrays, then calls ``record`` (or ``record_many`` for
several outputs). ``record`` returns the node only when grad mode is on and an input requires
grad; otherwise the op has taken its fast path and recorded nothing.

NumPy functions are called through ``xp`` (NumPy). CuPy arrays implement NumPy's dispatch
protocols (``__array_ufunc__``, ``__array_function__``), so the same call runs on the GPU.
"""
import operator as _operator
import sys as _sys

from .. import _kernel_math as _km, _memory_format, backend
from ..amp import policy as autocast  # autocast's state (one flag read by the ops it casts) and policies
from ..autograd.grad_mode import state
from ..autograd import origins
from ..autograd.anomaly import anomaly_state, forward_trace
from ..autograd import views as _views
from ..autograd.graph import Node, SavedOutput, grad_accumulator
from ..tensor import Tensor, _index, _wrap_dim

xp = backend.numpy
_ndarray = xp.ndarray
_generic = xp.generic
_Tensor = Tensor
_wrap = Tensor._wrap
_fresh = _views.fresh
_new_object = object.__new__


class _Namespace:
    """``ops``: every op by name (a declared op's forward, ``ops.mul``), filled in as the
    families are imported and read when a derivative or a forward runs (late-bound), so that
    a family imports only these utilities and reaches its sibling families through here."""

    def __repr__(self):
        return f'<leafgrad ops: {len(vars(self))} names>'

    def __getattr__(self, name):  # (Python calls it only for a name not bound yet)
        family = deferred.get(name)
        if family is not None:  # an op of a family imported on first use: importing it binds the name
            load_deferred[0](family)
            if name in vars(self):
                return vars(self)[name]
        raise AttributeError(f"'_Namespace' object has no attribute '{name}'")


ops = _Namespace()
# The op families imported on first use (ops/__init__.py): ``ops.<name>`` of each -> its family,
# and the function that imports a family (None: every one of them), put here by ops/__init__.py.
deferred = {}
load_deferred = [None]


# PyTorch's scalar-type names of the dtypes, as its errors print them ('Float')
SCALAR_NAMES = {'bool': 'Bool', 'uint8': 'Byte', 'int8': 'Char', 'int16': 'Short', 'int32': 'Int', 'int64': 'Long',
                'float16': 'Half', 'bfloat16': 'BFloat16', 'float32': 'Float', 'float64': 'Double',
                'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble'}


def wrap(data):
    """A tensor around an op's result. NumPy returns scalars for 0-d results; a tensor always
    holds an array."""
    if type(data) is not _ndarray and isinstance(data, _generic):
        data = xp.asarray(data)
    return _wrap(data)


def c_order(data):
    """A reduction's result laid out C-contiguous, as PyTorch allocates it whatever the input's
    layout (NumPy's reduce keeps the input's order of the kept dims: a permuted input's sum would
    have permuted strides, and ``.view(-1)`` of it would fail where PyTorch's works). The array
    itself when it already is, as every reduction of a C-contiguous input is."""
    if data.flags.c_contiguous:
        return data
    return xp.ascontiguousarray(data)


def laid_out_like(data, like):
    """``data`` (of ``like``'s shape) laid out as PyTorch's empty_like(like) lays out a result
    (``like``'s strides where it is dense, else dense in their order: ``_memory_format.preserved``),
    for the ops whose result PyTorch allocates so (sort, the elementwise kernels) where NumPy's
    answer is C order; ``data`` itself when ``like`` is C-contiguous."""
    if like.flags.c_contiguous:
        return data
    return _memory_format.preserved(data, like)


def iterated(data, first, *others):
    """An elementwise op's result (of 2 dims or more: the callers test ``data.ndim > 1`` inline,
    so that a vector's op pays no call) laid out as PyTorch's TensorIterator lays it out from the
    operands (arrays or numbers, in PyTorch's order: ``first`` is the op's first). NumPy's own
    order already is PyTorch's when the first operand is a C-contiguous array or a number: then
    one flag test, and ``data`` itself (``_memory_format.iterated`` for the rest)."""
    if type(first) is not _ndarray or first.flags.c_contiguous:
        return data
    return _memory_format.iterated(data, (first,) + others)


_NO_EDGE = (None, 0)


def edge(t):
    """The edge along which ``t`` receives its gradient, (None, 0) if it needs none."""
    if type(t) is _Tensor or isinstance(t, _Tensor):
        if _views.changed and t._base is not None:
            _fresh(t)
        fn = t._grad_fn
        if fn is not None:
            return (fn, t._output_nr)
        if t._requires_grad:
            return (grad_accumulator(t), 0)
    return (None, 0)


def histories_first(*inputs):
    """Read the history of each input that will be recorded, before the op checks its arguments
    or warns: PyTorch's autograd does so before its kernel runs, so that a view made under
    no_grad whose base changed since raises its error first (``views.fresh``; one flag test
    unless views were changed)."""
    if _views.changed and state.grad_enabled:
        for t in inputs:
            if isinstance(t, _Tensor) and t._base is not None and t._requires_grad:
                _fresh(t)


def needs_grad(*inputs):
    if not state.grad_enabled:
        return False
    for t in inputs:
        if isinstance(t, _Tensor) and t._requires_grad:
            return True
    return False


def record(out_data, node_cls, inputs):
    """Wrap ``out_data``; when an input needs grad, record a ``node_cls`` node producing it.

    Returns (output tensor, node or None).
    """
    if type(out_data) is not _ndarray and isinstance(out_data, _generic):
        out_data = xp.asarray(out_data)
    out = _wrap(out_data)
    if not state.grad_enabled:
        if origins._watching:  # leafgrad.explain.watch_no_grad(): remember why out has no history
            origins.note_no_grad(out, inputs)
        return out, None
    edges = []
    needed = inert = mixed = False
    dtype = out_data.dtype
    for t in inputs:
        if isinstance(t, _Tensor):
            if _views.changed and t._base is not None:  # (one flag test unless views were changed)
                _fresh(t)
            fn = t._grad_fn
            if fn is not None:
                edges.append((fn, t._output_nr))
                needed = True
                if t._data.dtype is not dtype:
                    mixed = True
                continue
            if t._requires_grad:
                acc = grad_accumulator(t)
                edges.append((acc, 0))
                needed = True
                if acc is None:  # (a view made under no_grad)
                    inert = True
                if t._data.dtype is not dtype:
                    mixed = True
                continue
        edges.append(_NO_EDGE)
    if not needed:
        return out, None
    node = node_cls(tuple(edges))
    if inert and all(e[0] is None for e in edges):
        node._inert = node._hooked = True  # (_hooked: the walk reads _inert only then)
    out._grad_fn = node
    out._requires_grad = True
    if mixed:
        _mixed_dtypes(node, dtype, inputs)
    if dtype.kind in 'Vc':
        _unusual_dtype(node, dtype, inputs)
    if anomaly_state.enabled:
        node._anomaly_trace = forward_trace()
    return out, node


def _mixed_dtypes(node, dtype, inputs):
    """A node whose inputs' dtypes differ from its output's (a float32 result times a float64
    tensor, ``a32 += b64``): the walk casts the gradient it gives each input to that input's
    dtype, as PyTorch's engine casts every gradient to its input's dtype (so that the float32
    ops before it differentiate in float32, and a hook on an input sees its own dtype). A real
    input's complex gradient is left to complex_convention."""
    if dtype.kind not in 'fVc':
        return
    node._input_dtypes = tuple([t._data.dtype if isinstance(t, _Tensor) and t._data.dtype.kind in 'fVc' else None
                                for t in inputs])
    node._hooked = True  # (the walk reads _input_dtypes only then)


def _unusual_dtype(node, dtype, inputs):
    """A bfloat16 output's node casts the gradient reaching it to bfloat16; a complex output's
    node computes PyTorch's complex gradients (complex_convention)."""
    if dtype.kind == 'V':
        node._grad_dtype = dtype
        node._hooked = True  # (the walk reads _grad_dtype only then)
    else:
        complex_convention(node, inputs)


def unary(node_cls, input, out_data, save=None):
    """Record a one-input op whose derivative needs its ``'input'``, its ``'output'`` or nothing.

    This is ``record`` for one input, written out without its loops: most ops have one input.
    """
    if type(out_data) is not _ndarray and isinstance(out_data, _generic):
        out_data = xp.asarray(out_data)
    out = _wrap(out_data)
    if not state.grad_enabled:
        if origins._watching:
            origins.note_no_grad(out, (input,))
        return out
    if not input._requires_grad:
        return out
    if _views.changed and input._base is not None:
        _fresh(input)
    fn = input._grad_fn
    node = node_cls(((fn, input._output_nr) if fn is not None else (grad_accumulator(input), 0),))
    if fn is None and node.next_functions[0][0] is None:  # (as in record)
        node._inert = node._hooked = True
    out._grad_fn = node
    out._requires_grad = True
    if out_data.dtype.kind in 'Vc':
        _unusual_dtype(node, out_data.dtype, (input,))
    if anomaly_state.enabled:
        node._anomaly_trace = forward_trace()
    if save == 'output':
        node.save(SavedOutput(out))
    elif save == 'input':
        node.save(input)
    return out


def record_many(out_datas, node_cls, inputs, differentiable=None):
    """Like ``record`` for an op with several outputs; ``differentiable`` flags which of
    them carry gradient (an argmax's indices do not). Returns (outputs, node or None)."""
    outs = [wrap(d) for d in out_datas]
    if not needs_grad(*inputs):
        if origins._watching and not state.grad_enabled:
            for out in outs:
                origins.note_no_grad(out, inputs)
        return outs, None
    node = node_cls(tuple([edge(t) for t in inputs]))
    node.num_outputs = len(outs)
    node.output_meta = [(d.shape, d.dtype) for d in out_datas]
    for i, out in enumerate(outs):
        if differentiable is None or differentiable[i]:
            out._grad_fn = node
            out._requires_grad = True
            out._output_nr = i
    if any(d.dtype.kind == 'c' for d in out_datas):
        complex_convention(node, inputs)
    if anomaly_state.enabled:
        node._anomaly_trace = forward_trace()
    return outs, node


def make_view(input, data, node_cls, make):
    """Record a view op: ``data`` is a NumPy view of ``input._data`` made by ``make``."""
    if (input._requires_grad and input._grad_fn is None and input._base is None and state.grad_enabled
            and type(data) is _ndarray and data.dtype.kind not in 'Vc' and not anomaly_state.enabled):
        # A view of a leaf that requires grad, while recording (a Linear's weight.t(), once
        # per F.linear call): unary's recording and link, written out without the branches
        # that cannot apply here (t() of a weight: 2.2 -> 1.8 us). The tensor and its node are
        # those of the general path below, field for field (tests/test_views_inplace.py).
        ref = input._accumulator
        acc = ref() if ref is not None else None
        node = node_cls(((acc if acc is not None else grad_accumulator(input), 0),))
        out = _new_object(_Tensor)  # (as _wrap, with the fields a view takes from its base)
        out._data = data
        out._requires_grad = True
        out._grad_fn = node
        _views.link_leaf(input, out, node, make)
        return out, node
    out = unary(node_cls, input, data)  # (record for its one input)
    _views.link(input, out, make)
    return out, out._grad_fn


def make_views(input, datas, node_cls, makes, op_name):
    """Record an op with several outputs, each a view of ``input`` (``makes[i]`` makes the i-th)."""
    outs, node = record_many(datas, node_cls, (input,))
    for out, make in zip(outs, makes):
        _views.link(input, out, make, op_name)
    return outs, node


def saved_output(t):
    return SavedOutput(t)


def as_tensor_arg(x, like):
    """A Python scalar operand as a 0-dim array of the tensor's kind (for ops needing arrays)."""
    if isinstance(x, _Tensor):
        return x
    return wrap(xp.asarray(x, dtype=like._data.dtype))


def same_device(a, b):
    """The arrays of two tensors on different kinds of memory, as PyTorch combines them: a 0-dim
    CPU tensor beside a GPU one is a number and moves to the GPU; otherwise PyTorch's error."""
    da, db = a.device, b.device
    if da == db or da.type == 'meta' or db.type == 'meta':  # (meta beside data: the op's own error, as PyTorch's)
        return a._data, b._data
    if da.type == 'cpu' and a._data.ndim == 0 and db.type == 'cuda':
        return backend.to_device(a._data, db), b._data
    if db.type == 'cpu' and b._data.ndim == 0 and da.type == 'cuda':
        return a._data, backend.to_device(b._data, da)
    raise RuntimeError(f'Expected all tensors to be on the same device, but found at least two devices, {da} and {db}!')


def binary_operands(a, b, check_mixed=None):
    """The two operands' arrays, cast to PyTorch's result dtype.

    Python scalars stay Python scalars when NumPy's weak-scalar rule already gives PyTorch's
    dtype (a float tensor with any number), which is the common, fast case.
    ``check_mixed(a, b)`` runs first when the dtypes differ (or the number is not a float beside a
    float tensor): an op's check that costs nothing in the common case.
    """
    a_t = isinstance(a, _Tensor)
    b_t = isinstance(b, _Tensor)
    if a_t and b_t:
        ad, bd = a._data, b._data
        if type(ad) is not type(bd):
            ad, bd = same_device(a, b)
        if ad.dtype is bd.dtype or ad.dtype == bd.dtype:
            return ad, bd
        if check_mixed is not None:
            check_mixed(a, b)
        dt = backend.result_type(a, b).np
        return ad.astype(dt, copy=False), bd.astype(dt, copy=False)
    if a_t:
        return _with_scalar(a, b, check_mixed)
    if b_t:
        y, x = _with_scalar(b, a, check_mixed)
        return x, y
    raise TypeError('expected at least one tensor operand')


def number_operand(name, input, other):
    """Where neither operand of ``name`` (add, sub, mul, div) is a tensor: ``input`` as the 0-dim
    tensor PyTorch's parser takes a number for (``torch.add(1, 2)`` is ``tensor(3)``), of the
    number's own dtype (bool, int64, the default float or complex dtype); or, for an operand that
    is no number, PyTorch's parser's TypeError naming it."""
    for param, position, value in (('input', 1, input), ('other', 2, other)):
        if not isinstance(value, (bool, int, float, complex, xp.number, xp.bool_)):
            raise not_a_tensor(name, param, value, position)
    if isinstance(input, (bool, xp.bool_)):
        dtype = xp.bool_
    elif isinstance(input, (int, xp.integer)):
        dtype = xp.int64
    elif isinstance(input, (float, xp.floating)):
        dtype = backend.get_default_dtype().np
    else:
        dtype = backend.get_default_dtype().to_complex().np
    return wrap(xp.asarray(input, dtype=dtype))


def broadcast_error(*operands):
    """PyTorch's error for operands whose shapes do not broadcast: it broadcasts them left to
    right and names the first size that does not fit the shape so far."""
    shapes = [x._data.shape if isinstance(x, _Tensor) else xp.shape(x) for x in operands]
    so_far = shapes[0]
    for sb in shapes[1:]:
        n = max(len(so_far), len(sb))
        pa, pb = (1,) * (n - len(so_far)) + tuple(so_far), (1,) * (n - len(sb)) + tuple(sb)
        for dim in range(n - 1, -1, -1):
            if pa[dim] != pb[dim] and pa[dim] != 1 and pb[dim] != 1:
                return RuntimeError(f'The size of tensor a ({pa[dim]}) must match the size of tensor b ({pb[dim]}) '
                                    f'at non-singleton dimension {dim}')
        so_far = tuple(max(x, y) if x != 0 and y != 0 else 0 for x, y in zip(pa, pb))
    return RuntimeError(f'shapes {[list(s) for s in shapes]} cannot be broadcast')


def not_a_tensor(name, arg, value, position=None):
    """PyTorch's argument-parser TypeError for a non-tensor given for a Tensor parameter:
    ``name``'s ``arg`` at ``position`` (counted from 1, self not counted in a method; None:
    given by keyword), the value's type named as the parser names it ('numpy.float64')."""
    kind = type(value)
    type_name = kind.__name__ if kind.__module__ == 'builtins' else f'{kind.__module__}.{kind.__qualname__}'
    where = f"argument '{arg}'" if position is None else f"argument '{arg}' (position {position})"
    return TypeError(f'{name}(): {where} must be Tensor, not {type_name}')


def operator_refusal():
    """In a binary forward's ``except TypeError`` around its operands (one that is neither a
    tensor nor a number: a string, a list): NotImplemented where the forward runs as a Python
    operator (its code under the dunder's name: ``_op`` binds it so), as PyTorch's operators
    return (Python then asks the other operand, or raises its own 'unsupported operand type(s)
    for +'); else PyTorch's parser's TypeError for the method (``refuse_operands``: the function's
    out= wrapper words it again for the function), or the error again. Reads the forward's frame,
    on this failure path only."""
    frame = _sys._getframe(1)
    code = frame.f_code
    if code.co_name.startswith('__'):
        return NotImplemented
    overloads = OPERANDS.get(code.co_name)
    if overloads is not None:  # (self is the first parameter; a keyword that holds None or its default: not given)
        values = frame.f_locals
        n = code.co_argcount
        args = tuple(values[p] for p in code.co_varnames[1:n])
        defaults = {p.name: p.default for s in overloads.method for p in s.params if p.optional}
        kwargs = {p: values[p] for p in code.co_varnames[n:n + code.co_kwonlyargcount] if values[p] is not None and
                  not (type(values[p]) in (int, float, bool) and values[p] == defaults.get(p))}
        del frame, values
        refuse_operands(code.co_name, args, kwargs, True)
    raise  # noqa: PLE0704 (the TypeError being handled)


# PyTorch's signatures of the binary ops (and their aliases) whose forwards refuse an operand that is
# no tensor nor number, by name (Op.operands)
OPERANDS = {}


def refuse_operands(name, args, kwargs, method):
    """PyTorch's parser's TypeError where an argument of a Tensor parameter of ``name``'s
    signatures (``OPERANDS``) is neither a tensor nor a number (a string, a list): the listing of
    its overloads (``divide``), or the one plausible overload's error (``add(): argument 'other'
    (position 2) must be Tensor, not str``); ``method``: ``args`` after self. Nothing otherwise
    (nor for a name without signatures here). Called in an ``except``: the valid path pays nothing."""
    overloads = OPERANDS.get(name)
    if overloads is None:
        return
    for i, param in enumerate((overloads.method if method else overloads.function)[0].params):
        if param.type == 'Tensor':
            value = args[i] if i < len(args) and not param.keyword_only else kwargs.get(param.name)
            if value is not None and not is_operand(value):
                overloads.bind(args, kwargs, method)
                return


def on_gpu(a):
    """Whether ``a`` is a GPU's (CuPy's) array: False for NumPy's arrays and scalars, meta arrays."""
    cupy = backend._cupy
    return cupy is not None and type(a) is not xp.ndarray and isinstance(a, cupy.ndarray)


def accumulate(ufunc, data, axis):
    """``ufunc.accumulate(data, axis=axis)`` of an associative ufunc (maximum, minimum, logaddexp):
    NumPy's own on NumPy arrays. CuPy has accumulate for add and multiply only: on a GPU's array
    a doubling scan (after step k each element combines the 2**k before it, ceil(log2 n)
    kernels), the same values for maximum and minimum (NaN included), rounded in another order
    for logaddexp."""
    if type(data) is xp.ndarray:
        return ufunc.accumulate(data, axis=axis)
    out = data.copy()
    run = xp.moveaxis(out, axis, -1)  # (a view of out)
    step, n = 1, run.shape[-1]
    while step < n:
        run[..., step:] = ufunc(run[..., step:], run[..., :-step])
        step *= 2
    return out


def is_operand(value):
    """Whether a binary op takes ``value`` beside a tensor (``_with_scalar``'s rule)."""
    return isinstance(value, (_Tensor, int, float, complex)) or hasattr(value, 'dtype') and hasattr(value, 'shape')


def _with_scalar(tensor, scalar, check_mixed=None):
    """(tensor's array, scalar) cast so that NumPy computes in PyTorch's result dtype."""
    arr = tensor._data
    kind = arr.dtype.kind
    if type(scalar) is float and (kind == 'f' or kind == 'V'):  # ('V': bfloat16)
        return arr, scalar  # the commonest case first (see below)
    if check_mixed is not None:
        check_mixed(tensor, scalar)
    if not isinstance(scalar, (int, float, bool, complex)):
        if hasattr(scalar, 'dtype') and hasattr(scalar, 'shape'):  # a NumPy array or scalar
            return arr, xp.asarray(scalar, like=arr) if on_gpu(arr) else xp.asarray(scalar)
        raise TypeError(f'unsupported operand type: {type(scalar).__name__}')
    if (kind == 'f' or kind == 'V' or kind == 'c') and type(scalar) is not bool and type(scalar) is not complex:
        return arr, scalar  # NumPy's weak Python scalars already keep the tensor's dtype
    dt = backend.result_type(tensor, scalar).np
    if type(arr) is not xp.ndarray and on_gpu(arr):  # (the 0-d operand on the tensor's GPU)
        return arr.astype(dt, copy=False), xp.asarray(scalar, like=arr).astype(dt)
    return arr.astype(dt, copy=False), xp.asarray(scalar).astype(dt)


def sum_to(grad, shape):
    """Undo broadcasting: sum ``grad`` down to ``shape`` (the one broadcasting rule)."""
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    if type(grad) is not Tensor:  # batched (vmap over a backward): its logical shape, summed by ops
        gshape = tuple(grad.shape)
        if gshape == shape:
            return grad
        lead = len(gshape) - len(shape)
        kept = tuple([i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1])
        out = ops.sum(grad, tuple(range(lead)) + kept, keepdim=True) if lead or kept else grad
        return ops.reshape(out, shape) if lead else out
    lead = len(gshape) - len(shape)
    if gshape[lead:] == shape:  # only leading dims to drop (a bias, say): the common case first
        if not state.grad_enabled and grad._data.dtype.kind == 'f':
            return wrap(xp.add.reduce(grad._data, axis=0 if lead == 1 else tuple(range(lead))))
        if not shape:
            return ops.sum(grad)  # (PyTorch: SumBackward0 to ())
    kept = tuple([i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1])
    if not state.grad_enabled and grad._data.dtype.kind == 'f':
        # a plain backward records nothing: one reduction of the array
        summed = xp.add.reduce(grad._data, axis=tuple(range(lead)) + kept, keepdims=bool(kept))
        return wrap(summed.reshape(shape) if kept else summed)
    # recorded as PyTorch's sum_to: a sum keeping its dims, then a view dropping the leading ones
    # (SumBackward1, ViewBackward0)
    out = ops.sum(grad, tuple(range(lead)) + kept, keepdim=True)
    if lead:
        out = ops.reshape(out, shape)
    return out


wrap_dim = _wrap_dim


def wrap_dims(dim, ndim):
    """Normalize an int, a tuple of ints or None (all dims) to a sorted tuple of dims.

    An empty tuple or list also means all dims: PyTorch's rule for sum, mean, var, std, amax.
    """
    if dim is None:
        return tuple(range(ndim))
    if not isinstance(dim, int):
        if not isinstance(dim, (tuple, list)):  # (a 0-dim integer tensor, a NumPy integer: one dim)
            dim = _index(dim)
        elif not dim:
            return tuple(range(ndim))
    if ndim == 0:
        # a 0-d tensor accepts dim 0 or -1 (checked here) and has no dim to reduce
        for d in ((dim,) if isinstance(dim, int) else dim):
            wrap_dim(d, 0)
        return ()
    if isinstance(dim, int):
        return (wrap_dim(dim, ndim),)
    dims = tuple(wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f'dim {dims[0]} appears multiple times in the list of dims')
    return dims


def _derivative_op(ufunc, op):
    """``op(grad, other)`` for a derivative. In a plain backward (grad mode off: nothing is
    recorded) ``ufunc`` runs on the arrays when NumPy gives the recorded op's dtype (``other``
    of grad's dtype, or a Python float), sparing the op's dispatch; otherwise the op runs."""
    def apply(grad, other):
        if not state.grad_enabled:
            o = other._data if type(other) is _Tensor else other
            if type(o) is float or (type(o) is _ndarray and o.dtype is grad._data.dtype):
                return wrap(ufunc(grad._data, o))
        return op(grad, other)
    return apply


times = _derivative_op(xp.multiply, _operator.mul)
divided = _derivative_op(xp.true_divide, _operator.truediv)


_HALF_VECTOR_PAIR = 32  # (elements of float16/bfloat16 per step of PyTorch's vectorized loop with AVX2)


def fused_alpha(x, y, alpha, sign):
    """``x + sign * alpha * y`` as PyTorch's CPU add and sub compute it for arrays ``x``, ``y`` of
    one float dtype, or None for other operands: alpha rounded to that dtype, then one fused
    multiply-add (in float32 for the 16-bit floats, then rounded to the 16-bit dtype).

    The 16-bit floats' vectorized loop goes 32 elements at a time; the elements after the last
    full step are computed one by one, their product rounded to the 16-bit dtype before the sum:
    so are the last ``size % 32`` elements of a result its operands have the shape of.
    Where ``y`` is broadcast along rows, the product is rounded on its own (mostly: for the
    plain product and sum, None)."""
    d = x.dtype
    if type(x) is not xp.ndarray or type(y) is not xp.ndarray or y.dtype != d or d.kind not in 'fV':
        return None
    if y.size > 1 and (y.ndim == 0 or y.shape[-1] == 1) and x.ndim and x.shape[-1] > 1:
        return None  # (y the same along each row: PyTorch's loop then rounds the product on its own, mostly)
    if d.itemsize == 8:
        return _km.fma64(y, xp.float64(alpha * sign), x)
    if d.itemsize not in (2, 4):
        return None
    a = xp.float32(float(xp.asarray(alpha, dtype=d).astype(xp.float32)) * sign)
    if d.itemsize == 4:
        return _km.fma(*xp.broadcast_arrays(y, a, x))
    x32, y32 = x.astype(xp.float32), y.astype(xp.float32)
    out = _km.fma(*xp.broadcast_arrays(y32, a, x32)).astype(d)
    tail = out.size % _HALF_VECTOR_PAIR
    if tail and x.shape == y.shape:
        out.reshape(-1)[-tail:] = x32.reshape(-1)[-tail:] + (y32.reshape(-1)[-tail:] * a).astype(d).astype(xp.float32)
    return out


def fused_multiply_add(a, b, c):
    """``a * b + c`` of float32 or float64 arrays (or numbers of their dtype) of one dtype,
    rounded once, as a fused multiply-add of PyTorch's CPU kernels (``_kernel_math``'s); on
    another backend's arrays (a GPU's) its own product and sum."""
    if type(c) is not xp.ndarray and not isinstance(c, xp.generic):
        return a * b + c
    if c.dtype == xp.float32:
        return _km.fma(*xp.broadcast_arrays(a, b, c))  # (it sums into the product: of the result's shape)
    return _km.fma64(a, b, c)


def opmath(arr):
    """``arr`` as the op computes on it: bfloat16 in float32, as PyTorch computes its bfloat16 ops
    (the result is cast back with ``.astype(arr.dtype)``, rounding once); other dtypes as they are."""
    return arr.astype(xp.float32) if arr.dtype.kind == 'V' else arr


def in_float32(formula, grad, *saved):
    """``formula(grad, *saved)`` as PyTorch's fused backward kernels compute bfloat16: on float32
    copies (the casts recorded under create_graph), the result rounded once to grad's dtype."""
    if grad._data.dtype.kind != 'V':
        return formula(grad, *saved)
    return formula(grad.float(), *[t.float() for t in saved]).to(grad.dtype)


def float_dtype_for(arr):
    """Ops such as exp turn integer input into the default float dtype, as PyTorch does."""
    if (kind := arr.dtype.kind) == 'f' or kind == 'V' or kind == 'c':
        return arr
    return arr.astype(backend.get_default_dtype().np)


def storage_owner(array):
    """The array that owns ``array``'s memory (itself if it owns it), also through the
    stand-in that NumPy's ``as_strided`` puts between a strided view and its source."""
    kind = type(array)
    while True:
        base = array.base
        if not isinstance(base, kind):
            base = getattr(base, 'base', None)  # (as_strided's DummyArray holds the source)
            if not isinstance(base, kind):
                return array
        array = base


def as_strided_array(a, shape, strides, writeable):
    """A strided view of ``a``'s memory; NumPy's can be made read-only (CuPy's cannot)."""
    module = backend.array_module(a)
    if module is xp:
        return xp.lib.stride_tricks.as_strided(a, shape, strides, writeable=writeable)
    return module.lib.stride_tricks.as_strided(a, shape, strides)


def diagonal_array(a, offset, d1, d2):
    """A *writable* NumPy view of a diagonal (``numpy.diagonal`` returns a read-only one)."""
    n1, n2 = a.shape[d1], a.shape[d2]
    if offset >= 0:
        n = max(min(n1, n2 - offset), 0)
        start = (0, offset)
    else:
        n = max(min(n1 + offset, n2), 0)
        start = (-offset, 0)
    index = [slice(None)] * a.ndim
    if n:
        index[d1], index[d2] = slice(start[0], None), slice(start[1], None)
    else:
        index[d1], index[d2] = slice(0, 0), slice(0, 0)
    sub = a[tuple(index)]
    keep = [i for i in range(a.ndim) if i not in (d1, d2)]
    shape = tuple(a.shape[i] for i in keep) + (n,)
    strides = tuple(sub.strides[i] for i in keep) + (sub.strides[d1] + sub.strides[d2],)
    return as_strided_array(sub, shape, strides, backend.writeable(a))


# (elementwise's and activation's sigmoid, silu; elementwise's 1 - x)
_ONES = {}


def _one(a):
    """1 as an operand for ``a``. NumPy converts a Python scalar operand on every call (half
    the cost of an op on a small array): a cached 0-d one of ``a``'s dtype spares that
    (NumPy arrays only; CuPy takes the Python scalar)."""
    if type(a) is not xp.ndarray:
        return 1
    one = _ONES.get(a.dtype)
    if one is None:
        one = _ONES[a.dtype] = xp.ones((), a.dtype)
    return one


_ZEROS = {}


def _zero(a):
    """0 as an operand for ``a``, as ``_one`` gives 1 (activation's softplus, logsigmoid, mish)."""
    if type(a) is not xp.ndarray:
        return 0
    zero = _ZEROS.get(a.dtype)
    if zero is None:
        zero = _ZEROS[a.dtype] = xp.zeros((), a.dtype)
    return zero


# Below these inputs exp(-x) would overflow: sigmoid then takes the stable (slower) path.
_SIGMOID_FAST_MIN = {xp.dtype(xp.float16): -11.0, xp.dtype(xp.float32): -87.0, xp.dtype(xp.float64): -708.0}
# (the bound and the dtype's 0-d one, read in one lookup by sigmoid_array's common case)
_SIGMOID_FAST = {dtype: (bound, xp.ones((), dtype)) for dtype, bound in _SIGMOID_FAST_MIN.items()}


def _lowest(x):
    """x's smallest element, NaN if one is NaN: for a NumPy array, argmin and one read cost a
    third of a min reduction."""
    if type(x) is xp.ndarray:
        return x.item(x.argmin())
    return x.min()  # (CuPy has no minimum.reduce)


def sigmoid_array(x):
    """``1 / (1 + exp(-x))`` of an array (sigmoid's forward, silu's factor)."""
    fast = _SIGMOID_FAST.get(x.dtype)
    # The common case, a NumPy float array with dims whose lowest element (NaN fails the test)
    # keeps exp(-x) finite, in as few Python steps as it has NumPy calls: on a small array the
    # helper calls, lookups and tests of the general path below cost as much as the kernel.
    if fast is not None and x.ndim and type(x) is xp.ndarray and x.size and x.item(x.argmin()) >= fast[0]:
        e = xp.negative(x)  # 1 / (1 + exp(-x)), in place in one fresh buffer (out= given by
        xp.exp(e, e)        # position: NumPy parses a keyword's dict, ~0.05 us a call)
        e += fast[1]
        return xp.reciprocal(e, e)
    return _sigmoid_array_general(x)


def _sigmoid_array_general(x):
    """sigmoid_array of any array: integer input in the default float dtype, bfloat16 and
    complex, 0-d, empty, CuPy, and inputs low enough for exp(-x) to overflow."""
    x = float_dtype_for(x)
    fast_min = _SIGMOID_FAST_MIN.get(x.dtype)
    if fast_min is None:
        if x.dtype.kind == 'V':  # bfloat16: computed in float32, rounded once, as PyTorch
            return sigmoid_array(x.astype(xp.float32)).astype(x.dtype)
        if x.dtype.kind == 'c':
            return 1 / (1 + xp.exp(-x))
        fast_min = 0.0
    if x.ndim == 0 or (x.size and not _lowest(x) >= fast_min):
        # exp of a negative argument only, so large |x| neither overflows nor warns
        e = xp.exp(-xp.abs(x))
        r = 1 / (1 + e)
        return xp.where(x >= 0, r, e * r)
    e = xp.exp(-x)  # 1 / (1 + exp(-x)), in place in one fresh buffer
    e += _one(e)
    return xp.reciprocal(e, out=e)


# (elementwise's and rounding's mul/div)
def _unrounded(t):
    """A scalar operand of mul/div as float32 (None for a tensor with dims or a bfloat16 one)."""
    if not isinstance(t, Tensor):
        return xp.float32(t)
    d = t._data
    return xp.float32(d) if d.ndim == 0 and d.dtype.kind != 'V' else None


# (linalg_decomp's and linalg_eig's derivatives)
def _as_output(grad, output):
    """A gradient in its output's dtype (a wider one arrives from a product with a wider tensor;
    the matrix products take one dtype)."""
    if grad is not None and grad._data.dtype != output._data.dtype:
        return grad.to(backend.from_np(output._data.dtype))
    return grad


# the node of an op PyTorch gives no derivative (rounding's floor_divide, histogram, eigvals with out= ...)
class NotImplementedNode(Node):
    """An op PyTorch gives no derivative: using it in backward raises."""
    __slots__ = ('op_name',)

    def apply(self, *grads):  # (one gradient per output: histogram has two)
        raise RuntimeError(f'derivative for aten::{self.op_name} is not implemented')

    def name(self):
        return 'leafgrad::autograd::NotImplemented'


NotImplementedNode.__name__ = NotImplementedNode.__qualname__ = 'NotImplemented'  # (PyTorch's class name)


__all__ = ['Node', 'xp', 'wrap', 'edge', 'record', 'unary', 'record_many', 'saved_output', 'sum_to',
           'binary_operands', 'broadcast_error', 'needs_grad', 'wrap_dim', 'wrap_dims', 'float_dtype_for',
           'as_tensor_arg', 'state', 'times', 'divided', 'opmath', 'in_float32', 'autocast', 'ops', 'SCALAR_NAMES']


def refuse_out(name, out):
    """An op that does not write ``out=`` yet says so, rather than accept it and leave out as it
    was (PyTorch writes the result into it). (No op uses it now: ops/_op.py's engine writes out=.)"""
    if out is not None:
        raise NotImplementedError(f"{name}(): leafgrad does not write out= for this op yet: use the returned result "
                                  '(out = ' + name + '(...)) instead')


# ---- complex numbers: PyTorch's convention for gradients, what it refuses ----------------------
# (shared by every family: the convention is applied by ``record``; see ops/complex_numbers.py)

def _conj_data(grad):
    """``conj(grad)``: on arrays in a plain backward, else the recorded op."""
    if grad is None or grad._data.dtype.kind != 'c':
        return grad
    if not state.grad_enabled:
        return wrap(xp.conj(grad._data))
    return ops.conj_physical(grad)


def real_part(grad):
    """The real part of a gradient, as a new tensor (no view)."""
    if not state.grad_enabled:
        return wrap(grad._data.real.copy())
    return ops.real(grad).clone()


def complex_convention(node, inputs):
    """Make ``node`` (the node of an op with a complex output) compute PyTorch's complex
    gradients with its real-number rule: ``conj(rule(conj(grad)))``, and the real part for an
    input that is real. Called by ``record`` only for complex outputs; a node class that sets
    ``complex_rule`` writes its rule in the convention already; one with a ``complex_apply``
    has PyTorch's formula written out for complex gradients (the same numbers, with PyTorch's
    signed zeros, which the conjugates around the real rule can flip: ``(z * 2)``'s gradient
    ``1+0j``, not ``1-0j``), used for them instead of the real rule."""
    if type(node).__dict__.get('complex_rule') or getattr(type(node), 'complex_rule', False):
        return
    real = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._data.dtype.kind != 'c']
    own = getattr(type(node), 'complex_apply', None)  # (PyTorch's formula written out: its signed zeros)
    rule = node.apply if own is None else own.__get__(node)

    def apply(*grads):
        if own is None:
            outs = rule(*[_conj_data(g) for g in grads])
            outs = [_conj_data(g) for g in outs]
        else:
            outs = list(rule(*grads))
        for i in real:
            g = outs[i]
            if g is not None and g._data.dtype.kind == 'c':
                outs[i] = real_part(g)
        return tuple(outs)
    node.apply = apply


def refused(name, data):
    """The exception PyTorch raises for op ``name`` (or its CPU kernel's name) of a complex array
    (no order, no rounding)."""
    if name in ('relu', 'clamp'):
        return NotImplementedError('clamp is not supported for complex types')
    if name in ('floor', 'ceil', 'trunc'):
        return NotImplementedError(f'{name} is not supported for complex inputs')
    if name in ('argmax', 'argmin', 'max', 'min'):
        return RuntimeError(f'{name}(): does not support complex input')
    if name in ('maximum', 'minimum'):
        return RuntimeError(f'{name} not implemented for complex tensors.')
    if name in ('Sort', 'topk'):
        return RuntimeError(f' {name} does not support complex dtypes on CPU')
    if name == 'sign':
        return NotImplementedError('Unlike NumPy, leafgrad.sign is not intended to support complex numbers. Please '
                                   'use leafgrad.sgn instead.')
    return NotImplementedError(f'"{name}" not implemented for \'{SCALAR_NAMES[data.dtype.name]}\'')


def where_zero(z, value):
    """``value`` where ``z`` is nonzero, 0 where it is (a derivative's guard at the origin)."""
    return ops.where(z == 0, Tensor._wrap(xp.zeros((), dtype=value._data.dtype, like=value._data)), value)


def sgn_backward(z, grad):
    """The gradient through ``sgn(z) = z / |z|``: ``(grad - Re(grad conj(s)) s) / |z|``, zero at 0."""
    s = ops.sgn(z)
    return where_zero(z, (grad - real_part(grad * ops.conj_physical(s)) * s) / z.abs())
