"""Statistics and finite differences: quantile, nanquantile, cov, corrcoef, diff, trapezoid,
cumulative_trapezoid, dist, renorm, each declared once (``_op.Op``). (nanmedian is a median:
minmax.py.)

Most are compositions of differentiable ops, as PyTorch composes them (so their graphs end in
the same node and differentiate twice); dist and renorm record nodes of their own
(DistBackward0, RenormBackward0) whose derivatives are leafgrad ops.
"""
from ..autograd.grad_mode import no_grad
from ._op import Op, castable_dtype, out_rule, same_dtype
from ..tensor import Tensor
from ._util import SCALAR_NAMES as _DTYPE_LABEL, c_order, on_gpu, ops, record, saved_output, sum_to, wrap, wrap_dim, xp
from .._arg_parser import Overloads, refuse_arguments


def _float_kind(t):
    return t._data.dtype.kind in 'fV'


# ---- quantile, nanquantile ---------------------------------------------------------------------

_INTERPOLATIONS = ('linear', 'lower', 'higher', 'midpoint', 'nearest')


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    """PyTorch's algorithm: sort along the reduced dim (NaN last), the rank q * (n - 1) of the
    non-NaN values (nanquantile) or of all (quantile: a row holding NaN gives NaN), the values at
    the ranks below and above, interpolated; q's dims first in the result."""
    a = input._data
    if a.dtype.kind != 'f' or a.dtype.itemsize < 4:
        raise RuntimeError(f'{name}() input tensor must be either float or double dtype')
    if isinstance(q, Tensor):
        qa = q._data
        if qa.ndim > 1:
            raise RuntimeError(f'{name}() q must be a scalar or 1D tensor')
        if qa.dtype != a.dtype:
            raise RuntimeError(f'{name}() q tensor must be same dtype as the input tensor')
        q_scalar = qa.ndim == 0
        qa = qa.reshape(-1)
    else:
        qf = float(q)
        if not 0 <= qf <= 1:
            raise RuntimeError(f'{name}() q must be in the range [0, 1] but got {qf:g}')
        q_scalar, qa = True, xp.asarray([qf], dtype=a.dtype, like=a) if on_gpu(a) else xp.asarray([qf], dtype=a.dtype)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f'{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but '
                           f'got {interpolation}')
    if a.size == 0:
        raise RuntimeError(f'{name}() input tensor must be non-empty')
    if ((qa < 0) | (qa > 1)).any():
        raise RuntimeError(f'{name}() q values must be in the range [0, 1]')
    if dim is None:
        x = ops.reshape(input, (-1,))
        out_shape = (1,) * a.ndim if keepdim else ()
    else:
        d = wrap_dim(dim, a.ndim)
        x = ops.movedim(input, d, -1) if a.ndim else ops.reshape(input, (1,))
        out_shape = a.shape[:d] + ((1,) if keepdim else ()) + a.shape[d + 1:] if a.ndim else ()
    values = ops.sort(x, -1)[0]                                   # (..., n), NaN last
    s = values._data
    n = s.shape[-1]
    # the ranks as a tensor: PyTorch differentiates the interpolation weight with respect to q
    q_t = ops.reshape(q, (-1,)) if isinstance(q, Tensor) else wrap(qa)
    if ignore_nan:
        last = c_order((xp.sum(~xp.isnan(s), axis=-1, keepdims=True) - 1).astype(a.dtype))
        ranks_t = q_t * wrap(last)
        ranks_t = ops.where(wrap(ranks_t._data < 0), wrap(xp.zeros((), a.dtype, like=a)), ranks_t)
    else:
        ranks_t = q_t * float(n - 1) + wrap(xp.zeros(s.shape[:-1] + (1,), a.dtype, like=a))
        # (the rows holding NaN contiguous, as PyTorch's any(-1, keepdim=True): the ranks' layout is the result's)
        ranks_t = ops.where(wrap(c_order(xp.isnan(s[..., -1:]))), wrap(xp.asarray(n - 1, a.dtype, like=a)), ranks_t)
    ranks = ranks_t._data
    if interpolation == 'lower':
        ranks = xp.floor(ranks)
    elif interpolation == 'higher':
        ranks = xp.ceil(ranks)
    elif interpolation == 'nearest':
        ranks = xp.round(ranks)
    below = ranks.astype(xp.int64)
    result = ops.gather(values, -1, wrap(below))
    if interpolation in ('linear', 'midpoint'):
        above = ops.gather(values, -1, wrap(xp.ceil(ranks).astype(xp.int64)))
        weight = wrap(xp.full(ranks.shape, 0.5, dtype=a.dtype, like=a)) if interpolation == 'midpoint' else \
            ranks_t - wrap(below.astype(a.dtype))
        result = ops.lerp(result, above, weight)
    # (..., len(q)) -> (len(q), *out_shape); a scalar q drops its dim by an in-place squeeze, as PyTorch
    result = ops.reshape(result, out_shape + (qa.shape[0],))
    if not q_scalar:
        result = ops.movedim(result, -1, 0).unsqueeze(-1)
    return result.squeeze_(-1)


