"""``torch.linalg.ldl_factor``, ``ldl_factor_ex`` and ``ldl_solve`` (bound in leafgrad.linalg),
on the LAPACK-like kernels of ``_ldl_kernels.py``."""
import numpy as _np

from . import _ldl_kernels, backend as _backend, return_types as _return_types
from .autograd.grad_mode import no_grad as _no_grad
from .ops._op import CPP_NAMES as _CPP_NAMES
from .ops._util import NotImplementedNode as _NotImplementedNode, not_a_tensor as _not_a_tensor, record as _record, \
    wrap as _wrap
from .tensor import Tensor as _Tensor

__all__ = ['linalg_ldl_factor', 'linalg_ldl_factor_ex', 'linalg_ldl_solve']


_SCALAR_NAMES = {'float16': 'Half', 'bfloat16': 'BFloat16', 'bool': 'Bool', 'uint8': 'Byte', 'int8': 'Char',
                 'int16': 'Short', 'int32': 'Int', 'int64': 'Long', 'uint16': 'UInt16', 'uint32': 'UInt32',
                 'uint64': 'UInt64', 'float32': 'Float', 'float64': 'Double', 'complex64': 'ComplexFloat',
                 'complex128': 'ComplexDouble'}
# (PyTorch 2.13 reports a failed factorization with an internal assert: its message, as it reads)
_UNKNOWN = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp":1642, '
            'please report a bug to PyTorch. {}: Unknown error code: {}.')


def _scalar_name(dtype):
    return _SCALAR_NAMES.get(dtype.name, dtype.name)


def _check_square(a, fname):
    if a.ndim < 2:
        raise RuntimeError(f'{fname}: The input tensor A must have at least 2 dimensions.')
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f'{fname}: A must be batches of square matrices, but they are {a.shape[-2]} by '
                           f'{a.shape[-1]} matrices')


def _check_float(a, fname, kernel):
    if a.dtype.kind not in 'fcV' and a.dtype.name != 'bfloat16':
        raise RuntimeError(f'{fname}: Expected a floating point or complex tensor as input. Got '
                           f'{_scalar_name(a.dtype)}')
    if a.dtype.name in ('float16', 'bfloat16') or a.dtype.kind == 'V':
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(a.dtype)}\'')


def _without_derivative(data, op_name, inputs):
    """``data`` as a tensor that, when an input requires grad, requires grad with PyTorch's
    NotImplemented node (these ops have no derivative)."""
    out, node = _record(data, _NotImplementedNode, inputs)
    if node is not None:
        node.op_name = op_name
    return out




def _write_out(out, results):
    for o, r in zip(out, results):
        if o._data.dtype != r._data.dtype:
            raise RuntimeError(f'Expected out tensor to have dtype {_CPP_NAMES[r._data.dtype.name]}, '
                               f'but got {_CPP_NAMES[o._data.dtype.name]} instead')
    with _no_grad():
        for o, r in zip(out, results):
            o.resize_(r.shape).copy_(r)
    return out


def _gpu_of(*arrays):
    """The GPU the first of the arrays on one lives on, or None (NumPy and meta arrays: None)."""
    for a in arrays:
        if type(a) is not _np.ndarray and _backend.device_of(a).type == 'cuda':
            return _backend.device_of(a)
    return None


def _factor_batch(a, hermitian):
    batch = a.shape[:-2]
    n = a.shape[-1]
    LD = _np.zeros(a.shape, dtype=a.dtype)
    piv = _np.zeros(batch + (n,), dtype=_np.int32)
    info = _np.zeros(batch, dtype=_np.int32)
    for idx in _np.ndindex(*batch):
        LD[idx], piv[idx], info[idx] = _ldl_kernels.factor(a[idx], hermitian)
    return LD, piv, info


def linalg_ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """linalg.ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None): (LD, pivots, info).

    LAPACK's Bunch-Kaufman factorization A = P L D L^T P^T (L^H with ``hermitian``) of the lower
    triangle of each matrix, as PyTorch returns it: ``LD`` holds L below its diagonal (unit
    diagonal not stored) and the 1 x 1 and 2 x 2 blocks of D on and next to it, zeros above;
    ``pivots`` (int32, 1-based) name the row swapped with each row, a 2 x 2 block's two rows both
    ``-p``; ``info`` > 0 counts from 1 the first exactly zero pivot. No derivative, as in PyTorch.

    Agreement with PyTorch: the pivots and LD are those of LAPACK's unblocked algorithm (the one
    ``?sytrf`` runs for matrices up to its block size, 64); above that size, and where two pivot
    candidates tie exactly (matrices of small integers), rounding may make a different choice
    than PyTorch's LAPACK and then the factorization, still valid, differs.
    """
    fname = 'torch.linalg.ldl_factor_ex'
    A = input
    if not isinstance(A, _Tensor):
        raise _not_a_tensor('linalg_ldl_factor_ex', 'input', A, 1)
    a = A._data
    _check_square(a, fname)
    _check_float(a, fname, 'ldl_factor_kernel_cpu')
    gpu = _gpu_of(a)
    if gpu is not None:  # an explicit round trip through the host: the kernels are scalar Python on NumPy arrays
        a = _backend.to_numpy(a)  # (and CuPy has no Bunch-Kaufman factorization, LAPACK's ?sytrf)
    LD, piv, info = _factor_batch(_np.asarray(a), hermitian)
    if gpu is not None:
        LD, piv, info = (_backend.to_device(x, gpu) for x in (LD, piv, info))
    if check_errors and info.any():
        raise RuntimeError(_UNKNOWN.format(fname, int(info[info != 0].reshape(-1)[0])))
    results = (_without_derivative(LD, 'linalg_ldl_factor_ex', (A,)), _wrap(piv), _wrap(info))
    if out is not None:
        return _return_types.linalg_ldl_factor_ex_out(*_write_out(out, results))
    return _return_types.linalg_ldl_factor_ex(*results)


