"""Complex numbers: the parts of a complex tensor, its conjugate, polar form, and the views
between a complex tensor and its real pairs.

Gradients follow PyTorch's convention: the gradient of a real loss L with respect to
z = x + iy is dL/dx + i dL/dy (twice the conjugate Wirtinger derivative), so that a step
``z -= lr * z.grad`` descends L. For an op whose output is complex and whose derivative is
holomorphic (mul, exp, matmul, sum ...), that gradient is ``grad * conj(f'(z))``: the rules
written for real numbers compute ``grad * f'(z)``, and ``complex_convention`` (called by
``record`` when an output is complex) turns one into the other by conjugating the gradient on
the way in and out, ``conj(rule(conj(grad)))``, and takes the real part for a real input. The
ops here that are not holomorphic (conj, real, imag, abs, angle, polar, complex, the views)
declare ``complex_rule = True``: their rules are written in the convention already.

leafgrad's ``conj`` copies: the result reports ``is_conj()`` as PyTorch's lazy conjugate view
does, but writing into it does not write into its input (see docs/complex.md).

Each op is declared once (``_op.Op``). What every family shares (the convention itself,
``_util.complex_convention``, applied by ``record``; ``real_part``, ``sgn_backward``; ``refused``,
the errors PyTorch gives complex input) is in ``_util``; this module binds those names too.
"""
from .. import backend
from ..autograd.graph import elementwise_jvp
from ..autograd.views import link as _link
from ._op import CAST, Op, inplace_runner, out_rule, same_dtype
from ._util import (SCALAR_NAMES, complex_convention, ops, real_part, record, refused, saved_output,  # noqa: F401
                    sgn_backward, state, sum_to, unary, where_zero, wrap, xp)  # (the shared ones bound here too)
from ..tensor import Tensor
from .._arg_parser import refuse_arguments


def _interpret(array, np_dtype, shape, strides):
    """The memory of ``array`` read as ``np_dtype`` with ``shape`` and byte ``strides``, from
    ``array``'s first element: a writable NumPy view of the same memory (no copy)."""
    holder = _Reinterpreted()
    holder.__array_interface__ = {'shape': tuple(shape), 'typestr': xp.dtype(np_dtype).str,
                                  'data': (array.__array_interface__['data'][0], False),
                                  'strides': tuple(strides), 'version': 3}
    holder.base = array  # keeps the memory alive while the view lives
    return xp.asarray(holder)


class _Reinterpreted:
    __slots__ = ('__array_interface__', 'base')


# ---- real and imaginary parts ------------------------------------------------------------------

class ViewAsReal(Op):
    """view_as_real(input): the complex tensor's memory as real pairs, shape
    ``(*input.shape, 2)``, a view."""
    op, node, method = 'view_as_real', 'ViewAsRealBackward0', False
    __slots__ = ()
    complex_rule = True

    def forward(input):
        data = input._data
        if data.dtype.kind != 'c':
            raise RuntimeError('view_as_real is only supported for complex tensors')
        if input.is_conj():
            raise RuntimeError('view_as_real doesn\'t work on unresolved conjugated tensors.  To resolve the '
                               'conjugate tensor so you can view it as real, use self.resolve_conj()')
        half = data.itemsize // 2
        out_data = _interpret(data, data.real.dtype, data.shape + (2,), data.strides + (half,))
        out, node = record(out_data, ViewAsReal, (input,))
        _link(input, out, view_as_real)
        return out

    def apply(self, grad):
        return view_as_complex(grad.contiguous()),


class ViewAsComplex(Op):
    """view_as_complex(input): real pairs (last dimension of size 2, stride 1) as complex
    numbers, a view."""
    op, node, method = 'view_as_complex', 'ViewAsComplexBackward0', False
    __slots__ = ()
    complex_rule = True

    def forward(input):
        data = input._data
        if data.dtype.kind not in 'fV' or data.dtype.kind == 'V':
            raise RuntimeError('view_as_complex is only supported for half, float and double tensors, but got a '
                               f'tensor of scalar type: {SCALAR_NAMES[data.dtype.name]}')
        if data.dtype.itemsize == 2:
            raise RuntimeError('leafgrad has no complex32: view_as_complex of a float16 tensor is not supported')
        if data.ndim == 0 or data.shape[-1] != 2:
            raise RuntimeError('Tensor must have a last dimension of size 2')
        item = data.itemsize
        if data.strides[-1] != item:
            raise RuntimeError('Tensor must have a last dimension with stride 1')
        if any(s % (2 * item) for s, n in zip(data.strides[:-1], data.shape[:-1]) if n > 1):
            raise RuntimeError('Tensor must have a stride divisible by 2 for all but last dimension')
        offset = data.__array_interface__['data'][0] - _root_address(data)
        if offset % (2 * item):
            raise RuntimeError('Tensor must have a storage_offset divisible by 2')
        out_data = _interpret(data, backend.from_np(data.dtype).to_complex().np, data.shape[:-1], data.strides[:-1])
        out, node = record(out_data, ViewAsComplex, (input,))
        _link(input, out, view_as_complex)
        return out

    def apply(self, grad):
        return view_as_real(grad.resolve_conj() if grad.is_conj() else grad),