_QUANTILE_OUT = same_dtype('quantile() out tensor must be same dtype as the input tensor')


def _quantile_overloads(name):
    return Overloads(name, '(Tensor input, Tensor q, int dim = None, bool keepdim = False, *, str interpolation = '
                     '"linear", Tensor out = None)', '(Tensor input, float q, int dim = None, bool keepdim = False, '
                     '*, str interpolation = "linear", Tensor out = None)')


class Quantile(Op):
    """Composed of sort, gather and lerp (its graph ends in their nodes, as PyTorch's); out= is
    written by copy_ (as PyTorch's): ``out`` then has grad_fn CopyBackwards."""
    op, out = 'quantile', out_rule('quantile', _QUANTILE_OUT, copy=True)
    listed = _quantile_overloads('quantile')
    parameter_types = {'q': 'Tensor or float', 'dim': 'int?'}
    __slots__ = ()

    def forward(input, q, dim=None, keepdim=False, *, interpolation='linear'):
        """quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor

        The q-th quantiles along ``dim`` (of all elements when None); NaN where a slice holds NaN."""
        return _quantile(input, q, dim, keepdim, interpolation, False, 'quantile')


class Nanquantile(Op):
    """As quantile."""
    op, out = 'nanquantile', out_rule('nanquantile', _QUANTILE_OUT, copy=True)
    listed = _quantile_overloads('nanquantile')
    parameter_types = {'q': 'Tensor or float', 'dim': 'int?'}
    __slots__ = ()

    def forward(input, q, dim=None, keepdim=False, *, interpolation='linear'):
        """nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None) -> Tensor

        quantile of the non-NaN values (NaN where a slice holds nothing else)."""
        return _quantile(input, q, dim, keepdim, interpolation, True, 'quantile')  # (PyTorch's messages say quantile)


# ---- cov, corrcoef -----------------------------------------------------------------------------------

def _check_weights(weights, name, kinds, kind_word, n_obs):
    """cov's checks of fweights (integral) and aweights (floating point), in PyTorch's words."""
    a = weights._data
    if a.ndim > 1:
        raise RuntimeError(f'cov(): expected {name} to have one or fewer dimensions but got {name} with {a.ndim} '
                           'dimensions')
    if a.dtype.kind not in kinds:
        raise RuntimeError(f'cov(): expected {name} to have {kind_word} dtype but got {name} with '
                           f'{_DTYPE_LABEL.get(a.dtype.name, a.dtype.name)} dtype')
    if a.size != n_obs:
        raise RuntimeError(f'cov(): expected {name} to have the same numel as there are observations in the input '
                           f'but got {a.size} != {n_obs}')
    if a.size and a.min() < 0:
        raise RuntimeError(f'cov(): {name} cannot be negative')


