"""Tensor.storage_offset, resize_, resize_as_, as_subclass, leafgrad.empty_strided, vdot's
VdotBackward0 and out=, and linalg.eig/eigvals' out= against torch."""
import warnings

import numpy as np
import pytest

from oracle import lg, raises_like, same_message, torch


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


VIEWS = {
    'whole': lambda T: T.arange(6.),
    'slice': lambda T: T.arange(6.)[2:],
    'element': lambda T: T.arange(6.)[1],
    'row_tail': lambda T: T.arange(6.).view(2, 3)[1, 1:],
    'transposed_row': lambda T: T.arange(6.).view(2, 3).t()[1],
    'view_of_view': lambda T: T.arange(12.).view(3, 4)[1:][:, 2:],
    'narrow': lambda T: T.arange(10.).narrow(0, 3, 4),
    'detached_view': lambda T: T.arange(6.)[3:].detach(),
    'select_column': lambda T: T.arange(12.).view(3, 4).select(1, 2),
}


@pytest.mark.parametrize('case', list(VIEWS))
def test_storage_offset_as_torch(case):
    assert VIEWS[case](lg).storage_offset() == VIEWS[case](torch).storage_offset()


RESIZES = {
    'shrink': lambda T: T.arange(6.).resize_(2, 2),
    'tuple': lambda T: T.arange(6.).resize_((3,)),
    'list': lambda T: T.arange(6.).resize_([1, 2]),
    'size': lambda T: T.arange(6.).resize_(T.Size([2, 3])),
    'same_shape_keeps_strides': lambda T: T.arange(6.).view(2, 3).t().resize_(3, 2),
    'view_keeps_its_storage': lambda T: (lambda x: (x.view(2, 3).t().resize_(2, 2), x)[1])(T.arange(6.)),
    'shrink_then_grow_keeps_storage': lambda T: T.arange(6.).resize_(2).resize_(6),
    'slice_shrinks_within_base': lambda T: (lambda x: (x[2:].resize_(2), x)[0])(T.arange(6.)),
    'slice_writes_reach_base': lambda T: (lambda x: (x[2:].resize_(2).fill_(-1), x)[1])(T.arange(6.)),
    'to_zero': lambda T: T.arange(6.).resize_(0),
    'int': lambda T: T.arange(6).resize_(5),
    'channels_last': lambda T: T.arange(120.).resize_(2, 3, 4, 5, memory_format=T.channels_last),
    'contiguous_format': lambda T: T.arange(4.).resize_(2, memory_format=T.contiguous_format),
    'as_': lambda T: T.arange(6.).resize_as_(T.zeros(2, 3)),
    'no_grad_result': lambda T: T.arange(6.).resize_(2, 3),
}


@pytest.mark.parametrize('case', list(RESIZES))
def test_resize_as_torch(case):
    out_l, out_t = RESIZES[case](lg), RESIZES[case](torch)
    assert tuple(out_l.shape) == tuple(out_t.shape) and out_l.stride() == out_t.stride()
    assert str(out_l.dtype).split('.')[1] == str(out_t.dtype).split('.')[1]
    np.testing.assert_array_equal(_np(out_l), _np(out_t))


def test_resize_returns_self_bumps_the_version_and_grows_with_the_elements_it_held():
    for T in (lg, torch):
        x = T.arange(6.)
        assert x.resize_(2, 3) is x and x._version == 1
        y = T.arange(3.).resize_(5)  # the storage grows: the first three elements kept
        np.testing.assert_array_equal(_np(y)[:3], [0, 1, 2])


RESIZE_ERRORS = {
    'leaf_requires_grad': lambda T: T.ones(3, requires_grad=True).resize_(2),
    'result_requires_grad': lambda T: (T.ones(3, requires_grad=True) * 2).resize_(2),
    'negative': lambda T: T.ones(3).resize_(-1),
    'float': lambda T: T.ones(3).resize_(2.0),
    'string': lambda T: T.ones(3).resize_('a'),
    'string_in_list': lambda T: T.ones(3).resize_([2, 'a']),
    'no_size': lambda T: T.ones(3).resize_(),
    'keyword': lambda T: T.ones(3).resize_(2, foo=1),
    'channels_last_rank': lambda T: T.ones(3).resize_(2, memory_format=T.channels_last),
    'preserve_format': lambda T: T.ones(3).resize_(2, memory_format=T.preserve_format),
    'as_requires_grad': lambda T: T.ones(3, requires_grad=True).resize_as_(T.ones(2)),
}


@pytest.mark.parametrize('case', list(RESIZE_ERRORS))
def test_resize_errors_as_torch(case):
    msgs = raises_like(lambda: RESIZE_ERRORS[case](lg), lambda: RESIZE_ERRORS[case](torch))
    assert same_message(*msgs), msgs


