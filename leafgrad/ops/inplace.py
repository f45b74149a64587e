"""In-place ops: how they are recorded, and how writing through a view rewrites its base.

An in-place op ``x.op_(...)`` is recorded as the out-of-place op applied to x's old value
(a snapshot, since the derivative may need it), whose result is then written into x's
storage; x takes the new node as its ``grad_fn`` and its version counter is bumped, so that
any node that saved x's old value refuses to use it.

When x is a view, its base's history changes too: the base's new ``grad_fn`` is a
``CopySlices`` node, which routes the part of the base's gradient that falls inside the view
through the in-place op and the rest straight through; x's own ``grad_fn`` becomes a view of
the base's new history (``AsStridedBackward0``, as PyTorch names it). Every *other* view of
the base sees the new values too: it is given such a history when it is next used
(``autograd/views.py``), so that an in-place op costs the same however many views are alive.

Writing is refused where PyTorch refuses it: into an expanded (read-only, self-overlapping)
view, into one output of unbind/split/chunk while recording, and into a view made without
recording while recording.
"""
from .. import backend
from ._util import Node, broadcast_error, needs_grad, record, state, wrap, xp
from .elementwise import _refuse_bool_subtraction, add, div, mul, pow, sub
from .shape import as_strided_array
from ..autograd.graph import gradient_edge
from ..autograd.views import bump as _bump, check_inplace as _check_view_inplace, fresh as _fresh, \
    makes_of as _makes_of, regenerate as _regenerate, reroot as _reroot, set_history as _rebase
from ..autograd.grad_mode import INPLACE_ERROR, InferenceCounter, check_not_inference
from ..tensor import Tensor


def _apply_makes(makes, t):
    """The view of ``t`` that the view ops ``makes`` (innermost first, views.makes_of) make."""
    chain = []
    while makes is not None:
        chain.append(makes.make)
        makes = makes.rest
    for make in reversed(chain):
        t = make(t)
    return t


class CopySlices(Node):
    """The base's history after an in-place op on one of its views: the base's gradient
    passes unchanged outside the view; inside it, it goes through the in-place op's
    derivative ``fn`` (whose gradients for the op's other inputs are routed as they are).

    The view's region of the gradient is found, in a plain backward, from the view's place
    in its base's memory (``geometry``, when the base is a C-contiguous NumPy array: one
    strided view, however deep the chain of views), else by making the view again from the
    gradient with each of its view ops (``makes``; recorded, under create_graph)."""

    def __init__(self, next_functions, fn, view, base):
        super().__init__(next_functions)
        self.fn, self.makes = fn, _makes_of(view)
        self.geometry = _geometry(view._data, base._data)

    def apply(self, grad):
        geometry = self.geometry
        if geometry is not None and not state.grad_enabled:
            shape, strides, offset, base_shape, dtype = geometry
            if grad._data.shape == base_shape and grad._data.dtype == dtype and type(grad._data) is xp.ndarray:
                result = xp.array(grad._data, order='C')  # (a copy)
                region = as_strided_array(result.reshape(-1)[offset:], shape, strides, True)
                res = self.fn.apply(wrap(region.copy()))
                region[...] = 0 if res[0] is None else res[0]._data
                return (wrap(result),) + tuple(res[1:])
        result = grad.clone()
        region = _apply_makes(self.makes, result)
        res = self.fn.apply(region.clone())
        if res[0] is None:
            res = (wrap(xp.zeros(region._data.shape, dtype=region._data.dtype)),) + tuple(res[1:])
        if state.grad_enabled:
            copy_(region, res[0])  # create_graph: the write itself must be recorded
        else:
            region._data[...] = res[0]._data
        return (result,) + tuple(res[1:])

    def release(self):
        self.fn.release()

    def name(self):
        return 'leafgrad::autograd::CopySlices'


def _geometry(view, base):
    """(shape, strides, offset in items, base shape, dtype) of array ``view`` inside array ``base``,
    when ``base`` is a C-contiguous NumPy array (its gradient, copied C-contiguous, has the
    same layout); else None."""
    if type(base) is not xp.ndarray or type(view) is not xp.ndarray or not base.flags.c_contiguous:
        return None
    offset, rest = divmod(view.__array_interface__['data'][0] - base.__array_interface__['data'][0], base.itemsize)
    if rest or view.dtype != base.dtype:
        return None
    return view.shape, view.strides, offset, base.shape, base.dtype


def _check_writable(self):
    check_not_inference(self)
    if not self._data.flags.writeable:
        raise RuntimeError('unsupported operation: more than one element of the written-to tensor refers to a single '
                           'memory location. Please clone() the tensor before performing the operation.')


