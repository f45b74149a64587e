"""Tensor printing that matches PyTorch's ``repr`` byte for byte.

The rules follow ``torch/_tensor_str.py`` (PyTorch 2.13): one ``_Formatter``
per tensor decides between integer, fixed-point and scientific notation and a
common column width; rows are wrapped at ``linewidth``; tensors with more than
``threshold`` elements are summarised with ``...``; suffixes such as
``dtype=`` and ``grad_fn=`` are appended by ``_add_suffixes``.  Quirks of the
original are reproduced on purpose, since the goal is identical output.

Only NumPy arrays are handled here, so the module has no dependency on the
rest of leafgrad.
"""

import math

import numpy as np

__all__ = ["tensor_repr", "tensor_str", "sparse_repr", "set_printoptions", "get_printoptions"]

_PREFIX = "tensor("
# torch prints no dtype suffix for its default dtypes (the default float dtype,
# float32 unless set otherwise, int64 and bool); an empty tensor shows every
# dtype except the default float one.
_DEFAULT_FLOAT = np.dtype(np.float32)
_INT64, _BOOL = np.dtype(np.int64), np.dtype(np.bool_)
_FLOAT64, _COMPLEX64, _COMPLEX128 = np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128)

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
_PROFILES = {
    "default": _DEFAULTS,
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

_opts = dict(_DEFAULTS, sci_mode=None)


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set printing options; same semantics as ``torch.set_printoptions``.

    As in torch, an unknown ``profile`` is ignored and ``sci_mode`` is reset
    to ``None`` (automatic) whenever it is not passed.
    """
    if profile in _PROFILES:
        _opts.update(_PROFILES[profile])
    for key, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            _opts[key] = value
    _opts["sci_mode"] = sci_mode


def get_printoptions():
    """Current options as a dict that can be passed back to set_printoptions."""
    return dict(_opts)


class _Formatter:
    """Chooses one notation and width for all elements that will be shown."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        prec = _opts["precision"]

        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return

        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        # torch compares in double; in float16 max/min could overflow.
        mags = np.abs(finite).astype(np.float64)
        lo, hi = mags.min(), mags.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if _opts["sci_mode"] is None:
            with np.errstate(over="ignore"):  # an infinite ratio is just "big"
                ratio = hi / lo
            self.sci_mode = bool(ratio > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = _opts["sci_mode"]

        # Only distinct values can differ in width; this keeps big tensors fast.
        for v in np.unique(finite).tolist():
            if self.sci_mode:
                width = len(f"{v:.{prec}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1  # room for the trailing '.'
            else:
                width = len(f"{v:.{prec}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value):
        prec = _opts["precision"]
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{prec}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            # The '.' marks a float tensor; nan/inf need no marker.
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{prec}f}"
        return text.rjust(self.max_width)


def _summarized(array):
    """The elements shown after summarisation, as ``get_summarized_data``."""
    edge = _opts["edgeitems"]
    if array.ndim == 0:
        return array
    if not edge:
        # torch returns everything for 1-d and nothing for higher dims; either
        # way only '...' is printed, so the formatter never sees them.
        return array if array.ndim == 1 else array[(slice(0, 0),) * array.ndim]
    index = []
    for n in array.shape:
        if n > 2 * edge:
            index.append(np.r_[0:edge, n - edge : n])
        else:
            index.append(np.arange(n))
    return array[np.ix_(*index)]


class _ComplexFormatter:
    """Two formatters, one for the real parts and one for the imaginary parts, as torch prints a
    complex tensor: ``1.5000+2.0000j``; each part keeps its own notation and width."""

    def __init__(self, values):
        self.real = _Formatter(values.real)
        self.imag = _Formatter(values.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # (the 'j')

    def format(self, value):
        value = complex(value)
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        # a negative part (or -0.0, nan with sign...) brings its own sign
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(array, indent, summarize, fmt):
    edge = _opts["edgeitems"]
    # Each element takes its width plus ", ".
    per_line = max(1, math.floor((_opts["linewidth"] - indent) / (fmt.max_width + 2)))
    if summarize and not edge:
        data = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        data = (
            [fmt.format(v) for v in array[:edge].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in array[-edge:].tolist()]
        )
    else:
        data = [fmt.format(v) for v in array.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(array, indent, summarize, fmt):
    if array.ndim == 0:
        return fmt.format(array.item())
    if array.ndim == 1:
        return _vector_str(array, indent, summarize, fmt)
    edge = _opts["edgeitems"]
    n = array.shape[0]
    if summarize and n > 2 * edge:
        rows = list(range(edge)), list(range(n - edge, n))
        slices = (
            [_nested_str(array[i], indent + 1, summarize, fmt) for i in rows[0]]
            + ["..."]
            + [_nested_str(array[i], indent + 1, summarize, fmt) for i in rows[1]]
        )
    else:
        slices = [_nested_str(array[i], indent + 1, summarize, fmt) for i in range(n)]
    # One blank line between 2-d blocks, two between 3-d blocks, and so on.
    sep = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(slices) + "]"


def _body_str(array, indent):
    if array.size == 0:
        return "[]"
    summarize = array.size > _opts["threshold"]
    formatter = _ComplexFormatter if array.dtype.kind == "c" else _Formatter
    fmt = formatter(_summarized(array) if summarize else array)
    return _nested_str(array, indent, summarize, fmt)


def _add_suffixes(text, suffixes, indent, force_newline=False):
    """Append ``(suffix, width)`` pairs, wrapping where torch would (``force_newline``: the first
    on a line of its own, as for a sparse tensor)."""
    # torch's measure is two too long when there is no newline (rfind gives
    # -1); kept because it decides where suffixes wrap.
    last_line_len = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix, width in suffixes:
        if force_newline or last_line_len + width + 2 > _opts["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + width
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += width + 2
    parts.append(")")
    return "".join(parts)


def _plain(suffix):
    return (suffix, len(suffix))


def _dtype_suffix(dtype):
    # Wrapping is decided with torch's spelling ("torch.float64"), so the
    # layout is torch's own and only the module name in the text differs.
    return ("dtype=leafgrad." + dtype.name, len("dtype=torch." + dtype.name))


def tensor_repr(array, *, device=None, requires_grad=False, grad_fn_name=None, default_float=_DEFAULT_FLOAT,
                tangent=None):
    """``repr`` of a tensor holding ``array``, exactly as torch prints it (``default_float``: the
    NumPy dtype of the default float dtype, whose name is not printed; ``tangent``: the text of a
    dual tensor's tangent, formatted as torch formats it)."""
    if type(array).__name__ == "MetaArray":  # no values: '...', its size, and its dtype unless the default
        body, suffixes = "...", [_plain("device='meta'"), _plain(f"size={tuple(array.shape)}")]
        if array.dtype != default_float:
            suffixes.append(_dtype_suffix(array.dtype))
    else:
        body, suffixes = _values_str(np.asarray(array), device, default_float)
    indent = len(_PREFIX)
    if grad_fn_name is not None:
        suffixes.append(_plain(f"grad_fn=<{grad_fn_name}>"))
    elif requires_grad:
        suffixes.append(_plain("requires_grad=True"))
    if tangent is not None:
        suffix = "tangent=" + tangent
        suffixes.append((suffix, len(suffix.replace("leafgrad.", "torch."))))
    return _add_suffixes(_PREFIX + body, suffixes, indent)


def sparse_repr(indices, values, shape, *, requires_grad=False, grad_fn_name=None, default_float=_DEFAULT_FLOAT):
    """``repr`` of a sparse COO tensor listing ``values`` at ``indices``, as torch prints it."""
    indent = len(_PREFIX)
    parts = []
    for name, array in (("indices", indices), ("values", values)):
        prefix = name + "=tensor("
        text = _body_str(array, indent + len(prefix))
        if array.size == 0:
            text += f", size={tuple(array.shape)}"
        parts.append(prefix + text + ")")
    suffixes = [_plain(f"size={tuple(shape)}"), _plain(f"nnz={indices.shape[1]}")]
    default_complex = _COMPLEX128 if default_float == _FLOAT64 else _COMPLEX64
    if values.dtype not in (default_float, default_complex, _INT64, _BOOL):
        suffixes.append(_dtype_suffix(values.dtype))
    suffixes.append(("layout=leafgrad.sparse_coo", len("layout=torch.sparse_coo")))
    if grad_fn_name is not None:
        suffixes.append(_plain(f"grad_fn=<{grad_fn_name}>"))
    elif requires_grad:
        suffixes.append(_plain("requires_grad=True"))
    return _add_suffixes(_PREFIX + (",\n" + " " * indent).join(parts), suffixes, indent, force_newline=True)


def _values_str(array, device, default_float):
    """A tensor's printed values and the suffixes they need (device, size, dtype)."""
    if array.dtype.kind == "V" and array.dtype.name == "bfloat16":
        # torch formats each bfloat16 value as the Python float it is: float32 holds them all
        values = array.astype(np.float32)
    elif array.dtype.kind in "biufc":
        values = array
    else:
        raise TypeError(f"cannot print arrays of dtype {array.dtype}")
    indent = len(_PREFIX)
    suffixes = []
    if device is not None and str(device) != "cpu":
        suffixes.append(_plain(f"device='{device}'"))
    if array.size == 0:
        # NumPy-style: (0,) is implied by '[]', other empty shapes are not.
        if array.ndim != 1:
            suffixes.append(_plain(f"size={tuple(array.shape)}"))
        # No element hints at the type, so only the default float is implied.
        if array.dtype != default_float:
            suffixes.append(_dtype_suffix(array.dtype))
    else:
        if not _opts["edgeitems"]:
            suffixes.append(_plain(f"size={tuple(array.shape)}"))
        default_complex = _COMPLEX128 if default_float == _FLOAT64 else _COMPLEX64
        if array.dtype not in (default_float, default_complex, _INT64, _BOOL):
            suffixes.append(_dtype_suffix(array.dtype))
    return _body_str(values, indent), suffixes


def tensor_str(array):
    """``str`` of a plain tensor holding ``array``; torch's str equals repr."""
    return tensor_repr(array)
