"""In-place ops: how they are recorded, and how writing through a view rewrites its base.

An in-place op ``x.op_(...)`` is recorded as the out-of-place op applied to x's old value
(a snapshot, since the derivative may need it), whose result is then written into x's
storage; x takes the new node as its ``grad_fn`` and its version counter is bumped, so that
any node that saved x's old value refuses to use it.

When x is a view, its base's history changes too: the base's new ``grad_fn`` is a
``CopySlices`` node, which routes the part of the base's gradient that falls inside the view
through the in-place op and the rest straight through; x's own ``grad_fn`` becomes a view of
the base's new history (``AsStridedBackward0``, as PyTorch names it). Every *other* live view
of the base (the base keeps weak references to them, ``shape.LiveViews``, while grad mode is
on) sees the new values too, so it is given such a history as well: PyTorch does this lazily,
when the view's grad_fn is next read; here it is done at the in-place op, which is the only
moment it can change.

Writing is refused where PyTorch refuses it: into an expanded (read-only, self-overlapping)
view, and into one output of unbind/split/chunk while recording.
"""
from .. import backend
from ._util import Node, broadcast_error, needs_grad, record, state, wrap, xp
from .elementwise import add, div, mul, pow, sub
from ..autograd.graph import _short_name, gradient_edge
from ..autograd.origins import bump as _bump
from ..tensor import Tensor


def _view_chain(t):
    """The functions that make ``t`` from its base, base-first."""
    chain = []
    while t._base is not None:
        chain.append(t._view_of[1])
        t = t._view_of[0]
    chain.reverse()
    return chain


def _apply_chain(chain, t):
    for make in chain:
        t = make(t)
    return t


class CopySlices(Node):
    """The base's history after an in-place op on one of its views: the base's gradient
    passes unchanged outside the view; inside it, it goes through the in-place op's
    derivative ``fn`` (whose gradients for the op's other inputs are routed as they are)."""

    def apply(self, grad):
        result = grad.clone()
        region = _apply_chain(self.chain, result)
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


class AsStridedBackward0(Node):
    """The history of a view whose base changed in place: the view's own derivative chain
    (select, slice, transpose, ...) replayed from the base's new history.

    PyTorch names this node AsStridedBackward0 (it regenerates the view with as_strided);
    here the chain of view derivatives runs in turn, each written with leafgrad ops."""

    def apply(self, grad):
        for node in reversed(self.nodes):
            grad = node.apply(grad)[0]
        return grad,


def _regenerate(view, base):
    """Give ``view`` a history through ``base``'s current one."""
    chain = _view_chain(view)
    nodes = []
    t = base
    for make in chain:
        t = make(t)
        nodes.append(t._grad_fn)
    node = AsStridedBackward0((gradient_edge(base),))
    node.nodes = nodes
    _rebase(view, node)


def _refresh_views(base, modified):
    """After ``modified`` (the base or one of its views) changed in place, every other live
    view of the base sees the change, so it takes a history through the base's new one."""
    views = base._views
    if views is None:
        return
    for v in views.alive():
        if v is not modified and v._version_counter is base._version_counter:
            if type(v._grad_fn) is _InvalidMultiOutputView:
                continue  # already refused
            if v._requires_grad and v._grad_fn is not None and _from_multi_output(v):
                node = _InvalidMultiOutputView(((None, 0),))
                node.message = (f'Output {v._output_nr} of {_short_name(v._grad_fn)} is a view and its base or '
                                'another view of its base has been modified inplace. This view is the output of a '
                                'function that returns multiple views. Such functions do not allow the output views '
                                'to be modified inplace. You should replace the inplace operation by an out-of-place '
                                'one.')
                _rebase(v, node)
            else:
                _regenerate(v, base)


class _InvalidMultiOutputView(Node):
    """The history of an unbind/split output whose base changed in place: PyTorch refuses
    to use it (it raises when the grad_fn is read; here, when a backward reaches it)."""

    def apply(self, grad):
        raise RuntimeError(self.message)

    def name(self):
        raise RuntimeError(self.message)


