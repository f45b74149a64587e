"""``leafgrad.finfo`` and ``leafgrad.iinfo``: the numerical limits of a dtype, as PyTorch gives them.

>>> import leafgrad
>>> leafgrad.finfo(leafgrad.float16)
finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)
>>> leafgrad.iinfo(leafgrad.uint8).max
255
"""
from . import backend

_np = backend.numpy


def _dtype_argument(fn_name, args, kwargs):
    """The one dtype argument of finfo/iinfo, accepted as PyTorch's parser accepts it."""
    if len(args) + len(kwargs) > 1 or (kwargs and 'type' not in kwargs):
        got = ', '.join([_type_name(a) for a in args] + [f'{k}={_type_name(v)}' for k, v in kwargs.items()])
        raise TypeError(f'{fn_name}() received an invalid combination of arguments - got ({got}), but expected one '
                        f'of:\n * (leafgrad.dtype type)\n * ()\n')
    value = args[0] if args else kwargs.get('type')
    if value is float:
        return backend.float64
    if value is int:
        return backend.int64
    if value is bool:
        return backend.bool_
    if type(value) is not backend.dtype:
        raise TypeError(f"{fn_name}(): argument 'type' (position 1) must be leafgrad.dtype, not "
                        f'{type(value).__name__}')
    return value


def _type_name(value):
    return 'leafgrad.dtype' if type(value) is backend.dtype else type(value).__name__


class _Info:
    """Read-only attributes compared by value; unhashable, as PyTorch's are."""
    __slots__ = ()

    def __hash__(self):
        raise TypeError(f"unhashable type: 'leafgrad.{type(self).__name__}'")

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'leafgrad.{type(self).__name__}' objects is not writable")

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __str__(self):
        return self.__repr__()


class finfo(_Info):
    """Machine limits of a floating-point dtype (the default dtype when called without one).

    ``bits``, ``eps`` (the gap between 1 and the next number), ``max``, ``min``, ``tiny`` and
    ``smallest_normal`` (the smallest positive normal number), ``resolution`` (10 to the minus
    the decimal precision) as Python numbers; ``dtype`` is the dtype's name.
    """
    __module__ = 'leafgrad'
    __slots__ = ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution', 'dtype')

    def __init__(self, *args, **kwargs):
        if not args and not kwargs:
            d = backend.get_default_dtype()
        else:
            d = _dtype_argument('finfo', args, kwargs)
        if d.is_complex:  # (a complex dtype's limits are its parts': float32's for complex64)
            d = d.to_real()
        if not d.is_floating_point:
            raise TypeError("leafgrad.finfo() requires a floating point input type. Use leafgrad.iinfo to handle "
                            "'leafgrad.finfo'")
        info = backend.np_finfo(d.np)
        fields = {'bits': info.bits, 'eps': float(info.eps), 'max': float(info.max), 'min': float(info.min),
                  'tiny': float(info.smallest_normal), 'smallest_normal': float(info.smallest_normal),
                  'resolution': 10.0 ** -info.precision, 'dtype': d.name}
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __repr__(self):
        return (f'finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, '
                f'smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})')


class iinfo(_Info):
    """Machine limits of an integer dtype: ``bits``, ``min``, ``max`` (Python ints) and ``dtype``'s name."""
    __module__ = 'leafgrad'
    __slots__ = ('bits', 'min', 'max', 'dtype')

    def __init__(self, *args, **kwargs):
        if not args and not kwargs:
            raise TypeError('iinfo() missing 1 required positional arguments: "type"')
        d = _dtype_argument('iinfo', args, kwargs)
        if d is backend.bool_:
            raise TypeError('leafgrad.bool is not supported by leafgrad.iinfo')
        if d.is_floating_point or d.is_complex:
            raise TypeError("leafgrad.iinfo() requires an integer input type. Use leafgrad.finfo to handle "
                            "'leafgrad.iinfo'")
        info = _np.iinfo(d.np)
        for name, value in (('bits', info.bits), ('min', int(info.min)), ('max', int(info.max)), ('dtype', d.name)):
            object.__setattr__(self, name, value)

    def __repr__(self):
        return f'iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})'
