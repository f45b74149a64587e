"""The names PyTorch programs touch in their first lines (constants, dtype limits, device flags,
``torch.version``), each compared with torch: values, reprs, errors and warnings."""
import math
import re
import types
import warnings

import pytest

from oracle import lg, torch


def outcome(fn):
    """What calling ``fn`` did, in words that compare across the two libraries: its result's repr
    (or the exception's type and message) and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            result = ('returned', repr(fn()))
        except Exception as e:  # noqa: BLE001  the exception is what is compared
            result = ('raised', type(e).__name__, str(e))
    said = [(w.category.__name__, re.sub(r' \(Triggered internally at .*\)$', '', str(w.message)))
            for w in caught]
    return _normalise((result, said))


def _normalise(value):
    if isinstance(value, str):
        return value.replace('leafgrad', 'torch')
    if isinstance(value, (tuple, list)):
        return type(value)(_normalise(v) for v in value)
    return value


def same(lg_fn, torch_fn=None):
    """``lg_fn(leafgrad)`` and ``lg_fn(torch)`` (or ``torch_fn(torch)``) do the same."""
    ours, theirs = outcome(lambda: lg_fn(lg)), outcome(lambda: (torch_fn or lg_fn)(torch))
    assert ours == theirs


# ---- constants -------------------------------------------------------------------------------

@pytest.mark.parametrize('name', ['inf', 'nan', 'pi', 'e', 'newaxis'])
def test_constants(name):
    ours, theirs = getattr(lg, name), getattr(torch, name)
    assert type(ours) is type(theirs)
    assert ours is theirs or ours == theirs or (math.isnan(ours) and math.isnan(theirs))


# ---- finfo and iinfo ---------------------------------------------------------------------------

FLOATS = ['float16', 'float32', 'float64']
INTS = ['uint8', 'int8', 'int16', 'int32', 'int64']


@pytest.mark.parametrize('name', FLOATS)
def test_finfo_values_and_repr(name):
    ours, theirs = lg.finfo(getattr(lg, name)), torch.finfo(getattr(torch, name))
    for attr in ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution', 'dtype'):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)


@pytest.mark.parametrize('name', INTS)
def test_iinfo_values_and_repr(name):
    ours, theirs = lg.iinfo(getattr(lg, name)), torch.iinfo(getattr(torch, name))
    for attr in ('bits', 'min', 'max', 'dtype'):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)


@pytest.mark.parametrize('call', [
    lambda t: t.finfo(),
    lambda t: t.finfo(float),
    lambda t: t.finfo(type=t.float64),
    lambda t: t.finfo(t.int32),
    lambda t: t.finfo(t.bool),
    lambda t: t.finfo(bool),
    lambda t: t.finfo('float32'),
    lambda t: t.finfo(None),
    lambda t: t.finfo(t.float32, t.float64),
    lambda t: t.finfo(t.float32) == t.finfo(t.float32),
    lambda t: t.finfo(t.float32) == t.finfo(t.float64),
    lambda t: t.finfo(t.float32) is t.finfo(t.float32),
    lambda t: hash(t.finfo(t.float32)),
    lambda t: t.finfo(t.float32).__setattr__('eps', 1.0),
    lambda t: t.iinfo(),
    lambda t: t.iinfo(int),
    lambda t: t.iinfo(t.bool),
    lambda t: t.iinfo(t.float32),
    lambda t: t.iinfo(float),
    lambda t: t.iinfo(None),
    lambda t: t.iinfo(t.int8) == t.iinfo(t.int8),
    lambda t: t.iinfo(t.int8) == t.finfo(t.float32),
    lambda t: t.iinfo(t.int8).__setattr__('max', 1),
], ids=lambda c: '')
def test_finfo_iinfo_calls_and_errors(call):
    same(call)


def test_finfo_follows_the_default_dtype():
    try:
        lg.set_default_dtype(lg.float64)
        torch.set_default_dtype(torch.float64)
        assert repr(lg.finfo()) == repr(torch.finfo())
    finally:
        lg.set_default_dtype(lg.float32)
        torch.set_default_dtype(torch.float32)


# ---- what a tensor says about where it lives ---------------------------------------------------

FLAGS = ['is_cpu', 'is_cuda', 'is_xpu', 'is_mps', 'is_meta', 'is_sparse', 'is_sparse_csr', 'is_quantized',
         'is_mkldnn', 'is_nested', 'is_ipu', 'is_maia', 'is_mtia', 'is_vulkan', 'is_xla']


@pytest.mark.parametrize('flag', FLAGS)
def test_tensor_device_and_layout_flags(flag):
    ours, theirs = getattr(lg.zeros(2), flag), getattr(torch.zeros(2), flag)
    assert ours is theirs
    with pytest.raises(AttributeError):
        setattr(lg.zeros(2), flag, not ours)


# ---- torch.version -----------------------------------------------------------------------------

def test_version_module():
    assert lg.version.__version__ == lg.__version__
    assert type(lg.__version__) is lg.torch_version.TorchVersion


@pytest.mark.parametrize('other', ['2.0', '1.13.1+cu117', '2.13', '2.13.0', '2.13.1', '3.0.0a0', '2.13.0rc1', (2, 1),
                                   (2, 13), (2, 14), '2.14.0.dev20260101'])
def test_version_compares_as_torchs(other):
    """torch.__version__ is the PyTorch version whose API leafgrad follows (its own version the
    local label), and compares with a version as PyTorch's TorchVersion does."""
    ours, theirs = lg.__version__, torch.__version__
    assert ours.split('+')[0] == theirs.split('+')[0]
    for compare in (lambda v: v < other, lambda v: v <= other, lambda v: v > other, lambda v: v >= other,
                    lambda v: v == other, lambda v: v != other):
        assert compare(ours) == compare(theirs)
    assert lg.version.cuda is None and torch.version.cuda is None  # neither has a CUDA runtime here
    assert lg.version.hip is torch.version.hip is None
    assert lg.version.debug is torch.version.debug is False