def _check_writable(self):
    if not self._data.flags.writeable:
        raise RuntimeError('unsupported operation: more than one element of the written-to tensor refers to a single '
                           'memory location. Please clone() the tensor before performing the operation.')


def _from_multi_output(t):
    """Whether ``t`` is (a view of) one of several views returned together (unbind, split)."""
    while t._base is not None:
        link = t._view_of
        if len(link) == 3:
            return True
        t = link[0]
    return False


def _check_multi_output_view(self):
    if self._requires_grad and self._grad_fn is not None and _from_multi_output(self):
        raise RuntimeError(f'Output {self._output_nr} of {_short_name(self._grad_fn)} is a view and is being modified '
                           'inplace. This view is the output of a function that returns multiple views. Such functions '
                           'do not allow the output views to be modified inplace. You should replace the inplace '
                           'operation by an out-of-place one.')


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
    _check_writable(self)
    if not needs_grad(self, *others):
        result = op(self)
        _check_result(self, result)
        self._data[...] = result._data
        _bump(self)
        return self
    _check_multi_output_view(self)
    snapshot = Tensor._wrap(self._data.copy(), self._requires_grad)
    snapshot._grad_fn, snapshot._output_nr = self._grad_fn, self._output_nr
    result = op(snapshot)
    _check_result(self, result)
    node = result._grad_fn
    self._data[...] = result._data
    _bump(self)
    if self._base is None:
        _rebase(self, node)
        _refresh_views(self, self)
        return self
    base = self._base
    copy_slices = CopySlices((gradient_edge(base),) + node.next_functions[1:])
    copy_slices.fn, copy_slices.chain = node, _view_chain(self)
    _rebase(base, copy_slices)
    _regenerate(self, base)
    _refresh_views(base, self)
    return self


def _rebase(t, node):
    retained = t._grad_fn is not None and t._meta is not None and t._meta.retains_grad
    if retained:
        t._grad_fn._retained.pop(t._output_nr, None)
    t._grad_fn = node
    t._output_nr = 0
    t._requires_grad = True
    if retained:
        from ..tensor import _attach_retain
        _attach_retain(t)


def inplace_binary(self, other, ufunc, op, alpha=1):
    """``self op= other``: a single in-place ufunc call when nothing is recorded."""
    if state.grad_enabled:  # (under no_grad, as in an optimizer's step, nothing can be refused)
        self._check_inplace()
        if needs_grad(self, other):
            if alpha == 1:
                return inplace(self, lambda s: op(s, other), (other,))
            return inplace(self, lambda s: op(s, other, alpha=alpha), (other,))
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
        _check_writable(self)
        rt = backend.result_type(self, other)
        if ufunc is xp.true_divide and rt.category < 2:
            rt = backend.get_default_dtype()
        sd = backend.from_np(d)
        if rt.category > sd.category:
            raise RuntimeError(f"result type {_type_name(rt)} can't be cast to the desired output type "
                               f"{_type_name(sd)}")
        if alpha != 1:
            y = y * alpha
        try:
            ufunc(data, y, out=data, casting='unsafe')
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
    return inplace_binary(self, other, xp.add, add, alpha)


def sub_(self, other, *, alpha=1):
    return inplace_binary(self, other, xp.subtract, sub, alpha)


def mul_(self, other):
    return inplace_binary(self, other, xp.multiply, mul)


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None:
        return inplace(self, lambda s: div(s, other, rounding_mode=rounding_mode), (other,))
    return inplace_binary(self, other, xp.true_divide, div)


def pow_(self, exponent):
    return inplace(self, lambda s: pow(s, exponent), (exponent,))


class FillBackward2(Node):
    """``fill_(number)``: overwritten with a constant, no gradient reaches the old value."""

    def apply(self, grad):
        return grad * 0,


class ZeroBackward0(FillBackward2):
    pass