def _root_address(array):
    while isinstance(getattr(array, 'base', None), xp.ndarray):
        array = array.base
    return array.__array_interface__['data'][0]


def _resolved(input):
    return resolve_conj(input) if input.is_conj() else input


class Real(Op):
    """real(input): the real parts, a view of a complex tensor (writable); a real tensor itself.
    ``Tensor.real`` is the attribute (assigning to it writes the real parts)."""
    op = 'real'

    def forward(input):
        try:
            if input._data.dtype.kind != 'c':
                return input
            return view_as_real(_resolved(input)).select(-1, 0)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def _set(self, value):
        real(self).copy_(value)

    method = property(forward, _set)


class Imag(Op):
    """imag(input): the imaginary parts, a view of a complex tensor (writable). ``Tensor.imag``
    is the attribute (assigning to it writes the imaginary parts)."""
    op = 'imag'

    def forward(input):
        if input._data.dtype.kind != 'c':
            raise RuntimeError('imag is not implemented for tensors with non-complex dtypes.')
        return view_as_real(_resolved(input)).select(-1, 1)

    def _set(self, value):
        imag(self).copy_(value)

    method = property(forward, _set)


class IsComplex(Op):
    """is_complex(input): whether the tensor's dtype is complex (``Tensor.is_complex`` is the
    Tensor class's own)."""
    op, method = 'is_complex', False

    def forward(input):
        return input._data.dtype.kind == 'c'


# ---- conjugation -----------------------------------------------------------------------------

class Conj(Op):
    """conj(input): the complex conjugate (a real tensor itself). The result is a new tensor that
    reports ``is_conj()``, as PyTorch's conjugate view."""
    op, node = 'conj', 'ConjBackward0'
    vmap = 'elementwise'
    __slots__ = ()
    complex_rule = True

    def forward(input):
        try:
            if input._data.dtype.kind != 'c':
                return input
            out = unary(Conj, input, xp.conj(input._data))
            out.__dict__['_conj_bit'] = not input.is_conj()
            return out
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return conj(grad),

    def jvp(self, tangents):  # linear: the tangent conjugated
        return conj(tangents[0])


class ConjPhysical(Op):
    """conj_physical(input, *, out=None): the complex conjugate, a tensor that does not report
    ``is_conj()`` (a real tensor itself); ``conj_physical_`` in place (ConjPhysicalBackward1,
    recorded for a real tensor too, as PyTorch's)."""
    op, node = 'conj_physical', 'ConjPhysicalBackward0'
    out = out_rule('aten::conj_physical', same_dtype('Found dtype {out} but expected {result}'),
                   label='conj_physical')
    inplace_function = True
    __slots__ = ()
    complex_rule = True

    def forward(input):
        if input._data.dtype.kind != 'c':
            return input
        return unary(ConjPhysical, input, xp.conj(input._data))

    def inplace(self):
        try:
            return inplace_runner[0](self, lambda s: unary(ConjPhysicalBackward1, s, xp.conj(s._data)), ())
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def apply(self, grad):
        return conj_physical(grad),

    def jvp(self, tangents):  # linear: the tangent conjugated
        return conj_physical(tangents[0])


class ConjPhysicalBackward1(ConjPhysical):
    """``conj_physical_``'s node."""
    node = 'ConjPhysicalBackward1'
    __slots__ = ()


class IsConj(Op):
    """is_conj(input): whether the tensor is a conjugate (made by ``conj``, not resolved)."""
    op = 'is_conj'

    def forward(input):
        return input.__dict__.get('_conj_bit', False) if input._data.dtype.kind == 'c' else False


class ResolveConj(Op):
    """resolve_conj(input): ``input`` itself unless it reports ``is_conj()``; then a copy that
    does not (``clone``'s CloneBackward0, as PyTorch's)."""
    op = 'resolve_conj'

    def forward(input):
        try:
            if not is_conj(input):
                return input
            return ops.clone(input)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


# ---- magnitude, angle, polar form --------------------------------------------------------------

