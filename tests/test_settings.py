"""Process-wide settings PyTorch programs make in their first lines (threads, default device,
float32 matmul precision, determinism, denormals), each compared with torch. Every test puts
both libraries' settings back as they were."""
import json

import numpy as np
import pytest

from fresh import fresh_python_output
from oracle import lg, torch
from test_boilerplate import same


# ---- threads -----------------------------------------------------------------------------------

def _numpy_blas_threads():
    from threadpoolctl import threadpool_info
    return [p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas' and 'numpy' in p['filepath']]


def test_set_num_threads_sizes_numpys_blas_pool():
    before = lg.get_num_threads()
    assert _numpy_blas_threads() == [before]
    try:
        lg.set_num_threads(1)
        assert lg.get_num_threads() == 1 and _numpy_blas_threads() == [1]
        lg.set_num_threads(2)
        assert lg.get_num_threads() == 2 and _numpy_blas_threads() == [2]
    finally:
        lg.set_num_threads(before)


@pytest.mark.parametrize('value', [0, -1, 1.5, '2', True, None])
@pytest.mark.parametrize('name', ['set_num_threads', 'set_num_interop_threads'])
def test_thread_count_errors(name, value):
    same(lambda t: getattr(t, name)(value))


def test_set_num_threads_takes_no_keyword():
    with pytest.raises(TypeError):
        lg.set_num_threads(int=2)
    with pytest.raises(TypeError):
        torch.set_num_threads(int=2)


def test_interop_threads_set_once_as_in_torch():
    # Both libraries allow it once per process: run it in a fresh one.
    program = '''
import json, warnings, {lib} as t
out = [t.get_num_interop_threads() > 0]
t.set_num_interop_threads(3)
out.append(t.get_num_interop_threads())
try:
    t.set_num_interop_threads(2)
except RuntimeError as e:
    out.append(str(e))
out.append(t.get_num_interop_threads())
print(json.dumps(out))
'''
    ours = json.loads(fresh_python_output(program.format(lib='leafgrad')))
    theirs = json.loads(fresh_python_output(program.format(lib='torch')))
    assert ours == theirs == [True, 3, 'Error: cannot set number of interop threads after parallel work has started '
                                       'or set_num_interop_threads called', 3]


# ---- the default device ------------------------------------------------------------------------

@pytest.fixture
def default_device_restored():
    yield
    lg.set_default_device(None)
    torch.set_default_device(None)


FACTORIES = [
    lambda t: t.zeros(2).device, lambda t: t.ones(2, 3).device, lambda t: t.empty(1).device,
    lambda t: t.full((2,), 1.0).device, lambda t: t.tensor([1.0]).device, lambda t: t.arange(3).device,
    lambda t: t.linspace(0, 1, 3).device, lambda t: t.eye(2).device, lambda t: t.rand(2).device,
    lambda t: t.randn(2).device, lambda t: t.randint(0, 3, (2,)).device, lambda t: t.randperm(3).device,
    lambda t: t.as_tensor(np.ones(2)).device, lambda t: t.get_default_device(),
]


@pytest.mark.parametrize('device', ['cpu', 'cpu:0', 'cuda', 'cuda:0'])
@pytest.mark.parametrize('factory', FACTORIES, ids=lambda f: '')
def test_factories_follow_the_default_device(default_device_restored, device, factory):
    # 'cuda' is accepted by both; the first factory then fails with PyTorch's error (no GPU here)
    same(lambda t: t.set_default_device(device))
    same(factory)


@pytest.mark.parametrize('device', [None, 'foo', 0, 'cuda:x'])
def test_set_default_device_arguments(default_device_restored, device):
    ours, theirs = [], []
    for lib, out in ((lg, ours), (torch, theirs)):
        try:
            lib.set_default_device(device)
            out.append(repr(lib.get_default_device()))
        except Exception as e:  # noqa: BLE001
            out.append(type(e).__name__)
    assert ours == theirs
    if device == 0:
        same(lambda t: t.set_default_device(0))


def test_default_device_set_back_to_cpu(default_device_restored):
    for device in ('cuda', None):
        same(lambda t: t.set_default_device(device))
    same(lambda t: t.zeros(1).device)
    same(lambda t: t.get_default_device())


def _device_blocks(t):
    """A device used as a context manager, nested and around set_default_device, as programs do."""
    seen = []
    with t.device('cpu') as d:
        seen += [isinstance(d, t.device), str(t.zeros(2).device), str(t.get_default_device())]
        with t.device('cuda:0'):
            seen.append(str(t.get_default_device()))
        seen.append(str(t.get_default_device()))
    t.set_default_device('cuda:0')
    with t.device('cpu'):
        seen.append(str(t.ones(1).device))
    seen.append(str(t.get_default_device()))
    t.set_default_device(None)
    seen.append(str(t.get_default_device()))
    return seen


def test_device_as_a_context_manager(default_device_restored):
    same(_device_blocks)
    same(_inside_a_cuda_block)


def _inside_a_cuda_block(t):
    """No GPU: the block is entered, the first factory in it fails with PyTorch's error."""
    with t.device('cuda'):
        try:
            t.nn.Linear(2, 2)
        except AssertionError as e:
            return str(e)


# ---- float32 matrix-product precision -----------------------------------------------------------

@pytest.fixture
def precision_restored():
    yield
    lg.set_float32_matmul_precision('highest')
    torch.set_float32_matmul_precision('highest')


@pytest.mark.parametrize('value', ['highest', 'high', 'medium', 'HIGH', 'foo', 3, None])
def test_float32_matmul_precision(precision_restored, value):
    same(lambda t: t.get_float32_matmul_precision())
    same(lambda t: t.set_float32_matmul_precision('high'))
    same(lambda t: t.set_float32_matmul_precision(value))
    same(lambda t: t.get_float32_matmul_precision())


# ---- determinism ------------------------------------------------------------------------------

@pytest.fixture
def deterministic_restored():
    yield
    lg.use_deterministic_algorithms(False)
    torch.use_deterministic_algorithms(False)
    lg.utils.deterministic.fill_uninitialized_memory = True
    torch.utils.deterministic.fill_uninitialized_memory = True


def _determinism(t):
    return (t.are_deterministic_algorithms_enabled(), t.is_deterministic_algorithms_warn_only_enabled(),
            t.get_deterministic_debug_mode())


@pytest.mark.parametrize('call', [
    lambda t: t.use_deterministic_algorithms(True),
    lambda t: t.use_deterministic_algorithms(True, warn_only=True),
    lambda t: t.use_deterministic_algorithms(mode=False),
    lambda t: t.use_deterministic_algorithms(1),
    lambda t: t.use_deterministic_algorithms('x'),
    lambda t: t.use_deterministic_algorithms(True, warn_only=1),
    lambda t: t.use_deterministic_algorithms(True, True),
    lambda t: t.use_deterministic_algorithms(),
] + [(lambda v: lambda t: t.set_deterministic_debug_mode(v))(v)
     for v in ['default', 'warn', 'error', 'foo', 0, 1, 2, 3, -1, 1.5, None, True]], ids=lambda c: '')
def test_deterministic_mode_switches(deterministic_restored, call):
    same(lambda t: (call(t), _determinism(t)))
    same(_determinism)


EMPTY = [
    lambda t: t.empty(3), lambda t: t.empty(2, dtype=t.float64), lambda t: t.empty(2, dtype=t.float16),
    lambda t: t.empty(2, dtype=t.int8), lambda t: t.empty(2, dtype=t.uint8), lambda t: t.empty(2, dtype=t.int64),
    lambda t: t.empty(2, dtype=t.bool), lambda t: t.empty_like(t.zeros(2, dtype=t.int32)),
    lambda t: t.zeros(2).new_empty(2),
]


@pytest.mark.parametrize('factory', EMPTY, ids=lambda f: '')
def test_deterministic_mode_fills_empty(deterministic_restored, factory):
    lg.use_deterministic_algorithms(True)
    torch.use_deterministic_algorithms(True)
    same(factory)
    lg.utils.deterministic.fill_uninitialized_memory = False
    torch.utils.deterministic.fill_uninitialized_memory = False
    assert lg.utils.deterministic.fill_uninitialized_memory is False
    same(lambda t: factory(t).dtype)  # uninitialised again: only the dtype compares


def test_fill_uninitialized_memory_takes_a_bool(deterministic_restored):
    same(lambda t: setattr(t.utils.deterministic, 'fill_uninitialized_memory', 1))
    same(lambda t: t.utils.deterministic.fill_uninitialized_memory)


@pytest.mark.parametrize('warn_only', [False, True])
@pytest.mark.parametrize('unpool', [
    lambda t: t.nn.functional.max_unpool1d(t.ones(1, 1, 2), t.tensor([[[0, 1]]]), 2),
    lambda t: t.nn.functional.max_unpool2d(t.ones(1, 1, 1, 1), t.tensor([[[[0]]]]), 2),
], ids=['1d', '2d'])
def test_max_unpool_has_no_deterministic_implementation(deterministic_restored, warn_only, unpool):
    same(unpool)
    lg.use_deterministic_algorithms(True, warn_only=warn_only)
    torch.use_deterministic_algorithms(True, warn_only=warn_only)
    same(unpool)


# ---- denormals -------------------------------------------------------------------------------

def test_set_flush_denormal_says_it_cannot():
    # torch returns True here (x86 with SSE3) and flushes; NumPy cannot, so leafgrad answers False
    assert lg.set_flush_denormal(True) is False and lg.set_flush_denormal(False) is False
    for value in (1, None):
        same(lambda t: t.set_flush_denormal(value))
    with pytest.raises(TypeError):
        lg.set_flush_denormal(mode=False)
