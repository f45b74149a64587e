"""The named tuples some ops return (``values, indices = x.max(1)``), printed as PyTorch's
``torch.return_types.*`` with leafgrad's name."""


def _make(name, fields):
    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], (tuple, list)) and len(args[0]) == len(fields):
            args = tuple(args[0])
        values = list(args) + [kwargs[f] for f in fields[len(args):]]
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ',\n'.join(f'{f}={v!r}' for f, v in zip(fields, self))
        return f'leafgrad.return_types.{name}(\n{body})'

    def __reduce__(self):
        return (type(self), tuple(self))

    namespace = {'__new__': __new__, '__repr__': __repr__, '__reduce__': __reduce__, '__slots__': (),
                 '_fields': fields, 'n_fields': len(fields), 'n_sequence_fields': len(fields),
                 '__module__': 'leafgrad.return_types'}
    for i, f in enumerate(fields):
        namespace[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    return type(name, (tuple,), namespace)


_VI = ('values', 'indices')
# {name: fields}: each named tuple's type is made when first read (module __getattr__ below), as
# making the 62 of them took ~1 ms of `import leafgrad`
_FIELDS = {
    'max': _VI,
    'min': _VI,
    'median': _VI,
    'nanmedian': _VI,
    'mode': _VI,
    'kthvalue': _VI,
    'sort': _VI,
    'topk': _VI,
    'cummax': _VI,
    'cummin': _VI,
    'aminmax': ('min', 'max'),
    'svd': ('U', 'S', 'V'),
    'qr': ('Q', 'R'),
    'linalg_svd': ('U', 'S', 'Vh'),
    'linalg_qr': ('Q', 'R'),
    'linalg_eigh': ('eigenvalues', 'eigenvectors'),
    'linalg_eig': ('eigenvalues', 'eigenvectors'),
    'linalg_slogdet': ('sign', 'logabsdet'),
    'slogdet': ('sign', 'logabsdet'),
    'linalg_inv_ex': ('inverse', 'info'),
    'linalg_cholesky_ex': ('L', 'info'),
    'histogram': ('hist', 'bin_edges'),
    'histogramdd': ('hist', 'bin_edges'),
    'linalg_lstsq': ('solution', 'residuals', 'rank', 'singular_values'),
    'linalg_lu_factor': ('LU', 'pivots'),
    'linalg_lu_factor_ex': ('LU', 'pivots', 'info'),
    'linalg_lu': ('P', 'L', 'U'),
    'linalg_ldl_factor': ('LD', 'pivots'),
    'linalg_ldl_factor_ex': ('LD', 'pivots', 'info'),
    'lu_unpack': ('P', 'L', 'U'),
    'linalg_solve_ex': ('result', 'info'),
    'triangular_solve': ('solution', 'cloned_coefficient'),
    'geqrf': ('a', 'tau'),
    'frexp': ('mantissa', 'exponent'),
}

__all__ = ['max', 'min', 'median', 'nanmedian', 'mode', 'kthvalue', 'sort', 'topk', 'cummax', 'cummin', 'aminmax',
           'svd', 'qr', 'linalg_svd', 'linalg_qr', 'linalg_eigh', 'linalg_eig', 'linalg_slogdet', 'slogdet',
           'linalg_inv_ex', 'linalg_cholesky_ex', 'histogram', 'histogramdd', 'linalg_lstsq', 'linalg_lu_factor', 'linalg_lu_factor_ex',
           'linalg_lu', 'linalg_ldl_factor', 'linalg_ldl_factor_ex', 'lu_unpack', 'linalg_solve_ex', 'triangular_solve', 'geqrf', 'frexp']

# What an op returns when it wrote out=(...): the same fields, named <name>_out (as PyTorch's
# torch.linalg.qr(A, out=(Q, R)) returns a torch.return_types.linalg_qr_out).
__all__ += [name + '_out' for name in __all__]


def __getattr__(name):
    fields = _FIELDS.get(name[:-4] if name.endswith('_out') else name)
    if fields is None or name.startswith('_'):
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
    # (setdefault: two threads that make one at once both get the first made)
    return globals().setdefault(name, _make(name, fields))


def __dir__():
    return sorted(set(globals()) | set(__all__))
