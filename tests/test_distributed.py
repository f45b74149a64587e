"""leafgrad.distributed, nn.parallel and SyncBatchNorm against PyTorch.

The multi-process checks run under ``mpiexec`` (tests/mpi/checks.py with 2 and 3 ranks, and
tests/mpi/faults.py for ranks that fail); they are skipped when mpi4py or mpiexec is missing,
except where LEAFGRAD_REQUIRE_MPI is set (CI), where that is a failure. Calls with one rank
are compared with torch's gloo backend in this process (tests/mpi/cases.py).
"""
import functools
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest

torch = pytest.importorskip('torch')
import torch.distributed as tdist  # noqa: E402

import leafgrad as lg  # noqa: E402
import leafgrad.distributed as ldist  # noqa: E402
from fresh import fresh_python_output  # noqa: E402
from oracle import raises_like, same_message  # noqa: E402

TESTS = pathlib.Path(__file__).parent
sys.path.insert(0, str(TESTS / 'mpi'))
import cases  # noqa: E402
sys.path.pop(0)


# ---- launching -----------------------------------------------------------------------------------
def _unavailable(reason):
    if os.environ.get('LEAFGRAD_REQUIRE_MPI'):
        pytest.fail(f'LEAFGRAD_REQUIRE_MPI is set, but {reason}')
    pytest.skip(reason)


@functools.lru_cache(maxsize=None)
def _launcher():
    """(mpiexec, its extra arguments to run more ranks than cores), or None."""
    if not ldist.is_available():
        return None
    exe = shutil.which('mpiexec', path=os.path.dirname(sys.executable)) or shutil.which('mpiexec')
    if exe is None:
        return None
    version = subprocess.run([exe, '--version'], capture_output=True, text=True, env=_env()).stdout
    open_mpi = 'Open MPI' in version or 'OpenRTE' in version or 'prterun' in version or 'PRRTE' in version
    return exe, ['--oversubscribe'] if open_mpi else []


def _env():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS.parent)] + sys.path))
    env.pop('TORCH_DISTRIBUTED_DEBUG', None)
    if hasattr(os, 'geteuid') and os.geteuid() == 0:  # Open MPI refuses root unless told
        env.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    return env


def mpiexec(n, script, *args, timeout=300):
    """Run ``script`` (in tests/mpi, or a path) on ``n`` ranks."""
    launcher = _launcher()
    if launcher is None:
        _unavailable('mpi4py or mpiexec is not installed (pip install leafgrad[distributed])')
    exe, extra = launcher
    cmd = [exe, '-n', str(n), *extra, sys.executable, str(TESTS / 'mpi' / script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env())


# ---- without MPI -----------------------------------------------------------------------------------
def test_importing_loads_no_mpi():
    out = fresh_python_output(
        'import sys, leafgrad, leafgrad.nn\n'
        'before = "leafgrad.distributed" in sys.modules\n'
        'import leafgrad.distributed, leafgrad.nn.parallel, leafgrad.utils.data\n'
        'print(before, "mpi4py" in sys.modules, "mpi4py.MPI" in sys.modules)')
    assert out == 'False False False'


def test_without_mpi4py_is_available_is_false_and_init_says_what_to_install():
    out = fresh_python_output(
        'import sys\n'
        'sys.modules["mpi4py"] = None\n'
        'import leafgrad.distributed as dist\n'
        'print(dist.is_available(), dist.is_mpi_available())\n'
        'try:\n'
        '    dist.init_process_group()\n'
        'except RuntimeError as e:\n'
        '    print(type(e).__name__, e)\n')
    assert out.startswith('False False\nRuntimeError Distributed package doesn\'t have MPI built in')
    assert "pip install 'leafgrad[distributed]'" in out


@pytest.mark.parametrize('call', ['get_rank', 'get_world_size', 'get_backend', 'barrier', 'all_reduce',
                                  'new_group', 'destroy_process_group'])
def test_before_init_raises_as_torch(call):
    args = {'all_reduce': lambda L: (L.ones(2),), 'new_group': lambda L: ([0],)}.get(call, lambda L: ())
    assert not tdist.is_initialized() and not ldist.is_initialized()
    lg_msg, torch_msg = raises_like(lambda: getattr(ldist, call)(*args(lg)), lambda: getattr(tdist, call)(*args(torch)))
    assert same_message(lg_msg, torch_msg), (lg_msg, torch_msg)


def test_init_refusals_as_torch(tmp_path):
    url = f'file://{tmp_path}/store'
    with warnings.catch_warnings(record=True) as lw:
        warnings.simplefilter('always')
        lg_msg, torch_msg = raises_like(lambda: ldist.init_process_group('nccl'),
                                        lambda: tdist.init_process_group('nccl', init_method=url, rank=0,
                                                                         world_size=1))
    assert lg_msg == torch_msg == "Distributed package doesn't have NCCL built in"
    messages = [str(w.message) for w in lw]
    assert messages.count('Attempted to get default timeout for nccl backend, but NCCL support is not compiled') == 2
    lg_msg, torch_msg = raises_like(lambda: ldist.init_process_group('gloo', timeout=5),
                                    lambda: tdist.init_process_group('gloo', timeout=5))
    assert lg_msg == torch_msg
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        lg_msg, torch_msg = raises_like(lambda: ldist.init_process_group('bogus'),
                                        lambda: tdist.init_process_group('bogus', init_method=url, rank=0,
                                                                         world_size=1))
    assert lg_msg == torch_msg == 'Unknown backend type bogus'
    assert not ldist.is_initialized() and not tdist.is_initialized()


# ---- DataParallel, SyncBatchNorm without a process group ------------------------------------------------
def test_data_parallel_is_the_module_as_in_torch_without_gpus():
    lg.manual_seed(0)
    inner = lg.nn.Linear(3, 2)
    dp = lg.nn.DataParallel(inner)
    tp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert lg.nn.DataParallel is lg.nn.parallel.DataParallel
    assert repr(dp) == repr(tp) and list(dp.state_dict()) == list(tp.state_dict()) == ['module.weight', 'module.bias']
    assert dp.module is inner and dp.device_ids == tp.device_ids == []
    x = lg.randn(4, 3)
    np.testing.assert_array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert lg.nn.parallel.data_parallel(inner, x).tolist() == inner(x).tolist()


def _bn_pair():
    lg.manual_seed(0)
    ln = lg.nn.Sequential(lg.nn.Conv2d(2, 3, 1), lg.nn.BatchNorm2d(3),
                          lg.nn.Sequential(lg.nn.BatchNorm1d(4, affine=False)), lg.nn.InstanceNorm2d(3),
                          lg.nn.BatchNorm2d(3, bias=False))
    tn = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3),
                             torch.nn.Sequential(torch.nn.BatchNorm1d(4, affine=False)), torch.nn.InstanceNorm2d(3),
                             torch.nn.BatchNorm2d(3, bias=False))
    return ln, tn


