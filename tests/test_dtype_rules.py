"""Bool, integer and bfloat16 operands where PyTorch's kernels and type promotion decide, against
PyTorch's: division with rounding, remainders and powers of bools are refused (floor division
of bools had computed, of two bool tensors had raised 'ZeroDivisionError', and a bool power
had given int8); subtracting a Python bool from a bool tensor gets the 'two bool tensors'
message; addcmul's value is a number of the tensors' dtype (2.5 is 2 for integers: the
result had been float64); lerp checks a weight's dtype before its kernel's and names the
kernel of a tensor weight; a bfloat16 tensor with a complex number is complex64 (it had been
refused: there is no complex bfloat16, and PyTorch's complex dtype for it is complex64); trace,
bincount and kthvalue of bools are refused (they had computed), histc of bfloat16 is counted (it
had been refused)."""
import pytest

torch = pytest.importorskip('torch')
import leafgrad as lg  # noqa: E402


def _cases(T):
    b, i = T.tensor([True, False]), T.tensor([1, 2])
    bf = T.tensor([1.5, -2.0], dtype=T.bfloat16)
    return [
        lambda: T.div(b, b, rounding_mode='trunc'), lambda: T.div(b, True, rounding_mode='floor'), lambda: T.remainder(b, b),
        lambda: T.fmod(b, True), lambda: b % True, lambda: b // b, lambda: b // True, lambda: b.clone().floor_divide_(True),
        lambda: b // 2, lambda: 2 // b, lambda: b % 2, lambda: b ** b, lambda: b ** 2, lambda: 2 ** b, lambda: b.clone().pow_(b),
        lambda: T.pow(True, b), lambda: b ** True, lambda: b ** 2.0, lambda: T.float_power(b, b),
        lambda: b - True, lambda: True - b, lambda: b - b, lambda: b - 1, lambda: 1 - b, lambda: i - True, lambda: True - i,
        lambda: b.clone().sub_(True), lambda: T.sub(b, True), lambda: T.rsub(b, True), lambda: b - 1.5,
        lambda: i.clone().addcmul_(i, i, value=2.5), lambda: T.addcmul(i, i, i, value=2.5), lambda: T.addcmul(i, i, i, value=-2.7),
        lambda: T.addcmul(i, i, i, value=True), lambda: T.addcmul(i.float(), i, i, value=2.5),
        lambda: i.clone().lerp_(i, i), lambda: i.clone().lerp_(i, 0.5), lambda: T.lerp(i, T.ones(2), 0.5),
        lambda: i.clone().lerp_(T.ones_like(i), T.tensor([0.5, 0.5])), lambda: i.clone().lerp_(T.ones_like(i), T.tensor(2.0, dtype=T.float64)),
        lambda: b.clone().lerp_(T.ones_like(b), T.tensor([True, False])),
        lambda: bf * 1j, lambda: bf + (1 + 2j), lambda: bf / 1j, lambda: bf * T.tensor([1j, 2], dtype=T.complex64),
        lambda: bf * T.tensor(1j, dtype=T.complex128), lambda: T.result_type(bf, 1j), lambda: T.promote_types(T.bfloat16, T.complex64),
        lambda: bf.clone().add_(1j),
        lambda: T.trace(T.ones(2, 2, dtype=T.bool)), lambda: T.histc(b), lambda: T.bincount(b), lambda: b.kthvalue(1),
        lambda: T.histc(T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.bfloat16), bins=5), lambda: T.histc(i), lambda: i.kthvalue(1),
    ]


def _outcome(T, k):
    try:
        r = _cases(T)[k]()
        return ('ran', str(r).split('.')[-1]) if not hasattr(r, 'tolist') else \
            ('ran', str(r.dtype).split('.')[-1], [complex(v) if isinstance(v, complex) else v for v in r.tolist()])
    except Exception as e:
        return type(e).__name__, str(e).replace('leafgrad', 'torch')


@pytest.mark.parametrize('k', range(len(_cases(lg))))
def test_dtype_rule_as_pytorch(k):
    assert _outcome(lg, k) == _outcome(torch, k)


def test_bfloat16_times_a_complex_number_differentiates_as_pytorch():
    def grad(T):
        b = T.tensor([1.5, -2.0], dtype=T.bfloat16, requires_grad=True)
        (b * (1 + 2j)).abs().sum().backward()
        return str(b.grad.dtype).split('.')[-1], b.grad.tolist()
    assert grad(lg) == grad(torch)