def _check_result(self, result):
    if result._data.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f'{list(result._data.shape)}')
    sd, rd = backend.from_np(self._data.dtype), backend.from_np(result._data.dtype)
    if rd.category > sd.category:
        raise RuntimeError(f"result type {_type_name(rd)} can't be cast to the desired output type {_type_name(sd)}")


def _type_name(d):
    return {'float32': 'Float', 'float64': 'Double', 'float16': 'Half', 'int64': 'Long', 'int32': 'Int',
            'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool'}[d.name]


def inplace(self, op, others=()):
    """Run ``op`` (an out-of-place function of self) and write its result into ``self``."""
    self._check_inplace()
    if not needs_grad(self, *others):
        _check_writable(self)
        result = op(self)
        _check_result(self, result)
        self._data[...] = result._data
        _bump(self)
        return self
    base = self._base
    if base is not None:
        _check_view_inplace(self)  # (before the memory check, as PyTorch's check_inplace)
        _fresh(self)
    _check_writable(self)
    snapshot = Tensor._wrap(self._data.copy(), self._requires_grad)
    snapshot._grad_fn, snapshot._output_nr = self._grad_fn, self._output_nr
    result = op(snapshot)
    _check_result(self, result)
    node = result._grad_fn
    self._data[...] = result._data
    _bump(self)
    if base is None:
        _rebase(self, node)
        return self
    copy_slices = CopySlices((gradient_edge(base),) + node.next_functions[1:], node, self, base)
    _rebase(base, copy_slices)
    _regenerate(self)
    return self


def inplace_binary(self, other, ufunc, op, alpha=1, check_mixed=None):
    """``self op= other``: a single in-place ufunc call when nothing is recorded (``check_mixed``:
    as binary_operands's, where the operands are not both of self's float dtype)."""
    if state.grad_enabled:  # (under no_grad, as in an optimizer's step, nothing can be refused)
        self._check_inplace()
        if needs_grad(self, other):
            if alpha == 1:
                return inplace(self, lambda s: op(s, other), (other,))
            return inplace(self, lambda s: op(s, other, alpha=alpha), (other,))
    elif type(self._version_counter) is InferenceCounter and not state.inference:
        raise RuntimeError(INPLACE_ERROR)
    data = self._data
    y = other._data if isinstance(other, Tensor) else other
    d = data.dtype
    if d.kind == 'f' and alpha == 1 and (type(y) is float or type(y) is int or getattr(y, 'dtype', None) is d):
        # The common case: a float tensor with a number or with its own dtype keeps its dtype,
        # nothing to check first (NumPy refuses a read-only output before writing).
        try:
            ufunc(data, y, data)
        except ValueError:
            _check_writable(self)
            raise _broadcast_error(self, other, y) from None
    else:
        if check_mixed is not None:
            check_mixed(self, other)
        _check_writable(self)
        rt = backend.result_type(self, other)
        if ufunc is xp.true_divide and rt.category < 2:
            rt = backend.get_default_dtype()
        sd = backend.from_np(d)
        if rt.category > sd.category:
            raise RuntimeError(f"result type {_type_name(rt)} can't be cast to the desired output type "
                               f"{_type_name(sd)}")
        try:
            if d.kind == 'V':  # bfloat16: the out-of-place op computes and rounds as PyTorch does
                out = op(Tensor._wrap(data), other) if alpha == 1 else op(Tensor._wrap(data), other, alpha=alpha)
                xp.copyto(data, out._data, casting='unsafe')
            else:
                ufunc(data, y * alpha if alpha != 1 else y, out=data, casting='unsafe')
        except ValueError:
            raise _broadcast_error(self, other, y) from None
    _bump(self)
    return self


def _broadcast_error(self, other, y):
    """PyTorch's error for an operand that does not broadcast to ``self``'s shape."""
    try:
        shape = xp.broadcast_shapes(self._data.shape, xp.shape(y))
    except ValueError:  # nor to any shape
        return broadcast_error(self, other)
    return RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                        f"{list(shape)}")


# ---- the in-place ops of the foundation -----------------------------------------------

def add_(self, other, *, alpha=1):
    if alpha is True or alpha is False:
        add(self, other, alpha=alpha)  # PyTorch's error for a boolean alpha unless the result is bool
    return inplace_binary(self, other, xp.add, add, alpha)


def sub_(self, other, *, alpha=1):
    if alpha is True or alpha is False:
        sub(self, other, alpha=alpha)  # PyTorch's error for a boolean alpha
    return inplace_binary(self, other, xp.subtract, sub, alpha, _refuse_bool_subtraction)


def mul_(self, other):
    return inplace_binary(self, other, xp.multiply, mul)


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None:
        return inplace(self, lambda s: div(s, other, rounding_mode=rounding_mode), (other,))
    return inplace_binary(self, other, xp.true_divide, div)


