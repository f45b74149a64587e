"""In-place ops: how they are recorded, and how writing through a view rewrites its base.

An in-place op ``x.op_(...)`` is recorded as the out-of-place op applied to x's old value
(a snapshot, since the derivative may need it), whose result is then written into x's
storage; x takes the new node as its ``grad_fn`` and its version counter is bumped, so that
any node that saved x's old value refuses to use it.

When x is a view, its base's history changes too: the base's new ``grad_fn`` is a
``CopySlices`` node, which routes the part of the base's gradient that falls inside the view
through the in-place op and the rest straight through; x's own ``grad_fn`` becomes a view of
the base's new history.
"""
from .. import backend
from ._util import Node, needs_grad, wrap, xp
from ..autograd.graph import gradient_edge
from ..tensor import Tensor


def _view_chain(t):
    """The functions that make ``t`` from its base, base-first."""
    chain = []
    while t._base is not None:
        parent, make = t._meta.view_of
        chain.append(make)
        t = parent
    chain.reverse()
    return chain


def _apply_chain(chain, t):
    for make in chain:
        t = make(t)
    return t


class CopySlices(Node):
    """The base's history after an in-place op on one of its views."""

    def apply(self, grad):
        result = grad.clone()
        region = _apply_chain(self.chain, result)
        res = self.fn.apply(region.clone())
        if res[0] is None:
            region._data[...] = 0
        else:
            region._data[...] = res[0]._data
        return (result,) + tuple(res[1:])

    def release(self):
        self.fn.release()

    def name(self):
        return 'CopySlices'


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
        result = op(self)
        _check_result(self, result)
        self._data[...] = result._data
        self._version_counter[0] += 1
        return self
    snapshot = Tensor._wrap(self._data.copy(), self._requires_grad)
    snapshot._grad_fn, snapshot._output_nr = self._grad_fn, self._output_nr
    result = op(snapshot)
    _check_result(self, result)
    node = result._grad_fn
    self._data[...] = result._data
    self._version_counter[0] += 1
    if self._base is None:
        _rebase(self, node)
        return self
    base = self._base
    chain = _view_chain(self)
    copy_slices = CopySlices((gradient_edge(base),) + node.next_functions[1:])
    copy_slices.fn, copy_slices.chain = node, chain
    _rebase(base, copy_slices)
    regenerated = _apply_chain(chain, base)
    _rebase(self, regenerated._grad_fn)
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


def inplace_binary(self, other, ufunc, op, **kwargs):
    """``self op= other``: a single in-place ufunc call when nothing is recorded."""
    self._check_inplace()
    if needs_grad(self, other):
        return inplace(self, lambda s: op(s, other, **kwargs), (other,))
    y = other._data if isinstance(other, Tensor) else other
    rt = backend.result_type(self, other)
    if ufunc is xp.true_divide and rt.category < 2:
        rt = backend.get_default_dtype()
    sd = backend.from_np(self._data.dtype)
    if rt.category > sd.category:
        raise RuntimeError(f"result type {_type_name(rt)} can't be cast to the desired output type {_type_name(sd)}")
    alpha = kwargs.get('alpha', 1)
    if alpha != 1:
        y = y * alpha
    try:
        ufunc(self._data, y, out=self._data, casting='unsafe')
    except ValueError:
        shape = xp.broadcast_shapes(self._data.shape, xp.shape(y))
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f'{list(shape)}') from None
    self._version_counter[0] += 1
    return self


# ---- the in-place ops of the foundation -----------------------------------------------

def add_(self, other, *, alpha=1):
    from .elementwise import add
    return inplace_binary(self, other, xp.add, add, alpha=alpha)


def sub_(self, other, *, alpha=1):
    from .elementwise import sub
    return inplace_binary(self, other, xp.subtract, sub, alpha=alpha)


def mul_(self, other):
    from .elementwise import mul
    return inplace_binary(self, other, xp.multiply, mul)


def div_(self, other, *, rounding_mode=None):
    from .elementwise import div
    if rounding_mode is not None:
        return inplace(self, lambda s: div(s, other, rounding_mode=rounding_mode), (other,))
    return inplace_binary(self, other, xp.true_divide, div)


def pow_(self, exponent):
    from .elementwise import pow
    return inplace(self, lambda s: pow(s, exponent), (exponent,))


class FillBackward(Node):
    """Overwriting with a constant: no gradient reaches the old value."""

    def apply(self, grad):
        return grad * 0,

    def name(self):
        return 'FillBackward0'


class ZeroBackward0(FillBackward):
    def name(self):
        return 'ZeroBackward0'


def _filled(s, value, cls):
    from ._util import record
    data = xp.full_like(s._data, value)
    return record(data, cls, (s,))[0]


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f'fill_ only supports 0-dimension value tensor but got tensor with '
                               f'{value._data.ndim} dimensions.')
        return copy_(self, value)
    return inplace(self, lambda s: _filled(s, value, FillBackward))


def zero_(self):
    self._check_inplace()
    if not needs_grad(self):
        self._data[...] = 0
        self._version_counter[0] += 1
        return self
    return inplace(self, lambda s: _filled(s, 0, ZeroBackward0))


class CopyBackwards(Node):
    def apply(self, grad):
        from ._util import sum_to
        gs = grad * 0 if self.next_functions[0][0] is not None else None
        gsrc = None
        if self.next_functions[1][0] is not None:
            gsrc = sum_to(grad, self.src_shape)
            if gsrc._data.dtype != self.src_dtype:
                gsrc = wrap(gsrc._data.astype(self.src_dtype)) if not gsrc._requires_grad else gsrc.to(backend.from_np(self.src_dtype))
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
        result = _copied(self, src)
        self._data[...] = result._data
        self._version_counter[0] += 1
        return self
    return inplace(self, lambda s: _copied(s, src), (src,))


METHODS = {'add_': add_, 'sub_': sub_, 'mul_': mul_, 'div_': div_, 'pow_': pow_, 'zero_': zero_, 'fill_': fill_,
           'copy_': copy_}