class Cov(Op):
    """Composed of differentiable ops (mean, mm, ...); PyTorch's function takes no out=."""
    op = 'cov'
    __slots__ = ()

    def forward(input, *, correction=1, fweights=None, aweights=None):
        """cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor

        The covariance matrix of the rows of ``input`` (variables) over its columns
        (observations), weighted by integer frequencies and/or observation weights."""
        try:
            a = input._data
            if a.ndim > 2:
                raise RuntimeError(f'cov(): expected input to have two or fewer dimensions but got an input with '
                                   f'{a.ndim} '
                                   'dimensions')
            x = ops.reshape(input, (1, -1)) if a.ndim < 2 else input
            n_obs = x._data.shape[1]
            w = None
            if fweights is not None:
                _check_weights(fweights, 'fweights', 'iu', 'integral', n_obs)
                w = fweights
            if aweights is not None:
                _check_weights(aweights, 'aweights', 'fV', 'floating point', n_obs)
                w = aweights if w is None else w * aweights
            if w is None:
                avg = ops.mean(x, 1) if _float_kind(x) else ops.mean(x.double(), 1)
                w_sum = n_obs
                norm = n_obs - correction
            else:
                w_sum = ops.sum(w)
                avg = ops.sum(x * w, 1) / w_sum
                if correction == 0:
                    norm = w_sum
                elif aweights is None:
                    norm = w_sum - correction
                else:
                    norm = w_sum - correction * ops.sum(w * aweights) / w_sum
            if isinstance(norm, (int, float)):
                norm = max(norm, 0)
            else:
                norm = ops.where(norm < 0, wrap(xp.zeros((), dtype=norm._data.dtype, like=norm._data)), norm)
            centred = x - ops.unsqueeze(avg, 1)
            weighted = centred if w is None else centred * w
            c = ops.mm(centred, ops.t(weighted))
            with xp.errstate(divide='ignore', invalid='ignore'):
                return (c / norm).squeeze()
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