def pow_(self, exponent):
    return inplace(self, lambda s: pow(s, exponent), (exponent,))


class FillBackward2(Node):
    """``fill_(number)``: overwritten with a constant, no gradient reaches the old value
    (zeros_like(grad), as PyTorch: not grad * 0, which is NaN where grad is infinite)."""

    def apply(self, grad):
        return wrap(xp.zeros_like(grad._data)),


class ZeroBackward0(FillBackward2):
    pass


class FillBackward3(Node):
    """``fill_(0-dim tensor)`` (also ``t[i] = number``): the value gets the sum of the gradient."""

    def apply(self, grad):
        from .reduction import sum as _sum
        gs = wrap(xp.zeros_like(grad._data)) if self.needs_input_grad(0) else None
        gv = _sum(grad) if self.needs_input_grad(1) else None
        return gs, gv


FillBackward = FillBackward2  # the name other modules may know it by


def _filled(s, value, cls):
    from ._util import record
    if isinstance(value, Tensor):
        data = xp.full_like(s._data, value._data.reshape(()))
        return record(data, cls, (s, value))[0]
    data = xp.full_like(s._data, value)
    return record(data, cls, (s,))[0]


def fill_(self, value):
    if not isinstance(value, (Tensor, int, float, xp.generic)):
        raise TypeError(f'fill_() received an invalid combination of arguments - got ({type(value).__name__}), but '
                        'expected one of:\n * (Tensor value)\n      didn\'t match because some of the arguments have '
                        f'invalid types: (!{type(value).__name__}!)\n * (Number value)\n      didn\'t match because some '
                        f'of the arguments have invalid types: (!{type(value).__name__}!)\n')
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f'fill_ only supports 0-dimension value tensor but got tensor with '
                               f'{value._data.ndim} dimensions.')
        return inplace(self, lambda s: _filled(s, value, FillBackward3), (value,))
    return inplace(self, lambda s: _filled(s, value, FillBackward2))


class NormalBackward0(FillBackward2):
    """``normal_``: overwritten with samples, no gradient reaches the old value."""


class UniformBackward0(FillBackward2):
    """``uniform_``: as NormalBackward0."""


def _sample_(self, cls, kernel, sample):
    """Overwrite a floating tensor with ``sample(n, contiguous)`` (in the order PyTorch's kernel
    writes them: memory order), recorded as ``cls``."""
    from .. import _random_kernels as kernels
    target = self._data  # (inplace hands op a contiguous copy when it records: read the layout here)
    d = target.dtype
    if d.kind not in 'fV':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(backend.from_np(d))}\'')

    def op(s):
        if type(target) is backend.MetaArray:  # nothing to fill, and PyTorch draws nothing for it
            return record(target.copy(), cls, (s,))[0]
        values = kernels.fill_in_memory_order(target, sample(target.size, target.flags.c_contiguous))
        return record(xp.asarray(values).astype(d, copy=False), cls, (s,))[0]
    return inplace(self, op)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Overwrite with samples of N(mean, std^2): PyTorch's for the same generator state."""
    if std < 0:
        raise RuntimeError(f'normal expects std >= 0.0, but found std {std}')
    from .. import _random_kernels as kernels
    from ..generator import generator_of
    g = generator_of(generator, 'normal_')
    d = self._data.dtype
    return _sample_(self, NormalBackward0, 'normal_kernel_cpu',
                    lambda n, contiguous: kernels.normal(g, n, d, mean, std, contiguous))


def uniform_(self, *bounds, generator=None, **named):
    """Overwrite with samples of U[from, to) (``uniform_(from=0, to=1)``): PyTorch's for the same
    generator state. PyTorch names the bounds ``from`` and ``to``; ``from`` being a Python
    keyword, named bounds arrive in ``named``."""
    if len(bounds) > 2:
        raise TypeError(f'uniform_() takes at most 2 positional arguments ({len(bounds)} given)')
    low = bounds[0] if len(bounds) > 0 else named.pop('from', 0.0)
    high = bounds[1] if len(bounds) > 1 else named.pop('to', 1.0)
    if named:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(named))}'")
    if self._data.dtype.kind in 'fV' and low > high:
        raise RuntimeError(f'uniform_ expects to return a [from, to) range, but found from={low} > to={high}')
    from .. import _random_kernels as kernels
    from ..generator import generator_of
    g = generator_of(generator, 'uniform_')
    d = self._data.dtype
    return _sample_(self, UniformBackward0, 'check_uniform_bounds',
                    lambda n, contiguous: kernels.uniform(g, n, d, low, high))


def zero_(self):
    self._check_inplace()
    if not needs_grad(self):
        _check_writable(self)
        self._data[...] = 0
        _bump(self)
        return self
    return inplace(self, lambda s: _filled(s, 0, ZeroBackward0))