# ---- nothing of this is loaded by `import leafgrad` ----------------------------------------------

def test_import_leafgrad_loads_none_of_it():
    from fresh import fresh_python_output
    lazy = ['leafgrad._type_info', 'leafgrad._settings', 'leafgrad.version', 'leafgrad.backends', 'leafgrad.accelerator',
            'leafgrad.cuda', 'leafgrad.jit', 'leafgrad.onnx', 'leafgrad._tensor_types', 'leafgrad.autograd.variable', 'threadpoolctl',
            'leafgrad.serialization', 'hashlib', 'json', 'fractions', 'decimal']
    code = f'import sys, leafgrad; print([m for m in {lazy!r} if m in sys.modules])'
    assert fresh_python_output(code) == '[]'


# ---- torch.functional ------------------------------------------------------------------------

def test_functional_module_holds_leafgrads_functions():
    import importlib
    import torch.functional as tf
    ours = importlib.import_module('leafgrad.functional')
    assert lg.functional is ours
    present = [n for n in tf.__all__ if hasattr(lg, n)]
    assert ours.__all__ == present and {'einsum', 'split', 'norm', 'meshgrid', 'tensordot'} <= set(present)
    for name in tf.__all__:
        assert getattr(ours, name, None) is getattr(lg, name, None), name  # the same function, or absent in both
    x = lg.arange(6.0).reshape(2, 3)
    y = tf.einsum('ij->ji', torch.arange(6.0).reshape(2, 3))
    assert ours.einsum('ij->ji', x).tolist() == y.tolist()


@pytest.mark.parametrize('text', ['tpu', 'foo:1', 'CPU', ''])
def test_unknown_device_strings_refused_as_torch(text):
    """A device string PyTorch does not know: its error, naming every device type it knows."""
    with pytest.raises(RuntimeError) as lg_err:
        lg.device(text)
    with pytest.raises(RuntimeError) as torch_err:
        torch.device(text)
    assert str(lg_err.value) == str(torch_err.value)


@pytest.mark.parametrize('args, kwargs', [
    ((3,), {}), ((-1,), {}), ((True,), {}), ((3.0,), {}), ((None,), {}), (('cuda:0', 1), {}), (('cpu', -1), {}),
    (('cuda', '0'), {}), (('cpu', True), {}), (('cuda', 1.0), {}), (('cuda', None), {}), ((), dict(type='cuda', index=1)),
    (('cuda:-1',), {}), (('cuda:01',), {}), ((b'cpu',), {}), (('cpu', 1), {})])
