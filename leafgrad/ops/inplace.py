"""The in-place ops that are no other op's variant, each declared once (``_op.Op``): overwriting a
tensor (fill_, zero_, copy_, normal_, uniform_; and fill, its out-of-place form) and changing its
shape in place (unsqueeze_, squeeze_, t_, transpose_ with swapaxes_ and swapdims_, as_strided_). All
are Tensor methods only, but fill_, zero_ and as_strided_ (also torch functions) and fill (a function
only), as PyTorch's. (The machinery that records in-place ops is ``_inplace``.)
"""
from .. import _random_kernels as kernels, backend
from ..generator import generator_of
from ._inplace import (_broadcast_error, _bump, _check_no_partial_overlap, _check_writable, _rebase, _reroot,
                       check_not_inference, inplace)
from ._op import Op, cast_array
from ._util import SCALAR_NAMES, needs_grad, ops, record, sum_to, wrap, xp
from ..tensor import Tensor, fitted_scalar, no_arguments
from .._arg_parser import Overloads, refuse_arguments


# ---- overwriting: fill_, zero_, the samplers, copy_ --------------------------------------

def _same_data(a, b):
    """Whether arrays ``a`` and ``b`` are the same memory read the same way (PyTorch's copy_
    returns at once for those)."""
    return a is b or (type(a) is xp.ndarray and type(b) is xp.ndarray and a.dtype == b.dtype and a.shape == b.shape
                      and a.strides == b.strides
                      and a.__array_interface__['data'][0] == b.__array_interface__['data'][0])


class _Overwritten(Op):
    """The node of an op that overwrites its tensor with values of no input (a constant, samples):
    no gradient reaches the old value (zeros_like(grad), as PyTorch: not grad * 0, which is NaN
    where grad is infinite)."""
    __slots__ = ()

    def apply(self, grad):
        return wrap(xp.zeros_like(grad._data)),


def _on_device_of(data, target):
    """``data`` moved to the device of ``target`` when it lives on another (a CPU tensor copied or
    filled into a CUDA one, or back); on the meta device, and where both agree, ``data`` itself."""
    if type(data) is not type(target):
        dev = backend.device_of(target)
        if dev.type != 'meta' and backend.device_of(data) != dev and type(data) is not backend.MetaArray:
            return backend.to_device(data, dev)
    return data


def _filled(s, value, cls):
    if isinstance(value, Tensor):
        data = xp.full_like(s._data, _on_device_of(value._data.reshape(()), s._data))
        return record(data, cls, (s, value))[0]
    data = xp.full_like(s._data, value)
    return record(data, cls, (s,))[0]


def _fill_value(value, input=None):
    """fill's and fill_'s ``value`` (fill's ``input`` given): a number or a 0-dim tensor, refused as
    PyTorch refuses others, with its parser's listing of the signatures."""
    if not isinstance(value, (Tensor, int, float, complex, xp.generic)):
        raise _FILL_.invalid((value,), {}, True) if input is None else _FILL.invalid((input, value), {})
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(f'fill_ only supports 0-dimension value tensor but got tensor with '
                           f'{value._data.ndim} dimensions.')


# PyTorch's signatures: an argument that is no tensor is refused with the parser's listing of them
_FILL = Overloads('fill', '(Tensor input, Tensor value)', '(Tensor input, Number value)')
_FILL_ = _FILL.named('fill_')


class Fill(_Overwritten):
    """fill_(input, value) (Tensor.fill_(value)): every element set to ``value``, a number
    (FillBackward2: no gradient reaches the old value) or a 0-dim tensor (FillBackward3: the
    value gets the sum of the gradient)."""
    op, node = 'fill_', 'FillBackward2'
    __slots__ = ()

    def forward(self, value):
        try:
            _fill_value(value)
            if isinstance(value, Tensor):
                return inplace(self, lambda s: _filled(s, value, FillBackward3), (value,), overlap=False)
            value = fitted_scalar(value, self._data.dtype)
            return inplace(self, lambda s: _filled(s, value, Fill), overlapping=True)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_FILL_)
            raise


class FillBackward3(Op):
    """``fill_(0-dim tensor)`` (also ``t[i] = number``): the value gets the sum of the gradient."""
    node = 'FillBackward3'
    __slots__ = ()

    def apply(self, grad):
        gs = wrap(xp.zeros_like(grad._data)) if self.next_functions[0][0] is not None else None
        gv = ops.sum(grad) if self.next_functions[1][0] is not None else None
        return gs, gv