class CopyBackwards(Node):
    def name(self):
        return 'leafgrad::autograd::CopyBackwards'

    def apply(self, grad):
        from ._util import sum_to
        gs = grad * 0 if self.next_functions[0][0] is not None else None
        gsrc = None
        if self.next_functions[1][0] is not None:
            gsrc = sum_to(grad, self.src_shape)
            if gsrc._data.dtype != self.src_dtype:
                if gsrc._requires_grad:
                    gsrc = gsrc.to(backend.from_np(self.src_dtype))
                else:
                    gsrc = wrap(gsrc._data.astype(self.src_dtype))
        return gs, gsrc


def _copied(s, src):
    from ._util import record
    data = src._data if isinstance(src, Tensor) else xp.asarray(src)
    try:
        data = xp.broadcast_to(data, s._data.shape).astype(s._data.dtype, copy=True)
    except ValueError:
        raise _broadcast_error(s, src, data) from None
    out, node = record(data, CopyBackwards, (s, src))
    if node is not None:
        node.src_shape = src._data.shape if isinstance(src, Tensor) else ()
        node.src_dtype = src._data.dtype if isinstance(src, Tensor) else s._data.dtype
    return out


def copy_(self, src, non_blocking=False):
    if not isinstance(src, (Tensor, int, float, xp.generic)):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    if isinstance(src, Tensor) and type(src._data) is backend.MetaArray and type(self._data) is not backend.MetaArray:
        raise NotImplementedError('Cannot copy out of meta tensor; no data!')
    if not needs_grad(self, src):
        self._check_inplace()
        _check_writable(self)
        result = _copied(self, src)
        self._data[...] = result._data
        _bump(self)
        return self
    return inplace(self, lambda s: _copied(s, src), (src,))


# ---- in-place shape changes (x.unsqueeze_(0)): the tensor becomes its own reshaped view --------

def _reshape_inplace(self, make, node_name, inverse):
    """Give ``self`` the shape of ``make(self)`` (a view op) in place: same storage, version
    bumped, history through the view op's node (renamed as PyTorch names the in-place form).
    ``inverse`` makes the old shape from the new: the views made from the old one are
    re-rooted through it."""
    self._check_inplace()
    old_data = self._data
    new = make(self)
    self._data = new._data
    node = new._grad_fn
    del new  # (a view of self no more)
    _bump(self)
    if node is not None:
        node.__class__ = _renamed(type(node), node_name)
        _rebase(self, node)
    if self._base is not None:  # still a view of its base: one more step in its recipe
        link = self._view_of
        old_make = link[1]
        self._view_of = (link[0], lambda t: make(old_make(t))) + tuple(link[2:])
        self._chain = self._view_node = self._makes = None  # (made again from the new recipe)
        self._attr_version = self._version_counter[0]  # its new history is current
    _reroot(self, old_data, inverse)
    return self


_RENAMED = {}


def _renamed(cls, name):
    """A subclass of a view op's node class, named for its in-place form (same behaviour)."""
    key = (cls, name)
    made = _RENAMED.get(key)
    if made is None:  # (setdefault: two threads get one class)
        made = _RENAMED.setdefault(key, type(name, (cls,), {'__slots__': ()}))
    return made


def unsqueeze_(self, dim):
    from .shape import reshape, unsqueeze
    shape = self._data.shape
    return _reshape_inplace(self, lambda t: unsqueeze(t, dim), 'UnsqueezeBackward1', lambda t: reshape(t, shape))


def squeeze_(self, dim=None):
    from .shape import reshape, squeeze
    name = 'SqueezeBackward3' if dim is None else 'SqueezeBackward4' if isinstance(dim, int) else 'SqueezeBackward5'
    shape = self._data.shape
    return _reshape_inplace(self, lambda t: squeeze(t, dim), name, lambda t: reshape(t, shape))


def t_(self):
    from .shape import t
    return _reshape_inplace(self, t, 'TBackward1', t)


def transpose_(self, dim0, dim1):
    from .shape import transpose
    return _reshape_inplace(self, lambda t: transpose(t, dim0, dim1), 'TransposeBackward1',
                            lambda t: transpose(t, dim0, dim1))


METHODS = {'add_': add_, 'sub_': sub_, 'mul_': mul_, 'div_': div_, 'pow_': pow_, 'zero_': zero_, 'fill_': fill_,
           'normal_': normal_, 'uniform_': uniform_,
           'copy_': copy_, 'unsqueeze_': unsqueeze_, 'squeeze_': squeeze_, 't_': t_, 'transpose_': transpose_,
           'swapaxes_': transpose_, 'swapdims_': transpose_}