def test_resize_of_a_tensor_requiring_grad_is_refused_also_under_no_grad_and_leaves_it_as_it_was():
    x = lg.ones(3, requires_grad=True)
    with lg.no_grad(), pytest.raises(RuntimeError, match='cannot resize variables that require grad'):
        x.resize_(2)
    assert tuple(x.shape) == (3,) and x._version == 0


STRIDED = {
    'transposed': lambda T: T.empty_strided((2, 3), (1, 2)),
    'contiguous_int': lambda T: T.empty_strided((2, 3), (3, 1), dtype=T.int64),
    'requires_grad': lambda T: T.empty_strided([2, 3], [3, 1], requires_grad=True),
    'zero_size': lambda T: T.empty_strided((2, 0), (1, 2)),
    'scalar': lambda T: T.empty_strided((), ()),
    'broadcast': lambda T: T.empty_strided([3], [0]),
    'gaps': lambda T: T.empty_strided((2, 2), (4, 1), dtype=T.float64),
}


@pytest.mark.parametrize('case', list(STRIDED))
def test_empty_strided_as_torch(case):
    out_l, out_t = STRIDED[case](lg), STRIDED[case](torch)
    assert tuple(out_l.shape) == tuple(out_t.shape) and out_l.stride() == out_t.stride()
    assert str(out_l.dtype).split('.')[1] == str(out_t.dtype).split('.')[1]
    assert out_l.requires_grad == out_t.requires_grad and out_l.is_contiguous() == out_t.is_contiguous()
    if case == 'transposed':  # written, it holds what was written, laid out by its strides
        for out, T in ((out_l, lg), (out_t, torch)):
            out.copy_(T.arange(6.).view(2, 3))
        np.testing.assert_array_equal(_np(out_l), _np(out_t))
        assert out_l.t().is_contiguous() and out_t.t().is_contiguous()


STRIDED_ERRORS = {
    'ranks': lambda T: T.empty_strided((2, 3), (1,)),
    'negative_size': lambda T: T.empty_strided((2, -3), (1, 2)),
    'negative_stride': lambda T: T.empty_strided((2, 3), (1, -2)),
    'int_size': lambda T: T.empty_strided(2, 3),
    'int_grad': lambda T: T.empty_strided((2,), (1,), dtype=T.int64, requires_grad=True),
    'pin_memory': lambda T: T.empty_strided((2,), (1,), pin_memory=True),
}


@pytest.mark.parametrize('case', list(STRIDED_ERRORS))
def test_empty_strided_errors_as_torch(case):
    msgs = raises_like(lambda: STRIDED_ERRORS[case](lg), lambda: STRIDED_ERRORS[case](torch))
    assert same_message(*msgs), msgs


def test_as_subclass_as_torch():
    for T in (lg, torch):
        class Mine(T.Tensor):
            pass
        base = T.ones(2, requires_grad=True)
        s = base.as_subclass(Mine)
        assert type(s) is Mine and s.requires_grad and type(s.grad_fn).__name__ == 'AliasBackward0'
        (s * 3).sum().backward()
        np.testing.assert_array_equal(_np(base.grad), [3, 3])
        plain = T.ones(2)
        alias = plain.as_subclass(Mine)
        assert alias.grad_fn is None and not alias.requires_grad
        alias[0] = 5  # shares memory
        np.testing.assert_array_equal(_np(plain), [5, 1])
    msgs = raises_like(lambda: lg.ones(2).as_subclass(int), lambda: torch.ones(2).as_subclass(int))
    assert same_message(*msgs)


# ---- vdot: VdotBackward0 and out= ------------------------------------------------------------

@pytest.mark.parametrize('dtype', ['float32', 'float64', 'complex64', 'complex128'])
def test_vdot_node_gradients_as_torch(dtype):
    rng = np.random.RandomState(0)
    a, b = rng.standard_normal((2, 4)) + (1j * rng.standard_normal((2, 4)) if dtype.startswith('c') else 0)
    results = []
    for T in (lg, torch):
        x, y = T.tensor(a.astype(dtype), requires_grad=True), T.tensor(b.astype(dtype), requires_grad=True)
        out = T.vdot(x, y)
        assert type(out.grad_fn).__name__ == 'VdotBackward0'
        np.testing.assert_array_equal(_np(out.grad_fn._saved_self), _np(x))
        np.testing.assert_array_equal(_np(out.grad_fn._saved_other), _np(y))
        (out * (2 - 1j) if out.is_complex() else out * 2).real.backward() if out.is_complex() else (out * 2).backward()
        results.append((out, x.grad, y.grad))
    for u, v in zip(*results):
        assert str(u.dtype).split('.')[1] == str(v.dtype).split('.')[1]
        np.testing.assert_allclose(_np(u), _np(v), rtol=1e-5)