def test_convert_sync_batchnorm_as_torch():
    ln, tn = _bn_pair()
    old_weight = ln[1].weight
    ls, ts = lg.nn.SyncBatchNorm.convert_sync_batchnorm(ln), torch.nn.SyncBatchNorm.convert_sync_batchnorm(tn)
    assert repr(ls) == repr(ts)
    assert [type(m).__name__ for m in ls.modules()] == [type(m).__name__ for m in ts.modules()]
    assert ls[1].weight is old_weight and ls[4].bias is None
    assert list(ls.state_dict()) == list(ts.state_dict())


def test_sync_batchnorm_without_a_process_group_is_batchnorm():
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    lm, tm = lg.nn.SyncBatchNorm(3).double(), torch.nn.SyncBatchNorm(3).double()
    for train in (True, False):
        lm.train(train)
        tm.train(train)
        lx, tx = lg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ly, ty = lm(lx), tm(tx)
        np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
        (ly ** 3).sum().backward()
        (ty ** 3).sum().backward()
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    for k, v in lm.state_dict().items():
        np.testing.assert_allclose(v.numpy(), tm.state_dict()[k].numpy(), rtol=1e-12)
    for shape in ((3,), (2, 0)):
        lg_msg, torch_msg = raises_like(lambda: lm(lg.ones(*shape)), lambda: tm(torch.ones(*shape)))
        assert lg_msg == torch_msg


# ---- one rank: the same calls on leafgrad (MPI) and torch (gloo) ---------------------------------------------
@pytest.fixture(scope='module')
def torch_single_rank_outcomes():
    hook = sys.excepthook  # torch's init replaces it and destroy leaves it
    with tempfile.TemporaryDirectory() as d:
        tdist.init_process_group('gloo', init_method=f'file://{d}/store', rank=0, world_size=1)
        try:
            yield {name: cases.outcome(fn, torch) for name, fn in cases.CASES.items()}
        finally:
            tdist.destroy_process_group()
            sys.excepthook = hook


@pytest.fixture(scope='module')
def leafgrad_single_rank_outcomes():
    if not ldist.is_available():
        _unavailable('mpi4py is not installed (pip install leafgrad[distributed])')
    done = subprocess.run([sys.executable, str(TESTS / 'mpi' / 'cases.py')], capture_output=True, text=True,
                          timeout=300, env=_env())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