class Angle(Op):
    """angle(input, *, out=None): the argument of each complex number (0 or pi for a real one,
    in the default float dtype for an integer one)."""
    op, node, out = 'angle', 'AngleBackward0', CAST
    saved = ('self',)
    __slots__ = ()
    complex_rule = True

    def forward(input):
        data = input._data
        if data.dtype.kind == 'c':
            return unary(Angle, input, xp.angle(data), save='input')
        if data.dtype.kind in 'fV':
            out = xp.where(data < 0, xp.pi, 0).astype(data.dtype)
            out[xp.isnan(data)] = xp.nan
            return unary(Angle, input, out, save='input')
        out = xp.where(data < 0, xp.pi, 0).astype(backend.get_default_dtype().np)
        return wrap(out)

    jvp = elementwise_jvp  # (a diagonal Jacobian; of a complex z, the real part of conj(rule(conj t)))

    def apply(self, grad):
        (z,) = self.saved_tensors
        if z._data.dtype.kind != 'c':
            return wrap(xp.zeros_like(grad._data)),  # (PyTorch's zeros, not grad * 0: NaN at inf)
        # d angle: grad * i z / |z|^2 (zero at z = 0, as PyTorch's angle_backward)
        return where_zero(z, grad * z / (z.abs() ** 2) * 1j),


def _same_float_pair(a, b, what):
    for t, name in ((a, 'abs'), (b, 'angle')):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}(): argument '{name}' (position {1 if name == 'abs' else 2}) must be Tensor, "
                            f'not {type(t).__name__}')
    da, db = a._data.dtype, b._data.dtype
    if da.kind != 'f' or db.kind != 'f' or da.itemsize < 4 or db.itemsize < 4:
        raise RuntimeError(f'Expected both inputs to be Half, Float or Double tensors but got '
                           f'{SCALAR_NAMES[da.name]} and {SCALAR_NAMES[db.name]}')
    if da != db:
        raise RuntimeError(f'Expected object of scalar type {SCALAR_NAMES[da.name]} but got scalar type '
                           f'{SCALAR_NAMES[db.name]} for second argument')


# out= of polar and complex: out of the result's complex dtype only, resized as PyTorch resizes it
_COMPLEX_OUT = same_dtype("Expected object of scalar type {result} but got scalar type {out} for argument 'out'")


class Polar(Op):
    """polar(abs, angle, *, out=None): ``abs * (cos(angle) + i sin(angle))``."""
    op, node, method = 'polar', 'PolarBackward0', False
    out = out_rule('polar', _COMPLEX_OUT)
    saved = ('result',)
    __slots__ = ('abs_shape', 'angle_shape')
    complex_rule = True

    def forward(abs, angle):
        _same_float_pair(abs, angle, 'polar')
        a, t = abs._data, angle._data
        shape = xp.broadcast_shapes(a.shape, t.shape)
        data = xp.empty(shape, dtype=backend.from_np(a.dtype).to_complex().np)
        data.real, data.imag = a * xp.cos(t), a * xp.sin(t)
        result, node = record(data, Polar, (abs, angle))
        if node is not None:
            node.save(saved_output(result))
            node.abs_shape, node.angle_shape = a.shape, t.shape
        return result

    def apply(self, grad):
        (result,) = self.saved_tensors
        grad_conj = conj_physical(grad)
        grad_abs = grad_angle = None
        if self.next_functions[0][0] is not None:
            grad_abs = sum_to(real_part(grad_conj * ops.sgn(result)), self.abs_shape)
        if self.next_functions[1][0] is not None:
            grad_angle = sum_to(real_part(grad_conj * (result * 1j)), self.angle_shape)
        return grad_abs, grad_angle


class Complex(Op):
    """complex(real, imag, *, out=None): the complex tensor ``real + i imag`` (both float32 or
    both float64)."""
    op, node, method = 'complex', 'ComplexBackward0', False
    out = out_rule('complex', _COMPLEX_OUT)
    __slots__ = ('real_shape', 'imag_shape')
    complex_rule = True

    def forward(real, imag):
        for t, name, pos in ((real, 'real', 1), (imag, 'imag', 2)):
            if not isinstance(t, Tensor):
                raise TypeError(f"complex(): argument '{name}' (position {pos}) must be Tensor, not "
                                f'{type(t).__name__}')
        _same_float_pair(real, imag, 'complex')
        r, i = xp.broadcast_arrays(real._data, imag._data)
        data = xp.empty(r.shape, dtype=backend.from_np(r.dtype).to_complex().np)
        data.real, data.imag = r, i
        result, node = record(data, Complex, (real, imag))
        if node is not None:
            node.real_shape, node.imag_shape = real._data.shape, imag._data.shape
        return result

    def apply(self, grad):
        re = sum_to(real_part(grad), self.real_shape) if self.next_functions[0][0] is not None else None
        im = None
        if self.next_functions[1][0] is not None:
            im = wrap(grad._data.imag.copy()) if not state.grad_enabled else imag(grad).clone()
            im = sum_to(im, self.imag_shape)
        return re, im