def linalg_ldl_factor(input, *, hermitian=False, out=None):
    """linalg.ldl_factor(A, *, hermitian=False, out=None): (LD, pivots), ``ldl_factor_ex``'s
    factorization; a matrix with a zero pivot raises (PyTorch's internal-assert message)."""
    A = input
    if not isinstance(A, _Tensor):
        raise _not_a_tensor('linalg_ldl_factor', 'input', A, 1)
    LD, piv, info = linalg_ldl_factor_ex(A, hermitian=hermitian)
    if info._data.any():
        raise RuntimeError(_UNKNOWN.format('torch.linalg.ldl_factor', int(info._data[info._data != 0].reshape(-1)[0])))
    if out is not None:
        return _return_types.linalg_ldl_factor_out(*_write_out(out, (LD, piv)))
    return _return_types.linalg_ldl_factor(LD, piv)


def linalg_ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """linalg.ldl_solve(LD, pivots, B, *, hermitian=False, out=None): X with A X = B, A given by
    ``ldl_factor``'s (LD, pivots) (LAPACK's ?sytrs/?hetrs); batch dimensions of LD and B
    broadcast. No derivative, as in PyTorch."""
    fname = 'torch.linalg.ldl_solve'
    for name, value, position in (('LD', LD, 1), ('pivots', pivots, 2), ('B', B, 3)):
        if not isinstance(value, _Tensor):
            raise _not_a_tensor('linalg_ldl_solve', name, value, position)
    ld, piv, b = LD._data, pivots._data, B._data
    _check_square(ld, fname)
    if piv.shape != ld.shape[:-1]:
        raise RuntimeError(f'{fname}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with '
                           f'shape {list(piv.shape)} instead')
    if piv.dtype.kind not in 'iu':
        raise RuntimeError(f'{fname}: Expected pivots to be integers. Got {_scalar_name(piv.dtype)}')
    if b.ndim < 2:
        raise IndexError(f'Dimension out of range (expected to be in range of [{-max(b.ndim, 1)}, '
                         f'{max(b.ndim, 1) - 1}], but got -2)')
    _check_float(ld, fname, 'ldl_solve_cpu')
    if b.dtype != ld.dtype:
        raise RuntimeError(f'Expected b and A to have the same dtype, but found b of type {_scalar_name(b.dtype)} '
                           f'and A of type {_scalar_name(ld.dtype)} instead.')
    if b.shape[-2] != ld.shape[-1]:
        raise RuntimeError(f'Incompatible matrix sizes for {fname}: each A matrix is {ld.shape[-2]} by '
                           f'{ld.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}')
    if piv.size and (_np.abs(piv) > ld.shape[-1]).any():
        raise RuntimeError('Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you properly pass '
                           'the result of ldl_factor?')
    if piv.size and (_np.abs(piv) < 1).any():
        raise RuntimeError('Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass the '
                           'result of ldl_factor?')
    gpu = _gpu_of(ld, piv, b)
    if gpu is not None:  # an explicit round trip through the host, as ldl_factor_ex's (CuPy has no ?sytrs)
        ld, piv, b = (_backend.to_numpy(x) for x in (ld, piv, b))
    batch = _np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld_b = _np.broadcast_to(ld, batch + ld.shape[-2:])
    piv_b = _np.broadcast_to(piv, batch + piv.shape[-1:])
    X = _np.array(_np.broadcast_to(b, batch + b.shape[-2:]), dtype=b.dtype, copy=True)
    with _np.errstate(all='ignore'):
        for idx in _np.ndindex(*batch):
            X[idx] = _ldl_kernels.solve(ld_b[idx], piv_b[idx], X[idx], hermitian)
    if gpu is not None:
        X = _backend.to_device(X, gpu)
    result = _without_derivative(X, 'linalg_ldl_solve', (LD, B))
    if out is not None:
        return _write_out((out,), (result,))[0]
    return result
