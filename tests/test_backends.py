"""``leafgrad.backends``: the kernel-library switches programs set (``torch.backends.cudnn.benchmark
= True`` …), compared with torch: defaults, what assignments accept and refuse, what reads back,
and the two switches that act (attention kernels, matmul precision). Every test puts both
libraries' switches back as they were."""
import importlib

import pytest

from oracle import lg, torch
from test_boilerplate import same


@pytest.fixture(autouse=True)
def _switches_restored():
    saved = {lib: (lib.backends.cudnn.set_flags(), lib.backends.mkldnn.set_flags(),
                   lib.get_float32_matmul_precision(), lib.backends.mha.get_fastpath_enabled(),
                   [getattr(lib.backends.cuda, f'{k}_sdp_enabled')() for k in ('flash', 'mem_efficient', 'math', 'cudnn')],
                   lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
                   lib.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)
             for lib in (lg, torch)}
    yield
    for lib, (cudnn, mkldnn, precision, fastpath, sdp, fp16, bf16) in saved.items():
        lib.backends.cudnn.set_flags(*cudnn)
        lib.backends.mkldnn.set_flags(*mkldnn)
        lib.set_float32_matmul_precision(precision)
        lib.backends.mha.set_fastpath_enabled(fastpath)
        for kind, on in zip(('flash', 'mem_efficient', 'math', 'cudnn'), sdp):
            getattr(lib.backends.cuda, f'enable_{kind}_sdp')(on)
        lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = fp16
        lib.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = bf16


@pytest.mark.parametrize('name', ['cpu', 'cuda', 'cudnn', 'mha', 'mkl', 'mkldnn', 'mps', 'openmp', 'opt_einsum'])
def test_submodules_import_as_modules(name):
    module = importlib.import_module(f'leafgrad.backends.{name}')
    assert getattr(lg.backends, name) is module
    assert module.__name__ == f'leafgrad.backends.{name}'


def test_unknown_submodule():
    same(lambda t: t.backends.nothing_here)


# ---- cuDNN and oneDNN: not used by leafgrad, switches stored --------------------------------------

@pytest.mark.parametrize('call', [
    lambda t: t.backends.cudnn.is_available(),
    lambda t: t.backends.cudnn.version(),
    lambda t: t.backends.cudnn.is_acceptable(t.zeros(2)),
    lambda t: t.backends.cudnn.benchmark_limit,
    lambda t: t.backends.mps.is_available(),
    lambda t: t.backends.mps.is_built(),
    lambda t: t.backends.cudnn.foo,
    lambda t: t.backends.mkldnn.enabled,
    lambda t: t.backends.mkldnn.deterministic,
], ids=lambda c: '')
def test_what_a_cpu_build_says(call):
    same(call)


@pytest.mark.parametrize('module, flag', [('cudnn', 'enabled'), ('cudnn', 'benchmark'), ('cudnn', 'deterministic'),
                                          ('cudnn', 'allow_tf32'), ('mkldnn', 'enabled'), ('mkldnn', 'deterministic')])
@pytest.mark.parametrize('value', [True, False, 1, None, 'yes'])
def test_flags_take_a_bool_and_read_back(module, flag, value):
    same(lambda t: getattr(getattr(t.backends, module), flag))
    same(lambda t: setattr(getattr(t.backends, module), flag, value))
    same(lambda t: getattr(getattr(t.backends, module), flag))


def test_imported_module_sets_the_same_switch():
    import leafgrad.backends.cudnn as cudnn
    from leafgrad.backends import cudnn as cudnn2
    cudnn.benchmark = True
    assert cudnn2 is cudnn and lg.backends.cudnn.benchmark is True


def test_cudnn_flags_context_manager():
    for t in (lg, torch):
        t.backends.cudnn.benchmark = True
    same(lambda t: t.backends.cudnn.set_flags()[:2] + t.backends.cudnn.set_flags()[3:5])

    def inside(t):
        with t.backends.cudnn.flags(enabled=False, benchmark=False, deterministic=True):
            state = (t.backends.cudnn.enabled, t.backends.cudnn.benchmark, t.backends.cudnn.deterministic)
        return state, (t.backends.cudnn.enabled, t.backends.cudnn.benchmark, t.backends.cudnn.deterministic)
    same(inside)
    same(lambda t: t.backends.cudnn.set_flags(_benchmark=1))


def test_mkldnn_flags_context_manager():
    def inside(t):
        with t.backends.mkldnn.flags(enabled=False):
            state = t.backends.mkldnn.enabled
        return state, t.backends.mkldnn.enabled
    with pytest.warns(UserWarning, match='oneDNN'):  # torch's about its oneDNN's TF32 on Intel GPUs
        assert inside(torch) == (False, True)
    assert inside(lg) == (False, True)


def test_mkldnn_is_not_available_in_leafgrad():
    assert lg.backends.mkldnn.is_available() is False  # torch's CPU build has oneDNN; leafgrad uses none


# ---- what describes the NumPy leafgrad runs on ----------------------------------------------------

def test_cpu_capability_as_torch_names_it():
    assert lg.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()


def test_mkl_and_openmp_describe_numpys_blas():
    from threadpoolctl import threadpool_info
    blas = [p for p in threadpool_info() if p['user_api'] == 'blas' and 'numpy' in p['filepath']]
    assert lg.backends.mkl.is_available() is (blas[0]['internal_api'] == 'mkl')
    assert lg.backends.openmp.is_available() is (blas[0].get('threading_layer') == 'openmp')


def test_cuda_is_built_means_cupy():
    from leafgrad import backend
    assert lg.backends.cuda.is_built() is (backend._cupy is not None)
    if backend._cupy is None:
        assert lg.backends.cuda.is_built() is torch.backends.cuda.is_built()