def test_device_arguments_as_torch(args, kwargs):
    """What torch.device makes of odd arguments: a bare int names the accelerator (none here), a
    negative index, an index of another type or given twice, bytes, None: its values and errors."""
    def outcome(T):
        try:
            return repr(T.device(*args, **kwargs))
        except (RuntimeError, TypeError) as e:
            return type(e).__name__, str(e).replace('torch.device', 'leafgrad.device')
    assert outcome(lg) == outcome(torch)


def test_a_device_given_twice_as_torch():
    with pytest.raises(TypeError) as theirs:
        torch.device(torch.device('cpu'), 1)
    with pytest.raises(TypeError) as mine:
        lg.device(lg.device('cpu'), 1)
    assert str(mine.value) == str(theirs.value).replace('torch.device', 'leafgrad.device')


def test_a_device_leafgrad_lacks_is_named():
    """'mps', 'xpu' ... are PyTorch's devices but not leafgrad's: the error says so."""
    with pytest.raises(RuntimeError, match="leafgrad has no 'mps' device"):
        lg.device('mps')


# ---- torch.onnx ------------------------------------------------------------------------------

def test_onnx_module_is_there_without_an_exporter(tmp_path):
    """A program may import torch.onnx and export only when asked: the import works, nothing is
    being exported, and export itself says that leafgrad cannot export ONNX, writing nothing."""
    import torch.onnx
    ours = lg.onnx
    assert ours.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert ours.OnnxExporterError.__mro__[1:] == torch.onnx.OnnxExporterError.__mro__[1:]  # a RuntimeError
    path = tmp_path / 'model.onnx'
    with pytest.raises(ours.OnnxExporterError, match='leafgrad cannot export models to ONNX'):
        ours.export(lg.nn.Linear(2, 2), (lg.ones(1, 2),), str(path))
    assert not path.exists()
    same(lambda t: t.onnx.export(t.nn.Linear(2, 2), (t.ones(1, 2),), str(path), no_such_option=1))


def test_onnx_imports_under_python_m_leafgrad(tmp_path):
    script = tmp_path / 'uses_onnx.py'
    script.write_text('import torch\nimport torch.onnx\nprint(torch.onnx.is_in_onnx_export())\n'
                      'try:\n    torch.onnx.export(torch.nn.Linear(1, 1), (torch.ones(1, 1),), "m.onnx")\n'
                      'except RuntimeError as e:\n    print(type(e).__name__)\n')
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, '-m', 'leafgrad', str(script)], capture_output=True, text=True,
                          cwd=tmp_path, env=dict(os.environ, PYTHONPATH=root))
    assert (done.returncode, done.stdout) == (0, 'False\nOnnxExporterError\n'), done.stderr


# ---- no leafgrad.<name> that PyTorch lacks -------------------------------------------------------

LEAFGRAD_ONLY = {  # what leafgrad has at the top level that torch has not (modules aside), and why
    'install_as_torch': "leafgrad's own: makes 'import torch' mean leafgrad",
    'get_printoptions': "torch's is torch._tensor_str.get_printoptions",
}


def test_no_top_level_name_that_torch_lacks():
    """A program that runs under leafgrad runs under torch: leafgrad.view, leafgrad.expand,
    leafgrad.pad ... were functions that torch.<name> is not (methods, or nn.functional's)."""
    extra = {n for n in dir(lg) if not n.startswith('_') and not hasattr(torch, n)
             and not isinstance(getattr(lg, n), types.ModuleType)}  # (leafgrad.viz, explain: its own modules)
    assert extra == set(LEAFGRAD_ONLY), extra ^ set(LEAFGRAD_ONLY)
    for name in ('view', 'view_as', 'reshape_as', 'contiguous', 'expand', 'expand_as', 'unfold', 'repeat', 'to'):
        assert hasattr(lg.Tensor, name) and hasattr(torch.Tensor, name)
    assert lg.nn.functional.pad(lg.ones(2, 3), (1, 1)).shape == torch.nn.functional.pad(torch.ones(2, 3), (1, 1)).shape