class FillDiagonal(Op):
    """Tensor.fill_diagonal_(fill_value, wrap=False): the main diagonal (the elements whose
    indices are all equal, of a tensor of two dims or of equal ones) set to a number, by
    ``fill_`` on diagonal views, as PyTorch fills its strided view (CopySlices where self has
    history); ``wrap``: a tall matrix's diagonal starts again every width + 1 rows."""
    op, function = 'fill_diagonal_', False
    parameter_types = {'wrap': 'bool'}

    def forward(self, fill_value, wrap=False):
        if not (isinstance(fill_value, (int, float, xp.number, xp.bool_)) or isinstance(fill_value, Tensor)
                and fill_value._data.ndim == 0 and not fill_value._requires_grad):
            raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not "
                            f'{type(fill_value).__name__}')
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        shape = self._data.shape
        if len(shape) < 2:
            raise RuntimeError('dimensions must larger than 1')
        if len(shape) > 2 and any(n != shape[0] for n in shape[1:]):
            raise RuntimeError('all dimensions of input must be of equal length')
        diagonal = self.diagonal(0, 0, 1)
        for _ in range(len(shape) - 2):  # (the diagonal's dim is last: pair it with the next dim)
            diagonal = diagonal.diagonal(0, 0, -1)
        diagonal.fill_(fill_value)
        if wrap and len(shape) == 2:
            height, width = shape
            for start in range(width + 1, height, width + 1):
                self[start:].diagonal().fill_(fill_value)
        return self


class FillOutOfPlace(_Overwritten):
    """fill(input, value): a new tensor of input's shape and dtype, every element ``value`` (a
    number: FillBackward0; a 0-dim tensor: FillBackward1, which passes value the sum of the
    gradient); a function only, as PyTorch's."""
    op, node, method = 'fill', 'FillBackward0', False
    __slots__ = ()

    def forward(input, value):
        try:
            _fill_value(value, input)
            return _filled(input, value, FillBackward1 if isinstance(value, Tensor) else FillOutOfPlace)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments(overloads=_FILL)
            raise


class FillBackward1(FillBackward3):
    """``fill(input, 0-dim tensor)``."""
    node = 'FillBackward1'
    __slots__ = ()


class Zero(_Overwritten):
    """zero_(input) (Tensor.zero_()): every element set to 0 (recorded as ZeroBackward0 only when
    autograd needs it; else written in place at once)."""
    op, node = 'zero_', 'ZeroBackward0'
    __slots__ = ()

    def forward(self):
        try:
            self._check_inplace()
            if not needs_grad(self):
                _check_writable(self, overlapping=True)
                self._data[...] = 0
                _bump(self)
                return self
            return inplace(self, lambda s: _filled(s, 0, Zero), overlapping=True)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise

    def method(self, *args, **kwargs):  # (PyTorch's words for arguments to a method that takes none)
        if args or kwargs:
            no_arguments('zero_', args)
        return Zero.forward(self)


def _sample_(self, cls, kernel, sample, on_gpu=None):
    """Overwrite a floating tensor with ``sample(n, contiguous)`` (in the order PyTorch's kernel
    writes them: memory order), recorded as ``cls``. ``on_gpu(random_state, shape, dtype)``: the
    draw of a GPU's tensor by CuPy's generator, there (None: drawn on the host, as on the CPU)."""
    target = self._data  # (inplace hands op a contiguous copy when it records: read the layout here)
    d = target.dtype
    if d.kind not in 'fV':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{SCALAR_NAMES[d.name]}\'')

    def op(s):
        if type(target) is backend.MetaArray:  # nothing to fill, and PyTorch draws nothing for it
            return record(target.copy(), cls, (s,))[0]
        if on_gpu is not None and backend.on_gpu(target):  # (no host draw: CuPy's generator, which manual_seed seeds)
            cp = backend.array_module(target)
            with target.device:
                wide = d if d.itemsize >= 4 else xp.dtype(xp.float32)
                return record(on_gpu(cp.random.get_random_state(), target.shape, wide).astype(d, copy=False),
                              cls, (s,))[0]
        values = kernels.fill_in_memory_order(target, sample(target.size, target.flags.c_contiguous))
        # (drawn on the host, as the CPU draws them: copied once to the tensor's GPU by like=)
        return record(xp.asarray(values, like=target).astype(d, copy=False), cls, (s,))[0]
    return inplace(self, op)


