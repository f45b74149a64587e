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
max = _make('max', _VI)
min = _make('min', _VI)
median = _make('median', _VI)
nanmedian = _make('nanmedian', _VI)
mode = _make('mode', _VI)
kthvalue = _make('kthvalue', _VI)
sort = _make('sort', _VI)
topk = _make('topk', _VI)
cummax = _make('cummax', _VI)
cummin = _make('cummin', _VI)
aminmax = _make('aminmax', ('min', 'max'))
svd = _make('svd', ('U', 'S', 'V'))
qr = _make('qr', ('Q', 'R'))
linalg_svd = _make('linalg_svd', ('U', 'S', 'Vh'))
linalg_qr = _make('linalg_qr', ('Q', 'R'))
linalg_eigh = _make('linalg_eigh', ('eigenvalues', 'eigenvectors'))
linalg_eig = _make('linalg_eig', ('eigenvalues', 'eigenvectors'))
linalg_slogdet = _make('linalg_slogdet', ('sign', 'logabsdet'))
slogdet = _make('slogdet', ('sign', 'logabsdet'))
linalg_inv_ex = _make('linalg_inv_ex', ('inverse', 'info'))
linalg_cholesky_ex = _make('linalg_cholesky_ex', ('L', 'info'))
histogram = _make('histogram', ('hist', 'bin_edges'))
linalg_lstsq = _make('linalg_lstsq', ('solution', 'residuals', 'rank', 'singular_values'))
linalg_lu_factor = _make('linalg_lu_factor', ('LU', 'pivots'))
linalg_lu_factor_ex = _make('linalg_lu_factor_ex', ('LU', 'pivots', 'info'))
linalg_lu = _make('linalg_lu', ('P', 'L', 'U'))
lu_unpack = _make('lu_unpack', ('P', 'L', 'U'))
linalg_solve_ex = _make('linalg_solve_ex', ('result', 'info'))
triangular_solve = _make('triangular_solve', ('solution', 'cloned_coefficient'))
geqrf = _make('geqrf', ('a', 'tau'))
frexp = _make('frexp', ('mantissa', 'exponent'))

__all__ = ['max', 'min', 'median', 'nanmedian', 'mode', 'kthvalue', 'sort', 'topk', 'cummax', 'cummin', 'aminmax',
           'svd', 'qr', 'linalg_svd', 'linalg_qr', 'linalg_eigh', 'linalg_eig', 'linalg_slogdet', 'slogdet',
           'linalg_inv_ex', 'linalg_cholesky_ex', 'histogram', 'linalg_lstsq', 'linalg_lu_factor', 'linalg_lu_factor_ex',
           'linalg_lu', 'lu_unpack', 'linalg_solve_ex', 'triangular_solve', 'geqrf', 'frexp']

# What an op returns when it wrote out=(...): the same fields, named <name>_out (as PyTorch's
# torch.linalg.qr(A, out=(Q, R)) returns a torch.return_types.linalg_qr_out).
for _name in list(__all__):
    globals()[_name + '_out'] = _make(_name + '_out', globals()[_name]._fields)
    __all__.append(_name + '_out')
del _name