_UNUSED_HINT = ('\n In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL '
                'to print out information about which particular parameters did not receive gradient on this rank as '
                'part of this error')


@pytest.mark.parametrize('name', list(cases.CASES))
def test_single_rank_as_torch(name, torch_single_rank_outcomes, leafgrad_single_rank_outcomes):
    theirs = torch_single_rank_outcomes[name]
    ours = leafgrad_single_rank_outcomes[name]
    assert ours[0] == theirs[0], (ours, theirs)
    if name in cases.TYPE_ONLY:
        return
    normalised = json.dumps(ours).replace('leafgrad.tensor.Tensor', 'torch.Tensor').replace('leafgrad', 'torch') \
        .replace('ProcessGroupMPI', 'ProcessGroupGloo')
    if name == 'DDP unused parameters':
        # leafgrad always names the parameters, as torch does under TORCH_DISTRIBUTED_DEBUG=DETAIL
        assert 'Parameters which did not receive grad for rank 0: b.bias, b.weight\\n' in normalised
        normalised = normalised.replace('Parameters which did not receive grad for rank 0: b.bias, b.weight\\n', '')
        theirs = [theirs[0], theirs[1].replace(_UNUSED_HINT, '')]
    assert json.loads(normalised) == theirs


# ---- several ranks -------------------------------------------------------------------------------------
def _check_names():
    source = (TESTS / 'mpi' / 'checks.py').read_text()
    return [line.split('def ')[1].split('(')[0] for i, line in enumerate(source.splitlines())
            if line.startswith('def ') and source.splitlines()[i - 1] == '@check']


@pytest.mark.parametrize('ranks', [2, 3])
def test_collectives_ddp_syncbn_and_sampler_on_several_ranks(ranks):
    done = mpiexec(ranks, 'checks.py')
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    passed = {line for line in done.stdout.splitlines() if line.startswith('OK ')}
    expected = {f'OK {name} {rank}' for name in _check_names() for rank in range(ranks)}
    assert passed == expected, sorted(expected - passed)


@pytest.mark.parametrize('case, says', [
    ('die', 'exited'),
    ('raise', '[rank1]: ValueError: rank 1 failed on purpose'),
    ('hang', 'Watchdog caught collective operation timeout: WorkMPI(SeqNum=2, OpType=ALLREDUCE, NumelIn=3, '
             'Timeout(ms)=4000)'),
])
def test_a_failing_rank_ends_the_job_within_the_timeout(case, says):
    start = time.monotonic()
    done = mpiexec(2, 'faults.py', case, timeout=120)
    took = time.monotonic() - start
    output = done.stdout + done.stderr
    assert done.returncode != 0 and 'which it should not have' not in output
    assert says in output, output[-4000:]
    assert took < 60, took  # the group's timeout is 4 s; rank 1 sleeps 60 s in 'hang'


@pytest.mark.slow
def test_ddp_digits_example_on_two_ranks():
    pytest.importorskip('sklearn')
    done = mpiexec(2, TESTS.parent / 'examples' / 'ddp_digits.py', '--epochs', '3', '--min-accuracy', '0.9')
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert '2 rank(s), 45 steps of 16 examples per rank and epoch' in done.stdout
    assert 'replicas identical on all ranks: True' in done.stdout
    accuracy = float(done.stdout.split('test accuracy: ')[1].split('%')[0])
    assert accuracy >= 90.0


def test_nccl_and_a_gpu_device_id_are_served_by_mpi_where_there_is_a_gpu():
    """With a GPU ('cuda' on the CuPy stand-in here), a GPU program's init_process_group('nccl',
    device_id=cuda:0) runs on MPI, its tensors staged through the host; without one, PyTorch's
    refusal (test_init_refusals_as_torch)."""
    if not ldist.is_available():
        _unavailable('mpi4py is not installed (pip install leafgrad[distributed])')
    program = ("import sys; sys.path.insert(0, 'tests'); import cuda_standin, leafgrad as lg\n"
               "import leafgrad.distributed as dist\n"
               "with cuda_standin.installed():\n"
               "    dist.init_process_group('nccl', device_id=lg.device('cuda', 0))\n"
               "    t = lg.ones(3, device='cuda') * 2\n"
               "    dist.all_reduce(t)\n"
               "    print(dist.get_backend(), t.device, t.cpu().tolist())\n"
               "    dist.destroy_process_group()\n")
    done = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True, timeout=300, env=_env(),
                          cwd=str(TESTS.parent))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['mpi', 'cuda:0', '[2.0,', '2.0,', '2.0]']