class Normal(_Overwritten):
    """Tensor.normal_(mean=0, std=1, *, generator=None): overwritten with samples of
    N(mean, std^2), PyTorch's for the same generator state."""
    op, node, function = 'normal_', 'NormalBackward0', False
    parameter_types = {'mean': 'float', 'std': 'float'}
    __slots__ = ()

    def forward(self, mean=0.0, std=1.0, *, generator=None):
        if std < 0:
            raise RuntimeError(f'normal expects std >= 0.0, but found std {std}')
        g = generator_of(generator, 'normal_')
        d = self._data.dtype
        return _sample_(self, Normal, 'normal_kernel_cpu',
                        lambda n, contiguous: kernels.normal(g, n, d, mean, std, contiguous),
                        None if generator is not None else lambda rs, shape, dt: rs.normal(mean, std, shape, dtype=dt))


class Uniform(_Overwritten):
    """Tensor.uniform_(from=0, to=1, *, generator=None): overwritten with samples of U[from, to),
    PyTorch's for the same generator state. ``from`` being a Python keyword, named bounds arrive
    in ``named``."""
    op, node, function = 'uniform_', 'UniformBackward0', False
    overloads = Overloads('uniform_', '(Tensor input, float from = 0, float to = 1, *, leafgrad.Generator? generator = None)')
    __slots__ = ()

    def forward(self, *bounds, generator=None, **named):
        if len(bounds) > 2:
            raise TypeError(f'uniform_() takes at most 2 positional arguments ({len(bounds)} given)')
        low = bounds[0] if len(bounds) > 0 else named.pop('from', 0.0)
        high = bounds[1] if len(bounds) > 1 else named.pop('to', 1.0)
        if named:
            raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(named))}'")
        if self._data.dtype.kind in 'fV' and low > high:
            raise RuntimeError(f'uniform_ expects to return a [from, to) range, but found from={low} > to={high}')
        g = generator_of(generator, 'uniform_')
        d = self._data.dtype
        return _sample_(self, Uniform, 'check_uniform_bounds',
                        lambda n, contiguous: kernels.uniform(g, n, d, low, high),
                        None if generator is not None else lambda rs, shape, dt: rs.uniform(low, high, shape, dtype=dt))


def _copied(s, src):
    data = _on_device_of(src._data, s._data) if isinstance(src, Tensor) else xp.asarray(src, like=s._data)
    try:
        data = cast_array(xp.broadcast_to(data, s._data.shape), s._data.dtype)
        if not data.flags.owndata:  # (astype made no copy: a copy of its own)
            data = data.copy()
    except ValueError:
        raise _broadcast_error(s, src, data) from None
    out, node = record(data, Copy, (s, src))
    if node is not None:
        node.src_shape = src._data.shape if isinstance(src, Tensor) else ()
        node.src_dtype = src._data.dtype if isinstance(src, Tensor) else s._data.dtype
        node.src_device = None
        if isinstance(src, Tensor) and type(src._data) is not type(s._data):
            # (a copy between the CPU and a GPU: src's gradient goes back to src's device, as PyTorch's)
            devices = backend.device_of(src._data), backend.device_of(s._data)
            if devices[0] != devices[1] and backend.META not in devices:
                node.src_device = devices[0]
    return out