class Corrcoef(Op):
    """Composed of cov and differentiable ops."""
    op = 'corrcoef'
    __slots__ = ()

    def forward(input):
        """corrcoef(input) -> Tensor

        Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
        try:
            c = ops.cov(input)
            if c._data.ndim == 0:
                return c / c
            std = ops.sqrt(ops.diag(c))
            c = c / ops.unsqueeze(std, 1)
            c = c / ops.unsqueeze(std, 0)
            return c.clamp(-1, 1)
        except (AttributeError, TypeError):  # (an argument that is no tensor: PyTorch's parser's TypeError)
            refuse_arguments()
            raise


# ---- diff, trapezoid -----------------------------------------------------------------------------------

class Diff(Op):
    """Composed of narrow and sub (or logical_xor)."""
    op, out = 'diff', out_rule('sub', castable_dtype, label='diff')  # (PyTorch's out kernel: sub's)
    parameter_types = {'dim': 'int', 'n': 'int', 'prepend': 'Tensor?', 'append': 'Tensor?'}
    __slots__ = ()

    def forward(input, n=1, dim=-1, prepend=None, append=None):
        """diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None) -> Tensor

        The n-th forward difference along ``dim`` (``prepend``/``append`` joined first); for bool
        tensors the exclusive or of neighbours."""
        a = input._data
        if a.ndim == 0:
            raise RuntimeError('diff expects input to be at least one-dimensional')
        if n < 0:
            raise RuntimeError(f'order must be non-negative but got {n}')
        for extra in (prepend, append):
            if extra is not None and extra._data.ndim != a.ndim:
                raise RuntimeError('diff expects prepend or append to be the same dimension as input')
        d = wrap_dim(dim, a.ndim)
        x = input
        if prepend is not None or append is not None:
            x = ops.cat([t for t in (prepend, input, append) if t is not None], d)
        if n == 0:
            return ops.clone(x)
        for _ in range(n):
            size = x._data.shape[d]
            if size == 0:
                break
            later, earlier = ops.narrow(x, d, 1, size - 1), ops.narrow(x, d, 0, size - 1)
            x = ops.logical_xor(later, earlier) if x._data.dtype.kind == 'b' else later - earlier
        return x


_TRAPEZOID_SIGNATURES = ('(Tensor y, Tensor x, *, int dim = -1)', '(Tensor y, *, Number dx = 1, int dim = -1)')


def _trapezoid(y, x, dx, dim):
    """trapezoid(y, x=None, *, dx=None, dim=-1), as PyTorch's C++ composes it (its products and
    quotients by numbers MulBackward1 and DivBackward1, its slices and sums along the dim as given)."""
    if x is not None and (not isinstance(x, Tensor) or dx is not None):
        raise TypeError('no overload takes these arguments')  # (the op's refusals word it)
    a = y._data
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(x, Tensor) and x._data.ndim == 1 and x._data.shape[0] != n:
        raise RuntimeError(f'trapezoid: There must be one `x` value for each sample point')
    if n == 0:  # (PyTorch's zeros, recording nothing)
        return ops.zeros(a.shape[:d] + a.shape[d + 1:], dtype=y.dtype)
    if isinstance(x, Tensor):
        return ops.div_by_number(ops.sum(_heights(y, d) * _spacing(x, d, a.ndim), d), 2.)
    step = float(1 if dx is None else dx)
    ends = ops.mul_by_number(ops.select(y, dim, 0) + ops.select(y, dim, -1), 0.5)
    return ops.mul_by_number(ops.sum(y, dim) - ends, step)


_TRAPEZOID_SIGNATURES = ('(Tensor y, Tensor x, *, int dim = -1)', '(Tensor y, *, Number dx = 1, int dim = -1)')


class Trapezoid(Op):
    """Composed of differentiable ops (``_trapezoid``); a function only."""
    op, method = 'trapezoid', False
    refusals = Overloads('trapezoid', *_TRAPEZOID_SIGNATURES)  # (x a number, or x with dx: PyTorch's listing)
    __slots__ = ()

    def forward(y, x=None, *, dx=None, dim=-1):
        """trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

        The integral of ``y`` along ``dim`` by the trapezoidal rule, at spacing ``dx`` (default 1)
        or at sample points ``x``."""
        return _trapezoid(y, x, dx, dim)


class Trapz(Op):
    """trapz(y, x=None, *, dx=None, dim=-1): trapezoid's older name, whose overloads PyTorch
    lists in the other order."""
    op, method = 'trapz', False
    refusals = Overloads('trapz', '(Tensor y, *, float dx = 1, int dim = -1)', _TRAPEZOID_SIGNATURES[0])
    __slots__ = ()

    def forward(y, x=None, *, dx=None, dim=-1):
        """trapz(y, x=None, *, dim=-1) -> Tensor

        Alias for trapezoid."""
        return _trapezoid(y, x, dx, dim)


class CumulativeTrapezoid(Op):
    """Composed of differentiable ops, as trapezoid; a function only."""
    op, method = 'cumulative_trapezoid', False
    refusals = Overloads('cumulative_trapezoid', *_TRAPEZOID_SIGNATURES)
    __slots__ = ()

    def forward(y, x=None, *, dx=None, dim=-1):
        """cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

        The running trapezoidal integral along ``dim`` (one element fewer than ``y``)."""
        if x is not None and (not isinstance(x, Tensor) or dx is not None):
            raise TypeError('no overload takes these arguments')  # (refusals words it)
        if isinstance(x, Tensor):
            d = wrap_dim(dim, y._data.ndim)
            return ops.div_by_number(ops.cumsum(_heights(y, d) * _spacing(x, d, y._data.ndim), d), 2.)
        return ops.cumsum(ops.mul_by_number(_heights(y, dim), float(1 if dx is None else dx) / 2.), dim)


def _heights(y, dim):
    """The sums of neighbouring samples along ``dim``, as PyTorch's trapezoids take them."""
    return ops.slice_dim(y, dim, 0, -1, 1) + ops.slice_dim(y, dim, 1, None, 1)


def _spacing(x, d, ndim):
    """The differences of neighbouring sample points: along ``d``, or of a 1-D ``x`` laid along it."""
    axis = -1 if x._data.ndim == 1 else d
    spacing = ops.slice_dim(x, axis, 1, None, 1) - ops.slice_dim(x, axis, 0, -1, 1)
    return ops.reshape(spacing, (-1,) + (1,) * (ndim - 1 - d)) if x._data.ndim == 1 else spacing


# ---- gradient ------------------------------------------------------------------------------------

_GRADIENT_OVERLOADS = (
    '(Tensor input, *, tuple of ints dim, int edge_order = 1)',
    '(Tensor input, *, Number spacing, tuple of ints dim, int edge_order = 1)',
    '(Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)',
    '(Tensor input, *, tuple of Scalars spacing, int dim = None, int edge_order = 1)',
    '(Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order = 1)',
    '(Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)',
    '(Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)')