# ---- cuBLAS switches ---------------------------------------------------------------------------

@pytest.mark.parametrize('steps', [
    [lambda t: setattr(t.backends.cuda.matmul, 'allow_tf32', True)],
    [lambda t: setattr(t.backends.cuda.matmul, 'allow_tf32', True),
     lambda t: setattr(t.backends.cuda.matmul, 'allow_tf32', False)],
    [lambda t: t.set_float32_matmul_precision('medium')],
    [lambda t: t.set_float32_matmul_precision('high'), lambda t: t.set_float32_matmul_precision('highest')],
    [lambda t: setattr(t.backends.cuda.matmul, 'allow_tf32', 1)],
], ids=lambda s: '')
def test_allow_tf32_is_the_matmul_precision(steps):
    same(lambda t: (t.backends.cuda.matmul.allow_tf32, t.get_float32_matmul_precision()))
    for step in steps:
        same(step)
        same(lambda t: (t.backends.cuda.matmul.allow_tf32, t.get_float32_matmul_precision()))


@pytest.mark.parametrize('name', ['allow_fp16_reduced_precision_reduction', 'allow_bf16_reduced_precision_reduction'])
@pytest.mark.parametrize('value', [False, True, (False,), [False, False], (True, False), (), (1,), (True, 2),
                                   (True, True, True), 1, None])
def test_reduced_precision_reductions(name, value):
    same(lambda t: setattr(t.backends.cuda.matmul, name, value))
    same(lambda t: (getattr(t.backends.cuda.matmul, name), getattr(t.backends.cuda.matmul, name + '_split_k')))


@pytest.mark.parametrize('call', [
    lambda t: t.backends.cuda.matmul.allow_fp16_accumulation,
    lambda t: t.backends.cuda.matmul.nothing,
    lambda t: setattr(t.backends.cuda.matmul, 'nothing', True),
    lambda t: setattr(t.backends.cuda.matmul, 'allow_fp16_accumulation', 1),
], ids=lambda c: '')
def test_matmul_attributes(call):
    same(call)


# ---- attention kernels ---------------------------------------------------------------------------

def _attention(t):
    q = t.ones(1, 2, 3, 4)
    return t.nn.functional.scaled_dot_product_attention(q, q, q).shape


@pytest.mark.parametrize('off', [[], ['flash'], ['math'], ['flash', 'math'], ['mem_efficient', 'cudnn'],
                                 ['flash', 'mem_efficient', 'math', 'cudnn']])
def test_attention_kernel_switches(off):
    for kind in off:
        same(lambda t: getattr(t.backends.cuda, f'enable_{kind}_sdp')(False))
    same(lambda t: [getattr(t.backends.cuda, f'{k}_sdp_enabled')() for k in ('flash', 'mem_efficient', 'math', 'cudnn')])
    same(_attention)


@pytest.mark.parametrize('kind', ['flash', 'mem_efficient', 'math'])
def test_attention_switch_takes_a_bool(kind):
    # torch's message names set_sdp_use_math for all three; leafgrad's names the switch's own setter
    ours, theirs = [], []
    for t, out in ((lg, ours), (torch, theirs)):
        with pytest.raises(RuntimeError) as info:
            getattr(t.backends.cuda, f'enable_{kind}_sdp')(1)
        out.append(str(info.value).split(' expects')[1])
    assert ours == theirs
    assert lg.backends.cuda.flash_sdp_enabled() is True


def test_sdp_kernel_is_deprecated_and_restores():
    def inside(t):
        with t.backends.cuda.sdp_kernel(enable_flash=False, enable_math=False):
            state = [t.backends.cuda.flash_sdp_enabled(), t.backends.cuda.math_sdp_enabled(),
                     t.backends.cuda.mem_efficient_sdp_enabled()]
            try:
                _attention(t)
            except RuntimeError as e:
                state.append(str(e))
        return state, t.backends.cuda.flash_sdp_enabled(), t.backends.cuda.math_sdp_enabled()
    same(inside)
    same(lambda t: type(t.backends.cuda.sdp_kernel()).__name__)  # warns when called, before the block


# ---- opt_einsum and the MultiheadAttention fast path ------------------------------------------------

@pytest.mark.parametrize('call', [
    lambda t: t.backends.opt_einsum.enabled,
    lambda t: t.backends.opt_einsum.strategy,
    lambda t: t.backends.opt_einsum.get_opt_einsum(),
    lambda t: t.backends.opt_einsum.set_flags(),
    lambda t: t.backends.opt_einsum.set_flags(_enabled=False),
], ids=lambda c: '')
def test_opt_einsum_as_torch_without_it(call):
    assert torch.backends.opt_einsum.is_available() is False, 'the oracle has opt_einsum: compare by hand'
    same(call)
    assert lg.backends.opt_einsum.is_available() is False


def test_opt_einsum_refuses_to_be_enabled():
    ours, theirs = [], []
    for t, out in ((lg, ours), (torch, theirs)):
        for call in (lambda: t.backends.opt_einsum.set_flags(_enabled=True),
                     lambda: t.backends.opt_einsum.set_flags(_strategy='auto')):
            with pytest.raises(ValueError) as info:
                call()
            out.append(str(info.value).replace('leafgrad', 'torch').split('. ')[:2])
    assert ours == theirs


@pytest.mark.parametrize('value', [False, True])
def test_mha_fastpath_switch(value):
    same(lambda t: (t.backends.mha.set_fastpath_enabled(value), t.backends.mha.get_fastpath_enabled()))