class Copy(Op):
    """Tensor.copy_(src, non_blocking=False): ``src`` (a tensor broadcast to self's shape, or
    a number) written into self, cast to its dtype; the gradient of ``src`` is the gradient
    summed to its shape, in its dtype (CopyBackwards)."""
    op, node, function = 'copy_', 'CopyBackwards', False
    __slots__ = ('src_shape', 'src_dtype', 'src_device')

    def forward(self, src, non_blocking=False):
        if not isinstance(src, (Tensor, int, float, xp.generic)):
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
        if isinstance(src, Tensor) and type(src._data) is backend.MetaArray and \
                type(self._data) is not backend.MetaArray:
            raise NotImplementedError('Cannot copy out of meta tensor; no data!')
        # (src the same memory read the same way, x.copy_(x): PyTorch returns at once, refusing no
        # overlap; the version is bumped and the copy recorded all the same)
        same = isinstance(src, Tensor) and _same_data(self._data, src._data)
        if not needs_grad(self, src):
            self._check_inplace()
            if same:
                check_not_inference(self)
            else:
                _check_writable(self)
                _check_no_partial_overlap(self, (src,))
                result = _copied(self, src)
                self._data[...] = result._data
            _bump(self)
            return self
        return inplace(self, lambda s: _copied(s, src), (src,), overlapping=same)

    def name(self):
        return 'leafgrad::autograd::CopyBackwards'

    def apply(self, grad):
        # (zeros_like(grad), as PyTorch: not grad * 0, NaN where the gradient is not finite: seed 6005760)
        gs = wrap(xp.zeros_like(grad._data)) if self.next_functions[0][0] is not None else None
        gsrc = None
        if self.next_functions[1][0] is not None:
            gsrc = sum_to(grad, self.src_shape)
            if gsrc._data.dtype != self.src_dtype:
                if gsrc._requires_grad:
                    gsrc = gsrc.to(backend.from_np(self.src_dtype))
                else:
                    gsrc = wrap(gsrc._data.astype(self.src_dtype))
            if self.src_device is not None:
                gsrc = gsrc.to(self.src_device)
        return gs, gsrc


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


class Unsqueeze_(Op):
    """Tensor.unsqueeze_(dim): the tensor becomes its unsqueezed view (UnsqueezeBackward1)."""
    op, function = 'unsqueeze_', False
    parameter_types = {'dim': 'int'}

    def forward(self, dim):
        shape = self._data.shape
        return _reshape_inplace(self, lambda t: ops.unsqueeze(t, dim), 'UnsqueezeBackward1',
                                lambda t: ops.reshape(t, shape))


class Squeeze_(Op):
    """Tensor.squeeze_(dim=None): the tensor becomes its squeezed view (SqueezeBackward3 for all
    dims, 4 for one, 5 for a tuple)."""
    op, function = 'squeeze_', False
    parameter_types = {'dim': 'tuple of ints'}  # (no None, as Squeeze's)
    listed = Overloads('squeeze_', '(Tensor input)', '(Tensor input, int dim)', '(Tensor input, tuple of ints dim)')

    def forward(self, dim=None):
        name = 'SqueezeBackward3' if dim is None else 'SqueezeBackward4' if isinstance(dim, int) else \
            'SqueezeBackward5'
        shape = self._data.shape
        squeezed = (lambda t: ops.squeeze(t)) if dim is None else (lambda t: ops.squeeze(t, dim))
        return _reshape_inplace(self, squeezed, name, lambda t: ops.reshape(t, shape))


class T_(Op):
    """Tensor.t_(): the matrix becomes its transpose (TBackward1)."""
    op, function = 't_', False

    def forward(self):
        return _reshape_inplace(self, ops.t, 'TBackward1', ops.t)


class AsStrided_(Op):
    """as_strided_(input, size, stride, storage_offset=None) (Tensor.as_strided_): the tensor
    becomes its as_strided view of its own storage (AsStridedBackward1)."""
    op = 'as_strided_'
    parameter_types = {'size': 'sizes', 'stride': 'sizes', 'storage_offset': 'int?'}

    def forward(input, size, stride, storage_offset=None):
        data = input._data
        shape, strides, offset = data.shape, tuple(s // data.itemsize for s in data.strides), ops.storage_offset(input)
        return _reshape_inplace(input, lambda t: ops.as_strided(t, size, stride, storage_offset),
                                'AsStridedBackward1', lambda t: ops.as_strided(t, shape, strides, offset))


class Transpose_(Op):
    """Tensor.transpose_(dim0, dim1) (also swapaxes_, swapdims_): the tensor becomes its view with
    two dims swapped (TransposeBackward1)."""
    op, aliases, function = 'transpose_', ('swapaxes_', 'swapdims_'), False

    def forward(self, dim0, dim1):
        return _reshape_inplace(self, lambda t: ops.transpose(t, dim0, dim1), 'TransposeBackward1',
                                lambda t: ops.transpose(t, dim0, dim1))
