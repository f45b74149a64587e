"""The torch oracle, and what may skip.

Without PyTorch the suite still runs its torch-free core (grad modes, backward's order, hooks,
samplers, each op's float64 gradcheck, ...); every test that compares with torch skips, saying
so. ``LEAFGRAD_NO_ORACLE=1`` runs it that way on a machine that has PyTorch: ``import torch``
then fails here and in every program the tests start.

``LEAFGRAD_REQUIRE_ORACLE=1`` (CI) makes a missing oracle an error, and any skip a failure
except those listed in ``ALLOWED_SKIPS``, which are not about anything missing: a dependency, a
tool such as Graphviz's ``dot`` or an op that stops being there fails the run instead of skipping.
"""
import os
import sys

import numpy as np
import pytest

NO_ORACLE = bool(os.environ.get('LEAFGRAD_NO_ORACLE'))
REQUIRE_ALL = bool(os.environ.get('LEAFGRAD_REQUIRE_ORACLE'))

# Skips that CI allows (matched in the reason), none about something missing: answers for other
# hardware (a GPU, CuPy), an opt-in long mode, parametrized cases that do not apply, the corpus of
# third-party programs (fetched by compat/fetch.py, never committed, so CI has none).
ALLOWED_SKIPS = ('CuPy is installed', 'the answers without CuPy', 'checks the CPU-only message',
                 'no CUDA GPU with CuPy here', 'long mode: set LEAFGRAD_FUZZ_EXAMPLES', 'no rsample',
                 'no tensor parameters',
                 'no corpus of real PyTorch programs here')  # third-party programs, never in the repository

if NO_ORACLE:
    if REQUIRE_ALL:
        raise pytest.UsageError('LEAFGRAD_NO_ORACLE and LEAFGRAD_REQUIRE_ORACLE contradict each other')
    # tests/_no_oracle/torch is a package whose import raises ModuleNotFoundError; first on the
    # path of this process and, through PYTHONPATH, of the programs the tests run
    _blocker = os.path.join(os.path.dirname(os.path.abspath(__file__)), '_no_oracle')
    sys.path.insert(0, _blocker)
    os.environ['PYTHONPATH'] = os.pathsep.join(filter(None, [_blocker, os.environ.get('PYTHONPATH')]))

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # users may run without the oracle; CI may not
    if REQUIRE_ALL:
        raise
    torch = None


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    import leafgrad
    leafgrad.manual_seed(0)  # (unseeded, leafgrad's stream starts from the OS's randomness, as torch's)
    if torch is not None:
        torch.manual_seed(0)
    yield


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_if_skipped_in_ci(report):
    if not REQUIRE_ALL or not report.skipped or hasattr(report, 'wasxfail'):
        return
    reason = _skip_reason(report)
    if any(allowed in reason for allowed in ALLOWED_SKIPS):
        return
    report.outcome = 'failed'
    report.longrepr = f'LEAFGRAD_REQUIRE_ORACLE is set (CI), where nothing may skip: {reason}'


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_if_skipped_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_if_skipped_in_ci(outcome.get_result())


def pytest_collection_finish(session):
    # Importing leafgrad.fx switches on __torch_function__ dispatch in every public function for the
    # rest of the process (leafgrad/overrides.py); the suite runs without it, and fx's tests run it
    # in a process of their own (tests/fx_cases.py). A test module that imports fx at collection
    # would silently run everything after it in the other configuration.
    overrides = sys.modules.get('leafgrad.overrides')
    if overrides is not None and overrides._enabled:
        raise pytest.UsageError('a test module switched on leafgrad.overrides (imported leafgrad.fx) while being '
                                'collected: run such code in a subprocess, as tests/test_fx.py does')