def test_vdot_gradcheck_and_gradgradcheck():
    rng = np.random.RandomState(1)
    for a in (rng.standard_normal((2, 3)), rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))):
        x, y = lg.tensor(a[0], requires_grad=True), lg.tensor(a[1], requires_grad=True)
        assert lg.autograd.gradcheck(lg.vdot, (x, y))
        assert lg.autograd.gradgradcheck(lg.vdot, (x, y))


VDOT_OUT = {
    'float': lambda T: T.vdot(T.ones(3), T.arange(3.), out=T.empty(())),
    'resized': lambda T: T.vdot(T.ones(3), T.arange(3.), out=T.empty(2)),
    'complex': lambda T: T.vdot(T.ones(2) * 1j, T.ones(2) + 0j, out=T.empty((), dtype=T.complex64)),
    'int': lambda T: T.vdot(T.arange(3), T.arange(3), out=T.empty((), dtype=T.int64)),
    'method': lambda T: T.ones(3).vdot(T.ones(3)),
}


@pytest.mark.parametrize('case', list(VDOT_OUT))
def test_vdot_out_as_torch(case):
    with warnings.catch_warnings(record=True) as caught_l:
        warnings.simplefilter('always')
        out_l = VDOT_OUT[case](lg)
    with warnings.catch_warnings(record=True) as caught_t:
        warnings.simplefilter('always')
        out_t = VDOT_OUT[case](torch)
    assert len(caught_l) == len(caught_t)
    assert tuple(out_l.shape) == tuple(out_t.shape)
    assert str(out_l.dtype).split('.')[1] == str(out_t.dtype).split('.')[1]
    np.testing.assert_array_equal(_np(out_l), _np(out_t))


VDOT_ERRORS = {
    'out_dtype': lambda T: T.vdot(T.ones(3), T.ones(3), out=T.empty((), dtype=T.float64)),
    'out_grad': lambda T: T.vdot(T.ones(3, requires_grad=True), T.ones(3), out=T.empty(())),
    'out_int_into_float': lambda T: T.vdot(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64), out=T.empty(())),
    'bool': lambda T: T.vdot(T.ones(3, dtype=T.bool), T.ones(3, dtype=T.bool)),
    'ranks': lambda T: T.vdot(T.ones(2, 2), T.ones(2)),
    'sizes': lambda T: T.vdot(T.ones(3), T.ones(4)),
    'dtypes': lambda T: T.vdot(T.ones(3), T.ones(3, dtype=T.float64)),
}


@pytest.mark.parametrize('case', list(VDOT_ERRORS))
def test_vdot_errors_as_torch(case):
    msgs = raises_like(lambda: VDOT_ERRORS[case](lg), lambda: VDOT_ERRORS[case](torch))
    assert same_message(*msgs), msgs


# ---- linalg.eig / eigvals out= ---------------------------------------------------------------