class FillBackward3(Node):
    """``fill_(0-dim tensor)`` (also ``t[i] = number``): the value gets the sum of the gradient."""

    def apply(self, grad):
        from .reduction import sum as _sum
        gs = grad * 0 if self.needs_input_grad(0) else None
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
    if d.kind != 'f':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(backend.from_np(d))}\'')

    def op(s):
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
    if self._data.dtype.kind == 'f' and low > high:
        raise RuntimeError(f'uniform_ expects to return a [from, to) range, but found from={low} > to={high}')
    from .. import _random_kernels as kernels
    from ..generator import generator_of
    g = generator_of(generator, 'uniform_')
    d = self._data.dtype
    return _sample_(self, UniformBackward0, 'check_uniform_bounds',
                    lambda n, contiguous: kernels.uniform(g, n, d, low, high))


def zero_(self):
    self._check_inplace()
    _check_writable(self)
    if not needs_grad(self):
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
        raise RuntimeError(f'The size of tensor a ({s._data.shape[-1] if s._data.ndim else 1}) must match the size of '
                           f'tensor b ({xp.shape(data)[-1] if xp.ndim(data) else 1}) at non-singleton dimension '
                           f'{max(s._data.ndim - 1, 0)}') from None
    out, node = record(data, CopyBackwards, (s, src))
    if node is not None:
        node.src_shape = src._data.shape if isinstance(src, Tensor) else ()
        node.src_dtype = src._data.dtype if isinstance(src, Tensor) else s._data.dtype
    return out


def copy_(self, src, non_blocking=False):
    if not needs_grad(self, src):
        self._check_inplace()
        _check_writable(self)
        result = _copied(self, src)
        self._data[...] = result._data
        _bump(self)
        return self
    return inplace(self, lambda s: _copied(s, src), (src,))


# ---- in-place shape changes (x.unsqueeze_(0)): the tensor becomes its own reshaped view --------

def _reshape_inplace(self, make, node_name):
    """Give ``self`` the shape of ``make(self)`` (a view op) in place: same storage, version
    bumped, history through the view op's node (renamed as PyTorch names the in-place form)."""
    self._check_inplace()
    new = make(self)
    self._data = new._data
    _bump(self)
    node = new._grad_fn
    if node is not None:
        node.__class__ = _renamed(type(node), node_name)
        _rebase(self, node)
    if self._base is not None:  # still a view of its base: one more step in its recipe
        link = self._view_of
        old_make = link[1]
        self._view_of = (link[0], lambda t: make(old_make(t))) + tuple(link[2:])
    return self


_RENAMED = {}


def _renamed(cls, name):
    """A subclass of a view op's node class, named for its in-place form (same behaviour)."""
    key = (cls, name)
    if key not in _RENAMED:
        _RENAMED[key] = type(name, (cls,), {'__slots__': ()})
    return _RENAMED[key]


def unsqueeze_(self, dim):
    from .shape import unsqueeze
    return _reshape_inplace(self, lambda t: unsqueeze(t, dim), 'UnsqueezeBackward1')


def squeeze_(self, dim=None):
    from .shape import squeeze
    name = 'SqueezeBackward3' if dim is None else 'SqueezeBackward4' if isinstance(dim, int) else 'SqueezeBackward5'
    return _reshape_inplace(self, lambda t: squeeze(t, dim), name)


def t_(self):
    from .shape import t
    return _reshape_inplace(self, t, 'TBackward1')


def transpose_(self, dim0, dim1):
    from .shape import transpose
    return _reshape_inplace(self, lambda t: transpose(t, dim0, dim1), 'TransposeBackward1')


METHODS = {'add_': add_, 'sub_': sub_, 'mul_': mul_, 'div_': div_, 'pow_': pow_, 'zero_': zero_, 'fill_': fill_,
           'normal_': normal_, 'uniform_': uniform_,
           'copy_': copy_, 'unsqueeze_': unsqueeze_, 'squeeze_': squeeze_, 't_': t_, 'transpose_': transpose_,
           'swapaxes_': transpose_, 'swapdims_': transpose_}