class Gradient(Op):
    """Composed of slices, arithmetic and cat, as PyTorch composes it (its results end in
    CatBackward0); a function only."""
    op, method = 'gradient', False
    overloads = Overloads('gradient', *_GRADIENT_OVERLOADS)
    __slots__ = ()

    def forward(input, *, spacing=None, dim=None, edge_order=1):
        """gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple of Tensors

        The derivative of the function sampled by ``input`` along each dim of ``dim`` (all by
        default), by second-order central differences inside and first- or second-order
        (``edge_order``) one-sided differences at the ends. ``spacing``: one number for every
        dim, a number per dim, or per dim a 1-dim tensor of the sample coordinates."""
        ndim = input._data.ndim
        dims = list(range(ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        if isinstance(spacing, (list, tuple)):
            if dim is None and len(spacing) != ndim:
                raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                                   f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
                                   f"of length {len(spacing)}")
            if dim is not None and len(spacing) != len(dims):
                raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                                   f"arguments to have the same length, but got a spacing argument of length "
                                   f"{len(spacing)} and a dim argument of length {len(dims)}.")
            steps = list(spacing)
        else:
            step = 1 if spacing is None else spacing.item() if isinstance(spacing, Tensor) else spacing
            steps = [step] * len(dims)
        if edge_order not in (1, 2):
            raise RuntimeError('torch.gradient only supports edge_order=1 and edge_order=2.')
        dims = [wrap_dim(d, ndim) for d in dims]
        for d in dims:
            if dims.count(d) > 1:
                raise RuntimeError(f'dim {d} appears multiple times in the list of dims')
        for d in (dims if dim is not None else range(ndim)):
            if input._data.shape[d] < edge_order + 1:
                raise RuntimeError('torch.gradient expected each dimension size to be at least edge_order+1')
        return tuple(_gradient_along(input, d, step, edge_order) for d, step in zip(dims, steps))