A = np.array([[2.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [0.0, 0.3, 1.0]], dtype=np.float32)


def test_eig_out_as_torch():
    for T in (lg, torch):
        L, V = T.empty(0, dtype=T.complex64), T.empty(0, dtype=T.complex64)
        result = T.linalg.eig(T.tensor(A), out=(L, V))
        assert type(result).__name__ == 'linalg_eig_out' and result[0] is L and result[1] is V
        w = T.empty(0, dtype=T.complex128)
        assert T.linalg.eigvals(T.tensor(A), out=w) is w and w.dtype == T.complex128
    (Ll, _), (Lt, _) = (lg.linalg.eig(lg.tensor(A)), torch.linalg.eig(torch.tensor(A)))
    np.testing.assert_allclose(_np(Ll), _np(Lt), rtol=1e-5)


EIG_OUT_ERRORS = {
    'real_eigenvalues': lambda T: T.linalg.eig(T.tensor(A), out=(T.empty(0), T.empty(0, dtype=T.complex64))),
    'real_eigenvectors': lambda T: T.linalg.eig(T.tensor(A), out=(T.empty(0, dtype=T.complex64), T.empty(0))),
    'not_a_tuple': lambda T: T.linalg.eig(T.tensor(A), out=T.empty(0)),
    'one': lambda T: T.linalg.eig(T.tensor(A), out=(T.empty(0, dtype=T.complex64),)),
    'requires_grad': lambda T: T.linalg.eig(T.tensor(A, requires_grad=True),
                                            out=(T.empty(0, dtype=T.complex64), T.empty(0, dtype=T.complex64))),
    'eigvals_real': lambda T: T.linalg.eigvals(T.tensor(A), out=T.empty(0)),
}


@pytest.mark.parametrize('case', list(EIG_OUT_ERRORS))
def test_eig_out_errors_as_torch(case):
    msgs = raises_like(lambda: EIG_OUT_ERRORS[case](lg), lambda: EIG_OUT_ERRORS[case](torch))
    assert same_message(*msgs), msgs


# ---- Tensor.storage(): the deprecated TypedStorage, the whole storage read as the tensor's dtype ----

def _storage_outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # (its deprecation warning: compared below)
            result = fn()
    except Exception as e:  # noqa: BLE001 (the type and message are compared)
        return type(e).__name__, str(e).replace('leafgrad', 'torch')
    return repr(result).replace('leafgrad', 'torch')


STORAGES = [
    lambda T, x: x.storage(),
    lambda T, x: type(x.storage()),
    lambda T, x: (x.storage().size(), len(x.storage()), x.storage().nbytes(), x.storage().element_size()),
    lambda T, x: (x.storage()[3], x.storage()[-1], x.storage().tolist(), list(x.storage())),
    lambda T, x: (x.storage().dtype, x.storage().device, x.storage().is_cuda, x.storage().is_shared(),
                  x.storage().is_pinned()),
    lambda T, x: x.storage().data_ptr() == x.data_ptr(),
    lambda T, x: (x[1].storage().size(), x[1].storage().data_ptr() == x.data_ptr(),
                  x[1, 1:].data_ptr() - x[1, 1:].storage().data_ptr()),
    lambda T, x: (x.storage().untyped().nbytes(), type(x.storage().untyped()),
                  x.storage()._untyped_storage.data_ptr() == x.data_ptr()),
    lambda T, x: (x.storage().type(), x.int().storage().type(), x.double().storage().type(),
                  x.storage().pickle_storage_type()),
    lambda T, x: (x.bool().storage().tolist(), x.cfloat().storage()[1], x.long().storage()[2]),
    lambda T, x: T.arange(3, dtype=T.int64).storage(),
    lambda T, x: (T.arange(3, dtype=T.bfloat16).storage()[2], T.arange(3, dtype=T.float16).storage().tolist()),
    lambda T, x: T.ones(0).storage(),
    lambda T, x: (x.untyped_storage(), x.untyped_storage().type(), T.ones(2, dtype=T.int16).untyped_storage()),
    lambda T, x: (lambda s: (s.__setitem__(0, 7), s.__setitem__(-1, T.tensor(2.)), s.__setitem__(slice(1, 3), 5),
                             x))(x.storage()),
    lambda T, x: (lambda s: (s.fill_(3) is s, x))(x.storage()),
    lambda T, x: (lambda s: (lambda c: (c.__setitem__(0, 100), x[0, 0], c[0], c.data_ptr() == s.data_ptr()))(
        s.clone()))(x.storage()),
    lambda T, x: x.storage().cpu().tolist(),
    lambda T, x: x.storage()[9],
    lambda T, x: x.storage()[-10],
    lambda T, x: x.storage()['a'],
    lambda T, x: x.storage()[1.0],
    lambda T, x: x.storage()[1:3],
    lambda T, x: x.storage().__setitem__(1, 'a'),
    lambda T, x: x.storage().__setitem__(20, 1.),
    lambda T, x: x.int().storage().__setitem__(1, 'a'),
    lambda T, x: x.storage().__setitem__(1, x.storage()),
    lambda T, x: x.storage(1),
    lambda T, x: (T.TypedStorage, T.UntypedStorage, isinstance(x.storage(), T.TypedStorage),
                  isinstance(x.untyped_storage(), T.UntypedStorage), T.storage.TypedStorage),
    lambda T, x: (lambda v: (v.storage()[0], v.storage().size()))(T.arange(12.)[3:].view(3, 3).t()),
]


@pytest.mark.parametrize('call', STORAGES)
def test_typed_storage_as_torch(call):
    import leafgrad.storage  # noqa: F401 (torch.storage is a module of torch's: leafgrad.storage of leafgrad's)
    outcomes = [_storage_outcome(lambda: call(m, m.arange(9.).reshape(3, 3))) for m in (lg, torch)]
    assert outcomes[0] == outcomes[1]


def test_storage_warns_once_as_torch():
    code = ('import warnings, {m}\nwarnings.simplefilter("always")\n'
            'with warnings.catch_warnings(record=True) as w:\n'
            '    warnings.simplefilter("always")\n'
            '    {m}.ones(2).storage(); {m}.ones(3).storage()\n'
            'print(len(w), w[0].category.__name__, str(w[0].message).split(" (Triggered")[0], w[0].filename)')
    import subprocess
    import sys
    runs = [subprocess.run([sys.executable, '-c', code.format(m=m)], capture_output=True, text=True).stdout
            for m in ('leafgrad', 'torch')]
    assert runs[0] == runs[1] and runs[0].startswith('1 UserWarning TypedStorage is deprecated')
