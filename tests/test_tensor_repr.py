"""leafgrad._tensor_str must print exactly what torch prints."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from leafgrad import _tensor_str as ts  # noqa: E402

nan, inf = math.nan, math.inf


@pytest.fixture(autouse=True)
def default_printoptions():
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    ts.set_printoptions(profile="default")


def set_both(**kwargs):
    torch.set_printoptions(**kwargs)
    ts.set_printoptions(**kwargs)


def expected(t):
    return repr(t).replace("torch.", "leafgrad.")


def ours(t):
    grad_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
    return ts.tensor_repr(
        t.detach().numpy(), requires_grad=t.requires_grad, grad_fn_name=grad_fn
    )


def check(t):
    assert ours(t) == expected(t)


def tt(data, dtype=None):
    return torch.tensor(data, dtype=dtype)


CASES = {
    # 0-d
    "scalar_float": tt(3.0),
    "scalar_frac": tt(-2.5),
    "scalar_int": tt(7),
    "scalar_bool": tt(True),
    "scalar_nan": tt(nan),
    "scalar_neg_zero": tt(-0.0),
    "scalar_tiny": tt(1e-7),
    "scalar_f64": tt(1.25, torch.float64),
    # 1-d
    "int_valued_floats": tt([20.0, 20.0, 20.0]),
    "floats": tt([1.5, -2.25, 3.125]),
    "negatives": tt([-1.0, -22.0, 333.0]),
    "ints": tt([1, -20, 300]),
    "bools": tt([True, False, True]),
    "all_zero": torch.zeros(4),
    "neg_zero": tt([0.0, -0.0, 1.0]),
    "ratio_gt_1000": tt([1.0, 1500.0]),
    "max_gt_1e8": tt([2e8, 3e8]),
    "min_lt_1e-4": tt([1e-5, 2e-5]),
    "int_sci": tt([1.0, 1e9]),
    "nan_inf_finite": tt([nan, inf, -inf, 1.5, -2.0]),
    "nan_inf_int_mode": tt([nan, inf, 2.0]),
    "nan_inf_sci": tt([1e-6, inf, nan, 1.0]),
    "only_nonfinite": tt([nan, inf, -inf]),
    "zero_and_nan": tt([0.0, nan]),
    "precision_rounding": tt([0.00005, 0.12345678, 1.99999]),
    "wide_row_wraps": torch.linspace(-3, 3, 30),
    "wide_int_row": torch.arange(60) * 1000,
    # dtypes
    "float64": tt([1.0, 2.0], torch.float64),
    "float16": tt([0.1, 2.0, 65504.0], torch.float16),
    "float16_sci": tt([1e-3, 6e4], torch.float16),
    "int32": tt([1, 2], torch.int32),
    "int8": tt([-128, 127], torch.int8),
    "int16": tt([3, -4], torch.int16),
    "uint8": tt([0, 255], torch.uint8),
    # n-d
    "2d": torch.arange(6.0).reshape(2, 3) / 7,
    "3d": torch.arange(24).reshape(2, 3, 4) - 10,
    "4d": torch.arange(48.0).reshape(2, 2, 3, 4) * 1.5,
    "2d_bool": torch.arange(6).reshape(3, 2) % 2 == 0,
    "2d_wrap": torch.arange(60.0).reshape(2, 30) + 0.5,
    # empty
    "empty_1d": torch.empty(0),
    "empty_2d": torch.empty(0, 3),
    "empty_3d": torch.empty(2, 0, 4),
    "empty_int": torch.empty(0, dtype=torch.int64),
    "empty_bool": torch.empty(3, 0, dtype=torch.bool),
    "empty_f64": torch.empty(0, dtype=torch.float64),
    "empty_uint8": torch.empty(0, 2, dtype=torch.uint8),
    # summarised
    "big_1d": torch.arange(2000.0),
    "big_1d_int": torch.arange(2000),
    "big_2d": torch.arange(10000.0).reshape(100, 100) / 3,
    "big_3x500": torch.arange(1500).reshape(3, 500),
    "big_3d": torch.arange(8000.0).reshape(20, 20, 20) - 4000,
    "big_sci": torch.logspace(-6, 6, 1200),
    # "dtype=leafgrad.float64" no longer fits on this line, but torch's shorter
    # name does: the wrap must still follow torch.
    "big_f64": torch.arange(1001, dtype=torch.float64),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    check(CASES[name])


def test_requires_grad_suffix():
    check(tt([1.0, 2.0]).requires_grad_())
    check(tt(3.0, torch.float64).requires_grad_())
    check(torch.empty(0, 2).requires_grad_())


def test_grad_fn_suffix():
    x = tt([1.0, 2.0], torch.float64).requires_grad_()
    check(x * 2)
    check((x * 2).sum())
    check(torch.arange(2000.0).requires_grad_() + 1)


def test_suffix_wraps_to_new_line():
    # The last row is long enough that ", grad_fn=<...>" does not fit.
    x = (torch.arange(14.0) + 0.1234).requires_grad_()
    y = x * 1.0
    assert "\n" in expected(y)
    check(y)
    check(tt([1.0, 2.0], torch.float64).requires_grad_() + torch.linspace(0, 1, 2))
    check((torch.arange(9.0, dtype=torch.float64) / 3).requires_grad_())
    # No newline in the body at all: torch's length measure is two chars long.
    check(torch.arange(8.0, dtype=torch.float16).requires_grad_() * 1.5)


def test_device_suffix():
    a = np.array([1.0, 2.0], dtype=np.float64)
    assert (
        ts.tensor_repr(a, device="cuda:0", requires_grad=True)
        == "tensor([1., 2.], device='cuda:0', dtype=leafgrad.float64, requires_grad=True)"
    )
    assert ts.tensor_repr(a.astype(np.float32), device="cpu") == "tensor([1., 2.])"


def test_tensor_str_equals_repr():
    t = torch.arange(12.0).reshape(3, 4)
    assert ts.tensor_str(t.numpy()) == str(t)


@pytest.mark.parametrize(
    "opts",
    [
        {"precision": 2},
        {"precision": 0},
        {"precision": 8},
        {"sci_mode": False},
        {"sci_mode": True},
        {"threshold": 5},
        {"threshold": 10, "edgeitems": 1},
        {"edgeitems": 0, "threshold": 3},
        {"linewidth": 40},
        {"profile": "full"},
        {"profile": "short"},
        {"profile": "short", "precision": 6},
    ],
    ids=repr,
)
def test_printoptions(opts):
    set_both(**opts)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    for t in [
        tt([1.12345, -2.5, 1e-5]),
        tt([1.0, 1500.0]),
        torch.arange(2000.0) / 7,
        torch.arange(1500).reshape(3, 500),
        torch.arange(30.0).reshape(2, 3, 5),
        tt(3.14159),
        tt([True, False] * 4),
        torch.empty(2, 0),
    ]:
        check(t)


def test_unknown_profile_and_sci_reset_like_torch():
    set_both(sci_mode=True, precision=3)
    set_both(profile="no-such-profile")
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()


DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_]


@st.composite
def arrays(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=7))
    if dtype.kind == "f":
        width = dtype.itemsize * 8
        # Magnitudes that hit each notation rule, rounded to the dtype so
        # hypothesis accepts them (1e9 becomes inf in float16, which is fine).
        specials = [0.0, -0.0, 0.5, 1e-5, 123.456, 1e9, -3e4]
        with np.errstate(over="ignore"):
            specials = [float(dtype.type(v)) for v in specials]
        elements = st.one_of(
            st.floats(width=width),
            st.integers(-1000, 1000).map(float),
            st.sampled_from(specials),
        )
    else:
        elements = hnp.from_dtype(dtype)
    return draw(hnp.arrays(dtype, shape, elements=elements))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    array=arrays(),
    precision=st.integers(0, 8),
    threshold=st.sampled_from([1000, 5, 40, 200]),
    edgeitems=st.integers(0, 4),
    linewidth=st.integers(10, 120),
    sci_mode=st.sampled_from([None, None, True, False]),
    grad=st.sampled_from([None, "requires_grad", "MulBackward0"]),
)
def test_random_against_torch(array, precision, threshold, edgeitems, linewidth, sci_mode, grad):
    opts = dict(
        precision=precision,
        threshold=threshold,
        edgeitems=edgeitems,
        linewidth=linewidth,
        sci_mode=sci_mode,
    )
    set_both(**opts)
    t = torch.from_numpy(array.copy())
    want = expected(t)
    if grad is not None:
        # Rebuild torch's suffix handling by going through a real graph.
        if array.dtype.kind != "f":
            grad = None
        elif grad == "requires_grad":
            t = t.clone().requires_grad_()
            want = expected(t)
        else:
            t = t.clone().requires_grad_() * 1
            want = expected(t)
    got = ts.tensor_repr(
        array,
        requires_grad=grad is not None,
        grad_fn_name=grad if grad == "MulBackward0" else None,
    )
    assert got == want


def test_repr_hides_the_default_dtype_after_set_default_dtype():
    import leafgrad as lg
    try:
        for t in (lg, torch):
            t.set_default_dtype(t.float64)
        for make in (lambda t: t.tensor([1.5]), lambda t: t.tensor([1.5], dtype=t.float32), lambda t: t.tensor([1, 2]),
                     lambda t: t.tensor([True]), lambda t: t.tensor([], dtype=t.float32), lambda t: t.zeros(0),
                     lambda t: t.tensor([1], dtype=t.int32)):
            assert repr(make(lg)).replace('leafgrad', 'torch') == repr(make(torch))
    finally:
        for t in (lg, torch):
            t.set_default_dtype(t.float32)
