"""``torch.cuda`` and ``torch.accelerator`` as programs call them on a machine without a GPU:
leafgrad without CuPy answers as torch's CPU build (values, errors, warnings). Where torch's CPU
build fails inside itself (an AttributeError on ``torch._C`` or a KeyError), leafgrad raises
torch's ``AssertionError: Torch not compiled with CUDA enabled`` instead: both fail, the test
says which."""
import pytest

from leafgrad import backend
from oracle import lg, torch
from test_boilerplate import outcome, same

pytestmark = pytest.mark.skipif(backend._cupy is not None, reason='CuPy is installed: these are the answers without it')


@pytest.mark.parametrize('call', [
    lambda t: t.cuda.is_available(),
    lambda t: t.cuda.device_count(),
    lambda t: t.cuda.is_initialized(),
    lambda t: t.cuda.init(),
    lambda t: t.cuda.empty_cache(),
    lambda t: t.cuda.memory_allocated(),
    lambda t: t.cuda.memory_allocated(0),
    lambda t: t.cuda.memory_allocated('cuda'),
    lambda t: t.cuda.max_memory_allocated(),
    lambda t: t.cuda.memory_reserved(),
    lambda t: t.cuda.max_memory_reserved(),
    lambda t: t.cuda.memory_stats(),
    lambda t: t.cuda.memory_cached(),
    lambda t: t.cuda.max_memory_cached(),
    lambda t: t.cuda.synchronize(),
    lambda t: t.cuda.synchronize(0),
    lambda t: t.cuda.current_device(),
    lambda t: t.cuda.get_device_name(),
    lambda t: t.cuda.get_device_name(0),
    lambda t: t.cuda.get_device_properties(0),
    lambda t: t.cuda.get_device_capability(),
    lambda t: t.cuda.get_device_capability(0),
    lambda t: t.cuda.is_bf16_supported(),
    lambda t: t.cuda.is_bf16_supported(including_emulation=False),
    lambda t: t.cuda.is_tf32_supported(),
    lambda t: t.cuda.get_arch_list(),
    lambda t: t.cuda.manual_seed(1),
    lambda t: t.cuda.manual_seed_all(1),
    lambda t: t.cuda.seed(),
    lambda t: t.cuda.seed_all(),
    lambda t: t.cuda.initial_seed(),
    lambda t: t.cuda.get_rng_state(),
    lambda t: t.cuda.get_rng_state_all(),
    lambda t: t.cuda.set_device(-1),
    lambda t: t.cuda.set_device('cpu'),
    lambda t: t.cuda.device(-1).__enter__(),
    lambda t: t.cuda.device(None).__class__.__name__,
    lambda t: t.zeros(2).cuda(),
    lambda t: t.zeros(2).to('cuda'),
    lambda t: t.zeros(2, device='cuda'),
    lambda t: t.tensor([1.0], device='cuda:0'),
    lambda t: t.cuda.Event(enable_timing=True),
    lambda t: t.cuda.Event(),
    lambda t: t.cuda.Stream(),
    lambda t: t.cuda.current_stream(),
    lambda t: t.cuda.default_stream(),
    lambda t: t.cuda.set_stream(None),
    lambda t: t.cuda.stream(None).__class__.__name__,
    lambda t: t.cuda.StreamContext(None).__enter__(),
], ids=lambda c: '')
def test_cuda_calls_on_a_cpu_machine(call):
    same(call)


@pytest.mark.parametrize('call, torch_fails_with', [
    (lambda t: t.cuda.set_device(0), 'AttributeError'),
    (lambda t: t.cuda.set_device('cuda:0'), 'AttributeError'),
    (lambda t: t.cuda.reset_peak_memory_stats(), 'AttributeError'),
    (lambda t: t.cuda.reset_accumulated_memory_stats(), 'AttributeError'),
    (lambda t: t.cuda.memory_summary(), 'KeyError'),
], ids=lambda c: '')
def test_cuda_calls_where_torch_fails_inside_itself(call, torch_fails_with):
    (_, theirs, _), _ = outcome(lambda: call(torch))
    assert theirs == torch_fails_with
    with pytest.raises(AssertionError, match='^Torch not compiled with CUDA enabled$'):
        call(lg)


def test_cuda_device_context_without_cuda():
    with pytest.raises(RuntimeError, match='compiled without CUDA support'):
        lg.cuda.device(0).__enter__()
    with pytest.raises(RuntimeError, match='compiled without CUDA support'):
        torch.cuda.device(0).__enter__()


@pytest.mark.parametrize('call', [
    lambda t: t.accelerator.current_accelerator(),
    lambda t: t.accelerator.current_accelerator(check_available=True),
    lambda t: t.accelerator.is_available(),
    lambda t: t.accelerator.device_count(),
    lambda t: t.accelerator.current_device_index(),
    lambda t: t.accelerator.current_device_idx(),
    lambda t: t.accelerator.set_device_index(0),
    lambda t: t.accelerator.set_device_idx(0),
    lambda t: t.accelerator.synchronize(),
    lambda t: t.accelerator.synchronize(0),
    lambda t: t.accelerator.empty_cache(),
    lambda t: t.accelerator.memory_allocated(),
    lambda t: t.accelerator.max_memory_allocated(),
    lambda t: t.accelerator.memory_reserved(),
    lambda t: t.accelerator.max_memory_reserved(),
    lambda t: t.accelerator.memory_stats(),
    lambda t: t.accelerator.reset_peak_memory_stats(),
    lambda t: t.accelerator.device_index(0).__enter__(),
    lambda t: t.accelerator.device_index(None).__enter__(),
], ids=lambda c: '')
def test_accelerator_on_a_cpu_machine(call):
    same(call)


def test_the_quickstart_device_line():
    # PyTorch's quickstart tutorial, word for word but for the import
    for t in (lg, torch):
        device = t.accelerator.current_accelerator().type if t.accelerator.is_available() else 'cpu'
        assert device == 'cpu'