def _gradient_along(x, d, step, edge_order):
    """gradient's result along dim ``d``: PyTorch's formulas, for a uniform ``step`` (a number)
    or the sample coordinates (a 1-dim tensor)."""
    def part(start, stop=None):
        n = x._data.shape[d]
        start = start + n if start < 0 else start
        stop = n if stop is None else stop + n if stop < 0 else stop
        return ops.narrow(x, d, start, stop - start)

    if not isinstance(step, Tensor):
        center = (part(2) - part(0, -2)) / step
        if edge_order == 1:
            prepend = (part(1, 2) - part(0, 1)) / step
            append = (part(-1) - part(-2, -1)) / step
        else:
            prepend = (part(0, 1) * -1.5 + part(1, 2) * 2 - part(2, 3) * 0.5) / step
            append = (part(-3, -2) * 0.5 + part(-2, -1) * -2 + part(-1) * 1.5) / step
        return ops.cat([prepend, center / 2, append], d)
    if step._data.ndim != 1:
        raise RuntimeError('torch.gradient expected each element of spacing to have one dimension, but got an element '
                           f'with {step._data.ndim} dimensions!')
    shape = [1] * x._data.ndim
    shape[d] = -1
    dx = ops.diff(step, 1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = ops.reshape(-dx2 / (dx1 * (dx1 + dx2)), shape)
    b = ops.reshape((dx2 - dx1) / (dx1 * dx2), shape)
    c = ops.reshape(dx1 / (dx2 * (dx1 + dx2)), shape)
    center = a * part(0, -2) + b * part(1, -1) + c * part(2)
    if edge_order == 1:
        prepend = (part(1, 2) - part(0, 1)) / dx[0]
        append = (part(-1) - part(-2, -1)) / dx[-1]
    else:
        a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = -dx[0] / (dx[1] * (dx[0] + dx[1]))
        prepend = a * part(0, 1) + b * part(1, 2) + c * part(2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        append = a * part(-3, -2) + b * part(-2, -1) + c * part(-1)
    return ops.cat([prepend, center, append], d)


# ---- dist, renorm ----------------------------------------------------------------------------------------

def _norm_derivative(x, norm, p, dims):
    """d ||x||_p / dx over ``dims`` (norm kept with those dims), 0 where the norm is 0, as
    PyTorch's norm_backward."""
    zero = norm._data == 0
    safe = norm + wrap(zero.astype(norm._data.dtype))
    keep = wrap(~zero)
    if p == 0:
        return x * 0
    if p == 1:
        return ops.sign(x)
    if p == 2:
        return x / safe * keep
    if p in (float('inf'), float('-inf')):
        hit = wrap((xp.abs(x._data) == norm._data).astype(x._data.dtype))
        return ops.sign(x) * hit / ops.sum(hit, dims, keepdim=True)
    return x * ops.pow(ops.abs(x), p - 2) / ops.pow(safe, p - 1) * keep


class Dist(Op):
    """d ||a - b||_p: the norm's derivative, for ``input`` and (negated) for ``other``, summed
    back to their shapes."""
    op, node, saved = 'dist', 'DistBackward0', ('self', 'other', 'result')
    tensors = ('input', 'other')
    __slots__ = ('p', 'self_shape', 'other_shape')

    def forward(input, other, p=2):
        """dist(input, other, p=2) -> Tensor

        The p-norm of input - other (broadcast). (PyTorch's function takes no out=.)"""
        with no_grad():
            difference = input - other  # (in their promoted dtype: a float and an integer tensor are fine)
            if not _float_kind(difference):
                raise RuntimeError(f'norm(): input dtype should be either floating point or complex. Got '
                                   f'{_DTYPE_LABEL.get(difference._data.dtype.name)} instead.')
            value = ops.vector_norm(difference, p)._data
        out, node = record(value, Dist, (input, other))
        if node is not None:
            node.p, node.self_shape, node.other_shape = float(p), input._data.shape, other._data.shape
            node.save(input, other, saved_output(out))
        return out

    def apply(self, grad):
        if self.p == 0:  # (no gradient, as PyTorch's undefined one: an input's .grad stays None)
            return None, None
        a, b, result = self.saved_tensors
        diff_ = a - b
        g = grad * _norm_derivative(diff_, result, self.p, tuple(range(diff_._data.ndim)))
        return (sum_to(g, self.self_shape) if self.next_functions[0][0] is not None else None,
                sum_to(-g, self.other_shape) if self.next_functions[1][0] is not None else None)


class Renorm(Op):
    """Where a slice is rescaled, the derivative of x * maxnorm / (||x|| + 1e-7); elsewhere the
    gradient itself."""
    op, node, saved = 'renorm', 'RenormBackward0', ('self',)
    inplace = True  # (Tensor.renorm_)
    parameter_types = {'dim': 'int'}
    out = out_rule('renorm')
    __slots__ = ('p', 'dim', 'maxnorm')

    def forward(input, p, dim, maxnorm):
        """renorm(input, p, dim, maxnorm, *, out=None) -> Tensor

        Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled to norm maxnorm (as
        PyTorch: by maxnorm / (norm + 1e-7))."""
        a = input._data
        if a.ndim < 2:
            raise RuntimeError(f'renorm: input needs at least 2 dimensions, got {a.ndim} dimensions')
        if p <= 0:
            raise RuntimeError('renorm: non-positive-norm not supported')
        if maxnorm < 0:
            raise RuntimeError(f'renorm: expected maxnorm to be >= 0 but got {maxnorm:g}')
        if a.dtype.kind not in 'fV':
            raise RuntimeError(f'linalg.vector_norm: Expected a floating point or complex tensor as input. Got '
                               f'{_DTYPE_LABEL.get(a.dtype.name)}')
        d = wrap_dim(dim, a.ndim)
        dims = tuple(i for i in range(a.ndim) if i != d)
        with no_grad():
            norm = ops.vector_norm(input, p, dims, keepdim=True)._data
        factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(a.dtype)
        out, node = record(c_order(a * factor), Renorm, (input,))  # (PyTorch's result is contiguous)
        if node is not None:
            node.p, node.dim, node.maxnorm = float(p), d, maxnorm
            node.save(input)
        return out

    def apply(self, grad):
        (x,) = self.saved_tensors
        dims = tuple(i for i in range(x._data.ndim) if i != self.dim)
        norm = ops.vector_norm(x, self.p, dims, keepdim=True)
        over = wrap(norm._data > self.maxnorm)
        denom = norm + 1e-7
        factor = self.maxnorm / denom
        # d/dx [x * maxnorm / (||x|| + eps)] = grad * factor - x-weighted grad * maxnorm / denom^2 * d||x||/dx
        slice_dot = ops.sum(grad * x, dims, keepdim=True)
        inner = grad * factor - _norm_derivative(x, norm, self.p, dims) * slice_dot * self.maxnorm / (denom * denom)
        return ops.where(over, inner, grad),
